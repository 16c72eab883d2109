// SPDX-License-Identifier: Apache-2.0
// Internals shared by the golden-vector operations: the random stream (defined here, bit for bit,
// so that every build and platform regenerates the same files: no std::*_distribution, whose
// outputs the C++ standard leaves to the implementation), and small helpers.
#pragma once

#include <bit>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "blockscale/formats/convert.h"
#include "blockscale/golden/operation.h"

namespace blockscale::golden::detail {

// SplitMix64 (Steele, Lea, Flood 2014), used to seed and to mix hashes.
constexpr std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// xoshiro256** (Blackman and Vigna 2018), seeded through SplitMix64. Draw at most one value per
// function call's arguments or operator's operands, and sequence the rest in statements: their
// evaluation order is unspecified (GCC and Clang differ), and a seed must give the same bytes
// whatever the compiler.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) {
    for (auto& w : s_) w = splitmix64(seed);
  }
  std::uint64_t next() {
    const std::uint64_t result = std::rotl(s_[1] * 5, 7) * 9;
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = std::rotl(s_[3], 45);
    return result;
  }
  std::uint32_t u32() { return static_cast<std::uint32_t>(next() >> 32); }
  // Uniform in [0, n), n >= 1, without modulo bias (rejection).
  std::uint64_t below(std::uint64_t n) {
    if (n <= 1) return 0;
    const std::uint64_t limit = ~std::uint64_t{0} - (~std::uint64_t{0} % n);
    std::uint64_t v;
    do v = next();
    while (v >= limit);
    return v % n;
  }
  // Uniform in [lo, hi].
  std::int64_t range(std::int64_t lo, std::int64_t hi) {
    return lo + static_cast<std::int64_t>(below(static_cast<std::uint64_t>(hi - lo) + 1));
  }
  bool chance(std::uint64_t num, std::uint64_t den) { return below(den) < num; }
  // An approximately normal value with mean 0 and standard deviation 1, as an exact double: the
  // Irwin-Hall sum of 12 uniform 16-bit integers, centred and scaled by a power of two. Integer
  // arithmetic only, so it is the same everywhere (libm's transcendental functions need not be).
  double normalish() {
    std::int64_t sum = 0;
    for (int i = 0; i < 12; ++i) sum += static_cast<std::int64_t>(next() >> 48);
    // Each term has variance (2^32 - 1) / 12; twelve of them, variance ~2^32: sd ~2^16.
    return static_cast<double>(sum - 12 * 32768) * 0x1p-16;
  }

 private:
  std::uint64_t s_[4];
};

// FNV-1a, 64 bits: hashes operation ids into seeds.
constexpr std::uint64_t fnv1a(std::string_view s) {
  std::uint64_t h = 0xCBF29CE484222325ull;
  for (char c : s) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001B3ull;
  }
  return h;
}

inline constexpr double kInf = std::numeric_limits<double>::infinity();

[[noreturn]] inline void invalid(const std::string& m) { throw std::invalid_argument(m); }

// Splits on single spaces (header values are written with single spaces).
std::vector<std::string> split(std::string_view s, char sep);
std::string hex(std::uint64_t v, int digits = 0);

// The exact code of `v` in `f` when v is representable there, else nullopt (NaN: never).
std::optional<std::uint32_t> exact_code(Format f, double v);

// ConvertOptions as key=value tokens (golden/FORMAT.md "Conversion options"), every key preceded by
// `prefix` ("" in @mode lines, "element." in quantization @op lines); and back. parse_options
// reads exactly the keys it needs from `kv` and throws std::invalid_argument for missing or bad ones.
std::string options_string(const ConvertOptions& o, const std::string& prefix);
ConvertOptions parse_options(const std::map<std::string, std::string>& kv, const std::string& prefix);

// Factories of each kind (op_*.cpp). from_id takes the part of the id after "<kind>:".
std::unique_ptr<Operation> conversion_from_id(std::string_view rest);
std::unique_ptr<Operation> conversion_from_file(const GoldenFile& f);
std::vector<std::unique_ptr<Operation>> conversion_family();

std::unique_ptr<Operation> quantization_from_id(std::string_view rest);
std::unique_ptr<Operation> quantization_from_file(const GoldenFile& f);
std::vector<std::unique_ptr<Operation>> quantization_family();

std::unique_ptr<Operation> scale_layout_from_id(std::string_view rest);
std::unique_ptr<Operation> grouped_layout_from_id(std::string_view rest);
std::unique_ptr<Operation> weight_interleave_from_id(std::string_view rest);
std::unique_ptr<Operation> packing_from_id(std::string_view rest);
std::unique_ptr<Operation> layout_from_file(const GoldenFile& f);
std::vector<std::unique_ptr<Operation>> layout_family();

std::unique_ptr<Operation> instruction_from_id(std::string_view rest);
std::unique_ptr<Operation> instruction_from_file(const GoldenFile& f);
std::vector<std::unique_ptr<Operation>> instruction_family();

std::unique_ptr<Operation> gemm_from_id(std::string_view rest);
std::unique_ptr<Operation> gemm_from_file(const GoldenFile& f);
std::vector<std::unique_ptr<Operation>> gemm_family();

// Raises GoldenError at the @fields line when the file's fields are not `expected`.
void check_fields(const GoldenFile& f, const std::vector<FieldSpec>& expected);
// Raises GoldenError at @op line `i` (0-based) with `message`.
[[noreturn]] void fail_op(const GoldenFile& f, std::size_t i, const std::string& message);

// Cases for a generated set: the count asked for, or the operation's default.
std::size_t case_count(const GenerateOptions& o, std::size_t fallback);

}  // namespace blockscale::golden::detail
