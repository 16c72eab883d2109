// SPDX-License-Identifier: Apache-2.0
// mma_scaled: block-scaled matrix multiply-accumulate exactly as cuda.tile defines it
// (cuda.tile.mma_scaled; seed 000):
//
//   result[..., i, j] = sum_k x[..., i, k] * x_scale[..., i, k // B]
//                             * y[..., k, j] * y_scale[..., k // B, j]  + acc[..., i, j]
//
//   x: [..., M, K]   x_scale: [..., M, K_s]   y: [..., K, N]   y_scale: [..., K_s, N]
//   acc, result: float32 [..., M, N]; rank 2 or 3; B = K / K_s, K a multiple of K_s.
//
// Types (kScaledMmaTable): f8e4m3fn / f8e5m2 with e8m0 scales and B = 32; f4e2m1 with e8m0 and
// B = 16 or 32; f4e2m1 with f8e4m3fn scales and B = 16 (NVFP4). x and y have one input type,
// x_scale and y_scale one scale type. The NVFP4 row also takes float8_ue4m3 scales, blockscale's
// name for the same byte read as the hardware reads it (tcgen05.mma kind::mxf4nvf4 ignores the
// sign bit, numerics.md b.5): the formula then uses |scale|, while f8e4m3fn scales keep their sign
// in the exact and sequential numerics (a hardware model reads both as ue4m3). ScaledMmaOptions::hardware_extensions adds what Blackwell's tcgen05.mma
// kind::mxf8f6f4 accepts beyond that (PTX ISA, tcgen05.mma block scaling): fp6 e2m3 / e3m2 with
// e8m0 and B = 32, and x and y of different types among e4m3, e5m2, e2m3, e3m2, e2m1 (e8m0, B = 32).
//
// Batch: the batches of x and y broadcast against each other (each is absent, 1 or the other's);
// x_scale's batch must equal x's exactly and y_scale's y's exactly, and they follow their operand.
// acc and the result have the output shape: rank max(rank x, rank y), batch the broadcast batch
// of x and y, then [M, N] (cuda.tile: "both are then broadcast to the output batch shape").
//
// Every broken rule throws RuleError (rules.h) naming the rule and the sizes. Numerics: see
// numerics.h and docs/reference.md.
#pragma once

#include <array>
#include <cstdint>

#include "blockscale/reference/numerics.h"
#include "blockscale/reference/tensor.h"

namespace blockscale::reference {

struct ScaledMmaRow {
  DType input;
  DType scale;
  int block;        // B
  bool extension;   // only with ScaledMmaOptions::hardware_extensions
  const char* source;
};

// clang-format off
inline constexpr std::array<ScaledMmaRow, 8> kScaledMmaTable = {{
  {DType::float8_e4m3fn, DType::float8_e8m0fnu, 32, false, "cuda.tile mma_scaled"},
  {DType::float8_e5m2,   DType::float8_e8m0fnu, 32, false, "cuda.tile mma_scaled"},
  {DType::float4_e2m1fn, DType::float8_e8m0fnu, 16, false, "cuda.tile mma_scaled"},
  {DType::float4_e2m1fn, DType::float8_e8m0fnu, 32, false, "cuda.tile mma_scaled"},
  {DType::float4_e2m1fn, DType::float8_e4m3fn,  16, false, "cuda.tile mma_scaled"},
  {DType::float4_e2m1fn, DType::float8_ue4m3,   16, false, "tcgen05.mma kind::mxf4nvf4 (the NVFP4 row, sign bit ignored)"},
  {DType::float6_e2m3fn, DType::float8_e8m0fnu, 32, true,  "tcgen05.mma kind::mxf8f6f4"},
  {DType::float6_e3m2fn, DType::float8_e8m0fnu, 32, true,  "tcgen05.mma kind::mxf8f6f4"},
}};
// clang-format on

struct ScaledMmaOptions {
  Numerics numerics = Numerics::exact();
  // The named extension: the kind::mxf8f6f4 combinations beyond the cuda.tile table (see above).
  bool hardware_extensions = false;
};

Tensor mma_scaled(const Tensor& x, const Tensor& x_scale, const Tensor& y, const Tensor& y_scale,
                  const Tensor& acc, const ScaledMmaOptions& options = {});

// Only the checks of mma_scaled (throws RuleError); returns B.
int check_mma_scaled(const Tensor& x, const Tensor& x_scale, const Tensor& y, const Tensor& y_scale,
                     const Tensor& acc, bool hardware_extensions = false);

}  // namespace blockscale::reference
