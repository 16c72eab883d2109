// SPDX-License-Identifier: Apache-2.0
// Conversions between every format of format.h, and from float / double, with every rounding
// mode, overflow rule and NaN rule in use. One engine (detail/round.h) does all of them: the input
// is taken apart exactly into sign * integer * 2^e and rounded once, so double inputs are never
// rounded twice.
//
// Systems disagree on the corner cases (formats.md section (d)); each choice is an explicit
// option here, and presets.h bundles the choices of CUDA 13.0 and ml_dtypes.
#pragma once

#include <cstdint>
#include <string>

#include "blockscale/formats/format.h"

namespace blockscale {

enum class Rounding : std::uint8_t {
  nearest_even,  // IEEE 754 roundTiesToEven
  toward_zero,   // IEEE 754 roundTowardZero (truncation)
  upward,        // IEEE 754 roundTowardPositive
  downward,      // IEEE 754 roundTowardNegative
  nearest_away,  // IEEE 754 roundTiesToAway
  // Stochastic rounding with caller-supplied random bits. Let lo <= |x| < hi be the neighbouring
  // grid values at x's precision and f = (|x| - lo) / (hi - lo) in [0, 1). With n =
  // ConvertOptions::stochastic_bits and r = the low n bits of the random word, the magnitude
  // rounds up to hi iff floor(f * 2^n) + r >= 2^n; bits of f below 2^-n are dropped. The result
  // is hi with probability floor(f * 2^n) / 2^n, so the expectation is exact whenever f has at
  // most n bits. This is the "add random bits below the kept bits, then truncate" scheme of
  // PTX cvt.rs and of TransformerEngine's software fallback (n = 8, one byte per element).
  stochastic,
};

enum class Overflow : std::uint8_t {
  // Finite overflow and +-Inf give +-max finite (CUDA __NV_SATFINITE, PTX .satfinite).
  saturate,
  // Finite overflow gives +-max finite; +-Inf stays infinite (NaN where the format has no Inf,
  // +-max where it has neither): ml_dtypes kSaturate.
  saturate_finite,
  // Every overflow gives +-Inf (NaN with the sign where the format has no Inf, +-max where it has
  // neither), whatever the rounding direction: OCP OFP8 non-saturating mode, CUDA __NV_NOSAT,
  // ml_dtypes default.
  infinity,
  // IEEE 754-2019 §7.4: overflow gives +-Inf under the nearest modes, +-max under toward_zero,
  // and depends on the sign under upward / downward. As `infinity` for the Inf substitute.
  ieee,
};

// What a NaN input becomes. The result is `code`, with the input's sign XORed into the sign bit
// when `xor_sign` is set, and with the input's leading payload bits ORed into the mantissa when
// `or_payload` is set (IEEE 754 §6.2.3 payload narrowing). Examples: CUDA fp8 {0x7F} (sign
// dropped), ml_dtypes e4m3fn {0x7F, xor_sign}, ml_dtypes fp4 {0x8 (= -0), xor_sign} so that +NaN ->
// -0 and -NaN -> +0, IEEE f16 {0x7E00, xor_sign, or_payload}.
struct NanRule {
  std::uint32_t code = 0;
  bool xor_sign = false;
  bool or_payload = false;
  friend bool operator==(const NanRule&, const NanRule&) = default;
};

// Input zero to a format without zero (e8m0).
enum class ZeroRule : std::uint8_t { min_code, nan };  // CUDA: 0x00 (2^-127); ml_dtypes: NaN
// Negative input (including -0 and -Inf) to an unsigned format (e8m0, ue4m3).
enum class NegativeRule : std::uint8_t {
  magnitude,  // use |x| (CUDA __nv_cvt_*_to_e8m0, PyTorch)
  nan,        // NaN (ml_dtypes default)
  min_code,   // the smallest code (ml_dtypes kSaturate: 0x00)
};

struct ConvertOptions {
  Rounding rounding = Rounding::nearest_even;
  Overflow overflow = Overflow::infinity;
  // Unset: the format's default NaN (default_nan_rule).
  bool has_nan_rule = false;
  NanRule nan{};
  ZeroRule zero = ZeroRule::min_code;
  NegativeRule negative = NegativeRule::nan;
  // For Rounding::stochastic: how many random bits are used (1..32), taken from the low bits.
  int stochastic_bits = 32;
  // ml_dtypes quirk for formats without subnormals (e8m0): values below 2^emin+1 round on the grid
  // of multiples of 2^(emin+1), as if the format had IEEE subnormals, and code 0 reads 2^emin.
  // So 1.2 * 2^-127 -> 0x01 (2^-126) and 0.5 * 2^-127 -> 0x00. Off everywhere else.
  bool subnormal_grid_quirk = false;

  ConvertOptions& with_nan(NanRule r) {
    has_nan_rule = true;
    nan = r;
    return *this;
  }
  friend bool operator==(const ConvertOptions&, const ConvertOptions&) = default;
};

// The NaN a format produces when nothing else is asked: the quiet NaN with the input's sign and
// payload (IEEE 754 §6.2.3) for ieee formats, the all-ones code with the sign for "fn" formats,
// and +max finite for formats without NaN (what CUDA does; there is no good answer).
NanRule default_nan_rule(Format f);

// Checks that `o` is meaningful for `dst` and throws std::invalid_argument naming the rule broken
// otherwise (stochastic_bits out of 1..32, a NaN rule whose code is not a NaN of dst, ...).
void validate(Format dst, const ConvertOptions& o);

// ---- Scalar conversions. They return the destination code (magnitude-aligned, see format.h;
// ---- use to_storage() for tf32). `rbits` is only read under Rounding::stochastic.
std::uint32_t convert(Format dst, float x, const ConvertOptions& o = {}, std::uint32_t rbits = 0);
std::uint32_t convert(Format dst, double x, const ConvertOptions& o = {}, std::uint32_t rbits = 0);
// From a code of any format (f16, bf16, narrow formats) in one rounding.
std::uint32_t convert_code(Format dst, Format src, std::uint32_t code, const ConvertOptions& o = {},
                           std::uint32_t rbits = 0);

// Exact decomposition of a value: (-1)^negative * sig * 2^exp for finite values. For a code,
// sig carries the hidden bit and exp = max(floor(log2|x|), emin) - mantissa_bits, so subnormals
// keep exp = emin - mantissa_bits and are not normalised (what the tensor-core models need,
// numerics.md b.1). NaN payloads are left-aligned at bit 63.
struct Decomposed {
  enum Kind : std::uint8_t { zero, finite, infinite, nan } kind = zero;
  bool negative = false;
  std::uint64_t sig = 0;
  int exp = 0;
  std::uint64_t payload = 0;
};
Decomposed decompose(Format f, std::uint32_t code);
Decomposed decompose(double x);

// Exact decodes (every value of every format is exact in float and in double).
float to_float(Format f, std::uint32_t code);
double to_double(Format f, std::uint32_t code);

// Storage word <-> code (only tf32 differs: its code sits in bits 31..13 of an fp32 word).
constexpr std::uint32_t to_storage(Format f, std::uint32_t code) { return code << info(f).code_shift; }
constexpr std::uint32_t from_storage(Format f, std::uint32_t word) {
  return (word >> info(f).code_shift) & code_mask(f);
}

std::string to_string(Rounding r);
std::string to_string(Overflow o);

}  // namespace blockscale
