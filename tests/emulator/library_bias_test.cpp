// SPDX-License-Identifier: Apache-2.0
// emulator/library_fp8.h: torch._scaled_mm's bias (add_bias) and its bf16 / f16 D (round_d), against
// an oracle that shares none of their code: the f32 sum by the CPU's own float addition, narrowed
// by CUDA 13.0's host conversions (__float2bfloat16_rn, __float2half_rn, compiled by g++). The rule
// itself was measured on an H200 (docs/conformance.md, "Bias"): this test checks that the library
// computes that rule, over a million random pairs and the cases where a slip would show (ties of
// the narrow rounding, f32 rounding of the sum, cancellation, overflow, subnormals, signed zeros).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "blockscale/emulator/library_fp8.h"
#include "expect_throw.h"

namespace blockscale::emulator {
namespace {

using blockscale::test::expect_throw_with;

std::uint16_t oracle_code(float x, Format d_format) {
  if (d_format == Format::bfloat16) return std::bit_cast<std::uint16_t>(__float2bfloat16_rn(x));
  return std::bit_cast<std::uint16_t>(__float2half_rn(x));
}

float oracle_value(std::uint16_t code, Format d_format) {
  if (d_format == Format::bfloat16) return __bfloat162float(std::bit_cast<__nv_bfloat16>(code));
  return __half2float(std::bit_cast<__half>(code));
}

// D(i, j) = RN_d(RN_f32(d + bias(j))) by the oracle, as an f32 word.
std::uint32_t oracle(std::uint32_t d, std::uint16_t bias, Format d_format) {
  volatile float sum = std::bit_cast<float>(d) + oracle_value(bias, d_format);  // one IEEE FADD
  return std::bit_cast<std::uint32_t>(oracle_value(oracle_code(sum, d_format), d_format));
}

// A finite code of d_format: random bits, NaN and Inf redrawn.
std::uint16_t finite_code(std::mt19937_64& rng, Format d_format) {
  const std::uint16_t exp_mask = d_format == Format::bfloat16 ? 0x7F80 : 0x7C00;
  for (;;) {
    const auto c = static_cast<std::uint16_t>(rng());
    if ((c & exp_mask) != exp_mask) return c;
  }
}

TEST(LibraryFp8Bias, AddsInF32ThenRoundsOnceToTheDType) {
  for (const Format d_format : {Format::bfloat16, Format::float16}) {
    std::mt19937_64 rng(d_format == Format::bfloat16 ? 7 : 8);
    constexpr std::int64_t n = 64;
    std::vector<std::uint32_t> d, bias(n);
    for (auto& b : bias) b = finite_code(rng, d_format);
    // Random D words of every binade near the bias's (as a GEMM's D and its bias are), then
    // targeted rows: D = -bias (cancellation to +0), D = -bias + one f32 ulp, D a tie of the narrow
    // rounding with a zero bias, D that the f32 add rounds, D near the narrow format's overflow,
    // and zeros of both signs.
    for (int row = 0; row < 16384; ++row) {
      for (std::int64_t j = 0; j < n; ++j) {
        const float b = oracle_value(static_cast<std::uint16_t>(bias[j]), d_format);
        std::uint32_t x = 0;
        switch (row % 8) {
          case 0: x = std::bit_cast<std::uint32_t>(-b); break;
          case 1: x = std::bit_cast<std::uint32_t>(-b) + 1; break;
          case 2: {  // D + bias a tie of the narrow rounding: halfway between two of its values
            const std::uint32_t half = d_format == Format::bfloat16 ? 0x8000u : 0x1000u;
            const std::uint32_t tie = ((std::bit_cast<std::uint32_t>(b) & ~(2 * half - 1)) ^ (static_cast<std::uint32_t>(rng()) & (0x3Fu * 2 * half))) | half;
            x = std::bit_cast<std::uint32_t>(std::bit_cast<float>(tie) - b);
            break;
          }
          case 3: x = static_cast<std::uint32_t>(rng()) & 0x807FFFFFu; x |= 0x3F000000u; break;
          case 4: x = std::bit_cast<std::uint32_t>(d_format == Format::bfloat16 ? 3.38e38f : 65504.0f) + static_cast<std::uint32_t>(rng() % 4096); break;
          case 5: x = (rng() % 2 == 0) ? 0u : 0x80000000u; break;
          default: {
            const float scale = std::ldexp(1.0f, static_cast<int>(rng() % 48) - 24);
            x = std::bit_cast<std::uint32_t>(b * scale + std::ldexp(static_cast<float>(static_cast<std::int32_t>(rng())), -31));
            if ((x & 0x7F800000u) == 0x7F800000u) x = 0;
          }
        }
        d.push_back(x);
      }
    }
    std::vector<std::uint32_t> expected(d.size());
    for (std::size_t i = 0; i < d.size(); ++i) expected[i] = oracle(d[i], static_cast<std::uint16_t>(bias[i % n]), d_format);
    add_bias(d, n, bias, d_format);
    std::size_t mismatches = 0;
    for (std::size_t i = 0; i < d.size(); ++i) {
      if (d[i] != expected[i] && mismatches++ < 5) {
        ADD_FAILURE() << info(d_format).name << " output " << i << ": 0x" << std::hex << d[i] << ", oracle 0x" << expected[i];
      }
    }
    EXPECT_EQ(mismatches, 0u) << info(d_format).name << ": " << d.size() << " outputs";
  }
}

TEST(LibraryFp8Bias, RoundDNarrowsOnceAndLeavesF32Alone) {
  std::mt19937_64 rng(9);
  std::vector<std::uint32_t> words(1 << 20);
  for (auto& w : words) w = static_cast<std::uint32_t>(rng());
  for (const Format d_format : {Format::bfloat16, Format::float16}) {
    std::vector<std::uint32_t> d = words;
    round_d(d, d_format);
    std::size_t mismatches = 0;
    for (std::size_t i = 0; i < d.size(); ++i) {
      const float x = std::bit_cast<float>(words[i]);
      if (x != x) continue;  // NaN payloads: the libraries' NaN bits were not measured
      const std::uint32_t want = std::bit_cast<std::uint32_t>(oracle_value(oracle_code(x, d_format), d_format));
      mismatches += d[i] != want;
    }
    EXPECT_EQ(mismatches, 0u) << info(d_format).name;
  }
  std::vector<std::uint32_t> d = words;
  round_d(d, Format::float32);
  EXPECT_EQ(d, words);
}

TEST(LibraryFp8Bias, RefusesWhatWasNotMeasured) {
  std::vector<std::uint32_t> d(8, 0x3F800000u);
  const std::vector<std::uint32_t> bias{0x3F80, 0x4000, 0x4040, 0x4080};
  expect_throw_with([&] { add_bias(d, 4, bias, Format::float32); }, "takes a bias only with a bfloat16 or float16 D");
  expect_throw_with([&] { add_bias(d, 3, bias, Format::bfloat16); }, "the bias has 4 values; D has n = 3 columns");
  expect_throw_with([&] { add_bias(d, 0, {}, Format::bfloat16); }, "the bias has 0 values; D has n = 0 columns");
  std::vector<std::uint32_t> odd(6, 0);
  expect_throw_with([&] { add_bias(odd, 4, bias, Format::bfloat16); }, "not whole rows of n = 4");
  expect_throw_with([&] { add_bias(d, 4, std::vector<std::uint32_t>{0x3F80, 0x7FC0, 0, 0}, Format::bfloat16); },
                    "bias[1] is NaN or Inf; torch._scaled_mm's bias was measured with finite values only");
  expect_throw_with([&] { add_bias(d, 4, std::vector<std::uint32_t>{0x3F80, 0, 0xFC00, 0}, Format::float16); }, "bias[2] is NaN or Inf");
  expect_throw_with([&] { add_bias(d, 4, std::vector<std::uint32_t>{0x3F80, 0, 0, 0x10000}, Format::float16); }, "bias[3] = 65536 is not a float16 code");
  expect_throw_with([&] { round_d(d, Format::float8_e4m3fn); }, "the libraries write D in float32, bfloat16 or float16");
  // Nothing was written before a refusal.
  EXPECT_EQ(d, std::vector<std::uint32_t>(8, 0x3F800000u));
}

}  // namespace
}  // namespace blockscale::emulator
