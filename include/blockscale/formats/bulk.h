// SPDX-License-Identifier: Apache-2.0
// Conversions over spans. One code per storage word (uint8_t for formats of <= 8 bits, uint16_t for
// f16/bf16, uint32_t for tf32/f32); sub-byte packing lives in blockscale/layout. The loops use the
// engine of detail/round.h, compiled for AVX-512, AVX2 and baseline x86-64 and picked at run time;
// the arithmetic is integer-only, so every path gives the same bits.
#pragma once

#include <cstdint>
#include <span>

#include "blockscale/formats/convert.h"

namespace blockscale {

// float -> codes. `rbits` (one random word per element) is required for Rounding::stochastic and
// must be empty otherwise. Throws std::invalid_argument on size or storage-width mismatches.
void convert(std::span<const float> in, Format dst, std::span<std::uint8_t> out,
             const ConvertOptions& o = {}, std::span<const std::uint32_t> rbits = {});
void convert(std::span<const float> in, Format dst, std::span<std::uint16_t> out,
             const ConvertOptions& o = {}, std::span<const std::uint32_t> rbits = {});
void convert(std::span<const float> in, Format dst, std::span<std::uint32_t> out,
             const ConvertOptions& o = {}, std::span<const std::uint32_t> rbits = {});
// double -> codes (one rounding from the double).
void convert(std::span<const double> in, Format dst, std::span<std::uint8_t> out,
             const ConvertOptions& o = {}, std::span<const std::uint32_t> rbits = {});
// codes of src -> codes of dst, one rounding (narrow <-> narrow, f16/bf16 -> narrow).
void convert(Format src, std::span<const std::uint8_t> in, Format dst, std::span<std::uint8_t> out,
             const ConvertOptions& o = {}, std::span<const std::uint32_t> rbits = {});
void convert(Format src, std::span<const std::uint16_t> in, Format dst, std::span<std::uint8_t> out,
             const ConvertOptions& o = {}, std::span<const std::uint32_t> rbits = {});

// codes -> float, exact. 8-bit formats go through a 256-entry table.
void decode(Format src, std::span<const std::uint8_t> in, std::span<float> out);
void decode(Format src, std::span<const std::uint16_t> in, std::span<float> out);
void decode(Format src, std::span<const std::uint32_t> in, std::span<float> out);

}  // namespace blockscale
