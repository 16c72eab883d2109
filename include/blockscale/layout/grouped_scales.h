// SPDX-License-Identifier: Apache-2.0
// Grouped (ragged MoE) scale layouts (docs/layouts.md, "Grouped scales"): the scales of a grouped
// GEMM whose groups are ragged slices of one matrix. A logical R x C scale matrix (rows along M or
// N, columns the blocks along K, as in scale_layout.h) is cut into G consecutive groups along one
// axis; the family says how the groups are stored.
//
// torchao (its MXFP8 MoE training, for torch._scaled_grouped_mm): each group is stored as the 128x4
// layout (L1, tiled_128x4) of its own submatrix, one after another:
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
//
// deepgemm_sm100 (DeepGEMM's SM100 grouped GEMMs with packed ue8m0 scales, csrc/apis/layout.hpp and
// smxx_layout.cuh), both built on deepgemm_sm100_packed (L9: 4 blocks in one little-endian int32,
// words MN-major with leading dimension align(rows, 4)):
//   * rows (m_grouped_fp8_fp4_gemm_nt_contiguous, the SFA of the token-grouped activations): the
//     groups lie in one padded matrix of Mp rows, group g from row start(g) = sum over h < g of
//     rup(size(h), alignment) (alignment = get_mk_alignment_for_contiguous_layout(), 128 unless the
//     caller set another), and that matrix is stored as L9: 4 ceil(C/4) align(Mp, 4) bytes.
//     Mp = padded_rows, or start(G) (DeepGEMM's tests allocate that M) when padded_rows is 0.
//     The rows between groups are padding: the psum-layout packing writes them as 0
//     (transpose_and_pack_fp32_into_ue8m0); DeepGEMM's psum grouped_layout holds
//     start(g) + size(g) for each group.
//   * cols (k_grouped_fp8_gemm_*_contiguous, the SFA and SFB of the weight-gradient GEMM): group g's
//     submatrix (R x size) is stored as L9, rup(size, 4) / 4 words of R, one group after the other
//     with nothing between them (pack_fp32_into_ue8m0's per-group compact output; the psum variant
//     stores the same bytes). start(g) = sum over h < g of rup(size(h), 4) block columns, byte
//     start(g) * R; the buffer holds R x start(G) bytes. R must be a multiple of 4 (DeepGEMM asserts
//     mn % 4 == 0). A group of k_g elements has ceil(k_g / gran_k) blocks.
//
// triton_kernels (BlackwellActMXScaleLayout with ragged metadata, the activations' scales of its
// MoE matmul on Blackwell; layout_details/blackwell_scale.py), rows only: pad_segments_triton
// puts slice g from row start(g) = 128 * block_offs(128)[g] = sum over h < g of rup(size(h), 128)
// of a zeroed Mp x C matrix, Mp = 128 n_blocks(G, M, 128) (RaggedTensorMetadata.n_blocks: M when
// M <= G, else G - 1 + ceil((M - G + 1) / 128), the most 128-row blocks G slices of M rows can
// need), M = tokens, the activation tensor's static row count (0: R); that matrix is stored as
// tiled_128x4_k8 (L1b: the 128x4 tiles with C padded to 8). Rows between slices and after the
// last are padding (zeros).
//
// Empty groups take no storage. Bytes that no (r, c) maps to are padding (the reference's zeros).
// Expert weights of one shape per group (a 3-D tensor) are the batched single-matrix layouts of
// scale_layout.h.
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

// Whose grouped rearrangement (see above).
enum class GroupedScaleFamily : std::uint8_t { torchao, deepgemm_sm100, triton_kernels };

struct GroupedScaleLayout {
  GroupAxis axis = GroupAxis::rows;
  // Where each group ends along the axis in the logical matrix (torchao's `offs`: cumulative,
  // non-decreasing; the last is R for rows, C for cols). Groups may be empty.
  std::vector<std::int64_t> group_ends;
  GroupedScaleFamily family = GroupedScaleFamily::torchao;
  // deepgemm_sm100 rows only: the row multiple every group starts at, and the padded matrix's rows
  // (0: start(G), the least that holds every group).
  std::int64_t alignment = kDeepGemmMkAlignment;
  std::int64_t padded_rows = 0;
  // triton_kernels rows only: the activation tensor's rows M, valid and padded tokens (0: R).
  std::int64_t tokens = 0;

  // DeepGEMM's default get_mk_alignment_for_contiguous_layout() (kLegacyMKAlignmentForContiguousLayout).
  static constexpr std::int64_t kDeepGemmMkAlignment = 128;
};

// Throws std::invalid_argument naming the rule when the groups do not describe an R x C matrix
// (negative or decreasing ends, a last end that is not the extent along the axis, no groups while
// that extent is not 0), when torchao rows groups have C % 4 != 0 or DeepGEMM cols groups
// R % 4 != 0, when alignment is not in [1, 2^20] or padded_rows is set on another family or axis,
// or is below start(G-1) + size(G-1), when tokens is set on another family or is below R, when
// triton_kernels groups are not rows, or on extents beyond 2^40.
void check_shape(const GroupedScaleLayout& layout, std::int64_t R, std::int64_t C);

// Where each group starts, in rows of the buffer or padded matrix (rows axis) or in block columns
// (cols axis), and after the last one the padded total (for DeepGEMM and triton_kernels rows: Mp): G + 1 values,
// torchao's start_row_after_padding / start_col_after_padding.
std::vector<std::int64_t> group_starts(const GroupedScaleLayout& layout, std::int64_t R, std::int64_t C);

// Bytes of the buffer: torchao (R + 128 G) x C (rows) or rup(R, 128) x (C + 4 G) (cols);
// DeepGEMM 4 ceil(C/4) align(Mp, 4) (rows) or R x start(G) (cols); triton_kernels Mp x rup(C, 8).
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

// DeepGEMM's own descriptions of its groups:
//   * M groups, the psum layout (grouped_layout with use_psum_layout): psum[g] is the padded row
//     where group g ends; it starts at align(psum[g-1], alignment), so size(g) = psum[g] -
//     align(psum[g-1], alignment). `m` is the activations' M (0: the least, start(G)). Throws
//     std::invalid_argument when a group would end before its aligned start or the values are
//     negative. deepgemm_psum is the inverse: start(g) + size(g) for each group.
//   * K groups: the groups' K extents in elements (ks_cpu; with the psum layout, psum[g] -
//     align(psum[g-1], k_alignment)) and the scale granularity gran_k (32 or 128): group g has
//     ceil(k_g / gran_k) blocks.
GroupedScaleLayout deepgemm_m_groups_from_psum(std::span<const std::int64_t> psum, std::int64_t alignment,
                                               std::int64_t m = 0);
std::vector<std::int64_t> deepgemm_psum(const GroupedScaleLayout& layout, std::int64_t R, std::int64_t C);
GroupedScaleLayout deepgemm_k_groups_from_ks(std::span<const std::int64_t> ks, std::int64_t gran_k);

// Text form (the golden-vector @op line, the CLI): the family and axis, a colon, the group ends in
// decimal separated by commas: torchao's are "rows:0,5,133,133,300", "cols:4,8" ("rows:" has no
// groups); DeepGEMM's "deepgemm_sm100_cols:4,8" and "deepgemm_sm100_rows:alignment=128:5,133",
// with ",padded_rows=N" after the alignment when it is set; triton_kernels' "triton_kernels_rows:5,133"
// or "triton_kernels_rows:tokens=M:5,133" (on input the parameters are optional and in any order). Parsing checks the syntax and that the ends are non-negative and
// non-decreasing (the extents are checked with the shape), and throws std::invalid_argument saying
// what is wrong.
std::string to_string(const GroupedScaleLayout& layout);
GroupedScaleLayout grouped_scale_layout_from_string(std::string_view text);

}  // namespace blockscale
