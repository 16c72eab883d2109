// SPDX-License-Identifier: Apache-2.0
// The fp32 -> code bulk conversion written with AVX-512 intrinsics (16 lanes): the vector engine
// of detail/convert_avx512.h over a whole buffer. It computes what detail::round_finite /
// convert_f32_bits compute; the exhaustive tests compare it with that scalar engine on every fp32
// input.
#include "bulk_kernels.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include "blockscale/formats/detail/convert_avx512.h"

namespace blockscale::detail {

namespace {

template <Rounding R, class Out>
BLOCKSCALE_AVX512_TARGET void f32_avx512(const Target& t, const float* __restrict in, Out* __restrict out,
                                         std::size_t n) {
  const avx512::VectorTarget vt = avx512::vector_target(t);
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512i code = avx512::convert16<R>(vt, _mm512_loadu_si512(in + i));
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
    const __m512i code = avx512::convert16<R>(vt, _mm512_maskz_loadu_epi32(tail, in + i));
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
