// SPDX-License-Identifier: Apache-2.0
#include "blockscale/formats/presets.h"

#include "blockscale/formats/detail/enum_check.h"

#include <stdexcept>
#include <string>

namespace blockscale::presets {

ConvertOptions ieee(Rounding r) {
  detail::require_enumerator(r, Rounding::stochastic, "Rounding", "the ieee preset: rounding");
  ConvertOptions o;
  o.rounding = r;
  o.overflow = Overflow::ieee;
  o.zero = ZeroRule::min_code;
  o.negative = NegativeRule::nan;
  return o;
}

namespace {

[[noreturn]] void reject(const std::string& what) {
  throw std::invalid_argument(what);
}

bool is_fp8(Format f) { return f == Format::float8_e4m3fn || f == Format::float8_e5m2; }
bool is_fp6_fp4(Format f) {
  return f == Format::float6_e2m3fn || f == Format::float6_e3m2fn || f == Format::float4_e2m1fn;
}

}  // namespace

ConvertOptions cuda(Format dst, Format src, bool from_double, std::optional<Rounding> rounding,
                    std::optional<Overflow> overflow) {
  require_known(dst, "the cuda preset: dst");
  require_known(src, "the cuda preset: src");
  if (rounding) detail::require_enumerator(*rounding, Rounding::stochastic, "Rounding", "the cuda preset: rounding");
  if (overflow) detail::require_enumerator(*overflow, Overflow::ieee, "Overflow", "the cuda preset: overflow");
  const std::string pair = (from_double ? std::string("double") : to_string(src)) + " -> " + to_string(dst);
  if (!from_double && src != Format::float32 && src != Format::float16 && src != Format::bfloat16) {
    reject("the cuda preset has no " + pair +
           " conversion: CUDA 13.0 converts from float, double, half and bfloat16 only");
  }
  ConvertOptions o;
  if (is_fp8(dst)) {
    const Rounding r = rounding.value_or(Rounding::nearest_even);
    if (r != Rounding::nearest_even) {
      reject("the cuda preset has no " + to_string(r) + " rounding for " + pair +
             ": __nv_cvt_*_to_fp8 rounds to nearest even only");
    }
    const Overflow ov = overflow.value_or(Overflow::saturate);
    if (ov != Overflow::saturate && ov != Overflow::infinity) {
      reject("the cuda preset has no " + to_string(ov) + " overflow for " + pair +
             ": __nv_saturation_t is __NV_SATFINITE (saturate) or __NV_NOSAT (infinity)");
    }
    o.rounding = r;
    o.overflow = ov;
    // From float, half and bf16 a NaN loses its sign: 0x7F. The double functions keep the sign,
    // and for e5m2 also the two leading payload bits with the quiet bit forced (0x7E | payload):
    // formats.md B.2, and the sign rule found by the exhaustive oracle test.
    if (from_double) {
      o.with_nan({dst == Format::float8_e5m2 ? 0x7Eu : 0x7Fu, true, dst == Format::float8_e5m2});
    } else {
      o.with_nan({0x7F, false, false});
    }
    return o;
  }
  if (is_fp6_fp4(dst)) {
    const Rounding r = rounding.value_or(Rounding::nearest_even);
    if (r != Rounding::nearest_even && r != Rounding::toward_zero) {
      reject("the cuda preset has no " + to_string(r) + " rounding for " + pair +
             ": __nv_cvt_*_to_fp6/fp4 accept cudaRoundNearest and cudaRoundZero only (other "
             "modes assert)");
    }
    const Overflow ov = overflow.value_or(Overflow::saturate);
    if (ov != Overflow::saturate) {
      reject("the cuda preset has no " + to_string(ov) + " overflow for " + pair +
             ": CUDA's fp6/fp4 conversions always saturate");
    }
    o.rounding = r;
    o.overflow = ov;
    o.with_nan({max_finite_code(dst), false, false});  // NaN -> +max, sign dropped
    return o;
  }
  if (dst == Format::float8_e8m0fnu) {
    if (src == Format::float16 && !from_double) {
      reject("the cuda preset has no " + pair + " conversion: CUDA 13.0 converts float, double and bfloat16 to e8m0");
    }
    const Rounding r = rounding.value_or(Rounding::upward);
    if (r != Rounding::toward_zero && r != Rounding::upward) {
      reject("the cuda preset has no " + to_string(r) + " rounding for " + pair +
             ": __nv_cvt_*_to_e8m0 accepts cudaRoundZero and cudaRoundPosInf only");
    }
    const Overflow ov = overflow.value_or(Overflow::saturate);
    if (ov != Overflow::saturate && ov != Overflow::infinity) {
      reject("the cuda preset has no " + to_string(ov) + " overflow for " + pair +
             ": __nv_saturation_t is __NV_SATFINITE (saturate) or __NV_NOSAT (infinity)");
    }
    o.rounding = r;
    // __NV_NOSAT overflows as IEEE 754 §7.4 says: cudaRoundPosInf gives NaN (0xFF), but
    // cudaRoundZero gives the largest code 0xFE (seen with doubles above 2^128; no float reaches it).
    o.overflow = ov == Overflow::saturate ? Overflow::saturate : Overflow::ieee;
    o.with_nan({0xFF, false, false});
    o.zero = ZeroRule::min_code;          // +-0 -> 0x00
    o.negative = NegativeRule::magnitude;  // the sign is ignored
    return o;
  }
  if (dst == Format::float16 || dst == Format::bfloat16) {
    const Rounding r = rounding.value_or(Rounding::nearest_even);
    if (r == Rounding::nearest_away || r == Rounding::stochastic) {
      reject("the cuda preset has no " + to_string(r) + " rounding for " + pair +
             ": CUDA offers _rn, _rz, _ru and _rd");
    }
    if (src != Format::float32 || from_double) {
      reject("the cuda preset covers float -> " + to_string(dst) + " only (__float2half_*, __float2bfloat16_*)");
    }
    const Overflow ov = overflow.value_or(Overflow::ieee);
    if (ov != Overflow::ieee) {
      reject("the cuda preset has no " + to_string(ov) + " overflow for " + pair +
             ": __float2half_* and __float2bfloat16_* overflow as IEEE 754 §7.4 says");
    }
    o.rounding = r;
    o.overflow = ov;
    o.with_nan({0x7FFF, false, false});  // canonical NaN, sign dropped
    return o;
  }
  reject("the cuda preset has no " + pair + " conversion: CUDA 13.0 has no host conversion to " +
         to_string(dst));
}

ConvertOptions ml_dtypes(Format dst, Format /*src*/, bool saturate, bool truncate) {
  ConvertOptions o;
  o.rounding = truncate ? Rounding::toward_zero : Rounding::nearest_even;
  // ml_dtypes overflows to NumTraits<To>::infinity() whatever the rounding (ConvertImpl step 6).
  o.overflow = saturate ? Overflow::saturate_finite : Overflow::infinity;
  switch (dst) {
    case Format::float8_e4m3fn:
      o.with_nan({0x7F, true, false});
      return o;
    case Format::float8_e5m2:
      // NumPy casts from float16 go through float32, so a half NaN gives the same 0x7E/0xFE as a
      // float NaN. (The C++ ConvertImpl<half, e5m2> specialisation of newer ml_dtypes keeps the
      // payload instead; that path is not what NumPy users get.)
      o.with_nan({0x7E, true, false});
      return o;
    case Format::float6_e2m3fn:
    case Format::float6_e3m2fn:
    case Format::float4_e2m1fn:
      // quiet_NaN() is the -0 encoding, and the sign is applied by negation: +NaN -> -0, -NaN -> +0.
      o.with_nan({sign_mask(dst), true, false});
      return o;
    case Format::float8_e8m0fnu:
      o.with_nan({0xFF, false, false});
      o.zero = saturate ? ZeroRule::min_code : ZeroRule::nan;
      o.negative = saturate ? NegativeRule::min_code : NegativeRule::nan;
      o.subnormal_grid_quirk = true;
      return o;
    default:
      break;
  }
  throw std::invalid_argument("the ml_dtypes preset has no conversion to " + to_string(dst) +
                              " (ml_dtypes has no such type)");
}

ConvertOptions value_type_default(Format dst) {
  require_known(dst, "value_type_default");
  switch (dst) {
    case Format::float8_e4m3fn:
    case Format::float8_e5m2:
    case Format::float6_e2m3fn:
    case Format::float6_e3m2fn:
    case Format::float4_e2m1fn:
    case Format::float8_e8m0fnu:
      return ml_dtypes(dst);
    default:
      return ieee(Rounding::nearest_even);
  }
}

}  // namespace blockscale::presets
