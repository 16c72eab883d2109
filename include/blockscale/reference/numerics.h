// SPDX-License-Identifier: Apache-2.0
// How a reference operation turns the mathematical sum into output bits; the caller chooses.
//
//   exact       The infinitely precise value of sum_k (products) + acc, rounded ONCE to the output
//               type (nearest-even unless another IEEE rounding is asked for). Computed exactly
//               with a wide fixed-point accumulator (exact_sum.h), never in double. This is the
//               mathematical reference the cuda.tile docs describe ("an approximation of an
//               infinitely precise mathematical computation").
//   sequential  What naive host references do (CUTLASS's host GEMM, issue 4's `sequential_f32`):
//               each operand is dequantised to the accumulator type and the products are added in
//               k order, one fused multiply-add (one rounding) per k. For mma_scaled the
//               accumulator is f32, so this is the fp32 FMA chain
//                 d = acc; for k: d = fmaf(x[i,k]*x_scale[i,k/B], y[k,j]*y_scale[k/B,j], d)
//               where each scaled element x*scale is an fp32 product (exact unless it overflows).
//   hardware    Delegates to a registered bit-exact model of a tensor-core instruction or GEMM
//               schedule (hardware.h). The emulator registers its models; naming a model that is
//               not registered is an error.
// docs/reference.md gives the full definitions, including NaN / Inf / signed-zero behaviour.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "blockscale/formats/convert.h"

namespace blockscale::reference {

enum class Mode : std::uint8_t { exact, sequential, hardware };

// int32 results (int8 / uint8 mma): what happens when the exact integer is outside int32.
// The cuda.tile docs leave integer overflow unspecified.
enum class IntegerOverflow : std::uint8_t {
  wrap,      // modulo 2^32, two's complement (PTX mma .s32 without .satfinite)
  saturate,  // clamp to [-2^31, 2^31-1] (PTX .satfinite)
};

struct Numerics {
  Mode mode = Mode::exact;
  // exact: the one final rounding (nearest_even, toward_zero, upward, downward, nearest_away, with
  // IEEE 754 §7.4 overflow). Other modes require nearest_even here.
  Rounding rounding = Rounding::nearest_even;
  // exact and sequential, int32 results only. In sequential mode saturation applies after each add.
  IntegerOverflow integer_overflow = IntegerOverflow::wrap;
  // hardware: the registered model's name.
  std::string model;

  static Numerics exact(Rounding r = Rounding::nearest_even) { return {Mode::exact, r, IntegerOverflow::wrap, {}}; }
  static Numerics sequential() { return {Mode::sequential, Rounding::nearest_even, IntegerOverflow::wrap, {}}; }
  static Numerics hardware(std::string model_name) {
    return {Mode::hardware, Rounding::nearest_even, IntegerOverflow::wrap, std::move(model_name)};
  }
  friend bool operator==(const Numerics&, const Numerics&) = default;
};

// "exact", "exact(toward_zero)", "sequential", "hardware(<model>)"; "+saturate" is appended when
// integer_overflow is saturate.
std::string to_string(const Numerics& n);
// The inverse of to_string; also accepts "sequential_f32" for "sequential". Throws
// std::invalid_argument naming what is wrong.
Numerics parse_numerics(std::string_view text);

}  // namespace blockscale::reference
