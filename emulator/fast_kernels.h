// SPDX-License-Identifier: Apache-2.0
// The kernels of the fast GEMM paths (issue 6; private to blockscale::emulator) and what they
// share: the tile descriptions, the per-ISA function table, and scalar helpers.
//
// A kernel runs a range of fused steps for one tile (kRows rows of A times one B strip of W
// columns), the accumulators (fp32 bit patterns, kRows x W) in and out. Per step and tile it takes
// one of three routes, all exact:
//   exact tier:      per-step exponent bounds prove that no product and not C loses a bit to the
//                    2^(e_max - F) grid (numerics.md b.3 step 4). The step's value is then the
//                    exact sum C + sum(a*b) * 2^(scale exponents), formed in double (every partial
//                    sum is a multiple of the grid below 2^(F + 8) grid units: at most 2^6 terms
//                    below 2^(F + 2), F <= 25, well within 53 bits), and only the output
//                    conversion rounds. e_max is not needed. (The AVX2 and AVX-512 kernels of
//                    operands of at most 8 bits prove it per lane instead, from a bounds pass that
//                    gives each lane its e_max and lowest product bit; their exact route
//                    truncates C to the grid.)
//   truncating tier: the full algorithm. e_max by a max-plus pass over k; then each product
//                    a*b*2^(F + scale exps - e_max) is formed in float (exact: a*b has at most 8
//                    significant bits, 22 for f16, and a power of two that underflows only meets
//                    terms that truncate to 0 anyway), truncated toward zero by the float->int32
//                    conversion (b.3's sign-magnitude truncation), and summed in int32 (one
//                    accumulator per 16 terms, each below 2^(F+2), F <= 25, added in double; for
//                    F <= kUnitsMaxF one for the whole step, with C and the output in grid units
//                    where the output conversion is bare, and in the plain C++ kernels for larger F
//                    too where the step's value fits, checked per lane: output_row_int32 of
//                    fast_kernels_portable.cpp); for bf16 and
//                    tf32 operands, whose products may leave float's range, the same where a
//                    step's exponent bounds keep them in range (kWideFloatHighest below), else in
//                    double throughout. C is truncated to the grid by a mask on its bits (its
//                    lowest bit is 2^(e - 23) for its own fp32 exponent e); the plain C++ GST-FDPA
//                    kernel truncates it in double.
//   special:         lanes whose row or column holds a NaN (operand or scale) get the canonical
//                    NaN (b.7); lanes with an Inf operand are recomputed by the reference engine.
// GST-FDPA kernels form the group sums 4*p_g exactly in int32 (int8 dot products), then the same
// two tiers with the group terms (b.5).
// The output conversion (b.6) rounds the exact double V = S * 2^(e_max - F) toward zero to fp32
// (RZ-E8M13: then clears the low 10 fraction bits), gives Inf at 2^128 and above, and the row's
// zero sign on underflow.
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "blockscale/emulator/gemm.h"
#include "fast_panels.h"

namespace blockscale::emulator::fast {

struct StepCounts {
  std::uint64_t exact = 0, truncating = 0, special = 0;  // output lanes times steps
  std::uint64_t fp16 = 0;                                // truncating ones in the AVX512-FP16 form
};

// Recomputes one output lane of one step with the reference engine (Inf operands):
// (context, row, column, step, c) -> d.
using FallbackFn = std::uint32_t (*)(const void* ctx, std::size_t row, std::size_t col, std::size_t step,
                                     std::uint32_t c);

// Output conversion and zero floor of a row (FdpaParams).
struct OutputRule {
  int F = 25;
  int e_zero = -133;
  bool e8m13 = false;             // RZ-E8M13 (else RZ-FP32)
  bool positive_underflow = false;  // UnderflowZero::positive
  // RNE-FP16 (numerics.md b.6): an f16 accumulator. The kernels hold its values as the fp32
  // patterns of the same values (every fp16 value is a float; the canonical NaN as fp32's), with
  // e(c) >= -14 (fp16's emin: a subnormal C counts as 2^-14, b.1) and 10 fraction bits; fast_gemm
  // widens C and narrows D.
  bool f16 = false;
};

// e(c) of a nonzero finite accumulator is at least this (b.1: the format's emin), and its lowest
// bit lies this many binades below e(c).
inline int acc_min_exponent(const OutputRule& r) { return r.f16 ? -14 : -126; }
inline int acc_fraction_bits(const OutputRule& r) { return r.f16 ? 10 : 23; }

// A tile's bounds pass for its next step, carried from one kernel call to the next: the AVX-512
// kernel forms the bounds of step s + 1 inside the main loop of step s (fast_kernels_avx512.cpp,
// BoundsPass), and a call that ends before the tile's last step leaves those of its step s1 here
// for the call that starts there, instead of that call running a pass of its own. The bounds
// depend only on the panels, so a carry stays valid across C, split-K slices and promotions.
// With the fp16 panels (TfdpaPanels::fp16_F != 0, for the whole GEMM) it holds the e-only pass's
// two maxima (EePass: rows 0-1 and 2-3) in bytes[0] and bytes[1].
struct CarriedBounds {
  static constexpr std::size_t kNone = ~std::size_t{0};
  alignas(64) std::uint8_t bytes[kRows][64];
  std::size_t step = kNone;  // the step the bytes belong to
};

// The fp64 values of a tile's elements over a K chunk [k0, k0 + chunk length), for the exact
// sums of the AVX-512 T-FDPA kernel: row row0 + r of A at a[r * a_stride + k - k0], the tile's
// strip of B at b[(k - k0) * kTfdpaWidth + lane] (64-byte aligned, as the panels), each times
// 2^sexp of its step (ST-FDPA's scale: every fp64 product then carries the scale exponents
// exactly, within 2^-286 .. 2^288, and a step's exact sum is in value units). fast_gemm
// widens them from the fp32 panels (val) once per chunk, B per strip and A per row block, for the
// kernel sets that do not read fp64 panels (TfdpaDecoder::fp64_panels): each B chunk then serves
// every row block of the task from the L2 cache, where fp64 panels of the whole problem took twice
// the fp32 panels' memory, written once and read back (docs/performance.md).
struct Fp64Chunk {
  const double* a = nullptr;
  const double* b = nullptr;
  std::size_t a_stride = 0, k0 = 0;
};

struct TfdpaTile {
  const TfdpaPanels* p = nullptr;
  OutputRule rule;
  std::size_t row0 = 0, strip = 0;
  FallbackFn fallback = nullptr;
  const void* fallback_ctx = nullptr;
  CarriedBounds* carry = nullptr;  // the tile's, or none (kernels without the carried pass ignore it)
  Fp64Chunk fp64;                  // the chunk of the steps the call runs (kernels that read it)
};

struct GstTile {
  const GstPanels* p = nullptr;
  OutputRule rule;
  std::size_t row0 = 0, strip = 0;
};

// The NaN and Inf operands and scales of one T-/ST-FDPA step of a tile (numerics.md b.7), per row
// as lane masks (bit j = column j of the strip): lanes that take the canonical NaN, and lanes with
// an Inf operand (and no NaN), which the reference engine recomputes.
struct StepSpecials {
  std::uint32_t nan[kRows] = {}, inf[kRows] = {};
  bool any = false;
};

inline StepSpecials step_specials(const TfdpaTile& t, std::size_t s) {
  static_assert(kTfdpaWidth == 32, "lane masks are 32-bit");
  const TfdpaPanels& P = *t.p;
  const std::uint32_t nan_lanes = P.b_nan[t.strip * P.steps + s], inf_lanes = P.b_inf[t.strip * P.steps + s];
  StepSpecials sp;
  for (std::size_t r = 0; r < kRows; ++r) {
    const std::uint8_t flags = P.a_flags[(t.row0 + r) * P.steps + s];
    sp.nan[r] = (flags & kHasNaN) ? 0xFFFFFFFFu : nan_lanes;
    sp.inf[r] = ((flags & kHasInf) ? 0xFFFFFFFFu : inf_lanes) & ~sp.nan[r];
    sp.any = sp.any || (sp.nan[r] | sp.inf[r]) != 0;
  }
  return sp;
}

// Writes the step's special lanes over the kernel's results: the canonical NaN, and for Inf lanes
// the reference engine's value from the step's input accumulators c_in.
inline void apply_specials(const TfdpaTile& t, const StepSpecials& sp, std::size_t s, const std::uint32_t* c_in,
                           std::uint32_t* acc) {
  constexpr std::size_t W = kTfdpaWidth;
  for (std::size_t r = 0; r < kRows; ++r) {
    for (std::uint32_t lanes = sp.nan[r]; lanes != 0; lanes &= lanes - 1) {
      acc[r * W + static_cast<std::size_t>(std::countr_zero(lanes))] = 0x7FFFFFFFu;
    }
    for (std::uint32_t lanes = sp.inf[r]; lanes != 0; lanes &= lanes - 1) {
      const auto j = static_cast<std::size_t>(std::countr_zero(lanes));
      acc[r * W + j] = t.fallback(t.fallback_ctx, t.row0 + r, t.strip * W + j, s, c_in[r * W + j]);
    }
  }
}

// NaN absorption: a step whose accumulators C are all NaN gives the canonical NaN in every lane,
// whatever its operands (numerics.md b.7: any NaN among A, B, C gives 0x7FFFFFFF; the fast paths
// cover fp32 accumulators only), and so does every later step of the chain and every FFMA
// promotion into them. Random bit patterns with NaN codes saturate most tiles within a few steps,
// so the kernels test this per step (an early exit at the first non-NaN word costs a compare on
// other data) and then write the canonical NaN and skip the tile's remaining steps.
inline bool all_nan(const std::uint32_t* acc, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    if ((acc[i] & 0x7FFFFFFFu) <= 0x7F800000u) return false;
  }
  return true;
}
// When the n accumulators are all NaN: writes the canonical NaN, counts the `steps` output steps
// that this skips as special, and returns true (the caller skips them).
inline bool nan_absorbed(std::uint32_t* acc, std::size_t n, std::size_t steps, StepCounts& counts) {
  if (!all_nan(acc, n)) return false;
  std::fill(acc, acc + n, 0x7FFFFFFFu);
  counts.special += n * steps;
  return true;
}

// Steps [s0, s1) of one tile; acc holds kRows x W fp32 patterns (W = the panel's strip width).
using TfdpaStepsFn = void (*)(const TfdpaTile& t, std::uint32_t* acc, std::size_t s0, std::size_t s1,
                              StepCounts& counts);
using GstStepsFn = void (*)(const GstTile& t, std::uint32_t* acc, std::size_t s0, std::size_t s1,
                            StepCounts& counts);
// Hopper promotion of kRows x kTfdpaWidth accumulators: acc = FFMA(sa[row], sb[col], part, acc) in
// the order `fma` (gemm.h), fp32 RNE on the host FPU, canonical NaN.
using PromoteFn = void (*)(PromotionFma fma, const std::uint32_t* sa, const std::uint32_t* sb,
                           const std::uint32_t* part, std::uint32_t* acc);
// b.9's add of an instruction's result into kRows x kTfdpaWidth accumulators: acc = part + acc,
// fp32 FADD (host_add) or for f16 accumulators fp16 HADD (host_add_f16), canonical NaN.
using AccumulateFn = void (*)(const std::uint32_t* part, std::uint32_t* acc, bool f16);
// Widens K chunk [k0, k0 + len) of a B strip (b_val, [k][W]) or of an A row (a_val) into fp64 at
// out, each value times 2^sexp of its step (Fp64Chunk); k0 and len are multiples of P.L.
using WidenFn = void (*)(const TfdpaPanels& P, std::size_t strip_or_row, std::size_t k0, std::size_t len, double* out);

struct KernelSet {
  TfdpaBounds tfdpa_bounds;  // the exponent panels that tfdpa reads (fast_panels.h)
  TfdpaStepsFn tfdpa;
  // T-FDPA with f16 / bf16 / tf32 operands (fast_panels.h: wide), from exponent bounds and the
  // scalar decoder's panels (no fp64 values): the plain C++ kernel compiled for this set's ISA, or
  // in the AVX-512 set its own float-form kernel (fast_kernels_avx512.cpp), which hands the steps
  // beyond fp32's range to tfdpa_portable_avx512.
  TfdpaStepsFn tfdpa_wide;
  GstStepsFn gst;
  PromoteFn promote;
  AccumulateFn accumulate;
  int fp16_max_F = 0;  // tfdpa reads the fp16 panels for F up to this (0: never)
  TfdpaDecoder decode{};  // the element work of decode_tfdpa (fast_panels.h; empty: scalar)
  // Where the set's T-FDPA kernel reads fp64 chunks (decode.fp64_panels off): fast_gemm's widening
  // of a B strip's and an A row's K chunk.
  WidenFn widen_strip = nullptr, widen_row = nullptr;
};

// The float form for wide operands (f16, bf16, tf32): a step's terms are formed in fp32 when every
// product's e(a) + e(b) lies within F - 127 .. kWideFloatHighest (always for f16, whose products
// lie within 2^-48 .. 2^32; fast_kernels_avx512.cpp, tfdpa_wide_avx512, gives the reasons).
inline constexpr int kWideFloatHighest = 126;
inline int wide_float_lowest(int F) { return F - 127; }

const KernelSet& portable_kernels();
// The plain C++ T-FDPA kernel for wide operands compiled for AVX-512 F/BW/DQ/VL (x86-64 GCC /
// Clang builds only): the steps beyond the float form's bounds, which avx512_kernels().tfdpa_wide
// hands over.
void tfdpa_portable_avx512(const TfdpaTile& t, std::uint32_t* acc, std::size_t s0, std::size_t s1, StepCounts& counts);
const KernelSet& avx2_kernels();    // only where the CPU has AVX2 + FMA: the variant below it prefers
// How the AVX2 T-FDPA kernel sums a step's terms for F <= kUnitsMaxF: vpaddd of the truncating
// conversion's int32, or vaddps of vroundps's truncated floats (exact there). The same bits; the
// faster one depends on the core's ports (fast_kernels_portable.cpp, run_sums8x4_float).
enum class Avx2UnitSums { int32, float32 };
const KernelSet& avx2_kernels(Avx2UnitSums sums);
Avx2UnitSums preferred_avx2_unit_sums();
const KernelSet& avx512_kernels();  // only where the CPU has AVX-512 F/BW/DQ/VL
// The AVX-512 set's panel decoder on CPUs without AVX-512 VBMI (table gathers, 16 codes at a time);
// with VBMI the set decodes the panels of byte-pair bounds without fp16 panels by byte shuffles.
// The panel test compares both with the scalar decoder wherever the CPU can run them.
const TfdpaDecoder& avx512_gather_decoder();
bool cpu_has_avx2();
bool cpu_has_avx512();

// ---- Scalar helpers (the portable kernels use them per lane; the AVX-512 kernels in setup code).

inline float as_float(std::uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}
inline std::uint32_t as_bits(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

// The most products in a T-/ST-FDPA step of operands of at most 8 bits on the fast paths: the
// dense rows have L <= 32, and the expanded form of Hopper's fp8 wgmma.sp (sparse_gemm.cpp,
// ExpandedForm) 64. f16 / bf16 / tf32 steps keep L <= 32 (fast_gemm.cpp, covers).
inline constexpr int kMaxStepProducts = 64;

// The largest F whose T-FDPA step sums whole in int32 in the float form: at most kMaxStepProducts
// = 2^6 terms, each below 2^(F + 2), sum below 2^(F + 8); with C's part (below 2^(F + 1)) the
// step's value in grid units lies below 2^(F + 9) <= 2^24, an exact float. The kernels then keep
// the step, C and the output in grid units (the Hopper and Ada fp8 rows, F = 13; no row of the
// table has F in 14..16, so the bound of 16 that steps of 32 would allow gains nothing).
inline constexpr int kUnitsMaxF = 15;

// The largest e_max at which the output conversion of a step may skip its Inf test (the bare
// conversion of fast_kernels_portable.cpp, plain_row, and fast_kernels_avx512.cpp, plain_vector):
// C lies below 2^(e_max + 1) and each of at most kMaxStepProducts = 2^6 products below
// 2^(e_max + 2), so |V| < 2^(e_max + 1) + 2^(e_max + 8) < 2^(e_max + 9) <= 2^128.
inline constexpr int kBareMaxEmax = 119;

// 2^e as a double, from its bit pattern, with e clamped to the normal range -1022..1023: the
// kernels scale nonzero values only by exponents well inside it (|e| < 700), and a zero stays zero.
// Exact, as std::ldexp is, but without a library call per lane, so that the lane loops vectorise
// (the ldexp calls took a third of the plain C++ T-FDPA kernel's time).
inline double pow2(int e) {
  e = std::clamp(e, -1022, 1023);
  return std::bit_cast<double>(static_cast<std::uint64_t>(e + 1023) << 52);
}

// e(c) of an accumulator held as an fp32 pattern (numerics.md b.1: the format's emin, -126 for
// fp32 and -14 for fp16, also for its subnormals; Inf/NaN give 128) and the floor of e_max that C
// sets: e(c) for c != 0, e_zero for c = +-0 (b.3 step 2). fast_gemm takes rows with e_zero at or
// below the emin, so max(e(c), e_zero) = e(c) whenever c != 0.
inline int acc_exponent(std::uint32_t c, int min_exponent) {
  return std::max(static_cast<int>((c >> 23) & 0xFFu) - 127, min_exponent);
}
inline bool acc_is_zero(std::uint32_t c) { return (c & 0x7FFFFFFFu) == 0; }

// b.6 for an fp32 accumulator on an exact double v (v = S * 2^(e_max - F), |S| < 2^53, so v is exact): RZ to fp32
// (subnormals kept, Inf from 2^128), RZ-E8M13 by clearing 10 more fraction bits, NaN canonical,
// and the underflow zero of the row. v = +0 means S = 0 (+0, b.6); v is never -0. RZ is the
// host's conversion to float (round to nearest even: detail::IeeeMode) stepped one unit toward zero
// where it rounded away from zero, |f| > |v| (the decrement of f's bits gives the next float
// toward zero: from Inf to FLT_MAX, from 2^-126 to the largest subnormal, from 2^-149 to zero,
// sign kept), except for |v| >= 2^128, which the hardware's "RZ" takes to Inf. Float and double
// arithmetic, 32-bit integer operations and selects, the rule's choices as masks: the plain C++
// kernels' lane loops that call it vectorise (the same conversion written on the double's bits,
// with 64-bit shifts, did not).
inline std::uint32_t round_output_fp32(double v, const OutputRule& r) {
  const float f = static_cast<float>(v);
  const std::uint32_t bits = as_bits(f);
  const std::uint32_t rz = std::fabs(static_cast<double>(f)) > std::fabs(v) && std::fabs(v) < 0x1p128 ? bits - 1u : bits;
  const std::uint32_t e8m13 = 0u - static_cast<std::uint32_t>(r.e8m13);
  const std::uint32_t keep_zero_sign = static_cast<std::uint32_t>(r.positive_underflow) - 1u;
  const std::uint32_t out = rz & ~((rz & 0x7FFFFFFFu) == 0x7F800000u ? 0u : e8m13 & 0x3FFu);
  return v != v ? 0x7FFFFFFFu : (out & 0x7FFFFFFFu) == 0 ? out & keep_zero_sign : out;
}

// RNE-FP16 (b.6) on an exact double v, as the fp32 pattern of the fp16 result: round to nearest
// even on the grid 2^(max(e(v), -14) - 10) (fp16's 11-bit significands and its subnormals), Inf
// from 65520 (= 65504 + half a unit, which rounds up to 2^16), NaN canonical, and a zero result of
// a negative v keeps its sign unless keep_zero_sign is 0 (UnderflowZero::positive). The rounding
// is one double addition: with m = 1.5 * 2^(e + 42), whose unit in the last place is 2^(e - 10),
// (|v| + m) - m rounds |v| < 2^(e + 1) to that grid, ties to even, and the result has at most 11
// significant bits, so its conversion to float is exact. m comes from |v|'s exponent bits
// (bits of min(|v|, 2^17): no overflow into the sign) clamped to e in -14 .. 15; from 2^16 on the
// result is Inf either way. 64-bit masks and adds, no shifts by a variable: the lane loops vectorise.
inline std::uint32_t round_to_f16(double v, std::uint32_t keep_zero_sign) {
  const double a = std::fabs(v);
  const double capped = a < 0x1p17 ? a : 0x1p17;  // NaN too
  const std::uint64_t exponent_bits = std::bit_cast<std::uint64_t>(capped) & 0x7FF0000000000000u;
  double m = std::bit_cast<double>((exponent_bits + (std::uint64_t{42} << 52)) | (std::uint64_t{1} << 51));
  m = m < 0x1.8p28 ? 0x1.8p28 : m;
  m = m > 0x1.8p57 ? 0x1.8p57 : m;
  const double rounded = (a + m) - m;
  // Selects of values, and conversions and comparisons that run unconditionally (a conversion of
  // a select, which GCC 12 turned into a conversion under a condition, kept it from vectorising
  // the lane loops). From 2^16 on f is a float at or above it, or Inf.
  const float f = static_cast<float>(rounded);
  const std::uint32_t sign = as_bits(static_cast<float>(v)) & 0x80000000u;
  const std::uint32_t magnitude = f < 0x1p16f ? as_bits(f) : 0x7F800000u;
  return v != v ? 0x7FFFFFFFu : magnitude == 0 ? sign & keep_zero_sign : sign | magnitude;
}

// b.6 on an exact double v for the rule's accumulator (round_output_fp32, round_to_f16).
inline std::uint32_t round_output(double v, const OutputRule& r) {
  return r.f16 ? round_to_f16(v, static_cast<std::uint32_t>(r.positive_underflow) - 1u) : round_output_fp32(v, r);
}

// An f16 accumulator code as the fp32 pattern of its value (NaN: the canonical fp32 NaN), and
// back (exact for every value an f16 kernel leaves; the canonical NaN gives 0x7FFF).
inline std::uint32_t widen_f16(std::uint32_t code) {
  const std::uint32_t sign = (code & 0x8000u) << 16, field = (code >> 10) & 0x1Fu, fraction = code & 0x3FFu;
  if (field == 0x1Fu) return fraction != 0 ? 0x7FFFFFFFu : sign | 0x7F800000u;
  if (field != 0) return sign | ((field + 112u) << 23) | (fraction << 13);
  return sign | as_bits(static_cast<float>(fraction) * 0x1p-24f);  // subnormal or zero: exact
}
inline std::uint32_t narrow_f16(std::uint32_t bits) {
  const std::uint32_t sign = (bits >> 16) & 0x8000u, magnitude = bits & 0x7FFFFFFFu;
  if (magnitude > 0x7F800000u) return 0x7FFFu;
  if (magnitude == 0x7F800000u) return sign | 0x7C00u;
  const float a = as_float(magnitude);
  if (a < 0x1p-14f) return sign | static_cast<std::uint32_t>(a * 0x1p24f);  // subnormal or zero: exact
  return sign | ((((magnitude >> 23) - 112u) << 10) | ((magnitude >> 13) & 0x3FFu));
}

// CUDA FMUL / FFMA / FADD (fp32, RNE, subnormals kept) on the host FPU with NVIDIA's canonical NaN:
// bit-identical to emulator/arith.h under detail::IeeeMode (round to nearest, no FTZ/DAZ).
inline std::uint32_t canonical(float x) { return std::isnan(x) ? 0x7FFFFFFFu : as_bits(x); }
inline std::uint32_t host_mul(std::uint32_t a, std::uint32_t b) { return canonical(as_float(a) * as_float(b)); }
inline std::uint32_t host_add(std::uint32_t a, std::uint32_t b) { return canonical(as_float(a) + as_float(b)); }
// fp16 HADD (RNE, subnormals kept, canonical NaN) on widened operands (widen_f16), widened: their
// double sum is exact (two fp16 values lie within 2^-24 .. 2^16), and round_to_f16 rounds it once,
// an exact zero sum keeping the IEEE sign (-0 only for -0 + -0).
inline std::uint32_t host_add_f16(std::uint32_t a, std::uint32_t b) {
  return round_to_f16(static_cast<double>(as_float(a)) + static_cast<double>(as_float(b)), ~0u);
}
inline std::uint32_t host_fma(std::uint32_t a, std::uint32_t b, std::uint32_t c) {
  return canonical(std::fma(as_float(a), as_float(b), as_float(c)));
}
inline std::uint32_t host_promote(PromotionFma fma, std::uint32_t sa, std::uint32_t sb, std::uint32_t part,
                                  std::uint32_t acc) {
  switch (fma) {
    case PromotionFma::scale_product: return host_fma(host_mul(sa, sb), part, acc);
    case PromotionFma::scale_b_first: return host_fma(sa, host_mul(sb, part), acc);
    case PromotionFma::mul_then_add: return host_add(acc, host_mul(host_mul(sa, sb), part));
  }
  return acc;
}

}  // namespace blockscale::emulator::fast
