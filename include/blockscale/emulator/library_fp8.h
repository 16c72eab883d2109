// SPDX-License-Identifier: Apache-2.0
// Hopper fp8 GEMMs with fp32 scales, as the libraries compute them: cuBLASLt and torch._scaled_mm
// on sm_90a, for tensor-wise, row-wise and 1 x 128 / 128 x 128 block scaling (fp8_scaled.h).
//
// Their accumulation is not documented; `blockscale conform --external` measured it on an H200
// (cuBLASLt 13.1, torch 2.11; docs/conformance.md, "External fp8 GEMMs") by fitting emulator schedules
// to the libraries' outputs bit for bit. The fits are kept here as data, one row per library call
// and scaling, and computed with the emulator's wgmma model (gemm.h): promotion into fp32 every P
// wgmma k32 instructions (or one chain over all of K with FAST_ACCUM), the scales applied in the
// promotion FMA or in an epilogue. For small M x N with long K the libraries' heuristic splits K
// into S slices (cuBLASLt reports S as the algorithm's CUBLASLT_ALGO_CONFIG_SPLITK_NUM; torch does
// not say, and scripts/probe_split_k.py reads it from the outputs): each slice is accumulated
// from zero by the row's schedule, and the slices are added in order in fp32, before the epilogue.
// The slices are cut at multiples of the row's K tile (docs/conformance.md, "Split-K").
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "blockscale/emulator/gemm.h"
#include "blockscale/quantize/fp8_scaled.h"

namespace blockscale::emulator {

enum class Fp8Library : std::uint8_t { cublaslt, torch_scaled_mm };
std::string_view to_string(Fp8Library l);

// Where the fp32 scales enter.
enum class Fp8ScaleStage : std::uint8_t {
  epilogue_scale_product,  // promotions add the partials (FADD), then D = (sa*sb)*acc
  epilogue_b_first,        // promotions add the partials (FADD), then D = sa*(sb*acc)
  epilogue_a_first,        // promotions add the partials (FADD), then D = sb*(sa*acc)
  promotion_fma,           // each promotion applies sa(i, q), sb(j, q) by `promotion_fma`
};

struct LibraryFp8Schedule {
  Fp8Library library;
  bool fast_accum;  // cuBLASLt CUBLASLT_MATMUL_DESC_FAST_ACCUM, torch use_fast_accum
  Fp8Granularity a, b;
  int promotion_interval;  // wgmma k32 instructions per promotion into fp32; 0: one chain over K
  Fp8ScaleStage scales;
  PromotionFma promotion_fma;  // for Fp8ScaleStage::promotion_fma
  bool operands_exchanged;     // the kernel computes D^T = B A^T: B and its scales take A's place
                               // (an epilogue is written in the caller's A and B all the same)
  int split_granule_k;         // split-K cuts K at multiples of this many elements; 0: the kernel
                               // was never seen splitting K, and split_k > 1 is refused
  const char* evidence;        // the measurement the row comes from

  // Throws std::invalid_argument naming the field: a caller may build a row of its own (a candidate
  // to test), and the GEMMs call this first.
  void validate() const;
  std::string name() const;         // "cublaslt tensor x tensor"
  // "promotion every 4 wgmma k32 (128 of K) by FADD, then D = (sa*sb)*acc"; validate()s first.
  std::string description() const;
  // name(), where it was measured and description(): what a study reports as the model's numerics.
  std::string definition() const;
};

// The library calls by the names the command line and the Python module give them: cublaslt,
// cublaslt_fast_accum, torch_scaled_mm, torch_scaled_mm_fast_accum.
struct LibraryFp8Model {
  const char* name;
  Fp8Library library;
  bool fast_accum;
};
std::span<const LibraryFp8Model> library_fp8_models();
// nullptr for an unknown name.
const LibraryFp8Model* find_library_fp8_model(std::string_view name);

// A bf16 D (torch._scaled_mm's out_dtype=torch.bfloat16, cuBLASLt's CUDA_R_16BF) is the f32 D
// rounded once to nearest even: measured with and without split-K on an H100 and an H200
// (docs/conformance.md, "bf16 D"); so is torch._scaled_mm's f16 D (out_dtype=torch.float16),
// measured on an H200 (docs/conformance.md, "Bias"). Rounds f32 words in place to the value of
// d_format (float32: unchanged; bfloat16 or float16), kept as f32 words. Throws
// std::invalid_argument for another format.
void round_d(std::span<std::uint32_t> d, Format d_format);
// torch._scaled_mm's bias (docs/conformance.md, "Bias"; measured on an H200 with torch 2.11.0+cu130
// for tensor-wise scaling with and without use_fast_accum, row-wise and 1 x 128 x 128 x 128,
// split-K among the calls): D(i, j) = RN_d(RN_f32(D_f32(i, j) + bias(j))), one f32 add (FADD, not
// an FMA with the scales) and one rounding to D's dtype. torch takes a bias only with a bf16 or f16
// D, and only in that dtype. d: the library row's f32 D (rows x n f32 words, row-major, as
// library_fp8_gemm gives it), replaced by D's values as f32 words; bias: n codes of d_format.
// Throws std::invalid_argument naming the rule broken: d_format not bfloat16 or float16, n < 1,
// bias not n codes, d not whole rows of n, a bias code that is not a code of d_format, or NaN or
// Inf (a special bias was not measured).
void add_bias(std::span<std::uint32_t> d, std::int64_t n, std::span<const std::uint32_t> bias,
              Format d_format);

// cuBLASLt's fp8 epilogue: D = scale_d (alpha sa sb A B^T + beta C + bias), amax_d
// (CUBLASLT_MATMUL_DESC_ALPHA/BETA through cublasLtMatmul, EPILOGUE_BIAS with BIAS_POINTER and
// BIAS_DATA_TYPE, D_SCALE_POINTER, AMAX_D_POINTER). Measured with scripts/probe_cublaslt_epilogue.py
// on an H200 (cuBLASLt 13.1; docs/conformance.md, "cuBLASLt epilogue"), e4m3 x e4m3, e4m3 x e5m2
// and e5m2 x e4m3, tensor-wise (with and without FAST_ACCUM), VEC128 x VEC128 and VEC128 x
// BLK128x128, split-K 1 and 6.
struct CublasLtEpilogue {
  float alpha = 1.0f;
  float beta = 0.0f;  // 0: C is not read
  // C: M x N codes of c_format, row-major (the whole matrix; the rows computed are read).
  std::span<const std::uint32_t> c;
  Format c_format = Format::float32;
  // CUBLASLT_EPILOGUE_BIAS: M codes of bias_format, one per row of D = A B^T; empty: no bias.
  std::span<const std::uint32_t> bias;
  Format bias_format = Format::bfloat16;
  Format d_format = Format::float32;  // float32, bfloat16, float16, float8_e4m3fn; float8_e5m2 with an e5m2 operand
  float d_scale = 1.0f;               // D_SCALE_POINTER's value, for an fp8 D only
  // CUBLASLT_EPILOGUE_RELU (with a bias: RELU_BIAS): y = max(y, +0) after the bias, before D's type
  // and amax_d (RELU_BIAS after a split-K keeps a -0).
  bool relu = false;
};

struct CublasLtFp8Result {
  std::vector<std::uint32_t> d;  // (row1 - row0) x N codes of d_format, row-major (f32 words for float32)
  float amax_d = 0.0f;           // max |y| over the rows computed, y before the D scale (see below)
};

// Rows [row0, row1) of a cuBLASLt fp8 GEMM with its epilogue. The schedule must be a cuBLASLt row.
// Let X be the row's f32 result before any epilogue scaling (the accumulator for tensor-wise
// scaling, RN(sb RN(sa acc)) for row-wise (OUTER_VEC) scaling, the promoted and scaled sum for
// block scaling; after a split-K its slices' f32 sum), and S = RN(RN(alpha sa) sb) for tensor-wise
// scaling, S = alpha for row-wise and block scaling. Then, with RN the
// f32 rounding (nearest even):
//   split_k = 1:  y = RN(FMA(S, X, RN(beta C)))      (the scale's FFMA takes beta C as its addend)
//   split_k > 1:  y = RN(FMA(beta, C, RN(S X)))      (the split-K reduction's epilogue)
//   beta = 0:     y = RN(FMA(S, X, +0)) at split_k = 1 (an exact -0 becomes +0), RN(S X) after
//                 a split-K
//   bias:         y = RN(y + bias(i))                  (FADD, after C)
//   ReLU:         y = y if y > 0, else +0              (after the bias; amax_d is taken after it),
//                 but RELU_BIAS after a split-K keeps a -0
//   D: f32: y; bf16 or f16: y rounded once to nearest even; e4m3 or e5m2: RN_fp8(RN(d_scale y)),
//   saturating to the largest finite value (satfinite); amax_d = max |y|.
// Every other order of these operations missed outputs on the H200 (row-wise: 92 calls, seed 11,
// docs/conformance.md, "cuBLASLt epilogue"). What cuBLASLt 13.1 took there (others were refused,
// and are refused here, naming the rule): an f32 D with an f32 C and a bf16 bias; a bf16 D with a
// bf16 C and bias; an f16 D with an f16 C and bias; an e4m3 D, and with an e5m2 operand an e5m2 D,
// tensor-wise scaling only, with a bf16 or f16 C and a bias of C's type.
// Also refused: e5m2 x e5m2 (the libraries take neither), NaN or Inf in alpha, beta, d_scale, C or the
// bias (measured with finite values only), d_scale != 1 with another D, an fp8 D whose y is not
// finite, and the rest of library_fp8_gemm's rules.
CublasLtFp8Result cublaslt_fp8_gemm(const LibraryFp8Schedule& schedule, const Fp8ScaledMatrix& a,
                                    const Fp8ScaledMatrix& b, std::int64_t row0, std::int64_t row1,
                                    int split_k, const CublasLtEpilogue& epilogue,
                                    const GemmOptions& options = {});

// The epilogue of cublaslt_fp8_gemm for this call in words ("; epilogue y = RN(FMA(S, X, RN(beta
// C))) with S = RN(RN(alpha sa) sb), alpha 0.7, beta 0.6, then y + bias (FADD); D = ..."), to follow
// the schedule's definition().
std::string cublaslt_epilogue_definition(const LibraryFp8Schedule& schedule, int split_k,
                                         const CublasLtEpilogue& epilogue);

// Every measured row.
std::span<const LibraryFp8Schedule> library_fp8_schedules();

// The row of this call. Throws std::invalid_argument naming the combinations that were measured
// when there is none (for instance torch._scaled_mm with fast accumulation and 1 x 128 scales on
// both sides, which was not measured).
const LibraryFp8Schedule& library_fp8_schedule(Fp8Library library, bool fast_accum, Fp8Granularity a,
                                               Fp8Granularity b);

// Rows [row0, row1) of D = A B^T in f32 bits, row-major ((row1 - row0) x b.rows): `a` holds A
// (rows = M), `b` holds B (rows = N), both K-major with equal k. No C: the fits were measured with
// beta = 0. `split_k`: the library's split-K count S (1: no split); the first S - 1 slices take
// ceil(K / (S * granule)) of the row's K tiles each, the last the rest. Throws
// std::invalid_argument when the operands do not match the row's granularities, K differs, both
// elements are e5m2 (the libraries refuse it), the row range is bad, split_k < 1, or split_k > 1
// for a row whose kernel was never seen splitting K. A call that writes bf16 D (torch._scaled_mm's
// out_dtype=torch.bfloat16, cuBLASLt's CUDA_R_16BF D) gives this D rounded once to nearest even:
// measured on an H100 and an H200 with and without split-K (docs/conformance.md, "bf16 D"), so
// narrow the result (convert_code(Format::bfloat16, Format::float32, x, presets::ieee())).
std::vector<std::uint32_t> library_fp8_gemm(const LibraryFp8Schedule& schedule, const Fp8ScaledMatrix& a,
                                            const Fp8ScaledMatrix& b, std::int64_t row0, std::int64_t row1,
                                            int split_k = 1, const GemmOptions& options = {});

// The split count S that cuBLASLt's heuristic chooses for a call, as recorded on an H100 and an
// H200 (driver 580.159.04, cuBLASLt 13.1, torch 2.11.0+cu130) over a grid of shapes: M and N in
// {1, 8, 16, 32, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096, 8192, 16384},
// K in {128, 256, 384, 512, 768, 1024, 1536, 2048, 2560, 3072, 3584, 4096, 5120, 6144, 7168, 8192,
// 9216, 10240, 11264, 12288, 13312, 14336, 15360, 16384, 18432, 20480, 24576, 28672, 32768, 40960,
// 49152, 65536}; each of e4m3 x e4m3, e4m3 x e5m2 and e5m2 x e4m3. S follows no rule of the shape (the two GPUs, the workspaces and the D types all
// differ somewhere), so it is looked up, never guessed. The heuristic was asked through its C API
// by scripts/cublaslt_split_k.py, whose check found torch._scaled_mm running the answered
// algorithm in 4,000 of 4,000 calls on each GPU (docs/conformance.md, "Split-K").
struct SplitKLookup {
  std::string_view gpu = "h100";   // "h100" or "h200"
  bool bf16_d = false;             // the call writes D in bf16 (CUDA_R_16BF), else f32
  int cublaslt_workspace_mib = 64; // cuBLASLt calls: 1 or 64 (torch._scaled_mm always passes 1 MiB)
};

// S for the call of `library` (torch._scaled_mm(A, B^T): cuBLASLt asked for the exchanged
// problem; cuBLASLt: D = A B^T as blockscale's cuBLASLt study calls it) with these scalings and
// elements, at M x N x K. `fast_accum`, `a`, `b` as for library_fp8_schedule (cuBLASLt's row x
// row calls without fast accumulation never split K on the grid; with it they were not recorded,
// as fast accumulation was recorded for tensor x tensor only). Throws std::invalid_argument naming the rule broken: a GPU or workspace that was not recorded, e5m2 x e5m2 (the libraries refuse it), a
// scaling pair the libraries do not take, a shape off the grid (the message names the query that
// asks the GPU instead), or a call for which the heuristic had no algorithm.
int recorded_split_k(Fp8Library library, bool fast_accum, Fp8Granularity a, Fp8Granularity b, Format a_element,
                     Format b_element, std::int64_t M, std::int64_t N, std::int64_t K, const SplitKLookup& lookup);

// Where the recorded counts come from: GPUs, driver, library versions, date.
std::string_view recorded_split_k_provenance();

// The exact numerics of such operands: sum over k of (a(i,k) sa(i,k)) (b(j,k) sb(j,k)), exactly,
// rounded once to f32 (nearest even); an exact zero is -0 when every product is -0, else +0 (IEEE
// 754 §6.3). Rows [row0, row1) as above. Element products are summed per 128-block as integers
// (exactly, in double, int64 or 128-bit integers), and the blocks' scaled sums exactly (below).
// options.threads as for gemm(); the bits do not depend on it, nor on options.path: but for e5m2
// x e5m2, every path but GemmPath::reference first sums the blocks' terms in double-length
// floating point with an error bound, and keeps the result where the bound proves its f32
// rounding (avx512: 8 outputs per vector). options.stats, when set, counts outputs: `certified`
// those, `exact` those summed in a 256-bit fixed-point integer (the blocks' terms within 2^64 of
// each other) or without a nonzero block sum, `reference_outputs` those summed in
// reference::ExactSum (wider spreads, e5m2 x e5m2). Throws std::invalid_argument as library_fp8_gemm does
// (granularities aside), and for NaN or Inf element codes.
std::vector<std::uint32_t> exact_fp8_scaled_gemm(const Fp8ScaledMatrix& a, const Fp8ScaledMatrix& b,
                                                 std::int64_t row0, std::int64_t row1,
                                                 const GemmOptions& options = {});

// B prepared once for exact_fp8_scaled_gemm over many row ranges of an A with elements `a_element`
// (its codes as integers in strips of 64 columns, each K x 64: the form the block sums read), so
// that a long computation in row slices converts B once. Refers to `b`, which must outlive it and
// keep its shape and element type (exact_fp8_scaled_gemm refuses a B changed in either since), and
// whose codes must not change: the converted copy and the codes that the reference fallback and
// e5m2 x e5m2 read would then disagree within one call.
class ExactFp8ScaledB {
 public:
  ExactFp8ScaledB(const Fp8ScaledMatrix& b, Format a_element, const GemmOptions& options = {});
  const Fp8ScaledMatrix& matrix() const { return *b_; }
  Format a_element() const { return a_element_; }
  // Whether `b` still has the shape and element type it was prepared with.
  bool prepared_for_current_b() const { return b_->rows == rows_ && b_->k == k_ && b_->element == element_; }
  const std::vector<double>& as_double() const { return double_; }      // e4m3 x e4m3
  const std::vector<std::int64_t>& as_int64() const { return int64_; }  // with one e5m2 side

 private:
  const Fp8ScaledMatrix* b_;
  Format a_element_;
  std::int64_t rows_, k_;
  Format element_;
  std::vector<double> double_;
  std::vector<std::int64_t> int64_;
};
std::vector<std::uint32_t> exact_fp8_scaled_gemm(const Fp8ScaledMatrix& a, const ExactFp8ScaledB& b,
                                                 std::int64_t row0, std::int64_t row1,
                                                 const GemmOptions& options = {});

}  // namespace blockscale::emulator
