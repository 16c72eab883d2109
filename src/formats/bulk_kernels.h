// SPDX-License-Identifier: Apache-2.0
// Private: the AVX-512 kernels of bulk_avx512.cpp. Each returns false when it does not handle the
// rounding mode (stochastic), so the caller falls back to the portable loop.
#pragma once

#include <cstddef>
#include <cstdint>

#include "blockscale/formats/detail/bulk_paths.h"
#include "blockscale/formats/detail/round.h"

namespace blockscale::detail {

bool f32_to_codes_avx512(const Target& t, const float* in, std::uint8_t* out, std::size_t n);
bool f32_to_codes_avx512(const Target& t, const float* in, std::uint16_t* out, std::size_t n);
bool f32_to_codes_avx512(const Target& t, const float* in, std::uint32_t* out, std::size_t n);

}  // namespace blockscale::detail
