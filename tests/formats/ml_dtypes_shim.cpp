// SPDX-License-Identifier: Apache-2.0
// A C entry point to blockscale's conversions with the ml_dtypes preset, loaded by
// ml_dtypes_oracle.py through ctypes (test only).
#include <cstddef>
#include <cstdint>
#include <exception>
#include <span>
#include <tuple>
#include <utility>

#include "blockscale/formats.h"

namespace {

using namespace blockscale;

// The value types whose conversions follow ml_dtypes (types.h): ml_dtypes' six, bfloat16 and
// float16 (numpy's), by format.
using ValueTypes = std::tuple<float8_e4m3fn, float8_e5m2, float6_e2m3fn, float6_e3m2fn, float4_e2m1fn, float8_e8m0fnu,
                              bfloat16, float16>;

template <class Dst, class Src>
void cast_words(const std::uint32_t* in, std::size_t n, std::uint32_t* out) {
  for (std::size_t i = 0; i < n; ++i) {
    out[i] = Dst(Src::from_bits(static_cast<typename Src::storage_type>(in[i]))).bits();
  }
}

// Calls f.template operator()<T>() for the value type T of `format`; false if there is none.
template <class F>
bool with_value_type(Format format, F&& f) {
  return std::apply([&](auto... types) { return ((decltype(types)::format == format ? (f.template operator()<decltype(types)>(), true) : false) || ...); },
                    ValueTypes{});
}

}  // namespace

extern "C" {

// The value types' conversion between formats, exmy<dst>(exmy<src>), on n storage words (one per
// uint32). Returns 0, or -1 with nothing written when either name is not a type of ValueTypes.
int bs_value_type_cast(const char* dst, const char* src, const std::uint32_t* in, std::size_t n, std::uint32_t* out) {
  const auto d = parse_format(dst);
  const auto s = parse_format(src);
  if (!d || !s) return -1;
  bool done = false;
  with_value_type(*d, [&]<class Dst>() {
    with_value_type(*s, [&]<class Src>() {
      cast_words<Dst, Src>(in, n, out);
      done = true;
    });
  });
  return done ? 0 : -1;
}

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
