// SPDX-License-Identifier: Apache-2.0
#include "blockscale/emulator/library_fp8.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "blockscale/emulator/arith.h"
#include "blockscale/emulator/code_matrix.h"
#include "blockscale/formats/convert.h"
#include "blockscale/formats/detail/ieee_mode.h"
#include "blockscale/formats/presets.h"
#include "blockscale/reference/exact_sum.h"
#include "fast_gemm.h"
#include "fast_kernels.h"

#if defined(__x86_64__) && defined(__GNUC__)
// GCC 12 warns that _mm512_undefined_* inside its own intrinsic headers "may be used
// uninitialized" (GCC bug 105593); the value is never read.
#pragma GCC diagnostic push
#if !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>
#pragma GCC diagnostic pop
#endif

namespace blockscale::emulator {

namespace {

[[noreturn]] void fail(const std::string& m) { throw std::invalid_argument(m); }

using G = Fp8Granularity;

// One row per library call, from docs/conformance.md, "Results on an NVIDIA H200": NVIDIA H200,
// driver 580.159.04, cuBLASLt 13.1 (130100), PyTorch 2.11.0+cu130; runs 3 and 4, re-run 5 at
// 6f07554 (docs/conformance/h200-external-final.json); e4m3 x e4m3 operands, f32 D. The last:
// torch._scaled_mm's 1x128 x 1x128 call fitted only with the operands exchanged (PyTorch hands
// cuBLASLt B^T and A^T), acc = fma(sb, sa*p, acc). The split-K K tiles come from the probes of
// docs/conformance.md, "Split-K" (scripts/probe_split_k.py; docs/conformance/h200-split-k-*.json):
// torch._scaled_mm calls cuBLASLt, whose heuristic cut K at multiples of 128 elements for the
// tensor-wise and 1x128 x 1x128 kernels and of 512 for 1x128 x 128x128, and never for row-wise.
// An H100 (driver 580.159.04, same libraries) repeated every call with the same K tiles, bit-exact
// against these rows (docs/conformance/h100-split-k-*.json); its heuristic picked other split counts
// for some shapes (5 where the H200 took 6 at 128x256x16384), so the count is the caller's.
constexpr LibraryFp8Schedule kRows[] = {
    {Fp8Library::cublaslt, false, G::tensor, G::tensor, 4, Fp8ScaleStage::epilogue_scale_product,
     PromotionFma::scale_product, false, 128,
     "H200, cuBLASLt 13.1: 128x128x4096, 256x256x2048 (scales 0.3 x 1.7) and 64x128x16384 "
     "(split-K 6), 90,112 outputs bit-exact; its split-K order through torch._scaled_mm; H100: the "
     "same calls bit-exact"},
    {Fp8Library::cublaslt, true, G::tensor, G::tensor, 0, Fp8ScaleStage::epilogue_scale_product,
     PromotionFma::scale_product, false, 128,
     "H200, cuBLASLt 13.1: 128x128x4096 and 64x128x16384 (split-K 6), 24,576 outputs bit-exact; H100: "
     "the same calls bit-exact"},
    {Fp8Library::cublaslt, false, G::block_1x128, G::block_1x128, 4, Fp8ScaleStage::promotion_fma,
     PromotionFma::scale_b_first, false, 128,
     "H200, cuBLASLt 13.1 VEC128_32F x VEC128_32F: 256x256x2048, 65,536 outputs bit-exact; its "
     "split-K through torch._scaled_mm; H100: the same call bit-exact"},
    {Fp8Library::cublaslt, false, G::block_1x128, G::block_128x128, 4, Fp8ScaleStage::promotion_fma,
     PromotionFma::scale_product, false, 512,
     "H200, cuBLASLt 13.1 VEC128_32F x BLK128x128_32F: 256x256x2048 and 64x256x16384 (split-K 6), "
     "81,920 outputs bit-exact; H100: the same calls bit-exact"},
    {Fp8Library::torch_scaled_mm, false, G::tensor, G::tensor, 4, Fp8ScaleStage::epilogue_scale_product,
     PromotionFma::scale_product, false, 128,
     "H200, torch 2.11.0+cu130: 256x256x4096 and 64x128x16384 (split-K 6), 64x256x10240 and "
     "64x256x16384 (split-K 3 and 6), 139,264 outputs bit-exact; H100: 376,832 outputs of 22 calls "
     "(split-K 1 to 6, with the split-K probes) bit-exact"},
    {Fp8Library::torch_scaled_mm, true, G::tensor, G::tensor, 0, Fp8ScaleStage::epilogue_scale_product,
     PromotionFma::scale_product, false, 128,
     "H200, torch 2.11.0+cu130: 256x256x4096, 64x128x16384 (split-K 6), 64x256x10240 and "
     "64x256x16384 (split-K 3 and 6), 139,264 outputs bit-exact; H100: 376,832 outputs of 22 calls "
     "(split-K 1 to 6, with the split-K probes) bit-exact"},
    {Fp8Library::torch_scaled_mm, false, G::row, G::row, 4, Fp8ScaleStage::epilogue_b_first,
     PromotionFma::scale_product, false, 0,
     "H200, torch 2.11.0+cu130 rowwise: 256x256x2048, 64x256x10240 and 64x256x16384 (no split-K), "
     "131,072 outputs bit-exact; H100: 376,832 outputs of 22 calls up to 128x256x16384 bit-exact"},
    {Fp8Library::torch_scaled_mm, false, G::block_1x128, G::block_128x128, 4, Fp8ScaleStage::promotion_fma,
     PromotionFma::scale_product, false, 512,
     "H200, torch 2.11.0+cu130: 256x256x2048, 64x256x10240 and 64x256x16384 (split-K 3 and 6), "
     "98,304 outputs bit-exact; H100: 344,064 outputs of 20 calls (split-K 1 to 6, with the split-K "
     "probes) bit-exact"},
    {Fp8Library::torch_scaled_mm, false, G::block_1x128, G::block_1x128, 4, Fp8ScaleStage::promotion_fma,
     PromotionFma::scale_b_first, true, 128,
     "H200, torch 2.11.0+cu130 (run 4): 256x256x2048; 64x256x10240 and 64x256x16384 (split-K 3 "
     "and 6); 98,304 outputs bit-exact; H100: 344,064 outputs of 20 calls (split-K 1 to 6, with the "
     "split-K probes) bit-exact"},
    // cuBLASLt's own row-wise call (OUTER_VEC_32F x OUTER_VEC_32F; 2026-11-29): the epilogue takes
    // A's scale first, the mirror of torch._scaled_mm's row-wise call, which hands cuBLASLt the
    // exchanged problem. Its heuristic never split K on the recorded grid (recorded_split_k: the
    // calls without FAST_ACCUM; those with it were not recorded).
    {Fp8Library::cublaslt, false, G::row, G::row, 4, Fp8ScaleStage::epilogue_a_first, PromotionFma::scale_product,
     false, 0,
     "H200, cuBLASLt 13.1 OUTER_VEC_32F x OUTER_VEC_32F: 256x256x2048 and 64x256x16384 (no split-K), "
     "81,920 outputs bit-exact, and 65,536 with bf16 D; with its epilogue (alpha, beta C, bias; f32, "
     "bf16 and f16 D) 52 calls at 128x128x2048 and 64x128x16384, 638,976 outputs bit-exact"},
    {Fp8Library::cublaslt, true, G::row, G::row, 0, Fp8ScaleStage::epilogue_a_first, PromotionFma::scale_product,
     false, 0,
     "H200, cuBLASLt 13.1 OUTER_VEC_32F x OUTER_VEC_32F: 256x256x2048 and 64x128x16384 (no split-K), "
     "73,728 outputs bit-exact; with its epilogue (alpha, beta C, bias; f32, bf16 and f16 D) 40 calls "
     "at 128x128x2048 and 64x128x16384, 540,672 outputs bit-exact"},
};

Instruction wgmma_fp8(Format a, Format b) {
  auto name = [](Format f) { return f == Format::float8_e4m3fn ? "e4m3" : "e5m2"; };
  return parse_instruction(std::string("sm_90a wgmma.mma_async m64n128k32 f32 ") + name(a) + " " + name(b));
}

void check_matrix(const Fp8ScaledMatrix& m, const std::string& side) {
  if (m.element != Format::float8_e4m3fn && m.element != Format::float8_e5m2) {
    fail(side + "'s elements must be float8_e4m3fn or float8_e5m2");
  }
  std::int64_t elements = 0;  // rows x k, refused where it overflows (a shape no buffer can hold)
  if (m.rows < 1 || m.k < 1 || __builtin_mul_overflow(m.rows, m.k, &elements) ||
      m.codes.size() != static_cast<std::size_t>(elements)) {
    fail(side + "'s codes do not match its shape " + std::to_string(m.rows) + " x " + std::to_string(m.k));
  }
  if (static_cast<unsigned>(m.granularity) > static_cast<unsigned>(Fp8Granularity::block_128x128)) {
    fail(side + "'s granularity is not one of tensor, row, 1x128, 128x128");
  }
  if (m.scales.size() != m.scale_count()) {
    fail(side + " scaled " + std::string(to_string(m.granularity)) + " needs " +
         std::to_string(m.scale_count()) + " scales, has " + std::to_string(m.scales.size()));
  }
  // On the bits: a float comparison reads a subnormal scale as 0 under a caller's DAZ.
  for (const float s : m.scales) {
    const auto bits = std::bit_cast<std::uint32_t>(s);
    if (bits == 0 || bits >= 0x7F800000u)  // +0, Inf, NaN, or the sign bit set
      fail(side + " has a scale that is not a positive finite fp32 value");
  }
}

void check_operands(const Fp8ScaledMatrix& a, const Fp8ScaledMatrix& b, std::int64_t row0,
                    std::int64_t row1) {
  check_matrix(a, "A");
  check_matrix(b, "B");
  if (a.k != b.k) fail("A has K = " + std::to_string(a.k) + " but B has K = " + std::to_string(b.k));
  if (row0 < 0 || row1 > a.rows || row0 >= row1) {
    fail("rows [" + std::to_string(row0) + ", " + std::to_string(row1) +
         ") are not a nonempty range of A's " + std::to_string(a.rows));
  }
}

// A's rows [a0, a1) and B's rows [b0, b1) (B's rows are D's columns) as the emulator's operands:
// the codes, and for promotion the fp32 scales of every promotion interval (128 elements of K =
// 4 wgmma k32), or units.
struct Operands {
  std::vector<std::uint32_t> sa, sb;
  GemmOperands ops;
};

Operands operands(const Fp8ScaledMatrix& a, std::int64_t a0, std::int64_t a1, const Fp8ScaledMatrix& b,
                  std::int64_t b0, std::int64_t b1, bool scales_in_promotion, int interval) {
  Operands o;
  const auto rows = static_cast<std::size_t>(a1 - a0), n = static_cast<std::size_t>(b1 - b0),
             k = static_cast<std::size_t>(a.k);
  o.ops.a =
      CodeMatrix(a.element, rows, k,
                 std::span<const std::uint8_t>(a.codes).subspan(static_cast<std::size_t>(a0) * k, rows * k));
  o.ops.b =
      CodeMatrix(b.element, k, n,
                 std::span<const std::uint8_t>(b.codes).subspan(static_cast<std::size_t>(b0) * k, n * k),
                 Order::col_major);
  if (interval == 0) return o;
  const std::int64_t span = static_cast<std::int64_t>(interval) * 32, intervals = (a.k + span - 1) / span;
  o.sa.resize(rows * static_cast<std::size_t>(intervals));
  o.sb.resize(n * static_cast<std::size_t>(intervals));
  constexpr std::uint32_t kOne = 0x3F800000u;
  for (std::int64_t q = 0; q < intervals; ++q) {
    const std::int64_t block = q * span / Fp8ScaledMatrix::kBlock;
    const auto at = [&](std::size_t r) {
      return r * static_cast<std::size_t>(intervals) + static_cast<std::size_t>(q);
    };
    for (std::size_t i = 0; i < rows; ++i)
      o.sa[at(i)] = scales_in_promotion
                        ? std::bit_cast<std::uint32_t>(a.scale(a0 + static_cast<std::int64_t>(i), block))
                        : kOne;
    for (std::size_t j = 0; j < n; ++j)
      o.sb[at(j)] = scales_in_promotion
                        ? std::bit_cast<std::uint32_t>(b.scale(b0 + static_cast<std::int64_t>(j), block))
                        : kOne;
  }
  o.ops.scale_a = CodeMatrix(Format::float32, rows, static_cast<std::size_t>(intervals),
                             std::span<const std::uint32_t>(o.sa));
  o.ops.scale_b = CodeMatrix(Format::float32, static_cast<std::size_t>(intervals), n,
                             std::span<const std::uint32_t>(o.sb), Order::col_major);
  return o;
}

}  // namespace

std::string_view to_string(Fp8Library l) {
  switch (l) {
    case Fp8Library::cublaslt: return "cublaslt";
    case Fp8Library::torch_scaled_mm: return "torch_scaled_mm";
  }
  return "an unknown library";
}

std::string LibraryFp8Schedule::name() const {
  return std::string(to_string(library)) + (fast_accum ? "_fast_accum " : " ") + std::string(to_string(a)) +
         " x " + std::string(to_string(b));
}

std::string LibraryFp8Schedule::description() const {
  validate();
  std::string s = promotion_interval == 0
                      ? "one wgmma k32 chain over all of K (no promotion)"
                      : "wgmma k32 chains of " + std::to_string(promotion_interval) + " (" +
                            std::to_string(32 * promotion_interval) + " of K), each promoted into fp32 by ";
  switch (scales) {
    case Fp8ScaleStage::epilogue_scale_product:
      return s + (promotion_interval ? "FADD" : "") + ", then D = (sa*sb)*acc";
    case Fp8ScaleStage::epilogue_b_first:
      return s + (promotion_interval ? "FADD" : "") + ", then D = sa*(sb*acc)";
    case Fp8ScaleStage::epilogue_a_first:
      return s + (promotion_interval ? "FADD" : "") + ", then D = sb*(sa*acc)";
    case Fp8ScaleStage::promotion_fma: break;
  }
  if (operands_exchanged) return s + "acc = fma(sb, sa*p, acc) (the library computes D^T = B A^T)";
  switch (promotion_fma) {
    case PromotionFma::scale_product: return s + "acc = fma(sa*sb, p, acc)";
    case PromotionFma::scale_b_first: return s + "acc = fma(sa, sb*p, acc)";
    case PromotionFma::mul_then_add: return s + "acc = acc + (sa*sb)*p";
  }
  return s;
}

void LibraryFp8Schedule::validate() const {
  if (library != Fp8Library::cublaslt && library != Fp8Library::torch_scaled_mm) fail("LibraryFp8Schedule: unknown library");
  for (const Fp8Granularity g : {a, b}) {
    if (static_cast<unsigned>(g) > static_cast<unsigned>(Fp8Granularity::block_128x128))
      fail("LibraryFp8Schedule: a granularity is not one of tensor, row, 1x128, 128x128");
  }
  if (static_cast<unsigned>(scales) > static_cast<unsigned>(Fp8ScaleStage::promotion_fma))
    fail("LibraryFp8Schedule: unknown scale stage");
  if (static_cast<unsigned>(promotion_fma) > static_cast<unsigned>(PromotionFma::mul_then_add))
    fail("LibraryFp8Schedule: unknown promotion FMA order");
  // K positions are int: P wgmma k32 per promotion must fit (the interval of KernelSchedule).
  if (promotion_interval < 0 || promotion_interval > std::numeric_limits<int>::max() / 32)
    fail("LibraryFp8Schedule: promotion_interval must be 0 (one chain) .. 2^26 - 1, got " + std::to_string(promotion_interval));
  // The scales of promotion_fma are applied by the promotions: with none they would be dropped.
  if (scales == Fp8ScaleStage::promotion_fma && promotion_interval == 0)
    fail("LibraryFp8Schedule: promotion_fma scales need promotions (promotion_interval >= 1)");
  if (split_granule_k < 0) fail("LibraryFp8Schedule: split_granule_k must not be negative");
  if (evidence == nullptr) fail("LibraryFp8Schedule: evidence is required (the measurement the row comes from)");
}

std::string LibraryFp8Schedule::definition() const {
  validate();
  return name() + " on sm_90a, as measured (" + evidence + "): " + description();
}

namespace {
constexpr LibraryFp8Model kModels[] = {
    {"cublaslt", Fp8Library::cublaslt, false},
    {"cublaslt_fast_accum", Fp8Library::cublaslt, true},
    {"torch_scaled_mm", Fp8Library::torch_scaled_mm, false},
    {"torch_scaled_mm_fast_accum", Fp8Library::torch_scaled_mm, true},
};
}  // namespace

std::span<const LibraryFp8Model> library_fp8_models() { return kModels; }

const LibraryFp8Model* find_library_fp8_model(std::string_view name) {
  for (const LibraryFp8Model& m : kModels) {
    if (name == m.name) return &m;
  }
  return nullptr;
}

void round_d(std::span<std::uint32_t> d, Format d_format) {
  if (d_format == Format::float32) return;
  if (d_format != Format::bfloat16 && d_format != Format::float16) {
    throw std::invalid_argument(std::string("round_d: D's dtype is ") + to_string(d_format) +
                                "; the libraries write D in float32, bfloat16 or float16");
  }
  // The f32 word of a bf16 or f16 value (every one is a float): exact.
  for (std::uint32_t& x : d) {
    x = convert_code(Format::float32, d_format, convert_code(d_format, Format::float32, x, presets::ieee()),
                     presets::ieee());
  }
}

void add_bias(std::span<std::uint32_t> d, std::int64_t n, std::span<const std::uint32_t> bias,
              Format d_format) {
  if (d_format != Format::bfloat16 && d_format != Format::float16) {
    throw std::invalid_argument(std::string("add_bias: D's dtype is ") + to_string(d_format) +
                                "; torch._scaled_mm takes a bias only with a bfloat16 or float16 D");
  }
  if (n < 1 || static_cast<std::int64_t>(bias.size()) != n) {
    throw std::invalid_argument("add_bias: the bias has " + std::to_string(bias.size()) +
                                " values; D has n = " + std::to_string(n) + " columns, one bias value each");
  }
  if (d.size() % static_cast<std::size_t>(n) != 0) {
    throw std::invalid_argument("add_bias: D holds " + std::to_string(d.size()) +
                                " values, not whole rows of n = " + std::to_string(n));
  }
  std::vector<std::uint32_t> bias_f32(bias.size());
  for (std::size_t j = 0; j < bias.size(); ++j) {
    if (bias[j] > 0xFFFFu) {
      throw std::invalid_argument("add_bias: bias[" + std::to_string(j) + "] = " + std::to_string(bias[j]) +
                                  " is not a " + to_string(d_format) + " code");
    }
    const std::uint32_t word = convert_code(Format::float32, d_format, bias[j], presets::ieee());
    if ((word & 0x7F800000u) == 0x7F800000u) {
      throw std::invalid_argument(
          "add_bias: bias[" + std::to_string(j) +
          "] is NaN or Inf; torch._scaled_mm's bias was measured with finite values only");
    }
    bias_f32[j] = word;
  }
  const auto columns = static_cast<std::size_t>(n);
  for (std::size_t i = 0; i < d.size(); ++i) d[i] = add_f32(d[i], bias_f32[i % columns]);
  round_d(d, d_format);
}

std::span<const LibraryFp8Schedule> library_fp8_schedules() { return kRows; }

const LibraryFp8Schedule& library_fp8_schedule(Fp8Library library, bool fast_accum, Fp8Granularity a,
                                               Fp8Granularity b) {
  std::string measured;
  for (const LibraryFp8Schedule& s : library_fp8_schedules()) {
    if (s.library != library || s.fast_accum != fast_accum) continue;
    if (s.a == a && s.b == b) return s;
    measured +=
        (measured.empty() ? "" : ", ") + std::string(to_string(s.a)) + " x " + std::string(to_string(s.b));
  }
  fail(std::string(to_string(library)) + (fast_accum ? " with fast accumulation" : "") +
       " was not measured with A " + std::string(to_string(a)) + " x B " + std::string(to_string(b)) +
       " scaling (measured: " + (measured.empty() ? std::string("none") : measured) +
       "; docs/conformance.md, \"External fp8 GEMMs\")");
}

namespace {

// The row's f32 result for rows [row0, row1) before an epilogue's scales: with the scales applied
// in the promotions, the whole result; else the accumulator (after a split-K, its slices' sum).
std::vector<std::uint32_t> accumulation(const LibraryFp8Schedule& s, const Fp8ScaledMatrix& a,
                                        const Fp8ScaledMatrix& b, std::int64_t row0, std::int64_t row1,
                                        int split_k, const GemmOptions& options) {
  s.validate();
  check_operands(a, b, row0, row1);
  if (split_k < 1) fail("split_k must be >= 1, got " + std::to_string(split_k));
  if (split_k > 1 && s.split_granule_k == 0) {
    fail(s.name() +
         " was never seen splitting K (docs/conformance.md, \"Split-K\"): split_k must be 1, got " +
         std::to_string(split_k));
  }
  if (a.granularity != s.a || b.granularity != s.b) {
    fail(s.name() + " takes A scaled " + std::string(to_string(s.a)) + " and B " +
         std::string(to_string(s.b)) + "; got " + std::string(to_string(a.granularity)) + " and " +
         std::string(to_string(b.granularity)));
  }
  if (a.element == Format::float8_e5m2 && b.element == Format::float8_e5m2) {
    fail("e5m2 x e5m2: cuBLASLt and torch._scaled_mm take e4m3 x e4m3, e4m3 x e5m2 and e5m2 x e4m3 only");
  }
  const std::int64_t rows = row1 - row0, n = b.rows;
  const bool in_promotion = s.scales == Fp8ScaleStage::promotion_fma;
  // With the operands exchanged the kernel computes D^T = B A^T: all of B in A's place, A's rows
  // as the columns; the result is transposed back.
  const bool exchanged = s.operands_exchanged;
  const Operands o = exchanged ? operands(b, 0, n, a, row0, row1, in_promotion, s.promotion_interval)
                               : operands(a, row0, row1, b, 0, n, in_promotion, s.promotion_interval);
  const Instruction ins = exchanged ? wgmma_fp8(b.element, a.element) : wgmma_fp8(a.element, b.element);
  KernelSchedule schedule = s.promotion_interval == 0 ? KernelSchedule::chain(ins)
                                                      : KernelSchedule::hopper_promotion(
                                                            ins, s.promotion_interval, s.promotion_fma);
  // The slices are added in order, from +0, before any epilogue (the fits: sequential, not pairwise).
  if (split_k > 1) schedule = schedule.with_split_k(split_k, SplitKReduction::sequential, s.split_granule_k);
  std::vector<std::uint32_t> acc = gemm(schedule, o.ops, options);
  if (exchanged) {
    const std::vector<std::uint32_t> t = std::move(acc);
    acc.resize(t.size());
    for (std::int64_t i = 0; i < rows; ++i)
      for (std::int64_t j = 0; j < n; ++j)
        acc[static_cast<std::size_t>(i * n + j)] = t[static_cast<std::size_t>(j * rows + i)];
  }
  return acc;
}

}  // namespace

namespace {

// Tensor-wise or row-wise scales in the epilogue, on the accumulators of rows row0.. of D: each
// output's two FMULs, rounded apart, in the row's order.
void scale_in_epilogue(const LibraryFp8Schedule& s, const Fp8ScaledMatrix& a, const Fp8ScaledMatrix& b,
                       std::int64_t row0, std::vector<std::uint32_t>& acc) {
  const std::int64_t n = b.rows, rows = static_cast<std::int64_t>(acc.size()) / n;
  for (std::int64_t i = 0; i < rows; ++i) {
    const std::uint32_t sa = std::bit_cast<std::uint32_t>(a.scale(row0 + i, 0));
    for (std::int64_t j = 0; j < n; ++j) {
      const std::uint32_t sb = std::bit_cast<std::uint32_t>(b.scale(j, 0));
      std::uint32_t& d = acc[static_cast<std::size_t>(i * n + j)];
      switch (s.scales) {
        case Fp8ScaleStage::epilogue_scale_product: d = mul_f32(mul_f32(sa, sb), d); break;
        case Fp8ScaleStage::epilogue_b_first: d = mul_f32(sa, mul_f32(sb, d)); break;
        case Fp8ScaleStage::epilogue_a_first: d = mul_f32(sb, mul_f32(sa, d)); break;
        case Fp8ScaleStage::promotion_fma: return;
      }
    }
  }
}

}  // namespace

std::vector<std::uint32_t> library_fp8_gemm(const LibraryFp8Schedule& s, const Fp8ScaledMatrix& a,
                                            const Fp8ScaledMatrix& b, std::int64_t row0, std::int64_t row1,
                                            int split_k, const GemmOptions& options) {
  std::vector<std::uint32_t> acc = accumulation(s, a, b, row0, row1, split_k, options);
  scale_in_epilogue(s, a, b, row0, acc);
  return acc;
}

namespace {

// The f32 words of codes of `format` (float32, bfloat16 or float16), refusing a word that is not a
// code of the format, NaN or Inf: the epilogue was measured with finite values.
std::vector<std::uint32_t> finite_f32_words(std::span<const std::uint32_t> codes, Format format, const char* what) {
  std::vector<std::uint32_t> words(codes.size());
  const std::uint32_t limit = format == Format::float32 ? 0xFFFFFFFFu : 0xFFFFu;
  for (std::size_t i = 0; i < codes.size(); ++i) {
    if (codes[i] > limit) {
      fail(std::string("cublaslt_fp8_gemm: ") + what + "[" + std::to_string(i) + "] = " + std::to_string(codes[i]) +
           " is not a " + to_string(format) + " code");
    }
    const std::uint32_t w =
        format == Format::float32 ? codes[i] : convert_code(Format::float32, format, codes[i], presets::ieee());
    if ((w & 0x7F800000u) == 0x7F800000u) {
      fail(std::string("cublaslt_fp8_gemm: ") + what + "[" + std::to_string(i) +
           "] is NaN or Inf; cuBLASLt's epilogue was measured with finite values only");
    }
    words[i] = w;
  }
  return words;
}

// The C and bias types cuBLASLt 13.1 took on the H200 for each D type (the rest: "no algorithm").
void check_epilogue_types(const LibraryFp8Schedule& s, const CublasLtEpilogue& e, bool e5m2_operand) {
  const auto name = [](Format f) { return to_string(f); };
  const bool fp8_d = e.d_format == Format::float8_e4m3fn || (e.d_format == Format::float8_e5m2 && e5m2_operand);
  Format c_expected = e.d_format;
  if (e.d_format == Format::float32) {
    if (e.bias_format != Format::bfloat16 && !e.bias.empty()) {
      fail("cublaslt_fp8_gemm: with a float32 D cuBLASLt takes a bfloat16 bias only, got " + name(e.bias_format) +
           " (cuBLASLt 13.1 on an H200: no algorithm for the others)");
    }
  } else if (e.d_format == Format::bfloat16 || e.d_format == Format::float16) {
    if (!e.bias.empty() && e.bias_format != e.d_format) {
      fail("cublaslt_fp8_gemm: with a " + name(e.d_format) + " D the bias is " + name(e.d_format) + ", got " +
           name(e.bias_format) + " (cuBLASLt 13.1 on an H200: no algorithm for the others)");
    }
  } else if (fp8_d) {
    if (s.a != Fp8Granularity::tensor || s.b != Fp8Granularity::tensor) {
      fail("cublaslt_fp8_gemm: an fp8 D with " + std::string(to_string(s.a)) + " x " + std::string(to_string(s.b)) +
           " scaling: cuBLASLt 13.1 refused it on an H200 (block scales: invalid value; row-wise: no "
           "algorithm); it takes an fp8 D with tensor-wise scales only");
    }
    if (e.c_format != Format::bfloat16 && e.c_format != Format::float16) {
      fail("cublaslt_fp8_gemm: with an fp8 D, C is bfloat16 or float16, got " + name(e.c_format));
    }
    if (!e.bias.empty() && e.bias_format != e.c_format) {
      fail("cublaslt_fp8_gemm: with an fp8 D the bias has C's type (" + name(e.c_format) + "), got " +
           name(e.bias_format) + " (cuBLASLt 13.1 on an H200: no algorithm for the others)");
    }
    c_expected = e.c_format;
  } else {
    fail("cublaslt_fp8_gemm: D's type is " + name(e.d_format) +
         "; measured: float32, bfloat16, float16 and float8_e4m3fn, and float8_e5m2 with an e5m2 operand (with "
         "e4m3 x e4m3 an e5m2 D had no algorithm)");
  }
  if (e.beta != 0.0f && e.c_format != c_expected) {
    fail("cublaslt_fp8_gemm: with a " + name(e.d_format) + " D, C is " + name(c_expected) + ", got " +
         name(e.c_format) + " (cuBLASLt 13.1 on an H200: no algorithm for the others)");
  }
  if (!fp8_d && e.d_scale != 1.0f) {
    fail("cublaslt_fp8_gemm: a D scale (" + std::to_string(e.d_scale) + ") was measured with an fp8 D only");
  }
  for (const auto& [value, what] : {std::pair{e.alpha, "alpha"}, {e.beta, "beta"}, {e.d_scale, "d_scale"}}) {
    if (!std::isfinite(value)) fail(std::string("cublaslt_fp8_gemm: ") + what + " is NaN or Inf");
  }
}

}  // namespace

std::string cublaslt_epilogue_definition(const LibraryFp8Schedule& s, int split_k, const CublasLtEpilogue& e) {
  // The call described must be one cublaslt_fp8_gemm takes (the operands aside: an e5m2 D allowed).
  s.validate();
  if (split_k < 1 || split_k > kMaxSplitK) fail("split_k must be 1 .. " + std::to_string(kMaxSplitK) + ", got " + std::to_string(split_k));
  check_epilogue_types(s, e, true);
  const auto number = [](float x) {
    char text[32];
    std::snprintf(text, sizeof text, "%.9g", static_cast<double>(x));
    return std::string(text);
  };
  const bool tensor = s.scales == Fp8ScaleStage::epilogue_scale_product;
  std::string w = "; epilogue y = ";
  if (e.beta == 0.0f) {
    w += "RN(S X)";
  } else {
    w += split_k > 1 ? "RN(FMA(beta, C, RN(S X))) (after the split-K)" : "RN(FMA(S, X, RN(beta C)))";
  }
  w += tensor ? " with S = RN(RN(alpha sa) sb)" : " with S = alpha";
  w += ", alpha " + number(e.alpha);
  if (e.beta != 0.0f) w += ", beta " + number(e.beta) + ", C " + to_string(e.c_format);
  if (!e.bias.empty()) w += ", then y + bias (" + to_string(e.bias_format) + ", FADD)";
  if (e.relu) w += ", then ReLU: y = max(y, +0) (a -0 kept by RELU_BIAS after a split-K)";
  if (e.d_format == Format::float8_e4m3fn || e.d_format == Format::float8_e5m2) {
    w += "; D = " + to_string(e.d_format) + " of RN(" + number(e.d_scale) +
         " y), saturating (satfinite); amax_d = max |y|";
  } else if (e.d_format != Format::float32) {
    w += "; D = y rounded once to " + to_string(e.d_format) + " (nearest even)";
  }
  return w + ", as cuBLASLt 13.1 computed it on an H200";
}

CublasLtFp8Result cublaslt_fp8_gemm(const LibraryFp8Schedule& s, const Fp8ScaledMatrix& a, const Fp8ScaledMatrix& b,
                                    std::int64_t row0, std::int64_t row1, int split_k, const CublasLtEpilogue& e,
                                    const GemmOptions& options) {
  if (s.library != Fp8Library::cublaslt) {
    fail("cublaslt_fp8_gemm models cuBLASLt's own calls; " + s.name() +
         " is another library's row (torch._scaled_mm's bias: add_bias)");
  }
  const bool e5m2_operand = a.element == Format::float8_e5m2 || b.element == Format::float8_e5m2;
  check_epilogue_types(s, e, e5m2_operand);
  check_operands(a, b, row0, row1);
  const std::int64_t rows = row1 - row0, n = b.rows;
  const auto total = static_cast<std::size_t>(a.rows) * static_cast<std::size_t>(n);
  std::vector<std::uint32_t> c, bias;
  if (e.beta != 0.0f) {
    if (e.c.size() != total) {
      fail("cublaslt_fp8_gemm: C holds " + std::to_string(e.c.size()) + " values; D is M x N = " +
           std::to_string(a.rows) + " x " + std::to_string(n));
    }
    c = finite_f32_words(e.c.subspan(static_cast<std::size_t>(row0 * n), static_cast<std::size_t>(rows * n)),
                         e.c_format, "C");
  }
  if (!e.bias.empty()) {
    if (static_cast<std::int64_t>(e.bias.size()) != a.rows) {
      fail("cublaslt_fp8_gemm: the bias has " + std::to_string(e.bias.size()) + " values; D has M = " +
           std::to_string(a.rows) + " rows, one bias value each");
    }
    bias = finite_f32_words(e.bias, e.bias_format, "bias");
  }
  CublasLtFp8Result r;
  r.d = accumulation(s, a, b, row0, row1, split_k, options);
  // Row-wise scaling: X is the row's scaled result, RN(sb RN(sa acc)), and S = alpha (as for block
  // scaling); measured on an H200 (docs/conformance.md, "cuBLASLt epilogue").
  if (s.scales == Fp8ScaleStage::epilogue_a_first) scale_in_epilogue(s, a, b, row0, r.d);
  const std::uint32_t alpha = std::bit_cast<std::uint32_t>(e.alpha), beta = std::bit_cast<std::uint32_t>(e.beta),
                      d_scale = std::bit_cast<std::uint32_t>(e.d_scale);
  const bool tensor = s.scales == Fp8ScaleStage::epilogue_scale_product;
  const bool fp8_d = e.d_format == Format::float8_e4m3fn || e.d_format == Format::float8_e5m2;
  const ConvertOptions satfinite =
      presets::cuda(fp8_d ? e.d_format : Format::float8_e4m3fn, Format::float32, false, Rounding::nearest_even,
                    Overflow::saturate);
  // The ReLU's comparison and amax_d's maximum are host float operations: under DAZ a subnormal y
  // would compare as 0, be zeroed and be left out of amax_d.
  const blockscale::detail::IeeeMode ieee;
  float amax = 0.0f;
  for (std::int64_t i = 0; i < rows; ++i) {
    const std::uint32_t scale =
        tensor ? mul_f32(mul_f32(alpha, std::bit_cast<std::uint32_t>(a.scale(row0 + i, 0))),
                         std::bit_cast<std::uint32_t>(b.scale(0, 0)))
               : alpha;
    for (std::int64_t j = 0; j < n; ++j) {
      const auto at = static_cast<std::size_t>(i * n + j);
      std::uint32_t y;
      if (e.beta == 0.0f) {
        // Without C the fused epilogue still adds a zero: FMA(S, X, +0), so an exact -0 from a
        // negative S comes out +0; the split-K reduction's S X keeps it (measured on an H200 with
        // zero operands and alpha = -1: docs/conformance.md, "cuBLASLt epilogue", signed zeros).
        y = split_k == 1 ? fma_f32(scale, r.d[at], 0u) : mul_f32(scale, r.d[at]);
      } else if (split_k == 1) {
        y = fma_f32(scale, r.d[at], mul_f32(beta, c[at]));
      } else {
        y = fma_f32(beta, c[at], mul_f32(scale, r.d[at]));
      }
      if (!bias.empty()) y = add_f32(y, bias[static_cast<std::size_t>(row0 + i)]);
      // ReLU on y, before amax_d and D's type (measured on an H200: amax_d is max |y| after it): +0
      // for every value not above zero, but RELU_BIAS after a split-K keeps a -0 (the same
      // measurement of signed zeros; RELU without a bias gives +0 there too).
      const bool keeps_minus_zero = split_k > 1 && !bias.empty() && y == 0x80000000u;
      if (e.relu && !(std::bit_cast<float>(y) > 0.0f) && !keeps_minus_zero) y = 0u;
      amax = std::max(amax, std::fabs(std::bit_cast<float>(y)));
      if (fp8_d) {
        if ((y & 0x7F800000u) == 0x7F800000u) {
          fail("cublaslt_fp8_gemm: D(" + std::to_string(row0 + i) + ", " + std::to_string(j) +
               ") before the D scale is NaN or Inf; an fp8 D was measured with finite values only");
        }
        y = convert_code(e.d_format, Format::float32, mul_f32(d_scale, y), satfinite);
      } else if (e.d_format != Format::float32) {
        y = convert_code(e.d_format, Format::float32, y, presets::ieee());
      }
      r.d[at] = y;
    }
  }
  r.amax_d = amax;
  return r;
}

namespace {

// ---- The exact numerics. An e4m3 element is an integer times 2^-9 (|integer| <= 448 * 2^9 <
// 2^18), an e5m2 element one times 2^-16 (< 2^32). So the products of one 128-element block are
// integers in units of 2^(u_a + u_b), and their sum S_q is an exact integer: below 2^43 for e4m3
// x e4m3 (exact in double), below 2^57 with an e5m2 operand (int64), below 2^71 for e5m2 x e5m2
// (128-bit). The output is sum_q sa(i, q) sb(j, q) S_q 2^(u_a + u_b): each term an exact product of
// S_q with the two 24-bit scale significands, added in reference::ExactSum and rounded once.
struct ElementUnits {
  int unit;                   // log2 of the unit
  std::int64_t integer[256];  // code -> signed integer (NaN and Inf codes: 0; rejected before use)
};

ElementUnits element_units(Format f) {
  ElementUnits u{};
  u.unit = f == Format::float8_e4m3fn ? -9 : -16;
  for (int c = 0; c < 256; ++c) {
    const double v = to_double(f, static_cast<std::uint32_t>(c));
    u.integer[c] = std::isfinite(v) ? static_cast<std::int64_t>(std::ldexp(v, -u.unit)) : 0;
  }
  return u;
}

// Codes that are not finite values (e4m3 NaN, e5m2 Inf and NaN) in rows [r0, r1): no recipe makes
// them.
void check_finite_codes(const Fp8ScaledMatrix& m, const char* side, std::int64_t r0, std::int64_t r1) {
  for (auto i = static_cast<std::size_t>(r0 * m.k); i < static_cast<std::size_t>(r1 * m.k); ++i) {
    if (!std::isfinite(to_double(m.element, m.codes[i]))) {
      fail(std::string("exact_fp8_scaled_gemm: ") + side + " holds a NaN or Inf code at element " +
           std::to_string(i));
    }
  }
}

// sig * 2^exp of a positive finite fp32.
void decompose_f32(float x, std::uint64_t& sig, int& exp) {
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(x);
  const int field = static_cast<int>(bits >> 23);
  sig = (bits & 0x7FFFFFu) | (field ? 0x800000u : 0u);
  exp = (field ? field : 1) - 150;
}

__extension__ typedef __int128 i128;  // GCC/Clang extension: e5m2 x e5m2 block sums (below 2^71)
__extension__ typedef unsigned __int128 u128;

// One output's block terms (-1)^negative * sum * scale_sig * 2^exp (sum a block sum, scale_sig the
// product of the two scale significands), summed exactly. Most outputs have terms whose exponents
// lie within 64 of each other: each term (below 2^105, as sum < 2^57 and scale_sig < 2^48) shifted
// onto the smallest exponent is then below 2^169, and up to 2^13 of them (K up to 2^20) fit a
// 256-bit two's-complement integer, rounded once to f32 below. The rest go to reference::ExactSum,
// which takes any exponents.
constexpr int kFixedPointSpan = 64;

class FixedPoint256 {
 public:
  // (-1)^negative * sum * scale_sig * 2^shift on the anchor, 0 <= shift <= 64.
  void add(bool negative, std::uint64_t sum, std::uint64_t scale_sig, int shift) {
    const u128 p = static_cast<u128>(sum) * scale_sig;
    const u128 lo = shift == 0 ? p : p << shift, hi = shift == 0 ? 0 : p >> (128 - shift);
    if (!negative) {
      const u128 l = lo_ + lo;
      hi_ += hi + (l < lo_ ? 1 : 0);
      lo_ = l;
    } else {
      const u128 l = lo_ - lo;
      hi_ -= hi + (l > lo_ ? 1 : 0);
      lo_ = l;
    }
  }
  // The sum times 2^anchor, rounded to f32 (nearest even, subnormals, overflow to Inf); a sum of
  // zero is +0 (the terms are nonzero), a nonzero one that rounds to zero keeps its sign.
  std::uint32_t to_f32(int anchor) const {
    u128 lo = lo_, hi = hi_;
    const bool negative = (hi >> 127) != 0;
    if (negative) {  // two's-complement negation of the 256 bits
      lo = ~lo + 1;
      hi = ~hi + (lo == 0 ? 1 : 0);
    }
    if (lo == 0 && hi == 0) return 0;
    const int length = hi != 0 ? 128 + bit_length(hi) : bit_length(lo);
    const int e = anchor + length - 1;  // the value's binary exponent
    const std::uint32_t sign = negative ? 0x80000000u : 0u;
    if (e > 127) return sign | 0x7F800000u;
    const int quantum = std::max(e - 23, -149);  // the f32 grid at this exponent
    const int shift = quantum - anchor;
    std::uint64_t m;
    if (shift <= 0) {
      m = static_cast<std::uint64_t>(lo) << -shift;  // the sum has at most 24 bits: exact
    } else {
      const std::uint64_t top = shifted_right(lo, hi, shift - 1);  // m and the round bit
      m = top >> 1;
      if ((top & 1) != 0 && (any_below(lo, hi, shift - 1) || (m & 1) != 0)) ++m;
    }
    if (m < (std::uint64_t{1} << 23)) return sign | static_cast<std::uint32_t>(m);  // subnormal or zero
    // m is in 2^23 .. 2^24: a rounding that carried to 2^24 adds one to the exponent field below,
    // which is the next binade (and Inf above the largest).
    const int biased = quantum + 23 + 127;
    if (biased >= 255) return sign | 0x7F800000u;
    return sign | ((static_cast<std::uint32_t>(biased) << 23) +
                   static_cast<std::uint32_t>(m - (std::uint64_t{1} << 23)));
  }

 private:
  static int bit_length(u128 x) {
    const auto h = static_cast<std::uint64_t>(x >> 64);
    return h != 0 ? 128 - std::countl_zero(h) : 64 - std::countl_zero(static_cast<std::uint64_t>(x));
  }
  static std::uint64_t shifted_right(u128 lo, u128 hi, int p) {  // (hi:lo) >> p, known below 2^26
    if (p >= 128) return static_cast<std::uint64_t>(hi >> (p - 128));
    if (p == 0) return static_cast<std::uint64_t>(lo);
    return static_cast<std::uint64_t>((lo >> p) | (hi << (128 - p)));
  }
  static bool any_below(u128 lo, u128 hi, int p) {  // (hi:lo) mod 2^p != 0
    if (p <= 0) return false;
    if (p < 128) return (lo & ((u128{1} << p) - 1)) != 0;
    if (p == 128) return lo != 0;
    return lo != 0 || (hi & ((u128{1} << (p - 128)) - 1)) != 0;
  }
  u128 lo_ = 0, hi_ = 0;
};

// A task: kRowBlock rows of A x kColumnStrip columns of B (B's 128 x 64 sub-block of a K block,
// 64 KB, serves all its rows); inside it, register tiles of kRowGroup rows x 16 columns.
constexpr std::int64_t kRowGroup = 4, kRowBlock = 64, kColumnStrip = 64;

// The block sums S_q of rows [i0, i0 + r_count) x columns [j0, j1), all blocks:
// sums[(r * kb + q) * W + j] (a_rows holds whole groups of kRowGroup rows, the ones past r_count
// zeros, not stored), so that a row's columns of one block lie side by side. Acc: double (e4m3 x e4m3) or std::int64_t; B is k x n, row-major, in units.
// Every sum is exact, so the order of the additions and the vector width cannot change a bit.
template <typename Acc>
[[gnu::always_inline]] inline void block_sums_body(const Acc* a_rows, std::int64_t r_count, const Acc* b,
                                                   std::int64_t n, std::int64_t k, std::int64_t j0,
                                                   std::int64_t j1, Acc* sums) {
  typedef Acc V __attribute__((vector_size(64)));  // 8 lanes
  const auto load = [](const Acc* p) {
    V v;
    std::memcpy(&v, p, sizeof v);
    return v;
  };
  const std::int64_t w = j1 - j0, kb = (k + Fp8ScaledMatrix::kBlock - 1) / Fp8ScaledMatrix::kBlock;
  for (std::int64_t q = 0; q < kb; ++q) {
    const std::int64_t k0 = q * Fp8ScaledMatrix::kBlock, k1 = std::min(k, k0 + Fp8ScaledMatrix::kBlock);
    for (std::int64_t g = 0; g < r_count; g += kRowGroup) {
      const Acc* group = a_rows + g * k;
      for (std::int64_t j = j0; j + 16 <= j1; j += 16) {
        V acc[kRowGroup][2] = {};
        for (std::int64_t kk = k0; kk < k1; ++kk) {
          const V b0 = load(b + kk * n + j), b1 = load(b + kk * n + j + 8);
          for (std::int64_t r = 0; r < kRowGroup; ++r) {
            const Acc x = group[r * k + kk];
            acc[r][0] += x * b0;
            acc[r][1] += x * b1;
          }
        }
        for (std::int64_t r = 0; r < std::min(kRowGroup, r_count - g); ++r)
          std::memcpy(sums + ((g + r) * kb + q) * w + (j - j0), acc[r], sizeof acc[r]);
      }
    }
    for (std::int64_t j = j0 + (j1 - j0) / 16 * 16; j < j1; ++j)  // the columns past the last whole 16
      for (std::int64_t r = 0; r < r_count; ++r) {
        Acc acc{0};
        for (std::int64_t kk = k0; kk < k1; ++kk) acc += a_rows[r * k + kk] * b[kk * n + j];
        sums[(r * kb + q) * w + (j - j0)] = acc;
      }
  }
}

template <typename Acc>
using BlockSumsFn = void (*)(const Acc*, std::int64_t, const Acc*, std::int64_t, std::int64_t, std::int64_t,
                             std::int64_t, Acc*);
template <typename Acc>
void block_sums_portable(const Acc* a, std::int64_t rc, const Acc* b, std::int64_t n, std::int64_t k,
                         std::int64_t j0, std::int64_t j1, Acc* sums) {
  block_sums_body(a, rc, b, n, k, j0, j1, sums);
}
#if defined(__x86_64__) && defined(__GNUC__)
template <typename Acc>
__attribute__((target("avx2"))) void block_sums_avx2(const Acc* a, std::int64_t rc, const Acc* b,
                                                     std::int64_t n, std::int64_t k, std::int64_t j0,
                                                     std::int64_t j1, Acc* sums) {
  block_sums_body(a, rc, b, n, k, j0, j1, sums);
}
template <typename Acc>
__attribute__((target("avx512f,avx512dq"))) void block_sums_avx512(const Acc* a, std::int64_t rc,
                                                                   const Acc* b, std::int64_t n,
                                                                   std::int64_t k, std::int64_t j0,
                                                                   std::int64_t j1, Acc* sums) {
  block_sums_body(a, rc, b, n, k, j0, j1, sums);
}
#endif
// The widest body this CPU runs (the same bits on each: the sums are exact).
template <typename Acc>
BlockSumsFn<Acc> block_sums_for_cpu() {
#if defined(__x86_64__) && defined(__GNUC__)
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq")) return &block_sums_avx512<Acc>;
  if (__builtin_cpu_supports("avx2")) return &block_sums_avx2<Acc>;
#endif
  return &block_sums_portable<Acc>;
}

// Rows [i0, i0 + r_count) of A as integers in units (whole groups of rows, those past r_count
// zero) into `rows`, then their block sums with B into `sums`; both buffers are the calling
// thread's, reused from task to task.
template <typename Acc>
void tile_block_sums(const Fp8ScaledMatrix& a, const ElementUnits& ua, std::int64_t i0, std::int64_t r_count,
                     const Acc* b, std::int64_t n, std::int64_t j0, std::int64_t j1, std::vector<Acc>& rows,
                     std::vector<Acc>& sums) {
  const std::int64_t k = a.k;
  const std::int64_t padded = (r_count + kRowGroup - 1) / kRowGroup * kRowGroup;
  rows.assign(static_cast<std::size_t>(padded * k), Acc{0});
  for (std::int64_t r = 0; r < r_count; ++r)
    for (std::int64_t kk = 0; kk < k; ++kk)
      rows[static_cast<std::size_t>(r * k + kk)] =
          static_cast<Acc>(ua.integer[a.codes[static_cast<std::size_t>((i0 + r) * k + kk)]]);
  sums.resize(static_cast<std::size_t>(r_count * (j1 - j0) * a.k_blocks()));
  static const BlockSumsFn<Acc> fn = block_sums_for_cpu<Acc>();
  fn(rows.data(), r_count, b, n, k, j0, j1, sums.data());
}

// The scales of rows [r0, r0 + count) of m, decomposed per K block: sig[r * kb + q], exp[...].
void decompose_scales(const Fp8ScaledMatrix& m, std::int64_t r0, std::int64_t count,
                      std::vector<std::uint64_t>& sig, std::vector<int>& exp) {
  const std::int64_t kb = m.k_blocks();
  sig.resize(static_cast<std::size_t>(count * kb));
  exp.resize(sig.size());
  for (std::int64_t r = 0; r < count; ++r)
    for (std::int64_t q = 0; q < kb; ++q)
      decompose_f32(m.scale(r0 + r, q), sig[static_cast<std::size_t>(r * kb + q)],
                    exp[static_cast<std::size_t>(r * kb + q)]);
}

// ---- The certified double sum (every pair but e5m2 x e5m2: block sums below 2^53, which all of
// e4m3 x e4m3's are, are exact doubles). An output
// is sum_q S_q P_q 2^(u_a + u_b) with P_q = sa(i, q) sb(j, q), a product of two fp32 that a double
// holds exactly (48 significand bits; exponents within -298..256, so every quantity below is a
// double normal or zero: S_q P_q is a multiple of 2^-298 below 2^299). Dot2 of Ogita, Rump and
// Oishi ("Accurate sum and dot product", SIAM J. Sci. Comput. 26(6), 2005, Algorithm 5.3):
// TwoProduct (one FMA) splits each term exactly into hi_q + lo_q, TwoSum adds hi_q to the running s
// exactly, leaving e_q, and c collects fl(lo_q + e_q) in order, a their magnitudes. The exact
// output is s + T with T = sum_q (lo_q + e_q); c differs from T by at most gamma_2kb times
// sum_q (|lo_q| + |e_q|) (recursive summation of 2 kb roundings, Higham, "Accuracy and Stability
// of Numerical Algorithms", 2nd ed., section 4.2), which a bounds within a factor 1 + gamma_2kb;
// r = fl(s + c) adds at most u |r| / (1 - u). With u = 2^-53 and kb < 2^40 that is below
// kb 2^-51 a + 2^-52 |r|; the interval [r - E, r + E] with E = (kb + 1) 2^-51 a + 2^-51 |r| covers
// the exact sum even after the roundings of E and of its two ends (the extra 2^-51 a and 2^-52 |r|
// exceed them). Scaled by 2^(u_a + u_b) (exact) and rounded to f32 (nearest even, a monotone
// map), the two ends give the exact sum's rounding whenever they give the same bits; otherwise
// (a sum within about 2^-50 of its own size of an f32 rounding boundary, an exact zero of
// cancelling terms, or no nonzero term, whose zero's sign the fixed point decides) the output takes
// the exact route. The bits are the exact sum's either way, so the vector width, the FMA and the
// order of the lanes cannot change them; the thread's IeeeMode (nearest even, no FTZ/DAZ)
// is what the transforms need.

// E's factors: (kb + 1) 2^-51 and 2^-51.
double certificate_factor(std::int64_t kb) { return std::ldexp(static_cast<double>(kb + 1), -51); }

// One output: the block sums at S[q * stride], the scale products sa[q] * sb[q * stride].
bool certified_f32(const double* S, const double* sa, const double* sb, std::size_t stride, std::int64_t kb,
                   double a_factor, double unit, std::uint32_t& out) {
  double s = 0, c = 0, a = 0;
  bool any = false;
  for (std::int64_t q = 0; q < kb; ++q) {
    const double x = S[static_cast<std::size_t>(q) * stride];
    any = any || x != 0.0;
    const double p = sa[q] * sb[static_cast<std::size_t>(q) * stride];  // exact
    const double hi = x * p, lo = std::fma(x, p, -hi);                  // TwoProduct
    const double t = s + hi, z = t - s, e = (s - (t - z)) + (hi - z);    // TwoSum
    s = t;
    c += lo + e;
    a += std::fabs(lo) + std::fabs(e);
  }
  if (!any) return false;
  const double r = s + c, E = a_factor * a + std::ldexp(std::fabs(r), -51);
  const float lo = static_cast<float>((r - E) * unit), hi = static_cast<float>((r + E) * unit);
  out = std::bit_cast<std::uint32_t>(lo);
  return out == std::bit_cast<std::uint32_t>(hi);
}

#if defined(__x86_64__) && defined(__GNUC__)
// certified_f32 for 8 adjacent columns (S and sb with stride w, 8 lanes side by side); returns the
// lanes certified, their bits in out[0..8).
__attribute__((target("avx512f,avx512dq,avx512vl"))) unsigned certified_f32_x8(const double* S, const double* sa,
                                                                              const double* sb, std::size_t stride,
                                                                              std::int64_t kb, double a_factor,
                                                                              double unit, std::uint32_t* out) {
  __m512d s = _mm512_setzero_pd(), c = s, a = s;
  __mmask8 any = 0;
  for (std::int64_t q = 0; q < kb; ++q) {
    const __m512d x = _mm512_loadu_pd(S + static_cast<std::size_t>(q) * stride);
    any |= _mm512_cmp_pd_mask(x, _mm512_setzero_pd(), _CMP_NEQ_UQ);
    const __m512d p = _mm512_mul_pd(_mm512_set1_pd(sa[q]), _mm512_loadu_pd(sb + static_cast<std::size_t>(q) * stride));
    const __m512d hi = _mm512_mul_pd(x, p), lo = _mm512_fmsub_pd(x, p, hi);
    const __m512d t = _mm512_add_pd(s, hi), z = _mm512_sub_pd(t, s);
    const __m512d e = _mm512_add_pd(_mm512_sub_pd(s, _mm512_sub_pd(t, z)), _mm512_sub_pd(hi, z));
    s = t;
    c = _mm512_add_pd(c, _mm512_add_pd(lo, e));
    a = _mm512_add_pd(a, _mm512_add_pd(_mm512_abs_pd(lo), _mm512_abs_pd(e)));
  }
  const __m512d r = _mm512_add_pd(s, c);
  const __m512d E = _mm512_fmadd_pd(_mm512_set1_pd(a_factor), a, _mm512_mul_pd(_mm512_abs_pd(r), _mm512_set1_pd(0x1p-51)));
  const __m256 lo = _mm512_maskz_cvtpd_ps(0xFF, _mm512_mul_pd(_mm512_sub_pd(r, E), _mm512_set1_pd(unit)));
  const __m256 hi = _mm512_maskz_cvtpd_ps(0xFF, _mm512_mul_pd(_mm512_add_pd(r, E), _mm512_set1_pd(unit)));
  _mm256_storeu_ps(reinterpret_cast<float*>(out), lo);
  const __mmask8 same = _mm256_cmpeq_epi32_mask(_mm256_castps_si256(lo), _mm256_castps_si256(hi));
  return static_cast<unsigned>(same & any);
}
#endif

}  // namespace

ExactFp8ScaledB::ExactFp8ScaledB(const Fp8ScaledMatrix& b, Format a_element,
                                 [[maybe_unused]] const GemmOptions& options)
    : b_(&b), a_element_(a_element), rows_(b.rows), k_(b.k), element_(b.element) {
  if (a_element != Format::float8_e4m3fn && a_element != Format::float8_e5m2) {
    fail("ExactFp8ScaledB: A's elements must be float8_e4m3fn or float8_e5m2");
  }
  check_matrix(b, "B");
  check_finite_codes(b, "B", 0, b.rows);
  const std::int64_t n = b.rows, k = b.k;
  const ElementUnits ub = element_units(b.element);
  const bool in_double = a_element == Format::float8_e4m3fn && b.element == Format::float8_e4m3fn;
  if (a_element == Format::float8_e5m2 && b.element == Format::float8_e5m2) return;  // reads the codes
  // Strips of kColumnStrip columns, each k x kColumnStrip row-major (the last padded with zeros):
  // a task's columns of one K block are one contiguous 64 KB. In one k x n array its 128 rows lay
  // 8 n bytes apart, each in a page of its own from N = 512; the strips halved `exact` at 4096^3
  // on 16 threads of an H200 host (docs/performance.md).
  const std::int64_t strips = (n + kColumnStrip - 1) / kColumnStrip;
  const auto size = static_cast<std::size_t>(strips * k * kColumnStrip);
  if (in_double) double_.assign(size, 0.0);
  if (!in_double) int64_.assign(size, 0);
#pragma omp parallel for schedule(static) num_threads(detail::resolve_threads(options.threads))
  for (std::int64_t j = 0; j < n; ++j) {
    const std::int64_t base = j / kColumnStrip * k * kColumnStrip + j % kColumnStrip;
    for (std::int64_t kk = 0; kk < k; ++kk) {
      const std::int64_t v = ub.integer[b.codes[static_cast<std::size_t>(j * k + kk)]];
      const auto at = static_cast<std::size_t>(base + kk * kColumnStrip);
      if (in_double)
        double_[at] = static_cast<double>(v);
      else
        int64_[at] = v;
    }
  }
}

std::vector<std::uint32_t> exact_fp8_scaled_gemm(const Fp8ScaledMatrix& a, const Fp8ScaledMatrix& b,
                                                 std::int64_t row0, std::int64_t row1,
                                                 const GemmOptions& options) {
  check_operands(a, b, row0, row1);
  return exact_fp8_scaled_gemm(a, ExactFp8ScaledB(b, a.element, options), row0, row1, options);
}

std::vector<std::uint32_t> exact_fp8_scaled_gemm(const Fp8ScaledMatrix& a, const ExactFp8ScaledB& prepared,
                                                 std::int64_t row0, std::int64_t row1,
                                                 const GemmOptions& options) {
  const Fp8ScaledMatrix& b = prepared.matrix();
  if (prepared.a_element() != a.element)
    fail("exact_fp8_scaled_gemm: B was prepared for another element type of A");
  if (!prepared.prepared_for_current_b())
    fail("exact_fp8_scaled_gemm: B's shape or element type changed after it was prepared (ExactFp8ScaledB)");
  check_operands(a, b, row0, row1);
  check_finite_codes(a, "A", row0, row1);
  const std::int64_t rows = row1 - row0, n = b.rows, k = a.k, kb = a.k_blocks();
  const ElementUnits ua = element_units(a.element), ub = element_units(b.element);
  const bool in_double = a.element == Format::float8_e4m3fn && b.element == Format::float8_e4m3fn;
  const bool wide = a.element == Format::float8_e5m2 && b.element == Format::float8_e5m2;
  [[maybe_unused]] const int threads = detail::resolve_threads(options.threads);
  // GemmPath::reference sums every output exactly; the others certify double sums first (avx512:
  // 8 columns per vector; portable and avx2: one output at a time), but for e5m2 x e5m2, whose
  // block sums reach 2^71.
  const GemmPath path = detail::resolve_path(options.path);
  const bool certify = !wide && path != GemmPath::reference;
#if defined(__x86_64__) && defined(__GNUC__)
  const bool certify_x8 = certify && path == GemmPath::avx512;
#endif
  const double unit = std::ldexp(1.0, ua.unit + ub.unit), a_factor = certificate_factor(kb);
  const std::vector<double>& bd = prepared.as_double();
  const std::vector<std::int64_t>& bi = prepared.as_int64();
  std::vector<std::uint32_t> d(static_cast<std::size_t>(rows * n));
  const std::int64_t row_tiles = (rows + kRowBlock - 1) / kRowBlock,
                     strips = (n + kColumnStrip - 1) / kColumnStrip;
  // Outputs certified in double, summed in FixedPoint256 (or without terms), in ExactSum.
  std::uint64_t certified = 0, fast = 0, slow = 0;
#pragma omp parallel num_threads(threads)
  {
    const blockscale::detail::IeeeMode ieee;  // nearest even, no FTZ/DAZ: the certified sums rely on it
    std::vector<double> rows_d, sums_d, sa_d, sb_d;
    std::vector<std::uint8_t> settled;
    std::vector<std::int64_t> rows_i, sums_i;
    std::vector<std::uint64_t> sig_a, sig_b;
    std::vector<int> exp_a, exp_b;
    reference::ExactSum sum;
#pragma omp for schedule(dynamic, 1) reduction(+ : certified, fast, slow)
    for (std::int64_t task = 0; task < row_tiles * strips; ++task) {
      const std::int64_t i0 = row0 + task / strips * kRowBlock, r_count = std::min(kRowBlock, row1 - i0);
      const std::int64_t j0 = task % strips * kColumnStrip, j1 = std::min(n, j0 + kColumnStrip), w = j1 - j0;
      // B's strip of these columns (ExactFp8ScaledB): columns 0 .. w of a k x kColumnStrip array.
      const auto strip = static_cast<std::size_t>(task % strips * k * kColumnStrip);
      if (in_double) {
        tile_block_sums(a, ua, i0, r_count, bd.data() + strip, kColumnStrip, 0, w, rows_d, sums_d);
      } else if (!wide) {
        tile_block_sums(a, ua, i0, r_count, bi.data() + strip, kColumnStrip, 0, w, rows_i, sums_i);
      }
      decompose_scales(a, i0, r_count, sig_a, exp_a);
      decompose_scales(b, j0, w, sig_b, exp_b);
      settled.assign(static_cast<std::size_t>(r_count * w), 0);  // 1: certified; 2: a block sum from 2^53
      if (certify) {
        if (!in_double) {
          // The int64 block sums (an e5m2 operand) as doubles: exact below 2^53, which all but the
          // largest sums are; an output with a larger one keeps the exact route.
          sums_d.resize(sums_i.size());
          for (std::int64_t r = 0; r < r_count; ++r)
            for (std::int64_t q = 0; q < kb; ++q)
              for (std::int64_t jj = 0; jj < w; ++jj) {
                const std::size_t at = static_cast<std::size_t>((r * kb + q) * w + jj);
                sums_d[at] = static_cast<double>(sums_i[at]);
                if (sums_i[at] >= (std::int64_t{1} << 53) || sums_i[at] <= -(std::int64_t{1} << 53))
                  settled[static_cast<std::size_t>(r * w + jj)] = 2;  // not certifiable
              }
        }
        sa_d.resize(static_cast<std::size_t>(r_count * kb));
        sb_d.resize(static_cast<std::size_t>(kb * w));
        for (std::int64_t r = 0; r < r_count; ++r)
          for (std::int64_t q = 0; q < kb; ++q) sa_d[static_cast<std::size_t>(r * kb + q)] = a.scale(i0 + r, q);
        for (std::int64_t q = 0; q < kb; ++q)
          for (std::int64_t jj = 0; jj < w; ++jj) sb_d[static_cast<std::size_t>(q * w + jj)] = b.scale(j0 + jj, q);
        const auto stride = static_cast<std::size_t>(w);
        for (std::int64_t r = 0; r < r_count; ++r) {
          const double* S = &sums_d[static_cast<std::size_t>(r * kb * w)];
          const double* sa_r = &sa_d[static_cast<std::size_t>(r * kb)];
          std::uint32_t* out = &d[static_cast<std::size_t>((i0 + r - row0) * n + j0)];
          std::uint8_t* done = &settled[static_cast<std::size_t>(r * w)];
          std::int64_t jj = 0;
#if defined(__x86_64__) && defined(__GNUC__)
          for (; certify_x8 && jj + 8 <= w; jj += 8) {
            std::uint32_t bits[8];
            const unsigned lanes = certified_f32_x8(S + jj, sa_r, &sb_d[static_cast<std::size_t>(jj)], stride, kb,
                                                    a_factor, unit, bits);
            for (int l = 0; l < 8; ++l) {
              if (((lanes >> l) & 1u) == 0 || done[jj + l] != 0) continue;
              out[jj + l] = bits[l];
              done[jj + l] = 1;
              ++certified;
            }
          }
#endif
          for (; jj < w; ++jj) {
            if (done[jj] == 0 && certified_f32(S + jj, sa_r, &sb_d[static_cast<std::size_t>(jj)], stride, kb, a_factor, unit, out[jj])) {
              done[jj] = 1;
              ++certified;
            }
          }
        }
      }
      for (std::int64_t r = 0; r < r_count; ++r) {
        const std::int64_t i = i0 + r;
        for (std::int64_t j = j0; j < j1; ++j) {
          if (settled[static_cast<std::size_t>(r * w + (j - j0))] == 1) continue;
          // The terms' exponents come from the scales alone, so the span is known before the sums
          // are read (blocks whose sum turns out zero are counted in it, which can only send an
          // output to ExactSum that the fixed point would have taken).
          const std::size_t a_at = static_cast<std::size_t>(r * kb),
                            b_at = static_cast<std::size_t>((j - j0) * kb);
          int lowest = exp_a[a_at] + exp_b[b_at], highest = lowest;
          for (std::int64_t q = 1; q < kb; ++q) {
            const int e =
                exp_a[a_at + static_cast<std::size_t>(q)] + exp_b[b_at + static_cast<std::size_t>(q)];
            lowest = std::min(lowest, e), highest = std::max(highest, e);
          }
          const bool fixed_point = !wide && highest - lowest <= kFixedPointSpan;
          FixedPoint256 fixed;
          bool any = false;
          if (!fixed_point) sum.clear();
          for (std::int64_t q = 0; q < kb; ++q) {
            // S_q as sign and magnitude; e5m2 x e5m2 sums in 128 bits here (below 2^71).
            i128 s = 0;
            const std::size_t at = static_cast<std::size_t>((r * kb + q) * w + (j - j0));
            if (in_double) {
              s = static_cast<std::int64_t>(sums_d[at]);  // an integer below 2^43
            } else if (!wide) {
              s = sums_i[at];
            } else {
              for (std::int64_t kk = q * Fp8ScaledMatrix::kBlock;
                   kk < std::min(k, (q + 1) * Fp8ScaledMatrix::kBlock); ++kk) {
                s += static_cast<i128>(ua.integer[a.codes[static_cast<std::size_t>(i * k + kk)]]) *
                     ub.integer[b.codes[static_cast<std::size_t>(j * k + kk)]];
              }
            }
            if (s == 0) continue;
            any = true;
            const bool negative = s < 0;
            const u128 m = negative ? static_cast<u128>(-s) : static_cast<u128>(s);
            const std::size_t ai = a_at + static_cast<std::size_t>(q),
                              bj = b_at + static_cast<std::size_t>(q);
            const int e = exp_a[ai] + exp_b[bj];
            const std::uint64_t scale_sig = sig_a[ai] * sig_b[bj];  // below 2^48
            if (fixed_point) {                                      // the block sum is below 2^57 here
              fixed.add(negative, static_cast<std::uint64_t>(m), scale_sig, e - lowest);
            } else {
              const int exp = e + ua.unit + ub.unit;
              sum.add_product(negative, static_cast<std::uint64_t>(m), scale_sig, exp);
              if (const auto hi = static_cast<std::uint64_t>(m >> 64))
                sum.add_product(negative, hi, scale_sig, exp + 64);
            }
          }
          lowest += ua.unit + ub.unit;
          ++(fixed_point || !any ? fast : slow);
          std::uint32_t out = 0;
          if (any && fixed_point) {
            out = fixed.to_f32(lowest);
          } else if (any) {
            out = static_cast<std::uint32_t>(sum.round_to(reference::DType::float32));
          } else {
            // Every block sum is zero: -0 only when every product is -0 (IEEE 754 §6.3).
            bool all_negative_zero = true;
            for (std::int64_t kk = 0; kk < k && all_negative_zero; ++kk) {
              const std::uint8_t ca = a.codes[static_cast<std::size_t>(i * k + kk)],
                                 cb = b.codes[static_cast<std::size_t>(j * k + kk)];
              const bool zero = ua.integer[ca] == 0 || ub.integer[cb] == 0;
              const bool sign = ((ca ^ cb) & 0x80u) != 0;
              all_negative_zero = zero && sign;
            }
            out = all_negative_zero ? 0x80000000u : 0u;
          }
          d[static_cast<std::size_t>((i - row0) * n + j)] = out;
        }
      }
    }
  }
  if (options.stats != nullptr) *options.stats = GemmPathStats{fast, 0, 0, slow, 0, certified};
  return d;
}

}  // namespace blockscale::emulator
