// SPDX-License-Identifier: Apache-2.0
// RCEIL scales against CUDA 13.0: the e8m0 code of the rule must be
//   __nv_cvt_float_to_e8m0(fp32(amax * fp32(1 / max_e)), __NV_SATFINITE, cudaRoundPosInf)
// (the host path of cuda_fp8.h, compiled here by g++; on sm_100 the same conversion is
// cvt.rp.satfinite.ue8m0x2.f32, which TransformerEngine's float_to_e8m0 calls). The quotient is
// formed here with the CPU's fp32 multiply, independently of the library.
//
// Sweep: every fp32 bit pattern with a stride, plus 64 values each side of every power of two and
// of every max_e * 2^k (the binade edges where the rounding turns), for the five element formats.
// BLOCKSCALE_QUANTIZE_FULL: every non-negative finite fp32 amax.
#include <cuda_fp8.h>
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <sstream>
#include <vector>

#include "blockscale/quantize.h"

#ifndef BLOCKSCALE_QUANTIZE_FULL
#define BLOCKSCALE_QUANTIZE_FULL 0
#endif

// The exhaustive build registers its tests under another suite name, so that ctest can tell the two
// binaries' tests apart (and -LE exhaustive leaves only the short ones out).
#if BLOCKSCALE_QUANTIZE_FULL
#define QUANTIZECUDARCEIL_SUITE QuantizeCudaRceilFull
#else
#define QUANTIZECUDARCEIL_SUITE QuantizeCudaRceil
#endif

namespace {

using namespace blockscale;

std::vector<float> amax_sweep() {
  std::vector<float> v;
  const std::uint32_t stride = BLOCKSCALE_QUANTIZE_FULL ? 1u : 997u;
  for (std::uint64_t b = 0; b < 0x7F800000ull; b += stride) v.push_back(std::bit_cast<float>(static_cast<std::uint32_t>(b)));
  if (!BLOCKSCALE_QUANTIZE_FULL) {
    for (int e = -149; e <= 127; ++e) {
      for (double m : {1.0, 448.0, 57344.0, 7.5, 28.0, 6.0}) {
        const double c = std::ldexp(m, e);
        if (c > std::numeric_limits<float>::max() || c < std::ldexp(1.0, -149)) continue;
        float lo = static_cast<float>(c), hi = lo;
        for (int k = 0; k < 64; ++k) {
          v.push_back(lo);
          v.push_back(hi);
          lo = std::nextafter(lo, 0.0f);
          hi = std::nextafter(hi, std::numeric_limits<float>::max());
        }
      }
    }
  }
  return v;
}

TEST(QUANTIZECUDARCEIL_SUITE, ScalesMatchNvCvtFloatToE8m0RoundPosInf) {
  const std::vector<float> amax = amax_sweep();
  for (Format el : {Format::float8_e4m3fn, Format::float8_e5m2, Format::float6_e2m3fn, Format::float6_e3m2fn,
                    Format::float4_e2m1fn}) {
    const BlockFormat f{el, Format::float8_e8m0fnu, 32};
    const float max_e = to_float(el, max_finite_code(el));
    const float inv = 1.0f / max_e;
    constexpr std::size_t kChunk = std::size_t{1} << 20;
    std::vector<std::uint8_t> code(kChunk);
    std::vector<float> mult(kChunk);
    std::uint64_t bad = 0;
    for (std::size_t i0 = 0; i0 < amax.size(); i0 += kChunk) {
      const std::size_t n = std::min(kChunk, amax.size() - i0);
      const std::span<const float> a(amax.data() + i0, n);
      block_scales_for_amax(f, recipes::transformer_engine_mxfp8(el), TensorScale{}, a, std::span(code).first(n),
                            std::span(mult).first(n));
      for (std::size_t i = 0; i < n; ++i) {
        const float q = a[i] * inv;
        const unsigned want = __nv_cvt_float_to_e8m0(q, __NV_SATFINITE, cudaRoundPosInf);
        if (code[i] != want && ++bad <= 5) {
          ADD_FAILURE() << to_string(el) << ": amax " << a[i] << " (0x" << std::hex << std::bit_cast<std::uint32_t>(a[i])
                        << ") rceil 0x" << unsigned{code[i]} << ", CUDA 0x" << want;
        }
      }
    }
    EXPECT_EQ(bad, 0u) << to_string(el) << " over " << amax.size() << " amax values";
  }
}

// The non-finite amax values follow the same conversion under TE's recipe: Inf -> 0xFE
// (SATFINITE), NaN -> 0xFF.
TEST(QUANTIZECUDARCEIL_SUITE, NonFiniteAmaxMatchesSatfinite) {
  const BlockFormat f = block_formats::mxfp8_e4m3;
  const QuantizeOptions te = recipes::transformer_engine_mxfp8(Format::float8_e4m3fn);
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(block_scale_for_amax(f, te, TensorScale{}, inf).code,
            __nv_cvt_float_to_e8m0(inf, __NV_SATFINITE, cudaRoundPosInf));
  EXPECT_EQ(block_scale_for_amax(f, te, TensorScale{}, std::numeric_limits<float>::quiet_NaN()).code,
            __nv_cvt_float_to_e8m0(std::numeric_limits<float>::quiet_NaN(), __NV_SATFINITE, cudaRoundPosInf));
}

}  // namespace
