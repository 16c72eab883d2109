// SPDX-License-Identifier: Apache-2.0
// The numerics modes: where exact and sequential differ (crafted cases), NaN / Inf / signed-zero
// behaviour in each mode, integer overflow, and delegation to registered hardware models.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "blockscale/reference.h"

namespace blockscale::reference {
namespace {

constexpr std::uint32_t kNaN32 = 0x7FC00000u;

std::uint32_t bits(float f) { return std::bit_cast<std::uint32_t>(f); }

// A 1 x K by K x 1 mma_scaled whose products are prescribed: x holds e4m3 elements, y ones, and
// every block has its own x scale (y scales 1.0).
struct Dot {
  std::vector<double> x;           // K elements (e4m3 values)
  std::vector<std::uint8_t> xs;    // K / 32 e8m0 codes
  std::vector<double> y;           // K elements, default ones
  std::vector<std::uint8_t> ys;    // default 127 (1.0)
  float acc = 0.0f;
  DType type = DType::float8_e4m3fn;

  std::uint32_t run(const Numerics& n) const {
    const std::int64_t K = static_cast<std::int64_t>(x.size()), Ks = K / 32;
    std::vector<double> yv = y.empty() ? std::vector<double>(x.size(), 1.0) : y;
    std::vector<std::uint64_t> xsc(xs.begin(), xs.end()), ysc;
    for (std::int64_t b = 0; b < Ks; ++b) ysc.push_back(ys.empty() ? 127 : ys[static_cast<std::size_t>(b)]);
    const Tensor tx = Tensor::from_values(type, {1, K}, x, presets::ieee());
    const Tensor ty = Tensor::from_values(type, {K, 1}, yv, presets::ieee());
    const Tensor txs(DType::float8_e8m0fnu, {1, Ks}, xsc), tys(DType::float8_e8m0fnu, {Ks, 1}, ysc);
    const Tensor tacc(DType::float32, {1, 1}, {bits(acc)});
    return static_cast<std::uint32_t>(mma_scaled(tx, txs, ty, tys, tacc, {n}).code(0));
  }
  std::uint32_t exact() const { return run(Numerics::exact()); }
  std::uint32_t sequential() const { return run(Numerics::sequential()); }
};

Dot dot64() {
  Dot d;
  d.x.assign(64, 0.0);
  d.xs = {127, 127};
  return d;
}

// 1 + 32 * 2^-26: exact keeps every small product (1 + 2^-21, representable); the sequential
// chain rounds each 1 + 2^-26 back to 1.
TEST(ReferenceNumerics, ExactKeepsSmallProductsSequentialLosesThem) {
  Dot d = dot64();
  d.x[0] = 1.0;
  for (int k = 32; k < 64; ++k) d.x[static_cast<std::size_t>(k)] = 1.0;
  d.xs = {127, 127 - 26};
  EXPECT_EQ(d.exact(), bits(1.0f + 0x1p-21f));
  EXPECT_EQ(d.sequential(), bits(1.0f));
}

// 2^24 + 1 - 2^24: exact gives 1; sequential rounds 2^24 + 1 to 2^24 (tie to even) and ends at +0.
// (e5m2, whose smallest subnormal 2^-16 scales to 1.)
TEST(ReferenceNumerics, CancellationDependsOnOrderOnlyInSequential) {
  Dot d = dot64();
  d.type = DType::float8_e5m2;
  d.x[0] = 256.0;
  d.x[1] = 0x1p-16;
  d.x[2] = -256.0;
  d.xs = {127 + 16, 127};
  EXPECT_EQ(d.exact(), bits(1.0f));
  EXPECT_EQ(d.sequential(), bits(0.0f));
}

// Dequantising x * x_scale to f32 overflows (448 * 2^127) although the full product
// 448 * 2^127 * 1 * 2^-127 = 448 is small: sequential gives Inf, exact 448.
TEST(ReferenceNumerics, SequentialDequantisationOverflows) {
  Dot d = dot64();
  d.x[0] = 448.0;
  d.xs = {254, 127};
  d.ys = {0, 127};  // 2^-127
  EXPECT_EQ(d.exact(), bits(448.0f * 0x1p-0f));
  EXPECT_EQ(d.sequential(), bits(std::numeric_limits<float>::infinity()));
}

// A running sum that passes FLT_MAX and comes back: exact is finite, sequential stays Inf.
TEST(ReferenceNumerics, SequentialIntermediateOverflow) {
  Dot d = dot64();
  d.x[0] = 448.0;
  d.x[1] = 448.0;
  d.x[2] = -448.0;
  d.xs = {127 + 119, 127};  // 448 * 2^119 = 1.75 * 2^127: two of them exceed FLT_MAX
  EXPECT_EQ(d.exact(), bits(448.0f * 0x1p119f));
  EXPECT_EQ(d.sequential(), bits(std::numeric_limits<float>::infinity()));
}

// Final rounding overflow gives Inf in exact mode (nearest-even), FLT_MAX toward zero.
TEST(ReferenceNumerics, ExactFinalOverflow) {
  Dot d = dot64();
  d.x[0] = 448.0;
  d.x[1] = 448.0;
  d.xs = {127 + 119, 127};
  EXPECT_EQ(d.exact(), bits(std::numeric_limits<float>::infinity()));
  EXPECT_EQ(d.run(Numerics::exact(Rounding::toward_zero)), bits(std::numeric_limits<float>::max()));
  d.x[0] = d.x[1] = -448.0;
  EXPECT_EQ(d.exact(), bits(-std::numeric_limits<float>::infinity()));
}

// Tiny products far below the f32 range: exact keeps the subnormal result; sequential too (each
// product is exact inside fmaf), and both round 2^-150 the same way.
TEST(ReferenceNumerics, SubnormalResults) {
  Dot d = dot64();
  d.x[0] = 0x1p-9;  // smallest e4m3 subnormal
  d.xs = {0, 127};  // 2^-127 -> 2^-136
  d.ys = {127 - 10, 127};
  EXPECT_EQ(d.exact(), 1u << 3);  // 2^-146
  EXPECT_EQ(d.sequential(), 1u << 3);
  d.ys = {127 - 14, 127};  // 2^-150: a tie between 0 and 2^-149, even is 0
  EXPECT_EQ(d.exact(), 0u);
  EXPECT_EQ(d.run(Numerics::exact(Rounding::upward)), 1u);
}

// NaN / Inf / signed zeros, in both CPU modes.
TEST(ReferenceNumerics, NaNScaleMakesItsWholeBlockNaN) {
  for (const Numerics& n : {Numerics::exact(), Numerics::sequential()}) {
    Dot d = dot64();
    d.x[40] = 1.0;
    d.xs = {127, 0xFF};  // NaN scale on the block holding the only nonzero
    EXPECT_EQ(d.run(n), kNaN32) << to_string(n);
    d.x[40] = 0.0;  // NaN * 0 is still NaN: the whole block is NaN whatever its elements
    EXPECT_EQ(d.run(n), kNaN32) << to_string(n);
  }
  // Other rows are untouched: a 2-row x whose second row's scale is NaN.
  const Tensor x = Tensor::full(DType::float8_e4m3fn, {2, 32}, 1.0);
  const Tensor xs(DType::float8_e8m0fnu, {2, 1}, {127, 0xFF});
  const Tensor y = Tensor::full(DType::float8_e4m3fn, {32, 2}, 1.0);
  const Tensor ys = Tensor::full(DType::float8_e8m0fnu, {1, 2}, 1.0);
  const Tensor r = mma_scaled(x, xs, y, ys, Tensor::zeros(DType::float32, {2, 2}));
  EXPECT_EQ(r.codes()[0], bits(32.0f));
  EXPECT_EQ(r.codes()[1], bits(32.0f));
  EXPECT_EQ(r.codes()[2], kNaN32);
  EXPECT_EQ(r.codes()[3], kNaN32);
}

TEST(ReferenceNumerics, NaNElementsAndAccumulator) {
  for (const Numerics& n : {Numerics::exact(), Numerics::sequential()}) {
    Dot d = dot64();
    d.x[5] = std::numeric_limits<double>::quiet_NaN();  // e4m3 0x7F
    EXPECT_EQ(d.run(n), kNaN32) << to_string(n);
    Dot a = dot64();
    a.acc = -std::numeric_limits<float>::quiet_NaN();  // any payload and sign -> canonical NaN
    EXPECT_EQ(a.run(n), kNaN32) << to_string(n);
  }
}

TEST(ReferenceNumerics, InfinityRules) {
  for (const Numerics& n : {Numerics::exact(), Numerics::sequential()}) {
    Dot d = dot64();
    d.type = DType::float8_e5m2;
    d.x[3] = std::numeric_limits<double>::infinity();  // e5m2 +Inf times 1
    d.x[4] = 1.0;
    EXPECT_EQ(d.run(n), bits(std::numeric_limits<float>::infinity())) << to_string(n);
    d.x[5] = -std::numeric_limits<double>::infinity();  // +Inf and -Inf -> NaN
    EXPECT_EQ(d.run(n), kNaN32) << to_string(n);
    Dot z = dot64();
    z.type = DType::float8_e5m2;
    z.x[3] = std::numeric_limits<double>::infinity();
    z.y.assign(64, 1.0);
    z.y[3] = 0.0;  // Inf * 0 -> NaN
    EXPECT_EQ(z.run(n), kNaN32) << to_string(n);
    Dot c = dot64();
    c.type = DType::float8_e5m2;
    c.x[0] = -std::numeric_limits<double>::infinity();
    c.acc = std::numeric_limits<float>::infinity();  // acc +Inf with a -Inf product -> NaN
    EXPECT_EQ(c.run(n), kNaN32) << to_string(n);
    c.x[0] = 1.0;  // acc Inf with finite products -> Inf
    EXPECT_EQ(c.run(n), bits(std::numeric_limits<float>::infinity())) << to_string(n);
  }
}

TEST(ReferenceNumerics, SignedZeros) {
  for (const Numerics& n : {Numerics::exact(), Numerics::sequential()}) {
    Dot d = dot64();
    for (double& v : d.x) v = -0.0;
    d.acc = -0.0f;
    EXPECT_EQ(d.run(n), 0x80000000u) << to_string(n);  // all -0: -0
    d.acc = 0.0f;
    EXPECT_EQ(d.run(n), 0u) << to_string(n);  // one +0 among them: +0
    Dot c = dot64();
    c.x[0] = 1.0;
    c.x[1] = -1.0;  // exact cancellation: +0 (nearest)
    c.acc = -0.0f;
    EXPECT_EQ(c.run(n), 0u) << to_string(n);
  }
  Dot c = dot64();
  c.x[0] = 1.0;
  c.x[1] = -1.0;
  EXPECT_EQ(c.run(Numerics::exact(Rounding::downward)), 0x80000000u);  // ... -0 rounding down
}

// mma: f16 accumulation, f64, int32 overflow, matmul's -0.
TEST(ReferenceNumerics, MmaFloat16Accumulator) {
  // 2048 + 1 + 1 in f16: exact 2050; sequential rounds 2048 + 1 to 2048 twice (ties to even).
  const Tensor lhs = Tensor::from_values(DType::float16, {1, 3}, std::vector<double>{2048, 1, 1});
  const Tensor rhs = Tensor::full(DType::float16, {3, 1}, 1.0);
  const Tensor acc = Tensor::zeros(DType::float16, {1, 1});
  EXPECT_EQ(mma(lhs, rhs, acc).value(0), 2050.0);
  EXPECT_EQ(mma(lhs, rhs, acc, Numerics::sequential()).value(0), 2048.0);
  // Overflow to f16 Inf, and f16 NaN canonical 0x7E00.
  const Tensor big = Tensor::full(DType::float16, {1, 2}, 60000.0);
  const Tensor two = Tensor::full(DType::float16, {2, 1}, 1.0);
  EXPECT_EQ(mma(big, two, acc).code(0), 0x7C00u);
  EXPECT_EQ(mma(big, two, acc, Numerics::sequential()).code(0), 0x7C00u);
  const Tensor nan_acc = Tensor::full(DType::float16, {1, 1}, std::numeric_limits<double>::quiet_NaN());
  EXPECT_EQ(mma(big, two, nan_acc).code(0), 0x7E00u);
}

TEST(ReferenceNumerics, MmaFloat64) {
  // 1 + 2^-60 - 1 in f64: exact 2^-60; sequential fma loses it.
  const Tensor lhs = Tensor::from_values(DType::float64, {1, 3}, std::vector<double>{1.0, 0x1p-60, -1.0});
  const Tensor rhs = Tensor::full(DType::float64, {3, 1}, 1.0);
  EXPECT_EQ(matmul(lhs, rhs).value(0), 0x1p-60);
  EXPECT_EQ(matmul(lhs, rhs, Numerics::sequential()).value(0), 0.0);
  const Tensor inf = Tensor::from_values(DType::float64, {1, 2},
                                         std::vector<double>{std::numeric_limits<double>::infinity(), 0.0});
  const Tensor z = Tensor::from_values(DType::float64, {2, 1}, std::vector<double>{0.0, 1.0});
  EXPECT_EQ(matmul(inf, z).code(0), 0x7FF8000000000000u);  // Inf * 0
  EXPECT_EQ(matmul(inf, z, Numerics::sequential()).code(0), 0x7FF8000000000000u);
}

TEST(ReferenceNumerics, MatmulKeepsNegativeZero) {
  // matmul has no accumulator: -0 * 1 + -0 * 1 = -0 in both modes (mma with a +0 acc gives +0).
  const Tensor lhs = Tensor::full(DType::float32, {1, 2}, -0.0);
  const Tensor rhs = Tensor::full(DType::float32, {2, 1}, 1.0);
  EXPECT_EQ(matmul(lhs, rhs).code(0), 0x80000000u);
  EXPECT_EQ(matmul(lhs, rhs, Numerics::sequential()).code(0), 0x80000000u);
  EXPECT_EQ(mma(lhs, rhs, Tensor::zeros(DType::float32, {1, 1})).code(0), 0u);
}

TEST(ReferenceNumerics, Int32OverflowWrapsOrSaturates) {
  // 127 * 127 * K with K = 2^18: 4227858432 > 2^31.
  const std::int64_t K = std::int64_t{1} << 18;
  const Tensor lhs = Tensor::full(DType::int8, {1, K}, 127.0), rhs = Tensor::full(DType::int8, {K, 1}, 127.0);
  const Tensor acc = Tensor::zeros(DType::int32, {1, 1});
  const std::int64_t exact = 127 * 127 * K;
  const auto wrapped = static_cast<std::int32_t>(static_cast<std::uint32_t>(exact));
  Numerics sat = Numerics::exact();
  sat.integer_overflow = IntegerOverflow::saturate;
  EXPECT_EQ(mma(lhs, rhs, acc).value(0), wrapped);
  EXPECT_EQ(mma(lhs, rhs, acc, Numerics::sequential()).value(0), wrapped);  // modular arithmetic: same
  EXPECT_EQ(mma(lhs, rhs, acc, sat).value(0), std::numeric_limits<std::int32_t>::max());
  sat.mode = Mode::sequential;
  EXPECT_EQ(mma(lhs, rhs, acc, sat).value(0), std::numeric_limits<std::int32_t>::max());
  // Saturation per step (sequential) and once (exact) differ when the sum comes back into range:
  // K2/2 products of +127*127 (beyond 2^31), then K2/2 of -127*127.
  const std::int64_t K2 = std::int64_t{1} << 19;
  std::vector<double> l(static_cast<std::size_t>(K2), 127.0);
  for (std::size_t k = l.size() / 2; k < l.size(); ++k) l[k] = -127.0;
  const Tensor back = Tensor::from_values(DType::int8, {1, K2}, l);
  const Tensor rhs2 = Tensor::full(DType::int8, {K2, 1}, 127.0);
  const std::int64_t half = 127 * 127 * (K2 / 2);
  ASSERT_GT(half, std::numeric_limits<std::int32_t>::max());
  Numerics sat_exact = Numerics::exact();
  sat_exact.integer_overflow = IntegerOverflow::saturate;
  EXPECT_EQ(mma(back, rhs2, acc, sat_exact).value(0), 0.0);
  EXPECT_EQ(mma(back, rhs2, acc, sat).value(0), static_cast<double>(std::numeric_limits<std::int32_t>::max() - half));
  // uint8 x int8 mixes: 255 * -128.
  const Tensor u = Tensor::full(DType::uint8, {1, 1}, 255.0), s = Tensor::full(DType::int8, {1, 1}, -128.0);
  EXPECT_EQ(matmul(u, s).value(0), -32640.0);
}

TEST(ReferenceNumerics, ParseAndPrint) {
  for (const char* text : {"exact", "exact(toward_zero)", "exact(nearest_away)", "sequential", "hardware(sm100a.x)",
                           "exact+saturate", "sequential+saturate"}) {
    EXPECT_EQ(to_string(parse_numerics(text)), text);
  }
  EXPECT_EQ(parse_numerics("sequential_f32"), Numerics::sequential());
  EXPECT_EQ(parse_numerics("hardware(m)").model, "m");
  EXPECT_THROW(parse_numerics("exact(sideways)"), std::invalid_argument);
  EXPECT_THROW(parse_numerics("fast"), std::invalid_argument);
  EXPECT_THROW(parse_numerics("hardware(a)(b)"), std::invalid_argument);  // not the model "a)(b"
  EXPECT_THROW(parse_numerics("hardware(sm 90a)"), std::invalid_argument);
  EXPECT_THROW(parse_numerics("hardware()"), std::invalid_argument);
}

// Delegation: a registered model receives each batch's 2-D slices (broadcast resolved) and its
// results are assembled in acc's shape.
TEST(ReferenceNumerics, HardwareModelDelegation) {
  std::vector<Shape> seen;
  register_scaled_mma_model({"test.sum_of_x", "returns sum(x row) + acc, to check the slicing"},
                            [&](const Tensor& x, const Tensor& xs, const Tensor& y, const Tensor& ys, const Tensor& acc) {
                              seen.push_back(x.shape());
                              EXPECT_EQ(xs.rank(), 2);
                              EXPECT_EQ(y.rank(), 2);
                              EXPECT_EQ(ys.rank(), 2);
                              std::vector<double> v;
                              for (std::int64_t i = 0; i < acc.extent(0); ++i)
                                for (std::int64_t j = 0; j < acc.extent(1); ++j) {
                                  double s = acc.value(i * acc.extent(1) + j);
                                  for (std::int64_t k = 0; k < x.extent(1); ++k) s += x.value(i * x.extent(1) + k);
                                  v.push_back(s);
                                }
                              return Tensor::from_values(DType::float32, acc.shape(), v);
                            });
  // The registries list each model with its description, scaled and unscaled apart.
  const auto listed = [](const std::vector<ModelInfo>& models, const std::string& name, const std::string& description) {
    return std::count_if(models.begin(), models.end(),
                         [&](const ModelInfo& m) { return m.name == name && m.description == description; });
  };
  EXPECT_EQ(listed(scaled_mma_models(), "test.sum_of_x", "returns sum(x row) + acc, to check the slicing"), 1);
  EXPECT_EQ(listed(mma_models(), "test.sum_of_x", "returns sum(x row) + acc, to check the slicing"), 0);
  register_mma_model({"test.acc", "returns acc"}, [](const Tensor&, const Tensor&, const Tensor& a) { return a; });
  EXPECT_EQ(listed(mma_models(), "test.acc", "returns acc"), 1);
  EXPECT_EQ(listed(scaled_mma_models(), "test.acc", "returns acc"), 0);
  register_mma_model({"test.acc", "returns acc, registered again"}, [](const Tensor&, const Tensor&, const Tensor& a) { return a; });
  EXPECT_EQ(listed(mma_models(), "test.acc", "returns acc"), 0);  // replaced, not listed twice
  EXPECT_EQ(listed(mma_models(), "test.acc", "returns acc, registered again"), 1);
  std::vector<double> xv;
  for (int b = 0; b < 2; ++b) xv.insert(xv.end(), 32, b + 1.0);
  const Tensor x = Tensor::from_values(DType::float8_e4m3fn, {2, 1, 32}, xv);
  const Tensor xs = Tensor::full(DType::float8_e8m0fnu, {2, 1, 1}, 1.0);
  const Tensor y = Tensor::full(DType::float8_e4m3fn, {32, 1}, 1.0);
  const Tensor ys = Tensor::full(DType::float8_e8m0fnu, {1, 1}, 1.0);
  const Tensor acc = Tensor::full(DType::float32, {2, 1, 1}, 0.5);
  const Tensor r = mma_scaled(x, xs, y, ys, acc, {Numerics::hardware("test.sum_of_x")});
  EXPECT_EQ(r.to_string(), "[[[32.5]], [[64.5]]]");
  EXPECT_EQ(seen.size(), 2u);
  // A model that answers in the wrong shape is caught.
  register_scaled_mma_model({"test.wrong_shape", "returns a 1 x 1"},
                            [](const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&) {
                              return Tensor::zeros(DType::float32, {1, 2});
                            });
  EXPECT_THROW(mma_scaled(x, xs, y, ys, acc, {Numerics::hardware("test.wrong_shape")}), std::logic_error);
  // A name that hardware(<name>) could not give back is refused.
  EXPECT_THROW(register_mma_model({"a)(b", "unreadable"}, [](const Tensor&, const Tensor&, const Tensor& a) { return a; }),
               std::invalid_argument);
  EXPECT_THROW(register_mma_model({"", "empty"}, [](const Tensor&, const Tensor&, const Tensor& a) { return a; }),
               std::invalid_argument);
  // mma / matmul models: matmul passes a +0 accumulator of the result type.
  register_mma_model({"test.acc_echo", "returns acc + 1"}, [](const Tensor&, const Tensor&, const Tensor& a) {
    std::vector<double> v = a.values();
    for (double& e : v) e += 1;
    return Tensor::from_values(a.dtype(), a.shape(), v);
  });
  const Tensor l = Tensor::iota(DType::float16, {2, 4}), rr = Tensor::iota(DType::float16, {4, 2});
  EXPECT_EQ(matmul(l, rr, Numerics::hardware("test.acc_echo")).to_string(), "[[1, 1], [1, 1]]");
  EXPECT_EQ(mma(l, rr, Tensor::iota(DType::float32, {2, 2}), Numerics::hardware("test.acc_echo")).to_string(),
            "[[1, 2], [3, 4]]");
}

// Numerics fields outside their enums are refused by rule rather than run as another mode (from an
// audit, 2026-11-30: mode 3 ran as sequential, rounding 6 as truncation, integer_overflow 2 as wrap).
TEST(ReferenceNumerics, ValuesOutsideTheEnumsAreRefused) {
  const Tensor lhs = Tensor::from_values(DType::float16, {1, 3}, std::vector<double>{2048, 1, 1});
  const Tensor rhs = Tensor::full(DType::float16, {3, 1}, 1.0);
  const Tensor acc = Tensor::zeros(DType::float16, {1, 1});
  const auto refused = [&](const Numerics& n, const std::string& message) {
    for (const bool with_acc : {true, false}) {
      try {
        if (with_acc) {
          (void)mma(lhs, rhs, acc, n);
        } else {
          (void)matmul(lhs, rhs, n);
        }
        ADD_FAILURE() << "taken: " << message;
      } catch (const RuleError& e) {
        EXPECT_EQ(e.rule(), Rule::numerics);
        EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
      }
    }
  };
  Numerics n = Numerics::exact();
  n.mode = static_cast<Mode>(3);
  refused(n, "Numerics::mode = 3 is not a Mode");
  n = Numerics::exact();
  n.rounding = static_cast<Rounding>(6);
  refused(n, "Numerics::rounding = 6 is not a Rounding");
  n = Numerics::exact();
  n.integer_overflow = static_cast<IntegerOverflow>(2);
  refused(n, "Numerics::integer_overflow = 2 is not an IntegerOverflow");
  ExactSum sum;
  sum.add(false, 3, 0);
  EXPECT_THROW((void)sum.round_to(DType::float16, static_cast<Rounding>(6)), std::invalid_argument);
  EXPECT_THROW((void)sum.to_int32(static_cast<IntegerOverflow>(2)), std::invalid_argument);
}

}  // namespace
}  // namespace blockscale::reference
