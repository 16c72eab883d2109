// SPDX-License-Identifier: Apache-2.0
#include "blockscale/harness/compare.h"

#include <algorithm>
#include <cstdio>
#include <stdexcept>

namespace blockscale::harness {

std::string to_string(OutputFormat f) {
  switch (f) {
    case OutputFormat::f32: return "f32";
    case OutputFormat::f16: return "f16";
    case OutputFormat::bf16: return "bf16";
  }
  return "?";
}

OutputFormat output_format(Format acc) {
  if (acc == Format::float32) return OutputFormat::f32;
  if (acc == Format::float16) return OutputFormat::f16;
  if (acc == Format::bfloat16) return OutputFormat::bf16;
  throw std::invalid_argument("no output format for " + std::string(info(acc).short_name));
}

namespace {

struct Layout {
  int bits;           // code width
  std::uint32_t exp;  // exponent field mask (in place)
  std::uint32_t man;  // mantissa mask
};
Layout layout(OutputFormat f) {
  switch (f) {
    case OutputFormat::f32: return {32, 0x7F800000u, 0x007FFFFFu};
    case OutputFormat::f16: return {16, 0x7C00u, 0x03FFu};
    case OutputFormat::bf16: return {16, 0x7F80u, 0x007Fu};
  }
  return {32, 0, 0};
}

bool is_nan(const Layout& l, std::uint32_t x) { return (x & l.exp) == l.exp && (x & l.man) != 0; }

// Sign-magnitude to a line where adjacent representable values differ by 1 (+0 and -0 meet).
std::int64_t ordinal(const Layout& l, std::uint32_t x) {
  const std::uint32_t sign = 1u << (l.bits - 1);
  const std::int64_t mag = x & (sign - 1);
  return (x & sign) ? -mag : mag;
}

}  // namespace

std::optional<std::uint64_t> ulp_distance(OutputFormat f, std::uint32_t x, std::uint32_t y) {
  const Layout l = layout(f);
  const bool nx = is_nan(l, x), ny = is_nan(l, y);
  if (nx || ny) return nx && ny ? std::optional<std::uint64_t>(0) : std::nullopt;
  const std::int64_t d = ordinal(l, x) - ordinal(l, y);
  return static_cast<std::uint64_t>(d < 0 ? -d : d);
}

void Stats::merge(const Stats& o, std::size_t max_examples) {
  cases += o.cases;
  outputs += o.outputs;
  mismatches += o.mismatches;
  worst_ulps = std::max(worst_ulps, o.worst_ulps);
  nan_mismatches += o.nan_mismatches;
  zero_sign_mismatches += o.zero_sign_mismatches;
  for (const Mismatch& m : o.examples) {
    if (examples.size() >= max_examples) break;
    examples.push_back(m);
  }
}

void compare_outputs(OutputFormat f, const std::vector<std::uint32_t>& device, const std::vector<std::uint32_t>& model,
                     std::uint64_t first_case, std::size_t rows, std::size_t cols, Stats& stats,
                     std::size_t max_examples) {
  if (device.size() != model.size()) {
    throw std::invalid_argument("compare: the device returned " + std::to_string(device.size()) +
                                " outputs but the model " + std::to_string(model.size()));
  }
  const std::size_t per = rows * cols;
  if (per == 0 || device.size() % per != 0) {
    throw std::invalid_argument("compare: " + std::to_string(device.size()) + " outputs are not whole cases of " +
                                std::to_string(rows) + " x " + std::to_string(cols));
  }
  const Layout l = layout(f);
  const std::uint32_t mask = l.bits == 32 ? 0xFFFFFFFFu : 0xFFFFu;
  const auto n = static_cast<std::ptrdiff_t>(device.size());
  // Count in parallel; collect examples afterwards in order (mismatches are rare or the run has
  // failed anyway, so the second pass stops early).
  std::uint64_t mism = 0, nan_m = 0, zero_m = 0, worst = 0;
#pragma omp parallel for reduction(+ : mism, nan_m, zero_m) reduction(max : worst) schedule(static)
  for (std::ptrdiff_t i = 0; i < n; ++i) {
    const std::uint32_t x = device[static_cast<std::size_t>(i)] & mask, y = model[static_cast<std::size_t>(i)] & mask;
    if (x == y) continue;
    ++mism;
    const auto d = ulp_distance(f, x, y);
    if (!d) {
      ++nan_m;
    } else {
      worst = std::max(worst, *d);
      if (*d == 0 && !is_nan(l, x)) ++zero_m;
    }
  }
  stats.cases += device.size() / per;
  stats.outputs += device.size();
  stats.mismatches += mism;
  stats.nan_mismatches += nan_m;
  stats.zero_sign_mismatches += zero_m;
  stats.worst_ulps = std::max(stats.worst_ulps, worst);
  if (mism == 0) return;
  for (std::size_t i = 0; i < device.size() && stats.examples.size() < max_examples; ++i) {
    const std::uint32_t x = device[i] & mask, y = model[i] & mask;
    if (x == y) continue;
    Mismatch m;
    m.case_index = first_case + i / per;
    m.row = i % per / cols;
    m.col = i % cols;
    m.device = x;
    m.model = y;
    m.ulps = ulp_distance(f, x, y);
    stats.examples.push_back(m);
  }
}

std::string hex_code(OutputFormat f, std::uint32_t code) {
  char buf[16];
  std::snprintf(buf, sizeof buf, f == OutputFormat::f32 ? "0x%08X" : "0x%04X", code);
  return buf;
}

}  // namespace blockscale::harness
