// SPDX-License-Identifier: Apache-2.0
// The number formats blockscale knows, described by data: one row per format.
//
// Every binary floating-point format here is sign | exponent | mantissa with
//   value = (-1)^s * 2^(E - bias) * 1.M        for a normal exponent field E,
//   value = (-1)^s * 2^(1 - bias) * 0.M        for E = 0 when the format has subnormals.
// What the top codes mean differs (OCP OFP8 v1.0 §5.3, OCP MX v1.0 §5.3, IEEE 754-2019 §3.4):
//   ieee:       the all-ones exponent field holds Inf (mantissa 0) and NaN (mantissa != 0);
//   nan_all_ones: only the all-ones magnitude code is NaN, everything else is finite ("fn");
//   none:       every code is a finite number (fp6, fp4).
// Adding a format (say a ue5m3 scale) is one Format enumerator plus one row in kFormatTable.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace blockscale {

enum class Format : std::uint8_t {
  float4_e2m1fn,   // OCP MX FP4
  float6_e2m3fn,   // OCP MX FP6 E2M3
  float6_e3m2fn,   // OCP MX FP6 E3M2
  float8_e4m3fn,   // OCP OFP8 E4M3 (no Inf; 0x7F/0xFF NaN)
  float8_e5m2,     // OCP OFP8 E5M2 (IEEE-like)
  float8_e8m0fnu,  // OCP MX E8M0 scale: 2^(code-127), 0xFF NaN, no sign, no zero
  float8_ue4m3,    // NVFP4 block scale: E4M3 without sign bit (bit 7 ignored)
  float16,         // IEEE binary16
  bfloat16,        // bfloat16
  tfloat32,        // NVIDIA TF32: fp32 bit pattern with the low 13 mantissa bits zero
  float32,         // IEEE binary32
};

inline constexpr int kFormatCount = 11;

enum class Specials : std::uint8_t { ieee, nan_all_ones, none };

struct FormatInfo {
  Format id;
  const char* name;        // ml_dtypes / LLVM APFloat spelling
  const char* short_name;  // spelling used by PTX and the cuda.tile docs
  std::uint8_t exponent_bits;
  std::uint8_t mantissa_bits;
  std::int16_t bias;
  bool is_signed;
  bool has_subnormals;      // exponent field 0 is subnormal (else it is a normal binade: e8m0)
  Specials specials;
  std::uint8_t code_shift;  // the code sits this many bits up in its storage word (tf32: 13)
  std::uint8_t storage_bits;  // bits of the storage word of one value (fp4/fp6 use a byte)
};

// clang-format off
inline constexpr std::array<FormatInfo, kFormatCount> kFormatTable = {{
  //  id                       name              short    e   m  bias  signed subn  specials               shift store
  {Format::float4_e2m1fn,  "float4_e2m1fn",  "e2m1",   2,  1,    1, true,  true,  Specials::none,          0,  8},
  {Format::float6_e2m3fn,  "float6_e2m3fn",  "e2m3",   2,  3,    1, true,  true,  Specials::none,          0,  8},
  {Format::float6_e3m2fn,  "float6_e3m2fn",  "e3m2",   3,  2,    3, true,  true,  Specials::none,          0,  8},
  {Format::float8_e4m3fn,  "float8_e4m3fn",  "e4m3",   4,  3,    7, true,  true,  Specials::nan_all_ones,  0,  8},
  {Format::float8_e5m2,    "float8_e5m2",    "e5m2",   5,  2,   15, true,  true,  Specials::ieee,          0,  8},
  {Format::float8_e8m0fnu, "float8_e8m0fnu", "ue8m0",  8,  0,  127, false, false, Specials::nan_all_ones,  0,  8},
  {Format::float8_ue4m3,   "float8_ue4m3",   "ue4m3",  4,  3,    7, false, true,  Specials::nan_all_ones,  0,  8},
  {Format::float16,        "float16",        "f16",    5, 10,   15, true,  true,  Specials::ieee,          0, 16},
  {Format::bfloat16,       "bfloat16",       "bf16",   8,  7,  127, true,  true,  Specials::ieee,          0, 16},
  {Format::tfloat32,       "tfloat32",       "tf32",   8, 10,  127, true,  true,  Specials::ieee,         13, 32},
  {Format::float32,        "float32",        "f32",    8, 23,  127, true,  true,  Specials::ieee,          0, 32},
}};
// clang-format on

// info() and the constexpr properties below assume a known format (is_known): they are the inner
// loops' table reads. The library's entry points check a caller's Format first (require_known).
constexpr const FormatInfo& info(Format f) { return kFormatTable[static_cast<int>(f)]; }

// ---- Properties derived from a row. All codes are "magnitude-aligned": bit 0 is the mantissa LSB,
// ---- i.e. before code_shift is applied. storage = code << code_shift.

constexpr int width(Format f) {  // meaningful bits of a code
  const auto& i = info(f);
  return i.exponent_bits + i.mantissa_bits + (i.is_signed ? 1 : 0);
}
constexpr std::uint32_t code_mask(Format f) {
  return width(f) >= 32 ? 0xFFFFFFFFu : ((1u << width(f)) - 1u);
}
constexpr std::uint32_t magnitude_mask(Format f) {
  const auto& i = info(f);
  return (1u << (i.exponent_bits + i.mantissa_bits)) - 1u;
}
constexpr std::uint32_t sign_mask(Format f) {
  return info(f).is_signed ? (1u << (width(f) - 1)) : 0u;
}
constexpr int max_exponent_field(Format f) { return (1 << info(f).exponent_bits) - 1; }
// Minimum normal exponent (unbiased). Without subnormals field 0 is a normal binade (e8m0: 2^-127).
constexpr int emin(Format f) {
  const auto& i = info(f);
  return (i.has_subnormals ? 1 : 0) - i.bias;
}
constexpr bool has_zero(Format f) { return info(f).has_subnormals; }
constexpr bool has_inf(Format f) { return info(f).specials == Specials::ieee; }
constexpr bool has_nan(Format f) { return info(f).specials != Specials::none; }

// Largest finite magnitude code.
constexpr std::uint32_t max_finite_code(Format f) {
  const auto& i = info(f);
  switch (i.specials) {
    case Specials::ieee:
      return ((static_cast<std::uint32_t>(max_exponent_field(f)) - 1u) << i.mantissa_bits) |
             ((1u << i.mantissa_bits) - 1u);
    case Specials::nan_all_ones:
      return magnitude_mask(f) - 1u;
    case Specials::none:
      return magnitude_mask(f);
  }
  return 0;
}
// Unbiased exponent of the largest finite value.
constexpr int emax(Format f) {
  const auto& i = info(f);
  return static_cast<int>(max_finite_code(f) >> i.mantissa_bits) - i.bias;
}
// Smallest positive magnitude code: 1 (smallest subnormal, or 2^-127 for e8m0 which is code 0).
constexpr std::uint32_t min_positive_code(Format f) { return has_zero(f) ? 1u : 0u; }

// The magnitude code of +Inf (ieee formats only).
constexpr std::uint32_t inf_code(Format f) {
  return static_cast<std::uint32_t>(max_exponent_field(f)) << info(f).mantissa_bits;
}
// The all-ones magnitude: the NaN of "fn" formats and a NaN in ieee formats.
constexpr std::uint32_t all_ones_code(Format f) { return magnitude_mask(f); }
// The quiet-bit NaN of an ieee format (top mantissa bit set, rest zero), e.g. 0x7E00 for f16.
constexpr std::uint32_t quiet_nan_code(Format f) {
  return has_inf(f) ? (inf_code(f) | (1u << (info(f).mantissa_bits - 1))) : all_ones_code(f);
}

// Classification of one code (ignores bits above width(f); ue4m3 ignores its unused bit 7).
enum class ValueClass : std::uint8_t { zero, subnormal, normal, infinite, nan };
constexpr ValueClass classify(Format f, std::uint32_t code) {
  const auto& i = info(f);
  const std::uint32_t mag = code & magnitude_mask(f);
  const std::uint32_t exp_field = mag >> i.mantissa_bits;
  const std::uint32_t man = mag & ((1u << i.mantissa_bits) - 1u);
  if (i.specials == Specials::ieee && exp_field == static_cast<std::uint32_t>(max_exponent_field(f)))
    return man == 0 ? ValueClass::infinite : ValueClass::nan;
  if (i.specials == Specials::nan_all_ones && mag == all_ones_code(f)) return ValueClass::nan;
  if (exp_field == 0 && i.has_subnormals) return man == 0 ? ValueClass::zero : ValueClass::subnormal;
  return ValueClass::normal;
}
constexpr bool is_nan(Format f, std::uint32_t code) { return classify(f, code) == ValueClass::nan; }
constexpr bool is_negative(Format f, std::uint32_t code) { return (code & sign_mask(f)) != 0; }

// Name lookup: accepts the long name ("float8_e4m3fn"), the short name ("e4m3"), and the
// spellings used by cuda.tile / PyTorch ("f8e4m3fn", "float8_e4m3fn", "f4e2m1fn", "e8m0").
std::optional<Format> parse_format(std::string_view name);
// The long name; for a value outside the enum (a cast integer) "an unknown format (N)", so that the
// messages that refuse such a value can name it. info() itself assumes a valid value.
std::string to_string(Format f);
constexpr bool is_known(Format f) { return static_cast<unsigned>(f) < static_cast<unsigned>(kFormatCount); }
// Throws std::invalid_argument "WHERE: an unknown format (N)" unless is_known(f): the library's
// entry points call it before info() reads the table.
void require_known(Format f, std::string_view where);

}  // namespace blockscale
