// SPDX-License-Identifier: Apache-2.0
// The SM90 mixed-input weight interleaves against oracles that restate the CUDA kernels they come
// from (moe_gemm_mixed_utils.cu of FlashInfer 5823159c3 / fb28d72 and TRT-LLM 258dadc) thread by
// thread: a loop over the kernels' (block_id, partition_id, lane_id) with each lane's index
// arithmetic and bit masks, not the library's table of gathers and permutations.
#include "blockscale/layout/weight_interleave.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "expect_throw.h"

namespace blockscale {
namespace {

using blockscale::test::invalid_argument_message;

using i64 = std::int64_t;
using Bytes = std::vector<std::uint8_t>;
using V = WeightInterleave;

// Writes through a guard that records how often each output byte was written: every kernel must
// write each byte of the expert exactly once for it to be a layout.
struct Out {
  Bytes& bytes;
  std::vector<int>& writes;
  void set(i64 at, std::uint8_t v) {
    bytes.at(static_cast<std::size_t>(at)) = v;
    ++writes.at(static_cast<std::size_t>(at));
  }
};

// The 32-bit rewrite of interleave_fp4_weights_for_sm90_mixed_gemm_kernel: (mask, left shift)
// pairs, a negative shift moving right.
std::uint32_t flashinfer_fp4_rewrite(std::uint32_t raw) {
  const std::pair<std::uint32_t, int> steps[] = {
      {0x00000080u, 24},  {0x00000070u, 18},  {0x00000008u, 12},  {0x00000007u, 6},   {0x00008000u, 13},
      {0x00007000u, 7},   {0x00000800u, 1},   {0x00000700u, -5},  {0x00800000u, 2},   {0x00700000u, -4},
      {0x00080000u, -10}, {0x00070000u, -16}, {0x80000000u, -1},  {0x10000000u, 1},   {0x60000000u, -3},
      {0x08000000u, -13}, {0x01000000u, -11}, {0x06000000u, -15}};
  std::uint32_t out = 0;
  for (auto [mask, shift] : steps) out |= shift >= 0 ? (raw & mask) << shift : (raw & mask) >> -shift;
  return out;
}

// preprocess_fp4x8_signs_for_fp8: magnitudes stay, the eight sign bits move.
std::uint32_t fp8_sign_rewrite(std::uint32_t x) {
  const std::uint32_t em = x & 0x77777777u;
  const std::uint32_t signs = ((x & 0x00000008u) << 4) | ((x & 0x00000080u) << 8) | ((x & 0x00000800u) << 12) |
                              ((x & 0x00008000u) << 16) | ((x & 0x00080000u) >> 16) | ((x & 0x00800000u) >> 12) |
                              ((x & 0x08000000u) >> 8) | ((x & 0x80000000u) >> 4);
  return em | signs;
}

// One expert through the kernel of variant v. rows = n, cols = k (codes); the kernels index bytes
// as row * cols / 2 + column and 16-bit units as row * cols / 4 + column.
Bytes kernel_oracle(V v, i64 rows, i64 cols, const Bytes& in) {
  Bytes out(in.size(), 0);
  std::vector<int> writes(in.size(), 0);
  Out o{out, writes};
  auto byte_at = [&](i64 at) { return in.at(static_cast<std::size_t>(at)); };
  auto u16_at = [&](i64 unit) {
    return static_cast<std::uint16_t>(byte_at(2 * unit) | (byte_at(2 * unit + 1) << 8));
  };
  auto put_u16 = [&](i64 unit, std::uint16_t x) {
    o.set(2 * unit, static_cast<std::uint8_t>(x));
    o.set(2 * unit + 1, static_cast<std::uint8_t>(x >> 8));
  };
  const int lanes = v == V::trtllm_sm90_fp4 ? 32 : 16;  // blockDim.x of each launcher
  for (i64 block_id = 0; block_id < rows / 2; ++block_id)
    for (i64 partition_id = 0; partition_id < cols / 64; ++partition_id)
      for (i64 lane_id = 0; lane_id < lanes; ++lane_id) {
        const i64 row_id = block_id / 8 * 16 + block_id % 8;
        switch (v) {
          case V::flashinfer_sm90_fp4: {
            const i64 mma_id = lane_id / 4;
            const i64 dst_row_id = row_id + (mma_id % 2) * 8;
            const i64 interleaved_lane_id = lane_id / 8 * 16 + (lane_id % 4) * 4;
            const i64 col_id = partition_id * 32 + mma_id * 8 + lane_id % 4;
            const i64 dst_col_id = partition_id * 32 + interleaved_lane_id;
            const i64 first = row_id * cols / 2 + col_id, second = (row_id + 8) * cols / 2 + col_id;
            const std::uint32_t raw = byte_at(first) | (byte_at(second) << 8) | (byte_at(first + 4) << 16) |
                                      (std::uint32_t{byte_at(second + 4)} << 24);
            const std::uint32_t x = flashinfer_fp4_rewrite(raw);
            const i64 dst = dst_row_id * cols / 2 + dst_col_id;
            for (int i = 0; i < 4; ++i) o.set(dst + i, static_cast<std::uint8_t>(x >> (8 * i)));
            break;
          }
          case V::flashinfer_sm90_fp4_fp8:
          case V::sm90_int4: {
            const i64 dst_row_id = row_id + (lane_id % 8) / 4 * 8;
            const i64 mma_id = lane_id / 8;
            const i64 interleaved_lane_id = mma_id * 8 + lane_id % 4 * 2;
            const i64 col_id = partition_id * 16 + lane_id;
            const i64 dst_col_id = partition_id * 16 + interleaved_lane_id;
            std::uint16_t a = u16_at(row_id * cols / 4 + col_id), b = u16_at((row_id + 8) * cols / 4 + col_id);
            if (v == V::flashinfer_sm90_fp4_fp8) {
              const std::uint32_t x = fp8_sign_rewrite(std::uint32_t{a} | (std::uint32_t{b} << 16));
              a = static_cast<std::uint16_t>(x);
              b = static_cast<std::uint16_t>(x >> 16);
            }
            const i64 dst = dst_row_id * cols / 4 + dst_col_id;
            put_u16(dst, a);
            put_u16(dst + 1, b);
            break;
          }
          case V::trtllm_sm90_fp4: {
            const i64 mma_id = lane_id / 8;
            const i64 dst_row_id = row_id + (mma_id % 2) * 8;
            const i64 interleaved_lane_id = lane_id / 16 * 16 + (lane_id % 4) * 4 + (lane_id % 8) / 4 * 2;
            const i64 col_id = partition_id * 32 + lane_id;
            const i64 dst_col_id = partition_id * 32 + interleaved_lane_id;
            const std::uint8_t a = byte_at(row_id * cols / 2 + col_id), b = byte_at((row_id + 8) * cols / 2 + col_id);
            const auto a2 = static_cast<std::uint8_t>((a & 0x0F) | ((b & 0x0F) << 4));
            const auto b2 = static_cast<std::uint8_t>((b & 0xF0) | ((a & 0xF0) >> 4));
            const i64 dst = dst_row_id * cols / 2 + dst_col_id;
            o.set(dst, a2);
            o.set(dst + 1, b2);
            break;
          }
        }
      }
  for (std::size_t i = 0; i < writes.size(); ++i)
    if (writes[i] != 1) throw std::logic_error("kernel oracle wrote byte " + std::to_string(i) + " " + std::to_string(writes[i]) + " times");
  return out;
}

const std::vector<std::pair<i64, i64>> kShapes = {{16, 64}, {32, 128}, {48, 192}, {128, 256}, {16, 512}, {64, 64}};

Bytes random_bytes(std::size_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  Bytes b(n);
  for (auto& x : b) x = static_cast<std::uint8_t>(rng());
  return b;
}

class WeightInterleaveOracle : public ::testing::TestWithParam<V> {};

// Whole experts (two per call, each its own random bytes) against the kernels, and back.
TEST_P(WeightInterleaveOracle, WholeTensorsMatchTheKernel) {
  const V v = GetParam();
  for (auto [rows, cols] : kShapes) {
    SCOPED_TRACE(to_string(v) + " rows=" + std::to_string(rows) + " cols=" + std::to_string(cols));
    const i64 per = weight_bytes(v, rows, cols);
    ASSERT_EQ(per, rows * cols / 2);
    const Bytes in = random_bytes(static_cast<std::size_t>(2 * per), static_cast<std::uint32_t>(rows * 7919 + cols));
    Bytes out(in.size()), back(in.size());
    interleave_weights(v, 2, rows, cols, in, out);
    for (i64 e = 0; e < 2; ++e) {
      const Bytes expert(in.begin() + e * per, in.begin() + (e + 1) * per);
      const Bytes want = kernel_oracle(v, rows, cols, expert);
      ASSERT_TRUE(std::equal(want.begin(), want.end(), out.begin() + e * per)) << "expert " << e;
    }
    deinterleave_weights(v, 2, rows, cols, out, back);
    EXPECT_EQ(back, in);
  }
}

// Every bit of every code of two shapes, alone in its expert: the kernel moves it to exactly one
// bit, which weight_code_bits names and weight_bit_source traces back.
TEST_P(WeightInterleaveOracle, EveryCodeBitGoesWhereCodeBitsSays) {
  const V v = GetParam();
  for (auto [rows, cols] : {std::pair<i64, i64>{16, 64}, {32, 128}}) {
    const i64 per = rows * cols / 2;
    i64 bad = 0;
    for (i64 r = 0; r < rows; ++r)
      for (i64 k = 0; k < cols; ++k) {
        const auto bits = weight_code_bits(v, rows, cols, r, k);
        for (int j = 0; j < 4; ++j) {
          Bytes one(static_cast<std::size_t>(per), 0);
          one[static_cast<std::size_t>(r * cols / 2 + k / 2)] = static_cast<std::uint8_t>(1u << (4 * (k % 2) + j));
          const Bytes moved = kernel_oracle(v, rows, cols, one);
          const auto nz = std::find_if(moved.begin(), moved.end(), [](std::uint8_t x) { return x != 0; });
          ASSERT_NE(nz, moved.end());
          const i64 at = 8 * (nz - moved.begin()) + __builtin_ctz(*nz);
          const auto back = weight_bit_source(v, rows, cols, at);
          bad += at != bits[static_cast<std::size_t>(j)] || back != std::array<i64, 3>{r, k, j};
        }
      }
    EXPECT_EQ(bad, 0) << to_string(v) << " " << rows << "x" << cols;
  }
}

INSTANTIATE_TEST_SUITE_P(AllVariants, WeightInterleaveOracle,
                         ::testing::Values(V::flashinfer_sm90_fp4, V::flashinfer_sm90_fp4_fp8, V::sm90_int4,
                                           V::trtllm_sm90_fp4),
                         [](const auto& p) { return to_string(p.param); });

// Worked by hand from the kernels. Tile row 0, word 0 gathers bytes (0, 0), (8, 0), (0, 4), (8, 4)
// for the fp4 kernels, and bytes (0, 0), (0, 1), (8, 0), (8, 1) for the 16-bit ones.
TEST(WeightInterleaveGolden, HandCheckedBits) {
  using A = std::array<i64, 4>;
  // FlashInfer fp4: code (0, 0) = word bits 0..3: magnitude to 6..8, sign to 15.
  EXPECT_EQ(weight_code_bits(V::flashinfer_sm90_fp4, 16, 64, 0, 0), (A{6, 7, 8, 15}));
  EXPECT_EQ(weight_code_bits(V::flashinfer_sm90_fp4, 16, 64, 0, 1), (A{22, 23, 24, 31}));
  EXPECT_EQ(weight_code_bits(V::flashinfer_sm90_fp4, 16, 64, 8, 0), (A{3, 4, 5, 12}));
  EXPECT_EQ(weight_code_bits(V::flashinfer_sm90_fp4, 16, 64, 0, 8), (A{0, 1, 2, 9}));
  // Byte (0, 8) is lane 4's first byte (mma 1): word 0 of row 8, so 8 rows of 32 bytes further.
  EXPECT_EQ(weight_code_bits(V::flashinfer_sm90_fp4, 16, 64, 0, 16), (A{8 * 256 + 6, 8 * 256 + 7, 8 * 256 + 8, 8 * 256 + 15}));
  // TRT-LLM fp4: code (8, 0) is b.lo, written as the high nibble of a'.
  EXPECT_EQ(weight_code_bits(V::trtllm_sm90_fp4, 16, 64, 8, 0), (A{4, 5, 6, 7}));
  EXPECT_EQ(weight_code_bits(V::trtllm_sm90_fp4, 16, 64, 0, 1), (A{8, 9, 10, 11}));
  // int4: unit (0, 1) (codes 4..7 of row 0) is lane 1, written to unit 2 of row 0 = byte 4.
  EXPECT_EQ(weight_code_bits(V::sm90_int4, 16, 64, 0, 4), (A{32, 33, 34, 35}));
  // Unit (8, 0) is lane 0's b, written after a: byte 2.
  EXPECT_EQ(weight_code_bits(V::sm90_int4, 16, 64, 8, 0), (A{16, 17, 18, 19}));
  // fp4_fp8: the same units, and code (0, 0)'s sign moves into nibble 1's sign bit.
  EXPECT_EQ(weight_code_bits(V::flashinfer_sm90_fp4_fp8, 16, 64, 0, 0), (A{0, 1, 2, 7}));
  EXPECT_EQ(weight_code_bits(V::flashinfer_sm90_fp4_fp8, 16, 64, 8, 0), (A{16, 17, 18, 3}));
}

// Four different layouts: each pair disagrees somewhere on random data.
TEST(WeightInterleaveGolden, VariantsDiffer) {
  const Bytes in = random_bytes(16 * 32, 5);
  std::vector<Bytes> outs;
  for (const WeightInterleaveInfo& vi : kWeightInterleaveTable) {
    Bytes out(in.size());
    interleave_weights(vi.kind, 1, 16, 64, in, out);
    EXPECT_NE(out, in) << vi.name;
    for (const Bytes& o : outs) EXPECT_NE(o, out) << vi.name;
    outs.push_back(out);
  }
}

TEST(WeightInterleaveErrors, ShapesSizesAndIndicesNameTheRule) {
  const V v = V::flashinfer_sm90_fp4;
  EXPECT_NE(invalid_argument_message([&] { check_weight_shape(v, 24, 64); }).find("rows must be a multiple of 16"), std::string::npos);
  EXPECT_NE(invalid_argument_message([&] { check_weight_shape(v, 16, 96); }).find("cols must be a multiple of 64"), std::string::npos);
  EXPECT_NE(invalid_argument_message([&] { check_weight_shape(v, -16, 64); }).find("must not be negative"), std::string::npos);
  EXPECT_NE(invalid_argument_message([&] { check_weight_shape(v, i64{1} << 44, 64); }).find("2^40"), std::string::npos);
  EXPECT_NE(invalid_argument_message([&] { check_weight_shape(v, i64{1} << 40, i64{1} << 40); }).find("2^60"), std::string::npos);
  // Bit indexes are int64: a code far into the largest storage taken (2^60 bytes) stays in range.
  const i64 big_rows = i64{1} << 37, big_cols = i64{1} << 24;
  const auto far = weight_code_bits(v, big_rows, big_cols, big_rows - 1, big_cols - 1);
  EXPECT_GT(far[3], 0);
  EXPECT_LT(far[3] / 8, i64{1} << 60);  // a byte of the storage, not a wrapped index
  EXPECT_NO_THROW(check_weight_shape(v, 0, 0));
  Bytes in(512), out(512), short_out(511);
  EXPECT_NE(invalid_argument_message([&] { interleave_weights(v, 1, 16, 64, in, short_out); }).find("the output has 511 bytes, expected 512"),
            std::string::npos);
  EXPECT_NE(invalid_argument_message([&] { deinterleave_weights(v, 2, 16, 64, in, out); }).find("expected 1024"), std::string::npos);
  EXPECT_NE(invalid_argument_message([&] { interleave_weights(v, -1, 16, 64, in, out); }).find("batch must not be negative"),
            std::string::npos);
  EXPECT_NE(invalid_argument_message([&] { (void)weight_code_bits(v, 16, 64, 16, 0); }).find("outside the matrix"), std::string::npos);
  EXPECT_NE(invalid_argument_message([&] { (void)weight_code_bits(v, 16, 64, 0, -1); }).find("outside the matrix"), std::string::npos);
  EXPECT_NE(invalid_argument_message([&] { (void)weight_bit_source(v, 16, 64, 8 * 512); }).find("outside the 512 bytes"), std::string::npos);
  EXPECT_NE(invalid_argument_message([&] { (void)weight_bit_source(v, 16, 64, -1); }).find("outside"), std::string::npos);
  EXPECT_THROW(check_weight_shape(static_cast<V>(kWeightInterleaveCount), 16, 64), std::invalid_argument);
  Bytes none;
  EXPECT_NO_THROW(interleave_weights(v, 3, 0, 64, none, std::span<std::uint8_t>(none)));
  // 2^62 empty experts: nothing to move, at once (one empty call each would never end).
  EXPECT_NO_THROW(interleave_weights(v, i64{1} << 62, 0, 64, none, std::span<std::uint8_t>(none)));
  EXPECT_NO_THROW(deinterleave_weights(v, i64{1} << 62, 16, 0, none, std::span<std::uint8_t>(none)));
}

TEST(WeightInterleaveText, NamesRoundTrip) {
  for (int i = 0; i < kWeightInterleaveCount; ++i) {
    const auto v = static_cast<V>(i);
    EXPECT_EQ(info(v).kind, v);
    EXPECT_EQ(parse_weight_interleave(to_string(v)), v);
  }
  EXPECT_FALSE(parse_weight_interleave("fp4").has_value());
  EXPECT_NE(invalid_argument_message([] { (void)weight_interleave_from_string("fp4"); }).find("known: flashinfer_sm90_fp4"),
            std::string::npos);
}

}  // namespace
}  // namespace blockscale
