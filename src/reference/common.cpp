// SPDX-License-Identifier: Apache-2.0
#include "common.h"

#include <stdexcept>

namespace blockscale::reference::detail {

Tensor slice2d(const Tensor& t, std::int64_t b) {
  if (t.rank() == 2) return t;
  const std::int64_t rows = t.extent(-2), cols = t.extent(-1);
  const std::int64_t off = matrix_offset(t, b);
  const auto codes = t.codes();
  return Tensor(t.dtype(), {rows, cols},
                std::vector<std::uint64_t>(codes.begin() + off, codes.begin() + off + rows * cols));
}

void check_rank_and_extents(const std::string& op, const std::string& name, const Tensor& t) {
  if (t.rank() != 2 && t.rank() != 3)
    throw RuleError(Rule::rank, op,
                    name + " has rank " + std::to_string(t.rank()) + " (shape " + to_string(t.shape()) +
                        "); operands must have rank 2 or 3");
  for (const std::int64_t e : t.shape())
    if (e < 1)
      throw RuleError(Rule::empty_dimension, op,
                      name + " shape " + to_string(t.shape()) + " has an empty dimension; every extent must be at least 1");
}

Term term_of(const Decomposed& d) {
  switch (d.kind) {
    case Decomposed::zero: return {0, 0, kFinite, d.negative};
    case Decomposed::finite: return {d.sig, d.exp, kFinite, d.negative};
    case Decomposed::infinite: return {0, 0, kInfinite, d.negative};
    case Decomposed::nan: break;
  }
  return {0, 0, kNaN, d.negative};
}

Term multiply(const Term& a, const Term& b) {
  const bool neg = a.negative != b.negative;
  if (a.kind == kNaN || b.kind == kNaN) return {0, 0, kNaN, neg};
  if (a.kind == kInfinite || b.kind == kInfinite) {
    const bool zero = (a.kind == kFinite && a.sig == 0) || (b.kind == kFinite && b.sig == 0);
    return {0, 0, zero ? kNaN : kInfinite, neg};
  }
  return {a.sig * b.sig, a.exp + b.exp, kFinite, neg};
}

void check_numerics_fields(const std::string& op, const Numerics& n) {
  // Values outside the enums (cast integers) would otherwise run as another mode.
  if (static_cast<unsigned>(n.mode) > static_cast<unsigned>(Mode::hardware))
    throw RuleError(Rule::numerics, op, "Numerics::mode = " + std::to_string(static_cast<unsigned>(n.mode)) + " is not a Mode");
  if (static_cast<unsigned>(n.rounding) > static_cast<unsigned>(Rounding::stochastic))
    throw RuleError(Rule::numerics, op, "Numerics::rounding = " + std::to_string(static_cast<unsigned>(n.rounding)) + " is not a Rounding");
  if (static_cast<unsigned>(n.integer_overflow) > static_cast<unsigned>(IntegerOverflow::saturate))
    throw RuleError(Rule::numerics, op, "Numerics::integer_overflow = " + std::to_string(static_cast<unsigned>(n.integer_overflow)) +
                                            " is not an IntegerOverflow");
  if (n.mode != Mode::exact && n.rounding != Rounding::nearest_even)
    throw RuleError(Rule::numerics, op,
                    "rounding " + to_string(n.rounding) + " applies only to exact numerics (" + to_string(n) +
                        " rounds each step to nearest-even)");
  if (n.mode == Mode::exact && n.rounding == Rounding::stochastic)
    throw RuleError(Rule::numerics, op, "exact numerics round once; stochastic rounding is not offered");
  if (n.mode == Mode::hardware && n.model.empty())
    throw RuleError(Rule::numerics, op, "hardware numerics need a model name");
}

}  // namespace blockscale::reference::detail
