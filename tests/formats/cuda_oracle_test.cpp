// SPDX-License-Identifier: Apache-2.0
// blockscale's `cuda` preset against the CUDA 13.0 host conversion functions (cuda_fp8.h,
// cuda_fp6.h, cuda_fp4.h, cuda_fp16.h, cuda_bf16.h compiled by g++): an independent oracle.
//   * all 2^32 fp32 inputs for every conversion and every rounding / saturation mode CUDA accepts
//     (this executable runs the modes selected by BLOCKSCALE_SWEEP_SET; see CMakeLists.txt);
//   * all 2^16 fp16 and bf16 inputs for every conversion from __half_raw / __nv_bfloat16_raw;
//   * stratified random doubles and edge cases for the double-input functions;
//   * the decode of every code.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp4.h>
#include <cuda_fp6.h>
#include <cuda_fp8.h>
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <random>
#include <vector>

#include "sweep.h"

namespace blockscale {
namespace {

struct CudaConversion {
  std::string name;
  Format dst;
  ConvertOptions options;  // presets::cuda(dst, float32, false, rounding, overflow)
  Rounding rounding;       // the preset's arguments, to build the other sources' options
  Overflow overflow;
  // The CUDA function on a float input, returning the storage word.
  std::function<std::uint32_t(float)> from_float;
  // The same conversion from double, fp16 and bf16 (empty when CUDA has no such function).
  std::function<std::uint32_t(double)> from_double;
  std::function<std::uint32_t(__half_raw)> from_half;
  std::function<std::uint32_t(__nv_bfloat16_raw)> from_bf16;
  bool default_mode;  // run in CI's sweep set
};

std::uint32_t half_bits(__half h) {
  std::uint16_t b;
  std::memcpy(&b, &h, 2);
  return b;
}
std::uint32_t bf16_bits(__nv_bfloat16 h) {
  std::uint16_t b;
  std::memcpy(&b, &h, 2);
  return b;
}

std::vector<CudaConversion> conversions() {
  std::vector<CudaConversion> v;
  const auto fp8 = [&](Format f, __nv_fp8_interpretation_t interp, __nv_saturation_t sat) {
    const bool s = sat == __NV_SATFINITE;
    const Overflow ov = s ? Overflow::saturate : Overflow::infinity;
    v.push_back({to_string(f) + (s ? "_satfinite" : "_nosat"), f,
                 presets::cuda(f, Format::float32, false, Rounding::nearest_even, ov), Rounding::nearest_even, ov,
                 [=](float x) { return static_cast<std::uint32_t>(__nv_cvt_float_to_fp8(x, sat, interp)); },
                 [=](double x) { return static_cast<std::uint32_t>(__nv_cvt_double_to_fp8(x, sat, interp)); },
                 [=](__half_raw x) { return static_cast<std::uint32_t>(__nv_cvt_halfraw_to_fp8(x, sat, interp)); },
                 [=](__nv_bfloat16_raw x) { return static_cast<std::uint32_t>(__nv_cvt_bfloat16raw_to_fp8(x, sat, interp)); },
                 s});
  };
  fp8(Format::float8_e4m3fn, __NV_E4M3, __NV_SATFINITE);
  fp8(Format::float8_e4m3fn, __NV_E4M3, __NV_NOSAT);
  fp8(Format::float8_e5m2, __NV_E5M2, __NV_SATFINITE);
  fp8(Format::float8_e5m2, __NV_E5M2, __NV_NOSAT);
  const auto fp6 = [&](Format f, __nv_fp6_interpretation_t interp, cudaRoundMode r) {
    const bool rn = r == cudaRoundNearest;
    const Rounding rr = rn ? Rounding::nearest_even : Rounding::toward_zero;
    v.push_back({to_string(f) + (rn ? "_rn" : "_rz"), f, presets::cuda(f, Format::float32, false, rr), rr, Overflow::saturate,
                 [=](float x) { return static_cast<std::uint32_t>(__nv_cvt_float_to_fp6(x, interp, r)); },
                 [=](double x) { return static_cast<std::uint32_t>(__nv_cvt_double_to_fp6(x, interp, r)); },
                 [=](__half_raw x) { return static_cast<std::uint32_t>(__nv_cvt_halfraw_to_fp6(x, interp, r)); },
                 [=](__nv_bfloat16_raw x) { return static_cast<std::uint32_t>(__nv_cvt_bfloat16raw_to_fp6(x, interp, r)); },
                 rn});
  };
  fp6(Format::float6_e2m3fn, __NV_E2M3, cudaRoundNearest);
  fp6(Format::float6_e2m3fn, __NV_E2M3, cudaRoundZero);
  fp6(Format::float6_e3m2fn, __NV_E3M2, cudaRoundNearest);
  fp6(Format::float6_e3m2fn, __NV_E3M2, cudaRoundZero);
  for (cudaRoundMode r : {cudaRoundNearest, cudaRoundZero}) {
    const bool rn = r == cudaRoundNearest;
    const Rounding rr = rn ? Rounding::nearest_even : Rounding::toward_zero;
    v.push_back({std::string("float4_e2m1fn") + (rn ? "_rn" : "_rz"), Format::float4_e2m1fn,
                 presets::cuda(Format::float4_e2m1fn, Format::float32, false, rr), rr, Overflow::saturate,
                 [=](float x) { return static_cast<std::uint32_t>(__nv_cvt_float_to_fp4(x, __NV_E2M1, r)); },
                 [=](double x) { return static_cast<std::uint32_t>(__nv_cvt_double_to_fp4(x, __NV_E2M1, r)); },
                 [=](__half_raw x) { return static_cast<std::uint32_t>(__nv_cvt_halfraw_to_fp4(x, __NV_E2M1, r)); },
                 [=](__nv_bfloat16_raw x) { return static_cast<std::uint32_t>(__nv_cvt_bfloat16raw_to_fp4(x, __NV_E2M1, r)); },
                 rn});
  }
  for (cudaRoundMode r : {cudaRoundPosInf, cudaRoundZero}) {
    for (__nv_saturation_t sat : {__NV_SATFINITE, __NV_NOSAT}) {
      const bool rp = r == cudaRoundPosInf;
      const bool s = sat == __NV_SATFINITE;
      const Rounding rr = rp ? Rounding::upward : Rounding::toward_zero;
      const Overflow ov = s ? Overflow::saturate : Overflow::infinity;
      v.push_back({std::string("float8_e8m0fnu") + (rp ? "_rp" : "_rz") + (s ? "_satfinite" : "_nosat"),
                   Format::float8_e8m0fnu, presets::cuda(Format::float8_e8m0fnu, Format::float32, false, rr, ov), rr, ov,
                   [=](float x) { return static_cast<std::uint32_t>(__nv_cvt_float_to_e8m0(x, sat, r)); },
                   [=](double x) { return static_cast<std::uint32_t>(__nv_cvt_double_to_e8m0(x, sat, r)); },
                   nullptr,
                   [=](__nv_bfloat16_raw x) { return static_cast<std::uint32_t>(__nv_cvt_bfloat16raw_to_e8m0(x, sat, r)); },
                   rp && s});
    }
  }
  struct Directed {
    const char* suffix;
    Rounding r;
    __half (*h)(float);
    __nv_bfloat16 (*b)(float);
  };
  for (const Directed& d : {Directed{"_rn", Rounding::nearest_even, __float2half_rn, __float2bfloat16_rn},
                            Directed{"_rz", Rounding::toward_zero, __float2half_rz, __float2bfloat16_rz},
                            Directed{"_ru", Rounding::upward, __float2half_ru, __float2bfloat16_ru},
                            Directed{"_rd", Rounding::downward, __float2half_rd, __float2bfloat16_rd}}) {
    const auto hf = d.h;
    const auto bf = d.b;
    v.push_back({std::string("float16") + d.suffix, Format::float16, presets::cuda(Format::float16, Format::float32, false, d.r),
                 d.r, Overflow::ieee,
                 [=](float x) { return half_bits(hf(x)); }, nullptr, nullptr, nullptr, d.r == Rounding::nearest_even});
    v.push_back({std::string("bfloat16") + d.suffix, Format::bfloat16, presets::cuda(Format::bfloat16, Format::float32, false, d.r),
                 d.r, Overflow::ieee,
                 [=](float x) { return bf16_bits(bf(x)); }, nullptr, nullptr, nullptr, d.r == Rounding::nearest_even});
  }
  return v;
}

class CudaOracle : public ::testing::TestWithParam<CudaConversion> {};

std::string name_of(const ::testing::TestParamInfo<CudaConversion>& p) { return p.param.name; }

#ifndef BLOCKSCALE_SWEEP_SET
#define BLOCKSCALE_SWEEP_SET 0
#endif

// All 2^32 fp32 inputs. Set 0 (CI) sweeps the default modes; set 1 (label exhaustive) the rest.
TEST_P(CudaOracle, AllFloat32Inputs) {
  const CudaConversion& c = GetParam();
  if (c.default_mode != (BLOCKSCALE_SWEEP_SET == 0)) GTEST_SKIP() << "swept by the other sweep set";
  test::SweepResult r;
  if (info(c.dst).storage_bits == 8) {
    r = test::sweep_f32<std::uint8_t>(c.dst, c.options, [&](float x) { return static_cast<std::uint8_t>(c.from_float(x)); });
  } else {
    r = test::sweep_f32<std::uint16_t>(c.dst, c.options, [&](float x) { return static_cast<std::uint16_t>(c.from_float(x)); });
  }
  EXPECT_EQ(r.checked, std::uint64_t{1} << 32);
  EXPECT_EQ(r.mismatches, 0u) << r.summary();
  std::printf("[ sweep    ] %s: %llu fp32 inputs, %llu mismatches\n", c.name.c_str(),
              static_cast<unsigned long long>(r.checked), static_cast<unsigned long long>(r.mismatches));
}

#if BLOCKSCALE_SWEEP_SET == 0
// Every fp16 and bf16 input, through CUDA's __half_raw / __nv_bfloat16_raw functions.
TEST_P(CudaOracle, AllHalfAndBfloat16Inputs) {
  const CudaConversion& c = GetParam();
  if (!c.from_half && !c.from_bf16) GTEST_SKIP() << "CUDA has no 16-bit-input form of " << c.name;
  std::uint64_t bad = 0;
  for (std::uint32_t b = 0; b < 65536; ++b) {
    if (c.from_half) {
      __half_raw h;
      h.x = static_cast<unsigned short>(b);
      const std::uint32_t want = c.from_half(h);
      ConvertOptions o = presets::cuda(c.dst, Format::float16, false, c.rounding, c.overflow);
      const std::uint32_t got = convert_code(c.dst, Format::float16, b, o);
      if (got != want && bad++ < 5) ADD_FAILURE() << c.name << " from f16 0x" << std::hex << b << ": ours 0x" << got << " cuda 0x" << want;
    }
    if (c.from_bf16) {
      __nv_bfloat16_raw h;
      h.x = static_cast<unsigned short>(b);
      const std::uint32_t want = c.from_bf16(h);
      ConvertOptions o = presets::cuda(c.dst, Format::bfloat16, false, c.rounding, c.overflow);
      const std::uint32_t got = convert_code(c.dst, Format::bfloat16, b, o);
      if (got != want && bad++ < 5) ADD_FAILURE() << c.name << " from bf16 0x" << std::hex << b << ": ours 0x" << got << " cuda 0x" << want;
    }
  }
  EXPECT_EQ(bad, 0u);
}

// Doubles: every fp32 value widened (exact), values between fp32 neighbours (where a float path
// would round twice), random bit patterns, and the edge cases of each format.
TEST_P(CudaOracle, Float64Inputs) {
  const CudaConversion& c = GetParam();
  if (!c.from_double) GTEST_SKIP() << "CUDA has no double-input form of " << c.name;
  const ConvertOptions o = presets::cuda(c.dst, Format::float32, true, c.rounding, c.overflow);
  std::mt19937_64 rng(20261121);
  std::vector<double> xs;
  // Around every code of the destination: the value, its midpoints with the neighbours, and one
  // double-ulp either side of each.
  for (std::uint32_t code = 0; code <= code_mask(c.dst); ++code) {
    const double v = to_double(c.dst, code);
    const double w = to_double(c.dst, (code + 1) & code_mask(c.dst));
    for (double x : {v, (v + w) / 2}) {
      if (!std::isfinite(x)) continue;
      xs.push_back(x);
      xs.push_back(std::nextafter(x, INFINITY));
      xs.push_back(std::nextafter(x, -INFINITY));
    }
  }
  for (double x : std::initializer_list<double>{0.0, -0.0, 1e-300, -1e-300, 1e300, -1e300, INFINITY, -INFINITY, NAN, -NAN, 5e-324}) {
    xs.push_back(x);
  }
  for (int i = 0; i < 4'000'000; ++i) {
    // Random bit patterns with exponents concentrated on the formats' ranges.
    const std::uint64_t r = rng();
    const int e = static_cast<int>(rng() % 320) - 170;
    double x = std::ldexp(1.0 + static_cast<double>(r >> 12) * 0x1p-52, e);
    if (r & 1) x = -x;
    xs.push_back(x);
    xs.push_back(std::bit_cast<double>(rng()));
  }
  std::uint64_t bad = 0;
  for (double x : xs) {
    const std::uint32_t want = c.from_double(x);
    const std::uint32_t got = convert(c.dst, x, o);
    if (got != want && bad++ < 8) {
      ADD_FAILURE() << c.name << " from double " << x << " (0x" << std::hex << std::bit_cast<std::uint64_t>(x)
                    << "): ours 0x" << got << " cuda 0x" << want;
    }
  }
  EXPECT_EQ(bad, 0u) << " of " << xs.size() << " doubles";
}
#endif

INSTANTIATE_TEST_SUITE_P(Cuda13, CudaOracle, ::testing::ValuesIn(conversions()), name_of);

#if BLOCKSCALE_SWEEP_SET == 0
// Every code decodes to what CUDA decodes it to (through half or bf16, exactly).
TEST(CudaOracleDecode, EveryCode) {
  for (std::uint32_t c = 0; c < 256; ++c) {
    const auto check = [&](Format f, float want) {
      const float got = to_float(f, c & code_mask(f));
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(got)) << to_string(f) << " code 0x" << std::hex << c;
      } else {
        EXPECT_EQ(std::bit_cast<std::uint32_t>(got), std::bit_cast<std::uint32_t>(want)) << to_string(f) << " code 0x" << std::hex << c;
      }
    };
    check(Format::float8_e4m3fn, __half2float(__half(__nv_cvt_fp8_to_halfraw(static_cast<__nv_fp8_storage_t>(c), __NV_E4M3))));
    check(Format::float8_e5m2, __half2float(__half(__nv_cvt_fp8_to_halfraw(static_cast<__nv_fp8_storage_t>(c), __NV_E5M2))));
    __nv_bfloat16 e8 = __nv_bfloat16(__nv_cvt_e8m0_to_bf16raw(static_cast<__nv_fp8_storage_t>(c)));
    check(Format::float8_e8m0fnu, __bfloat162float(e8));
    if (c < 64) {
      check(Format::float6_e2m3fn, __half2float(__half(__nv_cvt_fp6_to_halfraw(static_cast<__nv_fp6_storage_t>(c), __NV_E2M3))));
      check(Format::float6_e3m2fn, __half2float(__half(__nv_cvt_fp6_to_halfraw(static_cast<__nv_fp6_storage_t>(c), __NV_E3M2))));
    }
    if (c < 16) {
      check(Format::float4_e2m1fn, __half2float(__half(__nv_cvt_fp4_to_halfraw(static_cast<__nv_fp4_storage_t>(c), __NV_E2M1))));
    }
  }
}

// The value types' constructor from an integer (types.h: one rounding) against CUDA's host
// __ll2bfloat16_rn / __ull2bfloat16_rn (round to odd through float, then one rounding) and
// __ll2half_rn / __ull2half_rn: every bit width, random significands, and the ties and their
// neighbours at each bfloat16 rounding position, both signs; and tfloat32 against the integer's
// own rounding to 11 significant bits (nearest even) in integer arithmetic.
TEST(CudaOracleIntegers, ValueTypesFromInt64AndUint64RoundOnce) {
  std::mt19937_64 rng(20261130);
  std::vector<std::uint64_t> magnitudes = {0, 1, 2, 3, 0xFFFFFFFFFFFFFFFFull, 0x8000000000000000ull, 0x7FFFFFFFFFFFFFFFull};
  for (int width = 1; width <= 64; ++width) {
    const std::uint64_t top = std::uint64_t{1} << (width - 1);
    for (int i = 0; i < 2000; ++i) magnitudes.push_back(top | (rng() & (top - 1)));
    if (width > 9) {
      // A bfloat16 keeps `width`'s top 8 bits: the tie sits at bit width - 9.
      const std::uint64_t half_unit = std::uint64_t{1} << (width - 9);
      for (int i = 0; i < 50; ++i) {
        const std::uint64_t kept = top | ((rng() << (width - 8)) & (top - 1) & ~(2 * half_unit - 1));
        for (const std::uint64_t delta : {std::uint64_t{0}, std::uint64_t{1}, half_unit - 1, half_unit, half_unit + 1}) {
          magnitudes.push_back(kept + delta);
        }
      }
    }
  }
  // tfloat32's rounding of |x| (nearest even at 11 significant bits), as an fp32 pattern.
  const auto tf32_of = [](std::uint64_t m, bool negative) -> std::uint32_t {
    if (m == 0) return negative ? 0x80000000u : 0u;
    const int width = std::bit_width(m);
    std::uint64_t sig = m;
    int exp = width - 1;
    if (width > 11) {
      const int shift = width - 11;
      const std::uint64_t rest = m & ((std::uint64_t{1} << shift) - 1), half = std::uint64_t{1} << (shift - 1);
      sig = m >> shift;
      if (rest > half || (rest == half && (sig & 1))) ++sig;
      if (sig == (std::uint64_t{1} << 11)) sig >>= 1, ++exp;
      sig <<= 13;
    } else {
      sig <<= 24 - width;
    }
    return (negative ? 0x80000000u : 0u) | static_cast<std::uint32_t>(exp + 127) << 23 | (static_cast<std::uint32_t>(sig) & 0x7FFFFFu);
  };
  std::size_t mismatches = 0;
  const auto expect = [&](std::uint32_t got, std::uint32_t want, const char* what, std::uint64_t m, bool negative) {
    if (got != want && ++mismatches <= 10) {
      ADD_FAILURE() << what << " of " << (negative ? "-" : "") << m << ": 0x" << std::hex << got << ", oracle 0x" << want;
    }
  };
  for (const std::uint64_t m : magnitudes) {
    expect(bfloat16(m).bits(), std::bit_cast<std::uint16_t>(__ull2bfloat16_rn(m)), "bfloat16(uint64)", m, false);
    expect(float16(m).bits(), std::bit_cast<std::uint16_t>(__ull2half_rn(m)), "float16(uint64)", m, false);
    expect(tfloat32(m).bits(), tf32_of(m, false), "tfloat32(uint64)", m, false);
    if (m <= 0x8000000000000000ull) {
      const auto x = static_cast<long long>(0 - m);  // -m, INT64_MIN at m = 2^63
      expect(bfloat16(x).bits(), std::bit_cast<std::uint16_t>(__ll2bfloat16_rn(x)), "bfloat16(int64)", m, true);
      expect(float16(x).bits(), std::bit_cast<std::uint16_t>(__ll2half_rn(x)), "float16(int64)", m, true);
      expect(tfloat32(x).bits(), tf32_of(m, m != 0), "tfloat32(int64)", m, true);
    }
  }
  EXPECT_EQ(mismatches, 0u) << magnitudes.size() << " magnitudes";
  // The case that a conversion through double rounds twice.
  EXPECT_EQ(bfloat16(static_cast<long long>((1ull << 60) + (1ull << 52) + 1)).bits(), 0x5D81);
}
#endif

}  // namespace
}  // namespace blockscale
