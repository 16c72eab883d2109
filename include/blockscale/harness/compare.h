// SPDX-License-Identifier: Apache-2.0
// Bit-for-bit comparison of device outputs with model outputs, and the statistics the harness
// reports: outputs compared, mismatches, and the worst distance in units in the last place.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "blockscale/formats/format.h"
#include "blockscale/harness/target.h"

namespace blockscale::harness {

// The output formats of the targets: f32 bit patterns (also the e8m13 results, which are fp32
// words with the low 10 bits clear), f16 codes, bf16 codes (GEMM bf16 output), f64 bit patterns
// (the DMMA rows; two words per output, the low word first).
enum class OutputFormat : std::uint8_t { f32, f16, bf16, f64 };
std::string to_string(OutputFormat f);
OutputFormat output_format(Format acc);  // float32 -> f32, float16 -> f16
OutputFormat output_format(const InstructionTarget& t);  // f64 for the DMMA rows, else of t.acc
std::size_t words_per_output(OutputFormat f);  // 2 for f64, else 1

// Distance between two codes in units in the last place of the format: the number of
// representable values between them (+0 and -0 are 0 apart, so a zero-sign mismatch has
// distance 0). nullopt when exactly one of them is NaN (NaN against NaN with another payload
// is distance 0).
std::optional<std::uint64_t> ulp_distance(OutputFormat f, std::uint64_t x, std::uint64_t y);

// One mismatching output: where it is (case index and position in the case's output) and both
// codes.
struct Mismatch {
  std::uint64_t case_index = 0;  // tile or GEMM problem, in the data set's numbering
  std::size_t row = 0, col = 0;  // position in the tile / D
  std::uint64_t device = 0, model = 0;
  std::optional<std::uint64_t> ulps;
};

struct Stats {
  std::uint64_t cases = 0, outputs = 0, mismatches = 0;
  std::uint64_t worst_ulps = 0;        // over mismatches with a finite distance
  std::uint64_t nan_mismatches = 0;    // NaN on one side only
  std::uint64_t zero_sign_mismatches = 0;  // +0 against -0
  std::vector<Mismatch> examples;      // the first few, in generation order
  void merge(const Stats& o, std::size_t max_examples);
};

// Compares `count` consecutive outputs of `cases` cases (each rows x cols, row-major; f64: two
// words per output) and adds them to `stats`; keeps up to max_examples examples. Every bit is
// compared, NaN payloads included, except f64's: the DMMA rows' model does not predict the payload
// of a NaN (numerics.md (a)), so any NaN agrees with any NaN there. Parallel; the result does not
// depend on the thread count.
void compare_outputs(OutputFormat f, const std::vector<std::uint32_t>& device, const std::vector<std::uint32_t>& model,
                     std::uint64_t first_case, std::size_t rows, std::size_t cols, Stats& stats,
                     std::size_t max_examples);

// "0x3F800000" / "0x3C00" / "0x3FF0000000000000".
std::string hex_code(OutputFormat f, std::uint64_t code);

}  // namespace blockscale::harness
