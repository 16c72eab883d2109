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
#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

#include "blockscale/formats/presets.h"
#include "blockscale/quantize/block.h"
#include "blockscale/quantize/block_format.h"
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

std::vector<std::uint64_t> QuantizeOp::generate_inputs(const GenerateOptions& o) const {
  Rng rng(operation_seed(o.seed, id()));
  const std::size_t total = case_count(o, default_cases());
  std::vector<std::uint64_t> in;
  constexpr int kEdgeRecipes = 12;
  for (std::size_t c = 0; c < total; ++c) {
    DataKind kind = o.data;
    if (kind == DataKind::mixed)
      kind = c < total / 2 ? DataKind::edge : (c % 2 ? DataKind::random : DataKind::realistic);
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

}  // namespace

std::unique_ptr<Operation> quantization_from_id(std::string_view rest) {
  const auto parts = split(rest, ':');
  if (parts.size() != 2) invalid("quantization id " + quote(rest) + " is not <block format>:<recipe>");
  const auto f = parse_block_format(parts[0]);
  if (!f)
    invalid("unknown block format " + quote(parts[0]) +
            " (mxfp8_e4m3, mxfp8_e5m2, mxfp6_e2m3, mxfp6_e3m2, mxfp4, mxfp4_block16, nvfp4)");
  return make(*f, parts[1]);
}

std::unique_ptr<Operation> quantization_from_file(const GoldenFile& file) {
  const Header& h = file.header;
  if (h.ops.size() != 1) fail_op(file, 1, "a quantization file has exactly one @op line");
  if (!h.modes.empty())
    throw GoldenError(file.name, h.mode_lines[0], "@mode lines belong to conversion files");
  std::unique_ptr<QuantizeOp> op;
  try {
    const auto toks = split(h.ops[0], ' ');
    if (toks.size() < 3 || toks[0] != "quantize")
      invalid("expected '@op quantize <block format> recipe=<name> ...'");
    const auto f = parse_block_format(toks[1]);
    if (!f) invalid("unknown block format " + quote(toks[1]));
    if (toks[2].rfind("recipe=", 0) != 0) invalid("the block format must be followed by recipe=<name>");
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
  return out;
}

}  // namespace blockscale::golden::detail
