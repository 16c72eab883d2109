// SPDX-License-Identifier: Apache-2.0
#include "run_file.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <stdexcept>

namespace blockscale::harness::detail {

RunFile::RunFile(const std::filesystem::path& path, const std::string& magic) : file_(path.string()) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw std::invalid_argument(file_ + ": a directory, not a file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::invalid_argument(file_ + ": cannot be opened");
  // The header line first, at most kMaxHeaderBytes, and its magic checked before the body is read:
  // a file that is no run (a device such as /dev/zero, a large file given by mistake) is refused
  // after its first bytes rather than read whole.
  constexpr std::size_t kMaxHeaderBytes = std::size_t{1} << 16;
  std::string line;
  bool eol = false;
  for (char c; line.size() <= kMaxHeaderBytes && in.get(c);) {
    if (c == '\n') {
      eol = true;
      break;
    }
    line.push_back(c);
  }
  if (!eol) {
    throw std::invalid_argument(file_ + (line.size() > kMaxHeaderBytes
                                             ? ": no header line in the first " + std::to_string(kMaxHeaderBytes) +
                                                   " bytes (not a '" + magic + "' file)"
                                             : std::string(": no header line (an empty or truncated file)")));
  }
  std::istringstream header(line);
  std::string m, version;
  header >> m >> version;
  if (m != magic || version != "1") {
    throw std::invalid_argument(file_ + ": the first line must start with '" + magic + " 1'");
  }
  raw_ = line + '\n';
  body_ = at_ = raw_.size();
  raw_.append(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  for (std::string token; header >> token;) {
    const auto eq = token.find('=');
    if (eq == std::string::npos || eq == 0) throw std::invalid_argument(file_ + ": header item '" + token + "' is not key=value");
    if (!kv_.emplace(token.substr(0, eq), token.substr(eq + 1)).second) {
      throw std::invalid_argument(file_ + ": the header gives '" + token.substr(0, eq) + "' twice");
    }
  }
}

const std::string& RunFile::get(const std::string& key) const {
  const auto it = kv_.find(key);
  if (it == kv_.end()) throw std::invalid_argument(file_ + ": the header lacks '" + key + "'");
  return it->second;
}

std::string RunFile::text(const std::string& key) const {
  std::string v = get(key);
  std::replace(v.begin(), v.end(), '_', ' ');
  return v;
}

std::uint64_t RunFile::count(const std::string& key, std::uint64_t max) const {
  const std::string& v = get(key);
  // At most 19 digits: the value fits in 64 bits before it is compared with max.
  const bool digits = !v.empty() && v.size() <= 19 && std::all_of(v.begin(), v.end(), [](char c) { return c >= '0' && c <= '9'; });
  const std::uint64_t n = digits ? std::stoull(v) : 0;
  if (n < 1 || n > max) {
    throw std::invalid_argument(file_ + ": " + key + "=" + v + " must be a whole number from 1 to " + std::to_string(max));
  }
  return n;
}

std::size_t RunFile::choice(const std::string& key, const std::vector<std::string>& allowed) const {
  const std::string& v = get(key);
  const auto it = std::find(allowed.begin(), allowed.end(), v);
  if (it != allowed.end()) return static_cast<std::size_t>(it - allowed.begin());
  std::string list;  // "a, b or c"
  for (std::size_t i = 0; i < allowed.size(); ++i) {
    list.append(i == 0 ? "" : i + 1 == allowed.size() ? " or " : ", ").append(allowed[i]);
  }
  throw std::invalid_argument(file_ + ": " + key + "=" + v + " must be " + list);
}

void RunFile::expect_body(std::uint64_t want, const std::string& what) const {
  const std::uint64_t have = body_size();
  if (have != want) {
    throw std::invalid_argument(file_ + ": " + std::to_string(have) + " bytes after the header; " + what + " need " +
                                std::to_string(want) + (have < want ? " (truncated)" : " (trailing bytes)"));
  }
}

std::vector<std::uint32_t> RunFile::codes(std::size_t count, std::size_t bytes) {
  if (count * bytes > raw_.size() - at_) throw std::logic_error(file_ + ": codes read past the body (expect_body first)");
  std::vector<std::uint32_t> v(count);
  for (std::uint32_t& x : v) {
    for (std::size_t i = bytes; i-- > 0;) x = x << 8 | static_cast<unsigned char>(raw_[at_ + i]);
    at_ += bytes;
  }
  return v;
}

}  // namespace blockscale::harness::detail
