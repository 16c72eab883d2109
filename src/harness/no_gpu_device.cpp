// SPDX-License-Identifier: Apache-2.0
// Builds without CUDA have no GPU device: `blockscale conform` says so and exits with status 3.
#include "blockscale/harness/device.h"
#include "blockscale/harness/external.h"

namespace blockscale::harness {

bool built_with_gpu() { return false; }

std::unique_ptr<Device> make_gpu_device(std::string& why_not) {
  why_not = "this blockscale was built without CUDA (BLOCKSCALE_ENABLE_CUDA=OFF or no nvcc), so it has no GPU kernels";
  return nullptr;
}

std::vector<ExternalRun> run_cublaslt(std::uint64_t, std::string& why_not) {
  why_not = "this blockscale was built without CUDA, so it cannot call cuBLASLt";
  return {};
}

}  // namespace blockscale::harness
