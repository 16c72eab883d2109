// SPDX-License-Identifier: Apache-2.0
// The fast GEMM driver (issue 6): which schedules the fast kernels cover, the panels, the work
// split (tiles of kRows x W outputs, K in chunks so that a B strip's chunk stays in cache while
// every row block of a task passes over it), and the schedule logic around the kernels (chain,
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

  // Tasks: one B strip times up to 16 row blocks (fewer when that leaves under four tasks per
  // thread, so that small M still spreads over every thread); within a task, K advances in chunks
  // of about kChunkSteps steps (a strip chunk of ~450 KB at most stays in L2) over all its row
  // blocks.
  std::size_t task_blocks = 16;
  while (task_blocks > 1 && strips * ((rows / kRows + task_blocks - 1) / task_blocks) < 4 * static_cast<std::size_t>(threads)) {
    task_blocks /= 2;
  }
  const std::size_t task_rows = task_blocks * kRows;
  constexpr std::size_t kChunkSteps = 32;
  const std::size_t steps_per_unit = unit * steps_per_instruction;
  const std::size_t chunk_units = std::max<std::size_t>(1, kChunkSteps / steps_per_unit);
  const std::size_t row_groups = (rows + task_rows - 1) / task_rows;
  const long long tasks = static_cast<long long>(strips * row_groups);
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
#if defined(BLOCKSCALE_HAVE_OPENMP)
#pragma omp for schedule(dynamic, 1)
#endif
    for (long long t = 0; t < tasks; ++t) {
      const std::size_t strip = static_cast<std::size_t>(t) % strips;
      const std::size_t row_begin = static_cast<std::size_t>(t) / strips * task_rows;
      const std::size_t blocks = (std::min(rows, row_begin + task_rows) - row_begin) / kRows;
      const std::size_t tile = kRows * W;
      acc.assign(blocks * tile, 0);
      if (slices > 1) partial.assign(slices * blocks * tile, 0);
      // Runs units [u0, u1) of row block b onto its accumulators.
      const auto run_units = [&](std::size_t b, std::size_t u0, std::size_t u1) {
        std::uint32_t* r = acc.data() + b * tile;
        const std::size_t row0 = row_begin + b * kRows;
        if (gst) {
          const fast::GstTile gt{&gp, rule, row0, strip};
          ks.gst(gt, r, u0 * steps_per_unit, std::min(total_steps, u1 * steps_per_unit), counts);
          return;
        }
        const fast::TfdpaTile tt{&tp, rule, row0, strip, &Fallback::run, &fallback};
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
      const bool c_first = slices == 1 && schedule.c_placement == CPlacement::accumulator && !ops.c.empty();
      for (std::size_t s = 0; s < slices; ++s) {
        const std::size_t u0 = std::min(units, s * per_slice), u1 = std::min(units, u0 + per_slice);
        std::fill(acc.begin(), acc.end(), 0u);
        if (c_first) {
          for (std::size_t b = 0; b < blocks; ++b) {
            for (std::size_t i = 0; i < kRows; ++i) {
              const std::size_t row = row_begin + b * kRows + i;
              for (std::size_t j = 0; j < W && row < M; ++j) {
                const std::size_t col = strip * W + j;
                if (col < N) acc[b * tile + i * W + j] = ops.c.word(row, col);
              }
            }
          }
        }
        for (std::size_t c0 = u0; c0 < u1; c0 += chunk_units) {
          for (std::size_t b = 0; b < blocks; ++b) run_units(b, c0, std::min(u1, c0 + chunk_units));
        }
        if (slices > 1) std::copy(acc.begin(), acc.end(), partial.begin() + static_cast<std::ptrdiff_t>(s * blocks * tile));
      }
      // Epilogue: C added after the loop, or the split-K reduction (fp32 RNE adds, gemm.h).
      std::vector<std::uint32_t> slice_values(slices);
      for (std::size_t b = 0; b < blocks; ++b) {
        for (std::size_t i = 0; i < kRows; ++i) {
          const std::size_t row = row_begin + b * kRows + i;
          if (row >= M) break;
          for (std::size_t j = 0; j < W; ++j) {
            const std::size_t col = strip * W + j;
            if (col >= N) break;
            const std::size_t at = b * tile + i * W + j;
            const std::uint32_t c = ops.c.empty() ? 0u : ops.c.word(row, col);
            std::uint32_t out;
            if (slices == 1) {
              out = schedule.c_placement == CPlacement::accumulator ? acc[at] : fast::host_add(acc[at], c);
            } else {
              for (std::size_t s = 0; s < slices; ++s) slice_values[s] = partial[s * blocks * tile + at];
              if (schedule.reduction == SplitKReduction::pairwise) {
                out = fast::host_add(c, pairwise(slice_values.data(), 0, slices));
              } else {
                out = c;
                for (std::uint32_t x : slice_values) out = fast::host_add(out, x);
              }
            }
            d[row * N + col] = out;
          }
        }
      }
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
