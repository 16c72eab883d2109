// SPDX-License-Identifier: Apache-2.0
// Element types of the reference operations: every format of the formats library plus the types
// the cuda.tile ct::mma type table needs beyond it (f64, int8, uint8, int32).
//
// A value of a DType is held as a code in a 64-bit word: the format's code for the formats of
// format.h (magnitude-aligned, so tf32 codes are the fp32 pattern shifted right by 13), the IEEE
// binary64 bit pattern for float64, and the two's-complement bits for the integer types (low
// 8 or 32 bits; the bits above must be zero).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "blockscale/formats/convert.h"
#include "blockscale/formats/format.h"

namespace blockscale::reference {

enum class DType : std::uint8_t {
  // The first kFormatCount enumerators are the formats of format.h, in the same order.
  float4_e2m1fn,
  float6_e2m3fn,
  float6_e3m2fn,
  float8_e4m3fn,
  float8_e5m2,
  float8_e8m0fnu,
  float8_ue4m3,
  float16,
  bfloat16,
  tfloat32,
  float32,
  // Beyond the formats library.
  float64,
  int8,
  uint8,
  int32,
};

inline constexpr int kDTypeCount = 15;

static_assert(static_cast<int>(DType::float32) == static_cast<int>(Format::float32) &&
                  static_cast<int>(DType::float4_e2m1fn) == static_cast<int>(Format::float4_e2m1fn) &&
                  kFormatCount == static_cast<int>(DType::float64),
              "DType must list the formats of format.h first, in the same order");

constexpr DType dtype_of(Format f) { return static_cast<DType>(static_cast<int>(f)); }
constexpr bool has_format(DType t) { return static_cast<int>(t) < kFormatCount; }
// The format of a DType that has one (throws std::invalid_argument for float64 and the integers).
Format format_of(DType t);

constexpr bool is_integer(DType t) { return t == DType::int8 || t == DType::uint8 || t == DType::int32; }
// Bits of a code (the meaningful ones: 4 for e2m1, 19 for tf32, 64 for f64).
int code_bits(DType t);

// "float8_e4m3fn", ..., "float64", "int8", "uint8", "int32".
std::string to_string(DType t);
// The names of to_string, every spelling parse_format accepts, and "f64" / "double", "i8" / "s8",
// "u8", "i32" / "s32".
std::optional<DType> parse_dtype(std::string_view name);

// Exact decomposition of a code (see formats' Decomposed): integers give sig = |v|, exp = 0.
Decomposed decompose(DType t, std::uint64_t code);
// Exact value as a double (every value of every DType is a double).
double to_double(DType t, std::uint64_t code);

}  // namespace blockscale::reference
