// SPDX-License-Identifier: Apache-2.0
// The engine behind block.h and tensor.h: one object per (format, options, tensor scale) that
// turns rows of fp32 inputs into scale codes and element codes. The block API and the tensor path
// both call quantize_row, so they cannot drift apart.
#pragma once

#include <array>
#include <bit>
#include <cfloat>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "blockscale/formats/convert.h"
#include "blockscale/quantize/block.h"

namespace blockscale::quantize_detail {

// NVIDIA GPUs return this NaN from every fp32 operation with a NaN result (PTX ISA 9.7.3: "NaN
// results are canonical"); the reproduced systems run there, so a NaN product takes this form
// whatever the CPU's NaN propagation would give.
inline constexpr std::uint32_t kCanonicalNan = 0x7FFFFFFFu;

// The constants of a scale rule.
struct RuleParams {
  std::uint32_t emax_e = 0;       // floor(log2(max_e)) of the element format
  std::uint32_t even_half = 0;    // torchao EVEN: 2^(22 - mantissa bits)
  std::uint32_t inf_code = 0xFF;  // BlockInf: 0xFF (nan_scale) or 0xFE (saturate)
  float max_e = 0.0f;             // largest finite element value
  float inv_max_e = 0.0f;         // fp32(1 / max_e)
  float pow2_emax_e = 0.0f;       // 2^emax_e
  float tensor_encode = 1.0f;     // TensorScale::encode
  float tensor_decode = 1.0f;     // TensorScale::decode
  float te_block_factor = 0.0f;   // TE: fp32(S_enc * fp32(1/6))
};

// Per-thread working memory of quantize_row (grown on demand).
struct RowScratch {
  std::vector<float> scaled;        // fp32(x * m), one per element
  std::vector<std::uint32_t> amax;  // one per block
  std::vector<float> value;         // the value a rule rounds, one per block
  std::vector<float> mult;          // one per block
  void reserve(std::size_t n, std::size_t blocks);
};

class BlockQuantizer {
 public:
  // Validates f and o (std::invalid_argument).
  BlockQuantizer(const BlockFormat& f, const QuantizeOptions& o, const TensorScale& ts);

  // The scale for one block amax (any NaN is taken as the canonical NaN).
  BlockScale scale(float amax) const;
  // Scales for n block maxima (non-negative fp32 bits or kCanonicalNan); value: n floats of
  // working memory.
  void scales(const std::uint32_t* amax, std::size_t n, std::uint8_t* code, float* mult, float* value) const;
  // max |x| of n inputs under the options' NaN and subnormal rules, as fp32 bits (NaN canonical).
  std::uint32_t amax_bits(const float* x, std::size_t n) const;

  // Quantizes n inputs, n a multiple of the block size: codes[n], scale_codes[n / block_size].
  // rbits: n words for stochastic rounding, else null.
  void quantize_row(const float* x, std::size_t n, std::uint8_t* codes, std::uint8_t* scale_codes,
                    const std::uint32_t* rbits, RowScratch& scratch) const;

  // The NVFP4 rules' element multiplier for the ue4m3 scale code c < 0x80: the arithmetic of
  // scales() for one code (the fused kernels tabulate it once per tensor).
  float nvfp4_multiplier(std::uint32_t c) const;

  // What the fused row kernels (fused.h) need to reproduce quantize_row bit for bit.
  const BlockFormat& format() const { return format_; }
  const QuantizeOptions& options() const { return options_; }
  const RuleParams& params() const { return params_; }
  Format scale_format() const { return scale_format_; }
  const ConvertOptions& scale_rounding() const { return scale_rounding_; }

 private:
  BlockFormat format_;
  QuantizeOptions options_;
  RuleParams params_;
  Format scale_format_ = Format::float8_e8m0fnu;  // what the rule rounds to, and how
  ConvertOptions scale_rounding_{};
};

// Decoding tables for one tensor: V = fp32(P * X) per DequantizeOptions.
class Dequantizer {
 public:
  Dequantizer(const BlockFormat& f, const TensorScale& ts, const DequantizeOptions& d);
  float value(std::uint8_t element_code, std::uint8_t scale_code) const {
    const float p = element_[element_code & element_mask_];
    const float v = p * scale_[scale_code];
    if (!clamp_finite_) return v;
    // upcast_from_mxfp_torch: clamp(finfo.min, finfo.max), then e5m2 Inf elements put back.
    if (std::isinf(p)) return p;
    if (std::isinf(v)) return std::copysign(FLT_MAX, v);
    return v;
  }

 private:
  std::array<float, 256> element_{};
  std::array<float, 256> scale_{};
  std::uint8_t element_mask_ = 0xFF;
  bool clamp_finite_ = false;
};

}  // namespace blockscale::quantize_detail
