// SPDX-License-Identifier: Apache-2.0
// Probe kernels: one tensor-core instruction, exact inputs in, raw output bits out.
//
// A probe runs a batch of independent "tiles". A tile is one instruction's operands (A: m x k,
// B: k x n, C: m x n, and for block-scaled kinds the scales of A and B), and its result is the
// instruction's D (m x n), returned bit for bit. Thousands of tiles go through one launch, so a
// conformance run can push millions of outputs per instruction.
//
// Operand codes, per tile t (all row-major, K fastest for A and B):
//   a  [t][i][kk]  code of A(i, kk)              size tiles * m * k
//   b  [t][j][kk]  code of B(kk, j) (B^T rows)   size tiles * n * k
//   c  [t][i][j]   code of C(i, j)               size tiles * m * n
//   sfa[t][i][s]   scale of A row i, K-block s   size tiles * m * (k / scale_block)
//   sfb[t][j][s]   scale of B column j, block s  size tiles * n * (k / scale_block)
// A code is the format's bit pattern in the low bits of the word (fp4 4 bits, fp6 6, fp8 8,
// f16/bf16 16, f32 32). TF32 operands are given as full fp32 bit patterns: the instruction reads
// the 32-bit word and ignores (truncates) its low 13 bits, which is itself something to probe.
// f64 probes (the DMMA shapes of mma.sync .f64) take every element of A, B and C, and return every
// element of D, as a binary64 bit pattern in two consecutive words, the low word first.
// Sparse probes (mma.sp::ordered_metadata, wgmma.mma_async.sp; k is the logical K) take A as its
// stored values, a[t][i][s] (m x k/2), with a_index[t][i][s] the position of each inside its group
// of sparse_group K positions (4, or 2 for tf32; increasing within a 2:4 group); run_probe packs the
// positions into each thread's metadata register (docs/emulator.md, "Sparse MMA").
// Includable without CUDA.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "blockscale/formats/format.h"
#include "blockscale/gpu/descriptors.h"
#include "blockscale/gpu/device.h"

namespace blockscale::gpu {

enum class ProbeFamily : std::uint8_t { mma_sync, wgmma, tcgen05 };

struct ProbeKernel {
  // "<target> <instruction> <shape> <D type> <A type> <B type> [<scale type>]", the spelling of
  // the emulator's instruction table, e.g. "sm_90a wgmma.mma_async m64n256k32 f32 e5m2 e4m3" or
  // "sm_100a tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.block16 m128n8k64 f32 e2m1 e2m1 ue4m3".
  std::string name;
  std::string ptx;  // the instruction exactly as the kernel issues it
  Arch arch = Arch::sm_90a;
  ProbeFamily family = ProbeFamily::mma_sync;
  int m = 0, n = 0, k = 0;
  Format a = Format::float16, b = Format::float16;
  Format c = Format::float32, d = Format::float32;  // C is the addend, in D's format
  bool block_scaled = false;
  Format scale = Format::float8_e8m0fnu;  // block-scaled only
  int scale_block = 0;                    // 16 or 32; 0 without block scaling
  desc::Tcgen05Kind tcgen05_kind = desc::Tcgen05Kind::f16;  // tcgen05 only
  // How the kernel wires the operands, e.g. for tcgen05: "C is stored to TMEM with tcgen05.st and
  // the MMA runs with enable_input_d = 1". Printed by tools; part of the documented model.
  std::string note;
  // An f64 probe (mma.sync .f64, DMMA): a, b, c and d above are unused, elements are binary64
  // patterns in two words each (probe_words_per_element).
  bool f64 = false;
  // A sparse probe: k is the logical K; A holds k / 2 values per row (ProbeInputs::a_index).
  bool sparse = false;
  int sparse_group = 0;  // K positions per metadata group: 4, or 2 for tf32
};

// Every probe this build has, sm_90a first. Names are unique.
const std::vector<ProbeKernel>& probe_kernels();
// The probe with this exact name; std::invalid_argument (listing how to see the names) if none.
const ProbeKernel& find_probe(std::string_view name);

struct ProbeInputs {
  std::size_t tiles = 0;
  std::vector<std::uint32_t> a, b, c;
  std::vector<std::uint8_t> sfa, sfb;  // block-scaled kinds only (otherwise empty)
  std::vector<std::uint8_t> a_index;   // sparse probes only: tiles * m * k/2 positions
  // wgmma only: false issues the instruction with scale-d = 0 (D = A*B: the accumulator registers,
  // loaded with c, are not read), as kernels do for the first MMA of a tile. mma.sync always adds C.
  bool accumulate = true;
};

// Word counts per tile (elements times probe_words_per_element).
inline std::size_t probe_words_per_element(const ProbeKernel& p) { return p.f64 ? 2 : 1; }
inline std::size_t probe_stored_k(const ProbeKernel& p) { return std::size_t(p.sparse ? p.k / 2 : p.k); }
inline std::size_t probe_a_size(const ProbeKernel& p) {
  return std::size_t(p.m) * probe_stored_k(p) * probe_words_per_element(p);
}
inline std::size_t probe_a_index_size(const ProbeKernel& p) { return p.sparse ? std::size_t(p.m) * p.k / 2 : 0; }
inline std::size_t probe_b_size(const ProbeKernel& p) { return std::size_t(p.n) * p.k * probe_words_per_element(p); }
inline std::size_t probe_c_size(const ProbeKernel& p) { return std::size_t(p.m) * p.n * probe_words_per_element(p); }
inline std::size_t probe_sfa_size(const ProbeKernel& p) {
  return p.block_scaled && p.scale_block > 0 ? std::size_t(p.m) * (p.k / p.scale_block) : 0;
}
inline std::size_t probe_sfb_size(const ProbeKernel& p) {
  return p.block_scaled && p.scale_block > 0 ? std::size_t(p.n) * (p.k / p.scale_block) : 0;
}

// Checks that `probe` is a row of probe_kernels() as listed there, sizes and code ranges
// (std::invalid_argument naming the operand, index and rule), then runs every tile on device
// `device` in one grid-stride launch and returns D's codes
// (tiles * m * n, row-major per tile; f64: two words per element). Throws Unavailable when the device cannot run the probe
// (no GPU, or another compute capability) and Error when a CUDA call fails.
std::vector<std::uint32_t> run_probe(const ProbeKernel& probe, const ProbeInputs& inputs, int device = 0);

// Checks `inputs` against `probe` without running anything (the validation run_probe does first).
void validate_probe_inputs(const ProbeKernel& probe, const ProbeInputs& inputs);

std::string to_string(ProbeFamily f);

}  // namespace blockscale::gpu
