// SPDX-License-Identifier: Apache-2.0
#include "blockscale/emulator/params.h"

#include "blockscale/formats/detail/enum_check.h"

#include <array>
#include <stdexcept>
#include <string>

namespace blockscale::emulator {

namespace {

struct TypeName {
  Type type;
  std::string_view name;
  std::optional<Format> format;
};

constexpr std::array<TypeName, kTypeCount> kTypeNames = {{
    {Type::e4m3, "e4m3", Format::float8_e4m3fn},
    {Type::e5m2, "e5m2", Format::float8_e5m2},
    {Type::e2m3, "e2m3", Format::float6_e2m3fn},
    {Type::e3m2, "e3m2", Format::float6_e3m2fn},
    {Type::e2m1, "e2m1", Format::float4_e2m1fn},
    {Type::ue8m0, "ue8m0", Format::float8_e8m0fnu},
    {Type::ue4m3, "ue4m3", Format::float8_ue4m3},
    {Type::f16, "f16", Format::float16},
    {Type::bf16, "bf16", Format::bfloat16},
    {Type::tf32, "tf32", Format::tfloat32},
    {Type::f32, "f32", Format::float32},
    {Type::f64, "f64", std::nullopt},
}};

}  // namespace

std::string_view to_string(Type t) {
  const auto i = static_cast<std::size_t>(t);
  return i < kTypeNames.size() ? kTypeNames[i].name : "an unknown type";
}

std::optional<Type> parse_type(std::string_view name) {
  for (const TypeName& n : kTypeNames) {
    if (n.name == name) return n.type;
  }
  return std::nullopt;
}

std::optional<Format> format_of(Type t) {
  const auto i = static_cast<std::size_t>(t);
  if (i >= kTypeNames.size()) throw std::invalid_argument("format_of: an unknown Type value " + std::to_string(i));
  return kTypeNames[i].format;
}

Type type_of(Format f) {
  for (const TypeName& n : kTypeNames) {
    if (n.format == f) return n.type;
  }
  throw std::invalid_argument("format " + blockscale::to_string(f) + " has no PTX type");
}

std::string TypeSet::to_string() const {
  std::string s;
  for (const TypeName& n : kTypeNames) {
    if (contains(n.type)) {
      if (!s.empty()) s += '|';
      s += n.name;
    }
  }
  return s;
}

Format accumulator_format(OutputRounding r) {
  switch (r) {
    case OutputRounding::rz_fp32:
    case OutputRounding::rz_e8m13: return Format::float32;
    case OutputRounding::rne_fp16: return Format::float16;
    case OutputRounding::rne_fp64:
      throw std::invalid_argument("rne_fp64 (f64 DMMA) has no accumulator Format: use dot_f64 / mma_f64");
  }
  throw std::invalid_argument("accumulator_format: OutputRounding = " + std::to_string(static_cast<unsigned>(r)) +
                              " is not an OutputRounding");
}

std::string_view to_string(Algorithm a) {
  switch (a) {
    case Algorithm::t_fdpa: return "T-FDPA";
    case Algorithm::st_fdpa: return "ST-FDPA";
    case Algorithm::gst_fdpa: return "GST-FDPA";
    case Algorithm::fp8_via_f16: return "fp8->f16 2xHMMA+add";
    case Algorithm::fma_chain: return "fma chain";
  }
  return "?";
}

std::string_view to_string(OutputRounding r) {
  switch (r) {
    case OutputRounding::rz_fp32: return "RZ-FP32";
    case OutputRounding::rz_e8m13: return "RZ-E8M13";
    case OutputRounding::rne_fp16: return "RNE-FP16";
    case OutputRounding::rne_fp64: return "RNE-FP64";
  }
  return "?";
}

void validate(const FdpaParams& p) {
  const auto fail = [](const std::string& m) { throw std::invalid_argument("FdpaParams: " + m); };
  blockscale::detail::require_enumerator(p.algorithm, Algorithm::fma_chain, "Algorithm", "FdpaParams: algorithm");
  blockscale::detail::require_enumerator(p.rounding, OutputRounding::rne_fp64, "OutputRounding", "FdpaParams: rounding");
  blockscale::detail::require_enumerator(p.underflow_zero, UnderflowZero::positive, "UnderflowZero", "FdpaParams: underflow_zero");
  if (p.algorithm == Algorithm::fma_chain) {
    if (p.rounding != OutputRounding::rne_fp64) fail("fma_chain rounds to nearest even in f64 (rne_fp64)");
    return;
  }
  if (p.rounding == OutputRounding::rne_fp64) fail("rne_fp64 is the rounding of fma_chain only");
  // Integer widths (numerics.md b.3 step 5, b.5 step 7): a T-FDPA term is below 2^(F+2) and a sum of
  // at most 257 terms below 2^(F+11); a GST group term is below 2^(F+11) and a sum of at most 17 below
  // 2^(F+16). F <= 40 keeps every sum inside int64.
  if (p.F < 1 || p.F > 40) fail("F must be in 1..40, got " + std::to_string(p.F));
  if (p.L < 1 || p.L > 256) fail("L must be in 1..256, got " + std::to_string(p.L));
  if (p.e_zero < -1000 || p.e_zero > 1000) fail("e_zero must be in -1000..1000, got " + std::to_string(p.e_zero));
  if (p.algorithm == Algorithm::gst_fdpa) {
    if (p.group < 1 || p.L % p.group != 0) {
      fail("GST group " + std::to_string(p.group) + " must divide L=" + std::to_string(p.L));
    }
    if (p.L / p.group > 16) fail("GST takes at most 16 groups per step, got L/G=" + std::to_string(p.L / p.group));
  }
  if (p.algorithm == Algorithm::fp8_via_f16) {
    // m16n8k32 runs two HMMA.16816 of 16 products each, m16n8k16 two HMMA.1688 of 8 (gpu.md 3.4).
    if (p.L != 16 && p.L != 8) fail("fp8_via_f16 runs two HMMA of 16 or 8 products each: L must be 16 or 8");
    if (p.rounding == OutputRounding::rz_e8m13) fail("fp8_via_f16 inner HMMAs round RZ-FP32 or RNE-FP16");
  }
}

}  // namespace blockscale::emulator
