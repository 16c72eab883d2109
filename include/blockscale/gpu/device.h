// SPDX-License-Identifier: Apache-2.0
// GPU discovery and the errors of blockscale::gpu. Includable without the CUDA headers.
//
// Every kernel in blockscale::gpu is built for one architecture-specific target (`sm_90a` or
// `sm_100a`). Code for an "a" target runs only on GPUs of exactly that compute capability (CUDA
// Programming Guide, "Feature Availability": arch-specific features are not forward compatible),
// so an sm_90a kernel needs compute capability 9.0 and an sm_100a kernel needs 10.0. Launching
// one elsewhere is refused with an Unavailable error that names the kernel, what it needs, and
// what is present, before any CUDA launch is attempted.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace blockscale::gpu {

// A failed CUDA runtime or driver call (or kernel launch). what() reads
// "<call> failed at <file>:<line>: <error name>: <error string>".
class Error : public std::runtime_error {
 public:
  Error(std::string call, std::string location, int code, std::string code_name, std::string description);
  const std::string& call() const { return call_; }          // e.g. "cudaMemcpy(...)" or a kernel name
  const std::string& location() const { return location_; }  // "gpu/probe_sm90.cu:123"
  int code() const { return code_; }                         // cudaError_t / CUresult value
  const std::string& code_name() const { return code_name_; }

 private:
  std::string call_, location_;
  int code_;
  std::string code_name_;
};

// A kernel cannot run here: there is no CUDA GPU, or its compute capability is not the one the
// kernel's target needs. what() names the kernel, the needed target and capability, and the GPU.
class Unavailable : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The architecture-specific targets blockscale compiles for.
enum class Arch : std::uint8_t { sm_90a, sm_100a };

constexpr std::string_view arch_name(Arch a) { return a == Arch::sm_90a ? "sm_90a" : "sm_100a"; }
// The compute capability (major*10 + minor) on which code for the target runs.
constexpr int arch_compute_capability(Arch a) { return a == Arch::sm_90a ? 90 : 100; }

struct DeviceInfo {
  int index = 0;
  std::string name;              // "NVIDIA H100 80GB HBM3"
  int cc_major = 0, cc_minor = 0;
  int multiprocessors = 0;
  std::size_t global_memory_bytes = 0;
  std::size_t l2_cache_bytes = 0;
  std::size_t shared_memory_per_block_optin = 0;
  int sm_clock_khz = 0;          // maximum SM clock (cudaDevAttrClockRate)
  std::string pci_bus_id;

  int compute_capability() const { return cc_major * 10 + cc_minor; }
  std::string compute_capability_string() const;  // "9.0"
};

// What the system offers. Never throws: without a driver or GPU, `devices` is empty and `reason`
// says why (the CUDA error of cudaGetDeviceCount, or "no CUDA device"). A device that cannot be
// described is listed at its index with capability 0.0 (no kernel runs on it) and the error in
// its name, "(not usable: ...)".
struct SystemInfo {
  std::vector<DeviceInfo> devices;
  std::string reason;                // why `devices` is empty; empty when it is not
  int cuda_driver_api_version = 0;   // cudaDriverGetVersion: 13000 = CUDA 13.0 (0 when no driver)
  int cuda_runtime_version = 0;      // cudaRuntimeGetVersion of the runtime linked in
  std::string driver_version;        // kernel-module version, "580.159.04" (Linux: /proc/driver/nvidia/version)

  static std::string version_string(int cuda_version);  // 13000 -> "13.0"
};

// Queried on first use and kept for the process (cudaGetDeviceProperties costs about a
// millisecond, more than a kernel launch).
SystemInfo query_system();

// The device `index`, or Unavailable("no CUDA GPU is present: ...") when there is none.
DeviceInfo device_info(int index = 0);

// True when code for `arch` runs on `device`.
inline bool runs_on(Arch arch, const DeviceInfo& device) {
  return device.compute_capability() == arch_compute_capability(arch);
}

// Throws Unavailable unless `kernel` (built for `arch`) can run on device `index`, e.g.
// "blockscale gpu kernel 'sm_100a tcgen05.mma...' needs sm_100a (compute capability 10.0); device 0
//  is NVIDIA H100 80GB HBM3 (compute capability 9.0)".
void require(std::string_view kernel, Arch arch, int index = 0);

// Why `kernel` cannot run on device `index`, or an empty string when it can.
std::string why_unavailable(std::string_view kernel, Arch arch, int index = 0);

}  // namespace blockscale::gpu
