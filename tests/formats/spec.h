// SPDX-License-Identifier: Apache-2.0
// The formats as the specifications write them, independently of blockscale's format table: the
// tests decode with these formulas and build their oracles' value tables from them.
#pragma once

#include <cmath>
#include <cstdint>

#include "blockscale/formats/format.h"

namespace blockscale::test {

// Decode. The expected value of every code is computed here from the encoding rules of OCP OFP8
// v1.0 §5.3 / OCP MX v1.0 §5.3 / IEEE 754 §3.4, written out per format independently of the
// library's table, and the documented extremes of formats.md B.1 are checked by value.
struct Spec {
  Format f;
  int sign_bits, exp_bits, man_bits, bias;
  bool ieee_specials;   // all-ones exponent = Inf/NaN
  bool nan_all_ones;    // only the all-ones magnitude is NaN
  bool exp_only;        // e8m0: 2^(code - bias), no zero, no subnormals
  double max, min_normal, min_subnormal;
};

inline const Spec kSpecs[] = {
    {Format::float4_e2m1fn, 1, 2, 1, 1, false, false, false, 6.0, 1.0, 0.5},
    {Format::float6_e2m3fn, 1, 2, 3, 1, false, false, false, 7.5, 1.0, 0.125},
    {Format::float6_e3m2fn, 1, 3, 2, 3, false, false, false, 28.0, 0.25, 0.0625},
    {Format::float8_e4m3fn, 1, 4, 3, 7, false, true, false, 448.0, 0x1p-6, 0x1p-9},
    {Format::float8_e5m2, 1, 5, 2, 15, true, false, false, 57344.0, 0x1p-14, 0x1p-16},
    {Format::float8_e8m0fnu, 0, 8, 0, 127, false, true, true, 0x1p127, 0x1p-127, 0x1p-127},
    {Format::float8_ue4m3, 0, 4, 3, 7, false, true, false, 448.0, 0x1p-6, 0x1p-9},
    {Format::float16, 1, 5, 10, 15, true, false, false, 65504.0, 0x1p-14, 0x1p-24},
    {Format::bfloat16, 1, 8, 7, 127, true, false, false, 0x1.FEp127, 0x1p-126, 0x1p-133},
    {Format::tfloat32, 1, 8, 10, 127, true, false, false, 0x1.FFCp127, 0x1p-126, 0x1p-136},
};

inline double spec_value(const Spec& s, std::uint32_t code, bool* is_nan, bool* is_inf) {
  *is_nan = *is_inf = false;
  const std::uint32_t man = code & ((1u << s.man_bits) - 1);
  const std::uint32_t exp = (code >> s.man_bits) & ((1u << s.exp_bits) - 1);
  const bool neg = s.sign_bits && ((code >> (s.man_bits + s.exp_bits)) & 1);
  const std::uint32_t all_exp = (1u << s.exp_bits) - 1;
  if (s.ieee_specials && exp == all_exp) {
    (man ? *is_nan : *is_inf) = true;
    return 0;
  }
  if (s.nan_all_ones && exp == all_exp && man == (1u << s.man_bits) - 1) {
    *is_nan = true;
    return 0;
  }
  double v;
  if (s.exp_only) {
    v = std::pow(2.0, static_cast<double>(exp) - s.bias);
  } else if (exp == 0) {
    v = std::pow(2.0, 1 - s.bias) * (man / std::pow(2.0, s.man_bits));
  } else {
    v = std::pow(2.0, static_cast<double>(exp) - s.bias) * (1 + man / std::pow(2.0, s.man_bits));
  }
  return neg ? -v : v;
}

}  // namespace blockscale::test
