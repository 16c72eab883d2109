// SPDX-License-Identifier: Apache-2.0
#include "blockscale/emulator/code_matrix.h"

#include "blockscale/formats/convert.h"
#include "blockscale/formats/detail/enum_check.h"

#include <cstdio>
#include <limits>
#include <stdexcept>

namespace blockscale::emulator {

CodeMatrix::CodeMatrix(Format format, std::size_t rows, std::size_t cols, std::span<const std::uint8_t> codes,
                       Order order) {
  init(format, rows, cols, codes.data(), codes.size(), 8, order);
}
CodeMatrix::CodeMatrix(Format format, std::size_t rows, std::size_t cols, std::span<const std::uint16_t> codes,
                       Order order) {
  init(format, rows, cols, codes.data(), codes.size(), 16, order);
}
CodeMatrix::CodeMatrix(Format format, std::size_t rows, std::size_t cols, std::span<const std::uint32_t> codes,
                       Order order) {
  init(format, rows, cols, codes.data(), codes.size(), 32, order);
}

void CodeMatrix::init(Format format, std::size_t rows, std::size_t cols, const void* data, std::size_t size,
                      int word_bits, Order order) {
  if (!is_known(format)) throw std::invalid_argument("CodeMatrix: " + to_string(format));
  blockscale::detail::require_enumerator(order, Order::col_major, "Order", "CodeMatrix: order");
  // A word must hold the code, and for tf32 the whole fp32 pattern (the code sits in bits 31..13).
  const int needed = info(format).code_shift + width(format);
  if (word_bits < needed) {
    throw std::invalid_argument(to_string(format) + " codes need words of at least " +
                                std::to_string(needed <= 8 ? 8 : needed <= 16 ? 16 : 32) + " bits, got " +
                                std::to_string(word_bits) + "-bit words");
  }
  // rows * cols must not wrap (2 x 2^63 would compare equal to an empty span).
  if (cols != 0 && rows > std::numeric_limits<std::size_t>::max() / cols) {
    throw std::invalid_argument("a " + std::to_string(rows) + " x " + std::to_string(cols) + " " + to_string(format) +
                                " matrix has more elements than a size_t counts");
  }
  if (size != rows * cols) {
    throw std::invalid_argument("a " + std::to_string(rows) + " x " + std::to_string(cols) + " " +
                                to_string(format) + " matrix needs " + std::to_string(rows * cols) +
                                " codes, got " + std::to_string(size));
  }
  format_ = format;
  rows_ = rows;
  cols_ = cols;
  // A 0 x n matrix is present (not absent): give it a non-null address that is never read.
  static const std::uint32_t kNoCodes = 0;
  data_ = size == 0 ? static_cast<const void*>(&kNoCodes) : data;
  word_bits_ = word_bits;
  row_stride_ = order == Order::row_major ? cols : 1;
  col_stride_ = order == Order::row_major ? 1 : rows;
}

void CodeMatrix::check_codes(const std::string& what) const {
  if (empty()) return;
  const std::uint32_t mask = format_ == Format::float8_ue4m3 ? 0xFFu : to_storage(format_, code_mask(format_));
  // tf32 storage is any fp32 pattern: the low 13 bits are dropped by truncation (numerics.md b.1).
  const std::uint32_t allowed = format_ == Format::tfloat32 ? 0xFFFFFFFFu : mask;
  // Formats that use every bit of their word (fp8 in bytes, f16 / bf16, fp32) have nothing to
  // check: no pass over the words (2 MB of them in a 1024 x 1024 x 1024 fp8 GEMM).
  const std::uint32_t word_mask = word_bits_ == 32 ? 0xFFFFFFFFu : (1u << word_bits_) - 1u;
  if ((allowed & word_mask) == word_mask) return;
  // The words are contiguous (init checks size == rows * cols): one vectorisable pass ORs the
  // stray bits of all of them; only a failing matrix is searched for its first bad word.
  const std::size_t n = rows_ * cols_;
  const auto stray = [&](const auto* w) {
    std::uint32_t bits = 0;
    for (std::size_t i = 0; i < n; ++i) bits |= static_cast<std::uint32_t>(w[i]) & ~allowed;
    return bits;
  };
  const std::uint32_t any = word_bits_ == 8    ? stray(static_cast<const std::uint8_t*>(data_))
                            : word_bits_ == 16 ? stray(static_cast<const std::uint16_t*>(data_))
                                               : stray(static_cast<const std::uint32_t*>(data_));
  if (any == 0) return;
  for (std::size_t r = 0; r < rows_; ++r) {
    for (std::size_t c = 0; c < cols_; ++c) {
      const std::uint32_t w = word(r, c);
      if ((w & ~allowed) != 0) {
        char buf[160];
        std::snprintf(buf, sizeof buf, "%s[%zu][%zu] = 0x%X is not a %s code (%d bits)", what.c_str(), r, c, w,
                      to_string(format_).c_str(), width(format_));
        throw std::invalid_argument(buf);
      }
    }
  }
}

}  // namespace blockscale::emulator
