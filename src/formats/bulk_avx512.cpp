// SPDX-License-Identifier: Apache-2.0
// The fp32 -> code bulk conversion written with AVX-512 intrinsics (16 lanes). It computes what
// detail::round_finite / convert_f32_bits compute, rearranged for SIMD; the exhaustive tests
// compare it with that scalar engine on every fp32 input.
//
// For an fp32 input with exponent field ef (efm = max(ef, 1)) and a destination with p mantissa
// bits, minimum normal exponent emin and bias b:
//   shift  = qe - e_lsb           = max(ef, emin + 127) - efm + (23 - p)
//   base   = qe + p + b - 1       = max(ef, emin + 127) + (b - 128)
// (qe = max(E, emin) - p with E = ef - 127, which is -127 for fp32 subnormals: every destination
// has emin >= -127, so this gives the true qe; e_lsb = efm - 150.)
//   code   = (base << p) + ((sig + rounding bias) >> shift)
// (see detail/round.h for why the code formula is right and for the rounding biases).
#include "bulk_kernels.h"

#if defined(__x86_64__) && defined(__GNUC__)
// GCC 12 warns that _mm512_undefined_epi32() inside its own intrinsic headers "may be used
// uninitialized" (GCC bug 105593); the value is never read.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop

namespace blockscale::detail {

namespace {

#define BLOCKSCALE_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq")))

template <Rounding R, class Out>
BLOCKSCALE_AVX512 void f32_avx512(const Target& t, const float* __restrict in, Out* __restrict out, std::size_t n) {
  const __m512i zero = _mm512_setzero_si512();
  const __m512i one = _mm512_set1_epi32(1);
  const __m512i abs_mask = _mm512_set1_epi32(0x7FFFFFFF);
  const __m512i man_mask = _mm512_set1_epi32(0x7FFFFF);
  const __m512i hidden = _mm512_set1_epi32(0x800000);
  const __m512i exp_mask = _mm512_set1_epi32(0x7F800000);
  const __m512i inf_bits = _mm512_set1_epi32(0x7F800000);
  const __m512i thirty_one = _mm512_set1_epi32(31);
  const __m512i emin_field = _mm512_set1_epi32(t.emin + 127);
  const __m512i shift0 = _mm512_set1_epi32(23 - t.p);
  // code_offset = p + b - 1, so b - 128 = code_offset - p - 127.
  const __m512i base_off = _mm512_set1_epi32(t.code_offset - t.p - 127);
  const __m128i p_count = _mm_cvtsi32_si128(t.p);
  const __m128i payload_count = _mm_cvtsi32_si128(23 - t.p);
  const __m512i max_code = _mm512_set1_epi32(static_cast<int>(t.max_code));
  const __m512i sign_bit = _mm512_set1_epi32(static_cast<int>(t.sign_bit));
  const __m512i ovf[2] = {_mm512_set1_epi32(static_cast<int>(t.overflow_code[0])),
                          _mm512_set1_epi32(static_cast<int>(t.overflow_code[1]))};
  const __m512i unf[2] = {_mm512_set1_epi32(static_cast<int>(t.underflow_code[0])),
                          _mm512_set1_epi32(static_cast<int>(t.underflow_code[1]))};
  const __m512i zer[2] = {_mm512_set1_epi32(static_cast<int>(t.zero_code[0])),
                          _mm512_set1_epi32(static_cast<int>(t.zero_code[1]))};
  const __m512i inf[2] = {_mm512_set1_epi32(static_cast<int>(t.inf_code[0])),
                          _mm512_set1_epi32(static_cast<int>(t.inf_code[1]))};
  const __m512i nan[2] = {_mm512_set1_epi32(static_cast<int>(t.nan_code[0])),
                          _mm512_set1_epi32(static_cast<int>(t.nan_code[1]))};
  const __m512i neg_code = _mm512_set1_epi32(static_cast<int>(t.neg_code));
  const __m512i payload_and = _mm512_set1_epi32(t.nan_payload ? -1 : 0);
  const __mmask16 keep_sign = t.keep_sign ? 0xFFFF : 0;
  const __mmask16 neg_replace = t.neg_replace ? 0xFFFF : 0;

  auto convert16 = [&](__m512i u) BLOCKSCALE_AVX512 {
    const __mmask16 sign = _mm512_cmplt_epi32_mask(u, zero);
    const __mmask16 neg = sign & keep_sign;
    const __m512i a = _mm512_and_si512(u, abs_mask);
    const __m512i ef = _mm512_srli_epi32(a, 23);
    const __m512i mf = _mm512_and_si512(u, man_mask);
    const __mmask16 normal = _mm512_test_epi32_mask(a, exp_mask);
    const __m512i sig = _mm512_mask_or_epi32(mf, normal, mf, hidden);
    const __m512i efm = _mm512_max_epu32(ef, one);
    const __m512i top = _mm512_max_epi32(ef, emin_field);
    const __m512i sh = _mm512_add_epi32(_mm512_sub_epi32(top, efm), shift0);
    const __m512i shr = _mm512_min_epu32(sh, thirty_one);
    const __m512i base = _mm512_add_epi32(top, base_off);
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
    __m512i code = _mm512_add_epi32(_mm512_sll_epi32(base, p_count), nn);
    const __mmask16 over = _mm512_cmpgt_epi32_mask(code, max_code);
    code = _mm512_mask_or_epi32(code, neg, code, sign_bit);
    code = _mm512_mask_mov_epi32(code, over, _mm512_mask_mov_epi32(ovf[0], neg, ovf[1]));
    code = _mm512_mask_mov_epi32(code, _mm512_cmpeq_epi32_mask(nn, zero), _mm512_mask_mov_epi32(unf[0], neg, unf[1]));
    // Zeros, infinities and NaNs are rare: handle them only when a vector holds one.
    const __mmask16 special = _mm512_cmpeq_epi32_mask(ef, _mm512_set1_epi32(255)) | _mm512_cmpeq_epi32_mask(a, zero);
    if (special | (sign & neg_replace)) {
      code = _mm512_mask_mov_epi32(code, _mm512_cmpeq_epi32_mask(a, zero), _mm512_mask_mov_epi32(zer[0], neg, zer[1]));
      code = _mm512_mask_mov_epi32(code, _mm512_cmpeq_epi32_mask(a, inf_bits), _mm512_mask_mov_epi32(inf[0], neg, inf[1]));
      code = _mm512_mask_mov_epi32(code, sign & neg_replace, neg_code);
      const __m512i payload = _mm512_and_si512(_mm512_srl_epi32(mf, payload_count), payload_and);
      const __m512i nan_code = _mm512_or_si512(_mm512_mask_mov_epi32(nan[0], sign, nan[1]), payload);
      code = _mm512_mask_mov_epi32(code, _mm512_cmpgt_epi32_mask(a, inf_bits), nan_code);
    }
    return code;
  };

  std::size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512i code = convert16(_mm512_loadu_si512(in + i));
    if constexpr (sizeof(Out) == 1) {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), _mm512_cvtepi32_epi8(code));
    } else if constexpr (sizeof(Out) == 2) {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), _mm512_cvtepi32_epi16(code));
    } else {
      _mm512_storeu_si512(out + i, code);
    }
  }
  if (i < n) {
    const __mmask16 tail = static_cast<__mmask16>((1u << (n - i)) - 1);
    const __m512i code = convert16(_mm512_maskz_loadu_epi32(tail, in + i));
    if constexpr (sizeof(Out) == 1) {
      _mm512_mask_cvtepi32_storeu_epi8(out + i, tail, code);
    } else if constexpr (sizeof(Out) == 2) {
      _mm512_mask_cvtepi32_storeu_epi16(out + i, tail, code);
    } else {
      _mm512_mask_storeu_epi32(out + i, tail, code);
    }
  }
}

template <class Out>
bool dispatch(const Target& t, const float* in, Out* out, std::size_t n) {
  switch (t.rounding) {
    case Rounding::nearest_even: f32_avx512<Rounding::nearest_even>(t, in, out, n); return true;
    case Rounding::toward_zero: f32_avx512<Rounding::toward_zero>(t, in, out, n); return true;
    case Rounding::upward: f32_avx512<Rounding::upward>(t, in, out, n); return true;
    case Rounding::downward: f32_avx512<Rounding::downward>(t, in, out, n); return true;
    case Rounding::nearest_away: f32_avx512<Rounding::nearest_away>(t, in, out, n); return true;
    case Rounding::stochastic: return false;  // the generic loop handles stochastic rounding
  }
  return false;
}

}  // namespace

bool avx512_available() {
  static const bool ok = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                         __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
  return ok;
}

bool f32_to_codes_avx512(const Target& t, const float* in, std::uint8_t* out, std::size_t n) {
  return dispatch(t, in, out, n);
}
bool f32_to_codes_avx512(const Target& t, const float* in, std::uint16_t* out, std::size_t n) {
  return dispatch(t, in, out, n);
}
bool f32_to_codes_avx512(const Target& t, const float* in, std::uint32_t* out, std::size_t n) {
  return dispatch(t, in, out, n);
}

}  // namespace blockscale::detail

#else

namespace blockscale::detail {
bool avx512_available() { return false; }
bool f32_to_codes_avx512(const Target&, const float*, std::uint8_t*, std::size_t) { return false; }
bool f32_to_codes_avx512(const Target&, const float*, std::uint16_t*, std::size_t) { return false; }
bool f32_to_codes_avx512(const Target&, const float*, std::uint32_t*, std::size_t) { return false; }
}  // namespace blockscale::detail

#endif
