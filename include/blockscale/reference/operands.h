// SPDX-License-Identifier: Apache-2.0
// Operands stored the way kernels store them, turned into the plain tensors the reference
// operations compute on: scale layouts are undone here (layout/scale_layout.h).
#pragma once

#include <cstdint>
#include <span>

#include "blockscale/layout/scale_layout.h"
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
// library's messages) and for a dtype that is not a one-byte scale type (e8m0, ue4m3).
Tensor scales_from_layout(DType scale_dtype, const ScaleLayout& layout, Side side, std::int64_t batch,
                          std::int64_t R, std::int64_t C, std::span<const std::uint8_t> storage);

}  // namespace blockscale::reference
