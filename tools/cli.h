// SPDX-License-Identifier: Apache-2.0
// The `blockscale` command-line tool: a registry of subcommands, one source file each
// (tools/cmd_<name>.cpp), and the argument parsing they share.
//
// Exit status: 0 success; 1 a check failed (mismatches); 2 bad usage or bad input; 3 a needed
// device is absent (e.g. `conform` without a GPU).
#pragma once

#include <cstdint>
#include <functional>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "blockscale/formats/format.h"
#include "blockscale/golden/json_text.h"

namespace blockscale::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitMismatch = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitNoDevice = 3;

// Thrown for bad arguments; main prints "blockscale <cmd>: <message>" and exits with kExitUsage.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Options of the form --name value, --name=value and --flag, plus positional arguments.
// Unknown options are an error: each command declares what it accepts.
class Args {
 public:
  Args(std::vector<std::string> argv, std::vector<std::string> value_options, std::vector<std::string> flags);

  bool flag(const std::string& name) const;
  std::optional<std::string> get(const std::string& name) const;
  std::string get_or(const std::string& name, const std::string& fallback) const;
  // Integer options with range checks; the message names the option and the range.
  std::int64_t get_int(const std::string& name, std::int64_t fallback, std::int64_t lo, std::int64_t hi) const;
  std::uint64_t get_u64(const std::string& name, std::uint64_t fallback) const;
  const std::vector<std::string>& positional() const { return positional_; }
  // For a command that takes no positional arguments: throws UsageError naming the first one.
  void no_positional() const;

 private:
  std::map<std::string, std::string> values_;
  std::vector<std::string> flags_set_;
  std::vector<std::string> positional_;
};

struct Command {
  std::string name;
  std::string summary;  // one line for `blockscale help`
  std::string usage;    // full help text
  std::function<int(const std::vector<std::string>& args)> run;
};

void register_command(Command c);
const std::map<std::string, Command>& commands();

struct Registrar {
  explicit Registrar(Command c) { register_command(std::move(c)); }
};

// Large buffers that are written whole after allocation (operands, products): a vector whose
// elements start uninitialised, so that the pages are first touched (and cleared by the kernel)
// by the threads that write them, not zero-filled by one thread beforehand.
template <typename T>
struct FirstTouchAllocator : std::allocator<T> {
  template <typename U>
  struct rebind {
    using other = FirstTouchAllocator<U>;
  };
  template <typename U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <typename U, typename... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};
template <typename T>
using FirstTouchVector = std::vector<T, FirstTouchAllocator<T>>;
using WorkBuffer = FirstTouchVector<double>;

// Machine-readable output beside the human tables: strings through golden::json_escape
// (golden/json_text.h: escapes, and U+FFFD for bytes that are not UTF-8, such as a path's).
using golden::json_escape;
// A number as JSON with `digits` significant digits; null for NaN and +-Inf, which JSON lacks.
std::string json_number(double x, int digits = 6);

// ---- How far results are from the reference's, in ulps of their format (`demo`, `gemm`).
struct UlpBucket {
  const char* label;
  std::uint64_t lo, hi;  // inclusive
};
inline constexpr UlpBucket kUlpBuckets[] = {{"0", 0, 0},     {"1", 1, 1},     {"2", 2, 2},       {"3-4", 3, 4},
                                            {"5-8", 5, 8},   {"9-16", 9, 16}, {"17-64", 17, 64}, {">64", 65, ~std::uint64_t{0}}};
inline constexpr int kUlpBucketCount = static_cast<int>(std::size(kUlpBuckets));

// The values at `ranks` (0-based, in ascending order) among `keys`, each the bit pattern of a
// double >= 0 or +Inf, whose integer order is their numeric order; keys with the top bit set are
// left out (and do not count for the ranks). Runs on the OpenMP threads; the result is exact.
// A rank outside 0 .. (keys kept) - 1 throws std::out_of_range.
std::vector<double> order_statistics(std::span<const std::uint64_t> keys, std::span<const std::int64_t> ranks);

// Outputs against a reference's. `differ` counts outputs whose bits differ; the ulp histogram
// sorts them by numeric distance, which is 0 for the two kinds of bit difference that it cannot
// see, counted on their own: a zero of the other sign (zero_sign) and another NaN pattern
// (nan_payload: the exact numerics write 0x7FC00000, the tensor-core models 0x7FFFFFFF).
// nan_mismatch: a NaN on one side only (no ulp distance). `format`: the format of both codes (f32,
// or the output format of a kernel that writes f16, bf16 or e4m3); ulps are that format's.
struct UlpComparison {
  Format format = Format::float32;
  std::int64_t outputs = 0, differ = 0, nan_mismatch = 0, zero_sign = 0, nan_payload = 0;
  std::uint64_t max_ulp = 0;
  std::int64_t histogram[kUlpBucketCount] = {};
  void add(std::uint32_t got, std::uint32_t reference);
  void merge(const UlpComparison& other);  // counts of disjoint outputs: the order does not matter
};
// After a table row: the bit differences that the ulp columns do not show, where there are any.
void print_bit_differences(const UlpComparison& u);

}  // namespace blockscale::cli
