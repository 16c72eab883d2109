// SPDX-License-Identifier: Apache-2.0
// GPU discovery, capability checks and CUDA error reporting.
#include "blockscale/gpu/device.h"

#include <cuda_runtime_api.h>

#include <cctype>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "cuda_check.h"

namespace blockscale::gpu {

Error::Error(std::string call, std::string location, int code, std::string code_name, std::string description)
    : std::runtime_error(call + " failed at " + location + ": " + code_name + ": " + description),
      call_(std::move(call)),
      location_(std::move(location)),
      code_(code),
      code_name_(std::move(code_name)) {}

namespace detail {

std::string source_location(const char* file, int line) {
  std::string f = file;
  // Report paths from the repository's gpu/ directory rather than the build machine's absolute path.
  if (const auto pos = f.rfind("/gpu/"); pos != std::string::npos) f = f.substr(pos + 1);
  return f + ":" + std::to_string(line);
}

void check_cuda(cudaError_t status, const char* call, const char* file, int line) {
  if (status == cudaSuccess) return;
  cudaGetLastError();  // clear a sticky-free launch error so the next call starts clean
  throw Error(call, source_location(file, line), static_cast<int>(status), cudaGetErrorName(status),
              cudaGetErrorString(status));
}

}  // namespace detail

std::string DeviceInfo::compute_capability_string() const {
  return std::to_string(cc_major) + "." + std::to_string(cc_minor);
}

std::string SystemInfo::version_string(int v) {
  if (v <= 0) return "none";
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

namespace {

// The NVIDIA kernel-module version ("580.159.04"); empty where the file does not exist.
std::string kernel_module_version() {
  std::ifstream f("/proc/driver/nvidia/version");
  std::string line;
  if (!f || !std::getline(f, line)) return {};
  // "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  Thu ..."
  std::istringstream words(line);
  std::string w;
  while (words >> w) {
    if (!w.empty() && std::isdigit(static_cast<unsigned char>(w[0])) && w.find('.') != std::string::npos) return w;
  }
  return {};
}

DeviceInfo describe(int index) {
  cudaDeviceProp p{};
  BLOCKSCALE_CUDA(cudaGetDeviceProperties(&p, index));
  DeviceInfo d;
  d.index = index;
  d.name = p.name;
  d.cc_major = p.major;
  d.cc_minor = p.minor;
  d.multiprocessors = p.multiProcessorCount;
  d.global_memory_bytes = p.totalGlobalMem;
  d.l2_cache_bytes = static_cast<std::size_t>(p.l2CacheSize);
  d.shared_memory_per_block_optin = p.sharedMemPerBlockOptin;
  int clock = 0;
  if (cudaDeviceGetAttribute(&clock, cudaDevAttrClockRate, index) == cudaSuccess) d.sm_clock_khz = clock;
  char bus[32] = {};
  if (cudaDeviceGetPCIBusId(bus, sizeof bus, index) == cudaSuccess) d.pci_bus_id = bus;
  cudaGetLastError();
  return d;
}

}  // namespace

SystemInfo query_system() {
  // The devices of a process do not change, and cudaGetDeviceProperties costs about a millisecond,
  // far more than a kernel launch: query once, on first use.
  static const SystemInfo cached = [] {
    SystemInfo s;
    cudaRuntimeGetVersion(&s.cuda_runtime_version);
    if (cudaDriverGetVersion(&s.cuda_driver_api_version) != cudaSuccess) s.cuda_driver_api_version = 0;
    s.driver_version = kernel_module_version();
    int count = 0;
    const cudaError_t st = cudaGetDeviceCount(&count);
    if (st != cudaSuccess) {
      cudaGetLastError();
      s.reason = std::string("cudaGetDeviceCount failed: ") + cudaGetErrorName(st) + ": " + cudaGetErrorString(st);
      return s;
    }
    if (count == 0) {
      s.reason = "no CUDA device";
      return s;
    }
    // query_system never throws: a device that cannot be described stays in the list (so that
    // indices remain CUDA's) with capability 0.0, which no kernel runs on, and the error as its name.
    for (int i = 0; i < count; ++i) {
      try {
        s.devices.push_back(describe(i));
      } catch (const Error& e) {
        DeviceInfo d;
        d.index = i;
        d.name = std::string("(not usable: ") + e.what() + ")";
        s.devices.push_back(d);
      }
    }
    return s;
  }();
  return cached;
}

DeviceInfo device_info(int index) {
  const SystemInfo s = query_system();
  if (s.devices.empty()) throw Unavailable("no CUDA GPU is present (" + s.reason + ")");
  if (index < 0 || index >= static_cast<int>(s.devices.size())) {
    throw Unavailable("no CUDA device " + std::to_string(index) + ": " + std::to_string(s.devices.size()) +
                      " present");
  }
  return s.devices[static_cast<std::size_t>(index)];
}

std::string why_unavailable(std::string_view kernel, Arch arch, int index) {
  const int cc = arch_compute_capability(arch);
  const std::string need = "blockscale gpu kernel '" + std::string(kernel) + "' needs " +
                           std::string(arch_name(arch)) + " (compute capability " + std::to_string(cc / 10) + "." +
                           std::to_string(cc % 10) + ")";
  const SystemInfo s = query_system();
  if (s.devices.empty()) return need + ", but no CUDA GPU is present (" + s.reason + ")";
  if (index < 0 || index >= static_cast<int>(s.devices.size())) {
    return need + ", but there is no device " + std::to_string(index);
  }
  const DeviceInfo& d = s.devices[static_cast<std::size_t>(index)];
  if (runs_on(arch, d)) return {};
  return need + "; device " + std::to_string(index) + " is " + d.name + " (compute capability " +
         d.compute_capability_string() + ")";
}

void require(std::string_view kernel, Arch arch, int index) {
  const std::string why = why_unavailable(kernel, arch, index);
  if (!why.empty()) throw Unavailable(why);
}

}  // namespace blockscale::gpu
