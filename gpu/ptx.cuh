// SPDX-License-Identifier: Apache-2.0
// Internal: inline-PTX wrappers shared by the sm_90a and sm_100a kernels (mbarrier, bulk / tensor
// copies, proxy fences). Each wrapper is one PTX instruction; the PTX ISA section is named.
#pragma once

#include <cuda.h>

#include <cstdint>

namespace blockscale::gpu::detail {

__device__ __forceinline__ std::uint32_t smem_addr(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

// PTX ISA 9.7.13.15 (mbarrier).
__device__ __forceinline__ void mbarrier_init(std::uint64_t* bar, std::uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_addr(bar)), "r"(count) : "memory");
}
// Makes the initialisation visible to the async proxy (TMA, tcgen05.commit) before first use.
__device__ __forceinline__ void fence_mbarrier_init() {
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}
__device__ __forceinline__ void mbarrier_arrive(std::uint64_t* bar) {
  asm volatile(
      "{\n.reg .b64 state;\nmbarrier.arrive.release.cta.shared::cta.b64 state, [%0];\n}" ::"r"(smem_addr(bar))
      : "memory");
}
// Adds `bytes` to the transaction count of the current phase without arriving.
__device__ __forceinline__ void mbarrier_expect_tx(std::uint64_t* bar, std::uint32_t bytes) {
  asm volatile("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], %1;" ::"r"(smem_addr(bar)), "r"(bytes)
               : "memory");
}
__device__ __forceinline__ void mbarrier_arrive_expect_tx(std::uint64_t* bar, std::uint32_t bytes) {
  asm volatile(
      "{\n.reg .b64 state;\nmbarrier.arrive.expect_tx.release.cta.shared::cta.b64 state, [%0], %1;\n}" ::"r"(
          smem_addr(bar)),
      "r"(bytes)
      : "memory");
}
// Blocks until the phase with parity `parity` has completed (a fresh barrier is in phase 0, so
// waiting for parity 1 returns at once).
__device__ __forceinline__ void mbarrier_wait(std::uint64_t* bar, std::uint32_t parity) {
  asm volatile(
      "{\n.reg .pred done;\n"
      "WAIT_%=:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra WAIT_%=;\n}" ::"r"(smem_addr(bar)),
      "r"(parity)
      : "memory");
}

// Generic-proxy shared-memory writes become visible to the async proxy (wgmma, tcgen05, TMA).
// PTX ISA 9.7.13.4 (membar / fence.proxy).
__device__ __forceinline__ void fence_proxy_async_shared() {
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

// TMA 2-D tile load completing on `bar` (PTX ISA 9.7.9.25.5.1, cp.async.bulk.tensor).
__device__ __forceinline__ void tma_load_2d(void* dst, const CUtensorMap* map, std::uint64_t* bar, int x, int y) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], [%2];" ::
          "r"(smem_addr(dst)),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(smem_addr(bar)), "r"(x), "r"(y)
      : "memory");
}
// Non-tensor bulk copy global -> shared of `bytes` (multiple of 16, 16-byte aligned ends).
__device__ __forceinline__ void bulk_load(void* dst, const void* src, std::uint32_t bytes, std::uint64_t* bar) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(smem_addr(dst)),
      "l"(src), "r"(bytes), "r"(smem_addr(bar))
      : "memory");
}

}  // namespace blockscale::gpu::detail
