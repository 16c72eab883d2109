// SPDX-License-Identifier: Apache-2.0
// A value outside an enum. The library's enums have a fixed underlying type, so a cast integer
// (static_cast<Rounding>(6), a field filled from a file or a foreign ABI) is a value of the type
// that no enumerator names; a switch without it would run some other mode, and a table indexed by
// it would be read past its end. The validators call this for every enum field they take.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace blockscale::detail {

// Throws std::invalid_argument "WHAT = N is not a TYPE" (or "an TYPE") unless v <= last, the enum's
// last enumerator (every enum checked this way numbers its enumerators 0, 1, ... in order). WHAT is
// the concatenation of the `what` pieces, joined only when the check fails: validators run once per
// converted value, and a message built on every call cost five times the conversion.
template <class Enum, class... What>
void require_enumerator(Enum v, Enum last, std::string_view type, const What&... what) {
  if (static_cast<unsigned>(v) <= static_cast<unsigned>(last)) return;
  std::string message;
  (message.append(std::string_view(what)), ...);
  const bool vowel = !type.empty() && std::string_view("AEIOU").find(type.front()) != std::string_view::npos;
  message += " = " + std::to_string(static_cast<unsigned>(v)) + (vowel ? " is not an " : " is not a ");
  message += type;
  throw std::invalid_argument(message);
}

}  // namespace blockscale::detail
