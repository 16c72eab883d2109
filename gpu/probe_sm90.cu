// SPDX-License-Identifier: Apache-2.0
// sm_90a probe kernels: mma.sync (one warp per tile) and wgmma.mma_async (one warpgroup per tile).
// Each CTA walks tiles with a grid-stride loop; inputs are the 32-byte row images of probe.cpp.
#include <cuda_runtime.h>

#include <cstdint>
#include <stdexcept>
#include <string>

#include "blockscale/gpu/descriptors.h"
#include "cuda_check.h"
#include "probe_launch.h"
#include "ptx.cuh"
#include "ptx_sm90.cuh"
#include "wgmma_ops.cuh"

namespace blockscale::gpu::detail {
namespace {

// ---- mma.sync --------------------------------------------------------------------------------
//
// Fragments (PTX ISA 9.7.14.5.x), with g = lane / 4 and t = lane % 4, in terms of the 32-byte
// rows: for m16n8k32 (8-bit), m16n8k16 (16-bit) and m16n8k8 (tf32) alike, A's four registers are
// the 32-bit words t and t + 4 of rows g and g + 8 (a0 = row g word t, a1 = row g+8 word t,
// a2 = row g word t+4, a3 = row g+8 word t+4), and B's two registers are words t and t + 4 of B^T
// row g. C/D: f32 c0, c1 = row g columns 2t, 2t+1 and c2, c3 = row g+8; f16 packs each pair.
// The half-K shapes (m16n8k16 with 8-bit operands, m16n8k8 with 16-bit ones, m16n8k4 with tf32)
// take the first two of those A registers and the first B register (words t of rows g and g + 8,
// and word t of B^T row g: 16 bytes per row).

enum class MmaSync {
  k32_f32_e4m3_e4m3, k32_f32_e4m3_e5m2, k32_f32_e5m2_e4m3, k32_f32_e5m2_e5m2,
  k32_f16_e4m3_e4m3, k32_f16_e4m3_e5m2, k32_f16_e5m2_e4m3, k32_f16_e5m2_e5m2,
  k16_f32_e4m3_e4m3, k16_f32_e4m3_e5m2, k16_f32_e5m2_e4m3, k16_f32_e5m2_e5m2,
  k16_f16_e4m3_e4m3, k16_f16_e4m3_e5m2, k16_f16_e5m2_e4m3, k16_f16_e5m2_e5m2,
  k16_f32_f16_f16, k16_f32_bf16_bf16, k16_f16_f16_f16, k8_f32_tf32_tf32,
  k8_f32_f16_f16, k8_f32_bf16_bf16, k8_f16_f16_f16, k4_f32_tf32_tf32,
};

constexpr bool mma_sync_f32(MmaSync op) {
  return !(op == MmaSync::k32_f16_e4m3_e4m3 || op == MmaSync::k32_f16_e4m3_e5m2 || op == MmaSync::k32_f16_e5m2_e4m3 ||
           op == MmaSync::k32_f16_e5m2_e5m2 || op == MmaSync::k16_f16_e4m3_e4m3 || op == MmaSync::k16_f16_e4m3_e5m2 ||
           op == MmaSync::k16_f16_e5m2_e4m3 || op == MmaSync::k16_f16_e5m2_e5m2 || op == MmaSync::k16_f16_f16_f16 ||
           op == MmaSync::k8_f16_f16_f16);
}

template <MmaSync Op>
__device__ __forceinline__ void mma_sync_f32(float (&d)[4], const std::uint32_t (&a)[4], const std::uint32_t (&b)[2]) {
#define BLOCKSCALE_MMA_F32(OPCODE)                                                                           \
  asm volatile(OPCODE " {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"                     \
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])                                              \
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]))
#define BLOCKSCALE_MMA_F32_HALF_K(OPCODE)                                                                  \
  asm volatile(OPCODE " {%0, %1, %2, %3}, {%4, %5}, {%6}, {%0, %1, %2, %3};"                                 \
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])                                              \
               : "r"(a[0]), "r"(a[1]), "r"(b[0]))
  if constexpr (Op == MmaSync::k16_f32_e4m3_e4m3) {
    BLOCKSCALE_MMA_F32_HALF_K("mma.sync.aligned.m16n8k16.row.col.f32.e4m3.e4m3.f32");
  } else if constexpr (Op == MmaSync::k16_f32_e4m3_e5m2) {
    BLOCKSCALE_MMA_F32_HALF_K("mma.sync.aligned.m16n8k16.row.col.f32.e4m3.e5m2.f32");
  } else if constexpr (Op == MmaSync::k16_f32_e5m2_e4m3) {
    BLOCKSCALE_MMA_F32_HALF_K("mma.sync.aligned.m16n8k16.row.col.f32.e5m2.e4m3.f32");
  } else if constexpr (Op == MmaSync::k16_f32_e5m2_e5m2) {
    BLOCKSCALE_MMA_F32_HALF_K("mma.sync.aligned.m16n8k16.row.col.f32.e5m2.e5m2.f32");
  } else if constexpr (Op == MmaSync::k8_f32_f16_f16) {
    BLOCKSCALE_MMA_F32_HALF_K("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32");
  } else if constexpr (Op == MmaSync::k8_f32_bf16_bf16) {
    BLOCKSCALE_MMA_F32_HALF_K("mma.sync.aligned.m16n8k8.row.col.f32.bf16.bf16.f32");
  } else if constexpr (Op == MmaSync::k4_f32_tf32_tf32) {
    BLOCKSCALE_MMA_F32_HALF_K("mma.sync.aligned.m16n8k4.row.col.f32.tf32.tf32.f32");
  } else if constexpr (Op == MmaSync::k32_f32_e4m3_e4m3) {
    BLOCKSCALE_MMA_F32("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32");
  } else if constexpr (Op == MmaSync::k32_f32_e4m3_e5m2) {
    BLOCKSCALE_MMA_F32("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e5m2.f32");
  } else if constexpr (Op == MmaSync::k32_f32_e5m2_e4m3) {
    BLOCKSCALE_MMA_F32("mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e4m3.f32");
  } else if constexpr (Op == MmaSync::k32_f32_e5m2_e5m2) {
    BLOCKSCALE_MMA_F32("mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e5m2.f32");
  } else if constexpr (Op == MmaSync::k16_f32_f16_f16) {
    BLOCKSCALE_MMA_F32("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32");
  } else if constexpr (Op == MmaSync::k16_f32_bf16_bf16) {
    BLOCKSCALE_MMA_F32("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32");
  } else {
    static_assert(Op == MmaSync::k8_f32_tf32_tf32);
    BLOCKSCALE_MMA_F32("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32");
  }
#undef BLOCKSCALE_MMA_F32_HALF_K
#undef BLOCKSCALE_MMA_F32
}

template <MmaSync Op>
__device__ __forceinline__ void mma_sync_f16(std::uint32_t (&d)[2], const std::uint32_t (&a)[4],
                                             const std::uint32_t (&b)[2]) {
#define BLOCKSCALE_MMA_F16(OPCODE)                                                                           \
  asm volatile(OPCODE " {%0, %1}, {%2, %3, %4, %5}, {%6, %7}, {%0, %1};"                                     \
               : "+r"(d[0]), "+r"(d[1])                                                                      \
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]))
#define BLOCKSCALE_MMA_F16_HALF_K(OPCODE)                                                                  \
  asm volatile(OPCODE " {%0, %1}, {%2, %3}, {%4}, {%0, %1};"                                                 \
               : "+r"(d[0]), "+r"(d[1])                                                                      \
               : "r"(a[0]), "r"(a[1]), "r"(b[0]))
  if constexpr (Op == MmaSync::k16_f16_e4m3_e4m3) {
    BLOCKSCALE_MMA_F16_HALF_K("mma.sync.aligned.m16n8k16.row.col.f16.e4m3.e4m3.f16");
  } else if constexpr (Op == MmaSync::k16_f16_e4m3_e5m2) {
    BLOCKSCALE_MMA_F16_HALF_K("mma.sync.aligned.m16n8k16.row.col.f16.e4m3.e5m2.f16");
  } else if constexpr (Op == MmaSync::k16_f16_e5m2_e4m3) {
    BLOCKSCALE_MMA_F16_HALF_K("mma.sync.aligned.m16n8k16.row.col.f16.e5m2.e4m3.f16");
  } else if constexpr (Op == MmaSync::k16_f16_e5m2_e5m2) {
    BLOCKSCALE_MMA_F16_HALF_K("mma.sync.aligned.m16n8k16.row.col.f16.e5m2.e5m2.f16");
  } else if constexpr (Op == MmaSync::k8_f16_f16_f16) {
    BLOCKSCALE_MMA_F16_HALF_K("mma.sync.aligned.m16n8k8.row.col.f16.f16.f16.f16");
  } else if constexpr (Op == MmaSync::k32_f16_e4m3_e4m3) {
    BLOCKSCALE_MMA_F16("mma.sync.aligned.m16n8k32.row.col.f16.e4m3.e4m3.f16");
  } else if constexpr (Op == MmaSync::k32_f16_e4m3_e5m2) {
    BLOCKSCALE_MMA_F16("mma.sync.aligned.m16n8k32.row.col.f16.e4m3.e5m2.f16");
  } else if constexpr (Op == MmaSync::k32_f16_e5m2_e4m3) {
    BLOCKSCALE_MMA_F16("mma.sync.aligned.m16n8k32.row.col.f16.e5m2.e4m3.f16");
  } else if constexpr (Op == MmaSync::k32_f16_e5m2_e5m2) {
    BLOCKSCALE_MMA_F16("mma.sync.aligned.m16n8k32.row.col.f16.e5m2.e5m2.f16");
  } else {
    static_assert(Op == MmaSync::k16_f16_f16_f16);
    BLOCKSCALE_MMA_F16("mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16");
  }
#undef BLOCKSCALE_MMA_F16_HALF_K
#undef BLOCKSCALE_MMA_F16
}

constexpr int kMmaSyncWarpsPerBlock = 8;

// C and D of the m16n8 shapes (mma.sync and mma.sp alike), tile `tile` of the row-major 16 x 8
// arrays: f32 c0, c1 = row g columns 2t, 2t+1 and c2, c3 = row g+8; f16 pairs (columns 2t, 2t+1)
// are adjacent, one 32-bit word each.
__device__ __forceinline__ void load_m16n8(float (&acc)[4], const void* c, std::size_t tile, int g, int t) {
  const auto* cf = static_cast<const float*>(c) + tile * 128;
  acc[0] = cf[g * 8 + 2 * t], acc[1] = cf[g * 8 + 2 * t + 1];
  acc[2] = cf[(g + 8) * 8 + 2 * t], acc[3] = cf[(g + 8) * 8 + 2 * t + 1];
}
__device__ __forceinline__ void store_m16n8(const float (&acc)[4], void* d, std::size_t tile, int g, int t) {
  auto* df = static_cast<float*>(d) + tile * 128;
  df[g * 8 + 2 * t] = acc[0], df[g * 8 + 2 * t + 1] = acc[1];
  df[(g + 8) * 8 + 2 * t] = acc[2], df[(g + 8) * 8 + 2 * t + 1] = acc[3];
}
__device__ __forceinline__ void load_m16n8(std::uint32_t (&acc)[2], const void* c, std::size_t tile, int g, int t) {
  const auto* cw = static_cast<const std::uint32_t*>(c) + tile * 64;
  acc[0] = cw[g * 4 + t], acc[1] = cw[(g + 8) * 4 + t];
}
__device__ __forceinline__ void store_m16n8(const std::uint32_t (&acc)[2], void* d, std::size_t tile, int g, int t) {
  auto* dw = static_cast<std::uint32_t*>(d) + tile * 64;
  dw[g * 4 + t] = acc[0], dw[(g + 8) * 4 + t] = acc[1];
}

template <MmaSync Op>
__global__ void __launch_bounds__(32 * kMmaSyncWarpsPerBlock)
    mma_sync_probe_kernel(const std::uint8_t* __restrict__ a_rows, const std::uint8_t* __restrict__ b_rows,
                          const void* __restrict__ c, void* __restrict__ d, std::size_t tiles) {
  const int lane = threadIdx.x % 32;
  const int g = lane / 4, t = lane % 4;
  const std::size_t warps = std::size_t(gridDim.x) * kMmaSyncWarpsPerBlock;
  for (std::size_t tile = std::size_t(blockIdx.x) * kMmaSyncWarpsPerBlock + threadIdx.x / 32; tile < tiles;
       tile += warps) {
    const auto* aw = reinterpret_cast<const std::uint32_t*>(a_rows + tile * 16 * kProbeRowBytes);
    const auto* bw = reinterpret_cast<const std::uint32_t*>(b_rows + tile * 8 * kProbeRowBytes);
    const std::uint32_t a[4] = {aw[g * 8 + t], aw[(g + 8) * 8 + t], aw[g * 8 + t + 4], aw[(g + 8) * 8 + t + 4]};
    const std::uint32_t b[2] = {bw[g * 8 + t], bw[g * 8 + t + 4]};
    if constexpr (mma_sync_f32(Op)) {
      float acc[4];
      load_m16n8(acc, c, tile, g, t);
      mma_sync_f32<Op>(acc, a, b);
      store_m16n8(acc, d, tile, g, t);
    } else {
      std::uint32_t acc[2];
      load_m16n8(acc, c, tile, g, t);
      mma_sync_f16<Op>(acc, a, b);
      store_m16n8(acc, d, tile, g, t);
    }
  }
}

// ---- mma.sync .f64 (DMMA) ---------------------------------------------------------------------
//
// Fragments (PTX ISA 9.7.14.5, the .f64 shapes), with g = lane / 4 and t = lane % 4: A register i
// holds A(g + 8 (i % 2), t + 4 (i / 2)) (m16n8k*: 2, 4 or 8 registers; m8n8k4: one, A(g, t));
// B register i holds B(t + 4 i, g); C/D: c0, c1 = row g, columns 2t, 2t + 1, and for m16 c2, c3 =
// row g + 8. Operands are read straight from the row-major global arrays (B as B^T rows).

template <int M, int K>
__device__ __forceinline__ void mma_sync_f64(double (&d)[M / 4], const double (&a)[M * K / 32], const double (&b)[K / 4]) {
  if constexpr (M == 8) {
    static_assert(K == 4);
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};"
                 : "+d"(d[0]), "+d"(d[1])
                 : "d"(a[0]), "d"(b[0]));
  } else if constexpr (K == 4) {
    asm volatile("mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64 {%0, %1, %2, %3}, {%4, %5}, {%6}, {%0, %1, %2, %3};"
                 : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
                 : "d"(a[0]), "d"(a[1]), "d"(b[0]));
  } else if constexpr (K == 8) {
    asm volatile(
        "mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};"
        : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
        : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(b[0]), "d"(b[1]));
  } else {
    static_assert(K == 16);
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 {%0, %1, %2, %3}, {%4, %5, %6, %7, %8, %9, %10, %11}, "
        "{%12, %13, %14, %15}, {%0, %1, %2, %3};"
        : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
        : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(a[4]), "d"(a[5]), "d"(a[6]), "d"(a[7]), "d"(b[0]),
          "d"(b[1]), "d"(b[2]), "d"(b[3]));
  }
}

template <int M, int K>
__global__ void __launch_bounds__(32 * kMmaSyncWarpsPerBlock)
    mma_sync_f64_probe_kernel(const double* __restrict__ a_in, const double* __restrict__ b_in,
                              const double* __restrict__ c_in, double* __restrict__ d_out, std::size_t tiles) {
  const int lane = threadIdx.x % 32;
  const int g = lane / 4, t = lane % 4;
  const std::size_t warps = std::size_t(gridDim.x) * kMmaSyncWarpsPerBlock;
  for (std::size_t tile = std::size_t(blockIdx.x) * kMmaSyncWarpsPerBlock + threadIdx.x / 32; tile < tiles;
       tile += warps) {
    const double* at = a_in + tile * M * K;
    const double* bt = b_in + tile * 8 * K;
    double a[M * K / 32], b[K / 4], acc[M / 4];
#pragma unroll
    for (int i = 0; i < M * K / 32; ++i) a[i] = at[(g + 8 * (i % 2)) * K + t + 4 * (i / 2)];
#pragma unroll
    for (int i = 0; i < K / 4; ++i) b[i] = bt[g * K + t + 4 * i];
    const double* ct = c_in + tile * M * 8;
#pragma unroll
    for (int i = 0; i < M / 4; ++i) acc[i] = ct[(g + 8 * (i / 2)) * 8 + 2 * t + i % 2];
    mma_sync_f64<M, K>(acc, a, b);
    double* dt = d_out + tile * M * 8;
#pragma unroll
    for (int i = 0; i < M / 4; ++i) dt[(g + 8 * (i / 2)) * 8 + 2 * t + i % 2] = acc[i];
  }
}

// ---- wgmma and wgmma.sp ------------------------------------------------------------------------
//
// Accumulator fragment (PTX ISA 9.7.15.5.1, m64nNk*): warp w of the warpgroup owns rows
// 16w..16w+15; f32 register i holds row 16w + lane/4 + 8*((i%4)/2), column 8*(i/4) + 2*(lane%4) +
// (i%2). The f16 accumulator packs the same element pairs (i, i+1) into one register.
// Sparse forms (Op::kSparse, 9.7.15.5.2): A's rows hold the K/2 stored values (the dense images),
// B's rows the logical K (kSparseBRowBytes, sparse_b_smem_offset), and each thread passes its
// metadata register (warp w: rows 16w..16w+15, the mma.sp layout per warp).

template <class Op>
__global__ void __launch_bounds__(128) wgmma_probe_kernel(const std::uint8_t* __restrict__ a_rows,
                                                          const std::uint8_t* __restrict__ b_rows,
                                                          const std::uint32_t* __restrict__ metadata,
                                                          const void* __restrict__ c, void* __restrict__ d,
                                                          std::size_t tiles, std::uint32_t scale_d) {
  constexpr int N = Op::kN;
  constexpr int kBRowBytes = Op::kSparse ? kSparseBRowBytes : kProbeRowBytes;
  constexpr int kBChunks = kBRowBytes / 16;  // 16-byte core-matrix rows along K
  __shared__ alignas(128) std::uint8_t sa[64 * kProbeRowBytes];
  __shared__ alignas(128) std::uint8_t sb[N * kBRowBytes];
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int row0 = 16 * warp + lane / 4;
  const std::uint64_t a_desc = desc::pack_wgmma_desc(smem_addr(sa), kProbeLbo, kProbeSbo, desc::WgmmaSwizzle::none);
  const std::uint64_t b_desc = desc::pack_wgmma_desc(smem_addr(sb), kProbeLbo, Op::kSparse ? kSparseBSbo : kProbeSbo,
                                                     desc::WgmmaSwizzle::none);

  for (std::size_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    // 16-byte chunks: chunk q is row q / chunks, K-chunk q % chunks.
    const auto* ga = reinterpret_cast<const uint4*>(a_rows + tile * 64 * kProbeRowBytes);
    const auto* gb = reinterpret_cast<const uint4*>(b_rows + tile * N * kBRowBytes);
    for (int q = tid; q < 64 * 2; q += 128) *reinterpret_cast<uint4*>(sa + probe_smem_offset(q / 2, q % 2)) = ga[q];
    for (int q = tid; q < N * kBChunks; q += 128) {
      const int row = q / kBChunks, chunk = q % kBChunks;
      *reinterpret_cast<uint4*>(sb + (Op::kSparse ? sparse_b_smem_offset(row, chunk) : probe_smem_offset(row, chunk))) =
          gb[q];
    }

    typename Op::Reg acc[Op::kRegs];
    if constexpr (Op::kF32) {
      const auto* cf = static_cast<const float*>(c) + tile * 64 * N;
#pragma unroll
      for (int i = 0; i < Op::kRegs; ++i) {
        acc[i] = cf[(row0 + 8 * ((i % 4) / 2)) * N + 8 * (i / 4) + 2 * (lane % 4) + (i % 2)];
      }
    } else {
      const auto* cw = static_cast<const std::uint32_t*>(c) + tile * 64 * N / 2;
#pragma unroll
      for (int j = 0; j < Op::kRegs; ++j) acc[j] = cw[((row0 + 8 * (j % 2)) * N + 8 * (j / 2) + 2 * (lane % 4)) / 2];
    }
    fence_proxy_async_shared();  // thread-written operands, read by the async proxy
    __syncthreads();
#pragma unroll
    for (int i = 0; i < Op::kRegs; ++i) reg_fence(acc[i]);
    wgmma_fence();
    // scale-d = 0: the loaded C is not read
    if constexpr (Op::kSparse) {
      Op::mma(acc, a_desc, b_desc, metadata[tile * 128 + tid], scale_d);
    } else {
      Op::mma(acc, a_desc, b_desc, scale_d);
    }
    wgmma_commit();
    wgmma_wait<0>();
#pragma unroll
    for (int i = 0; i < Op::kRegs; ++i) reg_fence(acc[i]);

    if constexpr (Op::kF32) {
      auto* df = static_cast<float*>(d) + tile * 64 * N;
#pragma unroll
      for (int i = 0; i < Op::kRegs; ++i) {
        df[(row0 + 8 * ((i % 4) / 2)) * N + 8 * (i / 4) + 2 * (lane % 4) + (i % 2)] = acc[i];
      }
    } else {
      auto* dw = static_cast<std::uint32_t*>(d) + tile * 64 * N / 2;
#pragma unroll
      for (int j = 0; j < Op::kRegs; ++j) dw[((row0 + 8 * (j % 2)) * N + 8 * (j / 2) + 2 * (lane % 4)) / 2] = acc[j];
    }
    __syncthreads();  // the next tile overwrites sa / sb
  }
}

// ---- mma.sp::ordered_metadata ----------------------------------------------------------------
//
// PTX ISA 9.7.14.6 with g = lane / 4, t = lane % 4: the compressed A fragment is the dense
// fragment of K/2 over the 32-byte rows of stored values (four registers, or two for the half-K
// shapes m16n8k16 16-bit and m16n8k8 tf32: words t (and t + 4) of rows g and g + 8); B register j
// is word t + 4j of B^T row g in the 64-byte rows (four registers, two for the half-K shapes); C/D
// as mma.sync. `e` is this thread's metadata register, the sparsity selector 0.

enum class MmaSp {
  k32_f32_f16, k32_f32_bf16, k32_f16_f16, k16_f32_f16, k16_f32_bf16, k16_f16_f16, k16_f32_tf32, k8_f32_tf32,
  k64_f32_e4m3_e4m3, k64_f32_e4m3_e5m2, k64_f32_e5m2_e4m3, k64_f32_e5m2_e5m2,
};

constexpr bool mma_sp_f32(MmaSp op) { return op != MmaSp::k32_f16_f16 && op != MmaSp::k16_f16_f16; }
constexpr int mma_sp_regs(MmaSp op) {  // A and B registers each
  return op == MmaSp::k16_f32_f16 || op == MmaSp::k16_f32_bf16 || op == MmaSp::k16_f16_f16 ||
                 op == MmaSp::k8_f32_tf32
             ? 2
             : 4;
}

template <MmaSp Op>
__device__ __forceinline__ void mma_sp_f32(float (&d)[4], const std::uint32_t (&a)[4], const std::uint32_t (&b)[4],
                                           std::uint32_t e) {
#define BLOCKSCALE_MMA_SP_F32(OPCODE)                                                                        \
  asm volatile(OPCODE " {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9, %10, %11}, {%0, %1, %2, %3}, %12, 0x0;" \
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])                                              \
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(b[2]), "r"(b[3]), "r"(e))
#define BLOCKSCALE_MMA_SP_F32_HALF_K(OPCODE)                                                                 \
  asm volatile(OPCODE " {%0, %1, %2, %3}, {%4, %5}, {%6, %7}, {%0, %1, %2, %3}, %8, 0x0;"                    \
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])                                              \
               : "r"(a[0]), "r"(a[1]), "r"(b[0]), "r"(b[1]), "r"(e))
  if constexpr (Op == MmaSp::k32_f32_f16) {
    BLOCKSCALE_MMA_SP_F32("mma.sp::ordered_metadata.sync.aligned.m16n8k32.row.col.f32.f16.f16.f32");
  } else if constexpr (Op == MmaSp::k32_f32_bf16) {
    BLOCKSCALE_MMA_SP_F32("mma.sp::ordered_metadata.sync.aligned.m16n8k32.row.col.f32.bf16.bf16.f32");
  } else if constexpr (Op == MmaSp::k16_f32_tf32) {
    BLOCKSCALE_MMA_SP_F32("mma.sp::ordered_metadata.sync.aligned.m16n8k16.row.col.f32.tf32.tf32.f32");
  } else if constexpr (Op == MmaSp::k64_f32_e4m3_e4m3) {
    BLOCKSCALE_MMA_SP_F32("mma.sp::ordered_metadata.sync.aligned.m16n8k64.row.col.f32.e4m3.e4m3.f32");
  } else if constexpr (Op == MmaSp::k64_f32_e4m3_e5m2) {
    BLOCKSCALE_MMA_SP_F32("mma.sp::ordered_metadata.sync.aligned.m16n8k64.row.col.f32.e4m3.e5m2.f32");
  } else if constexpr (Op == MmaSp::k64_f32_e5m2_e4m3) {
    BLOCKSCALE_MMA_SP_F32("mma.sp::ordered_metadata.sync.aligned.m16n8k64.row.col.f32.e5m2.e4m3.f32");
  } else if constexpr (Op == MmaSp::k64_f32_e5m2_e5m2) {
    BLOCKSCALE_MMA_SP_F32("mma.sp::ordered_metadata.sync.aligned.m16n8k64.row.col.f32.e5m2.e5m2.f32");
  } else if constexpr (Op == MmaSp::k16_f32_f16) {
    BLOCKSCALE_MMA_SP_F32_HALF_K("mma.sp::ordered_metadata.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32");
  } else if constexpr (Op == MmaSp::k16_f32_bf16) {
    BLOCKSCALE_MMA_SP_F32_HALF_K("mma.sp::ordered_metadata.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32");
  } else {
    static_assert(Op == MmaSp::k8_f32_tf32);
    BLOCKSCALE_MMA_SP_F32_HALF_K("mma.sp::ordered_metadata.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32");
  }
#undef BLOCKSCALE_MMA_SP_F32_HALF_K
#undef BLOCKSCALE_MMA_SP_F32
}

template <MmaSp Op>
__device__ __forceinline__ void mma_sp_f16(std::uint32_t (&d)[2], const std::uint32_t (&a)[4],
                                           const std::uint32_t (&b)[4], std::uint32_t e) {
  if constexpr (Op == MmaSp::k32_f16_f16) {
    asm volatile(
        "mma.sp::ordered_metadata.sync.aligned.m16n8k32.row.col.f16.f16.f16.f16 {%0, %1}, {%2, %3, %4, %5}, "
        "{%6, %7, %8, %9}, {%0, %1}, %10, 0x0;"
        : "+r"(d[0]), "+r"(d[1])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(b[2]), "r"(b[3]), "r"(e));
  } else {
    static_assert(Op == MmaSp::k16_f16_f16);
    asm volatile(
        "mma.sp::ordered_metadata.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {%0, %1}, {%2, %3}, {%4, %5}, "
        "{%0, %1}, %6, 0x0;"
        : "+r"(d[0]), "+r"(d[1])
        : "r"(a[0]), "r"(a[1]), "r"(b[0]), "r"(b[1]), "r"(e));
  }
}

template <MmaSp Op>
__global__ void __launch_bounds__(32 * kMmaSyncWarpsPerBlock)
    mma_sp_probe_kernel(const std::uint8_t* __restrict__ a_rows, const std::uint8_t* __restrict__ b_rows,
                        const std::uint32_t* __restrict__ metadata, const void* __restrict__ c, void* __restrict__ d,
                        std::size_t tiles) {
  constexpr int kBWords = kSparseBRowBytes / 4;
  const int lane = threadIdx.x % 32;
  const int g = lane / 4, t = lane % 4;
  const std::size_t warps = std::size_t(gridDim.x) * kMmaSyncWarpsPerBlock;
  for (std::size_t tile = std::size_t(blockIdx.x) * kMmaSyncWarpsPerBlock + threadIdx.x / 32; tile < tiles;
       tile += warps) {
    const auto* aw = reinterpret_cast<const std::uint32_t*>(a_rows + tile * 16 * kProbeRowBytes);
    const auto* bw = reinterpret_cast<const std::uint32_t*>(b_rows + tile * 8 * kSparseBRowBytes);
    std::uint32_t a[4], b[4];
    if constexpr (mma_sp_regs(Op) == 4) {
      a[0] = aw[g * 8 + t], a[1] = aw[(g + 8) * 8 + t], a[2] = aw[g * 8 + t + 4], a[3] = aw[(g + 8) * 8 + t + 4];
    } else {
      a[0] = aw[g * 8 + t], a[1] = aw[(g + 8) * 8 + t], a[2] = 0, a[3] = 0;
    }
#pragma unroll
    for (int j = 0; j < 4; ++j) b[j] = j < mma_sp_regs(Op) ? bw[g * kBWords + t + 4 * j] : 0u;
    const std::uint32_t e = metadata[tile * 32 + lane];
    if constexpr (mma_sp_f32(Op)) {
      float acc[4];
      load_m16n8(acc, c, tile, g, t);
      mma_sp_f32<Op>(acc, a, b, e);
      store_m16n8(acc, d, tile, g, t);
    } else {
      std::uint32_t acc[2];
      load_m16n8(acc, c, tile, g, t);
      mma_sp_f16<Op>(acc, a, b, e);
      store_m16n8(acc, d, tile, g, t);
    }
  }
}

// ---- dispatch --------------------------------------------------------------------------------

// mma.sync probes (one warp per tile): enough blocks for every tile, at most 16 per SM (the
// kernels' grid-stride loops take the rest).
unsigned mma_sync_grid(const ProbeDeviceArgs& a) {
  const std::size_t blocks_needed = (a.tiles + kMmaSyncWarpsPerBlock - 1) / kMmaSyncWarpsPerBlock;
  return static_cast<unsigned>(std::min<std::size_t>(blocks_needed, std::size_t(a.multiprocessors) * 16));
}

template <MmaSync Op>
void launch_mma_sync(const ProbeDeviceArgs& a, const char* name) {
  mma_sync_probe_kernel<Op><<<mma_sync_grid(a), 32 * kMmaSyncWarpsPerBlock>>>(a.a_rows, a.b_rows, a.c, a.d, a.tiles);
  BLOCKSCALE_CUDA_LAUNCHED(name);
}

template <int M, int K>
void launch_mma_sync_f64(const ProbeDeviceArgs& a, const char* name) {
  mma_sync_f64_probe_kernel<M, K><<<mma_sync_grid(a), 32 * kMmaSyncWarpsPerBlock>>>(
      a.a_f64, a.b_f64, static_cast<const double*>(a.c), static_cast<double*>(a.d), a.tiles);
  BLOCKSCALE_CUDA_LAUNCHED(name);
}

bool dispatch_mma_sync_f64(const ProbeKernel& p, const ProbeDeviceArgs& a) {
  const char* nm = p.name.c_str();
  if (p.m == 8 && p.k == 4) return launch_mma_sync_f64<8, 4>(a, nm), true;
  if (p.m == 16 && p.k == 4) return launch_mma_sync_f64<16, 4>(a, nm), true;
  if (p.m == 16 && p.k == 8) return launch_mma_sync_f64<16, 8>(a, nm), true;
  if (p.m == 16 && p.k == 16) return launch_mma_sync_f64<16, 16>(a, nm), true;
  return false;
}

template <class Op>
void launch_wgmma(const ProbeDeviceArgs& a, const char* name) {
  const unsigned grid = static_cast<unsigned>(std::min<std::size_t>(a.tiles, std::size_t(a.multiprocessors) * 8));
  wgmma_probe_kernel<Op><<<grid, 128>>>(a.a_rows, a.b_rows, a.metadata, a.c, a.d, a.tiles, a.scale_d);
  BLOCKSCALE_CUDA_LAUNCHED(name);
}

template <int N>
bool dispatch_wgmma_n(const ProbeKernel& p, const ProbeDeviceArgs& a) {
  using F = Format;
  const char* nm = p.name.c_str();
  const bool f32 = p.d == F::float32;
  const F e4 = F::float8_e4m3fn, e5 = F::float8_e5m2;
#define BLOCKSCALE_CASE(A, B, D, OP)                 \
  if (p.a == (A) && p.b == (B) && p.d == (D)) {     \
    launch_wgmma<OP>(a, nm);                         \
    return true;                                     \
  }
  if constexpr (N == 8) {
    BLOCKSCALE_CASE(e4, e4, F::float32, Wgmma_m64n8k32_f32_e4m3_e4m3)
    BLOCKSCALE_CASE(e4, e5, F::float32, Wgmma_m64n8k32_f32_e4m3_e5m2)
    BLOCKSCALE_CASE(e5, e4, F::float32, Wgmma_m64n8k32_f32_e5m2_e4m3)
    BLOCKSCALE_CASE(e5, e5, F::float32, Wgmma_m64n8k32_f32_e5m2_e5m2)
    BLOCKSCALE_CASE(e4, e4, F::float16, Wgmma_m64n8k32_f16_e4m3_e4m3)
    BLOCKSCALE_CASE(e4, e5, F::float16, Wgmma_m64n8k32_f16_e4m3_e5m2)
    BLOCKSCALE_CASE(e5, e4, F::float16, Wgmma_m64n8k32_f16_e5m2_e4m3)
    BLOCKSCALE_CASE(e5, e5, F::float16, Wgmma_m64n8k32_f16_e5m2_e5m2)
    BLOCKSCALE_CASE(F::float16, F::float16, F::float32, Wgmma_m64n8k16_f32_f16_f16)
    BLOCKSCALE_CASE(F::bfloat16, F::bfloat16, F::float32, Wgmma_m64n8k16_f32_bf16_bf16)
    BLOCKSCALE_CASE(F::float16, F::float16, F::float16, Wgmma_m64n8k16_f16_f16_f16)
    BLOCKSCALE_CASE(F::tfloat32, F::tfloat32, F::float32, Wgmma_m64n8k8_f32_tf32_tf32)
  } else if constexpr (N == 64) {
    BLOCKSCALE_CASE(e4, e4, F::float32, Wgmma_m64n64k32_f32_e4m3_e4m3)
    BLOCKSCALE_CASE(e4, e5, F::float32, Wgmma_m64n64k32_f32_e4m3_e5m2)
    BLOCKSCALE_CASE(e5, e4, F::float32, Wgmma_m64n64k32_f32_e5m2_e4m3)
    BLOCKSCALE_CASE(e5, e5, F::float32, Wgmma_m64n64k32_f32_e5m2_e5m2)
    BLOCKSCALE_CASE(e4, e4, F::float16, Wgmma_m64n64k32_f16_e4m3_e4m3)
    BLOCKSCALE_CASE(e4, e5, F::float16, Wgmma_m64n64k32_f16_e4m3_e5m2)
    BLOCKSCALE_CASE(e5, e4, F::float16, Wgmma_m64n64k32_f16_e5m2_e4m3)
    BLOCKSCALE_CASE(e5, e5, F::float16, Wgmma_m64n64k32_f16_e5m2_e5m2)
    BLOCKSCALE_CASE(F::float16, F::float16, F::float32, Wgmma_m64n64k16_f32_f16_f16)
    BLOCKSCALE_CASE(F::bfloat16, F::bfloat16, F::float32, Wgmma_m64n64k16_f32_bf16_bf16)
    BLOCKSCALE_CASE(F::float16, F::float16, F::float16, Wgmma_m64n64k16_f16_f16_f16)
    BLOCKSCALE_CASE(F::tfloat32, F::tfloat32, F::float32, Wgmma_m64n64k8_f32_tf32_tf32)
  } else {
    static_assert(N == 256);
    BLOCKSCALE_CASE(e4, e4, F::float32, Wgmma_m64n256k32_f32_e4m3_e4m3)
    BLOCKSCALE_CASE(e4, e5, F::float32, Wgmma_m64n256k32_f32_e4m3_e5m2)
    BLOCKSCALE_CASE(e5, e4, F::float32, Wgmma_m64n256k32_f32_e5m2_e4m3)
    BLOCKSCALE_CASE(e5, e5, F::float32, Wgmma_m64n256k32_f32_e5m2_e5m2)
    BLOCKSCALE_CASE(e4, e4, F::float16, Wgmma_m64n256k32_f16_e4m3_e4m3)
    BLOCKSCALE_CASE(e4, e5, F::float16, Wgmma_m64n256k32_f16_e4m3_e5m2)
    BLOCKSCALE_CASE(e5, e4, F::float16, Wgmma_m64n256k32_f16_e5m2_e4m3)
    BLOCKSCALE_CASE(e5, e5, F::float16, Wgmma_m64n256k32_f16_e5m2_e5m2)
    BLOCKSCALE_CASE(F::float16, F::float16, F::float32, Wgmma_m64n256k16_f32_f16_f16)
    BLOCKSCALE_CASE(F::bfloat16, F::bfloat16, F::float32, Wgmma_m64n256k16_f32_bf16_bf16)
    BLOCKSCALE_CASE(F::float16, F::float16, F::float16, Wgmma_m64n256k16_f16_f16_f16)
    BLOCKSCALE_CASE(F::tfloat32, F::tfloat32, F::float32, Wgmma_m64n256k8_f32_tf32_tf32)
  }
#undef BLOCKSCALE_CASE
  (void)f32;
  return false;
}

template <MmaSp Op>
void launch_mma_sp(const ProbeDeviceArgs& a, const char* name) {
  mma_sp_probe_kernel<Op><<<mma_sync_grid(a), 32 * kMmaSyncWarpsPerBlock>>>(a.a_rows, a.b_rows, a.metadata,
                                                                                          a.c, a.d, a.tiles);
  BLOCKSCALE_CUDA_LAUNCHED(name);
}

bool dispatch_mma_sp(const ProbeKernel& p, const ProbeDeviceArgs& a) {
  using F = Format;
  const char* nm = p.name.c_str();
  const F e4 = F::float8_e4m3fn, e5 = F::float8_e5m2;
#define BLOCKSCALE_CASE(K, A, B, D, OP)                          \
  if (p.k == (K) && p.a == (A) && p.b == (B) && p.d == (D)) {   \
    launch_mma_sp<MmaSp::OP>(a, nm);                             \
    return true;                                                 \
  }
  BLOCKSCALE_CASE(32, F::float16, F::float16, F::float32, k32_f32_f16)
  BLOCKSCALE_CASE(32, F::bfloat16, F::bfloat16, F::float32, k32_f32_bf16)
  BLOCKSCALE_CASE(32, F::float16, F::float16, F::float16, k32_f16_f16)
  BLOCKSCALE_CASE(16, F::float16, F::float16, F::float32, k16_f32_f16)
  BLOCKSCALE_CASE(16, F::bfloat16, F::bfloat16, F::float32, k16_f32_bf16)
  BLOCKSCALE_CASE(16, F::float16, F::float16, F::float16, k16_f16_f16)
  BLOCKSCALE_CASE(16, F::tfloat32, F::tfloat32, F::float32, k16_f32_tf32)
  BLOCKSCALE_CASE(8, F::tfloat32, F::tfloat32, F::float32, k8_f32_tf32)
  BLOCKSCALE_CASE(64, e4, e4, F::float32, k64_f32_e4m3_e4m3)
  BLOCKSCALE_CASE(64, e4, e5, F::float32, k64_f32_e4m3_e5m2)
  BLOCKSCALE_CASE(64, e5, e4, F::float32, k64_f32_e5m2_e4m3)
  BLOCKSCALE_CASE(64, e5, e5, F::float32, k64_f32_e5m2_e5m2)
#undef BLOCKSCALE_CASE
  return false;
}

template <int N>
bool dispatch_wgmma_sp_n(const ProbeKernel& p, const ProbeDeviceArgs& a) {
  using F = Format;
  const char* nm = p.name.c_str();
  const F e4 = F::float8_e4m3fn, e5 = F::float8_e5m2;
#define BLOCKSCALE_CASE(A, B, D, OP)                 \
  if (p.a == (A) && p.b == (B) && p.d == (D)) {     \
    launch_wgmma<OP>(a, nm);                         \
    return true;                                     \
  }
  if constexpr (N == 8) {
    BLOCKSCALE_CASE(e4, e4, F::float32, WgmmaSp_m64n8k64_f32_e4m3_e4m3)
    BLOCKSCALE_CASE(e4, e4, F::float16, WgmmaSp_m64n8k64_f16_e4m3_e4m3)
    BLOCKSCALE_CASE(e4, e5, F::float32, WgmmaSp_m64n8k64_f32_e4m3_e5m2)
    BLOCKSCALE_CASE(e4, e5, F::float16, WgmmaSp_m64n8k64_f16_e4m3_e5m2)
    BLOCKSCALE_CASE(e5, e4, F::float32, WgmmaSp_m64n8k64_f32_e5m2_e4m3)
    BLOCKSCALE_CASE(e5, e4, F::float16, WgmmaSp_m64n8k64_f16_e5m2_e4m3)
    BLOCKSCALE_CASE(e5, e5, F::float32, WgmmaSp_m64n8k64_f32_e5m2_e5m2)
    BLOCKSCALE_CASE(e5, e5, F::float16, WgmmaSp_m64n8k64_f16_e5m2_e5m2)
    BLOCKSCALE_CASE(F::float16, F::float16, F::float32, WgmmaSp_m64n8k32_f32_f16_f16)
    BLOCKSCALE_CASE(F::bfloat16, F::bfloat16, F::float32, WgmmaSp_m64n8k32_f32_bf16_bf16)
    BLOCKSCALE_CASE(F::float16, F::float16, F::float16, WgmmaSp_m64n8k32_f16_f16_f16)
    BLOCKSCALE_CASE(F::tfloat32, F::tfloat32, F::float32, WgmmaSp_m64n8k16_f32_tf32_tf32)
  } else if constexpr (N == 64) {
    BLOCKSCALE_CASE(e4, e4, F::float32, WgmmaSp_m64n64k64_f32_e4m3_e4m3)
    BLOCKSCALE_CASE(e4, e4, F::float16, WgmmaSp_m64n64k64_f16_e4m3_e4m3)
    BLOCKSCALE_CASE(e4, e5, F::float32, WgmmaSp_m64n64k64_f32_e4m3_e5m2)
    BLOCKSCALE_CASE(e4, e5, F::float16, WgmmaSp_m64n64k64_f16_e4m3_e5m2)
    BLOCKSCALE_CASE(e5, e4, F::float32, WgmmaSp_m64n64k64_f32_e5m2_e4m3)
    BLOCKSCALE_CASE(e5, e4, F::float16, WgmmaSp_m64n64k64_f16_e5m2_e4m3)
    BLOCKSCALE_CASE(e5, e5, F::float32, WgmmaSp_m64n64k64_f32_e5m2_e5m2)
    BLOCKSCALE_CASE(e5, e5, F::float16, WgmmaSp_m64n64k64_f16_e5m2_e5m2)
    BLOCKSCALE_CASE(F::float16, F::float16, F::float32, WgmmaSp_m64n64k32_f32_f16_f16)
    BLOCKSCALE_CASE(F::bfloat16, F::bfloat16, F::float32, WgmmaSp_m64n64k32_f32_bf16_bf16)
    BLOCKSCALE_CASE(F::float16, F::float16, F::float16, WgmmaSp_m64n64k32_f16_f16_f16)
    BLOCKSCALE_CASE(F::tfloat32, F::tfloat32, F::float32, WgmmaSp_m64n64k16_f32_tf32_tf32)
  } else {
    static_assert(N == 256);
    BLOCKSCALE_CASE(e4, e4, F::float32, WgmmaSp_m64n256k64_f32_e4m3_e4m3)
    BLOCKSCALE_CASE(e4, e4, F::float16, WgmmaSp_m64n256k64_f16_e4m3_e4m3)
    BLOCKSCALE_CASE(e4, e5, F::float32, WgmmaSp_m64n256k64_f32_e4m3_e5m2)
    BLOCKSCALE_CASE(e4, e5, F::float16, WgmmaSp_m64n256k64_f16_e4m3_e5m2)
    BLOCKSCALE_CASE(e5, e4, F::float32, WgmmaSp_m64n256k64_f32_e5m2_e4m3)
    BLOCKSCALE_CASE(e5, e4, F::float16, WgmmaSp_m64n256k64_f16_e5m2_e4m3)
    BLOCKSCALE_CASE(e5, e5, F::float32, WgmmaSp_m64n256k64_f32_e5m2_e5m2)
    BLOCKSCALE_CASE(e5, e5, F::float16, WgmmaSp_m64n256k64_f16_e5m2_e5m2)
    BLOCKSCALE_CASE(F::float16, F::float16, F::float32, WgmmaSp_m64n256k32_f32_f16_f16)
    BLOCKSCALE_CASE(F::bfloat16, F::bfloat16, F::float32, WgmmaSp_m64n256k32_f32_bf16_bf16)
    BLOCKSCALE_CASE(F::float16, F::float16, F::float16, WgmmaSp_m64n256k32_f16_f16_f16)
    BLOCKSCALE_CASE(F::tfloat32, F::tfloat32, F::float32, WgmmaSp_m64n256k16_f32_tf32_tf32)
  }
#undef BLOCKSCALE_CASE
  return false;
}

bool dispatch_mma_sync(const ProbeKernel& p, const ProbeDeviceArgs& a) {
  using F = Format;
  const char* nm = p.name.c_str();
  const F e4 = F::float8_e4m3fn, e5 = F::float8_e5m2;
#define BLOCKSCALE_CASE(K, A, B, D, OP)                          \
  if (p.k == (K) && p.a == (A) && p.b == (B) && p.d == (D)) {   \
    launch_mma_sync<MmaSync::OP>(a, nm);                         \
    return true;                                                 \
  }
  BLOCKSCALE_CASE(32, e4, e4, F::float32, k32_f32_e4m3_e4m3)
  BLOCKSCALE_CASE(32, e4, e5, F::float32, k32_f32_e4m3_e5m2)
  BLOCKSCALE_CASE(32, e5, e4, F::float32, k32_f32_e5m2_e4m3)
  BLOCKSCALE_CASE(32, e5, e5, F::float32, k32_f32_e5m2_e5m2)
  BLOCKSCALE_CASE(32, e4, e4, F::float16, k32_f16_e4m3_e4m3)
  BLOCKSCALE_CASE(32, e4, e5, F::float16, k32_f16_e4m3_e5m2)
  BLOCKSCALE_CASE(32, e5, e4, F::float16, k32_f16_e5m2_e4m3)
  BLOCKSCALE_CASE(32, e5, e5, F::float16, k32_f16_e5m2_e5m2)
  BLOCKSCALE_CASE(16, e4, e4, F::float32, k16_f32_e4m3_e4m3)
  BLOCKSCALE_CASE(16, e4, e5, F::float32, k16_f32_e4m3_e5m2)
  BLOCKSCALE_CASE(16, e5, e4, F::float32, k16_f32_e5m2_e4m3)
  BLOCKSCALE_CASE(16, e5, e5, F::float32, k16_f32_e5m2_e5m2)
  BLOCKSCALE_CASE(16, e4, e4, F::float16, k16_f16_e4m3_e4m3)
  BLOCKSCALE_CASE(16, e4, e5, F::float16, k16_f16_e4m3_e5m2)
  BLOCKSCALE_CASE(16, e5, e4, F::float16, k16_f16_e5m2_e4m3)
  BLOCKSCALE_CASE(16, e5, e5, F::float16, k16_f16_e5m2_e5m2)
  BLOCKSCALE_CASE(16, F::float16, F::float16, F::float32, k16_f32_f16_f16)
  BLOCKSCALE_CASE(16, F::bfloat16, F::bfloat16, F::float32, k16_f32_bf16_bf16)
  BLOCKSCALE_CASE(16, F::float16, F::float16, F::float16, k16_f16_f16_f16)
  BLOCKSCALE_CASE(8, F::tfloat32, F::tfloat32, F::float32, k8_f32_tf32_tf32)
  BLOCKSCALE_CASE(8, F::float16, F::float16, F::float32, k8_f32_f16_f16)
  BLOCKSCALE_CASE(8, F::bfloat16, F::bfloat16, F::float32, k8_f32_bf16_bf16)
  BLOCKSCALE_CASE(8, F::float16, F::float16, F::float16, k8_f16_f16_f16)
  BLOCKSCALE_CASE(4, F::tfloat32, F::tfloat32, F::float32, k4_f32_tf32_tf32)
#undef BLOCKSCALE_CASE
  return false;
}

}  // namespace

void launch_probe_sm90(const ProbeKernel& p, const ProbeDeviceArgs& a) {
  bool ok = false;
  if (p.family == ProbeFamily::mma_sync) {
    ok = p.f64 ? dispatch_mma_sync_f64(p, a) : p.sparse ? dispatch_mma_sp(p, a) : dispatch_mma_sync(p, a);
  } else if (p.sparse) {
    if (p.n == 8) ok = dispatch_wgmma_sp_n<8>(p, a);
    if (p.n == 64) ok = dispatch_wgmma_sp_n<64>(p, a);
    if (p.n == 256) ok = dispatch_wgmma_sp_n<256>(p, a);
  } else if (p.family == ProbeFamily::wgmma) {
    if (p.n == 8) ok = dispatch_wgmma_n<8>(p, a);
    if (p.n == 64) ok = dispatch_wgmma_n<64>(p, a);
    if (p.n == 256) ok = dispatch_wgmma_n<256>(p, a);
  }
  if (!ok) throw std::logic_error("no sm_90a probe kernel instantiated for '" + p.name + "'");
}

}  // namespace blockscale::gpu::detail
