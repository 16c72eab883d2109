// SPDX-License-Identifier: Apache-2.0
#include "json.h"

#include <stdexcept>

#include "blockscale/golden/json_text.h"

namespace blockscale::golden::detail {
namespace {

constexpr int kMaxDepth = 32;

// The length of the well-formed UTF-8 sequence at s[i], or of its maximal ill-formed subpart
// (negated: at least one byte), by table 3-7 of Unicode 15 section 3.9: the lead byte fixes the
// length and the range of the second byte; every later byte is 80..BF.
int utf8_sequence(std::string_view s, std::size_t i) {
  const auto byte = [&](std::size_t j) { return static_cast<unsigned char>(s[j]); };
  const unsigned char lead = byte(i);
  int length = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // the second byte's range
  if (lead < 0x80) return 1;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) lo = 0xA0;  // no overlong forms below U+0800
    if (lead == 0xED) hi = 0x9F;  // no surrogates U+D800..U+DFFF
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) lo = 0x90;  // no overlong forms below U+10000
    if (lead == 0xF4) hi = 0x8F;  // nothing above U+10FFFF
  } else {
    return -1;  // 80..C1 and F5..FF never begin a sequence
  }
  for (int k = 1; k < length; ++k) {
    const std::size_t j = i + static_cast<std::size_t>(k);
    if (j >= s.size()) return -k;
    const unsigned char c = byte(j);
    if (k == 1 ? (c < lo || c > hi) : (c < 0x80 || c > 0xBF)) return -k;
  }
  return length;
}

struct Reader {
  std::string_view s;
  std::size_t pos = 0;
  std::size_t line = 1;

  [[noreturn]] void fail(const std::string& m) const {
    throw std::invalid_argument("line " + std::to_string(line) + ": " + m);
  }
  void ws() {
    while (pos < s.size()) {
      const char c = s[pos];
      if (c == '\n') ++line;
      if (c != ' ' && c != '\t' && c != '\n' && c != '\r') break;
      ++pos;
    }
  }
  char peek() const { return pos < s.size() ? s[pos] : '\0'; }
  bool at_end() const { return pos >= s.size(); }
  void expect(char c) {
    if (at_end() || s[pos] != c) fail(std::string("expected '") + c + "'");
    ++pos;
  }
  void literal(std::string_view word) {
    if (s.substr(pos, word.size()) != word) fail("unknown literal (true, false or null expected)");
    pos += word.size();
  }

  static void utf8(std::string& out, unsigned cp) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xC0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xE0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }
  unsigned hex4() {
    if (pos + 4 > s.size()) fail("truncated \\u escape");
    unsigned v = 0;
    for (int i = 0; i < 4; ++i) {
      const char c = s[pos++];
      v <<= 4;
      if (c >= '0' && c <= '9')
        v |= static_cast<unsigned>(c - '0');
      else if (c >= 'a' && c <= 'f')
        v |= static_cast<unsigned>(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F')
        v |= static_cast<unsigned>(c - 'A' + 10);
      else
        fail("bad hex digit in \\u escape");
    }
    return v;
  }
  std::string string() {
    expect('"');
    std::string out;
    while (true) {
      if (at_end()) fail("unterminated string");
      const unsigned char c = static_cast<unsigned char>(s[pos++]);
      if (c == '"') return out;
      if (c < 0x20) fail("control character in string (escape it)");
      if (c >= 0x80) {
        const int n = utf8_sequence(s, pos - 1);
        if (n < 0) fail("bytes in a string that are not UTF-8 (RFC 8259 section 8.1)");
        out.append(s.substr(pos - 1, static_cast<std::size_t>(n)));
        pos += static_cast<std::size_t>(n - 1);
        continue;
      }
      if (c != '\\') {
        out += static_cast<char>(c);
        continue;
      }
      if (at_end()) fail("unterminated escape");
      const char e = s[pos++];
      switch (e) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          unsigned cp = hex4();
          if (cp >= 0xD800 && cp < 0xDC00) {
            if (s.substr(pos, 2) != "\\u") fail("high surrogate without a low surrogate");
            pos += 2;
            const unsigned lo = hex4();
            if (lo < 0xDC00 || lo >= 0xE000) fail("high surrogate without a low surrogate");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          } else if (cp >= 0xDC00 && cp < 0xE000) {
            fail("lone low surrogate");
          }
          utf8(out, cp);
          break;
        }
        default:
          fail(std::string("unknown escape \\") +
               (e >= 0x20 && e < 0x7F ? std::string(1, e) : std::string("?")));
      }
    }
  }
  std::string number() {
    const std::size_t start = pos;
    if (peek() == '-') ++pos;
    if (peek() == '0') {
      ++pos;
    } else if (peek() >= '1' && peek() <= '9') {
      while (peek() >= '0' && peek() <= '9') ++pos;
    } else {
      fail("bad number");
    }
    if (peek() == '.') {
      ++pos;
      if (!(peek() >= '0' && peek() <= '9')) fail("bad number: digits expected after '.'");
      while (peek() >= '0' && peek() <= '9') ++pos;
    }
    if (peek() == 'e' || peek() == 'E') {
      ++pos;
      if (peek() == '+' || peek() == '-') ++pos;
      if (!(peek() >= '0' && peek() <= '9')) fail("bad number: digits expected in the exponent");
      while (peek() >= '0' && peek() <= '9') ++pos;
    }
    return std::string(s.substr(start, pos - start));
  }
  Json value(int depth) {
    if (depth > kMaxDepth) fail("nesting deeper than " + std::to_string(kMaxDepth));
    ws();
    Json v;
    v.line = line;
    const char c = peek();
    if (c == '{') {
      ++pos;
      v.type = Json::Type::object;
      ws();
      if (peek() == '}') {
        ++pos;
        return v;
      }
      while (true) {
        ws();
        if (peek() != '"') fail("object key (a string) expected");
        std::string key = string();
        if (v.find(key)) fail("duplicate key \"" + key.substr(0, 40) + "\"");
        ws();
        expect(':');
        Json item = value(depth + 1);
        v.keys.push_back(std::move(key));
        v.values.push_back(std::move(item));
        ws();
        if (peek() == ',') {
          ++pos;
          continue;
        }
        expect('}');
        return v;
      }
    }
    if (c == '[') {
      ++pos;
      v.type = Json::Type::array;
      ws();
      if (peek() == ']') {
        ++pos;
        return v;
      }
      while (true) {
        v.items.push_back(value(depth + 1));
        ws();
        if (peek() == ',') {
          ++pos;
          continue;
        }
        expect(']');
        return v;
      }
    }
    if (c == '"') {
      v.type = Json::Type::string;
      v.text = string();
      return v;
    }
    if (c == 't') {
      literal("true");
      v.type = Json::Type::boolean;
      v.boolean = true;
      return v;
    }
    if (c == 'f') {
      literal("false");
      v.type = Json::Type::boolean;
      return v;
    }
    if (c == 'n') {
      literal("null");
      return v;
    }
    if (c == '-' || (c >= '0' && c <= '9')) {
      v.type = Json::Type::number;
      v.text = number();
      return v;
    }
    if (at_end()) fail("unexpected end of input");
    fail("unexpected character");
  }
};

}  // namespace

const Json* Json::find(std::string_view key) const {
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (keys[i] == key) return &values[i];
  }
  return nullptr;
}

Json parse_json(std::string_view text) {
  Reader r{text};
  Json v = r.value(0);
  r.ws();
  if (!r.at_end()) r.fail("trailing data after the JSON value");
  return v;
}

}  // namespace blockscale::golden::detail

namespace blockscale::golden {

std::string json_escape(std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    const char ch = s[i];
    const auto c = static_cast<unsigned char>(ch);
    if (c >= 0x80) {
      const int n = detail::utf8_sequence(s, i);
      if (n > 0) {
        out.append(s.substr(i, static_cast<std::size_t>(n)));
        i += static_cast<std::size_t>(n);
      } else {
        out += "\\ufffd";
        i += static_cast<std::size_t>(-n);
      }
      continue;
    }
    if (ch == '"' || ch == '\\') {
      out += '\\';
      out += ch;
    } else if (ch == '\n') {
      out += "\\n";
    } else if (ch == '\t') {
      out += "\\t";
    } else if (c < 0x20) {
      out += "\\u00";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    } else {
      out += ch;
    }
    ++i;
  }
  return out;
}

std::string json_string(std::string_view s) {
  std::string out(1, '"');  // appended, not "\"" + ..., which GCC 12 mistakes for an overlapping copy
  out += json_escape(s);
  out += '"';
  return out;
}

}  // namespace blockscale::golden
