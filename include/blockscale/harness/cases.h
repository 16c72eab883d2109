// SPDX-License-Identifier: Apache-2.0
// Test-case generation for the conformance harness, deterministic from a seed.
//
// Three data sets (docs/conformance.md):
//   random     bit patterns: uniformly random codes (NaN, Inf, subnormals, +-0 and the largest
//              values included), and tiles biased toward what exposes the arithmetic: special
//              values sprinkled into finite data, narrow exponent windows (alignment and
//              truncation at the F boundary), cancelling pairs, near-overflow and subnormal-heavy
//              operands, C zero / random / near the products;
//   realistic  Gaussian, heavy-tailed and outlier matrices quantized to the operand format with
//              each scale rule of blockscale::quantize (OCP floor, ceil, even, RCEIL, the two
//              triton_kernels rules; the TransformerEngine and torchao NVFP4 rules for ue4m3);
//   probes     the targeted probes of ../shared/docs/numerics.md d.3 (probes.h), one dot product per
//              diagonal position of a tile;
//   tiny       products below an fp32 accumulator's zero floor (numerics.md b.3 step 2, d.3-7):
//              operands of either sign at 2^-85 .. 2^-70 where the format reaches that (bf16, tf32),
//              else in the format's 16 lowest binades; block scales near the bottom of their range
//              (GEMMs: scale products around the fp32 subnormal boundary); C = +0 in most tiles,
//              so that e_max is the row's e_zero. Not part of `all`: the other sets' floors are
//              rarely reached, this one reaches them in most outputs.
// Tile t of a data set depends only on (seed, target name, data set, t): any range of tiles can be
// generated alone, in any order, by any number of threads, with the same bits.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "blockscale/harness/target.h"

namespace blockscale::harness {

enum class DataKind : std::uint8_t { random, realistic, probes, tiny };
std::string to_string(DataKind d);
std::optional<DataKind> parse_data_kind(std::string_view s);

// splitmix64 (Steele, Lea, Flood 2014): the same stream on every machine and compiler. Callers draw
// at most one value per function call's arguments or operator's operands (their evaluation order
// is unspecified), so that a case is the same whatever the compiler.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : s_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (s_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  std::uint32_t below(std::uint32_t n) { return static_cast<std::uint32_t>((next() >> 32) * n >> 32); }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1p-53; }  // [0, 1)
  double gaussian();                                                        // Box-Muller

 private:
  std::uint64_t s_;
};

// The seed of one tile (or GEMM problem) of a data set: a hash of everything that names it.
std::uint64_t case_seed(std::uint64_t seed, std::string_view target, DataKind data, std::uint64_t index);

// Tiles [first, first + count) of a data set for an instruction target. For DataKind::probes the
// set is finite: probe_tiles(t) tiles, and tiles beyond it repeat it with random signs and C.
TileBatch make_tiles(const InstructionTarget& t, DataKind data, std::uint64_t seed, std::size_t first,
                     std::size_t count);
std::size_t probe_tiles(const InstructionTarget& t);

// GEMM problem sizes: full (up to 1024 x 1024, K up to 16 scale-block groups: device runs) or
// small (at most 64 x 65: the CPU self-test).
enum class GemmSizes : std::uint8_t { full, small };

// GEMM problem `index` of a data set. Shapes cycle through a fixed list (square, ragged M and N,
// long K); the scale layout, bf16 output and C presence vary with the index. The probes data set
// cycles through four structured variants: blocks that cancel pairwise, extreme scale codes
// (2^-127, 2^127, ue4m3 zero and subnormal), special element and C values, and C = -(exact sum).
GemmProblem make_gemm_problem(const GemmTarget& t, DataKind data, std::uint64_t seed, std::uint64_t index,
                              GemmSizes sizes = GemmSizes::full);
// The number of outputs of problem `index` (without generating it).
std::size_t gemm_problem_outputs(std::uint64_t index, GemmSizes sizes = GemmSizes::full);

}  // namespace blockscale::harness
