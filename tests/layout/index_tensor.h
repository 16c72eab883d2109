// SPDX-License-Identifier: Apache-2.0
// A tiny N-d tensor of logical indices with the torch operations the layout definitions are written
// in (pad, reshape, permute). The test oracles build each layout's storage order the way the
// defining code does: start from the R x C matrix whose entry (r, c) is r*C + c, pad, reshape and
// permute, and read the result back in row-major order. Padding entries are -1.
#pragma once

#include <cstdint>
#include <numeric>
#include <stdexcept>
#include <vector>

namespace blockscale::test {

struct IndexTensor {
  std::vector<std::int64_t> shape;
  std::vector<std::int64_t> data;  // row-major
};

inline std::int64_t numel(const std::vector<std::int64_t>& shape) {
  return std::accumulate(shape.begin(), shape.end(), std::int64_t{1}, std::multiplies<>());
}

// The logical matrix: entry (r, c) = r*C + c.
inline IndexTensor logical_matrix(std::int64_t R, std::int64_t C) {
  IndexTensor t{{R, C}, std::vector<std::int64_t>(static_cast<std::size_t>(R * C))};
  std::iota(t.data.begin(), t.data.end(), std::int64_t{0});
  return t;
}

// torch.nn.functional.pad(x, (0, extra_cols, 0, extra_rows)) of a 2-D tensor, padding with -1.
inline IndexTensor pad2(const IndexTensor& t, std::int64_t extra_rows, std::int64_t extra_cols) {
  if (t.shape.size() != 2) throw std::logic_error("pad2 needs a 2-D tensor");
  const std::int64_t R = t.shape[0], C = t.shape[1], Rp = R + extra_rows, Cp = C + extra_cols;
  IndexTensor o{{Rp, Cp}, std::vector<std::int64_t>(static_cast<std::size_t>(Rp * Cp), -1)};
  for (std::int64_t r = 0; r < R; ++r)
    for (std::int64_t c = 0; c < C; ++c)
      o.data[static_cast<std::size_t>(r * Cp + c)] = t.data[static_cast<std::size_t>(r * C + c)];
  return o;
}

// Pads a 2-D tensor up to multiples (rows to a multiple of mr, columns of mc).
inline IndexTensor pad_to_multiple(const IndexTensor& t, std::int64_t mr, std::int64_t mc) {
  const std::int64_t R = t.shape[0], C = t.shape[1];
  return pad2(t, (mr - R % mr) % mr, (mc - C % mc) % mc);
}

inline IndexTensor reshape(IndexTensor t, std::vector<std::int64_t> shape) {
  if (numel(shape) != numel(t.shape)) throw std::logic_error("reshape changes the element count");
  t.shape = std::move(shape);
  return t;
}

// torch permute(...).contiguous(): output dim i is input dim perm[i].
inline IndexTensor permute(const IndexTensor& t, const std::vector<int>& perm) {
  const std::size_t n = t.shape.size();
  if (perm.size() != n) throw std::logic_error("permute rank mismatch");
  std::vector<std::int64_t> in_stride(n, 1);
  for (std::size_t i = n; i-- > 1;) in_stride[i - 1] = in_stride[i] * t.shape[i];
  IndexTensor o;
  o.shape.resize(n);
  for (std::size_t i = 0; i < n; ++i) o.shape[i] = t.shape[static_cast<std::size_t>(perm[i])];
  o.data.resize(t.data.size());
  if (o.data.empty()) return o;
  std::vector<std::int64_t> idx(n, 0);  // odometer over the output shape
  for (std::size_t k = 0; k < o.data.size(); ++k) {
    std::int64_t src = 0;
    for (std::size_t i = 0; i < n; ++i) src += idx[i] * in_stride[static_cast<std::size_t>(perm[i])];
    o.data[k] = t.data[static_cast<std::size_t>(src)];
    for (std::size_t i = n; i-- > 0;) {
      if (++idx[i] < o.shape[i]) break;
      idx[i] = 0;
    }
  }
  return o;
}

inline IndexTensor transpose2(const IndexTensor& t) { return permute(t, {1, 0}); }

}  // namespace blockscale::test
