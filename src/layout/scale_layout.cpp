// SPDX-License-Identifier: Apache-2.0
// Scale-factor layouts (docs/layouts.md). Every layout here is *separable*: its forward map is
//   off(r, c) = row_term(r) + col_term(c),
// because each one decomposes r and c into mixed-radix digits independently and gives every digit
// its own stride. The closed forms below are those of the catalogue split into the two terms;
// whole-tensor conversion tabulates both terms once and then moves one element per add.
#include "blockscale/layout/scale_layout.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <type_traits>

namespace blockscale {

namespace {

using i64 = std::int64_t;

constexpr i64 cdiv(i64 a, i64 b) { return (a + b - 1) / b; }
constexpr i64 rup(i64 a, i64 b) { return cdiv(a, b) * b; }

// Extents beyond 2^40 or storage beyond 2^62 elements are refused so no index arithmetic below can
// overflow an int64.
constexpr i64 kMaxExtent = i64{1} << 40;
constexpr i64 kMaxStorage = i64{1} << 62;

std::string kind_name(ScaleLayoutKind k) {
  const auto i = static_cast<std::size_t>(k);
  if (i >= kScaleLayoutKindTable.size()) throw std::invalid_argument("scale layout: unknown ScaleLayoutKind");
  return kScaleLayoutKindTable[i].name;
}

[[noreturn]] void fail(const ScaleLayout& l, i64 R, i64 C, const std::string& rule) {
  throw std::invalid_argument("scale layout " + to_string(l) + " with R=" + std::to_string(R) +
                              ", C=" + std::to_string(C) + ": " + rule);
}

// Row orders (RowOrder). gated_act interleaves the two halves (TRT-LLM
// reorderRowsForGatedActGemm: stored row 2i holds row i, 2i+1 holds R/2 + i); the trtllm-gen
// shuffle moves row q of each block of 8n rows to (q mod n)*8 + floor(q/n), n = block / 8
// (srcToDstBlk16RowMap, srcToDstBlk32RowMap). The gated interleave comes first.
i64 stored_row(const RowOrderInfo& o, i64 R, i64 r) {
  if (o.gated_act) r = r < R / 2 ? 2 * r : 2 * (r - R / 2) + 1;
  if (o.shuffle_block != 0) {
    const i64 n = o.shuffle_block / 8, q = r % o.shuffle_block;
    r += (q % n) * 8 + q / n - q;
  }
  return r;
}

// The inverse of stored_row: the logical row that stored row j holds.
i64 source_row(const RowOrderInfo& o, i64 R, i64 j) {
  if (o.shuffle_block != 0) {
    const i64 n = o.shuffle_block / 8, q = j % o.shuffle_block;
    j += n * (q % 8) + q / 8 - q;
  }
  if (o.gated_act) j = j % 2 == 0 ? j / 2 : R / 2 + j / 2;
  return j;
}

// Describes why R rows do not fit an order (the asserts of the TRT-LLM / FlashInfer index
// functions), or returns an empty string.
std::string row_order_problem(const RowOrderInfo& o, i64 R) {
  const std::string name = std::string("row order ") + o.name;
  if (o.shuffle_block != 0 && R % o.shuffle_block != 0)
    return name + ": the trtllm-gen shuffle (shuffleMatrixA) moves whole blocks of " +
           std::to_string(o.shuffle_block) + " rows: R must be a multiple of " + std::to_string(o.shuffle_block);
  if (o.gated_act && R % 2 != 0)
    return name + ": reorderRowsForGatedActGemm interleaves two halves: R must be even";
  return {};
}

// The constants of one layout at one R x C. The transposed L1 (L1a) is L1 of the C x R matrix, so
// it is computed as that L1 with r and c exchanged (`swap`).
struct Geometry {
  ScaleLayout l;
  i64 R = 0, C = 0;    // logical extents as the caller gave them
  bool swap = false;   // tiled_128x4_transposed
  i64 Rb = 0, Cb = 0;  // extents in the base layout's roles (= R, C unless swap)
  i64 Rp = 0, Cp = 0;  // padded extents (base roles)
  i64 ld = 0;          // a leading dimension / tile count where the layout has one
  i64 kw = 4;          // blocks per atom row of the 128-row layouts (gfx1250_mx: min(C, 4), or scale_k_width);
                       // sm90_mixed_folded: gpk, the blocks per 128 K elements
  i64 size = 0;        // storage_size
  const RowOrderInfo* rows = &kRowOrderTable[0];  // the layout's row order
};

Geometry make_geometry(const ScaleLayout& l, i64 R, i64 C) {
  validate(l);
  if (R < 0 || C < 0) fail(l, R, C, "extents must not be negative");
  if (R > kMaxExtent || C > kMaxExtent) fail(l, R, C, "extents above 2^40 are not supported");
  Geometry g;
  g.l = l;
  g.R = R;
  g.C = C;
  g.swap = l.kind == ScaleLayoutKind::tiled_128x4_transposed;
  g.Rb = g.swap ? C : R;
  g.Cb = g.swap ? R : C;
  const i64 Rb = g.Rb, Cb = g.Cb;
  switch (l.kind) {
    case ScaleLayoutKind::linear:
      g.Rp = Rb, g.Cp = Cb;
      break;
    case ScaleLayoutKind::cutile_swizzle_32_4_4:
      // The cuda.tile sample reshapes to (M // 128, 4, 32, K_s // 4, 4) without padding.
      if (Rb % 128 != 0) fail(l, R, C, "cuda.tile swizzle_32_4_4 does not pad: R must be a multiple of 128");
      if (Cb % 4 != 0) fail(l, R, C, "cuda.tile swizzle_32_4_4 does not pad: C must be a multiple of 4");
      [[fallthrough]];
    case ScaleLayoutKind::tiled_128x4:
    case ScaleLayoutKind::tiled_128x4_transposed:
      g.Rp = rup(Rb, 128), g.Cp = rup(Cb, 4), g.ld = g.Cp / 4;
      break;
    case ScaleLayoutKind::tiled_128x4_k8:
      g.Rp = rup(Rb, 128), g.Cp = rup(Cb, 8), g.ld = g.Cp / 4;
      break;
    case ScaleLayoutKind::gfx1250_mx:
      // GFX1250MXScaleLayoutTransformation: ALIGN_K_SCALE = 4 if K_SCALE > 4 else K_SCALE, N
      // padded to 128; aiter shuffle_scale_batched: SCALE_KWIDTH = scale_k_width if SCALE_K >= 4
      // else SCALE_K (C = 0 stores nothing; kw = 1 keeps the arithmetic defined).
      g.kw = Cb < 4 ? std::max<i64>(1, Cb) : (l.scale_k_width != 0 ? l.scale_k_width : 4);
      g.Rp = rup(Rb, 128), g.Cp = rup(Cb, g.kw), g.ld = g.Cp / g.kw;
      break;
    case ScaleLayoutKind::block_major_k:
      if (Cb % l.block_k != 0)
        fail(l, R, C, "convert_to_block_layout does not pad: C must be a multiple of block_k = " +
                          std::to_string(l.block_k));
      g.Rp = Rb, g.Cp = Cb;
      break;
    case ScaleLayoutKind::tiled_8x4:
      g.Rp = rup(Rb, 8), g.Cp = rup(Cb, 4), g.ld = g.Cp / 4;
      break;
    case ScaleLayoutKind::sm90_mixed_folded:
      // interleave_moe_scales_for_sm90_mixed_gemm raises unless rows % 64 == 0 and
      // K / group_size % (128 / group_size) == 0: it reshapes without padding.
      g.kw = 128 / l.group_size;
      if (Rb % 64 != 0)
        fail(l, R, C, "interleave_moe_scales_for_sm90_mixed_gemm does not pad: R must be a multiple of 64");
      if (Cb % g.kw != 0)
        fail(l, R, C, "interleave_moe_scales_for_sm90_mixed_gemm does not pad: C must be a multiple of 128 / group_size = " +
                          std::to_string(g.kw));
      g.Rp = Rb, g.Cp = Cb;
      break;
    case ScaleLayoutKind::gluon_contiguous:
      if (Rb % l.block_mn != 0)
        fail(l, R, C, "relayout_scales_contiguous does not pad: R must be a multiple of BLOCK_MN = " +
                          std::to_string(l.block_mn));
      if (Cb % l.block_k_scales != 0)
        fail(l, R, C, "relayout_scales_contiguous does not pad: C must be a multiple of BLOCK_K / VEC_SIZE = " +
                          std::to_string(l.block_k_scales));
      g.Rp = Rb, g.Cp = Cb, g.ld = Cb / l.block_k_scales;
      break;
    case ScaleLayoutKind::cdna4_mfma32:
    case ScaleLayoutKind::cdna4_mfma16:
      g.Rp = rup(Rb, 32), g.Cp = rup(Cb, 8);
      break;
    case ScaleLayoutKind::deepgemm_sm90_sfa:
      g.Rp = rup(Rb, 4), g.Cp = Cb;
      break;
    case ScaleLayoutKind::deepgemm_sm90_sfb:
    case ScaleLayoutKind::cutlass_blockwise:
    case ScaleLayoutKind::cublaslt_vec128:
      g.Rp = Rb, g.Cp = Cb;
      break;
    case ScaleLayoutKind::deepgemm_sm100_packed:
      g.Rp = rup(Rb, 4), g.Cp = rup(Cb, 4);
      break;
    case ScaleLayoutKind::cublaslt_blk128x128:
      g.Rp = Rb, g.Cp = rup(Cb, l.ld_align);
      break;
    case ScaleLayoutKind::triton_hopper:
      g.Rp = rup(Rb, 32 * i64{l.num_warps}), g.Cp = rup(Cb, 2);
      break;
  }
  if (g.Cp != 0 && g.Rp > kMaxStorage / g.Cp) fail(l, R, C, "storage above 2^62 elements is not supported");
  g.rows = &info(l.row_order);
  if (l.row_order != RowOrder::natural) {
    if (const std::string why = row_order_problem(*g.rows, R); !why.empty()) fail(l, R, C, why);
    // get_shuffle_matrix_sf_a_row_indices asserts M % 128 == 0 and K_s % 4 == 0: the reordered
    // scales are interleaved into whole 128x4 atoms, with no padding.
    if (l.kind == ScaleLayoutKind::tiled_128x4 && R % 128 != 0)
      fail(l, R, C, "the TRT-LLM scale shuffle (shuffleMatrixSfA) does not pad: R must be a multiple of 128");
    if (l.kind == ScaleLayoutKind::tiled_128x4 && C % 4 != 0)
      fail(l, R, C, "the TRT-LLM scale shuffle (shuffleMatrixSfA) does not pad: C must be a multiple of 4");
  }
  // Every layout is a bijection between the padded Rp x Cp rectangle and its storage.
  g.size = g.Rp * g.Cp;
  return g;
}

// Contribution of the base row index rb (the M/N index, or the block index when swapped).
i64 base_row_term(const Geometry& g, i64 r) {
  const ScaleLayout& l = g.l;
  switch (l.kind) {
    case ScaleLayoutKind::linear:
    case ScaleLayoutKind::deepgemm_sm90_sfb:
    case ScaleLayoutKind::cutlass_blockwise:
      if (l.kind != ScaleLayoutKind::linear && l.major == ScaleMajor::mn_major) return r;
      return r * g.Cb;  // off = r*C + c
    case ScaleLayoutKind::tiled_128x4:
    case ScaleLayoutKind::tiled_128x4_k8:
    case ScaleLayoutKind::tiled_128x4_transposed:
    case ScaleLayoutKind::cutile_swizzle_32_4_4:
      // L1: 512*(floor(r/128)*nk + floor(c/4)) + 16*(r mod 32) + 4*(floor(r/32) mod 4) + (c mod 4)
      return 512 * (r / 128) * g.ld + 16 * (r % 32) + 4 * ((r / 32) % 4);
    case ScaleLayoutKind::gfx1250_mx:
      // L13: 128*Cp*floor(r/128) + 128*kw*floor(c/kw) + 4*kw*(r mod 32) + kw*(floor(r/32) mod 4)
      //      + (c mod kw)
      return 128 * g.Cp * (r / 128) + 4 * g.kw * (r % 32) + g.kw * ((r / 32) % 4);
    case ScaleLayoutKind::block_major_k:
      // L14: floor(c/block_k)*R*block_k + r*block_k + (c mod block_k)
      return r * l.block_k;
    case ScaleLayoutKind::tiled_8x4:
      // L2: 32*(floor(r/8)*nk + floor(c/4)) + 4*(r mod 8) + (c mod 4)
      return 32 * (r / 8) * g.ld + 4 * (r % 8);
    case ScaleLayoutKind::sm90_mixed_folded:
      // L15: r = 64 rb + F s + f with F = 4 gpk (the folded M of a 64-row block, 16 / gpk slices
      // s), c = gpk kb + j: off = 64 C rb + 64 gpk kb + 16 f + gpk s + j (the reshape to
      // (R/64, 16/gpk, F, C/gpk, gpk) and permute (0, 3, 2, 1, 4) of FlashInfer).
      return 64 * g.Cb * (r / 64) + 16 * (r % (4 * g.kw)) + g.kw * ((r % 64) / (4 * g.kw));
    case ScaleLayoutKind::gluon_contiguous:
      // L4: BM*SBK*(floor(r/BM)*(C/SBK) + floor(c/SBK)) + SBK*(r mod BM) + (c mod SBK)
      return l.block_mn * l.block_k_scales * (r / l.block_mn) * g.ld + l.block_k_scales * (r % l.block_mn);
    case ScaleLayoutKind::cdna4_mfma32:
      // L5: 32*Cp*floor(r/32) + 256*floor(c/8) + 128*(c mod 2) + 4*(r mod 32) + floor((c mod 8)/2)
      return 32 * g.Cp * (r / 32) + 4 * (r % 32);
    case ScaleLayoutKind::cdna4_mfma16:
      // L6: 32*Cp*floor(r/32) + 256*floor(c/8) + 64*(c mod 4) + 4*(r mod 16) + 2*floor((c mod 8)/4)
      //     + floor((r mod 32)/16)
      return 32 * g.Cp * (r / 32) + 4 * (r % 16) + (r % 32) / 16;
    case ScaleLayoutKind::deepgemm_sm90_sfa:
    case ScaleLayoutKind::cublaslt_vec128:
      return r;  // L7: c*align(R,4) + r; L10 1x128: c*R + r
    case ScaleLayoutKind::deepgemm_sm100_packed:
      return 4 * r;  // L9: 4*(floor(c/4)*align(R,4) + r) + (c mod 4)
    case ScaleLayoutKind::cublaslt_blk128x128:
      return r * g.Cp;  // L10 128x128: r*ld + c
    case ScaleLayoutKind::triton_hopper: {
      // L12: r = mb*32nw + a*16nw + w*16 + cc*8 + q, c = 2kb + kk; stored at row mb*nw + w of
      // width 32*Cp, column (((2kb + a)*8 + q)*2 + kk)*2 + cc = 64kb + 32a + 4q + 2kk + cc.
      const i64 nw = l.num_warps;
      const i64 mb = r / (32 * nw), a = (r / (16 * nw)) % 2, w = (r / 16) % nw, cc = (r / 8) % 2, q = r % 8;
      return (mb * nw + w) * 32 * g.Cp + 32 * a + 4 * q + cc;
    }
  }
  return 0;
}

// Contribution of the base column index c (the block index, or the M/N index when swapped).
i64 base_col_term(const Geometry& g, i64 c) {
  const ScaleLayout& l = g.l;
  switch (l.kind) {
    case ScaleLayoutKind::linear:
    case ScaleLayoutKind::deepgemm_sm90_sfb:
    case ScaleLayoutKind::cutlass_blockwise:
      if (l.kind != ScaleLayoutKind::linear && l.major == ScaleMajor::mn_major) return c * g.Rb;
      return c;
    case ScaleLayoutKind::tiled_128x4:
    case ScaleLayoutKind::tiled_128x4_k8:
    case ScaleLayoutKind::tiled_128x4_transposed:
    case ScaleLayoutKind::cutile_swizzle_32_4_4:
      return 512 * (c / 4) + c % 4;
    case ScaleLayoutKind::gfx1250_mx:
      return 128 * g.kw * (c / g.kw) + c % g.kw;
    case ScaleLayoutKind::block_major_k:
      return (c / l.block_k) * g.Rb * l.block_k + c % l.block_k;
    case ScaleLayoutKind::tiled_8x4:
      return 32 * (c / 4) + c % 4;
    case ScaleLayoutKind::sm90_mixed_folded:
      return 64 * g.kw * (c / g.kw) + c % g.kw;
    case ScaleLayoutKind::gluon_contiguous:
      return l.block_mn * l.block_k_scales * (c / l.block_k_scales) + c % l.block_k_scales;
    case ScaleLayoutKind::cdna4_mfma32:
      return 256 * (c / 8) + 128 * (c % 2) + (c % 8) / 2;
    case ScaleLayoutKind::cdna4_mfma16:
      return 256 * (c / 8) + 64 * (c % 4) + 2 * ((c % 8) / 4);
    case ScaleLayoutKind::deepgemm_sm90_sfa:
      return c * g.Rp;
    case ScaleLayoutKind::cublaslt_vec128:
      return c * g.Rb;
    case ScaleLayoutKind::deepgemm_sm100_packed:
      return 4 * (c / 4) * g.Rp + c % 4;
    case ScaleLayoutKind::cublaslt_blk128x128:
      return c;
    case ScaleLayoutKind::triton_hopper:
      return 64 * (c / 2) + 2 * (c % 2);
  }
  return 0;
}

// Inverse of base_row_term + base_col_term over the padded rectangle: off -> (r, c), base roles.
std::array<i64, 2> base_decode(const Geometry& g, i64 off) {
  const ScaleLayout& l = g.l;
  switch (l.kind) {
    case ScaleLayoutKind::linear:
    case ScaleLayoutKind::deepgemm_sm90_sfb:
    case ScaleLayoutKind::cutlass_blockwise:
      if (l.kind != ScaleLayoutKind::linear && l.major == ScaleMajor::mn_major)
        return {off % g.Rb, off / g.Rb};
      return {off / g.Cb, off % g.Cb};
    case ScaleLayoutKind::tiled_128x4:
    case ScaleLayoutKind::tiled_128x4_k8:
    case ScaleLayoutKind::tiled_128x4_transposed:
    case ScaleLayoutKind::cutile_swizzle_32_4_4: {
      // L1 inverse: t = off/512, u = off mod 512; r = 128*floor(t/nk) + 32*((u>>2)&3) + (u>>4);
      // c = 4*(t mod nk) + (u&3).
      const i64 t = off / 512, u = off % 512;
      return {128 * (t / g.ld) + 32 * ((u >> 2) & 3) + (u >> 4), 4 * (t % g.ld) + (u & 3)};
    }
    case ScaleLayoutKind::gfx1250_mx: {
      // Stripe m = off/(128 Cp); in it, atom column kc, then lane b (r mod 32), then a
      // (floor(r/32) mod 4), then the block within the atom.
      const i64 m = off / (128 * g.Cp), u = off % (128 * g.Cp);
      const i64 kc = u / (128 * g.kw), v = u % (128 * g.kw);
      const i64 b = v / (4 * g.kw), a = (v / g.kw) % 4;
      return {128 * m + 32 * a + b, g.kw * kc + v % g.kw};
    }
    case ScaleLayoutKind::block_major_k: {
      // Block t = floor(c/block_k), then row r, then the column within the block.
      const i64 t = off / (g.Rb * l.block_k), u = off % (g.Rb * l.block_k);
      return {u / l.block_k, t * l.block_k + u % l.block_k};
    }
    case ScaleLayoutKind::tiled_8x4: {
      const i64 t = off / 32, u = off % 32;
      return {8 * (t / g.ld) + u / 4, 4 * (t % g.ld) + u % 4};
    }
    case ScaleLayoutKind::sm90_mixed_folded: {
      // 64-row block rb, then K128 chunk kb, then the 16-byte row f, then slice s, then block j.
      const i64 rb = off / (64 * g.Cb), u = off % (64 * g.Cb);
      const i64 kb = u / (64 * g.kw), v = u % (64 * g.kw);
      const i64 f = v / 16, s = (v % 16) / g.kw, j = v % g.kw;
      return {64 * rb + 4 * g.kw * s + f, g.kw * kb + j};
    }
    case ScaleLayoutKind::gluon_contiguous: {
      const i64 tile = l.block_mn * l.block_k_scales;
      const i64 t = off / tile, u = off % tile;
      return {l.block_mn * (t / g.ld) + u / l.block_k_scales, l.block_k_scales * (t % g.ld) + u % l.block_k_scales};
    }
    case ScaleLayoutKind::cdna4_mfma32:
    case ScaleLayoutKind::cdna4_mfma16: {
      // 256-byte groups of 32 rows x 8 blocks, K-group fastest.
      const i64 groups_k = g.Cp / 8;
      const i64 grp = off / 256, u = off % 256;
      const i64 r0 = 32 * (grp / groups_k), c0 = 8 * (grp % groups_k);
      if (l.kind == ScaleLayoutKind::cdna4_mfma32)  // r mod 32 = (u mod 128)/4, c mod 8 = 2(u mod 4) + u/128
        return {r0 + (u % 128) / 4, c0 + 2 * (u % 4) + u / 128};
      // L6: c mod 4 = u/64, r mod 16 = (u mod 64)/4, (c mod 8)/4 = (u mod 4)/2, (r mod 32)/16 = u mod 2
      return {r0 + 16 * (u % 2) + (u % 64) / 4, c0 + 4 * ((u % 4) / 2) + u / 64};
    }
    case ScaleLayoutKind::deepgemm_sm90_sfa:
      return {off % g.Rp, off / g.Rp};
    case ScaleLayoutKind::cublaslt_vec128:
      return {off % g.Rb, off / g.Rb};
    case ScaleLayoutKind::deepgemm_sm100_packed: {
      const i64 w = off / 4;
      return {w % g.Rp, 4 * (w / g.Rp) + off % 4};
    }
    case ScaleLayoutKind::cublaslt_blk128x128:
      return {off / g.Cp, off % g.Cp};
    case ScaleLayoutKind::triton_hopper: {
      const i64 nw = l.num_warps, width = 32 * g.Cp;
      const i64 row = off / width, col = off % width;
      const i64 mb = row / nw, w = row % nw;
      const i64 cc = col % 2, kk = (col / 2) % 2, q = (col / 4) % 8, a = (col / 32) % 2, kb = col / 64;
      return {mb * 32 * nw + a * 16 * nw + 16 * w + 8 * cc + q, 2 * kb + kk};
    }
  }
  return {0, 0};
}

// Only non-swapped kinds take a row order (validate), so the order applies to the base row.
i64 row_term(const Geometry& g, i64 r) {
  return g.swap ? base_col_term(g, r) : base_row_term(g, stored_row(*g.rows, g.R, r));
}
i64 col_term(const Geometry& g, i64 c) { return g.swap ? base_row_term(g, c) : base_col_term(g, c); }

i64 checked_total(const Geometry& g, i64 batch, i64 per_item, const char* what) {
  if (batch < 0) fail(g.l, g.R, g.C, std::string(what) + ": batch must not be negative");
  if (per_item != 0 && batch > kMaxStorage / per_item)
    fail(g.l, g.R, g.C, std::string(what) + ": batch * size above 2^62 elements is not supported");
  return batch * per_item;
}

void check_span(const Geometry& g, const char* what, const char* name, std::size_t have, i64 need) {
  if (static_cast<i64>(have) != need)
    fail(g.l, g.R, g.C,
         std::string(what) + ": " + name + " has " + std::to_string(have) + " elements, expected " +
             std::to_string(need));
}

bool is_nan_pad(std::uint8_t pad) { return pad == 0xFF; }
bool is_nan_pad(float pad) { return std::isnan(pad); }

// Length of the contiguous runs in a row's column parts: C when the whole row is one run (linear,
// K-major dense), 4 when each aligned group of 4 columns is one (the 128x4, 8x4 and SM100 layouts),
// else 1. The bulk loops copy a run at a time.
i64 contiguous_run(std::span<const i64> cols) {
  const auto C = static_cast<i64>(cols.size());
  auto runs_of = [&](i64 len) {
    for (i64 c = 1; c < C; ++c)
      if (c % len != 0 && cols[static_cast<std::size_t>(c)] != cols[static_cast<std::size_t>(c - 1)] + 1) return false;
    return true;
  };
  if (C > 0 && runs_of(C)) return C;
  if (runs_of(4)) return 4;
  return 1;
}

// Moves one batch item between its row-major form and its storage: to storage when kToStorage,
// else back. Rows are walked in bands of 128 and columns in chunks of 16, so the 128x4 layout
// writes 4 contiguous atoms (2 KiB) per chunk; walking whole rows touches one 512-byte atom per 4
// columns, and those power-of-two strides alias in the L1 cache (about 2x slower, measured on the
// 8192 x 512 case of bench/layout).
template <bool kToStorage, class T>
void move_item(T* stored, T* logical, const ScaleOffsets& t, i64 run) {
  const i64 R = t.rows(), C = t.cols();
  const i64* cols = t.col_parts().data();
  // The element count is a template argument so that the 4-element copies compile to one move.
  auto move = [&]<i64 N>(T* srow, T* lrow, i64 c) {
    if constexpr (kToStorage) std::memcpy(srow + cols[c], lrow + c, N * sizeof(T));
    else std::memcpy(lrow + c, srow + cols[c], N * sizeof(T));
  };
  if (run == C) {
    for (i64 r = 0; r < R; ++r) {
      T* srow = stored + t.row_part(r);
      T* lrow = logical + r * C;
      if constexpr (kToStorage) std::memcpy(srow + cols[0], lrow, static_cast<std::size_t>(C) * sizeof(T));
      else std::memcpy(lrow, srow + cols[0], static_cast<std::size_t>(C) * sizeof(T));
    }
    return;
  }
  constexpr i64 kBand = 128, kChunk = 16;
  for (i64 r0 = 0; r0 < R; r0 += kBand) {
    const i64 r1 = std::min(R, r0 + kBand);
    for (i64 c0 = 0; c0 < C; c0 += kChunk) {
      const i64 c1 = std::min(C, c0 + kChunk);
      for (i64 r = r0; r < r1; ++r) {
        T* srow = stored + t.row_part(r);
        T* lrow = logical + r * C;
        i64 c = c0;
        if (run == 4)
          for (; c + 4 <= c1; c += 4) move.template operator()<4>(srow, lrow, c);
        for (; c < c1; ++c) move.template operator()<1>(srow, lrow, c);
      }
    }
  }
}

template <class T>
void to_layout_impl(const ScaleLayout& layout, i64 batch, i64 R, i64 C, std::span<const T> in,
                    std::span<T> out, T pad) {
  const Geometry g = make_geometry(layout, R, C);
  const i64 n_in = checked_total(g, batch, R * C, "to_layout");
  const i64 n_out = checked_total(g, batch, g.size, "to_layout");
  check_span(g, "to_layout", "the row-major input", in.size(), n_in);
  check_span(g, "to_layout", "the output", out.size(), n_out);
  if (is_nan_pad(pad)) {
    fail(layout, R, C,
         std::is_floating_point_v<T> ? "to_layout: the pad value is a float NaN; pad with 0"
                                     : "to_layout: the pad value is a NaN (0xFF is NaN in ue8m0 and e4m3); pad with 0");
  }
  // Items with no element and no storage: nothing to write, however many (checked_total cannot bound
  // such a batch, and a loop over 2^62 empty items would not end).
  if (g.size == 0) return;
  const ScaleOffsets t(layout, R, C);
  const i64 run = contiguous_run(t.col_parts());
  for (i64 b = 0; b < batch; ++b) {
    T* o = out.data() + b * g.size;
    if (t.padded()) std::fill(o, o + g.size, pad);
    move_item<true>(o, const_cast<T*>(in.data() + b * R * C), t, run);
  }
}

template <class T>
void from_layout_impl(const ScaleLayout& layout, i64 batch, i64 R, i64 C, std::span<const T> in,
                      std::span<T> out) {
  const Geometry g = make_geometry(layout, R, C);
  const i64 n_in = checked_total(g, batch, g.size, "from_layout");
  const i64 n_out = checked_total(g, batch, R * C, "from_layout");
  check_span(g, "from_layout", "the stored input", in.size(), n_in);
  check_span(g, "from_layout", "the row-major output", out.size(), n_out);
  if (R * C == 0) return;  // nothing to read back, however many items (see to_layout_impl)
  const ScaleOffsets t(layout, R, C);
  const i64 run = contiguous_run(t.col_parts());
  for (i64 b = 0; b < batch; ++b) {
    move_item<false>(const_cast<T*>(in.data() + b * g.size), out.data() + b * R * C, t, run);
  }
}

template <class T>
bool same_bits(T a, T b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

template <class T>
std::optional<i64> find_padding_mismatch_impl(const ScaleLayout& layout, i64 batch, i64 R, i64 C,
                                              std::span<const T> in, T pad) {
  const Geometry g = make_geometry(layout, R, C);
  const i64 n_in = checked_total(g, batch, g.size, "find_padding_mismatch");
  check_span(g, "find_padding_mismatch", "the stored input", in.size(), n_in);
  const ScaleOffsets t(layout, R, C);
  if (!t.padded()) return std::nullopt;
  std::vector<std::uint8_t> holds_data(static_cast<std::size_t>(g.size), 0);
  for (i64 r = 0; r < R; ++r)
    for (i64 c = 0; c < C; ++c) holds_data[static_cast<std::size_t>(t(r, c))] = 1;
  for (i64 b = 0; b < batch; ++b)
    for (i64 off = 0; off < g.size; ++off)
      if (!holds_data[static_cast<std::size_t>(off)] && !same_bits(in[static_cast<std::size_t>(b * g.size + off)], pad))
        return b * g.size + off;
  return std::nullopt;
}

bool has_param_block(ScaleLayoutKind k) { return k == ScaleLayoutKind::gluon_contiguous; }
bool has_param_warps(ScaleLayoutKind k) { return k == ScaleLayoutKind::triton_hopper; }
bool has_param_major(ScaleLayoutKind k) {
  return k == ScaleLayoutKind::deepgemm_sm90_sfb || k == ScaleLayoutKind::cutlass_blockwise;
}
bool has_param_ld(ScaleLayoutKind k) { return k == ScaleLayoutKind::cublaslt_blk128x128; }
bool has_param_block_k(ScaleLayoutKind k) { return k == ScaleLayoutKind::block_major_k; }
bool has_param_group(ScaleLayoutKind k) { return k == ScaleLayoutKind::sm90_mixed_folded; }
// The parameters a kind needs (ScaleLayout::of refuses those kinds); gfx1250_mx's scale_k_width and
// the row order are optional.
bool has_params(ScaleLayoutKind k) {
  return has_param_block(k) || has_param_warps(k) || has_param_major(k) || has_param_ld(k) || has_param_block_k(k) ||
         has_param_group(k);
}
bool has_param_k_width(ScaleLayoutKind k) { return k == ScaleLayoutKind::gfx1250_mx; }
// The kinds the trtllm-gen weight preparation reorders: the element rows and checkpoint scales
// (linear, or block_major_k for BlockMajorK weights) and the scales the kernel reads (tiled_128x4).
bool takes_row_order(ScaleLayoutKind k) {
  return k == ScaleLayoutKind::linear || k == ScaleLayoutKind::tiled_128x4 || k == ScaleLayoutKind::block_major_k;
}

// interleave_moe_scales_for_sm90_mixed_gemm's rules for one-byte scales: group_size divides 128,
// and the 128 / group_size blocks of a K128 chunk divide a 16-byte row (physical_cols = 16).
bool valid_folded_group_size(i64 v) { return v == 8 || v == 16 || v == 32 || v == 64 || v == 128; }

// Describes what is wrong with a layout's parameters, or returns an empty string.
std::string layout_problem(const ScaleLayout& l) {
  if (static_cast<std::size_t>(l.kind) >= kScaleLayoutKindTable.size()) return "unknown ScaleLayoutKind";
  const std::string name = kind_name(l.kind);
  const ScaleLayout defaults{};
  if (has_param_block(l.kind)) {
    if (l.block_mn < 1 || l.block_mn > kMaxExtent) return name + ": block_mn must be in [1, 2^40]";
    if (l.block_k_scales < 1 || l.block_k_scales > kMaxExtent)
      return name + ": block_k_scales (BLOCK_K / VEC_SIZE) must be in [1, 2^40]";
  } else if (l.block_mn != defaults.block_mn || l.block_k_scales != defaults.block_k_scales) {
    return name + " has no block_mn / block_k_scales parameters (they must stay 0)";
  }
  if (has_param_warps(l.kind)) {
    // triton_kernels asserts num_warps is a power of two.
    if (l.num_warps < 1 || l.num_warps > 64 || (l.num_warps & (l.num_warps - 1)) != 0)
      return name + ": num_warps must be a power of two in [1, 64]";
  } else if (l.num_warps != defaults.num_warps) {
    return name + " has no num_warps parameter (it must stay 0)";
  }
  if (has_param_major(l.kind)) {
    if (l.major != ScaleMajor::k_major && l.major != ScaleMajor::mn_major) return name + ": unknown ScaleMajor";
  } else if (l.major != defaults.major) {
    return name + " has no major parameter (it must stay k_major)";
  }
  if (has_param_ld(l.kind)) {
    if (l.ld_align != 1 && l.ld_align != 4) return name + ": ld_align must be 1 or 4";
  } else if (l.ld_align != defaults.ld_align) {
    return name + " has no ld_align parameter (it must stay 1)";
  }
  if (has_param_block_k(l.kind)) {
    if (l.block_k < 1 || l.block_k > kMaxExtent) return name + ": block_k must be in [1, 2^40]";
  } else if (l.block_k != defaults.block_k) {
    return name + " has no block_k parameter (it must stay 0)";
  }
  if (has_param_k_width(l.kind)) {
    // aiter shuffle_scale_batched asserts scale_k_width in [4, 8, 16]; 0 is triton_kernels' rule.
    if (l.scale_k_width != 0 && l.scale_k_width != 4 && l.scale_k_width != 8 && l.scale_k_width != 16)
      return name + ": scale_k_width must be 4, 8 or 16 (or 0 for min(C, 4))";
  } else if (l.scale_k_width != defaults.scale_k_width) {
    return name + " has no scale_k_width parameter (it must stay 0)";
  }
  if (has_param_group(l.kind)) {
    if (!valid_folded_group_size(l.group_size))
      return name + ": group_size must be 8, 16, 32, 64 or 128 (it must divide 128, and 128 / group_size byte scales "
                    "must fit a 16-byte row)";
  } else if (l.group_size != defaults.group_size) {
    return name + " has no group_size parameter (it must stay 0)";
  }
  if (static_cast<std::size_t>(l.row_order) >= kRowOrderTable.size()) return name + ": unknown RowOrder";
  if (l.row_order != RowOrder::natural && !takes_row_order(l.kind))
    return name + " takes no row order (rows= is for linear, tiled_128x4 and block_major_k)";
  return {};
}

bool parse_i64(std::string_view s, i64& v) {
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc() && p == s.data() + s.size() && !s.empty();
}

// Parses `text`; on failure returns nullopt and sets `why`.
std::optional<ScaleLayout> parse_impl(std::string_view text, std::string& why) {
  const std::size_t colon = text.find(':');
  const std::string_view name = text.substr(0, colon);
  const ScaleLayoutKindInfo* ki = nullptr;
  for (const ScaleLayoutKindInfo& k : kScaleLayoutKindTable)
    if (name == k.name) ki = &k;
  if (!ki) {
    why = "unknown scale layout '" + std::string(name) + "' (known:";
    for (const ScaleLayoutKindInfo& k : kScaleLayoutKindTable) why += std::string(" ") + k.name;
    why += ")";
    return std::nullopt;
  }
  ScaleLayout l;
  l.kind = ki->kind;
  bool seen_bm = false, seen_bk = false, seen_nw = false, seen_major = false, seen_ld = false, seen_rows = false;
  bool seen_block_k = false, seen_k_width = false, seen_group = false;
  if (colon != std::string_view::npos) {
    std::string_view rest = text.substr(colon + 1);
    if (rest.empty()) {
      why = "empty parameter list after ':'";
      return std::nullopt;
    }
    while (!rest.empty()) {
      const std::size_t comma = rest.find(',');
      const std::string_view item = rest.substr(0, comma);
      rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
      if (comma != std::string_view::npos && rest.empty()) {
        why = "trailing ','";
        return std::nullopt;
      }
      const std::size_t eq = item.find('=');
      if (eq == std::string_view::npos) {
        why = "parameter '" + std::string(item) + "' is not key=value";
        return std::nullopt;
      }
      const std::string_view key = item.substr(0, eq), value = item.substr(eq + 1);
      auto once = [&](bool& seen) {
        if (seen) why = "parameter '" + std::string(key) + "' given twice";
        seen = true;
        return why.empty();
      };
      i64 v = 0;
      if (key == "block_mn" && has_param_block(l.kind)) {
        if (!once(seen_bm)) return std::nullopt;
        if (!parse_i64(value, v)) why = "block_mn '" + std::string(value) + "' is not an integer";
        l.block_mn = v;
      } else if (key == "block_k_scales" && has_param_block(l.kind)) {
        if (!once(seen_bk)) return std::nullopt;
        if (!parse_i64(value, v)) why = "block_k_scales '" + std::string(value) + "' is not an integer";
        l.block_k_scales = v;
      } else if (key == "num_warps" && has_param_warps(l.kind)) {
        if (!once(seen_nw)) return std::nullopt;
        if (!parse_i64(value, v) || v < 1 || v > 64) why = "num_warps '" + std::string(value) + "' is not in [1, 64]";
        l.num_warps = static_cast<std::int32_t>(v);
      } else if (key == "major" && has_param_major(l.kind)) {
        if (!once(seen_major)) return std::nullopt;
        if (value == "k") l.major = ScaleMajor::k_major;
        else if (value == "mn") l.major = ScaleMajor::mn_major;
        else why = "major must be 'k' or 'mn', not '" + std::string(value) + "'";
      } else if (key == "ld_align" && has_param_ld(l.kind)) {
        if (!once(seen_ld)) return std::nullopt;
        if (!parse_i64(value, v) || (v != 1 && v != 4)) why = "ld_align must be 1 or 4, not '" + std::string(value) + "'";
        l.ld_align = static_cast<std::int32_t>(v);
      } else if (key == "block_k" && has_param_block_k(l.kind)) {
        if (!once(seen_block_k)) return std::nullopt;
        if (!parse_i64(value, v) || v < 1 || v > kMaxExtent)
          why = "block_k '" + std::string(value) + "' is not an integer in [1, 2^40]";
        l.block_k = v;
      } else if (key == "scale_k_width" && has_param_k_width(l.kind)) {
        if (!once(seen_k_width)) return std::nullopt;
        if (!parse_i64(value, v) || (v != 4 && v != 8 && v != 16))
          why = "scale_k_width must be 4, 8 or 16, not '" + std::string(value) + "'";
        l.scale_k_width = static_cast<std::int32_t>(v);
      } else if (key == "group_size" && has_param_group(l.kind)) {
        if (!once(seen_group)) return std::nullopt;
        if (!parse_i64(value, v) || !valid_folded_group_size(v))
          why = "group_size must be 8, 16, 32, 64 or 128, not '" + std::string(value) + "'";
        l.group_size = static_cast<std::int32_t>(v);
      } else if (key == "rows" && takes_row_order(l.kind)) {
        if (!once(seen_rows)) return std::nullopt;
        const RowOrderInfo* o = nullptr;
        for (const RowOrderInfo& r : kRowOrderTable)
          if (value == r.name) o = &r;
        if (o) {
          l.row_order = o->order;
        } else {
          why = "unknown row order '" + std::string(value) + "' (known:";
          for (const RowOrderInfo& r : kRowOrderTable) why += std::string(" ") + r.name;
          why += ")";
        }
      } else {
        why = std::string(ki->name) + " has no parameter '" + std::string(key) + "'";
      }
      if (!why.empty()) return std::nullopt;
    }
  }
  const char* missing = nullptr;
  if (has_param_block(l.kind) && !seen_bm) missing = "block_mn";
  else if (has_param_block(l.kind) && !seen_bk) missing = "block_k_scales";
  else if (has_param_warps(l.kind) && !seen_nw) missing = "num_warps";
  else if (has_param_major(l.kind) && !seen_major) missing = "major (k or mn)";
  else if (has_param_ld(l.kind) && !seen_ld) missing = "ld_align (1 or 4)";
  else if (has_param_block_k(l.kind) && !seen_block_k) missing = "block_k";
  else if (has_param_group(l.kind) && !seen_group) missing = "group_size";
  if (missing) {
    why = std::string(ki->name) + " needs the parameter " + missing;
    return std::nullopt;
  }
  why = layout_problem(l);
  if (!why.empty()) return std::nullopt;
  return l;
}

}  // namespace

ScaleLayout ScaleLayout::of(ScaleLayoutKind k) {
  (void)kind_name(k);  // refuses a value outside the enum
  if (has_params(k))
    throw std::invalid_argument("ScaleLayout::of(" + kind_name(k) +
                                "): this kind has parameters; use its named constructor");
  ScaleLayout l;
  l.kind = k;
  return l;
}

ScaleLayout ScaleLayout::gluon_contiguous(std::int64_t block_mn, std::int64_t block_k, std::int64_t vec_size) {
  if (vec_size < 1 || block_k < 1 || block_k % vec_size != 0)
    throw std::invalid_argument("ScaleLayout::gluon_contiguous: BLOCK_K = " + std::to_string(block_k) +
                                " must be a positive multiple of VEC_SIZE = " + std::to_string(vec_size));
  ScaleLayout l;
  l.kind = ScaleLayoutKind::gluon_contiguous;
  l.block_mn = block_mn;
  l.block_k_scales = block_k / vec_size;
  validate(l);
  return l;
}

ScaleLayout ScaleLayout::triton_hopper(std::int32_t num_warps) {
  ScaleLayout l;
  l.kind = ScaleLayoutKind::triton_hopper;
  l.num_warps = num_warps;
  validate(l);
  return l;
}

ScaleLayout ScaleLayout::deepgemm_sm90_sfb(ScaleMajor major) {
  ScaleLayout l;
  l.kind = ScaleLayoutKind::deepgemm_sm90_sfb;
  l.major = major;
  validate(l);
  return l;
}

ScaleLayout ScaleLayout::cutlass_blockwise(ScaleMajor major) {
  ScaleLayout l;
  l.kind = ScaleLayoutKind::cutlass_blockwise;
  l.major = major;
  validate(l);
  return l;
}

ScaleLayout ScaleLayout::cublaslt_blk128x128(std::int32_t ld_align) {
  ScaleLayout l;
  l.kind = ScaleLayoutKind::cublaslt_blk128x128;
  l.ld_align = ld_align;
  validate(l);
  return l;
}

ScaleLayout ScaleLayout::row_ordered(ScaleLayoutKind k, RowOrder order) {
  ScaleLayout l = of(k);
  l.row_order = order;
  validate(l);
  return l;
}

ScaleLayout ScaleLayout::gfx1250_mx(std::int32_t scale_k_width) {
  ScaleLayout l;
  l.kind = ScaleLayoutKind::gfx1250_mx;
  l.scale_k_width = scale_k_width;
  validate(l);
  return l;
}

ScaleLayout ScaleLayout::block_major_k(std::int64_t block_k, RowOrder order) {
  ScaleLayout l;
  l.kind = ScaleLayoutKind::block_major_k;
  l.block_k = block_k;
  l.row_order = order;
  validate(l);
  return l;
}

ScaleLayout ScaleLayout::sm90_mixed_folded(std::int32_t group_size) {
  ScaleLayout l;
  l.kind = ScaleLayoutKind::sm90_mixed_folded;
  l.group_size = group_size;
  validate(l);
  return l;
}

RowOrder trtllm_row_order(std::int64_t epilogue_tile_m, bool gated_act) {
  if (epilogue_tile_m < 1)
    throw std::invalid_argument("trtllm_row_order: epilogue_tile_m = " + std::to_string(epilogue_tile_m) +
                                " must be positive");
  // get_shuffle_block_size: 32-row blocks when the epilogue tile is a multiple of 128 rows.
  const bool blocks_of_32 = epilogue_tile_m % 128 == 0;
  if (gated_act) return blocks_of_32 ? RowOrder::gated_act_trtllm_shuffle32 : RowOrder::gated_act_trtllm_shuffle16;
  return blocks_of_32 ? RowOrder::trtllm_shuffle32 : RowOrder::trtllm_shuffle16;
}

std::vector<std::int64_t> row_order_indices(RowOrder order, std::int64_t R) {
  if (static_cast<std::size_t>(order) >= kRowOrderTable.size())
    throw std::invalid_argument("row_order_indices: unknown RowOrder");
  const RowOrderInfo& o = info(order);
  if (R < 0 || R > kMaxExtent)
    throw std::invalid_argument("row_order_indices: R = " + std::to_string(R) + " must be in [0, 2^40]");
  if (const std::string why = row_order_problem(o, R); !why.empty())
    throw std::invalid_argument("row_order_indices with R=" + std::to_string(R) + ": " + why);
  std::vector<std::int64_t> out(static_cast<std::size_t>(R));
  for (i64 j = 0; j < R; ++j) out[static_cast<std::size_t>(j)] = source_row(o, R, j);
  return out;
}

ScaleOffsets::ScaleOffsets(const ScaleLayout& layout, std::int64_t R, std::int64_t C) {
  const Geometry g = make_geometry(layout, R, C);
  row_.resize(static_cast<std::size_t>(R));
  col_.resize(static_cast<std::size_t>(C));
  for (i64 r = 0; r < R; ++r) row_[static_cast<std::size_t>(r)] = row_term(g, r);
  for (i64 c = 0; c < C; ++c) col_[static_cast<std::size_t>(c)] = col_term(g, c);
  size_ = g.size;
}

void validate(const ScaleLayout& layout) {
  const std::string why = layout_problem(layout);
  if (!why.empty()) throw std::invalid_argument("scale layout: " + why);
}

void check_shape(const ScaleLayout& layout, std::int64_t R, std::int64_t C) { (void)make_geometry(layout, R, C); }

std::int64_t storage_size(const ScaleLayout& layout, std::int64_t R, std::int64_t C) {
  return make_geometry(layout, R, C).size;
}

std::vector<std::int64_t> storage_shape(const ScaleLayout& layout, std::int64_t R, std::int64_t C) {
  const Geometry g = make_geometry(layout, R, C);
  const i64 Rp = g.Rp, Cp = g.Cp;
  switch (layout.kind) {
    case ScaleLayoutKind::linear: return {Rp, Cp};
    case ScaleLayoutKind::tiled_128x4:
    case ScaleLayoutKind::tiled_128x4_k8:
    case ScaleLayoutKind::tiled_128x4_transposed: return {Rp / 128, Cp / 4, 32, 4, 4};
    case ScaleLayoutKind::cutile_swizzle_32_4_4: return {Rp / 128, Cp / 4, 32, 16};
    case ScaleLayoutKind::gfx1250_mx: return {Rp / 128, Cp / g.kw, 32, 4, g.kw};
    case ScaleLayoutKind::tiled_8x4: return {Rp / 8, Cp / 4, 8, 4};
    case ScaleLayoutKind::gluon_contiguous:
      return {Rp / layout.block_mn, Cp / layout.block_k_scales, layout.block_mn, layout.block_k_scales};
    case ScaleLayoutKind::cdna4_mfma32:
    case ScaleLayoutKind::cdna4_mfma16: return {Rp / 32, 32 * Cp};
    case ScaleLayoutKind::deepgemm_sm90_sfa: return {Cp, Rp};
    case ScaleLayoutKind::deepgemm_sm90_sfb:
    case ScaleLayoutKind::cutlass_blockwise:
      if (layout.major == ScaleMajor::mn_major) return {Cp, Rp};
      return {Rp, Cp};
    case ScaleLayoutKind::cublaslt_vec128: return {Cp, Rp};
    case ScaleLayoutKind::cublaslt_blk128x128: return {Rp, Cp};
    case ScaleLayoutKind::deepgemm_sm100_packed: return {Cp / 4, Rp, 4};
    case ScaleLayoutKind::triton_hopper: return {Rp / 32, 32 * Cp};
    case ScaleLayoutKind::block_major_k: return {Cp / layout.block_k, Rp, layout.block_k};
    case ScaleLayoutKind::sm90_mixed_folded: return {Rp / 64, Cp / g.kw, 4 * g.kw, 16};
  }
  return {};
}

std::int64_t offset(const ScaleLayout& layout, std::int64_t R, std::int64_t C, std::int64_t r, std::int64_t c) {
  const Geometry g = make_geometry(layout, R, C);
  if (r < 0 || r >= R || c < 0 || c >= C)
    fail(layout, R, C, "offset: index (" + std::to_string(r) + ", " + std::to_string(c) + ") is outside the matrix");
  return row_term(g, r) + col_term(g, c);
}

std::optional<std::array<std::int64_t, 2>> logical_index(const ScaleLayout& layout, std::int64_t R,
                                                         std::int64_t C, std::int64_t off) {
  const Geometry g = make_geometry(layout, R, C);
  if (off < 0 || off >= g.size)
    fail(layout, R, C,
         "logical_index: offset " + std::to_string(off) + " is outside the storage of " + std::to_string(g.size));
  std::array<i64, 2> rc = base_decode(g, off);
  if (g.swap) std::swap(rc[0], rc[1]);
  if (rc[0] >= R || rc[1] >= C) return std::nullopt;
  rc[0] = source_row(*g.rows, R, rc[0]);
  return rc;
}

void to_layout(const ScaleLayout& layout, std::int64_t batch, std::int64_t R, std::int64_t C,
               std::span<const std::uint8_t> row_major, std::span<std::uint8_t> out, std::uint8_t pad) {
  to_layout_impl(layout, batch, R, C, row_major, out, pad);
}
void to_layout(const ScaleLayout& layout, std::int64_t batch, std::int64_t R, std::int64_t C,
               std::span<const float> row_major, std::span<float> out, float pad) {
  to_layout_impl(layout, batch, R, C, row_major, out, pad);
}
void from_layout(const ScaleLayout& layout, std::int64_t batch, std::int64_t R, std::int64_t C,
                 std::span<const std::uint8_t> in, std::span<std::uint8_t> row_major) {
  from_layout_impl(layout, batch, R, C, in, row_major);
}
void from_layout(const ScaleLayout& layout, std::int64_t batch, std::int64_t R, std::int64_t C,
                 std::span<const float> in, std::span<float> row_major) {
  from_layout_impl(layout, batch, R, C, in, row_major);
}
std::optional<std::int64_t> find_padding_mismatch(const ScaleLayout& layout, std::int64_t batch, std::int64_t R,
                                                  std::int64_t C, std::span<const std::uint8_t> in,
                                                  std::uint8_t pad) {
  return find_padding_mismatch_impl(layout, batch, R, C, in, pad);
}
std::optional<std::int64_t> find_padding_mismatch(const ScaleLayout& layout, std::int64_t batch, std::int64_t R,
                                                  std::int64_t C, std::span<const float> in, float pad) {
  return find_padding_mismatch_impl(layout, batch, R, C, in, pad);
}

std::string to_string(ScaleLayoutKind kind) { return kind_name(kind); }

std::string to_string(ScaleMajor major) {
  switch (major) {
    case ScaleMajor::mn_major: return "mn";
    case ScaleMajor::k_major: return "k";
  }
  return "ScaleMajor(" + std::to_string(static_cast<int>(major)) + ")";
}

std::string to_string(RowOrder order) {
  if (static_cast<std::size_t>(order) >= kRowOrderTable.size()) throw std::invalid_argument("unknown RowOrder");
  return info(order).name;
}

std::string to_string(const ScaleLayout& l) {
  std::string params;
  auto add = [&](const std::string& p) { params += (params.empty() ? "" : ",") + p; };
  if (has_param_block(l.kind))
    add("block_mn=" + std::to_string(l.block_mn) + ",block_k_scales=" + std::to_string(l.block_k_scales));
  if (has_param_warps(l.kind)) add("num_warps=" + std::to_string(l.num_warps));
  if (has_param_major(l.kind)) add("major=" + to_string(l.major));
  if (has_param_ld(l.kind)) add("ld_align=" + std::to_string(l.ld_align));
  if (has_param_block_k(l.kind)) add("block_k=" + std::to_string(l.block_k));
  if (l.scale_k_width != 0) add("scale_k_width=" + std::to_string(l.scale_k_width));
  if (has_param_group(l.kind)) add("group_size=" + std::to_string(l.group_size));
  if (l.row_order != RowOrder::natural) add("rows=" + to_string(l.row_order));
  return params.empty() ? kind_name(l.kind) : kind_name(l.kind) + ":" + params;
}

std::optional<ScaleLayout> parse_scale_layout(std::string_view text) {
  std::string why;
  return parse_impl(text, why);
}

ScaleLayout scale_layout_from_string(std::string_view text) {
  std::string why;
  auto l = parse_impl(text, why);
  if (!l) throw std::invalid_argument("scale layout '" + std::string(text) + "': " + why);
  return *l;
}

}  // namespace blockscale
