// SPDX-License-Identifier: Apache-2.0
#include "blockscale/reference/operands.h"

#include <stdexcept>

namespace blockscale::reference {

Tensor scales_from_layout(DType scale_dtype, const ScaleLayout& layout, Side side, std::int64_t batch, std::int64_t R,
                          std::int64_t C, std::span<const std::uint8_t> storage) {
  if (scale_dtype != DType::float8_e8m0fnu && scale_dtype != DType::float8_ue4m3)
    throw std::invalid_argument("scales_from_layout: " + to_string(scale_dtype) +
                                " is not a one-byte block-scale type (float8_e8m0fnu, float8_ue4m3)");
  if (batch < 0) throw std::invalid_argument("scales_from_layout: batch " + std::to_string(batch) + " is negative");
  const std::int64_t mats = batch == 0 ? 1 : batch;
  std::vector<std::uint8_t> row_major(static_cast<std::size_t>(mats * R * C));
  from_layout(layout, mats, R, C, storage, row_major);
  std::vector<std::uint64_t> codes(row_major.size());
  for (std::int64_t b = 0; b < mats; ++b)
    for (std::int64_t r = 0; r < R; ++r)
      for (std::int64_t c = 0; c < C; ++c) {
        const std::uint8_t v = row_major[static_cast<std::size_t>((b * R + r) * C + c)];
        // x_scale is [M, K_s] = the logical matrix; y_scale is [K_s, N], its transpose.
        const std::int64_t at = side == Side::x ? (b * R + r) * C + c : (b * C + c) * R + r;
        codes[static_cast<std::size_t>(at)] = v;
      }
  Shape shape = side == Side::x ? Shape{R, C} : Shape{C, R};
  if (batch != 0) shape.insert(shape.begin(), batch);
  return Tensor(scale_dtype, std::move(shape), std::move(codes));
}

}  // namespace blockscale::reference
