// SPDX-License-Identifier: Apache-2.0
#include "blockscale/formats/types.h"

#include <array>
#include <bit>

#include "blockscale/formats/detail/round.h"

namespace blockscale {

namespace detail {

namespace {

const Target& default_target(Format f) {
  static const std::array<Target, kFormatCount> targets = [] {
    std::array<Target, kFormatCount> t{};
    for (const FormatInfo& fi : kFormatTable) t[static_cast<int>(fi.id)] = make_target(fi.id, presets::value_type_default(fi.id));
    return t;
  }();
  return targets[static_cast<int>(f)];
}

}  // namespace

std::uint32_t convert_default(Format dst, float x) {
  const Target& t = default_target(dst);
  return dispatch_rounding(t.rounding, [&]<Rounding R>() {
    return convert_f32_bits<R>(t, std::bit_cast<std::uint32_t>(x), 0);
  });
}

std::uint32_t convert_default(Format dst, double x) {
  const Target& t = default_target(dst);
  const Unpacked u = unpack(x);
  return dispatch_rounding(t.rounding, [&]<Rounding R>() { return encode<R>(t, u, 0); });
}

}  // namespace detail

float tf32_truncate(float x) { return std::bit_cast<float>(tf32_truncate_bits(std::bit_cast<std::uint32_t>(x))); }

float tf32_round(float x, Rounding r) {
  ConvertOptions o = presets::ieee(r);
  return std::bit_cast<float>(to_storage(Format::tfloat32, convert(Format::tfloat32, x, o)));
}

}  // namespace blockscale
