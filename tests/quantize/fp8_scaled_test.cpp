// SPDX-License-Identifier: Apache-2.0
// quantize_fp8_scaled (fp8 with fp32 scales) against the recipes' formulas, with every element
// checked against a brute-force nearest-value search over the format's codes (not the library's
// conversion). PyTorch itself is the oracle in scripts/fp8_scaled_vs_torch.py (on a GPU), and
// tests/tools/cli_gemm_test.py checks the recipes in exact rational arithmetic through the CLI.
#include "blockscale/quantize/fp8_scaled.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "blockscale/formats/convert.h"
#include "expect_throw.h"

namespace blockscale {
namespace {

using blockscale::test::invalid_argument_message;

using G = Fp8Granularity;
using R = Fp8ScaleRecipe;

// The nearest finite value of `f` to y, ties to the even code (the one whose lowest bit is 0),
// by trying every code: -0 for a negative y that rounds to zero.
std::uint8_t nearest_code(Format f, float y) {
  int best = -1;
  double best_distance = std::numeric_limits<double>::infinity();
  for (int c = 0; c < 256; ++c) {
    const double v = to_double(f, static_cast<std::uint32_t>(c));
    if (!std::isfinite(v) || (v == 0.0 && std::signbit(v) != std::signbit(y))) continue;
    const double d = std::fabs(v - static_cast<double>(y));
    if (d < best_distance || (d == best_distance && (c & 1) == 0)) {
      best = c;
      best_distance = d;
    }
  }
  return static_cast<std::uint8_t>(best);
}

std::vector<float> data(std::int64_t count, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal;
  std::uniform_int_distribution<int> exponent(-20, 12);
  std::vector<float> x(static_cast<std::size_t>(count));
  for (float& v : x) v = std::ldexp(normal(rng), exponent(rng));
  return x;
}

struct Block {
  std::int64_t rows, k;  // extent of one block (whole tensor: the tensor's)
};

Block extent(G g, std::int64_t rows, std::int64_t k) {
  switch (g) {
    case G::tensor: return {rows, k};
    case G::row: return {1, k};
    case G::block_1x128: return {1, 128};
    case G::block_128x128: return {128, 128};
  }
  return {0, 0};
}

// Every scale and element of m against the recipe, x being rows x k (KAxis::last).
void expect_recipe(const Fp8ScaledMatrix& m, const std::vector<float>& x) {
  const Block e = extent(m.granularity, m.rows, m.k);
  const double limit = m.element == Format::float8_e4m3fn ? 448.0 : 57344.0;
  for (std::int64_t r0 = 0; r0 < m.rows; r0 += e.rows)
    for (std::int64_t k0 = 0; k0 < m.k; k0 += e.k) {
      float amax = 0.0f;
      for (std::int64_t r = r0; r < std::min(m.rows, r0 + e.rows); ++r)
        for (std::int64_t k = k0; k < std::min(m.k, k0 + e.k); ++k)
          amax = std::max(amax, std::fabs(x[static_cast<std::size_t>(r * m.k + k)]));
      float multiplier = 0.0f, gemm_scale = 0.0f;
      if (m.recipe == R::torchao) {
        multiplier = static_cast<float>(1.0 / std::max(static_cast<double>(amax), 1e-12) * limit);
        gemm_scale = 1.0f / multiplier;
      } else {
        gemm_scale = std::max(amax, 1e-4f) * (1.0f / 448.0f);
        if (m.recipe == R::deepgemm_ue8m0) {  // the power of two at or above
          const float p = std::exp2(std::ceil(std::log2(static_cast<double>(gemm_scale))));
          ASSERT_GE(p, gemm_scale);
          ASSERT_LT(p, 2 * gemm_scale);
          gemm_scale = p;
        }
        multiplier = 1.0f / gemm_scale;
      }
      for (std::int64_t r = r0; r < std::min(m.rows, r0 + e.rows); ++r) {
        for (std::int64_t q = k0 / 128; q < (std::min(m.k, k0 + e.k) + 127) / 128; ++q) {
          ASSERT_EQ(std::bit_cast<std::uint32_t>(m.scale(r, q)), std::bit_cast<std::uint32_t>(gemm_scale))
              << "row " << r << " block " << q;
        }
        for (std::int64_t k = k0; k < std::min(m.k, k0 + e.k); ++k) {
          float y = x[static_cast<std::size_t>(r * m.k + k)] * multiplier;
          if (m.recipe == R::torchao)
            y = std::clamp(y, static_cast<float>(-limit), static_cast<float>(limit));
          ASSERT_EQ(m.codes[static_cast<std::size_t>(r * m.k + k)], nearest_code(m.element, y))
              << "row " << r << " k " << k << " y " << y;
        }
      }
    }
}

TEST(Fp8Scaled, EveryRecipeAndGranularityFollowsItsFormula) {
  const std::int64_t rows = 130, k = 300;  // 128-row and 128-K tails
  const std::vector<float> x = data(rows * k, 1);
  struct Case {
    R recipe;
    G granularity;
    Format element;
  };
  const Case cases[] = {{R::deepgemm, G::block_1x128, Format::float8_e4m3fn},
                        {R::deepgemm, G::block_128x128, Format::float8_e4m3fn},
                        {R::deepgemm, G::tensor, Format::float8_e4m3fn},
                        {R::deepgemm, G::row, Format::float8_e4m3fn},
                        {R::deepgemm_ue8m0, G::block_1x128, Format::float8_e4m3fn},
                        {R::deepgemm_ue8m0, G::block_128x128, Format::float8_e4m3fn},
                        {R::torchao, G::tensor, Format::float8_e4m3fn},
                        {R::torchao, G::row, Format::float8_e4m3fn},
                        {R::torchao, G::tensor, Format::float8_e5m2},
                        {R::torchao, G::row, Format::float8_e5m2}};
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(to_string(c.recipe)) + " " + std::string(to_string(c.granularity)));
    const Fp8ScaledMatrix m =
        quantize_fp8_scaled(x, rows, k, KAxis::last, c.element, c.granularity, c.recipe);
    EXPECT_EQ(m.rows, rows);
    EXPECT_EQ(m.k, k);
    const std::size_t want_scales = c.granularity == G::tensor        ? 1
                                    : c.granularity == G::row         ? static_cast<std::size_t>(rows)
                                    : c.granularity == G::block_1x128 ? static_cast<std::size_t>(rows * 3)
                                                                      : static_cast<std::size_t>(2 * 3);
    EXPECT_EQ(m.scales.size(), want_scales);
    expect_recipe(m, x);
  }
}

TEST(Fp8Scaled, SmallAndZeroBlocksTakeTheRecipesFloors) {
  // A block of zeros and one of tiny values: DeepGEMM clamps amax at fp32(1e-4), torchao at 1e-12.
  std::vector<float> x(2 * 256, 0.0f);
  for (int k = 128; k < 256; ++k) x[static_cast<std::size_t>(k)] = 1e-30f * static_cast<float>(k - 127);
  x[256] = -0.0f;
  for (const R r : {R::deepgemm, R::deepgemm_ue8m0}) {
    const Fp8ScaledMatrix m =
        quantize_fp8_scaled(x, 2, 256, KAxis::last, Format::float8_e4m3fn, G::block_1x128, r);
    expect_recipe(m, x);
    EXPECT_EQ(m.codes[256], 0x80) << "-0 stays -0";
  }
  const Fp8ScaledMatrix t =
      quantize_fp8_scaled(x, 2, 256, KAxis::last, Format::float8_e4m3fn, G::row, R::torchao);
  expect_recipe(t, x);
}

TEST(Fp8Scaled, KFirstIsTheTransposeOfKLast) {
  const std::int64_t n = 200, k = 260;
  const std::vector<float> nk = data(n * k, 2);  // N x K
  std::vector<float> kn(nk.size());              // K x N
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t kk = 0; kk < k; ++kk)
      kn[static_cast<std::size_t>(kk * n + j)] = nk[static_cast<std::size_t>(j * k + kk)];
  for (const G g : {G::block_1x128, G::block_128x128, G::row}) {
    const Fp8ScaledMatrix a =
        quantize_fp8_scaled(nk, n, k, KAxis::last, Format::float8_e4m3fn, g, R::deepgemm);
    const Fp8ScaledMatrix b =
        quantize_fp8_scaled(kn, n, k, KAxis::first, Format::float8_e4m3fn, g, R::deepgemm);
    EXPECT_EQ(a.codes, b.codes) << to_string(g);
    EXPECT_EQ(a.scales, b.scales) << to_string(g);
  }
}

TEST(Fp8Scaled, BadInputNamesTheRule) {
  const std::vector<float> x(4 * 128, 1.0f);
  EXPECT_NE(invalid_argument_message([&] {
              quantize_fp8_scaled(x, 4, 128, KAxis::last, Format::float8_e5m2, G::block_1x128, R::deepgemm);
            }).find("float8_e4m3fn only"),
            std::string::npos);
  EXPECT_NE(invalid_argument_message([&] {
              quantize_fp8_scaled(x, 4, 128, KAxis::last, Format::float8_e4m3fn, G::block_1x128, R::torchao);
            }).find("tensorwise or rowwise"),
            std::string::npos);
  EXPECT_NE(invalid_argument_message([&] {
              quantize_fp8_scaled(x, 4, 128, KAxis::last, Format::float4_e2m1fn, G::row, R::torchao);
            }).find("float8_e4m3fn or float8_e5m2"),
            std::string::npos);
  EXPECT_NE(invalid_argument_message([&] {
              quantize_fp8_scaled(x, 4, 100, KAxis::last, Format::float8_e4m3fn, G::row, R::deepgemm);
            }).find("512 values"),
            std::string::npos);
  EXPECT_NE(invalid_argument_message([&] {
              quantize_fp8_scaled(x, 0, 128, KAxis::last, Format::float8_e4m3fn, G::row, R::deepgemm);
            }).find("1..2^31"),
            std::string::npos);
  for (const float bad : {std::numeric_limits<float>::quiet_NaN(), -std::numeric_limits<float>::infinity()}) {
    std::vector<float> y = x;
    y[3 * 128 + 5] = bad;
    EXPECT_NE(invalid_argument_message([&] {
                quantize_fp8_scaled(y, 4, 128, KAxis::last, Format::float8_e4m3fn, G::row, R::deepgemm);
              }).find("element (3, 5)"),
              std::string::npos);
    // With K first the same value is element (5, 3) of the K x rows input.
    std::vector<float> t(x.size(), 1.0f);
    t[5 * 4 + 3] = bad;
    EXPECT_NE(invalid_argument_message([&] {
                quantize_fp8_scaled(t, 4, 128, KAxis::first, Format::float8_e4m3fn, G::row, R::deepgemm);
              }).find("element (5, 3)"),
              std::string::npos);
  }
}

}  // namespace
}  // namespace blockscale
