// SPDX-License-Identifier: Apache-2.0
// The fused AVX-512 row kernels of fused.h. One pass over the input: a chunk of 16 blocks (16 x 16
// or 16 x 32 floats, 1 or 2 KiB, so the second read of each block hits L1) gives 16 block maxima in
// one vector (or reads them from the first pass of a two-pass quantization, fused_block_maxima),
// the scale rule runs on that vector, and each block's elements are multiplied, converted, packed
// and stored. Every step repeats the staged pipeline's arithmetic (quantizer.cpp) on the same
// operands:
//   - block maxima: integer max over |x| as fp32 bits (every NaN is above 0x7F800000); a block
//     holding a NaN under BlockNan::ignore is taken again without its NaNs; flush_elements is
//     applied to the maxima (zeroing subnormal magnitudes is monotone, so it commutes with max);
//     NaN maxima become the canonical NaN;
//   - scale rules: the fp32 operations of mx_rounded_value / mx_finish / triton_rule / nvfp4_*
//     in the same order (vdivps and vmulps are the IEEE operations the scalar code compiles to),
//     the rounding to e8m0 / e4m3 by the same integer engine as the element conversion;
//   - elements: fp32(x * m), NaN products canonical, then the formats library's vector conversion
//     (formats/detail/convert_avx512.h, the kernel of its bulk conversion); round-to-nearest-even
//     into the element formats (every recipe but microxcaling) takes the shorter fast_convert16;
//   - packing as layout/packing.h defines it: fp4 element 2j in the low nibble, fp6 element i at
//     bits [6i, 6i + 6) of a 96-bit little-endian group, the padded16 forms zero-filled.
#include "fused.h"

#include <algorithm>
#include <cfloat>
#include <cstring>
#include <stdexcept>
#include <string>

#if defined(__x86_64__) && defined(__GNUC__)
#include "blockscale/formats/detail/bulk_paths.h"
#include "blockscale/formats/detail/convert_avx512.h"

namespace blockscale::quantize_detail {

namespace {

using detail::avx512::convert16;
using detail::avx512::VectorTarget;

constexpr int kInfBits = 0x7F800000;
constexpr int kCanonicalNanBits = static_cast<int>(kCanonicalNan);
constexpr int kMinNormalBits = 0x00800000;
// Elements ahead of the current chunk that the kernels prefetch into L1 (4 KiB: 2 to 4 chunks).
// Measured on the development VM (2 cores, 32 KiB L1d each), 8192 x 8192 inputs: 4 KiB was up to
// 14% faster than 16 KiB for MXFP8 and NVFP4 with a given amax and no different from 2, 6 and
// 8 KiB; without the prefetches it was up to 20% slower; into L2 instead made no clear difference.
constexpr std::size_t kPrefetchDistance = 1024;

// Round-to-nearest-even into a signed element format with subnormals (every element format).
// Same codes as convert16<nearest_even> for any overflow and NaN rule, on inputs whose NaNs are
// the canonical +NaN (fp32(x * m) is made so):
//   |y| >= 2^emin: round in bit space: (bits + 2^(22-p) - 1 + lsb) >> (23 - p) is the RNE of the
//     fp32 significand to p bits, a carry moving into the exponent field by itself; subtracting
//     (127 - bias) << 23 first rebases the exponent (code (emin + bias) << p = 1 << p at 2^emin);
//   |y| < 2^emin: the fp32 addition |y| + 2^(emin - p + 23) rounds |y| to a multiple of
//     2^(emin - p) (the sum stays in the binade of the addend), so its bits minus the addend's are
//     the subnormal code, 2^p when it rounds up to 2^emin (the first normal code);
//   codes above max_code overflow (kSaturate: the overflow code is max_code, a vpminud);
//   +-0 and underflow give the signed zero; Inf and NaN (kSpecials) are rare: the caller knows
//   from the block maxima whether a chunk can hold one.
// The fp32 addition rounds to nearest even under the default MXCSR, which the fp32(x * m) of both
// pipelines assumes as well.
struct FastConv {
  __m512i add, lsb_bit, shift, min_normal, magic_bits, max_code, ovf, sign_bit, inf_code[2], nan_code;
};

// Whether fast_convert16 gives what the Target asks for.
bool fast_convert_applies(const detail::Target& t) {
  return t.rounding == Rounding::nearest_even && t.keep_sign == 1 && t.neg_replace == 0 && t.sign_bit != 0 &&
         t.p >= 1 && t.p <= 22 && t.emin >= -126 && t.zero_code[0] == 0 && t.zero_code[1] == t.sign_bit &&
         t.underflow_code[0] == 0 && t.underflow_code[1] == t.sign_bit &&
         t.overflow_code[1] == (t.overflow_code[0] | t.sign_bit) && (t.overflow_code[0] & t.sign_bit) == 0;
}

BLOCKSCALE_AVX512_INLINE FastConv make_fast_conv(const detail::Target& t) {
  FastConv c;
  const int bias = t.code_offset - t.p + 1;  // code_offset = p + bias - 1
  // 2^(22-p) - 1 - ((127 - bias) << 23) in uint32 arithmetic: bits >= 2^emin keeps the sum positive.
  c.add = _mm512_set1_epi32(static_cast<int>((1u << (22 - t.p)) - 1u - (static_cast<std::uint32_t>(127 - bias) << 23)));
  c.lsb_bit = _mm512_set1_epi32(1 << (23 - t.p));
  c.shift = _mm512_set1_epi32(23 - t.p);
  c.min_normal = _mm512_set1_epi32((t.emin + 127) << 23);
  c.magic_bits = _mm512_set1_epi32((t.emin - t.p + 23 + 127) << 23);
  c.max_code = _mm512_set1_epi32(static_cast<int>(t.max_code));
  c.ovf = _mm512_set1_epi32(static_cast<int>(t.overflow_code[0]));
  c.sign_bit = _mm512_set1_epi32(static_cast<int>(t.sign_bit));
  c.inf_code[0] = _mm512_set1_epi32(static_cast<int>(t.inf_code[0]));
  c.inf_code[1] = _mm512_set1_epi32(static_cast<int>(t.inf_code[1]));
  // The canonical NaN 0x7FFFFFFF: sign 0, payload bits all ones.
  const std::uint32_t payload = t.nan_payload ? (0x7FFFFFu >> (23 - t.p)) : 0u;
  c.nan_code = _mm512_set1_epi32(static_cast<int>(t.nan_code[0] | payload));
  return c;
}

template <bool kSaturate, bool kSpecials>
BLOCKSCALE_AVX512_INLINE __m512i fast_convert16(const FastConv& c, __m512 y) {
  const __m512i u = _mm512_castps_si512(y);
  const __m512i a = _mm512_and_si512(u, _mm512_set1_epi32(0x7FFFFFFF));
  __m512i t = _mm512_add_epi32(a, c.add);
  t = _mm512_mask_add_epi32(t, _mm512_test_epi32_mask(a, c.lsb_bit), t, _mm512_set1_epi32(1));  // + lsb
  const __m512i normal = _mm512_srlv_epi32(t, c.shift);
  const __m512i subnormal = _mm512_sub_epi32(
      _mm512_castps_si512(_mm512_add_ps(_mm512_castsi512_ps(a), _mm512_castsi512_ps(c.magic_bits))), c.magic_bits);
  __m512i code = _mm512_mask_mov_epi32(normal, _mm512_cmplt_epu32_mask(a, c.min_normal), subnormal);
  if constexpr (kSaturate) {
    code = _mm512_min_epu32(code, c.max_code);
  } else {
    code = _mm512_mask_mov_epi32(code, _mm512_cmpgt_epu32_mask(code, c.max_code), c.ovf);
  }
  const __mmask16 neg = _mm512_movepi32_mask(u);
  code = _mm512_mask_or_epi32(code, neg, code, c.sign_bit);
  if constexpr (kSpecials) {
    const __m512i inf_bits = _mm512_set1_epi32(kInfBits);
    code = _mm512_mask_mov_epi32(code, _mm512_cmpeq_epi32_mask(a, inf_bits),
                                 _mm512_mask_mov_epi32(c.inf_code[0], neg, c.inf_code[1]));
    code = _mm512_mask_mov_epi32(code, _mm512_cmpgt_epu32_mask(a, inf_bits), c.nan_code);
  }
  return code;
}

// The uint8 code the staged pipeline stores for a scale conversion (the rules read it back). The
// e4m3 scales of the NVFP4 rules round to nearest even and take fast_convert16, with NaN inputs made
// canonical first (the constructor checks that the NaN code depends on neither sign nor payload).
BLOCKSCALE_AVX512_INLINE __m512i scale_code(const FusedParams& fp, const VectorTarget& sc, const FastConv& sfc, __m512 v) {
  if (fp.fast_scale) {
    const __m512 canonical_nan = _mm512_castsi512_ps(_mm512_set1_epi32(kCanonicalNanBits));
    v = _mm512_mask_mov_ps(v, _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q), canonical_nan);
    return _mm512_and_si512(fast_convert16<false, true>(sfc, v), _mm512_set1_epi32(0xFF));
  }
  const __m512i u = _mm512_castps_si512(v);
  __m512i c;
  switch (fp.scale.rounding) {
    case Rounding::toward_zero: c = convert16<Rounding::toward_zero>(sc, u); break;
    case Rounding::upward: c = convert16<Rounding::upward>(sc, u); break;
    case Rounding::downward: c = convert16<Rounding::downward>(sc, u); break;
    case Rounding::nearest_away: c = convert16<Rounding::nearest_away>(sc, u); break;
    default: c = convert16<Rounding::nearest_even>(sc, u); break;  // the constructor refuses stochastic
  }
  return _mm512_and_si512(c, _mm512_set1_epi32(0xFF));
}

// ---- Scale rules on 16 block maxima (non-negative fp32 bits or the canonical NaN), as
// ---- quantizer.cpp's loops compute them.

BLOCKSCALE_AVX512_INLINE __m512 fmin_flt_max(__m512 x) {
  const __m512 flt_max = _mm512_set1_ps(FLT_MAX);
  const __mmask16 m = _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q) | _mm512_cmp_ps_mask(x, flt_max, _CMP_GT_OQ);
  return _mm512_mask_mov_ps(x, m, flt_max);
}

// mx_finish: c is the conversion's code (ocp_floor, ceil, rceil) or unused (even).
template <ScaleRule Rule>
BLOCKSCALE_AVX512_INLINE void mx_finish(const RuleParams& p, __m512i a, __m512i c, __m512i& code, __m512& mult) {
  const __m512i inf_bits = _mm512_set1_epi32(kInfBits);
  __mmask16 inf = _mm512_cmpeq_epi32_mask(a, inf_bits);
  if constexpr (Rule != ScaleRule::rceil) {
    __m512i biased = c;
    if constexpr (Rule == ScaleRule::even) {
      // torchao EVEN: (bits + 2^(22 - mbits)) & 0xFF800000, then FLOOR; 2^128 counts as Inf.
      const __m512i r = _mm512_and_si512(_mm512_add_epi32(a, _mm512_set1_epi32(static_cast<int>(p.even_half))),
                                         _mm512_set1_epi32(static_cast<int>(0xFF800000u)));
      inf |= _mm512_cmpeq_epi32_mask(r, inf_bits);
      biased = _mm512_srli_epi32(r, 23);
    }
    const __m512i emax = _mm512_set1_epi32(static_cast<int>(p.emax_e));
    c = _mm512_maskz_mov_epi32(_mm512_cmpgt_epu32_mask(biased, emax), _mm512_sub_epi32(biased, emax));
  }
  c = _mm512_mask_mov_epi32(c, inf, _mm512_set1_epi32(static_cast<int>(p.inf_code)));
  c = _mm512_mask_mov_epi32(c, _mm512_cmpgt_epu32_mask(a, inf_bits), _mm512_set1_epi32(0xFF));
  code = c;
  // e8m0_reciprocal_bits: 0xFF -> NaN, 0xFE -> 2^-127, else (254 - c) << 23.
  __m512i r = _mm512_slli_epi32(_mm512_sub_epi32(_mm512_set1_epi32(254), c), 23);
  r = _mm512_mask_mov_epi32(r, _mm512_cmpeq_epi32_mask(c, _mm512_set1_epi32(0xFE)), _mm512_set1_epi32(0x00400000));
  r = _mm512_mask_mov_epi32(r, _mm512_cmpeq_epi32_mask(c, _mm512_set1_epi32(0xFF)), _mm512_set1_epi32(kCanonicalNanBits));
  mult = _mm512_castsi512_ps(r);
}

// table[c] for 16 codes c < 128 (the e4m3 conversion of a non-negative or NaN value never sets
// bit 7): four two-register permutes (5 index bits each) and two blends on index bits 5 and 6.
BLOCKSCALE_AVX512_INLINE __m512 lookup128(const float* table, __m512i c) {
  const __m512 t0 = _mm512_permutex2var_ps(_mm512_load_ps(table), c, _mm512_load_ps(table + 16));
  const __m512 t1 = _mm512_permutex2var_ps(_mm512_load_ps(table + 32), c, _mm512_load_ps(table + 48));
  const __m512 t2 = _mm512_permutex2var_ps(_mm512_load_ps(table + 64), c, _mm512_load_ps(table + 80));
  const __m512 t3 = _mm512_permutex2var_ps(_mm512_load_ps(table + 96), c, _mm512_load_ps(table + 112));
  const __mmask16 bit5 = _mm512_test_epi32_mask(c, _mm512_set1_epi32(32));
  const __mmask16 bit6 = _mm512_test_epi32_mask(c, _mm512_set1_epi32(64));
  return _mm512_mask_mov_ps(_mm512_mask_mov_ps(t0, bit5, t1), bit6, _mm512_mask_mov_ps(t2, bit5, t3));
}

// triton_rule: scale bits = bits(fp32(amax / divisor)) (+ 0x7FFFFF for ROUND_UP) & 0x7F800000,
// multiplier 1 / scale, or 1 / Inf = 0 when the scale bits are 0.
template <bool kRoundUp>
BLOCKSCALE_AVX512_INLINE void triton_rule(float divisor, __m512i a, __m512i& code, __m512& mult) {
  __m512i s = _mm512_castps_si512(_mm512_div_ps(_mm512_castsi512_ps(a), _mm512_set1_ps(divisor)));
  if constexpr (kRoundUp) s = _mm512_add_epi32(s, _mm512_set1_epi32(0x007FFFFF));
  s = _mm512_and_si512(s, _mm512_set1_epi32(kInfBits));
  code = _mm512_srli_epi32(s, 23);
  const __m512i d = _mm512_mask_or_epi32(s, _mm512_cmpeq_epi32_mask(s, _mm512_setzero_si512()), s,
                                         _mm512_set1_epi32(kInfBits));
  mult = _mm512_div_ps(_mm512_set1_ps(1.0f), _mm512_castsi512_ps(d));
}

BLOCKSCALE_AVX512_INLINE void block_scales(const FusedParams& fp, const VectorTarget& sc, const FastConv& sfc, __m512i a,
                                          __m512i& code, __m512& mult) {
  const RuleParams& p = fp.rule_params;
  const __m512 af = _mm512_castsi512_ps(a);
  switch (fp.rule) {
    case ScaleRule::ocp_floor:
      mx_finish<ScaleRule::ocp_floor>(p, a, scale_code(fp, sc, sfc, af), code, mult);
      break;
    case ScaleRule::ceil:
      mx_finish<ScaleRule::ceil>(p, a, scale_code(fp, sc, sfc, af), code, mult);
      break;
    case ScaleRule::even:
      mx_finish<ScaleRule::even>(p, a, a, code, mult);
      break;
    case ScaleRule::rceil: {
      const __m512 q = fp.divide ? _mm512_div_ps(af, _mm512_set1_ps(p.max_e)) : _mm512_mul_ps(af, _mm512_set1_ps(p.inv_max_e));
      mx_finish<ScaleRule::rceil>(p, a, scale_code(fp, sc, sfc, q), code, mult);
      break;
    }
    case ScaleRule::triton_round_up: triton_rule<true>(p.max_e, a, code, mult); break;
    case ScaleRule::triton_round_down: triton_rule<false>(p.pow2_emax_e, a, code, mult); break;
    case ScaleRule::nvfp4_transformer_engine: {
      // fminf(amax * fp32(S_enc * fp32(1/6)), FLT_MAX) to e4m3 satfinite; multiplier
      // fminf(1 / (scale * S_dec), FLT_MAX), tabulated.
      code = scale_code(fp, sc, sfc, fmin_flt_max(_mm512_mul_ps(af, _mm512_set1_ps(p.te_block_factor))));
      mult = lookup128(fp.code_multiplier, code);
      break;
    }
    case ScaleRule::nvfp4_torchao: {
      // clamp(fp32(fp32(amax / 6) / P), 2^-6, 448) to e4m3 (NaN kept); multiplier fp32(encode / scale).
      __m512 v = _mm512_div_ps(_mm512_div_ps(af, _mm512_set1_ps(6.0f)), _mm512_set1_ps(p.tensor_decode));
      const __m512 lo = _mm512_set1_ps(0x1p-6f), hi = _mm512_set1_ps(448.0f);
      v = _mm512_mask_mov_ps(v, _mm512_cmp_ps_mask(v, hi, _CMP_GT_OQ), hi);
      v = _mm512_mask_mov_ps(v, _mm512_cmp_ps_mask(v, lo, _CMP_LT_OQ), lo);
      code = scale_code(fp, sc, sfc, v);
      mult = lookup128(fp.code_multiplier, code);  // fp32(encode / scale), tabulated
      break;
    }
  }
  // microxcaling mx_flush_fp32_subnorms: multiplier 0 when amax < 2^-126.
  if (fp.flush_block) {
    mult = _mm512_maskz_mov_ps(_mm512_cmpge_epu32_mask(a, _mm512_set1_epi32(kMinNormalBits)), mult);
  }
}

// ---- Block maxima of a chunk.

// max |x| of one block as fp32 bits (NaN bits above 0x7F800000), one vector of partial maxima.
template <int BS>
BLOCKSCALE_AVX512_INLINE __m512i block_abs_bits(const float* b) {
  const __m512i abs_mask = _mm512_set1_epi32(0x7FFFFFFF);
  const __m512i a0 = _mm512_and_si512(_mm512_loadu_si512(b), abs_mask);
  if constexpr (BS == 32) return _mm512_max_epu32(a0, _mm512_and_si512(_mm512_loadu_si512(b + 16), abs_mask));
  return a0;
}

// The same without NaN elements (BlockNan::ignore), for the rare blocks that hold one: NaN
// magnitudes (the bits above Inf's) count as 0. An integer maximum, as everywhere here: vmaxps would
// read a subnormal as 0 under DAZ (a caller's mode; each OpenMP thread has its own).
BLOCKSCALE_AVX512_INLINE __m512i abs_bits_without_nan(__m512i abs_bits) {
  return _mm512_maskz_mov_epi32(_mm512_cmple_epu32_mask(abs_bits, _mm512_set1_epi32(kInfBits)), abs_bits);
}

template <int BS>
BLOCKSCALE_AVX512_INLINE std::uint32_t block_abs_bits_ignoring_nan(const float* b) {
  const __m512i abs_mask = _mm512_set1_epi32(0x7FFFFFFF);
  __m512i m = _mm512_setzero_si512();
  for (int h = 0; h < BS / 16; ++h) {
    m = _mm512_max_epu32(m, abs_bits_without_nan(_mm512_and_si512(_mm512_loadu_si512(b + 16 * h), abs_mask)));
  }
  return _mm512_reduce_max_epu32(m);
}

// The reduction tree of raw_chunk_maxima leaves the maximum of slot s in lane 4 * (s % 4) + s / 4, so
// slot s is given block 4 * (s % 4) + s / 4 and block i comes out in lane i.
constexpr int block_of_slot(int s) { return 4 * (s % 4) + s / 4; }

struct ChunkMaxima {
  __m512i amax;       // lane i: the amax of block i under the options (canonical NaN), 0 past nb
  __mmask16 special;  // blocks holding an Inf or NaN element (whatever BlockNan says)
};

// The raw maxima (max |x| as fp32 bits, NaN bits as they are) of blocks 0 .. nb - 1 (nb <= 16)
// of a chunk, lane i = block i, 0 past nb: 15 steps of (two shuffles, one max) instead of a
// horizontal reduction per block.
template <int BS>
BLOCKSCALE_AVX512_INLINE __m512i raw_chunk_maxima(const float* xc, std::size_t nb) {
  __m512i v[16];
  if (nb == 16) {
#pragma GCC unroll 16
    for (int s = 0; s < 16; ++s) v[s] = block_abs_bits<BS>(xc + block_of_slot(s) * BS);
  } else {
    for (int s = 0; s < 16; ++s) {
      const auto b = static_cast<std::size_t>(block_of_slot(s));
      v[s] = b < nb ? block_abs_bits<BS>(xc + b * BS) : _mm512_setzero_si512();
    }
  }
  // 16 -> 8: 256-bit halves. w[k] = [v[2k] partial (8 lanes), v[2k+1] partial (8 lanes)].
  __m512i w[8];
#pragma GCC unroll 8
  for (int k = 0; k < 8; ++k) {
    w[k] = _mm512_max_epu32(_mm512_shuffle_i32x4(v[2 * k], v[2 * k + 1], 0x44),
                            _mm512_shuffle_i32x4(v[2 * k], v[2 * k + 1], 0xEE));
  }
  // 8 -> 4: 128-bit quarters. Quarter q of u[k] reduces v[4k + q] (4 lanes).
  __m512i u[4];
#pragma GCC unroll 4
  for (int k = 0; k < 4; ++k) {
    u[k] = _mm512_max_epu32(_mm512_shuffle_i32x4(w[2 * k], w[2 * k + 1], 0x88),
                            _mm512_shuffle_i32x4(w[2 * k], w[2 * k + 1], 0xDD));
  }
  // 4 -> 2: 64-bit pairs. In quarter q of t[k]: lanes 0-1 reduce v[8k + q], lanes 2-3 v[8k + 4 + q].
  __m512i t[2];
#pragma GCC unroll 2
  for (int k = 0; k < 2; ++k) {
    t[k] = _mm512_max_epu32(_mm512_unpacklo_epi64(u[2 * k], u[2 * k + 1]),
                            _mm512_unpackhi_epi64(u[2 * k], u[2 * k + 1]));
  }
  // 2 -> 1: lane j of quarter q (lane 4q + j) is the maximum of v[4j + q].
  const __m512 t0 = _mm512_castsi512_ps(t[0]), t1 = _mm512_castsi512_ps(t[1]);
  return _mm512_max_epu32(_mm512_castps_si512(_mm512_shuffle_ps(t0, t1, 0x88)),
                          _mm512_castps_si512(_mm512_shuffle_ps(t0, t1, 0xDD)));
}

// The raw maxima of a chunk with NaN elements left out where BlockNan::ignore says so: the blocks
// whose raw maximum is a NaN (rare) are taken again without their NaNs.
template <int BS>
BLOCKSCALE_AVX512_INLINE __m512i nan_free_maxima(const float* xc, __m512i raw, bool ignore_nan) {
  const __mmask16 nan = _mm512_cmpgt_epu32_mask(raw, _mm512_set1_epi32(kInfBits));
  if (!ignore_nan || nan == 0) return raw;
  alignas(64) std::uint32_t lanes[16];
  _mm512_store_si512(lanes, raw);
  for (int i = 0; i < 16; ++i) {
    if ((nan >> i) & 1) lanes[i] = block_abs_bits_ignoring_nan<BS>(xc + static_cast<std::size_t>(i) * BS);
  }
  return _mm512_load_si512(lanes);
}

// The block amax of quantizer.cpp's block_maxima from the raw maxima of a chunk: NaN elements
// left out under BlockNan::ignore, fp32-subnormal magnitudes zeroed under flush_elements (zeroing
// is monotone, so it commutes with the maximum), NaN made canonical.
template <int BS>
BLOCKSCALE_AVX512_INLINE ChunkMaxima chunk_maxima(const float* xc, __m512i raw, bool ignore_nan, bool flush_elements) {
  const __m512i inf_bits = _mm512_set1_epi32(kInfBits);
  ChunkMaxima r;
  r.special = _mm512_cmpge_epu32_mask(raw, inf_bits);
  __m512i a = nan_free_maxima<BS>(xc, raw, ignore_nan);
  if (flush_elements) a = _mm512_maskz_mov_epi32(_mm512_cmpge_epu32_mask(a, _mm512_set1_epi32(kMinNormalBits)), a);
  r.amax = _mm512_mask_mov_epi32(a, _mm512_cmpgt_epu32_mask(a, inf_bits), _mm512_set1_epi32(kCanonicalNanBits));
  return r;
}

// ---- Packing (every block starts on a 16-code packing group).

template <Packing P>
constexpr std::size_t group_bytes() {  // packed bytes of 16 codes
  if constexpr (P == Packing::fp4_dense) return 8;
  if constexpr (P == Packing::fp6_dense) return 12;
  return 16;  // byte_per_element and the padded16 forms
}

template <Packing P>
BLOCKSCALE_AVX512_INLINE void store_codes(std::uint8_t* out, __m512i c) {
  if constexpr (P == Packing::byte_per_element) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out), _mm512_cvtepi32_epi8(c));
  } else if constexpr (P == Packing::fp4_dense || P == Packing::fp4_padded16) {
    // Each 64-bit lane holds codes 2j (low word) and 2j+1 (high word): byte = c[2j] | c[2j+1] << 4.
    const __m128i b = _mm512_cvtepi64_epi8(_mm512_or_si512(c, _mm512_srli_epi64(c, 28)));
    if constexpr (P == Packing::fp4_dense) {
      _mm_storel_epi64(reinterpret_cast<__m128i*>(out), b);
    } else {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(out), b);  // 8 code bytes, 8 zero bytes
    }
  } else {
    // fp6: 12 bits per 64-bit lane (c[2j] | c[2j+1] << 6), 24 bits per 128-bit quarter, then the
    // low 3 bytes of each quarter side by side.
    const __m512i w = _mm512_and_si512(_mm512_or_si512(c, _mm512_srli_epi64(c, 26)), _mm512_set1_epi64(0xFFF));
    const __m512i y = _mm512_or_si512(w, _mm512_slli_epi64(_mm512_bsrli_epi128(w, 8), 12));
    const __m512i q = _mm512_permutexvar_epi32(_mm512_setr_epi32(0, 4, 8, 12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0), y);
    const __m128i b = _mm_shuffle_epi8(_mm512_castsi512_si128(q),
                                       _mm_setr_epi8(0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 13, 14, -1, -1, -1, -1));
    if constexpr (P == Packing::fp6_dense) {
      _mm_mask_storeu_epi8(out, 0x0FFF, b);  // 12 bytes: the next group follows directly
    } else {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(out), b);  // 12 code bytes, 4 zero bytes
    }
  }
}

// 64 codes (c[0] first) at once, for the packings where that saves shuffles: vpackusdw +
// vpackuswb leave dword 4L + j = codes 4L .. 4L + 3 of c[j] (codes are below 256), one vpermd puts
// the dwords in order; fp4 pairs neighbouring bytes inside 16-bit lanes first.
template <Packing P>
constexpr bool packs_by_64() {
  return P == Packing::byte_per_element || P == Packing::fp4_dense;
}

template <Packing P>
BLOCKSCALE_AVX512_INLINE void store_codes_64(std::uint8_t* out, __m512i c0, __m512i c1, __m512i c2, __m512i c3) {
  const __m512i order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
  __m512i b = _mm512_packus_epi16(_mm512_packus_epi32(c0, c1), _mm512_packus_epi32(c2, c3));
  if constexpr (P == Packing::byte_per_element) {
    _mm512_storeu_si512(out, _mm512_permutexvar_epi32(order, b));
  } else {
    b = _mm512_or_si512(b, _mm512_srli_epi16(b, 4));  // low byte of each 16-bit lane: c[2j] | c[2j+1] << 4
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), _mm512_cvtepi16_epi8(_mm512_permutexvar_epi32(order, b)));
  }
}

// ---- Elements of a chunk: fp32(x * m), converted, packed, stored.

enum class ElementConversion : std::uint8_t {
  fast_saturating,  // fast_convert16<true, ...>
  fast,             // fast_convert16<false, ...>
  generic,          // convert_any of the product with NaN made canonical
};

// convert16 with the rounding chosen at run time: the element roundings other than
// round-to-nearest-even (and the few RNE options fast_convert16 does not cover) are rare enough
// that one out-of-line call per 16 elements is cheaper than a copy of every kernel per mode.
BLOCKSCALE_AVX512_TARGET __attribute__((noinline)) __m512i convert_any(const VectorTarget& c, Rounding r, __m512i u) {
  switch (r) {
    case Rounding::toward_zero: return convert16<Rounding::toward_zero>(c, u);
    case Rounding::upward: return convert16<Rounding::upward>(c, u);
    case Rounding::downward: return convert16<Rounding::downward>(c, u);
    case Rounding::nearest_away: return convert16<Rounding::nearest_away>(c, u);
    default: return convert16<Rounding::nearest_even>(c, u);  // FusedRowKernel refuses stochastic
  }
}

// kSpecials: the chunk may hold Inf or NaN products (the fast conversions only).
template <int BS, ElementConversion C, Packing P, bool kSpecials>
BLOCKSCALE_AVX512_INLINE void chunk_elements(const VectorTarget& ec, Rounding rounding, const FastConv& fc,
                                            const float* xc, std::size_t nb, const float* mult, bool flush_elements,
                                            std::uint8_t* out) {
  constexpr int kVectorsPerBlock = BS / 16;
  const auto code_of = [&](std::size_t v) BLOCKSCALE_AVX512_TARGET {
    __m512i u = _mm512_loadu_si512(xc + 16 * v);
    if (flush_elements) {
      // SubnormalInputs::flush_elements: an fp32-subnormal input keeps only its sign.
      const __mmask16 sub = _mm512_cmplt_epu32_mask(_mm512_and_si512(u, _mm512_set1_epi32(0x7FFFFFFF)),
                                                    _mm512_set1_epi32(kMinNormalBits));
      u = _mm512_mask_and_epi32(u, sub, u, _mm512_set1_epi32(static_cast<int>(0x80000000u)));
    }
    __m512 prod = _mm512_mul_ps(_mm512_castsi512_ps(u), _mm512_set1_ps(mult[v / kVectorsPerBlock]));
    if constexpr (C == ElementConversion::generic) {
      const __m512 canonical_nan = _mm512_castsi512_ps(_mm512_set1_epi32(kCanonicalNanBits));
      prod = _mm512_mask_mov_ps(prod, _mm512_cmp_ps_mask(prod, prod, _CMP_UNORD_Q), canonical_nan);
      return convert_any(ec, rounding, _mm512_castps_si512(prod));
    } else {
      return fast_convert16<C == ElementConversion::fast_saturating, kSpecials>(fc, prod);
    }
  };
  const std::size_t vectors = nb * kVectorsPerBlock;
  if constexpr (packs_by_64<P>()) {
    if (nb == 16) {
      for (std::size_t v = 0; v < vectors; v += 4) {
        store_codes_64<P>(out + v * group_bytes<P>(), code_of(v), code_of(v + 1), code_of(v + 2), code_of(v + 3));
      }
      return;
    }
  }
  for (std::size_t v = 0; v < vectors; ++v) store_codes<P>(out + v * group_bytes<P>(), code_of(v));
}

// What a chunk's elements need: its scale codes and multipliers, and whether it may hold Inf or
// NaN products.
struct ChunkScales {
  __m512i code;
  __m512 mult;
  __mmask16 special;
};

// stored: the raw maxima of the chunk's blocks from the first pass (fused_block_maxima), or null
// to compute them here.
// Out of line: fused_row calls it in two places, and the maxima tree and the rules are long.
template <int BS, ElementConversion C>
BLOCKSCALE_AVX512_TARGET __attribute__((noinline)) ChunkScales chunk_scales(const FusedParams& fp, const VectorTarget& sc, const FastConv& sfc,
                                                 const float* xc, std::size_t nb, const std::uint32_t* stored) {
  // This is the first read of the chunk in this pass (from memory): ask for the lines some
  // chunks ahead (past the end of the row is harmless, and usually the next row).
#pragma GCC unroll 32
  for (int l = 0; l < BS; ++l) _mm_prefetch(reinterpret_cast<const char*>(xc + kPrefetchDistance + 16 * l), _MM_HINT_T0);
  const __mmask16 live = static_cast<__mmask16>((1u << nb) - 1);
  const __m512i raw = stored != nullptr ? _mm512_maskz_loadu_epi32(live, stored) : raw_chunk_maxima<BS>(xc, nb);
  const ChunkMaxima cm = chunk_maxima<BS>(xc, raw, fp.ignore_nan, fp.flush_elements);
  ChunkScales r;
  block_scales(fp, sc, sfc, cm.amax, r.code, r.mult);
  r.special = 0xFFFF;
  if constexpr (C != ElementConversion::generic) {
    // Inf or NaN products come from Inf or NaN elements (NaN ones possibly left out of the amax by
    // BlockNan::ignore) or from amax * m not below Inf: max |x * m| is fp32(amax * m), the
    // rounding being monotone.
    r.special = (cm.special | _mm512_cmp_ps_mask(_mm512_mul_ps(_mm512_castsi512_ps(cm.amax), r.mult),
                                                 _mm512_set1_ps(__builtin_inff()), _CMP_NLT_UQ)) & live;
  }
  return r;
}

template <int BS, ElementConversion C, Packing P>
BLOCKSCALE_AVX512_TARGET void fused_row(const FusedParams& fp, const float* x, std::size_t n, std::uint8_t* out,
                                       std::uint8_t* scale_row, const std::int64_t* col_parts,
                                       const std::uint32_t* maxima) {
  const VectorTarget ec = detail::avx512::vector_target(fp.element);
  const FastConv fc = make_fast_conv(fp.element);
  const VectorTarget sc = detail::avx512::vector_target(fp.scale);
  const FastConv sfc = make_fast_conv(fp.scale);
  const std::size_t blocks = n / BS;
  constexpr std::size_t kChunkBytes = 16 * (BS / 16) * group_bytes<P>();  // packed bytes of 16 blocks
  alignas(64) float mult[16];
  alignas(16) std::uint8_t codes[16];
  // Software pipelined: the maxima and scales of chunk k + 1 (its first read from memory, and a
  // chain of dependent operations: tree, rule, conversion, division) are issued before the
  // elements of chunk k, so that their latency hides behind that work.
  ChunkScales next = chunk_scales<BS, C>(fp, sc, sfc, x, std::min<std::size_t>(16, blocks), maxima);
  for (std::size_t j0 = 0; j0 < blocks; j0 += 16) {
    const std::size_t nb = std::min<std::size_t>(16, blocks - j0);
    const float* xc = x + j0 * BS;
    const ChunkScales cur = next;
    _mm_store_si128(reinterpret_cast<__m128i*>(codes), _mm512_cvtepi32_epi8(cur.code));
    if (fp.col_runs_of_4 && nb == 16) {
      for (std::size_t g = 0; g < 16; g += 4) std::memcpy(scale_row + col_parts[j0 + g], codes + g, 4);
    } else {
      for (std::size_t i = 0; i < nb; ++i) scale_row[col_parts[j0 + i]] = codes[i];
    }
    _mm512_store_ps(mult, cur.mult);
    if (j0 + 16 < blocks) {
      next = chunk_scales<BS, C>(fp, sc, sfc, xc + 16 * BS, std::min<std::size_t>(16, blocks - j0 - 16),
                                 maxima != nullptr ? maxima + j0 + 16 : nullptr);
    }
    std::uint8_t* o = out + (j0 / 16) * kChunkBytes;
    if (C == ElementConversion::generic || cur.special) {
      chunk_elements<BS, C, P, true>(ec, fp.element.rounding, fc, xc, nb, mult, fp.flush_elements, o);
    } else {
      chunk_elements<BS, C, P, false>(ec, fp.element.rounding, fc, xc, nb, mult, fp.flush_elements, o);
    }
  }
}

// max |x| over n inputs as fp32 bits (the global amax of NVFP4): four accumulators (vmaxps for
// BlockNan::ignore, integer max otherwise, as block_abs_bits), input prefetched. flush_elements is
// applied by the caller to the result (monotone, so it commutes with max).
template <bool kIgnoreNan>
BLOCKSCALE_AVX512_TARGET std::uint32_t abs_max_bits(const float* x, std::size_t n) {
  const __m512i abs_mask = _mm512_set1_epi32(0x7FFFFFFF);
  __m512i acc[4] = {_mm512_setzero_si512(), _mm512_setzero_si512(), _mm512_setzero_si512(), _mm512_setzero_si512()};
  const auto step = [&](int k, __m512i v) BLOCKSCALE_AVX512_TARGET {
    const __m512i a = _mm512_and_si512(v, abs_mask);
    if constexpr (kIgnoreNan) {
      acc[k] = _mm512_castps_si512(_mm512_max_ps(_mm512_castsi512_ps(a), _mm512_castsi512_ps(acc[k])));
    } else {
      acc[k] = _mm512_max_epu32(acc[k], a);
    }
  };
  std::size_t i = 0;
  for (; i + 64 <= n; i += 64) {
#pragma GCC unroll 4
    for (int k = 0; k < 4; ++k) {
      _mm_prefetch(reinterpret_cast<const char*>(x + i + kPrefetchDistance + 16 * k), _MM_HINT_T0);
      step(k, _mm512_loadu_si512(x + i + 16 * k));
    }
  }
  for (; i < n; i += 16) {
    const auto tail = static_cast<__mmask16>(n - i >= 16 ? 0xFFFFu : (1u << (n - i)) - 1);
    step(0, _mm512_maskz_loadu_epi32(tail, x + i));
  }
  alignas(64) std::uint32_t lanes[16];
  _mm512_store_si512(lanes, _mm512_max_epu32(_mm512_max_epu32(acc[0], acc[1]), _mm512_max_epu32(acc[2], acc[3])));
  return *std::max_element(lanes, lanes + 16);
}

// The raw maxima of the blocks of one K-major row of K inputs (the last block may be short: the
// zero padding quantize_into adds cannot raise a maximum) to maxima[0, ceil(K / BS)); returns the
// row's maximum with NaN elements left out under BlockNan::ignore.
template <int BS>
BLOCKSCALE_AVX512_TARGET std::uint32_t row_block_maxima(const float* x, std::size_t K, bool ignore_nan,
                                                       std::uint32_t* maxima) {
  const std::size_t whole = K / BS;
  __m512i acc = _mm512_setzero_si512();
  for (std::size_t j0 = 0; j0 < whole; j0 += 16) {
    const std::size_t nb = std::min<std::size_t>(16, whole - j0);
    const float* xc = x + j0 * BS;
#pragma GCC unroll 32
    for (int l = 0; l < BS; ++l) _mm_prefetch(reinterpret_cast<const char*>(xc + kPrefetchDistance + 16 * l), _MM_HINT_T0);
    const __m512i raw = raw_chunk_maxima<BS>(xc, nb);
    _mm512_mask_storeu_epi32(maxima + j0, static_cast<__mmask16>((1u << nb) - 1), raw);
    acc = _mm512_max_epu32(acc, nan_free_maxima<BS>(xc, raw, ignore_nan));
  }
  alignas(64) std::uint32_t lanes[16];
  _mm512_store_si512(lanes, acc);
  std::uint32_t m = *std::max_element(lanes, lanes + 16);
  if (const std::size_t tail = K - whole * BS; tail != 0) {
    const float* b = x + whole * BS;
    const __m512i abs_mask = _mm512_set1_epi32(0x7FFFFFFF);
    __m512i raw = _mm512_setzero_si512(), nan_free = _mm512_setzero_si512();
    for (std::size_t h = 0; h < tail; h += 16) {
      const auto live = static_cast<__mmask16>(tail - h >= 16 ? 0xFFFFu : (1u << (tail - h)) - 1);
      const __m512i a = _mm512_and_si512(_mm512_maskz_loadu_epi32(live, b + h), abs_mask);
      raw = _mm512_max_epu32(raw, a);
      nan_free = _mm512_max_epu32(nan_free, abs_bits_without_nan(a));
    }
    maxima[whole] = _mm512_reduce_max_epu32(raw);
    m = std::max(m, _mm512_reduce_max_epu32(ignore_nan ? nan_free : raw));
  }
  return m;
}

// Blocks of 16 hold e2m1 only (block_format.h), so they take the fp4 packings and bytes.
template <int BS, ElementConversion C>
FusedRowKernel::RowFn pick_packing(Packing p) {
  switch (p) {
    case Packing::byte_per_element: return &fused_row<BS, C, Packing::byte_per_element>;
    case Packing::fp4_dense: return &fused_row<BS, C, Packing::fp4_dense>;
    case Packing::fp4_padded16: return &fused_row<BS, C, Packing::fp4_padded16>;
    case Packing::fp6_dense:
      if constexpr (BS == 32) return &fused_row<BS, C, Packing::fp6_dense>;
      break;
    case Packing::fp6_padded16:
      if constexpr (BS == 32) return &fused_row<BS, C, Packing::fp6_padded16>;
      break;
  }
  throw std::logic_error("fused quantization: packing " + to_string(p) + " with blocks of " + std::to_string(BS));
}

template <int BS>
FusedRowKernel::RowFn pick_conversion(const detail::Target& t, Packing p) {
  if (t.rounding == Rounding::stochastic) {
    throw std::logic_error("fused quantization: stochastic element rounding takes the staged path");
  }
  if (!fast_convert_applies(t)) return pick_packing<BS, ElementConversion::generic>(p);
  return t.overflow_code[0] == t.max_code ? pick_packing<BS, ElementConversion::fast_saturating>(p)
                                          : pick_packing<BS, ElementConversion::fast>(p);
}

bool rule_converts(ScaleRule r) {
  return r != ScaleRule::even && r != ScaleRule::triton_round_up && r != ScaleRule::triton_round_down;
}

}  // namespace

bool fused_kernels_available() { return detail::avx512_available(); }

std::uint32_t fused_abs_max_bits(const float* x, std::size_t n, bool ignore_nan) {
  return ignore_nan ? abs_max_bits<true>(x, n) : abs_max_bits<false>(x, n);
}

std::uint32_t fused_block_maxima(const float* x, std::int64_t rows, std::size_t K, int block_size, bool ignore_nan,
                                 bool flush_elements, std::uint32_t* maxima) {
  if (!fused_kernels_available()) throw std::logic_error("fused quantization needs AVX-512 (F, BW, VL, DQ)");
  const std::size_t kb = (K + static_cast<std::size_t>(block_size) - 1) / static_cast<std::size_t>(block_size);
  std::uint32_t m = 0;
  // An integer maximum is exact and order-free: the thread count cannot change it.
#if defined(_OPENMP)
#pragma omp parallel for schedule(static) reduction(max : m)
#endif
  for (std::int64_t r = 0; r < rows; ++r) {
    const float* xr = x + static_cast<std::size_t>(r) * K;
    std::uint32_t* mr = maxima + static_cast<std::size_t>(r) * kb;
    m = std::max(m, block_size == 16 ? row_block_maxima<16>(xr, K, ignore_nan, mr)
                                     : row_block_maxima<32>(xr, K, ignore_nan, mr));
  }
  // As amax_bits: flushing fp32-subnormal magnitudes is monotone, so it can follow the maximum.
  if (flush_elements && m < static_cast<std::uint32_t>(kMinNormalBits)) m = 0;
  return m > static_cast<std::uint32_t>(kInfBits) ? kCanonicalNan : m;
}

FusedRowKernel::FusedRowKernel(const BlockQuantizer& q, Packing packing, std::span<const std::int64_t> col_parts)
    : col_parts_(col_parts.data()) {
  if (!fused_kernels_available()) throw std::logic_error("fused quantization needs AVX-512 (F, BW, VL, DQ)");
  const QuantizeOptions& o = q.options();
  FusedParams& p = params_;
  p.element = detail::make_target(q.format().element, o.element);
  if (rule_converts(o.rule)) {
    p.scale = detail::make_target(q.scale_format(), q.scale_rounding());
    if (p.scale.rounding == Rounding::stochastic) throw std::logic_error("fused quantization: stochastic scale rounding");
    // scale_code makes NaN inputs canonical before fast_convert16, which is exact only when the
    // NaN code depends on neither the sign nor the payload (the e4m3 scales: CUDA's 0x7F).
    p.fast_scale = fast_convert_applies(p.scale) && p.scale.nan_code[0] == p.scale.nan_code[1] &&
                   p.scale.nan_payload == 0;
  }
  p.rule = o.rule;
  p.divide = o.ratio == ScaleRatio::divide;
  p.ignore_nan = o.nan == BlockNan::ignore;
  p.flush_elements = o.subnormals == SubnormalInputs::flush_elements;
  p.flush_block = o.subnormals == SubnormalInputs::flush_block;
  p.rule_params = q.params();
  if (is_nvfp4_rule(o.rule)) {
    for (std::uint32_t c = 0; c < 128; ++c) p.code_multiplier[c] = q.nvfp4_multiplier(c);
  }
  p.col_runs_of_4 = true;
  for (std::size_t c = 0; c < col_parts.size(); ++c) {
    p.col_runs_of_4 = p.col_runs_of_4 && col_parts[c] == col_parts[c & ~std::size_t{3}] + static_cast<std::int64_t>(c & 3);
  }
  (void)packed_bytes(packing, q.format().element, 16);  // throws when the packing does not hold the format
  row_ = q.format().block_size == 16 ? pick_conversion<16>(p.element, packing)
                                     : pick_conversion<32>(p.element, packing);
}

}  // namespace blockscale::quantize_detail

#else  // not x86-64 GCC/Clang: the staged pipeline only

namespace blockscale::quantize_detail {
bool fused_kernels_available() { return false; }
std::uint32_t fused_abs_max_bits(const float*, std::size_t, bool) {
  throw std::logic_error("fused quantization needs x86-64 AVX-512");
}
std::uint32_t fused_block_maxima(const float*, std::int64_t, std::size_t, int, bool, bool, std::uint32_t*) {
  throw std::logic_error("fused quantization needs x86-64 AVX-512");
}
FusedRowKernel::FusedRowKernel(const BlockQuantizer&, Packing, std::span<const std::int64_t>) {
  throw std::logic_error("fused quantization needs x86-64 AVX-512");
}
}  // namespace blockscale::quantize_detail

#endif
