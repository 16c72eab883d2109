// SPDX-License-Identifier: Apache-2.0
#include "engine.h"

#include <algorithm>
#include <array>
#include <bit>
#include <limits>
#include <stdexcept>

#include "blockscale/emulator/arith.h"
#include "blockscale/formats/convert.h"
#include "blockscale/formats/presets.h"

namespace blockscale::emulator::detail {

namespace {

struct DecodedElement {
  std::int16_t sig;
  std::int16_t exp;
  std::uint8_t special;
};

// numerics.md b.1 for one storage word of format f, decomposed in format `as` (f itself, or f16 for
// the exact fp8 -> f16 conversion of b.9).
DecodedElement decode_element(Format f, Format as, std::uint32_t word) {
  std::uint32_t code = from_storage(f, word);  // tf32: the fp32 pattern truncated (b.1)
  if (as != f) code = convert_code(as, f, code, presets::ieee());  // exact: every fp8 value is an f16 value
  const Decomposed d = decompose(as, code);
  switch (d.kind) {
    case Decomposed::zero: return {0, kZeroExp, kFinite};
    case Decomposed::nan: return {0, kZeroExp, kNaN};
    case Decomposed::infinite: return {0, kZeroExp, d.negative ? kNegInf : kPosInf};
    case Decomposed::finite: break;
  }
  // d.exp is the exponent of the significand's last bit; e(x) adds the fraction bits back.
  const int e = d.exp + info(as).mantissa_bits;
  const auto s = static_cast<std::int16_t>(d.sig);
  return {static_cast<std::int16_t>(d.negative ? -s : s), static_cast<std::int16_t>(e), kFinite};
}

// 256-entry decode tables for the 8-bit formats, in their own decomposition and as f16 (b.9).
struct ByteTables {
  std::array<std::array<DecodedElement, 256>, kFormatCount> own{}, as_f16{};
  ByteTables() {
    for (const FormatInfo& fi : kFormatTable) {
      if (fi.storage_bits != 8 || fi.code_shift != 0 || !fi.is_signed) continue;
      const std::uint32_t mask = code_mask(fi.id);
      for (std::uint32_t w = 0; w < 256; ++w) {
        own[static_cast<int>(fi.id)][w] = decode_element(fi.id, fi.id, w & mask);
        if (fi.id == Format::float8_e4m3fn || fi.id == Format::float8_e5m2) {
          as_f16[static_cast<int>(fi.id)][w] = decode_element(fi.id, Format::float16, w & mask);
        }
      }
    }
  }
};

const ByteTables& byte_tables() {
  static const ByteTables tables;
  return tables;
}

// Position of element k of a 2L-element instruction in b.9 order: the L elements with k mod 4 in
// {0,1} (the low 16-bit halves of the A/B registers, first HMMA) then those with k mod 4 in {2,3}.
std::size_t b9_position(std::size_t k, std::size_t L) {
  const std::size_t j = k % (2 * L);
  const std::size_t half = (j % 4) >= 2 ? L : 0;
  return k - j + half + (j / 4) * 2 + (j % 2);
}

// An accumulator term: C of the first step or the previous step's rounded result.
struct AccTerm {
  std::int64_t sig;  // signed
  int exp;           // e(c)
  int frac;
  bool zero;
  std::uint8_t special;
};

AccTerm decode_acc(Format acc, std::uint32_t c) {
  const int mbits = acc == Format::float32 ? 23 : 10;
  const int ebits = acc == Format::float32 ? 8 : 5;
  const int bias = (1 << (ebits - 1)) - 1;
  const bool neg = (c >> (mbits + ebits)) & 1u;
  const std::uint32_t field = (c >> mbits) & ((1u << ebits) - 1u);
  const std::uint32_t man = c & ((1u << mbits) - 1u);
  if (field == (1u << ebits) - 1u) {
    return {0, 0, mbits, true, man != 0 ? kNaN : (neg ? kNegInf : kPosInf)};
  }
  if (field == 0 && man == 0) return {0, 0, mbits, true, kFinite};
  const std::int64_t m = field == 0 ? man : (man | (1u << mbits));
  const int e = field == 0 ? 1 - bias : static_cast<int>(field) - bias;
  return {neg ? -m : m, e, mbits, false, kFinite};
}

// Sign-magnitude truncation of v * 2^s toward zero (b.3 step 4). A shift of 64 or more leaves 0.
inline std::int64_t trunc_shift(std::int64_t v, int s) {
  const std::uint64_t m = v < 0 ? 0 - static_cast<std::uint64_t>(v) : static_cast<std::uint64_t>(v);
  const std::uint64_t t = s >= 0 ? m << s : (-s >= 64 ? 0 : m >> -s);
  return v < 0 ? -static_cast<std::int64_t>(t) : static_cast<std::int64_t>(t);
}

// b.7: the result when a NaN or Inf takes part (NaN operand or scale, Inf * 0, +Inf and -Inf
// together -> canonical NaN; otherwise the Inf). Returns false when every value is finite.
bool special_result(Format acc, const ElementVec& a, const ElementVec& b, std::size_t k0, std::size_t K,
                    const ScaleVec* sa, const ScaleVec* sb, const AccTerm& c, std::uint32_t& out) {
  bool nan = c.special == kNaN, pos = c.special == kPosInf, neg = c.special == kNegInf;
  bool any = c.special != kFinite;
  if (a.special != nullptr || b.special != nullptr) {
    for (std::size_t k = k0; k < k0 + K; ++k) {
      const std::uint8_t x = a.special ? a.special[k] : std::uint8_t{kFinite};
      const std::uint8_t y = b.special ? b.special[k] : std::uint8_t{kFinite};
      if ((x | y) == kFinite) continue;
      any = true;
      if (x == kNaN || y == kNaN) {
        nan = true;
        continue;
      }
      // An Inf times a zero is NaN; times a finite nonzero it is an Inf of the product's sign.
      const bool x_zero = x == kFinite && a.sig[k] == 0;
      const bool y_zero = y == kFinite && b.sig[k] == 0;
      if (x_zero || y_zero) {
        nan = true;
        continue;
      }
      const bool x_neg = x == kNegInf || (x == kFinite && a.sig[k] < 0);
      const bool y_neg = y == kNegInf || (y == kFinite && b.sig[k] < 0);
      (x_neg != y_neg ? neg : pos) = true;
    }
  }
  for (const ScaleVec* s : {sa, sb}) {
    if (s == nullptr || s->nan == nullptr) continue;
    for (std::size_t blk = k0 / s->block; blk * s->block < k0 + K; ++blk) {
      if (s->nan[blk]) any = nan = true;
    }
  }
  if (!any) return false;
  out = (nan || (pos && neg)) ? canonical_nan(acc) : signed_infinity(acc, neg);
  return true;
}

// T-FDPA / ST-FDPA over products [k0, k0 + n) and the addend c (b.3, b.4).
std::uint32_t fdpa_step(const FdpaParams& p, Format acc, const ElementVec& a, const ElementVec& b, std::size_t k0,
                        std::size_t n, const ScaleVec* sa, const ScaleVec* sb, std::uint32_t c_code) {
  const AccTerm c = decode_acc(acc, c_code);
  std::uint32_t special;
  if (special_result(acc, a, b, k0, n, sa, sb, c, special)) return special;

  const bool scaled = sa != nullptr;
  const std::size_t block = scaled ? static_cast<std::size_t>(sa->block) : n;
  // Pass 1: e_max over the product exponents (with the scale exponents, b.4) and C's (b.3 step 3);
  // a zero product or zero C takes e_zero (step 2).
  int emax = c.zero ? std::numeric_limits<int>::min() / 2 : c.exp;
  int lowest = c.zero ? kZeroThreshold - 1 : 0;
  for (std::size_t s = k0; s < k0 + n;) {
    const std::size_t end = std::min(k0 + n, scaled ? (s / block + 1) * block : k0 + n);
    const int extra = scaled ? sa->exp[s / block] + sb->exp[s / block] : 0;
    for (std::size_t k = s; k < end; ++k) {
      const int e = a.exp[k] + b.exp[k] + extra;
      emax = std::max(emax, e);
      lowest = std::min(lowest, e);
    }
    s = end;
  }
  if (lowest < kZeroThreshold) emax = std::max(emax, p.e_zero);

  // Pass 2: each term truncated toward zero on the grid 2^(e_max - F) (step 4), summed exactly (step 5).
  std::int64_t S = 0;
  const int base = p.F - emax - a.frac - b.frac;
  for (std::size_t s = k0; s < k0 + n;) {
    const std::size_t end = std::min(k0 + n, scaled ? (s / block + 1) * block : k0 + n);
    const int shift0 = base + (scaled ? sa->exp[s / block] + sb->exp[s / block] : 0);
    for (std::size_t k = s; k < end; ++k) {
      const std::int64_t prod = static_cast<std::int64_t>(a.sig[k]) * b.sig[k];
      S += trunc_shift(prod, shift0 + a.exp[k] + b.exp[k]);
    }
    s = end;
  }
  if (!c.zero) S += trunc_shift(c.sig, p.F + c.exp - emax - c.frac);
  return encode_output(S, emax - p.F, p.rounding, p.underflow_zero);
}

// GST-FDPA over groups of p.group products in [k0, k0 + n) and the addend c (b.5).
std::uint32_t gst_step(const FdpaParams& p, Format acc, const ElementVec& a, const ElementVec& b, std::size_t k0,
                       std::size_t n, const ScaleVec& sa, const ScaleVec& sb, std::uint32_t c_code) {
  const AccTerm c = decode_acc(acc, c_code);
  std::uint32_t special;
  if (special_result(acc, a, b, k0, n, &sa, &sb, c, special)) return special;

  constexpr int kMaxGroups = 16;  // L <= 256 (validate) with G >= 16 in the table; G < 16 checked below
  const std::size_t G = static_cast<std::size_t>(p.group);
  const std::size_t groups = n / G;
  std::int64_t group_sig[kMaxGroups];
  int group_exp[kMaxGroups];
  bool group_zero[kMaxGroups];
  const int emin2 = a.emin + b.emin;
  int emax = c.zero ? p.e_zero : c.exp;
  for (std::size_t g = 0; g < groups; ++g) {
    // Step 2: the exact group sum P = sum a*b * 2^-(emin_a + emin_b - frac_a - frac_b).
    std::int64_t P = 0;
    bool nonzero = false;
    for (std::size_t k = k0 + g * G; k < k0 + (g + 1) * G; ++k) {
      const std::int64_t prod = static_cast<std::int64_t>(a.sig[k]) * b.sig[k];
      nonzero |= prod != 0;
      P += prod != 0 ? prod * (std::int64_t{1} << (a.exp[k] + b.exp[k] - emin2)) : 0;
    }
    // Steps 3-5: the group's scales; a group with every product zero or a zero scale product takes
    // e_zero; a group that cancels to zero keeps its scale exponent.
    const std::size_t blk = (k0 + g * G) / static_cast<std::size_t>(sa.block);
    const std::int64_t scale_sig = static_cast<std::int64_t>(sa.sig[blk]) * sb.sig[blk];
    group_zero[g] = !nonzero || scale_sig == 0;
    group_sig[g] = P * scale_sig;
    group_exp[g] = sa.exp[blk] + sb.exp[blk];
    emax = std::max(emax, group_zero[g] ? p.e_zero : group_exp[g]);
  }
  // Step 6: align and truncate each group term (significand P * sig_a * sig_b with emin2 - frac - 6
  // exponent offset) and C on the 2^(e_max - F) grid, sum exactly.
  std::int64_t S = 0;
  const int offset = p.F - emax + emin2 - a.frac - b.frac - 6;
  for (std::size_t g = 0; g < groups; ++g) {
    if (!group_zero[g]) S += trunc_shift(group_sig[g], offset + group_exp[g]);
  }
  if (!c.zero) S += trunc_shift(c.sig, p.F + c.exp - emax - c.frac);
  return encode_output(S, emax - p.F, p.rounding, p.underflow_zero);
}

}  // namespace

Format decomposition_format(Algorithm a, Format operand) {
  return a == Algorithm::fp8_via_f16 ? Format::float16 : operand;
}

std::uint32_t canonical_nan(Format acc) { return acc == Format::float16 ? 0x7FFFu : 0x7FFFFFFFu; }

std::uint32_t signed_infinity(Format acc, bool negative) {
  if (acc == Format::float16) return negative ? 0xFC00u : 0x7C00u;
  return negative ? 0xFF800000u : 0x7F800000u;
}

std::uint32_t encode_output(std::int64_t S, int g, OutputRounding r, UnderflowZero uz) {
  if (S == 0) return 0;  // an exact zero sum is +0 (b.6)
  const bool neg = S < 0;
  const std::uint64_t M = neg ? 0 - static_cast<std::uint64_t>(S) : static_cast<std::uint64_t>(S);
  const int Ev = 63 - std::countl_zero(M) + g;  // floor(log2 |V|)
  if (r == OutputRounding::rne_fp16) {
    const std::uint32_t sign = neg ? 0x8000u : 0u;
    if (Ev >= 16) return sign | 0x7C00u;
    const int E = std::max(Ev, -14);
    const int drop = (E - 10) - g;
    std::uint64_t N;
    if (drop <= 0) {
      N = M << -drop;
    } else if (drop >= 64) {
      N = 0;  // M < 2^63 is below half a quantum
    } else {
      const std::uint64_t q = M >> drop;
      const std::uint64_t rem = M & ((std::uint64_t(1) << drop) - 1);
      const std::uint64_t half = std::uint64_t(1) << (drop - 1);
      N = q + ((rem > half || (rem == half && (q & 1))) ? 1 : 0);
    }
    if (N == 0) return (neg && uz == UnderflowZero::negative) ? 0x8000u : 0u;
    // (E + 14) << 10 plus N: a rounding carry into 2^11 moves to the next binade, 65520 and above
    // reach the Inf pattern 0x7C00.
    const std::uint64_t bits = (static_cast<std::uint64_t>(E + 14) << 10) + N;
    return sign | static_cast<std::uint32_t>(std::min<std::uint64_t>(bits, 0x7C00u));
  }
  // RZ-FP32 (P = 23) and RZ-E8M13 (P = 13): truncate to P fraction bits, keep subnormals, and give
  // Inf for a truncated magnitude of 2^128 or more (hardware "RZ" overflows to Inf, b.6).
  const int P = r == OutputRounding::rz_fp32 ? 23 : 13;
  const std::uint32_t sign = neg ? 0x80000000u : 0u;
  if (Ev >= 128) return sign | 0x7F800000u;
  const int E = std::max(Ev, -126);
  const int drop = (E - P) - g;
  const std::uint64_t N = drop <= 0 ? M << -drop : (drop >= 64 ? 0 : M >> drop);
  if (N == 0) return (neg && uz == UnderflowZero::negative) ? 0x80000000u : 0u;
  const std::uint64_t bits = (static_cast<std::uint64_t>(E + 126) << P) + N;
  return sign | static_cast<std::uint32_t>(bits << (23 - P));
}

std::uint32_t run_instruction(const FdpaParams& p, Format acc, const ElementVec& a, const ElementVec& b,
                              std::size_t k0, std::size_t K, const ScaleVec* sa, const ScaleVec* sb,
                              std::uint32_t c) {
  const std::size_t L = static_cast<std::size_t>(p.L);
  switch (p.algorithm) {
    case Algorithm::t_fdpa:
      // Chain (b.3): each L-chunk's rounded result is the next chunk's addend.
      for (std::size_t k = k0; k < k0 + K; k += L) c = fdpa_step(p, acc, a, b, k, std::min(L, k0 + K - k), nullptr, nullptr, c);
      return c;
    case Algorithm::st_fdpa:
      for (std::size_t k = k0; k < k0 + K; k += L) c = fdpa_step(p, acc, a, b, k, std::min(L, k0 + K - k), sa, sb, c);
      return c;
    case Algorithm::gst_fdpa:
      for (std::size_t k = k0; k < k0 + K; k += L) c = gst_step(p, acc, a, b, k, std::min(L, k0 + K - k), *sa, *sb, c);
      return c;
    case Algorithm::fp8_via_f16: {
      // b.9, per 2L-element instruction: d1 = HMMA(S1, 0), d2 = HMMA(S2, d1), D = d2 + C (RNE).
      FdpaParams inner = p;
      inner.algorithm = Algorithm::t_fdpa;
      for (std::size_t k = k0; k < k0 + K; k += 2 * L) {
        const std::uint32_t d1 = fdpa_step(inner, acc, a, b, k, L, nullptr, nullptr, 0u);
        const std::uint32_t d2 = fdpa_step(inner, acc, a, b, k + L, L, nullptr, nullptr, d1);
        c = acc == Format::float16 ? add_f16(static_cast<std::uint16_t>(d2), static_cast<std::uint16_t>(c))
                                   : add_f32(d2, c);
      }
      return c;
    }
    case Algorithm::fma_chain: break;
  }
  throw std::invalid_argument("the f64 fma chain has no code-level engine: use dot_f64 / mma_f64");
}

void Panel::decode(const CodeMatrix& m, bool vectors_are_rows, std::size_t length, Format decompose_as,
                   std::size_t b9_half) {
  count_ = vectors_are_rows ? m.rows() : m.cols();
  const std::size_t K = vectors_are_rows ? m.cols() : m.rows();
  length_ = length;
  frac_ = info(decompose_as).mantissa_bits;
  emin_ = emin(decompose_as);
  sig_.assign(count_ * length_, 0);
  exp_.assign(count_ * length_, kZeroExp);
  special_.clear();
  has_special_.clear();
  const Format f = m.format();
  // The byte tables cover the signed 8-bit operand formats, and e4m3/e5m2 read as f16.
  const bool own = decompose_as == f;
  const bool bytes = info(f).storage_bits == 8 && info(f).is_signed &&
                     (own || f == Format::float8_e4m3fn || f == Format::float8_e5m2);
  const auto& tables = byte_tables();
  const auto& table = own ? tables.own[static_cast<int>(f)] : tables.as_f16[static_cast<int>(f)];
  for (std::size_t i = 0; i < count_; ++i) {
    for (std::size_t k = 0; k < K; ++k) {
      const std::uint32_t w = vectors_are_rows ? m.word(i, k) : m.word(k, i);
      const DecodedElement d = bytes ? table[w & 0xFFu] : decode_element(f, decompose_as, w);
      const std::size_t pos = i * length_ + (b9_half != 0 ? b9_position(k, b9_half) : k);
      sig_[pos] = d.sig;
      exp_[pos] = d.exp;
      if (d.special != kFinite) {
        if (special_.empty()) {
          special_.assign(count_ * length_, kFinite);
          has_special_.assign(count_, 0);
        }
        special_[pos] = d.special;
        has_special_[i] = 1;
      }
    }
  }
}

void ScalePanel::decode(const CodeMatrix& s, bool vectors_are_rows, std::size_t blocks, int block) {
  const std::size_t count = vectors_are_rows ? s.rows() : s.cols();
  const std::size_t given = vectors_are_rows ? s.cols() : s.rows();
  blocks_ = blocks;
  block_ = block;
  sig_.assign(count * blocks, 8);  // padding blocks: 1.0
  exp_.assign(count * blocks, 0);
  nan_.clear();
  has_nan_.clear();
  const bool e8m0 = s.format() == Format::float8_e8m0fnu;
  for (std::size_t i = 0; i < count; ++i) {
    for (std::size_t t = 0; t < std::min(given, blocks); ++t) {
      const std::uint32_t code = (vectors_are_rows ? s.word(i, t) : s.word(t, i)) & 0xFFu;
      std::int16_t sig = 8, e = 0;
      bool nan = false;
      if (e8m0) {
        // ue8m0: 2^(code - 127), 0xFF NaN (OCP MX v1.0 §5.4.1).
        nan = code == 0xFF;
        e = static_cast<std::int16_t>(static_cast<int>(code) - 127);
      } else {
        // ue4m3: bit 7 ignored (b.5 step 3), 0x7F NaN, e4m3 decoding with 3 fraction bits.
        const Decomposed d = decompose(Format::float8_ue4m3, code & 0x7Fu);
        nan = d.kind == Decomposed::nan;
        sig = d.kind == Decomposed::finite ? static_cast<std::int16_t>(d.sig) : 0;
        e = d.kind == Decomposed::finite ? static_cast<std::int16_t>(d.exp + 3) : 0;
      }
      const std::size_t pos = i * blocks + t;
      sig_[pos] = nan ? 0 : sig;
      exp_[pos] = e;
      if (nan) {
        if (nan_.empty()) {
          nan_.assign(count * blocks, 0);
          has_nan_.assign(count, 0);
        }
        nan_[pos] = 1;
        has_nan_[i] = 1;
      }
    }
  }
}

}  // namespace blockscale::emulator::detail
