// SPDX-License-Identifier: Apache-2.0
// Row orders of the trtllm-gen MoE weight preparation (ScaleLayout::row_order, docs/layouts.md
// "Row orders"), against an oracle that runs the TRT-LLM / FlashInfer index functions step by step:
// get_shuffle_block_size, get_shuffle_matrix_a_row_indices with the literal srcToDstBlk16RowMap /
// srcToDstBlk32RowMap tables, get_reorder_rows_for_gated_act_gemm_row_indices (top / bottom halves
// written to the even / odd rows), the chain permute0[permute1], the row gather x[indices], and for
// the scales block_scale_interleave, torchao's to_blocked (pad, reshape, permute) of the gathered
// matrix, and for BlockMajorK weights FlashInfer's convert_to_block_layout of the gathered matrix. The library computes the orders in closed form (stored_row / source_row); nothing here
// shares that code.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "blockscale/layout/scale_layout.h"
#include "index_tensor.h"
#include "expect_throw.h"

namespace {

using blockscale::test::expect_throw_with;

using namespace blockscale;
using blockscale::test::IndexTensor;
using ::testing::HasSubstr;
using i64 = std::int64_t;

// ---- The oracle: the Python index functions of TRT-LLM's fp4_utils.py and FlashInfer's fused_moe,
// ---- loop for loop.

// clang-format off
constexpr int kSrcToDstBlk16RowMap[16] = {
    0,  8,
    1,  9,
    2, 10,
    3, 11,
    4, 12,
    5, 13,
    6, 14,
    7, 15};
constexpr int kSrcToDstBlk32RowMap[32] = {
    0,  8, 16, 24,
    1,  9, 17, 25,
    2, 10, 18, 26,
    3, 11, 19, 27,
    4, 12, 20, 28,
    5, 13, 21, 29,
    6, 14, 22, 30,
    7, 15, 23, 31};
// clang-format on

int get_shuffle_block_size(i64 epilogue_tile_m) { return epilogue_tile_m % 128 == 0 ? 32 : 16; }

// row_indices[new_row] = old_row.
std::vector<i64> get_shuffle_matrix_a_row_indices(i64 M, int shuffle_block_size) {
  const int* row_map = shuffle_block_size == 16 ? kSrcToDstBlk16RowMap : kSrcToDstBlk32RowMap;
  std::vector<i64> row_indices(static_cast<std::size_t>(M), -1);
  for (i64 old_row = 0; old_row < M; ++old_row) {
    const i64 block_idx = old_row / shuffle_block_size;
    const i64 row_in_block = old_row % shuffle_block_size;
    const i64 mapped_row_in_block = row_map[row_in_block];
    const i64 new_row = block_idx * shuffle_block_size + mapped_row_in_block;
    row_indices[static_cast<std::size_t>(new_row)] = old_row;
  }
  return row_indices;
}

std::vector<i64> get_reorder_rows_for_gated_act_gemm_row_indices(i64 M) {
  std::vector<i64> top, bot, permuted(static_cast<std::size_t>(M));
  for (i64 i = 0; i < M; ++i) (i < (M + 1) / 2 ? top : bot).push_back(i);
  for (std::size_t i = 0; i < top.size(); ++i) permuted[2 * i] = top[i];      // permuted[0::2] = top
  for (std::size_t i = 0; i < bot.size(); ++i) permuted[2 * i + 1] = bot[i];  // permuted[1::2] = bot
  return permuted;
}

std::vector<i64> arange(i64 M) {
  std::vector<i64> v(static_cast<std::size_t>(M));
  for (i64 i = 0; i < M; ++i) v[static_cast<std::size_t>(i)] = i;
  return v;
}

// _maybe_get_cached_w3_w1_permute_indices: permute0 (gated or arange) indexed by permute1 (the
// shuffle, or arange where the order has none).
std::vector<i64> oracle_indices(bool gated, int shuffle_block, i64 M) {
  const std::vector<i64> permute0 = gated ? get_reorder_rows_for_gated_act_gemm_row_indices(M) : arange(M);
  const std::vector<i64> permute1 = shuffle_block ? get_shuffle_matrix_a_row_indices(M, shuffle_block) : arange(M);
  std::vector<i64> out(static_cast<std::size_t>(M));
  for (i64 j = 0; j < M; ++j) out[static_cast<std::size_t>(j)] = permute0[static_cast<std::size_t>(permute1[static_cast<std::size_t>(j)])];
  return out;
}

// The storage order of a row-ordered layout: entry `off` is the logical index r*C + c stored there.
std::vector<i64> oracle_storage(const ScaleLayout& l, i64 R, i64 C) {
  const RowOrderInfo& o = info(l.row_order);
  const std::vector<i64> idx = oracle_indices(o.gated_act, o.shuffle_block, R);
  // x[indices]: the gathered matrix of logical indices.
  IndexTensor t = test::logical_matrix(R, C);
  IndexTensor g = t;
  for (i64 j = 0; j < R; ++j)
    for (i64 c = 0; c < C; ++c)
      g.data[static_cast<std::size_t>(j * C + c)] = t.data[static_cast<std::size_t>(idx[static_cast<std::size_t>(j)] * C + c)];
  if (l.kind == ScaleLayoutKind::linear) return g.data;
  if (l.kind == ScaleLayoutKind::block_major_k) {
    // convert_to_block_layout: view (M, K // blockK, blockK), permute (1, 0, 2).
    return test::permute(test::reshape(g, {R, C / l.block_k, l.block_k}), {1, 0, 2}).data;
  }
  // to_blocked: pad to (128, 4), view (n_row_blocks, 128, n_col_blocks, 4), permute(0, 2, 1, 3),
  // reshape(-1, 4, 32, 4), transpose(1, 2), reshape(-1, 32, 16).
  IndexTensor p = test::pad_to_multiple(g, 128, 4);
  const i64 rb = p.shape[0] / 128, cb = p.shape[1] / 4;
  p = test::permute(test::reshape(p, {rb, 128, cb, 4}), {0, 2, 1, 3});
  p = test::permute(test::reshape(p, {rb * cb, 4, 32, 4}), {0, 2, 1, 3});
  return p.data;
}

struct Case {
  ScaleLayout layout;
  i64 R, C;
};

std::vector<ScaleLayout> row_ordered_layouts() {
  std::vector<ScaleLayout> out;
  for (ScaleLayoutKind k : {ScaleLayoutKind::linear, ScaleLayoutKind::tiled_128x4})
    for (const RowOrderInfo& o : kRowOrderTable) out.push_back(ScaleLayout::row_ordered(k, o.order));
  for (i64 block_k : {4, 128})
    for (const RowOrderInfo& o : kRowOrderTable) out.push_back(ScaleLayout::block_major_k(block_k, o.order));
  return out;
}

// Shapes each layout takes: linear down to one shuffle block, tiled_128x4 in whole atoms,
// block_major_k in whole blocks of columns.
std::vector<Case> cases() {
  std::vector<Case> out;
  for (const ScaleLayout& l : row_ordered_layouts()) {
    std::vector<std::array<i64, 2>> shapes;
    if (l.kind == ScaleLayoutKind::linear) shapes = {{32, 1}, {64, 3}, {96, 8}, {256, 5}, {0, 4}};
    if (l.kind == ScaleLayoutKind::tiled_128x4) shapes = {{128, 4}, {256, 8}, {384, 12}, {128, 20}, {0, 4}};
    if (l.kind == ScaleLayoutKind::block_major_k)
      for (i64 m : {1, 3, 0}) shapes.push_back({96, l.block_k * m});
    for (const auto& [R, C] : shapes) out.push_back({l, R, C});
  }
  // Shapes only the unshuffled orders take: any R (natural), even R (gated_act).
  out.push_back({ScaleLayout::row_ordered(ScaleLayoutKind::linear, RowOrder::gated_act), 6, 3});
  out.push_back({ScaleLayout::row_ordered(ScaleLayoutKind::linear, RowOrder::gated_act), 2, 1});
  out.push_back({ScaleLayout::of(ScaleLayoutKind::tiled_128x4), 130, 5});
  return out;
}

std::string name(const Case& k) {
  return to_string(k.layout) + " R=" + std::to_string(k.R) + " C=" + std::to_string(k.C);
}

TEST(RowOrder, PermuteIndicesAreTheTrtllmIndices) {
  for (const RowOrderInfo& o : kRowOrderTable) {
    for (i64 R : {0, 32, 64, 96, 128, 256, 1024, 4096}) {
      EXPECT_EQ(row_order_indices(o.order, R), oracle_indices(o.gated_act, o.shuffle_block, R)) << o.name << " R=" << R;
    }
  }
  for (i64 R : {2, 6, 10, 18, 50}) {
    EXPECT_EQ(row_order_indices(RowOrder::gated_act, R), oracle_indices(true, 0, R)) << R;
    EXPECT_EQ(row_order_indices(RowOrder::natural, R + 1), arange(R + 1)) << R;
  }
  // get_shuffle_block_size, with and without the gated interleave.
  for (i64 etm : {1, 8, 16, 32, 64, 96, 128, 192, 256, 384}) {
    const int block = get_shuffle_block_size(etm);
    for (bool gated : {false, true}) {
      const RowOrderInfo& o = info(trtllm_row_order(etm, gated));
      EXPECT_EQ(o.shuffle_block, block) << etm;
      EXPECT_EQ(o.gated_act, gated) << etm;
    }
  }
}

TEST(RowOrder, HandWorkedIndicesAndOffsets) {
  // Blocks of 32: stored row 4a + b holds old row with (q mod 4)*8 + q/4 = 4a + b, i.e. old row
  // 4*(stored mod 8) + stored/8 within the block.
  const std::vector<i64> s32 = row_order_indices(RowOrder::trtllm_shuffle32, 64);
  EXPECT_EQ((std::vector<i64>(s32.begin(), s32.begin() + 10)), (std::vector<i64>{0, 4, 8, 12, 16, 20, 24, 28, 1, 5}));
  EXPECT_EQ(s32[31], 31);
  EXPECT_EQ(s32[32], 32);
  EXPECT_EQ(s32[33], 36);
  const std::vector<i64> s16 = row_order_indices(RowOrder::trtllm_shuffle16, 16);
  EXPECT_EQ(s16, (std::vector<i64>{0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15}));
  EXPECT_EQ(row_order_indices(RowOrder::gated_act, 8), (std::vector<i64>{0, 4, 1, 5, 2, 6, 3, 7}));
  // Gated, then shuffled in 16s: stored row 1 holds gated row 2 = old row 1; stored row 8 holds
  // gated row 1 = old row R/2 = 8.
  const std::vector<i64> gs16 = row_order_indices(RowOrder::gated_act_trtllm_shuffle16, 16);
  EXPECT_EQ(gs16, (std::vector<i64>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}));
  const std::vector<i64> gs32 = row_order_indices(RowOrder::gated_act_trtllm_shuffle32, 32);
  EXPECT_EQ((std::vector<i64>(gs32.begin(), gs32.begin() + 9)), (std::vector<i64>{0, 2, 4, 6, 8, 10, 12, 14, 16}));
  EXPECT_EQ(gs32[8], 16);   // gated row 1 = old row 16 (first row of the second half)
  EXPECT_EQ(gs32[16], 1);   // gated row 2
  // Offsets in the 128x4 layout: L1 puts stored row j at 16*(j mod 32) + 4*(floor(j/32) mod 4).
  const ScaleLayout t32 = ScaleLayout::row_ordered(ScaleLayoutKind::tiled_128x4, RowOrder::trtllm_shuffle32);
  EXPECT_EQ(offset(t32, 128, 4, 1, 0), 16 * 8);     // old row 1 -> stored row 8
  EXPECT_EQ(offset(t32, 128, 4, 4, 3), 16 * 1 + 3);  // old row 4 -> stored row 1
  EXPECT_EQ(offset(t32, 128, 4, 33, 0), 16 * 8 + 4);  // old row 33 -> stored row 40
  EXPECT_EQ(offset(t32, 256, 8, 129, 5), 1024 + 512 + 16 * 8 + 1);
  const ScaleLayout g32 = ScaleLayout::row_ordered(ScaleLayoutKind::tiled_128x4, RowOrder::gated_act_trtllm_shuffle32);
  EXPECT_EQ(offset(g32, 128, 4, 64, 0), 16 * 8);  // w1's first row: gated row 1 -> stored row 8
  EXPECT_EQ(logical_index(g32, 128, 4, 16 * 8 + 2), (std::array<i64, 2>{64, 2}));
  const ScaleLayout lin = ScaleLayout::row_ordered(ScaleLayoutKind::linear, RowOrder::gated_act);
  EXPECT_EQ(offset(lin, 6, 3, 3, 1), 1 * 3 + 1);  // old row 3 = R/2 -> stored row 1
  EXPECT_EQ(offset(lin, 6, 3, 1, 0), 2 * 3);
}

TEST(RowOrder, ForwardInverseAndWholeMatricesMatchTheOracle) {
  for (const Case& k : cases()) {
    SCOPED_TRACE(name(k));
    const std::vector<i64> st = oracle_storage(k.layout, k.R, k.C);
    ASSERT_EQ(storage_size(k.layout, k.R, k.C), static_cast<i64>(st.size()));
    std::vector<i64> where(static_cast<std::size_t>(k.R * k.C), -1);
    for (std::size_t off = 0; off < st.size(); ++off)
      if (st[off] >= 0) where[static_cast<std::size_t>(st[off])] = static_cast<i64>(off);
    const ScaleOffsets t(k.layout, k.R, k.C);
    for (i64 r = 0; r < k.R; ++r) {
      for (i64 c = 0; c < k.C; ++c) {
        const i64 want = where[static_cast<std::size_t>(r * k.C + c)];
        ASSERT_EQ(offset(k.layout, k.R, k.C, r, c), want) << r << "," << c;
        ASSERT_EQ(t(r, c), want) << r << "," << c;
      }
    }
    for (std::size_t off = 0; off < st.size(); ++off) {
      const auto rc = logical_index(k.layout, k.R, k.C, static_cast<i64>(off));
      if (st[off] < 0) {
        ASSERT_FALSE(rc.has_value()) << off;
      } else {
        ASSERT_TRUE(rc.has_value()) << off;
        ASSERT_EQ((*rc)[0] * k.C + (*rc)[1], st[off]) << off;
      }
    }
    // Whole matrices, a batch of 2, bytes and floats: the gathered values land where the oracle
    // says, and come back.
    const i64 n = k.R * k.C, size = static_cast<i64>(st.size());
    std::vector<std::uint8_t> bytes(static_cast<std::size_t>(2 * n));
    std::vector<float> floats(bytes.size());
    for (std::size_t i = 0; i < bytes.size(); ++i) {
      bytes[i] = static_cast<std::uint8_t>((i * 37 + 11) % 251);
      floats[i] = static_cast<float>(i) + 0.5f;
    }
    std::vector<std::uint8_t> stored(static_cast<std::size_t>(2 * size));
    std::vector<float> stored_f(stored.size());
    to_layout(k.layout, 2, k.R, k.C, bytes, stored, 0x7E);
    to_layout(k.layout, 2, k.R, k.C, floats, stored_f, -1.0f);
    for (i64 b = 0; b < 2; ++b) {
      for (i64 off = 0; off < size; ++off) {
        const i64 src = st[static_cast<std::size_t>(off)];
        const auto at = static_cast<std::size_t>(b * size + off);
        ASSERT_EQ(stored[at], src < 0 ? 0x7E : bytes[static_cast<std::size_t>(b * n + src)]) << b << " " << off;
        ASSERT_EQ(stored_f[at], src < 0 ? -1.0f : floats[static_cast<std::size_t>(b * n + src)]) << b << " " << off;
      }
    }
    std::vector<std::uint8_t> back(bytes.size());
    std::vector<float> back_f(floats.size());
    from_layout(k.layout, 2, k.R, k.C, stored, back);
    from_layout(k.layout, 2, k.R, k.C, stored_f, back_f);
    EXPECT_EQ(back, bytes);
    EXPECT_EQ(back_f, floats);
    EXPECT_FALSE(find_padding_mismatch(k.layout, 2, k.R, k.C, stored, 0x7E).has_value());
  }
}

// The element rows go through the same order (shuffle_matrix_a on the packed rows): a linear
// layout with C = bytes per row moves whole packed rows, the same as the oracle's row gather.
TEST(RowOrder, PackedElementRowsFollowTheScaleRows) {
  const i64 R = 256, row_bytes = 64;  // 128 fp4 codes per row
  std::vector<std::uint8_t> packed(static_cast<std::size_t>(R * row_bytes));
  for (std::size_t i = 0; i < packed.size(); ++i) packed[i] = static_cast<std::uint8_t>(i * 131 + i / 64);
  for (i64 etm : {64, 128}) {
    const RowOrder order = trtllm_row_order(etm, true);
    const std::vector<i64> idx = oracle_indices(true, get_shuffle_block_size(etm), R);
    std::vector<std::uint8_t> shuffled(packed.size());
    to_layout(ScaleLayout::row_ordered(ScaleLayoutKind::linear, order), 1, R, row_bytes, packed, shuffled);
    for (i64 j = 0; j < R; ++j)
      for (i64 b = 0; b < row_bytes; ++b)
        ASSERT_EQ(shuffled[static_cast<std::size_t>(j * row_bytes + b)],
                  packed[static_cast<std::size_t>(idx[static_cast<std::size_t>(j)] * row_bytes + b)])
            << etm << " row " << j;
  }
}

// FlashInfer's BlockMajorK weight preparation (trtllm_fp8_block_scale_moe with
// WeightLayout.BlockMajorK, the bf16 routed MoE): shuffle_matrix_a(w.view(uint8), epilogue_tile_m)
// then convert_to_block_layout(w, 128), so the stored tensor is [K_bytes/128, M, 128] of the
// shuffled rows. One layout, block_major_k with the row order, does both.
TEST(RowOrder, BlockMajorKWeightsAreTheShuffledRowsInBlocksOf128Bytes) {
  const i64 M = 256, row_bytes = 512;  // 512 fp8 codes (or 256 bf16) per row
  std::vector<std::uint8_t> w(static_cast<std::size_t>(M * row_bytes));
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = static_cast<std::uint8_t>(i * 151 + i / 512);
  for (i64 etm : {64, 128}) {
    for (bool gated : {false, true}) {
      const std::vector<i64> idx = oracle_indices(gated, get_shuffle_block_size(etm), M);
      const ScaleLayout l = ScaleLayout::block_major_k(128, trtllm_row_order(etm, gated));
      EXPECT_EQ(storage_shape(l, M, row_bytes), (std::vector<i64>{4, M, 128}));
      std::vector<std::uint8_t> out(w.size());
      to_layout(l, 1, M, row_bytes, w, out);
      for (i64 kb = 0; kb < row_bytes / 128; ++kb)
        for (i64 j = 0; j < M; ++j)
          for (i64 b = 0; b < 128; ++b)
            ASSERT_EQ(out[static_cast<std::size_t>((kb * M + j) * 128 + b)],
                      w[static_cast<std::size_t>(idx[static_cast<std::size_t>(j)] * row_bytes + kb * 128 + b)])
                << "etm " << etm << " gated " << gated << " block " << kb << " row " << j;
    }
  }
}

TEST(RowOrder, TextForm) {
  for (const ScaleLayout& l : row_ordered_layouts()) {
    const std::string s = to_string(l);
    EXPECT_EQ(scale_layout_from_string(s), l) << s;
  }
  EXPECT_EQ(to_string(ScaleLayout::row_ordered(ScaleLayoutKind::tiled_128x4, RowOrder::gated_act_trtllm_shuffle32)),
            "tiled_128x4:rows=gated_act_trtllm_shuffle32");
  EXPECT_EQ(to_string(ScaleLayout::row_ordered(ScaleLayoutKind::linear, RowOrder::natural)), "linear");
  EXPECT_EQ(scale_layout_from_string("linear:rows=natural"), ScaleLayout::of(ScaleLayoutKind::linear));
  auto refused = [](const std::string& text, const std::string& rule) {
    EXPECT_FALSE(parse_scale_layout(text).has_value()) << text;
    try {
      (void)scale_layout_from_string(text);
      ADD_FAILURE() << text << " was accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_THAT(e.what(), HasSubstr(rule)) << text;
    }
  };
  refused("tiled_8x4:rows=trtllm_shuffle32", "tiled_8x4 has no parameter 'rows'");
  refused("cutile_swizzle_32_4_4:rows=gated_act", "has no parameter 'rows'");
  refused("linear:rows=shuffle32", "unknown row order 'shuffle32'");
  refused("linear:rows=", "unknown row order ''");
  refused("tiled_128x4:rows=gated_act,rows=gated_act", "'rows' given twice");
  refused("triton_hopper:num_warps=4,rows=gated_act", "has no parameter 'rows'");
}

TEST(RowOrder, ErrorsNameTheRule) {
  const ScaleLayout lin32 = ScaleLayout::row_ordered(ScaleLayoutKind::linear, RowOrder::trtllm_shuffle32);
  const ScaleLayout lin16 = ScaleLayout::row_ordered(ScaleLayoutKind::linear, RowOrder::gated_act_trtllm_shuffle16);
  const ScaleLayout gated = ScaleLayout::row_ordered(ScaleLayoutKind::linear, RowOrder::gated_act);
  const ScaleLayout t16 = ScaleLayout::row_ordered(ScaleLayoutKind::tiled_128x4, RowOrder::trtllm_shuffle16);
  expect_throw_with([&] { check_shape(lin32, 48, 4); }, "blocks of 32 rows: R must be a multiple of 32");
  expect_throw_with([&] { check_shape(lin16, 40, 4); }, "R must be a multiple of 16");
  expect_throw_with([&] { check_shape(gated, 7, 4); }, "reorderRowsForGatedActGemm interleaves two halves: R must be even");
  expect_throw_with([&] { check_shape(t16, 144, 4); }, "shuffleMatrixSfA) does not pad: R must be a multiple of 128");
  expect_throw_with([&] { check_shape(t16, 128, 5); }, "shuffleMatrixSfA) does not pad: C must be a multiple of 4");
  expect_throw_with([&] { (void)storage_size(t16, 256, 6); }, "C must be a multiple of 4");
  expect_throw_with([&] { (void)ScaleOffsets(lin32, 33, 1); }, "R must be a multiple of 32");
  expect_throw_with([&] { (void)ScaleLayout::row_ordered(ScaleLayoutKind::tiled_8x4, RowOrder::gated_act); },
              "tiled_8x4 takes no row order (rows= is for linear, tiled_128x4 and block_major_k)");
  const ScaleLayout bmk = ScaleLayout::block_major_k(128, RowOrder::trtllm_shuffle16);
  expect_throw_with([&] { check_shape(bmk, 40, 256); }, "R must be a multiple of 16");
  expect_throw_with([&] { check_shape(bmk, 64, 200); }, "convert_to_block_layout does not pad: C must be a multiple of block_k = 128");
  expect_throw_with([&] { (void)ScaleLayout::row_ordered(ScaleLayoutKind::gluon_contiguous, RowOrder::gated_act); },
              "this kind has parameters");
  ScaleLayout bad = ScaleLayout::of(ScaleLayoutKind::cdna4_mfma16);
  bad.row_order = RowOrder::trtllm_shuffle16;
  expect_throw_with([&] { validate(bad); }, "cdna4_mfma16 takes no row order");
  bad = ScaleLayout::of(ScaleLayoutKind::linear);
  bad.row_order = static_cast<RowOrder>(kRowOrderCount);
  expect_throw_with([&] { validate(bad); }, "unknown RowOrder");
  expect_throw_with([&] { (void)row_order_indices(RowOrder::gated_act_trtllm_shuffle32, 48); }, "R must be a multiple of 32");
  expect_throw_with([&] { (void)row_order_indices(RowOrder::gated_act, 3); }, "R must be even");
  expect_throw_with([&] { (void)row_order_indices(RowOrder::natural, -1); }, "must be in [0, 2^40]");
  expect_throw_with([&] { (void)row_order_indices(static_cast<RowOrder>(9), 32); }, "unknown RowOrder");
  expect_throw_with([&] { (void)trtllm_row_order(0, true); }, "epilogue_tile_m = 0 must be positive");
}

}  // namespace
