// SPDX-License-Identifier: Apache-2.0
// NumPy companions (golden/FORMAT.md "Binary companion"): the cases of a text file as a NumPy .npy
// file, format version 1.0, written by hand: a one-dimensional array of records with one named
// member per field (a vector field is a sub-array), every element an unsigned little-endian word of
// its storage width (u1 for 8-bit codes, u2 for f16/bf16, u4 for f32/tf32/u32, u8 for f64/u64).
// numpy.load(path) reads it with numpy alone; record i is case i of the text file.
#pragma once

#include <string>
#include <string_view>

#include "blockscale/golden/file.h"

namespace blockscale::golden {

// The .npy bytes of a file's cases.
std::string npy_companion(const GoldenFile& f);

// Throws GoldenError (file `name`) when `bytes` is not exactly the companion of `f`, saying whether
// the header or which record differs.
void check_npy_companion(std::string_view bytes, const std::string& name, const GoldenFile& f);

}  // namespace blockscale::golden
