// SPDX-License-Identifier: Apache-2.0
// Grouped (ragged MoE) scale layouts (docs/layouts.md, "Grouped scales"): the scales of a grouped
// GEMM whose groups are ragged slices of one matrix, as torchao's MXFP8 MoE training stores them for
// torch._scaled_grouped_mm. A logical R x C scale matrix (rows along M or N, columns the blocks along
// K, as in scale_layout.h) is cut into G consecutive groups along one axis, and each group is stored
// as the 128x4 layout (L1, tiled_128x4) of its own submatrix, one after another:
//   * rows (M groups, token groups of the activations; torchao torch_to_blocked_2d_M_groups):
//     group g holds rows [end(g-1), end(g)); its L1 image (rup(size, 128) x C bytes) starts at
//     row start(g) of a row-major buffer of C columns, start(g) = sum over h < g of
//     rup(size(h), 128) (compute_blocked_scale_offsets_for_M_groups). C must be a multiple of 4
//     (the reference writes the image as rup(size, 128) rows of C bytes). The buffer is sized for
//     every group padded by up to 128 rows: (R + 128 G) x C bytes.
//   * cols (K groups, the groups along K of the weight-gradient GEMM; torch_to_blocked_2d_K_groups):
//     group g holds columns (blocks) [end(g-1), end(g)); its L1 image (rup(R, 128) x rup(size, 4)
//     bytes) starts at byte start(g) * rup(R, 128), start(g) = sum over h < g of rup(size(h), 4)
//     (compute_blocked_scale_offsets_for_K_groups). The buffer holds rup(R, 128) x (C + 4 G) bytes.
// Empty groups take no storage. Bytes that no (r, c) maps to are padding (the reference's zeros).
// Expert weights of one shape per group (a 3-D tensor) are the batched L1 of scale_layout.h.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace blockscale {

enum class GroupAxis : std::uint8_t { rows, cols };

struct GroupedScaleLayout {
  GroupAxis axis = GroupAxis::rows;
  // Where each group ends along the axis (torchao's `offs`: cumulative, non-decreasing; the last is
  // R for rows, C for cols). Groups may be empty.
  std::vector<std::int64_t> group_ends;
};

// Throws std::invalid_argument naming the rule when the groups do not describe an R x C matrix
// (negative or decreasing ends, a last end that is not the extent along the axis, no groups while
// that extent is not 0), when rows groups have C % 4 != 0, or on extents beyond 2^40.
void check_shape(const GroupedScaleLayout& layout, std::int64_t R, std::int64_t C);

// Where each group's image starts, in rows of the buffer (rows axis) or in block columns (cols
// axis), and after the last one the padded total: G + 1 values, torchao's start_row_after_padding /
// start_col_after_padding.
std::vector<std::int64_t> group_starts(const GroupedScaleLayout& layout, std::int64_t R, std::int64_t C);

// Bytes of the buffer: (R + 128 G) x C (rows) or rup(R, 128) x (C + 4 G) (cols).
std::int64_t storage_size(const GroupedScaleLayout& layout, std::int64_t R, std::int64_t C);

// The maps of single elements check the whole group list on every call (O(G)); whole matrices
// go through to_layout / from_layout, which check it once.
// Forward map: the byte offset of S[r][c]. Throws when (r, c) is outside R x C.
std::int64_t offset(const GroupedScaleLayout& layout, std::int64_t R, std::int64_t C, std::int64_t r,
                    std::int64_t c);

// Inverse map: the (r, c) stored at `off`, or nullopt for padding. Throws when off is outside
// [0, storage_size).
std::optional<std::array<std::int64_t, 2>> logical_index(const GroupedScaleLayout& layout, std::int64_t R,
                                                         std::int64_t C, std::int64_t off);

// Whole matrices: `row_major` holds R x C scale bytes, `out` the buffer (storage_size bytes), its
// padding written with `pad` (0xFF, the NaN of ue8m0 and e4m3, is refused); and the inverse.
// Throw std::invalid_argument on size mismatches.
void to_layout(const GroupedScaleLayout& layout, std::int64_t R, std::int64_t C, std::span<const std::uint8_t> row_major,
               std::span<std::uint8_t> out, std::uint8_t pad = 0);
void from_layout(const GroupedScaleLayout& layout, std::int64_t R, std::int64_t C, std::span<const std::uint8_t> in,
                 std::span<std::uint8_t> row_major);

// The first padding byte of `in` that does not hold `pad`, or nullopt.
std::optional<std::int64_t> find_padding_mismatch(const GroupedScaleLayout& layout, std::int64_t R, std::int64_t C,
                                                  std::span<const std::uint8_t> in, std::uint8_t pad = 0);

// Text form (the golden-vector @op line): the axis, a colon, the group ends in decimal separated by
// commas, e.g. "rows:0,5,133,133,300", "cols:4,8"; "rows:" has no groups. Parsing checks the
// syntax and that the ends are non-negative and non-decreasing (the extents are checked with the
// shape), and throws std::invalid_argument saying what is wrong.
std::string to_string(const GroupedScaleLayout& layout);
GroupedScaleLayout grouped_scale_layout_from_string(std::string_view text);

}  // namespace blockscale
