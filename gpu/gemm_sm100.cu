// SPDX-License-Identifier: Apache-2.0
// sm_100a block-scaled GEMM with tcgen05 (1-CTA). COMPILE-VERIFIED ONLY: no Blackwell GPU was
// available, so this kernel has never run; its SASS is checked for UTCQMMA / UTCOMMA / UTCCP.
//
// Numerics: a plain chain of one instruction kind accumulating in TMEM (f32). D(TMEM) starts as C
// (stored with tcgen05.st; zeros without C) and every MMA runs with enable_input_d = 1:
//   MXFP8:  tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.block32, K = 32 per instruction
//           (ST-FDPA, numerics.md b.4), SF ID k % 4 picks the byte of the scale word;
//   NVFP4:  tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.block16, ue4m3 scales, K = 64
//           per instruction (GST-FDPA, b.5), SF ID 0.
//
// Structure: one CTA of 4 warps computes a 128 x 256 tile. Warp 0 (one elected lane) is the TMA
// producer: A and B boxes (128 bytes of K per row, 128-byte swizzle) and the scale bytes as
// whole 512-byte 128x4 atoms with cp.async.bulk (the tiled scale layout is exactly the
// tcgen05.cp.32x128b.warpx4 source, gpu.md §1.8). Warp 1 (one lane) copies each stage's atoms to
// TMEM with tcgen05.cp, issues the stage's 4 MMAs, and commits to the stage's "empty" barrier
// (which frees the shared-memory slot) and after the last stage to "tmem_full". All 4 warps then
// read D with tcgen05.ld.32x32b (warp w owns TMEM lanes 32w..32w+31 = tile rows) and store it.
#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <stdexcept>
#include <string>

#include "blockscale/gpu/descriptors.h"
#include "cuda_check.h"
#include "gemm_launch.h"
#include "ptx_sm100.cuh"
#include "tma.h"

namespace blockscale::gpu::detail {
namespace {

constexpr int kBM = 128, kBN = 256;
constexpr int kRowBytes = 128;  // K bytes per row per stage (one 128-byte swizzle row)
constexpr int kMmasPerStage = 4;
constexpr int kStages = 4;
constexpr int kAtom = 512;
// TMEM: D in columns [0, 256); stage s's scales at 256 + 48 s: SFA 4 columns per MMA (16), then
// SFB 8 columns per MMA (32). MXFP8 uses one SFA and one SFB group per stage.
constexpr std::uint32_t kTmemCols = 512;
constexpr std::uint32_t kScaleCols = 48;

enum class Recipe { mxfp8, nvfp4 };

template <Recipe R>
struct Shared {
  static constexpr int kSfaAtoms = R == Recipe::mxfp8 ? 1 : 4;  // per 128 rows per stage
  alignas(1024) std::uint8_t a[kStages][kBM * kRowBytes];
  alignas(1024) std::uint8_t b[kStages][kBN * kRowBytes];
  alignas(128) std::uint8_t sfa[kStages][kSfaAtoms * kAtom];
  alignas(128) std::uint8_t sfb[kStages][2][kSfaAtoms * kAtom];  // two 128-column halves of the tile
  std::uint64_t full[kStages];
  std::uint64_t empty[kStages];
  std::uint64_t tmem_full;
  std::uint32_t tmem_base;
};

struct Params {
  int m, n, k;
  int stages_k;       // K / (elements per stage)
  int atom_groups;    // 4-block groups along K in the tiled scale layout (= blocks / 4)
  const std::uint8_t* sfa;
  const std::uint8_t* sfb;
  const float* c;
  void* d;
  bool d_bf16;
  std::uint32_t idesc;  // SF IDs 0
};

template <Recipe R>
__global__ void __launch_bounds__(128, 1)
    gemm_sm100_kernel(const __grid_constant__ CUtensorMap tmap_a, const __grid_constant__ CUtensorMap tmap_b,
                      const Params p) {
  using S = Shared<R>;
  extern __shared__ std::uint8_t smem_raw[];
  const std::uint32_t pad = (1024u - (smem_addr(smem_raw) & 1023u)) & 1023u;
  S& s = *reinterpret_cast<S*>(smem_raw + pad);

  const int tiles_n = (p.n + kBN - 1) / kBN;
  const int m0 = (blockIdx.x / tiles_n) * kBM, n0 = (blockIdx.x % tiles_n) * kBN;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const bool second_half = n0 + 128 < p.n;  // does the tile's second 128-column half exist?

  if (warp == 1) {
    tmem_alloc(&s.tmem_base, kTmemCols);
    tmem_relinquish();
  }
  if (threadIdx.x == 0) {
    for (int i = 0; i < kStages; ++i) {
      mbarrier_init(&s.full[i], 1);
      mbarrier_init(&s.empty[i], 1);
    }
    mbarrier_init(&s.tmem_full, 1);
    fence_mbarrier_init();
  }
  tc_fence_before();
  __syncthreads();
  tc_fence_after();
  const std::uint32_t tmem = s.tmem_base;
  const std::uint32_t lane_base = std::uint32_t(32 * warp) << 16;
  const int row = 32 * warp + lane;

  // D = C (or zeros) in TMEM, so the chain is exactly "D <- MMA(A_k, B_k) + D" from C.
  for (int col = 0; col < kBN; col += 8) {
    std::uint32_t v[8];
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      const int gr = m0 + row, gc = n0 + col + j;
      v[j] = (p.c != nullptr && gr < p.m && gc < p.n) ? __float_as_uint(p.c[std::size_t(gr) * p.n + gc]) : 0u;
    }
    tmem_st_32x32b_x8(tmem + lane_base + col, v);
  }
  tmem_wait_st();
  tc_fence_before();
  __syncthreads();
  tc_fence_after();

  constexpr std::uint32_t kSfaBytes = S::kSfaAtoms * kAtom;
  if (warp == 0 && lane == 0) {
    // ---------------------------------------------------------------------------- producer
    const std::uint32_t bytes = (kBM + kBN) * kRowBytes + kSfaBytes * (second_half ? 3 : 2);
    const int rt_a = m0 / 128, rt_b = n0 / 128;
    for (int kt = 0; kt < p.stages_k; ++kt) {
      const int st = kt % kStages;
      mbarrier_wait(&s.empty[st], ((kt / kStages) & 1) ^ 1);
      mbarrier_arrive_expect_tx(&s.full[st], bytes);
      tma_load_2d(s.a[st], &tmap_a, &s.full[st], kt * kRowBytes, m0);
      tma_load_2d(s.b[st], &tmap_b, &s.full[st], kt * kRowBytes, n0);
      // Atoms of 4 consecutive K-blocks are contiguous for one 128-row tile (layouts.md L1:
      // atom index = row_tile * atom_groups + k_group); a stage needs kSfaAtoms of them.
      const std::size_t k_group = std::size_t(kt) * S::kSfaAtoms;
      bulk_load(s.sfa[st], p.sfa + (std::size_t(rt_a) * p.atom_groups + k_group) * kAtom, kSfaBytes, &s.full[st]);
      bulk_load(s.sfb[st][0], p.sfb + (std::size_t(rt_b) * p.atom_groups + k_group) * kAtom, kSfaBytes, &s.full[st]);
      if (second_half) {
        bulk_load(s.sfb[st][1], p.sfb + (std::size_t(rt_b + 1) * p.atom_groups + k_group) * kAtom, kSfaBytes,
                  &s.full[st]);
      }
    }
  } else if (warp == 1 && lane == 0) {
    // ------------------------------------------------------------------------- MMA issuer
    const std::uint32_t a_base = smem_addr(s.a[0]), b_base = smem_addr(s.b[0]);
    for (int kt = 0; kt < p.stages_k; ++kt) {
      const int st = kt % kStages;
      mbarrier_wait(&s.full[st], (kt / kStages) & 1);
      tc_fence_after();
      const std::uint32_t sc = tmem + kBN + kScaleCols * st;  // this stage's scale columns
      // Scale atoms -> TMEM, one 32x128b.warpx4 copy each: no swizzle, 8-row groups 128 B apart.
#pragma unroll
      for (int q = 0; q < S::kSfaAtoms; ++q) {
        tmem_cp_32x128b_warpx4(sc + 4 * q, desc::pack_sm100_smem_desc(smem_addr(s.sfa[st] + q * kAtom), 0, 128,
                                                                      desc::Sm100Swizzle::none));
        tmem_cp_32x128b_warpx4(sc + 16 + 8 * q, desc::pack_sm100_smem_desc(smem_addr(s.sfb[st][0] + q * kAtom), 0,
                                                                           128, desc::Sm100Swizzle::none));
        tmem_cp_32x128b_warpx4(sc + 16 + 8 * q + 4, desc::pack_sm100_smem_desc(smem_addr(s.sfb[st][1] + q * kAtom),
                                                                               0, 128, desc::Sm100Swizzle::none));
      }
#pragma unroll
      for (int j = 0; j < kMmasPerStage; ++j) {
        // K-major, 128-byte swizzle: SBO 1024 (8-row groups), LBO unused (16); the j-th MMA's 32
        // bytes of K start 32 j bytes into the swizzle atom (gpu.md §1.6).
        const std::uint64_t ad = desc::pack_sm100_smem_desc(a_base + st * kBM * kRowBytes + 32 * j, 16, 1024,
                                                            desc::Sm100Swizzle::b128);
        const std::uint64_t bd = desc::pack_sm100_smem_desc(b_base + st * kBN * kRowBytes + 32 * j, 16, 1024,
                                                            desc::Sm100Swizzle::b128);
        if constexpr (R == Recipe::mxfp8) {
          // One scale word covers this stage's 4 blocks; SF ID j selects block j's byte.
          const std::uint32_t idesc = p.idesc | (std::uint32_t(j) << 29) | (std::uint32_t(j) << 4);
          tc05_mma<Tc05Op::mxf8f6f4_block32>(tmem, ad, bd, idesc, 1, sc, sc + 16);
        } else {
          // 4X: the MMA's 4 scales fill a whole word; MMA j uses atom j's columns, SF ID 0.
          tc05_mma<Tc05Op::mxf4nvf4_block16>(tmem, ad, bd, p.idesc, 1, sc + 4 * j, sc + 16 + 8 * j);
        }
      }
      tc_commit(&s.empty[st]);
    }
    tc_commit(&s.tmem_full);
  }

  // ------------------------------------------------------------------------------ epilogue
  mbarrier_wait(&s.tmem_full, 0);
  tc_fence_after();
  const int gr = m0 + row;
  for (int col = 0; col < kBN; col += 8) {
    std::uint32_t v[8];
    tmem_ld_32x32b_x8(tmem + lane_base + col, v);
    tmem_wait_ld();
    if (gr >= p.m) continue;
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      const int gc = n0 + col + j;
      if (gc >= p.n) break;
      const std::size_t idx = std::size_t(gr) * p.n + gc;
      if (p.d_bf16) {
        static_cast<__nv_bfloat16*>(p.d)[idx] = __float2bfloat16_rn(__uint_as_float(v[j]));
      } else {
        static_cast<float*>(p.d)[idx] = __uint_as_float(v[j]);
      }
    }
  }
  tc_fence_before();
  __syncthreads();
  tc_fence_after();
  if (warp == 1) tmem_dealloc(tmem, kTmemCols);
}

template <Recipe R>
void launch(const GemmKernel& kernel, const GemmArgs& args, const GemmDeviceOperands& ops, cudaStream_t stream) {
  Params p{};
  p.m = args.m, p.n = args.n, p.k = args.k;
  const int blocks = args.k / kernel.block;
  p.atom_groups = blocks / 4;
  p.stages_k = args.k / kernel.k_multiple;
  p.sfa = static_cast<const std::uint8_t*>(ops.sfa);
  p.sfb = static_cast<const std::uint8_t*>(ops.sfb);
  p.c = ops.c;
  p.d = ops.d;
  p.d_bf16 = args.output == GemmOutput::bf16;
  desc::Tcgen05Instr in;
  in.kind = R == Recipe::mxfp8 ? desc::Tcgen05Kind::mxf8f6f4 : desc::Tcgen05Kind::mxf4nvf4;
  in.a = kernel.a, in.b = kernel.b, in.d = Format::float32;
  in.m = kBM, in.n = kBN;
  in.scale = kernel.scale;
  p.idesc = desc::encode_tcgen05_idesc(in);
  // Elements per row in bytes: fp8 one byte each, fp4 packed two per byte.
  const std::uint64_t row_bytes = R == Recipe::mxfp8 ? std::uint64_t(args.k) : std::uint64_t(args.k) / 2;
  const CUtensorMap ma = make_byte_matrix_map(ops.a, std::uint64_t(args.m), row_bytes, kBM, kRowBytes,
                                              CU_TENSOR_MAP_SWIZZLE_128B);
  const CUtensorMap mb = make_byte_matrix_map(ops.b, std::uint64_t(args.n), row_bytes, kBN, kRowBytes,
                                              CU_TENSOR_MAP_SWIZZLE_128B);
  auto* fn = gemm_sm100_kernel<R>;
  const std::size_t smem = sizeof(Shared<R>) + 1024;
  BLOCKSCALE_CUDA(cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
  const unsigned grid = unsigned(((args.m + kBM - 1) / kBM) * ((args.n + kBN - 1) / kBN));
  fn<<<grid, 128, smem, stream>>>(ma, mb, p);
  BLOCKSCALE_CUDA_LAUNCHED(kernel.name.c_str());
}

}  // namespace

void launch_gemm_sm100(const GemmKernel& kernel, const GemmArgs& args, const GemmDeviceOperands& ops,
                       cudaStream_t stream) {
  switch (kernel.recipe) {
    case GemmRecipe::mxfp8: return launch<Recipe::mxfp8>(kernel, args, ops, stream);
    case GemmRecipe::nvfp4: return launch<Recipe::nvfp4>(kernel, args, ops, stream);
    case GemmRecipe::mxfp4: break;
  }
  throw std::logic_error("no sm_100a GEMM instantiated for '" + kernel.name + "'");
}

}  // namespace blockscale::gpu::detail
