// SPDX-License-Identifier: Apache-2.0
// ExactSum: an exact accumulator for sums of signed binary numbers sig * 2^exp, with IEEE 754
// special values, rounded once at the end. This is the engine of the `exact` numerics.
//
// The finite part is a wide fixed-point integer (a Kulisch-style accumulator): 32-bit digits kept
// in int64 words so that additions need no carry propagation until the end (each word absorbs
// 2^30 additions before a normalisation step). The digit range grows on demand to cover every
// term seen, so any exponent works: products of e8m0-scaled fp8 values span about 2^-290..2^290
// and f64 products 2^-2148..2^2048. Nothing is ever rounded before round_to.
//
// Special values follow IEEE 754-2019 extended to an n-term sum evaluated exactly:
//   * a NaN term, or +Inf and -Inf terms together -> NaN (the caller maps Inf*0 to add_nan);
//   * otherwise an Inf term -> that Inf;
//   * an exact zero sum is -0 when every term is -0, +0 when every term is +0, and otherwise +0
//     (-0 under Rounding::downward), as §6.3 says for x + y;
//   * a nonzero sum that rounds to zero keeps its sign; overflow follows §7.4.
#pragma once

#include <cstdint>
#include <vector>

#include "blockscale/formats/convert.h"
#include "blockscale/reference/dtype.h"
#include "blockscale/reference/numerics.h"

namespace blockscale::reference {

class ExactSum {
 public:
  // Back to an empty sum (no terms). Keeps the digit storage, so reuse is cheap.
  void clear();

  // Adds (-1)^negative * sig * 2^exp exactly; sig == 0 adds a signed zero.
  void add(bool negative, std::uint64_t sig, int exp);
  // Adds (-1)^negative * a * b * 2^exp exactly (the 128-bit product of the significands).
  void add_product(bool negative, std::uint64_t a, std::uint64_t b, int exp);
  // Adds (-1)^negative * (hi * 2^64 + lo) * 2^exp exactly.
  void add_wide(bool negative, std::uint64_t hi, std::uint64_t lo, int exp);
  void add_infinity(bool negative);
  void add_nan();
  // Adds a decomposed value (zero, finite, Inf or NaN).
  void add(const Decomposed& d);

  bool has_nan() const { return nan_ || (pos_inf_ && neg_inf_); }
  bool has_infinity() const { return pos_inf_ || neg_inf_; }
  bool empty() const { return terms_ == 0; }

  // The sum rounded once to a binary floating type (float16, bfloat16, float32 or float64),
  // returned as the type's code. A NaN result is the type's canonical quiet NaN, positive, with
  // no payload (f32 0x7FC00000). Throws std::invalid_argument for other types and for
  // Rounding::stochastic.
  std::uint64_t round_to(DType target, Rounding rounding = Rounding::nearest_even);
  // The sum as an int32 (an integer sum: every term has exp >= 0, else std::logic_error).
  // NaN / Inf terms cannot occur for integers and throw std::logic_error.
  std::int32_t to_int32(IntegerOverflow overflow);

 private:
  void reserve_range(int lo_exp, int hi_exp);  // make digits cover [lo_exp, hi_exp) plus headroom
  void add_magnitude(bool negative, std::uint64_t sig, int exp);
  void note_term(bool negative, bool zero);
  void carry_propagate();
  // Normalises a copy into magnitude digits; returns false for an exact zero.
  bool magnitude(bool& negative);

  std::vector<std::int64_t> words_;     // digit i has weight 2^(base_exp_ + 32 i)
  std::vector<std::uint32_t> scratch_;  // magnitude digits for rounding
  int base_exp_ = 0;
  std::int64_t pending_ = 0;  // additions since the last carry propagation
  std::int64_t terms_ = 0;
  bool nan_ = false, pos_inf_ = false, neg_inf_ = false;
  bool all_neg_zero_ = true, all_pos_zero_ = true;
};

}  // namespace blockscale::reference
