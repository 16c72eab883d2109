// SPDX-License-Identifier: Apache-2.0
// Thin value types over the format table: one code in a storage word, exact decode, conversion
// from float/double with the value_type_default preset (ml_dtypes behaviour where ml_dtypes has
// the type), and arithmetic evaluated in float and rounded back (as ml_dtypes and Eigen::half do;
// this is a convenience, not a model of any hardware).
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <ostream>
#include <type_traits>

#include "blockscale/formats/convert.h"
#include "blockscale/formats/presets.h"

namespace blockscale {

namespace detail {
template <int Bits>
using storage_for = std::conditional_t<Bits <= 8, std::uint8_t,
                                       std::conditional_t<Bits <= 16, std::uint16_t, std::uint32_t>>;
// Cached default conversion, so constructors do not rebuild the options each time.
std::uint32_t convert_default(Format dst, float x);
std::uint32_t convert_default(Format dst, double x);

// An integer as a double whose one rounding to any format of at most 51 significand bits is the
// rounding of the integer itself: exact below 2^53; above, the leading 53 bits with the bits
// below ORed into the last (round to odd: Boldo and Melquiond, "Emulation of FMA and correctly
// rounded sums: proved algorithms using rounding to odd", IEEE Trans. Computers 57(4), 2008).
// A plain conversion would round twice (2^60 + 2^52 + 1 to bfloat16: 2^60 instead of 2^60 + 2^53)
// and in the caller's rounding mode; this takes integer operations only.
template <class I>
double integer_as_double(I x) {
  static_assert(sizeof(I) <= sizeof(std::uint64_t), "the value types take integers of at most 64 bits");
  bool negative = false;
  if constexpr (std::is_signed_v<I>) negative = x < I{0};
  std::uint64_t m = static_cast<std::uint64_t>(x);
  if (negative) m = ~m + 1u;  // |x|, INT64_MIN included
  const int shift = std::bit_width(m) > 53 ? std::bit_width(m) - 53 : 0;
  if (shift > 0) m = (m >> shift) | static_cast<std::uint64_t>((m & ((std::uint64_t{1} << shift) - 1u)) != 0);
  const double magnitude = std::ldexp(static_cast<double>(m), shift);
  return negative ? -magnitude : magnitude;
}
}  // namespace detail

template <Format F>
class exmy {
 public:
  using storage_type = detail::storage_for<info(F).storage_bits>;
  static constexpr Format format = F;

  constexpr exmy() = default;
  // From a storage word (for tf32: an fp32 bit pattern; the low 13 bits are cleared).
  static constexpr exmy from_bits(storage_type bits) {
    exmy r;
    r.bits_ = static_cast<storage_type>(to_storage(F, from_storage(F, bits)));
    return r;
  }
  constexpr storage_type bits() const { return bits_; }
  constexpr std::uint32_t code() const { return from_storage(F, bits_); }

  explicit exmy(float x) : bits_(static_cast<storage_type>(to_storage(F, detail::convert_default(F, x)))) {}
  explicit exmy(double x) : bits_(static_cast<storage_type>(to_storage(F, detail::convert_default(F, x)))) {}
  // From an integer: one rounding (detail::integer_as_double). ml_dtypes rounds through float32
  // first (2^24 + 2^16 + 1 to bfloat16: 2^24, not 2^24 + 2^17); CUDA's host __ll2bfloat16_rn
  // rounds once, as here (tests/formats/cuda_oracle_test.cpp).
  template <class I, std::enable_if_t<std::is_integral_v<I>, int> = 0>
  explicit exmy(I x) : exmy(detail::integer_as_double(x)) {}
  // Between formats: one rounding, exact through double (every value of every format is a double).
  // A NaN becomes the destination's default NaN, payload dropped: ml_dtypes' own casts between its
  // types do the same (bfloat16 0x7FC1 -> float16 0x7E00, where a cast through float32 keeps
  // payload bits: 0x7E08); formats_ml_dtypes_oracle checks every code of every pair.
  template <Format G>
  explicit exmy(exmy<G> other) : exmy(static_cast<double>(other)) {}

  explicit operator float() const { return to_float(F, code()); }
  explicit operator double() const { return to_double(F, code()); }

  friend exmy operator+(exmy a, exmy b) { return exmy(float(a) + float(b)); }
  friend exmy operator-(exmy a, exmy b) { return exmy(float(a) - float(b)); }
  friend exmy operator*(exmy a, exmy b) { return exmy(float(a) * float(b)); }
  friend exmy operator/(exmy a, exmy b) { return exmy(float(a) / float(b)); }
  friend exmy operator-(exmy a) { return exmy(-float(a)); }
  exmy& operator+=(exmy b) { return *this = *this + b; }
  exmy& operator-=(exmy b) { return *this = *this - b; }
  exmy& operator*=(exmy b) { return *this = *this * b; }
  exmy& operator/=(exmy b) { return *this = *this / b; }
  // Comparisons by value: NaN unordered, +0 == -0. These and the arithmetic above are the host's
  // float operations, in the caller's floating-point mode as float's own are (under DAZ a
  // subnormal compares equal to 0): a convenience, unlike every conversion of this library.
  friend bool operator==(exmy a, exmy b) { return float(a) == float(b); }
  friend bool operator!=(exmy a, exmy b) { return float(a) != float(b); }
  friend bool operator<(exmy a, exmy b) { return float(a) < float(b); }
  friend bool operator<=(exmy a, exmy b) { return float(a) <= float(b); }
  friend bool operator>(exmy a, exmy b) { return float(a) > float(b); }
  friend bool operator>=(exmy a, exmy b) { return float(a) >= float(b); }
  friend std::ostream& operator<<(std::ostream& os, exmy v) { return os << float(v); }

 private:
  storage_type bits_ = 0;
};

using float4_e2m1fn = exmy<Format::float4_e2m1fn>;
using float6_e2m3fn = exmy<Format::float6_e2m3fn>;
using float6_e3m2fn = exmy<Format::float6_e3m2fn>;
using float8_e4m3fn = exmy<Format::float8_e4m3fn>;
using float8_e5m2 = exmy<Format::float8_e5m2>;
using float8_e8m0fnu = exmy<Format::float8_e8m0fnu>;
using float8_ue4m3 = exmy<Format::float8_ue4m3>;
using float16 = exmy<Format::float16>;
using bfloat16 = exmy<Format::bfloat16>;
using tfloat32 = exmy<Format::tfloat32>;

template <Format F>
constexpr bool isnan(exmy<F> v) { return classify(F, v.code()) == ValueClass::nan; }
template <Format F>
constexpr bool isinf(exmy<F> v) { return classify(F, v.code()) == ValueClass::infinite; }
template <Format F>
constexpr bool isfinite(exmy<F> v) { return !isnan(v) && !isinf(v); }
template <Format F>
constexpr bool signbit(exmy<F> v) { return is_negative(F, v.code()); }
template <Format F>
exmy<F> abs(exmy<F> v) {
  return exmy<F>::from_bits(static_cast<typename exmy<F>::storage_type>(to_storage(F, v.code() & ~sign_mask(F))));
}

// TF32 helpers: the tensor cores read fp32 operands as tf32 by clearing the low 13 bits
// (numerics.md b.1: truncation, NaN payloads in the low bits become Inf).
constexpr std::uint32_t tf32_truncate_bits(std::uint32_t fp32_bits) { return fp32_bits & 0xFFFFE000u; }
float tf32_truncate(float x);
// Round fp32 to tf32 with a rounding mode (PTX cvt.rna.tf32.f32 is Rounding::nearest_away).
float tf32_round(float x, Rounding r = Rounding::nearest_even);

}  // namespace blockscale

namespace std {
// numeric_limits from the table, with the C++ conventions (min_exponent is one more than the
// exponent of the smallest normal, as for float). For formats without Inf, infinity() returns
// their NaN (fn) or max finite (no NaN either), as ml_dtypes does.
template <blockscale::Format F>
class numeric_limits<blockscale::exmy<F>> {
  using T = blockscale::exmy<F>;
  using S = typename T::storage_type;
  static constexpr T make(std::uint32_t code) { return T::from_bits(static_cast<S>(blockscale::to_storage(F, code))); }
  static constexpr int p = blockscale::info(F).mantissa_bits;

 public:
  static constexpr bool is_specialized = true;
  static constexpr bool is_signed = blockscale::info(F).is_signed;
  static constexpr bool is_integer = false;
  static constexpr bool is_exact = false;
  static constexpr bool has_infinity = blockscale::has_inf(F);
  static constexpr bool has_quiet_NaN = blockscale::has_nan(F);
  static constexpr bool has_signaling_NaN = false;
  static constexpr float_denorm_style has_denorm =
      blockscale::info(F).has_subnormals ? denorm_present : denorm_absent;
  static constexpr bool has_denorm_loss = false;
  static constexpr float_round_style round_style = round_to_nearest;
  static constexpr bool is_iec559 = false;
  static constexpr bool is_bounded = true;
  static constexpr bool is_modulo = false;
  static constexpr int digits = p + 1;
  // floor((digits - 1) * log10(2)) and ceil(1 + digits * log10(2)), as for the IEEE types.
  static constexpr int digits10 = (p * 30103) / 100000;
  static constexpr int max_digits10 = 2 + ((p + 1) * 30103) / 100000;
  static constexpr int radix = 2;
  static constexpr int min_exponent = blockscale::emin(F) + 1;
  static constexpr int min_exponent10 = (min_exponent - 1) * 30103 / 100000;
  static constexpr int max_exponent = blockscale::emax(F) + 1;
  static constexpr int max_exponent10 = (max_exponent - 1) * 30103 / 100000;
  static constexpr bool traps = false;
  static constexpr bool tinyness_before = false;

  static constexpr T min() noexcept {  // smallest positive normal
    return make(blockscale::info(F).has_subnormals ? (1u << p) : 0u);
  }
  static constexpr T max() noexcept { return make(blockscale::max_finite_code(F)); }
  static constexpr T lowest() noexcept {
    return is_signed ? make(blockscale::max_finite_code(F) | blockscale::sign_mask(F)) : make(0);
  }
  // The code of 2^k: normal when k >= emin, else subnormal (in e2m1 and e2m3 even 2^-p and
  // 0.5 are subnormal).
  static constexpr std::uint32_t power_of_two_code(int k) {
    const int e0 = blockscale::emin(F);
    return k >= e0 ? static_cast<std::uint32_t>(k + blockscale::info(F).bias) << p : 1u << (k - e0 + p);
  }
  static constexpr T epsilon() noexcept { return make(power_of_two_code(-p)); }  // 2^-p
  static constexpr T round_error() noexcept { return make(power_of_two_code(-1)); }  // 0.5
  static constexpr T infinity() noexcept {
    return make(has_infinity ? blockscale::inf_code(F)
                             : (has_quiet_NaN ? blockscale::all_ones_code(F) : blockscale::max_finite_code(F)));
  }
  static constexpr T quiet_NaN() noexcept {
    return make(has_quiet_NaN ? blockscale::quiet_nan_code(F) : blockscale::max_finite_code(F));
  }
  static constexpr T signaling_NaN() noexcept { return quiet_NaN(); }
  static constexpr T denorm_min() noexcept { return make(blockscale::min_positive_code(F)); }
};
}  // namespace std
