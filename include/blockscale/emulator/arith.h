// SPDX-License-Identifier: Apache-2.0
// The CUDA-core operations that kernels apply around tensor-core instructions, on bit patterns,
// in integer arithmetic (so the host's FPU modes, FTZ/DAZ or -ffast-math cannot change them):
// IEEE 754 round-to-nearest-even with subnormals kept, as FADD/FMUL/FFMA (no .ftz) and HADD do,
// and NVIDIA's canonical NaN (0x7FFFFFFF, 0x7FFF) for every NaN result.
#pragma once

#include <cstdint>
#include <span>

namespace blockscale::emulator {

std::uint32_t add_f32(std::uint32_t x, std::uint32_t y);                   // FADD.RN
std::uint32_t mul_f32(std::uint32_t x, std::uint32_t y);                   // FMUL.RN
std::uint32_t fma_f32(std::uint32_t x, std::uint32_t y, std::uint32_t z);  // FFMA.RN: x*y + z, one rounding
std::uint16_t add_f16(std::uint16_t x, std::uint16_t y);                   // HADD.RN

// The balanced tree of FADDs over adjacent partial sums (a split-K reduction): T(x) = x,
// T(x_0..x_{n-1}) = T(first ceil(n/2)) + T(rest). std::invalid_argument for an empty `p`.
std::uint32_t sum_f32_pairwise(std::span<const std::uint32_t> p);

}  // namespace blockscale::emulator
