// SPDX-License-Identifier: Apache-2.0
// emulator::exact_gemm (the `exact` numerics of mma_scaled as a proved double GEMM) against
// reference::mma_scaled, bit for bit: every fast path and several thread counts, every block format
// and mixed element pairs, quantized data, random bit patterns (NaN and Inf elements, NaN scales, C
// with every class of value), scales over the whole e8m0 range (outputs the proof must refuse),
// exact zero sums, NVFP4's per-tensor epilogue, batches, and bad input.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "blockscale/emulator/gemm.h"
#include "blockscale/formats/convert.h"
#include "blockscale/quantize/options.h"
#include "blockscale/quantize/tensor.h"
#include "blockscale/reference/operands.h"
#include "gemm_test_data.h"
#include "expect_throw.h"
#include "fp_mode.h"

namespace blockscale::emulator {
namespace {

using blockscale::test::invalid_argument_message;

using Rng = std::mt19937_64;
using testing::c_bits;
using testing::fast_paths;

// Gaussian rows whose magnitude changes by up to 2^+-8 from row to row, or Student-t (2 degrees of
// freedom): heavy tails that spread a row's scales.
std::vector<float> data(Rng& rng, std::size_t n, bool heavy, std::size_t row = 64) {
  std::normal_distribution<double> g;
  std::chi_squared_distribution<double> chi(2);
  std::vector<float> v(n);
  double mag = 1;
  for (std::size_t i = 0; i < n; ++i) {
    if (i % row == 0) mag = std::ldexp(1.0, static_cast<int>(rng() % 17) - 8);
    v[i] = static_cast<float>(heavy ? g(rng) / std::sqrt(chi(rng) / 2) : g(rng) * mag);
  }
  return v;
}

QuantizeOptions options_for(const BlockFormat& f) {
  QuantizeOptions o = f.scale == Format::float8_ue4m3 ? recipes::nvfp4_transformer_engine() : recipes::ocp(f.element);
  o.k_tail = KTail::zero_pad;
  return o;
}

BlockScaledTensor quantized(Rng& rng, const BlockFormat& f, std::int64_t rows, std::int64_t k, bool heavy) {
  return quantize(data(rng, static_cast<std::size_t>(rows * k), heavy, static_cast<std::size_t>(k)), {rows, k},
                  KAxis::last, f, options_for(f));
}

// Raw codes: uniformly random elements (every code, Inf included; NaN codes unless nan_elements is
// false) and scales drawn from [lo, hi] (NaN scales included when hi reaches them).
BlockScaledTensor raw(Rng& rng, const BlockFormat& f, std::int64_t rows, std::int64_t k, int lo, int hi,
                      bool nan_elements = true) {
  BlockScaledDesc d;
  d.format = f;
  d.shape = {rows, k};
  const int bits = info(f.element).exponent_bits + info(f.element).mantissa_bits + 1;
  std::vector<std::uint8_t> e(static_cast<std::size_t>(rows * k)), s(static_cast<std::size_t>(rows * k / f.block_size));
  for (auto& x : e) {
    do x = static_cast<std::uint8_t>(rng() & ((1u << bits) - 1));
    while (!nan_elements && std::isnan(to_double(f.element, x)));
  }
  for (auto& x : s) x = static_cast<std::uint8_t>(lo + static_cast<int>(rng() % static_cast<unsigned>(hi - lo + 1)));
  RawBufferOptions o;
  o.allow_nan_scales = true;
  return BlockScaledTensor(d, std::move(e), std::move(s), {std::numeric_limits<float>::quiet_NaN(), 1.0f, 1.0f}, o);
}

// The fast paths at 1 and 3 threads against GemmPath::reference; returns the reference's bits.
// `hostile`: the fast paths run under the caller's worst floating-point mode (fp_mode.h), the
// reference in the default mode.
std::vector<std::uint32_t> expect_paths_agree(const BlockScaledTensor& a, const BlockScaledTensor& b,
                                              const CodeMatrix& c, const std::string& what,
                                              GemmPathStats* total = nullptr, bool hostile = false) {
  const std::vector<std::uint32_t> want = exact_gemm(a, b, c, {1, GemmPath::reference});
  for (GemmPath path : fast_paths()) {
    for (int threads : {1, 3}) {
      GemmPathStats st;
      std::optional<test::HostileFpMode> mode;
      if (hostile) mode.emplace();
      const std::vector<std::uint32_t> got = exact_gemm(a, b, c, {threads, path, &st});
      mode.reset();
      std::size_t bad = 0, first = 0;
      for (std::size_t i = 0; i < want.size(); ++i) {
        if (got[i] != want[i] && bad++ == 0) first = i;
      }
      EXPECT_EQ(bad, 0u) << what << " " << to_string(path) << " threads " << threads << ": first at " << first
                         << " got 0x" << std::hex << got[first] << " want 0x" << want[first];
      EXPECT_EQ(st.exact + st.special + st.reference_outputs, want.size()) << what;
      if (total != nullptr && threads == 1 && path == fast_paths().back()) {
        total->exact += st.exact;
        total->special += st.special;
        total->reference_outputs += st.reference_outputs;
      }
    }
  }
  return want;
}

// GemmPath::reference of exact_gemm (the fallback's tensors, built in exact_gemm.cpp) against the
// library's own adapter of BlockScaledTensors to mma_scaled (reference/operands.h).
TEST(ExactGemm, ReferencePathIsMmaScaled) {
  Rng rng(1);
  for (const BlockFormat f : {block_formats::mxfp8_e4m3, block_formats::mxfp6_e3m2, block_formats::mxfp4}) {
    const std::int64_t M = 19, N = 23, K = 160;
    const BlockScaledTensor a = quantized(rng, f, M, K, false), b = quantized(rng, f, N, K, true);
    const std::vector<std::uint32_t> c = c_bits(rng, static_cast<std::size_t>(M * N), 100);
    const CodeMatrix cm(Format::float32, M, N, c);
    const reference::Tensor acc(reference::DType::float32, {M, N}, std::vector<std::uint64_t>(c.begin(), c.end()));
    reference::ScaledMmaOptions o;
    o.hardware_extensions = true;  // fp6: the kind::mxf8f6f4 extension of cuda.tile's table
    const reference::Tensor want = reference::mma_scaled(a, b, acc, o);
    const std::vector<std::uint32_t> got = exact_gemm(a, b, cm, {1, GemmPath::reference});
    ASSERT_EQ(got.size(), want.codes().size());
    for (std::size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], want.codes()[i]) << to_string(f) << " output " << i;
  }
}

// Quantized data, every block format and the kind::mxf8f6f4 mixes, with and without C: the proof
// holds for nearly every output, so this is the double GEMM's own test.
TEST(ExactGemm, QuantizedDataEveryFormat) {
  using namespace block_formats;
  const std::vector<std::pair<BlockFormat, BlockFormat>> pairs = {
      {mxfp8_e4m3, mxfp8_e4m3}, {mxfp8_e5m2, mxfp8_e5m2}, {mxfp8_e4m3, mxfp8_e5m2}, {mxfp6_e2m3, mxfp6_e2m3},
      {mxfp6_e3m2, mxfp6_e3m2}, {mxfp4, mxfp4},           {mxfp4_block16, mxfp4_block16}, {nvfp4, nvfp4},
      {mxfp8_e4m3, mxfp4},      {mxfp8_e5m2, mxfp6_e3m2}};
  Rng rng(2);
  GemmPathStats total;
  std::size_t outputs = 0;
  for (const auto& [fa, fb] : pairs) {
    for (bool heavy : {false, true}) {
      const std::int64_t M = 150, N = 131, K = 200;  // K not a multiple of 32: zero-padded tails
      const BlockScaledTensor a = quantized(rng, fa, M, K, heavy), b = quantized(rng, fb, N, K, !heavy);
      const std::vector<std::uint32_t> c = c_bits(rng, static_cast<std::size_t>(M * N), heavy ? 1e4 : 10);
      for (const CodeMatrix& cm : {CodeMatrix(), CodeMatrix(Format::float32, M, N, c)}) {
        expect_paths_agree(a, b, cm, to_string(fa) + " x " + to_string(fb) + (heavy ? " heavy" : " gaussian"), &total);
        outputs += static_cast<std::size_t>(M * N);
      }
    }
  }
  // The data must take the proved route almost everywhere, and C's specials the others.
  EXPECT_GT(total.exact, outputs * 8 / 10);
  EXPECT_GT(total.special, 0u);
  EXPECT_GT(total.reference_outputs, 0u);
  std::printf("quantized: %zu outputs, %llu proved, %llu special, %llu by the reference\n", outputs,
              static_cast<unsigned long long>(total.exact), static_cast<unsigned long long>(total.special),
              static_cast<unsigned long long>(total.reference_outputs));
}

// Random bit patterns: NaN and Inf elements, NaN scales, C of every class; and scales over the
// whole e8m0 range, where many outputs' bit spans exceed what the proof accepts.
TEST(ExactGemm, RandomBitsAndWideScales) {
  using namespace block_formats;
  Rng rng(3);
  GemmPathStats total;
  for (const BlockFormat f : {mxfp8_e4m3, mxfp8_e5m2, mxfp6_e2m3, mxfp4, nvfp4}) {
    const int nan_scale = f.scale == Format::float8_ue4m3 ? 0x7F : 0xFF;
    const std::int64_t M = 40, N = 48, K = 128;
    // 1. Everything random: mostly NaN rows and columns.
    const std::vector<std::uint32_t> c = c_bits(rng, static_cast<std::size_t>(M * N), 1);
    const CodeMatrix cm(Format::float32, M, N, c);
    expect_paths_agree(raw(rng, f, M, K, 0, nan_scale), raw(rng, f, N, K, 0, nan_scale), cm, to_string(f) + " random", &total);
    // 2. Scales over the whole range but NaN; elements without NaN codes (e5m2 keeps its Inf).
    expect_paths_agree(raw(rng, f, M, K, 0, nan_scale - 1, false), raw(rng, f, N, K, 0, nan_scale - 1, false), cm,
                       to_string(f) + " wide scales", &total);
    // 3. Scales within a few binades, elements without NaN codes.
    const bool ue4m3 = f.scale == Format::float8_ue4m3;
    expect_paths_agree(raw(rng, f, M, K, ue4m3 ? 0x30 : 120, ue4m3 ? 0x40 : 134, false),
                       raw(rng, f, N, K, ue4m3 ? 0x30 : 120, ue4m3 ? 0x40 : 134, false), cm,
                       to_string(f) + " narrow scales", &total);
  }
  EXPECT_GT(total.exact, 0u);
  EXPECT_GT(total.special, 0u);
  EXPECT_GT(total.reference_outputs, 0u);
}

// The caller's floating-point mode (round toward zero, subnormals flushed on every thread:
// fp_mode.h) changes no bit: scales at the bottom of their range, so that sums and outputs are f32
// subnormals or underflow, C subnormal (which a flushing conversion to double had made 0), and the
// NVFP4 epilogue.
TEST(ExactGemm, TheCallersFloatingPointModeChangesNoBit) {
  using namespace block_formats;
  Rng rng(5);
  const std::int64_t M = 40, N = 48, K = 128;
  std::vector<std::uint32_t> tiny_c(static_cast<std::size_t>(M * N));
  for (auto& w : tiny_c) w = static_cast<std::uint32_t>(rng()) & 0x807FFFFFu;  // f32 subnormals and zeros
  const CodeMatrix cm(Format::float32, M, N, tiny_c);
  for (const BlockFormat f : {mxfp8_e4m3, mxfp8_e5m2, mxfp6_e2m3, mxfp4, nvfp4}) {
    const bool ue4m3 = f.scale == Format::float8_ue4m3;
    // e8m0 2^-127 .. 2^-117 on A and 2^-10 .. 2^0 on B; ue4m3's smallest codes on both.
    const BlockScaledTensor a = raw(rng, f, M, K, 0, ue4m3 ? 8 : 10, false);
    const BlockScaledTensor b = raw(rng, f, N, K, ue4m3 ? 0 : 117, ue4m3 ? 8 : 127, false);
    expect_paths_agree(a, b, cm, to_string(f) + " low scales, subnormal C", nullptr, true);
    expect_paths_agree(a, b, CodeMatrix(), to_string(f) + " low scales", nullptr, true);
    const BlockScaledTensor zero = raw(rng, f, M, K, 0, 0, false);
    std::vector<std::uint8_t> zeros(static_cast<std::size_t>(M * K), 0);
    const BlockScaledTensor za(zero.desc(), zeros, zero.scale_codes());
    expect_paths_agree(za, b, cm, to_string(f) + " zero A, subnormal C", nullptr, true);
  }
  Rng data_rng(6);
  const BlockScaledTensor a = quantized(data_rng, nvfp4, M, K, false), b = quantized(data_rng, nvfp4, N, K, true);
  expect_paths_agree(a, b, cm, "nvfp4 with its tensor scales, subnormal C", nullptr, true);
}

// Exact zero sums: zero rows, cancelling pairs, with C = +0, -0, absent and nonzero.
TEST(ExactGemm, ZeroSums) {
  BlockScaledDesc d;
  d.format = block_formats::mxfp8_e4m3;
  d.shape = {4, 64};
  // Row 0: zeros (+0); row 1: -0 everywhere; row 2: x and -x in k = 0 and 1; row 3: 1.0 in k = 0.
  std::vector<std::uint8_t> ea(4 * 64, 0);
  for (std::size_t k = 0; k < 64; ++k) ea[64 + k] = 0x80;
  ea[128] = 0x38, ea[129] = 0xB8, ea[192] = 0x38;
  std::vector<std::uint8_t> eb(3 * 64, 0x38);  // B columns: ones; column 2: -0
  for (std::size_t k = 0; k < 64; ++k) eb[128 + k] = 0x80;
  const BlockScaledTensor a(d, ea, std::vector<std::uint8_t>(8, 127));
  d.shape = {3, 64};
  const BlockScaledTensor b(d, eb, std::vector<std::uint8_t>(6, 127));
  for (std::uint32_t cv : {0u, 0x80000000u, 0x3F800000u, 0xBF800000u}) {
    const std::vector<std::uint32_t> c(12, cv);
    const std::vector<std::uint32_t> want =
        expect_paths_agree(a, b, CodeMatrix(Format::float32, 4, 3, c), "zero sums, C 0x" + std::to_string(cv));
    // Row 1 (-0) times a column of ones: every product -0; with C = -0 the sum is -0 (exact_sum.h).
    if (cv == 0x80000000u) {
      EXPECT_EQ(want[1 * 3 + 0], 0x80000000u);
    } else if (cv == 0u) {
      EXPECT_EQ(want[1 * 3 + 0], 0u);
    }
  }
  expect_paths_agree(a, b, CodeMatrix(), "zero sums without C");
}

// NVFP4 with two-level scaling: exact_gemm is the exact sum from +0, then FFMA(alpha, d, C) with
// alpha the f32 product of the decode scales (checked here with the host FPU and the reference's
// own operands, not through the emulator's epilogue).
TEST(ExactGemm, Nvfp4TensorScaleEpilogue) {
  Rng rng(4);
  const std::int64_t M = 33, N = 29, K = 256;
  const BlockScaledTensor a = quantized(rng, block_formats::nvfp4, M, K, false);
  const BlockScaledTensor b = quantized(rng, block_formats::nvfp4, N, K, true);
  ASSERT_NE(a.tensor_scale().decode, 1.0f);
  const std::vector<std::uint32_t> c = c_bits(rng, static_cast<std::size_t>(M * N), 1);
  const reference::ScaledOperand x = reference::scaled_operand(a, reference::Side::x);
  const reference::ScaledOperand y = reference::scaled_operand(b, reference::Side::y);
  const reference::Tensor d0 = reference::mma_scaled(x.values, x.scales, y.values, y.scales,
                                                     reference::Tensor::zeros(reference::DType::float32, {M, N}));
  const float alpha = a.tensor_scale().decode * b.tensor_scale().decode;
  const std::vector<std::uint32_t> got = expect_paths_agree(a, b, CodeMatrix(Format::float32, M, N, c), "nvfp4 epilogue");
  for (std::size_t i = 0; i < got.size(); ++i) {
    const float r = std::fma(alpha, std::bit_cast<float>(static_cast<std::uint32_t>(d0.codes()[i])), std::bit_cast<float>(c[i]));
    const std::uint32_t want = std::isnan(r) ? 0x7FFFFFFFu : std::bit_cast<std::uint32_t>(r);
    ASSERT_EQ(got[i], want) << "output " << i;
  }
}

// Rank-3 operands: each batch matrix as its own GEMM.
TEST(ExactGemm, Batches) {
  Rng rng(5);
  const std::int64_t Bt = 3, M = 17, N = 20, K = 96;
  const BlockFormat f = block_formats::mxfp8_e4m3;
  const BlockScaledTensor a = quantize(data(rng, Bt * M * K, false), {Bt, M, K}, KAxis::last, f, options_for(f));
  const BlockScaledTensor b = quantize(data(rng, Bt * N * K, true), {Bt, N, K}, KAxis::last, f, options_for(f));
  const std::vector<std::uint32_t> c = c_bits(rng, static_cast<std::size_t>(M * N), 10);
  const CodeMatrix cm(Format::float32, M, N, c);
  const std::vector<std::uint32_t> all = expect_paths_agree(a, b, cm, "batched");
  ASSERT_EQ(all.size(), static_cast<std::size_t>(Bt * M * N));
  const std::vector<std::uint8_t> ea = a.element_codes(), eb = b.element_codes(), sa = a.scale_codes(), sb = b.scale_codes();
  for (std::int64_t t = 0; t < Bt; ++t) {
    BlockScaledDesc d;
    d.format = f;
    d.shape = {M, K};
    const BlockScaledTensor at(d, {ea.begin() + t * M * K, ea.begin() + (t + 1) * M * K},
                               {sa.begin() + t * M * K / 32, sa.begin() + (t + 1) * M * K / 32});
    d.shape = {N, K};
    const BlockScaledTensor bt(d, {eb.begin() + t * N * K, eb.begin() + (t + 1) * N * K},
                               {sb.begin() + t * N * K / 32, sb.begin() + (t + 1) * N * K / 32});
    const std::vector<std::uint32_t> one = exact_gemm(at, bt, cm);
    EXPECT_TRUE(std::equal(one.begin(), one.end(), all.begin() + t * M * N)) << "batch " << t;
  }
}

TEST(ExactGemm, BadInput) {
  Rng rng(6);
  const BlockScaledTensor a = quantized(rng, block_formats::mxfp8_e4m3, 4, 64, false);
  EXPECT_NE(invalid_argument_message([&] { exact_gemm(a, quantized(rng, block_formats::nvfp4, 4, 64, false)); })
                .find("must share the scale type and the block size"),
            std::string::npos);
  EXPECT_NE(invalid_argument_message([&] { exact_gemm(a, quantized(rng, block_formats::mxfp8_e4m3, 4, 96, false)); }).find("K=64 but B has K=96"),
            std::string::npos);
  const std::vector<std::uint32_t> c(6);
  EXPECT_NE(invalid_argument_message([&] { exact_gemm(a, a, CodeMatrix(Format::float32, 2, 3, c)); }).find("C must be 4 x 4, got 2 x 3"),
            std::string::npos);
  const std::vector<std::uint8_t> c8(16);
  EXPECT_NE(invalid_argument_message([&] { exact_gemm(a, a, CodeMatrix(Format::float8_e4m3fn, 4, 4, c8)); }).find("C must hold f32 codes"),
            std::string::npos);
}

}  // namespace
}  // namespace blockscale::emulator
