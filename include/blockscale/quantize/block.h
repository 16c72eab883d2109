// SPDX-License-Identifier: Apache-2.0
// Quantization of single blocks: the scale a rule picks for an amax, and the codes of one block.
// quantize() in tensor.h runs exactly these steps over whole tensors (same code, vectorised rows).
#pragma once

#include <cstdint>
#include <span>

#include "blockscale/quantize/block_format.h"
#include "blockscale/quantize/options.h"

namespace blockscale {

// NVFP4 per-tensor quantities (all 1 and amax NaN for the e8m0 formats and for
// TensorScaleSource::none).
struct TensorScale {
  float amax = 0.0f;    // the global amax G the rule used (NaN when there is none)
  float encode = 1.0f;  // TE S_enc; torchao fp32(1 / per_tensor_scale)
  float decode = 1.0f;  // the stored fp32 per-tensor scale: TE fp32(1 / S_enc); torchao
                        // per_tensor_scale = fp32(G / 2688)
};

// The per-tensor scale for a global amax. Throws std::invalid_argument on invalid options.
TensorScale tensor_scale_for_amax(const BlockFormat& f, const QuantizeOptions& o, float global_amax);
// The one the options ask for, for the whole input `x` (from_data: max |x| with the BlockNan rule,
// given_amax: o.tensor_amax, none: 1).
TensorScale tensor_scale_for(const BlockFormat& f, const QuantizeOptions& o, std::span<const float> x);

// max |x| in fp32 under the BlockNan rule; with `ignore`, a block of NaNs has amax 0 (fmaxf from
// 0.0f). NaN results are the canonical 0x7FFFFFFF.
float block_amax(std::span<const float> x, BlockNan nan);

// What a rule picks for one block.
// SubnormalInputs::flush_block shows as multiplier 0 (x * 0: signed zeros, as microxcaling's
// A * 0 mask).
struct BlockScale {
  std::uint8_t code = 0;    // e8m0 or ue4m3 code
  float multiplier = 0.0f;  // elements become fp32(x * multiplier) before conversion (may be NaN)
};
BlockScale block_scale_for_amax(const BlockFormat& f, const QuantizeOptions& o, const TensorScale& ts,
                                float amax);
// The same for many maxima at once (one rule set-up, vectorised): codes[i] and multipliers[i] for
// amax[i]. All three spans have the same size.
void block_scales_for_amax(const BlockFormat& f, const QuantizeOptions& o, const TensorScale& ts,
                           std::span<const float> amax, std::span<std::uint8_t> codes,
                           std::span<float> multipliers);

// Quantizes one block: x.size() elements, at most f.block_size (fewer: the block's tail is zero
// padding, which cannot change the result). codes.size() == x.size(); one random word per element
// in rbits for stochastic element rounding, none otherwise. Returns the scale code. Throws
// std::invalid_argument on invalid options or sizes.
std::uint8_t quantize_block(std::span<const float> x, const BlockFormat& f, const QuantizeOptions& o,
                            const TensorScale& ts, std::span<std::uint8_t> codes,
                            std::span<const std::uint32_t> rbits = {});

// fp32 value of one block scale, per-tensor scale included (DequantizeOptions decide the e8m0
// decode and the NVFP4 order; `ts` supplies decode and amax).
float scale_value(const BlockFormat& f, std::uint8_t code, const TensorScale& ts,
                  const DequantizeOptions& d = {});
// fp32 value of element code `element_code` of a block with scale code `scale_code`.
float dequantize_value(const BlockFormat& f, std::uint8_t element_code, std::uint8_t scale_code,
                       const TensorScale& ts, const DequantizeOptions& d = {});

}  // namespace blockscale
