// SPDX-License-Identifier: Apache-2.0
// The fast-path kernels with AVX-512 intrinsics: the algorithm of fast_kernels.h (and of the plain
// C++ in fast_kernels_portable.cpp, which reads more easily), with vectors across output columns.
// T-/ST-FDPA decide per 16-lane vector rather than per tile:
//   * bounds: one pass of carry-free 32-bit adds and byte maxima (vpaddd with the A word broadcast
//     from memory / vpmaxub, 32 lanes x two fields per instruction) gives every lane its exact
//     e_max and the lowest set bit of any of its products, so a vector is known to truncate
//     nothing, or not, before any product is formed; the pass of step s + 1 runs inside the main
//     loop of step s where that is the exact sums' or the F > 16 float form's (BoundsPass), and
//     the pass of a call's step s1 is left for the call that starts there (CarriedBounds); the
//     fp16 form's e-only pass (EePass) rides in its term loop and is carried the same way;
//   * exact vectors: a*b exact in double, summed with vfmadd231pd (the fused add of an exact product
//     to an exact partial sum that fits 53 bits rounds nothing), C truncated to the grid;
//   * truncating vectors: each term a*b*2^(F + scale exps - e_max) by two multiplies, truncated
//     toward zero (vcvttps2dq / vrndscalepd) and summed exactly; when more than two vectors of a
//     tile truncate, the tile runs the float form with each B load shared by its four rows; for
//     F <= 16 the float form keeps the whole step, C and the output in grid units (int32), and on
//     CPUs with AVX512-FP16 it forms the terms of F <= 13 in fp16, 32 per instruction, for every
//     tile;
//   * GST-FDPA: 4 p_g of 16 products by four vpdpbusd (VNNI);
//   * output conversion: vcvtpd2ps with embedded round-toward-zero, then Inf at 2^128, RZ-E8M13,
//     the underflow zero and the canonical NaN with masks; vectors whose e_max and C rule all of
//     those out take the bare conversion (the float form's, for F > 15: its sum in grid units,
//     int32 unless that wraps, converted with round-toward-zero and scaled, step_output_runs);
//   * panel decoding (T-/ST-FDPA): the per-code tables read by gathers, 16 elements at a time.
// Needs AVX-512 F/BW/DQ/VL (checked at run time before these functions are called); the fp16 form
// also AVX512-FP16 and VNNI (checked when the kernel set is built).
#include "fast_kernels.h"

#if defined(__x86_64__) && defined(__GNUC__)
// GCC 12 warns that _mm512_undefined_* inside its own intrinsic headers "may be used
// uninitialized" (GCC bug 105593); the value is never read.
#pragma GCC diagnostic push
#if !defined(__clang__)  // a GCC-only warning
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>
#pragma GCC diagnostic pop

#include <algorithm>
#include <bit>
#include <cstring>

namespace blockscale::emulator::fast {

namespace {

#define BLOCKSCALE_AVX512 __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl")))
#define BLOCKSCALE_AVX512_VNNI __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx512vnni")))
#define BLOCKSCALE_AVX512_INLINE inline __attribute__((always_inline, target("avx512f,avx512bw,avx512dq,avx512vl")))
// The AVX512-FP16 intrinsics (__m512h) are declared for use under a target attribute by GCC 12 and
// later and by Clang 15 and later; Clang 14's <immintrin.h> declares them only when the whole file
// is built with -mavx512fp16. Without them the fp16 form is left out: the fp32 float form gives the
// same bits.
#if (defined(__clang__) && __clang_major__ >= 15) || (!defined(__clang__) && __GNUC__ >= 12)
#define BLOCKSCALE_HAVE_AVX512FP16 1
#else
#define BLOCKSCALE_HAVE_AVX512FP16 0
#endif

#define BLOCKSCALE_AVX512_FP16 __attribute__((noinline, target("avx512f,avx512bw,avx512dq,avx512vl,avx512vnni,avx512fp16")))
#define BLOCKSCALE_AVX512_FP16_INLINE \
  inline __attribute__((always_inline, target("avx512f,avx512bw,avx512dq,avx512vl,avx512vnni,avx512fp16")))

constexpr int kTruncate = _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC;

// Per lane of 16 fp32 accumulators: e(c), whether c = +-0, and C's floor of e_max (e_zero for 0).
struct AccInfo {
  __m512i exp, floor;
  __mmask16 zero;
};

// The per-vector setup's constants, read from memory that the compiler must treat as unknown
// (opaque()). As immediates, GCC 12 re-created each one in every use (a scalar move and a
// broadcast: 81 broadcasts from general registers in the T-FDPA kernel) when the step's 32 vectors
// left it no register to spare; values it cannot re-create it broadcasts once, outside the step
// loop (26 such broadcasts left, 91 fewer instructions in the kernel), for 2-5% less time on the
// MXFP8 and Hopper rows (docs/performance.md).
struct SetupConstants {
  // field_floor: the fp32 exponent field of the accumulator's emin (fast_kernels.h, acc_exponent).
  std::int32_t byte_mask = 0xFF, field_floor = 1, fp32_bias = 127, magnitude = 0x7FFFFFFF;
  std::int32_t eb_bias2 = 2 * kEbBias, eb_live = 2 * (kEbBias - 16);
  std::int32_t e_zero = 0;
};

BLOCKSCALE_AVX512_INLINE void opaque(SetupConstants& k) { asm("" : "+m"(k)); }

BLOCKSCALE_AVX512_INLINE AccInfo acc_info(__m512i c, const SetupConstants& k) {
  const __m512i field = _mm512_and_si512(_mm512_srli_epi32(c, 23), _mm512_set1_epi32(k.byte_mask));
  const __m512i exp = _mm512_sub_epi32(_mm512_max_epi32(field, _mm512_set1_epi32(k.field_floor)), _mm512_set1_epi32(k.fp32_bias));
  const __mmask16 zero = _mm512_testn_epi32_mask(c, _mm512_set1_epi32(k.magnitude));
  return {exp, _mm512_mask_mov_epi32(exp, zero, _mm512_set1_epi32(k.e_zero)), zero};
}

BLOCKSCALE_AVX512_INLINE __m512d lo_pd(__m512i x) { return _mm512_cvtepi32_pd(_mm512_castsi512_si256(x)); }
BLOCKSCALE_AVX512_INLINE __m512d hi_pd(__m512i x) { return _mm512_cvtepi32_pd(_mm512_extracti64x4_epi64(x, 1)); }
BLOCKSCALE_AVX512_INLINE __m512i lo_epi64(__m512i x) { return _mm512_cvtepi32_epi64(_mm512_castsi512_si256(x)); }
BLOCKSCALE_AVX512_INLINE __m512i hi_epi64(__m512i x) { return _mm512_cvtepi32_epi64(_mm512_extracti64x4_epi64(x, 1)); }
BLOCKSCALE_AVX512_INLINE __m512d lo_ps_pd(__m512i bits) { return _mm512_cvtps_pd(_mm512_castps512_ps256(_mm512_castsi512_ps(bits))); }
BLOCKSCALE_AVX512_INLINE __m512d hi_ps_pd(__m512i bits) {
  return _mm512_cvtps_pd(_mm512_extractf32x8_ps(_mm512_castsi512_ps(bits), 1));
}

// Lanes whose fp32 accumulator C is a NaN: the step's value is then NaN (products of finite
// elements are finite; NaN and Inf elements take the special-value route), b.7.
BLOCKSCALE_AVX512_INLINE __mmask16 nan_lanes_of(__m512i c) {
  return _mm512_cmpgt_epu32_mask(_mm512_and_si512(c, _mm512_set1_epi32(0x7FFFFFFF)), _mm512_set1_epi32(0x7F800000));
}

// RNE-FP16 (b.6) for 16 exact doubles, as fp32 patterns of the fp16 results (fast_kernels.h:
// round_to_f16, OutputRule::f16): each rounded to odd in fp32 (RZ, then the last bit set where
// that was inexact: 24 bits keep the 11 + 2 that one correct rounding to fp16 needs, and a value
// beyond fp32's range becomes FLT_MAX, still above fp16's), then the host's RNE conversion to fp16
// (vcvtps2ph: subnormals, Inf from 65520, the sign of a zero kept) and back to fp32 (exact). The
// row's zero sign and the canonical NaN (`nan` lanes) as masks.
BLOCKSCALE_AVX512_INLINE __m512i round16_f16(__m512d lo, __m512d hi, __mmask16 nan, bool positive_underflow) {
  const __m256 flo = _mm512_cvt_roundpd_ps(lo, kTruncate), fhi = _mm512_cvt_roundpd_ps(hi, kTruncate);
  const auto inexact = static_cast<__mmask16>(_mm512_cmp_pd_mask(_mm512_cvtps_pd(flo), lo, _CMP_NEQ_UQ) |
                                              (_mm512_cmp_pd_mask(_mm512_cvtps_pd(fhi), hi, _CMP_NEQ_UQ) << 8));
  __m512i bits = _mm512_castps_si512(_mm512_insertf32x8(_mm512_castps256_ps512(flo), fhi, 1));
  bits = _mm512_mask_or_epi32(bits, inexact, bits, _mm512_set1_epi32(1));
  const __m256i half = _mm512_cvtps_ph(_mm512_castsi512_ps(bits), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512i out = _mm512_castps_si512(_mm512_cvtph_ps(half));
  if (positive_underflow) out = _mm512_maskz_mov_epi32(_mm512_test_epi32_mask(out, _mm512_set1_epi32(0x7FFFFFFF)), out);
  return _mm512_mask_mov_epi32(out, nan, _mm512_set1_epi32(0x7FFFFFFF));
}

// b.6 for 16 exact doubles (lanes 0-7 in lo, 8-15 in hi): round_output() of fast_kernels.h; `nan`
// marks the lanes whose value is NaN.
BLOCKSCALE_AVX512_INLINE __m512i round16(__m512d lo, __m512d hi, __mmask16 nan, const OutputRule& r) {
  if (r.f16) return round16_f16(lo, hi, nan, r.positive_underflow);
  const __m256 flo = _mm512_cvt_roundpd_ps(lo, kTruncate), fhi = _mm512_cvt_roundpd_ps(hi, kTruncate);
  __m512i bits = _mm512_castps_si512(_mm512_insertf32x8(_mm512_castps256_ps512(flo), fhi, 1));
  const __m512d limit = _mm512_set1_pd(0x1p128);
  const auto ovf = static_cast<__mmask16>(_mm512_cmp_pd_mask(_mm512_abs_pd(lo), limit, _CMP_GE_OQ) |
                                          (_mm512_cmp_pd_mask(_mm512_abs_pd(hi), limit, _CMP_GE_OQ) << 8));
  // Hardware "RZ" overflows to Inf from 2^128 (IEEE RZ would give FLT_MAX).
  bits = _mm512_mask_mov_epi32(
      bits, ovf, _mm512_or_si512(_mm512_and_si512(bits, _mm512_set1_epi32(static_cast<int>(0x80000000u))), _mm512_set1_epi32(0x7F800000)));
  if (r.e8m13) bits = _mm512_and_si512(bits, _mm512_set1_epi32(static_cast<int>(0xFFFFFC00u)));
  if (r.positive_underflow) bits = _mm512_maskz_mov_epi32(_mm512_test_epi32_mask(bits, _mm512_set1_epi32(0x7FFFFFFF)), bits);
  return _mm512_mask_mov_epi32(bits, nan, _mm512_set1_epi32(0x7FFFFFFF));
}

// ---- T-FDPA / ST-FDPA, tiles of kRows x 32 outputs (two 16-lane vectors per row).
//
// Per step and tile: one bounds pass gives, per output lane, e_max (the largest e(a) + e(b) plus
// the scale exponents, floored by C; numerics.md b.3 step 2) and the lowest set bit of any
// product. A lane whose lowest product bit lies on or above the grid 2^(e_max - F) truncates no
// product (b.3 step 4), so its step value is C truncated to the grid plus the exact sum of the
// products, which an fp64 FMA chain forms without rounding (every partial sum is a multiple of
// the grid below 2^(F + 8) grid units, F <= 25). Vectors with a lane that truncates a product take
// the truncating computation; when more than two of the tile's vectors do, the whole tile takes
// it, sharing each B load across the four rows.

static_assert(kTfdpaWidth == 32 && kRows == 4, "the AVX-512 T-FDPA kernel is written for 4 x 32 tiles");

// The truncating computation of one 16-lane vector (lanes 0-7 in lo, 8-15 in hi): the sum over
// the step of the products times 2^grid_exp (per lane), each truncated toward zero, in grid units.
// It reads the fp64 values of the chunk (Fp64Chunk: scales included), which the fp64 sum of the same step has just
// brought into L1 (this runs for the few vectors of a tile that truncate); products, grid
// multiples and the integer sum (|term| < 2^(F+2), at most 64 terms) are exact in fp64.
BLOCKSCALE_AVX512_INLINE void truncated_sum(const double* ad, const double* bd, std::size_t L, __m512d grid_lo,
                                            __m512d grid_hi, __m512d& lo, __m512d& hi) {
  constexpr std::size_t W = kTfdpaWidth;
  lo = hi = _mm512_setzero_pd();
  for (std::size_t k = 0; k < L; ++k) {
    const __m512d a = _mm512_set1_pd(ad[k]);
    lo = _mm512_add_pd(lo, _mm512_roundscale_pd(_mm512_mul_pd(_mm512_mul_pd(a, _mm512_load_pd(bd + k * W)), grid_lo), kTruncate));
    hi = _mm512_add_pd(hi, _mm512_roundscale_pd(_mm512_mul_pd(_mm512_mul_pd(a, _mm512_load_pd(bd + k * W + 8)), grid_hi), kTruncate));
  }
}

// The grid exponent F + scale exps - e_max, clamped to -90..64: no nonzero product of 8-bit
// operands lies outside 2^-32..2^32, so below -90 every term is below 2^-58 (it truncates to 0, as
// it does at -90), and at -90 no fp32 term is subnormal (subnormal operands would cost microcode
// assists). 64 only bounds steps without a nonzero product.
BLOCKSCALE_AVX512_INLINE __m512i grid_exponent(__m512i f_plus_scale_exp, __m512i emax) {
  return _mm512_max_epi32(_mm512_set1_epi32(-90), _mm512_min_epi32(_mm512_set1_epi32(64), _mm512_sub_epi32(f_plus_scale_exp, emax)));
}

// 2^(F + scale exps - e_max) as floats: a product times this is its term in grid units.
BLOCKSCALE_AVX512_INLINE __m512 grid_factor(__m512i f_plus_scale_exp, __m512i emax) {
  return _mm512_scalef_ps(_mm512_set1_ps(1.0f), _mm512_cvtepi32_ps(grid_exponent(f_plus_scale_exp, emax)));
}

// grid_factor for the tile's eight vectors.
BLOCKSCALE_AVX512_INLINE void grid_factors(const __m512i (&f_scale)[kRows][2], const __m512i (&emax)[kRows][2],
                                           __m512 (&grid)[kRows][2]) {
  for (std::size_t r = 0; r < kRows; ++r) {
    for (std::size_t h = 0; h < 2; ++h) grid[r][h] = grid_factor(f_scale[r][h], emax[r][h]);
  }
}

// b.3 steps 5-6 for 16 lanes: C truncated toward zero to the grid 2^(e_max - F) plus the products'
// part (exact doubles in value units, lanes 0-7 and 8-15), through the output conversion. C's
// truncation is a mask: its lowest bit is 2^(e(c) - 23), so the low e_max - F - e(c) + 23 bits of
// its fraction go (all of its magnitude from 24 on, leaving the signed zero); an Inf or NaN C
// (e(c) = 128) stays as it is. Both parts are multiples of the grid below 2^(e_max + 2): their
// double sum is exact.
BLOCKSCALE_AVX512_INLINE __m512i step_output(__m512i c, __m512i c_exp, __m512i emax, __m512d p_lo, __m512d p_hi, int F,
                                             const OutputRule& rule) {
  // The fraction bits' place comes from C's fp32 pattern: for an f16 accumulator c_exp is e(c),
  // floored at -14, and a subnormal C's pattern has a smaller exponent (fast_kernels.h, OutputRule).
  if (rule.f16) {
    const __m512i field = _mm512_and_si512(_mm512_srli_epi32(c, 23), _mm512_set1_epi32(0xFF));
    c_exp = _mm512_sub_epi32(_mm512_max_epi32(field, _mm512_set1_epi32(1)), _mm512_set1_epi32(127));
  }
  const __m512i cleared = _mm512_add_epi32(_mm512_sub_epi32(emax, c_exp), _mm512_set1_epi32(23 - F));
  __m512i keep = _mm512_sllv_epi32(_mm512_set1_epi32(-1), _mm512_max_epi32(cleared, _mm512_setzero_si512()));
  keep = _mm512_mask_mov_epi32(keep, _mm512_cmpge_epi32_mask(cleared, _mm512_set1_epi32(24)),
                               _mm512_set1_epi32(static_cast<int>(0x80000000u)));
  keep = _mm512_mask_mov_epi32(keep, _mm512_cmpeq_epi32_mask(c_exp, _mm512_set1_epi32(128)), _mm512_set1_epi32(-1));
  const __m512i ct = _mm512_and_si512(c, keep);
  return round16(_mm512_add_pd(p_lo, lo_ps_pd(ct)), _mm512_add_pd(p_hi, hi_ps_pd(ct)), nan_lanes_of(c), rule);
}

// Whether every lane of a vector can take step_output_plain (or step_output_units): C finite
// (e(c) < 128) and F - 139 <= e_max <= kBareMaxEmax. Then |V| cannot reach 2^128 (fast_kernels.h),
// and a nonzero V, a multiple of the grid 2^(e_max - F), is at least 2^-139, so its RZ fp32
// magnitude keeps a bit above the 10 that RZ-E8M13 clears: no Inf, no NaN and no underflow zero
// can arise, and round16's fix-ups would change nothing.
BLOCKSCALE_AVX512_INLINE bool plain_vector(__m512i c_exp, __m512i emax, int F) {
  const __mmask16 finite = _mm512_cmplt_epi32_mask(c_exp, _mm512_set1_epi32(128));
  const __m512i above_floor = _mm512_sub_epi32(emax, _mm512_set1_epi32(F - 139));  // unsigned range test
  return _mm512_mask_cmple_epu32_mask(finite, above_floor, _mm512_set1_epi32(kBareMaxEmax - (F - 139))) == 0xFFFF;
}

// step_output for a vector that passed plain_vector. C's truncation keeps the fraction bits above
// the grid (cleared < 24) or nothing (cleared >= 24: all of C lies below the grid; the zero's sign
// does not matter, as +0 + -0 = +0 and the products' part is never -0); the sum is exact as in
// step_output, and the conversion is the bare RZ (plus RZ-E8M13's mask).
BLOCKSCALE_AVX512_INLINE __m512i step_output_plain(__m512i c, __m512i c_exp, __m512i emax, __m512d p_lo, __m512d p_hi,
                                                   int F, bool e8m13) {
  const __m512i cleared = _mm512_max_epi32(_mm512_add_epi32(_mm512_sub_epi32(emax, c_exp), _mm512_set1_epi32(23 - F)),
                                           _mm512_setzero_si512());
  const __m512i keep = _mm512_maskz_sllv_epi32(_mm512_cmplt_epi32_mask(cleared, _mm512_set1_epi32(24)), _mm512_set1_epi32(-1), cleared);
  const __m512i ct = _mm512_and_si512(c, keep);
  const __m256 lo = _mm512_cvt_roundpd_ps(_mm512_add_pd(p_lo, lo_ps_pd(ct)), kTruncate);
  const __m256 hi = _mm512_cvt_roundpd_ps(_mm512_add_pd(p_hi, hi_ps_pd(ct)), kTruncate);
  const __m512i bits = _mm512_castps_si512(_mm512_insertf32x8(_mm512_castps256_ps512(lo), hi, 1));
  return e8m13 ? _mm512_and_si512(bits, _mm512_set1_epi32(static_cast<int>(0xFFFFFC00u))) : bits;
}

// step_output for an f16 accumulator where no lane's C has a bit below the grid 2^(e_max - F):
// C is zero, or its last bit, 2^(e(c) - 10) (also for a subnormal C, whose e(c) is -14), lies on
// or above the grid, e_max - e(c) <= F - 10; then C enters the sum as it is (an Inf or NaN C too:
// e_max = e(c)).
BLOCKSCALE_AVX512_INLINE bool f16_c_on_grid(__m512i c, __m512i c_exp, __m512i emax, int F) {
  const __mmask16 nonzero = _mm512_test_epi32_mask(c, _mm512_set1_epi32(0x7FFFFFFF));
  return _mm512_mask_cmpgt_epi32_mask(nonzero, _mm512_sub_epi32(emax, c_exp), _mm512_set1_epi32(F - 10)) == 0;
}

// step_output or, where it applies, its cheaper forms: step_output_plain (fp32 accumulators,
// plain_vector) or, for f16 ones, the sum with C as it is (f16_c_on_grid).
BLOCKSCALE_AVX512_INLINE __m512i step_result(__m512i c, __m512i c_exp, __m512i emax, __m512d p_lo, __m512d p_hi, int F,
                                             const OutputRule& rule) {
  if (rule.f16) {
    if (!f16_c_on_grid(c, c_exp, emax, F)) return step_output(c, c_exp, emax, p_lo, p_hi, F, rule);
    return round16_f16(_mm512_add_pd(p_lo, lo_ps_pd(c)), _mm512_add_pd(p_hi, hi_ps_pd(c)), nan_lanes_of(c), rule.positive_underflow);
  }
  if (plain_vector(c_exp, emax, F)) return step_output_plain(c, c_exp, emax, p_lo, p_hi, F, rule.e8m13);
  return step_output(c, c_exp, emax, p_lo, p_hi, F, rule);
}

// The float form's int32 runs of a step: runs[q][r][h] is the sum of the terms of k in
// [16 q, 16 q + 16) of row r, vector h (16 terms, each below 2^(F + 2): below 2^31 for F <= 25).
constexpr std::size_t kMaxRuns = kMaxStepProducts / 16;
using TermRuns = __m512i[kMaxRuns][kRows][2];

// The lanes where the int32 add s = a + b wrapped: a and b of one sign, s of the other
// ((a ^ s) & (b ^ s) negative; 0x42 is that function's vpternlogd table).
BLOCKSCALE_AVX512_INLINE __mmask16 add_wrapped(__m512i a, __m512i b, __m512i s) {
  return _mm512_movepi32_mask(_mm512_ternarylogic_epi32(a, b, s, 0x42));
}

// b.3 steps 5-6 in grid units for F > kUnitsMaxF and a vector that passed plain_vector, from the
// step's nruns runs. C truncated toward zero to the grid is trunc(C 2^(F - e_max)) grid units, an
// int32 below 2^(F + 1) (as in step_output_units). V = that plus the runs, below 2^(F + 2) (L + 1)
// <= 2^33 grid units, is added in int32 with a wrap test on every add; where no lane wrapped (real
// data: V below 2^31 grid units) V is exact there, else it is added again in int64. One conversion
// with embedded round-toward-zero (vcvtdq2ps, or vcvtqq2ps from int64) keeps V's 24 leading bits (RZ
// is symmetric: the sign-magnitude truncation of b.6), and the scaling by 2^(e_max - F) is exact:
// a normal result keeps those bits, and a result below 2^-126 is below 2^(-126 - (e_max - F))
// <= 2^13 grid units (e_max >= F - 139 on a plain vector), which the conversion left exact and a
// subnormal holds (a multiple of 2^-139). So this is RZ-FP32 of the step value V 2^(e_max - F) (and
// RZ-E8M13 by the same mask as step_output_plain). A zero V gives +0, as the fp64 route does.
// Against that route it skips the runs' conversions to double, the fp64 scalings, C's mask and the
// fp32 <-> fp64 conversions of C and V.
BLOCKSCALE_AVX512_INLINE __m512i step_output_runs(__m512i c, __m512i emax, const TermRuns& runs, std::size_t nruns,
                                                  std::size_t r, std::size_t h, int F, bool e8m13) {
  const __m512 down = _mm512_cvtepi32_ps(_mm512_sub_epi32(_mm512_set1_epi32(F), emax));
  const __m512i ct = _mm512_cvttps_epi32(_mm512_scalef_ps(_mm512_castsi512_ps(c), down));
  __m512i sum = ct;
  __mmask16 wrapped = 0;
  for (std::size_t q = 0; q < nruns; ++q) {
    const __m512i next = _mm512_add_epi32(sum, runs[q][r][h]);
    wrapped |= add_wrapped(sum, runs[q][r][h], next);
    sum = next;
  }
  __m512 v;
  if (wrapped == 0) {
    v = _mm512_cvt_roundepi32_ps(sum, kTruncate);
  } else {
    __m512i lo = lo_epi64(ct), hi = hi_epi64(ct);
    for (std::size_t q = 0; q < nruns; ++q) {
      lo = _mm512_add_epi64(lo, lo_epi64(runs[q][r][h]));
      hi = _mm512_add_epi64(hi, hi_epi64(runs[q][r][h]));
    }
    v = _mm512_insertf32x8(_mm512_castps256_ps512(_mm512_cvt_roundepi64_ps(lo, kTruncate)), _mm512_cvt_roundepi64_ps(hi, kTruncate), 1);
  }
  const __m512 up = _mm512_sub_ps(_mm512_setzero_ps(), down);  // e_max - F
  const __m512i bits = _mm512_castps_si512(_mm512_scalef_ps(v, up));
  return e8m13 ? _mm512_and_si512(bits, _mm512_set1_epi32(static_cast<int>(0xFFFFFC00u))) : bits;
}

// The step results of a tile's eight vectors from the float form's runs, stored into the
// accumulators: step_output_runs where it applies, else step_result from the runs' sum as exact
// doubles (below 2^53) in value units.
BLOCKSCALE_AVX512_INLINE void store_step_results(std::uint32_t* acc, const __m512i (&c)[kRows][2], const __m512i (&c_exp)[kRows][2],
                                                 const __m512i (&emax)[kRows][2], const TermRuns& runs, std::size_t nruns,
                                                 int F, const OutputRule& rule) {
  for (std::size_t r = 0; r < kRows; ++r) {
    for (std::size_t h = 0; h < 2; ++h) {
      __m512i out;
      if (!rule.f16 && plain_vector(c_exp[r][h], emax[r][h], F)) {
        out = step_output_runs(c[r][h], emax[r][h], runs, nruns, r, h, F, rule.e8m13);
      } else {
        __m512d p_lo = _mm512_setzero_pd(), p_hi = _mm512_setzero_pd();
        for (std::size_t q = 0; q < nruns; ++q) {
          p_lo = _mm512_add_pd(p_lo, lo_pd(runs[q][r][h]));
          p_hi = _mm512_add_pd(p_hi, hi_pd(runs[q][r][h]));
        }
        const __m512i to_value = _mm512_sub_epi32(emax[r][h], _mm512_set1_epi32(F));  // grid units to values
        out = step_result(c[r][h], c_exp[r][h], emax[r][h], _mm512_scalef_pd(p_lo, lo_pd(to_value)),
                          _mm512_scalef_pd(p_hi, hi_pd(to_value)), F, rule);
      }
      _mm512_storeu_si512(acc + r * kTfdpaWidth + 16 * h, out);
    }
  }
}

// b.3 steps 5-6 in grid units, for F <= kUnitsMaxF and a vector that passed plain_vector; S: the
// products' part in grid units (|S| < 2^23). C truncated toward zero to the grid 2^(e_max - F) is
// trunc(C 2^(F - e_max)) grid units, below 2^(F + 1) as C is below 2^(e_max + 1) (a scaled C that
// scalef rounds lies below 2^-126 and truncates to 0, as it should). Their sum, below 2^24, is an
// exact float; times 2^(e_max - F) it is a multiple of 2^-139 below 2^128, which a float holds
// exactly (normal, or subnormal on the 2^-149 grid): the exact step value, which RZ leaves as it is
// (RZ-E8M13 clears its 10 low fraction bits, as step_output_plain does). A zero sum gives +0, as
// the fp64 route does.
BLOCKSCALE_AVX512_INLINE __m512i step_output_units(__m512i c, __m512i emax, __m512i S, int F, bool e8m13) {
  const __m512 down = _mm512_cvtepi32_ps(_mm512_sub_epi32(_mm512_set1_epi32(F), emax));
  const __m512i ct = _mm512_cvttps_epi32(_mm512_scalef_ps(_mm512_castsi512_ps(c), down));
  const __m512 v = _mm512_scalef_ps(_mm512_cvtepi32_ps(_mm512_add_epi32(ct, S)), _mm512_sub_ps(_mm512_setzero_ps(), down));
  const __m512i bits = _mm512_castps_si512(v);
  return e8m13 ? _mm512_and_si512(bits, _mm512_set1_epi32(static_cast<int>(0xFFFFFC00u))) : bits;
}

// The bounds pass of one step for the tile's four rows: per row, the unsigned byte maximum over k
// of B's 32 biased (e, -lsb) pairs plus the row's pair (fast_panels.h, eb): one 32-bit add with
// the A word broadcast from memory and one byte max per row and k. The pass of step s + 1 reads
// nothing that step s writes (C enters e_max after the pass), so the main loop of step s can carry
// it (exact_sums, float_form_terms): its 9 integer vector operations per k then issue beside that
// loop's floating-point ones, which on CPUs with more vector ALU ports than FMA ports (AMD Zen 5:
// four and two) costs less than a loop of their own (docs/performance.md).
// The same max-plus pass serves the wide kernel (tfdpa_wide_avx512) for e_max alone: per row, the
// largest e(a) + e(b) over a step's k in 32 signed int16 lanes, from the exponent panels (an A
// word holds e(a) twice, so that its 32-bit broadcast fills every 16-bit lane; a zero or special
// element's kNoExp keeps the sum far below every floor of e_max).
enum class PassLanes { byte_pairs, exponents };
// A step's panels (at its first k: eb, or exp and exp2) and the maxima so far.
template <PassLanes kLanes>
struct MaxPlusPass {
  const std::int16_t* b;
  const std::int32_t* a[kRows];
  __m512i m[kRows];
};
using BoundsPass = MaxPlusPass<PassLanes::byte_pairs>;
using WideEmaxPass = MaxPlusPass<PassLanes::exponents>;

// m = max(m, t) in place, by inline assembly: GCC 12 otherwise gave each loop-carried maximum a
// register copy per k.
template <PassLanes kLanes>
BLOCKSCALE_AVX512_INLINE void max_in_place(__m512i& m, __m512i t) {
  if constexpr (kLanes == PassLanes::byte_pairs) {
    asm("vpmaxub %1, %0, %0" : "+v"(m) : "v"(t));
  } else {
    asm("vpmaxsw %1, %0, %0" : "+v"(m) : "v"(t));
  }
}

// b plus an A word broadcast: a 32-bit add for the byte pairs (no carry leaves a byte), a 16-bit
// one for the exponents.
template <PassLanes kLanes>
BLOCKSCALE_AVX512_INLINE __m512i plus_a(__m512i b, std::int32_t a) {
  if constexpr (kLanes == PassLanes::byte_pairs) {
    return _mm512_add_epi32(b, _mm512_set1_epi32(a));
  } else {
    return _mm512_add_epi16(b, _mm512_set1_epi32(a));
  }
}

// The pass's work for one k, into the maxima m0..m3.
template <PassLanes kLanes>
BLOCKSCALE_AVX512_INLINE void bounds_pass_k(const MaxPlusPass<kLanes>& p, std::size_t k, __m512i& m0, __m512i& m1,
                                            __m512i& m2, __m512i& m3) {
  const __m512i b = _mm512_load_si512(p.b + k * kTfdpaWidth);
  max_in_place<kLanes>(m0, plus_a<kLanes>(b, p.a[0][k]));
  max_in_place<kLanes>(m1, plus_a<kLanes>(b, p.a[1][k]));
  max_in_place<kLanes>(m2, plus_a<kLanes>(b, p.a[2][k]));
  max_in_place<kLanes>(m3, plus_a<kLanes>(b, p.a[3][k]));
}

// Sets p to the tile's pass at panel position k (a step's first k), its maxima at their floor: zero
// for the byte pairs, 2 kNoExp for the exponents. Member by member, in place: a pass returned by
// value and assigned was copied with 512-bit moves over the four pointers just stored one by one,
// a store-forwarding stall in every step (5% of the kernel's time samples on an H200 host's Xeon,
// docs/performance.md).
template <PassLanes kLanes>
BLOCKSCALE_AVX512_INLINE void set_pass(MaxPlusPass<kLanes>& p, const TfdpaTile& t, std::size_t k) {
  constexpr bool kBytes = kLanes == PassLanes::byte_pairs;
  const TfdpaPanels& P = *t.p;
  p.b = &(kBytes ? P.b_eb : P.b_exp)[(t.strip * P.k + k) * kTfdpaWidth];
  for (std::size_t r = 0; r < kRows; ++r) {
    p.a[r] = &(kBytes ? P.a_eb : P.a_exp2)[(t.row0 + r) * P.k + k];
    p.m[r] = kBytes ? _mm512_setzero_si512() : _mm512_set1_epi16(2 * kNoExp);
  }
}

// The whole pass in a loop of its own, from the maxima in p.
template <PassLanes kLanes>
BLOCKSCALE_AVX512_INLINE void bounds_pass(const MaxPlusPass<kLanes>& p, std::size_t L, __m512i* bounds) {
  __m512i m0 = p.m[0], m1 = p.m[1], m2 = p.m[2], m3 = p.m[3];
  for (std::size_t k = 0; k < L; ++k) bounds_pass_k(p, k, m0, m1, m2, m3);
  bounds[0] = m0;
  bounds[1] = m1;
  bounds[2] = m2;
  bounds[3] = m3;
}

// x_q += a * b_q for one row's four vectors, in place (exact_sums).
BLOCKSCALE_AVX512_INLINE void fma4(__m512d a, __m512d b0, __m512d b1, __m512d b2, __m512d b3, __m512d& x0, __m512d& x1,
                                   __m512d& x2, __m512d& x3) {
  asm("vfmadd231pd %1, %2, %0" : "+v"(x0) : "v"(a), "v"(b0));
  asm("vfmadd231pd %1, %2, %0" : "+v"(x1) : "v"(a), "v"(b1));
  asm("vfmadd231pd %1, %2, %0" : "+v"(x2) : "v"(a), "v"(b2));
  asm("vfmadd231pd %1, %2, %0" : "+v"(x3) : "v"(a), "v"(b3));
}

// The exact route's fp64 sums of one step for the tile's four rows and 32 lanes (sum[r][q]: lanes
// 8q..8q+7): 16 FMAs per k, each sum updated in place (GCC 12 otherwise copies loop-carried
// registers, see bounds_pass); with kNextBounds, the next step's bounds pass in the same loop, its
// maxima continued from and left in `next` (as in float_form_terms).
template <bool kNextBounds>
BLOCKSCALE_AVX512_INLINE void exact_sums(const double* bd, const double* const* ad, std::size_t L, __m512d (&sum)[kRows][4],
                                         BoundsPass* next) {
  constexpr std::size_t W = kTfdpaWidth;
  __m512d s00 = _mm512_setzero_pd(), s01 = s00, s02 = s00, s03 = s00, s10 = s00, s11 = s00, s12 = s00, s13 = s00;
  __m512d s20 = s00, s21 = s00, s22 = s00, s23 = s00, s30 = s00, s31 = s00, s32 = s00, s33 = s00;
  __m512i m0 = _mm512_setzero_si512(), m1 = m0, m2 = m0, m3 = m0;
  if constexpr (kNextBounds) m0 = next->m[0], m1 = next->m[1], m2 = next->m[2], m3 = next->m[3];
  const double *a0 = ad[0], *a1 = ad[1], *a2 = ad[2], *a3 = ad[3];
  for (std::size_t k = 0; k < L; ++k) {
    const __m512d b0 = _mm512_load_pd(bd + k * W), b1 = _mm512_load_pd(bd + k * W + 8);
    const __m512d b2 = _mm512_load_pd(bd + k * W + 16), b3 = _mm512_load_pd(bd + k * W + 24);
    fma4(_mm512_set1_pd(a0[k]), b0, b1, b2, b3, s00, s01, s02, s03);
    fma4(_mm512_set1_pd(a1[k]), b0, b1, b2, b3, s10, s11, s12, s13);
    fma4(_mm512_set1_pd(a2[k]), b0, b1, b2, b3, s20, s21, s22, s23);
    fma4(_mm512_set1_pd(a3[k]), b0, b1, b2, b3, s30, s31, s32, s33);
    if constexpr (kNextBounds) bounds_pass_k(*next, k, m0, m1, m2, m3);
  }
  sum[0][0] = s00, sum[0][1] = s01, sum[0][2] = s02, sum[0][3] = s03;
  sum[1][0] = s10, sum[1][1] = s11, sum[1][2] = s12, sum[1][3] = s13;
  sum[2][0] = s20, sum[2][1] = s21, sum[2][2] = s22, sum[2][3] = s23;
  sum[3][0] = s30, sum[3][1] = s31, sum[3][2] = s32, sum[3][3] = s33;
  if constexpr (kNextBounds) next->m[0] = m0, next->m[1] = m1, next->m[2] = m2, next->m[3] = m3;
}

// bounds_pass for e_max only, from the ee panels of the fp16 mode (fast_panels.h): each add
// serves two rows. Each row's zmm holds its e(a) + e(b) byte in the low byte of every 16-bit lane,
// as bounds_pass gives it (the high byte is another row's or 0; only the low byte is read).
// EePass: a step's panels (at its first k) and the two maxima so far (rows 0 and 1, rows 2 and 3).
struct EePass {
  const std::int16_t* b;
  const std::int32_t* a0;
  const std::int32_t* a1;
  __m512i m0, m1;
};
// The tile's pass at k = 0 (formed once per kernel call: per step, GCC compiled these offsets to a
// vpmullq pair ahead of the pass's first loads).
BLOCKSCALE_AVX512_INLINE void set_ee_pass(EePass& p, const TfdpaTile& t) {
  const TfdpaPanels& P = *t.p;
  p.b = &P.b_ee[t.strip * P.k * kTfdpaWidth];
  p.a0 = &P.a_ee[t.row0 / 2 * P.k];
  p.a1 = p.a0 + P.k;
  p.m0 = p.m1 = _mm512_setzero_si512();
}
// The pass of the step at k from the tile's pass at k = 0 (at0): pointer adds only.
BLOCKSCALE_AVX512_INLINE void advance_ee_pass(EePass& p, const EePass& at0, std::size_t k) {
  p.b = at0.b + k * kTfdpaWidth;
  p.a0 = at0.a0 + k;
  p.a1 = at0.a1 + k;
  p.m0 = p.m1 = _mm512_setzero_si512();
}
// The pass's work for one k, into the maxima m0, m1 (in place, as in bounds_pass).
BLOCKSCALE_AVX512_INLINE void e_bounds_pass_k(const EePass& p, std::size_t k, __m512i& m0, __m512i& m1) {
  const __m512i b = _mm512_load_si512(p.b + k * kTfdpaWidth);
  const __m512i t0 = _mm512_add_epi32(b, _mm512_set1_epi32(p.a0[k])), t1 = _mm512_add_epi32(b, _mm512_set1_epi32(p.a1[k]));
  asm("vpmaxub %1, %0, %0" : "+v"(m0) : "v"(t0));
  asm("vpmaxub %1, %0, %0" : "+v"(m1) : "v"(t1));
}
// The four rows' bounds from the two maxima.
BLOCKSCALE_AVX512_INLINE void e_bounds(__m512i m0, __m512i m1, __m512i* bounds) {
  bounds[0] = m0;
  bounds[1] = _mm512_srli_epi16(m0, 8);
  bounds[2] = m1;
  bounds[3] = _mm512_srli_epi16(m1, 8);
}
// The whole pass in a loop of its own.
BLOCKSCALE_AVX512_INLINE void e_bounds_pass(const EePass& p, std::size_t L, __m512i* bounds) {
  __m512i m0 = p.m0, m1 = p.m1;
  for (std::size_t k = 0; k < L; ++k) e_bounds_pass_k(p, k, m0, m1);
  e_bounds(m0, m1, bounds);
}

// One row's terms of one k for both halves, added to its two sums (float_form_terms).
BLOCKSCALE_AVX512_INLINE void add_terms(__m512i& lo, __m512i& hi, __m512 a, __m512 b0, __m512 b1, __m512 g0, __m512 g1) {
  const __m512i t0 = _mm512_cvttps_epi32(_mm512_mul_ps(_mm512_mul_ps(a, b0), g0));
  const __m512i t1 = _mm512_cvttps_epi32(_mm512_mul_ps(_mm512_mul_ps(a, b1), g1));
  asm("vpaddd %1, %0, %0" : "+v"(lo) : "v"(t0));
  asm("vpaddd %1, %0, %0" : "+v"(hi) : "v"(t1));
}

// The eight sums of a tile (row r, half h: s_rh), kept in named variables in the loops below so
// that each stays in its register, into part.
BLOCKSCALE_AVX512_INLINE void store_sums(__m512i (&part)[kRows][2], __m512i s00, __m512i s01, __m512i s10, __m512i s11,
                                         __m512i s20, __m512i s21, __m512i s30, __m512i s31) {
  part[0][0] = s00;
  part[0][1] = s01;
  part[1][0] = s10;
  part[1][1] = s11;
  part[2][0] = s20;
  part[2][1] = s21;
  part[3][0] = s30;
  part[3][1] = s31;
}

// The float form's int32 sums, over k in [k0, k1), of the terms a*b*grid truncated toward zero
// (each below 2^(F + 2): at most 16 terms for F <= 25, 64 for F <= kUnitsMaxF), for the tile's
// eight vectors (row r, half h). Each B load serves the four rows. The sums are added in place by
// inline assembly, as in bounds_pass: GCC 12 otherwise copied each of the eight loop-carried sums
// to a new register in every k. With kNextBounds, the next step's bounds pass runs in the same
// loop, its maxima continued from and left in `next` (a BoundsPass, or the wide kernel's
// WideEmaxPass).
template <bool kNextBounds = false, class Pass = BoundsPass>
BLOCKSCALE_AVX512_INLINE void float_form_terms(const float* bv, const float* const* av, std::size_t k0, std::size_t k1,
                                               const __m512 (&grid)[kRows][2], __m512i (&part)[kRows][2],
                                               Pass* next = nullptr) {
  constexpr std::size_t W = kTfdpaWidth;
  __m512i s00 = _mm512_setzero_si512(), s01 = s00, s10 = s00, s11 = s00, s20 = s00, s21 = s00, s30 = s00, s31 = s00;
  __m512i m0 = s00, m1 = s00, m2 = s00, m3 = s00;
  if constexpr (kNextBounds) m0 = next->m[0], m1 = next->m[1], m2 = next->m[2], m3 = next->m[3];
  for (std::size_t k = k0; k < k1; ++k) {
    const __m512 b0 = _mm512_load_ps(bv + k * W), b1 = _mm512_load_ps(bv + k * W + 16);
    add_terms(s00, s01, _mm512_set1_ps(av[0][k]), b0, b1, grid[0][0], grid[0][1]);
    add_terms(s10, s11, _mm512_set1_ps(av[1][k]), b0, b1, grid[1][0], grid[1][1]);
    add_terms(s20, s21, _mm512_set1_ps(av[2][k]), b0, b1, grid[2][0], grid[2][1]);
    add_terms(s30, s31, _mm512_set1_ps(av[3][k]), b0, b1, grid[3][0], grid[3][1]);
    if constexpr (kNextBounds) bounds_pass_k(*next, k, m0, m1, m2, m3);
  }
  store_sums(part, s00, s01, s10, s11, s20, s21, s30, s31);
  if constexpr (kNextBounds) next->m[0] = m0, next->m[1] = m1, next->m[2] = m2, next->m[3] = m3;
}

// ---- The FP16 float form (CPUs with AVX512-FP16, F <= kFp16MaxF; fast_panels.h, h): with
// a' = a 2^(F - ea) and b' = b 2^-eb (ea, eb: the largest e(x) of the row's and the lane's step),
// a term a b 2^(F + scale exps - e_max) is a' b' 2^D with D = ea + eb + scale exps - e_max, and
// for F <= 13 every term lies below 2^15. In fp16, with D <= 15 in every lane:
//   * a' b' (below 2^15) is exact wherever the term is at least 1 (then a' b' >= 2^-D has at most 8
//     significant bits, the lowest at or above 2^(-D - 7) >= 2^-22); elsewhere it may round in the
//     subnormal range, by at most 2^-25, which cannot lift it to 2^-D (an 8-bit value below 2^-D
//     lies at least 2^(-D - 8) >= 2^-23 below it);
//   * times 2^D (fp16 bits of 2^max(D, -25): 0 below 2^-24, where every term is below 2^-9) the
//     term is exact where it is at least 1, and below 1 elsewhere;
//   * vcvttph2w truncates it toward zero into int16 (|term| < 2^15), and vpdpwssd against ones
//     adds two k of one output into int32 (the sum of at most 64 stays below 2^21).
// So the int32 sums equal float_form_terms' sums over the step. 32 terms per instruction instead
// of 16: four operations per 32 terms instead of eight.
[[maybe_unused]] constexpr int kFp16MaxF = 13;  // read only where the fp16 form is built

// Per vector: the fp16 bits of 2^D in both halves of every 32-bit lane, and whether D <= 15 in
// every lane (a_hmax / b_hmax of kNoExpHigh, an inexact fp16 element, make D large).
BLOCKSCALE_AVX512_INLINE bool fp16_factor(__m512i ea, __m512i eb, __m512i es, __m512i emax, __m512i& g) {
  const __m512i d = _mm512_sub_epi32(_mm512_add_epi32(_mm512_add_epi32(ea, eb), es), emax);
  if (_mm512_cmpgt_epi32_mask(d, _mm512_set1_epi32(15)) != 0) return false;
  const __m512 p = _mm512_scalef_ps(_mm512_set1_ps(1.0f), _mm512_cvtepi32_ps(_mm512_max_epi32(d, _mm512_set1_epi32(-25))));
  const __m512i h = _mm512_cvtepu16_epi32(_mm512_cvtps_ph(p, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  g = _mm512_or_si512(h, _mm512_slli_epi32(h, 16));
  return true;
}

#if BLOCKSCALE_HAVE_AVX512FP16
// The int32 sums of the FP16 float form over a step of L (even) k for the tile's eight vectors:
// per pair of k and row, 32 products of two k and 16 outputs (fast_panels.h, b_h), times 2^D,
// truncated to int16 and added in pairs.
BLOCKSCALE_AVX512_FP16_INLINE void add_fp16_terms(__m512i& lo, __m512i& hi, __m512h a, __m512h b0, __m512h b1, __m512i g0,
                                                  __m512i g1, __m512i ones) {
  const __m512i t0 = _mm512_cvttph_epi16(_mm512_mul_ph(_mm512_mul_ph(a, b0), _mm512_castsi512_ph(g0)));
  const __m512i t1 = _mm512_cvttph_epi16(_mm512_mul_ph(_mm512_mul_ph(a, b1), _mm512_castsi512_ph(g1)));
  // In place, as in bounds_pass (GCC 12 copies every loop-carried sum otherwise).
  asm("vpdpwssd %2, %1, %0" : "+v"(lo) : "v"(t0), "v"(ones));
  asm("vpdpwssd %2, %1, %0" : "+v"(hi) : "v"(t1), "v"(ones));
}

// With kNextBounds, the next step's e-only bounds pass runs in the same loop (two of its k per
// pair of k here), its maxima continued from and left in `next`, as exact_sums carries its pass.
template <bool kNextBounds>
BLOCKSCALE_AVX512_FP16 void fp16_terms(const std::uint16_t* bh, const std::uint16_t* const* ah, std::size_t L,
                                       const __m512i (&g)[kRows][2], __m512i (&part)[kRows][2], EePass* next) {
  constexpr std::size_t W = kTfdpaWidth;
  const __m512i ones = _mm512_set1_epi16(1);
  __m512i s00 = _mm512_setzero_si512(), s01 = s00, s10 = s00, s11 = s00, s20 = s00, s21 = s00, s30 = s00, s31 = s00;
  __m512i m0 = s00, m1 = s00;
  if constexpr (kNextBounds) m0 = next->m0, m1 = next->m1;
  const auto pair = [&](std::size_t r, std::size_t kp) {
    std::uint32_t bits;
    std::memcpy(&bits, ah[r] + 2 * kp, sizeof bits);
    return bits;
  };
  for (std::size_t kp = 0; kp < L / 2; ++kp) {
    const __m512h b0 = _mm512_castsi512_ph(_mm512_load_si512(bh + kp * 2 * W));
    const __m512h b1 = _mm512_castsi512_ph(_mm512_load_si512(bh + kp * 2 * W + W));
    add_fp16_terms(s00, s01, _mm512_castsi512_ph(_mm512_set1_epi32(static_cast<int>(pair(0, kp)))), b0, b1, g[0][0], g[0][1], ones);
    add_fp16_terms(s10, s11, _mm512_castsi512_ph(_mm512_set1_epi32(static_cast<int>(pair(1, kp)))), b0, b1, g[1][0], g[1][1], ones);
    add_fp16_terms(s20, s21, _mm512_castsi512_ph(_mm512_set1_epi32(static_cast<int>(pair(2, kp)))), b0, b1, g[2][0], g[2][1], ones);
    add_fp16_terms(s30, s31, _mm512_castsi512_ph(_mm512_set1_epi32(static_cast<int>(pair(3, kp)))), b0, b1, g[3][0], g[3][1], ones);
    if constexpr (kNextBounds) {
      e_bounds_pass_k(*next, 2 * kp, m0, m1);
      e_bounds_pass_k(*next, 2 * kp + 1, m0, m1);
    }
  }
  store_sums(part, s00, s01, s10, s11, s20, s21, s30, s31);
  if constexpr (kNextBounds) next->m0 = m0, next->m1 = m1;
}
#endif  // BLOCKSCALE_HAVE_AVX512FP16

BLOCKSCALE_AVX512 void tfdpa_avx512(const TfdpaTile& t, std::uint32_t* acc, std::size_t s0, std::size_t s1,
                                    StepCounts& counts) {
  constexpr std::size_t W = kTfdpaWidth;
  constexpr int kVectors = 2 * kRows;
  // Per k, the fp64 sum of the tile is 16 FMAs, one vector's truncating sum in fp64 8 vector
  // operations, and the whole tile's float form 32 (all 512-bit): with up to two truncating vectors
  // the fp64 sums cost no more. (On an H200 host CPU, limits 1, 2 and 3 ran within the machine's
  // noise of each other; docs/performance.md.)
  constexpr int kMaxTruncatingVectors = 2;
  // Each vector's C floor of e_max (acc_info) at the previous step, for the route's prediction.
  __m512i previous_floor[kRows][2];
  const TfdpaPanels& P = *t.p;
  const auto L = static_cast<std::size_t>(P.L);
  const int F = t.rule.F;
  const __m512i f = _mm512_set1_epi32(F);
  SetupConstants consts;
  consts.e_zero = t.rule.e_zero;
  consts.field_floor = acc_min_exponent(t.rule) + 127;
  opaque(consts);
  BoundsPass nb{};  // the next step's bounds pass, carried by a step's loop
  std::size_t nb_step = CarriedBounds::kNone;  // the step whose bounds nb.m holds
  // The fp16 mode's e-only pass of the next step, carried by fp16_terms (and, as nb, from one
  // call to the next: with the fp16 panels the carry holds its two maxima).
  EePass ne{};
  std::size_t ne_step = CarriedBounds::kNone;
  if (t.carry != nullptr) {
    if (t.carry->step == s0) {
      if (P.fp16_F != 0) {
        ne.m0 = _mm512_load_si512(t.carry->bytes[0]);
        ne.m1 = _mm512_load_si512(t.carry->bytes[1]);
        ne_step = s0;
      } else {
        for (std::size_t r = 0; r < kRows; ++r) nb.m[r] = _mm512_load_si512(t.carry->bytes[r]);
        nb_step = s0;
      }
    }
    t.carry->step = CarriedBounds::kNone;
  }
  // The fp16 mode's panels at k = 0 for the tile, once per call (set_ee_pass).
  EePass ee_at0{};
  if (P.fp16_F != 0) set_ee_pass(ee_at0, t);
#if BLOCKSCALE_HAVE_AVX512FP16
  const std::uint16_t* a_h_rows[kRows] = {};
  const std::uint16_t* b_h_strip = nullptr;
  if (P.fp16_F != 0) {
    for (std::size_t r = 0; r < kRows; ++r) a_h_rows[r] = P.a_h.data() + (t.row0 + r) * P.k;
    b_h_strip = P.b_h.data() + t.strip * P.k * W;
  }
#endif
  // A step's loop carries the next step's pass up to here: past the call's last step when a later
  // call will start there (the carry), else to the call's end.
  const std::size_t carried_pass_end = t.carry != nullptr ? P.steps : s1;
  for (std::size_t s = s0; s < s1; ++s) {
    if (nan_absorbed(acc, kRows * W, s1 - s, counts)) break;  // NaN absorption (all_nan)
    const std::size_t k0 = s * L;
    const StepSpecials specials = step_specials(t, s);
    alignas(64) std::uint32_t c_in[kRows * W];
    if (specials.any) std::copy(acc, acc + kRows * W, c_in);

    // Bounds pass (fast_panels.h, eb): per row, 32 lanes of (max e(a)+e(b), -min lsb(a)+lsb(b));
    // with the fp16 panels the first only (ee).
    __m512i bounds[kRows];
    if (nb_step == s) {
      std::copy(nb.m, nb.m + kRows, bounds);
    } else if (ne_step == s) {
      e_bounds(ne.m0, ne.m1, bounds);
    } else if (P.fp16_F != 0) {
      EePass p;
      advance_ee_pass(p, ee_at0, k0);
      e_bounds_pass(p, L, bounds);
    } else {
      BoundsPass p;
      set_pass(p, t, k0);
      bounds_pass(p, L, bounds);
    }

    // Per vector: C, e_max, F + scale exponents, and whether a lane truncates a product; and the
    // same test with the previous step's C floor in place of this step's (predicted).
    const std::size_t bstep = (t.strip * P.steps + s) * W;
    __m512i c[kRows][2], c_exp[kRows][2], emax[kRows][2], f_scale[kRows][2];
    unsigned truncating = 0, predicted = 0;  // bit 2r + h
    for (std::size_t r = 0; r < kRows; ++r) {
      const __m512i a_sexp = _mm512_set1_epi32(P.a_sexp[(t.row0 + r) * P.steps + s]);
      for (std::size_t h = 0; h < 2; ++h) {
        c[r][h] = _mm512_loadu_si512(acc + r * W + 16 * h);
        const AccInfo ci = acc_info(c[r][h], consts);
        c_exp[r][h] = ci.exp;
        if (s == s0) previous_floor[r][h] = ci.floor;
        const __m512i es = _mm512_add_epi32(a_sexp, _mm512_loadu_si512(&P.b_sexp[bstep + 16 * h]));
        // Each int16 pair zero-extended to int32: low byte max e(a)+e(b), high byte -min lsb sum
        // (each plus 2 kEbBias); a low byte below 2 (kEbBias - 16), the least sum of two nonzero
        // elements' bytes, has no nonzero product.
        const __m512i pair = _mm512_cvtepu16_epi32(h == 0 ? _mm512_castsi512_si256(bounds[r]) : _mm512_extracti64x4_epi64(bounds[r], 1));
        const __m512i exp_byte = _mm512_and_si512(pair, _mm512_set1_epi32(consts.byte_mask));
        const __m512i product_exp = _mm512_sub_epi32(exp_byte, _mm512_set1_epi32(consts.eb_bias2));
        const __mmask16 live = _mm512_cmpge_epi32_mask(exp_byte, _mm512_set1_epi32(consts.eb_live));
        const __m512i scaled_product_exp = _mm512_add_epi32(product_exp, es);
        emax[r][h] = _mm512_mask_max_epi32(ci.floor, live, ci.floor, scaled_product_exp);
        f_scale[r][h] = _mm512_add_epi32(f, es);
        // The lowest product bit, lsb(a) + lsb(b) + scale exps, below the grid e_max - F. (With
        // the fp16 panels every tile takes the float form, which does not need to know.) Each
        // vector's bit is set by arithmetic on its lane mask (m + 0xFFFF has bit 16 set for any
        // m != 0), not by a branch on C.
        if (P.fp16_F == 0) {
          const __m512i neg_lsb = _mm512_sub_epi32(_mm512_srli_epi32(pair, 8), _mm512_set1_epi32(consts.eb_bias2));
          // The largest e_max whose grid keeps the lowest product bit.
          const __m512i emax_limit = _mm512_sub_epi32(f_scale[r][h], neg_lsb);
          const unsigned lanes = _mm512_mask_cmpgt_epi32_mask(live, emax[r][h], emax_limit);
          const __m512i emax_predicted =
              _mm512_mask_max_epi32(previous_floor[r][h], live, previous_floor[r][h], scaled_product_exp);
          const unsigned predicted_lanes = _mm512_mask_cmpgt_epi32_mask(live, emax_predicted, emax_limit);
          truncating |= ((lanes + 0xFFFFu) >> 16) << (2 * r + h);
          predicted |= ((predicted_lanes + 0xFFFFu) >> 16) << (2 * r + h);
        }
        previous_floor[r][h] = ci.floor;
      }
    }

    const int truncating_vectors = std::popcount(truncating);
    // The route follows the prediction: the previous step's C floor is known a whole step before
    // this step's C, which the previous step's output conversion has only just stored, so a
    // mispredicted route branch is caught as soon as the bounds are in, instead of after that
    // conversion and this setup (on the heavy-tailed rows the route changes from step to step).
    // Either route is exact for every vector: the exact one sums each truncating vector apart
    // (truncated_sum, from the true bits), the float form takes them all. On an H200 host CPU,
    // heavy-tailed MXFP8 256 x 256 x 8192 ran about 5% faster, the Gaussian 1024^3 row 1-4% slower
    // (docs/performance.md). With the fp16 panels every tile takes the float form: its fp16 loop
    // costs about what the fp64 sums cost, and there are no fp64 values.
    const bool exact_route = std::popcount(predicted) <= kMaxTruncatingVectors && P.fp16_F == 0;
    // The next step's bounds, carried by this step's loop where it is the exact route's or the
    // float form's for F > kUnitsMaxF (both read the eb panels, which the fp16 mode does not have).
    // Past the call's last step too, when a later call will start there (CarriedBounds).
    const bool carry_next =
        s + 1 < carried_pass_end && P.fp16_F == 0 && (exact_route || F > kUnitsMaxF);
    if (carry_next) {
      set_pass(nb, t, k0 + L);
      nb_step = s + 1;  // once the loop below has run
    }
    if (exact_route) {
      counts.exact += 16 * static_cast<std::uint64_t>(kVectors - truncating_vectors);
      counts.truncating += 16 * static_cast<std::uint64_t>(truncating_vectors);
      const double* bd = t.fp64.b + (k0 - t.fp64.k0) * W;
      const double* ad[kRows];
      for (std::size_t r = 0; r < kRows; ++r) ad[r] = t.fp64.a + r * t.fp64.a_stride + (k0 - t.fp64.k0);
      __m512d sum[kRows][4];
      if (carry_next) {
        exact_sums<true>(bd, ad, L, sum, &nb);
      } else {
        exact_sums<false>(bd, ad, L, sum, nullptr);
      }
      for (std::size_t r = 0; r < kRows; ++r) {
        for (std::size_t h = 0; h < 2; ++h) {
          __m512d p_lo, p_hi;
          if ((truncating >> (2 * r + h)) & 1u) {
            // The chunk's values carry their scales (Fp64Chunk), so the grid factor is 2^(F - e_max):
            // products lie within 2^-286 .. 2^288 and e_max within their range or C's, so the
            // factor and every term times it are normal doubles, with no clamp needed.
            const __m512i g = _mm512_sub_epi32(f, emax[r][h]);
            const __m512d one = _mm512_set1_pd(1.0);
            __m512d s_lo, s_hi;
            truncated_sum(ad[r], bd + 16 * h, L, _mm512_scalef_pd(one, lo_pd(g)), _mm512_scalef_pd(one, hi_pd(g)), s_lo, s_hi);
            const __m512i to_value = _mm512_sub_epi32(emax[r][h], f);  // grid units to values
            p_lo = _mm512_scalef_pd(s_lo, lo_pd(to_value));
            p_hi = _mm512_scalef_pd(s_hi, hi_pd(to_value));
          } else {
            // The exact sum, in value units: the chunk's values carry their scales.
            p_lo = sum[r][2 * h];
            p_hi = sum[r][2 * h + 1];
          }
          _mm512_storeu_si512(acc + r * W + 16 * h, step_result(c[r][h], c_exp[r][h], emax[r][h], p_lo, p_hi, F, t.rule));
        }
      }
    } else {
      // The whole tile truncating: each B load serves the four rows.
      counts.truncating += 16 * static_cast<std::uint64_t>(kVectors);
      __m512 grid[kRows][2];  // the fp32 form's, formed only where that form runs
      const float* bv = &P.b_val[(t.strip * P.k + k0) * W];
      const float* av[kRows];
      for (std::size_t r = 0; r < kRows; ++r) av[r] = &P.a_val[(t.row0 + r) * P.k + k0];
      if (F <= kUnitsMaxF) {
        // The whole step in int32 (below 2^(F + 8) <= 2^23), and C and the output in grid units.
        __m512i part[kRows][2];
        __m512i g[kRows][2];
        bool fp16 = P.fp16_F == F;
        for (std::size_t r = 0; r < kRows && fp16; ++r) {
          const __m512i ea = _mm512_set1_epi32(P.a_hmax[(t.row0 + r) * P.steps + s]);
          for (std::size_t h = 0; h < 2 && fp16; ++h) {
            fp16 = fp16_factor(ea, _mm512_loadu_si512(&P.b_hmax[bstep + 16 * h]), _mm512_sub_epi32(f_scale[r][h], f), emax[r][h], g[r][h]);
          }
        }
#if BLOCKSCALE_HAVE_AVX512FP16
        if (fp16) {
          counts.fp16 += 16 * static_cast<std::uint64_t>(kVectors);
          const std::uint16_t* ah[kRows];
          for (std::size_t r = 0; r < kRows; ++r) ah[r] = a_h_rows[r] + k0;
          // The next step's e-only pass rides in this loop, past the call's last step too when a
          // later call will start there (the carry). On an H200 host's Xeon that pass in a loop of
          // its own took about a quarter of the kernel's time on the Hopper rows, and with calls of
          // one promotion interval (4 steps) the first step's own pass still 3% of their time
          // (docs/performance.md).
          if (s + 1 < carried_pass_end) {
            advance_ee_pass(ne, ee_at0, k0 + L);
            fp16_terms<true>(b_h_strip + k0 * W, ah, L, g, part, &ne);
            ne_step = s + 1;
          } else {
            fp16_terms<false>(b_h_strip + k0 * W, ah, L, g, part, nullptr);
          }
        } else
#endif
        {
          grid_factors(f_scale, emax, grid);
          float_form_terms(bv, av, 0, L, grid, part);
        }
        for (std::size_t r = 0; r < kRows; ++r) {
          for (std::size_t h = 0; h < 2; ++h) {
            __m512i out;
            if (!t.rule.f16 && plain_vector(c_exp[r][h], emax[r][h], F)) {
              out = step_output_units(c[r][h], emax[r][h], part[r][h], F, t.rule.e8m13);
            } else {
              const __m512i to_value = _mm512_sub_epi32(emax[r][h], f);  // grid units to values
              out = step_result(c[r][h], c_exp[r][h], emax[r][h], _mm512_scalef_pd(lo_pd(part[r][h]), lo_pd(to_value)),
                                _mm512_scalef_pd(hi_pd(part[r][h]), hi_pd(to_value)), F, t.rule);
            }
            _mm512_storeu_si512(acc + r * W + 16 * h, out);
          }
        }
      } else {
        grid_factors(f_scale, emax, grid);
        TermRuns runs;
        std::size_t nruns = 0;
        for (std::size_t kb = 0; kb < L; kb += 16, ++nruns) {
          if (carry_next) {
            float_form_terms<true>(bv, av, kb, std::min(L, kb + 16), grid, runs[nruns], &nb);
          } else {
            float_form_terms(bv, av, kb, std::min(L, kb + 16), grid, runs[nruns]);
          }
        }
        store_step_results(acc, c, c_exp, emax, runs, nruns, F, t.rule);
      }
    }

    if (specials.any) {
      counts.special += kRows * W;
      apply_specials(t, specials, s, c_in, acc);
    }
  }
  if (t.carry != nullptr && nb_step == s1) {
    for (std::size_t r = 0; r < kRows; ++r) _mm512_store_si512(t.carry->bytes[r], nb.m[r]);
    t.carry->step = s1;
  } else if (t.carry != nullptr && ne_step == s1) {
    _mm512_store_si512(t.carry->bytes[0], ne.m0);
    _mm512_store_si512(t.carry->bytes[1], ne.m1);
    t.carry->step = s1;
  }
}


// ---- T-FDPA with f16 / bf16 / tf32 operands (fast_panels.h: wide), tiles of kRows x 32 outputs.
//
// Every step of a tile takes the float form (fast_kernels.h, truncating tier) with the fp32 sums of
// float_form_terms, where the step's exponent bounds keep it exact in fp32; there is no exact tier
// (its fp64 sums would cost as much as the float form, and tiles whose products all lie within
// F - frac_a - frac_b <= 11 binades, which it needs, are rare in f16 or bf16 data). A step
// outside those bounds (bf16 and tf32 products span 2^-266 .. 2^256) goes to the plain C++ kernel,
// whose double form holds them.
//
// The bounds, per lane, on e(a) + e(b) of every nonzero product, from the lo / hi panels
// (fast_kernels.h: kWideFloatHighest, wide_float_lowest):
//   * at most 126: then |a b| < (2 - 2^-10)^2 2^126, below fp32's largest finite
//     value, so no product overflows (at 127 one would);
//   * at least F - 127 (-102 for F = 25): then e_max >= F - 127, so the grid exponent F - e_max
//     <= 127 is a normal fp32 power of two; and the lowest bit of a b, at or above
//     2^(F - 127 - 20) >= 2^-146 (at most 10 fraction bits per operand), is an fp32 subnormal or
//     more, so a b is exact in fp32.
// With them, as for 8-bit operands: a b 2^(F - e_max) is exact or below 2^-126 (then it truncates
// to 0 either way), below 2^(F + 2) since e(a) + e(b) <= e_max (so vcvttps2dq truncates it toward
// zero exactly), and 16 such terms sum in int32 without overflow. e_max <= 128 (an Inf or NaN C),
// so F - e_max >= -105. A lane without a nonzero product (e_max = e(c) or e_zero) has only zero
// terms; its grid exponent is clamped to 127.

// Whether every lane of the tile's step passes those bounds: per row, a_lo + b_lo and a_hi + b_hi
// for the 32 lanes in int16 (kNoExpHigh / kNoExp for a row or lane without a nonzero element keep
// the sums within int16 and outside the test, as they have no product to bound).
BLOCKSCALE_AVX512_INLINE bool wide_float_step(const TfdpaTile& t, std::size_t s) {
  constexpr std::size_t W = kTfdpaWidth;
  const TfdpaPanels& P = *t.p;
  const __m512i lowest = _mm512_set1_epi16(static_cast<std::int16_t>(wide_float_lowest(t.rule.F)));
  const __m512i b_lo = _mm512_loadu_si512(&P.b_lo[(t.strip * P.steps + s) * W]);
  const __m512i b_hi = _mm512_loadu_si512(&P.b_hi[(t.strip * P.steps + s) * W]);
  __mmask32 outside = 0;
  for (std::size_t r = 0; r < kRows; ++r) {
    const std::size_t at = (t.row0 + r) * P.steps + s;
    const __m512i lo = _mm512_add_epi16(_mm512_set1_epi16(P.a_lo[at]), b_lo);
    const __m512i hi = _mm512_add_epi16(_mm512_set1_epi16(P.a_hi[at]), b_hi);
    outside |= _mm512_cmplt_epi16_mask(lo, lowest) | _mm512_cmpgt_epi16_mask(hi, _mm512_set1_epi16(kWideFloatHighest));
  }
  return outside == 0;
}

BLOCKSCALE_AVX512 void tfdpa_wide_avx512(const TfdpaTile& t, std::uint32_t* acc, std::size_t s0, std::size_t s1,
                                         StepCounts& counts) {
  constexpr std::size_t W = kTfdpaWidth;
  const TfdpaPanels& P = *t.p;
  const auto L = static_cast<std::size_t>(P.L);
  const int F = t.rule.F;
  const __m512i f = _mm512_set1_epi32(F);
  SetupConstants consts;
  consts.e_zero = t.rule.e_zero;
  consts.field_floor = acc_min_exponent(t.rule) + 127;
  opaque(consts);
  // The next step's e_max pass, run inside a step's term loop (its integer operations issue beside
  // the terms' floating-point ones), as the T-FDPA kernel carries its bounds pass.
  WideEmaxPass next{};
  std::size_t next_step = CarriedBounds::kNone;  // the step whose maxima next.m holds
  for (std::size_t s = s0; s < s1; ++s) {
    if (nan_absorbed(acc, kRows * W, s1 - s, counts)) break;  // NaN absorption (all_nan)
    if (!wide_float_step(t, s)) {
      tfdpa_portable_avx512(t, acc, s, s + 1, counts);
      continue;
    }
    const std::size_t k0 = s * L;
    const StepSpecials specials = step_specials(t, s);
    alignas(64) std::uint32_t c_in[kRows * W];
    if (specials.any) std::copy(acc, acc + kRows * W, c_in);

    // e_max (b.3 step 2): the pass's maxima, floored by C.
    __m512i m[kRows];
    if (next_step == s) {
      std::copy(next.m, next.m + kRows, m);
    } else {
      WideEmaxPass p;
      set_pass(p, t, k0);
      bounds_pass(p, L, m);
    }
    __m512i c[kRows][2], c_exp[kRows][2], emax[kRows][2];
    __m512 grid[kRows][2];
    for (std::size_t r = 0; r < kRows; ++r) {
      for (std::size_t h = 0; h < 2; ++h) {
        c[r][h] = _mm512_loadu_si512(acc + r * W + 16 * h);
        const AccInfo ci = acc_info(c[r][h], consts);
        c_exp[r][h] = ci.exp;
        const __m512i product_exp = _mm512_cvtepi16_epi32(h == 0 ? _mm512_castsi512_si256(m[r]) : _mm512_extracti64x4_epi64(m[r], 1));
        emax[r][h] = _mm512_max_epi32(ci.floor, product_exp);
        // 2^(F - e_max) from its bits (F - e_max within -105 .. 127 after the clamp).
        const __m512i g = _mm512_min_epi32(_mm512_sub_epi32(f, emax[r][h]), _mm512_set1_epi32(127));
        grid[r][h] = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_add_epi32(g, _mm512_set1_epi32(127)), 23));
      }
    }

    // The terms in int32 runs of 16 k (TermRuns), combined by store_step_results.
    counts.truncating += kRows * W;
    const bool carry_next = s + 1 < s1;
    if (carry_next) {
      set_pass(next, t, k0 + L);
      next_step = s + 1;  // once the loop below has run
    }
    const float* bv = &P.b_val[(t.strip * P.k + k0) * W];
    const float* av[kRows];
    for (std::size_t r = 0; r < kRows; ++r) av[r] = &P.a_val[(t.row0 + r) * P.k + k0];
    TermRuns runs;
    std::size_t nruns = 0;
    for (std::size_t kb = 0; kb < L; kb += 16, ++nruns) {
      if (carry_next) {
        float_form_terms<true>(bv, av, kb, std::min(L, kb + 16), grid, runs[nruns], &next);
      } else {
        float_form_terms(bv, av, kb, std::min(L, kb + 16), grid, runs[nruns]);
      }
    }
    store_step_results(acc, c, c_exp, emax, runs, nruns, F, t.rule);

    if (specials.any) {
      counts.special += kRows * W;
      apply_specials(t, specials, s, c_in, acc);
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
  SetupConstants consts;
  consts.e_zero = t.rule.e_zero;
  opaque(consts);
  for (std::size_t s = s0; s < s1; ++s) {
    if (nan_absorbed(acc, kRows * W, s1 - s, counts)) break;  // NaN absorption (all_nan)
    const std::size_t g0 = s * G;
    const std::uint32_t nan_lanes = P.b_nan[t.strip * P.steps + s];
    bool special = nan_lanes != 0;
    for (std::size_t r = 0; r < kRows; ++r) special |= P.a_flags[(t.row0 + r) * P.steps + s] != 0;

    // Groups outside, rows inside: B's four code vectors and exponent bounds of a group are loaded
    // once for the tile's four rows, and each A word reaches vpdpbusd as a broadcast memory
    // operand (inline assembly: GCC 12 broadcast every A word into a register of its own first).
    // The maxima and minima are kept in place, as in bounds_pass (docs/performance.md).
    const std::size_t a_base = t.row0 * P.groups + g0, b_base = t.strip * P.groups + g0;
    __m512i sums[kMaxGroups][kRows], c[kRows], upper[kRows], lower[kRows];
    AccInfo ci[kRows];
    for (std::size_t r = 0; r < kRows; ++r) {
      c[r] = _mm512_loadu_si512(acc + r * W);
      ci[r] = acc_info(c[r], consts);
      upper[r] = ci[r].floor;
      lower[r] = _mm512_set1_epi32(kNoExpHigh);
    }
    for (std::size_t g = 0; g < G; ++g) {
      const std::size_t bg = b_base + g;
      const __m512i* bq = reinterpret_cast<const __m512i*>(&P.b_q[bg * 4 * W]);
      const __m512i b0 = _mm512_load_si512(bq), b1 = _mm512_load_si512(bq + 1);
      const __m512i b2 = _mm512_load_si512(bq + 2), b3 = _mm512_load_si512(bq + 3);
      const __m512i b_ehi = _mm512_load_si512(&P.b_ehi[bg * W]), b_elo = _mm512_load_si512(&P.b_elo[bg * W]);
      for (std::size_t r = 0; r < kRows; ++r) {
        const std::size_t ag = a_base + r * P.groups + g;
        const std::uint32_t* aq = &P.a_q[ag * 4];
        __m512i sum = _mm512_set1_epi32(P.a_init[ag]);
        asm("vpdpbusd %2%{1to16%}, %1, %0" : "+v"(sum) : "v"(b0), "m"(aq[0]));
        asm("vpdpbusd %2%{1to16%}, %1, %0" : "+v"(sum) : "v"(b1), "m"(aq[1]));
        asm("vpdpbusd %2%{1to16%}, %1, %0" : "+v"(sum) : "v"(b2), "m"(aq[2]));
        asm("vpdpbusd %2%{1to16%}, %1, %0" : "+v"(sum) : "v"(b3), "m"(aq[3]));
        sums[g][r] = sum;
        const __m512i hi = _mm512_add_epi32(_mm512_set1_epi32(P.a_ehi[ag]), b_ehi);
        const __m512i lo = _mm512_add_epi32(_mm512_set1_epi32(P.a_elo[ag]), b_elo);
        asm("vpmaxsd %1, %0, %0" : "+v"(upper[r]) : "v"(hi));
        asm("vpminsd %1, %0, %0" : "+v"(lower[r]) : "v"(lo));
      }
    }
    __mmask16 outside = 0;
    for (std::size_t r = 0; r < kRows; ++r) {
      outside |= _mm512_cmpgt_epi32_mask(_mm512_sub_epi32(upper[r], lower[r]), group_slack);
      outside |= _mm512_mask_cmpgt_epi32_mask(static_cast<__mmask16>(~ci[r].zero), _mm512_sub_epi32(upper[r], ci[r].exp), c_slack);
    }

    if (outside == 0) {
      counts.exact += kRows * W;
      // The sums start from C with a zero C as +0 (its lanes cleared by the zero mask), so that a
      // step whose group terms are all -0 (a negative group sum times a zero scale product) gives
      // +0, as the exact zero sum is (numerics.md b.3), not -0 + -0 = -0
      // (AnExactZeroSumIsPlusZeroWithMinusZeroC).
      __m512d vlo[kRows], vhi[kRows];
      for (std::size_t r = 0; r < kRows; ++r) {
        const __m512i c_start = _mm512_maskz_mov_epi32(static_cast<__mmask16>(~ci[r].zero), c[r]);
        vlo[r] = lo_ps_pd(c_start);
        vhi[r] = hi_ps_pd(c_start);
      }
      for (std::size_t g = 0; g < G; ++g) {
        const std::size_t bg = b_base + g;
        const __m512d blo = _mm512_load_pd(&P.b_sv[bg * W]), bhi = _mm512_load_pd(&P.b_sv[bg * W + 8]);
        for (std::size_t r = 0; r < kRows; ++r) {
          const __m512d a = _mm512_set1_pd(P.a_sv[a_base + r * P.groups + g]);
          vlo[r] = _mm512_fmadd_pd(lo_pd(sums[g][r]), _mm512_mul_pd(a, blo), vlo[r]);
          vhi[r] = _mm512_fmadd_pd(hi_pd(sums[g][r]), _mm512_mul_pd(a, bhi), vhi[r]);
        }
      }
      for (std::size_t r = 0; r < kRows; ++r) {
        _mm512_storeu_si512(acc + r * W, round16(vlo[r], vhi[r], nan_lanes_of(c[r]), t.rule));
      }
    } else {
      counts.truncating += kRows * W;
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
        // C on the grid plus 0, for the same reason as in the exact tier (C = -0, or a negative C
        // that truncates to -0).
        __m512d slo = _mm512_add_pd(_mm512_roundscale_pd(_mm512_scalef_pd(lo_ps_pd(c[r]), down_lo), kTruncate), _mm512_setzero_pd());
        __m512d shi = _mm512_add_pd(_mm512_roundscale_pd(_mm512_scalef_pd(hi_ps_pd(c[r]), down_hi), kTruncate), _mm512_setzero_pd());
        for (std::size_t g = 0; g < G; ++g) {
          const std::size_t ag = row * P.groups + g0 + g, bg = t.strip * P.groups + g0 + g;
          const __m512d a = _mm512_set1_pd(P.a_sv[ag]);
          const __m512d wlo = _mm512_scalef_pd(_mm512_mul_pd(a, _mm512_load_pd(&P.b_sv[bg * W])), down_lo);
          const __m512d whi = _mm512_scalef_pd(_mm512_mul_pd(a, _mm512_load_pd(&P.b_sv[bg * W + 8])), down_hi);
          slo = _mm512_add_pd(slo, _mm512_roundscale_pd(_mm512_mul_pd(lo_pd(sums[g][r]), wlo), kTruncate));
          shi = _mm512_add_pd(shi, _mm512_roundscale_pd(_mm512_mul_pd(hi_pd(sums[g][r]), whi), kTruncate));
        }
        _mm512_storeu_si512(acc + r * W,
                            round16(_mm512_scalef_pd(slo, lo_pd(up)), _mm512_scalef_pd(shi, hi_pd(up)), nan_lanes_of(c[r]), t.rule));
      }
    }

    if (special) {
      counts.special += kRows * W;
      for (std::size_t r = 0; r < kRows; ++r) {
        const bool row_nan = (P.a_flags[(t.row0 + r) * P.steps + s] & kHasNaN) != 0;
        const auto nan = static_cast<__mmask16>(row_nan ? 0xFFFFu : nan_lanes);
        _mm512_storeu_si512(acc + r * W, _mm512_mask_mov_epi32(_mm512_loadu_si512(acc + r * W), nan, _mm512_set1_epi32(0x7FFFFFFF)));
      }
    }
  }
}

// ---- Hopper promotion of 4 x 32 accumulators.

// AccumulateFn (b.9's add), 16 lanes at a time: FADD on the host with the canonical NaN, or the
// fp16 HADD as the exact double sum of the two fp16 values rounded once (round16_f16; an exact
// zero sum keeps the IEEE sign, so -0 + -0 = -0). A NaN sum stays a NaN of whatever payload there:
// the kernels take any NaN C as NaN, and narrow_f16 gives the canonical code.
BLOCKSCALE_AVX512 void accumulate_avx512(const std::uint32_t* part, std::uint32_t* acc, bool f16) {
  for (std::size_t i = 0; i < kRows * kTfdpaWidth; i += 16) {
    const __m512i x = _mm512_loadu_si512(part + i), y = _mm512_loadu_si512(acc + i);
    __m512i out;
    if (f16) {
      out = round16_f16(_mm512_add_pd(lo_ps_pd(x), lo_ps_pd(y)), _mm512_add_pd(hi_ps_pd(x), hi_ps_pd(y)), 0, false);
    } else {
      const __m512 sum = _mm512_add_ps(_mm512_castsi512_ps(x), _mm512_castsi512_ps(y));
      out = _mm512_mask_mov_epi32(_mm512_castps_si512(sum), _mm512_cmp_ps_mask(sum, sum, _CMP_UNORD_Q), _mm512_set1_epi32(0x7FFFFFFF));
    }
    _mm512_storeu_si512(acc + i, out);
  }
}

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

// ---- Panel decoding (fast_panels.h DecodeARowFn / DecodeBStripFn): the table lookups as gathers.
// The scalar decoder took about 3.6 ns per element on the H200 host CPU (15.3 ms of a 49 ms
// one-thread 256 x 256 x 8192 Hopper GEMM); here 16 elements take one gather per table.

// The first n (<= 16) lanes.
BLOCKSCALE_AVX512_INLINE __mmask16 first_lanes(std::size_t n) {
  return n >= 16 ? __mmask16{0xFFFF} : static_cast<__mmask16>((1u << n) - 1u);
}

// 16 codes (the lanes of m; 0 elsewhere) as 32-bit indices.
BLOCKSCALE_AVX512_INLINE __m512i codes16(const std::uint8_t* codes, __mmask16 m = 0xFFFF) {
  return _mm512_cvtepu8_epi32(_mm_maskz_loadu_epi8(m, codes));
}

// The eb words of 16 codes with the specials' words replaced by 0 (fast_panels.h DecodeTables),
// and the NaN and Inf lanes.
struct EbWords {
  __m512i w;
  __mmask16 nan, inf;
};
BLOCKSCALE_AVX512_INLINE EbWords eb_words(__m512i idx, __mmask16 m, const std::uint32_t* table) {
  const __m512i w = _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), m, idx, table, 4);
  const __mmask16 nan = _mm512_cmpeq_epi32_mask(w, _mm512_set1_epi32(static_cast<int>(kEbWordNaN)));
  const __mmask16 inf = _mm512_cmpeq_epi32_mask(w, _mm512_set1_epi32(static_cast<int>(kEbWordInf)));
  return {_mm512_maskz_mov_epi32(static_cast<__mmask16>(~(nan | inf)), w), nan, inf};
}

// The fp16 table entries (16-bit) at the 32-bit indices idx: 32-bit gathers at 2-byte steps, the
// high half cleared (the table ends with a pad entry for the last one).
BLOCKSCALE_AVX512_INLINE __m512i half_entries(__m512i idx, __mmask16 m, const std::uint16_t* table) {
  return _mm512_and_si512(_mm512_mask_i32gather_epi32(_mm512_setzero_si512(), m, idx, table, 2), _mm512_set1_epi32(0xFFFF));
}

BLOCKSCALE_AVX512 bool decode_a_row_avx512(const DecodeTables& t, const std::uint8_t* codes, std::size_t i, TfdpaPanels& P) {
  const auto L = static_cast<std::size_t>(P.L);
  const std::size_t K = P.k;
  float* val = P.a_val.data() + i * K;
  std::int32_t* eb = P.a_eb.empty() ? nullptr : P.a_eb.data() + i * K;
  // With the fp16 panels: this row's two bytes of each of its pair's ee words (fast_panels.h).
  auto* ee = P.a_ee.empty() ? nullptr : reinterpret_cast<std::uint8_t*>(P.a_ee.data() + i / 2 * K);
  const auto row_bytes = static_cast<__mmask64>(0x5555555555555555ull << (i % 2));
  std::uint16_t* h = t.half != nullptr ? P.a_h.data() + i * K : nullptr;
  bool any_inf = false;
  for (std::size_t s = 0; s < P.steps; ++s) {
    // The largest eb low byte (e(x) + kEbBias; 0 for a zero or special element) is the step's
    // largest e(x) of a nonzero element.
    __m512i top = _mm512_setzero_si512();
    __mmask16 nan = 0, inf = 0;
    for (std::size_t c = s * L; c < (s + 1) * L; c += 16) {
      const std::size_t n = std::min<std::size_t>(16, (s + 1) * L - c);
      const __mmask16 m = first_lanes(n);
      const __m512i idx = codes16(codes + c, m);
      const __m512 v = _mm512_mask_i32gather_ps(_mm512_setzero_ps(), m, idx, t.val, 4);
      const EbWords e = eb_words(idx, m, t.eb);
      const __m512i e8 = _mm512_and_si512(e.w, _mm512_set1_epi32(0xFF));
      nan = static_cast<__mmask16>(nan | e.nan);
      inf = static_cast<__mmask16>(inf | e.inf);
      top = _mm512_max_epu32(top, e8);
      // Whole vectors (every step when 16 divides L) take plain stores: masked stores to memory
      // cost several times as much on AMD Zen 5 (docs/performance.md).
      const bool whole = n == 16;
      if (whole) {
        _mm512_storeu_ps(val + c, v);
      } else {
        _mm512_mask_storeu_ps(val + c, m, v);
      }
      if (ee != nullptr) {
        const __m512i bytes = _mm512_slli_epi32(_mm512_or_si512(e8, _mm512_slli_epi32(e8, 16)), static_cast<unsigned>(8 * (i % 2)));
        const auto lanes = static_cast<__mmask64>(whole ? ~0ull : (1ull << (4 * n)) - 1);  // 4 bytes per lane
        _mm512_mask_storeu_epi8(ee + 4 * c, static_cast<__mmask64>(lanes & row_bytes), bytes);
      } else if (whole) {
        _mm512_storeu_si512(eb + c, e.w);
      } else {
        _mm512_mask_storeu_epi32(eb + c, m, e.w);
      }
    }
    const auto top_byte = static_cast<int>(_mm512_reduce_max_epu32(top));
    const std::int16_t hi = top_byte == 0 ? kNoExp : static_cast<std::int16_t>(top_byte - kEbBias);
    const std::size_t at = i * P.steps + s;
    if (h != nullptr) {
      // a 2^(F - ea) from the step's table row; an inexact one rules the step out.
      const std::uint16_t* row = t.half + half_row_start(hi);
      __mmask16 inexact = 0;
      for (std::size_t c = s * L; c < (s + 1) * L; c += 16) {
        const __mmask16 m = first_lanes((s + 1) * L - c);
        const __m512i x = half_entries(codes16(codes + c, m), m, row);
        inexact = static_cast<__mmask16>(inexact | _mm512_cmpeq_epi32_mask(x, _mm512_set1_epi32(kInexactHalf)));
        _mm512_mask_cvtepi32_storeu_epi16(h + c, m, x);
      }
      P.a_hmax[at] = inexact != 0 ? kNoExpHigh : hi;
    }
    P.a_flags[at] = static_cast<std::uint8_t>((nan != 0 ? kHasNaN : 0) | (inf != 0 ? kHasInf : 0));
    any_inf = any_inf || inf != 0;
  }
  return any_inf;
}

BLOCKSCALE_AVX512 bool decode_b_strip_avx512(const DecodeTables& t, const std::uint8_t* codes, std::size_t st,
                                             TfdpaPanels& P) {
  constexpr std::size_t W = kTfdpaWidth;
  const auto L = static_cast<std::size_t>(P.L);
  const std::size_t K = P.k;
  float* val = P.b_val.data() + st * K * W;
  std::int16_t* eb = P.b_eb.empty() ? nullptr : P.b_eb.data() + st * K * W;
  std::int16_t* ee = P.b_ee.empty() ? nullptr : P.b_ee.data() + st * K * W;
  std::uint16_t* h = t.half != nullptr ? P.b_h.data() + st * K * W : nullptr;
  bool any_inf = false;
  for (std::size_t s = 0; s < P.steps; ++s) {
    __m512i top[2] = {_mm512_setzero_si512(), _mm512_setzero_si512()};  // per lane, as in the A row
    std::uint32_t nan = 0, inf = 0;
    for (std::size_t k = s * L; k < (s + 1) * L; ++k) {
      for (std::size_t q = 0; q < 2; ++q) {
        const std::size_t at = k * W + 16 * q;
        const __m512i idx = codes16(codes + at);
        const __m512 v = _mm512_i32gather_ps(idx, t.val, 4);
        const EbWords e = eb_words(idx, 0xFFFF, t.eb);
        nan |= static_cast<std::uint32_t>(e.nan) << (16 * q);
        inf |= static_cast<std::uint32_t>(e.inf) << (16 * q);
        const __m512i e8 = _mm512_and_si512(e.w, _mm512_set1_epi32(0xFF));
        top[q] = _mm512_max_epu32(top[q], e8);
        _mm512_storeu_ps(val + at, v);
        if (ee != nullptr) {
          _mm256_storeu_si256(reinterpret_cast<__m256i*>(ee + at), _mm512_cvtepi32_epi16(_mm512_or_si512(e8, _mm512_slli_epi32(e8, 8))));
        } else {
          _mm256_storeu_si256(reinterpret_cast<__m256i*>(eb + at), _mm512_cvtepi32_epi16(e.w));
        }
      }
    }
    P.b_nan[st * P.steps + s] = nan;
    P.b_inf[st * P.steps + s] = inf;
    any_inf = any_inf || inf != 0;
    if (h == nullptr) continue;
    // b 2^-eb from each lane's table row (eb + 16 = top - kEbBias - kHalfRowLowest; row 0 for a
    // lane without a nonzero element), stored in pairs of k: [k / 2][lane][k % 2].
    __m512i row[2], hi[2];
    __mmask16 inexact[2] = {0, 0};
    for (std::size_t q = 0; q < 2; ++q) {
      const __mmask16 none = _mm512_cmpeq_epi32_mask(top[q], _mm512_setzero_si512());
      row[q] = _mm512_maskz_mov_epi32(static_cast<__mmask16>(~none),
                                      _mm512_slli_epi32(_mm512_sub_epi32(top[q], _mm512_set1_epi32(kEbBias + kHalfRowLowest)), 8));
      hi[q] = _mm512_mask_mov_epi32(_mm512_sub_epi32(top[q], _mm512_set1_epi32(kEbBias)), none, _mm512_set1_epi32(kNoExp));
    }
    for (std::size_t k = s * L; k < (s + 1) * L; k += 2) {
      for (std::size_t q = 0; q < 2; ++q) {
        const __m512i x0 = half_entries(_mm512_add_epi32(row[q], codes16(codes + k * W + 16 * q)), 0xFFFF, t.half);
        const __m512i x1 = half_entries(_mm512_add_epi32(row[q], codes16(codes + (k + 1) * W + 16 * q)), 0xFFFF, t.half);
        inexact[q] = static_cast<__mmask16>(inexact[q] | _mm512_cmpeq_epi32_mask(x0, _mm512_set1_epi32(kInexactHalf)) |
                                            _mm512_cmpeq_epi32_mask(x1, _mm512_set1_epi32(kInexactHalf)));
        _mm512_storeu_si512(h + k * W + 32 * q, _mm512_or_si512(x0, _mm512_slli_epi32(x1, 16)));
      }
    }
    for (std::size_t q = 0; q < 2; ++q) {
      _mm512_storeu_si512(P.b_hmax.data() + (st * P.steps + s) * W + 16 * q,
                          _mm512_mask_mov_epi32(hi[q], inexact[q], _mm512_set1_epi32(kNoExpHigh)));
    }
  }
  return any_inf;
}

// ---- Panel decoding by byte shuffles (AVX-512 VBMI), for the panels of byte-pair bounds without
// fp16 panels (decode_a_row_avx512 and decode_b_strip_avx512 take the others): 64 codes per
// lookup instead of 16 per gather (DecodeTables::planes). The values come as fp16 bits, widened by
// vcvtph2ps (exact).
#define BLOCKSCALE_AVX512_VBMI __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx512vbmi")))
#define BLOCKSCALE_AVX512_VBMI_INLINE inline __attribute__((always_inline, target("avx512f,avx512bw,avx512dq,avx512vl,avx512vbmi")))

// A 256-entry byte table as four 64-byte vectors, looked up 64 codes at a time: vpermi2b takes
// index bits 0-6 from two vectors, code bit 7 picks the half.
struct BytePlane {
  __m512i t[4];
};
BLOCKSCALE_AVX512_VBMI_INLINE BytePlane byte_plane(const std::uint8_t* table) {
  return {{_mm512_loadu_si512(table), _mm512_loadu_si512(table + 64), _mm512_loadu_si512(table + 128),
           _mm512_loadu_si512(table + 192)}};
}
BLOCKSCALE_AVX512_VBMI_INLINE __m512i lookup(const BytePlane& p, __m512i codes) {
  const __m512i low = _mm512_permutex2var_epi8(p.t[0], codes, p.t[1]);
  const __m512i high = _mm512_permutex2var_epi8(p.t[2], codes, p.t[3]);
  return _mm512_mask_mov_epi8(low, _mm512_movepi8_mask(codes), high);
}

// The four planes of a format (fp16 low and high bytes, eb's two bytes).
struct CodePlanes {
  BytePlane half_lo, half_hi, e, lsb;
};

// Up to 64 codes decoded: the fp16 value bits and the eb byte pair (e | -lsb << 8, specials 0) as
// int16 in code order (codes 0-31 in [0], 32-63 in [1]), and the NaN and Inf codes.
struct Decoded64 {
  __m512i half[2], pair[2];
  __mmask64 nan, inf;
};
BLOCKSCALE_AVX512_VBMI_INLINE Decoded64 decode64(const CodePlanes& cp, const std::uint8_t* codes, __mmask64 m) {
  // The codes reordered so that the in-lane byte interleave below (vpunpck[lh]bw, per 128-bit lane
  // q: bytes 0-7, then 8-15) yields codes 0-31 and 32-63 in order: position 16 q + j holds code
  // 8 q + j (j < 8) or 32 + 8 q + j - 8.
  alignas(64) static constexpr std::uint8_t kOrder[64] = {
      0,  1,  2,  3,  4,  5,  6,  7,  32, 33, 34, 35, 36, 37, 38, 39, 8,  9,  10, 11, 12, 13,
      14, 15, 40, 41, 42, 43, 44, 45, 46, 47, 16, 17, 18, 19, 20, 21, 22, 23, 48, 49, 50, 51,
      52, 53, 54, 55, 24, 25, 26, 27, 28, 29, 30, 31, 56, 57, 58, 59, 60, 61, 62, 63};
  const __m512i c = _mm512_maskz_loadu_epi8(m, codes);  // missing codes read as 0: +0, no flags
  const __m512i ordered = _mm512_permutexvar_epi8(_mm512_load_si512(kOrder), c);
  const __m512i lo = lookup(cp.half_lo, ordered), hi = lookup(cp.half_hi, ordered);
  const __m512i e = lookup(cp.e, ordered), lsb = lookup(cp.lsb, ordered);
  Decoded64 d;
  d.half[0] = _mm512_unpacklo_epi8(lo, hi);
  d.half[1] = _mm512_unpackhi_epi8(lo, hi);
  // eb's low byte is 1 for NaN and 2 for Inf (kEbWordNaN, kEbWordInf), with a zero second byte.
  const __m512i p0 = _mm512_unpacklo_epi8(e, lsb), p1 = _mm512_unpackhi_epi8(e, lsb);
  const __mmask32 nan0 = _mm512_cmpeq_epi16_mask(p0, _mm512_set1_epi16(kEbWordNaN));
  const __mmask32 nan1 = _mm512_cmpeq_epi16_mask(p1, _mm512_set1_epi16(kEbWordNaN));
  const __mmask32 inf0 = _mm512_cmpeq_epi16_mask(p0, _mm512_set1_epi16(kEbWordInf));
  const __mmask32 inf1 = _mm512_cmpeq_epi16_mask(p1, _mm512_set1_epi16(kEbWordInf));
  d.nan = static_cast<__mmask64>(nan0) | static_cast<__mmask64>(nan1) << 32;
  d.inf = static_cast<__mmask64>(inf0) | static_cast<__mmask64>(inf1) << 32;
  d.pair[0] = _mm512_maskz_mov_epi16(static_cast<__mmask32>(~(nan0 | inf0)), p0);
  d.pair[1] = _mm512_maskz_mov_epi16(static_cast<__mmask32>(~(nan1 | inf1)), p1);
  return d;
}

BLOCKSCALE_AVX512_VBMI_INLINE CodePlanes code_planes(const DecodeTables& t) {
  return {byte_plane(t.planes + kPlaneHalfLo), byte_plane(t.planes + kPlaneHalfHi), byte_plane(t.planes + kPlaneE),
          byte_plane(t.planes + kPlaneLsb)};
}

// 16 fp16 bits (an int16 vector's half q) as floats.
BLOCKSCALE_AVX512_VBMI_INLINE __m512 floats16(__m512i half, int q) {
  return _mm512_cvtph_ps(q == 0 ? _mm512_castsi512_si256(half) : _mm512_extracti64x4_epi64(half, 1));
}

BLOCKSCALE_AVX512_VBMI bool decode_a_row_vbmi(const DecodeTables& t, const std::uint8_t* codes, std::size_t i, TfdpaPanels& P) {
  if (!P.a_ee.empty() || t.half != nullptr) return decode_a_row_avx512(t, codes, i, P);
  const auto L = static_cast<std::size_t>(P.L);
  const std::size_t K = P.k;
  float* val = P.a_val.data() + i * K;
  std::int32_t* eb = P.a_eb.data() + i * K;
  const CodePlanes cp = code_planes(t);
  bool any_inf = false;
  for (std::size_t s = 0; s < P.steps; ++s) {
    __mmask64 nan = 0, inf = 0;
    for (std::size_t c = s * L; c < (s + 1) * L; c += 32) {
      const std::size_t n = std::min<std::size_t>(32, (s + 1) * L - c);
      const Decoded64 d = decode64(cp, codes + c, n == 32 ? 0xFFFFFFFFull : (1ull << n) - 1);
      nan |= d.nan;
      inf |= d.inf;
      // a_eb: the byte pair twice in an int32 (fast_panels.h eb).
      const __m512i w0 = _mm512_cvtepu16_epi32(_mm512_castsi512_si256(d.pair[0]));
      const __m512i w1 = _mm512_cvtepu16_epi32(_mm512_extracti64x4_epi64(d.pair[0], 1));
      const __m512i words[2] = {_mm512_or_si512(w0, _mm512_slli_epi32(w0, 16)), _mm512_or_si512(w1, _mm512_slli_epi32(w1, 16))};
      for (int q = 0; q < 2; ++q) {
        const std::size_t at = c + 16 * static_cast<std::size_t>(q);
        if (n == 32) {  // whole vectors take plain stores (decode_a_row_avx512)
          _mm512_storeu_ps(val + at, floats16(d.half[0], q));
          _mm512_storeu_si512(eb + at, words[q]);
        } else if (n > 16 * static_cast<std::size_t>(q)) {
          const __mmask16 m = first_lanes(n - 16 * static_cast<std::size_t>(q));
          _mm512_mask_storeu_ps(val + at, m, floats16(d.half[0], q));
          _mm512_mask_storeu_epi32(eb + at, m, words[q]);
        }
      }
    }
    P.a_flags[i * P.steps + s] = static_cast<std::uint8_t>((nan != 0 ? kHasNaN : 0) | (inf != 0 ? kHasInf : 0));
    any_inf = any_inf || inf != 0;
  }
  return any_inf;
}

BLOCKSCALE_AVX512_VBMI bool decode_b_strip_vbmi(const DecodeTables& t, const std::uint8_t* codes, std::size_t st,
                                                TfdpaPanels& P) {
  if (!P.b_ee.empty() || t.half != nullptr) return decode_b_strip_avx512(t, codes, st, P);
  constexpr std::size_t W = kTfdpaWidth;
  const auto L = static_cast<std::size_t>(P.L);
  const std::size_t K = P.k;
  float* val = P.b_val.data() + st * K * W;
  std::int16_t* eb = P.b_eb.data() + st * K * W;
  const CodePlanes cp = code_planes(t);
  bool any_inf = false;
  for (std::size_t s = 0; s < P.steps; ++s) {
    std::uint32_t nan = 0, inf = 0;
    // Two k (64 codes, [k][W]) per lookup; an odd L's last k alone.
    for (std::size_t k = s * L; k < (s + 1) * L; k += 2) {
      const bool pair = k + 1 < (s + 1) * L;
      const Decoded64 d = decode64(cp, codes + k * W, pair ? ~0ull : 0xFFFFFFFFull);
      nan |= static_cast<std::uint32_t>(d.nan) | static_cast<std::uint32_t>(d.nan >> 32);
      inf |= static_cast<std::uint32_t>(d.inf) | static_cast<std::uint32_t>(d.inf >> 32);
      for (std::size_t r = 0; r < (pair ? 2u : 1u); ++r) {
        const std::size_t at = (k + r) * W;
        _mm512_storeu_si512(eb + at, d.pair[r]);
        _mm512_storeu_ps(val + at, floats16(d.half[r], 0));
        _mm512_storeu_ps(val + at + 16, floats16(d.half[r], 1));
      }
    }
    P.b_nan[st * P.steps + s] = nan;
    P.b_inf[st * P.steps + s] = inf;
    any_inf = any_inf || inf != 0;
  }
  return any_inf;
}

// ---- Panel decoding of wide operands (fast_panels.h DecodeWideRowFn / DecodeWideStripFn), 16
// storage words at a time, by bit operations (no table). Per element: the value as fp32 bits
// (every f16, bf16 and tf32 value is a float: bf16 the top half of an fp32 pattern, tf32 an fp32
// pattern without its 13 low bits, b.1; f16 normals rebiased, f16 subnormals m 2^-24 through an
// exact int -> float conversion), e(x) = max(fp32 exponent, emin) (an f16 subnormal is an fp32
// normal below 2^-14; a bf16 / tf32 subnormal has fp32 field 0), and the NaN / Inf classes from
// the format's own exponent field.
struct WideLanes {
  __m512i bits;  // 0 for a zero or special element
  __m512i exp;   // e(x); kNoExp for a zero or special element
  __mmask16 live, nan, inf;
};

template <Format F>
BLOCKSCALE_AVX512_INLINE WideLanes wide_lanes(__m512i words) {
  __m512i bits;
  __mmask16 special, payload;
  if constexpr (F == Format::float16) {
    const __m512i field = _mm512_and_si512(_mm512_srli_epi32(words, 10), _mm512_set1_epi32(0x1F));
    const __m512i man = _mm512_and_si512(words, _mm512_set1_epi32(0x3FF));
    const __m512i sign = _mm512_slli_epi32(_mm512_and_si512(words, _mm512_set1_epi32(0x8000)), 16);
    const __m512i normal = _mm512_or_si512(_mm512_slli_epi32(_mm512_add_epi32(field, _mm512_set1_epi32(112)), 23),
                                           _mm512_slli_epi32(man, 13));
    const __m512i subnormal = _mm512_castps_si512(_mm512_mul_ps(_mm512_cvtepi32_ps(man), _mm512_set1_ps(0x1p-24f)));
    bits = _mm512_or_si512(sign, _mm512_mask_mov_epi32(normal, _mm512_cmpeq_epi32_mask(field, _mm512_setzero_si512()), subnormal));
    special = _mm512_cmpeq_epi32_mask(field, _mm512_set1_epi32(0x1F));
    payload = _mm512_test_epi32_mask(man, man);
  } else {
    bits = F == Format::bfloat16 ? _mm512_slli_epi32(words, 16) : _mm512_and_si512(words, _mm512_set1_epi32(static_cast<int>(0xFFFFE000u)));
    special = _mm512_cmpeq_epi32_mask(_mm512_and_si512(bits, _mm512_set1_epi32(0x7F800000)), _mm512_set1_epi32(0x7F800000));
    payload = _mm512_test_epi32_mask(bits, _mm512_set1_epi32(0x7FFFFF));
  }
  constexpr int emin = F == Format::float16 ? -14 : -126;
  const __mmask16 live = static_cast<__mmask16>(~special & _mm512_test_epi32_mask(bits, _mm512_set1_epi32(0x7FFFFFFF)));
  const __m512i exp = _mm512_max_epi32(_mm512_sub_epi32(_mm512_and_si512(_mm512_srli_epi32(bits, 23), _mm512_set1_epi32(0xFF)),
                                                        _mm512_set1_epi32(127)),
                                       _mm512_set1_epi32(emin));
  return {_mm512_maskz_mov_epi32(live, bits), _mm512_mask_mov_epi32(_mm512_set1_epi32(kNoExp), live, exp), live,
          static_cast<__mmask16>(special & payload), static_cast<__mmask16>(special & ~payload)};
}

// A row: val and exp2 16 elements at a time; per step (L dividing 16, fast_panels.cpp checks) lo /
// hi by masked reductions over the live lanes, and the flags.
template <Format F>
BLOCKSCALE_AVX512 bool decode_wide_row(const std::uint32_t* words, std::size_t i, TfdpaPanels& P) {
  const auto L = static_cast<std::size_t>(P.L);
  bool any_inf = false;
  for (std::size_t k0 = 0; k0 < P.k; k0 += 16) {
    const std::size_t n = std::min<std::size_t>(16, P.k - k0);
    const auto m = static_cast<__mmask16>((1u << n) - 1u);
    const WideLanes e = wide_lanes<F>(_mm512_maskz_loadu_epi32(m, words + k0));
    _mm512_mask_storeu_epi32(P.a_val.data() + i * P.k + k0, m, e.bits);
    _mm512_mask_storeu_epi32(P.a_exp2.data() + i * P.k + k0, m,
                             _mm512_or_si512(_mm512_and_si512(e.exp, _mm512_set1_epi32(0xFFFF)), _mm512_slli_epi32(e.exp, 16)));
    for (std::size_t q = 0; q < n; q += L) {
      const auto sm = static_cast<__mmask16>(((1u << L) - 1u) << q);
      const auto live = static_cast<__mmask16>(e.live & sm);
      const std::size_t at = i * P.steps + (k0 + q) / L;
      P.a_lo[at] = live == 0 ? kNoExpHigh : static_cast<std::int16_t>(_mm512_mask_reduce_min_epi32(live, e.exp));
      P.a_hi[at] = live == 0 ? kNoExp : static_cast<std::int16_t>(_mm512_mask_reduce_max_epi32(live, e.exp));
      const bool inf = (e.inf & sm) != 0;
      P.a_flags[at] = static_cast<std::uint8_t>(((e.nan & sm) != 0 ? kHasNaN : 0) | (inf ? kHasInf : 0));
      any_inf = any_inf || inf;
    }
  }
  return any_inf;
}

// A strip ([k][W] words): val and exp per k, two vectors of 16 lanes; per step the lanes' lo / hi
// by vertical min / max, and the NaN / Inf lane masks.
template <Format F>
BLOCKSCALE_AVX512 bool decode_wide_strip(const std::uint32_t* words, std::size_t st, TfdpaPanels& P) {
  constexpr std::size_t W = kTfdpaWidth;
  const auto L = static_cast<std::size_t>(P.L);
  bool any_inf = false;
  for (std::size_t s = 0; s < P.steps; ++s) {
    __m512i lo[2] = {_mm512_set1_epi32(kNoExpHigh), _mm512_set1_epi32(kNoExpHigh)};
    __m512i hi[2] = {_mm512_set1_epi32(kNoExp), _mm512_set1_epi32(kNoExp)};
    std::uint32_t nan = 0, inf = 0;
    for (std::size_t k = s * L; k < (s + 1) * L; ++k) {
      for (std::size_t q = 0; q < 2; ++q) {
        const WideLanes e = wide_lanes<F>(_mm512_loadu_si512(words + k * W + 16 * q));
        const std::size_t at = (st * P.k + k) * W + 16 * q;
        _mm512_storeu_si512(P.b_val.data() + at, e.bits);
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(P.b_exp.data() + at), _mm512_cvtepi32_epi16(e.exp));
        lo[q] = _mm512_mask_min_epi32(lo[q], e.live, lo[q], e.exp);
        hi[q] = _mm512_max_epi32(hi[q], e.exp);
        nan |= static_cast<std::uint32_t>(e.nan) << (16 * q);
        inf |= static_cast<std::uint32_t>(e.inf) << (16 * q);
      }
    }
    for (std::size_t q = 0; q < 2; ++q) {
      const std::size_t at = (st * P.steps + s) * W + 16 * q;
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(P.b_lo.data() + at), _mm512_cvtepi32_epi16(lo[q]));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(P.b_hi.data() + at), _mm512_cvtepi32_epi16(hi[q]));
    }
    P.b_nan[st * P.steps + s] = nan;
    P.b_inf[st * P.steps + s] = inf;
    any_inf = any_inf || inf != 0;
  }
  return any_inf;
}

BLOCKSCALE_AVX512 bool decode_wide_row_avx512(Format f, const std::uint32_t* words, std::size_t i, TfdpaPanels& P) {
  switch (f) {
    case Format::float16: return decode_wide_row<Format::float16>(words, i, P);
    case Format::bfloat16: return decode_wide_row<Format::bfloat16>(words, i, P);
    default: return decode_wide_row<Format::tfloat32>(words, i, P);
  }
}
BLOCKSCALE_AVX512 bool decode_wide_strip_avx512(Format f, const std::uint32_t* words, std::size_t st, TfdpaPanels& P) {
  switch (f) {
    case Format::float16: return decode_wide_strip<Format::float16>(words, st, P);
    case Format::bfloat16: return decode_wide_strip<Format::bfloat16>(words, st, P);
    default: return decode_wide_strip<Format::tfloat32>(words, st, P);
  }
}

// The largest F of the fp16 form on this CPU; 0 where it does not run.
int fp16_max_f() {
#if BLOCKSCALE_HAVE_AVX512FP16
  return __builtin_cpu_supports("avx512fp16") && __builtin_cpu_supports("avx512vnni") ? kFp16MaxF : 0;
#else
  return 0;
#endif
}

// fast::Fp64Chunk's values (KernelSet::widen_strip, widen_row): the fp32 panel values of K chunk
// [k0, k0 + len) (whole steps) as doubles, each times 2^sexp of its step (sexp: -127..128, the
// factor formed as pow2 does, from its bits). Both are exact: a float is a double exactly, and the
// product is a power-of-two scaling within double's normal range. Without scales sexp is 0.
BLOCKSCALE_AVX512_INLINE __m512d pow2_pd(__m256i e) {
  const __m256i clamped = _mm256_min_epi32(_mm256_max_epi32(e, _mm256_set1_epi32(-1022)), _mm256_set1_epi32(1023));
  return _mm512_castsi512_pd(_mm512_slli_epi64(_mm512_cvtepi32_epi64(_mm256_add_epi32(clamped, _mm256_set1_epi32(1023))), 52));
}

BLOCKSCALE_AVX512 void widen_strip_avx512(const TfdpaPanels& P, std::size_t strip, std::size_t k0, std::size_t len, double* out) {
  constexpr std::size_t W = kTfdpaWidth;
  const auto L = static_cast<std::size_t>(P.L);
  const float* in = &P.b_val[(strip * P.k + k0) * W];
  for (std::size_t k = 0; k < len; k += L) {
    const std::int32_t* sexp = &P.b_sexp[(strip * P.steps + (k0 + k) / L) * W];
    __m512d scale[4];
    for (std::size_t q = 0; q < 4; ++q) scale[q] = pow2_pd(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(sexp + 8 * q)));
    for (std::size_t i = k; i < k + L; ++i) {
      for (std::size_t q = 0; q < 4; ++q) {
        _mm512_store_pd(out + i * W + 8 * q, _mm512_mul_pd(_mm512_cvtps_pd(_mm256_load_ps(in + i * W + 8 * q)), scale[q]));
      }
    }
  }
}

BLOCKSCALE_AVX512 void widen_row_avx512(const TfdpaPanels& P, std::size_t row, std::size_t k0, std::size_t len, double* out) {
  const auto L = static_cast<std::size_t>(P.L);
  const float* in = &P.a_val[row * P.k + k0];
  for (std::size_t k = 0; k < len; k += L) {
    const __m512d scale = pow2_pd(_mm256_set1_epi32(P.a_sexp[row * P.steps + (k0 + k) / L]));
    for (std::size_t i = k; i < k + L; i += 8) {
      const __mmask8 m = i + 8 <= k + L ? 0xFF : static_cast<__mmask8>((1u << (k + L - i)) - 1);
      _mm512_mask_storeu_pd(out + i, m, _mm512_mul_pd(_mm512_cvtps_pd(_mm256_maskz_loadu_ps(m, in + i)), scale));
    }
  }
}

}  // namespace

bool cpu_has_avx512() {
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
         __builtin_cpu_supports("avx512vl");
}

const TfdpaDecoder& avx512_gather_decoder() {
  static const TfdpaDecoder d{&decode_a_row_avx512, &decode_b_strip_avx512, &decode_wide_row_avx512, &decode_wide_strip_avx512,
                              TfdpaBounds::byte_pairs, true, 1, false};
  return d;
}

const KernelSet& avx512_kernels() {
  static const bool vbmi = __builtin_cpu_supports("avx512vbmi");
  static const KernelSet k{TfdpaBounds::byte_pairs, &tfdpa_avx512, &tfdpa_wide_avx512,
                           __builtin_cpu_supports("avx512vnni") ? &gst_avx512 : avx2_kernels().gst,
                           &promote_avx512, &accumulate_avx512,
                           fp16_max_f(),
                           vbmi ? TfdpaDecoder{&decode_a_row_vbmi, &decode_b_strip_vbmi, &decode_wide_row_avx512,
                                               &decode_wide_strip_avx512, TfdpaBounds::byte_pairs, true, 1, false}
                                : avx512_gather_decoder(),
                           &widen_strip_avx512, &widen_row_avx512};
  return k;
}

}  // namespace blockscale::emulator::fast

#else  // not x86-64 GCC/Clang: no AVX-512 kernels

namespace blockscale::emulator::fast {
bool cpu_has_avx512() { return false; }
const KernelSet& avx512_kernels() { return portable_kernels(); }
const TfdpaDecoder& avx512_gather_decoder() { return portable_kernels().decode; }
}  // namespace blockscale::emulator::fast

#endif
