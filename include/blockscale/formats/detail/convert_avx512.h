// SPDX-License-Identifier: Apache-2.0
// detail::convert_f32_bits (round.h) for 16 fp32 inputs at once, with AVX-512 intrinsics: the
// one vector form of the conversion engine, shared by the formats library's bulk conversion
// (src/formats/bulk_avx512.cpp) and the quantizer's fused row kernels
// (src/quantize/fused_avx512.cpp). Internal. Only x86-64 GCC / Clang translation units include it,
// and they run it only where detail::avx512_available() says the CPU has AVX-512 F/BW/VL/DQ.
//
// For an fp32 input with exponent field ef (efm = max(ef, 1)) and a destination with p mantissa
// bits, minimum normal exponent emin and bias b:
//   shift  = qe - e_lsb           = max(ef, emin + 127) - efm + (23 - p)
//   base   = qe + p + b - 1       = max(ef, emin + 127) + (b - 128)
// (qe = max(E, emin) - p with E = ef - 127, which is -127 for fp32 subnormals: every destination
// has emin >= -127, so this gives the true qe; e_lsb = efm - 150.)
//   code   = (base << p) + ((sig + rounding bias) >> shift)
// (round.h explains why the code formula is right and what the rounding biases are). The formats
// tests compare the result with the scalar engine on every fp32 input.
#pragma once

#if defined(__x86_64__) && defined(__GNUC__)

// GCC 12 warns that _mm512_undefined_epi32() inside its own intrinsic headers is (or "may be")
// used uninitialized (GCC bug 105593); the value is never read.
#pragma GCC diagnostic push
#if !defined(__clang__)  // a GCC-only warning
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop

#include "blockscale/formats/convert.h"
#include "blockscale/formats/detail/round.h"

// Functions compiled for AVX-512 F/BW/VL/DQ whatever the translation unit's -march.
#define BLOCKSCALE_AVX512_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq")))
#define BLOCKSCALE_AVX512_INLINE BLOCKSCALE_AVX512_TARGET inline __attribute__((always_inline))

namespace blockscale::detail::avx512 {

// A Target's numbers broadcast to 16 lanes, made once per conversion.
struct VectorTarget {
  __m512i emin_field, shift0, base_off, max_code, sign_bit, neg_code, payload_and;
  __m512i overflow_code[2], underflow_code[2], zero_code[2], inf_code[2], nan_code[2];  // [sign]
  __m128i p_count, payload_count;
  __mmask16 keep_sign, neg_replace;
};

BLOCKSCALE_AVX512_INLINE VectorTarget vector_target(const Target& t) {
  VectorTarget c;
  c.emin_field = _mm512_set1_epi32(t.emin + 127);
  c.shift0 = _mm512_set1_epi32(23 - t.p);
  c.base_off = _mm512_set1_epi32(t.code_offset - t.p - 127);  // b - 128, with code_offset = p + b - 1
  c.max_code = _mm512_set1_epi32(static_cast<int>(t.max_code));
  c.sign_bit = _mm512_set1_epi32(static_cast<int>(t.sign_bit));
  c.neg_code = _mm512_set1_epi32(static_cast<int>(t.neg_code));
  c.payload_and = _mm512_set1_epi32(t.nan_payload ? -1 : 0);
  for (int s = 0; s < 2; ++s) {
    c.overflow_code[s] = _mm512_set1_epi32(static_cast<int>(t.overflow_code[s]));
    c.underflow_code[s] = _mm512_set1_epi32(static_cast<int>(t.underflow_code[s]));
    c.zero_code[s] = _mm512_set1_epi32(static_cast<int>(t.zero_code[s]));
    c.inf_code[s] = _mm512_set1_epi32(static_cast<int>(t.inf_code[s]));
    c.nan_code[s] = _mm512_set1_epi32(static_cast<int>(t.nan_code[s]));
  }
  c.p_count = _mm_cvtsi32_si128(t.p);
  c.payload_count = _mm_cvtsi32_si128(23 - t.p);
  c.keep_sign = t.keep_sign ? 0xFFFF : 0;
  c.neg_replace = t.neg_replace ? 0xFFFF : 0;
  return c;
}

// convert_f32_bits<R> of 16 fp32 bit patterns; R is not stochastic (that mode takes the portable
// loop, which reads one random word per input).
template <Rounding R>
BLOCKSCALE_AVX512_INLINE __m512i convert16(const VectorTarget& c, __m512i u) {
  static_assert(R != Rounding::stochastic);
  const __m512i zero = _mm512_setzero_si512();
  const __m512i one = _mm512_set1_epi32(1);
  const __m512i inf_bits = _mm512_set1_epi32(0x7F800000);
  const __mmask16 sign = _mm512_cmplt_epi32_mask(u, zero);
  const __mmask16 neg = sign & c.keep_sign;
  const __m512i a = _mm512_and_si512(u, _mm512_set1_epi32(0x7FFFFFFF));
  const __m512i ef = _mm512_srli_epi32(a, 23);
  const __m512i mf = _mm512_and_si512(u, _mm512_set1_epi32(0x7FFFFF));
  const __mmask16 normal = _mm512_test_epi32_mask(a, inf_bits);  // exponent field nonzero
  const __m512i sig = _mm512_mask_or_epi32(mf, normal, mf, _mm512_set1_epi32(0x800000));
  const __m512i efm = _mm512_max_epu32(ef, one);
  const __m512i top = _mm512_max_epi32(ef, c.emin_field);
  const __m512i sh = _mm512_add_epi32(_mm512_sub_epi32(top, efm), c.shift0);
  const __m512i shr = _mm512_min_epu32(sh, _mm512_set1_epi32(31));
  const __m512i base = _mm512_add_epi32(top, c.base_off);
  const __m512i mask = _mm512_sub_epi32(_mm512_sllv_epi32(one, shr), one);
  __m512i bias = zero;
  if constexpr (R == Rounding::nearest_even) {
    const __m512i lsb = _mm512_and_si512(_mm512_srlv_epi32(sig, shr), one);
    bias = _mm512_and_si512(_mm512_add_epi32(lsb, _mm512_srli_epi32(mask, 1)), mask);
  } else if constexpr (R == Rounding::nearest_away) {
    bias = _mm512_srli_epi32(_mm512_add_epi32(mask, one), 1);
  } else if constexpr (R == Rounding::upward) {
    bias = _mm512_maskz_mov_epi32(static_cast<__mmask16>(~neg), mask);
  } else if constexpr (R == Rounding::downward) {
    bias = _mm512_maskz_mov_epi32(neg, mask);
  }
  const __m512i nn = _mm512_srlv_epi32(_mm512_add_epi32(sig, bias), shr);
  __m512i code = _mm512_add_epi32(_mm512_sll_epi32(base, c.p_count), nn);
  const __mmask16 over = _mm512_cmpgt_epi32_mask(code, c.max_code);
  code = _mm512_mask_or_epi32(code, neg, code, c.sign_bit);
  code = _mm512_mask_mov_epi32(code, over, _mm512_mask_mov_epi32(c.overflow_code[0], neg, c.overflow_code[1]));
  code = _mm512_mask_mov_epi32(code, _mm512_cmpeq_epi32_mask(nn, zero),
                               _mm512_mask_mov_epi32(c.underflow_code[0], neg, c.underflow_code[1]));
  // Zeros, infinities and NaNs are rare: handled only when a vector holds one.
  const __mmask16 is_zero = _mm512_cmpeq_epi32_mask(a, zero);
  const __mmask16 special = _mm512_cmpeq_epi32_mask(ef, _mm512_set1_epi32(255)) | is_zero;
  if (special | (sign & c.neg_replace)) {
    code = _mm512_mask_mov_epi32(code, is_zero, _mm512_mask_mov_epi32(c.zero_code[0], neg, c.zero_code[1]));
    code = _mm512_mask_mov_epi32(code, _mm512_cmpeq_epi32_mask(a, inf_bits),
                                 _mm512_mask_mov_epi32(c.inf_code[0], neg, c.inf_code[1]));
    code = _mm512_mask_mov_epi32(code, sign & c.neg_replace, c.neg_code);
    const __m512i payload = _mm512_and_si512(_mm512_srl_epi32(mf, c.payload_count), c.payload_and);
    const __m512i nan_code = _mm512_or_si512(_mm512_mask_mov_epi32(c.nan_code[0], sign, c.nan_code[1]), payload);
    code = _mm512_mask_mov_epi32(code, _mm512_cmpgt_epi32_mask(a, inf_bits), nan_code);
  }
  return code;
}

}  // namespace blockscale::detail::avx512

#endif
