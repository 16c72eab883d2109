// SPDX-License-Identifier: Apache-2.0
// ExactSum against the independent oracle (oracle.h): random sums, cancellation, every IEEE
// rounding, subnormal and overflowing results, and the special-value rules.
#include <gtest/gtest.h>

#include <bit>
#include <cfenv>
#include <cmath>
#include <limits>
#include <random>

#include "blockscale/reference/exact_sum.h"
#include "oracle.h"

namespace blockscale::reference {
namespace {

struct FenvMode {
  Rounding rounding;
  int fe;
};
const FenvMode kModes[] = {{Rounding::nearest_even, FE_TONEAREST},
                           {Rounding::toward_zero, FE_TOWARDZERO},
                           {Rounding::upward, FE_UPWARD},
                           {Rounding::downward, FE_DOWNWARD}};

// Random terms: significands of 1..64 bits, exponents spread over `span` around `center`, some
// exact negations of earlier terms (cancellation) and some tiny terms under large ones.
std::vector<oracle::Term> random_terms(std::mt19937_64& rng, int center, int span) {
  std::vector<oracle::Term> t;
  const int n = 1 + static_cast<int>(rng() % 24);
  for (int i = 0; i < n; ++i) {
    const int bits = 1 + static_cast<int>(rng() % 64);
    std::uint64_t sig = rng() >> (64 - bits);
    if (rng() % 16 == 0) sig = 0;
    const int exp = center - span / 2 + static_cast<int>(rng() % static_cast<std::uint64_t>(span + 1));
    t.push_back({(rng() & 1) != 0, sig, exp});
    if (rng() % 4 == 0 && !t.empty()) {  // cancel an earlier term exactly
      oracle::Term c = t[rng() % t.size()];
      c.neg = !c.neg;
      t.push_back(c);
    }
  }
  return t;
}

ExactSum sum_of(const std::vector<oracle::Term>& terms) {
  ExactSum s;
  for (const oracle::Term& t : terms) s.add(t.neg, t.sig, t.exp);
  return s;
}

// Random sums rounded to f32 and f64 in the four IEEE modes: bit-equal to the x87 oracle.
// Exponent centres cover the normal, subnormal and overflow ranges of both types.
TEST(ReferenceExactSum, RandomSumsMatchOracleF32F64AllModes) {
  std::mt19937_64 rng(20240604);
  const int centers[] = {0, -130, -150, -170, 100, 128, -1000, -1080, 960, 1030, 40};
  int checked = 0, zeros = 0, subnormal = 0, infinite = 0;
  for (const int center : centers) {
    for (int rep = 0; rep < 8000; ++rep) {
      const std::vector<oracle::Term> terms = random_terms(rng, center, 1 + static_cast<int>(rng() % 120));
      const oracle::Exact e = oracle::exact_sum(terms);
      for (const FenvMode& m : kModes) {
        ExactSum s = sum_of(terms);
        const std::uint64_t f32 = s.round_to(DType::float32, m.rounding);
        const std::uint64_t f64 = s.round_to(DType::float64, m.rounding);
        if (e.mag.zero()) {  // zero sums: sign rules are checked separately
          EXPECT_EQ(f32 & 0x7FFFFFFFu, 0u);
          ++zeros;
          continue;
        }
        std::fesetround(m.fe);
        const float of = oracle::to_float(e);
        const double od = oracle::to_double(e);
        std::fesetround(FE_TONEAREST);
        ASSERT_EQ(f32, std::bit_cast<std::uint32_t>(of)) << "center " << center << " mode " << to_string(m.rounding);
        ASSERT_EQ(f64, std::bit_cast<std::uint64_t>(od)) << "center " << center << " mode " << to_string(m.rounding);
        if (std::fpclassify(of) == FP_SUBNORMAL) ++subnormal;
        if (std::isinf(of)) ++infinite;
        ++checked;
      }
    }
  }
  // The strata were reached.
  EXPECT_GT(checked, 300000);
  EXPECT_GT(zeros, 100);
  EXPECT_GT(subnormal, 500);
  EXPECT_GT(infinite, 500);
}

TEST(ReferenceExactSum, RandomSumsMatchOracleF16BF16) {
  std::mt19937_64 rng(77);
  const int centers[] = {0, -14, -24, -30, 15, 16, -126, -140, 127, 20};
  for (const int center : centers) {
    for (int rep = 0; rep < 20000; ++rep) {
      const std::vector<oracle::Term> terms = random_terms(rng, center, 1 + static_cast<int>(rng() % 40));
      const oracle::Exact e = oracle::exact_sum(terms);
      if (e.mag.zero()) continue;
      ExactSum s = sum_of(terms);
      ASSERT_EQ(s.round_to(DType::float16), oracle::to_narrow(e, Format::float16)) << center;
      ASSERT_EQ(s.round_to(DType::bfloat16), oracle::to_narrow(e, Format::bfloat16)) << center;
    }
  }
}

// Ties and near-ties at the f32 rounding point, in every mode including nearest_away (which the
// x87 oracle cannot do: the expected values are written out).
TEST(ReferenceExactSum, TiesAndNearestAway) {
  // 1 + 2^-24 is a tie between 1 and 1 + 2^-23.
  const auto tie = [](Rounding r, bool neg, bool sticky) {
    ExactSum s;
    s.add(neg, 1, 0);
    s.add(neg, 1, -24);
    if (sticky) s.add(neg, 1, -200);
    return s.round_to(DType::float32, r);
  };
  EXPECT_EQ(tie(Rounding::nearest_even, false, false), 0x3F800000u);
  EXPECT_EQ(tie(Rounding::nearest_away, false, false), 0x3F800001u);
  EXPECT_EQ(tie(Rounding::nearest_away, true, false), 0xBF800001u);
  EXPECT_EQ(tie(Rounding::nearest_even, false, true), 0x3F800001u);  // just above the tie
  EXPECT_EQ(tie(Rounding::toward_zero, false, true), 0x3F800000u);
  EXPECT_EQ(tie(Rounding::upward, true, true), 0xBF800000u);
  EXPECT_EQ(tie(Rounding::downward, true, true), 0xBF800001u);
  // A tie with an odd lower neighbour rounds up under nearest_even: 1 + 2^-23 + 2^-24.
  ExactSum s;
  s.add(false, 3, -24);
  s.add(false, 1, 0);
  EXPECT_EQ(s.round_to(DType::float32), 0x3F800002u);
  // A tiny term far below a large one is only a sticky bit, and it survives exact cancellation.
  ExactSum c;
  c.add(false, 1, 300);
  c.add(false, 1, -300);
  c.add(true, 1, 300);
  EXPECT_EQ(c.round_to(DType::float64), std::bit_cast<std::uint64_t>(std::ldexp(1.0, -300)));
  EXPECT_EQ(c.round_to(DType::float32), 0u);  // 2^-300 underflows to +0 under nearest
  EXPECT_EQ(c.round_to(DType::float32, Rounding::upward), 1u);  // smallest subnormal
}

TEST(ReferenceExactSum, OverflowFollowsIeee74) {
  auto big = [](bool neg) {
    ExactSum s;
    s.add(neg, 1, 128);  // 2^128: beyond f32
    return s;
  };
  EXPECT_EQ(big(false).round_to(DType::float32), 0x7F800000u);
  EXPECT_EQ(big(true).round_to(DType::float32), 0xFF800000u);
  EXPECT_EQ(big(false).round_to(DType::float32, Rounding::toward_zero), 0x7F7FFFFFu);
  EXPECT_EQ(big(true).round_to(DType::float32, Rounding::upward), 0xFF7FFFFFu);
  EXPECT_EQ(big(false).round_to(DType::float32, Rounding::downward), 0x7F7FFFFFu);
  EXPECT_EQ(big(true).round_to(DType::float32, Rounding::downward), 0xFF800000u);
  // f16: 65520 rounds to Inf, 65519 to 65504.
  ExactSum h;
  h.add(false, 65520, 0);
  EXPECT_EQ(h.round_to(DType::float16), 0x7C00u);
  ExactSum h2;
  h2.add(false, 65519, 0);
  EXPECT_EQ(h2.round_to(DType::float16), 0x7BFFu);
}

TEST(ReferenceExactSum, SignedZeros) {
  auto zero_sum = [](std::initializer_list<std::pair<bool, std::uint64_t>> terms, Rounding r) {
    ExactSum s;
    for (const auto& [neg, sig] : terms) s.add(neg, sig, 0);
    return s.round_to(DType::float32, r);
  };
  EXPECT_EQ(zero_sum({{true, 0}, {true, 0}}, Rounding::nearest_even), 0x80000000u);   // -0 + -0 = -0
  EXPECT_EQ(zero_sum({{true, 0}, {false, 0}}, Rounding::nearest_even), 0u);           // -0 + +0 = +0
  EXPECT_EQ(zero_sum({{true, 0}, {false, 0}}, Rounding::downward), 0x80000000u);     // ... -0 under RD
  EXPECT_EQ(zero_sum({{false, 0}, {false, 0}}, Rounding::downward), 0u);             // +0 + +0 = +0
  EXPECT_EQ(zero_sum({{false, 5}, {true, 5}}, Rounding::nearest_even), 0u);           // x - x = +0
  EXPECT_EQ(zero_sum({{false, 5}, {true, 5}}, Rounding::downward), 0x80000000u);     // ... -0 under RD
  ExactSum empty;
  EXPECT_EQ(empty.round_to(DType::float32), 0u);
  // A nonzero sum that underflows keeps its sign.
  ExactSum tiny;
  tiny.add(true, 1, -160);
  EXPECT_EQ(tiny.round_to(DType::float32), 0x80000000u);
}

TEST(ReferenceExactSum, SpecialValues) {
  ExactSum s;
  EXPECT_TRUE(s.empty());
  s.add(true, 0, 0);  // a signed zero is a term
  EXPECT_FALSE(s.empty());
  s.add(false, 1, 0);
  EXPECT_FALSE(s.has_infinity());
  s.add_infinity(false);
  EXPECT_TRUE(s.has_infinity());
  EXPECT_FALSE(s.has_nan());
  EXPECT_EQ(s.round_to(DType::float32), 0x7F800000u);
  s.add_infinity(true);  // +Inf and -Inf
  EXPECT_TRUE(s.has_nan());
  EXPECT_EQ(s.round_to(DType::float32), 0x7FC00000u);
  EXPECT_EQ(s.round_to(DType::float16), 0x7E00u);
  EXPECT_EQ(s.round_to(DType::float64), 0x7FF8000000000000u);
  s.clear();
  EXPECT_TRUE(s.empty());
  EXPECT_FALSE(s.has_infinity());
  EXPECT_FALSE(s.has_nan());
  EXPECT_EQ(s.round_to(DType::float32), 0u);  // no terms: +0
  ExactSum n;
  n.add_nan();
  n.add_infinity(true);
  EXPECT_EQ(n.round_to(DType::bfloat16), 0x7FC0u);
  ExactSum m;
  m.add_infinity(true);
  m.add(false, 1, 2000);
  EXPECT_EQ(m.round_to(DType::float32), 0xFF800000u);
  EXPECT_THROW(m.round_to(DType::float8_e4m3fn), std::invalid_argument);
  EXPECT_THROW(m.round_to(DType::float32, Rounding::stochastic), std::invalid_argument);
}

// Products of 64-bit significands (the 128-bit path) and long sums (a long alternating sum
// exercises the lazy words; the next test crosses a carry propagation).
TEST(ReferenceExactSum, WideProductsAndLongSums) {
  std::mt19937_64 rng(5);
  for (int rep = 0; rep < 2000; ++rep) {
    const std::uint64_t a = rng(), b = rng();
    const int exp = static_cast<int>(rng() % 400) - 200;
    ExactSum s;
    s.add_product((rng() & 1) != 0, a, b, exp);
    __extension__ const unsigned __int128 p = static_cast<unsigned __int128>(a) * b;
    const std::vector<oracle::Term> t = {{false, static_cast<std::uint64_t>(p), exp},
                                         {false, static_cast<std::uint64_t>(p >> 64), exp + 64}};
    const oracle::Exact e = oracle::exact_sum(t);
    const std::uint64_t got = s.round_to(DType::float64) & ~(std::uint64_t{1} << 63);
    ASSERT_EQ(got, std::bit_cast<std::uint64_t>(oracle::to_double(e)));
  }
  ExactSum s;
  for (int i = 0; i < 1000000; ++i) s.add((i & 1) != 0, 0xFFFFFFFFFFFFFFFFull, (i % 7) * 13 - 40);
  // Pairs (i, i+1) cancel exactly only when their exponents match; compute the oracle directly.
  std::vector<oracle::Term> t;
  for (int i = 0; i < 1000000; ++i) t.push_back({(i & 1) != 0, 0xFFFFFFFFFFFFFFFFull, (i % 7) * 13 - 40});
  EXPECT_EQ(s.round_to(DType::float64), std::bit_cast<std::uint64_t>(oracle::to_double(oracle::exact_sum(t))));
}

// A sum of more terms than a word absorbs between carry propagations (2^30, exact_sum.cpp): every
// digit then holds up to 2^62 of pending additions. Two terms in three are negative, at exponents
// 40 above the positive ones, so that when they are propagated the low digits hold positive sums,
// the high ones negative sums, and the whole is negative (a borrow runs into the top digit); terms
// after the propagation add to the normalised digits. The
// oracle adds the same terms grouped by sign and exponent: count * (2^64 - 1) * 2^e =
// count * 2^(e+64) - count * 2^e.
TEST(ReferenceExactSum, SumsBeyondTheCarryInterval) {
  constexpr std::int64_t kTerms = (std::int64_t{1} << 30) + 12345;
  constexpr std::uint64_t kSig = 0xFFFFFFFFFFFFFFFFull;
  constexpr int kExps = 5;
  const auto exponent = [](bool negative, int j) { return j * 7 - 10 + (negative ? 40 : 0); };
  ExactSum s;
  std::uint64_t count[2][kExps] = {};
  int i3 = 0, i5 = 0;  // i mod 3 and i mod 5
  for (std::int64_t i = 0; i < kTerms; ++i) {
    const bool negative = i3 != 0;
    s.add(negative, kSig, exponent(negative, i5));
    ++count[negative][i5];
    i3 = i3 == 2 ? 0 : i3 + 1;
    i5 = i5 == kExps - 1 ? 0 : i5 + 1;
  }
  // Terms far below and above, after the propagation: a sticky bit, and a new top digit.
  s.add(false, 1, -400);
  s.add(true, 3, 120);
  std::vector<oracle::Term> t = {{false, 1, -400}, {true, 3, 120}};
  for (int n = 0; n < 2; ++n)
    for (int j = 0; j < kExps; ++j) {
      t.push_back({n == 1, count[n][j], exponent(n == 1, j) + 64});
      t.push_back({n == 0, count[n][j], exponent(n == 1, j)});
    }
  const auto expect_sum = [&](const char* what) {
    const oracle::Exact want = oracle::exact_sum(t);
    for (const FenvMode& m : kModes) {
      SCOPED_TRACE(std::string(what) + ", " + to_string(m.rounding));
      ASSERT_EQ(std::fesetround(m.fe), 0);
      const double d = oracle::to_double(want);
      const float f = oracle::to_float(want);
      std::fesetround(FE_TONEAREST);
      EXPECT_EQ(s.round_to(DType::float64, m.rounding), std::bit_cast<std::uint64_t>(d));
      EXPECT_EQ(s.round_to(DType::float32, m.rounding), std::bit_cast<std::uint32_t>(f));
    }
  };
  expect_sum("the whole sum");
  // A rounding sees only the top digits and a sticky bit. Taking the loop's terms away again (as
  // the groups) leaves -3 * 2^120 + 2^-400, which every digit of the propagated sum must give.
  for (int n = 0; n < 2; ++n)
    for (int j = 0; j < kExps; ++j) {
      s.add(n == 0, count[n][j], exponent(n == 1, j) + 64);
      s.add(n == 1, count[n][j], exponent(n == 1, j));
      t.push_back({n == 0, count[n][j], exponent(n == 1, j) + 64});
      t.push_back({n == 1, count[n][j], exponent(n == 1, j)});
    }
  expect_sum("the loop's terms taken away");
  EXPECT_EQ(s.round_to(DType::float64, Rounding::toward_zero), std::bit_cast<std::uint64_t>(std::nextafter(-0x3p120, 0.0)));
}

TEST(ReferenceExactSum, Int32WrapAndSaturate) {
  auto sum = [](std::int64_t v) {
    ExactSum s;
    s.add(v < 0, static_cast<std::uint64_t>(v < 0 ? -v : v), 0);
    return s;
  };
  EXPECT_EQ(sum(123).to_int32(IntegerOverflow::wrap), 123);
  EXPECT_EQ(sum(-123).to_int32(IntegerOverflow::wrap), -123);
  EXPECT_EQ(sum(std::int64_t{1} << 31).to_int32(IntegerOverflow::wrap), std::numeric_limits<std::int32_t>::min());
  EXPECT_EQ(sum(std::int64_t{1} << 31).to_int32(IntegerOverflow::saturate), std::numeric_limits<std::int32_t>::max());
  EXPECT_EQ(sum(-(std::int64_t{1} << 31)).to_int32(IntegerOverflow::saturate), std::numeric_limits<std::int32_t>::min());
  EXPECT_EQ(sum(-(std::int64_t{1} << 31) - 1).to_int32(IntegerOverflow::saturate), std::numeric_limits<std::int32_t>::min());
  EXPECT_EQ(sum(-(std::int64_t{1} << 31) - 1).to_int32(IntegerOverflow::wrap), std::numeric_limits<std::int32_t>::max());
  EXPECT_EQ(sum((std::int64_t{1} << 40) + 5).to_int32(IntegerOverflow::wrap), 5);
  ExactSum frac;
  frac.add(false, 1, -1);
  EXPECT_THROW(frac.to_int32(IntegerOverflow::wrap), std::logic_error);
}

}  // namespace
}  // namespace blockscale::reference
