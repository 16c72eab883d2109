// SPDX-License-Identifier: Apache-2.0
// Small helpers of the golden-vector tests: scratch directories, whole-file reads and writes, and
// the locations ctest passes in the environment.
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace blockscale::golden::test {

// A fresh, empty directory under the system temporary directory (unique per test process).
inline std::filesystem::path scratch_dir(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("blockscale_golden_" + std::to_string(::getpid()) + "_" + name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

inline std::string read(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

inline void write(const std::filesystem::path& p, const std::string& bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << bytes;
}

// BLOCKSCALE_SOURCE_DIR and BLOCKSCALE_KM_DIR, set by blockscale_add_test; empty when absent.
inline std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

}  // namespace blockscale::golden::test
