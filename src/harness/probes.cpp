// SPDX-License-Identifier: Apache-2.0
// The targeted probes of ../shared/docs/numerics.md d.3 as dot products of one instruction.
#include "blockscale/harness/probes.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>

#include "blockscale/formats/convert.h"
#include "blockscale/formats/detail/ieee_mode.h"

namespace blockscale::harness {

namespace {

double pow2(int e) { return std::ldexp(1.0, e); }

// Positive finite operand values worth trying as one factor of a product: every code of a format
// of at most 8 bits, and m * 2^e (m in 1, 1.5, 1.25, 1.75) over the whole exponent range otherwise.
const std::vector<double>& factor_candidates(Format f) {
  static std::map<Format, std::vector<double>> cache;
  static const bool filled = [] {
    for (int fi = 0; fi < kFormatCount; ++fi) {
      const auto f2 = static_cast<Format>(fi);
      if (!info(f2).is_signed) continue;
      std::vector<double> v;
      if (width(f2) <= 8) {
        for (std::uint32_t code = 1; code <= magnitude_mask(f2); ++code) {
          const ValueClass c = classify(f2, code);
          if (c == ValueClass::normal || c == ValueClass::subnormal) v.push_back(to_double(f2, code));
        }
      } else {
        const int lo = emin(f2) - info(f2).mantissa_bits, hi = emax(f2);
        for (int e = lo; e <= hi; ++e)
          for (double m : {1.0, 1.5, 1.25, 1.75}) {
            if (exact_code(f2, m * pow2(e))) v.push_back(m * pow2(e));
          }
      }
      cache[f2] = std::move(v);
    }
    return true;
  }();
  (void)filled;
  const auto found = cache.find(f);
  if (found == cache.end()) {
    throw std::invalid_argument("probe products: " + blockscale::to_string(f) + " is not a signed operand format");
  }
  return found->second;
}

bool is_normal_value(Format f, double v) { return std::fabs(v) >= pow2(emin(f)); }

// The slots of the first fused step of the table's model, in k order: all of K when the whole
// instruction is one FDPA, k mod 4 in {0, 1} for the b.9 emulation, [0, L) for a chain.
std::vector<int> first_step_slots(const InstructionTarget& t) {
  const emulator::FdpaParams& p = t.model.params();
  std::vector<int> s;
  for (int k = 0; k < t.k; ++k) {
    if (p.algorithm == emulator::Algorithm::fp8_via_f16) {
      if (k % 4 < 2) s.push_back(k);
    } else if (k < std::min(p.L, t.k)) {
      s.push_back(k);
    }
  }
  return s;
}

// Fraction bits of the output conversion at a normal exponent.
int output_fraction_bits(const InstructionTarget& t) {
  switch (t.model.params().rounding) {
    case emulator::OutputRounding::rz_e8m13: return 13;
    case emulator::OutputRounding::rne_fp16: return 10;
    default: return 23;
  }
}

// Operand words of special codes: the code in its storage position (tf32 codes sit 13 bits up in
// the fp32 word the instruction reads; every other format has its code in the low bits).
std::uint32_t word(Format f, std::uint32_t code) { return to_storage(f, code); }
std::uint32_t nan_word(Format f) { return word(f, quiet_nan_code(f)); }
std::uint32_t sign_word(Format f) { return word(f, sign_mask(f)); }

}  // namespace

std::optional<std::uint32_t> exact_code(Format f, double v) {
  require_known(f, "exact_code");
  // The float round trip below: under a caller's FTZ / DAZ a subnormal would not come back (and
  // factor_candidates' process-wide cache, filled at the first call, would lose them for good).
  const blockscale::detail::IeeeMode ieee;
  if (std::isnan(v)) return std::nullopt;
  if (f == Format::float32 || f == Format::tfloat32) {
    const float x = static_cast<float>(v);
    if (static_cast<double>(x) != v && !(std::isinf(v) && std::isinf(x))) return std::nullopt;
    const auto bits = std::bit_cast<std::uint32_t>(x);
    if (f == Format::tfloat32 && (bits & 0x1FFFu) != 0) return std::nullopt;
    return bits;
  }
  if (!info(f).is_signed && (v < 0 || std::signbit(v))) return std::nullopt;
  if (std::isinf(v)) {
    if (!has_inf(f)) return std::nullopt;
    return inf_code(f) | (v < 0 ? sign_mask(f) : 0u);
  }
  ConvertOptions o;
  o.rounding = Rounding::nearest_even;
  o.overflow = Overflow::infinity;
  const std::uint32_t code = convert(f, v, o);
  const ValueClass c = classify(f, code);
  if (c == ValueClass::nan || c == ValueClass::infinite) return std::nullopt;
  if (to_double(f, code) != v) return std::nullopt;
  if (v == 0 && info(f).is_signed && std::signbit(v) != is_negative(f, code)) return std::nullopt;
  return code;
}

std::optional<std::pair<std::uint32_t, std::uint32_t>> product_codes(Format fa, Format fb, double v) {
  if (!std::isfinite(v)) return std::nullopt;
  const auto one = exact_code(fb, 1.0);
  if (v == 0) {
    const auto z = exact_code(fa, std::signbit(v) ? -0.0 : 0.0);
    if (!z || !one) return std::nullopt;
    return std::pair{*z, *one};
  }
  const double mag = std::fabs(v);
  std::optional<std::pair<std::uint32_t, std::uint32_t>> best;
  double best_score = std::numeric_limits<double>::infinity();
  for (double av : factor_candidates(fa)) {
    const double bv = mag / av;
    if (bv * av != mag) continue;  // the quotient must be exact
    const auto bc = exact_code(fb, bv);
    if (!bc) continue;
    const double score = (is_normal_value(fa, av) ? 0 : 1000) + (is_normal_value(fb, bv) ? 0 : 1000) +
                         std::fabs(std::log2(av) - std::log2(bv));
    if (score < best_score) {
      const auto ac = exact_code(fa, v < 0 ? -av : av);
      if (!ac) continue;
      best_score = score;
      best = std::pair{*ac, *bc};
    }
  }
  return best;
}

double acc_value(Format acc, std::uint32_t code) {
  if (acc == Format::float32) return static_cast<double>(std::bit_cast<float>(code));
  return to_double(acc, code);
}

std::uint8_t unit_scale(Format scale) {
  if (scale == Format::float8_e8m0fnu) return 127;
  if (scale == Format::float8_ue4m3) return 0x38;
  throw std::invalid_argument("unit_scale: block scales are ue8m0 or ue4m3, got " + blockscale::to_string(scale));
}

DotBuilder::DotBuilder(const InstructionTarget& t, std::string label) : t_(t) {
  dot_.label = std::move(label);
  dot_.a.assign(static_cast<std::size_t>(t.k), 0);
  dot_.b.assign(static_cast<std::size_t>(t.k), 0);
  if (t.block_scaled) {
    dot_.sa.assign(static_cast<std::size_t>(t.k / t.block), unit_scale(t.scale));
    dot_.sb.assign(static_cast<std::size_t>(t.k / t.block), unit_scale(t.scale));
  }
}

bool DotBuilder::product(int slot, double value) {
  const auto p = product_codes(t_.a, t_.b, value);
  if (!p || slot < 0 || slot >= t_.k) return ok_ = false;
  dot_.a[static_cast<std::size_t>(slot)] = p->first;
  dot_.b[static_cast<std::size_t>(slot)] = p->second;
  return true;
}

bool DotBuilder::operands(int slot, std::uint32_t a_code, std::uint32_t b_code) {
  if (slot < 0 || slot >= t_.k) return ok_ = false;
  dot_.a[static_cast<std::size_t>(slot)] = a_code;
  dot_.b[static_cast<std::size_t>(slot)] = b_code;
  return true;
}

bool DotBuilder::c(double value) {
  const auto code = exact_code(t_.acc, value);
  if (!code) return ok_ = false;
  dot_.c = *code;
  return true;
}

void DotBuilder::c_code(std::uint32_t code) { dot_.c = code; }

void DotBuilder::scales(int block, std::uint8_t sa, std::uint8_t sb) {
  dot_.sa.at(static_cast<std::size_t>(block)) = sa;
  dot_.sb.at(static_cast<std::size_t>(block)) = sb;
}

std::vector<DotCase> probe_set(const InstructionTarget& t) {
  const blockscale::detail::IeeeMode ieee;  // the probes' values are built in double arithmetic
  std::vector<DotCase> out;
  const emulator::FdpaParams& p = t.model.params();
  const std::vector<int> S = first_step_slots(t);
  const int F = p.F;
  const int pout = output_fraction_bits(t);
  const auto add = [&](const DotBuilder& d) {
    if (d.ok()) out.push_back(d.dot());
  };
  // Builds a probe whose meaning does not change under a power-of-two scaling of every product
  // and of C, trying scalings until the formats can express it.
  const auto scaled = [&](const std::string& label, auto&& build) {
    for (int s : {0, -4, 4, -8, 8, -12, 12, -16, 16, -24, 24}) {
      DotBuilder d(t, label + (s ? " (x2^" + std::to_string(s) + ")" : ""));
      build(d, pow2(s));
      if (d.ok()) {
        out.push_back(d.dot());
        return;
      }
    }
  };
  const int n = static_cast<int>(S.size());
  const auto slot = [&](int i) { return S[static_cast<std::size_t>(std::min(i, n - 1))]; };

  // d.3-1: the emulation probe, C = 128 and 0.75 ulp of it in one product.
  for (double sign : {1.0, -1.0}) {
    scaled("emulation probe", [&](DotBuilder& d, double x) {
      d.c(128 * x);
      d.product(slot(0), sign * 0.75 * pow2(7 - pout) * x);
    });
  }
  // d.3-2: the "Table 8" vector (c = 2^23, a = [-2^13, -1/2, -1/4, -1/8], b = [2^10, 1, 1, 1]).
  scaled("Table 8 vector", [&](DotBuilder& d, double x) {
    d.c(pow2(23) * x);
    d.product(slot(0), -pow2(23) * x);
    d.product(slot(1), -0.5 * x);
    d.product(slot(2), -0.25 * x);
    d.product(slot(3), -0.125 * x);
  });
  // d.3-3: F sweep per slot: +-2^14 in the first two slots fix e_max = 14; 2^t survives down to
  // t = 14 - F where it shares their step.
  for (int k = 0; k < t.k; ++k) {
    if (k == slot(0) || k == slot(1)) continue;
    for (int dt = -2; dt <= 2; ++dt) {
      scaled("F sweep slot " + std::to_string(k) + " t=14-F" + (dt < 0 ? "" : "+") + std::to_string(dt),
             [&](DotBuilder& d, double x) {
               d.product(slot(0), pow2(14) * x);
               d.product(slot(1), -pow2(14) * x);
               d.product(k, pow2(14 - F + dt) * x);
             });
    }
  }
  for (int dt = -3; dt <= 3; ++dt) {
    scaled("F sweep C t=14-F" + std::string(dt < 0 ? "" : "+") + std::to_string(dt), [&](DotBuilder& d, double x) {
      d.product(slot(0), pow2(14) * x);
      d.product(slot(1), -pow2(14) * x);
      d.c(pow2(14 - F + dt) * x);
    });
  }
  // d.3-4: output rounding: four unit products (4) plus 0.25 / 0.5 / 0.75 / 1.5 ulp, both signs.
  if (n >= 5) {
    for (double f : {0.25, 0.5, 0.75, 1.5, 1.75})
      for (double sign : {1.0, -1.0}) {
        scaled("output rounding +" + std::to_string(f) + " ulp" + (sign < 0 ? " (negative)" : ""),
               [&](DotBuilder& d, double x) {
                 for (int i = 0; i < 4; ++i) d.product(slot(i), sign * x);
                 d.product(slot(4), sign * f * pow2(2 - pout) * x);
               });
      }
  }
  // d.3-5: C = (2 - 2^-10) 2^-14 against a cancelling pair of growing magnitude.
  for (int j = -14; j <= 24; j += 2) {
    DotBuilder d(t, "C alignment, pair 2^" + std::to_string(j));
    d.c((2 - pow2(-10)) * pow2(-14));
    d.product(slot(0), pow2(j));
    d.product(slot(1), -pow2(j));
    add(d);
  }
  // d.3-6: unnormalised products: (1.5)(1.5) - (1.5)(1.5) + 2^-F (and 2^(1-F)), and the
  // (2.25)(1) control.
  for (int e : {-F, 1 - F}) {
    for (double big : {1.5, 2.25}) {
      scaled("product normalisation " + std::to_string(big) + " x " + (big == 1.5 ? "1.5" : "1") + ", 2^" +
                 std::to_string(e),
             [&](DotBuilder& d, double x) {
               const auto a1 = exact_code(t.a, big), a2 = exact_code(t.a, -big);
               const auto b1 = exact_code(t.b, big == 1.5 ? 1.5 * x : x);
               if (!a1 || !a2 || !b1) {
                 d.fail();
                 return;
               }
               d.operands(slot(0), *a1, *b1);
               d.operands(slot(1), *a2, *b1);
               d.product(slot(2), pow2(e) * x);
             });
    }
  }
  // d.3-7: e_zero floors: one product 2^(E - F) alone with C = 0 survives iff e_zero <= E; the
  // fp16 tie probe (2^-25 plus 2^(E - F): 2^-24 when it survives, 0 by ties-to-even otherwise).
  for (int E = p.e_zero - 3; E <= p.e_zero + 3; ++E) {
    DotBuilder d(t, "e_zero floor, 2^(" + std::to_string(E) + "-F) alone");
    d.product(slot(0), pow2(E - F));
    add(d);
    if (t.acc == Format::float16) {
      DotBuilder tie(t, "e_zero fp16 tie probe, E=" + std::to_string(E));
      tie.product(slot(0), pow2(-25));
      tie.product(slot(1), pow2(E - F));
      add(tie);
    }
  }
  // d.3-8: special values.
  const auto one_a = exact_code(t.a, 1.0), one_b = exact_code(t.b, 1.0);
  if (one_a && one_b) {
    if (has_nan(t.a)) {
      for (std::uint32_t nan : {nan_word(t.a), nan_word(t.a) | sign_word(t.a), word(t.a, magnitude_mask(t.a))}) {
        DotBuilder d(t, "NaN in A");
        d.operands(slot(0), nan, *one_b);
        d.c(1.0);
        add(d);
      }
    }
    if (has_nan(t.b)) {
      DotBuilder d(t, "NaN in B");
      d.operands(slot(1), *one_a, nan_word(t.b) | sign_word(t.b));
      add(d);
    }
    for (std::uint32_t nan : {nan_word(t.acc), nan_word(t.acc) | sign_word(t.acc), inf_code(t.acc) | 1u}) {
      DotBuilder d(t, "NaN in C");
      d.c_code(nan);
      d.product(slot(0), 1.0);
      add(d);
    }
    if (has_inf(t.a)) {
      const std::uint32_t inf = word(t.a, inf_code(t.a)), neg = sign_word(t.a);
      const auto zero_b = exact_code(t.b, 0.0);
      DotBuilder inf0(t, "Inf * 0");
      inf0.operands(slot(0), inf, *zero_b);
      add(inf0);
      DotBuilder mix(t, "+Inf and -Inf products");
      mix.operands(slot(0), inf, *one_b);
      mix.operands(slot(1), inf | neg, *one_b);
      add(mix);
      for (double c : {1.0, -1.0}) {
        DotBuilder d(t, "Inf product with finite C");
        d.operands(slot(0), c < 0 ? inf | neg : inf, *one_b);
        d.c(c);
        add(d);
      }
      DotBuilder ci(t, "-Inf product with +Inf C");
      ci.operands(slot(0), inf | neg, *one_b);
      ci.c_code(inf_code(t.acc));
      add(ci);
    }
    for (std::uint32_t sign : {0u, sign_mask(t.acc)}) {
      DotBuilder d(t, "Inf C with finite products");
      d.c_code(inf_code(t.acc) | sign);
      d.product(slot(0), 3.0);
      add(d);
    }
    // Overflow: the largest products, all of one sign, then C at the top of the range.
    const double amax = to_double(t.a, max_finite_code(t.a)), bmax = to_double(t.b, max_finite_code(t.b));
    for (double sign : {1.0, -1.0}) {
      DotBuilder d(t, "largest products, one sign");
      for (int i = 0; i < n; ++i) {
        d.operands(slot(i), *exact_code(t.a, sign * amax), *exact_code(t.b, bmax));
      }
      add(d);
    }
    const double acc_max = t.acc == Format::float16 ? 65504.0 : static_cast<double>(std::numeric_limits<float>::max());
    const double acc_ulp = t.acc == Format::float16 ? 32.0 : pow2(104);
    for (double frac : {0.25, 0.5, 0.75, 1.0}) {
      DotBuilder d(t, "C = max plus " + std::to_string(frac) + " ulp");
      d.c(acc_max);
      d.product(slot(0), frac * acc_ulp);
      add(d);
    }
    // Signed zeros: -0 products with C = -0 give +0 on every NVIDIA path (numerics.md c).
    {
      DotBuilder d(t, "all products -0, C = -0");
      for (int i = 0; i < n; ++i) d.product(slot(i), -0.0);
      d.c(-0.0);
      add(d);
      DotBuilder e(t, "exact cancellation");
      e.product(slot(0), 3.0);
      e.product(slot(1), -3.0);
      add(e);
    }
    // Underflow: a negative sum below the output's smallest subnormal (numerics.md e.3).
    const int min_exp = t.acc == Format::float16 ? -24 : (p.rounding == emulator::OutputRounding::rz_e8m13 ? -139 : -149);
    for (int below : {1, 2, 8}) {
      DotBuilder d(t, "negative underflow 2^" + std::to_string(min_exp - below));
      d.product(slot(0), -pow2(min_exp - below));
      add(d);
    }
    // Subnormal operands keep emin (b.1): the smallest subnormal times the largest value.
    {
      DotBuilder d(t, "subnormal operands");
      d.operands(slot(0), word(t.a, min_positive_code(t.a)), word(t.b, max_finite_code(t.b)));
      d.operands(slot(1), word(t.a, min_positive_code(t.a) | sign_mask(t.a)), word(t.b, min_positive_code(t.b)));
      d.c(pow2(-10));
      add(d);
    }
  }
  // d.3-9: block-scale probes.
  if (t.block_scaled) {
    const int blocks = t.k / t.block;
    const bool e8m0 = t.scale == Format::float8_e8m0fnu;
    const std::vector<std::uint8_t> specials =
        e8m0 ? std::vector<std::uint8_t>{0xFF, 0x00, 0x01, 0xFE, 0x7F, 0x80}
             : std::vector<std::uint8_t>{0x7F, 0xFF, 0x00, 0x80, 0x01, 0x81, 0x07, 0x08, 0xB8, 0x7E};
    for (std::uint8_t sc : specials) {
      for (int side = 0; side < 2; ++side) {
        DotBuilder d(t, "scale code " + std::to_string(sc) + (side ? " in SFB" : " in SFA"));
        for (int i = 0; i < n; ++i) d.product(slot(i), i % 2 ? -1.5 : 2.0);
        d.c(0.75);
        d.scales(0, side ? unit_scale(t.scale) : sc, side ? sc : unit_scale(t.scale));
        add(d);
      }
    }
    if (p.algorithm == emulator::Algorithm::gst_fdpa && blocks >= 1) {
      // Group-of-16: a cancelling +-6 pair inside group 0 under 2^60, C = 1 (MS-v2: D = 0).
      for (int second : {1, 15, 16, 17}) {
        DotBuilder d(t, "cancelling pair in slots 0 and " + std::to_string(second) + " under a large scale");
        d.product(0, 6.0);
        d.product(second, -6.0);
        d.c(1.0);
        d.scales(0, e8m0 ? 187 : 0x7E, unit_scale(t.scale));
        add(d);
      }
      DotBuilder g(t, "C truncation under GST");
      g.product(0, 4.0);
      g.product(1, -4.0);
      g.c(1 + pow2(-23));
      g.scales(0, e8m0 ? 140 : 0x77, unit_scale(t.scale));
      add(g);
    }
  }
  return out;
}

std::size_t dots_per_tile(const InstructionTarget& t) { return static_cast<std::size_t>(std::min(t.m, t.n)); }

TileBatch pack_dots(const InstructionTarget& t, const std::vector<DotCase>& dots) {
  const std::size_t per = dots_per_tile(t);
  const std::size_t tiles = (dots.size() + per - 1) / per;
  TileBatch batch = make_batch(t, tiles);
  const std::size_t K = static_cast<std::size_t>(t.k), na = a_words(t), nb = b_words(t), nc = c_words(t);
  const std::size_t blocks = t.block_scaled ? K / static_cast<std::size_t>(t.block) : 0;
  for (std::size_t g = 0; g < tiles; ++g) {
    const auto dot_of = [&](std::size_t i) -> const DotCase& {
      const std::size_t idx = g * per + i % per;
      return dots[idx < dots.size() ? idx : g * per];
    };
    for (std::size_t i = 0; i < static_cast<std::size_t>(t.m); ++i) {
      const DotCase& d = dot_of(i);
      std::copy(d.a.begin(), d.a.end(), batch.a.begin() + static_cast<std::ptrdiff_t>(g * na + i * K));
      for (std::size_t j = 0; j < static_cast<std::size_t>(t.n); ++j) batch.c[g * nc + i * t.n + j] = d.c;
      for (std::size_t s = 0; s < blocks; ++s) batch.sfa[(g * t.m + i) * blocks + s] = d.sa[s];
    }
    for (std::size_t j = 0; j < static_cast<std::size_t>(t.n); ++j) {
      const DotCase& d = dot_of(j);
      std::copy(d.b.begin(), d.b.end(), batch.b.begin() + static_cast<std::ptrdiff_t>(g * nb + j * K));
      for (std::size_t s = 0; s < blocks; ++s) batch.sfb[(g * t.n + j) * blocks + s] = d.sb[s];
    }
  }
  return batch;
}

std::vector<std::uint32_t> unpack_dots(const InstructionTarget& t, const std::vector<std::uint32_t>& tiles_out,
                                       std::size_t dots) {
  const std::size_t per = dots_per_tile(t), nc = c_words(t);
  std::vector<std::uint32_t> d(dots);
  for (std::size_t i = 0; i < dots; ++i) {
    const std::size_t g = i / per, r = i % per;
    d[i] = tiles_out.at(g * nc + r * static_cast<std::size_t>(t.n) + r);
  }
  return d;
}

}  // namespace blockscale::harness
