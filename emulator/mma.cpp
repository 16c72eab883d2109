// SPDX-License-Identifier: Apache-2.0
#include "blockscale/emulator/mma.h"

#include <bit>
#include <cmath>
#include <cstdint>
#include <stdexcept>

#include "blockscale/emulator/gemm.h"
#include "blockscale/formats/detail/ieee_mode.h"
#include "engine.h"

namespace blockscale::emulator {

namespace {

[[noreturn]] void fail(const std::string& m) { throw std::invalid_argument(m); }

std::size_t round_up(std::size_t x, std::size_t m) { return (x + m - 1) / m * m; }

std::string format_name(Format f) { return blockscale::to_string(f); }

}  // namespace

// One step of DMMA's fma chain, d = a * b + acc, with the NaN results that an H200's DMMA gives
// (measured 2026-11-28 on every mma.sync .f64 shape with NaN payloads compared, 830,860 NaN outputs
// among 120,000,896: docs/conformance/h200-mma-sync-f64-nan-payloads.json, docs/emulator.md "f64
// rows"): a NaN operand is returned quieted, B's before the
// accumulator's before A's, a signalling NaN taking no precedence; an invalid operation (Inf x 0,
// Inf - Inf) gives the negative default NaN 0xFFF8000000000000. The host's fma cannot stand in for
// it: IEEE 754 leaves the choice of NaN open, x86 picks by the instruction form's operand order,
// and AArch64 prefers signalling NaNs and returns the positive default NaN.
double dmma_fma(double a, double b, double acc) {
  constexpr std::uint64_t quiet_bit = 1ull << 51, default_nan = 0xFFF8000000000000ull;
  const auto quieted = [](double x) {
    return std::bit_cast<double>(std::bit_cast<std::uint64_t>(x) | quiet_bit);
  };
  if (std::isnan(b)) return quieted(b);
  if (std::isnan(acc)) return quieted(acc);
  if (std::isnan(a)) return quieted(a);
  const double d = std::fma(a, b, acc);
  return std::isnan(d) ? std::bit_cast<double>(default_nan) : d;
}

namespace {

// DMMA: one IEEE fma per k, in k order (numerics.md (a), MMA-Sim Phi_FMA), with DMMA's own NaN
// results; b's K values `b_stride` apart (a column of a row-major B). The caller sets IEEE mode (no
// flush of subnormals, nearest even).
double dmma_chain(std::span<const double> a, std::span<const double> b, std::size_t b_stride, double c) {
  double d = c;
  for (std::size_t k = 0; k < a.size(); ++k) d = dmma_fma(a[k], b[k * b_stride], d);
  return d;
}

}  // namespace

std::uint32_t fdpa(const FdpaParams& p, const DotOperands& ops) {
  validate(p);
  if (p.algorithm == Algorithm::fma_chain) fail("fdpa: the f64 fma chain takes doubles: use dot_f64");
  const Format acc = accumulator_format(p.rounding);
  const std::size_t K = ops.a.size();
  if (ops.b.size() != K) {
    fail("fdpa: a has " + std::to_string(K) + " codes but b has " + std::to_string(ops.b.size()));
  }
  const bool scaled = p.algorithm == Algorithm::st_fdpa || p.algorithm == Algorithm::gst_fdpa;
  const auto is_fp8 = [](Format f) { return f == Format::float8_e4m3fn || f == Format::float8_e5m2; };
  for (Format f : {ops.a_format, ops.b_format}) {
    require_known(f, "fdpa: an operand format");
    if (!info(f).is_signed || f == Format::float32) {
      fail("fdpa: operand format " + format_name(f) + " is not a tensor-core operand type");
    }
    if (p.algorithm == Algorithm::fp8_via_f16 && !is_fp8(f)) {
      fail("fdpa: fp8_via_f16 (numerics.md b.9) takes e4m3/e5m2 operands, got " + format_name(f));
    }
    if (p.algorithm == Algorithm::gst_fdpa && f != Format::float4_e2m1fn) {
      fail("fdpa: GST-FDPA (numerics.md b.5) takes e2m1 operands, got " + format_name(f));
    }
  }
  std::size_t padded = K;
  if (p.algorithm == Algorithm::fp8_via_f16) padded = round_up(K, 2 * static_cast<std::size_t>(p.L));
  if (p.algorithm == Algorithm::gst_fdpa) padded = round_up(K, static_cast<std::size_t>(p.group));
  std::size_t blocks = 0;
  if (scaled) {
    if (p.algorithm == Algorithm::st_fdpa && ops.scale_format != Format::float8_e8m0fnu) {
      fail("fdpa: ST-FDPA (numerics.md b.4) takes ue8m0 scales, got " + format_name(ops.scale_format));
    }
    if (ops.scale_format != Format::float8_e8m0fnu && ops.scale_format != Format::float8_ue4m3) {
      fail("fdpa: block scales are ue8m0 or ue4m3, got " + format_name(ops.scale_format));
    }
    if (ops.block < 1) fail("fdpa: " + std::string(to_string(p.algorithm)) + " needs a scale block size >= 1");
    if (p.algorithm == Algorithm::gst_fdpa && ops.block % p.group != 0) {
      fail("fdpa: GST groups of " + std::to_string(p.group) + " must tile the scale block of " +
           std::to_string(ops.block));
    }
    blocks = (K + static_cast<std::size_t>(ops.block) - 1) / static_cast<std::size_t>(ops.block);
    if (ops.scale_a.size() != blocks || ops.scale_b.size() != blocks) {
      fail("fdpa: K=" + std::to_string(K) + " with block " + std::to_string(ops.block) + " needs " +
           std::to_string(blocks) + " scales per operand, got " + std::to_string(ops.scale_a.size()) + " and " +
           std::to_string(ops.scale_b.size()));
    }
  } else if (!ops.scale_a.empty() || !ops.scale_b.empty()) {
    fail("fdpa: " + std::string(to_string(p.algorithm)) + " takes no block scales");
  }
  if ((ops.c & ~(acc == Format::float16 ? 0xFFFFu : 0xFFFFFFFFu)) != 0) {
    fail("fdpa: c = " + std::to_string(ops.c) + " is not an f16 code");
  }

  const CodeMatrix am(ops.a_format, 1, K, ops.a), bm(ops.b_format, 1, K, ops.b);
  am.check_codes("a");
  bm.check_codes("b");
  const std::size_t b9 = p.algorithm == Algorithm::fp8_via_f16 ? static_cast<std::size_t>(p.L) : 0;
  detail::Panel pa, pb;
  pa.decode(am, true, padded, detail::decomposition_format(p.algorithm, ops.a_format), b9);
  pb.decode(bm, true, padded, detail::decomposition_format(p.algorithm, ops.b_format), b9);
  detail::ScalePanel sa, sb;
  detail::ScaleVec va, vb;
  if (scaled) {
    const CodeMatrix sam(ops.scale_format, 1, blocks, ops.scale_a), sbm(ops.scale_format, 1, blocks, ops.scale_b);
    sam.check_codes("scale_a");
    sbm.check_codes("scale_b");
    const std::size_t padded_blocks = (padded + static_cast<std::size_t>(ops.block) - 1) / static_cast<std::size_t>(ops.block);
    sa.decode(sam, true, padded_blocks, ops.block);
    sb.decode(sbm, true, padded_blocks, ops.block);
    va = sa.vec(0);
    vb = sb.vec(0);
  }
  return detail::run_instruction(p, acc, pa.vec(0), pb.vec(0), 0, padded, scaled ? &va : nullptr,
                                 scaled ? &vb : nullptr, ops.c);
}

std::uint32_t dot(const Instruction& ins, std::span<const std::uint32_t> a, std::span<const std::uint32_t> b,
                  std::uint32_t c, std::span<const std::uint32_t> scale_a, std::span<const std::uint32_t> scale_b) {
  validate(ins);
  // The name is built only for a message: dot runs once per output in the golden and harness loops.
  const auto who = [&] { return ins.name(); };
  if (ins.params().algorithm == Algorithm::fma_chain) fail(who() + ": f64 operands: use dot_f64");
  if (ins.sparse) fail(who() + ": a sparse instruction takes stored values and their positions: use dot_sparse");
  if (a.size() != static_cast<std::size_t>(ins.k) || b.size() != static_cast<std::size_t>(ins.k)) {
    fail(who() + ": a dot product needs K=" + std::to_string(ins.k) + " codes per operand, got " +
         std::to_string(a.size()) + " and " + std::to_string(b.size()));
  }
  if (ins.block_scaled() && (scale_a.empty() || scale_b.empty())) {
    fail(who() + ": block-scaled instruction without scales (K/block = " + std::to_string(ins.k / ins.block()) +
         " per operand)");
  }
  DotOperands ops;
  ops.a_format = *format_of(ins.a);
  ops.b_format = *format_of(ins.b);
  ops.a = a;
  ops.b = b;
  ops.c = c;
  if (ins.block_scaled()) {
    ops.scale_format = *format_of(ins.scale_type());
    ops.block = ins.block();
    ops.scale_a = scale_a;
    ops.scale_b = scale_b;
  } else if (!scale_a.empty() || !scale_b.empty()) {
    fail(who() + ": takes no block scales");
  }
  return fdpa(ins.params(), ops);
}

std::vector<std::uint32_t> mma(const Instruction& ins, const CodeMatrix& a, const CodeMatrix& b, const CodeMatrix& c,
                               const CodeMatrix& scale_a, const CodeMatrix& scale_b) {
  validate(ins);
  const std::string who = ins.name();
  if (ins.params().algorithm == Algorithm::fma_chain) fail(who + ": f64 operands: use mma_f64");
  if (ins.sparse) fail(who + ": a sparse instruction takes stored values and their positions: use mma_sparse");
  const auto check = [&](const CodeMatrix& m, const char* what, std::size_t rows, std::size_t cols) {
    if (m.rows() != rows || m.cols() != cols) {
      fail(who + ": " + what + " must be " + std::to_string(rows) + " x " + std::to_string(cols) + ", got " +
           std::to_string(m.rows()) + " x " + std::to_string(m.cols()));
    }
  };
  const std::size_t M = static_cast<std::size_t>(ins.m), N = static_cast<std::size_t>(ins.n),
                    K = static_cast<std::size_t>(ins.k);
  if (a.empty() || b.empty()) fail(who + ": A and B are required");
  check(a, "A", M, K);
  check(b, "B", K, N);
  if (!c.empty()) check(c, "C", M, N);
  if (ins.block_scaled()) {
    if (scale_a.empty() || scale_b.empty()) fail(who + ": block-scaled instruction needs SFA and SFB");
    const std::size_t blocks = K / static_cast<std::size_t>(ins.block());
    check(scale_a, "SFA", M, blocks);
    check(scale_b, "SFB", blocks, N);
  }
  // One instruction is a GEMM of one K step: the GEMM model checks formats and codes and computes.
  return gemm(KernelSchedule::chain(ins), GemmOperands{a, b, scale_a, scale_b, c});
}

namespace detail {

void sparse_rows(const Instruction& ins, std::span<const std::uint8_t> index, std::span<std::size_t> b_rows,
                 long long row) {
  const int group = ins.sparse_group(), per_group = group / 2;
  // The message prefix is built only for a message: this check runs once per instruction step.
  const auto where = [&] { return ins.name() + (row < 0 ? std::string() : ": A row " + std::to_string(row)); };
  for (std::size_t s = 0; s < index.size(); ++s) {
    const std::size_t g = s / static_cast<std::size_t>(per_group);
    if (index[s] >= group) {
      fail(where() + ": stored value " + std::to_string(s) + " has position " + std::to_string(index[s]) +
           " in its group of " + std::to_string(group) + " (positions 0.." + std::to_string(group - 1) + ")");
    }
    // ::ordered_metadata: the two positions of a 2:4 group increase (equal ones are undefined).
    if (per_group == 2 && s % 2 == 1 && index[s] <= index[s - 1]) {
      fail(where() + ": group " + std::to_string(g) + " has positions " + std::to_string(index[s - 1]) + " and " +
           std::to_string(index[s]) + ": mma.sp::ordered_metadata and wgmma.sp need them increasing");
    }
    b_rows[s] = g * static_cast<std::size_t>(group) + index[s];
  }
}

}  // namespace detail

std::uint32_t dot_sparse(const Instruction& ins, std::span<const std::uint32_t> a_values,
                         std::span<const std::uint8_t> a_index, std::span<const std::uint32_t> b, std::uint32_t c) {
  validate(ins);
  const std::size_t K = static_cast<std::size_t>(ins.k);
  if (!ins.sparse) fail(ins.name() + ": not a sparse instruction: use dot");
  if (a_values.size() != K / 2 || a_index.size() != K / 2 || b.size() != K) {
    fail(ins.name() + ": a sparse dot product needs K/2=" + std::to_string(K / 2) + " stored values and positions and K=" +
         std::to_string(K) + " B codes, got " + std::to_string(a_values.size()) + ", " + std::to_string(a_index.size()) +
         " and " + std::to_string(b.size()));
  }
  std::vector<std::size_t> rows(K / 2);
  detail::sparse_rows(ins, a_index, rows, -1);
  std::vector<std::uint32_t> selected(K / 2);
  for (std::size_t s = 0; s < K / 2; ++s) selected[s] = b[rows[s]];
  return dot(ins.dense_form(), a_values, selected, c);
}

std::vector<std::uint32_t> mma_sparse(const Instruction& ins, const CodeMatrix& a_values,
                                      std::span<const std::uint8_t> a_index, const CodeMatrix& b, const CodeMatrix& c) {
  validate(ins);
  const std::string who = ins.name();
  if (!ins.sparse) fail(who + ": not a sparse instruction: use mma");
  const std::size_t M = static_cast<std::size_t>(ins.m), N = static_cast<std::size_t>(ins.n),
                    K = static_cast<std::size_t>(ins.k);
  const auto check = [&](const CodeMatrix& m, const char* what, std::size_t rows, std::size_t cols, Format f) {
    if (m.rows() != rows || m.cols() != cols) {
      fail(who + ": " + what + " must be " + std::to_string(rows) + " x " + std::to_string(cols) + ", got " +
           std::to_string(m.rows()) + " x " + std::to_string(m.cols()));
    }
    if (m.format() != f) fail(who + ": " + what + " must hold " + format_name(f) + " codes, got " + format_name(m.format()));
    m.check_codes(who + ": " + what);
  };
  if (a_values.empty() || b.empty()) fail(who + ": A's stored values and B are required");
  const Instruction dense = ins.dense_form();
  const Format acc = accumulator_format(ins.params().rounding);
  check(a_values, "A's stored values", M, K / 2, *format_of(ins.a));
  check(b, "B", K, N, *format_of(ins.b));
  if (!c.empty()) check(c, "C", M, N, acc);
  if (a_index.size() != M * K / 2) {
    fail(who + ": the positions of A's stored values must be M x K/2 = " + std::to_string(M * K / 2) + ", got " +
         std::to_string(a_index.size()));
  }
  std::vector<std::uint32_t> d(M * N), values(K / 2), selected(K / 2);
  std::vector<std::size_t> rows(K / 2);
  // Each output is the dense form's dot product of the stored values and the B rows they select:
  // dot(dense, ...) without its per-call checks, which the checks above have made.
  DotOperands ops;
  ops.a_format = *format_of(dense.a);
  ops.b_format = *format_of(dense.b);
  ops.a = values;
  ops.b = selected;
  const FdpaParams& params = dense.params();
  for (std::size_t i = 0; i < M; ++i) {
    detail::sparse_rows(ins, a_index.subspan(i * K / 2, K / 2), rows, static_cast<long long>(i));
    for (std::size_t s = 0; s < K / 2; ++s) values[s] = a_values.word(i, s);
    for (std::size_t j = 0; j < N; ++j) {
      for (std::size_t s = 0; s < K / 2; ++s) selected[s] = b.word(rows[s], j);
      ops.c = c.empty() ? 0u : c.word(i, j);
      d[i * N + j] = fdpa(params, ops);
    }
  }
  return d;
}

double dot_f64(const Instruction& ins, std::span<const double> a, std::span<const double> b, double c) {
  validate(ins);
  if (ins.params().algorithm != Algorithm::fma_chain) fail(ins.name() + ": not an f64 instruction: use dot");
  if (a.size() != static_cast<std::size_t>(ins.k) || b.size() != static_cast<std::size_t>(ins.k)) {
    fail(ins.name() + ": a dot product needs K=" + std::to_string(ins.k) + " values per operand");
  }
  const blockscale::detail::IeeeMode ieee;
  return dmma_chain(a, b, 1, c);
}

std::vector<double> mma_f64(const Instruction& ins, std::span<const double> a, std::span<const double> b,
                            std::span<const double> c) {
  validate(ins);
  const std::size_t M = static_cast<std::size_t>(ins.m), N = static_cast<std::size_t>(ins.n),
                    K = static_cast<std::size_t>(ins.k);
  if (a.size() != M * K || b.size() != K * N || c.size() != M * N) {
    fail(ins.name() + ": A, B, C must hold M*K, K*N, M*N = " + std::to_string(M * K) + ", " + std::to_string(K * N) +
         ", " + std::to_string(M * N) + " values");
  }
  if (ins.params().algorithm != Algorithm::fma_chain) fail(ins.name() + ": not an f64 instruction: use mma");
  // The instruction and sizes are checked once here, not per output (dot_f64 checks its own call).
  const blockscale::detail::IeeeMode ieee;
  std::vector<double> d(M * N);
  for (std::size_t i = 0; i < M; ++i) {
    for (std::size_t j = 0; j < N; ++j) d[i * N + j] = dmma_chain(a.subspan(i * K, K), b.subspan(j), N, c[i * N + j]);
  }
  return d;
}

}  // namespace blockscale::emulator
