// SPDX-License-Identifier: Apache-2.0
#include "blockscale/formats/bulk.h"

#include <array>
#include <atomic>
#include <cstdlib>
#include <bit>
#include <stdexcept>
#include <string>

#include "blockscale/formats/detail/round.h"
#include "bulk_kernels.h"

namespace blockscale {

namespace {

// Not under a sanitizer: the clones' IFUNC resolvers run in the dynamic loader, before the
// sanitizer's runtime has started, and an instrumented resolver crashes there (GCC 12, TSan).
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_ADDRESS__) && \
    !defined(__SANITIZE_THREAD__)
#define BLOCKSCALE_CLONES __attribute__((target_clones("arch=skylake-avx512", "avx2", "default")))
#else
#define BLOCKSCALE_CLONES
#endif

template <Rounding R, class Out>
inline void f32_loop(const detail::Target& target, const float* __restrict in, Out* __restrict out,
                     std::size_t n, const std::uint32_t* __restrict rbits) {
  // A local copy: stores through a uint8_t* may alias anything, and would otherwise force the
  // target's fields to be reloaded after every element, which stops vectorisation.
  const detail::Target t = target;
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t r = (R == Rounding::stochastic) ? rbits[i] : 0u;
    out[i] = static_cast<Out>(detail::convert_f32_bits<R>(t, std::bit_cast<std::uint32_t>(in[i]), r));
  }
}

// One clone set per output width; the rounding mode is a template parameter inside.
template <class Out>
BLOCKSCALE_CLONES void f32_to_codes(const detail::Target& t, const float* in, Out* out, std::size_t n,
                                    const std::uint32_t* rbits) {
  switch (t.rounding) {
    case Rounding::nearest_even: f32_loop<Rounding::nearest_even>(t, in, out, n, rbits); return;
    case Rounding::toward_zero: f32_loop<Rounding::toward_zero>(t, in, out, n, rbits); return;
    case Rounding::upward: f32_loop<Rounding::upward>(t, in, out, n, rbits); return;
    case Rounding::downward: f32_loop<Rounding::downward>(t, in, out, n, rbits); return;
    case Rounding::nearest_away: f32_loop<Rounding::nearest_away>(t, in, out, n, rbits); return;
    case Rounding::stochastic: f32_loop<Rounding::stochastic>(t, in, out, n, rbits); return;
  }
}

void check_sizes(std::size_t in, std::size_t out, std::size_t rbits, const detail::Target& t) {
  if (in != out) {
    throw std::invalid_argument("bulk conversion: input has " + std::to_string(in) + " elements, output has " +
                                std::to_string(out));
  }
  if (t.rounding == Rounding::stochastic && rbits != in) {
    throw std::invalid_argument("bulk stochastic rounding needs one random word per element: " +
                                std::to_string(in) + " elements, " + std::to_string(rbits) + " random words");
  }
  if (t.rounding != Rounding::stochastic && rbits != 0) {
    throw std::invalid_argument("random bits were given but the rounding mode is not stochastic");
  }
}

template <class Out>
void check_storage(Format f) {
  require_known(f, "bulk conversion");
  const int want = info(f).storage_bits;
  if (static_cast<int>(sizeof(Out) * 8) != want) {
    throw std::invalid_argument(to_string(f) + " codes are stored in " + std::to_string(want) +
                                "-bit words, but the output span has " + std::to_string(sizeof(Out) * 8) +
                                "-bit elements");
  }
}

std::atomic<int>& automatic_path_setting() {
  static std::atomic<int> setting = [] {
    const char* env = std::getenv("BLOCKSCALE_SIMD");
    const std::string v = env ? env : "auto";
    if (v == "portable") return static_cast<int>(detail::BulkPath::portable);
    if (v == "avx512") return static_cast<int>(detail::BulkPath::avx512);
    if (v != "auto" && !v.empty()) {
      throw std::invalid_argument("BLOCKSCALE_SIMD must be auto, avx512 or portable, got '" + v + "'");
    }
    return static_cast<int>(detail::BulkPath::automatic);
  }();
  return setting;
}

template <class Out>
void convert_f32_impl(detail::BulkPath path, std::span<const float> in, Format dst, std::span<Out> out,
                      const ConvertOptions& o, std::span<const std::uint32_t> rbits) {
  check_storage<Out>(dst);
  const detail::Target t = detail::make_target(dst, o);
  check_sizes(in.size(), out.size(), rbits.size(), t);
  if (path == detail::BulkPath::automatic) path = detail::automatic_path();
  bool done = false;
  if (path == detail::BulkPath::avx512 && !detail::avx512_available()) {
    throw std::runtime_error("the AVX-512 conversion path was requested but this CPU has no AVX-512");
  }
  if (path != detail::BulkPath::portable && detail::avx512_available()) {
    done = detail::f32_to_codes_avx512(t, in.data(), out.data(), in.size());
  }
  if (!done) f32_to_codes<Out>(t, in.data(), out.data(), in.size(), rbits.data());
  if (info(dst).code_shift) {
    for (Out& w : out) w = static_cast<Out>(to_storage(dst, w));
  }
}

template <class In, class Unpack>
void convert_generic(std::span<const In> in, std::span<std::uint8_t> out, const detail::Target& t,
                     std::span<const std::uint32_t> rbits, Unpack unpack) {
  check_sizes(in.size(), out.size(), rbits.size(), t);
  detail::dispatch_rounding(t.rounding, [&]<Rounding R>() {
    for (std::size_t i = 0; i < in.size(); ++i) {
      const std::uint32_t r = (R == Rounding::stochastic) ? rbits[i] : 0u;
      out[i] = static_cast<std::uint8_t>(detail::encode<R>(t, unpack(in[i]), r));
    }
  });
}

}  // namespace

void convert(std::span<const float> in, Format dst, std::span<std::uint8_t> out, const ConvertOptions& o,
             std::span<const std::uint32_t> rbits) {
  convert_f32_impl(detail::BulkPath::automatic, in, dst, out, o, rbits);
}
void convert(std::span<const float> in, Format dst, std::span<std::uint16_t> out, const ConvertOptions& o,
             std::span<const std::uint32_t> rbits) {
  convert_f32_impl(detail::BulkPath::automatic, in, dst, out, o, rbits);
}
void convert(std::span<const float> in, Format dst, std::span<std::uint32_t> out, const ConvertOptions& o,
             std::span<const std::uint32_t> rbits) {
  convert_f32_impl(detail::BulkPath::automatic, in, dst, out, o, rbits);
}

namespace detail {
void set_automatic_path(BulkPath p) { automatic_path_setting() = static_cast<int>(p); }
BulkPath automatic_path() { return static_cast<BulkPath>(automatic_path_setting().load()); }

void convert_f32(BulkPath path, std::span<const float> in, Format dst, std::span<std::uint8_t> out,
                 const ConvertOptions& o, std::span<const std::uint32_t> rbits) {
  convert_f32_impl(path, in, dst, out, o, rbits);
}
void convert_f32(BulkPath path, std::span<const float> in, Format dst, std::span<std::uint16_t> out,
                 const ConvertOptions& o, std::span<const std::uint32_t> rbits) {
  convert_f32_impl(path, in, dst, out, o, rbits);
}
void convert_f32(BulkPath path, std::span<const float> in, Format dst, std::span<std::uint32_t> out,
                 const ConvertOptions& o, std::span<const std::uint32_t> rbits) {
  convert_f32_impl(path, in, dst, out, o, rbits);
}
}  // namespace detail

void convert(std::span<const double> in, Format dst, std::span<std::uint8_t> out, const ConvertOptions& o,
             std::span<const std::uint32_t> rbits) {
  check_storage<std::uint8_t>(dst);
  const detail::Target t = detail::make_target(dst, o);
  convert_generic(in, out, t, rbits, [](double x) { return detail::unpack(x); });
}

void convert(Format src, std::span<const std::uint8_t> in, Format dst, std::span<std::uint8_t> out,
             const ConvertOptions& o, std::span<const std::uint32_t> rbits) {
  check_storage<std::uint8_t>(src);
  check_storage<std::uint8_t>(dst);
  const detail::Target t = detail::make_target(dst, o);
  if (t.rounding != Rounding::stochastic) {
    // 256 possible inputs: convert each once.
    check_sizes(in.size(), out.size(), rbits.size(), t);
    std::array<std::uint8_t, 256> table{};
    detail::dispatch_rounding(t.rounding, [&]<Rounding R>() {
      for (std::uint32_t c = 0; c < 256; ++c) {
        table[c] = static_cast<std::uint8_t>(detail::encode<R>(t, detail::unpack(src, c), 0));
      }
    });
    for (std::size_t i = 0; i < in.size(); ++i) out[i] = table[in[i]];
    return;
  }
  convert_generic(in, out, t, rbits, [src](std::uint8_t c) { return detail::unpack(src, c); });
}

void convert(Format src, std::span<const std::uint16_t> in, Format dst, std::span<std::uint8_t> out,
             const ConvertOptions& o, std::span<const std::uint32_t> rbits) {
  check_storage<std::uint16_t>(src);
  check_storage<std::uint8_t>(dst);
  const detail::Target t = detail::make_target(dst, o);
  convert_generic(in, out, t, rbits, [src](std::uint16_t c) { return detail::unpack(src, c); });
}

namespace {

template <class In>
void decode_span(Format src, std::span<const In> in, std::span<float> out) {
  check_storage<In>(src);
  if (in.size() != out.size()) {
    throw std::invalid_argument("decode: input has " + std::to_string(in.size()) + " codes, output has " +
                                std::to_string(out.size()));
  }
  if constexpr (sizeof(In) == 1) {
    std::array<float, 256> table{};
    for (std::uint32_t c = 0; c < 256; ++c) table[c] = to_float(src, c);
    for (std::size_t i = 0; i < in.size(); ++i) out[i] = table[in[i]];
  } else {
    for (std::size_t i = 0; i < in.size(); ++i) out[i] = to_float(src, from_storage(src, in[i]));
  }
}

}  // namespace

void decode(Format src, std::span<const std::uint8_t> in, std::span<float> out) { decode_span(src, in, out); }
void decode(Format src, std::span<const std::uint16_t> in, std::span<float> out) { decode_span(src, in, out); }
void decode(Format src, std::span<const std::uint32_t> in, std::span<float> out) { decode_span(src, in, out); }

}  // namespace blockscale
