// SPDX-License-Identifier: Apache-2.0
// mma_scaled (cuda.tile.mma_scaled, seed 000): rules, then the exact / sequential / hardware
// computation on the plain row-major tensors.
#include "blockscale/reference/mma_scaled.h"

#include <bit>
#include <cmath>
#include <optional>

#include "blockscale/formats/detail/ieee_mode.h"
#include "blockscale/reference/exact_sum.h"
#include "blockscale/reference/rules.h"
#include "common.h"
#include "hardware_lookup.h"

namespace blockscale::reference {

namespace {

// Below this much work (multiply-adds per batch) threads cost more than they save.
constexpr std::int64_t kParallelWork = std::int64_t{1} << 18;

const std::string kOp = "mma_scaled";

// f32's canonical quiet NaN, what the exact and sequential numerics return for every NaN result.
constexpr std::uint32_t kCanonicalNaN32 = 0x7FC00000u;

bool is_input_dtype(DType t) {
  for (const ScaledMmaRow& r : kScaledMmaTable)
    if (r.input == t) return true;
  return false;
}

// The input types of the table's rows, the extension rows only when they are enabled.
std::string list_inputs(bool ext) {
  std::string s;
  for (const ScaledMmaRow& r : kScaledMmaTable)
    if ((ext || !r.extension) && s.find(to_string(r.input)) == std::string::npos)
      s += (s.empty() ? "" : ", ") + to_string(r.input);
  return s;
}

void check_types(DType x, DType y, DType sx, DType sy, DType acc, int B, bool ext) {
  if (acc != DType::float32) throw RuleError(Rule::dtype, kOp, "acc dtype " + to_string(acc) + " must be float32");
  for (const auto& [name, t] : {std::pair{"x_scale", sx}, std::pair{"y_scale", sy}})
    if (!detail::is_block_scale_dtype(t))
      throw RuleError(Rule::dtype, kOp,
                      std::string(name) + " dtype " + to_string(t) +
                          " is not a block-scale type (float8_e8m0fnu, float8_e4m3fn, float8_ue4m3)");
  if (sx != sy)
    throw RuleError(Rule::dtype, kOp,
                    "x_scale " + to_string(sx) + " and y_scale " + to_string(sy) + " must have the same scale type");
  for (const auto& [name, t] : {std::pair{"x", x}, std::pair{"y", y}})
    if (!is_input_dtype(t))
      throw RuleError(Rule::dtype, kOp,
                      std::string(name) + " dtype " + to_string(t) + " is not a block-scaled input type (" +
                          list_inputs(ext) + ")");
  if (x != y) {
    // PTX tcgen05.mma kind::mxf8f6f4: A and B each any of e4m3, e5m2, e2m3, e3m2, e2m1, with
    // ue8m0 scales and scale_vec::1X (one scale per 32 elements).
    if (!ext)
      throw RuleError(Rule::extension, kOp,
                      "x " + to_string(x) + " and y " + to_string(y) +
                          " differ; mixed operands are the kind::mxf8f6f4 hardware extension "
                          "(ScaledMmaOptions::hardware_extensions)");
    if (sx != DType::float8_e8m0fnu)
      throw RuleError(Rule::dtype, kOp,
                      "mixed operands (kind::mxf8f6f4) require float8_e8m0fnu scales, got " + to_string(sx));
    if (B != 32)
      throw RuleError(Rule::block_size, kOp, "mixed operands (kind::mxf8f6f4) require B=32, got " + std::to_string(B));
    return;
  }
  bool any_scale = false, allowed_scale = false, block_ok = false;
  std::string scales, blocks;
  for (const ScaledMmaRow& r : kScaledMmaTable) {
    if (r.input != x) continue;
    if (scales.find(to_string(r.scale)) == std::string::npos) scales += (scales.empty() ? "" : " or ") + to_string(r.scale);
    if (r.scale != sx) continue;
    any_scale = true;
    if (r.extension && !ext) continue;
    allowed_scale = true;
    blocks += (blocks.empty() ? "" : " or ") + std::to_string(r.block);
    if (r.block == B) block_ok = true;
  }
  if (!any_scale)
    throw RuleError(Rule::dtype, kOp,
                    to_string(x) + " does not take " + to_string(sx) + " scales (allowed: " + scales + ")");
  if (!allowed_scale)
    throw RuleError(Rule::extension, kOp,
                    to_string(x) + " inputs are the kind::mxf8f6f4 hardware extension "
                                   "(ScaledMmaOptions::hardware_extensions)");
  if (!block_ok)
    throw RuleError(Rule::block_size, kOp,
                    to_string(x) + " with " + to_string(sx) + " scales requires B=" + blocks + ", got " +
                        std::to_string(B));
}

__extension__ typedef __int128 i128;
__extension__ typedef unsigned __int128 u128;

// The exact numerics work block by block. Within one block the scales are fixed, so the products
// of the (unscaled) elements are summed exactly in a machine integer at the lowest exponent the
// two element formats can produce; the block sum is then scaled (the scale significands multiply
// it, the scale exponents shift it) and added to the wide accumulator once per block. Element
// significands have at most 4 bits and exponent spans of at most 29 (e5m2), so a block of 32
// products needs at most 4+4+29+29+6 bits: int64 for most pairs, int128 for e5m2 x e5m2.
// An element as the signed integer (-1)^s * sig * 2^shift, where shift is the exponent of the
// significand's unit minus the lowest such exponent of its format (at most 4 + 29 bits).
using Element = std::int64_t;
struct BlockScale {
  std::uint64_t sig;  // e8m0: 1; e4m3fn / ue4m3: 0..15
  int exp;
  bool negative;      // an e4m3fn scale with its sign bit set (the formula multiplies by it)
  bool special;       // a NaN scale or a NaN / Inf element in the block
};
struct ScaledSide {
  std::vector<Element> elements;  // [R][K]
  std::vector<BlockScale> scales; // [R][K_s]
  int lowest_exp = 0;             // exponent of a shift-0 element's unit
  int max_shift = 0, sig_bits = 0;
};

ScaledSide scaled_side(const Tensor& v, const Tensor& s, std::int64_t b, bool transpose_k, std::int64_t B) {
  const std::int64_t R = transpose_k ? v.extent(-1) : v.extent(-2);
  const std::int64_t K = transpose_k ? v.extent(-2) : v.extent(-1);
  const std::int64_t Ks = K / B;
  const Format f = format_of(v.dtype());
  ScaledSide out;
  out.lowest_exp = emin(f) - info(f).mantissa_bits;
  out.max_shift = emax(f) - emin(f);
  out.sig_bits = info(f).mantissa_bits + 1;
  out.elements.resize(static_cast<std::size_t>(R * K));
  out.scales.resize(static_cast<std::size_t>(R * Ks));
  const std::int64_t vo = detail::matrix_offset(v, b), so = detail::matrix_offset(s, b);
  for (std::int64_t r = 0; r < R; ++r) {
    for (std::int64_t kb = 0; kb < Ks; ++kb) {
      const std::int64_t si = transpose_k ? kb * R + r : r * Ks + kb;
      const Decomposed sd = decompose(s.dtype(), s.code(so + si));
      BlockScale& bs = out.scales[static_cast<std::size_t>(r * Ks + kb)];
      bs = {sd.kind == Decomposed::finite ? sd.sig : 0, sd.exp, sd.negative, sd.kind == Decomposed::nan};
      for (std::int64_t k = kb * B; k < (kb + 1) * B; ++k) {
        const std::int64_t vi = transpose_k ? k * R + r : r * K + k;
        const Decomposed e = decompose(v.dtype(), v.code(vo + vi));
        Element& el = out.elements[static_cast<std::size_t>(r * K + k)];
        el = 0;
        if (e.kind == Decomposed::finite) {
          el = static_cast<std::int64_t>(e.sig << (e.exp - out.lowest_exp));
          if (e.negative) el = -el;
        } else if (e.kind != Decomposed::zero) {
          bs.special = true;
        }
      }
    }
  }
  return out;
}

// One output the term-by-term way (every product its own ExactSum term): handles NaN / Inf and
// the signs of zero sums.
std::uint64_t exact_by_terms(ExactSum& sum, const detail::Term* xr, const detail::Term* yr, std::int64_t K,
                             std::uint64_t acc_code, Rounding rounding) {
  sum.clear();
  for (std::int64_t k = 0; k < K; ++k) {
    const detail::Term& a = xr[k];
    const detail::Term& c = yr[k];
    if ((a.kind | c.kind) == detail::kFinite) {
      sum.add_product(a.negative != c.negative, a.sig, c.sig, a.exp + c.exp);
    } else {
      const detail::Term p = detail::multiply(a, c);
      if (p.kind == detail::kNaN) sum.add_nan();
      else sum.add_infinity(p.negative);
    }
  }
  sum.add(decompose(DType::float32, acc_code));
  return sum.round_to(DType::float32, rounding);
}

// nullopt when a block holds a NaN / Inf (the caller then takes exact_by_terms).
template <class Acc>
std::optional<std::uint64_t> exact_blockwise(ExactSum& sum, const ScaledSide& xd, const ScaledSide& yd, std::int64_t i, std::int64_t j,
                              std::int64_t K, std::int64_t B, std::uint64_t acc_code, Rounding rounding) {
  sum.clear();
  const std::int64_t Ks = K / B;
  const Element* xe = xd.elements.data() + i * K;
  const Element* ye = yd.elements.data() + j * K;
  const BlockScale* xs = xd.scales.data() + i * Ks;
  const BlockScale* ys = yd.scales.data() + j * Ks;
  for (std::int64_t kb = 0; kb < Ks; ++kb) {
    const BlockScale& sx = xs[kb];
    const BlockScale& sy = ys[kb];
    if (sx.special || sy.special) return std::nullopt;  // NaN / Inf: the term-by-term path
    Acc s = 0;
    for (std::int64_t k = kb * B; k < (kb + 1) * B; ++k) s += static_cast<Acc>(xe[k]) * ye[k];
    const std::uint64_t scale_sig = sx.sig * sy.sig;
    if (s == 0 || scale_sig == 0) continue;
    const bool neg = (s < 0) != (sx.negative != sy.negative);
    const u128 mag = static_cast<u128>(s < 0 ? -static_cast<i128>(s) : static_cast<i128>(s)) * scale_sig;
    sum.add_wide(neg, static_cast<std::uint64_t>(mag >> 64), static_cast<std::uint64_t>(mag),
                 xd.lowest_exp + yd.lowest_exp + sx.exp + sy.exp);
  }
  sum.add(decompose(DType::float32, acc_code));
  return sum.round_to(DType::float32, rounding);
}

// Every element x[i, k] * x_scale[i, k / B] of one batch matrix as an exact Term, stored
// [rows][K] (for y: [N][K], i.e. transposed, so that both operands run along k contiguously).
std::vector<detail::Term> scaled_terms(const Tensor& v, const Tensor& s, std::int64_t b, bool transpose_k,
                                       std::int64_t B) {
  const std::int64_t R = transpose_k ? v.extent(-1) : v.extent(-2);  // M or N
  const std::int64_t K = transpose_k ? v.extent(-2) : v.extent(-1);
  const std::int64_t Ks = K / B;
  const std::int64_t vo = detail::matrix_offset(v, b), so = detail::matrix_offset(s, b);
  std::vector<detail::Term> out(static_cast<std::size_t>(R * K));
  for (std::int64_t r = 0; r < R; ++r) {
    for (std::int64_t k = 0; k < K; ++k) {
      const std::int64_t vi = transpose_k ? k * R + r : r * K + k;
      const std::int64_t si = transpose_k ? (k / B) * R + r : r * Ks + k / B;
      const detail::Term e = detail::term_of(decompose(v.dtype(), v.code(vo + vi)));
      const detail::Term sc = detail::term_of(decompose(s.dtype(), s.code(so + si)));
      out[static_cast<std::size_t>(r * K + k)] = detail::multiply(e, sc);
    }
  }
  return out;
}

// The same as fp32 values: fl32(element * scale), the product the sequential numerics feed to
// the FMA chain (exact unless it overflows fp32).
std::vector<float> scaled_floats(const Tensor& v, const Tensor& s, std::int64_t b, bool transpose_k, std::int64_t B) {
  const std::int64_t R = transpose_k ? v.extent(-1) : v.extent(-2);
  const std::int64_t K = transpose_k ? v.extent(-2) : v.extent(-1);
  const std::int64_t Ks = K / B;
  const std::int64_t vo = detail::matrix_offset(v, b), so = detail::matrix_offset(s, b);
  std::vector<float> out(static_cast<std::size_t>(R * K));
  for (std::int64_t r = 0; r < R; ++r) {
    for (std::int64_t k = 0; k < K; ++k) {
      const std::int64_t vi = transpose_k ? k * R + r : r * K + k;
      const std::int64_t si = transpose_k ? (k / B) * R + r : r * Ks + k / B;
      const float e = to_float(format_of(v.dtype()), static_cast<std::uint32_t>(v.code(vo + vi)));
      const float sc = to_float(format_of(s.dtype()), static_cast<std::uint32_t>(s.code(so + si)));
      out[static_cast<std::size_t>(r * K + k)] = e * sc;
    }
  }
  return out;
}

}  // namespace

int check_mma_scaled(const Tensor& x, const Tensor& x_scale, const Tensor& y, const Tensor& y_scale,
                     const Tensor& acc, bool hardware_extensions) {
  const std::pair<const char*, const Tensor*> all[] = {
      {"x", &x}, {"x_scale", &x_scale}, {"y", &y}, {"y_scale", &y_scale}, {"acc", &acc}};
  for (const auto& [name, t] : all) detail::check_rank_and_extents(kOp, name, *t);
  for (const auto& [sname, s, oname, o] :
       {std::tuple{"x_scale", &x_scale, "x", &x}, std::tuple{"y_scale", &y_scale, "y", &y}}) {
    if (s->rank() != o->rank())
      throw RuleError(Rule::scale_rank, kOp,
                      std::string(sname) + " rank " + std::to_string(s->rank()) + " must equal " + oname + " rank " +
                          std::to_string(o->rank()));
    if (detail::batch_of(*s) != detail::batch_of(*o))
      throw RuleError(Rule::scale_batch, kOp,
                      std::string(sname) + " batch " + std::to_string(detail::batch_of(*s)) + " must equal " + oname +
                          " batch " + std::to_string(detail::batch_of(*o)));
  }
  const std::int64_t M = x.extent(-2), K = x.extent(-1), N = y.extent(-1);
  if (y.extent(-2) != K)
    throw RuleError(Rule::contraction, kOp,
                    "x K=" + std::to_string(K) + " must equal y K=" + std::to_string(y.extent(-2)));
  if (x_scale.extent(-2) != M)
    throw RuleError(Rule::scale_shape, kOp,
                    "x_scale M=" + std::to_string(x_scale.extent(-2)) + " must equal x M=" + std::to_string(M));
  if (y_scale.extent(-1) != N)
    throw RuleError(Rule::scale_shape, kOp,
                    "y_scale N=" + std::to_string(y_scale.extent(-1)) + " must equal y N=" + std::to_string(N));
  const std::int64_t Ks = x_scale.extent(-1);
  if (y_scale.extent(-2) != Ks)
    throw RuleError(Rule::scale_shape, kOp,
                    "x_scale K_s=" + std::to_string(Ks) + " must equal y_scale K_s=" + std::to_string(y_scale.extent(-2)));
  if (K % Ks != 0)
    throw RuleError(Rule::k_divisible, kOp, "K=" + std::to_string(K) + " not divisible by K_s=" + std::to_string(Ks));
  if (acc.extent(-2) != M)
    throw RuleError(Rule::output_shape, kOp,
                    "acc M=" + std::to_string(acc.extent(-2)) + " must equal x M=" + std::to_string(M));
  if (acc.extent(-1) != N)
    throw RuleError(Rule::output_shape, kOp,
                    "acc N=" + std::to_string(acc.extent(-1)) + " must equal y N=" + std::to_string(N));
  // Batches: x and y broadcast against each other (cuda.tile: "same as mma()"), "both are then
  // broadcast to the output batch shape", and acc must have that output shape (the Python
  // implementation checks acc.shape against the broadcast shape of x and y).
  const std::int64_t bx = detail::batch_of(x), by = detail::batch_of(y);
  if (bx != by && bx != 1 && by != 1)
    throw RuleError(Rule::batch_broadcast, kOp,
                    "x batch " + std::to_string(bx) + " and y batch " + std::to_string(by) +
                        " do not broadcast (each must be 1 or equal to the other)");
  Shape output{M, N};
  if (x.rank() == 3 || y.rank() == 3) output.insert(output.begin(), std::max(bx, by));
  if (acc.shape() != output)
    throw RuleError(Rule::batch_broadcast, kOp,
                    "acc shape " + to_string(acc.shape()) + " must be the output shape " + to_string(output) +
                        " (x " + to_string(x.shape()) + " and y " + to_string(y.shape()) + " broadcast)");
  const int B = static_cast<int>(K / Ks);
  check_types(x.dtype(), y.dtype(), x_scale.dtype(), y_scale.dtype(), acc.dtype(), B, hardware_extensions);
  return B;
}

Tensor mma_scaled(const Tensor& x, const Tensor& x_scale, const Tensor& y, const Tensor& y_scale, const Tensor& acc,
                  const ScaledMmaOptions& options) {
  const blockscale::detail::IeeeMode ieee;
  const int B = check_mma_scaled(x, x_scale, y, y_scale, acc, options.hardware_extensions);
  const Numerics& num = options.numerics;
  detail::check_numerics_fields(kOp, num);
  if (num.integer_overflow != IntegerOverflow::wrap)
    throw RuleError(Rule::numerics, kOp, "integer_overflow saturate applies only to int32 results, not float32");
  const std::int64_t M = x.extent(-2), K = x.extent(-1), N = y.extent(-1);
  const std::int64_t batches = detail::batch_of(acc);
  std::vector<std::uint64_t> out(static_cast<std::size_t>(acc.size()));

  if (num.mode == Mode::hardware) {
    const ScaledMmaModel model = detail::find_scaled_mma_model(num.model);
    for (std::int64_t b = 0; b < batches; ++b) {
      const Tensor r = model(detail::slice2d(x, b), detail::slice2d(x_scale, b), detail::slice2d(y, b),
                             detail::slice2d(y_scale, b), detail::slice2d(acc, b));
      if (r.dtype() != DType::float32 || r.shape() != Shape{M, N})
        throw std::logic_error("hardware model '" + num.model + "' returned " + to_string(r.dtype()) + " " +
                               to_string(r.shape()) + ", expected float32 " + to_string(Shape{M, N}));
      std::copy(r.codes().begin(), r.codes().end(), out.begin() + b * M * N);
    }
    return Tensor(DType::float32, acc.shape(), std::move(out));
  }

  for (std::int64_t b = 0; b < batches; ++b) {
    const std::int64_t ao = detail::matrix_offset(acc, b);
    if (num.mode == Mode::exact) {
      const ScaledSide xd = scaled_side(x, x_scale, b, false, B), yd = scaled_side(y, y_scale, b, true, B);
      const std::vector<detail::Term> xs = scaled_terms(x, x_scale, b, false, B);
      const std::vector<detail::Term> ys = scaled_terms(y, y_scale, b, true, B);
      const bool narrow = xd.sig_bits + yd.sig_bits + xd.max_shift + yd.max_shift + std::bit_width(unsigned(B)) + 1 <= 63;
#pragma omp parallel for schedule(static) if (M * N * K >= kParallelWork)
      for (std::int64_t i = 0; i < M; ++i) {
        const blockscale::detail::IeeeMode thread_ieee;  // each thread's own mode (formats/detail/ieee_mode.h)
        ExactSum sum;
        for (std::int64_t j = 0; j < N; ++j) {
          const std::uint64_t c = acc.code(ao + i * N + j);
          const std::optional<std::uint64_t> fast =
              narrow ? exact_blockwise<std::int64_t>(sum, xd, yd, i, j, K, B, c, num.rounding)
                     : exact_blockwise<i128>(sum, xd, yd, i, j, K, B, c, num.rounding);
          // Blocks with NaN / Inf, and zero results (whose sign the rules of exact_sum.h decide
          // from every single product), are recomputed term by term. Both are rare.
          const std::uint64_t r = fast && (*fast & 0x7FFFFFFFu) != 0
                                      ? *fast
                                      : exact_by_terms(sum, xs.data() + i * K, ys.data() + j * K, K, c, num.rounding);
          out[static_cast<std::size_t>(b * M * N + i * N + j)] = r;
        }
      }
    } else {
      // Sequential: d = acc; d = fmaf(x*xs, y*ys, d) for k = 0 .. K-1 (CUTLASS host GEMM order).
      const std::vector<float> xs = scaled_floats(x, x_scale, b, false, B);
      const std::vector<float> ys = scaled_floats(y, y_scale, b, true, B);
#pragma omp parallel for schedule(static) if (M * N * K >= kParallelWork)
      for (std::int64_t i = 0; i < M; ++i) {
        const blockscale::detail::IeeeMode thread_ieee;  // each thread's own mode
        for (std::int64_t j = 0; j < N; ++j) {
          float d = std::bit_cast<float>(static_cast<std::uint32_t>(acc.code(ao + i * N + j)));
          const float* xr = xs.data() + i * K;
          const float* yr = ys.data() + j * K;
          for (std::int64_t k = 0; k < K; ++k) d = std::fmaf(xr[k], yr[k], d);
          const std::uint32_t bits = std::isnan(d) ? kCanonicalNaN32 : std::bit_cast<std::uint32_t>(d);
          out[static_cast<std::size_t>(b * M * N + i * N + j)] = bits;
        }
      }
    }
  }
  return Tensor(DType::float32, acc.shape(), std::move(out));
}

}  // namespace blockscale::reference
