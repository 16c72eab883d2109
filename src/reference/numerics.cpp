// SPDX-License-Identifier: Apache-2.0
#include "blockscale/reference/numerics.h"

#include <optional>
#include <stdexcept>

namespace blockscale::reference {

namespace {

constexpr std::string_view kSaturate = "+saturate";

std::optional<Rounding> parse_rounding(std::string_view s) {
  for (const Rounding r : {Rounding::nearest_even, Rounding::toward_zero, Rounding::upward, Rounding::downward,
                           Rounding::nearest_away}) {
    if (s == to_string(r)) return r;
  }
  return std::nullopt;
}

}  // namespace

std::string to_string(const Numerics& n) {
  std::string s;
  switch (n.mode) {
    case Mode::exact:
      s = n.rounding == Rounding::nearest_even ? "exact" : "exact(" + blockscale::to_string(n.rounding) + ")";
      break;
    case Mode::sequential: s = "sequential"; break;
    case Mode::hardware: s = "hardware(" + n.model + ")"; break;
  }
  if (static_cast<unsigned>(n.mode) > static_cast<unsigned>(Mode::hardware)) {
    s = "Mode(" + std::to_string(static_cast<unsigned>(n.mode)) + ")";
  }
  if (n.integer_overflow == IntegerOverflow::saturate) s += kSaturate;
  return s;
}

Numerics parse_numerics(std::string_view text) {
  const std::string original(text);
  Numerics n;
  if (text.size() > kSaturate.size() && text.substr(text.size() - kSaturate.size()) == kSaturate) {
    n.integer_overflow = IntegerOverflow::saturate;
    text.remove_suffix(kSaturate.size());
  }
  auto argument = [&](std::string_view head) -> std::optional<std::string_view> {
    if (text.size() > head.size() + 2 && text.substr(0, head.size()) == head && text[head.size()] == '(' &&
        text.back() == ')')
      return text.substr(head.size() + 1, text.size() - head.size() - 2);
    return std::nullopt;
  };
  if (text == "exact") {
    n.mode = Mode::exact;
  } else if (text == "sequential" || text == "sequential_f32") {
    n.mode = Mode::sequential;
  } else if (const auto r = argument("exact")) {
    const auto rounding = parse_rounding(*r);
    if (!rounding)
      throw std::invalid_argument("numerics '" + original + "': unknown rounding '" + std::string(*r) +
                                  "' (nearest_even, toward_zero, upward, downward, nearest_away)");
    n.mode = Mode::exact;
    n.rounding = *rounding;
  } else if (const auto m = argument("hardware")) {
    // A model name is a word such as sm_90a: "hardware(a)(b)" is not the model "a)(b".
    if (m->find_first_of("() \t") != std::string_view::npos) {
      throw std::invalid_argument("numerics '" + original + "': the model name '" + std::string(*m) +
                                  "' holds a parenthesis or a space (hardware(<model>), e.g. hardware(sm_90a))");
    }
    n.mode = Mode::hardware;
    n.model = std::string(*m);
  } else {
    throw std::invalid_argument("numerics '" + original +
                                "' is not one of exact, exact(<rounding>), sequential, sequential_f32, "
                                "hardware(<model>), optionally followed by +saturate");
  }
  return n;
}

}  // namespace blockscale::reference
