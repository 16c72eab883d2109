// SPDX-License-Identifier: Apache-2.0
// Import of the Khattak & Mikaitis tensor-core hardware vectors (tests/data/km-tensor-core-vectors,
// README "Which instruction produced each file") into golden instruction files: one file per
// result file d_<GPU>_<out>.txt, each vector one case of the instruction the README names, with C
// as the program used it (0 for the Hopper wgmma sets, fp16(c) for fp16 results, c otherwise) and
// D as the accumulator code (fp16 results narrowed exactly from their fp32 widening).
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "blockscale/golden/file.h"

namespace blockscale::golden {

struct KmSet {
  const char* gpu;     // H100, H200, B200, Ada
  const char* format;  // the folder: E4M3, E5M2, fp16, bf16, tf32
  const char* output;  // fp32 or fp16: the d_ file
  const char* instruction;
  enum class C { zero, fp32, fp16 } c;
};

// The README's table, one row per result file.
const std::vector<KmSet>& km_sets();

// Converts every result file under `dir` (the extracted data set); at most `max_cases` vectors
// (the first ones) per file when max_cases > 0. Throws GoldenError naming the K&M file and line for
// anything malformed (a wrong line count, bad hex or binary digits, an input not exact in its
// format), and for a d_ file that the table does not cover.
std::vector<GoldenFile> import_km(const std::filesystem::path& dir, std::size_t max_cases = 0);

}  // namespace blockscale::golden
