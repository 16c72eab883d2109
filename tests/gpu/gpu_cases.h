// SPDX-License-Identifier: Apache-2.0
// Test cases for the GPU kernels, deterministic from a seed, and their emulator predictions.
//
// The emulator (blockscale::emulator) is the independent oracle: the kernels are written from
// gpu.md, the models from numerics.md, and a test passes only when every output bit agrees.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "blockscale/emulator/params.h"
#include "blockscale/gpu/gemm.h"
#include "blockscale/gpu/probe.h"
#include "blockscale/harness/target.h"

namespace blockscale::gputest {

// splitmix64: the same stream on every machine and compiler.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : s_(seed) {}
  std::uint64_t next();
  std::uint32_t below(std::uint32_t n) { return static_cast<std::uint32_t>(next() % n); }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1p-53; }  // [0, 1)
  double gaussian();                                                        // Box-Muller

 private:
  std::uint64_t s_;
};

enum class Data {
  small_integers,  // |a|, |b| <= 4, integer C: every model gives the exact sum (a layout check)
  random_bits,     // uniformly random codes, NaN / Inf included; C mixes random bits, zeros, nearby values
  finite_bits,     // random codes without NaN / Inf
  realistic,       // Gaussian and heavy-tailed values quantized to the operand format
  scale_range,     // random finite codes; e8m0 scales over 2^-63 .. 2^63 with its ends weighted
                   // (products from 2^-126 to 2^126, the normal range's ends), and rarely a code
                   // outside it (0, 1, 63, 191, 254, 255: subnormal, NaN, overflowing and
                   // underflowing products)
};
std::string to_string(Data d);

gpu::ProbeInputs make_probe_inputs(const gpu::ProbeKernel& probe, std::size_t tiles, std::uint64_t seed, Data data);

// The emulator's D for every tile (the instruction named by probe.name; with `params`, the row's
// model with those parameters instead, as `conform --model-override` runs it).
std::vector<std::uint32_t> emulate_probe(const gpu::ProbeKernel& probe, const gpu::ProbeInputs& in,
                                         std::optional<emulator::FdpaParams> params = std::nullopt);

// The harness's tiles of a data set (harness/cases.h: make_tiles) as probe inputs: the GPU tests use
// the conform data sets that have no counterpart above (DataKind::tiny).
gpu::ProbeInputs probe_inputs(const harness::TileBatch& batch);

// A GEMM case: the operands as the kernel reads them, and as element codes for the emulator.
struct GemmCase {
  gpu::GemmArgs args;
  gpu::GemmHostOperands ops;
  std::vector<std::uint8_t> a_codes, b_codes;     // M x K and N x K element codes (one per byte)
  std::vector<std::uint8_t> sfa_codes, sfb_codes;  // M x blocks and N x blocks scale codes (linear)
};
GemmCase make_gemm_case(const gpu::GemmKernel& kernel, int m, int n, int k, gpu::ScaleLayout layout,
                        gpu::GemmOutput output, bool with_c, std::uint64_t seed, Data data);

// The emulator's D for the kernel's documented schedule (sm_90a: Hopper promotion with P = 1 and
// acc = fma(sa * sb, partial, acc); NVFP4 with each 16-block padded by 16 zeros to a k32 slot).
std::vector<std::uint32_t> emulate_gemm(const gpu::GemmKernel& kernel, const GemmCase& c);

// Comparison summary with the first few mismatches described.
struct Agreement {
  std::size_t compared = 0, mismatches = 0;
  std::string first_mismatches;
};
Agreement compare_codes(const std::vector<std::uint32_t>& gpu, const std::vector<std::uint32_t>& model,
                        std::size_t row_length, int max_reported = 5);

// Appends one JSON line to $BLOCKSCALE_GPU_REPORT when that variable is set (device runs collect
// the per-kernel agreement counts this way).
void report(const std::string& kind, const std::string& name, const std::string& data, const Agreement& a);

}  // namespace blockscale::gputest
