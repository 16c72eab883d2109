// SPDX-License-Identifier: Apache-2.0
// Internal: wgmma synchronisation (PTX ISA 9.7.15.6-9.7.15.8), sm_90a only.
#pragma once

#include <cstdint>

namespace blockscale::gpu::detail {

// Orders register accesses before the next wgmma.mma_async (SASS WARPGROUP.ARRIVE).
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
template <int N>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory");
}
// Pins a register that an in-flight wgmma writes (or just wrote) so the compiler keeps reads and
// writes of it on the right side of the wgmma / wait statements.
__device__ __forceinline__ void reg_fence(float& r) { asm volatile("" : "+f"(r)::"memory"); }
__device__ __forceinline__ void reg_fence(std::uint32_t& r) { asm volatile("" : "+r"(r)::"memory"); }

}  // namespace blockscale::gpu::detail
