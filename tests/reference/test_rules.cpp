// SPDX-License-Identifier: Apache-2.0
// Every rule of mma_scaled, mma and matmul, broken once: the error names the rule and the sizes.
#include <gtest/gtest.h>

#include <functional>

#include "blockscale/reference.h"
#include "fp_mode.h"

namespace blockscale::reference {
namespace {

// Runs f, which must throw RuleError for `rule` with exactly `message`.
void expect_rule(const std::function<void()>& f, Rule rule, const std::string& message) {
  try {
    f();
  } catch (const RuleError& e) {
    EXPECT_EQ(e.rule(), rule) << e.what();
    EXPECT_EQ(std::string(e.what()), message);
    return;
  }
  ADD_FAILURE() << "no RuleError; expected: " << message;
}

Tensor e4m3(Shape s) { return Tensor::full(DType::float8_e4m3fn, std::move(s), 1.0); }
Tensor e8m0(Shape s) { return Tensor::full(DType::float8_e8m0fnu, std::move(s), 1.0); }
Tensor f32(Shape s) { return Tensor::zeros(DType::float32, std::move(s)); }
Tensor of(DType t, Shape s) { return Tensor::zeros(t, std::move(s)); }

// A valid rank-2 problem M=2, K=64, N=3 with B=32, modified one piece at a time.
struct Problem {
  Tensor x = e4m3({2, 64}), xs = e8m0({2, 2}), y = e4m3({64, 3}), ys = e8m0({2, 3}), acc = f32({2, 3});
  ScaledMmaOptions options{};
  Tensor run() const { return mma_scaled(x, xs, y, ys, acc, options); }
};

TEST(ReferenceMmaScaledRules, ValidProblemPasses) {
  Problem p;
  EXPECT_EQ(check_mma_scaled(p.x, p.xs, p.y, p.ys, p.acc), 32);
  EXPECT_NO_THROW(p.run());
}

TEST(ReferenceMmaScaledRules, Rank) {
  Problem p;
  p.x = e4m3({1, 1, 2, 64});
  expect_rule([&] { p.run(); }, Rule::rank,
              "mma_scaled [rank]: x has rank 4 (shape [1, 1, 2, 64]); operands must have rank 2 or 3");
  Problem q;
  q.acc = f32({6});
  expect_rule([&] { q.run(); }, Rule::rank, "mma_scaled [rank]: acc has rank 1 (shape [6]); operands must have rank 2 or 3");
}

TEST(ReferenceMmaScaledRules, EmptyDimension) {
  Problem p;
  p.y = e4m3({64, 0});
  expect_rule([&] { p.run(); }, Rule::empty_dimension,
              "mma_scaled [empty_dimension]: y shape [64, 0] has an empty dimension; every extent must be at least 1");
}

TEST(ReferenceMmaScaledRules, ScaleRank) {
  Problem p;
  p.x = e4m3({3, 2, 64});
  expect_rule([&] { p.run(); }, Rule::scale_rank, "mma_scaled [scale_rank]: x_scale rank 2 must equal x rank 3");
}

TEST(ReferenceMmaScaledRules, ScaleBatch) {
  Problem p;
  p.x = e4m3({3, 2, 64});
  p.xs = e8m0({2, 2, 2});
  p.acc = f32({3, 2, 3});
  expect_rule([&] { p.run(); }, Rule::scale_batch, "mma_scaled [scale_batch]: x_scale batch 2 must equal x batch 3");
  Problem q;
  q.y = e4m3({3, 64, 3});
  q.ys = e8m0({1, 2, 3});  // a batch of 1 does not broadcast for scales: exact equality
  q.acc = f32({3, 2, 3});
  expect_rule([&] { q.run(); }, Rule::scale_batch, "mma_scaled [scale_batch]: y_scale batch 1 must equal y batch 3");
}

TEST(ReferenceMmaScaledRules, Contraction) {
  Problem p;
  p.y = e4m3({32, 3});
  expect_rule([&] { p.run(); }, Rule::contraction, "mma_scaled [contraction]: x K=64 must equal y K=32");
}

TEST(ReferenceMmaScaledRules, ScaleShape) {
  Problem p;
  p.xs = e8m0({3, 2});
  expect_rule([&] { p.run(); }, Rule::scale_shape, "mma_scaled [scale_shape]: x_scale M=3 must equal x M=2");
  Problem q;
  q.ys = e8m0({2, 4});
  expect_rule([&] { q.run(); }, Rule::scale_shape, "mma_scaled [scale_shape]: y_scale N=4 must equal y N=3");
  Problem r;
  r.ys = e8m0({4, 3});
  expect_rule([&] { r.run(); }, Rule::scale_shape, "mma_scaled [scale_shape]: x_scale K_s=2 must equal y_scale K_s=4");
}

TEST(ReferenceMmaScaledRules, KDivisibleByKs) {
  Problem p;
  p.x = e4m3({2, 96});
  p.y = e4m3({96, 3});
  p.xs = e8m0({2, 5});
  p.ys = e8m0({5, 3});
  expect_rule([&] { p.run(); }, Rule::k_divisible, "mma_scaled [k_divisible]: K=96 not divisible by K_s=5");
}

TEST(ReferenceMmaScaledRules, OutputShape) {
  Problem p;
  p.acc = f32({3, 3});
  expect_rule([&] { p.run(); }, Rule::output_shape, "mma_scaled [output_shape]: acc M=3 must equal x M=2");
  Problem q;
  q.acc = f32({2, 2});
  expect_rule([&] { q.run(); }, Rule::output_shape, "mma_scaled [output_shape]: acc N=2 must equal y N=3");
}

TEST(ReferenceMmaScaledRules, BatchBroadcast) {
  Problem p;
  p.x = e4m3({2, 2, 64});
  p.xs = e8m0({2, 2, 2});
  p.y = e4m3({3, 64, 3});
  p.ys = e8m0({3, 2, 3});
  p.acc = f32({3, 2, 3});
  expect_rule([&] { p.run(); }, Rule::batch_broadcast,
              "mma_scaled [batch_broadcast]: x batch 2 and y batch 3 do not broadcast (each must be 1 or equal to the other)");
  Problem q;
  q.x = e4m3({2, 2, 64});
  q.xs = e8m0({2, 2, 2});
  expect_rule([&] { q.run(); }, Rule::batch_broadcast,
              "mma_scaled [batch_broadcast]: acc shape [2, 3] must be the output shape [2, 2, 3] (x [2, 2, 64] and y "
              "[64, 3] broadcast)");
  Problem r;
  r.y = e4m3({2, 64, 3});
  r.ys = e8m0({2, 2, 3});
  r.acc = f32({4, 2, 3});
  expect_rule([&] { r.run(); }, Rule::batch_broadcast,
              "mma_scaled [batch_broadcast]: acc shape [4, 2, 3] must be the output shape [2, 2, 3] (x [2, 64] and y "
              "[2, 64, 3] broadcast)");
  // acc does not broadcast x and y further (cuda.tile: acc has the broadcast shape of x and y):
  // neither a batch of 1 against acc's 4, nor rank 2 against a rank-3 acc.
  Problem s;
  s.x = e4m3({1, 2, 64});
  s.xs = e8m0({1, 2, 2});
  s.y = e4m3({1, 64, 3});
  s.ys = e8m0({1, 2, 3});
  s.acc = f32({4, 2, 3});
  expect_rule([&] { s.run(); }, Rule::batch_broadcast,
              "mma_scaled [batch_broadcast]: acc shape [4, 2, 3] must be the output shape [1, 2, 3] (x [1, 2, 64] and y "
              "[1, 64, 3] broadcast)");
  Problem t;
  t.acc = f32({1, 2, 3});
  expect_rule([&] { t.run(); }, Rule::batch_broadcast,
              "mma_scaled [batch_broadcast]: acc shape [1, 2, 3] must be the output shape [2, 3] (x [2, 64] and y "
              "[64, 3] broadcast)");
  // What does broadcast: batch 1 against C, and rank 2 against rank 3, on either side.
  Problem u = s;
  u.y = e4m3({4, 64, 3});
  u.ys = e8m0({4, 2, 3});
  EXPECT_NO_THROW(u.run());
  Problem v;
  v.y = e4m3({4, 64, 3});
  v.ys = e8m0({4, 2, 3});
  v.acc = f32({4, 2, 3});
  EXPECT_NO_THROW(v.run());
}

TEST(ReferenceMmaScaledRules, AccumulatorType) {
  Problem p;
  p.acc = of(DType::float16, {2, 3});
  expect_rule([&] { p.run(); }, Rule::dtype, "mma_scaled [dtype]: acc dtype float16 must be float32");
}

TEST(ReferenceMmaScaledRules, ScaleTypes) {
  Problem p;
  p.xs = of(DType::float32, {2, 2});
  expect_rule([&] { p.run(); }, Rule::dtype,
              "mma_scaled [dtype]: x_scale dtype float32 is not a block-scale type (float8_e8m0fnu, float8_e4m3fn, "
              "float8_ue4m3)");
  Problem p2;
  p2.ys = of(DType::int8, {2, 3});
  expect_rule([&] { p2.run(); }, Rule::dtype,
              "mma_scaled [dtype]: y_scale dtype int8 is not a block-scale type (float8_e8m0fnu, float8_e4m3fn, "
              "float8_ue4m3)");
  Problem q;
  q.ys = of(DType::float8_ue4m3, {2, 3});
  expect_rule([&] { q.run(); }, Rule::dtype,
              "mma_scaled [dtype]: x_scale float8_e8m0fnu and y_scale float8_ue4m3 must have the same scale type");
  Problem r;
  r.xs = of(DType::float8_ue4m3, {2, 2});
  r.ys = of(DType::float8_ue4m3, {2, 3});
  expect_rule([&] { r.run(); }, Rule::dtype,
              "mma_scaled [dtype]: float8_e4m3fn does not take float8_ue4m3 scales (allowed: float8_e8m0fnu)");
  // NVFP4's scale type in cuda.tile's table is float8_e4m3fn; fp8 inputs do not take it.
  Problem e;
  e.xs = of(DType::float8_e4m3fn, {2, 2});
  e.ys = of(DType::float8_e4m3fn, {2, 3});
  expect_rule([&] { e.run(); }, Rule::dtype,
              "mma_scaled [dtype]: float8_e4m3fn does not take float8_e4m3fn scales (allowed: float8_e8m0fnu)");
  Problem f = e;
  f.x = of(DType::float4_e2m1fn, {2, 64});
  f.y = of(DType::float4_e2m1fn, {64, 3});
  f.xs = of(DType::float8_e4m3fn, {2, 4});
  f.ys = of(DType::float8_e4m3fn, {4, 3});
  EXPECT_NO_THROW(f.run());
  Problem g = f;
  g.ys = of(DType::float8_ue4m3, {4, 3});
  expect_rule([&] { g.run(); }, Rule::dtype,
              "mma_scaled [dtype]: x_scale float8_e4m3fn and y_scale float8_ue4m3 must have the same scale type");
}

TEST(ReferenceMmaScaledRules, InputTypes) {
  Problem p;
  p.x = of(DType::float16, {2, 64});
  expect_rule([&] { p.run(); }, Rule::dtype,
              "mma_scaled [dtype]: x dtype float16 is not a block-scaled input type (float8_e4m3fn, float8_e5m2, "
              "float4_e2m1fn)");
  // The list names the extension's types only where the extension is on.
  p.options.hardware_extensions = true;
  expect_rule([&] { p.run(); }, Rule::dtype,
              "mma_scaled [dtype]: x dtype float16 is not a block-scaled input type (float8_e4m3fn, float8_e5m2, "
              "float4_e2m1fn, float6_e2m3fn, float6_e3m2fn)");
  Problem q;
  q.y = of(DType::bfloat16, {64, 3});
  expect_rule([&] { q.run(); }, Rule::dtype,
              "mma_scaled [dtype]: y dtype bfloat16 is not a block-scaled input type (float8_e4m3fn, float8_e5m2, "
              "float4_e2m1fn)");
}

TEST(ReferenceMmaScaledRules, BlockSize) {
  // f4e2m1 with ue4m3 scales: B = 16 only.
  Problem p;
  p.x = of(DType::float4_e2m1fn, {2, 64});
  p.y = of(DType::float4_e2m1fn, {64, 3});
  p.xs = of(DType::float8_ue4m3, {2, 2});
  p.ys = of(DType::float8_ue4m3, {2, 3});
  expect_rule([&] { p.run(); }, Rule::block_size,
              "mma_scaled [block_size]: float4_e2m1fn with float8_ue4m3 scales requires B=16, got 32");
  p.xs = of(DType::float8_e4m3fn, {2, 2});
  p.ys = of(DType::float8_e4m3fn, {2, 3});
  expect_rule([&] { p.run(); }, Rule::block_size,
              "mma_scaled [block_size]: float4_e2m1fn with float8_e4m3fn scales requires B=16, got 32");
  // f4e2m1 with e8m0: 16 or 32.
  Problem q;
  q.x = of(DType::float4_e2m1fn, {2, 64});
  q.y = of(DType::float4_e2m1fn, {64, 3});
  q.xs = e8m0({2, 1});
  q.ys = e8m0({1, 3});
  expect_rule([&] { q.run(); }, Rule::block_size,
              "mma_scaled [block_size]: float4_e2m1fn with float8_e8m0fnu scales requires B=16 or 32, got 64");
  // fp8: 32 only.
  Problem r;
  r.xs = e8m0({2, 4});
  r.ys = e8m0({4, 3});
  expect_rule([&] { r.run(); }, Rule::block_size,
              "mma_scaled [block_size]: float8_e4m3fn with float8_e8m0fnu scales requires B=32, got 16");
}

TEST(ReferenceMmaScaledRules, EveryTableRowIsAccepted) {
  for (const ScaledMmaRow& row : kScaledMmaTable) {
    const std::int64_t K = 64, Ks = K / row.block;
    const Tensor x = of(row.input, {2, K}), y = of(row.input, {K, 3});
    const Tensor xs = of(row.scale, {2, Ks}), ys = of(row.scale, {Ks, 3});
    if (row.extension) {
      EXPECT_THROW(check_mma_scaled(x, xs, y, ys, f32({2, 3}), false), RuleError) << to_string(row.input);
    }
    EXPECT_EQ(check_mma_scaled(x, xs, y, ys, f32({2, 3}), true), row.block) << to_string(row.input);
    if (!row.extension) {
      EXPECT_EQ(check_mma_scaled(x, xs, y, ys, f32({2, 3}), false), row.block);
    }
  }
}

TEST(ReferenceMmaScaledRules, HardwareExtension) {
  Problem p;
  p.x = of(DType::float6_e2m3fn, {2, 64});
  p.y = of(DType::float6_e2m3fn, {64, 3});
  expect_rule([&] { p.run(); }, Rule::extension,
              "mma_scaled [extension]: float6_e2m3fn inputs are the kind::mxf8f6f4 hardware extension "
              "(ScaledMmaOptions::hardware_extensions)");
  p.options.hardware_extensions = true;
  EXPECT_NO_THROW(p.run());

  Problem q;
  q.y = of(DType::float4_e2m1fn, {64, 3});
  expect_rule([&] { q.run(); }, Rule::extension,
              "mma_scaled [extension]: x float8_e4m3fn and y float4_e2m1fn differ; mixed operands are the "
              "kind::mxf8f6f4 hardware extension (ScaledMmaOptions::hardware_extensions)");
  q.options.hardware_extensions = true;
  EXPECT_NO_THROW(q.run());
  // Every pair of the five kind::mxf8f6f4 element types is accepted with the extension.
  const DType kinds[] = {DType::float8_e4m3fn, DType::float8_e5m2, DType::float6_e2m3fn, DType::float6_e3m2fn,
                         DType::float4_e2m1fn};
  for (const DType a : kinds)
    for (const DType b : kinds) EXPECT_EQ(check_mma_scaled(of(a, {2, 64}), q.xs, of(b, {64, 3}), q.ys, q.acc, true), 32);

  // Mixed operands need e8m0 scales and B = 32.
  Problem r = q;
  r.x = of(DType::float4_e2m1fn, {2, 64});
  r.y = of(DType::float6_e3m2fn, {64, 3});
  r.xs = e8m0({2, 4});
  r.ys = e8m0({4, 3});
  expect_rule([&] { r.run(); }, Rule::block_size,
              "mma_scaled [block_size]: mixed operands (kind::mxf8f6f4) require B=32, got 16");
  r.xs = of(DType::float8_ue4m3, {2, 4});
  r.ys = of(DType::float8_ue4m3, {4, 3});
  expect_rule([&] { r.run(); }, Rule::dtype,
              "mma_scaled [dtype]: mixed operands (kind::mxf8f6f4) require float8_e8m0fnu scales, got float8_ue4m3");
}

TEST(ReferenceMmaScaledRules, Numerics) {
  Problem p;
  p.options.numerics = Numerics::sequential();
  p.options.numerics.rounding = Rounding::toward_zero;
  expect_rule([&] { p.run(); }, Rule::numerics,
              "mma_scaled [numerics]: rounding toward_zero applies only to exact numerics (sequential rounds each step "
              "to nearest-even)");
  p.options.numerics = Numerics::exact(Rounding::stochastic);
  expect_rule([&] { p.run(); }, Rule::numerics,
              "mma_scaled [numerics]: exact numerics round once; stochastic rounding is not offered");
  p.options.numerics = Numerics::hardware("");
  expect_rule([&] { p.run(); }, Rule::numerics, "mma_scaled [numerics]: hardware numerics need a model name");
  p.options.numerics = Numerics::exact();
  p.options.numerics.integer_overflow = IntegerOverflow::saturate;
  expect_rule([&] { p.run(); }, Rule::numerics,
              "mma_scaled [numerics]: integer_overflow saturate applies only to int32 results, not float32");
}

TEST(ReferenceMmaScaledRules, UnregisteredHardwareModel) {
  Problem p;
  p.options.numerics = Numerics::hardware("no.such.model");
  try {
    p.run();
    ADD_FAILURE() << "no error";
  } catch (const RuleError& e) {
    EXPECT_EQ(e.rule(), Rule::no_model);
    EXPECT_NE(std::string(e.what()).find("mma_scaled [no_model]: no hardware model named 'no.such.model' is registered"),
              std::string::npos)
        << e.what();
  }
}

// ---- mma / matmul (ct::mma_compatible, ct::matmul_compatible)

TEST(ReferenceMmaRules, SameRank) {
  expect_rule([] { mma(f32({1, 2, 4}), f32({4, 2}), f32({1, 2, 2})); }, Rule::rank,
              "mma [rank]: operands must all have the same rank, got lhs 3, rhs 2, acc 3");
  expect_rule([] { matmul(f32({2, 4}), f32({1, 4, 2})); }, Rule::rank,
              "matmul [rank]: operands must all have the same rank, got lhs 2, rhs 3");
  expect_rule([] { matmul(f32({1, 1, 2, 4}), f32({1, 1, 4, 2})); }, Rule::rank,
              "matmul [rank]: lhs has rank 4 (shape [1, 1, 2, 4]); operands must have rank 2 or 3");
}

TEST(ReferenceMmaRules, EmptyDimension) {
  expect_rule([] { matmul(f32({2, 0}), f32({0, 2})); }, Rule::empty_dimension,
              "matmul [empty_dimension]: lhs shape [2, 0] has an empty dimension; every extent must be at least 1");
}

TEST(ReferenceMmaRules, Contraction) {
  expect_rule([] { mma(f32({2, 4}), f32({3, 2}), f32({2, 2})); }, Rule::contraction,
              "mma [contraction]: lhs K=4 must equal rhs K=3");
}

TEST(ReferenceMmaRules, OutputShape) {
  expect_rule([] { mma(f32({2, 4}), f32({4, 2}), f32({2, 3})); }, Rule::output_shape,
              "mma [output_shape]: acc shape [2, 3] must end in [2, 2] (lhs rows, rhs columns)");
}

TEST(ReferenceMmaRules, BatchBroadcast) {
  expect_rule([] { mma(f32({2, 2, 4}), f32({1, 4, 2}), f32({3, 2, 2})); }, Rule::batch_broadcast,
              "mma [batch_broadcast]: lhs batch 2 must be 1 or equal the acc batch 3");
  expect_rule([] { mma(f32({3, 2, 4}), f32({2, 4, 2}), f32({3, 2, 2})); }, Rule::batch_broadcast,
              "mma [batch_broadcast]: rhs batch 2 must be 1 or equal the acc batch 3");
  expect_rule([] { matmul(f32({2, 2, 4}), f32({3, 4, 2})); }, Rule::batch_broadcast,
              "matmul [batch_broadcast]: lhs batch 2 and rhs batch 3 do not broadcast (equal, or one of them 1)");
}

TEST(ReferenceMmaRules, OperandPair) {
  expect_rule([] { mma(of(DType::float16, {2, 4}), of(DType::bfloat16, {4, 2}), f32({2, 2})); }, Rule::dtype,
              "mma [dtype]: lhs float16 and rhs bfloat16 cannot be multiplied: operands must have the same type, or be "
              "two 8-bit integers, or two fp8 types");
  // Allowed mixes: int8 x uint8, e4m3 x e5m2.
  EXPECT_NO_THROW(mma(of(DType::int8, {2, 4}), of(DType::uint8, {4, 2}), of(DType::int32, {2, 2})));
  EXPECT_NO_THROW(mma(of(DType::float8_e4m3fn, {2, 4}), of(DType::float8_e5m2, {4, 2}), f32({2, 2})));
  EXPECT_EQ(matmul_result_dtype(DType::float8_e5m2, DType::float8_e4m3fn), DType::float16);
}

TEST(ReferenceMmaRules, AccumulatorType) {
  expect_rule([] { mma(of(DType::bfloat16, {2, 4}), of(DType::bfloat16, {4, 2}), of(DType::float16, {2, 2})); },
              Rule::dtype, "mma [dtype]: bfloat16 operands accumulate in float32, not float16");
  expect_rule([] { mma(of(DType::float8_e4m3fn, {2, 4}), of(DType::float8_e4m3fn, {4, 2}), of(DType::float64, {2, 2})); },
              Rule::dtype, "mma [dtype]: float8_e4m3fn operands accumulate in float16 or float32, not float64");
  expect_rule([] { mma(of(DType::int8, {2, 4}), of(DType::int8, {4, 2}), f32({2, 2})); }, Rule::dtype,
              "mma [dtype]: int8 operands accumulate in int32, not float32");
  expect_rule([] { mma(of(DType::float4_e2m1fn, {2, 4}), of(DType::float4_e2m1fn, {4, 2}), f32({2, 2})); },
              Rule::dtype, "mma [dtype]: operand type float4_e2m1fn is not in the mma type table");
  expect_rule([] { matmul(of(DType::int32, {2, 4}), of(DType::int32, {4, 2})); }, Rule::dtype,
              "matmul [dtype]: operand type int32 is not in the matmul type table");
  // Every row of the table is accepted.
  for (const MmaRow& r : kMmaTable) EXPECT_NO_THROW(check_mma(of(r.operand, {2, 4}), of(r.operand, {4, 2}), of(r.accumulator, {2, 2})));
}

TEST(ReferenceMmaRules, Numerics) {
  Numerics n = Numerics::exact();
  n.integer_overflow = IntegerOverflow::saturate;
  expect_rule([&] { mma(f32({2, 4}), f32({4, 2}), f32({2, 2}), n); }, Rule::numerics,
              "mma [numerics]: integer_overflow saturate applies only to int32 results, not float32");
  try {
    matmul(f32({2, 4}), f32({4, 2}), Numerics::hardware("none"));
    ADD_FAILURE() << "no error";
  } catch (const RuleError& e) {
    EXPECT_EQ(e.rule(), Rule::no_model);
    // The list of registered models follows; other tests of this binary may have registered some.
    EXPECT_EQ(std::string(e.what()).rfind("matmul [no_model]: no hardware model named 'none' is registered (registered: ", 0),
              0u)
        << e.what();
  }
}

// transposed() swaps the last two dimensions of every batch matrix: a [2, 3, 5] tensor of distinct
// codes (not square, so rows and columns cannot be mixed up unseen), twice is the identity, and a
// rank-1 tensor is refused.
TEST(ReferenceTensorRules, TransposedSwapsTheLastTwoDimensionsOfEachMatrix) {
  std::vector<std::uint64_t> codes(2 * 3 * 5);
  for (std::size_t i = 0; i < codes.size(); ++i) codes[i] = 0x3F800000u + i;
  const Tensor t(DType::float32, {2, 3, 5}, codes);
  const Tensor u = t.transposed();
  ASSERT_EQ(u.shape(), (Shape{2, 5, 3}));
  for (std::int64_t b = 0; b < 2; ++b)
    for (std::int64_t i = 0; i < 3; ++i)
      for (std::int64_t j = 0; j < 5; ++j) EXPECT_EQ(u.code(b * 15 + j * 3 + i), t.code(b * 15 + i * 5 + j)) << b << i << j;
  EXPECT_EQ(u.transposed(), t);
  EXPECT_THROW((void)Tensor(DType::float32, {4}, {1, 2, 3, 4}).transposed(), std::invalid_argument);
}

TEST(ReferenceTensorRules, ConstructionIsChecked) {
  EXPECT_THROW(Tensor(DType::float32, {2, 2}, {1, 2, 3}), std::invalid_argument);
  EXPECT_THROW(Tensor(DType::float4_e2m1fn, {1, 1}, {0x10}), std::invalid_argument);  // bits above e2m1's 4
  EXPECT_THROW(Tensor(DType::float32, {}, {}), std::invalid_argument);
  EXPECT_THROW(Tensor(DType::float32, {-1, 2}, {}), std::invalid_argument);
  EXPECT_THROW(Tensor::full(DType::int8, {1, 1}, 128.0), std::invalid_argument);
  EXPECT_THROW(Tensor::full(DType::int8, {1, 1}, 0.5), std::invalid_argument);
  {
    // A subnormal is not an integer in any mode (under DAZ it had compared equal to its truncation).
    const test::HostileFpMode hostile;
    EXPECT_THROW(Tensor::full(DType::int8, {1, 1}, 0x1p-1060), std::invalid_argument);
    EXPECT_THROW(Tensor::full(DType::int32, {1, 1}, -0x1p-1074), std::invalid_argument);
  }
  EXPECT_THROW(Tensor::zeros(DType::float8_e8m0fnu, {1, 1}).negated(), std::invalid_argument);
  EXPECT_THROW(scales_from_layout(DType::float16, ScaleLayout{}, Side::x, 0, 1, 1, std::vector<std::uint8_t>{0}),
               std::invalid_argument);
  // cuda.tile's NVFP4 scales (float8_e4m3fn) come out of a layout with their sign bit.
  EXPECT_EQ(scales_from_layout(DType::float8_e4m3fn, ScaleLayout{}, Side::x, 0, 1, 2, std::vector<std::uint8_t>{0x38, 0xC0})
                .to_string(),
            "[[1, -2]]");
}

}  // namespace
}  // namespace blockscale::reference
