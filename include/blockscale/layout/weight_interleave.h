// SPDX-License-Identifier: Apache-2.0
// Bit interleaves of packed 4-bit weights for the Hopper (SM90) mixed-input MoE GEMMs of TRT-LLM
// and FlashInfer (docs/layouts.md, "Weight interleaves"). Those kernels load 4-bit weights with
// ldmatrix and turn them into 16- or 8-bit MMA operands through a lookup converter, so the weights
// are rearranged offline, at load time, by the CUDA kernels behind TRT-LLM's
// interleave_4bit_weights_for_Hopper_mixed_gemm and FlashInfer's
// interleave_moe_weights_for_sm90_mixed_gemm (moe_gemm_mixed_utils.cu in both).
//
// Every interleave works on tiles of 16 rows x 64 codes (16 rows x 32 bytes) of one expert's
// (rows, cols) weight matrix, stored fp4_dense (P1: code 2j in the low nibble of byte j) as the
// kernels take it ([E, n, k / 2] uint8). In the output, the tile's 16 x 8 little-endian 32-bit
// words each gather four source bytes, then move the word's bits by a fixed permutation:
//   destination word w (0..7) of tile row 8h + q (h = 0, 1; q = 0..7) reads, for i = 0..3, the
//   source byte at tile row q + 8 row_half[i] and column 16 floor(w/4) + 8h + col_stride (w mod 4)
//   + col_offset[i], placing it as byte i of the word; word bit b then goes to bit bit_perm[b].
// Tiles keep their place (the tile at rows 16t.., bytes 32p.. stays there). The variants differ
// only in the rows of kWeightInterleaveTable: one engine, four parameter rows. Some variants move
// single bits (the sign apart from the other three), so a code's four bits need not stay together:
// weight_code_bits gives each bit's position.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace blockscale {

enum class WeightInterleave : std::uint8_t {
  // FlashInfer quant_type "fp4" from commit 5823159c3 (2026-07-15) on: MXFP4 weights x BF16
  // activations (W4A16). Byte gather of the older form, then each 16-bit half holds the 3-bit
  // magnitude fields of four codes below their four sign bits.
  flashinfer_sm90_fp4,
  // FlashInfer quant_type "fp4_fp8" (5823159c3 on): MXFP4 weights x FP8 activations (the
  // Humming-style path; its payload rewrite, preprocess_moe_weights_for_sm90_mixed_gemm_humming,
  // changes codes before this interleave and is not a layout). 16-bit gather, then the sign bits
  // of the word's two halves trade places (nibble i's sign to nibble 2i + 1, nibble 4 + i's to 2i).
  flashinfer_sm90_fp4_fp8,
  // TRT-LLM and FlashInfer "int4" (INT4 x FP8, W4A8; unchanged across the revisions read): 16-bit
  // gather, bits unchanged. Format-agnostic: it moves 4-code groups.
  sm90_int4,
  // TRT-LLM interleave_4bit_weights_for_Hopper_mixed_gemm for fp4 (revision 258dadc, PR #12451),
  // which FlashInfer shipped from d4544921c (2026-04-23) until 5823159c3: byte gather, then in each
  // 16-bit half the middle two nibbles trade places.
  trtllm_sm90_fp4,
};

inline constexpr int kWeightInterleaveCount = 4;

struct WeightInterleaveInfo {
  WeightInterleave kind;
  const char* name;    // to_string / parse spelling
  const char* source;  // where it is defined, for listings
  int col_stride;      // source bytes between consecutive words w mod 4 (1: bytes, 2: 16-bit units)
  std::array<std::uint8_t, 4> row_half;    // byte i of a word comes from the row pair's row 8 row_half[i]
  std::array<std::uint8_t, 4> col_offset;  // ... and from column offset col_offset[i]
  std::array<std::uint8_t, 32> bit_perm;   // word bit b goes to bit bit_perm[b]
};

// clang-format off
inline constexpr std::array<WeightInterleaveInfo, kWeightInterleaveCount> kWeightInterleaveTable = {{
  // interleave_fp4_weights_for_sm90_mixed_gemm_kernel (FlashInfer 5823159c3): the mask list of its
  // 32-bit rewrite, as a permutation.
  {WeightInterleave::flashinfer_sm90_fp4, "flashinfer_sm90_fp4",
   "FlashInfer interleave_moe_weights_for_sm90_mixed_gemm(w, \"fp4\"), 5823159c3 and later", 1,
   {0, 1, 0, 1}, {0, 0, 4, 4},
   {6, 7, 8, 15, 22, 23, 24, 31, 3, 4, 5, 12, 19, 20, 21, 28,
    0, 1, 2, 9, 16, 17, 18, 25, 13, 10, 11, 14, 29, 26, 27, 30}},
  // interleave_fp4_fp8_weights_for_sm90_mixed_gemm_kernel: preprocess_fp4x8_signs_for_fp8 moves
  // bit 3 + 4i to 7 + 8i (i < 4) and bit 19 + 4i to 3 + 8i; the magnitude bits (0x77777777) stay.
  {WeightInterleave::flashinfer_sm90_fp4_fp8, "flashinfer_sm90_fp4_fp8",
   "FlashInfer interleave_moe_weights_for_sm90_mixed_gemm(w, \"fp4_fp8\"), 5823159c3 and later", 2,
   {0, 0, 1, 1}, {0, 1, 0, 1},
   {0, 1, 2, 7, 4, 5, 6, 15, 8, 9, 10, 23, 12, 13, 14, 31,
    16, 17, 18, 3, 20, 21, 22, 11, 24, 25, 26, 19, 28, 29, 30, 27}},
  {WeightInterleave::sm90_int4, "sm90_int4",
   "TRT-LLM interleave_4bit_weights_for_Hopper_mixed_gemm int4 (258dadc); FlashInfer \"int4\"", 2,
   {0, 0, 1, 1}, {0, 1, 0, 1},
   {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
    16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31}},
  // The fp4 kernel of TRT-LLM 258dadc writes byte pairs (a, b) of rows q and q + 8 as
  // (a.lo | b.lo << 4, a.hi | b.hi << 4): nibbles 1 and 2 of each 16-bit half trade places.
  {WeightInterleave::trtllm_sm90_fp4, "trtllm_sm90_fp4",
   "TRT-LLM interleave_4bit_weights_for_Hopper_mixed_gemm fp4 (258dadc); FlashInfer \"fp4\" d4544921c to 5823159c3", 1,
   {0, 1, 0, 1}, {0, 0, 4, 4},
   {0, 1, 2, 3, 8, 9, 10, 11, 4, 5, 6, 7, 12, 13, 14, 15,
    16, 17, 18, 19, 24, 25, 26, 27, 20, 21, 22, 23, 28, 29, 30, 31}},
}};
// clang-format on

constexpr const WeightInterleaveInfo& info(WeightInterleave v) { return kWeightInterleaveTable[static_cast<int>(v)]; }

// Throws std::invalid_argument unless a rows x cols matrix of 4-bit codes fits: rows % 16 == 0 and
// cols % 64 == 0 (FlashInfer's binding checks both; the kernels would read past the last row pair
// or leave the last partial 32-byte chunk unwritten), extents in [0, 2^40].
void check_weight_shape(WeightInterleave v, std::int64_t rows, std::int64_t cols);

// Bytes per expert: rows * cols / 2 (an interleave moves bits, it neither pads nor grows).
std::int64_t weight_bytes(WeightInterleave v, std::int64_t rows, std::int64_t cols);

// Whole tensors: `packed` holds `batch` experts of rows x cols codes, fp4_dense, row-major, one
// after another; `out` the same number of bytes, interleaved. Throws std::invalid_argument on a
// shape that does not fit, a negative batch, or spans of the wrong size.
void interleave_weights(WeightInterleave v, std::int64_t batch, std::int64_t rows, std::int64_t cols,
                        std::span<const std::uint8_t> packed, std::span<std::uint8_t> out);
// The inverse: interleaved bytes -> fp4_dense rows.
void deinterleave_weights(WeightInterleave v, std::int64_t batch, std::int64_t rows, std::int64_t cols,
                          std::span<const std::uint8_t> in, std::span<std::uint8_t> packed);

// Where code (r, k) lands: element j is the bit index (8 * byte + bit, bit 0 the least significant)
// in the expert's interleaved buffer that holds bit j of the code (bit 0 = mantissa LSB, bit 3 =
// sign for e2m1). Throws when (r, k) is outside the matrix.
std::array<std::int64_t, 4> weight_code_bits(WeightInterleave v, std::int64_t rows, std::int64_t cols, std::int64_t r,
                                             std::int64_t k);
// The inverse: the (r, k, j) whose bit j sits at `bit_index`. Throws when bit_index is outside
// [0, 8 * weight_bytes).
std::array<std::int64_t, 3> weight_bit_source(WeightInterleave v, std::int64_t rows, std::int64_t cols,
                                              std::int64_t bit_index);

std::string to_string(WeightInterleave v);
std::optional<WeightInterleave> parse_weight_interleave(std::string_view name);
// As parse_weight_interleave, but throws std::invalid_argument listing the known names.
WeightInterleave weight_interleave_from_string(std::string_view name);

}  // namespace blockscale
