// SPDX-License-Identifier: Apache-2.0
#include "blockscale/formats/convert.h"

#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "blockscale/formats/detail/enum_check.h"
#include "blockscale/formats/detail/round.h"

namespace blockscale {

NanRule default_nan_rule(Format f) {
  require_known(f, "default_nan_rule");
  switch (info(f).specials) {
    case Specials::ieee:
      return {quiet_nan_code(f), true, true};
    case Specials::nan_all_ones:
      return {all_ones_code(f), info(f).is_signed, false};
    case Specials::none:
      return {max_finite_code(f), false, false};
  }
  return {};
}

namespace {

std::string hex(std::uint32_t v) {
  char buf[16];  // printf groups no digits, whatever the program's locale
  std::snprintf(buf, sizeof buf, "0x%X", static_cast<unsigned>(v));
  return buf;
}

}  // namespace

void validate(Format dst, const ConvertOptions& o) {
  require_known(dst, "conversion");
  const std::string name = to_string(dst);
  // Values outside the enums (cast integers) would otherwise run as some other mode.
  detail::require_enumerator(o.rounding, Rounding::stochastic, "Rounding", "conversion to ", name, ": ConvertOptions::rounding");
  detail::require_enumerator(o.overflow, Overflow::ieee, "Overflow", "conversion to ", name, ": ConvertOptions::overflow");
  detail::require_enumerator(o.zero, ZeroRule::nan, "ZeroRule", "conversion to ", name, ": ConvertOptions::zero");
  detail::require_enumerator(o.negative, NegativeRule::min_code, "NegativeRule", "conversion to ", name, ": ConvertOptions::negative");
  if (o.rounding == Rounding::stochastic && (o.stochastic_bits < 1 || o.stochastic_bits > 32)) {
    throw std::invalid_argument("stochastic rounding to " + name + ": stochastic_bits must be in 1..32, got " +
                                std::to_string(o.stochastic_bits));
  }
  if (o.has_nan_rule) {
    if (o.nan.code > code_mask(dst)) {
      throw std::invalid_argument("NaN rule code " + hex(o.nan.code) + " does not fit the " +
                                  std::to_string(width(dst)) + "-bit codes of " + name);
    }
    if (has_nan(dst) && !is_nan(dst, o.nan.code)) {
      throw std::invalid_argument("NaN rule code " + hex(o.nan.code) + " is not a NaN of " + name);
    }
    if (o.nan.or_payload && !has_inf(dst)) {
      throw std::invalid_argument("NaN payload propagation needs an IEEE-style NaN field; " + name +
                                  " has none");
    }
  }
  if (o.subnormal_grid_quirk && info(dst).has_subnormals) {
    throw std::invalid_argument("the subnormal-grid quirk applies only to formats without subnormals (e8m0), not " +
                                name);
  }
}

namespace detail {

Target make_target(Format dst, const ConvertOptions& o) {
  validate(dst, o);
  const FormatInfo& fi = info(dst);
  Target t;
  t.p = fi.mantissa_bits;
  t.emin = emin(dst) + (o.subnormal_grid_quirk ? 1 : 0);
  t.code_offset = fi.mantissa_bits + fi.bias - 1;
  t.max_code = max_finite_code(dst);
  t.sign_bit = sign_mask(dst);
  t.keep_sign = fi.is_signed ? 1u : 0u;
  t.rounding = o.rounding;
  t.stochastic_bits = o.stochastic_bits;

  const NanRule nan = o.has_nan_rule ? o.nan : default_nan_rule(dst);
  for (int s = 0; s < 2; ++s) {
    t.nan_code[s] = nan.code ^ ((nan.xor_sign && s) ? t.sign_bit : 0u);
  }
  t.nan_payload = nan.or_payload ? 1u : 0u;

  // What an infinity becomes when it is not saturated: Inf, else the all-ones NaN ("fn"), else max.
  const std::uint32_t inf_like =
      has_inf(dst) ? inf_code(dst) : (has_nan(dst) ? all_ones_code(dst) : max_finite_code(dst));
  const std::uint32_t max = t.max_code;
  const std::uint32_t min_code = 0;  // +0, or 2^emin for formats without zero
  for (int s = 0; s < 2; ++s) {
    const std::uint32_t sb = s ? t.sign_bit : 0u;
    std::uint32_t ovf = inf_like;
    switch (o.overflow) {
      case Overflow::saturate:
      case Overflow::saturate_finite:
        ovf = max;
        break;
      case Overflow::infinity:
        ovf = inf_like;
        break;
      case Overflow::ieee:
        switch (o.rounding) {
          case Rounding::toward_zero: ovf = max; break;
          case Rounding::upward: ovf = s ? max : inf_like; break;
          case Rounding::downward: ovf = s ? inf_like : max; break;
          default: ovf = inf_like; break;
        }
        break;
    }
    // Unsigned destinations: a negative input reaching this point is treated by magnitude.
    t.overflow_code[s] = ovf | sb;
    t.inf_code[s] = (o.overflow == Overflow::saturate ? max : inf_like) | sb;
    t.zero_code[s] = has_zero(dst) ? sb : (o.zero == ZeroRule::nan ? all_ones_code(dst) : min_code);
    // A nonzero value below half the smallest magnitude: +-0, or the smallest code without zero.
    t.underflow_code[s] = has_zero(dst) ? sb : min_code;
  }
  if (!fi.is_signed) {
    switch (o.negative) {
      case NegativeRule::magnitude:
        t.neg_replace = 0;
        break;
      case NegativeRule::nan:
        t.neg_replace = 1;
        t.neg_code = has_nan(dst) ? t.nan_code[0] : max;
        break;
      case NegativeRule::min_code:
        t.neg_replace = 1;
        t.neg_code = min_code;
        break;
    }
  }
  return t;
}

Unpacked unpack_double_impl(double x) {
  const std::uint64_t u = std::bit_cast<std::uint64_t>(x);
  Unpacked r;
  r.negative = (u >> 63) != 0;
  const std::uint64_t ef = (u >> 52) & 0x7FF;
  const std::uint64_t mf = u & ((std::uint64_t{1} << 52) - 1);
  if (ef == 0x7FF) {
    r.kind = mf ? Unpacked::nan : Unpacked::infinite;
    r.payload = mf << 12;
  } else if (ef == 0 && mf == 0) {
    r.kind = Unpacked::zero;
  } else {
    r.kind = Unpacked::finite;
    r.sig = ef ? (mf | (std::uint64_t{1} << 52)) : mf;
    r.exp = (ef ? static_cast<int>(ef) : 1) - 1075;
  }
  return r;
}

Unpacked unpack_code_impl(Format f, std::uint32_t code) {
  require_known(f, "decoding");
  const FormatInfo& fi = info(f);
  code &= code_mask(f);
  Unpacked r;
  r.negative = (code & sign_mask(f)) != 0;
  const std::uint32_t mag = code & magnitude_mask(f);
  const std::uint32_t ef = mag >> fi.mantissa_bits;
  const std::uint32_t mf = mag & ((1u << fi.mantissa_bits) - 1u);
  switch (classify(f, code)) {
    case ValueClass::nan:
      r.kind = Unpacked::nan;
      r.payload = fi.mantissa_bits ? (static_cast<std::uint64_t>(mf) << (64 - fi.mantissa_bits)) : 0;
      return r;
    case ValueClass::infinite:
      r.kind = Unpacked::infinite;
      return r;
    case ValueClass::zero:
      r.kind = Unpacked::zero;
      return r;
    case ValueClass::subnormal:
      r.kind = Unpacked::finite;
      r.sig = mf;
      r.exp = emin(f) - fi.mantissa_bits;
      return r;
    case ValueClass::normal:
      r.kind = Unpacked::finite;
      r.sig = (std::uint64_t{1} << fi.mantissa_bits) | mf;
      r.exp = static_cast<int>(ef) - fi.bias - fi.mantissa_bits;
      return r;
  }
  return r;
}

}  // namespace detail

Decomposed decompose(double x) { return detail::unpack_double_impl(x); }
Decomposed decompose(Format f, std::uint32_t code) { return detail::unpack_code_impl(f, code); }

std::uint32_t convert(Format dst, float x, const ConvertOptions& o, std::uint32_t rbits) {
  const detail::Target t = detail::make_target(dst, o);
  const std::uint32_t u = std::bit_cast<std::uint32_t>(x);
  return detail::dispatch_rounding(t.rounding, [&]<Rounding R>() {
    return detail::convert_f32_bits<R>(t, u, rbits);
  });
}

std::uint32_t convert(Format dst, double x, const ConvertOptions& o, std::uint32_t rbits) {
  const detail::Target t = detail::make_target(dst, o);
  const detail::Unpacked in = detail::unpack(x);
  return detail::dispatch_rounding(t.rounding,
                                   [&]<Rounding R>() { return detail::encode<R>(t, in, rbits); });
}

std::uint32_t convert_code(Format dst, Format src, std::uint32_t code, const ConvertOptions& o,
                           std::uint32_t rbits) {
  const detail::Target t = detail::make_target(dst, o);
  const detail::Unpacked in = detail::unpack(src, code);
  return detail::dispatch_rounding(t.rounding,
                                   [&]<Rounding R>() { return detail::encode<R>(t, in, rbits); });
}

double to_double(Format f, std::uint32_t code) {
  const detail::Unpacked u = detail::unpack(f, code);
  double v = 0.0;
  switch (u.kind) {
    case detail::Unpacked::zero: v = 0.0; break;
    case detail::Unpacked::infinite: v = INFINITY; break;
    case detail::Unpacked::nan: v = NAN; break;
    case detail::Unpacked::finite: v = std::ldexp(static_cast<double>(u.sig), u.exp); break;
  }
  return u.negative ? -v : v;
}

float to_float(Format f, std::uint32_t code) {
  // Every value of every format in the table is a float, so the float is assembled from the
  // double's fields rather than converted: the host's conversion flushes a subnormal result (e8m0's
  // 2^-127, bf16's subnormals) to zero when the caller's mode has flush-to-zero set (x86 MXCSR.FTZ,
  // AArch64 FPCR.FZ: -ffast-math, torch.set_flush_denormal), and the result must not depend on it.
  const std::uint64_t d = std::bit_cast<std::uint64_t>(to_double(f, code));
  const auto sign = static_cast<std::uint32_t>(d >> 32) & 0x80000000u;
  const int biased = static_cast<int>((d >> 52) & 0x7FF);
  const std::uint64_t fraction = d & ((std::uint64_t{1} << 52) - 1);
  if (biased == 0x7FF) {  // Inf, or the quiet NaN to_double gives
    return std::bit_cast<float>(sign | 0x7F800000u | static_cast<std::uint32_t>(fraction >> 29));
  }
  if (biased == 0) return std::bit_cast<float>(sign);  // +-0 (no value of the table is below 2^-149)
  const int e = biased - 1023;
  if (e >= -126) {
    return std::bit_cast<float>(sign | static_cast<std::uint32_t>(e + 127) << 23 |
                                static_cast<std::uint32_t>(fraction >> 29));
  }
  // A float subnormal (2^-149 .. 2^-127): the significand with its leading bit, shifted into place.
  const std::uint64_t significand = (std::uint64_t{1} << 52) | fraction;
  return std::bit_cast<float>(sign | static_cast<std::uint32_t>(significand >> (29 + (-126 - e))));
}

std::string to_string(Rounding r) {
  switch (r) {
    case Rounding::nearest_even: return "nearest_even";
    case Rounding::toward_zero: return "toward_zero";
    case Rounding::upward: return "upward";
    case Rounding::downward: return "downward";
    case Rounding::nearest_away: return "nearest_away";
    case Rounding::stochastic: return "stochastic";
  }
  return "Rounding(" + std::to_string(static_cast<int>(r)) + ")";
}

std::string to_string(Overflow o) {
  switch (o) {
    case Overflow::saturate: return "saturate";
    case Overflow::saturate_finite: return "saturate_finite";
    case Overflow::infinity: return "infinity";
    case Overflow::ieee: return "ieee";
  }
  return "Overflow(" + std::to_string(static_cast<int>(o)) + ")";
}

}  // namespace blockscale
