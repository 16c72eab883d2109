// SPDX-License-Identifier: Apache-2.0
#include "blockscale/harness/compare.h"

#include <algorithm>
#include <cstdio>
#include <stdexcept>

#include "blockscale/formats/detail/enum_check.h"

namespace blockscale::harness {

std::string to_string(OutputFormat f) {
  switch (f) {
    case OutputFormat::f32: return "f32";
    case OutputFormat::f16: return "f16";
    case OutputFormat::bf16: return "bf16";
    case OutputFormat::f64: return "f64";
  }
  return "?";
}

OutputFormat output_format(Format acc) {
  if (acc == Format::float32) return OutputFormat::f32;
  if (acc == Format::float16) return OutputFormat::f16;
  if (acc == Format::bfloat16) return OutputFormat::bf16;
  throw std::invalid_argument("no output format for " + blockscale::to_string(acc));
}

OutputFormat output_format(const InstructionTarget& t) { return t.f64 ? OutputFormat::f64 : output_format(t.acc); }

std::size_t words_per_output(OutputFormat f) {
  blockscale::detail::require_enumerator(f, OutputFormat::f64, "OutputFormat", "OutputFormat");
  return f == OutputFormat::f64 ? 2 : 1;
}

namespace {

struct Layout {
  int bits;           // code width
  std::uint64_t exp;  // exponent field mask (in place)
  std::uint64_t man;  // mantissa mask
};
Layout layout(OutputFormat f) {
  switch (f) {
    case OutputFormat::f32: return {32, 0x7F800000u, 0x007FFFFFu};
    case OutputFormat::f16: return {16, 0x7C00u, 0x03FFu};
    case OutputFormat::bf16: return {16, 0x7F80u, 0x007Fu};
    case OutputFormat::f64: return {64, 0x7FF0000000000000ull, 0x000FFFFFFFFFFFFFull};
  }
  throw std::invalid_argument("OutputFormat = " + std::to_string(static_cast<unsigned>(f)) + " is not an OutputFormat");
}

bool is_nan(const Layout& l, std::uint64_t x) { return (x & l.exp) == l.exp && (x & l.man) != 0; }

// Sign-magnitude to a line where adjacent representable values differ by 1 (+0 and -0 meet).
// Magnitudes stay below 2^63, so the difference of two fits a signed 64-bit integer only up to
// that: distances are computed on the magnitudes' line with the sign applied separately.
std::uint64_t distance(const Layout& l, std::uint64_t x, std::uint64_t y) {
  const std::uint64_t sign = std::uint64_t{1} << (l.bits - 1);
  const std::uint64_t mx = x & (sign - 1), my = y & (sign - 1);
  if (((x ^ y) & sign) == 0) return mx > my ? mx - my : my - mx;
  return mx + my;  // opposite signs: through zero (at most 2 x 2^63 - 2: the largest finite ones)
}

// A code of the output: one word, or for f64 two (the low word first).
std::uint64_t code_at(OutputFormat f, const std::vector<std::uint32_t>& v, std::size_t i, std::uint32_t mask) {
  if (f == OutputFormat::f64) return f64_bits(&v[2 * i]);
  return v[i] & mask;
}

}  // namespace

std::optional<std::uint64_t> ulp_distance(OutputFormat f, std::uint64_t x, std::uint64_t y) {
  const Layout l = layout(f);
  const bool nx = is_nan(l, x), ny = is_nan(l, y);
  if (nx || ny) return nx && ny ? std::optional<std::uint64_t>(0) : std::nullopt;
  return distance(l, x, y);
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
  const std::size_t wpo = words_per_output(f);
  const std::size_t per = rows * cols, outputs = device.size() / wpo;
  if (per == 0 || device.size() % (per * wpo) != 0) {
    throw std::invalid_argument("compare: " + std::to_string(device.size()) + " words are not whole cases of " +
                                std::to_string(rows) + " x " + std::to_string(cols) + " " + to_string(f) + " outputs");
  }
  const Layout l = layout(f);
  const std::uint32_t mask = l.bits == 16 ? 0xFFFFu : 0xFFFFFFFFu;
  const auto n = static_cast<std::ptrdiff_t>(outputs);
  // Count in parallel; collect examples afterwards in order (mismatches are rare or the run has
  // failed anyway, so the second pass stops early).
  std::uint64_t mism = 0, nan_m = 0, zero_m = 0, worst = 0;
#pragma omp parallel for reduction(+ : mism, nan_m, zero_m) reduction(max : worst) schedule(static)
  for (std::ptrdiff_t i = 0; i < n; ++i) {
    const std::uint64_t x = code_at(f, device, static_cast<std::size_t>(i), mask),
                        y = code_at(f, model, static_cast<std::size_t>(i), mask);
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
  stats.cases += outputs / per;
  stats.outputs += outputs;
  stats.mismatches += mism;
  stats.nan_mismatches += nan_m;
  stats.zero_sign_mismatches += zero_m;
  stats.worst_ulps = std::max(stats.worst_ulps, worst);
  if (mism == 0) return;
  for (std::size_t i = 0; i < outputs && stats.examples.size() < max_examples; ++i) {
    const std::uint64_t x = code_at(f, device, i, mask), y = code_at(f, model, i, mask);
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

std::string hex_code(OutputFormat f, std::uint64_t code) {
  char buf[24];
  if (f == OutputFormat::f64) {
    std::snprintf(buf, sizeof buf, "0x%016llX", static_cast<unsigned long long>(code));
  } else {
    std::snprintf(buf, sizeof buf, f == OutputFormat::f32 ? "0x%08X" : "0x%04X", static_cast<unsigned>(code));
  }
  return buf;
}

}  // namespace blockscale::harness
