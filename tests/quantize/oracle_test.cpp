// SPDX-License-Identifier: Apache-2.0
// Every rule against the independent model of oracle.h:
//  - single-element blocks for every fp16 input and every fp8 (e4m3, e5m2) code, each rule and
//    recipe, through the whole tensor path (one block per row);
//  - fp32 bit patterns (strided, with every binade edge) as single elements;
//  - stratified random blocks (scales over the whole fp32 range, short mantissas for exact ties,
//    zeros, fp32 subnormals, Inf, NaN), stochastic rounding included;
//  - RCEIL by reciprocal multiply and by division give the same e8m0 scale (formats.md (c).6).
// BLOCKSCALE_QUANTIZE_FULL (the exhaustive build) widens the sweeps: every positive finite fp32
// amax for the RCEIL check, every 8191st fp32 bit pattern, 100x the random blocks.
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "blockscale/formats/presets.h"
#include "quantize/oracle.h"

#if defined(_OPENMP)
#include <omp.h>
#endif

#ifndef BLOCKSCALE_QUANTIZE_FULL
#define BLOCKSCALE_QUANTIZE_FULL 0
#endif

// The exhaustive build registers its tests under another suite name, so that ctest can tell the two
// binaries' tests apart (and -LE exhaustive leaves only the short ones out).
#if BLOCKSCALE_QUANTIZE_FULL
#define QUANTIZEORACLE_SUITE QuantizeOracleFull
#else
#define QUANTIZEORACLE_SUITE QuantizeOracle
#endif

namespace {

using namespace blockscale;

struct Case {
  std::string name;
  BlockFormat format;
  QuantizeOptions options;
  std::uint32_t nan_code;  // element code the recipe gives the canonical +NaN
};

// CUDA's NaN results (cuda_fp8.h / cuda_fp6.h / cuda_fp4.h, formats.md B.2).
std::uint32_t cuda_nan(Format f) {
  switch (f) {
    case Format::float8_e4m3fn:
    case Format::float8_e5m2: return 0x7F;
    case Format::float6_e2m3fn:
    case Format::float6_e3m2fn: return 0x1F;
    default: return 0x7;
  }
}

const Format kElements[] = {Format::float8_e4m3fn, Format::float8_e5m2, Format::float6_e2m3fn,
                            Format::float6_e3m2fn, Format::float4_e2m1fn};

BlockFormat mx_format(Format el) {
  return {el, Format::float8_e8m0fnu, 32};
}

std::vector<Case> mx_cases() {
  std::vector<Case> cases;
  for (Format el : kElements) {
    const std::string n = to_string(el);
    const BlockFormat f = mx_format(el);
    const std::uint32_t cn = cuda_nan(el);
    // torch .to(float8_*) keeps the NaN sign: e4m3 0x7F, e5m2 0x7E (ml_dtypes kSaturate).
    const std::uint32_t tn = el == Format::float8_e5m2 ? 0x7E : cn;
    cases.push_back({"ocp/" + n, f, recipes::ocp(el), cn});
    cases.push_back({"mx_paper/" + n, f, recipes::mx_paper(el), cn});
    cases.push_back({"microxcaling/" + n, f, recipes::microxcaling(el, false), cn});
    cases.push_back({"microxcaling_flush/" + n, f, recipes::microxcaling(el, true), cn});
    cases.push_back({"torchao_floor/" + n, f, recipes::torchao(el, recipes::TorchaoScaleMode::floor), tn});
    cases.push_back({"torchao_ceil/" + n, f, recipes::torchao(el, recipes::TorchaoScaleMode::ceil), tn});
    cases.push_back({"torchao_even/" + n, f, recipes::torchao(el, recipes::TorchaoScaleMode::even), tn});
    cases.push_back({"torchao_rceil/" + n, f, recipes::torchao(el, recipes::TorchaoScaleMode::rceil), tn});
    cases.push_back({"te_rceil_mul/" + n, f, recipes::transformer_engine_mxfp8(el), cn});
    QuantizeOptions div = recipes::transformer_engine_mxfp8(el);
    div.ratio = ScaleRatio::divide;
    cases.push_back({"te_rceil_div/" + n, f, div, cn});
    cases.push_back({"triton_up/" + n, f, recipes::triton_kernels(el, recipes::TritonRounding::round_up), cn});
    cases.push_back({"triton_down/" + n, f, recipes::triton_kernels(el, recipes::TritonRounding::round_down), cn});
    QuantizeOptions triton_gpu = recipes::triton_kernels(el, recipes::TritonRounding::round_up);
    triton_gpu.nan = BlockNan::ignore;  // the GPU kernel's tl.max
    cases.push_back({"triton_up_kernel_nan/" + n, f, triton_gpu, cn});
  }
  const Format e2m1 = Format::float4_e2m1fn;
  cases.push_back({"ocp/mxfp4_block16", block_formats::mxfp4_block16, recipes::ocp(e2m1), 0x7});
  cases.push_back({"te_rceil/mxfp4_block16", block_formats::mxfp4_block16, recipes::transformer_engine_mxfp8(e2m1), 0x7});
  return cases;
}

std::vector<Case> nvfp4_cases() {
  std::vector<Case> cases;
  const auto add = [&](const std::string& name, QuantizeOptions o) {
    cases.push_back({name, block_formats::nvfp4, o, 0x7});
  };
  add("te/from_data", recipes::nvfp4_transformer_engine());
  add("torchao2/from_data", recipes::nvfp4_torchao(true));
  add("torchao1", recipes::nvfp4_torchao(false));
  QuantizeOptions te_none = recipes::nvfp4_transformer_engine();
  te_none.tensor_scale = TensorScaleSource::none;
  add("te/none", te_none);
  for (float g : {1.0f, 2688.0f, 1e-30f, 3e38f, 0.0f}) {
    QuantizeOptions te = recipes::nvfp4_transformer_engine();
    te.tensor_scale = TensorScaleSource::given_amax;
    te.tensor_amax = g;
    add("te/given_" + std::to_string(g), te);
    QuantizeOptions ta = recipes::nvfp4_torchao(true);
    ta.tensor_scale = TensorScaleSource::given_amax;
    ta.tensor_amax = g;
    add("torchao2/given_" + std::to_string(g), ta);
  }
  QuantizeOptions te_nan = recipes::nvfp4_transformer_engine();
  te_nan.tensor_scale = TensorScaleSource::given_amax;
  te_nan.tensor_amax = std::numeric_limits<float>::quiet_NaN();  // S_enc = FLT_MAX (fminf drops NaN)
  add("te/given_nan", te_nan);
  return cases;
}

// Same bits, or both NaN (a NaN tensor scale only needs to be NaN: payloads are not part of any rule).
bool same_float(float a, float b) { return qoracle::bits(a) == qoracle::bits(b) || (std::isnan(a) && std::isnan(b)); }

std::string hex(std::uint32_t v) {
  std::ostringstream s;
  s << "0x" << std::hex << v;
  return s.str();
}

// The oracle's global amax for the per-tensor scale.
double oracle_global_amax(const Case& c, const std::vector<float>& x) {
  double g = 0;
  bool nan = false;
  for (float v : x) {
    double a = std::fabs(static_cast<double>(v));
    if (c.options.subnormals == SubnormalInputs::flush_elements && a < std::ldexp(1.0, -126)) a = 0;
    if (std::isnan(a)) {
      nan = true;
    } else {
      g = std::max(g, a);
    }
  }
  if (nan && c.options.nan == BlockNan::propagate) return std::numeric_limits<double>::quiet_NaN();
  return g;
}

// Quantizes rows x [rows, bs] (one block per row) through the tensor API and compares every block
// with the oracle. Returns the number of mismatching blocks (the first few are reported).
std::size_t check_rows(const Case& c, const std::vector<float>& x, const std::vector<std::uint32_t>& rbits = {}) {
  const auto bs = static_cast<std::size_t>(c.format.block_size);
  const std::size_t rows = x.size() / bs;
  const BlockScaledTensor t =
      quantize(x, {static_cast<std::int64_t>(rows), static_cast<std::int64_t>(bs)}, KAxis::last, c.format, c.options,
               Packing::byte_per_element, ScaleLayout{}, rbits);
  const std::vector<std::uint8_t> codes = t.element_codes();
  const std::vector<std::uint8_t> scales = t.scale_codes();

  qoracle::Model m{c.format, c.options, {}, c.nan_code};
  double g = 0;
  switch (c.options.tensor_scale) {
    case TensorScaleSource::from_data: g = oracle_global_amax(c, x); break;
    case TensorScaleSource::given_amax: g = c.options.tensor_amax; break;
    case TensorScaleSource::none: break;
  }
  m.ts = qoracle::tensor_scale(c.format, c.options, g);
  if (has_tensor_scale(c.format)) {
    // The per-tensor scale itself, bit for bit.
    EXPECT_TRUE(same_float(m.ts.decode, t.tensor_scale().decode)) << c.name << ": " << m.ts.decode << " vs "
                                                                   << t.tensor_scale().decode;
    EXPECT_TRUE(same_float(m.ts.encode, t.tensor_scale().encode)) << c.name << ": " << m.ts.encode << " vs "
                                                                   << t.tensor_scale().encode;
  }
  std::size_t bad = 0;
  for (std::size_t r = 0; r < rows; ++r) {
    const std::vector<float> block(x.begin() + static_cast<std::ptrdiff_t>(r * bs),
                                   x.begin() + static_cast<std::ptrdiff_t>((r + 1) * bs));
    std::vector<std::uint32_t> rb;
    if (!rbits.empty()) rb.assign(rbits.begin() + static_cast<std::ptrdiff_t>(r * bs), rbits.begin() + static_cast<std::ptrdiff_t>((r + 1) * bs));
    const qoracle::Expected e = qoracle::quantize_block(m, block, rb);
    bool ok = e.scale == scales[r];
    for (std::size_t i = 0; i < bs && ok; ++i) ok = e.codes[i] == codes[r * bs + i];
    if (!ok && ++bad <= 5) {
      std::ostringstream s;
      s << c.name << " block " << r << ": scale expected " << hex(e.scale) << " got " << hex(scales[r]) << "\n";
      for (std::size_t i = 0; i < bs; ++i) {
        if (e.codes[i] != codes[r * bs + i] || i < 2) {
          s << "  x[" << i << "] = " << block[i] << " (" << hex(qoracle::bits(block[i])) << "): expected "
            << hex(e.codes[i]) << " got " << hex(codes[r * bs + i]) << "\n";
        }
      }
      ADD_FAILURE() << s.str();
    }
  }
  return bad;
}

// One block per input value, the value at position (i mod block size), the rest zeros.
std::vector<float> single_element_rows(const std::vector<float>& values, std::size_t bs) {
  std::vector<float> x(values.size() * bs, 0.0f);
  for (std::size_t i = 0; i < values.size(); ++i) x[i * bs + i % bs] = values[i];
  return x;
}

std::vector<float> fp16_and_fp8_values() {
  std::vector<float> v;
  for (std::uint32_t h = 0; h < 65536; ++h) {
    // IEEE binary16 decoded by hand: sign, 5-bit exponent, 10-bit mantissa.
    const double sign = (h & 0x8000) ? -1.0 : 1.0;
    const std::uint32_t e = (h >> 10) & 0x1F, m = h & 0x3FF;
    double val = 0;
    if (e == 0x1F) {
      val = m ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
    } else if (e == 0) {
      val = std::ldexp(static_cast<double>(m), -24);
    } else {
      val = std::ldexp(static_cast<double>(1024 + m), static_cast<int>(e) - 25);
    }
    v.push_back(static_cast<float>(sign * val));
  }
  for (Format f : {Format::float8_e4m3fn, Format::float8_e5m2}) {
    for (std::uint32_t c = 0; c < 256; ++c) {
      const std::uint32_t mag = c & 0x7F;
      const bool neg = (c & 0x80) != 0;
      double val = 0;
      if (f == Format::float8_e4m3fn && mag == 0x7F) {
        val = std::numeric_limits<double>::quiet_NaN();
      } else if (f == Format::float8_e5m2 && mag >= 0x7C) {
        val = mag == 0x7C ? std::numeric_limits<double>::infinity() : std::numeric_limits<double>::quiet_NaN();
      } else {
        val = qoracle::magnitude_value_slow(f, mag);
      }
      v.push_back(static_cast<float>(neg ? -val : val));
    }
  }
  return v;
}

TEST(QUANTIZEORACLE_SUITE, SingleElementBlocksEveryFp16AndFp8Input) {
  const std::vector<float> values = fp16_and_fp8_values();
  for (const std::vector<Case>& cases : {mx_cases(), nvfp4_cases()}) {
    for (const Case& c : cases) {
      EXPECT_EQ(check_rows(c, single_element_rows(values, static_cast<std::size_t>(c.format.block_size))), 0u)
          << c.name;
    }
  }
}

// fp32 bit patterns: a stride over all of them, and for every binade 2^e the values 2^e +- 2 ulp
// and max_e * 2^e +- 2 ulp (where FLOOR / CEIL / RCEIL change their minds).
std::vector<float> fp32_sweep() {
  std::vector<float> v;
  const std::uint32_t stride = BLOCKSCALE_QUANTIZE_FULL ? 8191u : 65521u;
  for (std::uint64_t b = 0; b <= 0xFFFFFFFFull; b += stride) v.push_back(std::bit_cast<float>(static_cast<std::uint32_t>(b)));
  for (int e = -149; e <= 127; ++e) {
    for (double edge : {1.0, 448.0, 57344.0, 7.5, 28.0, 6.0, 1.9375, 1.875, 1.75, 1.5}) {
      const float center = static_cast<float>(std::ldexp(edge, e));
      if (!std::isfinite(center) || center == 0) continue;
      float lo = center, hi = center;
      for (int k = 0; k < 3; ++k) {
        v.push_back(lo);
        v.push_back(hi);
        v.push_back(-hi);
        lo = std::nextafter(lo, 0.0f);
        hi = std::nextafter(hi, std::numeric_limits<float>::infinity());
      }
    }
  }
  return v;
}

TEST(QUANTIZEORACLE_SUITE, SingleElementBlocksFp32Sweep) {
  const std::vector<float> values = fp32_sweep();
  for (const std::vector<Case>& cases : {mx_cases(), nvfp4_cases()}) {
    for (const Case& c : cases) {
      EXPECT_EQ(check_rows(c, single_element_rows(values, static_cast<std::size_t>(c.format.block_size))), 0u)
          << c.name;
    }
  }
}

// Stratified random blocks. Each block picks a binade for its largest element anywhere in fp32;
// elements sit up to 40 binades below it with 1- to 24-bit mantissas (short ones hit exact ties of
// every element grid), plus zeros of both signs, fp32 subnormals, and in some blocks Inf or NaN.
std::vector<float> random_blocks(std::size_t blocks, std::size_t bs, std::uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> top(-150, 127), below(0, 40), mant_bits(0, 23), pct(0, 99);
  std::uniform_int_distribution<std::uint32_t> word;
  std::vector<float> x(blocks * bs);
  for (std::size_t b = 0; b < blocks; ++b) {
    const int e0 = top(gen);
    const bool special = pct(gen) < 8;
    for (std::size_t i = 0; i < bs; ++i) {
      const int kind = pct(gen);
      float v = 0;
      if (kind < 5) {
        v = (word(gen) & 1) ? -0.0f : 0.0f;
      } else if (kind < 9) {
        v = std::bit_cast<float>((word(gen) & 0x807FFFFFu));  // fp32 subnormal (or zero)
      } else if (special && kind < 11) {
        const std::uint32_t w = word(gen);
        v = (w & 2) ? std::numeric_limits<float>::infinity() : std::bit_cast<float>(0x7FC00000u | (w & 0x3FFFFFu));
        if (w & 1) v = -v;
      } else {
        const int mb = mant_bits(gen);
        const std::uint32_t mant = mb == 0 ? 0u : (word(gen) >> (32 - mb)) << (23 - mb);
        const double sig = 1.0 + std::ldexp(static_cast<double>(mant), -23);
        v = static_cast<float>(std::ldexp(sig, e0 - below(gen)));
        if (word(gen) & 1) v = -v;
      }
      x[b * bs + i] = v;
    }
  }
  return x;
}

TEST(QUANTIZEORACLE_SUITE, RandomBlocks) {
  const std::size_t blocks = BLOCKSCALE_QUANTIZE_FULL ? 400000 : 4000;
  std::uint32_t seed = 1;
  for (const std::vector<Case>& cases : {mx_cases(), nvfp4_cases()}) {
    for (const Case& c : cases) {
      const std::vector<float> x = random_blocks(blocks, static_cast<std::size_t>(c.format.block_size), seed++);
      EXPECT_EQ(check_rows(c, x), 0u) << c.name;
    }
  }
}

// Stochastic element rounding with caller random bits: TE NVFP4 (8 bits per element, the
// cvt.rs / software fallback width) and MXFP8 / MXFP6 with all 32 bits.
TEST(QUANTIZEORACLE_SUITE, RandomBlocksStochasticRounding) {
  const std::size_t blocks = BLOCKSCALE_QUANTIZE_FULL ? 200000 : 3000;
  std::vector<Case> cases;
  QuantizeOptions te = recipes::nvfp4_transformer_engine();
  te.element.rounding = Rounding::stochastic;
  te.element.stochastic_bits = 8;
  cases.push_back({"te_nvfp4_sr8", block_formats::nvfp4, te, 0x7});
  for (Format el : {Format::float8_e4m3fn, Format::float6_e3m2fn, Format::float4_e2m1fn}) {
    QuantizeOptions o = recipes::transformer_engine_mxfp8(el);
    o.element.rounding = Rounding::stochastic;
    o.element.stochastic_bits = 32;
    cases.push_back({"te_rceil_sr32/" + to_string(el), mx_format(el), o, cuda_nan(el)});
  }
  std::mt19937 gen(99);
  std::uniform_int_distribution<std::uint32_t> word;
  for (const Case& c : cases) {
    const std::vector<float> x = random_blocks(blocks, static_cast<std::size_t>(c.format.block_size), 7);
    std::vector<std::uint32_t> r(x.size());
    for (auto& w : r) w = word(gen);
    EXPECT_EQ(check_rows(c, x, r), 0u) << c.name;
  }
}

// RP(fp32(amax * fp32(1/max))) == RP(fp32(amax / max)) for every non-negative finite fp32 amax
// (formats.md (c).6 reports it for [2^-100, 2^100)); the library's two rceil variants, both
// compared with the oracle's e8m0 rounding.
TEST(QUANTIZEORACLE_SUITE, RceilReciprocalMultiplyEqualsDivision) {
  const std::uint32_t stride = BLOCKSCALE_QUANTIZE_FULL ? 1u : 4099u;
  for (Format el : kElements) {
    QuantizeOptions mul = recipes::transformer_engine_mxfp8(el);
    QuantizeOptions div = mul;
    div.ratio = ScaleRatio::divide;
    const BlockFormat f = mx_format(el);
    const double mx = qoracle::element_max(el);
    const float inv = static_cast<float>(1.0 / mx);
    constexpr std::size_t kChunk = std::size_t{1} << 20;
    std::vector<float> amax;
    std::vector<std::uint8_t> cm(kChunk), cd(kChunk);
    std::vector<float> mm(kChunk), md(kChunk);
    std::uint64_t mismatches = 0, checked = 0;
    for (std::uint64_t b = 0; b < 0x7F800000ull;) {
      amax.clear();
      for (; b < 0x7F800000ull && amax.size() < kChunk; b += stride) amax.push_back(std::bit_cast<float>(static_cast<std::uint32_t>(b)));
      const std::size_t n = amax.size();
      block_scales_for_amax(f, mul, TensorScale{}, amax, std::span(cm).first(n), std::span(mm).first(n));
      block_scales_for_amax(f, div, TensorScale{}, amax, std::span(cd).first(n), std::span(md).first(n));
      for (std::size_t i = 0; i < n; ++i) {
        const std::uint32_t want_mul = qoracle::e8m0_round_up(static_cast<double>(amax[i] * inv));
        const std::uint32_t want_div = qoracle::e8m0_round_up(static_cast<double>(static_cast<float>(amax[i] / mx)));
        if (cm[i] != cd[i] || cm[i] != want_mul || cd[i] != want_div) {
          if (++mismatches <= 5) {
            ADD_FAILURE() << to_string(el) << " amax " << amax[i] << " (" << hex(qoracle::bits(amax[i]))
                          << "): mul " << hex(cm[i]) << " (oracle " << hex(want_mul) << "), div " << hex(cd[i])
                          << " (oracle " << hex(want_div) << ")";
          }
        }
      }
      checked += n;
    }
    EXPECT_EQ(mismatches, 0u) << to_string(el) << " over " << checked << " amax values";
  }
}

// NVFP4 recipes differ from each other only in the order of their fp32 operations, and random data
// almost never lands where that order matters. These blocks are built to: block maxima within a few
// ulps of the amax that maps onto an e4m3 rounding midpoint, elements within an ulp of the inputs
// that map onto e2m1 midpoints. The test first checks that the data tells the orders apart (an
// algebraically equal order rounds differently somewhere), then that the library follows the
// recipe's order on all of it.
TEST(QUANTIZEORACLE_SUITE, Nvfp4OperationOrderEdges) {
  using qoracle::f32;
  const double e2m1_mid[] = {0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0};
  for (const bool te : {true, false}) {
    std::size_t scale_sensitive = 0, element_sensitive = 0;
    for (const float g : {1.0f, 3.3f, 117.0f, 1881.6f, 1e4f, 0.031f}) {
      QuantizeOptions o = te ? recipes::nvfp4_transformer_engine() : recipes::nvfp4_torchao(true);
      o.tensor_scale = TensorScaleSource::given_amax;
      o.tensor_amax = g;
      const Case c{std::string(te ? "te" : "torchao") + "/order/" + std::to_string(g), block_formats::nvfp4, o, 0x7};
      qoracle::Model m{c.format, o, qoracle::tensor_scale(c.format, o, g), 0x7};
      const double enc = m.ts.encode, dec = m.ts.decode;
      const double k = f32(enc * static_cast<double>(f32(1.0 / 6.0)));
      std::vector<float> x;
      for (std::uint32_t code = 1; code < 0x7E; ++code) {
        const double mid = (qoracle::magnitude_value(Format::float8_ue4m3, code) +
                            qoracle::magnitude_value(Format::float8_ue4m3, code + 1)) / 2;
        const float a0 = f32(te ? mid / k : mid * 6.0 * dec);
        float a = a0;
        for (int d = 0; d < 6; ++d) a = std::nextafter(a, 0.0f);
        for (int d = 0; d < 13; ++d, a = std::nextafter(a, FLT_MAX)) {
          if (!(a > 0) || !std::isfinite(a)) continue;
          // The recipe's order and an algebraically equal one.
          const std::uint32_t want = qoracle::scale_of(m, a).code;
          const double alt_s = te ? f32(static_cast<double>(f32(a * enc)) * static_cast<double>(f32(1.0 / 6.0)))
                                  : f32(static_cast<double>(f32(a * enc)) / 6.0);
          const std::uint32_t alt = qoracle::round_to_grid(
              Format::float8_ue4m3, te ? alt_s : std::min(std::max(alt_s, 0x1p-6), 448.0), qoracle::Round::even);
          scale_sensitive += alt != want;
          // One block: amax a, then elements just around the inputs that land on e2m1 midpoints.
          const qoracle::ScaleAndMultiplier sm = qoracle::scale_of(m, a);
          const double s8 = qoracle::magnitude_value(Format::float8_ue4m3, sm.code);
          const double alt_mult = te ? f32(enc / s8) : f32(1.0 / static_cast<double>(f32(dec * s8)));
          std::vector<float> block(16, 0.0f);
          block[0] = a;
          for (int j = 1; j < 16; ++j) {
            float e = f32(e2m1_mid[j % 7] / sm.mult);
            if (j >= 8) e = std::nextafter(e, j % 2 ? 0.0f : FLT_MAX);
            if (!(std::fabs(e) <= a)) e = 0.0f;
            block[j] = e;
            if (std::isfinite(sm.mult) && std::isfinite(alt_mult)) {
              const auto r1 = qoracle::round_to_grid(Format::float4_e2m1fn, f32(e * sm.mult), qoracle::Round::even);
              const auto r2 = qoracle::round_to_grid(Format::float4_e2m1fn, f32(e * alt_mult), qoracle::Round::even);
              element_sensitive += r1 != r2;
            }
          }
          x.insert(x.end(), block.begin(), block.end());
        }
      }
      EXPECT_EQ(check_rows(c, x), 0u) << c.name;
    }
    EXPECT_GT(scale_sensitive, 0u) << (te ? "TE" : "torchao") << ": the blocks do not separate scale orders";
    EXPECT_GT(element_sensitive, 0u) << (te ? "TE" : "torchao") << ": the blocks do not separate multiplier orders";
  }
}

// The per-tensor NVFP4 scales for special global amax values (formats.md (c).8 quirks included).
TEST(QUANTIZEORACLE_SUITE, Nvfp4TensorScales) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  for (const QuantizeOptions& base : {recipes::nvfp4_transformer_engine(), recipes::nvfp4_torchao(true)}) {
    QuantizeOptions o = base;
    o.tensor_scale = TensorScaleSource::given_amax;
    for (float g : {0.0f, 1.0f, 2688.0f, 1e-38f, 1e-45f, 3.4e38f, inf, nan, 6.0f, 448.0f, 0.1f}) {
      const TensorScale got = tensor_scale_for_amax(block_formats::nvfp4, o, g);
      const TensorScale want = qoracle::tensor_scale(block_formats::nvfp4, o, g);
      EXPECT_TRUE(same_float(got.encode, want.encode)) << to_string(o.rule) << " G=" << g;
      EXPECT_TRUE(same_float(got.decode, want.decode)) << to_string(o.rule) << " G=" << g;
    }
  }
  // TE: S_enc = FLT_MAX for a NaN amax, 1 for 0 and Inf.
  QuantizeOptions te = recipes::nvfp4_transformer_engine();
  te.tensor_scale = TensorScaleSource::given_amax;
  EXPECT_EQ(tensor_scale_for_amax(block_formats::nvfp4, te, nan).encode, FLT_MAX);
  EXPECT_EQ(tensor_scale_for_amax(block_formats::nvfp4, te, 0.0f).encode, 1.0f);
  EXPECT_EQ(tensor_scale_for_amax(block_formats::nvfp4, te, inf).encode, 1.0f);
}

}  // namespace
