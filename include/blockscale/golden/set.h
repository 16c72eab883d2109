// SPDX-License-Identifier: Apache-2.0
// Sets: the files one generation (or one K&M import) produces, written into a directory together
// with their manifest.json (and, when asked, NumPy companions).
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "blockscale/golden/file.h"
#include "blockscale/golden/manifest.h"
#include "blockscale/golden/operation.h"

namespace blockscale::golden {

// The data each kind is generated from when none is asked for: conversions take their complete
// edge lists, everything else the mixed strata (edge cases and probes first, then random and
// realistic data).
DataKind default_data(std::string_view op_or_family);

// Generates a family ("instructions", ...) or one operation id. `data` unset: default_data(). The
// callback sees each file as it is done (index, count, the file).
std::vector<GoldenFile> generate_set(
    std::string_view op_or_family, std::uint64_t seed, std::optional<DataKind> data,
    std::optional<std::size_t> cases,
    const std::function<void(std::size_t, std::size_t, const GoldenFile&)>& done = {});

// Writes the files (their names are GoldenFile::name), their .npy companions when `npy`, and
// manifest.json into `dir` (created when missing; other files there are left alone, but a .txt or
// .npy the set does not write is refused, std::invalid_argument: verify would take it for the set's).
// Returns the manifest. Every file is checked to be consistent with its operation before it is written.
Manifest write_set(const std::filesystem::path& dir, const std::vector<GoldenFile>& files,
                   const std::string& operation, std::optional<std::uint64_t> seed, const std::string& data,
                   bool npy);

}  // namespace blockscale::golden
