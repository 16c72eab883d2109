// SPDX-License-Identifier: Apache-2.0
// JSON string literals for everything blockscale writes as JSON (manifests, the command line's
// --json output, conformance reports). RFC 8259 section 7 says which characters a string must
// escape, and section 8.1 that JSON text exchanged between systems is UTF-8; paths and messages
// are bytes that need not be, so each byte sequence that is not well-formed UTF-8 (Unicode 15,
// section 3.9, table 3-7: overlong forms, surrogates and code points above U+10FFFF included) is
// written as U+FFFD, one per maximal ill-formed subpart (the practice of section 3.9 that Python's
// bytes.decode("utf-8", "replace") and the WHATWG decoder follow). Well-formed text is kept byte
// for byte, so a JSON reader gives back exactly the string.
#pragma once

#include <string>
#include <string_view>

namespace blockscale::golden {

// The body of the literal, without quotes: '"' and '\' escaped, \n and \t as such, the other
// control characters U+0000..U+001F as \u00XX.
std::string json_escape(std::string_view s);
// The whole literal, with quotes.
std::string json_string(std::string_view s);

}  // namespace blockscale::golden
