// SPDX-License-Identifier: Apache-2.0
#include "blockscale/quantize/fp8_scaled.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "blockscale/formats/convert.h"
#include "blockscale/formats/detail/enum_check.h"
#include "blockscale/formats/detail/ieee_mode.h"
#include "blockscale/formats/presets.h"

namespace blockscale {

std::string_view to_string(Fp8Granularity g) {
  switch (g) {
    case Fp8Granularity::tensor: return "tensor";
    case Fp8Granularity::row: return "row";
    case Fp8Granularity::block_1x128: return "1x128";
    case Fp8Granularity::block_128x128: return "128x128";
  }
  return "an unknown granularity";
}

std::string_view to_string(Fp8ScaleRecipe r) {
  switch (r) {
    case Fp8ScaleRecipe::deepgemm: return "deepgemm";
    case Fp8ScaleRecipe::deepgemm_ue8m0: return "deepgemm_ue8m0";
    case Fp8ScaleRecipe::torchao: return "torchao";
  }
  return "an unknown recipe";
}

namespace {
constexpr NamedFp8Recipe kNamedFp8Recipes[] = {
    {"deepgemm_1x128", Fp8ScaleRecipe::deepgemm, Fp8Granularity::block_1x128},
    {"deepgemm_128x128", Fp8ScaleRecipe::deepgemm, Fp8Granularity::block_128x128},
    {"deepgemm_1x128_ue8m0", Fp8ScaleRecipe::deepgemm_ue8m0, Fp8Granularity::block_1x128},
    {"deepgemm_128x128_ue8m0", Fp8ScaleRecipe::deepgemm_ue8m0, Fp8Granularity::block_128x128},
    {"torchao_tensorwise", Fp8ScaleRecipe::torchao, Fp8Granularity::tensor},
    {"torchao_rowwise", Fp8ScaleRecipe::torchao, Fp8Granularity::row},
};
}  // namespace

std::span<const NamedFp8Recipe> named_fp8_recipes() { return kNamedFp8Recipes; }

const NamedFp8Recipe* find_fp8_recipe(std::string_view name) {
  for (const NamedFp8Recipe& r : kNamedFp8Recipes) {
    if (name == r.name) return &r;
  }
  return nullptr;
}

std::size_t Fp8ScaledMatrix::scale_count() const {
  switch (granularity) {
    case Fp8Granularity::tensor: return 1;
    case Fp8Granularity::row: return static_cast<std::size_t>(rows);
    case Fp8Granularity::block_1x128: return static_cast<std::size_t>(rows * k_blocks());
    case Fp8Granularity::block_128x128: return static_cast<std::size_t>(row_blocks() * k_blocks());
  }
  return 0;
}

float Fp8ScaledMatrix::scale(std::int64_t row, std::int64_t k_block) const {
  switch (granularity) {
    case Fp8Granularity::tensor: return scales[0];
    case Fp8Granularity::row: return scales[static_cast<std::size_t>(row)];
    case Fp8Granularity::block_1x128: return scales[static_cast<std::size_t>(row * k_blocks() + k_block)];
    case Fp8Granularity::block_128x128:
      return scales[static_cast<std::size_t>(row / kBlock * k_blocks() + k_block)];
  }
  return 0.0f;
}

namespace {

// DeepGEMM's ceil_to_ue8m0: the exponent field, plus one when the fraction is nonzero, clamped
// to 1..254, as an fp32 power of two.
float ceil_to_ue8m0(float sf) {
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(std::fabs(sf));
  const int e = static_cast<int>((bits >> 23) & 0xFFu) + ((bits & 0x7FFFFFu) != 0 ? 1 : 0);
  return std::bit_cast<float>(static_cast<std::uint32_t>(std::clamp(e, 1, 254)) << 23);
}

// The operations below are PyTorch's on a CUDA device, where these recipes run: fp32 (or double)
// tensors, each operation rounded to nearest even; the build has -ffp-contract=off, so no
// multiply here fuses with another operation.
struct Fp8BlockScale {
  float multiplier;  // elements become fp32(x * multiplier)
  float gemm_scale;  // what the GEMM multiplies by
};

Fp8BlockScale block_scale(float amax, Fp8ScaleRecipe recipe, Format element) {
  if (recipe == Fp8ScaleRecipe::torchao) {
    // amax_to_scale: amax.to(float64); max / clamp(amax, min=1e-12) in double; .to(float32).
    // A Python scalar divided by a tensor is `tensor.reciprocal() * scalar` in PyTorch
    // (Tensor.__rtruediv__), so the double quotient is rounded twice: 1 / amax, then * max.
    const double max = element == Format::float8_e4m3fn ? 448.0 : 57344.0;
    const double clamped = std::max(static_cast<double>(amax), 1e-12);
    const auto scale = static_cast<float>(1.0 / clamped * max);
    // The GEMM takes scale.reciprocal(): fp32 1 / scale, correctly rounded.
    return {scale, 1.0f / scale};
  }
  // deepgemm: x_amax.clamp(1e-4) (the bound is fp32(1e-4)); sf = x_amax / 448.0. PyTorch's CUDA
  // true division by a CPU scalar multiplies by the scalar's reciprocal (computed in fp32).
  const float clamped = std::max(amax, static_cast<float>(1e-4));
  float sf = clamped * (1.0f / 448.0f);
  if (recipe == Fp8ScaleRecipe::deepgemm_ue8m0) sf = ceil_to_ue8m0(sf);
  // x * (1.0 / sf): 1.0 / tensor is sf.reciprocal() * 1.0, an fp32 reciprocal.
  return {1.0f / sf, sf};
}

void check(bool ok, const std::string& rule) {
  if (!ok) throw std::invalid_argument("quantize_fp8_scaled: " + rule);
}

}  // namespace

Fp8ScaledMatrix quantize_fp8_scaled(std::span<const float> x, std::int64_t rows, std::int64_t k, KAxis axis,
                                    Format element, Fp8Granularity granularity, Fp8ScaleRecipe recipe) {
  const detail::IeeeMode ieee;
  detail::require_enumerator(axis, KAxis::first, "KAxis", "quantize_fp8_scaled: axis");
  detail::require_enumerator(granularity, Fp8Granularity::block_128x128, "Fp8Granularity", "quantize_fp8_scaled: granularity");
  detail::require_enumerator(recipe, Fp8ScaleRecipe::torchao, "Fp8ScaleRecipe", "quantize_fp8_scaled: recipe");
  check(element == Format::float8_e4m3fn || element == Format::float8_e5m2,
        "the element format must be float8_e4m3fn or float8_e5m2, got " + to_string(element));
  check(recipe == Fp8ScaleRecipe::torchao || element == Format::float8_e4m3fn,
        std::string(to_string(recipe)) + " quantizes to float8_e4m3fn only (DeepGEMM's casts divide by 448)");
  check(recipe != Fp8ScaleRecipe::torchao ||
            (granularity == Fp8Granularity::tensor || granularity == Fp8Granularity::row),
        "torchao scales tensorwise or rowwise (torchao.float8), not in " +
            std::string(to_string(granularity)) + " blocks");
  check(rows >= 1 && k >= 1 && rows <= (std::int64_t{1} << 31) && k <= (std::int64_t{1} << 31),
        "rows and k must be in 1..2^31, got " + std::to_string(rows) + " and " + std::to_string(k));
  check(static_cast<std::int64_t>(x.size()) == rows * k, "x holds " + std::to_string(x.size()) +
                                                             " values, but " + std::to_string(rows) + " x " +
                                                             std::to_string(k) + " were described");
  const auto value = [&](std::int64_t r, std::int64_t kk) {
    return x[static_cast<std::size_t>(axis == KAxis::last ? r * k + kk : kk * rows + r)];
  };
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (!std::isfinite(x[i])) {
      const auto r = static_cast<std::int64_t>(i) / (axis == KAxis::last ? k : rows);
      const auto c = static_cast<std::int64_t>(i) % (axis == KAxis::last ? k : rows);
      check(false, "every input must be finite (a NaN or Inf makes the scale's amax NaN or Inf); element (" +
                       std::to_string(r) + ", " + std::to_string(c) + ") is " + std::to_string(x[i]));
    }
  }

  Fp8ScaledMatrix m;
  m.element = element;
  m.granularity = granularity;
  m.recipe = recipe;
  m.rows = rows;
  m.k = k;
  m.codes.resize(static_cast<std::size_t>(rows * k));
  // The blocks of the granularity as row and K ranges: [r0, r1) x [k0, k1).
  std::int64_t row_span = rows, k_span = k;
  switch (granularity) {
    case Fp8Granularity::tensor: break;
    case Fp8Granularity::row: row_span = 1; break;
    case Fp8Granularity::block_1x128: row_span = 1, k_span = Fp8ScaledMatrix::kBlock; break;
    case Fp8Granularity::block_128x128: row_span = k_span = Fp8ScaledMatrix::kBlock; break;
  }
  const std::int64_t row_groups = (rows + row_span - 1) / row_span;
  const std::int64_t k_groups = (k + k_span - 1) / k_span;
  m.scales.resize(static_cast<std::size_t>(row_groups * k_groups));
  const ConvertOptions rne = presets::ml_dtypes(element);  // torch's cast: nearest even, finite here
  const float limit = element == Format::float8_e4m3fn ? 448.0f : 57344.0f;
#pragma omp parallel for schedule(dynamic, 1) collapse(2)
  for (std::int64_t g = 0; g < row_groups; ++g) {
    for (std::int64_t q = 0; q < k_groups; ++q) {
      const detail::IeeeMode thread_ieee;  // each thread's own mode (detail/ieee_mode.h)
      const std::int64_t r0 = g * row_span, r1 = std::min(rows, r0 + row_span);
      const std::int64_t k0 = q * k_span, k1 = std::min(k, k0 + k_span);
      float amax = 0.0f;  // max |x| is exact in fp32, in any order
      for (std::int64_t r = r0; r < r1; ++r)
        for (std::int64_t kk = k0; kk < k1; ++kk) amax = std::max(amax, std::fabs(value(r, kk)));
      const Fp8BlockScale s = block_scale(amax, recipe, element);
      m.scales[static_cast<std::size_t>(g * k_groups + q)] = s.gemm_scale;
      for (std::int64_t r = r0; r < r1; ++r)
        for (std::int64_t kk = k0; kk < k1; ++kk) {
          float y = value(r, kk) * s.multiplier;
          // torchao's to_fp8_saturated clamps first; DeepGEMM's products stay below 464, which
          // rounds to 448, so its cast cannot overflow.
          if (recipe == Fp8ScaleRecipe::torchao) y = std::clamp(y, -limit, limit);
          m.codes[static_cast<std::size_t>(r * k + kk)] = static_cast<std::uint8_t>(convert(element, y, rne));
        }
    }
  }
  return m;
}

}  // namespace blockscale
