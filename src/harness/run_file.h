// SPDX-License-Identifier: Apache-2.0
// The container of the library runs that scripts on a GPU machine write for the harness
// (`*.scaled_mm` by scripts/conform_scaled_mm.py, `*.sparse_mm` by scripts/probe_sparse_mm.py): one
// header line "<magic> 1 key=value ...", then the arrays as raw little-endian codes whose sizes the
// header gives. Internal to blockscale::harness; the readers of both kinds share it so that a
// malformed file gets the same checks and the same kind of message (file, key and rule) either way.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace blockscale::harness::detail {

class RunFile {
 public:
  // Reads the whole file and parses its header line. Throws std::invalid_argument naming the file:
  // it cannot be opened, has no header line, another magic or version, an item that is not
  // key=value, or a key given twice.
  RunFile(const std::filesystem::path& path, const std::string& magic);

  const std::string& file() const { return file_; }
  bool has(const std::string& key) const { return kv_.count(key) != 0; }
  // The value of `key`; throws when the header lacks it.
  const std::string& get(const std::string& key) const;
  // `key`'s value with '_' read as ' ' (the writers' spelling of spaces); throws when absent.
  std::string text(const std::string& key) const;
  // A whole number of the header, digits only, from 1 to `max` (small enough that the sizes
  // computed from it cannot overflow); throws naming the key and the range otherwise.
  std::uint64_t count(const std::string& key, std::uint64_t max) const;
  // `key`'s value, which must be one of `allowed`; its index there.
  std::size_t choice(const std::string& key, const std::vector<std::string>& allowed) const;

  // The bytes after the header line.
  std::uint64_t body_size() const { return raw_.size() - body_; }
  // Throws unless the body holds exactly `want` bytes ("truncated" / "trailing bytes"), saying
  // what the header's sizes ask for (`what`: "A (2 x 128), B^T (1 x 128) and D (2 x 1)").
  void expect_body(std::uint64_t want, const std::string& what) const;
  // `count` little-endian codes of `bytes` bytes each, from the body's read position on.
  std::vector<std::uint32_t> codes(std::size_t count, std::size_t bytes);

 private:
  std::string file_, raw_;
  std::map<std::string, std::string> kv_;
  std::size_t body_ = 0, at_ = 0;
};

}  // namespace blockscale::harness::detail
