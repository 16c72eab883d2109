// SPDX-License-Identifier: Apache-2.0
// fp8 with fp32 scales: the Hopper-era recipes that scale a whole tensor, each row, or blocks of
// 1 x 128 or 128 x 128 elements by an arbitrary fp32 value (cuBLASLt SCALAR_32F, OUTER_VEC_32F,
// VEC128_32F and BLK128x128_32F; DeepSeek-V3 §3.3 and DeepGEMM; torchao float8 training). Unlike
// the MX and NVFP4 block formats (block_format.h), the scales are not powers of two in general
// and a block may span rows, so these tensors have a type of their own.
//
// Each recipe reproduces the named system's fp32 operations bit for bit (docs/quantization.md,
// "fp8 with fp32 scales"):
//   deepgemm        DeepGEMM deep_gemm/utils/math.py (per_token_cast_to_fp8, per_block_cast_to_fp8,
//                   per_custom_dims_cast_to_fp8, use_ue8m0 = False): amax = max |x| over the
//                   block in fp32, clamped below at fp32(1e-4); sf = `amax / 448.0`, which
//                   PyTorch's CUDA division by a scalar computes as fp32(amax * fp32(1 / 448));
//                   q = e4m3(fp32(x * fp32(1 / sf))) rounded to nearest even (torch's cast); the
//                   GEMM multiplies by sf.
//   deepgemm_ue8m0  the same with use_ue8m0 = True: sf rounded up to a power of two from its bits
//                   (ceil_to_ue8m0: exponent field + 1 when the fraction is nonzero, clamped to
//                   1..254), the form DeepGEMM uses for Blackwell.
//   torchao         torchao.float8 (tensorwise and rowwise "axiswise" scaling): amax in fp32,
//                   scale = fp32(448 / max(amax, 1e-12)) computed in double as PyTorch does a
//                   scalar over a tensor, (1 / max(amax, 1e-12)) * 448, q = e4m3(clamp(
//                   fp32(x * scale), -448, 448)); the GEMM multiplies by fp32(1 / scale) (the
//                   `reciprocal()` torchao passes to torch._scaled_mm). e5m2 uses 57344.
// Inputs must be finite: every recipe's amax of a NaN or Inf is NaN or Inf, and the tensor it
// makes is garbage; quantize_fp8_scaled throws instead.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "blockscale/formats/format.h"
#include "blockscale/quantize/tensor.h"

namespace blockscale {

// Which elements share one fp32 scale. K is the reduction axis; a "row" is one row of A (M) or
// one column of B (N), whichever side the tensor is.
enum class Fp8Granularity : std::uint8_t {
  tensor,         // one scale for the whole tensor
  row,            // one per row: all of K (cuBLASLt OUTER_VEC_32F, torch rowwise)
  block_1x128,    // one per row and 128 elements of K (VEC128_32F; DeepSeek-V3 activations)
  block_128x128,  // one per 128 rows and 128 elements of K (BLK128x128_32F; DeepSeek-V3 weights)
};
std::string_view to_string(Fp8Granularity g);

enum class Fp8ScaleRecipe : std::uint8_t { deepgemm, deepgemm_ue8m0, torchao };
std::string_view to_string(Fp8ScaleRecipe r);

// The recipes by the names the command line and the Python module give them: a scale recipe at a
// granularity (deepgemm_1x128, deepgemm_128x128, their _ue8m0 forms, torchao_tensorwise,
// torchao_rowwise).
struct NamedFp8Recipe {
  const char* name;
  Fp8ScaleRecipe recipe;
  Fp8Granularity granularity;
};
std::span<const NamedFp8Recipe> named_fp8_recipes();
// nullptr for an unknown name.
const NamedFp8Recipe* find_fp8_recipe(std::string_view name);

struct Fp8ScaledMatrix {
  static constexpr std::int64_t kBlock = 128;  // K elements (and rows) per block

  Format element = Format::float8_e4m3fn;  // float8_e4m3fn or float8_e5m2
  Fp8Granularity granularity = Fp8Granularity::tensor;
  Fp8ScaleRecipe recipe = Fp8ScaleRecipe::deepgemm;
  std::int64_t rows = 0, k = 0;
  std::vector<std::uint8_t> codes;  // rows x k, row-major (K-major whichever side)
  // The fp32 multipliers the GEMM applies (dequantized value = element * scale): tensor 1 value,
  // row `rows`, block_1x128 rows x k_blocks(), block_128x128 row_blocks() x k_blocks(), row-major.
  std::vector<float> scales;

  // Rounded up without k + 127, which would overflow for k near INT64_MAX.
  std::int64_t k_blocks() const { return k / kBlock + (k % kBlock != 0); }
  std::int64_t row_blocks() const { return rows / kBlock + (rows % kBlock != 0); }
  // How many scales the granularity holds for rows x k (the size `scales` must have).
  std::size_t scale_count() const;
  // The scale of row `row` in K block `k_block` (128 elements of K), whatever the granularity.
  float scale(std::int64_t row, std::int64_t k_block) const;
};

// Quantizes x (row-major): with KAxis::last x is rows x k (A: M x K); with KAxis::first it is
// k x rows (B: K x N), and the result is stored transposed, rows = N. Throws std::invalid_argument
// naming the rule broken: a size that does not match, a non-finite input, an element format other
// than e4m3 / e5m2, deepgemm recipes with e5m2 (DeepGEMM quantizes to e4m3 only), torchao with a
// block granularity (torchao.float8 scales tensorwise or rowwise).
Fp8ScaledMatrix quantize_fp8_scaled(std::span<const float> x, std::int64_t rows, std::int64_t k, KAxis axis,
                                    Format element, Fp8Granularity granularity, Fp8ScaleRecipe recipe);

}  // namespace blockscale
