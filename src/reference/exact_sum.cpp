// SPDX-License-Identifier: Apache-2.0
#include "blockscale/reference/exact_sum.h"

#include <algorithm>
#include <bit>
#include <limits>
#include <stdexcept>

#include "blockscale/formats/detail/enum_check.h"

namespace blockscale::reference {

namespace {

__extension__ typedef unsigned __int128 u128;

// Each word absorbs at most this many additions of < 2^32 between carry propagations, so it stays
// far inside int64.
constexpr std::int64_t kPendingLimit = std::int64_t{1} << 30;

constexpr int floor_div32(int e) { return e >= 0 ? e / 32 : -((-e + 31) / 32); }

struct BinaryTarget {
  int p;      // mantissa (fraction) bits
  int ebits;  // exponent bits
};

BinaryTarget binary_target(DType t) {
  switch (t) {
    case DType::float16: return {10, 5};
    case DType::bfloat16: return {7, 8};
    case DType::float32: return {23, 8};
    case DType::float64: return {52, 11};
    default: break;
  }
  throw std::invalid_argument("ExactSum::round_to: " + to_string(t) +
                              " is not a binary floating output type (float16, bfloat16, float32, float64)");
}

// Rounds (-1)^neg * (W + frac) * 2^(E-63) to the target, where W has its top bit (bit 63) set,
// frac in [0, 1) is nonzero iff `sticky`. Returns the code. IEEE 754-2019 §4.3 roundings,
// §7.4 overflow, subnormals kept.
std::uint64_t round_binary(bool neg, std::uint64_t W, bool sticky, int E, BinaryTarget t, Rounding r) {
  const int bias = (1 << (t.ebits - 1)) - 1;
  const int emin = 1 - bias;
  const std::uint64_t sign = neg ? (std::uint64_t{1} << (t.p + t.ebits)) : 0;
  const std::uint64_t inf = ((std::uint64_t{1} << t.ebits) - 1) << t.p;
  const std::uint64_t max_finite = inf - 1;
  // IEEE 754-2019 §7.4: the nearest roundings overflow to Inf, the directed ones toward it only
  // in their own direction.
  const auto overflow = [&] {
    bool to_inf = true;
    if (r == Rounding::toward_zero) to_inf = false;
    if (r == Rounding::upward) to_inf = !neg;
    if (r == Rounding::downward) to_inf = neg;
    return sign | (to_inf ? inf : max_finite);
  };
  const int emax = bias;
  if (E > emax + 1) {  // |value| >= 2^(emax+2): overflow whatever the rounding (and keeps `code` in range)
    return overflow();
  }
  const int qe = std::max(E, emin) - t.p;  // exponent of the result grid's unit
  const int sh = qe - (E - 63);            // bits of W below the grid unit: >= 63 - p >= 11
  std::uint64_t n = 0;
  bool above = false, tie = false, inexact = true;
  if (sh < 64) {
    n = W >> sh;
    const std::uint64_t rem = W & ((std::uint64_t{1} << sh) - 1);
    const std::uint64_t half = std::uint64_t{1} << (sh - 1);
    above = rem > half || (rem == half && sticky);
    tie = rem == half && !sticky;
    inexact = rem != 0 || sticky;
  } else if (sh == 64) {  // the value lies in [half unit, unit)
    above = W > (std::uint64_t{1} << 63) || sticky;
    tie = W == (std::uint64_t{1} << 63) && !sticky;
  }  // sh > 64: below half a unit, inexact
  bool up = false;
  switch (r) {
    case Rounding::nearest_even: up = above || (tie && (n & 1)); break;
    case Rounding::nearest_away: up = above || tie; break;
    case Rounding::toward_zero: up = false; break;
    case Rounding::upward: up = inexact && !neg; break;
    case Rounding::downward: up = inexact && neg; break;
    case Rounding::stochastic: throw std::invalid_argument("ExactSum::round_to: stochastic rounding is not offered");
  }
  n += up ? 1 : 0;
  if (n == 0) return sign;  // underflow to a zero of the sum's sign
  // The grid unit at the bottom of the code's exponent field: for qe = emin - p (subnormal grid)
  // the base is 0 and n < 2^p is the subnormal code; a carry into 2^(p+1) moves up a binade.
  const std::int64_t code =
      static_cast<std::int64_t>(qe + t.p + bias - 1) * (std::int64_t{1} << t.p) + static_cast<std::int64_t>(n);
  if (code > static_cast<std::int64_t>(max_finite)) {
    return overflow();
  }
  return sign | static_cast<std::uint64_t>(code);
}

}  // namespace

void ExactSum::clear() {
  std::fill(words_.begin(), words_.end(), 0);
  pending_ = 0;
  terms_ = 0;
  nan_ = pos_inf_ = neg_inf_ = false;
  all_neg_zero_ = all_pos_zero_ = true;
}

void ExactSum::reserve_range(int lo_exp, int hi_exp) {
  const int lo_d = floor_div32(lo_exp);
  const int hi_d = floor_div32(hi_exp - 1) + 3;  // two words of headroom above the top bit
  if (words_.empty()) {
    base_exp_ = lo_d * 32;
    words_.assign(static_cast<std::size_t>(hi_d - lo_d), 0);
    return;
  }
  int cur_lo = base_exp_ / 32;
  if (lo_d < cur_lo) {
    words_.insert(words_.begin(), static_cast<std::size_t>(cur_lo - lo_d), 0);
    base_exp_ = lo_d * 32;
    cur_lo = lo_d;
  }
  if (hi_d - cur_lo > static_cast<int>(words_.size())) words_.resize(static_cast<std::size_t>(hi_d - cur_lo), 0);
}

void ExactSum::add_magnitude(bool negative, std::uint64_t sig, int exp) {
  if (words_.empty() || exp < base_exp_ || exp + 64 > base_exp_ + 32 * (static_cast<int>(words_.size()) - 2))
    reserve_range(exp, exp + 64);
  const int off = exp - base_exp_;
  const std::size_t i = static_cast<std::size_t>(off >> 5);
  const u128 v = static_cast<u128>(sig) << (off & 31);
  const auto c0 = static_cast<std::int64_t>(static_cast<std::uint32_t>(v));
  const auto c1 = static_cast<std::int64_t>(static_cast<std::uint32_t>(v >> 32));
  const auto c2 = static_cast<std::int64_t>(static_cast<std::uint32_t>(v >> 64));
  if (negative) {
    words_[i] -= c0;
    words_[i + 1] -= c1;
    words_[i + 2] -= c2;
  } else {
    words_[i] += c0;
    words_[i + 1] += c1;
    words_[i + 2] += c2;
  }
  if (++pending_ >= kPendingLimit) carry_propagate();
}

void ExactSum::carry_propagate() {
  std::int64_t carry = 0;
  for (std::size_t i = 0; i + 1 < words_.size(); ++i) {
    const std::int64_t v = words_[i] + carry;
    words_[i] = v & 0xFFFFFFFF;
    carry = v >> 32;  // arithmetic: floor(v / 2^32)
  }
  words_.back() += carry;
  if (words_.back() >= (std::int64_t{1} << 31) || words_.back() < -(std::int64_t{1} << 31)) {
    const std::int64_t top = words_.back();
    words_.back() = top & 0xFFFFFFFF;
    words_.push_back(top >> 32);
  }
  pending_ = 0;
}

void ExactSum::note_term(bool negative, bool zero) {
  ++terms_;
  if (!(zero && negative)) all_neg_zero_ = false;
  if (!(zero && !negative)) all_pos_zero_ = false;
}

void ExactSum::add(bool negative, std::uint64_t sig, int exp) {
  note_term(negative, sig == 0);
  if (sig != 0) add_magnitude(negative, sig, exp);
}

void ExactSum::add_product(bool negative, std::uint64_t a, std::uint64_t b, int exp) {
  const u128 p = static_cast<u128>(a) * b;
  note_term(negative, p == 0);
  const auto lo = static_cast<std::uint64_t>(p);
  const auto hi = static_cast<std::uint64_t>(p >> 64);
  if (lo != 0) add_magnitude(negative, lo, exp);
  if (hi != 0) add_magnitude(negative, hi, exp + 64);
}

void ExactSum::add_wide(bool negative, std::uint64_t hi, std::uint64_t lo, int exp) {
  note_term(negative, hi == 0 && lo == 0);
  if (lo != 0) add_magnitude(negative, lo, exp);
  if (hi != 0) add_magnitude(negative, hi, exp + 64);
}

void ExactSum::add_infinity(bool negative) {
  note_term(negative, false);
  (negative ? neg_inf_ : pos_inf_) = true;
}

void ExactSum::add_nan() {
  note_term(false, false);
  nan_ = true;
}

void ExactSum::add(const Decomposed& d) {
  switch (d.kind) {
    case Decomposed::zero: add(d.negative, 0, 0); break;
    case Decomposed::finite: add(d.negative, d.sig, d.exp); break;
    case Decomposed::infinite: add_infinity(d.negative); break;
    case Decomposed::nan: add_nan(); break;
  }
}

bool ExactSum::magnitude(bool& negative) {
  const std::size_t n = words_.size();
  scratch_.assign(n, 0);
  if (n == 0) {
    negative = false;
    return false;
  }
  std::int64_t carry = 0;
  for (std::size_t i = 0; i + 1 < n; ++i) {
    const std::int64_t v = words_[i] + carry;
    scratch_[i] = static_cast<std::uint32_t>(v);
    carry = v >> 32;
  }
  const std::int64_t top = words_.back() + carry;
  // The headroom words keep |sum| below 2^(32(n-1)), so the top word is the sign extension.
  if (top != 0 && top != -1) throw std::logic_error("ExactSum: sum outgrew its headroom");
  negative = top == -1;
  if (negative) {  // magnitude = 2^(32(n-1)) - digits (two's complement negation)
    std::uint64_t c = 1;
    for (std::size_t i = 0; i + 1 < n; ++i) {
      const std::uint64_t v = static_cast<std::uint64_t>(static_cast<std::uint32_t>(~scratch_[i])) + c;
      scratch_[i] = static_cast<std::uint32_t>(v);
      c = v >> 32;
    }
  }
  for (std::size_t i = 0; i + 1 < n; ++i)
    if (scratch_[i] != 0) return true;
  negative = false;
  return false;
}

namespace {

// Bits [pos, pos + 64) of the digit string (digit i holds bits [32 i, 32 i + 32)); bits outside
// the string are 0. `sticky` reports whether any bit below pos is set.
std::uint64_t bits64(const std::vector<std::uint32_t>& d, int pos, bool& sticky) {
  const int j = floor_div32(pos);
  const int s = pos - 32 * j;
  auto digit = [&](int k) -> u128 {
    return (k >= 0 && k < static_cast<int>(d.size())) ? static_cast<u128>(d[static_cast<std::size_t>(k)]) : 0;
  };
  const u128 chunk = digit(j) | (digit(j + 1) << 32) | (digit(j + 2) << 64);
  sticky = false;
  if (j >= 0 && j < static_cast<int>(d.size()) && (d[static_cast<std::size_t>(j)] & ((std::uint64_t{1} << s) - 1)))
    sticky = true;
  for (int k = std::min(j, static_cast<int>(d.size())) - 1; k >= 0 && !sticky; --k)
    if (d[static_cast<std::size_t>(k)] != 0) sticky = true;
  return static_cast<std::uint64_t>(chunk >> s);
}

}  // namespace

std::uint64_t ExactSum::round_to(DType target, Rounding rounding) {
  const BinaryTarget t = binary_target(target);
  if (rounding == Rounding::stochastic)
    throw std::invalid_argument("ExactSum::round_to: stochastic rounding is not offered");
  blockscale::detail::require_enumerator(rounding, Rounding::stochastic, "Rounding", "ExactSum::round_to: rounding");
  const std::uint64_t sign = std::uint64_t{1} << (t.p + t.ebits);
  const std::uint64_t inf = ((std::uint64_t{1} << t.ebits) - 1) << t.p;
  if (has_nan()) return inf | (std::uint64_t{1} << (t.p - 1));
  if (pos_inf_) return inf;
  if (neg_inf_) return sign | inf;
  bool negative = false;
  if (!magnitude(negative)) {
    const bool neg_zero = terms_ > 0 && (all_neg_zero_ || (rounding == Rounding::downward && !all_pos_zero_));
    return neg_zero ? sign : 0;
  }
  int top = static_cast<int>(scratch_.size()) - 1;
  while (scratch_[static_cast<std::size_t>(top)] == 0) --top;
  const int msb = 31 - std::countl_zero(scratch_[static_cast<std::size_t>(top)]);
  const int E = base_exp_ + 32 * top + msb;  // floor(log2 |sum|)
  bool sticky = false;
  const std::uint64_t W = bits64(scratch_, 32 * top + msb - 63, sticky);
  return round_binary(negative, W, sticky, E, t, rounding);
}

std::int32_t ExactSum::to_int32(IntegerOverflow overflow) {
  blockscale::detail::require_enumerator(overflow, IntegerOverflow::saturate, "IntegerOverflow", "ExactSum::to_int32: overflow");
  if (nan_ || pos_inf_ || neg_inf_) throw std::logic_error("ExactSum::to_int32: integer sums have no NaN or Inf");
  bool negative = false;
  if (!magnitude(negative)) return 0;
  bool fraction = false;
  const std::uint64_t low = bits64(scratch_, -base_exp_, fraction);
  if (fraction) throw std::logic_error("ExactSum::to_int32: the sum is not an integer");
  int top = static_cast<int>(scratch_.size()) - 1;
  while (scratch_[static_cast<std::size_t>(top)] == 0) --top;
  const int E = base_exp_ + 32 * top + 31 - std::countl_zero(scratch_[static_cast<std::size_t>(top)]);
  if (overflow == IntegerOverflow::saturate && E >= 31) {
    // |sum| >= 2^31: beyond int32 except exactly -2^31, which the clamp gives anyway.
    return negative ? std::numeric_limits<std::int32_t>::min() : std::numeric_limits<std::int32_t>::max();
  }
  // Modulo 2^32, two's complement.
  std::uint32_t r = static_cast<std::uint32_t>(low);
  if (negative) r = ~r + 1u;
  return static_cast<std::int32_t>(r);
}

}  // namespace blockscale::reference
