// SPDX-License-Identifier: Apache-2.0
// Grouped (ragged MoE) scale layouts: the maps of grouped_scales.h against an oracle that follows
// torchao's reference rearrangements step by step (torch_to_blocked_2d_M_groups and
// torch_to_blocked_2d_K_groups: a zeroed buffer of the upper-bound size, each group's to_blocked
// image written where those loops write it), with to_blocked built from pad + reshape + permute of
// the logical index matrix (index_tensor.h) rather than from the library's 128x4 closed form;
// hand-checked offsets, whole-matrix round trips, padding checks and every error.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "blockscale/layout.h"
#include "layout/index_tensor.h"

namespace blockscale {
namespace {

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

struct Case {
  GroupAxis axis;
  i64 R, C;
  std::vector<i64> ends;
};

std::string name(const Case& k) {
  std::string s = std::string(k.axis == GroupAxis::rows ? "rows" : "cols") + " R=" + std::to_string(k.R) +
                  " C=" + std::to_string(k.C) + " ends={";
  for (const i64 e : k.ends) s += std::to_string(e) + ",";
  return s + "}";
}

std::vector<Case> cases() {
  return {
      // M groups: one group, empty groups anywhere, groups of 1, exact multiples of 128, R = 0.
      {GroupAxis::rows, 5, 4, {5}},
      {GroupAxis::rows, 389, 4, {0, 5, 133, 133, 389}},
      {GroupAxis::rows, 3, 8, {1, 2, 3}},
      {GroupAxis::rows, 256, 20, {128, 256}},
      {GroupAxis::rows, 300, 12, {300}},
      {GroupAxis::rows, 257, 8, {129, 129, 257, 257}},
      {GroupAxis::rows, 0, 4, {0, 0}},
      // K groups: groups of every size mod 4, empty ones, rows below and above 128.
      {GroupAxis::cols, 3, 6, {2, 6}},
      {GroupAxis::cols, 130, 13, {0, 1, 5, 5, 12, 13}},
      {GroupAxis::cols, 256, 8, {4, 8}},
      {GroupAxis::cols, 1, 13, {13}},
      {GroupAxis::cols, 200, 7, {3, 3, 7}},
      {GroupAxis::cols, 0, 5, {2, 5}},
  };
}

TEST(GroupedScales, MapsFollowTorchaosRearrangement) {
  for (const Case& k : cases()) {
    SCOPED_TRACE(name(k));
    const GroupedScaleLayout l{k.axis, k.ends};
    const OracleImage o = k.axis == GroupAxis::rows ? oracle_m_groups(k.R, k.C, k.ends) : oracle_k_groups(k.R, k.C, k.ends);
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
    const GroupedScaleLayout l{k.axis, k.ends};
    const OracleImage o = k.axis == GroupAxis::rows ? oracle_m_groups(k.R, k.C, k.ends) : oracle_k_groups(k.R, k.C, k.ends);
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
      // A byte of padding that does not hold pad is found at its offset: the first padding byte,
      // and the last byte of the buffer (the upper bound's tail is always padding).
      for (std::size_t off = 0; off < image.size(); ++off) {
        if (o.buffer[off] >= 0) continue;
        std::vector<std::uint8_t> poked = image;
        poked[off] = static_cast<std::uint8_t>(pad + 1);
        EXPECT_EQ(find_padding_mismatch(l, k.R, k.C, poked, pad), static_cast<i64>(off));
        break;
      }
      if (image.empty()) continue;  // cols groups of a matrix without rows: no storage at all
      ASSERT_LT(o.buffer.back(), 0);
      std::vector<std::uint8_t> poked = image;
      poked.back() = static_cast<std::uint8_t>(pad + 1);
      EXPECT_EQ(find_padding_mismatch(l, k.R, k.C, poked, pad), static_cast<i64>(image.size()) - 1);
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

void expect_rule(const std::function<void()>& f, const std::string& rule) {
  try {
    f();
    ADD_FAILURE() << "no error; expected: " << rule;
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(rule), std::string::npos) << e.what();
  }
}

TEST(GroupedScales, TextForm) {
  for (const Case& k : cases()) {
    const GroupedScaleLayout l{k.axis, k.ends};
    const GroupedScaleLayout back = grouped_scale_layout_from_string(to_string(l));
    EXPECT_EQ(back.axis, l.axis) << name(k);
    EXPECT_EQ(back.group_ends, l.group_ends) << name(k);
  }
  EXPECT_EQ(to_string(GroupedScaleLayout{GroupAxis::rows, {0, 5, 133, 133, 300}}), "rows:0,5,133,133,300");
  EXPECT_EQ(to_string(GroupedScaleLayout{GroupAxis::cols, {}}), "cols:");
  EXPECT_TRUE(grouped_scale_layout_from_string("rows:").group_ends.empty());
  expect_rule([] { (void)grouped_scale_layout_from_string("rows"); }, "expected <rows|cols>:<end>,<end>,...");
  expect_rule([] { (void)grouped_scale_layout_from_string("m:3"); }, "the axis must be 'rows' or 'cols', not 'm'");
  expect_rule([] { (void)grouped_scale_layout_from_string("rows:3,x"); }, "group end 'x' is not a decimal integer");
  expect_rule([] { (void)grouped_scale_layout_from_string("rows:3,,4"); }, "group end '' is not a decimal integer");
  expect_rule([] { (void)grouped_scale_layout_from_string("rows:+3"); }, "group end '+3' is not a decimal integer");
  expect_rule([] { (void)grouped_scale_layout_from_string("cols:-1,4"); }, "outside [0, 2^40]");
  expect_rule([] { (void)grouped_scale_layout_from_string("cols:1099511627777"); }, "outside [0, 2^40]");
  expect_rule([] { (void)grouped_scale_layout_from_string("cols:5,4"); }, "non-decreasing");
  expect_rule([] { (void)grouped_scale_layout_from_string("cols:4,"); }, "trailing ','");
}

TEST(GroupedScales, ErrorsNameTheRule) {
  const GroupedScaleLayout ok{GroupAxis::rows, {5, 133}};
  expect_rule([] { check_shape(GroupedScaleLayout{GroupAxis::rows, {6, 5, 133}}, 133, 4); }, "non-decreasing");
  expect_rule([] { check_shape(GroupedScaleLayout{GroupAxis::cols, {-1, 4}}, 2, 4); }, "not negative");
  expect_rule([] { check_shape(GroupedScaleLayout{GroupAxis::rows, {5, 132}}, 133, 4); }, "last group end");
  expect_rule([] { check_shape(GroupedScaleLayout{GroupAxis::cols, {4}}, 2, 5); }, "last group end");
  expect_rule([] { check_shape(GroupedScaleLayout{GroupAxis::rows, {}}, 3, 4); }, "no groups");
  expect_rule([] { check_shape(GroupedScaleLayout{GroupAxis::rows, {3}}, 3, 6); }, "C % 4 == 0");
  expect_rule([] { check_shape(GroupedScaleLayout{GroupAxis::rows, {3}}, 3, -4); }, "not be negative");
  expect_rule([] { check_shape(GroupedScaleLayout{GroupAxis::cols, {i64{1} << 41}}, 1, i64{1} << 41); }, "2^40");
  expect_rule([] { check_shape(GroupedScaleLayout{GroupAxis::cols, {i64{1} << 40}}, i64{1} << 40, i64{1} << 40); }, "2^62");
  expect_rule([&] { (void)offset(ok, 133, 4, 133, 0); }, "outside the matrix");
  expect_rule([&] { (void)offset(ok, 133, 4, 0, -1); }, "outside the matrix");
  expect_rule([&] { (void)logical_index(ok, 133, 4, storage_size(ok, 133, 4)); }, "outside the buffer");
  std::vector<std::uint8_t> m(133 * 4), image(static_cast<std::size_t>(storage_size(ok, 133, 4)));
  expect_rule([&] { to_layout(ok, 133, 4, std::span(m).first(m.size() - 1), image); }, "the row-major input has");
  expect_rule([&] { to_layout(ok, 133, 4, m, std::span(image).first(image.size() - 1)); }, "the output has");
  expect_rule([&] { to_layout(ok, 133, 4, m, image, 0xFF); }, "NaN");
  expect_rule([&] { from_layout(ok, 133, 4, std::span<const std::uint8_t>(image).first(10), m); }, "the stored input has");
  expect_rule([&] { from_layout(ok, 133, 4, image, std::span(m).first(1)); }, "the row-major output has");
  expect_rule([&] { (void)find_padding_mismatch(ok, 133, 4, std::span<const std::uint8_t>(image).first(1)); }, "the stored input has");
}

}  // namespace
}  // namespace blockscale
