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
#include <bit>
#include <cmath>
#include <map>

#include "blockscale/emulator/gemm.h"
#include "blockscale/emulator/instruction.h"
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
    if (v.empty() || v.size() > 6 || v.find_first_not_of("0123456789") != std::string::npos) {
      invalid(std::string(k) + "=" + quote(v) + " is not a decimal number");
    }
    const int n = std::stoi(v);
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
    DataKind kind = o.data;
    if (kind == DataKind::mixed) {
      const DataKind rotation[] = {DataKind::realistic, DataKind::edge, DataKind::realistic,
                                   DataKind::random};
      kind = rotation[i % 4];
    }
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

}  // namespace

std::unique_ptr<Operation> gemm_from_id(std::string_view rest) {
  std::string names;
  for (const Named& n : kNamed) {
    if (rest == n.name) return std::make_unique<GemmOp>(make_named(n));
    names += names.empty() ? "" : ", ";
    names += n.name;
  }
  invalid("unknown GEMM schedule " + quote(rest) + " (" + names + ")");
}

std::unique_ptr<Operation> gemm_from_file(const GoldenFile& f) {
  const Header& h = f.header;
  if (h.ops.size() != 1) fail_op(f, 1, "a gemm file has exactly one @op line");
  if (!h.modes.empty()) throw GoldenError(f.name, h.mode_lines[0], "@mode lines belong to conversion files");
  std::unique_ptr<GemmOp> op;
  try {
    GemmSpec g = parse_spec(h.ops[0]);
    // The file name stem stands in for the schedule's name.
    std::string stem = f.name;
    const std::size_t slash = stem.find_last_of('/');
    if (slash != std::string::npos) stem = stem.substr(slash + 1);
    if (stem.size() > 4 && stem.substr(stem.size() - 4) == ".txt") stem.resize(stem.size() - 4);
    g.name = stem;
    op = std::make_unique<GemmOp>(std::move(g));
  } catch (const std::invalid_argument& e) {
    fail_op(f, 0, e.what());
  }
  check_fields(f, op->fields());
  return op;
}

std::vector<std::unique_ptr<Operation>> gemm_family() {
  std::vector<std::unique_ptr<Operation>> out;
  for (const Named& n : kNamed) out.push_back(std::make_unique<GemmOp>(make_named(n)));
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
