// SPDX-License-Identifier: Apache-2.0
// Grouped (ragged MoE) scale layouts: the maps of grouped_scales.h against oracles that follow the
// defining code step by step, built from pad + reshape + permute of the logical index matrix
// (index_tensor.h) rather than from the library's closed forms:
//   * torchao's reference rearrangements (torch_to_blocked_2d_M_groups and
//     torch_to_blocked_2d_K_groups: a zeroed buffer of the upper-bound size, each group's to_blocked
//     image written where those loops write it);
//   * triton_kernels' ragged activation scales (BlackwellActMXScaleLayoutTransformation): the
//     slices copied block by block into a zeroed scratchpad as pad_segments_kernel does (block
//     offsets, the n_blocks upper bound), then its reshape and transpose of 128x4 tiles;
//   * DeepGEMM's: the k-grouped packing as its test checks it (each group's
//     get_mn_major_tma_aligned_packed_ue8m0_tensor_torch_impl image, concatenated), and the psum
//     m-grouped packing as transpose_and_pack_fp32_into_ue8m0 writes it (group g valid from
//     align(psum[g-1], alignment) to psum[g], every other row 0, the packed words MN-major);
// hand-checked offsets, whole-matrix round trips, padding checks and every error.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "blockscale/layout.h"
#include "layout/index_tensor.h"
#include "expect_throw.h"

namespace blockscale {
namespace {

using blockscale::test::expect_throw_with;

using test::IndexTensor;
using test::pad_to_multiple;
using test::permute;
using test::reshape;
using i64 = std::int64_t;

i64 cdiv(i64 a, i64 b) { return (a + b - 1) / b; }

// torchao to_blocked (mx_formats/utils.py): pad rows to 128 and columns to 4, reshape
// (n_row_blocks, 128, n_col_blocks, 4), permute (0, 2, 1, 3), then each 128 x 4 block as
// (4, 32, 4) -> (32, 4, 4) -> (32, 16): in index terms the packed block of the 128x4 layout.
IndexTensor to_blocked(const IndexTensor& s) {
  const IndexTensor p = pad_to_multiple(s, 128, 4);
  const i64 rb = p.shape[0] / 128, cb = p.shape[1] / 4;
  const IndexTensor blocks = permute(reshape(p, {rb, 128, cb, 4}), {0, 2, 1, 3});  // (rb, cb, 128, 4)
  // Each block's rows r = 32 i + j go to (j, i): (rb, cb, 4, 32, 4) -> (rb, cb, 32, 4, 4).
  return permute(reshape(blocks, {rb, cb, 4, 32, 4}), {0, 1, 3, 2, 4});
}

// Rows [r0, r1) or columns [c0, c1) of the logical matrix (entries r*C + c).
IndexTensor rows_of(i64 C, i64 r0, i64 r1) {
  IndexTensor t{{r1 - r0, C}, {}};
  for (i64 r = r0; r < r1; ++r)
    for (i64 c = 0; c < C; ++c) t.data.push_back(r * C + c);
  return t;
}
IndexTensor cols_of(i64 R, i64 C, i64 c0, i64 c1) {
  IndexTensor t{{R, c1 - c0}, {}};
  for (i64 r = 0; r < R; ++r)
    for (i64 c = c0; c < c1; ++c) t.data.push_back(r * C + c);
  return t;
}

struct OracleImage {
  std::vector<i64> buffer;  // the logical index stored at each byte, -1 for padding
  std::vector<i64> starts;
};

// torch_to_blocked_2d_M_groups, step by step.
OracleImage oracle_m_groups(i64 R, i64 C, const std::vector<i64>& ends) {
  const auto G = static_cast<i64>(ends.size());
  OracleImage o{std::vector<i64>(static_cast<std::size_t>((R + G * 128) * C), -1), {0}};
  i64 group_start = 0;
  for (const i64 end : ends) {
    const i64 size = end - group_start, prev = o.starts.back();
    if (size == 0) {
      o.starts.push_back(prev);
      continue;
    }
    const IndexTensor blocked = to_blocked(rows_of(C, group_start, end));
    const i64 rows_for_group = static_cast<i64>(blocked.data.size()) / C;
    o.starts.push_back(prev + rows_for_group);
    // blocked.reshape(-1, C) written to rows [prev, prev + rup(size, 128)).
    const i64 padded_rows = cdiv(size, 128) * 128;
    EXPECT_EQ(static_cast<i64>(blocked.data.size()), padded_rows * C);
    for (i64 i = 0; i < padded_rows * C; ++i) o.buffer[static_cast<std::size_t>(prev * C + i)] = blocked.data[static_cast<std::size_t>(i)];
    group_start = end;
  }
  return o;
}

// torch_to_blocked_2d_K_groups, step by step: each 128 x 4 tile written at
// base + row_block * (col blocks * 512) + col_block * 512, base = start_col * padded_M.
OracleImage oracle_k_groups(i64 R, i64 C, const std::vector<i64>& ends) {
  const auto G = static_cast<i64>(ends.size());
  const i64 padded_m = cdiv(R, 128) * 128;
  OracleImage o{std::vector<i64>(static_cast<std::size_t>(padded_m * (C + 4 * G)), -1), {0}};
  i64 group_start = 0;
  for (const i64 end : ends) {
    const i64 size = end - group_start, prev = o.starts.back();
    if (size == 0) {
      o.starts.push_back(prev);
      continue;
    }
    const IndexTensor blocked = to_blocked(cols_of(R, C, group_start, end));
    const i64 cols_after_padding = cdiv(size, 4) * 4;
    const i64 row_blocks = cdiv(R, 128), col_blocks = cols_after_padding / 4;
    const i64 base = prev * padded_m;
    for (i64 rb = 0; rb < row_blocks; ++rb) {
      for (i64 cb = 0; cb < col_blocks; ++cb) {
        const i64 at = base + rb * col_blocks * 512 + cb * 512, from = (rb * col_blocks + cb) * 512;
        for (i64 i = 0; i < 512; ++i) o.buffer[static_cast<std::size_t>(at + i)] = blocked.data[static_cast<std::size_t>(from + i)];
      }
    }
    o.starts.push_back(prev + cols_after_padding);
    group_start = end;
  }
  return o;
}

// DeepGEMM's packed image of an index matrix (get_mn_major_tma_aligned_packed_ue8m0_tensor_torch_impl):
// rows padded to the TMA multiple (4 int32) and columns to 4 blocks, each row's 4-block groups read
// as int32 words, the (rows, words) word matrix stored transposed (MN-major), the bytes of a word
// in little-endian order: (rows, words, 4) -> (words, rows, 4).
IndexTensor packed_ue8m0(const IndexTensor& s) {
  const IndexTensor p = pad_to_multiple(s, 4, 4);
  return permute(reshape(p, {p.shape[0], p.shape[1] / 4, 4}), {1, 0, 2});
}

// DeepGEMM's k-grouped packing as tests/test_layout.py checks it: the split of the packed output
// by ceil(size / 4) words equals each group's packed image (mn % 4 == 0, so no row padding).
OracleImage oracle_deepgemm_k_groups(i64 R, i64 C, const std::vector<i64>& ends) {
  OracleImage o{{}, {0}};
  i64 group_start = 0;
  for (const i64 end : ends) {
    const i64 size = end - group_start;
    if (size > 0) {
      const IndexTensor image = packed_ue8m0(cols_of(R, C, group_start, end));
      o.buffer.insert(o.buffer.end(), image.data.begin(), image.data.end());
    }
    o.starts.push_back(o.starts.back() + cdiv(size, 4) * 4);
    group_start = end;
  }
  return o;
}

// The psum m-grouped packing (transpose_and_pack_fp32_into_ue8m0 with kUsePsumLayout): the psum
// layout grouped_layout[g] = align(grouped_layout[g-1], alignment) + size(g); row m of the M x C
// input is valid when group_mn_start[g] = align(grouped_layout[g-1], alignment) <= m <
// grouped_layout[g] for some g; invalid rows pack as 0; the packed words are stored MN-major with
// the TMA-aligned leading dimension. M is the generator's sum of aligned sizes unless given.
OracleImage oracle_deepgemm_m_groups(i64 C, const std::vector<i64>& ends, i64 alignment, i64 m_given) {
  std::vector<i64> psum;
  i64 group_start = 0;
  for (const i64 end : ends) {
    psum.push_back((psum.empty() ? 0 : cdiv(psum.back(), alignment) * alignment) + end - group_start);
    group_start = end;
  }
  i64 m = 0;
  group_start = 0;
  for (const i64 end : ends) {
    m += cdiv(end - group_start, alignment) * alignment;
    group_start = end;
  }
  if (m_given != 0) m = m_given;
  IndexTensor padded{{m, C}, std::vector<i64>(static_cast<std::size_t>(m * C), -1)};
  OracleImage o{{}, {}};
  group_start = 0;  // the logical row of the group's first token
  for (std::size_t g = 0; g < ends.size(); ++g) {
    const i64 mn_start = g == 0 ? 0 : cdiv(psum[g - 1], alignment) * alignment;
    o.starts.push_back(mn_start);
    for (i64 row = mn_start; row < psum[g]; ++row)
      for (i64 c = 0; c < C; ++c) padded.data[static_cast<std::size_t>(row * C + c)] = (group_start + row - mn_start) * C + c;
    group_start = ends[g];
  }
  o.starts.push_back(m);
  o.buffer = packed_ue8m0(padded).data;
  return o;
}

// Python's floor division (the n_blocks formula divides a negative number).
i64 floordiv(i64 a, i64 b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0)) ? 1 : 0); }

// triton_kernels' ragged path, step by step: RaggedTensorMetadata.n_blocks sizes the scratchpad
// (M_pad = 128 n_blocks(n_slices, M, 128), M = the tokens), block_offs(128) places each slice,
// pad_segments_kernel copies 128-row blocks (rows past the slice and columns past K stay 0: -1
// here), K pads to ALIGN_K = 8, and swizzle_data reshapes (1, M_pad/128, 4, 32, K_pad/4, 4) and
// transposes dims 2 and 4.
OracleImage oracle_triton_ragged(i64 R, i64 C, const std::vector<i64>& ends, i64 tokens) {
  const i64 n_slices = static_cast<i64>(ends.size()), m = tokens != 0 ? tokens : R;
  const i64 n_blocks = m <= n_slices ? m : n_slices - 1 - floordiv(n_slices - m - 1, 128);
  const i64 m_pad = 128 * n_blocks, k_pad = cdiv(C, 8) * 8;
  IndexTensor padded{{m_pad, k_pad}, std::vector<i64>(static_cast<std::size_t>(m_pad * k_pad), -1)};
  OracleImage o{{}, {}};
  i64 slice_off = 0, block_off = 0;
  for (const i64 end : ends) {
    const i64 slice_size = end - slice_off;
    o.starts.push_back(128 * block_off);
    for (i64 blk = 0; blk < cdiv(slice_size, 128); ++blk) {
      for (i64 i = 0; i < 128; ++i) {
        const i64 in_row = blk * 128 + i, out_row = (block_off + blk) * 128 + i;
        if (in_row >= slice_size) continue;
        for (i64 c = 0; c < C; ++c) padded.data[static_cast<std::size_t>(out_row * k_pad + c)] = (slice_off + in_row) * C + c;
      }
    }
    block_off += cdiv(slice_size, 128);
    slice_off = end;
  }
  o.starts.push_back(m_pad);
  o.buffer = permute(reshape(padded, {1, m_pad / 128, 4, 32, k_pad / 4, 4}), {0, 1, 4, 3, 2, 5}).data;
  return o;
}

struct Case {
  GroupedScaleLayout layout;
  i64 R, C;
};

std::string name(const Case& k) { return to_string(k.layout) + " R=" + std::to_string(k.R) + " C=" + std::to_string(k.C); }

OracleImage oracle(const Case& k) {
  const GroupedScaleLayout& l = k.layout;
  if (l.family == GroupedScaleFamily::triton_kernels) return oracle_triton_ragged(k.R, k.C, l.group_ends, l.tokens);
  if (l.family == GroupedScaleFamily::deepgemm_sm100) {
    return l.axis == GroupAxis::rows ? oracle_deepgemm_m_groups(k.C, l.group_ends, l.alignment, l.padded_rows)
                                     : oracle_deepgemm_k_groups(k.R, k.C, l.group_ends);
  }
  return l.axis == GroupAxis::rows ? oracle_m_groups(k.R, k.C, l.group_ends) : oracle_k_groups(k.R, k.C, l.group_ends);
}

GroupedScaleLayout deepgemm_rows(std::vector<i64> ends, i64 alignment, i64 padded_rows = 0) {
  return {GroupAxis::rows, std::move(ends), GroupedScaleFamily::deepgemm_sm100, alignment, padded_rows};
}
GroupedScaleLayout triton_rows(std::vector<i64> ends, i64 tokens = 0) {
  GroupedScaleLayout l{GroupAxis::rows, std::move(ends)};
  l.family = GroupedScaleFamily::triton_kernels;
  l.tokens = tokens;
  return l;
}
GroupedScaleLayout deepgemm_cols(std::vector<i64> ends) {
  GroupedScaleLayout l{GroupAxis::cols, std::move(ends)};
  l.family = GroupedScaleFamily::deepgemm_sm100;
  return l;
}

std::vector<Case> cases() {
  return {
      // torchao M groups: one group, empty groups anywhere, groups of 1, exact multiples of 128, R = 0.
      {{GroupAxis::rows, {5}}, 5, 4},
      {{GroupAxis::rows, {0, 5, 133, 133, 389}}, 389, 4},
      {{GroupAxis::rows, {1, 2, 3}}, 3, 8},
      {{GroupAxis::rows, {128, 256}}, 256, 20},
      {{GroupAxis::rows, {300}}, 300, 12},
      {{GroupAxis::rows, {129, 129, 257, 257}}, 257, 8},
      {{GroupAxis::rows, {0, 0}}, 0, 4},
      // torchao K groups: groups of every size mod 4, empty ones, rows below and above 128.
      {{GroupAxis::cols, {2, 6}}, 3, 6},
      {{GroupAxis::cols, {0, 1, 5, 5, 12, 13}}, 130, 13},
      {{GroupAxis::cols, {4, 8}}, 256, 8},
      {{GroupAxis::cols, {13}}, 1, 13},
      {{GroupAxis::cols, {3, 3, 7}}, 200, 7},
      {{GroupAxis::cols, {2, 5}}, 0, 5},
      // DeepGEMM M groups: the default alignment, DeepGEMM's SM100 block_m choices (32 to 224),
      // alignment 1 (no gaps), an upper-bound M, any C (the packing pads it to 4), empty groups.
      {deepgemm_rows({5}, 128), 5, 4},
      {deepgemm_rows({0, 5, 133, 133, 389}, 128), 389, 7},
      {deepgemm_rows({1, 2, 3}, 32), 3, 1},
      {deepgemm_rows({100, 300}, 224, 701), 300, 13},
      {deepgemm_rows({129, 129, 257, 257}, 64), 257, 9},
      {deepgemm_rows({3, 10}, 1), 10, 6},
      {deepgemm_rows({3, 10}, 1, 14), 10, 5},
      {deepgemm_rows({0, 0}, 128), 0, 4},
      {deepgemm_rows({0, 0}, 96, 6), 0, 3},
      // DeepGEMM K groups: R a multiple of 4, groups of every size mod 4, empty ones.
      {deepgemm_cols({2, 6}), 4, 6},
      {deepgemm_cols({0, 1, 5, 5, 12, 13}), 132, 13},
      {deepgemm_cols({4, 8}), 8, 8},
      {deepgemm_cols({13}), 4, 13},
      {deepgemm_cols({3, 3, 7}), 200, 7},
      {deepgemm_cols({2, 5}), 0, 5},
      // triton_kernels ragged slices: fewer rows than slices (n_blocks = M), padded tokens,
      // slices of whole blocks, K below, at and above 8, no rows.
      {triton_rows({5}), 5, 4},
      {triton_rows({0, 5, 133, 133, 300}), 300, 7},
      {triton_rows({0, 5, 133, 133, 300}, 700), 300, 9},
      {triton_rows({1, 2, 3}), 3, 1},
      {triton_rows({128, 256}), 256, 8},
      {triton_rows({7, 7, 100}, 1000), 100, 16},
      // The worst case n_blocks sizes for: one row, then 129 (3 blocks; M - G + 1 = 129).
      {triton_rows({1, 130}), 130, 4},
      {triton_rows({0, 0}), 0, 4},
  };
}

TEST(GroupedScales, MapsFollowTheDefiningRearrangements) {
  for (const Case& k : cases()) {
    SCOPED_TRACE(name(k));
    const GroupedScaleLayout& l = k.layout;
    const OracleImage o = oracle(k);
    ASSERT_EQ(storage_size(l, k.R, k.C), static_cast<i64>(o.buffer.size()));
    EXPECT_EQ(group_starts(l, k.R, k.C), o.starts);
    std::vector<i64> where(static_cast<std::size_t>(k.R * k.C), -1);  // the oracle's offset of each (r, c)
    for (i64 off = 0; off < static_cast<i64>(o.buffer.size()); ++off) {
      const i64 idx = o.buffer[static_cast<std::size_t>(off)];
      const auto got = logical_index(l, k.R, k.C, off);
      if (idx < 0) {
        ASSERT_FALSE(got.has_value()) << "offset " << off << " is padding";
        continue;
      }
      ASSERT_EQ(where[static_cast<std::size_t>(idx)], -1) << "index " << idx << " stored twice";
      where[static_cast<std::size_t>(idx)] = off;
      ASSERT_TRUE(got.has_value()) << "offset " << off;
      EXPECT_EQ((*got)[0] * k.C + (*got)[1], idx) << "offset " << off;
    }
    for (i64 r = 0; r < k.R; ++r)
      for (i64 c = 0; c < k.C; ++c) ASSERT_EQ(offset(l, k.R, k.C, r, c), where[static_cast<std::size_t>(r * k.C + c)]) << r << ", " << c;
  }
}

TEST(GroupedScales, WholeMatricesRoundTripAndPadding) {
  std::mt19937_64 rng(7);
  for (const Case& k : cases()) {
    SCOPED_TRACE(name(k));
    const GroupedScaleLayout& l = k.layout;
    const OracleImage o = oracle(k);
    std::vector<std::uint8_t> m(static_cast<std::size_t>(k.R * k.C));
    for (auto& b : m) b = static_cast<std::uint8_t>(rng() % 255);  // never 0xFF
    for (const std::uint8_t pad : {std::uint8_t{0}, std::uint8_t{0x7F}}) {
      std::vector<std::uint8_t> image(o.buffer.size(), 0xEE);
      to_layout(l, k.R, k.C, m, image, pad);
      for (std::size_t off = 0; off < image.size(); ++off) {
        const i64 idx = o.buffer[off];
        ASSERT_EQ(image[off], idx < 0 ? pad : m[static_cast<std::size_t>(idx)]) << "offset " << off;
      }
      std::vector<std::uint8_t> back(m.size(), 0xEE);
      from_layout(l, k.R, k.C, image, back);
      EXPECT_EQ(back, m);
      EXPECT_EQ(find_padding_mismatch(l, k.R, k.C, image, pad), std::nullopt);
      // A byte of padding that does not hold pad is found at its offset: the first padding byte
      // and the last (for torchao the upper bound's tail, always padding). DeepGEMM's K groups of
      // whole words have none.
      std::vector<std::size_t> padding;
      for (std::size_t off = 0; off < image.size(); ++off) {
        if (o.buffer[off] < 0) padding.push_back(off);
      }
      if (l.family == GroupedScaleFamily::torchao && !image.empty()) {
        ASSERT_LT(o.buffer.back(), 0);
      }
      if (padding.empty()) continue;
      // Every padding byte of the small buffers, the first and last of the others.
      std::vector<std::size_t> pokes = padding;
      if (image.size() > 2048) pokes = {padding.front(), padding.back()};
      for (const std::size_t off : pokes) {
        std::vector<std::uint8_t> poked = image;
        poked[off] = static_cast<std::uint8_t>(pad + 1);
        EXPECT_EQ(find_padding_mismatch(l, k.R, k.C, poked, pad), static_cast<i64>(off));
      }
      // Two bad bytes: the first is reported.
      if (padding.size() >= 2) {
        std::vector<std::uint8_t> poked = image;
        poked[padding.back()] = poked[padding[padding.size() / 2]] = static_cast<std::uint8_t>(pad + 1);
        EXPECT_EQ(find_padding_mismatch(l, k.R, k.C, poked, pad), static_cast<i64>(padding[padding.size() / 2]));
      }
    }
  }
}

// Offsets worked out by hand from the layout's definition.
TEST(GroupedScales, HandCheckedOffsets) {
  // M groups of 5 and 128 rows, C = 4: group 1 starts at row 128 (byte 512); within a group the
  // 128x4 offset is 16 (r mod 32) + 4 ((r mod 128) / 32) + c.
  const GroupedScaleLayout m{GroupAxis::rows, {5, 133}};
  EXPECT_EQ(group_starts(m, 133, 4), (std::vector<i64>{0, 128, 256}));
  EXPECT_EQ(storage_size(m, 133, 4), (133 + 2 * 128) * 4);
  EXPECT_EQ(offset(m, 133, 4, 4, 3), 67);
  EXPECT_EQ(offset(m, 133, 4, 5, 0), 512);
  EXPECT_EQ(offset(m, 133, 4, 132, 2), 512 + 31 * 16 + 3 * 4 + 2);
  EXPECT_EQ(logical_index(m, 133, 4, 16 * 5), std::nullopt);  // row 5 of group 0's image: padding
  // K groups of 2 and 4 blocks, R = 3: group 1 starts at block column 4 (byte 4 * 128).
  const GroupedScaleLayout k{GroupAxis::cols, {2, 6}};
  EXPECT_EQ(group_starts(k, 3, 6), (std::vector<i64>{0, 4, 8}));
  EXPECT_EQ(storage_size(k, 3, 6), 128 * (6 + 2 * 4));
  EXPECT_EQ(offset(k, 3, 6, 1, 3), 512 + 16 + 1);
  EXPECT_EQ(offset(k, 3, 6, 2, 1), 2 * 16 + 1);
  EXPECT_EQ(logical_index(k, 3, 6, 2), std::nullopt);  // block 2 of group 0: padding

  // DeepGEMM M groups of 5 and 128 rows, alignment 128, C = 6: the padded matrix has 256 rows
  // (group 1 from row 128, DeepGEMM's psum layout {5, 256}), stored as 2 words of 256 rows: byte
  // 4 (floor(c/4) 256 + row) + c mod 4.
  const GroupedScaleLayout dm = deepgemm_rows({5, 133}, 128);
  EXPECT_EQ(group_starts(dm, 133, 6), (std::vector<i64>{0, 128, 256}));
  EXPECT_EQ(storage_size(dm, 133, 6), 2 * 256 * 4);
  EXPECT_EQ(offset(dm, 133, 6, 4, 3), 4 * 4 + 3);
  EXPECT_EQ(offset(dm, 133, 6, 5, 0), 4 * 128);
  EXPECT_EQ(offset(dm, 133, 6, 132, 5), 4 * (256 + 255) + 1);
  EXPECT_EQ(logical_index(dm, 133, 6, 4 * 5), std::nullopt);        // row 5: the gap before row 128
  EXPECT_EQ(logical_index(dm, 133, 6, 4 * (256 + 7) + 2), std::nullopt);  // block 6 of the second word: C pads to 8
  // An upper-bound M of 258 rows: the leading dimension is align(258, 4) = 260.
  const GroupedScaleLayout dm_upper = deepgemm_rows({5, 133}, 128, 258);
  EXPECT_EQ(storage_size(dm_upper, 133, 6), 2 * 260 * 4);
  EXPECT_EQ(group_starts(dm_upper, 133, 6), (std::vector<i64>{0, 128, 258}));
  EXPECT_EQ(offset(dm_upper, 133, 6, 132, 5), 4 * (260 + 255) + 1);
  // DeepGEMM K groups of 2 and 4 blocks, R = 4: group 0 is 1 word of 4 rows (16 bytes), group 1
  // starts at block column 4, byte 4 * 4.
  const GroupedScaleLayout dk = deepgemm_cols({2, 6});
  EXPECT_EQ(group_starts(dk, 4, 6), (std::vector<i64>{0, 4, 8}));
  EXPECT_EQ(storage_size(dk, 4, 6), 4 * 8);
  EXPECT_EQ(offset(dk, 4, 6, 3, 1), 4 * 3 + 1);
  EXPECT_EQ(offset(dk, 4, 6, 1, 5), 16 + 4 * 1 + 3);
  EXPECT_EQ(logical_index(dk, 4, 6, 2), std::nullopt);  // byte 2 of row 0's word: block 2 of a 2-block group

  // triton_kernels slices of 5 and 128 rows with 300 tokens, C = 6: n_blocks(2, 300, 128) =
  // 1 + ceil(299 / 128) = 4, Mp = 512; slice 1 from row 128; C pads to 8, so a 128-row tile
  // row holds 2 tiles (1024 bytes); within a tile 16 (r mod 32) + 4 ((r mod 128) / 32) + c mod 4.
  const GroupedScaleLayout tr = triton_rows({5, 133}, 300);
  EXPECT_EQ(group_starts(tr, 133, 6), (std::vector<i64>{0, 128, 512}));
  EXPECT_EQ(storage_size(tr, 133, 6), 512 * 8);
  EXPECT_EQ(offset(tr, 133, 6, 4, 3), 4 * 16 + 3);
  EXPECT_EQ(offset(tr, 133, 6, 4, 5), 512 + 4 * 16 + 1);
  EXPECT_EQ(offset(tr, 133, 6, 5, 0), 1024);
  EXPECT_EQ(offset(tr, 133, 6, 132, 5), 1024 + 512 + 31 * 16 + 3 * 4 + 1);
  EXPECT_EQ(logical_index(tr, 133, 6, 5 * 16), std::nullopt);   // row 5: the rest of slice 0's block
  EXPECT_EQ(logical_index(tr, 133, 6, 512 + 2), std::nullopt);  // block column 6: C pads to 8
  EXPECT_EQ(logical_index(tr, 133, 6, 2048), std::nullopt);     // rows 256..511: the worst case's room
  // Without tokens M = R = 133: n_blocks = 1 + ceil(132 / 128) = 3.
  EXPECT_EQ(storage_size(triton_rows({5, 133}), 133, 6), 384 * 8);
}

// DeepGEMM's and triton_kernels' groups against the single-matrix layouts they are built on:
// alignment 1 and K groups of whole words are deepgemm_sm100_packed of the whole matrix, one K
// group is that layout itself; one triton_kernels slice is tiled_128x4_k8 (its batched mode).
TEST(GroupedScales, ReduceToTheSingleMatrixLayouts) {
  const auto same_bytes = [&](const GroupedScaleLayout& grouped, i64 R, i64 C) {
    SCOPED_TRACE(to_string(grouped));
    const ScaleLayout base = ScaleLayout::of(grouped.family == GroupedScaleFamily::triton_kernels
                                                 ? ScaleLayoutKind::tiled_128x4_k8
                                                 : ScaleLayoutKind::deepgemm_sm100_packed);
    std::vector<std::uint8_t> m(static_cast<std::size_t>(R * C));
    for (std::size_t i = 0; i < m.size(); ++i) m[i] = static_cast<std::uint8_t>(i * 7 % 251);
    std::vector<std::uint8_t> single(static_cast<std::size_t>(storage_size(base, R, C)));
    to_layout(base, 1, R, C, m, single);
    std::vector<std::uint8_t> image(static_cast<std::size_t>(storage_size(grouped, R, C)));
    to_layout(grouped, R, C, m, image);
    EXPECT_EQ(image, single);
  };
  same_bytes(deepgemm_rows({3, 3, 10, 17}, 1), 17, 6);
  same_bytes(deepgemm_rows({128, 256}, 128), 256, 5);
  same_bytes(deepgemm_cols({13}), 8, 13);
  same_bytes(deepgemm_cols({0, 4, 4, 12}), 8, 12);
  same_bytes(triton_rows({300}), 300, 5);
  same_bytes(triton_rows({256}), 256, 8);
}

// A single group is the 128x4 layout of the whole matrix, followed by the upper bound's padding.
TEST(GroupedScales, OneGroupIsTheTiledLayout) {
  std::vector<std::uint8_t> m(300 * 12);
  for (std::size_t i = 0; i < m.size(); ++i) m[i] = static_cast<std::uint8_t>(i * 7 % 251);
  const ScaleLayout l1 = ScaleLayout::of(ScaleLayoutKind::tiled_128x4);
  std::vector<std::uint8_t> tiled(static_cast<std::size_t>(storage_size(l1, 300, 12)));
  to_layout(l1, 1, 300, 12, m, tiled);
  std::vector<std::uint8_t> grouped(static_cast<std::size_t>(storage_size(GroupedScaleLayout{GroupAxis::rows, {300}}, 300, 12)));
  to_layout(GroupedScaleLayout{GroupAxis::rows, {300}}, 300, 12, m, grouped);
  ASSERT_EQ(grouped.size(), tiled.size() + 128 * 12 - 84 * 12);  // (300 + 128) x 12 against 384 x 12
  EXPECT_TRUE(std::equal(tiled.begin(), tiled.end(), grouped.begin()));
  EXPECT_TRUE(std::all_of(grouped.begin() + static_cast<std::ptrdiff_t>(tiled.size()), grouped.end(), [](std::uint8_t b) { return b == 0; }));
}

// DeepGEMM's own group descriptions, as its test generator builds them
// (generate_m_grouped_contiguous with use_psum_layout: psum[g] = start + actual_m, start advanced
// by the aligned size; m = the sum of aligned sizes).
TEST(GroupedScales, DeepGemmPsumAndKSizes) {
  const std::vector<i64> actual_ms = {5, 130, 128, 0, 1};
  std::vector<i64> psum;
  i64 start = 0, m = 0;
  for (const i64 actual_m : actual_ms) {
    psum.push_back(start + actual_m);
    start += cdiv(actual_m, 128) * 128;
    m += cdiv(actual_m, 128) * 128;
  }
  ASSERT_EQ(psum, (std::vector<i64>{5, 258, 512, 512, 513}));
  const GroupedScaleLayout l = deepgemm_m_groups_from_psum(psum, 128, m);
  EXPECT_EQ(l.group_ends, (std::vector<i64>{5, 135, 263, 263, 264}));
  EXPECT_EQ(l.family, GroupedScaleFamily::deepgemm_sm100);
  EXPECT_EQ(l.padded_rows, 640);
  EXPECT_EQ(group_starts(l, 264, 3), (std::vector<i64>{0, 128, 384, 512, 512, 640}));
  EXPECT_EQ(deepgemm_psum(l, 264, 3), psum);
  // Without m, the least padded matrix: the same here, as the generator's m is start(G).
  EXPECT_EQ(storage_size(deepgemm_m_groups_from_psum(psum, 128), 264, 3), storage_size(l, 264, 3));
  // A psum whose group ends before its aligned start, negative values, bad alignments.
  expect_throw_with([] { (void)deepgemm_m_groups_from_psum(std::vector<i64>{5, 100}, 128); },
              "group 1 ends at row 100, outside [128, 2^40] (it starts at align(5, 128))");
  expect_throw_with([] { (void)deepgemm_m_groups_from_psum(std::vector<i64>{-1}, 128); }, "group 0 ends at row -1");
  expect_throw_with([] { (void)deepgemm_m_groups_from_psum(std::vector<i64>{5}, 0); }, "the alignment must be in [1, 2^20]");
  expect_throw_with([] { (void)deepgemm_m_groups_from_psum(std::vector<i64>{5}, 128, -1); }, "m must be in [0, 2^40]");
  expect_throw_with([] { (void)deepgemm_psum(GroupedScaleLayout{GroupAxis::rows, {5}}, 5, 4); }, "not deepgemm_sm100 rows groups");
  // K groups: ceil(k / gran_k) blocks each.
  const GroupedScaleLayout k = deepgemm_k_groups_from_ks(std::vector<i64>{256, 100, 0, 32}, 128);
  EXPECT_EQ(k.group_ends, (std::vector<i64>{2, 3, 3, 4}));
  EXPECT_EQ(k.axis, GroupAxis::cols);
  EXPECT_EQ(k.family, GroupedScaleFamily::deepgemm_sm100);
  EXPECT_EQ(deepgemm_k_groups_from_ks(std::vector<i64>{256, 100}, 32).group_ends, (std::vector<i64>{8, 12}));
  expect_throw_with([] { (void)deepgemm_k_groups_from_ks(std::vector<i64>{256}, 64); }, "gran_k must be 32 or 128");
  expect_throw_with([] { (void)deepgemm_k_groups_from_ks(std::vector<i64>{-4}, 32); }, "group 0 has K = -4");
}

TEST(GroupedScales, TextForm) {
  for (const Case& k : cases()) {
    const GroupedScaleLayout back = grouped_scale_layout_from_string(to_string(k.layout));
    EXPECT_EQ(back.axis, k.layout.axis) << name(k);
    EXPECT_EQ(back.group_ends, k.layout.group_ends) << name(k);
    EXPECT_EQ(back.family, k.layout.family) << name(k);
    EXPECT_EQ(back.alignment, k.layout.alignment) << name(k);
    EXPECT_EQ(back.padded_rows, k.layout.padded_rows) << name(k);
    EXPECT_EQ(back.tokens, k.layout.tokens) << name(k);
  }
  EXPECT_EQ(to_string(GroupedScaleLayout{GroupAxis::rows, {0, 5, 133, 133, 300}}), "rows:0,5,133,133,300");
  EXPECT_EQ(to_string(GroupedScaleLayout{GroupAxis::cols, {}}), "cols:");
  EXPECT_EQ(to_string(deepgemm_cols({4, 8})), "deepgemm_sm100_cols:4,8");
  EXPECT_EQ(to_string(deepgemm_rows({5, 133}, 128)), "deepgemm_sm100_rows:alignment=128:5,133");
  EXPECT_EQ(to_string(deepgemm_rows({5, 133}, 64, 512)), "deepgemm_sm100_rows:alignment=64,padded_rows=512:5,133");
  EXPECT_EQ(to_string(triton_rows({5, 133})), "triton_kernels_rows:5,133");
  EXPECT_EQ(to_string(triton_rows({5, 133}, 400)), "triton_kernels_rows:tokens=400:5,133");
  EXPECT_TRUE(grouped_scale_layout_from_string("rows:").group_ends.empty());
  // DeepGEMM rows parameters: optional (alignment 128), in any order.
  const GroupedScaleLayout plain = grouped_scale_layout_from_string("deepgemm_sm100_rows:5,133");
  EXPECT_EQ(plain.family, GroupedScaleFamily::deepgemm_sm100);
  EXPECT_EQ(plain.alignment, 128);
  EXPECT_EQ(plain.padded_rows, 0);
  const GroupedScaleLayout swapped = grouped_scale_layout_from_string("deepgemm_sm100_rows:padded_rows=300,alignment=32:5,133");
  EXPECT_EQ(swapped.alignment, 32);
  EXPECT_EQ(swapped.padded_rows, 300);
  EXPECT_EQ(swapped.group_ends, (std::vector<i64>{5, 133}));
  expect_throw_with([] { (void)grouped_scale_layout_from_string("rows"); },
              "expected <rows|cols|deepgemm_sm100_rows|deepgemm_sm100_cols|triton_kernels_rows>:<end>,<end>,...");
  expect_throw_with([] { (void)grouped_scale_layout_from_string("m:3"); },
              "the axis must be 'rows' or 'cols' (torchao), 'deepgemm_sm100_rows' or 'deepgemm_sm100_cols', or 'triton_kernels_rows', not 'm'");
  expect_throw_with([] { (void)grouped_scale_layout_from_string("triton_kernels_cols:3"); }, "not 'triton_kernels_cols'");
  expect_throw_with([] { (void)grouped_scale_layout_from_string("triton_kernels_rows:alignment=64:3"); },
              "unknown parameter 'alignment' (triton_kernels_rows takes tokens)");
  expect_throw_with([] { (void)grouped_scale_layout_from_string("deepgemm_sm100_rows:tokens=64:3"); }, "unknown parameter 'tokens'");
  expect_throw_with([] { (void)grouped_scale_layout_from_string("triton_kernels_rows:tokens=0:3"); }, "tokens 0 is outside [1, 2^40]");
  expect_throw_with([] { (void)grouped_scale_layout_from_string("triton_kernels_rows:tokens=5,tokens=6:3"); }, "tokens given twice");
  expect_throw_with([] { (void)grouped_scale_layout_from_string("rows:3,x"); }, "group end 'x' is not a decimal integer");
  expect_throw_with([] { (void)grouped_scale_layout_from_string("rows:3,,4"); }, "group end '' is not a decimal integer");
  expect_throw_with([] { (void)grouped_scale_layout_from_string("rows:+3"); }, "group end '+3' is not a decimal integer");
  expect_throw_with([] { (void)grouped_scale_layout_from_string("cols:-1,4"); }, "outside [0, 2^40]");
  expect_throw_with([] { (void)grouped_scale_layout_from_string("cols:1099511627777"); }, "outside [0, 2^40]");
  expect_throw_with([] { (void)grouped_scale_layout_from_string("cols:5,4"); }, "non-decreasing");
  expect_throw_with([] { (void)grouped_scale_layout_from_string("cols:4,"); }, "trailing ','");
  expect_throw_with([] { (void)grouped_scale_layout_from_string("rows:alignment=64:4"); }, "parameters apply to deepgemm_sm100_rows (alignment=, padded_rows=) and triton_kernels_rows (tokens=) only");
  expect_throw_with([] { (void)grouped_scale_layout_from_string("deepgemm_sm100_cols:alignment=64:4"); }, "parameters apply to deepgemm_sm100_rows");
  expect_throw_with([] { (void)grouped_scale_layout_from_string("deepgemm_sm100_rows:alignment:4"); }, "parameter 'alignment' is not <name>=<value>");
  expect_throw_with([] { (void)grouped_scale_layout_from_string("deepgemm_sm100_rows::4"); }, "parameter '' is not <name>=<value>");
  expect_throw_with([] { (void)grouped_scale_layout_from_string("deepgemm_sm100_rows:alignment=x:4"); }, "alignment 'x' is not a decimal integer");
  expect_throw_with([] { (void)grouped_scale_layout_from_string("deepgemm_sm100_rows:alignment=0:4"); }, "alignment 0 is outside [1, 2^20]");
  expect_throw_with([] { (void)grouped_scale_layout_from_string("deepgemm_sm100_rows:alignment=1048577:4"); }, "outside [1, 2^20]");
  expect_throw_with([] { (void)grouped_scale_layout_from_string("deepgemm_sm100_rows:padded_rows=0:4"); }, "padded_rows 0 is outside [1, 2^40]");
  expect_throw_with([] { (void)grouped_scale_layout_from_string("deepgemm_sm100_rows:alignment=32,alignment=64:4"); }, "alignment given twice");
  expect_throw_with([] { (void)grouped_scale_layout_from_string("deepgemm_sm100_rows:padded_rows=8,padded_rows=9:4"); }, "padded_rows given twice");
  expect_throw_with([] { (void)grouped_scale_layout_from_string("deepgemm_sm100_rows:block_m=64:4"); }, "unknown parameter 'block_m'");
}

TEST(GroupedScales, ErrorsNameTheRule) {
  const GroupedScaleLayout ok{GroupAxis::rows, {5, 133}};
  expect_throw_with([] { check_shape(GroupedScaleLayout{GroupAxis::rows, {6, 5, 133}}, 133, 4); }, "non-decreasing");
  expect_throw_with([] { check_shape(GroupedScaleLayout{GroupAxis::cols, {-1, 4}}, 2, 4); }, "not negative");
  expect_throw_with([] { check_shape(GroupedScaleLayout{GroupAxis::rows, {5, 132}}, 133, 4); }, "last group end");
  expect_throw_with([] { check_shape(GroupedScaleLayout{GroupAxis::cols, {4}}, 2, 5); }, "last group end");
  expect_throw_with([] { check_shape(GroupedScaleLayout{GroupAxis::rows, {}}, 3, 4); }, "no groups");
  expect_throw_with([] { check_shape(GroupedScaleLayout{GroupAxis::rows, {3}}, 3, 6); }, "C % 4 == 0");
  expect_throw_with([] { check_shape(GroupedScaleLayout{GroupAxis::rows, {3}}, 3, -4); }, "not be negative");
  expect_throw_with([] { check_shape(GroupedScaleLayout{GroupAxis::cols, {i64{1} << 41}}, 1, i64{1} << 41); }, "2^40");
  expect_throw_with([] { check_shape(GroupedScaleLayout{GroupAxis::cols, {i64{1} << 40}}, i64{1} << 40, i64{1} << 40); }, "2^62");
  expect_throw_with([&] { (void)offset(ok, 133, 4, 133, 0); }, "outside the matrix");
  expect_throw_with([&] { (void)offset(ok, 133, 4, 0, -1); }, "outside the matrix");
  expect_throw_with([&] { (void)logical_index(ok, 133, 4, storage_size(ok, 133, 4)); }, "outside the buffer");
  std::vector<std::uint8_t> m(133 * 4), image(static_cast<std::size_t>(storage_size(ok, 133, 4)));
  expect_throw_with([&] { to_layout(ok, 133, 4, std::span(m).first(m.size() - 1), image); }, "the row-major input has");
  expect_throw_with([&] { to_layout(ok, 133, 4, m, std::span(image).first(image.size() - 1)); }, "the output has");
  expect_throw_with([&] { to_layout(ok, 133, 4, m, image, 0xFF); }, "NaN");
  expect_throw_with([&] { from_layout(ok, 133, 4, std::span<const std::uint8_t>(image).first(10), m); }, "the stored input has");
  expect_throw_with([&] { from_layout(ok, 133, 4, image, std::span(m).first(1)); }, "the row-major output has");
  expect_throw_with([&] { (void)find_padding_mismatch(ok, 133, 4, std::span<const std::uint8_t>(image).first(1)); }, "the stored input has");
  // DeepGEMM's rules.
  expect_throw_with([] { check_shape(deepgemm_cols({4}), 6, 4); }, "deepgemm_sm100 cols groups need R % 4 == 0");
  expect_throw_with([] { check_shape(deepgemm_rows({5, 133}, 0), 133, 4); }, "the alignment must be in [1, 2^20]");
  expect_throw_with([] { check_shape(deepgemm_rows({5, 133}, (i64{1} << 20) + 1), 133, 4); }, "the alignment must be in [1, 2^20]");
  // Group 1 starts at row 128 and ends at 256: padded_rows 255 cannot hold it.
  expect_throw_with([] { check_shape(deepgemm_rows({5, 133}, 128, 255), 133, 4); }, "padded_rows (255) must hold every group: the last ends at row 256");
  expect_throw_with([] { check_shape(deepgemm_rows({5, 133}, 128, -1), 133, 4); }, "padded_rows must not be negative");
  expect_throw_with([] { check_shape(GroupedScaleLayout{GroupAxis::rows, {4}, GroupedScaleFamily::torchao, 64}, 4, 4); },
              "alignment and padded_rows apply to deepgemm_sm100 rows groups only");
  GroupedScaleLayout cols_with_rows = deepgemm_cols({4});
  cols_with_rows.padded_rows = 8;
  expect_throw_with([&] { check_shape(cols_with_rows, 4, 4); }, "alignment and padded_rows apply to deepgemm_sm100 rows groups only");
  expect_throw_with([] { check_shape(deepgemm_rows({1, i64{1} << 40}, 1 << 20), i64{1} << 40, 4); }, "the padded matrix would exceed 2^40 rows");
  expect_throw_with([] { check_shape(deepgemm_rows({i64{1} << 40}, 1), i64{1} << 40, i64{1} << 40); }, "2^62");
  expect_throw_with([] { check_shape(deepgemm_cols({i64{1} << 40}), i64{1} << 40, i64{1} << 40); }, "2^62");
  // triton_kernels' rules.
  GroupedScaleLayout triton_cols = triton_rows({4});
  triton_cols.axis = GroupAxis::cols;
  expect_throw_with([&] { check_shape(triton_cols, 4, 4); }, "triton_kernels groups are rows (the ragged activations' slices) only");
  expect_throw_with([] { check_shape(triton_rows({5, 133}, 132), 133, 4); }, "tokens (132) must be at least R");
  expect_throw_with([] { check_shape(triton_rows({5, 133}, -1), 133, 4); }, "tokens must be in [0, 2^40]");
  GroupedScaleLayout torchao_with_tokens{GroupAxis::rows, {4}};
  torchao_with_tokens.tokens = 8;
  expect_throw_with([&] { check_shape(torchao_with_tokens, 4, 4); }, "tokens applies to triton_kernels rows groups only");
  expect_throw_with([] { check_shape(triton_rows({1, i64{1} << 40}), i64{1} << 40, 4); }, "the padded matrix would exceed 2^40 rows");
  // The messages name the family.
  expect_throw_with([] { check_shape(deepgemm_rows({5, 132}, 128), 133, 4); }, "grouped scales (deepgemm_sm100_rows, 2 groups) with R=133, C=4: the last group end");
}

}  // namespace
}  // namespace blockscale
