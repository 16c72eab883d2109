// SPDX-License-Identifier: Apache-2.0
#include "blockscale/reference/operands.h"

#include <stdexcept>

#include "blockscale/formats/detail/enum_check.h"
#include "blockscale/reference/rules.h"
#include "common.h"

namespace blockscale::reference {

Tensor scales_from_layout(DType scale_dtype, const ScaleLayout& layout, Side side, std::int64_t batch, std::int64_t R,
                          std::int64_t C, std::span<const std::uint8_t> storage) {
  blockscale::detail::require_enumerator(side, Side::y, "Side", "scales_from_layout: side");
  if (!detail::is_block_scale_dtype(scale_dtype))
    throw std::invalid_argument("scales_from_layout: " + to_string(scale_dtype) +
                                " is not a one-byte block-scale type (float8_e8m0fnu, float8_e4m3fn, float8_ue4m3)");
  if (batch < 0) throw std::invalid_argument("scales_from_layout: batch " + std::to_string(batch) + " is negative");
  if (R < 0 || C < 0) {
    throw std::invalid_argument("scales_from_layout: extents R = " + std::to_string(R) + " and C = " +
                                std::to_string(C) + " must not be negative");
  }
  const std::int64_t mats = batch == 0 ? 1 : batch;
  // The layout library's own limit, checked here before the buffer is sized from the product.
  constexpr std::int64_t kMaxElements = std::int64_t{1} << 62;
  if (R != 0 && C != 0 && (mats > kMaxElements / R || mats * R > kMaxElements / C)) {
    throw std::invalid_argument("scales_from_layout: batch x R x C = " + std::to_string(mats) + " x " +
                                std::to_string(R) + " x " + std::to_string(C) + " is above 2^62 elements");
  }
  // The stored image's size before the row-major buffer is allocated from the product: a call at the
  // 2^62 limit with a short image is refused by its rule, not by a failed allocation of 2^62 bytes.
  const std::int64_t per_item = storage_size(layout, R, C);
  const auto have = static_cast<std::int64_t>(storage.size());
  if (per_item == 0 ? have != 0 : (have % per_item != 0 || have / per_item != mats)) {
    throw std::invalid_argument("scales_from_layout: the stored scales hold " + std::to_string(have) +
                                " bytes; the layout needs batch x storage_size = " + std::to_string(mats) + " x " +
                                std::to_string(per_item));
  }
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

ScaledOperand scaled_operand(const BlockScaledTensor& t, Side side) {
  blockscale::detail::require_enumerator(side, Side::y, "Side", "scaled_operand: side");
  const BlockScaledDesc& d = t.desc();
  const std::int64_t batch = d.batch(), rows = d.rows(), K = d.k_stored(), Ks = d.k_blocks();
  const bool batched = d.shape.size() == 3;
  const std::vector<std::uint8_t> e = t.element_codes();  // [batch][rows][K]
  const std::vector<std::uint8_t> s = t.scale_codes();    // [batch][rows][K_s]
  auto build = [&](DType dtype, const std::vector<std::uint8_t>& src, std::int64_t cols) {
    std::vector<std::uint64_t> codes(src.size());
    for (std::int64_t b = 0; b < batch; ++b)
      for (std::int64_t r = 0; r < rows; ++r)
        for (std::int64_t c = 0; c < cols; ++c) {
          const std::int64_t from = (b * rows + r) * cols + c;
          // x keeps the stored [rows, cols]; y is its transpose [cols, rows].
          const std::int64_t to = side == Side::x ? from : (b * cols + c) * rows + r;
          codes[static_cast<std::size_t>(to)] = src[static_cast<std::size_t>(from)];
        }
    Shape shape = side == Side::x ? Shape{rows, cols} : Shape{cols, rows};
    if (batched) shape.insert(shape.begin(), batch);
    return Tensor(dtype, std::move(shape), std::move(codes));
  };
  return {build(dtype_of(d.format.element), e, K), build(dtype_of(d.format.scale), s, Ks), t.tensor_scale().decode};
}

Tensor mma_scaled(const BlockScaledTensor& x, const BlockScaledTensor& y, const Tensor& acc,
                  const ScaledMmaOptions& options) {
  const ScaledOperand a = scaled_operand(x, Side::x), b = scaled_operand(y, Side::y);
  for (const auto& [name, op] : {std::pair{"x", &a}, std::pair{"y", &b}})
    if (op->tensor_scale != 1.0f)
      throw RuleError(Rule::tensor_scale, "mma_scaled",
                      std::string(name) + " carries a per-tensor scale " + std::to_string(op->tensor_scale) +
                          ", which mma_scaled does not define; use scaled_operand() and scale the result");
  return mma_scaled(a.values, a.scales, b.values, b.scales, acc, options);
}

}  // namespace blockscale::reference
