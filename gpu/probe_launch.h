// SPDX-License-Identifier: Apache-2.0
// Internal: what the probe kernels receive. probe.cpp packs the caller's codes into these images.
#pragma once

#include <cstddef>
#include <cstdint>

#include "blockscale/gpu/probe.h"

namespace blockscale::gpu::detail {

// Every probe instruction reads at most 32 bytes of each A row and each B^T row (k32 x 8-bit,
// k16 x 16-bit, k8 x 32-bit, k32 fp6/fp4 padded to one byte per element, k64 packed fp4; the
// half-K mma.sync shapes, m16n8k16 x 8-bit, m16n8k8 x 16-bit and m16n8k4 x tf32, read the first 16),
// so an operand image is rows x 32 bytes, row-major, in the byte order the instruction consumes.
inline constexpr int kProbeRowBytes = 32;

// The operand tiles in shared memory use the canonical no-swizzle K-major layout: core matrices
// of 8 rows x 16 bytes, stored [row / 8][k-half][row % 8][16 bytes], so the step between the two
// core matrices along K (LBO) is 128 bytes and between 8-row groups (SBO) 256 bytes (gpu.md §1.6
// and §3.2: ((8,m),(T,2k)) : ((1T,SBO),(1,LBO))).
inline constexpr std::uint32_t kProbeLbo = 128;
inline constexpr std::uint32_t kProbeSbo = 256;
__host__ __device__ constexpr std::uint32_t probe_smem_offset(int row, int half) {
  return std::uint32_t(row / 8) * kProbeSbo + std::uint32_t(half) * kProbeLbo + std::uint32_t(row % 8) * 16;
}

// Sparse probes: A's rows hold the K/2 stored values (32 bytes, the images above); B's rows hold
// the logical K (16-bit k32, tf32 k16, fp8 k64: 64 bytes; the half-K mma.sp shapes use the first
// 32). In shared memory (wgmma.sp) a B row is four core matrices along K: LBO 128 B, SBO 512 B.
inline constexpr int kSparseBRowBytes = 64;
inline constexpr std::uint32_t kSparseBSbo = 512;
__host__ __device__ constexpr std::uint32_t sparse_b_smem_offset(int row, int chunk) {
  return std::uint32_t(row / 8) * kSparseBSbo + std::uint32_t(chunk) * kProbeLbo + std::uint32_t(row % 8) * 16;
}
// Metadata registers per tile: one per thread (mma.sp: a warp, wgmma.sp: a warpgroup).
inline int probe_metadata_words(int m) { return m == 64 ? 128 : 32; }

// tcgen05 block-scaled probes: per tile, the scale bytes of A (one 512-byte 128x4 atom: byte
// (r % 32) * 16 + (r / 32) * 4 + j holds scale j of row r, the tcgen05.cp.32x128b.warpx4 source)
// and of B (one atom per 128 columns).
inline constexpr int kScaleAtomBytes = 512;
inline int probe_sfb_atoms(int n) { return (n + 127) / 128; }

struct ProbeDeviceArgs {
  const std::uint8_t* a_rows = nullptr;  // tiles * m * 32
  const std::uint8_t* b_rows = nullptr;  // tiles * n * 32 (sparse probes: kSparseBRowBytes)
  const void* c = nullptr;               // tiles * m * n codes, 4 bytes (f32) or 2 (f16)
  void* d = nullptr;                     // tiles * m * n codes, as c
  const std::uint8_t* sfa = nullptr;     // tiles * 512
  const std::uint8_t* sfb = nullptr;     // tiles * 512 * probe_sfb_atoms(n)
  const double* a_f64 = nullptr;         // f64 probes: tiles * m * k, row-major (c and d: tiles * m * n)
  const double* b_f64 = nullptr;         // f64 probes: tiles * n * k (B^T rows)
  const std::uint32_t* metadata = nullptr;  // sparse probes: tiles * probe_metadata_words(m), by thread
  std::size_t tiles = 0;
  std::uint32_t idesc = 0;               // tcgen05 instruction descriptor
  std::uint32_t scale_d = 1;             // wgmma: 0 issues scale-d = 0 (D = A*B)
  int multiprocessors = 1;
};

void launch_probe_sm90(const ProbeKernel& probe, const ProbeDeviceArgs& args);
void launch_probe_sm100(const ProbeKernel& probe, const ProbeDeviceArgs& args);

}  // namespace blockscale::gpu::detail
