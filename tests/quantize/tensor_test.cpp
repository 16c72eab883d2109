// SPDX-License-Identifier: Apache-2.0
// BlockScaledTensor: exact round trips, orientation (K first / last), batches, K padding, every
// packing and several scale layouts give the same logical codes, thread-count invariance,
// stochastic rounding bits, raw-buffer validation and option errors, dequantization variants.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cfloat>
#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <vector>

#include "blockscale/quantize.h"
#include "blockscale/quantize/detail/paths.h"
#include "expect_throw.h"
#include "fp_mode.h"

#if defined(_OPENMP)
#include <omp.h>
#endif

namespace {

using blockscale::test::expect_throw_with;

using namespace blockscale;
using ::testing::HasSubstr;

const float kNan = std::numeric_limits<float>::quiet_NaN();

std::vector<float> random_tensor(std::size_t n, std::uint32_t seed, bool specials = false) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_int_distribution<int> e(-20, 20), pct(0, 999);
  std::vector<float> x(n);
  for (auto& v : x) {
    v = std::ldexp(normal(gen), e(gen));
    if (specials) {
      const int p = pct(gen);
      if (p == 0) v = kNan;
      if (p == 1) v = -std::numeric_limits<float>::infinity();
      if (p == 2) v = 0x1p-140f;
    }
  }
  return x;
}

std::vector<float> transpose(const std::vector<float>& x, std::int64_t batch, std::int64_t rows, std::int64_t cols) {
  std::vector<float> t(x.size());
  for (std::int64_t b = 0; b < batch; ++b)
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t c = 0; c < cols; ++c) t[(b * cols + c) * rows + r] = x[(b * rows + r) * cols + c];
  return t;
}

template <class T>
std::vector<T> to_vec(std::span<const T> s) {
  return std::vector<T>(s.begin(), s.end());
}

// Bitwise equality of float vectors (NaN == NaN, -0 != +0).
std::vector<std::uint32_t> bits(const std::vector<float>& v) {
  std::vector<std::uint32_t> b(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) b[i] = std::bit_cast<std::uint32_t>(v[i]);
  return b;
}

// ---- Exact round trips: blocks built from representable values with one element at max_e, so
// ---- RCEIL picks X = 2^s exactly and every element is a grid value.

TEST(BlockScaledTensor, ExactRoundTripEveryFormatPackingAndLayout) {
  std::mt19937 gen(5);
  std::uniform_int_distribution<int> scale_exp(-60, 60);
  for (const BlockFormat& f : {block_formats::mxfp8_e4m3, block_formats::mxfp8_e5m2, block_formats::mxfp6_e2m3,
                               block_formats::mxfp6_e3m2, block_formats::mxfp4, block_formats::mxfp4_block16,
                               block_formats::nvfp4}) {
    const std::int64_t rows = 130, K = 4 * f.block_size;
    const std::uint32_t max_code = max_finite_code(f.element);
    std::uniform_int_distribution<std::uint32_t> code(0, code_mask(f.element));
    std::vector<float> x(static_cast<std::size_t>(rows * K));
    for (std::int64_t blk = 0; blk < rows * K / f.block_size; ++blk) {
      // NVFP4 (TE, S_enc = 1): block scale 2^s for s in [-9, 8] (e4m3 powers of two).
      const int s = has_tensor_scale(f) ? scale_exp(gen) % 9 : scale_exp(gen);
      for (int i = 0; i < f.block_size; ++i) {
        std::uint32_t c = code(gen);
        if (is_nan(f.element, c) || classify(f.element, c) == ValueClass::infinite) c = 0;
        if (i == blk % f.block_size) c = max_code | (c & sign_mask(f.element));
        x[static_cast<std::size_t>(blk * f.block_size + i)] = std::ldexp(to_float(f.element, c), s);
      }
    }
    QuantizeOptions o = has_tensor_scale(f) ? recipes::nvfp4_transformer_engine()
                                             : recipes::transformer_engine_mxfp8(f.element);
    if (has_tensor_scale(f)) {
      o.tensor_scale = TensorScaleSource::given_amax;
      o.tensor_amax = 2688.0f;
    }
    std::vector<Packing> packings = {Packing::byte_per_element, dense_packing(f.element)};
    if (f.element == Format::float4_e2m1fn) packings.push_back(Packing::fp4_padded16);
    if (info(f.element).exponent_bits + info(f.element).mantissa_bits == 5) packings.push_back(Packing::fp6_padded16);
    for (Packing p : packings) {
      for (ScaleLayoutKind lk : {ScaleLayoutKind::linear, ScaleLayoutKind::tiled_128x4, ScaleLayoutKind::tiled_8x4}) {
        const BlockScaledTensor t = quantize(x, {rows, K}, KAxis::last, f, o, p, ScaleLayout::of(lk));
        EXPECT_EQ(bits(dequantize(t)), bits(x)) << to_string(f) << " " << to_string(p) << " " << to_string(lk);
      }
    }
  }
}

TEST(BlockScaledTensor, PackingsAndLayoutsHoldTheSameLogicalCodes) {
  const std::int64_t rows = 200, K = 96;
  const std::vector<float> x = random_tensor(static_cast<std::size_t>(rows * K), 11, true);
  const BlockFormat f = block_formats::mxfp6_e3m2;
  const QuantizeOptions o = recipes::ocp(f.element);
  const BlockScaledTensor ref = quantize(x, {rows, K}, KAxis::last, f, o, Packing::byte_per_element);
  for (Packing p : {Packing::fp6_dense, Packing::fp6_padded16}) {
    for (const ScaleLayout& l : {ScaleLayout::of(ScaleLayoutKind::tiled_128x4), ScaleLayout::of(ScaleLayoutKind::tiled_128x4_k8),
                                 ScaleLayout::of(ScaleLayoutKind::cdna4_mfma16)}) {
      const BlockScaledTensor t = quantize(x, {rows, K}, KAxis::last, f, o, p, l);
      EXPECT_EQ(t.element_codes(), ref.element_codes());
      EXPECT_EQ(t.scale_codes(), ref.scale_codes());
      // The accessors agree with the bulk views, and the tiled bytes sit where the layout says.
      for (std::int64_t r : {0, 1, 127, 128, 199}) {
        for (std::int64_t kb = 0; kb < 3; ++kb) {
          EXPECT_EQ(t.scale_code(0, r, kb), ref.scale_codes()[static_cast<std::size_t>(r * 3 + kb)]);
          EXPECT_EQ(t.scales()[static_cast<std::size_t>(offset(l, rows, 3, r, kb))], t.scale_code(0, r, kb));
        }
        for (std::int64_t k : {0, 1, 15, 16, 17, 95}) {
          EXPECT_EQ(t.element_code(0, r, k), ref.element_codes()[static_cast<std::size_t>(r * K + k)]);
        }
      }
    }
  }
}

// The trtllm-gen row orders: quantizing straight into a row-ordered layout (fused and staged paths)
// stores the scales of logical row row_order_indices[j] where the plain layout stores row j, and
// the logical codes do not change.
TEST(BlockScaledTensor, RowOrderedScaleLayoutsStoreTheReorderedRows) {
  const std::int64_t batch = 2, rows = 256, K = 128;
  const std::vector<float> x = random_tensor(static_cast<std::size_t>(batch * rows * K), 17, true);
  for (const quantize_detail::QuantizePath path : {quantize_detail::QuantizePath::automatic, quantize_detail::QuantizePath::generic}) {
    quantize_detail::set_quantize_path(path);
    for (const BlockFormat& f : {block_formats::nvfp4, block_formats::mxfp4}) {
      QuantizeOptions o = has_tensor_scale(f) ? recipes::nvfp4_transformer_engine() : recipes::ocp(f.element);
      const std::int64_t kb = K / f.block_size;
      const ScaleLayout plain = ScaleLayout::of(ScaleLayoutKind::tiled_128x4);
      const BlockScaledTensor ref = quantize(x, {batch, rows, K}, KAxis::last, f, o, Packing::fp4_dense, plain);
      for (RowOrder order : {RowOrder::gated_act_trtllm_shuffle32, RowOrder::trtllm_shuffle16}) {
        const std::vector<std::int64_t> src = row_order_indices(order, rows);
        for (ScaleLayoutKind kind : {ScaleLayoutKind::tiled_128x4, ScaleLayoutKind::linear}) {
          const ScaleLayout l = ScaleLayout::row_ordered(kind, order);
          const BlockScaledTensor t = quantize(x, {batch, rows, K}, KAxis::last, f, o, Packing::fp4_dense, l);
          ASSERT_EQ(t.scale_codes(), ref.scale_codes()) << to_string(l);
          ASSERT_EQ(t.elements().size(), ref.elements().size());
          EXPECT_TRUE(std::equal(t.elements().begin(), t.elements().end(), ref.elements().begin())) << to_string(l);
          const ScaleLayout unordered = ScaleLayout::of(kind);
          const std::int64_t size = storage_size(l, rows, kb);
          for (std::int64_t b = 0; b < batch; ++b)
            for (std::int64_t j = 0; j < rows; ++j)
              for (std::int64_t c = 0; c < kb; ++c)
                ASSERT_EQ(t.scales()[static_cast<std::size_t>(b * size + offset(unordered, rows, kb, j, c))],
                          ref.scale_code(b, src[static_cast<std::size_t>(j)], c))
                    << to_string(l) << " batch " << b << " stored row " << j << " block " << c;
        }
      }
    }
  }
  quantize_detail::set_quantize_path(quantize_detail::QuantizePath::automatic);
}

// ---- Orientation and batches: B given as [K, N] (KAxis::first) quantizes down its columns, the
// ---- same as B^T = [N, K] with KAxis::last; dequantize returns the source orientation.

TEST(BlockScaledTensor, KFirstEqualsTransposedKLast) {
  const std::int64_t batch = 3, K = 64, N = 37;
  const std::vector<float> b = random_tensor(static_cast<std::size_t>(batch * K * N), 21, true);
  const std::vector<float> bt = transpose(b, batch, K, N);  // [batch, N, K]
  for (const BlockFormat& f : {block_formats::mxfp8_e5m2, block_formats::nvfp4}) {
    const QuantizeOptions o = has_tensor_scale(f) ? recipes::nvfp4_torchao() : recipes::torchao(f.element);
    const ScaleLayout l = ScaleLayout::of(ScaleLayoutKind::tiled_128x4);
    const BlockScaledTensor tf = quantize(b, {batch, K, N}, KAxis::first, f, o, std::nullopt, l);
    const BlockScaledTensor tl = quantize(bt, {batch, N, K}, KAxis::last, f, o, std::nullopt, l);
    EXPECT_EQ(tf.desc().rows(), N);
    EXPECT_EQ(tf.desc().k(), K);
    EXPECT_EQ(tf.desc().batch(), batch);
    EXPECT_EQ(to_vec(tf.elements()), to_vec(tl.elements()));
    EXPECT_EQ(to_vec(tf.scales()), to_vec(tl.scales()));
    EXPECT_EQ(bits(dequantize(tf)), bits(transpose(dequantize(tl), batch, N, K)));
  }
}

TEST(BlockScaledTensor, BatchesAreIndependentMatrices) {
  const std::int64_t batch = 2, rows = 5, K = 64;
  const std::vector<float> x = random_tensor(static_cast<std::size_t>(batch * rows * K), 31);
  const BlockFormat f = block_formats::mxfp8_e4m3;
  const QuantizeOptions o = recipes::ocp(f.element);
  const ScaleLayout l = ScaleLayout::of(ScaleLayoutKind::tiled_128x4);
  const BlockScaledTensor t = quantize(x, {batch, rows, K}, KAxis::last, f, o, std::nullopt, l);
  EXPECT_EQ(t.desc().scale_batch_stride(), 512);  // one 128 x 4 atom per matrix
  for (std::int64_t b = 0; b < batch; ++b) {
    const std::vector<float> xb(x.begin() + b * rows * K, x.begin() + (b + 1) * rows * K);
    const BlockScaledTensor tb = quantize(xb, {rows, K}, KAxis::last, f, o, std::nullopt, l);
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t kb = 0; kb < 2; ++kb) EXPECT_EQ(t.scale_code(b, r, kb), tb.scale_code(0, r, kb));
  }
}

// A caller's floating-point mode changes no code: MX (OCP, RCEIL), NVFP4 (TransformerEngine, with
// its tensor scale) and fp8 with fp32 scales (DeepGEMM 1x128) quantize, and dequantize, a tensor
// of subnormal-heavy values to the same bits under round-toward-zero with subnormals flushed on
// every OpenMP thread (fp_mode.h) as in the default mode. The rows are many, so every thread
// quantizes some (under DAZ a thread without IEEE mode reads its subnormal inputs as zero).
TEST(BlockScaledTensor, TheCallersFloatingPointModeChangesNoBit) {
  const std::int64_t rows = 256, K = 1024;
  std::mt19937_64 rng(2026);
  std::vector<float> x(static_cast<std::size_t>(rows * K));
  for (std::size_t i = 0; i < x.size(); ++i) {
    // Rows alternate between subnormal values and values around 2^-126 .. 2^-100 (whose scaled
    // elements and scale products cross the subnormal boundary), a few ordinary ones among them.
    const auto w = static_cast<std::uint32_t>(rng());
    const std::size_t row = i / static_cast<std::size_t>(K);
    x[i] = row % 2 == 0 ? std::bit_cast<float>(w & 0x807FFFFFu)
                        : std::ldexp(std::bit_cast<float>((w & 0x807FFFFFu) | 0x3F800000u), -100 - static_cast<int>(w % 27));
    if (w % 61 == 0) x[i] = std::bit_cast<float>((w & 0x807FFFFFu) | 0x3F800000u);
  }
  const auto bits = [](const std::vector<float>& v) {
    std::vector<std::uint32_t> b(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) b[i] = std::bit_cast<std::uint32_t>(v[i]);
    return b;
  };
  struct Case {
    BlockFormat f;
    QuantizeOptions o;
  };
  const Case cases[] = {{block_formats::mxfp8_e4m3, recipes::ocp(Format::float8_e4m3fn)},
                        {block_formats::mxfp4, recipes::ocp(Format::float4_e2m1fn)},
                        {block_formats::nvfp4, recipes::nvfp4_transformer_engine()}};
  for (const Case& c : cases) {
    const BlockScaledTensor want = quantize(x, {rows, K}, KAxis::last, c.f, c.o);
    const std::vector<std::uint32_t> want_back = bits(dequantize(want));
    std::vector<std::uint8_t> elements, scales;
    std::vector<std::uint32_t> back;
    {
      const test::HostileFpMode hostile;
      const BlockScaledTensor got = quantize(x, {rows, K}, KAxis::last, c.f, c.o);
      elements.assign(got.elements().begin(), got.elements().end());
      scales.assign(got.scales().begin(), got.scales().end());
      back = bits(dequantize(want));
    }
    EXPECT_EQ(elements, std::vector<std::uint8_t>(want.elements().begin(), want.elements().end())) << to_string(c.f.element);
    EXPECT_EQ(scales, std::vector<std::uint8_t>(want.scales().begin(), want.scales().end())) << to_string(c.f.element);
    EXPECT_EQ(back, want_back) << to_string(c.f.element);
  }
  const Fp8ScaledMatrix want = quantize_fp8_scaled(x, rows, K, KAxis::last, Format::float8_e4m3fn,
                                                   Fp8Granularity::block_1x128, Fp8ScaleRecipe::deepgemm);
  std::vector<std::uint8_t> codes;
  std::vector<float> fp8_scales;
  {
    const test::HostileFpMode hostile;
    const Fp8ScaledMatrix got = quantize_fp8_scaled(x, rows, K, KAxis::last, Format::float8_e4m3fn,
                                                    Fp8Granularity::block_1x128, Fp8ScaleRecipe::deepgemm);
    codes = got.codes;
    fp8_scales = got.scales;
  }
  EXPECT_EQ(codes, want.codes);
  EXPECT_EQ(bits(fp8_scales), bits(want.scales));
}

// The same with NVFP4 (TransformerEngine: NaN elements left out of the global amax, which sets the
// tensor scale) where the global amax is a subnormal that sits in a block holding a NaN or in the
// zero-padded K tail: the two places where a vector float maximum (vmaxps, which reads a subnormal
// as 0 under DAZ) had taken it on the OpenMP threads of the fused path. K = 1000 leaves a tail of
// 8; the rows are many, so every thread takes some.
TEST(BlockScaledTensor, TheCallersFloatingPointModeChangesNoGlobalAmaxInNanBlocksOrTheKTail) {
  const std::int64_t rows = 256, K = 1000;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  QuantizeOptions o = recipes::nvfp4_transformer_engine();
  o.k_tail = KTail::zero_pad;
  std::mt19937_64 rng(20261130);
  const auto at = [&](std::int64_t r, std::int64_t k) { return static_cast<std::size_t>(r * K + k); };
  struct Data {
    const char* what;
    std::vector<float> x;
  };
  std::vector<Data> data;
  {
    std::vector<float> x(static_cast<std::size_t>(rows * K), 0.0f);
    x[at(rows - 1, K - 1)] = std::bit_cast<float>(1u);  // 2^-149, the only nonzero value, in the tail
    data.push_back({"one subnormal in the last row's tail", x});
    x.assign(x.size(), 0.0f);
    x[at(rows - 1, 16 * 5 + 3)] = nan;
    x[at(rows - 1, 16 * 5 + 9)] = std::bit_cast<float>(0x00012345u);  // in the NaN's block
    data.push_back({"one subnormal in a block holding a NaN", x});
    for (float& v : x) v = std::bit_cast<float>(static_cast<std::uint32_t>(rng()) & 0x807FFFFFu);
    for (std::int64_t r = 0; r < rows; ++r) x[at(r, 16 * (r % 62) + 7)] = nan;  // a NaN block per row
    // The largest magnitude of all, a subnormal, in a NaN block of one row and the tail of another.
    x[at(rows / 2, 16 * (rows / 2 % 62) + 1)] = std::bit_cast<float>(0x007FFFFFu);
    data.push_back({"random subnormals, a NaN block per row, the largest in a NaN block", x});
    x[at(rows / 2, 16 * (rows / 2 % 62) + 1)] = 0.0f;
    x[at(rows / 3, K - 2)] = std::bit_cast<float>(0x807FFFFFu);
    data.push_back({"random subnormals, a NaN block per row, the largest in a tail", x});
  }
  for (const Data& d : data) {
    const BlockScaledTensor want = quantize(d.x, {rows, K}, KAxis::last, block_formats::nvfp4, o);
    std::vector<std::uint8_t> elements, scales;
    TensorScale ts;
    {
      const test::HostileFpMode hostile;
      const BlockScaledTensor got = quantize(d.x, {rows, K}, KAxis::last, block_formats::nvfp4, o);
      elements.assign(got.elements().begin(), got.elements().end());
      scales.assign(got.scales().begin(), got.scales().end());
      ts = got.tensor_scale();
    }
    EXPECT_EQ(std::bit_cast<std::uint32_t>(ts.amax), std::bit_cast<std::uint32_t>(want.tensor_scale().amax)) << d.what;
    EXPECT_EQ(std::bit_cast<std::uint32_t>(ts.encode), std::bit_cast<std::uint32_t>(want.tensor_scale().encode)) << d.what;
    EXPECT_EQ(std::bit_cast<std::uint32_t>(ts.decode), std::bit_cast<std::uint32_t>(want.tensor_scale().decode)) << d.what;
    EXPECT_EQ(elements, std::vector<std::uint8_t>(want.elements().begin(), want.elements().end())) << d.what;
    EXPECT_EQ(scales, std::vector<std::uint8_t>(want.scales().begin(), want.scales().end())) << d.what;
  }
}

// ---- K not a multiple of the block size.

TEST(BlockScaledTensor, KTailRejectedOrZeroPadded) {
  const std::int64_t rows = 3, K = 40;
  const std::vector<float> x = random_tensor(static_cast<std::size_t>(rows * K), 41);
  const BlockFormat f = block_formats::mxfp4;
  QuantizeOptions o = recipes::ocp(f.element);
  try {
    quantize(x, {rows, K}, KAxis::last, f, o);
    ADD_FAILURE() << "K = 40 with blocks of 32 must be refused";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("K = 40 is not a multiple of the block size 32"));
    EXPECT_THAT(e.what(), HasSubstr("KTail::zero_pad"));
  }
  o.k_tail = KTail::zero_pad;
  const BlockScaledTensor t = quantize(x, {rows, K}, KAxis::last, f, o);
  EXPECT_EQ(t.desc().k_blocks(), 2);
  EXPECT_EQ(t.desc().k_stored(), 64);
  // The same as padding the input by hand.
  std::vector<float> padded(static_cast<std::size_t>(rows * 64), 0.0f);
  for (std::int64_t r = 0; r < rows; ++r) std::copy_n(x.begin() + r * K, K, padded.begin() + r * 64);
  o.k_tail = KTail::reject;
  const BlockScaledTensor p = quantize(padded, {rows, 64}, KAxis::last, f, o);
  EXPECT_EQ(t.element_codes(), p.element_codes());
  EXPECT_EQ(t.scale_codes(), p.scale_codes());
  const std::vector<float> back = dequantize(t);
  ASSERT_EQ(back.size(), x.size());
  const std::vector<float> back_p = dequantize(p);
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t k = 0; k < K; ++k) EXPECT_EQ(back[r * K + k], back_p[r * 64 + k]);
  // K first with padding: B = [40, rows].
  o.k_tail = KTail::zero_pad;
  const BlockScaledTensor tf = quantize(transpose(x, 1, rows, K), {K, rows}, KAxis::first, f, o);
  EXPECT_EQ(tf.element_codes(), t.element_codes());
}

// The K padding holds +0 codes even in a block whose scale is NaN (layouts.md (c): padded data must
// be finite zeros): there the padded inputs times the block's NaN multiplier would convert to NaN
// codes, and the library would refuse its own buffers. Every MX element format (dense and padded16
// packings), NaN and Inf amaxes, the torchao two-level NVFP4 tensor of zeros (P = 0: every scale
// NaN), K last and K first, on the fused and the generic path.
TEST(BlockScaledTensor, KPaddingHoldsZeroCodesUnderNaNScales) {
  struct Case {
    BlockFormat f;
    QuantizeOptions o;
    Packing packing;
    float poison;  // written at k = 35 of row 1 (the tail block); 0 for the all-zero tensor
  };
  std::vector<Case> cases;
  for (const BlockFormat& f : {block_formats::mxfp8_e4m3, block_formats::mxfp8_e5m2, block_formats::mxfp6_e2m3,
                               block_formats::mxfp6_e3m2, block_formats::mxfp4}) {
    std::vector<Packing> packings{dense_packing(f.element)};
    if (f.element == Format::float4_e2m1fn) packings.push_back(Packing::fp4_padded16);
    if (f.element == Format::float6_e2m3fn || f.element == Format::float6_e3m2fn) packings.push_back(Packing::fp6_padded16);
    for (const Packing p : packings) {
      cases.push_back({f, recipes::ocp(f.element), p, std::numeric_limits<float>::quiet_NaN()});
      QuantizeOptions inf_nan = recipes::ocp(f.element);
      inf_nan.inf = BlockInf::nan_scale;
      cases.push_back({f, inf_nan, p, std::numeric_limits<float>::infinity()});
    }
  }
  cases.push_back({block_formats::nvfp4, recipes::nvfp4_torchao(true), Packing::fp4_dense, 0.0f});
  const std::int64_t rows = 3, K = 40;
  int checked = 0;
  for (const quantize_detail::QuantizePath path : {quantize_detail::QuantizePath::automatic, quantize_detail::QuantizePath::generic}) {
    quantize_detail::set_quantize_path(path);
    for (Case c : cases) {
      c.o.k_tail = KTail::zero_pad;
      std::vector<float> x = c.poison == 0.0f ? std::vector<float>(rows * K, 0.0f)
                                              : random_tensor(static_cast<std::size_t>(rows * K), 43);
      if (c.poison != 0.0f) x[1 * K + 35] = c.poison;
      for (const KAxis axis : {KAxis::last, KAxis::first}) {
        const BlockScaledTensor t = axis == KAxis::last
                                        ? quantize(x, {rows, K}, axis, c.f, c.o, c.packing)
                                        : quantize(transpose(x, 1, rows, K), {K, rows}, axis, c.f, c.o, c.packing);
        const std::int64_t ks = t.desc().k_stored();
        const std::vector<std::uint8_t> codes = t.element_codes();
        for (std::int64_t r = 0; r < rows; ++r)
          for (std::int64_t k = K; k < ks; ++k)
            ASSERT_EQ(codes[static_cast<std::size_t>(r * ks + k)], 0)
                << to_string(c.f.element) << " " << to_string(c.packing) << " row " << r << " k " << k;
        // The tail block's scale is NaN: the case tests what it should.
        const std::uint8_t nan_scale = c.f.scale == Format::float8_e8m0fnu ? 0xFF : 0x7F;
        ASSERT_EQ(t.scale_code(0, 1, 1), nan_scale) << to_string(c.f.element);
        RawBufferOptions ro;
        ro.k_tail = KTail::zero_pad;
        ro.allow_nan_scales = true;
        EXPECT_NO_THROW(BlockScaledTensor(t.desc(), {t.elements().begin(), t.elements().end()},
                                          {t.scales().begin(), t.scales().end()}, t.tensor_scale(), ro));
        ++checked;
      }
    }
  }
  quantize_detail::set_quantize_path(quantize_detail::QuantizePath::automatic);
  EXPECT_EQ(checked, 2 * 2 * static_cast<int>(cases.size()));
}

// ---- Thread count: every row is independent, so 1, 2, 3 or 7 threads give the same bytes.

TEST(BlockScaledTensor, ResultsDoNotDependOnThreadCount) {
#if defined(_OPENMP)
  const std::int64_t rows = 301, K = 128;
  const std::vector<float> x = random_tensor(static_cast<std::size_t>(rows * K), 51, true);
  const int saved = omp_get_max_threads();
  for (KAxis axis : {KAxis::last, KAxis::first}) {
    for (const BlockFormat& f : {block_formats::mxfp8_e4m3, block_formats::nvfp4}) {
      const QuantizeOptions o = has_tensor_scale(f) ? recipes::nvfp4_transformer_engine()
                                                     : recipes::transformer_engine_mxfp8(f.element);
      const std::vector<std::int64_t> shape = axis == KAxis::last ? std::vector<std::int64_t>{rows, K}
                                                                  : std::vector<std::int64_t>{K, rows};
      omp_set_num_threads(1);
      const BlockScaledTensor one = quantize(x, shape, axis, f, o, std::nullopt, ScaleLayout::of(ScaleLayoutKind::tiled_128x4));
      for (int n : {2, 3, 7}) {
        omp_set_num_threads(n);
        const BlockScaledTensor t = quantize(x, shape, axis, f, o, std::nullopt, ScaleLayout::of(ScaleLayoutKind::tiled_128x4));
        EXPECT_EQ(to_vec(t.elements()), to_vec(one.elements())) << n << " threads";
        EXPECT_EQ(to_vec(t.scales()), to_vec(one.scales())) << n << " threads";
        EXPECT_EQ(bits(dequantize(t)), bits(dequantize(one))) << n << " threads";
      }
    }
  }
  omp_set_num_threads(saved);
#else
  GTEST_SKIP() << "built without OpenMP: a single thread runs every row";
#endif
}

// ---- Stochastic rounding: one caller word per input element, indexed like the input.

TEST(BlockScaledTensor, StochasticRoundingUsesOneWordPerInputElement) {
  const std::int64_t rows = 4, K = 64;
  const std::vector<float> x = random_tensor(static_cast<std::size_t>(rows * K), 61);
  std::mt19937 gen(3);
  std::vector<std::uint32_t> r(x.size());
  for (auto& w : r) w = gen();
  QuantizeOptions o = recipes::nvfp4_transformer_engine();
  o.element.rounding = Rounding::stochastic;
  o.element.stochastic_bits = 8;
  const BlockFormat f = block_formats::nvfp4;
  const BlockScaledTensor a = quantize(x, {rows, K}, KAxis::last, f, o, std::nullopt, {}, r);
  const BlockScaledTensor b = quantize(x, {rows, K}, KAxis::last, f, o, std::nullopt, {}, r);
  EXPECT_EQ(to_vec(a.elements()), to_vec(b.elements()));
  const BlockScaledTensor rne = quantize(x, {rows, K}, KAxis::last, f, recipes::nvfp4_transformer_engine());
  EXPECT_NE(a.element_codes(), rne.element_codes());
  EXPECT_EQ(a.scale_codes(), rne.scale_codes());  // SR changes elements only
  // K first: the words follow the input, so transposing both gives the same tensor.
  const BlockScaledTensor c = quantize(transpose(x, 1, rows, K), {K, rows}, KAxis::first, f, o, std::nullopt, {},
                                       [&] {
                                         std::vector<std::uint32_t> rt(r.size());
                                         for (std::int64_t i = 0; i < rows; ++i)
                                           for (std::int64_t k = 0; k < K; ++k) rt[k * rows + i] = r[i * K + k];
                                         return rt;
                                       }());
  EXPECT_EQ(c.element_codes(), a.element_codes());
  EXPECT_THROW(quantize(x, {rows, K}, KAxis::last, f, o), std::invalid_argument);  // no words
  EXPECT_THROW(quantize(x, {rows, K}, KAxis::last, f, recipes::nvfp4_transformer_engine(), std::nullopt, {}, r),
               std::invalid_argument);  // words without stochastic rounding
}

// ---- Raw buffers.

TEST(BlockScaledTensor, RawBuffersRoundTrip) {
  const std::int64_t rows = 100, K = 64;
  const std::vector<float> x = random_tensor(static_cast<std::size_t>(rows * K), 71);
  for (const BlockFormat& f : {block_formats::mxfp4, block_formats::nvfp4}) {
    const QuantizeOptions o = has_tensor_scale(f) ? recipes::nvfp4_torchao() : recipes::ocp(f.element);
    const BlockScaledTensor t = quantize(x, {rows, K}, KAxis::last, f, o, std::nullopt,
                                         ScaleLayout::of(ScaleLayoutKind::tiled_128x4));
    const BlockScaledTensor raw(t.desc(), to_vec(t.elements()), to_vec(t.scales()), t.tensor_scale());
    EXPECT_EQ(raw.element_codes(), t.element_codes());
    EXPECT_EQ(raw.scale_codes(), t.scale_codes());
    EXPECT_EQ(bits(dequantize(raw)), bits(dequantize(t)));
  }
}

TEST(BlockScaledTensor, RawBufferValidationNamesTheRule) {
  const std::int64_t rows = 100, K = 64;
  const std::vector<float> x = random_tensor(static_cast<std::size_t>(rows * K), 81);
  const BlockFormat f = block_formats::mxfp4;
  const ScaleLayout tiled = ScaleLayout::of(ScaleLayoutKind::tiled_128x4);
  const BlockScaledTensor t = quantize(x, {rows, K}, KAxis::last, f, recipes::ocp(f.element), std::nullopt, tiled);
  const BlockScaledDesc d = t.desc();
  const std::vector<std::uint8_t> el = to_vec(t.elements()), sc = to_vec(t.scales());

  expect_throw_with([&] { BlockScaledTensor(d, std::vector<std::uint8_t>(el.size() - 1), sc); }, "element buffer has");
  expect_throw_with([&] { BlockScaledTensor(d, el, std::vector<std::uint8_t>(sc.size() + 1)); }, "scale buffer has");
  // A NaN scale (e8m0 0xFF) at logical (0, 3, 1).
  std::vector<std::uint8_t> nan_sc = sc;
  nan_sc[static_cast<std::size_t>(offset(tiled, rows, 2, 3, 1))] = 0xFF;
  expect_throw_with([&] { BlockScaledTensor(d, el, nan_sc); }, "is NaN");
  expect_throw_with([&] { BlockScaledTensor(d, el, nan_sc); }, "(batch 0, row 3, block 1)");
  RawBufferOptions allow;
  allow.allow_nan_scales = true;
  const BlockScaledTensor nan_t(d, el, nan_sc, TensorScale{kNan, 1.0f, 1.0f}, allow);
  const std::vector<float> v = dequantize(nan_t);
  for (std::int64_t k = 32; k < 64; ++k) EXPECT_TRUE(std::isnan(v[static_cast<std::size_t>(3 * K + k)]));
  EXPECT_FALSE(std::isnan(v[static_cast<std::size_t>(3 * K + 31)]));
  // Layout padding (rows 100..127 of the 128-row atom, blocks 2..3) must hold 0x00.
  std::vector<std::uint8_t> pad_sc = sc;
  pad_sc[static_cast<std::size_t>(offset(tiled, 128, 4, 120, 3))] = 0x01;
  expect_throw_with([&] { BlockScaledTensor(d, el, pad_sc); }, "layout padding and must hold 0x00");
  // MX formats carry no tensor scale.
  expect_throw_with([&] { BlockScaledTensor(d, el, sc, TensorScale{kNan, 1.0f, 2.0f}); }, "no per-tensor scale");
  // fp4 dense bytes cannot hold excess bits, but one-per-byte storage can: 0x10 is not an e2m1 code.
  BlockScaledDesc bytes = d;
  bytes.packing = Packing::byte_per_element;
  std::vector<std::uint8_t> codes = t.element_codes();
  codes[5] = 0x10;
  expect_throw_with([&] { BlockScaledTensor(bytes, codes, sc); }, "bits above the format's 4-bit width");
  // The shared-memory padded form needs zero gaps.
  BlockScaledDesc pad16 = d;
  pad16.packing = Packing::fp4_padded16;
  std::vector<std::uint8_t> p16(pad16.element_bytes(), 0);
  p16[8] = 1;
  expect_throw_with([&] { BlockScaledTensor(pad16, p16, sc); }, "padding byte");
  // Hopper fp32 layouts do not hold byte scales.
  BlockScaledDesc fp32l = d;
  fp32l.scale_layout = ScaleLayout::of(ScaleLayoutKind::deepgemm_sm90_sfa);
  expect_throw_with([&] { BlockScaledTensor(fp32l, el, sc); }, "holds fp32");
  // Shapes and formats.
  BlockScaledDesc rank1 = d;
  rank1.shape = {64};
  expect_throw_with([&] { BlockScaledTensor(rank1, el, sc); }, "rank 2");
  BlockScaledDesc zero = d;
  zero.shape = {0, 64};
  expect_throw_with([&] { BlockScaledTensor(zero, el, sc); }, "at least 1");
  BlockScaledDesc fmt = d;
  fmt.format = {Format::float8_e4m3fn, Format::float8_ue4m3, 16};
  expect_throw_with([&] { BlockScaledTensor(fmt, el, sc); }, "ue4m3 scales (NVFP4) take e2m1 elements");
  BlockScaledDesc k40 = d;
  k40.shape = {rows, 40};
  expect_throw_with([&] { BlockScaledTensor(k40, el, sc); }, "not a multiple of the block size");
  // Sizes: at most 2^56 elements, whether or not the product overflows int64.
  BlockScaledDesc huge = d;
  huge.shape = {std::int64_t{1} << 29, std::int64_t{1} << 28};
  expect_throw_with([&] { BlockScaledTensor(huge, el, sc); }, "the element count exceeds 2^56");
  huge.shape = {std::int64_t{1} << 40, std::int64_t{1} << 40};
  expect_throw_with([&] { BlockScaledTensor(huge, el, sc); }, "the element count exceeds 2^56");
}

TEST(BlockScaledTensor, RawNvfp4Checks) {
  const std::int64_t rows = 8, K = 40;
  const std::vector<float> x = random_tensor(static_cast<std::size_t>(rows * K), 91);
  QuantizeOptions o = recipes::nvfp4_transformer_engine();
  o.k_tail = KTail::zero_pad;
  const BlockScaledTensor t = quantize(x, {rows, K}, KAxis::last, block_formats::nvfp4, o);
  const BlockScaledDesc d = t.desc();
  RawBufferOptions pad;
  pad.k_tail = KTail::zero_pad;
  const std::vector<std::uint8_t> el = to_vec(t.elements()), sc = to_vec(t.scales());
  EXPECT_NO_THROW(BlockScaledTensor(d, el, sc, t.tensor_scale(), pad));
  expect_throw_with([&] { BlockScaledTensor(d, el, sc, t.tensor_scale()); }, "not a multiple of the block size 16");
  std::vector<std::uint8_t> bad_pad = el;
  bad_pad[20] = 0x30;  // codes 40, 41 of row 0: K padding
  expect_throw_with([&] { BlockScaledTensor(d, bad_pad, sc, t.tensor_scale(), pad); }, "K padding must hold zero codes");
  std::vector<std::uint8_t> sign = sc;
  sign[1] |= 0x80;
  expect_throw_with([&] { BlockScaledTensor(d, el, sign, t.tensor_scale(), pad); }, "has bit 7 set");
  std::vector<std::uint8_t> nan = sc;
  nan[1] = 0x7F;
  expect_throw_with([&] { BlockScaledTensor(d, el, nan, t.tensor_scale(), pad); }, "is NaN");
  expect_throw_with([&] { BlockScaledTensor(d, el, sc, TensorScale{1.0f, 1.0f, -1.0f}, pad); }, "finite and >= 0");
  expect_throw_with([&] { BlockScaledTensor(d, el, sc, TensorScale{1.0f, 1.0f, kNan}, pad); }, "finite and >= 0");
  // The amax is a magnitude: a negative one would flip TransformerEngine's dequantized signs. NaN
  // (not recorded) and -0 are taken.
  expect_throw_with([&] { BlockScaledTensor(d, el, sc, TensorScale{-5.0f, 1.0f, 1.0f}, pad); }, "must not be negative");
  EXPECT_NO_THROW(BlockScaledTensor(d, el, sc, TensorScale{kNan, 1.0f, 1.0f}, pad));
  EXPECT_NO_THROW(BlockScaledTensor(d, el, sc, TensorScale{-0.0f, 1.0f, 1.0f}, pad));
  // A negative subnormal is negative in any mode (a float comparison passed it under DAZ).
  {
    const test::HostileFpMode hostile;
    expect_throw_with([&] { BlockScaledTensor(d, el, sc, TensorScale{-0x1p-140f, 1.0f, 1.0f}, pad); }, "must not be negative");
    expect_throw_with([&] { BlockScaledTensor(d, el, sc, TensorScale{1.0f, 1.0f, -0x1p-140f}, pad); }, "finite and >= 0");
    EXPECT_NO_THROW(BlockScaledTensor(d, el, sc, TensorScale{0x1p-140f, 1.0f, 0x1p-140f}, pad));
  }
  const BlockScaledTensor inf_amax(d, el, sc, TensorScale{INFINITY, 1.0f, 1.0f}, pad);
  DequantizeOptions te;
  te.nvfp4 = Nvfp4Decode::transformer_engine;
  expect_throw_with([&] { (void)dequantize(inf_amax, te); }, "records an infinite one");
  // The accessors refuse indices outside the tensor as every other call refuses bad input.
  expect_throw_with([&] { (void)t.element_code(1, 0, 0); }, "element_code(1, 0, 0) outside batch 1");
  expect_throw_with([&] { (void)t.scale_code(0, rows, 0); }, "scale_code(0, 8, 0) outside batch 1 x rows 8");
  expect_throw_with([&] { (void)t.scale_code(0, 0, -1); }, "outside");
  // Each bound of each index, one past it, and the last index inside.
  const std::int64_t ks = t.desc().k_stored(), kbl = t.desc().k_blocks();
  // (Indices, not a structured binding: Clang 14 cannot capture one in a lambda.)
  for (const std::array<std::int64_t, 3>& i : {std::array<std::int64_t, 3>{-1, 0, 0}, {1, 0, 0}, {0, -1, 0}, {0, rows, 0}, {0, 0, -1}, {0, 0, ks}}) {
    expect_throw_with([&] { (void)t.element_code(i[0], i[1], i[2]); }, "outside batch 1 x rows 8 x k_stored");
  }
  for (const std::array<std::int64_t, 3>& i : {std::array<std::int64_t, 3>{-1, 0, 0}, {1, 0, 0}, {0, -1, 0}, {0, rows, 0}, {0, 0, kbl}}) {
    expect_throw_with([&] { (void)t.scale_code(i[0], i[1], i[2]); }, "outside batch 1 x rows 8");
  }
  EXPECT_NO_THROW((void)t.element_code(0, rows - 1, ks - 1));
  EXPECT_NO_THROW((void)t.scale_code(0, rows - 1, kbl - 1));
}

// ---- Options.

TEST(QuantizeOptionsValidation, NamesTheRule) {
  const std::vector<float> x(64, 1.0f);
  const auto run = [&](const BlockFormat& f, const QuantizeOptions& o) { quantize(x, {2, 32}, KAxis::last, f, o); };
  expect_throw_with([&] { run(block_formats::mxfp8_e4m3, recipes::nvfp4_transformer_engine()); },
                  "NVFP4 recipes choose ue4m3 scales");
  expect_throw_with([&] { run(block_formats::nvfp4, recipes::ocp(Format::float4_e2m1fn)); },
                  "do not apply to ue4m3");
  QuantizeOptions div = recipes::ocp(Format::float8_e4m3fn);
  div.ratio = ScaleRatio::divide;
  expect_throw_with([&] { run(block_formats::mxfp8_e4m3, div); }, "ScaleRatio::divide is an rceil option");
  QuantizeOptions sat = recipes::triton_kernels(Format::float8_e4m3fn);
  sat.inf = BlockInf::saturate;
  expect_throw_with([&] { run(block_formats::mxfp8_e4m3, sat); }, "BlockInf::saturate applies to");
  QuantizeOptions given = recipes::ocp(Format::float8_e4m3fn);
  given.tensor_scale = TensorScaleSource::given_amax;
  expect_throw_with([&] { run(block_formats::mxfp8_e4m3, given); }, "per-tensor scale (NVFP4)");
  QuantizeOptions neg = recipes::nvfp4_transformer_engine();
  neg.tensor_scale = TensorScaleSource::given_amax;
  neg.tensor_amax = -1.0f;
  expect_throw_with([&] { run(block_formats::nvfp4, neg); }, "must not be negative");
  // A given amax of -0 is a zero amax: the same tensor as +0 (TransformerEngine: S_enc = 1; torchao:
  // P = 0, every scale NaN), not a negative one.
  for (const QuantizeOptions& recipe : {recipes::nvfp4_transformer_engine(), recipes::nvfp4_torchao(true)}) {
    QuantizeOptions zero = recipe, negative_zero = recipe;
    zero.tensor_scale = negative_zero.tensor_scale = TensorScaleSource::given_amax;
    zero.tensor_amax = 0.0f;
    negative_zero.tensor_amax = -0.0f;
    const BlockScaledTensor a = quantize(x, {2, 32}, KAxis::last, block_formats::nvfp4, zero);
    const BlockScaledTensor b = quantize(x, {2, 32}, KAxis::last, block_formats::nvfp4, negative_zero);
    EXPECT_EQ(a.element_codes(), b.element_codes());
    EXPECT_EQ(a.scale_codes(), b.scale_codes());
    EXPECT_EQ(std::bit_cast<std::uint32_t>(a.tensor_scale().decode), std::bit_cast<std::uint32_t>(b.tensor_scale().decode));
    EXPECT_EQ(std::bit_cast<std::uint32_t>(a.tensor_scale().amax), 0u);
    EXPECT_EQ(std::bit_cast<std::uint32_t>(b.tensor_scale().amax), 0u);
  }
  expect_throw_with([&] { run({Format::float8_e4m3fn, Format::float8_e8m0fnu, 16}, recipes::ocp(Format::float8_e4m3fn)); },
                  "e8m0 scales take blocks of 32");
  expect_throw_with([&] { run({Format::float16, Format::float8_e8m0fnu, 32}, recipes::ocp(Format::float8_e4m3fn)); },
                  "element format must be");
  QuantizeOptions sr = recipes::ocp(Format::float8_e4m3fn);
  sr.element.rounding = Rounding::stochastic;
  sr.element.stochastic_bits = 0;
  expect_throw_with([&] { run(block_formats::mxfp8_e4m3, sr); }, "stochastic_bits must be in 1..32");
  expect_throw_with([&] { quantize(std::vector<float>(63), {2, 32}, KAxis::last, block_formats::mxfp8_e4m3, recipes::ocp(Format::float8_e4m3fn)); },
                  "has 64 elements, the input has 63");
}

// ---- Dequantization variants.

TEST(Dequantize, TritonScaleDecodeAndClamp) {
  // e8m0 0x00 decodes to 2^-127 normally and to 0.0 in triton_kernels' torch reference; 0xFF to
  // NaN or Inf; clamp_finite turns overflow into FLT_MAX but keeps e5m2 Inf elements.
  const BlockFormat f = block_formats::mxfp8_e5m2;
  const TensorScale none{kNan, 1.0f, 1.0f};
  DequantizeOptions triton;
  triton.scale_decode = ScaleDecode::triton_kernels;
  triton.overflow = DequantOverflow::clamp_finite;
  EXPECT_EQ(dequantize_value(f, 0x3C, 0x00, none), 0x1p-127f);  // 1.0 * 2^-127
  EXPECT_EQ(dequantize_value(f, 0x3C, 0x00, none, triton), 0.0f);
  EXPECT_TRUE(std::isnan(dequantize_value(f, 0x3C, 0xFF, none)));
  EXPECT_EQ(dequantize_value(f, 0x3C, 0xFF, none, triton), FLT_MAX);  // 1 * Inf clamped
  EXPECT_EQ(dequantize_value(f, 0x7B, 0xFE, none), std::numeric_limits<float>::infinity());  // 57344 * 2^127
  EXPECT_EQ(dequantize_value(f, 0xFB, 0xFE, none, triton), -FLT_MAX);
  EXPECT_EQ(dequantize_value(f, 0x7C, 0x7F, none, triton), std::numeric_limits<float>::infinity());  // Inf element
}

TEST(Dequantize, Nvfp4Orders) {
  // torchao: x * fp32(P * s); TransformerEngine: x * fp32(fp32(s * G) * fp32(1/2688)).
  const BlockFormat f = block_formats::nvfp4;
  const float g = 1000.0f;
  QuantizeOptions te = recipes::nvfp4_transformer_engine();
  te.tensor_scale = TensorScaleSource::given_amax;
  const TensorScale ts = tensor_scale_for_amax(f, te, g);
  const float s = 1.375f;  // ue4m3 0x3B
  const float p = 3.0f;    // e2m1 0x5
  DequantizeOptions te_order;
  te_order.nvfp4 = Nvfp4Decode::transformer_engine;
  const volatile float prod_te = s * g;
  const volatile float inv = 1.0f / 2688.0f;
  const volatile float x_te = prod_te * inv;
  EXPECT_EQ(dequantize_value(f, 0x5, 0x3B, ts, te_order), p * x_te);
  const volatile float x_ta = ts.decode * s;
  EXPECT_EQ(dequantize_value(f, 0x5, 0x3B, ts), p * x_ta);
  EXPECT_THROW(dequantize_value(f, 0x5, 0x3B, TensorScale{kNan, 1.0f, 1.0f}, te_order), std::invalid_argument);
}


// Options outside their enums are refused by name rather than run as another rule (from an audit,
// 2026-11-30: rule 8 left the scale unset and gave code 0 with -0 elements; k_axis 2 gave a wrong
// refusal or a tensor storing it; DequantizeOptions and recipe modes fell to another branch;
// dequantize_value with element format 200 read the format table past its end).
TEST(QuantizeOptions, ValuesOutsideTheEnumsAreRefused) {
  const BlockFormat mx = block_formats::mxfp8_e4m3;
  const std::vector<float> x(64, 1.0f);
  for (const auto& [change, message] : std::vector<std::pair<std::function<void(QuantizeOptions&)>, std::string>>{
           {[](QuantizeOptions& o) { o.rule = static_cast<ScaleRule>(8); }, "rule = 8 is not a ScaleRule"},
           {[](QuantizeOptions& o) { o.ratio = static_cast<ScaleRatio>(2); }, "ratio = 2 is not a ScaleRatio"},
           {[](QuantizeOptions& o) { o.nan = static_cast<BlockNan>(2); }, "nan = 2 is not a BlockNan"},
           {[](QuantizeOptions& o) { o.inf = static_cast<BlockInf>(2); }, "inf = 2 is not a BlockInf"},
           {[](QuantizeOptions& o) { o.subnormals = static_cast<SubnormalInputs>(3); }, "subnormals = 3 is not a SubnormalInputs"},
           {[](QuantizeOptions& o) { o.tensor_scale = static_cast<TensorScaleSource>(3); },
            "tensor_scale = 3 is not a TensorScaleSource"},
           {[](QuantizeOptions& o) { o.k_tail = static_cast<KTail>(2); }, "k_tail = 2 is not a KTail"},
           {[](QuantizeOptions& o) { o.element.rounding = static_cast<Rounding>(6); },
            "ConvertOptions::rounding = 6 is not a Rounding"}}) {
    QuantizeOptions o;
    change(o);
    expect_throw_with([&] { validate(mx, o); }, message);
    expect_throw_with([&] { (void)quantize(x, {2, 32}, KAxis::last, mx, o); }, message);
  }
  expect_throw_with([&] { (void)quantize(x, {2, 32}, static_cast<KAxis>(2), mx, QuantizeOptions{}); }, "k_axis = 2 is not a KAxis");
  BlockScaledDesc d;
  d.shape = {2, 40};
  expect_throw_with([&] { validate(d, static_cast<KTail>(2)); }, "k_tail = 2 is not a KTail");
  expect_throw_with([&] { (void)recipes::torchao(Format::float8_e4m3fn, static_cast<recipes::TorchaoScaleMode>(4)); },
                    "mode = 4 is not a TorchaoScaleMode");
  expect_throw_with([&] { (void)recipes::triton_kernels(Format::float8_e4m3fn, static_cast<recipes::TritonRounding>(2)); },
                    "rounding = 2 is not a TritonRounding");
  const TensorScale ts;
  DequantizeOptions dq;
  dq.scale_decode = static_cast<ScaleDecode>(2);
  expect_throw_with([&] { (void)scale_value(mx, 127, ts, dq); }, "DequantizeOptions::scale_decode = 2 is not a ScaleDecode");
  dq = {};
  dq.overflow = static_cast<DequantOverflow>(2);
  expect_throw_with([&] { (void)dequantize_value(mx, 0x38, 127, ts, dq); }, "DequantizeOptions::overflow = 2");
  dq = {};
  dq.nvfp4 = static_cast<Nvfp4Decode>(200);
  expect_throw_with([&] { (void)dequantize_value(block_formats::nvfp4, 0x2, 0x38, ts, dq); }, "DequantizeOptions::nvfp4 = 200");
  BlockFormat unknown = mx;
  unknown.element = static_cast<Format>(200);
  EXPECT_THROW((void)dequantize_value(unknown, 0x38, 127, ts), std::invalid_argument);
  expect_throw_with([&] {
    (void)quantize_fp8_scaled(x, 2, 32, KAxis::last, Format::float8_e4m3fn, static_cast<Fp8Granularity>(4), Fp8ScaleRecipe::deepgemm);
  }, "granularity = 4 is not a Fp8Granularity");
  expect_throw_with([&] {
    (void)quantize_fp8_scaled(x, 2, 32, KAxis::last, Format::float8_e4m3fn, Fp8Granularity::tensor, static_cast<Fp8ScaleRecipe>(3));
  }, "recipe = 3 is not a Fp8ScaleRecipe");
  expect_throw_with([&] {
    (void)quantize_fp8_scaled(x, 2, 32, static_cast<KAxis>(2), Format::float8_e4m3fn, Fp8Granularity::tensor, Fp8ScaleRecipe::deepgemm);
  }, "axis = 2 is not a KAxis");
}

}  // namespace
