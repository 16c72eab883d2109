// SPDX-License-Identifier: Apache-2.0
// Where no term loses bits to the alignment grid (and no intermediate result is rounded), every
// model equals the exact sum rounded the way its output conversion rounds. The exact sums here come
// from blockscale::reference (mma / mma_scaled with Numerics::exact(toward_zero) for RZ-FP32 models
// and exact(nearest_even) for RNE-FP16 models and the b.9 emulation, whose last operation is an RNE
// add): an implementation written independently of the emulator. Whether a case truncates is
// decided by the test's big-integer reference model. RZ-E8M13 rows have no counterpart rounding in
// the reference; cross_check_test covers them against the same exact sums.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "blockscale/emulator.h"
#include "blockscale/formats.h"
#include "blockscale/reference.h"
#include "reference_model.h"

namespace blockscale::emulator {
namespace {

using reference::DType;
using reference::Numerics;
using reference::Tensor;
using Rng = std::mt19937_64;

// A finite code of f with exponent field in [lo, lo + 2] and only the top two mantissa bits.
std::uint32_t narrow_code(Rng& rng, Format f, int lo) {
  const FormatInfo& fi = info(f);
  const int top = (1 << fi.exponent_bits) - 1;
  const int field = std::clamp(lo + static_cast<int>(rng() % 3), 0, top - (fi.specials == Specials::ieee ? 1 : 0));
  const std::uint32_t mant_mask = fi.mantissa_bits >= 2 ? (3u << (fi.mantissa_bits - 2)) : ((1u << fi.mantissa_bits) - 1);
  std::uint32_t code = (static_cast<std::uint32_t>(field) << fi.mantissa_bits) | (static_cast<std::uint32_t>(rng()) & mant_mask);
  if (classify(f, code) == ValueClass::nan) code &= ~1u;
  if (fi.is_signed && (rng() & 1)) code |= sign_mask(f);
  return code;
}

std::vector<std::uint64_t> wide(const std::vector<std::uint32_t>& v) { return {v.begin(), v.end()}; }

TEST(EmulatorExactAgreement, EveryModelEqualsTheRoundedExactSumWithoutTruncation) {
  Rng rng(29);
  std::size_t rows_checked = 0;
  for (const InstructionRow& row : instruction_table()) {
    const FdpaParams& p = row.params;
    if (p.algorithm == Algorithm::fma_chain || p.rounding == OutputRounding::rz_e8m13) continue;
    const bool b9 = p.algorithm == Algorithm::fp8_via_f16;
    const Rounding rounding = (p.rounding == OutputRounding::rz_fp32 && !b9) ? Rounding::toward_zero : Rounding::nearest_even;
    // One operand type per row: the first the reference's mma / mma_scaled tables take.
    Type t = Type::f64;
    for (Type cand : {Type::e4m3, Type::e5m2, Type::f16, Type::bf16, Type::tf32, Type::e2m1, Type::e2m3, Type::e3m2}) {
      if (row.a_types.contains(cand) && row.b_types.contains(cand)) {
        const bool narrow_for_mma = cand == Type::e2m1 || cand == Type::e2m3 || cand == Type::e3m2;
        if (!row.block_scaled && narrow_for_mma) continue;  // the reference's mma has no fp6/fp4 row
        t = cand;
        break;
      }
    }
    if (t == Type::f64) continue;
    const Instruction ins = smallest_instruction(row, t, t);
    const Format f = *format_of(t), acc = accumulator_format(p.rounding);
    const auto K = static_cast<std::size_t>(ins.k);
    const std::size_t blocks = row.block_scaled ? K / static_cast<std::size_t>(row.block) : 0;
    const Format fs = row.block_scaled ? *format_of(row.scale_type) : Format::float8_e8m0fnu;
    std::size_t compared = 0, mismatches = 0;
    for (int iter = 0; iter < 3000; ++iter) {
      const int window = static_cast<int>(rng() % static_cast<std::uint64_t>(1 << info(f).exponent_bits));
      std::vector<std::uint32_t> a(K), b(K), sa(blocks), sb(blocks);
      for (std::size_t k = 0; k < K; ++k) {
        a[k] = (rng() % 4 == 0) ? 0u : narrow_code(rng, f, window);
        b[k] = narrow_code(rng, f, window);
      }
      for (std::size_t s = 0; s < blocks; ++s) {
        sa[s] = fs == Format::float8_e8m0fnu ? 120u + static_cast<std::uint32_t>(rng() % 16) : narrow_code(rng, fs, 5) & 0x7Fu;
        sb[s] = fs == Format::float8_e8m0fnu ? 120u + static_cast<std::uint32_t>(rng() % 16) : narrow_code(rng, fs, 5) & 0x7Fu;
      }
      // C: zero, or near the products' magnitude.
      std::uint32_t c = 0;
      if (rng() % 3 != 0) {
        const double scale = std::fabs(to_double(f, a[0]) * to_double(f, b[0])) + 1e-3;
        const double cv = scale * std::ldexp(1.0, static_cast<int>(rng() % 8) - 3) * ((rng() & 1) ? 1 : -1);
        c = acc == Format::float16 ? convert(Format::float16, cv, presets::ieee())
                                   : std::bit_cast<std::uint32_t>(static_cast<float>(cv));
      }
      std::vector<std::uint32_t> aw = a, bw = b;
      if (f == Format::tfloat32) {
        for (auto& x : aw) x = to_storage(f, x);
        for (auto& x : bw) x = to_storage(f, x);
      }
      testing::ReferenceDot ref;
      ref.a_format = ref.b_format = f;
      ref.a = aw;
      ref.b = bw;
      ref.c = c;
      if (row.block_scaled) {
        ref.scale_format = fs;
        ref.block = row.block;
        ref.scale_a = sa;
        ref.scale_b = sb;
      }
      if (testing::reference_fdpa(p, ref).truncated) continue;
      const std::uint32_t d = dot(ins, aw, bw, c, sa, sb);
      const double dv = to_double(acc, d);
      if (!std::isfinite(dv) || std::fabs(dv) >= (acc == Format::float16 ? 65504.0 : 3.4028234663852886e38)) continue;

      const auto sK = static_cast<std::int64_t>(K), sB = static_cast<std::int64_t>(blocks);
      const Tensor x(reference::dtype_of(f), {1, sK}, wide(a)), y(reference::dtype_of(f), {sK, 1}, wide(b));
      const Tensor accum(reference::dtype_of(acc), {1, 1}, {c});
      Tensor r;
      if (row.block_scaled) {
        const Tensor xs(reference::dtype_of(fs), {1, sB}, wide(sa)), ys(reference::dtype_of(fs), {sB, 1}, wide(sb));
        r = reference::mma_scaled(x, xs, y, ys, accum, {Numerics::exact(rounding), true});
      } else {
        r = reference::mma(x, y, accum, Numerics::exact(rounding));
      }
      ++compared;
      // A negative sum below the output's smallest subnormal: IEEE toward-zero / nearest give -0; a
      // row with UnderflowZero::positive (sm_90a, measured) gives +0.
      const std::uint64_t negative_zero = acc == Format::float16 ? 0x8000u : 0x80000000u;
      if (p.underflow_zero == UnderflowZero::positive && d == 0 && r.code(0) == negative_zero) continue;
      if (r.code(0) != d && ++mismatches <= 3) {
        ADD_FAILURE() << ins.name() << ": model 0x" << std::hex << d << ", exact sum rounded 0x" << r.code(0);
      }
    }
    std::printf("[ exact ] %-42s %5zu cases without truncation compared, %zu mismatches\n", std::string(row.id).c_str(),
                compared, mismatches);
    EXPECT_GT(compared, 100u) << row.id;
    EXPECT_EQ(mismatches, 0u) << row.id;
    ++rows_checked;
  }
  EXPECT_GE(rows_checked, 35u);
}

}  // namespace
}  // namespace blockscale::emulator
