// SPDX-License-Identifier: Apache-2.0
// The device under test: something that runs instruction tiles and GEMM problems and returns the
// output bits. Two implementations:
//   * the GPU (make_gpu_device): blockscale::gpu's probe kernels and GEMM kernels on device 0;
//     available only in builds with CUDA, and only when a GPU is present;
//   * the emulator itself (make_emulator_device), for the CPU self-test: it computes every output
//     through a different entry point of the emulator (emulator::fdpa per output element, with
//     the table row's parameters, optionally perturbed), so that the harness's generation,
//     comparison and reporting can be exercised, and shown to catch a wrong model, without a GPU.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "blockscale/harness/target.h"

namespace blockscale::harness {

struct DeviceDescription {
  std::string kind;   // "gpu" or "emulator"
  std::string name;   // "NVIDIA H200", or what the emulator device models
  std::string compute_capability;  // "9.0"; empty for the emulator
  std::string driver;              // kernel-module version, "580.159.04"
  std::string cuda_driver;         // the driver API's CUDA version, "13.0"
  std::string cuda_runtime;        // the runtime linked in, "13.0"
  int multiprocessors = 0;
};

class Device {
 public:
  virtual ~Device() = default;
  virtual DeviceDescription describe() const = 0;
  // Every target this device knows; those it cannot run carry a skip_reason.
  virtual std::vector<Target> targets() const = 0;
  // D codes of every tile (tiles * m * n).
  virtual std::vector<std::uint32_t> run(const InstructionTarget& t, const TileBatch& batch) = 0;
  // D codes (M x N; bf16 output in the low 16 bits).
  virtual std::vector<std::uint32_t> run(const GemmTarget& t, const GemmProblem& p) = 0;
};

// What the self-test device changes, to prove that the harness notices (--perturb):
//   none             the table's parameters: the run must agree everywhere;
//   fraction_bits    F - 1 in every instruction (a near miss of the alignment width);
//   output_rounding  RZ-E8M13 <-> RZ-FP32, and RNE-FP16 outputs from an F - 2 sum;
//   c_placement      C added after the products with one RNE add instead of aligned with them;
//   promotion_fma    GEMMs: acc = fma(sa, sb * partial, acc) instead of fma(sa * sb, partial, acc);
//   output_lsb       the last bit of every 4096th output flipped (a rare, one-ulp fault);
//   zero_floor       e_zero + 1 in every instruction (the floor of e_max with C = 0: data set tiny).
enum class Perturbation : std::uint8_t { none, fraction_bits, output_rounding, c_placement, promotion_fma, output_lsb, zero_floor };
std::string to_string(Perturbation p);
std::optional<Perturbation> parse_perturbation(std::string_view s);

std::unique_ptr<Device> make_emulator_device(Perturbation p = Perturbation::none);

// The GPU device of this build, or nullptr with `why_not` saying why (built without CUDA, no
// driver, no GPU).
std::unique_ptr<Device> make_gpu_device(std::string& why_not);
// True when this build has the GPU kernels (blockscale::gpu).
bool built_with_gpu();

}  // namespace blockscale::harness
