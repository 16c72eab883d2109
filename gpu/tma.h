// SPDX-License-Identifier: Apache-2.0
// Internal: TMA tensor maps for byte matrices (cuTensorMapEncodeTiled through the runtime's
// driver entry point, so libcuda need not be linked).
#pragma once

#include <cuda.h>

#include <cstdint>

namespace blockscale::gpu::detail {

// A rows x row_bytes matrix of bytes with row stride `row_bytes` (multiple of 16), loaded in
// boxes of box_rows x box_bytes (box_bytes <= 128 with the 128-byte swizzle). Rows and columns
// beyond the matrix read as zeros.
CUtensorMap make_byte_matrix_map(const void* base, std::uint64_t rows, std::uint64_t row_bytes, std::uint32_t box_rows,
                                 std::uint32_t box_bytes, CUtensorMapSwizzle swizzle);

}  // namespace blockscale::gpu::detail
