// SPDX-License-Identifier: Apache-2.0
// Random agreement of mma_scaled / mma / matmul with the independent oracle (oracle.h) on small
// sizes: every row of the type tables, random finite codes over the whole range of each type
// (scales from 2^-127 to 2^127), random accumulators, batches with broadcast, and the exact
// numerics in all four IEEE roundings. The sequential numerics are checked against the oracle
// too, one exactly rounded a*b + d per step, which is what fmaf must give.
#include <gtest/gtest.h>

#include <bit>
#include <cfenv>
#include <random>

#include "blockscale/reference.h"
#include "oracle.h"

namespace blockscale::reference {
namespace {

std::uint64_t random_finite_code(std::mt19937_64& rng, DType t) {
  if (t == DType::float64) {
    for (;;) {
      const std::uint64_t c = rng();
      if (std::isfinite(std::bit_cast<double>(c))) return c;
    }
  }
  if (t == DType::int8 || t == DType::uint8) return rng() & 0xFF;
  if (t == DType::int32) return rng() & 0xFFFFFFFF;
  const Format f = format_of(t);
  for (;;) {
    std::uint64_t c = rng() & code_mask(f);
    if (f == Format::float8_e8m0fnu && rng() % 2) c = 127 - 12 + rng() % 25;  // half of them near 1
    const ValueClass k = classify(f, static_cast<std::uint32_t>(c));
    if (k != ValueClass::nan && k != ValueClass::infinite) return c;
  }
}

Tensor random_tensor(std::mt19937_64& rng, DType t, Shape s) {
  std::int64_t n = 1;
  for (const auto e : s) n *= e;
  std::vector<std::uint64_t> c(static_cast<std::size_t>(n));
  for (auto& v : c) v = random_finite_code(rng, t);
  if (rng() % 4 == 0)  // some zeros, which make cancellations and signed zeros likely
    for (auto& v : c)
      if (rng() % 3 == 0) v = 0;
  return Tensor(t, std::move(s), std::move(c));
}

Shape with_batch(std::int64_t batch, Shape s) {
  if (batch >= 0) s.insert(s.begin(), batch);
  return s;
}

// Element (b, r, c) of a rank-2/3 tensor with batch broadcast.
double at(const Tensor& t, std::int64_t b, std::int64_t r, std::int64_t c) {
  const std::int64_t rows = t.extent(-2), cols = t.extent(-1);
  const std::int64_t bb = (t.rank() == 3 && t.extent(0) > 1) ? b : 0;
  return t.value((bb * rows + r) * cols + c);
}

void add_term(std::vector<oracle::Term>& terms, std::initializer_list<double> factors) {
  oracle::Term p{false, 1, 0};
  for (const double f : factors) {
    const oracle::Term t = oracle::term_of(f);
    p.neg = p.neg != t.neg;
    p.sig *= t.sig;  // every factor here has at most 4 significant bits
    p.exp += t.exp;
  }
  terms.push_back(p);
}

struct FenvMode {
  Rounding rounding;
  int fe;
};
const FenvMode kModes[] = {{Rounding::nearest_even, FE_TONEAREST},
                           {Rounding::toward_zero, FE_TOWARDZERO},
                           {Rounding::upward, FE_UPWARD},
                           {Rounding::downward, FE_DOWNWARD}};

std::uint32_t oracle_f32(const std::vector<oracle::Term>& terms, int fe, bool zero_sign_negative) {
  const oracle::Exact e = oracle::exact_sum(terms);
  if (e.mag.zero()) return zero_sign_negative ? 0x80000000u : 0u;
  std::fesetround(fe);
  const float f = oracle::to_float(e);
  std::fesetround(FE_TONEAREST);
  return std::bit_cast<std::uint32_t>(f);
}

// The IEEE sign of an exact zero sum (exact_sum.h): -0 iff every term is -0, or the terms are
// not all +0 and the rounding is downward.
bool zero_is_negative(const std::vector<oracle::Term>& terms, Rounding r) {
  bool all_neg = true, all_pos = true;
  for (const oracle::Term& t : terms) {
    all_neg &= t.sig == 0 && t.neg;
    all_pos &= t.sig == 0 && !t.neg;
  }
  return !terms.empty() && (all_neg || (r == Rounding::downward && !all_pos));
}

TEST(ReferenceRandomAgreement, MmaScaledEveryTableRowAndMixedPairs) {
  std::mt19937_64 rng(4);
  struct Combo {
    DType x, y, scale;
    int block;
  };
  std::vector<Combo> combos;
  for (const ScaledMmaRow& r : kScaledMmaTable) combos.push_back({r.input, r.input, r.scale, r.block});
  combos.push_back({DType::float8_e4m3fn, DType::float4_e2m1fn, DType::float8_e8m0fnu, 32});
  combos.push_back({DType::float6_e3m2fn, DType::float8_e5m2, DType::float8_e8m0fnu, 32});
  std::int64_t outputs = 0;
  for (const Combo& c : combos) {
    for (int rep = 0; rep < 150; ++rep) {
      const std::int64_t M = 1 + rng() % 4, N = 1 + rng() % 4, Ks = 1 + rng() % 3, K = Ks * c.block;
      // Batch layouts: none; x batch C, y none; x 1, y C; both C.
      const int layout = static_cast<int>(rng() % 4);
      const std::int64_t C = 1 + rng() % 2;
      const std::int64_t bx = layout == 0 ? -1 : layout == 2 ? 1 : C;
      const std::int64_t by = layout == 0 || layout == 1 ? -1 : C;
      const std::int64_t bc = layout == 0 ? -1 : C;
      const Tensor x = random_tensor(rng, c.x, with_batch(bx, {M, K}));
      const Tensor xs = random_tensor(rng, c.scale, with_batch(bx, {M, Ks}));
      const Tensor y = random_tensor(rng, c.y, with_batch(by, {K, N}));
      const Tensor ys = random_tensor(rng, c.scale, with_batch(by, {Ks, N}));
      const Tensor acc = random_tensor(rng, DType::float32, with_batch(bc, {M, N}));
      const FenvMode& m = kModes[rng() % 4];
      ScaledMmaOptions opt{Numerics::exact(m.rounding), true};
      const Tensor r = mma_scaled(x, xs, y, ys, acc, opt);
      opt.numerics = Numerics::sequential();
      const Tensor seq = mma_scaled(x, xs, y, ys, acc, opt);
      const std::int64_t batches = bc < 0 ? 1 : bc;
      for (std::int64_t b = 0; b < batches; ++b)
        for (std::int64_t i = 0; i < M; ++i)
          for (std::int64_t j = 0; j < N; ++j) {
            std::vector<oracle::Term> terms;
            for (std::int64_t k = 0; k < K; ++k)
              add_term(terms, {at(x, b, i, k), at(xs, b, i, k / c.block), at(y, b, k, j), at(ys, b, k / c.block, j)});
            const double a = at(acc, b, i, j);
            terms.push_back(oracle::term_of(a));
            const std::uint32_t want = oracle_f32(terms, m.fe, zero_is_negative(terms, m.rounding));
            const std::int64_t o = (b * M + i) * N + j;
            ASSERT_EQ(r.code(o), want) << to_string(c.x) << " x " << to_string(c.y) << " " << to_string(m.rounding);
            // sequential: d = acc; d = RN(x*xs * y*ys + d) per k, each step exactly rounded.
            float d = static_cast<float>(a);
            for (std::int64_t k = 0; k < K; ++k) {
              const float xv = static_cast<float>(at(x, b, i, k) * at(xs, b, i, k / c.block));
              const float yv = static_cast<float>(at(y, b, k, j) * at(ys, b, k / c.block, j));
              if (!std::isfinite(xv) || !std::isfinite(yv) || !std::isfinite(d)) {
                d = std::fmaf(xv, yv, d);  // specials: IEEE rules, checked in test_numerics
                continue;
              }
              std::vector<oracle::Term> step;
              add_term(step, {xv, yv});
              step.push_back(oracle::term_of(d));
              d = std::bit_cast<float>(oracle_f32(step, FE_TONEAREST, zero_is_negative(step, Rounding::nearest_even)));
            }
            const std::uint32_t seq_want = std::isnan(d) ? 0x7FC00000u : std::bit_cast<std::uint32_t>(d);
            ASSERT_EQ(seq.code(o), seq_want) << to_string(c.x) << " x " << to_string(c.y);
            ++outputs;
          }
    }
  }
  EXPECT_GT(outputs, 5000);
}

// mma / matmul over the whole type table: random finite codes (f64 over its full range), exact
// numerics against the oracle.
TEST(ReferenceRandomAgreement, MmaAndMatmulEveryTableRow) {
  std::mt19937_64 rng(9);
  std::int64_t outputs = 0;
  for (const MmaRow& row : kMmaTable) {
    for (int rep = 0; rep < 120; ++rep) {
      const std::int64_t M = 1 + rng() % 3, N = 1 + rng() % 3, K = 1 + rng() % 40;
      const bool batched = rng() % 2;
      const std::int64_t C = 1 + rng() % 2;
      const Tensor lhs = random_tensor(rng, row.operand, batched ? Shape{C, M, K} : Shape{M, K});
      const Tensor rhs = random_tensor(rng, row.operand, batched ? Shape{1, K, N} : Shape{K, N});
      const Tensor acc = random_tensor(rng, row.accumulator, batched ? Shape{C, M, N} : Shape{M, N});
      const Tensor r = mma(lhs, rhs, acc);
      const Tensor mm = matmul(lhs, rhs);
      for (std::int64_t b = 0; b < (batched ? C : 1); ++b)
        for (std::int64_t i = 0; i < M; ++i)
          for (std::int64_t j = 0; j < N; ++j) {
            const std::int64_t o = (b * M + i) * N + j;
            if (row.accumulator == DType::int32) {
              std::int64_t s = static_cast<std::int64_t>(at(acc, b, i, j));
              std::int64_t p = 0;
              for (std::int64_t k = 0; k < K; ++k)
                p += static_cast<std::int64_t>(at(lhs, b, i, k)) * static_cast<std::int64_t>(at(rhs, b, k, j));
              ASSERT_EQ(r.value(o), static_cast<double>(static_cast<std::int32_t>(static_cast<std::uint32_t>(s + p))));
              ASSERT_EQ(mm.value(o), static_cast<double>(static_cast<std::int32_t>(static_cast<std::uint32_t>(p))));
              continue;
            }
            std::vector<oracle::Term> terms;
            for (std::int64_t k = 0; k < K; ++k) oracle::add_product(terms, at(lhs, b, i, k), at(rhs, b, k, j));
            const oracle::Exact products = oracle::exact_sum(terms);
            terms.push_back(oracle::term_of(at(acc, b, i, j)));
            const oracle::Exact e = oracle::exact_sum(terms);
            auto expect = [&](const oracle::Exact& v, DType t, std::uint64_t got, const char* what) {
              if (v.mag.zero()) return;  // zero signs: test_numerics / test_exact_sum
              std::uint64_t want = 0;
              if (t == DType::float32) want = std::bit_cast<std::uint32_t>(oracle::to_float(v));
              else if (t == DType::float64) want = std::bit_cast<std::uint64_t>(oracle::to_double(v));
              else want = oracle::to_narrow(v, format_of(t));
              ASSERT_EQ(got, want) << what << " " << to_string(row.operand) << " -> " << to_string(t);
            };
            expect(e, row.accumulator, r.code(o), "mma");
            expect(products, mm.dtype(), mm.code(o), "matmul");
            ++outputs;
          }
    }
  }
  EXPECT_GT(outputs, 4000);
}

}  // namespace
}  // namespace blockscale::reference
