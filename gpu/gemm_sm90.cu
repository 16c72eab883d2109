// SPDX-License-Identifier: Apache-2.0
// sm_90a block-scaled GEMM: wgmma fp8 with promotion into f32 registers once per scale block.
//
// Numerics (the emulator's "Hopper promotion" schedule with P = 1; gemm.h states it in full):
//   for each K-block b = 0, 1, ... in order:
//     partial = wgmma.mma_async m64n64k32 f32 (scale-d = 0) over block b's k32 slot
//     s       = __fmul_rn(SFA(i, b), SFB(j, b))          (fp32, round to nearest even)
//     acc     = __fmaf_rn(s, partial, acc)                 (acc starts at C(i, j), or +0.0)
// A block of 32 (MX) fills the k32 slot; a block of 16 (NVFP4) fills k = 0..15 and zeros fill
// k = 16..31. fp4 codes are expanded exactly to e4m3 on chip.
//
// Structure: one CTA computes a 128 x 128 tile of D with 3 warpgroups. Warpgroup 0 is the
// producer (40 registers after setmaxnreg): thread 0 issues the TMA loads of A and B (fp8:
// 128 x 128-byte boxes with the 128-byte swizzle); all 128 threads load the 4 scale bytes of one
// row of A and one column of B per stage (one 32-bit word in either scale layout) and write them
// decoded to fp32 into shared memory; for fp4 recipes they also load the packed elements, expand
// them to e4m3 and store them in the same swizzled layout TMA would produce. Warpgroups 1 and 2
// are consumers (232 registers), side by side, 128 rows x 64 columns each. A consumer issues one
// m64n64k32 wgmma per 64-row half of each block into a fresh partial accumulator; the two halves
// use two partials, so the wgmma of the next half runs while the previous half is promoted
// (32 FMUL + 32 FFMA per thread): each consumer's FP32 work overlaps its own tensor-core work as
// well as the other consumer's. Stages (A, B, scales) form a ring of kStages slots guarded by
// "full" (producer -> consumers) and "empty" (consumers -> producer) mbarriers.
#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <stdexcept>
#include <string>

#include "blockscale/gpu/descriptors.h"
#include "cuda_check.h"
#include "gemm_launch.h"
#include "ptx.cuh"
#include "ptx_sm90.cuh"
#include "tma.h"
#include "wgmma_ops.cuh"

namespace blockscale::gpu::detail {
namespace {

constexpr int kRowBytes = 128;      // bytes of e4m3 per tile row per stage: 4 k32 slots
constexpr int kBlocksPerStage = 4;  // scale blocks (= wgmma k32 slots) per stage
constexpr int kGroupRows = 8;       // row tiles per L2 group in the tile order
constexpr int kBM = 128, kBN = 128;  // CTA tile
constexpr int kConsumers = 2;       // consumer warpgroups, side by side
constexpr int kCols = kBN / kConsumers;  // 64 columns per consumer: two m64n64 wgmmas per block
constexpr int kAcc = kCols / 2;     // f32 registers of one m64n64 accumulator per thread
constexpr int kThreads = 128 * (kConsumers + 1);
// A thread of a consumer holds 4 rows (two per 64-row half) x 16 columns; its B scales per block
// are 16 words at [t][.], rows of kSbRow words so that the four t of a warp use different banks.
constexpr int kSbRow = kCols / 4 + 4;
// setmaxnreg (PTX ISA 9.7.17.1): the producer gives registers back, the consumers take them; the
// totals stay within the 64 K registers of the SM: 128 * 40 + 256 * 232 = 64512.
constexpr int kProducerRegs = 40, kConsumerRegs = 232;

enum class Recipe { mxfp8, mxfp4, nvfp4 };

// The decoded fp32 scales of one stage, in the order the consumers read them. A: per block, each
// consumer thread's 4 rows (64 h + 16 w + g + 8 e for warp w, lane / 4 = g) are 4 consecutive
// floats. B: per block, consumer column group cn and thread lane % 4 = t, the thread's 16 columns
// (8 i + 2 t + e at [cn][t][2 i + e]); rows of kSbRow floats put the four t of a warp in
// different banks, so the 16-byte loads are free of bank conflicts.
struct StageScales {
  float a[kBlocksPerStage][kBM];
  float b[kBlocksPerStage][kConsumers * 4 * kSbRow];
};

constexpr std::size_t kStageBytes = std::size_t(kBM + kBN) * kRowBytes + sizeof(StageScales);
constexpr int kStages = int((225u * 1024u) / kStageBytes) < 8 ? int((225u * 1024u) / kStageBytes) : 8;

struct alignas(1024) Shared {
  std::uint8_t a[kStages][kBM * kRowBytes];  // 128-byte swizzle; each stage 1024-byte aligned
  std::uint8_t b[kStages][kBN * kRowBytes];
  StageScales scales[kStages];
  std::uint64_t full[kStages];
  std::uint64_t empty[kStages];
};

struct Params {
  int m, n, k;
  int blocks;     // scale blocks along K
  int stages_k;   // blocks / 4
  bool tiled_scales;
  const std::uint8_t* sfa;
  const std::uint8_t* sfb;
  const std::uint8_t* a4;  // packed fp4 (fp4 recipes), row stride k / 2
  const std::uint8_t* b4;
  const float* c;          // may be null
  void* d;
  bool d_bf16;
};

// OCP MX v1.0 §5.4: E8M0 is 2^(code - 127); 0xFF is NaN. Code 0 (2^-127) is an fp32 subnormal.
__device__ __forceinline__ float decode_e8m0(std::uint32_t c) {
  return c == 0xFFu ? __uint_as_float(0x7FFFFFFFu) : c == 0u ? __uint_as_float(0x00400000u) : __uint_as_float(c << 23);
}
// NVFP4 scale: E4M3 with the sign bit ignored (numerics.md b.5: the hardware masks bit 7);
// 0x7F is NaN; exponent field 0 is subnormal, m * 2^-9.
__device__ __forceinline__ float decode_ue4m3(std::uint32_t c) {
  c &= 0x7Fu;
  if (c == 0x7Fu) return __uint_as_float(0x7FFFFFFFu);
  const std::uint32_t e = c >> 3, m = c & 7u;
  return e == 0 ? __uint2float_rn(m) * 0x1p-9f : __uint_as_float(((e + 120u) << 23) | (m << 20));
}

// Eight e2m1 codes (one 32-bit word, element 2i in the low nibble of byte i) -> eight e4m3 codes.
// e2m1 magnitudes 0, 0.5, 1, 1.5, 2, 3, 4, 6 are the e4m3 codes 0x00, 0x30, 0x38, 0x3C, 0x40, 0x44,
// 0x48, 0x4C (exact); one byte permute looks up four magnitudes, a second one places the signs.
__device__ __forceinline__ uint2 expand_e2m1x8(std::uint32_t w) {
  constexpr std::uint32_t kLutLo = 0x3C383000u, kLutHi = 0x4C484440u;
  const std::uint32_t mag = w & 0x77777777u;
  const std::uint32_t sgn = (w >> 1) & 0x44444444u;  // selector 4 picks 0x80, 0 picks 0x00
  uint2 r;
  r.x = __byte_perm(kLutLo, kLutHi, mag) | __byte_perm(0u, 0x80u, sgn);
  r.y = __byte_perm(kLutLo, kLutHi, mag >> 16) | __byte_perm(0u, 0x80u, sgn >> 16);
  return r;
}

// Byte offset of 16-byte chunk `chunk` of tile row `row` under the 128-byte swizzle (the pattern
// TMA's CU_TENSOR_MAP_SWIZZLE_128B writes and the wgmma descriptor's swizzle mode 1 reads: within
// each 1024-byte group of 8 rows, chunk c of row r sits at chunk c ^ (r % 8)).
__device__ __forceinline__ std::uint32_t swizzled(int row, int chunk) {
  return std::uint32_t(row) * kRowBytes + std::uint32_t((chunk ^ (row & 7)) * 16);
}

// fp4 recipes: `rows` rows of packed e2m1 (row stride k / 2 bytes) from `src`, this stage's
// elements, expanded to e4m3 into the swizzled tile `dst`. MXFP4 stages hold 128 elements per row
// (4 loads of 16 bytes, one block each); NVFP4 stages hold 64 (2 loads, two blocks of 16 each;
// each block fills the first half of its k32 slot, the second half is zero).
template <Recipe R>
__device__ __forceinline__ void expand_fp4_tile(const std::uint8_t* src, int base_row, int limit, int rows,
                                                std::size_t row_stride, int kt, std::uint8_t* dst, int t128) {
  constexpr int kElems = R == Recipe::mxfp4 ? 128 : 64;
  constexpr int kLoadsPerRow = kElems / 32;
  for (int q = t128; q < rows * kLoadsPerRow; q += 128) {
    const int row = q / kLoadsPerRow, ch = q % kLoadsPerRow;
    const uint4 v = base_row + row < limit
                        ? __ldg(reinterpret_cast<const uint4*>(src + std::size_t(base_row + row) * row_stride +
                                                                std::size_t(kt) * (kElems / 2) + ch * 16))
                        : make_uint4(0, 0, 0, 0);
    const uint2 e0 = expand_e2m1x8(v.x), e1 = expand_e2m1x8(v.y);
    const uint2 e2 = expand_e2m1x8(v.z), e3 = expand_e2m1x8(v.w);
    const uint4 lo = make_uint4(e0.x, e0.y, e1.x, e1.y), hi = make_uint4(e2.x, e2.y, e3.x, e3.y);
    if constexpr (R == Recipe::mxfp4) {
      *reinterpret_cast<uint4*>(dst + swizzled(row, 2 * ch)) = lo;
      *reinterpret_cast<uint4*>(dst + swizzled(row, 2 * ch + 1)) = hi;
    } else {
      const uint4 zero = make_uint4(0, 0, 0, 0);
      *reinterpret_cast<uint4*>(dst + swizzled(row, 4 * ch)) = lo;
      *reinterpret_cast<uint4*>(dst + swizzled(row, 4 * ch + 1)) = zero;
      *reinterpret_cast<uint4*>(dst + swizzled(row, 4 * ch + 2)) = hi;
      *reinterpret_cast<uint4*>(dst + swizzled(row, 4 * ch + 3)) = zero;
    }
  }
}

// The A-scale slot of tile row `row` (0..127): each consumer thread's 4 rows together.
__device__ __forceinline__ int sa_slot(int row) {
  const int h = row / 64, w = (row % 64) / 16, g = row % 8, e = (row % 16) / 8;
  return (w * 8 + g) * 4 + h * 2 + e;
}
// The B-scale slot of tile column `col` (0..127) in StageScales::b (flattened [cn][t][i]).
__device__ __forceinline__ int sb_slot(int col) {
  const int cn = col / kCols, cl = col % kCols;
  return (cn * 4 + (cl % 8) / 2) * kSbRow + (cl / 8) * 2 + cl % 2;
}

// K-major, 128-byte swizzle: 8-row groups 1024 bytes apart (SBO); LBO unused (16). Within a
// stage, the k32 slot j starts 32 j bytes into the swizzle atom (gpu.md §3.2) and the second
// 64-row half 64 rows further: both are additions to the start-address field (bytes >> 4). The
// descriptor's high word (SBO, swizzle) is the same for every operand tile; the low word (start
// address, LBO) is 32-bit arithmetic that cannot carry into it (addresses < 2^18).
constexpr std::uint64_t kDescHi = desc::pack_wgmma_desc(0, 0, 1024, desc::WgmmaSwizzle::b128);
constexpr std::uint32_t kDescLbo = std::uint32_t(desc::pack_wgmma_desc(0, 16, 0, desc::WgmmaSwizzle::none));

// Half h (rows 64 h .. 64 h + 63 of the consumer) of block j of a stage (a_lo, b_lo: the
// descriptors' low words of the stage's A rows and this consumer's B columns): one m64n64k32
// wgmma into the fresh partial `part`, one commit group. No branch may sit between wgmma.fence
// and the wgmma (ptxas C7520).
template <class Op>
__device__ __forceinline__ void issue_half(float (&part)[kAcc], std::uint32_t a_lo, std::uint32_t b_lo, int j, int h) {
  wgmma_fence();
  Op::mma_fresh(part, kDescHi | (a_lo + std::uint32_t((h * 64 * kRowBytes + 32 * j) >> 4)),
                kDescHi | (b_lo + std::uint32_t((32 * j) >> 4)));
  wgmma_commit();
}

// One block's scales in a consumer thread's registers: its 4 rows (h, er) = (0,0), (0,1), (1,0),
// (1,1) and its 16 columns in the order of StageScales::b.
struct BlockScales {
  float4 a;
  float4 b[kCols / 16];
};
__device__ __forceinline__ BlockScales load_block_scales(const StageScales& sc, int j, int sa_at, int sb_at) {
  BlockScales r;
  r.a = *reinterpret_cast<const float4*>(&sc.a[j][sa_at]);
#pragma unroll
  for (int q2 = 0; q2 < kCols / 16; ++q2) r.b[q2] = *reinterpret_cast<const float4*>(&sc.b[j][sb_at + 4 * q2]);
  return r;
}

// acc[h] += (sa * sb) * part for half h of one block (FMUL, then FFMA). Register 4q + 2 er + e of
// half h holds row 64 h + 16 w + g + 8 er, column 8 q + 2 t + e of the consumer's 64.
// The partial is pinned first so that no read of it moves above the wgmma wait. The scale
// products do not depend on the partial, and ptxas hoists a half's 32 FMULs above the wait into
// the previous half, where their registers make it spill; so the row scales pass through a LOP3
// with the partial's bits and `zero` (a runtime 0 that the compiler cannot fold), which ties the
// products to the wait without changing a bit.
__device__ __forceinline__ void promote_half(float (&acc)[kAcc], float (&part)[kAcc], const BlockScales& bs, int h,
                                             std::uint32_t zero) {
#pragma unroll
  for (int i = 0; i < kAcc; ++i) reg_fence(part[i]);
  const std::uint32_t tie = __float_as_uint(part[0]) & zero;
  const float rows[2] = {__uint_as_float(__float_as_uint(h == 0 ? bs.a.x : bs.a.z) | tie),
                         __uint_as_float(__float_as_uint(h == 0 ? bs.a.y : bs.a.w) | tie)};
#pragma unroll
  for (int q2 = 0; q2 < kCols / 16; ++q2) {
    const float cols[4] = {bs.b[q2].x, bs.b[q2].y, bs.b[q2].z, bs.b[q2].w};  // (q = 2 q2, e = 0, 1), (q = 2 q2 + 1, e = 0, 1)
#pragma unroll
    for (int u = 0; u < 4; ++u)
#pragma unroll
      for (int er = 0; er < 2; ++er) {
        const int i = 4 * (2 * q2 + u / 2) + 2 * er + u % 2;
        acc[i] = __fmaf_rn(__fmul_rn(rows[er], cols[u]), part[i], acc[i]);
      }
  }
}

// One consumer warpgroup (cn = 0 or 1, a runtime value: a copy per consumer doubles the hot code
// and, compiled, still moves the descriptors to uniform registers with R2UR).
template <class Op, Recipe R>
__device__ __forceinline__ void consume(const Params& p, Shared& s, int m0, int n0, int t128, int cn) {
  const int warp = t128 / 32, lane = t128 % 32, t = lane % 4, g = lane / 4;
  const int row_base = 16 * warp + g;      // + 64 h + 8 e
  const int col_base = cn * kCols + 2 * t;  // + 8 q + e

  float acc[2][kAcc];
#pragma unroll
  for (int h = 0; h < 2; ++h)
#pragma unroll
    for (int i = 0; i < kAcc; ++i) {
      const int row = m0 + row_base + 64 * h + 8 * ((i % 4) / 2), col = n0 + col_base + 8 * (i / 4) + (i % 2);
      acc[h][i] = (p.c != nullptr && row < p.m && col < p.n) ? p.c[std::size_t(row) * p.n + col] : 0.0f;
    }

  // Two partials: half 0 of every block goes to part[0], half 1 to part[1].
  float part[2][kAcc];
  const std::uint32_t a_base = (smem_addr(s.a[0]) >> 4) | kDescLbo;
  const std::uint32_t b_base = ((smem_addr(s.b[0]) + std::uint32_t(cn * kCols * kRowBytes)) >> 4) | kDescLbo;
  constexpr std::uint32_t kStageStep = (kBM * kRowBytes) >> 4;  // descriptor units between stages
  const int sa_at = (warp * 8 + g) * 4;
  const int sb_at = (cn * 4 + t) * kSbRow;
  const std::uint32_t zero = std::uint32_t(p.m) >> 31;  // 0: validate_gemm requires M >= 1

  // The pipeline runs over the 8 halves of a stage's 4 blocks: issue half u + 1, wait for half u
  // (only the newest commit group may still run), promote half u, so each warp's FP32 work
  // overlaps its own tensor-core work. A commit group may be in flight only within an iteration
  // (ptxas serialises every wgmma when one is still pending at a loop's back edge, C7514): the
  // stage's last half, complete at the iteration's end, is promoted at the start of the next
  // iteration while that iteration's first half runs on the tensor cores.
  BlockScales last{};  // block 3's scales, for that deferred half
#pragma unroll 1
  for (int kt = 0; kt < p.stages_k; ++kt) {
    const int st = kt % kStages;
    mbarrier_wait(&s.full[st], (kt / kStages) & 1);
    const StageScales& sc = s.scales[st];
    const std::uint32_t a_lo = a_base + st * kStageStep, b_lo = b_base + st * kStageStep;
    // Each block's scales are loaded one half ahead of their first use.
    BlockScales bs = load_block_scales(sc, 0, sa_at, sb_at);
    issue_half<Op>(part[0], a_lo, b_lo, 0, 0);
    if (kt > 0) {
      // Half 0 of block 0 is the only commit group in flight, so this returns at once; it tells
      // ptxas that part[1] is not written by it.
      wgmma_wait<1>();
      promote_half(acc[1], part[1], last, 1, zero);
    }
#pragma unroll
    for (int j = 0; j < kBlocksPerStage; ++j) {
      issue_half<Op>(part[1], a_lo, b_lo, j, 1);
      wgmma_wait<1>();
      promote_half(acc[0], part[0], bs, 0, zero);
      if (j + 1 < kBlocksPerStage) {
        const BlockScales next = load_block_scales(sc, j + 1, sa_at, sb_at);
        issue_half<Op>(part[0], a_lo, b_lo, j + 1, 0);
        wgmma_wait<1>();
        promote_half(acc[1], part[1], bs, 1, zero);
        bs = next;
      } else {
        last = bs;
      }
    }
    wgmma_wait<0>();
    // Every wgmma that read this stage has completed and its scales are in registers: the slot
    // can be refilled once every consumer warp says so.
    __syncwarp();
    if (lane == 0) mbarrier_arrive(&s.empty[st]);
  }
  if (p.stages_k > 0) promote_half(acc[1], part[1], last, 1, zero);

  // Epilogue: f32 pairs (or bf16 pairs) straight from the fragment.
#pragma unroll
  for (int h = 0; h < 2; ++h)
#pragma unroll
    for (int q = 0; q < kAcc / 4; ++q)
#pragma unroll
      for (int er = 0; er < 2; ++er) {
        const int row = m0 + row_base + 64 * h + 8 * er, col = n0 + col_base + 8 * q;
        if (row >= p.m) continue;
        const float v0 = acc[h][4 * q + 2 * er], v1 = acc[h][4 * q + 2 * er + 1];
        const std::size_t idx = std::size_t(row) * p.n + col;
        const bool pair = col + 1 < p.n && (p.n % 2 == 0);
        if (p.d_bf16) {
          auto* d = static_cast<__nv_bfloat16*>(p.d);
          if (pair) {
            *reinterpret_cast<__nv_bfloat162*>(d + idx) = __floats2bfloat162_rn(v0, v1);
          } else {
            if (col < p.n) d[idx] = __float2bfloat16_rn(v0);
            if (col + 1 < p.n) d[idx + 1] = __float2bfloat16_rn(v1);
          }
        } else {
          auto* d = static_cast<float*>(p.d);
          if (pair) {
            *reinterpret_cast<float2*>(d + idx) = make_float2(v0, v1);
          } else {
            if (col < p.n) d[idx] = v0;
            if (col + 1 < p.n) d[idx + 1] = v1;
          }
        }
      }
}

// The producer warpgroup: operands and scales of every stage.
template <Recipe R>
__device__ __forceinline__ void produce(const CUtensorMap& tmap_a, const CUtensorMap& tmap_b, const Params& p,
                                        Shared& s, int m0, int n0, int t128) {
  // Rows past M (columns past N) get the format's 1.0 without a load (a tile may reach past the
  // 128-row padding of tiled scales); they only reach outputs that are not stored.
  constexpr std::uint32_t kOnes = R == Recipe::nvfp4 ? 0x38383838u : 0x7F7F7F7Fu;
  const int ra = m0 + t128, cb = n0 + t128;
  const int slot_a = sa_slot(t128), slot_b = sb_slot(t128);
  // One 32-bit word per row holds a stage's 4 scales, in either layout (gemm_launch.h), at an
  // offset affine in the stage index. The words of stage kt + 1 are loaded while stage kt is
  // written.
  const std::uint32_t* wa_at =
      ra < p.m ? reinterpret_cast<const std::uint32_t*>(p.sfa + scale_word_offset(p.tiled_scales, ra, 0, p.blocks)) : nullptr;
  const std::uint32_t* wb_at =
      cb < p.n ? reinterpret_cast<const std::uint32_t*>(p.sfb + scale_word_offset(p.tiled_scales, cb, 0, p.blocks)) : nullptr;
  const int word_step = int(scale_word_offset(p.tiled_scales, 0, 1, p.blocks) / 4);  // words between stages
  auto load_words = [&](int kt, std::uint32_t& wa, std::uint32_t& wb) {
    wa = wa_at != nullptr ? __ldg(wa_at + kt * word_step) : kOnes;
    wb = wb_at != nullptr ? __ldg(wb_at + kt * word_step) : kOnes;
  };
  std::uint32_t wa_next = kOnes, wb_next = kOnes;
  if (p.stages_k > 0) load_words(0, wa_next, wb_next);
  for (int kt = 0; kt < p.stages_k; ++kt) {
    const int st = kt % kStages;
    const std::uint32_t wa = wa_next, wb = wb_next;
    if (kt + 1 < p.stages_k) load_words(kt + 1, wa_next, wb_next);
    mbarrier_wait(&s.empty[st], ((kt / kStages) & 1) ^ 1);
    if constexpr (R == Recipe::mxfp8) {
      if (t128 == 0) {
        mbarrier_expect_tx(&s.full[st], (kBM + kBN) * kRowBytes);
        tma_load_2d(s.a[st], &tmap_a, &s.full[st], kt * kRowBytes, m0);
        tma_load_2d(s.b[st], &tmap_b, &s.full[st], kt * kRowBytes, n0);
      }
    } else {
      const std::size_t row_stride = std::size_t(p.k) / 2;
      expand_fp4_tile<R>(p.a4, m0, p.m, kBM, row_stride, kt, s.a[st], t128);
      expand_fp4_tile<R>(p.b4, n0, p.n, kBN, row_stride, kt, s.b[st], t128);
      fence_proxy_async_shared();  // thread-written operands, read by wgmma (async proxy)
    }
    StageScales& sc = s.scales[st];
#pragma unroll
    for (int j = 0; j < kBlocksPerStage; ++j) {
      const std::uint32_t ca = (wa >> (8 * j)) & 0xFFu, cbj = (wb >> (8 * j)) & 0xFFu;
      sc.a[j][slot_a] = R == Recipe::nvfp4 ? decode_ue4m3(ca) : decode_e8m0(ca);
      sc.b[j][slot_b] = R == Recipe::nvfp4 ? decode_ue4m3(cbj) : decode_e8m0(cbj);
    }
    mbarrier_arrive(&s.full[st]);
  }
}

__device__ __forceinline__ void set_max_registers_dec() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(kProducerRegs));
}
__device__ __forceinline__ void set_max_registers_inc() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(kConsumerRegs));
}

template <class Op, Recipe R>
__global__ void __launch_bounds__(kThreads, 1)
    gemm_sm90_kernel(const __grid_constant__ CUtensorMap tmap_a, const __grid_constant__ CUtensorMap tmap_b,
                     const Params p) {
  extern __shared__ std::uint8_t smem_raw[];
  const std::uint32_t pad = (1024u - (smem_addr(smem_raw) & 1023u)) & 1023u;
  Shared& s = *reinterpret_cast<Shared*>(smem_raw + pad);

  // Tile order: groups of kGroupRows row tiles sweep the column tiles, so concurrently running
  // CTAs share A and B tiles in L2.
  const int tiles_m = (p.m + kBM - 1) / kBM, tiles_n = (p.n + kBN - 1) / kBN;
  const int bid = blockIdx.x;
  const int group = bid / (kGroupRows * tiles_n);
  const int first_m = group * kGroupRows;
  const int group_rows = min(tiles_m - first_m, kGroupRows);
  const int in_group = bid % (kGroupRows * tiles_n);
  const int m0 = (first_m + in_group % group_rows) * kBM;
  const int n0 = (in_group / group_rows) * kBN;

  const int wg = threadIdx.x / 128, t128 = threadIdx.x % 128;
  if (threadIdx.x == 0) {
    for (int i = 0; i < kStages; ++i) {
      mbarrier_init(&s.full[i], 128);
      mbarrier_init(&s.empty[i], 4 * kConsumers);  // lane 0 of each consumer warp
    }
    fence_mbarrier_init();
  }
  __syncthreads();

  if (wg == 0) {
    set_max_registers_dec();
    produce<R>(tmap_a, tmap_b, p, s, m0, n0, t128);
  } else {
    set_max_registers_inc();
    consume<Op, R>(p, s, m0, n0, t128, wg - 1);
  }
}

template <class Op, Recipe R>
void launch(const GemmKernel& kernel, const GemmArgs& args, const GemmDeviceOperands& ops, cudaStream_t stream) {
  Params p{};
  p.m = args.m, p.n = args.n, p.k = args.k;
  p.blocks = args.k / kernel.block;
  p.stages_k = p.blocks / kBlocksPerStage;
  p.tiled_scales = args.scale_layout == ScaleLayout::tiled_128x4;
  p.sfa = static_cast<const std::uint8_t*>(ops.sfa);
  p.sfb = static_cast<const std::uint8_t*>(ops.sfb);
  p.c = ops.c;
  p.d = ops.d;
  p.d_bf16 = args.output == GemmOutput::bf16;
  CUtensorMap ma{}, mb{};
  if constexpr (R == Recipe::mxfp8) {
    ma = make_byte_matrix_map(ops.a, std::uint64_t(args.m), std::uint64_t(args.k), kBM, kRowBytes,
                              CU_TENSOR_MAP_SWIZZLE_128B);
    mb = make_byte_matrix_map(ops.b, std::uint64_t(args.n), std::uint64_t(args.k), kBN, kRowBytes,
                              CU_TENSOR_MAP_SWIZZLE_128B);
  } else {
    p.a4 = static_cast<const std::uint8_t*>(ops.a);
    p.b4 = static_cast<const std::uint8_t*>(ops.b);
  }
  auto* fn = gemm_sm90_kernel<Op, R>;
  constexpr std::size_t kShared = sizeof(Shared) + 1024;  // + alignment slack
  BLOCKSCALE_CUDA(cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, int(kShared)));
  const unsigned grid = unsigned(((args.m + kBM - 1) / kBM) * ((args.n + kBN - 1) / kBN));
  fn<<<grid, kThreads, kShared, stream>>>(ma, mb, p);
  BLOCKSCALE_CUDA_LAUNCHED(kernel.name.c_str());
}

}  // namespace

void launch_gemm_sm90(const GemmKernel& kernel, const GemmArgs& args, const GemmDeviceOperands& ops,
                      cudaStream_t stream) {
  using F = Format;
  const F e4 = F::float8_e4m3fn, e5 = F::float8_e5m2;
  switch (kernel.recipe) {
    case GemmRecipe::mxfp8:
      if (kernel.a == e4 && kernel.b == e4) return launch<Wgmma_m64n64k32_f32_e4m3_e4m3, Recipe::mxfp8>(kernel, args, ops, stream);
      if (kernel.a == e4 && kernel.b == e5) return launch<Wgmma_m64n64k32_f32_e4m3_e5m2, Recipe::mxfp8>(kernel, args, ops, stream);
      if (kernel.a == e5 && kernel.b == e4) return launch<Wgmma_m64n64k32_f32_e5m2_e4m3, Recipe::mxfp8>(kernel, args, ops, stream);
      if (kernel.a == e5 && kernel.b == e5) return launch<Wgmma_m64n64k32_f32_e5m2_e5m2, Recipe::mxfp8>(kernel, args, ops, stream);
      break;
    case GemmRecipe::mxfp4: return launch<Wgmma_m64n64k32_f32_e4m3_e4m3, Recipe::mxfp4>(kernel, args, ops, stream);
    case GemmRecipe::nvfp4: return launch<Wgmma_m64n64k32_f32_e4m3_e4m3, Recipe::nvfp4>(kernel, args, ops, stream);
  }
  throw std::logic_error("no sm_90a GEMM instantiated for '" + kernel.name + "'");
}

}  // namespace blockscale::gpu::detail
