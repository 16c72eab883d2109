// SPDX-License-Identifier: Apache-2.0
// 2:4 sparse GEMMs: a whole D = A·B of any K computed as the chain of sparse instructions
// (mma_sparse, mma.h) that a GPU kernel issues along K, optionally cut into split-K slices, and the
// sparse GEMM of PyTorch's semi-structured sparsity (torch._cslt_sparse_mm, cuSPARSELt 0.8) on
// Hopper, measured on an H100 (docs/emulator.md, "2:4 sparse GEMMs").
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "blockscale/emulator/code_matrix.h"
#include "blockscale/emulator/gemm.h"
#include "blockscale/emulator/instruction.h"

namespace blockscale::emulator {

// A sparse A operand: for each row of the logical M x K matrix, the K/2 stored values and their
// positions inside their groups (mma.h: 2:4 groups of 4 positions, tf32 1:2 pairs).
struct SparseOperand {
  CodeMatrix values;                // M x K/2 codes (a view: of the caller's words, or of `storage`)
  std::vector<std::uint8_t> index;  // M x K/2 positions, row-major
  std::shared_ptr<const std::vector<std::uint32_t>> storage;  // the words compress_sparse made
};

// The sparse operand of a pruned matrix as libraries take it (a dense M x K matrix whose pruned
// positions hold zero; -0 is a zero): the stored values of a group are its nonzero codes, in
// position order; a group with fewer nonzero codes than it stores is completed with the zeros at
// its highest free positions, as cuSPARSELt's compressor does (measured on an H100: a zero group
// of four keeps positions 2 and 3, a zero tf32 pair its second position). Which zeros are kept
// shows only where B holds Inf or NaN (a kept zero times Inf is NaN). `dense` must have the instruction's A
// format and a K that is a multiple of the instruction's K; a group with more nonzero codes than
// the instruction stores (a matrix that is not 2:4 / 1:2 sparse) throws std::invalid_argument
// naming the row and the group.
SparseOperand compress_sparse(const Instruction& ins, const CodeMatrix& dense);

// The accumulation of a sparse GEMM: K cut into T = K / tile_k tiles of tile_k elements, the tiles
// dealt out to S slices in order, q = T / S tiles each and one more for each of the last T mod S
// slices (the partition cuSPARSELt 0.8's split-K kernels use, measured at 90 shapes on an H100);
// each slice is a chain of the sparse instruction from +0, and the slice results are added in fp32
// (RNE) in the stated order (gemm.h). S = 1 is the plain chain over all of K.
struct SparseGemmSchedule {
  Instruction instruction;  // a sparse instruction (Instruction::sparse) with f32 accumulator
  int slices = 1;           // S
  int tile_k = 0;           // K elements per tile: a multiple of the instruction's K; 0 means the instruction's K
  SplitKReduction reduction = SplitKReduction::pairwise;

  // Throws std::invalid_argument naming the rule broken.
  void validate() const;
  // K offsets of the slice starts after the first, for a K (a multiple of the tile).
  std::vector<int> slice_starts(int k) const;
  std::string name() const;
};

// D (M x N f32 bits, row-major) = A·B + C for A in sparse form (M x K/2), B (K x N) and C (M x N
// f32 bits, or absent: then D is the sum alone, a -0 included). Sizes, formats and positions are
// checked (mma.h's rules) before any work. GemmPath::reference computes each output on its own in
// a fixed order on the reference engine. The other paths compute T-FDPA rows (f16, bf16, tf32, and
// fp8 wgmma.sp) as the fast dense GEMM (gemm.h) of an expanded form: A at its logical K with +0 at
// the pruned positions, steps of twice the stored values (the identity and its one exception, a
// pruned B that is Inf or NaN, in sparse_gemm.cpp and docs/emulator.md); the b.9 rows (fp8 mma.sp)
// take the reference engine on every path. The bits are the same on every path and for any options.threads; options.stats
// counts the fast steps and the outputs computed by the reference engine.
std::vector<std::uint32_t> gemm_sparse(const SparseGemmSchedule& schedule, const SparseOperand& a, const CodeMatrix& b,
                                       const CodeMatrix& c = {}, const GemmOptions& options = {});

// ---- torch._cslt_sparse_mm (cuSPARSELt 0.8) on sm_90a.

// How a kernel reads an operand given in the input format.
enum class CusparseltRounding : std::uint8_t {
  as_given,  // the codes as they are (f16, bf16, e4m3: the instruction's own types)
  // f32 -> tf32 to nearest, ties to even; subnormals kept (the dense operand B of the tf32 kernel).
  tf32_nearest_even,
  // f32 -> tf32 as the tf32 kernel reads its sparse operand A, measured bit by bit on an H100:
  // subnormals become zero; otherwise the magnitude is rounded up to the next tf32 value unless
  // the 13 bits tf32 drops are zero and the kept fraction's last bit is 0, i.e. the word
  // (x + 0x1FFF + bit 13 of x) with its 13 low bits cleared (the round-to-nearest-even bit trick
  // with 0x1FFF in place of 0x0FFF; equally: add half a tf32 ulp, then round to nearest even).
  // Past the largest tf32 value, magnitudes 0x7F7FE000..0x7F7FF000 become Inf of their sign and
  // 0x7F7FF001..0x7F7FFFFF NaN (the half-ulp addition carries into a NaN's bits). NaN stays NaN,
  // Inf stays Inf. (The kernel's D turns an f32 -Inf into NaN: cusparselt_sparse_mm.)
  tf32_cusparselt_sparse,
};

// One kernel family that cuSPARSELt 0.8 runs for an input and output type on Hopper (from the
// kernel names: sm90_xmma_sparse_gemm_<a><d>_<compute>..._tilesize<M>x<N>x<K>), with the sparse
// instruction whose chain reproduces it, how it reads each operand, and the evidence.
struct CusparseltKernel {
  Format input;         // A and B as the caller gives them
  Format output;        // D
  int tile_k;           // K elements per tile (the kernel name's tilesize third factor)
  const char* instruction;
  CusparseltRounding a_rounding, b_rounding;
  const char* evidence;
};

// Every input/output pair the table knows (f16 -> f16, bf16 -> bf16, f32 -> f32 through tf32,
// e4m3 -> e4m3, bf16, f16, f32).
std::span<const CusparseltKernel> cusparselt_kernels();

// The kernel for an input and output format; a pair not in the table is refused naming the pairs
// it has.
const CusparseltKernel& cusparselt_kernel(Format input, Format output);

// The schedule of that kernel with S split-K slices. S is cuSPARSELt's heuristic's choice and
// depends on the shape (1 for most; 2 to 31 for long K on few output tiles): scripts/probe_sparse_mm.py
// measures it ("sweep" mode), as recorded in docs/emulator.md, and `blockscale conform --external-dir`
// finds it from a run's data. The slices are added pairwise (the only order that fits every f16
// run; the e4m3 runs fit each order tried).
SparseGemmSchedule cusparselt_schedule(Format input, Format output, int slices = 1);

// A word of an f32 (or the kernel's own) input as a kernel reads it.
std::uint32_t cusparselt_round(CusparseltRounding r, std::uint32_t word);

// torch._cslt_compress: the sparse operand of a dense M x K matrix (zeros at the pruned positions)
// as the kernels of its format read it: each element rounded as a_rounding says, then
// compress_sparse with the kernel's instruction. Every kernel of one input format reads A alike.
// Errors name the group that is not sparse (cuSPARSELt's result for one follows no rule).
SparseOperand cusparselt_compress(const CodeMatrix& dense_a);

// D (M x N codes of `output`) = A·B as torch._cslt_sparse_mm computes it for `dense_a` (M x K, zeros
// at the pruned positions) and B (K x N) in one input format: the schedule above on the operands
// as the kernel reads them; an f32 result of -Inf becomes NaN (+Inf stays), as every kernel measured
// does; then the f32 result is rounded to the output format (RNE; e4m3 saturating to +-448,
// cvt.rn.satfinite).
std::vector<std::uint32_t> cusparselt_sparse_mm(Format output, const CodeMatrix& dense_a, const CodeMatrix& b,
                                                int slices = 1, const GemmOptions& options = {});
// The same for an A from cusparselt_compress, for callers that run one operand with several slice
// counts.
std::vector<std::uint32_t> cusparselt_sparse_mm(Format output, const SparseOperand& a, const CodeMatrix& b, int slices = 1,
                                                const GemmOptions& options = {});

// The kernels' conversion of an f32 result to the output format: RNE; for e4m3 saturating to
// +-448 (cvt.rn.satfinite); an f32 output is the word as it is (a signalling NaN stays one).
// cusparselt_sparse_mm applies the -Inf rule before it.
std::uint32_t cusparselt_output(Format output, std::uint32_t f32_word);
// The same on every word of `f32_words`, in place and vectorised (the formats library's bulk
// conversion; threads as GemmOptions::threads, one below 2^22 words). An f32 output leaves the words
// as they are: they are D.
void cusparselt_output(Format output, std::span<std::uint32_t> f32_words, int threads = 0);

}  // namespace blockscale::emulator
