// SPDX-License-Identifier: Apache-2.0
#include "blockscale/reference/tensor.h"

#include <bit>
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>

#include "blockscale/formats/detail/ieee_mode.h"

namespace blockscale::reference {

std::string to_string(const Shape& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

namespace {

std::uint64_t code_limit(DType t) {
  const int b = code_bits(t);
  return b >= 64 ? ~std::uint64_t{0} : ((std::uint64_t{1} << b) - 1);
}

std::int64_t element_count(const Shape& shape) {
  if (shape.empty()) throw std::invalid_argument("tensor shape must have at least one dimension");
  // The product of the nonzero extents must fit too: strides and batch counts are products of
  // extents, even in a tensor that holds no element ({0, 2^62, 2^62} would overflow them).
  std::int64_t nonzero = 1;
  bool empty = false;
  for (const std::int64_t e : shape) {
    if (e < 0) throw std::invalid_argument("tensor shape " + to_string(shape) + " has a negative extent");
    if (e == 0) {
      empty = true;
      continue;
    }
    if (nonzero > std::numeric_limits<std::int64_t>::max() / e)
      throw std::invalid_argument("tensor shape " + to_string(shape) + " has too many elements");
    nonzero *= e;
  }
  return empty ? 0 : nonzero;
}

std::uint64_t encode_integer(DType dtype, double v) {
  // Under a caller's DAZ a subnormal v would compare equal to its truncation (0) and pass as the
  // integer 0.
  const blockscale::detail::IeeeMode ieee;
  const double lo = dtype == DType::int8 ? -128.0 : dtype == DType::uint8 ? 0.0 : -2147483648.0;
  const double hi = dtype == DType::int8 ? 127.0 : dtype == DType::uint8 ? 255.0 : 2147483647.0;
  if (!(v >= lo && v <= hi) || std::trunc(v) != v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.17g", v);
    throw std::invalid_argument(std::string("value ") + buf + " is not an integer of " + to_string(dtype));
  }
  const auto i = static_cast<std::int64_t>(v);
  return static_cast<std::uint64_t>(i) & code_limit(dtype);
}

}  // namespace

std::uint64_t encode(DType dtype, double value, const ConvertOptions& options) {
  if (dtype == DType::float64) return std::bit_cast<std::uint64_t>(value);
  if (is_integer(dtype)) return encode_integer(dtype, value);
  return convert(format_of(dtype), value, options);
}

Tensor::Tensor(DType dtype, Shape shape, std::vector<std::uint64_t> codes)
    : dtype_(dtype), shape_(std::move(shape)), codes_(std::move(codes)) {
  const std::int64_t n = element_count(shape_);
  if (static_cast<std::int64_t>(codes_.size()) != n)
    throw std::invalid_argument("tensor of shape " + reference::to_string(shape_) + " needs " + std::to_string(n) +
                                " codes, got " + std::to_string(codes_.size()));
  const std::uint64_t limit = code_limit(dtype_);
  for (std::size_t i = 0; i < codes_.size(); ++i) {
    if (codes_[i] & ~limit)
      throw std::invalid_argument("code 0x" + [&] {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%llX", static_cast<unsigned long long>(codes_[i]));
        return std::string(buf);
      }() + " at element " + std::to_string(i) + " has bits above the " + std::to_string(code_bits(dtype_)) +
                                  " bits of " + reference::to_string(dtype_));
  }
}

Tensor Tensor::filled(DType dtype, Shape shape, std::uint64_t code) {
  const std::int64_t n = element_count(shape);
  return Tensor(dtype, std::move(shape), std::vector<std::uint64_t>(static_cast<std::size_t>(n), code));
}

Tensor Tensor::zeros(DType dtype, Shape shape) { return filled(dtype, std::move(shape), 0); }

Tensor Tensor::from_values(DType dtype, Shape shape, std::span<const double> values, const ConvertOptions& options) {
  std::vector<std::uint64_t> codes(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) codes[i] = encode(dtype, values[i], options);
  return Tensor(dtype, std::move(shape), std::move(codes));
}

Tensor Tensor::full(DType dtype, Shape shape, double value, const ConvertOptions& options) {
  return filled(dtype, std::move(shape), encode(dtype, value, options));
}

Tensor Tensor::iota(DType dtype, Shape shape) {
  const std::int64_t n = element_count(shape);
  std::vector<double> v(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = static_cast<double>(i);
  return from_values(dtype, std::move(shape), v);
}

std::int64_t Tensor::extent(int dim) const {
  const int r = rank();
  const int d = dim < 0 ? r + dim : dim;
  if (d < 0 || d >= r)
    throw std::out_of_range("dimension " + std::to_string(dim) + " of a rank-" + std::to_string(r) + " tensor");
  return shape_[static_cast<std::size_t>(d)];
}

std::vector<double> Tensor::values() const {
  std::vector<double> v(codes_.size());
  for (std::size_t i = 0; i < codes_.size(); ++i) v[i] = to_double(dtype_, codes_[i]);
  return v;
}

Tensor Tensor::negated() const {
  std::vector<std::uint64_t> out(codes_.size());
  if (is_integer(dtype_)) {
    if (dtype_ == DType::uint8) throw std::invalid_argument("negated: uint8 has no negative values");
    for (std::size_t i = 0; i < codes_.size(); ++i) out[i] = encode(dtype_, -to_double(dtype_, codes_[i]));
  } else {
    const std::uint64_t sign = dtype_ == DType::float64 ? (std::uint64_t{1} << 63) : sign_mask(format_of(dtype_));
    if (sign == 0) throw std::invalid_argument("negated: " + reference::to_string(dtype_) + " is unsigned");
    for (std::size_t i = 0; i < codes_.size(); ++i) out[i] = codes_[i] ^ sign;
  }
  return Tensor(dtype_, shape_, std::move(out));
}

Tensor Tensor::transposed() const {
  if (rank() < 2) throw std::invalid_argument("transposed: needs rank >= 2, got shape " + reference::to_string(shape_));
  const std::int64_t rows = extent(-2), cols = extent(-1);
  const std::int64_t mats = size() / std::max<std::int64_t>(rows * cols, 1);
  Shape s = shape_;
  std::swap(s[s.size() - 1], s[s.size() - 2]);
  std::vector<std::uint64_t> out(codes_.size());
  for (std::int64_t b = 0; b < mats; ++b)
    for (std::int64_t i = 0; i < rows; ++i)
      for (std::int64_t j = 0; j < cols; ++j)
        out[static_cast<std::size_t>(b * rows * cols + j * rows + i)] =
            codes_[static_cast<std::size_t>(b * rows * cols + i * cols + j)];
  return Tensor(dtype_, std::move(s), std::move(out));
}

std::string Tensor::to_string() const {
  std::string s;
  std::vector<std::int64_t> stride(shape_.size(), 1);
  for (int d = rank() - 2; d >= 0; --d) stride[static_cast<std::size_t>(d)] = stride[static_cast<std::size_t>(d) + 1] * shape_[static_cast<std::size_t>(d) + 1];
  // Recursive nesting over dimensions.
  auto rec = [&](auto&& self, int dim, std::int64_t base) -> void {
    s += '[';
    const std::int64_t n = shape_[static_cast<std::size_t>(dim)];
    for (std::int64_t i = 0; i < n; ++i) {
      if (i) s += ", ";
      const std::int64_t at = base + i * stride[static_cast<std::size_t>(dim)];
      if (dim + 1 == rank()) {
        char buf[40];
        std::snprintf(buf, sizeof buf, "%.9g", value(at));
        s += buf;
      } else {
        self(self, dim + 1, at);
      }
    }
    s += ']';
  };
  if (rank() > 0) rec(rec, 0, 0);
  return s;
}

}  // namespace blockscale::reference
