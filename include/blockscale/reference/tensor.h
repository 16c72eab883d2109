// SPDX-License-Identifier: Apache-2.0
// A small dense row-major tensor of codes of one DType: the operand and result type of the
// reference operations. It owns its codes (one 64-bit word per element, see dtype.h) and checks
// that they are valid codes of the type. Shapes are [..., rows, cols]; the operations accept rank
// 2 and 3.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "blockscale/formats/convert.h"
#include "blockscale/formats/presets.h"
#include "blockscale/reference/dtype.h"

namespace blockscale::reference {

using Shape = std::vector<std::int64_t>;

std::string to_string(const Shape& shape);  // "[2, 64]"

class Tensor {
 public:
  Tensor() = default;
  // Takes ownership of the codes. Throws std::invalid_argument when the shape is empty or has a
  // negative extent, when codes.size() is not the product of the extents, or when a code has bits
  // set above code_bits(dtype).
  Tensor(DType dtype, Shape shape, std::vector<std::uint64_t> codes);

  // Every element the same code / zero (+0; e8m0 has no zero and gets code 0x00 = 2^-127).
  static Tensor filled(DType dtype, Shape shape, std::uint64_t code);
  static Tensor zeros(DType dtype, Shape shape);
  // Values converted to the type. Floating types round with `options` (IEEE 754 nearest-even by
  // default, formats' convert); integer types require integral values in range and throw otherwise.
  static Tensor from_values(DType dtype, Shape shape, std::span<const double> values,
                            const ConvertOptions& options = presets::ieee());
  static Tensor full(DType dtype, Shape shape, double value, const ConvertOptions& options = presets::ieee());
  // ct::iota: element n (row-major) holds the value n, converted as by from_values.
  static Tensor iota(DType dtype, Shape shape);

  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  int rank() const { return static_cast<int>(shape_.size()); }
  std::int64_t size() const { return static_cast<std::int64_t>(codes_.size()); }
  std::int64_t extent(int dim) const;  // dim < 0 counts from the end (-1 = last)

  std::span<const std::uint64_t> codes() const { return codes_; }
  std::uint64_t code(std::int64_t flat_index) const { return codes_.at(static_cast<std::size_t>(flat_index)); }
  double value(std::int64_t flat_index) const { return to_double(dtype_, code(flat_index)); }
  std::vector<double> values() const;

  // The same values with the sign flipped (IEEE negate: the sign bit; integers: -v, which must
  // fit). Throws for unsigned types (e8m0, ue4m3, uint8).
  Tensor negated() const;
  // The last two dimensions swapped.
  Tensor transposed() const;

  // Same dtype, shape and codes (bit equality: NaNs compare by payload, -0 != +0).
  friend bool operator==(const Tensor& a, const Tensor& b) = default;

  // Nested-bracket text of the values, e.g. "[[28, 35], [78, 101]]" (%.9g; nan, inf).
  std::string to_string() const;

 private:
  DType dtype_ = DType::float32;
  Shape shape_;
  std::vector<std::uint64_t> codes_;
};

// Encodes one value in a floating DType with one rounding (float64: the double itself).
std::uint64_t encode(DType dtype, double value, const ConvertOptions& options = presets::ieee());

}  // namespace blockscale::reference
