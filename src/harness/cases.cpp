// SPDX-License-Identifier: Apache-2.0
#include "blockscale/harness/cases.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <exception>
#include <limits>
#include <stdexcept>
#include <vector>

#include "blockscale/emulator/mma.h"
#include "blockscale/formats/convert.h"
#include "blockscale/formats/detail/enum_check.h"
#include "blockscale/formats/detail/ieee_mode.h"
#include "blockscale/harness/probes.h"
#include "blockscale/quantize/block.h"
#include "blockscale/quantize/block_format.h"
#include "blockscale/quantize/options.h"

namespace blockscale::harness {

std::string to_string(DataKind d) {
  switch (d) {
    case DataKind::random: return "random";
    case DataKind::realistic: return "realistic";
    case DataKind::probes: return "probes";
    case DataKind::tiny: return "tiny";
  }
  return "?";
}

std::optional<DataKind> parse_data_kind(std::string_view s) {
  for (DataKind d : {DataKind::random, DataKind::realistic, DataKind::probes, DataKind::tiny})
    if (s == to_string(d)) return d;
  return std::nullopt;
}

double Rng::gaussian() {
  const double u1 = 1.0 - uniform(), u2 = uniform();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}

std::uint64_t case_seed(std::uint64_t seed, std::string_view target, DataKind data, std::uint64_t index) {
  blockscale::detail::require_enumerator(data, DataKind::tiny, "DataKind", "the data set");
  // FNV-1a over the name, then splitmix rounds over (seed, name hash, data set, index).
  std::uint64_t h = 0xCBF29CE484222325ull;
  for (char ch : target) h = (h ^ static_cast<unsigned char>(ch)) * 0x100000001B3ull;
  Rng r(seed);
  std::uint64_t s = r.next() ^ h;
  s = Rng(s).next() ^ (static_cast<std::uint64_t>(data) + 1) * 0xD6E8FEB86659FD93ull;
  return Rng(s).next() ^ index * 0x9E3779B97F4A7C15ull;
}

namespace {

double pow2(int e) { return std::ldexp(1.0, e); }

// ---- Codes of one format, as the word an operand array holds (tf32: fp32 words).

std::uint32_t word(Format f, std::uint32_t code) { return to_storage(f, code); }

bool finite_word(Format f, std::uint32_t w) {
  if (f == Format::tfloat32 || f == Format::float32) return ((w >> 23) & 0xFFu) != 0xFFu;
  const ValueClass c = classify(f, w);
  return c != ValueClass::nan && c != ValueClass::infinite;
}

std::uint32_t random_word(Format f, Rng& r) {
  if (f == Format::tfloat32 || f == Format::float32) return static_cast<std::uint32_t>(r.next());
  return static_cast<std::uint32_t>(r.next() >> 40) & code_mask(f);
}

std::uint32_t random_finite_word(Format f, Rng& r) {
  for (;;) {
    const std::uint32_t w = random_word(f, r);
    if (finite_word(f, w)) return w;
  }
}

// The codes that hold each format's corner cases: +-0, the smallest and largest subnormal, the
// smallest normal, +-1, the largest finite value, +-Inf and NaNs (with other payloads, and the
// negative ones), as operand words.
std::vector<std::uint32_t> special_words(Format f) {
  std::vector<std::uint32_t> v;
  const auto& fi = info(f);
  const std::uint32_t sign = sign_mask(f);
  std::vector<std::uint32_t> mags = {0u, max_finite_code(f)};
  if (fi.has_subnormals) {
    mags.push_back(1u);
    mags.push_back((1u << fi.mantissa_bits) - 1u);
    mags.push_back(1u << fi.mantissa_bits);
  }
  if (const auto one = exact_code(f, 1.0)) mags.push_back(from_storage(f, *one));
  if (has_inf(f)) mags.push_back(inf_code(f));
  if (has_nan(f)) {
    mags.push_back(quiet_nan_code(f));
    mags.push_back(magnitude_mask(f));
    if (has_inf(f)) mags.push_back(inf_code(f) | 1u);
  }
  for (std::uint32_t m : mags) {
    v.push_back(word(f, m));
    v.push_back(word(f, m | sign));
  }
  return v;
}

// A finite code with its exponent field in [lo, lo + 3] (a narrow window: every term aligns
// within a few binades, so truncation happens right at the F boundary).
std::uint32_t window_word(Format f, int lo, Rng& r) {
  const auto& fi = info(f);
  const int fields = max_exponent_field(f);
  for (;;) {
    const int e = std::clamp(lo + static_cast<int>(r.below(4)), fi.has_subnormals ? 0 : 1, fields);
    const std::uint32_t sign = r.below(2) ? sign_mask(f) : 0u;
    const std::uint32_t mantissa = static_cast<std::uint32_t>(r.next() >> 40) & ((1u << fi.mantissa_bits) - 1u);
    const std::uint32_t code = sign | (static_cast<std::uint32_t>(e) << fi.mantissa_bits) | mantissa;
    const std::uint32_t w = word(f, code);
    if (finite_word(f, w)) return w;
  }
}

std::uint32_t value_word(Format f, double v) {
  if (f == Format::float32) return std::bit_cast<std::uint32_t>(static_cast<float>(v));
  ConvertOptions o;
  o.rounding = Rounding::nearest_even;
  o.overflow = Overflow::saturate;
  return word(f, convert(f, v, o));
}

// ---- Tiny products (DataKind::tiny).

// A value of either sign in the format's range for the tiny set: 2^-85 .. 2^-70 for the formats that
// reach it (bf16, tf32 and fp32: products of 2^-170 .. 2^-139, below the floor of -133), else one
// of the format's 16 lowest binades (below its largest).
std::uint32_t tiny_word(Format f, Rng& r) {
  const bool wide = f == Format::bfloat16 || f == Format::tfloat32 || f == Format::float32;
  const int lowest = wide ? -85 : emin(f) - info(f).mantissa_bits;
  const int span = std::min(16, emax(f) - lowest + 1);
  const double v = std::ldexp(1.0 + r.uniform(), lowest + static_cast<int>(r.below(static_cast<std::uint32_t>(span))));
  return value_word(f, r.below(2) ? -v : v);
}

// A block scale near the bottom of its range: e8m0 2^-127 .. 2^-88, ue4m3 its subnormals and
// smallest normals (bit 7 random: the instructions ignore it).
std::uint8_t tiny_scale(Format scale, Rng& r) {
  if (scale == Format::float8_e8m0fnu) return static_cast<std::uint8_t>(r.below(40));
  return static_cast<std::uint8_t>((1 + r.below(0x17)) | (r.below(2) << 7));
}

// C of the tiny set: +0 where `zero` (three tiles, or GEMM outputs, of four: e_max is then the zero
// floor when every product is below it), else a small value of either sign (fp32: 2^-149 .. 2^-120;
// f16: 2^-24 .. 2^5, from its subnormals up).
std::uint32_t tiny_c(Format acc, Rng& r, bool zero) {
  if (zero) return 0u;
  const int lowest = acc == Format::float16 ? -24 : -149;
  const double v = std::ldexp(1.0 + r.uniform(), lowest + static_cast<int>(r.below(30)));
  return value_word(acc, r.below(2) ? -v : v);
}

void tiny_tile(const InstructionTarget& t, Rng& r, std::uint64_t tile, std::uint32_t* a, std::uint32_t* b,
               std::uint32_t* c, std::uint8_t* sa, std::uint8_t* sb) {
  for (std::size_t i = 0; i < a_words(t); ++i) a[i] = tiny_word(t.a, r);
  for (std::size_t i = 0; i < b_words(t); ++i) b[i] = tiny_word(t.b, r);
  for (std::size_t i = 0; i < c_words(t); ++i) c[i] = tiny_c(t.acc, r, tile % 4 != 3);
  for (std::size_t i = 0; i < scale_words(t, t.m); ++i) sa[i] = tiny_scale(t.scale, r);
  for (std::size_t i = 0; i < scale_words(t, t.n); ++i) sb[i] = tiny_scale(t.scale, r);
}

// ---- Random bit-pattern tiles.

void random_tile(const InstructionTarget& t, Rng& r, std::uint64_t tile, std::uint32_t* a, std::uint32_t* b,
                 std::uint32_t* c, std::uint8_t* sa, std::uint8_t* sb) {
  const std::size_t na = a_words(t), nb = b_words(t), nc = c_words(t);
  const std::size_t nsa = scale_words(t, t.m), nsb = scale_words(t, t.n);
  const int profile = static_cast<int>(tile % 8);
  const std::vector<std::uint32_t> sp_a = special_words(t.a), sp_b = special_words(t.b), sp_c = special_words(t.acc);
  const auto pick = [&](const std::vector<std::uint32_t>& v) { return v[r.below(static_cast<std::uint32_t>(v.size()))]; };
  const int fields_a = max_exponent_field(t.a), fields_b = max_exponent_field(t.b);
  const int lo_a = static_cast<int>(r.below(static_cast<std::uint32_t>(std::max(1, fields_a - 2))));
  const int lo_b = static_cast<int>(r.below(static_cast<std::uint32_t>(std::max(1, fields_b - 2))));
  auto element = [&](Format f, const std::vector<std::uint32_t>& sp, int lo, std::size_t idx) -> std::uint32_t {
    switch (profile) {
      case 0: return random_word(f, r);                                   // uniform bits, specials included
      case 2: return window_word(f, lo, r);                               // narrow exponent window
      case 3: return r.below(32) == 0 ? pick(sp) : random_finite_word(f, r);  // specials sprinkled
      case 5: {  // near overflow
        if (r.below(4) == 0) return random_finite_word(f, r);
        const std::uint32_t magnitude = word(f, max_finite_code(f) - r.below(4));
        return magnitude | (r.below(2) ? word(f, sign_mask(f)) : 0u);
      }
      case 6: {
        const std::uint32_t sign = r.below(2) ? sign_mask(f) : 0u;
        return word(f, sign | static_cast<std::uint32_t>(r.below(1u << std::min(info(f).mantissa_bits + 1, 12))));
      }
      default: (void)idx; return random_finite_word(f, r);
    }
  };
  for (std::size_t i = 0; i < na; ++i) a[i] = element(t.a, sp_a, lo_a, i);
  for (std::size_t i = 0; i < nb; ++i) b[i] = element(t.b, sp_b, lo_b, i);
  if (profile == 4) {
    // Cancelling pairs: in every A row, odd k negates k - 1, and B repeats its value, so pairs of
    // products cancel exactly and only what truncation leaves of the rest shows.
    for (int i = 0; i < t.m; ++i)
      for (int k = 1; k < t.k; k += 2) {
        const std::size_t at = std::size_t(i) * t.k + k;
        if (r.below(4)) a[at] = a[at - 1] ^ word(t.a, sign_mask(t.a));
      }
    for (int j = 0; j < t.n; ++j)
      for (int k = 1; k < t.k; k += 2) b[std::size_t(j) * t.k + k] = b[std::size_t(j) * t.k + k - 1];
  }
  for (std::size_t i = 0; i < nc; ++i) {
    switch (profile) {
      case 0: c[i] = random_word(t.acc, r); break;
      case 1:
      case 6: c[i] = r.below(4) ? 0u : word(t.acc, sign_mask(t.acc)) * (r.below(2)); break;
      case 3: c[i] = r.below(16) == 0 ? pick(sp_c) : random_finite_word(t.acc, r); break;
      default: {
        // Magnitudes that overlap the products' (2^-20 .. 2^20), where C's alignment shows.
        const int e = static_cast<int>(r.below(41)) - 20;
        const double mag = std::ldexp(1.0 + r.uniform(), e);
        c[i] = value_word(t.acc, r.below(2) ? -mag : mag);
      }
    }
  }
  for (std::size_t i = 0; i < nsa + nsb; ++i) {
    std::uint8_t s;
    if (t.scale == Format::float8_e8m0fnu) {
      const std::uint32_t u = r.below(64);
      s = u == 0 ? static_cast<std::uint8_t>(r.below(256))                    // any code, NaN 0xFF included
          : u == 1 ? static_cast<std::uint8_t>(r.below(2) ? 0 : 254)          // the extremes
                   : static_cast<std::uint8_t>(127 + static_cast<int>(r.below(41)) - 20);
    } else {
      const std::uint32_t u = r.below(64);
      s = u == 0 ? static_cast<std::uint8_t>(r.below(256)) : static_cast<std::uint8_t>(1 + r.below(0x7E));
      if (r.below(8) == 0) s |= 0x80;  // bit 7 is ignored by the hardware (numerics.md b.5)
    }
    if (i < nsa) {
      sa[i] = s;
    } else {
      sb[i - nsa] = s;
    }
  }
}

// ---- Realistic tiles: values shaped like activations and weights, quantized by a scale rule.

constexpr std::array<ScaleRule, 6> kE8m0Rules = {ScaleRule::ocp_floor,       ScaleRule::ceil,
                                                 ScaleRule::even,            ScaleRule::rceil,
                                                 ScaleRule::triton_round_up, ScaleRule::triton_round_down};
constexpr std::array<ScaleRule, 2> kUe4m3Rules = {ScaleRule::nvfp4_transformer_engine, ScaleRule::nvfp4_torchao};

bool quantized_element(Format f) { return width(f) <= 8; }

double draw(int profile, Rng& r) {
  switch (profile) {
    case 1: {  // heavy-tailed
      const double g = r.gaussian();
      return g / std::max(r.uniform(), 0.02);
    }
    case 2: {  // rare outliers
      const double g = r.gaussian();
      return g + (r.below(100) == 0 ? 10.0 * r.gaussian() : 0.0);
    }
    case 3: return std::fabs(r.gaussian());                                                 // one-signed
    default: return r.gaussian();
  }
}

// Quantizes rows of `count` values (K each) into element codes (and block scale codes) with one
// scale rule: the block format is the target's (block-scaled kinds) or MX-style block 32 with
// e8m0 (the element codes of an MXFP8/MXFP6/MXFP4 tensor, whatever instruction reads them).
void quantize_rows(Format element, Format scale, int block, ScaleRule rule, const std::vector<float>& x, int rows,
                   int k, std::uint32_t* codes, std::uint8_t* scales) {
  const BlockFormat bf{element, scale, block};
  QuantizeOptions o;
  o.rule = rule;
  const TensorScale ts = tensor_scale_for(bf, o, x);
  std::vector<std::uint8_t> q(static_cast<std::size_t>(block));
  const int blocks = k / block;
  for (int i = 0; i < rows; ++i)
    for (int bk = 0; bk < blocks; ++bk) {
      const std::span<const float> xs(&x[std::size_t(i) * k + std::size_t(bk) * block], static_cast<std::size_t>(block));
      const std::uint8_t sc = quantize_block(xs, bf, o, ts, q);
      if (scales) scales[std::size_t(i) * blocks + bk] = sc;
      for (int j = 0; j < block; ++j) codes[std::size_t(i) * k + std::size_t(bk) * block + j] = q[std::size_t(j)];
    }
}

void realistic_operand(const InstructionTarget& t, Format f, int rows, Rng& r, std::uint64_t tile, std::uint32_t* codes,
                       std::uint8_t* scales, double& sigma) {
  const int profile = static_cast<int>(tile % 5);
  const int s = static_cast<int>(r.below(13)) - 6;
  sigma = pow2(s);
  std::vector<float> x(std::size_t(rows) * t.k);
  for (int i = 0; i < rows; ++i) {
    const double row_scale = profile == 4 ? pow2(static_cast<int>(r.below(21)) - 10) : 1.0;
    for (int k = 0; k < t.k; ++k) x[std::size_t(i) * t.k + k] = static_cast<float>(draw(profile, r) * row_scale * sigma);
  }
  if (quantized_element(f)) {
    const bool nvfp4 = t.block_scaled && t.scale == Format::float8_ue4m3;
    const int block = t.block_scaled ? t.block : 32;
    const Format sf = t.block_scaled ? t.scale : Format::float8_e8m0fnu;
    const ScaleRule rule = nvfp4 ? kUe4m3Rules[tile / 5 % kUe4m3Rules.size()] : kE8m0Rules[tile / 5 % kE8m0Rules.size()];
    std::vector<std::uint8_t> sc(std::size_t(rows) * (t.k / block));
    quantize_rows(f, sf, block, rule, x, rows, t.k, codes, sc.data());
    if (t.block_scaled) std::copy(sc.begin(), sc.end(), scales);
    return;
  }
  // f16 / bf16 / tf32: the value rounded to the format; one tile in four hands tf32 operands the
  // raw fp32 word (the instruction truncates its low 13 bits, numerics.md b.1).
  const bool raw = f == Format::tfloat32 && tile % 4 == 1;
  for (std::size_t i = 0; i < x.size(); ++i) {
    codes[i] = raw ? std::bit_cast<std::uint32_t>(x[i]) : value_word(f, x[i]);
  }
}

void realistic_tile(const InstructionTarget& t, Rng& r, std::uint64_t tile, std::uint32_t* a, std::uint32_t* b,
                    std::uint32_t* c, std::uint8_t* sa, std::uint8_t* sb) {
  double sig_a = 1, sig_b = 1;
  realistic_operand(t, t.a, t.m, r, tile, a, sa, sig_a);
  realistic_operand(t, t.b, t.n, r, tile + 1, b, sb, sig_b);
  const bool zero_c = tile % 4 == 3;
  for (std::size_t i = 0; i < c_words(t); ++i) {
    c[i] = zero_c ? 0u : value_word(t.acc, r.gaussian() * sig_a * sig_b * std::sqrt(double(t.k)));
  }
}

// ---- f64 tiles (the DMMA rows' fma chain, numerics.md (a)): doubles, two words each.

// Structured tiles of the probes data set (before repeats, as probe_set's tiles for the other rows).
constexpr std::size_t kF64ProbeTiles = 512;

// A normal double of exponent e (-1022..1023) with a random significand and sign.
double f64_normal(Rng& r, int e) {
  const std::uint64_t bits = (static_cast<std::uint64_t>(e + 1023) << 52) | (r.next() & 0x000FFFFFFFFFFFFFull) |
                             (r.next() & (std::uint64_t{1} << 63));
  return std::bit_cast<double>(bits);
}
double f64_in(Rng& r, int lo, int hi) {
  return f64_normal(r, lo + static_cast<int>(r.below(static_cast<std::uint32_t>(hi - lo + 1))));
}
// A NaN of random sign and payload, quiet or signalling (a signalling NaN needs a nonzero payload
// below the quiet bit), so that tiles with two or three NaNs in one fma show whose payload DMMA keeps.
double f64_nan(Rng& r) {
  constexpr std::uint64_t exponent = 0x7FF0000000000000ull, quiet = 1ull << 51, payload = quiet - 1;
  // One draw per statement: the operands of | are unsequenced, and the data must not depend on the
  // compiler's order.
  const std::uint64_t low = (r.next() & payload) | 1u;
  const std::uint64_t sign = r.next() & (std::uint64_t{1} << 63);
  const std::uint64_t quiet_bit = r.below(2) ? quiet : 0;
  return std::bit_cast<double>(sign | exponent | quiet_bit | low);
}
double f64_special(Rng& r) {
  if (r.below(8) == 0) return f64_nan(r);
  constexpr double kSpecial[] = {0.0,
                                 std::numeric_limits<double>::infinity(),
                                 std::numeric_limits<double>::max(),
                                 std::numeric_limits<double>::min(),
                                 std::numeric_limits<double>::denorm_min(),
                                 0x1.FFFFFFFFFFFFFp-1023,  // the largest subnormal
                                 1.0};
  const double v = kSpecial[r.below(static_cast<std::uint32_t>(std::size(kSpecial)))];
  return r.below(2) ? -v : v;
}

void f64_tile(const InstructionTarget& t, DataKind data, Rng& r, std::uint64_t tile, std::uint32_t* a_words,
              std::uint32_t* b_words, std::uint32_t* c_words) {
  const int M = t.m, N = t.n, K = t.k;
  std::vector<double> a(std::size_t(M) * K), b(std::size_t(N) * K), c(std::size_t(M) * N);  // b: B^T rows
  const auto each = [](std::vector<double>& v, auto&& f) {
    for (double& x : v) x = f();
  };
  if (data == DataKind::realistic) {
    // Gaussian rows and columns at scales 2^-8 .. 2^8; C of the size of the sum (zero in a quarter).
    const int sa = static_cast<int>(r.below(17)) - 8, sb = static_cast<int>(r.below(17)) - 8;
    each(a, [&] { return std::ldexp(r.gaussian(), sa); });
    each(b, [&] { return std::ldexp(r.gaussian(), sb); });
    const bool zero_c = tile % 4 == 3;
    each(c, [&] { return zero_c ? 0.0 : std::ldexp(r.gaussian() * std::sqrt(double(K)), sa + sb); });
  } else if (data == DataKind::tiny) {
    // Products at 2^-1120 .. 2^-1000: below and around the subnormal boundary 2^-1022, where a DMMA
    // that flushed or lost its subnormals would show; C = +0 but in every fourth tile.
    each(a, [&] { return f64_in(r, -560, -500); });
    each(b, [&] { return f64_in(r, -560, -500); });
    each(c, [&] { return tile % 4 != 3 ? 0.0 : std::bit_cast<double>(r.next() & 0x800FFFFFFFFFFFFFull); });
  } else {
    // random: eight profiles by tile; probes: the structured ones (order, specials, overflow, zeros).
    const int profile = data == DataKind::probes ? static_cast<int>(std::array{6, 3, 4, 8}[tile % 4])
                                                 : static_cast<int>(tile % 8);
    const int lo = static_cast<int>(r.below(401)) - 200;
    switch (profile) {
      case 0:  // uniform bits: NaN, Inf, subnormals and all exponents
        each(a, [&] { return std::bit_cast<double>(r.next()); });
        each(b, [&] { return std::bit_cast<double>(r.next()); });
        each(c, [&] { return std::bit_cast<double>(r.next()); });
        break;
      case 1:  // a narrow exponent window: products and C of one size, a rounding in every step
      case 2:  // the same with cancelling pairs: odd k negates k - 1 in A, B repeats its value
      case 7:
        each(a, [&] { return f64_in(r, lo, lo + 3); });
        each(b, [&] { return f64_in(r, lo, lo + 3); });
        each(c, [&] { return f64_in(r, 2 * lo - 2, 2 * lo + 8); });
        if (profile == 2) {
          for (int i = 0; i < M; ++i)
            for (int k = 1; k < K; k += 2)
              if (r.below(4)) a[std::size_t(i) * K + k] = -a[std::size_t(i) * K + k - 1];
          for (int j = 0; j < N; ++j)
            for (int k = 1; k < K; k += 2) b[std::size_t(j) * K + k] = b[std::size_t(j) * K + k - 1];
        }
        if (profile == 7) each(c, [&] { return f64_in(r, -60, 60); });  // C far from the products too
        break;
      case 3:  // special values sprinkled into window data (and, as probes, everywhere)
        each(a, [&] { return r.below(data == DataKind::probes ? 2 : 16) == 0 ? f64_special(r) : f64_in(r, -4, 4); });
        each(b, [&] { return r.below(data == DataKind::probes ? 2 : 16) == 0 ? f64_special(r) : f64_in(r, -4, 4); });
        each(c, [&] { return r.below(4) == 0 ? f64_special(r) : f64_in(r, -8, 8); });
        break;
      case 4:  // near overflow: products near 2^1023, so that a partial sum overflows, or does not
        each(a, [&] { return f64_in(r, 510, 512); });
        each(b, [&] { return f64_in(r, 510, 512); });
        each(c, [&] { return r.below(2) ? f64_in(r, 1020, 1023) : 0.0; });
        break;
      case 5:  // subnormal sums: products just above and below 2^-1022
        each(a, [&] { return f64_in(r, -520, -505); });
        each(b, [&] { return f64_in(r, -520, -505); });
        each(c, [&] { return std::bit_cast<double>(r.next() & 0x800FFFFFFFFFFFFFull); });
        break;
      case 6: {
        // Order probes: C = +-2^e per row and products that are small multiples of C's ulp (1/16
        // to 24 of them: fractions 1/2, 1/4, 3/4, 1, 3/2 of the ulp times B's 2^-4 .. 2^4), so that
        // a chain of fmas in k order, a tree, one rounding of the exact sum or any other order
        // round differently (ties and sticky bits in most outputs).
        constexpr double kFractions[] = {0.5, 0.25, 0.75, 1.0, 1.5, 0.5 + 0x1p-30};
        each(b, [&] { return std::ldexp(1.0, static_cast<int>(r.below(9)) - 4); });
        for (int i = 0; i < M; ++i) {
          const int e = static_cast<int>(r.below(41)) - 20;
          for (int k = 0; k < K; ++k) {
            const double p = kFractions[r.below(6)] * std::ldexp(1.0, e - 52);
            a[std::size_t(i) * K + k] = r.below(2) ? -p : p;
          }
          for (int j = 0; j < N; ++j) c[std::size_t(i) * N + j] = r.below(2) ? -std::ldexp(1.0, e) : std::ldexp(1.0, e);
        }
        break;
      }
      default:  // zeros of both signs: every product +-0, C +-0 or not
        each(a, [&] { return r.below(2) ? -0.0 : 0.0; });
        each(b, [&] { return r.below(4) == 0 ? f64_in(r, -4, 4) : (r.below(2) ? -0.0 : 0.0); });
        each(c, [&] { return r.below(4) == 0 ? f64_in(r, -4, 4) : (r.below(2) ? -0.0 : 0.0); });
        break;
    }
  }
  for (std::size_t i = 0; i < a.size(); ++i) put_f64_bits(&a_words[2 * i], std::bit_cast<std::uint64_t>(a[i]));
  for (std::size_t i = 0; i < b.size(); ++i) put_f64_bits(&b_words[2 * i], std::bit_cast<std::uint64_t>(b[i]));
  for (std::size_t i = 0; i < c.size(); ++i) put_f64_bits(&c_words[2 * i], std::bit_cast<std::uint64_t>(c[i]));
}

// ---- Sparse targets (mma.sp, wgmma.sp): A's stored values, their positions, the whole of B.

// The dense form of a sparse target (K/2, emulator::Instruction::dense_form), named like the
// sparse target so that its tiles draw from the sparse target's streams.
InstructionTarget dense_form_target(const InstructionTarget& t) {
  InstructionTarget d = instruction_target(t.model.dense_form().name());
  d.name = t.name;
  return d;
}

// The same target read densely over its logical K (A: m x k): the data sets' generators fill it,
// and prune_tiles keeps half of each row.
InstructionTarget logical_target(const InstructionTarget& t) {
  InstructionTarget d = t;
  d.sparse = false;
  d.group = 0;
  return d;
}

// |value| of an operand word for magnitude pruning (tf32: the fp32 word; NaN ranks with Inf, which
// keeps the sort's order total).
double magnitude(Format f, std::uint32_t w) {
  const double v = f == Format::tfloat32 ? double(std::bit_cast<float>(w)) : to_double(f, w);
  return std::isnan(v) ? std::numeric_limits<double>::infinity() : std::fabs(v);
}

// Positions of the stored values of one group: 2:4 one of the six increasing pairs, tf32 1:2
// either position (PTX ISA 9.7.14.6.1; ::ordered_metadata requires increasing indices).
void draw_positions(const InstructionTarget& t, Rng& r, std::uint8_t* pos) {
  if (t.group == 2) {
    pos[0] = static_cast<std::uint8_t>(r.below(2));
  } else {
    const auto& pair = emulator::kOrderedPairs[r.below(6)];
    pos[0] = pair[0];
    pos[1] = pair[1];
  }
}

// The stream of a tile's sparsity pattern, apart from the stream of its values.
Rng positions_rng(const InstructionTarget& t, DataKind data, std::uint64_t seed, std::uint64_t tile) {
  return Rng(case_seed(seed, t.name + " positions", data, tile));
}

// Dense tiles of the logical K pruned to the target's pattern. realistic data is pruned by
// magnitude, as sparse weights are (the largest |A| of each group kept, the lower position on a
// tie; NVIDIA ASP's 2:4 rule); the other data sets keep positions drawn at random, so every
// pattern occurs. B and C are the dense tile's.
TileBatch prune_tiles(const InstructionTarget& t, DataKind data, std::uint64_t seed, std::size_t first,
                      const TileBatch& dense) {
  TileBatch out = make_batch(t, dense.tiles);
  out.b = dense.b;
  out.c = dense.c;
  const std::size_t K = static_cast<std::size_t>(t.k), S = stored_k(t), group = static_cast<std::size_t>(t.group);
  const std::size_t per_group = group / 2, M = static_cast<std::size_t>(t.m);
  for (std::size_t g = 0; g < dense.tiles; ++g) {
    Rng r = positions_rng(t, data, seed, first + g);
    for (std::size_t i = 0; i < M; ++i) {
      const std::uint32_t* row = &dense.a[(g * M + i) * K];
      std::uint8_t* pos = &out.a_index[(g * M + i) * S];
      for (std::size_t q = 0; q < K / group; ++q) {
        std::uint8_t* p = pos + q * per_group;
        if (data == DataKind::realistic) {
          // Position x is kept when fewer than per_group others outrank it (larger, or as large
          // and lower); the kept positions come out in increasing order.
          std::size_t kept = 0;
          for (std::size_t x = 0; x < group; ++x) {
            const double mx = magnitude(t.a, row[q * group + x]);
            std::size_t above = 0;
            for (std::size_t y = 0; y < group; ++y) {
              const double my = magnitude(t.a, row[q * group + y]);
              above += my > mx || (my == mx && y < x);
            }
            if (above < per_group) p[kept++] = static_cast<std::uint8_t>(x);
          }
        } else {
          draw_positions(t, r, p);
        }
        for (std::size_t s = 0; s < per_group; ++s) out.a[(g * M + i) * S + q * per_group + s] = row[q * group + p[s]];
      }
    }
  }
  return out;
}

// The dense form's probe set, spread over K: the positions are drawn per dot (every row and column
// that holds dot d, pack_dots, uses the same ones, so each copy of a probe on the diagonal stays the
// probe); B column j holds its dot's B codes at the selected positions and random codes of every
// class, NaN and Inf included, at the pruned ones, which must take no part.
TileBatch sparse_probe_tiles(const InstructionTarget& t, std::uint64_t seed, std::size_t first, std::size_t count) {
  const InstructionTarget dense = dense_form_target(t);
  const TileBatch base = make_tiles(dense, DataKind::probes, seed, first, count);
  TileBatch out = make_batch(t, count);
  out.a = base.a;
  out.c = base.c;
  const std::size_t K = static_cast<std::size_t>(t.k), S = stored_k(t), group = static_cast<std::size_t>(t.group);
  const std::size_t per_group = group / 2, M = static_cast<std::size_t>(t.m), N = static_cast<std::size_t>(t.n);
  const std::size_t dots = dots_per_tile(dense);
  std::vector<std::uint8_t> pos(dots * S);
  for (std::size_t g = 0; g < count; ++g) {
    Rng r = positions_rng(t, DataKind::probes, seed, first + g);
    for (std::size_t q = 0; q < dots * (K / group); ++q) draw_positions(t, r, &pos[q * per_group]);
    for (std::size_t i = 0; i < M; ++i)
      std::copy_n(&pos[(i % dots) * S], S, &out.a_index[(g * M + i) * S]);
    for (std::size_t j = 0; j < N; ++j) {
      std::uint32_t* col = &out.b[(g * N + j) * K];
      for (std::size_t k = 0; k < K; ++k) col[k] = random_word(t.b, r);
      const std::uint8_t* p = &pos[(j % dots) * S];
      for (std::size_t s = 0; s < S; ++s) col[s / per_group * group + p[s]] = base.b[(g * N + j) * S + s];
    }
  }
  return out;
}

}  // namespace

std::size_t probe_tiles(const InstructionTarget& t) {
  if (t.f64) return kF64ProbeTiles;
  if (t.sparse) return probe_tiles(dense_form_target(t));
  const std::size_t dots = probe_set(t).size();
  return (dots + dots_per_tile(t) - 1) / dots_per_tile(t);
}

TileBatch make_tiles(const InstructionTarget& t, DataKind data, std::uint64_t seed, std::size_t first,
                     std::size_t count) {
  const blockscale::detail::IeeeMode ieee;
  if (t.sparse) {
    if (data == DataKind::probes) return sparse_probe_tiles(t, seed, first, count);
    return prune_tiles(t, data, seed, first, make_tiles(logical_target(t), data, seed, first, count));
  }
  TileBatch batch = make_batch(t, count);
  const std::size_t na = a_words(t), nb = b_words(t), nc = c_words(t);
  const std::size_t nsa = scale_words(t, t.m), nsb = scale_words(t, t.n);
  if (t.f64) {  // every data set from f64_tile, tile by tile (the probes need no finite base set)
    for (std::size_t g = 0; g < count; ++g) {
      Rng r(case_seed(seed, t.name, data, first + g));
      f64_tile(t, data, r, first + g, &batch.a[g * na], &batch.b[g * nb], &batch.c[g * nc]);
    }
    return batch;
  }
  if (data == DataKind::probes) {
    // The probe set, then repeats of it with every C and product sign flipped at random per tile
    // (still probes of the same boundaries, from the other side).
    const std::vector<DotCase> dots = probe_set(t);
    const TileBatch base = pack_dots(t, dots);
    for (std::size_t g = 0; g < count; ++g) {
      const std::size_t src = (first + g) % base.tiles;
      const bool repeat = first + g >= base.tiles;
      Rng r(case_seed(seed, t.name, data, first + g));
      for (std::size_t i = 0; i < na; ++i) batch.a[g * na + i] = base.a[src * na + i];
      for (std::size_t i = 0; i < nb; ++i) batch.b[g * nb + i] = base.b[src * nb + i];
      for (std::size_t i = 0; i < nc; ++i) batch.c[g * nc + i] = base.c[src * nc + i];
      for (std::size_t i = 0; i < nsa; ++i) batch.sfa[g * nsa + i] = base.sfa[src * nsa + i];
      for (std::size_t i = 0; i < nsb; ++i) batch.sfb[g * nsb + i] = base.sfb[src * nsb + i];
      if (repeat && r.below(2)) {
        for (std::size_t i = 0; i < na; ++i) batch.a[g * na + i] ^= word(t.a, sign_mask(t.a));
        for (std::size_t i = 0; i < nc; ++i) batch.c[g * nc + i] ^= word(t.acc, sign_mask(t.acc));
      }
    }
    return batch;
  }
  std::exception_ptr error;
  const auto n = static_cast<std::ptrdiff_t>(count);
#pragma omp parallel for schedule(dynamic, 8)
  for (std::ptrdiff_t gi = 0; gi < n; ++gi) {
    // The data are drawn with host float arithmetic (subnormals among them): in IEEE mode on each
    // thread, whatever the caller's (formats/detail/ieee_mode.h).
    const blockscale::detail::IeeeMode thread_ieee;
    const auto g = static_cast<std::size_t>(gi);
    try {
      Rng r(case_seed(seed, t.name, data, first + g));
      std::uint32_t* a = &batch.a[g * na];
      std::uint32_t* b = &batch.b[g * nb];
      std::uint32_t* c = &batch.c[g * nc];
      std::uint8_t* sa = nsa ? &batch.sfa[g * nsa] : nullptr;
      std::uint8_t* sb = nsb ? &batch.sfb[g * nsb] : nullptr;
      if (data == DataKind::random) {
        random_tile(t, r, first + g, a, b, c, sa, sb);
      } else if (data == DataKind::tiny) {
        tiny_tile(t, r, first + g, a, b, c, sa, sb);
      } else {
        realistic_tile(t, r, first + g, a, b, c, sa, sb);
      }
    } catch (...) {
#pragma omp critical(blockscale_harness_cases)
      if (!error) error = std::current_exception();
    }
  }
  if (error) std::rethrow_exception(error);
  return batch;
}

// ---- GEMM problems.

namespace {

struct GemmShape {
  int m, n, k_steps;  // K = k_steps * k_multiple
};
constexpr std::array<GemmShape, 6> kGemmShapes = {{
    {1024, 1024, 1}, {512, 512, 4}, {200, 136, 2}, {130, 258, 1}, {256, 256, 16}, {768, 640, 2},
}};
constexpr std::array<GemmShape, 6> kSmallGemmShapes = {{
    {64, 64, 1}, {32, 32, 4}, {40, 24, 2}, {33, 65, 1}, {16, 16, 8}, {48, 40, 2},
}};

GemmShape gemm_shape(std::uint64_t index, GemmSizes sizes) {
  blockscale::detail::require_enumerator(sizes, GemmSizes::small, "GemmSizes", "the GEMM sizes");
  const auto& list = sizes == GemmSizes::full ? kGemmShapes : kSmallGemmShapes;
  return list[index % list.size()];
}

std::uint8_t gemm_scale_code(const GemmTarget& t, DataKind data, Rng& r, bool extremes) {
  if (t.scale == Format::float8_e8m0fnu) {
    if (extremes) {
      static constexpr std::uint8_t kCodes[] = {0, 1, 2, 100, 126, 127, 128, 150, 253, 254};
      return kCodes[r.below(sizeof kCodes)];
    }
    if (data == DataKind::random && r.below(100) == 0) return static_cast<std::uint8_t>(r.below(255));
    return static_cast<std::uint8_t>(127 + static_cast<int>(r.below(49)) - 24);
  }
  if (extremes) {
    static constexpr std::uint8_t kCodes[] = {0x00, 0x01, 0x07, 0x08, 0x38, 0x7E, 0x80, 0x81, 0xB8, 0xFE};
    return kCodes[r.below(sizeof kCodes)];
  }
  std::uint8_t v = static_cast<std::uint8_t>(1 + r.below(0x7E));
  if (r.below(2)) v |= 0x80;  // ignored by the kernel
  return v;
}

}  // namespace

std::size_t gemm_problem_outputs(std::uint64_t index, GemmSizes sizes) {
  const GemmShape s = gemm_shape(index, sizes);
  return std::size_t(s.m) * std::size_t(s.n);
}

GemmProblem make_gemm_problem(const GemmTarget& t, DataKind data, std::uint64_t seed, std::uint64_t index,
                              GemmSizes sizes) {
  const blockscale::detail::IeeeMode ieee;
  blockscale::detail::require_enumerator(data, DataKind::tiny, "DataKind", "the data set");
  (void)gemm_schedule(t);  // the target's formats and enums
  const GemmShape shape = gemm_shape(index, sizes);
  GemmProblem p;
  p.m = shape.m, p.n = shape.n, p.k = shape.k_steps * t.k_multiple;
  p.tiled_scales = !t.linear_scales || index % 3 != 1;
  const int variant = static_cast<int>(index % 4);
  p.bf16_output = index / 3 % 4 == 3;
  const bool with_c = index / 4 % 4 != 2 || (data == DataKind::probes && variant == 3);
  const int blocks = p.k / t.block;
  Rng r(case_seed(seed, t.name, data, index));
  const bool extremes = data == DataKind::probes && variant == 1;
  const bool specials = (data == DataKind::random && index % 4 == 0) || (data == DataKind::probes && variant == 2);

  auto operand = [&](int rows, Format f, std::vector<std::uint8_t>& codes, std::vector<std::uint8_t>& scales) {
    codes.assign(std::size_t(rows) * p.k, 0);
    scales.assign(std::size_t(rows) * blocks, 0);
    if (data == DataKind::random) {
      for (auto& c : codes) c = static_cast<std::uint8_t>(random_finite_word(f, r));
      for (auto& s : scales) s = gemm_scale_code(t, data, r, false);
    } else if (data == DataKind::tiny) {
      // The element codes' lowest binades; e8m0 scales of 2^-63 .. 2^-24 per side, so that a block's
      // scale product (2^-126 .. 2^-48) times its partial sum crosses into the fp32 subnormals;
      // ue4m3 scales at the bottom of their range.
      for (auto& c : codes) c = static_cast<std::uint8_t>(tiny_word(f, r));
      for (auto& s : scales) {
        s = t.scale == Format::float8_e8m0fnu ? static_cast<std::uint8_t>(64 + r.below(40)) : tiny_scale(t.scale, r);
      }
    } else {
      // Realistic (and the base of the probe problems): rows of varying scale and distribution,
      // quantized block by block with one scale rule per problem.
      std::vector<float> x(std::size_t(rows) * p.k);
      for (int i = 0; i < rows; ++i) {
        const double row_scale = pow2(static_cast<int>(r.below(17)) - 8);
        const int profile = static_cast<int>((index + static_cast<std::uint64_t>(i)) % 4);
        for (int k = 0; k < p.k; ++k) x[std::size_t(i) * p.k + k] = static_cast<float>(draw(profile, r) * row_scale);
      }
      const bool nvfp4 = t.scale == Format::float8_ue4m3;
      const ScaleRule rule =
          nvfp4 ? kUe4m3Rules[index % kUe4m3Rules.size()] : kE8m0Rules[index % kE8m0Rules.size()];
      std::vector<std::uint32_t> q(codes.size());
      quantize_rows(f, t.scale, t.block, rule, x, rows, p.k, q.data(), scales.data());
      for (std::size_t i = 0; i < codes.size(); ++i) codes[i] = static_cast<std::uint8_t>(q[i]);
      if (extremes) {
        for (auto& s : scales) s = gemm_scale_code(t, data, r, true);
      }
    }
    if (specials) {
      const std::vector<std::uint32_t> sp = special_words(f);
      for (auto& c : codes)
        if (r.below(512) == 0) c = static_cast<std::uint8_t>(sp[r.below(static_cast<std::uint32_t>(sp.size()))]);
      if (t.scale == Format::float8_e8m0fnu && data == DataKind::probes) {
        for (auto& s : scales)
          if (r.below(256) == 0) s = 0xFF;
      }
    }
  };
  operand(p.m, t.a, p.a, p.sfa);
  operand(p.n, t.b, p.b, p.sfb);
  if (data == DataKind::probes && variant == 0) {
    // Cancellation across blocks: block 2b+1 of every A row is block 2b negated, of every B column
    // a copy, with the same scales: the promotions cancel pairwise and D returns to C.
    const auto neg = static_cast<std::uint8_t>(sign_mask(t.a));
    for (int i = 0; i < p.m; ++i)
      for (int bk = 1; bk < blocks; bk += 2) {
        for (int j = 0; j < t.block; ++j) {
          const std::size_t at = std::size_t(i) * p.k + std::size_t(bk) * t.block + j;
          p.a[at] = p.a[at - t.block] ^ neg;
        }
        p.sfa[std::size_t(i) * blocks + bk] = p.sfa[std::size_t(i) * blocks + bk - 1];
      }
    for (int j = 0; j < p.n; ++j)
      for (int bk = 1; bk < blocks; bk += 2) {
        for (int e = 0; e < t.block; ++e) {
          const std::size_t at = std::size_t(j) * p.k + std::size_t(bk) * t.block + e;
          p.b[at] = p.b[at - t.block];
        }
        p.sfb[std::size_t(j) * blocks + bk] = p.sfb[std::size_t(j) * blocks + bk - 1];
      }
  }
  if (with_c) {
    p.c.resize(std::size_t(p.m) * p.n);
    const std::vector<std::uint32_t> sp = special_words(Format::float32);
    for (auto& c : p.c) {
      if (data == DataKind::random) {
        if (r.below(4) == 0) {
          c = 0u;
        } else {
          const int e = static_cast<int>(r.below(41)) - 20;
          const double sign = r.below(2) ? -1.0 : 1.0;
          c = value_word(Format::float32, std::ldexp(sign * (1 + r.uniform()), e));
        }
      } else if (data == DataKind::tiny) {
        c = tiny_c(Format::float32, r, r.below(4) != 3);
      } else {
        c = value_word(Format::float32, r.gaussian() * std::sqrt(double(p.k)));
      }
      if (specials && r.below(256) == 0) c = sp[r.below(static_cast<std::uint32_t>(sp.size()))];
    }
    if (data == DataKind::probes && variant == 3) {
      // C cancels the exact product sum (rounded to fp32): D is what the schedule's roundings
      // leave, near zero, signed zeros included.
      for (int i = 0; i < p.m; ++i)
        for (int j = 0; j < p.n; ++j) {
          double s = 0;
          for (int bk = 0; bk < blocks; ++bk) {
            const double sa = to_double(t.scale, t.scale == Format::float8_ue4m3 ? (p.sfa[std::size_t(i) * blocks + bk] & 0x7Fu)
                                                                                  : p.sfa[std::size_t(i) * blocks + bk]);
            const double sb = to_double(t.scale, t.scale == Format::float8_ue4m3 ? (p.sfb[std::size_t(j) * blocks + bk] & 0x7Fu)
                                                                                  : p.sfb[std::size_t(j) * blocks + bk]);
            double part = 0;
            for (int e = 0; e < t.block; ++e) {
              const std::size_t k = std::size_t(bk) * t.block + e;
              part += to_double(t.a, p.a[std::size_t(i) * p.k + k]) * to_double(t.b, p.b[std::size_t(j) * p.k + k]);
            }
            s += part * sa * sb;
          }
          if (std::isfinite(s)) p.c[std::size_t(i) * p.n + j] = value_word(Format::float32, -s);
        }
    }
  }
  return p;
}

}  // namespace blockscale::harness
