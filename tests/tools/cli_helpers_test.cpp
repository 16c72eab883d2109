// SPDX-License-Identifier: Apache-2.0
// tools/cli: the statistics helpers that `blockscale gemm` and `demo` report with. order_statistics
// against a full std::sort of the kept values (ties, zeros, +Inf, keys left out, one bin holding
// everything, values spread over every exponent); UlpComparison::merge against one comparison over
// all outputs; its distance in every output format against the count of the values between.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <map>
#include <vector>

#include "../../tools/cli.h"
#include "blockscale/formats/convert.h"
#include "blockscale/harness/compare.h"

namespace {

using blockscale::cli::order_statistics;
using blockscale::cli::UlpComparison;

constexpr std::uint64_t kLeftOut = std::uint64_t{1} << 63;

// Every rank of `keys`, compared with the sorted kept values.
void expect_every_rank(const std::vector<std::uint64_t>& keys) {
  std::vector<double> sorted;
  for (const std::uint64_t k : keys)
    if (!(k >> 63)) sorted.push_back(std::bit_cast<double>(k));
  std::sort(sorted.begin(), sorted.end());
  std::vector<std::int64_t> ranks(sorted.size());
  for (std::size_t i = 0; i < ranks.size(); ++i) ranks[i] = static_cast<std::int64_t>(i);
  const std::vector<double> got = order_statistics(keys, ranks);
  ASSERT_EQ(got.size(), sorted.size());
  for (std::size_t i = 0; i < sorted.size(); ++i)
    ASSERT_EQ(std::bit_cast<std::uint64_t>(got[i]), std::bit_cast<std::uint64_t>(sorted[i])) << "rank " << i;
}

TEST(OrderStatistics, EveryRankOfSpreadValuesWithTiesAndLeftOutKeys) {
  std::mt19937_64 rng(3);
  std::vector<std::uint64_t> keys;
  for (int i = 0; i < 3000; ++i) {
    switch (rng() % 6) {
      case 0: keys.push_back(kLeftOut | rng()); break;                        // left out
      case 1: keys.push_back(std::bit_cast<std::uint64_t>(0.0)); break;       // zero, tied
      case 2: keys.push_back(std::bit_cast<std::uint64_t>(HUGE_VAL)); break;  // +Inf, tied
      case 3:
        keys.push_back(std::bit_cast<std::uint64_t>(std::ldexp(1.0, -static_cast<int>(rng() % 1000))));
        break;
      default: keys.push_back(rng() >> 1 & 0x7FEFFFFFFFFFFFFFu); break;  // any finite double >= 0
    }
  }
  expect_every_rank(keys);
}

TEST(OrderStatistics, OneBinHoldingEverything) {
  // Values that share their top 16 bits (the second histogram orders them), then values that
  // share their top 32 (nth_element alone orders them).
  std::mt19937_64 rng(4);
  for (const std::uint64_t low_bits : {std::uint64_t{0xFFFFFFFFFFFF}, std::uint64_t{0xFFFFFFFF}}) {
    std::vector<std::uint64_t> keys;
    for (int i = 0; i < 2000; ++i) keys.push_back(std::bit_cast<std::uint64_t>(1.0) | (rng() & low_bits));
    expect_every_rank(keys);
  }
}

TEST(OrderStatistics, LargeInputOnTheThreads) {
  std::mt19937_64 rng(5);
  std::normal_distribution<double> normal;
  std::vector<std::uint64_t> keys(1 << 20);
  for (std::uint64_t& k : keys) k = std::bit_cast<std::uint64_t>(std::fabs(normal(rng)) * 1e-7);
  std::vector<double> sorted(keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i) sorted[i] = std::bit_cast<double>(keys[i]);
  std::sort(sorted.begin(), sorted.end());
  const std::int64_t n = static_cast<std::int64_t>(keys.size());
  const std::vector<std::int64_t> ranks = {0, 1, n / 2, (n - 1) * 99 / 100, n - 2, n - 1};
  const std::vector<double> got = order_statistics(keys, ranks);
  for (std::size_t i = 0; i < ranks.size(); ++i)
    EXPECT_EQ(got[i], sorted[static_cast<std::size_t>(ranks[i])]) << ranks[i];
}

TEST(OrderStatistics, RankOutsideTheKeptValuesThrows) {
  const std::vector<std::uint64_t> keys = {std::bit_cast<std::uint64_t>(1.0), kLeftOut,
                                           std::bit_cast<std::uint64_t>(2.0)};
  const std::vector<std::int64_t> two = {2}, negative = {-1};
  EXPECT_THROW(order_statistics(keys, two), std::out_of_range);
  EXPECT_THROW(order_statistics(keys, negative), std::out_of_range);
}

TEST(UlpComparison, MergedPartsEqualOneComparison) {
  std::mt19937_64 rng(6);
  UlpComparison all, first, second;
  for (int i = 0; i < 20000; ++i) {
    const auto reference = static_cast<std::uint32_t>(rng());
    // Near the reference (0 to 100 ulps either way), or any bits (NaN on one side included).
    const std::uint32_t got =
        rng() % 4 ? reference + static_cast<std::uint32_t>(static_cast<int>(rng() % 201) - 100)
                  : static_cast<std::uint32_t>(rng());
    all.add(got, reference);
    (i % 3 ? first : second).add(got, reference);
  }
  UlpComparison merged;
  merged.merge(first);
  merged.merge(second);
  EXPECT_EQ(merged.outputs, all.outputs);
  EXPECT_EQ(merged.differ, all.differ);
  EXPECT_EQ(merged.nan_mismatch, all.nan_mismatch);
  EXPECT_EQ(merged.max_ulp, all.max_ulp);
  for (int b = 0; b < blockscale::cli::kUlpBucketCount; ++b)
    EXPECT_EQ(merged.histogram[b], all.histogram[b]) << b;
  EXPECT_GT(all.nan_mismatch, 0);
  EXPECT_EQ(merged.zero_sign, all.zero_sign);
  EXPECT_EQ(merged.nan_payload, all.nan_payload);
}

// `differ` counts bits: a zero of the other sign and another NaN pattern are 0 ulps away (the 0
// bucket) but differ, and are counted apart; equal bits do not differ.
TEST(UlpComparison, CountsBitDifferencesThatAreZeroUlpsApart) {
  UlpComparison u;
  u.add(0x80000000u, 0x00000000u);  // -0 against +0
  u.add(0x00000000u, 0x80000000u);
  u.add(0x7FFFFFFFu, 0x7FC00000u);  // the tensor cores' NaN against the exact numerics'
  u.add(0xFFC00000u, 0x7FC00000u);
  u.add(0x3F800000u, 0x3F800000u);  // equal
  u.add(0x3F800001u, 0x3F800000u);  // 1 ulp
  u.add(0x7FC00000u, 0x3F800000u);  // NaN on one side
  EXPECT_EQ(u.outputs, 7);
  EXPECT_EQ(u.differ, 6);
  EXPECT_EQ(u.zero_sign, 2);
  EXPECT_EQ(u.nan_payload, 2);
  EXPECT_EQ(u.nan_mismatch, 1);
  EXPECT_EQ(u.histogram[0], 5);
  EXPECT_EQ(u.histogram[1], 1);
  EXPECT_EQ(u.max_ulp, 1u);
}

// The distance in ulps of D's format (e4m3, f16, bf16 for the sparse kernels' D): every pair of
// e4m3 codes and 2^20 pairs of f16 and bf16 codes (near each other or anywhere) against the
// number of distinct values between them, counted on the sorted list of the format's values (+0 and
// -0 one value); NaN against a number is a mismatch, NaN against NaN 0 apart. f32 pairs against
// harness::ulp_distance.
TEST(UlpComparison, DistanceInEachOutputFormat) {
  using blockscale::Format;
  for (const Format f : {Format::float8_e4m3fn, Format::float16, Format::bfloat16}) {
    const int bits = f == Format::float8_e4m3fn ? 8 : 16;
    std::map<double, std::int64_t> rank;  // value -> position among the distinct values
    for (std::uint32_t c = 0; c < (1u << bits); ++c) {
      const double v = blockscale::to_double(f, c);
      if (!std::isnan(v)) rank.emplace(v, 0);
    }
    std::int64_t next = 0;
    for (auto& [value, r] : rank) r = next++;
    std::mt19937_64 rng(static_cast<std::uint64_t>(bits));
    const std::int64_t pairs = bits == 8 ? 65536 : 1 << 20;
    for (std::int64_t p = 0; p < pairs; ++p) {
      const auto x = static_cast<std::uint32_t>(bits == 8 ? p & 0xFF : rng() & 0xFFFF);
      const auto y = static_cast<std::uint32_t>(bits == 8 ? p >> 8 : (p & 1 ? rng() & 0xFFFF : (x + rng() % 64 - 32) & 0xFFFF));
      UlpComparison u;
      u.format = f;
      u.add(x, y);
      const double vx = blockscale::to_double(f, x), vy = blockscale::to_double(f, y);
      if (std::isnan(vx) != std::isnan(vy)) {
        ASSERT_EQ(u.nan_mismatch, 1) << x << " " << y;
        continue;
      }
      const std::int64_t want = std::isnan(vx) ? 0 : std::abs(rank.at(vx) - rank.at(vy));
      ASSERT_EQ(u.max_ulp, static_cast<std::uint64_t>(want)) << blockscale::to_string(f) << " " << x << " " << y;
      ASSERT_EQ(u.differ, x != y ? 1 : 0);
    }
  }
  std::mt19937_64 rng(5);
  for (int p = 0; p < 1 << 20; ++p) {
    const auto x = static_cast<std::uint32_t>(rng());
    const auto y = static_cast<std::uint32_t>(p & 1 ? rng() : x + rng() % 64 - 32);
    UlpComparison u;
    u.add(x, y);
    const std::optional<std::uint64_t> want = blockscale::harness::ulp_distance(blockscale::harness::OutputFormat::f32, x, y);
    if (!want) {
      ASSERT_EQ(u.nan_mismatch, 1);
    } else {
      ASSERT_EQ(u.max_ulp, *want) << x << " " << y;
    }
  }
}

}  // namespace
