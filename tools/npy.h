// SPDX-License-Identifier: Apache-2.0
// NumPy .npy files of 2-D floating matrices for `blockscale gemm`: the format of numpy.lib.format
// (versions 1.0, 2.0 and 3.0: magic "\x93NUMPY", version, header length, a Python dict literal
// with 'descr', 'fortran_order' and 'shape', then the data).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "cli.h"

namespace blockscale::cli {

struct NpyMatrix {
  std::int64_t rows = 0, cols = 0;
  std::string descr;           // as the file spells it, e.g. "<f4"
  WorkBuffer values;           // row-major (a Fortran-order file is transposed on reading)
};

// Reads a 2-D float16, float32 or float64 array (either byte order, C or Fortran order). Every
// value is exact in double. Throws UsageError naming the file and the rule broken: not a .npy
// file, unsupported version, malformed header, a dtype or rank it does not take, a size that does
// not match the shape (truncated or trailing bytes).
NpyMatrix read_npy_matrix(const std::string& path);
// The same for a 1-D array (a bias vector), returned as one row.
NpyMatrix read_npy_vector(const std::string& path);

// Writes rows x cols fp32 bit patterns as a little-endian '<f4' C-order version 1.0 file; throws
// UsageError when the file cannot be written.
void write_npy_f32(const std::string& path, std::int64_t rows, std::int64_t cols, std::span<const std::uint32_t> bits);

}  // namespace blockscale::cli
