// SPDX-License-Identifier: Apache-2.0
// Sweeps fp32 bit patterns through blockscale's bulk conversion and an oracle, counting mismatches.
#pragma once

#include <bit>
#include <cstdint>
#include <cstdio>
#include <span>
#include <string>
#include <vector>

#include "blockscale/formats.h"
#include "blockscale/formats/detail/bulk_paths.h"

namespace blockscale::test {

struct SweepResult {
  std::uint64_t checked = 0;
  std::uint64_t mismatches = 0;
  std::vector<std::string> examples;  // the first few mismatches, for the failure message
  std::string summary() const {
    std::string s = std::to_string(mismatches) + " mismatches in " + std::to_string(checked) + " inputs";
    for (const auto& e : examples) s += "\n  " + e;
    return s;
  }
};

// Every fp32 pattern i * stride + offset for i = 0 .. 2^32 / stride - 1 (stride 1: all 2^32). The
// oracle maps an fp32 value to the expected storage word. Our side runs through the bulk API with
// the given path. Parallel over chunks with OpenMP where available; the counts do not depend on it.
template <class Word, class Oracle>
SweepResult sweep_f32(Format dst, const ConvertOptions& o, Oracle oracle, std::uint64_t stride = 1,
                      detail::BulkPath path = detail::BulkPath::automatic) {
  constexpr std::uint64_t kChunk = std::uint64_t{1} << 20;
  const std::uint64_t total = (std::uint64_t{1} << 32) / stride;
  const std::int64_t chunks = static_cast<std::int64_t>((total + kChunk - 1) / kChunk);
  std::uint64_t mismatches = 0;
  std::vector<std::string> examples;
#pragma omp parallel
  {
    std::vector<float> in(kChunk);
    std::vector<Word> ours(kChunk);
    std::uint64_t local = 0;
#pragma omp for schedule(dynamic, 4)
    for (std::int64_t c = 0; c < chunks; ++c) {
      const std::uint64_t first = static_cast<std::uint64_t>(c) * kChunk;
      const std::uint64_t n = std::min(kChunk, total - first);
      for (std::uint64_t i = 0; i < n; ++i) {
        in[i] = std::bit_cast<float>(static_cast<std::uint32_t>((first + i) * stride));
      }
      detail::convert_f32(path, std::span<const float>(in.data(), n), dst, std::span<Word>(ours.data(), n), o);
      for (std::uint64_t i = 0; i < n; ++i) {
        const Word want = oracle(in[i]);
        if (ours[i] != want) {
          ++local;
#pragma omp critical
          if (examples.size() < 8) {
            char buf[160];
            std::snprintf(buf, sizeof buf, "fp32 0x%08X (%.9g): ours 0x%X, oracle 0x%X",
                          std::bit_cast<std::uint32_t>(in[i]), static_cast<double>(in[i]),
                          static_cast<unsigned>(ours[i]), static_cast<unsigned>(want));
            examples.emplace_back(buf);
          }
        }
      }
    }
#pragma omp atomic
    mismatches += local;
  }
  return {total, mismatches, examples};
}

}  // namespace blockscale::test
