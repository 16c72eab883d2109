// SPDX-License-Identifier: Apache-2.0
// The one rounding engine behind every conversion (convert.h). Header-only so that the bulk
// loops (bulk.cpp) inline it and the compiler vectorises it; the scalar API calls the same code,
// so scalar and bulk results cannot drift apart.
//
// A finite nonzero input is sig * 2^e_lsb exactly, with E = floor(log2 |x|). At the destination
// precision p (mantissa bits) the grid spacing is 2^qe with qe = max(E, emin) - p, so
//   n = |x| / 2^qe rounded to an integer,   n in [0, 2^(p+1)].
// The code is then ((qe + p + bias - 1) << p) + n: for n >= 2^p the leading 1 of n carries into
// the exponent field, for subnormals (qe = emin - p, n < 2^p) the field is 0, and a rounding carry
// to n = 2^(p+1) lands on the next binade by itself. The same trick is used by ml_dtypes and
// SoftFloat's roundPack; codes above the largest finite code are overflow.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <type_traits>

#include "blockscale/formats/convert.h"
#include "blockscale/formats/format.h"

namespace blockscale::detail {

// One destination format with one set of options, reduced to the numbers the engine needs.
struct Target {
  int p = 0;            // mantissa bits of the destination
  int emin = 0;         // grid floor: qe = max(E, emin) - p
  int code_offset = 0;  // p + bias - 1
  std::uint32_t max_code = 0;
  std::uint32_t sign_bit = 0;         // 0 for unsigned destinations
  std::uint32_t keep_sign = 0;        // 1 for signed destinations
  std::uint32_t neg_replace = 0;      // 1: negative non-NaN inputs give neg_code (unsigned dst)
  std::uint32_t neg_code = 0;
  std::uint32_t overflow_code[2]{};   // [sign] finite overflow
  std::uint32_t inf_code[2]{};        // [sign] +-Inf input
  std::uint32_t zero_code[2]{};       // [sign] +-0 input
  std::uint32_t underflow_code[2]{};  // [sign] nonzero input that rounds to 0
  std::uint32_t nan_code[2]{};        // [sign] NaN input, before payload bits
  std::uint32_t nan_payload = 0;      // 1: OR the top p payload bits into NaN results
  Rounding rounding = Rounding::nearest_even;
  int stochastic_bits = 32;
};

// Selects written as mask arithmetic. With ?: GCC merges the chain of selects below into one
// multi-way PHI that its if-conversion rejects ("complicated PHI"), and the loops stop
// vectorising; masks leave nothing to merge.
inline std::uint32_t sel(bool c, std::uint32_t a, std::uint32_t b) {
  const std::uint32_t m = 0u - static_cast<std::uint32_t>(c);
  return (a & m) | (b & ~m);
}
// a[sign] as a select of two loop invariants (no gather in vectorised loops).
inline std::uint32_t pick(const std::uint32_t (&a)[2], std::uint32_t sign) { return sel(sign != 0, a[1], a[0]); }

// Builds a Target; validates the options first (throws std::invalid_argument).
Target make_target(Format dst, const ConvertOptions& o);

// Rounds sig * 2^e_lsb (sig != 0, floor(log2) = E) to the destination grid and returns the signed
// code, or the overflow / underflow code. U is uint32_t when sig < 2^24 (fp32 inputs; the loop
// then vectorises at 16 lanes) and uint64_t otherwise.
template <Rounding R, class U>
inline std::uint32_t round_finite(const Target& t, std::uint32_t neg, U sig, int e_lsb, int E,
                                  std::uint32_t rbits) {
  constexpr int kBits = static_cast<int>(sizeof(U) * 8);
  const int qe = std::max(E, t.emin) - t.p;
  const int sh = qe - e_lsb;  // < 0 only for exact widening conversions (no rounding then)
  // Any shift past the width of U leaves n = 0 and the whole of sig below the half point, so
  // clamping the shift keeps every non-stochastic decision exact.
  const int shr = std::clamp(sh, 0, kBits - 1);
  const int shl = std::max(-sh, 0);
  const U mask = (U{1} << shr) - 1;  // the discarded bits
  const U half = (U{1} << shr) >> 1;
  // Every mode as n = (sig + bias) >> shr, without comparisons (they would not vectorise):
  //   nearest_even: bias = half - 1 + (lsb of the truncated n): a tie carries only when that lsb
  //                 is 1 (the bias trick of ml_dtypes' RoundBitsToNearestEven);
  //   nearest_away: bias = half;  upward / downward: bias = all discarded bits when the sign
  //   allows;  toward_zero: 0. The & mask keeps the bias 0 when nothing is discarded.
  U bias = 0;
  if constexpr (R == Rounding::nearest_even) {
    bias = (((sig >> shr) & 1) + half - 1) & mask;
  } else if constexpr (R == Rounding::nearest_away) {
    bias = half;
  } else if constexpr (R == Rounding::upward) {
    bias = mask & (U{0} - static_cast<U>(1u - neg));
  } else if constexpr (R == Rounding::downward) {
    bias = mask & (U{0} - static_cast<U>(neg));
  } else if constexpr (R == Rounding::stochastic) {
    // floor(f * 2^nb) for the discarded fraction f = (sig mod 2^sh) / 2^sh, exactly.
    const int nb = t.stochastic_bits;
    std::uint64_t ftop = 0;
    if (sh > 0) {
      const std::uint64_t s64 = sig;
      const std::uint64_t rem_full = sh >= 64 ? s64 : (s64 & ((std::uint64_t{1} << sh) - 1));
      if (sh >= nb) {
        ftop = (sh - nb >= 64) ? 0 : (rem_full >> (sh - nb));
      } else {
        ftop = rem_full << (nb - sh);  // rem_full < 2^sh, so this stays below 2^nb
      }
    }
    const std::uint64_t r = nb == 32 ? rbits : (rbits & ((std::uint64_t{1} << nb) - 1));
    // Rounding up = adding all discarded bits (cannot carry past one unit: they are < 2^shr).
    bias = mask & (U{0} - static_cast<U>((ftop + r) >> nb));
  }
  const U n = ((sig << shl) + bias) >> shr;
  // Code arithmetic in the width of U: for fp32 inputs base <= 127 + 127 - 1 and the code stays
  // below 2^31, so 32-bit lanes suffice; double and code inputs use 64 bits.
  using Code = std::conditional_t<sizeof(U) == 4, std::int32_t, std::int64_t>;
  const int base = qe + t.code_offset;  // >= -1; -1 only for e8m0 at its lowest binade with n >= 1
  const Code code = static_cast<Code>(base) * (Code{1} << t.p) + static_cast<Code>(n);
  const std::uint32_t finite = static_cast<std::uint32_t>(code) | (t.sign_bit & (0u - neg));
  const std::uint32_t result = sel(code > static_cast<Code>(t.max_code), pick(t.overflow_code, neg), finite);
  return sel(n == 0, pick(t.underflow_code, neg), result);
}

// The fp32 path, written without branches on the value so that a loop over it vectorises.
template <Rounding R>
inline std::uint32_t convert_f32_bits(const Target& t, std::uint32_t u, std::uint32_t rbits) {
  const std::uint32_t sign = u >> 31;
  const std::uint32_t neg = sign & t.keep_sign;
  const std::uint32_t a = u & 0x7FFFFFFFu;
  const std::uint32_t ef = a >> 23;
  const std::uint32_t mf = a & 0x7FFFFFu;
  const std::uint32_t sig = ef ? (mf | 0x800000u) : mf;
  const int e_lsb = (ef ? static_cast<int>(ef) : 1) - 150;
  // For fp32 subnormals floor(log2) is below -126, and every destination has emin >= -127, so
  // -127 gives the same qe = max(E, emin) - p as the true exponent.
  const int E = ef ? static_cast<int>(ef) - 127 : -127;
  std::uint32_t r = round_finite<R, std::uint32_t>(t, neg, sig, e_lsb, E, rbits);
  r = sel(a == 0, pick(t.zero_code, neg), r);
  r = sel(a == 0x7F800000u, pick(t.inf_code, neg), r);
  r = sel((sign & t.neg_replace) != 0, t.neg_code, r);
  const std::uint32_t payload = (mf >> (23 - t.p)) & (0u - t.nan_payload);
  r = sel(a > 0x7F800000u, pick(t.nan_code, sign) | payload, r);
  return r;
}

using Unpacked = Decomposed;
inline Unpacked unpack(double x) { return decompose(x); }
inline Unpacked unpack(Format f, std::uint32_t code) { return decompose(f, code); }

template <Rounding R>
inline std::uint32_t encode(const Target& t, const Unpacked& x, std::uint32_t rbits) {
  const std::uint32_t sign = x.negative ? 1u : 0u;
  const std::uint32_t neg = sign & t.keep_sign;
  switch (x.kind) {
    case Unpacked::nan: {
      const std::uint32_t payload =
          (t.nan_payload && t.p > 0) ? static_cast<std::uint32_t>(x.payload >> (64 - t.p)) : 0u;
      return t.nan_code[sign] | payload;
    }
    case Unpacked::zero:
      return (sign & t.neg_replace) ? t.neg_code : t.zero_code[neg];
    case Unpacked::infinite:
      return (sign & t.neg_replace) ? t.neg_code : t.inf_code[neg];
    case Unpacked::finite:
      break;
  }
  if (sign & t.neg_replace) return t.neg_code;
  const int E = x.exp + 63 - std::countl_zero(x.sig);
  return round_finite<R, std::uint64_t>(t, neg, x.sig, x.exp, E, rbits);
}

// Calls f.template operator()<R>() with R = t.rounding as a compile-time constant.
template <class F>
inline decltype(auto) dispatch_rounding(Rounding r, F&& f) {
  switch (r) {
    case Rounding::nearest_even: return f.template operator()<Rounding::nearest_even>();
    case Rounding::toward_zero: return f.template operator()<Rounding::toward_zero>();
    case Rounding::upward: return f.template operator()<Rounding::upward>();
    case Rounding::downward: return f.template operator()<Rounding::downward>();
    case Rounding::nearest_away: return f.template operator()<Rounding::nearest_away>();
    case Rounding::stochastic: break;
  }
  return f.template operator()<Rounding::stochastic>();
}

}  // namespace blockscale::detail
