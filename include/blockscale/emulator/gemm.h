// SPDX-License-Identifier: Apache-2.0
// GEMM-level kernel models: a whole D = A·B (+ C) of any K computed as the chain of instructions a
// GPU kernel issues along K, with the accumulation schedule of that kernel:
//   * chain:      one instruction per K step, D of one step is C of the next (a tcgen05 block-scaled
//                 GEMM: the f32 accumulator lives in TMEM; a wgmma GEMM without promotion);
//   * promotion:  Hopper fine-grained scaling (DeepGEMM, DeepSeek-V3 §3.3.2): every P instructions
//                 start from a fresh accumulator, and the partial sum is added into an fp32
//                 accumulator by an FFMA that also applies the fp32 block scales (gpu.md 3.3);
//   * split-K:    K cut into contiguous slices, each slice accumulated from zero by the inner
//                 schedule, then the slices reduced in a stated order with fp32 RNE adds.
// Every output element is computed independently and in a fixed order, so the bits do not depend
// on the thread count; OpenMP (BLOCKSCALE_ENABLE_OPENMP) parallelises over output tiles.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "blockscale/emulator/code_matrix.h"
#include "blockscale/emulator/instruction.h"
#include "blockscale/quantize/tensor.h"

namespace blockscale::emulator {

enum class Accumulation : std::uint8_t { chain, promotion };

// How the promotion FFMA applies the two fp32 block scales sa (A row, K block) and sb (B column,
// K block) to the partial sum p of one promotion interval; every operation rounds to nearest even
// as CUDA's FMUL/FFMA/FADD do (NaN results canonical).
enum class PromotionFma : std::uint8_t {
  scale_product,  // acc = fma(sa*sb, p, acc): DeepGEMM sm90 "final += (sa * sb) * accum" (gpu.md 3.3)
  scale_b_first,  // acc = fma(sa, sb*p, acc)
  mul_then_add,   // acc = acc + (sa*sb)*p, no contraction: FMUL, FMUL, FADD
};

// Where C enters: as the first instruction's accumulator (enable_input_d / scale-d = 1), or added
// after the K loop with one fp32 (f16: half) RNE add, the first instruction then starting from a
// zero accumulator (enable_input_d = 0, modelled as a +0 addend, i.e. a zero term, numerics.md e.7).
enum class CPlacement : std::uint8_t { accumulator, epilogue };

// Split-K reduction order of the S slice results P_0..P_{S-1} (each an fp32 sum from zero):
//   sequential: D = (((C + P_0) + P_1) + ...) + P_{S-1};
//   pairwise:   D = C + T(P_0..P_{S-1}) with T the balanced tree of adjacent pairs,
//               T(x) = x, T(x_0..x_{n-1}) = T(first ceil(n/2)) + T(rest).
enum class SplitKReduction : std::uint8_t { sequential, pairwise };

struct KernelSchedule {
  Instruction instruction;
  Accumulation accumulation = Accumulation::chain;
  int promotion_interval = 4;  // P: instructions per promotion (DeepGEMM: 4 x k32 = 128)
  PromotionFma promotion_fma = PromotionFma::scale_product;
  CPlacement c_placement = CPlacement::accumulator;
  int split_k = 1;
  SplitKReduction reduction = SplitKReduction::sequential;
  // Split-K cuts K only at multiples of this many elements (0: at every accumulation unit, i.e.
  // every instruction of a chain, every P instructions of promotion). Each slice but the last gets
  // ceil(K / (S * granule)) granules, the last the rest (possibly none): CUTLASS-style
  // k-tiles-per-split. cuBLASLt 13.1's Hopper fp8 kernels cut at 128 (tensor-wise, 1x128 x 1x128)
  // and 512 (1x128 x 128x128) elements (docs/conformance.md, "Split-K").
  int split_granule_k = 0;

  static KernelSchedule chain(const Instruction& ins, CPlacement c = CPlacement::accumulator);
  static KernelSchedule hopper_promotion(const Instruction& ins, int interval = 4,
                                         PromotionFma fma = PromotionFma::scale_product);
  KernelSchedule with_split_k(int slices, SplitKReduction order = SplitKReduction::sequential,
                              int granule_k = 0) const;

  // Elements of K per scale block: the instruction's block for block-scaled instructions, P * K for
  // promotion, 0 (no scales) otherwise.
  int scale_block() const;
  // Elements of K per accumulation unit: the instruction's K, times P for promotion.
  int unit_k() const;
  // Accumulation units in each split-K slice (the last slice takes what remains) for `units` units.
  std::size_t slice_units(std::size_t units) const;
  // Throws std::invalid_argument naming the rule broken (promotion needs a non-block-scaled
  // instruction with f32 output, P >= 1, split_k >= 1, ...).
  void validate() const;
  std::string name() const;  // "chain(sm_100a tcgen05.mma... )", "promotion(P=4, scale_product, ...)"
};

// The default Blackwell block-scaled GEMM for mma_scaled operands on `arch` (sm_100a: tcgen05, M=128,
// N=256; sm_120a: mma.sync m16n8): kind::mxf8f6f4 for fp8/fp6 (and fp4 mixed with them) with ue8m0
// block32; for e2m1 x e2m1 kind::mxf4 with ue8m0 block32 (MXFP4) and kind::mxf4nvf4 with block16
// (ue8m0, or ue4m3 for NVFP4). Throws for a combination no instruction takes.
KernelSchedule block_scaled_schedule(Arch arch, Format a, Format b, Format scale, int block);

struct GemmOperands {
  CodeMatrix a;        // M x K codes
  CodeMatrix b;        // K x N codes
  CodeMatrix scale_a;  // M x ceil(K / scale_block): ue8m0/ue4m3 codes, or fp32 bits for promotion
  CodeMatrix scale_b;  // ceil(K / scale_block) x N
  CodeMatrix c;        // M x N accumulator codes (f32 bits / f16 codes); empty means +0
};

// Which implementation computes a GEMM. Every path gives the same bits (tests/emulator/
// fast_path_test.cpp checks each against the reference engine); they differ in speed only.
//   reference: the engine of docs/emulator.md, one output element at a time (the oracle);
//   portable:  the fast path (emulator/fast_*.cpp: exponent bounds that prove when no term is
//              truncated, exact sums in double / int32 / int8 dot products, vectors across
//              output columns) in plain C++;
//   avx2:      the same C++ compiled for AVX2 + FMA;
//   avx512:    the same algorithm written with AVX-512 intrinsics (F, BW, DQ, VL; VNNI when the
//              CPU has it; f16 / bf16 / tf32 operands: a float-form kernel of their own, with the
//              plain C++ compiled for AVX-512 for steps beyond its bounds);
//   automatic: avx512, else avx2, else portable; the environment variable
//              BLOCKSCALE_EMULATOR_PATH (auto, reference, portable, avx2, avx512) overrides it.
// The fast paths cover the chain, promotion and split-K schedules of T-FDPA / ST-FDPA instructions
// with fp8/fp6/fp4 operands and an f32 accumulator (F <= 25), of T-FDPA instructions with f16 /
// bf16 / tf32 operands and an f32 accumulator, the chains of T-FDPA instructions with an f16
// accumulator (fp8/fp6/fp4 or f16 operands), the compiler-emulated fp8 mma.sync of numerics.md
// b.9 (chain and split-K), and GST-FDPA (e2m1) instructions; every other schedule (b.9 inside a
// promotion interval, f64) runs on the reference engine whatever the path says.
enum class GemmPath : std::uint8_t { automatic, reference, portable, avx2, avx512 };

// Whether this CPU (and build) can run `path`; automatic, reference and portable always can.
bool gemm_path_available(GemmPath path);
std::string_view to_string(GemmPath path);

// Where the work of one gemm() call went, counted in output elements times fused steps (one
// step = one T-FDPA / ST-FDPA / GST-FDPA of L products): `exact` steps were proved free of
// truncation by exponent bounds and summed exactly in double; `truncating` steps took the full
// algorithm (exact e_max, each term truncated); `special` steps had a NaN or an Inf operand or
// scale; `reference_outputs` counts outputs computed by the reference engine; `fp16` counts the
// truncating steps whose terms the AVX512-FP16 form computed (GemmPath::avx512 on CPUs with
// AVX512-FP16, F <= 13; docs/emulator.md); `certified` counts the outputs of exact_fp8_scaled_gemm
// (library_fp8.h) and exact_mma (below) whose double-length sum was proved to round as the exact
// sum does.
struct GemmPathStats {
  std::uint64_t exact = 0, truncating = 0, special = 0, reference_outputs = 0, fp16 = 0, certified = 0;
};

// The most threads a call takes (GemmOptions::threads above it is refused) and the most split-K
// slices a schedule has.
inline constexpr int kMaxThreads = 4096;
inline constexpr int kMaxSplitK = 1024;

struct GemmOptions {
  int threads = 0;  // 0: the OpenMP default, 1 .. kMaxThreads; results are identical for every value
  GemmPath path = GemmPath::automatic;
  GemmPathStats* stats = nullptr;  // when set, filled in (overwritten) by the call
};

// D (M x N, row-major accumulator codes). K need not be a multiple of the instruction's K: the
// operands are padded with zero codes, as a TMA load fills out-of-bounds elements (a zero product
// takes e_zero and cannot change e_max when C != 0; with C = 0 a zero term is present anyway).
std::vector<std::uint32_t> gemm(const KernelSchedule& schedule, const GemmOperands& operands,
                                const GemmOptions& options = {});

// The same for quantized operands (blockscale/quantize) in any packing and scale layout: `a` holds A
// (rows = M), `b` holds B (rows = N: quantized from [K, N] with KAxis::first, or from B^T [N, K] with
// KAxis::last; stored K-major either way). Their block format must be the instruction's (element
// types, scale type, block size). Rank-3 tensors need equal batches; D is [batch][M][N], C (M x N)
// applies to every batch. NVFP4 per-tensor scales are applied as a kernel epilogue does
// (CUTLASS LinearCombination with beta = 1): alpha = decode_a * decode_b (FMUL), the K loop runs
// from a zero accumulator, and D = fma(alpha, acc, C) (FFMA; FMUL without C). With alpha = 1 this
// is gemm() above with the schedule's C placement.
std::vector<std::uint32_t> gemm(const KernelSchedule& schedule, const BlockScaledTensor& a, const BlockScaledTensor& b,
                                const CodeMatrix& c = {}, const GemmOptions& options = {});

// mma_scaled's `exact` numerics (reference/numerics.h: the exact sum of the scaled products plus
// C, rounded once to f32, nearest even) on quantized operands, as reference::mma_scaled computes
// it (canonical NaN 0x7FC00000, the zero signs of exact_sum.h), and with NVFP4 per-tensor scales
// whose product alpha is not 1 the epilogue of gemm() above: the exact sum from +0, then
// D = fma(alpha, acc, C), whose NaN is the FFMA's 0x7FFFFFFF (arith.h). `a` and `b` as
// for gemm() above, of any element formats with one scale type and block size. The fast paths
// compute it as a double GEMM in which every output whose operands' bit positions and norms prove
// that no addition rounds (emulator/exact_gemm.cpp) is converted once; the rest (Inf elements,
// outputs without that proof, zero sums with C = -0) goes to reference::mma_scaled, as every
// output does with GemmPath::reference. `stats` counts outputs, not steps: exact (proved),
// special (NaN rows or columns, infinite C), reference_outputs.
std::vector<std::uint32_t> exact_gemm(const BlockScaledTensor& a, const BlockScaledTensor& b, const CodeMatrix& c = {},
                                      const GemmOptions& options = {});

// ct::mma's `exact` numerics (reference/mma.h with Numerics::exact(): the exact sum of the products
// plus C, rounded once to f32, nearest even; canonical NaN 0x7FC00000, the zero signs of
// exact_sum.h) for unscaled operands: A (M x K) and B (K x N) codes of one of ct::mma's operand
// types with an f32 accumulator, e4m3 and e5m2 (also with each other), f16, bf16, tf32 (fp32
// patterns, code_matrix.h) or f32; C (M x N f32 codes) or absent (+0). What `exact` rows of
// `blockscale gemm --sparse` compute. The fast paths compute a double GEMM (exact_gemm's kernels) and
// settle each output by the first rule that applies (emulator/exact_gemm.cpp): a NaN in its row,
// column or C, or an infinite C with finite operands (`special`); exact_gemm's proof that no
// addition rounded (`exact`); an error bound of the double sum whose ends round to one f32, from
// the norms or else from the output's terms summed again with compensation (`certified`); else
// reference::mma (`reference_outputs`: Inf elements, sums within about 2^-51 of their magnitude
// from an f32 rounding boundary, exact zero sums with C = -0), as every output does with
// GemmPath::reference.
// The bits do not depend on the path or options.threads. Throws std::invalid_argument naming the
// rule broken: another operand type, two types ct::mma does not mix, K or C's shape off, an empty
// dimension (ct::mma has none), codes outside the format.
class ExactMmaB;
std::vector<std::uint32_t> exact_mma(const CodeMatrix& a, const CodeMatrix& b, const CodeMatrix& c = {},
                                     const GemmOptions& options = {});

// B decoded once for exact_mma over many row slices of A (views of its rows, and of C's), so that a
// long computation in slices decodes B once. Refers to b's codes, which must outlive it and not
// change: the decoded copy and the codes the reference fallback reads would then disagree.
class ExactMmaB {
 public:
  explicit ExactMmaB(const CodeMatrix& b, const GemmOptions& options = {});
  const CodeMatrix& matrix() const { return b_; }
  struct Decoded;  // B's columns as exact_mma's GEMM reads them (emulator/exact_gemm.cpp)
  const Decoded& decoded() const { return *decoded_; }

 private:
  CodeMatrix b_;
  std::shared_ptr<const Decoded> decoded_;
};
std::vector<std::uint32_t> exact_mma(const CodeMatrix& a, const ExactMmaB& b, const CodeMatrix& c = {},
                                     const GemmOptions& options = {});

// That epilogue on its own, for a K loop computed some other way (an exact reference, another
// schedule) that should end the same: alpha = FMUL of the two tensors' decode scales; each
// accumulator d (f32 bits, rows x c.cols() row-major, or any count without C) becomes
// FFMA(alpha, d, C) with C, FMUL(alpha, d) without; nothing changes when alpha = 1.
std::uint32_t tensor_scale_alpha(const BlockScaledTensor& a, const BlockScaledTensor& b);
void tensor_scale_epilogue(std::uint32_t alpha, std::span<std::uint32_t> d, const CodeMatrix& c = {},
                           GemmPath path = GemmPath::automatic);

}  // namespace blockscale::emulator
