// SPDX-License-Identifier: Apache-2.0
// Test helpers for calls that must refuse bad input with std::invalid_argument naming the rule.
#pragma once

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

namespace blockscale::test {

// The message of the std::invalid_argument that f() throws, or "no exception".
template <class F>
std::string invalid_argument_message(F&& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "no exception";
}

// The call throws std::invalid_argument whose message contains `message`.
template <class F>
void expect_throw_with(F&& f, const std::string& message) {
  try {
    f();
    ADD_FAILURE() << "no error, expected '" << message << "'";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << "'" << e.what() << "' lacks '" << message << "'";
  }
}

}  // namespace blockscale::test
