// SPDX-License-Identifier: Apache-2.0
#include "fast_panels.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <map>
#include <mutex>
#include <stdexcept>
#include <vector>

#include "blockscale/formats/convert.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace blockscale::emulator::fast {

namespace {

enum ElementKind : std::uint8_t { kNonzero, kZero, kNaN, kInf };

struct ElementCode {
  float val;          // exact value; 0 for zero and specials
  std::int16_t exp;   // e(x) (numerics.md b.1); kNoExp for zero and specials
  std::int16_t lsb;   // exponent of the lowest set bit of x; kNoExp for zero and specials
  std::int8_t twice;  // 2x for e2m1 (an integer), else 0
  std::uint8_t kind;
  std::uint16_t eb;    // exp_lsb_pair (below)
  std::int32_t exp2;   // exp twice in an int32 (pack_exp)
};

using ElementTable = std::array<ElementCode, 256>;

// The byte pair of an element for the AVX-512 bounds pass (fast_panels.h: a_eb, b_eb): e(x) + 96
// and -lsb(x) + 96 as unsigned bytes, both 0 for a zero or special element.
std::uint16_t exp_lsb_pair(const ElementCode& e) {
  if (e.kind != kNonzero) return 0;
  return static_cast<std::uint16_t>(static_cast<std::uint8_t>(e.exp + kEbBias) | (static_cast<std::uint8_t>(-e.lsb + kEbBias) << 8));
}

std::int32_t pack_exp(std::int16_t e) {
  const auto u = static_cast<std::uint16_t>(e);
  return static_cast<std::int32_t>(static_cast<std::uint32_t>(u) | (static_cast<std::uint32_t>(u) << 16));
}

// The decoding of one code of format f (numerics.md b.1). eb is meaningful for the narrow
// formats only (e(x) and lsb(x) in -16..16); the wide ones never read it.
ElementCode element_code(Format f, std::uint32_t code) {
  const Decomposed d = decompose(f, code);
  ElementCode e{0.0f, kNoExp, kNoExp, 0, kZero, 0, pack_exp(kNoExp)};
  if (d.kind == Decomposed::nan) e.kind = kNaN;
  if (d.kind == Decomposed::infinite) e.kind = kInf;
  if (d.kind != Decomposed::finite) return e;
  // d.exp is the exponent of the significand's last bit; e(x) adds the fraction bits back.
  const double v = std::ldexp(static_cast<double>(d.sig), d.exp) * (d.negative ? -1.0 : 1.0);
  // Assembled from the bits, not converted from v: the decoders run on OpenMP threads in the
  // caller's mode, and under FTZ the conversion flushes a bf16 or tf32 subnormal to 0 (the bf16
  // table, built once, would keep the zero for the life of the process).
  e.val = to_float(f, code);
  e.exp = static_cast<std::int16_t>(d.exp + info(f).mantissa_bits);
  e.lsb = static_cast<std::int16_t>(d.exp + std::countr_zero(d.sig));
  e.twice = f == Format::float4_e2m1fn ? static_cast<std::int8_t>(2.0 * v) : std::int8_t{0};
  e.kind = kNonzero;
  e.eb = exp_lsb_pair(e);
  e.exp2 = pack_exp(e.exp);
  return e;
}

ElementTable make_table(Format f) {
  ElementTable t{};
  const std::uint32_t mask = code_mask(f);
  for (std::uint32_t w = 0; w < 256; ++w) t[w] = element_code(f, w & mask);
  return t;
}

const ElementTable& element_table(Format f) {
  static const std::array<ElementTable, kFormatCount> tables = [] {
    std::array<ElementTable, kFormatCount> all{};
    for (const FormatInfo& fi : kFormatTable) {
      if (narrow_operand(fi.id)) all[static_cast<int>(fi.id)] = make_table(fi.id);
    }
    return all;
  }();
  return tables[static_cast<int>(f)];
}

// The elements of a narrow operand by byte code, and of a wide one by storage word (fast_panels.h):
// f16 and bf16 through a table of their 65,536 codes (1 MiB, built at first use), tf32 (2^19
// codes) decomposed per element.
struct ByteElements {
  const ElementTable* table;
  const ElementCode& operator()(std::uint8_t code) const { return (*table)[code]; }
};
struct WideElements {
  Format f;
  const ElementCode* table;  // nullptr: decomposed per element
  ElementCode operator()(std::uint32_t word) const {
    const std::uint32_t code = from_storage(f, word);  // tf32: the fp32 pattern truncated (b.1)
    return table != nullptr ? table[code] : element_code(f, code);
  }
};

WideElements wide_elements(Format f) {
  if (info(f).storage_bits != 16) return {f, nullptr};
  static std::mutex guard;
  static std::map<Format, std::vector<ElementCode>> tables;
  const std::lock_guard<std::mutex> lock(guard);
  auto [at, added] = tables.try_emplace(f);
  if (added) {
    at->second.resize(std::size_t{1} << 16);
    for (std::uint32_t code = 0; code < (1u << 16); ++code) at->second[code] = element_code(f, code);
  }
  return {f, at->second.data()};
}

// The element tables of a format in the form of DecodeTables (fast_panels.h): values and eb words.
struct CodeTables {
  std::array<float, 256> val;
  std::array<std::uint32_t, 256> eb;
  std::array<std::uint8_t, 4 * 256> planes;
};

const CodeTables& code_tables(Format f) {
  static const std::array<CodeTables, kFormatCount> tables = [] {
    std::array<CodeTables, kFormatCount> all{};
    for (const FormatInfo& fi : kFormatTable) {
      if (!narrow_operand(fi.id)) continue;
      const ElementTable& t = element_table(fi.id);
      CodeTables& c = all[static_cast<int>(fi.id)];
      for (std::size_t code = 0; code < 256; ++code) {
        c.val[code] = t[code].val;
        c.eb[code] = t[code].kind == kNaN   ? kEbWordNaN
                     : t[code].kind == kInf ? kEbWordInf
                                            : static_cast<std::uint32_t>(t[code].eb) * 0x10001u;
        // (convert rounds to nearest; every value here is an fp16 exactly.)
        const std::uint32_t half = convert(Format::float16, c.val[code]);
        c.planes[kPlaneHalfLo + code] = static_cast<std::uint8_t>(half);
        c.planes[kPlaneHalfHi + code] = static_cast<std::uint8_t>(half >> 8);
        c.planes[kPlaneE + code] = static_cast<std::uint8_t>(c.eb[code]);
        c.planes[kPlaneLsb + code] = static_cast<std::uint8_t>(c.eb[code] >> 8);
      }
    }
    return all;
  }();
  return tables[static_cast<int>(f)];
}

// Copies n words of m, the i-th at word index base + i * step, to out (the word width switch
// hoisted out of the loop). Code: std::uint8_t for the narrow operands (codes of at most 8 bits),
// std::uint32_t for the wide ones (the storage words, which the decoder reads with from_storage).
template <class Code>
void read_codes(const CodeMatrix& m, std::size_t base, std::size_t step, std::size_t n, Code* out) {
  if (n == 0) return;  // K = 0: out may be null, which memcpy must not get even for no bytes
  if constexpr (sizeof(Code) == 1) {
    if (m.word_bits() == 8 && step == 1) {
      std::memcpy(out, static_cast<const std::uint8_t*>(m.data()) + base, n);
      return;
    }
  }
  const auto copy = [&](const auto* w) {
    for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<Code>(w[base + i * step]);
  };
  switch (m.word_bits()) {
    case 8: copy(static_cast<const std::uint8_t*>(m.data())); break;
    case 16: copy(static_cast<const std::uint16_t*>(m.data())); break;
    default: copy(static_cast<const std::uint32_t*>(m.data())); break;
  }
}

// Row i of A's codes (read_codes: bytes or storage words) into `codes` (padded K entries), K padded
// with code 0 (+0 in every format); rows at or beyond M (the padding to whole tiles) are all code 0.
template <class Code>
void row_codes(const CodeMatrix& a, std::size_t i, std::size_t padded, std::vector<Code>& codes) {
  codes.assign(padded, 0);
  if (i < a.rows()) read_codes(a, i * a.row_stride(), a.col_stride(), a.cols(), codes.data());
}

// The codes of B's strip st (columns st W .. st W + W - 1) k-major ([k][W]) into `codes`, which
// holds zeros (the padding of K and N); bytes or storage words as in read_codes. Byte codes of
// full strips are copied in blocks: a row of B at once where B is row-major, 16 x 16 transposes
// where it is K-major (as quantized tensors are); anything else element by element.
template <class Code>
void strip_codes(const CodeMatrix& b, std::size_t st, Code* codes) {
  constexpr std::size_t W = kTfdpaWidth;
  const std::size_t K = b.rows(), N = b.cols();
  std::size_t k0 = 0;  // codes of k < k0 already written
  if constexpr (sizeof(Code) == 1) {
    const auto* bytes = static_cast<const std::uint8_t*>(b.data());
    if (b.word_bits() == 8 && (st + 1) * W <= N) {
      if (b.col_stride() == 1) {
        for (std::size_t k = 0; k < K; ++k) std::memcpy(codes + k * W, bytes + k * b.row_stride() + st * W, W);
        return;
      }
#if defined(__SSE2__)
      if (b.row_stride() == 1) {
        // Four rounds of unpacks (bytes, then 2, 4 and 8 bytes) transpose 16 columns x 16 k; they
        // leave row k in register bitreverse4(k).
        constexpr int kRowOf[16] = {0, 8, 4, 12, 2, 10, 6, 14, 1, 9, 5, 13, 3, 11, 7, 15};
        for (; k0 + 16 <= K; k0 += 16) {
          for (std::size_t g = 0; g < W; g += 16) {
            __m128i x[16], y[16];
            for (std::size_t j = 0; j < 16; ++j) {
              x[j] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(bytes + (st * W + g + j) * b.col_stride() + k0));
            }
            for (int round = 0; round < 4; ++round) {
              for (int i = 0; i < 8; ++i) {
                switch (round) {
                  case 0: y[i] = _mm_unpacklo_epi8(x[2 * i], x[2 * i + 1]); y[i + 8] = _mm_unpackhi_epi8(x[2 * i], x[2 * i + 1]); break;
                  case 1: y[i] = _mm_unpacklo_epi16(x[2 * i], x[2 * i + 1]); y[i + 8] = _mm_unpackhi_epi16(x[2 * i], x[2 * i + 1]); break;
                  case 2: y[i] = _mm_unpacklo_epi32(x[2 * i], x[2 * i + 1]); y[i + 8] = _mm_unpackhi_epi32(x[2 * i], x[2 * i + 1]); break;
                  default: y[i] = _mm_unpacklo_epi64(x[2 * i], x[2 * i + 1]); y[i + 8] = _mm_unpackhi_epi64(x[2 * i], x[2 * i + 1]); break;
                }
              }
              std::copy(y, y + 16, x);
            }
            for (std::size_t r = 0; r < 16; ++r) {
              _mm_storeu_si128(reinterpret_cast<__m128i*>(codes + (k0 + static_cast<std::size_t>(kRowOf[r])) * W + g), x[r]);
            }
          }
        }
      }
#endif
    }
  }
  for (std::size_t j = 0; j < W && st * W + j < N; ++j) {
    for (std::size_t k = k0; k < K; ++k) codes[k * W + j] = static_cast<Code>(b.word(k, st * W + j));
  }
}

// A decoded block scale: value, exponent e(scale), zero, NaN.
struct Scale {
  double val = 1.0;
  int exp = 0;
  bool zero = false, nan = false;
};

Scale decode_scale(Format f, std::uint32_t code) {
  Scale s;
  if (f == Format::float8_e8m0fnu) {
    // ue8m0: 2^(code - 127), 0xFF NaN (OCP MX v1.0 §5.4.1).
    s.nan = code == 0xFF;
    s.exp = static_cast<int>(code) - 127;
    s.val = std::ldexp(1.0, s.exp);
    return s;
  }
  // ue4m3: bit 7 ignored (numerics.md b.5 step 3), 0x7F NaN, e4m3 decoding otherwise.
  const Decomposed d = decompose(Format::float8_ue4m3, code & 0x7Fu);
  s.nan = d.kind == Decomposed::nan;
  s.zero = d.kind == Decomposed::zero;
  if (d.kind == Decomposed::finite) {
    s.exp = d.exp + 3;
    s.val = std::ldexp(static_cast<double>(d.sig), d.exp);
  }
  return s;
}

}  // namespace

namespace {
// Every buffer of a set of panels, passed to f (one list for the byte counts below).
template <class F>
std::size_t over_buffers(const TfdpaPanels& p, F&& f) {
  return f(p.a_val, p.a_dval, p.a_exp2, p.a_eb, p.a_ee, p.a_e8, p.a_lo, p.a_hi, p.a_sexp, p.a_flags, p.b_val, p.b_dval,
           p.b_exp, p.b_eb, p.b_ee, p.b_e8, p.b_lo, p.b_hi, p.b_sexp, p.b_nan, p.b_inf, p.a_h, p.b_h, p.a_hmax, p.b_hmax);
}
template <class F>
std::size_t over_buffers(const GstPanels& p, F&& f) {
  return f(p.a_q, p.a_init, p.a_nz, p.a_ehi, p.a_elo, p.a_sv, p.a_flags, p.a_step_hi, p.a_step_lo, p.b_q, p.b_nz, p.b_ehi,
           p.b_elo, p.b_sv, p.b_nan, p.b_step_hi, p.b_step_lo);
}
constexpr auto kCapacityBytes = [](const auto&... b) { return ((b.capacity() * sizeof(*b.data())) + ...); };
constexpr auto kSizeBytes = [](const auto&... b) { return ((b.size() * sizeof(*b.data())) + ...); };
}  // namespace

std::size_t storage_bytes(const TfdpaPanels& p) { return over_buffers(p, kCapacityBytes); }
std::size_t storage_bytes(const GstPanels& p) { return over_buffers(p, kCapacityBytes); }
std::size_t panel_bytes(const TfdpaPanels& p) { return over_buffers(p, kSizeBytes); }
std::size_t panel_bytes(const GstPanels& p) { return over_buffers(p, kSizeBytes); }

namespace {

// v (a normal float) as IEEE binary16 bits, or kInexactHalf when v is not exactly representable
// there.
std::uint16_t half_bits(float v) {
  const auto bits = std::bit_cast<std::uint32_t>(v);
  const auto sign = static_cast<std::uint16_t>((bits >> 16) & 0x8000u);
  const int e = static_cast<int>((bits >> 23) & 0xFFu) - 127;
  const std::uint32_t sig = (bits & 0x7FFFFFu) | 0x800000u;  // 24 bits, value sig 2^(e - 23)
  if (e > 15) return kInexactHalf;
  if (e >= -14) {  // normal: 10 fraction bits
    if ((sig & 0x1FFFu) != 0) return kInexactHalf;
    return static_cast<std::uint16_t>(sign | ((e + 15) << 10) | ((sig >> 13) & 0x3FFu));
  }
  const int drop = -e - 1;  // subnormal: value m 2^-24 with m = sig 2^(e + 1)
  if (drop >= 24 || (sig & ((1u << drop) - 1u)) != 0) return kInexactHalf;
  return static_cast<std::uint16_t>(sign | (sig >> drop));
}

// The fp16 panel values of every code of a format, scaled by 2^(offset - ea) for each largest
// exponent ea of a step (-16..16: e(x) of every format of at most 8 bits lies there): 0 for a zero
// or special element, kInexactHalf where the scaled value is not exact in fp16. Built once per
// format and offset (half_table): a call's two tables take about 85 us to build on the
// development VM, twenty times the decoding of a 4 x 32 x 32 GEMM.
class HalfTable {
 public:
  static constexpr int kLowest = kHalfRowLowest, kHighest = kHalfRowLowest + kHalfRows - 1;
  // DecodeTables::half: the rows, then one zero entry for the vector gathers.
  HalfTable(const ElementTable& t, int offset) : bits_(static_cast<std::size_t>(kHalfRows) * 256 + 1, 0) {
    for (int ea = kLowest; ea <= kHighest; ++ea) {
      const float scale = std::ldexp(1.0f, offset - ea);
      for (std::size_t code = 0; code < 256; ++code) {
        const ElementCode& e = t[code];
        bits_[static_cast<std::size_t>(ea - kLowest) * 256 + code] = e.kind == kNonzero ? half_bits(e.val * scale) : 0;
      }
    }
  }
  // The row of a step whose largest e(x) is ea (kNoExp: a step without a nonzero element, whose
  // codes all give 0 in any row).
  const std::uint16_t* row(std::int16_t ea) const { return &bits_[half_row_start(ea)]; }
  const std::uint16_t* data() const { return bits_.data(); }

 private:
  std::vector<std::uint16_t> bits_;
};

// The HalfTable of format f and offset, built at first use. A node map keeps each table where it
// is while others are added; decode_tfdpa looks its two up once per call, outside the threads.
const HalfTable& half_table(Format f, int offset) {
  static std::mutex guard;
  static std::map<std::pair<Format, int>, HalfTable> tables;
  const std::lock_guard<std::mutex> lock(guard);
  return tables.try_emplace({f, offset}, element_table(f), offset).first->second;
}

// The scalar element work of decode_tfdpa (DecodeARowFn / DecodeBStripFn of fast_panels.h), for
// either kind of bounds; `half` is the fp16 table or nullptr. Narrow operands: byte codes and
// ByteElements; wide ones: storage words and WideElements (exponent bounds, no fp16 panels).
template <class Code, class Elements>
bool decode_a_row(const Elements& ta, const HalfTable* half, TfdpaBounds bounds, const Code* codes, std::size_t i,
                  TfdpaPanels& P) {
  const bool exps = bounds == TfdpaBounds::exponents;
  const auto uL = static_cast<std::size_t>(P.L);
  const bool dvals = !P.a_dval.empty();
  bool any_inf = false;
  for (std::size_t s = 0; s < P.steps; ++s) {
    std::int16_t lo = kNoExpHigh, hi = kNoExp;
    std::uint8_t flags = 0;
    for (std::size_t k = s * uL; k < (s + 1) * uL; ++k) {
      const ElementCode& e = ta(codes[k]);
      const std::size_t at = i * P.k + k;
      P.a_val[at] = e.val;
      if (dvals) P.a_dval[at] = e.val;
      if (exps) {
        P.a_exp2[at] = e.exp2;
      } else if (half != nullptr) {
        // This row's bytes of the pair's word (fast_panels.h, ee).
        auto* word = reinterpret_cast<std::uint8_t*>(&P.a_ee[(i / 2) * P.k + k]);
        word[i % 2] = word[i % 2 + 2] = static_cast<std::uint8_t>(e.eb & 0xFFu);
      } else if (bounds == TfdpaBounds::exponent_bytes) {
        P.a_e8[at] = static_cast<std::int32_t>((e.eb & 0xFFu) * 0x01010101u);
      } else {
        P.a_eb[at] = static_cast<std::int32_t>(e.eb | (static_cast<std::uint32_t>(e.eb) << 16));
      }
      if (e.kind == kNonzero) {
        lo = std::min(lo, e.exp);
        hi = std::max(hi, e.exp);
      }
      if (e.kind == kNaN) flags |= kHasNaN;
      if (e.kind == kInf) flags |= kHasInf;
    }
    const std::size_t at = i * P.steps + s;
    if (exps) {
      P.a_lo[at] = lo;
      P.a_hi[at] = hi;
    }
    if constexpr (sizeof(Code) == 1) {  // the fp16 panels: narrow operands only
      if (half != nullptr) {
        // a 2^(F - ea) as fp16 (fast_panels.h, h); an inexact one rules the step out.
        const std::uint16_t* row = half->row(hi);
        bool exact = true;
        for (std::size_t k = s * uL; k < (s + 1) * uL; ++k) {
          const std::uint16_t v = row[codes[k]];
          exact = exact && v != kInexactHalf;
          P.a_h[i * P.k + k] = v;
        }
        P.a_hmax[at] = exact ? hi : kNoExpHigh;
      }
    }
    P.a_flags[at] = flags;
    any_inf = any_inf || (flags & kHasInf) != 0;
  }
  return any_inf;
}

template <class Code, class Elements>
bool decode_b_strip(const Elements& tb, const HalfTable* half, TfdpaBounds bounds, const Code* codes, std::size_t st,
                    TfdpaPanels& P) {
  const bool exps = bounds == TfdpaBounds::exponents;
  constexpr std::size_t W = kTfdpaWidth;
  const auto uL = static_cast<std::size_t>(P.L);
  const bool dvals = !P.b_dval.empty();
  bool any_inf = false;
  for (std::size_t s = 0; s < P.steps; ++s) {
    std::uint32_t nan = 0, inf = 0;
    std::int16_t lo[W], hi[W];
    std::fill(lo, lo + W, kNoExpHigh);
    std::fill(hi, hi + W, kNoExp);
    for (std::size_t k = s * uL; k < (s + 1) * uL; ++k) {
      for (std::size_t j = 0; j < W; ++j) {
        const ElementCode& e = tb(codes[k * W + j]);
        const std::size_t at = (st * P.k + k) * W + j;
        P.b_val[at] = e.val;
        if (dvals) P.b_dval[at] = e.val;
        if (exps) {
          P.b_exp[at] = e.exp;
        } else if (half != nullptr) {
          P.b_ee[at] = static_cast<std::int16_t>((e.eb & 0xFFu) * 0x101u);
        } else if (bounds == TfdpaBounds::exponent_bytes) {
          P.b_e8[at] = static_cast<std::uint8_t>(e.eb & 0xFFu);
        } else {
          P.b_eb[at] = static_cast<std::int16_t>(e.eb);
        }
        if (e.kind == kNonzero) {
          lo[j] = std::min(lo[j], e.exp);
          hi[j] = std::max(hi[j], e.exp);
        }
        if (e.kind == kNaN) nan |= 1u << j;
        if (e.kind == kInf) inf |= 1u << j;
      }
    }
    for (std::size_t j = 0; j < W; ++j) {
      const std::size_t at = (st * P.steps + s) * W + j;
      if (exps) {
        P.b_lo[at] = lo[j];
        P.b_hi[at] = hi[j];
      }
      if constexpr (sizeof(Code) == 1) {  // the fp16 panels: narrow operands only
        if (half != nullptr) {
          // b 2^-eb as fp16, pairs of k interleaved: element k at [k / 2][j][k % 2] of the strip.
          const std::uint16_t* row = half->row(hi[j]);
          bool exact = true;
          for (std::size_t k = s * uL; k < (s + 1) * uL; ++k) {
            const std::uint16_t v = row[codes[k * W + j]];
            exact = exact && v != kInexactHalf;
            P.b_h[(st * P.k + (k & ~std::size_t{1})) * W + 2 * j + (k & 1)] = v;
          }
          P.b_hmax[at] = exact ? hi[j] : kNoExpHigh;
        }
      }
    }
    P.b_nan[st * P.steps + s] = nan;
    P.b_inf[st * P.steps + s] = inf;
    any_inf = any_inf || inf != 0;
  }
  return any_inf;
}

}  // namespace

bool narrow_operand(Format f) {
  const FormatInfo& fi = info(f);
  return fi.storage_bits == 8 && fi.is_signed && fi.code_shift == 0;
}

void decode_tfdpa(const GemmOperands& ops, int L, std::size_t padded, bool scaled, TfdpaBounds bounds, int fp16_F,
                  int threads, TfdpaPanels& P, const TfdpaDecoder& decoder) {
  constexpr std::size_t W = kTfdpaWidth;
  const std::size_t M = ops.a.rows(), N = ops.b.cols();
  const auto uL = static_cast<std::size_t>(L);
  P.L = L;
  P.k = padded;
  P.steps = padded / uL;
  P.rows = (M + kRows - 1) / kRows * kRows;
  P.strips = (N + W - 1) / W;
  P.frac_a = info(ops.a.format()).mantissa_bits;
  P.frac_b = info(ops.b.format()).mantissa_bits;
  P.scaled = scaled;
  P.fp16_F = fp16_F;
  const bool wide = !narrow_operand(ops.a.format()) || !narrow_operand(ops.b.format());
  if (wide && (bounds != TfdpaBounds::exponents || fp16_F != 0 || scaled)) {
    throw std::logic_error("decode_tfdpa: f16 / bf16 / tf32 operands take exponent bounds, no fp16 panels and no scales");
  }
  if (fp16_F != 0 && bounds != TfdpaBounds::byte_pairs) {
    throw std::logic_error("decode_tfdpa: the fp16 panels come with byte-pair bounds (their e bytes are ee)");
  }
  P.double_terms = info(ops.a.format()).exponent_bits > 5 || info(ops.b.format()).exponent_bits > 5;
  const ByteElements ta{&element_table(ops.a.format())}, tb{&element_table(ops.b.format())};
  const WideElements wa = wide ? wide_elements(ops.a.format()) : WideElements{};
  const WideElements wb = wide ? wide_elements(ops.b.format()) : WideElements{};
  const bool h = fp16_F != 0;
  const HalfTable* ha = h ? &half_table(ops.a.format(), fp16_F) : nullptr;
  const HalfTable* hb = h ? &half_table(ops.b.format(), 0) : nullptr;
  const std::size_t scale_blocks = scaled ? ops.scale_a.cols() : 0;
  const bool exps = bounds == TfdpaBounds::exponents;
  const bool e8 = bounds == TfdpaBounds::exponent_bytes;
  const bool covered = !exps && bounds == decoder.bounds && (!h || decoder.fp16_panels);
  const bool vector_a = covered && decoder.a_row != nullptr && uL % decoder.a_row_lanes == 0;
  const bool vector_b = covered && decoder.b_strip != nullptr;
  // (Wide A rows: the AVX-512 decoder's masked reductions take steps within one 16-lane vector.)
  const bool vector_wide_a = decoder.wide_row != nullptr && 16 % uL == 0 && uL % decoder.a_row_lanes == 0;
  const bool vector_wide_b = decoder.wide_strip != nullptr;
  const CodeTables &ca = code_tables(ops.a.format()), &cb = code_tables(ops.b.format());
  const DecodeTables vta{ca.val.data(), ca.eb.data(), ha != nullptr ? ha->data() : nullptr, ca.planes.data()};
  const DecodeTables vtb{cb.val.data(), cb.eb.data(), hb != nullptr ? hb->data() : nullptr, cb.planes.data()};
  // Sized when decoded, else emptied (the storage stays for later calls).
  const auto size = [](auto& buffer, bool decoded, std::size_t n) {
    if (decoded) {
      buffer.resize(n);
    } else {
      buffer.clear();
    }
  };

  P.a_val.resize(P.rows * P.k);
  // With the fp16 panels every tile takes the float form (fast_kernels_avx512.cpp), as it does
  // with e8 bounds (the AVX2 kernel), and the wide operands' kernels convert their fp32 values as
  // they read them: no fp64 values. Nor for a kernel set that widens its own K chunks.
  const bool dvals = !h && !e8 && !wide && decoder.fp64_panels;
  size(P.a_dval, dvals, P.rows * P.k);
  size(P.a_exp2, exps, P.rows * P.k);
  size(P.a_eb, bounds == TfdpaBounds::byte_pairs && !h, P.rows * P.k);
  size(P.a_ee, h, P.rows / 2 * P.k);
  size(P.a_e8, e8, P.rows * P.k);
  size(P.a_lo, exps, P.rows * P.steps);
  size(P.a_hi, exps, P.rows * P.steps);
  P.a_sexp.resize(P.rows * P.steps);
  P.a_flags.resize(P.rows * P.steps);
  size(P.a_h, h, P.rows * P.k);
  size(P.a_hmax, h, P.rows * P.steps);
  bool any_inf = false;
#if defined(BLOCKSCALE_HAVE_OPENMP)
#pragma omp parallel for schedule(static) num_threads(threads) reduction(|| : any_inf)
#endif
  for (std::size_t i = 0; i < P.rows; ++i) {
    bool inf = false;
    if (wide) {
      std::vector<std::uint32_t> words;
      row_codes(ops.a, i, P.k, words);
      inf = vector_wide_a ? decoder.wide_row(ops.a.format(), words.data(), i, P)
                          : decode_a_row(wa, nullptr, bounds, words.data(), i, P);
    } else {
      std::vector<std::uint8_t> codes;
      row_codes(ops.a, i, P.k, codes);
      inf = vector_a ? decoder.a_row(vta, codes.data(), i, P) : decode_a_row(ta, ha, bounds, codes.data(), i, P);
    }
    any_inf = any_inf || inf;
    for (std::size_t s = 0; s < P.steps; ++s) {
      std::int32_t sexp = 0;
      if (scaled && i < M && s < scale_blocks) {
        const std::uint32_t code = ops.scale_a.word(i, s) & 0xFFu;
        if (code == 0xFF) P.a_flags[i * P.steps + s] |= kHasNaN;
        sexp = static_cast<std::int32_t>(code) - 127;
      }
      P.a_sexp[i * P.steps + s] = sexp;
    }
  }

  P.b_val.resize(P.strips * P.k * W);
  size(P.b_dval, dvals, P.strips * P.k * W);
  size(P.b_exp, exps, P.strips * P.k * W);
  size(P.b_eb, bounds == TfdpaBounds::byte_pairs && !h, P.strips * P.k * W);
  size(P.b_ee, h, P.strips * P.k * W);
  size(P.b_e8, e8, P.strips * P.k * W);
  size(P.b_lo, exps, P.strips * P.steps * W);
  size(P.b_hi, exps, P.strips * P.steps * W);
  P.b_sexp.resize(P.strips * P.steps * W);
  P.b_nan.resize(P.strips * P.steps);
  P.b_inf.resize(P.strips * P.steps);
  size(P.b_h, h, P.strips * P.k * W);
  size(P.b_hmax, h, P.strips * P.steps * W);
#if defined(BLOCKSCALE_HAVE_OPENMP)
#pragma omp parallel for schedule(static) num_threads(threads) reduction(|| : any_inf)
#endif
  for (std::size_t st = 0; st < P.strips; ++st) {
    // The strip's codes k-major ([k][W]), K and N padded with code 0; written in panel order.
    bool inf = false;
    if (wide) {
      std::vector<std::uint32_t> words(P.k * W, 0);
      strip_codes(ops.b, st, words.data());
      inf = vector_wide_b ? decoder.wide_strip(ops.b.format(), words.data(), st, P)
                          : decode_b_strip(wb, nullptr, bounds, words.data(), st, P);
    } else {
      std::vector<std::uint8_t> codes(P.k * W, 0);
      strip_codes(ops.b, st, codes.data());
      inf = vector_b ? decoder.b_strip(vtb, codes.data(), st, P) : decode_b_strip(tb, hb, bounds, codes.data(), st, P);
    }
    any_inf = any_inf || inf;
    for (std::size_t s = 0; s < P.steps; ++s) {
      for (std::size_t j = 0; j < W; ++j) {
        const std::size_t col = st * W + j;
        std::int32_t sexp = 0;
        if (scaled && col < N && s < scale_blocks) {
          const std::uint32_t code = ops.scale_b.word(s, col) & 0xFFu;
          if (code == 0xFF) P.b_nan[st * P.steps + s] |= 1u << j;
          sexp = static_cast<std::int32_t>(code) - 127;
        }
        P.b_sexp[(st * P.steps + s) * W + j] = sexp;
      }
    }
  }
  P.any_inf = any_inf;
#if !defined(BLOCKSCALE_HAVE_OPENMP)
  (void)threads;
#endif
}

namespace {

// e2m1 per code byte (the element table masks the code): 2x as an int8 (an integer, -12..12) and
// whether the element is nonzero.
struct GstCodes {
  std::array<std::int8_t, 256> twice;
  std::array<std::uint8_t, 256> nonzero;
};
GstCodes gst_codes(const ElementTable& t) {
  GstCodes g{};
  for (std::size_t code = 0; code < 256; ++code) {
    g.twice[code] = t[code].twice;
    g.nonzero[code] = t[code].kind == kNonzero ? 1 : 0;
  }
  return g;
}

// decode_scale of every code byte of a scale format (ue8m0 or ue4m3), computed once.
const std::array<Scale, 256>& scale_table(Format f) {
  static const std::array<Scale, 256> e8m0 = [] {
    std::array<Scale, 256> t{};
    for (std::uint32_t code = 0; code < 256; ++code) t[code] = decode_scale(Format::float8_e8m0fnu, code);
    return t;
  }();
  static const std::array<Scale, 256> e4m3 = [] {
    std::array<Scale, 256> t{};
    for (std::uint32_t code = 0; code < 256; ++code) t[code] = decode_scale(Format::float8_ue4m3, code);
    return t;
  }();
  return f == Format::float8_e8m0fnu ? e8m0 : e4m3;
}

}  // namespace

void decode_gst(const GemmOperands& ops, int L, std::size_t padded, int block, int threads, GstPanels& P) {
  constexpr std::size_t W = kGstWidth;
  const std::size_t M = ops.a.rows(), K = ops.a.cols(), N = ops.b.cols();
  const auto uL = static_cast<std::size_t>(L);
  P.L = L;
  P.k = padded;
  P.steps = padded / uL;
  P.groups = padded / kGroup;
  P.rows = (M + kRows - 1) / kRows * kRows;
  P.strips = (N + W - 1) / W;
  const std::size_t groups_per_step = uL / kGroup;
  const std::size_t groups_per_block = static_cast<std::size_t>(block) / kGroup;
  const std::size_t scale_blocks = ops.scale_a.cols();
  const std::array<Scale, 256>& scales = scale_table(ops.scale_a.format());
  const GstCodes ta = gst_codes(element_table(ops.a.format()));
  const GstCodes tb = gst_codes(element_table(ops.b.format()));

  P.a_q.resize(P.rows * P.groups * 4);
  P.a_init.resize(P.rows * P.groups);
  P.a_nz.resize(P.rows * P.groups);
  P.a_ehi.resize(P.rows * P.groups);
  P.a_elo.resize(P.rows * P.groups);
  P.a_sv.resize(P.rows * P.groups);
  P.a_flags.assign(P.rows * P.steps, 0);
  P.a_step_hi.resize(P.rows * P.steps);
  P.a_step_lo.resize(P.rows * P.steps);
#if defined(BLOCKSCALE_HAVE_OPENMP)
#pragma omp parallel for schedule(static) num_threads(threads)
#endif
  for (std::size_t i = 0; i < P.rows; ++i) {
    std::vector<std::uint8_t> codes;
    row_codes(ops.a, i, P.k, codes);
    for (std::size_t g = 0; g < P.groups; ++g) {
      const std::uint8_t* c = codes.data() + g * kGroup;
      std::int32_t sum = 0;
      std::uint32_t nz = 0;
      for (std::size_t q = 0; q < 4; ++q) {
        std::uint32_t word = 0;
        for (std::size_t b = 0; b < 4; ++b) {
          const std::uint8_t x = c[q * 4 + b];
          word |= static_cast<std::uint32_t>(static_cast<std::uint8_t>(ta.twice[x])) << (8 * b);
          sum += ta.twice[x];
          nz |= static_cast<std::uint32_t>(ta.nonzero[x]) << (q * 4 + b);
        }
        P.a_q[(i * P.groups + g) * 4 + q] = word;
      }
      const std::size_t blk = g / groups_per_block;
      const Scale s = i < M && blk < scale_blocks ? scales[ops.scale_a.word(i, blk) & 0xFFu] : Scale{};
      if (s.nan) P.a_flags[i * P.steps + g / groups_per_step] |= kHasNaN;
      const bool dead = s.zero || s.nan;
      const std::size_t at = i * P.groups + g;
      P.a_init[at] = -12 * sum;
      P.a_nz[at] = nz;
      P.a_ehi[at] = dead ? kNoExp : s.exp;
      P.a_elo[at] = dead ? kNoExpHigh : s.exp;
      P.a_sv[at] = dead ? 0.0 : s.val / 4;
    }
    for (std::size_t st = 0; st < P.steps; ++st) {
      const std::size_t g0 = i * P.groups + st * groups_per_step;
      P.a_step_hi[i * P.steps + st] = *std::max_element(&P.a_ehi[g0], &P.a_ehi[g0] + groups_per_step);
      P.a_step_lo[i * P.steps + st] = *std::min_element(&P.a_elo[g0], &P.a_elo[g0] + groups_per_step);
    }
  }

  P.b_q.resize(P.strips * P.groups * 4 * W);
  P.b_nz.resize(P.strips * P.groups * W);
  P.b_ehi.resize(P.strips * P.groups * W);
  P.b_elo.resize(P.strips * P.groups * W);
  P.b_sv.resize(P.strips * P.groups * W);
  P.b_nan.assign(P.strips * P.steps, 0);
  P.b_step_hi.resize(P.strips * P.steps * W);
  P.b_step_lo.resize(P.strips * P.steps * W);
#if defined(BLOCKSCALE_HAVE_OPENMP)
#pragma omp parallel for schedule(static) num_threads(threads)
#endif
  for (std::size_t st = 0; st < P.strips; ++st) {
    std::vector<std::uint8_t> column(P.k);
    for (std::size_t j = 0; j < W; ++j) {
      const std::size_t col = st * W + j;
      // The column's codes, K (and N) padded with code 0.
      std::fill(column.begin(), column.end(), std::uint8_t{0});
      if (col < N) read_codes(ops.b, col * ops.b.col_stride(), ops.b.row_stride(), K, column.data());
      for (std::size_t g = 0; g < P.groups; ++g) {
        const std::uint8_t* c = column.data() + g * kGroup;
        std::uint32_t nz = 0;
        for (std::size_t q = 0; q < 4; ++q) {
          std::uint32_t word = 0;
          for (std::size_t b = 0; b < 4; ++b) {
            const std::uint8_t x = c[q * 4 + b];
            word |= static_cast<std::uint32_t>(tb.twice[x] + 12) << (8 * b);
            nz |= static_cast<std::uint32_t>(tb.nonzero[x]) << (q * 4 + b);
          }
          P.b_q[((st * P.groups + g) * 4 + q) * W + j] = word;
        }
        const std::size_t blk = g / groups_per_block;
        const Scale s = col < N && blk < scale_blocks ? scales[ops.scale_b.word(blk, col) & 0xFFu] : Scale{};
        if (s.nan) P.b_nan[st * P.steps + g / groups_per_step] |= 1u << j;
        const bool dead = s.zero || s.nan;
        const std::size_t at = (st * P.groups + g) * W + j;
        P.b_nz[at] = nz;
        P.b_ehi[at] = dead ? kNoExp : s.exp;
        P.b_elo[at] = dead ? kNoExpHigh : s.exp;
        P.b_sv[at] = dead ? 0.0 : s.val;
      }
      for (std::size_t step = 0; step < P.steps; ++step) {
        std::int32_t hi = kNoExp, lo = kNoExpHigh;
        for (std::size_t g = step * groups_per_step; g < (step + 1) * groups_per_step; ++g) {
          hi = std::max(hi, P.b_ehi[(st * P.groups + g) * W + j]);
          lo = std::min(lo, P.b_elo[(st * P.groups + g) * W + j]);
        }
        P.b_step_hi[(st * P.steps + step) * W + j] = hi;
        P.b_step_lo[(st * P.steps + step) * W + j] = lo;
      }
    }
  }
#if !defined(BLOCKSCALE_HAVE_OPENMP)
  (void)threads;
#endif
}

}  // namespace blockscale::emulator::fast
