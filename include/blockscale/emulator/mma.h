// SPDX-License-Identifier: Apache-2.0
// Bit-exact models of one dot product and of one whole instruction.
//
// Results are accumulator codes: fp32 bit patterns for f32 outputs (rz_fp32, rz_e8m13), fp16 codes
// for f16 outputs; NaN results are canonical (0x7FFFFFFF, 0x7FFF; numerics.md b.7). Operands are
// codes of their format (tf32: fp32 bit patterns, truncated by clearing the low 13 bits, b.1).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "blockscale/emulator/code_matrix.h"
#include "blockscale/emulator/instruction.h"
#include "blockscale/emulator/params.h"

namespace blockscale::emulator {

// ---- Engine level: any parameters, any K (chained in steps of L; b.9 in steps of 32).

struct DotOperands {
  Format a_format = Format::float8_e4m3fn, b_format = Format::float8_e4m3fn;
  std::span<const std::uint32_t> a, b;  // K codes each
  // Block scales (st_fdpa: ue8m0; gst_fdpa: ue8m0 or ue4m3): ceil(K / block) codes each.
  Format scale_format = Format::float8_e8m0fnu;
  int block = 0;
  std::span<const std::uint32_t> scale_a, scale_b;
  std::uint32_t c = 0;  // accumulator code (fp32 bits or fp16 code, per accumulator_format)
};

// d = the algorithm of `p` applied to one dot product. Throws std::invalid_argument for invalid
// parameters, mismatched lengths, scales missing or present against the algorithm, or bad codes.
std::uint32_t fdpa(const FdpaParams& p, const DotOperands& ops);

// ---- Instruction level: the instruction's own K.

// One output element of `ins`: a and b hold K codes, scales K / block codes.
std::uint32_t dot(const Instruction& ins, std::span<const std::uint32_t> a, std::span<const std::uint32_t> b,
                  std::uint32_t c, std::span<const std::uint32_t> scale_a = {},
                  std::span<const std::uint32_t> scale_b = {});

// D (M x N, row-major accumulator codes) = the instruction applied to A (M x K), B (K x N), C (M x N,
// or empty for +0) and, for block-scaled instructions, SFA (M x K/block) and SFB (K/block x N).
// Every size, format and code is checked; a violation throws std::invalid_argument naming it.
std::vector<std::uint32_t> mma(const Instruction& ins, const CodeMatrix& a, const CodeMatrix& b,
                               const CodeMatrix& c, const CodeMatrix& scale_a = {},
                               const CodeMatrix& scale_b = {});

// ---- Sparse forms (Instruction::sparse; PTX ISA 9.7.14.6 mma.sp::ordered_metadata, 9.7.15.5.2
// wgmma.mma_async.sp). A row of the logical M x K matrix A is cut into groups of
// ins.sparse_group() K positions (4, or 2 for tf32); a group holds half as many stored values, and
// a_index gives, for each stored value, its position inside its group: increasing within a 2:4
// group (i0 < i1, the ::ordered_metadata rule; PTX calls equal indices undefined), 0 or 1 for tf32.
// Stored value s of a row multiplies B row (s / (group / 2)) * group + a_index[s]. PTX's metadata
// nibble of a 2:4 group is i0 | i1 << 2 (tf32: 0x4 for position 0, 0xE for position 1).
//
// Measured on an H100 (docs/emulator.md, "Sparse MMA"): each output is the dense form
// (ins.dense_form(), K/2) applied to the K/2 stored values and the K/2 B rows they select, so the
// FDPA chunks run over stored values, not over logical K positions, and pruned positions take no
// part (not even as zero terms).

// The six position pairs a 2:4 group may hold (i0 < i1, ::ordered_metadata), for generators that
// draw sparsity patterns.
inline constexpr std::uint8_t kOrderedPairs[6][2] = {{0, 1}, {0, 2}, {0, 3}, {1, 2}, {1, 3}, {2, 3}};

// One output element: a_values and a_index hold K/2 entries, b the K codes of a B column.
std::uint32_t dot_sparse(const Instruction& ins, std::span<const std::uint32_t> a_values,
                         std::span<const std::uint8_t> a_index, std::span<const std::uint32_t> b, std::uint32_t c);

// D (M x N) from A's stored values (M x K/2), their positions (M x K/2, row-major), B (K x N) and
// C (M x N, or empty for +0).
std::vector<std::uint32_t> mma_sparse(const Instruction& ins, const CodeMatrix& a_values,
                                      std::span<const std::uint8_t> a_index, const CodeMatrix& b,
                                      const CodeMatrix& c);

// f64 DMMA rows (Algorithm::fma_chain): d = fma(a[K-1], b[K-1], ... fma(a[0], b[0], c)), each fma
// rounded to nearest even, whatever the caller's floating-point mode, with DMMA's NaN results (each
// fma returns its NaN operand quieted, B's before the accumulator's before A's; an invalid operation
// gives 0xFFF8000000000000). A is M x K, B is K x N, C is M x N, all row-major doubles.
double dot_f64(const Instruction& ins, std::span<const double> a, std::span<const double> b, double c);
// One step of that chain, a * b + acc, with DMMA's NaN results. Rounds in the caller's mode: call it
// under IEEE nearest-even with subnormals kept (dot_f64 sets that mode for its duration).
double dmma_fma(double a, double b, double acc);
std::vector<double> mma_f64(const Instruction& ins, std::span<const double> a, std::span<const double> b,
                            std::span<const double> c);

}  // namespace blockscale::emulator
