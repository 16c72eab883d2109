// SPDX-License-Identifier: Apache-2.0
// Conversion sets: one input format to one output format, one output column per named mode.
//
//   @op convert f32 e4m3
//   @mode cuda_rn_sat preset=cuda(rounding=nearest_even,overflow=saturate) rounding=nearest_even
//         overflow=saturate nan=7f zero=min_code negative=nan sr_bits=32 e8m0_subnormal_grid=0
//
// Every @mode line carries the resolved options in full, so the file says exactly what each column
// is without reference to blockscale; `preset=` names the preset call that gives those options, and
// verification checks that it still does.
#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "blockscale/formats/bulk.h"
#include "blockscale/formats/presets.h"
#include "common.h"

namespace blockscale::golden::detail {
namespace {

// The input side: a Format, or binary64 (which is not a Format).
struct Source {
  bool is_f64 = false;
  Format format = Format::float32;
  std::string name() const { return is_f64 ? "f64" : info(format).short_name; }
  ElementType type() const {
    return is_f64 ? ElementType{WordType::f64, Format::float32} : ElementType::of(format);
  }
};

std::optional<Source> parse_source(std::string_view s) {
  if (s == "f64") return Source{true, Format::float32};
  const auto t = parse_element_type(s);
  if (!t || t->word != WordType::code) return std::nullopt;
  return Source{false, t->format};
}

std::optional<Rounding> parse_rounding(std::string_view s) {
  for (Rounding r : {Rounding::nearest_even, Rounding::toward_zero, Rounding::upward, Rounding::downward,
                     Rounding::nearest_away, Rounding::stochastic}) {
    if (s == to_string(r)) return r;
  }
  return std::nullopt;
}
std::optional<Overflow> parse_overflow(std::string_view s) {
  for (Overflow o : {Overflow::saturate, Overflow::saturate_finite, Overflow::infinity, Overflow::ieee}) {
    if (s == to_string(o)) return o;
  }
  return std::nullopt;
}
std::string to_string(ZeroRule z) { return z == ZeroRule::min_code ? "min_code" : "nan"; }
std::string to_string(NegativeRule n) {
  switch (n) {
    case NegativeRule::magnitude: return "magnitude";
    case NegativeRule::nan: return "nan";
    case NegativeRule::min_code: return "min_code";
  }
  return "?";
}
std::string short_rounding(Rounding r) {
  switch (r) {
    case Rounding::nearest_even: return "rn";
    case Rounding::toward_zero: return "rz";
    case Rounding::upward: return "ru";
    case Rounding::downward: return "rd";
    case Rounding::nearest_away: return "rna";
    case Rounding::stochastic: return "rs";
  }
  return "?";
}
std::string short_overflow(Overflow o) {
  switch (o) {
    case Overflow::saturate: return "sat";
    case Overflow::saturate_finite: return "satfinite";
    case Overflow::infinity: return "inf";
    case Overflow::ieee: return "ieee";
  }
  return "?";
}

}  // namespace

std::string options_string(const ConvertOptions& o, const std::string& prefix) {
  std::string nan = "default";
  if (o.has_nan_rule) {
    nan = hex(o.nan.code);
    if (o.nan.xor_sign) nan += "/xor_sign";
    if (o.nan.or_payload) nan += "/or_payload";
  }
  const std::string& p = prefix;
  return p + "rounding=" + to_string(o.rounding) + " " + p + "overflow=" + to_string(o.overflow) + " " + p +
         "nan=" + nan + " " + p + "zero=" + to_string(o.zero) + " " + p +
         "negative=" + to_string(o.negative) + " " + p + "sr_bits=" + std::to_string(o.stochastic_bits) +
         " " + p + "e8m0_subnormal_grid=" + (o.subnormal_grid_quirk ? "1" : "0");
}

namespace {

struct Mode {
  std::string name;
  std::string preset;  // "ieee(nearest_even)", "cuda(rounding=...,overflow=...)",
                       // "ml_dtypes(saturate=0,truncate=0)", "none"
  ConvertOptions options;
};

// A preset expression: "ieee(<rounding>)", "cuda(rounding=<r>,overflow=<o>)",
// "ml_dtypes(saturate=<0|1>,truncate=<0|1>)", or "none" (the options stand alone).
struct PresetCall {
  std::string name;
  Rounding rounding = Rounding::nearest_even;
  Overflow overflow = Overflow::ieee;
  bool saturate = false, truncate = false;
};

PresetCall parse_preset(std::string_view preset) {
  PresetCall c;
  if (preset == "none") {
    c.name = "none";
    return c;
  }
  const std::size_t open = preset.find('(');
  if (open == std::string_view::npos || preset.back() != ')')
    invalid("preset " + quote(preset) + " is not name(arguments)");
  c.name = std::string(preset.substr(0, open));
  const std::string_view args = preset.substr(open + 1, preset.size() - open - 2);
  std::map<std::string, std::string> kv;
  for (const std::string& a : split(args, ',')) {
    const std::size_t eq = a.find('=');
    const std::string key = eq == std::string::npos ? std::string("rounding") : a.substr(0, eq);
    if (!kv.emplace(key, eq == std::string::npos ? a : a.substr(eq + 1)).second) {
      invalid("preset " + quote(preset) + ": " + key + " given twice");
    }
  }
  auto take = [&](const std::string& k) {
    const auto it = kv.find(k);
    if (it == kv.end()) invalid("preset " + quote(preset) + " lacks " + k + "=");
    std::string v = it->second;
    kv.erase(it);
    return v;
  };
  auto flag = [&](const std::string& k) {
    const std::string v = take(k);
    if (v != "0" && v != "1") invalid("preset " + quote(preset) + ": " + k + " must be 0 or 1");
    return v == "1";
  };
  if (c.name == "ieee") {
    const auto r = parse_rounding(take("rounding"));
    if (!r) invalid("preset " + quote(preset) + ": unknown rounding");
    c.rounding = *r;
  } else if (c.name == "cuda") {
    const auto r = parse_rounding(take("rounding"));
    const auto o = parse_overflow(take("overflow"));
    if (!r || !o) invalid("preset " + quote(preset) + ": unknown rounding or overflow");
    c.rounding = *r;
    c.overflow = *o;
  } else if (c.name == "ml_dtypes") {
    c.saturate = flag("saturate");
    c.truncate = flag("truncate");
  } else {
    invalid("unknown preset " + quote(c.name) + " (ieee, cuda, ml_dtypes, or none)");
  }
  if (!kv.empty()) invalid("preset " + quote(preset) + ": unknown argument " + quote(kv.begin()->first));
  return c;
}

// The options of a preset call for (src, dst); nullopt when the preset does not offer the pair
// (the presets throw for conversions the system they model lacks) or the result is not valid.
std::optional<ConvertOptions> call_preset(const PresetCall& c, const Source& src, Format dst) {
  ConvertOptions o;
  try {
    if (c.name == "ieee") {
      o = presets::ieee(c.rounding);
    } else if (c.name == "cuda") {
      o = presets::cuda(dst, src.is_f64 ? Format::float32 : src.format, src.is_f64, c.rounding, c.overflow);
    } else if (c.name == "ml_dtypes") {
      if (src.is_f64) return std::nullopt;  // the ml_dtypes preset models float, half and bfloat16 sources
      o = presets::ml_dtypes(dst, src.format, c.saturate, c.truncate);
    } else {
      return std::nullopt;
    }
    validate(dst, o);
  } catch (const std::invalid_argument&) {
    return std::nullopt;
  }
  return o;
}

std::optional<ConvertOptions> resolve_preset(std::string_view preset, const Source& src, Format dst) {
  return call_preset(parse_preset(preset), src, dst);
}

}  // namespace

ConvertOptions parse_options(const std::map<std::string, std::string>& kv, const std::string& prefix) {
  auto get = [&](const char* k) -> const std::string& {
    const auto it = kv.find(prefix + k);
    if (it == kv.end()) invalid("missing " + prefix + k + "=");
    return it->second;
  };
  ConvertOptions o;
  const auto r = parse_rounding(get("rounding"));
  if (!r) invalid("unknown rounding " + quote(get("rounding")));
  o.rounding = *r;
  const auto ov = parse_overflow(get("overflow"));
  if (!ov) invalid("unknown overflow " + quote(get("overflow")));
  o.overflow = *ov;
  const std::string& nan = get("nan");
  if (nan != "default") {
    const auto parts = split(nan, '/');
    NanRule rule;
    const std::string& code = parts[0];
    if (code.empty() || code.size() > 8 || code.find_first_not_of("0123456789abcdef") != std::string::npos) {
      invalid("nan=" + quote(nan) + ": the code must be lower-case hex");
    }
    rule.code = static_cast<std::uint32_t>(std::stoul(code, nullptr, 16));
    for (std::size_t i = 1; i < parts.size(); ++i) {
      if (parts[i] == "xor_sign" && !rule.xor_sign) {
        rule.xor_sign = true;
      } else if (parts[i] == "or_payload" && !rule.or_payload) {
        rule.or_payload = true;
      } else {
        invalid("nan=" + quote(nan) + ": unknown or repeated flag " + quote(parts[i]));
      }
    }
    o.with_nan(rule);
  }
  const std::string& z = get("zero");
  if (z == "min_code")
    o.zero = ZeroRule::min_code;
  else if (z == "nan")
    o.zero = ZeroRule::nan;
  else
    invalid("zero=" + quote(z) + " (min_code or nan)");
  const std::string& n = get("negative");
  if (n == "magnitude")
    o.negative = NegativeRule::magnitude;
  else if (n == "nan")
    o.negative = NegativeRule::nan;
  else if (n == "min_code")
    o.negative = NegativeRule::min_code;
  else
    invalid("negative=" + quote(n) + " (magnitude, nan or min_code)");
  const std::string& bits = get("sr_bits");
  if (bits.empty() || bits.size() > 2 || bits.find_first_not_of("0123456789") != std::string::npos) {
    invalid("sr_bits=" + quote(bits) + " is not a decimal number");
  }
  o.stochastic_bits = std::stoi(bits);
  const std::string& q = get("e8m0_subnormal_grid");
  if (q != "0" && q != "1") invalid("e8m0_subnormal_grid=" + quote(q) + " (0 or 1)");
  o.subnormal_grid_quirk = q == "1";
  return o;
}

namespace {

// ---- Edge inputs. Every value of interest for (src, dst): each representable value of dst (all
// ---- codes of 8-bit formats, the codes at chosen binades of wider ones), each midpoint between
// ---- neighbours (the ties), and the neighbours of those points at the source precision; the
// ---- overflow threshold and beyond; half the smallest subnormal; zeros, infinities, NaNs with
// ---- payloads; the extremes of the source format. Both signs.

// Magnitude codes of dst whose values (and the midpoints above them) are visited.
std::vector<std::uint32_t> visited_codes(Format dst) {
  const std::uint32_t top = max_finite_code(dst);
  std::vector<std::uint32_t> codes;
  if (info(dst).storage_bits == 8) {
    for (std::uint32_t c = 0; c <= top; ++c) {
      // e8m0's 255 binades behave alike away from its ends and from 1.0: those three regions.
      if (info(dst).mantissa_bits == 0 && c >= 12 && c + 12 <= top && (c + 12 < 127 || c > 127 + 12))
        continue;
      codes.push_back(c);
    }
    return codes;
  }
  // Wider formats: the lowest binades (subnormals and the first normals), the highest ones, and
  // binades around 1; in each, the first two and last two codes and the middle one.
  const int m = info(dst).mantissa_bits;
  const std::uint32_t per = 1u << m;
  const int fields = static_cast<int>(top >> m);
  std::set<int> binades;
  for (int e = 0; e <= 2; ++e) binades.insert(e);
  for (int e = fields - 2; e <= fields; ++e) binades.insert(e);
  const int one = info(dst).bias;
  for (int e = one - 2; e <= one + 1; ++e) binades.insert(e);
  std::set<std::uint32_t> s;
  for (int e : binades) {
    if (e < 0 || e > fields) continue;
    const std::uint32_t base = static_cast<std::uint32_t>(e) * per;
    for (std::uint32_t c : {base, base + 1, base + per / 2, base + per - 2, base + per - 1}) {
      if (c <= top) s.insert(c);
    }
  }
  codes.assign(s.begin(), s.end());
  return codes;
}

// Source bit patterns for one value: the value rounded to the source, and its two neighbours there.
void add_near(const Source& src, double v, std::set<std::uint64_t>& out) {
  if (src.is_f64) {
    const std::uint64_t b = std::bit_cast<std::uint64_t>(v);
    out.insert(b);
    if (std::isfinite(v)) {
      out.insert(std::bit_cast<std::uint64_t>(std::nextafter(v, std::numeric_limits<double>::infinity())));
      out.insert(std::bit_cast<std::uint64_t>(std::nextafter(v, -std::numeric_limits<double>::infinity())));
    }
    return;
  }
  const Format f = src.format;
  const std::uint32_t code = convert(f, v, presets::ieee());
  const std::uint32_t mag = code & magnitude_mask(f), sign = code & sign_mask(f);
  const auto add = [&](std::uint32_t c) {
    if (!is_nan(f, c)) out.insert(to_storage(f, c));
  };
  add(code);
  if (classify(f, code) == ValueClass::infinite) return;
  if (mag < max_finite_code(f)) add(sign | (mag + 1));
  if (mag > 0) add(sign | (mag - 1));
}

std::vector<std::uint64_t> nan_patterns(const Source& src) {
  if (src.is_f64) {
    return {0x7FF8000000000000ull, 0xFFF8000000000000ull, 0x7FF0000000000001ull, 0x7FFFFFFFFFFFFFFFull,
            0x7FFC000000000000ull, 0xFFF4000000000000ull, 0x7FFA000000000000ull};
  }
  const Format f = src.format;
  if (!has_nan(f)) return {};
  const std::uint32_t s = sign_mask(f);
  std::vector<std::uint32_t> codes;
  if (has_inf(f)) {
    const int m = info(f).mantissa_bits;
    const std::uint32_t inf = inf_code(f);
    codes = {quiet_nan_code(f),     s | quiet_nan_code(f), inf | 1u,
             inf | ((1u << m) - 1), inf | (3u << (m - 2)), s | inf | (1u << (m - 2)),
             inf | (5u << (m - 3))};
  } else {
    codes = {all_ones_code(f), s | all_ones_code(f)};
  }
  std::vector<std::uint64_t> out;
  for (std::uint32_t c : codes) out.push_back(to_storage(f, c));
  return out;
}

std::vector<std::uint64_t> edge_inputs(const Source& src, Format dst, bool stochastic) {
  std::set<std::uint64_t> pos;  // non-negative bit patterns; the negated ones are added below
  const std::vector<std::uint32_t> codes = visited_codes(dst);
  const std::uint32_t top = max_finite_code(dst);
  const int m = info(dst).mantissa_bits;
  const auto exact = [&](double v) {
    if (src.is_f64) {
      pos.insert(std::bit_cast<std::uint64_t>(v));
    } else {
      const std::uint32_t c = convert(src.format, v, presets::ieee());
      if (!is_nan(src.format, c)) pos.insert(to_storage(src.format, c));
    }
  };
  for (std::uint32_t c : codes) {
    const double v = to_double(dst, c);
    // Directed modes care about the neighbours of representable values; every binade edge and
    // subnormal gets them (the other codes behave alike).
    const std::uint32_t man = c & ((1u << m) - 1u);
    const bool boundary = m == 0 || man == 0 || man == (1u << m) - 1u || (c >> m) == 0;
    if (boundary && !stochastic)
      add_near(src, v, pos);
    else
      exact(v);
    if (c < top) {
      const double next = to_double(dst, c + 1);
      const double mid = (v + next) / 2;  // exact: a midpoint needs one bit more than dst has
      if (stochastic) {
        exact(mid);
      } else {
        add_near(src, mid, pos);  // the tie and the values just off it
      }
    }
  }
  // Overflow: the threshold (max + half an ulp), one ulp beyond, twice max, and far beyond.
  const double max = to_double(dst, top);
  const double ulp = max - to_double(dst, top - 1);
  for (double v : {max + ulp / 2, max + ulp, 2 * max, 0x1p100, 0x1p127 * 1.5, 0x1p200, 0x1p1000})
    add_near(src, v, pos);
  // Underflow: below the smallest positive value.
  const double tiny = to_double(dst, min_positive_code(dst));
  for (double v :
       {tiny / 2, tiny / 4, tiny * 0.75, tiny / 2 * 1.5, 0x1p-130, 0x1p-149, 0x1p-160, 0x1p-1074}) {
    add_near(src, v, pos);
  }
  // The source's own extremes, and exact zero and infinity.
  if (src.is_f64) {
    pos.insert(std::bit_cast<std::uint64_t>(std::numeric_limits<double>::max()));
    pos.insert(std::bit_cast<std::uint64_t>(std::numeric_limits<double>::denorm_min()));
    pos.insert(std::bit_cast<std::uint64_t>(std::numeric_limits<double>::min()));
    pos.insert(0);
    pos.insert(std::bit_cast<std::uint64_t>(std::numeric_limits<double>::infinity()));
  } else {
    const Format f = src.format;
    pos.insert(to_storage(f, max_finite_code(f)));
    pos.insert(to_storage(f, min_positive_code(f)));
    pos.insert(0);
    if (has_inf(f)) pos.insert(to_storage(f, inf_code(f)));
  }
  const std::uint64_t sign_bit =
      src.is_f64 ? (1ull << 63) : std::uint64_t{to_storage(src.format, sign_mask(src.format))};
  std::vector<std::uint64_t> out;
  for (std::uint64_t b : pos) {
    out.push_back(b);
    out.push_back(b | sign_bit);
  }
  for (std::uint64_t b : nan_patterns(src)) out.push_back(b);
  return out;
}

// Source bit patterns drawn at random: `random` uniform over all patterns, `realistic` values of
// about normal shape scaled by powers of two spanning dst's range.
std::uint64_t random_input(const Source& src, Rng& rng) {
  if (src.is_f64) return rng.next();
  return to_storage(src.format, static_cast<std::uint32_t>(rng.next()) & code_mask(src.format));
}
std::uint64_t realistic_input(const Source& src, Format dst, Rng& rng) {
  const int lo = emin(dst) - info(dst).mantissa_bits - 2, hi = emax(dst) + 2;
  const int e = static_cast<int>(rng.range(lo, hi));
  const double v = std::ldexp(rng.normalish(), e);
  if (src.is_f64) return std::bit_cast<std::uint64_t>(v);
  return to_storage(src.format, convert(src.format, v, presets::ieee()));
}

class ConversionOp final : public Operation {
 public:
  ConversionOp(Source src, Format dst, bool stochastic, std::vector<Mode> modes)
      : src_(src), dst_(dst), stochastic_(stochastic), modes_(std::move(modes)) {}

  SetKind kind() const override { return SetKind::conversion; }
  std::string id() const override {
    return "convert:" + src_.name() + ":" + info(dst_).short_name + (stochastic_ ? ":stochastic" : "");
  }
  std::string file_stem() const override {
    return src_.name() + "_to_" + info(dst_).short_name + (stochastic_ ? "_stochastic" : "");
  }
  std::vector<std::string> op_lines() const override {
    return {"convert " + src_.name() + " " + info(dst_).short_name};
  }
  std::vector<std::string> mode_lines() const override {
    std::vector<std::string> out;
    for (const Mode& m : modes_)
      out.push_back(m.name + " preset=" + m.preset + " " + options_string(m.options, ""));
    return out;
  }
  std::vector<std::string> notes() const override {
    std::vector<std::string> n = {
        "x: the input (" + src_.name() + " bit pattern); one output column per @mode, in @mode order: the " +
            to_string(dst_) +
            (dst_ == Format::tfloat32 ? " result as an fp32 word (low 13 bits zero)" : " code"),
    };
    if (stochastic_) {
      n.push_back(
          "r: the random word of stochastic rounding; the low sr_bits bits are used (formats/convert.h)");
    }
    return n;
  }
  std::vector<FieldSpec> fields() const override {
    std::vector<FieldSpec> f = {{"x", src_.type(), 1, false}};
    if (stochastic_) f.push_back({"r", {WordType::u32, Format::float32}, 1, false});
    for (const Mode& m : modes_) f.push_back({m.name, ElementType::of(dst_), 1, true});
    return f;
  }

  std::uint32_t convert_one(const Mode& m, std::uint64_t x, std::uint32_t r) const {
    if (src_.is_f64) return convert(dst_, std::bit_cast<double>(x), m.options, r);
    if (src_.format == Format::float32)
      return convert(dst_, std::bit_cast<float>(static_cast<std::uint32_t>(x)), m.options, r);
    return convert_code(dst_, src_.format, from_storage(src_.format, static_cast<std::uint32_t>(x)),
                        m.options, r);
  }

  void compute(std::span<const std::uint64_t> in, std::span<std::uint64_t> out) const override {
    const std::uint64_t x = in[0];
    const std::uint32_t r = stochastic_ ? static_cast<std::uint32_t>(in[1]) : 0;
    if (x > max_word(src_.type())) invalid("x = 0x" + hex(x) + " is not a " + src_.name() + " value");
    for (std::size_t i = 0; i < modes_.size(); ++i) out[i] = to_storage(dst_, convert_one(modes_[i], x, r));
  }

  // Generation takes the span conversions (formats/bulk.h: the SIMD kernels for f32 inputs), which
  // verification (compute) does not: the two must agree.
  void compute_many(std::span<const std::uint64_t> in, std::size_t cases,
                    std::span<std::uint64_t> out) const override {
    const std::size_t ni = stochastic_ ? 2 : 1, no = modes_.size();
    std::vector<std::uint32_t> rbits;
    if (stochastic_) {
      for (std::size_t i = 0; i < cases; ++i) rbits.push_back(static_cast<std::uint32_t>(in[i * ni + 1]));
    }
    const int bits = info(dst_).storage_bits;
    for (std::size_t m = 0; m < no; ++m) {
      std::vector<std::uint64_t> res(cases);
      const ConvertOptions& o = modes_[m].options;
      if (!src_.is_f64 && src_.format == Format::float32) {
        std::vector<float> x(cases);
        for (std::size_t i = 0; i < cases; ++i)
          x[i] = std::bit_cast<float>(static_cast<std::uint32_t>(in[i * ni]));
        if (bits == 8) {
          std::vector<std::uint8_t> y(cases);
          convert(x, dst_, y, o, rbits);
          std::copy(y.begin(), y.end(), res.begin());
        } else if (bits == 16) {
          std::vector<std::uint16_t> y(cases);
          convert(x, dst_, y, o, rbits);
          std::copy(y.begin(), y.end(), res.begin());
        } else {
          std::vector<std::uint32_t> y(cases);
          convert(x, dst_, y, o, rbits);
          std::copy(y.begin(), y.end(), res.begin());
        }
      } else if (src_.is_f64 && bits == 8) {
        std::vector<double> x(cases);
        for (std::size_t i = 0; i < cases; ++i) x[i] = std::bit_cast<double>(in[i * ni]);
        std::vector<std::uint8_t> y(cases);
        convert(x, dst_, y, o, rbits);
        std::copy(y.begin(), y.end(), res.begin());
      } else if (!src_.is_f64 && bits == 8 && info(src_.format).storage_bits == 16) {
        std::vector<std::uint16_t> x(cases);
        for (std::size_t i = 0; i < cases; ++i) x[i] = static_cast<std::uint16_t>(in[i * ni]);
        std::vector<std::uint8_t> y(cases);
        convert(src_.format, x, dst_, y, o, rbits);
        std::copy(y.begin(), y.end(), res.begin());
      } else if (!src_.is_f64 && bits == 8 && info(src_.format).storage_bits == 8) {
        std::vector<std::uint8_t> x(cases);
        for (std::size_t i = 0; i < cases; ++i) x[i] = static_cast<std::uint8_t>(in[i * ni]);
        std::vector<std::uint8_t> y(cases);
        convert(src_.format, x, dst_, y, o, rbits);
        std::copy(y.begin(), y.end(), res.begin());
      } else {
        for (std::size_t i = 0; i < cases; ++i) {
          res[i] = to_storage(dst_, convert_one(modes_[m], in[i * ni], stochastic_ ? rbits[i] : 0));
        }
      }
      for (std::size_t i = 0; i < cases; ++i) out[i * no + m] = res[i];
    }
  }

  std::size_t default_cases() const override { return 512; }

  std::vector<std::uint64_t> generate_inputs(const GenerateOptions& o) const override {
    Rng rng(operation_seed(o.seed, id()));
    std::vector<std::uint64_t> xs;
    if (o.data == DataKind::edge || o.data == DataKind::mixed) {
      if (o.data == DataKind::edge && o.cases)
        invalid(id() + ": the edge set is a complete list; --cases applies to random and realistic data");
      xs = edge_inputs(src_, dst_, stochastic_);
    }
    const std::size_t extra = o.data == DataKind::edge ? 0 : case_count(o, default_cases());
    for (std::size_t i = 0; i < extra; ++i) {
      const bool realistic = o.data == DataKind::realistic || (o.data == DataKind::mixed && (i & 1));
      xs.push_back(realistic ? realistic_input(src_, dst_, rng) : random_input(src_, rng));
    }
    if (!stochastic_) return xs;
    // Each input with one drawn random word, and with the two words on either side of the round-up
    // threshold of a tie under both modes: 0x8000007F rounds a tie up with 32 bits (>= 2^31) and
    // down with 8 (0x7F + 0x80 < 0x100); 0x7FFFFF80 does the opposite.
    std::vector<std::uint64_t> out;
    for (std::uint64_t x : xs) {
      for (std::uint64_t r :
           {std::uint64_t{rng.u32()}, std::uint64_t{0x8000007Fu}, std::uint64_t{0x7FFFFF80u}}) {
        out.push_back(x);
        out.push_back(r);
      }
    }
    return out;
  }

 private:
  Source src_;
  Format dst_;
  bool stochastic_;
  std::vector<Mode> modes_;
};

// Every mode of every preset that offers (src, dst), deduplicated by options (first name wins).
std::vector<Mode> standard_modes(const Source& src, Format dst) {
  std::vector<Mode> modes;
  auto add = [&](std::string name, std::string preset) {
    const auto o = resolve_preset(preset, src, dst);
    if (!o) return;
    for (const Mode& m : modes) {
      if (m.options == *o) return;
    }
    modes.push_back({std::move(name), std::move(preset), *o});
  };
  for (Rounding r : {Rounding::nearest_even, Rounding::toward_zero, Rounding::upward, Rounding::downward,
                     Rounding::nearest_away}) {
    add("ieee_" + short_rounding(r), "ieee(" + to_string(r) + ")");
  }
  for (Rounding r : {Rounding::nearest_even, Rounding::toward_zero, Rounding::upward, Rounding::downward}) {
    for (Overflow o : {Overflow::saturate, Overflow::infinity, Overflow::ieee}) {
      add("cuda_" + short_rounding(r) + "_" + short_overflow(o),
          "cuda(rounding=" + to_string(r) + ",overflow=" + to_string(o) + ")");
    }
  }
  for (int sat = 0; sat < 2; ++sat) {
    for (int trunc = 0; trunc < 2; ++trunc) {
      add(std::string("ml_dtypes") + (sat ? "_sat" : "") + (trunc ? "_trunc" : ""),
          "ml_dtypes(saturate=" + std::to_string(sat) + ",truncate=" + std::to_string(trunc) + ")");
    }
  }
  return modes;
}

// Stochastic rounding as PTX cvt.rs.satfinite and TransformerEngine's fallback use it (8 random
// bits, saturating) and with a full 32-bit word and IEEE overflow.
std::vector<Mode> stochastic_modes(Format dst) {
  std::vector<Mode> modes;
  ConvertOptions a = presets::ieee(Rounding::stochastic);
  a.overflow = Overflow::saturate;
  a.stochastic_bits = 8;
  ConvertOptions b = presets::ieee(Rounding::stochastic);
  b.stochastic_bits = 32;
  for (auto& [name, o] : {std::pair{std::string("rs8_sat"), a}, std::pair{std::string("rs32_ieee"), b}}) {
    try {
      validate(dst, o);
      modes.push_back({name, "none", o});
    } catch (const std::invalid_argument&) {
    }
  }
  return modes;
}

std::unique_ptr<ConversionOp> make_conversion(const Source& src, Format dst, bool stochastic) {
  std::vector<Mode> modes = stochastic ? stochastic_modes(dst) : standard_modes(src, dst);
  if (modes.empty()) {
    invalid("no preset offers " + std::string(stochastic ? "stochastic " : "") + "conversion " + src.name() +
            " -> " + info(dst).short_name);
  }
  return std::make_unique<ConversionOp>(src, dst, stochastic, std::move(modes));
}

bool narrow(Format f) { return info(f).storage_bits == 8; }

}  // namespace

std::unique_ptr<Operation> conversion_from_id(std::string_view rest) {
  const auto parts = split(rest, ':');
  if (parts.size() < 2 || parts.size() > 3 || (parts.size() == 3 && parts[2] != "stochastic")) {
    invalid("conversion id " + quote(rest) + " is not <src>:<dst> or <src>:<dst>:stochastic");
  }
  const auto src = parse_source(parts[0]);
  if (!src)
    invalid("unknown source format " + quote(parts[0]) +
            " (a format short name such as f32, bf16, e4m3, or f64)");
  const auto dst = parse_element_type(parts[1]);
  if (!dst || dst->word != WordType::code) invalid("unknown destination format " + quote(parts[1]));
  if (!src->is_f64 && src->format == dst->format) invalid("source and destination are both " + parts[1]);
  return make_conversion(*src, dst->format, parts.size() == 3);
}

std::unique_ptr<Operation> conversion_from_file(const GoldenFile& f) {
  const Header& h = f.header;
  if (h.ops.size() != 1) fail_op(f, 1, "a conversion file has exactly one @op line");
  const auto parts = split(h.ops[0], ' ');
  if (parts.size() != 3 || parts[0] != "convert")
    fail_op(f, 0, "expected '@op convert <src> <dst>', got " + quote(h.ops[0]));
  const auto src = parse_source(parts[1]);
  if (!src) fail_op(f, 0, "unknown source format " + quote(parts[1]));
  const auto dst = parse_element_type(parts[2]);
  if (!dst || dst->word != WordType::code) fail_op(f, 0, "unknown destination format " + quote(parts[2]));
  if (!src->is_f64 && src->format == dst->format) fail_op(f, 0, "source and destination are the same format");
  if (h.modes.empty()) throw GoldenError(f.name, 0, "a conversion file needs at least one @mode line");
  std::vector<Mode> modes;
  bool any_stochastic = false, all_stochastic = true;
  for (std::size_t i = 0; i < h.modes.size(); ++i) {
    const std::size_t line = i < h.mode_lines.size() ? h.mode_lines[i] : 0;
    try {
      const auto toks = split(h.modes[i], ' ');
      Mode m;
      m.name = toks[0];
      std::map<std::string, std::string> kv;
      for (std::size_t t = 1; t < toks.size(); ++t) {
        const std::size_t eq = toks[t].find('=');
        if (eq == std::string::npos) invalid("token " + quote(toks[t]) + " is not key=value");
        const std::string key = toks[t].substr(0, eq);
        if (!kv.emplace(key, toks[t].substr(eq + 1)).second) invalid("key " + quote(key) + " appears twice");
      }
      const auto pit = kv.find("preset");
      if (pit == kv.end()) invalid("missing preset=");
      m.preset = pit->second;
      kv.erase(pit);
      for (const auto& [k, v] : kv) {
        static const std::set<std::string> known = {
            "rounding", "overflow", "nan", "zero", "negative", "sr_bits", "e8m0_subnormal_grid"};
        if (!known.count(k)) invalid("unknown key " + quote(k));
      }
      m.options = parse_options(kv, "");
      validate(dst->format, m.options);
      if (m.preset != "none") {
        const auto expect = resolve_preset(m.preset, *src, dst->format);
        if (!expect)
          invalid("preset " + quote(m.preset) + " does not offer " + src->name() + " -> " + parts[2]);
        if (!(*expect == m.options)) {
          invalid("the options differ from what " + m.preset + " gives now: " + options_string(*expect, ""));
        }
      }
      any_stochastic |= m.options.rounding == Rounding::stochastic;
      all_stochastic &= m.options.rounding == Rounding::stochastic;
      modes.push_back(std::move(m));
    } catch (const std::invalid_argument& e) {
      throw GoldenError(f.name, line, std::string("@mode: ") + e.what());
    }
  }
  if (any_stochastic && !all_stochastic) {
    throw GoldenError(
        f.name, h.mode_lines.empty() ? 0 : h.mode_lines[0],
        "stochastic and deterministic modes cannot share a file (the r column is all or nothing)");
  }
  auto op = std::make_unique<ConversionOp>(*src, dst->format, any_stochastic, std::move(modes));
  check_fields(f, op->fields());
  return op;
}

std::vector<std::unique_ptr<Operation>> conversion_family() {
  std::vector<std::unique_ptr<Operation>> out;
  std::vector<Format> dsts;
  for (const FormatInfo& fi : kFormatTable) dsts.push_back(fi.id);
  const Source f32{false, Format::float32}, f64{true, Format::float32};
  const Source f16{false, Format::float16}, bf16{false, Format::bfloat16};
  for (const Source& src : {f32, f64, f16, bf16}) {
    for (Format dst : dsts) {
      if (!src.is_f64 && dst == src.format) continue;
      if (dst == Format::float32 && !src.is_f64) continue;
      // Half and bfloat16 sources: to the narrow formats only.
      if (!src.is_f64 && src.format != Format::float32 && !narrow(dst)) continue;
      out.push_back(make_conversion(src, dst, false));
    }
  }
  for (Format dst : {Format::float4_e2m1fn, Format::float6_e2m3fn, Format::float6_e3m2fn,
                     Format::float8_e4m3fn, Format::float8_e5m2, Format::float16, Format::bfloat16}) {
    out.push_back(make_conversion(f32, dst, true));
  }
  return out;
}

}  // namespace blockscale::golden::detail
