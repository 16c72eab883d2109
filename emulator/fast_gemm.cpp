// SPDX-License-Identifier: Apache-2.0
// The fast GEMM driver (issue 6): which schedules the fast kernels cover, the panels, the work
// split (tiles of kRows x W outputs in tasks of row blocks times strip groups, K in chunks, see
// Blocking), and the schedule logic around the kernels (chain,
// Hopper promotion, split-K, C in the epilogue), in the same order as gemm.cpp's reference loop.
// Each output is computed from its own row and column in a fixed order, so the bits do not depend
// on the thread count or on the tiling.
#include "fast_gemm.h"

#include <algorithm>
#include <cstring>

#include "engine.h"
#include "fast_kernels.h"
#include "fast_panels.h"

#if defined(BLOCKSCALE_HAVE_OPENMP)
#include <omp.h>
#endif

namespace blockscale::emulator::detail {

namespace {

using fast::kRows;

bool narrow_operand(Format f) {
  return f == Format::float8_e4m3fn || f == Format::float8_e5m2 || f == Format::float6_e2m3fn ||
         f == Format::float6_e3m2fn || f == Format::float4_e2m1fn;
}

// The schedules the fast kernels compute; the limits keep every intermediate exact (fast_kernels.h).
bool covered(const KernelSchedule& s) {
  const Instruction& ins = s.instruction;
  const FdpaParams& p = ins.params();
  if (p.rounding != OutputRounding::rz_fp32 && p.rounding != OutputRounding::rz_e8m13) return false;
  // e(C) >= -126 for any nonzero fp32 C: with e_zero <= -126 the zero floor is max(e(c), e_zero).
  if (p.e_zero > -126) return false;
  const Format fa = *format_of(ins.a), fb = *format_of(ins.b);
  if (p.algorithm == Algorithm::t_fdpa || p.algorithm == Algorithm::st_fdpa) {
    // int32 sums of 16 terms below 2^(F+2); float products exact with <= 8 significant bits.
    if (!narrow_operand(fa) || !narrow_operand(fb) || p.F > 25 || p.F < 1 || p.L > 32) return false;
    if (ins.k % p.L != 0) return false;
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

const fast::KernelSet& kernels(GemmPath path) {
  switch (path) {
    case GemmPath::avx512: return fast::avx512_kernels();
    case GemmPath::avx2: return fast::avx2_kernels();
    default: return fast::portable_kernels();
  }
}

// The reference engine for one step of one output (lanes with an Inf operand).
struct Fallback {
  const FdpaParams* p;
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
    return run_instruction(*f.p, Format::float32, f.pa->vec(row), f.pb->vec(col), step * f.L, f.L,
                           f.spa ? &sa : nullptr, f.spb ? &sb : nullptr, c);
  }
};

// The panels of the calling thread, kept between calls: a sequence of GEMMs (a numerics sweep, a
// benchmark) then reuses their storage instead of faulting in tens of MB of fresh pages per call,
// which costs about as much as decoding into them (docs/performance.md). When the two kinds
// together hold more than kKeptPanelBytes, both are released as the call ends.
struct PanelCache {
  static constexpr std::size_t kKeptPanelBytes = std::size_t{256} << 20;
  fast::TfdpaPanels tfdpa;
  fast::GstPanels gst;

  PanelCache() = default;
  PanelCache(const PanelCache&) = delete;
  PanelCache& operator=(const PanelCache&) = delete;
  // Runs when the GEMM call that used the panels ends (also by an exception).
  struct Trim {
    PanelCache& cache;
    ~Trim() {
      if (fast::storage_bytes(cache.tfdpa) + fast::storage_bytes(cache.gst) > kKeptPanelBytes) {
        cache.tfdpa = {};
        cache.gst = {};
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
// threads take tasks as they finish (OpenMP dynamic schedule), and several each even out threads
// that run at different speeds on a shared host.
struct Blocking {
  std::size_t group_columns, chunk_k, max_blocks, tasks_per_thread, one_thread_tasks;
};
// T-/ST-FDPA: the B chunk of a group is 128 columns x 256 k x 14 bytes (the AVX-512 kernel's fp32,
// fp64 and bounds panels), 460 KB, and with 128 row blocks the task's accumulators and carried
// bounds (fast::CarriedBounds) take about 420 KB more: together they fit a 1 MB L2. Groups of one
// strip, 16 row blocks and chunks of 1024 k (the earlier split) read A once per strip: at
// 256 x 256 x 8192, where the panels (62 MB) outgrow the L3 cache, the one-thread MXFP8 runs then
// took 9-15% longer on the Zen 5 development VM (docs/performance.md). One thread takes the
// largest tasks; with 16 threads on an H200 host, 2 tasks per thread ran the 1024^3 rows 15-20%
// slower than 4. GST-FDPA keeps the earlier split: its panels are a quarter of the size, and the
// grouped split ran no faster for it (Zen 5, one thread: NVFP4 rows within 3%, random bits 8%
// slower).
constexpr Blocking kTfdpaBlocking{128, 256, 128, 4, 1};
constexpr Blocking kGstBlocking{16, 2048, 16, 4, 4};

}  // namespace

bool fast_gemm(const KernelSchedule& schedule, const GemmOperands& ops, GemmPath path, int threads,
               GemmPathStats* stats, std::vector<std::uint32_t>& d) {
  if (!covered(schedule)) return false;
  const Instruction& ins = schedule.instruction;
  const FdpaParams& p = ins.params();
  const fast::KernelSet& ks = kernels(path);
  const bool gst = p.algorithm == Algorithm::gst_fdpa;
  const std::size_t M = ops.a.rows(), K = ops.a.cols(), N = ops.b.cols();
  const auto kstep = static_cast<std::size_t>(ins.k);
  const std::size_t instructions = (K + kstep - 1) / kstep;
  const std::size_t padded = instructions * kstep;
  const auto L = static_cast<std::size_t>(p.L);
  const std::size_t steps_per_instruction = kstep / L;
  const std::size_t total_steps = instructions * steps_per_instruction;
  const bool promotion = schedule.accumulation == Accumulation::promotion;
  const std::size_t unit = promotion ? static_cast<std::size_t>(schedule.promotion_interval) : 1;  // instructions
  const std::size_t units = (instructions + unit - 1) / unit;
  const std::size_t slices = static_cast<std::size_t>(schedule.split_k);
  const std::size_t per_slice = schedule.slice_units(units);
  const std::size_t W = gst ? fast::kGstWidth : fast::kTfdpaWidth;
  const fast::OutputRule rule{p.F, p.e_zero, p.rounding == OutputRounding::rz_e8m13,
                              p.underflow_zero == UnderflowZero::positive};

  PanelCache& cache = panel_cache();
  const PanelCache::Trim trim{cache};
  fast::TfdpaPanels& tp = cache.tfdpa;
  fast::GstPanels& gp = cache.gst;
  std::size_t rows = 0, strips = 0;
  if (gst) {
    fast::decode_gst(ops, p.L, padded, ins.block(), threads, gp);
    rows = gp.rows;
    strips = gp.strips;
  } else {
    const int fp16_F = p.F <= ks.fp16_max_F && p.L % 2 == 0 ? p.F : 0;
    fast::decode_tfdpa(ops, p.L, padded, p.algorithm == Algorithm::st_fdpa, ks.tfdpa_bounds, fp16_F, threads, tp,
                       ks.decode);
    rows = tp.rows;
    strips = tp.strips;
  }
  // Inf operands take the reference engine for their steps: it needs its own panels.
  Panel ref_a, ref_b;
  ScalePanel ref_sa, ref_sb;
  Fallback fallback{&p, L, M, N, &ref_a, &ref_b, nullptr, nullptr};
  if (!gst && tp.any_inf) {
    ref_a.decode(ops.a, true, padded, *format_of(ins.a), 0);
    ref_b.decode(ops.b, false, padded, *format_of(ins.b), 0);
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
  const std::size_t task_rows = task_blocks * kRows;
  const std::size_t steps_per_unit = unit * steps_per_instruction;
  const std::size_t chunk_units = std::max<std::size_t>(1, split.chunk_k / (steps_per_unit * L));
  const std::size_t row_groups = (rows + task_rows - 1) / task_rows;
  const long long tasks = static_cast<long long>(strip_groups * row_groups);
  d.assign(M * N, 0);
  fast::StepCounts totals;

#if defined(BLOCKSCALE_HAVE_OPENMP)
#pragma omp parallel num_threads(threads)
#else
  (void)threads;
#endif
  {
    const fast::IeeeEnvironment ieee;
    fast::StepCounts counts;
    std::vector<std::uint32_t> acc, partial, part(kRows * W), sa(kRows), sb(W);
    std::vector<fast::CarriedBounds> carry;  // per tile of a task (T-/ST-FDPA)
#if defined(BLOCKSCALE_HAVE_OPENMP)
#pragma omp for schedule(dynamic, 1)
#endif
    for (long long t = 0; t < tasks; ++t) {
      const std::size_t strip_begin = static_cast<std::size_t>(t) % strip_groups * group_strips;
      const std::size_t task_strips = std::min(strips, strip_begin + group_strips) - strip_begin;
      const std::size_t row_begin = static_cast<std::size_t>(t) / strip_groups * task_rows;
      const std::size_t blocks = (std::min(rows, row_begin + task_rows) - row_begin) / kRows;
      const std::size_t tile = kRows * W;
      const std::size_t tiles = task_strips * blocks;  // tile (g, b) at g * blocks + b
      acc.assign(tiles * tile, 0);
      if (!gst) carry.assign(tiles, {});
      if (slices > 1) partial.assign(slices * tiles * tile, 0);
      // Runs units [u0, u1) of row block b and strip strip_begin + g onto its accumulators.
      const auto run_units = [&](std::size_t g, std::size_t b, std::size_t u0, std::size_t u1) {
        std::uint32_t* r = acc.data() + (g * blocks + b) * tile;
        const std::size_t row0 = row_begin + b * kRows, strip = strip_begin + g;
        if (gst) {
          const fast::GstTile gt{&gp, rule, row0, strip};
          ks.gst(gt, r, u0 * steps_per_unit, std::min(total_steps, u1 * steps_per_unit), counts);
          return;
        }
        const fast::TfdpaTile tt{&tp, rule, row0, strip, &Fallback::run, &fallback, &carry[g * blocks + b]};
        if (!promotion) {
          ks.tfdpa(tt, r, u0 * steps_per_unit, std::min(total_steps, u1 * steps_per_unit), counts);
          return;
        }
        for (std::size_t u = u0; u < u1; ++u) {
          // An all-NaN accumulator stays the canonical NaN through every promotion (fast::all_nan).
          if (fast::nan_absorbed(r, tile, std::min(total_steps, u1 * steps_per_unit) - u * steps_per_unit, counts)) break;
          // A fresh accumulator for P instructions (scale-d = 0 first), then the FFMA promotion.
          std::fill(part.begin(), part.end(), 0u);
          ks.tfdpa(tt, part.data(), u * steps_per_unit, std::min(total_steps, (u + 1) * steps_per_unit), counts);
          for (std::size_t i = 0; i < kRows; ++i) sa[i] = row0 + i < M ? ops.scale_a.word(row0 + i, u) : 0u;
          for (std::size_t j = 0; j < W; ++j) sb[j] = strip * W + j < N ? ops.scale_b.word(u, strip * W + j) : 0u;
          ks.promote(schedule.promotion_fma, sa.data(), sb.data(), part.data(), r);
        }
      };
      // Calls f(at, row, col, n) for each tile row of the task within M x N: its n outputs are
      // (row, col + j) at accumulator index at + j.
      const auto for_tile_rows = [&](auto&& f) {
        for (std::size_t g = 0; g < task_strips; ++g) {
          const std::size_t col = (strip_begin + g) * W;
          const std::size_t n = std::min(W, N - std::min(N, col));
          for (std::size_t b = 0; b < blocks; ++b) {
            for (std::size_t i = 0; i < kRows && row_begin + b * kRows + i < M; ++i) {
              f((g * blocks + b) * tile + i * W, row_begin + b * kRows + i, col, n);
            }
          }
        }
      };
      const bool c_first = slices == 1 && schedule.c_placement == CPlacement::accumulator && !ops.c.empty();
      for (std::size_t s = 0; s < slices; ++s) {
        const std::size_t u0 = std::min(units, s * per_slice), u1 = std::min(units, u0 + per_slice);
        std::fill(acc.begin(), acc.end(), 0u);
        if (c_first) {
          for_tile_rows([&](std::size_t at, std::size_t row, std::size_t col, std::size_t n) {
            for (std::size_t j = 0; j < n; ++j) acc[at + j] = ops.c.word(row, col + j);
          });
        }
        for (std::size_t c0 = u0; c0 < u1; c0 += chunk_units) {
          for (std::size_t b = 0; b < blocks; ++b) {
            for (std::size_t g = 0; g < task_strips; ++g) run_units(g, b, c0, std::min(u1, c0 + chunk_units));
          }
        }
        if (slices > 1) std::copy(acc.begin(), acc.end(), partial.begin() + static_cast<std::ptrdiff_t>(s * tiles * tile));
      }
      // Epilogue: C added after the loop, or the split-K reduction (fp32 RNE adds, gemm.h).
      std::vector<std::uint32_t> slice_values(slices);
      for_tile_rows([&](std::size_t at, std::size_t row, std::size_t col, std::size_t n) {
        std::uint32_t* out = d.data() + row * N + col;
        if (slices == 1 && schedule.c_placement == CPlacement::accumulator) {
          std::copy(acc.begin() + static_cast<std::ptrdiff_t>(at), acc.begin() + static_cast<std::ptrdiff_t>(at + n), out);
          return;
        }
        for (std::size_t j = 0; j < n; ++j) {
          const std::uint32_t c = ops.c.empty() ? 0u : ops.c.word(row, col + j);
          if (slices == 1) {
            out[j] = fast::host_add(acc[at + j], c);
          } else {
            for (std::size_t s = 0; s < slices; ++s) slice_values[s] = partial[s * tiles * tile + at + j];
            if (schedule.reduction == SplitKReduction::pairwise) {
              out[j] = fast::host_add(c, pairwise(slice_values.data(), 0, slices));
            } else {
              out[j] = c;
              for (std::uint32_t x : slice_values) out[j] = fast::host_add(out[j], x);
            }
          }
        }
      });
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
