// SPDX-License-Identifier: Apache-2.0
// Scale rules (formats.md (c)) and the row engine. Every scale and element rounding is a bulk
// conversion of the formats library, with the options of the CUDA instruction the system uses; the
// bit operations left here are the systems' own definitions (torchao EVEN, the triton_kernels
// masks, exponent arithmetic), not roundings of ours.
#include "quantizer.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "blockscale/formats/bulk.h"
#include "blockscale/formats/detail/enum_check.h"
#include "blockscale/formats/detail/ieee_mode.h"
#include "blockscale/formats/presets.h"
#include "fused.h"


namespace blockscale::quantize_detail {

namespace {

// Clones by CPU feature (not by arch=, which the resolver matches against the CPU model and so
// misses virtualised CPUs). Every clone runs the same integer and IEEE fp32 operations, so every
// clone gives the same bits.
// Not under a sanitizer: the clones' IFUNC resolvers run in the dynamic loader, before the
// sanitizer's runtime has started, and an instrumented resolver crashes there (GCC 12, TSan).
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_ADDRESS__) && \
    !defined(__SANITIZE_THREAD__)
#define BLOCKSCALE_QUANTIZE_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define BLOCKSCALE_QUANTIZE_CLONES
#endif

constexpr std::uint32_t kInfBits = 0x7F800000u;
constexpr std::uint32_t kMinNormalBits = 0x00800000u;
constexpr std::uint32_t kTwoPowMinus127Bits = 0x00400000u;  // fp32 subnormal 2^-127

inline float from_bits(std::uint32_t u) { return std::bit_cast<float>(u); }
inline std::uint32_t to_bits(float f) { return std::bit_cast<std::uint32_t>(f); }

// Selects as mask arithmetic: with ?: chains GCC's if-conversion gives up ("complicated PHI") and
// the loops stop vectorising (the same trick as formats/detail/round.h).
inline std::uint32_t mask_of(bool c) { return 0u - static_cast<std::uint32_t>(c); }
inline std::uint32_t sel(bool c, std::uint32_t a, std::uint32_t b) {
  const std::uint32_t m = mask_of(c);
  return (a & m) | (b & ~m);
}
inline float fsel(bool c, float a, float b) { return from_bits(sel(c, to_bits(a), to_bits(b))); }

// 2^-e for the e8m0 code c = e + 127, exactly (TE exp2f_rcp, torchao
// _e8m0_scale_to_reciprocal_fp32): 0xFF -> NaN, 0xFE -> 2^-127 (an fp32 subnormal).
inline std::uint32_t e8m0_reciprocal_bits(std::uint32_t c) {
  return sel(c == 0xFF, kCanonicalNan, sel(c == 0xFE, kTwoPowMinus127Bits, (254u - c) << 23));
}

// fminf(x, FLT_MAX) for x >= 0 or NaN (C fmin returns the non-NaN operand), as selects.
inline float fmin_flt_max(float x) { return fsel((x != x) | (x > FLT_MAX), FLT_MAX, x); }

// Value of a ue4m3 code c < 0x80, as arithmetic the loops can vectorise (a table lookup would need a
// gather). The constructor checks it against the formats library's to_float for all 128 codes.
inline float ue4m3_value(std::uint32_t c) {
  const float normal = from_bits((((c >> 3) + 120u) << 23) | ((c & 7u) << 20));
  const float subnormal = static_cast<float>(static_cast<std::int32_t>(c)) * 0x1p-9f;
  return fsel(c == 0x7F, from_bits(kCanonicalNan), fsel(c < 8, subnormal, normal));
}

// torch.clamp(s, lo, hi): NaN passes through.
inline float clamp_keep_nan(float s, float lo, float hi) {
  return fsel(s < lo, lo, fsel(s > hi, hi, s));  // NaN compares false both times
}

// Blocks ahead to prefetch in block_maxima (prefetching past the end of the input is harmless).
constexpr std::size_t kPrefetchBlocks = 64;

// ---- Block maxima: |x| as fp32 bits. For non-negative floats the integer order is the value
// ---- order and every NaN is above 0x7F800000, so one integer max also finds NaN. Exact and
// ---- associative: the result does not depend on the vector width.
template <int BS, bool kFlushElements, bool kIgnoreNan>
BLOCKSCALE_QUANTIZE_CLONES void block_maxima(const float* __restrict x, std::size_t blocks,
                                             std::uint32_t* __restrict out) {
  for (std::size_t j = 0; j < blocks; ++j) {
    // This is the first read of the input (from memory): ask for the lines a chunk ahead.
    __builtin_prefetch(x + (j + kPrefetchBlocks) * BS);
    std::uint32_t m = 0;
    for (int i = 0; i < BS; ++i) {
      std::uint32_t a = std::bit_cast<std::uint32_t>(x[j * BS + i]) & 0x7FFFFFFFu;
      if constexpr (kFlushElements) a &= mask_of(a >= kMinNormalBits);
      if constexpr (kIgnoreNan) a &= mask_of(a <= kInfBits);
      m = std::max(m, a);
    }
    out[j] = m;
  }
}

template <int BS>
void maxima_of(bool flush, bool ignore, const float* x, std::size_t blocks, std::uint32_t* out) {
  if (flush && ignore) {
    block_maxima<BS, true, true>(x, blocks, out);
  } else if (flush) {
    block_maxima<BS, true, false>(x, blocks, out);
  } else if (ignore) {
    block_maxima<BS, false, true>(x, blocks, out);
  } else {
    block_maxima<BS, false, false>(x, blocks, out);
  }
}

// The same maximum over any number of inputs (global amax, single blocks).
template <bool kFlushElements, bool kIgnoreNan>
BLOCKSCALE_QUANTIZE_CLONES std::uint32_t max_bits(const float* __restrict x, std::size_t n) {
  std::uint32_t m = 0;
  for (std::size_t i = 0; i < n; ++i) {
    std::uint32_t a = std::bit_cast<std::uint32_t>(x[i]) & 0x7FFFFFFFu;
    if constexpr (kFlushElements) a &= mask_of(a >= kMinNormalBits);
    if constexpr (kIgnoreNan) a &= mask_of(a <= kInfBits);
    m = std::max(m, a);
  }
  return m;
}

std::uint32_t max_bits_of(bool flush, bool ignore, const float* x, std::size_t n) {
  if (flush && ignore) return max_bits<true, true>(x, n);
  if (flush) return max_bits<true, false>(x, n);
  if (ignore) return max_bits<false, true>(x, n);
  return max_bits<false, false>(x, n);
}

// ---- y = fp32(x * m[block]), a NaN product as the canonical NaN; under flush_elements an fp32
// ---- subnormal input first becomes a signed zero.
template <int BS, bool kFlushElements>
BLOCKSCALE_QUANTIZE_CLONES void apply_multipliers(const float* __restrict x, std::size_t blocks,
                                                  const float* __restrict m, float* __restrict y) {
  for (std::size_t j = 0; j < blocks; ++j) {
    const float mj = m[j];
    // Kept as a loop: fully unrolled, GCC vectorises across blocks with permutes instead of one
    // broadcast multiplier per block.
#pragma GCC unroll 1
    for (int i = 0; i < BS; ++i) {
      std::uint32_t u = std::bit_cast<std::uint32_t>(x[j * BS + i]);
      if constexpr (kFlushElements) u &= mask_of((u & 0x7FFFFFFFu) >= kMinNormalBits) | 0x80000000u;
      const std::uint32_t p = std::bit_cast<std::uint32_t>(std::bit_cast<float>(u) * mj);
      y[j * BS + i] = std::bit_cast<float>(sel((p & 0x7FFFFFFFu) > kInfBits, kCanonicalNan, p));
    }
  }
}

// ---- Scale rules over block maxima (non-negative fp32 bits or the canonical NaN). Each rule is a
// ---- vectorisable loop that forms the value to round, one bulk conversion of the formats library
// ---- with the options of the CUDA instruction the system uses (rounding_options), and a
// ---- vectorisable loop for the special cases and the multiplier.

// ocp_floor, ceil, rceil: the value the e8m0 conversion rounds.
template <ScaleRule R, bool kDivide>
BLOCKSCALE_QUANTIZE_CLONES void mx_rounded_value(const std::uint32_t* __restrict amax, std::size_t n, float max_e,
                                                 float inv_max_e, float* __restrict v) {
  for (std::size_t i = 0; i < n; ++i) {
    const float a = from_bits(amax[i]);
    if constexpr (R == ScaleRule::rceil) {
      // fp32(amax * fp32(1/max_e)) or fp32(amax / max_e), then cvt.rp.satfinite.ue8m0x2.f32.
      v[i] = kDivide ? a / max_e : a * inv_max_e;
    } else {
      // ocp_floor: cvt.rz.satfinite.ue8m0 of amax is its biased exponent (0 and fp32 subnormals
      // -> 0x00). ceil: cvt.rp.ue8m0 without saturation, where a finite amax above 2^127
      // overflows to 0xFF, the biased exponent of 2^128.
      v[i] = a;
    }
  }
}

// ocp_floor, ceil, even, rceil, after the conversion (`code` holds it; even has none): the e8m0
// code is E' - emax_e clamped at 0 (E' the biased exponent of the rounded amax; 255 = 2^128), or
// the rounded quotient itself for rceil; NaN and Inf as the options say.
template <ScaleRule R>
BLOCKSCALE_QUANTIZE_CLONES void mx_finish(const std::uint32_t* __restrict amax, std::size_t n, std::uint32_t emax_e,
                                          std::uint32_t even_half, std::uint32_t inf_code,
                                          std::uint8_t* __restrict code, float* __restrict mult) {
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t a = amax[i];
    bool inf = a == kInfBits;
    std::uint32_t c = code[i];
    if constexpr (R != ScaleRule::rceil) {
      std::uint32_t biased = c;
      if constexpr (R == ScaleRule::even) {
        // torchao EVEN: (bits + 2^(22 - mbits)) & 0xFF800000, then FLOOR; 2^128 counts as Inf.
        const std::uint32_t r = (a + even_half) & 0xFF800000u;
        inf = inf | (r == kInfBits);
        biased = r >> 23;
      }
      c = (biased - emax_e) & mask_of(biased > emax_e);
    }
    c = sel(inf, inf_code, c);
    c = sel(a > kInfBits, 0xFFu, c);
    code[i] = static_cast<std::uint8_t>(c);
    mult[i] = from_bits(e8m0_reciprocal_bits(c));
  }
}

// triton_kernels downcast_to_mxfp_torch: the fp32 dequant scale with only its exponent field kept
// (after adding 0x7FFFFF for ROUND_UP, uint32 wrap-around included); quant scale 1/scale, or 0.
template <bool kRoundUp>
BLOCKSCALE_QUANTIZE_CLONES void triton_rule(const std::uint32_t* __restrict amax, std::size_t n, float divisor,
                                            std::uint8_t* __restrict code, float* __restrict mult) {
  for (std::size_t i = 0; i < n; ++i) {
    const float x = from_bits(amax[i]);
    std::uint32_t s = 0;
    if constexpr (kRoundUp) {
      s = (to_bits(x / divisor) + 0x007FFFFFu) & kInfBits;
    } else {
      s = to_bits(x / divisor) & kInfBits;
    }
    code[i] = static_cast<std::uint8_t>(s >> 23);
    mult[i] = 1.0f / from_bits(s | (kInfBits & mask_of(s == 0)));  // s == 0: 1 / Inf = 0
  }
}

// TransformerEngine NVFP4: compute_decoding_scaling_factor (quantization_and_transposition_SF,
// with its fminf) rounds fminf(amax * fp32(S_enc * fp32(1/6)), FLT_MAX) to e4m3 (satfinite)...
BLOCKSCALE_QUANTIZE_CLONES void nvfp4_te_value(const std::uint32_t* __restrict amax, std::size_t n, float factor,
                                               float* __restrict v) {
  for (std::size_t i = 0; i < n; ++i) v[i] = fmin_flt_max(from_bits(amax[i]) * factor);
}
// ... and block_scale_inverse of quantize_transpose_nvfp4.cuh is fminf(1 / (scale * S_dec), FLT_MAX).
BLOCKSCALE_QUANTIZE_CLONES void nvfp4_te_finish(std::size_t n, float decode, const std::uint8_t* __restrict code,
                                                float* __restrict mult) {
  for (std::size_t i = 0; i < n; ++i) mult[i] = fmin_flt_max(1.0f / (ue4m3_value(code[i]) * decode));
}

// torchao nvfp4_quantize, two-level: clamp(fp32(fp32(amax / 6) / P), 2^-6, 448) to e4m3, then
// multiplier fp32(fp32(1 / P) / scale). Single-level is the same arithmetic with P = 1 (x / 1 and
// 1 / 1 are exact).
BLOCKSCALE_QUANTIZE_CLONES void nvfp4_torchao_value(const std::uint32_t* __restrict amax, std::size_t n, float decode,
                                                    float* __restrict v) {
  constexpr float kMinScale = 0x1p-6f;  // torch.finfo(torch.float8_e4m3fn).tiny
  for (std::size_t i = 0; i < n; ++i) v[i] = clamp_keep_nan((from_bits(amax[i]) / 6.0f) / decode, kMinScale, 448.0f);
}
BLOCKSCALE_QUANTIZE_CLONES void nvfp4_torchao_finish(std::size_t n, float encode, const std::uint8_t* __restrict code,
                                                     float* __restrict mult) {
  for (std::size_t i = 0; i < n; ++i) mult[i] = encode / ue4m3_value(code[i]);
}

}  // namespace

BlockQuantizer::BlockQuantizer(const BlockFormat& f, const QuantizeOptions& o, const TensorScale& ts)
    : format_(f), options_(o) {
  validate(f, o);
  // A per-tensor scale is a magnitude (NaN and Inf come from NaN and zero amaxes and are the
  // systems' own results); a negative one would flip every element's sign and give scale codes
  // with the ue4m3 sign bit set.
  for (const float v : {ts.encode, ts.decode}) {
    if (!std::isnan(v) && std::signbit(v)) {
      throw std::invalid_argument("tensor scale: encode " + std::to_string(ts.encode) + " and decode " +
                                  std::to_string(ts.decode) + " must not be negative");
    }
  }
  const Format el = f.element;
  RuleParams& p = params_;
  p.emax_e = static_cast<std::uint32_t>(emax(el));
  p.even_half = 1u << (22 - info(el).mantissa_bits);
  p.max_e = to_float(el, max_finite_code(el));
  p.inv_max_e = 1.0f / p.max_e;
  p.pow2_emax_e = std::ldexp(1.0f, emax(el));
  p.inf_code = o.inf == BlockInf::saturate ? 0xFEu : 0xFFu;
  p.tensor_encode = ts.encode;
  p.tensor_decode = ts.decode;
  constexpr float kInv6 = 1.0f / 6.0f;  // TypeExtrema<fp4e2m1>::max reciprocal, as TE writes it
  p.te_block_factor = ts.encode * kInv6;
  // The scale roundings, as the CUDA conversions the systems use.
  constexpr Format e8m0 = Format::float8_e8m0fnu;
  switch (o.rule) {
    case ScaleRule::ocp_floor:  // cvt.rz.satfinite.ue8m0
      scale_format_ = e8m0;
      scale_rounding_ = presets::cuda(e8m0, Format::float32, false, Rounding::toward_zero, Overflow::saturate);
      break;
    case ScaleRule::ceil:  // cvt.rp.ue8m0 (no saturation: 2^128 is 0xFF)
      scale_format_ = e8m0;
      scale_rounding_ = presets::cuda(e8m0, Format::float32, false, Rounding::upward, Overflow::infinity);
      break;
    case ScaleRule::rceil:  // cvt.rp.satfinite.ue8m0x2.f32
      scale_format_ = e8m0;
      scale_rounding_ = presets::cuda(e8m0, Format::float32, false, Rounding::upward, Overflow::saturate);
      break;
    case ScaleRule::nvfp4_transformer_engine:  // __nv_fp8_e4m3(float): RNE satfinite
    case ScaleRule::nvfp4_torchao:             // Tensor.to(float8_e4m3fn) of values within range
      scale_format_ = Format::float8_e4m3fn;
      scale_rounding_ = presets::cuda(Format::float8_e4m3fn);
      break;
    case ScaleRule::even:
    case ScaleRule::triton_round_up:
    case ScaleRule::triton_round_down:
      break;  // bit operations on amax, no conversion
  }
  for (std::uint32_t c = 0; c < 0x80; ++c) {
    const float want = to_float(Format::float8_ue4m3, c), got = ue4m3_value(c);
    if (to_bits(want) != to_bits(got) && !(std::isnan(want) && std::isnan(got))) {
      throw std::logic_error("ue4m3 decode of code " + std::to_string(c) + " disagrees with the formats library");
    }
  }
}

void BlockQuantizer::scales(const std::uint32_t* amax, std::size_t n, std::uint8_t* code, float* mult,
                            float* value) const {
  const RuleParams& p = params_;
  const auto round = [&] {
    convert(std::span<const float>(value, n), scale_format_, std::span<std::uint8_t>(code, n), scale_rounding_);
  };
  switch (options_.rule) {
    case ScaleRule::ocp_floor:
      mx_rounded_value<ScaleRule::ocp_floor, false>(amax, n, p.max_e, p.inv_max_e, value);
      round();
      mx_finish<ScaleRule::ocp_floor>(amax, n, p.emax_e, p.even_half, p.inf_code, code, mult);
      break;
    case ScaleRule::ceil:
      mx_rounded_value<ScaleRule::ceil, false>(amax, n, p.max_e, p.inv_max_e, value);
      round();
      mx_finish<ScaleRule::ceil>(amax, n, p.emax_e, p.even_half, p.inf_code, code, mult);
      break;
    case ScaleRule::even:
      mx_finish<ScaleRule::even>(amax, n, p.emax_e, p.even_half, p.inf_code, code, mult);
      break;
    case ScaleRule::rceil:
      if (options_.ratio == ScaleRatio::divide) {
        mx_rounded_value<ScaleRule::rceil, true>(amax, n, p.max_e, p.inv_max_e, value);
      } else {
        mx_rounded_value<ScaleRule::rceil, false>(amax, n, p.max_e, p.inv_max_e, value);
      }
      round();
      mx_finish<ScaleRule::rceil>(amax, n, p.emax_e, p.even_half, p.inf_code, code, mult);
      break;
    case ScaleRule::triton_round_up: triton_rule<true>(amax, n, p.max_e, code, mult); break;
    case ScaleRule::triton_round_down: triton_rule<false>(amax, n, p.pow2_emax_e, code, mult); break;
    case ScaleRule::nvfp4_transformer_engine:
      nvfp4_te_value(amax, n, p.te_block_factor, value);
      round();
      nvfp4_te_finish(n, p.tensor_decode, code, mult);
      break;
    case ScaleRule::nvfp4_torchao:
      nvfp4_torchao_value(amax, n, p.tensor_decode, value);
      round();
      nvfp4_torchao_finish(n, p.tensor_encode, code, mult);
      break;
  }
  // microxcaling mx_flush_fp32_subnorms: A * (shared_exp > -127), i.e. amax below 2^-126.
  if (options_.subnormals == SubnormalInputs::flush_block) {
    for (std::size_t i = 0; i < n; ++i) mult[i] = amax[i] < kMinNormalBits ? 0.0f : mult[i];
  }
}

float BlockQuantizer::nvfp4_multiplier(std::uint32_t c) const {
  // As nvfp4_te_finish and nvfp4_torchao_finish.
  if (options_.rule == ScaleRule::nvfp4_transformer_engine) {
    return fmin_flt_max(1.0f / (ue4m3_value(c) * params_.tensor_decode));
  }
  return params_.tensor_encode / ue4m3_value(c);
}

BlockScale BlockQuantizer::scale(float amax) const {
  std::uint32_t a = to_bits(amax);
  a = (a & 0x7FFFFFFFu) > kInfBits ? kCanonicalNan : a;
  BlockScale s;
  float value = 0.0f;
  scales(&a, 1, &s.code, &s.multiplier, &value);
  return s;
}

std::uint32_t BlockQuantizer::amax_bits(const float* x, std::size_t n) const {
  const bool flush = options_.subnormals == SubnormalInputs::flush_elements;
  const bool ignore = options_.nan == BlockNan::ignore;
  // Where the fused kernels run, their hand-written loop takes the same maximum (four
  // accumulators and software prefetch keep more loads in flight when x streams from memory).
  const bool fused = fused_kernels_enabled();
  std::uint32_t m = 0;
  // Chunks in parallel; an integer max is exact and order-free, so threads cannot change it.
  constexpr std::size_t kChunk = std::size_t{1} << 16;
  const auto chunks = static_cast<std::int64_t>((n + kChunk - 1) / kChunk);
#if defined(_OPENMP)
#pragma omp parallel for schedule(static) reduction(max : m) if (chunks > 1)
#endif
  for (std::int64_t c = 0; c < chunks; ++c) {
    const detail::IeeeMode thread_ieee;  // each thread's own mode (detail/ieee_mode.h)
    const std::size_t lo = static_cast<std::size_t>(c) * kChunk;
    const std::size_t len = std::min(kChunk, n - lo);
    if (fused) {
      // Flushing subnormal magnitudes to zero is monotone, so it can follow the max.
      const std::uint32_t f = fused_abs_max_bits(x + lo, len, ignore);
      m = std::max(m, flush && f < kMinNormalBits ? 0u : f);
    } else {
      m = std::max(m, max_bits_of(flush, ignore, x + lo, len));
    }
  }
  return m > kInfBits ? kCanonicalNan : m;
}

void BlockQuantizer::quantize_row(const float* x, std::size_t n, std::uint8_t* codes, std::uint8_t* scale_codes,
                                  const std::uint32_t* rbits, RowScratch& scratch) const {
  const auto bs = static_cast<std::size_t>(format_.block_size);
  const std::size_t blocks = n / bs;
  scratch.reserve(n, blocks);
  std::uint32_t* maxima = scratch.amax.data();
  float* mult = scratch.mult.data();
  float* y = scratch.scaled.data();
  const bool flush = options_.subnormals == SubnormalInputs::flush_elements;
  const bool ignore = options_.nan == BlockNan::ignore;
  if (bs == 16) {
    maxima_of<16>(flush, ignore, x, blocks, maxima);
  } else {
    maxima_of<32>(flush, ignore, x, blocks, maxima);
  }
  for (std::size_t j = 0; j < blocks; ++j) maxima[j] = maxima[j] > kInfBits ? kCanonicalNan : maxima[j];
  scales(maxima, blocks, scale_codes, mult, scratch.value.data());
  if (bs == 16) {
    flush ? apply_multipliers<16, true>(x, blocks, mult, y) : apply_multipliers<16, false>(x, blocks, mult, y);
  } else {
    flush ? apply_multipliers<32, true>(x, blocks, mult, y) : apply_multipliers<32, false>(x, blocks, mult, y);
  }
  convert(std::span<const float>(y, n), format_.element, std::span<std::uint8_t>(codes, n), options_.element,
          rbits ? std::span<const std::uint32_t>(rbits, n) : std::span<const std::uint32_t>());
}

void RowScratch::reserve(std::size_t n, std::size_t blocks) {
  if (scaled.size() < n) scaled.resize(n);
  if (amax.size() < blocks) {
    amax.resize(blocks);
    value.resize(blocks);
    mult.resize(blocks);
  }
}

namespace {

// The format and every option before any table is read (code_mask reads the format table).
const BlockFormat& checked(const BlockFormat& f, const DequantizeOptions& d) {
  validate(f);
  detail::require_enumerator(d.scale_decode, ScaleDecode::triton_kernels, "ScaleDecode", "DequantizeOptions::scale_decode");
  detail::require_enumerator(d.overflow, DequantOverflow::clamp_finite, "DequantOverflow", "DequantizeOptions::overflow");
  detail::require_enumerator(d.nvfp4, Nvfp4Decode::transformer_engine, "Nvfp4Decode", "DequantizeOptions::nvfp4");
  return f;
}

}  // namespace

Dequantizer::Dequantizer(const BlockFormat& f, const TensorScale& ts, const DequantizeOptions& d)
    : element_mask_(static_cast<std::uint8_t>(code_mask(checked(f, d).element))),
      clamp_finite_(d.overflow == DequantOverflow::clamp_finite) {
  for (std::uint32_t c = 0; c < 256; ++c) {
    element_[c] = to_float(f.element, c & element_mask_);
    scale_[c] = scale_value(f, static_cast<std::uint8_t>(c), ts, d);
  }
}

}  // namespace blockscale::quantize_detail

namespace blockscale {

using quantize_detail::BlockQuantizer;
using quantize_detail::kCanonicalNan;

TensorScale tensor_scale_for_amax(const BlockFormat& f, const QuantizeOptions& o, float global_amax) {
  const detail::IeeeMode ieee;
  validate(f, o);
  TensorScale ts{std::numeric_limits<float>::quiet_NaN(), 1.0f, 1.0f};
  if (!has_tensor_scale(f) || o.tensor_scale == TensorScaleSource::none) return ts;
  if (global_amax < 0.0f) {
    throw std::invalid_argument("the tensor amax " + std::to_string(global_amax) +
                                " is a magnitude and must not be negative");
  }
  // A NaN amax as the canonical NaN, and -0 as +0 (an amax is a magnitude; torchao's 1 / (G / 2688)
  // would otherwise turn its sign into -Inf).
  const float g = std::isnan(global_amax) ? std::bit_cast<float>(kCanonicalNan) : global_amax == 0.0f ? 0.0f : global_amax;
  ts.amax = g;
  if (o.rule == ScaleRule::nvfp4_transformer_engine) {
    // compute_global_encode_scaling_factor_FP4<448>: fminf turns a NaN quotient into FLT_MAX.
    constexpr float kFp8TimesFp4Max = 448.0f * 6.0f;
    float enc = std::fmin(kFp8TimesFp4Max / g, FLT_MAX);
    if (g == 0.0f || enc == 0.0f) enc = 1.0f;
    ts.encode = enc;
    // `const float S_dec = 1.0 / S_enc;` is a double division rounded to float; with 53 >= 2*24+2
    // bits the double rounding is innocuous (Figueroa 1995), so this equals fp32 1 / S_enc.
    ts.decode = static_cast<float>(1.0 / static_cast<double>(enc));
    return ts;
  }
  // torchao per_tensor_amax_to_scale: amax / (F8E4M3_MAX * F4_E2M1_MAX), and 1.0 / that.
  ts.decode = g / 2688.0f;
  ts.encode = 1.0f / ts.decode;
  return ts;
}

float block_amax(std::span<const float> x, BlockNan nan) {
  const detail::IeeeMode ieee;
  QuantizeOptions o;
  o.nan = nan;
  const BlockQuantizer q(block_formats::mxfp8_e4m3, o, TensorScale{});
  return std::bit_cast<float>(q.amax_bits(x.data(), x.size()));
}

TensorScale tensor_scale_for(const BlockFormat& f, const QuantizeOptions& o, std::span<const float> x) {
  const detail::IeeeMode ieee;
  validate(f, o);
  if (!has_tensor_scale(f) || o.tensor_scale == TensorScaleSource::none) return tensor_scale_for_amax(f, o, 0.0f);
  if (o.tensor_scale == TensorScaleSource::given_amax) return tensor_scale_for_amax(f, o, o.tensor_amax);
  const BlockQuantizer q(f, o, TensorScale{});
  return tensor_scale_for_amax(f, o, std::bit_cast<float>(q.amax_bits(x.data(), x.size())));
}

BlockScale block_scale_for_amax(const BlockFormat& f, const QuantizeOptions& o, const TensorScale& ts, float amax) {
  const detail::IeeeMode ieee;
  const BlockQuantizer q(f, o, ts);
  return q.scale(std::isnan(amax) ? std::bit_cast<float>(kCanonicalNan) : std::fabs(amax));
}

void block_scales_for_amax(const BlockFormat& f, const QuantizeOptions& o, const TensorScale& ts,
                           std::span<const float> amax, std::span<std::uint8_t> codes, std::span<float> multipliers) {
  const detail::IeeeMode ieee;
  if (codes.size() != amax.size() || multipliers.size() != amax.size()) {
    throw std::invalid_argument("block_scales_for_amax: " + std::to_string(amax.size()) + " maxima, " +
                                std::to_string(codes.size()) + " codes and " + std::to_string(multipliers.size()) +
                                " multipliers");
  }
  const BlockQuantizer q(f, o, ts);
  constexpr std::size_t kChunk = 1024;
  std::uint32_t a[kChunk];
  float value[kChunk];
  for (std::size_t i0 = 0; i0 < amax.size(); i0 += kChunk) {
    const std::size_t n = std::min(kChunk, amax.size() - i0);
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint32_t u = std::bit_cast<std::uint32_t>(amax[i0 + i]) & 0x7FFFFFFFu;
      a[i] = u > 0x7F800000u ? kCanonicalNan : u;
    }
    q.scales(a, n, codes.data() + i0, multipliers.data() + i0, value);
  }
}

std::uint8_t quantize_block(std::span<const float> x, const BlockFormat& f, const QuantizeOptions& o,
                            const TensorScale& ts, std::span<std::uint8_t> codes, std::span<const std::uint32_t> rbits) {
  const detail::IeeeMode ieee;
  const BlockQuantizer q(f, o, ts);
  const auto bs = static_cast<std::size_t>(f.block_size);
  if (x.empty() || x.size() > bs) {
    throw std::invalid_argument("quantize_block: a block has 1 to " + std::to_string(bs) + " elements, got " +
                                std::to_string(x.size()));
  }
  if (codes.size() != x.size()) {
    throw std::invalid_argument("quantize_block: " + std::to_string(x.size()) + " inputs but " +
                                std::to_string(codes.size()) + " output codes");
  }
  const bool sr = o.element.rounding == Rounding::stochastic;
  if (sr ? rbits.size() != x.size() : !rbits.empty()) {
    throw std::invalid_argument(sr ? "quantize_block: stochastic rounding needs one random word per element"
                                   : "quantize_block: random bits given but the element rounding is not stochastic");
  }
  std::vector<float> in(bs, 0.0f);
  quantize_detail::RowScratch scratch;
  std::vector<std::uint32_t> r(sr ? bs : 0, 0u);
  std::copy(x.begin(), x.end(), in.begin());
  std::copy(rbits.begin(), rbits.end(), r.begin());
  std::vector<std::uint8_t> out(bs);
  std::uint8_t scale_code = 0;
  q.quantize_row(in.data(), bs, out.data(), &scale_code, sr ? r.data() : nullptr, scratch);
  std::copy_n(out.begin(), x.size(), codes.begin());
  return scale_code;
}

float scale_value(const BlockFormat& f, std::uint8_t code, const TensorScale& ts, const DequantizeOptions& d) {
  const detail::IeeeMode ieee;
  (void)quantize_detail::checked(f, d);
  if (f.scale == Format::float8_e8m0fnu) {
    if (d.scale_decode == ScaleDecode::triton_kernels) return std::bit_cast<float>(std::uint32_t{code} << 23);
    return to_float(Format::float8_e8m0fnu, code);
  }
  const float s = to_float(Format::float8_ue4m3, code);
  if (d.nvfp4 == Nvfp4Decode::transformer_engine) {
    if (!std::isfinite(ts.amax)) {
      throw std::invalid_argument(std::string("NVFP4 dequantization in TransformerEngine order needs the global amax "
                                              "the tensor was quantized with; this tensor records ") +
                                  (std::isnan(ts.amax) ? "none" : "an infinite one"));
    }
    // dequantize_fp4_kernel: static_cast<float>(scale) * amax * factor_inv, left to right.
    constexpr float kFactorInv = 1.0f / (6.0f * 448.0f);
    return (s * ts.amax) * kFactorInv;
  }
  return ts.decode * s;
}

float dequantize_value(const BlockFormat& f, std::uint8_t element_code, std::uint8_t scale_code, const TensorScale& ts,
                       const DequantizeOptions& d) {
  const detail::IeeeMode ieee;
  return quantize_detail::Dequantizer(f, ts, d).value(element_code, scale_code);
}

}  // namespace blockscale
