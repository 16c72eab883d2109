// SPDX-License-Identifier: Apache-2.0
// Block-scaled GEMM kernels: D = (A, SFA) x (B, SFB) + C, f32 accumulation, f32 or bf16 output.
// Includable without CUDA.
//
// Operands (all K-major, i.e. "TN"): A is M x K row-major, B is given as its transpose, N x K
// row-major. Elements: MXFP8 one e4m3/e5m2 code per byte; MXFP4/NVFP4 two e2m1 codes per byte,
// element 2j in the low nibble (layouts.md P1). Scales: one byte per (row, K-block) of A and per
// (column, K-block) of B, in the 128x4 tiled layout (layouts.md L1: cuBLAS VEC32_UE8M0 /
// VEC16_UE4M3, tcgen05.cp source) or linear (row-major rows x K/block). C (optional) is M x N f32
// row-major; D is M x N row-major, f32 or bf16.
//
// The numerics of each kernel are exactly an emulator schedule, stated in GemmKernel::schedule
// and in docs/gpu.md:
//  - sm_90a ("Hopper promotion", P = 1): for each K-block b in increasing order, one
//    wgmma.mma_async k32 fp8 instruction into a fresh accumulator (scale-d = 0) gives partial_b
//    (T-FDPA, F = 13, RZ to e8m13); then s = fp32 RN product SFA(i,b) * SFB(j,b) (FMUL), and
//    acc = fmaf(s, partial_b, acc) (FFMA, RN), acc starting at C(i,j) (+0.0 without C).
//    MXFP8/MXFP4: the k32 instruction holds the 32 elements of block b. NVFP4 (block 16): it holds
//    block b's 16 elements in k = 0..15 and zeros in k = 16..31. fp4 codes are expanded to e4m3
//    on chip (exact: every e2m1 value is an e4m3 value). bf16 output: cvt.rn.bf16.f32 of acc.
//  - sm_100a (compile-verified only: no Blackwell GPU was available): one tcgen05.mma block_scale
//    instruction per K step chained in TMEM (f32), starting from C stored to TMEM.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "blockscale/formats/format.h"
#include "blockscale/gpu/device.h"

namespace blockscale::gpu {

enum class GemmRecipe : std::uint8_t { mxfp8, mxfp4, nvfp4 };
enum class ScaleLayout : std::uint8_t { tiled_128x4, linear };
enum class GemmOutput : std::uint8_t { f32, bf16 };

std::string to_string(GemmRecipe r);
std::string to_string(ScaleLayout l);
std::string to_string(GemmOutput o);

struct GemmKernel {
  std::string name;  // "sm_90a gemm mxfp8 e4m3 e5m2 ue8m0 block32 (wgmma promotion P=1)"
  Arch arch = Arch::sm_90a;
  GemmRecipe recipe = GemmRecipe::mxfp8;
  Format a = Format::float8_e4m3fn, b = Format::float8_e4m3fn;  // element formats in memory
  Format scale = Format::float8_e8m0fnu;
  int block = 32;                       // elements per scale along K
  int k_multiple = 128;                 // K must be a multiple of this (one pipeline stage)
  bool linear_scales = true;            // accepts ScaleLayout::linear as well as tiled_128x4
  std::string instruction;              // the tensor-core instruction issued per K step
  int promotion_interval = 1;           // sm_90a: P, instructions per fresh accumulator
  int tile_m = 128, tile_n = 128;       // output tile of one CTA
  std::string schedule;                 // the emulator schedule the bits follow, in words
};

// Every GEMM kernel of this build (sm_90a first).
const std::vector<GemmKernel>& gemm_kernels();
const GemmKernel& find_gemm_kernel(std::string_view name);

// The kernel for `recipe` with element formats (a, b) that runs on device `device`: the sm_100a
// kernel on compute capability 10.0, the sm_90a kernel on 9.0. Unavailable (listing the kernels
// and the capabilities they need) when none runs there or there is no GPU.
const GemmKernel& select_gemm_kernel(GemmRecipe recipe, Format a, Format b, int device = 0);

struct GemmArgs {
  int m = 0, n = 0, k = 0;
  ScaleLayout scale_layout = ScaleLayout::tiled_128x4;
  GemmOutput output = GemmOutput::f32;
};

// Byte sizes of the operands as the kernels read them (std::invalid_argument for a kernel that is
// not a row of gemm_kernels(), negative sizes or an unknown layout).
std::size_t gemm_element_bytes(const GemmKernel& kernel, int rows, int k);  // A: rows = M, B: rows = N
std::size_t gemm_scale_bytes(const GemmKernel& kernel, ScaleLayout layout, int rows, int k);

// Checks that `kernel` is a row of gemm_kernels() as listed there, the shapes (positive, at most
// 2^30, M x N at most 2^40), K granularity, the enum values and layouts (std::invalid_argument),
// then the device (Unavailable).
void validate_gemm(const GemmKernel& kernel, const GemmArgs& args, int device = 0);

// Device pointers (alignment checked): a, b, sfa and sfb 16-byte aligned (TMA, vector loads); d
// aligned to two of its values (8 bytes for f32, 4 for bf16: stored in pairs); c to a float. c may
// be null (C = 0). d: f32 or bf16 per args.output.
struct GemmDeviceOperands {
  const void* a = nullptr;
  const void* b = nullptr;
  const void* sfa = nullptr;
  const void* sfb = nullptr;
  const float* c = nullptr;
  void* d = nullptr;
};

// Enqueues the GEMM on `stream` (a cudaStream_t; null = default stream) of the current device.
// The arguments and pointers are checked before any CUDA call (std::invalid_argument), then the
// device (Unavailable, also when there is no GPU).
void launch_gemm(const GemmKernel& kernel, const GemmArgs& args, const GemmDeviceOperands& ops,
                 void* stream = nullptr);

// Host convenience for tests and the conformance harness: copies the operands to device `device`,
// runs, and returns D's codes (f32 bits, or bf16 codes in the low 16 bits). c may be empty. The
// arguments and buffer sizes are checked before the device.
struct GemmHostOperands {
  std::vector<std::uint8_t> a, b, sfa, sfb;
  std::vector<float> c;
};
std::vector<std::uint32_t> run_gemm(const GemmKernel& kernel, const GemmArgs& args, const GemmHostOperands& ops,
                                    int device = 0);

}  // namespace blockscale::gpu
