// SPDX-License-Identifier: Apache-2.0
// Hand-worked blocks for every rule, expected bits written out (worked in the comments). A block
// shorter than the block size is completed with zeros (quantize_block).
//
// Codes used below. e4m3: 2^k has code (k + 7) << 3, e.g. 256 = 0x78, 128 = 0x70, 64 = 0x68;
// max 448 = 0x7E; min subnormal 2^-9 = 0x01; NaN 0x7F (CUDA). e8m0: 2^e has code e + 127, so
// 2^-8 = 0x77, 2^0 = 0x7F, 2^1 = 0x80. e2m1: 0, 0.5, 1, 1.5, 2, 3, 4, 6 = 0x0..0x7, sign 0x8.
// ue4m3: 1.0 = 0x38, 2^-6 = 0x08, 448 = 0x7E.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cfloat>
#include <cmath>
#include <limits>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "blockscale/quantize.h"
#include "expect_throw.h"

namespace {

using namespace blockscale;

const float kNan = std::numeric_limits<float>::quiet_NaN();
const float kInf = std::numeric_limits<float>::infinity();
constexpr Format kE4m3 = Format::float8_e4m3fn;
constexpr Format kE2m1 = Format::float4_e2m1fn;

struct Result {
  unsigned scale;
  std::vector<unsigned> codes;
  friend bool operator==(const Result&, const Result&) = default;
};

std::ostream& operator<<(std::ostream& s, const Result& r) {
  s << std::hex << "{scale 0x" << r.scale << ", codes";
  for (unsigned c : r.codes) s << " 0x" << c;
  return s << "}" << std::dec;
}

Result q(const BlockFormat& f, const QuantizeOptions& o, const std::vector<float>& x, TensorScale ts = {},
         const std::vector<std::uint32_t>& rbits = {}) {
  std::vector<std::uint8_t> codes(x.size());
  const unsigned scale = quantize_block(x, f, o, ts, codes, rbits);
  return {scale, std::vector<unsigned>(codes.begin(), codes.end())};
}

const BlockFormat kMx8 = block_formats::mxfp8_e4m3;
const BlockFormat kMx4 = block_formats::mxfp4;

// ---- OCP FLOOR (OCP MX §6.3; torchao FLOOR): X = 2^(floor(log2 amax) - 8) for e4m3.

TEST(OcpFloor, UnitAmax) {
  // amax 1 -> X = 2^-8 (0x77); x * 256: 256 -> 0x78, -128 -> 0xF0, 64 -> 0x68, 0.75 = 1.5 * 2^-1 -> 0x34.
  EXPECT_EQ(q(kMx8, recipes::ocp(kE4m3), {1.0f, -0.5f, 0.25f, 3 * 0x1p-10f}),
            (Result{0x77, {0x78, 0xF0, 0x68, 0x34}}));
}

TEST(OcpFloor, TiesToEven) {
  // amax 1.1875 still has floor(log2) = 0. 1.0625 * 256 = 272, halfway between 256 (0x78) and 288
  // (0x79): even -> 0x78. 1.1875 * 256 = 304, halfway 288 / 320: even -> 320 (0x7A).
  EXPECT_EQ(q(kMx8, recipes::ocp(kE4m3), {1.0625f, 1.1875f}), (Result{0x77, {0x78, 0x7A}}));
}

TEST(OcpFloor, SubnormalElements) {
  // amax 1 (x256). 2^-17 -> 2^-9 = 0x01; 3 * 2^-18 -> 1.5 * 2^-9, halfway 0x01 / 0x02: even 0x02;
  // 2^-18 -> 2^-10, halfway 0 / 0x01: even 0x00; -5 * 2^-19 -> -1.25 * 2^-9 -> 0x81.
  EXPECT_EQ(q(kMx8, recipes::ocp(kE4m3), {1.0f, 0x1p-17f, 3 * 0x1p-18f, 0x1p-18f, -5 * 0x1p-19f}),
            (Result{0x77, {0x78, 0x01, 0x02, 0x00, 0x81}}));
}

TEST(OcpFloor, BinadeEdgesAndSaturation) {
  // 448 = 1.75 * 2^8 -> X = 1 (0x7F), 448 -> 0x7E.
  EXPECT_EQ(q(kMx8, recipes::ocp(kE4m3), {448.0f}), (Result{0x7F, {0x7E}}));
  // 480 = 1.875 * 2^8: still X = 1, and 480 > 448 saturates (FLOOR clips the top of a binade).
  EXPECT_EQ(q(kMx8, recipes::ocp(kE4m3), {480.0f}), (Result{0x7F, {0x7E}}));
  // The largest float below 512 clips too; 512 itself moves to X = 2 (0x80) and becomes 256.
  EXPECT_EQ(q(kMx8, recipes::ocp(kE4m3), {std::nextafter(512.0f, 0.0f)}), (Result{0x7F, {0x7E}}));
  EXPECT_EQ(q(kMx8, recipes::ocp(kE4m3), {512.0f}), (Result{0x80, {0x78}}));
  // FLT_MAX: floor(log2) = 127 -> X = 2^119 (0xF6); FLT_MAX / 2^119 = 511.99997 -> 448.
  EXPECT_EQ(q(kMx8, recipes::ocp(kE4m3), {FLT_MAX, -FLT_MAX}), (Result{0xF6, {0x7E, 0xFE}}));
  // e2m1: amax 7 -> floor(log2 7) - 2 = 0 (0x7F); 7 saturates to 6 (0x7), 5 is a tie 4 / 6 -> 4 (0x6).
  EXPECT_EQ(q(kMx4, recipes::ocp(kE2m1), {7.0f, 5.0f, -0.25f}), (Result{0x7F, {0x7, 0x6, 0x8}}));
}

TEST(OcpFloor, ZerosNanInfAndTinyBlocks) {
  // All zeros: X = 2^-127 (0x00); signs kept.
  EXPECT_EQ(q(kMx8, recipes::ocp(kE4m3), {0.0f, -0.0f}), (Result{0x00, {0x00, 0x80}}));
  // A NaN makes the scale NaN and every element NaN (0x7F).
  EXPECT_EQ(q(kMx8, recipes::ocp(kE4m3), {1.0f, kNan, 0.0f}), (Result{0xFF, {0x7F, 0x7F, 0x7F}}));
  // So does an Inf (BlockInf::nan_scale) ...
  EXPECT_EQ(q(kMx8, recipes::ocp(kE4m3), {1.0f, -kInf}), (Result{0xFF, {0x7F, 0x7F}}));
  // ... unless saturate: X = 2^127 (0xFE), 1 * 2^-127 -> 0, -Inf -> -448 (0xFE).
  QuantizeOptions sat = recipes::ocp(kE4m3);
  sat.inf = BlockInf::saturate;
  EXPECT_EQ(q(kMx8, sat, {1.0f, -kInf}), (Result{0xFE, {0x00, 0xFE}}));
  // fp32-subnormal amax 2^-130: X clamps to 2^-127 (0x00); 2^-130 * 2^127 = 2^-3 -> 0x20.
  EXPECT_EQ(q(kMx8, recipes::ocp(kE4m3), {0x1p-130f}), (Result{0x00, {0x20}}));
  // Below the scale range: amax 2^-140 -> 2^-13 < 2^-10 rounds to zero.
  EXPECT_EQ(q(kMx8, recipes::ocp(kE4m3), {0x1p-140f, -0x1p-140f}), (Result{0x00, {0x00, 0x80}}));
}

TEST(OcpFloor, SubnormalInputPolicies) {
  // The MX paper's implementation zeroes fp32 subnormal inputs (sign kept) before the amax.
  EXPECT_EQ(q(kMx8, recipes::mx_paper(kE4m3), {0x1p-130f, -0x1p-130f}), (Result{0x00, {0x00, 0x80}}));
  // microxcaling flush: a block whose amax is below 2^-126 becomes zeros; the scale stays 0x00.
  EXPECT_EQ(q(kMx8, recipes::microxcaling(kE4m3, true), {0x1p-130f, -0x1p-131f}), (Result{0x00, {0x00, 0x80}}));
  // Without flushing microxcaling keeps them (2^-3 = 0x20, 2^-4 = 0x18).
  EXPECT_EQ(q(kMx8, recipes::microxcaling(kE4m3, false), {0x1p-130f, -0x1p-131f}), (Result{0x00, {0x20, 0x98}}));
  // Only blocks: a normal amax keeps the subnormal neighbour (2^-130 * 2^8 underflows anyway).
  EXPECT_EQ(q(kMx8, recipes::microxcaling(kE4m3, true), {1.0f, 0x1p-130f}), (Result{0x77, {0x78, 0x00}}));
}

TEST(OcpFloor, MicroxcalingRoundsHalfAway) {
  // 272 and 304 are ties (see TiesToEven): away from zero -> 288 (0x79), 320 (0x7A); -272 -> 0xF9.
  EXPECT_EQ(q(kMx8, recipes::microxcaling(kE4m3), {1.0625f, 1.1875f, -1.0625f}), (Result{0x77, {0x79, 0x7A, 0xF9}}));
}

// ---- CEIL (torchao): X = 2^(ceil(log2 amax) - emax).

TEST(Ceil, RoundsTheExponentUp) {
  // 480: ceil(log2) = 9 -> X = 2 (0x80); 240 = 1.875 * 2^7 -> 0x77. Powers of two are unchanged.
  EXPECT_EQ(q(kMx8, recipes::torchao(kE4m3, recipes::TorchaoScaleMode::ceil), {480.0f}), (Result{0x80, {0x77}}));
  EXPECT_EQ(q(kMx8, recipes::torchao(kE4m3, recipes::TorchaoScaleMode::ceil), {512.0f}), (Result{0x80, {0x78}}));
  // FLT_MAX: ceil(log2) = 128 -> X = 2^120 (0xF7); FLT_MAX / 2^120 = 255.99998 -> 256 (0x78).
  EXPECT_EQ(q(kMx8, recipes::torchao(kE4m3, recipes::TorchaoScaleMode::ceil), {FLT_MAX}), (Result{0xF7, {0x78}}));
  // torchao: any non-finite amax gives 0xFF; a NaN element converts to 0x7F.
  EXPECT_EQ(q(kMx8, recipes::torchao(kE4m3, recipes::TorchaoScaleMode::ceil), {kInf, 1.0f}),
            (Result{0xFF, {0x7F, 0x7F}}));
}

// ---- EVEN (torchao): amax rounded to the element's 3 mantissa bits (ties away), then FLOOR.

TEST(Even, RoundsAmaxBeforeFloor) {
  const QuantizeOptions even = recipes::torchao(kE4m3, recipes::TorchaoScaleMode::even);
  // 1.9375 = 1.1111b rounds to 2.0 -> X = 2^-7 (0x78); 1.9375 * 128 = 248, tie 240 / 256 -> 256.
  EXPECT_EQ(q(kMx8, even, {1.9375f}), (Result{0x78, {0x78}}));
  // 1.875 = 1.111b stays -> X = 2^-8 (0x77); 480 saturates to 448.
  EXPECT_EQ(q(kMx8, even, {1.875f}), (Result{0x77, {0x7E}}));
  // An amax that rounds to 2^128 is Inf to torchao: scale 0xFF.
  EXPECT_EQ(q(kMx8, even, {FLT_MAX}), (Result{0xFF, {0x7F}}));
  // e2m1 (1 mantissa bit): 1.75 rounds to 2 -> X = 2^(1-2) = 0x7E; 1.75 * 2 = 3.5 tie 3 / 4 -> 4 (0x6).
  EXPECT_EQ(q(kMx4, recipes::torchao(kE2m1, recipes::TorchaoScaleMode::even), {1.75f}), (Result{0x7E, {0x6}}));
}

// ---- RCEIL (cuBLAS / TE / torchao): X = RP_e8m0(fp32(amax * fp32(1/max))).

TEST(Rceil, BinadeEdges) {
  const QuantizeOptions te = recipes::transformer_engine_mxfp8(kE4m3);
  // 448 * fp32(1/448) is exactly 1 -> X = 1 (0x7F).
  EXPECT_EQ(q(kMx8, te, {448.0f}), (Result{0x7F, {0x7E}}));
  // One ulp above: the quotient exceeds 1 -> X = 2 (0x80); 224.00002 -> 224 = 1.75 * 2^7 (0x76).
  EXPECT_EQ(q(kMx8, te, {std::nextafter(448.0f, kInf)}), (Result{0x80, {0x76}}));
  // 480 does not clip under RCEIL (0x80, 240 -> 0x77), where FLOOR gave 0x7F and clipped.
  EXPECT_EQ(q(kMx8, te, {480.0f}), (Result{0x80, {0x77}}));
  // e2m1: 7 / 6 -> X = 2 (0x80); 3.5 is a tie 3 / 4 -> 4 (0x6).
  EXPECT_EQ(q(kMx4, recipes::transformer_engine_mxfp8(kE2m1), {7.0f}), (Result{0x80, {0x6}}));
  // 2^-100 / 448 = 2^-108.8 -> X = 2^-108 (0x13); 2^-100 * 2^108 = 256.
  EXPECT_EQ(q(kMx8, te, {0x1p-100f}), (Result{0x13, {0x78}}));
  // 448 * 2^-127 / 448 = 2^-127 exactly -> code 0 (RP keeps 2^-127); the smallest subnormal
  // quotient rounds to 0 -> code 0; 2^-127 * 2^127 = 448.
  EXPECT_EQ(q(kMx8, te, {448 * 0x1p-127f}), (Result{0x00, {0x7E}}));
  EXPECT_EQ(q(kMx8, te, {0x1p-149f}), (Result{0x00, {0x00}}));
}

TEST(Rceil, TransformerEngineNanAndInf) {
  const QuantizeOptions te = recipes::transformer_engine_mxfp8(kE4m3);
  // fmaxf leaves the NaN out of the amax; the NaN element converts to 0x7F.
  EXPECT_EQ(q(kMx8, te, {1.0f, kNan}), (Result{0x77, {0x78, 0x7F}}));
  // Inf amax -> cvt.rp.satfinite gives 0xFE; 1 * 2^-127 -> 0, Inf -> 448.
  EXPECT_EQ(q(kMx8, te, {1.0f, kInf}), (Result{0xFE, {0x00, 0x7E}}));
  // torchao RCEIL: non-finite -> 0xFF, all NaN.
  EXPECT_EQ(q(kMx8, recipes::torchao(kE4m3, recipes::TorchaoScaleMode::rceil), {1.0f, kInf}),
            (Result{0xFF, {0x7F, 0x7F}}));
  // All zeros: 0x00, zeros keep their sign.
  EXPECT_EQ(q(kMx8, te, {0.0f, -0.0f}), (Result{0x00, {0x00, 0x80}}));
}

// ---- triton_kernels ROUND_UP / ROUND_DOWN (downcast_to_mxfp_torch).

TEST(Triton, RoundUp) {
  const QuantizeOptions up = recipes::triton_kernels(kE4m3, recipes::TritonRounding::round_up);
  EXPECT_EQ(q(kMx8, up, {1.0f}), (Result{0x77, {0x78}}));
  // A subnormal quotient (2^-140 / 448) rounds up to 2^-126 (code 1) where RCEIL gives 0x00; the
  // element 2^-140 * 2^126 = 2^-14 underflows.
  EXPECT_EQ(q(kMx8, up, {0x1p-140f}), (Result{0x01, {0x00}}));
  // NaN amax: (0x7FFFFFFF + 0x7FFFFF) & 0x7F800000 = 0 -> code 0, quant scale 0: 1 * 0 = 0, NaN stays NaN.
  EXPECT_EQ(q(kMx8, up, {1.0f, kNan}), (Result{0x00, {0x00, 0x7F}}));
  // Inf amax -> 0xFF (decoded by triton as Inf), quant scale 1/Inf = 0: 1 -> 0, Inf * 0 = NaN.
  EXPECT_EQ(q(kMx8, up, {1.0f, kInf}), (Result{0xFF, {0x00, 0x7F}}));
  // Zeros -> code 0, quant scale 0.
  EXPECT_EQ(q(kMx8, up, {0.0f, -0.0f}), (Result{0x00, {0x00, 0x80}}));
  // e2m1 NaN: +-6 by the sign bit (canonical +NaN -> 0x7).
  EXPECT_EQ(q(kMx4, recipes::triton_kernels(kE2m1), {-1.0f, kInf}), (Result{0xFF, {0x8, 0x7}}));
}

TEST(Triton, RoundDown) {
  const QuantizeOptions down = recipes::triton_kernels(kE4m3, recipes::TritonRounding::round_down);
  EXPECT_EQ(q(kMx8, down, {1.0f, 480.0f / 256}), (Result{0x77, {0x78, 0x7E}}));
  // The largest float below 2^-118, divided by 256, is a tie on the fp32 subnormal grid and rounds
  // up to 2^-126: code 1 and quant scale 2^126 (OCP FLOOR: code 0 and 2^127, clipping to 448).
  const float x = std::nextafter(0x1p-118f, 0.0f);
  EXPECT_EQ(q(kMx8, down, {x}), (Result{0x01, {0x78}}));
  EXPECT_EQ(q(kMx8, recipes::ocp(kE4m3), {x}), (Result{0x00, {0x7E}}));
  // amax 2^-130: 2^-138 truncates to 0 -> code 0 and quant scale 0: the block flushes to zero
  // (OCP keeps 2^-3, see ZerosNanInfAndTinyBlocks).
  EXPECT_EQ(q(kMx8, down, {0x1p-130f, -0x1p-131f}), (Result{0x00, {0x00, 0x80}}));
  // NaN amax -> 0x7F800000 & mask -> 0xFF, quant scale 0.
  EXPECT_EQ(q(kMx8, down, {kNan, 2.0f}), (Result{0xFF, {0x7F, 0x00}}));
}

// ---- e2m1 with e8m0 scales in blocks of 16 (kind::mxf4nvf4 .scale_vec::4X).

TEST(Mxfp4Block16, SixteenElementBlocks) {
  std::vector<float> x(16, 0.5f);
  x[15] = -6.0f;  // amax 6 -> RCEIL X = 1 (0x7F)
  Result want{0x7F, std::vector<unsigned>(16, 0x1)};
  want.codes[15] = 0xF;
  EXPECT_EQ(q(block_formats::mxfp4_block16, recipes::transformer_engine_mxfp8(kE2m1), x), want);
}

// ---- NVFP4, TransformerEngine: S_enc = 2688 / G, block scale e4m3(amax * (S_enc / 6)).

TensorScale te_scale(float g) {
  QuantizeOptions o = recipes::nvfp4_transformer_engine();
  o.tensor_scale = TensorScaleSource::given_amax;
  return tensor_scale_for_amax(block_formats::nvfp4, o, g);
}
TensorScale torchao_scale(float g) {
  QuantizeOptions o = recipes::nvfp4_torchao(true);
  o.tensor_scale = TensorScaleSource::given_amax;
  return tensor_scale_for_amax(block_formats::nvfp4, o, g);
}

TEST(Nvfp4TransformerEngine, UnitTensorScale) {
  const BlockFormat f = block_formats::nvfp4;
  const QuantizeOptions te = recipes::nvfp4_transformer_engine();
  const TensorScale ts = te_scale(2688.0f);  // S_enc = 1, S_dec = 1
  EXPECT_EQ(ts.encode, 1.0f);
  EXPECT_EQ(ts.decode, 1.0f);
  // amax 6: 6 * fp32(1/6) = 1.0000000298 -> fp32 1.0 -> 0x38; multiplier 1. 2.5 tie 2/3 -> 2
  // (0x4), 0.75 tie 0.5/1 -> 1 (0x2), -0.25 tie 0/0.5 -> -0 (0x8).
  EXPECT_EQ(q(f, te, {6.0f, 3.0f, 2.5f, 0.75f, -0.25f}, ts), (Result{0x38, {0x7, 0x5, 0x4, 0x2, 0x8}}));
  // amax 7: 7/6 = 1.1667 -> e4m3 1.125 (0x39); 7 / 1.125 = 6.22 -> 6.
  EXPECT_EQ(q(f, te, {7.0f}, ts), (Result{0x39, {0x7}}));
}

TEST(Nvfp4TransformerEngine, ZeroAndTinyBlocks) {
  const BlockFormat f = block_formats::nvfp4;
  const QuantizeOptions te = recipes::nvfp4_transformer_engine();
  const TensorScale ts = te_scale(2688.0f);
  // Zeros: scale 0 (0x00), multiplier fminf(1/0, FLT_MAX) = FLT_MAX, 0 * FLT_MAX = 0.
  EXPECT_EQ(q(f, te, {0.0f, -0.0f}, ts), (Result{0x00, {0x0, 0x8}}));
  // amax 1e-6: 1.7e-7 rounds to a zero scale, and x * FLT_MAX saturates to +-6 (TE's arithmetic;
  // the block still decodes to 0 * 6 = 0).
  EXPECT_EQ(q(f, te, {1e-6f, -1e-6f}, ts), (Result{0x00, {0x7, 0xF}}));
  // Beyond the scale range: G = 1 makes S_enc = 2688; amax 6 -> 2688 -> saturates to 448 (0x7E),
  // multiplier 1 / (448 / 2688) ~ 6 and the elements saturate.
  EXPECT_EQ(q(f, te, {6.0f, -3.0f}, te_scale(1.0f)), (Result{0x7E, {0x7, 0xF}}));
}

TEST(Nvfp4TransformerEngine, StochasticRoundingWithCallerBits) {
  const BlockFormat f = block_formats::nvfp4;
  QuantizeOptions sr = recipes::nvfp4_transformer_engine();
  sr.element.rounding = Rounding::stochastic;
  sr.element.stochastic_bits = 8;
  const TensorScale ts = te_scale(2688.0f);
  // 2.5 sits halfway between 2 and 3: floor(0.5 * 256) = 128; up iff 128 + r >= 256 (low 8 bits).
  EXPECT_EQ(q(f, sr, {6.0f, 2.5f}, ts, {0, 127}), (Result{0x38, {0x7, 0x4}}));
  EXPECT_EQ(q(f, sr, {6.0f, 2.5f}, ts, {0, 128}), (Result{0x38, {0x7, 0x5}}));
  EXPECT_EQ(q(f, sr, {6.0f, 2.5f}, ts, {0, 0xFFFFFF7Fu}), (Result{0x38, {0x7, 0x4}}));
  // 6 is on the grid: never rounds, whatever the bits.
  EXPECT_EQ(q(f, sr, {6.0f}, ts, {255}), (Result{0x38, {0x7}}));
}

// ---- NVFP4, torchao: block scale e4m3(clamp((amax / 6) / P, 2^-6, 448)), P = G / 2688.

TEST(Nvfp4Torchao, TwoAndSingleLevel) {
  const BlockFormat f = block_formats::nvfp4;
  const QuantizeOptions two = recipes::nvfp4_torchao(true);
  const TensorScale ts = torchao_scale(2688.0f);  // P = 1
  EXPECT_EQ(ts.decode, 1.0f);
  EXPECT_EQ(q(f, two, {6.0f, 3.0f, 2.5f, -0.25f}, ts), (Result{0x38, {0x7, 0x5, 0x4, 0x8}}));
  // Zeros and tiny blocks: the scale is clamped to 2^-6 (0x08), never 0; 1e-6 * 64 -> 0.
  EXPECT_EQ(q(f, two, {0.0f, -0.0f}, ts), (Result{0x08, {0x0, 0x8}}));
  EXPECT_EQ(q(f, two, {1e-6f}, ts), (Result{0x08, {0x0}}));
  // Beyond the range: G = 1 -> (6/6) / (1/2688) = 2688 -> clamped to 448 (0x7E); elements saturate.
  EXPECT_EQ(q(f, two, {6.0f, -3.0f}, torchao_scale(1.0f)), (Result{0x7E, {0x7, 0xF}}));
  // torch.amax propagates NaN: NaN scale (0x7F) and NaN elements (+6 under the CUDA conversion).
  EXPECT_EQ(q(f, two, {1.0f, kNan}, ts), (Result{0x7F, {0x7, 0x7}}));
  // Single level: s = clamp(amax / 6); 12 / 6 = 2 (0x40), elements x / 2.
  const QuantizeOptions one = recipes::nvfp4_torchao(false);
  EXPECT_EQ(q(f, one, {12.0f, 5.0f, -1.0f}, TensorScale{}), (Result{0x40, {0x7, 0x4, 0x9}}));
}

// ---- block_amax: max |x| with the block's NaN rule, against a plain loop in double. Lengths past
// the parallel chunk (2^16) take the threads; NaN payloads of either sign, Inf, -0 and subnormals.

TEST(BlockAmax, MaxAbsUnderTheNanRule) {
  std::mt19937_64 rng(41);
  const float specials[] = {0.0f, -0.0f, kInf, -kInf, 0x1p-149f, -0x1p-126f, FLT_MAX, -1.5f,
                            std::bit_cast<float>(0x7FC00001u), std::bit_cast<float>(0xFF800001u)};
  for (std::size_t n : {std::size_t{1}, std::size_t{31}, std::size_t{1000}, std::size_t{200000}}) {
    for (int pattern = 0; pattern < 4; ++pattern) {  // plain, with specials, one NaN, every value NaN
      std::vector<float> x(n);
      std::normal_distribution<float> normal;
      for (float& v : x) v = std::ldexp(normal(rng), static_cast<int>(rng() % 60) - 30);
      if (pattern == 1)
        for (std::size_t i = 0; i < n; i += 1 + rng() % 97) x[i] = specials[rng() % 8];
      if (pattern == 2) x[rng() % n] = std::bit_cast<float>(0xFFC12345u);
      if (pattern == 3) std::fill(x.begin(), x.end(), kNan);
      bool any_nan = false;
      double largest = 0.0;
      for (float v : x) {
        any_nan |= std::isnan(v);
        if (!std::isnan(v)) largest = std::max(largest, std::fabs(static_cast<double>(v)));
      }
      SCOPED_TRACE(testing::Message() << "n " << n << " pattern " << pattern);
      EXPECT_EQ(std::bit_cast<std::uint32_t>(block_amax(x, BlockNan::propagate)),
                any_nan ? 0x7FFFFFFFu : std::bit_cast<std::uint32_t>(static_cast<float>(largest)));
      EXPECT_EQ(std::bit_cast<std::uint32_t>(block_amax(x, BlockNan::ignore)),
                std::bit_cast<std::uint32_t>(static_cast<float>(largest)));
    }
  }
}

// ---- Sizes that do not fit: each refused with the rule named.

TEST(BlockCalls, SizesThatDoNotFitAreRefused) {
  using test::invalid_argument_message;
  const QuantizeOptions o = recipes::ocp(kE4m3);
  std::vector<std::uint8_t> codes(33);
  const std::vector<float> x33(33, 1.0f);
  const auto x4 = std::span(x33).first(4);
  const auto c3 = std::span(codes).first(3), c4 = std::span(codes).first(4);
  EXPECT_EQ(invalid_argument_message([&] { quantize_block(x33, kMx8, o, {}, codes); }),
            "quantize_block: a block has 1 to 32 elements, got 33");
  EXPECT_EQ(invalid_argument_message([&] { quantize_block({}, kMx8, o, {}, {}); }),
            "quantize_block: a block has 1 to 32 elements, got 0");
  EXPECT_EQ(invalid_argument_message([&] { quantize_block(x4, kMx8, o, {}, c3); }),
            "quantize_block: 4 inputs but 3 output codes");
  const std::vector<std::uint32_t> bits(4, 0);
  EXPECT_EQ(invalid_argument_message([&] { quantize_block(x4, kMx8, o, {}, c4, bits); }),
            "quantize_block: random bits given but the element rounding is not stochastic");
  QuantizeOptions sr = o;
  sr.element.rounding = Rounding::stochastic;
  EXPECT_EQ(invalid_argument_message([&] { quantize_block(x4, kMx8, sr, {}, c4); }),
            "quantize_block: stochastic rounding needs one random word per element");
  std::vector<float> multipliers(2);
  EXPECT_EQ(invalid_argument_message([&] { block_scales_for_amax(kMx8, o, {}, std::span(x33).first(3), c3, multipliers); }),
            "block_scales_for_amax: 3 maxima, 3 codes and 2 multipliers");
}

// A global amax is a magnitude: a negative one gave a negative per-tensor scale, scale codes with
// the ue4m3 sign bit set (0xE5) and elements of the opposite sign (the audit of 2026-11-30). -0 is
// +0 (an amax computed as max |x| of nothing but -0).
TEST(Nvfp4TensorScale, NegativeAmaxAndNegativeScalesAreRefused) {
  using test::expect_throw_with;
  expect_throw_with([] { te_scale(-100.0f); }, "the tensor amax -100.000000 is a magnitude and must not be negative");
  expect_throw_with([] { torchao_scale(-1e-30f); }, "must not be negative");
  EXPECT_EQ(te_scale(-0.0f).encode, 1.0f);
  const QuantizeOptions o = recipes::nvfp4_transformer_engine();
  const float x[2] = {-12.0f, 1.5f};
  std::uint8_t codes[2];
  expect_throw_with([&] { quantize_block(x, block_formats::nvfp4, o, TensorScale{1.0f, -1.0f, -1.0f}, codes); },
                    "must not be negative");
  expect_throw_with([&] { block_scale_for_amax(block_formats::nvfp4, o, TensorScale{1.0f, 2.0f, -0.5f}, 4.0f); },
                    "must not be negative");
  EXPECT_NO_THROW(quantize_block(x, block_formats::nvfp4, o, te_scale(12.0f), codes));
}

// parse_scale_rule reads back to_string's name of every rule (names that differ from each other)
// and refuses any other word.
TEST(ScaleRuleNames, ParseReadsBackEveryNameAndNothingElse) {
  std::vector<std::string> names;
  for (int i = 0; i <= static_cast<int>(ScaleRule::nvfp4_torchao); ++i) {
    const auto rule = static_cast<ScaleRule>(i);
    names.push_back(to_string(rule));
    EXPECT_EQ(parse_scale_rule(names.back()), rule) << names.back();
  }
  std::sort(names.begin(), names.end());
  EXPECT_EQ(std::adjacent_find(names.begin(), names.end()), names.end());
  for (const char* bad : {"", "RCEIL", "floor", "rceil ", "ScaleRule(8)", "nvfp4"})
    EXPECT_EQ(parse_scale_rule(bad), std::nullopt) << bad;
}

}  // namespace
