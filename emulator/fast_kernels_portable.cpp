// SPDX-License-Identifier: Apache-2.0
// The fast-path kernels in plain C++ (fast_kernels.h describes the algorithm), one output lane
// at a time in loops over the W lanes of a strip that the compiler can vectorise. Compiled twice:
// for the baseline target (portable_kernels) and, through a target attribute, for AVX2 + FMA
// (avx2_kernels). Every operation is exact or an IEEE operation on exact operands, so both give
// the bits of the AVX-512 kernels and of the reference engine.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "fast_kernels.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace blockscale::emulator::fast {

namespace {

#define BLOCKSCALE_INLINE [[gnu::always_inline]] inline

// ---- T-FDPA / ST-FDPA (numerics.md b.3, b.4)

// The output conversion of a strip's W lanes (round_output), the rule's choice of accumulator
// outside the lane loops: with it inside, GCC 12 vectorised neither.
template <std::size_t W>
BLOCKSCALE_INLINE void round_lanes(const double* v, std::uint32_t* out, const OutputRule& rule) {
  if (rule.f16) {
    const std::uint32_t keep_zero_sign = static_cast<std::uint32_t>(rule.positive_underflow) - 1u;
    for (std::size_t j = 0; j < W; ++j) out[j] = round_to_f16(v[j], keep_zero_sign);
  } else {
    for (std::size_t j = 0; j < W; ++j) out[j] = round_output_fp32(v[j], rule);
  }
}

// The output conversion of a row's W lanes of T-/ST-FDPA (V: the exact step values, C: the step's
// accumulators, still in out), taking the bare conversion where the whole row allows it: an fp32
// accumulator and F - 139 <= e_max <= kBareMaxEmax (so every C is finite: an Inf or NaN C,
// e(c) = 128, floors e_max at 128; BareOutputConversionAtItsLowerLimit tests the lower limit).
// Then |V| cannot reach 2^128 (fast_kernels.h, kBareMaxEmax), and a nonzero V, a multiple of the
// grid 2^(e_max - F), is at least 2^-139, so its RZ fp32 magnitude keeps a bit
// above the 10 that RZ-E8M13 clears: no Inf, no NaN and no underflow zero can arise (V is not
// NaN: special elements decode to 0, and their lanes are rewritten after the step), and
// round_output_fp32 reduces to its RZ step and RZ-E8M13's mask (as the AVX-512 kernel's
// plain_vector).
template <std::size_t W>
BLOCKSCALE_INLINE bool plain_row(const int* emax, const OutputRule& rule) {
  int plain = static_cast<int>(!rule.f16);
  for (std::size_t j = 0; j < W; ++j) {
    plain &= static_cast<int>(emax[j] >= rule.F - 139) & static_cast<int>(emax[j] <= kBareMaxEmax);
  }
  return plain != 0;
}
template <std::size_t W>
BLOCKSCALE_INLINE void output_row(const double* V, const int* emax, std::uint32_t* out, const OutputRule& rule) {
  if (!plain_row<W>(emax, rule)) {
    round_lanes<W>(V, out, rule);
    return;
  }
  const std::uint32_t keep = rule.e8m13 ? ~0x3FFu : ~0u;
  for (std::size_t j = 0; j < W; ++j) {
    const float f = static_cast<float>(V[j]);
    const std::uint32_t bits = as_bits(f);
    out[j] = (std::fabs(static_cast<double>(f)) > std::fabs(V[j]) ? bits - 1u : bits) & keep;
  }
}

// A float 2^h for h in -126..127, from its bits.
BLOCKSCALE_INLINE float pow2f(int h) { return std::bit_cast<float>(static_cast<std::uint32_t>(h + 127) << 23); }

// An integer-valued float x times 2^h for h in -139..127 (the grid 2^(e_max - F) of a row that
// output_row converts bare), by two products: 2^max(h, -126), whose result is normal, then
// 2^(h - that) in -13..0. Each is exact where the true product is a float: a nonzero one is a
// multiple of 2^h >= 2^-139, which the subnormals' grid 2^-149 holds.
BLOCKSCALE_INLINE float times_grid(float x, int h) {
  const int h_normal = std::max(h, -126);
  return x * pow2f(h_normal) * pow2f(h - h_normal);
}

// C (an fp32 pattern, finite, below 2^(e_max + 1)) truncated toward zero to the grid
// 2^(e_max - F), in grid units (two's complement): its significand shifted right by e_max - F minus
// its lowest bit's exponent (max(field, 1) - 150), or left where that is negative (F > 23 only: C's
// lowest bit then lies at most F - 23 binades above the grid), with C's sign. Its magnitude lies
// below 2^(F + 1) (a zero C's significand is 0). Shifts by a variable per lane, clamped to 0..31 so
// that both are defined: the lane loops vectorise (vpsllvd / vpsrlvd on the AVX2 path).
BLOCKSCALE_INLINE std::uint32_t c_grid_units(std::uint32_t c, int emax, int F) {
  const int field = static_cast<int>((c >> 23) & 0xFFu);
  const std::uint32_t significand = (c & 0x7FFFFFu) | (static_cast<std::uint32_t>(field != 0) << 23);
  const int right = emax - F + 150 - std::max(field, 1);
  const std::uint32_t magnitude = (significand << std::clamp(-right, 0, 31)) >> std::clamp(right, 0, 31);
  const std::uint32_t s = 0u - (c >> 31);  // C's sign: 0 or all ones
  return (magnitude ^ s) - s;
}

// b.3 steps 5-6 in grid units, for F <= kUnitsMaxF and a row that output_row converts bare
// (plain_row), as the AVX-512 kernel's step_output_units: out holds C, S the products' part in grid
// units (|S| < 2^(F + 8)). C in grid units (c_grid_units, below 2^(F + 1)) plus S, below 2^24, is
// an exact float; times 2^(e_max - F) it is a multiple of 2^-139 (plain_row) below 2^128, which a
// float holds exactly: the exact step value, which RZ leaves as it is (RZ-E8M13 clears the 10 low
// fraction bits, as output_row does). The scaling is times_grid. A zero sum gives +0, as the
// double route does. All in int32 and float, eight lanes per
// AVX2 vector against the double route's four (which also adds C in double and steps RZ).
template <std::size_t W>
BLOCKSCALE_INLINE void output_row_units(const std::int32_t* S, const int* emax, std::uint32_t* out, const OutputRule& rule) {
  const std::uint32_t keep = rule.e8m13 ? ~0x3FFu : ~0u;
  const int F = rule.F;  // a local copy: read through rule in the loop, GCC 12 vectorised nothing
  for (std::size_t j = 0; j < W; ++j) {
    const auto c_units = static_cast<std::int32_t>(c_grid_units(out[j], emax[j], F));
    const float v = times_grid(static_cast<float>(c_units + S[j]), emax[j] - F);
    out[j] = as_bits(v) & keep;
  }
}

// The int32 sums of a step's terms, by runs of 16 (each below 2^31: 16 terms below 2^(F + 2) <=
// 2^27); a step has at most kMaxStepProducts terms.
inline constexpr std::size_t kMaxTermRuns = kMaxStepProducts / 16;

// b.3 steps 5-6 in int32 for F > kUnitsMaxF, where output_row_units cannot serve (the step's value
// in grid units may need 34 bits), for a row that output_row converts bare (plain_row): runs holds
// the int32 sums of the step's terms by 16 (n_runs of them), out holds C. Per lane, C in grid
// units (c_grid_units, below 2^(F + 1) <= 2^26) plus the runs, each add checked for signed
// overflow, is the exact step value T in grid units. Where |T| < 2^30 in every lane, RZ to fp32 is
// T's magnitude converted to float (at most 2^30: exact back to int32) and stepped one unit toward
// zero where that rounded it up; times 2^(e_max - F) by times_grid (as output_row_units)
// it is the RZ fp32 value of T * 2^(e_max - F), because scaling by a power of two commutes with RZ
// to 24 bits and the product stays exact: a nonzero result is a multiple of 2^(e_max - F) >=
// 2^-139 (plain_row), so where it is subnormal it needs no rounding at all. Then T's sign and
// RZ-E8M13's mask; T = 0 gives +0, as the double route does. Eight lanes per AVX2 vector, against
// the double route's four. Returns false, with out unchanged, where some lane's T does not fit
// (the caller takes the double route).
template <std::size_t W>
BLOCKSCALE_INLINE bool output_row_int32(const std::int32_t (*runs)[W], std::size_t n_runs, const int* emax,
                                        std::uint32_t* out, const OutputRule& rule) {
  const int F = rule.F;  // a local copy: read through rule in the loop, GCC 12 vectorised nothing
  std::uint32_t T[W];    // two's complement, unsigned so that a wrapped add is defined
  for (std::size_t j = 0; j < W; ++j) T[j] = c_grid_units(out[j], emax[j], F);
  std::uint32_t overflow = 0;  // sign bits of lanes whose add overflowed
  for (std::size_t b = 0; b < n_runs; ++b) {
    for (std::size_t j = 0; j < W; ++j) {
      const std::uint32_t x = T[j], y = static_cast<std::uint32_t>(runs[b][j]), sum = x + y;
      overflow |= (sum ^ x) & (sum ^ y);
      T[j] = sum;
    }
  }
  std::uint32_t too_wide = 0;
  for (std::size_t j = 0; j < W; ++j) {
    const std::uint32_t s = 0u - (T[j] >> 31);
    too_wide |= ((T[j] ^ s) - s) >> 30;  // |T| >= 2^30 (T = -2^31 included)
  }
  if ((overflow >> 31) != 0 || too_wide != 0) return false;
  const std::uint32_t keep = rule.e8m13 ? ~0x3FFu : ~0u;
  for (std::size_t j = 0; j < W; ++j) {
    const auto t = static_cast<std::int32_t>(T[j]);
    const std::int32_t magnitude = t < 0 ? -t : t;
    const float f = static_cast<float>(magnitude);
    const float rz = as_float(as_bits(f) - static_cast<std::uint32_t>(static_cast<std::int32_t>(f) > magnitude));
    const float v = times_grid(rz, emax[j] - F);
    out[j] = (as_bits(v) | (T[j] & 0x80000000u)) & keep;
  }
  return true;
}

// The element values that the exact sums and the double form read as doubles (of A or of B): the
// fp64 panel, or for wide operands (kWide: f16, bf16, tf32, whose panels have no fp64 values) the
// fp32 one, converted as it is read (exactly: every element is a float).
template <bool kWide>
const auto* doubles(const Buffer<float>& val, const Buffer<double>& dval) {
  if constexpr (kWide) {
    return val.data();
  } else {
    return dval.data();
  }
}

// C truncated toward zero to the grid 2^(e_max - F) by a mask on its bits, all integer operations
// (a conversion behind a select kept GCC 12 from vectorising the lane loops that call this): C's
// lowest bit is 2^(e - 23) for its own fp32 exponent field e (1 for a subnormal; an f16 C is held
// as an fp32 pattern, its subnormals normal there), so the low e_max - F - (e - 23) bits go; from
// 24 on, all of the magnitude (the signed zero stays). An Inf or NaN C stays as it is.
BLOCKSCALE_INLINE float c_on_grid(std::uint32_t c, int emax, int F) {
  const int field = static_cast<int>((c >> 23) & 0xFFu);
  const int below_grid = std::clamp(emax - F - (std::max(field, 1) - 150), 0, 24);
  const int shift = below_grid == 24 ? 31 : below_grid;  // 31: the sign bit alone
  const std::uint32_t keep = (~0u << shift) | static_cast<std::uint32_t>(-static_cast<int>(field == 0xFF));
  return as_float(c & keep);
}

// The exact fp64 sum over a step's L products of one row (a: the row's L values) for the strip's
// W lanes (b: [k][W]): every product and partial sum is exact (fast_kernels.h, exact tier).
template <class T>
BLOCKSCALE_INLINE void exact_sums_row(const T* a, const T* b, std::size_t L, double (&sum)[kTfdpaWidth]) {
  constexpr std::size_t W = kTfdpaWidth;
  // From +0 plus the first product, not from a zero fill (a `rep stos`, as S in truncating_row):
  // the +0 makes a sum of -0 products +0, as the exact zero sum is (numerics.md b.3), so that it
  // leaves a C of -0 as +0 (AnExactZeroSumIsPlusZeroWithMinusZeroC).
  for (std::size_t j = 0; j < W; ++j) sum[j] = 0.0 + static_cast<double>(a[0]) * static_cast<double>(b[j]);
  for (std::size_t k = 1; k < L; ++k) {
    const double ak = a[k];
    for (std::size_t j = 0; j < W; ++j) sum[j] += ak * static_cast<double>(b[k * W + j]);
  }
}

// The float form's int32 sums of one row's terms (av: the row's values from the step's first k; bv:
// [k][W]) over k in [k0, k1), for the W lanes: each term a*b*grid truncated toward zero.
using RunSumsFn = void (*)(const float* av, const float* bv, const float* grid, std::size_t k0, std::size_t k1,
                           std::int32_t* run);
BLOCKSCALE_INLINE void run_sums_plain(const float* av, const float* bv, const float* grid, std::size_t k0,
                                      std::size_t k1, std::int32_t* run) {
  constexpr std::size_t W = kTfdpaWidth;
  for (std::size_t j = 0; j < W; ++j) run[j] = static_cast<std::int32_t>(av[k0] * bv[k0 * W + j] * grid[j]);
  for (std::size_t k = k0 + 1; k < k1; ++k) {
    for (std::size_t j = 0; j < W; ++j) run[j] += static_cast<std::int32_t>(av[k] * bv[k * W + j] * grid[j]);
  }
}

// The truncating tier for row r of a tile's step s, from its per-lane scale exponent sums and
// e_max: the step's terms in grid units, each truncated toward zero and summed exactly, plus C
// truncated to the grid, through the output conversion into out (the row's W accumulators).
// kRunSums forms the float form's sums.
template <bool kWide, RunSumsFn kRunSums = &run_sums_plain>
BLOCKSCALE_INLINE void truncating_row(const TfdpaTile& t, std::size_t r, std::size_t s, const int* scale_exp,
                                      const int* emax, std::uint32_t* out) {
  constexpr std::size_t W = kTfdpaWidth;
  const TfdpaPanels& P = *t.p;
  const auto L = static_cast<std::size_t>(P.L);
  const int F = t.rule.F;
  const std::size_t k0 = s * L;
  const float* bv = &P.b_val[(t.strip * P.k + k0) * W];
  const float* av = &P.a_val[(t.row0 + r) * P.k + k0];
  // The step's terms in grid units, summed exactly: at most 64 integers below 2^(F + 2). Each form
  // below starts S from its first k (a zero-filled array is a `rep stos`: 4% of the AVX2 kernel's
  // time on the Hopper rows).
  double S[W];
  // The float form: for operands of at most 8 bits and f16 always; for bf16 / tf32 where the
  // row's products in this step lie within the float form's bounds (fast_kernels.h).
  int float_terms = 1;
  if constexpr (kWide) {
    if (P.double_terms) {
      const std::size_t at = (t.row0 + r) * P.steps + s;
      const std::int16_t* b_lo = &P.b_lo[(t.strip * P.steps + s) * W];
      const std::int16_t* b_hi = &P.b_hi[(t.strip * P.steps + s) * W];
      const int a_lo = P.a_lo[at], a_hi = P.a_hi[at], lowest = wide_float_lowest(F);
      for (std::size_t j = 0; j < W; ++j) {
        float_terms &= static_cast<int>(a_lo + b_lo[j] >= lowest) & static_cast<int>(a_hi + b_hi[j] <= kWideFloatHighest);
      }
    }
  }
  if (float_terms != 0) {
    float grid[W];
    for (std::size_t j = 0; j < W; ++j) {
      // 2^(F + scale exps - e_max): a nonzero product's term is a*b times this. The exponent
      // is at most F - 2 emin <= 53 for a nonzero product of 8-bit or f16 operands, and at
      // most 127 for bf16 / tf32 ones within the bounds (127 also bounds all-zero steps).
      // Below -126 (operands of at most 8 bits with small scales, or an Inf / NaN C): for
      // 8-bit and f16 operands every term, a*b < 2^32 times it, lies below 2^-94, and the
      // clamped factor 2^-126 truncates them to 0 as the exact one does; bf16 / tf32 steps in
      // this form have e_max <= 128, so h >= F - 128, below -126 only for F <= 1 with an Inf
      // or NaN C, whose step value no product changes. Built from its bits (a conversion
      // from double kept GCC 12 from vectorising this loop).
      grid[j] = pow2f(std::clamp(F + scale_exp[j] - emax[j], -126, 127));
    }
    // A term: the product (exact) times the grid factor, truncated toward zero (kRunSums).
    if (F <= kUnitsMaxF) {
      // The whole step in int32; for a plain row C and the output in grid units too.
      std::int32_t part[W];
      kRunSums(av, bv, grid, 0, L, part);
      if (plain_row<W>(emax, t.rule)) {
        output_row_units<W>(part, emax, out, t.rule);
        return;
      }
      for (std::size_t j = 0; j < W; ++j) S[j] = static_cast<double>(part[j]);
    } else {
      // int32 sums of at most 16 terms (each below 2^(F + 2) <= 2^27), each starting from its
      // first term for the same reason as S; then the step in int32 where it fits, else the runs
      // added in double.
      std::int32_t runs[kMaxTermRuns][W];
      std::size_t n_runs = 0;
      for (std::size_t kb = 0; kb < L; kb += 16, ++n_runs) kRunSums(av, bv, grid, kb, std::min(L, kb + 16), runs[n_runs]);
      if (plain_row<W>(emax, t.rule) && output_row_int32<W>(runs, n_runs, emax, out, t.rule)) return;
      for (std::size_t j = 0; j < W; ++j) S[j] = static_cast<double>(runs[0][j]);
      for (std::size_t b = 1; b < n_runs; ++b) {
        for (std::size_t j = 0; j < W; ++j) S[j] += static_cast<double>(runs[b][j]);
      }
    }
  } else {
    // bf16 / tf32 operands: a product (at most 22 significant bits, 2^-272 .. 2^256) is exact
    // in double, not always in float. In a step with a nonzero product e_max is at least that
    // product's exponent (>= -252) and at most 256, so the grid exponent lies in -231 .. 277;
    // pow2's clamp only meets steps without one (0 times it stays 0). Times the grid a
    // product keeps its bits (down to 2^-503 at least, a double normal), and the conversion
    // to int32 (|term| < 2^(F + 2)) truncates it toward zero. (That conversion, not
    // std::trunc, which GCC 12 does not vectorise here, and double sums: 32 terms may
    // exceed int32.)
    const auto* ad = doubles<kWide>(P.a_val, P.a_dval) + (t.row0 + r) * P.k + k0;
    const auto* bd = doubles<kWide>(P.b_val, P.b_dval) + (t.strip * P.k + k0) * W;
    double grid[W];
    for (std::size_t j = 0; j < W; ++j) grid[j] = pow2(F + scale_exp[j] - emax[j]);
    const auto term = [&](std::size_t k, std::size_t j) {
      return static_cast<std::int32_t>(static_cast<double>(ad[k]) * static_cast<double>(bd[k * W + j]) * grid[j]);
    };
    for (std::size_t j = 0; j < W; ++j) S[j] = term(0, j);
    for (std::size_t k = 1; k < L; ++k) {
      for (std::size_t j = 0; j < W; ++j) S[j] += term(k, j);
    }
  }
  // C truncated to the grid plus the products, then the output conversion, in two lane loops
  // (together GCC 12 vectorised neither). Both parts are multiples of the grid below
  // 2^(e_max + 9) (at most 34 grid bits): their double sum is exact.
  double V[W];
  for (std::size_t j = 0; j < W; ++j) V[j] = S[j] * pow2(emax[j] - F) + static_cast<double>(c_on_grid(out[j], emax[j], F));
  output_row<W>(V, emax, out, t.rule);
}

// The step loop that both T-/ST-FDPA bodies share: NaN absorption (all_nan), then per step the
// body's value of every lane (step(s, k0), k0 the step's first k), and the step's special lanes
// written over it from its input accumulators. The bodies pass lambdas made always_inline, so that
// each is compiled inside its caller, for the caller's ISA.
template <class StepFn>
BLOCKSCALE_INLINE void tfdpa_steps(const TfdpaTile& t, std::uint32_t* acc, std::size_t s0, std::size_t s1,
                                   StepCounts& counts, StepFn&& step) {
  constexpr std::size_t W = kTfdpaWidth;
  const auto L = static_cast<std::size_t>(t.p->L);
  for (std::size_t s = s0; s < s1; ++s) {
    if (nan_absorbed(acc, kRows * W, s1 - s, counts)) break;  // NaN absorption (all_nan)
    const StepSpecials specials = step_specials(t, s);
    std::uint32_t c_in[kRows * W];
    if (specials.any) std::memcpy(c_in, acc, sizeof c_in);
    step(s, s * L);
    if (specials.any) {
      counts.special += kRows * W;
      apply_specials(t, specials, s, c_in, acc);
    }
  }
}

// ---- T-FDPA / ST-FDPA from the exponent bounds (fast_panels.h: exp, lo / hi): a tile-wide proof
// from each step's exponent ranges, else per row an e_max pass and the truncating tier. The
// portable kernel set's for every operand format (a plain C++ byte-pair pass, with no bytewise
// maximum of 16-bit lanes, took three times the operations of the e_max pass: the random-bits rows
// ran 1.1-1.3 times as long), and every set's for f16 / bf16 / tf32 (kWide), which have no byte
// pairs.
template <bool kWide>
BLOCKSCALE_INLINE void tfdpa_exponents_body(const TfdpaTile& t, std::uint32_t* acc, std::size_t s0, std::size_t s1,
                                       StepCounts& counts) {
  constexpr std::size_t W = kTfdpaWidth;
  const TfdpaPanels& P = *t.p;
  const auto L = static_cast<std::size_t>(P.L);
  const int F = t.rule.F;
  // A product's term keeps every bit when e_max - e_k <= F - frac_a - frac_b (its significand has
  // frac_a + frac_b fraction bits); C's when e_max - e(c) <= F - 23 (fp16: F - 10).
  const int product_slack = F - P.frac_a - P.frac_b;
  const int c_slack = F - acc_fraction_bits(t.rule);
  const int c_min_exp = acc_min_exponent(t.rule);
  // A local copy: read through t inside the lane loop's select, GCC 12 would not vectorise it.
  const int e_zero = t.rule.e_zero;
  tfdpa_steps(t, acc, s0, s1, counts, [&](std::size_t s, std::size_t k0) __attribute__((always_inline)) {
    // Per lane: the scale exponent sum, e(c) and C's floor of e_max; the exact-tier test.
    const std::int16_t* b_lo = &P.b_lo[(t.strip * P.steps + s) * W];
    const std::int16_t* b_hi = &P.b_hi[(t.strip * P.steps + s) * W];
    const std::int32_t* b_sexp = &P.b_sexp[(t.strip * P.steps + s) * W];
    int scale_exp[kRows][W], floor_exp[kRows][W];
    int exact_lanes = 1;  // an int and bitwise operators, not && : the lane loop vectorises
    for (std::size_t r = 0; r < kRows; ++r) {
      const std::size_t at = (t.row0 + r) * P.steps + s;
      const int a_lo = P.a_lo[at], a_hi = P.a_hi[at], a_sexp = P.a_sexp[at];
      for (std::size_t j = 0; j < W; ++j) {
        const std::uint32_t c = acc[r * W + j];
        const int es = a_sexp + b_sexp[j];
        const int ec = acc_exponent(c, c_min_exp);
        const bool c_zero = acc_is_zero(c);
        const int floor = c_zero ? e_zero : ec;
        // Bounds: e_max <= upper, every nonzero product's exponent >= lower.
        const int upper = std::max(floor, es + a_hi + b_hi[j]);
        const int lower = es + a_lo + b_lo[j];
        exact_lanes &= static_cast<int>(upper - lower <= product_slack) & static_cast<int>(c_zero | (upper - ec <= c_slack));
        scale_exp[r][j] = es;
        floor_exp[r][j] = floor;
      }
    }

    if (exact_lanes != 0) {
      counts.exact += kRows * W;
      for (std::size_t r = 0; r < kRows; ++r) {
        double sum[W];
        exact_sums_row(doubles<kWide>(P.a_val, P.a_dval) + (t.row0 + r) * P.k + k0,
                       doubles<kWide>(P.b_val, P.b_dval) + (t.strip * P.k + k0) * W, L, sum);
        double V[W];
        for (std::size_t j = 0; j < W; ++j) V[j] = static_cast<double>(as_float(acc[r * W + j])) + sum[j] * pow2(scale_exp[r][j]);
        round_lanes<W>(V, acc + r * W, t.rule);
      }
    } else {
      counts.truncating += kRows * W;
      const std::int16_t* be = &P.b_exp[(t.strip * P.k + k0) * W];
      for (std::size_t r = 0; r < kRows; ++r) {
        const std::int32_t* ae = &P.a_exp2[(t.row0 + r) * P.k + k0];
        // e_max: the largest product exponent (zero elements carry kNoExp), scaled, floored by C.
        // In int16, twice the lanes per vector of int32: e(x) (b.1) of every operand format lies in
        // -126..127 and kNoExp is -16000, so sums of two lie in -32000..254.
        std::int16_t m[W];
        std::fill(m, m + W, static_cast<std::int16_t>(2 * kNoExp));
        for (std::size_t k = 0; k < L; ++k) {
          // Either half of the word (A's e(x) is packed twice, fast_panels.h): a 16-bit load that
          // the compiler broadcasts (through `& 0xFFFF` GCC 12 took four instructions per k).
          std::int16_t ea;
          std::memcpy(&ea, &ae[k], sizeof ea);
          for (std::size_t j = 0; j < W; ++j) m[j] = std::max(m[j], static_cast<std::int16_t>(ea + be[k * W + j]));
        }
        int emax[W];
        for (std::size_t j = 0; j < W; ++j) emax[j] = std::max(floor_exp[r][j], m[j] + scale_exp[r][j]);
        truncating_row<kWide>(t, r, s, scale_exp[r], emax, acc + r * W);
      }
    }
  });
}

// ---- GST-FDPA (numerics.md b.5)

// 4 p_g of a step's G groups for the tile's rows, [group][row][lane].
constexpr std::size_t kMaxGroups = 4;  // L <= 64
using GroupSums = std::int32_t[kMaxGroups][kRows][kGstWidth];
using GroupSumsFn = void (*)(const GstTile& t, std::size_t g0, std::size_t G, GroupSums& sums);

// GroupSums from the groups starting at g0: init + sum (2a)(2b + 12) over each group's 16 k, the
// int8 dot product of the panels (fast_panels.h), byte by byte.
BLOCKSCALE_INLINE void group_sums(const GstTile& t, std::size_t g0, std::size_t G, GroupSums& sums) {
  constexpr std::size_t W = kGstWidth;
  const GstPanels& P = *t.p;
  for (std::size_t g = 0; g < G; ++g) {
    for (std::size_t r = 0; r < kRows; ++r) {
      const std::size_t ag = (t.row0 + r) * P.groups + g0 + g, bg = t.strip * P.groups + g0 + g;
      std::int32_t* sum = sums[g][r];
      for (std::size_t j = 0; j < W; ++j) sum[j] = P.a_init[ag];
      for (std::size_t q = 0; q < 4; ++q) {
        const std::uint32_t aw = P.a_q[ag * 4 + q];
        const std::uint32_t* bw = &P.b_q[(bg * 4 + q) * W];
        for (unsigned byte = 0; byte < 4; ++byte) {
          const std::int32_t a = static_cast<std::int8_t>(aw >> (8 * byte));
          for (std::size_t j = 0; j < W; ++j) sum[j] += a * static_cast<std::int32_t>((bw[j] >> (8 * byte)) & 0xFFu);
        }
      }
    }
  }
}

// A GST-FDPA step's special lanes (b.7): B's lanes with a NaN scale in the step, and whether some
// lane or A row of the tile has one; apply_gst_specials writes the canonical NaN into those lanes
// and into the rows whose A has one, over the step's values.
struct GstSpecials {
  std::uint32_t nan_lanes;
  bool any;
};
BLOCKSCALE_INLINE GstSpecials gst_specials(const GstTile& t, std::size_t s) {
  const GstPanels& P = *t.p;
  GstSpecials sp{P.b_nan[t.strip * P.steps + s], false};
  sp.any = sp.nan_lanes != 0;
  for (std::size_t r = 0; r < kRows; ++r) sp.any |= P.a_flags[(t.row0 + r) * P.steps + s] != 0;
  return sp;
}
BLOCKSCALE_INLINE void apply_gst_specials(const GstTile& t, const GstSpecials& sp, std::size_t s, std::uint32_t* acc,
                                          StepCounts& counts) {
  constexpr std::size_t W = kGstWidth;
  if (!sp.any) return;
  counts.special += kRows * W;
  for (std::size_t r = 0; r < kRows; ++r) {
    const bool row_nan = (t.p->a_flags[(t.row0 + r) * t.p->steps + s] & kHasNaN) != 0;
    for (std::size_t j = 0; j < W; ++j) {
      if (row_nan || ((sp.nan_lanes >> j) & 1u)) acc[r * W + j] = 0x7FFFFFFFu;
    }
  }
}

// GST-FDPA's truncating tier for row r of a tile-step (the groups g0 .. g0 + G - 1, C's floor of
// e_max per lane in floor_exp): e_max, then each group term and C truncated toward zero to the grid
// 2^(e_max - F) and summed exactly, through the output conversion into out (the row's W
// accumulators, C on entry).
BLOCKSCALE_INLINE void gst_truncating_row(const GstTile& t, std::size_t r, std::size_t g0, std::size_t G,
                                          const GroupSums& sums, const int* floor_exp, std::uint32_t* out) {
  constexpr std::size_t W = kGstWidth;
  const GstPanels& P = *t.p;
  const int F = t.rule.F;
  const auto a_group = [&](std::size_t g) { return (t.row0 + r) * P.groups + g0 + g; };
  const auto b_group = [&](std::size_t g) { return (t.strip * P.groups + g0 + g) * W; };
  // e_max: groups with a nonzero product and a nonzero scale product count with their scale
  // exponents (a cancelled group too); the others take e_zero, as does C = 0.
  int emax[W];
  for (std::size_t j = 0; j < W; ++j) emax[j] = floor_exp[j];
  for (std::size_t g = 0; g < G; ++g) {
    const std::uint32_t a_nz = P.a_nz[a_group(g)];
    const std::int32_t a_hi = P.a_ehi[a_group(g)];
    const std::uint32_t* b_nz = &P.b_nz[b_group(g)];
    const std::int32_t* b_hi = &P.b_ehi[b_group(g)];
    for (std::size_t j = 0; j < W; ++j) {
      // A select of values, then the maximum (a select between std::max's result and emax[j]
      // kept GCC 12 from vectorising the loop).
      const int group_exp = (a_nz & b_nz[j]) != 0 ? a_hi + b_hi[j] : 2 * kNoExp;
      emax[j] = std::max(emax[j], group_exp);
    }
  }
  // 2^(F - e_max) in a loop of its own: with pow2 inside the loop over groups GCC 12 kept that
  // loop scalar.
  double grid[W];
  for (std::size_t j = 0; j < W; ++j) grid[j] = pow2(F - emax[j]);
  const auto group_term = [&](std::size_t g, std::size_t j) {
    const double w = P.a_sv[a_group(g)] * P.b_sv[b_group(g) + j] * grid[j];
    return std::trunc(static_cast<double>(sums[g][r][j]) * w);
  };
  double S[W];  // at most 4 terms below 2^46: exact; from +0 and the first group, as the exact tier
  for (std::size_t j = 0; j < W; ++j) S[j] = 0.0 + group_term(0, j);
  for (std::size_t g = 1; g < G; ++g) {
    for (std::size_t j = 0; j < W; ++j) S[j] += group_term(g, j);
  }
  double V[W];
  for (std::size_t j = 0; j < W; ++j) {
    const double c_term = std::trunc(static_cast<double>(as_float(out[j])) * grid[j]);
    V[j] = (S[j] + c_term) * pow2(emax[j] - F);
  }
  round_lanes<W>(V, out, t.rule);
}

template <GroupSumsFn kGroupSums>
BLOCKSCALE_INLINE void gst_steps_body(const GstTile& t, std::uint32_t* acc, std::size_t s0, std::size_t s1,
                                      StepCounts& counts) {
  constexpr std::size_t W = kGstWidth;
  const GstPanels& P = *t.p;
  const std::size_t G = static_cast<std::size_t>(P.L) / kGroup;
  const int F = t.rule.F;
  // A group term's significand has 8 fraction bits (4 p_g: 2; each scale significand: 3).
  const int group_slack = F - 8;
  const int c_slack = F - 23;  // GST-FDPA rows have fp32 accumulators
  const int e_zero = t.rule.e_zero;  // a local copy: read through t in a select, no lane loop vectorised
  // Every loop over the W lanes below is a loop of its own with a plain body, so that the compiler
  // vectorises it (with the per-lane work in one loop over the groups, GCC 12 vectorised none).
  for (std::size_t s = s0; s < s1; ++s) {
    if (nan_absorbed(acc, kRows * W, s1 - s, counts)) break;  // NaN absorption (all_nan)
    const std::size_t g0 = s * G;
    const GstSpecials specials = gst_specials(t, s);
    const auto a_group = [&](std::size_t r, std::size_t g) { return (t.row0 + r) * P.groups + g0 + g; };
    const auto b_group = [&](std::size_t g) { return (t.strip * P.groups + g0 + g) * W; };

    GroupSums sums;
    kGroupSums(t, g0, G, sums);

    // Bounds per lane: e_max <= upper, every nonzero group term's exponent >= lower; the tile-step
    // is exact when upper - lower <= group_slack and C lies within c_slack of upper in every lane.
    // First from the step's bounds (the largest ehi and smallest elo of the step's groups, on
    // each side): their sums bound the group-wise ones from outside, so a step they prove exact is
    // exact, at one add per side and lane instead of one per group (on the AVX2 path the per-group
    // bounds took half the kernel's time, NVFP4 Gaussian 256x256x8192). Only where they fail, the
    // group-wise bounds.
    int floor_exp[kRows][W];
    int exact_lanes = 1;  // an int and bitwise operators, not && : the lane loop vectorises
    for (std::size_t r = 0; r < kRows; ++r) {
      const std::int32_t a_hi = P.a_step_hi[(t.row0 + r) * P.steps + s], a_lo = P.a_step_lo[(t.row0 + r) * P.steps + s];
      const std::int32_t* b_hi = &P.b_step_hi[(t.strip * P.steps + s) * W];
      const std::int32_t* b_lo = &P.b_step_lo[(t.strip * P.steps + s) * W];
      for (std::size_t j = 0; j < W; ++j) {
        const std::uint32_t c = acc[r * W + j];
        floor_exp[r][j] = acc_is_zero(c) ? e_zero : acc_exponent(c, -126);
        const int upper = std::max(floor_exp[r][j], a_hi + b_hi[j]);
        exact_lanes &= static_cast<int>(upper - (a_lo + b_lo[j]) <= group_slack) &
                       (static_cast<int>(acc_is_zero(c)) | static_cast<int>(upper - acc_exponent(c, -126) <= c_slack));
      }
    }
    if (exact_lanes == 0) {
      exact_lanes = 1;
      for (std::size_t r = 0; r < kRows && exact_lanes != 0; ++r) {
        int upper[W], lower[W];
        for (std::size_t j = 0; j < W; ++j) {
          upper[j] = floor_exp[r][j];
          lower[j] = kNoExpHigh;
        }
        for (std::size_t g = 0; g < G; ++g) {
          const std::int32_t a_hi = P.a_ehi[a_group(r, g)], a_lo = P.a_elo[a_group(r, g)];
          const std::int32_t* b_hi = &P.b_ehi[b_group(g)];
          const std::int32_t* b_lo = &P.b_elo[b_group(g)];
          for (std::size_t j = 0; j < W; ++j) {
            upper[j] = std::max(upper[j], a_hi + b_hi[j]);
            lower[j] = std::min(lower[j], a_lo + b_lo[j]);
          }
        }
        for (std::size_t j = 0; j < W; ++j) {
          const std::uint32_t c = acc[r * W + j];
          exact_lanes &= static_cast<int>(upper[j] - lower[j] <= group_slack) &
                         (static_cast<int>(acc_is_zero(c)) | static_cast<int>(upper[j] - acc_exponent(c, -126) <= c_slack));
        }
      }
    }

    if (exact_lanes != 0) {
      counts.exact += kRows * W;
      for (std::size_t r = 0; r < kRows; ++r) {
        // The group terms' sum (exact: the bounds above), then C.
        const auto group_term = [&](std::size_t g, std::size_t j) {
          return static_cast<double>(sums[g][r][j]) * (P.a_sv[a_group(r, g)] * P.b_sv[b_group(g) + j]);
        };
        // From +0 plus the first group (G >= 1), as in exact_sums_row: a group term is -0 where a
        // negative group sum meets a zero scale product.
        double terms[W];
        for (std::size_t j = 0; j < W; ++j) terms[j] = 0.0 + group_term(0, j);
        for (std::size_t g = 1; g < G; ++g) {
          for (std::size_t j = 0; j < W; ++j) terms[j] += group_term(g, j);
        }
        double V[W];
        for (std::size_t j = 0; j < W; ++j) V[j] = static_cast<double>(as_float(acc[r * W + j])) + terms[j];
        round_lanes<W>(V, acc + r * W, t.rule);
      }
    } else {
      counts.truncating += kRows * W;
      for (std::size_t r = 0; r < kRows; ++r) gst_truncating_row(t, r, g0, G, sums, floor_exp[r], acc + r * W);
    }

    apply_gst_specials(t, specials, s, acc, counts);
  }
}

// The promotion of a tile (host_promote), one loop per FMA form: with the choice inside the lane
// loop GCC 12 vectorised nothing, and the scalar loop took 12% of the AVX2 path's time on the Hopper
// rows (promotion every 4 instructions).
BLOCKSCALE_INLINE void promote_body(PromotionFma fma, const std::uint32_t* sa, const std::uint32_t* sb,
                                    const std::uint32_t* part, std::uint32_t* acc) {
  constexpr std::size_t W = kTfdpaWidth;
  for (std::size_t r = 0; r < kRows; ++r) {
    std::uint32_t* row = acc + r * W;
    const std::uint32_t* p = part + r * W;
    switch (fma) {
      case PromotionFma::scale_product:
        for (std::size_t j = 0; j < W; ++j) row[j] = host_promote(PromotionFma::scale_product, sa[r], sb[j], p[j], row[j]);
        break;
      case PromotionFma::scale_b_first:
        for (std::size_t j = 0; j < W; ++j) row[j] = host_promote(PromotionFma::scale_b_first, sa[r], sb[j], p[j], row[j]);
        break;
      case PromotionFma::mul_then_add:
        for (std::size_t j = 0; j < W; ++j) row[j] = host_promote(PromotionFma::mul_then_add, sa[r], sb[j], p[j], row[j]);
        break;
    }
  }
}

// (Two loops: with the choice of adder inside, GCC 12 vectorised neither.)
BLOCKSCALE_INLINE void accumulate_body(const std::uint32_t* part, std::uint32_t* acc, bool f16) {
  constexpr std::size_t n = kRows * kTfdpaWidth;
  if (f16) {
    for (std::size_t i = 0; i < n; ++i) acc[i] = host_add_f16(part[i], acc[i]);
  } else {
    for (std::size_t i = 0; i < n; ++i) acc[i] = host_add(part[i], acc[i]);
  }
}

void tfdpa_portable(const TfdpaTile& t, std::uint32_t* acc, std::size_t s0, std::size_t s1, StepCounts& c) {
  tfdpa_exponents_body<false>(t, acc, s0, s1, c);
}
void tfdpa_portable_wide(const TfdpaTile& t, std::uint32_t* acc, std::size_t s0, std::size_t s1, StepCounts& c) {
  tfdpa_exponents_body<true>(t, acc, s0, s1, c);
}
void gst_portable(const GstTile& t, std::uint32_t* acc, std::size_t s0, std::size_t s1, StepCounts& c) {
  gst_steps_body<&group_sums>(t, acc, s0, s1, c);
}
void promote_portable(PromotionFma fma, const std::uint32_t* sa, const std::uint32_t* sb, const std::uint32_t* part,
                      std::uint32_t* acc) {
  promote_body(fma, sa, sb, part, acc);
}
void accumulate_portable(const std::uint32_t* part, std::uint32_t* acc, bool f16) { accumulate_body(part, acc, f16); }

#if defined(__x86_64__) && defined(__GNUC__)
#define BLOCKSCALE_AVX2 __attribute__((target("avx2,fma,bmi2")))

// ---- T-FDPA / ST-FDPA with operands of at most 8 bits from the e bytes (fast_panels.h, e8), the
// AVX2 kernel set's: a bounds pass gives every lane its exact e_max (b.3 step 3), and every
// tile-step takes the truncating tier's float form (truncating_row, here narrow_row_avx2), which
// is exact whether or not a product loses bits. On a Zen 3 core an exact tier (fp64 FMA sums,
// taken where the bounds pass also proved that no product loses a bit) cost as much per product as
// the float form: two fp64 FMAs per eight products on the two FMA pipes against the float form's
// two multiplies, a conversion and an add spread over all four FP pipes. With its proof (a second
// byte per lane in the bounds pass), its fp64 panels and its double epilogue it made the MXFP8 rows
// up to 1.3 times slower than the float form alone (docs/performance.md, fifty-third session).

// A step's e_max bytes for the tile's rows: per row and lane, max e(a) + e(b) over the step's
// products plus 2 kEbBias; below 2 (kEbBias - 16), the least sum of two nonzero elements' bytes,
// it means no nonzero product.
using EmaxBytes = std::uint8_t[kRows][kTfdpaWidth];

// The e_max pass (EmaxBytes) with vpaddb and vpmaxub: per row and k, a bytewise add of the A word
// (the byte four times) to B's 32 bytes and a bytewise maximum; each B load serves the tile's four
// rows (4 maxima, the B vector and the A broadcast: 6 of the 16 registers).
BLOCKSCALE_AVX2 void emax_pass_avx2(const TfdpaTile& t, std::size_t k0, EmaxBytes& bytes) {
  static_assert(kTfdpaWidth == 32 && kRows == 4, "one 32-byte vector per row, four rows");
  constexpr std::size_t W = kTfdpaWidth;
  const TfdpaPanels& P = *t.p;
  const auto L = static_cast<std::size_t>(P.L);
  const std::uint8_t* be = &P.b_e8[(t.strip * P.k + k0) * W];
  const std::int32_t* a0 = &P.a_e8[t.row0 * P.k + k0];
  const std::int32_t *a1 = a0 + P.k, *a2 = a1 + P.k, *a3 = a2 + P.k;
  __m256i m0 = _mm256_setzero_si256(), m1 = m0, m2 = m0, m3 = m0;
  for (std::size_t k = 0; k < L; ++k) {
    const __m256i b = _mm256_load_si256(reinterpret_cast<const __m256i*>(be + k * W));
    m0 = _mm256_max_epu8(m0, _mm256_add_epi8(b, _mm256_set1_epi32(a0[k])));
    m1 = _mm256_max_epu8(m1, _mm256_add_epi8(b, _mm256_set1_epi32(a1[k])));
    m2 = _mm256_max_epu8(m2, _mm256_add_epi8(b, _mm256_set1_epi32(a2[k])));
    m3 = _mm256_max_epu8(m3, _mm256_add_epi8(b, _mm256_set1_epi32(a3[k])));
  }
  _mm256_store_si256(reinterpret_cast<__m256i*>(bytes[0]), m0);
  _mm256_store_si256(reinterpret_cast<__m256i*>(bytes[1]), m1);
  _mm256_store_si256(reinterpret_cast<__m256i*>(bytes[2]), m2);
  _mm256_store_si256(reinterpret_cast<__m256i*>(bytes[3]), m3);
}
// Eight lanes' terms of one k: a*b*grid truncated toward zero.
BLOCKSCALE_AVX2 inline __m256i term8(__m256 a, const float* b, __m256 g) {
  return _mm256_cvttps_epi32(_mm256_mul_ps(_mm256_mul_ps(a, _mm256_load_ps(b)), g));
}
// The float form's int32 terms of one row over k in [k0, k1) for the strip's 32 lanes (four
// vectors), grid factors g, added to sum (wrapping), the sums in registers (GCC 12 kept the plain
// loop's in memory, a store and a reload per vector and k in the loop-carried chain). Each add is
// written in place: with the intrinsic GCC 12 added into a fresh register and copied it back, four
// extra vmovdqa per k, and the MXFP8 rows ran 5% slower on a Zen 1 core (docs/performance.md).
BLOCKSCALE_AVX2 inline void add_terms8x4(const float* av, const float* bv, const __m256 (&g)[4], std::size_t k0,
                                         std::size_t k1, __m256i (&sum)[4]) {
  constexpr std::size_t W = kTfdpaWidth;
  __m256i s0 = sum[0], s1 = sum[1], s2 = sum[2], s3 = sum[3];
  for (std::size_t k = k0; k < k1; ++k) {
    const __m256 a = _mm256_broadcast_ss(av + k);
    const float* b = bv + k * W;
    asm("vpaddd %1, %0, %0" : "+x"(s0) : "x"(term8(a, b, g[0])));
    asm("vpaddd %1, %0, %0" : "+x"(s1) : "x"(term8(a, b + 8, g[1])));
    asm("vpaddd %1, %0, %0" : "+x"(s2) : "x"(term8(a, b + 16, g[2])));
    asm("vpaddd %1, %0, %0" : "+x"(s3) : "x"(term8(a, b + 24, g[3])));
  }
  sum[0] = s0, sum[1] = s1, sum[2] = s2, sum[3] = s3;
}
// The int32 sums of the terms over k in [k0, k1), k0 < k1 (the first term is the start).
BLOCKSCALE_AVX2 inline void run_sums8x4(const float* av, const float* bv, const __m256 (&g)[4], std::size_t k0,
                                        std::size_t k1, __m256i (&sum)[4]) {
  const __m256 a = _mm256_broadcast_ss(av + k0);
  const float* b = bv + k0 * kTfdpaWidth;
  sum[0] = term8(a, b, g[0]), sum[1] = term8(a, b + 8, g[1]), sum[2] = term8(a, b + 16, g[2]), sum[3] = term8(a, b + 24, g[3]);
  add_terms8x4(av, bv, g, k0 + 1, k1, sum);
}
// run_sums8x4 for F <= kUnitsMaxF in float (Avx2UnitSums::float32): each term truncated by
// vroundps and the sums kept by vaddps, exact because every term is an integer and every partial
// sum lies below 2^(F + 8) <= 2^23 (kUnitsMaxF), so the same sums as run_sums8x4's. Which is faster
// depends on the core (docs/performance.md, seventieth session): on a Zen 1 core, whose two
// multiply pipes carry the two multiplies per term and share the integer adds, the float adds go
// to an add pipe that is otherwise idle (Hopper rows 6% faster); on a Xeon's AVX2 path vroundps
// is two micro-ops on the multiply ports (17-20% slower).
BLOCKSCALE_AVX2 inline __m256 term8_float(__m256 a, const float* b, __m256 g) {
  return _mm256_round_ps(_mm256_mul_ps(_mm256_mul_ps(a, _mm256_load_ps(b)), g), _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
}
BLOCKSCALE_AVX2 inline void run_sums8x4_float(const float* av, const float* bv, const __m256 (&g)[4], std::size_t L,
                                              __m256 (&sum)[4]) {
  constexpr std::size_t W = kTfdpaWidth;
  __m256 a = _mm256_broadcast_ss(av);
  __m256 s0 = term8_float(a, bv, g[0]), s1 = term8_float(a, bv + 8, g[1]), s2 = term8_float(a, bv + 16, g[2]),
         s3 = term8_float(a, bv + 24, g[3]);
  for (std::size_t k = 1; k < L; ++k) {
    a = _mm256_broadcast_ss(av + k);
    const float* b = bv + k * W;
    s0 = _mm256_add_ps(s0, term8_float(a, b, g[0]));
    s1 = _mm256_add_ps(s1, term8_float(a, b + 8, g[1]));
    s2 = _mm256_add_ps(s2, term8_float(a, b + 16, g[2]));
    s3 = _mm256_add_ps(s3, term8_float(a, b + 24, g[3]));
  }
  sum[0] = s0, sum[1] = s1, sum[2] = s2, sum[3] = s3;
}
// run_sums8x4 as a RunSumsFn (truncating_row's, for the rows that narrow_row_avx2 hands it).
BLOCKSCALE_AVX2 inline void run_sums_avx2(const float* av, const float* bv, const float* grid, std::size_t k0,
                                          std::size_t k1, std::int32_t* run) {
  const __m256 g[4] = {_mm256_loadu_ps(grid), _mm256_loadu_ps(grid + 8), _mm256_loadu_ps(grid + 16),
                       _mm256_loadu_ps(grid + 24)};
  __m256i sum[4];
  run_sums8x4(av, bv, g, k0, k1, sum);
  for (std::size_t q = 0; q < 4; ++q) _mm256_storeu_si256(reinterpret_cast<__m256i*>(run + 8 * q), sum[q]);
}

// Eight lanes of pow2f (above).
BLOCKSCALE_AVX2 inline __m256 pow2f8(__m256i h) {
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(h, _mm256_set1_epi32(127)), 23));
}
// times_grid (above) for e_max >= F - 126 (narrow_row_avx2's rows): 2^(e_max - F) is a normal
// float, so one product serves. x is an integer-valued float, so a nonzero product is a multiple of
// 2^(e_max - F) >= 2^-126, a normal float whose significand is x's: exact.
BLOCKSCALE_AVX2 inline __m256 times_grid8(__m256 x, __m256i emax, int F) {
  return _mm256_mul_ps(x, pow2f8(_mm256_sub_epi32(emax, _mm256_set1_epi32(F))));
}

// c_grid_units (above) for e_max >= F - 126 (narrow_row_avx2's rows), by a product and a
// truncating conversion: C times 2^(F - e_max) (F - e_max in F - 119 .. 126, so 2^(F - e_max) is a
// normal float) is exact where it is a normal float, and below 1 where it is not (so truncated to 0
// however it was rounded); it lies below 2^(F + 1), so vcvttps2dq gives trunc(C 2^(F - e_max)), C's
// signed grid units. Five vector operations per eight lanes; the eight lanes of c_grid_units' shifts
// took seventeen (docs/performance.md, seventieth session).
BLOCKSCALE_AVX2 inline __m256i c_units_by_product8(__m256i c, __m256i emax, int F) {
  return _mm256_cvttps_epi32(_mm256_mul_ps(_mm256_castsi256_ps(c), pow2f8(_mm256_sub_epi32(_mm256_set1_epi32(F), emax))));
}

// truncating_row for the rows that narrow_row_avx2 hands on, from its lanes' scale exponent sums
// and e_max.
BLOCKSCALE_AVX2 void truncating_row_avx2(const TfdpaTile& t, std::size_t r, std::size_t s, const __m256i (&scale_exp)[4],
                                         const __m256i (&emax)[4], std::uint32_t* out) {
  alignas(32) int scale_exp_lanes[kTfdpaWidth], emax_lanes[kTfdpaWidth];
  for (std::size_t q = 0; q < 4; ++q) {
    _mm256_store_si256(reinterpret_cast<__m256i*>(scale_exp_lanes + 8 * q), scale_exp[q]);
    _mm256_store_si256(reinterpret_cast<__m256i*>(emax_lanes + 8 * q), emax[q]);
  }
  truncating_row<false, &run_sums_avx2>(t, r, s, scale_exp_lanes, emax_lanes, out);
}

// One row of an AVX2 tile-step (operands of at most 8 bits): truncating_row with its lane work in
// registers, for the rows that output_row converts bare (plain_row: e_max in F - 139 .. 119, as
// for quantized data) and whose e_max is at least F - 126 (c_units_by_product8, times_grid8;
// ScaledRowsAroundTheLargestGridFactor tests that limit). Per lane the scale exponent sum and e_max
// from the row's e_max bytes (EmaxBytes), the grid factor, the float form's sums and the step's
// output in grid units (output_row_units, F <= kUnitsMaxF) or in int32 (output_row_int32). GCC 12
// compiled the plain C++ lane loops of these parts with spills of nearly every vector between
// them: with them, the part of a step outside its two passes over k took a third of the kernel's
// samples on the MXFP8 rows (docs/performance.md). Other rows, and int32 sums that do not fit, go
// to truncating_row.
template <Avx2UnitSums kUnitSums>
BLOCKSCALE_AVX2 inline void narrow_row_avx2(const TfdpaTile& t, std::size_t r, std::size_t s, const std::uint8_t* bytes,
                                            const std::int32_t* b_sexp, int e_zero, int c_min_exp,
                                            std::uint32_t* out) {
  constexpr std::size_t W = kTfdpaWidth;
  const TfdpaPanels& P = *t.p;
  const auto L = static_cast<std::size_t>(P.L);
  const int F = t.rule.F;
  const __m256i a_sexp = _mm256_set1_epi32(P.a_sexp[(t.row0 + r) * P.steps + s]);
  __m256i c[4], scale_exp[4], emax[4];
  __m256i outside = _mm256_setzero_si256();  // lanes outside plain_row's e_max range
  for (std::size_t q = 0; q < 4; ++q) {
    c[q] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(out + 8 * q));
    // C's floor of e_max (acc_exponent, or e_zero for a zero C).
    const __m256i field = _mm256_and_si256(_mm256_srli_epi32(c[q], 23), _mm256_set1_epi32(0xFF));
    const __m256i ec = _mm256_max_epi32(_mm256_sub_epi32(field, _mm256_set1_epi32(127)), _mm256_set1_epi32(c_min_exp));
    const __m256i c_zero = _mm256_cmpeq_epi32(_mm256_and_si256(c[q], _mm256_set1_epi32(0x7FFFFFFF)), _mm256_setzero_si256());
    const __m256i floor = _mm256_blendv_epi8(ec, _mm256_set1_epi32(e_zero), c_zero);
    // The largest product exponent, scaled, where the byte says there is a nonzero product.
    const __m256i byte = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(bytes + 8 * q)));
    scale_exp[q] = _mm256_add_epi32(a_sexp, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b_sexp + 8 * q)));
    const __m256i live = _mm256_cmpgt_epi32(byte, _mm256_set1_epi32(2 * (kEbBias - 16) - 1));
    const __m256i product = _mm256_add_epi32(byte, _mm256_sub_epi32(scale_exp[q], _mm256_set1_epi32(2 * kEbBias)));
    emax[q] = _mm256_max_epi32(floor, _mm256_blendv_epi8(floor, product, live));
    outside = _mm256_or_si256(outside, _mm256_or_si256(_mm256_cmpgt_epi32(_mm256_set1_epi32(F - 126), emax[q]),
                                                       _mm256_cmpgt_epi32(emax[q], _mm256_set1_epi32(kBareMaxEmax))));
  }
  if (t.rule.f16 || !_mm256_testz_si256(outside, outside)) return truncating_row_avx2(t, r, s, scale_exp, emax, out);
  // The grid factors 2^(F + scale exps - e_max), clamped as truncating_row's.
  __m256 grid[4];
  for (std::size_t q = 0; q < 4; ++q) {
    const __m256i h = _mm256_sub_epi32(_mm256_add_epi32(scale_exp[q], _mm256_set1_epi32(F)), emax[q]);
    grid[q] = pow2f8(_mm256_min_epi32(_mm256_max_epi32(h, _mm256_set1_epi32(-126)), _mm256_set1_epi32(127)));
  }
  const float* bv = &P.b_val[(t.strip * P.k + s * L) * W];
  const float* av = &P.a_val[(t.row0 + r) * P.k + s * L];
  const __m256i keep = _mm256_set1_epi32(t.rule.e8m13 ? ~0x3FF : ~0);
  if (F <= kUnitsMaxF) {  // output_row_units
    __m256 units[4];
    if constexpr (kUnitSums == Avx2UnitSums::float32) {
      __m256 sum[4];
      run_sums8x4_float(av, bv, grid, L, sum);
      // C's grid units (below 2^(F + 1)) plus the sums: below 2^24, so the float add is exact.
      for (std::size_t q = 0; q < 4; ++q) {
        units[q] = _mm256_add_ps(_mm256_cvtepi32_ps(c_units_by_product8(c[q], emax[q], F)), sum[q]);
      }
    } else {
      __m256i sum[4];
      run_sums8x4(av, bv, grid, 0, L, sum);
      for (std::size_t q = 0; q < 4; ++q) {
        units[q] = _mm256_cvtepi32_ps(_mm256_add_epi32(c_units_by_product8(c[q], emax[q], F), sum[q]));
      }
    }
    for (std::size_t q = 0; q < 4; ++q) {
      const __m256 v = times_grid8(units[q], emax[q], F);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 8 * q), _mm256_and_si256(_mm256_castps_si256(v), keep));
    }
    return;
  }
  // output_row_int32's value T, C in grid units plus the terms, summed in wrapping int32 and tested
  // after every 16 terms: each term lies below 2^(F + 2) <= 2^27, so where the sum so far was
  // below 2^30, 16 more keep the true sum below 2^30 + 2^31, whose wrapped value lies below 2^30
  // in magnitude only where the true one does. So every test passes exactly where every true
  // partial sum, the last one T included, lies below 2^30 (the bound output_row_int32 needs); one
  // that fails sends the row to truncating_row. (output_row_int32 adds runs of 16 with an overflow
  // test per add instead: three operations more per vector and run.)
  __m256i T[4], wide = _mm256_setzero_si256();
  for (std::size_t q = 0; q < 4; ++q) T[q] = c_units_by_product8(c[q], emax[q], F);
  for (std::size_t kb = 0; kb < L; kb += 16) {
    add_terms8x4(av, bv, grid, kb, std::min(L, kb + 16), T);
    for (std::size_t q = 0; q < 4; ++q) wide = _mm256_or_si256(wide, _mm256_abs_epi32(T[q]));  // -2^31 keeps bit 31
  }
  if (!_mm256_testz_si256(wide, _mm256_set1_epi32(static_cast<int>(0xC0000000u)))) {
    return truncating_row_avx2(t, r, s, scale_exp, emax, out);
  }
  __m256i magnitude[4];
  for (std::size_t q = 0; q < 4; ++q) magnitude[q] = _mm256_abs_epi32(T[q]);
  for (std::size_t q = 0; q < 4; ++q) {
    // RZ of |T| < 2^30 to float: the conversion stepped one unit toward zero where it rounded up.
    const __m256 f = _mm256_cvtepi32_ps(magnitude[q]);
    const __m256i rounded_up = _mm256_cmpgt_epi32(_mm256_cvttps_epi32(f), magnitude[q]);
    const __m256 rz = _mm256_castsi256_ps(_mm256_add_epi32(_mm256_castps_si256(f), rounded_up));
    const __m256 v = times_grid8(rz, emax[q], F);
    const __m256i sign = _mm256_and_si256(T[q], _mm256_set1_epi32(static_cast<int>(0x80000000u)));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 8 * q),
                        _mm256_and_si256(_mm256_or_si256(_mm256_castps_si256(v), sign), keep));
  }
}
template <Avx2UnitSums kUnitSums>
BLOCKSCALE_AVX2 void tfdpa_avx2(const TfdpaTile& t, std::uint32_t* acc, std::size_t s0, std::size_t s1, StepCounts& counts) {
  constexpr std::size_t W = kTfdpaWidth;
  const TfdpaPanels& P = *t.p;
  const int c_min_exp = acc_min_exponent(t.rule), e_zero = t.rule.e_zero;
  tfdpa_steps(t, acc, s0, s1, counts, [&](std::size_t s, std::size_t k0) __attribute__((always_inline)) {
    alignas(32) EmaxBytes bytes;
    emax_pass_avx2(t, k0, bytes);
    const std::int32_t* b_sexp = &P.b_sexp[(t.strip * P.steps + s) * W];
    counts.truncating += kRows * W;
    for (std::size_t r = 0; r < kRows; ++r) {
      narrow_row_avx2<kUnitSums>(t, r, s, bytes[r], b_sexp, e_zero, c_min_exp, acc + r * W);
    }
  });
}
BLOCKSCALE_AVX2 void tfdpa_wide_avx2(const TfdpaTile& t, std::uint32_t* acc, std::size_t s0, std::size_t s1, StepCounts& c) {
  tfdpa_exponents_body<true>(t, acc, s0, s1, c);
}
// group_sums by vpmaddubsw (B's unsigned bytes 2b + 12 <= 24 times A's signed 2a, |2a| <= 12,
// adjacent pairs added in int16: at most 576, no saturation) and vpmaddwd by ones (the int16 pairs
// into int32): AVX2's form of the AVX-512 kernel's vpdpbusd, 32 products per two instructions.
BLOCKSCALE_AVX2 void group_sums_avx2(const GstTile& t, std::size_t g0, std::size_t G, GroupSums& sums) {
  static_assert(kGstWidth == 16, "two 8-lane vectors per row");
  const GstPanels& P = *t.p;
  const __m256i ones = _mm256_set1_epi16(1);
  for (std::size_t g = 0; g < G; ++g) {
    const std::uint32_t* bq = &P.b_q[(t.strip * P.groups + g0 + g) * 4 * kGstWidth];
    for (std::size_t r = 0; r < kRows; ++r) {
      const std::size_t ag = (t.row0 + r) * P.groups + g0 + g;
      __m256i lo = _mm256_set1_epi32(P.a_init[ag]), hi = lo;
      for (std::size_t q = 0; q < 4; ++q) {
        const __m256i a = _mm256_set1_epi32(static_cast<std::int32_t>(P.a_q[ag * 4 + q]));
        const auto* b = reinterpret_cast<const __m256i*>(bq + q * kGstWidth);
        lo = _mm256_add_epi32(lo, _mm256_madd_epi16(_mm256_maddubs_epi16(_mm256_loadu_si256(b), a), ones));
        hi = _mm256_add_epi32(hi, _mm256_madd_epi16(_mm256_maddubs_epi16(_mm256_loadu_si256(b + 1), a), ones));
      }
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(&sums[g][r][0]), lo);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(&sums[g][r][8]), hi);
    }
  }
}

// ---- GST-FDPA (numerics.md b.5) with the lane work in vectors: gst_steps_body's tiers, a row's 16
// lanes as two int32 vectors (lanes 0-7, 8-15) or four double vectors (lanes 4h .. 4h + 3). GCC 12
// left the truncating tier's sums, scaling and output conversion in gst_steps_body scalar; on the
// NVFP4 random-bit rows that tier takes 93% of the steps (docs/performance.md, seventy-first
// session).

BLOCKSCALE_AVX2 inline __m256d lo_pd(__m256i x) { return _mm256_cvtepi32_pd(_mm256_castsi256_si128(x)); }
BLOCKSCALE_AVX2 inline __m256d hi_pd(__m256i x) { return _mm256_cvtepi32_pd(_mm256_extracti128_si256(x, 1)); }
// The fp32 lanes of bits, as doubles (exact).
BLOCKSCALE_AVX2 inline __m256d lo_ps_pd(__m256i bits) { return _mm256_cvtps_pd(_mm256_castps256_ps128(_mm256_castsi256_ps(bits))); }
BLOCKSCALE_AVX2 inline __m256d hi_ps_pd(__m256i bits) { return _mm256_cvtps_pd(_mm256_extractf128_ps(_mm256_castsi256_ps(bits), 1)); }
// 2^h for four int32 lanes h in -1022 .. 1023, as doubles, from their bits.
BLOCKSCALE_AVX2 inline __m256d pow2d4(__m128i h) {
  return _mm256_castsi256_pd(_mm256_slli_epi64(_mm256_cvtepi32_epi64(_mm_add_epi32(h, _mm_set1_epi32(1023))), 52));
}

// b.6 RZ-FP32 (round_output_fp32) of eight exact doubles (lanes 0-3 in lo, 4-7 in hi), each 0, a
// NaN, an Inf or of magnitude at least 2^-126 (the callers see to that: no subnormal result, no
// underflow zero). RZ to fp32's 24 significant bits is then a mask on the double's fraction
// (`keep`: RZ-E8M13 keeps 14), after which the conversion to float is exact, or overflows to Inf
// from 2^128 as the hardware's "RZ" does (round_output_fp32 too); a NaN keeps its quiet bit and
// leaves canonical. A zero V is +0 in both tiers (gst_avx2 says why), so the row's
// underflow-zero rule has nothing to change.
BLOCKSCALE_AVX2 inline __m256i rz_fp32_8(__m256d lo, __m256d hi, __m256d keep) {
  const __m256 f = _mm256_set_m128(_mm256_cvtpd_ps(_mm256_and_pd(hi, keep)), _mm256_cvtpd_ps(_mm256_and_pd(lo, keep)));
  return _mm256_castps_si256(
      _mm256_blendv_ps(f, _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFFFFFF)), _mm256_cmp_ps(f, f, _CMP_UNORD_Q)));
}
// Lanes of v that are nonzero and below 2^-126 in magnitude (all ones), or-ed into `tiny`.
BLOCKSCALE_AVX2 inline __m256d add_tiny_lanes(__m256d v, __m256d tiny) {
  const __m256d a = _mm256_and_pd(v, _mm256_castsi256_pd(_mm256_set1_epi64x(0x7FFFFFFFFFFFFFFF)));
  return _mm256_or_pd(tiny, _mm256_and_pd(_mm256_cmp_pd(a, _mm256_set1_pd(0x1p-126), _CMP_LT_OQ),
                                          _mm256_cmp_pd(a, _mm256_setzero_pd(), _CMP_NEQ_OQ)));
}
// A row's 16 step values V (exact doubles) through the output conversion into out: rz_fp32_8, or
// where the rule is not fp32's or a lane is not in rz_fp32_8's domain (`plain` false) round_lanes.
BLOCKSCALE_AVX2 inline void output_row_gst(const __m256d (&V)[4], bool plain, __m256d keep, const OutputRule& rule,
                                           std::uint32_t* out) {
  if (plain) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), rz_fp32_8(V[0], V[1], keep));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 8), rz_fp32_8(V[2], V[3], keep));
    return;
  }
  alignas(32) double v[kGstWidth];
  for (std::size_t h = 0; h < 4; ++h) _mm256_store_pd(v + 4 * h, V[h]);
  round_lanes<kGstWidth>(v, out, rule);
}

// The lanes that gst_steps_body's exactness proof fails (all ones): the bounds' spread beyond
// group_slack, or a nonzero C (exponent c_exp, zero lanes `zero`) more than c_slack below `upper`.
BLOCKSCALE_AVX2 inline __m256i gst_outside(__m256i upper, __m256i lower, __m256i c_exp, __m256i zero, __m256i group_slack,
                                           __m256i c_slack) {
  const __m256i c_far = _mm256_andnot_si256(zero, _mm256_cmpgt_epi32(_mm256_sub_epi32(upper, c_exp), c_slack));
  return _mm256_or_si256(_mm256_cmpgt_epi32(_mm256_sub_epi32(upper, lower), group_slack), c_far);
}

BLOCKSCALE_AVX2 void gst_avx2(const GstTile& t, std::uint32_t* acc, std::size_t s0, std::size_t s1, StepCounts& counts) {
  static_assert(kGstWidth == 16, "two 8-lane int32 vectors, four 4-lane double vectors per row");
  constexpr std::size_t W = kGstWidth;
  const GstPanels& P = *t.p;
  const std::size_t G = static_cast<std::size_t>(P.L) / kGroup;
  const int F = t.rule.F;
  const __m256i group_slack = _mm256_set1_epi32(F - 8);  // gst_steps_body gives the slacks' reasons
  const __m256i c_slack = _mm256_set1_epi32(F - 23);
  // RZ to 24 (RZ-E8M13: 14) significant bits: the double's fraction cleared but for its top 23 (13) bits.
  const __m256d keep = _mm256_castsi256_pd(_mm256_set1_epi64x(static_cast<long long>(~0ull << (t.rule.e8m13 ? 39 : 29))));
  for (std::size_t s = s0; s < s1; ++s) {
    if (nan_absorbed(acc, kRows * W, s1 - s, counts)) break;  // NaN absorption (all_nan)
    const std::size_t g0 = s * G;
    const GstSpecials specials = gst_specials(t, s);
    const std::size_t a_base = t.row0 * P.groups + g0, b_base = t.strip * P.groups + g0;

    alignas(32) GroupSums sums;
    group_sums_avx2(t, g0, G, sums);

    // Per row and lane: C, e(c) (acc_exponent), whether C = +-0, and C's floor of e_max.
    __m256i c[kRows][2], c_exp[kRows][2], zero[kRows][2];
    alignas(32) int floor_exp[kRows][W];
    for (std::size_t r = 0; r < kRows; ++r) {
      for (std::size_t q = 0; q < 2; ++q) {
        c[r][q] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(acc + r * W + 8 * q));
        const __m256i field = _mm256_and_si256(_mm256_srli_epi32(c[r][q], 23), _mm256_set1_epi32(0xFF));
        c_exp[r][q] = _mm256_sub_epi32(_mm256_max_epi32(field, _mm256_set1_epi32(1)), _mm256_set1_epi32(127));
        zero[r][q] = _mm256_cmpeq_epi32(_mm256_and_si256(c[r][q], _mm256_set1_epi32(0x7FFFFFFF)), _mm256_setzero_si256());
        _mm256_store_si256(reinterpret_cast<__m256i*>(floor_exp[r] + 8 * q),
                           _mm256_blendv_epi8(c_exp[r][q], _mm256_set1_epi32(t.rule.e_zero), zero[r][q]));
      }
    }
    // gst_steps_body's exactness proof: from the step's bounds, and where they fail from the
    // groups' (the same lanes, the same outcome).
    __m256i step_outside = _mm256_setzero_si256();
    for (std::size_t r = 0; r < kRows; ++r) {
      const __m256i a_hi = _mm256_set1_epi32(P.a_step_hi[(t.row0 + r) * P.steps + s]);
      const __m256i a_lo = _mm256_set1_epi32(P.a_step_lo[(t.row0 + r) * P.steps + s]);
      for (std::size_t q = 0; q < 2; ++q) {
        const std::size_t at = (t.strip * P.steps + s) * W + 8 * q;
        const __m256i floor = _mm256_load_si256(reinterpret_cast<const __m256i*>(floor_exp[r] + 8 * q));
        const __m256i upper = _mm256_max_epi32(floor, _mm256_add_epi32(a_hi, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(&P.b_step_hi[at]))));
        const __m256i lower = _mm256_add_epi32(a_lo, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(&P.b_step_lo[at])));
        step_outside = _mm256_or_si256(step_outside, gst_outside(upper, lower, c_exp[r][q], zero[r][q], group_slack, c_slack));
      }
    }
    bool exact = _mm256_testz_si256(step_outside, step_outside) != 0;
    if (!exact) {
      __m256i group_outside = _mm256_setzero_si256();
      for (std::size_t r = 0; r < kRows; ++r) {
        __m256i upper[2], lower[2];
        for (std::size_t q = 0; q < 2; ++q) {
          upper[q] = _mm256_load_si256(reinterpret_cast<const __m256i*>(floor_exp[r] + 8 * q));
          lower[q] = _mm256_set1_epi32(kNoExpHigh);
        }
        for (std::size_t g = 0; g < G; ++g) {
          const std::size_t ag = a_base + r * P.groups + g, bg = (b_base + g) * W;
          const __m256i a_hi = _mm256_set1_epi32(P.a_ehi[ag]), a_lo = _mm256_set1_epi32(P.a_elo[ag]);
          for (std::size_t q = 0; q < 2; ++q) {
            upper[q] = _mm256_max_epi32(upper[q], _mm256_add_epi32(a_hi, _mm256_load_si256(reinterpret_cast<const __m256i*>(&P.b_ehi[bg + 8 * q]))));
            lower[q] = _mm256_min_epi32(lower[q], _mm256_add_epi32(a_lo, _mm256_load_si256(reinterpret_cast<const __m256i*>(&P.b_elo[bg + 8 * q]))));
          }
        }
        for (std::size_t q = 0; q < 2; ++q) {
          group_outside = _mm256_or_si256(group_outside, gst_outside(upper[q], lower[q], c_exp[r][q], zero[r][q], group_slack, c_slack));
        }
      }
      exact = _mm256_testz_si256(group_outside, group_outside) != 0;
    }

    if (exact) {
      counts.exact += kRows * W;
      for (std::size_t r = 0; r < kRows; ++r) {
        // C (a zero C as +0, for the reason the AVX-512 kernel gives) plus each group's sum times
        // its scale product, by FMAs: every product and partial sum is exact (the proof above).
        const __m256i c_start[2] = {_mm256_andnot_si256(zero[r][0], c[r][0]), _mm256_andnot_si256(zero[r][1], c[r][1])};
        __m256d V[4] = {lo_ps_pd(c_start[0]), hi_ps_pd(c_start[0]), lo_ps_pd(c_start[1]), hi_ps_pd(c_start[1])};
        for (std::size_t g = 0; g < G; ++g) {
          const __m256d a = _mm256_set1_pd(P.a_sv[a_base + r * P.groups + g]);
          const double* b = &P.b_sv[(b_base + g) * W];
          const __m256i sum[2] = {_mm256_load_si256(reinterpret_cast<const __m256i*>(&sums[g][r][0])),
                                  _mm256_load_si256(reinterpret_cast<const __m256i*>(&sums[g][r][8]))};
          V[0] = _mm256_fmadd_pd(lo_pd(sum[0]), _mm256_mul_pd(a, _mm256_load_pd(b)), V[0]);
          V[1] = _mm256_fmadd_pd(hi_pd(sum[0]), _mm256_mul_pd(a, _mm256_load_pd(b + 4)), V[1]);
          V[2] = _mm256_fmadd_pd(lo_pd(sum[1]), _mm256_mul_pd(a, _mm256_load_pd(b + 8)), V[2]);
          V[3] = _mm256_fmadd_pd(hi_pd(sum[1]), _mm256_mul_pd(a, _mm256_load_pd(b + 12)), V[3]);
        }
        __m256d tiny = _mm256_setzero_pd();
        for (std::size_t h = 0; h < 4; ++h) tiny = add_tiny_lanes(V[h], tiny);
        output_row_gst(V, !t.rule.f16 && _mm256_testz_pd(tiny, tiny) != 0, keep, t.rule, acc + r * W);
      }
    } else {
      counts.truncating += kRows * W;
      for (std::size_t r = 0; r < kRows; ++r) {
        // e_max as gst_truncating_row's.
        __m256i emax[2];
        for (std::size_t q = 0; q < 2; ++q) emax[q] = _mm256_load_si256(reinterpret_cast<const __m256i*>(floor_exp[r] + 8 * q));
        for (std::size_t g = 0; g < G; ++g) {
          const std::size_t ag = a_base + r * P.groups + g, bg = (b_base + g) * W;
          const __m256i a_nz = _mm256_set1_epi32(static_cast<int>(P.a_nz[ag])), a_hi = _mm256_set1_epi32(P.a_ehi[ag]);
          for (std::size_t q = 0; q < 2; ++q) {
            const __m256i dead = _mm256_cmpeq_epi32(
                _mm256_and_si256(a_nz, _mm256_load_si256(reinterpret_cast<const __m256i*>(&P.b_nz[bg + 8 * q]))), _mm256_setzero_si256());
            const __m256i e = _mm256_add_epi32(a_hi, _mm256_load_si256(reinterpret_cast<const __m256i*>(&P.b_ehi[bg + 8 * q])));
            emax[q] = _mm256_max_epi32(emax[q], _mm256_blendv_epi8(e, _mm256_set1_epi32(2 * kNoExp), dead));
          }
        }
        // The vector route needs e_max in F - 126 .. F + 1022: then 2^(F - e_max) and its inverse are
        // normal doubles (pow2d4), and a nonzero V, a multiple of 2^(e_max - F), is at least 2^-126
        // (rz_fp32_8). e_max is at most 254 (two scale exponents; C's e(c) <= 128), so only rows
        // whose C and live groups all lie below 2^(F - 126) fall outside: gst_truncating_row.
        // (For RZ-FP32 a limit down to F - 149 gives the same bits, a subnormal multiple of 2^-149
        // being a float; GstRowsAroundTheLeastNormalGrid fails with it at F - 150.)
        __m256i off_range = _mm256_setzero_si256();
        for (std::size_t q = 0; q < 2; ++q) {
          off_range = _mm256_or_si256(off_range, _mm256_or_si256(_mm256_cmpgt_epi32(_mm256_set1_epi32(F - 126), emax[q]),
                                                                 _mm256_cmpgt_epi32(emax[q], _mm256_set1_epi32(F + 1022))));
        }
        if (!_mm256_testz_si256(off_range, off_range)) {
          gst_truncating_row(t, r, g0, G, sums, floor_exp[r], acc + r * W);
          continue;
        }
        // Per double vector h: the grid factor 2^(F - e_max), 2^(e_max - F) (the exponent field
        // mirrored: 2046 - field), C truncated to the grid, then each group's term truncated.
        // Unlike gst_truncating_row's, this S needs no +0 to start from: e_max >= F - 126 is set
        // by a nonzero C, whose term is then at least 2^F in magnitude, or by a live group, whose
        // term is then nonzero or, for a cancelled group, +0; so a zero sum is +0 either way.
        __m256d grid[4], S[4];
        for (std::size_t q = 0; q < 2; ++q) {
          const __m256i down = _mm256_sub_epi32(_mm256_set1_epi32(F), emax[q]);
          grid[2 * q] = pow2d4(_mm256_castsi256_si128(down));
          grid[2 * q + 1] = pow2d4(_mm256_extracti128_si256(down, 1));
        }
        const __m256d c_pd[4] = {lo_ps_pd(c[r][0]), hi_ps_pd(c[r][0]), lo_ps_pd(c[r][1]), hi_ps_pd(c[r][1])};
        for (std::size_t h = 0; h < 4; ++h) {
          S[h] = _mm256_round_pd(_mm256_mul_pd(c_pd[h], grid[h]), _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
        }
        for (std::size_t g = 0; g < G; ++g) {
          const __m256d a = _mm256_set1_pd(P.a_sv[a_base + r * P.groups + g]);
          const double* b = &P.b_sv[(b_base + g) * W];
          const __m256i sum[2] = {_mm256_load_si256(reinterpret_cast<const __m256i*>(&sums[g][r][0])),
                                  _mm256_load_si256(reinterpret_cast<const __m256i*>(&sums[g][r][8]))};
          const __m256d sum_pd[4] = {lo_pd(sum[0]), hi_pd(sum[0]), lo_pd(sum[1]), hi_pd(sum[1])};
          for (std::size_t h = 0; h < 4; ++h) {
            const __m256d w = _mm256_mul_pd(_mm256_mul_pd(a, _mm256_load_pd(b + 4 * h)), grid[h]);
            S[h] = _mm256_add_pd(S[h], _mm256_round_pd(_mm256_mul_pd(sum_pd[h], w), _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC));
          }
        }
        __m256d V[4];
        const __m256i mirror = _mm256_set1_epi64x(2046ll << 52);
        for (std::size_t h = 0; h < 4; ++h) {
          V[h] = _mm256_mul_pd(S[h], _mm256_castsi256_pd(_mm256_sub_epi64(mirror, _mm256_castpd_si256(grid[h]))));
        }
        output_row_gst(V, !t.rule.f16, keep, t.rule, acc + r * W);
      }
    }

    apply_gst_specials(t, specials, s, acc, counts);
  }
}

// ---- Panel decoding (fast_panels.h DecodeARowFn / DecodeBStripFn) with e8 bounds and without
// fp16 panels: the table lookups as 8-lane gathers, as the AVX-512 decoder's 16-lane ones. A
// one-thread MXFP8 256 x 256 x 8192 GEMM decodes 4 M elements for 0.5 G MACs: on a Zen 3 core the
// scalar decoder took 15% of the T-FDPA kernel's time there, this one 6% (docs/performance.md).

// 8 codes as 32-bit indices.
BLOCKSCALE_AVX2 inline __m256i codes8(const std::uint8_t* codes) {
  return _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(codes)));
}

// The eb words of 8 codes with the specials' words replaced by 0 (fast_panels.h DecodeTables), and
// the NaN and Inf lanes (all ones).
struct EbLanes {
  __m256i w, nan, inf;
};
BLOCKSCALE_AVX2 inline EbLanes eb_lanes(__m256i idx, const std::uint32_t* table) {
  const __m256i w = _mm256_i32gather_epi32(reinterpret_cast<const int*>(table), idx, 4);
  const __m256i nan = _mm256_cmpeq_epi32(w, _mm256_set1_epi32(static_cast<int>(kEbWordNaN)));
  const __m256i inf = _mm256_cmpeq_epi32(w, _mm256_set1_epi32(static_cast<int>(kEbWordInf)));
  return {_mm256_andnot_si256(_mm256_or_si256(nan, inf), w), nan, inf};
}

// The e8 byte of each lane's eb word (its low byte; 0 for a zero or special element, whose word
// eb_lanes zeroed) in all four bytes of the lane: a_e8's word.
BLOCKSCALE_AVX2 inline __m256i e8_words(__m256i w) {
  const __m256i low_byte_everywhere = _mm256_setr_epi8(0, 0, 0, 0, 4, 4, 4, 4, 8, 8, 8, 8, 12, 12, 12, 12, 0, 0, 0, 0, 4,
                                                       4, 4, 4, 8, 8, 8, 8, 12, 12, 12, 12);
  return _mm256_shuffle_epi8(w, low_byte_everywhere);
}

// A strip step's NaN and Inf lanes (four 8-lane vectors, all ones where the lane holds one) as the
// 32-bit lane masks b_nan and b_inf at `at`; whether some lane holds an Inf.
BLOCKSCALE_AVX2 inline bool store_special_lanes(const __m256i (&nan)[4], const __m256i (&inf)[4], std::size_t at,
                                                TfdpaPanels& P) {
  std::uint32_t nan_lanes = 0, inf_lanes = 0;
  for (std::size_t q = 0; q < 4; ++q) {
    nan_lanes |= static_cast<std::uint32_t>(_mm256_movemask_ps(_mm256_castsi256_ps(nan[q]))) << (8 * q);
    inf_lanes |= static_cast<std::uint32_t>(_mm256_movemask_ps(_mm256_castsi256_ps(inf[q]))) << (8 * q);
  }
  P.b_nan[at] = nan_lanes;
  P.b_inf[at] = inf_lanes;
  return inf_lanes != 0;
}

// Whole vectors only: decode_tfdpa hands this A rows whose step length is a multiple of 8
// (TfdpaDecoder::a_row_lanes), as P.k is of the step length.
BLOCKSCALE_AVX2 bool decode_a_row_avx2(const DecodeTables& t, const std::uint8_t* codes, std::size_t i,
                                       TfdpaPanels& P) {
  const auto L = static_cast<std::size_t>(P.L);
  const std::size_t K = P.k;
  float* val = P.a_val.data() + i * K;
  std::int32_t* e8 = P.a_e8.data() + i * K;
  bool any_inf = false;
  for (std::size_t s = 0; s < P.steps; ++s) {
    __m256i nan = _mm256_setzero_si256(), inf = nan;
    for (std::size_t c = s * L; c < (s + 1) * L; c += 8) {
      const __m256i idx = codes8(codes + c);
      const __m256 v = _mm256_i32gather_ps(t.val, idx, 4);
      const EbLanes e = eb_lanes(idx, t.eb);
      nan = _mm256_or_si256(nan, e.nan);
      inf = _mm256_or_si256(inf, e.inf);
      _mm256_storeu_ps(val + c, v);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(e8 + c), e8_words(e.w));
    }
    const bool has_inf = _mm256_testz_si256(inf, inf) == 0;
    P.a_flags[i * P.steps + s] = static_cast<std::uint8_t>((_mm256_testz_si256(nan, nan) == 0 ? kHasNaN : 0) |
                                                           (has_inf ? kHasInf : 0));
    any_inf = any_inf || has_inf;
  }
  return any_inf;
}

BLOCKSCALE_AVX2 bool decode_b_strip_avx2(const DecodeTables& t, const std::uint8_t* codes, std::size_t st,
                                         TfdpaPanels& P) {
  static_assert(kTfdpaWidth == 32, "four 8-lane vectors per k");
  constexpr std::size_t W = kTfdpaWidth;
  const auto L = static_cast<std::size_t>(P.L);
  const std::size_t K = P.k;
  float* val = P.b_val.data() + st * K * W;
  std::uint8_t* e8 = P.b_e8.data() + st * K * W;
  const __m256i low_byte = _mm256_set1_epi32(0xFF);
  // After the two packs below the 4-byte groups of the 32 lanes stand in the order q0 lanes 0-3,
  // q1 0-3, q2 0-3, q3 0-3, q0 4-7, ... (each pack works within 128-bit halves): this puts them
  // back in lane order.
  const __m256i group_order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
  bool any_inf = false;
  for (std::size_t s = 0; s < P.steps; ++s) {
    __m256i nan[4], inf[4];
    for (std::size_t q = 0; q < 4; ++q) nan[q] = inf[q] = _mm256_setzero_si256();
    for (std::size_t k = s * L; k < (s + 1) * L; ++k) {
      __m256i bytes[4];
      for (std::size_t q = 0; q < 4; ++q) {  // 8 lanes per gather of each table
        const std::size_t at = k * W + 8 * q;
        const __m256i idx = codes8(codes + at);
        const EbLanes e = eb_lanes(idx, t.eb);
        nan[q] = _mm256_or_si256(nan[q], e.nan);
        inf[q] = _mm256_or_si256(inf[q], e.inf);
        _mm256_storeu_ps(val + at, _mm256_i32gather_ps(t.val, idx, 4));
        bytes[q] = _mm256_and_si256(e.w, low_byte);
      }
      // The words' low bytes (below 256: no pack saturates) as 32 bytes.
      const __m256i packed = _mm256_packus_epi16(_mm256_packus_epi32(bytes[0], bytes[1]),
                                                 _mm256_packus_epi32(bytes[2], bytes[3]));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(e8 + k * W), _mm256_permutevar8x32_epi32(packed, group_order));
    }
    any_inf = store_special_lanes(nan, inf, st * P.steps + s, P) || any_inf;
  }
  return any_inf;
}

// ---- Panel decoding of wide operands (fast_panels.h DecodeWideRowFn / DecodeWideStripFn), 8
// storage words at a time by bit operations, as the AVX-512 decoder's wide_lanes (which gives the
// reasons) with the masks as lanes of all ones. The scalar decoder took 15% of the T-FDPA kernel's
// time in a one-thread bf16 256 x 256 x 8192 GEMM on a Zen 3 core.
struct WideLanes8 {
  __m256i bits;  // 0 for a zero or special element
  __m256i exp;   // e(x); kNoExp for a zero or special element
  __m256i live, nan, inf;
};

template <Format F>
BLOCKSCALE_AVX2 inline WideLanes8 wide_lanes8(__m256i words) {
  const __m256i zero = _mm256_setzero_si256();
  __m256i bits, special, no_payload;
  if constexpr (F == Format::float16) {
    const __m256i field = _mm256_and_si256(_mm256_srli_epi32(words, 10), _mm256_set1_epi32(0x1F));
    const __m256i man = _mm256_and_si256(words, _mm256_set1_epi32(0x3FF));
    const __m256i sign = _mm256_slli_epi32(_mm256_and_si256(words, _mm256_set1_epi32(0x8000)), 16);
    const __m256i normal = _mm256_or_si256(
        _mm256_slli_epi32(_mm256_add_epi32(field, _mm256_set1_epi32(112)), 23), _mm256_slli_epi32(man, 13));
    const __m256i subnormal =
        _mm256_castps_si256(_mm256_mul_ps(_mm256_cvtepi32_ps(man), _mm256_set1_ps(0x1p-24f)));
    bits = _mm256_or_si256(sign, _mm256_blendv_epi8(normal, subnormal, _mm256_cmpeq_epi32(field, zero)));
    special = _mm256_cmpeq_epi32(field, _mm256_set1_epi32(0x1F));
    no_payload = _mm256_cmpeq_epi32(man, zero);
  } else {
    bits = F == Format::bfloat16 ? _mm256_slli_epi32(words, 16)
                                 : _mm256_and_si256(words, _mm256_set1_epi32(static_cast<int>(0xFFFFE000u)));
    const __m256i field = _mm256_set1_epi32(0x7F800000);
    special = _mm256_cmpeq_epi32(_mm256_and_si256(bits, field), field);
    no_payload = _mm256_cmpeq_epi32(_mm256_and_si256(bits, _mm256_set1_epi32(0x7FFFFF)), zero);
  }
  constexpr int emin = F == Format::float16 ? -14 : -126;
  const __m256i is_zero = _mm256_cmpeq_epi32(_mm256_and_si256(bits, _mm256_set1_epi32(0x7FFFFFFF)), zero);
  const __m256i live = _mm256_andnot_si256(_mm256_or_si256(special, is_zero), _mm256_set1_epi32(-1));
  const __m256i exp = _mm256_max_epi32(
      _mm256_sub_epi32(_mm256_and_si256(_mm256_srli_epi32(bits, 23), _mm256_set1_epi32(0xFF)),
                       _mm256_set1_epi32(127)),
      _mm256_set1_epi32(emin));
  return {_mm256_and_si256(live, bits), _mm256_blendv_epi8(_mm256_set1_epi32(kNoExp), exp, live), live,
          _mm256_andnot_si256(no_payload, special), _mm256_and_si256(special, no_payload)};
}

// 16 int32 lanes (two vectors, each within int16) as 16 int16 in lane order: vpackssdw packs
// within 128-bit lanes, vpermq puts the four quarters in order.
BLOCKSCALE_AVX2 inline __m256i int16_lanes(__m256i lo8, __m256i hi8) {
  return _mm256_permute4x64_epi64(_mm256_packs_epi32(lo8, hi8), 0xD8);
}

// The largest and the smallest of 8 int32 lanes.
BLOCKSCALE_AVX2 inline int max_lane(__m256i v) {
  __m128i m = _mm_max_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  m = _mm_max_epi32(m, _mm_shuffle_epi32(m, 0x4E));
  return _mm_cvtsi128_si32(_mm_max_epi32(m, _mm_shuffle_epi32(m, 0xB1)));
}
BLOCKSCALE_AVX2 inline int min_lane(__m256i v) {
  __m128i m = _mm_min_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  m = _mm_min_epi32(m, _mm_shuffle_epi32(m, 0x4E));
  return _mm_cvtsi128_si32(_mm_min_epi32(m, _mm_shuffle_epi32(m, 0xB1)));
}

// A row: val and exp2 8 elements at a time, per step lo / hi by vertical min / max over the live
// lanes, then across the vector, and the flags. Whole vectors only: decode_tfdpa hands this rows
// whose step length is a multiple of 8 (TfdpaDecoder::a_row_lanes).
template <Format F>
BLOCKSCALE_AVX2 bool decode_wide_row8(const std::uint32_t* words, std::size_t i, TfdpaPanels& P) {
  const auto L = static_cast<std::size_t>(P.L);
  bool any_inf = false;
  for (std::size_t s = 0; s < P.steps; ++s) {
    __m256i lo = _mm256_set1_epi32(kNoExpHigh), hi = _mm256_set1_epi32(kNoExp);
    __m256i nan = _mm256_setzero_si256(), inf = nan;
    for (std::size_t c = s * L; c < (s + 1) * L; c += 8) {
      const WideLanes8 e = wide_lanes8<F>(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(words + c)));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(P.a_val.data() + i * P.k + c), e.bits);
      _mm256_storeu_si256(
          reinterpret_cast<__m256i*>(P.a_exp2.data() + i * P.k + c),
          _mm256_or_si256(_mm256_and_si256(e.exp, _mm256_set1_epi32(0xFFFF)), _mm256_slli_epi32(e.exp, 16)));
      lo = _mm256_min_epi32(lo, _mm256_blendv_epi8(_mm256_set1_epi32(kNoExpHigh), e.exp, e.live));
      hi = _mm256_max_epi32(hi, e.exp);  // kNoExp, the least, in the other lanes
      nan = _mm256_or_si256(nan, e.nan);
      inf = _mm256_or_si256(inf, e.inf);
    }
    const std::size_t at = i * P.steps + s;
    P.a_lo[at] = static_cast<std::int16_t>(min_lane(lo));
    P.a_hi[at] = static_cast<std::int16_t>(max_lane(hi));
    const bool has_inf = _mm256_testz_si256(inf, inf) == 0;
    P.a_flags[at] = static_cast<std::uint8_t>((_mm256_testz_si256(nan, nan) == 0 ? kHasNaN : 0) |
                                              (has_inf ? kHasInf : 0));
    any_inf = any_inf || has_inf;
  }
  return any_inf;
}

// A strip ([k][W] words): val and exp per k, four vectors of 8 lanes; per step the lanes' lo / hi by
// vertical min / max, and the NaN / Inf lane masks.
template <Format F>
BLOCKSCALE_AVX2 bool decode_wide_strip8(const std::uint32_t* words, std::size_t st, TfdpaPanels& P) {
  static_assert(kTfdpaWidth == 32, "four 8-lane vectors per k");
  constexpr std::size_t W = kTfdpaWidth;
  const auto L = static_cast<std::size_t>(P.L);
  bool any_inf = false;
  for (std::size_t s = 0; s < P.steps; ++s) {
    __m256i lo[4], hi[4], nan[4], inf[4];
    for (std::size_t q = 0; q < 4; ++q) {
      lo[q] = _mm256_set1_epi32(kNoExpHigh);
      hi[q] = _mm256_set1_epi32(kNoExp);
      nan[q] = inf[q] = _mm256_setzero_si256();
    }
    for (std::size_t k = s * L; k < (s + 1) * L; ++k) {
      __m256i exp[4];
      for (std::size_t q = 0; q < 4; ++q) {
        const WideLanes8 e =
            wide_lanes8<F>(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(words + k * W + 8 * q)));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(P.b_val.data() + (st * P.k + k) * W + 8 * q), e.bits);
        exp[q] = e.exp;
        lo[q] = _mm256_min_epi32(lo[q], _mm256_blendv_epi8(_mm256_set1_epi32(kNoExpHigh), e.exp, e.live));
        hi[q] = _mm256_max_epi32(hi[q], e.exp);
        nan[q] = _mm256_or_si256(nan[q], e.nan);
        inf[q] = _mm256_or_si256(inf[q], e.inf);
      }
      std::int16_t* b_exp = P.b_exp.data() + (st * P.k + k) * W;
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(b_exp), int16_lanes(exp[0], exp[1]));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(b_exp + 16), int16_lanes(exp[2], exp[3]));
    }
    const std::size_t at = (st * P.steps + s) * W;
    for (std::size_t h = 0; h < 2; ++h) {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(P.b_lo.data() + at + 16 * h),
                          int16_lanes(lo[2 * h], lo[2 * h + 1]));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(P.b_hi.data() + at + 16 * h),
                          int16_lanes(hi[2 * h], hi[2 * h + 1]));
    }
    any_inf = store_special_lanes(nan, inf, st * P.steps + s, P) || any_inf;
  }
  return any_inf;
}

BLOCKSCALE_AVX2 bool decode_wide_row_avx2(Format f, const std::uint32_t* words, std::size_t i,
                                          TfdpaPanels& P) {
  switch (f) {
    case Format::float16: return decode_wide_row8<Format::float16>(words, i, P);
    case Format::bfloat16: return decode_wide_row8<Format::bfloat16>(words, i, P);
    default: return decode_wide_row8<Format::tfloat32>(words, i, P);
  }
}
BLOCKSCALE_AVX2 bool decode_wide_strip_avx2(Format f, const std::uint32_t* words, std::size_t st,
                                            TfdpaPanels& P) {
  switch (f) {
    case Format::float16: return decode_wide_strip8<Format::float16>(words, st, P);
    case Format::bfloat16: return decode_wide_strip8<Format::bfloat16>(words, st, P);
    default: return decode_wide_strip8<Format::tfloat32>(words, st, P);
  }
}

BLOCKSCALE_AVX2 void promote_avx2(PromotionFma fma, const std::uint32_t* sa, const std::uint32_t* sb,
                                  const std::uint32_t* part, std::uint32_t* acc) {
  promote_body(fma, sa, sb, part, acc);
}
BLOCKSCALE_AVX2 void accumulate_avx2(const std::uint32_t* part, std::uint32_t* acc, bool f16) { accumulate_body(part, acc, f16); }
#endif

}  // namespace

#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx2,fma,bmi2"))) void tfdpa_portable_avx512(
    const TfdpaTile& t, std::uint32_t* acc, std::size_t s0, std::size_t s1, StepCounts& c) {
  tfdpa_exponents_body<true>(t, acc, s0, s1, c);
}
#endif

const KernelSet& portable_kernels() {
  static const KernelSet k{TfdpaBounds::exponents, &tfdpa_portable, &tfdpa_portable_wide, &gst_portable, &promote_portable,
                           &accumulate_portable};
  return k;
}

#if defined(__x86_64__) && defined(__GNUC__)
bool cpu_has_avx2() {
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("bmi2");
}
const KernelSet& avx2_kernels(Avx2UnitSums sums) {
  const auto set = [](TfdpaStepsFn tfdpa) {
    return KernelSet{TfdpaBounds::exponent_bytes, tfdpa, &tfdpa_wide_avx2, &gst_avx2, &promote_avx2, &accumulate_avx2,
                     0,
                     TfdpaDecoder{&decode_a_row_avx2, &decode_b_strip_avx2, &decode_wide_row_avx2,
                                  &decode_wide_strip_avx2, TfdpaBounds::exponent_bytes, false, 8}};
  };
  static const KernelSet int32 = set(&tfdpa_avx2<Avx2UnitSums::int32>);
  static const KernelSet float32 = set(&tfdpa_avx2<Avx2UnitSums::float32>);
  return sums == Avx2UnitSums::float32 ? float32 : int32;
}
// AMD family 17h (Zen, Zen+, Zen 2): four FP pipes, the multiplies on two, the adds on the other
// two, the vector integer adds on three of the four. Measured on a Zen 1 core; Zen 2 has the same
// four pipes (not measured).
Avx2UnitSums preferred_avx2_unit_sums() {
  return __builtin_cpu_is("amdfam17h") ? Avx2UnitSums::float32 : Avx2UnitSums::int32;
}
#else
bool cpu_has_avx2() { return false; }
const KernelSet& avx2_kernels(Avx2UnitSums) { return portable_kernels(); }
Avx2UnitSums preferred_avx2_unit_sums() { return Avx2UnitSums::int32; }
#endif
const KernelSet& avx2_kernels() { return avx2_kernels(preferred_avx2_unit_sums()); }

}  // namespace blockscale::emulator::fast
