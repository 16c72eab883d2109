// SPDX-License-Identifier: Apache-2.0
// The thread's floating-point mode as a caller may leave it: a program linked with -ffast-math
// starts with subnormals flushed (x86: MXCSR FTZ and DAZ; AArch64: FPCR FZ, FZ16), and any caller
// may have changed the rounding direction (here toward zero) or, on AArch64, asked for default NaNs
// (FPCR DN). The library's bits must not depend on it (tests/emulator/fast_path_test.cpp).
#pragma once

#include <cfenv>
#include <cstdint>
#include <vector>

#if defined(_OPENMP)
#include <omp.h>
#endif

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace blockscale::test {

// The thread's floating-point control state as one word: the MXCSR's control bits on x86 (not its
// sticky exception flags, bits 0-5, which any arithmetic may raise), the FPCR on AArch64 (whose
// flags live in the FPSR), else the rounding direction.
inline std::uint64_t fp_control() {
#if defined(__x86_64__) || defined(__i386__)
  return _mm_getcsr() & ~0x3Fu;
#elif defined(__aarch64__)
  std::uint64_t v;
  asm volatile("mrs %0, fpcr" : "=r"(v));
  return v;
#else
  return static_cast<std::uint64_t>(std::fegetround());
#endif
}

namespace fp_mode_detail {
inline void set_hostile() {
  std::fesetround(FE_TOWARDZERO);
#if defined(__x86_64__) || defined(__i386__)
  _mm_setcsr(_mm_getcsr() | 0x8040u);  // FTZ (bit 15), DAZ (bit 6)
#elif defined(__aarch64__)
  const std::uint64_t v = fp_control() | (1u << 19) | (1u << 24) | (1u << 25);  // FZ16, FZ, DN
  asm volatile("msr fpcr, %0" : : "r"(v));
#endif
}
struct Saved {
  int round = FE_TONEAREST;
  std::uint64_t control = 0;
};
inline Saved save() { return {std::fegetround(), fp_control()}; }
inline void restore(const Saved& s) {
#if defined(__x86_64__) || defined(__i386__)
  _mm_setcsr(static_cast<unsigned>(s.control) | (_mm_getcsr() & 0x3Fu));
#elif defined(__aarch64__)
  asm volatile("msr fpcr, %0" : : "r"(s.control));
#endif
  std::fesetround(s.round);
}
}  // namespace fp_mode_detail

// Sets the caller's worst case for the scope: round toward zero and subnormals flushed (inputs and
// results) where the CPU can, on this thread and on every thread of the OpenMP pool (each thread
// has its own mode: a process started in such a mode has it on every thread); restores them on
// destruction.
class HostileFpMode {
 public:
  HostileFpMode() {
#if defined(_OPENMP)
    pool_.resize(static_cast<std::size_t>(omp_get_max_threads()));
#pragma omp parallel num_threads(static_cast<int>(pool_.size()))
    {
      const auto t = static_cast<std::size_t>(omp_get_thread_num());
      if (t != 0) {
        pool_[t] = fp_mode_detail::save();
        fp_mode_detail::set_hostile();
      }
    }
#endif
    mine_ = fp_mode_detail::save();
    fp_mode_detail::set_hostile();
  }
  ~HostileFpMode() {
    fp_mode_detail::restore(mine_);
#if defined(_OPENMP)
#pragma omp parallel num_threads(static_cast<int>(pool_.size()))
    {
      const auto t = static_cast<std::size_t>(omp_get_thread_num());
      if (t != 0) fp_mode_detail::restore(pool_[t]);
    }
#endif
  }
  HostileFpMode(const HostileFpMode&) = delete;
  HostileFpMode& operator=(const HostileFpMode&) = delete;

 private:
  fp_mode_detail::Saved mine_;
#if defined(_OPENMP)
  std::vector<fp_mode_detail::Saved> pool_;
#endif
};

}  // namespace blockscale::test
