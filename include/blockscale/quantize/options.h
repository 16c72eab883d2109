// SPDX-License-Identifier: Apache-2.0
// How a block scale is chosen, and what happens to NaN, Inf, zero and fp32-subnormal inputs.
//
// Every rule below reproduces a named system bit for bit: the fp32 operations are done in the order
// that system does them (formats.md (c); docs/quantization.md has the table). The systems disagree
// on the corner cases (formats.md (d) rows 11, 12, 16); each disagreement is a field of
// QuantizeOptions, and namespace `recipes` fills them in the way each system does.
//
// The pipeline for one block of a row (K-major, block_size consecutive elements along K):
//   1. SubnormalInputs::flush_elements replaces fp32-subnormal inputs by signed zeros.
//   2. amax = max |x| over the block, in fp32 (exact). BlockNan says whether a NaN makes it NaN.
//   3. The rule turns amax (and, for NVFP4, the per-tensor scale) into a scale code and an fp32
//      element multiplier m.
//   4. Each element becomes fp32(x * m) (one fp32 multiplication, round to nearest even, as every
//      reproduced system does it; a NaN product is the canonical +NaN 0x7FFFFFFF that NVIDIA GPUs
//      produce), then is converted with QuantizeOptions::element (formats' convert()).
//      SubnormalInputs::flush_block makes every element of a block with an fp32-subnormal amax a
//      signed zero instead.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "blockscale/formats/convert.h"
#include "blockscale/formats/format.h"
#include "blockscale/quantize/block_format.h"

namespace blockscale {

enum class ScaleRule : std::uint8_t {
  // e8m0 scale rules. emax_e = floor(log2(max_e)) of the element format, max_e its largest finite
  // value; E(v) = floor(log2 v) for normal v, -127 for zero and fp32 subnormals.
  //
  // OCP MX v1.0 §6.3 (MX paper Algorithm 1): X = 2^(E(amax) - emax_e), clamped below at 2^-127.
  // Also torchao ScaleCalculationMode.FLOOR (its default) and the microxcaling C++/CUDA path.
  ocp_floor,
  // torchao CEIL: X = 2^(ceil(log2 amax) - emax_e), clamped below at 2^-127.
  ceil,
  // torchao EVEN: amax rounded to the element's mantissa width (add half an element ulp to the
  // fp32 bits, ties away, may carry into the exponent), then FLOOR. An amax that rounds to 2^128
  // counts as Inf (torchao's isfinite check comes after the rounding).
  even,
  // RCEIL: X = RP_e8m0(fp32(amax * fp32(1/max_e))), the cvt.rp.satfinite.ue8m0x2.f32 rounding
  // (cuBLAS/cuDNN "scale = round_up(amax / max)", TransformerEngine, torchao RCEIL). ScaleRatio
  // picks amax * fp32(1/max_e) (TE, torchao) or fp32(amax / max_e).
  rceil,
  // triton_kernels DequantScaleRoundingMode.ROUND_UP (downcast_to_mxfp_torch): q = fp32(amax /
  // max_e), scale bits = (bits(q) + 0x7FFFFF) & 0x7F800000, element multiplier 1/scale or 0 when
  // the scale bits are 0. Differs from rceil: an fp32-subnormal q becomes 2^-126 (code 1), a NaN
  // amax gives code 0x00 with multiplier 0, an Inf amax code 0xFF with multiplier 0.
  triton_round_up,
  // triton_kernels ROUND_DOWN: q = fp32(amax / 2^emax_e), scale bits = bits(q) & 0x7F800000,
  // multiplier as for triton_round_up. Differs from ocp_floor where q is an fp32 subnormal (code 0
  // with multiplier 0: the block flushes to zero) or rounds up to 2^-126 (code 1), and for NaN and
  // Inf amax (code 0xFF with multiplier 0).
  triton_round_down,
  // ue4m3 scale rules (NVFP4), formats.md (c).8 and (c).9.
  //
  // TransformerEngine (quantize_transpose_nvfp4.cuh): S_enc = min(2688 / G, FLT_MAX), 1 when G is
  // 0 or the quotient is 0; S_dec = fp32(1 / S_enc); block scale = e4m3_satfinite(fminf(amax *
  // fp32(S_enc * fp32(1/6)), FLT_MAX)), which may be 0 or subnormal; multiplier = fminf(fp32(1 /
  // fp32(scale * S_dec)), FLT_MAX). G is the global amax.
  nvfp4_transformer_engine,
  // torchao nvfp4_quantize: per_tensor_scale P = fp32(G / 2688); block scale =
  // e4m3(clamp(fp32(fp32(amax / 6) / P), 2^-6, 448)); multiplier = fp32(fp32(1 / P) / scale).
  // Single-level (TensorScaleSource::none): block scale = e4m3(clamp(fp32(amax / 6), 2^-6, 448)),
  // multiplier = fp32(1 / scale).
  nvfp4_torchao,
};

// rceil only: how amax / max_e is formed in fp32.
enum class ScaleRatio : std::uint8_t { reciprocal_multiply, divide };

// A NaN in a block: propagate makes amax NaN (torch.amax, the OCP spec: the scale becomes NaN);
// ignore leaves NaN elements out of the amax (fmaxf / PTX max reductions: TransformerEngine, the
// triton_kernels GPU kernel); they still convert, as NaN, with the element NaN rule.
enum class BlockNan : std::uint8_t { propagate, ignore };

// A block whose amax is Inf (e8m0 rules ocp_floor, ceil, even, rceil): nan_scale gives scale 0xFF
// and every element NaN (OCP spec, torchao); saturate gives scale 0xFE (2^127) and elements
// fp32(x * 2^-127), so Inf saturates under a saturating element conversion (TransformerEngine:
// cvt.rp.satfinite.ue8m0 of Inf is 0xFE). The triton rules and the NVFP4 recipes decide Inf by
// their own arithmetic and take nan_scale only.
enum class BlockInf : std::uint8_t { nan_scale, saturate };

// fp32-subnormal inputs (formats.md (d) row 16): keep them (torchao, TE); flush_elements turns each
// into a signed zero before anything else (MX paper's implementation); flush_block zeroes every
// element of a block whose amax is below 2^-126 (microxcaling mx_flush_fp32_subnorms). The scale is
// chosen from the amax either way.
enum class SubnormalInputs : std::uint8_t { keep, flush_elements, flush_block };

// NVFP4: where the global amax G comes from. from_data: max |x| over the whole tensor with the
// BlockNan rule; given_amax: QuantizeOptions::tensor_amax (a calibrated or delayed amax; TE reads
// it from a buffer); none: no per-tensor scale (TE with no amax buffer: S_enc = 1; torchao
// single-level).
enum class TensorScaleSource : std::uint8_t { from_data, given_amax, none };

// K not a multiple of the block size: reject (std::invalid_argument), or zero_pad: the last block
// of each row is completed with +0.0 inputs before quantization (cuda.tile block_quantize,
// triton_kernels, microxcaling do the same), so the stored rows hold k_blocks * block_size codes,
// the padding codes are +0 and take no part in any amax beyond a zero.
enum class KTail : std::uint8_t { reject, zero_pad };

struct QuantizeOptions {
  ScaleRule rule = ScaleRule::rceil;
  ScaleRatio ratio = ScaleRatio::reciprocal_multiply;
  BlockNan nan = BlockNan::propagate;
  BlockInf inf = BlockInf::nan_scale;
  SubnormalInputs subnormals = SubnormalInputs::keep;
  // Element rounding: any mode of the conversions, stochastic included (then quantize() needs one
  // random word per input element). Default: RNE, saturating, NaN -> the format's NaN / +max
  // (CUDA __NV_SATFINITE / cvt.rn.satfinite).
  ConvertOptions element{Rounding::nearest_even, Overflow::saturate};
  TensorScaleSource tensor_scale = TensorScaleSource::from_data;
  float tensor_amax = 0.0f;  // used when tensor_scale == given_amax
  KTail k_tail = KTail::reject;
};

// Throws std::invalid_argument naming the rule when the options do not fit the format: an e8m0
// rule with ue4m3 scales or the reverse, ratio != reciprocal_multiply outside rceil, inf ==
// saturate with a rule that does not take it, TensorScaleSource::given_amax with an e8m0 format
// (they have no per-tensor scale; from_data and none mean the same for them), a negative given
// tensor amax (NaN and Inf are taken: TransformerEngine turns a NaN amax into S_enc = FLT_MAX), or
// element options the conversions refuse.
void validate(const BlockFormat& f, const QuantizeOptions& o);

// Dequantization: V = X * P in fp32 (OCP MX §6.3, formats.md (c).11).
enum class ScaleDecode : std::uint8_t {
  standard,        // e8m0 0x00 = 2^-127, 0xFF = NaN (OCP, CUDA, every system but one)
  triton_kernels,  // upcast_from_mxfp_torch: e8m0 code << 23 as fp32, so 0x00 = 0.0, 0xFF = Inf
};
enum class DequantOverflow : std::uint8_t {
  infinity,      // an fp32 overflow gives +-Inf
  clamp_finite,  // clamped to +-FLT_MAX, except that e5m2 Inf elements stay Inf (triton_kernels)
};
enum class Nvfp4Decode : std::uint8_t {
  // fp32(P * fp32(tensor_scale * scale)): torchao NVFP4Tensor.dequantize (per_tensor_scale * scale
  // first), and the natural reading of the cuBLAS alpha * block scale.
  tensor_scale_first,
  // fp32(P * fp32(fp32(scale * G) * fp32(1 / 2688))): TransformerEngine dequantize_fp4_kernel,
  // using the global amax G recorded at quantization.
  transformer_engine,
};
struct DequantizeOptions {
  ScaleDecode scale_decode = ScaleDecode::standard;
  DequantOverflow overflow = DequantOverflow::infinity;
  Nvfp4Decode nvfp4 = Nvfp4Decode::tensor_scale_first;
};

std::string to_string(ScaleRule r);
std::optional<ScaleRule> parse_scale_rule(std::string_view name);
constexpr bool is_nvfp4_rule(ScaleRule r) {
  return r == ScaleRule::nvfp4_transformer_engine || r == ScaleRule::nvfp4_torchao;
}

// The choices of each system, complete (rule, NaN/Inf/subnormal policy, element conversion).
namespace recipes {

// OCP MX v1.0 §6.3 as written: FLOOR, a NaN or Inf makes the scale NaN, elements RNE saturating
// normals; fp32 subnormals kept.
QuantizeOptions ocp(Format element);
// The MX paper's implementation of Algorithm 1: as ocp, fp32-subnormal inputs quantize to zero.
QuantizeOptions mx_paper(Format element);
// microsoft/microxcaling quantize_mx: FLOOR from the exponent bits, elements rounded half away from
// zero ('nearest', its default), NaN/Inf give a NaN block, optional mx_flush_fp32_subnorms.
QuantizeOptions microxcaling(Format element, bool flush_fp32_subnorms = false);

enum class TorchaoScaleMode : std::uint8_t { floor, ceil, even, rceil };
// torchao to_mx (mx_tensor.py): torch.amax propagates NaN; a non-finite amax gives 0xFF; elements
// RNE; fp8 casts saturate finite overflow and keep the NaN sign (PyTorch >= 2.13).
QuantizeOptions torchao(Format element, TorchaoScaleMode mode = TorchaoScaleMode::floor);

// TransformerEngine MXFP8 (quantize_mxfp8.cuh, ptx::float_to_e8m0, exp2f_rcp): RCEIL by
// reciprocal multiply, block amax by fmaxf (NaN ignored), Inf amax -> 0xFE, cvt.rn.satfinite.
QuantizeOptions transformer_engine_mxfp8(Format element);

enum class TritonRounding : std::uint8_t { round_up, round_down };
// triton_kernels downcast_to_mxfp_torch: amax by torch max (NaN propagates; the GPU kernel's
// tl.max ignores NaN: set nan = BlockNan::ignore for it), fp8 clamp-then-cast, fp4 bit-level RNE
// with NaN -> +-6 by its sign bit.
QuantizeOptions triton_kernels(Format element, TritonRounding rounding = TritonRounding::round_up);

// TransformerEngine NVFP4, 1x16 blocks (quantize_transpose_nvfp4.cuh): global and block amax by
// fmaxf (NaN ignored), cvt.rn.satfinite.e2m1.
QuantizeOptions nvfp4_transformer_engine();
// torchao nvfp4_quantize: two-level (per-tensor scale from the data) or single-level.
QuantizeOptions nvfp4_torchao(bool two_level = true);

// The recipes by name, as golden-vector ids and the command line spell them: ocp, mx_paper,
// microxcaling, microxcaling_flush, torchao_floor / _ceil / _even / _rceil, te_mxfp8,
// triton_round_up / _down (MX recipes: the options for `element`), and nvfp4_te,
// nvfp4_te_stochastic (TransformerEngine's cvt.rs: 8 random bits per element), nvfp4_torchao,
// nvfp4_torchao_single (NVFP4: `element` is not read). nullopt for an unknown name.
struct NamedRecipe {
  const char* name;
  bool mx;  // an MX (e8m0) recipe; otherwise an NVFP4 one
};
std::span<const NamedRecipe> named();
std::optional<QuantizeOptions> by_name(std::string_view name, Format element);
// "ocp, mx_paper, ..., nvfp4_torchao_single": for messages that list the choices.
std::string names();

}  // namespace recipes

}  // namespace blockscale
