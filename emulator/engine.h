// SPDX-License-Identifier: Apache-2.0
// The arithmetic engine shared by every model (private to blockscale::emulator).
//
// Operands are decoded once into panels: for each vector along K (a row of A, a column of B) the
// signed integer significand and the alignment exponent e(x) of numerics.md b.1 of every element,
// K-contiguous, so that the per-output loops read two int16 streams and do integer work only. Block
// scales are decoded the same way (significand with 3 fraction bits, exponent). One fused step
// (T-FDPA / ST-FDPA, b.3/b.4) is two passes over its products: the maximum exponent, then the sum
// of the truncated aligned terms in int64; GST-FDPA (b.5) forms exact group sums first. The final
// conversion (b.6) works from the exact integer sum.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "blockscale/emulator/code_matrix.h"
#include "blockscale/emulator/instruction.h"
#include "blockscale/emulator/params.h"

namespace blockscale::emulator::detail {

// Exponent stored for a zero (or special) element: far below any real exponent, so a zero product's
// exponent sum stays below kZeroThreshold and takes e_zero instead (b.3 step 2).
inline constexpr std::int16_t kZeroExp = -16000;
inline constexpr int kZeroThreshold = -8000;

enum Special : std::uint8_t { kFinite = 0, kPosInf = 1, kNegInf = 2, kNaN = 3 };

// One operand vector along K.
struct ElementVec {
  const std::int16_t* sig = nullptr;     // signed significand incl. hidden bit; 0 for zeros and specials
  const std::int16_t* exp = nullptr;     // e(x); kZeroExp for zeros and specials
  const std::uint8_t* special = nullptr;  // Special per element, nullptr when the vector has none
  int frac = 0;                           // fraction bits of sig
  int emin = 0;                           // minimum normal exponent of the decomposition format
};

// The block scales of one row of A or one column of B.
struct ScaleVec {
  const std::int16_t* sig = nullptr;  // significand with 3 fraction bits (ue8m0: always 8; ue4m3 zero: 0)
  const std::int16_t* exp = nullptr;  // e(scale)
  const std::uint8_t* nan = nullptr;  // nonzero for a NaN scale; nullptr when none is NaN
  int block = 0;                      // elements per scale
};

// Decoded operand vectors, each `length` elements long (K padded with zeros).
class Panel {
 public:
  // vectors_are_rows: vector i is row i of m (A); otherwise column i (B). Elements k >= m's K are zero.
  // `decompose_as` is the format whose b.1 decomposition is used (the operand's own format, or f16
  // for the fp8 -> f16 conversion of b.9); a nonzero `b9_half` (the b.9 row's L) stores each
  // 2 b9_half-element block as k mod 4 in {0,1} first, then {2,3}.
  void decode(const CodeMatrix& m, bool vectors_are_rows, std::size_t length, Format decompose_as,
              std::size_t b9_half);
  ElementVec vec(std::size_t i) const {
    return {sig_.data() + i * length_, exp_.data() + i * length_,
            has_special_.empty() || !has_special_[i] ? nullptr : special_.data() + i * length_, frac_, emin_};
  }

 private:
  std::size_t count_ = 0, length_ = 0;
  int frac_ = 0, emin_ = 0;
  std::vector<std::int16_t> sig_, exp_;
  std::vector<std::uint8_t> special_, has_special_;
};

class ScalePanel {
 public:
  // vectors_are_rows: scale vector i is row i of s (SFA, M x blocks); otherwise column i (SFB,
  // blocks x N). Blocks beyond s's extent (K padding) read as 1.0.
  void decode(const CodeMatrix& s, bool vectors_are_rows, std::size_t blocks, int block);
  ScaleVec vec(std::size_t i) const {
    return {sig_.data() + i * blocks_, exp_.data() + i * blocks_,
            has_nan_.empty() || !has_nan_[i] ? nullptr : nan_.data() + i * blocks_, block_};
  }

 private:
  std::size_t blocks_ = 0;
  int block_ = 0;
  std::vector<std::int16_t> sig_, exp_;
  std::vector<std::uint8_t> nan_, has_nan_;
};

// The decomposition format an algorithm reads operands in (b.9: f16; otherwise the operand's own).
Format decomposition_format(Algorithm a, Format operand);

// One instruction of `p` over elements [k0, k0 + K) of a and b, with addend c (an accumulator code of
// `acc`); scales are read for st_fdpa / gst_fdpa only. K is a multiple of 2 p.L for fp8_via_f16 (the
// panel is in b9 order) and of p.group for gst_fdpa.
std::uint32_t run_instruction(const FdpaParams& p, Format acc, const ElementVec& a, const ElementVec& b,
                              std::size_t k0, std::size_t K, const ScaleVec* sa, const ScaleVec* sb,
                              std::uint32_t c);

// The output conversion rho (b.6) of the exact value S * 2^g.
std::uint32_t encode_output(std::int64_t S, int g, OutputRounding r, UnderflowZero uz);

// Checks the positions of a sparse instruction's stored values (PTX ISA 9.7.14.6.1: each inside its
// group, a 2:4 group's two increasing) and writes the B row, counted from the first group of
// `index`, that each one selects; throws std::invalid_argument naming A row `row` (-1: no row).
void sparse_rows(const Instruction& ins, std::span<const std::uint8_t> index, std::span<std::size_t> b_rows,
                 long long row);

// Canonical NaN and signed infinity codes of an accumulator format.
std::uint32_t canonical_nan(Format acc);
std::uint32_t signed_infinity(Format acc, bool negative);

}  // namespace blockscale::emulator::detail
