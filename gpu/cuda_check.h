// SPDX-License-Identifier: Apache-2.0
// Internal: checked CUDA calls and device buffers for blockscale::gpu's host code.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <string>
#include <utility>

#include "blockscale/gpu/device.h"

namespace blockscale::gpu::detail {

// "gpu/probe.cpp:42" from __FILE__, whatever directory the build used.
std::string source_location(const char* file, int line);

// Throws gpu::Error("<call> failed at <file>:<line>: <name>: <description>") unless ok.
void check_cuda(cudaError_t status, const char* call, const char* file, int line);

}  // namespace blockscale::gpu::detail

// Every CUDA runtime call goes through this; the error names the call text and where it was made.
#define BLOCKSCALE_CUDA(call) ::blockscale::gpu::detail::check_cuda((call), #call, __FILE__, __LINE__)
// After every kernel launch: the launch error (bad configuration, no kernel image) at once, and
// any fault in the kernel at the synchronisation that follows, both naming the kernel.
#define BLOCKSCALE_CUDA_LAUNCHED(kernel_name) \
  ::blockscale::gpu::detail::check_cuda(cudaGetLastError(), kernel_name, __FILE__, __LINE__)

namespace blockscale::gpu::detail {

// Owns one cudaMalloc allocation on the current device.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
    if (bytes_ > 0) BLOCKSCALE_CUDA(cudaMalloc(&ptr_, bytes_));
  }
  ~DeviceBuffer() {
    if (ptr_) cudaFree(ptr_);  // no throw from a destructor; a failing free leaks at worst
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(std::exchange(o.ptr_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    std::swap(ptr_, o.ptr_);
    std::swap(bytes_, o.bytes_);
    return *this;
  }
  void* get() const { return ptr_; }
  template <class T>
  T* as() const {
    return static_cast<T*>(ptr_);
  }
  std::size_t bytes() const { return bytes_; }
  void upload(const void* src, std::size_t n) { BLOCKSCALE_CUDA(cudaMemcpy(ptr_, src, n, cudaMemcpyHostToDevice)); }
  void download(void* dst, std::size_t n) const {
    BLOCKSCALE_CUDA(cudaMemcpy(dst, ptr_, n, cudaMemcpyDeviceToHost));
  }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

// Makes `index` the current device for the scope (restores the previous one).
class DeviceScope {
 public:
  explicit DeviceScope(int index) {
    BLOCKSCALE_CUDA(cudaGetDevice(&previous_));
    if (previous_ != index) BLOCKSCALE_CUDA(cudaSetDevice(index));
  }
  ~DeviceScope() { cudaSetDevice(previous_); }
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

 private:
  int previous_ = 0;
};

}  // namespace blockscale::gpu::detail
