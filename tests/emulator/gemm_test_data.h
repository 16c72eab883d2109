// SPDX-License-Identifier: Apache-2.0
// What the GEMM-level tests share: the fast paths this CPU runs, and C matrices with every class of
// f32 value (fast_path_test.cpp, exact_gemm_test.cpp, exact_mma_test.cpp).
#pragma once

#include <bit>
#include <cstdint>
#include <random>
#include <vector>

#include "blockscale/emulator/gemm.h"

namespace blockscale::emulator::testing {

// Every fast path this CPU (and build) runs: portable always, AVX2 and AVX-512 where available.
inline std::vector<GemmPath> fast_paths() {
  std::vector<GemmPath> paths{GemmPath::portable};
  for (GemmPath p : {GemmPath::avx2, GemmPath::avx512}) {
    if (gemm_path_available(p)) paths.push_back(p);
  }
  return paths;
}

// C with every class: zeros of both signs, subnormals, random words (NaN payloads and huge and tiny
// normals among them), Inf, and Gaussian values of scale `near` (near the products).
inline std::vector<std::uint32_t> c_bits(std::mt19937_64& rng, std::size_t n, double near) {
  std::normal_distribution<double> g;
  std::vector<std::uint32_t> c(n);
  for (auto& x : c) {
    switch (rng() % 10) {
      case 0: x = (rng() & 1) ? 0x80000000u : 0u; break;
      case 1: x = static_cast<std::uint32_t>(rng()) & 0x807FFFFFu; break;
      case 2: x = static_cast<std::uint32_t>(rng()); break;
      case 3: x = (static_cast<std::uint32_t>(rng()) & 0x80000000u) | 0x7F800000u; break;
      default: x = std::bit_cast<std::uint32_t>(static_cast<float>(g(rng) * near)); break;
    }
  }
  return c;
}

}  // namespace blockscale::emulator::testing
