// SPDX-License-Identifier: Apache-2.0
#include "mt19937_64.h"

#include <algorithm>
#include <array>
#include <bit>
#include <stdexcept>
#include <string>
#include <vector>

namespace blockscale::cli {
namespace {

// MT19937-64's parameters ([rand.predef]): w = 64, n = 312, m = 156, r = 31, a, f.
constexpr int kShift = 156;
constexpr std::uint64_t kMatrixA = 0xB5026F5AA96619E9u;
constexpr std::uint64_t kUpper = ~std::uint64_t{0} << 31, kLower = ~kUpper;
constexpr std::uint64_t kSeedMultiplier = 6364136223846793005u;

// The recurrence ([rand.eng.mers]/3): word k + n of the stream from words k, k + 1 and k + m.
inline std::uint64_t recurrence(std::uint64_t wk, std::uint64_t wk1, std::uint64_t wkm) {
  const std::uint64_t y = (wk & kUpper) | (wk1 & kLower);
  return wkm ^ (y >> 1) ^ ((y & 1) ? kMatrixA : 0);
}

// The state is the upper 33 bits of the oldest word and the 311 words after it: 19937 bits, on
// which one draw acts linearly with a primitive characteristic polynomial P of that degree.
constexpr int kDegree = 64 * (Mt19937_64::kWords - 1) + 33;
constexpr int kPolyWords = (kDegree + 64) / 64;  // bits 0..kDegree: 312 words

using Poly = std::vector<std::uint64_t>;

bool bit(const Poly& p, std::int64_t i) { return (p[static_cast<std::size_t>(i >> 6)] >> (i & 63)) & 1; }
void flip(Poly& p, std::int64_t i) { p[static_cast<std::size_t>(i >> 6)] ^= std::uint64_t{1} << (i & 63); }

// 64 bits of p from bit position pos on (zeros past the end).
std::uint64_t bits64(const Poly& p, std::int64_t pos) {
  const auto q = static_cast<std::size_t>(pos >> 6);
  const int s = static_cast<int>(pos & 63);
  const std::uint64_t lo = q < p.size() ? p[q] : 0, hi = q + 1 < p.size() ? p[q + 1] : 0;
  return s ? (lo >> s) | (hi << (64 - s)) : lo;
}

// The stream's words 0 .. count - 1 from the seeded state ([rand.eng.mers]/8: x_i = f (x_{i-1}
// xor (x_{i-1} >> 62)) + i), by the recurrence.
std::vector<std::uint64_t> stream_words(std::uint64_t seed, std::size_t count) {
  std::vector<std::uint64_t> w(std::max<std::size_t>(count, Mt19937_64::kWords));
  w[0] = seed;
  for (std::size_t i = 1; i < Mt19937_64::kWords; ++i)
    w[i] = kSeedMultiplier * (w[i - 1] ^ (w[i - 1] >> 62)) + i;
  for (std::size_t k = 0; k + Mt19937_64::kWords < w.size(); ++k) {
    w[k + Mt19937_64::kWords] = recurrence(w[k], w[k + 1], w[k + kShift]);
  }
  return w;
}

// P, found by the Berlekamp-Massey algorithm (Massey, "Shift-register synthesis and BCH
// decoding", IEEE Trans. Inf. Theory 15(1), 1969) from the top bit of 2 deg + 64 stream words: a
// nonzero linear function of the state has P, which is irreducible, as its minimal polynomial.
Poly characteristic_polynomial() {
  constexpr std::int64_t n = 2 * static_cast<std::int64_t>(kDegree) + 64;
  const std::vector<std::uint64_t> w = stream_words(5489u, static_cast<std::size_t>(n));
  const std::size_t words = static_cast<std::size_t>(n / 64 + 4);
  // Reversed: bit t of rev is s_{n-1-t}, so that s_N, s_{N-1}, ... s_{N-L} are consecutive bits.
  Poly rev(words, 0);
  for (std::int64_t t = 0; t < n; ++t)
    if (w[static_cast<std::size_t>(n - 1 - t)] >> 63) flip(rev, t);
  // Connection polynomial C (s_N = sum_{i=1..L} C_i s_{N-i}) and the previous one, B.
  Poly c(words, 0), b(words, 0), t;
  c[0] = b[0] = 1;
  std::int64_t length = 0, gap = 1;
  for (std::int64_t N = 0; N < n; ++N) {
    std::uint64_t acc = 0;
    for (std::int64_t i = 0; i <= length; i += 64)
      acc ^= c[static_cast<std::size_t>(i >> 6)] & bits64(rev, n - 1 - N + i);
    if ((std::popcount(acc) & 1) == 0) {
      ++gap;
      continue;
    }
    const bool grow = 2 * length <= N;
    if (grow) t = c;
    // C ^= B x^gap, over B's words (deg B <= N).
    const auto q = static_cast<std::size_t>(gap >> 6);
    const int s = static_cast<int>(gap & 63);
    for (std::size_t j = 0; j <= static_cast<std::size_t>(N >> 6) && j + q + 1 < words; ++j) {
      c[j + q] ^= b[j] << s;
      if (s) c[j + q + 1] ^= b[j] >> (64 - s);
    }
    if (grow) {
      length = N + 1 - length;
      b = t;
      gap = 1;
    } else {
      ++gap;
    }
  }
  if (length != kDegree || !bit(c, length)) {
    throw std::logic_error("Mt19937_64: the characteristic polynomial came out of degree " +
                           std::to_string(length) + ", not 19937");
  }
  Poly p(kPolyWords, 0);  // P_j = C_{L-j}: the reciprocal of C
  for (std::int64_t j = 0; j <= length; ++j)
    if (bit(c, length - j)) flip(p, j);
  return p;
}

// Residues modulo P: polynomials of degree < kDegree in kPolyWords words.
class Residues {
 public:
  Residues() : p_(characteristic_polynomial()) {
    for (int s = 0; s < 64; ++s) {
      Poly& ps = shifted_[static_cast<std::size_t>(s)];
      ps.assign(kPolyWords + 1, 0);
      for (std::size_t j = 0; j < static_cast<std::size_t>(kPolyWords); ++j) {
        ps[j] ^= p_[j] << s;
        if (s) ps[j + 1] ^= p_[j] >> (64 - s);
      }
    }
  }

  // x^e mod P, by squaring and multiplying by x from the top bit of e down.
  Poly power_of_x(std::uint64_t e) const {
    Poly r(kPolyWords, 0), square(2 * kPolyWords, 0);
    r[0] = 1;
    for (int i = 63 - std::countl_zero(e); i >= 0; --i) {
      // Over GF(2) squaring spreads the bits: (sum r_j x^j)^2 = sum r_j x^(2j).
      std::fill(square.begin(), square.end(), 0);
      for (std::int64_t j = 0; j < kDegree; ++j)
        if (bit(r, j)) flip(square, 2 * j);
      reduce(square);
      std::copy_n(square.begin(), kPolyWords, r.begin());
      if ((e >> i) & 1) {
        for (std::size_t j = kPolyWords - 1; j > 0; --j) r[j] = (r[j] << 1) | (r[j - 1] >> 63);
        r[0] <<= 1;
        if (bit(r, kDegree))
          for (std::size_t j = 0; j < static_cast<std::size_t>(kPolyWords); ++j) r[j] ^= p_[j];
      }
    }
    return r;
  }

 private:
  // Clears every bit at kDegree or above, from the top, by adding P x^(b - deg).
  void reduce(Poly& v) const {
    for (std::int64_t q = static_cast<std::int64_t>(v.size()) - 1; q >= kDegree / 64; --q) {
      for (;;) {
        const std::uint64_t word = v[static_cast<std::size_t>(q)];
        if (!word) break;
        const std::int64_t top = q * 64 + 63 - std::countl_zero(word);
        if (top < kDegree) break;
        const std::int64_t s = top - kDegree;
        const Poly& ps = shifted_[static_cast<std::size_t>(s & 63)];
        std::uint64_t* out = v.data() + (s >> 6);
        for (std::size_t j = 0; j < ps.size(); ++j) out[j] ^= ps[j];
      }
    }
  }

  Poly p_;
  std::array<Poly, 64> shifted_;  // P x^s, s = 0..63
};

}  // namespace

Mt19937_64::Mt19937_64(std::uint64_t seed, std::uint64_t skip) {
  // Short skips walk: below about 2^16 draws that is cheaper than the polynomial.
  constexpr std::uint64_t kWalkLimit = 1u << 16;
  if (skip < kWalkLimit) {
    const std::vector<std::uint64_t> w = stream_words(seed, kWords);
    std::copy(w.begin(), w.end(), state_.begin());
    for (std::uint64_t i = 0; i < skip; ++i) (*this)();
    return;
  }
  // After `skip` draws the state is T^skip S_0 = (x^skip mod P)(T) S_0, since P(T) = 0: with
  // x^skip mod P = sum c_i x^i, word j of the new window is the sum of the stream's words i + j
  // over the c_i = 1 (each word is a linear function of the state it starts). The window's first
  // word is kept whole though only its upper 33 bits are state; the twist reads no others.
  static const Residues residues;
  const Poly c = residues.power_of_x(skip);
  const std::vector<std::uint64_t> w = stream_words(seed, static_cast<std::size_t>(kDegree) + kWords);
  state_.fill(0);
  for (std::int64_t i = 0; i < kDegree; ++i) {
    if (!bit(c, i)) continue;
    const std::uint64_t* from = w.data() + i;
    for (std::size_t j = 0; j < static_cast<std::size_t>(kWords); ++j) state_[j] ^= from[j];
  }
  next_ = kWords;
}

void Mt19937_64::twist() {
  // In place ([rand.eng.mers]/3): from index n - m on, word i + m of the recurrence is the new
  // word i + m - n, already written; the last word reads the new word 0.
  std::uint64_t* x = state_.data();
  int i = 0;
  for (; i < kWords - kShift; ++i) x[i] = recurrence(x[i], x[i + 1], x[i + kShift]);
  for (; i < kWords - 1; ++i) x[i] = recurrence(x[i], x[i + 1], x[i + kShift - kWords]);
  x[i] = recurrence(x[i], x[0], x[i + kShift - kWords]);
  next_ = 0;
}

}  // namespace blockscale::cli
