// SPDX-License-Identifier: Apache-2.0
// PyTorch's 2:4 sparse GEMM (torch._cslt_sparse_mm, cuSPARSELt) on a GPU diffed against the
// emulator's model (emulator/sparse_gemm.h, docs/emulator.md "2:4 sparse GEMMs").
//
// scripts/probe_sparse_mm.py runs the library on the device machine and writes each call as a
// .sparse_mm file (its docstring has the format). cuSPARSELt picks a split-K slice count S by a
// heuristic that PyTorch does not report, so each run is fitted: every S from 1 to the tile count
// (at most max_slices) is tried with the run's kernel row, and the study lists the S that
// reproduce every output. Cheap screening on a few rows comes first, so that only the S that pass
// it are run on the whole matrix.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "blockscale/formats/format.h"

namespace blockscale::harness {

// The names of torch._cslt_sparse_mm's types as scripts/probe_sparse_mm.py and `blockscale gemm
// --sparse` spell them: f16, bf16, f32, e4m3. nullopt for another name; "?" for another format.
std::optional<Format> sparse_mm_format(std::string_view name);
const char* sparse_mm_format_name(Format f);

// One call of the library: D (M x N) = A (M x K, 2:4 sparse, zeros at the pruned positions) x B,
// B given transposed (N x K), every array as codes of its format.
struct SparseMmRun {
  std::string file;     // the file's name, which says the data kind (scripts/probe_sparse_mm.py)
  std::string library;  // "torch_2.11.0+cu130_cusparselt_800"
  std::string backend;  // "cusparselt", "cutlass"
  std::string gpu;
  std::string kernel;   // the kernel(s) the profiler saw, when recorded
  std::string error;    // non-empty: the library refused the call (no arrays follow)
  Format input = Format::float16, output = Format::float16;
  int m = 0, n = 0, k = 0;
  int slices = 0;  // the header's slices= (a count measured by the probe sweep); 0: not given
  bool repeats_identical = true;  // the header's repeats_identical: repeated calls gave the same bits
  std::vector<std::uint32_t> a, b_t, d;
};

// Reads one file. Throws std::invalid_argument naming the file and the rule broken: a header that
// is not "blockscale-sparse-mm 1 key=value ...", a missing or malformed key, an unknown format,
// A and B of different formats, sizes that are not positive, codes outside their format, a file
// shorter or longer than its header's sizes.
SparseMmRun read_sparse_mm_file(const std::filesystem::path& path);

// Every *.sparse_mm file in `dir`, in name order (none: an empty list).
std::vector<SparseMmRun> read_sparse_mm_runs(const std::filesystem::path& dir);

struct SparseMmStudy {
  SparseMmRun run;          // arrays cleared after fitting
  std::string model;        // the schedule of the kernel row (SparseGemmSchedule::name with S = 1)
  std::string why_not;      // non-empty: no model for this call (f32/tf32 input, an unknown pair)
  int tiles = 0;            // K / the kernel's tile: the largest S there can be
  int tried = 0;            // S = 1 .. tried were fitted
  std::vector<int> exact;   // each S that reproduces every output, ascending
  int best = 0;             // the S with the most matching outputs (the smallest among equals)
  std::uint64_t matches = 0, outputs = 0;  // of `best`
  bool bit_exact() const { return !exact.empty(); }
  std::string exact_text() const;  // "1-4, 6, 10-64"
  // Whether the header's slices= (when given) is among `exact`.
  bool header_slices_fit() const;
};

// Fits the run (OpenMP inside the emulator). A refused call, or one without a model, comes back
// with `error` or `why_not` set and nothing tried.
SparseMmStudy fit_sparse_mm(SparseMmRun run, int max_slices = 64);

// One line per run and its verdict, for the terminal.
std::string sparse_mm_table(const std::vector<SparseMmStudy>& studies);

}  // namespace blockscale::harness
