// SPDX-License-Identifier: Apache-2.0
// exact_gemm (gemm.h): mma_scaled's `exact` numerics on quantized operands, computed as a GEMM in
// double whose every output carries a proof that no operation of it rounded.
//
// Why a double GEMM can be exact. A scaled element x' = x * scale has at most 4 + 4 significant
// bits (element and ue4m3 significands; e8m0 has 1) and a magnitude within 2^-145..2^145, so it is
// exact in double, and so is every product x'y' (at most 16 bits, 2^-290..2^290: double normals).
// Every product of output (i, j) is then an integer multiple of 2^(LA_i + LB_j), LA_i being the
// lowest set bit among row i's nonzero scaled elements and LB_j column j's; C(i, j) is a multiple
// of its own lowest bit. Let L(i, j) be the least of these. Any partial sum that a GEMM forms for
// the output, in any order, blocked or split, with or without FMA, is a multiple of 2^L bounded in
// magnitude by S = sum_k |x'_k y'_k| + |C|, so it is exactly representable whenever S < 2^(53 + L):
// then no operation rounds and the double result is the exact sum. S is bounded without touching
// the products: sum_k |x'_k y'_k| <= min(|x'|_1 |y'|_inf, |x'|_inf |y'|_1, |x'|_2 |y'|_2) (Hölder,
// Cauchy-Schwarz), with the norms of each row and column computed once. The test asks for
// 2^(52 + L), a factor of 2 above the norms' own rounding (relative error below K 2^-53). A proved
// output's double is converted to float once, rounding to nearest even with subnormals and
// overflow to Inf, which is what reference::ExactSum::round_to does with the exact sum (IEEE 754
// §7.4). Being exact, the result depends on no summation order, thread count or SIMD width: the
// three kernels below (portable, AVX2, AVX-512) differ only in speed.
//
// Outputs that are not proved, or not finite: a row or column with a NaN element or scale makes
// every product of the output NaN, so the result is the reference's canonical NaN (exact_sum.h);
// C = +-Inf with finite operands gives C; an exact zero sum is +0 unless C is -0 (exact_sum.h:
// -0 only when every term is -0). Everything else (Inf elements, failed proofs, zero sums with
// C = -0) is recomputed by reference::mma_scaled, one row at a time with only the columns needed.
#include <algorithm>
#include <array>
#include <bit>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "blockscale/emulator/gemm.h"
#include "blockscale/formats/bulk.h"
#include "blockscale/formats/detail/ieee_mode.h"
#include "blockscale/reference/dtype.h"
#include "blockscale/reference/mma.h"
#include "blockscale/reference/mma_scaled.h"
#include "blockscale/reference/operands.h"
#include "fast_gemm.h"
#include "fast_kernels.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

namespace blockscale::emulator {

namespace {

[[noreturn]] void fail(const std::string& m) { throw std::invalid_argument(m); }

constexpr std::uint32_t kExactNaN = 0x7FC00000u;  // ExactSum::round_to's f32 NaN (exact_sum.h)
constexpr int kNoBits = INT_MAX / 4;              // the lowest set bit of an all-zero row: none

// Element and scale codes decoded the way the reference decodes them (reference::decompose).
constexpr std::uint8_t kNaN = 1, kInf = 2;
struct CodeTable {
  std::array<double, 256> value{};
  std::array<int, 256> lsb{};           // exponent of the lowest set bit; kNoBits for zero (and NaN, Inf)
  std::array<std::uint8_t, 256> flags{};  // kNaN, kInf
};

CodeTable code_table(Format f, bool is_scale) {
  CodeTable t;
  const int codes = 1 << (info(f).exponent_bits + info(f).mantissa_bits + (info(f).is_signed ? 1 : 0));
  for (int c = 0; c < 256; ++c) {
    t.lsb[c] = kNoBits;
    // Codes past the format's width do not occur in a BlockScaledTensor, except ue4m3's bit 7,
    // which the decode ignores.
    if (c >= codes && f != Format::float8_ue4m3) continue;
    const Decomposed d = reference::decompose(reference::dtype_of(f), static_cast<std::uint64_t>(c));
    switch (d.kind) {
      case Decomposed::zero: t.value[c] = d.negative && !is_scale ? -0.0 : 0.0; break;
      case Decomposed::finite:
        t.value[c] = std::ldexp(static_cast<double>(d.sig), d.exp) * (d.negative && !is_scale ? -1.0 : 1.0);
        t.lsb[c] = d.exp + std::countr_zero(d.sig);
        break;
      case Decomposed::infinite: t.flags[c] = kInf; break;
      case Decomposed::nan: t.flags[c] = kNaN; break;
    }
  }
  return t;
}

// One operand side, decoded: the scaled elements and what the proof needs of each row.
struct Side {
  std::unique_ptr<double[]> values;  // A: [rows_padded][k]; B: strips of kStrip columns, [strip][k][kStrip]
  std::vector<int> lsb;              // lowest set bit per row (kNoBits: all zero)
  std::vector<double> l1, linf, l2;
  std::vector<std::uint8_t> nan, inf;  // per row: a NaN / an Inf among its elements and scales
};

constexpr std::size_t kStrip = 16;  // B columns per packed strip (two 8-double vectors)

// n rounded up to whole strips: B's stored columns, and the row length of the GEMM's accumulators.
std::size_t whole_strips(std::size_t n) { return (n + kStrip - 1) / kStrip * kStrip; }

// A side's storage for `rows` lines of `length` values: for A (strip = false) row-major with
// row_pad zero rows appended, for B (strip = true) k-major in strips of kStrip lines (the last one
// zero-padded by the decoder); the per-line sums at zero, the lowest bits at kNoBits.
void allocate(Side& s, std::size_t rows, std::size_t length, bool strip, std::size_t row_pad) {
  const std::size_t stored_rows = strip ? whole_strips(rows) : rows + row_pad;
  s.values = std::make_unique_for_overwrite<double[]>(stored_rows * length);
  if (!strip) std::fill_n(s.values.get() + rows * length, row_pad * length, 0.0);
  s.lsb.assign(rows, kNoBits);
  s.l1.assign(rows, 0.0);
  s.linf.assign(rows, 0.0);
  s.l2.assign(rows, 0.0);
  s.nan.assign(rows, 0);
  s.inf.assign(rows, 0);
}

// Decodes rows [0, rows) of a [rows][k] element matrix with its [rows][k_blocks] scales, kStrip rows
// at a time (so that each row's sums are their own dependency chain and B's strips are written in
// whole k-rows). For A (strip = false) the values stay row-major with `row_pad` zero rows appended;
// for B (strip = true) they are packed k-major into strips of kStrip columns, the last one
// zero-padded. The norms are rounded sums: the proof allows for that (top of the file).
Side decode_side(std::span<const std::uint8_t> elements, std::span<const std::uint8_t> scales, std::size_t rows,
                 std::size_t k, std::size_t block, const CodeTable& et, const CodeTable& st, bool strip,
                 std::size_t row_pad, [[maybe_unused]] int threads) {
  constexpr std::size_t G = kStrip;
  Side s;
  allocate(s, rows, k, strip, row_pad);
  const std::size_t kb = k / block, groups = (rows + G - 1) / G;
#pragma omp parallel for schedule(static) num_threads(threads) if (rows * k >= (1u << 18))
  for (std::size_t g = 0; g < groups; ++g) {
    const blockscale::detail::IeeeMode ieee;  // each thread's own mode: the norms' sums round to nearest
    const std::size_t r0 = g * G, n = std::min(G, rows - r0);
    double l1[G] = {}, l2[G] = {}, linf[G] = {}, scale[G] = {};
    int lsb[G], scale_lsb[G];
    std::uint8_t flags[G] = {};
    std::fill_n(lsb, G, kNoBits);
    double* strip_out = s.values.get() + g * k * G;
    for (std::size_t b = 0; b < kb; ++b) {
      for (std::size_t r = 0; r < n; ++r) {
        const std::uint8_t code = scales[(r0 + r) * kb + b];
        flags[r] |= st.flags[code];
        scale[r] = st.value[code];
        scale_lsb[r] = st.lsb[code];
      }
      for (std::size_t kk = b * block; kk < (b + 1) * block; ++kk) {
        for (std::size_t r = 0; r < n; ++r) {
          const std::uint8_t c = elements[(r0 + r) * k + kk];
          flags[r] |= et.flags[c];
          const double v = et.value[c] * scale[r];  // exact: at most 8 significant bits, in range
          if (strip) strip_out[kk * G + r] = v;
          else s.values[(r0 + r) * k + kk] = v;
          // A zero element or scale has kNoBits, so the sum stays >= kNoBits - 200: "no bits".
          lsb[r] = std::min(lsb[r], et.lsb[c] + scale_lsb[r]);
          const double m = std::fabs(v);
          l1[r] += m;
          l2[r] += m * m;
          linf[r] = std::max(linf[r], m);
        }
        if (strip) std::fill(strip_out + kk * G + n, strip_out + kk * G + G, 0.0);
      }
    }
    for (std::size_t r = 0; r < n; ++r) {
      s.lsb[r0 + r] = lsb[r] >= kNoBits / 2 ? kNoBits : lsb[r];
      s.l1[r0 + r] = l1[r];
      s.linf[r0 + r] = linf[r];
      s.l2[r0 + r] = std::sqrt(l2[r]);
      s.nan[r0 + r] = (flags[r] & kNaN) != 0;
      s.inf[r0 + r] = flags[r] == kInf;  // an Inf and no NaN
    }
  }
  return s;
}

// ---- The double GEMM: acc[M_pad][N_pad] += A'[M_pad][K] * B'[K][N_pad], by register tiles of
// Rows x kStrip outputs, one kernel per ISA (the AVX-512 and AVX2 ones with FMA, which
// -ffp-contract=off keeps out of plain C++). The order and fusion of the additions are irrelevant
// to the result (see the top of the file).
using TileFn = void (*)(const double* a, std::size_t lda, const double* b, std::size_t kc, double* acc,
                        std::size_t ldc);

template <std::size_t Rows>
void tile_portable(const double* a, std::size_t lda, const double* b, std::size_t kc, double* acc, std::size_t ldc) {
  double t[Rows][kStrip];
  for (std::size_t r = 0; r < Rows; ++r)
    for (std::size_t j = 0; j < kStrip; ++j) t[r][j] = acc[r * ldc + j];
  for (std::size_t k = 0; k < kc; ++k) {
    for (std::size_t r = 0; r < Rows; ++r) {
      const double x = a[r * lda + k];
      for (std::size_t j = 0; j < kStrip; ++j) t[r][j] += x * b[k * kStrip + j];
    }
  }
  for (std::size_t r = 0; r < Rows; ++r)
    for (std::size_t j = 0; j < kStrip; ++j) acc[r * ldc + j] = t[r][j];
}

#if defined(__x86_64__) && defined(__GNUC__)
// 2 rows x 4 ymm accumulators (8 of 16 registers), 4 for B's strip, one broadcast.
__attribute__((target("avx2,fma"))) void tile_avx2(const double* a, std::size_t lda, const double* b, std::size_t kc,
                                                  double* acc, std::size_t ldc) {
  constexpr std::size_t Rows = 2, V = kStrip / 4;
  __m256d t[Rows][V];
  for (std::size_t r = 0; r < Rows; ++r)
    for (std::size_t v = 0; v < V; ++v) t[r][v] = _mm256_loadu_pd(acc + r * ldc + 4 * v);
  for (std::size_t k = 0; k < kc; ++k) {
    __m256d bv[V];
    for (std::size_t v = 0; v < V; ++v) bv[v] = _mm256_loadu_pd(b + k * kStrip + 4 * v);
    for (std::size_t r = 0; r < Rows; ++r) {
      const __m256d x = _mm256_broadcast_sd(a + r * lda + k);
      for (std::size_t v = 0; v < V; ++v) t[r][v] = _mm256_fmadd_pd(x, bv[v], t[r][v]);
    }
  }
  for (std::size_t r = 0; r < Rows; ++r)
    for (std::size_t v = 0; v < V; ++v) _mm256_storeu_pd(acc + r * ldc + 4 * v, t[r][v]);
}

// 6 rows x 2 zmm accumulators (12 of 32 registers), 2 for B's strip, one broadcast.
__attribute__((target("avx512f"))) void tile_avx512(const double* a, std::size_t lda, const double* b, std::size_t kc,
                                                   double* acc, std::size_t ldc) {
  constexpr std::size_t Rows = 6;
  __m512d lo[Rows], hi[Rows];
  for (std::size_t r = 0; r < Rows; ++r) {
    lo[r] = _mm512_loadu_pd(acc + r * ldc);
    hi[r] = _mm512_loadu_pd(acc + r * ldc + 8);
  }
  for (std::size_t k = 0; k < kc; ++k) {
    const __m512d b0 = _mm512_loadu_pd(b + k * kStrip), b1 = _mm512_loadu_pd(b + k * kStrip + 8);
    for (std::size_t r = 0; r < Rows; ++r) {
      const __m512d x = _mm512_set1_pd(a[r * lda + k]);
      lo[r] = _mm512_fmadd_pd(x, b0, lo[r]);
      hi[r] = _mm512_fmadd_pd(x, b1, hi[r]);
    }
  }
  for (std::size_t r = 0; r < Rows; ++r) {
    _mm512_storeu_pd(acc + r * ldc, lo[r]);
    _mm512_storeu_pd(acc + r * ldc + 8, hi[r]);
  }
}
#endif

// Cache blocking: a task is kBlockRows rows of A times kStripsPerTask strips of B, walked in K
// chunks of kChunk so that a strip's chunk (kChunk x 16 doubles, 16 KiB) stays in L1 while the
// task's rows pass over it, and the rows' chunk (30 x kChunk doubles, 30 KiB) in L1/L2. Tasks
// are small so that a skinny problem (256 x 256 x 8192: 72 tasks) still spreads over 16 threads.
// kBlockRows is a multiple of every tile's row count (kRowPad below).
constexpr std::size_t kBlockRows = 30, kStripsPerTask = 2, kChunk = 128;

// A's rows are padded to a multiple of kRowPad, the lcm of the tiles' row counts (6 and 2).
constexpr std::size_t kRowPad = 6;
static_assert(kBlockRows % kRowPad == 0);

struct GemmShape {
  std::size_t rows_padded, k, strips;
};

struct Kernel {
  TileFn tile;
  std::size_t rows;
};

Kernel kernel_for(GemmPath path) {
#if defined(__x86_64__) && defined(__GNUC__)
  if (path == GemmPath::avx512) return {&tile_avx512, 6};
  if (path == GemmPath::avx2) return {&tile_avx2, 2};
#endif
  (void)path;
  return {&tile_portable<2>, 2};
}

void run_task(const Kernel& kernel, const double* a, const double* b, double* acc, const GemmShape& g, std::size_t task) {
  const std::size_t row_blocks = (g.rows_padded + kBlockRows - 1) / kBlockRows;
  const std::size_t r0 = (task % row_blocks) * kBlockRows, r1 = std::min(g.rows_padded, r0 + kBlockRows);
  const std::size_t s0 = (task / row_blocks) * kStripsPerTask, s1 = std::min(g.strips, s0 + kStripsPerTask);
  const std::size_t ldc = g.strips * kStrip;
  for (std::size_t k0 = 0; k0 < g.k; k0 += kChunk) {
    const std::size_t kc = std::min(kChunk, g.k - k0);
    for (std::size_t s = s0; s < s1; ++s) {
      const double* bs = b + s * g.k * kStrip + k0 * kStrip;
      for (std::size_t r = r0; r < r1; r += kernel.rows) kernel.tile(a + r * g.k + k0, g.k, bs, kc, acc + r * ldc + s * kStrip, ldc);
    }
  }
}

int f32_lsb(std::uint32_t bits) {  // lowest set bit of a finite nonzero f32
  const std::uint32_t field = (bits >> 23) & 0xFFu, man = bits & 0x7FFFFFu;
  const std::uint32_t sig = field == 0 ? man : man | 0x800000u;
  return (field == 0 ? -149 : static_cast<int>(field) - 150) + std::countr_zero(sig);
}

// 2^e as a double for e in the normal range, +Inf for kNoBits (no bits: no limit).
double power_of_two(int e) {
  if (e >= kNoBits / 2) return INFINITY;
  return std::bit_cast<double>(static_cast<std::uint64_t>(e + 1023) << 52);
}

// reference::mma_scaled (exact, nearest even) for the listed rows and columns of D (M x N
// row-major), which receives them.
void reference_outputs(std::span<const std::uint8_t> ea, std::span<const std::uint8_t> sa,
                       std::span<const std::uint8_t> eb, std::span<const std::uint8_t> sb, const BlockFormat& fa,
                       const BlockFormat& fb, std::size_t K, const std::vector<std::size_t>& rows,
                       const std::vector<std::size_t>& cols, const CodeMatrix& c, std::size_t N, std::uint32_t* d) {
  using reference::DType;
  using reference::Tensor;
  const std::size_t kb = K / static_cast<std::size_t>(fa.block_size), m = rows.size(), n = cols.size();
  std::vector<std::uint64_t> x(m * K), xs(m * kb), y(K * n), ys(kb * n), acc(m * n, 0);
  for (std::size_t ii = 0; ii < m; ++ii) {
    std::copy_n(ea.data() + rows[ii] * K, K, x.data() + ii * K);
    std::copy_n(sa.data() + rows[ii] * kb, kb, xs.data() + ii * kb);
  }
  for (std::size_t jj = 0; jj < n; ++jj) {
    const std::size_t j = cols[jj];
    for (std::size_t k = 0; k < K; ++k) y[k * n + jj] = eb[j * K + k];
    for (std::size_t b = 0; b < kb; ++b) ys[b * n + jj] = sb[j * kb + b];
  }
  if (!c.empty()) {
    for (std::size_t ii = 0; ii < m; ++ii)
      for (std::size_t jj = 0; jj < n; ++jj) acc[ii * n + jj] = c.word(rows[ii], cols[jj]);
  }
  const auto m64 = static_cast<std::int64_t>(m), k64 = static_cast<std::int64_t>(K);
  const auto kb64 = static_cast<std::int64_t>(kb), n64 = static_cast<std::int64_t>(n);
  reference::ScaledMmaOptions options;
  options.numerics = reference::Numerics::exact();
  // fp6 operands and mixed element types are the kind::mxf8f6f4 extension of cuda.tile's table.
  options.hardware_extensions = true;
  const Tensor r = reference::mma_scaled(Tensor(reference::dtype_of(fa.element), {m64, k64}, std::move(x)),
                                         Tensor(reference::dtype_of(fa.scale), {m64, kb64}, std::move(xs)),
                                         Tensor(reference::dtype_of(fb.element), {k64, n64}, std::move(y)),
                                         Tensor(reference::dtype_of(fb.scale), {kb64, n64}, std::move(ys)),
                                         Tensor(DType::float32, {m64, n64}, std::move(acc)), options);
  for (std::size_t ii = 0; ii < m; ++ii)
    for (std::size_t jj = 0; jj < n; ++jj) d[rows[ii] * N + cols[jj]] = static_cast<std::uint32_t>(r.codes()[ii * n + jj]);
}

// acc[rows_padded][whole_strips(N)] = C (finite words; +0 elsewhere) + A' B' by the tile kernel of
// `path`, for A' row-major with its padding rows and B' in strips (decode_side's layouts).
std::vector<double> double_gemm(const double* a, const double* b, std::size_t M, std::size_t rows_padded, std::size_t N,
                                std::size_t K, const CodeMatrix& c, GemmPath path, [[maybe_unused]] int threads) {
  const std::size_t ldc = whole_strips(N);
  const GemmShape g{rows_padded, K, ldc / kStrip};
  std::vector<double> acc(rows_padded * ldc, 0.0);
  if (!c.empty()) {
    const blockscale::detail::IeeeMode ieee;  // a subnormal C converts to its double, not to 0 (DAZ)
    for (std::size_t i = 0; i < M; ++i)
      for (std::size_t j = 0; j < N; ++j) {
        const std::uint32_t w = c.word(i, j);
        // A non-finite C is not summed (its outputs are settled apart); a finite one is exact.
        if ((w & 0x7F800000u) != 0x7F800000u) acc[i * ldc + j] = static_cast<double>(fast::as_float(w));
      }
  }
  const Kernel kernel = kernel_for(path);
  const std::size_t tasks = (rows_padded + kBlockRows - 1) / kBlockRows * ((g.strips + kStripsPerTask - 1) / kStripsPerTask);
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
  for (std::size_t t = 0; t < tasks; ++t) {
    // Each thread's own mode: the certificate's error bound (exact_mma) assumes sums rounded to
    // nearest; the proof's sums do not round in any mode.
    const blockscale::detail::IeeeMode ieee;
    run_task(kernel, a, b, acc.data(), g, t);
  }
  return acc;
}

// The rules for output (i, j) of a double GEMM that both exact GEMMs share: what settled it, out
// its bits where settled. `limit` is the proof's 2^(52 + LA_i + LB_j) (the product of a row's and a
// column's power of two: exact, as L lies within -149..143 for every operand these take), v the
// double sum; `bound` receives the bound of sum|t| (C included) that the proof compares with it.
enum class Settled { special, proved, reference, unproved };
Settled settle_proved(const Side& A, std::size_t i, const Side& B, std::size_t j, std::uint32_t cw, double limit, double v,
                      double& bound, std::uint32_t& out) {
  if (A.nan[i] || B.nan[j] || ((cw & 0x7FFFFFFFu) > 0x7F800000u)) {
    out = kExactNaN;
    return Settled::special;
  }
  if (A.inf[i] || B.inf[j]) return Settled::reference;  // Inf times 0, or Infs of both signs
  if ((cw & 0x7FFFFFFFu) == 0x7F800000u) {  // C = +-Inf plus a finite sum
    out = cw;
    return Settled::special;
  }
  if ((cw & 0x7FFFFFFFu) != 0) limit = std::min(limit, power_of_two(52 + f32_lsb(cw)));
  const double products = std::min({A.l1[i] * B.linf[j], A.linf[i] * B.l1[j], A.l2[i] * B.l2[j]});
  bound = products + std::fabs(static_cast<double>(fast::as_float(cw)));
  if (!(bound < limit)) return Settled::unproved;
  if (v == 0.0) {
    if (cw == 0x80000000u) return Settled::reference;  // -0 only if every product is -0 too
    out = 0u;  // an exact zero sum with a +0 (or nonzero) term: +0 (exact_sum.h, §6.3)
    return Settled::proved;
  }
  out = fast::as_bits(static_cast<float>(v));  // the one rounding: nearest even
  return Settled::proved;
}

// The proof's 2^(52 + LA_i) per row of A and 2^LB_j per column of B (Inf for a side without bits).
std::vector<double> proof_limits(const Side& s, std::size_t lines, int offset) {
  std::vector<double> limit(lines);
  for (std::size_t i = 0; i < lines; ++i) limit[i] = power_of_two(s.lsb[i] == kNoBits ? kNoBits : offset + s.lsb[i]);
  return limit;
}

// One batch matrix: D (M x N f32 bits) of the exact numerics with C (or +0).
void exact_batch(std::span<const std::uint8_t> ea, std::span<const std::uint8_t> sa, std::span<const std::uint8_t> eb,
                 std::span<const std::uint8_t> sb, const BlockFormat& fa, const BlockFormat& fb, std::size_t M,
                 std::size_t N, std::size_t K, const CodeMatrix& c, GemmPath path, int threads, GemmPathStats& stats,
                 std::uint32_t* d) {
  const CodeTable eta = code_table(fa.element, false), etb = code_table(fb.element, false);
  const CodeTable sta = code_table(fa.scale, true), stb = code_table(fb.scale, true);
  const std::size_t block = static_cast<std::size_t>(fa.block_size);
  const std::size_t rows_padded = (M + kRowPad - 1) / kRowPad * kRowPad;
  const Side A = decode_side(ea, sa, M, K, block, eta, sta, false, rows_padded - M, threads);
  const Side B = decode_side(eb, sb, N, K, block, etb, stb, true, 0, threads);
  const std::vector<double> acc = double_gemm(A.values.get(), B.values.get(), M, rows_padded, N, K, c, path, threads);
  const std::size_t ldc = whole_strips(N);

  // Per output: the proof, the one rounding, and the outputs settled without it.
  const std::vector<double> limit_a = proof_limits(A, M, 52), limit_b = proof_limits(B, N, 0);
  std::vector<std::vector<std::size_t>> fallback(M);
  std::uint64_t proved = 0, special = 0;
#pragma omp parallel for schedule(static) num_threads(threads) reduction(+ : proved, special)
  for (std::size_t i = 0; i < M; ++i) {
    const blockscale::detail::IeeeMode ieee;  // RNE, subnormals kept: the conversion relies on it
    for (std::size_t j = 0; j < N; ++j) {
      double bound = 0;
      switch (settle_proved(A, i, B, j, c.empty() ? 0u : c.word(i, j), limit_a[i] * limit_b[j], acc[i * ldc + j], bound,
                            d[i * N + j])) {
        case Settled::special: ++special; break;
        case Settled::proved: ++proved; break;
        case Settled::reference:
        case Settled::unproved: fallback[i].push_back(j); break;
      }
    }
  }
  std::uint64_t recomputed = 0;
  for (std::size_t i = 0; i < M; ++i) {
    if (fallback[i].empty()) continue;
    reference_outputs(ea, sa, eb, sb, fa, fb, K, {i}, fallback[i], c, N, d);
    recomputed += fallback[i].size();
  }
  stats.exact += proved;
  stats.special += special;
  stats.reference_outputs += recomputed;
}

// ---- exact_mma (gemm.h): ct::mma's exact numerics for unscaled operands, on the same double GEMM.
//
// The products of two operands of these formats are exact in double (at most 24 + 24 significant
// bits, 2^-298..2^256), so exact_gemm's proof applies unchanged where the operands' bit positions
// allow it (fp8, and f16 or bf16 rows without tiny elements: most outputs of a magnitude-pruned
// sparse GEMM). Where it does not (f32, or a row or column spread over many binades), the double
// sum's error bound settles the output: the GEMM adds its nonzero terms (at most n of them, C
// included) in some order, each addition rounding once (FMA or not; a zero term adds exactly), so
// |s - S| <= gamma_(n-1) sum|t| <= 2 (n - 1) 2^-53 sum|t| (recursive summation in any order,
// Higham, "Accuracy and Stability of Numerical Algorithms", 2nd ed., §4.2). err = (n + 2) 2^-52
// (bound + |C|), with the norm bound of sum|p| above, exceeds that with room for the norms' and
// err's own roundings and for the roundings of s -+ err (each below 2^-53 |s| <= err / 6). So the
// exact sum S lies in [RN(s - err), RN(s + err)], and where both ends round to one f32 (rounding is
// monotonic) S rounds to it too: the output is certified. Where they do not (S within about err of
// an f32 rounding boundary, 0.2-0.5% of Gaussian f32 outputs at K = 4096), compensated_f32 sums the
// output's terms again with a far smaller error bound.

// Whether exact_mma takes a format, and the reference DType code of one of its words: ct::mma's
// operand types with an f32 accumulator (reference/mma.h). A tf32 word is an f32 pattern whose 13
// low bits the format drops (code_matrix.h), a reference tf32 code its 19 high bits.
bool mma_operand_format(Format f) {
  switch (f) {
    case Format::float8_e4m3fn:
    case Format::float8_e5m2:
    case Format::float16:
    case Format::bfloat16:
    case Format::tfloat32:
    case Format::float32: return true;
    default: return false;
  }
}
std::uint64_t reference_code(Format f, std::uint32_t word) { return word >> info(f).code_shift; }

// The rules of one operand of exact_mma: present, of a format above, codes within the format.
void check_mma_operand(const CodeMatrix& m, const char* side) {
  if (m.empty()) fail(std::string("exact_mma: ") + side + " is absent");
  if (!mma_operand_format(m.format())) {
    fail(std::string("exact_mma: ") + side + " is " + to_string(m.format()) +
         "; ct::mma with an f32 accumulator takes e4m3, e5m2, f16, bf16, tf32 or f32 operands");
  }
  m.check_codes(std::string("exact_mma: ") + side);
}

// Words of one format to their values: a table of every code for the formats of at most 16 bits
// (formats' exact bulk decode), the f32 pattern itself for tf32 (low bits dropped) and f32.
class WordValues {
 public:
  explicit WordValues(Format f) : format_(f) {
    if (info(f).storage_bits == 8) {
      std::vector<std::uint8_t> codes(256);
      for (std::size_t c = 0; c < 256; ++c) codes[c] = static_cast<std::uint8_t>(c);
      table_.resize(256);
      decode(f, codes, table_);
    } else if (info(f).storage_bits == 16) {
      std::vector<std::uint16_t> codes(65536);
      for (std::size_t c = 0; c < 65536; ++c) codes[c] = static_cast<std::uint16_t>(c);
      table_.resize(65536);
      decode(f, codes, table_);
    }
  }
  float operator()(std::uint32_t word) const {
    if (!table_.empty()) return table_[word];
    return fast::as_float(format_ == Format::tfloat32 ? word & ~0x1FFFu : word);
  }

 private:
  Format format_;
  std::vector<float> table_;
};

// What the settling of an output needs of one row of A or column of B, besides exact_gemm's Side.
struct MmaSide : Side {
  std::vector<std::int64_t> nonzero;  // nonzero elements per row (terms of the error bound)
};

// Decodes `rows` lines of `length` values, value(line, i) reading the i-th word of a line: for A
// (strip = false) row-major with row_pad zero rows appended, for B (strip = true) k-major in strips
// of kStrip lines (the last one zero-padded), as decode_side lays them out.
template <class WordAt>
MmaSide decode_lines(const WordValues& value, WordAt word_at, std::size_t rows, std::size_t length, bool strip,
                     std::size_t row_pad, [[maybe_unused]] int threads) {
  constexpr std::size_t G = kStrip;
  MmaSide s;
  allocate(s, rows, length, strip, row_pad);
  s.nonzero.assign(rows, 0);
  const std::size_t groups = (rows + G - 1) / G;
#pragma omp parallel for schedule(static) num_threads(threads) if (rows * length >= (1u << 18))
  for (std::size_t g = 0; g < groups; ++g) {
    // Each thread's own mode: under DAZ a subnormal f32, bf16 or tf32 element converts to a double
    // 0, and the sum and its proof would both leave it out.
    const blockscale::detail::IeeeMode ieee;
    const std::size_t r0 = g * G, n = std::min(G, rows - r0);
    double l1[G] = {}, l2[G] = {}, linf[G] = {};
    int lsb[G];
    std::int64_t nonzero[G] = {};
    std::uint8_t nan[G] = {}, inf[G] = {};
    std::fill_n(lsb, G, kNoBits);
    double* strip_out = s.values.get() + g * length * G;
    for (std::size_t i = 0; i < length; ++i) {
      for (std::size_t r = 0; r < n; ++r) {
        const float f = value(word_at(r0 + r, i));
        const std::uint32_t bits = fast::as_bits(f);
        const bool finite = std::isfinite(f);
        nan[r] |= static_cast<std::uint8_t>(std::isnan(f));
        inf[r] |= static_cast<std::uint8_t>(std::isinf(f));
        // A non-finite element is not summed (its outputs are settled without the GEMM).
        const double v = finite ? static_cast<double>(f) : 0.0;
        if (strip) strip_out[i * G + r] = v;
        else s.values[(r0 + r) * length + i] = v;
        if (v != 0.0) {
          ++nonzero[r];
          lsb[r] = std::min(lsb[r], f32_lsb(bits));
        }
        const double m = std::fabs(v);
        l1[r] += m;
        l2[r] += m * m;
        linf[r] = std::max(linf[r], m);
      }
      if (strip) std::fill(strip_out + i * G + n, strip_out + i * G + G, 0.0);
    }
    for (std::size_t r = 0; r < n; ++r) {
      s.lsb[r0 + r] = lsb[r];
      s.l1[r0 + r] = l1[r];
      s.linf[r0 + r] = linf[r];
      s.l2[r0 + r] = std::sqrt(l2[r]);
      s.nan[r0 + r] = nan[r];
      s.inf[r0 + r] = inf[r] != 0 && nan[r] == 0;  // an Inf and no NaN
      s.nonzero[r0 + r] = nonzero[r];
    }
  }
  return s;
}

// The second certificate, for an output the norm bound leaves open (a sum near an f32 rounding
// boundary, or terms spread so wide that the bound is loose): its terms again, one by one, with the
// error of every addition kept (TwoSum, Knuth; the cascaded summation Sum2 of Ogita, Rump and Oishi,
// "Accurate sum and dot product", SIAM J. Sci. Comput. 26 (2005), Prop. 4.5). For the n nonzero
// terms t (the exact products and C), res = fl(s + e) lies within u|S| + gamma_(n-1)^2 sum|t| of
// the exact sum S (u = 2^-53; gamma_(n-1)^2 <= n^2 2^-104 while n u <= 1/2). err = 2^-51 |res| +
// n^2 2^-103 m, with m the rounded sum|t| (the factor 2 covers its rounding), exceeds that with room
// for the roundings of res -+ err, so where both ends round to one f32, S does. That fails only
// for sums within about 2^-51 |S| of a boundary, and for exact zero sums (one end rounds to -0).
// b: the output's column of B, stride b_stride; c: C's word (finite).
bool compensated_f32(const double* a, const double* b, std::size_t b_stride, std::size_t K, std::uint32_t c,
                     std::uint32_t& out) {
  double s = static_cast<double>(fast::as_float(c)), e = 0.0, m = std::fabs(s), n = s != 0.0 ? 1.0 : 0.0;
  for (std::size_t k = 0; k < K; ++k) {
    const double p = a[k] * b[k * b_stride];  // exact (top of the section)
    if (p == 0.0) continue;
    const double t = s + p, z = t - s;
    e += (s - (t - z)) + (p - z);  // TwoSum: s + p = t + that, exactly
    s = t;
    m += std::fabs(p);
    n += 1.0;
  }
  if (!(m > 0.0 && m < 0x1p1000)) return false;
  const double res = s + e;
  const double err = std::fabs(res) * 0x1p-51 + n * n * 0x1p-103 * m;
  const std::uint32_t lo = fast::as_bits(static_cast<float>(res - err));
  const std::uint32_t hi = fast::as_bits(static_cast<float>(res + err));
  if (lo != hi) return false;
  out = lo;
  return true;
}

}  // namespace

std::vector<std::uint32_t> exact_gemm(const BlockScaledTensor& a, const BlockScaledTensor& b, const CodeMatrix& c,
                                      const GemmOptions& options) {
  const BlockScaledDesc& da = a.desc();
  const BlockScaledDesc& db = b.desc();
  if (da.format.scale != db.format.scale || da.format.block_size != db.format.block_size) {
    fail("exact_gemm: A (" + to_string(da.format) + ") and B (" + to_string(db.format) +
         ") must share the scale type and the block size");
  }
  detail::check_tensor_pair("exact_gemm", a, b, c);
  const auto M = static_cast<std::size_t>(da.rows()), N = static_cast<std::size_t>(db.rows());
  const auto K = static_cast<std::size_t>(da.k_stored()), kb = static_cast<std::size_t>(da.k_blocks());
  const std::uint32_t alpha = tensor_scale_alpha(a, b);
  const bool scaled_epilogue = alpha != 0x3F800000u;  // the K loop from +0, C in the epilogue
  const GemmPath path = detail::resolve_path(options.path);
  const int threads = detail::resolve_threads(options.threads);
  GemmPathStats stats;
  std::vector<std::uint32_t> d(static_cast<std::size_t>(da.batch()) * M * N);
  std::vector<std::uint8_t> ea_unpacked, eb_unpacked;
  const std::span<const std::uint8_t> ea = detail::element_codes_of(a, ea_unpacked);
  const std::span<const std::uint8_t> eb = detail::element_codes_of(b, eb_unpacked);
  const std::vector<std::uint8_t> sa = a.scale_codes(), sb = b.scale_codes();
  for (std::size_t batch = 0; batch < static_cast<std::size_t>(da.batch()); ++batch) {
    const auto ea_b = ea.subspan(batch * M * K, M * K), eb_b = eb.subspan(batch * N * K, N * K);
    const auto sa_b = std::span(sa).subspan(batch * M * kb, M * kb), sb_b = std::span(sb).subspan(batch * N * kb, N * kb);
    const std::span<std::uint32_t> part(d.data() + batch * M * N, M * N);
    const CodeMatrix& c_loop = scaled_epilogue ? CodeMatrix() : c;
    if (path == GemmPath::reference) {
      std::vector<std::size_t> rows(M), cols(N);
      for (std::size_t i = 0; i < M; ++i) rows[i] = i;
      for (std::size_t j = 0; j < N; ++j) cols[j] = j;
      if (M > 0 && N > 0) reference_outputs(ea_b, sa_b, eb_b, sb_b, da.format, db.format, K, rows, cols, c_loop, N, part.data());
      stats.reference_outputs += M * N;
    } else {
      exact_batch(ea_b, sa_b, eb_b, sb_b, da.format, db.format, M, N, K, c_loop, path, threads, stats, part.data());
    }
    tensor_scale_epilogue(alpha, part, c, options.path);
  }
  if (options.stats != nullptr) *options.stats = stats;
  return d;
}

// B decoded once: its columns as strips of kStrip, with what the settling needs of each column.
struct ExactMmaB::Decoded {
  MmaSide columns;
};

ExactMmaB::ExactMmaB(const CodeMatrix& b, const GemmOptions& options) : b_(b) {
  check_mma_operand(b, "B");
  decoded_ = std::make_shared<const Decoded>(Decoded{decode_lines(
      WordValues(b.format()), [&b](std::size_t column, std::size_t k) { return b.word(k, column); }, b.cols(), b.rows(),
      true, 0, detail::resolve_threads(options.threads))});
}

namespace {

// exact_mma for an A that check_mma_operand has passed.
std::vector<std::uint32_t> exact_mma_checked(const CodeMatrix& a, const ExactMmaB& prepared, const CodeMatrix& c,
                                             const GemmOptions& options) {
  const CodeMatrix& b = prepared.matrix();
  // ct::mma_compatible: one operand type, or two fp8 types (reference/mma.h).
  const auto fp8 = [](Format f) { return f == Format::float8_e4m3fn || f == Format::float8_e5m2; };
  if (a.format() != b.format() && !(fp8(a.format()) && fp8(b.format()))) {
    fail("exact_mma: A is " + to_string(a.format()) + " and B " + to_string(b.format()) +
         ": ct::mma takes one operand type (or e4m3 with e5m2)");
  }
  if (a.cols() != b.rows()) {
    fail("exact_mma: A is " + std::to_string(a.rows()) + " x " + std::to_string(a.cols()) + " and B " +
         std::to_string(b.rows()) + " x " + std::to_string(b.cols()) + ": A's columns must equal B's rows (K)");
  }
  const std::size_t M = a.rows(), N = b.cols(), K = a.cols();
  if (M == 0 || N == 0 || K == 0) {
    fail("exact_mma: A is " + std::to_string(a.rows()) + " x " + std::to_string(a.cols()) + " and B " +
         std::to_string(b.rows()) + " x " + std::to_string(b.cols()) +
         ": ct::mma takes no empty dimension (every extent at least 1)");
  }
  if (!c.empty() && (c.format() != Format::float32 || c.rows() != M || c.cols() != N)) {
    fail("exact_mma: C must be " + std::to_string(M) + " x " + std::to_string(N) + " f32 codes, not " +
         std::to_string(c.rows()) + " x " + std::to_string(c.cols()) + " " + to_string(c.format()));
  }
  const GemmPath path = detail::resolve_path(options.path);
  const int threads = detail::resolve_threads(options.threads);
  std::vector<std::uint32_t> d(M * N);
  GemmPathStats stats;

  // reference::mma (exact) for the listed columns of one row of D.
  const reference::DType ta = reference::dtype_of(a.format()), tb = reference::dtype_of(b.format());
  const auto reference_row = [&](std::size_t i, const std::vector<std::size_t>& cols) {
    const auto k64 = static_cast<std::int64_t>(K), n64 = static_cast<std::int64_t>(cols.size());
    std::vector<std::uint64_t> x(K), y(K * cols.size()), acc(cols.size(), 0);
    for (std::size_t k = 0; k < K; ++k) x[k] = reference_code(a.format(), a.word(i, k));
    for (std::size_t jj = 0; jj < cols.size(); ++jj) {
      for (std::size_t k = 0; k < K; ++k) y[k * cols.size() + jj] = reference_code(b.format(), b.word(k, cols[jj]));
      if (!c.empty()) acc[jj] = c.word(i, cols[jj]);
    }
    const reference::Tensor r = reference::mma(reference::Tensor(ta, {1, k64}, std::move(x)),
                                               reference::Tensor(tb, {k64, n64}, std::move(y)),
                                               reference::Tensor(reference::DType::float32, {1, n64}, std::move(acc)),
                                               reference::Numerics::exact());
    for (std::size_t jj = 0; jj < cols.size(); ++jj) d[i * N + cols[jj]] = static_cast<std::uint32_t>(r.codes()[jj]);
  };
  std::vector<std::vector<std::size_t>> fallback(M);
  if (path == GemmPath::reference) {
    std::vector<std::size_t> all(N);
    for (std::size_t j = 0; j < N; ++j) all[j] = j;
    for (std::size_t i = 0; i < M; ++i) fallback[i] = all;
  } else {
    const MmaSide& B = prepared.decoded().columns;
    const std::size_t rows_padded = (M + kRowPad - 1) / kRowPad * kRowPad;
    const WordValues a_values(a.format());
    const MmaSide A = decode_lines(
        a_values, [&a](std::size_t row, std::size_t k) { return a.word(row, k); }, M, K, false, rows_padded - M,
        threads);
    const std::vector<double> acc = double_gemm(A.values.get(), B.values.get(), M, rows_padded, N, K, c, path, threads);
    const std::size_t ldc = whole_strips(N);
    const std::vector<double> limit_a = proof_limits(A, M, 52), limit_b = proof_limits(B, N, 0);
    std::uint64_t proved = 0, certified = 0, special = 0;
#pragma omp parallel for schedule(static) num_threads(threads) reduction(+ : proved, certified, special)
    for (std::size_t i = 0; i < M; ++i) {
      const blockscale::detail::IeeeMode ieee;  // RNE, subnormals kept: the conversions below rely on it
      for (std::size_t j = 0; j < N; ++j) {
        const std::uint32_t cw = c.empty() ? 0u : c.word(i, j);
        const double v = acc[i * ldc + j];
        double bound = 0;
        std::uint32_t& out = d[i * N + j];
        const Settled settled = settle_proved(A, i, B, j, cw, limit_a[i] * limit_b[j], v, bound, out);
        if (settled == Settled::special) ++special;
        if (settled == Settled::proved) ++proved;
        if (settled == Settled::reference) fallback[i].push_back(j);
        if (settled != Settled::unproved) continue;
        // The error bound (above): terms are the nonzero products, at most the nonzero elements of
        // either side, and C.
        const auto terms = static_cast<double>(std::min(A.nonzero[i], B.nonzero[j]) + ((cw & 0x7FFFFFFFu) != 0));
        const double err = bound * (terms + 2) * 0x1p-52;
        if (bound < 0x1p1000) {
          std::uint32_t lo = fast::as_bits(static_cast<float>(v - err));
          const std::uint32_t hi = fast::as_bits(static_cast<float>(v + err));
          if (lo == hi ||
              compensated_f32(A.values.get() + i * K, B.values.get() + (j / kStrip) * K * kStrip + j % kStrip, kStrip,
                              K, cw, lo)) {
            out = lo;
            ++certified;
            continue;
          }
        }
        fallback[i].push_back(j);
      }
    }
    stats.exact = proved;
    stats.certified = certified;
    stats.special = special;
  }
  std::uint64_t recomputed = 0;
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads) reduction(+ : recomputed)
  for (std::size_t i = 0; i < M; ++i) {
    if (fallback[i].empty()) continue;
    reference_row(i, fallback[i]);
    recomputed += fallback[i].size();
  }
  stats.reference_outputs = recomputed;
  if (options.stats != nullptr) *options.stats = stats;
  return d;
}

}  // namespace

std::vector<std::uint32_t> exact_mma(const CodeMatrix& a, const CodeMatrix& b, const CodeMatrix& c,
                                     const GemmOptions& options) {
  check_mma_operand(a, "A");  // A's errors before B's
  return exact_mma_checked(a, ExactMmaB(b, options), c, options);
}

std::vector<std::uint32_t> exact_mma(const CodeMatrix& a, const ExactMmaB& b, const CodeMatrix& c,
                                     const GemmOptions& options) {
  check_mma_operand(a, "A");
  return exact_mma_checked(a, b, c, options);
}

}  // namespace blockscale::emulator
