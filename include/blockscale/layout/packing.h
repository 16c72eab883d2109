// SPDX-License-Identifier: Apache-2.0
// Sub-byte packing of element codes along K (docs/layouts.md, "Packing"; catalogue IDs P1-P3).
//
// A code is one element of an 8-bit-or-narrower format as the formats library stores it: one code
// per byte, the format's bits at the bottom (bit 0 = mantissa LSB), the bits above width(f) zero.
// Packing is along the contiguous (K) dimension. A row-major tensor whose rows hold a whole number
// of packing groups packs the same way row by row or all at once, so these functions take flat
// spans and callers pack a [rows, K] tensor by passing all rows * K codes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "blockscale/formats/format.h"

namespace blockscale {

enum class Packing : std::uint8_t {
  // One code per byte, in the low bits (the form the formats library and TMA's .b6p2x16 store
  // use). Any format stored in 8 bits.
  byte_per_element,
  // P1: two fp4 (e2m1) codes per byte; element 2j in bits [3:0], element 2j+1 in bits [7:4]
  // (CUDA __nv_cvt_float2_to_fp4x2, Triton MXFP4Tensor, torchao pack_uint4). Global memory, and
  // shared memory for tcgen05 kind::mxf4 / kind::mxf4nvf4 (PTX ISA 9.7.16.10.4.6).
  fp4_dense,
  // P3: 16 fp6 (e2m3 / e3m2) codes per 12 bytes; element i of a group at bits [6i, 6i+6) of the
  // 96-bit little-endian group (LSB first, CuTe subbyte_reference order). Global memory.
  fp6_dense,
  // P2: the tcgen05 kind::mxf8f6f4 shared-memory form of fp4 (PTX 9.7.16.10.4.4, TMA
  // CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B / .b4x16_p64): each 16 codes = 8 bytes packed as
  // fp4_dense, then 8 zero bytes.
  fp4_padded16,
  // P3 (shared memory): each 16 fp6 codes = 12 bytes packed as fp6_dense, then 4 zero bytes
  // (16U6_ALIGN16B / .b6x16_p32).
  fp6_padded16,
};

inline constexpr int kPackingCount = 5;

// Bytes that `count` codes of format f occupy in packing p. Throws std::invalid_argument when p
// does not apply to f (fp4_* needs float4_e2m1fn, fp6_* needs float6_e2m3fn / float6_e3m2fn,
// byte_per_element needs a format stored in 8 bits) or when count is not a whole number of the
// packing's units (fp4_dense: 2 codes; fp6_dense: 4 codes = 3 bytes; the padded forms: 16 codes).
std::size_t packed_bytes(Packing p, Format f, std::size_t count);

// codes -> packed bytes. out.size() must equal packed_bytes(p, f, codes.size()). Throws
// std::invalid_argument on a size mismatch or on a code with bits set above width(f).
void pack(Packing p, Format f, std::span<const std::uint8_t> codes, std::span<std::uint8_t> out);

// packed bytes -> codes. in.size() must equal packed_bytes(p, f, codes.size()). Throws
// std::invalid_argument on a size mismatch or when a padding byte of a *_padded16 form is not
// zero (the canonical form pack writes and TMA produces).
void unpack(Packing p, Format f, std::span<const std::uint8_t> in, std::span<std::uint8_t> codes);

// "byte_per_element", "fp4_dense", "fp6_dense", "fp4_padded16", "fp6_padded16".
std::string to_string(Packing p);
std::optional<Packing> parse_packing(std::string_view name);

// The dense global-memory packing of a format: fp4_dense for e2m1, fp6_dense for fp6, else
// byte_per_element.
Packing dense_packing(Format f);

}  // namespace blockscale
