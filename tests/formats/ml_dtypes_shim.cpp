// SPDX-License-Identifier: Apache-2.0
// A C entry point to blockscale's conversions with the ml_dtypes preset, loaded by
// ml_dtypes_oracle.py through ctypes (test only).
#include <cstddef>
#include <cstdint>
#include <exception>
#include <span>

#include "blockscale/formats.h"

extern "C" {

// Converts n floats (src = "float32"), halves (src = "float16", bits in `in` as uint16) or doubles
// (src = "float64") to the ml_dtypes format `dst`. Returns 0, or -1 with nothing written on error.
int bs_convert_ml_dtypes(const char* dst, const char* src, const void* in, std::size_t n, std::uint8_t* out) {
  try {
    using namespace blockscale;
    const auto f = parse_format(dst);
    const auto s = parse_format(src);
    const bool from_double = std::string_view(src) == "float64";
    if (!f || (!s && !from_double)) return -1;
    const ConvertOptions o = presets::ml_dtypes(*f, from_double ? Format::float32 : *s);
    if (from_double) {
      convert(std::span<const double>(static_cast<const double*>(in), n), *f, std::span<std::uint8_t>(out, n), o);
    } else if (*s == Format::float32) {
      convert(std::span<const float>(static_cast<const float*>(in), n), *f, std::span<std::uint8_t>(out, n), o);
    } else {
      convert(*s, std::span<const std::uint16_t>(static_cast<const std::uint16_t*>(in), n), *f,
              std::span<std::uint8_t>(out, n), o);
    }
    return 0;
  } catch (const std::exception&) {
    return -1;
  }
}
}
