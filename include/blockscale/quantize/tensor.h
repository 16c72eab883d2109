// SPDX-License-Identifier: Apache-2.0
// BlockScaledTensor: element codes (packed, layout/packing.h), block scales (in a scale layout,
// layout/scale_layout.h) and the description that gives them meaning.
//
// Orientation. The source tensor has rank 2 or 3 ([batch,] d0, d1); blocks run along K, which is
// either the last axis (KAxis::last: operand A as [M, K], or B^T as [N, K]) or the first non-batch
// axis (KAxis::first: operand B given as [K, N], quantized down its columns). Whatever the source
// orientation, the stored element codes are K-major: [batch][rows][k_stored], with rows = M (or N)
// and k_stored = k_blocks * block_size (tcgen05 needs fp4/fp6 operands K-major, PTX ISA
// 9.7.16.10.4; layouts.md P5). The scales are the logical [batch][rows][k_blocks] matrix stored in
// the scale layout with r = row, c = K-block, batch stride storage_size(layout, rows, k_blocks).
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <vector>

#include "blockscale/layout/packing.h"
#include "blockscale/layout/scale_layout.h"
#include "blockscale/quantize/block.h"
#include "blockscale/quantize/block_format.h"
#include "blockscale/quantize/options.h"

namespace blockscale {

enum class KAxis : std::uint8_t {
  last,   // [batch,] rows, K
  first,  // [batch,] K, cols
};

struct BlockScaledDesc {
  BlockFormat format = block_formats::mxfp8_e4m3;
  std::vector<std::int64_t> shape;  // the source shape, rank 2 or 3
  KAxis k_axis = KAxis::last;
  Packing packing = Packing::byte_per_element;
  ScaleLayout scale_layout{};

  std::int64_t batch() const;     // 1 for rank 2
  std::int64_t rows() const;      // the non-K extent
  std::int64_t k() const;         // the logical K
  std::int64_t k_blocks() const;  // ceil(K / block_size)
  std::int64_t k_stored() const;  // k_blocks * block_size
  std::size_t row_bytes() const;            // packed bytes of one stored row
  std::size_t element_bytes() const;        // batch * rows * row_bytes
  std::int64_t scale_batch_stride() const;  // storage_size(scale_layout, rows, k_blocks)
  std::size_t scale_bytes() const;          // batch * scale_batch_stride
  std::size_t num_elements() const;         // product of shape (the logical element count)
};

// Checks everything a description promises: rank 2 or 3 with extents >= 1, a valid BlockFormat,
// a packing that holds the element format, a byte-scale layout that takes rows x k_blocks, and
// K % block_size == 0 unless k_tail == zero_pad. Throws std::invalid_argument naming the rule.
void validate(const BlockScaledDesc& d, KTail k_tail = KTail::reject);

// Options for adopting raw buffers.
struct RawBufferOptions {
  KTail k_tail = KTail::reject;  // zero_pad: accept K % block_size != 0 (padding codes must be +-0)
  // A NaN scale (e8m0 0xFF, ue4m3 0x7F) is refused unless allowed; when allowed the block
  // dequantizes to NaN, as OCP MX §6.3 and quantize() (for NaN inputs) have it.
  bool allow_nan_scales = false;
};

class BlockScaledTensor {
 public:
  // Adopts raw buffers after checking them: the description (validate above), buffer sizes, element
  // codes within the format's width and zero padding bytes of the *_padded16 packings (unpack), the
  // K padding codes +-0, scale layout padding bytes 0x00 (layouts.md (c): never 0xFF), ue4m3 scales
  // with bit 7 clear, NaN scales per `options`, and the per-tensor scale: 1 for e8m0 formats,
  // finite and >= 0 for NVFP4 (tensor_amax, which only Nvfp4Decode::transformer_engine reads, may be
  // NaN for "none"). Throws std::invalid_argument naming the first rule broken.
  BlockScaledTensor(BlockScaledDesc desc, std::vector<std::uint8_t> elements, std::vector<std::uint8_t> scales,
                    TensorScale tensor_scale = {std::numeric_limits<float>::quiet_NaN(), 1.0f, 1.0f},
                    const RawBufferOptions& options = {});

  const BlockScaledDesc& desc() const { return desc_; }
  const BlockFormat& format() const { return desc_.format; }
  std::span<const std::uint8_t> elements() const { return elements_; }  // packed, K-major
  std::span<const std::uint8_t> scales() const { return scales_; }      // in desc().scale_layout
  const TensorScale& tensor_scale() const { return tensor_scale_; }

  // Element code at (batch, row, k), k in [0, k_stored), whatever the packing (std::invalid_argument
  // outside the tensor, as scale_code).
  std::uint8_t element_code(std::int64_t b, std::int64_t r, std::int64_t k) const;
  // Logical scale code of block kb of (batch, row), whatever the layout.
  std::uint8_t scale_code(std::int64_t b, std::int64_t r, std::int64_t kb) const;
  // All element codes, one per byte, [batch][rows][k_stored].
  std::vector<std::uint8_t> element_codes() const;
  // All scale codes, row-major [batch][rows][k_blocks].
  std::vector<std::uint8_t> scale_codes() const;

 private:
  struct Adopt {};
  BlockScaledTensor(Adopt, BlockScaledDesc desc, std::vector<std::uint8_t> elements,
                    std::vector<std::uint8_t> scales, TensorScale ts);
  friend BlockScaledTensor quantize(std::span<const float>, const std::vector<std::int64_t>&, KAxis,
                                    const BlockFormat&, const QuantizeOptions&, std::optional<Packing>,
                                    const ScaleLayout&, std::span<const std::uint32_t>);

  BlockScaledDesc desc_;
  std::vector<std::uint8_t> elements_;
  std::vector<std::uint8_t> scales_;
  TensorScale tensor_scale_;
};

// Quantizes a row-major float tensor of the given shape (rank 2 or 3) along K. `packing` defaults
// to the format's dense global-memory packing (dense_packing). `rbits`: for
// stochastic element rounding one random word per input element, indexed like `x`; empty
// otherwise. Rows run in parallel (OpenMP when built with it); the result does not depend on the
// thread count. Throws std::invalid_argument for a bad shape, sizes, format/options, or K %
// block_size != 0 without KTail::zero_pad.
BlockScaledTensor quantize(std::span<const float> x, const std::vector<std::int64_t>& shape, KAxis k_axis,
                           const BlockFormat& f, const QuantizeOptions& o,
                           std::optional<Packing> packing = std::nullopt, const ScaleLayout& layout = {},
                           std::span<const std::uint32_t> rbits = {});

// quantize() into caller-owned storage of desc.element_bytes() and desc.scale_bytes() bytes (the
// desc says shape, orientation, packing and layout); returns the per-tensor scale. Every byte of
// both outputs is written.
TensorScale quantize_into(std::span<const float> x, const BlockScaledDesc& desc, const QuantizeOptions& o,
                          std::span<std::uint8_t> elements, std::span<std::uint8_t> scales,
                          std::span<const std::uint32_t> rbits = {});

// Back to fp32 in the source shape and orientation (padding dropped): fp32(element * scale) per
// DequantizeOptions.
std::vector<float> dequantize(const BlockScaledTensor& t, const DequantizeOptions& d = {});

}  // namespace blockscale
