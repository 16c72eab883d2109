// SPDX-License-Identifier: Apache-2.0
// Preloaded (LD_PRELOAD) into a test process, this sets the floating-point mode of a process that
// loaded a library built with -ffast-math (crtfastmath) or called torch.set_flush_denormal(True),
// before anything else runs: subnormals flushed (x86: MXCSR FTZ and DAZ; AArch64: FPCR FZ), and
// round toward zero. Every thread created later inherits it (test_fp_mode.py).
#include <cfenv>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace {

__attribute__((constructor)) void set_hostile_mode() {
  std::fesetround(FE_TOWARDZERO);
#if defined(__x86_64__) || defined(__i386__)
  _mm_setcsr(_mm_getcsr() | 0x8040u);  // FTZ (bit 15), DAZ (bit 6)
#elif defined(__aarch64__)
  unsigned long fpcr;
  asm volatile("mrs %0, fpcr" : "=r"(fpcr));
  fpcr |= 1ul << 24;  // FZ
  asm volatile("msr fpcr, %0" : : "r"(fpcr));
#endif
}

}  // namespace
