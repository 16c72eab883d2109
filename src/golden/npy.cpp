// SPDX-License-Identifier: Apache-2.0
// The NumPy format, version 1.0 (numpy.lib.format): the magic string "\x93NUMPY", the version
// bytes 1 0, a little-endian uint16 header length, then an ASCII Python dict literal with keys
// 'descr', 'fortran_order' and 'shape', padded with spaces and ended by '\n' so that the data starts
// at a multiple of 64 bytes; then the records, packed, in C order.
#include "blockscale/golden/npy.h"

#include <algorithm>

namespace blockscale::golden {
namespace {

int word_bytes(ElementType t) {
  switch (t.word) {
    case WordType::code: return info(t.format).storage_bits / 8;
    case WordType::f64: return 8;
    case WordType::u8: return 1;
    case WordType::u32: return 4;
    case WordType::u64: return 8;
  }
  return 8;
}

std::string descr_of(int bytes) { return bytes == 1 ? "|u1" : "<u" + std::to_string(bytes); }

std::string header_dict(const GoldenFile& f) {
  std::string d = "{'descr': [";
  const auto& fields = f.header.fields;
  for (std::size_t i = 0; i < fields.size(); ++i) {
    if (i) d += ", ";
    d += "('" + fields[i].name + "', '" + descr_of(word_bytes(fields[i].type)) + "'";
    if (fields[i].count != 1) d += ", (" + std::to_string(fields[i].count) + ",)";
    d += ")";
  }
  d += "], 'fortran_order': False, 'shape': (" + std::to_string(f.cases()) + ",), }";
  return d;
}

std::size_t record_bytes(const GoldenFile& f) {
  std::size_t n = 0;
  for (const FieldSpec& s : f.header.fields) n += s.count * static_cast<std::size_t>(word_bytes(s.type));
  return n;
}

}  // namespace

std::string npy_companion(const GoldenFile& f) {
  std::string dict = header_dict(f);
  // magic (6) + version (2) + length (2) + dict + padding + '\n' is a multiple of 64.
  const std::size_t unpadded = 10 + dict.size() + 1;
  dict.append((64 - unpadded % 64) % 64, ' ');
  dict += '\n';
  std::string out("\x93NUMPY\x01\x00", 8);
  out += static_cast<char>(dict.size() & 0xFF);
  out += static_cast<char>(dict.size() >> 8);
  out += dict;
  const auto& fields = f.header.fields;
  out.reserve(out.size() + f.cases() * record_bytes(f));
  for (std::size_t c = 0; c < f.cases(); ++c) {
    const auto w = f.case_words(c);
    std::size_t at = 0;
    for (const FieldSpec& s : fields) {
      const int bytes = word_bytes(s.type);
      for (std::size_t e = 0; e < s.count; ++e, ++at) {
        for (int b = 0; b < bytes; ++b) out += static_cast<char>((w[at] >> (8 * b)) & 0xFF);
      }
    }
  }
  return out;
}

void check_npy_companion(std::string_view bytes, const std::string& name, const GoldenFile& f) {
  const std::string expect = npy_companion(f);
  if (bytes == expect) return;
  if (bytes.size() < 10 || bytes.substr(0, 8) != std::string_view(expect).substr(0, 8)) {
    throw GoldenError(name, 0, "not a NumPy format 1.0 file (bad magic or version)");
  }
  const std::size_t data =
      10 + (static_cast<unsigned char>(expect[8]) | (static_cast<unsigned char>(expect[9]) << 8));
  if (bytes.substr(0, std::min(bytes.size(), data)) != std::string_view(expect).substr(0, data)) {
    throw GoldenError(name, 0,
                      "the .npy header does not match " + f.name + " (expected " + header_dict(f) + ")");
  }
  if (bytes.size() != expect.size()) {
    throw GoldenError(name, 0,
                      "the .npy data has " + std::to_string(bytes.size() - data) + " bytes, " + f.name +
                          " needs " + std::to_string(expect.size() - data));
  }
  std::size_t i = data;
  while (bytes[i] == expect[i]) ++i;
  const std::size_t record = (i - data) / record_bytes(f);
  throw GoldenError(name, 0,
                    "record " + std::to_string(record) + " differs from case " + std::to_string(record) +
                        " of " + f.name + " (line " + std::to_string(f.case_lines[record]) + ")");
}

}  // namespace blockscale::golden
