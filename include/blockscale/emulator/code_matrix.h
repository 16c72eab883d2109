// SPDX-License-Identifier: Apache-2.0
// A read-only view of a matrix of format codes: the operand, scale and accumulator arrays the
// models consume. One code per storage word (as in formats/bulk.h: uint8_t for formats of up to
// 8 bits, uint16_t for f16/bf16, uint32_t for tf32/f32); wider words are accepted too (the code
// sits in the low bits; tf32 is an fp32 bit pattern, numerics.md b.1). Packed fp4/fp6 and
// swizzled scale layouts are undone by the caller (blockscale/layout) or by the BlockScaledTensor
// entry points.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "blockscale/formats/format.h"

namespace blockscale::emulator {

enum class Order : std::uint8_t { row_major, col_major };

class CodeMatrix {
 public:
  CodeMatrix() = default;  // absent (no scales, C = +0)
  CodeMatrix(Format format, std::size_t rows, std::size_t cols, std::span<const std::uint8_t> codes,
             Order order = Order::row_major);
  CodeMatrix(Format format, std::size_t rows, std::size_t cols, std::span<const std::uint16_t> codes,
             Order order = Order::row_major);
  CodeMatrix(Format format, std::size_t rows, std::size_t cols, std::span<const std::uint32_t> codes,
             Order order = Order::row_major);

  bool empty() const { return data_ == nullptr; }
  Format format() const { return format_; }
  std::size_t rows() const { return rows_; }
  std::size_t cols() const { return cols_; }
  int word_bits() const { return word_bits_; }

  // The words, word_bits() wide, the one at (r, c) at index r * row_stride() + c * col_stride()
  // (for bulk readers that hoist the width out of their loops).
  const void* data() const { return data_; }
  std::size_t row_stride() const { return row_stride_; }
  std::size_t col_stride() const { return col_stride_; }

  // The storage word at (r, c): a code of format(), or for tf32 an fp32 bit pattern. No bounds check.
  std::uint32_t word(std::size_t r, std::size_t c) const {
    const std::size_t i = r * row_stride_ + c * col_stride_;
    switch (word_bits_) {
      case 8: return static_cast<const std::uint8_t*>(data_)[i];
      case 16: return static_cast<const std::uint16_t*>(data_)[i];
      default: return static_cast<const std::uint32_t*>(data_)[i];
    }
  }

  // Throws std::invalid_argument naming `what` when a word holds bits outside the format's code
  // (e.g. 0x1F in an e2m1 array); ue4m3 bit 7 is allowed (ignored by the hardware, b.5).
  void check_codes(const std::string& what) const;

 private:
  void init(Format format, std::size_t rows, std::size_t cols, const void* data, std::size_t size, int word_bits,
            Order order);

  Format format_ = Format::float32;
  std::size_t rows_ = 0, cols_ = 0;
  const void* data_ = nullptr;
  int word_bits_ = 32;
  std::size_t row_stride_ = 0, col_stride_ = 0;
};

}  // namespace blockscale::emulator
