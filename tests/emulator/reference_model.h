// SPDX-License-Identifier: Apache-2.0
// A slow, obviously-correct oracle for the emulator's arithmetic engine, written from the text of
// ../shared/docs/numerics.md b.1-b.9 independently of emulator/engine.cpp: operands are decoded through their
// double values (std::ilogb for e(x)), every quantity is an exact binary fixed-point number held
// in a big integer (value = N * 2^-kFix), a term is aligned by truncating its exact value toward
// zero to a multiple of 2^(e_max - F) (which is b.3 step 4 restated on values), and the output
// conversions round that exact value by comparisons on big integers.
#pragma once

#include <cstdint>
#include <span>

#include "blockscale/emulator/params.h"
#include "blockscale/formats/format.h"

namespace blockscale::emulator::testing {

struct ReferenceDot {
  Format a_format = Format::float8_e4m3fn, b_format = Format::float8_e4m3fn;
  std::span<const std::uint32_t> a, b;
  Format scale_format = Format::float8_e8m0fnu;
  int block = 0;
  std::span<const std::uint32_t> scale_a, scale_b;
  std::uint32_t c = 0;
};

struct ReferenceResult {
  std::uint32_t d = 0;     // output code
  bool truncated = false;  // some term lost bits to the alignment grid (b.3 step 4) in some step
  // The exact sum of every product (scaled) and C, converted with the model's output rounding,
  // when no NaN/Inf is involved: what a model without truncation and without chaining would give.
  std::uint32_t exact_rounded = 0;
};

ReferenceResult reference_fdpa(const FdpaParams& p, const ReferenceDot& in);

// IEEE round-to-nearest-even addition of two fp32 (or two fp16) bit patterns with canonical NaN,
// from exact big-integer sums: the oracle for emulator::add_f32 / add_f16.
std::uint32_t reference_add(Format f, std::uint32_t x, std::uint32_t y);

}  // namespace blockscale::emulator::testing
