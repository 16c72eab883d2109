// SPDX-License-Identifier: Apache-2.0
// Set manifests (golden/FORMAT.md "Manifest"): one JSON file per set, manifest.json in the set's
// directory, naming the generator version, the operation id, the seed and data, the case count and
// the SHA-256 of every file of the set.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace blockscale::golden {

// SHA-256 (FIPS 180-4) of a byte string, as 64 lower-case hex digits.
std::string sha256_hex(std::string_view data);

struct ManifestFile {
  std::string path;       // relative to the manifest's directory, '/'-separated
  std::string operation;  // the operation id of a .txt file; for a companion, empty
  std::string kind;       // "conversion", ... ; "npy" for a NumPy companion
  std::uint64_t cases = 0;
  std::string sha256;
  std::string companion_of;  // for a .npy: the .txt it mirrors
};

struct Manifest {
  std::string generator;  // "blockscale 0.1.0"
  std::string operation;  // the id the set was generated from: a family ("instructions"), one
                          // operation id, or "import-km"
  std::optional<std::uint64_t> seed;
  std::string data;
  std::uint64_t cases = 0;  // total over the .txt files
  std::vector<ManifestFile> files;
};

// The JSON text: keys in a fixed order, two-space indentation, a final newline; deterministic.
std::string format_manifest(const Manifest& m);
// Parses a manifest; throws GoldenError (file `name`, line) for malformed JSON, a missing or
// mistyped key, a path that leaves the set's directory, or a bad SHA-256 string.
Manifest parse_manifest(std::string_view text, const std::string& name);
Manifest read_manifest(const std::filesystem::path& path);

}  // namespace blockscale::golden
