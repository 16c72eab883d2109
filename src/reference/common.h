// SPDX-License-Identifier: Apache-2.0
// Internal helpers shared by mma_scaled.cpp and mma.cpp: shape checks, batch slicing and the
// decoded operand form the exact kernels use.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "blockscale/reference/numerics.h"
#include "blockscale/reference/rules.h"
#include "blockscale/reference/tensor.h"

namespace blockscale::reference::detail {

// Batch extent of a rank-3 tensor; 1 for rank 2 (no batch).
inline std::int64_t batch_of(const Tensor& t) { return t.rank() == 3 ? t.extent(0) : 1; }

// mma_scaled's block-scale types: e8m0, and for NVFP4 cuda.tile's float8_e4m3fn or blockscale's
// ue4m3 (the same byte without its sign bit, as the hardware reads it).
inline bool is_block_scale_dtype(DType t) {
  return t == DType::float8_e8m0fnu || t == DType::float8_e4m3fn || t == DType::float8_ue4m3;
}

// The 2-D matrix of batch b (b is reduced to 0 when t has no batch or batch 1: broadcast).
Tensor slice2d(const Tensor& t, std::int64_t b);

// Offset of matrix b's first element (broadcast as in slice2d).
inline std::int64_t matrix_offset(const Tensor& t, std::int64_t b) {
  if (t.rank() < 3 || t.extent(0) == 1) return 0;
  return b * t.extent(-2) * t.extent(-1);
}

// Rule::rank and Rule::empty_dimension for one named operand.
void check_rank_and_extents(const std::string& op, const std::string& name, const Tensor& t);

// One operand value, ready for exact products: kind 0 = finite or zero (sig == 0), 1 = Inf, 2 = NaN.
struct Term {
  std::uint64_t sig;
  std::int32_t exp;
  std::uint8_t kind;
  bool negative;
};
inline constexpr std::uint8_t kFinite = 0, kInfinite = 1, kNaN = 2;

Term term_of(const Decomposed& d);
// The exact product of two terms (both significands below 2^32 so the product fits 64 bits):
// NaN if either is NaN or Inf times zero, Inf if either is Inf, else sig_a * sig_b.
Term multiply(const Term& a, const Term& b);

// Validates numerics fields that only some modes use.
void check_numerics_fields(const std::string& op, const Numerics& n);

}  // namespace blockscale::reference::detail
