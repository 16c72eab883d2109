// SPDX-License-Identifier: Apache-2.0
// Grouped (ragged MoE) scale layouts (grouped_scales.h, docs/layouts.md "Grouped scales"): each
// group is the 128x4 layout of its own submatrix at the byte where torchao's grouped rearrangement
// puts it, so every map here is a group search plus scale_layout.h's tiled_128x4 map.
#include "blockscale/layout/grouped_scales.h"

#include <algorithm>
#include <charconv>
#include <stdexcept>
#include <string>

#include "blockscale/layout/scale_layout.h"

namespace blockscale {

namespace {

using i64 = std::int64_t;

constexpr i64 rup(i64 a, i64 b) { return (a + b - 1) / b * b; }
constexpr i64 kMaxExtent = i64{1} << 40;
constexpr i64 kMaxStorage = i64{1} << 62;
// The L1 atom: 128 rows by 4 blocks. Rows groups pad to its rows, cols groups to its blocks.
constexpr i64 kAtomRows = 128, kAtomCols = 4;

const char* axis_name(GroupAxis a) { return a == GroupAxis::rows ? "rows" : "cols"; }

[[noreturn]] void fail(const GroupedScaleLayout& l, i64 R, i64 C, const std::string& rule) {
  throw std::invalid_argument("grouped scales (" + std::string(axis_name(l.axis)) + ", " +
                              std::to_string(l.group_ends.size()) + " groups) with R=" + std::to_string(R) +
                              ", C=" + std::to_string(C) + ": " + rule);
}

// One group's part of the buffer: its submatrix (first row / column, extents) and where its L1
// image starts.
struct Group {
  i64 first = 0;      // first row (rows axis) or column (cols axis) of the group
  i64 R = 0, C = 0;   // the submatrix's extents
  i64 base = 0;       // byte offset of its L1 image
  i64 bytes = 0;      // the image's size
};

// The geometry of a validated layout: its non-empty groups in order and the buffer's size.
struct Geometry {
  std::vector<Group> groups;
  std::vector<i64> starts;  // group_starts
  i64 size = 0;
};

Geometry make_geometry(const GroupedScaleLayout& l, i64 R, i64 C) {
  if (l.axis != GroupAxis::rows && l.axis != GroupAxis::cols) throw std::invalid_argument("grouped scales: unknown GroupAxis");
  if (R < 0 || C < 0) fail(l, R, C, "extents must not be negative");
  if (R > kMaxExtent || C > kMaxExtent) fail(l, R, C, "extents above 2^40 are not supported");
  const bool rows = l.axis == GroupAxis::rows;
  const i64 extent = rows ? R : C;
  const auto G = static_cast<i64>(l.group_ends.size());
  if (G > kMaxExtent) fail(l, R, C, "more than 2^40 groups are not supported");
  if (G == 0 && extent != 0) fail(l, R, C, "no groups, but the grouped extent is not 0");
  if (G > 0 && l.group_ends.back() != extent)
    fail(l, R, C, std::string("the last group end must be the extent along the axis (") + (rows ? "R" : "C") + ")");
  // torchao writes a rows group's image (rup(size, 128) x rup(C, 4) bytes) into rup(size, 128) rows
  // of C bytes: only C % 4 == 0 fits.
  if (rows && C % kAtomCols != 0) fail(l, R, C, "rows groups need C % 4 == 0 (each group's 128x4 image is stored as rows of C bytes)");
  // The buffer's size, with its product checked against 2^62 before it is formed.
  const i64 long_side = rows ? R + kAtomRows * G : C + kAtomCols * G;
  const i64 short_side = rows ? C : rup(R, kAtomRows);
  if (short_side != 0 && long_side > kMaxStorage / short_side) fail(l, R, C, "the buffer would exceed 2^62 bytes");
  Geometry g;
  g.size = long_side * short_side;
  g.starts.reserve(static_cast<std::size_t>(G) + 1);
  g.starts.push_back(0);
  i64 begin = 0;
  for (i64 i = 0; i < G; ++i) {
    const i64 end = l.group_ends[static_cast<std::size_t>(i)];
    if (end < begin) {
      fail(l, R, C, "group ends must be non-decreasing and not negative (group " + std::to_string(i) + " ends at " +
                        std::to_string(end) + ", before " + std::to_string(begin) + ")");
    }
    const i64 size = end - begin, start = g.starts.back();
    g.starts.push_back(start + rup(size, rows ? kAtomRows : kAtomCols));
    if (size > 0) {
      Group grp;
      grp.first = begin;
      grp.R = rows ? size : R;
      grp.C = rows ? C : size;
      grp.base = rows ? start * C : start * rup(R, kAtomRows);
      grp.bytes = rup(grp.R, kAtomRows) * rup(grp.C, kAtomCols);
      g.groups.push_back(grp);
    }
    begin = end;
  }
  return g;
}

const ScaleLayout& l1() {
  static const ScaleLayout layout = ScaleLayout::of(ScaleLayoutKind::tiled_128x4);
  return layout;
}

// The group holding row / column `index` along the axis (a non-empty group always does).
const Group& group_of(const Geometry& g, i64 index) {
  const auto it = std::upper_bound(g.groups.begin(), g.groups.end(), index,
                                   [](i64 i, const Group& grp) { return i < grp.first; });
  return *(it - 1);
}

void check_span(const GroupedScaleLayout& l, i64 R, i64 C, const char* fn, const char* what, std::size_t got, i64 want) {
  if (static_cast<i64>(got) != want) {
    fail(l, R, C, std::string(fn) + ": " + what + " has " + std::to_string(got) + " bytes, expected " + std::to_string(want));
  }
}

// A cols group's submatrix, copied out of the row-major matrix (its columns are not contiguous).
std::vector<std::uint8_t> columns(std::span<const std::uint8_t> m, i64 C, const Group& grp) {
  std::vector<std::uint8_t> sub(static_cast<std::size_t>(grp.R * grp.C));
  for (i64 r = 0; r < grp.R; ++r) {
    std::copy_n(m.data() + r * C + grp.first, grp.C, sub.data() + r * grp.C);
  }
  return sub;
}

}  // namespace

void check_shape(const GroupedScaleLayout& layout, std::int64_t R, std::int64_t C) { (void)make_geometry(layout, R, C); }

std::vector<std::int64_t> group_starts(const GroupedScaleLayout& layout, std::int64_t R, std::int64_t C) {
  return make_geometry(layout, R, C).starts;
}

std::int64_t storage_size(const GroupedScaleLayout& layout, std::int64_t R, std::int64_t C) {
  return make_geometry(layout, R, C).size;
}

std::int64_t offset(const GroupedScaleLayout& layout, std::int64_t R, std::int64_t C, std::int64_t r, std::int64_t c) {
  const Geometry g = make_geometry(layout, R, C);
  if (r < 0 || r >= R || c < 0 || c >= C) {
    fail(layout, R, C, "offset: (" + std::to_string(r) + ", " + std::to_string(c) + ") is outside the matrix");
  }
  const bool rows = layout.axis == GroupAxis::rows;
  const Group& grp = group_of(g, rows ? r : c);
  return grp.base + offset(l1(), grp.R, grp.C, rows ? r - grp.first : r, rows ? c : c - grp.first);
}

std::optional<std::array<std::int64_t, 2>> logical_index(const GroupedScaleLayout& layout, std::int64_t R,
                                                         std::int64_t C, std::int64_t off) {
  const Geometry g = make_geometry(layout, R, C);
  if (off < 0 || off >= g.size) {
    fail(layout, R, C, "logical_index: offset " + std::to_string(off) + " is outside the buffer of " + std::to_string(g.size) + " bytes");
  }
  // The last group whose image starts at or before off; the bytes past its image are padding.
  const auto it = std::upper_bound(g.groups.begin(), g.groups.end(), off, [](i64 o, const Group& grp) { return o < grp.base; });
  if (it == g.groups.begin()) return std::nullopt;
  const Group& grp = *(it - 1);
  if (off >= grp.base + grp.bytes) return std::nullopt;
  const auto local = logical_index(l1(), grp.R, grp.C, off - grp.base);
  if (!local) return std::nullopt;
  const bool rows = layout.axis == GroupAxis::rows;
  return std::array<std::int64_t, 2>{(*local)[0] + (rows ? grp.first : 0), (*local)[1] + (rows ? 0 : grp.first)};
}

void to_layout(const GroupedScaleLayout& layout, std::int64_t R, std::int64_t C, std::span<const std::uint8_t> row_major,
               std::span<std::uint8_t> out, std::uint8_t pad) {
  const Geometry g = make_geometry(layout, R, C);
  check_span(layout, R, C, "to_layout", "the row-major input", row_major.size(), R * C);
  check_span(layout, R, C, "to_layout", "the output", out.size(), g.size);
  if (pad == 0xFF) fail(layout, R, C, "to_layout: the pad value is a NaN (0xFF is NaN in ue8m0 and e4m3); pad with 0");
  // The images lie end to end from byte 0 (each start is the previous one plus its image), and
  // each fills its own padding: only the upper bound's tail is left to fill here.
  const i64 images_end = g.groups.empty() ? 0 : g.groups.back().base + g.groups.back().bytes;
  std::fill(out.begin() + images_end, out.end(), pad);
  for (const Group& grp : g.groups) {
    const auto image = out.subspan(static_cast<std::size_t>(grp.base), static_cast<std::size_t>(grp.bytes));
    if (layout.axis == GroupAxis::rows) {
      to_layout(l1(), 1, grp.R, grp.C, row_major.subspan(static_cast<std::size_t>(grp.first * C), static_cast<std::size_t>(grp.R * C)), image, pad);
    } else {
      const std::vector<std::uint8_t> sub = columns(row_major, C, grp);
      to_layout(l1(), 1, grp.R, grp.C, sub, image, pad);
    }
  }
}

void from_layout(const GroupedScaleLayout& layout, std::int64_t R, std::int64_t C, std::span<const std::uint8_t> in,
                 std::span<std::uint8_t> row_major) {
  const Geometry g = make_geometry(layout, R, C);
  check_span(layout, R, C, "from_layout", "the stored input", in.size(), g.size);
  check_span(layout, R, C, "from_layout", "the row-major output", row_major.size(), R * C);
  for (const Group& grp : g.groups) {
    const auto image = in.subspan(static_cast<std::size_t>(grp.base), static_cast<std::size_t>(grp.bytes));
    if (layout.axis == GroupAxis::rows) {
      from_layout(l1(), 1, grp.R, grp.C, image, row_major.subspan(static_cast<std::size_t>(grp.first * C), static_cast<std::size_t>(grp.R * C)));
    } else {
      std::vector<std::uint8_t> sub(static_cast<std::size_t>(grp.R * grp.C));
      from_layout(l1(), 1, grp.R, grp.C, image, sub);
      for (i64 r = 0; r < grp.R; ++r) std::copy_n(sub.data() + r * grp.C, grp.C, row_major.data() + r * C + grp.first);
    }
  }
}

std::optional<std::int64_t> find_padding_mismatch(const GroupedScaleLayout& layout, std::int64_t R, std::int64_t C,
                                                  std::span<const std::uint8_t> in, std::uint8_t pad) {
  const Geometry g = make_geometry(layout, R, C);
  check_span(layout, R, C, "find_padding_mismatch", "the stored input", in.size(), g.size);
  i64 next = 0;  // the first byte not yet checked
  const auto gap = [&](i64 end) -> std::optional<i64> {
    for (i64 off = next; off < end; ++off) {
      if (in[static_cast<std::size_t>(off)] != pad) return off;
    }
    return std::nullopt;
  };
  for (const Group& grp : g.groups) {
    if (const auto bad = gap(grp.base)) return bad;
    const auto image = in.subspan(static_cast<std::size_t>(grp.base), static_cast<std::size_t>(grp.bytes));
    if (const auto bad = find_padding_mismatch(l1(), 1, grp.R, grp.C, image, pad)) return grp.base + *bad;
    next = grp.base + grp.bytes;
  }
  return gap(g.size);
}

std::string to_string(const GroupedScaleLayout& layout) {
  if (layout.axis != GroupAxis::rows && layout.axis != GroupAxis::cols)
    throw std::invalid_argument("grouped scales: unknown GroupAxis");
  std::string s = axis_name(layout.axis);
  s += ':';
  for (std::size_t g = 0; g < layout.group_ends.size(); ++g) {
    if (g) s += ',';
    s += std::to_string(layout.group_ends[g]);
  }
  return s;
}

GroupedScaleLayout grouped_scale_layout_from_string(std::string_view text) {
  auto bad = [&](const std::string& why) {
    return std::invalid_argument("grouped scale layout '" + std::string(text) + "': " + why);
  };
  const std::size_t colon = text.find(':');
  if (colon == std::string_view::npos) throw bad("expected <rows|cols>:<end>,<end>,...");
  GroupedScaleLayout l;
  const std::string_view axis = text.substr(0, colon);
  if (axis == "rows") l.axis = GroupAxis::rows;
  else if (axis == "cols") l.axis = GroupAxis::cols;
  else throw bad("the axis must be 'rows' or 'cols', not '" + std::string(axis) + "'");
  std::string_view rest = text.substr(colon + 1);
  while (!rest.empty()) {
    const std::size_t comma = rest.find(',');
    const std::string_view item = rest.substr(0, comma);
    i64 v = 0;
    const auto [p, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
    if (item.empty() || ec != std::errc() || p != item.data() + item.size())
      throw bad("group end '" + std::string(item) + "' is not a decimal integer");
    if (v < 0 || v > kMaxExtent) throw bad("group end " + std::to_string(v) + " is outside [0, 2^40]");
    if (!l.group_ends.empty() && v < l.group_ends.back()) throw bad("group ends must be non-decreasing");
    l.group_ends.push_back(v);
    if (comma == std::string_view::npos) break;
    rest = rest.substr(comma + 1);
    if (rest.empty()) throw bad("trailing ','");
  }
  return l;
}

}  // namespace blockscale
