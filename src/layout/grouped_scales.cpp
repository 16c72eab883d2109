// SPDX-License-Identifier: Apache-2.0
// Grouped (ragged MoE) scale layouts (grouped_scales.h, docs/layouts.md "Grouped scales"). Two
// placements cover every family:
//   * images (torchao rows and cols, DeepGEMM cols): each group is a single-matrix layout of its own
//     submatrix (tiled_128x4 for torchao, deepgemm_sm100_packed for DeepGEMM) at the byte where the
//     family's rearrangement puts it, so a map is a group search plus scale_layout.h's map;
//   * padded rows (DeepGEMM and triton_kernels rows): the groups are rows of one padded matrix, each
//     from an aligned row, and that matrix is one single-matrix layout (deepgemm_sm100_packed,
//     tiled_128x4_k8), so a map is a row renumbering plus that layout's map.
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
constexpr i64 kMaxAlignment = i64{1} << 20;
// The L1 atom: 128 rows by 4 blocks. torchao's rows groups pad to its rows, cols groups to its blocks.
constexpr i64 kAtomRows = 128, kAtomCols = 4;
// DeepGEMM packs 4 blocks into one int32 word: its cols groups pad to 4 blocks.
constexpr i64 kPackedBlocks = 4;
// triton_kernels' BlackwellActMXScaleLayoutTransformation.ALIGN_M: slices pad to 128 rows.
constexpr i64 kTritonSliceRows = 128;

bool deepgemm(const GroupedScaleLayout& l) { return l.family == GroupedScaleFamily::deepgemm_sm100; }
bool triton(const GroupedScaleLayout& l) { return l.family == GroupedScaleFamily::triton_kernels; }
bool deepgemm_rows(const GroupedScaleLayout& l) { return deepgemm(l) && l.axis == GroupAxis::rows; }
bool padded_rows_placement(const GroupedScaleLayout& l) { return deepgemm_rows(l) || triton(l); }

// The text form's head: the family and the axis.
const char* head(const GroupedScaleLayout& l) {
  const bool rows = l.axis == GroupAxis::rows;
  if (deepgemm(l)) return rows ? "deepgemm_sm100_rows" : "deepgemm_sm100_cols";
  if (triton(l)) return rows ? "triton_kernels_rows" : "triton_kernels_cols";
  return rows ? "rows" : "cols";
}

[[noreturn]] void fail(const GroupedScaleLayout& l, i64 R, i64 C, const std::string& rule) {
  throw std::invalid_argument("grouped scales (" + std::string(head(l)) + ", " + std::to_string(l.group_ends.size()) +
                              " groups) with R=" + std::to_string(R) + ", C=" + std::to_string(C) + ": " + rule);
}

const ScaleLayout& l1() {
  static const ScaleLayout layout = ScaleLayout::of(ScaleLayoutKind::tiled_128x4);
  return layout;
}
const ScaleLayout& l9() {
  static const ScaleLayout layout = ScaleLayout::of(ScaleLayoutKind::deepgemm_sm100_packed);
  return layout;
}
const ScaleLayout& l1b() {
  static const ScaleLayout layout = ScaleLayout::of(ScaleLayoutKind::tiled_128x4_k8);
  return layout;
}
// The single-matrix layout of each group's image (images placement) or of the padded matrix.
const ScaleLayout& base_layout(const GroupedScaleLayout& l) { return deepgemm(l) ? l9() : triton(l) ? l1b() : l1(); }

// RaggedTensorMetadata.n_blocks(n_slices, n_total_rows, block_size): the most blocks of
// block_size rows that n_slices slices of n_total_rows rows in all can need.
i64 triton_n_blocks(i64 n_slices, i64 n_total_rows, i64 block_size) {
  if (n_total_rows <= n_slices) return n_total_rows;
  return n_slices - 1 + (n_total_rows - n_slices + 1 + block_size - 1) / block_size;
}

// One non-empty group: its submatrix (first row / column, extents), where it starts along the
// axis (a row of the padded matrix or a block column), and for the images placement where its
// image lies in the buffer.
struct Group {
  i64 first = 0;      // first row (rows axis) or column (cols axis) of the group
  i64 R = 0, C = 0;   // the submatrix's extents
  i64 start = 0;      // group_starts(g)
  i64 base = 0;       // byte offset of its image
  i64 bytes = 0;      // the image's size
};

// The geometry of a validated layout: its non-empty groups in order and the buffer's size.
struct Geometry {
  std::vector<Group> groups;
  std::vector<i64> starts;  // group_starts
  i64 padded_rows = 0;      // padded rows placement: Mp
  i64 size = 0;
};

// The bytes of R' x C', checked against 2^62 before the product is formed.
i64 checked_product(const GroupedScaleLayout& l, i64 R, i64 C, i64 a, i64 b) {
  if (a != 0 && b > kMaxStorage / a) fail(l, R, C, "the buffer would exceed 2^62 bytes");
  return a * b;
}

Geometry make_geometry(const GroupedScaleLayout& l, i64 R, i64 C) {
  if (l.axis != GroupAxis::rows && l.axis != GroupAxis::cols) throw std::invalid_argument("grouped scales: unknown GroupAxis");
  if (l.family != GroupedScaleFamily::torchao && l.family != GroupedScaleFamily::deepgemm_sm100 &&
      l.family != GroupedScaleFamily::triton_kernels)
    throw std::invalid_argument("grouped scales: unknown GroupedScaleFamily");
  if (R < 0 || C < 0) fail(l, R, C, "extents must not be negative");
  if (R > kMaxExtent || C > kMaxExtent) fail(l, R, C, "extents above 2^40 are not supported");
  const bool rows = l.axis == GroupAxis::rows;
  const bool padded = padded_rows_placement(l);
  if (triton(l) && !rows) fail(l, R, C, "triton_kernels groups are rows (the ragged activations' slices) only");
  if (!deepgemm_rows(l) && (l.alignment != GroupedScaleLayout::kDeepGemmMkAlignment || l.padded_rows != 0))
    fail(l, R, C, "alignment and padded_rows apply to deepgemm_sm100 rows groups only");
  if (!triton(l) && l.tokens != 0) fail(l, R, C, "tokens applies to triton_kernels rows groups only");
  if (deepgemm_rows(l) && (l.alignment < 1 || l.alignment > kMaxAlignment))
    fail(l, R, C, "the alignment must be in [1, 2^20] rows (DeepGEMM's get_mk_alignment_for_contiguous_layout())");
  if (l.padded_rows < 0) fail(l, R, C, "padded_rows must not be negative");
  if (l.tokens < 0 || l.tokens > kMaxExtent) fail(l, R, C, "tokens must be in [0, 2^40]");
  if (triton(l) && l.tokens != 0 && l.tokens < R)
    fail(l, R, C, "tokens (" + std::to_string(l.tokens) + ") must be at least R: the slices are the first R rows of the tokens");
  const i64 extent = rows ? R : C;
  const auto G = static_cast<i64>(l.group_ends.size());
  if (G > kMaxExtent) fail(l, R, C, "more than 2^40 groups are not supported");
  if (G == 0 && extent != 0) fail(l, R, C, "no groups, but the grouped extent is not 0");
  if (G > 0 && l.group_ends.back() != extent)
    fail(l, R, C, std::string("the last group end must be the extent along the axis (") + (rows ? "R" : "C") + ")");
  // torchao writes a rows group's image (rup(size, 128) x rup(C, 4) bytes) into rup(size, 128) rows
  // of C bytes: only C % 4 == 0 fits.
  if (l.family == GroupedScaleFamily::torchao && rows && C % kAtomCols != 0)
    fail(l, R, C, "rows groups need C % 4 == 0 (each group's 128x4 image is stored as rows of C bytes)");
  // DeepGEMM's k-grouped packing (get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor) asserts
  // mn % 4 == 0: the groups' images then follow each other with no TMA padding.
  if (deepgemm(l) && !rows && R % 4 != 0)
    fail(l, R, C, "deepgemm_sm100 cols groups need R % 4 == 0 (DeepGEMM's k-grouped packing asserts mn % 4 == 0)");
  const i64 step = triton(l)     ? kTritonSliceRows
                   : padded      ? l.alignment
                   : rows        ? kAtomRows
                   : deepgemm(l) ? kPackedBlocks
                                 : kAtomCols;
  Geometry g;
  g.starts.reserve(static_cast<std::size_t>(G) + 1);
  g.starts.push_back(0);
  i64 begin = 0, last_end = 0;  // last_end: where the last non-empty group's rows end (padded rows)
  for (i64 i = 0; i < G; ++i) {
    const i64 end = l.group_ends[static_cast<std::size_t>(i)];
    if (end < begin) {
      fail(l, R, C, "group ends must be non-decreasing and not negative (group " + std::to_string(i) + " ends at " +
                        std::to_string(end) + ", before " + std::to_string(begin) + ")");
    }
    // Starts stay below 2^40 (R, C) + 2^40 (groups) * 2^20 (alignment): no overflow.
    const i64 size = end - begin, start = g.starts.back();
    g.starts.push_back(start + rup(size, step));
    if (size > 0) {
      Group grp;
      grp.first = begin;
      grp.R = rows ? size : R;
      grp.C = rows ? C : size;
      grp.start = start;
      g.groups.push_back(grp);
      last_end = start + size;
    }
    begin = end;
  }
  if (triton(l)) {
    // pad_segments_triton's scratchpad: 128 rows per block of the worst case. It holds every
    // slice (the worst case is one slice taking all the rows the others leave), so start(G) <= Mp.
    g.padded_rows = kTritonSliceRows * triton_n_blocks(G, l.tokens != 0 ? l.tokens : R, kTritonSliceRows);
    if (g.padded_rows > kMaxExtent) fail(l, R, C, "the padded matrix would exceed 2^40 rows");
    g.starts.back() = g.padded_rows;
    g.size = checked_product(l, R, C, g.padded_rows, rup(C, 8));
    return g;
  }
  if (padded) {
    if (l.padded_rows != 0 && l.padded_rows < last_end) {
      fail(l, R, C, "padded_rows (" + std::to_string(l.padded_rows) + ") must hold every group: the last ends at row " +
                        std::to_string(last_end));
    }
    g.padded_rows = l.padded_rows != 0 ? l.padded_rows : g.starts.back();
    if (g.padded_rows > kMaxExtent) fail(l, R, C, "the padded matrix would exceed 2^40 rows");
    g.starts.back() = g.padded_rows;
    g.size = checked_product(l, R, C, rup(g.padded_rows, 4), 4 * ((C + 3) / 4));
    return g;
  }
  // The images placement: torchao's upper-bound buffer, or DeepGEMM's images end to end.
  if (deepgemm(l)) {
    g.size = checked_product(l, R, C, R, g.starts.back());
  } else {
    const i64 long_side = rows ? R + kAtomRows * G : C + kAtomCols * G;
    const i64 short_side = rows ? C : rup(R, kAtomRows);
    g.size = checked_product(l, R, C, long_side, short_side);
  }
  for (Group& grp : g.groups) {
    grp.base = deepgemm(l) ? grp.start * R : rows ? grp.start * C : grp.start * rup(R, kAtomRows);
    grp.bytes = storage_size(base_layout(l), grp.R, grp.C);
  }
  return g;
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

// Padded rows placement: the logical rows written into (or read out of) the padded Mp x C matrix.
std::vector<std::uint8_t> padded_matrix(const Geometry& g, i64 C, std::span<const std::uint8_t> m, std::uint8_t pad) {
  std::vector<std::uint8_t> p(static_cast<std::size_t>(g.padded_rows * C), pad);
  for (const Group& grp : g.groups) std::copy_n(m.data() + grp.first * C, grp.R * C, p.data() + grp.start * C);
  return p;
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
  if (padded_rows_placement(layout)) return offset(base_layout(layout), g.padded_rows, C, grp.start + r - grp.first, c);
  return grp.base + offset(base_layout(layout), grp.R, grp.C, rows ? r - grp.first : r, rows ? c : c - grp.first);
}

std::optional<std::array<std::int64_t, 2>> logical_index(const GroupedScaleLayout& layout, std::int64_t R,
                                                         std::int64_t C, std::int64_t off) {
  const Geometry g = make_geometry(layout, R, C);
  if (off < 0 || off >= g.size) {
    fail(layout, R, C, "logical_index: offset " + std::to_string(off) + " is outside the buffer of " + std::to_string(g.size) + " bytes");
  }
  if (padded_rows_placement(layout)) {
    // The padded matrix's (row, c), then the group whose rows start at or before that row; rows
    // past its size are the gap to the next aligned start.
    const auto padded = logical_index(base_layout(layout), g.padded_rows, C, off);
    if (!padded) return std::nullopt;
    const i64 row = (*padded)[0];
    const auto it = std::upper_bound(g.groups.begin(), g.groups.end(), row, [](i64 r, const Group& grp) { return r < grp.start; });
    if (it == g.groups.begin()) return std::nullopt;
    const Group& grp = *(it - 1);
    if (row >= grp.start + grp.R) return std::nullopt;
    return std::array<std::int64_t, 2>{grp.first + row - grp.start, (*padded)[1]};
  }
  // The last group whose image starts at or before off; the bytes past its image are padding.
  const auto it = std::upper_bound(g.groups.begin(), g.groups.end(), off, [](i64 o, const Group& grp) { return o < grp.base; });
  if (it == g.groups.begin()) return std::nullopt;
  const Group& grp = *(it - 1);
  if (off >= grp.base + grp.bytes) return std::nullopt;
  const auto local = logical_index(base_layout(layout), grp.R, grp.C, off - grp.base);
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
  if (padded_rows_placement(layout)) {
    to_layout(base_layout(layout), 1, g.padded_rows, C, padded_matrix(g, C, row_major, pad), out, pad);
    return;
  }
  // The images lie end to end from byte 0 (each start is the previous one plus its image), and
  // each fills its own padding: only the upper bound's tail is left to fill here.
  const i64 images_end = g.groups.empty() ? 0 : g.groups.back().base + g.groups.back().bytes;
  std::fill(out.begin() + images_end, out.end(), pad);
  for (const Group& grp : g.groups) {
    const auto image = out.subspan(static_cast<std::size_t>(grp.base), static_cast<std::size_t>(grp.bytes));
    if (layout.axis == GroupAxis::rows) {
      to_layout(base_layout(layout), 1, grp.R, grp.C,
                row_major.subspan(static_cast<std::size_t>(grp.first * C), static_cast<std::size_t>(grp.R * C)), image, pad);
    } else {
      const std::vector<std::uint8_t> sub = columns(row_major, C, grp);
      to_layout(base_layout(layout), 1, grp.R, grp.C, sub, image, pad);
    }
  }
}

void from_layout(const GroupedScaleLayout& layout, std::int64_t R, std::int64_t C, std::span<const std::uint8_t> in,
                 std::span<std::uint8_t> row_major) {
  const Geometry g = make_geometry(layout, R, C);
  check_span(layout, R, C, "from_layout", "the stored input", in.size(), g.size);
  check_span(layout, R, C, "from_layout", "the row-major output", row_major.size(), R * C);
  if (padded_rows_placement(layout)) {
    std::vector<std::uint8_t> padded(static_cast<std::size_t>(g.padded_rows * C));
    from_layout(base_layout(layout), 1, g.padded_rows, C, in, padded);
    for (const Group& grp : g.groups) std::copy_n(padded.data() + grp.start * C, grp.R * C, row_major.data() + grp.first * C);
    return;
  }
  for (const Group& grp : g.groups) {
    const auto image = in.subspan(static_cast<std::size_t>(grp.base), static_cast<std::size_t>(grp.bytes));
    if (layout.axis == GroupAxis::rows) {
      from_layout(base_layout(layout), 1, grp.R, grp.C, image,
                  row_major.subspan(static_cast<std::size_t>(grp.first * C), static_cast<std::size_t>(grp.R * C)));
    } else {
      std::vector<std::uint8_t> sub(static_cast<std::size_t>(grp.R * grp.C));
      from_layout(base_layout(layout), 1, grp.R, grp.C, image, sub);
      for (i64 r = 0; r < grp.R; ++r) std::copy_n(sub.data() + r * grp.C, grp.C, row_major.data() + r * C + grp.first);
    }
  }
}

std::optional<std::int64_t> find_padding_mismatch(const GroupedScaleLayout& layout, std::int64_t R, std::int64_t C,
                                                  std::span<const std::uint8_t> in, std::uint8_t pad) {
  const Geometry g = make_geometry(layout, R, C);
  check_span(layout, R, C, "find_padding_mismatch", "the stored input", in.size(), g.size);
  if (padded_rows_placement(layout)) {
    // The gap rows are padding of the grouped layout but entries of the packed layout: check them
    // in the padded matrix, and the packed layout's own padding with its own check; the first
    // offset of either is the first mismatch.
    std::vector<std::uint8_t> padded(static_cast<std::size_t>(g.padded_rows * C));
    from_layout(base_layout(layout), 1, g.padded_rows, C, in, padded);
    std::optional<i64> first = find_padding_mismatch(base_layout(layout), 1, g.padded_rows, C, in, pad);
    std::size_t group = 0;  // the first group whose rows end after row r
    for (i64 r = 0; r < g.padded_rows; ++r) {
      while (group < g.groups.size() && r >= g.groups[group].start + g.groups[group].R) ++group;
      if (group < g.groups.size() && r >= g.groups[group].start) continue;  // a group's row
      for (i64 c = 0; c < C; ++c) {
        if (padded[static_cast<std::size_t>(r * C + c)] == pad) continue;
        const i64 off = offset(base_layout(layout), g.padded_rows, C, r, c);
        if (!first || off < *first) first = off;
      }
    }
    return first;
  }
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
    if (const auto bad = find_padding_mismatch(base_layout(layout), 1, grp.R, grp.C, image, pad)) return grp.base + *bad;
    next = grp.base + grp.bytes;
  }
  return gap(g.size);
}

GroupedScaleLayout deepgemm_m_groups_from_psum(std::span<const std::int64_t> psum, std::int64_t alignment, std::int64_t m) {
  GroupedScaleLayout l{GroupAxis::rows, {}, GroupedScaleFamily::deepgemm_sm100, alignment, m};
  if (alignment < 1 || alignment > kMaxAlignment)
    throw std::invalid_argument("DeepGEMM psum layout: the alignment must be in [1, 2^20], got " + std::to_string(alignment));
  if (m < 0 || m > kMaxExtent) throw std::invalid_argument("DeepGEMM psum layout: m must be in [0, 2^40], got " + std::to_string(m));
  i64 previous_end = 0, rows = 0;
  for (std::size_t g = 0; g < psum.size(); ++g) {
    const i64 start = rup(previous_end, alignment);
    if (psum[g] < start || psum[g] > kMaxExtent) {
      throw std::invalid_argument("DeepGEMM psum layout: group " + std::to_string(g) + " ends at row " + std::to_string(psum[g]) +
                                  ", outside [" + std::to_string(start) + ", 2^40] (it starts at align(" +
                                  std::to_string(previous_end) + ", " + std::to_string(alignment) + "))");
    }
    rows += psum[g] - start;
    l.group_ends.push_back(rows);
    previous_end = psum[g];
  }
  return l;
}

std::vector<std::int64_t> deepgemm_psum(const GroupedScaleLayout& layout, std::int64_t R, std::int64_t C) {
  if (!deepgemm_rows(layout)) fail(layout, R, C, "deepgemm_psum: the layout is not deepgemm_sm100 rows groups");
  const std::vector<i64> starts = make_geometry(layout, R, C).starts;
  std::vector<std::int64_t> psum;
  i64 begin = 0;
  for (std::size_t g = 0; g < layout.group_ends.size(); ++g) {
    psum.push_back(starts[g] + layout.group_ends[g] - begin);
    begin = layout.group_ends[g];
  }
  return psum;
}

GroupedScaleLayout deepgemm_k_groups_from_ks(std::span<const std::int64_t> ks, std::int64_t gran_k) {
  if (gran_k != 32 && gran_k != 128)
    throw std::invalid_argument("DeepGEMM k groups: gran_k must be 32 or 128 (DeepGEMM's k-grouped recipes), got " + std::to_string(gran_k));
  GroupedScaleLayout l{GroupAxis::cols, {}, GroupedScaleFamily::deepgemm_sm100};
  i64 blocks = 0;
  for (std::size_t g = 0; g < ks.size(); ++g) {
    if (ks[g] < 0 || ks[g] > kMaxExtent)
      throw std::invalid_argument("DeepGEMM k groups: group " + std::to_string(g) + " has K = " + std::to_string(ks[g]) + ", outside [0, 2^40]");
    blocks += (ks[g] + gran_k - 1) / gran_k;
    l.group_ends.push_back(blocks);
  }
  return l;
}

std::string to_string(const GroupedScaleLayout& layout) {
  if (layout.axis != GroupAxis::rows && layout.axis != GroupAxis::cols)
    throw std::invalid_argument("grouped scales: unknown GroupAxis");
  if (layout.family != GroupedScaleFamily::torchao && layout.family != GroupedScaleFamily::deepgemm_sm100 &&
      layout.family != GroupedScaleFamily::triton_kernels)
    throw std::invalid_argument("grouped scales: unknown GroupedScaleFamily");
  std::string s = head(layout);
  s += ':';
  if (deepgemm_rows(layout)) {
    s += "alignment=" + std::to_string(layout.alignment);
    if (layout.padded_rows != 0) s += ",padded_rows=" + std::to_string(layout.padded_rows);
    s += ':';
  } else if (layout.tokens != 0) {
    s += "tokens=" + std::to_string(layout.tokens) + ':';
  }
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
  const auto decimal = [&](std::string_view item, const std::string& what) {
    i64 v = 0;
    const auto [p, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
    if (item.empty() || ec != std::errc() || p != item.data() + item.size())
      throw bad(what + " '" + std::string(item) + "' is not a decimal integer");
    return v;
  };
  const std::size_t colon = text.find(':');
  if (colon == std::string_view::npos)
    throw bad("expected <rows|cols|deepgemm_sm100_rows|deepgemm_sm100_cols|triton_kernels_rows>:<end>,<end>,...");
  GroupedScaleLayout l;
  const std::string_view axis = text.substr(0, colon);
  if (axis == "rows" || axis == "deepgemm_sm100_rows" || axis == "triton_kernels_rows") l.axis = GroupAxis::rows;
  else if (axis == "cols" || axis == "deepgemm_sm100_cols") l.axis = GroupAxis::cols;
  else
    throw bad("the axis must be 'rows' or 'cols' (torchao), 'deepgemm_sm100_rows' or 'deepgemm_sm100_cols', or "
              "'triton_kernels_rows', not '" + std::string(axis) + "'");
  if (axis.starts_with("deepgemm_sm100_")) l.family = GroupedScaleFamily::deepgemm_sm100;
  if (axis.starts_with("triton_kernels_")) l.family = GroupedScaleFamily::triton_kernels;
  std::string_view rest = text.substr(colon + 1);
  if (const std::size_t params_end = rest.find(':'); params_end != std::string_view::npos) {
    if (!padded_rows_placement(l))
      throw bad("parameters apply to deepgemm_sm100_rows (alignment=, padded_rows=) and triton_kernels_rows (tokens=) only");
    std::string_view params = rest.substr(0, params_end);
    rest = rest.substr(params_end + 1);
    bool seen_alignment = false, seen_padded_rows = false, seen_tokens = false;
    while (true) {
      const std::size_t comma = params.find(',');
      const std::string_view item = params.substr(0, comma);
      const std::size_t eq = item.find('=');
      if (eq == std::string_view::npos) throw bad("parameter '" + std::string(item) + "' is not <name>=<value>");
      const std::string_view key = item.substr(0, eq);
      const i64 v = decimal(item.substr(eq + 1), std::string(key));
      if (triton(l)) {
        if (key != "tokens") throw bad("unknown parameter '" + std::string(key) + "' (triton_kernels_rows takes tokens)");
        if (seen_tokens) throw bad("tokens given twice");
        seen_tokens = true;
        if (v < 1 || v > kMaxExtent) throw bad("tokens " + std::to_string(v) + " is outside [1, 2^40]");
        l.tokens = v;
      } else if (key == "alignment") {
        if (seen_alignment) throw bad("alignment given twice");
        seen_alignment = true;
        if (v < 1 || v > kMaxAlignment) throw bad("alignment " + std::to_string(v) + " is outside [1, 2^20]");
        l.alignment = v;
      } else if (key == "padded_rows") {
        if (seen_padded_rows) throw bad("padded_rows given twice");
        seen_padded_rows = true;
        if (v < 1 || v > kMaxExtent) throw bad("padded_rows " + std::to_string(v) + " is outside [1, 2^40]");
        l.padded_rows = v;
      } else {
        throw bad("unknown parameter '" + std::string(key) + "' (deepgemm_sm100_rows takes alignment and padded_rows)");
      }
      if (comma == std::string_view::npos) break;
      params = params.substr(comma + 1);
    }
  }
  while (!rest.empty()) {
    const std::size_t comma = rest.find(',');
    const i64 v = decimal(rest.substr(0, comma), "group end");
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
