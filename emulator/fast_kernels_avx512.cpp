// SPDX-License-Identifier: Apache-2.0
// The fast-path kernels with AVX-512 intrinsics: the algorithm of fast_kernels.h (and of the plain
// C++ in fast_kernels_portable.cpp, which reads more easily), with vectors across output columns:
//   * exact-tier test: per lane, int32 vectors of the exponent bounds;
//   * exact tier: a*b exact in double, summed with vfmadd231pd (the fused add of an exact product
//     to an exact partial sum that fits 53 bits rounds nothing), scaled by vscalefpd;
//   * truncating tier: e_max by vpaddw / vpmaxsw over 32 columns at once (int16 exponents), each
//     term a*b*2^(F + scale exps - e_max) by two vmulps and truncated by vcvttps2dq, summed in
//     int32 in halves of at most 16 products (|term| < 2^27);
//   * GST-FDPA: 4 p_g of 16 products by four vpdpbusd (VNNI);
//   * output conversion: vcvtpd2ps with embedded round-toward-zero, then Inf at 2^128, RZ-E8M13,
//     the underflow zero and the canonical NaN with masks.
// Needs AVX-512 F/BW/DQ/VL (checked at run time before these functions are called).
#include "fast_kernels.h"

#if defined(__x86_64__) && defined(__GNUC__)
// GCC 12 warns that _mm512_undefined_* inside its own intrinsic headers "may be used
// uninitialized" (GCC bug 105593); the value is never read.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop

#include <algorithm>

namespace blockscale::emulator::fast {

namespace {

#define BLOCKSCALE_AVX512 __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl")))
#define BLOCKSCALE_AVX512_VNNI __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx512vnni")))
#define BLOCKSCALE_AVX512_INLINE inline __attribute__((always_inline, target("avx512f,avx512bw,avx512dq,avx512vl")))

constexpr int kTruncate = _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC;

// Per lane of 16 fp32 accumulators: e(c), whether c = +-0, and C's floor of e_max (e_zero for 0).
struct AccInfo {
  __m512i exp, floor;
  __mmask16 zero;
};

BLOCKSCALE_AVX512_INLINE AccInfo acc_info(__m512i c, int e_zero) {
  const __m512i field = _mm512_and_si512(_mm512_srli_epi32(c, 23), _mm512_set1_epi32(0xFF));
  const __m512i exp = _mm512_sub_epi32(_mm512_max_epi32(field, _mm512_set1_epi32(1)), _mm512_set1_epi32(127));
  const __mmask16 zero = _mm512_testn_epi32_mask(c, _mm512_set1_epi32(0x7FFFFFFF));
  return {exp, _mm512_mask_mov_epi32(exp, zero, _mm512_set1_epi32(e_zero)), zero};
}

BLOCKSCALE_AVX512_INLINE __m512d lo_pd(__m512i x) { return _mm512_cvtepi32_pd(_mm512_castsi512_si256(x)); }
BLOCKSCALE_AVX512_INLINE __m512d hi_pd(__m512i x) { return _mm512_cvtepi32_pd(_mm512_extracti64x4_epi64(x, 1)); }
BLOCKSCALE_AVX512_INLINE __m512d lo_ps_pd(__m512i bits) { return _mm512_cvtps_pd(_mm512_castps512_ps256(_mm512_castsi512_ps(bits))); }
BLOCKSCALE_AVX512_INLINE __m512d hi_ps_pd(__m512i bits) {
  return _mm512_cvtps_pd(_mm512_extractf32x8_ps(_mm512_castsi512_ps(bits), 1));
}

// b.6 for 16 exact doubles (lanes 0-7 in lo, 8-15 in hi): round_output() of fast_kernels.h.
BLOCKSCALE_AVX512_INLINE __m512i round16(__m512d lo, __m512d hi, const OutputRule& r) {
  const __m256 flo = _mm512_cvt_roundpd_ps(lo, kTruncate), fhi = _mm512_cvt_roundpd_ps(hi, kTruncate);
  __m512i bits = _mm512_castps_si512(_mm512_insertf32x8(_mm512_castps256_ps512(flo), fhi, 1));
  const __m512d limit = _mm512_set1_pd(0x1p128);
  const auto ovf = static_cast<__mmask16>(_mm512_cmp_pd_mask(_mm512_abs_pd(lo), limit, _CMP_GE_OQ) |
                                          (_mm512_cmp_pd_mask(_mm512_abs_pd(hi), limit, _CMP_GE_OQ) << 8));
  const auto nan = static_cast<__mmask16>(_mm512_cmp_pd_mask(lo, lo, _CMP_UNORD_Q) |
                                          (_mm512_cmp_pd_mask(hi, hi, _CMP_UNORD_Q) << 8));
  // Hardware "RZ" overflows to Inf from 2^128 (IEEE RZ would give FLT_MAX).
  bits = _mm512_mask_mov_epi32(
      bits, ovf, _mm512_or_si512(_mm512_and_si512(bits, _mm512_set1_epi32(static_cast<int>(0x80000000u))), _mm512_set1_epi32(0x7F800000)));
  if (r.e8m13) bits = _mm512_and_si512(bits, _mm512_set1_epi32(static_cast<int>(0xFFFFFC00u)));
  if (r.positive_underflow) bits = _mm512_maskz_mov_epi32(_mm512_test_epi32_mask(bits, _mm512_set1_epi32(0x7FFFFFFF)), bits);
  return _mm512_mask_mov_epi32(bits, nan, _mm512_set1_epi32(0x7FFFFFFF));
}

// ---- T-FDPA / ST-FDPA, tiles of kRows x 32 outputs (two 16-lane halves per row).

static_assert(kTfdpaWidth == 32 && kRows == 4, "the AVX-512 T-FDPA kernel is written for 4 x 32 tiles");

BLOCKSCALE_AVX512 void tfdpa_avx512(const TfdpaTile& t, std::uint32_t* acc, std::size_t s0, std::size_t s1,
                                    StepCounts& counts) {
  constexpr std::size_t W = kTfdpaWidth;
  const TfdpaPanels& P = *t.p;
  const auto L = static_cast<std::size_t>(P.L);
  const int F = t.rule.F;
  const __m512i product_slack = _mm512_set1_epi32(F - P.frac_a - P.frac_b);
  const __m512i c_slack = _mm512_set1_epi32(F - 23);
  for (std::size_t s = s0; s < s1; ++s) {
    const std::size_t k0 = s * L;
    const std::uint32_t nan_lanes = P.b_nan[t.strip * P.steps + s], inf_lanes = P.b_inf[t.strip * P.steps + s];
    std::uint8_t row_flags[kRows];
    bool special = (nan_lanes | inf_lanes) != 0;
    for (std::size_t r = 0; r < kRows; ++r) {
      row_flags[r] = P.a_flags[(t.row0 + r) * P.steps + s];
      special |= row_flags[r] != 0;
    }
    alignas(64) std::uint32_t c_in[kRows * W];
    if (special) std::copy(acc, acc + kRows * W, c_in);

    // Exact-tier test and per-lane setup (fast_kernels_portable.cpp spells out the bounds).
    const std::size_t bstep = (t.strip * P.steps + s) * W;
    __m512i c[kRows][2], scale_exp[kRows][2], floor_exp[kRows][2];
    __mmask16 outside = 0;
    for (std::size_t r = 0; r < kRows; ++r) {
      const std::size_t at = (t.row0 + r) * P.steps + s;
      const __m512i a_lo = _mm512_set1_epi32(P.a_lo[at]), a_hi = _mm512_set1_epi32(P.a_hi[at]);
      const __m512i a_sexp = _mm512_set1_epi32(P.a_sexp[at]);
      for (std::size_t h = 0; h < 2; ++h) {
        c[r][h] = _mm512_loadu_si512(acc + r * W + 16 * h);
        const AccInfo ci = acc_info(c[r][h], t.rule.e_zero);
        const __m512i es = _mm512_add_epi32(a_sexp, _mm512_loadu_si512(&P.b_sexp[bstep + 16 * h]));
        const __m512i b_lo = _mm512_cvtepi16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(&P.b_lo[bstep + 16 * h])));
        const __m512i b_hi = _mm512_cvtepi16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(&P.b_hi[bstep + 16 * h])));
        const __m512i upper = _mm512_max_epi32(ci.floor, _mm512_add_epi32(es, _mm512_add_epi32(a_hi, b_hi)));
        const __m512i lower = _mm512_add_epi32(es, _mm512_add_epi32(a_lo, b_lo));
        outside |= _mm512_cmpgt_epi32_mask(_mm512_sub_epi32(upper, lower), product_slack);
        outside |= _mm512_mask_cmpgt_epi32_mask(static_cast<__mmask16>(~ci.zero), _mm512_sub_epi32(upper, ci.exp), c_slack);
        scale_exp[r][h] = es;
        floor_exp[r][h] = ci.floor;
      }
    }

    if (outside == 0) {
      // Exact tier: C + sum(a*b) * 2^(scale exps), all in double without rounding.
      ++counts.exact;
      const double* bd = &P.b_dval[(t.strip * P.k + k0) * W];
      const double* ad[kRows];
      for (std::size_t r = 0; r < kRows; ++r) ad[r] = &P.a_dval[(t.row0 + r) * P.k + k0];
      __m512d sum[kRows][4];
      for (auto& row : sum) {
        for (auto& q : row) q = _mm512_setzero_pd();
      }
      for (std::size_t k = 0; k < L; ++k) {
        const __m512d b0 = _mm512_load_pd(bd + k * W), b1 = _mm512_load_pd(bd + k * W + 8);
        const __m512d b2 = _mm512_load_pd(bd + k * W + 16), b3 = _mm512_load_pd(bd + k * W + 24);
        for (std::size_t r = 0; r < kRows; ++r) {
          const __m512d a = _mm512_set1_pd(ad[r][k]);
          sum[r][0] = _mm512_fmadd_pd(a, b0, sum[r][0]);
          sum[r][1] = _mm512_fmadd_pd(a, b1, sum[r][1]);
          sum[r][2] = _mm512_fmadd_pd(a, b2, sum[r][2]);
          sum[r][3] = _mm512_fmadd_pd(a, b3, sum[r][3]);
        }
      }
      for (std::size_t r = 0; r < kRows; ++r) {
        for (std::size_t h = 0; h < 2; ++h) {
          const __m512d vlo = _mm512_add_pd(lo_ps_pd(c[r][h]), _mm512_scalef_pd(sum[r][2 * h], lo_pd(scale_exp[r][h])));
          const __m512d vhi = _mm512_add_pd(hi_ps_pd(c[r][h]), _mm512_scalef_pd(sum[r][2 * h + 1], hi_pd(scale_exp[r][h])));
          _mm512_storeu_si512(acc + r * W + 16 * h, round16(vlo, vhi, t.rule));
        }
      }
    } else {
      // Truncating tier. Pass 1: the largest product exponent per lane, 32 lanes of int16.
      ++counts.truncating;
      const std::int16_t* be = &P.b_exp[(t.strip * P.k + k0) * W];
      const std::int32_t* ae[kRows];
      for (std::size_t r = 0; r < kRows; ++r) ae[r] = &P.a_exp2[(t.row0 + r) * P.k + k0];
      __m512i m[kRows];
      for (auto& x : m) x = _mm512_set1_epi16(2 * kNoExp);
      for (std::size_t k = 0; k < L; ++k) {
        const __m512i b = _mm512_load_si512(be + k * W);
        for (std::size_t r = 0; r < kRows; ++r) m[r] = _mm512_max_epi16(m[r], _mm512_add_epi16(b, _mm512_set1_epi32(ae[r][k])));
      }
      __m512i emax[kRows][2];
      __m512 grid[kRows][2];
      for (std::size_t r = 0; r < kRows; ++r) {
        const __m512i mh[2] = {_mm512_cvtepi16_epi32(_mm512_castsi512_si256(m[r])),
                               _mm512_cvtepi16_epi32(_mm512_extracti64x4_epi64(m[r], 1))};
        for (std::size_t h = 0; h < 2; ++h) {
          emax[r][h] = _mm512_max_epi32(floor_exp[r][h], _mm512_add_epi32(mh[h], scale_exp[r][h]));
          // 2^(F + scale exps - e_max), at most 2^64 (see the portable kernel); vscalefps gives 0
          // below 2^-149, where every term truncates to 0 anyway.
          const __m512i e = _mm512_min_epi32(_mm512_set1_epi32(64),
                                             _mm512_sub_epi32(_mm512_add_epi32(_mm512_set1_epi32(F), scale_exp[r][h]), emax[r][h]));
          grid[r][h] = _mm512_scalef_ps(_mm512_set1_ps(1.0f), _mm512_cvtepi32_ps(e));
        }
      }
      // Pass 2: terms truncated toward zero by the float -> int32 conversion, summed in int32 over
      // at most 16 products at a time.
      const float* bv = &P.b_val[(t.strip * P.k + k0) * W];
      const float* av[kRows];
      for (std::size_t r = 0; r < kRows; ++r) av[r] = &P.a_val[(t.row0 + r) * P.k + k0];
      __m512d S[kRows][4];
      for (auto& row : S) {
        for (auto& q : row) q = _mm512_setzero_pd();
      }
      for (std::size_t kb = 0; kb < L; kb += 16) {
        __m512i part[kRows][2];
        for (auto& row : part) row[0] = row[1] = _mm512_setzero_si512();
        for (std::size_t k = kb; k < std::min(L, kb + 16); ++k) {
          const __m512 b0 = _mm512_load_ps(bv + k * W), b1 = _mm512_load_ps(bv + k * W + 16);
          for (std::size_t r = 0; r < kRows; ++r) {
            const __m512 a = _mm512_set1_ps(av[r][k]);
            part[r][0] = _mm512_add_epi32(part[r][0], _mm512_cvttps_epi32(_mm512_mul_ps(_mm512_mul_ps(a, b0), grid[r][0])));
            part[r][1] = _mm512_add_epi32(part[r][1], _mm512_cvttps_epi32(_mm512_mul_ps(_mm512_mul_ps(a, b1), grid[r][1])));
          }
        }
        for (std::size_t r = 0; r < kRows; ++r) {
          for (std::size_t h = 0; h < 2; ++h) {
            S[r][2 * h] = _mm512_add_pd(S[r][2 * h], lo_pd(part[r][h]));
            S[r][2 * h + 1] = _mm512_add_pd(S[r][2 * h + 1], hi_pd(part[r][h]));
          }
        }
      }
      const __m512i f = _mm512_set1_epi32(F);
      for (std::size_t r = 0; r < kRows; ++r) {
        for (std::size_t h = 0; h < 2; ++h) {
          const __m512i down = _mm512_sub_epi32(f, emax[r][h]);  // F - e_max
          const __m512d ct_lo = _mm512_roundscale_pd(_mm512_scalef_pd(lo_ps_pd(c[r][h]), lo_pd(down)), kTruncate);
          const __m512d ct_hi = _mm512_roundscale_pd(_mm512_scalef_pd(hi_ps_pd(c[r][h]), hi_pd(down)), kTruncate);
          const __m512i up = _mm512_sub_epi32(emax[r][h], f);
          const __m512d vlo = _mm512_scalef_pd(_mm512_add_pd(S[r][2 * h], ct_lo), lo_pd(up));
          const __m512d vhi = _mm512_scalef_pd(_mm512_add_pd(S[r][2 * h + 1], ct_hi), hi_pd(up));
          _mm512_storeu_si512(acc + r * W + 16 * h, round16(vlo, vhi, t.rule));
        }
      }
    }

    if (special) {
      ++counts.special;
      for (std::size_t r = 0; r < kRows; ++r) {
        const std::uint32_t nan = (row_flags[r] & kHasNaN) ? 0xFFFFFFFFu : nan_lanes;
        const std::uint32_t inf = ((row_flags[r] & kHasInf) ? 0xFFFFFFFFu : inf_lanes) & ~nan;
        for (std::size_t h = 0; h < 2; ++h) {
          __m512i x = _mm512_loadu_si512(acc + r * W + 16 * h);
          x = _mm512_mask_mov_epi32(x, static_cast<__mmask16>(nan >> (16 * h)), _mm512_set1_epi32(0x7FFFFFFF));
          _mm512_storeu_si512(acc + r * W + 16 * h, x);
        }
        for (std::uint32_t lanes = inf; lanes != 0; lanes &= lanes - 1) {
          const auto j = static_cast<std::size_t>(__builtin_ctz(lanes));
          acc[r * W + j] = t.fallback(t.fallback_ctx, t.row0 + r, t.strip * W + j, s, c_in[r * W + j]);
        }
      }
    }
  }
}

// ---- GST-FDPA, tiles of kRows x 16 outputs.

static_assert(kGstWidth == 16, "the AVX-512 GST-FDPA kernel is written for 16-column strips");

// The group sums use VNNI (vpdpbusd: four u8 x s8 products added to each 32-bit lane); CPUs with
// AVX-512 but without VNNI run the AVX2 build of the portable GST kernel instead.
BLOCKSCALE_AVX512_VNNI void gst_avx512(const GstTile& t, std::uint32_t* acc, std::size_t s0, std::size_t s1,
                                       StepCounts& counts) {
  constexpr std::size_t W = kGstWidth;
  constexpr std::size_t kMaxGroups = 4;
  const GstPanels& P = *t.p;
  const std::size_t G = static_cast<std::size_t>(P.L) / kGroup;
  const int F = t.rule.F;
  const __m512i group_slack = _mm512_set1_epi32(F - 8);
  const __m512i c_slack = _mm512_set1_epi32(F - 23);
  for (std::size_t s = s0; s < s1; ++s) {
    const std::size_t g0 = s * G;
    const std::uint32_t nan_lanes = P.b_nan[t.strip * P.steps + s];
    bool special = nan_lanes != 0;
    for (std::size_t r = 0; r < kRows; ++r) special |= P.a_flags[(t.row0 + r) * P.steps + s] != 0;

    __m512i sums[kRows][kMaxGroups], c[kRows];
    AccInfo ci[kRows];
    __mmask16 outside = 0;
    for (std::size_t r = 0; r < kRows; ++r) {
      const std::size_t row = t.row0 + r;
      c[r] = _mm512_loadu_si512(acc + r * W);
      ci[r] = acc_info(c[r], t.rule.e_zero);
      __m512i upper = ci[r].floor, lower = _mm512_set1_epi32(kNoExpHigh);
      for (std::size_t g = 0; g < G; ++g) {
        const std::size_t ag = row * P.groups + g0 + g, bg = t.strip * P.groups + g0 + g;
        __m512i sum = _mm512_set1_epi32(P.a_init[ag]);
        for (std::size_t q = 0; q < 4; ++q) {
          sum = _mm512_dpbusd_epi32(sum, _mm512_load_si512(&P.b_q[(bg * 4 + q) * W]),
                                    _mm512_set1_epi32(static_cast<int>(P.a_q[ag * 4 + q])));
        }
        sums[r][g] = sum;
        upper = _mm512_max_epi32(upper, _mm512_add_epi32(_mm512_set1_epi32(P.a_ehi[ag]), _mm512_load_si512(&P.b_ehi[bg * W])));
        lower = _mm512_min_epi32(lower, _mm512_add_epi32(_mm512_set1_epi32(P.a_elo[ag]), _mm512_load_si512(&P.b_elo[bg * W])));
      }
      outside |= _mm512_cmpgt_epi32_mask(_mm512_sub_epi32(upper, lower), group_slack);
      outside |= _mm512_mask_cmpgt_epi32_mask(static_cast<__mmask16>(~ci[r].zero), _mm512_sub_epi32(upper, ci[r].exp), c_slack);
    }

    if (outside == 0) {
      ++counts.exact;
      for (std::size_t r = 0; r < kRows; ++r) {
        const std::size_t row = t.row0 + r;
        __m512d vlo = lo_ps_pd(c[r]), vhi = hi_ps_pd(c[r]);
        for (std::size_t g = 0; g < G; ++g) {
          const std::size_t ag = row * P.groups + g0 + g, bg = t.strip * P.groups + g0 + g;
          const __m512d a = _mm512_set1_pd(P.a_sv[ag]);
          const __m512d wlo = _mm512_mul_pd(a, _mm512_load_pd(&P.b_sv[bg * W])), whi = _mm512_mul_pd(a, _mm512_load_pd(&P.b_sv[bg * W + 8]));
          vlo = _mm512_fmadd_pd(lo_pd(sums[r][g]), wlo, vlo);
          vhi = _mm512_fmadd_pd(hi_pd(sums[r][g]), whi, vhi);
        }
        _mm512_storeu_si512(acc + r * W, round16(vlo, vhi, t.rule));
      }
    } else {
      ++counts.truncating;
      const __m512i f = _mm512_set1_epi32(F);
      for (std::size_t r = 0; r < kRows; ++r) {
        const std::size_t row = t.row0 + r;
        // e_max: groups with a nonzero product (and a nonzero scale product: ehi) and C's floor.
        __m512i emax = ci[r].floor;
        for (std::size_t g = 0; g < G; ++g) {
          const std::size_t ag = row * P.groups + g0 + g, bg = t.strip * P.groups + g0 + g;
          const __mmask16 live = _mm512_test_epi32_mask(_mm512_set1_epi32(static_cast<int>(P.a_nz[ag])), _mm512_load_si512(&P.b_nz[bg * W]));
          const __m512i e = _mm512_add_epi32(_mm512_set1_epi32(P.a_ehi[ag]), _mm512_load_si512(&P.b_ehi[bg * W]));
          emax = _mm512_mask_max_epi32(emax, live, emax, e);
        }
        const __m512i down = _mm512_sub_epi32(f, emax), up = _mm512_sub_epi32(emax, f);
        const __m512d down_lo = lo_pd(down), down_hi = hi_pd(down);
        __m512d slo = _mm512_roundscale_pd(_mm512_scalef_pd(lo_ps_pd(c[r]), down_lo), kTruncate);
        __m512d shi = _mm512_roundscale_pd(_mm512_scalef_pd(hi_ps_pd(c[r]), down_hi), kTruncate);
        for (std::size_t g = 0; g < G; ++g) {
          const std::size_t ag = row * P.groups + g0 + g, bg = t.strip * P.groups + g0 + g;
          const __m512d a = _mm512_set1_pd(P.a_sv[ag]);
          const __m512d wlo = _mm512_scalef_pd(_mm512_mul_pd(a, _mm512_load_pd(&P.b_sv[bg * W])), down_lo);
          const __m512d whi = _mm512_scalef_pd(_mm512_mul_pd(a, _mm512_load_pd(&P.b_sv[bg * W + 8])), down_hi);
          slo = _mm512_add_pd(slo, _mm512_roundscale_pd(_mm512_mul_pd(lo_pd(sums[r][g]), wlo), kTruncate));
          shi = _mm512_add_pd(shi, _mm512_roundscale_pd(_mm512_mul_pd(hi_pd(sums[r][g]), whi), kTruncate));
        }
        _mm512_storeu_si512(acc + r * W, round16(_mm512_scalef_pd(slo, lo_pd(up)), _mm512_scalef_pd(shi, hi_pd(up)), t.rule));
      }
    }

    if (special) {
      ++counts.special;
      for (std::size_t r = 0; r < kRows; ++r) {
        const bool row_nan = (P.a_flags[(t.row0 + r) * P.steps + s] & kHasNaN) != 0;
        const auto nan = static_cast<__mmask16>(row_nan ? 0xFFFFu : nan_lanes);
        _mm512_storeu_si512(acc + r * W, _mm512_mask_mov_epi32(_mm512_loadu_si512(acc + r * W), nan, _mm512_set1_epi32(0x7FFFFFFF)));
      }
    }
  }
}

// ---- Hopper promotion of 4 x 32 accumulators.

BLOCKSCALE_AVX512 void promote_avx512(PromotionFma fma, const std::uint32_t* sa, const std::uint32_t* sb,
                                      const std::uint32_t* part, std::uint32_t* acc) {
  constexpr std::size_t W = kTfdpaWidth;
  for (std::size_t r = 0; r < kRows; ++r) {
    const __m512 a = _mm512_set1_ps(as_float(sa[r]));
    for (std::size_t h = 0; h < 2; ++h) {
      const __m512 b = _mm512_castsi512_ps(_mm512_loadu_si512(sb + 16 * h));
      const __m512 p = _mm512_castsi512_ps(_mm512_loadu_si512(part + r * W + 16 * h));
      const __m512 x = _mm512_castsi512_ps(_mm512_loadu_si512(acc + r * W + 16 * h));
      // Embedded round-to-nearest on every operation: each is one rounded IEEE operation, and the
      // compiler cannot contract a multiply and an add into an FMA (mul_then_add must not be).
      constexpr int kNearest = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
      __m512 y;
      switch (fma) {
        case PromotionFma::scale_product: y = _mm512_fmadd_round_ps(_mm512_mul_round_ps(a, b, kNearest), p, x, kNearest); break;
        case PromotionFma::scale_b_first: y = _mm512_fmadd_round_ps(a, _mm512_mul_round_ps(b, p, kNearest), x, kNearest); break;
        default: y = _mm512_add_round_ps(x, _mm512_mul_round_ps(_mm512_mul_round_ps(a, b, kNearest), p, kNearest), kNearest); break;
      }
      // A NaN anywhere in the chain stays NaN to the end; it leaves canonical (0x7FFFFFFF).
      const __m512i bits = _mm512_mask_mov_epi32(_mm512_castps_si512(y), _mm512_cmp_ps_mask(y, y, _CMP_UNORD_Q),
                                                 _mm512_set1_epi32(0x7FFFFFFF));
      _mm512_storeu_si512(acc + r * W + 16 * h, bits);
    }
  }
}

}  // namespace

bool cpu_has_avx512() {
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
         __builtin_cpu_supports("avx512vl");
}

const KernelSet& avx512_kernels() {
  static const KernelSet k{&tfdpa_avx512, __builtin_cpu_supports("avx512vnni") ? &gst_avx512 : avx2_kernels().gst,
                           &promote_avx512};
  return k;
}

}  // namespace blockscale::emulator::fast

#else  // not x86-64 GCC/Clang: no AVX-512 kernels

namespace blockscale::emulator::fast {
bool cpu_has_avx512() { return false; }
const KernelSet& avx512_kernels() { return portable_kernels(); }
}  // namespace blockscale::emulator::fast

#endif
