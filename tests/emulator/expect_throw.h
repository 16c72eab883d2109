// SPDX-License-Identifier: Apache-2.0
// Test helper of tests/emulator: the call throws std::invalid_argument whose message contains `message`.
#pragma once

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

namespace blockscale::emulator::test {

template <class F>
void expect_throw_with(F&& f, const std::string& message) {
  try {
    f();
    ADD_FAILURE() << "no error, expected '" << message << "'";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << "'" << e.what() << "' lacks '" << message << "'";
  }
}

}  // namespace blockscale::emulator::test
