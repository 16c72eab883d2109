// SPDX-License-Identifier: Apache-2.0
#include "blockscale/golden/operation.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "blockscale/formats/detail/ieee_mode.h"
#include "common.h"

#ifndef BLOCKSCALE_VERSION
#error "BLOCKSCALE_VERSION must be defined by the build (src/golden/CMakeLists.txt)"
#endif

namespace blockscale::golden {

std::string to_string(DataKind d) {
  switch (d) {
    case DataKind::mixed: return "mixed";
    case DataKind::edge: return "edge";
    case DataKind::random: return "random";
    case DataKind::realistic: return "realistic";
  }
  return "?";
}

std::optional<DataKind> parse_data_kind(std::string_view s) {
  for (DataKind d : {DataKind::mixed, DataKind::edge, DataKind::random, DataKind::realistic}) {
    if (s == to_string(d)) return d;
  }
  return std::nullopt;
}

std::string generator_version() { return std::string("blockscale ") + BLOCKSCALE_VERSION; }

std::uint64_t operation_seed(std::uint64_t base, std::string_view id) {
  std::uint64_t state = base ^ detail::fnv1a(id);
  return detail::splitmix64(state);
}

void Operation::compute_many(std::span<const std::uint64_t> in, std::size_t cases,
                             std::span<std::uint64_t> out) const {
  const auto f = fields();
  const std::size_t ni = input_words(f), no = words_per_case(f) - ni;
  for (std::size_t i = 0; i < cases; ++i) compute(in.subspan(i * ni, ni), out.subspan(i * no, no));
}

GoldenFile generate(const Operation& op, const GenerateOptions& o) {
  // The inputs are drawn and the outputs computed with host float arithmetic (subnormal inputs
  // among them): in IEEE mode whatever the caller's (formats/detail/ieee_mode.h).
  const blockscale::detail::IeeeMode ieee;
  GoldenFile f;
  f.name = op.file_stem() + ".txt";
  Header& h = f.header;
  h.generator = generator_version();
  h.kind = op.kind();
  h.ops = op.op_lines();
  h.modes = op.mode_lines();
  h.fields = op.fields();
  h.seed = o.seed;
  h.data = to_string(o.data);
  h.notes = op.notes();
  // A file is built in memory (inputs, outputs, words and text: about 40 bytes per word), so its
  // size is bounded up front rather than by std::bad_alloc half-way: 2^25 words, about 1.3 GB.
  constexpr std::uint64_t kMaxWords = std::uint64_t{1} << 25;
  const std::uint64_t planned = static_cast<std::uint64_t>(o.cases.value_or(op.default_cases()));
  if (planned > kMaxWords / std::max<std::size_t>(words_per_case(h.fields), 1)) {
    throw std::invalid_argument("golden " + op.id() + ": " + std::to_string(planned) + " cases of " +
                                std::to_string(words_per_case(h.fields)) + " words exceed the " +
                                std::to_string(kMaxWords) + " words one file may hold (about 1.3 GB to build); " +
                                "generate at most " + std::to_string(kMaxWords / words_per_case(h.fields)) +
                                " cases per file");
  }
  const std::vector<std::uint64_t> in = op.generate_inputs(o);
  const std::size_t ni = input_words(h.fields);
  const std::size_t no = words_per_case(h.fields) - ni;
  const std::size_t n = ni ? in.size() / ni : 0;
  std::vector<std::uint64_t> out(n * no);
  op.compute_many(in, n, out);
  f.words_per_case = ni + no;
  f.words.resize(n * (ni + no));
  for (std::size_t i = 0; i < n; ++i) {
    std::copy_n(in.begin() + static_cast<std::ptrdiff_t>(i * ni), ni,
                f.words.begin() + static_cast<std::ptrdiff_t>(i * (ni + no)));
    std::copy_n(out.begin() + static_cast<std::ptrdiff_t>(i * no), no,
                f.words.begin() + static_cast<std::ptrdiff_t>(i * (ni + no) + ni));
  }
  f.case_lines.resize(n);
  for (std::size_t i = 0; i < n; ++i) f.case_lines[i] = i + 1;
  h.cases = n;
  return f;
}

std::unique_ptr<Operation> make_operation(const GoldenFile& f) {
  switch (f.header.kind) {
    case SetKind::conversion: return detail::conversion_from_file(f);
    case SetKind::quantization: return detail::quantization_from_file(f);
    case SetKind::layout: return detail::layout_from_file(f);
    case SetKind::instruction: return detail::instruction_from_file(f);
    case SetKind::gemm: return detail::gemm_from_file(f);
  }
  throw GoldenError(f.name, f.header.kind_line, "unknown @kind");
}

std::unique_ptr<Operation> operation_from_id(std::string_view id) {
  const std::size_t colon = id.find(':');
  const std::string_view kind = id.substr(0, colon);
  const std::string_view rest = colon == std::string_view::npos ? std::string_view() : id.substr(colon + 1);
  if (colon == std::string_view::npos || rest.empty()) {
    detail::invalid("operation id " + quote(id) +
                    " is not <kind>:<operation> (convert:, quantize:, layout:, grouped_layout:, weight_interleave:, pack:, "
                    "instruction:, gemm:) "
                    "or a family (" +
                    [] {
                      std::string s;
                      for (const auto& n : family_names()) s += (s.empty() ? "" : ", ") + n;
                      return s;
                    }() +
                    ")");
  }
  if (kind == "convert") return detail::conversion_from_id(rest);
  if (kind == "quantize") return detail::quantization_from_id(rest);
  if (kind == "layout") return detail::scale_layout_from_id(rest);
  if (kind == "grouped_layout") return detail::grouped_layout_from_id(rest);
  if (kind == "weight_interleave") return detail::weight_interleave_from_id(rest);
  if (kind == "pack") return detail::packing_from_id(rest);
  if (kind == "instruction") return detail::instruction_from_id(rest);
  if (kind == "gemm") return detail::gemm_from_id(rest);
  detail::invalid("unknown operation kind " + quote(kind) + " in " + quote(id) +
                  " (convert, quantize, layout, grouped_layout, weight_interleave, pack, instruction, gemm)");
}

std::vector<std::string> family_names() {
  return {"conversions", "quantization", "layouts", "instructions", "gemms"};
}

std::vector<std::unique_ptr<Operation>> family(std::string_view name) {
  if (name == "conversions") return detail::conversion_family();
  if (name == "quantization") return detail::quantization_family();
  if (name == "layouts") return detail::layout_family();
  if (name == "instructions") return detail::instruction_family();
  if (name == "gemms") return detail::gemm_family();
  detail::invalid("unknown family " + quote(name) +
                  " (conversions, quantization, layouts, instructions, gemms)");
}

namespace detail {

std::vector<std::string> split(std::string_view s, char sep) {
  std::vector<std::string> out;
  std::size_t pos = 0;
  while (true) {
    const std::size_t e = s.find(sep, pos);
    out.emplace_back(s.substr(pos, e == std::string_view::npos ? std::string_view::npos : e - pos));
    if (e == std::string_view::npos) break;
    pos = e + 1;
  }
  return out;
}

std::string hex(std::uint64_t v, int digits) {
  static const char* h = "0123456789abcdef";
  int n = digits;
  if (n == 0) {
    n = 1;
    while (n < 16 && (v >> (4 * n)) != 0) ++n;
  }
  std::string s(static_cast<std::size_t>(n), '0');
  for (int d = 0; d < n; ++d) s[static_cast<std::size_t>(n - 1 - d)] = h[(v >> (4 * d)) & 15];
  return s;
}

std::optional<std::uint32_t> exact_code(Format f, double v) {
  if (std::isnan(v)) return std::nullopt;
  ConvertOptions o;
  o.rounding = Rounding::nearest_even;
  o.overflow = Overflow::ieee;
  o.negative = NegativeRule::nan;
  o.zero = ZeroRule::nan;
  std::uint32_t code = 0;
  try {
    code = convert(f, v, o);
  } catch (const std::invalid_argument&) {
    return std::nullopt;
  }
  if (is_nan(f, code)) return std::nullopt;
  const double back = to_double(f, code);
  if (back != v || std::signbit(back) != std::signbit(v)) return std::nullopt;
  return code;
}

void check_fields(const GoldenFile& f, const std::vector<FieldSpec>& expected) {
  if (f.header.fields != expected) {
    throw GoldenError(f.name, f.header.fields_line,
                      "@fields " + quote(fields_string(f.header.fields), 200) +
                          " do not match the operation, which takes " + quote(fields_string(expected), 200));
  }
}

void fail_op(const GoldenFile& f, std::size_t i, const std::string& message) {
  const std::size_t line = i < f.header.op_lines.size() ? f.header.op_lines[i] : 0;
  throw GoldenError(f.name, line, message);
}

std::size_t case_count(const GenerateOptions& o, std::size_t fallback) { return o.cases.value_or(fallback); }

}  // namespace detail
}  // namespace blockscale::golden
