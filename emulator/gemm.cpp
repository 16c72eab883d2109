// SPDX-License-Identifier: Apache-2.0
#include "blockscale/emulator/gemm.h"

#include <algorithm>
#include <bit>
#include <limits>
#include <optional>
#include <cstdlib>
#include <span>
#include <stdexcept>
#include <string_view>
#include <tuple>

#include "blockscale/emulator/arith.h"
#include "blockscale/formats/detail/enum_check.h"
#include "blockscale/formats/detail/ieee_mode.h"
#include "engine.h"
#include "fast_gemm.h"
#include "fast_kernels.h"

#if defined(BLOCKSCALE_HAVE_OPENMP)
#include <omp.h>
#endif

namespace blockscale::emulator {

namespace {

[[noreturn]] void fail(const std::string& m) { throw std::invalid_argument(m); }

std::string dims(const CodeMatrix& m) { return std::to_string(m.rows()) + " x " + std::to_string(m.cols()); }

std::string_view to_string(PromotionFma f) {
  switch (f) {
    case PromotionFma::scale_product: return "fma(sa*sb, p, acc)";
    case PromotionFma::scale_b_first: return "fma(sa, sb*p, acc)";
    case PromotionFma::mul_then_add: return "acc + (sa*sb)*p";
  }
  return "?";
}

std::uint32_t acc_add(Format acc, std::uint32_t x, std::uint32_t y) {
  return acc == Format::float16 ? add_f16(static_cast<std::uint16_t>(x), static_cast<std::uint16_t>(y)) : add_f32(x, y);
}

std::optional<GemmPath> parse_path(std::string_view v) {
  for (GemmPath p : {GemmPath::automatic, GemmPath::reference, GemmPath::portable, GemmPath::avx2, GemmPath::avx512}) {
    if (v == to_string(p)) return p;
  }
  return std::nullopt;
}

}  // namespace

bool gemm_path_available(GemmPath path) {
  switch (path) {
    case GemmPath::avx2: return fast::cpu_has_avx2();
    case GemmPath::avx512: return fast::cpu_has_avx512();
    case GemmPath::automatic:
    case GemmPath::reference:
    case GemmPath::portable: return true;
  }
  return false;  // a value outside the enum names no path
}

std::string_view to_string(GemmPath path) {
  switch (path) {
    case GemmPath::automatic: return "auto";
    case GemmPath::reference: return "reference";
    case GemmPath::portable: return "portable";
    case GemmPath::avx2: return "avx2";
    case GemmPath::avx512: return "avx512";
  }
  return "?";
}

namespace detail {

// GemmPath::automatic: BLOCKSCALE_EMULATOR_PATH when set (read once), else the widest available.
GemmPath resolve_path(GemmPath requested) {
  if (static_cast<unsigned>(requested) > static_cast<unsigned>(GemmPath::avx512)) {
    fail("GemmOptions::path is not one of automatic, reference, portable, avx2, avx512");
  }
  if (requested == GemmPath::automatic) {
    // The initialiser only reads and parses; the refusal is thrown after it, on every call. A
    // function-local static whose initialiser throws is retried by the next caller, and GCC 12's
    // ThreadSanitizer runtime hangs when concurrent first callers do that.
    struct FromEnv {
      std::optional<GemmPath> path;  // nullopt: a value that names no path
      std::string value;
    };
    static const FromEnv from_env = [] {
      const char* env = std::getenv("BLOCKSCALE_EMULATOR_PATH");
      const std::string value = env != nullptr ? env : "";
      return FromEnv{value.empty() ? std::optional<GemmPath>(GemmPath::automatic) : parse_path(value), value};
    }();
    if (!from_env.path) {
      fail("BLOCKSCALE_EMULATOR_PATH must be auto, reference, portable, avx2 or avx512, got '" + from_env.value + "'");
    }
    requested = *from_env.path;
  }
  if (requested == GemmPath::automatic) {
    if (gemm_path_available(GemmPath::avx512)) return GemmPath::avx512;
    if (gemm_path_available(GemmPath::avx2)) return GemmPath::avx2;
    return GemmPath::portable;
  }
  if (!gemm_path_available(requested)) {
    fail("the " + std::string(to_string(requested)) + " GEMM path was requested, but this CPU lacks " +
         (requested == GemmPath::avx512 ? "AVX-512 F/BW/DQ/VL" : "AVX2 + FMA"));
  }
  return requested;
}

int resolve_threads(int requested) {
  // The bits never depend on the count, but OpenMP would try to start every thread asked for
  // (2^30 made libgomp exit the process for want of memory).
  if (requested < 0 || requested > kMaxThreads) {
    throw std::invalid_argument("GemmOptions::threads = " + std::to_string(requested) + ": 1 to " +
                                std::to_string(kMaxThreads) + ", or 0 for the OpenMP default");
  }
#if defined(BLOCKSCALE_HAVE_OPENMP)
  return requested > 0 ? requested : omp_get_max_threads();
#else
  (void)requested;
  return 1;
#endif
}

void check_tensor_pair(const std::string& who, const BlockScaledTensor& a, const BlockScaledTensor& b,
                       const CodeMatrix& c) {
  const BlockScaledDesc& da = a.desc();
  const BlockScaledDesc& db = b.desc();
  if (da.k() != db.k()) fail(who + ": A has K=" + std::to_string(da.k()) + " but B has K=" + std::to_string(db.k()));
  if (da.batch() != db.batch()) {
    fail(who + ": A has batch " + std::to_string(da.batch()) + " but B has batch " + std::to_string(db.batch()));
  }
  const auto M = static_cast<std::size_t>(da.rows()), N = static_cast<std::size_t>(db.rows());
  if (!c.empty() && c.format() != Format::float32) fail(who + ": C must hold f32 codes");
  if (!c.empty() && (c.rows() != M || c.cols() != N)) {
    fail(who + ": C must be " + std::to_string(M) + " x " + std::to_string(N) + ", got " + dims(c));
  }
}

std::span<const std::uint8_t> element_codes_of(const BlockScaledTensor& t, std::vector<std::uint8_t>& unpacked) {
  if (t.desc().packing == Packing::byte_per_element) return t.elements();
  unpacked = t.element_codes();
  return unpacked;
}

}  // namespace detail

KernelSchedule KernelSchedule::chain(const Instruction& ins, CPlacement c) {
  KernelSchedule s;
  s.instruction = ins;
  s.c_placement = c;
  s.validate();
  return s;
}

KernelSchedule KernelSchedule::hopper_promotion(const Instruction& ins, int interval, PromotionFma fma) {
  KernelSchedule s;
  s.instruction = ins;
  s.accumulation = Accumulation::promotion;
  s.promotion_interval = interval;
  s.promotion_fma = fma;
  s.validate();
  return s;
}

KernelSchedule KernelSchedule::with_split_k(int slices, SplitKReduction order, int granule_k) const {
  KernelSchedule s = *this;
  s.split_k = slices;
  s.reduction = order;
  s.split_granule_k = granule_k;
  s.validate();
  return s;
}

int KernelSchedule::unit_k() const {
  return instruction.k * (accumulation == Accumulation::promotion ? promotion_interval : 1);
}

std::size_t KernelSchedule::slice_units(std::size_t units) const {
  const auto granule = static_cast<std::size_t>(split_granule_k == 0 ? 1 : split_granule_k / unit_k());
  const auto slices = static_cast<std::size_t>(split_k);
  return (units + slices * granule - 1) / (slices * granule) * granule;
}

int KernelSchedule::scale_block() const {
  if (instruction.row != nullptr && instruction.block_scaled()) return instruction.block();
  if (accumulation == Accumulation::promotion) return promotion_interval * instruction.k;
  return 0;
}

void KernelSchedule::validate() const {
  if (instruction.row == nullptr) fail("KernelSchedule: no instruction");
  emulator::validate(instruction);
  const std::string who = instruction.name();
  blockscale::detail::require_enumerator(accumulation, Accumulation::promotion, "Accumulation", "KernelSchedule::accumulation");
  blockscale::detail::require_enumerator(promotion_fma, PromotionFma::mul_then_add, "PromotionFma", "KernelSchedule::promotion_fma");
  blockscale::detail::require_enumerator(c_placement, CPlacement::epilogue, "CPlacement", "KernelSchedule::c_placement");
  blockscale::detail::require_enumerator(reduction, SplitKReduction::pairwise, "SplitKReduction", "KernelSchedule::reduction");
  if (instruction.params().algorithm == Algorithm::fma_chain) fail(who + ": f64 GEMMs are not modelled here: use mma_f64");
  if (instruction.sparse) fail(who + ": sparse instructions are modelled one instruction at a time (mma_sparse), not in GEMM schedules");
  if (accumulation == Accumulation::promotion) {
    if (instruction.block_scaled()) fail("promotion applies fp32 scales itself: it needs a non-block-scaled instruction, got " + who);
    if (instruction.d != Type::f32) fail("promotion accumulates in fp32: it needs an f32-output instruction, got " + who);
    if (promotion_interval < 1) fail("promotion interval must be >= 1 instruction, got " + std::to_string(promotion_interval));
    // The schedule's unit of K (P instructions) must be an int: P = 2^26 of a k32 instruction is 2^31.
    if (promotion_interval > std::numeric_limits<int>::max() / instruction.k)
      fail("promotion interval " + std::to_string(promotion_interval) + " x K=" + std::to_string(instruction.k) +
           " of " + who + " exceeds " + std::to_string(std::numeric_limits<int>::max()) + " K elements");
  }
  if (split_k < 1) fail("split_k must be >= 1, got " + std::to_string(split_k));
  // Each slice has a buffer of its own: 2^24 slices of a 4 x 4 x 1024 GEMM took 8 GB. The libraries'
  // heuristics split into at most 25 (docs/conformance.md, "Split-K").
  if (split_k > kMaxSplitK) {
    fail("split_k must be at most " + std::to_string(kMaxSplitK) + ", got " + std::to_string(split_k));
  }
  if (split_k > 1 && instruction.d != Type::f32) fail("split-K reduces in fp32: it needs an f32-output instruction, got " + who);
  if (split_granule_k < 0 || (split_granule_k > 0 && split_granule_k % unit_k() != 0)) {
    fail("split-K granule must be 0 or a multiple of the schedule's unit of " + std::to_string(unit_k()) +
         " K elements, got " + std::to_string(split_granule_k));
  }
}

std::string KernelSchedule::name() const {
  std::string s;
  if (accumulation == Accumulation::chain) {
    s = "chain";
  } else {
    s = "promotion(P=" + std::to_string(promotion_interval) + ", " + std::string(to_string(promotion_fma)) + ")";
  }
  if (c_placement == CPlacement::epilogue) s += " C in epilogue";
  if (split_k > 1) {
    s += " split-K " + std::to_string(split_k);
    if (split_granule_k > 0) s += " at " + std::to_string(split_granule_k);
    s += reduction == SplitKReduction::sequential ? " sequential" : " pairwise";
  }
  return s + " of " + instruction.name();
}

KernelSchedule block_scaled_schedule(Arch arch, Format a, Format b, Format scale, int block) {
  const Type ta = type_of(a), tb = type_of(b), ts = type_of(scale);
  const bool fp4 = ta == Type::e2m1 && tb == Type::e2m1;
  std::string id;
  if (fp4 && ts == Type::ue4m3 && block == 16) id = "mxf4nvf4.block16.ue4m3";
  else if (fp4 && ts == Type::ue8m0 && block == 16) id = "mxf4nvf4.block16.ue8m0";
  else if (fp4 && ts == Type::ue8m0 && block == 32) id = "mxf4.block32.ue8m0";
  else if (ts == Type::ue8m0 && block == 32) id = "mxf8f6f4.block32.ue8m0";
  else {
    fail("no block-scaled instruction takes " + std::string(to_string(ta)) + " x " + std::string(to_string(tb)) +
         " with " + std::string(to_string(ts)) + " scales per " + std::to_string(block) +
         " (fp8/fp6 need ue8m0 block32; e2m1 x e2m1 takes ue8m0 block16/32 or ue4m3 block16)");
  }
  const InstructionRow* row = nullptr;
  if (arch == Arch::sm_100a) row = find_row("sm_100a.tcgen05." + id);
  if (arch == Arch::sm_120a) row = find_row("sm_120a.mma." + id);
  if (row == nullptr) fail("block-scaled MMA models exist for sm_100a and sm_120a, got " + std::string(to_string(arch)));
  // tcgen05: the widest N (256) of M=128; mma.sync: m16n8. The shape does not change any output.
  const ShapeRule& s = row->shapes.front();
  return KernelSchedule::chain(make_instruction(*row, s.m, s.n_max, s.k, ta, tb));
}

std::vector<std::uint32_t> gemm(const KernelSchedule& schedule, const GemmOperands& ops, const GemmOptions& options) {
  schedule.validate();
  const Instruction& ins = schedule.instruction;
  const FdpaParams& p = ins.params();
  const std::string who = schedule.name();
  const Format acc = accumulator_format(p.rounding);
  const Format fa = *format_of(ins.a), fb = *format_of(ins.b);
  if (ops.a.empty() || ops.b.empty()) fail(who + ": A and B are required");
  if (ops.a.format() != fa) fail(who + ": A holds " + to_string(ops.a.format()) + " codes, the instruction takes " + to_string(fa));
  if (ops.b.format() != fb) fail(who + ": B holds " + to_string(ops.b.format()) + " codes, the instruction takes " + to_string(fb));
  const std::size_t M = ops.a.rows(), K = ops.a.cols(), N = ops.b.cols();
  if (ops.b.rows() != K) fail(who + ": A is " + dims(ops.a) + " but B is " + dims(ops.b) + " (K must match)");
  if (!ops.c.empty()) {
    if (ops.c.format() != acc) fail(who + ": C holds " + to_string(ops.c.format()) + " codes, the accumulator is " + to_string(acc));
    if (ops.c.rows() != M || ops.c.cols() != N) fail(who + ": C must be " + std::to_string(M) + " x " + std::to_string(N) + ", got " + dims(ops.c));
  }
  const std::size_t kstep = static_cast<std::size_t>(ins.k);
  const std::size_t steps = (K + kstep - 1) / kstep;
  const std::size_t padded = steps * kstep;
  const int sblock = schedule.scale_block();
  const std::size_t blocks = sblock > 0 ? (K + static_cast<std::size_t>(sblock) - 1) / static_cast<std::size_t>(sblock) : 0;
  if (sblock > 0) {
    const Format fs = ins.block_scaled() ? *format_of(ins.scale_type()) : Format::float32;
    const std::string what = ins.block_scaled() ? std::string(to_string(ins.scale_type())) + " block" + std::to_string(sblock)
                                                : "fp32 promotion block" + std::to_string(sblock);
    for (const auto& [m, name, rows, cols] : {std::tuple{&ops.scale_a, "SFA", M, blocks}, std::tuple{&ops.scale_b, "SFB", blocks, N}}) {
      if (m->empty()) fail(who + ": " + name + " (" + what + " scales) is required");
      if (m->format() != fs) fail(who + ": " + name + " holds " + to_string(m->format()) + " codes, expected " + to_string(fs));
      if (m->rows() != rows || m->cols() != cols) {
        fail(who + ": " + name + " must be " + std::to_string(rows) + " x " + std::to_string(cols) + " (" + what + "), got " + dims(*m));
      }
    }
  } else if (!ops.scale_a.empty() || !ops.scale_b.empty()) {
    fail(who + ": the instruction takes no block scales");
  }
  ops.a.check_codes("A");
  ops.b.check_codes("B");
  ops.c.check_codes("C");
  ops.scale_a.check_codes("SFA");
  ops.scale_b.check_codes("SFB");

  const GemmPath path = detail::resolve_path(options.path);
  const int threads = detail::resolve_threads(options.threads);
  std::vector<std::uint32_t> d;
  if (path != GemmPath::reference && detail::fast_gemm(schedule, ops, path, threads, options.stats, d)) return d;
  if (options.stats != nullptr) *options.stats = GemmPathStats{0, 0, 0, M * N};

  // The reference engine. Decode once into K-contiguous panels (A by rows, B by columns).
  const std::size_t b9 = p.algorithm == Algorithm::fp8_via_f16 ? static_cast<std::size_t>(p.L) : 0;
  detail::Panel pa, pb;
  pa.decode(ops.a, true, padded, detail::decomposition_format(p.algorithm, fa), b9);
  pb.decode(ops.b, false, padded, detail::decomposition_format(p.algorithm, fb), b9);
  detail::ScalePanel spa, spb;
  if (ins.block_scaled()) {
    const std::size_t padded_blocks = padded / static_cast<std::size_t>(sblock);
    spa.decode(ops.scale_a, true, padded_blocks, sblock);
    spb.decode(ops.scale_b, false, padded_blocks, sblock);
  }
  const bool promotion = schedule.accumulation == Accumulation::promotion;
  const std::size_t unit = promotion ? static_cast<std::size_t>(schedule.promotion_interval) : 1;  // instructions
  const std::size_t units = (steps + unit - 1) / unit;
  const std::size_t slices = static_cast<std::size_t>(schedule.split_k);
  const std::size_t per_slice = schedule.slice_units(units);

  d.assign(M * N, 0);
  // One output: the K loop of the kernel for element (i, j), in the kernel's order.
  const auto output = [&](std::size_t i, std::size_t j) -> std::uint32_t {
    const detail::ElementVec va = pa.vec(i), vb = pb.vec(j);
    detail::ScaleVec sa, sb;
    if (ins.block_scaled()) {
      sa = spa.vec(i);
      sb = spb.vec(j);
    }
    const detail::ScaleVec* psa = ins.block_scaled() ? &sa : nullptr;
    const detail::ScaleVec* psb = ins.block_scaled() ? &sb : nullptr;
    const std::uint32_t c = ops.c.empty() ? 0u : ops.c.word(i, j);
    // Units [u0, u1) accumulated onto `init`.
    const auto accumulate = [&](std::size_t u0, std::size_t u1, std::uint32_t init) {
      std::uint32_t r = init;
      for (std::size_t u = u0; u < u1; ++u) {
        const std::size_t s0 = u * unit, s1 = std::min(steps, s0 + unit);
        if (!promotion) {
          r = detail::run_instruction(p, acc, va, vb, s0 * kstep, kstep, psa, psb, r);
          continue;
        }
        // A fresh accumulator for P instructions (scale-d = 0 first), then the FFMA promotion.
        std::uint32_t part = 0;
        for (std::size_t s = s0; s < s1; ++s) part = detail::run_instruction(p, acc, va, vb, s * kstep, kstep, nullptr, nullptr, part);
        const std::uint32_t a_scale = ops.scale_a.word(i, u), b_scale = ops.scale_b.word(u, j);
        switch (schedule.promotion_fma) {
          case PromotionFma::scale_product: r = fma_f32(mul_f32(a_scale, b_scale), part, r); break;
          case PromotionFma::scale_b_first: r = fma_f32(a_scale, mul_f32(b_scale, part), r); break;
          case PromotionFma::mul_then_add: r = add_f32(r, mul_f32(mul_f32(a_scale, b_scale), part)); break;
        }
      }
      return r;
    };
    if (slices == 1) {
      if (schedule.c_placement == CPlacement::accumulator) return accumulate(0, units, c);
      return acc_add(acc, accumulate(0, units, 0u), c);
    }
    std::vector<std::uint32_t> partial;
    for (std::size_t s = 0; s < slices; ++s) {
      const std::size_t u0 = std::min(units, s * per_slice), u1 = std::min(units, u0 + per_slice);
      partial.push_back(accumulate(u0, u1, 0u));
    }
    if (schedule.reduction == SplitKReduction::pairwise) return add_f32(c, sum_f32_pairwise(partial));
    std::uint32_t r = c;
    for (std::uint32_t x : partial) r = add_f32(r, x);
    return r;
  };

  // Tiles of 16 x 16 outputs; every output is independent, so any thread count gives the same bits.
  constexpr std::size_t kTile = 16;
  const std::size_t tiles_m = (M + kTile - 1) / kTile, tiles_n = (N + kTile - 1) / kTile;
  const long long tiles = static_cast<long long>(tiles_m * tiles_n);
#if defined(BLOCKSCALE_HAVE_OPENMP)
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
#endif
  for (long long t = 0; t < tiles; ++t) {
    const std::size_t ti = static_cast<std::size_t>(t) / tiles_n, tj = static_cast<std::size_t>(t) % tiles_n;
    for (std::size_t i = ti * kTile; i < std::min(M, (ti + 1) * kTile); ++i) {
      for (std::size_t j = tj * kTile; j < std::min(N, (tj + 1) * kTile); ++j) d[i * N + j] = output(i, j);
    }
  }
  return d;
}

std::vector<std::uint32_t> gemm(const KernelSchedule& schedule, const BlockScaledTensor& a, const BlockScaledTensor& b,
                                const CodeMatrix& c, const GemmOptions& options) {
  schedule.validate();
  const Instruction& ins = schedule.instruction;
  const std::string who = schedule.name();
  if (!ins.block_scaled()) fail(who + ": block-scaled tensors need a block-scaled instruction");
  const BlockScaledDesc& da = a.desc();
  const BlockScaledDesc& db = b.desc();
  const BlockFormat want_a{*format_of(ins.a), *format_of(ins.scale_type()), ins.block()};
  const BlockFormat want_b{*format_of(ins.b), *format_of(ins.scale_type()), ins.block()};
  if (da.format != want_a) fail(who + ": A is " + to_string(da.format) + ", the instruction takes " + to_string(want_a));
  if (db.format != want_b) fail(who + ": B is " + to_string(db.format) + ", the instruction takes " + to_string(want_b));
  detail::check_tensor_pair(who, a, b, c);
  const auto M = static_cast<std::size_t>(da.rows()), N = static_cast<std::size_t>(db.rows());
  const auto Ks = static_cast<std::size_t>(da.k_stored()), kb = static_cast<std::size_t>(da.k_blocks());
  const std::uint32_t alpha = tensor_scale_alpha(a, b);
  const bool scaled_epilogue = alpha != 0x3F800000u;  // alpha != 1.0f
  std::vector<std::uint8_t> ea_unpacked, eb_unpacked;
  const std::span<const std::uint8_t> ea = detail::element_codes_of(a, ea_unpacked);
  const std::span<const std::uint8_t> eb = detail::element_codes_of(b, eb_unpacked);
  const std::vector<std::uint8_t> sa = a.scale_codes(), sb = b.scale_codes();
  KernelSchedule inner = schedule;
  if (scaled_epilogue) inner.c_placement = CPlacement::accumulator;  // from +0: C is added by the FFMA below
  std::vector<std::uint32_t> d;
  if (da.batch() > 1) d.reserve(static_cast<std::size_t>(da.batch()) * M * N);
  for (std::int64_t batch = 0; batch < da.batch(); ++batch) {
    const auto bi = static_cast<std::size_t>(batch);
    // Stored K-major: A is M x K row-major, B (N rows of K) is K x N column-major; the scales likewise.
    const GemmOperands ops{
        CodeMatrix(da.format.element, M, Ks, ea.subspan(bi * M * Ks, M * Ks)),
        CodeMatrix(db.format.element, Ks, N, eb.subspan(bi * N * Ks, N * Ks), Order::col_major),
        CodeMatrix(da.format.scale, M, kb, std::span(sa).subspan(bi * M * kb, M * kb)),
        CodeMatrix(db.format.scale, kb, N, std::span(sb).subspan(bi * N * kb, N * kb), Order::col_major),
        scaled_epilogue ? CodeMatrix() : c};
    std::vector<std::uint32_t> part = gemm(inner, ops, options);
    tensor_scale_epilogue(alpha, part, c, options.path);
    if (da.batch() == 1) return part;  // no copy (a serial 4 MB one took 0.5 ms at 1024 x 1024)
    d.insert(d.end(), part.begin(), part.end());
  }
  return d;
}

std::uint32_t tensor_scale_alpha(const BlockScaledTensor& a, const BlockScaledTensor& b) {
  return mul_f32(std::bit_cast<std::uint32_t>(a.tensor_scale().decode), std::bit_cast<std::uint32_t>(b.tensor_scale().decode));
}

void tensor_scale_epilogue(std::uint32_t alpha, std::span<std::uint32_t> d, const CodeMatrix& c, GemmPath path) {
  if (alpha == 0x3F800000u) return;  // alpha = 1.0f
  if (!c.empty() && c.format() != Format::float32) fail("tensor_scale_epilogue: C must hold f32 codes");
  if (!c.empty() && c.rows() * c.cols() != d.size()) {
    fail("tensor_scale_epilogue: C is " + dims(c) + " but there are " + std::to_string(d.size()) + " outputs");
  }
  const std::size_t N = c.empty() ? d.size() : c.cols(), M = N == 0 ? 0 : d.size() / N;
  if (detail::resolve_path(path) == GemmPath::reference) {
    for (std::size_t i = 0; i < M; ++i)
      for (std::size_t j = 0; j < N; ++j) {
        std::uint32_t& x = d[i * N + j];
        x = c.empty() ? mul_f32(alpha, x) : fma_f32(alpha, x, c.word(i, j));
      }
    return;
  }
  // The same FMUL / FFMA on the host FPU (bit-identical to arith.h in IEEE mode).
  const blockscale::detail::IeeeMode ieee;
  for (std::size_t i = 0; i < M; ++i)
    for (std::size_t j = 0; j < N; ++j) {
      std::uint32_t& x = d[i * N + j];
      x = c.empty() ? fast::host_mul(alpha, x) : fast::host_fma(alpha, x, c.word(i, j));
    }
}

}  // namespace blockscale::emulator
