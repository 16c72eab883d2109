// SPDX-License-Identifier: Apache-2.0
#include "cli.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <optional>
#include <stdexcept>


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
      if (contains(flags_set_, name)) throw UsageError("option --" + name + " is given twice");
      flags_set_.push_back(name);
    } else if (contains(value_options, name)) {
      if (!value) {
        if (i + 1 >= argv.size()) throw UsageError("option --" + name + " needs a value");
        // A missing value must not take the next option as its value (`--out --json` would write
        // into a directory named --json); a value that starts with "--" is written --name=value.
        if (argv[i + 1].rfind("--", 0) == 0)
          throw UsageError("option --" + name + " needs a value, got the option " + argv[i + 1] + " (write --" + name +
                           "=VALUE for a value that starts with --)");
        value = argv[++i];
      }
      // Given twice, one of the two would be dropped silently (a script's default and a user's own).
      if (!values_.emplace(name, *value).second) throw UsageError("option --" + name + " is given twice");
    } else {
      throw UsageError("unknown option --" + name);
    }
  }
}

void Args::no_positional() const {
  if (!positional_.empty()) throw UsageError("unexpected argument '" + positional_.front() + "'");
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


void UlpComparison::add(std::uint32_t got, std::uint32_t reference) {
  ++outputs;
  if (got != reference) ++differ;
  const bool got_nan = is_nan(format, got), reference_nan = is_nan(format, reference);
  if (got_nan != reference_nan) {  // NaN on one side only
    ++nan_mismatch;
    return;
  }
  // Representable values between the two (sign-magnitude codes, +0 and -0 meet); NaNs are 0 apart.
  const std::uint32_t sign = sign_mask(format), mx = got & magnitude_mask(format), my = reference & magnitude_mask(format);
  const std::uint64_t d = got_nan                         ? 0
                          : ((got ^ reference) & sign) == 0 ? (mx > my ? mx - my : my - mx)
                                                          : std::uint64_t{mx} + my;
  if (d == 0 && got != reference) {
    if (mx == 0) {
      ++zero_sign;
    } else {
      ++nan_payload;
    }
  }
  max_ulp = std::max(max_ulp, d);
  for (int b = 0; b < kUlpBucketCount; ++b)
    if (d >= kUlpBuckets[b].lo && d <= kUlpBuckets[b].hi) ++histogram[b];
}

void print_bit_differences(const UlpComparison& u) {
  if (u.nan_mismatch) std::printf("  NaN mismatches: %lld", static_cast<long long>(u.nan_mismatch));
  if (u.zero_sign) std::printf("  zeros of the other sign: %lld", static_cast<long long>(u.zero_sign));
  if (u.nan_payload) std::printf("  other NaN patterns: %lld", static_cast<long long>(u.nan_payload));
}

void UlpComparison::merge(const UlpComparison& other) {
  outputs += other.outputs;
  differ += other.differ;
  nan_mismatch += other.nan_mismatch;
  zero_sign += other.zero_sign;
  nan_payload += other.nan_payload;
  max_ulp = std::max(max_ulp, other.max_ulp);
  for (int b = 0; b < kUlpBucketCount; ++b) histogram[b] += other.histogram[b];
}

namespace {

// Counts of bin_of(key) over the keys (bin_of returns kBins or more for a key it leaves out), on
// the OpenMP threads: integer counts, so the order of the merge does not matter.
template <typename BinOf>
std::vector<std::int64_t> parallel_histogram(std::span<const std::uint64_t> keys, std::size_t bins, BinOf bin_of) {
  const auto n = static_cast<std::int64_t>(keys.size());
  std::vector<std::int64_t> histogram(bins, 0);
#pragma omp parallel
  {
    std::vector<std::int64_t> local(bins, 0);
#pragma omp for schedule(static) nowait
    for (std::int64_t i = 0; i < n; ++i) {
      const std::size_t b = bin_of(keys[static_cast<std::size_t>(i)]);
      if (b < bins) ++local[b];
    }
#pragma omp critical
    for (std::size_t b = 0; b < bins; ++b) histogram[b] += local[b];
  }
  return histogram;
}

// The bin holding `rank` (counted from 0 over the bins in order); rank becomes its rank inside it.
std::size_t bin_of_rank(const std::vector<std::int64_t>& histogram, std::int64_t& rank) {
  std::size_t bin = 0;
  while (rank >= histogram[bin]) rank -= histogram[bin++];
  return bin;
}

}  // namespace

// Exact selection by the keys' bits, high to low: a histogram of bits 62..48 finds each rank's
// bin, a histogram of bits 47..32 inside that bin narrows it, and std::nth_element orders the
// few keys that share those 31 bits.
std::vector<double> order_statistics(std::span<const std::uint64_t> keys, std::span<const std::int64_t> ranks) {
  constexpr std::uint64_t kLeftOut = std::uint64_t{1} << 63;
  const std::vector<std::int64_t> top = parallel_histogram(keys, std::size_t{1} << 15, [](std::uint64_t k) {
    return k & kLeftOut ? std::size_t{1} << 15 : static_cast<std::size_t>(k >> 48);
  });
  std::int64_t kept = 0;
  for (const std::int64_t h : top) kept += h;
  std::vector<double> values;
  for (std::int64_t rank : ranks) {
    if (rank < 0 || rank >= kept) {
      throw std::out_of_range("order_statistics: rank " + std::to_string(rank) + " of " + std::to_string(kept) + " values");
    }
    const std::uint64_t high = bin_of_rank(top, rank);  // bits 62..48 (bit 63 is 0)
    const std::vector<std::int64_t> next = parallel_histogram(keys, std::size_t{1} << 16, [high](std::uint64_t k) {
      return k >> 48 == high ? static_cast<std::size_t>((k >> 32) & 0xFFFF) : std::size_t{1} << 16;
    });
    const std::uint64_t prefix = high << 16 | bin_of_rank(next, rank);  // bits 63..32
    std::vector<std::uint64_t> in_bin;
    const auto n = static_cast<std::int64_t>(keys.size());
#pragma omp parallel
    {
      std::vector<std::uint64_t> local;
#pragma omp for schedule(static) nowait
      for (std::int64_t i = 0; i < n; ++i)
        if (keys[static_cast<std::size_t>(i)] >> 32 == prefix) local.push_back(keys[static_cast<std::size_t>(i)]);
#pragma omp critical
      in_bin.insert(in_bin.end(), local.begin(), local.end());
    }
    if (rank >= static_cast<std::int64_t>(in_bin.size())) throw std::logic_error("order_statistics: the bins disagree");
    const auto nth = in_bin.begin() + rank;
    std::nth_element(in_bin.begin(), nth, in_bin.end());
    values.push_back(std::bit_cast<double>(*nth));
  }
  return values;
}

}  // namespace blockscale::cli
