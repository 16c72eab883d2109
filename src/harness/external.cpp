// SPDX-License-Identifier: Apache-2.0
// Fitting emulator schedules to library fp8 GEMM outputs, and reading torch._scaled_mm runs.
#include "blockscale/harness/external.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <optional>
#include <stdexcept>

#include "blockscale/emulator/arith.h"
#include "blockscale/emulator/gemm.h"
#include "blockscale/emulator/library_fp8.h"
#include "blockscale/formats/detail/enum_check.h"
#include "blockscale/harness/compare.h"
#include "run_file.h"

namespace blockscale::harness {

std::string to_string(ExternalScaling s) {
  switch (s) {
    case ExternalScaling::tensor: return "tensor";
    case ExternalScaling::rowwise: return "rowwise";
    case ExternalScaling::block_1x128: return "block_1x128";
    case ExternalScaling::block_128x128: return "block_128x128";
  }
  return "?";
}

namespace {

using emulator::CodeMatrix;
using emulator::KernelSchedule;
using emulator::Order;
using emulator::PromotionFma;
using emulator::SplitKReduction;

constexpr int kScaleBlock = 128;  // the K extent of one scale in the 1x128 / 128x128 modes

std::uint32_t bits(float f) { return std::bit_cast<std::uint32_t>(f); }

std::uint32_t to_bf16(std::uint32_t x) {
  return (x & 0x7FFFFFFFu) > 0x7F800000u ? 0x7FFFu : (x + 0x7FFFu + ((x >> 16) & 1u)) >> 16;
}

std::string fma_text(PromotionFma f) {
  switch (f) {
    case PromotionFma::scale_product: return "acc = fma(sa*sb, p, acc)";
    case PromotionFma::scale_b_first: return "acc = fma(sa, sb*p, acc)";
    case PromotionFma::mul_then_add: return "acc = acc + (sa*sb)*p";
  }
  return "?";
}

struct Fitter {
  const ExternalRun& run;
  emulator::Instruction ins = emulator::parse_instruction("sm_90a wgmma.mma_async m64n128k32 f32 e4m3 e4m3");
  CodeMatrix a, b;
  int kb = 0;  // scale blocks along K
  std::vector<ScheduleFit> fits;

  explicit Fitter(const ExternalRun& r) : run(r) {
    a = CodeMatrix(Format::float8_e4m3fn, r.m, r.k, std::span<const std::uint8_t>(r.a));
    b = CodeMatrix(Format::float8_e4m3fn, r.k, r.n, std::span<const std::uint8_t>(r.b), Order::col_major);
    kb = (r.k + kScaleBlock - 1) / kScaleBlock;
  }

  bool block_scaled() const {
    return run.scaling == ExternalScaling::block_1x128 || run.scaling == ExternalScaling::block_128x128;
  }
  float sa(int i, int q) const {
    switch (run.scaling) {
      case ExternalScaling::tensor: return run.sa[0];
      case ExternalScaling::rowwise: return run.sa[std::size_t(i)];
      default: return run.sa[std::size_t(i) * kb + q];
    }
  }
  float sb(int j, int q) const {
    switch (run.scaling) {
      case ExternalScaling::tensor: return run.sb[0];
      case ExternalScaling::rowwise: return run.sb[std::size_t(j)];
      default: return run.sb[std::size_t(j) * kb + q];
    }
  }

  // The accumulator of a schedule (f32 bits, M x N), scales of the block modes applied inside.
  // With `swapped`, the library is modelled computing D^T = B^T A^T (the column-major trick): B
  // takes A's place, so its scale comes first in the promotion FMA; the products are the same.
  std::vector<std::uint32_t> accumulate(const KernelSchedule& s, bool swapped = false) const {
    if (swapped) {
      ExternalRun t;
      t.scaling = run.scaling;
      t.m = run.n, t.n = run.m, t.k = run.k;
      t.a = run.b, t.b = run.a, t.sa = run.sb, t.sb = run.sa;
      const std::vector<std::uint32_t> dt = Fitter(t).accumulate(s);
      std::vector<std::uint32_t> d(dt.size());
      for (int i = 0; i < run.m; ++i)
        for (int j = 0; j < run.n; ++j) d[std::size_t(i) * run.n + j] = dt[std::size_t(j) * run.m + i];
      return d;
    }
    emulator::GemmOperands ops;
    ops.a = a;
    ops.b = b;
    std::vector<std::uint32_t> sa_bits, sb_bits;
    if (s.accumulation == emulator::Accumulation::promotion) {
      const int span = s.scale_block();  // K elements per promotion
      const int intervals = (run.k + span - 1) / span;
      sa_bits.resize(std::size_t(run.m) * intervals);
      sb_bits.resize(std::size_t(intervals) * run.n);
      for (int q = 0; q < intervals; ++q) {
        const int blk = q * span / kScaleBlock;
        for (int i = 0; i < run.m; ++i) sa_bits[std::size_t(i) * intervals + q] = block_scaled() ? bits(sa(i, blk)) : bits(1.0f);
        for (int j = 0; j < run.n; ++j) sb_bits[std::size_t(j) * intervals + q] = block_scaled() ? bits(sb(j, blk)) : bits(1.0f);
      }
      ops.scale_a = CodeMatrix(Format::float32, run.m, intervals, std::span<const std::uint32_t>(sa_bits));
      ops.scale_b = CodeMatrix(Format::float32, intervals, run.n, std::span<const std::uint32_t>(sb_bits), Order::col_major);
    }
    return emulator::gemm(s, ops);
  }

  // The orders of an epilogue's two scale multiplies (FMUL, RN): (sa*sb)*acc, sa*(sb*acc),
  // sb*(sa*acc).
  enum class EpilogueOrder { scale_product, b_first, a_first };

  // Tensor / row-wise scales in an epilogue, then the output conversion; records the fit.
  void finish(const std::string& name, const std::vector<std::uint32_t>& acc, EpilogueOrder epilogue) {
    std::vector<std::uint32_t> d(acc.size());
    for (int i = 0; i < run.m; ++i)
      for (int j = 0; j < run.n; ++j) {
        std::uint32_t x = acc[std::size_t(i) * run.n + j];
        if (!block_scaled()) {
          const std::uint32_t s1 = bits(sa(i, 0)), s2 = bits(sb(j, 0));
          switch (epilogue) {
            case EpilogueOrder::scale_product: x = emulator::mul_f32(emulator::mul_f32(s1, s2), x); break;
            case EpilogueOrder::b_first: x = emulator::mul_f32(s1, emulator::mul_f32(s2, x)); break;
            case EpilogueOrder::a_first: x = emulator::mul_f32(s2, emulator::mul_f32(s1, x)); break;
          }
        }
        d[std::size_t(i) * run.n + j] = run.bf16_output ? to_bf16(x) : x;
      }
    Stats st;
    compare_outputs(run.bf16_output ? OutputFormat::bf16 : OutputFormat::f32, run.d, d, 0, std::size_t(run.m),
                    std::size_t(run.n), st, 0);
    ScheduleFit f;
    f.schedule = name;
    if (!block_scaled()) {
      f.schedule += epilogue == EpilogueOrder::scale_product ? ", epilogue (sa*sb)*acc"
                    : epilogue == EpilogueOrder::b_first     ? ", epilogue sa*(sb*acc)"
                                                             : ", epilogue sb*(sa*acc)";
    }
    f.outputs = st.outputs;
    f.matches = st.outputs - st.mismatches;
    f.worst_ulps = st.worst_ulps;
    f.nan_mismatches = st.nan_mismatches;
    fits.push_back(f);
  }

  void candidate(const std::string& name, const KernelSchedule& s, bool swapped = false) {
    record(name, accumulate(s, swapped));
  }

  void record(const std::string& name, const std::vector<std::uint32_t>& acc) {
    finish(name, acc, EpilogueOrder::scale_product);
    const bool unit = !block_scaled() && std::all_of(run.sa.begin(), run.sa.end(), [](float x) { return x == 1.0f; }) &&
                      std::all_of(run.sb.begin(), run.sb.end(), [](float x) { return x == 1.0f; });
    if (!block_scaled() && !unit) {
      finish(name, acc, EpilogueOrder::b_first);
      finish(name, acc, EpilogueOrder::a_first);
    }
  }
};

// The run's operands as the library row takes them; nullopt (with `why`) when they cannot be.
std::optional<std::pair<Fp8ScaledMatrix, Fp8ScaledMatrix>> scaled_operands(const ExternalRun& run, std::string& why) {
  Fp8ScaledMatrix a, b;
  a.rows = run.m, b.rows = run.n, a.k = b.k = run.k;
  a.codes = run.a, b.codes = run.b;
  const std::int64_t kb = (run.k + kScaleBlock - 1) / kScaleBlock;
  switch (run.scaling) {
    case ExternalScaling::tensor:
      a.granularity = b.granularity = Fp8Granularity::tensor;
      a.scales = run.sa, b.scales = run.sb;
      break;
    case ExternalScaling::rowwise:
      a.granularity = b.granularity = Fp8Granularity::row;
      a.scales = run.sa, b.scales = run.sb;
      break;
    case ExternalScaling::block_1x128:
      a.granularity = b.granularity = Fp8Granularity::block_1x128;
      a.scales = run.sa, b.scales = run.sb;
      break;
    case ExternalScaling::block_128x128:
      a.granularity = Fp8Granularity::block_1x128;
      b.granularity = Fp8Granularity::block_128x128;
      a.scales = run.sa;
      // The run repeats a 128 x 128 block's scale over its rows of B; the row takes one per block.
      for (std::int64_t rb = 0; rb < b.row_blocks(); ++rb)
        for (std::int64_t q = 0; q < kb; ++q) {
          const float v = run.sb[static_cast<std::size_t>(rb * kScaleBlock * kb + q)];
          for (std::int64_t j = rb * kScaleBlock; j < std::min<std::int64_t>(run.n, (rb + 1) * kScaleBlock); ++j) {
            if (std::bit_cast<std::uint32_t>(run.sb[static_cast<std::size_t>(j * kb + q)]) != std::bit_cast<std::uint32_t>(v)) {
              why = "B's scales are not constant over 128 x 128 blocks";
              return std::nullopt;
            }
          }
          b.scales.push_back(v);
        }
      break;
  }
  return std::make_pair(std::move(a), std::move(b));
}

// The split counts a table row is tried with: the library's reported count first, then 1, 2, ...,
// 8 (a row that never splits: 1 only).
std::vector<int> split_counts_to_try(const ExternalRun& run, const emulator::LibraryFp8Schedule& row) {
  std::vector<int> counts;
  if (run.split_k >= 1 && (run.split_k == 1 || row.split_granule_k > 0)) counts.push_back(run.split_k);
  for (int S = 1; S <= (row.split_granule_k > 0 ? 8 : 1); ++S)
    if (std::find(counts.begin(), counts.end(), S) == counts.end()) counts.push_back(S);
  return counts;
}

// A run with cuBLASLt's epilogue against cublaslt_fp8_gemm, with the split count that matches most
// outputs (the reported count first, then 1 .. 8); D's codes compared as they are, and amax_d.
TableFit fit_table_epilogue(const ExternalRun& run) {
  TableFit t;
  auto ops = scaled_operands(run, t.why_not);
  if (!ops) return t;
  const ExternalEpilogue& x = *run.epilogue;
  emulator::CublasLtEpilogue e;
  e.alpha = x.alpha, e.beta = x.beta, e.d_scale = x.d_scale, e.relu = x.relu;
  e.c = x.c, e.c_format = x.c_format, e.bias = x.bias, e.bias_format = x.bias_format, e.d_format = x.d_format;
  const emulator::LibraryFp8Schedule* row = nullptr;
  try {
    row = &emulator::library_fp8_schedule(emulator::Fp8Library::cublaslt, run.fast_accum, ops->first.granularity,
                                          ops->second.granularity);
  } catch (const std::invalid_argument& err) {
    t.why_not = err.what();
    return t;
  }
  t.row = row->name() + " with its epilogue";
  for (int S : split_counts_to_try(run, *row)) {
    emulator::CublasLtFp8Result r;
    try {
      r = emulator::cublaslt_fp8_gemm(*row, ops->first, ops->second, 0, run.m, S, e);
    } catch (const std::invalid_argument& err) {
      t = TableFit{};
      t.why_not = row->name() + " cannot run this call: " + err.what();
      return t;
    }
    std::uint64_t matches = 0;
    for (std::size_t i = 0; i < r.d.size() && i < run.d.size(); ++i) matches += r.d[i] == run.d[i];
    std::optional<bool> amax_equal;
    if (x.amax_d) amax_equal = std::bit_cast<std::uint32_t>(*x.amax_d) == std::bit_cast<std::uint32_t>(r.amax_d);
    // More matching outputs, or as many with amax_d now equal (an e4m3 D can hide the split count
    // that amax_d, taken before the D scale, still shows).
    if (t.outputs == 0 || matches > t.matches ||
        (matches == t.matches && amax_equal.value_or(false) && !t.amax_d_equal.value_or(true))) {
      t.split_k = S;
      t.matches = matches;
      t.outputs = run.d.size();
      t.amax_d_equal = amax_equal;
    }
    if (t.bit_exact()) break;
  }
  return t;
}

TableFit fit_table(const ExternalRun& run) {
  if (run.epilogue) return fit_table_epilogue(run);
  TableFit t;
  const bool cublaslt = run.library.rfind("cuBLASLt", 0) == 0;
  if (!cublaslt && run.library.find("scaled_mm") == std::string::npos) {
    t.why_not = "no library row: the library is neither cuBLASLt nor torch._scaled_mm";
    return t;
  }
  auto ops = scaled_operands(run, t.why_not);
  if (!ops) return t;
  const emulator::LibraryFp8Schedule* row = nullptr;
  try {
    row = &emulator::library_fp8_schedule(cublaslt ? emulator::Fp8Library::cublaslt : emulator::Fp8Library::torch_scaled_mm,
                                          run.fast_accum, ops->first.granularity, ops->second.granularity);
  } catch (const std::invalid_argument& e) {
    t.why_not = e.what();
    return t;
  }
  t.row = row->name();
  for (int S : split_counts_to_try(run, *row)) {
    std::vector<std::uint32_t> d;
    try {
      d = emulator::library_fp8_gemm(*row, ops->first, ops->second, 0, run.m, S);
    } catch (const std::invalid_argument& e) {
      // Operands the row refuses (a scale that is not a positive finite fp32 value): the call is
      // outside the table, and the schedule fits still stand.
      t = TableFit{};
      t.why_not = row->name() + " cannot run this call: " + e.what();
      return t;
    }
    // A bf16 D is taken to be the row's f32 D rounded to nearest even (the hypothesis the bf16 runs
    // test: the epilogue converts once, after the split-K reduction).
    if (run.bf16_output)
      for (std::uint32_t& x : d) x = to_bf16(x);
    Stats st;
    compare_outputs(run.bf16_output ? OutputFormat::bf16 : OutputFormat::f32, run.d, d, 0, std::size_t(run.m),
                    std::size_t(run.n), st, 0);
    if (t.outputs == 0 || st.outputs - st.mismatches > t.matches) {
      t.split_k = S;
      t.matches = st.outputs - st.mismatches;
      t.outputs = st.outputs;
    }
    if (t.matches == t.outputs) break;
  }
  return t;
}

}  // namespace

ExternalStudy fit_schedules(ExternalRun run) {
  blockscale::detail::require_enumerator(run.scaling, ExternalScaling::block_128x128, "ExternalScaling", "fit_schedules: scaling");
  ExternalStudy study;
  if (!run.error.empty() || run.d.empty()) {
    study.run = std::move(run);
    return study;
  }
  if (run.epilogue) {  // the schedules model the GEMM without an epilogue: the table row alone
    study.table = fit_table(run);
    study.run = std::move(run);
    study.run.a.clear(), study.run.b.clear(), study.run.d.clear();
    study.run.epilogue->c.clear(), study.run.epilogue->bias.clear();
    return study;
  }
  Fitter f(run);
  struct Tried {
    std::string name;
    KernelSchedule schedule;
    bool swapped;
  };
  std::vector<Tried> tried;
  auto add = [&](const std::string& name, const KernelSchedule& s, bool swapped = false) {
    f.candidate(name, s, swapped);
    tried.push_back({name, s, swapped});
  };
  if (f.block_scaled()) {
    // The scales change every 128 elements, so a promotion happens at least that often.
    for (int P : {4, 2, 1})
      for (PromotionFma fma : {PromotionFma::scale_product, PromotionFma::scale_b_first, PromotionFma::mul_then_add}) {
        add("promotion every " + std::to_string(32 * P) + " (P=" + std::to_string(P) + "), " + fma_text(fma),
            KernelSchedule::hopper_promotion(f.ins, P, fma));
      }
    // The same with the operands' roles exchanged (sb before sa where the order matters).
    for (PromotionFma fma : {PromotionFma::scale_b_first, PromotionFma::mul_then_add}) {
      add("promotion every 128 (P=4), operands swapped: " + fma_text(fma) + " with sa and sb exchanged",
          KernelSchedule::hopper_promotion(f.ins, 4, fma), true);
    }
  } else {
    add("one wgmma chain over all of K (no promotion)", KernelSchedule::chain(f.ins));
    for (int P : {1, 2, 4, 8, 16, 32}) {
      if (32 * P > run.k) break;
      add("promotion every " + std::to_string(32 * P) + " (P=" + std::to_string(P) + ", FADD)",
          KernelSchedule::hopper_promotion(f.ins, P));
    }
  }
  // Split-K: slices accumulated apart, then reduced.
  std::vector<std::size_t> order(f.fits.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) { return f.fits[x].matches > f.fits[y].matches; });
  if (!order.empty() && f.fits[order[0]].matches != f.fits[order[0]].outputs) {
    // The split is tried on every candidate that promotes per 128-element scale block or never
    // (what the libraries were seen to do), and on the two best unsplit ones: a split changes the
    // sums enough that the right schedule need not rank high unsplit.
    std::vector<Tried> best;
    auto take = [&best](const Tried& t) {
      if (std::none_of(best.begin(), best.end(), [&t](const Tried& b) { return b.name == t.name; })) best.push_back(t);
    };
    for (const Tried& t : tried) {
      if (t.schedule.accumulation == emulator::Accumulation::chain || t.schedule.unit_k() == kScaleBlock) take(t);
    }
    for (std::size_t i = 0; i < std::min<std::size_t>(2, order.size()); ++i) {
      // Fits and tried candidates line up one to one, except the other epilogue orders of a
      // non-unit scaling: find the candidate by its name prefix.
      for (const Tried& t : tried) {
        if (f.fits[order[i]].schedule.rfind(t.name, 0) == 0) take(t);
      }
    }
    std::vector<int> counts = {2, 3, 4, 5, 6, 8};
    if (run.split_k > 1 && std::find(counts.begin(), counts.end(), run.split_k) == counts.end()) counts.push_back(run.split_k);
    for (const auto& [name, s, swapped] : best)
      for (int S : counts)
        for (SplitKReduction red : {SplitKReduction::sequential, SplitKReduction::pairwise})
          // Cut at every accumulation unit (a k32 step of a chain, a promotion interval), or only at
          // multiples of a K tile of 128 .. 1024 elements (CUTLASS's k-tiles per split).
          for (int granule : {0, 128, 256, 512, 1024}) {
            if (granule != 0 && (granule <= s.unit_k() || granule % s.unit_k() != 0)) continue;
            const std::string where =
                granule == 0 ? (s.accumulation == emulator::Accumulation::chain ? "k32 steps" : "promotion intervals")
                             : std::to_string(granule) + "-element K tiles";
            f.candidate(name + ", split-K " + std::to_string(S) + " at " + where + "," +
                            (red == SplitKReduction::sequential ? " sequential" : " pairwise"),
                        s.with_split_k(S, red, granule), swapped);
          }
  }
  std::stable_sort(f.fits.begin(), f.fits.end(), [](const ScheduleFit& x, const ScheduleFit& y) {
    return x.matches != y.matches ? x.matches > y.matches : x.worst_ulps < y.worst_ulps;
  });
  study.fits = std::move(f.fits);
  study.table = fit_table(run);
  study.run = std::move(run);
  study.run.a.clear();
  study.run.b.clear();
  study.run.d.clear();
  return study;
}

std::vector<std::filesystem::path> files_with_extension(const std::filesystem::path& dir, const std::string& extension) {
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.path().extension() == extension) files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

ExternalRun read_scaled_mm_file(const std::filesystem::path& path) {
  detail::RunFile f(path, "blockscale-scaled-mm");
  ExternalRun r;
  r.library = f.get("library");
  r.config = f.text("config");
  if (f.has("error")) {
    r.error = f.text("error");
    if (f.body_size() != 0) throw std::invalid_argument(f.file() + ": a refused call (error=) carries no arrays");
    return r;
  }
  // The sizes: 1 .. 2^20 each, so that the byte counts below cannot overflow.
  r.m = static_cast<int>(f.count("m", 1 << 20)), r.n = static_cast<int>(f.count("n", 1 << 20)),
  r.k = static_cast<int>(f.count("k", 1 << 20));
  const std::vector<std::string> scalings = {to_string(ExternalScaling::tensor), to_string(ExternalScaling::rowwise),
                                             to_string(ExternalScaling::block_1x128), to_string(ExternalScaling::block_128x128)};
  r.scaling = static_cast<ExternalScaling>(f.choice("scaling", scalings));
  r.fast_accum = f.choice("fast_accum", {"0", "1"}) == 1;
  r.bf16_output = f.choice("out", {"f32", "bf16"}) == 1;
  // The logical scales of the scaling mode (ExternalRun::sa): one, one per row (column), or one per
  // row (column) and 128-element K block.
  const std::uint64_t m = static_cast<std::uint64_t>(r.m), n = static_cast<std::uint64_t>(r.n), k = static_cast<std::uint64_t>(r.k);
  const std::uint64_t kb = (k + kScaleBlock - 1) / kScaleBlock;
  const std::uint64_t want_sa = r.scaling == ExternalScaling::tensor ? 1 : r.scaling == ExternalScaling::rowwise ? m : m * kb;
  const std::uint64_t want_sb = r.scaling == ExternalScaling::tensor ? 1 : r.scaling == ExternalScaling::rowwise ? n : n * kb;
  const std::uint64_t nsa = f.count("sa_count", std::uint64_t{1} << 40), nsb = f.count("sb_count", std::uint64_t{1} << 40);
  if (nsa != want_sa || nsb != want_sb) {
    throw std::invalid_argument(f.file() + ": sa_count=" + std::to_string(nsa) + " and sb_count=" + std::to_string(nsb) + ": " +
                                to_string(r.scaling) + " scaling of " + std::to_string(m) + " x " + std::to_string(n) + " x " +
                                std::to_string(k) + " needs " + std::to_string(want_sa) + " and " + std::to_string(want_sb));
  }
  const std::uint64_t d_bytes = r.bf16_output ? 2 : 4;
  f.expect_body(m * k + n * k + 4 * (nsa + nsb) + d_bytes * m * n,
                "A (" + std::to_string(m) + " x " + std::to_string(k) + " e4m3), B^T (" + std::to_string(n) + " x " +
                    std::to_string(k) + " e4m3), " + std::to_string(nsa) + " + " + std::to_string(nsb) + " f32 scales and D (" +
                    std::to_string(m) + " x " + std::to_string(n) + (r.bf16_output ? " bf16)" : " f32)"));
  const auto bytes = [](const std::vector<std::uint32_t>& codes) { return std::vector<std::uint8_t>(codes.begin(), codes.end()); };
  const auto floats = [](const std::vector<std::uint32_t>& words) {
    std::vector<float> v(words.size());
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = std::bit_cast<float>(words[i]);
    return v;
  };
  r.a = bytes(f.codes(m * k, 1));
  r.b = bytes(f.codes(n * k, 1));
  r.sa = floats(f.codes(nsa, 4));
  r.sb = floats(f.codes(nsb, 4));
  r.d = f.codes(m * n, d_bytes);
  return r;
}

std::vector<ExternalRun> read_scaled_mm_runs(const std::filesystem::path& dir) {
  std::vector<ExternalRun> runs;
  for (const auto& path : files_with_extension(dir, ".scaled_mm")) runs.push_back(read_scaled_mm_file(path));
  return runs;
}

}  // namespace blockscale::harness
