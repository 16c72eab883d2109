// SPDX-License-Identifier: Apache-2.0
#include "reference_model.h"

#include <algorithm>
#include <bit>
#include <climits>
#include <cmath>
#include <optional>
#include <stdexcept>
#include <vector>

#include "blockscale/formats/convert.h"
#include "blockscale/formats/presets.h"

namespace blockscale::emulator::testing {

namespace {

// ---- A signed big integer: magnitude in 32-bit limbs, little-endian, no leading zero limbs.
class BigInt {
 public:
  BigInt() = default;
  explicit BigInt(std::uint64_t m, bool neg = false) : neg_(neg) {
    while (m != 0) {
      mag_.push_back(static_cast<std::uint32_t>(m));
      m >>= 32;
    }
    if (mag_.empty()) neg_ = false;
  }
  bool zero() const { return mag_.empty(); }
  bool negative() const { return neg_; }
  BigInt abs() const {
    BigInt r = *this;
    r.neg_ = false;
    return r;
  }
  BigInt negated() const {
    BigInt r = *this;
    if (!r.zero()) r.neg_ = !r.neg_;
    return r;
  }
  // Number of significant bits of the magnitude (0 for zero).
  int bit_length() const {
    if (mag_.empty()) return 0;
    return static_cast<int>(mag_.size() * 32) - std::countl_zero(mag_.back());
  }
  bool bit(int i) const {
    const std::size_t limb = static_cast<std::size_t>(i) / 32;
    return limb < mag_.size() && ((mag_[limb] >> (i % 32)) & 1u);
  }
  // Any bit below position n set?
  bool any_below(int n) const {
    for (int i = 0; i < n; ++i) {
      if (bit(i)) return true;
    }
    return false;
  }
  BigInt shl(int n) const {
    BigInt r;
    r.neg_ = neg_;
    r.mag_.assign(static_cast<std::size_t>(n / 32), 0);
    std::uint32_t carry = 0;
    const int s = n % 32;
    for (std::uint32_t limb : mag_) {
      r.mag_.push_back(s == 0 ? limb : (limb << s) | carry);
      carry = s == 0 ? 0 : limb >> (32 - s);
    }
    if (carry != 0) r.mag_.push_back(carry);
    r.trim();
    return r;
  }
  // floor(|x| / 2^n) with x's sign (truncation toward zero of the value).
  BigInt shr_toward_zero(int n) const {
    BigInt r;
    r.neg_ = neg_;
    const std::size_t skip = static_cast<std::size_t>(n / 32);
    const int s = n % 32;
    for (std::size_t i = skip; i < mag_.size(); ++i) {
      const std::uint64_t lo = mag_[i];
      const std::uint64_t hi = i + 1 < mag_.size() ? mag_[i + 1] : 0;
      r.mag_.push_back(static_cast<std::uint32_t>(((hi << 32) | lo) >> s));
    }
    r.trim();
    return r;
  }
  friend int compare_magnitude(const BigInt& x, const BigInt& y) {
    if (x.mag_.size() != y.mag_.size()) return x.mag_.size() < y.mag_.size() ? -1 : 1;
    for (std::size_t i = x.mag_.size(); i-- > 0;) {
      if (x.mag_[i] != y.mag_[i]) return x.mag_[i] < y.mag_[i] ? -1 : 1;
    }
    return 0;
  }
  friend BigInt operator+(const BigInt& x, const BigInt& y) {
    if (x.neg_ == y.neg_) {
      BigInt r = add_magnitudes(x, y);
      r.neg_ = x.neg_;
      r.trim();
      return r;
    }
    const int c = compare_magnitude(x, y);
    if (c == 0) return BigInt();
    BigInt r = c > 0 ? sub_magnitudes(x, y) : sub_magnitudes(y, x);
    r.neg_ = c > 0 ? x.neg_ : y.neg_;
    r.trim();
    return r;
  }
  friend BigInt operator*(const BigInt& x, const BigInt& y) {
    BigInt r;
    r.mag_.assign(x.mag_.size() + y.mag_.size(), 0);
    for (std::size_t i = 0; i < x.mag_.size(); ++i) {
      std::uint64_t carry = 0;
      for (std::size_t j = 0; j < y.mag_.size(); ++j) {
        const std::uint64_t t = static_cast<std::uint64_t>(x.mag_[i]) * y.mag_[j] + r.mag_[i + j] + carry;
        r.mag_[i + j] = static_cast<std::uint32_t>(t);
        carry = t >> 32;
      }
      r.mag_[i + y.mag_.size()] = static_cast<std::uint32_t>(carry);
    }
    r.neg_ = x.neg_ != y.neg_;
    r.trim();
    return r;
  }
  std::uint64_t low64() const {
    std::uint64_t v = 0;
    for (std::size_t i = std::min<std::size_t>(mag_.size(), 2); i-- > 0;) v = (v << 32) | mag_[i];
    return v;
  }

 private:
  static BigInt add_magnitudes(const BigInt& x, const BigInt& y) {
    BigInt r;
    std::uint64_t carry = 0;
    for (std::size_t i = 0; i < std::max(x.mag_.size(), y.mag_.size()); ++i) {
      const std::uint64_t t = carry + (i < x.mag_.size() ? x.mag_[i] : 0) + (i < y.mag_.size() ? y.mag_[i] : 0);
      r.mag_.push_back(static_cast<std::uint32_t>(t));
      carry = t >> 32;
    }
    if (carry != 0) r.mag_.push_back(static_cast<std::uint32_t>(carry));
    return r;
  }
  static BigInt sub_magnitudes(const BigInt& x, const BigInt& y) {  // |x| >= |y|
    BigInt r;
    std::int64_t borrow = 0;
    for (std::size_t i = 0; i < x.mag_.size(); ++i) {
      std::int64_t t = static_cast<std::int64_t>(x.mag_[i]) - (i < y.mag_.size() ? y.mag_[i] : 0) - borrow;
      borrow = t < 0 ? 1 : 0;
      if (t < 0) t += std::int64_t(1) << 32;
      r.mag_.push_back(static_cast<std::uint32_t>(t));
    }
    return r;
  }
  void trim() {
    while (!mag_.empty() && mag_.back() == 0) mag_.pop_back();
    if (mag_.empty()) neg_ = false;
  }
  bool neg_ = false;
  std::vector<std::uint32_t> mag_;
};

// An exact binary number m * 2^e (m a big integer).
struct Dyadic {
  BigInt m;
  int e = 0;
  bool zero() const { return m.zero(); }
  bool negative() const { return m.negative(); }
};

Dyadic exact(double x) {
  if (x == 0) return {};
  int e;
  const double frac = std::frexp(std::fabs(x), &e);  // |x| = frac * 2^e, frac in [0.5, 1)
  return {BigInt(static_cast<std::uint64_t>(std::ldexp(frac, 53)), x < 0), e - 53};
}

Dyadic mul(const Dyadic& x, const Dyadic& y) { return {x.m * y.m, x.e + y.e}; }

Dyadic add(const Dyadic& x, const Dyadic& y) {
  if (x.zero()) return y;
  if (y.zero()) return x;
  const int e = std::min(x.e, y.e);
  return {x.m.shl(x.e - e) + y.m.shl(y.e - e), e};
}

bool same_value(const Dyadic& x, const Dyadic& y) { return add(x, {y.m.negated(), y.e}).zero(); }

// floor(log2 |v|) of a nonzero value.
int log2_floor(const Dyadic& v) { return v.m.bit_length() - 1 + v.e; }

// The value truncated toward zero to a multiple of 2^q.
Dyadic truncate_to(const Dyadic& v, int q) {
  if (v.zero() || v.e >= q) return v;
  return {v.m.shr_toward_zero(q - v.e), q};
}

// floor(|v| / 2^q) as a big integer.
BigInt floor_units(const Dyadic& v, int q) {
  return v.e >= q ? v.m.abs().shl(v.e - q) : v.m.abs().shr_toward_zero(q - v.e);
}

// Minimum normal exponent per format (numerics.md b.1), stated here independently of formats.h.
int emin_of(Format f) {
  switch (f) {
    case Format::float8_e4m3fn: return -6;
    case Format::float8_e5m2: return -14;
    case Format::float6_e2m3fn: return 0;
    case Format::float6_e3m2fn: return -2;
    case Format::float4_e2m1fn: return 0;
    case Format::float16: return -14;
    case Format::bfloat16: return -126;
    case Format::tfloat32: return -126;
    case Format::float32: return -126;
    case Format::float8_ue4m3: return -6;
    case Format::float8_e8m0fnu: return -127;
  }
  return 0;
}

// An operand or scale value (double; every format value is a double) and its b.1 exponent.
struct Value {
  double v;
  int e;  // max(floor(log2|v|), emin); unused for zero, Inf, NaN
};

Value value_of(Format f, std::uint32_t word, Format exponent_format) {
  double v;
  if (f == Format::tfloat32) {
    v = std::bit_cast<float>(word & 0xFFFFE000u);  // truncation to tf32 (b.1)
  } else if (f == Format::float8_ue4m3) {
    v = to_double(f, word & 0x7Fu);  // the sign bit is ignored (b.5)
  } else {
    v = to_double(f, word);
  }
  int e = 0;
  if (std::isfinite(v) && v != 0) e = std::max(std::ilogb(v), emin_of(exponent_format));
  return {v, e};
}

std::uint32_t float_bits(double exact_value) { return std::bit_cast<std::uint32_t>(static_cast<float>(exact_value)); }

// N * 2^q as a double (N < 2^53).
double scaled(const BigInt& N, int q) { return std::ldexp(static_cast<double>(N.low64()), q); }

// The output conversions of b.6 on an exact value (and RNE-FP32 for the b.9 / FADD oracle).
enum class Out { rz_fp32, rz_e8m13, rne_fp16, rne_fp32 };

std::uint32_t convert_output(const Dyadic& V, Out out, UnderflowZero uz, bool zero_sign_negative = false) {
  const bool f16 = out == Out::rne_fp16;
  if (V.zero()) return zero_sign_negative ? (f16 ? 0x8000u : 0x80000000u) : 0u;
  const bool neg = V.negative();
  const int L = log2_floor(V);
  const std::uint32_t sign = neg ? (f16 ? 0x8000u : 0x80000000u) : 0u;
  const std::uint32_t inf = f16 ? 0x7C00u : 0x7F800000u;
  const std::uint32_t underflow_zero = (neg && uz == UnderflowZero::negative) ? sign : 0u;
  if (out == Out::rz_fp32 || out == Out::rz_e8m13) {
    if (L >= 128) return sign | inf;
    const int q = std::max(L, -126) - (out == Out::rz_fp32 ? 23 : 13);
    const BigInt N = floor_units(V, q);
    if (N.zero()) return underflow_zero;
    return sign | float_bits(scaled(N, q));
  }
  // Nearest even with quantum 2^(max(L, emin) - (p - 1)): compare the remainder with half a quantum.
  const int p = f16 ? 11 : 24, emin = f16 ? -14 : -126;
  const int q = std::max(L, emin) - (p - 1);
  BigInt N = floor_units(V, q);
  if (V.e < q) {
    const int n = q - V.e;  // bits of |m| below the quantum
    const BigInt mag = V.m.abs();
    const bool half = mag.bit(n - 1);
    const bool rest = mag.any_below(n - 1);
    if (half && (rest || N.bit(0))) N = N + BigInt(1);
  }
  if (N.zero()) return underflow_zero;
  const double r = scaled(N, q);
  if (r >= (f16 ? 65536.0 : std::ldexp(1.0, 128))) return sign | inf;
  if (f16) return sign | convert(Format::float16, r, presets::ieee());
  return sign | float_bits(r);
}

Out out_of(OutputRounding r) {
  switch (r) {
    case OutputRounding::rz_fp32: return Out::rz_fp32;
    case OutputRounding::rz_e8m13: return Out::rz_e8m13;
    case OutputRounding::rne_fp16: return Out::rne_fp16;
    default: break;
  }
  throw std::invalid_argument("reference: no output conversion for this rounding");
}

Format acc_of(OutputRounding r) { return r == OutputRounding::rne_fp16 ? Format::float16 : Format::float32; }

std::uint32_t nan_of(Format acc) { return acc == Format::float16 ? 0x7FFFu : 0x7FFFFFFFu; }
std::uint32_t inf_of(Format acc, bool neg) {
  return acc == Format::float16 ? (neg ? 0xFC00u : 0x7C00u) : (neg ? 0xFF800000u : 0x7F800000u);
}

// One fused step: products k in `ks` (with their scale values), addend c.
struct Step {
  std::uint32_t d;
  bool truncated;        // a term lost bits to the alignment grid
  bool inexact = false;  // the output conversion rounded
};

Step fused_step(const FdpaParams& p, const ReferenceDot& in, const std::vector<std::size_t>& ks, std::uint32_t c,
                Format decompose_as_a, Format decompose_as_b, const std::vector<Value>& sa,
                const std::vector<Value>& sb) {
  const Format acc = acc_of(p.rounding);
  const Value cv = value_of(acc, c, acc);
  const bool scaled_products = p.algorithm == Algorithm::st_fdpa || p.algorithm == Algorithm::gst_fdpa;
  // b.7: NaN anywhere (operands, C, the scales of the blocks in use), Inf * 0, +Inf with -Inf.
  bool nan = std::isnan(cv.v), pos = cv.v == INFINITY, neg = cv.v == -INFINITY;
  std::vector<Value> av, bv;
  for (std::size_t k : ks) {
    const Value x = value_of(in.a_format, in.a[k], decompose_as_a);
    const Value y = value_of(in.b_format, in.b[k], decompose_as_b);
    av.push_back(x);
    bv.push_back(y);
    if (scaled_products) {
      const std::size_t blk = k / static_cast<std::size_t>(in.block);
      if (std::isnan(sa[blk].v) || std::isnan(sb[blk].v)) nan = true;
    }
    if (std::isnan(x.v) || std::isnan(y.v)) nan = true;
    if (std::isinf(x.v) || std::isinf(y.v)) {
      if (x.v == 0 || y.v == 0) nan = true;
      else ((x.v < 0) != (y.v < 0) ? neg : pos) = true;
    }
  }
  if (nan || (pos && neg)) return {nan_of(acc), false};
  if (pos || neg) return {inf_of(acc, neg), false};

  // Terms (value, exponent) per b.3-b.5.
  struct Term {
    Dyadic v;
    int e;
  };
  std::vector<Term> terms;
  if (p.algorithm == Algorithm::gst_fdpa) {
    const std::size_t G = static_cast<std::size_t>(p.group);
    for (std::size_t g = 0; g * G < ks.size(); ++g) {
      Dyadic sum;
      bool all_zero = true;
      for (std::size_t i = g * G; i < std::min(ks.size(), (g + 1) * G); ++i) {
        if (av[i].v != 0 && bv[i].v != 0) all_zero = false;
        sum = add(sum, mul(exact(av[i].v), exact(bv[i].v)));
      }
      const std::size_t blk = ks[g * G] / static_cast<std::size_t>(in.block);
      const double scale = sa[blk].v * sb[blk].v;  // a product of two scales is exact in double
      if (all_zero || scale == 0) {
        terms.push_back({Dyadic(), p.e_zero});
      } else {
        terms.push_back({mul(sum, exact(scale)), sa[blk].e + sb[blk].e});
      }
    }
  } else {
    for (std::size_t i = 0; i < ks.size(); ++i) {
      if (av[i].v == 0 || bv[i].v == 0) {
        terms.push_back({Dyadic(), p.e_zero});
        continue;
      }
      Dyadic prod = mul(exact(av[i].v), exact(bv[i].v));
      int e = av[i].e + bv[i].e;
      if (p.algorithm == Algorithm::st_fdpa) {
        const std::size_t blk = ks[i] / static_cast<std::size_t>(in.block);
        prod = mul(prod, exact(sa[blk].v * sb[blk].v));
        e += sa[blk].e + sb[blk].e;
      }
      terms.push_back({prod, e});
    }
  }
  terms.push_back({exact(cv.v), cv.v == 0 ? p.e_zero : cv.e});

  int emax = INT_MIN;
  for (const Term& t : terms) emax = std::max(emax, t.e);
  Dyadic V;
  bool truncated = false;
  for (const Term& t : terms) {
    const Dyadic kept = truncate_to(t.v, emax - p.F);
    truncated |= !same_value(kept, t.v);
    V = add(V, kept);
  }
  const std::uint32_t d = convert_output(V, out_of(p.rounding), p.underflow_zero);
  const Value dv = value_of(acc, d, acc);
  return {d, truncated, !std::isfinite(dv.v) || !same_value(exact(dv.v), V)};
}

}  // namespace

std::uint32_t reference_add(Format f, std::uint32_t x, std::uint32_t y) {
  const double a = to_double(f, x), b = to_double(f, y);
  const std::uint32_t nan = f == Format::float16 ? 0x7FFFu : 0x7FFFFFFFu;
  if (std::isnan(a) || std::isnan(b)) return nan;
  if (std::isinf(a) && std::isinf(b) && (a < 0) != (b < 0)) return nan;
  if (std::isinf(a)) return x;
  if (std::isinf(b)) return y;
  const Dyadic sum = add(exact(a), exact(b));
  // IEEE 754 §6.3: an exact zero sum is +0 in round-to-nearest, except (-0) + (-0) = -0.
  const bool both_negative_zero = a == 0 && b == 0 && std::signbit(a) && std::signbit(b);
  return convert_output(sum, f == Format::float16 ? Out::rne_fp16 : Out::rne_fp32, UnderflowZero::negative,
                        both_negative_zero);
}

ReferenceResult reference_fdpa(const FdpaParams& p, const ReferenceDot& in) {
  const std::size_t K = in.a.size();
  const Format acc = acc_of(p.rounding);
  std::vector<Value> sa, sb;
  if (p.algorithm == Algorithm::st_fdpa || p.algorithm == Algorithm::gst_fdpa) {
    for (std::uint32_t s : in.scale_a) sa.push_back(value_of(in.scale_format, s, in.scale_format));
    for (std::uint32_t s : in.scale_b) sb.push_back(value_of(in.scale_format, s, in.scale_format));
  }
  ReferenceResult r;
  std::uint32_t c = in.c;
  if (p.algorithm == Algorithm::fp8_via_f16) {
    // b.9: per instruction of 2L elements, d1 = T(k mod 4 in {0,1}, 0), d2 = T(k mod 4 in {2,3}, d1),
    // D = d2 + C (RNE).
    FdpaParams inner = p;
    inner.algorithm = Algorithm::t_fdpa;
    const std::size_t block = 2 * static_cast<std::size_t>(p.L);
    for (std::size_t base = 0; base < K; base += block) {
      std::vector<std::size_t> s1, s2;
      for (std::size_t k = base; k < std::min(K, base + block); ++k) ((k % 4) < 2 ? s1 : s2).push_back(k);
      const Step d1 = fused_step(inner, in, s1, 0u, Format::float16, Format::float16, sa, sb);
      const Step d2 = fused_step(inner, in, s2, d1.d, Format::float16, Format::float16, sa, sb);
      // Lost bits: alignment truncation, an inexact inner HMMA result, or an inexact add that is not
      // the last operation.
      r.truncated |= d1.truncated || d2.truncated || d1.inexact || d2.inexact;
      const std::uint32_t sum = reference_add(acc, d2.d, c);
      if (base + block < K) {
        const double dv = to_double(acc, sum);
        r.truncated |= !std::isfinite(dv) ||
                       !same_value(exact(dv), add(exact(to_double(acc, d2.d)), exact(to_double(acc, c))));
      }
      c = sum;
    }
  } else {
    const std::size_t L = static_cast<std::size_t>(p.L);
    for (std::size_t k0 = 0; k0 < K; k0 += L) {
      std::vector<std::size_t> ks;
      for (std::size_t k = k0; k < std::min(K, k0 + L); ++k) ks.push_back(k);
      const Step s = fused_step(p, in, ks, c, in.a_format, in.b_format, sa, sb);
      // An inexact output conversion of a step that is not the last one also loses bits.
      r.truncated |= s.truncated || (k0 + L < K && s.inexact);
      c = s.d;
    }
  }
  r.d = c;

  // The exact sum of all products (scaled) and C, rounded the model's way (b.9: one RNE).
  bool special = false;
  Dyadic total = exact(to_double(acc, in.c));
  special |= !std::isfinite(to_double(acc, in.c));
  for (std::size_t k = 0; k < K; ++k) {
    const double x = value_of(in.a_format, in.a[k], in.a_format).v, y = value_of(in.b_format, in.b[k], in.b_format).v;
    double s = 1.0;
    if (!sa.empty()) s = sa[k / static_cast<std::size_t>(in.block)].v * sb[k / static_cast<std::size_t>(in.block)].v;
    if (!std::isfinite(x) || !std::isfinite(y) || !std::isfinite(s)) {
      special = true;
      continue;
    }
    total = add(total, mul(mul(exact(x), exact(y)), exact(s)));
  }
  if (!special) {
    const Out out = p.algorithm == Algorithm::fp8_via_f16 ? (acc == Format::float16 ? Out::rne_fp16 : Out::rne_fp32)
                                                          : out_of(p.rounding);
    r.exact_rounded = convert_output(total, out, p.underflow_zero);
  }
  return r;
}

}  // namespace blockscale::emulator::testing
