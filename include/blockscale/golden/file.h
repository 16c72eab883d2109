// SPDX-License-Identifier: Apache-2.0
// The golden-vector text format (golden/FORMAT.md): a header of `@key value` lines naming the
// operation exactly, then one case per line, every field in hexadecimal, in the spirit of Berkeley
// TestFloat's test-case lines (inputs, then expected results). This header holds the syntax only:
// reading and writing files, with every malformation reported as "<file>:<line>: <what>". What an
// operation means is in operation.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "blockscale/formats/format.h"

namespace blockscale::golden {

// The version written in the first line, "@golden 1".
inline constexpr int kFormatVersion = 1;

// Limits a reader enforces before allocating anything, so that a hostile or corrupt file cannot
// ask for unbounded memory: fields per case, elements per field, words per case.
inline constexpr std::size_t kMaxFields = 64;
inline constexpr std::size_t kMaxFieldCount = 1u << 16;
inline constexpr std::size_t kMaxWordsPerCase = 1u << 18;

// A malformed, truncated or inconsistent file. what() is "<file>:<line>: <message>"; line 0 means
// the file as a whole (a missing header key, a case count that does not match).
class GoldenError : public std::runtime_error {
 public:
  GoldenError(std::string file, std::size_t line, const std::string& message);
  const std::string& file() const { return file_; }
  std::size_t line() const { return line_; }
  const std::string& message() const { return message_; }

 private:
  std::string file_;
  std::size_t line_;
  std::string message_;
};

// The kinds of sets (issue 9): conversions, quantization, layouts (scale layouts and packing),
// single instructions, and small GEMMs per kernel schedule.
enum class SetKind : std::uint8_t { conversion, quantization, layout, instruction, gemm };
std::string to_string(SetKind k);
std::optional<SetKind> parse_set_kind(std::string_view s);

// The type of one element of a field.
//   code: a code of a blockscale Format, written with ceil(width/4) hex digits (e2m1: 1, e2m3: 2,
//         e4m3: 2, f16: 4, f32: 8). tf32 is the exception: an fp32 bit pattern (8 digits), because
//         the tensor cores read fp32 words and truncate them (numerics.md b.1). ue4m3 and ue8m0
//         take a whole byte (bit 7 of ue4m3 is ignored by the hardware, numerics.md b.5).
//   f64:  an IEEE binary64 bit pattern, 16 digits.
//   u8, u32: unsigned integers of fixed width (2 and 8 digits): packed bytes, random words.
//   u64:  an unsigned integer written with 1 to 16 digits (indices, offsets, sizes); such a field
//         holds one element.
enum class WordType : std::uint8_t { code, f64, u8, u32, u64 };

struct ElementType {
  WordType word = WordType::code;
  Format format = Format::float32;  // for WordType::code
  static ElementType of(Format f) { return {WordType::code, f}; }
  friend bool operator==(const ElementType&, const ElementType&) = default;
};
// Format short names ("e4m3", "ue8m0", "f16", "tf32", ...), "f64", "u8", "u32", "u64".
std::string to_string(ElementType t);
std::optional<ElementType> parse_element_type(std::string_view s);
// Hex digits per element; 0 for u64 (variable width).
int hex_digits(ElementType t);
// The largest word an element may hold (e2m3: 0x3F, e4m3: 0xFF, f16: 0xFFFF, tf32: 0xFFFFFFFF).
std::uint64_t max_word(ElementType t);

struct FieldSpec {
  std::string name;
  ElementType type;
  std::size_t count = 1;  // elements; a vector field writes them element 0 first, concatenated
  bool output = false;    // an expected result (after "->" in @fields)
  friend bool operator==(const FieldSpec&, const FieldSpec&) = default;
};
// "a:e4m3[32] b:e4m3[32] c:f32 -> d:f32". Inputs come first, then "->", then outputs.
std::string fields_string(std::span<const FieldSpec> fields);
// The inverse; throws std::invalid_argument naming what is wrong.
std::vector<FieldSpec> parse_fields(std::string_view text);
std::size_t words_per_case(std::span<const FieldSpec> fields);
std::size_t input_words(std::span<const FieldSpec> fields);

struct Header {
  std::string generator;  // "blockscale 0.1.0"
  SetKind kind = SetKind::conversion;
  std::vector<std::string> ops;    // @op lines: the operation, exactly (one or more)
  std::vector<std::string> modes;  // @mode lines: one per output column (conversions)
  std::vector<FieldSpec> fields;   // @fields
  std::optional<std::uint64_t> seed;
  std::string data;         // @data: which strata of inputs ("edge", "random", "mixed(...)", "hardware")
  std::uint64_t cases = 0;  // @cases
  std::vector<std::string> sources;  // @source lines: where hardware results come from
  std::vector<std::string> notes;    // "# " comment lines, written after the header
  // Line numbers (1-based) of the header lines, for messages about their content.
  std::vector<std::size_t> op_lines, mode_lines;
  std::size_t kind_line = 0, fields_line = 0;
};

struct GoldenFile {
  std::string name;  // how messages name the file (its path)
  Header header;
  std::size_t words_per_case = 0;
  std::vector<std::uint64_t> words;     // case i: words[i * words_per_case, (i + 1) * words_per_case)
  std::vector<std::size_t> case_lines;  // line number of case i

  std::size_t cases() const { return case_lines.size(); }
  std::span<const std::uint64_t> case_words(std::size_t i) const {
    return std::span<const std::uint64_t>(words).subspan(i * words_per_case, words_per_case);
  }
};

// Parses a whole file. Throws GoldenError (file `name`, the offending line) for anything malformed:
// a missing or repeated header key, an unknown key, bad hex, a field of the wrong length, an element
// beyond its type, a wrong number of fields, a case count that differs from @cases, CR line ends.
// Semantic consistency (does @fields match @op?) is checked by make_operation (operation.h).
GoldenFile parse_golden(std::string_view text, const std::string& name);
// Reads and parses a file; GoldenError when it cannot be read.
GoldenFile read_golden(const std::filesystem::path& path);
// A whole file (a golden file, a manifest, K&M data, or with read_file_bytes any file of a set, .npy
// companions included); GoldenError for a directory, a file that cannot be read, one over 1 GiB, and
// in read_text_file a NUL byte, refused as it is read (a binary file or /dev/zero named by mistake).
std::string read_text_file(const std::filesystem::path& path);
std::string read_file_bytes(const std::filesystem::path& path);

// The text of a file: header lines in a fixed order, the notes, then the cases.
std::string format_golden(const GoldenFile& f);
// One case line.
std::string format_case(std::span<const FieldSpec> fields, std::span<const std::uint64_t> words);

// Quotes at most `max` characters of s for a message, escaping anything unprintable.
std::string quote(std::string_view s, std::size_t max = 48);

}  // namespace blockscale::golden
