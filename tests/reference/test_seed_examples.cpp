// SPDX-License-Identifier: Apache-2.0
// The worked examples of the cuda.tile documentation (seeds 000 and 004), in every numerics mode
// that computes on the CPU, plus the batch-broadcast cases of the same examples.
#include <gtest/gtest.h>

#include <bit>

#include "blockscale/layout/scale_layout.h"
#include "blockscale/reference.h"

namespace blockscale::reference {
namespace {

const Numerics kModes[] = {Numerics::exact(), Numerics::sequential()};

std::vector<float> floats(const Tensor& t) {
  std::vector<float> v;
  for (const double d : t.values()) v.push_back(static_cast<float>(d));
  return v;
}

// cuda.tile.mma_scaled "Basic usage": ones (2, 64) e4m3 with e8m0 scales 2.0, ones (64, 2) with
// scales 2.0, zero acc -> 64 * 2 * 2 = 256 everywhere.
TEST(ReferenceSeedExamples, MmaScaledBasic2x64Gives256) {
  const Tensor tx = Tensor::full(DType::float8_e4m3fn, {2, 64}, 1.0);
  const Tensor sx = Tensor::full(DType::float8_e8m0fnu, {2, 2}, 2.0);
  const Tensor ty = Tensor::full(DType::float8_e4m3fn, {64, 2}, 1.0);
  const Tensor sy = Tensor::full(DType::float8_e8m0fnu, {2, 2}, 2.0);
  const Tensor acc = Tensor::zeros(DType::float32, {2, 2});
  ASSERT_EQ(sx.code(0), 128u);  // e8m0 2.0
  for (const Numerics& n : kModes) {
    const Tensor tz = mma_scaled(tx, sx, ty, sy, acc, {n});
    EXPECT_EQ(tz.dtype(), DType::float32);
    EXPECT_EQ(tz.shape(), (Shape{2, 2}));
    EXPECT_EQ(tz.to_string(), "[[256, 256], [256, 256]]") << to_string(n);
  }
}

// The sm_100 example: M = N = K = 128, e4m3 ones, e8m0 scales 2.0 passed through the
// swizzle_32_4_4 layout (128 x 4 tiles), Y given as (N, K) and transposed, B = 32 -> 512.
TEST(ReferenceSeedExamples, MmaScaledSwizzle32x4x4Gives512) {
  const std::int64_t M = 128, N = 128, K = 128, B = 32, Ks = K / B;
  const Tensor X = Tensor::full(DType::float8_e4m3fn, {M, K}, 1.0);
  const Tensor Y = Tensor::full(DType::float8_e4m3fn, {N, K}, 1.0);
  const ScaleLayout swizzle = ScaleLayout::of(ScaleLayoutKind::cutile_swizzle_32_4_4);
  EXPECT_EQ(storage_shape(swizzle, M, Ks), (std::vector<std::int64_t>{1, 1, 32, 16}));
  // The host side: full((M, K_s), 2.0) in e8m0, then swizzled.
  const std::vector<std::uint8_t> logical(static_cast<std::size_t>(M * Ks), 128);
  std::vector<std::uint8_t> X_scale(static_cast<std::size_t>(storage_size(swizzle, M, Ks)));
  std::vector<std::uint8_t> Y_scale(static_cast<std::size_t>(storage_size(swizzle, N, Ks)));
  to_layout(swizzle, 1, M, Ks, logical, X_scale);
  to_layout(swizzle, 1, N, Ks, logical, Y_scale);
  // The kernel side: unswizzle (and transpose for y).
  const Tensor x_s = scales_from_layout(DType::float8_e8m0fnu, swizzle, Side::x, 0, M, Ks, X_scale);
  const Tensor y_s = scales_from_layout(DType::float8_e8m0fnu, swizzle, Side::y, 0, N, Ks, Y_scale);
  EXPECT_EQ(x_s.shape(), (Shape{M, Ks}));
  EXPECT_EQ(y_s.shape(), (Shape{Ks, N}));
  const Tensor acc = Tensor::zeros(DType::float32, {M, N});
  for (const Numerics& n : kModes) {
    const Tensor Z = mma_scaled(X, x_s, Y.transposed(), y_s, acc, {n});
    for (const float v : floats(Z)) ASSERT_EQ(v, 512.0f) << to_string(n);
  }
}

// The layout really is undone: distinct scales per (row, block) survive the round trip.
TEST(ReferenceSeedExamples, ScalesFromLayoutUndoesTheSwizzle) {
  const std::int64_t R = 256, C = 8;
  const ScaleLayout swizzle = ScaleLayout::of(ScaleLayoutKind::cutile_swizzle_32_4_4);
  std::vector<std::uint8_t> logical(static_cast<std::size_t>(R * C));
  for (std::size_t i = 0; i < logical.size(); ++i) logical[i] = static_cast<std::uint8_t>(i * 7 % 251);
  std::vector<std::uint8_t> stored(static_cast<std::size_t>(storage_size(swizzle, R, C)));
  to_layout(swizzle, 1, R, C, logical, stored);
  ASSERT_NE(stored, logical);
  const Tensor xs = scales_from_layout(DType::float8_e8m0fnu, swizzle, Side::x, 0, R, C, stored);
  const Tensor ys = scales_from_layout(DType::float8_e8m0fnu, swizzle, Side::y, 0, R, C, stored);
  for (std::int64_t r = 0; r < R; ++r)
    for (std::int64_t c = 0; c < C; ++c) {
      ASSERT_EQ(xs.code(r * C + c), logical[static_cast<std::size_t>(r * C + c)]);
      ASSERT_EQ(ys.code(c * R + r), logical[static_cast<std::size_t>(r * C + c)]);
    }
}

struct IotaCase {
  DType operand;
  DType acc;
};

// ct::mma with iota tiles: [[0,1,2,3],[4,5,6,7]] x [[0,1],[2,3],[4,5],[6,7]] + [[0,1],[2,3]].
// Every operand / accumulator pair of the type table holds these small integers exactly.
class ReferenceIotaMma : public ::testing::TestWithParam<IotaCase> {};

TEST_P(ReferenceIotaMma, Rank2) {
  const auto [op, ac] = GetParam();
  const Tensor lhs = Tensor::iota(op, {2, 4}), rhs = Tensor::iota(op, {4, 2}), acc = Tensor::iota(ac, {2, 2});
  for (const Numerics& n : kModes) {
    const Tensor r = mma(lhs, rhs, acc, n);
    EXPECT_EQ(r.dtype(), ac);
    EXPECT_EQ(r.to_string(), "[[28, 35], [78, 101]]") << to_string(n);
  }
}

TEST_P(ReferenceIotaMma, Rank3SecondBatchNegated) {
  const auto [op, ac] = GetParam();
  // uint8 has no negative values: its negated rhs is int8, the mixed 8-bit pair the table allows.
  const DType rhs_type = op == DType::uint8 ? DType::int8 : op;
  const Tensor l = Tensor::iota(op, {1, 2, 4}), r = Tensor::iota(rhs_type, {1, 4, 2}), a = Tensor::iota(ac, {1, 2, 2});
  auto cat = [](const Tensor& t0, const Tensor& t1) {
    std::vector<std::uint64_t> c(t0.codes().begin(), t0.codes().end());
    c.insert(c.end(), t1.codes().begin(), t1.codes().end());
    Shape s = t0.shape();
    s[0] = 2;
    return Tensor(t0.dtype(), s, c);
  };
  const Tensor lhs = cat(l, l), rhs = cat(r, r.negated()), acc = cat(a, a.negated());
  for (const Numerics& n : kModes) {
    EXPECT_EQ(mma(lhs, rhs, acc, n).to_string(), "[[[28, 35], [78, 101]], [[-28, -35], [-78, -101]]]")
        << to_string(n);
  }
}

INSTANTIATE_TEST_SUITE_P(TypeTable, ReferenceIotaMma,
                         ::testing::Values(IotaCase{DType::float32, DType::float32},
                                           IotaCase{DType::float16, DType::float16},
                                           IotaCase{DType::float16, DType::float32},
                                           IotaCase{DType::bfloat16, DType::float32},
                                           IotaCase{DType::tfloat32, DType::float32},
                                           IotaCase{DType::float64, DType::float64},
                                           IotaCase{DType::float8_e4m3fn, DType::float16},
                                           IotaCase{DType::float8_e4m3fn, DType::float32},
                                           IotaCase{DType::float8_e5m2, DType::float16},
                                           IotaCase{DType::float8_e5m2, DType::float32},
                                           IotaCase{DType::int8, DType::int32},
                                           IotaCase{DType::uint8, DType::int32}),
                         [](const auto& param_info) {
                           return to_string(param_info.param.operand) + "_" + to_string(param_info.param.acc);
                         });

// ct::matmul of the same tiles -> [[28, 34], [76, 98]] in matmul_result_t's type.
TEST(ReferenceSeedExamples, MatmulIotaRank2) {
  for (const auto& [op, res] : kMatmulTable) {
    const Tensor r = matmul(Tensor::iota(op, {2, 4}), Tensor::iota(op, {4, 2}));
    EXPECT_EQ(r.dtype(), res) << to_string(op);
    EXPECT_EQ(r.to_string(), "[[28, 34], [76, 98]]") << to_string(op);
    EXPECT_EQ(matmul(Tensor::iota(op, {2, 4}), Tensor::iota(op, {4, 2}), Numerics::sequential()), r);
  }
}

TEST(ReferenceSeedExamples, MatmulIotaRank3SecondBatchNegated) {
  const Tensor l = Tensor::iota(DType::float32, {1, 2, 4}), r = Tensor::iota(DType::float32, {1, 4, 2});
  std::vector<std::uint64_t> lc(l.codes().begin(), l.codes().end()), rc(r.codes().begin(), r.codes().end());
  lc.insert(lc.end(), l.codes().begin(), l.codes().end());
  const Tensor rn = r.negated();
  rc.insert(rc.end(), rn.codes().begin(), rn.codes().end());
  const Tensor lhs(DType::float32, {2, 2, 4}, lc), rhs(DType::float32, {2, 4, 2}, rc);
  for (const Numerics& n : kModes)
    EXPECT_EQ(matmul(lhs, rhs, n).to_string(), "[[[28, 34], [76, 98]], [[-28, -34], [-76, -98]]]");
}

// Batch broadcast: a batch of 1 on either side against C on the other, the accumulator's batch
// defining the result (mma), the larger batch defining it (matmul).
TEST(ReferenceSeedExamples, MmaBroadcastsBatchOfOne) {
  const Tensor l1 = Tensor::iota(DType::float32, {1, 2, 4}), r1 = Tensor::iota(DType::float32, {1, 4, 2});
  const Tensor acc3 = Tensor::zeros(DType::float32, {3, 2, 2});
  const std::string one = "[[28, 34], [76, 98]]";
  const std::string three = "[" + one + ", " + one + ", " + one + "]";
  EXPECT_EQ(mma(l1, r1, acc3).to_string(), three);  // A = B = 1, C = 3
  std::vector<std::uint64_t> r3c;
  for (int b = 0; b < 3; ++b) r3c.insert(r3c.end(), r1.codes().begin(), r1.codes().end());
  std::vector<std::uint64_t> l3c;
  for (int b = 0; b < 3; ++b) l3c.insert(l3c.end(), l1.codes().begin(), l1.codes().end());
  const Tensor r3(DType::float32, {3, 4, 2}, r3c), l3(DType::float32, {3, 2, 4}, l3c);
  EXPECT_EQ(mma(l1, r3, acc3).to_string(), three);  // A = 1, B = C
  EXPECT_EQ(mma(l3, r1, acc3).to_string(), three);  // A = C, B = 1
  EXPECT_EQ(matmul(l1, r3).to_string(), three);
  EXPECT_EQ(matmul(l3, r1).to_string(), three);
  EXPECT_EQ(matmul(l1, r1).shape(), (Shape{1, 2, 2}));
}

// mma_scaled: x and y batches broadcast against each other (batch 1 or rank 2 against C), the
// scales follow their operand exactly, and the result takes acc's shape.
// The NVFP4 row of the cuda.tile table: f4e2m1fn with f8e4m3fn scales and B = 16. The formula
// multiplies by the scale's value, sign included (the hardware models read the byte as ue4m3 and
// ignore the sign: tests/emulator/gemm_test.cpp).
TEST(ReferenceSeedExamples, MmaScaledNvfp4TakesE4m3fnScales) {
  const Tensor x = Tensor::full(DType::float4_e2m1fn, {2, 32}, 1.0);
  const Tensor xs = Tensor::from_values(DType::float8_e4m3fn, {2, 2}, std::vector<double>{2.0, 2.0, -0.5, 0.25});
  const Tensor y = Tensor::full(DType::float4_e2m1fn, {32, 2}, 1.5);
  const Tensor ys = Tensor::from_values(DType::float8_e4m3fn, {2, 2}, std::vector<double>{1.0, -1.0, 1.0, 0.125});
  // (i, j) = 16 * 1.5 * (xs[i][0] ys[0][j] + xs[i][1] ys[1][j]).
  EXPECT_EQ(mma_scaled(x, xs, y, ys, Tensor::zeros(DType::float32, {2, 2})).to_string(), "[[96, -42], [-6, 12.75]]");
  EXPECT_EQ(mma_scaled(x, xs, y, ys, Tensor::zeros(DType::float32, {2, 2}), {Numerics::sequential()}).to_string(),
            "[[96, -42], [-6, 12.75]]");
}

TEST(ReferenceSeedExamples, MmaScaledBroadcastsBatches) {
  const std::int64_t C = 3;
  // x batch b holds the value b + 1 in every element, so the batch each output used is visible.
  std::vector<double> xv;
  for (int b = 0; b < C; ++b) xv.insert(xv.end(), 2 * 32, b + 1.0);
  const Tensor x3 = Tensor::from_values(DType::float8_e4m3fn, {C, 2, 32}, xv);
  const Tensor xs3 = Tensor::full(DType::float8_e8m0fnu, {C, 2, 1}, 1.0);
  const Tensor y1 = Tensor::full(DType::float8_e4m3fn, {1, 32, 2}, 1.0);
  const Tensor ys1 = Tensor::full(DType::float8_e8m0fnu, {1, 1, 2}, 0.5);
  const Tensor y2 = Tensor::full(DType::float8_e4m3fn, {32, 2}, 1.0);
  const Tensor ys2 = Tensor::full(DType::float8_e8m0fnu, {1, 2}, 0.5);
  const Tensor acc = Tensor::zeros(DType::float32, {C, 2, 2});
  const std::string expect = "[[[16, 16], [16, 16]], [[32, 32], [32, 32]], [[48, 48], [48, 48]]]";
  EXPECT_EQ(mma_scaled(x3, xs3, y1, ys1, acc).to_string(), expect);  // C against 1
  EXPECT_EQ(mma_scaled(x3, xs3, y2, ys2, acc).to_string(), expect);  // C against rank 2
  // 1 against C, the other way round: y carries the batch.
  std::vector<double> yv;
  for (int b = 0; b < C; ++b) yv.insert(yv.end(), 32 * 2, b + 1.0);
  const Tensor y3 = Tensor::from_values(DType::float8_e4m3fn, {C, 32, 2}, yv);
  const Tensor ys3 = Tensor::full(DType::float8_e8m0fnu, {C, 1, 2}, 1.0);
  const Tensor x1 = Tensor::full(DType::float8_e4m3fn, {1, 2, 32}, 1.0);
  const Tensor xs1 = Tensor::full(DType::float8_e8m0fnu, {1, 2, 1}, 0.5);
  EXPECT_EQ(mma_scaled(x1, xs1, y3, ys3, acc).to_string(), expect);
  // Both of batch 1: the output batch is 1, and an accumulator of batch C is refused (cuda.tile
  // broadcasts x and y to the output batch shape; acc must have that shape).
  EXPECT_EQ(mma_scaled(x1, xs1, y1, ys1, Tensor::zeros(DType::float32, {1, 2, 2})).to_string(), "[[[8, 8], [8, 8]]]");
  EXPECT_THROW(mma_scaled(x1, xs1, y1, ys1, acc), RuleError);
}

}  // namespace
}  // namespace blockscale::reference
