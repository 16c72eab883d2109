// SPDX-License-Identifier: Apache-2.0
// GEMM sets: a whole small D = A * B (+ C) through a kernel schedule of the emulator (emulator/gemm.h):
// the chain of instructions along K, Hopper promotion with fp32 block scales, split-K.
//
//   @op gemm m=2 n=2 k=256 schedule=promotion interval=4 fma=scale_product c=accumulator split_k=1
//       reduction=sequential instruction=sm_90a wgmma.mma_async m64n8k32 f32 e4m3 e4m3
//   @fields a:e4m3[512] b:e4m3[512] c:f32[4] sa:f32[4] sb:f32[4] -> d:f32[4]
//
// Matrices are row-major: A is M x K, B is K x N, C and D are M x N, SFA is M x ceil(K/block) and
// SFB is ceil(K/block) x N. `out=bf16` (written only when set) narrows an f32 D to bf16 as the GEMM
// kernels' bf16 epilogue does (cvt.rn.bf16.f32).
//
// Hopper fp8 GEMMs with fp32 scales as a library computes them (emulator/library_fp8.h), one
// measured row of that table per file; the @op line spells out the row's schedule, which must
// still be the table's:
//
//   @op fp8_scaled_gemm m=2 n=2 k=288 library=cublaslt fast_accum=0 scale_a=1x128 scale_b=128x128
//       a=e4m3 b=e4m3 interval=4 scales=promotion_fma fma=scale_product exchanged=0
//   @fields a:e4m3[576] b:e4m3[576] sa:f32[6] sb:f32[3] -> d:f32[4]
//
// A library call split along K (cuBLASLt's split-K) appends `split_k=S split_tile=G`: S slices of
// whole G-element K tiles, G the row's measured K tile, added in order before the epilogue.
//
// sa holds A's scales row-major by granularity (tensor 1, row M, 1x128 M x kb, 128x128
// ceil(M/128) x kb, kb = ceil(K/128)), sb B's as K blocks x columns (tensor 1, row N, 1x128 kb x N,
// 128x128 kb x ceil(N/128)). No C: the libraries were measured with beta = 0.
#include <bit>
#include <cmath>
#include <limits>
#include <map>

#include "blockscale/emulator/gemm.h"
#include "blockscale/emulator/instruction.h"
#include "blockscale/emulator/library_fp8.h"
#include "blockscale/formats/presets.h"
#include "common.h"

namespace blockscale::golden::detail {
namespace {

using emulator::Accumulation;
using emulator::CPlacement;
using emulator::KernelSchedule;
using emulator::PromotionFma;
using emulator::SplitKReduction;

std::string to_text(PromotionFma f) {
  switch (f) {
    case PromotionFma::scale_product: return "scale_product";
    case PromotionFma::scale_b_first: return "scale_b_first";
    case PromotionFma::mul_then_add: return "mul_then_add";
  }
  return "?";
}

struct GemmSpec {
  std::string name;  // the id after "gemm:" (empty when read from a file)
  int m = 2, n = 2, k = 128;
  KernelSchedule schedule;
  GemmOutput output = GemmOutput::accumulator;
};

// The shapes a file may ask for: small enough that a case line stays a few pages long.
constexpr int kMaxMN = 64, kMaxK = 4096;

std::string spec_string(const GemmSpec& g) {
  const KernelSchedule& s = g.schedule;
  return "gemm m=" + std::to_string(g.m) + " n=" + std::to_string(g.n) + " k=" + std::to_string(g.k) +
         " schedule=" + (s.accumulation == Accumulation::chain ? "chain" : "promotion") +
         " interval=" + std::to_string(s.promotion_interval) + " fma=" + to_text(s.promotion_fma) +
         " c=" + (s.c_placement == CPlacement::accumulator ? "accumulator" : "epilogue") +
         " split_k=" + std::to_string(s.split_k) +
         " reduction=" + (s.reduction == SplitKReduction::sequential ? "sequential" : "pairwise") +
         (g.output == GemmOutput::bf16 ? " out=bf16" : "") + " instruction=" + s.instruction.name();
}

GemmSpec parse_spec(const std::string& text) {
  const std::string marker = " instruction=";
  const std::size_t at = text.find(marker);
  if (text.rfind("gemm ", 0) != 0 || at == std::string::npos) {
    invalid(
        "expected 'gemm m=.. n=.. k=.. schedule=.. interval=.. fma=.. c=.. split_k=.. reduction=.. "
        "instruction=<name>'");
  }
  GemmSpec g;
  std::map<std::string, std::string> kv;
  for (const std::string& tok : split(text.substr(5, at - 5), ' ')) {
    const std::size_t eq = tok.find('=');
    if (eq == std::string::npos) invalid("token " + quote(tok) + " is not key=value");
    if (!kv.emplace(tok.substr(0, eq), tok.substr(eq + 1)).second)
      invalid("key " + quote(tok.substr(0, eq)) + " appears twice");
  }
  auto take = [&](const char* k) {
    const auto it = kv.find(k);
    if (it == kv.end()) invalid(std::string("missing ") + k + "=");
    std::string v = it->second;
    kv.erase(it);
    return v;
  };
  auto number = [&](const char* k, int lo, int hi) {
    const std::string v = take(k);
    if (v.empty() || v.find_first_not_of("0123456789") != std::string::npos) {
      invalid(std::string(k) + "=" + quote(v) + " is not a decimal number");
    }
    // More than 6 digits is past every bound here (at most kMaxK) and would overflow int.
    const int n = v.size() > 6 ? hi + 1 : std::stoi(v);
    if (n < lo || n > hi)
      invalid(std::string(k) + "=" + v + " is outside " + std::to_string(lo) + ".." + std::to_string(hi));
    return n;
  };
  g.m = number("m", 1, kMaxMN);
  g.n = number("n", 1, kMaxMN);
  g.k = number("k", 1, kMaxK);
  const std::string sched = take("schedule");
  const int interval = number("interval", 1, 64);
  const std::string fma = take("fma"), c = take("c");
  const int split_k = number("split_k", 1, 64);
  const std::string red = take("reduction");
  if (const auto out = kv.find("out"); out != kv.end()) {
    // Only the narrowing is spelled out: without out=, D has the accumulator's format.
    if (out->second != "bf16") invalid("out=" + quote(out->second) + " (bf16, or no out= for the accumulator's format)");
    g.output = GemmOutput::bf16;
    kv.erase(out);
  }
  if (!kv.empty()) invalid("unknown key " + quote(kv.begin()->first));
  KernelSchedule& s = g.schedule;
  s.instruction = emulator::parse_instruction(text.substr(at + marker.size()));
  if (sched == "chain")
    s.accumulation = Accumulation::chain;
  else if (sched == "promotion")
    s.accumulation = Accumulation::promotion;
  else
    invalid("schedule=" + quote(sched) + " (chain or promotion)");
  s.promotion_interval = interval;
  if (fma == "scale_product")
    s.promotion_fma = PromotionFma::scale_product;
  else if (fma == "scale_b_first")
    s.promotion_fma = PromotionFma::scale_b_first;
  else if (fma == "mul_then_add")
    s.promotion_fma = PromotionFma::mul_then_add;
  else
    invalid("fma=" + quote(fma) + " (scale_product, scale_b_first, mul_then_add)");
  if (c == "accumulator")
    s.c_placement = CPlacement::accumulator;
  else if (c == "epilogue")
    s.c_placement = CPlacement::epilogue;
  else
    invalid("c=" + quote(c) + " (accumulator or epilogue)");
  s.split_k = split_k;
  if (red == "sequential")
    s.reduction = SplitKReduction::sequential;
  else if (red == "pairwise")
    s.reduction = SplitKReduction::pairwise;
  else
    invalid("reduction=" + quote(red) + " (sequential or pairwise)");
  s.validate();
  return g;
}

class GemmOp final : public Operation {
 public:
  explicit GemmOp(GemmSpec g) : g_(std::move(g)) {
    g_.schedule.validate();
    if (g_.output != GemmOutput::accumulator && g_.output != GemmOutput::bf16)
      invalid("GemmOutput = " + std::to_string(static_cast<unsigned>(g_.output)) + " is not a GemmOutput");
    if (g_.m < 1 || g_.m > kMaxMN || g_.n < 1 || g_.n > kMaxMN || g_.k < 1 || g_.k > kMaxK) {
      invalid("GEMM shape " + std::to_string(g_.m) + " x " + std::to_string(g_.n) + " x " + std::to_string(g_.k) +
              " is outside M, N in 1.." + std::to_string(kMaxMN) + ", K in 1.." + std::to_string(kMaxK));
    }
    const auto& ins = g_.schedule.instruction;
    if (ins.params().algorithm == emulator::Algorithm::fma_chain)
      invalid("f64 instructions have no GEMM schedule model");
    fa_ = *emulator::format_of(ins.a);
    fb_ = *emulator::format_of(ins.b);
    facc_ = emulator::accumulator_format(ins.params().rounding);
    if (g_.output == GemmOutput::bf16 && facc_ != Format::float32) {
      invalid("out=bf16 narrows an f32 accumulator; '" + ins.name() + "' accumulates in " + info(facc_).short_name);
    }
    fd_ = g_.output == GemmOutput::bf16 ? Format::bfloat16 : facc_;
    const int sb = g_.schedule.scale_block();
    blocks_ = sb > 0 ? static_cast<std::size_t>((g_.k + sb - 1) / sb) : 0;
    fs_ = ins.block_scaled() ? *emulator::format_of(ins.scale_type()) : Format::float32;
  }
  SetKind kind() const override { return SetKind::gemm; }
  std::string id() const override { return "gemm:" + g_.name; }
  std::string file_stem() const override { return g_.name; }
  std::vector<std::string> op_lines() const override { return {spec_string(g_)}; }
  std::vector<std::string> notes() const override {
    std::vector<std::string> n = {"kernel schedule: " + g_.schedule.name(),
                                  "matrices row-major: a M x K, b K x N, c and d M x N" +
                                      std::string(blocks_ ? ", sa M x blocks, sb blocks x N" : "")};
    if (g_.schedule.accumulation == Accumulation::promotion) {
      n.push_back("sa, sb: fp32 block scales, one per " + std::to_string(g_.schedule.scale_block()) +
                  " elements of K (applied by the promotion FFMA, emulator/gemm.h)");
    }
    if (g_.output == GemmOutput::bf16) {
      n.push_back("d: the f32 result narrowed to bf16 as cvt.rn.bf16.f32 does (nearest even, every NaN 7fff)");
    }
    return n;
  }
  std::vector<FieldSpec> fields() const override {
    const std::size_t M = static_cast<std::size_t>(g_.m), N = static_cast<std::size_t>(g_.n),
                      K = static_cast<std::size_t>(g_.k);
    std::vector<FieldSpec> f = {{"a", ElementType::of(fa_), M * K, false},
                                {"b", ElementType::of(fb_), K * N, false},
                                {"c", ElementType::of(facc_), M * N, false}};
    if (blocks_) {
      f.push_back({"sa", ElementType::of(fs_), M * blocks_, false});
      f.push_back({"sb", ElementType::of(fs_), blocks_ * N, false});
    }
    f.push_back({"d", ElementType::of(fd_), M * N, true});
    return f;
  }
  void compute(std::span<const std::uint64_t> in, std::span<std::uint64_t> out) const override {
    const std::size_t M = static_cast<std::size_t>(g_.m), N = static_cast<std::size_t>(g_.n),
                      K = static_cast<std::size_t>(g_.k);
    std::vector<std::uint32_t> w(in.begin(), in.end());
    std::size_t at = 0;
    const auto take = [&](std::size_t n) {
      std::span<const std::uint32_t> s(w.data() + at, n);
      at += n;
      return s;
    };
    emulator::GemmOperands ops;
    ops.a = emulator::CodeMatrix(fa_, M, K, take(M * K));
    ops.b = emulator::CodeMatrix(fb_, K, N, take(K * N));
    ops.c = emulator::CodeMatrix(facc_, M, N, take(M * N));
    if (blocks_) {
      ops.scale_a = emulator::CodeMatrix(fs_, M, blocks_, take(M * blocks_));
      ops.scale_b = emulator::CodeMatrix(fs_, blocks_, N, take(blocks_ * N));
    }
    // One thread: these GEMMs are tiny, and starting an OpenMP team for each would cost more than
    // the arithmetic. The bits are the same for any thread count (emulator/gemm.h).
    emulator::GemmOptions one_thread;
    one_thread.threads = 1;
    const std::vector<std::uint32_t> d = emulator::gemm(g_.schedule, ops, one_thread);
    for (std::size_t i = 0; i < d.size(); ++i) out[i] = g_.output == GemmOutput::bf16 ? narrow_to_bf16(d[i]) : d[i];
  }
  std::size_t default_cases() const override { return 16; }
  std::vector<std::uint64_t> generate_inputs(const GenerateOptions& o) const override;

 private:
  // cvt.rn.bf16.f32 (PTX ISA, cvt; docs/gpu.md, the GEMM epilogue): round to nearest even,
  // overflow to Inf, subnormals kept, every NaN the canonical bf16 NaN 0x7FFF; through the formats
  // library's converter.
  static std::uint32_t narrow_to_bf16(std::uint32_t f32_bits) {
    static const ConvertOptions cvt_rn = presets::ieee(Rounding::nearest_even).with_nan({0x7FFF, false, false});
    return convert_code(Format::bfloat16, Format::float32, f32_bits, cvt_rn);
  }

  GemmSpec g_;
  Format fa_, fb_, facc_, fd_, fs_;
  std::size_t blocks_ = 0;
};

// One element drawn for a stratum: realistic values (about normal, filling the top of narrow
// formats), uniformly random codes, or (edge) realistic values with specials and extremes mixed in.
std::uint32_t draw(Format f, DataKind kind, int scale, Rng& rng) {
  ConvertOptions sat = presets::ieee();
  sat.overflow = Overflow::saturate;
  if (kind == DataKind::random) {
    if (info(f).code_shift) return rng.u32();
    if (f == Format::float8_ue4m3) return static_cast<std::uint32_t>(rng.next() & 0x7F);
    return static_cast<std::uint32_t>(rng.next()) & code_mask(f);
  }
  if (kind == DataKind::edge && rng.chance(1, 16)) {
    std::vector<std::uint32_t> s = {0u,
                                    sign_mask(f),
                                    max_finite_code(f),
                                    max_finite_code(f) | sign_mask(f),
                                    min_positive_code(f),
                                    min_positive_code(f) | sign_mask(f)};
    if (has_inf(f)) s.push_back(inf_code(f));
    if (has_nan(f) && rng.chance(1, 4)) s.push_back(quiet_nan_code(f));
    return to_storage(f, s[rng.below(s.size())]);
  }
  const double v = std::ldexp(rng.normalish(), scale);
  return to_storage(f, convert(f, v, sat));
}

// The stratum of GEMM case i: the one asked for, or for mixed data realistic, edge, realistic,
// random in turn.
DataKind gemm_stratum(DataKind asked, std::size_t i) {
  if (asked != DataKind::mixed) return asked;
  const DataKind rotation[] = {DataKind::realistic, DataKind::edge, DataKind::realistic, DataKind::random};
  return rotation[i % 4];
}

int fill_scale(Format f) {
  switch (f) {
    case Format::float16:
    case Format::bfloat16:
    case Format::tfloat32:
    case Format::float32: return 0;
    default: return emax(f) - 2;
  }
}

std::vector<std::uint64_t> GemmOp::generate_inputs(const GenerateOptions& o) const {
  Rng rng(operation_seed(o.seed, id()));
  const std::size_t total = case_count(o, default_cases());
  const std::size_t M = static_cast<std::size_t>(g_.m), N = static_cast<std::size_t>(g_.n),
                    K = static_cast<std::size_t>(g_.k);
  const bool promotion = g_.schedule.accumulation == Accumulation::promotion;
  std::vector<std::uint64_t> in;
  for (std::size_t i = 0; i < total; ++i) {
    const DataKind kind = gemm_stratum(o.data, i);
    for (std::size_t e = 0; e < M * K; ++e) in.push_back(draw(fa_, kind, fill_scale(fa_), rng));
    for (std::size_t e = 0; e < K * N; ++e) in.push_back(draw(fb_, kind, fill_scale(fb_), rng));
    const int cs = fill_scale(fa_) + fill_scale(fb_) + 3;
    for (std::size_t e = 0; e < M * N; ++e) in.push_back(draw(facc_, kind, cs, rng));
    for (std::size_t side = 0; side < 2; ++side) {
      const std::size_t count = side == 0 ? M * blocks_ : blocks_ * N;
      for (std::size_t e = 0; e < count; ++e) {
        std::uint32_t w = 0;
        if (promotion) {
          // fp32 dequantisation scales as DeepGEMM stores them: amax / 448, positive.
          const int exponent = static_cast<int>(rng.range(-12, -4));
          w = std::bit_cast<std::uint32_t>(static_cast<float>(std::ldexp(1.0 + std::abs(rng.normalish()), exponent)));
          if (kind == DataKind::random) w = rng.u32();
        } else if (fs_ == Format::float8_e8m0fnu) {
          w = kind == DataKind::random ? static_cast<std::uint32_t>(rng.below(256))
              : kind == DataKind::edge && rng.chance(1, 8)
                  ? static_cast<std::uint32_t>(rng.chance(1, 2) ? rng.range(0, 4) : rng.range(250, 255))
                  : static_cast<std::uint32_t>(rng.range(121, 130));
        } else {
          w = kind == DataKind::random ? static_cast<std::uint32_t>(rng.below(256))
              : kind == DataKind::edge && rng.chance(1, 8)
                  ? static_cast<std::uint32_t>(rng.range(0, 0x7F))
                  : static_cast<std::uint32_t>(rng.range(0x30, 0x50));
        }
        in.push_back(w);
      }
    }
  }
  return in;
}

struct Named {
  const char* name;
  int m, n, k;
  const char* instruction;
  Accumulation acc;
  int interval;
  PromotionFma fma;
  CPlacement c;
  int split_k;
  SplitKReduction reduction;
};

// The named schedules of the committed set: every schedule kind of emulator/gemm.h on the
// instructions the GPU kernels use, with K tails (K not a multiple of the instruction's K).
const Named kNamed[] = {
    {"sm_100a_mxf8f6f4_e4m3_chain", 2, 2, 128,
     "sm_100a tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.block32 m128n8k32 f32 e4m3 e4m3 ue8m0",
     Accumulation::chain, 4, PromotionFma::scale_product, CPlacement::accumulator, 1,
     SplitKReduction::sequential},
    {"sm_100a_mxf8f6f4_e2m3_e5m2_chain_epilogue", 2, 2, 96,
     "sm_100a tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.block32 m128n8k32 f32 e2m3 e5m2 ue8m0",
     Accumulation::chain, 4, PromotionFma::scale_product, CPlacement::epilogue, 1,
     SplitKReduction::sequential},
    {"sm_100a_mxf8f6f4_e3m2_e2m1_chain_k80", 2, 2, 80,
     "sm_100a tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.block32 m128n8k32 f32 e3m2 e2m1 ue8m0",
     Accumulation::chain, 4, PromotionFma::scale_product, CPlacement::accumulator, 1,
     SplitKReduction::sequential},
    {"sm_100a_mxf4_chain", 2, 2, 192,
     "sm_100a tcgen05.mma.cta_group::1.kind::mxf4.block_scale.block32 m128n8k64 f32 e2m1 e2m1 ue8m0",
     Accumulation::chain, 4, PromotionFma::scale_product, CPlacement::accumulator, 1,
     SplitKReduction::sequential},
    {"sm_100a_nvfp4_chain", 2, 2, 192,
     "sm_100a tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.block16 m128n8k64 f32 e2m1 e2m1 ue4m3",
     Accumulation::chain, 4, PromotionFma::scale_product, CPlacement::accumulator, 1,
     SplitKReduction::sequential},
    {"sm_100a_nvfp4_split_k2_pairwise", 2, 2, 256,
     "sm_100a tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.block16 m128n8k64 f32 e2m1 e2m1 ue4m3",
     Accumulation::chain, 4, PromotionFma::scale_product, CPlacement::accumulator, 2,
     SplitKReduction::pairwise},
    {"sm_100a_mxf4nvf4_ue8m0_block16_chain", 2, 2, 128,
     "sm_100a tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.block16 m128n8k64 f32 e2m1 e2m1 ue8m0",
     Accumulation::chain, 4, PromotionFma::scale_product, CPlacement::accumulator, 1,
     SplitKReduction::sequential},
    {"sm_120a_mxf8f6f4_e4m3_chain", 2, 2, 128,
     "sm_120a mma.sync.aligned.kind::mxf8f6f4.block_scale.block32 m16n8k32 f32 e4m3 e4m3 ue8m0",
     Accumulation::chain, 4, PromotionFma::scale_product, CPlacement::accumulator, 1,
     SplitKReduction::sequential},
    {"sm_90a_wgmma_e4m3_chain_k100", 2, 2, 100, "sm_90a wgmma.mma_async m64n8k32 f32 e4m3 e4m3",
     Accumulation::chain, 4, PromotionFma::scale_product, CPlacement::accumulator, 1,
     SplitKReduction::sequential},
    {"sm_90a_wgmma_e4m3_promotion_p4_scale_product", 2, 2, 256,
     "sm_90a wgmma.mma_async m64n8k32 f32 e4m3 e4m3", Accumulation::promotion, 4, PromotionFma::scale_product,
     CPlacement::accumulator, 1, SplitKReduction::sequential},
    {"sm_90a_wgmma_e4m3_promotion_p2_scale_b_first", 2, 2, 192,
     "sm_90a wgmma.mma_async m64n8k32 f32 e4m3 e4m3", Accumulation::promotion, 2, PromotionFma::scale_b_first,
     CPlacement::accumulator, 1, SplitKReduction::sequential},
    {"sm_90a_wgmma_e5m2_e4m3_promotion_p1_mul_then_add_epilogue", 2, 2, 96,
     "sm_90a wgmma.mma_async m64n8k32 f32 e5m2 e4m3", Accumulation::promotion, 1, PromotionFma::mul_then_add,
     CPlacement::epilogue, 1, SplitKReduction::sequential},
    {"sm_90a_wgmma_e4m3_split_k3_sequential", 2, 2, 192, "sm_90a wgmma.mma_async m64n8k32 f32 e4m3 e4m3",
     Accumulation::chain, 4, PromotionFma::scale_product, CPlacement::accumulator, 3,
     SplitKReduction::sequential},
    {"sm_90a_wgmma_f16_f16acc_chain", 2, 2, 64, "sm_90a wgmma.mma_async m64n8k16 f16 f16 f16",
     Accumulation::chain, 4, PromotionFma::scale_product, CPlacement::accumulator, 1,
     SplitKReduction::sequential},
    {"sm_89_mma_e4m3_chain", 2, 2, 96, "sm_89 mma.sync.aligned m16n8k32 f32 e4m3 e4m3", Accumulation::chain,
     4, PromotionFma::scale_product, CPlacement::accumulator, 1, SplitKReduction::sequential},
    {"sm_90a_mma_e4m3_emulated_chain", 2, 2, 64, "sm_90a mma.sync.aligned m16n8k32 f32 e4m3 e4m3",
     Accumulation::chain, 4, PromotionFma::scale_product, CPlacement::accumulator, 1,
     SplitKReduction::sequential},
    {"sm_100a_tcgen05_bf16_chain", 2, 2, 64,
     "sm_100a tcgen05.mma.cta_group::1.kind::f16 m64n8k16 f32 bf16 bf16", Accumulation::chain, 4,
     PromotionFma::scale_product, CPlacement::accumulator, 1, SplitKReduction::sequential},
    {"sm_80_mma_tf32_chain", 2, 2, 32, "sm_80 mma.sync.aligned m16n8k8 f32 tf32 tf32", Accumulation::chain, 4,
     PromotionFma::scale_product, CPlacement::accumulator, 1, SplitKReduction::sequential},
};

GemmSpec make_named(const Named& n) {
  GemmSpec g;
  g.name = n.name;
  g.m = n.m;
  g.n = n.n;
  g.k = n.k;
  KernelSchedule& s = g.schedule;
  s.instruction = emulator::parse_instruction(n.instruction);
  s.accumulation = n.acc;
  s.promotion_interval = n.interval;
  s.promotion_fma = n.fma;
  s.c_placement = n.c;
  s.split_k = n.split_k;
  s.reduction = n.reduction;
  return g;
}

// ---- fp8 with fp32 scales through a library's measured schedule.

using emulator::Fp8Library;
using emulator::Fp8ScaleStage;
using emulator::LibraryFp8Schedule;

std::string to_text(Fp8ScaleStage s) {
  switch (s) {
    case Fp8ScaleStage::epilogue_scale_product: return "epilogue_scale_product";
    case Fp8ScaleStage::epilogue_b_first: return "epilogue_b_first";
    case Fp8ScaleStage::epilogue_a_first: return "epilogue_a_first";
    case Fp8ScaleStage::promotion_fma: return "promotion_fma";
  }
  return "?";
}

const char* fp8_name(Format f) { return f == Format::float8_e4m3fn ? "e4m3" : "e5m2"; }

struct LibrarySpec {
  const LibraryFp8Schedule* row = nullptr;
  Format a = Format::float8_e4m3fn, b = Format::float8_e4m3fn;
  int m = 2, n = 2, k = 288;
  int split_k = 1;  // the library's split-K count (emulator/library_fp8.h, library_fp8_gemm)
};

// The file name stem and id of a committed file: cublaslt_1x128_x_128x128, with the element types
// appended when they are not e4m3 x e4m3 and the split-K count when there is one.
std::string library_stem(const LibrarySpec& g) {
  std::string s = std::string(emulator::to_string(g.row->library)) +
                  (g.row->fast_accum ? "_fast_accum" : "") + "_" + std::string(to_string(g.row->a)) + "_x_" +
                  std::string(to_string(g.row->b));
  if (g.a != Format::float8_e4m3fn || g.b != Format::float8_e4m3fn)
    s += std::string("_") + fp8_name(g.a) + "_" + fp8_name(g.b);
  if (g.split_k > 1) s += "_split_k" + std::to_string(g.split_k);
  return s;
}

std::string library_spec_string(const LibrarySpec& g) {
  const LibraryFp8Schedule& r = *g.row;
  return "fp8_scaled_gemm m=" + std::to_string(g.m) + " n=" + std::to_string(g.n) +
         " k=" + std::to_string(g.k) + " library=" + std::string(emulator::to_string(r.library)) +
         " fast_accum=" + (r.fast_accum ? "1" : "0") + " scale_a=" + std::string(to_string(r.a)) +
         " scale_b=" + std::string(to_string(r.b)) + " a=" + fp8_name(g.a) + " b=" + fp8_name(g.b) +
         " interval=" + std::to_string(r.promotion_interval) + " scales=" + to_text(r.scales) +
         " fma=" + to_text(r.promotion_fma) + " exchanged=" + (r.operands_exchanged ? "1" : "0") +
         (g.split_k > 1 ? " split_k=" + std::to_string(g.split_k) + " split_tile=" + std::to_string(r.split_granule_k)
                        : "");
}

std::int64_t groups(Fp8Granularity g, std::int64_t rows) {
  switch (g) {
    case Fp8Granularity::tensor: return 1;
    case Fp8Granularity::row:
    case Fp8Granularity::block_1x128: return rows;
    case Fp8Granularity::block_128x128: return (rows + Fp8ScaledMatrix::kBlock - 1) / Fp8ScaledMatrix::kBlock;
  }
  return 0;
}
bool per_block(Fp8Granularity g) {
  return g == Fp8Granularity::block_1x128 || g == Fp8Granularity::block_128x128;
}

class LibraryGemmOp final : public Operation {
 public:
  LibraryGemmOp(LibrarySpec g, std::string name) : g_(g), name_(std::move(name)) {
    if (g_.m < 1 || g_.m > kMaxMN || g_.n < 1 || g_.n > kMaxMN || g_.k < 1 || g_.k > kMaxK) {
      invalid("GEMM shape " + std::to_string(g_.m) + " x " + std::to_string(g_.n) + " x " +
              std::to_string(g_.k) + " is outside M, N in 1.." + std::to_string(kMaxMN) + ", K in 1.." +
              std::to_string(kMaxK));
    }
    if (g_.a == Format::float8_e5m2 && g_.b == Format::float8_e5m2)
      invalid(
          "e5m2 x e5m2: cuBLASLt and torch._scaled_mm take e4m3 x e4m3, e4m3 x e5m2 and e5m2 x e4m3 only");
    const std::int64_t kb = (g_.k + Fp8ScaledMatrix::kBlock - 1) / Fp8ScaledMatrix::kBlock;
    sa_ = static_cast<std::size_t>(groups(g_.row->a, g_.m) * (per_block(g_.row->a) ? kb : 1));
    sb_ = static_cast<std::size_t>(groups(g_.row->b, g_.n) * (per_block(g_.row->b) ? kb : 1));
  }
  SetKind kind() const override { return SetKind::gemm; }
  std::string id() const override { return "gemm:" + name_; }
  std::string file_stem() const override { return name_; }
  std::vector<std::string> op_lines() const override { return {library_spec_string(g_)}; }
  std::vector<std::string> notes() const override {
    return {"library schedule: " + g_.row->name() + ": " + g_.row->description() +
                (g_.split_k > 1 ? "; split-K " + std::to_string(g_.split_k) + ": slices of whole " +
                                      std::to_string(g_.row->split_granule_k) +
                                      "-element K tiles, each from zero, added in order in fp32"
                                : ""),
            "measured: " + std::string(g_.row->evidence),
            "a M x K and b K x N row-major; sa: A's fp32 scales (" + std::string(to_string(g_.row->a)) +
                "), sb: B's as K blocks x columns (" + std::string(to_string(g_.row->b)) +
                "); d = A B, f32, M x N (emulator/library_fp8.h)"};
  }
  std::vector<FieldSpec> fields() const override {
    const auto M = static_cast<std::size_t>(g_.m), N = static_cast<std::size_t>(g_.n),
               K = static_cast<std::size_t>(g_.k);
    return {{"a", ElementType::of(g_.a), M * K, false},
            {"b", ElementType::of(g_.b), K * N, false},
            {"sa", ElementType::of(Format::float32), sa_, false},
            {"sb", ElementType::of(Format::float32), sb_, false},
            {"d", ElementType::of(Format::float32), M * N, true}};
  }
  void compute(std::span<const std::uint64_t> in, std::span<std::uint64_t> out) const override {
    const std::int64_t M = g_.m, N = g_.n, K = g_.k;
    const std::int64_t kb = (K + Fp8ScaledMatrix::kBlock - 1) / Fp8ScaledMatrix::kBlock;
    Fp8ScaledMatrix a, b;
    a.element = g_.a, b.element = g_.b;
    a.granularity = g_.row->a, b.granularity = g_.row->b;
    a.rows = M, b.rows = N;
    a.k = b.k = K;
    a.codes.resize(static_cast<std::size_t>(M * K));
    b.codes.resize(static_cast<std::size_t>(N * K));
    std::size_t at = 0;
    for (auto& c : a.codes) c = static_cast<std::uint8_t>(in[at++]);
    for (std::int64_t kk = 0; kk < K; ++kk)  // B arrives K x N; the library operand is K-major
      for (std::int64_t j = 0; j < N; ++j)
        b.codes[static_cast<std::size_t>(j * K + kk)] = static_cast<std::uint8_t>(in[at++]);
    a.scales.resize(sa_);
    for (auto& s : a.scales) s = std::bit_cast<float>(static_cast<std::uint32_t>(in[at++]));
    // sb is K blocks x column groups; the matrix keeps column groups x K blocks.
    b.scales.resize(sb_);
    const std::int64_t cols = groups(g_.row->b, N), blocks = per_block(g_.row->b) ? kb : 1;
    for (std::int64_t q = 0; q < blocks; ++q)
      for (std::int64_t j = 0; j < cols; ++j)
        b.scales[static_cast<std::size_t>(j * blocks + q)] =
            std::bit_cast<float>(static_cast<std::uint32_t>(in[at++]));
    emulator::GemmOptions one_thread;  // tiny GEMMs: see GemmOp::compute
    one_thread.threads = 1;
    const std::vector<std::uint32_t> d = emulator::library_fp8_gemm(*g_.row, a, b, 0, M, g_.split_k, one_thread);
    for (std::size_t i = 0; i < d.size(); ++i) out[i] = d[i];
  }
  std::size_t default_cases() const override { return 12; }
  std::vector<std::uint64_t> generate_inputs(const GenerateOptions& o) const override;

 private:
  LibrarySpec g_;
  std::string name_;
  std::size_t sa_ = 0, sb_ = 0;
};

std::vector<std::uint64_t> LibraryGemmOp::generate_inputs(const GenerateOptions& o) const {
  Rng rng(operation_seed(o.seed, id()));
  const std::size_t total = case_count(o, default_cases());
  const auto M = static_cast<std::size_t>(g_.m), N = static_cast<std::size_t>(g_.n),
             K = static_cast<std::size_t>(g_.k);
  std::vector<std::uint64_t> in;
  for (std::size_t i = 0; i < total; ++i) {
    const DataKind kind = gemm_stratum(o.data, i);
    // With split-K, the odd 128-element K blocks of A and B are 2^-7 the size of the even ones (their
    // products 2^-14): products of similar size sum exactly in fp32 in any grouping, so without the
    // spread the slices' cuts and order could not be seen in the bits (docs/conformance.md,
    // "Split-K", the wide data).
    const auto scale = [&](Format f, std::size_t k) {
      return fill_scale(f) - (g_.split_k > 1 && k / 128 % 2 == 1 ? 7 : 0);
    };
    for (std::size_t e = 0; e < M * K; ++e) in.push_back(draw(g_.a, kind, scale(g_.a, e % K), rng));
    for (std::size_t e = 0; e < K * N; ++e) in.push_back(draw(g_.b, kind, scale(g_.b, e / N), rng));
    for (std::size_t e = 0; e < sa_ + sb_; ++e) {
      // Positive finite fp32 scales (the libraries' operands): as DeepGEMM's amax / 448 makes them;
      // at the edges of the fp32 range (products and outputs that overflow or turn subnormal); or
      // any positive finite bit pattern.
      const int exponent = static_cast<int>(rng.range(-12, -4));  // one draw per statement (GemmOp)
      float s = static_cast<float>(std::ldexp(1.0 + std::abs(rng.normalish()), exponent));
      if (kind == DataKind::edge && rng.chance(1, 4)) {
        const float extremes[] = {0x1p-126f, 0x1p-140f, 0x1p100f,
                                  0x1p127f,  1.0f,      std::numeric_limits<float>::max()};
        s = extremes[rng.below(6)];
      } else if (kind == DataKind::random) {
        do s = std::bit_cast<float>(rng.u32() & 0x7FFFFFFFu);
        while (!(s > 0.0f) || !std::isfinite(s));
      }
      in.push_back(std::bit_cast<std::uint32_t>(s));
    }
  }
  return in;
}

// The committed library files: every measured row with e4m3 x e4m3, and torch's tensor-wise call
// with e4m3 x e5m2 (checked against the device with torchao's e5m2 weights, docs/verification.md);
// then split-K for each distinct split schedule: K = 640 is 5 blocks of 128, which 128-element K
// tiles cut 2 + 2 + 1 in 3 slices and 512-element tiles 4 + 1 in 2 (the H200's split-K cut K this
// way, docs/conformance.md, "Split-K").
std::vector<LibrarySpec> library_specs() {
  std::vector<LibrarySpec> out;
  for (const LibraryFp8Schedule& r : emulator::library_fp8_schedules()) {
    LibrarySpec g;
    g.row = &r;
    out.push_back(g);
  }
  LibrarySpec mixed;
  mixed.row = &emulator::library_fp8_schedule(Fp8Library::torch_scaled_mm, false, Fp8Granularity::tensor,
                                              Fp8Granularity::tensor);
  mixed.b = Format::float8_e5m2;
  out.push_back(mixed);
  using G = Fp8Granularity;
  const struct {
    Fp8Library library;
    bool fast_accum;
    G a, b;
    int split_k;
  } splits[] = {{Fp8Library::cublaslt, false, G::tensor, G::tensor, 3},
                {Fp8Library::cublaslt, true, G::tensor, G::tensor, 3},
                {Fp8Library::cublaslt, false, G::block_1x128, G::block_128x128, 2},
                {Fp8Library::torch_scaled_mm, false, G::block_1x128, G::block_1x128, 3}};
  for (const auto& x : splits) {
    LibrarySpec g;
    g.row = &emulator::library_fp8_schedule(x.library, x.fast_accum, x.a, x.b);
    g.k = 640;
    g.split_k = x.split_k;
    out.push_back(g);
  }
  return out;
}

// The @op line of a library file back to its spec; the schedule it spells out must be the table's.
LibrarySpec parse_library_spec(const std::string& text) {
  std::map<std::string, std::string> kv;
  const auto toks = split(text, ' ');
  for (std::size_t i = 1; i < toks.size(); ++i) {
    const std::size_t eq = toks[i].find('=');
    if (eq == std::string::npos) invalid("token " + quote(toks[i]) + " is not key=value");
    if (!kv.emplace(toks[i].substr(0, eq), toks[i].substr(eq + 1)).second)
      invalid("key " + quote(toks[i].substr(0, eq)) + " appears twice");
  }
  const auto take = [&](const char* key) {
    const auto it = kv.find(key);
    if (it == kv.end()) invalid(std::string("missing ") + key + "=");
    return it->second;
  };
  const auto number = [&](const char* key, int lo, int hi) {
    const std::string v = take(key);
    if (v.empty() || v.find_first_not_of("0123456789") != std::string::npos)
      invalid(std::string(key) + "=" + quote(v) + " is not a decimal number");
    // More than 6 digits is past every bound here (at most kMaxK) and would overflow int.
    const int x = v.size() > 6 ? hi + 1 : std::stoi(v);
    if (x < lo || x > hi)
      invalid(std::string(key) + "=" + v + " is outside " + std::to_string(lo) + ".." + std::to_string(hi));
    return x;
  };
  const auto granularity = [&](const char* key) {
    const std::string v = take(key);
    for (Fp8Granularity g : {Fp8Granularity::tensor, Fp8Granularity::row, Fp8Granularity::block_1x128,
                             Fp8Granularity::block_128x128}) {
      if (v == to_string(g)) return g;
    }
    invalid(std::string(key) + "=" + quote(v) + " (tensor, row, 1x128 or 128x128)");
  };
  const auto element = [&](const char* key) {
    const std::string v = take(key);
    if (v == "e4m3") return Format::float8_e4m3fn;
    if (v == "e5m2") return Format::float8_e5m2;
    invalid(std::string(key) + "=" + quote(v) + " (e4m3 or e5m2)");
  };
  LibrarySpec g;
  g.m = number("m", 1, kMaxMN);
  g.n = number("n", 1, kMaxMN);
  g.k = number("k", 1, kMaxK);
  const std::string library = take("library"), fast = take("fast_accum");
  if (library != "cublaslt" && library != "torch_scaled_mm")
    invalid("library=" + quote(library) + " (cublaslt or torch_scaled_mm)");
  if (fast != "0" && fast != "1") invalid("fast_accum=" + quote(fast) + " (0 or 1)");
  const Fp8Granularity sa = granularity("scale_a"), sb = granularity("scale_b");
  g.a = element("a");
  g.b = element("b");
  if (kv.count("split_k")) g.split_k = number("split_k", 2, 64);
  g.row = &emulator::library_fp8_schedule(
      library == "cublaslt" ? Fp8Library::cublaslt : Fp8Library::torch_scaled_mm, fast == "1", sa, sb);
  if (g.split_k > 1 && g.row->split_granule_k == 0)
    invalid("split_k=" + std::to_string(g.split_k) + ": " + g.row->name() + " was never seen splitting K");
  const std::string expect = library_spec_string(g);
  if (text != expect)
    invalid("the schedule differs from the library's row in the emulator table now: " + quote(expect, 400));
  return g;
}

}  // namespace

std::unique_ptr<Operation> gemm_from_id(std::string_view rest) {
  std::string names;
  for (const Named& n : kNamed) {
    if (rest == n.name) return std::make_unique<GemmOp>(make_named(n));
    names += names.empty() ? "" : ", ";
    names += n.name;
  }
  for (const LibrarySpec& g : library_specs()) {
    if (rest == library_stem(g)) return std::make_unique<LibraryGemmOp>(g, library_stem(g));
    names += ", " + library_stem(g);
  }
  invalid("unknown GEMM schedule " + quote(rest) + " (" + names + ")");
}

std::unique_ptr<Operation> gemm_from_file(const GoldenFile& f) {
  const Header& h = f.header;
  if (h.ops.size() != 1) fail_op(f, 1, "a gemm file has exactly one @op line");
  if (!h.modes.empty()) throw GoldenError(f.name, h.mode_lines[0], "@mode lines belong to conversion files");
  std::unique_ptr<Operation> op;
  try {
    // The file name stem stands in for the schedule's name.
    std::string stem = f.name;
    const std::size_t slash = stem.find_last_of('/');
    if (slash != std::string::npos) stem = stem.substr(slash + 1);
    if (stem.size() > 4 && stem.substr(stem.size() - 4) == ".txt") stem.resize(stem.size() - 4);
    if (h.ops[0].rfind("fp8_scaled_gemm ", 0) == 0) {
      op = std::make_unique<LibraryGemmOp>(parse_library_spec(h.ops[0]), stem);
    } else {
      GemmSpec g = parse_spec(h.ops[0]);
      g.name = stem;
      op = std::make_unique<GemmOp>(std::move(g));
    }
  } catch (const std::invalid_argument& e) {
    fail_op(f, 0, e.what());
  }
  check_fields(f, op->fields());
  return op;
}

std::vector<std::unique_ptr<Operation>> gemm_family() {
  std::vector<std::unique_ptr<Operation>> out;
  for (const Named& n : kNamed) out.push_back(std::make_unique<GemmOp>(make_named(n)));
  for (const LibrarySpec& g : library_specs())
    out.push_back(std::make_unique<LibraryGemmOp>(g, library_stem(g)));
  return out;
}

}  // namespace blockscale::golden::detail

namespace blockscale::golden {

std::unique_ptr<Operation> gemm_operation(std::string name, int m, int n, int k,
                                          const emulator::KernelSchedule& schedule, GemmOutput output) {
  detail::GemmSpec g;
  g.name = std::move(name);
  g.m = m;
  g.n = n;
  g.k = k;
  g.schedule = schedule;
  g.output = output;
  return std::make_unique<detail::GemmOp>(std::move(g));
}

}  // namespace blockscale::golden
