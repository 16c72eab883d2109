// SPDX-License-Identifier: Apache-2.0
// emulator::cublaslt_fp8_gemm: cuBLASLt's fp8 epilogue (alpha, beta C, bias, D type, D scale,
// amax_d), against an oracle that shares none of its arithmetic: the CPU's own float operations
// (std::fmaf for the fused multiply-adds; -ffp-contract=off keeps the others apart) and CUDA 13.0's
// host conversions (__float2bfloat16_rn, __float2half_rn, __nv_cvt_float_to_fp8 with
// __NV_SATFINITE). The rule itself was measured on an H200 (docs/conformance.md, "cuBLASLt
// epilogue"); this test checks that the library computes that rule: every cuBLASLt row, the three
// element pairs, split-K 1 and 2, every D type cuBLASLt took (an e5m2 D with an e5m2 operand),
// random and cancelling C and bias, the fp8 D's saturation and the midpoints where rounding the D
// scale's product to f32 first decides the e4m3 value.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "blockscale/emulator/library_fp8.h"
#include "blockscale/formats/convert.h"
#include "blockscale/formats/presets.h"
#include "blockscale/quantize/fp8_scaled.h"
#include "expect_throw.h"
#include "fp_mode.h"

namespace blockscale::emulator {
namespace {

using blockscale::test::expect_throw_with;
using G = Fp8Granularity;

float value_of(std::uint32_t code, Format f) {
  if (f == Format::bfloat16) return __bfloat162float(std::bit_cast<__nv_bfloat16>(static_cast<std::uint16_t>(code)));
  if (f == Format::float16) return __half2float(std::bit_cast<__half>(static_cast<std::uint16_t>(code)));
  return std::bit_cast<float>(code);
}

std::uint32_t code_of(float x, Format f) {
  if (f == Format::bfloat16) return std::bit_cast<std::uint16_t>(__float2bfloat16_rn(x));
  if (f == Format::float16) return std::bit_cast<std::uint16_t>(__float2half_rn(x));
  if (f == Format::float8_e4m3fn) return __nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E4M3);
  if (f == Format::float8_e5m2) return __nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E5M2);
  return std::bit_cast<std::uint32_t>(x);
}

// The rule, in host float arithmetic: y = RN(FMA(S, X, RN(beta C))) (split-K 1) or
// RN(FMA(beta, C, RN(S X))) (split-K > 1), for beta = 0 RN(FMA(S, X, +0)) (split-K 1) or RN(S X),
// then + bias, then ReLU (+0 for every value not above zero but a -0 that RELU_BIAS keeps after a
// split-K); D from y.
struct Oracle {
  std::vector<std::uint32_t> d;
  float amax = 0.0f;
};

Oracle oracle(const std::vector<std::uint32_t>& x, std::int64_t n, const std::vector<float>& scale_per_row,
              int split_k, const CublasLtEpilogue& e) {
  Oracle o;
  o.d.resize(x.size());
  for (std::size_t at = 0; at < x.size(); ++at) {
    const auto i = static_cast<std::size_t>(static_cast<std::int64_t>(at) / n);
    const float s = scale_per_row[i], xv = std::bit_cast<float>(x[at]);
    volatile float y;
    if (e.beta == 0.0f) {
      y = split_k == 1 ? std::fmaf(s, xv, 0.0f) : s * xv;
    } else {
      const float c = value_of(e.c[at], e.c_format);
      if (split_k == 1) {
        volatile const float beta_c = e.beta * c;
        y = std::fmaf(s, xv, beta_c);
      } else {
        volatile const float sx = s * xv;
        y = std::fmaf(e.beta, c, sx);
      }
    }
    if (!e.bias.empty()) y = y + value_of(e.bias[i], e.bias_format);
    const bool keeps_minus_zero = split_k > 1 && !e.bias.empty() && y == 0.0f && std::signbit(y);
    if (e.relu && !(y > 0.0f) && !keeps_minus_zero) y = 0.0f;
    o.amax = std::max(o.amax, std::fabs(static_cast<float>(y)));
    const bool fp8_d = e.d_format == Format::float8_e4m3fn || e.d_format == Format::float8_e5m2;
    o.d[at] = fp8_d ? code_of(e.d_scale * y, e.d_format) : code_of(y, e.d_format);
  }
  return o;
}

std::vector<float> gaussian(std::int64_t count, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal;
  std::vector<float> x(static_cast<std::size_t>(count));
  for (float& v : x) v = normal(rng);
  return x;
}

Fp8ScaledMatrix operand(std::int64_t rows, std::int64_t k, G g, std::uint64_t seed,
                        Format element = Format::float8_e4m3fn) {
  if (g == G::tensor || g == G::row) {
    return quantize_fp8_scaled(gaussian(rows * k, seed), rows, k, KAxis::last, element, g, Fp8ScaleRecipe::torchao);
  }
  // DeepGEMM's recipe casts to e4m3 only: an e5m2 operand with block scales takes its e4m3 codes'
  // values rounded to e5m2.
  Fp8ScaledMatrix m =
      quantize_fp8_scaled(gaussian(rows * k, seed), rows, k, KAxis::last, Format::float8_e4m3fn, g, Fp8ScaleRecipe::deepgemm);
  if (element == Format::float8_e5m2) {
    for (std::uint8_t& c : m.codes)
      c = static_cast<std::uint8_t>(convert(Format::float8_e5m2, to_double(Format::float8_e4m3fn, c), presets::ieee()));
    m.element = element;
  }
  return m;
}

// X of the rule: the unit-scale accumulator for tensor-wise scaling, the row's own result for
// row-wise and block scaling; and the per-row scale S: RN(RN(alpha sa) sb) (host float products) or
// alpha.
// Small GEMMs, many of them: one thread each (the bits do not depend on the count), so that the
// test does not pay for thread start-ups on a busy machine.
GemmOptions one_thread() {
  GemmOptions o;
  o.threads = 1;
  return o;
}

std::vector<std::uint32_t> rule_x(const LibraryFp8Schedule& s, const Fp8ScaledMatrix& a, const Fp8ScaledMatrix& b,
                                  int split_k) {
  if (s.a != G::tensor) return library_fp8_gemm(s, a, b, 0, a.rows, split_k, one_thread());
  Fp8ScaledMatrix ua = a, ub = b;
  ua.scales = {1.0f};
  ub.scales = {1.0f};
  return library_fp8_gemm(s, ua, ub, 0, a.rows, split_k, one_thread());
}

std::vector<float> rule_scale(const LibraryFp8Schedule& s, const Fp8ScaledMatrix& a, const Fp8ScaledMatrix& b,
                              float alpha) {
  std::vector<float> scale(static_cast<std::size_t>(a.rows), alpha);
  if (s.a == G::tensor) {
    volatile const float alpha_sa = alpha * a.scales[0];
    for (float& v : scale) v = alpha_sa * b.scales[0];
  }
  return scale;
}

// The D types cuBLASLt 13.1 took, with C and bias types: (D, C, bias).
struct Types {
  Format d, c, bias;
};
std::vector<Types> accepted(const LibraryFp8Schedule& s, bool e5m2_operand) {
  std::vector<Types> t = {{Format::float32, Format::float32, Format::bfloat16},
                          {Format::bfloat16, Format::bfloat16, Format::bfloat16},
                          {Format::float16, Format::float16, Format::float16}};
  if (s.a == G::tensor) {
    for (const Format d : {Format::float8_e4m3fn, Format::float8_e5m2}) {
      if (d == Format::float8_e5m2 && !e5m2_operand) continue;  // e4m3 x e4m3: no e5m2 D
      t.push_back({d, Format::bfloat16, Format::bfloat16});
      t.push_back({d, Format::float16, Format::float16});
    }
  }
  return t;
}

std::size_t compare(const CublasLtFp8Result& got, const Oracle& want, const std::string& what) {
  std::size_t mismatches = 0;
  for (std::size_t i = 0; i < want.d.size(); ++i) {
    if (got.d[i] != want.d[i] && mismatches++ < 3) {
      ADD_FAILURE() << what << " output " << i << ": 0x" << std::hex << got.d[i] << ", oracle 0x" << want.d[i];
    }
  }
  if (std::bit_cast<std::uint32_t>(got.amax_d) != std::bit_cast<std::uint32_t>(want.amax)) {
    ADD_FAILURE() << what << ": amax_d " << got.amax_d << ", oracle " << want.amax;
    ++mismatches;
  }
  return mismatches;
}

TEST(CublasLtEpilogue, EveryRowSplitAndDTypeAgainstTheOracle) {
  constexpr std::int64_t M = 64, N = 128, K = 512;
  std::mt19937_64 rng(11);
  std::size_t outputs = 0, mismatches = 0;
  const std::pair<Format, Format> elements[] = {{Format::float8_e4m3fn, Format::float8_e4m3fn},
                                                {Format::float8_e4m3fn, Format::float8_e5m2},
                                                {Format::float8_e5m2, Format::float8_e4m3fn}};
  for (const auto& [element_a, element_b] : elements)
  for (const LibraryFp8Schedule& s : library_fp8_schedules()) {
    if (s.library != Fp8Library::cublaslt) continue;
    const bool e5m2_operand = element_a == Format::float8_e5m2 || element_b == Format::float8_e5m2;
    Fp8ScaledMatrix a = operand(M, K, s.a, 1 + outputs, element_a), b = operand(N, K, s.b, 2 + outputs, element_b);
    if (s.a == G::tensor) {
      // Scales for which RN(RN(alpha sa) sb), RN(alpha RN(sa sb)) and RN(RN(alpha sb) sa) are three
      // different floats at alpha = 1.6219326 (the probe's).
      a.scales = {0.005766734015196562f};
      b.scales = {0.005945408716797829f};
    }
    for (const int split_k : {1, 2}) {
      if (split_k > 1 && s.split_granule_k == 0) continue;  // row x row: never seen splitting K
      const std::vector<std::uint32_t> x = rule_x(s, a, b, split_k);
      for (const Types& t : accepted(s, e5m2_operand)) {
        // (alpha, beta, bias?, data): data 0 Gaussian C and bias, 1 cancelling ones.
        for (int variant = 0; variant < 12; ++variant) {
          const float alpha = variant % 3 == 0 ? 1.0f : variant % 3 == 1 ? 1.6219326257705688f : std::ldexp(0.75f, -3);
          const float beta = variant % 4 == 0 ? 0.0f : variant % 4 == 1 ? 1.0f : variant % 4 == 2 ? 0.6f : -2.5f;
          const bool with_bias = variant % 2 == 1, cancel = variant >= 6;
          // ReLU (RELU, or RELU_BIAS with a bias) on five of the twelve: with and without a bias, on
          // Gaussian and cancelling data, on every D type.
          const bool relu = variant % 5 == 1 || variant % 5 == 3;
          const std::vector<float> scale = rule_scale(s, a, b, alpha);
          float spread = 0.0f;
          for (std::size_t at = 0; at < x.size(); ++at)
            spread = std::max(spread, std::fabs(scale[at / static_cast<std::size_t>(N)] * std::bit_cast<float>(x[at])));
          std::normal_distribution<float> normal;
          std::vector<std::uint32_t> c(x.size()), bias(static_cast<std::size_t>(M));
          for (std::size_t at = 0; at < x.size(); ++at) {
            // cancel: C = -S X / beta in C's type, so that y keeps what the FMA does not round away
            const float sx = scale[at / static_cast<std::size_t>(N)] * std::bit_cast<float>(x[at]);
            c[at] = code_of(cancel && beta != 0.0f ? -sx / beta : normal(rng) * spread, t.c);
          }
          for (std::int64_t i = 0; i < M; ++i) {
            const float sx = scale[static_cast<std::size_t>(i)] * std::bit_cast<float>(x[static_cast<std::size_t>(i * N)]);
            bias[static_cast<std::size_t>(i)] = code_of(cancel ? -sx : normal(rng) * spread, t.bias);
          }
          CublasLtEpilogue e;
          e.alpha = alpha;
          e.beta = beta;
          e.c_format = t.c;
          e.bias_format = t.bias;
          e.d_format = t.d;
          e.relu = relu;
          if (beta != 0.0f) e.c = c;
          if (with_bias) e.bias = bias;
          // An fp8 D: a D scale that sends some outputs past the largest value (saturation: 448 for
          // e4m3, 57344 for e5m2) and keeps others small.
          if (t.d == Format::float8_e4m3fn && spread > 0.0f) e.d_scale = 900.0f / spread;
          if (t.d == Format::float8_e5m2 && spread > 0.0f) e.d_scale = 115000.0f / spread;
          const Oracle want = oracle(x, N, scale, split_k, e);
          const CublasLtFp8Result got = cublaslt_fp8_gemm(s, a, b, 0, M, split_k, e, one_thread());
          const std::string what = s.name() + " " + info(element_a).name + " x " + info(element_b).name + " split " +
                                   std::to_string(split_k) + " D " + info(t.d).name + " variant " + std::to_string(variant) +
                                   (relu ? " relu" : "");
          mismatches += compare(got, want, what);
          outputs += want.d.size();
        }
      }
    }
  }
  EXPECT_EQ(mismatches, 0u) << outputs << " outputs";
  EXPECT_GE(outputs, 1000000u);
}

// Rows [row0, row1) give those rows of the whole call.
TEST(CublasLtEpilogue, RowRangesAreRowsOfTheWholeCall) {
  const LibraryFp8Schedule& s = library_fp8_schedule(Fp8Library::cublaslt, false, G::tensor, G::tensor);
  const Fp8ScaledMatrix a = operand(40, 256, G::tensor, 5), b = operand(24, 256, G::tensor, 6);
  std::vector<std::uint32_t> c(40 * 24), bias(40);
  std::mt19937_64 rng(3);
  for (auto& v : c) v = code_of(std::ldexp(static_cast<float>(rng() % 1000) - 500.0f, -6), Format::float32);
  for (auto& v : bias) v = code_of(static_cast<float>(rng() % 64) - 32.0f, Format::bfloat16);
  CublasLtEpilogue e;
  e.alpha = 0.7f;
  e.beta = 0.6f;
  e.c = c;
  e.bias = bias;
  const CublasLtFp8Result whole = cublaslt_fp8_gemm(s, a, b, 0, 40, 1, e);
  const CublasLtFp8Result part = cublaslt_fp8_gemm(s, a, b, 13, 29, 1, e);
  EXPECT_TRUE(std::equal(part.d.begin(), part.d.end(), whole.d.begin() + 13 * 24));
  EXPECT_LE(part.amax_d, whole.amax_d);
}

// The e4m3 D rounds RN(d_scale y) to f32 first: with d_scale = RN(1/3), C values whose product with
// it lands on an e4m3 midpoint once rounded to f32 (and not before) tell the two apart. A and B are
// zero, so y = C.
TEST(CublasLtEpilogue, E4m3DRoundsTheDScaleProductToF32First) {
  const float d_scale = 1.0f / 3.0f;
  for (const Format c_format : {Format::bfloat16, Format::float16}) {
    std::vector<std::uint32_t> midpoints;
    for (std::uint32_t code = 1; code < (c_format == Format::bfloat16 ? 0x7F80u : 0x7C00u); ++code) {
      const float v = value_of(code, c_format);
      if (std::fabs(static_cast<double>(d_scale) * v) >= 448.0) continue;
      const std::uint32_t via_f32 = code_of(d_scale * v, Format::float8_e4m3fn);
      const std::uint32_t once = __nv_cvt_double_to_fp8(static_cast<double>(d_scale) * v, __NV_SATFINITE, __NV_E4M3);
      if (via_f32 != once) midpoints.push_back(code);
    }
    ASSERT_GE(midpoints.size(), 40u) << info(c_format).name;
    constexpr std::int64_t M = 16, N = 32, K = 128;
    const std::vector<float> zeros(static_cast<std::size_t>(M * K), 0.0f);
    const Fp8ScaledMatrix a = quantize_fp8_scaled(zeros, M, K, KAxis::last, Format::float8_e4m3fn, G::tensor,
                                                  Fp8ScaleRecipe::torchao);
    const Fp8ScaledMatrix b = quantize_fp8_scaled(std::vector<float>(static_cast<std::size_t>(N * K), 0.0f), N, K,
                                                  KAxis::last, Format::float8_e4m3fn, G::tensor, Fp8ScaleRecipe::torchao);
    std::vector<std::uint32_t> c(static_cast<std::size_t>(M * N));
    for (std::size_t i = 0; i < c.size(); ++i) c[i] = midpoints[i % midpoints.size()] | (i % 2 ? 0x8000u : 0u);
    CublasLtEpilogue e;
    e.beta = 1.0f;
    e.c = c;
    e.c_format = c_format;
    e.d_format = Format::float8_e4m3fn;
    e.d_scale = d_scale;
    const LibraryFp8Schedule& s = library_fp8_schedule(Fp8Library::cublaslt, false, G::tensor, G::tensor);
    const CublasLtFp8Result got = cublaslt_fp8_gemm(s, a, b, 0, M, 1, e);
    std::size_t differs_from_once = 0;
    for (std::size_t i = 0; i < c.size(); ++i) {
      const float y = value_of(c[i], c_format);
      EXPECT_EQ(got.d[i], code_of(d_scale * y, Format::float8_e4m3fn)) << info(c_format).name << " C " << y;
      differs_from_once += got.d[i] != __nv_cvt_double_to_fp8(static_cast<double>(d_scale) * y, __NV_SATFINITE, __NV_E4M3);
    }
    EXPECT_EQ(differs_from_once, c.size());
  }
}

// With beta = 0, C is not read (cuBLASLt's rule): a C of NaNs changes nothing, and alpha = 1 without
// a bias is library_fp8_gemm's D.
TEST(CublasLtEpilogue, BetaZeroReadsNoC) {
  for (const LibraryFp8Schedule& s : library_fp8_schedules()) {
    if (s.library != Fp8Library::cublaslt) continue;
    const Fp8ScaledMatrix a = operand(16, 256, s.a, 7), b = operand(8, 256, s.b, 8);
    const std::vector<std::uint32_t> nan_c(16 * 8, 0x7FC00000u);
    CublasLtEpilogue e;
    e.c = nan_c;
    EXPECT_EQ(cublaslt_fp8_gemm(s, a, b, 0, 16, 1, e).d, library_fp8_gemm(s, a, b, 0, 16)) << s.name();
  }
}

// Signed zeros as an H200 gave them (cuBLASLt 13.1, scripts/probe_cublaslt_relu_zero.py: A all +0,
// alpha = -1, so S X is -0 where the accumulator X is +0; every row of the probe, 384 calls):
// without C the split-K 1 epilogue gives +0 and the split-K one -0; beta = 1 with C = -0 gives -0
// on both; ReLU turns each -0 into +0, except RELU_BIAS (a bias of -0) after a split-K.
TEST(CublasLtEpilogue, SignedZerosAsMeasured) {
  for (const LibraryFp8Schedule& s : library_fp8_schedules()) {
    if (s.library != Fp8Library::cublaslt) continue;
    Fp8ScaledMatrix a = operand(8, 256, s.a, 11), b = operand(8, 256, s.b, 12);
    std::fill(a.codes.begin(), a.codes.end(), std::uint8_t{0});
    const std::vector<std::uint32_t> minus_zero_c(8 * 8, 0x80000000u), minus_zero_bias(8, 0x8000u);  // f32 C, bf16 bias
    struct Case {
      int split_k;
      bool c, bias, relu;
      std::uint32_t want;
    };
    // Row-wise calls were measured without split-K only: cuBLASLt splits none of them.
    const bool rowwise = s.scales == Fp8ScaleStage::epilogue_a_first;
    for (const Case& k : {Case{1, false, false, false, 0x00000000u}, Case{2, false, false, false, 0x80000000u},
                          Case{1, false, true, false, 0x00000000u}, Case{2, false, true, false, 0x80000000u},
                          Case{1, true, false, false, 0x80000000u}, Case{2, true, false, false, 0x80000000u},
                          Case{1, true, false, true, 0x00000000u}, Case{2, true, false, true, 0x00000000u},
                          Case{2, false, false, true, 0x00000000u}, Case{1, true, true, true, 0x00000000u},
                          Case{2, false, true, true, 0x80000000u}, Case{2, true, true, true, 0x80000000u}}) {
      if (rowwise && k.split_k > 1) continue;
      CublasLtEpilogue e;
      e.alpha = -1.0f;
      if (k.c) {
        e.beta = 1.0f;
        e.c = minus_zero_c;
      }
      if (k.bias) {
        e.bias = minus_zero_bias;
        e.bias_format = Format::bfloat16;
      }
      e.relu = k.relu;
      const std::vector<std::uint32_t> d = cublaslt_fp8_gemm(s, a, b, 0, 8, k.split_k, e).d;
      EXPECT_EQ(std::count(d.begin(), d.end(), k.want), static_cast<std::ptrdiff_t>(d.size()))
          << s.name() << " split-K " << k.split_k << (k.c ? " C -0" : "") << (k.bias ? " bias -0" : "")
          << (k.relu ? " relu" : "") << ": want 0x" << std::hex << k.want;
    }
  }
}

// An S X that underflows (the same probe, block scaling: S = alpha = -2^-126, e4m3 elements 2^-9 and
// block scales 2^-10, so S X = -2^-156): the H200 gave -0 at split-K 1 and 6, the FMA(S, X, +0) of
// the model (an FMUL and then an add of +0 would give +0).
TEST(CublasLtEpilogue, AnUnderflowingSxIsMinusZero) {
  int rows = 0;
  for (const LibraryFp8Schedule& s : library_fp8_schedules()) {
    if (s.library != Fp8Library::cublaslt || (s.a != G::block_1x128 && s.a != G::block_128x128)) continue;
    ++rows;
    Fp8ScaledMatrix a = operand(8, 256, s.a, 13), b = operand(8, 256, s.b, 14);
    for (Fp8ScaledMatrix* m : {&a, &b}) {
      std::fill(m->codes.begin(), m->codes.end(), std::uint8_t{0x01});  // 2^-9
      std::fill(m->scales.begin(), m->scales.end(), 0x1p-10f);
    }
    CublasLtEpilogue e;
    e.alpha = -0x1p-126f;
    for (const int split_k : {1, 2}) {
      const std::vector<std::uint32_t> d = cublaslt_fp8_gemm(s, a, b, 0, 8, split_k, e).d;
      EXPECT_EQ(std::count(d.begin(), d.end(), 0x80000000u), static_cast<std::ptrdiff_t>(d.size()))
          << s.name() << " split-K " << split_k;
    }
  }
  EXPECT_GT(rows, 0);
}

// The caller's floating-point mode (round toward zero, subnormals flushed: fp_mode.h) changes no
// bit: positive subnormal results y, which under DAZ compared as 0 in the ReLU (and were zeroed) and
// were left out of amax_d, on every cuBLASLt row, split-K 1 and 2, with and without ReLU and bias.
TEST(CublasLtEpilogue, TheCallersFloatingPointModeChangesNoBit) {
  std::size_t subnormal_outputs = 0;
  for (const LibraryFp8Schedule& s : library_fp8_schedules()) {
    if (s.library != Fp8Library::cublaslt) continue;
    Fp8ScaledMatrix a = operand(8, 256, s.a, 15), b = operand(8, 256, s.b, 16);
    for (Fp8ScaledMatrix* m : {&a, &b}) {
      for (std::size_t i = 0; i < m->codes.size(); ++i) m->codes[i] = i % 3 == 0 ? 0x81 : 0x01;  // -+2^-9
      std::fill(m->scales.begin(), m->scales.end(), 0x1p-10f);
    }
    for (const int split_k : {1, 2}) {
      if (split_k > 1 && s.split_granule_k == 0) continue;
      for (const bool relu : {false, true}) {
        for (const bool with_bias : {false, true}) {
          CublasLtEpilogue e;
          e.alpha = 0x1p-110f;  // y = alpha X, about 2^-140
          e.relu = relu;
          const std::vector<std::uint32_t> bias(8, 0x0001u);  // bf16 2^-133
          if (with_bias) e.bias = bias;
          const CublasLtFp8Result want = cublaslt_fp8_gemm(s, a, b, 0, 8, split_k, e, one_thread());
          CublasLtFp8Result got;
          {
            const test::HostileFpMode hostile;
            got = cublaslt_fp8_gemm(s, a, b, 0, 8, split_k, e, one_thread());
          }
          const std::string what = s.name() + " split-K " + std::to_string(split_k) + (relu ? " relu" : "") +
                                   (with_bias ? " bias" : "");
          EXPECT_EQ(got.d, want.d) << what;
          EXPECT_EQ(std::bit_cast<std::uint32_t>(got.amax_d), std::bit_cast<std::uint32_t>(want.amax_d)) << what;
          for (const std::uint32_t y : want.d) subnormal_outputs += (y & 0x7F800000u) == 0 && (y & 0x007FFFFFu) != 0;
        }
      }
    }
  }
  EXPECT_GT(subnormal_outputs, 0u);  // the data reach what the mode would flush
  // A positive subnormal scale is a positive finite fp32 value in any mode (the check had compared
  // it with 0 as a float, and refused it under DAZ).
  for (const LibraryFp8Schedule& s : library_fp8_schedules()) {
    if (s.library != Fp8Library::cublaslt || s.a != G::tensor) continue;
    Fp8ScaledMatrix a = operand(8, 256, s.a, 17), b = operand(8, 256, s.b, 18);
    a.scales = {0x1p-130f};
    b.scales = {0x1p+100f};
    const CublasLtFp8Result want = cublaslt_fp8_gemm(s, a, b, 0, 8, 1, CublasLtEpilogue{}, one_thread());
    const test::HostileFpMode hostile;
    EXPECT_EQ(cublaslt_fp8_gemm(s, a, b, 0, 8, 1, CublasLtEpilogue{}, one_thread()).d, want.d) << s.name();
    // What is not a positive finite value is refused in either mode, a negative subnormal included.
    for (const float bad : {0.0f, -0.0f, -0x1p-140f, -1.0f, std::numeric_limits<float>::infinity(),
                            std::numeric_limits<float>::quiet_NaN()}) {
      a.scales = {bad};
      expect_throw_with([&] { (void)library_fp8_gemm(s, a, b, 0, 8, 1, one_thread()); },
                        "A has a scale that is not a positive finite fp32 value");
    }
  }
}

TEST(CublasLtEpilogue, RefusesWhatWasNotMeasured) {
  const Fp8ScaledMatrix a = operand(8, 256, G::tensor, 1), b = operand(8, 256, G::tensor, 2);
  const Fp8ScaledMatrix ab = operand(8, 256, G::block_1x128, 3), bb = operand(8, 256, G::block_128x128, 4);
  const LibraryFp8Schedule& t = library_fp8_schedule(Fp8Library::cublaslt, false, G::tensor, G::tensor);
  const LibraryFp8Schedule& blk = library_fp8_schedule(Fp8Library::cublaslt, false, G::block_1x128, G::block_128x128);
  const LibraryFp8Schedule& torch = library_fp8_schedule(Fp8Library::torch_scaled_mm, false, G::tensor, G::tensor);
  const std::vector<std::uint32_t> c(64, 0x3F80u), bias(8, 0x3F80u), bad_bias(8, 0x7FC0u), short_bias(7, 0x3F80u);
  const auto with = [](auto change) {
    CublasLtEpilogue e;
    change(e);
    return e;
  };
  expect_throw_with([&] { cublaslt_fp8_gemm(torch, a, b, 0, 8, 1, {}); }, "is another library's row");
  expect_throw_with([&] { cublaslt_fp8_gemm(t, a, b, 0, 8, 1, with([&](auto& e) { e.bias = bias; e.bias_format = Format::float16; })); },
                    "with a float32 D cuBLASLt takes a bfloat16 bias only, got float16");
  expect_throw_with([&] { cublaslt_fp8_gemm(t, a, b, 0, 8, 1, with([&](auto& e) { e.beta = 1; e.c = c; e.c_format = Format::bfloat16; })); },
                    "with a float32 D, C is float32, got bfloat16");
  expect_throw_with([&] { cublaslt_fp8_gemm(t, a, b, 0, 8, 1, with([&](auto& e) { e.d_format = Format::bfloat16; e.bias = bias; e.bias_format = Format::float16; })); },
                    "with a bfloat16 D the bias is bfloat16, got float16");
  expect_throw_with([&] { cublaslt_fp8_gemm(blk, ab, bb, 0, 8, 1, with([&](auto& e) { e.d_format = Format::float8_e4m3fn; e.c_format = Format::bfloat16; })); },
                    "an fp8 D with 1x128 x 128x128 scaling");
  const Fp8ScaledMatrix ar = operand(8, 256, G::row, 5), br = operand(8, 256, G::row, 6);
  const LibraryFp8Schedule& row = library_fp8_schedule(Fp8Library::cublaslt, false, G::row, G::row);
  expect_throw_with([&] { cublaslt_fp8_gemm(row, ar, br, 0, 8, 1, with([&](auto& e) { e.d_format = Format::float8_e4m3fn; e.c_format = Format::bfloat16; })); },
                    "an fp8 D with row x row scaling: cuBLASLt 13.1 refused it on an H200 (block scales: invalid value; row-wise: no algorithm)");
  expect_throw_with([&] { cublaslt_fp8_gemm(row, ar, br, 0, 8, 2, {}); }, "cublaslt row x row was never seen splitting K");
  expect_throw_with([&] { cublaslt_fp8_gemm(t, a, b, 0, 8, 1, with([&](auto& e) { e.d_format = Format::float8_e4m3fn; })); },
                    "with an fp8 D, C is bfloat16 or float16, got float32");
  expect_throw_with([&] { cublaslt_fp8_gemm(t, a, b, 0, 8, 1, with([&](auto& e) { e.d_format = Format::float8_e4m3fn; e.c_format = Format::float16; e.bias = bias; })); },
                    "with an fp8 D the bias has C's type (float16), got bfloat16");
  expect_throw_with([&] { cublaslt_fp8_gemm(t, a, b, 0, 8, 1, with([&](auto& e) { e.d_format = Format::float8_e5m2; })); },
                    "with e4m3 x e4m3 an e5m2 D had no algorithm");
  expect_throw_with([&] { cublaslt_fp8_gemm(t, a, b, 0, 8, 1, with([&](auto& e) { e.d_scale = 2.0f; })); },
                    "a D scale (2.000000) was measured with an fp8 D only");
  expect_throw_with([&] { cublaslt_fp8_gemm(t, a, b, 0, 8, 1, with([&](auto& e) { e.alpha = NAN; })); }, "alpha is NaN or Inf");
  expect_throw_with([&] { cublaslt_fp8_gemm(t, a, b, 0, 8, 1, with([&](auto& e) { e.beta = INFINITY; })); }, "beta is NaN or Inf");
  expect_throw_with([&] { cublaslt_fp8_gemm(t, a, b, 0, 8, 1, with([&](auto& e) { e.beta = 1; e.c = std::span(c).first(10); })); },
                    "C holds 10 values; D is M x N = 8 x 8");
  expect_throw_with([&] { cublaslt_fp8_gemm(t, a, b, 0, 8, 1, with([&](auto& e) { e.bias = short_bias; })); },
                    "the bias has 7 values; D has M = 8 rows");
  expect_throw_with([&] { cublaslt_fp8_gemm(t, a, b, 0, 8, 1, with([&](auto& e) { e.bias = bad_bias; })); },
                    "bias[0] is NaN or Inf; cuBLASLt's epilogue was measured with finite values only");
  const std::vector<std::uint32_t> c_inf(64, 0x7F800000u);
  expect_throw_with([&] { cublaslt_fp8_gemm(t, a, b, 0, 8, 1, with([&](auto& e) { e.beta = 1; e.c = c_inf; })); }, "C[0] is NaN or Inf");
  const std::vector<std::uint32_t> wide_bias(8, 0x10000u);
  expect_throw_with([&] { cublaslt_fp8_gemm(t, a, b, 0, 8, 1, with([&](auto& e) { e.bias = wide_bias; })); },
                    "bias[0] = 65536 is not a bfloat16 code");
  const Fp8ScaledMatrix e5 = operand(8, 256, G::tensor, 9, Format::float8_e5m2);
  expect_throw_with([&] { cublaslt_fp8_gemm(t, e5, e5, 0, 8, 1, {}); }, "e5m2 x e5m2");
  // An e4m3 D whose y is not finite: C at f32's largest value, doubled by beta.
  const std::vector<std::uint32_t> c_big(64, 0x7F7Fu);  // bfloat16 3.39e38
  expect_throw_with([&] {
    cublaslt_fp8_gemm(t, a, b, 0, 8, 1, with([&](auto& e) { e.beta = 2; e.c = c_big; e.c_format = Format::bfloat16; e.d_format = Format::float8_e4m3fn; }));
  }, "before the D scale is NaN or Inf");
}

}  // namespace
}  // namespace blockscale::emulator
