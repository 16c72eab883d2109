// SPDX-License-Identifier: Apache-2.0
// ct::mma and ct::matmul (cuda.tile C++ API, seed 004): rules, then the exact / sequential /
// hardware computation.
#include "blockscale/reference/mma.h"

#include <bit>
#include <cmath>
#include <limits>

#include "blockscale/formats/detail/ieee_mode.h"
#include "blockscale/reference/exact_sum.h"
#include "common.h"
#include "hardware_lookup.h"

namespace blockscale::reference {

namespace {

// Below this much work (multiply-adds per batch) threads cost more than they save.
constexpr std::int64_t kParallelWork = std::int64_t{1} << 18;

bool is_fp8(DType t) { return t == DType::float8_e4m3fn || t == DType::float8_e5m2; }
bool is_int8(DType t) { return t == DType::int8 || t == DType::uint8; }

// ct::mma_compatible condition 1: the same type, or two 8-bit integers, or two fp8 types.
void check_operand_pair(const std::string& op, DType lhs, DType rhs) {
  if (lhs == rhs || (is_int8(lhs) && is_int8(rhs)) || (is_fp8(lhs) && is_fp8(rhs))) return;
  throw RuleError(Rule::dtype, op,
                  "lhs " + to_string(lhs) + " and rhs " + to_string(rhs) +
                      " cannot be multiplied: operands must have the same type, or be two 8-bit integers, or "
                      "two fp8 types");
}

template <std::size_t Rows>
std::string allowed_for(const std::array<MmaRow, Rows>& table, DType operand) {
  std::string s;
  for (const MmaRow& r : table)
    if (r.operand == operand) s += (s.empty() ? "" : " or ") + to_string(r.accumulator);
  return s;
}

void check_same_rank(const std::string& op, std::initializer_list<std::pair<const char*, const Tensor*>> ts) {
  for (const auto& [name, t] : ts) detail::check_rank_and_extents(op, name, *t);
  const int r = ts.begin()->second->rank();
  for (const auto& [name, t] : ts) {
    if (t->rank() != r) {
      std::string ranks;
      for (const auto& [n2, t2] : ts) ranks += (ranks.empty() ? "" : ", ") + std::string(n2) + " " + std::to_string(t2->rank());
      throw RuleError(Rule::rank, op, "operands must all have the same rank, got " + ranks);
    }
  }
}

void check_inner(const std::string& op, const Tensor& lhs, const Tensor& rhs) {
  if (lhs.extent(-1) != rhs.extent(-2))
    throw RuleError(Rule::contraction, op,
                    "lhs K=" + std::to_string(lhs.extent(-1)) + " must equal rhs K=" + std::to_string(rhs.extent(-2)));
}

void check_numerics_for(const std::string& op, const Numerics& n, DType result) {
  detail::check_numerics_fields(op, n);
  if (n.integer_overflow == IntegerOverflow::saturate && result != DType::int32)
    throw RuleError(Rule::numerics, op, "integer_overflow saturate applies only to int32 results, not " + to_string(result));
}

// The shared engine: r[b, i, j] = sum_k lhs[b, i, k] * rhs[b, k, j] (+ acc[b, i, j] when acc is
// given), written in `result` type with shape `out_shape` (rank 3 iff batched).
Tensor compute(const std::string& op, const Tensor& lhs, const Tensor& rhs, const Tensor* acc, DType result,
               const Shape& out_shape, const Numerics& num) {
  const blockscale::detail::IeeeMode ieee;
  const std::int64_t M = lhs.extent(-2), K = lhs.extent(-1), N = rhs.extent(-1);
  const std::int64_t batches = out_shape.size() == 3 ? out_shape[0] : 1;
  std::vector<std::uint64_t> out(static_cast<std::size_t>(batches * M * N));
  const Shape mat{M, N};

  if (num.mode == Mode::hardware) {
    const MmaModel model = detail::find_mma_model(op, num.model);
    const Tensor zero = Tensor::zeros(result, mat);
    for (std::int64_t b = 0; b < batches; ++b) {
      const Tensor r = model(detail::slice2d(lhs, b), detail::slice2d(rhs, b), acc ? detail::slice2d(*acc, b) : zero);
      if (r.dtype() != result || r.shape() != mat)
        throw std::logic_error("hardware model '" + num.model + "' returned " + to_string(r.dtype()) + " " +
                               to_string(r.shape()) + ", expected " + to_string(result) + " " + to_string(mat));
      std::copy(r.codes().begin(), r.codes().end(), out.begin() + b * M * N);
    }
    return Tensor(result, out_shape, std::move(out));
  }

  for (std::int64_t b = 0; b < batches; ++b) {
    const std::int64_t lo = detail::matrix_offset(lhs, b), ro = detail::matrix_offset(rhs, b);
    const std::int64_t ao = acc ? detail::matrix_offset(*acc, b) : 0;
    // lhs as [M][K], rhs transposed to [N][K]: exact terms, and the values (exact in double) for
    // the sequential chains.
    std::vector<detail::Term> L(static_cast<std::size_t>(M * K)), R(static_cast<std::size_t>(N * K));
    std::vector<double> Lv(L.size()), Rv(R.size());
    for (std::int64_t i = 0; i < M; ++i)
      for (std::int64_t k = 0; k < K; ++k) {
        const std::uint64_t code = lhs.code(lo + i * K + k);
        L[static_cast<std::size_t>(i * K + k)] = detail::term_of(decompose(lhs.dtype(), code));
        Lv[static_cast<std::size_t>(i * K + k)] = to_double(lhs.dtype(), code);
      }
    for (std::int64_t k = 0; k < K; ++k)
      for (std::int64_t j = 0; j < N; ++j) {
        const std::uint64_t code = rhs.code(ro + k * N + j);
        R[static_cast<std::size_t>(j * K + k)] = detail::term_of(decompose(rhs.dtype(), code));
        Rv[static_cast<std::size_t>(j * K + k)] = to_double(rhs.dtype(), code);
      }
    // The exact product of two terms (significands up to 53 bits: the 128-bit product is exact).
    const auto add_product = [](ExactSum& sum, const detail::Term& a, const detail::Term& c) {
      if ((a.kind | c.kind) == detail::kFinite) {
        sum.add_product(a.negative != c.negative, a.sig, c.sig, a.exp + c.exp);
        return;
      }
      const detail::Term p = detail::multiply(a, c);
      if (p.kind == detail::kNaN) sum.add_nan();
      else sum.add_infinity(p.negative);
    };

#pragma omp parallel for schedule(static) if (M * N * K >= kParallelWork)
    for (std::int64_t i = 0; i < M; ++i) {
      const blockscale::detail::IeeeMode thread_ieee;  // each thread's own mode (formats/detail/ieee_mode.h)
      ExactSum sum;
      for (std::int64_t j = 0; j < N; ++j) {
        const detail::Term* lr = L.data() + i * K;
        const detail::Term* rr = R.data() + j * K;
        const double* lv = Lv.data() + i * K;
        const double* rv = Rv.data() + j * K;
        const std::size_t at = static_cast<std::size_t>(b * M * N + i * N + j);
        const bool has_c = acc != nullptr;
        const std::uint64_t c = has_c ? acc->code(ao + i * N + j) : 0;
        if (num.mode == Mode::exact) {
          sum.clear();
          for (std::int64_t k = 0; k < K; ++k) add_product(sum, lr[k], rr[k]);
          if (has_c) sum.add(decompose(result, c));
          out[at] = result == DType::int32
                        ? static_cast<std::uint32_t>(sum.to_int32(num.integer_overflow))
                        : sum.round_to(result, num.rounding);
          continue;
        }
        // Sequential: one fused multiply-add per k in the accumulator type. Without an
        // accumulator (matmul) the chain starts from -0, the additive identity, so that an
        // all-(-0) sum stays -0 as in exact mode.
        switch (result) {
          case DType::int32: {
            std::int64_t d = has_c ? static_cast<std::int32_t>(c) : 0;
            for (std::int64_t k = 0; k < K; ++k) {
              d += static_cast<std::int64_t>(lv[k]) * static_cast<std::int64_t>(rv[k]);
              if (num.integer_overflow == IntegerOverflow::saturate)
                d = std::clamp<std::int64_t>(d, std::numeric_limits<std::int32_t>::min(), std::numeric_limits<std::int32_t>::max());
              else
                d = static_cast<std::int32_t>(static_cast<std::uint32_t>(d));
            }
            out[at] = static_cast<std::uint32_t>(static_cast<std::int32_t>(d));
            break;
          }
          case DType::float32: {  // every operand type of the f32 rows is exact in float
            float d = has_c ? std::bit_cast<float>(static_cast<std::uint32_t>(c)) : -0.0f;
            for (std::int64_t k = 0; k < K; ++k) d = std::fmaf(static_cast<float>(lv[k]), static_cast<float>(rv[k]), d);
            out[at] = std::isnan(d) ? 0x7FC00000u : std::bit_cast<std::uint32_t>(d);
            break;
          }
          case DType::float64: {
            double d = has_c ? std::bit_cast<double>(c) : -0.0;
            for (std::int64_t k = 0; k < K; ++k) d = std::fma(lv[k], rv[k], d);
            out[at] = std::isnan(d) ? 0x7FF8000000000000u : std::bit_cast<std::uint64_t>(d);
            break;
          }
          default: {  // float16: each step is a*b + d computed exactly, rounded once to f16.
            std::uint64_t d = has_c ? c : 0x8000u;
            for (std::int64_t k = 0; k < K; ++k) {
              sum.clear();
              add_product(sum, lr[k], rr[k]);
              sum.add(decompose(DType::float16, d));
              d = sum.round_to(DType::float16);
            }
            out[at] = d;
            break;
          }
        }
      }
    }
  }
  return Tensor(result, out_shape, std::move(out));
}

}  // namespace

DType matmul_result_dtype(DType lhs, DType rhs) {
  check_operand_pair("matmul", lhs, rhs);
  for (const MmaRow& r : kMatmulTable)
    if (r.operand == lhs) return r.accumulator;
  throw RuleError(Rule::dtype, "matmul", "operand type " + to_string(lhs) + " is not in the matmul type table");
}

void check_mma(const Tensor& lhs, const Tensor& rhs, const Tensor& acc) {
  const std::string op = "mma";
  check_same_rank(op, {{"lhs", &lhs}, {"rhs", &rhs}, {"acc", &acc}});
  check_inner(op, lhs, rhs);
  if (acc.extent(-2) != lhs.extent(-2) || acc.extent(-1) != rhs.extent(-1))
    throw RuleError(Rule::output_shape, op,
                    "acc shape " + to_string(acc.shape()) + " must end in [" + std::to_string(lhs.extent(-2)) + ", " +
                        std::to_string(rhs.extent(-1)) + "] (lhs rows, rhs columns)");
  if (acc.rank() == 3) {
    const std::int64_t C = acc.extent(0);
    for (const auto& [name, t] : {std::pair{"lhs", &lhs}, std::pair{"rhs", &rhs}})
      if (t->extent(0) != 1 && t->extent(0) != C)
        throw RuleError(Rule::batch_broadcast, op,
                        std::string(name) + " batch " + std::to_string(t->extent(0)) + " must be 1 or equal the acc batch " +
                            std::to_string(C));
  }
  check_operand_pair(op, lhs.dtype(), rhs.dtype());
  bool operand_known = false;
  for (const MmaRow& r : kMmaTable) {
    if (r.operand != lhs.dtype()) continue;
    operand_known = true;
    if (r.accumulator == acc.dtype()) return;
  }
  if (!operand_known)
    throw RuleError(Rule::dtype, op, "operand type " + to_string(lhs.dtype()) + " is not in the mma type table");
  throw RuleError(Rule::dtype, op,
                  to_string(lhs.dtype()) + " operands accumulate in " + allowed_for(kMmaTable, lhs.dtype()) + ", not " +
                      to_string(acc.dtype()));
}

void check_matmul(const Tensor& lhs, const Tensor& rhs) {
  const std::string op = "matmul";
  check_same_rank(op, {{"lhs", &lhs}, {"rhs", &rhs}});
  check_inner(op, lhs, rhs);
  if (lhs.rank() == 3) {
    const std::int64_t A = lhs.extent(0), B = rhs.extent(0);
    if (A != B && A != 1 && B != 1)
      throw RuleError(Rule::batch_broadcast, op,
                      "lhs batch " + std::to_string(A) + " and rhs batch " + std::to_string(B) +
                          " do not broadcast (equal, or one of them 1)");
  }
  matmul_result_dtype(lhs.dtype(), rhs.dtype());
}

Tensor mma(const Tensor& lhs, const Tensor& rhs, const Tensor& acc, const Numerics& numerics) {
  check_mma(lhs, rhs, acc);
  check_numerics_for("mma", numerics, acc.dtype());
  return compute("mma", lhs, rhs, &acc, acc.dtype(), acc.shape(), numerics);
}

Tensor matmul(const Tensor& lhs, const Tensor& rhs, const Numerics& numerics) {
  check_matmul(lhs, rhs);
  const DType result = matmul_result_dtype(lhs.dtype(), rhs.dtype());
  check_numerics_for("matmul", numerics, result);
  Shape shape{lhs.extent(-2), rhs.extent(-1)};
  if (lhs.rank() == 3) shape.insert(shape.begin(), std::max(lhs.extent(0), rhs.extent(0)));
  return compute("matmul", lhs, rhs, nullptr, result, shape, numerics);
}

}  // namespace blockscale::reference
