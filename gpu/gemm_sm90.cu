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

constexpr int kBM = 128, kBN = 128;
constexpr int kRowBytes = 128;          // bytes of e4m3 per tile row per stage: 4 k32 slots
constexpr int kBlocksPerStage = 4;      // scale blocks (= wgmma k32 slots) per stage
constexpr int kStages = 6;
constexpr int kThreads = 384;
constexpr int kConsumerArrivals = 8;    // lane 0 of each consumer warp releases a slot

enum class Recipe { mxfp8, mxfp4, nvfp4 };

struct alignas(1024) Shared {
  std::uint8_t a[kStages][kBM * kRowBytes];  // 16 KB each, 128-byte swizzle, 1024-byte aligned
  std::uint8_t b[kStages][kBN * kRowBytes];
  float sa[kStages][kBlocksPerStage][kBM];   // decoded A scales, [block][row]
  // Decoded B scales in the order a consumer thread reads them: column n = 8i + 2t + e goes to
  // [t * 32 + 2i + e], so a thread with lane % 4 = t reads its 32 columns as 8 float4.
  float sb[kStages][kBlocksPerStage][kBN];
  std::uint64_t full[kStages];
  std::uint64_t empty[kStages];
};
constexpr std::size_t kSharedBytes = sizeof(Shared) + 1024;  // + alignment slack

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

template <class Op, Recipe R>
__global__ void __launch_bounds__(kThreads, 1)
    gemm_sm90_kernel(const __grid_constant__ CUtensorMap tmap_a, const __grid_constant__ CUtensorMap tmap_b,
                     const Params p) {
  extern __shared__ std::uint8_t smem_raw[];
  const std::uint32_t pad = (1024u - (smem_addr(smem_raw) & 1023u)) & 1023u;
  Shared& s = *reinterpret_cast<Shared*>(smem_raw + pad);

  // Tile order: groups of 8 row-tiles sweep the column tiles, so concurrently running CTAs share
  // A and B tiles in L2.
  const int tiles_m = (p.m + kBM - 1) / kBM, tiles_n = (p.n + kBN - 1) / kBN;
  constexpr int kGroup = 8;
  const int bid = blockIdx.x;
  const int group = bid / (kGroup * tiles_n);
  const int first_m = group * kGroup;
  const int group_rows = min(tiles_m - first_m, kGroup);
  const int in_group = bid % (kGroup * tiles_n);
  const int m0 = (first_m + in_group % group_rows) * kBM;
  const int n0 = (in_group / group_rows) * kBN;

  const int wg = threadIdx.x / 128, t128 = threadIdx.x % 128;
  if (threadIdx.x == 0) {
    for (int i = 0; i < kStages; ++i) {
      mbarrier_init(&s.full[i], 128);
      mbarrier_init(&s.empty[i], kConsumerArrivals);
    }
    fence_mbarrier_init();
  }
  __syncthreads();

  if (wg == 0) {
    // ------------------------------------------------------------------ producer warpgroup
    const int ra = m0 + t128, rb = n0 + t128;  // this thread's A row and B column
    const bool ra_ok = ra < p.m, rb_ok = rb < p.n;
    // Tiled scales are padded to 128 rows, so every row of a tile has a word; linear ones do not.
    const bool ra_read = p.tiled_scales || ra_ok, rb_read = p.tiled_scales || rb_ok;
    const int col_slot = ((t128 % 8) / 2) * 32 + (t128 / 8) * 2 + (t128 % 2);
    // Rows past M (linear scales) get the format's 1.0; they only reach outputs that are not stored.
    constexpr std::uint32_t kOnes = R == Recipe::nvfp4 ? 0x38383838u : 0x7F7F7F7Fu;
    for (int kt = 0; kt < p.stages_k; ++kt) {
      const int st = kt % kStages;
      const std::uint32_t wa =
          ra_read ? __ldg(reinterpret_cast<const std::uint32_t*>(p.sfa + scale_word_offset(p.tiled_scales, ra, kt, p.blocks)))
                  : kOnes;
      const std::uint32_t wb =
          rb_read ? __ldg(reinterpret_cast<const std::uint32_t*>(p.sfb + scale_word_offset(p.tiled_scales, rb, kt, p.blocks)))
                  : kOnes;
      mbarrier_wait(&s.empty[st], ((kt / kStages) & 1) ^ 1);
      if constexpr (R == Recipe::mxfp8) {
        if (t128 == 0) {
          mbarrier_expect_tx(&s.full[st], (kBM + kBN) * kRowBytes);
          tma_load_2d(s.a[st], &tmap_a, &s.full[st], kt * kRowBytes, m0);
          tma_load_2d(s.b[st], &tmap_b, &s.full[st], kt * kRowBytes, n0);
        }
      } else {
        // fp4: 16 packed bytes (32 elements) per load. MXFP4 stages hold 128 elements per row (4
        // loads per row, one block each); NVFP4 stages hold 64 (2 loads per row, two blocks each).
        constexpr int kElems = R == Recipe::mxfp4 ? 128 : 64;
        constexpr int kLoadsPerRow = kElems / 32;
        const std::size_t row_stride = std::size_t(p.k) / 2;
#pragma unroll
        for (int operand = 0; operand < 2; ++operand) {
          const std::uint8_t* src = operand == 0 ? p.a4 : p.b4;
          const int base_row = operand == 0 ? m0 : n0, limit = operand == 0 ? p.m : p.n;
          std::uint8_t* dst = operand == 0 ? s.a[st] : s.b[st];
          uint4 v[kLoadsPerRow];
#pragma unroll
          for (int u = 0; u < kLoadsPerRow; ++u) {
            const int q = t128 + 128 * u, row = q / kLoadsPerRow, ch = q % kLoadsPerRow;
            v[u] = base_row + row < limit
                       ? __ldg(reinterpret_cast<const uint4*>(src + std::size_t(base_row + row) * row_stride +
                                                               std::size_t(kt) * (kElems / 2) + ch * 16))
                       : make_uint4(0, 0, 0, 0);
          }
#pragma unroll
          for (int u = 0; u < kLoadsPerRow; ++u) {
            const int q = t128 + 128 * u, row = q / kLoadsPerRow, ch = q % kLoadsPerRow;
            const uint2 e0 = expand_e2m1x8(v[u].x), e1 = expand_e2m1x8(v[u].y);
            const uint2 e2 = expand_e2m1x8(v[u].z), e3 = expand_e2m1x8(v[u].w);
            const uint4 lo = make_uint4(e0.x, e0.y, e1.x, e1.y), hi = make_uint4(e2.x, e2.y, e3.x, e3.y);
            if constexpr (R == Recipe::mxfp4) {
              // Elements 32ch .. 32ch+31 are block ch: k32 slot ch = 16-byte chunks 2ch, 2ch+1.
              *reinterpret_cast<uint4*>(dst + swizzled(row, 2 * ch)) = lo;
              *reinterpret_cast<uint4*>(dst + swizzled(row, 2 * ch + 1)) = hi;
            } else {
              // Blocks 2ch and 2ch+1 (16 elements each) go to slots 2ch and 2ch+1, first half;
              // the second half of each slot is zero.
              const uint4 zero = make_uint4(0, 0, 0, 0);
              *reinterpret_cast<uint4*>(dst + swizzled(row, 4 * ch)) = lo;
              *reinterpret_cast<uint4*>(dst + swizzled(row, 4 * ch + 1)) = zero;
              *reinterpret_cast<uint4*>(dst + swizzled(row, 4 * ch + 2)) = hi;
              *reinterpret_cast<uint4*>(dst + swizzled(row, 4 * ch + 3)) = zero;
            }
          }
        }
        fence_proxy_async_shared();  // thread-written operands, read by wgmma (async proxy)
      }
#pragma unroll
      for (int j = 0; j < kBlocksPerStage; ++j) {
        const std::uint32_t ca = (wa >> (8 * j)) & 0xFFu, cb = (wb >> (8 * j)) & 0xFFu;
        if constexpr (R == Recipe::nvfp4) {
          s.sa[st][j][t128] = decode_ue4m3(ca);
          s.sb[st][j][col_slot] = decode_ue4m3(cb);
        } else {
          s.sa[st][j][t128] = decode_e8m0(ca);
          s.sb[st][j][col_slot] = decode_e8m0(cb);
        }
      }
      mbarrier_arrive(&s.full[st]);
    }
  } else {
  // -------------------------------------------------------------------- consumer warpgroups
  const int cw = wg - 1;                       // rows 64 cw .. 64 cw + 63 of the tile
  const int warp = t128 / 32, lane = t128 % 32, t = lane % 4;
  const int r0 = 64 * cw + 16 * warp + lane / 4, r1 = r0 + 8;  // tile rows of this thread

  float acc[64];
  {
    // acc = C (or +0.0): register 4q + 2h + e holds row r_h, column 8q + 2t + e.
#pragma unroll
    for (int q = 0; q < 16; ++q)
#pragma unroll
      for (int h = 0; h < 2; ++h)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const int row = m0 + (h ? r1 : r0), col = n0 + 8 * q + 2 * t + e;
          acc[4 * q + 2 * h + e] = (p.c != nullptr && row < p.m && col < p.n) ? p.c[std::size_t(row) * p.n + col] : 0.0f;
        }
  }

  float part[64];
  const std::uint32_t a_base = smem_addr(s.a[0]) + std::uint32_t(cw * 64 * kRowBytes);
  const std::uint32_t b_base = smem_addr(s.b[0]);
  constexpr std::uint32_t kStageBytes = kBM * kRowBytes;

#pragma unroll 1
  for (int b = 0; b < p.blocks; ++b) {
    const int kt = b / kBlocksPerStage, j = b % kBlocksPerStage, st = kt % kStages;
    if (j == 0) mbarrier_wait(&s.full[st], (kt / kStages) & 1);
    // K-major, 128-byte swizzle: 8-row groups 1024 bytes apart (SBO); LBO unused (16). The k32
    // slot j starts 32 j bytes into the swizzle atom (gpu.md §3.2).
    const std::uint64_t ad =
        desc::pack_wgmma_desc(a_base + st * kStageBytes + 32 * j, 16, 1024, desc::WgmmaSwizzle::b128);
    const std::uint64_t bd =
        desc::pack_wgmma_desc(b_base + st * kStageBytes + 32 * j, 16, 1024, desc::WgmmaSwizzle::b128);
    wgmma_fence();
    Op::mma_fresh(part, ad, bd);
    wgmma_commit();
    const float sa0 = s.sa[st][j][r0], sa1 = s.sa[st][j][r1];  // read while the MMA runs
    wgmma_wait<0>();
#pragma unroll
    for (int i = 0; i < 64; ++i) reg_fence(part[i]);
    const float4* sbv = reinterpret_cast<const float4*>(&s.sb[st][j][t * 32]);
#pragma unroll
    for (int q2 = 0; q2 < 8; ++q2) {
      const float4 v = sbv[q2];
      const float sbs[4] = {v.x, v.y, v.z, v.w};  // columns (q = 2 q2, e = 0, 1), (q = 2 q2 + 1, e = 0, 1)
#pragma unroll
      for (int u = 0; u < 4; ++u) {
        const int q = 2 * q2 + u / 2, e = u % 2;
        acc[4 * q + e] = __fmaf_rn(__fmul_rn(sa0, sbs[u]), part[4 * q + e], acc[4 * q + e]);
        acc[4 * q + 2 + e] = __fmaf_rn(__fmul_rn(sa1, sbs[u]), part[4 * q + 2 + e], acc[4 * q + 2 + e]);
      }
    }
    if (j == kBlocksPerStage - 1) {
      // The stage's last wgmma has completed and its scales are in registers: the slot can be
      // refilled once all 8 consumer warps say so.
      __syncwarp();
      if (lane == 0) mbarrier_arrive(&s.empty[st]);
    }
  }

  // Epilogue: f32 pairs (or bf16 pairs) straight from the fragment.
#pragma unroll
  for (int q = 0; q < 16; ++q)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int row = m0 + (h ? r1 : r0), col = n0 + 8 * q + 2 * t;
      if (row >= p.m) continue;
      const float v0 = acc[4 * q + 2 * h], v1 = acc[4 * q + 2 * h + 1];
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
  BLOCKSCALE_CUDA(cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, int(kSharedBytes)));
  const unsigned grid = unsigned(((args.m + kBM - 1) / kBM) * ((args.n + kBN - 1) / kBN));
  fn<<<grid, kThreads, kSharedBytes, stream>>>(ma, mb, p);
  BLOCKSCALE_CUDA_LAUNCHED(kernel.name.c_str());
}

}  // namespace

void launch_gemm_sm90(const GemmKernel& kernel, const GemmArgs& args, const GemmDeviceOperands& ops,
                      cudaStream_t stream) {
  using F = Format;
  const F e4 = F::float8_e4m3fn, e5 = F::float8_e5m2;
  switch (kernel.recipe) {
    case GemmRecipe::mxfp8:
      if (kernel.a == e4 && kernel.b == e4) return launch<Wgmma_m64n128k32_f32_e4m3_e4m3, Recipe::mxfp8>(kernel, args, ops, stream);
      if (kernel.a == e4 && kernel.b == e5) return launch<Wgmma_m64n128k32_f32_e4m3_e5m2, Recipe::mxfp8>(kernel, args, ops, stream);
      if (kernel.a == e5 && kernel.b == e4) return launch<Wgmma_m64n128k32_f32_e5m2_e4m3, Recipe::mxfp8>(kernel, args, ops, stream);
      if (kernel.a == e5 && kernel.b == e5) return launch<Wgmma_m64n128k32_f32_e5m2_e5m2, Recipe::mxfp8>(kernel, args, ops, stream);
      break;
    case GemmRecipe::mxfp4: return launch<Wgmma_m64n128k32_f32_e4m3_e4m3, Recipe::mxfp4>(kernel, args, ops, stream);
    case GemmRecipe::nvfp4: return launch<Wgmma_m64n128k32_f32_e4m3_e4m3, Recipe::nvfp4>(kernel, args, ops, stream);
  }
  throw std::logic_error("no sm_90a GEMM instantiated for '" + kernel.name + "'");
}

}  // namespace blockscale::gpu::detail
