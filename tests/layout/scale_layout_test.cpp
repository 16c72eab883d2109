// SPDX-License-Identifier: Apache-2.0
// Scale-factor layouts: the closed forms of src/layout against independent oracles written the way
// the defining code writes each layout (pad + reshape + permute of the logical index matrix, see
// index_tensor.h), hand-checked golden offsets, the seed documents' worked examples, whole-tensor
// round trips with batches and padding, and the errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "blockscale/layout.h"
#include "layout/index_tensor.h"
#include "expect_throw.h"

namespace blockscale {

// Readable test parameters in gtest output.
void PrintTo(const ScaleLayout& l, std::ostream* os) { *os << to_string(l); }

namespace {

using blockscale::test::invalid_argument_message;

using test::IndexTensor;
using test::logical_matrix;
using test::pad_to_multiple;
using test::permute;
using test::reshape;
using test::transpose2;
using i64 = std::int64_t;
using K = ScaleLayoutKind;

// ---- Oracles: each layout's storage order, built as its source builds it. ----

// Gluon swizzle_scales_packed_block (seed 002): pad MN to 128 and K_s to 4 (`align_to`), reshape
// (REP_MN, 4, 32, REP_K, 4), permute (0, 3, 2, 1, 4). Also the tcgen05.cp 32x128b.warpx4 atom.
IndexTensor packed_block(const IndexTensor& s, i64 k_align) {
  const IndexTensor p = pad_to_multiple(s, 128, k_align);
  const i64 MN = p.shape[0], SK = p.shape[1];
  return permute(reshape(p, {MN / 128, 4, 32, SK / 4, 4}), {0, 3, 2, 1, 4});
}

IndexTensor oracle(const ScaleLayout& l, i64 R, i64 C) {
  const IndexTensor s = logical_matrix(R, C);
  switch (l.kind) {
    case K::linear:
      return s;
    case K::tiled_128x4:
      return packed_block(s, 4);
    case K::tiled_128x4_k8:
      // triton_kernels BlackwellMXScaleLayout: pad K_s to ALIGN_K = 8 and N to 128, reshape
      // (N/128, 4, 32, K/4, 4), transpose dims 1 and 3.
      return packed_block(s, 8);
    case K::tiled_128x4_transposed:
      // L1a / L1c: the 128x4 layout of the transposed (block-major) matrix.
      return packed_block(transpose2(s), 4);
    case K::cutile_swizzle_32_4_4: {
      // Seed 000 swizzle_32_4_4: m0 = M // (m1*m2), k0 = K_s // k1, reshape (m0, m2, m1, k0, k1),
      // permute (0, 3, 2, 1, 4), reshape (m0, k0, m1, m2*k1). No padding.
      const i64 m0 = R / (32 * 4), k0 = C / 4;
      return reshape(permute(reshape(s, {m0, 4, 32, k0, 4}), {0, 3, 2, 1, 4}), {m0, k0, 32, 16});
    }
    case K::gfx1250_mx: {
      if (l.scale_k_width != 0) {
        // aiter shuffle_scale_batched(data, scale_k_width) on the (N, SCALE_K) tensor, padded to
        // its multiples first (aiter refuses other shapes): SCALE_KWIDTH = scale_k_width if
        // SCALE_K >= 4 else SCALE_K; view (-1, N/128, 4, 32, SCALE_K/KW, KW); permute
        // (0, 1, 4, 3, 2, 5). The leading batch dimension (1 here) is dropped.
        const i64 kw = C >= 4 ? l.scale_k_width : C;
        if (kw == 0) return reshape(s, {0, 0, 32, 4, 1});
        const IndexTensor p = pad_to_multiple(s, 128, kw);
        const i64 np = p.shape[0], kp = p.shape[1];
        return reshape(permute(reshape(p, {1, np / 128, 4, 32, kp / kw, kw}), {0, 1, 4, 3, 2, 5}),
                       {np / 128, kp / kw, 32, 4, kw});
      }
      // triton_kernels GFX1250MXScaleLayoutTransformation.swizzle_data, on the (K_SCALE, N) tensor
      // it takes: ALIGN_K_SCALE = 4 if K_SCALE > 4 else K_SCALE; pad N to 128 and K_SCALE to
      // ALIGN_K_SCALE; transpose; view (-1, N_pad/128, 4, 32, K_pad/ALIGN_K, ALIGN_K); permute
      // (0, 1, 4, 3, 2, 5). The leading batch dimension (1 here) is dropped.
      const IndexTensor kn = transpose2(s);
      const i64 align_k = C > 4 ? 4 : C;
      if (align_k == 0) return reshape(kn, {0, 0, 32, 4, 1});
      const IndexTensor p = transpose2(pad_to_multiple(kn, align_k, 128));
      const i64 np = p.shape[0], kp = p.shape[1];
      const IndexTensor t =
          permute(reshape(p, {1, np / 128, 4, 32, kp / align_k, align_k}), {0, 1, 4, 3, 2, 5});
      return reshape(t, {np / 128, kp / align_k, 32, 4, align_k});
    }
    case K::block_major_k: {
      // FlashInfer convert_to_block_layout: view (M, K / blockK, blockK), permute (1, 0, 2).
      const i64 bk = l.block_k;
      return permute(reshape(s, {R, C / bk, bk}), {1, 0, 2});
    }
    case K::sm90_mixed_folded: {
      // FlashInfer interleave_moe_scales_for_sm90_mixed_gemm (5823159c3 and later) on one expert's
      // (rows, K / group_size) byte scales: scale_groups_per_k128 = 128 // group_size,
      // physical_cols = 128 // element_bits = 16, m_slices_per_m64 = physical_cols //
      // scale_groups_per_k128, folded_m = 64 // m_slices_per_m64; reshape (rows // 64,
      // m_slices_per_m64, folded_m, k128_blocks, scale_groups_per_k128), permute (0, 3, 2, 1, 4).
      const i64 per_k128 = 128 / l.group_size, physical_cols = 128 / 8;
      const i64 m_slices = physical_cols / per_k128, folded_m = 64 / m_slices;
      return reshape(permute(reshape(s, {R / 64, m_slices, folded_m, C / per_k128, per_k128}), {0, 3, 2, 1, 4}),
                     {R / 64, C / per_k128, folded_m, physical_cols});
    }
    case K::tiled_8x4: {
      // TRT-LLM SWIZZLED_8x4: 32-byte atoms of 8 rows x 4 blocks, K-atoms fastest.
      const IndexTensor p = pad_to_multiple(s, 8, 4);
      return permute(reshape(p, {p.shape[0] / 8, 8, p.shape[1] / 4, 4}), {0, 2, 1, 3});
    }
    case K::gluon_contiguous: {
      // Seed 002 relayout_scales_contiguous: reshape (MN // BLOCK_MN, BLOCK_MN, SCALE_K //
      // SCALES_BLOCK_K, SCALES_BLOCK_K), permute (0, 2, 1, 3).
      const i64 bm = l.block_mn, sbk = l.block_k_scales;
      return permute(reshape(s, {R / bm, bm, C / sbk, sbk}), {0, 2, 1, 3});
    }
    case K::cdna4_mfma32:
    case K::cdna4_mfma16: {
      // Seed 003 shuffle_scales_cdna4 (on the shape triton_kernels pads to: R to 32, K_s to 8).
      const IndexTensor p = pad_to_multiple(s, 32, 8);
      const i64 sm = p.shape[0], sn = p.shape[1];
      IndexTensor t = l.kind == K::cdna4_mfma32
                          ? permute(reshape(p, {sm / 32, 32, sn / 8, 4, 2, 1}), {0, 2, 4, 1, 3, 5})
                          : permute(reshape(p, {sm / 32, 2, 16, sn / 8, 2, 4, 1}), {0, 3, 5, 2, 4, 1, 6});
      return reshape(t, {sm / 32, sn * 32});
    }
    case K::deepgemm_sm90_sfa:
      // DeepGEMM get_mn_major_tma_aligned_tensor: M padded to a 16-byte multiple of floats,
      // stored MN-major (the transpose is contiguous).
      return transpose2(pad_to_multiple(s, 4, 1));
    case K::deepgemm_sm90_sfb:
    case K::cutlass_blockwise:
      return l.major == ScaleMajor::k_major ? s : transpose2(s);
    case K::deepgemm_sm100_packed: {
      // Pad to (4, 4), view 4 consecutive K-block bytes as one int32 word, store the words MN-major.
      const IndexTensor p = pad_to_multiple(s, 4, 4);
      return permute(reshape(p, {p.shape[0], p.shape[1] / 4, 4}), {1, 0, 2});
    }
    case K::cublaslt_vec128:
      // PyTorch scale_a (M, K/128) with strides (1, M).
      return transpose2(s);
    case K::cublaslt_blk128x128:
      // (M/128, K/128) with strides (ld, 1), ld = K/128 rounded up to ld_align.
      return pad_to_multiple(s, 1, l.ld_align);
    case K::triton_hopper: {
      // triton_kernels HopperMXScaleLayout.swizzle_data: pad M to 2*nw*2*8 and K to 2, reshape
      // (M/(32nw), 2, nw, 2, 8, K/2, 2), permute (0, 2, 5, 1, 4, 6, 3), flatten to (M/32, 32K).
      const i64 nw = l.num_warps;
      const IndexTensor p = pad_to_multiple(s, 32 * nw, 2);
      const i64 M = p.shape[0], Kc = p.shape[1];
      return reshape(permute(reshape(p, {M / (32 * nw), 2, nw, 2, 8, Kc / 2, 2}), {0, 2, 5, 1, 4, 6, 3}),
                     {M / 32, Kc * 32});
    }
  }
  throw std::logic_error("oracle: unknown kind");
}

// Whether the defining code accepts the shape (the others must be refused with an error).
bool fits(const ScaleLayout& l, i64 R, i64 C) {
  if (l.kind == K::cutile_swizzle_32_4_4) return R % 128 == 0 && C % 4 == 0;
  if (l.kind == K::gluon_contiguous) return R % l.block_mn == 0 && C % l.block_k_scales == 0;
  if (l.kind == K::block_major_k) return C % l.block_k == 0;
  if (l.kind == K::sm90_mixed_folded) return R % 64 == 0 && C % (128 / l.group_size) == 0;
  return true;
}

std::vector<ScaleLayout> all_layouts() {
  std::vector<ScaleLayout> v;
  for (const auto& ki : kScaleLayoutKindTable) {
    switch (ki.kind) {
      case K::gluon_contiguous:
        for (auto [bm, bk, vec] : {std::array<i64, 3>{128, 128, 32}, {128, 128, 16}, {64, 64, 32}, {256, 256, 32},
                                   {32, 32, 32}})
          v.push_back(ScaleLayout::gluon_contiguous(bm, bk, vec));
        break;
      case K::triton_hopper:
        for (int nw : {1, 2, 4, 8}) v.push_back(ScaleLayout::triton_hopper(nw));
        break;
      case K::deepgemm_sm90_sfb:
        for (auto m : {ScaleMajor::k_major, ScaleMajor::mn_major}) v.push_back(ScaleLayout::deepgemm_sm90_sfb(m));
        break;
      case K::cutlass_blockwise:
        for (auto m : {ScaleMajor::k_major, ScaleMajor::mn_major}) v.push_back(ScaleLayout::cutlass_blockwise(m));
        break;
      case K::cublaslt_blk128x128:
        for (int a : {1, 4}) v.push_back(ScaleLayout::cublaslt_blk128x128(a));
        break;
      case K::gfx1250_mx:
        for (int kw : {0, 4, 8, 16}) v.push_back(ScaleLayout::gfx1250_mx(kw));
        break;
      case K::block_major_k:
        for (i64 bk : {1, 2, 4, 8}) v.push_back(ScaleLayout::block_major_k(bk));
        break;
      case K::sm90_mixed_folded:
        for (int gs : {8, 16, 32, 64, 128}) v.push_back(ScaleLayout::sm90_mixed_folded(gs));
        break;
      default:
        v.push_back(ScaleLayout::of(ki.kind));
    }
  }
  return v;
}

// layouts.md (b) lists the first six as verified for L1; the rest add tails of every residue and
// multiples for the layouts that do not pad.
const std::vector<std::array<i64, 2>> kShapes = {
    {128, 4}, {256, 8},  {384, 12}, {200, 7}, {1, 1},   {130, 5},   {500, 20}, {600, 22}, {64, 3},
    {33, 9},  {257, 17}, {8, 2},    {1000, 1}, {3, 33}, {512, 16},  {96, 6},   {256, 64}, {1024, 8},
    {640, 40}, {32, 2}, {128, 3}, {256, 2}, {300, 1}, {128, 32}, {192, 48}};

// A byte that differs between neighbouring logical indices and is never 0x00 or 0xFF.
std::uint8_t value_byte(i64 e) { return static_cast<std::uint8_t>(1 + (e * 37 + e / 254) % 253); }

class ScaleLayoutOracle : public ::testing::TestWithParam<ScaleLayout> {};

// Forward map, inverse map, storage size and shape, and both whole-tensor directions against the
// oracle, on every shape the layout accepts; the shapes it does not accept must throw.
TEST_P(ScaleLayoutOracle, ClosedFormsMatchReshapePermuteDefinition) {
  const ScaleLayout l = GetParam();
  int checked = 0;
  for (auto [R, C] : kShapes) {
    SCOPED_TRACE(to_string(l) + " R=" + std::to_string(R) + " C=" + std::to_string(C));
    if (!fits(l, R, C)) {
      EXPECT_THROW(check_shape(l, R, C), std::invalid_argument);
      EXPECT_THROW((void)storage_size(l, R, C), std::invalid_argument);
      continue;
    }
    ++checked;
    const IndexTensor t = oracle(l, R, C);
    const i64 S = storage_size(l, R, C);
    ASSERT_EQ(S, static_cast<i64>(t.data.size()));
    EXPECT_EQ(storage_shape(l, R, C), t.shape);

    // Inverse at every storage offset; forward at every logical index.
    std::vector<i64> pos(static_cast<std::size_t>(R * C), -1);
    i64 inverse_bad = 0, forward_bad = 0, first_bad = -1;
    for (i64 off = 0; off < S; ++off) {
      const i64 e = t.data[static_cast<std::size_t>(off)];
      const auto li = logical_index(l, R, C, off);
      const bool ok = e < 0 ? !li.has_value() : (li && (*li)[0] == e / C && (*li)[1] == e % C);
      if (!ok && inverse_bad++ == 0) first_bad = off;
      if (e >= 0) pos[static_cast<std::size_t>(e)] = off;
    }
    EXPECT_EQ(inverse_bad, 0) << "first wrong inverse at offset " << first_bad;
    const ScaleOffsets table(l, R, C);  // the separable form the bulk paths use
    EXPECT_EQ(table.storage_size(), S);
    EXPECT_EQ(table.padded(), S > R * C);
    ASSERT_EQ(table.row_parts().size(), static_cast<std::size_t>(R));
    ASSERT_EQ(table.col_parts().size(), static_cast<std::size_t>(C));
    for (i64 r = 0; r < R; ++r) EXPECT_EQ(table.row_parts()[static_cast<std::size_t>(r)], table.row_part(r));
    for (i64 c = 0; c < C; ++c) EXPECT_EQ(table.col_parts()[static_cast<std::size_t>(c)], table.col_part(c));
    for (i64 e = 0; e < R * C; ++e) {
      const i64 want = pos[static_cast<std::size_t>(e)];
      if ((offset(l, R, C, e / C, e % C) != want || table(e / C, e % C) != want) && forward_bad++ == 0)
        first_bad = e;
    }
    EXPECT_EQ(forward_bad, 0) << "first wrong forward offset at logical index " << first_bad;

    // Bytes, batch of 2, a visible pad value: out[b][off] is the value of logical index t[off].
    const i64 batch = 2;
    std::vector<std::uint8_t> in(static_cast<std::size_t>(batch * R * C)), out(static_cast<std::size_t>(batch * S));
    for (i64 i = 0; i < batch * R * C; ++i) in[static_cast<std::size_t>(i)] = value_byte(i);
    to_layout(l, batch, R, C, in, out, std::uint8_t{0x7E});
    i64 bulk_bad = 0;
    for (i64 b = 0; b < batch; ++b)
      for (i64 off = 0; off < S; ++off) {
        const i64 e = t.data[static_cast<std::size_t>(off)];
        const std::uint8_t want = e < 0 ? 0x7E : in[static_cast<std::size_t>(b * R * C + e)];
        bulk_bad += out[static_cast<std::size_t>(b * S + off)] != want;
      }
    EXPECT_EQ(bulk_bad, 0);
    std::vector<std::uint8_t> back(in.size());
    from_layout(l, batch, R, C, out, back);
    EXPECT_EQ(back, in);
    EXPECT_FALSE(find_padding_mismatch(l, batch, R, C, out, std::uint8_t{0x7E}).has_value());
    if (S > R * C) {
      // The last padding offset of the second matrix, corrupted, is the first mismatch reported
      // when the first matrix is clean.
      const auto last_pad = static_cast<i64>(std::find(t.data.rbegin(), t.data.rend(), -1).base() - t.data.begin()) - 1;
      out[static_cast<std::size_t>(S + last_pad)] = 0x01;
      EXPECT_EQ(find_padding_mismatch(l, batch, R, C, out, std::uint8_t{0x7E}), S + last_pad);
      EXPECT_EQ(find_padding_mismatch(l, batch, R, C, out, std::uint8_t{0x00}).value(),
                std::find(t.data.begin(), t.data.end(), -1) - t.data.begin());
    }

    // Floats (the Hopper layouts' element), batch of 1, default pad 0.0f.
    std::vector<float> fin(static_cast<std::size_t>(R * C)), fout(static_cast<std::size_t>(S), -1.0f);
    for (i64 e = 0; e < R * C; ++e) fin[static_cast<std::size_t>(e)] = static_cast<float>(e) + 0.5f;
    to_layout(l, 1, R, C, fin, fout);
    i64 float_bad = 0;
    for (i64 off = 0; off < S; ++off) {
      const i64 e = t.data[static_cast<std::size_t>(off)];
      const float want = e < 0 ? 0.0f : static_cast<float>(e) + 0.5f;
      float_bad += std::memcmp(&fout[static_cast<std::size_t>(off)], &want, sizeof want) != 0;
    }
    EXPECT_EQ(float_bad, 0);
    std::vector<float> fback(fin.size());
    from_layout(l, 1, R, C, fout, fback);
    EXPECT_EQ(fback, fin);
  }
  EXPECT_GE(checked, 4) << "too few shapes fit " << to_string(l);
}

std::string param_name(const ::testing::TestParamInfo<ScaleLayout>& info) {
  std::string s = to_string(info.param);
  for (char& ch : s)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return s;
}

INSTANTIATE_TEST_SUITE_P(AllLayouts, ScaleLayoutOracle, ::testing::ValuesIn(all_layouts()), param_name);

// ---- Golden offsets, worked by hand from the catalogue's definitions. ----

TEST(ScaleLayoutGolden, HandCheckedOffsets) {
  struct Case {
    ScaleLayout l;
    i64 R, C, r, c, off;
    const char* why;
  };
  const ScaleLayout L1 = ScaleLayout::of(K::tiled_128x4);
  const std::vector<Case> cases = {
      {ScaleLayout::of(K::linear), 3, 5, 2, 4, 14, "row-major: 2*5 + 4"},
      {L1, 256, 8, 0, 0, 0, "first byte of the first atom"},
      {L1, 256, 8, 1, 0, 16, "row 1 starts 16-byte line 1 of the atom"},
      {L1, 256, 8, 32, 0, 4, "rows 0, 32, 64, 96 share line 0, 4 bytes each"},
      {L1, 256, 8, 0, 5, 513, "block 5 is in the second K-atom (512) at byte c mod 4 = 1"},
      {L1, 256, 8, 130, 6, 1570,
       "M-tile 1, K-tile 1 with nk = 2: atom 3 (1536); line r mod 32 = 2 (+32); (130/32) mod 4 = 0; c mod 4 = 2"},
      {L1, 256, 8, 255, 7, 2047, "the last row and block: the last byte"},
      {ScaleLayout::of(K::tiled_128x4_k8), 256, 4, 128, 0, 1024,
       "C = 4 pads to 8, so nk = 2 and M-tile 1 starts at atom 2 (L1 would put it at 512)"},
      {ScaleLayout::of(K::tiled_128x4_transposed), 4, 256, 1, 130, 545,
       "L1 of the 256 x 4 transpose at (130, 1) with nk = 1: atom 1 (512) + 16*2 + 4*0 + 1"},
      {ScaleLayout::of(K::tiled_8x4), 16, 8, 9, 5, 101, "8x4 atom (1, 1) with nk = 2: 32*3, + 4*(9 mod 8) + 5 mod 4"},
      {ScaleLayout::gluon_contiguous(128, 128, 32), 256, 8, 130, 5, 1545,
       "[R/128, C/4, 128, 4]: tile (1, 1) = 512*3, + 4*(130 mod 128) + 5 mod 4"},
      {ScaleLayout::of(K::cdna4_mfma32), 64, 16, 33, 11, 901,
       "group (1, 1) = 32*16 + 256; 128*(11 mod 2) + 4*(33 mod 32) + (11 mod 8)/2 = 128 + 4 + 1"},
      {ScaleLayout::of(K::cdna4_mfma16), 64, 16, 49, 13, 839,
       "group (1, 1) = 768; 64*(13 mod 4) + 4*(49 mod 16) + 2*((13 mod 8)/4) + (49 mod 32)/16 = 64 + 4 + 2 + 1"},
      {ScaleLayout::of(K::deepgemm_sm90_sfa), 5, 3, 4, 2, 20, "leading dimension align(5, 4) = 8: 2*8 + 4"},
      {ScaleLayout::deepgemm_sm90_sfb(ScaleMajor::k_major), 3, 5, 2, 1, 11, "K-major: 2*5 + 1"},
      {ScaleLayout::deepgemm_sm90_sfb(ScaleMajor::mn_major), 3, 5, 2, 1, 5, "MN-major: 1*3 + 2"},
      {ScaleLayout::of(K::deepgemm_sm100_packed), 5, 6, 4, 5, 49,
       "word (5/4)*align(5,4) + 4 = 12, byte 4*12 + 5 mod 4 = 49"},
      {ScaleLayout::of(K::cublaslt_vec128), 5, 3, 4, 2, 14, "strides (1, M): 2*5 + 4"},
      {ScaleLayout::cublaslt_blk128x128(4), 3, 5, 2, 4, 20, "ld = rup(5, 4) = 8: 2*8 + 4"},
      {ScaleLayout::cublaslt_blk128x128(1), 3, 5, 2, 4, 14, "ld = 5: 2*5 + 4"},
      {ScaleLayout::cutlass_blockwise(ScaleMajor::mn_major), 5, 3, 1, 2, 11, "MN-major: 1 + 2*5"},
      {ScaleLayout::cutlass_blockwise(ScaleMajor::k_major), 5, 3, 1, 2, 5, "K-major: 1*3 + 2"},
      {ScaleLayout::triton_hopper(4), 200, 7, 150, 5, 1434,
       "R pads to 128*2 = 256, C to 8 (row width 256). 150 = 1*128 + 0*64 + 1*16 + 0*8 + 6 gives mb=1 a=0 w=1 "
       "cc=0 q=6; 5 = 2*2 + 1 gives kb=2 kk=1. Row mb*4 + w = 5, column (((4+0)*8+6)*2+1)*2+0 = 154"},
      {ScaleLayout::of(K::cutile_swizzle_32_4_4), 128, 4, 100, 3, 79,
       "line 100 mod 32 = 4 (64), group (100/32) = 3 (12), byte 3"},
      {ScaleLayout::of(K::gfx1250_mx), 256, 3, 161, 2, 401,
       "kw = 3: stripe 1 (128*3), lane 161 mod 32 = 1 (4*3), group (161/32) mod 4 = 1 (3), block 2"},
      {ScaleLayout::of(K::gfx1250_mx), 200, 7, 130, 6, 1570, "kw = 4, C pads to 8: as L1 at (130, 6)"},
      {ScaleLayout::gfx1250_mx(16), 256, 32, 161, 21, 4096 + 2048 + 4 * 16 + 16 + 5,
       "kw = 16: stripe 1 (128*32), atom column 1 (128*16), lane 1 (4*16), group 1 (16), block 21 mod 16 = 5"},
      {ScaleLayout::gfx1250_mx(8), 128, 5, 33, 4, 4 * 8 + 8 + 4, "C = 5 pads to kw = 8: lane 1 (4*8), group 1 (8), block 4"},
      {ScaleLayout::gfx1250_mx(16), 128, 3, 40, 2, 4 * 3 * 8 + 3 + 2,
       "C < 4: kw = C = 3, as without scale_k_width: lane 8 (4*3*8), group 1 (3), block 2"},
      {ScaleLayout::block_major_k(128), 3, 384, 2, 300, 2 * 3 * 128 + 2 * 128 + 44,
       "[K/128, M, 128]: block 300/128 = 2 (2*3*128), row 2 (2*128), byte 300 mod 128 = 44"},
      {ScaleLayout::block_major_k(4), 5, 8, 4, 3, 16 + 3, "block 0, row 4 (4*4), column 3"},
      {ScaleLayout::sm90_mixed_folded(32), 128, 8, 100, 6, 64 * 8 + 64 * 4 + 16 * 4 + 4 * 2 + 2,
       "row 100 = 64 + 16*2 + 4 (block 1, slice 2, folded row 4), block 6 = 4*1 + 2"},
      {ScaleLayout::sm90_mixed_folded(128), 64, 3, 63, 2, 64 * 2 + 16 * 3 + 15,
       "gpk 1, F 4: row 63 = 4*15 + 3 (slice 15, folded row 3), block 2 = K128 chunk 2"},
  };
  for (const Case& k : cases) {
    SCOPED_TRACE(to_string(k.l) + ": " + k.why);
    EXPECT_EQ(offset(k.l, k.R, k.C, k.r, k.c), k.off);
    const auto li = logical_index(k.l, k.R, k.C, k.off);
    ASSERT_TRUE(li.has_value());
    EXPECT_EQ((*li)[0], k.r);
    EXPECT_EQ((*li)[1], k.c);
  }
}

TEST(ScaleLayoutGolden, PaddingOffsetsDecodeToNothing) {
  // L1 with R = 130: row 130 would sit at line 2 of M-tile 1; it is padding.
  const ScaleLayout L1 = ScaleLayout::of(K::tiled_128x4);
  EXPECT_FALSE(logical_index(L1, 130, 5, 512 * 2 + 16 * 2).has_value());
  // C = 5 pads to 8: byte 3 of row 0's second K-atom group is block 7, padding.
  EXPECT_FALSE(logical_index(L1, 130, 5, 512 + 3).has_value());
  EXPECT_TRUE(logical_index(L1, 130, 5, 512).has_value());  // block 4
  // DeepGEMM SFA, R = 5: entries 5..7 of each column are the align-4 padding.
  const ScaleLayout sfa = ScaleLayout::of(K::deepgemm_sm90_sfa);
  EXPECT_FALSE(logical_index(sfa, 5, 3, 8 + 5).has_value());
  EXPECT_EQ(storage_size(sfa, 5, 3), 24);
}

// ---- The seed documents' worked examples. ----

// Seed 000 (cuda.tile mma_scaled): X_scale = torch.full((128, 4), 2.0, float8_e8m0fnu), then
// swizzle_32_4_4 gives a (1, 1, 32, 16) tensor. 2.0 in e8m0 is 0x80 (2^(128-127)).
TEST(ScaleLayoutSeed, CuTileSwizzle32x4x4Of128x4) {
  const ScaleLayout l = ScaleLayout::of(K::cutile_swizzle_32_4_4);
  EXPECT_EQ(storage_shape(l, 128, 4), (std::vector<i64>{1, 1, 32, 16}));
  const std::vector<std::uint8_t> full(128 * 4, 0x80);
  std::vector<std::uint8_t> out(512, 0);
  to_layout(l, 1, 128, 4, full, out);
  EXPECT_TRUE(std::all_of(out.begin(), out.end(), [](std::uint8_t b) { return b == 0x80; }));
  // The same call on distinct values: line m1 (16 bytes) of the single atom holds rows
  // m1, m1+32, m1+64, m1+96, four K-blocks each (reshape (1, 4, 32, 1, 4) -> permute (0,3,2,1,4)).
  std::vector<std::uint8_t> s(128 * 4);
  for (int i = 0; i < 512; ++i) s[static_cast<std::size_t>(i)] = value_byte(i);
  to_layout(l, 1, 128, 4, s, out);
  for (int m1 = 0; m1 < 32; ++m1)
    for (int m2 = 0; m2 < 4; ++m2)
      for (int k1 = 0; k1 < 4; ++k1)
        ASSERT_EQ(out[static_cast<std::size_t>(16 * m1 + 4 * m2 + k1)], s[static_cast<std::size_t>((m1 + 32 * m2) * 4 + k1)]);
  // unswizzle_32_4_4 (the kernel-side inverse) recovers the (M, K_s) view.
  std::vector<std::uint8_t> back(512);
  from_layout(l, 1, 128, 4, out, back);
  EXPECT_EQ(back, s);
  // It is tiled_128x4 exactly, on multiples.
  std::vector<std::uint8_t> l1(512);
  to_layout(ScaleLayout::of(K::tiled_128x4), 1, 128, 4, s, l1);
  EXPECT_EQ(l1, out);
}

// Seed 002 (Gluon tutorial) runs test_mma_scaled_pipelined at M, N = 500, 600 with K = 640 and 704.
// With MX scales (VEC_SIZE 32) A_scale is (500, 20): swizzle_scales_packed_block pads MN to 512 with
// zeros (torch.nn.functional.pad, constant 0) and returns a (4, 5, 32, 4, 4) tensor, which
// make_scales_descriptor views as (1, 4, 5, 2, 256) for TMA.
TEST(ScaleLayoutSeed, GluonPackedBlockM500Ks20) {
  const ScaleLayout l = ScaleLayout::of(K::tiled_128x4);
  const i64 R = 500, C = 20;
  EXPECT_EQ(storage_shape(l, R, C), (std::vector<i64>{4, 5, 32, 4, 4}));
  EXPECT_EQ(storage_size(l, R, C), 4 * 5 * 2 * 256);
  std::vector<std::uint8_t> s(static_cast<std::size_t>(R * C));
  for (i64 i = 0; i < R * C; ++i) s[static_cast<std::size_t>(i)] = value_byte(i);
  std::vector<std::uint8_t> out(10240, 0xEE);
  to_layout(l, 1, R, C, s, out);
  // Rows 500..511 are the padding: 12 rows x 20 blocks = 240 zero bytes, all in M-tile 3, at lines
  // (r mod 32) = 20..31 and byte group (r / 32) mod 4 = 3.
  i64 zeros_in_pad = 0, pad_count = 0;
  for (i64 off = 0; off < 10240; ++off) {
    const auto li = logical_index(l, R, C, off);
    if (!li) {
      ++pad_count;
      zeros_in_pad += out[static_cast<std::size_t>(off)] == 0;
      const i64 tile = off / 512, u = off % 512;
      EXPECT_EQ(tile / 5, 3);
      EXPECT_GE(u >> 4, 20);
      EXPECT_EQ((u >> 2) & 3, 3);
    }
  }
  EXPECT_EQ(pad_count, 240);
  EXPECT_EQ(zeros_in_pad, 240);
  // Element [m, k, m1, m2, k1] of the 5-D tensor is S[128m + 32m2 + m1][4k + k1] (the seed's
  // kernel-side unswizzle reshape/permute (0, 3, 2, 1, 4)); spot-check the last real row.
  const i64 r = 499, c = 19;  // m = 3, m2 = 3, m1 = 19; k = 4, k1 = 3
  EXPECT_EQ(out[static_cast<std::size_t>(((((3 * 5 + 4) * 32 + 19) * 4 + 3) * 4 + 3))],
            s[static_cast<std::size_t>(r * C + c)]);
  // N = 600 (B_scale (600, 20)) pads to 640: (5, 5, 32, 4, 4); K = 704 gives K_s = 22, padded to 24.
  EXPECT_EQ(storage_shape(l, 600, 20), (std::vector<i64>{5, 5, 32, 4, 4}));
  EXPECT_EQ(storage_shape(l, 500, 22), (std::vector<i64>{4, 6, 32, 4, 4}));
}

// ---- Identities layouts.md section (b) states, and what it says is *not* identical. ----

std::vector<std::uint8_t> image(const ScaleLayout& l, i64 R, i64 C) {
  std::vector<std::uint8_t> s(static_cast<std::size_t>(R * C)), out(static_cast<std::size_t>(storage_size(l, R, C)));
  for (i64 i = 0; i < R * C; ++i) s[static_cast<std::size_t>(i)] = value_byte(i);
  to_layout(l, 1, R, C, s, out);
  return out;
}

// The Gluon gfx1250 MXFP GEMM example's pack_scale (no padding; SCALE_KWIDTH = 4 if K_SCALE >= 4
// else K_SCALE): view (NON_K/128, 4, 32, K_SCALE/KW, KW), permute (0, 3, 2, 1, 4).
TEST(ScaleLayoutIdentity, Gfx1250IsTheGluonExamplePackScale) {
  for (auto [R, C] : {std::array<i64, 2>{128, 1}, {256, 2}, {384, 3}, {128, 4}, {256, 8}, {512, 12}}) {
    const i64 kw = C >= 4 ? 4 : C;
    const IndexTensor t = permute(reshape(logical_matrix(R, C), {R / 128, 4, 32, C / kw, kw}), {0, 3, 2, 1, 4});
    const ScaleLayout l = ScaleLayout::of(K::gfx1250_mx);
    ASSERT_EQ(storage_size(l, R, C), R * C);
    for (i64 off = 0; off < R * C; ++off) {
      const i64 e = t.data[static_cast<std::size_t>(off)];
      ASSERT_EQ(offset(l, R, C, e / C, e % C), off) << R << "x" << C;
    }
  }
}

// aiter shuffle_scale_batched (FP4 block-16 KV-cache scales) without scale_k_width picks
// SCALE_KWIDTH = min(16, next power of two >= SCALE_K) when SCALE_K >= 4, else SCALE_K, and refuses
// shapes that are not multiples: on the shapes it accepts it is gfx1250_mx with that width.
TEST(ScaleLayoutIdentity, AiterShuffleScaleBatchedIsGfx1250WithItsWidth) {
  for (auto [R, C] : {std::array<i64, 2>{128, 2}, {256, 4}, {128, 8}, {384, 16}, {128, 32}, {256, 48}, {128, 64}}) {
    i64 kw = C;
    if (C >= 4) {
      i64 p2 = 1;
      while (p2 < C) p2 *= 2;
      kw = std::min<i64>(16, p2);
    }
    ASSERT_EQ(C % kw, 0);
    const IndexTensor t =
        permute(reshape(logical_matrix(R, C), {1, R / 128, 4, 32, C / kw, kw}), {0, 1, 4, 3, 2, 5});
    const ScaleLayout l = ScaleLayout::gfx1250_mx(static_cast<std::int32_t>(C >= 4 ? kw : 4));
    ASSERT_EQ(storage_size(l, R, C), R * C);
    for (i64 off = 0; off < R * C; ++off) {
      const i64 e = t.data[static_cast<std::size_t>(off)];
      ASSERT_EQ(offset(l, R, C, e / C, e % C), off) << R << "x" << C;
    }
  }
  // Width 4 is the triton_kernels layout (and L1 wherever C % 4 == 0).
  EXPECT_EQ(image(ScaleLayout::gfx1250_mx(4), 256, 12), image(ScaleLayout::of(K::gfx1250_mx), 256, 12));
  EXPECT_EQ(image(ScaleLayout::gfx1250_mx(4), 256, 12), image(ScaleLayout::of(K::tiled_128x4), 256, 12));
  EXPECT_NE(image(ScaleLayout::gfx1250_mx(8), 128, 8), image(ScaleLayout::of(K::tiled_128x4), 128, 8));
}

// aiter's arch-aware scale shuffles (aiter/ops/triton/.../shuffle.py) tile the last two dimensions
// with `_shuffle_scale_tile_gfx950` / `_shuffle_scale_tile_gfx1250`. Its MoE entry point
// shuffle_scale_moe transposes the (E, K_s, N) scales first and hands back the transpose of the
// tiled tensor, a view whose storage is the tile of the logical (N, K_s) matrix. So both the GEMM
// and the MoE shuffles store existing layouts of the (MN, K_s) scale matrix:
//   gfx950, preshuffle_factor 32, scale_kwidth 8  -> cdna4_mfma16;
//   gfx1250, preshuffle_factor P, scale_kwidth W  -> gluon_contiguous with BM = P, SBK = W.
TEST(ScaleLayoutIdentity, AiterScaleShufflesAreCdna4AndGluonContiguous) {
  for (auto [R, C] : {std::array<i64, 2>{32, 8}, {64, 16}, {96, 24}, {256, 8}}) {
    const IndexTensor s = logical_matrix(R, C);
    // _shuffle_scale_tile_gfx950(s, 32, 8): view (-1, S, 2, 16, KC, 2, 4, 1), permute
    // (0, 1, 4, 6, 3, 5, 2, 7).
    const IndexTensor gfx950 =
        permute(reshape(s, {1, R / 32, 2, 16, C / 8, 2, 4, 1}), {0, 1, 4, 6, 3, 5, 2, 7});
    // _shuffle_scale_tile_gfx1250(s, 32, 8): view (-1, S, 32, KC, 8), permute (0, 1, 3, 2, 4).
    const IndexTensor gfx1250 = permute(reshape(s, {1, R / 32, 32, C / 8, 8}), {0, 1, 3, 2, 4});
    const ScaleLayout cdna4 = ScaleLayout::of(K::cdna4_mfma16), contiguous = ScaleLayout::gluon_contiguous(32, 8, 1);
    for (i64 off = 0; off < R * C; ++off) {
      const i64 a = gfx950.data[static_cast<std::size_t>(off)], b = gfx1250.data[static_cast<std::size_t>(off)];
      ASSERT_EQ(offset(cdna4, R, C, a / C, a % C), off) << R << "x" << C;
      ASSERT_EQ(offset(contiguous, R, C, b / C, b % C), off) << R << "x" << C;
    }
  }
}

// aiter's weight preshuffles (the element bytes, not the scales): shuffle_weight(x, layout=(IN,
// IK)) views (-1, N/IN, IN, K/BK, BK/K16, K16) with BK = 2*IK elements and K16 = 16 bytes of
// elements, permutes (0, 1, 3, 4, 2, 5); the gfx1250 WMMA preshuffle views (N/16, 16, K/32, 2, 16)
// and permutes (0, 2, 3, 1, 4). Counted in bytes, both are gluon_contiguous of the (N, row bytes)
// matrix with BM = IN (16 for gfx1250) and SBK = 16: tiles of IN rows x 16 bytes, 16-byte chunks
// of a row fastest. (The 4-bit use_int4 path is not covered.)
TEST(ScaleLayoutIdentity, AiterWeightShufflesAreGluonContiguousOfBytes) {
  for (auto [IN, IK, elem_bytes] : {std::array<i64, 3>{16, 16, 1}, {16, 16, 2}, {32, 16, 1}, {16, 32, 2}}) {
    const i64 N = 2 * IN, Kel = 4 * 2 * IK;  // Kel elements per row: 4 tiles of BK
    const i64 row_bytes = Kel * elem_bytes, k16 = 16 / elem_bytes, BK = 2 * IK;
    // Element (n, k) covers bytes k*elem_bytes .. +elem_bytes-1 of row n; the permute moves whole
    // elements, so following byte 0 of each element is enough.
    const IndexTensor t =
        permute(reshape(logical_matrix(N, Kel), {1, N / IN, IN, Kel / BK, BK / k16, k16}), {0, 1, 3, 4, 2, 5});
    const ScaleLayout l = ScaleLayout::gluon_contiguous(IN, 16, 1);
    for (i64 pos = 0; pos < N * Kel; ++pos) {
      const i64 e = t.data[static_cast<std::size_t>(pos)], n = e / Kel, k = e % Kel;
      ASSERT_EQ(offset(l, N, row_bytes, n, k * elem_bytes), pos * elem_bytes)
          << "layout (" << IN << ", " << IK << "), " << elem_bytes << "-byte elements";
    }
  }
  // use_int4 = True on a 1-byte tensor: chunks of K = 32 elements instead of 16 // element_size.
  for (auto [IN, IK] : {std::array<i64, 2>{16, 16}, {32, 32}}) {
    const i64 N = 2 * IN, Kb = 3 * 2 * IK, BK = 2 * IK;
    const IndexTensor t = permute(reshape(logical_matrix(N, Kb), {1, N / IN, IN, Kb / BK, BK / 32, 32}), {0, 1, 3, 4, 2, 5});
    for (i64 off = 0; off < N * Kb; ++off) {
      const i64 e = t.data[static_cast<std::size_t>(off)];
      ASSERT_EQ(offset(ScaleLayout::gluon_contiguous(IN, 32, 1), N, Kb, e / Kb, e % Kb), off) << "use_int4 " << IN;
    }
  }
  // shuffle_weight_NK(x, inst_N, inst_K) (the ck_tile MoE preshuffle): kPerLane = inst_K / (64 /
  // inst_N) elements per lane; view (-1, N/inst_N, inst_N, K/inst_K, 64/inst_N, kPerLane), permute
  // (0, 1, 3, 4, 2, 5) -> gluon_contiguous with BM = inst_N and SBK = kPerLane.
  for (auto [iN, iK] : {std::array<i64, 2>{16, 32}, {16, 64}, {32, 64}, {32, 128}}) {
    const i64 kpl = iK / (64 / iN), N = 3 * iN, Kb = 2 * iK;
    const IndexTensor t = permute(reshape(logical_matrix(N, Kb), {1, N / iN, iN, Kb / iK, 64 / iN, kpl}), {0, 1, 3, 4, 2, 5});
    for (i64 off = 0; off < N * Kb; ++off) {
      const i64 e = t.data[static_cast<std::size_t>(off)];
      ASSERT_EQ(offset(ScaleLayout::gluon_contiguous(iN, kpl, 1), N, Kb, e / Kb, e % Kb), off) << "NK " << iN << "x" << iK;
    }
  }
  const i64 N = 32, Kb = 96;  // the gfx1250 preshuffle, 2-D path
  const IndexTensor g = permute(reshape(logical_matrix(N, Kb), {N / 16, 16, Kb / 32, 2, 16}), {0, 2, 3, 1, 4});
  for (i64 off = 0; off < N * Kb; ++off) {
    const i64 e = g.data[static_cast<std::size_t>(off)];
    ASSERT_EQ(offset(ScaleLayout::gluon_contiguous(16, 16, 1), N, Kb, e / Kb, e % Kb), off);
  }
}

TEST(ScaleLayoutIdentity, SameBytesUnderOtherNames) {
  // gfx1250 = L1 from 4 blocks on; below 4 its atoms narrow to C blocks instead of padding.
  for (auto [R, C] : {std::array<i64, 2>{200, 7}, {256, 8}, {130, 4}, {1, 9}})
    EXPECT_EQ(image(ScaleLayout::of(K::gfx1250_mx), R, C), image(ScaleLayout::of(K::tiled_128x4), R, C)) << R << "x" << C;
  EXPECT_EQ(storage_size(ScaleLayout::of(K::gfx1250_mx), 128, 3), 384);
  EXPECT_EQ(storage_size(ScaleLayout::of(K::tiled_128x4), 128, 3), 512);
  // cuBLASLt 1x128 (strides (1, M)) = DeepGEMM SFA when M is a multiple of 4 = CUTLASS MN-major.
  for (auto [R, C] : {std::array<i64, 2>{8, 3}, {128, 7}}) {
    EXPECT_EQ(image(ScaleLayout::of(K::cublaslt_vec128), R, C), image(ScaleLayout::of(K::deepgemm_sm90_sfa), R, C));
    EXPECT_EQ(image(ScaleLayout::of(K::cublaslt_vec128), R, C),
              image(ScaleLayout::cutlass_blockwise(ScaleMajor::mn_major), R, C));
  }
  // ... but not when M is not: SFA keeps a 16-byte column pitch.
  EXPECT_NE(storage_size(ScaleLayout::of(K::cublaslt_vec128), 5, 3),
            storage_size(ScaleLayout::of(K::deepgemm_sm90_sfa), 5, 3));
  // K-major DeepGEMM SFB = K-major CUTLASS = linear.
  EXPECT_EQ(image(ScaleLayout::deepgemm_sm90_sfb(ScaleMajor::k_major), 9, 5), image(ScaleLayout::of(K::linear), 9, 5));
  EXPECT_EQ(image(ScaleLayout::cutlass_blockwise(ScaleMajor::k_major), 9, 5), image(ScaleLayout::of(K::linear), 9, 5));
  // triton_kernels K_s -> 8 agrees with L1 when ceil(C/4) is even ...
  EXPECT_EQ(image(ScaleLayout::of(K::tiled_128x4_k8), 256, 8), image(ScaleLayout::of(K::tiled_128x4), 256, 8));
  // ... and not otherwise: R = 256, C = 4 is 2048 bytes against 1024 (layouts.md L1b, verified).
  EXPECT_EQ(storage_size(ScaleLayout::of(K::tiled_128x4_k8), 256, 4), 2048);
  EXPECT_EQ(storage_size(ScaleLayout::of(K::tiled_128x4), 256, 4), 1024);
  // Gluon contiguous with BLOCK_MN = 128 and 4 blocks per tile is *not* L1 (rows are not interleaved).
  EXPECT_NE(image(ScaleLayout::gluon_contiguous(128, 128, 32), 128, 4), image(ScaleLayout::of(K::tiled_128x4), 128, 4));
  // cdna4 16 and 32 differ.
  EXPECT_NE(image(ScaleLayout::of(K::cdna4_mfma16), 32, 8), image(ScaleLayout::of(K::cdna4_mfma32), 32, 8));
}

// TRT-LLM's WFP4A16FusedMoEMethod.load_quant_scales (the SM90 mixed-input MXFP4 x BF16 MoE; also
// FlashInfer's interleave_moe_scales_for_hopper_mixed_gemm from d4544921c until 5823159c3): one
// expert's (R, K_s) scales reshaped (R, K_s / 4, 4), permuted (1, 0, 2), stored (K_s / 4, 4 R), with
// interleave = 128 // group_size = 4 and hidden % (32 * 4) == 0 asserted. That is L9, DeepGEMM's
// packed word order, whenever R % 4 == 0 (L9 pads R to 4, this reshape does not).
TEST(ScaleLayoutIdentity, TrtllmWfp4a16ScalesAreDeepGemmSm100Packed) {
  for (auto [R, C] : {std::array<i64, 2>{64, 4}, {256, 8}, {384, 20}, {4, 64}}) {
    const IndexTensor t = reshape(permute(reshape(logical_matrix(R, C), {R, C / 4, 4}), {1, 0, 2}), {C / 4, 4 * R});
    const ScaleLayout l = ScaleLayout::of(K::deepgemm_sm100_packed);
    ASSERT_EQ(storage_size(l, R, C), static_cast<i64>(t.data.size()));
    for (i64 off = 0; off < static_cast<i64>(t.data.size()); ++off) {
      const i64 e = t.data[static_cast<std::size_t>(off)];
      ASSERT_EQ(offset(l, R, C, e / C, e % C), off) << R << "x" << C;
    }
  }
  // The folded layout that replaced it is another order: 64-row pieces, 16-byte rows of 4 slices.
  EXPECT_NE(image(ScaleLayout::sm90_mixed_folded(32), 64, 4), image(ScaleLayout::of(K::deepgemm_sm100_packed), 64, 4));
}

// layouts.md L9: on chip, DeepGEMM SM100 transposes each 128-word chunk (lane l gathers words l,
// l+32, l+64, l+96 and stores them at 4l..4l+3), and that reproduces the L1 atom exactly.
TEST(ScaleLayoutIdentity, DeepGemmSm100WordsTransposeIntoTheL1Atom) {
  const i64 R = 256, C = 12;
  const auto packed = image(ScaleLayout::of(K::deepgemm_sm100_packed), R, C);
  const auto l1 = image(ScaleLayout::of(K::tiled_128x4), R, C);
  const i64 Rp = 256, nk = 3;
  for (i64 kg = 0; kg < nk; ++kg)
    for (i64 mt = 0; mt < R / 128; ++mt) {
      const i64 chunk = kg * Rp + 128 * mt;  // first word of this 128-row chunk of K-group kg
      const i64 atom = 512 * (mt * nk + kg);
      for (i64 lane = 0; lane < 32; ++lane)
        for (i64 i = 0; i < 4; ++i)
          for (i64 b = 0; b < 4; ++b)
            ASSERT_EQ(l1[static_cast<std::size_t>(atom + 4 * (4 * lane + i) + b)],
                      packed[static_cast<std::size_t>(4 * (chunk + lane + 32 * i) + b)]);
    }
}

// tcgen05.cp 32x128b.warpx4 writes SMEM byte 16i + 4w + b of an atom to TMEM lane i, column w, byte
// b; the tcgen05.mma scale-factor map wants SF(row r, block j) at lane r mod 32, column r / 32,
// byte j. So the L1 atom must hold S[r][j] at 16*(r mod 32) + 4*(r/32) + j.
TEST(ScaleLayoutIdentity, L1AtomFeedsTheTmemScaleMap) {
  const ScaleLayout l = ScaleLayout::of(K::tiled_128x4);
  for (i64 r = 0; r < 128; ++r)
    for (i64 j = 0; j < 4; ++j) ASSERT_EQ(offset(l, 128, 4, r, j), 16 * (r % 32) + 4 * (r / 32) + j);
}

// ---- Batches, empty matrices, errors. ----

TEST(ScaleLayoutBulk, BatchStrideIsStorageSize) {
  const ScaleLayout l = ScaleLayout::of(K::tiled_128x4);
  const i64 R = 130, C = 5, S = storage_size(l, R, C), batch = 3;
  ASSERT_EQ(S, 256 * 8);
  std::vector<std::uint8_t> in(static_cast<std::size_t>(batch * R * C)), out(static_cast<std::size_t>(batch * S));
  for (i64 i = 0; i < batch * R * C; ++i) in[static_cast<std::size_t>(i)] = value_byte(i);
  to_layout(l, batch, R, C, in, out);
  for (i64 b = 0; b < batch; ++b)
    EXPECT_EQ(out[static_cast<std::size_t>(b * S + offset(l, R, C, 129, 4))],
              in[static_cast<std::size_t>(b * R * C + 129 * C + 4)]);
}

TEST(ScaleLayoutBulk, EmptyMatricesHaveNoStorage) {
  for (const ScaleLayout& l : all_layouts()) {
    if (!fits(l, 7, 5)) continue;  // layouts with divisibility rules
    SCOPED_TRACE(to_string(l));
    EXPECT_EQ(storage_size(l, 0, 5), 0);
    EXPECT_EQ(storage_size(l, 7, 0), 0);
    std::vector<std::uint8_t> none;
    EXPECT_NO_THROW(to_layout(l, 4, 0, 5, none, std::span<std::uint8_t>(none)));
  }
}

TEST(ScaleLayoutErrors, ShapesThatDoNotFitNameTheRule) {
  EXPECT_NE(invalid_argument_message([] { check_shape(ScaleLayout::gluon_contiguous(128, 128, 32), 130, 4); })
                .find("R must be a multiple of BLOCK_MN = 128"),
            std::string::npos);
  EXPECT_NE(invalid_argument_message([] { check_shape(ScaleLayout::gluon_contiguous(128, 128, 32), 128, 6); })
                .find("C must be a multiple of BLOCK_K / VEC_SIZE = 4"),
            std::string::npos);
  EXPECT_NE(invalid_argument_message([] { check_shape(ScaleLayout::of(K::cutile_swizzle_32_4_4), 200, 4); })
                .find("swizzle_32_4_4 does not pad: R must be a multiple of 128"),
            std::string::npos);
  EXPECT_NE(invalid_argument_message([] { check_shape(ScaleLayout::of(K::cutile_swizzle_32_4_4), 128, 5); })
                .find("C must be a multiple of 4"),
            std::string::npos);
  EXPECT_NE(invalid_argument_message([] { check_shape(ScaleLayout::block_major_k(128), 256, 320); })
                .find("convert_to_block_layout does not pad: C must be a multiple of block_k = 128"),
            std::string::npos);
  EXPECT_NE(invalid_argument_message([] { check_shape(ScaleLayout::sm90_mixed_folded(32), 96, 8); })
                .find("interleave_moe_scales_for_sm90_mixed_gemm does not pad: R must be a multiple of 64"),
            std::string::npos);
  EXPECT_NE(invalid_argument_message([] { check_shape(ScaleLayout::sm90_mixed_folded(16), 64, 12); })
                .find("C must be a multiple of 128 / group_size = 8"),
            std::string::npos);
  EXPECT_THROW(check_shape(ScaleLayout::of(K::linear), -1, 4), std::invalid_argument);
  EXPECT_THROW(check_shape(ScaleLayout::of(K::linear), i64{1} << 41, 4), std::invalid_argument);
  EXPECT_THROW(check_shape(ScaleLayout::of(K::linear), i64{1} << 40, i64{1} << 40), std::invalid_argument);
}

TEST(ScaleLayoutErrors, IndicesSizesAndPads) {
  const ScaleLayout l = ScaleLayout::of(K::tiled_128x4);
  EXPECT_THROW((void)offset(l, 130, 5, 130, 0), std::invalid_argument);
  EXPECT_THROW((void)offset(l, 130, 5, 0, 5), std::invalid_argument);
  EXPECT_THROW((void)offset(l, 130, 5, -1, 0), std::invalid_argument);
  EXPECT_THROW((void)logical_index(l, 130, 5, 2048), std::invalid_argument);
  EXPECT_THROW((void)logical_index(l, 130, 5, -1), std::invalid_argument);
  std::vector<std::uint8_t> in(130 * 5), out(2048), short_out(2047);
  EXPECT_THROW(to_layout(l, 1, 130, 5, in, short_out), std::invalid_argument);
  EXPECT_THROW(to_layout(l, 2, 130, 5, in, out), std::invalid_argument);
  EXPECT_THROW(to_layout(l, -1, 130, 5, in, out), std::invalid_argument);
  EXPECT_THROW(from_layout(l, 1, 130, 5, short_out, in), std::invalid_argument);
  // 0xFF is NaN in ue8m0 and in (u)e4m3; a NaN float pad is refused too.
  EXPECT_THROW(to_layout(l, 1, 130, 5, in, out, std::uint8_t{0xFF}), std::invalid_argument);
  std::vector<float> fin(130 * 5), fout(2048);
  EXPECT_THROW(to_layout(l, 1, 130, 5, fin, fout, std::numeric_limits<float>::quiet_NaN()), std::invalid_argument);
  EXPECT_NO_THROW(to_layout(l, 1, 130, 5, in, out));
  EXPECT_EQ(out[2047], 0x00);  // the default pad is 0x00 (ue8m0 2^-127, ue4m3 0.0)
  // 2^62 empty items: nothing to move, at once (one empty call each would never end).
  std::vector<std::uint8_t> none;
  EXPECT_NO_THROW(to_layout(ScaleLayout::of(K::linear), std::int64_t{1} << 62, 0, 4, none, std::span<std::uint8_t>(none)));
  EXPECT_NO_THROW(from_layout(l, std::int64_t{1} << 62, 4, 0, none, std::span<std::uint8_t>(none)));
}

TEST(ScaleLayoutErrors, ParametersAreValidated) {
  EXPECT_THROW(ScaleLayout::of(K::gluon_contiguous), std::invalid_argument);
  EXPECT_THROW(ScaleLayout::of(K::triton_hopper), std::invalid_argument);
  EXPECT_THROW(ScaleLayout::of(K::deepgemm_sm90_sfb), std::invalid_argument);
  EXPECT_THROW(ScaleLayout::gluon_contiguous(128, 100, 32), std::invalid_argument);  // BLOCK_K % VEC_SIZE
  EXPECT_THROW(ScaleLayout::gluon_contiguous(0, 128, 32), std::invalid_argument);
  EXPECT_THROW(ScaleLayout::triton_hopper(3), std::invalid_argument);  // not a power of two
  EXPECT_THROW(ScaleLayout::triton_hopper(0), std::invalid_argument);
  EXPECT_THROW(ScaleLayout::cublaslt_blk128x128(2), std::invalid_argument);
  EXPECT_THROW(ScaleLayout::of(K::block_major_k), std::invalid_argument);
  EXPECT_THROW(ScaleLayout::block_major_k(0), std::invalid_argument);
  EXPECT_THROW(ScaleLayout::gfx1250_mx(2), std::invalid_argument);  // aiter asserts 4, 8 or 16
  EXPECT_THROW(ScaleLayout::gfx1250_mx(32), std::invalid_argument);
  EXPECT_NO_THROW(ScaleLayout::of(K::gfx1250_mx));  // the width is optional
  EXPECT_THROW(ScaleLayout::of(K::sm90_mixed_folded), std::invalid_argument);
  for (int gs : {0, 1, 2, 4, 12, 48, 256}) EXPECT_THROW(ScaleLayout::sm90_mixed_folded(gs), std::invalid_argument) << gs;
  ScaleLayout stray_group = ScaleLayout::of(K::tiled_128x4);
  stray_group.group_size = 32;
  EXPECT_THROW(validate(stray_group), std::invalid_argument);
  ScaleLayout stray_width = ScaleLayout::of(K::tiled_128x4);
  stray_width.scale_k_width = 8;
  EXPECT_THROW(validate(stray_width), std::invalid_argument);
  ScaleLayout stray_block = ScaleLayout::of(K::linear);
  stray_block.block_k = 128;
  EXPECT_THROW(validate(stray_block), std::invalid_argument);
  ScaleLayout stray = ScaleLayout::of(K::tiled_128x4);
  stray.num_warps = 4;  // a parameter tiled_128x4 does not have
  EXPECT_THROW(validate(stray), std::invalid_argument);
  EXPECT_THROW((void)storage_size(stray, 128, 4), std::invalid_argument);
  ScaleLayout bad_kind;
  bad_kind.kind = static_cast<K>(kScaleLayoutKindCount);
  EXPECT_THROW(validate(bad_kind), std::invalid_argument);
}

// ---- Text form. ----

TEST(ScaleLayoutText, RoundTripsAndRejects) {
  for (const ScaleLayout& l : all_layouts()) {
    const std::string s = to_string(l);
    const auto p = parse_scale_layout(s);
    ASSERT_TRUE(p.has_value()) << s;
    EXPECT_EQ(*p, l) << s;
  }
  EXPECT_EQ(to_string(ScaleLayout::gluon_contiguous(128, 256, 32)), "gluon_contiguous:block_mn=128,block_k_scales=8");
  EXPECT_EQ(to_string(ScaleLayout::triton_hopper(8)), "triton_hopper:num_warps=8");
  EXPECT_EQ(to_string(ScaleLayout::cutlass_blockwise()), "cutlass_blockwise:major=mn");
  EXPECT_EQ(to_string(ScaleLayout::of(K::gfx1250_mx)), "gfx1250_mx");
  EXPECT_EQ(to_string(ScaleLayout::gfx1250_mx(16)), "gfx1250_mx:scale_k_width=16");
  EXPECT_EQ(to_string(ScaleLayout::block_major_k(128)), "block_major_k:block_k=128");
  EXPECT_EQ(to_string(ScaleLayout::block_major_k(128, RowOrder::trtllm_shuffle16)),
            "block_major_k:block_k=128,rows=trtllm_shuffle16");
  EXPECT_EQ(to_string(ScaleLayout::sm90_mixed_folded(32)), "sm90_mixed_folded:group_size=32");
  EXPECT_EQ(*parse_scale_layout("block_major_k:rows=gated_act,block_k=64"),
            ScaleLayout::block_major_k(64, RowOrder::gated_act));
  EXPECT_EQ(*parse_scale_layout("gluon_contiguous:block_k_scales=4,block_mn=64"),
            ScaleLayout::gluon_contiguous(64, 128, 32));
  for (const char* bad : {"", "tiled_128x5", "tiled_128x4:", "tiled_128x4:num_warps=4", "gluon_contiguous",
                          "gluon_contiguous:block_mn=128", "gluon_contiguous:block_mn=128,block_k_scales=4,",
                          "gluon_contiguous:block_mn=128,block_mn=128,block_k_scales=4",
                          "gluon_contiguous:block_mn=x,block_k_scales=4", "gluon_contiguous:block_mn=0,block_k_scales=4",
                          "triton_hopper:num_warps=6", "deepgemm_sm90_sfb:major=row", "cutlass_blockwise",
                          "cublaslt_blk128x128:ld_align=2", "linear:major=k", "block_major_k",
                          "block_major_k:rows=gated_act", "block_major_k:block_k=0", "block_major_k:block_k=12x",
                          "block_major_k:block_k=8,block_k=8", "gfx1250_mx:scale_k_width=2", "gfx1250_mx:scale_k_width=0",
                          "gfx1250_mx:rows=gated_act", "tiled_128x4:scale_k_width=8", "linear:block_k=4",
                          "sm90_mixed_folded", "sm90_mixed_folded:group_size=4", "sm90_mixed_folded:group_size=32x",
                          "sm90_mixed_folded:group_size=32,group_size=32", "sm90_mixed_folded:group_size=32,rows=gated_act",
                          "tiled_128x4:group_size=32"}) {
    EXPECT_FALSE(parse_scale_layout(bad).has_value()) << bad;
    EXPECT_THROW(scale_layout_from_string(bad), std::invalid_argument) << bad;
  }
  try {
    scale_layout_from_string("cutlass_blockwise");
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("needs the parameter major"), std::string::npos) << e.what();
  }
}

TEST(ScaleLayoutText, KindTableIsIndexedByKind) {
  for (int i = 0; i < kScaleLayoutKindCount; ++i) {
    const auto k = static_cast<K>(i);
    EXPECT_EQ(info(k).kind, k);
    EXPECT_EQ(to_string(k), info(k).name);
  }
}

// The table's `parameters` column (what `blockscale layout list` prints) against the parser: every
// listed key is one the kind reads, every other key is refused as unknown, and exactly the kinds
// with a required (unbracketed) key refuse ScaleLayout::of.
TEST(ScaleLayoutText, KindTableListsTheParametersTheParserReads) {
  const std::vector<std::string> all_keys = {"block_mn", "block_k_scales", "num_warps", "major",
                                             "ld_align", "rows",           "block_k",   "scale_k_width",
                                             "group_size"};
  for (const ScaleLayoutKindInfo& ki : kScaleLayoutKindTable) {
    SCOPED_TRACE(ki.name);
    std::vector<std::string> listed;
    bool required = false;
    std::string word;
    for (const char* p = ki.parameters;; ++p) {
      if (*p == ' ' || *p == '\0') {
        if (!word.empty()) {
          const bool optional = word.front() == '[';
          if (optional) word = word.substr(1, word.size() - 2);
          required = required || !optional;
          listed.push_back(word);
          word.clear();
        }
        if (*p == '\0') break;
      } else {
        word += *p;
      }
    }
    for (const std::string& key : all_keys) {
      std::string why;
      try {
        (void)scale_layout_from_string(std::string(ki.name) + ":" + key + "=?");
      } catch (const std::invalid_argument& e) {
        why = e.what();
      }
      const bool unknown = why.find("has no parameter '" + key + "'") != std::string::npos;
      const bool is_listed = std::find(listed.begin(), listed.end(), key) != listed.end();
      EXPECT_NE(unknown, is_listed) << key << ": " << why;
    }
    bool of_throws = false;
    try {
      (void)ScaleLayout::of(ki.kind);
    } catch (const std::invalid_argument&) {
      of_throws = true;
    }
    EXPECT_EQ(of_throws, required);
  }
}

}  // namespace
}  // namespace blockscale
