// SPDX-License-Identifier: Apache-2.0
// The 64-bit Mersenne Twister of std::mt19937_64, draw for draw, with jump-ahead.
//
// `blockscale gemm` defines its built-in data by one std::mt19937_64 stream from --seed. The
// standard library can only walk that stream (discard(n) is n steps), so the data were generated
// by one thread. Mt19937_64(seed, skip) is the engine std::mt19937_64(seed) becomes after
// discard(skip), reached in O(log skip) steps on polynomials over GF(2) (Haramoto, Matsumoto,
// Nishimura, L'Ecuyer, Panneton, "Efficient jump ahead for F2-linear random number generators",
// INFORMS Journal on Computing 20(3), 2008): each thread jumps to its share of the one stream, and
// the data stay the same bits on every thread count.
#pragma once

#include <array>
#include <cstdint>

namespace blockscale::cli {

class Mt19937_64 {
 public:
  static constexpr int kWords = 312;  // n of MT19937-64 ([rand.predef]: mt19937_64)

  // The engine that std::mt19937_64(seed) is after discard(skip): its next draw is draw number
  // `skip` (from 0) of that stream.
  explicit Mt19937_64(std::uint64_t seed, std::uint64_t skip = 0);

  std::uint64_t operator()() {
    if (next_ == kWords) twist();
    return temper(state_[next_++]);
  }

 private:
  static std::uint64_t temper(std::uint64_t y) {
    // [rand.eng.mers]/4 with mt19937_64's u, d, s, b, t, c, l.
    y ^= (y >> 29) & 0x5555555555555555u;
    y ^= (y << 17) & 0x71D67FFFEDA60000u;
    y ^= (y << 37) & 0xFFF7EEE000000000u;
    return y ^ (y >> 43);
  }
  void twist();

  // The last kWords words of the stream's recurrence; state_[next_] is the next one to temper.
  std::array<std::uint64_t, kWords> state_;
  int next_ = kWords;
};

}  // namespace blockscale::cli
