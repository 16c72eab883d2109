// SPDX-License-Identifier: Apache-2.0
#include "npy.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <string_view>

#include "blockscale/formats/convert.h"
#include "cli.h"

namespace blockscale::cli {
namespace {

// Reading a header: the dict literal numpy.lib.format writes (keys in any order, single or double
// quotes, optional trailing commas and spaces), nothing more general.
class HeaderParser {
 public:
  HeaderParser(std::string_view text, const std::string& path) : s_(text), path_(path) {}

  void parse(std::string& descr, bool& fortran, std::vector<std::int64_t>& shape) {
    bool have_descr = false, have_fortran = false, have_shape = false;
    expect('{');
    while (!peek('}')) {
      const std::string key = quoted();
      expect(':');
      if (key == "descr") {
        descr = quoted();
        have_descr = true;
      } else if (key == "fortran_order") {
        fortran = boolean();
        have_fortran = true;
      } else if (key == "shape") {
        shape = tuple();
        have_shape = true;
      } else {
        fail("unknown header key '" + key + "' (a .npy header holds descr, fortran_order and shape)");
      }
      if (!peek('}')) expect(',');
    }
    expect('}');
    // numpy pads the dict with spaces and ends it with a newline; anything else after it is not a
    // header numpy would read (its reader evaluates the whole text as one literal).
    skip_space();
    if (pos_ != s_.size()) fail("text after the header's dict at byte " + std::to_string(pos_));
    if (!have_descr || !have_fortran || !have_shape) fail("the header lacks one of descr, fortran_order, shape");
  }

 private:
  [[noreturn]] void fail(const std::string& what) const { throw UsageError(path_ + ": malformed .npy header: " + what); }
  void skip_space() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  bool peek(char c) {
    skip_space();
    return pos_ < s_.size() && s_[pos_] == c;
  }
  void expect(char c) {
    if (!peek(c)) fail(std::string("expected '") + c + "' at byte " + std::to_string(pos_));
    ++pos_;
  }
  std::string quoted() {
    skip_space();
    if (pos_ >= s_.size() || (s_[pos_] != '\'' && s_[pos_] != '"')) fail("expected a quoted string at byte " + std::to_string(pos_));
    const char q = s_[pos_++];
    const std::size_t end = s_.find(q, pos_);
    if (end == std::string_view::npos) fail("unterminated string");
    std::string out(s_.substr(pos_, end - pos_));
    pos_ = end + 1;
    return out;
  }
  bool boolean() {
    skip_space();
    for (const auto& [word, value] : {std::pair{std::string_view("True"), true}, std::pair{std::string_view("False"), false}}) {
      if (s_.substr(pos_, word.size()) == word) {
        pos_ += word.size();
        return value;
      }
    }
    fail("fortran_order must be True or False");
  }
  std::vector<std::int64_t> tuple() {
    std::vector<std::int64_t> out;
    expect('(');
    while (!peek(')')) {
      skip_space();
      std::int64_t v = 0;
      bool digits = false;
      while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) {
        if (v > (std::numeric_limits<std::int64_t>::max() - 9) / 10) fail("a shape extent is too large");
        v = v * 10 + (s_[pos_++] - '0');
        digits = true;
      }
      if (!digits) fail("shape must be a tuple of non-negative integers");
      out.push_back(v);
      if (!peek(')')) expect(',');
    }
    expect(')');
    return out;
  }

  std::string_view s_;
  const std::string& path_;
  std::size_t pos_ = 0;
};

std::uint16_t le16(const unsigned char* p) { return static_cast<std::uint16_t>(p[0] | p[1] << 8); }
std::uint32_t le32(const unsigned char* p) {
  return static_cast<std::uint32_t>(p[0]) | static_cast<std::uint32_t>(p[1]) << 8 |
         static_cast<std::uint32_t>(p[2]) << 16 | static_cast<std::uint32_t>(p[3]) << 24;
}

// Up to n bytes from `in` (fewer at the end of the file), read in chunks: n comes from the file's
// own header (a header length of 2^32 - 1, a shape of 2^40 doubles), so memory follows the bytes
// the file holds, not the size it claims (libFuzzer found a 112-byte file that asked for 4 GiB).
std::string read_up_to(std::ifstream& in, std::size_t n) {
  std::string s;
  std::array<char, std::size_t{1} << 16> chunk;
  while (s.size() < n) {
    const std::size_t want = std::min(n - s.size(), chunk.size());
    in.read(chunk.data(), static_cast<std::streamsize>(want));
    const auto got = static_cast<std::size_t>(in.gcount());
    s.append(chunk.data(), got);
    if (got < want) break;
  }
  return s;
}

// A header string for a message: bytes outside printable ASCII as \xNN (a NUL would cut it short).
std::string printable(std::string_view s) {
  std::string out;
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x7F) {
      out.push_back(c);
    } else {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", u);
      out += hex;
    }
  }
  return out;
}

// A 2-D array, or with `vector` a 1-D one as one row. The file is read in its parts: the magic and
// version, the header, then exactly the bytes the header's shape and dtype need, so that a file that
// is no .npy (a device such as /dev/zero, a large file named by mistake) is refused after its first
// bytes rather than read whole.
NpyMatrix read_npy(const std::string& path, bool vector) {
  std::error_code ec;
  // An ifstream opens a directory on Linux and fails on the first read, with a message that names
  // neither the file nor the rule.
  if (std::filesystem::is_directory(path, ec)) throw UsageError(path + ": a directory, not a .npy file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError(path + ": cannot open for reading");
  const std::string prelude = read_up_to(in, 8);
  const auto* u = reinterpret_cast<const unsigned char*>(prelude.data());
  if (prelude.size() < 8 || std::memcmp(prelude.data(), "\x93NUMPY", 6) != 0) {
    throw UsageError(path + ": not a NumPy .npy file (the first 6 bytes are not \\x93NUMPY)");
  }
  const int major = u[6];
  if (major < 1 || major > 3) throw UsageError(path + ": .npy version " + std::to_string(major) + " is not 1, 2 or 3");
  const std::size_t length_bytes = major == 1 ? 2 : 4;
  const std::string length = read_up_to(in, length_bytes);
  if (length.size() < length_bytes) throw UsageError(path + ": truncated .npy header");
  const auto* l = reinterpret_cast<const unsigned char*>(length.data());
  const std::size_t header_len = major == 1 ? le16(l) : le32(l);
  const std::string header = read_up_to(in, header_len);
  if (header.size() < header_len) {
    throw UsageError(path + ": the header length (" + std::to_string(header_len) + " bytes) runs past the end of the file");
  }
  NpyMatrix m;
  bool fortran = false;
  std::vector<std::int64_t> shape;
  HeaderParser(header, path).parse(m.descr, fortran, shape);

  // descr: byte order ('<' little, '>' big, '=' native: little on every host this builds for,
  // '|' not applicable) and type f2 / f4 / f8.
  const std::string& d = m.descr;
  const bool known_order = d.size() == 3 && (d[0] == '<' || d[0] == '>' || d[0] == '=' || d[0] == '|');
  const int item = known_order && d[1] == 'f' ? d[2] - '0' : 0;
  if (!(item == 2 || item == 4 || item == 8) || (d[0] == '|')) {
    throw UsageError(path + ": dtype '" + printable(d) + "' is not taken (float16, float32 or float64: '<f2', '<f4', '<f8')");
  }
  const bool big = d[0] == '>';
  const std::size_t rank = vector ? 1 : 2;
  if (shape.size() != rank) {
    throw UsageError(path + ": the array is " + std::to_string(shape.size()) + "-D; " +
                     (vector ? "a vector needs 1 dimension" : "a matrix needs 2 dimensions"));
  }
  m.rows = vector ? 1 : shape[0];
  m.cols = vector ? shape[0] : shape[1];
  if (m.rows < 1 || m.cols < 1) throw UsageError(path + ": the matrix is empty (shape " + std::to_string(m.rows) + " x " + std::to_string(m.cols) + ")");
  if (m.rows > (std::int64_t{1} << 40) / m.cols) throw UsageError(path + ": the shape is too large");
  const auto count = static_cast<std::size_t>(m.rows * m.cols);
  const std::size_t need = count * static_cast<std::size_t>(item);
  const std::string data = read_up_to(in, need);
  const bool trailing = data.size() == need && in.peek() != std::char_traits<char>::eof();
  if (data.size() < need || trailing) {
    throw UsageError(path + ": the data is " + (trailing ? "more than " : "") + std::to_string(data.size()) +
                     " bytes but shape (" + std::to_string(m.rows) + ", " + std::to_string(m.cols) + ") of '" + d +
                     "' needs " + std::to_string(need) + (trailing ? " (trailing bytes)" : " (truncated)"));
  }
  m.values.resize(count);
  const auto* p = reinterpret_cast<const unsigned char*>(data.data());
  for (std::size_t i = 0; i < count; ++i, p += item) {
    std::uint64_t word = 0;
    for (int b = 0; b < item; ++b) word |= static_cast<std::uint64_t>(p[big ? item - 1 - b : b]) << (8 * b);
    double v = 0;
    if (item == 2) {
      v = to_double(Format::float16, static_cast<std::uint32_t>(word));
    } else if (item == 4) {
      v = std::bit_cast<float>(static_cast<std::uint32_t>(word));
    } else {
      v = std::bit_cast<double>(word);
    }
    // Fortran order: element (r, c) is stored at c * rows + r.
    const std::size_t at = fortran ? (i % static_cast<std::size_t>(m.rows)) * static_cast<std::size_t>(m.cols) +
                                         i / static_cast<std::size_t>(m.rows)
                                   : i;
    m.values[at] = v;
  }
  return m;
}

}  // namespace

NpyMatrix read_npy_matrix(const std::string& path) { return read_npy(path, false); }
NpyMatrix read_npy_vector(const std::string& path) { return read_npy(path, true); }

void write_npy_f32(const std::string& path, std::int64_t rows, std::int64_t cols, std::span<const std::uint32_t> bits) {
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + std::to_string(rows) + ", " +
                       std::to_string(cols) + "), }";
  // magic (6) + version (2) + length (2) + header + '\n' is a multiple of 64 (numpy.lib.format).
  header.append(63 - (10 + header.size()) % 64, ' ');
  header.push_back('\n');
  std::string out = "\x93NUMPY";
  out.push_back('\x01');
  out.push_back('\x00');
  out.push_back(static_cast<char>(header.size() & 0xFF));
  out.push_back(static_cast<char>(header.size() >> 8));
  out += header;
  out.reserve(out.size() + bits.size() * 4);
  for (const std::uint32_t w : bits)
    for (int b = 0; b < 4; ++b) out.push_back(static_cast<char>((w >> (8 * b)) & 0xFF));
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f || !f.write(out.data(), static_cast<std::streamsize>(out.size())) || !f.flush()) {
    throw UsageError(path + ": cannot write");
  }
}

}  // namespace blockscale::cli
