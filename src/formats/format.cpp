// SPDX-License-Identifier: Apache-2.0
#include "blockscale/formats/format.h"

#include <algorithm>
#include <cctype>
#include <stdexcept>

namespace blockscale {

namespace {

std::string lower(std::string_view s) {
  std::string r(s);
  std::transform(r.begin(), r.end(), r.begin(), [](unsigned char c) { return std::tolower(c); });
  return r;
}

}  // namespace

std::optional<Format> parse_format(std::string_view name) {
  const std::string n = lower(name);
  for (const FormatInfo& fi : kFormatTable) {
    if (n == fi.name || n == fi.short_name) return fi.id;
  }
  // Spellings of cuda.tile (f8e4m3fn, f4e2m1fn, f8e8m0fnu), PyTorch and PTX.
  struct Alias {
    const char* alias;
    Format f;
  };
  static constexpr Alias kAliases[] = {
      {"f4e2m1fn", Format::float4_e2m1fn},   {"fp4", Format::float4_e2m1fn},
      {"f6e2m3fn", Format::float6_e2m3fn},   {"f6e3m2fn", Format::float6_e3m2fn},
      {"f8e4m3fn", Format::float8_e4m3fn},   {"e4m3fn", Format::float8_e4m3fn},
      {"f8e5m2", Format::float8_e5m2},       {"f8e8m0fnu", Format::float8_e8m0fnu},
      {"e8m0", Format::float8_e8m0fnu},      {"e8m0fnu", Format::float8_e8m0fnu},
      {"ue4m3", Format::float8_ue4m3},       {"half", Format::float16},
      {"fp16", Format::float16},             {"fp32", Format::float32},
      {"float", Format::float32},            {"bf16", Format::bfloat16},
  };
  for (const Alias& a : kAliases) {
    if (n == a.alias) return a.f;
  }
  return std::nullopt;
}

void require_known(Format f, std::string_view where) {
  if (!is_known(f)) throw std::invalid_argument(std::string(where) + ": " + to_string(f));
}

std::string to_string(Format f) {
  return is_known(f) ? info(f).name : "an unknown format (" + std::to_string(static_cast<int>(f)) + ")";
}

}  // namespace blockscale
