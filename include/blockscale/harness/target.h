// SPDX-License-Identifier: Apache-2.0
// What the conformance harness tests: a "target" is one kernel that produces output bits from
// exact inputs, together with the emulator model that predicts those bits.
//   * instruction targets: one tensor-core instruction (mma.sync, wgmma, tcgen05.mma) run as a
//     batch of independent tiles, each tile one instruction's A (m x k), B (k x n), C (m x n) and,
//     for block-scaled kinds, the scales; the model is the emulator's instruction of the same name;
//   * GEMM targets: a whole block-scaled GEMM kernel (D = (A, SFA) x (B, SFB) + C); the model is the
//     emulator GEMM schedule the kernel documents (Hopper promotion for the sm_90a kernels).
// Nothing here needs CUDA: the GPU side (device.h) maps blockscale::gpu kernels onto these.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "blockscale/emulator/gemm.h"
#include "blockscale/emulator/instruction.h"
#include "blockscale/formats/format.h"

namespace blockscale::harness {

struct InstructionTarget {
  std::string name;             // the emulator's canonical name, which is also the GPU probe's name
  emulator::Instruction model;  // parse_instruction(name)
  int m = 0, n = 0, k = 0;
  Format a = Format::float16, b = Format::float16;
  Format acc = Format::float32;  // C and D
  bool block_scaled = false;
  Format scale = Format::float8_e8m0fnu;
  int block = 0;  // elements per scale along K (block-scaled only)
  std::string note;  // how the kernel wires the operands (from the GPU catalogue), may be empty
  // A candidate table row under test (--model-override): when set, the model computes every output
  // with these parameters (emulator::fdpa per output) instead of the table row's.
  std::optional<emulator::FdpaParams> model_params;
  std::string model_override;  // how the parameters were changed, e.g. "e_zero=-21, underflow=positive"
  // An f64 DMMA row (the fma chain of mma.sync .f64): a, b and acc are unused, every element of A,
  // B, C and D is a binary64 pattern in two words, the low word first (as gpu::ProbeKernel::f64).
  bool f64 = false;
  // A sparse form (mma.sp::ordered_metadata, wgmma.mma_async.sp): k is the logical K; A holds k/2
  // stored values per row and TileBatch::a_index their positions inside groups of `group` K
  // positions (4, or 2 for tf32; emulator/mma.h mma_sparse).
  bool sparse = false;
  int group = 0;
};

// The instruction target of an emulator instruction name; std::invalid_argument names the rule a
// bad name breaks (emulator::parse_instruction).
InstructionTarget instruction_target(std::string_view name);

// A batch of tiles, laid out as blockscale::gpu::ProbeInputs (per tile t, row-major, K fastest):
//   a[t][i][kk] (m x k), b[t][j][kk] (n x k, i.e. B column j), c[t][i][j] (m x n),
//   sfa[t][i][s] (m x k/block), sfb[t][j][s] (n x k/block). One code per word (tf32: fp32 bits;
//   f64 targets: two words per element, the low word first, and the counts below are words).
// Sparse targets: a[t][i][s] and a_index[t][i][s] (m x k/2) are A's stored values and their
// positions inside their groups; b is the whole n x k.
struct TileBatch {
  std::size_t tiles = 0;
  std::vector<std::uint32_t> a, b, c;
  std::vector<std::uint8_t> sfa, sfb;
  std::vector<std::uint8_t> a_index;  // sparse targets only (otherwise empty)
};
std::size_t words_per_element(const InstructionTarget& t);  // 2 for f64 targets, else 1
std::size_t stored_k(const InstructionTarget& t);   // A values per row: k, or k / 2 for sparse targets
std::size_t a_words(const InstructionTarget& t);    // m * stored_k (times words_per_element)
std::size_t a_index_words(const InstructionTarget& t);  // m * k / 2 for sparse targets, else 0
std::size_t b_words(const InstructionTarget& t);    // n * k (times words_per_element)
std::size_t c_words(const InstructionTarget& t);    // m * n (times words_per_element)
std::size_t outputs_per_tile(const InstructionTarget& t);  // m * n
// The binary64 pattern held by the two words at `pair` (an f64 target's element), and back.
inline std::uint64_t f64_bits(const std::uint32_t* pair) { return std::uint64_t{pair[0]} | std::uint64_t{pair[1]} << 32; }
inline void put_f64_bits(std::uint32_t* pair, std::uint64_t bits) {
  pair[0] = static_cast<std::uint32_t>(bits);
  pair[1] = static_cast<std::uint32_t>(bits >> 32);
}
std::size_t scale_words(const InstructionTarget& t, int rows);  // rows * k / block, 0 unscaled
TileBatch make_batch(const InstructionTarget& t, std::size_t tiles);  // zero-filled
// std::invalid_argument naming the operand when a vector of `batch` does not hold `tiles` tiles of
// the target's sizes above (emulate_tiles, emulate_tiles_by_dot and the devices check it first).
void validate_batch(const InstructionTarget& t, const TileBatch& batch);

// The emulator's D for every tile (tiles * m * n accumulator codes), via emulator::mma (f64 targets:
// emulator::mma_f64; sparse targets: emulator::mma_sparse; with model_params set,
// emulate_tiles_by_dot), in parallel over tiles; the bits do not depend on the thread count.
std::vector<std::uint32_t> emulate_tiles(const InstructionTarget& t, const TileBatch& batch);
// Every output as one emulator::fdpa call with parameters `p` (f64 targets: one emulator::dot_f64
// call, `p` unused; sparse targets: over the stored values and the B codes at the positions
// a_index selects, gathered here). With c_after, C is left out of the fused sum (the chain) and
// added afterwards by one RNE add (a perturbation the self-test device uses).
std::vector<std::uint32_t> emulate_tiles_by_dot(const InstructionTarget& t, const TileBatch& batch,
                                                const emulator::FdpaParams& p, bool c_after = false);

// Parses "key=value[,key=value...]" (keys F, L, e_zero, underflow=positive|negative,
// rounding=rz_fp32|rz_e8m13|rne_fp16) and applies it to `p`; std::invalid_argument names a bad
// key or value.
void apply_param_override(emulator::FdpaParams& p, std::string_view spec);

// The block-scaled GEMM recipes of blockscale::gpu.
enum class GemmRecipe : std::uint8_t { mxfp8, mxfp4, nvfp4 };
std::string to_string(GemmRecipe r);

// The accumulation schedule of a block-scaled GEMM kernel (gpu/gemm.h):
//   hopper_promotion  for each scale block b in increasing K order, one wgmma k32 fp8 instruction
//                     from a fresh accumulator (T-FDPA F = 13, RZ-E8M13) over block b's elements
//                     (fp4 expanded exactly to e4m3; a 16-element NVFP4 block padded with 16
//                     zeros), then s = fp32(SFA * SFB) and acc = fma(s, partial, acc), acc
//                     starting at C (+0 without C);
//   tcgen05_chain     one tcgen05.mma block_scale instruction per K step, chained in f32 from C.
// bf16 output is the RNE conversion of the f32 result.
enum class GemmSchedule : std::uint8_t { hopper_promotion, tcgen05_chain };

struct GemmTarget {
  std::string name;
  GemmRecipe recipe = GemmRecipe::mxfp8;
  Format a = Format::float8_e4m3fn, b = Format::float8_e4m3fn;  // element formats
  Format scale = Format::float8_e8m0fnu;
  int block = 32;
  int k_multiple = 128;       // K must be a multiple of this
  bool linear_scales = true;  // also accepts linear (row-major) scales besides the 128x4 tiles
  GemmSchedule schedule_kind = GemmSchedule::hopper_promotion;
  int promotion_interval = 1; // P: scale blocks per fresh accumulator (P = 1 for our kernels)
  emulator::PromotionFma fma = emulator::PromotionFma::scale_product;
  std::string schedule;       // the kernel's own statement of its numerics
};

// A GEMM problem in logical form: element codes one per byte (A: M x K, B as its transpose N x K),
// scale codes linear (SFA: M x K/block, SFB: N x K/block), C as f32 bits (empty: no C).
struct GemmProblem {
  int m = 0, n = 0, k = 0;
  bool tiled_scales = true;  // hand the kernel 128x4-tiled scales (else linear)
  bool bf16_output = false;
  std::vector<std::uint8_t> a, b, sfa, sfb;
  std::vector<std::uint32_t> c;
};

// std::invalid_argument naming the rule when M, N or K is not positive, K is not a multiple of the
// target's block, or a vector of `p` does not have the size above (emulate_gemm and the devices
// check it first).
void validate_problem(const GemmTarget& t, const GemmProblem& p);
// The emulator's D (M x N: f32 bits, or bf16 codes in the low 16 bits) for the target's schedule.
std::vector<std::uint32_t> emulate_gemm(const GemmTarget& t, const GemmProblem& p);
// The emulator schedule of a GEMM target (the instruction and the promotion parameters).
emulator::KernelSchedule gemm_schedule(const GemmTarget& t);
// The hopper_promotion operands as the kernels feed the tensor cores and emulate_gemm hands them to
// emulator::gemm: `rows` rows of K element codes become rows of 32 x (K / block) codes in the
// wgmma operand format (fp4 expanded exactly to e4m3; each scale block in its own k32 slot, a
// 16-element block followed by 16 zeros); scale codes become fp32 bits as the kernels decode them
// (ue4m3: bit 7 ignored, numerics.md b.5).
std::vector<std::uint8_t> promotion_elements(const GemmTarget& t, std::span<const std::uint8_t> codes, int rows,
                                             int k);
std::vector<std::uint32_t> promotion_scales(const GemmTarget& t, std::span<const std::uint8_t> codes);

enum class TargetKind : std::uint8_t { instruction, gemm };
std::string to_string(TargetKind k);

struct Target {
  TargetKind kind = TargetKind::instruction;
  InstructionTarget instruction;  // kind == instruction
  GemmTarget gemm;                // kind == gemm
  std::string skip_reason;        // non-empty: the device cannot run it, and why
  const std::string& name() const { return kind == TargetKind::instruction ? instruction.name : gemm.name; }
};

// The targets of the CPU self-test: the Hopper probe instructions (the names the GPU catalogue
// uses; wgmma at N = 8), a few Blackwell and Ada instructions, and the sm_90a GEMM schedules.
std::vector<Target> self_test_targets();

}  // namespace blockscale::harness
