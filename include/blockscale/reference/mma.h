// SPDX-License-Identifier: Apache-2.0
// mma and matmul exactly as the cuda.tile C++ API defines them (ct::mma, ct::matmul,
// ct::mma_compatible, ct::matmul_result_t; seed 004):
//
//   mma:    r[..., i, j] = sum_k lhs[..., i, k] * rhs[..., k, j] + acc[..., i, j]
//   matmul: r[..., i, j] = sum_k lhs[..., i, k] * rhs[..., k, j]
//
// Shapes: lhs [N, K] / [A, N, K], rhs [K, M] / [B, K, M] (the docs' letters), all of one rank,
// 2 or 3. mma: acc [N, M] / [C, N, M] with A = C or 1 and B = C or 1; the result has acc's shape.
// matmul: A = B or one of them 1; the result is [max(A, B), N, M].
//
// Types: lhs and rhs have the same type, except that the 8-bit integers (int8, uint8) mix with
// each other and the fp8 types (e4m3, e5m2) mix with each other ("integral scalars of the same
// bitwidth or floating point scalars of the same conversion rank"). The accumulator / result type
// comes from the tables below. The result of mma has acc's type.
//
// Numerics (numerics.h): exact rounds the exact sum once to the result type (nearest-even for
// f16 / f32 / f64; int32 wraps modulo 2^32 unless IntegerOverflow::saturate). sequential adds the
// products in k order with one fused multiply-add per k in the accumulator type (fmaf for f32,
// fma for f64, an exactly computed a*b+c rounded to f16 for f16, wrapping or saturating int32 adds).
#pragma once

#include <array>

#include "blockscale/reference/numerics.h"
#include "blockscale/reference/tensor.h"

namespace blockscale::reference {

struct MmaRow {
  DType operand;
  DType accumulator;
};

// ct::mma_compatible, condition 2.
// clang-format off
inline constexpr std::array<MmaRow, 12> kMmaTable = {{
  {DType::int8,          DType::int32},
  {DType::uint8,         DType::int32},
  {DType::float8_e4m3fn, DType::float16},
  {DType::float8_e4m3fn, DType::float32},
  {DType::float8_e5m2,   DType::float16},
  {DType::float8_e5m2,   DType::float32},
  {DType::float16,       DType::float16},
  {DType::float16,       DType::float32},
  {DType::bfloat16,      DType::float32},
  {DType::tfloat32,      DType::float32},
  {DType::float32,       DType::float32},
  {DType::float64,       DType::float64},
}};

// ct::matmul_result_t.
inline constexpr std::array<MmaRow, 9> kMatmulTable = {{
  {DType::int8,          DType::int32},
  {DType::uint8,         DType::int32},
  {DType::float8_e4m3fn, DType::float16},
  {DType::float8_e5m2,   DType::float16},
  {DType::float16,       DType::float16},
  {DType::bfloat16,      DType::float32},
  {DType::tfloat32,      DType::float32},
  {DType::float32,       DType::float32},
  {DType::float64,       DType::float64},
}};
// clang-format on

Tensor mma(const Tensor& lhs, const Tensor& rhs, const Tensor& acc, const Numerics& numerics = Numerics::exact());
Tensor matmul(const Tensor& lhs, const Tensor& rhs, const Numerics& numerics = Numerics::exact());

// Only the checks (throw RuleError).
void check_mma(const Tensor& lhs, const Tensor& rhs, const Tensor& acc);
void check_matmul(const Tensor& lhs, const Tensor& rhs);
// matmul's result type for these operand types (throws RuleError for an incompatible pair).
DType matmul_result_dtype(DType lhs, DType rhs);

}  // namespace blockscale::reference
