// SPDX-License-Identifier: Apache-2.0
// tools/mt19937_64: the jump-ahead engine against the standard library's std::mt19937_64, walked
// draw by draw with discard(), at skips below, at and above the walking limit (2^16), across
// twist boundaries (multiples of 312), and far along the stream.
#include "../../tools/mt19937_64.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

namespace {

using blockscale::cli::Mt19937_64;

// The next `count` draws of both engines, from `skip` on.
void expect_same_draws(std::uint64_t seed, std::uint64_t skip, int count = 1000) {
  std::mt19937_64 oracle(seed);
  oracle.discard(skip);
  Mt19937_64 engine(seed, skip);
  for (int i = 0; i < count; ++i) {
    const std::uint64_t want = oracle(), got = engine();
    ASSERT_EQ(got, want) << "seed " << seed << ", skip " << skip << ", draw " << i;
  }
}

TEST(Mt19937_64, FromTheSeedAsTheStandardEngine) {
  for (std::uint64_t seed : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{5489}, ~std::uint64_t{0}})
    expect_same_draws(seed, 0, 5000);
}

TEST(Mt19937_64, ShortSkipsWalk) {
  for (std::uint64_t skip : {1u, 311u, 312u, 313u, 623u, 624u, 65535u}) expect_same_draws(1, skip);
}

TEST(Mt19937_64, LongSkipsJump) {
  // 65536 is the first jump; 19937 + 312 lies inside the polynomial's own span; the rest cross
  // twist boundaries at every offset inside a block.
  for (std::uint64_t skip :
       {65536u, 65537u, 65536u + 311u, 65536u + 312u, 100000u, 312u * 1000u, 312u * 1000u + 1u})
    expect_same_draws(1, skip);
  std::mt19937_64 pick(7);
  for (int i = 0; i < 12; ++i) expect_same_draws(pick() % 1000 + 1, (1u << 16) + pick() % (1u << 24), 400);
}

TEST(Mt19937_64, FarAlongTheStream) {
  // `blockscale gemm`'s B starts 12 M K draws in: 12 x 2^24 is a 4096 x 4096 A of Gaussian data.
  // The oracle walks there (about a second).
  expect_same_draws(1, std::uint64_t{12} << 24, 700);
  expect_same_draws(42, (std::uint64_t{12} << 22) + 12345, 700);
}

}  // namespace
