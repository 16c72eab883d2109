// SPDX-License-Identifier: Apache-2.0
// Targeted probes (../shared/docs/numerics.md d.1 and d.3): single dot products built from exact values,
// for one instruction's operand, accumulator and scale formats. A probe is one output element:
// one row of A, one column of B, one C element and (block-scaled) one row's and one column's scales.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "blockscale/harness/target.h"

namespace blockscale::harness {

struct DotCase {
  std::string label;                // what the probe asks, e.g. "F sweep slot 5: 2^-11"
  std::vector<std::uint32_t> a, b;  // K codes each (tf32: fp32 words)
  std::uint32_t c = 0;              // accumulator code
  std::vector<std::uint8_t> sa, sb; // K / block scale codes (block-scaled targets)
};

// The code whose value is exactly v in format f (tf32: an fp32 word with the low 13 bits clear),
// or nullopt. -0.0 gives the negative zero code.
std::optional<std::uint32_t> exact_code(Format f, double v);
// Operand codes (a, b) with value(a) * value(b) == v exactly, both normal where possible and of
// similar magnitude; nullopt when no pair exists. v = +-0 gives (+-0, 1).
std::optional<std::pair<std::uint32_t, std::uint32_t>> product_codes(Format fa, Format fb, double v);
// The value of an accumulator code (f32 bits or f16 code).
double acc_value(Format acc, std::uint32_t code);

// A dot product of target t described by values: products by slot, C, scales by block.
class DotBuilder {
 public:
  explicit DotBuilder(const InstructionTarget& t, std::string label);
  // Each returns false (and marks the dot unbuildable) when the value is not exactly formable.
  bool product(int slot, double value);
  bool operands(int slot, std::uint32_t a_code, std::uint32_t b_code);
  bool c(double value);
  void c_code(std::uint32_t code);
  void scales(int block, std::uint8_t sa, std::uint8_t sb);
  void fail() { ok_ = false; }
  bool ok() const { return ok_; }
  const DotCase& dot() const { return dot_; }

 private:
  const InstructionTarget& t_;
  DotCase dot_;
  bool ok_ = true;
};

// The scale code of 1.0 (ue8m0 127, ue4m3 0x38).
std::uint8_t unit_scale(Format scale);

// The d.3 probe set for the "probes" data set: the emulation probe, the Table 8 vector, F sweeps
// per slot and for C, output rounding (0.25 / 0.5 / 0.75 / 1.5 ulp, both signs), C alignment,
// unnormalised products, e_zero floors (incl. the fp16 tie probe), special values (NaN payloads,
// Inf*0, Inf-Inf, overflow at 2^128 / 65520, FLT_MAX, -0 sums, underflow sign) and, for
// block-scaled kinds, NaN / zero / subnormal / bit-7 scales, e8m0 code 0 and the group-of-16
// probes. Probes a format cannot express are left out (every probe is tried at a few power-of-two
// scalings first).
std::vector<DotCase> probe_set(const InstructionTarget& t);

// Packs dots into tiles: dot i of tile g is row i of A and column i of B (i < min(m, n)); C[i][j]
// is dot i's C; rows or columns beyond the dots repeat them. Off-diagonal outputs are cross
// products of the probes, compared like any other output. Unused positions of the last tile
// repeat its first dot.
TileBatch pack_dots(const InstructionTarget& t, const std::vector<DotCase>& dots);
std::size_t dots_per_tile(const InstructionTarget& t);
// D[i][i] of every packed dot, in order, from the tiles' outputs.
std::vector<std::uint32_t> unpack_dots(const InstructionTarget& t, const std::vector<std::uint32_t>& tiles_out,
                                       std::size_t dots);

}  // namespace blockscale::harness
