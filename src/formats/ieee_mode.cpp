// SPDX-License-Identifier: Apache-2.0
#include "blockscale/formats/detail/ieee_mode.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#elif !defined(__aarch64__)
#include <cfenv>
#endif

namespace blockscale::detail {

namespace {

#if defined(__x86_64__) || defined(__i386__)
// MXCSR: rounding control (bits 13-14) to nearest, FTZ (bit 15) and DAZ (bit 6) off, every
// exception masked (bits 7-12). The sticky flags (bits 0-5) are kept as found.
std::uint64_t read_mode() { return _mm_getcsr(); }
void write_mode(std::uint64_t v) { _mm_setcsr(static_cast<unsigned>(v)); }
std::uint64_t ieee(std::uint64_t v) { return (v & ~std::uint64_t{0xE040}) | 0x1F80; }
#elif defined(__aarch64__)
// FPCR (Arm ARM, "FPCR, Floating-point Control Register"): every bit that changes an IEEE
// operation's result cleared. RMode (bits 22-23) 00 is round to nearest even; FZ (24) and FZ16 (19)
// flush subnormals to zero; DN (25) replaces NaN results by the default NaN; AHP (26) selects the
// alternative half-precision format; FIZ (0), AH (1) and NEP (2) are FEAT_AFP's alternative
// behaviours (RES0 without it, so writing 0 is always allowed). The trap enables (8-12, 15) are
// cleared too: the kernels raise inexact and underflow on purpose.
constexpr std::uint64_t kFpcrNonIeee = (1u << 0) | (1u << 1) | (1u << 2) | (0x1Fu << 8) | (1u << 15) |
                                       (1u << 19) | (3u << 22) | (1u << 24) | (1u << 25) | (1u << 26);
std::uint64_t read_mode() {
  std::uint64_t v;
  asm volatile("mrs %0, fpcr" : "=r"(v));
  return v;
}
void write_mode(std::uint64_t v) { asm volatile("msr fpcr, %0" : : "r"(v)); }
std::uint64_t ieee(std::uint64_t v) { return v & ~kFpcrNonIeee; }
#else
std::uint64_t read_mode() { return static_cast<std::uint64_t>(std::fegetround()); }
void write_mode(std::uint64_t v) { std::fesetround(static_cast<int>(v)); }
std::uint64_t ieee(std::uint64_t) { return static_cast<std::uint64_t>(FE_TONEAREST); }
#endif

}  // namespace

IeeeMode::IeeeMode() : saved_(read_mode()) {
  const std::uint64_t want = ieee(saved_);
  if (want != saved_) {
    write_mode(want);
    changed_ = true;
  }
}

IeeeMode::~IeeeMode() {
  // x86: the flags raised inside the scope stay raised, as the caller's own arithmetic would leave
  // them; only the control bits go back.
#if defined(__x86_64__) || defined(__i386__)
  if (changed_) write_mode((saved_ & ~std::uint64_t{0x3F}) | (read_mode() & 0x3F));
#else
  if (changed_) write_mode(saved_);
#endif
}

}  // namespace blockscale::detail
