// SPDX-License-Identifier: Apache-2.0
// Operand classes for the special-value tests (numerics.md b.7): a code of each class in a format,
// shared by the instruction-level table (special_values_test.cpp) and the GEMM paths' table
// (fast_path_test.cpp).
#pragma once

#include <cstdint>
#include <optional>

#include "blockscale/formats.h"

namespace blockscale::emulator::testing {

enum class Cls { pos_zero, neg_zero, subnormal, normal, neg_normal, max, pos_inf, neg_inf, nan };
inline constexpr Cls kClasses[] = {Cls::pos_zero, Cls::neg_zero, Cls::subnormal, Cls::normal, Cls::neg_normal,
                                   Cls::max,      Cls::pos_inf,  Cls::neg_inf,   Cls::nan};

// A code of format f in class `c`, or nullopt where the format has no such value (e4m3 has no Inf).
inline std::optional<std::uint32_t> code_of(Format f, Cls c) {
  const std::uint32_t s = sign_mask(f);
  switch (c) {
    case Cls::pos_zero: return 0u;
    case Cls::neg_zero: return s;
    case Cls::subnormal: return 1u;
    case Cls::normal: return (static_cast<std::uint32_t>(info(f).bias) << info(f).mantissa_bits) | 1u;  // 1 + ulp
    case Cls::neg_normal: return s | (static_cast<std::uint32_t>(info(f).bias) << info(f).mantissa_bits) | 1u;
    case Cls::max: return max_finite_code(f);
    case Cls::pos_inf: return has_inf(f) ? std::optional<std::uint32_t>(inf_code(f)) : std::nullopt;
    case Cls::neg_inf: return has_inf(f) ? std::optional<std::uint32_t>(s | inf_code(f)) : std::nullopt;
    case Cls::nan: return has_nan(f) ? std::optional<std::uint32_t>(s | all_ones_code(f)) : std::nullopt;  // a negative NaN
  }
  return std::nullopt;
}

}  // namespace blockscale::emulator::testing
