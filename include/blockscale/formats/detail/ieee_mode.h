// SPDX-License-Identifier: Apache-2.0
// The host floating-point mode that blockscale's float and double arithmetic relies on.
#pragma once

#include <cstdint>

namespace blockscale::detail {

// Sets the current thread's floating-point mode to IEEE 754's default for the scope: round to
// nearest even, subnormals kept (no flush-to-zero, no denormals-are-zero), no traps; restores the
// caller's mode on destruction. A caller may run in another mode: a program or library linked with
// -ffast-math starts with subnormals flushed (crtfastmath), torch.set_flush_denormal(True) sets
// FTZ and DAZ, and any code may change the rounding direction; under them a quantizer reads
// subnormal inputs as zero and a host fma rounds otherwise. Every entry point of the library that
// does host float arithmetic on values holds one (and so does each OpenMP thread's share of the
// work, since each thread has its own mode). x86: the MXCSR; AArch64: the FPCR; elsewhere the
// rounding direction through <cfenv>. Where the mode already is the default, nothing is written.
class IeeeMode {
 public:
  IeeeMode();
  ~IeeeMode();
  IeeeMode(const IeeeMode&) = delete;
  IeeeMode& operator=(const IeeeMode&) = delete;

 private:
  std::uint64_t saved_ = 0;
  bool changed_ = false;
};

}  // namespace blockscale::detail
