// SPDX-License-Identifier: Apache-2.0
// A small strict JSON reader (RFC 8259) for manifests: objects, arrays, strings with every escape,
// numbers kept as text, true/false/null; strings must be UTF-8 (RFC 8259 section 8.1). Nesting is
// limited to 32 levels; duplicate keys and trailing data are errors. Every error names the line.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace blockscale::golden::detail {

struct Json {
  enum class Type { null, boolean, number, string, array, object } type = Type::null;
  bool boolean = false;
  std::string text;               // the string's value, or the number as written
  std::vector<Json> items;        // array elements
  std::vector<std::string> keys;  // object members: keys[i] names values[i] (parallel vectors,
  std::vector<Json> values;       // since std::pair<std::string, Json> needs a complete Json)
  std::size_t line = 0;

  // The member named `key`, or nullptr.
  const Json* find(std::string_view key) const;
};

// Throws std::invalid_argument "line N: <what>".
Json parse_json(std::string_view text);

}  // namespace blockscale::golden::detail
