// SPDX-License-Identifier: Apache-2.0
// An independent oracle for exact sums of dyadic numbers, written differently from ExactSum on
// purpose: terms are collected first, aligned to the smallest exponent as sign-magnitude big
// integers (schoolbook add / subtract with compare, no lazy carries), and the final rounding is
// done by the x87 hardware: the top 64 bits (with a sticky bit ORed into bit 0) are exact in a
// long double, ldexpl scales exactly, and one conversion to float / double rounds in the current
// fenv rounding mode, subnormals and overflow included. f16 / bf16 go through the formats
// library's conversion from a double that holds the top 32 bits plus sticky exactly.
#pragma once

#include <algorithm>
#include <bit>
#include <cfenv>
#include <cmath>
#include <cstdint>
#include <vector>

#include "blockscale/formats.h"

namespace oracle {

struct BigInt {  // magnitude, little-endian 32-bit digits, no leading zeros
  std::vector<std::uint32_t> d;
  bool zero() const { return d.empty(); }
  void trim() {
    while (!d.empty() && d.back() == 0) d.pop_back();
  }
  static BigInt from(std::uint64_t v, int shift) {  // v * 2^shift, shift >= 0
    BigInt r;
    r.d.assign(static_cast<std::size_t>(shift / 32 + 3), 0);
    const int s = shift % 32;
    const std::uint64_t lo = v << s;
    const std::uint64_t hi = s ? v >> (64 - s) : 0;
    const std::size_t w = static_cast<std::size_t>(shift / 32);
    r.d[w] = static_cast<std::uint32_t>(lo);
    r.d[w + 1] = static_cast<std::uint32_t>(lo >> 32);
    r.d[w + 2] = static_cast<std::uint32_t>(hi);
    r.trim();
    return r;
  }
  friend int compare(const BigInt& a, const BigInt& b) {
    if (a.d.size() != b.d.size()) return a.d.size() < b.d.size() ? -1 : 1;
    for (std::size_t i = a.d.size(); i-- > 0;)
      if (a.d[i] != b.d[i]) return a.d[i] < b.d[i] ? -1 : 1;
    return 0;
  }
  friend BigInt add(const BigInt& a, const BigInt& b) {
    BigInt r;
    std::uint64_t c = 0;
    for (std::size_t i = 0; i < std::max(a.d.size(), b.d.size()); ++i) {
      c += (i < a.d.size() ? a.d[i] : 0u);
      c += (i < b.d.size() ? b.d[i] : 0u);
      r.d.push_back(static_cast<std::uint32_t>(c));
      c >>= 32;
    }
    if (c) r.d.push_back(static_cast<std::uint32_t>(c));
    r.trim();
    return r;
  }
  friend BigInt sub(const BigInt& a, const BigInt& b) {  // requires a >= b
    BigInt r;
    std::int64_t borrow = 0;
    for (std::size_t i = 0; i < a.d.size(); ++i) {
      std::int64_t v = static_cast<std::int64_t>(a.d[i]) - (i < b.d.size() ? b.d[i] : 0u) - borrow;
      borrow = v < 0;
      if (v < 0) v += std::int64_t{1} << 32;
      r.d.push_back(static_cast<std::uint32_t>(v));
    }
    r.trim();
    return r;
  }
  int bit_length() const { return d.empty() ? 0 : static_cast<int>(32 * (d.size() - 1)) + std::bit_width(d.back()); }
  bool bit(int i) const {
    return i >= 0 && static_cast<std::size_t>(i / 32) < d.size() && ((d[static_cast<std::size_t>(i / 32)] >> (i % 32)) & 1);
  }
  // The top `n` bits (n <= 64) with bit 0 ORed with "any lower bit set".
  std::uint64_t top(int n, int& lsb_index) const {
    const int len = bit_length();
    lsb_index = len - n;
    std::uint64_t v = 0;
    for (int i = len - 1; i >= len - n; --i) v = (v << 1) | (bit(i) ? 1u : 0u);
    bool sticky = false;
    for (int i = 0; i < len - n && !sticky; ++i) sticky = bit(i);
    return v | (sticky ? 1u : 0u);
  }
};

struct Term {
  bool neg;
  std::uint64_t sig;
  int exp;
};

// The exact sum of finite terms as sign + magnitude * 2^lsb.
struct Exact {
  bool neg = false;
  BigInt mag;
  int lsb = 0;
};

inline Exact exact_sum(const std::vector<Term>& terms) {
  Exact r;
  int lo = 0;
  bool first = true;
  for (const Term& t : terms)
    if (t.sig) {
      lo = first ? t.exp : std::min(lo, t.exp);
      first = false;
    }
  r.lsb = lo;
  BigInt pos, negm;
  for (const Term& t : terms) {
    if (!t.sig) continue;
    const BigInt v = BigInt::from(t.sig, t.exp - lo);
    (t.neg ? negm : pos) = add(t.neg ? negm : pos, v);
  }
  if (compare(pos, negm) >= 0) {
    r.mag = sub(pos, negm);
  } else {
    r.mag = sub(negm, pos);
    r.neg = true;
  }
  return r;
}

// Rounds a nonzero exact value with the hardware in the current rounding mode (fesetround).
inline long double scaled_top64(const Exact& e) {
  int lsb = 0;
  const std::uint64_t t = e.mag.bit_length() <= 64 ? e.mag.top(e.mag.bit_length(), lsb) : e.mag.top(64, lsb);
  const long double v = std::ldexp(static_cast<long double>(t), lsb + e.lsb);  // exact
  return e.neg ? -v : v;
}
inline float to_float(const Exact& e) {
  volatile long double v = scaled_top64(e);
  volatile float f = static_cast<float>(v);
  return f;
}
inline double to_double(const Exact& e) {
  volatile long double v = scaled_top64(e);
  volatile double f = static_cast<double>(v);
  return f;
}
// f16 / bf16 (nearest-even): top 32 bits + sticky are exact in a double, then one rounding.
inline std::uint32_t to_narrow(const Exact& e, blockscale::Format f) {
  int lsb = 0;
  const int n = std::min(32, e.mag.bit_length());
  const std::uint64_t t = e.mag.top(n, lsb);
  const double v = std::ldexp(static_cast<double>(t), lsb + e.lsb);
  return blockscale::convert(f, e.neg ? -v : v, blockscale::presets::ieee());
}

// A finite double as a term (exact).
inline Term term_of(double v) {
  if (v == 0) return {std::signbit(v), 0, 0};
  int e = 0;
  const double m = std::frexp(std::fabs(v), &e);  // v = m * 2^e, m in [0.5, 1)
  auto sig = static_cast<std::uint64_t>(std::ldexp(m, 53));
  int exp = e - 53;
  while (!(sig & 1)) {
    sig >>= 1;
    ++exp;
  }
  return {v < 0, sig, exp};
}

// The exact product of two finite doubles as (up to) two terms: the 106-bit significand product
// split into its low and high 64 bits.
inline void add_product(std::vector<Term>& terms, double a, double b) {
  const Term x = term_of(a), y = term_of(b);
  const bool neg = x.neg != y.neg;
  __extension__ const unsigned __int128 p = static_cast<unsigned __int128>(x.sig) * y.sig;
  terms.push_back({neg, static_cast<std::uint64_t>(p), x.exp + y.exp});
  terms.push_back({neg, static_cast<std::uint64_t>(p >> 64), x.exp + y.exp + 64});
}

}  // namespace oracle
