// SPDX-License-Identifier: Apache-2.0
// Which implementation quantize() and quantize_into() run. Both give the same bytes
// (tests/quantize/fused_test.cpp compares them on millions of blocks per recipe); the switch exists
// so that tests and benchmarks can run each one.
#pragma once

#include <cstdint>

#include "blockscale/quantize/options.h"

namespace blockscale::quantize_detail {

enum class QuantizePath : std::uint8_t {
  // The fused single-pass AVX-512 row kernels wherever fused_path_applies, else generic.
  automatic,
  // The staged pipeline: block maxima, scale rule, x * m, the formats library's bulk conversion,
  // layout::pack, layout::to_layout.
  generic,
};

// Process-wide; automatic unless set.
void set_quantize_path(QuantizePath p);
QuantizePath quantize_path();

// Whether quantize / quantize_into with these options run the fused kernels now: quantize_path()
// is automatic, the formats library's automatic bulk path (BLOCKSCALE_SIMD,
// detail::set_automatic_path) is not `portable`, the CPU has AVX-512 F/BW/VL/DQ, and the element
// rounding is not stochastic. Every block format, scale rule, NaN / Inf / subnormal policy, other
// element option, packing, byte scale layout, K axis, K tail and batch takes the fused kernels
// then; the description does not enter the decision.
bool fused_path_applies(const QuantizeOptions& o);

}  // namespace blockscale::quantize_detail
