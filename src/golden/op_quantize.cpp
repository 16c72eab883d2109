// SPDX-License-Identifier: Apache-2.0
// Quantization sets: one block of fp32 inputs -> its scale code and element codes, per block format
// and recipe (quantize/block.h quantize_block, quantize/options.h recipes).
//
//   @op quantize mxfp8_e4m3 recipe=ocp rule=ocp_floor ratio=reciprocal_multiply nan=propagate
//       inf=nan_scale subnormals=keep tensor_scale=from_data element.rounding=nearest_even ...
//   @fields x:f32[32] -> s:ue8m0 q:e4m3[32]
//
// NVFP4 with a per-tensor scale takes the tensor's global amax g as an input of each case and also
// gives the stored fp32 per-tensor scale t (TensorScale::decode).
//
// fp8 with fp32 scales (quantize/fp8_scaled.h) has its own recipes and no options to spell out:
//
//   @op quantize fp8_e4m3 recipe=deepgemm
//   @fields g:f32 x:f32[32] -> s:f32 q:e4m3[32]
//
// A case is 32 elements x of one scale group (a tensor, a row, a 1 x 128 or a 128 x 128 block: the
// recipes compute a group's scale from its amax alone) with the group's amax g, at least max |x|;
// s is the fp32 scale the GEMM multiplies by, q the element codes.
#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <optional>

#include "blockscale/formats/presets.h"
#include "blockscale/quantize/block.h"
#include "blockscale/quantize/block_format.h"
#include "blockscale/quantize/fp8_scaled.h"
#include "blockscale/quantize/options.h"
#include "common.h"

namespace blockscale::golden::detail {
namespace {

constexpr ElementType kF32 = ElementType{WordType::code, Format::float32};
constexpr ElementType kU32{WordType::u32, Format::float32};

std::string rule_fields(const QuantizeOptions& o) {
  const char* ratio = o.ratio == ScaleRatio::reciprocal_multiply ? "reciprocal_multiply" : "divide";
  const char* nan = o.nan == BlockNan::propagate ? "propagate" : "ignore";
  const char* inf = o.inf == BlockInf::nan_scale ? "nan_scale" : "saturate";
  const char* sub = o.subnormals == SubnormalInputs::keep             ? "keep"
                    : o.subnormals == SubnormalInputs::flush_elements ? "flush_elements"
                                                                      : "flush_block";
  const char* ts = o.tensor_scale == TensorScaleSource::from_data    ? "from_data"
                   : o.tensor_scale == TensorScaleSource::given_amax ? "given_amax"
                                                                     : "none";
  return "rule=" + to_string(o.rule) + " ratio=" + ratio + " nan=" + nan + " inf=" + inf +
         " subnormals=" + sub + " tensor_scale=" + ts + " " + options_string(o.element, "element.");
}

class QuantizeOp final : public Operation {
 public:
  QuantizeOp(BlockFormat f, std::string recipe, QuantizeOptions o)
      : f_(f), recipe_(std::move(recipe)), o_(o) {
    validate(f_, o_);
    // Each case supplies the global amax itself (the tensor it belongs to is not in the case).
    tensor_ = has_tensor_scale(f_) && o_.tensor_scale != TensorScaleSource::none;
    stochastic_ = o_.element.rounding == Rounding::stochastic;
    n_ = static_cast<std::size_t>(f_.block_size);
  }
  SetKind kind() const override { return SetKind::quantization; }
  std::string id() const override { return "quantize:" + to_string(f_) + ":" + recipe_; }
  std::string file_stem() const override { return to_string(f_) + "_" + recipe_; }
  std::vector<std::string> op_lines() const override {
    return {"quantize " + to_string(f_) + " recipe=" + recipe_ + " " + rule_fields(o_)};
  }
  std::vector<std::string> notes() const override {
    std::vector<std::string> n = {
        "one block along K: x (fp32 inputs) -> s (scale code) and q (element codes) (quantize/block.h)"};
    if (tensor_) {
      n.push_back(
          "g: the global amax of the tensor the block belongs to; t: the stored fp32 per-tensor scale");
    }
    if (stochastic_)
      n.push_back("r: one random word per element for stochastic rounding (low element.sr_bits bits used)");
    return n;
  }
  std::vector<FieldSpec> fields() const override {
    std::vector<FieldSpec> f;
    if (tensor_) f.push_back({"g", kF32, 1, false});
    f.push_back({"x", kF32, n_, false});
    if (stochastic_) f.push_back({"r", kU32, n_, false});
    if (tensor_) f.push_back({"t", kF32, 1, true});
    f.push_back({"s", ElementType::of(f_.scale), 1, true});
    f.push_back({"q", ElementType::of(f_.element), n_, true});
    return f;
  }
  void compute(std::span<const std::uint64_t> in, std::span<std::uint64_t> out) const override {
    std::size_t at = 0;
    const float g = tensor_ ? std::bit_cast<float>(static_cast<std::uint32_t>(in[at++])) : 0.0f;
    std::vector<float> x(n_);
    for (std::size_t i = 0; i < n_; ++i) x[i] = std::bit_cast<float>(static_cast<std::uint32_t>(in[at++]));
    std::vector<std::uint32_t> r;
    if (stochastic_) {
      for (std::size_t i = 0; i < n_; ++i) r.push_back(static_cast<std::uint32_t>(in[at++]));
    }
    const TensorScale ts = tensor_scale_for_amax(f_, o_, g);
    std::vector<std::uint8_t> q(n_);
    const std::uint8_t s = quantize_block(x, f_, o_, ts, q, r);
    std::size_t o = 0;
    if (tensor_) out[o++] = std::bit_cast<std::uint32_t>(ts.decode);
    out[o++] = s;
    for (std::size_t i = 0; i < n_; ++i) out[o++] = q[i];
  }
  std::size_t default_cases() const override { return 48; }
  std::vector<std::uint64_t> generate_inputs(const GenerateOptions& o) const override;

 private:
  BlockFormat f_;
  std::string recipe_;
  QuantizeOptions o_;
  bool tensor_ = false, stochastic_ = false;
  std::size_t n_ = 32;
};

float f32(double v) { return static_cast<float>(v); }

// Edge blocks (formats.md (c), issue 3's hand-worked list): all zeros, a NaN, an Inf, amax exactly
// at and around the binade edges of the scale rules, ties after scaling, fp32 subnormals, values
// near FLT_MAX and below the smallest scale, a single nonzero element, all equal, all negative.
std::vector<float> edge_block(const BlockFormat& f, std::size_t n, int recipe, Rng& rng) {
  const double max_e = to_double(f.element, max_finite_code(f.element));
  std::vector<float> x(n);
  const auto realistic = [&](int e) {
    for (auto& v : x) v = f32(std::ldexp(rng.normalish(), e));
  };
  realistic(static_cast<int>(rng.range(-6, 6)));
  const std::size_t at = rng.below(n);
  switch (recipe) {
    case 0: std::fill(x.begin(), x.end(), rng.chance(1, 2) ? 0.0f : -0.0f); break;
    case 1: x[at] = std::numeric_limits<float>::quiet_NaN(); break;
    case 2:
      x[at] =
          rng.chance(1, 2) ? std::numeric_limits<float>::infinity() : -std::numeric_limits<float>::infinity();
      break;
    case 3: {  // amax = max_e * 2^k exactly, just below, just above (FLOOR / CEIL / RCEIL disagree)
      const float a = f32(std::ldexp(max_e, static_cast<int>(rng.range(-20, 20))));
      const int which = static_cast<int>(rng.below(3));
      x[at] = which == 0   ? a
              : which == 1 ? std::nextafter(a, 0.0f)
                           : std::nextafter(a, std::numeric_limits<float>::infinity());
      for (auto& v : x) {
        if (std::abs(v) > std::abs(x[at])) v = v / 4096;
      }
      if (rng.chance(1, 2)) x[at] = -x[at];
      break;
    }
    case 4: {  // amax a power of two, and just below one: the torchao EVEN rounding edge
      const float a = f32(std::ldexp(1.0, static_cast<int>(rng.range(-30, 30))));
      x[at] = rng.chance(1, 2) ? a : std::nextafter(a, 0.0f);
      for (auto& v : x) {
        if (v != x[at]) v = f32(v * std::ldexp(1.0, -12) * x[at]);
      }
      break;
    }
    case 5: {  // ties: elements on midpoints of the element grid under a unit scale
      x[0] = f32(max_e);
      for (std::size_t i = 1; i < n; ++i) {
        const std::uint32_t c = static_cast<std::uint32_t>(rng.below(max_finite_code(f.element)));
        const double lo = to_double(f.element, c), hi = to_double(f.element, c + 1);
        x[i] = f32((rng.chance(1, 2) ? 1 : -1) * (lo + hi) / 2);
      }
      break;
    }
    case 6:  // fp32 subnormals, alone or with normals
      for (auto& v : x) {
        const auto magnitude = static_cast<std::uint32_t>(rng.below(0x800000));
        const std::uint32_t sign = rng.chance(1, 2) ? 0x80000000u : 0u;
        v = std::bit_cast<float>(magnitude | sign);
      }
      if (rng.chance(1, 2)) x[at] = f32(std::ldexp(1.0, -120));
      break;
    case 7:  // near FLT_MAX
      for (auto& v : x) v = f32(v * 0x1p100);
      x[at] = rng.chance(1, 2) ? std::numeric_limits<float>::max() : f32(0x1p127);
      break;
    case 8:  // below the smallest scale (2^-127 for e8m0)
      for (auto& v : x) v = f32(v * 0x1p-135);
      break;
    case 9: {  // one nonzero element
      std::fill(x.begin(), x.end(), 0.0f);
      const int e = static_cast<int>(rng.range(-10, 10));
      x[at] = f32(std::ldexp(rng.normalish(), e));
      break;
    }
    case 10: {  // all equal
      const int e = static_cast<int>(rng.range(-8, 8));
      std::fill(x.begin(), x.end(), f32(std::ldexp(1.0 + rng.below(8) / 8.0, e)));
      break;
    }
    default:  // all negative
      for (auto& v : x) v = -std::abs(v);
      break;
  }
  return x;
}

// The stratum of block case c of `total`: the one asked for, or for mixed data edge cases in the
// first half, then random and realistic in turn.
DataKind block_stratum(DataKind asked, std::size_t c, std::size_t total) {
  if (asked != DataKind::mixed) return asked;
  return c < total / 2 ? DataKind::edge : (c % 2 ? DataKind::random : DataKind::realistic);
}

std::vector<std::uint64_t> QuantizeOp::generate_inputs(const GenerateOptions& o) const {
  Rng rng(operation_seed(o.seed, id()));
  const std::size_t total = case_count(o, default_cases());
  std::vector<std::uint64_t> in;
  constexpr int kEdgeRecipes = 12;
  for (std::size_t c = 0; c < total; ++c) {
    const DataKind kind = block_stratum(o.data, c, total);
    std::vector<float> x(n_);
    if (kind == DataKind::edge) {
      x = edge_block(f_, n_, static_cast<int>(c % kEdgeRecipes), rng);
    } else if (kind == DataKind::random) {
      for (auto& v : x) v = std::bit_cast<float>(rng.u32());
    } else {
      const int e = static_cast<int>(rng.range(-12, 12));
      for (auto& v : x) v = f32(std::ldexp(rng.normalish(), e));
    }
    if (tensor_) {
      // The global amax: the block's own amax (a one-block tensor), a larger one, or (rarely) a
      // smaller one that the block then exceeds.
      float amax = 0.0f;
      for (float v : x) {
        if (!std::isnan(v)) amax = std::max(amax, std::abs(v));
      }
      const int choice = static_cast<int>(rng.below(6));
      float g = amax;
      if (choice == 1 || choice == 2)
        g = f32(static_cast<double>(amax) * (1 + static_cast<double>(rng.below(1u << 20)) * 0x1p-16));
      if (choice == 3) g = f32(static_cast<double>(amax) / 3);
      if (choice == 4 && kind == DataKind::edge)
        g = rng.chance(1, 2) ? 0.0f : std::numeric_limits<float>::infinity();
      if (!std::isfinite(g) && choice != 4) g = std::numeric_limits<float>::max();
      in.push_back(std::bit_cast<std::uint32_t>(g));
    }
    for (float v : x) in.push_back(std::bit_cast<std::uint32_t>(v));
    if (stochastic_) {
      for (std::size_t i = 0; i < n_; ++i) in.push_back(rng.u32());
    }
  }
  return in;
}

std::unique_ptr<QuantizeOp> make(const BlockFormat& f, std::string_view recipe) {
  const auto o = recipes::by_name(recipe, f.element);
  if (!o) invalid("unknown quantization recipe " + quote(recipe) + " (" + recipes::names() + ")");
  return std::make_unique<QuantizeOp>(f, std::string(recipe), *o);
}

// ---- fp8 with fp32 scales.

struct Fp8Recipe {
  const char* name;
  Fp8ScaleRecipe recipe;
  Fp8Granularity granularity;  // one the recipe takes; a group's math is the same in all of them
  float amax_floor;            // the recipe's clamp of the amax (the generator aims at it)
};
constexpr Fp8Recipe kFp8Recipes[] = {
    {"deepgemm", Fp8ScaleRecipe::deepgemm, Fp8Granularity::block_1x128, 1e-4f},
    {"deepgemm_ue8m0", Fp8ScaleRecipe::deepgemm_ue8m0, Fp8Granularity::block_1x128, 1e-4f},
    {"torchao", Fp8ScaleRecipe::torchao, Fp8Granularity::tensor, 1e-12f},
};

const Fp8Recipe* find_fp8_recipe(std::string_view name) {
  for (const Fp8Recipe& r : kFp8Recipes) {
    if (name == r.name) return &r;
  }
  return nullptr;
}

std::optional<Format> parse_fp8_element(std::string_view name) {
  if (name == "fp8_e4m3") return Format::float8_e4m3fn;
  if (name == "fp8_e5m2") return Format::float8_e5m2;
  return std::nullopt;
}

class Fp8ScaledQuantizeOp final : public Operation {
 public:
  static constexpr std::size_t kElements = 32;

  Fp8ScaledQuantizeOp(Format element, const Fp8Recipe& r) : element_(element), r_(r) {
    // The recipe's own check (DeepGEMM quantizes to e4m3 only), on a one-element tensor.
    const float zero = 0.0f;
    (void)quantize_fp8_scaled(std::span<const float>(&zero, 1), 1, 1, KAxis::last, element_, r_.granularity,
                              r_.recipe);
  }
  SetKind kind() const override { return SetKind::quantization; }
  std::string id() const override { return "quantize:" + element_name() + ":" + r_.name; }
  std::string file_stem() const override { return element_name() + "_" + r_.name; }
  std::vector<std::string> op_lines() const override {
    return {"quantize " + element_name() + " recipe=" + r_.name};
  }
  std::vector<std::string> notes() const override {
    return {
        "32 elements x of one scale group (tensor, row, 1x128 or 128x128 block) and the group's amax g "
        "(at least max |x|) -> s (the fp32 scale the GEMM multiplies by) and q (element codes) "
        "(quantize/fp8_scaled.h)"};
  }
  std::vector<FieldSpec> fields() const override {
    return {{"g", kF32, 1, false},
            {"x", kF32, kElements, false},
            {"s", kF32, 1, true},
            {"q", ElementType::of(element_), kElements, true}};
  }
  // The group is the 32 elements and one more of magnitude g: its amax is g, the largest |x| being
  // at most g, and quantize_fp8_scaled gives the group's scale and codes.
  void compute(std::span<const std::uint64_t> in, std::span<std::uint64_t> out) const override {
    const auto g = std::bit_cast<float>(static_cast<std::uint32_t>(in[0]));
    if (!(g >= 0.0f) || std::signbit(g) || !std::isfinite(g))
      invalid("g (the group's amax) must be a finite fp32 value >= +0, got " + hex(in[0], 8));
    std::vector<float> group(kElements + 1);
    for (std::size_t i = 0; i < kElements; ++i) {
      group[i] = std::bit_cast<float>(static_cast<std::uint32_t>(in[1 + i]));
      if (std::isfinite(group[i]) && std::fabs(group[i]) > g) {
        invalid("x[" + std::to_string(i) + "] = " + hex(in[1 + i], 8) +
                " exceeds the group's amax g = " + hex(in[0], 8) + " (g is the largest |x| of the group)");
      }
    }
    group[kElements] = g;
    const Fp8ScaledMatrix m = quantize_fp8_scaled(group, 1, static_cast<std::int64_t>(kElements + 1),
                                                  KAxis::last, element_, r_.granularity, r_.recipe);
    out[0] = std::bit_cast<std::uint32_t>(m.scales[0]);
    for (std::size_t i = 0; i < kElements; ++i) out[1 + i] = m.codes[i];
  }
  std::size_t default_cases() const override { return 48; }
  std::vector<std::uint64_t> generate_inputs(const GenerateOptions& o) const override;

 private:
  std::string element_name() const { return element_ == Format::float8_e4m3fn ? "fp8_e4m3" : "fp8_e5m2"; }
  // The fp32 multiplier the recipe applies to the elements of a group of amax g (fp8_scaled.h),
  // here only to aim generated inputs at ties of the element grid; the expected results come from
  // quantize_fp8_scaled.
  float multiplier(float g) const {
    const double max = element_ == Format::float8_e4m3fn ? 448.0 : 57344.0;
    if (r_.recipe == Fp8ScaleRecipe::torchao) return f32(1.0 / std::max(static_cast<double>(g), 1e-12) * max);
    const float sf = std::max(g, r_.amax_floor) * (1.0f / 448.0f);
    if (r_.recipe == Fp8ScaleRecipe::deepgemm) return 1.0f / sf;
    // ceil_to_ue8m0: the next power of two at or above sf.
    const std::uint32_t bits = std::bit_cast<std::uint32_t>(sf);
    const int e = static_cast<int>(bits >> 23) + ((bits & 0x7FFFFFu) != 0 ? 1 : 0);
    return 1.0f / std::bit_cast<float>(static_cast<std::uint32_t>(std::clamp(e, 1, 254)) << 23);
  }
  // An input whose scaled value fp32(x * m) is the midpoint between element codes c and c + 1 when
  // one near mid / m has it (else the nearest candidate), with the sign asked for.
  float aim_at_tie(std::uint32_t c, float m, bool negative) const {
    const double mid = (to_double(element_, c) + to_double(element_, c + 1)) / 2;
    const float guess = f32(mid / m);
    float best = guess;
    for (int step = -3; step <= 3; ++step) {
      float x = guess;
      for (int i = 0; i < std::abs(step); ++i) x = std::nextafter(x, step < 0 ? 0.0f : 1e38f);
      if (static_cast<double>(x * m) == mid) best = x;
    }
    return negative ? -best : best;
  }

  Format element_;
  const Fp8Recipe& r_;
};

std::vector<std::uint64_t> Fp8ScaledQuantizeOp::generate_inputs(const GenerateOptions& o) const {
  Rng rng(operation_seed(o.seed, id()));
  const std::size_t total = case_count(o, default_cases());
  const float element_max = element_ == Format::float8_e4m3fn ? 448.0f : 57344.0f;
  const auto max_code = max_finite_code(element_);
  std::vector<std::uint64_t> in;
  constexpr int kEdgeRecipes = 12;
  for (std::size_t c = 0; c < total; ++c) {
    const DataKind kind = block_stratum(o.data, c, total);
    std::vector<float> x(kElements);
    const auto realistic = [&](int e) {
      for (auto& v : x) v = f32(std::ldexp(rng.normalish(), e));
    };
    realistic(static_cast<int>(rng.range(-12, 12)));
    float g = -1.0f;  // below: the amax of x, unless a recipe sets it
    if (kind == DataKind::random) {
      for (auto& v : x) {
        std::uint32_t w = rng.u32();
        if (((w >> 23) & 0xFFu) == 0xFFu) w &= 0xBFFFFFFFu;  // finite: the recipes refuse NaN and Inf
        v = std::bit_cast<float>(w);
      }
    } else if (kind == DataKind::edge) {
      const std::size_t at = rng.below(kElements);
      switch (static_cast<int>(c % kEdgeRecipes)) {
        case 0:  // an all-zero group
          for (auto& v : x) v = rng.chance(1, 2) ? 0.0f : -0.0f;
          g = 0.0f;
          break;
        case 1:  // an amax below the recipe's floor
          g = f32(std::ldexp(static_cast<double>(r_.amax_floor), -static_cast<int>(rng.range(1, 8))));
          for (auto& v : x) v = f32(v * std::ldexp(static_cast<double>(g), -4));
          break;
        case 2: {  // the floor itself and its neighbours
          const int which = static_cast<int>(rng.below(3));
          g = which == 0   ? r_.amax_floor
              : which == 1 ? std::nextafter(r_.amax_floor, 0.0f)
                           : std::nextafter(r_.amax_floor, 1.0f);
          for (auto& v : x) v = f32(v * std::ldexp(static_cast<double>(g), -3));
          x[at] = rng.chance(1, 2) ? g : -g;
          break;
        }
        case 3:
        case 7: {  // ties of the element grid under the group's multiplier (7: a large amax, so the
                   // scaled values are small: subnormal element codes)
          // (One draw per statement: the order of evaluation of arguments is unspecified, and the
          // files must be the same from every compiler.)
          const double fraction = static_cast<double>(rng.below(1u << 20)) * 0x1p-20;
          g = f32(std::ldexp(1.0 + fraction, static_cast<int>(rng.range(-20, 20))));
          const float m = multiplier(g);
          const std::uint32_t top = (c % kEdgeRecipes) == 7 ? 8u : max_code / 2;
          for (auto& v : x) {
            const auto code = static_cast<std::uint32_t>(rng.below(top));
            v = aim_at_tie(code, m, rng.chance(1, 2));
          }
          break;
        }
        case 4:  // the amax element inside the fragment
          x[at] = -x[at];
          break;
        case 5:  // an amax near FLT_MAX
          g = rng.chance(1, 2) ? std::numeric_limits<float>::max() : f32(0x1p127);
          for (auto& v : x) v = f32(v * 0x1p110);
          if (rng.chance(1, 2)) x[at] = -g;
          break;
        case 6:  // fp32 subnormals
          for (auto& v : x) {
            const auto magnitude = static_cast<std::uint32_t>(rng.below(0x800000));
            v = std::bit_cast<float>(magnitude | (rng.chance(1, 2) ? 0x80000000u : 0u));
          }
          break;
        case 8: {  // amax at the element maximum times a power of two, and its neighbours: the scale
                   // is a power of two or just off one (ceil_to_ue8m0 decides)
          const float a =
              f32(std::ldexp(static_cast<double>(element_max), static_cast<int>(rng.range(-30, 30))));
          const int which = static_cast<int>(rng.below(3));
          g = which == 0 ? a : which == 1 ? std::nextafter(a, 0.0f) : std::nextafter(a, 1e38f);
          for (auto& v : x) v = f32(std::ldexp(v, static_cast<int>(std::ilogb(g)) - 16));
          x[at] = g;
          break;
        }
        case 9:  // one nonzero element, the amax itself
          std::fill(x.begin(), x.end(), 0.0f);
          x[at] = f32(1.0 + static_cast<double>(rng.below(8)) / 8.0);
          x[at] = f32(std::ldexp(x[at], static_cast<int>(rng.range(-10, 10))));
          if (rng.chance(1, 2)) x[at] = -x[at];
          break;
        case 10: {  // all equal, below the amax of the group
          const double significand = 1.0 + static_cast<double>(rng.below(8)) / 8.0;
          const float v = f32(std::ldexp(significand, static_cast<int>(rng.range(-8, 8))));
          std::fill(x.begin(), x.end(), v);
          g = f32(static_cast<double>(v) * (1 + static_cast<double>(rng.below(64)) / 16));
          break;
        }
        default:  // all negative
          for (auto& v : x) v = -std::abs(v);
          break;
      }
    }
    float amax = 0.0f;
    for (float v : x) amax = std::max(amax, std::fabs(v));
    if (g < 0.0f) {
      // The fragment's own amax, or the larger amax of a group whose maximum lies elsewhere.
      g = amax;
      if (kind != DataKind::edge && rng.chance(1, 2)) {
        g = f32(static_cast<double>(amax) * (1 + static_cast<double>(rng.below(1u << 20)) * 0x1p-18));
        if (!std::isfinite(g)) g = std::numeric_limits<float>::max();
      }
    }
    g = std::max(g, amax);  // an aimed input may have come out above the amax asked for
    in.push_back(std::bit_cast<std::uint32_t>(g));
    for (float v : x) in.push_back(std::bit_cast<std::uint32_t>(v));
  }
  return in;
}

std::unique_ptr<Operation> make_fp8_scaled(Format element, std::string_view recipe) {
  const Fp8Recipe* r = find_fp8_recipe(recipe);
  if (r == nullptr)
    invalid("unknown fp8 scaling recipe " + quote(recipe) + " (deepgemm, deepgemm_ue8m0, torchao)");
  return std::make_unique<Fp8ScaledQuantizeOp>(element, *r);
}

}  // namespace

std::unique_ptr<Operation> quantization_from_id(std::string_view rest) {
  const auto parts = split(rest, ':');
  if (parts.size() != 2) invalid("quantization id " + quote(rest) + " is not <block format>:<recipe>");
  if (const auto element = parse_fp8_element(parts[0])) return make_fp8_scaled(*element, parts[1]);
  const auto f = parse_block_format(parts[0]);
  if (!f)
    invalid(
        "unknown block format " + quote(parts[0]) +
        " (mxfp8_e4m3, mxfp8_e5m2, mxfp6_e2m3, mxfp6_e3m2, mxfp4, mxfp4_block16, nvfp4, fp8_e4m3, fp8_e5m2)");
  return make(*f, parts[1]);
}

std::unique_ptr<Operation> quantization_from_file(const GoldenFile& file) {
  const Header& h = file.header;
  if (h.ops.size() != 1) fail_op(file, 1, "a quantization file has exactly one @op line");
  if (!h.modes.empty())
    throw GoldenError(file.name, h.mode_lines[0], "@mode lines belong to conversion files");
  std::unique_ptr<Operation> op;
  try {
    const auto toks = split(h.ops[0], ' ');
    if (toks.size() < 3 || toks[0] != "quantize")
      invalid("expected '@op quantize <block format> recipe=<name> ...'");
    if (toks[2].rfind("recipe=", 0) != 0) invalid("the block format must be followed by recipe=<name>");
    if (const auto element = parse_fp8_element(toks[1])) {
      op = make_fp8_scaled(*element, toks[2].substr(7));
      if (h.ops[0] != op->op_lines()[0]) invalid("expected exactly " + quote(op->op_lines()[0], 400));
      check_fields(file, op->fields());
      return op;
    }
    const auto f = parse_block_format(toks[1]);
    if (!f) invalid("unknown block format " + quote(toks[1]));
    op = make(*f, toks[2].substr(7));
    // The rest must be exactly what the recipe gives now.
    const std::string expect = op->op_lines()[0];
    if (h.ops[0] != expect) {
      invalid("the options differ from what recipe " + toks[2].substr(7) +
              " gives now: " + quote(expect, 400));
    }
  } catch (const std::invalid_argument& e) {
    fail_op(file, 0, e.what());
  }
  check_fields(file, op->fields());
  return op;
}

std::vector<std::unique_ptr<Operation>> quantization_family() {
  std::vector<std::unique_ptr<Operation>> out;
  using namespace block_formats;
  const BlockFormat all_mx[] = {mxfp8_e4m3, mxfp8_e5m2, mxfp6_e2m3, mxfp6_e3m2, mxfp4, mxfp4_block16};
  for (const recipes::NamedRecipe& r : recipes::named()) {
    if (!r.mx) {
      out.push_back(make(nvfp4, r.name));
      continue;
    }
    // Every MX recipe on MXFP8 e4m3 and MXFP4; the three most used rules on every MX format.
    const bool everywhere = std::string_view(r.name) == "ocp" || std::string_view(r.name) == "te_mxfp8" ||
                            std::string_view(r.name) == "torchao_rceil";
    for (const BlockFormat& f : all_mx) {
      if (!everywhere && !(f == mxfp8_e4m3) && !(f == mxfp4)) continue;
      try {
        out.push_back(make(f, r.name));
      } catch (const std::invalid_argument&) {
        // The recipe does not take this format (e.g. TransformerEngine's MXFP8 recipe and fp4).
      }
    }
  }
  // fp8 with fp32 scales: every recipe on e4m3, torchao's on e5m2 too (DeepGEMM makes e4m3 only).
  for (const Fp8Recipe& r : kFp8Recipes) out.push_back(make_fp8_scaled(Format::float8_e4m3fn, r.name));
  out.push_back(make_fp8_scaled(Format::float8_e5m2, "torchao"));
  return out;
}

}  // namespace blockscale::golden::detail
