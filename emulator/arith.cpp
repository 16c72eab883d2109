// SPDX-License-Identifier: Apache-2.0
// IEEE 754-2019 binary32/binary16 add, multiply and fused multiply-add with roundTiesToEven
// (§4.3.1), subnormals kept, computed exactly in integers. Special cases follow §6 (Inf - Inf and
// Inf * 0 invalid, §7.2; exact-zero sums +0 except (-0) + (-0), §6.3) with NVIDIA's canonical NaN.
#include "blockscale/emulator/arith.h"

#include <algorithm>
#include <bit>
#include <stdexcept>
#include <utility>

namespace blockscale::emulator {

namespace {

__extension__ typedef unsigned __int128 u128;  // GCC/Clang extension: exact 128-bit sums

struct BinaryFormat {
  int precision;  // significand bits including the hidden bit
  int emin;       // minimum normal exponent
  int exp_bits;
  std::uint32_t canonical_nan;
};
constexpr BinaryFormat kF32{24, -126, 8, 0x7FFFFFFFu};
constexpr BinaryFormat kF16{11, -14, 5, 0x7FFFu};

struct Unpacked {
  enum Kind : std::uint8_t { zero, finite, inf, nan } kind;
  bool neg;
  std::uint64_t mag;  // value = mag * 2^exp
  int exp;
};

Unpacked unpack(const BinaryFormat& f, std::uint32_t bits) {
  const int mbits = f.precision - 1;
  const int total = 1 + f.exp_bits + mbits;
  const bool neg = (bits >> (total - 1)) & 1u;
  const std::uint32_t field = (bits >> mbits) & ((1u << f.exp_bits) - 1u);
  const std::uint32_t man = bits & ((1u << mbits) - 1u);
  const std::uint32_t all_ones = (1u << f.exp_bits) - 1u;
  if (field == all_ones) return {man == 0 ? Unpacked::inf : Unpacked::nan, neg, 0, 0};
  if (field == 0) {
    if (man == 0) return {Unpacked::zero, neg, 0, 0};
    return {Unpacked::finite, neg, man, f.emin - mbits};
  }
  const int bias = static_cast<int>(all_ones >> 1);
  return {Unpacked::finite, neg, man | (1u << mbits), static_cast<int>(field) - bias - mbits};
}

std::uint32_t signed_zero(const BinaryFormat& f, bool neg) {
  return neg ? (1u << (f.exp_bits + f.precision - 1)) : 0u;
}
std::uint32_t signed_inf(const BinaryFormat& f, bool neg) {
  return signed_zero(f, neg) | (((1u << f.exp_bits) - 1u) << (f.precision - 1));
}

// Rounds (-1)^neg * W * 2^lsb (W > 0) to nearest even in f, with gradual underflow and overflow to Inf.
std::uint32_t round_rne(const BinaryFormat& f, bool neg, u128 W, int lsb) {
  const int msb = 127 - (static_cast<std::uint64_t>(W >> 64) != 0
                             ? std::countl_zero(static_cast<std::uint64_t>(W >> 64))
                             : 64 + std::countl_zero(static_cast<std::uint64_t>(W)));
  const int E = std::max(msb + lsb, f.emin);
  const int quantum = E - (f.precision - 1);
  const int r = quantum - lsb;  // bits to drop
  u128 N;
  if (r <= 0) {
    N = W << (-r);
  } else if (r > 127) {
    N = 0;
  } else {
    const u128 q = W >> r;
    const u128 rem = W & ((u128(1) << r) - 1);
    const u128 half = u128(1) << (r - 1);
    N = q + ((rem > half || (rem == half && (q & 1))) ? 1 : 0);
  }
  if (N == 0) return signed_zero(f, neg);
  // (E - emin) << (p-1) + N: a carry of N into 2^p moves to the next binade and a subnormal N of
  // 2^(p-1) becomes the smallest normal, both by plain addition.
  const std::uint64_t bits = (static_cast<std::uint64_t>(E - f.emin) << (f.precision - 1)) + static_cast<std::uint64_t>(N);
  const std::uint64_t inf_bits = static_cast<std::uint64_t>((1u << f.exp_bits) - 1u) << (f.precision - 1);
  if (bits >= inf_bits) return signed_inf(f, neg);
  return signed_zero(f, neg) | static_cast<std::uint32_t>(bits);
}

// The exact sum of two finite nonzero terms (-1)^n * m * 2^e with m < 2^50, rounded to nearest even.
// Both are placed on a grid 110 bits below the larger term's leading bit; a term reaching below the
// grid leaves a sticky bit, which cannot move the result across a rounding boundary because the
// grid is 85 bits finer than any result quantum.
std::uint32_t round_sum(const BinaryFormat& f, bool n1, std::uint64_t m1, int e1, bool n2, std::uint64_t m2, int e2) {
  const int top1 = e1 + 63 - std::countl_zero(m1);
  const int top2 = e2 + 63 - std::countl_zero(m2);
  if (top2 > top1) {
    std::swap(n1, n2);
    std::swap(m1, m2);
    std::swap(e1, e2);
  }
  const int grid = std::max(top1, top2) - 110;
  const u128 v1 = u128(m1) << (e1 - grid);  // e1 - grid <= 110 - msb(m1)
  u128 v2;
  bool sticky = false;
  if (e2 >= grid) {
    v2 = u128(m2) << (e2 - grid);
  } else {
    const int r = grid - e2;
    v2 = r >= 64 ? 0 : (m2 >> r);
    sticky = r >= 64 ? true : (m2 & ((std::uint64_t(1) << r) - 1)) != 0;
  }
  // Work in half-grid units so the sticky bit is a half unit below (or above) the exact grid value.
  const u128 w1 = v1 << 1;
  const u128 w2 = (v2 << 1) | (sticky ? 1 : 0);
  if (n1 == n2) return round_rne(f, n1, w1 + w2, grid - 1);
  if (w1 == w2) return 0;  // exact cancellation: +0 (§6.3)
  if (w1 > w2) return round_rne(f, n1, w1 - w2, grid - 1);
  return round_rne(f, n2, w2 - w1, grid - 1);
}

std::uint32_t add(const BinaryFormat& f, std::uint32_t x, std::uint32_t y) {
  const Unpacked a = unpack(f, x), b = unpack(f, y);
  if (a.kind == Unpacked::nan || b.kind == Unpacked::nan) return f.canonical_nan;
  if (a.kind == Unpacked::inf || b.kind == Unpacked::inf) {
    if (a.kind == Unpacked::inf && b.kind == Unpacked::inf && a.neg != b.neg) return f.canonical_nan;
    return signed_inf(f, a.kind == Unpacked::inf ? a.neg : b.neg);
  }
  if (a.kind == Unpacked::zero && b.kind == Unpacked::zero) return signed_zero(f, a.neg && b.neg);
  if (a.kind == Unpacked::zero) return y;
  if (b.kind == Unpacked::zero) return x;
  return round_sum(f, a.neg, a.mag, a.exp, b.neg, b.mag, b.exp);
}

}  // namespace

std::uint32_t add_f32(std::uint32_t x, std::uint32_t y) { return add(kF32, x, y); }

std::uint32_t sum_f32_pairwise(std::span<const std::uint32_t> p) {
  if (p.empty()) throw std::invalid_argument("sum_f32_pairwise: no partial sums (a reduction needs at least one)");
  if (p.size() == 1) return p[0];
  const std::size_t first = (p.size() + 1) / 2;
  return add_f32(sum_f32_pairwise(p.first(first)), sum_f32_pairwise(p.subspan(first)));
}

std::uint16_t add_f16(std::uint16_t x, std::uint16_t y) { return static_cast<std::uint16_t>(add(kF16, x, y)); }

std::uint32_t mul_f32(std::uint32_t x, std::uint32_t y) {
  const Unpacked a = unpack(kF32, x), b = unpack(kF32, y);
  if (a.kind == Unpacked::nan || b.kind == Unpacked::nan) return kF32.canonical_nan;
  const bool neg = a.neg != b.neg;
  if (a.kind == Unpacked::inf || b.kind == Unpacked::inf) {
    if (a.kind == Unpacked::zero || b.kind == Unpacked::zero) return kF32.canonical_nan;
    return signed_inf(kF32, neg);
  }
  if (a.kind == Unpacked::zero || b.kind == Unpacked::zero) return signed_zero(kF32, neg);
  return round_rne(kF32, neg, u128(a.mag * b.mag), a.exp + b.exp);
}

std::uint32_t fma_f32(std::uint32_t x, std::uint32_t y, std::uint32_t z) {
  const Unpacked a = unpack(kF32, x), b = unpack(kF32, y), c = unpack(kF32, z);
  if (a.kind == Unpacked::nan || b.kind == Unpacked::nan || c.kind == Unpacked::nan) return kF32.canonical_nan;
  const bool pneg = a.neg != b.neg;
  const bool pinf = a.kind == Unpacked::inf || b.kind == Unpacked::inf;
  if (pinf && (a.kind == Unpacked::zero || b.kind == Unpacked::zero)) return kF32.canonical_nan;
  if (pinf) {
    if (c.kind == Unpacked::inf && c.neg != pneg) return kF32.canonical_nan;
    return signed_inf(kF32, pneg);
  }
  if (c.kind == Unpacked::inf) return z;
  const bool pzero = a.kind == Unpacked::zero || b.kind == Unpacked::zero;
  if (pzero) {
    if (c.kind == Unpacked::zero) return signed_zero(kF32, pneg && c.neg);
    return z;
  }
  const std::uint64_t pm = a.mag * b.mag;  // < 2^48, exact
  if (c.kind == Unpacked::zero) return round_rne(kF32, pneg, u128(pm), a.exp + b.exp);
  return round_sum(kF32, pneg, pm, a.exp + b.exp, c.neg, c.mag, c.exp);
}

}  // namespace blockscale::emulator
