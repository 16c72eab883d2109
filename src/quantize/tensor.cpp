// SPDX-License-Identifier: Apache-2.0
#include "blockscale/quantize/tensor.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstdio>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include "blockscale/formats/detail/bulk_paths.h"
#include "blockscale/formats/detail/enum_check.h"
#include "blockscale/formats/detail/ieee_mode.h"
#include "blockscale/quantize/detail/paths.h"
#include "fused.h"
#include "quantizer.h"


namespace blockscale {

namespace {

using quantize_detail::BlockQuantizer;
using quantize_detail::Dequantizer;

std::string hex2(unsigned v) {
  char b[8];
  std::snprintf(b, sizeof b, "0x%02X", v & 0xFFu);
  return b;
}

// x < 0 on the bits: a float comparison reads a negative subnormal as 0 under a caller's DAZ.
// NaN is not negative (the amax's "not recorded").
bool negative_nonzero(float x) {
  const auto bits = std::bit_cast<std::uint32_t>(x);
  return (bits >> 31) != 0 && (bits & 0x7FFFFFFFu) != 0 && (bits & 0x7FFFFFFFu) <= 0x7F800000u;
}

std::string shape_string(const std::vector<std::int64_t>& s) {
  std::string r = "[";
  for (std::size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
  return r + "]";
}

std::int64_t checked_mul(std::int64_t a, std::int64_t b, const char* what) {
  std::int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r) || r > (std::int64_t{1} << 56)) {
    throw std::invalid_argument(std::string("block-scaled tensor: ") + what + " exceeds 2^56");
  }
  return r;
}

std::atomic<int>& quantize_path_setting() {
  static std::atomic<int> setting{static_cast<int>(quantize_detail::QuantizePath::automatic)};
  return setting;
}

// Elements that quantize() handles per parallel step when K is the first axis: this many columns
// of [K, N] are gathered into K-major rows at once (64-byte reads per K step).
constexpr std::int64_t kColumnGroup = 16;

}  // namespace

namespace quantize_detail {

void set_quantize_path(QuantizePath p) { quantize_path_setting() = static_cast<int>(p); }
QuantizePath quantize_path() { return static_cast<QuantizePath>(quantize_path_setting().load()); }

bool fused_kernels_enabled() {
  return quantize_path() == QuantizePath::automatic && detail::automatic_path() != detail::BulkPath::portable &&
         fused_kernels_available();
}

bool fused_path_applies(const QuantizeOptions& o) {
  return o.element.rounding != Rounding::stochastic && fused_kernels_enabled();
}

}  // namespace quantize_detail

std::int64_t BlockScaledDesc::batch() const { return shape.size() == 3 ? shape[0] : 1; }
std::int64_t BlockScaledDesc::rows() const {
  const std::size_t n = shape.size();
  return k_axis == KAxis::last ? shape[n - 2] : shape[n - 1];
}
std::int64_t BlockScaledDesc::k() const {
  const std::size_t n = shape.size();
  return k_axis == KAxis::last ? shape[n - 1] : shape[n - 2];
}
std::int64_t BlockScaledDesc::k_blocks() const { return (k() + format.block_size - 1) / format.block_size; }
std::int64_t BlockScaledDesc::k_stored() const { return k_blocks() * format.block_size; }
std::size_t BlockScaledDesc::row_bytes() const {
  return packed_bytes(packing, format.element, static_cast<std::size_t>(k_stored()));
}
std::size_t BlockScaledDesc::element_bytes() const {
  return static_cast<std::size_t>(batch() * rows()) * row_bytes();
}
std::int64_t BlockScaledDesc::scale_batch_stride() const { return storage_size(scale_layout, rows(), k_blocks()); }
std::size_t BlockScaledDesc::scale_bytes() const {
  return static_cast<std::size_t>(batch() * scale_batch_stride());
}
std::size_t BlockScaledDesc::num_elements() const {
  std::size_t n = 1;
  for (std::int64_t e : shape) n *= static_cast<std::size_t>(e);
  return n;
}

void validate(const BlockScaledDesc& d, KTail k_tail) {
  const std::string what = "block-scaled tensor " + shape_string(d.shape) + ": ";
  detail::require_enumerator(d.k_axis, KAxis::first, "KAxis", what, "k_axis");
  detail::require_enumerator(k_tail, KTail::zero_pad, "KTail", what, "k_tail");
  if (d.shape.size() != 2 && d.shape.size() != 3) {
    throw std::invalid_argument(what + "the shape must have rank 2 ([rows, K] or [K, cols]) or 3 (with a leading "
                                       "batch), got rank " + std::to_string(d.shape.size()));
  }
  std::int64_t total = 1;
  for (std::int64_t e : d.shape) {
    if (e < 1) throw std::invalid_argument(what + "every extent must be at least 1");
    total = checked_mul(total, e, "the element count");
  }
  validate(d.format);
  if (k_tail == KTail::reject && d.k() % d.format.block_size != 0) {
    throw std::invalid_argument(what + "K = " + std::to_string(d.k()) + " is not a multiple of the block size " +
                                std::to_string(d.format.block_size) + " of " + to_string(d.format) +
                                " (KTail::zero_pad completes the last block with zeros)");
  }
  checked_mul(d.batch() * d.rows(), d.k_stored(), "the stored element count");
  // Throws when the packing does not hold the element format.
  (void)d.row_bytes();
  validate(d.scale_layout);
  if (info(d.scale_layout.kind).element != ScaleElement::byte) {
    throw std::invalid_argument(what + "scale layout " + to_string(d.scale_layout) +
                                " holds fp32 (Hopper block-wise) scales; a block-scaled tensor stores one-byte "
                                "e8m0 / ue4m3 scales");
  }
  check_shape(d.scale_layout, d.rows(), d.k_blocks());
  checked_mul(d.batch(), d.scale_batch_stride(), "the scale storage");
}

BlockScaledTensor::BlockScaledTensor(Adopt, BlockScaledDesc desc, std::vector<std::uint8_t> elements,
                                     std::vector<std::uint8_t> scales, TensorScale ts)
    : desc_(std::move(desc)), elements_(std::move(elements)), scales_(std::move(scales)), tensor_scale_(ts) {}

BlockScaledTensor::BlockScaledTensor(BlockScaledDesc desc, std::vector<std::uint8_t> elements,
                                     std::vector<std::uint8_t> scales, TensorScale tensor_scale,
                                     const RawBufferOptions& options)
    : desc_(std::move(desc)), elements_(std::move(elements)), scales_(std::move(scales)), tensor_scale_(tensor_scale) {
  const BlockScaledDesc& d = desc_;
  validate(d, options.k_tail);
  const BlockFormat& f = d.format;
  const std::string what = "block-scaled tensor " + to_string(f) + " " + shape_string(d.shape) + ": ";
  if (elements_.size() != d.element_bytes()) {
    throw std::invalid_argument(what + "the element buffer has " + std::to_string(elements_.size()) +
                                " bytes; batch * rows * packed row (" + to_string(d.packing) + ", " +
                                std::to_string(d.k_stored()) + " codes) needs " + std::to_string(d.element_bytes()));
  }
  if (scales_.size() != d.scale_bytes()) {
    throw std::invalid_argument(what + "the scale buffer has " + std::to_string(scales_.size()) + " bytes; layout " +
                                to_string(d.scale_layout) + " of " + std::to_string(d.rows()) + " x " +
                                std::to_string(d.k_blocks()) + " scales needs " + std::to_string(d.scale_bytes()));
  }
  // Element codes: unpack checks code widths and the zero padding of the *_padded16 forms.
  std::vector<std::uint8_t> codes(static_cast<std::size_t>(d.k_stored()));
  const std::size_t rb = d.row_bytes();
  const std::uint32_t magnitude = magnitude_mask(f.element);
  for (std::int64_t row = 0; row < d.batch() * d.rows(); ++row) {
    unpack(d.packing, f.element, std::span<const std::uint8_t>(elements_).subspan(static_cast<std::size_t>(row) * rb, rb),
           codes);
    for (std::int64_t k = d.k(); k < d.k_stored(); ++k) {
      if ((codes[static_cast<std::size_t>(k)] & magnitude) != 0) {
        throw std::invalid_argument(what + "K padding must hold zero codes (layouts.md (c): padded data must be "
                                           "finite zeros); row " + std::to_string(row) + ", k = " + std::to_string(k) +
                                    " holds " + hex2(codes[static_cast<std::size_t>(k)]));
      }
    }
  }
  if (const auto bad = find_padding_mismatch(d.scale_layout, d.batch(), d.rows(), d.k_blocks(), scales_, 0)) {
    throw std::invalid_argument(what + "scale storage offset " + std::to_string(*bad) +
                                " is layout padding and must hold 0x00 (layouts.md (c): never 0xFF), it holds " +
                                hex2(scales_[static_cast<std::size_t>(*bad)]));
  }
  const std::vector<std::uint8_t> sc = scale_codes();
  const std::uint8_t nan_code = f.scale == Format::float8_e8m0fnu ? 0xFF : 0x7F;
  for (std::size_t i = 0; i < sc.size(); ++i) {
    const auto kb = static_cast<std::int64_t>(i) % d.k_blocks();
    const auto r = static_cast<std::int64_t>(i) / d.k_blocks() % d.rows();
    const auto b = static_cast<std::int64_t>(i) / d.k_blocks() / d.rows();
    const std::string at = " at (batch " + std::to_string(b) + ", row " + std::to_string(r) + ", block " +
                           std::to_string(kb) + ")";
    if (f.scale == Format::float8_ue4m3 && (sc[i] & 0x80) != 0) {
      throw std::invalid_argument(what + "ue4m3 scale " + hex2(sc[i]) + at +
                                  " has bit 7 set; ue4m3 is E4M3 with the sign bit 0 (layouts.md P6)");
    }
    if (sc[i] == nan_code && !options.allow_nan_scales) {
      throw std::invalid_argument(what + "scale " + hex2(sc[i]) + at + " is NaN (" + to_string(f.scale) +
                                  "); set RawBufferOptions::allow_nan_scales to accept NaN blocks");
    }
  }
  if (!has_tensor_scale(f)) {
    if (tensor_scale_.decode != 1.0f) {
      throw std::invalid_argument(what + "e8m0 formats carry no per-tensor scale; tensor_scale.decode must be 1, got " +
                                  std::to_string(tensor_scale_.decode));
    }
  } else if (!std::isfinite(tensor_scale_.decode) || negative_nonzero(tensor_scale_.decode)) {
    throw std::invalid_argument(what + "the NVFP4 per-tensor scale must be finite and >= 0, got " +
                                std::to_string(tensor_scale_.decode));
  } else if (negative_nonzero(tensor_scale_.amax)) {
    // The amax is a magnitude (quantize refuses a negative given amax too); TransformerEngine's
    // dequantization multiplies by it, so a negative one would flip every value's sign. NaN stands
    // for "not recorded" (codes adopted without it); -0 is a zero amax.
    throw std::invalid_argument(what + "the NVFP4 tensor amax is a magnitude and must not be negative, got " +
                                std::to_string(tensor_scale_.amax));
  }
}

std::uint8_t BlockScaledTensor::element_code(std::int64_t b, std::int64_t r, std::int64_t k) const {
  const BlockScaledDesc& d = desc_;
  if (b < 0 || b >= d.batch() || r < 0 || r >= d.rows() || k < 0 || k >= d.k_stored()) {
    throw std::invalid_argument("element_code(" + std::to_string(b) + ", " + std::to_string(r) + ", " + std::to_string(k) +
                            ") outside batch " + std::to_string(d.batch()) + " x rows " + std::to_string(d.rows()) +
                            " x k_stored " + std::to_string(d.k_stored()));
  }
  // Every packing packs 16 codes into whole bytes, so the 16-code group holding k unpacks alone.
  const std::size_t group_bytes = packed_bytes(d.packing, d.format.element, 16);
  const std::size_t off = static_cast<std::size_t>(b * d.rows() + r) * d.row_bytes() +
                          static_cast<std::size_t>(k / 16) * group_bytes;
  std::uint8_t codes[16];
  unpack(d.packing, d.format.element, std::span<const std::uint8_t>(elements_).subspan(off, group_bytes), codes);
  return codes[k % 16];
}

std::uint8_t BlockScaledTensor::scale_code(std::int64_t b, std::int64_t r, std::int64_t kb) const {
  const BlockScaledDesc& d = desc_;
  if (b < 0 || b >= d.batch() || r < 0 || r >= d.rows() || kb < 0 || kb >= d.k_blocks()) {
    throw std::invalid_argument("scale_code(" + std::to_string(b) + ", " + std::to_string(r) + ", " + std::to_string(kb) +
                                ") outside batch " + std::to_string(d.batch()) + " x rows " + std::to_string(d.rows()) +
                                " x k_blocks " + std::to_string(d.k_blocks()));
  }
  return scales_[static_cast<std::size_t>(b * d.scale_batch_stride() +
                                          offset(d.scale_layout, d.rows(), d.k_blocks(), r, kb))];
}

std::vector<std::uint8_t> BlockScaledTensor::element_codes() const {
  const BlockScaledDesc& d = desc_;
  std::vector<std::uint8_t> codes(static_cast<std::size_t>(d.batch() * d.rows() * d.k_stored()));
  unpack(d.packing, d.format.element, elements_, codes);
  return codes;
}

std::vector<std::uint8_t> BlockScaledTensor::scale_codes() const {
  const BlockScaledDesc& d = desc_;
  std::vector<std::uint8_t> out(static_cast<std::size_t>(d.batch() * d.rows() * d.k_blocks()));
  from_layout(d.scale_layout, d.batch(), d.rows(), d.k_blocks(), scales_, out);
  return out;
}

TensorScale quantize_into(std::span<const float> x, const BlockScaledDesc& d, const QuantizeOptions& o,
                          std::span<std::uint8_t> elements, std::span<std::uint8_t> scales,
                          std::span<const std::uint32_t> rbits) {
  const detail::IeeeMode ieee;
  validate(d, o.k_tail);
  const BlockFormat& f = d.format;
  validate(f, o);
  if (x.size() != d.num_elements()) {
    throw std::invalid_argument("quantize: shape " + shape_string(d.shape) + " has " +
                                std::to_string(d.num_elements()) + " elements, the input has " +
                                std::to_string(x.size()));
  }
  if (elements.size() != d.element_bytes() || scales.size() != d.scale_bytes()) {
    throw std::invalid_argument("quantize: the outputs need " + std::to_string(d.element_bytes()) +
                                " element bytes and " + std::to_string(d.scale_bytes()) + " scale bytes, got " +
                                std::to_string(elements.size()) + " and " + std::to_string(scales.size()));
  }
  const bool sr = o.element.rounding == Rounding::stochastic;
  if (sr && rbits.size() != x.size()) {
    throw std::invalid_argument("quantize: stochastic element rounding needs one random word per input element (" +
                                std::to_string(x.size()) + "), got " + std::to_string(rbits.size()));
  }
  if (!sr && !rbits.empty()) {
    throw std::invalid_argument("quantize: random bits were given but the element rounding is not stochastic");
  }

  const KAxis k_axis = d.k_axis;
  const std::int64_t batch = d.batch(), rows = d.rows(), K = d.k(), kb = d.k_blocks(), ks = d.k_stored();
  const bool fused_path = quantize_detail::fused_path_applies(o);
  const auto n_scales = static_cast<std::size_t>(batch * rows * kb);

  // The per-tensor amax from the data is a pass of its own. On the fused path with K-major rows
  // it also keeps the raw block maxima (4 bytes per block), which the quantization pass then
  // reads instead of taking the maxima of every block again.
  std::unique_ptr<std::uint32_t[]> block_maxima;
  TensorScale ts;
  if (fused_path && k_axis == KAxis::last && has_tensor_scale(f) && o.tensor_scale == TensorScaleSource::from_data) {
    block_maxima = std::make_unique_for_overwrite<std::uint32_t[]>(n_scales);
    const std::uint32_t g = quantize_detail::fused_block_maxima(
        x.data(), batch * rows, static_cast<std::size_t>(K), f.block_size, o.nan == BlockNan::ignore,
        o.subnormals == SubnormalInputs::flush_elements, block_maxima.get());
    ts = tensor_scale_for_amax(f, o, std::bit_cast<float>(g));
  } else {
    ts = tensor_scale_for(f, o, x);
  }
  const BlockQuantizer q(f, o, ts);

  const std::size_t rb = d.row_bytes();
  const bool padded = ks != K;
  const std::int64_t group = k_axis == KAxis::last ? 1 : kColumnGroup;
  const std::int64_t groups_per_batch = (rows + group - 1) / group;
  const std::int64_t steps = batch * groups_per_batch;

  // Fused: one pass per row, codes packed and scales written straight into the layout
  // (ScaleOffsets: row part + column part). Staged: block maxima, scales, x * m, bulk conversion,
  // pack, and row-major scale codes rearranged into the layout at the end.
  std::optional<quantize_detail::FusedRowKernel> fused;
  std::optional<ScaleOffsets> scale_offsets;
  std::unique_ptr<std::uint8_t[]> scales_rm;
  const std::int64_t scale_stride = d.scale_batch_stride();
  if (fused_path) {
    scale_offsets.emplace(d.scale_layout, rows, kb);
    fused.emplace(q, d.packing, scale_offsets->col_parts());
    // Layout padding is 0x00 (layouts.md (c)); the kernels write every other byte.
    if (scale_offsets->padded()) std::fill(scales.begin(), scales.end(), std::uint8_t{0});
  } else {
    scales_rm = std::make_unique_for_overwrite<std::uint8_t[]>(n_scales);
  }
  const bool direct_codes = d.packing == Packing::byte_per_element;

#if defined(_OPENMP)
#pragma omp parallel
#endif
  {
    const detail::IeeeMode thread_ieee;  // each thread's own mode (detail/ieee_mode.h)
    const auto n = static_cast<std::size_t>(ks);
    std::vector<float> in((k_axis == KAxis::first || padded) ? n * static_cast<std::size_t>(group) : 0);
    std::vector<std::uint32_t> rin((sr && (k_axis == KAxis::first || padded)) ? n * static_cast<std::size_t>(group) : 0);
    quantize_detail::RowScratch scratch;
    std::vector<std::uint8_t> codes((fused ? padded : !direct_codes) ? n : 0);
#if defined(_OPENMP)
#pragma omp for schedule(static)
#endif
    for (std::int64_t step = 0; step < steps; ++step) {
      const std::int64_t b = step / groups_per_batch;
      const std::int64_t r0 = (step % groups_per_batch) * group;
      const std::int64_t g_count = std::min(group, rows - r0);
      // Gather: K-major rows of ks inputs (zero padded), and their random words.
      if (k_axis == KAxis::first) {
        const float* src = x.data() + b * K * rows + r0;
        for (std::int64_t k = 0; k < K; ++k) {
          for (std::int64_t g = 0; g < g_count; ++g) in[static_cast<std::size_t>(g * ks + k)] = src[k * rows + g];
        }
        if (sr) {
          const std::uint32_t* rsrc = rbits.data() + b * K * rows + r0;
          for (std::int64_t k = 0; k < K; ++k) {
            for (std::int64_t g = 0; g < g_count; ++g) rin[static_cast<std::size_t>(g * ks + k)] = rsrc[k * rows + g];
          }
        }
      } else if (padded) {
        std::copy_n(x.data() + (b * rows + r0) * K, K, in.begin());
        if (sr) std::copy_n(rbits.data() + (b * rows + r0) * K, K, rin.begin());
      }
      if (padded) {
        for (std::int64_t g = 0; g < g_count; ++g) {
          std::fill(in.begin() + g * ks + K, in.begin() + (g + 1) * ks, 0.0f);
          if (sr) std::fill(rin.begin() + g * ks + K, rin.begin() + (g + 1) * ks, 0u);
        }
      }
      for (std::int64_t g = 0; g < g_count; ++g) {
        const std::int64_t row = b * rows + r0 + g;
        const bool gathered = k_axis == KAxis::first || padded;
        const float* xr = gathered ? in.data() + g * ks : x.data() + row * K;
        std::uint8_t* out_row = elements.data() + static_cast<std::size_t>(row) * rb;
        // The K padding holds +0 codes (layouts.md (c): padded data must be finite zeros). The
        // padded inputs are +0, but a block whose scale is NaN (a NaN amax, an Inf one with
        // BlockInf::nan_scale, torchao's all-zero two-level tensor) multiplies them by NaN, so the
        // padding codes are written here rather than converted.
        if (fused) {
          (*fused)(xr, n, out_row, scales.data() + b * scale_stride + scale_offsets->row_part(r0 + g),
                   block_maxima ? block_maxima.get() + row * kb : nullptr);
          if (padded) {
            const std::span<std::uint8_t> packed(out_row, rb);
            unpack(d.packing, f.element, packed, codes);
            std::fill(codes.begin() + K, codes.end(), std::uint8_t{0});
            pack(d.packing, f.element, codes, packed);
          }
          continue;
        }
        const std::uint32_t* rr = !sr ? nullptr : gathered ? rin.data() + g * ks : rbits.data() + row * K;
        std::uint8_t* code_row = direct_codes ? out_row : codes.data();
        q.quantize_row(xr, n, code_row, scales_rm.get() + row * kb, rr, scratch);
        std::fill(code_row + K, code_row + ks, std::uint8_t{0});
        if (!direct_codes) pack(d.packing, f.element, codes, std::span<std::uint8_t>(out_row, rb));
      }
    }
  }

  if (!fused) {
    to_layout(d.scale_layout, batch, rows, kb, std::span<const std::uint8_t>(scales_rm.get(), n_scales), scales, 0);
  }
  return ts;
}

BlockScaledTensor quantize(std::span<const float> x, const std::vector<std::int64_t>& shape, KAxis k_axis,
                           const BlockFormat& f, const QuantizeOptions& o, std::optional<Packing> packing,
                           const ScaleLayout& layout, std::span<const std::uint32_t> rbits) {
  BlockScaledDesc d{f, shape, k_axis, packing.value_or(dense_packing(f.element)), layout};
  validate(d, o.k_tail);
  std::vector<std::uint8_t> elements(d.element_bytes());
  std::vector<std::uint8_t> scales(d.scale_bytes());
  const TensorScale ts = quantize_into(x, d, o, elements, scales, rbits);
  return BlockScaledTensor(BlockScaledTensor::Adopt{}, std::move(d), std::move(elements), std::move(scales), ts);
}



std::vector<float> dequantize(const BlockScaledTensor& t, const DequantizeOptions& dq) {
  const detail::IeeeMode ieee;
  const BlockScaledDesc& d = t.desc();
  const Dequantizer dec(d.format, t.tensor_scale(), dq);
  const std::int64_t batch = d.batch(), rows = d.rows(), K = d.k(), kb = d.k_blocks(), ks = d.k_stored();
  const std::int64_t bs = d.format.block_size;
  const std::vector<std::uint8_t> scales = t.scale_codes();
  const std::size_t rb = d.row_bytes();
  std::vector<float> out(d.num_elements());
  const std::span<const std::uint8_t> elements = t.elements();
#if defined(_OPENMP)
#pragma omp parallel
#endif
  {
    const detail::IeeeMode thread_ieee;  // each thread's own mode (detail/ieee_mode.h)
    std::vector<std::uint8_t> codes(static_cast<std::size_t>(ks));
#if defined(_OPENMP)
#pragma omp for schedule(static)
#endif
    for (std::int64_t row = 0; row < batch * rows; ++row) {
      unpack(d.packing, d.format.element, elements.subspan(static_cast<std::size_t>(row) * rb, rb), codes);
      const std::uint8_t* s = scales.data() + row * kb;
      if (d.k_axis == KAxis::last) {
        float* o = out.data() + row * K;
        for (std::int64_t k = 0; k < K; ++k) o[k] = dec.value(codes[static_cast<std::size_t>(k)], s[k / bs]);
      } else {
        const std::int64_t b = row / rows, r = row % rows;
        float* o = out.data() + b * K * rows + r;
        for (std::int64_t k = 0; k < K; ++k) o[k * rows] = dec.value(codes[static_cast<std::size_t>(k)], s[k / bs]);
      }
    }
  }
  return out;
}

}  // namespace blockscale
