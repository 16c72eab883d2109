// SPDX-License-Identifier: Apache-2.0
// BlockScaledTensors as mma_scaled operands: packing and scale layouts undone, orientation, the
// per-tensor-scale rule, and exact results against the oracle over independently dequantized values.
#include <gtest/gtest.h>

#include <bit>
#include <limits>
#include <random>
#include <stdexcept>

#include "blockscale/quantize.h"
#include "blockscale/reference.h"
#include "expect_throw.h"
#include "oracle.h"

namespace blockscale::reference {
namespace {

std::vector<float> random_floats(std::mt19937_64& rng, std::size_t n) {
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> v(n);
  for (float& f : v) f = dist(rng) * (rng() % 8 == 0 ? 64.0f : 1.0f);
  return v;
}

struct Case {
  BlockFormat format;
  QuantizeOptions options;
  Packing packing;
  ScaleLayout layout;
};

TEST(ReferenceOperands, BlockScaledTensorsMatchDequantizedOracle) {
  std::mt19937_64 rng(11);
  QuantizeOptions nv = recipes::nvfp4_transformer_engine();
  nv.tensor_scale = TensorScaleSource::none;
  const Case cases[] = {
      {block_formats::mxfp8_e4m3, recipes::ocp(Format::float8_e4m3fn), Packing::byte_per_element,
       ScaleLayout::of(ScaleLayoutKind::tiled_128x4)},
      {block_formats::mxfp8_e5m2, {}, Packing::byte_per_element, ScaleLayout{}},
      {block_formats::mxfp4, {}, Packing::fp4_dense, ScaleLayout::of(ScaleLayoutKind::tiled_128x4)},
      {block_formats::nvfp4, nv, Packing::fp4_dense, ScaleLayout::of(ScaleLayoutKind::tiled_8x4)},
      {block_formats::mxfp6_e3m2, {}, Packing::fp6_dense, ScaleLayout{}},
  };
  for (const Case& c : cases) {
    const std::int64_t M = 5, N = 3, K = 64, C = 2;
    const std::vector<float> a = random_floats(rng, static_cast<std::size_t>(C * M * K));
    const std::vector<float> b = random_floats(rng, static_cast<std::size_t>(K * N));
    // x as [C, M, K] (K last); y as [K, N] (K first): the source orientations differ.
    const BlockScaledTensor qx = quantize(a, {C, M, K}, KAxis::last, c.format, c.options, c.packing, c.layout);
    const BlockScaledTensor qy = quantize(b, {K, N}, KAxis::first, c.format, c.options, c.packing, c.layout);
    const ScaledOperand ox = scaled_operand(qx, Side::x), oy = scaled_operand(qy, Side::y);
    EXPECT_EQ(ox.values.shape(), (Shape{C, M, K}));
    EXPECT_EQ(ox.scales.shape(), (Shape{C, M, K / c.format.block_size}));
    EXPECT_EQ(oy.values.shape(), (Shape{K, N}));
    EXPECT_EQ(oy.scales.shape(), (Shape{K / c.format.block_size, N}));
    const std::vector<float> dx = dequantize(qx), dy = dequantize(qy);  // source shapes
    const Tensor acc = Tensor::full(DType::float32, {C, M, N}, 0.25);
    const bool ext = c.format.element == Format::float6_e3m2fn;
    const Tensor r = mma_scaled(qx, qy, acc, {Numerics::exact(), ext});
    for (std::int64_t bt = 0; bt < C; ++bt)
      for (std::int64_t i = 0; i < M; ++i)
        for (std::int64_t j = 0; j < N; ++j) {
          std::vector<oracle::Term> terms;
          for (std::int64_t k = 0; k < K; ++k)
            oracle::add_product(terms, dx[static_cast<std::size_t>((bt * M + i) * K + k)],
                                dy[static_cast<std::size_t>(k * N + j)]);
          terms.push_back(oracle::term_of(0.25));
          const oracle::Exact e = oracle::exact_sum(terms);
          const std::uint32_t want = e.mag.zero() ? 0u : std::bit_cast<std::uint32_t>(oracle::to_float(e));
          ASSERT_EQ(r.code((bt * M + i) * N + j), want) << to_string(c.format);
        }
  }
}

TEST(ReferenceOperands, PerTensorScaleIsRefusedNotDropped) {
  std::mt19937_64 rng(3);
  const std::vector<float> a = random_floats(rng, 2 * 32), b = random_floats(rng, 32 * 2);
  const QuantizeOptions o = recipes::nvfp4_transformer_engine();  // per-tensor scale from the data
  const BlockScaledTensor qx = quantize(a, {2, 32}, KAxis::last, block_formats::nvfp4, o);
  const BlockScaledTensor qy = quantize(b, {32, 2}, KAxis::first, block_formats::nvfp4, o);
  ASSERT_NE(qx.tensor_scale().decode, 1.0f);
  try {
    mma_scaled(qx, qy, Tensor::zeros(DType::float32, {2, 2}));
    ADD_FAILURE() << "no error";
  } catch (const RuleError& e) {
    EXPECT_EQ(e.rule(), Rule::tensor_scale);
    EXPECT_EQ(std::string(e.what()).rfind("mma_scaled [tensor_scale]: x carries a per-tensor scale ", 0), 0u) << e.what();
  }
  // The parts are available, the per-tensor scale beside them.
  const ScaledOperand ox = scaled_operand(qx, Side::x);
  EXPECT_EQ(ox.tensor_scale, qx.tensor_scale().decode);
  EXPECT_EQ(ox.values.dtype(), DType::float4_e2m1fn);
  EXPECT_EQ(ox.scales.dtype(), DType::float8_ue4m3);
}

// Sizes are checked before anything is sized from them (the audit of 2026-11-30: a negative R made
// std::length_error, batch x R x C overflowed int64 before the layout's check, a tensor of no
// element with two extents of 2^63 - 1 overflowed its strides, and a DType outside the enum
// recursed until the stack ran out).
TEST(ReferenceOperands, SizesAndDTypesOutsideTheirRangesAreRefused) {
  const ScaleLayout linear{};
  const std::vector<std::uint8_t> none;
  EXPECT_THROW(
      {
        try {
          scales_from_layout(DType::float8_e8m0fnu, linear, Side::x, 0, -2, 3, none);
        } catch (const std::invalid_argument& e) {
          EXPECT_NE(std::string(e.what()).find("must not be negative"), std::string::npos) << e.what();
          throw;
        }
      },
      std::invalid_argument);
  EXPECT_THROW(
      {
        try {
          scales_from_layout(DType::float8_e8m0fnu, linear, Side::x, 4, std::int64_t{1} << 31, std::int64_t{1} << 31, none);
        } catch (const std::invalid_argument& e) {
          EXPECT_NE(std::string(e.what()).find("above 2^62 elements"), std::string::npos) << e.what();
          throw;
        }
      },
      std::invalid_argument);
  // Exactly 2^62 elements is within the limit; the short stored image is what is refused, before a
  // buffer of 2^62 bytes is asked for.
  test::expect_throw_with(
      [&] {
        scales_from_layout(DType::float8_e8m0fnu, linear, Side::x, 4, std::int64_t{1} << 30, std::int64_t{1} << 30, none);
      },
      "the stored scales hold 0 bytes");
  const std::int64_t big = std::numeric_limits<std::int64_t>::max();
  EXPECT_THROW(Tensor(DType::float32, {0, big, big}, {}), std::invalid_argument);
  EXPECT_EQ(Tensor(DType::float32, {0, big}, {}).size(), 0);
  const auto bad = static_cast<DType>(77);
  EXPECT_EQ(to_string(bad), "DType(77)");
  EXPECT_THROW(Tensor::zeros(bad, {2, 2}), std::invalid_argument);
}

// parse_dtype reads back every name to_string gives, the short names of the integer and f64 types
// and the formats library's spellings, and nothing else.
TEST(ReferenceDTypes, ParseReadsBackEveryName) {
  for (int i = 0; i < kDTypeCount; ++i) {
    const auto t = static_cast<DType>(i);
    EXPECT_EQ(parse_dtype(to_string(t)), t) << to_string(t);
  }
  for (const char* f64 : {"f64", "double"}) EXPECT_EQ(parse_dtype(f64), DType::float64);
  for (const char* i8 : {"i8", "s8"}) EXPECT_EQ(parse_dtype(i8), DType::int8);
  EXPECT_EQ(parse_dtype("u8"), DType::uint8);
  for (const char* i32 : {"i32", "s32"}) EXPECT_EQ(parse_dtype(i32), DType::int32);
  EXPECT_EQ(parse_dtype("e4m3"), DType::float8_e4m3fn);  // parse_format's spelling
  EXPECT_EQ(parse_dtype("ue4m3"), DType::float8_ue4m3);
  for (const char* bad : {"", "int16", "float8", "F64", "float32 ", "e4m3fnuz"}) EXPECT_EQ(parse_dtype(bad), std::nullopt) << bad;
}

}  // namespace
}  // namespace blockscale::reference
