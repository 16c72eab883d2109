// SPDX-License-Identifier: Apache-2.0
#include "blockscale/golden/file.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <stdexcept>

#include "blockscale/formats/detail/enum_check.h"
#include "blockscale/golden/operation.h"

namespace blockscale::golden {

GoldenError::GoldenError(std::string file, std::size_t line, const std::string& message)
    : std::runtime_error(file + (line > 0 ? ":" + std::to_string(line) : std::string()) + ": " + message),
      file_(std::move(file)),
      line_(line),
      message_(message) {}

std::string to_string(SetKind k) {
  switch (k) {
    case SetKind::conversion: return "conversion";
    case SetKind::quantization: return "quantization";
    case SetKind::layout: return "layout";
    case SetKind::instruction: return "instruction";
    case SetKind::gemm: return "gemm";
  }
  return "?";
}

std::optional<SetKind> parse_set_kind(std::string_view s) {
  for (SetKind k :
       {SetKind::conversion, SetKind::quantization, SetKind::layout, SetKind::instruction, SetKind::gemm}) {
    if (s == to_string(k)) return k;
  }
  return std::nullopt;
}

std::string to_string(ElementType t) {
  switch (t.word) {
    case WordType::code: return is_known(t.format) ? info(t.format).short_name : blockscale::to_string(t.format);
    case WordType::f64: return "f64";
    case WordType::u8: return "u8";
    case WordType::u32: return "u32";
    case WordType::u64: return "u64";
  }
  return "?";
}

std::optional<ElementType> parse_element_type(std::string_view s) {
  if (s == "f64") return ElementType{WordType::f64, Format::float32};
  if (s == "u8") return ElementType{WordType::u8, Format::float32};
  if (s == "u32") return ElementType{WordType::u32, Format::float32};
  if (s == "u64") return ElementType{WordType::u64, Format::float32};
  // Only the exact short names: the file format does not take aliases.
  for (const FormatInfo& fi : kFormatTable) {
    if (s == fi.short_name) return ElementType::of(fi.id);
  }
  return std::nullopt;
}

int hex_digits(ElementType t) {
  switch (t.word) {
    case WordType::code: {
      require_known(t.format, "golden hex_digits");
      const FormatInfo& fi = info(t.format);
      if (fi.code_shift != 0 || fi.storage_bits == 32) return 8;  // tf32 / f32: fp32 words
      if (fi.storage_bits == 8) return 2 - (width(t.format) <= 4 ? 1 : 0);
      return (width(t.format) + 3) / 4;
    }
    case WordType::f64: return 16;
    case WordType::u8: return 2;
    case WordType::u32: return 8;
    case WordType::u64: return 0;
  }
  throw std::invalid_argument("golden hex_digits: WordType = " + std::to_string(static_cast<unsigned>(t.word)) +
                              " is not a WordType");
}

std::uint64_t max_word(ElementType t) {
  switch (t.word) {
    case WordType::code: {
      require_known(t.format, "golden max_word");
      const FormatInfo& fi = info(t.format);
      if (fi.code_shift != 0) return 0xFFFFFFFFu;         // tf32: any fp32 word
      if (t.format == Format::float8_ue4m3) return 0xFF;  // bit 7 is ignored by the hardware
      return code_mask(t.format);
    }
    case WordType::f64: return ~std::uint64_t{0};
    case WordType::u8: return 0xFF;
    case WordType::u32: return 0xFFFFFFFFu;
    case WordType::u64: return ~std::uint64_t{0};
  }
  throw std::invalid_argument("golden max_word: WordType = " + std::to_string(static_cast<unsigned>(t.word)) +
                              " is not a WordType");
}

std::string fields_string(std::span<const FieldSpec> fields) {
  std::string s;
  bool arrow = false;
  for (const FieldSpec& f : fields) {
    if (!s.empty()) s += ' ';
    if (f.output && !arrow) {
      s += "-> ";
      arrow = true;
    }
    s += f.name;
    s += ':';
    s += to_string(f.type);
    if (f.count != 1) {
      s += '[';
      s += std::to_string(f.count);
      s += ']';
    }
  }
  return s;
}

namespace {

[[noreturn]] void bad(const std::string& m) { throw std::invalid_argument(m); }

std::vector<std::string_view> split_ws(std::string_view s) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
    std::size_t j = i;
    while (j < s.size() && s[j] != ' ' && s[j] != '\t') ++j;
    if (j > i) out.push_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

bool valid_name(std::string_view n) {
  if (n.empty() || n.size() > 32 || !(n[0] >= 'a' && n[0] <= 'z')) return false;
  return std::all_of(n.begin(), n.end(),
                     [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'; });
}

}  // namespace

std::vector<FieldSpec> parse_fields(std::string_view text) {
  std::vector<FieldSpec> out;
  bool outputs = false;
  std::size_t words = 0;
  for (std::string_view tok : split_ws(text)) {
    if (tok == "->") {
      if (outputs) bad("'->' appears twice");
      if (out.empty()) bad("no input field before '->'");
      outputs = true;
      continue;
    }
    const std::size_t colon = tok.find(':');
    if (colon == std::string_view::npos) bad("field " + quote(tok) + " is not name:type or name:type[count]");
    FieldSpec f;
    f.name = std::string(tok.substr(0, colon));
    if (!valid_name(f.name))
      bad("field name " + quote(f.name) + " must be [a-z][a-z0-9_]*, at most 32 characters");
    for (const FieldSpec& g : out) {
      if (g.name == f.name) bad("field name " + quote(f.name) + " appears twice");
    }
    std::string_view type = tok.substr(colon + 1);
    const std::size_t br = type.find('[');
    if (br != std::string_view::npos) {
      if (type.back() != ']') bad("field " + quote(tok) + ": count must be written [N]");
      const std::string_view num = type.substr(br + 1, type.size() - br - 2);
      std::size_t n = 0;
      const auto [p, ec] = std::from_chars(num.data(), num.data() + num.size(), n);
      if (ec != std::errc() || p != num.data() + num.size() || num.empty() || num[0] == '0') {
        bad("field " + quote(tok) + ": count " + quote(num) + " is not a positive decimal number");
      }
      if (n > kMaxFieldCount)
        bad("field " + quote(tok) + ": count above the limit " + std::to_string(kMaxFieldCount));
      f.count = n;
      type = type.substr(0, br);
    }
    const auto t = parse_element_type(type);
    if (!t) bad("field " + quote(tok) + ": unknown type " + quote(type));
    f.type = *t;
    if (f.type.word == WordType::u64 && f.count != 1)
      bad("field " + quote(tok) + ": a u64 field holds one element");
    f.output = outputs;
    words += f.count;
    if (words > kMaxWordsPerCase) bad("more than " + std::to_string(kMaxWordsPerCase) + " elements per case");
    out.push_back(std::move(f));
    if (out.size() > kMaxFields) bad("more than " + std::to_string(kMaxFields) + " fields");
  }
  if (out.empty()) bad("no fields");
  if (!outputs) bad("no '->' before the expected-result fields");
  if (out.back().output == false) bad("no field after '->'");
  return out;
}

std::size_t words_per_case(std::span<const FieldSpec> fields) {
  std::size_t n = 0;
  for (const FieldSpec& f : fields) n += f.count;
  return n;
}

std::size_t input_words(std::span<const FieldSpec> fields) {
  std::size_t n = 0;
  for (const FieldSpec& f : fields) n += f.output ? 0 : f.count;
  return n;
}

std::string quote(std::string_view s, std::size_t max) {
  std::string out = "'";
  const std::size_t n = std::min(s.size(), max);
  for (std::size_t i = 0; i < n; ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x7F && c != '\'' && c != '\\') {
      out += static_cast<char>(c);
    } else {
      static const char* hex = "0123456789abcdef";
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  if (s.size() > max) out += "...";
  return out + "'";
}

namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

struct Parser {
  std::string_view text;
  const std::string& name;
  GoldenFile out;
  std::size_t line_no = 0;

  [[noreturn]] void fail(const std::string& m) const { throw GoldenError(name, line_no, m); }
  [[noreturn]] void fail_file(const std::string& m) const { throw GoldenError(name, 0, m); }

  std::uint64_t parse_u64_decimal(std::string_view v, const char* key) const {
    std::uint64_t n = 0;
    const auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
    if (v.empty() || ec != std::errc() || p != v.data() + v.size() || (v.size() > 1 && v[0] == '0')) {
      fail(std::string("@") + key + " must be a decimal integer, got " + quote(v));
    }
    return n;
  }

  void header_line(std::string_view line, bool& seen_kind, bool& seen_fields, bool& seen_cases,
                   bool& seen_gen, bool& seen_seed, bool& seen_data) {
    const std::size_t sp = line.find(' ');
    const std::string_view key =
        line.substr(1, sp == std::string_view::npos ? std::string_view::npos : sp - 1);
    std::string_view value = sp == std::string_view::npos ? std::string_view() : line.substr(sp + 1);
    Header& h = out.header;
    auto once = [&](bool& seen) {
      if (seen) fail("@" + std::string(key) + " appears twice");
      seen = true;
    };
    if (value.empty()) fail("@" + std::string(key) + " has no value");
    if (key == "golden") {
      fail("@golden appears twice");
    } else if (key == "generator") {
      once(seen_gen);
      h.generator = std::string(value);
    } else if (key == "kind") {
      once(seen_kind);
      const auto k = parse_set_kind(value);
      if (!k)
        fail("unknown @kind " + quote(value) + " (conversion, quantization, layout, instruction, gemm)");
      h.kind = *k;
      h.kind_line = line_no;
    } else if (key == "op") {
      h.ops.emplace_back(value);
      h.op_lines.push_back(line_no);
    } else if (key == "mode") {
      h.modes.emplace_back(value);
      h.mode_lines.push_back(line_no);
    } else if (key == "fields") {
      once(seen_fields);
      try {
        h.fields = parse_fields(value);
      } catch (const std::invalid_argument& e) {
        fail(std::string("@fields: ") + e.what());
      }
      h.fields_line = line_no;
      out.words_per_case = words_per_case(h.fields);
    } else if (key == "seed") {
      once(seen_seed);
      h.seed = parse_u64_decimal(value, "seed");
    } else if (key == "data") {
      once(seen_data);
      // The generated kinds (parse_data_kind) and the two measured ones.
      if (!parse_data_kind(value) && value != "hardware" && value != "self-test")
        fail("@data " + quote(value) + " is not one of edge, random, realistic, mixed, hardware, self-test");
      h.data = std::string(value);
    } else if (key == "cases") {
      once(seen_cases);
      h.cases = parse_u64_decimal(value, "cases");
    } else if (key == "source") {
      h.sources.emplace_back(value);
    } else {
      fail("unknown header key " + quote(std::string("@") + std::string(key)) +
           " (golden, generator, kind, op, mode, fields, seed, data, cases, source)");
    }
  }

  void case_line(std::string_view line) {
    const auto& fields = out.header.fields;
    const auto toks = split_ws(line);
    if (toks.size() != fields.size()) {
      fail("expected " + std::to_string(fields.size()) + " fields (" + fields_string(fields) + "), got " +
           std::to_string(toks.size()));
    }
    if (out.case_lines.size() >= out.header.cases) {
      fail("more cases than @cases " + std::to_string(out.header.cases));
    }
    for (std::size_t f = 0; f < fields.size(); ++f) {
      const FieldSpec& spec = fields[f];
      const std::string_view tok = toks[f];
      const int digits = hex_digits(spec.type);
      for (std::size_t i = 0; i < tok.size(); ++i) {
        if (hex_value(tok[i]) < 0) fail("field " + spec.name + ": " + quote(tok) + " is not hexadecimal");
      }
      if (digits == 0) {
        if (tok.size() > 16) fail("field " + spec.name + ": more than 16 hex digits in " + quote(tok));
        if (tok.size() > 1 && tok[0] == '0')
          fail("field " + spec.name + ": " + quote(tok) + " has a leading zero (a u64 is written without them)");
        std::uint64_t v = 0;
        for (char c : tok) v = (v << 4) | static_cast<std::uint64_t>(hex_value(c));
        out.words.push_back(v);
        continue;
      }
      const std::size_t want = spec.count * static_cast<std::size_t>(digits);
      if (tok.size() != want) {
        fail("field " + spec.name + " (" + to_string(spec.type) +
             (spec.count > 1 ? "[" + std::to_string(spec.count) + "]" : std::string()) + ") needs " +
             std::to_string(want) + " hex digits, got " + std::to_string(tok.size()));
      }
      const std::uint64_t limit = max_word(spec.type);
      for (std::size_t e = 0; e < spec.count; ++e) {
        std::uint64_t v = 0;
        for (int d = 0; d < digits; ++d)
          v = (v << 4) | static_cast<std::uint64_t>(hex_value(tok[e * digits + d]));
        if (v > limit) {
          fail("field " + spec.name + (spec.count > 1 ? " element " + std::to_string(e) : std::string()) +
               ": " + quote(tok.substr(e * digits, digits)) + " is not a " + to_string(spec.type) +
               " value (at most 0x" +
               [&] {
                 char digits_of_limit[17];  // to_chars groups no digits, whatever the locale
                 return std::string(digits_of_limit,
                                    std::to_chars(digits_of_limit, digits_of_limit + 17, limit, 16).ptr);
               }() +
               ")");
        }
        out.words.push_back(v);
      }
    }
    out.case_lines.push_back(line_no);
  }

  void run() {
    out.name = name;
    bool magic = false, in_cases = false;
    bool seen_kind = false, seen_fields = false, seen_cases = false, seen_gen = false, seen_seed = false,
         seen_data = false;
    std::size_t pos = 0;
    while (pos < text.size()) {
      std::size_t end = text.find('\n', pos);
      if (end == std::string_view::npos) end = text.size();
      std::string_view line = text.substr(pos, end - pos);
      pos = end + 1;
      ++line_no;
      if (line.find('\r') != std::string_view::npos)
        fail("carriage return in line (line ends must be LF only)");
      if (line.find('\0') != std::string_view::npos) fail("NUL byte in line");
      for (const char c : line) {
        if (static_cast<unsigned char>(c) >= 0x80) {
          char hex[8];
          std::snprintf(hex, sizeof hex, "0x%02X", static_cast<unsigned char>(c));
          fail(std::string("non-ASCII byte ") + hex + " (golden files are ASCII)");
        }
      }
      if (line.empty()) continue;
      if (line[0] == '#' && !magic) fail("not a blockscale golden-vector file: the first line must be '@golden 1'");
      if (line[0] == '#') {
        if (!in_cases && magic && line.size() >= 2 && line[1] == ' ')
          out.header.notes.emplace_back(line.substr(2));
        continue;
      }
      if (!magic) {
        if (line.substr(0, 8) != "@golden ")
          fail("not a blockscale golden-vector file: the first line must be '@golden 1'");
        const std::string_view v = line.substr(8);
        if (v != "1")
          fail("unsupported golden format version " + quote(v) + " (this reader knows version 1)");
        magic = true;
        continue;
      }
      if (line[0] == '@') {
        if (in_cases) fail("header line after the first case");
        header_line(line, seen_kind, seen_fields, seen_cases, seen_gen, seen_seed, seen_data);
        continue;
      }
      if (!in_cases) {
        if (!seen_gen) fail("@generator is missing before the first case");
        if (!seen_kind) fail("@kind is missing before the first case");
        if (out.header.ops.empty()) fail("@op is missing before the first case");
        if (!seen_fields) fail("@fields is missing before the first case");
        if (!seen_cases) fail("@cases is missing before the first case");
        in_cases = true;
        // At most as many words as the text can hold (each takes a digit and a separator): a
        // 100-byte file that declares 2^16 cases of 2^18 words must not reserve 40 GiB.
        out.words.reserve(static_cast<std::size_t>(std::min<std::uint64_t>(
            std::min<std::uint64_t>(out.header.cases, 1u << 16) * out.words_per_case, text.size() / 2 + 1)));
      }
      case_line(line);
    }
    if (!magic) fail_file("empty file: not a blockscale golden-vector file");
    // FORMAT.md, "Data": hardware and self-test sets are not drawn from a seed.
    if (out.header.seed && (out.header.data == "hardware" || out.header.data == "self-test"))
      fail_file("@seed with @data " + out.header.data + ": sets measured on a device are not drawn from a seed");
    if (!in_cases) {
      if (!seen_gen) fail_file("@generator is missing");
      if (!seen_kind) fail_file("@kind is missing");
      if (out.header.ops.empty()) fail_file("@op is missing");
      if (!seen_fields) fail_file("@fields is missing");
      if (!seen_cases) fail_file("@cases is missing");
    }
    if (out.case_lines.size() != out.header.cases) {
      fail_file("file ends after " + std::to_string(out.case_lines.size()) + " cases, but @cases says " +
                std::to_string(out.header.cases) + " (truncated?)");
    }
  }
};

}  // namespace

GoldenFile parse_golden(std::string_view text, const std::string& name) {
  Parser p{text, name, {}};
  p.run();
  return std::move(p.out);
}

namespace {

std::string read_file(const std::filesystem::path& path, bool text) {
  std::error_code ec;
  // An ifstream opens a directory on Linux and reads nothing: "empty file" would mislead.
  if (std::filesystem::is_directory(path, ec)) throw GoldenError(path.string(), 0, "a directory, not a file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw GoldenError(path.string(), 0, "cannot open the file");
  // Read in chunks, a text file's NUL bytes refused as they come: golden files, manifests and the
  // K&M data are text, so a binary file or a device such as /dev/zero named by mistake stops at its
  // first chunk instead of filling memory. The size cap is far above a file of the generator's
  // largest set (2^25 words: under 0.6 GB of hex).
  constexpr std::size_t kMaxBytes = std::size_t{1} << 30;
  const auto too_large = [&] {
    return GoldenError(path.string(), 0, "larger than " + std::to_string(kMaxBytes) + " bytes: not a file of a golden set");
  };
  // A regular file tells its size: refused before a gigabyte is read (pipes and devices are counted
  // as they are read, below).
  if (std::filesystem::is_regular_file(path, ec) && std::filesystem::file_size(path, ec) > kMaxBytes && !ec) {
    throw too_large();
  }
  std::string bytes;
  std::array<char, std::size_t{1} << 16> chunk;
  while (in.read(chunk.data(), chunk.size()) || in.gcount() > 0) {
    const auto n = static_cast<std::size_t>(in.gcount());
    if (const void* nul = text ? std::memchr(chunk.data(), '\0', n) : nullptr) {
      const auto at = bytes.size() + static_cast<std::size_t>(static_cast<const char*>(nul) - chunk.data());
      throw GoldenError(path.string(), 0, "not a text file (a NUL byte at offset " + std::to_string(at) + ")");
    }
    if (bytes.size() + n > kMaxBytes) throw too_large();
    bytes.append(chunk.data(), n);
  }
  if (in.bad()) throw GoldenError(path.string(), 0, "read error");
  return bytes;
}

}  // namespace

std::string read_text_file(const std::filesystem::path& path) { return read_file(path, true); }
std::string read_file_bytes(const std::filesystem::path& path) { return read_file(path, false); }

GoldenFile read_golden(const std::filesystem::path& path) {
  return parse_golden(read_text_file(path), path.string());
}

std::string format_case(std::span<const FieldSpec> fields, std::span<const std::uint64_t> words) {
  static const char* hex = "0123456789abcdef";
  std::string s;
  std::size_t w = 0;
  for (std::size_t f = 0; f < fields.size(); ++f) {
    if (f) s += ' ';
    const int digits = hex_digits(fields[f].type);
    for (std::size_t e = 0; e < fields[f].count; ++e, ++w) {
      const std::uint64_t v = words[w];
      if (digits == 0) {
        int n = 1;
        while (n < 16 && (v >> (4 * n)) != 0) ++n;
        for (int d = n - 1; d >= 0; --d) s += hex[(v >> (4 * d)) & 15];
      } else {
        for (int d = digits - 1; d >= 0; --d) s += hex[(v >> (4 * d)) & 15];
      }
    }
  }
  return s;
}

std::string format_golden(const GoldenFile& f) {
  const Header& h = f.header;
  blockscale::detail::require_enumerator(h.kind, SetKind::gemm, "SetKind", "format_golden: header kind");
  std::string s = "@golden " + std::to_string(kFormatVersion) + "\n";
  s += "@generator " + h.generator + "\n";
  s += "@kind " + to_string(h.kind) + "\n";
  for (const std::string& op : h.ops) s += "@op " + op + "\n";
  for (const std::string& m : h.modes) s += "@mode " + m + "\n";
  for (const std::string& src : h.sources) s += "@source " + src + "\n";
  if (h.seed) s += "@seed " + std::to_string(*h.seed) + "\n";
  if (!h.data.empty()) s += "@data " + h.data + "\n";
  s += "@fields " + fields_string(h.fields) + "\n";
  s += "@cases " + std::to_string(f.cases()) + "\n";
  for (const std::string& n : h.notes) s += "# " + n + "\n";
  for (std::size_t i = 0; i < f.cases(); ++i) {
    s += format_case(h.fields, f.case_words(i));
    s += '\n';
  }
  return s;
}

}  // namespace blockscale::golden
