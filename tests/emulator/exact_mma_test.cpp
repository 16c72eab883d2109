// SPDX-License-Identifier: Apache-2.0
// emulator::exact_mma (ct::mma's exact numerics for unscaled operands as a double GEMM whose outputs
// are proved exact or certified by the sum's error bound) against reference::mma, bit for bit: every
// operand type and fp8 mix, dense and 2:4-sparse A, C of every class, random bit patterns (NaN and
// Inf elements), every fast path at 1 and 3 threads; sums whose double is wrong (cancellation, bits
// below the double's reach, ties of f32 rounding, subnormal and overflowing results), which the
// certificate must refuse; B prepared once for row slices; and bad input.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "blockscale/emulator/gemm.h"
#include "blockscale/formats/convert.h"
#include "blockscale/formats/presets.h"
#include "blockscale/reference/mma.h"
#include "expect_throw.h"
#include "fp_mode.h"
#include "gemm_test_data.h"

namespace blockscale::emulator {
namespace {

using Rng = std::mt19937_64;
using testing::c_bits;
using testing::fast_paths;

// A matrix of codes (one uint32 word each) of format f, row-major.
struct Codes {
  Format format;
  std::size_t rows, cols;
  std::vector<std::uint32_t> words;
  CodeMatrix view() const { return CodeMatrix(format, rows, cols, words); }
};

// The word of a float value in f (nearest even; tf32: the rounded value's fp32 pattern).
std::uint32_t word_of(Format f, float x) {
  const std::uint32_t code = convert_code(f, Format::float32, std::bit_cast<std::uint32_t>(x), presets::ieee());
  return to_storage(f, code);
}

// Gaussian values whose magnitude changes by 2^(-spread..spread) from row to row (of a row-major
// matrix with `row` columns); `sparse`: two of each four along the row set to +0 or -0.
Codes gaussian(Rng& rng, Format f, std::size_t rows, std::size_t cols, int spread, bool sparse) {
  std::normal_distribution<double> g;
  Codes c{f, rows, cols, std::vector<std::uint32_t>(rows * cols)};
  for (std::size_t r = 0; r < rows; ++r) {
    const double mag = std::ldexp(1.0, static_cast<int>(rng() % static_cast<unsigned>(2 * spread + 1)) - spread);
    for (std::size_t k = 0; k < cols; ++k) {
      float x = static_cast<float>(g(rng) * mag);
      if (sparse && (k % 4 == rng() % 4 || k % 4 == (rng() + 2) % 4)) x = (rng() & 1) ? -0.0f : 0.0f;
      c.words[r * cols + k] = word_of(f, x);
    }
  }
  return c;
}

// Uniformly random codes of f (NaN and Inf included).
Codes random_bits(Rng& rng, Format f, std::size_t rows, std::size_t cols) {
  Codes c{f, rows, cols, std::vector<std::uint32_t>(rows * cols)};
  const std::uint32_t mask = to_storage(f, code_mask(f));
  for (auto& w : c.words) w = static_cast<std::uint32_t>(rng()) & mask;
  return c;
}

// reference::mma (exact numerics) on the same codes: the oracle, an exact sum term by term.
std::vector<std::uint32_t> oracle(const Codes& a, const Codes& b, const std::vector<std::uint32_t>& c) {
  const auto code = [](Format f, std::uint32_t w) { return static_cast<std::uint64_t>(w >> info(f).code_shift); };
  std::vector<std::uint64_t> x(a.words.size()), y(b.words.size()), acc(a.rows * b.cols, 0);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = code(a.format, a.words[i]);
  for (std::size_t i = 0; i < y.size(); ++i) y[i] = code(b.format, b.words[i]);
  for (std::size_t i = 0; i < c.size(); ++i) acc[i] = c[i];
  const auto M = static_cast<std::int64_t>(a.rows), K = static_cast<std::int64_t>(a.cols), N = static_cast<std::int64_t>(b.cols);
  const reference::Tensor r = reference::mma(reference::Tensor(reference::dtype_of(a.format), {M, K}, std::move(x)),
                                             reference::Tensor(reference::dtype_of(b.format), {K, N}, std::move(y)),
                                             reference::Tensor(reference::DType::float32, {M, N}, std::move(acc)));
  std::vector<std::uint32_t> d(r.codes().size());
  for (std::size_t i = 0; i < d.size(); ++i) d[i] = static_cast<std::uint32_t>(r.codes()[i]);
  return d;
}

// Every fast path at 1 and 3 threads, and GemmPath::reference, against the oracle; returns the
// stats of the widest path at 1 thread.
// `hostile`: each call runs under the caller's worst floating-point mode (fp_mode.h), the oracle in
// the default mode.
GemmPathStats expect_oracle(const Codes& a, const Codes& b, const std::vector<std::uint32_t>& c, const std::string& what,
                            bool hostile = false) {
  const std::vector<std::uint32_t> want = oracle(a, b, c);
  const CodeMatrix cm = c.empty() ? CodeMatrix() : CodeMatrix(Format::float32, a.rows, b.cols, c);
  GemmPathStats widest;
  std::vector<GemmPath> paths = fast_paths();
  paths.push_back(GemmPath::reference);
  for (GemmPath path : paths) {
    for (int threads : {1, 3}) {
      if (path == GemmPath::reference && threads == 3) continue;
      GemmPathStats st;
      std::optional<test::HostileFpMode> mode;
      if (hostile) mode.emplace();
      const std::vector<std::uint32_t> got = exact_mma(a.view(), b.view(), cm, {threads, path, &st});
      mode.reset();
      std::size_t bad = 0, first = 0;
      for (std::size_t i = 0; i < want.size(); ++i) {
        if (got[i] != want[i] && bad++ == 0) first = i;
      }
      EXPECT_EQ(bad, 0u) << what << " " << to_string(path) << " threads " << threads << ": first at " << first
                         << " got 0x" << std::hex << got[first] << " want 0x" << want[first];
      EXPECT_EQ(st.exact + st.certified + st.special + st.reference_outputs, want.size()) << what;
      if (path == fast_paths().back() && threads == 1) widest = st;
    }
  }
  return widest;
}

struct Pair {
  Format a, b;
};
const Pair kPairs[] = {{Format::float16, Format::float16},         {Format::bfloat16, Format::bfloat16},
                       {Format::tfloat32, Format::tfloat32},       {Format::float32, Format::float32},
                       {Format::float8_e4m3fn, Format::float8_e4m3fn}, {Format::float8_e5m2, Format::float8_e5m2},
                       {Format::float8_e4m3fn, Format::float8_e5m2},   {Format::float8_e5m2, Format::float8_e4m3fn}};

std::string name(const Pair& p) { return std::string(info(p.a).short_name) + " x " + info(p.b).short_name; }

// Gaussian data, dense and 2:4 sparse A, with C of every class and without C: the certificate
// settles most outputs of the wide types, the proof most of fp8's, and every output agrees.
TEST(ExactMma, GaussianEveryOperandType) {
  Rng rng(1);
  const std::size_t M = 37, N = 41, K = 300;
  for (const Pair& p : kPairs) {
    const bool fp8 = info(p.a).storage_bits == 8;
    const int spread = fp8 ? 3 : 12;
    for (bool sparse : {false, true}) {
      const Codes a = gaussian(rng, p.a, M, K, spread, sparse), b = gaussian(rng, p.b, K, N, spread, false);
      const std::string what = name(p) + (sparse ? " sparse A" : " dense");
      const GemmPathStats st = expect_oracle(a, b, {}, what);
      if (fp8) {
        EXPECT_GT(st.exact, M * N / 2) << what;
      } else {
        EXPECT_GT(st.certified, M * N / 2) << what;
      }
      expect_oracle(a, b, c_bits(rng, M * N, 10), what + " with C");
    }
  }
}

// Uniformly random codes: NaN rows and columns (special), Inf elements and sums beyond any bound
// (the reference), and C of every class.
TEST(ExactMma, RandomBitPatterns) {
  Rng rng(2);
  const std::size_t M = 13, N = 19, K = 48;
  GemmPathStats total;
  for (const Pair& p : kPairs) {
    const Codes a = random_bits(rng, p.a, M, K), b = random_bits(rng, p.b, K, N);
    const GemmPathStats st = expect_oracle(a, b, c_bits(rng, M * N, 1e3), name(p) + " random bits");
    total.special += st.special;
    total.reference_outputs += st.reference_outputs;
    // Without NaN and Inf codes: every finite value, so that sums span the whole range.
    Codes fa = random_bits(rng, p.a, M, K), fb = random_bits(rng, p.b, K, N);
    for (Codes* m : {&fa, &fb}) {
      for (auto& w : m->words) {
        while (!std::isfinite(to_double(m->format, w >> info(m->format).code_shift))) {
          w = static_cast<std::uint32_t>(rng()) & to_storage(m->format, code_mask(m->format));
        }
      }
    }
    const GemmPathStats fs = expect_oracle(fa, fb, {}, name(p) + " finite random bits");
    total.exact += fs.exact;
    total.certified += fs.certified;
  }
  EXPECT_GT(total.special, 0u);
  EXPECT_GT(total.reference_outputs, 0u);
  EXPECT_GT(total.exact, 0u);
  EXPECT_GT(total.certified, 0u);
}

// The caller's floating-point mode (round toward zero, subnormals flushed on every thread:
// fp_mode.h) changes no bit: operands near and below the smallest normal of each type (for f32,
// bf16 and tf32 subnormal operands, which a flushing conversion to double loses), and C subnormal,
// tiny or of every class.
TEST(ExactMma, TheCallersFloatingPointModeChangesNoBit) {
  Rng rng(3);
  const std::size_t M = 13, N = 19, K = 64;
  for (const Pair& p : kPairs) {
    // Codes of the lowest binades: exponent field 0 (subnormal or zero) or 1, any significand.
    const auto low = [&](Format f, std::size_t rows, std::size_t cols) {
      Codes c = random_bits(rng, f, rows, cols);
      const FormatInfo& fi = info(f);
      const std::uint32_t man_mask = (1u << fi.mantissa_bits) - 1;
      for (auto& w : c.words) {
        const std::uint32_t code = w >> fi.code_shift;
        const std::uint32_t sign = code & (1u << (fi.exponent_bits + fi.mantissa_bits));
        const std::uint32_t exp = static_cast<std::uint32_t>(rng() % 2) << fi.mantissa_bits;
        w = to_storage(f, sign | exp | (code & man_mask));
      }
      return c;
    };
    const Codes a = low(p.a, M, K), b = gaussian(rng, p.b, K, N, 2, false);
    std::vector<std::uint32_t> tiny_c(M * N);
    for (auto& w : tiny_c) w = static_cast<std::uint32_t>(rng()) & 0x807FFFFFu;  // f32 subnormals and zeros
    expect_oracle(a, b, {}, name(p) + " low binades", true);
    expect_oracle(a, b, tiny_c, name(p) + " low binades, subnormal C", true);
    const Codes za{p.a, M, K, std::vector<std::uint32_t>(M * K, 0)};
    expect_oracle(za, b, tiny_c, name(p) + " zero A, subnormal C", true);
    expect_oracle(random_bits(rng, p.a, M, K), random_bits(rng, p.b, K, N), c_bits(rng, M * N, 1e3),
                  name(p) + " random bits", true);
  }
}

// One f32 row times a column of one value, per case, with the f32 the exact sum rounds to and the
// way exact_mma must settle it. The double GEMM's sum is exact only where the proof applies; else it
// is wrong (cancellation, bits below the double's reach) or sits on an f32 rounding boundary, which
// the norm certificate must refuse; the compensated sum settles cancellation, and only the
// reference settles an exact sum a hair from a boundary.
TEST(ExactMma, SumsTheDoubleGetsWrong) {
  enum class Tier { proved, certified, reference };
  struct Case {
    const char* what;
    std::vector<float> row;
    float column;
    std::uint32_t want;
    Tier tier;
  };
  const float max = std::bit_cast<float>(0x7F7FFFFFu);
  const std::vector<Case> cases = {
      // 2^60 + 1 rounds to 2^60 in double (s = 0, the norm bound 2^61 wide); the exact sum is 1.
      {"cancellation", {0x1p60f, 1.0f, -0x1p60f}, 1.0f, 0x3F800000u, Tier::certified},
      // 1 + 2^-24 is the midpoint of 1 and 1 + 2^-23; the bit at 2^-80 lies beyond the double's
      // reach from 1 and makes the exact sum round up (or, negative, down).
      {"bit below the double", {1.0f, 0x1p-24f, 0x1p-80f}, 1.0f, 0x3F800001u, Tier::reference},
      {"bit below the double, negative", {1.0f, 0x1p-24f, -0x1p-80f}, 1.0f, 0x3F800000u, Tier::reference},
      // Two terms, c and c * r with c = 32513 * 2^-15 and r = 33025 * 2^-40: 32513 * 33025 = 2^30 + 1,
      // so the product is 2^-25 + 2^-55, exact in double, and the sum lies 2^-55 above the midpoint
      // of c and c + 2^-24. The double's sum drops that bit (a quarter of its ulp) and lands on the
      // midpoint, whose tie goes to c: the error bound must keep the interval open for two terms.
      {"two terms, the double on a midpoint", {1.0f, 0x1.0202p-25f}, 0x1.fc04p-1f, 0x3F7E0201u, Tier::reference},
      // Exact ties: nearest even.
      {"tie to even", {1.0f, 0x1p-24f}, 1.0f, 0x3F800000u, Tier::proved},
      {"tie to even, odd", {0x1.000002p0f, 0x1p-24f}, 1.0f, 0x3F800002u, Tier::proved},
      // Subnormal results (products with 2^-60): 2^-140 + 2^-150 is the midpoint of 512 and 513
      // units of 2^-149, the even one kept; 2^-200 beyond it rounds up.
      {"subnormal tie", {0x1p-80f, 0x1p-90f}, 0x1p-60f, 0x00000200u, Tier::proved},
      {"subnormal tie broken", {0x1p-80f, 0x1p-90f, 0x1p-140f}, 0x1p-60f, 0x00000201u, Tier::reference},
      // FLT_MAX + half its ulp (2^103): the tie rounds to even, which is Inf; 2^-20 less, to FLT_MAX.
      {"overflow tie", {max, 0x1p103f}, 1.0f, 0x7F800000u, Tier::proved},
      {"overflow tie undone", {max, 0x1p103f, -0x1p-20f}, 1.0f, 0x7F7FFFFFu, Tier::reference},
  };
  for (const Case& t : cases) {
    const std::size_t K = t.row.size();
    Codes a{Format::float32, 1, K, {}};
    const Codes b{Format::float32, K, 1, std::vector<std::uint32_t>(K, std::bit_cast<std::uint32_t>(t.column))};
    for (float x : t.row) a.words.push_back(std::bit_cast<std::uint32_t>(x));
    const std::vector<std::uint32_t> want = oracle(a, b, {});
    EXPECT_EQ(want[0], t.want) << t.what << ": the oracle";
    for (GemmPath path : fast_paths()) {
      GemmPathStats st;
      const std::vector<std::uint32_t> got = exact_mma(a.view(), b.view(), {}, {1, path, &st});
      EXPECT_EQ(got[0], t.want) << t.what << " " << to_string(path) << " got 0x" << std::hex << got[0];
      EXPECT_EQ(st.exact, t.tier == Tier::proved ? 1u : 0u) << t.what << " " << to_string(path);
      EXPECT_EQ(st.certified, t.tier == Tier::certified ? 1u : 0u) << t.what << " " << to_string(path);
      EXPECT_EQ(st.reference_outputs, t.tier == Tier::reference ? 1u : 0u) << t.what << " " << to_string(path);
    }
  }
}

// Exact zero sums: every product -0 (with C = -0: -0), products of both signs of zero, cancelling
// pairs, all with C = +0, -0 and absent.
TEST(ExactMma, ZeroSums) {
  const std::vector<std::uint32_t> rows = {
      0x80000000u, 0x80000000u, 0x80000000u, 0x80000000u,  // -0 everywhere
      0x00000000u, 0x80000000u, 0x00000000u, 0x80000000u,  // zeros of both signs
      0x3F800000u, 0xBF800000u, 0x40000000u, 0xC0000000u,  // 1 - 1 + 2 - 2
  };
  const Codes a{Format::float32, 3, 4, rows};
  const Codes b{Format::float32, 4, 2, {0x3F800000u, 0x80000000u, 0x3F800000u, 0x80000000u, 0x3F800000u, 0x80000000u,
                                        0x3F800000u, 0x80000000u}};
  for (std::uint32_t cv : {0u, 0x80000000u}) {
    expect_oracle(a, b, std::vector<std::uint32_t>(6, cv), "zero sums, C 0x" + std::to_string(cv));
    const std::vector<std::uint32_t> d = exact_mma(a.view(), b.view(), CodeMatrix(Format::float32, 3, 2, std::vector<std::uint32_t>(6, cv)));
    EXPECT_EQ(d[0], cv) << "-0 times 1, C 0x" << std::hex << cv;  // every term -0 only with C = -0
    EXPECT_EQ(d[4], 0u) << "a cancelling sum is +0";
  }
  expect_oracle(a, b, {}, "zero sums without C");
}

// Inf elements: Inf times zero (NaN), Infs of both signs (NaN), an Inf sum.
TEST(ExactMma, InfiniteElements) {
  const std::uint32_t inf = 0x7F800000u, minus_inf = 0xFF800000u, one = 0x3F800000u;
  const Codes a{Format::float32, 3, 2, {inf, one, inf, minus_inf, inf, one}};
  const Codes b{Format::float32, 2, 2, {0u, one, one, one}};
  expect_oracle(a, b, {}, "Inf elements");
  const std::vector<std::uint32_t> d = exact_mma(a.view(), b.view());
  EXPECT_EQ(d[0], 0x7FC00000u);  // Inf * 0
  EXPECT_EQ(d[1], inf);
  EXPECT_EQ(d[3], 0x7FC00000u);  // Inf - Inf
}

// B prepared once, A and C given in row slices: the same bits as one call.
TEST(ExactMma, PreparedBOverRowSlices) {
  Rng rng(3);
  const std::size_t M = 50, N = 33, K = 128;
  const Codes a = gaussian(rng, Format::bfloat16, M, K, 8, true), b = gaussian(rng, Format::bfloat16, K, N, 8, false);
  const std::vector<std::uint32_t> c = c_bits(rng, M * N, 10);
  const std::vector<std::uint32_t> whole = exact_mma(a.view(), b.view(), CodeMatrix(Format::float32, M, N, c));
  const ExactMmaB prepared(b.view());
  for (std::size_t r0 = 0; r0 < M; r0 += 16) {
    const std::size_t rows = std::min<std::size_t>(16, M - r0);
    const CodeMatrix a_rows(a.format, rows, K, std::span(a.words).subspan(r0 * K, rows * K));
    const CodeMatrix c_rows(Format::float32, rows, N, std::span(c).subspan(r0 * N, rows * N));
    const std::vector<std::uint32_t> part = exact_mma(a_rows, prepared, c_rows);
    EXPECT_TRUE(std::equal(part.begin(), part.end(), whole.begin() + static_cast<std::ptrdiff_t>(r0 * N))) << "rows from " << r0;
  }
}

TEST(ExactMma, BadInput) {
  using test::expect_throw_with;
  const std::vector<std::uint32_t> w(12, 0);
  const std::vector<std::uint16_t> h(12, 0);
  const std::vector<std::uint8_t> e(12, 0);
  const CodeMatrix f32_3x4(Format::float32, 3, 4, w), f32_4x3(Format::float32, 4, 3, w);
  expect_throw_with([&] { exact_mma(CodeMatrix(Format::float4_e2m1fn, 3, 4, e), CodeMatrix(Format::float4_e2m1fn, 4, 3, e)); },
                    "A is float4_e2m1fn; ct::mma with an f32 accumulator takes e4m3, e5m2, f16, bf16, tf32 or f32");
  expect_throw_with([&] { exact_mma(f32_3x4, CodeMatrix(Format::float8_e8m0fnu, 4, 3, e)); }, "B is float8_e8m0fnu");
  expect_throw_with([&] { exact_mma(CodeMatrix(Format::float16, 3, 4, h), CodeMatrix(Format::bfloat16, 4, 3, h)); },
                    "ct::mma takes one operand type (or e4m3 with e5m2)");
  expect_throw_with([&] { exact_mma(f32_3x4, f32_3x4); }, "A is 3 x 4 and B 3 x 4: A's columns must equal B's rows");
  expect_throw_with([&] { exact_mma(f32_3x4, f32_4x3, f32_4x3); }, "C must be 3 x 3 f32 codes, not 4 x 3 float32");
  expect_throw_with([&] { exact_mma(f32_3x4, f32_4x3, CodeMatrix(Format::float16, 3, 4, h)); }, "C must be 3 x 3 f32 codes");
  // ct::mma's rule (reference::mma refuses the same): no empty dimension.
  const std::span<const std::uint32_t> none;
  expect_throw_with([&] { exact_mma(CodeMatrix(Format::float32, 3, 0, none), CodeMatrix(Format::float32, 0, 3, none)); },
                    "A is 3 x 0 and B 0 x 3: ct::mma takes no empty dimension");
  const std::vector<std::uint32_t> wide_f16(12, 0x10000u);  // a bit above f16's 16
  expect_throw_with([&] { exact_mma(CodeMatrix(Format::float16, 3, 4, wide_f16), CodeMatrix(Format::float16, 4, 3, h)); },
                    "exact_mma: A");
}

}  // namespace
}  // namespace blockscale::emulator
