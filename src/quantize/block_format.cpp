// SPDX-License-Identifier: Apache-2.0
#include "blockscale/quantize/block_format.h"

#include <array>
#include <stdexcept>
#include <utility>

namespace blockscale {

namespace {

constexpr std::array<std::pair<const char*, BlockFormat>, 7> kNamed = {{
    {"mxfp8_e4m3", block_formats::mxfp8_e4m3},
    {"mxfp8_e5m2", block_formats::mxfp8_e5m2},
    {"mxfp6_e2m3", block_formats::mxfp6_e2m3},
    {"mxfp6_e3m2", block_formats::mxfp6_e3m2},
    {"mxfp4", block_formats::mxfp4},
    {"mxfp4_block16", block_formats::mxfp4_block16},
    {"nvfp4", block_formats::nvfp4},
}};

bool is_mx_element(Format f) {
  return f == Format::float8_e4m3fn || f == Format::float8_e5m2 || f == Format::float6_e2m3fn ||
         f == Format::float6_e3m2fn || f == Format::float4_e2m1fn;
}

}  // namespace

void validate(const BlockFormat& f) {
  const std::string what = "block format " + to_string(f) + ": ";
  if (!is_mx_element(f.element)) {
    throw std::invalid_argument(what + "the element format must be e4m3, e5m2, e2m3, e3m2 or e2m1 (OCP MX v1.0 "
                                       "§5.3), not " + to_string(f.element));
  }
  if (f.scale == Format::float8_e8m0fnu) {
    if (f.block_size == 32) return;
    if (f.block_size == 16 && f.element == Format::float4_e2m1fn) return;
    throw std::invalid_argument(what + "e8m0 scales take blocks of 32 (OCP MX v1.0 §5), or of 16 for e2m1 only "
                                       "(tcgen05 kind::mxf4nvf4 .scale_vec::4X with ue8m0); block size " +
                                std::to_string(f.block_size) + " is not one of them");
  }
  if (f.scale == Format::float8_ue4m3) {
    if (f.element == Format::float4_e2m1fn && f.block_size == 16) return;
    throw std::invalid_argument(what + "ue4m3 scales (NVFP4) take e2m1 elements in blocks of 16 only");
  }
  throw std::invalid_argument(what + "the scale format must be e8m0 (float8_e8m0fnu) or ue4m3 (float8_ue4m3), not " +
                              to_string(f.scale));
}

std::string to_string(const BlockFormat& f) {
  for (const auto& [name, bf] : kNamed) {
    if (bf == f) return name;
  }
  return to_string(f.element) + "/" + to_string(f.scale) + "/" + std::to_string(f.block_size);
}

std::optional<BlockFormat> parse_block_format(std::string_view name) {
  for (const auto& [n, bf] : kNamed) {
    if (name == n) return bf;
  }
  return std::nullopt;
}

}  // namespace blockscale
