// SPDX-License-Identifier: Apache-2.0
// The fast GEMM paths (issue 6: GemmPath portable, avx2, avx512) against the reference engine,
// bit for bit, on random GEMMs of every covered instruction family and schedule. A case is one
// output element (one dot product chained along K through its schedule). Per family: kCases cases
// in CI, 10^6 in the exhaustive build (BLOCKSCALE_FULL_SWEEP, ctest label "exhaustive"), drawn by
// generators that exercise each route of the fast kernels (fast_kernels.h):
//   realistic   narrow exponent windows per row / column (mostly the exact tier);
//   quantized   Gaussian and heavy-tailed data through blockscale::quantize (RCEIL, NVFP4 recipe);
//   wide        any finite code, subnormals included, scales near 1 (exponent spreads that truncate);
//   extreme     huge / tiny scales, C of any magnitude up to near overflow (C truncated, overflow);
//   cancel      zeros, cancelling pairs and all-zero groups (zero sums, e_zero, GST zero groups);
//   special     NaN / Inf operands and scales, NaN / Inf C (the NaN override, the reference
//               fallback for Inf lanes);
//   bits        uniform random bit patterns everywhere (tf32: fp32 words with arbitrary low bits);
//   boundary    two exponent levels per row / column (and per scale) with gaps around the limits
//               of the exact tier, odd significands and C just below the largest product, so that
//               the exponent bounds are tight and one bit either side of a limit shows.
// The GemmPathStats of each family must show all three routes taken. Where the CPU has AVX2, both
// variants of the AVX2 T-FDPA kernel's sums (fast_kernels.h, Avx2UnitSums) run every case too, the
// one that this CPU's avx2 path does not choose included. Also here: the host FPU
// arithmetic of the fast paths against emulator/arith.h, results identical for any thread count,
// and a forced path that the CPU lacks throws.
#include <gtest/gtest.h>

#if defined(_OPENMP)
#include <omp.h>
#endif

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdio>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "blockscale/emulator.h"
#include "blockscale/formats.h"
#include "blockscale/quantize.h"
#include "fast_gemm.h"
#include "fast_kernels.h"
#include "fp_mode.h"
#include "gemm_test_data.h"
#include "value_classes.h"

namespace blockscale::emulator {
namespace {

#if defined(BLOCKSCALE_FULL_SWEEP)
constexpr std::size_t kCases = 1000000;
#define FAST_PATH_SUITE EmulatorFastPathFull
#else
constexpr std::size_t kCases = 100000;
#define FAST_PATH_SUITE EmulatorFastPath
#endif

using Rng = std::mt19937_64;
using testing::fast_paths;

std::uint32_t uniform(Rng& rng, std::uint32_t n) { return static_cast<std::uint32_t>(rng() % n); }

// A finite code of format f with its exponent field in [lo, hi] (clamped), random sign and mantissa.
std::uint32_t code_in_window(Rng& rng, Format f, int lo, int hi) {
  const FormatInfo& fi = info(f);
  const int top = (1 << fi.exponent_bits) - 1;
  lo = std::clamp(lo, 0, top);
  hi = std::clamp(hi, lo, top);
  const auto field = static_cast<std::uint32_t>(lo + static_cast<int>(uniform(rng, static_cast<std::uint32_t>(hi - lo + 1))));
  std::uint32_t code = (field << fi.mantissa_bits) | uniform(rng, 1u << fi.mantissa_bits);
  if (fi.is_signed && (rng() & 1)) code |= sign_mask(f);
  if (classify(f, code) == ValueClass::nan || classify(f, code) == ValueClass::infinite) code &= ~(1u << fi.mantissa_bits);
  return code;
}

std::uint32_t special_code(Rng& rng, Format f) {
  const std::uint32_t sign = info(f).is_signed && (rng() & 1) ? sign_mask(f) : 0u;
  switch (uniform(rng, 5)) {
    case 0: return sign;
    case 1: return sign | max_finite_code(f);
    case 2: return sign | 1u;
    case 3: return has_inf(f) ? sign | inf_code(f) : sign | max_finite_code(f);
    default: return has_nan(f) ? sign | all_ones_code(f) : sign;
  }
}

enum Generator { kRealistic, kQuantized, kWide, kExtreme, kCancel, kSpecial, kBits, kBoundary, kGenerators };
const char* const kGeneratorNames[] = {"realistic", "quantized", "wide", "extreme", "cancel", "special", "bits", "boundary"};

// Codes as a CodeMatrix in words of the format's storage width (bytes, 16-bit words, or for tf32
// fp32 words, to_storage), kept alive here while the CodeMatrix views them. (Problem::words also
// fills tf32's low bits.)
struct StorageWords {
  std::vector<std::uint8_t> u8;
  std::vector<std::uint16_t> u16;
  std::vector<std::uint32_t> u32;
  CodeMatrix view(Format f, std::size_t rows, std::size_t cols, const std::vector<std::uint32_t>& codes) {
    switch (info(f).storage_bits) {
      case 8: u8.assign(codes.begin(), codes.end()); return CodeMatrix(f, rows, cols, u8);
      case 16: u16.assign(codes.begin(), codes.end()); return CodeMatrix(f, rows, cols, u16);
      default:
        u32.resize(codes.size());
        for (std::size_t i = 0; i < codes.size(); ++i) u32[i] = to_storage(f, codes[i]);
        return CodeMatrix(f, rows, cols, u32);
    }
  }
};

// One random GEMM problem: operands as codes, the schedule, and the shape.
struct Problem {
  KernelSchedule schedule;
  std::size_t M = 0, N = 0, K = 0;
  Format fa{}, fb{}, fs = Format::float8_e8m0fnu;
  std::vector<std::uint32_t> a, b;       // codes: A row-major M x K; B K x N in b_order
  std::vector<std::uint8_t> sa, sb;      // block scales
  Order b_order = Order::row_major;
  std::vector<std::uint32_t> psa, psb;  // promotion scales (fp32 bits)
  std::vector<std::uint32_t> c;         // M x N, or empty
  std::size_t blocks = 0;

  // The codes in words of the format's storage width: bytes, 16-bit words, or for tf32 fp32 words
  // whose 13 low bits (below the code, numerics.md b.1) are arbitrary. CodeMatrix views its words
  // without owning them: they are kept here.
  mutable std::vector<std::uint8_t> bytes[2];
  mutable std::vector<std::uint16_t> halves[2];
  mutable std::vector<std::uint32_t> words32[2];
  CodeMatrix words(int which, Format f, std::size_t rows, std::size_t cols, const std::vector<std::uint32_t>& codes,
                   Order order) const {
    if (info(f).storage_bits == 8) {
      bytes[which].assign(codes.begin(), codes.end());
      return CodeMatrix(f, rows, cols, bytes[which], order);
    }
    if (info(f).storage_bits == 16) {
      halves[which].assign(codes.begin(), codes.end());
      return CodeMatrix(f, rows, cols, halves[which], order);
    }
    words32[which].resize(codes.size());
    for (std::size_t i = 0; i < codes.size(); ++i) {
      words32[which][i] = to_storage(f, codes[i]) | (static_cast<std::uint32_t>(i * 0x9E3779B9u) >> 19);
    }
    return CodeMatrix(f, rows, cols, words32[which], order);
  }

  GemmOperands operands() const {
    GemmOperands ops{words(0, fa, M, K, a, Order::row_major), words(1, fb, K, N, b, b_order), {}, {}, {}};
    if (!sa.empty()) {
      ops.scale_a = CodeMatrix(fs, M, blocks, sa);
      ops.scale_b = CodeMatrix(fs, blocks, N, sb);
    }
    if (!psa.empty()) {
      ops.scale_a = CodeMatrix(Format::float32, M, blocks, psa);
      ops.scale_b = CodeMatrix(Format::float32, blocks, N, psb);
    }
    if (!c.empty()) ops.c = CodeMatrix(accumulator_format(schedule.instruction.params().rounding), M, N, c);
    return ops;
  }
};

// Element codes for the non-quantized generators; `window` is the row's / column's exponent window.
std::uint32_t element(Rng& rng, Generator g, Format f, int window) {
  const int top = (1 << info(f).exponent_bits) - 1;
  switch (g) {
    case kRealistic: {
      std::uint32_t code = code_in_window(rng, f, window, window + 2);
      if (uniform(rng, 16) == 0) code = 0;
      return code;
    }
    case kWide:
    case kExtreme: return code_in_window(rng, f, 0, top);
    case kCancel: return uniform(rng, 2) ? 0u : code_in_window(rng, f, window, window + 3);
    case kSpecial: return uniform(rng, 6) == 0 ? special_code(rng, f) : code_in_window(rng, f, 0, top);
    default: return static_cast<std::uint32_t>(rng()) & code_mask(f);
  }
}

std::uint32_t block_scale(Rng& rng, Generator g, Format fs) {
  const bool e8 = fs == Format::float8_e8m0fnu;
  switch (g) {
    case kRealistic:
    case kWide:
    case kCancel: return e8 ? 127u - 4u + uniform(rng, 9) : code_in_window(rng, Format::float8_ue4m3, 5, 9) & 0x7Fu;
    case kExtreme:
      if (e8) return uniform(rng, 2) ? uniform(rng, 12) : 243u + uniform(rng, 12);
      return uniform(rng, 0x7F);  // every finite ue4m3, zero and subnormals included
    case kSpecial:
      if (uniform(rng, 10) == 0) return e8 ? 0xFFu : (uniform(rng, 2) ? 0x7Fu : 0x00u);
      return e8 ? 127u - 4u + uniform(rng, 9) : code_in_window(rng, Format::float8_ue4m3, 5, 9) & 0x7Fu;
    default: return uniform(rng, 256);
  }
}

std::uint32_t accumulator(Rng& rng, Generator g, double typical) {
  switch (g) {
    case kRealistic:
    case kCancel:
    case kWide:
      if (uniform(rng, 3) == 0) return uniform(rng, 2) ? 0x80000000u : 0u;
      return std::bit_cast<std::uint32_t>(static_cast<float>(typical * std::ldexp(1.0, static_cast<int>(uniform(rng, 13)) - 6) *
                                                             (uniform(rng, 2) ? 1 : -1)));
    case kExtreme: {
      // Any finite fp32 magnitude, with a bias towards the top binades (overflow to Inf).
      const std::uint32_t field = uniform(rng, 2) ? 230u + uniform(rng, 25) : uniform(rng, 255);
      return (static_cast<std::uint32_t>(rng() & 1) << 31) | (field << 23) | (static_cast<std::uint32_t>(rng()) & 0x7FFFFFu);
    }
    case kSpecial: {
      const std::uint32_t pick = uniform(rng, 8);
      if (pick == 0) return 0x7F800000u | (static_cast<std::uint32_t>(rng() & 1) << 31);
      if (pick == 1) return 0x7FC00000u | (static_cast<std::uint32_t>(rng()) & 0x803FFFFFu);
      if (pick == 2) return static_cast<std::uint32_t>(rng()) & 0x807FFFFFu;  // subnormal or zero
      return std::bit_cast<std::uint32_t>(static_cast<float>(typical * (uniform(rng, 2) ? 1 : -1)));
    }
    default: return static_cast<std::uint32_t>(rng());
  }
}

// An f16 accumulator (RNE-FP16 rows) as the generator says: near `typical` (clamped to fp16's
// range) or zero; any finite code with a bias towards the top binades (overflow to Inf); Inf, NaN
// with any payload, subnormals; any 16 bits.
std::uint32_t accumulator_f16(Rng& rng, Generator g, double typical) {
  const std::uint32_t sign = static_cast<std::uint32_t>(rng() & 1) << 15;
  switch (g) {
    case kRealistic:
    case kCancel:
    case kWide: {
      if (uniform(rng, 3) == 0) return sign;
      const double v = std::clamp(typical * std::ldexp(1.0, static_cast<int>(uniform(rng, 13)) - 6), 0x1p-20, 0x1p14);
      return sign | convert_code(Format::float16, Format::float32, std::bit_cast<std::uint32_t>(static_cast<float>(v)));
    }
    case kExtreme: {
      const std::uint32_t field = uniform(rng, 2) ? 25u + uniform(rng, 6) : uniform(rng, 31);
      return sign | (field << 10) | uniform(rng, 1024);
    }
    case kSpecial: {
      const std::uint32_t pick = uniform(rng, 8);
      if (pick == 0) return sign | 0x7C00u;
      if (pick == 1) return sign | 0x7C00u | (1u + uniform(rng, 1023));  // NaN
      if (pick == 2) return sign | uniform(rng, 1024);                  // subnormal or zero
      return sign | convert_code(Format::float16, Format::float32, std::bit_cast<std::uint32_t>(static_cast<float>(
                                                                      std::clamp(typical, 0x1p-20, 0x1p14))));
    }
    default: return uniform(rng, 1u << 16);
  }
}

bool f16_accumulator(const KernelSchedule& s) { return accumulator_format(s.instruction.params().rounding) == Format::float16; }

// fp32 promotion scales (sa, sb of the Hopper FFMA): Gaussian, with zeros, subnormals and specials
// in the special / bits generators.
std::uint32_t promotion_scale(Rng& rng, Generator g) {
  if (g == kBits) return static_cast<std::uint32_t>(rng());
  if (g == kSpecial && uniform(rng, 8) == 0) {
    const std::uint32_t specials[] = {0u, 0x80000000u, 0x7F800000u, 0xFF800000u, 0x7FC00001u, 0x00000123u};
    return specials[uniform(rng, 6)];
  }
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const int e = g == kExtreme ? static_cast<int>(uniform(rng, 200)) - 100 : static_cast<int>(uniform(rng, 9)) - 4;
  return std::bit_cast<std::uint32_t>(std::ldexp(normal(rng), e));
}

// Gaussian (heavy = false) or Student-t with 2 degrees of freedom (heavy tails) values.
std::vector<float> data(Rng& rng, std::size_t n, bool heavy) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::chi_squared_distribution<float> chi2(2.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = heavy ? normal(rng) / std::sqrt(chi2(rng) / 2.0f) : normal(rng);
  return v;
}

// kBoundary (see the top of the file). The levels and gaps are drawn once per problem, so that
// every output of a tile sits at the same distance from a limit (a kernel picks its tier per
// tile). T-/ST-FDPA: each row of A holds elements at two exponent fields (hi and hi - gap) with odd
// mantissas, each column of B likewise, so that the largest and the smallest product exponent both
// occur and their distance sweeps across F - frac_a - frac_b; C has an odd significand 0..5
// binades below the largest product, or is zero (a fresh accumulator). GST-FDPA: elements 0,
// +-0.5, +-1.5 (odd 4 p_g half of the time), two scale levels (ue4m3: odd mantissas) whose gaps add
// up to 25..29 around F - 8 = 27, and C 10..14 binades below the largest group.
void draw_boundary(Rng& rng, Problem& pr) {
  const bool gst = pr.schedule.instruction.params().algorithm == Algorithm::gst_fdpa;
  const auto at_b = [&](std::size_t k, std::size_t j) { return pr.b_order == Order::row_major ? k * pr.N + j : j * pr.K + k; };
  const auto odd_code = [&](Format f, int field) {
    const FormatInfo& fi = info(f);
    std::uint32_t code = (static_cast<std::uint32_t>(field) << fi.mantissa_bits) | uniform(rng, 1u << fi.mantissa_bits) | 1u;
    if (classify(f, code) == ValueClass::nan || classify(f, code) == ValueClass::infinite) code &= ~2u;
    return (rng() & 1) ? code | sign_mask(f) : code;
  };
  int top_exp = 0;  // e(a) + e(b) + scale exponents of the largest product / group, for C
  if (!gst) {
    // Wide operands (f16, bf16, tf32): the top exponent field holds Inf / NaN, products of the top
    // binades overflow fp32, and gaps far beyond F - frac_a - frac_b say little: the upper level
    // near 2^4 and gaps of at most 24.
    const auto top_field = [](Format f) {
      return info(f).storage_bits > 8 ? info(f).bias + 4 : (1 << info(f).exponent_bits) - 1;
    };
    const auto gap_range = [](Format f, int top) { return static_cast<std::uint32_t>(info(f).storage_bits > 8 ? 25 : top); };
    const int top_a = top_field(pr.fa), top_b = top_field(pr.fb);
    const int hi_a = top_a - static_cast<int>(uniform(rng, 2)), hi_b = top_b - static_cast<int>(uniform(rng, 2));
    const int lo_a = std::max(1, hi_a - static_cast<int>(uniform(rng, gap_range(pr.fa, top_a))));
    const int lo_b = std::max(1, hi_b - static_cast<int>(uniform(rng, gap_range(pr.fb, top_b))));
    for (auto& x : pr.a) x = odd_code(pr.fa, (rng() & 1) ? hi_a : lo_a);
    for (std::size_t j = 0; j < pr.N; ++j) {
      for (std::size_t k = 0; k < pr.K; ++k) pr.b[at_b(k, j)] = odd_code(pr.fb, (rng() & 1) ? hi_b : lo_b);
    }
    top_exp = (hi_a - info(pr.fa).bias) + (hi_b - info(pr.fb).bias);
    if (pr.schedule.instruction.block_scaled()) {
      pr.sa.assign(pr.M * pr.blocks, 127);
      pr.sb.assign(pr.blocks * pr.N, 127);
    }
  } else {
    const std::uint8_t odd_e2m1[] = {0x1, 0x3, 0x9, 0xB};  // +-0.5, +-1.5
    for (auto& x : pr.a) x = uniform(rng, 2) ? 0 : odd_e2m1[uniform(rng, 4)];
    for (std::size_t j = 0; j < pr.N; ++j) {
      for (std::size_t k = 0; k < pr.K; ++k) pr.b[at_b(k, j)] = uniform(rng, 2) ? 0 : odd_e2m1[uniform(rng, 4)];
    }
    const bool e8 = pr.fs == Format::float8_e8m0fnu;
    const int gap_total = 25 + static_cast<int>(uniform(rng, 5));
    const int gap_a = e8 ? static_cast<int>(uniform(rng, static_cast<std::uint32_t>(gap_total + 1)))
                         : std::clamp(gap_total - 14 + static_cast<int>(uniform(rng, 4)), 11, 14);
    const int gap_b = gap_total - gap_a;
    const auto scale = [&](bool high, int gap) -> std::uint8_t {
      if (e8) return static_cast<std::uint8_t>(high ? 140 : 140 - gap);
      return static_cast<std::uint8_t>(((high ? 15 : std::max(1, 15 - gap)) << 3) | (1 + 2 * uniform(rng, 3)));
    };
    pr.sa.resize(pr.M * pr.blocks);
    pr.sb.resize(pr.blocks * pr.N);
    for (auto& x : pr.sa) x = scale(rng() & 1, gap_a);
    for (auto& x : pr.sb) x = scale(rng() & 1, gap_b);
    top_exp = e8 ? 2 * 13 : 2 * 8;
  }
  // C: odd significand, 0..5 binades (GST: 10..14) below the largest product or group, or zero.
  if (uniform(rng, 4) == 0) return;
  const int below = gst ? 10 + static_cast<int>(uniform(rng, 5)) : static_cast<int>(uniform(rng, 6));
  pr.c.resize(pr.M * pr.N);
  if (f16_accumulator(pr.schedule)) {
    // Within fp16's normal range (its top binade is 15).
    const auto field = static_cast<std::uint32_t>(std::clamp(top_exp - below, -14, 15) + 15);
    for (auto& x : pr.c) x = (static_cast<std::uint32_t>(rng() & 1) << 15) | (field << 10) | uniform(rng, 1024) | 1u;
    return;
  }
  // (Within fp32's normal range: bf16 and tf32 products reach 2^254.)
  const int e = std::clamp(top_exp - below, -126, 127);
  for (auto& x : pr.c) {
    x = (static_cast<std::uint32_t>(rng() & 1) << 31) | (static_cast<std::uint32_t>(e + 127) << 23) |
        (static_cast<std::uint32_t>(rng()) & 0x7FFFFFu) | 1u;
  }
}

struct Family {
  std::string name;
  std::function<KernelSchedule(Rng&, Format&, Format&)> schedule;  // picks the operand types too
  // Whether the AVX-512 path has an exact tier for the family: not for f16 operands alone (also
  // fp8 ones run as f16, b.9), which always take tfdpa_wide_avx512's float form (bf16 / tf32 steps
  // beyond its bounds do not).
  bool avx512_exact_tier = true;
  // Whether the AVX2 path has one: not for operands of at most 8 bits (tfdpa_avx2 takes the float
  // form for every tile-step; fast_kernels_portable.cpp).
  bool avx2_exact_tier = true;
};

const Type kNarrow[] = {Type::e4m3, Type::e5m2, Type::e2m3, Type::e3m2, Type::e2m1};

// The shapes of draw(). small: many cases per second. large: shapes that span several row blocks,
// strip groups and K chunks of fast_gemm's work split (so that tasks, chunk boundaries and the
// bounds carried between kernel calls are exercised). long_k: 5 to 8 rows and 33 to 64 columns
// (two row blocks, two strips) with K of 40960 to 57343 elements (GST-FDPA, fp4: four times that),
// whose panels (about 1 KB per k for the AVX-512 T-FDPA kernels) span several of fast_gemm's
// phases (16 MB of panels each).
enum class Shape { small, large, long_k };

Problem draw(Rng& rng, const Family& fam, Generator g, Shape shape = Shape::small) {
  const bool large = shape == Shape::large;
  Problem pr;
  pr.schedule = fam.schedule(rng, pr.fa, pr.fb);
  const Instruction& ins = pr.schedule.instruction;
  const bool block_scaled = ins.block_scaled();
  const bool promotion = pr.schedule.accumulation == Accumulation::promotion;
  const bool long_k = shape == Shape::long_k;
  const bool gst = ins.params().algorithm == Algorithm::gst_fdpa;  // fp4 panels: a quarter of the bytes
  pr.M = large ? 9 + uniform(rng, 24) : long_k ? 5 + uniform(rng, 4) : 1 + uniform(rng, 9);
  pr.N = large ? 129 + uniform(rng, 200) : long_k ? 33 + uniform(rng, 32) : 1 + uniform(rng, 40);
  // K: up to a few instructions (large: 600 to 1300 elements), sometimes not a multiple of the
  // instruction's K (padding).
  const std::size_t kins = static_cast<std::size_t>(ins.k);
  const std::size_t instructions = large    ? (600 + uniform(rng, 700)) / kins + 1
                                   : long_k ? (40960 + uniform(rng, 16384)) * (gst ? 4 : 1) / kins + 1
                                            : 1 + uniform(rng, promotion ? 9 : 6);
  pr.K = kins * instructions - (uniform(rng, 4) == 0 ? uniform(rng, static_cast<std::uint32_t>(kins)) : 0);
  pr.b_order = uniform(rng, 2) ? Order::row_major : Order::col_major;
  if (block_scaled) pr.fs = *format_of(ins.scale_type());
  const int sblock = pr.schedule.scale_block();
  pr.blocks = sblock > 0 ? (pr.K + static_cast<std::size_t>(sblock) - 1) / static_cast<std::size_t>(sblock) : 0;

  pr.a.resize(pr.M * pr.K);
  pr.b.resize(pr.K * pr.N);
  if (g == kQuantized && block_scaled) {
    // Gaussian or heavy-tailed rows through the library's quantizer (RCEIL; NVFP4: the
    // TransformerEngine recipe without its tensor scale, which the BlockScaledTensor overload
    // tests separately).
    const bool heavy = uniform(rng, 2) != 0;
    const BlockFormat bfa{pr.fa, pr.fs, ins.block()}, bfb{pr.fb, pr.fs, ins.block()};
    const std::size_t Kq = (pr.K + static_cast<std::size_t>(ins.block()) - 1) / static_cast<std::size_t>(ins.block()) *
                           static_cast<std::size_t>(ins.block());
    QuantizeOptions o;
    if (pr.fs == Format::float8_ue4m3) {
      o = recipes::nvfp4_transformer_engine();
      o.tensor_scale = TensorScaleSource::none;
    }
    o.k_tail = KTail::zero_pad;
    const auto qa = quantize(data(rng, pr.M * pr.K, heavy), {static_cast<std::int64_t>(pr.M), static_cast<std::int64_t>(pr.K)},
                             KAxis::last, bfa, o);
    const auto qb = quantize(data(rng, pr.N * pr.K, heavy), {static_cast<std::int64_t>(pr.N), static_cast<std::int64_t>(pr.K)},
                             KAxis::last, bfb, o);
    const auto ea = qa.element_codes(), eb = qb.element_codes();
    for (std::size_t i = 0; i < pr.M; ++i) {
      for (std::size_t k = 0; k < pr.K; ++k) pr.a[i * pr.K + k] = ea[i * Kq + k];
    }
    for (std::size_t j = 0; j < pr.N; ++j) {
      for (std::size_t k = 0; k < pr.K; ++k) {
        const std::size_t at = pr.b_order == Order::row_major ? k * pr.N + j : j * pr.K + k;
        pr.b[at] = eb[j * Kq + k];
      }
    }
    pr.sa.resize(pr.M * pr.blocks);
    pr.sb.resize(pr.blocks * pr.N);
    for (std::size_t i = 0; i < pr.M; ++i) {
      for (std::size_t t = 0; t < pr.blocks; ++t) {
        pr.sa[i * pr.blocks + t] = qa.scale_code(0, static_cast<std::int64_t>(i), static_cast<std::int64_t>(t));
      }
    }
    for (std::size_t j = 0; j < pr.N; ++j) {
      for (std::size_t t = 0; t < pr.blocks; ++t) {
        pr.sb[t * pr.N + j] = qb.scale_code(0, static_cast<std::int64_t>(j), static_cast<std::int64_t>(t));
      }
    }
  } else if (g == kBoundary) {
    draw_boundary(rng, pr);
  } else {
    const Generator ge = g == kQuantized ? kRealistic : g;
    // A row's / column's exponent window: anywhere, or for f16 accumulators (whose results above
    // 65504 are Inf) within 2^-8 .. 2^4 of 1.
    const auto window = [&](Format f) {
      const int top = (1 << info(f).exponent_bits) - 1;
      if (!f16_accumulator(pr.schedule)) return static_cast<int>(uniform(rng, static_cast<std::uint32_t>(top)));
      return std::clamp(info(f).bias - 8 + static_cast<int>(uniform(rng, 10)), 0, top - 3);
    };
    for (std::size_t i = 0; i < pr.M; ++i) {
      const int w = window(pr.fa);
      for (std::size_t k = 0; k < pr.K; ++k) pr.a[i * pr.K + k] = element(rng, ge, pr.fa, w);
    }
    for (std::size_t j = 0; j < pr.N; ++j) {
      const int w = window(pr.fb);
      for (std::size_t k = 0; k < pr.K; ++k) {
        const std::size_t at = pr.b_order == Order::row_major ? k * pr.N + j : j * pr.K + k;
        pr.b[at] = element(rng, ge, pr.fb, w);
      }
    }
    if (ge == kCancel) {
      // Cancelling pairs: a[k+1] = -a[k], b[k+1] = b[k] (zero-sum groups for GST-FDPA).
      for (std::size_t i = 0; i < pr.M; ++i) {
        for (std::size_t k = 0; k + 1 < pr.K; k += 2) {
          if (uniform(rng, 3) == 0) continue;
          pr.a[i * pr.K + k + 1] = pr.a[i * pr.K + k] ^ sign_mask(pr.fa);
        }
      }
      for (std::size_t j = 0; j < pr.N; ++j) {
        for (std::size_t k = 0; k + 1 < pr.K; k += 2) {
          const auto at = [&](std::size_t kk) { return pr.b_order == Order::row_major ? kk * pr.N + j : j * pr.K + kk; };
          pr.b[at(k + 1)] = pr.b[at(k)];
        }
      }
    }
    if (block_scaled) {
      pr.sa.resize(pr.M * pr.blocks);
      pr.sb.resize(pr.blocks * pr.N);
      for (auto& x : pr.sa) x = static_cast<std::uint8_t>(block_scale(rng, ge, pr.fs));
      for (auto& x : pr.sb) x = static_cast<std::uint8_t>(block_scale(rng, ge, pr.fs));
    }
  }
  if (promotion) {
    pr.psa.resize(pr.M * pr.blocks);
    pr.psb.resize(pr.blocks * pr.N);
    for (auto& x : pr.psa) x = promotion_scale(rng, g);
    for (auto& x : pr.psb) x = promotion_scale(rng, g);
  }
  if (g == kBoundary) return pr;  // C set by draw_boundary
  if (uniform(rng, 4) != 0) {
    // C near the size of the result of a few steps (realistic), or as the generator says.
    const double typical = std::ldexp(1.0, static_cast<int>(uniform(rng, 21)) - 10);
    pr.c.resize(pr.M * pr.N);
    const Generator gc = g == kQuantized ? kRealistic : g;
    for (auto& x : pr.c) x = f16_accumulator(pr.schedule) ? accumulator_f16(rng, gc, typical) : accumulator(rng, gc, typical);
  }
  return pr;
}

// A schedule around `ins`: mostly the plain chain, sometimes C in the epilogue or split-K.
KernelSchedule around(Rng& rng, const Instruction& ins) {
  KernelSchedule s = KernelSchedule::chain(ins, uniform(rng, 6) == 0 ? CPlacement::epilogue : CPlacement::accumulator);
  if (uniform(rng, 6) == 0) {
    // Cut at every instruction, or only at multiples of 2 or 4 instructions (cuBLASLt's K tiles).
    s = s.with_split_k(2 + static_cast<int>(uniform(rng, 3)),
                       uniform(rng, 2) ? SplitKReduction::sequential : SplitKReduction::pairwise,
                       static_cast<int>(uniform(rng, 3)) * ins.k * 2);
  }
  return s;
}

std::string type_name(Type t) { return std::string(to_string(t)); }

std::vector<Family> families() {
  const auto pick = [](Rng& rng) { return kNarrow[uniform(rng, 5)]; };
  const auto fp8 = [](Rng& rng) { return uniform(rng, 2) ? Type::e4m3 : Type::e5m2; };
  return {
      {"tcgen05.kind::mxf8f6f4.block32 (ST-FDPA F=25)",
       [=](Rng& rng, Format& fa, Format& fb) {
         // Mostly e4m3 x e4m3 (MXFP8), then every other operand pair.
         const Type a = uniform(rng, 3) == 0 ? pick(rng) : Type::e4m3, b = uniform(rng, 3) == 0 ? pick(rng) : Type::e4m3;
         fa = *format_of(a);
         fb = *format_of(b);
         return around(rng, parse_instruction("sm_100a tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.block32 m128n256k32 f32 " +
                                              type_name(a) + " " + type_name(b) + " ue8m0"));
       },
       true, false},
      {"sm_120a mma.sync.kind::mxf8f6f4.block32 (ST-FDPA F=25)",
       [=](Rng& rng, Format& fa, Format& fb) {
         const Type a = pick(rng), b = pick(rng);
         fa = *format_of(a);
         fb = *format_of(b);
         return around(rng, parse_instruction("sm_120a mma.sync.aligned.kind::mxf8f6f4.block_scale.block32 m16n8k32 f32 " +
                                              type_name(a) + " " + type_name(b) + " ue8m0"));
       },
       true, false},
      {"tcgen05.kind::f8f6f4 / sm_120a fp8 (T-FDPA F=25)",
       [=](Rng& rng, Format& fa, Format& fb) {
         // (sm_120a m16n8k16: K = 16 below L = 32, one step of 16 products.)
         const bool tc = uniform(rng, 2) != 0;
         const Type a = tc ? pick(rng) : fp8(rng), b = tc ? pick(rng) : fp8(rng);
         fa = *format_of(a);
         fb = *format_of(b);
         return around(rng, parse_instruction((tc ? "sm_100a tcgen05.mma.cta_group::1.kind::f8f6f4 m128n256k32 f32 "
                                               : uniform(rng, 3) == 0 ? "sm_120a mma.sync.aligned m16n8k16 f32 "
                                                                     : "sm_120a mma.sync.aligned m16n8k32 f32 ") +
                                              type_name(a) + " " + type_name(b)));
       },
       true, false},
      {"wgmma fp8 chain / sm_89 mma fp8 (T-FDPA F=13, RZ-E8M13)",
       [=](Rng& rng, Format& fa, Format& fb) {
         const Type a = fp8(rng), b = fp8(rng);
         fa = *format_of(a);
         fb = *format_of(b);
         return around(rng, parse_instruction((uniform(rng, 2) ? "sm_90a wgmma.mma_async m64n256k32 f32 "
                                                               : "sm_89 mma.sync.aligned m16n8k32 f32 ") +
                                              type_name(a) + " " + type_name(b)));
       },
       true, false},
      {"wgmma fp8 Hopper promotion (P = 1..4, each FFMA order)",
       [=](Rng& rng, Format& fa, Format& fb) {
         const Type a = uniform(rng, 3) ? Type::e4m3 : fp8(rng), b = uniform(rng, 3) ? Type::e4m3 : fp8(rng);
         fa = *format_of(a);
         fb = *format_of(b);
         const PromotionFma orders[] = {PromotionFma::scale_product, PromotionFma::scale_b_first, PromotionFma::mul_then_add};
         KernelSchedule s = KernelSchedule::hopper_promotion(
             parse_instruction("sm_90a wgmma.mma_async m64n256k32 f32 " + type_name(a) + " " + type_name(b)),
             1 + static_cast<int>(uniform(rng, 4)), orders[uniform(rng, 3)]);
         if (uniform(rng, 6) == 0) {
           s = s.with_split_k(2 + static_cast<int>(uniform(rng, 2)),
                              uniform(rng, 2) ? SplitKReduction::sequential : SplitKReduction::pairwise,
                              static_cast<int>(uniform(rng, 3)) * s.unit_k());
         }
         return s;
       },
       true, false},
      {"kind::mxf4 / mxf4nvf4 block32 ue8m0 (GST-FDPA)",
       [=](Rng& rng, Format& fa, Format& fb) {
         fa = fb = Format::float4_e2m1fn;
         return around(rng, parse_instruction(uniform(rng, 2) ? "sm_100a tcgen05.mma.cta_group::1.kind::mxf4.block_scale.block32 m128n256k64 f32 e2m1 e2m1 ue8m0"
                                                              : "sm_120a mma.sync.aligned.kind::mxf4nvf4.block_scale.block32 m16n8k64 f32 e2m1 e2m1 ue8m0"));
       }},
      {"kind::mxf4nvf4 block16 ue8m0 / ue4m3 (GST-FDPA, NVFP4)",
       [=](Rng& rng, Format& fa, Format& fb) {
         fa = fb = Format::float4_e2m1fn;
         const bool nv = uniform(rng, 3) != 0;
         return around(rng, parse_instruction(std::string("sm_100a tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.block16 m128n256k64 f32 e2m1 e2m1 ") +
                                              (nv ? "ue4m3" : "ue8m0")));
       }},
      {"f16 / bf16 -> f32: wgmma, kind::f16, mma.sync (T-FDPA F=25)",
       [=](Rng& rng, Format& fa, Format& fb) {
         const Type t = uniform(rng, 2) ? Type::bf16 : Type::f16;
         fa = fb = *format_of(t);
         // (m16n8k8 on sm_90a / sm_120a: K = 8 below L = 16, one step of 8 products.)
         const char* const shapes[] = {"sm_90a wgmma.mma_async m64n64k16 f32 ", "sm_100a tcgen05.mma.cta_group::1.kind::f16 m128n256k16 f32 ",
                                       "sm_90a mma.sync.aligned m16n8k16 f32 ", "sm_120a mma.sync.aligned m16n8k16 f32 ",
                                       "sm_90a mma.sync.aligned m16n8k8 f32 ", "sm_120a mma.sync.aligned m16n8k8 f32 "};
         return around(rng, parse_instruction(shapes[uniform(rng, 6)] + type_name(t) + " " + type_name(t)));
       }},
      {"f16 / bf16 -> f32: sm_70 .. sm_89 mma.sync (T-FDPA F=23 / 24)",
       [=](Rng& rng, Format& fa, Format& fb) {
         const Type t = uniform(rng, 2) ? Type::bf16 : Type::f16;
         const char* const bf16_or_f16[] = {"sm_80 mma.sync.aligned m16n8k16 f32 ", "sm_89 mma.sync.aligned m16n8k8 f32 "};
         const char* const f16_only[] = {"sm_75 mma.sync.aligned m16n8k8 f32 ", "sm_70 mma.sync.aligned m8n8k4 f32 "};
         const bool older = t == Type::f16 && uniform(rng, 2) != 0;
         fa = fb = *format_of(t);
         return around(rng, parse_instruction(std::string(older ? f16_only[uniform(rng, 2)] : bf16_or_f16[uniform(rng, 2)]) +
                                              type_name(t) + " " + type_name(t)));
       }},
      {"tf32 -> f32: wgmma, kind::tf32, mma.sync (T-FDPA F=24 / 25)",
       [=](Rng& rng, Format& fa, Format& fb) {
         fa = fb = Format::tfloat32;
         // (m16n8k4 on sm_90a / sm_100a: K = 4 below L = 8, one step of 4 products.)
         const char* const shapes[] = {"sm_90a wgmma.mma_async m64n64k8 f32 tf32 tf32",
                                       "sm_100a tcgen05.mma.cta_group::1.kind::tf32 m128n256k8 f32 tf32 tf32",
                                       "sm_80 mma.sync.aligned m16n8k8 f32 tf32 tf32", "sm_90a mma.sync.aligned m16n8k8 f32 tf32 tf32",
                                       "sm_90a mma.sync.aligned m16n8k4 f32 tf32 tf32", "sm_100a mma.sync.aligned m16n8k4 f32 tf32 tf32"};
         return around(rng, parse_instruction(shapes[uniform(rng, 6)]));
       }},
      {"f16 accumulators, 8-bit operands (T-FDPA F=13 / 25, RNE-FP16)",
       [=](Rng& rng, Format& fa, Format& fb) {
         // wgmma and sm_89 fp8 (F = 13), tcgen05 kind::f8f6f4 (every operand pair) and sm_120a fp8
         // (F = 25); C in the accumulator or in the epilogue (f16 schedules have no split-K).
         const int which = static_cast<int>(uniform(rng, 4));
         const Type a = which == 2 ? pick(rng) : fp8(rng), b = which == 2 ? pick(rng) : fp8(rng);
         fa = *format_of(a);
         fb = *format_of(b);
         const char* const shapes[] = {"sm_90a wgmma.mma_async m64n256k32 f16 ", "sm_89 mma.sync.aligned m16n8k32 f16 ",
                                       "sm_100a tcgen05.mma.cta_group::1.kind::f8f6f4 m128n256k32 f16 ",
                                       "sm_120a mma.sync.aligned m16n8k32 f16 "};
         return KernelSchedule::chain(parse_instruction(shapes[which] + type_name(a) + " " + type_name(b)),
                                      uniform(rng, 6) == 0 ? CPlacement::epilogue : CPlacement::accumulator);
       },
       true, false},
      {"f16 accumulators, f16 operands (T-FDPA F=23 .. 25, RNE-FP16)",
       [=](Rng& rng, Format& fa, Format& fb) {
         fa = fb = Format::float16;
         const char* const shapes[] = {"sm_90a wgmma.mma_async m64n64k16 f16 f16 f16", "sm_100a tcgen05.mma.cta_group::1.kind::f16 m128n256k16 f16 f16 f16",
                                       "sm_90a mma.sync.aligned m16n8k16 f16 f16 f16", "sm_120a mma.sync.aligned m16n8k16 f16 f16 f16",
                                       "sm_80 mma.sync.aligned m16n8k16 f16 f16 f16", "sm_75 mma.sync.aligned m16n8k8 f16 f16 f16",
                                       "sm_70 mma.sync.aligned m8n8k4 f16 f16 f16", "sm_90a mma.sync.aligned m16n8k8 f16 f16 f16"};
         return KernelSchedule::chain(parse_instruction(shapes[uniform(rng, 8)]),
                                      uniform(rng, 6) == 0 ? CPlacement::epilogue : CPlacement::accumulator);
       },
       false},
      {"compiler-emulated fp8 mma.sync, sm_90a / sm_100a (b.9: 2 x HMMA + add)",
       [=](Rng& rng, Format& fa, Format& fb) {
         // m16n8k32 (two HMMA.16816, L = 16) and m16n8k16 (two HMMA.1688, L = 8), f32 or f16
         // accumulators; f32 ones also with split-K.
         const Type a = fp8(rng), b = fp8(rng);
         fa = *format_of(a);
         fb = *format_of(b);
         const bool f16 = uniform(rng, 2) != 0;
         const std::string ins = std::string(uniform(rng, 2) ? "sm_90a" : "sm_100a") + " mma.sync.aligned " +
                                 (uniform(rng, 2) ? "m16n8k32 " : "m16n8k16 ") + (f16 ? "f16 " : "f32 ") + type_name(a) + " " +
                                 type_name(b);
         if (f16) return KernelSchedule::chain(parse_instruction(ins), uniform(rng, 6) == 0 ? CPlacement::epilogue : CPlacement::accumulator);
         return around(rng, parse_instruction(ins));
       },
       false},
  };
}

class FAST_PATH_SUITE : public ::testing::TestWithParam<std::size_t> {};

TEST_P(FAST_PATH_SUITE, EveryPathEqualsTheReferenceEngine) {
  const Family fam = families()[GetParam()];
  const std::vector<GemmPath> paths = fast_paths();
  Rng rng(0x5EED0000u + GetParam());
  std::size_t cases = 0, mismatches = 0;
  std::size_t per_generator[kGenerators] = {};
  std::vector<GemmPathStats> total(paths.size());
  for (std::size_t n = 0; cases < kCases; ++n) {
    const auto g = static_cast<Generator>(n % kGenerators);
    const Problem pr = draw(rng, fam, g);
    const GemmOperands ops = pr.operands();
    GemmPathStats ref_stats;
    const std::vector<std::uint32_t> want = gemm(pr.schedule, ops, {1, GemmPath::reference, &ref_stats});
    ASSERT_EQ(ref_stats.reference_outputs, pr.M * pr.N);
    for (std::size_t pi = 0; pi < paths.size(); ++pi) {
      const GemmPath path = paths[pi];
      GemmPathStats st;
      const std::vector<std::uint32_t> got = gemm(pr.schedule, ops, {1, path, &st});
      ASSERT_EQ(st.reference_outputs, 0u) << to_string(path) << " did not take the fast path: " << pr.schedule.name();
      total[pi].exact += st.exact;
      total[pi].truncating += st.truncating;
      total[pi].special += st.special;
      total[pi].fp16 += st.fp16;
      for (std::size_t i = 0; i < want.size(); ++i) {
        if (got[i] != want[i] && ++mismatches <= 5) {
          ADD_FAILURE() << to_string(path) << " " << pr.schedule.name() << " generator " << kGeneratorNames[g] << " M=" << pr.M
                        << " N=" << pr.N << " K=" << pr.K << " output (" << i / pr.N << ", " << i % pr.N << "): 0x"
                        << std::hex << got[i] << ", reference 0x" << want[i] << std::dec;
        }
      }
    }
    if (fast::cpu_has_avx2()) {
      for (const fast::Avx2UnitSums sums : {fast::Avx2UnitSums::int32, fast::Avx2UnitSums::float32}) {
        std::vector<std::uint32_t> got;
        ASSERT_TRUE(detail::fast_gemm(pr.schedule, ops, fast::avx2_kernels(sums), 1, nullptr, got));
        for (std::size_t i = 0; i < want.size(); ++i) {
          if (got[i] != want[i] && ++mismatches <= 5) {
            ADD_FAILURE() << "avx2 with " << (sums == fast::Avx2UnitSums::float32 ? "float32" : "int32") << " sums "
                          << pr.schedule.name() << " generator " << kGeneratorNames[g] << " M=" << pr.M << " N=" << pr.N
                          << " K=" << pr.K << " output (" << i / pr.N << ", " << i % pr.N << "): 0x" << std::hex
                          << got[i] << ", reference 0x" << want[i] << std::dec;
          }
        }
      }
    }
    cases += want.size();
    per_generator[g] += want.size();
  }
  std::printf("[ fast path ] %-58s %8zu cases x %zu paths%s, %zu mismatches\n", fam.name.c_str(), cases, paths.size(),
              fast::cpu_has_avx2() ? " and both AVX2 sum variants" : "", mismatches);
  for (std::size_t pi = 0; pi < paths.size(); ++pi) {
    std::printf("[ fast path ]   %-9s output steps: %llu exact, %llu truncating (%llu fp16), %llu special\n",
                std::string(to_string(paths[pi])).c_str(), static_cast<unsigned long long>(total[pi].exact),
                static_cast<unsigned long long>(total[pi].truncating), static_cast<unsigned long long>(total[pi].fp16),
                static_cast<unsigned long long>(total[pi].special));
    // Each route of each path's kernels was taken: the exact tier, the truncating tier, the
    // special handling. Where the AVX512-FP16 form runs (F <= 13 on such CPUs) it takes every
    // tile, in place of the exact tier: then the fp32 form it falls back to must have run too.
    if (paths[pi] != GemmPath::avx512) {
      EXPECT_EQ(total[pi].fp16, 0u) << to_string(paths[pi]) << ": only the AVX-512 kernels have the fp16 form";
    }
    if (total[pi].fp16 > 0) {
      EXPECT_GT(total[pi].truncating, total[pi].fp16) << to_string(paths[pi]) << ": the fp32 fallback of the fp16 form";
    } else if (paths[pi] == GemmPath::avx512 ? fam.avx512_exact_tier
                                             : paths[pi] != GemmPath::avx2 || fam.avx2_exact_tier) {
      EXPECT_GT(total[pi].exact, 0u) << to_string(paths[pi]);
    } else {
      EXPECT_EQ(total[pi].exact, 0u) << to_string(paths[pi]) << " has no exact tier for this family";
    }
    EXPECT_GT(total[pi].truncating, 0u) << to_string(paths[pi]);
    EXPECT_GT(total[pi].special, 0u) << to_string(paths[pi]);
  }
  std::fflush(stdout);
  EXPECT_EQ(mismatches, 0u);
  for (std::size_t g = 0; g < kGenerators; ++g) EXPECT_GT(per_generator[g], 0u) << kGeneratorNames[g];
}

std::string family_test_name(const ::testing::TestParamInfo<std::size_t>& info) {
  static const char* const names[] = {"Tcgen05Mxf8f6f4", "Sm120Mxf8f6f4", "F8f6f4TFdpa", "Fp8F13Chain",     "HopperPromotion",
                                      "Mxf4Block32",     "Nvfp4Block16",  "F16Bf16F25",  "F16Bf16Sm70To89", "Tf32",
                                      "F16AccNarrow",    "F16AccF16",     "Fp8ViaF16"};
  return names[info.param];
}

INSTANTIATE_TEST_SUITE_P(Families, FAST_PATH_SUITE, ::testing::Range<std::size_t>(0, 13), family_test_name);

#if !defined(BLOCKSCALE_FULL_SWEEP)
// fast_gemm splits the work into tasks of row blocks times strip groups, runs K in chunks, and the
// AVX-512 T-FDPA kernel carries a tile's next bounds pass from one call to the next: every family,
// every generator, on shapes that span several of each (and split-K slices, whose boundaries the
// carried bounds cross), against the reference engine at 1 and 3 threads.
TEST_P(FAST_PATH_SUITE, LargeShapesAcrossTasksAndChunks) {
  const Family fam = families()[GetParam()];
  Rng rng(0x1A26E000u + GetParam());
  std::size_t outputs = 0;
  for (std::size_t n = 0; n < 2 * kGenerators; ++n) {
    const auto g = static_cast<Generator>(n % kGenerators);
    Problem pr = draw(rng, fam, g, Shape::large);
    if (n >= kGenerators && !f16_accumulator(pr.schedule)) pr.schedule = pr.schedule.with_split_k(3);  // f16: no split-K
    const GemmOperands ops = pr.operands();
    const std::vector<std::uint32_t> want = gemm(pr.schedule, ops, {1, GemmPath::reference});
    for (const GemmPath path : fast_paths()) {
      for (const int threads : {1, 3}) {
        GemmPathStats st;
        const std::vector<std::uint32_t> got = gemm(pr.schedule, ops, {threads, path, &st});
        ASSERT_EQ(st.reference_outputs, 0u) << to_string(path) << " did not take the fast path: " << pr.schedule.name();
        std::size_t first = 0;
        while (first < want.size() && got[first] == want[first]) ++first;
        EXPECT_EQ(first, want.size()) << to_string(path) << " threads " << threads << " " << pr.schedule.name() << " generator "
                                      << kGeneratorNames[g] << " M=" << pr.M << " N=" << pr.N << " K=" << pr.K
                                      << ": first differing output " << first;
      }
    }
    outputs += want.size();
  }
  std::printf("[ fast path ] %-58s %8zu outputs of large shapes\n", fam.name.c_str(), outputs);
}

// Problems whose K spans several of fast_gemm's phases (Shape::long_k), one with split-K into two
// slices (each of several phases), at 1 and 3 threads: tiles start and end slices at phase
// boundaries, and their bounds are carried from one phase to the next. With OpenMP, also 3
// threads asked for inside a parallel region of 2 (nested regions are off by default): OpenMP
// then gives each call a team of one, and that thread runs the shares of the two absent ones.
TEST_P(FAST_PATH_SUITE, LongKAcrossPhases) {
  const Family fam = families()[GetParam()];
  Rng rng(0x10C6E000u + GetParam());
  std::size_t outputs = 0;
  for (const Generator g : {kRealistic, kQuantized}) {
    Problem pr = draw(rng, fam, g, Shape::long_k);
    if (g == kQuantized && !f16_accumulator(pr.schedule)) pr.schedule = pr.schedule.with_split_k(2);  // f16: no split-K
    const GemmOperands ops = pr.operands();
    const std::vector<std::uint32_t> want = gemm(pr.schedule, ops, {1, GemmPath::reference});
    for (const GemmPath path : fast_paths()) {
      for (const int threads : {1, 3}) {
        GemmPathStats st;
        EXPECT_EQ(gemm(pr.schedule, ops, {threads, path, &st}), want)
            << to_string(path) << " threads " << threads << " " << pr.schedule.name() << " generator " << kGeneratorNames[g]
            << " M=" << pr.M << " N=" << pr.N << " K=" << pr.K;
        EXPECT_EQ(st.reference_outputs, 0u) << to_string(path) << " did not take the fast path: " << pr.schedule.name();
      }
#if defined(_OPENMP)
      std::vector<std::uint32_t> nested[2];
#pragma omp parallel num_threads(2)
      nested[omp_get_thread_num()] = gemm(pr.schedule, ops, {3, path});
      for (const auto& got : nested) {
        EXPECT_EQ(got, want) << to_string(path) << " 3 threads inside a parallel region " << pr.schedule.name();
      }
#endif
    }
    outputs += want.size();
  }
  std::printf("[ fast path ] %-58s %8zu outputs of long K\n", fam.name.c_str(), outputs);
}

// Quantized tensors through the BlockScaledTensor overload (layouts undone, NVFP4 tensor scales
// applied by the FMUL/FFMA epilogue), every path against the reference, and the bits do not depend
// on the thread count.
TEST(EmulatorFastPath, BlockScaledTensorsAndThreadCounts) {
  Rng rng(99);
  for (const BlockFormat bf : {block_formats::mxfp8_e4m3, block_formats::nvfp4, block_formats::mxfp4}) {
    QuantizeOptions o;
    if (bf == block_formats::nvfp4) o = recipes::nvfp4_transformer_engine();
    const std::int64_t M = 37, N = 70, K = 512;
    const auto qa = quantize(data(rng, M * K, false), {M, K}, KAxis::last, bf, o);
    const auto qb = quantize(data(rng, N * K, true), {N, K}, KAxis::last, bf, o);
    std::vector<std::uint32_t> c(static_cast<std::size_t>(M * N));
    for (auto& x : c) x = std::bit_cast<std::uint32_t>(static_cast<float>(data(rng, 1, false)[0] * 10));
    const CodeMatrix cm(Format::float32, static_cast<std::size_t>(M), static_cast<std::size_t>(N), c);
    const KernelSchedule s = block_scaled_schedule(Arch::sm_100a, bf.element, bf.element, bf.scale, bf.block_size);
    for (const CodeMatrix& cc : {CodeMatrix(), cm}) {
      const std::vector<std::uint32_t> want = gemm(s, qa, qb, cc, {1, GemmPath::reference});
      for (GemmPath path : fast_paths()) {
        for (int threads : {1, 2, 3}) EXPECT_EQ(gemm(s, qa, qb, cc, {threads, path}), want) << to_string(path) << " threads " << threads;
      }
    }
  }
}

// Problems with no rows, no columns or no K (0 x n matrices are present, not absent): every path
// gives what the reference engine gives (no outputs, or C), at 1 and 3 threads, with and without
// split-K, for a T-FDPA and a GST-FDPA schedule.
TEST(EmulatorFastPath, EmptyShapes) {
  const Format e4m3 = Format::float8_e4m3fn, e2m1 = Format::float4_e2m1fn, e8m0 = Format::float8_e8m0fnu;
  for (const Format f : {e4m3, e2m1}) {
    const KernelSchedule base = block_scaled_schedule(Arch::sm_100a, f, f, e8m0, 32);
    for (const auto& [M, N, K] : {std::array<std::size_t, 3>{0, 5, 64}, {3, 0, 64}, {3, 5, 0}, {0, 0, 0}}) {
      const std::size_t blocks = (K + 31) / 32;
      const std::uint8_t one = f == e4m3 ? 0x38 : 0x2;  // 1.0
      const std::vector<std::uint8_t> a(M * K, one), b(K * N, one), sa(M * blocks, 127), sb(blocks * N, 127);
      const std::vector<std::uint32_t> c(M * N, 0x3F800000u);  // 1.0f
      const GemmOperands ops{CodeMatrix(f, M, K, a), CodeMatrix(f, K, N, b), CodeMatrix(e8m0, M, blocks, sa),
                             CodeMatrix(e8m0, blocks, N, sb), CodeMatrix(Format::float32, M, N, c)};
      for (const KernelSchedule& s : {base, base.with_split_k(2)}) {
        const std::vector<std::uint32_t> want = gemm(s, ops, {1, GemmPath::reference});
        ASSERT_EQ(want.size(), M * N);
        for (const GemmPath path : fast_paths()) {
          for (const int threads : {1, 3}) {
            EXPECT_EQ(gemm(s, ops, {threads, path}), want) << to_string(path) << " " << s.name() << " M=" << M << " N=" << N << " K=" << K;
          }
        }
      }
    }
  }
}

// K = 0 runs no instruction, so with C in the accumulator D is C as given, a NaN's payload
// included: the reference engine returns C's codes, and so must every path for f16 accumulators
// (whose fast epilogue once widened C to fp32 and narrowed it back, making NaNs canonical) as for
// f32 ones. With C in the epilogue the f16 HADD makes a NaN canonical on every path.
TEST(EmulatorFastPath, EmptyKReturnsCsCodesWithTheirNaNPayloads) {
  const std::vector<std::uint16_t> c16{0x7E00, 0xFE00, 0x7C01, 0x7FFF, 0xFC00, 0x8000, 0x3C00, 0x0001};
  const std::vector<std::uint32_t> c32{0x7FC00000u, 0xFFC00000u, 0x7F800001u, 0x7FFFFFFFu, 0xFF800000u, 0x80000000u, 0x3F800000u, 1u};
  for (const char* name : {"sm_90a wgmma.mma_async m64n256k32 f16 e4m3 e4m3", "sm_90a mma.sync.aligned m16n8k32 f16 e4m3 e4m3",
                           "sm_90a wgmma.mma_async m64n64k16 f16 f16 f16",
                           "sm_100a tcgen05.mma.cta_group::1.kind::f8f6f4 m128n256k32 f16 e4m3 e4m3",
                           "sm_90a wgmma.mma_async m64n256k32 f32 e4m3 e4m3", "sm_80 mma.sync.aligned m16n8k16 f32 bf16 bf16"}) {
    const Instruction ins = parse_instruction(name);
    const Format f = *format_of(ins.a);
    const bool f16_c = ins.d == Type::f16;
    const bool wide = info(f).storage_bits == 16;
    const std::vector<std::uint8_t> none8;
    const std::vector<std::uint16_t> none16;
    GemmOperands ops;
    ops.a = wide ? CodeMatrix(f, 2, 0, none16) : CodeMatrix(f, 2, 0, none8);
    ops.b = wide ? CodeMatrix(f, 0, 4, none16) : CodeMatrix(f, 0, 4, none8);
    ops.c = f16_c ? CodeMatrix(Format::float16, 2, 4, c16) : CodeMatrix(Format::float32, 2, 4, c32);
    for (const CPlacement placement : {CPlacement::accumulator, CPlacement::epilogue}) {
      const KernelSchedule s = KernelSchedule::chain(ins, placement);
      const std::vector<std::uint32_t> want = gemm(s, ops, {1, GemmPath::reference});
      if (placement == CPlacement::accumulator) {
        for (std::size_t i = 0; i < want.size(); ++i) EXPECT_EQ(want[i], f16_c ? c16[i] : c32[i]) << name << " output " << i;
      }
      for (const GemmPath path : fast_paths()) {
        for (const int threads : {1, 3}) EXPECT_EQ(gemm(s, ops, {threads, path}), want) << to_string(path) << " " << s.name();
      }
    }
  }
}

// C in the epilogue is an fp32 add even without a C matrix (gemm.h: C = 0 then): an output that
// underflows to -0 becomes +0 there (-0 + +0 = +0 under RNE) and stays -0 with C in the
// accumulator. One output of tcgen05 MXFP8: -2^-9 x 2^-9 with scales 2^-127 and 2^-10 is -2^-155,
// on the step's grid (2^(e_zero - F) = 2^-158) but below fp32's least subnormal, so the RZ
// conversion gives the signed zero (numerics.md b.6; this row keeps the sign).
TEST(EmulatorFastPath, EpilogueAddTurnsAnUnderflowedMinusZeroIntoPlusZero) {
  const Format e4m3 = Format::float8_e4m3fn, e8m0 = Format::float8_e8m0fnu;
  std::vector<std::uint8_t> a(32, 0), b(32, 0);
  a[0] = 0x81;  // -2^-9 (the least e4m3 subnormal, negative)
  b[0] = 0x01;  // 2^-9
  const std::vector<std::uint8_t> scale_a{0}, scale_b{117};  // e8m0 2^-127, 2^-10
  const GemmOperands ops{CodeMatrix(e4m3, 1, 32, a), CodeMatrix(e4m3, 32, 1, b), CodeMatrix(e8m0, 1, 1, scale_a),
                         CodeMatrix(e8m0, 1, 1, scale_b), {}};
  const KernelSchedule in_acc = block_scaled_schedule(Arch::sm_100a, e4m3, e4m3, e8m0, 32);
  const KernelSchedule in_epilogue = KernelSchedule::chain(in_acc.instruction, CPlacement::epilogue);
  for (const GemmPath path : fast_paths()) {
    EXPECT_EQ(gemm(in_acc, ops, {1, path}), std::vector<std::uint32_t>{0x80000000u}) << to_string(path);
    EXPECT_EQ(gemm(in_epilogue, ops, {1, path}), std::vector<std::uint32_t>{0u}) << to_string(path);
  }
  EXPECT_EQ(gemm(in_acc, ops, {1, GemmPath::reference}), std::vector<std::uint32_t>{0x80000000u});
  EXPECT_EQ(gemm(in_epilogue, ops, {1, GemmPath::reference}), std::vector<std::uint32_t>{0u});
}

// The AVX-512 kernel for f16 / bf16 / tf32 operands (fast_kernels_avx512.cpp, tfdpa_wide_avx512)
// forms a step's terms in fp32 only when every product's e(a) + e(b) lies within F - 127 .. 126
// (-102 .. 126 here, F = 25), and hands other steps to the plain C++ kernel. bf16 and tf32 GEMMs
// whose products sit at two exponent sums, `top` and `top - gap`, on and around both limits (every
// row of A holds elements at two levels, every column of B at one, so that each tile's bounds
// equal those sums), C zero or near the largest product: every path against the reference engine.
// Either limit one binade further out fails here: products of e(a) + e(b) = 127 overflow fp32, and
// steps whose products all lie at F - 128 need the grid 2^128.
TEST(EmulatorFastPath, WideOperandsAroundTheFloatFormLimits) {
  Rng rng(0x71DE);
  const char* const instructions[] = {"sm_90a wgmma.mma_async m64n256k16 f32 bf16 bf16",
                                      "sm_90a wgmma.mma_async m64n64k8 f32 tf32 tf32"};
  const std::size_t M = 8, N = 64, K = 64;  // two row blocks, two strips, 4 or 8 steps
  struct Levels {
    int top, gap;
  };
  std::vector<Levels> cases;
  for (int top = 123; top <= 128; ++top) {
    for (int gap : {0, 9, 30}) cases.push_back({top, gap});
  }
  for (int low = -105; low <= -99; ++low) {
    for (int gap : {0, 1, 20}) cases.push_back({low + gap, gap});
  }
  std::size_t outputs = 0;
  for (const char* text : instructions) {
    const KernelSchedule schedule = KernelSchedule::chain(parse_instruction(text));
    const Format f = *format_of(schedule.instruction.a);
    // A bf16 code (tf32: the same bits widened below) with e(x) = e, random significand and sign.
    const auto code = [&](int e) {
      const std::uint32_t c = (static_cast<std::uint32_t>(e + 127) << 7) | uniform(rng, 128);
      return (rng() & 1) ? c | 0x8000u : c;
    };
    for (const Levels& lv : cases) {
      for (int rep = 0; rep < 2; ++rep) {
        const int alpha = lv.top / 2, beta = lv.top - alpha;
        std::vector<std::uint32_t> a(M * K), b(K * N), c;
        for (auto& x : a) x = uniform(rng, 16) == 0 ? 0u : code(uniform(rng, 4) == 0 ? alpha - lv.gap : alpha);
        for (auto& x : b) x = uniform(rng, 16) == 0 ? 0u : code(beta);
        if (rep > 0) {  // C: zero, or up to 3 binades either side of the largest products
          c.resize(M * N);
          for (auto& x : c) {
            const int e = std::clamp(lv.top + static_cast<int>(uniform(rng, 7)) - 3, -126, 127);
            x = uniform(rng, 4) == 0 ? 0u
                                     : (static_cast<std::uint32_t>(rng() & 1) << 31) | (static_cast<std::uint32_t>(e + 127) << 23) |
                                           (static_cast<std::uint32_t>(rng()) & 0x7FFFFFu);
          }
        }
        const std::vector<std::uint16_t> a16(a.begin(), a.end()), b16(b.begin(), b.end());
        std::vector<std::uint32_t> a32(M * K), b32(K * N);
        for (std::size_t i = 0; i < a.size(); ++i) a32[i] = (a[i] << 16) | (static_cast<std::uint32_t>(rng()) & 0xFFFFu);
        for (std::size_t i = 0; i < b.size(); ++i) b32[i] = (b[i] << 16) | (static_cast<std::uint32_t>(rng()) & 0xFFFFu);
        const bool tf32 = f == Format::tfloat32;
        const GemmOperands ops{tf32 ? CodeMatrix(f, M, K, a32) : CodeMatrix(f, M, K, a16),
                               tf32 ? CodeMatrix(f, K, N, b32) : CodeMatrix(f, K, N, b16), {}, {},
                               c.empty() ? CodeMatrix() : CodeMatrix(Format::float32, M, N, c)};
        const std::vector<std::uint32_t> want = gemm(schedule, ops, {1, GemmPath::reference});
        for (const GemmPath path : fast_paths()) {
          GemmPathStats st;
          const std::vector<std::uint32_t> got = gemm(schedule, ops, {1, path, &st});
          EXPECT_EQ(st.reference_outputs, 0u) << to_string(path);
          std::size_t first = 0;
          while (first < want.size() && got[first] == want[first]) ++first;
          ASSERT_EQ(first, want.size()) << to_string(path) << " " << text << " products at 2^" << lv.top << " and 2^"
                                        << lv.top - lv.gap << ", C " << (rep > 0 ? "near the top" : "zero") << ": output "
                                        << first << " 0x" << std::hex << got[first] << ", reference 0x" << want[first];
        }
        outputs += want.size();
      }
    }
  }
  std::printf("[ fast path ] wide operands around the float form's limits: %zu outputs x %zu paths\n", outputs, fast_paths().size());
}

// The plain C++ kernels' bare output conversion (fast_kernels_portable.cpp, output_row) skips the
// underflow-zero and RZ-E8M13 fix-ups where a row's e_max >= F - 139: then a nonzero step value, a
// multiple of the grid 2^(e_max - F), is at least 2^-139. Here every output's step value is one
// negative grid unit, -2^(e - 25) (tf32 products 2^e - 2^e - 2^(e - 25), C = 0), for e_max = e from
// F - 152 to F - 136: below 2^-149 it rounds to zero, +0 on Hopper's wgmma (UnderflowZero::positive)
// and -0 on sm_100a; above, it is the subnormal -2^(e - 25). The values that the semantics give,
// and the reference engine, on every path. (Took the bare conversion from F - 150 on, a path gives
// Hopper's -0 at e <= -125.)
TEST(EmulatorFastPath, BareOutputConversionAtItsLowerLimit) {
  const std::size_t M = 4, N = 32, K = 8;  // one tile, one step of L = 8
  // A tf32 code of +-2^e (a normal: -126 <= e <= 127).
  const auto power = [](int e, bool negative) {
    return (negative ? 0x80000000u : 0u) | (static_cast<std::uint32_t>(e + 127) << 23);
  };
  std::size_t outputs = 0;
  for (const char* text : {"sm_90a wgmma.mma_async m64n64k8 f32 tf32 tf32", "sm_100a tcgen05.mma.cta_group::1.kind::tf32 m128n256k8 f32 tf32 tf32"}) {
    const KernelSchedule schedule = KernelSchedule::chain(parse_instruction(text));
    const bool hopper = schedule.instruction.params().underflow_zero == UnderflowZero::positive;
    for (int e = 25 - 152; e <= 25 - 136; ++e) {
      std::vector<std::uint32_t> a(M * K, 0), b(K * N, 0);
      for (std::size_t i = 0; i < M; ++i) {
        a[i * K + 0] = power(-60, false);
        a[i * K + 1] = power(-60, true);
        a[i * K + 2] = power(-60, true);
      }
      for (std::size_t j = 0; j < N; ++j) {
        b[0 * N + j] = power(e + 60, false);
        b[1 * N + j] = power(e + 60, false);
        b[2 * N + j] = power(e + 35, false);
      }
      const GemmOperands ops{CodeMatrix(Format::tfloat32, M, K, a), CodeMatrix(Format::tfloat32, K, N, b), {}, {}, {}};
      const std::uint32_t value = e - 25 < -149 ? (hopper ? 0u : 0x80000000u) : 0x80000000u | (1u << (e - 25 + 149));
      const std::vector<std::uint32_t> want(M * N, value);
      EXPECT_EQ(gemm(schedule, ops, {1, GemmPath::reference}), want) << text << " e_max " << e;
      for (const GemmPath path : fast_paths()) {
        EXPECT_EQ(gemm(schedule, ops, {1, path}), want) << to_string(path) << " " << text << " e_max " << e;
      }
      outputs += want.size();
    }
  }
  std::printf("[ fast path ] bare output conversion at its lower limit: %zu outputs x %zu paths\n", outputs, fast_paths().size());
}

// For F <= 16 (wgmma and sm_89 fp8, F = 13) the plain C++ kernels keep a truncating step, C and
// the output in grid units where the row's conversion is bare (fast_kernels_portable.cpp,
// output_row_units), and scale the sum by 2^(e_max - F) in two exact products, since that power of
// two can lie below fp32's normal range. Here it lies at its lowest, 2^-139: every C is a subnormal
// or has the least normal exponent, e_max = e(C) = -126 wherever the products are zero, and the
// step value is C truncated toward zero to 2^-139 (RZ-E8M13 then keeps it): its magnitude's 10 low
// bits cleared, +0 where nothing is left (an exact zero sum). Lanes 0 and 16 of every row have
// 448 x 448 and 2^-9 x 2^-9 products, which puts every 16-lane vector, so the whole tile, in the
// truncating tier (the AVX-512 kernel's step_output_units then meets the same grid); the other
// lanes have zero products. The values that the semantics give, the reference engine's, on every path.
TEST(EmulatorFastPath, GridUnitsOutputDownToTheLowestGrid) {
  const std::size_t M = 4, N = 32, K = 32;
  const std::uint32_t c_words[16] = {0x400u,      0x3FFu,      0x401u,      0x7FFu,      0x800u,     0x7FFFFFu,
                                     0x7FFC00u,   0x1u,        0x800000u,   0x800001u,   0xFFFFFFu,  0x80000400u,
                                     0x800003FFu, 0x807FFFFFu, 0x80800000u, 0x80FFFFFFu};
  std::vector<std::uint32_t> a(M * K, 0), b(K * N, 0), c(M * N);
  for (std::size_t i = 0; i < M; ++i) {
    a[i * K + 0] = a[i * K + 1] = 0x7E;  // 448
    a[i * K + 2] = a[i * K + 3] = 0x01;  // 2^-9
  }
  for (const std::size_t j : {0, 16}) {
    b[0 * N + j] = b[2 * N + j] = 0x7E;
    b[1 * N + j] = b[3 * N + j] = 0x01;
  }
  for (std::size_t i = 0; i < M * N; ++i) c[i] = c_words[i % 16];
  std::size_t outputs = 0;
  for (const char* text : {"sm_90a wgmma.mma_async m64n64k32 f32 e4m3 e4m3", "sm_89 mma.sync.aligned m16n8k32 f32 e4m3 e4m3"}) {
    const KernelSchedule schedule = KernelSchedule::chain(parse_instruction(text));
    ASSERT_EQ(schedule.instruction.params().F, 13) << text;
    const Format e4m3 = Format::float8_e4m3fn;
    const GemmOperands ops{CodeMatrix(e4m3, M, K, a), CodeMatrix(e4m3, K, N, b), {}, {}, CodeMatrix(Format::float32, M, N, c)};
    const std::vector<std::uint32_t> want = gemm(schedule, ops, {1, GemmPath::reference});
    for (std::size_t i = 0; i < M * N; ++i) {
      if (i % 16 == 0) continue;  // lanes 0 and 16
      const std::uint32_t kept = c[i] & 0x7FFFFC00u;
      ASSERT_EQ(want[i], kept == 0 ? 0u : (c[i] & 0x80000000u) | kept) << "reference, " << text << " output " << i;
    }
    for (const GemmPath path : fast_paths()) {
      GemmPathStats stats;
      EXPECT_EQ(gemm(schedule, ops, {1, path, &stats}), want) << to_string(path) << " " << text;
      EXPECT_GE(stats.truncating, M * N) << to_string(path) << " " << text;  // sm_89: the first of two steps (L = 16)
    }
    outputs += want.size();
  }
  std::printf("[ fast path ] grid-units output down to the grid 2^-139: %zu outputs x %zu paths\n", outputs, fast_paths().size());
}

// The AVX2 kernel's rows convert C to grid units by C times 2^(F - e_max) (c_units_by_product8)
// and the step's value back by one product with 2^(e_max - F) (times_grid8) where e_max >= F - 126,
// so that both powers of two are normal floats; rows below take the plain C++ route. MXFP8
// (F = 25) rows whose e_max is set by the e8m0 scales to each of F - 131 .. F - 123 in every lane,
// with C in every lane at or below e_max (subnormals, zeros of both signs, bits below the grid):
// every path equals the reference engine on both sides of that limit.
TEST(EmulatorFastPath, ScaledRowsAroundTheLargestGridFactor) {
  const std::size_t M = 4, N = 32, K = 32;
  const KernelSchedule schedule = KernelSchedule::chain(parse_instruction(
      "sm_100a tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.block32 m128n256k32 f32 e4m3 e4m3 ue8m0"));
  const int F = schedule.instruction.params().F;
  ASSERT_EQ(F, 25);
  const Format e4m3 = Format::float8_e4m3fn, e8m0 = Format::float8_e8m0fnu;
  // B's elements 1.5; row r of A has 1.0 in its first 32, 16, 8 and 1 k and zeros after. Each
  // term is 1.5 2^F in grid units: row 0's sum, 1.5 2^30, would leave a C of -2^31 (what the
  // conversion gives for an infinite 2^(F - e_max)) at -2^29, inside int32's range, while its true
  // value takes the route for values from 2^30; rows 1-3 stay below 2^30 with any C.
  std::vector<std::uint32_t> elements_a(M * K, 0x00);
  const std::vector<std::uint32_t> elements_b(K * N, 0x3C);
  const std::size_t nonzero[M] = {32, 16, 8, 1};
  for (std::size_t i = 0; i < M; ++i) {
    std::fill_n(elements_a.begin() + static_cast<std::ptrdiff_t>(i * K), nonzero[i], 0x38u);
  }
  Rng rng(0xE3A5u);
  std::size_t outputs = 0;
  for (int emax = F - 131; emax <= F - 123; ++emax) {
    // e(a) + e(b) + the scales' exponents = emax per product: A's scales 2^-53, B's 2^(emax + 53).
    const std::vector<std::uint32_t> sa(M, 127 - 53), sb(N, static_cast<std::uint32_t>(127 + emax + 53));
    for (int round = 0; round < 8; ++round) {
      std::vector<std::uint32_t> c(M * N);
      for (std::size_t i = 0; i < M * N; ++i) {
        const std::uint32_t sign = static_cast<std::uint32_t>(rng() & 1u) << 31;
        const int e = emax - static_cast<int>(rng() % 32);  // C's exponent: e_max .. e_max - 31
        const std::uint32_t fraction = static_cast<std::uint32_t>(rng()) & 0x7FFFFFu;
        // A normal C keeps its exponent; below 2^-126 the pattern is the subnormal of that fraction.
        c[i] = sign | (e >= -126 ? (static_cast<std::uint32_t>(e + 127) << 23) | fraction
                                 : (fraction | 0x800000u) >> (-126 - e));
        if (i % 16 == 0) c[i] = sign;  // +-0
        if (i % 16 == 1) c[i] = sign | 1u;  // the least subnormal
      }
      const GemmOperands ops{CodeMatrix(e4m3, M, K, elements_a), CodeMatrix(e4m3, K, N, elements_b),
                             CodeMatrix(e8m0, M, 1, sa), CodeMatrix(e8m0, 1, N, sb), CodeMatrix(Format::float32, M, N, c)};
      const std::vector<std::uint32_t> want = gemm(schedule, ops, {1, GemmPath::reference});
      for (const GemmPath path : fast_paths()) {
        EXPECT_EQ(gemm(schedule, ops, {1, path}), want) << to_string(path) << " e_max F - " << F - emax << " round " << round;
      }
      outputs += want.size();
    }
  }
  std::printf("[ fast path ] scaled rows around the largest grid factor: %zu outputs x %zu paths\n", outputs,
              fast_paths().size());
}

// GST-FDPA (kind::mxf4, F = 35, e8m0 scales) with the group terms' exponent e(alpha) + e(beta) =
// e_max swept from F - 215 to F - 115. The AVX2 kernel converts a row's step values by a mask on
// the doubles' fractions, which is RZ-FP32 only for values of 0 or at least 2^-126: its truncating
// tier needs e_max >= F - 126 (then a nonzero value is a multiple of 2^(e_max - F) >= 2^-126), its
// exact tier tests the values, and the rows outside take the plain C++ route. Below e_max = -147
// a group term p_g 2^e_max (p_g a multiple of 1/4) has bits under fp32's least subnormal 2^-149,
// so a row let through either test rounds where RZ truncates. Even rounds give C = 0 or C within
// 8 binades of e_max (the exact tier); odd rounds scale A's second block 2^-34 below its first and
// also give C 13 to 43 binades below e_max (the truncating tier). In row 3 the first block cancels,
// so that the truncated terms of the second block make values below 2^-126 with bits down to the
// grid 2^(e_max - F): a limit moved below F - 149 lets them through. Both tiers must be taken, and
// give the reference engine's bits.
TEST(EmulatorFastPath, GstRowsAroundTheLeastNormalGrid) {
  const std::size_t M = 4, N = 16, K = 64;
  const KernelSchedule schedule = KernelSchedule::chain(parse_instruction(
      "sm_100a tcgen05.mma.cta_group::1.kind::mxf4.block_scale.block32 m128n256k64 f32 e2m1 e2m1 ue8m0"));
  const int F = schedule.instruction.params().F;
  ASSERT_EQ(F, 35);
  const Format e2m1 = Format::float4_e2m1fn, e8m0 = Format::float8_e8m0fnu;
  const std::size_t blocks = K / 32;
  Rng rng(0x65A1u);
  std::vector<GemmPathStats> total(fast_paths().size());
  std::size_t outputs = 0;
  for (int emax = F - 215; emax <= F - 115; ++emax) {
    const int ea = emax / 2, eb = emax - ea;  // each in -90 .. -40: e8m0 codes 37 .. 87
    const std::vector<std::uint32_t> sb(blocks * N, static_cast<std::uint32_t>(127 + eb));
    for (int round = 0; round < 2; ++round) {
      // Odd rounds: A's second block scaled 2^-34 below its first (groups 34 binades apart).
      std::vector<std::uint32_t> sa(M * blocks, static_cast<std::uint32_t>(127 + ea));
      for (std::size_t i = 0; round == 1 && i < M; ++i) sa[i * blocks + 1] -= 34;
      std::vector<std::uint32_t> a(M * K), b(K * N), c(M * N);
      for (auto& x : a) x = static_cast<std::uint32_t>(rng() % 16);
      for (auto& x : b) x = static_cast<std::uint32_t>(rng() % 16);
      // Row 3's first block cancels (a[k + 1] = -a[k], b[k + 1] = b[k]): its groups keep e_max at
      // their scales' exponents while adding nothing, so the row's value is the second block's
      // terms truncated to the grid and C, below 2^-126 where e_max is low enough.
      for (std::size_t k = 0; k < 32; k += 2) {
        a[3 * K + k + 1] = a[3 * K + k] ^ 0x8u;
        for (std::size_t j = 0; j < N; ++j) b[(k + 1) * N + j] = b[k * N + j];
      }
      for (std::size_t i = 0; i < M * N; ++i) {
        const std::uint32_t sign = static_cast<std::uint32_t>(rng() & 1u) << 31;
        const bool far = round == 1 && rng() % 2 == 0;
        const int e = emax - (far ? 13 + static_cast<int>(rng() % 31) : static_cast<int>(rng() % 9));
        const std::uint32_t fraction = static_cast<std::uint32_t>(rng()) & 0x7FFFFFu;
        // A normal C keeps its exponent; below 2^-126 the pattern is the subnormal of that fraction.
        c[i] = e < -149 ? sign
                        : sign | (e >= -126 ? (static_cast<std::uint32_t>(e + 127) << 23) | fraction
                                            : (fraction | 0x800000u) >> (-126 - e));
        if (i % 8 == 0) c[i] = sign;  // +-0
      }
      const GemmOperands ops{CodeMatrix(e2m1, M, K, a), CodeMatrix(e2m1, K, N, b), CodeMatrix(e8m0, M, blocks, sa),
                             CodeMatrix(e8m0, blocks, N, sb), CodeMatrix(Format::float32, M, N, c)};
      const std::vector<std::uint32_t> want = gemm(schedule, ops, {1, GemmPath::reference});
      for (std::size_t p = 0; p < fast_paths().size(); ++p) {
        GemmPathStats stats;
        EXPECT_EQ(gemm(schedule, ops, {1, fast_paths()[p], &stats}), want)
            << to_string(fast_paths()[p]) << " e_max F - " << F - emax << " round " << round;
        total[p].exact += stats.exact;
        total[p].truncating += stats.truncating;
      }
      outputs += want.size();
    }
  }
  for (std::size_t p = 0; p < fast_paths().size(); ++p) {
    EXPECT_GT(total[p].exact, 0u) << to_string(fast_paths()[p]);
    EXPECT_GT(total[p].truncating, 0u) << to_string(fast_paths()[p]);
  }
  std::printf("[ fast path ] GST rows around the least normal grid: %zu outputs x %zu paths\n", outputs, fast_paths().size());
}

// For F > 15 (tcgen05 fp8, F = 25) the plain C++ kernels form a truncating step's value in grid
// units in int32 where it fits (fast_kernels_portable.cpp, output_row_int32): C in grid units
// (shifted left where its lowest bit lies above the grid) plus the runs of 16 terms, each add
// checked, |T| < 2^30, then RZ to 24 bits and the scale 2^(e_max - F). One step of 32 e4m3
// products per output (grid 2^-9 where 448 x 448 sets e_max = 16, so each such product is
// 102,760,448 grid units), B = 448 in lanes 0-14, random finite codes in lanes 16-30, and in lanes
// 15 and 31 C = 2^40, whose grid truncates the products: every 16-lane vector of every row takes
// the truncating tier. Per row:
//   0: A = 448 throughout: each run of 16 fits int32 (2^30.6), their sum (2^31.6) overflows it;
//   1: A = 448 at 20 k and 256 at one, C = 2^16 - 2^-3: T = 2^31 - 64, which fits int32 but not
//      the bound 2^30 (its float, 2^31, would leave int32's range in the RZ step's comparison);
//   2: A = 448 at 10 k, -2^-9 at one, and C = -(2^17 - 2^-7), whose lowest bit lies two binades
//      above the grid: T just below 2^30, with 30 significant bits for RZ;
//   3: random finite codes, and C words of every kind: zeros, subnormals, both signs, e(C) = 15.
// Rows 0 and 1 must take the double route: without the overflow check row 0 wraps, without the
// bound row 1 gives 2^31 instead of RZ's 2^31 - 128 (times 2^-9). The reference engine's bits on
// every path.
TEST(EmulatorFastPath, StepValuesInInt32AndBeyond) {
  const std::size_t M = 4, N = 32, K = 32;
  const Format e4m3 = Format::float8_e4m3fn;
  constexpr std::uint32_t k448 = 0x7E, kNegTiny = 0x81;  // 448, -2^-9
  const auto random_finite = [](Rng& rng) {  // any e4m3 code but NaN (0x7F, 0xFF)
    return static_cast<std::uint32_t>(rng() % 0x7F) | (rng() % 2 == 0 ? 0u : 0x80u);
  };
  Rng rng(2026112801);
  std::vector<std::uint32_t> a(M * K, 0), b(K * N, k448), c(M * N, 0);
  for (std::size_t k = 0; k < K; ++k) {
    a[0 * K + k] = k448;
    a[1 * K + k] = k < 20 ? k448 : k == 20 ? 0x78u : 0u;  // 0x78: 256
    a[2 * K + k] = k < 10 ? k448 : k == 10 ? kNegTiny : 0u;
    a[3 * K + k] = random_finite(rng);
    for (std::size_t j = 16; j < 31; ++j) b[k * N + j] = random_finite(rng);
  }
  const std::uint32_t c_words[8] = {0x0u, 0x80000000u, 0x1u, 0x807FFFFFu, 0x477FFFFFu, 0xC77FFFFFu, 0x47000001u, 0xC6FFFFFFu};
  for (std::size_t j = 0; j < N; ++j) {
    c[1 * N + j] = 0x477FFFE0u;  // 2^16 - 2^-3
    c[2 * N + j] = 0xC7FFFFFFu;  // -(2^17 - 2^-7): e(C) = 16, lowest bit 2^-7
    c[3 * N + j] = c_words[j % 8];
  }
  for (std::size_t i = 0; i < M; ++i) c[i * N + 15] = c[i * N + 31] = 0x53800000u;  // 2^40
  const KernelSchedule schedule = KernelSchedule::chain(parse_instruction("sm_100a tcgen05.mma.cta_group::1.kind::f8f6f4 m128n256k32 f32 e4m3 e4m3"));
  ASSERT_EQ(schedule.instruction.params().F, 25);
  const GemmOperands ops{CodeMatrix(e4m3, M, K, a), CodeMatrix(e4m3, K, N, b), {}, {}, CodeMatrix(Format::float32, M, N, c)};
  const std::vector<std::uint32_t> want = gemm(schedule, ops, {1, GemmPath::reference});
  for (const GemmPath path : fast_paths()) {
    GemmPathStats stats;
    const std::vector<std::uint32_t> got = gemm(schedule, ops, {1, path, &stats});
    for (std::size_t i = 0; i < M * N; ++i) {
      ASSERT_EQ(got[i], want[i]) << to_string(path) << " row " << i / N << " lane " << i % N;
    }
    EXPECT_EQ(stats.truncating, M * N) << to_string(path);
  }
  std::printf("[ fast path ] step values in int32 and beyond (F = 25): %zu outputs x %zu paths\n", want.size(), fast_paths().size());
}

// The AVX2 kernel sums a step's terms and C in wrapping int32, testing the sum against 2^30 after
// every 16 terms (fast_kernels_portable.cpp, narrow_row_avx2). Its edges, F = 25, one step of 32
// products per output, B = 448 everywhere and 448 x 448 in every row (e_max = 16, grid 2^-9: a
// times 448 is a x 229,376 grid units), partial sums below 2^30 after 16 terms:
//   0: the terms 9,362 x 229,376 and C = 128 (65,536 units): T = 2^31, which wraps to -2^31, whose
//      absolute value is -2^31 again (bit 30 clear, bit 31 set);
//   1: row 0 negated: T = -2^31 without a wrap;
//   2: 4,681 x 229,376 and C = 64: T = 2^30, the least value the test sends on;
//   3: row 2 with C one unit less: T = 2^30 - 1, the largest the int32 route converts.
// Rows 0-2 must take the double route (a test of bit 30 alone lets rows 0 and 1 through); the
// outputs are RZ(T) 2^-9 on every path: 2^22, -2^22, 2^21 and 2^21 - 2^-3.
TEST(EmulatorFastPath, WrappedStepSumsAtTheirLimits) {
  const std::size_t M = 4, N = 32, K = 32;
  const Format e4m3 = Format::float8_e4m3fn;
  // e4m3 codes: 448 0x7E, 416 0x7D, 256 0x78, 224 0x76, 208 0x75, 160 0x72, 24 0x5C, 18 0x59, 1 0x38.
  std::vector<std::uint32_t> a(M * K, 0), b(K * N, 0x7E), c(M * N);
  for (std::size_t k = 0; k < 15; ++k) a[0 * K + k] = 0x78;  // 15 x 256
  a[0 * K + 15] = 0x72;                                      // 160: 4,000 in the first 16 k
  for (std::size_t k = 16; k < 27; ++k) a[0 * K + k] = 0x7E;  // 11 x 448
  a[0 * K + 27] = 0x7D;
  a[0 * K + 28] = 0x59;  // + 416 + 18: 5,362 in the second 16
  for (std::size_t k = 0; k < K; ++k) a[1 * K + k] = a[0 * K + k] == 0 ? 0 : a[0 * K + k] | 0x80u;
  for (std::size_t k = 0; k < 8; ++k) a[2 * K + k] = 0x76;  // 8 x 224
  a[2 * K + 8] = 0x75;                                     // 208: 2,000 in the first 16 k
  for (std::size_t k = 16; k < 21; ++k) a[2 * K + k] = 0x7E;  // 5 x 448
  a[2 * K + 21] = 0x7D;
  a[2 * K + 22] = 0x5C;
  a[2 * K + 23] = 0x38;  // + 416 + 24 + 1: 2,681 in the second 16
  std::copy_n(a.begin() + 2 * K, K, a.begin() + 3 * K);
  const std::uint32_t c_row[M] = {0x43000000u, 0xC3000000u, 0x42800000u, 0x427FFE00u};  // 128, -128, 64, 64 - 2^-9
  const std::uint32_t out_row[M] = {0x4A800000u, 0xCA800000u, 0x4A000000u, 0x49FFFFFFu};
  for (std::size_t i = 0; i < M * N; ++i) c[i] = c_row[i / N];
  const KernelSchedule schedule = KernelSchedule::chain(parse_instruction("sm_100a tcgen05.mma.cta_group::1.kind::f8f6f4 m128n256k32 f32 e4m3 e4m3"));
  ASSERT_EQ(schedule.instruction.params().F, 25);
  const GemmOperands ops{CodeMatrix(e4m3, M, K, a), CodeMatrix(e4m3, K, N, b), {}, {}, CodeMatrix(Format::float32, M, N, c)};
  const std::vector<std::uint32_t> want = gemm(schedule, ops, {1, GemmPath::reference});
  for (std::size_t i = 0; i < M * N; ++i) ASSERT_EQ(want[i], out_row[i / N]) << "output " << i;
  for (const GemmPath path : fast_paths()) EXPECT_EQ(gemm(schedule, ops, {1, path}), want) << to_string(path);
}

// A step whose products are all -0 (-0 times x, -x times +0, or a negative group sum times a zero
// ue4m3 scale), with C = -0 in the accumulator, on rows that keep the sign of a zero result: the
// step's exact sum is zero, and an exact zero sum is +0 (numerics.md b.3), so the output is +0.
// A kernel that starts a sum from C or from the first product keeps -0 (-0 + -0 = -0) and gives
// 0x80000000 (the AVX-512 GST kernel's exact tier did, until 2026-11-24). One tile (4 x 32
// outputs), one instruction of K, every path; each case also with row 1 given products 2^34 or
// more apart, so that the tile takes the truncating tier (its own outputs from the reference).
TEST(EmulatorFastPath, AnExactZeroSumIsPlusZeroWithMinusZeroC) {
  const std::size_t M = 4, N = 32;
  const Format e4m3 = Format::float8_e4m3fn, e2m1 = Format::float4_e2m1fn, e8m0 = Format::float8_e8m0fnu;
  const Format ue4m3 = Format::float8_ue4m3, bf16 = Format::bfloat16, tf32 = Format::tfloat32;
  struct Case {
    const char* instruction;
    Format element;
    std::uint32_t a, b;             // every element of A, of B
    std::uint8_t scale_a, scale_b;  // every block scale (block-scaled rows)
    std::uint32_t big, small;       // element codes for the spread row (e2m1: 1.0; the scales spread)
  };
  const char* const mxf8 = "sm_100a tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.block32 m128n256k32 f32 e4m3 e4m3 ue8m0";
  const char* const nvf4 = "sm_100a tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.block16 m128n256k64 f32 e2m1 e2m1 ue4m3";
  const Case cases[] = {
      {mxf8, e4m3, 0x80, 0x38, 127, 127, 0x7E, 0x01},  // -0 x 1 (spread: 448 and 2^-9)
      {mxf8, e4m3, 0xB8, 0x00, 127, 127, 0, 0},        // -1 x +0 (no spread row: B's zeros)
      {"sm_100a tcgen05.mma.cta_group::1.kind::f8f6f4 m128n256k32 f32 e4m3 e4m3", e4m3, 0x80, 0x38, 0, 0, 0x7E, 0x01},
      {"sm_89 mma.sync.aligned m16n8k32 f32 e4m3 e4m3", e4m3, 0x80, 0x38, 0, 0, 0x7E, 0x01},  // F = 13
      {"sm_100a tcgen05.mma.cta_group::1.kind::f16 m128n256k16 f32 bf16 bf16", bf16, 0x8000, 0x3F80, 0, 0, 0x5D80, 0x2180},
      {"sm_80 mma.sync.aligned m16n8k16 f32 bf16 bf16", bf16, 0x3F80, 0x8000, 0, 0, 0, 0},  // 1 x -0 (no spread row)
      {"sm_100a tcgen05.mma.cta_group::1.kind::tf32 m128n256k8 f32 tf32 tf32", tf32, 0x80000000u, 0x3F800000u, 0, 0,
       0x5D800000u, 0x21800000u},  // 2^60 and 2^-60
      {nvf4, e2m1, 0xA, 0x2, 0x00, 0x38, 0x2, 0x2},  // group sums -16 times the scale product 0 x 1
      {nvf4, e2m1, 0x8, 0x2, 0x38, 0x38, 0x2, 0x2},  // -0 x 1
      {"sm_120a mma.sync.aligned.kind::mxf4nvf4.block_scale.block32 m16n8k64 f32 e2m1 e2m1 ue8m0", e2m1, 0x8, 0x2, 127, 127,
       0x2, 0x2},  // -0 x 1 (spread: e8m0 scales 2^-10 .. 2^10 below)
  };
  std::size_t outputs = 0;
  for (const Case& c : cases) {
    const KernelSchedule schedule = KernelSchedule::chain(parse_instruction(c.instruction));
    ASSERT_EQ(schedule.instruction.params().underflow_zero, UnderflowZero::negative) << c.instruction;  // keeps the sign
    const std::size_t K = static_cast<std::size_t>(schedule.unit_k());
    const bool block_scaled = schedule.instruction.block_scaled();
    const std::size_t blocks = block_scaled ? K / static_cast<std::size_t>(schedule.instruction.block()) : 0;
    for (const bool spread : {false, true}) {
      if (spread && c.big == 0) continue;
      // The case's values are storage words (tf32: fp32 patterns); the matrices take codes.
      const auto code = [&](std::uint32_t word) { return from_storage(c.element, word); };
      std::vector<std::uint32_t> a(M * K, code(c.a)), b(K * N, code(c.b));
      std::vector<std::uint8_t> sa(M * blocks, c.scale_a), sb(blocks * N, c.scale_b);
      if (spread) {
        // Row 1: big x big at k = 0 and small x small at k = 1; for e2m1 the first two groups'
        // scales are 448 and 2^-9 (ue4m3's largest and least) on both sides.
        a[1 * K + 0] = code(c.big);
        a[1 * K + 1] = code(c.small);
        for (std::size_t j = 0; j < N; ++j) {
          b[0 * N + j] = code(c.big);
          b[1 * N + j] = code(c.small);
        }
        if (c.element == e2m1) {
          const bool e8 = c.scale_a == 127;
          const std::uint8_t high = e8 ? 137 : 0x7E, low = e8 ? 117 : 0x01;
          std::fill(a.begin() + 1 * K, a.begin() + 2 * K, code(c.big));
          sa[1 * blocks + 0] = high;
          sa[1 * blocks + 1] = low;
          for (std::size_t j = 0; j < N; ++j) {
            sb[0 * N + j] = high;
            sb[1 * N + j] = low;
          }
        }
      }
      StorageWords wa, wb;
      GemmOperands ops{wa.view(c.element, M, K, a), wb.view(c.element, K, N, b), {}, {}, {}};
      if (block_scaled) {
        const Format scale = c.element == e2m1 && c.scale_a != 127 ? ue4m3 : e8m0;
        ops.scale_a = CodeMatrix(scale, M, blocks, sa);
        ops.scale_b = CodeMatrix(scale, blocks, N, sb);
      }
      const std::vector<std::uint32_t> minus_zero(M * N, 0x80000000u);
      ops.c = CodeMatrix(Format::float32, M, N, minus_zero);
      const std::vector<std::uint32_t> want = gemm(schedule, ops, {1, GemmPath::reference});
      for (std::size_t i = 0; i < M * N; ++i) {
        if (!spread || i / N != 1) {
          ASSERT_EQ(want[i], 0u) << "reference, " << c.instruction << " output " << i;
        }
      }
      if (spread) {
        ASSERT_NE(want[1 * N], 0u) << c.instruction;  // row 1 has a value
      }
      for (const GemmPath path : fast_paths()) {
        GemmPathStats stats;
        EXPECT_EQ(gemm(schedule, ops, {1, path, &stats}), want)
            << to_string(path) << " " << c.instruction << " A 0x" << std::hex << c.a << (spread ? ", spread row" : "");
        if (spread) {
          EXPECT_GE(stats.truncating, N) << to_string(path) << " " << c.instruction;  // row 1's outputs at least
        }
      }
      outputs += want.size();
    }
  }
  std::printf("[ fast path ] exact zero sums with C = -0: %zu outputs x %zu paths\n", outputs, fast_paths().size());
}

// GST-FDPA's exact tier is first proved from each step's scale bounds (the largest and smallest
// scale exponent of a row's or a lane's groups in that step, fast_panels.h), then group by group.
// NVFP4, K = two steps, C = 0: step 0 all zeros with scales 1; in step 1 group 0 is 6 x 6 with
// scales 448 on both sides and group 1 is -0.5 x 0.5 with A's scale 2^-9, and B's scale 2^-9 in
// lanes 8..15 (1 in lanes 0..7). In lanes 8..15 the scale exponents span 8 + 8 .. -6 - 6 (ue4m3's
// least subnormal), beyond F - 8 = 27: the step must truncate (the small term goes, and the RZ
// output keeps the large one), where the exact sum would give one unit less. A bound taken from
// the wrong step or from lane 0 proves the step exact; every path must take the truncating tier
// and give the reference's bits.
TEST(EmulatorFastPath, GstStepBoundsFollowTheStepAndTheLane) {
  const std::size_t M = 4, N = 16, K = 128, blocks = K / 16;
  const Format e2m1 = Format::float4_e2m1fn, ue4m3 = Format::float8_ue4m3;
  std::vector<std::uint8_t> a(M * K, 0), b(K * N, 0), sa(M * blocks, 0x38), sb(blocks * N, 0x38);
  for (std::size_t i = 0; i < M; ++i) {
    for (std::size_t k = 64; k < 80; ++k) a[i * K + k] = 0x7;  // 6.0
    a[i * K + 80] = 0x9;                                       // -0.5
    sa[i * blocks + 4] = 0x7E;                                 // 448
    sa[i * blocks + 5] = 0x01;                                 // 2^-9
  }
  for (std::size_t j = 0; j < N; ++j) {
    for (std::size_t k = 64; k < 80; ++k) b[k * N + j] = 0x7;
    for (std::size_t k = 80; k < 96; ++k) b[k * N + j] = 0x1;  // 0.5
    sb[4 * N + j] = 0x7E;
    if (j >= 8) sb[5 * N + j] = 0x01;
  }
  const GemmOperands ops{CodeMatrix(e2m1, M, K, a), CodeMatrix(e2m1, K, N, b), CodeMatrix(ue4m3, M, blocks, sa),
                         CodeMatrix(ue4m3, blocks, N, sb), {}};
  const KernelSchedule schedule = KernelSchedule::chain(parse_instruction(
      "sm_100a tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.block16 m128n256k64 f32 e2m1 e2m1 ue4m3"));
  const std::vector<std::uint32_t> want = gemm(schedule, ops, {1, GemmPath::reference});
  // Group 0: 16 x 36 x 448^2 = 115,605,504, a float. Lanes 8..15: the grid is 2^(16 - 35) (e_max the
  // scale exponents, 8 + 8), so -2^-20 truncates to 0; the exact sum would round toward zero to
  // 115,605,496. Lanes 0..7: group 1 is -2^-11, on the grid, and the sum rounds to 115,605,496.
  for (std::size_t i = 0; i < M * N; ++i) {
    ASSERT_EQ(want[i], std::bit_cast<std::uint32_t>(i % N >= 8 ? 115605504.0f : 115605496.0f)) << "output " << i;
  }
  for (const GemmPath path : fast_paths()) {
    GemmPathStats stats;
    EXPECT_EQ(gemm(schedule, ops, {1, path, &stats}), want) << to_string(path);
    EXPECT_EQ(stats.truncating, M * N) << to_string(path);  // step 1 of the one tile
  }
}

// The other half of that proof: where the step's bounds fail, the groups' may still prove the step
// exact. NVFP4, one step, C = 0: A's four groups take the scales 448, 2^-6, 448, 2^-6 and B's the
// reverse, so every group's scale exponents add up to 8 - 6 = 2, while the step's bounds span
// 8 + 8 .. -6 - 6, beyond F - 8 = 27. Every path must take the exact tier (a kernel that skips the
// group bounds truncates: the same bits, but at the truncating tier's cost).
TEST(EmulatorFastPath, GstGroupBoundsProveWhatTheStepBoundsCannot) {
  const std::size_t M = 4, N = 16, K = 64, blocks = K / 16;
  const Format e2m1 = Format::float4_e2m1fn, ue4m3 = Format::float8_ue4m3;
  Rng rng(0x6B0Du);
  std::vector<std::uint8_t> a(M * K), b(K * N), sa(M * blocks), sb(blocks * N);
  for (auto& x : a) x = static_cast<std::uint8_t>(rng() % 16);
  for (auto& x : b) x = static_cast<std::uint8_t>(rng() % 16);
  for (std::size_t g = 0; g < blocks; ++g) {
    const std::uint8_t high = 0x7E, low = 0x08;  // 448 = 1.75 x 2^8 and 2^-6
    for (std::size_t i = 0; i < M; ++i) sa[i * blocks + g] = g % 2 == 0 ? high : low;
    for (std::size_t j = 0; j < N; ++j) sb[g * N + j] = g % 2 == 0 ? low : high;
  }
  const GemmOperands ops{CodeMatrix(e2m1, M, K, a), CodeMatrix(e2m1, K, N, b), CodeMatrix(ue4m3, M, blocks, sa),
                         CodeMatrix(ue4m3, blocks, N, sb), {}};
  const KernelSchedule schedule = KernelSchedule::chain(parse_instruction(
      "sm_100a tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.block16 m128n256k64 f32 e2m1 e2m1 ue4m3"));
  const std::vector<std::uint32_t> want = gemm(schedule, ops, {1, GemmPath::reference});
  for (const GemmPath path : fast_paths()) {
    GemmPathStats stats;
    EXPECT_EQ(gemm(schedule, ops, {1, path, &stats}), want) << to_string(path);
    EXPECT_EQ(stats.exact, M * N) << to_string(path);
  }
}

// The special-value table of special_values_test.cpp (every class of A, B and C: +-0, subnormal,
// normal, max, +-Inf, NaN) on the GEMM paths: output (i, j) of one instruction's K has A's class i
// and B's class j at k = 1, C's class (i + j + t) mod 9 for t = 0..8, so that every triple occurs;
// the other elements zeros, or -0 times normals (all-(-0) steps), or negatives times normals; and
// for block-scaled rows every scale class (1, the least, the largest, zero for ue4m3, NaN) on
// either side. Every path against the reference engine, which special_values_test.cpp holds to the
// rules of b.7. Random families rarely build these combinations: they missed that the AVX-512 GST
// kernel kept -0 + -0 for a step of negative groups with a zero scale and C = -0, which the third
// background catches here (as AnExactZeroSumIsPlusZeroWithMinusZeroC does).
TEST(EmulatorFastPath, EveryClassCombinationOnEveryPath) {
  using testing::Cls;
  using testing::code_of;
  const char* const instructions[] = {
      "sm_100a tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.block32 m128n256k32 f32 e4m3 e4m3 ue8m0",
      "sm_100a tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.block32 m128n256k32 f32 e5m2 e2m3 ue8m0",
      "sm_120a mma.sync.aligned.kind::mxf8f6f4.block_scale.block32 m16n8k32 f32 e3m2 e2m1 ue8m0",
      "sm_100a tcgen05.mma.cta_group::1.kind::f8f6f4 m128n256k32 f32 e5m2 e4m3",
      "sm_100a tcgen05.mma.cta_group::1.kind::f8f6f4 m128n256k32 f16 e4m3 e2m1",
      "sm_100a tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.block16 m128n256k64 f32 e2m1 e2m1 ue4m3",
      "sm_100a tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.block16 m128n256k64 f32 e2m1 e2m1 ue8m0",
      "sm_120a mma.sync.aligned.kind::mxf4.block_scale.block32 m16n8k64 f32 e2m1 e2m1 ue8m0",
      "sm_90a wgmma.mma_async m64n64k32 f32 e4m3 e5m2",
      "sm_90a wgmma.mma_async m64n64k32 f16 e5m2 e5m2",
      "sm_89 mma.sync.aligned m16n8k32 f32 e4m3 e4m3",
      "sm_90a mma.sync.aligned m16n8k32 f32 e5m2 e4m3",
      "sm_100a mma.sync.aligned m16n8k32 f16 e4m3 e4m3",
      "sm_90a wgmma.mma_async m64n64k16 f32 bf16 bf16",
      "sm_100a tcgen05.mma.cta_group::1.kind::f16 m128n256k16 f16 f16 f16",
      "sm_75 mma.sync.aligned m16n8k8 f32 f16 f16",
      "sm_100a tcgen05.mma.cta_group::1.kind::tf32 m128n256k8 f32 tf32 tf32",
  };
  const auto classes_of = [&](Format f) {
    std::vector<std::uint32_t> codes;
    for (const Cls c : testing::kClasses) {
      if (const auto x = code_of(f, c)) codes.push_back(*x);
    }
    return codes;
  };
  std::size_t outputs = 0, bad = 0;
  for (const char* text : instructions) {
    const KernelSchedule schedule = KernelSchedule::chain(parse_instruction(text));
    const Instruction& ins = schedule.instruction;
    const Format fa = *format_of(ins.a), fb = *format_of(ins.b), acc = accumulator_format(ins.params().rounding);
    const std::vector<std::uint32_t> ra = classes_of(fa), cb = classes_of(fb), cc = classes_of(acc);
    const std::size_t M = ra.size(), N = cb.size(), K = static_cast<std::size_t>(ins.k);
    // Scale pairs (A's, B's): every class of the scale format on one side, 1 on the other.
    std::vector<std::pair<std::uint8_t, std::uint8_t>> scale_pairs{{0, 0}};
    std::size_t blocks = 0;
    if (ins.block_scaled()) {
      blocks = K / static_cast<std::size_t>(ins.block());
      const bool e8 = ins.scale_type() == Type::ue8m0;
      const std::uint8_t one = e8 ? 127 : 0x38;
      const std::vector<std::uint8_t> others = e8 ? std::vector<std::uint8_t>{0, 254, 255} : std::vector<std::uint8_t>{0x00, 0x01, 0x7E, 0x7F};
      scale_pairs = {{one, one}};
      for (const std::uint8_t x : others) {
        scale_pairs.emplace_back(x, one);
        scale_pairs.emplace_back(one, x);
      }
    }
    // The other elements of A and B: zeros; A -0 and B normal (every other product -0); A negative
    // and B positive (every other product, and each e2m1 group sum, negative).
    const std::pair<std::uint32_t, std::uint32_t> backgrounds[] = {
        {0u, 0u}, {*code_of(fa, Cls::neg_zero), *code_of(fb, Cls::normal)}, {*code_of(fa, Cls::neg_normal), *code_of(fb, Cls::normal)}};
    for (const auto& [scale_a, scale_b] : scale_pairs) {
      for (const auto& [background, b_background] : backgrounds) {
        for (std::size_t t = 0; t < cc.size(); ++t) {
          std::vector<std::uint32_t> a(M * K, background), b(K * N, b_background), c(M * N);
          for (std::size_t i = 0; i < M; ++i) a[i * K + 1] = ra[i];
          for (std::size_t j = 0; j < N; ++j) b[1 * N + j] = cb[j];
          for (std::size_t i = 0; i < M; ++i) {
            for (std::size_t j = 0; j < N; ++j) c[i * N + j] = cc[(i + j + t) % cc.size()];
          }
          StorageWords wa, wb, wc;
          GemmOperands ops{wa.view(fa, M, K, a), wb.view(fb, K, N, b), {}, {}, wc.view(acc, M, N, c)};
          const std::vector<std::uint8_t> sa(M * blocks, scale_a), sb(blocks * N, scale_b);
          if (ins.block_scaled()) {
            const Format fs = *format_of(ins.scale_type());
            ops.scale_a = CodeMatrix(fs, M, blocks, sa);
            ops.scale_b = CodeMatrix(fs, blocks, N, sb);
          }
          const std::vector<std::uint32_t> want = gemm(schedule, ops, {1, GemmPath::reference});
          for (const GemmPath path : fast_paths()) {
            const std::vector<std::uint32_t> got = gemm(schedule, ops, {1, path});
            for (std::size_t i = 0; i < want.size(); ++i) {
              if (got[i] == want[i]) continue;
              if (++bad <= 10) {
                ADD_FAILURE() << to_string(path) << " " << text << ": A 0x" << std::hex << a[(i / N) * K + 1] << " (others 0x"
                              << background << "), B 0x" << cb[i % N] << " (others 0x" << b_background << "), C 0x" << c[i]
                              << ", scales 0x" << int(scale_a)
                              << " / 0x" << int(scale_b) << ": 0x" << got[i] << ", reference 0x" << want[i];
              }
            }
          }
          outputs += want.size();
        }
      }
    }
  }
  std::printf("[ fast path ] class combinations: %zu outputs x %zu paths, %zu mismatches\n", outputs, fast_paths().size(), bad);
  EXPECT_EQ(bad, 0u);
}

// Whether C loses bits to the alignment grid is a question for each output on its own: the fast
// kernels decide a tile's route (exact sums, or the truncating form) from every lane's C. Each
// output's product sum here is 1 (one product 1 x 1, scales 1), so e_max = 0 and the grid is
// 2^-F; C is +0 or 0.5 (on the grid) everywhere but at one output, where it is -2^-(F + 2): the
// truncation makes it -0, the output 1, where an exact addition would round 1 - 2^-(F + 2)
// toward zero to the float below 1. The odd output runs through every position of two row tiles
// and two 32-column strips. A mutation that read the neighbouring lane's C in the portable NVFP4
// kernel's route test survived every other test (the mutation audit of the sixty-seventh session).
TEST(EmulatorFastPath, EachOutputsOwnCDecidesWhetherCIsTruncated) {
  const char* const instructions[] = {
      "sm_100a tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.block32 m128n256k32 f32 e4m3 e4m3 ue8m0",
      "sm_100a tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.block32 m128n256k32 f32 e2m1 e3m2 ue8m0",
      "sm_100a tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.block16 m128n256k64 f32 e2m1 e2m1 ue4m3",
      "sm_100a tcgen05.mma.cta_group::1.kind::mxf4.block_scale.block32 m128n256k64 f32 e2m1 e2m1 ue8m0",
      "sm_100a tcgen05.mma.cta_group::1.kind::f8f6f4 m128n256k32 f32 e5m2 e4m3",
      "sm_90a wgmma.mma_async m64n64k32 f32 e4m3 e4m3",
      "sm_89 mma.sync.aligned m16n8k32 f32 e4m3 e4m3",
      "sm_90a wgmma.mma_async m64n64k16 f32 bf16 bf16",
      "sm_100a tcgen05.mma.cta_group::1.kind::tf32 m128n256k8 f32 tf32 tf32",
  };
  const std::size_t M = 8, N = 64;
  std::size_t outputs = 0, bad = 0;
  for (const char* text : instructions) {
    const KernelSchedule schedule = KernelSchedule::chain(parse_instruction(text));
    const Instruction& ins = schedule.instruction;
    const Format fa = *format_of(ins.a), fb = *format_of(ins.b);
    const std::size_t K = static_cast<std::size_t>(ins.k);
    const std::uint32_t one_a = static_cast<std::uint32_t>(convert(fa, 1.0f)), one_b = static_cast<std::uint32_t>(convert(fb, 1.0f));
    std::vector<std::uint32_t> a(M * K, 0), b(K * N, 0);
    for (std::size_t i = 0; i < M; ++i) a[i * K] = one_a;
    for (std::size_t j = 0; j < N; ++j) b[j] = one_b;
    const std::size_t blocks = ins.block_scaled() ? K / static_cast<std::size_t>(ins.block()) : 0;
    const std::vector<std::uint8_t> scales(std::max(M, N) * blocks, ins.block_scaled() && ins.scale_type() == Type::ue8m0 ? 127 : 0x38);
    const std::uint32_t below_grid = std::bit_cast<std::uint32_t>(-std::ldexp(1.0f, -(ins.params().F + 2)));
    for (const float background : {0.0f, 0.5f}) {
      for (std::size_t odd = 0; odd < M * N; ++odd) {
        std::vector<std::uint32_t> c(M * N, std::bit_cast<std::uint32_t>(background));
        c[odd] = below_grid;
        StorageWords wa, wb, wc;
        GemmOperands ops{wa.view(fa, M, K, a), wb.view(fb, K, N, b), {}, {}, wc.view(Format::float32, M, N, c)};
        if (ins.block_scaled()) {
          const Format fs = *format_of(ins.scale_type());
          ops.scale_a = CodeMatrix(fs, M, blocks, std::span<const std::uint8_t>(scales.data(), M * blocks));
          ops.scale_b = CodeMatrix(fs, blocks, N, std::span<const std::uint8_t>(scales.data(), blocks * N));
        }
        const std::vector<std::uint32_t> want = gemm(schedule, ops, {1, GemmPath::reference});
        // The native rows align C with the products and truncate it; b.9's emulated fp8 mma.sync
        // adds C after the products with a round-to-nearest FADD, where the grid does not apply.
        if (ins.params().algorithm != Algorithm::fp8_via_f16) {
          ASSERT_EQ(want[odd], std::bit_cast<std::uint32_t>(1.0f)) << text;
        }
        for (const GemmPath path : fast_paths()) {
          const std::vector<std::uint32_t> got = gemm(schedule, ops, {1, path});
          for (std::size_t i = 0; i < want.size(); ++i) {
            if (got[i] != want[i] && ++bad <= 10) {
              ADD_FAILURE() << to_string(path) << " " << text << ": C -2^" << -(ins.params().F + 2) << " at output " << odd
                            << ", " << background << " elsewhere: output " << i << " 0x" << std::hex << got[i] << ", reference 0x"
                            << want[i] << std::dec;
            }
          }
        }
        outputs += want.size();
      }
    }
  }
  std::printf("[ fast path ] one output's C below the grid: %zu outputs x %zu paths, %zu mismatches\n", outputs,
              fast_paths().size(), bad);
  EXPECT_EQ(bad, 0u);
}

// f16 accumulators (RNE-FP16) where only a tie or a zero shows a bit of the algorithm, which
// random data rarely reach: one output each, K = one instruction, products listed (the other k
// zero unless stated), against the value the semantics give and the reference engine, on every
// path.
//   * C's exactness bound: 2^8 + p2 with p2 = (1.00390625 * 4) (1.9375 * 4) and C = 2^-8 (1 +
//     2^-10). C lies 16 binades below e_max = 8, so its last bit, 2^-18, is below the grid
//     2^(8 - 25): truncated, C adds 2^-8 and the sum is the tie 2^8 (1 + 249 * 2^-11), which
//     rounds to even, 2^8 (1 + 124 * 2^-10) (0x5C7C); kept, it would round up (0x5C7D). (A
//     bound that took fp16's 10 fraction bits for 9 proves that step exact.)
//   * A subnormal C counts as 2^-14 in e_max (numerics.md b.1): C = 2 * 2^-24, one product 2^-25
//     and the others 2^-48 (f16) or 2^-32 (e5m2, F = 13). e_max = -14 puts the grid at 2^-39
//     (2^-27), below which the small products truncate to 0: the sum is the tie 2.5 * 2^-24,
//     rounded to even 2 * 2^-24 (0x0002). With C's own exponent, -23, they would count (0x0003).
//   * A negative step value below half of fp16's least subnormal: -0 (0x8000) where the row keeps
//     the sign, +0 on the rows with UnderflowZero::positive (wgmma, and mma.sync on sm_90a). On
//     sm_100a's compiler-emulated fp8 mma.sync (b.9) the second HMMA (k = 2) gives -0, and its HADD
//     with C = -0 keeps it.
TEST(EmulatorFastPath, F16AccumulatorTiesAndZeros) {
  struct Case {
    const char* instruction;
    std::vector<std::uint32_t> a, b;  // the first k; the rest (up to K) as a_rest, b_rest
    std::uint32_t a_rest, b_rest;
    int c;  // f16 code, or -1: no C
    std::uint32_t want;
  };
  const Case cases[] = {
      {"sm_90a wgmma.mma_async m64n64k16 f16 f16 f16", {0x4C00, 0x4404}, {0x4C00, 0x47C0}, 0, 0, 0x1C01, 0x5C7C},
      {"sm_90a wgmma.mma_async m64n64k16 f16 f16 f16", {0x0C00}, {0x0800}, 0x0001, 0x0001, 0x0002, 0x0002},
      {"sm_90a wgmma.mma_async m64n256k32 f16 e5m2 e5m2", {0x18}, {0x01}, 0x01, 0x01, 0x0002, 0x0002},
      {"sm_90a wgmma.mma_async m64n64k16 f16 f16 f16", {}, {}, 0x8001, 0x0400, -1, 0x0000},
      {"sm_80 mma.sync.aligned m16n8k16 f16 f16 f16", {}, {}, 0x8001, 0x0400, -1, 0x8000},
      {"sm_90a wgmma.mma_async m64n256k32 f16 e5m2 e5m2", {0x81}, {0x01}, 0, 0, -1, 0x0000},
      {"sm_120a mma.sync.aligned m16n8k32 f16 e5m2 e5m2", {0x81}, {0x01}, 0, 0, -1, 0x8000},
      {"sm_100a mma.sync.aligned m16n8k32 f16 e5m2 e5m2", {0, 0, 0x81}, {0, 0, 0x01}, 0, 0, 0x8000, 0x8000},
  };
  for (const Case& tc : cases) {
    const Instruction ins = parse_instruction(tc.instruction);
    const KernelSchedule s = KernelSchedule::chain(ins);
    const Format fa = *format_of(ins.a), fb = *format_of(ins.b);
    const auto K = static_cast<std::size_t>(ins.k);
    std::vector<std::uint32_t> a(K, tc.a_rest), b(K, tc.b_rest);
    std::copy(tc.a.begin(), tc.a.end(), a.begin());
    std::copy(tc.b.begin(), tc.b.end(), b.begin());
    const std::vector<std::uint32_t> c{tc.c < 0 ? 0u : static_cast<std::uint32_t>(tc.c)};
    const GemmOperands ops{CodeMatrix(fa, 1, K, a), CodeMatrix(fb, K, 1, b), {}, {},
                           tc.c < 0 ? CodeMatrix() : CodeMatrix(Format::float16, 1, 1, c)};
    const std::vector<std::uint32_t> want{tc.want};
    EXPECT_EQ(gemm(s, ops, {1, GemmPath::reference}), want) << tc.instruction << " reference";
    for (const GemmPath path : fast_paths()) {
      GemmPathStats st;
      EXPECT_EQ(gemm(s, ops, {1, path, &st}), want) << tc.instruction << " " << to_string(path);
      EXPECT_EQ(st.reference_outputs, 0u) << tc.instruction << " " << to_string(path);
    }
  }
}

// f16 accumulators enter the fast paths as fp32 patterns and leave as f16 codes (fast_kernels.h:
// widen_f16, narrow_f16), and C in the epilogue is one fp16 HADD on the host FPU (host_add_f16):
// every one of the 65536 C codes through a zero product sum, C in the accumulator (D = C, NaN
// canonical, -0 summed to +0) and in the epilogue (D = HADD(+0, C)); then 10^6 random pairs of step values (one
// product x * y, any f16 codes but NaN payloads kept rare) and C codes through the epilogue add,
// against the reference engine (emulator/arith.h add_f16).
TEST(EmulatorFastPath, F16AccumulatorCodesAndEpilogueAdd) {
  const Instruction ins = parse_instruction("sm_90a wgmma.mma_async m64n64k16 f16 f16 f16");
  const std::size_t M = 256, N = 256, K = 16;
  std::vector<std::uint16_t> c(M * N);
  for (std::size_t i = 0; i < c.size(); ++i) c[i] = static_cast<std::uint16_t>(i);
  {
    const std::vector<std::uint16_t> a(M * K, 0), b(K * N, 0);
    const GemmOperands ops{CodeMatrix(Format::float16, M, K, a), CodeMatrix(Format::float16, K, N, b), {}, {},
                           CodeMatrix(Format::float16, M, N, c)};
    for (const CPlacement where : {CPlacement::accumulator, CPlacement::epilogue}) {
      const KernelSchedule s = KernelSchedule::chain(ins, where);
      const std::vector<std::uint32_t> want = gemm(s, ops, {1, GemmPath::reference});
      for (std::size_t i = 0; i < want.size(); ++i) {
        const bool nan = (i & 0x7C00u) == 0x7C00u && (i & 0x3FFu) != 0;
        // -0: the step's sum +0 (b.3: an exact zero sum is +0), and +0 + -0 = +0.
        const std::uint32_t expected = nan ? 0x7FFFu : i == 0x8000u ? 0u : i;
        ASSERT_EQ(want[i], expected) << "reference, C code 0x" << std::hex << i;
      }
      for (const GemmPath path : fast_paths()) EXPECT_EQ(gemm(s, ops, {1, path}), want) << to_string(path);
    }
  }
  Rng rng(0xF16);
  const auto code = [&]() -> std::uint16_t {
    const std::uint32_t sign = uniform(rng, 2) << 15;
    switch (uniform(rng, 8)) {
      case 0: return static_cast<std::uint16_t>(sign | (uniform(rng, 2) ? 0u : uniform(rng, 1024)));  // zero, subnormal
      case 1: return static_cast<std::uint16_t>(sign | (uniform(rng, 64) == 0 ? 0x7C01u : 0x7C00u));  // Inf, NaN
      case 2: return static_cast<std::uint16_t>(sign | (29u + uniform(rng, 2)) << 10 | uniform(rng, 1024));  // near 65504
      default: return static_cast<std::uint16_t>(sign | (1u + uniform(rng, 30)) << 10 | uniform(rng, 1024));
    }
  };
  // sm_75: one step per instruction (K = L = 8) and the sign of a zero kept (-0 + -0 = -0).
  const KernelSchedule s = KernelSchedule::chain(parse_instruction("sm_75 mma.sync.aligned m16n8k8 f16 f16 f16"), CPlacement::epilogue);
  const std::size_t rows = 64, cols = 64, k8 = 8;
  std::size_t n = 0, bad = 0;
  for (int rep = 0; rep < 250; ++rep) {
    std::vector<std::uint16_t> a(rows * k8, 0), b(k8 * cols, 0), cc(rows * cols);
    for (std::size_t i = 0; i < rows; ++i) a[i * k8] = code();
    for (std::size_t j = 0; j < cols; ++j) b[j] = code();
    for (auto& x : cc) x = code();
    const GemmOperands ops{CodeMatrix(Format::float16, rows, k8, a), CodeMatrix(Format::float16, k8, cols, b), {}, {},
                           CodeMatrix(Format::float16, rows, cols, cc)};
    const std::vector<std::uint32_t> want = gemm(s, ops, {1, GemmPath::reference});
    for (const GemmPath path : fast_paths()) {
      const std::vector<std::uint32_t> got = gemm(s, ops, {1, path});
      for (std::size_t i = 0; i < want.size(); ++i) bad += got[i] != want[i];
    }
    n += want.size();
  }
  std::printf("[ fast path ] f16 epilogue HADD: %zu cases, %zu mismatches\n", n, bad);
  EXPECT_EQ(bad, 0u);
}

// Codes held in 16- and 32-bit words (CodeMatrix accepts any width that holds them) decode as the
// same values as in bytes, on every path.
TEST(EmulatorFastPath, CodeWordWidthsGiveTheSameBits) {
  Rng rng(7);
  const std::size_t M = 9, N = 40, K = 96;
  std::vector<std::uint8_t> a8(M * K), b8(K * N), sa8(M * 3), sb8(3 * N);
  for (auto& x : a8) x = static_cast<std::uint8_t>(rng());
  for (auto& x : b8) x = static_cast<std::uint8_t>(rng());
  for (auto& x : sa8) x = static_cast<std::uint8_t>(120 + uniform(rng, 16));
  for (auto& x : sb8) x = static_cast<std::uint8_t>(120 + uniform(rng, 16));
  const std::vector<std::uint16_t> a16(a8.begin(), a8.end()), b16(b8.begin(), b8.end());
  const std::vector<std::uint32_t> a32(a8.begin(), a8.end()), b32(b8.begin(), b8.end());
  const Format e4m3 = Format::float8_e4m3fn, e8m0 = Format::float8_e8m0fnu;
  const CodeMatrix sa(e8m0, M, 3, sa8), sb(e8m0, 3, N, sb8, Order::col_major);
  const KernelSchedule s = block_scaled_schedule(Arch::sm_100a, e4m3, e4m3, e8m0, 32);
  const GemmOperands bytes{CodeMatrix(e4m3, M, K, a8), CodeMatrix(e4m3, K, N, b8, Order::col_major), sa, sb, {}};
  const GemmOperands halves{CodeMatrix(e4m3, M, K, a16), CodeMatrix(e4m3, K, N, b16, Order::col_major), sa, sb, {}};
  const GemmOperands words{CodeMatrix(e4m3, M, K, a32), CodeMatrix(e4m3, K, N, b32, Order::col_major), sa, sb, {}};
  const std::vector<std::uint32_t> want = gemm(s, bytes, {1, GemmPath::reference});
  for (GemmPath path : fast_paths()) {
    EXPECT_EQ(gemm(s, bytes, {1, path}), want) << to_string(path);
    EXPECT_EQ(gemm(s, halves, {1, path}), want) << to_string(path) << " (16-bit words)";
    EXPECT_EQ(gemm(s, words, {1, path}), want) << to_string(path) << " (32-bit words)";
  }
  // b.9's emulated fp8 mma.sync reads the codes itself (fast_gemm.cpp, b9_operands): A row-major,
  // B column- and row-major, in each width; K = 96 is three m16n8k32 instructions.
  const KernelSchedule b9 = KernelSchedule::chain(parse_instruction("sm_90a mma.sync.aligned m16n8k32 f32 e4m3 e4m3"));
  std::vector<std::uint8_t> b8_rows(K * N);
  for (std::size_t k = 0; k < K; ++k) {
    for (std::size_t j = 0; j < N; ++j) b8_rows[k * N + j] = b8[j * K + k];
  }
  const std::vector<std::uint16_t> b16_rows(b8_rows.begin(), b8_rows.end());
  const std::vector<std::uint32_t> b32_rows(b8_rows.begin(), b8_rows.end());
  const auto plain = [](const GemmOperands& o) { return GemmOperands{o.a, o.b, {}, {}, {}}; };
  const std::vector<std::uint32_t> want_b9 = gemm(b9, plain(bytes), {1, GemmPath::reference});
  for (GemmPath path : fast_paths()) {
    for (const GemmOperands& o : {plain(bytes), plain(halves), plain(words)}) {
      EXPECT_EQ(gemm(b9, o, {1, path}), want_b9) << to_string(path) << " b.9, " << o.a.word_bits() << "-bit words";
    }
    for (const CodeMatrix& b : {CodeMatrix(e4m3, K, N, b8_rows), CodeMatrix(e4m3, K, N, b16_rows), CodeMatrix(e4m3, K, N, b32_rows)}) {
      EXPECT_EQ(gemm(b9, GemmOperands{bytes.a, b, {}, {}, {}}, {1, path}), want_b9)
          << to_string(path) << " b.9, row-major B of " << b.word_bits() << "-bit words";
    }
  }
}

// The host FPU operations of the fast paths against emulator/arith.h, through the schedule that
// uses all three: a promotion GEMM of one k32 instruction per output whose partial sum p is one
// exact product (a 0x00..0x7E times +-b), so FMUL / FFMA / FADD see p, the fp32 scales sa, sb and
// C = acc drawn with every class mixed in (zeros, subnormals, Inf, NaN, values near 1).
TEST(EmulatorFastPath, HostArithmeticEqualsArith) {
  Rng rng(5);
  const auto draw = [&]() -> std::uint32_t {
    switch (uniform(rng, 6)) {
      case 0: return static_cast<std::uint32_t>(rng()) & 0x807FFFFFu;  // subnormal / zero
      case 1: return (static_cast<std::uint32_t>(rng()) & 0x80000000u) | 0x7F800000u | (uniform(rng, 2) ? 0u : 1u);
      case 2: return (static_cast<std::uint32_t>(rng()) & 0x80FFFFFFu) | 0x3F000000u;  // near 1
      default: return static_cast<std::uint32_t>(rng());
    }
  };
  const Instruction ins = parse_instruction("sm_90a wgmma.mma_async m64n256k32 f32 e4m3 e4m3");
  const std::size_t M = 64, N = 64;
  std::size_t n = 0, bad = 0;
  for (int rep = 0; rep < 250; ++rep) {
    std::vector<std::uint8_t> a(M * 32, 0), b(32 * N, 0);
    std::vector<std::uint32_t> sa(M), sb(N), c(M * N);
    for (std::size_t i = 0; i < M; ++i) a[i * 32] = static_cast<std::uint8_t>(uniform(rng, 0x7F));
    for (std::size_t j = 0; j < N; ++j) b[j] = static_cast<std::uint8_t>(uniform(rng, 0x7F) | (uniform(rng, 2) << 7));
    for (auto& x : sa) x = draw();
    for (auto& x : sb) x = draw();
    for (auto& x : c) x = draw();
    const GemmOperands ops{CodeMatrix(Format::float8_e4m3fn, M, 32, a), CodeMatrix(Format::float8_e4m3fn, 32, N, b),
                           CodeMatrix(Format::float32, M, 1, sa), CodeMatrix(Format::float32, 1, N, sb),
                           CodeMatrix(Format::float32, M, N, c)};
    for (const PromotionFma order : {PromotionFma::scale_product, PromotionFma::scale_b_first, PromotionFma::mul_then_add}) {
      const KernelSchedule s = KernelSchedule::hopper_promotion(ins, 1, order);
      const std::vector<std::uint32_t> want = gemm(s, ops, {1, GemmPath::reference});
      for (GemmPath path : fast_paths()) {
        const std::vector<std::uint32_t> got = gemm(s, ops, {1, path});
        for (std::size_t i = 0; i < want.size(); ++i) bad += got[i] != want[i];
      }
      n += want.size();
    }
  }
  std::printf("[ fast path ] host FFMA / FMUL / FADD of the promotion: %zu cases, %zu mismatches\n", n, bad);
  EXPECT_EQ(bad, 0u);
}

// Wide operands that are all subnormal (bf16, tf32; f16 for contrast) times large ones, so that
// every product is a normal float and none is truncated: under a caller's flush-to-zero the
// element decoders (which run on OpenMP threads, before the kernels' IEEE mode) converted a
// subnormal element to 0, and the bf16 decode table, built once at the first call, kept the zero for
// the life of the process. ctest runs each test in a process of its own, so the first GEMM here
// is the table's first use, and it runs under the hostile mode.
TEST(EmulatorFastPath, SubnormalWideElementsUnderTheCallersModeAtFirstUse) {
  const char* const instructions[] = {"sm_80 mma.sync.aligned m16n8k16 f32 bf16 bf16", "sm_80 mma.sync.aligned m16n8k8 f32 tf32 tf32",
                                      "sm_90a wgmma.mma_async m64n8k16 f32 bf16 bf16", "sm_90a wgmma.mma_async m64n8k8 f32 tf32 tf32",
                                      "sm_80 mma.sync.aligned m16n8k16 f32 f16 f16"};
  const std::size_t M = 64, N = 48, K = 64;
  Rng rng(0x5AB);
  std::size_t outputs = 0, mismatches = 0, nonzero = 0;
  for (const char* text : instructions) {
    const Instruction ins = parse_instruction(text);
    const KernelSchedule schedule = KernelSchedule::chain(ins);
    const Format f = *format_of(ins.a);
    // Storage words: A with exponent field 0 and a random significand and sign; B 2^100 (f16: 2^14)
    // times 1.x, either sign.
    const std::uint32_t a_mask = f == Format::bfloat16 ? 0x807Fu : f == Format::float16 ? 0x83FFu : 0x807FE000u;
    const std::uint32_t b_high = f == Format::bfloat16 ? 0x7180u : f == Format::float16 ? 0x7400u : 0x71800000u;
    std::vector<std::uint32_t> a(M * K), b(K * N);
    for (auto& w : a) w = static_cast<std::uint32_t>(rng()) & a_mask;
    for (auto& w : b) w = b_high | (static_cast<std::uint32_t>(rng()) & a_mask);
    const GemmOperands ops{CodeMatrix(f, M, K, a), CodeMatrix(f, K, N, b), {}, {}, {}};
    std::vector<std::vector<std::uint32_t>> hostile_results;
    {
      const test::HostileFpMode hostile;
      for (const GemmPath path : fast_paths()) {
        for (const int threads : {1, 2}) hostile_results.push_back(gemm(schedule, ops, {threads, path}));
      }
    }
    const std::vector<std::uint32_t> want = gemm(schedule, ops, {1, GemmPath::reference});
    for (const std::uint32_t w : want) nonzero += (w & 0x7FFFFFFFu) != 0;
    std::size_t at = 0;
    for (const GemmPath path : fast_paths()) {
      for (const int threads : {1, 2}) {
        const std::vector<std::uint32_t>& got = hostile_results[at++];
        const std::vector<std::uint32_t> after = gemm(schedule, ops, {threads, path});  // the default mode, afterwards
        for (std::size_t i = 0; i < want.size(); ++i) {
          for (const std::uint32_t g : {got[i], after[i]}) {
            if (g != want[i] && ++mismatches <= 5) {
              ADD_FAILURE() << text << " " << to_string(path) << " threads " << threads << " output " << i << ": 0x"
                            << std::hex << g << ", reference 0x" << want[i];
            }
          }
        }
        outputs += 2 * want.size();
      }
    }
  }
  std::printf("[ fast path ] subnormal wide elements at first use: %zu outputs, %zu mismatches\n", outputs, mismatches);
  EXPECT_EQ(mismatches, 0u);
  // Most outputs are nonzero: the subnormal products are the whole sums, not lost beside others.
  EXPECT_GT(nonzero, std::size(instructions) * M * N / 2);
}

// A caller's floating-point mode changes no bit: every path, the reference engine included, and the
// f64 chain give under round-toward-zero with subnormals flushed (a -ffast-math program's start-up
// mode; on AArch64 also default NaNs) what they give in the default mode, and leave the caller's
// mode as it was. The data: every family's problems from every generator (subnormal grids, tiny
// scales, NaN and Inf among them), at one thread and at two.
TEST(EmulatorFastPath, TheCallersFloatingPointModeChangesNoBit) {
  std::vector<GemmPath> paths = fast_paths();
  paths.push_back(GemmPath::reference);
  Rng rng(0xF10A7u);
  std::size_t outputs = 0, mismatches = 0;
  for (const Family& fam : families()) {
    for (int g = 0; g < kGenerators; ++g) {
      const Problem pr = draw(rng, fam, static_cast<Generator>(g));
      const GemmOperands ops = pr.operands();
      for (GemmPath path : paths) {
        for (int threads : {1, 2}) {
          const std::vector<std::uint32_t> want = gemm(pr.schedule, ops, {threads, path});
          std::vector<std::uint32_t> got;
          {
            const test::HostileFpMode hostile;
            const std::uint64_t mode = test::fp_control();
            got = gemm(pr.schedule, ops, {threads, path});
            ASSERT_EQ(test::fp_control(), mode) << to_string(path) << ": the caller's mode was not restored";
          }
          outputs += want.size();
          for (std::size_t i = 0; i < want.size(); ++i) {
            if (got[i] != want[i] && ++mismatches <= 5) {
              ADD_FAILURE() << to_string(path) << " " << pr.schedule.name() << " generator " << kGeneratorNames[g]
                            << " output " << i << ": 0x" << std::hex << got[i] << " under the hostile mode, 0x" << want[i];
            }
          }
        }
      }
    }
  }
  // The f64 chain: products and sums around the subnormal boundary, where a flush or a rounding
  // toward zero shows.
  const Instruction d64 = parse_instruction("sm_90a mma.sync.aligned m16n8k16 f64 f64 f64");
  std::uniform_int_distribution<int> binade(-560, -500);
  std::normal_distribution<double> gauss;
  for (int rep = 0; rep < 200; ++rep) {
    std::vector<double> a(16 * 16), b(16 * 8), c(16 * 8);
    for (double& x : a) x = std::ldexp(gauss(rng), binade(rng));
    for (double& x : b) x = std::ldexp(gauss(rng), binade(rng));
    for (double& x : c) x = std::ldexp(gauss(rng), -1060);
    const std::vector<double> want = mma_f64(d64, a, b, c);
    std::vector<double> got;
    {
      const test::HostileFpMode hostile;
      got = mma_f64(d64, a, b, c);
    }
    for (std::size_t i = 0; i < want.size(); ++i) {
      if (std::bit_cast<std::uint64_t>(got[i]) != std::bit_cast<std::uint64_t>(want[i]) && ++mismatches <= 5) {
        ADD_FAILURE() << "mma_f64 output " << i << ": " << got[i] << " under the hostile mode, " << want[i];
      }
    }
    outputs += want.size();
  }
  std::printf("[ fast path ] the caller's floating-point mode: %zu outputs, %zu mismatches\n", outputs, mismatches);
  EXPECT_EQ(mismatches, 0u);
}

TEST(EmulatorFastPath, PathNamesAndAvailability) {
  EXPECT_TRUE(gemm_path_available(GemmPath::automatic));
  EXPECT_TRUE(gemm_path_available(GemmPath::reference));
  EXPECT_TRUE(gemm_path_available(GemmPath::portable));
  EXPECT_EQ(to_string(GemmPath::avx512), "avx512");
  const Instruction ins = parse_instruction("sm_90a wgmma.mma_async m64n256k32 f32 e4m3 e4m3");
  const std::vector<std::uint8_t> a(32, 0x38), b(32, 0x38);
  const GemmOperands ops{CodeMatrix(Format::float8_e4m3fn, 1, 32, a), CodeMatrix(Format::float8_e4m3fn, 32, 1, b), {}, {}, {}};
  for (GemmPath p : {GemmPath::avx2, GemmPath::avx512}) {
    if (gemm_path_available(p)) {
      EXPECT_EQ(gemm(KernelSchedule::chain(ins), ops, {1, p}), std::vector<std::uint32_t>{0x42000000u});  // 32.0
    } else {
      EXPECT_THROW(gemm(KernelSchedule::chain(ins), ops, {1, p}), std::invalid_argument);
    }
  }
  // Schedules outside the fast paths (here: b.9's emulated fp8 mma.sync inside a promotion
  // interval) run on the reference engine.
  const KernelSchedule promoted =
      KernelSchedule::hopper_promotion(parse_instruction("sm_90a mma.sync.aligned m16n8k32 f32 e4m3 e4m3"), 1);
  const std::vector<std::uint32_t> one{0x3F800000u};
  const GemmOperands pops{ops.a, ops.b, CodeMatrix(Format::float32, 1, 1, one), CodeMatrix(Format::float32, 1, 1, one), {}};
  GemmPathStats st;
  EXPECT_EQ(gemm(promoted, pops, {1, GemmPath::portable, &st}), std::vector<std::uint32_t>{0x42000000u});  // 32
  EXPECT_EQ(st.reference_outputs, 1u);
}
#endif

}  // namespace
}  // namespace blockscale::emulator
