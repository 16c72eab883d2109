// SPDX-License-Identifier: Apache-2.0
// The production engine (emulator::fdpa / dot) against the independent slow reference
// (reference_model.cpp) on random cases for every row of the instruction table, and the
// no-truncation cross-check: whenever no term loses bits, the model equals the exact sum rounded
// the way the model's output rounds.
//
// Cases per row: kCasesPerRow below (CI), or 10^6 in the exhaustive build
// (BLOCKSCALE_FULL_SWEEP, ctest label "exhaustive"). Every case is drawn by one of five
// generators, in turn: uniform random bit patterns; a narrow exponent window (realistic data, mostly
// without truncation); sparse data with zeros and cancelling pairs; special-heavy (NaN, Inf, -0,
// max, subnormal codes); and huge/tiny scales with C of any magnitude.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "blockscale/emulator.h"
#include "blockscale/formats.h"
#include "reference_model.h"

namespace blockscale::emulator {
namespace {

#if defined(BLOCKSCALE_FULL_SWEEP)
constexpr std::size_t kCasesPerRow = 1000000;
#define CROSS_CHECK_SUITE EmulatorCrossCheckFull
#else
constexpr std::size_t kCasesPerRow = 4000;
#define CROSS_CHECK_SUITE EmulatorCrossCheck
#endif

using Rng = std::mt19937_64;

std::uint32_t uniform(Rng& rng, std::uint32_t n) { return static_cast<std::uint32_t>(rng() % n); }

// A code of format f with its exponent field drawn from [lo, hi] (clamped), random sign and mantissa.
std::uint32_t code_in_window(Rng& rng, Format f, int lo, int hi) {
  const FormatInfo& fi = info(f);
  const int top = (1 << fi.exponent_bits) - 1;
  lo = std::clamp(lo, 0, top);
  hi = std::clamp(hi, lo, top);
  const std::uint32_t field = static_cast<std::uint32_t>(lo + static_cast<int>(uniform(rng, static_cast<std::uint32_t>(hi - lo + 1))));
  std::uint32_t code = (field << fi.mantissa_bits) | uniform(rng, 1u << fi.mantissa_bits);
  if (fi.is_signed && (rng() & 1)) code |= sign_mask(f);
  // Keep it finite: the all-ones exponent of ieee formats and the NaN code of fn formats are avoided.
  if (classify(f, code) == ValueClass::nan || classify(f, code) == ValueClass::infinite) code &= ~(1u << fi.mantissa_bits);
  return code;
}

// A storage word of format f (tf32: an fp32 pattern).
std::uint32_t word_of(Format f, std::uint32_t code, Rng& rng) {
  if (f == Format::tfloat32) return (code << 13) | static_cast<std::uint32_t>(rng() & 0x1FFF);
  return code;
}

std::uint32_t special_code(Rng& rng, Format f) {
  const std::uint32_t sign = info(f).is_signed && (rng() & 1) ? sign_mask(f) : 0u;
  switch (uniform(rng, 6)) {
    case 0: return sign;  // +-0
    case 1: return sign | max_finite_code(f);
    case 2: return sign | 1u;  // smallest subnormal
    case 3: return has_inf(f) ? sign | inf_code(f) : sign | max_finite_code(f);
    case 4: return has_nan(f) ? sign | all_ones_code(f) : sign;
    default: return sign | (static_cast<std::uint32_t>(rng()) & magnitude_mask(f));
  }
}

struct Case {
  std::vector<std::uint32_t> a, b, sa, sb;
  std::uint32_t c = 0;
};

Case draw(Rng& rng, int generator, const FdpaParams& p, Format fa, Format fb, Format facc, Format fs, int block,
          std::size_t K) {
  Case cs;
  const std::size_t blocks = block > 0 ? (K + static_cast<std::size_t>(block) - 1) / static_cast<std::size_t>(block) : 0;
  const bool f16_acc = facc == Format::float16;
  const std::uint32_t acc_codes = f16_acc ? 0x10000u : 0u;
  const auto acc_any = [&] { return f16_acc ? uniform(rng, acc_codes) : static_cast<std::uint32_t>(rng()); };
  const auto scale_any = [&] { return uniform(rng, 256); };
  const auto scale_near_one = [&] {
    if (fs == Format::float8_e8m0fnu) return 127u - 3u + uniform(rng, 7);
    return code_in_window(rng, Format::float8_ue4m3, 4, 10) & 0x7Fu;
  };
  switch (generator) {
    case 0:  // uniform bit patterns everywhere
      for (std::size_t k = 0; k < K; ++k) {
        cs.a.push_back(word_of(fa, (static_cast<std::uint32_t>(rng()) & code_mask(fa)), rng));
        cs.b.push_back(word_of(fb, (static_cast<std::uint32_t>(rng()) & code_mask(fb)), rng));
      }
      for (std::size_t t = 0; t < blocks; ++t) {
        cs.sa.push_back(scale_any());
        cs.sb.push_back(scale_any());
      }
      cs.c = acc_any();
      break;
    case 1: {  // a narrow exponent window, C near the products or zero
      const FormatInfo& ia = info(fa);
      const FormatInfo& ib = info(fb);
      const int wa = static_cast<int>(uniform(rng, static_cast<std::uint32_t>((1 << ia.exponent_bits))));
      const int wb = static_cast<int>(uniform(rng, static_cast<std::uint32_t>((1 << ib.exponent_bits))));
      const int spread = static_cast<int>(uniform(rng, 4));
      // Half of the cases keep only the top 2 mantissa bits, so that chained steps (and f16
      // intermediates) are often exact too.
      const std::uint32_t keep_a = (rng() & 1) ? ~0u : ~((1u << std::max(0, ia.mantissa_bits - 2)) - 1);
      const std::uint32_t keep_b = (rng() & 1) ? ~0u : ~((1u << std::max(0, ib.mantissa_bits - 2)) - 1);
      for (std::size_t k = 0; k < K; ++k) {
        cs.a.push_back(word_of(fa, code_in_window(rng, fa, wa, wa + spread) & keep_a, rng));
        cs.b.push_back(word_of(fb, code_in_window(rng, fb, wb, wb + spread) & keep_b, rng));
      }
      for (std::size_t t = 0; t < blocks; ++t) {
        cs.sa.push_back(scale_near_one());
        cs.sb.push_back(scale_near_one());
      }
      // C's exponent near the products' (value ~ K * a * b) or zero.
      const double av = std::abs(to_double(fa, from_storage(fa, cs.a[0]))), bv = std::abs(to_double(fb, from_storage(fb, cs.b[0])));
      const double target = (av * bv + 1e-30) * (1 + uniform(rng, static_cast<std::uint32_t>(K)));
      if (uniform(rng, 4) == 0) {
        cs.c = 0;
      } else {
        const float c = static_cast<float>(target * std::ldexp(1.0, static_cast<int>(uniform(rng, 9)) - 4) * ((rng() & 1) ? -1 : 1));
        cs.c = f16_acc ? convert(Format::float16, c, presets::ieee()) : std::bit_cast<std::uint32_t>(c);
      }
      break;
    }
    case 2: {  // sparse: mostly zeros, with cancelling pairs
      for (std::size_t k = 0; k < K; ++k) {
        const bool zero = uniform(rng, 3) != 0;
        cs.a.push_back(word_of(fa, zero ? 0u : code_in_window(rng, fa, 0, 99), rng));
        cs.b.push_back(word_of(fb, zero ? 0u : code_in_window(rng, fb, 0, 99), rng));
      }
      for (std::size_t k = 0; k + 1 < K; k += 2) {
        if (uniform(rng, 2) == 0) continue;
        cs.a[k + 1] = word_of(fa, from_storage(fa, cs.a[k]) ^ sign_mask(fa), rng);
        cs.b[k + 1] = cs.b[k];
      }
      for (std::size_t t = 0; t < blocks; ++t) {
        cs.sa.push_back(uniform(rng, 2) ? scale_near_one() : scale_any());
        cs.sb.push_back(uniform(rng, 2) ? scale_near_one() : scale_any());
      }
      cs.c = uniform(rng, 3) == 0 ? (f16_acc ? 0x8000u : 0x80000000u) * uniform(rng, 2) : acc_any();
      break;
    }
    case 3: {  // special-heavy
      for (std::size_t k = 0; k < K; ++k) {
        cs.a.push_back(word_of(fa, uniform(rng, 4) == 0 ? special_code(rng, fa) : (static_cast<std::uint32_t>(rng()) & code_mask(fa)), rng));
        cs.b.push_back(word_of(fb, uniform(rng, 4) == 0 ? special_code(rng, fb) : (static_cast<std::uint32_t>(rng()) & code_mask(fb)), rng));
      }
      for (std::size_t t = 0; t < blocks; ++t) {
        cs.sa.push_back(uniform(rng, 8) == 0 ? 0xFFu : scale_near_one());
        cs.sb.push_back(uniform(rng, 8) == 0 ? (fs == Format::float8_ue4m3 ? 0x00u : 0xFFu) : scale_near_one());
      }
      cs.c = special_code(rng, facc);
      break;
    }
    default: {  // extreme scales and C magnitudes, finite operands
      for (std::size_t k = 0; k < K; ++k) {
        cs.a.push_back(word_of(fa, code_in_window(rng, fa, 0, 99), rng));
        cs.b.push_back(word_of(fb, code_in_window(rng, fb, 0, 99), rng));
      }
      for (std::size_t t = 0; t < blocks; ++t) {
        const bool e8 = fs == Format::float8_e8m0fnu;
        cs.sa.push_back(e8 ? (uniform(rng, 2) ? uniform(rng, 8) : 247u + uniform(rng, 8)) : uniform(rng, 0x7F));
        cs.sb.push_back(e8 ? (uniform(rng, 2) ? uniform(rng, 8) : 247u + uniform(rng, 8)) : uniform(rng, 0x7F));
      }
      const Format cf = facc;
      cs.c = code_in_window(rng, cf, 0, 255);
      break;
    }
  }
  (void)p;
  return cs;
}

struct Counts {
  std::size_t cases = 0, mismatches = 0, exact_cases = 0, exact_mismatches = 0;
};

Counts sweep(const FdpaParams& p, Format fa, Format fb, Format fs, int block, std::size_t K, std::size_t n,
             std::uint64_t seed) {
  Rng rng(seed);
  const Format facc = accumulator_format(p.rounding);
  Counts counts;
  for (std::size_t i = 0; i < n; ++i) {
    const Case cs = draw(rng, static_cast<int>(i % 5), p, fa, fb, facc, fs, block, K);
    DotOperands ops;
    ops.a_format = fa;
    ops.b_format = fb;
    ops.a = cs.a;
    ops.b = cs.b;
    ops.c = cs.c;
    testing::ReferenceDot ref;
    ref.a_format = fa;
    ref.b_format = fb;
    ref.a = cs.a;
    ref.b = cs.b;
    ref.c = cs.c;
    if (block > 0) {
      ops.scale_format = ref.scale_format = fs;
      ops.block = ref.block = block;
      ops.scale_a = ref.scale_a = cs.sa;
      ops.scale_b = ref.scale_b = cs.sb;
    }
    const std::uint32_t d = fdpa(p, ops);
    const testing::ReferenceResult r = testing::reference_fdpa(p, ref);
    ++counts.cases;
    if (d != r.d) {
      if (++counts.mismatches <= 3) {
        std::ostringstream msg;
        msg << "case " << i << " generator " << i % 5 << ": a =";
        for (auto x : cs.a) msg << ' ' << x;
        msg << " b =";
        for (auto x : cs.b) msg << ' ' << x;
        msg << " sa =";
        for (auto x : cs.sa) msg << ' ' << x;
        msg << " sb =";
        for (auto x : cs.sb) msg << ' ' << x;
        ADD_FAILURE() << msg.str() << " c = " << cs.c << ": engine " << d << ", reference " << r.d;
      }
    }
    const double dv = to_double(facc, d);
    if (!r.truncated && std::isfinite(dv)) {
      ++counts.exact_cases;
      if (d != r.exact_rounded && ++counts.exact_mismatches <= 3) {
        ADD_FAILURE() << "no-truncation case " << i << ": model " << d << " but exact sum rounds to " << r.exact_rounded;
      }
    }
  }
  return counts;
}

// One test per row: all its operand-type pairs in turn, at its largest K and at twice that (a chain
// of two instructions' worth of steps).
class CROSS_CHECK_SUITE : public ::testing::TestWithParam<std::size_t> {};

TEST_P(CROSS_CHECK_SUITE, EngineEqualsReference) {
  const InstructionRow& row = instruction_table()[GetParam()];
  std::vector<std::pair<Type, Type>> pairs;
  for (int a = 0; a < kTypeCount; ++a) {
    for (int b = 0; b < kTypeCount; ++b) {
      if (row.a_types.contains(static_cast<Type>(a)) && row.b_types.contains(static_cast<Type>(b))) {
        pairs.emplace_back(static_cast<Type>(a), static_cast<Type>(b));
      }
    }
  }
  int kmax = 0;
  for (const ShapeRule& s : row.shapes) kmax = std::max(kmax, s.k);
  std::uint64_t seed = 1000 * GetParam() + 1;
  Counts total;
  for (std::size_t pi = 0; pi < pairs.size(); ++pi) {
    const Format fa = *format_of(pairs[pi].first), fb = *format_of(pairs[pi].second);
    const Format fs = row.block_scaled ? *format_of(row.scale_type) : Format::float8_e8m0fnu;
    const std::size_t n = (kCasesPerRow + pairs.size() - 1) / pairs.size();
    for (const std::size_t K : {static_cast<std::size_t>(kmax), static_cast<std::size_t>(2 * kmax)}) {
      const Counts c = sweep(row.params, fa, fb, fs, row.block_scaled ? row.block : 0, K,
                             K == static_cast<std::size_t>(kmax) ? n : n / 8 + 1, seed++);
      total.cases += c.cases;
      total.mismatches += c.mismatches;
      total.exact_cases += c.exact_cases;
      total.exact_mismatches += c.exact_mismatches;
    }
  }
  std::printf("[ cross-check ] %-42s %8zu cases, %zu mismatches; %7zu without truncation, %zu mismatches\n",
              std::string(row.id).c_str(), total.cases, total.mismatches, total.exact_cases, total.exact_mismatches);
  std::fflush(stdout);
  EXPECT_EQ(total.mismatches, 0u) << row.id;
  EXPECT_EQ(total.exact_mismatches, 0u) << row.id;
  EXPECT_GT(total.exact_cases, total.cases / 50) << row.id << ": too few cases without truncation";
}

std::vector<std::size_t> sweep_rows() {
  std::vector<std::size_t> rows;
  for (std::size_t i = 0; i < instruction_table().size(); ++i) {
    if (instruction_table()[i].params.algorithm != Algorithm::fma_chain) rows.push_back(i);
  }
  return rows;
}

INSTANTIATE_TEST_SUITE_P(Rows, CROSS_CHECK_SUITE, ::testing::ValuesIn(sweep_rows()),
                         [](const ::testing::TestParamInfo<std::size_t>& p) {
                           std::string name(instruction_table()[p.param].id);
                           for (char& ch : name) {
                             if (ch == '.') ch = '_';
                           }
                           return name;
                         });

}  // namespace
}  // namespace blockscale::emulator
