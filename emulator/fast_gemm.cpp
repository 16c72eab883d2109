// SPDX-License-Identifier: Apache-2.0
// The fast GEMM driver (issue 6): which schedules the fast kernels cover, the panels, the work
// split (tiles of kRows x W outputs in tasks of row blocks times strip groups, K in chunks, see
// Blocking), and the schedule logic around the kernels (chain,
// Hopper promotion, split-K, C in the epilogue), in the same order as gemm.cpp's reference loop.
// Each output is computed from its own row and column in a fixed order, so the bits do not depend
// on the thread count or on the tiling.
#include "fast_gemm.h"

#include <algorithm>
#include <atomic>
#include <cstring>

#include "blockscale/formats/detail/ieee_mode.h"
#include "engine.h"
#include "fast_kernels.h"
#include "fast_panels.h"

#if defined(BLOCKSCALE_HAVE_OPENMP)
#include <omp.h>
#endif

namespace blockscale::emulator::detail {

namespace {

using fast::kRows;

using fast::narrow_operand;

// The 16- and 19-bit operands of T-FDPA instructions (fast_panels.h: wide).
bool wide_operand(Format f) { return f == Format::float16 || f == Format::bfloat16 || f == Format::tfloat32; }

// The schedules the fast kernels compute; the limits keep every intermediate exact (fast_kernels.h).
bool covers(const KernelSchedule& s) {
  const Instruction& ins = s.instruction;
  const FdpaParams& p = ins.params();
  // f16 accumulators (RNE-FP16) come with T-FDPA and with b.9's HMMAs only (the table's rows).
  const bool f16 = p.rounding == OutputRounding::rne_fp16;
  if (f16 ? p.algorithm != Algorithm::t_fdpa && p.algorithm != Algorithm::fp8_via_f16
          : p.rounding != OutputRounding::rz_fp32 && p.rounding != OutputRounding::rz_e8m13) {
    return false;
  }
  // e(C) >= emin (fp32 -126, fp16 -14) for any nonzero C: with e_zero at or below it the zero
  // floor is max(e(c), e_zero) (fast_kernels.h, acc_exponent).
  if (p.e_zero > (f16 ? -14 : -126)) return false;
  const Format fa = *format_of(ins.a), fb = *format_of(ins.b);
  if (p.algorithm == Algorithm::fp8_via_f16) {
    // b.9: per instruction two T-FDPA steps of L f16 products from zero, then one FADD / HADD into
    // the accumulator (b9_operands); not inside a promotion interval.
    return s.accumulation != Accumulation::promotion && p.F <= 25 && p.L <= 32 && ins.k == 2 * p.L;
  }
  // T-FDPA steps of L products; an instruction whose K is below L is one step of K (step_length).
  const bool whole_steps = ins.k % p.L == 0 || (p.algorithm == Algorithm::t_fdpa && ins.k < p.L);
  if (p.algorithm == Algorithm::t_fdpa && wide_operand(fa) && wide_operand(fb)) {
    // Terms below 2^(F+2), at most 32 of them, summed exactly in double (fast_kernels.h).
    return p.F <= 25 && p.F >= 1 && p.L <= 32 && whole_steps;
  }
  if (p.algorithm == Algorithm::t_fdpa || p.algorithm == Algorithm::st_fdpa) {
    // int32 sums of 16 terms below 2^(F+2); float products exact with <= 8 significant bits; steps
    // of up to 64 products (fast_kernels.h, kMaxStepProducts: Hopper's fp8 wgmma.sp, expanded).
    if (!narrow_operand(fa) || !narrow_operand(fb) || p.F > 25 || p.F < 1 || p.L > fast::kMaxStepProducts) return false;
    if (!whole_steps) return false;
    if (p.algorithm == Algorithm::st_fdpa &&
        (ins.block() != p.L || *format_of(ins.scale_type()) != Format::float8_e8m0fnu)) {
      return false;
    }
    return true;
  }
  if (p.algorithm == Algorithm::gst_fdpa) {
    // Group terms below 2^(11+F), at most 5 terms and C: exact in double for F <= 37.
    return fa == Format::float4_e2m1fn && fb == Format::float4_e2m1fn && p.group == fast::kGroup &&
           p.L % fast::kGroup == 0 && p.L <= 4 * fast::kGroup && ins.k == p.L && ins.block() % fast::kGroup == 0 &&
           p.F <= 37;
  }
  return false;
}

// The products per fused step: L, or for a T-FDPA instruction whose K is below L (the m16n8k4 tf32
// and m16n8k8 f16 / bf16 mma.sync of sm_90a .. sm_120a, whose hardware steps take 8 and 16) K:
// the engine's step then sums the instruction's K products (engine.cpp, run_instruction), and so
// do the kernels with panels of K-product steps.
int step_length(const Instruction& ins) {
  const FdpaParams& p = ins.params();
  return p.algorithm == Algorithm::t_fdpa ? std::min(p.L, ins.k) : p.L;
}

const fast::KernelSet& kernels(GemmPath path) {
  switch (path) {
    case GemmPath::avx512: return fast::avx512_kernels();
    case GemmPath::avx2: return fast::avx2_kernels();
    default: return fast::portable_kernels();
  }
}

// out[x * ox + q * oq] = table[code at (k = source[q], x)] for every vector x < X (a row of A, a
// column of B) and every q whose source lies below K; the code at (k, x) is word x * vx + k * vk.
// The inner loop runs along the words' unit stride, the outer one over `threads` threads (alone,
// this pass took a quarter of a 256 x 256 x 8192 GEMM's time on 16 threads of an H200 host).
template <class Word>
void gather_f16(const Word* w, std::size_t vx, std::size_t vk, std::size_t X, std::size_t K, const std::vector<std::size_t>& source,
                const std::uint16_t* table, std::uint16_t* out, std::size_t ox, std::size_t oq, int threads) {
  (void)threads;
  if (vk == 1 && ox == 1) {
    // K runs along the words and the vectors along the output (a column-major B): 16 vectors at a
    // time, so that each q writes 32 contiguous bytes while 16 input streams advance (one vector
    // at a time wrote every output word to a different cache line).
    constexpr std::size_t kBlock = 16;
#if defined(BLOCKSCALE_HAVE_OPENMP)
#pragma omp parallel for num_threads(threads) schedule(static)
#endif
    for (std::size_t xb = 0; xb < X; xb += kBlock) {
      const std::size_t n = std::min(kBlock, X - xb);
      for (std::size_t q = 0; q < source.size(); ++q) {
        if (source[q] >= K) continue;
        for (std::size_t i = 0; i < n; ++i) out[xb + i + q * oq] = table[w[(xb + i) * vx + source[q]] & 0xFFu];
      }
    }
    return;
  }
  if (vk == 1) {
#if defined(BLOCKSCALE_HAVE_OPENMP)
#pragma omp parallel for num_threads(threads) schedule(static)
#endif
    for (std::size_t x = 0; x < X; ++x) {
      for (std::size_t q = 0; q < source.size(); ++q) {
        if (source[q] < K) out[x * ox + q * oq] = table[w[x * vx + source[q]] & 0xFFu];
      }
    }
    return;
  }
#if defined(BLOCKSCALE_HAVE_OPENMP)
#pragma omp parallel for num_threads(threads) schedule(static)
#endif
  for (std::size_t q = 0; q < source.size(); ++q) {
    if (source[q] >= K) continue;
    for (std::size_t x = 0; x < X; ++x) out[x * ox + q * oq] = table[w[x * vx + source[q] * vk] & 0xFFu];
  }
}

// gather_f16 for a CodeMatrix of any word width; `rows`: its vectors are its rows (A), else its
// columns (B).
void gather_f16(const CodeMatrix& m, bool rows, const std::vector<std::size_t>& source, const std::uint16_t* table,
                std::uint16_t* out, std::size_t ox, std::size_t oq, int threads) {
  const std::size_t vx = rows ? m.row_stride() : m.col_stride(), vk = rows ? m.col_stride() : m.row_stride();
  const std::size_t X = rows ? m.rows() : m.cols(), K = rows ? m.cols() : m.rows();
  switch (m.word_bits()) {
    case 8: return gather_f16(static_cast<const std::uint8_t*>(m.data()), vx, vk, X, K, source, table, out, ox, oq, threads);
    case 16: return gather_f16(static_cast<const std::uint16_t*>(m.data()), vx, vk, X, K, source, table, out, ox, oq, threads);
    default: return gather_f16(static_cast<const std::uint32_t*>(m.data()), vx, vk, X, K, source, table, out, ox, oq, threads);
  }
}

// b.9 (numerics.md): sm_90a / sm_100a compile fp8 mma.sync into F2FP conversions to f16 and two
// HMMAs, the first over the elements with k mod 4 in {0, 1} of each 2L-element instruction (the
// low 16-bit halves of the A / B registers), the second over those with k mod 4 in {2, 3}. The
// fast paths run them as f16 operands in that order: A as M x padded and B as padded x N f16 codes
// (exact conversions; zeros beyond K), in `a16` and `b16`, which the returned operands view.
GemmOperands b9_operands(const GemmOperands& ops, std::size_t L, std::size_t padded, int threads, std::vector<std::uint16_t>& a16,
                         std::vector<std::uint16_t>& b16) {
  const std::size_t M = ops.a.rows(), N = ops.b.cols();
  std::uint16_t to_f16[2][256];
  for (std::uint32_t w = 0; w < 256; ++w) {
    to_f16[0][w] = static_cast<std::uint16_t>(convert_code(Format::float16, ops.a.format(), w & code_mask(ops.a.format())));
    to_f16[1][w] = static_cast<std::uint16_t>(convert_code(Format::float16, ops.b.format(), w & code_mask(ops.b.format())));
  }
  // The element that position q of the permuted K holds: position i of HMMA h (0, 1) within its
  // instruction takes element 4 (i / 2) + 2 h + i % 2.
  std::vector<std::size_t> source(padded);
  for (std::size_t q = 0; q < padded; ++q) {
    const std::size_t j = q % (2 * L), h = j / L, i = j % L;
    source[q] = q - j + 4 * (i / 2) + 2 * h + i % 2;
  }
  a16.assign(M * padded, 0);
  b16.assign(padded * N, 0);
  gather_f16(ops.a, true, source, to_f16[0], a16.data(), padded, 1, threads);
  gather_f16(ops.b, false, source, to_f16[1], b16.data(), 1, N, threads);
  return GemmOperands{CodeMatrix(Format::float16, M, padded, a16), CodeMatrix(Format::float16, padded, N, b16), {}, {}, ops.c};
}

// The reference engine for one step of one output (lanes with an Inf operand).
struct Fallback {
  const FdpaParams* p;
  bool f16;  // accumulators: f16 values held as fp32 patterns (fast_kernels.h, OutputRule)
  std::size_t L, M, N;
  const Panel* pa;
  const Panel* pb;
  const ScalePanel* spa;
  const ScalePanel* spb;

  static std::uint32_t run(const void* ctx, std::size_t row, std::size_t col, std::size_t step, std::uint32_t c) {
    const auto& f = *static_cast<const Fallback*>(ctx);
    if (row >= f.M || col >= f.N) return c;  // padding: never read
    ScaleVec sa, sb;
    if (f.spa != nullptr) {
      sa = f.spa->vec(row);
      sb = f.spb->vec(col);
    }
    if (f.f16) {
      return fast::widen_f16(run_instruction(*f.p, Format::float16, f.pa->vec(row), f.pb->vec(col), step * f.L, f.L, nullptr,
                                             nullptr, fast::narrow_f16(c)));
    }
    return run_instruction(*f.p, Format::float32, f.pa->vec(row), f.pb->vec(col), step * f.L, f.L,
                           f.spa ? &sa : nullptr, f.spb ? &sb : nullptr, c);
  }
};

// The panels of the calling thread, and fast_gemm's accumulators, kept between calls: a sequence of
// GEMMs (a numerics sweep, a benchmark) then reuses their storage instead of faulting in tens of MB
// of fresh pages per call, which costs about as much as decoding into them (docs/performance.md).
// When they together hold more than kKeptPanelBytes, all are released as the call ends.
struct PanelCache {
  static constexpr std::size_t kKeptPanelBytes = std::size_t{256} << 20;
  fast::TfdpaPanels tfdpa;
  fast::GstPanels gst;
  fast::Buffer<std::uint32_t> acc;          // fast_gemm's accumulators
  fast::Buffer<fast::CarriedBounds> carry;  // and carried bounds (T-/ST-FDPA), per tile

  PanelCache() = default;
  PanelCache(const PanelCache&) = delete;
  PanelCache& operator=(const PanelCache&) = delete;
  // Runs when the GEMM call that used the panels ends (also by an exception).
  struct Trim {
    PanelCache& cache;
    ~Trim() {
      if (fast::storage_bytes(cache.tfdpa) + fast::storage_bytes(cache.gst) +
              cache.acc.capacity() * sizeof(std::uint32_t) + cache.carry.capacity() * sizeof(fast::CarriedBounds) >
          kKeptPanelBytes) {
        cache.tfdpa = {};
        cache.gst = {};
        cache.acc = {};
        cache.carry = {};
      }
    }
  };
};

PanelCache& panel_cache() {
  thread_local PanelCache cache;
  return cache;
}

// The pairwise tree of gemm.h over partials [lo, hi).
std::uint32_t pairwise(const std::uint32_t* p, std::size_t lo, std::size_t hi) {
  if (hi - lo == 1) return p[lo];
  const std::size_t mid = lo + (hi - lo + 1) / 2;
  return fast::host_add(pairwise(p, lo, mid), pairwise(p, mid, hi));
}

// The work split of fast_gemm for one kernel family: tasks of up to max_blocks row blocks (kRows
// rows each) times group_columns output columns, and within a task K in chunks of chunk_k
// elements. In each chunk every row block of the task meets every strip of its group, so the
// block's chunk of A stays in L1 across the strips and the group's chunk of B in L2 across the
// blocks; a task reads its part of the panels from memory once. Tasks get fewer row blocks until
// there are at least one_thread_tasks of them on one thread, tasks_per_thread per thread on more:
// several each even out threads that run at different speeds on a shared host (PhaseTasks).
struct Blocking {
  std::size_t group_columns, chunk_k, max_blocks, tasks_per_thread, one_thread_tasks;
};
// T-/ST-FDPA: the B chunk of a group is 128 columns x 256 k x 14 bytes (the AVX-512 kernel's fp32
// and bounds panels and the chunk's fp64 copy, fast::Fp64Chunk), 460 KB, and with 128 row blocks
// the task's accumulators and carried bounds (fast::CarriedBounds) take about 420 KB more:
// together they fit a 1 MB L2. Groups of one strip, 16 row blocks and chunks of 1024 k (the
// earlier split) read A once per strip: at
// 256 x 256 x 8192, where the panels (62 MB) outgrow the L3 cache, the one-thread MXFP8 runs then
// took 9-15% longer on the Zen 5 development VM (docs/performance.md). One thread takes the
// largest tasks; with 16 threads on an H200 host, 2 tasks per thread ran the 1024^3 rows 15-20%
// slower than 4. GST-FDPA keeps the earlier split: its panels are a quarter of the size, and the
// grouped split ran no faster for it (Zen 5, one thread: NVFP4 rows within 3%, random bits 8%
// slower).
constexpr Blocking kTfdpaBlocking{128, 256, 128, 4, 1};
constexpr Blocking kGstBlocking{16, 2048, 16, 4, 4};

// fast_gemm runs K in phases, all threads in the same one (a barrier after each): spans of whole
// K chunks whose panels, A and B of the whole problem, take at most kPhasePanelBytes (half the
// 32 MB L3 of the Zen 5 development VM), so that they stay in the last-level cache while every
// task reads its part and each panel byte comes from memory about once, whatever the number of
// tasks. When each task ran all of K, it read the A panels of its row group once per strip group
// and the B panels of its strip group once per row group: at 256 x 256 x 8192 (62 MB of panels,
// four phases) the MXFP8 runs on two Zen 5 cores took 3-6% longer (docs/performance.md). Problems
// whose panels fit in one phase run all of K in each task, as before.
constexpr std::size_t kPhasePanelBytes = std::size_t{16} << 20;

// Runs the tasks of fast_gemm's phases on a team of threads, the caller's barrier after each
// phase. Each thread owns the same tasks in every phase, a contiguous share, and runs them first;
// then it takes what is left of the others' shares. So a task's accumulators stay with one core
// from phase to phase when the threads keep pace, and a thread slowed by its host is still covered.
// (With the OpenMP dynamic schedule the tasks changed threads between phases: in a trial with a
// phase per 256-k chunk, two Zen 5 cores ran MXFP8 1024^3 in 23 or 29 ms, varying from process to
// process. On 16 threads of an H200 host the 1024^3 rows ran 10-20% faster than with the dynamic
// schedule over tasks of all of K.)
class PhaseTasks {
 public:
  PhaseTasks(std::size_t tasks, std::size_t threads, std::size_t phases)
      : tasks_(tasks), threads_(threads), cursors_(phases * threads) {
    for (std::size_t i = 0; i < cursors_.size(); ++i) cursors_[i].next.store(share_begin(i % threads), std::memory_order_relaxed);
  }
  // Calls f(t) for the tasks of phase `phase` that thread `me` of the team gets. Every thread of
  // the team calls it once per phase, with a barrier between phases. A team smaller than
  // `threads` (OpenMP may give fewer, one inside another parallel region) leaves shares without
  // their owner: the others take them.
  template <class F>
  void run(std::size_t phase, std::size_t me, F&& f) {
    Cursor* const cursors = &cursors_[phase * threads_];
    for (std::size_t v = 0; v < threads_; ++v) {
      const std::size_t owner = (me + v) % threads_;
      const std::size_t end = share_begin(owner + 1);
      for (std::size_t t = cursors[owner].next.fetch_add(1, std::memory_order_relaxed); t < end;
           t = cursors[owner].next.fetch_add(1, std::memory_order_relaxed)) {
        f(t);
      }
    }
  }

 private:
  struct alignas(64) Cursor {
    std::atomic<std::size_t> next{0};
  };
  std::size_t share_begin(std::size_t i) const { return tasks_ * i / threads_; }
  std::size_t tasks_, threads_;
  std::vector<Cursor> cursors_;  // [phase][thread]: the next task of the thread's share
};

// A task's strips [strip_begin, strip_begin + task_strips) and row blocks [block_begin,
// block_begin + blocks), and where its tiles' accumulators begin.
struct Task {
  std::size_t strip_begin, task_strips, block_begin, blocks, first_tile;
  // The tile of row block b and strip st (row blocks outer, as the chunks run them).
  std::size_t tile(std::size_t b, std::size_t st) const {
    return first_tile + (b - block_begin) * task_strips + (st - strip_begin);
  }
  // Calls f(t, b, st) for every tile of the task, in that order.
  template <class F>
  void for_each_tile(F&& f) const {
    for (std::size_t b = block_begin; b < block_begin + blocks; ++b) {
      for (std::size_t st = strip_begin; st < strip_begin + task_strips; ++st) f(tile(b, st), b, st);
    }
  }
};

}  // namespace

bool fast_gemm_covers(const KernelSchedule& schedule) { return covers(schedule); }

bool fast_gemm(const KernelSchedule& schedule, const GemmOperands& ops, GemmPath path, int threads,
               GemmPathStats* stats, std::vector<std::uint32_t>& d) {
  return fast_gemm(schedule, ops, kernels(path), threads, stats, d);
}

bool fast_gemm(const KernelSchedule& schedule, const GemmOperands& ops, const fast::KernelSet& ks, int threads,
               GemmPathStats* stats, std::vector<std::uint32_t>& d) {
  if (!covers(schedule)) return false;
  const Instruction& ins = schedule.instruction;
  const FdpaParams& p = ins.params();
  const bool gst = p.algorithm == Algorithm::gst_fdpa;
  const bool b9 = p.algorithm == Algorithm::fp8_via_f16;  // f16 operands (b9_operands)
  // f16 / bf16 / tf32 operands: the path's KernelSet::tfdpa_wide.
  const bool wide = b9 || (!gst && wide_operand(*format_of(ins.a)));
  const fast::TfdpaStepsFn tfdpa = wide ? ks.tfdpa_wide : ks.tfdpa;
  const std::size_t M = ops.a.rows(), K = ops.a.cols(), N = ops.b.cols();
  if (M == 0 || N == 0) {  // no outputs (the work split below needs a row block and a strip)
    d.clear();
    if (stats != nullptr) *stats = GemmPathStats{};
    return true;
  }
  const auto kstep = static_cast<std::size_t>(ins.k);
  const std::size_t instructions = (K + kstep - 1) / kstep;
  const std::size_t padded = instructions * kstep;
  const int step_L = step_length(ins);
  const auto L = static_cast<std::size_t>(step_L);
  const std::size_t steps_per_instruction = kstep / L;
  const std::size_t total_steps = instructions * steps_per_instruction;
  const bool promotion = schedule.accumulation == Accumulation::promotion;
  const std::size_t unit = promotion ? static_cast<std::size_t>(schedule.promotion_interval) : 1;  // instructions
  const std::size_t units = (instructions + unit - 1) / unit;
  const std::size_t slices = static_cast<std::size_t>(schedule.split_k);
  const std::size_t per_slice = schedule.slice_units(units);
  const std::size_t W = gst ? fast::kGstWidth : fast::kTfdpaWidth;
  const bool f16 = p.rounding == OutputRounding::rne_fp16;  // no split-K, no promotion (KernelSchedule::validate)
  const fast::OutputRule rule{p.F, p.e_zero, p.rounding == OutputRounding::rz_e8m13,
                              p.underflow_zero == UnderflowZero::positive, f16};

  // The operands whose panels the kernels read: for b.9 the f16 ones, each step one HMMA.
  std::vector<std::uint16_t> b9_a, b9_b;
  const GemmOperands elements = b9 ? b9_operands(ops, L, padded, threads, b9_a, b9_b) : GemmOperands{};
  const GemmOperands& element_ops = b9 ? elements : ops;
  FdpaParams step_params = p;  // the parameters of one step (b.9: one HMMA)
  step_params.algorithm = b9 ? Algorithm::t_fdpa : p.algorithm;

  PanelCache& cache = panel_cache();
  const PanelCache::Trim trim{cache};
  fast::TfdpaPanels& tp = cache.tfdpa;
  fast::GstPanels& gp = cache.gst;
  std::size_t rows = 0, strips = 0;
  if (gst) {
    fast::decode_gst(ops, p.L, padded, ins.block(), threads, gp);
    rows = gp.rows;
    strips = gp.strips;
  } else if (wide) {
    fast::decode_tfdpa(element_ops, step_L, padded, false, fast::TfdpaBounds::exponents, 0, threads, tp, ks.decode);
    rows = tp.rows;
    strips = tp.strips;
  } else {
    const int fp16_F = p.F <= ks.fp16_max_F && step_L % 2 == 0 ? p.F : 0;
    fast::decode_tfdpa(ops, step_L, padded, p.algorithm == Algorithm::st_fdpa, ks.tfdpa_bounds, fp16_F, threads, tp,
                       ks.decode);
    rows = tp.rows;
    strips = tp.strips;
  }
  // The kernel set's T-FDPA kernel reads its fp64 values from chunks that the tasks widen
  // (fast::Fp64Chunk): wherever it may take its exact route (no fp16 panels).
  const bool fp64_chunks = !gst && !wide && !ks.decode.fp64_panels && tp.fp16_F == 0;
  // Inf operands take the reference engine for their steps: it needs its own panels.
  Panel ref_a, ref_b;
  ScalePanel ref_sa, ref_sb;
  Fallback fallback{&step_params, f16, L, M, N, &ref_a, &ref_b, nullptr, nullptr};
  if (!gst && tp.any_inf) {
    ref_a.decode(element_ops.a, true, padded, element_ops.a.format(), 0);
    ref_b.decode(element_ops.b, false, padded, element_ops.b.format(), 0);
    if (tp.scaled) {
      ref_sa.decode(ops.scale_a, true, padded / L, p.L);
      ref_sb.decode(ops.scale_b, false, padded / L, p.L);
      fallback.spa = &ref_sa;
      fallback.spb = &ref_sb;
    }
  }

  // Tasks and K chunks (Blocking).
  const Blocking& split = gst ? kGstBlocking : kTfdpaBlocking;
  const std::size_t group_strips = std::min(strips, std::max<std::size_t>(1, split.group_columns / W));
  const std::size_t strip_groups = (strips + group_strips - 1) / group_strips;
  const std::size_t row_blocks = rows / kRows;
  std::size_t task_blocks = std::min(row_blocks, split.max_blocks);
  const std::size_t min_tasks = threads == 1 ? split.one_thread_tasks : split.tasks_per_thread * static_cast<std::size_t>(threads);
  while (task_blocks > 1 && strip_groups * ((row_blocks + task_blocks - 1) / task_blocks) < min_tasks) {
    task_blocks = (task_blocks + 1) / 2;
  }
  const std::size_t steps_per_unit = unit * steps_per_instruction;
  const std::size_t chunk_units = std::max<std::size_t>(1, split.chunk_k / (steps_per_unit * L));
  const std::size_t row_groups = (row_blocks + task_blocks - 1) / task_blocks;
  const std::size_t tasks = strip_groups * row_groups;
  // The accumulators of every tile, one set per split-K slice, in the order in which the tasks run
  // their tiles (Task::tile): a task's accumulators and carried bounds are read and written in
  // sequence, once per chunk. They live in the cache with the panels (no fresh pages per call) and
  // are set by the tasks that own them (first touch by the thread that runs them).
  const std::size_t tile = kRows * W;
  const std::size_t task_tiles = task_blocks * group_strips;
  const std::size_t tiles = tasks * task_tiles;
  cache.acc.resize(slices * tiles * tile);
  if (!gst) cache.carry.resize(tiles);
  std::uint32_t* const acc = cache.acc.data();
  fast::CarriedBounds* const carry = cache.carry.data();
  d.assign(M * N, 0);
  fast::StepCounts totals;

  const auto task_at = [&](std::size_t i) {
    const std::size_t strip_begin = i % strip_groups * group_strips, block_begin = i / strip_groups * task_blocks;
    return Task{strip_begin, std::min(strips, strip_begin + group_strips) - strip_begin, block_begin,
                std::min(row_blocks, block_begin + task_blocks) - block_begin, i * task_tiles};
  };
  // Calls f(at, row, col, n) for each row of the tile of row block b and strip st within M x N:
  // its n outputs are (row, col + j) at index at + j of the tile's accumulators.
  const auto for_tile_rows = [&](std::size_t b, std::size_t st, auto&& f) {
    const std::size_t col = st * W;
    const std::size_t n = std::min(W, N - std::min(N, col));
    for (std::size_t i = 0; i < kRows && b * kRows + i < M; ++i) f(i * W, b * kRows + i, col, n);
  };
  const bool c_first = slices == 1 && schedule.c_placement == CPlacement::accumulator && !ops.c.empty();
  // The phases: spans of K, each of whole chunks of one slice (a slice may have no units), of at
  // most kPhasePanelBytes of panels for the whole problem (at least one chunk), in order; all
  // threads work in the same phase (PhaseTasks). A tile's accumulators of a slice start at that
  // slice's first phase, and its epilogue runs in the last phase, right after its last chunk;
  // with no units at all there is one phase, the epilogue's.
  const std::size_t panel_bytes_per_k = (gst ? fast::panel_bytes(gp) : fast::panel_bytes(tp)) / std::max<std::size_t>(1, padded);
  const std::size_t chunk_bytes = std::max<std::size_t>(1, panel_bytes_per_k * chunk_units * steps_per_unit * L);
  const std::size_t phase_units = chunk_units * std::max<std::size_t>(1, kPhasePanelBytes / chunk_bytes);
  struct Phase {
    std::size_t slice, u0, u1;
    bool first;  // the slice's first
  };
  std::vector<Phase> spans;
  for (std::size_t s = 0; s < slices; ++s) {
    const std::size_t u0 = std::min(units, s * per_slice), u1 = std::min(units, u0 + per_slice);
    for (std::size_t p0 = u0; p0 < u1; p0 += phase_units) spans.push_back({s, p0, std::min(u1, p0 + phase_units), p0 == u0});
  }
  const std::size_t phase_count = std::max<std::size_t>(1, spans.size());
  PhaseTasks phases(tasks, static_cast<std::size_t>(threads), phase_count);

#if defined(BLOCKSCALE_HAVE_OPENMP)
#pragma omp parallel num_threads(threads)
#else
  (void)threads;
#endif
  {
#if defined(BLOCKSCALE_HAVE_OPENMP)
    const auto me = static_cast<std::size_t>(omp_get_thread_num());
#else
    const std::size_t me = 0;
#endif
    const blockscale::detail::IeeeMode ieee;
    fast::StepCounts counts;
    std::vector<std::uint32_t> part(tile), sa(kRows), sb(W), slice_values(slices);
    // fp64_chunks: this thread's current K chunk [fp64_k0, fp64_k0 + fp64_len) in fp64, B for the
    // strips of its task's group ([strip - fp64_strip0][k][W]) and A for the four rows of row block
    // fp64_block ([row][k]).
    fast::Buffer<double> fp64_a, fp64_b;
    std::size_t fp64_k0 = 0, fp64_len = 0, fp64_strip0 = 0, fp64_block = 0;
    // The accumulators of tile t for slice s.
    const auto tile_acc = [&](std::size_t s, std::size_t t) { return acc + (s * tiles + t) * tile; };
    // A slice's accumulators start at 0, or at C (c_first).
    const auto start_slice = [&](std::size_t s, std::size_t t, std::size_t b, std::size_t st) {
      std::uint32_t* const r = tile_acc(s, t);
      std::fill_n(r, tile, 0u);
      if (c_first) {
        for_tile_rows(b, st, [&](std::size_t at, std::size_t row, std::size_t col, std::size_t n) {
          for (std::size_t j = 0; j < n; ++j) {
            const std::uint32_t c = ops.c.word(row, col + j);
            r[at + j] = f16 ? fast::widen_f16(c) : c;
          }
        });
      }
    };
    // Runs units [u0, u1) of row block b and strip st onto the accumulators r of tile t.
    const auto run_units = [&](std::uint32_t* r, std::size_t t, std::size_t b, std::size_t st, std::size_t u0, std::size_t u1) {
      const std::size_t row0 = b * kRows;
      if (gst) {
        const fast::GstTile gt{&gp, rule, row0, st};
        ks.gst(gt, r, u0 * steps_per_unit, std::min(total_steps, u1 * steps_per_unit), counts);
        return;
      }
      const fast::Fp64Chunk fp64 =
          fp64_chunks ? fast::Fp64Chunk{fp64_a.data(), fp64_b.data() + (st - fp64_strip0) * fp64_len * W, fp64_len, fp64_k0}
                      : fast::Fp64Chunk{};
      const fast::TfdpaTile tt{&tp, rule, row0, st, &Fallback::run, &fallback, &carry[t], fp64};
      if (b9) {
        // Per instruction (b.9): d1 = HMMA(S1, 0), d2 = HMMA(S2, d1), then acc = d2 + acc (FADD
        // or HADD, RNE).
        for (std::size_t u = u0; u < u1; ++u) {
          if (fast::nan_absorbed(r, tile, (u1 - u) * steps_per_unit, counts)) break;
          std::fill(part.begin(), part.end(), 0u);
          tfdpa(tt, part.data(), u * steps_per_unit, (u + 1) * steps_per_unit, counts);
          ks.accumulate(part.data(), r, f16);
        }
        return;
      }
      if (!promotion) {
        tfdpa(tt, r, u0 * steps_per_unit, std::min(total_steps, u1 * steps_per_unit), counts);
        return;
      }
      for (std::size_t u = u0; u < u1; ++u) {
        // An all-NaN accumulator stays the canonical NaN through every promotion (fast::all_nan).
        if (fast::nan_absorbed(r, tile, std::min(total_steps, u1 * steps_per_unit) - u * steps_per_unit, counts)) break;
        // A fresh accumulator for P instructions (scale-d = 0 first), then the FFMA promotion.
        std::fill(part.begin(), part.end(), 0u);
        tfdpa(tt, part.data(), u * steps_per_unit, std::min(total_steps, (u + 1) * steps_per_unit), counts);
        for (std::size_t i = 0; i < kRows; ++i) sa[i] = row0 + i < M ? ops.scale_a.word(row0 + i, u) : 0u;
        for (std::size_t j = 0; j < W; ++j) sb[j] = st * W + j < N ? ops.scale_b.word(u, st * W + j) : 0u;
        ks.promote(schedule.promotion_fma, sa.data(), sb.data(), part.data(), r);
      }
    };
    // Epilogue of tile t: C added after the loop, or the split-K reduction (fp32 RNE adds, gemm.h).
    const auto epilogue = [&](std::size_t t, std::size_t b, std::size_t st) {
      for_tile_rows(b, st, [&](std::size_t at, std::size_t row, std::size_t col, std::size_t n) {
        std::uint32_t* out = d.data() + row * N + col;
        if (f16) {
          // One slice; C (+0 if absent) after the loop with one fp16 HADD (gemm.h).
          const std::uint32_t* const values = tile_acc(0, t) + at;
          const bool c_after = schedule.c_placement == CPlacement::epilogue;
          if (total_steps == 0 && !c_after) {
            // No instruction ran (K = 0): the accumulator is C as given, a NaN's payload included,
            // as on the reference engine and the f32 rows; widening and narrowing would make it canonical.
            for (std::size_t j = 0; j < n; ++j) out[j] = ops.c.empty() ? 0u : ops.c.word(row, col + j);
            return;
          }
          for (std::size_t j = 0; j < n; ++j) {
            const std::uint32_t c = ops.c.empty() ? 0u : fast::widen_f16(ops.c.word(row, col + j));
            out[j] = fast::narrow_f16(c_after ? fast::host_add_f16(values[j], c) : values[j]);
          }
          return;
        }
        if (slices == 1 && schedule.c_placement == CPlacement::accumulator) {
          std::copy_n(tile_acc(0, t) + at, n, out);
          return;
        }
        for (std::size_t j = 0; j < n; ++j) {
          const std::uint32_t c = ops.c.empty() ? 0u : ops.c.word(row, col + j);
          if (slices == 1) {
            out[j] = fast::host_add(tile_acc(0, t)[at + j], c);
          } else {
            for (std::size_t s = 0; s < slices; ++s) slice_values[s] = tile_acc(s, t)[at + j];
            if (schedule.reduction == SplitKReduction::pairwise) {
              out[j] = fast::host_add(c, pairwise(slice_values.data(), 0, slices));
            } else {
              out[j] = c;
              for (std::uint32_t x : slice_values) out[j] = fast::host_add(out[j], x);
            }
          }
        }
      });
    };

    for (std::size_t phase = 0; phase < phase_count; ++phase) {
      const bool last = phase + 1 == phase_count;
      phases.run(phase, me, [&](std::size_t task) {
        const Task k = task_at(task);
        if (phase < spans.size()) {
          const Phase& span = spans[phase];
          k.for_each_tile([&](std::size_t t, std::size_t b, std::size_t st) {
            if (span.first) start_slice(span.slice, t, b, st);
            // No bounds carried yet: the step alone says so (assigning a whole fresh CarriedBounds,
            // 320 bytes by rep stos and rep movs per tile, was a third of fast_gemm's own time).
            if (phase == 0 && !gst) carry[t].step = fast::CarriedBounds::kNone;
          });
          // In each chunk every row block of the task meets every strip of its group (Blocking).
          for (std::size_t c0 = span.u0; c0 < span.u1; c0 += chunk_units) {
            const std::size_t c1 = std::min(span.u1, c0 + chunk_units);
            if (fp64_chunks) {
              fp64_k0 = c0 * steps_per_unit * L;
              fp64_len = std::min(total_steps, c1 * steps_per_unit) * L - fp64_k0;
              fp64_strip0 = k.strip_begin;
              fp64_block = row_blocks;  // none yet
              fp64_a.resize(kRows * fp64_len);
              fp64_b.resize(k.task_strips * fp64_len * W);
              for (std::size_t i = 0; i < k.task_strips; ++i) {
                ks.widen_strip(tp, k.strip_begin + i, fp64_k0, fp64_len, &fp64_b[i * fp64_len * W]);
              }
            }
            k.for_each_tile([&](std::size_t t, std::size_t b, std::size_t st) {
              if (fp64_chunks && b != fp64_block) {
                for (std::size_t r = 0; r < kRows; ++r) ks.widen_row(tp, b * kRows + r, fp64_k0, fp64_len, &fp64_a[r * fp64_len]);
                fp64_block = b;
                // The next row block's chunk of A, which the tiles of this block give the time to
                // arrive: four rows of fp64_len floats, P.k apart, too short for the hardware
                // prefetchers to follow (a_val of 1024 rows is larger than L2).
                if (b + 1 < k.block_begin + k.blocks) {
                  for (std::size_t r = 0; r < kRows; ++r) {
                    const float* next = &tp.a_val[((b + 1) * kRows + r) * tp.k + fp64_k0];
                    for (std::size_t i = 0; i < fp64_len; i += 64 / sizeof(float)) __builtin_prefetch(next + i);
                  }
                }
              }
              run_units(tile_acc(span.slice, t), t, b, st, c0, c1);
            });
          }
        }
        if (last) {
          // Slices without units (at the end) were never started.
          const std::size_t started = spans.empty() ? 0 : spans.back().slice + 1;
          k.for_each_tile([&](std::size_t t, std::size_t b, std::size_t st) {
            for (std::size_t s = started; s < slices; ++s) start_slice(s, t, b, st);
            epilogue(t, b, st);
          });
        }
      });
#if defined(BLOCKSCALE_HAVE_OPENMP)
      if (!last) {
#pragma omp barrier
      }
#endif
    }
#if defined(BLOCKSCALE_HAVE_OPENMP)
#pragma omp critical(blockscale_fast_gemm_counts)
#endif
    {
      totals.exact += counts.exact;
      totals.truncating += counts.truncating;
      totals.special += counts.special;
      totals.fp16 += counts.fp16;
    }
  }
  if (stats != nullptr) *stats = GemmPathStats{totals.exact, totals.truncating, totals.special, 0, totals.fp16};
  return true;
}

}  // namespace blockscale::emulator::detail
