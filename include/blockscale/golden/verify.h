// SPDX-License-Identifier: Apache-2.0
// Verification: every case of a golden file recomputed with blockscale and compared bit for bit;
// manifests checked (every listed file present, its SHA-256 and case count as recorded, nothing
// unlisted), NumPy companions compared with their text files.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "blockscale/golden/file.h"

namespace blockscale::golden {

struct Mismatch {
  std::size_t index = 0;      // case index (0-based)
  std::size_t line = 0;       // line in the file
  std::string detail;         // which output fields differ, or why the case cannot be computed
  std::string expected_line;  // the case as the file has it
  std::string computed_line;  // the case with blockscale's outputs (empty when not computable)
};

struct FileReport {
  std::string path;
  std::string operation;  // the operation id (empty when the file could not be read)
  std::string kind;       // conversion, ..., npy
  std::uint64_t cases = 0;
  std::uint64_t mismatches = 0;
  std::vector<Mismatch> first;  // the first VerifyOptions::max_report mismatches
  // Set when the file is malformed, missing or inconsistent with its manifest: the message names
  // the file and line. Such a file counts as failed.
  std::string error;
  bool ok() const { return error.empty() && mismatches == 0; }
};

struct VerifyOptions {
  std::size_t max_report = 5;
  // Called after each file and every few thousand cases: cases done so far, and the total of the
  // current file.
  std::function<void(const std::string& path, std::uint64_t done, std::uint64_t total)> progress;
};

// One parsed file, in memory.
FileReport verify_golden(const GoldenFile& f, const VerifyOptions& o = {});
// One text file (parsed first; malformed files give a report with `error` set).
FileReport verify_file(const std::filesystem::path& path, const VerifyOptions& o = {});
// A manifest: its own consistency, then every file it lists.
std::vector<FileReport> verify_manifest(const std::filesystem::path& path, const VerifyOptions& o = {});
// Files, directories (every manifest.json below them, and every .txt file that no manifest in its
// directory lists), and manifests, in sorted order.
std::vector<FileReport> verify_paths(const std::vector<std::filesystem::path>& paths,
                                     const VerifyOptions& o = {});

// One report as a JSON object: path, kind, operation, cases, mismatches, ok, error (when set) and
// first_mismatches (case, line, detail, expected and computed lines). `blockscale golden verify
// --json` prints these, and the Python module reads them (python/blockscale/golden.py).
std::string to_json(const FileReport& r);

}  // namespace blockscale::golden
