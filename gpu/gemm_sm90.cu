// SPDX-License-Identifier: Apache-2.0
// sm_90a block-scaled GEMM: wgmma fp8 with promotion into f32 registers once per scale block.
//
// Numerics (the emulator's "Hopper promotion" schedule with P = 1; gemm.h states it in full):
//   for each K-block b = 0, 1, ... in order:
//     partial = wgmma.mma_async m64n128k32 f32 (scale-d = 0) over block b's k32 slot
//     s       = __fmul_rn(SFA(i, b), SFB(j, b))          (fp32, round to nearest even)
//     acc     = __fmaf_rn(s, partial, acc)                 (acc starts at C(i, j), or +0.0)
// A block of 32 (MX) fills the k32 slot; a block of 16 (NVFP4) fills k = 0..15 and zeros fill
// k = 16..31. fp4 codes are expanded exactly to e4m3 on chip.
//
// Structure: one CTA computes a 128 x 128 tile of D with 3 warpgroups. Warpgroup 0 is the
// producer: thread 0 issues the TMA loads of A and B (fp8: 128 x 128-byte boxes with the 128-byte
// swizzle); all 128 threads load the 4 scale bytes of one row of A and one column of B per stage
// (one 32-bit word in either scale layout), decode them to fp32 in shared memory, and for fp4
// recipes load the packed elements, expand them to e4m3 and store them in the same swizzled layout
// TMA would produce. Warpgroups 1 and 2 are consumers, 64 rows x 128 columns each: per block, one
// wgmma into a fresh partial accumulator, wait, then 64 FMUL + 64 FFMA per thread. The FP32 work
// of one consumer overlaps the other's wgmma (the DeepGEMM arrangement; a wgmma in flight while
// the same warpgroup reads another accumulator makes ptxas serialise the pipeline, C7514). Stages
// (A, B, scales) form a ring of kStages slots guarded by "full" (producer -> consumers) and
// "empty" (consumers -> producer) mbarriers.
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

constexpr int kRowBytes = 128;          // bytes of e4m3 per tile row per stage: 4 k32 slots
constexpr int kBlocksPerStage = 4;      // scale blocks (= wgmma k32 slots) per stage
constexpr int kGroupRows = 8;           // row tiles per L2 group in the tile order

enum class Recipe { mxfp8, mxfp4, nvfp4 };

// Consumer warpgroups in a WM x WN grid; each covers MH x 64 rows (MH m64 wgmmas per block, one
// per 64-row half) and BN columns, and issues X blocks' wgmmas into X fresh partial
// accumulators before each wait. A thread of a consumer holds 2 MH rows and BN / 4 columns, so
// the B scales it reads per block serve 2 MH rows.
template <int WM, int WN, int BN, int MH, int X>
struct Config {
  static constexpr int kConsumers = WM * WN;
  static constexpr int kWM = WM, kWN = WN, kMH = MH, kX = X, kBNw = BN;
  static constexpr int kBM = 64 * MH * WM, kBN = BN * WN;
  static constexpr int kThreads = 128 * (kConsumers + 1);
  static constexpr int kAcc = BN / 2;       // f32 registers of one m64nBN accumulator
  static constexpr int kSbRow = BN / 4 + 4;  // B-scale floats per (t, consumer column); +4 pads banks
  static constexpr std::size_t kScaleBytes = 4u * kBlocksPerStage * (kBM + 4 * WN * kSbRow);
  static constexpr std::size_t kStageBytes = std::size_t(kBM + kBN) * kRowBytes + kScaleBytes;
  static constexpr int kStages = int((225u * 1024u) / kStageBytes) < 8 ? int((225u * 1024u) / kStageBytes) : 8;
  static_assert(kBlocksPerStage % X == 0, "X must divide the blocks of a stage");
  static_assert(kBM <= 256 && kBN <= 256, "a TMA box holds at most 256 rows");
  static_assert(kConsumers == 2, "the kernel runs two consumer warpgroups");
};

template <class C>
struct alignas(1024) Shared {
  std::uint8_t a[C::kStages][C::kBM * kRowBytes];  // 128-byte swizzle; each stage 1024-byte aligned
  std::uint8_t b[C::kStages][C::kBN * kRowBytes];
  // Decoded A scales, per block, in the order a consumer thread reads them: its 2 MH rows
  // (64 h + 16 w + g + 8 e for warp w, lane / 4 = g) are 2 MH consecutive floats.
  float sa[C::kStages][kBlocksPerStage][C::kBM];
  // Decoded B scales per block: for consumer column cn, thread lane % 4 = t reads its BN / 4
  // columns (8 i + 2 t + e at [cn][t][2 i + e]) as float4s. Rows of kSbRow = BN / 4 + 4 floats put
  // the four t in different banks, so the loads are free of bank conflicts.
  float sb[C::kStages][kBlocksPerStage][C::kWN][4][C::kSbRow];
  std::uint64_t full[C::kStages];
  std::uint64_t empty[C::kStages];
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

// The A-scale slot of tile row `row`: consumer row-group, then each thread's 2 MH rows together.
template <class C>
__device__ __forceinline__ int sa_slot(int row) {
  constexpr int kRowsW = 64 * C::kMH;  // rows of one consumer row-group
  const int cm = row / kRowsW, rr = row % kRowsW;
  const int h = rr / 64, w = (rr % 64) / 16, g = rr % 8, e = (rr % 16) / 8;
  return cm * kRowsW + (w * 8 + g) * (2 * C::kMH) + h * 2 + e;
}

// One consumer warpgroup (cw = 0 or 1, a runtime value: instantiating a copy per consumer makes
// ptxas spill in the hot loop).
template <class Op, Recipe R, class C>
__device__ __forceinline__ void consume(const Params& p, Shared<C>& s, int m0, int n0, int t128, int cw) {
  constexpr int kStages = C::kStages, X = C::kX, kAcc = C::kAcc, MH = C::kMH, kBM = C::kBM, kBN = C::kBN;
  const int cm = cw % C::kWM, cn = cw / C::kWM;  // this consumer's row group and column group
  const int warp = t128 / 32, lane = t128 % 32, t = lane % 4, g = lane / 4;
  const int row_base = cm * 64 * MH + 16 * warp + g;  // + 64 h + 8 e
  const int col_base = cn * C::kBNw + 2 * t;          // + 8 q + e

  // acc[h] = C (or +0.0): register 4q + 2e_row + e_col holds row row_base + 64 h + 8 e_row,
  // column col_base + 8 q + e_col.
  float acc[MH][kAcc];
#pragma unroll
  for (int h = 0; h < MH; ++h)
#pragma unroll
    for (int i = 0; i < kAcc; ++i) {
      const int row = m0 + row_base + 64 * h + 8 * ((i % 4) / 2), col = n0 + col_base + 8 * (i / 4) + (i % 2);
      acc[h][i] = (p.c != nullptr && row < p.m && col < p.n) ? p.c[std::size_t(row) * p.n + col] : 0.0f;
    }

  float part[X][MH][kAcc];
  const std::uint32_t a_base = smem_addr(s.a[0]) + std::uint32_t(cm * 64 * MH * kRowBytes);
  const std::uint32_t b_base = smem_addr(s.b[0]) + std::uint32_t(cn * C::kBNw * kRowBytes);
  const int sa_at = cm * 64 * MH + (warp * 8 + g) * (2 * MH);

#pragma unroll 1
  for (int kt = 0; kt < p.stages_k; ++kt) {
    const int st = kt % kStages;
    mbarrier_wait(&s.full[st], (kt / kStages) & 1);
    // K-major, 128-byte swizzle: 8-row groups 1024 bytes apart (SBO); LBO unused (16). Within the
    // stage, the k32 slot j starts 32 j bytes into the swizzle atom (gpu.md §3.2) and the second
    // 64-row half 64 rows further: both are additions to the start-address field (bytes >> 4).
    // The descriptor's high word (SBO, swizzle) is the same for every operand tile; the low word
    // (start address, LBO) is 32-bit arithmetic that cannot carry into it (addresses < 2^18).
    constexpr std::uint64_t kDescHi = desc::pack_wgmma_desc(0, 0, 1024, desc::WgmmaSwizzle::b128);
    constexpr std::uint32_t kDescLbo = std::uint32_t(desc::pack_wgmma_desc(0, 16, 0, desc::WgmmaSwizzle::none));
    const std::uint32_t a_lo = ((a_base + st * (kBM * kRowBytes)) >> 4) | kDescLbo;
    const std::uint32_t b_lo = ((b_base + st * (kBN * kRowBytes)) >> 4) | kDescLbo;
    const float* sa_st = &s.sa[st][0][sa_at];
    const float* sb_st = &s.sb[st][0][cn][t][0];
#pragma unroll 1
    for (int j0 = 0; j0 < kBlocksPerStage; j0 += X) {
      // X x MH wgmmas into fresh accumulators, one commit, one wait: the FP32 work below never
      // overlaps a wgmma of this warpgroup (ptxas would serialise it, C7514), only the other
      // consumers' wgmmas. No branch may sit between wgmma.fence and the wgmmas (C7520).
      wgmma_fence();
#pragma unroll
      for (int x = 0; x < X; ++x)
#pragma unroll
        for (int h = 0; h < MH; ++h) {
          Op::mma_fresh(part[x][h], kDescHi | (a_lo + std::uint32_t((h * 64 * kRowBytes + 32 * (j0 + x)) >> 4)),
                        kDescHi | (b_lo + std::uint32_t((32 * (j0 + x)) >> 4)));
        }
      wgmma_commit();
      float sa[X][2 * MH];  // read while the MMAs run
#pragma unroll
      for (int x = 0; x < X; ++x) {
        if constexpr (MH == 2) {
          const float4 v = *reinterpret_cast<const float4*>(&s.sa[st][j0 + x][sa_at]);
          sa[x][0] = v.x, sa[x][1] = v.y, sa[x][2] = v.z, sa[x][3] = v.w;
        } else {
          const float2 v = *reinterpret_cast<const float2*>(&s.sa[st][j0 + x][sa_at]);
          sa[x][0] = v.x, sa[x][1] = v.y;
        }
      }
      wgmma_wait<0>();
#pragma unroll
      for (int x = 0; x < X; ++x)
#pragma unroll
        for (int h = 0; h < MH; ++h)
#pragma unroll
          for (int i = 0; i < kAcc; ++i) reg_fence(part[x][h][i]);
#pragma unroll
      for (int x = 0; x < X; ++x) {
        const float4* sbv = reinterpret_cast<const float4*>(sb_st + (j0 + x) * (C::kWN * 4 * C::kSbRow));
#pragma unroll
        for (int q2 = 0; q2 < C::kBNw / 16; ++q2) {
          const float4 v = sbv[q2];
          const float sbs[4] = {v.x, v.y, v.z, v.w};  // columns (q = 2 q2, e = 0, 1), (q = 2 q2 + 1, e = 0, 1)
#pragma unroll
          for (int u = 0; u < 4; ++u) {
            const int q = 2 * q2 + u / 2, e = u % 2;
#pragma unroll
            for (int h = 0; h < MH; ++h)
#pragma unroll
              for (int er = 0; er < 2; ++er) {
                const int i = 4 * q + 2 * er + e;
                acc[h][i] = __fmaf_rn(__fmul_rn(sa[x][2 * h + er], sbs[u]), part[x][h][i], acc[h][i]);
              }
          }
        }
      }
    }
    // The stage's wgmmas have completed and its scales are in registers: the slot can be refilled
    // once every consumer warp says so.
    __syncwarp();
    if (lane == 0) mbarrier_arrive(&s.empty[st]);
  }

  // Epilogue: f32 pairs (or bf16 pairs) straight from the fragment.
#pragma unroll
  for (int h = 0; h < MH; ++h)
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

template <class Op, Recipe R, class C>
__global__ void __launch_bounds__(C::kThreads, 1)
    gemm_sm90_kernel(const __grid_constant__ CUtensorMap tmap_a, const __grid_constant__ CUtensorMap tmap_b,
                     const Params p) {
  constexpr int kBM = C::kBM, kBN = C::kBN, kStages = C::kStages;
  extern __shared__ std::uint8_t smem_raw[];
  const std::uint32_t pad = (1024u - (smem_addr(smem_raw) & 1023u)) & 1023u;
  Shared<C>& s = *reinterpret_cast<Shared<C>*>(smem_raw + pad);

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
      mbarrier_init(&s.empty[i], 4 * C::kConsumers);  // lane 0 of each consumer warp
    }
    fence_mbarrier_init();
  }
  __syncthreads();

  if (wg == 0) {
    // ------------------------------------------------------------------ producer warpgroup
    // Rows past M (columns past N) get the format's 1.0 without a load (a tile may reach past the
    // 128-row padding of tiled scales); they only reach outputs that are not stored.
    constexpr std::uint32_t kOnes = R == Recipe::nvfp4 ? 0x38383838u : 0x7F7F7F7Fu;
    constexpr int kRowsA = (kBM + 127) / 128, kRowsB = (kBN + 127) / 128;  // rows per producer thread
    for (int kt = 0; kt < p.stages_k; ++kt) {
      const int st = kt % kStages;
      // One 32-bit word per row holds the stage's 4 scales, in either layout (gemm_launch.h).
      std::uint32_t wa[kRowsA], wb[kRowsB];
#pragma unroll
      for (int u = 0; u < kRowsA; ++u) {
        const int row = t128 + 128 * u, ra = m0 + row;
        wa[u] = kOnes;
        if (row < kBM && ra < p.m) {
          wa[u] = __ldg(reinterpret_cast<const std::uint32_t*>(p.sfa + scale_word_offset(p.tiled_scales, ra, kt, p.blocks)));
        }
      }
#pragma unroll
      for (int u = 0; u < kRowsB; ++u) {
        const int col = t128 + 128 * u, cb = n0 + col;
        wb[u] = kOnes;
        if (col < kBN && cb < p.n) {
          wb[u] = __ldg(reinterpret_cast<const std::uint32_t*>(p.sfb + scale_word_offset(p.tiled_scales, cb, kt, p.blocks)));
        }
      }
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
#pragma unroll
      for (int j = 0; j < kBlocksPerStage; ++j) {
#pragma unroll
        for (int u = 0; u < kRowsA; ++u) {
          const int row = t128 + 128 * u;
          if (row < kBM) {
            const std::uint32_t ca = (wa[u] >> (8 * j)) & 0xFFu;
            s.sa[st][j][sa_slot<C>(row)] = R == Recipe::nvfp4 ? decode_ue4m3(ca) : decode_e8m0(ca);
          }
        }
#pragma unroll
        for (int u = 0; u < kRowsB; ++u) {
          const int col = t128 + 128 * u;
          if (col < kBN) {
            const int cn = col / C::kBNw, cl = col % C::kBNw;
            const std::uint32_t cb = (wb[u] >> (8 * j)) & 0xFFu;
            s.sb[st][j][cn][(cl % 8) / 2][(cl / 8) * 2 + cl % 2] = R == Recipe::nvfp4 ? decode_ue4m3(cb) : decode_e8m0(cb);
          }
        }
      }
      mbarrier_arrive(&s.full[st]);
    }
  } else {
    consume<Op, R, C>(p, s, m0, n0, t128, wg - 1);
  }
}

template <class Op, Recipe R, class C>
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
    ma = make_byte_matrix_map(ops.a, std::uint64_t(args.m), std::uint64_t(args.k), C::kBM, kRowBytes,
                              CU_TENSOR_MAP_SWIZZLE_128B);
    mb = make_byte_matrix_map(ops.b, std::uint64_t(args.n), std::uint64_t(args.k), C::kBN, kRowBytes,
                              CU_TENSOR_MAP_SWIZZLE_128B);
  } else {
    p.a4 = static_cast<const std::uint8_t*>(ops.a);
    p.b4 = static_cast<const std::uint8_t*>(ops.b);
  }
  auto* fn = gemm_sm90_kernel<Op, R, C>;
  constexpr std::size_t kShared = sizeof(Shared<C>) + 1024;  // + alignment slack
  BLOCKSCALE_CUDA(cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, int(kShared)));
  const unsigned grid = unsigned(((args.m + C::kBM - 1) / C::kBM) * ((args.n + C::kBN - 1) / C::kBN));
  fn<<<grid, C::kThreads, kShared, stream>>>(ma, mb, p);
  BLOCKSCALE_CUDA_LAUNCHED(kernel.name.c_str());
}

template <class C>
void launch_config(const GemmKernel& kernel, const GemmArgs& args, const GemmDeviceOperands& ops, cudaStream_t stream) {
  using F = Format;
  const F e4 = F::float8_e4m3fn, e5 = F::float8_e5m2;
  switch (kernel.recipe) {
    case GemmRecipe::mxfp8:
      if (kernel.a == e4 && kernel.b == e4) return launch<Wgmma_m64n64k32_f32_e4m3_e4m3, Recipe::mxfp8, C>(kernel, args, ops, stream);
      if (kernel.a == e4 && kernel.b == e5) return launch<Wgmma_m64n64k32_f32_e4m3_e5m2, Recipe::mxfp8, C>(kernel, args, ops, stream);
      if (kernel.a == e5 && kernel.b == e4) return launch<Wgmma_m64n64k32_f32_e5m2_e4m3, Recipe::mxfp8, C>(kernel, args, ops, stream);
      if (kernel.a == e5 && kernel.b == e5) return launch<Wgmma_m64n64k32_f32_e5m2_e5m2, Recipe::mxfp8, C>(kernel, args, ops, stream);
      break;
    case GemmRecipe::mxfp4: return launch<Wgmma_m64n64k32_f32_e4m3_e4m3, Recipe::mxfp4, C>(kernel, args, ops, stream);
    case GemmRecipe::nvfp4: return launch<Wgmma_m64n64k32_f32_e4m3_e4m3, Recipe::nvfp4, C>(kernel, args, ops, stream);
  }
  throw std::logic_error("no sm_90a GEMM instantiated for '" + kernel.name + "'");
}

}  // namespace

void launch_gemm_sm90(const GemmKernel& kernel, const GemmArgs& args, const GemmDeviceOperands& ops,
                      cudaStream_t stream) {
  // A 128 x 128 tile; two consumers side by side, 128 rows x 64 columns each (two m64n64 wgmmas
  // per block), one block per wait.
  launch_config<Config<1, 2, 64, 2, 1>>(kernel, args, ops, stream);
}

}  // namespace blockscale::gpu::detail
