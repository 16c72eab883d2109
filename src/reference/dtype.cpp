// SPDX-License-Identifier: Apache-2.0
#include "blockscale/reference/dtype.h"

#include <bit>
#include <cmath>
#include <stdexcept>

namespace blockscale::reference {

Format format_of(DType t) {
  if (!has_format(t)) throw std::invalid_argument("dtype " + to_string(t) + " is not a format of the formats library");
  return static_cast<Format>(static_cast<int>(t));
}

int code_bits(DType t) {
  switch (t) {
    case DType::float64: return 64;
    case DType::int8:
    case DType::uint8: return 8;
    case DType::int32: return 32;
    default: return width(format_of(t));
  }
}

std::string to_string(DType t) {
  switch (t) {
    case DType::float64: return "float64";
    case DType::int8: return "int8";
    case DType::uint8: return "uint8";
    case DType::int32: return "int32";
    default:
      // Not through format_of, whose message names the dtype with this function.
      if (!has_format(t)) return "DType(" + std::to_string(static_cast<int>(t)) + ")";
      return info(static_cast<Format>(static_cast<int>(t))).name;
  }
}

std::optional<DType> parse_dtype(std::string_view name) {
  if (name == "float64" || name == "f64" || name == "double") return DType::float64;
  if (name == "int8" || name == "i8" || name == "s8") return DType::int8;
  if (name == "uint8" || name == "u8") return DType::uint8;
  if (name == "int32" || name == "i32" || name == "s32") return DType::int32;
  if (const auto f = parse_format(name)) return dtype_of(*f);
  return std::nullopt;
}

Decomposed decompose(DType t, std::uint64_t code) {
  switch (t) {
    case DType::float64: return blockscale::decompose(std::bit_cast<double>(code));
    case DType::int8:
    case DType::uint8:
    case DType::int32: {
      const std::int64_t v = t == DType::int8    ? static_cast<std::int8_t>(code)
                             : t == DType::uint8 ? static_cast<std::int64_t>(code & 0xFFu)
                                                 : static_cast<std::int32_t>(code);
      Decomposed d;
      d.kind = v == 0 ? Decomposed::zero : Decomposed::finite;
      d.negative = v < 0;
      d.sig = static_cast<std::uint64_t>(v < 0 ? -v : v);
      d.exp = 0;
      return d;
    }
    default: return blockscale::decompose(format_of(t), static_cast<std::uint32_t>(code));
  }
}

double to_double(DType t, std::uint64_t code) {
  switch (t) {
    case DType::float64: return std::bit_cast<double>(code);
    case DType::int8: return static_cast<std::int8_t>(code);
    case DType::uint8: return static_cast<double>(code & 0xFFu);
    case DType::int32: return static_cast<std::int32_t>(code);
    default: return blockscale::to_double(format_of(t), static_cast<std::uint32_t>(code));
  }
}

}  // namespace blockscale::reference
