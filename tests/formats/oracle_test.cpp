// SPDX-License-Identifier: Apache-2.0
// The conversion engine against an independent slow oracle, for what the CUDA headers cannot
// check: the directed modes, nearest-away, stochastic rounding, every overflow rule, and double
// inputs, on every format.
//
// The oracle knows nothing of the engine: it builds the sorted list of each format's finite values
// from the specification formula (spec.h), finds the neighbours lo <= |x| <= hi by binary search,
// and decides with exact comparisons (the midpoint of two neighbours is exact in double; x - lo is
// exact by Sterbenz' lemma). Inputs are stratified: every value of the format, every midpoint, one
// ulp either side of each, and random points in random intervals, log-uniform magnitudes across
// and beyond each format's range, and the overflow boundary.
//
// CI runs 10^6 inputs per (format, rounding mode, input type); the `exhaustive` build runs
// 5 * 10^7 per input type, i.e. 10^8 per (format, rounding mode). The inputs come in chunks with
// their own seeds, checked in parallel (OpenMP); the counts do not depend on the thread count.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <map>
#include <random>
#include <sstream>

#include "blockscale/formats.h"
#include "spec.h"

namespace blockscale {
namespace {

#ifndef BLOCKSCALE_ORACLE_FULL
#define BLOCKSCALE_ORACLE_FULL 0
#endif
constexpr std::uint64_t kCasesPerCombination = BLOCKSCALE_ORACLE_FULL ? 50'000'000 : 1'000'000;
constexpr std::uint64_t kChunk = 1 << 16;
constexpr std::int64_t kChunks = static_cast<std::int64_t>((kCasesPerCombination + kChunk - 1) / kChunk);

class Oracle {
 public:
  explicit Oracle(const test::Spec& s) : s_(s) {
    const std::uint32_t mag_codes = 1u << (s.exp_bits + s.man_bits);
    for (std::uint32_t c = 0; c < mag_codes; ++c) {
      bool nan, inf;
      const double v = test::spec_value(s, c, &nan, &inf);
      if (!nan && !inf) values_.push_back({v, c});
    }
    std::sort(values_.begin(), values_.end());
    sign_bit_ = s.sign_bits ? (1u << (s.exp_bits + s.man_bits)) : 0u;
    max_ = values_.back().first;
    max_code_ = values_.back().second;
    // The next grid point above max with an unbounded exponent: max + its spacing.
    spacing_max_ = max_ - values_[values_.size() - 2].first;
    if (s.exp_only) spacing_max_ = max_;  // e8m0: 2^127 -> 2^128
    beyond_ = max_ + spacing_max_;
    const std::uint32_t all_exp = (1u << s.exp_bits) - 1;
    inf_like_ = s.ieee_specials ? (all_exp << s.man_bits)
                                : (s.nan_all_ones ? ((1u << (s.exp_bits + s.man_bits)) - 1) : max_code_);
  }

  // The expected code of finite nonzero x under (rounding, overflow); r = random word.
  std::uint32_t expect(double x, Rounding rounding, Overflow overflow, int sr_bits, std::uint32_t r) const {
    const bool neg = std::signbit(x) && s_.sign_bits;
    const double a = std::fabs(x);
    const std::uint32_t sign = neg ? sign_bit_ : 0u;
    const auto overflowed = [&]() -> std::uint32_t {
      switch (overflow) {
        case Overflow::saturate:
        case Overflow::saturate_finite: return max_code_ | sign;
        case Overflow::infinity: return inf_like_ | sign;
        case Overflow::ieee:
          if (rounding == Rounding::toward_zero) return max_code_ | sign;
          if (rounding == Rounding::upward) return (neg ? max_code_ : inf_like_) | sign;
          if (rounding == Rounding::downward) return (neg ? inf_like_ : max_code_) | sign;
          return inf_like_ | sign;
      }
      return 0;
    };
    if (a >= beyond_) return overflowed();
    // Neighbours. Below the smallest value of a format without zero (e8m0) lo is a virtual 0.
    double lo, hi;
    std::uint32_t lo_code = 0, hi_code = 0;
    bool hi_beyond = false, lo_virtual_zero = false;
    auto it = std::upper_bound(values_.begin(), values_.end(), std::make_pair(a, ~0u));
    if (it == values_.begin()) {
      lo = 0;
      lo_virtual_zero = true;
    } else {
      lo = std::prev(it)->first;
      lo_code = std::prev(it)->second;
    }
    if (a == lo) return lo_code | sign;
    if (it == values_.end()) {
      hi = beyond_;
      hi_beyond = true;
    } else {
      hi = it->first;
      hi_code = it->second;
    }
    bool up = false;
    const double mid = (lo + hi) / 2;  // exact: neighbours differ in the last of <= 24 bits
    const bool pos = !neg;
    switch (rounding) {
      case Rounding::toward_zero: up = false; break;
      case Rounding::upward: up = pos; break;
      case Rounding::downward: up = !pos; break;
      case Rounding::nearest_away: up = a >= mid; break;
      case Rounding::nearest_even: {
        if (a != mid) {
          up = a > mid;
        } else {
          // "Even" is the grid point whose integer significand is even. For e8m0 (no mantissa bits)
          // the lower neighbour is 1 * 2^e and the upper 2 * 2^e: ties go up.
          const bool hi_even = s_.man_bits == 0 ? true : (hi_beyond ? (max_code_ & 1) == 1 : (hi_code & 1) == 0);
          up = lo_virtual_zero ? false : hi_even;
          if (lo == 0 && !lo_virtual_zero) up = false;  // tie between 0 and the smallest subnormal
        }
        break;
      }
      case Rounding::stochastic: {
        const int q = std::ilogb(hi - lo);  // the spacing is a power of two
        const double scaled = std::ldexp(a - lo, sr_bits - q);
        const std::uint64_t top = static_cast<std::uint64_t>(std::floor(scaled));
        const std::uint64_t rr = sr_bits == 32 ? r : (r & ((std::uint64_t{1} << sr_bits) - 1));
        up = top + rr >= (std::uint64_t{1} << sr_bits);
        break;
      }
    }
    if (up) return hi_beyond ? overflowed() : (hi_code | sign);
    // Rounded down to the virtual zero: formats without zero give their smallest code.
    return lo_virtual_zero ? 0u : (lo_code | sign);
  }

  const std::vector<std::pair<double, std::uint32_t>>& values() const { return values_; }
  double max() const { return max_; }
  double beyond() const { return beyond_; }

 private:
  test::Spec s_;
  std::vector<std::pair<double, std::uint32_t>> values_;
  std::uint32_t sign_bit_ = 0, max_code_ = 0, inf_like_ = 0;
  double max_ = 0, spacing_max_ = 0, beyond_ = 0;
};

// Stratified inputs for one format: a deterministic stream.
class Inputs {
 public:
  Inputs(const Oracle& o, std::uint64_t seed) : o_(o), rng_(seed) {}
  double next() {
    const auto& v = o_.values();
    const std::uint64_t kind = rng_() % 8;
    const std::size_t i = rng_() % v.size();
    const double lo = v[i].first;
    const double hi = i + 1 < v.size() ? v[i + 1].first : o_.beyond();
    double x;
    switch (kind) {
      case 0: x = lo; break;                                             // a value
      case 1: x = (lo + hi) / 2; break;                                  // a midpoint (a tie)
      case 2: x = std::nextafter((lo + hi) / 2, rng_() & 1 ? INFINITY : 0.0); break;  // next to a tie
      case 3: x = lo + (hi - lo) * static_cast<double>(rng_() >> 11) * 0x1p-53; break;  // inside an interval
      case 4: x = lo + (hi - lo) * static_cast<double>(rng_() % 256) / 256; break;       // short fractions
      case 5: {  // log-uniform over and beyond the range
        const double lmin = std::log2(v[v[0].first == 0 ? 1 : 0].first) - 4;
        const double lmax = std::log2(o_.beyond()) + 3;
        x = std::exp2(lmin + (lmax - lmin) * static_cast<double>(rng_() >> 11) * 0x1p-53);
        break;
      }
      case 6: x = o_.max() + (o_.beyond() - o_.max()) * static_cast<double>(rng_() % 1025) / 512; break;  // overflow edge
      default: x = std::nextafter(lo, rng_() & 1 ? INFINITY : 0.0); break;
    }
    if (x == 0) x = v.back().first;  // zero is tested with the special values, not here
    return (rng_() & 1) ? -x : x;
  }
  std::uint32_t random_word() { return static_cast<std::uint32_t>(rng_()); }

 private:
  const Oracle& o_;
  std::mt19937_64 rng_;
};

struct Combination {
  const test::Spec* spec;
  Rounding rounding;
};

std::vector<Combination> combinations() {
  std::vector<Combination> v;
  for (const test::Spec& s : test::kSpecs) {
    for (Rounding r : {Rounding::nearest_even, Rounding::toward_zero, Rounding::upward, Rounding::downward,
                       Rounding::nearest_away, Rounding::stochastic}) {
      v.push_back({&s, r});
    }
  }
  return v;
}

class SlowOracle : public ::testing::TestWithParam<Combination> {};

ConvertOptions options_for(const test::Spec& s, Rounding r, Overflow ov, int sr_bits) {
  ConvertOptions o = presets::ieee(r);
  o.overflow = ov;
  o.stochastic_bits = sr_bits;
  if (!s.sign_bits) o.negative = NegativeRule::magnitude;
  return o;
}

constexpr Overflow kOverflows[] = {Overflow::saturate, Overflow::saturate_finite, Overflow::infinity, Overflow::ieee};

TEST_P(SlowOracle, DoubleInputs) {
  const Combination c = GetParam();
  const test::Spec& s = *c.spec;
  const Oracle oracle(s);
  std::vector<ConvertOptions> opts;
  const int sr_bits[] = {32, 8, 5, 1};
  for (int k = 0; k < 4; ++k) opts.push_back(options_for(s, c.rounding, kOverflows[k], sr_bits[k]));
  std::uint64_t bad = 0;
  std::vector<std::string> examples;
#pragma omp parallel for schedule(dynamic) reduction(+ : bad)
  for (std::int64_t chunk = 0; chunk < kChunks; ++chunk) {
    Inputs in(oracle, (0x5EED0000ull + static_cast<unsigned>(s.f) * 16 + static_cast<unsigned>(c.rounding)) * 1000003 + chunk);
    for (std::uint64_t i = 0; i < kChunk; ++i) {
      const double x = in.next();
      const std::uint32_t r = in.random_word();
      const int k = static_cast<int>(i % 4);
      const std::uint32_t got = convert(s.f, x, opts[k], r);
      const std::uint32_t want = oracle.expect(s.sign_bits ? x : std::fabs(x), c.rounding, kOverflows[k], sr_bits[k], r);
      if (got != want) {
        ++bad;
#pragma omp critical
        if (examples.size() < 8) {
          std::ostringstream m;
          m << to_string(s.f) << " " << to_string(c.rounding) << " " << to_string(kOverflows[k]) << " x=" << std::hexfloat << x
            << " r=" << std::dec << r << ": ours 0x" << std::hex << got << " oracle 0x" << want;
          examples.push_back(m.str());
        }
      }
    }
  }
  for (const auto& e : examples) ADD_FAILURE() << e;
  EXPECT_EQ(bad, 0u) << " of " << kChunks * kChunk;
}

TEST_P(SlowOracle, FloatInputsThroughTheBulkPath) {
  const Combination c = GetParam();
  const test::Spec& s = *c.spec;
  const Oracle oracle(s);
  const int sr_bits[] = {32, 8, 5, 1};
  std::uint64_t bad = 0;
  std::vector<std::string> examples;
#pragma omp parallel for schedule(dynamic) reduction(+ : bad)
  for (std::int64_t chunk = 0; chunk < kChunks; ++chunk) {
    Inputs in(oracle, (0xF10A0000ull + static_cast<unsigned>(s.f) * 16 + static_cast<unsigned>(c.rounding)) * 1000003 + chunk);
    const int k = static_cast<int>(chunk % 4);
    const ConvertOptions o = options_for(s, c.rounding, kOverflows[k], sr_bits[k]);
    std::vector<float> xs(kChunk);
    std::vector<std::uint32_t> rs(kChunk);
    for (std::size_t i = 0; i < kChunk; ++i) {
      xs[i] = static_cast<float>(in.next());  // the float nearest to the stratified point
      if (std::isinf(xs[i])) xs[i] = std::copysign(0x1.FFFFFEp127f, xs[i]);
      rs[i] = in.random_word();
    }
    const std::span<const std::uint32_t> rbits = c.rounding == Rounding::stochastic ? std::span<const std::uint32_t>(rs)
                                                                                     : std::span<const std::uint32_t>();
    const auto check = [&](auto word) {
      using W = decltype(word);
      std::vector<W> out(kChunk);
      convert(xs, s.f, std::span<W>(out), o, rbits);
      for (std::size_t i = 0; i < kChunk; ++i) {
        const double x = s.sign_bits ? static_cast<double>(xs[i]) : std::fabs(static_cast<double>(xs[i]));
        const std::uint32_t want = to_storage(s.f, x == 0 ? (std::signbit(x) ? (1u << (s.exp_bits + s.man_bits)) : 0u)
                                                          : oracle.expect(x, c.rounding, kOverflows[k], sr_bits[k], rs[i]));
        if (out[i] != want) {
          ++bad;
#pragma omp critical
          if (examples.size() < 8) {
            std::ostringstream m;
            m << to_string(s.f) << " " << to_string(c.rounding) << " " << to_string(kOverflows[k]) << " x=" << std::hexfloat
              << xs[i] << " r=" << std::dec << rs[i] << ": ours 0x" << std::hex << +out[i] << " oracle 0x" << want;
            examples.push_back(m.str());
          }
        }
      }
    };
    if (info(s.f).storage_bits == 8) {
      check(std::uint8_t{});
    } else if (info(s.f).storage_bits == 16) {
      check(std::uint16_t{});
    } else {
      check(std::uint32_t{});
    }
  }
  for (const auto& e : examples) ADD_FAILURE() << e;
  EXPECT_EQ(bad, 0u) << " of " << kChunks * kChunk;
}

std::string name_of(const ::testing::TestParamInfo<Combination>& p) {
  return to_string(p.param.spec->f) + "_" + to_string(p.param.rounding);
}

INSTANTIATE_TEST_SUITE_P(AllFormats, SlowOracle, ::testing::ValuesIn(combinations()), name_of);

#if !BLOCKSCALE_ORACLE_FULL
// Special inputs, with the expected codes written out from each rule's definition.
TEST(SpecialValues, InfinitiesZerosAndNaNs) {
  for (const test::Spec& s : test::kSpecs) {
    const Format f = s.f;
    for (Overflow ov : kOverflows) {
      ConvertOptions o = presets::ieee();
      o.overflow = ov;
      const std::uint32_t inf_like = has_inf(f) ? inf_code(f) : (has_nan(f) ? all_ones_code(f) : max_finite_code(f));
      const std::uint32_t want_inf = ov == Overflow::saturate ? max_finite_code(f) : inf_like;
      EXPECT_EQ(convert(f, INFINITY, o), want_inf) << to_string(f) << " " << to_string(ov);
      EXPECT_EQ(convert(f, static_cast<double>(INFINITY), o), want_inf) << to_string(f);
      if (s.sign_bits) {
        EXPECT_EQ(convert(f, -INFINITY, o), want_inf | sign_mask(f)) << to_string(f);
        EXPECT_EQ(convert(f, -0.0f, o), sign_mask(f)) << to_string(f);
        EXPECT_EQ(convert(f, -0.0, o), sign_mask(f)) << to_string(f);
      }
    }
    if (s.sign_bits || !s.exp_only) {
      EXPECT_EQ(convert(f, 0.0f), 0u) << to_string(f);
    }
    // NaN: the default rule per format class, with the sign XORed in where the rule says so.
    const NanRule d = default_nan_rule(f);
    EXPECT_EQ(convert(f, NAN), d.code) << to_string(f);
    EXPECT_TRUE(!has_nan(f) || is_nan(f, convert(f, -NAN))) << to_string(f);
  }
  // IEEE payload narrowing: f32 NaN 0x7FA00000 (payload 0x200000) -> f16 quiet NaN keeping the
  // leading payload bits: 0x7E00 | (0x200000 >> 13) = 0x7F00.
  EXPECT_EQ(convert(Format::float16, std::bit_cast<float>(0x7FA00000u)), 0x7F00u);
  EXPECT_EQ(convert(Format::float16, std::bit_cast<double>(0xFFF4000000000000ull)), 0xFF00u);
  // e8m0 zero and negative rules.
  ConvertOptions e8 = presets::ieee();
  e8.zero = ZeroRule::min_code;
  EXPECT_EQ(convert(Format::float8_e8m0fnu, 0.0f, e8), 0x00u);
  e8.zero = ZeroRule::nan;
  EXPECT_EQ(convert(Format::float8_e8m0fnu, 0.0f, e8), 0xFFu);
  e8.negative = NegativeRule::magnitude;
  EXPECT_EQ(convert(Format::float8_e8m0fnu, -4.0f, e8), 0x81u);
  e8.negative = NegativeRule::nan;
  EXPECT_EQ(convert(Format::float8_e8m0fnu, -4.0f, e8), 0xFFu);
  e8.negative = NegativeRule::min_code;
  EXPECT_EQ(convert(Format::float8_e8m0fnu, -4.0f, e8), 0x00u);
  EXPECT_EQ(convert(Format::float8_ue4m3, -4.0f, e8), 0x00u);
}

// Every tie and boundary of every format, against the oracle (not sampled).
TEST(Boundaries, EveryTieAndBoundary) {
  for (const test::Spec& s : test::kSpecs) {
    const Oracle oracle(s);
    const auto& v = oracle.values();
    std::vector<double> xs;
    for (std::size_t i = 0; i + 1 <= v.size(); ++i) {
      const double lo = v[i].first;
      const double hi = i + 1 < v.size() ? v[i + 1].first : oracle.beyond();
      const double mid = (lo + hi) / 2;
      for (double x : {mid, std::nextafter(mid, 0.0), std::nextafter(mid, INFINITY), hi, std::nextafter(lo, INFINITY)}) {
        if (x > 0 && std::isfinite(x)) xs.push_back(x);
      }
    }
    xs.push_back(oracle.beyond());
    xs.push_back(std::nextafter(oracle.beyond(), 0.0));
    xs.push_back(v[0].first / 2);
    xs.push_back(v[0].first / 4);
    for (Rounding r : {Rounding::nearest_even, Rounding::toward_zero, Rounding::upward, Rounding::downward, Rounding::nearest_away}) {
      for (Overflow ov : kOverflows) {
        const ConvertOptions o = options_for(s, r, ov, 32);
        for (double x : xs) {
          for (double sx : {x, -x}) {
            if (!s.sign_bits && sx < 0) continue;
            ASSERT_EQ(convert(s.f, sx, o), oracle.expect(sx, r, ov, 32, 0))
                << to_string(s.f) << " " << to_string(r) << " " << to_string(ov) << " x=" << std::hexfloat << sx;
          }
        }
      }
    }
  }
}
#endif

}  // namespace
}  // namespace blockscale
