// SPDX-License-Identifier: Apache-2.0
#include "blockscale/quantize/options.h"

#include <array>
#include <cmath>
#include <stdexcept>
#include <utility>

#include "blockscale/formats/detail/enum_check.h"
#include "blockscale/formats/presets.h"

namespace blockscale {

namespace {

constexpr std::array<std::pair<ScaleRule, const char*>, 8> kRuleNames = {{
    {ScaleRule::ocp_floor, "ocp_floor"},
    {ScaleRule::ceil, "ceil"},
    {ScaleRule::even, "even"},
    {ScaleRule::rceil, "rceil"},
    {ScaleRule::triton_round_up, "triton_round_up"},
    {ScaleRule::triton_round_down, "triton_round_down"},
    {ScaleRule::nvfp4_transformer_engine, "nvfp4_transformer_engine"},
    {ScaleRule::nvfp4_torchao, "nvfp4_torchao"},
}};

bool takes_inf_policy(ScaleRule r) {
  return r == ScaleRule::ocp_floor || r == ScaleRule::ceil || r == ScaleRule::even || r == ScaleRule::rceil;
}

}  // namespace

std::string to_string(ScaleRule r) {
  for (const auto& [rule, name] : kRuleNames) {
    if (rule == r) return name;
  }
  return "ScaleRule(" + std::to_string(static_cast<int>(r)) + ")";
}

std::optional<ScaleRule> parse_scale_rule(std::string_view name) {
  for (const auto& [rule, n] : kRuleNames) {
    if (name == n) return rule;
  }
  return std::nullopt;
}

void validate(const BlockFormat& f, const QuantizeOptions& o) {
  validate(f);
  const std::string what = "quantize " + to_string(f) + " with rule " + to_string(o.rule) + ": ";
  detail::require_enumerator(o.rule, ScaleRule::nvfp4_torchao, "ScaleRule", what, "QuantizeOptions::rule");
  detail::require_enumerator(o.ratio, ScaleRatio::divide, "ScaleRatio", what, "QuantizeOptions::ratio");
  detail::require_enumerator(o.nan, BlockNan::ignore, "BlockNan", what, "QuantizeOptions::nan");
  detail::require_enumerator(o.inf, BlockInf::saturate, "BlockInf", what, "QuantizeOptions::inf");
  detail::require_enumerator(o.subnormals, SubnormalInputs::flush_block, "SubnormalInputs", what, "QuantizeOptions::subnormals");
  detail::require_enumerator(o.tensor_scale, TensorScaleSource::none, "TensorScaleSource", what, "QuantizeOptions::tensor_scale");
  detail::require_enumerator(o.k_tail, KTail::zero_pad, "KTail", what, "QuantizeOptions::k_tail");
  if (is_nvfp4_rule(o.rule) != (f.scale == Format::float8_ue4m3)) {
    throw std::invalid_argument(what + (is_nvfp4_rule(o.rule)
                                            ? "the NVFP4 recipes choose ue4m3 scales; this format has e8m0 scales"
                                            : "the e8m0 scale rules do not apply to ue4m3 (NVFP4) scales; use the "
                                              "rule nvfp4_transformer_engine or nvfp4_torchao (the recipes nvfp4_te, "
                                              "nvfp4_te_stochastic, nvfp4_torchao, nvfp4_torchao_single)"));
  }
  if (o.ratio == ScaleRatio::divide && o.rule != ScaleRule::rceil) {
    throw std::invalid_argument(what + "ScaleRatio::divide is an rceil option (the triton rules always divide)");
  }
  if (o.inf == BlockInf::saturate && !takes_inf_policy(o.rule)) {
    throw std::invalid_argument(what + "BlockInf::saturate applies to ocp_floor, ceil, even and rceil; the triton "
                                       "rules and the NVFP4 recipes handle Inf by their own fp32 arithmetic "
                                       "(docs/quantization.md)");
  }
  if (o.tensor_scale == TensorScaleSource::given_amax) {
    if (!has_tensor_scale(f)) {
      throw std::invalid_argument(what + "a given tensor amax needs a format with a per-tensor scale (NVFP4); " +
                                  to_string(f) + " has none");
    }
    if (o.tensor_amax < 0.0f) {  // -0 is a zero amax (a buffer of max |x| may hold it)
      throw std::invalid_argument(what + "the given tensor amax is a magnitude and must not be negative, got " +
                                  std::to_string(o.tensor_amax));
    }
  }
  validate(f.element, o.element);
}

namespace recipes {

namespace {

QuantizeOptions mx_base(ScaleRule rule, Format element) {
  QuantizeOptions o;
  o.rule = rule;
  o.nan = BlockNan::propagate;
  o.inf = BlockInf::nan_scale;
  o.subnormals = SubnormalInputs::keep;
  o.element = presets::cuda(element);
  return o;
}

}  // namespace

QuantizeOptions ocp(Format element) { return mx_base(ScaleRule::ocp_floor, element); }

QuantizeOptions mx_paper(Format element) {
  QuantizeOptions o = ocp(element);
  o.subnormals = SubnormalInputs::flush_elements;
  return o;
}

QuantizeOptions microxcaling(Format element, bool flush_fp32_subnorms) {
  QuantizeOptions o = mx_base(ScaleRule::ocp_floor, element);
  o.element.rounding = Rounding::nearest_away;  // specs.py round = "nearest": half away from zero
  o.subnormals = flush_fp32_subnorms ? SubnormalInputs::flush_block : SubnormalInputs::keep;
  return o;
}

QuantizeOptions torchao(Format element, TorchaoScaleMode mode) {
  detail::require_enumerator(mode, TorchaoScaleMode::rceil, "TorchaoScaleMode", "recipes::torchao: mode");
  ScaleRule rule = ScaleRule::ocp_floor;
  switch (mode) {
    case TorchaoScaleMode::floor: rule = ScaleRule::ocp_floor; break;
    case TorchaoScaleMode::ceil: rule = ScaleRule::ceil; break;
    case TorchaoScaleMode::even: rule = ScaleRule::even; break;
    case TorchaoScaleMode::rceil: rule = ScaleRule::rceil; break;
  }
  QuantizeOptions o = mx_base(rule, element);
  if (element == Format::float8_e4m3fn || element == Format::float8_e5m2) {
    // Tensor.to(float8_*) of PyTorch >= 2.13 (c10 Float8_e4m3fn): RNE, finite overflow saturates
    // (older versions clamp first, same result), NaN keeps its sign: ml_dtypes' kSaturate.
    o.element = presets::ml_dtypes(element, Format::float32, /*saturate=*/true);
  }
  return o;
}

QuantizeOptions transformer_engine_mxfp8(Format element) {
  QuantizeOptions o = mx_base(ScaleRule::rceil, element);
  o.ratio = ScaleRatio::reciprocal_multiply;  // amax * Quantized_Limits<OType>::max_norm_rcp
  o.nan = BlockNan::ignore;                   // fmaxf(thread_amax, fabsf(elt))
  o.inf = BlockInf::saturate;                 // float_to_e8m0(Inf) = 0xFE
  return o;
}

QuantizeOptions triton_kernels(Format element, TritonRounding rounding) {
  detail::require_enumerator(rounding, TritonRounding::round_down, "TritonRounding", "recipes::triton_kernels: rounding");
  QuantizeOptions o = mx_base(
      rounding == TritonRounding::round_up ? ScaleRule::triton_round_up : ScaleRule::triton_round_down, element);
  if (element == Format::float4_e2m1fn) {
    // The bit-level e2m1 conversion saturates NaN (exponent 0xFF) to 7 and ORs the sign in.
    o.element.with_nan(NanRule{0x7, true, false});
  }
  return o;
}

QuantizeOptions nvfp4_transformer_engine() {
  QuantizeOptions o;
  o.rule = ScaleRule::nvfp4_transformer_engine;
  o.nan = BlockNan::ignore;  // fmaxf reductions for both the global and the block amax
  o.tensor_scale = TensorScaleSource::from_data;
  o.element = presets::cuda(Format::float4_e2m1fn);  // cvt.rn.satfinite.e2m1x2.f32
  return o;
}

QuantizeOptions nvfp4_torchao(bool two_level) {
  QuantizeOptions o;
  o.rule = ScaleRule::nvfp4_torchao;
  o.nan = BlockNan::propagate;  // torch.amax
  o.tensor_scale = two_level ? TensorScaleSource::from_data : TensorScaleSource::none;
  // clamp(+-6) then the bit-level RNE of f32_to_f4_unpacked: CUDA's RN e2m1 on every non-NaN input.
  o.element = presets::cuda(Format::float4_e2m1fn);
  return o;
}

namespace {
constexpr NamedRecipe kNamed[] = {
    {"ocp", true},           {"mx_paper", true},        {"microxcaling", true},      {"microxcaling_flush", true},
    {"torchao_floor", true}, {"torchao_ceil", true},    {"torchao_even", true},      {"torchao_rceil", true},
    {"te_mxfp8", true},      {"triton_round_up", true}, {"triton_round_down", true}, {"nvfp4_te", false},
    {"nvfp4_te_stochastic", false}, {"nvfp4_torchao", false}, {"nvfp4_torchao_single", false},
};
}  // namespace

std::span<const NamedRecipe> named() { return kNamed; }

std::optional<QuantizeOptions> by_name(std::string_view name, Format e) {
  if (name == "ocp") return ocp(e);
  if (name == "mx_paper") return mx_paper(e);
  if (name == "microxcaling") return microxcaling(e, false);
  if (name == "microxcaling_flush") return microxcaling(e, true);
  if (name == "torchao_floor") return torchao(e, TorchaoScaleMode::floor);
  if (name == "torchao_ceil") return torchao(e, TorchaoScaleMode::ceil);
  if (name == "torchao_even") return torchao(e, TorchaoScaleMode::even);
  if (name == "torchao_rceil") return torchao(e, TorchaoScaleMode::rceil);
  if (name == "te_mxfp8") return transformer_engine_mxfp8(e);
  if (name == "triton_round_up") return triton_kernels(e, TritonRounding::round_up);
  if (name == "triton_round_down") return triton_kernels(e, TritonRounding::round_down);
  if (name == "nvfp4_te") return nvfp4_transformer_engine();
  if (name == "nvfp4_te_stochastic") {
    // TransformerEngine's NVFP4 stochastic rounding (cvt.rs): 8 random bits per element, saturating.
    QuantizeOptions o = nvfp4_transformer_engine();
    o.element.rounding = Rounding::stochastic;
    o.element.stochastic_bits = 8;
    return o;
  }
  if (name == "nvfp4_torchao") return nvfp4_torchao(true);
  if (name == "nvfp4_torchao_single") return nvfp4_torchao(false);
  return std::nullopt;
}

std::string names() {
  std::string s;
  for (const NamedRecipe& r : kNamed) s += std::string(s.empty() ? "" : ", ") + r.name;
  return s;
}

}  // namespace recipes

}  // namespace blockscale
