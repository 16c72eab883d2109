// SPDX-License-Identifier: Apache-2.0
// Operands stored the way kernels store them, turned into the plain tensors the reference
// operations compute on: sub-byte packing and scale layouts are undone here (layout/), and
// BlockScaledTensors (quantize/tensor.h) become mma_scaled operands.
#pragma once

#include <cstdint>
#include <span>

#include "blockscale/layout/scale_layout.h"
#include "blockscale/quantize/tensor.h"
#include "blockscale/reference/mma_scaled.h"
#include "blockscale/reference/tensor.h"

namespace blockscale::reference {

// Which operand of mma_scaled a scale tensor belongs to.
enum class Side : std::uint8_t { x, y };

// Undoes a scale storage layout. `storage` holds `batch` images of the layout's logical R x C
// matrix, R running along M (for x) or N (for y) and C = K_s blocks along K, as every layout of
// the catalogue stores operand scales. Returns the scale tensor mma_scaled takes:
//   x: [M, K_s] when batch == 0, else [batch, M, K_s];
//   y: the transpose, [K_s, N] or [batch, K_s, N].
// Padding is not read. Throws std::invalid_argument for layout and size errors (the layout
// library's messages) and for a dtype that is not a one-byte scale type (e8m0, e4m3fn, ue4m3).
Tensor scales_from_layout(DType scale_dtype, const ScaleLayout& layout, Side side, std::int64_t batch,
                          std::int64_t R, std::int64_t C, std::span<const std::uint8_t> storage);

// A BlockScaledTensor as an mma_scaled operand. The tensor stores its rows K-major whatever its
// source orientation (quantize/tensor.h): rows are M for x and N for y, so
//   x: values [batch?, M, K], scales [batch?, M, K_s];
//   y: values [batch?, K, N], scales [batch?, K_s, N] (both transposed from the stored form).
// K is the stored K (k_stored: a zero-padded tail block takes part as +0 products). The packing
// and the scale layout are undone. NVFP4's fp32 per-tensor scale is not part of mma_scaled (the
// cuda.tile definition has none); it is returned here, as the decode scale the caller multiplies
// the result by (cuBLAS's alpha).
struct ScaledOperand {
  Tensor values;
  Tensor scales;
  float tensor_scale = 1.0f;
};
ScaledOperand scaled_operand(const BlockScaledTensor& t, Side side);

// mma_scaled(x, x_scale, y, y_scale, acc) on two BlockScaledTensors. Both must have a per-tensor
// scale of 1 (every e8m0 format; NVFP4 quantized with TensorScaleSource::none): a per-tensor
// scale is outside mma_scaled's definition, so it is refused (RuleError, Rule::tensor_scale)
// rather than dropped; use scaled_operand and multiply the result by the two scales instead.
Tensor mma_scaled(const BlockScaledTensor& x, const BlockScaledTensor& y, const Tensor& acc,
                  const ScaledMmaOptions& options = {});

}  // namespace blockscale::reference
