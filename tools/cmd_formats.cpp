// SPDX-License-Identifier: Apache-2.0
// `blockscale formats` (the format table) and `blockscale convert` (values through every format
// and rounding mode, with the resulting bits).
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "blockscale/formats.h"
#include "cli.h"

namespace blockscale::cli {
namespace {

std::string bits_string(Format f, std::uint32_t code) {
  std::string s;
  const auto& fi = info(f);
  const int w = width(f);
  for (int b = w - 1; b >= 0; --b) {
    s += ((code >> b) & 1) ? '1' : '0';
    const bool sign_end = fi.is_signed && b == w - 1;
    const bool exp_end = b == fi.mantissa_bits && fi.mantissa_bits > 0;
    if ((sign_end || exp_end) && b != 0) s += '.';
  }
  return s;
}

// The shortest decimal that reads back as v: an input like 2.6250000000001 must not print as
// 2.625, the tie whose conversion differs.
std::string value_string(double v) {
  char buf[64];
  for (int digits = 1; digits <= 17; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, v);
    if (std::isnan(v) || std::strtod(buf, nullptr) == v) break;
  }
  return buf;
}

int run_formats(const std::vector<std::string>& argv) {
  Args args(argv, {}, {"json"});
  args.no_positional();
  if (args.flag("json")) {
    std::printf("[\n");
    for (std::size_t i = 0; i < kFormatTable.size(); ++i) {
      const Format f = kFormatTable[i].id;
      const auto& fi = info(f);
      std::printf("  {\"name\": \"%s\", \"short\": \"%s\", \"bits\": %d, \"exponent_bits\": %d, \"mantissa_bits\": %d, "
                  "\"bias\": %d, \"signed\": %s, \"subnormals\": %s, \"inf\": %s, \"nan\": %s, \"max\": %.17g, "
                  "\"min_normal\": %.17g, \"min_positive\": %.17g}%s\n",
                  fi.name, fi.short_name, width(f), fi.exponent_bits, fi.mantissa_bits, fi.bias,
                  fi.is_signed ? "true" : "false", fi.has_subnormals ? "true" : "false", has_inf(f) ? "true" : "false",
                  has_nan(f) ? "true" : "false", to_double(f, max_finite_code(f)),
                  std::ldexp(1.0, emin(f)), to_double(f, min_positive_code(f)), i + 1 < kFormatTable.size() ? "," : "");
    }
    std::printf("]\n");
    return kExitOk;
  }
  std::printf("%-15s %-6s %4s %3s %3s %5s %-6s %-4s %-4s %-14s %-14s %-14s\n", "format", "short", "bits", "e", "m",
              "bias", "signed", "inf", "nan", "max", "min normal", "min positive");
  for (const FormatInfo& fi : kFormatTable) {
    const Format f = fi.id;
    std::printf("%-15s %-6s %4d %3d %3d %5d %-6s %-4s %-4s %-14s %-14s %-14s\n", fi.name, fi.short_name, width(f),
                fi.exponent_bits, fi.mantissa_bits, fi.bias, fi.is_signed ? "yes" : "no", has_inf(f) ? "yes" : "no",
                has_nan(f) ? "yes" : "no", value_string(to_double(f, max_finite_code(f))).c_str(),
                value_string(std::ldexp(1.0, emin(f))).c_str(),
                value_string(to_double(f, min_positive_code(f))).c_str());
  }
  return kExitOk;
}

struct Mode {
  std::string label;
  ConvertOptions options;
  bool float_input = false;  // the modelled function takes a float: the value is rounded to f32 first
};

std::vector<Mode> modes_for(Format f, const std::string& preset) {
  std::vector<Mode> modes;
  if (preset == "ieee" || preset == "all") {
    for (Rounding r : {Rounding::nearest_even, Rounding::toward_zero, Rounding::upward, Rounding::downward,
                       Rounding::nearest_away}) {
      modes.push_back({"ieee " + to_string(r), presets::ieee(r)});
    }
    ConvertOptions sat = presets::ieee();
    sat.overflow = Overflow::saturate;
    modes.push_back({"ieee nearest_even saturate", sat});
  }
  if (preset == "cuda" || preset == "all") {
    // __nv_cvt_float_to_* / __float2half_* and friends take a float, __nv_cvt_double_to_* a double:
    // each row says which it models. Overflow: fp8 and e8m0 have SATFINITE and NOSAT; f16 / bf16
    // overflow as IEEE 754 does (the preset's default, tried when neither is accepted).
    for (const bool from_double : {false, true}) {
      for (Rounding r : {Rounding::nearest_even, Rounding::toward_zero, Rounding::upward, Rounding::downward}) {
        bool any = false;
        for (const std::optional<Overflow> o : {std::optional{Overflow::saturate}, std::optional{Overflow::infinity},
                                                std::optional<Overflow>{}}) {
          if (any && !o) break;
          try {
            const ConvertOptions options = presets::cuda(f, Format::float32, from_double, r, o);
            modes.push_back({std::string(from_double ? "cuda double " : "cuda float ") + to_string(r) + " " +
                                 to_string(options.overflow),
                             options, !from_double});
            any = true;
          } catch (const std::invalid_argument&) {
            // CUDA has no such conversion: not listed.
          }
        }
      }
    }
  }
  if (preset == "ml_dtypes" || preset == "all") {
    // NumPy casts float64 arrays to the ml_dtypes types through float32 (ml_dtypes 0.6.0:
    // np.float64(2.6250000000001).astype(float8_e4m3fn) is 2.5, the float32 tie's even side).
    for (bool sat : {false, true}) {
      for (bool trunc : {false, true}) {
        try {
          modes.push_back({std::string("ml_dtypes") + (sat ? " saturate" : "") + (trunc ? " truncate" : ""),
                           presets::ml_dtypes(f, Format::float32, sat, trunc), true});
        } catch (const std::invalid_argument&) {
        }
      }
    }
  }
  return modes;
}

int run_convert(const std::vector<std::string>& argv) {
  Args args(argv, {"format", "preset"}, {"json"});
  std::vector<Format> formats;
  if (const auto name = args.get("format")) {
    const auto f = parse_format(*name);
    if (!f) throw UsageError("unknown format '" + *name + "' (see: blockscale formats)");
    formats.push_back(*f);
  } else {
    for (const FormatInfo& fi : kFormatTable) {
      if (fi.id != Format::float32) formats.push_back(fi.id);
    }
  }
  const std::string preset = args.get_or("preset", "all");
  if (preset != "all" && preset != "ieee" && preset != "cuda" && preset != "ml_dtypes") {
    throw UsageError("--preset must be one of all, ieee, cuda, ml_dtypes; got '" + preset + "'");
  }
  std::vector<double> values;
  for (const std::string& v : args.positional()) {
    char* end = nullptr;
    errno = 0;
    const double d = std::strtod(v.c_str(), &end);
    if (end == v.c_str() || *end != '\0') throw UsageError("'" + v + "' is not a number");
    // Out of double's range the value is not the one typed (1e999 reads as inf, 1e-400 as 0): say so.
    if (errno == ERANGE && (std::isinf(d) || d == 0.0))
      std::fprintf(stderr, "blockscale convert: note: %s is outside the range of a double and reads as %s\n", v.c_str(),
                   value_string(d).c_str());
    values.push_back(d);
  }
  if (values.empty()) {
    values = {0.3, -2.75, 464.0, 500.0, 0.0011, 3.0, -0.0, std::numeric_limits<double>::infinity(),
              std::numeric_limits<double>::quiet_NaN()};
  }
  const bool json = args.flag("json");
  if (json) std::printf("[\n");
  bool first = true;
  for (const Format f : formats) {
    const auto modes = modes_for(f, preset);
    if (!json) std::printf("\n== %s (%s) ==\n%-34s", to_string(f).c_str(), info(f).short_name, "mode \\ input");
    if (!json) {
      for (double v : values) std::printf(" %20s", value_string(v).c_str());
      std::printf("\n");
    }
    if (modes.empty() && !json) std::printf("(the %s preset has no conversion to %s)\n", preset.c_str(), to_string(f).c_str());
    for (const Mode& m : modes) {
      if (!json) std::printf("%-34s", m.label.c_str());
      for (double v : values) {
        const std::uint32_t code =
            m.float_input ? convert(f, static_cast<float>(v), m.options) : convert(f, v, m.options);
        if (json) {
          std::printf("%s  {\"format\": \"%s\", \"mode\": \"%s\", \"input\": \"%s\", \"code\": %u, \"value\": \"%s\"}",
                      first ? "" : ",\n", to_string(f).c_str(), m.label.c_str(), value_string(v).c_str(), code,
                      value_string(to_double(f, code)).c_str());
          first = false;
        } else {
          const std::string cell = bits_string(f, code) + "=" + value_string(to_double(f, code));
          std::printf(" %20s", cell.c_str());
        }
      }
      if (!json) std::printf("\n");
    }
  }
  if (json) std::printf("\n]\n");
  return kExitOk;
}

const Registrar formats_cmd({"formats", "list the number formats and their properties",
                             "blockscale formats [--json]\n  The format table: widths, bias, range, special values.",
                             run_formats});
const Registrar convert_cmd(
    {"convert", "convert values to every format in every rounding mode and show the bits",
     "blockscale convert [--format F] [--preset all|ieee|cuda|ml_dtypes] [--json] [VALUE...]\n"
     "  Converts each VALUE (a double; default: a set of edge cases) to F (default: every format) with\n"
     "  every mode of the chosen presets, and prints the code (sign.exponent.mantissa) and its value.\n"
     "  ieee rows round the double itself; 'cuda float' rows model CUDA's float-input functions and\n"
     "  ml_dtypes rows NumPy's casts, both of which see the value rounded to f32 first; 'cuda double'\n"
     "  rows model __nv_cvt_double_to_*.",
     run_convert});

}  // namespace
}  // namespace blockscale::cli
