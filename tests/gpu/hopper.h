// SPDX-License-Identifier: Apache-2.0
// Skips a test, with the reason, unless device 0 is a Hopper GPU (compute capability 9.0).
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "blockscale/gpu/device.h"

namespace blockscale::gputest {

// Empty when device 0 runs sm_90a code; otherwise why not.
inline std::string why_no_hopper() {
  const gpu::SystemInfo s = gpu::query_system();
  if (s.devices.empty()) return "no CUDA GPU is present (" + s.reason + "); these tests need an H100/H200";
  const gpu::DeviceInfo& d = s.devices[0];
  if (d.compute_capability() != 90) {
    return "device 0 is " + d.name + " (compute capability " + d.compute_capability_string() +
           "); the sm_90a kernels need 9.0";
  }
  return {};
}

#define BLOCKSCALE_REQUIRE_HOPPER()                                            \
  do {                                                                         \
    const std::string why_ = ::blockscale::gputest::why_no_hopper();           \
    if (!why_.empty()) GTEST_SKIP() << why_;                                   \
  } while (0)

}  // namespace blockscale::gputest
