// SPDX-License-Identifier: Apache-2.0
// sm_100a probe kernels: one tcgen05.mma per tile (compile-verified; no Blackwell GPU was
// available). One CTA of 4 warps walks tiles with a grid-stride loop, in the order gpu.md §1.9
// prescribes:
//   alloc (warp 0) -> fence::before / barrier / fence::after
//   per tile: operands to shared memory, C to TMEM (tcgen05.st, wait::st), fence.proxy.async,
//             fence::before / barrier / fence::after;
//             one thread: [tcgen05.cp scales] -> tcgen05.mma (enable_input_d = 1) -> commit(mbar);
//             all: mbarrier wait -> fence::after -> tcgen05.ld -> wait::ld -> store D;
//             fence::before / barrier (TMEM and shared memory are reused by the next tile)
//   fence::after -> dealloc (warp 0).
#include <cuda_runtime.h>

#include <cstdint>
#include <stdexcept>
#include <string>

#include "blockscale/gpu/descriptors.h"
#include "cuda_check.h"
#include "probe_launch.h"
#include "ptx_sm100.cuh"

namespace blockscale::gpu::detail {
namespace {

template <Tc05Op Op, int N>
__global__ void __launch_bounds__(128, 1)
    tcgen05_probe_kernel(const std::uint8_t* __restrict__ a_rows, const std::uint8_t* __restrict__ b_rows,
                         const std::uint32_t* __restrict__ c, std::uint32_t* __restrict__ d,
                         const std::uint8_t* __restrict__ sfa, const std::uint8_t* __restrict__ sfb,
                         std::size_t tiles, std::uint32_t idesc) {
  constexpr int M = 128;
  constexpr bool kScaled = Op == Tc05Op::mxf8f6f4_block32 || Op == Tc05Op::mxf4_block32 ||
                           Op == Tc05Op::mxf4nvf4_block16 || Op == Tc05Op::mxf4nvf4_block32;
  constexpr int kSfbAtoms = (N + 127) / 128;
  // TMEM columns: D in [0, N), SFA in [N, N + 4), SFB in [N + 4, N + 4 + 4 * kSfbAtoms).
  constexpr std::uint32_t kSfaCol = N, kSfbCol = N + 4;
  constexpr std::uint32_t kCols = (N + 4 + 4 * kSfbAtoms) <= 32 ? 32 : (N + 4 + 4 * kSfbAtoms) <= 64 ? 64
                                  : (N + 4 + 4 * kSfbAtoms) <= 128 ? 128 : (N + 4 + 4 * kSfbAtoms) <= 256 ? 256 : 512;

  __shared__ alignas(128) std::uint8_t sa[M * kProbeRowBytes];
  __shared__ alignas(128) std::uint8_t sb[N * kProbeRowBytes];
  __shared__ alignas(128) std::uint8_t s_sfa[kScaleAtomBytes];
  __shared__ alignas(128) std::uint8_t s_sfb[kScaleAtomBytes * kSfbAtoms];
  __shared__ alignas(8) std::uint64_t mma_done;
  __shared__ std::uint32_t tmem_base_slot;

  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  if (warp == 0) {
    tmem_alloc(&tmem_base_slot, kCols);
    tmem_relinquish();
  }
  if (tid == 0) {
    mbarrier_init(&mma_done, 1);
    fence_mbarrier_init();
  }
  tc_fence_before();
  __syncthreads();
  tc_fence_after();
  const std::uint32_t tmem = tmem_base_slot;
  // A warp reaches TMEM lanes 32 * (warp % 4) .. + 31 only (gpu.md §1.2); lane field = bits 31..16.
  const std::uint32_t lane_base = std::uint32_t(32 * warp) << 16;
  const int row = 32 * warp + lane;  // D row i lives in TMEM lane i (M = 128, "Layout D")

  const std::uint64_t a_desc = desc::pack_sm100_smem_desc(smem_addr(sa), kProbeLbo, kProbeSbo, desc::Sm100Swizzle::none);
  const std::uint64_t b_desc = desc::pack_sm100_smem_desc(smem_addr(sb), kProbeLbo, kProbeSbo, desc::Sm100Swizzle::none);
  std::uint32_t phase = 0;

  for (std::size_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const auto* ga = reinterpret_cast<const uint4*>(a_rows + tile * M * kProbeRowBytes);
    const auto* gb = reinterpret_cast<const uint4*>(b_rows + tile * N * kProbeRowBytes);
    for (int q = tid; q < M * 2; q += 128) *reinterpret_cast<uint4*>(sa + probe_smem_offset(q / 2, q % 2)) = ga[q];
    for (int q = tid; q < N * 2; q += 128) *reinterpret_cast<uint4*>(sb + probe_smem_offset(q / 2, q % 2)) = gb[q];
    if constexpr (kScaled) {
      const auto* gsa = reinterpret_cast<const uint4*>(sfa + tile * kScaleAtomBytes);
      const auto* gsb = reinterpret_cast<const uint4*>(sfb + tile * kScaleAtomBytes * kSfbAtoms);
      for (int q = tid; q < kScaleAtomBytes / 16; q += 128) reinterpret_cast<uint4*>(s_sfa)[q] = gsa[q];
      for (int q = tid; q < kScaleAtomBytes * kSfbAtoms / 16; q += 128) reinterpret_cast<uint4*>(s_sfb)[q] = gsb[q];
    }
    // C into D's TMEM columns, 8 columns per tcgen05.st.
    const std::uint32_t* crow = c + (tile * M + row) * N;
#pragma unroll 1
    for (int col = 0; col < N; col += 8) {
      std::uint32_t v[8];
#pragma unroll
      for (int j = 0; j < 8; ++j) v[j] = crow[col + j];
      tmem_st_32x32b_x8(tmem + lane_base + col, v);
    }
    tmem_wait_st();
    fence_proxy_async_shared();  // thread-written operands and scales, read by the async proxy
    tc_fence_before();
    __syncthreads();
    tc_fence_after();

    if (tid == 0) {
      if constexpr (kScaled) {
        // 32 lanes x 16 bytes per atom, copied into all four lane quarters: row r -> lane r % 32,
        // column base + r / 32, byte j = scale j (gpu.md §1.8). No swizzle, 8-row groups 128 B apart.
        tmem_cp_32x128b_warpx4(tmem + kSfaCol, desc::pack_sm100_smem_desc(smem_addr(s_sfa), 0, 128, desc::Sm100Swizzle::none));
#pragma unroll
        for (int q = 0; q < kSfbAtoms; ++q) {
          tmem_cp_32x128b_warpx4(tmem + kSfbCol + 4 * q,
                                 desc::pack_sm100_smem_desc(smem_addr(s_sfb + q * kScaleAtomBytes), 0, 128,
                                                            desc::Sm100Swizzle::none));
        }
      }
      tc05_mma<Op>(tmem, a_desc, b_desc, idesc, 1, tmem + kSfaCol, tmem + kSfbCol);
      tc_commit(&mma_done);
    }
    mbarrier_wait(&mma_done, phase);
    phase ^= 1;
    tc_fence_after();

    std::uint32_t* drow = d + (tile * M + row) * N;
#pragma unroll 1
    for (int col = 0; col < N; col += 8) {
      std::uint32_t v[8];
      tmem_ld_32x32b_x8(tmem + lane_base + col, v);
      tmem_wait_ld();
#pragma unroll
      for (int j = 0; j < 8; ++j) drow[col + j] = v[j];
    }
    tc_fence_before();
    __syncthreads();
    tc_fence_after();
  }
  if (warp == 0) tmem_dealloc(tmem, kCols);
}

template <Tc05Op Op, int N>
void launch(const ProbeDeviceArgs& a, const char* name) {
  const unsigned grid = static_cast<unsigned>(std::min<std::size_t>(a.tiles, std::size_t(a.multiprocessors)));
  tcgen05_probe_kernel<Op, N><<<grid, 128>>>(a.a_rows, a.b_rows, static_cast<const std::uint32_t*>(a.c),
                                                           static_cast<std::uint32_t*>(a.d), a.sfa, a.sfb, a.tiles,
                                                           a.idesc);
  BLOCKSCALE_CUDA_LAUNCHED(name);
}

template <Tc05Op Op>
bool launch_n(const ProbeKernel& p, const ProbeDeviceArgs& a) {
  switch (p.n) {
    case 8: launch<Op, 8>(a, p.name.c_str()); return true;
    case 16: launch<Op, 16>(a, p.name.c_str()); return true;
    case 256: launch<Op, 256>(a, p.name.c_str()); return true;
    default: return false;
  }
}

}  // namespace

void launch_probe_sm100(const ProbeKernel& p, const ProbeDeviceArgs& a) {
  using K = desc::Tcgen05Kind;
  bool ok = false;
  switch (p.tcgen05_kind) {
    case K::f16: ok = launch_n<Tc05Op::f16>(p, a); break;
    case K::tf32: ok = launch_n<Tc05Op::tf32>(p, a); break;
    case K::f8f6f4: ok = launch_n<Tc05Op::f8f6f4>(p, a); break;
    case K::mxf8f6f4: ok = launch_n<Tc05Op::mxf8f6f4_block32>(p, a); break;
    case K::mxf4: ok = launch_n<Tc05Op::mxf4_block32>(p, a); break;
    case K::mxf4nvf4:
      ok = p.scale_block == 16 ? launch_n<Tc05Op::mxf4nvf4_block16>(p, a) : launch_n<Tc05Op::mxf4nvf4_block32>(p, a);
      break;
  }
  if (!ok) throw std::logic_error("no sm_100a probe kernel instantiated for '" + p.name + "'");
}

}  // namespace blockscale::gpu::detail
