// SPDX-License-Identifier: Apache-2.0
// The C ABI under the Python module (python/blockscale/__init__.py, through ctypes): flat functions
// over caller-owned arrays, so that the module needs nothing beyond numpy and builds with the
// library's own toolchain. Not a public C API: its only client is the module, which checks shapes
// and dtypes before it calls.
//
// Every function returns 0 on success. On bad input it returns 1 and leaves the message of the
// std::invalid_argument that the library threw (it names the rule broken) for bsc_last_error; any
// other failure returns 2 with its message. No C++ exception crosses the ABI.
#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <exception>
#include <filesystem>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "blockscale/emulator.h"
#include "blockscale/formats/detail/ieee_mode.h"
#include "blockscale/formats.h"
#include "blockscale/golden/file.h"
#include "blockscale/golden/json_text.h"
#include "blockscale/golden/operation.h"
#include "blockscale/golden/set.h"
#include "blockscale/golden/verify.h"
#include "blockscale/harness/block_scaled_models.h"
#include "blockscale/layout.h"
#include "blockscale/quantize.h"

namespace {

using namespace blockscale;

thread_local std::string last_error;
thread_local std::string last_text;  // the storage of a returned string

template <typename F>
int guarded(F&& f) {
  // The module runs inside the caller's process, whose mode may flush subnormals
  // (torch.set_flush_denormal(True), a -ffast-math extension): every entry point computes in IEEE
  // mode (formats/detail/ieee_mode.h) and gives the caller's mode back.
  const blockscale::detail::IeeeMode ieee;
  try {
    f();
    return 0;
  } catch (const std::invalid_argument& e) {
    last_error = e.what();
    return 1;
  } catch (const golden::GoldenError& e) {  // a malformed golden file is bad input too
    last_error = e.what();
    return 1;
  } catch (const std::exception& e) {
    last_error = e.what();
    return 2;
  }
}

const char* text(std::string s) {
  last_text = std::move(s);
  return last_text.c_str();
}

Format format_named(const char* name) {
  const std::optional<Format> f = parse_format(name);
  if (!f) throw std::invalid_argument("unknown format '" + std::string(name) + "'");
  return *f;
}

BlockFormat block_format_named(const char* name) {
  const std::optional<BlockFormat> f = parse_block_format(name);
  if (!f) {
    throw std::invalid_argument("unknown block format '" + std::string(name) +
                                "' (mxfp8_e4m3, mxfp8_e5m2, mxfp6_e2m3, mxfp6_e3m2, mxfp4, mxfp4_block16, nvfp4)");
  }
  return *f;
}

Rounding rounding_named(const char* name) {
  for (Rounding r : {Rounding::nearest_even, Rounding::toward_zero, Rounding::upward, Rounding::downward,
                     Rounding::nearest_away, Rounding::stochastic}) {
    if (to_string(r) == name) return r;
  }
  throw std::invalid_argument("unknown rounding '" + std::string(name) +
                              "' (nearest_even, toward_zero, upward, downward, nearest_away, stochastic)");
}

Overflow overflow_named(const char* name) {
  for (Overflow o : {Overflow::saturate, Overflow::saturate_finite, Overflow::infinity, Overflow::ieee}) {
    if (to_string(o) == name) return o;
  }
  throw std::invalid_argument("unknown overflow rule '" + std::string(name) + "' (saturate, saturate_finite, infinity, ieee)");
}

// A packing by name; "" for the format's dense global-memory packing.
Packing packing_named(const char* name, Format f) {
  if (*name == '\0') return dense_packing(f);
  const std::optional<Packing> p = parse_packing(name);
  if (!p) {
    throw std::invalid_argument("unknown packing '" + std::string(name) +
                                "' (byte_per_element, fp4_dense, fp6_dense, fp4_padded16, fp6_padded16)");
  }
  return *p;
}

// A quantized matrix handed over by the module: `rows` rows of K logical elements, one code per byte
// and k_stored = ceil(K / block) * block per row (the tail padded with zero codes), linear scales
// (rows x k_blocks), and the per-tensor scale {amax, encode, decode}.
BlockScaledTensor adopt(const char* format, const std::uint8_t* elements, const std::uint8_t* scales,
                        const float* tensor_scale, std::int64_t rows, std::int64_t k) {
  BlockScaledDesc d;
  d.format = block_format_named(format);
  d.shape = {rows, k};
  d.k_axis = KAxis::last;
  d.packing = Packing::byte_per_element;
  RawBufferOptions o;
  o.k_tail = KTail::zero_pad;
  o.allow_nan_scales = true;  // a NaN scale makes its block NaN (OCP MX §6.3), as quantize() gives it
  validate(d, o.k_tail);
  std::vector<std::uint8_t> e(elements, elements + d.element_bytes());
  std::vector<std::uint8_t> s(scales, scales + d.scale_bytes());
  return BlockScaledTensor(std::move(d), std::move(e), std::move(s), {tensor_scale[0], tensor_scale[1], tensor_scale[2]}, o);
}

}  // namespace

// The entry points; everything else in the module is hidden (CMake: visibility preset, --exclude-libs).
#define BSC_EXPORT __attribute__((visibility("default")))

extern "C" {

BSC_EXPORT const char* bsc_last_error() { return last_error.c_str(); }

BSC_EXPORT const char* bsc_version() { return BLOCKSCALE_VERSION; }

// ---- Formats.

// The element and scale formats' names, one per line.
BSC_EXPORT const char* bsc_format_names() {
  std::string s;
  for (const FormatInfo& i : kFormatTable) s += std::string(i.name) + "\n";
  return text(std::move(s));
}

// The canonical name of a format (any spelling parse_format takes), its storage bits and its
// exponent and mantissa widths.
BSC_EXPORT int bsc_format_info(const char* name, const char** canonical, int* storage_bits, int* exponent_bits, int* mantissa_bits) {
  return guarded([&] {
    const FormatInfo& i = info(format_named(name));
    *canonical = i.name;
    *storage_bits = i.storage_bits;
    *exponent_bits = i.exponent_bits;
    *mantissa_bits = i.mantissa_bits;
  });
}

// n values of `source` (float32, float64, float16 or bfloat16 storage) to storage words of `format`
// with the options of a preset: ieee (any rounding and overflow rule), cuda (CUDA 13.0's conversion
// for this source, with the rounding and overflow it offers) or ml_dtypes (its cast, saturating or
// not, nearest even or truncating). rounding / overflow: a name, or null for the preset's default.
// rbits: n random words for stochastic rounding (else null).
BSC_EXPORT int bsc_encode(const char* format, const char* source, const void* x, std::int64_t n, const char* preset,
               const char* rounding, const char* overflow, const std::uint32_t* rbits, int stochastic_bits,
               std::uint32_t* out) {
  return guarded([&] {
    const Format dst = format_named(format);
    const std::string src_name(source);
    const Format src = src_name == "float64"    ? Format::float32  // the preset's f32 row, from double
                       : src_name == "float32"  ? Format::float32
                       : src_name == "float16"  ? Format::float16
                       : src_name == "bfloat16" ? Format::bfloat16
                                                : throw std::invalid_argument("unsupported source dtype '" + src_name +
                                                                              "' (float32, float64, float16, bfloat16)");
    const bool from_double = src_name == "float64";
    const std::optional<Rounding> r = rounding ? std::optional(rounding_named(rounding)) : std::nullopt;
    const std::optional<Overflow> o = overflow ? std::optional(overflow_named(overflow)) : std::nullopt;
    const std::string p(preset);
    ConvertOptions options;
    if (p == "ieee") {
      options = presets::ieee(r.value_or(Rounding::nearest_even));
      if (o) options.overflow = *o;
    } else if (p == "cuda") {
      options = presets::cuda(dst, src, from_double, r, o);
    } else if (p == "ml_dtypes") {
      if (r && *r != Rounding::nearest_even && *r != Rounding::toward_zero) {
        throw std::invalid_argument("the ml_dtypes preset rounds to nearest even or, truncating, toward zero; got " +
                                    to_string(*r));
      }
      if (o && *o != Overflow::saturate_finite && *o != Overflow::infinity) {
        throw std::invalid_argument("the ml_dtypes preset overflows to infinity or, saturating, to saturate_finite; got " +
                                    to_string(*o));
      }
      options = presets::ml_dtypes(dst, src, o == Overflow::saturate_finite, r == Rounding::toward_zero);
    } else {
      throw std::invalid_argument("unknown preset '" + p + "' (ieee, cuda, ml_dtypes)");
    }
    if (stochastic_bits > 0) options.stochastic_bits = stochastic_bits;
    if (options.rounding == Rounding::stochastic && rbits == nullptr) {
      throw std::invalid_argument("stochastic rounding needs one random word per value (rbits)");
    }
    validate(dst, options);
    for (std::int64_t i = 0; i < n; ++i) {
      const std::uint32_t rb = rbits ? rbits[i] : 0;
      std::uint32_t code;
      if (src_name == "float64") {
        code = convert(dst, static_cast<const double*>(x)[i], options, rb);
      } else if (src_name == "float32") {
        code = convert(dst, static_cast<const float*>(x)[i], options, rb);
      } else {
        code = convert_code(dst, src, static_cast<const std::uint16_t*>(x)[i], options, rb);
      }
      out[i] = to_storage(dst, code);
    }
  });
}

// n storage words of `format` to their exact values.
BSC_EXPORT int bsc_decode(const char* format, const std::uint32_t* words, std::int64_t n, double* out) {
  return guarded([&] {
    const Format f = format_named(format);
    for (std::int64_t i = 0; i < n; ++i) {
      const std::uint32_t code = from_storage(f, words[i]);
      if (to_storage(f, code) != words[i]) {
        throw std::invalid_argument("word " + std::to_string(i) + " (0x" + [&] {
          char h[16];
          std::snprintf(h, sizeof h, "%X", words[i]);
          return std::string(h);
        }() + ") is not a storage word of " + to_string(f));
      }
      out[i] = to_double(f, code);
    }
  });
}

// ---- Block formats and quantization.

// The recipe names (quantize/options.h recipes::named), one per line, each followed by " mx" or
// " nvfp4".
BSC_EXPORT const char* bsc_recipe_names() {
  std::string s;
  for (const recipes::NamedRecipe& r : recipes::named()) s += std::string(r.name) + (r.mx ? " mx\n" : " nvfp4\n");
  return text(std::move(s));
}

// A block format's canonical name, element and scale formats, block size, and whether it carries an
// fp32 per-tensor scale (NVFP4).
BSC_EXPORT int bsc_block_format_info(const char* name, const char** canonical, const char** element, const char** scale,
                          int* block_size, int* tensor_scale) {
  return guarded([&] {
    const BlockFormat f = block_format_named(name);
    static thread_local std::string canonical_text;
    canonical_text = to_string(f);
    *canonical = canonical_text.c_str();
    *element = info(f.element).name;
    *scale = info(f.scale).name;
    *block_size = f.block_size;
    *tensor_scale = has_tensor_scale(f) ? 1 : 0;
  });
}

// Quantizes rows x k float32 values (row-major, blocks along each row) with a named recipe:
// elements (rows x k_stored codes), scales (rows x k_blocks codes, linear) and the per-tensor scale
// {amax, encode, decode}. rbits: rows x k random words for a stochastic recipe, else null.
BSC_EXPORT int bsc_quantize(const char* format, const char* recipe, const float* x, std::int64_t rows, std::int64_t k,
                 const std::uint32_t* rbits, std::uint8_t* elements, std::uint8_t* scales, float* tensor_scale) {
  return guarded([&] {
    const BlockFormat f = block_format_named(format);
    std::optional<QuantizeOptions> o = recipes::by_name(recipe, f.element);
    if (!o) throw std::invalid_argument("unknown recipe '" + std::string(recipe) + "' (" + recipes::names() + ")");
    o->k_tail = KTail::zero_pad;  // K need not be a multiple of the block: the tail block is zero-padded
    const auto count = static_cast<std::size_t>(rows * k);
    std::span<const std::uint32_t> bits;
    if (rbits) bits = std::span<const std::uint32_t>(rbits, count);
    const BlockScaledTensor t = quantize(std::span<const float>(x, count), {rows, k}, KAxis::last, f, *o,
                                         Packing::byte_per_element, ScaleLayout{}, bits);
    std::memcpy(elements, t.elements().data(), t.elements().size());
    std::memcpy(scales, t.scales().data(), t.scales().size());
    tensor_scale[0] = t.tensor_scale().amax;
    tensor_scale[1] = t.tensor_scale().encode;
    tensor_scale[2] = t.tensor_scale().decode;
  });
}

// Back to float32 (rows x k): fp32(element * scale), the per-tensor scale as NVFP4 applies it.
BSC_EXPORT int bsc_dequantize(const char* format, const std::uint8_t* elements, const std::uint8_t* scales, const float* tensor_scale,
                   std::int64_t rows, std::int64_t k, float* out) {
  return guarded([&] {
    const std::vector<float> v = dequantize(adopt(format, elements, scales, tensor_scale, rows, k));
    std::memcpy(out, v.data(), v.size() * sizeof(float));
  });
}

// ---- Sub-byte packing (layout/packing.h) and scale-factor layouts (layout/scale_layout.h).

// Bytes that n codes of `format` occupy in `packing` ("" for the format's dense packing).
BSC_EXPORT int bsc_packed_bytes(const char* packing, const char* format, std::int64_t n, std::int64_t* bytes) {
  return guarded([&] {
    const Format f = format_named(format);
    *bytes = static_cast<std::int64_t>(packed_bytes(packing_named(packing, f), f, static_cast<std::size_t>(n)));
  });
}

BSC_EXPORT int bsc_pack(const char* packing, const char* format, const std::uint8_t* codes, std::int64_t n,
                        std::uint8_t* out, std::int64_t out_bytes) {
  return guarded([&] {
    const Format f = format_named(format);
    pack(packing_named(packing, f), f, std::span<const std::uint8_t>(codes, static_cast<std::size_t>(n)),
         std::span<std::uint8_t>(out, static_cast<std::size_t>(out_bytes)));
  });
}

BSC_EXPORT int bsc_unpack(const char* packing, const char* format, const std::uint8_t* in, std::int64_t in_bytes,
                          std::uint8_t* codes, std::int64_t n) {
  return guarded([&] {
    const Format f = format_named(format);
    unpack(packing_named(packing, f), f, std::span<const std::uint8_t>(in, static_cast<std::size_t>(in_bytes)),
           std::span<std::uint8_t>(codes, static_cast<std::size_t>(n)));
  });
}

// A scale layout (its text form, layout/scale_layout.h) for an R x C scale matrix: the canonical
// text, the storage size per batch item and the stored shape, comma-separated.
BSC_EXPORT int bsc_scale_layout_info(const char* layout, std::int64_t rows, std::int64_t cols, const char** canonical,
                                     std::int64_t* storage, const char** shape) {
  return guarded([&] {
    const ScaleLayout l = scale_layout_from_string(layout);
    check_shape(l, rows, cols);
    *storage = storage_size(l, rows, cols);
    std::string dims;
    for (std::int64_t d : storage_shape(l, rows, cols)) {
      if (!dims.empty()) dims += ',';
      dims += std::to_string(d);
    }
    static thread_local std::string canonical_text;
    canonical_text = to_string(l);
    *canonical = canonical_text.c_str();
    *shape = text(std::move(dims));
  });
}

// batch row-major R x C scale matrices (bytes, or float32 when is_float) into storage images of the
// layout, padding filled with pad (a byte, or float32 bits); and back.
BSC_EXPORT int bsc_scales_to_layout(const char* layout, std::int64_t batch, std::int64_t rows, std::int64_t cols,
                                    int is_float, const void* row_major, void* out, std::uint32_t pad) {
  return guarded([&] {
    const ScaleLayout l = scale_layout_from_string(layout);
    const auto n = static_cast<std::size_t>(batch * rows * cols);
    const auto stored = static_cast<std::size_t>(batch * storage_size(l, rows, cols));
    if (is_float) {
      to_layout(l, batch, rows, cols, std::span<const float>(static_cast<const float*>(row_major), n),
                std::span<float>(static_cast<float*>(out), stored), std::bit_cast<float>(pad));
    } else {
      if (pad > 0xFF) throw std::invalid_argument("a byte layout's padding is a byte, got " + std::to_string(pad));
      to_layout(l, batch, rows, cols, std::span<const std::uint8_t>(static_cast<const std::uint8_t*>(row_major), n),
                std::span<std::uint8_t>(static_cast<std::uint8_t*>(out), stored), static_cast<std::uint8_t>(pad));
    }
  });
}

BSC_EXPORT int bsc_scales_from_layout(const char* layout, std::int64_t batch, std::int64_t rows, std::int64_t cols,
                                      int is_float, const void* in, void* row_major) {
  return guarded([&] {
    const ScaleLayout l = scale_layout_from_string(layout);
    const auto n = static_cast<std::size_t>(batch * rows * cols);
    const auto stored = static_cast<std::size_t>(batch * storage_size(l, rows, cols));
    if (is_float) {
      from_layout(l, batch, rows, cols, std::span<const float>(static_cast<const float*>(in), stored),
                  std::span<float>(static_cast<float*>(row_major), n));
    } else {
      from_layout(l, batch, rows, cols, std::span<const std::uint8_t>(static_cast<const std::uint8_t*>(in), stored),
                  std::span<std::uint8_t>(static_cast<std::uint8_t*>(row_major), n));
    }
  });
}

// ---- GEMM models (harness/block_scaled_models.h).

// The model names, one per line.
BSC_EXPORT const char* bsc_gemm_model_names() {
  std::string s;
  for (std::string_view n : harness::block_scaled_model_names()) s += std::string(n) + "\n";
  return text(std::move(s));
}

// D (m x n f32 bits) = A (m x k) x B^T (B given as n x k, quantized along K), C (m x n f32 bits) or
// null. stats: the emulator's GemmPathStats {exact, truncating, special, reference_outputs, fp16,
// certified}; definition: what the model computed, in words (with the emulator schedule's name).
// threads: 0 for the OpenMP default (the bits do not depend on it).
BSC_EXPORT int bsc_gemm(const char* model, const char* format_a, const std::uint8_t* a_elements, const std::uint8_t* a_scales,
             const float* a_tensor_scale, const char* format_b, const std::uint8_t* b_elements,
             const std::uint8_t* b_scales, const float* b_tensor_scale, std::int64_t m, std::int64_t n, std::int64_t k,
             const std::uint32_t* c, int threads, std::uint32_t* d, std::uint64_t* stats, const char** definition) {
  return guarded([&] {
    const BlockScaledTensor a = adopt(format_a, a_elements, a_scales, a_tensor_scale, m, k);
    const BlockScaledTensor b = adopt(format_b, b_elements, b_scales, b_tensor_scale, n, k);
    const harness::BlockScaledModel model_of_b(model, a, b);
    emulator::GemmPathStats s;
    emulator::GemmOptions o;
    o.threads = threads;
    o.stats = &s;
    const std::span<const std::uint32_t> c_bits = c ? std::span<const std::uint32_t>(c, static_cast<std::size_t>(m * n))
                                                    : std::span<const std::uint32_t>();
    const std::vector<std::uint32_t> result = model_of_b(a, c_bits, o);
    std::memcpy(d, result.data(), result.size() * sizeof(std::uint32_t));
    const std::uint64_t counts[6] = {s.exact, s.truncating, s.special, s.reference_outputs, s.fp16, s.certified};
    std::memcpy(stats, counts, sizeof counts);
    *definition = text(model_of_b.definition());
  });
}

}  // extern "C"

// ---- fp8 with fp32 scales (quantize/fp8_scaled.h) and the library GEMMs (emulator/library_fp8.h).

namespace {

const NamedFp8Recipe& fp8_recipe_named(const char* name) {
  if (const NamedFp8Recipe* r = find_fp8_recipe(name)) return *r;
  std::string names;
  for (const NamedFp8Recipe& r : named_fp8_recipes()) names += (names.empty() ? "" : ", ") + std::string(r.name);
  throw std::invalid_argument("unknown fp8 recipe '" + std::string(name) + "' (" + names + ")");
}

Format fp8_element_named(const char* name) {
  const Format f = format_named(name);
  if (f != Format::float8_e4m3fn && f != Format::float8_e5m2) {
    throw std::invalid_argument("fp8 with fp32 scales takes float8_e4m3fn or float8_e5m2 elements, got " + to_string(f));
  }
  return f;
}

// An fp8 matrix handed over by the module: rows x k codes (K-major) and its scales for the recipe's
// granularity (row-major), as quantize_fp8_scaled lays them out.
Fp8ScaledMatrix fp8_matrix(const char* format, const char* recipe, const std::uint8_t* codes, const float* scales,
                           std::int64_t rows, std::int64_t k) {
  const NamedFp8Recipe& r = fp8_recipe_named(recipe);
  Fp8ScaledMatrix m;
  m.element = fp8_element_named(format);
  m.granularity = r.granularity;
  m.recipe = r.recipe;
  m.rows = rows;
  m.k = k;
  m.codes.assign(codes, codes + rows * k);
  m.scales.assign(scales, scales + m.scale_count());
  return m;
}

const emulator::LibraryFp8Schedule& library_schedule_named(const char* model, const Fp8ScaledMatrix& a,
                                                           const Fp8ScaledMatrix& b) {
  const emulator::LibraryFp8Model* m = emulator::find_library_fp8_model(model);
  if (!m) {
    std::string names = "exact";
    for (const emulator::LibraryFp8Model& known : emulator::library_fp8_models()) names += ", " + std::string(known.name);
    throw std::invalid_argument("unknown model '" + std::string(model) + "' for fp8 with fp32 scales (" + names + ")");
  }
  return emulator::library_fp8_schedule(m->library, m->fast_accum, a.granularity, b.granularity);
}

}  // namespace

extern "C" {

// The fp8 recipes, one per line: the name, then its granularity (tensor, row, 1x128, 128x128).
BSC_EXPORT const char* bsc_fp8_recipe_names() {
  std::string s;
  for (const NamedFp8Recipe& r : named_fp8_recipes()) s += std::string(r.name) + " " + std::string(to_string(r.granularity)) + "\n";
  return text(std::move(s));
}

// Quantizes rows x k float32 values (row-major, K last) to fp8 codes (rows x k) and fp32 scales
// (the recipe granularity's count, row-major).
BSC_EXPORT int bsc_quantize_fp8(const char* format, const char* recipe, const float* x, std::int64_t rows, std::int64_t k,
                                std::uint8_t* codes, float* scales) {
  return guarded([&] {
    const NamedFp8Recipe& r = fp8_recipe_named(recipe);
    const Fp8ScaledMatrix m = quantize_fp8_scaled(std::span<const float>(x, static_cast<std::size_t>(rows * k)), rows, k,
                                                  KAxis::last, fp8_element_named(format), r.granularity, r.recipe);
    std::memcpy(codes, m.codes.data(), m.codes.size());
    std::memcpy(scales, m.scales.data(), m.scales.size() * sizeof(float));
  });
}

// D (m x n f32 bits; for a bf16 or f16 D its values as f32 words) = A (m x k) B^T (B as n x k) as
// the library call `model` computes it on sm_90a (or "exact": the exact sum rounded once to f32),
// split_k slices; d_type "f32", "bf16" or "f16"; bias nullptr or n values, each exact in d_type, that
// torch._scaled_mm adds (emulator::add_bias). definition: the model's numerics in words.
BSC_EXPORT int bsc_gemm_fp8(const char* model, const char* format_a, const char* recipe_a,
                            const std::uint8_t* a_codes, const float* a_scales, const char* format_b,
                            const char* recipe_b, const std::uint8_t* b_codes, const float* b_scales,
                            std::int64_t m, std::int64_t n, std::int64_t k, int split_k, const char* d_type,
                            const float* bias, int threads, std::uint32_t* d, const char** definition) {
  return guarded([&] {
    const Fp8ScaledMatrix a = fp8_matrix(format_a, recipe_a, a_codes, a_scales, m, k);
    const Fp8ScaledMatrix b = fp8_matrix(format_b, recipe_b, b_codes, b_scales, n, k);
    const std::string_view dt(d_type);
    if (dt != "f32" && dt != "bf16" && dt != "f16") {
      throw std::invalid_argument("d_type '" + std::string(dt) + "': f32, bf16 or f16");
    }
    const Format d_format = dt == "bf16" ? Format::bfloat16 : dt == "f16" ? Format::float16 : Format::float32;
    emulator::GemmOptions o;
    o.threads = threads;
    std::vector<std::uint32_t> result;
    std::string words;
    if (std::string_view(model) == "exact") {
      if (split_k != 1 || d_format != Format::float32 || bias != nullptr) {
        throw std::invalid_argument("exact takes neither split_k nor a bf16 or f16 D nor a bias");
      }
      result = emulator::exact_fp8_scaled_gemm(a, b, 0, m, o);
      words = "the quantized operands' exact sum, rounded once to f32 (nearest even)";
    } else {
      const emulator::LibraryFp8Schedule& s = library_schedule_named(model, a, b);
      const bool torch = s.library == emulator::Fp8Library::torch_scaled_mm;
      // torch._scaled_mm's bias is per column of D (docs/conformance.md, "Bias"); cuBLASLt's own is
      // per row, with its epilogue (bsc_cublaslt_fp8; "cuBLASLt epilogue").
      if (!torch && bias != nullptr) {
        throw std::invalid_argument(std::string("model ") + model +
                                    ": cuBLASLt's bias is per row of D, with its epilogue: use cublaslt_fp8");
      }
      if (bias != nullptr && d_format == Format::float32) {
        throw std::invalid_argument(
            "bias with an f32 D: torch._scaled_mm refuses it (\"Bias is not supported when "
            "out_dtype is set to Float32\"); ask for a bf16 or f16 D");
      }
      result = emulator::library_fp8_gemm(s, a, b, 0, m, split_k, o);
      words = s.definition();
      if (split_k > 1)
        words += "; split-K " + std::to_string(split_k) + " at multiples of " +
                 std::to_string(s.split_granule_k) + " of K, the slices added in order";
      if (bias != nullptr) {
        std::vector<std::uint32_t> codes(static_cast<std::size_t>(n));
        for (std::int64_t j = 0; j < n; ++j) {
          const std::uint32_t bits = std::bit_cast<std::uint32_t>(bias[j]);
          codes[static_cast<std::size_t>(j)] = convert_code(d_format, Format::float32, bits, presets::ieee());
          if (convert_code(Format::float32, d_format, codes[static_cast<std::size_t>(j)], presets::ieee()) !=
              bits) {
            throw std::invalid_argument("bias[" + std::to_string(j) + "] = " + std::to_string(bias[j]) +
                                        " is not a " + std::string(dt) +
                                        " value: torch._scaled_mm takes the bias in D's dtype");
          }
        }
        emulator::add_bias(result, n, codes, d_format);
        words += "; plus the bias in f32 (FADD after the scales), then D rounded once to " + std::string(dt) +
                 " (nearest even)";
      } else if (d_format != Format::float32) {
        emulator::round_d(result, d_format);
        words += "; D in " + std::string(dt) + ": the f32 D rounded once to nearest even";
      }
    }
    std::memcpy(d, result.data(), result.size() * sizeof(std::uint32_t));
    *definition = text(std::move(words));
  });
}

}  // extern "C"

namespace {

// "f32", "bf16", "f16", "e4m3", "e5m2": the types of cuBLASLt's C, bias and D.
Format lt_type_named(const char* name, const char* what) {
  const std::string_view t(name ? name : "");
  if (t == "f32") return Format::float32;
  if (t == "bf16") return Format::bfloat16;
  if (t == "f16") return Format::float16;
  if (t == "e4m3") return Format::float8_e4m3fn;
  if (t == "e5m2") return Format::float8_e5m2;
  throw std::invalid_argument(std::string(what) + " type '" + std::string(t) + "': f32, bf16, f16, e4m3 or e5m2");
}

// float values as codes of `format`, each exactly a value of it.
std::vector<std::uint32_t> exact_codes(const float* values, std::int64_t count, Format format, const char* what) {
  std::vector<std::uint32_t> codes(static_cast<std::size_t>(count));
  for (std::int64_t i = 0; i < count; ++i) {
    const std::uint32_t bits = std::bit_cast<std::uint32_t>(values[i]);
    const std::uint32_t code =
        format == Format::float32 ? bits : convert_code(format, Format::float32, bits, presets::ieee());
    if (format != Format::float32 && convert_code(Format::float32, format, code, presets::ieee()) != bits) {
      throw std::invalid_argument(std::string(what) + "[" + std::to_string(i) + "] = " + std::to_string(values[i]) +
                                  " is not a " + info(format).name + " value");
    }
    codes[static_cast<std::size_t>(i)] = code;
  }
  return codes;
}

}  // namespace

extern "C" {

// cuBLASLt's fp8 GEMM with its epilogue (emulator::cublaslt_fp8_gemm): model cublaslt or
// cublaslt_fast_accum; c: nullptr or m x n values (row-major), each exact in c_type; bias: nullptr
// or m values (one per row of D), each exact in bias_type; types "f32", "bf16", "f16", "e4m3" (D);
// relu != 0: CUBLASLT_EPILOGUE_RELU (RELU_BIAS with a bias). d: m x n float32 values of D; amax_d:
// max |D| before the D scale.
BSC_EXPORT int bsc_cublaslt_fp8(const char* model, const char* format_a, const char* recipe_a,
                                const std::uint8_t* a_codes, const float* a_scales, const char* format_b,
                                const char* recipe_b, const std::uint8_t* b_codes, const float* b_scales,
                                std::int64_t m, std::int64_t n, std::int64_t k, int split_k, float alpha, float beta,
                                const float* c, const char* c_type, const float* bias, const char* bias_type,
                                const char* d_type, float d_scale, int relu, int threads, float* d,
                                float* amax_d, const char** definition) {
  return guarded([&] {
    const Fp8ScaledMatrix a = fp8_matrix(format_a, recipe_a, a_codes, a_scales, m, k);
    const Fp8ScaledMatrix b = fp8_matrix(format_b, recipe_b, b_codes, b_scales, n, k);
    const emulator::LibraryFp8Schedule& s = library_schedule_named(model, a, b);
    emulator::CublasLtEpilogue e;
    e.alpha = alpha;
    e.beta = beta;
    e.d_format = lt_type_named(d_type, "D");
    e.d_scale = d_scale;
    e.c_format = lt_type_named(c_type, "C");
    e.bias_format = lt_type_named(bias_type, "bias");
    e.relu = relu != 0;
    std::vector<std::uint32_t> c_codes, bias_codes;
    if (beta != 0.0f) {
      if (c == nullptr) throw std::invalid_argument("beta != 0 reads C: pass m x n values");
      c_codes = exact_codes(c, m * n, e.c_format, "C");
      e.c = c_codes;
    }
    if (bias != nullptr) {
      bias_codes = exact_codes(bias, m, e.bias_format, "bias");
      e.bias = bias_codes;
    }
    emulator::GemmOptions o;
    o.threads = threads;
    const emulator::CublasLtFp8Result r = emulator::cublaslt_fp8_gemm(s, a, b, 0, m, split_k, e, o);
    for (std::size_t i = 0; i < r.d.size(); ++i) {
      const std::uint32_t word =
          e.d_format == Format::float32 ? r.d[i] : convert_code(Format::float32, e.d_format, r.d[i], presets::ieee());
      d[i] = std::bit_cast<float>(word);
    }
    *amax_d = r.amax_d;
    std::string words = s.definition();
    if (split_k > 1)
      words += "; split-K " + std::to_string(split_k) + " at multiples of " + std::to_string(s.split_granule_k) +
               " of K, the slices added in order";
    words += emulator::cublaslt_epilogue_definition(s, split_k, e);
    *definition = text(std::move(words));
  });
}

// The split count cuBLASLt's heuristic chose for this call on gpu ("h100", "h200") as recorded
// (emulator::recorded_split_k), for a bf16 or f32 D and a cuBLASLt workspace of 1 or 64 MiB.
BSC_EXPORT int bsc_recorded_split_k(const char* model, const char* format_a, const char* recipe_a, const char* format_b,
                                    const char* recipe_b, std::int64_t m, std::int64_t n, std::int64_t k, const char* gpu,
                                    int bf16_d, int workspace_mib, int* split_k) {
  return guarded([&] {
    const emulator::LibraryFp8Model* lm = emulator::find_library_fp8_model(model);
    if (!lm) throw std::invalid_argument("unknown library model '" + std::string(model) + "'");
    *split_k = emulator::recorded_split_k(lm->library, lm->fast_accum, fp8_recipe_named(recipe_a).granularity,
                                          fp8_recipe_named(recipe_b).granularity, fp8_element_named(format_a),
                                          fp8_element_named(format_b), m, n, k, {gpu, bf16_d != 0, workspace_mib});
  });
}

// ---- 2:4 sparse GEMMs as torch._cslt_sparse_mm runs them on Hopper (emulator/sparse_gemm.h).

// D (m x n words of `output`) = A (m x k words of `format`, zeros at the pruned positions: 2 of each
// 4 along K, 1 of each 2 for float32) x B (k x n words of `format`) as cuSPARSELt 0.8's kernels compute
// it on an H100, K cut into `slices` slices (split-K).
BSC_EXPORT int bsc_sparse_mm(const char* format, const char* output, const std::uint32_t* a, const std::uint32_t* b,
                             std::int64_t m, std::int64_t n, std::int64_t k, int slices, int threads, std::uint32_t* d) {
  return guarded([&] {
    const Format f = format_named(format), out = format_named(output);
    const auto M = static_cast<std::size_t>(m), N = static_cast<std::size_t>(n), K = static_cast<std::size_t>(k);
    const emulator::CodeMatrix A(f, M, K, std::span<const std::uint32_t>(a, M * K));
    const emulator::CodeMatrix B(f, K, N, std::span<const std::uint32_t>(b, K * N));
    emulator::GemmOptions o;
    o.threads = threads;
    const std::vector<std::uint32_t> r = emulator::cusparselt_sparse_mm(out, A, B, slices, o);
    std::memcpy(d, r.data(), r.size() * sizeof(std::uint32_t));
  });
}

// ---- Single instructions (emulator/mma.h).

// One line per table row: its id, then the canonical name of its smallest instruction.
BSC_EXPORT const char* bsc_instruction_rows() {
  std::string s;
  for (const emulator::InstructionRow& r : emulator::instruction_table()) {
    s += std::string(r.id) + "\t" + emulator::smallest_instruction(r).name() + "\n";
  }
  return text(std::move(s));
}

// An instruction name resolved: a JSON object with its canonical name, shape, operand, accumulator
// and scale formats, block, sparse group, the model's parameters and provenance.
BSC_EXPORT int bsc_instruction_info(const char* name, const char** json) {
  return guarded([&] {
    using golden::json_string;
    const emulator::Instruction ins = emulator::parse_instruction(name);
    const emulator::FdpaParams& p = ins.params();
    auto format_name = [](emulator::Type t) {
      const std::optional<Format> f = emulator::format_of(t);
      return json_string(f ? info(*f).name : "float64");
    };
    std::string s = "{\"name\": " + json_string(ins.name()) + ", \"row\": " + json_string(ins.table_row().id) +
                    ", \"m\": " + std::to_string(ins.m) + ", \"n\": " + std::to_string(ins.n) + ", \"k\": " +
                    std::to_string(ins.k) + ", \"a\": " + format_name(ins.a) + ", \"b\": " + format_name(ins.b) +
                    ", \"d\": " + format_name(ins.d);
    if (ins.block_scaled()) {
      s += ", \"scale\": " + format_name(ins.scale_type()) + ", \"block\": " + std::to_string(ins.block());
    }
    if (ins.sparse) s += ", \"sparse_group\": " + std::to_string(ins.sparse_group());
    s += ", \"algorithm\": " + json_string(emulator::to_string(p.algorithm)) + ", \"L\": " + std::to_string(p.L) +
         ", \"F\": " + std::to_string(p.F) + ", \"rounding\": " + json_string(emulator::to_string(p.rounding)) +
         ", \"provenance\": " + json_string(emulator::to_string(ins.provenance())) + "}";
    *json = text(std::move(s));
  });
}

// D (M x N accumulator words) of one instruction: A (M x K), B (K x N), C (M x N, or null for +0),
// block-scaled: SFA (M x K/block) and SFB (K/block x N). Words are storage words of the operand
// formats (tf32: fp32 bit patterns; f64: not taken here).
BSC_EXPORT int bsc_mma(const char* name, const std::uint32_t* a, const std::uint32_t* b, const std::uint32_t* c,
            const std::uint32_t* scale_a, const std::uint32_t* scale_b, std::uint32_t* d) {
  return guarded([&] {
    const emulator::Instruction ins = emulator::parse_instruction(name);
    if (ins.sparse) throw std::invalid_argument(ins.name() + " is a sparse form: use mma_sparse");
    const std::optional<Format> fa = emulator::format_of(ins.a), fb = emulator::format_of(ins.b),
                                fd = emulator::format_of(ins.d);
    if (!fa || !fb || !fd) throw std::invalid_argument(ins.name() + ": f64 instructions are not taken here");
    const auto M = static_cast<std::size_t>(ins.m), N = static_cast<std::size_t>(ins.n), K = static_cast<std::size_t>(ins.k);
    const emulator::CodeMatrix A(*fa, M, K, std::span<const std::uint32_t>(a, M * K));
    const emulator::CodeMatrix B(*fb, K, N, std::span<const std::uint32_t>(b, K * N));
    emulator::CodeMatrix C, SA, SB;
    if (c) C = emulator::CodeMatrix(*fd, M, N, std::span<const std::uint32_t>(c, M * N));
    if (ins.block_scaled()) {
      const Format fs = *emulator::format_of(ins.scale_type());
      const std::size_t kb = K / static_cast<std::size_t>(ins.block());
      SA = emulator::CodeMatrix(fs, M, kb, std::span<const std::uint32_t>(scale_a, M * kb));
      SB = emulator::CodeMatrix(fs, kb, N, std::span<const std::uint32_t>(scale_b, kb * N));
    }
    const std::vector<std::uint32_t> r = emulator::mma(ins, A, B, C, SA, SB);
    std::memcpy(d, r.data(), r.size() * sizeof(std::uint32_t));
  });
}

// The sparse forms (mma.sp::ordered_metadata, wgmma.mma_async.sp): A as M x K/2 stored values and
// their positions in their groups (a_index, 0..group-1), B (K x N), C (M x N) or null.
BSC_EXPORT int bsc_mma_sparse(const char* name, const std::uint32_t* a_values, const std::uint8_t* a_index, const std::uint32_t* b,
                   const std::uint32_t* c, std::uint32_t* d) {
  return guarded([&] {
    const emulator::Instruction ins = emulator::parse_instruction(name);
    if (!ins.sparse) throw std::invalid_argument(ins.name() + " is a dense instruction: use mma");
    const Format fa = *emulator::format_of(ins.a), fb = *emulator::format_of(ins.b), fd = *emulator::format_of(ins.d);
    const auto M = static_cast<std::size_t>(ins.m), N = static_cast<std::size_t>(ins.n), K = static_cast<std::size_t>(ins.k);
    const emulator::CodeMatrix A(fa, M, K / 2, std::span<const std::uint32_t>(a_values, M * K / 2));
    const emulator::CodeMatrix B(fb, K, N, std::span<const std::uint32_t>(b, K * N));
    emulator::CodeMatrix C;
    if (c) C = emulator::CodeMatrix(fd, M, N, std::span<const std::uint32_t>(c, M * N));
    const std::vector<std::uint32_t> r = emulator::mma_sparse(ins, A, std::span<const std::uint8_t>(a_index, M * K / 2), B, C);
    std::memcpy(d, r.data(), r.size() * sizeof(std::uint32_t));
  });
}

}  // extern "C"

// ---- Golden vectors (golden/FORMAT.md; golden/file.h, verify.h, set.h).

extern "C" {

// One file's text parsed by the library's reader (golden::parse_golden, syntax only) and written back
// by its writer (format_golden): the canonical text. A malformed file: status 1, "<name>:<line>: <what>".
// The module reads files with its own reader; tests/python/test_golden.py holds that reader to this one.
BSC_EXPORT int bsc_golden_parse(const char* data, std::int64_t size, const char* name, const char** canonical) {
  return guarded([&] {
    const golden::GoldenFile f = golden::parse_golden(std::string_view(data, static_cast<std::size_t>(size)), name);
    *canonical = text(golden::format_golden(f));
  });
}

// Files, manifests and directories (one path per line) verified as `blockscale golden verify` does:
// a JSON array of reports (golden::to_json), each with at most max_report mismatches.
BSC_EXPORT int bsc_golden_verify(const char* paths, int max_report, const char** json) {
  return guarded([&] {
    std::vector<std::filesystem::path> list;
    for (std::string_view rest = paths; !rest.empty();) {
      const std::size_t end = std::min(rest.find('\n'), rest.size());
      if (end > 0) list.emplace_back(std::string(rest.substr(0, end)));
      rest.remove_prefix(std::min(end + 1, rest.size()));
    }
    if (list.empty()) throw std::invalid_argument("verify needs at least one path (file, manifest or directory)");
    if (max_report < 0) throw std::invalid_argument("max_report must be >= 0");
    golden::VerifyOptions o;
    o.max_report = static_cast<std::size_t>(max_report);
    std::string s = "[";
    for (const golden::FileReport& r : golden::verify_paths(list, o)) s += (s.size() > 1 ? ", " : "") + golden::to_json(r);
    *json = text(s + "]");
  });
}

// The families of generated sets, one per line ("conversions", ..., "gemms").
BSC_EXPORT const char* bsc_golden_families() {
  std::string s;
  for (const std::string& f : golden::family_names()) s += f + "\n";
  return text(std::move(s));
}

// The operation ids of a family, one per line.
BSC_EXPORT int bsc_golden_operations(const char* family, const char** ids) {
  return guarded([&] {
    std::string s;
    for (const auto& op : golden::family(family)) s += op->id() + "\n";
    *ids = text(std::move(s));
  });
}

// Generates a family or one operation id as `blockscale golden gen` does (data "" for the default,
// cases <= 0 for the operation's default). With out_dir non-empty the set and its manifest.json are
// written there. Returns a JSON array of {"name", "text"}: each file's name and whole text.
BSC_EXPORT int bsc_golden_generate(const char* op, std::uint64_t seed, const char* data, std::int64_t cases,
                                   const char* out_dir, const char** json) {
  return guarded([&] {
    std::optional<golden::DataKind> kind;
    if (*data != '\0') {
      kind = golden::parse_data_kind(data);
      if (!kind) throw std::invalid_argument("data must be mixed, edge, random or realistic, got '" + std::string(data) + "'");
    }
    std::optional<std::size_t> count;
    if (cases > 0) count = static_cast<std::size_t>(cases);
    const std::vector<golden::GoldenFile> files = golden::generate_set(op, seed, kind, count);
    if (*out_dir != '\0') {
      golden::write_set(out_dir, files, op, seed, golden::to_string(kind.value_or(golden::default_data(op))), false);
    }
    std::string s = "[";
    for (const golden::GoldenFile& f : files) {
      s += (s.size() > 1 ? ", " : "") + std::string("{\"name\": ") + golden::json_string(f.name) +
           ", \"text\": " + golden::json_string(golden::format_golden(f)) + "}";
    }
    *json = text(s + "]");
  });
}

}  // extern "C"
