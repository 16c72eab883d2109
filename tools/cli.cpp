// SPDX-License-Identifier: Apache-2.0
#include "cli.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <optional>

#include "blockscale/harness/compare.h"

namespace blockscale::cli {

namespace {

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

}  // namespace

Args::Args(std::vector<std::string> argv, std::vector<std::string> value_options, std::vector<std::string> flags) {
  for (std::size_t i = 0; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (a.rfind("--", 0) != 0 || a == "--") {
      positional_.push_back(a);
      continue;
    }
    std::string name = a.substr(2);
    std::optional<std::string> value;
    if (const auto eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
    }
    if (contains(flags, name)) {
      if (value) throw UsageError("option --" + name + " takes no value");
      flags_set_.push_back(name);
    } else if (contains(value_options, name)) {
      if (!value) {
        if (i + 1 >= argv.size()) throw UsageError("option --" + name + " needs a value");
        value = argv[++i];
      }
      values_[name] = *value;
    } else {
      throw UsageError("unknown option --" + name);
    }
  }
}

bool Args::flag(const std::string& name) const { return contains(flags_set_, name); }

std::optional<std::string> Args::get(const std::string& name) const {
  if (auto it = values_.find(name); it != values_.end()) return it->second;
  return std::nullopt;
}

std::string Args::get_or(const std::string& name, const std::string& fallback) const {
  return get(name).value_or(fallback);
}

std::int64_t Args::get_int(const std::string& name, std::int64_t fallback, std::int64_t lo, std::int64_t hi) const {
  const auto v = get(name);
  if (!v) return fallback;
  std::int64_t r = 0;
  const auto [p, ec] = std::from_chars(v->data(), v->data() + v->size(), r);
  if (ec != std::errc() || p != v->data() + v->size()) {
    throw UsageError("option --" + name + " expects an integer, got '" + *v + "'");
  }
  if (r < lo || r > hi) {
    throw UsageError("option --" + name + " must be in " + std::to_string(lo) + ".." + std::to_string(hi) +
                     ", got " + *v);
  }
  return r;
}

std::uint64_t Args::get_u64(const std::string& name, std::uint64_t fallback) const {
  const auto v = get(name);
  if (!v) return fallback;
  std::uint64_t r = 0;
  int base = 10;
  const char* b = v->data();
  const char* e = v->data() + v->size();
  if (v->size() > 2 && (*v)[0] == '0' && ((*v)[1] == 'x' || (*v)[1] == 'X')) {
    base = 16;
    b += 2;
  }
  const auto [p, ec] = std::from_chars(b, e, r, base);
  if (ec != std::errc() || p != e) {
    throw UsageError("option --" + name + " expects an unsigned integer, got '" + *v + "'");
  }
  return r;
}

namespace {
std::map<std::string, Command>& registry() {
  static std::map<std::string, Command> r;
  return r;
}
}  // namespace

void register_command(Command c) {
  const std::string name = c.name;
  registry()[name] = std::move(c);
}

const std::map<std::string, Command>& commands() { return registry(); }

std::string json_number(double x, int digits) {
  if (!std::isfinite(x)) return "null";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.*g", digits, x);
  return buf;
}

std::string json_escape(const std::string& s) {
  std::string r;
  r.reserve(s.size() + 2);
  for (const char ch : s) {
    switch (ch) {
      case '"': r += "\\\""; break;
      case '\\': r += "\\\\"; break;
      case '\n': r += "\\n"; break;
      case '\t': r += "\\t"; break;
      default:
        if (static_cast<unsigned char>(ch) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", ch);
          r += buf;
        } else {
          r += ch;
        }
    }
  }
  return r;
}

void UlpComparison::add(std::uint32_t got, std::uint32_t reference) {
  ++outputs;
  const std::optional<std::uint64_t> ulps = harness::ulp_distance(harness::OutputFormat::f32, got, reference);
  if (!ulps) {  // NaN on one side only
    ++nan_mismatch;
    ++differ;
    return;
  }
  const std::uint64_t d = *ulps;
  if (d != 0) ++differ;
  max_ulp = std::max(max_ulp, d);
  for (int b = 0; b < kUlpBucketCount; ++b)
    if (d >= kUlpBuckets[b].lo && d <= kUlpBuckets[b].hi) ++histogram[b];
}

}  // namespace blockscale::cli
