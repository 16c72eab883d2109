// SPDX-License-Identifier: Apache-2.0
// Fused single-pass row kernels (fused_avx512.cpp): for each chunk of 16 blocks held in AVX-512
// registers they take the block maxima, run the scale rule on the 16 maxima at once, multiply,
// round to the element format, pack, and write codes and scales straight into their places. They
// compute exactly what BlockQuantizer::quantize_row + layout::pack + to_layout compute (the same
// fp32 operations on the same operands, the same integer rounding as the formats library's AVX-512
// conversion); tests/quantize/fused_test.cpp compares the two byte for byte.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "blockscale/formats/detail/round.h"
#include "blockscale/layout/packing.h"
#include "quantizer.h"

namespace blockscale::quantize_detail {

// The CPU runs AVX-512 F/BW/VL/DQ and the library was built for x86-64 with GCC or Clang.
bool fused_kernels_available();
// ... and neither set_quantize_path(generic) nor the formats library's portable path
// (BLOCKSCALE_SIMD=portable) asks for the staged pipeline (tensor.cpp).
bool fused_kernels_enabled();

// max |x| over n inputs as fp32 bits, NaN elements left out when ignore_nan (any NaN bits above
// 0x7F800000 otherwise; fp32-subnormal inputs kept). What quantizer.cpp's max_bits computes.
std::uint32_t fused_abs_max_bits(const float* x, std::size_t n, bool ignore_nan);

// The first pass of a two-pass quantization (NVFP4 with the per-tensor amax from the data), over
// `rows` K-major rows of K inputs: the raw maximum of every block (max |x| as fp32 bits, NaN bits
// as they are whatever BlockNan says; the last block of a row may be short) to
// maxima[rows * ceil(K / block_size)], for FusedRowKernel to take instead of reading the blocks
// twice; returns the global amax as amax_bits computes it (NaN left out under ignore_nan,
// flush_elements applied, NaN canonical). Rows run on OpenMP threads.
std::uint32_t fused_block_maxima(const float* x, std::int64_t rows, std::size_t K, int block_size, bool ignore_nan,
                                 bool flush_elements, std::uint32_t* maxima);

// Everything a fused row kernel reads, fixed for one tensor.
struct FusedParams {
  detail::Target element;  // the element conversion (QuantizeOptions::element)
  detail::Target scale;    // the scale conversion of the rule (unused by even and the triton rules)
  ScaleRule rule = ScaleRule::rceil;
  bool divide = false;  // rceil: fp32(amax / max_e) instead of amax * fp32(1 / max_e)
  bool ignore_nan = false;
  bool flush_elements = false;
  bool flush_block = false;
  bool fast_scale = false;  // the scale conversion takes the fast round-to-nearest-even path
  // The scale layout puts blocks 4k .. 4k + 3 of a row side by side (col_part(4k + j) =
  // col_part(4k) + j for every k; linear and the 128x4 / 8x4 tiles do): four scales per store.
  bool col_runs_of_4 = false;
  RuleParams rule_params;
  // NVFP4 rules: the element multiplier of every ue4m3 scale code (BlockQuantizer::nvfp4_multiplier).
  // A lookup is 8 cycles where the rule's fp32 division (about 23 cycles of latency) would stall
  // the chain from the block maxima to the elements.
  alignas(64) float code_multiplier[128] = {};
};

class FusedRowKernel {
 public:
  // For the quantizer's format and options, writing codes in `packing` and scales at the column
  // offsets `col_parts` (layout::ScaleOffsets::col_parts, one per block of a row; kept by
  // reference). Throws std::logic_error when the kernels are not available or the element rounding
  // is stochastic (fused_path_applies says beforehand).
  FusedRowKernel(const BlockQuantizer& q, Packing packing, std::span<const std::int64_t> col_parts);

  // One row of n inputs (n a multiple of the block size, n / block_size <= col_parts.size()): the
  // codes, packed, to out[0, packed_bytes(packing, element, n)); the scale of block j to
  // scale_row[col_parts[j]] (scale_row = batch base + ScaleOffsets::row_part(r)). maxima: the
  // row's raw block maxima from fused_block_maxima, or null to compute them from x.
  void operator()(const float* x, std::size_t n, std::uint8_t* out, std::uint8_t* scale_row,
                  const std::uint32_t* maxima = nullptr) const {
    row_(params_, x, n, out, scale_row, col_parts_, maxima);
  }

  using RowFn = void (*)(const FusedParams&, const float*, std::size_t, std::uint8_t*, std::uint8_t*,
                         const std::int64_t*, const std::uint32_t*);

 private:
  FusedParams params_;
  const std::int64_t* col_parts_ = nullptr;
  RowFn row_ = nullptr;
};

}  // namespace blockscale::quantize_detail
