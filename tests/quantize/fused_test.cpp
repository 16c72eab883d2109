// SPDX-License-Identifier: Apache-2.0
// The fused AVX-512 quantization path (src/quantize/fused_avx512.cpp) against the staged generic
// path (QuantizePath::generic: block maxima, scale rule, x * m, the formats library's bulk
// conversion, layout::pack, layout::to_layout), byte for byte: element bytes, scale bytes in the
// layout (padding included: each path writes into a buffer pre-filled with different junk), and
// the tensor scale (G, encode, decode) bit for bit.
//
// The staged path is itself checked against the independent model of oracle.h (oracle_test.cpp);
// here the question is only whether the second implementation agrees with the first everywhere.
//
// Inputs come in strata, each its own tensor (so that NVFP4's per-tensor amax differs per stratum):
// normal values over the whole fp32 range, heavy-tailed values, raw fp32 bit patterns (NaN, Inf,
// subnormals, -0), special values sprinkled into normal blocks, ties at the element format's
// rounding boundaries, all-zero tensors, and block maxima at and next to the points where the
// scale rules change their result (e8m0 powers of two, max_e multiples, torchao EVEN mantissa
// boundaries, e4m3 midpoints of the NVFP4 block scale with the global amax pinned).
//
// Cases: every block format, every preset of `recipes`, every scale rule under every NaN / Inf /
// subnormal policy, every non-stochastic element rounding with every overflow and NaN rule, every
// packing, every byte scale layout, K first and last, K tails with zero padding, batches.
// BLOCKSCALE_QUANTIZE_FULL (the exhaustive build) multiplies the block counts by 16.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "blockscale/formats/detail/bulk_paths.h"
#include "blockscale/formats/presets.h"
#include "blockscale/layout/packing.h"
#include "blockscale/layout/scale_layout.h"
#include "blockscale/quantize.h"
#include "blockscale/quantize/detail/paths.h"

#if defined(_OPENMP)
#include <omp.h>
#endif

#ifndef BLOCKSCALE_QUANTIZE_FULL
#define BLOCKSCALE_QUANTIZE_FULL 0
#endif

#if BLOCKSCALE_QUANTIZE_FULL
#define QUANTIZEFUSED_SUITE QuantizeFusedFull
#else
#define QUANTIZEFUSED_SUITE QuantizeFused
#endif

namespace blockscale {
// How gtest names a failing test's parameter.
void PrintTo(const BlockFormat& f, std::ostream* os) { *os << to_string(f); }
}  // namespace blockscale

namespace {

using namespace blockscale;
using quantize_detail::QuantizePath;

// Blocks per stratum for the recipe presets (8 strata: about a million blocks per recipe in CI);
// the option sweeps use 1/32 of each stratum.
constexpr std::size_t kBlocksPerStratum = std::size_t{1} << (BLOCKSCALE_QUANTIZE_FULL ? 21 : 17);
constexpr std::size_t kSweepDivisor = 32;
// Blocks per row in the stratum tensors: four full chunks of 16 blocks and a partial one.
constexpr std::int64_t kBlocksPerRow = 69;

bool fused_runs_here() { return detail::avx512_available(); }

// ---- Random numbers: one generator per block, seeded from (seed, block), so that the inputs do
// ---- not depend on how generation is split over threads.

struct Rng {
  std::uint64_t s;
  explicit Rng(std::uint64_t seed) : s(seed * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull) {}
  std::uint64_t next() {  // splitmix64
    std::uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  std::uint32_t u32() { return static_cast<std::uint32_t>(next() >> 32); }
  int range(int lo, int hi) { return lo + static_cast<int>(next() % static_cast<std::uint64_t>(hi - lo + 1)); }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1p-53; }  // [0, 1)
  bool chance(int one_in) { return next() % static_cast<std::uint64_t>(one_in) == 0; }
  float sign() { return (next() & 1) ? -1.0f : 1.0f; }
  double normal() {  // Box-Muller
    const double u = 1.0 - uniform(), v = uniform();
    return std::sqrt(-2.0 * std::log(u)) * std::cos(6.283185307179586 * v);
  }
};

float from_bits(std::uint32_t u) { return std::bit_cast<float>(u); }
std::uint32_t to_bits(float f) { return std::bit_cast<std::uint32_t>(f); }

// A non-negative float moved by j ulps (kept within [0, FLT_MAX]).
float ulps(float a, int j) {
  const std::int64_t b = std::clamp<std::int64_t>(static_cast<std::int64_t>(to_bits(a)) + j, 0, 0x7F7FFFFF);
  return from_bits(static_cast<std::uint32_t>(b));
}

float scaled(double v, int e) { return static_cast<float>(std::ldexp(v, e)); }

// fp32 values that the special-value stratum sprinkles in.
const std::uint32_t kSpecialBits[] = {
    0x7FC00000u, 0xFFC00000u, 0x7F800001u, 0xFF800001u, 0x7FFFFFFFu, 0xFFFFFFFFu, 0x7FA00000u,  // NaN
    0x7F800000u, 0xFF800000u,                                                                // Inf
    0x00000000u, 0x80000000u,                                                                // zeros
    0x00000001u, 0x80000001u, 0x007FFFFFu, 0x807FFFFFu, 0x00400000u, 0x00012345u,            // subnormals
    0x00800000u, 0x80800000u, 0x7F7FFFFFu, 0xFF7FFFFFu, 0x7F000000u, 0x3F800000u,            // normals
};

// Everything the generators need to know about the format.
struct FormatFacts {
  BlockFormat format;
  std::vector<float> grid;  // the non-negative finite element values, ascending
  float max_e = 0;
  int emax_e = 0;
  int mantissa_bits = 0;
  bool ue4m3 = false;
  std::vector<float> scale_grid;  // ue4m3 values, ascending (NVFP4 only)
};

FormatFacts facts_of(const BlockFormat& f) {
  FormatFacts r;
  r.format = f;
  const std::uint32_t top = max_finite_code(f.element);
  for (std::uint32_t c = 0; c <= top; ++c) r.grid.push_back(to_float(f.element, c));
  r.max_e = r.grid.back();
  r.emax_e = emax(f.element);
  r.mantissa_bits = info(f.element).mantissa_bits;
  r.ue4m3 = f.scale == Format::float8_ue4m3;
  if (r.ue4m3) {
    for (std::uint32_t c = 0; c <= 0x7E; ++c) r.scale_grid.push_back(to_float(Format::float8_ue4m3, c));
  }
  return r;
}

// A value at a tie of the element grid (or next to one, or on it), non-negative.
float element_tie(Rng& g, const FormatFacts& ff) {
  const std::size_t n = ff.grid.size();
  const std::size_t i = static_cast<std::size_t>(g.range(0, static_cast<int>(n) - 1));
  const float lo = ff.grid[i];
  // Past the largest value: the overflow midpoint max + ulp / 2.
  const float hi = i + 1 < n ? ff.grid[i + 1] : lo + (lo - ff.grid[n - 2]);
  const float mid = static_cast<float>((static_cast<double>(lo) + hi) / 2);  // exact: short mantissas
  switch (g.range(0, 4)) {
    case 0: return lo;
    case 1: return ulps(mid, g.range(-2, 2));
    default: return mid;
  }
}

enum class Stratum {
  normal,
  heavy_tailed,
  random_bits,
  specials,
  element_ties,
  zero_blocks,
  scale_boundaries,
  wide_boundaries,
};
constexpr Stratum kStrata[] = {Stratum::normal,       Stratum::heavy_tailed, Stratum::random_bits,
                               Stratum::specials,     Stratum::element_ties, Stratum::zero_blocks,
                               Stratum::scale_boundaries, Stratum::wide_boundaries};

const char* name_of(Stratum s) {
  switch (s) {
    case Stratum::normal: return "normal";
    case Stratum::heavy_tailed: return "heavy_tailed";
    case Stratum::random_bits: return "random_bits";
    case Stratum::specials: return "specials";
    case Stratum::element_ties: return "element_ties";
    case Stratum::zero_blocks: return "zero_blocks";
    case Stratum::scale_boundaries: return "scale_boundaries";
    case Stratum::wide_boundaries: return "wide_boundaries";
  }
  return "?";
}

// Fills the rest of a block below an amax already placed at x[0] (then shuffled): random
// magnitudes up to amax, random signs, a second element at amax now and then.
void fill_below(Rng& g, float amax, float* x, int bs) {
  x[0] = g.sign() * amax;
  for (int i = 1; i < bs; ++i) {
    const int kind = g.range(0, 7);
    if (kind == 0) {
      x[i] = g.sign() * amax;
    } else if (kind == 1) {
      x[i] = g.sign() * static_cast<float>(amax * std::ldexp(g.uniform(), -g.range(0, 30)));
    } else {
      x[i] = g.sign() * static_cast<float>(amax * g.uniform());
    }
  }
  std::swap(x[0], x[g.range(0, bs - 1)]);
}

// One block of a stratum.
void make_block(Stratum s, const FormatFacts& ff, Rng& g, float* x, std::size_t block) {
  const int bs = ff.format.block_size;
  switch (s) {
    case Stratum::normal: {
      if (g.chance(20)) {
        for (int i = 0; i < bs; ++i) x[i] = g.sign() * 0.0f;
        return;
      }
      const int e = g.range(-150, 127);
      const bool spread = g.chance(4);  // elements far below the block's amax (element underflow)
      for (int i = 0; i < bs; ++i) x[i] = scaled(g.normal(), e - (spread ? g.range(0, 40) : 0));
      return;
    }
    case Stratum::heavy_tailed: {
      const int e = g.range(-60, 60);
      if (g.chance(2)) {  // Cauchy
        for (int i = 0; i < bs; ++i) x[i] = scaled(std::tan(3.141592653589793 * (g.uniform() - 0.5)), e);
      } else {  // log-normal magnitudes
        for (int i = 0; i < bs; ++i) x[i] = g.sign() * scaled(std::exp2(8.0 * g.normal()), e);
      }
      return;
    }
    case Stratum::random_bits: {
      if (g.chance(2)) {
        for (int i = 0; i < bs; ++i) x[i] = from_bits(g.u32());
      } else {  // exponents within a window, so that the block holds more than its amax
        const int top = g.range(0, 255);
        for (int i = 0; i < bs; ++i) {
          const auto ef = static_cast<std::uint32_t>(std::max(0, top - g.range(0, 10)));
          x[i] = from_bits((g.u32() & 0x807FFFFFu) | (ef << 23));
        }
      }
      return;
    }
    case Stratum::specials: {
      const int e = g.chance(8) ? g.range(-150, -120) : g.range(-30, 30);
      for (int i = 0; i < bs; ++i) {
        x[i] = g.chance(6) ? from_bits(kSpecialBits[g.range(0, std::size(kSpecialBits) - 1)]) : scaled(g.normal(), e);
      }
      return;
    }
    case Stratum::element_ties: {
      // amax = max_e * 2^s: the e8m0 rules (FLOOR, RCEIL) then scale by exactly 2^s, so the
      // other elements (grid values, midpoints and their neighbours, times 2^s) land on the element
      // grid's ties. NVFP4: the global amax is pinned at 2688 (block 0), so S_enc = 1, and
      // amax = 6 * 2^s gives the block scale 2^s.
      int e = 0;
      float amax = 0;
      if (ff.ue4m3) {
        e = g.range(-9, 8);
        amax = scaled(6.0, e);
      } else {
        e = g.range(-135, 127 - ff.emax_e);
        amax = scaled(ff.max_e, e);
      }
      x[0] = g.sign() * amax;
      for (int i = 1; i < bs; ++i) x[i] = g.sign() * scaled(element_tie(g, ff), e);
      std::swap(x[0], x[g.range(0, bs - 1)]);
      if (ff.ue4m3 && block == 0) x[0] = 2688.0f;
      return;
    }
    case Stratum::zero_blocks: {
      for (int i = 0; i < bs; ++i) x[i] = g.sign() * 0.0f;
      return;
    }
    case Stratum::scale_boundaries: {
      float amax = 0;
      if (ff.ue4m3) {
        // G pinned at 2688 (block 0): S_enc = 1. The block scale rounds amax * fp32(1/6) (TE) or
        // amax / 6 (torchao) to e4m3: amax next to 6 * (an e4m3 value or midpoint).
        const std::size_t n = ff.scale_grid.size();
        const std::size_t i = static_cast<std::size_t>(g.range(0, static_cast<int>(n) - 1));
        const double lo = ff.scale_grid[i];
        const double hi = i + 1 < n ? ff.scale_grid[i + 1] : 480.0;  // 480: e4m3's overflow
        const double target = g.chance(2) ? lo : (lo + hi) / 2;
        const double te = target / static_cast<double>(1.0f / 6.0f);
        amax = ulps(static_cast<float>(g.chance(2) ? te : target * 6.0), g.range(-3, 3));
        amax = std::min(amax, 2688.0f);
      } else {
        // Near 2^k * c with c an e8m0 rule's breakpoint: 1 (FLOOR, CEIL), max_e (RCEIL, the
        // triton rules) or a torchao EVEN boundary 1 + (2i + 1) / 2^(mbits + 1).
        double c = 1.0;
        switch (g.range(0, 2)) {
          case 0: c = 1.0; break;
          case 1: c = ff.max_e; break;
          default: {
            const int m = ff.mantissa_bits;
            c = 1.0 + (2.0 * g.range(0, (1 << m) - 1) + 1.0) / std::ldexp(1.0, m + 1);
          }
        }
        amax = ulps(scaled(c, g.range(-152, 127 - (c > 2 ? ff.emax_e : 0))), g.range(-3, 3));
      }
      fill_below(g, amax, x, bs);
      if (ff.ue4m3 && block == 0) x[0] = 2688.0f;
      return;
    }
    case Stratum::wide_boundaries: {
      static const float kEdges[] = {FLT_MAX, 0x1p127f, 0x1p-126f, 0x1p-127f, 0x1p-149f, 0x1.fffffcp-127f};
      static const double kConstants[] = {1.0, 1.5, 448.0, 57344.0, 7.5, 28.0, 6.0, 2688.0, 0.75};
      float amax = 0;
      if (g.chance(8)) {
        amax = ulps(kEdges[g.range(0, std::size(kEdges) - 1)], g.range(-2, 2));
      } else {
        const double c = kConstants[g.range(0, std::size(kConstants) - 1)];
        amax = ulps(scaled(c, g.range(-152, 127 - static_cast<int>(std::ceil(std::log2(c))))), g.range(-3, 3));
      }
      fill_below(g, amax, x, bs);
      return;
    }
  }
}

std::vector<float> make_stratum(Stratum s, const FormatFacts& ff, std::size_t blocks, std::uint64_t seed) {
  const auto bs = static_cast<std::size_t>(ff.format.block_size);
  std::vector<float> x(blocks * bs);
  const auto n = static_cast<std::int64_t>(blocks);
#if defined(_OPENMP)
#pragma omp parallel for schedule(static)
#endif
  for (std::int64_t b = 0; b < n; ++b) {
    Rng g(seed ^ (static_cast<std::uint64_t>(b) << 8) ^ static_cast<std::uint64_t>(s));
    make_block(s, ff, g, x.data() + b * static_cast<std::int64_t>(bs), static_cast<std::size_t>(b));
  }
  return x;
}

// ---- The two paths and their comparison.

struct Output {
  std::vector<std::uint8_t> elements, scales;
  TensorScale ts;
};

// Restores the process-wide path on scope exit.
struct PathGuard {
  ~PathGuard() { quantize_detail::set_quantize_path(QuantizePath::automatic); }
};

Output run(QuantizePath p, std::span<const float> x, const BlockScaledDesc& d, const QuantizeOptions& o,
           std::uint8_t junk) {
  const PathGuard guard;
  quantize_detail::set_quantize_path(p);
  Output r{std::vector<std::uint8_t>(d.element_bytes(), junk), std::vector<std::uint8_t>(d.scale_bytes(), junk), {}};
  r.ts = quantize_into(x, d, o, r.elements, r.scales);
  return r;
}

std::string hex(std::uint32_t v) {
  std::ostringstream s;
  s << "0x" << std::hex << v;
  return s.str();
}

// The input at (batch b, row r, k) of a described tensor (zero in the K padding).
float input_at(std::span<const float> x, const BlockScaledDesc& d, std::int64_t b, std::int64_t r, std::int64_t k) {
  const std::int64_t rows = d.rows(), K = d.k();
  if (k >= K) return 0.0f;
  return d.k_axis == KAxis::last ? x[static_cast<std::size_t>((b * rows + r) * K + k)]
                                 : x[static_cast<std::size_t>((b * K + k) * rows + r)];
}

std::string describe_block(std::span<const float> x, const BlockScaledDesc& d, std::int64_t b, std::int64_t r,
                           std::int64_t kb, const Output& generic, const Output& fused) {
  const std::int64_t bs = d.format.block_size;
  std::ostringstream s;
  s << "batch " << b << " row " << r << " block " << kb << "\n";
  std::vector<std::uint8_t> sg(static_cast<std::size_t>(d.batch() * d.rows() * d.k_blocks()));
  std::vector<std::uint8_t> sf(sg.size());
  from_layout(d.scale_layout, d.batch(), d.rows(), d.k_blocks(), generic.scales, sg);
  from_layout(d.scale_layout, d.batch(), d.rows(), d.k_blocks(), fused.scales, sf);
  const auto si = static_cast<std::size_t>((b * d.rows() + r) * d.k_blocks() + kb);
  s << "  scale: generic " << hex(sg[si]) << ", fused " << hex(sf[si]) << "\n";
  const std::size_t rb = d.row_bytes();
  const auto row = static_cast<std::size_t>(b * d.rows() + r);
  std::vector<std::uint8_t> cg(static_cast<std::size_t>(d.k_stored())), cf(cg.size());
  try {
    unpack(d.packing, d.format.element, std::span(generic.elements).subspan(row * rb, rb), cg);
    unpack(d.packing, d.format.element, std::span(fused.elements).subspan(row * rb, rb), cf);
  } catch (const std::exception& e) {
    s << "  (unpack: " << e.what() << ")\n";
  }
  for (std::int64_t i = 0; i < bs; ++i) {
    const std::int64_t k = kb * bs + i;
    const float v = input_at(x, d, b, r, k);
    const auto ki = static_cast<std::size_t>(k);
    s << "  x[" << k << "] = " << v << " (" << hex(to_bits(v)) << "): generic " << hex(cg[ki]) << ", fused "
      << hex(cf[ki]) << (cg[ki] != cf[ki] ? "  <--" : "") << "\n";
  }
  return s.str();
}

// "" when the two outputs are the same bytes; else where they first differ, with the block's
// inputs.
std::string compare(std::span<const float> x, const BlockScaledDesc& d, const Output& generic, const Output& fused) {
  std::ostringstream s;
  const auto same_bits = [](float a, float b) { return to_bits(a) == to_bits(b); };
  if (!same_bits(generic.ts.amax, fused.ts.amax) || !same_bits(generic.ts.encode, fused.ts.encode) ||
      !same_bits(generic.ts.decode, fused.ts.decode)) {
    s << "tensor scale (amax, encode, decode): generic (" << hex(to_bits(generic.ts.amax)) << ", "
      << hex(to_bits(generic.ts.encode)) << ", " << hex(to_bits(generic.ts.decode)) << "), fused ("
      << hex(to_bits(fused.ts.amax)) << ", " << hex(to_bits(fused.ts.encode)) << ", "
      << hex(to_bits(fused.ts.decode)) << ")\n";
  }
  const std::int64_t rows = d.rows(), kb = d.k_blocks();
  const std::int64_t stride = d.scale_batch_stride();
  for (std::size_t i = 0; i < generic.scales.size(); ++i) {
    if (generic.scales[i] == fused.scales[i]) continue;
    const auto b = static_cast<std::int64_t>(i) / stride;
    const auto at = logical_index(d.scale_layout, rows, kb, static_cast<std::int64_t>(i) % stride);
    s << "scale byte " << i << ": generic " << hex(generic.scales[i]) << ", fused " << hex(fused.scales[i]);
    if (!at) {
      s << " (layout padding)\n";
    } else {
      s << ", " << describe_block(x, d, b, (*at)[0], (*at)[1], generic, fused);
    }
    break;
  }
  const std::size_t rb = d.row_bytes();
  for (std::size_t i = 0; i < generic.elements.size(); ++i) {
    if (generic.elements[i] == fused.elements[i]) continue;
    const auto row = static_cast<std::int64_t>(i / rb);
    s << "element byte " << i << " (row byte " << i % rb << "): generic " << hex(generic.elements[i]) << ", fused "
      << hex(fused.elements[i]) << "\n";
    // The first block of the row whose codes differ.
    std::vector<std::uint8_t> cg(static_cast<std::size_t>(d.k_stored())), cf(cg.size());
    try {
      unpack(d.packing, d.format.element, std::span(generic.elements).subspan(static_cast<std::size_t>(row) * rb, rb), cg);
      unpack(d.packing, d.format.element, std::span(fused.elements).subspan(static_cast<std::size_t>(row) * rb, rb), cf);
      const auto k = static_cast<std::int64_t>(std::mismatch(cg.begin(), cg.end(), cf.begin()).first - cg.begin());
      if (k < d.k_stored()) {
        s << describe_block(x, d, row / rows, row % rows, k / d.format.block_size, generic, fused);
      }
    } catch (const std::exception& e) {
      s << "  (unpack: " << e.what() << ")\n";
    }
    break;
  }
  return s.str();
}

// Blocks compared, for the summary line of each test.
std::size_t g_blocks = 0;
std::size_t g_tensors = 0;

// Quantizes x with both paths and checks the bytes; returns false on a difference (reported).
bool same_on_both_paths(const std::string& what, std::span<const float> x, const BlockScaledDesc& d,
                        const QuantizeOptions& o) {
  const Output generic = run(QuantizePath::generic, x, d, o, 0xA5);
  const Output fused = run(QuantizePath::automatic, x, d, o, 0x5A);
  g_blocks += static_cast<std::size_t>(d.batch() * d.rows() * d.k_blocks());
  ++g_tensors;
  const std::string diff = compare(x, d, generic, fused);
  if (diff.empty()) return true;
  ADD_FAILURE() << what << ": the fused path differs from the generic path\n" << diff;
  return false;
}

// ---- Cases.

struct Case {
  std::string name;
  QuantizeOptions options;
};

// The presets of `recipes` that apply to the format, with the variants the oracle test uses.
std::vector<Case> recipe_cases(const BlockFormat& f) {
  std::vector<Case> cases;
  const Format el = f.element;
  if (!has_tensor_scale(f)) {
    using recipes::TorchaoScaleMode;
    using recipes::TritonRounding;
    cases.push_back({"ocp", recipes::ocp(el)});
    cases.push_back({"mx_paper", recipes::mx_paper(el)});
    cases.push_back({"microxcaling", recipes::microxcaling(el, false)});
    cases.push_back({"microxcaling_flush", recipes::microxcaling(el, true)});
    cases.push_back({"torchao_floor", recipes::torchao(el, TorchaoScaleMode::floor)});
    cases.push_back({"torchao_ceil", recipes::torchao(el, TorchaoScaleMode::ceil)});
    cases.push_back({"torchao_even", recipes::torchao(el, TorchaoScaleMode::even)});
    cases.push_back({"torchao_rceil", recipes::torchao(el, TorchaoScaleMode::rceil)});
    cases.push_back({"te_rceil", recipes::transformer_engine_mxfp8(el)});
    QuantizeOptions div = recipes::transformer_engine_mxfp8(el);
    div.ratio = ScaleRatio::divide;
    cases.push_back({"te_rceil_divide", div});
    cases.push_back({"triton_up", recipes::triton_kernels(el, TritonRounding::round_up)});
    cases.push_back({"triton_down", recipes::triton_kernels(el, TritonRounding::round_down)});
    QuantizeOptions kernel = recipes::triton_kernels(el, TritonRounding::round_up);
    kernel.nan = BlockNan::ignore;  // the GPU kernel's tl.max
    cases.push_back({"triton_up_kernel_nan", kernel});
    return cases;
  }
  cases.push_back({"te", recipes::nvfp4_transformer_engine()});
  cases.push_back({"torchao_two_level", recipes::nvfp4_torchao(true)});
  cases.push_back({"torchao_single_level", recipes::nvfp4_torchao(false)});
  QuantizeOptions te_none = recipes::nvfp4_transformer_engine();
  te_none.tensor_scale = TensorScaleSource::none;
  cases.push_back({"te_no_amax", te_none});
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  for (float g : {1.0f, 2688.0f, 1e-30f, 3e38f, 0.0f, nan, inf}) {
    QuantizeOptions te = recipes::nvfp4_transformer_engine();
    te.tensor_scale = TensorScaleSource::given_amax;
    te.tensor_amax = g;
    cases.push_back({"te_given_" + std::to_string(g), te});
    QuantizeOptions ta = recipes::nvfp4_torchao(true);
    ta.tensor_scale = TensorScaleSource::given_amax;
    ta.tensor_amax = g;
    cases.push_back({"torchao_given_" + std::to_string(g), ta});
  }
  return cases;
}

// Every rule of the format's scale type under every NaN / Inf / subnormal policy (CUDA element
// conversion), and every non-stochastic element rounding x overflow rule x NaN rule under one rule.
std::vector<Case> sweep_cases(const BlockFormat& f) {
  std::vector<Case> cases;
  const auto add = [&](const std::string& name, const QuantizeOptions& o) {
    try {
      validate(f, o);
    } catch (const std::invalid_argument&) {
      return;  // a combination the options refuse (e.g. BlockInf::saturate with a triton rule)
    }
    cases.push_back({name, o});
  };
  struct RuleVariant {
    const char* name;
    ScaleRule rule;
    ScaleRatio ratio;
  };
  std::vector<RuleVariant> rules;
  if (has_tensor_scale(f)) {
    rules = {{"nvfp4_te", ScaleRule::nvfp4_transformer_engine, ScaleRatio::reciprocal_multiply},
             {"nvfp4_torchao", ScaleRule::nvfp4_torchao, ScaleRatio::reciprocal_multiply}};
  } else {
    rules = {{"ocp_floor", ScaleRule::ocp_floor, ScaleRatio::reciprocal_multiply},
             {"ceil", ScaleRule::ceil, ScaleRatio::reciprocal_multiply},
             {"even", ScaleRule::even, ScaleRatio::reciprocal_multiply},
             {"rceil", ScaleRule::rceil, ScaleRatio::reciprocal_multiply},
             {"rceil_divide", ScaleRule::rceil, ScaleRatio::divide},
             {"triton_up", ScaleRule::triton_round_up, ScaleRatio::reciprocal_multiply},
             {"triton_down", ScaleRule::triton_round_down, ScaleRatio::reciprocal_multiply}};
  }
  const QuantizeOptions base = has_tensor_scale(f) ? recipes::nvfp4_transformer_engine()
                                                   : recipes::transformer_engine_mxfp8(f.element);
  for (const RuleVariant& r : rules) {
    for (BlockNan nan : {BlockNan::propagate, BlockNan::ignore}) {
      for (BlockInf inf : {BlockInf::nan_scale, BlockInf::saturate}) {
        for (SubnormalInputs sub : {SubnormalInputs::keep, SubnormalInputs::flush_elements, SubnormalInputs::flush_block}) {
          QuantizeOptions o = base;
          o.rule = r.rule;
          o.ratio = r.ratio;
          o.nan = nan;
          o.inf = inf;
          o.subnormals = sub;
          add(std::string(r.name) + (nan == BlockNan::ignore ? "/nan_ignore" : "/nan_propagate") +
                  (inf == BlockInf::saturate ? "/inf_saturate" : "/inf_nan_scale") + "/subnormals_" +
                  std::to_string(static_cast<int>(sub)),
              o);
        }
      }
    }
  }
  const Format el = f.element;
  const NanRule nan_rules[] = {default_nan_rule(el), presets::cuda(el).nan, NanRule{max_finite_code(el), false, false},
                               NanRule{default_nan_rule(el).code, true, false},
                               NanRule{default_nan_rule(el).code, false, true}};
  for (Rounding rounding : {Rounding::nearest_even, Rounding::toward_zero, Rounding::upward, Rounding::downward,
                            Rounding::nearest_away}) {
    for (Overflow overflow : {Overflow::saturate, Overflow::saturate_finite, Overflow::infinity, Overflow::ieee}) {
      for (std::size_t n = 0; n < std::size(nan_rules); ++n) {
        QuantizeOptions o = base;
        o.element = ConvertOptions{rounding, overflow};
        if (n > 0) o.element.with_nan(nan_rules[n]);
        add("element/" + to_string(rounding) + "/" + to_string(overflow) + "/nan_rule_" + std::to_string(n), o);
      }
    }
  }
  return cases;
}

// ---- Tests.

class QUANTIZEFUSED_SUITE : public ::testing::TestWithParam<BlockFormat> {
 protected:
  void SetUp() override {
    if (!fused_runs_here()) GTEST_SKIP() << "the CPU lacks AVX-512 F/BW/VL/DQ: the fused path does not run here";
    if (!quantize_detail::fused_path_applies(recipes::ocp(Format::float8_e4m3fn))) {
      GTEST_SKIP() << "the fused path is switched off in this process (BLOCKSCALE_SIMD=portable)";
    }
    g_blocks = 0;
    g_tensors = 0;
#if defined(_OPENMP)
    // One thread: ctest runs these tests as parallel processes, and OpenMP teams in each would
    // oversubscribe the cores (libgomp's spinning barriers made the suite 4x slower on 2 cores).
    // That results do not depend on the thread count is quantize_tensor_test's check.
    saved_threads_ = omp_get_max_threads();
    omp_set_num_threads(1);
#endif
  }
  void TearDown() override {
#if defined(_OPENMP)
    if (saved_threads_ > 0) omp_set_num_threads(saved_threads_);  // 0: skipped before SetUp set it
#endif
  }

 private:
  int saved_threads_ = 0;
};

// Every recipe preset and every option combination, on every stratum.
TEST_P(QUANTIZEFUSED_SUITE, SameBytesAsGenericPath) {
  const BlockFormat f = GetParam();
  const FormatFacts ff = facts_of(f);
  const std::vector<Case> recipes = recipe_cases(f);
  const std::vector<Case> sweeps = sweep_cases(f);
  const std::int64_t bs = f.block_size;
  const auto rows = static_cast<std::int64_t>((kBlocksPerStratum + kBlocksPerRow - 1) / kBlocksPerRow);
  const std::int64_t sweep_rows = std::max<std::int64_t>(1, rows / static_cast<std::int64_t>(kSweepDivisor));
  const ScaleLayout layout = ScaleLayout::of(ScaleLayoutKind::tiled_128x4);
  std::size_t failures = 0;
  for (Stratum s : kStrata) {
    const std::vector<float> x = make_stratum(s, ff, static_cast<std::size_t>(rows * kBlocksPerRow),
                                              0x5EED0000u + static_cast<std::uint64_t>(s));
    const BlockScaledDesc d{f, {rows, kBlocksPerRow * bs}, KAxis::last, dense_packing(f.element), layout};
    const BlockScaledDesc ds{f, {sweep_rows, kBlocksPerRow * bs}, KAxis::last, dense_packing(f.element), layout};
    const std::span<const float> xs(x.data(), static_cast<std::size_t>(sweep_rows * kBlocksPerRow * bs));
    for (const Case& c : recipes) {
      if (!same_on_both_paths(to_string(f) + " " + c.name + " on " + name_of(s), x, d, c.options) && ++failures >= 5) {
        FAIL() << "stopping after 5 failing cases";
      }
    }
    for (const Case& c : sweeps) {
      if (!same_on_both_paths(to_string(f) + " " + c.name + " on " + name_of(s), xs, ds, c.options) &&
          ++failures >= 5) {
        FAIL() << "stopping after 5 failing cases";
      }
    }
  }
  std::cout << to_string(f) << ": " << recipes.size() << " recipe presets x " << rows * kBlocksPerRow * 8
            << " blocks, " << sweeps.size() << " option combinations x " << sweep_rows * kBlocksPerRow * 8
            << " blocks; " << g_blocks << " blocks in " << g_tensors << " tensors, identical\n";
}

// Every packing of the element format and every byte scale layout, K last and first, K tails
// (zero padding), batches and short rows (partial chunks of 16 blocks), under two option sets.
TEST_P(QUANTIZEFUSED_SUITE, SameBytesInEveryPackingLayoutAndShape) {
  const BlockFormat f = GetParam();
  const FormatFacts ff = facts_of(f);
  const std::int64_t bs = f.block_size;
  std::vector<Packing> packings = {dense_packing(f.element)};
  if (f.element == Format::float4_e2m1fn) packings.push_back(Packing::fp4_padded16);
  if (f.element == Format::float6_e2m3fn || f.element == Format::float6_e3m2fn) {
    packings.push_back(Packing::fp6_padded16);
    packings.push_back(Packing::byte_per_element);
  }
  if (f.element == Format::float4_e2m1fn) packings.push_back(Packing::byte_per_element);
  std::vector<ScaleLayout> layouts;
  for (const ScaleLayoutKindInfo& k : kScaleLayoutKindTable) {
    if (k.element != ScaleElement::byte) continue;
    if (k.kind == ScaleLayoutKind::gluon_contiguous) {
      layouts.push_back(ScaleLayout::gluon_contiguous(128, 4 * bs, bs));
      layouts.push_back(ScaleLayout::gluon_contiguous(32, 2 * bs, bs));
    } else if (k.kind == ScaleLayoutKind::triton_hopper) {
      layouts.push_back(ScaleLayout::triton_hopper(4));
      layouts.push_back(ScaleLayout::triton_hopper(8));
    } else if (k.kind == ScaleLayoutKind::gfx1250_mx) {
      layouts.push_back(ScaleLayout::of(k.kind));
      layouts.push_back(ScaleLayout::gfx1250_mx(16));
    } else if (k.kind == ScaleLayoutKind::block_major_k) {
      layouts.push_back(ScaleLayout::block_major_k(1));
      layouts.push_back(ScaleLayout::block_major_k(8));
    } else if (k.kind == ScaleLayoutKind::sm90_mixed_folded) {
      layouts.push_back(ScaleLayout::sm90_mixed_folded(32));
    } else {
      layouts.push_back(ScaleLayout::of(k.kind));
    }
  }
  struct Shape {
    std::int64_t batch, rows, k;
  };
  // (rows, K): exact fits of every layout; K tails; one block; one row; a partial chunk only.
  const Shape shapes[] = {{1, 256, 8 * bs}, {2, 128, 37 * bs + 5}, {3, 130, 21 * bs - 1}, {1, 1, 1},
                          {2, 7, 3 * bs},   {1, 64, 16 * bs},      {1, 33, 70 * bs + 1}};
  QuantizeOptions second = has_tensor_scale(f) ? recipes::nvfp4_torchao(true) : recipes::microxcaling(f.element, true);
  second.nan = BlockNan::ignore;
  const std::vector<Case> cases = {
      {"default", has_tensor_scale(f) ? recipes::nvfp4_transformer_engine() : recipes::transformer_engine_mxfp8(f.element)},
      {"second", second}};
  std::vector<bool> layout_ran(layouts.size(), false);
  std::size_t failures = 0;
  for (const Shape& sh : shapes) {
    const std::int64_t k_blocks = (sh.k + bs - 1) / bs;
    const std::vector<float> x = make_stratum(Stratum::specials, ff, static_cast<std::size_t>(sh.batch * sh.rows * k_blocks),
                                              0xC0FFEEu + static_cast<std::uint64_t>(sh.rows * 1000 + sh.k));
    const std::span<const float> xs(x.data(), static_cast<std::size_t>(sh.batch * sh.rows * sh.k));
    for (KAxis axis : {KAxis::last, KAxis::first}) {
      const std::vector<std::int64_t> shape =
          axis == KAxis::last ? std::vector<std::int64_t>{sh.batch, sh.rows, sh.k}
                              : std::vector<std::int64_t>{sh.batch, sh.k, sh.rows};
      for (Packing p : packings) {
        for (std::size_t li = 0; li < layouts.size(); ++li) {
          const BlockScaledDesc d{f, shape, axis, p, layouts[li]};
          try {
            validate(d, KTail::zero_pad);
          } catch (const std::invalid_argument&) {
            continue;  // the shape does not fit the layout (e.g. gluon_contiguous needs R % BLOCK_MN == 0)
          }
          layout_ran[li] = true;
          for (const Case& c : cases) {
            QuantizeOptions o = c.options;
            o.k_tail = KTail::zero_pad;
            const std::string what = to_string(f) + " " + c.name + " " + to_string(p) + " " + to_string(layouts[li]) +
                                     (axis == KAxis::last ? " K last" : " K first") + " batch " +
                                     std::to_string(sh.batch) + " rows " + std::to_string(sh.rows) + " K " +
                                     std::to_string(sh.k);
            if (!same_on_both_paths(what, xs, d, o) && ++failures >= 5) FAIL() << "stopping after 5 failing cases";
          }
        }
      }
    }
  }
  for (std::size_t li = 0; li < layouts.size(); ++li) {
    EXPECT_TRUE(layout_ran[li]) << "no shape fits " << to_string(layouts[li]);
  }
  std::cout << to_string(f) << ": " << packings.size() << " packings x " << layouts.size() << " layouts: " << g_blocks
            << " blocks in " << g_tensors << " tensors, identical\n";
}

INSTANTIATE_TEST_SUITE_P(BlockFormats, QUANTIZEFUSED_SUITE,
                         ::testing::Values(block_formats::mxfp8_e4m3, block_formats::mxfp8_e5m2,
                                           block_formats::mxfp6_e2m3, block_formats::mxfp6_e3m2, block_formats::mxfp4,
                                           block_formats::mxfp4_block16, block_formats::nvfp4),
                         [](const ::testing::TestParamInfo<BlockFormat>& i) { return to_string(i.param); });

#if !BLOCKSCALE_QUANTIZE_FULL
// Which path runs: the fused kernels need AVX-512, a non-stochastic element rounding, the automatic
// quantize path and a formats bulk path other than `portable` (BLOCKSCALE_SIMD=portable, which
// ctest also runs this test under: quantize_fused_simd_portable_test).
TEST(QuantizeFusedPath, SelectionRules) {
  const QuantizeOptions o = recipes::transformer_engine_mxfp8(Format::float8_e4m3fn);
  const char* env = std::getenv("BLOCKSCALE_SIMD");
  const bool portable_env = env != nullptr && std::string(env) == "portable";
  if (portable_env) {
    EXPECT_EQ(detail::automatic_path(), detail::BulkPath::portable);
  }
  const bool expected = fused_runs_here() && !portable_env;
  EXPECT_EQ(quantize_detail::fused_path_applies(o), expected);

  QuantizeOptions sr = o;
  sr.element.rounding = Rounding::stochastic;
  EXPECT_FALSE(quantize_detail::fused_path_applies(sr)) << "stochastic rounding takes the generic path";
  QuantizeOptions sr_nvfp4 = recipes::nvfp4_transformer_engine();
  sr_nvfp4.element.rounding = Rounding::stochastic;
  sr_nvfp4.element.stochastic_bits = 8;
  EXPECT_FALSE(quantize_detail::fused_path_applies(sr_nvfp4));

  {
    const PathGuard guard;
    quantize_detail::set_quantize_path(QuantizePath::generic);
    EXPECT_EQ(quantize_detail::quantize_path(), QuantizePath::generic);
    EXPECT_FALSE(quantize_detail::fused_path_applies(o)) << "set_quantize_path(generic)";
  }
  EXPECT_EQ(quantize_detail::fused_path_applies(o), expected) << "the path is automatic again";

  const detail::BulkPath saved = detail::automatic_path();
  detail::set_automatic_path(detail::BulkPath::portable);
  EXPECT_FALSE(quantize_detail::fused_path_applies(o)) << "the formats library's portable path";
  detail::set_automatic_path(saved);
  EXPECT_EQ(quantize_detail::fused_path_applies(o), expected);
}
#endif

}  // namespace
