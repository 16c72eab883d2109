// SPDX-License-Identifier: Apache-2.0
// Block-scaled formats: an element format, a scale format and the number of elements along K that
// share one scale (OCP MX v1.0 §5; NVIDIA NVFP4; PTX ISA 9.7.16.10 block_scale).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "blockscale/formats/format.h"

namespace blockscale {

struct BlockFormat {
  Format element = Format::float8_e4m3fn;
  Format scale = Format::float8_e8m0fnu;
  int block_size = 32;
  friend bool operator==(const BlockFormat&, const BlockFormat&) = default;
};

// The combinations tensor cores take (tcgen05 kind::mxf8f6f4, kind::mxf4, kind::mxf4nvf4):
namespace block_formats {
inline constexpr BlockFormat mxfp8_e4m3{Format::float8_e4m3fn, Format::float8_e8m0fnu, 32};
inline constexpr BlockFormat mxfp8_e5m2{Format::float8_e5m2, Format::float8_e8m0fnu, 32};
inline constexpr BlockFormat mxfp6_e2m3{Format::float6_e2m3fn, Format::float8_e8m0fnu, 32};
inline constexpr BlockFormat mxfp6_e3m2{Format::float6_e3m2fn, Format::float8_e8m0fnu, 32};
inline constexpr BlockFormat mxfp4{Format::float4_e2m1fn, Format::float8_e8m0fnu, 32};
// kind::mxf4nvf4 with .scale_vec::4X and ue8m0 scales: e2m1 elements, one e8m0 scale per 16.
inline constexpr BlockFormat mxfp4_block16{Format::float4_e2m1fn, Format::float8_e8m0fnu, 16};
// NVFP4: e2m1 elements, one ue4m3 scale per 16, and an fp32 scale for the whole tensor.
inline constexpr BlockFormat nvfp4{Format::float4_e2m1fn, Format::float8_ue4m3, 16};
}  // namespace block_formats

// Throws std::invalid_argument unless `f` is one of the seven combinations above, naming the rule
// broken (e8m0 scales take blocks of 32 for every MX element type and blocks of 16 for e2m1 only;
// ue4m3 scales take e2m1 in blocks of 16).
void validate(const BlockFormat& f);

// NVFP4 carries an fp32 per-tensor scale; the e8m0 formats do not.
constexpr bool has_tensor_scale(const BlockFormat& f) { return f.scale == Format::float8_ue4m3; }

// "mxfp8_e4m3", "mxfp8_e5m2", "mxfp6_e2m3", "mxfp6_e3m2", "mxfp4", "mxfp4_block16", "nvfp4"; other
// combinations print as "<element>/<scale>/<block>".
std::string to_string(const BlockFormat& f);
std::optional<BlockFormat> parse_block_format(std::string_view name);

}  // namespace blockscale
