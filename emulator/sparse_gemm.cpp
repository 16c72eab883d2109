// SPDX-License-Identifier: Apache-2.0
#include "blockscale/emulator/sparse_gemm.h"

#include <algorithm>
#include <array>
#include <bit>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "blockscale/emulator/arith.h"
#include "blockscale/emulator/mma.h"
#include "blockscale/emulator/params.h"
#include "blockscale/formats/bulk.h"
#include "blockscale/formats/convert.h"
#include "engine.h"
#include "fast_gemm.h"

namespace blockscale::emulator {

namespace {

[[noreturn]] void fail(const std::string& m) { throw std::invalid_argument(m); }

// Rows of cusparselt_kernels(): cuSPARSELt 0.8.0 through torch 2.11.0+cu130 on an NVIDIA H100
// 80GB HBM3 (driver 580.159.04), 2026-11-24, scripts/probe_sparse_mm.py; kernel names
// sm90_xmma_sparse_gemm_<a><d>_<a><acc>_f32_tn_t_tilesize<M>x<N>x<K>_... Evidence counts are the
// outputs of the data runs (Gaussian pruned by magnitude, per-element exponent spread, random
// finite codes) equal bit for bit to cusparselt_sparse_mm with the slice count measured by the
// probe sweep at that shape (docs/emulator.md, "2:4 sparse GEMMs").
constexpr CusparseltRounding kGiven = CusparseltRounding::as_given;
constexpr CusparseltKernel kKernels[] = {
    {Format::float16, Format::float16, 64, "sm_90a wgmma.mma_async.sp m64n256k32 f32 f16 f16", kGiven, kGiven,
     "H100: 128x128x2048 (S = 2; Gaussian, wide, random codes) and 64x64x8192 (S = 8; Gaussian, wide), two "
     "seeds: 110,592 outputs bit-exact; slices added pairwise (in order or in reverse, 1-4 outputs of a run differ)"
     "; edge probes (the compressor's fill over every zero pattern of a group, subnormals, Inf and NaN in B): 316,512 outputs"},
    {Format::bfloat16, Format::bfloat16, 64, "sm_90a wgmma.mma_async.sp m64n256k32 f32 bf16 bf16", kGiven, kGiven,
     "H100: 128x128x2048 and 64x64x8192 (S = 1), the same data kinds and seeds: 110,592 outputs bit-exact"
     "; edge probes (the compressor's fill over every zero pattern of a group, subnormals, Inf and NaN in B): 316,512 outputs"},
    {Format::float32, Format::float32, 32, "sm_90a wgmma.mma_async.sp m64n256k16 f32 tf32 tf32",
     CusparseltRounding::tf32_cusparselt_sparse, CusparseltRounding::tf32_nearest_even,
     "H100: 128x128x2048 (S = 2; Gaussian, wide, random codes), 64x64x4096 (S = 4), A or B +-1 at 64x64x256, and "
     "one-product probes of A's rounding (1,024 random patterns, every 10-bit fraction with 4 low parts and both "
     "signs, 64 special values) and of B's (65,536 patterns): 720,896 outputs bit-exact; edge probes (the compressor's "
     "fill with zeros and subnormals, every A value past the largest tf32 value times B = 1 and B = -1, 16,464 special "
     "B values): 2,159,296 outputs"},
    {Format::float8_e4m3fn, Format::float8_e4m3fn, 256, "sm_90a wgmma.mma_async.sp m64n64k64 f32 e4m3 e4m3", kGiven, kGiven,
     "H100: 128x128x2048 (S = 1) and 64x64x16384 (S = 12), the same data kinds and seeds: 110,592 outputs "
     "bit-exact; D saturates to +-448 (random codes)"},
    {Format::float8_e4m3fn, Format::bfloat16, 256, "sm_90a wgmma.mma_async.sp m64n64k64 f32 e4m3 e4m3", kGiven, kGiven,
     "H100: 128x128x2048 (S = 1) and 64x64x16384 (S = 12), the same data kinds and seeds: 110,592 outputs "
     "bit-exact"},
    {Format::float8_e4m3fn, Format::float16, 128, "sm_90a wgmma.mma_async.sp m64n64k64 f32 e4m3 e4m3", kGiven, kGiven,
     "H100: 128x128x2048 (S = 1) and 64x64x16384 (S = 14), the same data kinds and seeds: 110,592 outputs "
     "bit-exact"},
    {Format::float8_e4m3fn, Format::float32, 128, "sm_90a wgmma.mma_async.sp m64n64k64 f32 e4m3 e4m3", kGiven, kGiven,
     "H100: 128x128x2048 (S = 1) and 64x64x16384 (S = 14), the same data kinds and seeds: 110,592 outputs "
     "bit-exact; edge probes (the compressor's fill over every zero pattern of a group, subnormals, NaN in B): "
     "316,512 outputs"},
};

// Below this many multiply-adds a call runs on one thread, its passes over the operands included
// (compress_sparse and cusparselt_compress called alone: below this many elements). A caller that
// makes many small calls (harness::fit_sparse_mm: blocks of 1, 3, 12 rows for each slice count)
// otherwise opens a dozen thread teams per call, and with two such processes on two cores each
// team's barrier waited for a thread the other process had descheduled: a test of 0.7 s ran past
// ctest's 600 s.
constexpr std::size_t kParallelWork = std::size_t{1} << 22;

// resolve_threads(requested) for `work` at or above kParallelWork, else 1.
int threads_for(std::size_t work, int requested) {
  const int threads = detail::resolve_threads(requested);  // checks the request whatever the work
  return work < kParallelWork ? 1 : threads;
}

// The least of first_in_row(i) over the rows i < M, rows on up to `threads` threads: for checks
// that find the first bad item in row-major order (first_in_row gives row i's first bad item
// index, or `none`) and report it after the loop, since an exception cannot leave an OpenMP loop.
// The result does not depend on the thread count.
template <class F>
std::size_t first_over_rows(std::size_t M, std::size_t none, [[maybe_unused]] int threads, F first_in_row) {
  std::size_t first = none;
#if defined(BLOCKSCALE_HAVE_OPENMP)
#pragma omp parallel for schedule(static) num_threads(threads) reduction(min : first)
#endif
  for (long long row = 0; row < static_cast<long long>(M); ++row) first = std::min(first, first_in_row(static_cast<std::size_t>(row)));
  return first;
}

// The logical K position of stored value s of row i of `a` (groups of `group` positions holding
// group / 2 values each, PTX ISA 9.7.14.6.1).
std::size_t stored_position(const SparseOperand& a, std::size_t group, std::size_t i, std::size_t s) {
  return s / (group / 2) * group + a.index[i * a.values.cols() + s];
}

// Rows [r0, r1) of m, each word passed through `f`, in m's own order (rows, or columns as torch
// passes B^T) and read along its unit stride: the words, and that order.
template <class F>
std::pair<std::vector<std::uint32_t>, Order> mapped_rows(const CodeMatrix& m, std::size_t r0, std::size_t r1,
                                                         [[maybe_unused]] int threads, F f) {
  const bool rows_contiguous = m.col_stride() == 1;
  const std::size_t rows = r1 - r0, N = m.cols();
  const std::size_t outer = rows_contiguous ? rows : N, inner = rows_contiguous ? N : rows;
  std::vector<std::uint32_t> words(rows * N);
#if defined(BLOCKSCALE_HAVE_OPENMP)
#pragma omp parallel for schedule(static) num_threads(threads)
#endif
  for (long long x = 0; x < static_cast<long long>(outer); ++x) {
    const auto o = static_cast<std::size_t>(x);
    for (std::size_t y = 0; y < inner; ++y) words[o * inner + y] = f(rows_contiguous ? m.word(r0 + o, y) : m.word(r0 + y, o));
  }
  return {std::move(words), rows_contiguous ? Order::row_major : Order::col_major};
}

// f32 -> tf32 to nearest, ties to even, on the bit pattern of a finite value or an Inf (the low
// 13 bits cleared; a carry reaches the exponent, up to Inf past the largest tf32 value).
std::uint32_t tf32_nearest_even_bits(std::uint32_t word) { return (word + 0x0FFFu + (word >> 13 & 1u)) & ~0x1FFFu; }

// compress_sparse's work: the stored values are codes of `dense` (the instruction's A format), and
// an element is a zero for the choice of positions where its word in `tested` (same shape) ANDed
// with `zero_mask` is 0. `who` prefixes errors; `not_sparse_note` ends the one for a group with
// too many nonzero values. Rows on up to `threads` threads.
SparseOperand compress_groups(const std::string& who, const Instruction& ins, const CodeMatrix& dense,
                              const CodeMatrix& tested, std::uint32_t zero_mask, int threads, const char* not_sparse_note = "") {
  dense.check_codes(who + ": A");
  const std::size_t M = dense.rows(), K = dense.cols();
  if (K == 0 || K % static_cast<std::size_t>(ins.k) != 0) {
    fail(who + ": K must be a positive multiple of the instruction's K = " + std::to_string(ins.k) + ", got " +
         std::to_string(K));
  }
  const auto group = static_cast<std::size_t>(ins.sparse_group());
  const std::size_t stored = group / 2;
  const Format af = dense.format();
  std::vector<std::uint32_t> values(M * K / 2);
  SparseOperand out;
  out.index.resize(M * K / 2);
  const std::size_t groups = K / group;
  // Rows in parallel; of the groups with too many nonzero values the first in row-major order is
  // reported after the loop.
  const std::size_t first_bad = first_over_rows(M, M * groups, threads, [&](std::size_t i) {
    for (std::size_t g = 0; g < groups; ++g) {
      std::array<bool, 4> kept{};
      std::size_t nonzero = 0;
      for (std::size_t p = 0; p < group; ++p) nonzero += kept[p] = (tested.word(i, g * group + p) & zero_mask) != 0;
      if (nonzero > stored) return i * groups + g;
      // Every nonzero position, and the highest zero ones to fill the group: the choice of
      // cuSPARSELt 0.8's compressor (torch._cslt_compress), measured on an H100 for every pattern
      // of zeros and nonzero values of a group (scripts/probe_sparse_mm.py edges, `fill`), which
      // shows when B holds Inf or NaN there (a kept zero times Inf is NaN). Stored in increasing
      // position order.
      for (std::size_t p = group, fill = stored - nonzero; p-- > 0 && fill > 0;) {
        if (!kept[p]) kept[p] = true, --fill;
      }
      std::array<std::uint8_t, 2> pos{};
      std::size_t n = 0;
      for (std::size_t p = 0; p < group; ++p) {
        if (kept[p]) pos[n++] = static_cast<std::uint8_t>(p);
      }
      for (std::size_t s = 0; s < stored; ++s) {
        const std::size_t at = i * K / 2 + g * stored + s;
        values[at] = dense.word(i, g * group + pos[s]);
        out.index[at] = pos[s];
      }
    }
    return M * groups;
  });
  if (first_bad < M * groups) {
    const std::size_t i = first_bad / groups, g = first_bad % groups;
    std::size_t nonzero = 0;
    for (std::size_t p = 0; p < group; ++p) nonzero += (tested.word(i, g * group + p) & zero_mask) != 0;
    fail(who + ": row " + std::to_string(i) + ", group " + std::to_string(g) + " (K " + std::to_string(g * group) + ".." +
         std::to_string(g * group + group - 1) + ") holds " + std::to_string(nonzero) + " nonzero values: A is not " +
         (group == 4 ? "2:4" : "1:2") + " sparse" + not_sparse_note);
  }
  // The operand owns its codes: CodeMatrix is a view, so the words live in a buffer kept beside it.
  out.storage = std::make_shared<std::vector<std::uint32_t>>(std::move(values));
  out.values = CodeMatrix(af, M, K / 2, std::span<const std::uint32_t>(*out.storage));
  return out;
}

}  // namespace

SparseOperand compress_sparse(const Instruction& ins, const CodeMatrix& dense) {
  emulator::validate(ins);  // its K divides A's (a changed k = 0 would divide by zero)
  const std::string who = "compress_sparse(" + ins.name() + ")";
  if (!ins.sparse) fail(who + ": not a sparse instruction");
  const Format af = *format_of(ins.a);
  if (dense.empty()) fail(who + ": A is required");
  if (dense.format() != af) fail(who + ": A must hold " + blockscale::to_string(af) + " codes, got " + blockscale::to_string(dense.format()));
  // A zero code: +0 and -0 both (the sign bit alone); tf32 words are fp32 bit patterns.
  const std::uint32_t sign = af == Format::tfloat32 ? 0x80000000u : 1u << (info(af).storage_bits - 1);
  return compress_groups(who, ins, dense, dense, ~sign, threads_for(dense.rows() * dense.cols(), 0));
}

void SparseGemmSchedule::validate() const {
  if (instruction.row == nullptr) fail("SparseGemmSchedule: no instruction");
  emulator::validate(instruction);  // the slices are cut at multiples of its K
  const std::string who = instruction.name();
  if (!instruction.sparse) fail(who + ": not a sparse instruction: use gemm (gemm.h)");
  if (instruction.d != Type::f32) fail(who + ": sparse GEMM schedules accumulate in fp32: it needs an f32-output instruction");
  if (slices < 1) fail("split-K slices must be >= 1, got " + std::to_string(slices));
  if (reduction != SplitKReduction::sequential && reduction != SplitKReduction::pairwise) {
    fail("SparseGemmSchedule: the reduction is neither sequential nor pairwise");
  }
  if (tile_k < 0 || (tile_k > 0 && tile_k % instruction.k != 0)) {
    fail("the tile must be 0 or a multiple of the instruction's K = " + std::to_string(instruction.k) + ", got " +
         std::to_string(tile_k));
  }
}

std::vector<int> SparseGemmSchedule::slice_starts(int k) const {
  validate();  // a schedule without an instruction has no K to divide by
  const int tile = tile_k == 0 ? instruction.k : tile_k;
  if (k <= 0 || k % tile != 0) {
    fail("K must be a positive multiple of the tile of " + std::to_string(tile) + " elements, got " + std::to_string(k));
  }
  const int tiles = k / tile;
  if (slices > tiles) {
    fail(std::to_string(slices) + " split-K slices need at least as many tiles of " + std::to_string(tile) +
         " elements; K = " + std::to_string(k) + " has " + std::to_string(tiles));
  }
  const int base = tiles / slices, longer = tiles % slices;
  std::vector<int> starts;
  int at = 0;
  for (int s = 0; s + 1 < slices; ++s) {
    at += (s < slices - longer ? base : base + 1) * tile;
    starts.push_back(at);
  }
  return starts;
}

std::string SparseGemmSchedule::name() const {
  std::string s = "chain";
  if (slices > 1) {
    s += " split-K " + std::to_string(slices) + " of tiles of " + std::to_string(tile_k == 0 ? instruction.k : tile_k) +
         (reduction == SplitKReduction::sequential ? " sequential" : " pairwise");
  }
  return s + " of " + instruction.name();
}

namespace {

// The reference route, one output at a time: per slice, the chain of the instruction's steps from
// +0, then the slices added in the schedule's order, then C. A step is dot_sparse: the dense form's
// dot product (mma.h) of the stored values with the B elements their positions select. The
// selected B elements of a row of A are gathered and decoded once per block of 64 of the requested
// columns, and each step runs the engine on them (the decoding is per element, so a step reads
// exactly what dot_sparse would decode; fp8 -> f16 rows (b.9) order each 2L elements, and the dense
// form's K is a multiple of 2L). The positions have been checked, so nothing here throws.
class SparseEngine {
 public:
  SparseEngine(const Instruction& ins, SplitKReduction reduction, const SparseOperand& a, const CodeMatrix& b,
               const CodeMatrix& c, std::vector<int> bounds)
      : ins_(ins), reduction_(reduction), a_(a), b_(b), c_(c), bounds_(std::move(bounds)) {}

  // D[i, j] into d_row[j] for each listed column j.
  void outputs(std::size_t i, std::span<const std::size_t> columns, std::uint32_t* d_row) const {
    const Instruction dense = ins_.dense_form();
    const FdpaParams& p = dense.params();
    const Format acc_format = accumulator_format(p.rounding);
    const Format a_format = a_.values.format(), b_format = b_.format();
    const std::size_t b9_half = p.algorithm == Algorithm::fp8_via_f16 ? static_cast<std::size_t>(p.L) : 0;
    const auto group = static_cast<std::size_t>(ins_.sparse_group());
    const std::size_t half = b_.rows() / 2, step = static_cast<std::size_t>(ins_.k), dense_k = step / 2;
    constexpr std::size_t kColumnBlock = 64;
    std::vector<std::uint32_t> values(half), selected(half * kColumnBlock), partial(bounds_.size() - 1);
    std::vector<std::size_t> b_row(half);
    for (std::size_t s = 0; s < half; ++s) {
      values[s] = a_.values.word(i, s);
      b_row[s] = stored_position(a_, group, i, s);
    }
    detail::Panel pa, pb;
    pa.decode(CodeMatrix(a_format, 1, half, std::span<const std::uint32_t>(values)), true, half,
              detail::decomposition_format(p.algorithm, a_format), b9_half);
    const detail::ElementVec va = pa.vec(0);
    for (std::size_t j0 = 0; j0 < columns.size(); j0 += kColumnBlock) {
      const std::size_t cols = std::min(kColumnBlock, columns.size() - j0);
      for (std::size_t j = 0; j < cols; ++j) {
        for (std::size_t s = 0; s < half; ++s) selected[j * half + s] = b_.word(b_row[s], columns[j0 + j]);
      }
      pb.decode(CodeMatrix(b_format, half, cols, std::span<const std::uint32_t>(selected.data(), half * cols), Order::col_major),
                false, half, detail::decomposition_format(p.algorithm, b_format), b9_half);
      for (std::size_t j = 0; j < cols; ++j) {
        const detail::ElementVec vb = pb.vec(j);
        for (std::size_t s = 0; s + 1 < bounds_.size(); ++s) {
          std::uint32_t acc = 0;
          for (auto k0 = static_cast<std::size_t>(bounds_[s]); k0 < static_cast<std::size_t>(bounds_[s + 1]); k0 += step) {
            acc = detail::run_instruction(p, acc_format, va, vb, k0 / 2, dense_k, nullptr, nullptr, acc);
          }
          partial[s] = acc;
        }
        const std::size_t column = columns[j0 + j];
        const std::uint32_t sum = reduce(partial);
        d_row[column] = c_.empty() ? sum : add_f32(c_.word(i, column), sum);
      }
    }
  }

  // The slice results added in the schedule's order (gemm.h, SplitKReduction).
  std::uint32_t reduce(std::span<const std::uint32_t> partial) const {
    if (reduction_ == SplitKReduction::pairwise) return sum_f32_pairwise(partial);
    std::uint32_t sum = partial[0];
    for (std::size_t s = 1; s < partial.size(); ++s) sum = add_f32(sum, partial[s]);
    return sum;
  }

  const Instruction& instruction() const { return ins_; }
  const SparseOperand& a() const { return a_; }
  const CodeMatrix& b() const { return b_; }
  const CodeMatrix& c() const { return c_; }
  const std::vector<int>& bounds() const { return bounds_; }

 private:
  const Instruction& ins_;
  SplitKReduction reduction_;
  const SparseOperand& a_;
  const CodeMatrix& b_;
  const CodeMatrix& c_;
  std::vector<int> bounds_;
};

// The fast route rests on this identity (docs/emulator.md, "2:4 sparse GEMMs"): a sparse T-FDPA
// instruction of logical K whose dense form runs steps of L stored values equals the dense T-FDPA
// instruction of the same row with K logical positions and steps of 2L products, applied to A
// expanded to its logical K (each stored value at its position, +0 at the pruned ones), wherever B
// is finite at the pruned positions. A step of L stored values covers L/2 groups of 4 positions
// (tf32: L pairs), i.e. exactly the 2L positions of the expanded step, so the two steps have the
// same nonzero terms; the pruned ones add only zero terms (a pruned zero times a finite B). A zero
// term takes e_zero (numerics.md b.3 step 2), and it cannot move e_max: every step has C, which is
// either a zero term itself or a nonzero f32 accumulator with e(C) >= -126 > e_zero = -133 on every
// sparse row (the fast paths require e_zero <= -126). Zero terms add nothing to the truncated sum,
// and the zero-sign rules look at the sum only. A pruned B that is Inf or NaN would add 0 x Inf =
// NaN to the expanded step alone: those outputs go to the reference route. The fp8 wgmma.sp rows
// expand to steps of 64 products, which the fast kernels take for operands of at most 8 bits
// (fast_kernels.h, kMaxStepProducts). b.9 (fp8 mma.sp) orders its two HMMAs by k mod 4, which the
// expansion changes, so it stays on the reference route.
struct ExpandedForm {
  InstructionRow row;       // the dense form's row with steps of 2L
  KernelSchedule schedule;  // its chain, one instruction per logical K of the sparse instruction
  bool applies = false;     // T-FDPA rows only

  explicit ExpandedForm(const Instruction& sparse) {
    const Instruction dense = sparse.dense_form();
    row = dense.table_row();
    const FdpaParams& p = dense.params();
    applies = p.algorithm == Algorithm::t_fdpa;
    // A T-FDPA instruction whose K is below L is one step of K (fast_gemm.cpp, step_length).
    row.params.L = 2 * std::min(p.L, dense.k);
    // Its instructions have the sparse form's shapes (K the logical K), which validate() checks.
    row.shapes = row.sparse_shapes;
    Instruction expanded = dense;
    expanded.row = &row;
    expanded.k = sparse.k;
    schedule = KernelSchedule::chain(expanded);
  }
  ExpandedForm(const ExpandedForm&) = delete;  // schedule points at row
  ExpandedForm& operator=(const ExpandedForm&) = delete;
};

// D on the fast path `path`: each slice a dense GEMM of the expanded form (detail::fast_gemm) on A
// expanded to the slice's logical K and B's rows of the slice; the slices added per output in the
// schedule's order, then C; then every output whose row prunes a position where its column of B
// holds Inf or NaN recomputed on the reference route.
GemmPathStats expanded_gemm(const ExpandedForm& form, const SparseEngine& engine, GemmPath path, int threads,
                            std::vector<std::uint32_t>& d) {
  const SparseOperand& a = engine.a();
  const CodeMatrix& b = engine.b();
  const CodeMatrix& c = engine.c();
  const std::vector<int>& bounds = engine.bounds();
  const std::size_t M = a.values.rows(), K = b.rows(), N = b.cols();
  const auto group = static_cast<std::size_t>(engine.instruction().sparse_group()), per_group = group / 2;
  const Format a_format = a.values.format(), b_format = b.format();
  const auto position = [&](std::size_t i, std::size_t s) { return stored_position(a, group, i, s); };

  GemmPathStats stats;
  const std::size_t slices = bounds.size() - 1;
  std::vector<std::vector<std::uint32_t>> partial(slices);
  for (std::size_t sl = 0; sl < slices; ++sl) {
    const auto k0 = static_cast<std::size_t>(bounds[sl]), k1 = static_cast<std::size_t>(bounds[sl + 1]), ks = k1 - k0;
    // Left uninitialised and zeroed row by row in the parallel loop, so that the threads share the
    // first touch of its pages (a zero-filled vector costs a serial pass).
    const std::unique_ptr<std::uint32_t[]> a_words(new std::uint32_t[M * ks]);
#if defined(BLOCKSCALE_HAVE_OPENMP)
#pragma omp parallel for schedule(static) num_threads(threads)
#endif
    for (long long row = 0; row < static_cast<long long>(M); ++row) {
      const auto i = static_cast<std::size_t>(row);
      std::fill(&a_words[i * ks], &a_words[i * ks] + ks, 0u);
      for (std::size_t s = k0 / 2; s < k1 / 2; ++s) a_words[i * ks + position(i, s) - k0] = a.values.word(i, s);
    }
    // B's rows of the slice: B itself for one slice, else a copy.
    std::pair<std::vector<std::uint32_t>, Order> b_words;
    CodeMatrix b_slice = b;
    if (slices > 1) {
      b_words = mapped_rows(b, k0, k1, threads, [](std::uint32_t w) { return w; });
      b_slice = CodeMatrix(b_format, ks, N, std::span<const std::uint32_t>(b_words.first), b_words.second);
    }
    const GemmOperands ops{CodeMatrix(a_format, M, ks, std::span<const std::uint32_t>(a_words.get(), M * ks)), b_slice, {}, {}, {}};
    GemmPathStats slice_stats;
    if (!detail::fast_gemm(form.schedule, ops, path, threads, &slice_stats, partial[sl])) {
      throw std::logic_error("gemm_sparse: the fast paths refused " + form.schedule.name());
    }
    stats.exact += slice_stats.exact;
    stats.truncating += slice_stats.truncating;
    stats.special += slice_stats.special;
    stats.fp16 += slice_stats.fp16;
    stats.reference_outputs += slice_stats.reference_outputs;
  }
  // D in the first slice's buffer: each output reads its slices' values before it is written.
  d = std::move(partial[0]);
  if (slices > 1 || !c.empty()) {
#if defined(BLOCKSCALE_HAVE_OPENMP)
#pragma omp parallel for schedule(static) num_threads(threads)
#endif
    for (long long row = 0; row < static_cast<long long>(M); ++row) {
      const auto i = static_cast<std::size_t>(row);
      std::vector<std::uint32_t> part(slices);
      for (std::size_t j = 0; j < N; ++j) {
        part[0] = d[i * N + j];
        for (std::size_t sl = 1; sl < slices; ++sl) part[sl] = partial[sl][i * N + j];
        const std::uint32_t sum = engine.reduce(part);
        d[i * N + j] = c.empty() ? sum : add_f32(c.word(i, j), sum);
      }
    }
  }

  // The positions of each column of B that hold Inf or NaN (a tf32 word is an fp32 pattern,
  // CodeMatrix::word; e4m3's codes with the exponent field all ones are finite but for its NaN),
  // and the outputs whose row prunes one.
  const Format b_class = b_format == Format::tfloat32 ? Format::float32 : b_format;
  const auto is_special = [&](std::uint32_t w) {
    const ValueClass v = classify(b_class, w);
    return v == ValueClass::infinite || v == ValueClass::nan;
  };
  std::vector<std::vector<std::size_t>> special(N);
  int any_special = 0;
#if defined(BLOCKSCALE_HAVE_OPENMP)
#pragma omp parallel for schedule(static) num_threads(threads) reduction(| : any_special)
#endif
  for (long long column = 0; column < static_cast<long long>(N); ++column) {
    const auto j = static_cast<std::size_t>(column);
    for (std::size_t k = 0; k < K; ++k) {
      if (is_special(b.word(k, j))) special[j].push_back(k);
    }
    any_special |= static_cast<int>(!special[j].empty());
  }
  if (!any_special) return stats;
  std::size_t recomputed = 0;
#if defined(BLOCKSCALE_HAVE_OPENMP)
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads) reduction(+ : recomputed)
#endif
  for (long long row = 0; row < static_cast<long long>(M); ++row) {
    const auto i = static_cast<std::size_t>(row);
    const auto stored = [&](std::size_t k) {
      const std::size_t first = k / group * per_group;
      for (std::size_t s = first; s < first + per_group; ++s) {
        if (position(i, s) == k) return true;
      }
      return false;
    };
    std::vector<std::size_t> columns;
    for (std::size_t j = 0; j < N; ++j) {
      if (std::any_of(special[j].begin(), special[j].end(), [&](std::size_t k) { return !stored(k); })) columns.push_back(j);
    }
    if (columns.empty()) continue;
    engine.outputs(i, columns, d.data() + i * N);
    recomputed += columns.size();
  }
  stats.reference_outputs += recomputed;
  return stats;
}

}  // namespace

std::vector<std::uint32_t> gemm_sparse(const SparseGemmSchedule& schedule, const SparseOperand& a, const CodeMatrix& b,
                                       const CodeMatrix& c, const GemmOptions& options) {
  schedule.validate();
  const Instruction& ins = schedule.instruction;
  const std::string who = "gemm_sparse(" + schedule.name() + ")";
  if (a.values.empty() || b.empty()) fail(who + ": A's stored values and B are required");
  const std::size_t M = a.values.rows(), K = b.rows(), N = b.cols();
  if (a.values.cols() * 2 != K) {
    fail(who + ": A's stored values must be M x K/2 for B's K = " + std::to_string(K) + ", got " +
         std::to_string(M) + " x " + std::to_string(a.values.cols()));
  }
  if (a.index.size() != M * K / 2) {
    fail(who + ": the positions of A's stored values must be M x K/2 = " + std::to_string(M * K / 2) + ", got " +
         std::to_string(a.index.size()));
  }
  if (!c.empty() && (c.rows() != M || c.cols() != N || c.format() != Format::float32)) {
    fail(who + ": C must be " + std::to_string(M) + " x " + std::to_string(N) + " f32 codes");
  }
  if (K > static_cast<std::size_t>(std::numeric_limits<int>::max())) {
    fail(who + ": K = " + std::to_string(K) + " is more than the " + std::to_string(std::numeric_limits<int>::max()) +
         " a schedule's K positions hold");
  }
  std::vector<int> bounds{0};
  for (int s : schedule.slice_starts(static_cast<int>(K))) bounds.push_back(s);
  bounds.push_back(static_cast<int>(K));

  const Format a_format = *format_of(ins.a), b_format = *format_of(ins.b);
  if (a.values.format() != a_format) fail(who + ": A's stored values must hold " + blockscale::to_string(a_format) + " codes, got " + blockscale::to_string(a.values.format()));
  if (b.format() != b_format) fail(who + ": B must hold " + blockscale::to_string(b_format) + " codes, got " + blockscale::to_string(b.format()));
  a.values.check_codes(who + ": A's stored values");
  b.check_codes(who + ": B");

  // The positions, checked once per row and instruction step before any work (dot_sparse's rules
  // and messages), so that the parallel loops below cannot throw: rows in parallel, the first bad
  // step in row-major order reported after the loop.
  const auto step = static_cast<std::size_t>(ins.k);
  const int threads = threads_for(M * N * K / 2, options.threads);
  const auto check = [&](std::size_t i, std::size_t k0, std::vector<std::size_t>& step_rows) {
    detail::sparse_rows(ins, std::span<const std::uint8_t>(a.index).subspan(i * K / 2 + k0 / 2, step / 2), step_rows, -1);
  };
  const std::size_t steps = K / step;
  const std::size_t first_bad = first_over_rows(M, M * steps, threads, [&](std::size_t i) {
    std::vector<std::size_t> step_rows(step / 2);
    for (std::size_t t = 0; t < steps; ++t) {
      try {
        check(i, t * step, step_rows);
      } catch (const std::invalid_argument&) {
        return i * steps + t;
      }
    }
    return M * steps;
  });
  if (first_bad < M * steps) {
    const std::size_t i = first_bad / steps, k0 = first_bad % steps * step;
    try {
      std::vector<std::size_t> step_rows(step / 2);
      check(i, k0, step_rows);
    } catch (const std::invalid_argument& e) {
      fail(who + ": row " + std::to_string(i) + ", K " + std::to_string(k0) + ".." + std::to_string(k0 + step - 1) + ": " +
           e.what());
    }
  }

  SparseEngine engine{ins, schedule.reduction, a, b, c, bounds};
  std::vector<std::uint32_t> d;
  const GemmPath path = detail::resolve_path(options.path);
  const ExpandedForm expanded(ins);
  GemmPathStats stats;
  if (path == GemmPath::reference || !expanded.applies || !detail::fast_gemm_covers(expanded.schedule)) {
    d.resize(M * N);
    std::vector<std::size_t> all(N);
    for (std::size_t j = 0; j < N; ++j) all[j] = j;
#if defined(BLOCKSCALE_HAVE_OPENMP)
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
#endif
    for (long long row = 0; row < static_cast<long long>(M); ++row) {
      engine.outputs(static_cast<std::size_t>(row), all, d.data() + static_cast<std::size_t>(row) * N);
    }
    stats.reference_outputs = M * N;
  } else {
    stats = expanded_gemm(expanded, engine, path, threads, d);
  }
  if (options.stats != nullptr) *options.stats = stats;
  return d;
}

std::span<const CusparseltKernel> cusparselt_kernels() { return kKernels; }

namespace {

// " float16->float16 ...": the input/output pairs of the table, for messages.
std::string known_pairs() {
  std::string known;
  for (const CusparseltKernel& k : kKernels) {
    // Appends, not " " + string: GCC 12 warns falsely (-Wrestrict) on a literal plus a string.
    known.append(" ").append(blockscale::to_string(k.input)).append("->").append(blockscale::to_string(k.output));
  }
  return known;
}

}  // namespace

const CusparseltKernel& cusparselt_kernel(Format input, Format output) {
  for (const CusparseltKernel& k : kKernels) {
    if (k.input == input && k.output == output) return k;
  }
  fail("torch._cslt_sparse_mm on sm_90a: no measured kernel for " + blockscale::to_string(input) + " -> " + blockscale::to_string(output) +
       "; the table has" + known_pairs());
}

SparseGemmSchedule cusparselt_schedule(Format input, Format output, int slices) {
  const CusparseltKernel& k = cusparselt_kernel(input, output);
  SparseGemmSchedule s;
  s.instruction = parse_instruction(k.instruction);
  s.slices = slices;
  s.tile_k = k.tile_k;
  s.reduction = SplitKReduction::pairwise;
  s.validate();
  return s;
}

std::uint32_t cusparselt_round(CusparseltRounding r, std::uint32_t word) {
  switch (r) {
    case CusparseltRounding::as_given:
      return word;
    case CusparseltRounding::tf32_nearest_even:
      // formats' f32 -> tf32 conversion (RNE; past the largest tf32 value Inf; a NaN quieted with
      // its 13 low bits dropped) on the bit pattern: a quarter of a tf32 GEMM's time went to the
      // generic conversion. tests/emulator/sparse_gemm_test.cpp compares the two.
      if ((word & 0x7F800000u) == 0x7F800000u && (word & 0x007FFFFFu) != 0) return (word | 0x00400000u) & ~0x1FFFu;
      return tf32_nearest_even_bits(word);
    case CusparseltRounding::tf32_cusparselt_sparse:
      break;
    default:
      fail("cusparselt_round: not a CusparseltRounding (as_given, tf32_nearest_even, tf32_cusparselt_sparse)");
  }
  // Measured with one nonzero product per output (scripts/probe_sparse_mm.py: tf32 mode's single_a*,
  // edges mode's single_a_overflow*; the CusparseltRounding comment has the rule). Written as the
  // H100's results read: half a tf32 ulp (0x1000) added to the magnitude's bits, then rounded to
  // nearest even; an addition that carries past the largest finite f32 makes a NaN's bits.
  // A NaN is returned as a tf32 NaN (fraction bits above the 13 dropped ones), so that the
  // instruction, which drops those bits, still reads a NaN (0x7F800001 gave NaN on the H100).
  constexpr std::uint32_t kSign = 0x80000000u, kExponent = 0x7F800000u, kHalf = 0x1000u, kNaN = 0x7FFFE000u;
  const std::uint32_t magnitude = word & ~kSign;
  if (magnitude >= kExponent) return magnitude == kExponent ? word : kNaN;  // Inf kept, NaN stays NaN
  const std::uint32_t biased = magnitude + kHalf;
  if (biased > kExponent) return kNaN;             // 0x7F7FF001..0x7F7FFFFF
  return tf32_nearest_even_bits(biased) | (word & kSign);  // may reach Inf
}

namespace {

// cusparselt_compress on up to `threads` threads.
SparseOperand compress_for_cusparselt(const CodeMatrix& dense_a, int threads) {
  if (dense_a.empty()) fail("cusparselt_compress: A is required");
  const CusparseltKernel* kernel = nullptr;
  for (const CusparseltKernel& k : kKernels) {
    if (k.input == dense_a.format()) {
      kernel = &k;
      break;
    }
  }
  if (kernel == nullptr) {
    fail("cusparselt_compress: no measured kernel takes " + blockscale::to_string(dense_a.format()) +
         " input; the table has" + known_pairs());
  }
  const Instruction ins = parse_instruction(kernel->instruction);
  // The H100 gave no rule for a group with more nonzero values than it stores (docs/emulator.md,
  // "Zeros, subnormals, Inf and NaN").
  constexpr const char* kNoRule = " (cuSPARSELt's result for such a group follows no rule: prune A first)";
  if (kernel->a_rounding == CusparseltRounding::as_given) {
    const std::uint32_t sign = 1u << (info(dense_a.format()).storage_bits - 1);
    return compress_groups("compress_sparse(" + ins.name() + ")", ins, dense_a, dense_a, ~sign, threads, kNoRule);
  }
  const std::size_t M = dense_a.rows(), K = dense_a.cols();
  const auto words = mapped_rows(dense_a, 0, M, threads, [&](std::uint32_t w) { return cusparselt_round(kernel->a_rounding, w); });
  // The compressor tells zeros from the f32 input with subnormals flushed: a subnormal is a zero for
  // the choice of positions (beside a normal value it is dropped; in a pair of zeros it is kept
  // only at the second position, the fill's choice), while a kept one is rounded like any other
  // value (measured on the H100: edges mode's fill_subnormal, single_a_overflow's subnormal rows).
  const CodeMatrix rounded(*format_of(ins.a), M, K, std::span<const std::uint32_t>(words.first), words.second);
  return compress_groups("cusparselt_compress", ins, rounded, dense_a, 0x7F800000u, threads, kNoRule);
}

// The epilogue's conversion of the f32 accumulator (cusparselt_output): RNE; e4m3
// cvt.rn.satfinite (random codes of the data runs overflow 448 and come back as +-448, never NaN).
ConvertOptions cusparselt_output_options(Format output) {
  ConvertOptions o;
  if (output == Format::float8_e4m3fn) o.overflow = Overflow::saturate;
  return o;
}

// cusparselt_output on every word of d (output f16, bf16 or e4m3), through the formats library's
// bulk conversion (the same conversion, vectorised: formats_cuda_oracle_test checks it against
// CUDA's on every fp32 input) in blocks on `threads` threads: one word at a time, it took a seventh
// of an f16 GEMM's time.
void convert_outputs(Format output, std::span<std::uint32_t> d, [[maybe_unused]] int threads) {
  const ConvertOptions o = cusparselt_output_options(output);
  constexpr std::size_t kBlock = 4096;
  const auto blocks = static_cast<long long>((d.size() + kBlock - 1) / kBlock);
  const bool wide = info(output).storage_bits == 16;
#if defined(BLOCKSCALE_HAVE_OPENMP)
#pragma omp parallel for schedule(static) num_threads(threads)
#endif
  for (long long block = 0; block < blocks; ++block) {
    const std::size_t begin = static_cast<std::size_t>(block) * kBlock, n = std::min(kBlock, d.size() - begin);
    float in[kBlock];
    for (std::size_t i = 0; i < n; ++i) in[i] = std::bit_cast<float>(d[begin + i]);
    const std::span<const float> values(in, n);
    if (wide) {
      std::uint16_t out[kBlock];
      convert(values, output, std::span<std::uint16_t>(out, n), o);
      std::copy(out, out + n, d.begin() + static_cast<std::ptrdiff_t>(begin));
    } else {
      std::uint8_t out[kBlock];
      convert(values, output, std::span<std::uint8_t>(out, n), o);
      std::copy(out, out + n, d.begin() + static_cast<std::ptrdiff_t>(begin));
    }
  }
}

}  // namespace

SparseOperand cusparselt_compress(const CodeMatrix& dense_a) {
  return compress_for_cusparselt(dense_a, threads_for(dense_a.rows() * dense_a.cols(), 0));
}

std::vector<std::uint32_t> cusparselt_sparse_mm(Format output, const CodeMatrix& dense_a, const CodeMatrix& b, int slices,
                                                const GemmOptions& options) {
  if (dense_a.empty()) fail("cusparselt_sparse_mm: A is required");
  if (!b.empty() && b.format() != dense_a.format()) {
    fail("cusparselt_sparse_mm: A and B must have one format (torch._cslt_sparse_mm), got " +
         blockscale::to_string(dense_a.format()) + " and " + blockscale::to_string(b.format()));
  }
  // The compressor's passes take the threads of the whole call (threads_for: its multiply-adds).
  const std::size_t macs = dense_a.rows() * b.cols() * b.rows() / 2;
  return cusparselt_sparse_mm(output, compress_for_cusparselt(dense_a, threads_for(macs, options.threads)), b, slices, options);
}

std::vector<std::uint32_t> cusparselt_sparse_mm(Format output, const SparseOperand& a, const CodeMatrix& b, int slices,
                                                const GemmOptions& options) {
  if (a.values.empty() || b.empty()) fail("cusparselt_sparse_mm: A and B are required");
  const CusparseltKernel& kernel = cusparselt_kernel(b.format(), output);
  const SparseGemmSchedule schedule = cusparselt_schedule(b.format(), output, slices);
  if (a.values.format() != *format_of(schedule.instruction.a)) {
    fail("cusparselt_sparse_mm: A's stored values must be " + blockscale::to_string(*format_of(schedule.instruction.a)) +
         " codes for " + blockscale::to_string(b.format()) + " input (use cusparselt_compress), got " +
         blockscale::to_string(a.values.format()));
  }
  // B's rounding and the output conversion take the threads of the whole call (threads_for: its
  // multiply-adds), as gemm_sparse's passes do.
  const int threads = threads_for(a.values.rows() * a.values.cols() * b.cols(), options.threads);
  std::pair<std::vector<std::uint32_t>, Order> b_words;
  CodeMatrix b_read = b;
  if (kernel.b_rounding != CusparseltRounding::as_given) {
    b_words = mapped_rows(b, 0, b.rows(), threads,
                     [&](std::uint32_t w) { return cusparselt_round(kernel.b_rounding, w); });
    b_read = CodeMatrix(*format_of(schedule.instruction.b), b.rows(), b.cols(), std::span<const std::uint32_t>(b_words.first),
                        b_words.second);
  }
  std::vector<std::uint32_t> d = gemm_sparse(schedule, a, b_read, {}, options);
  // Every kernel returns NaN where the f32 sum is -Inf (+Inf stays): measured on the H100 for f16,
  // bf16 and tf32 with Inf in either operand of either sign (edges mode: fill, single_a_overflow,
  // single_b_special), while an f16 D that overflows to -Inf from a finite sum stays -Inf (data
  // runs), so it happens to the f32 value, before the output conversion. (The e4m3 kernels cannot
  // reach an f32 -Inf.) Since -Inf plus anything is -Inf or NaN, where along K it happens does not
  // matter.
  constexpr std::uint32_t kMinusInf = 0xFF800000u, kNaN = 0x7FFFFFFFu;
  for (std::uint32_t& x : d) x = x == kMinusInf ? kNaN : x;
  if (output != Format::float32) convert_outputs(output, d, threads);
  return d;
}

namespace {

// D must be a type some measured kernel writes (kKernels' outputs: f32, f16, bf16, e4m3); any other
// would be converted by a rule no kernel was seen to use (and tf32 has no storage word of its own).
void check_cusparselt_output(Format output) {
  for (const CusparseltKernel& k : kKernels) {
    if (k.output == output) return;
  }
  fail("cusparselt_output: the measured kernels write D as f32, f16, bf16 or e4m3, got " +
       (static_cast<unsigned>(output) < static_cast<unsigned>(kFormatCount) ? blockscale::to_string(output)
                                                                              : std::string("an unknown format")));
}

}  // namespace

std::uint32_t cusparselt_output(Format output, std::uint32_t f32_word) {
  check_cusparselt_output(output);
  // An f32 D is the accumulator stored as it is: no conversion, so a signalling NaN is not quieted
  // (as convert_code's f32 -> f32 would), and the bulk form below agrees word for word.
  if (output == Format::float32) return f32_word;
  return convert_code(output, Format::float32, f32_word, cusparselt_output_options(output));
}

void cusparselt_output(Format output, std::span<std::uint32_t> f32_words, int threads) {
  check_cusparselt_output(output);
  if (output != Format::float32) convert_outputs(output, f32_words, threads_for(f32_words.size(), threads));
}

}  // namespace blockscale::emulator
