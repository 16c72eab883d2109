// SPDX-License-Identifier: Apache-2.0
// An independent, slow model of every quantization rule, written from formats.md (c) and the
// systems' source as documented there: exact arithmetic in double (every fp32 operation of a
// system is a double operation rounded to float once, which is exact for * and, with 53 >= 2*24+2
// bits, innocuous for /), element rounding by searching the format's value grid. It shares no code
// with the library: not the conversions, not the rules.
#pragma once

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <vector>

#include "blockscale/quantize.h"

namespace qoracle {

using blockscale::Format;

struct ElemSpec {
  int mbits, bias;
  std::uint32_t max_code, sign_bit;
};

inline ElemSpec spec(Format f) {
  switch (f) {
    case Format::float8_e4m3fn: return {3, 7, 0x7E, 0x80};
    case Format::float8_e5m2: return {2, 15, 0x7B, 0x80};
    case Format::float6_e2m3fn: return {3, 1, 0x1F, 0x20};
    case Format::float6_e3m2fn: return {2, 3, 0x1F, 0x20};
    case Format::float4_e2m1fn: return {1, 1, 0x7, 0x8};
    case Format::float8_ue4m3: return {3, 7, 0x7E, 0x00};
    default: break;
  }
  return {0, 0, 0, 0};
}

// Value of a non-negative magnitude code (no NaN / Inf codes are passed here).
inline double magnitude_value_slow(Format f, std::uint32_t m) {
  const ElemSpec s = spec(f);
  const std::uint32_t e = m >> s.mbits, frac = m & ((1u << s.mbits) - 1);
  if (e == 0) return std::ldexp(static_cast<double>(frac), 1 - s.bias - s.mbits);
  return std::ldexp(static_cast<double>((1u << s.mbits) + frac), static_cast<int>(e) - s.bias - s.mbits);
}

// The positive grid of a format: value of every magnitude code 0..max_code.
inline const std::vector<double>& grid(Format f) {
  static const auto table = [] {
    std::map<Format, std::vector<double>> t;
    for (Format g : {Format::float8_e4m3fn, Format::float8_e5m2, Format::float6_e2m3fn, Format::float6_e3m2fn,
                     Format::float4_e2m1fn, Format::float8_ue4m3}) {
      for (std::uint32_t c = 0; c <= spec(g).max_code; ++c) t[g].push_back(magnitude_value_slow(g, c));
    }
    return t;
  }();
  return table.at(f);
}
inline double magnitude_value(Format f, std::uint32_t m) { return grid(f)[m]; }

inline double element_max(Format f) { return magnitude_value(f, spec(f).max_code); }
// floor(log2(max)).
inline int element_emax(Format f) { return std::ilogb(element_max(f)); }

enum class Round { even, away, stochastic };

// Rounds a finite double (or +-Inf) onto the element grid, saturating: |v| >= max gives max. The
// zero result keeps v's sign. Stochastic: up iff floor(f * 2^nbits) + (r mod 2^nbits) >= 2^nbits,
// f the fraction between the neighbours.
inline std::uint32_t round_to_grid(Format f, double v, Round mode, std::uint32_t r = 0, int nbits = 32) {
  const ElemSpec s = spec(f);
  const std::uint32_t sign = std::signbit(v) ? s.sign_bit : 0u;
  const double a = std::fabs(v);
  const std::vector<double>& g = grid(f);
  if (a >= g.back()) return s.max_code | sign;
  if (a == 0) return sign;
  // Largest code with value <= a (values increase with codes).
  const auto lo = static_cast<std::uint32_t>(std::upper_bound(g.begin(), g.end(), a) - g.begin() - 1);
  const double lv = magnitude_value(f, lo);
  if (lv == a) return lo | sign;
  const double hv = magnitude_value(f, lo + 1);
  bool up = false;
  if (mode == Round::stochastic) {
    const double frac = (a - lv) / (hv - lv);
    const double top = std::floor(std::ldexp(frac, nbits));
    const std::uint64_t rr = nbits == 32 ? r : (r & ((std::uint64_t{1} << nbits) - 1));
    up = top + static_cast<double>(rr) >= std::ldexp(1.0, nbits);
  } else {
    const double mid = (lv + hv) / 2;
    up = a > mid || (a == mid && (mode == Round::away || (lo & 1u) != 0));
  }
  return (up ? lo + 1 : lo) | sign;
}

inline float f32(double d) { return static_cast<float>(d); }
inline std::uint32_t bits(float f) { return std::bit_cast<std::uint32_t>(f); }

// C fminf(x, FLT_MAX) for x >= 0 or NaN.
inline float fmin_max(float x) { return std::isnan(x) ? FLT_MAX : std::min(x, FLT_MAX); }

// RP conversion of a non-negative finite float to e8m0, saturating at 0xFE (CUDA
// __nv_cvt_float_to_e8m0(x, __NV_SATFINITE, cudaRoundPosInf) on [0, FLT_MAX]).
inline std::uint32_t e8m0_round_up(double q) {
  if (q <= std::ldexp(1.0, -127)) return 0;
  int e = std::ilogb(q);
  if (std::ldexp(1.0, e) != q) ++e;
  return static_cast<std::uint32_t>(std::min(e + 127, 254));
}

// What one system does to one block.
struct Expected {
  std::uint32_t scale = 0;
  std::vector<std::uint32_t> codes;
};

struct Model {
  blockscale::BlockFormat format;
  blockscale::QuantizeOptions options;
  blockscale::TensorScale ts;  // the per-tensor scale the library was given (NVFP4)
  std::uint32_t nan_code = 0;  // the element code the recipe's conversion gives the canonical +NaN
};

inline Round element_round(const Model& m) {
  switch (m.options.element.rounding) {
    case blockscale::Rounding::nearest_away: return Round::away;
    case blockscale::Rounding::stochastic: return Round::stochastic;
    default: return Round::even;
  }
}

// The block scale code and the fp32 multiplier m (elements are fp32(x * m)), per formats.md (c).
struct ScaleAndMultiplier {
  std::uint32_t code;
  double mult;  // a float value, NaN, or 0
};

inline ScaleAndMultiplier mx_from_exponent(int e) {
  e = std::max(e, -127);
  return {static_cast<std::uint32_t>(e + 127), std::ldexp(1.0, -e)};
}

inline ScaleAndMultiplier scale_of(const Model& m, double amax) {
  using blockscale::ScaleRule;
  const Format el = m.format.element;
  const double mx = element_max(el);
  const int emax = element_emax(el);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const blockscale::QuantizeOptions& o = m.options;
  const auto nonfinite = [&](bool inf) -> ScaleAndMultiplier {
    if (inf && o.inf == blockscale::BlockInf::saturate) return {0xFE, std::ldexp(1.0, -127)};
    return {0xFF, nan};
  };
  switch (o.rule) {
    case ScaleRule::ocp_floor:
      if (!std::isfinite(amax)) return nonfinite(std::isinf(amax));
      if (amax == 0) return mx_from_exponent(-127);
      return mx_from_exponent(std::ilogb(amax) - emax);
    case ScaleRule::ceil: {
      if (!std::isfinite(amax)) return nonfinite(std::isinf(amax));
      if (amax == 0) return mx_from_exponent(-127);
      int e = std::ilogb(amax);
      if (std::ldexp(1.0, e) != amax) ++e;
      return mx_from_exponent(e - emax);
    }
    case ScaleRule::even: {
      if (!std::isfinite(amax)) return nonfinite(std::isinf(amax));
      if (amax < std::ldexp(1.0, -126)) return mx_from_exponent(-127);
      const int mb = spec(el).mbits;
      int e = std::ilogb(amax);
      const double sig = std::ldexp(amax, -e);  // [1, 2)
      const double rounded = std::floor(std::ldexp(sig, mb) + 0.5);  // ties away
      if (rounded >= std::ldexp(1.0, mb + 1)) ++e;
      if (e >= 128) return nonfinite(true);
      return mx_from_exponent(e - emax);
    }
    case ScaleRule::rceil: {
      if (!std::isfinite(amax)) return nonfinite(std::isinf(amax));
      const double q = o.ratio == blockscale::ScaleRatio::divide
                           ? f32(amax / mx)
                           : f32(amax * static_cast<double>(f32(1.0 / mx)));
      const std::uint32_t c = e8m0_round_up(q);
      return {c, std::ldexp(1.0, 127 - static_cast<int>(c))};
    }
    case ScaleRule::triton_round_up: {
      if (std::isnan(amax)) return {0x00, 0.0};
      if (std::isinf(amax)) return {0xFF, 0.0};
      const double q = f32(amax / mx);
      if (q == 0) return {0, 0.0};
      if (q < std::ldexp(1.0, -126)) return {1, std::ldexp(1.0, 126)};
      int e = std::ilogb(q);
      if (std::ldexp(1.0, e) != q) ++e;
      return {static_cast<std::uint32_t>(e + 127), std::ldexp(1.0, -e)};
    }
    case ScaleRule::triton_round_down: {
      if (!std::isfinite(amax)) return {0xFF, 0.0};
      const double q = f32(amax / std::ldexp(1.0, emax));
      if (q < std::ldexp(1.0, -126)) return {0, 0.0};
      const int e = std::ilogb(q);
      return {static_cast<std::uint32_t>(e + 127), std::ldexp(1.0, -e)};
    }
    case ScaleRule::nvfp4_transformer_engine: {
      const float k = f32(static_cast<double>(m.ts.encode) * static_cast<double>(f32(1.0 / 6.0)));
      const float sdb = fmin_max(f32(amax * static_cast<double>(k)));
      const std::uint32_t c = std::isnan(sdb) ? 0x7F : round_to_grid(Format::float8_ue4m3, sdb, Round::even);
      const double s = magnitude_value(Format::float8_ue4m3, c);
      const float prod = f32(s * static_cast<double>(m.ts.decode));
      const float inv = prod == 0 ? std::numeric_limits<float>::infinity() : f32(1.0 / static_cast<double>(prod));
      return {c, fmin_max(inv)};
    }
    case ScaleRule::nvfp4_torchao: {
      const float bs = f32(amax / 6.0);
      const float s = f32(static_cast<double>(bs) / static_cast<double>(m.ts.decode));
      if (std::isnan(s)) return {0x7F, nan};
      const float cl = std::min(std::max(s, 0x1p-6f), 448.0f);
      const std::uint32_t c = round_to_grid(Format::float8_ue4m3, cl, Round::even);
      return {c, f32(static_cast<double>(m.ts.encode) / magnitude_value(Format::float8_ue4m3, c))};
    }
  }
  return {0, 0};
}

// The whole block. x holds block_size inputs (zero padded by the caller); r one random word each.
inline Expected quantize_block(const Model& m, const std::vector<float>& x, const std::vector<std::uint32_t>& r = {}) {
  using blockscale::SubnormalInputs;
  const blockscale::QuantizeOptions& o = m.options;
  std::vector<double> in(x.size());
  Expected e;
  e.codes.reserve(x.size());
  const double min_normal = std::ldexp(1.0, -126);
  for (std::size_t i = 0; i < x.size(); ++i) {
    in[i] = x[i];
    if (o.subnormals == SubnormalInputs::flush_elements && std::fabs(in[i]) < min_normal) {
      in[i] = std::copysign(0.0, in[i]);
    }
  }
  double amax = 0;
  bool any_nan = false;
  for (double v : in) {
    if (std::isnan(v)) {
      any_nan = true;
    } else {
      amax = std::max(amax, std::fabs(v));
    }
  }
  if (any_nan && o.nan == blockscale::BlockNan::propagate) amax = std::numeric_limits<double>::quiet_NaN();
  ScaleAndMultiplier sm = scale_of(m, amax);
  if (o.subnormals == SubnormalInputs::flush_block && amax < min_normal) sm.mult = 0.0;
  e.scale = sm.code;
  const Round mode = element_round(m);
  const int nbits = o.element.stochastic_bits;
  // Zeros of one sign all give the same code (whatever the random word: zero is on the grid).
  std::uint32_t zero_code[2] = {~0u, ~0u};
  for (std::size_t i = 0; i < in.size(); ++i) {
    const bool zero = in[i] == 0;
    std::uint32_t& memo = zero_code[std::signbit(in[i]) ? 1 : 0];
    if (zero && memo != ~0u) {
      e.codes.push_back(memo);
      continue;
    }
    const double y = f32(in[i] * sm.mult);  // fp32 product
    const std::uint32_t c =
        std::isnan(y) ? m.nan_code : round_to_grid(m.format.element, y, mode, r.empty() ? 0u : r[i], nbits);
    e.codes.push_back(c);
    if (zero) memo = c;
  }
  return e;
}

// Per-tensor scale (formats.md (c).8 and (c).9) for a global amax g.
inline blockscale::TensorScale tensor_scale(const blockscale::BlockFormat& f, const blockscale::QuantizeOptions& o,
                                            double g) {
  blockscale::TensorScale ts{std::numeric_limits<float>::quiet_NaN(), 1.0f, 1.0f};
  if (f.scale != Format::float8_ue4m3 || o.tensor_scale == blockscale::TensorScaleSource::none) return ts;
  ts.amax = static_cast<float>(g);
  if (o.rule == blockscale::ScaleRule::nvfp4_transformer_engine) {
    float enc = fmin_max(f32(2688.0 / g));
    if (g == 0 || enc == 0) enc = 1.0f;
    ts.encode = enc;
    ts.decode = f32(1.0 / enc);
  } else {
    ts.decode = f32(g / 2688.0);
    ts.encode = f32(1.0 / static_cast<double>(ts.decode));
  }
  return ts;
}

}  // namespace qoracle
