// SPDX-License-Identifier: Apache-2.0
// Internal: tcgen05 wrappers (PTX ISA 9.7.16), sm_100a only. One instruction each; the order in
// which kernels use them is gpu.md §1.9: alloc -> fence/barrier/fence -> (st | cp) -> mma ->
// commit -> mbarrier wait -> fence::after_thread_sync -> ld -> wait::ld -> dealloc.
#pragma once

#include <cstdint>

#include "ptx.cuh"

namespace blockscale::gpu::detail {

// One warp allocates `cols` (power of 2, 32..512) TMEM columns; the base address is written to
// shared memory at `dst` (PTX 9.7.16.7.1).
__device__ __forceinline__ void tmem_alloc(std::uint32_t* dst, std::uint32_t cols) {
  asm volatile("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%0], %1;" ::"r"(smem_addr(dst)), "r"(cols)
               : "memory");
}
__device__ __forceinline__ void tmem_relinquish() {
  asm volatile("tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;" ::: "memory");
}
__device__ __forceinline__ void tmem_dealloc(std::uint32_t taddr, std::uint32_t cols) {
  asm volatile("tcgen05.dealloc.cta_group::1.sync.aligned.b32 %0, %1;" ::"r"(taddr), "r"(cols) : "memory");
}
__device__ __forceinline__ void tc_fence_before() { asm volatile("tcgen05.fence::before_thread_sync;" ::: "memory"); }
__device__ __forceinline__ void tc_fence_after() { asm volatile("tcgen05.fence::after_thread_sync;" ::: "memory"); }
__device__ __forceinline__ void tmem_wait_ld() { asm volatile("tcgen05.wait::ld.sync.aligned;" ::: "memory"); }
__device__ __forceinline__ void tmem_wait_st() { asm volatile("tcgen05.wait::st.sync.aligned;" ::: "memory"); }

// Arrives once on `bar` when every earlier tcgen05 async op of this thread has completed.
__device__ __forceinline__ void tc_commit(std::uint64_t* bar) {
  asm volatile("tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%0];" ::"r"(smem_addr(bar))
               : "memory");
}

// 32 lanes x 128 bits from shared memory (described by `sdesc`) into TMEM at `taddr`, copied into
// all four 32-lane quarters: the scale-factor copy (gpu.md §1.8). SASS UTCCP.T.S.4x32dp128bit.
__device__ __forceinline__ void tmem_cp_32x128b_warpx4(std::uint32_t taddr, std::uint64_t sdesc) {
  asm volatile("tcgen05.cp.cta_group::1.32x128b.warpx4 [%0], %1;" ::"r"(taddr), "l"(sdesc) : "memory");
}

// This warp's 32 lanes, 8 consecutive 32-bit columns: thread t holds lane (quarter base + t).
__device__ __forceinline__ void tmem_st_32x32b_x8(std::uint32_t taddr, const std::uint32_t (&v)[8]) {
  asm volatile("tcgen05.st.sync.aligned.32x32b.x8.b32 [%0], {%1, %2, %3, %4, %5, %6, %7, %8};" ::"r"(taddr),
               "r"(v[0]), "r"(v[1]), "r"(v[2]), "r"(v[3]), "r"(v[4]), "r"(v[5]), "r"(v[6]), "r"(v[7])
               : "memory");
}
__device__ __forceinline__ void tmem_ld_32x32b_x8(std::uint32_t taddr, std::uint32_t (&v)[8]) {
  asm volatile("tcgen05.ld.sync.aligned.32x32b.x8.b32 {%0, %1, %2, %3, %4, %5, %6, %7}, [%8];"
               : "=r"(v[0]), "=r"(v[1]), "=r"(v[2]), "=r"(v[3]), "=r"(v[4]), "=r"(v[5]), "=r"(v[6]), "=r"(v[7])
               : "r"(taddr)
               : "memory");
}

// The MMA forms, issued by one thread. enable_input_d: D = A*B (+ D when nonzero).
enum class Tc05Op { f16, tf32, f8f6f4, mxf8f6f4_block32, mxf4_block32, mxf4nvf4_block16, mxf4nvf4_block32 };

template <Tc05Op Op>
__device__ __forceinline__ void tc05_mma(std::uint32_t d_tmem, std::uint64_t a_desc, std::uint64_t b_desc,
                                         std::uint32_t idesc, std::uint32_t enable_input_d, std::uint32_t sfa_tmem,
                                         std::uint32_t sfb_tmem) {
#define BLOCKSCALE_TC05_PLAIN(KIND)                                                                         \
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %4, 0;\ntcgen05.mma.cta_group::1.kind::" KIND              \
               " [%0], %1, %2, %3, p;\n}\n" ::"r"(d_tmem),                                                  \
               "l"(a_desc), "l"(b_desc), "r"(idesc), "r"(enable_input_d)                                    \
               : "memory")
#define BLOCKSCALE_TC05_SCALED(KIND)                                                                        \
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %4, 0;\ntcgen05.mma.cta_group::1.kind::" KIND              \
               " [%0], %1, %2, %3, [%5], [%6], p;\n}\n" ::"r"(d_tmem),                                      \
               "l"(a_desc), "l"(b_desc), "r"(idesc), "r"(enable_input_d), "r"(sfa_tmem), "r"(sfb_tmem)      \
               : "memory")
  if constexpr (Op == Tc05Op::f16) {
    BLOCKSCALE_TC05_PLAIN("f16");
  } else if constexpr (Op == Tc05Op::tf32) {
    BLOCKSCALE_TC05_PLAIN("tf32");
  } else if constexpr (Op == Tc05Op::f8f6f4) {
    BLOCKSCALE_TC05_PLAIN("f8f6f4");
  } else if constexpr (Op == Tc05Op::mxf8f6f4_block32) {
    BLOCKSCALE_TC05_SCALED("mxf8f6f4.block_scale.block32");
  } else if constexpr (Op == Tc05Op::mxf4_block32) {
    BLOCKSCALE_TC05_SCALED("mxf4.block_scale.block32");
  } else if constexpr (Op == Tc05Op::mxf4nvf4_block16) {
    BLOCKSCALE_TC05_SCALED("mxf4nvf4.block_scale.block16");
  } else {
    BLOCKSCALE_TC05_SCALED("mxf4nvf4.block_scale.block32");
  }
#undef BLOCKSCALE_TC05_PLAIN
#undef BLOCKSCALE_TC05_SCALED
  (void)sfa_tmem;
  (void)sfb_tmem;
}

}  // namespace blockscale::gpu::detail
