// SPDX-License-Identifier: Apache-2.0
// Internal: what gemm.cpp hands the per-architecture GEMM launchers.
#pragma once

#include <cuda_runtime_api.h>

#include "blockscale/gpu/gemm.h"

namespace blockscale::gpu::detail {

void launch_gemm_sm90(const GemmKernel& kernel, const GemmArgs& args, const GemmDeviceOperands& ops,
                      cudaStream_t stream);
void launch_gemm_sm100(const GemmKernel& kernel, const GemmArgs& args, const GemmDeviceOperands& ops,
                       cudaStream_t stream);

// Scale-word addressing shared by both architectures: the 32-bit word holding the scales of K-blocks
// 4w .. 4w+3 of row r. Tiled (layouts.md L1): 512 * ((r / 128) * nk + w) + 16 * (r % 32) +
// 4 * ((r / 32) % 4), nk = number of 4-block groups along K. Linear: r * blocks + 4w.
__host__ __device__ constexpr unsigned long long scale_word_offset(bool tiled, int r, int w, int blocks) {
  return tiled ? 512ull * ((unsigned long long)(r / 128) * (blocks / 4) + w) + 16ull * (r % 32) + 4ull * ((r / 32) % 4)
               : (unsigned long long)r * blocks + 4ull * w;
}

}  // namespace blockscale::gpu::detail
