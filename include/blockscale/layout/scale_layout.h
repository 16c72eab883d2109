// SPDX-License-Identifier: Apache-2.0
// Scale-factor storage layouts for block-scaled GEMM (docs/layouts.md; catalogue IDs L1-L12 refer
// to the catalogue in the project's shared layout notes and are repeated in docs/layouts.md).
//
// Every layout maps a logical R x C scale matrix S to a flat storage array:
//   r in [0, R) runs along M or N (row of A, or column of B = row of B^T),
//   c in [0, C) is the block index along the blocked dimension (K for operand scales).
// The one exception is tiled_128x4_transposed, whose logical matrix is given block-major; see
// the kind's comment. An offset counts elements of the storage type: bytes for ue8m0 / ue4m3
// scales, floats for the Hopper fp32 layouts. Storage that no (r, c) maps to is padding; it is
// written with a caller-chosen pad value (0 by default: ue8m0 0x00 = 2^-127, ue4m3 0x00 = 0.0,
// fp32 0.0f; 0xFF is NaN in ue8m0 and e4m3 and is refused).
//
// A batch of matrices is stored one after another with stride storage_size(layout, R, C) (the
// L mode of CUTLASS, bTileStride of TRT-LLM, the per-group stride of DeepGEMM).
//
// Shapes a layout cannot hold (e.g. gluon_contiguous with R % BLOCK_MN != 0, or the unpadded
// cuda.tile sample with R % 128 != 0) throw std::invalid_argument naming the rule.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace blockscale {

enum class ScaleLayoutKind : std::uint8_t {
  // L3. off = r*C + c. No padding. tl.dot_scaled operands, cuda.tile 2-D path, ModelOpt/HF NVFP4
  // checkpoints, FlashInfer LINEAR.
  linear,
  // L1, the 128x4 tiled layout: R padded to 128, C to 4; 512-byte atoms of 128 rows x 4 blocks,
  // K-tiles fastest. cuBLASLt VEC16_UE4M3 / VEC32_UE8M0, the tcgen05.cp 32x128b.warpx4 source,
  // CUTLASS SfKMajorAtom, Gluon/Triton 5-D packed block [Rp/128, Cp/4, 32, 4, 4], torchao
  // to_blocked, vLLM, TRT-LLM/FlashInfer SWIZZLED_128x4, TE, cuDNN.
  tiled_128x4,
  // L1b, triton_kernels BlackwellMXScaleLayout: L1 with C padded to 8 (not 4), which changes the
  // M-tile stride and the size whenever ceil(C/4) is odd.
  tiled_128x4_k8,
  // L1a / L1c: L1 of the transpose. Here the logical matrix is block-major: R = number of blocks,
  // C = M/N extent (row-major (K_s, MN) scales: CUTLASS SFD of an MN-major D, TE column-wise
  // scale_inv). offset(R, C, r, c) = tiled_128x4 offset(C, R, c, r).
  tiled_128x4_transposed,
  // L2, TRT-LLM / FlashInfer SWIZZLED_8x4 (small-M activations): 32-byte atoms of 8 rows x 4
  // blocks, R padded to 8, C to 4.
  tiled_8x4,
  // L4, Gluon relayout_scales_contiguous: [R/BM, C/SBK, BM, SBK] with BM = block_mn and
  // SBK = block_k_scales = BLOCK_K / VEC_SIZE. No padding: needs R % BM == 0 and C % SBK == 0.
  gluon_contiguous,
  // L5, AMD CDNA4 (gfx950) shuffle for mfma_scaled_32x32x64 (Triton tutorial
  // shuffle_scales_cdna4(..., 32)): 256-byte groups of 32 rows x 8 blocks; R padded to 32, C to 8.
  cdna4_mfma32,
  // L6, AMD CDNA4 shuffle for mfma_scaled_16x16x128 (= triton_kernels CDNA4MXScaleLayout =
  // hipBLASLt Block_32_UE8M0_32_8_EXT); R padded to 32, C to 8.
  cdna4_mfma16,
  // L7, DeepGEMM SM90 SFA (1x128 activations, fp32), = TE GEMM-ready row-wise scales:
  // column-major with leading dimension align(R, 4): off = c*align(R,4) + r.
  deepgemm_sm90_sfa,
  // L8, DeepGEMM SM90 SFB (128x128 weights, fp32), dense, K-major (off = r*C + c) or MN-major
  // (off = c*R + r) per `major`.
  deepgemm_sm90_sfb,
  // L9, DeepGEMM SM100 packed ue8m0: 4 consecutive blocks in one little-endian int32 word (byte
  // c mod 4), words MN-major with leading dimension align(R, 4):
  // byte off = 4*(floor(c/4)*align(R,4) + r) + c mod 4. C padded to 4.
  deepgemm_sm100_packed,
  // L10 1x128, cuBLASLt VEC128_32F as PyTorch passes it: strides (1, R), off = c*R + r.
  cublaslt_vec128,
  // L10 128x128, cuBLASLt BLK128x128_32F as PyTorch passes it: row-major with leading dimension
  // rup(C, ld_align): off = r*rup(C, ld_align) + c. The cuBLAS page was not available: one PyTorch
  // revision uses ld = C (ld_align 1), another requires rup(C, 4) ("16-byte aligned strides").
  cublaslt_blk128x128,
  // L11, CUTLASS Sm90/Sm100BlockwiseScaleConfig (fp32): dense, MN-major (off = c*R + r, the
  // CUTLASS default) or K-major (off = r*C + c) per `major`.
  cutlass_blockwise,
  // L12, triton_kernels HopperMXScaleLayout (ue8m0, mxfp4 weights on Hopper): R padded to
  // 32*num_warps, C to 2; stored as (Rp/32, 32*Cp).
  triton_hopper,
  // L1 as the cuda.tile sample swizzle_32_4_4 makes it: same bytes as tiled_128x4 but without
  // padding; needs R % 128 == 0 and C % 4 == 0. Stored as (R/128, C/4, 32, 16).
  cutile_swizzle_32_4_4,
  // L13, AMD gfx1250 (triton_kernels GFX1250MXScaleLayout, the Gluon gfx1250 MXFP GEMM's
  // pack_scale): L1's 128-row stripes with rows interleaved 4 x 32, atoms of kw = min(C, 4) blocks:
  // R padded to 128, C to kw. The same bytes as tiled_128x4 when C >= 4; narrower atoms (and no
  // padding along K) when C < 4. With scale_k_width = 4, 8 or 16, the atoms are that many blocks
  // wide when C >= 4 (aiter shuffle_scale_batched, the FP4 block-16 KV-cache scales).
  gfx1250_mx,
  // L14, FlashInfer / trtllm-gen BlockMajorK (convert_to_block_layout): the matrix cut along C into
  // blocks of block_k columns, stored [C/block_k, R, block_k]:
  // off = floor(c/block_k)*R*block_k + r*block_k + c mod block_k. No padding: C % block_k == 0. It
  // orders the element bytes of trtllm-gen MoE weights (R = rows, C = bytes per row, block_k = 128
  // bytes), after their row order, which it takes.
  block_major_k,
  // L15, the folded weight scales of the SM90 mixed-input MoE GEMM (FlashInfer
  // interleave_moe_scales_for_sm90_mixed_gemm, since FlashInfer 5823159c3): byte scales of group_size
  // elements, gpk = 128 / group_size blocks per 128 K elements. Each 64-row x gpk-block piece is one
  // 64 * gpk byte tile whose 16-byte rows hold 16 / gpk row slices of gpk blocks:
  // r = 64 rb + F s + f (F = 4 gpk), c = gpk kb + j -> off = 64 C rb + 64 gpk kb + 16 f + gpk s + j.
  // No padding: R % 64 == 0 and C % gpk == 0.
  sm90_mixed_folded,
};

inline constexpr int kScaleLayoutKindCount = 19;

// Whether a layout's element is one byte (ue8m0 / ue4m3) or an fp32 scale. to_layout /
// from_layout move any element type; this records what the systems that use the layout store.
enum class ScaleElement : std::uint8_t { byte, fp32 };

// Storage order of the dense Hopper layouts (L8, L11).
enum class ScaleMajor : std::uint8_t { k_major, mn_major };

struct ScaleLayoutKindInfo {
  ScaleLayoutKind kind;
  const char* name;          // to_string / parse spelling
  const char* catalogue_id;  // "L1", "L1b", ... (docs/layouts.md)
  ScaleElement element;
  const char* parameters;    // the text form's keys, optional ones in brackets ("block_k [rows]")
};

// clang-format off
inline constexpr std::array<ScaleLayoutKindInfo, kScaleLayoutKindCount> kScaleLayoutKindTable = {{
  {ScaleLayoutKind::linear,                 "linear",                 "L3",  ScaleElement::byte, "[rows]"},
  {ScaleLayoutKind::tiled_128x4,            "tiled_128x4",            "L1",  ScaleElement::byte, "[rows]"},
  {ScaleLayoutKind::tiled_128x4_k8,         "tiled_128x4_k8",         "L1b", ScaleElement::byte, ""},
  {ScaleLayoutKind::tiled_128x4_transposed, "tiled_128x4_transposed", "L1a", ScaleElement::byte, ""},
  {ScaleLayoutKind::tiled_8x4,              "tiled_8x4",              "L2",  ScaleElement::byte, ""},
  {ScaleLayoutKind::gluon_contiguous,       "gluon_contiguous",       "L4",  ScaleElement::byte, "block_mn block_k_scales"},
  {ScaleLayoutKind::cdna4_mfma32,           "cdna4_mfma32",           "L5",  ScaleElement::byte, ""},
  {ScaleLayoutKind::cdna4_mfma16,           "cdna4_mfma16",           "L6",  ScaleElement::byte, ""},
  {ScaleLayoutKind::deepgemm_sm90_sfa,      "deepgemm_sm90_sfa",      "L7",  ScaleElement::fp32, ""},
  {ScaleLayoutKind::deepgemm_sm90_sfb,      "deepgemm_sm90_sfb",      "L8",  ScaleElement::fp32, "major"},
  {ScaleLayoutKind::deepgemm_sm100_packed,  "deepgemm_sm100_packed",  "L9",  ScaleElement::byte, ""},
  {ScaleLayoutKind::cublaslt_vec128,        "cublaslt_vec128",        "L10", ScaleElement::fp32, ""},
  {ScaleLayoutKind::cublaslt_blk128x128,    "cublaslt_blk128x128",    "L10", ScaleElement::fp32, "ld_align"},
  {ScaleLayoutKind::cutlass_blockwise,      "cutlass_blockwise",      "L11", ScaleElement::fp32, "major"},
  {ScaleLayoutKind::triton_hopper,          "triton_hopper",          "L12", ScaleElement::byte, "num_warps"},
  {ScaleLayoutKind::cutile_swizzle_32_4_4,  "cutile_swizzle_32_4_4",  "L1",  ScaleElement::byte, ""},
  {ScaleLayoutKind::gfx1250_mx,             "gfx1250_mx",             "L13", ScaleElement::byte, "[scale_k_width]"},
  {ScaleLayoutKind::block_major_k,          "block_major_k",          "L14", ScaleElement::byte, "block_k [rows]"},
  {ScaleLayoutKind::sm90_mixed_folded,      "sm90_mixed_folded",      "L15", ScaleElement::byte, "group_size"},
}};
// clang-format on

constexpr const ScaleLayoutKindInfo& info(ScaleLayoutKind k) {
  return kScaleLayoutKindTable[static_cast<int>(k)];
}

// Row orders applied to the logical matrix before the layout (docs/layouts.md, "Row orders"). The
// storage holds the reordered matrix S' with S'[j] = S[source(j)]; `source` is what TRT-LLM and
// FlashInfer call the permute indices (row_indices[new_row] = old_row). These are the orders of
// the trtllm-gen MoE weight preparation (TRT-LLM fp4_utils.py, FlashInfer fused_moe):
//   gated_act: reorderRowsForGatedActGemm, the rows of [w3; w1] interleaved, S'[2i] = S[i] and
//     S'[2i+1] = S[R/2 + i] (R even);
//   trtllm_shuffle16 / 32: shuffleMatrixA / shuffleMatrixSfA, blocks of 16 or 32 rows in which old
//     row q goes to row (q mod n)*8 + floor(q/n), n = 2 or 4 (srcToDstBlk16RowMap /
//     srcToDstBlk32RowMap); 32 when epilogue_tile_m % 128 == 0, else 16;
//   gated_act_trtllm_shuffle*: both, gated_act first (FlashInfer permute0[permute1]).
// The same order applies to the packed element rows (linear, C = bytes per row, or block_major_k
// for FlashInfer's BlockMajorK weights) and to their scales (linear for the checkpoint form,
// tiled_128x4 for what the kernel reads).
enum class RowOrder : std::uint8_t {
  natural,
  trtllm_shuffle16,
  trtllm_shuffle32,
  gated_act,
  gated_act_trtllm_shuffle16,
  gated_act_trtllm_shuffle32,
};

inline constexpr int kRowOrderCount = 6;

struct RowOrderInfo {
  RowOrder order;
  const char* name;   // to_string / parse spelling (the rows= parameter)
  bool gated_act;     // rows of the two halves interleaved first
  int shuffle_block;  // 0, 16 or 32: rows per trtllm-gen shuffle block
};

// clang-format off
inline constexpr std::array<RowOrderInfo, kRowOrderCount> kRowOrderTable = {{
  {RowOrder::natural,                    "natural",                    false, 0},
  {RowOrder::trtllm_shuffle16,           "trtllm_shuffle16",           false, 16},
  {RowOrder::trtllm_shuffle32,           "trtllm_shuffle32",           false, 32},
  {RowOrder::gated_act,                  "gated_act",                  true,  0},
  {RowOrder::gated_act_trtllm_shuffle16, "gated_act_trtllm_shuffle16", true,  16},
  {RowOrder::gated_act_trtllm_shuffle32, "gated_act_trtllm_shuffle32", true,  32},
}};
// clang-format on

constexpr const RowOrderInfo& info(RowOrder o) { return kRowOrderTable[static_cast<int>(o)]; }

// The order FlashInfer's trtllm-gen MoE applies for an epilogue tile of `epilogue_tile_m` rows
// (get_shuffle_block_size: blocks of 32 when epilogue_tile_m % 128 == 0, else 16), with or without
// the gated-activation interleave (w13 of a gated MLP; w2 has none). Throws when
// epilogue_tile_m < 1.
RowOrder trtllm_row_order(std::int64_t epilogue_tile_m, bool gated_act);

// The permute indices of an order over R rows: element j is the logical row stored at row j (what
// FlashInfer's _maybe_get_cached_w3_w1_permute_indices returns). Throws std::invalid_argument when
// R does not fit the order (odd R for gated_act, R % 16 or R % 32 != 0 for the shuffles).
std::vector<std::int64_t> row_order_indices(RowOrder order, std::int64_t R);

// A layout: its kind plus the parameters of the kinds that have them. Parameters a kind does not
// use must keep their default values (validate() checks), so == compares layouts meaningfully.
struct ScaleLayout {
  ScaleLayoutKind kind = ScaleLayoutKind::linear;
  std::int64_t block_mn = 0;               // gluon_contiguous: BLOCK_MN, rows per tile (>= 1)
  std::int64_t block_k_scales = 0;         // gluon_contiguous: BLOCK_K / VEC_SIZE, blocks per tile
  std::int32_t num_warps = 0;              // triton_hopper: a power of two
  ScaleMajor major = ScaleMajor::k_major;  // deepgemm_sm90_sfb, cutlass_blockwise
  std::int32_t ld_align = 1;               // cublaslt_blk128x128: 1 or 4
  // linear, tiled_128x4, block_major_k: rows reordered before the layout. With tiled_128x4 the
  // shape must not need padding (R % 128 == 0, C % 4 == 0), as the TRT-LLM scale shuffle asserts.
  RowOrder row_order = RowOrder::natural;
  std::int64_t block_k = 0;        // block_major_k: columns per block (>= 1)
  std::int32_t scale_k_width = 0;  // gfx1250_mx: 0 (triton_kernels' min(C, 4)), or 4, 8, 16 (aiter)
  std::int32_t group_size = 0;     // sm90_mixed_folded: elements per scale, 8, 16, 32, 64 or 128

  // A kind without parameters (throws std::invalid_argument for one that has them).
  static ScaleLayout of(ScaleLayoutKind k);
  // Gluon: BLOCK_K elements per tile along K, VEC_SIZE elements per scale (BLOCK_K % VEC_SIZE
  // must be 0).
  static ScaleLayout gluon_contiguous(std::int64_t block_mn, std::int64_t block_k, std::int64_t vec_size);
  static ScaleLayout triton_hopper(std::int32_t num_warps);
  static ScaleLayout deepgemm_sm90_sfb(ScaleMajor major);
  static ScaleLayout cutlass_blockwise(ScaleMajor major = ScaleMajor::mn_major);
  static ScaleLayout cublaslt_blk128x128(std::int32_t ld_align);
  // linear or tiled_128x4 with its rows in `order`.
  static ScaleLayout row_ordered(ScaleLayoutKind k, RowOrder order);
  // aiter shuffle_scale_batched(data, scale_k_width): atoms of scale_k_width (4, 8 or 16) blocks.
  static ScaleLayout gfx1250_mx(std::int32_t scale_k_width);
  // FlashInfer convert_to_block_layout(x, block_k), applied after the rows are put in `order`.
  static ScaleLayout block_major_k(std::int64_t block_k, RowOrder order = RowOrder::natural);
  // FlashInfer interleave_moe_scales_for_sm90_mixed_gemm(scales, group_size) of byte scales (MXFP4:
  // 32).
  static ScaleLayout sm90_mixed_folded(std::int32_t group_size);

  friend bool operator==(const ScaleLayout&, const ScaleLayout&) = default;
};

// Throws std::invalid_argument when a parameter is out of range or set on a kind that does not use
// it. Every function below validates its layout.
void validate(const ScaleLayout& layout);

// Throws std::invalid_argument when an R x C matrix does not fit the layout (negative extents,
// a divisibility rule such as R % BLOCK_MN == 0, or a size beyond 2^62 elements).
void check_shape(const ScaleLayout& layout, std::int64_t R, std::int64_t C);

// Elements of storage per batch item, padding included.
std::int64_t storage_size(const ScaleLayout& layout, std::int64_t R, std::int64_t C);

// The row-major shape of the stored tensor as the layout's definition decomposes it (its product
// is storage_size), e.g. tiled_128x4: {Rp/128, Cp/4, 32, 4, 4}; cutile_swizzle_32_4_4:
// {R/128, C/4, 32, 16}; gfx1250_mx: {Rp/128, Cp/kw, 32, 4, kw}; cdna4_*: {Rp/32, 32*Cp}; deepgemm_sm90_sfa: {C, align(R,4)};
// deepgemm_sm100_packed (bytes): {ceil(C/4), align(R,4), 4}; block_major_k: {C/block_k, R, block_k};
// sm90_mixed_folded: {R/64, C/gpk, 4*gpk, 16}.
std::vector<std::int64_t> storage_shape(const ScaleLayout& layout, std::int64_t R, std::int64_t C);

// Forward map: storage offset of S[r][c]. Throws when (r, c) is outside R x C.
std::int64_t offset(const ScaleLayout& layout, std::int64_t R, std::int64_t C, std::int64_t r,
                    std::int64_t c);

// Inverse map: the (r, c) stored at `off`, or nullopt when `off` is padding. Throws when off is
// outside [0, storage_size).
std::optional<std::array<std::int64_t, 2>> logical_index(const ScaleLayout& layout, std::int64_t R,
                                                         std::int64_t C, std::int64_t off);

// Every layout here is separable: offset(r, c) = row_part(r) + col_part(c), because each one splits
// r and c into mixed-radix digits independently and gives each digit its own stride. ScaleOffsets
// validates once and tabulates both parts, so loops that write scales straight into a layout (a
// quantizer, a GPU-image builder) pay one add per element. Element access is unchecked.
class ScaleOffsets {
 public:
  ScaleOffsets(const ScaleLayout& layout, std::int64_t R, std::int64_t C);

  std::int64_t rows() const { return static_cast<std::int64_t>(row_.size()); }
  std::int64_t cols() const { return static_cast<std::int64_t>(col_.size()); }
  std::int64_t storage_size() const { return size_; }
  // True when the storage holds padding (storage_size > R*C).
  bool padded() const { return size_ != rows() * cols(); }
  std::int64_t row_part(std::int64_t r) const { return row_[static_cast<std::size_t>(r)]; }
  std::int64_t col_part(std::int64_t c) const { return col_[static_cast<std::size_t>(c)]; }
  std::int64_t operator()(std::int64_t r, std::int64_t c) const { return row_part(r) + col_part(c); }
  std::span<const std::int64_t> row_parts() const { return row_; }
  std::span<const std::int64_t> col_parts() const { return col_; }

 private:
  std::vector<std::int64_t> row_, col_;
  std::int64_t size_ = 0;
};

// Whole tensors: `row_major` holds batch matrices of R x C (batch stride R*C), `out` batch
// storage images (stride storage_size). Padding gets `pad`. One overload per storage type: bytes
// (ue8m0 / ue4m3 codes) and float (the Hopper fp32 layouts); every layout accepts both, and plain
// overloads (not a template) let std::vector arguments convert to spans.
// Throws std::invalid_argument on size mismatches and on a NaN pad (byte 0xFF, NaN in ue8m0 and
// e4m3, layouts.md (c); a NaN float).
void to_layout(const ScaleLayout& layout, std::int64_t batch, std::int64_t R, std::int64_t C,
               std::span<const std::uint8_t> row_major, std::span<std::uint8_t> out,
               std::uint8_t pad = 0);
void to_layout(const ScaleLayout& layout, std::int64_t batch, std::int64_t R, std::int64_t C,
               std::span<const float> row_major, std::span<float> out, float pad = 0.0f);

// The inverse: storage images -> row-major matrices. Padding is not read.
void from_layout(const ScaleLayout& layout, std::int64_t batch, std::int64_t R, std::int64_t C,
                 std::span<const std::uint8_t> in, std::span<std::uint8_t> row_major);
void from_layout(const ScaleLayout& layout, std::int64_t batch, std::int64_t R, std::int64_t C,
                 std::span<const float> in, std::span<float> row_major);

// For validating raw buffers: the first storage offset (counted over the whole batch) that is
// padding but does not hold `pad` (floats compared bitwise), or nullopt when all padding holds it.
std::optional<std::int64_t> find_padding_mismatch(const ScaleLayout& layout, std::int64_t batch,
                                                  std::int64_t R, std::int64_t C,
                                                  std::span<const std::uint8_t> in,
                                                  std::uint8_t pad = 0);
std::optional<std::int64_t> find_padding_mismatch(const ScaleLayout& layout, std::int64_t batch,
                                                  std::int64_t R, std::int64_t C,
                                                  std::span<const float> in, float pad = 0.0f);

// Text form: the kind's name, then its parameters, all of them, as key=value after a colon:
//   "tiled_128x4", "gluon_contiguous:block_mn=128,block_k_scales=4", "triton_hopper:num_warps=8",
//   "deepgemm_sm90_sfb:major=k", "cutlass_blockwise:major=mn", "cublaslt_blk128x128:ld_align=4",
//   "block_major_k:block_k=128", "sm90_mixed_folded:group_size=32".
// Two parameters are optional and printed only when set: the row order, when not natural,
//   "tiled_128x4:rows=gated_act_trtllm_shuffle32", "block_major_k:block_k=128,rows=trtllm_shuffle16",
// and gfx1250_mx's atom width, when not 0, "gfx1250_mx:scale_k_width=16".
std::string to_string(const ScaleLayout& layout);
std::string to_string(ScaleLayoutKind kind);
std::string to_string(ScaleMajor major);  // "k" / "mn"
std::string to_string(RowOrder order);
// nullopt for anything malformed or invalid (unknown kind or key, missing or repeated parameter,
// value out of range).
std::optional<ScaleLayout> parse_scale_layout(std::string_view text);
// As parse_scale_layout, but throws std::invalid_argument saying what is wrong.
ScaleLayout scale_layout_from_string(std::string_view text);

}  // namespace blockscale
