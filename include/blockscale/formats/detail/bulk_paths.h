// SPDX-License-Identifier: Apache-2.0
// The implementations behind the fp32 bulk conversion, exposed so that tests can check that every
// one gives the same bits: a hand-written AVX-512 kernel, and the engine of round.h compiled for
// AVX2 / baseline x86-64 (picked by the compiler's function multi-versioning).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "blockscale/formats/convert.h"

namespace blockscale::detail {

enum class BulkPath : std::uint8_t {
  automatic,  // AVX-512 when the CPU has it (and the rounding is not stochastic), else portable
  avx512,     // throws std::runtime_error when the CPU lacks AVX-512
  portable,   // the round.h engine in a plain loop (vectorised by the compiler where it can)
};

bool avx512_available();

// What BulkPath::automatic resolves to, process-wide: the environment variable BLOCKSCALE_SIMD
// (`auto`, `avx512` or `portable`) read at first use, or set_automatic_path(). Results are the same
// on every path; this exists so that tests and golden-vector regeneration can prove it.
void set_automatic_path(BulkPath p);
BulkPath automatic_path();

void convert_f32(BulkPath path, std::span<const float> in, Format dst, std::span<std::uint8_t> out,
                 const ConvertOptions& o, std::span<const std::uint32_t> rbits = {});
void convert_f32(BulkPath path, std::span<const float> in, Format dst, std::span<std::uint16_t> out,
                 const ConvertOptions& o, std::span<const std::uint32_t> rbits = {});
void convert_f32(BulkPath path, std::span<const float> in, Format dst, std::span<std::uint32_t> out,
                 const ConvertOptions& o, std::span<const std::uint32_t> rbits = {});

}  // namespace blockscale::detail
