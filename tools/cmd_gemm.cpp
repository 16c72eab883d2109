// SPDX-License-Identifier: Apache-2.0
// `blockscale gemm`: a numerics study on the command line, without a GPU and without writing C++.
// Takes A (M x K) and B (K x N) from .npy files (or generates them), quantizes both along K with a
// block format and a named recipe (blockscale::quantize), and computes D = A·B (+ C) with the
// emulator's bit-exact model of each requested GPU kernel, beside:
//   * exact: the same quantized operands, the K loop summed exactly and rounded once to f32 (the
//     cuda.tile mma_scaled `exact` numerics, blockscale::reference), so that the difference from a
//     model is the kernel's accumulation alone;
//   * fp64: the unquantized inputs multiplied in double, so that the error of a model or of exact
//     is quantization plus accumulation, as a training or inference run would see it.
// NVFP4's fp32 per-tensor scales are applied after the K loop by the epilogue every model shares
// (emulator/gemm.h: alpha = FMUL of the two decode scales, D = FFMA(alpha, acc, C), or FMUL
// without C); exact takes the same epilogue, on its once-rounded K loop.
// fp8 with fp32 scales (per tensor, row, 1 x 128 or 128 x 128 block: the Hopper recipes of
// DeepGEMM and torchao, quantize/fp8_scaled.h) is the other family of operands: its models are
// the library GEMMs of emulator/library_fp8.h (cuBLASLt, torch._scaled_mm as measured on an
// H200), beside their own exact numerics.
#include <algorithm>
#include <charconv>
#include <atomic>
#include <bit>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <unistd.h>
#include <vector>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "blockscale/emulator/gemm.h"
#include "blockscale/formats/bulk.h"
#include "blockscale/emulator/library_fp8.h"
#include "blockscale/emulator/sparse_gemm.h"
#include "blockscale/harness/block_scaled_models.h"
#include "blockscale/harness/sparse_mm.h"
#include "blockscale/harness/target.h"
#include "blockscale/quantize.h"
#include "blockscale/reference.h"
#include "cli.h"
#include "mt19937_64.h"
#include "npy.h"

namespace blockscale::cli {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// ---- Progress on stderr (stdout stays machine-readable under --json): on a terminal one line
// that updates in place; otherwise a line when a stage starts and one when it ends.
class Progress {
 public:
  explicit Progress(bool quiet) : quiet_(quiet), tty_(isatty(fileno(stderr)) != 0) {}

  void start(const std::string& stage, std::int64_t total) {
    stage_ = stage;
    total_ = total;
    t0_ = Clock::now();
    if (quiet_) return;
    if (tty_) {
      std::fprintf(stderr, "\r  %-24s   0%%", stage_.c_str());
    } else {
      std::fprintf(stderr, "  %s ...\n", stage_.c_str());
    }
    std::fflush(stderr);
  }
  void advance(std::int64_t done) const {
    if (quiet_ || !tty_) return;
    std::fprintf(stderr, "\r  %-24s %3d%%  %.1f s", stage_.c_str(), static_cast<int>(100 * done / std::max<std::int64_t>(total_, 1)),
                 seconds_since(t0_));
    std::fflush(stderr);
  }
  double finish() const {
    const double s = seconds_since(t0_);
    if (!quiet_) {
      std::fprintf(stderr, tty_ ? "\r  %-24s done in %.2f s\n" : "  %s: done in %.2f s\n", stage_.c_str(), s);
    }
    return s;
  }

 private:
  bool quiet_, tty_;
  std::string stage_;
  std::int64_t total_ = 0;
  Clock::time_point t0_;
};

// ---- The problem: exact input values (A: M x K, B: K x N, C: M x N or empty), row-major.
struct Problem {
  std::int64_t M = 0, N = 0, K = 0;
  WorkBuffer a, b, c;
  std::string a_source, b_source, c_source;
};

// Runs tasks 0 .. count - 1 on the OpenMP threads as one progress stage (the bar follows the
// tasks done; only the master thread writes it).
template <typename Task>
double run_stage(Progress& progress, const std::string& stage, std::int64_t count, Task&& task) {
  progress.start(stage, count);
  std::atomic<std::int64_t> done{0};
#pragma omp parallel for schedule(dynamic, 1)
  for (std::int64_t t = 0; t < count; ++t) {
    task(t);
    const std::int64_t now_done = ++done;
#ifdef _OPENMP
    if (omp_get_thread_num() == 0) progress.advance(now_done);
#else
    progress.advance(now_done);
#endif
  }
  return progress.finish();
}

// Built-in data, the same on every platform and compiler: mt19937_64 is fully specified, and the
// transforms use only + - * / and sqrt (correctly rounded): no libm function whose last bit could
// differ. gaussian: the Irwin-Hall sum of 12 uniforms minus 6 (mean 0, sd 1); heavy_tailed:
// Student's t with 2 degrees of freedom by its closed-form quantile t = (2u - 1) / sqrt(2u(1 - u)).
// The values are rounded to f32: built-in inputs are f32 tensors, as a framework's would be.
// One std::mt19937_64 stream from the seed defines A, then B: value v of a matrix whose first
// draw is `first_draw` takes draws first_draw + v d .. first_draw + (v + 1) d - 1 (d = 12 or 1).
// The threads generate ranges of values, each from an engine jumped to its range's first draw
// (mt19937_64.h), so the bits do not depend on the thread count.
int draws_per_value(const std::string& data) { return data == "gaussian" ? 12 : 1; }

// Element i = 0 .. count - 1 from draws first_draw + i per_value onwards of the stream of `seed`:
// element(rng, i) with rng at that draw. Each thread takes one contiguous range of elements and
// jumps once, to its range's first draw (about 15 ms); one thread walks the stream as it is.
template <typename Element>
void draw_on_threads(Progress& progress, const std::string& stage, std::uint64_t seed, std::uint64_t first_draw,
                     std::int64_t count, int per_value, Element&& element) {
  progress.start(stage, count);
#pragma omp parallel
  {
#ifdef _OPENMP
    const std::int64_t thread = omp_get_thread_num(), threads = omp_get_num_threads();
#else
    const std::int64_t thread = 0, threads = 1;
#endif
    const std::int64_t i0 = count * thread / threads, i1 = count * (thread + 1) / threads;
    Mt19937_64 rng(seed, first_draw + static_cast<std::uint64_t>(i0) * static_cast<std::uint64_t>(per_value));
    for (std::int64_t i = i0; i < i1; ++i) {
      element(rng, static_cast<std::size_t>(i));
      if (thread == 0 && (i - i0) % 65536 == 65535) progress.advance((i - i0) * threads);
    }
  }
  progress.finish();
}

WorkBuffer generate(std::uint64_t seed, std::uint64_t first_draw, std::int64_t count, const std::string& data,
                    const std::string& stage, Progress& progress) {
  WorkBuffer v(static_cast<std::size_t>(count));
  const int per_value = draws_per_value(data);
  draw_on_threads(progress, stage, seed, first_draw, count, per_value, [&](Mt19937_64& rng, std::size_t i) {
    auto uniform = [&] { return (static_cast<double>(rng() >> 11) + 0.5) * 0x1p-53; };  // in (0, 1)
    if (per_value == 12) {
      double sum = -6.0;
      for (int j = 0; j < 12; ++j) sum += uniform();
      v[i] = static_cast<float>(sum);
    } else {
      const double u = uniform();
      v[i] = static_cast<float>((2.0 * u - 1.0) / std::sqrt(2.0 * u * (1.0 - u)));
    }
  });
  return v;
}

// The fp64 product, the emulator's panels and the exact reference hold several copies of each
// operand (8 to 20 bytes per element): 2^26 elements (8192 x 8192) each keeps a run within a few GB.
void check_size(std::int64_t M, std::int64_t N, std::int64_t K) {
  constexpr std::int64_t kMaxElements = std::int64_t{1} << 26;
  if (M * K > kMaxElements || K * N > kMaxElements || M * N > kMaxElements) {
    throw UsageError("A (M x K), B (K x N) and D (M x N) may have at most 2^26 elements each (8192 x 8192); got M=" +
                     std::to_string(M) + " N=" + std::to_string(N) + " K=" + std::to_string(K));
  }
}

Problem load_problem(const Args& args, Progress& progress) {
  Problem p;
  const auto a_path = args.get("a"), b_path = args.get("b"), c_path = args.get("c");
  if (a_path || b_path) {
    if (!a_path || !b_path) throw UsageError("--a and --b go together (A is M x K, B is K x N)");
    for (const char* o : {"m", "n", "k", "data"})
      if (args.get(o)) throw UsageError(std::string("--") + o + " is for built-in data; it does not go with --a/--b");
    NpyMatrix a = read_npy_matrix(*a_path), b = read_npy_matrix(*b_path);
    if (args.flag("b-transposed")) {
      // The file holds B^T (N x K), as a linear layer stores its weight: D = A W^T.
      NpyMatrix t;
      t.rows = b.cols;
      t.cols = b.rows;
      t.descr = b.descr;
      t.values.resize(b.values.size());
      for (std::int64_t r = 0; r < b.rows; ++r)
        for (std::int64_t c = 0; c < b.cols; ++c)
          t.values[static_cast<std::size_t>(c * b.rows + r)] = b.values[static_cast<std::size_t>(r * b.cols + c)];
      b = std::move(t);
    }
    if (a.cols != b.rows) {
      throw UsageError("A is " + std::to_string(a.rows) + " x " + std::to_string(a.cols) + " and B is " +
                       std::to_string(b.rows) + " x " + std::to_string(b.cols) +
                       ": A's columns must equal B's rows (K)");
    }
    p.M = a.rows;
    p.K = a.cols;
    p.N = b.cols;
    p.a = std::move(a.values);
    p.b = std::move(b.values);
    p.a_source = *a_path + " (" + a.descr + ")";
    p.b_source = *b_path + " (" + b.descr + (args.flag("b-transposed") ? ", holding B^T" : "") + ")";
  } else {
    if (args.flag("b-transposed")) throw UsageError("--b-transposed describes the file given by --b");
    const std::string data = args.get_or("data", "gaussian");
    if (data != "gaussian" && data != "heavy_tailed") {
      throw UsageError("--data must be gaussian or heavy_tailed, got '" + data + "'");
    }
    p.M = args.get_int("m", 256, 1, 1 << 16);
    p.N = args.get_int("n", 256, 1, 1 << 16);
    p.K = args.get_int("k", 4096, 1, 1 << 20);
    check_size(p.M, p.N, p.K);
    const std::uint64_t seed = args.get_u64("seed", 1);
    p.a = generate(seed, 0, p.M * p.K, data, "generate A", progress);
    p.b = generate(seed, static_cast<std::uint64_t>(p.M * p.K * draws_per_value(data)), p.K * p.N, data, "generate B",
                   progress);
    p.a_source = p.b_source = data + ", seed " + std::to_string(args.get_u64("seed", 1));
  }
  if (c_path) {
    NpyMatrix c = read_npy_matrix(*c_path);
    if (c.rows != p.M || c.cols != p.N) {
      throw UsageError("C is " + std::to_string(c.rows) + " x " + std::to_string(c.cols) + " but D is " +
                       std::to_string(p.M) + " x " + std::to_string(p.N));
    }
    p.c = std::move(c.values);
    p.c_source = *c_path + " (" + c.descr + ")";
  }
  check_size(p.M, p.N, p.K);
  return p;
}

// fp32 as the quantizers and the accumulator take it: round to nearest even (float64 inputs);
// `rounded` counts the values that changed.
FirstTouchVector<float> to_f32(const WorkBuffer& v, std::int64_t& rounded) {
  FirstTouchVector<float> f(v.size());
  const auto n = static_cast<std::int64_t>(v.size());
  std::int64_t changed = 0;
#pragma omp parallel for schedule(static) reduction(+ : changed)
  for (std::int64_t i = 0; i < n; ++i) {
    const double x = v[static_cast<std::size_t>(i)];
    const float y = static_cast<float>(x);
    f[static_cast<std::size_t>(i)] = y;
    if (static_cast<double>(y) != x && !(std::isnan(x) && std::isnan(y))) ++changed;
  }
  rounded += changed;
  return f;
}

// ---- The unquantized product in double, and the componentwise scale |A|·|B| + |C| that the
// normalised error divides by (the usual bound of a dot product's rounding error; Higham,
// Accuracy and Stability of Numerical Algorithms, 2nd ed., §3.5).
struct Fp64Product {
  WorkBuffer value, magnitude;  // magnitude empty where only the value was asked for
};

// The product is blocked like a GEMM (register tiles of Rows x 16 outputs, K in chunks, tasks of
// kFp64BlockRows rows x kFp64TaskStrips strips), but each output still accumulates its K products
// from 0 in increasing k, each a multiply and an add rounded apart (-ffp-contract=off), so every
// build below (one body, GCC vector types lowered to zmm, ymm or xmm) gives the same bits, with or
// without the magnitude beside the value.
using v8d = double __attribute__((vector_size(64)));
// Unaligned loads and stores by memcpy (an under-aligned vector typedef is not honoured by every
// compiler: Clang 14 emitted aligned moves for one).
[[gnu::always_inline]] inline v8d load8(const double* p) {
  v8d v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
[[gnu::always_inline]] inline void store8(double* p, const v8d& v) { std::memcpy(p, &v, sizeof v); }
constexpr std::size_t kFp64Strip = 16, kFp64BlockRows = 64, kFp64TaskStrips = 4, kFp64Chunk = 256;

struct Fp64Operands {
  const double *a, *b, *abs_b;  // A: M x K, B and |B|: K x N, row-major (|B| null without magnitude)
  // B's whole strips of 16 columns, [strip][k][B 16 | |B| 16], or [strip][k][B 16] without magnitude
  const double* strips;
  double *value, *magnitude;    // M x N, row-major (magnitude null without it)
  std::size_t M, N, K;
};

// Rows x 16 outputs at (i, j) over k in [k0, k1): v += a*b and, with Magnitude, m += |a|*|b|, in
// registers.
template <std::size_t Rows, bool Magnitude>
[[gnu::always_inline]] inline void fp64_tile(const Fp64Operands& o, std::size_t i, std::size_t j, std::size_t k0,
                                             std::size_t k1) {
  constexpr std::size_t kStride = Magnitude ? 2 * kFp64Strip : kFp64Strip;  // doubles per k in a strip
  v8d v[Rows][2], m[Rows][2];
  for (std::size_t r = 0; r < Rows; ++r)
    for (std::size_t h = 0; h < 2; ++h) {
      v[r][h] = load8(o.value + (i + r) * o.N + j + 8 * h);
      if constexpr (Magnitude) m[r][h] = load8(o.magnitude + (i + r) * o.N + j + 8 * h);
    }
  const double* strip = o.strips + j / kFp64Strip * o.K * kStride;
  for (std::size_t k = k0; k < k1; ++k) {
    v8d b[2], ab[2];
    for (std::size_t h = 0; h < 2; ++h) {
      b[h] = load8(strip + k * kStride + 8 * h);
      if constexpr (Magnitude) ab[h] = load8(strip + k * kStride + kFp64Strip + 8 * h);
    }
    for (std::size_t r = 0; r < Rows; ++r) {
      const double x = o.a[(i + r) * o.K + k];
      for (std::size_t h = 0; h < 2; ++h) {
        v[r][h] += x * b[h];
        if constexpr (Magnitude) m[r][h] += std::fabs(x) * ab[h];
      }
    }
  }
  for (std::size_t r = 0; r < Rows; ++r)
    for (std::size_t h = 0; h < 2; ++h) {
      store8(o.value + (i + r) * o.N + j + 8 * h, v[r][h]);
      if constexpr (Magnitude) store8(o.magnitude + (i + r) * o.N + j + 8 * h, m[r][h]);
    }
}

// One task: rows [i0, i1) x strips [s0, s1), the columns past the last whole strip included.
template <std::size_t Rows, bool Magnitude>
[[gnu::always_inline]] inline void fp64_task_body(const Fp64Operands& o, std::size_t task) {
  const std::size_t strips = o.N / kFp64Strip, tail0 = strips * kFp64Strip;
  const std::size_t row_blocks = (o.M + kFp64BlockRows - 1) / kFp64BlockRows;
  const std::size_t i0 = task % row_blocks * kFp64BlockRows, i1 = std::min(o.M, i0 + kFp64BlockRows);
  const std::size_t s0 = task / row_blocks * kFp64TaskStrips, s1 = std::min(strips, s0 + kFp64TaskStrips);
  const bool tail = s1 == strips && tail0 < o.N;  // the last task of a row block takes the tail
  for (std::size_t k0 = 0; k0 < o.K; k0 += kFp64Chunk) {
    const std::size_t k1 = std::min(o.K, k0 + kFp64Chunk);
    for (std::size_t s = s0; s < s1; ++s) {
      std::size_t i = i0;
      for (; i + Rows <= i1; i += Rows) fp64_tile<Rows, Magnitude>(o, i, s * kFp64Strip, k0, k1);
      for (; i < i1; ++i) fp64_tile<1, Magnitude>(o, i, s * kFp64Strip, k0, k1);
    }
    if (tail) {
      for (std::size_t i = i0; i < i1; ++i)
        for (std::size_t k = k0; k < k1; ++k) {
          const double x = o.a[i * o.K + k];
          for (std::size_t j = tail0; j < o.N; ++j) {
            o.value[i * o.N + j] += x * o.b[k * o.N + j];
            if constexpr (Magnitude) o.magnitude[i * o.N + j] += std::fabs(x) * o.abs_b[k * o.N + j];
          }
        }
    }
  }
}

using Fp64TaskFn = void (*)(const Fp64Operands&, std::size_t);
template <bool Magnitude>
void fp64_task_portable(const Fp64Operands& o, std::size_t t) {
  fp64_task_body<1, Magnitude>(o, t);
}
#if defined(__x86_64__) && defined(__GNUC__)
template <bool Magnitude>
__attribute__((target("avx2"))) void fp64_task_avx2(const Fp64Operands& o, std::size_t t) {
  fp64_task_body<1, Magnitude>(o, t);
}
// 4 rows x 2 x 2 zmm sums (16 of 32 registers) and 4 for B and |B|; without |B|, 8 rows x 2 sums.
template <bool Magnitude>
__attribute__((target("avx512f"))) void fp64_task_avx512(const Fp64Operands& o, std::size_t t) {
  fp64_task_body<Magnitude ? 4 : 8, Magnitude>(o, t);
}
#endif
template <bool Magnitude>
Fp64TaskFn fp64_task_for_cpu() {
#if defined(__x86_64__) && defined(__GNUC__)
  if (__builtin_cpu_supports("avx512f")) return &fp64_task_avx512<Magnitude>;
  if (__builtin_cpu_supports("avx2")) return &fp64_task_avx2<Magnitude>;
#endif
  return &fp64_task_portable<Magnitude>;
}

// A x B + C in double, and |A| x |B| + |C| unless `with_magnitude` is false (the sparse study's
// product before pruning needs the value only).
Fp64Product fp64_product(const Problem& p, Progress& progress, bool with_magnitude = true) {
  Fp64Product r;
  const auto M = static_cast<std::size_t>(p.M), N = static_cast<std::size_t>(p.N), K = static_cast<std::size_t>(p.K);
  r.value.resize(M * N);
  if (with_magnitude) r.magnitude.resize(M * N);
  const auto outputs = static_cast<std::int64_t>(M * N);
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < outputs; ++i) {
    r.value[static_cast<std::size_t>(i)] = 0.0;
    if (with_magnitude) r.magnitude[static_cast<std::size_t>(i)] = 0.0;
  }
  WorkBuffer abs_b(with_magnitude ? p.b.size() : 0);
  const auto abs_b_size = static_cast<std::int64_t>(abs_b.size());
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < abs_b_size; ++i) abs_b[static_cast<std::size_t>(i)] = std::fabs(p.b[static_cast<std::size_t>(i)]);
  // B's whole strips packed k-major, B and |B| side by side: a tile reads one contiguous stream.
  const std::size_t stride = with_magnitude ? 2 * kFp64Strip : kFp64Strip;
  WorkBuffer strips(N / kFp64Strip * K * stride);
  const auto strip_count = static_cast<std::int64_t>(N / kFp64Strip);
#pragma omp parallel for schedule(static)
  for (std::int64_t si = 0; si < strip_count; ++si)
    for (std::size_t k = 0, s = static_cast<std::size_t>(si); k < K; ++k)
      for (std::size_t c = 0; c < kFp64Strip; ++c) {
        strips[(s * K + k) * stride + c] = p.b[k * N + s * kFp64Strip + c];
        if (with_magnitude) strips[(s * K + k) * stride + kFp64Strip + c] = abs_b[k * N + s * kFp64Strip + c];
      }
  const Fp64Operands o{p.a.data(), p.b.data(), with_magnitude ? abs_b.data() : nullptr, strips.data(), r.value.data(),
                       with_magnitude ? r.magnitude.data() : nullptr, M, N, K};
  const Fp64TaskFn task = with_magnitude ? fp64_task_for_cpu<true>() : fp64_task_for_cpu<false>();
  const std::size_t row_blocks = (M + kFp64BlockRows - 1) / kFp64BlockRows;
  const std::size_t strip_groups = std::max<std::size_t>(1, (N / kFp64Strip + kFp64TaskStrips - 1) / kFp64TaskStrips);
  const auto tasks = static_cast<std::int64_t>(row_blocks * strip_groups);
  run_stage(progress, "fp64 product", tasks, [&](std::int64_t t) { task(o, static_cast<std::size_t>(t)); });
  if (!p.c.empty()) {  // C last: each output's sum runs k = 0 .. K-1, then C
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < outputs; ++i) {
      r.value[static_cast<std::size_t>(i)] += p.c[static_cast<std::size_t>(i)];
      if (with_magnitude) r.magnitude[static_cast<std::size_t>(i)] += std::fabs(p.c[static_cast<std::size_t>(i)]);
    }
  }
  return r;
}

// ---- Row slices of a quantized A (linear scales, as quantize() stores them by default), so that
// long computations can report progress between slices; every output depends on its own row of A
// only, so slicing does not change a bit.
BlockScaledTensor row_slice(const BlockScaledTensor& t, std::int64_t r0, std::int64_t r1) {
  BlockScaledDesc d = t.desc();
  d.shape = {r1 - r0, d.k()};
  d.k_axis = KAxis::last;
  const std::size_t row_bytes = t.desc().row_bytes();
  const auto kb = static_cast<std::size_t>(t.desc().k_blocks());
  std::vector<std::uint8_t> e(t.elements().begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(r0) * row_bytes),
                              t.elements().begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(r1) * row_bytes));
  std::vector<std::uint8_t> s(t.scales().begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(r0) * kb),
                              t.scales().begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(r1) * kb));
  RawBufferOptions o;
  o.k_tail = KTail::zero_pad;
  o.allow_nan_scales = true;
  return BlockScaledTensor(std::move(d), std::move(e), std::move(s), t.tensor_scale(), o);
}

// ---- One way to compute D.
struct Numerics {
  std::string name;        // "exact", "sm_100a", ...
  std::string definition;  // what it computes, in words
  // D rows [r0, r1) from A's rows [r0, r1); C (f32 bits of those rows) or empty.
  std::function<std::vector<std::uint32_t>(std::int64_t r0, std::int64_t r1, std::span<const std::uint32_t> c_rows,
                                           emulator::GemmPathStats* stats)>
      rows;
  int min_chunk_rows = 1;  // below this a slice costs more than it computes (the emulator's B panels)
  int split_k = 0;         // a library model's split count; 0 for the others
  Format d_format = Format::float32;  // the codes `rows` returns (a sparse kernel's f16, bf16 or e4m3 D)
  // cuBLASLt's AMAX_D (an fp8 D): `rows` raises it to max |y| over the rows it computes.
  std::shared_ptr<float> amax_d;
};

// A function of A's rows [r0, r1) as a tensor of their own (the whole of A when that is all of
// it), for the block-scaled numerics.
template <typename F>
auto on_row_slices(const BlockScaledTensor& qa, F f) {
  return [&qa, f](std::int64_t r0, std::int64_t r1, std::span<const std::uint32_t> c, emulator::GemmPathStats* stats) {
    if (r0 == 0 && r1 == qa.desc().rows()) return f(qa, c, stats);
    return f(row_slice(qa, r0, r1), c, stats);
  };
}

struct Result {
  std::string name, definition;
  int split_k = 0;
  std::vector<std::uint32_t> d;      // f32 words (the values of `codes` where D is not f32)
  Format d_format = Format::float32;
  std::vector<std::uint32_t> codes;  // D's codes in d_format; empty where that is f32
  double seconds = 0;
  emulator::GemmPathStats stats;
  bool has_stats = false;
  std::optional<float> amax_d;  // cuBLASLt's AMAX_D, where the numerics give it
};

// A block-scaled model of harness/block_scaled_models.h (exact, sequential_f32, sm_100a, sm_120a,
// sm_90a) on A's row slices.
Numerics make_numerics(const std::string& name, const BlockScaledTensor& qa, const BlockScaledTensor& qb) {
  const auto model = std::make_shared<const harness::BlockScaledModel>(name, qa, qb);
  Numerics n;
  n.name = name;
  n.definition = model->definition();
  n.min_chunk_rows = model->min_slice_rows();
  n.rows = on_row_slices(qa, [model](const BlockScaledTensor& a, std::span<const std::uint32_t> c, emulator::GemmPathStats* stats) {
    emulator::GemmOptions o;
    o.stats = stats;
    return (*model)(a, c, o);
  });
  return n;
}

Result run_numerics(const Numerics& n, std::int64_t M, const std::vector<std::uint32_t>& c_bits, std::int64_t N,
                    Progress& progress) {
  Result r;
  r.name = n.name;
  r.definition = n.definition;
  r.split_k = n.split_k;
  const std::int64_t chunk = std::max<std::int64_t>(n.min_chunk_rows, (M + 31) / 32);
  r.d.reserve(static_cast<std::size_t>(M * N));
  progress.start(n.name, M);
  for (std::int64_t r0 = 0; r0 < M; r0 += chunk) {
    const std::int64_t r1 = std::min(M, r0 + chunk);
    const std::span<const std::uint32_t> c =
        c_bits.empty() ? std::span<const std::uint32_t>()
                       : std::span<const std::uint32_t>(c_bits).subspan(static_cast<std::size_t>(r0 * N), static_cast<std::size_t>((r1 - r0) * N));
    emulator::GemmPathStats s;
    const std::vector<std::uint32_t> part = n.rows(r0, r1, c, &s);
    r.d.insert(r.d.end(), part.begin(), part.end());
    r.stats.exact += s.exact;
    r.stats.truncating += s.truncating;
    r.stats.special += s.special;
    r.stats.reference_outputs += s.reference_outputs;
    r.stats.fp16 += s.fp16;
    r.stats.certified += s.certified;
    progress.advance(r1);
  }
  r.has_stats = r.stats.exact + r.stats.truncating + r.stats.special + r.stats.reference_outputs + r.stats.certified > 0;
  r.seconds = progress.finish();
  if (n.amax_d) r.amax_d = *n.amax_d;
  if (n.d_format != Format::float32) {  // every f16, bf16 and e4m3 value (NaN included) is an f32 value
    r.d_format = n.d_format;
    r.codes = std::move(r.d);
    r.d.resize(r.codes.size());
    // convert_code, not formats/bulk.h's decode: that one gives every NaN the canonical NaN, and the
    // report counts NaN payload differences.
    const auto outputs = static_cast<std::int64_t>(r.codes.size());
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < outputs; ++i) {
      r.d[static_cast<std::size_t>(i)] = convert_code(Format::float32, n.d_format, r.codes[static_cast<std::size_t>(i)]);
    }
  }
  return r;
}

// ---- Error against the unquantized fp64 product.
struct ErrorStats {
  std::int64_t compared = 0, nonfinite = 0;  // nonfinite: D or the fp64 value is NaN or Inf
  double relative_frobenius = 0;             // ||D - R||_F / ||R||_F over the compared outputs
  double median = 0, p99 = 0, max = 0;       // of |D - R| / (|A||B| + |C|) (0 where that is 0)
};

// Statistics over the outputs run on the threads in fixed chunks; floating-point sums add the
// chunks' sums in chunk order, so the bits do not depend on the thread count.
constexpr std::int64_t kStatsChunk = std::int64_t{1} << 16;

std::int64_t stats_chunks(std::size_t outputs) {
  return (static_cast<std::int64_t>(outputs) + kStatsChunk - 1) / kStatsChunk;
}

ErrorStats error_stats(const std::vector<std::uint32_t>& d, const Fp64Product& ref) {
  ErrorStats e;
  // Per output |D - R| / (|A||B| + |C|) as the bits of a double >= 0; outputs left out get the top bit.
  constexpr std::uint64_t kLeftOut = std::uint64_t{1} << 63;
  std::vector<std::uint64_t> normalised(d.size());
  const std::int64_t chunks = stats_chunks(d.size());
  std::vector<double> diff2(static_cast<std::size_t>(chunks)), ref2(static_cast<std::size_t>(chunks)),
      largest(static_cast<std::size_t>(chunks));
  std::vector<std::int64_t> compared(static_cast<std::size_t>(chunks));
#pragma omp parallel for schedule(static)
  for (std::int64_t c = 0; c < chunks; ++c) {
    const auto ci = static_cast<std::size_t>(c);
    const std::size_t end = std::min(d.size(), static_cast<std::size_t>((c + 1) * kStatsChunk));
    for (std::size_t i = static_cast<std::size_t>(c * kStatsChunk); i < end; ++i) {
      const double x = std::bit_cast<float>(d[i]), r = ref.value[i];
      if (!std::isfinite(x) || !std::isfinite(r) || !std::isfinite(ref.magnitude[i])) {
        normalised[i] = kLeftOut;
        continue;
      }
      ++compared[ci];
      diff2[ci] += (x - r) * (x - r);
      ref2[ci] += r * r;
      const double q = ref.magnitude[i] > 0 ? std::fabs(x - r) / ref.magnitude[i] : (x == r ? 0.0 : INFINITY);
      normalised[i] = std::bit_cast<std::uint64_t>(q);
      largest[ci] = std::max(largest[ci], q);
    }
  }
  double diff2_sum = 0, ref2_sum = 0;
  for (std::size_t c = 0; c < diff2.size(); ++c) {
    e.compared += compared[c];
    diff2_sum += diff2[c];
    ref2_sum += ref2[c];
    e.max = std::max(e.max, largest[c]);
  }
  e.nonfinite = static_cast<std::int64_t>(d.size()) - e.compared;
  e.relative_frobenius = ref2_sum > 0 ? std::sqrt(diff2_sum / ref2_sum) : (diff2_sum > 0 ? INFINITY : 0.0);
  if (e.compared == 0) {  // every output NaN or Inf: no error to state (n/a in the table, null in JSON), not 0
    e.relative_frobenius = e.median = e.p99 = e.max = NAN;
  } else {
    auto rank = [&](double q) { return static_cast<std::int64_t>(q * static_cast<double>(e.compared - 1)); };
    const std::int64_t ranks[] = {rank(0.5), rank(0.99)};
    const std::vector<double> at = order_statistics(normalised, ranks);
    e.median = at[0];
    e.p99 = at[1];
  }
  return e;
}

// Each numerics' distance from exact, output by output: in ulps of D's format where exact has it
// too (the sparse kernels' D types), else in f32 ulps of the values (cuBLASLt's f16 D beside an f32
// exact: every f16 value is an f32 value, and codes of two formats cannot be compared).
UlpComparison ulps_from(const Result& r, const Result& exact) {
  const bool same_format = r.d_format == exact.d_format;
  const std::vector<std::uint32_t>& d = same_format && !r.codes.empty() ? r.codes : r.d;
  const std::vector<std::uint32_t>& e = same_format && !exact.codes.empty() ? exact.codes : exact.d;
  const Format format = same_format ? r.d_format : Format::float32;
  const std::int64_t chunks = stats_chunks(d.size());
  std::vector<UlpComparison> parts(static_cast<std::size_t>(chunks));
#pragma omp parallel for schedule(static)
  for (std::int64_t c = 0; c < chunks; ++c) {
    UlpComparison& part = parts[static_cast<std::size_t>(c)];
    part.format = format;
    const std::size_t end = std::min(d.size(), static_cast<std::size_t>((c + 1) * kStatsChunk));
    for (std::size_t i = static_cast<std::size_t>(c * kStatsChunk); i < end; ++i) part.add(d[i], e[i]);
  }
  UlpComparison all;
  all.format = format;
  for (const UlpComparison& part : parts) all.merge(part);
  return all;
}

std::string output_path(const std::string& dir, const std::string& numerics) {
  return (std::filesystem::path(dir) / (numerics + ".npy")).string();
}

std::vector<std::string> split_models(const std::string& list) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= list.size()) {
    const std::size_t end = std::min(list.find(',', start), list.size());
    const std::string m = list.substr(start, end - start);
    if (m.empty()) {
      throw UsageError("--models is a comma list (sm_100a, sm_120a, sm_90a, sequential_f32; for fp8 with fp32 scales "
                       "cublaslt, cublaslt_fast_accum, torch_scaled_mm, torch_scaled_mm_fast_accum); got '" + list + "'");
    }
    if (m == "exact") throw UsageError("--models names what runs beside exact; exact is always computed unless --no-exact");
    if (std::find(out.begin(), out.end(), m) != out.end()) throw UsageError("--models names " + m + " twice");
    out.push_back(m);
    start = end + 1;
  }
  return out;
}

// ---- fp8 with fp32 scales (quantize/fp8_scaled.h) and the library GEMMs that take it
// (emulator/library_fp8.h).
std::optional<Format> fp8_scaled_format(const std::string& name) {
  if (name == "fp8_e4m3") return Format::float8_e4m3fn;
  if (name == "fp8_e5m2") return Format::float8_e5m2;
  return std::nullopt;
}

const NamedFp8Recipe& fp8_recipe(const std::string& option, const std::string& name) {
  if (const NamedFp8Recipe* r = find_fp8_recipe(name)) return *r;
  std::string names;
  for (const NamedFp8Recipe& r : named_fp8_recipes()) names += (names.empty() ? "" : ", ") + std::string(r.name);
  throw UsageError("unknown --" + option + " '" + name + "' for fp8 with fp32 scales (" + names + ")");
}

// The library GEMM `name` for these scalings; UsageError naming what exists otherwise.
const emulator::LibraryFp8Schedule& library_schedule(const std::string& name, Fp8Granularity a, Fp8Granularity b) {
  const emulator::LibraryFp8Model* m = emulator::find_library_fp8_model(name);
  if (!m) {
    std::string names;
    for (const emulator::LibraryFp8Model& known : emulator::library_fp8_models())
      names += (names.empty() ? "" : ", ") + std::string(known.name);
    throw UsageError("unknown model '" + name + "' for fp8 with fp32 scales (" + names + ")");
  }
  try {
    return emulator::library_fp8_schedule(m->library, m->fast_accum, a, b);
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("--models ") + m->name + ": " + e.what());
  }
}

// How the library calls being modelled are made: --split-k (a count, or the GPU whose recorded
// heuristic gives it), --d-type, --bias and --cublaslt-workspace-mib.
struct LibraryCall {
  int split_k = 1;                    // --split-k S
  std::string gpu;                    // --split-k h100|h200: the recorded heuristic's S, per model
  Format d_format = Format::float32;  // --d-type f32 | bf16 | f16 | e4m3 | e5m2
  std::vector<std::uint32_t> bias;    // --bias: N codes of d_format (torch._scaled_mm), or none
  int cublaslt_workspace_mib = 64;    // the workspace of a direct cuBLASLt call, for the recorded S
  // cuBLASLt's own epilogue (emulator::cublaslt_fp8_gemm; the cublaslt models): --alpha, --beta
  // with --c (C's codes, M x N), --bias (M codes, one per row of D), an fp8 --d-type with --d-scale
  // and --c-type. C's and the bias's types follow D's, as cuBLASLt took them.
  bool lt_epilogue = false;
  emulator::CublasLtEpilogue lt;  // its spans refer to lt_c and lt_bias
  std::shared_ptr<std::vector<std::uint32_t>> lt_c, lt_bias;
  std::string d_name() const {
    return d_format == Format::bfloat16  ? "bf16"
           : d_format == Format::float16 ? "f16"
           : d_format == Format::float8_e4m3fn ? "e4m3"
           : d_format == Format::float8_e5m2   ? "e5m2"
                                               : "f32";
  }
};

std::string gpu_title(const std::string& gpu) { return gpu == "h100" ? "an H100" : "an H200"; }

// Whether the library's heuristic may split K at this shape, for shapes off the recorded grid. On
// an H100 and an H200 (cuBLASLt 13.1), in the grid of 11,552 shapes (docs/conformance.md,
// "Split-K": "Which S"), it split no K below 6144 (the grid's K steps from 4096 to 6144 by 1024),
// and torch (its 1 MiB workspace) no M x N above 98,304, while a 64 MiB cuBLASLt workspace split
// up to 4.7 M outputs. K between the grid's steps was not asked, so the hint starts above 4096
// and, for torch, below M x N = 131,072.
bool heuristic_may_split(const std::string& model, std::int64_t M, std::int64_t N, std::int64_t K) {
  if (K <= 4096) return false;
  return model.rfind("torch", 0) != 0 || M * N <= 131072;
}

// The split count of model `name` (schedule `s`) at M x N x K, and the words of its definition
// that say where the count comes from. With --split-k GPU the recorded heuristic decides (an error
// naming the rule when it has no answer); without --split-k the count is 1, and the definition
// says when the recorded heuristic, or for shapes off its grid possibly the GPU's, would split.
std::pair<int, std::string> split_count(const std::string& name, const emulator::LibraryFp8Schedule& s,
                                        const LibraryCall& call, Format a_element, Format b_element, std::int64_t M,
                                        std::int64_t N, std::int64_t K) {
  auto recorded = [&](const std::string& gpu) {
    return emulator::recorded_split_k(s.library, s.fast_accum, s.a, s.b, a_element, b_element, M, N, K,
                                      {gpu, call.d_format == Format::bfloat16, call.cublaslt_workspace_mib});
  };
  const std::string cuts = " at multiples of " + std::to_string(s.split_granule_k) + " of K, the slices added in order";
  const std::string d = call.d_name();
  if (!call.gpu.empty()) {
    int S = 1;
    try {
      S = recorded(call.gpu);
    } catch (const std::invalid_argument& e) {
      throw UsageError("--split-k " + call.gpu + ", --models " + name + ": " + e.what());
    }
    const std::string source = "as cuBLASLt 13.1's heuristic chose for this call with " + d + " D on " +
                               gpu_title(call.gpu) + " (recorded; docs/conformance.md, \"Split-K\")";
    if (S == 1) return {1, "; no split-K, " + source};
    return {S, "; split-K " + std::to_string(S) + cuts + "; S " + source};
  }
  if (call.split_k > 1) return {call.split_k, "; split-K " + std::to_string(call.split_k) + cuts};
  std::optional<int> h100, h200;
  try {
    h100 = recorded("h100");
    h200 = recorded("h200");
  } catch (const std::invalid_argument&) {  // off the grid, or no algorithm: nothing recorded to say
  }
  if (h100 && h200) {
    if (*h100 == 1 && *h200 == 1) return {1, "; no split-K"};
    return {1, "; no split-K (cuBLASLt 13.1's heuristic splits this call with " + d + " D into " +
                   std::to_string(*h100) + " on an H100 and " + std::to_string(*h200) +
                   " on an H200, as recorded: --split-k h100 or h200 models it)"};
  }
  if (heuristic_may_split(name, M, N, K)) {
    return {1, "; no split-K (the library's heuristic may split K at this shape: scripts/cublaslt_split_k.py query " +
                   std::to_string(M) + "x" + std::to_string(N) + "x" + std::to_string(K) +
                   (name.rfind("torch", 0) == 0 ? "" : " --library cublaslt") + " on the GPU gives S for --split-k)"};
  }
  return {1, "; no split-K"};
}

// --bias: torch._scaled_mm's bias, N values each exact in D's dtype (torch takes it only in that
// dtype). Its codes go to the library models (emulator::add_bias); broadcast over the rows it is C
// of the fp64 product that the errors are measured against.
void read_bias(const std::string& path, Problem& p, LibraryCall& call) {
  const NpyMatrix v = read_npy_vector(path);
  if (v.cols != p.N) {
    throw UsageError("--bias " + path + " holds " + std::to_string(v.cols) +
                     " values; D has N = " + std::to_string(p.N) + " columns, one bias value each");
  }
  call.bias.resize(static_cast<std::size_t>(p.N));
  for (std::int64_t j = 0; j < p.N; ++j) {
    const double x = v.values[static_cast<std::size_t>(j)];
    const std::uint32_t code = convert(call.d_format, x, presets::ieee());
    if (!std::isfinite(x) || to_double(call.d_format, code) != x) {
      char value[40];
      std::snprintf(value, sizeof value, "%.17g", x);
      throw UsageError("--bias " + path + ": value " + std::to_string(j) + " (" + value +
                       ") is not a finite " + call.d_name() +
                       " value: torch._scaled_mm takes the bias in D's dtype, and was measured with "
                       "finite ones");
    }
    call.bias[static_cast<std::size_t>(j)] = code;
  }
  p.c.resize(static_cast<std::size_t>(p.M * p.N));
  for (std::size_t i = 0; i < p.c.size(); ++i) p.c[i] = v.values[i % static_cast<std::size_t>(p.N)];
  p.c_source = "the bias " + path + " (" + v.descr + "), one value per column";
}

// The values of a C or bias input for cuBLASLt's epilogue as codes of `f`: each must be a finite
// value of f (cuBLASLt reads them in that type, and was measured with finite ones).
std::shared_ptr<std::vector<std::uint32_t>> exact_codes(const double* values, std::size_t count, Format f,
                                                        const std::string& what) {
  auto codes = std::make_shared<std::vector<std::uint32_t>>(count);
  for (std::size_t i = 0; i < count; ++i) {
    const double x = values[i];
    const std::uint32_t code = convert(f, x, presets::ieee());
    if (!std::isfinite(x) || to_double(f, code) != x) {
      char value[40];
      std::snprintf(value, sizeof value, "%.17g", x);
      throw UsageError(what + ": value " + std::to_string(i) + " (" + value + ") is not a finite " + info(f).name +
                       " value: cuBLASLt reads it in that type, and was measured with finite ones");
    }
    (*codes)[i] = code;
  }
  return codes;
}

// cuBLASLt's epilogue inputs: C (--c, already read as M x N) and the bias (--bias, M values, one
// per row of D), as codes of their types.
void read_lt_epilogue(const std::optional<std::string>& bias_path, const Problem& p, LibraryCall& call,
                      std::vector<double>& bias_values) {
  if (!p.c.empty()) {
    call.lt_c = exact_codes(p.c.data(), p.c.size(), call.lt.c_format, "--c " + p.c_source);
    call.lt.c = *call.lt_c;
  }
  if (!bias_path) return;
  const NpyMatrix v = read_npy_vector(*bias_path);
  if (v.cols != p.M) {
    throw UsageError("--bias " + *bias_path + " holds " + std::to_string(v.cols) + " values; with the cublaslt models D has M = " +
                     std::to_string(p.M) + " rows, one bias value each (cuBLASLt's bias is per row of D)");
  }
  bias_values.assign(v.values.begin(), v.values.end());
  call.lt_bias = exact_codes(bias_values.data(), bias_values.size(), call.lt.bias_format, "--bias " + *bias_path);
  call.lt.bias = *call.lt_bias;
}

// The fp64 product of cuBLASLt's epilogue: d_scale (alpha A B + beta C + bias(i)), with --relu
// d_scale max(alpha A B + beta C + bias(i), 0), from A B without C, and its magnitude
// |d_scale| (|alpha| |A||B| + |beta C| + |bias(i)|).
void apply_lt_epilogue(Fp64Product& ref, const Problem& p, const std::vector<double>& bias_values,
                       const LibraryCall& call) {
  const double alpha = call.lt.alpha, beta = call.lt.beta, d_scale = call.lt.d_scale;
  const auto outputs = static_cast<std::int64_t>(ref.value.size());
#pragma omp parallel for schedule(static)
  for (std::int64_t i = 0; i < outputs; ++i) {
    const auto at = static_cast<std::size_t>(i);
    const double c = p.c.empty() ? 0.0 : beta * p.c[at];
    const double bias = bias_values.empty() ? 0.0 : bias_values[static_cast<std::size_t>(i / p.N)];
    const double y = alpha * ref.value[at] + c + bias;
    ref.value[at] = d_scale * (call.lt.relu ? std::max(y, 0.0) : y);
    ref.magnitude[at] = std::fabs(d_scale) * (std::fabs(alpha) * ref.magnitude[at] + std::fabs(c) + std::fabs(bias));
  }
}

// `split`: the model's split count and the words that say where it comes from (split_count);
// ignored for "exact".
Numerics make_fp8_numerics(const std::string& name, const Fp8ScaledMatrix& qa, const Fp8ScaledMatrix& qb,
                           const std::pair<int, std::string>& split, const LibraryCall& call) {
  Numerics n;
  n.name = name;
  n.min_chunk_rows = 512;
  if (name == "exact") {
    n.definition = "the quantized operands' exact sum, rounded once to f32 (nearest even)";
    // B converted once for all the row slices (shared, not copied with the function object).
    const auto prepared = std::make_shared<const emulator::ExactFp8ScaledB>(qb, qa.element);
    n.rows = [&qa, prepared](std::int64_t r0, std::int64_t r1, std::span<const std::uint32_t>,
                             emulator::GemmPathStats* stats) {
      emulator::GemmOptions o;
      o.stats = stats;
      return emulator::exact_fp8_scaled_gemm(qa, *prepared, r0, r1, o);
    };
    return n;
  }
  const emulator::LibraryFp8Schedule s = library_schedule(name, qa.granularity, qb.granularity);
  n.split_k = split.first;
  if (call.lt_epilogue) {
    n.definition = s.definition() + split.second + emulator::cublaslt_epilogue_definition(s, split.first, call.lt);
    n.d_format = call.d_format;
    const bool fp8_d = call.d_format == Format::float8_e4m3fn || call.d_format == Format::float8_e5m2;
    n.amax_d = fp8_d ? std::make_shared<float>(0.0f) : nullptr;
    n.rows = [s, &qa, &qb, slices = split.first, call, amax = n.amax_d](
                 std::int64_t r0, std::int64_t r1, std::span<const std::uint32_t>, emulator::GemmPathStats* stats) {
      emulator::GemmOptions o;
      o.stats = stats;
      emulator::CublasLtFp8Result r = emulator::cublaslt_fp8_gemm(s, qa, qb, r0, r1, slices, call.lt, o);
      if (amax) *amax = std::max(*amax, r.amax_d);
      return std::move(r.d);
    };
    return n;
  }
  n.definition =
      s.definition() + split.second +
      (!call.bias.empty() ? "; plus the bias in f32 (FADD after the scales), then D rounded once to " +
                                call.d_name() + " (nearest even), as torch._scaled_mm adds it"
       : call.d_format != Format::float32
           ? "; D in " + call.d_name() + ": the f32 D rounded once to nearest even, as the libraries write it"
           : std::string());
  n.rows = [s, &qa, &qb, slices = split.first, d_format = call.d_format, bias = call.bias](
               std::int64_t r0, std::int64_t r1, std::span<const std::uint32_t>,
               emulator::GemmPathStats* stats) {
    emulator::GemmOptions o;
    o.stats = stats;
    std::vector<std::uint32_t> d = emulator::library_fp8_gemm(s, qa, qb, r0, r1, slices, o);
    if (!bias.empty()) {
      emulator::add_bias(d, static_cast<std::int64_t>(bias.size()), bias, d_format);
    } else {
      emulator::round_d(d, d_format);
    }
    return d;
  };
  return n;
}

// ---- What every family reports: its own header fields, then per numerics the error against an
// fp64 product and the distance from exact (the first numerics, when exact runs).
struct Report {
  std::string json_fields;  // the family's JSON fields after the operands, each "\n  \"key\": value,"
  std::string text_header;  // the family's lines after the operands' sources, each ending in a newline
  std::string fp64_title;   // the fp64 product the errors are measured against
  std::string ulp_title;    // what the ulps from exact show
  std::vector<Result> results;
  std::vector<ErrorStats> errors;
  std::vector<UlpComparison> ulps;
};

void create_output_dir(const std::optional<std::string>& out_dir) {
  if (!out_dir) return;
  std::error_code ec;
  std::filesystem::create_directories(*out_dir, ec);
  if (ec) throw UsageError(*out_dir + ": cannot create the output directory: " + ec.message());
}

// Runs each numerics, writes its D under out_dir, and measures it against `ref` and exact.
void run_and_measure(Report& report, const std::vector<Numerics>& numerics, const Problem& p,
                     const std::vector<std::uint32_t>& c_bits, const Fp64Product& ref, bool with_exact,
                     const std::optional<std::string>& out_dir, Progress& progress) {
  for (const Numerics& n : numerics) report.results.push_back(run_numerics(n, p.M, c_bits, p.N, progress));
  if (out_dir) {
    for (const Result& r : report.results) write_npy_f32(output_path(*out_dir, r.name), p.M, p.N, r.d);
  }
  const std::size_t count = report.results.size();
  report.errors.resize(count);
  report.ulps.resize(count);
  progress.start("statistics", static_cast<std::int64_t>(count));
  for (std::size_t i = 0; i < count; ++i) {  // each on all threads
    report.errors[i] = error_stats(report.results[i].d, ref);
    if (with_exact) report.ulps[i] = ulps_from(report.results[i], report.results[0]);
    progress.advance(static_cast<std::int64_t>(i + 1));
  }
  progress.finish();
}

void print_report_json(const Report& report, const Problem& p, bool with_exact, const std::optional<std::string>& out_dir) {
  const double macs = static_cast<double>(p.M) * static_cast<double>(p.N) * static_cast<double>(p.K);
  std::string c_json = "null";
  if (!p.c.empty()) c_json = std::string(1, '"').append(json_escape(p.c_source)).append(1, '"');
  std::printf("{\n  \"m\": %lld, \"n\": %lld, \"k\": %lld,\n  \"a\": \"%s\", \"b\": \"%s\", \"c\": %s,%s",
              static_cast<long long>(p.M), static_cast<long long>(p.N), static_cast<long long>(p.K),
              json_escape(p.a_source).c_str(), json_escape(p.b_source).c_str(), c_json.c_str(), report.json_fields.c_str());
  std::printf("\n  \"numerics\": [");
  for (std::size_t i = 0; i < report.results.size(); ++i) {
    const Result& r = report.results[i];
    const ErrorStats& e = report.errors[i];
    std::printf("%s\n    {\"name\": \"%s\", \"definition\": \"%s\", \"seconds\": %.6f, \"mac_per_second\": %.6g,\n"
                "     \"vs_fp64\": {\"compared\": %lld, \"nonfinite\": %lld, \"relative_frobenius\": %s, "
                "\"normalised_median\": %s, \"normalised_p99\": %s, \"normalised_max\": %s}",
                i ? "," : "", json_escape(r.name).c_str(), json_escape(r.definition).c_str(), r.seconds,
                macs / std::max(r.seconds, 1e-9), static_cast<long long>(e.compared),
                static_cast<long long>(e.nonfinite), json_number(e.relative_frobenius).c_str(),
                json_number(e.median).c_str(), json_number(e.p99).c_str(), json_number(e.max).c_str());
    if (r.split_k > 0) std::printf(",\n     \"split_k\": %d", r.split_k);  // a library model's slices
    if (r.amax_d) std::printf(",\n     \"amax_d\": %s", json_number(*r.amax_d, 9).c_str());
    if (with_exact) {
      const UlpComparison& u = report.ulps[i];
      std::printf(",\n     \"vs_exact\": {\"outputs\": %lld, \"differ\": %lld, \"nan_mismatches\": %lld, "
                  "\"zero_sign_mismatches\": %lld, \"nan_payload_differences\": %lld, \"max_ulp\": %llu, "
                  "\"ulp_histogram\": {",
                  static_cast<long long>(u.outputs), static_cast<long long>(u.differ),
                  static_cast<long long>(u.nan_mismatch), static_cast<long long>(u.zero_sign),
                  static_cast<long long>(u.nan_payload), static_cast<unsigned long long>(u.max_ulp));
      for (int b = 0; b < kUlpBucketCount; ++b)
        std::printf("%s\"%s\": %lld", b ? ", " : "", kUlpBuckets[b].label, static_cast<long long>(u.histogram[b]));
      std::printf("}}");
    }
    if (r.has_stats && r.name == "exact") {
      // emulator::exact_gemm counts outputs: proved exact in double, settled as NaN / Inf, or
      // recomputed by the reference engine; exact_fp8_scaled_gemm: certified in double, summed in
      // its fixed point, or in reference::ExactSum.
      std::printf(",\n     \"outputs\": {\"proved\": %llu, \"special\": %llu, \"reference\": %llu, \"certified\": %llu}",
                  static_cast<unsigned long long>(r.stats.exact), static_cast<unsigned long long>(r.stats.special),
                  static_cast<unsigned long long>(r.stats.reference_outputs),
                  static_cast<unsigned long long>(r.stats.certified));
    } else if (r.has_stats) {
      std::printf(",\n     \"steps\": {\"exact\": %llu, \"truncating\": %llu, \"special\": %llu}",
                  static_cast<unsigned long long>(r.stats.exact), static_cast<unsigned long long>(r.stats.truncating),
                  static_cast<unsigned long long>(r.stats.special));
    }
    if (out_dir) std::printf(",\n     \"file\": \"%s\"", json_escape(output_path(*out_dir, r.name)).c_str());
    std::printf("}");
  }
  std::printf("\n  ]\n}\n");
}

void print_report_text(const Report& report, const Problem& p, bool with_exact, const std::optional<std::string>& out_dir) {
  const double macs = static_cast<double>(p.M) * static_cast<double>(p.N) * static_cast<double>(p.K);
  const std::vector<Result>& results = report.results;
  std::printf("blockscale gemm: D = A x B%s, M=%lld N=%lld K=%lld\n", p.c.empty() ? "" : " + C", static_cast<long long>(p.M),
              static_cast<long long>(p.N), static_cast<long long>(p.K));
  std::printf("  A: %s\n  B: %s\n", p.a_source.c_str(), p.b_source.c_str());
  if (!p.c.empty()) std::printf("  C: %s\n", p.c_source.c_str());
  std::printf("%s\n", report.text_header.c_str());
  for (const Result& r : results) std::printf("  %-14s %s\n", r.name.c_str(), r.definition.c_str());
  std::printf("\n  error against %s (normalised: |D - R| / (|A||B| + |C|) per output)\n", report.fp64_title.c_str());
  std::printf("  %-14s %9s %10s %12s %11s %11s %11s\n", "numerics", "time", "MAC/s", "rel. Frob.", "norm. med", "norm. p99",
              "norm. max");
  for (std::size_t i = 0; i < results.size(); ++i) {
    const ErrorStats& e = report.errors[i];
    if (e.compared == 0) {
      std::printf("  %-14s %8.2fs %10.3g %12s %11s %11s %11s", results[i].name.c_str(), results[i].seconds,
                  macs / std::max(results[i].seconds, 1e-9), "n/a", "n/a", "n/a", "n/a");
    } else {
      std::printf("  %-14s %8.2fs %10.3g %12.4g %11.4g %11.4g %11.4g", results[i].name.c_str(), results[i].seconds,
                  macs / std::max(results[i].seconds, 1e-9), e.relative_frobenius, e.median, e.p99, e.max);
    }
    if (e.nonfinite) std::printf("  (%lld outputs NaN or Inf, left out)", static_cast<long long>(e.nonfinite));
    std::printf("\n");
  }
  for (const Result& r : results) {
    if (r.amax_d) std::printf("  %-14s amax_d (cuBLASLt's AMAX_D: max |D| before the D scale) = %.9g\n", r.name.c_str(), *r.amax_d);
  }
  if (with_exact && results.size() > 1) {
    std::printf("\n  %s\n", report.ulp_title.c_str());
    std::printf("  %-14s %15s %9s  ", "numerics", "outputs differ", "max ulp");
    for (const UlpBucket& b : kUlpBuckets) std::printf(" %8s", b.label);
    std::printf("\n");
    for (std::size_t i = 1; i < results.size(); ++i) {
      const UlpComparison& u = report.ulps[i];
      char differ[48];
      std::snprintf(differ, sizeof differ, "%lld (%.1f%%)", static_cast<long long>(u.differ),
                    100.0 * static_cast<double>(u.differ) / static_cast<double>(std::max<std::int64_t>(u.outputs, 1)));
      std::printf("  %-14s %15s %9llu  ", results[i].name.c_str(), differ, static_cast<unsigned long long>(u.max_ulp));
      for (const std::int64_t h : u.histogram) std::printf(" %8lld", static_cast<long long>(h));
      print_bit_differences(u);
      std::printf("\n");
    }
  }
  if (out_dir) {
    std::printf("\n  D written as f32 .npy files, one per numerics: %s ...\n", output_path(*out_dir, results[0].name).c_str());
  }
}

void print_report(const Report& report, const Problem& p, bool with_exact, const std::optional<std::string>& out_dir, bool json) {
  if (json) {
    print_report_json(report, p, with_exact, out_dir);
  } else {
    print_report_text(report, p, with_exact, out_dir);
  }
}

// ---- 2:4 sparse A: torch._cslt_sparse_mm (cuSPARSELt 0.8) on Hopper, as measured on an H100
// (emulator/sparse_gemm.h; docs/emulator.md, "2:4 sparse GEMMs").
Format sparse_format(const std::string& option, const std::string& name) {
  if (const std::optional<Format> f = harness::sparse_mm_format(name)) return *f;
  throw UsageError("--" + option + " '" + name + "': with --sparse, f16, bf16, f32 or e4m3 (torch._cslt_sparse_mm's types)");
}

// Magnitude pruning along K, as the sparse kernels need A: of each group of `group` values (4; 2 for
// f32 input, which runs the tf32 kernel's 1:2 sparsity) the group / 2 largest magnitudes stay, ties
// to the lower position, a NaN above any number; the others become +0. This is the mask of NVIDIA's
// ASP (apex, m4n2_1d) and of scripts/probe_sparse_mm.py. Returns how many nonzero values it removed.
std::int64_t prune_by_magnitude(WorkBuffer& a, std::int64_t M, std::int64_t K, int group) {
  const auto larger = [](double x, double y) {  // |x| > |y|, NaN largest
    if (std::isnan(x)) return !std::isnan(y);
    return !std::isnan(y) && std::fabs(x) > std::fabs(y);
  };
  std::int64_t removed = 0;
#pragma omp parallel for schedule(static) reduction(+ : removed)
  for (std::int64_t i = 0; i < M; ++i) {
    for (std::int64_t g = 0; g < K; g += group) {
      double* v = a.data() + i * K + g;
      bool keep[4] = {};
      for (int q = 0; q < group; ++q) {
        int ahead = 0;  // values ranked before v[q]
        for (int r = 0; r < group; ++r) ahead += larger(v[r], v[q]) || (r < q && !larger(v[q], v[r]));
        keep[q] = ahead < group / 2;
      }
      for (int q = 0; q < group; ++q) {
        if (keep[q]) continue;
        removed += v[q] != 0.0;
        v[q] = 0.0;
      }
    }
  }
  return removed;
}

// ||x - ref||_F / ||ref||_F over the outputs where both are finite, in chunks added in order (the
// bits do not depend on the thread count).
double relative_frobenius(const WorkBuffer& x, const WorkBuffer& ref) {
  const std::int64_t chunks = stats_chunks(x.size());
  std::vector<double> diff2(static_cast<std::size_t>(chunks)), ref2(static_cast<std::size_t>(chunks));
#pragma omp parallel for schedule(static)
  for (std::int64_t c = 0; c < chunks; ++c) {
    const std::size_t end = std::min(x.size(), static_cast<std::size_t>((c + 1) * kStatsChunk));
    for (std::size_t i = static_cast<std::size_t>(c * kStatsChunk); i < end; ++i) {
      if (!std::isfinite(x[i]) || !std::isfinite(ref[i])) continue;
      diff2[static_cast<std::size_t>(c)] += (x[i] - ref[i]) * (x[i] - ref[i]);
      ref2[static_cast<std::size_t>(c)] += ref[i] * ref[i];
    }
  }
  double d = 0, r = 0;
  for (std::size_t c = 0; c < diff2.size(); ++c) {
    d += diff2[c];
    r += ref2[c];
  }
  return r > 0 ? std::sqrt(d / r) : (d > 0 ? INFINITY : 0.0);
}

// The operands as the caller hands them to torch._cslt_compress and torch._cslt_sparse_mm: f32
// values cast to the input type as a framework does (Tensor.to): f16 and bf16 to nearest even,
// overflowing to Inf; e4m3 to nearest even, and NaN where the rounding passes 448 (magnitudes above
// 464: torch 2.11's non-saturating Float8_e4m3fn cast, which ml_dtypes' default shares;
// docs/formats.md); f32 as given (the tf32 kernel rounds its operands itself).
struct SparseOperands {
  Format input = Format::float16;
  std::int64_t M = 0, N = 0, K = 0;
  std::vector<std::uint32_t> a, b;  // M x K and K x N codes, row-major
  std::int64_t changed = 0, nonfinite = 0;  // values the cast changed / made Inf or NaN
};

// One chunk of cast_values: codes of `input` in storage words of type Word (formats/bulk.h), widened
// into `codes`, and how many values the cast changed or made Inf or NaN. A value is changed when its
// code does not decode to it again (any NaN to any NaN counts as unchanged).
template <typename Word>
void cast_chunk(Format input, std::span<const float> in, const ConvertOptions& o, std::span<std::uint32_t> codes,
                std::int64_t& changed, std::int64_t& nonfinite) {
  std::vector<Word> words(in.size());
  std::vector<float> back(in.size());
  blockscale::convert(in, input, std::span<Word>(words), o);
  blockscale::decode(input, std::span<const Word>(words), std::span<float>(back));
  for (std::size_t i = 0; i < in.size(); ++i) {
    codes[i] = words[i];
    const auto bits = std::bit_cast<std::uint32_t>(in[i]), back_bits = std::bit_cast<std::uint32_t>(back[i]);
    changed += back_bits != bits && !(std::isnan(back[i]) && std::isnan(in[i]));
    nonfinite += std::isfinite(in[i]) && !std::isfinite(back[i]);
  }
}

std::vector<std::uint32_t> cast_values(Format input, const FirstTouchVector<float>& v, std::int64_t& changed,
                                       std::int64_t& nonfinite) {
  const ConvertOptions o = input == Format::float8_e4m3fn ? presets::ml_dtypes(input) : presets::ieee();
  std::vector<std::uint32_t> codes(v.size());
  if (input == Format::float32) {
    std::memcpy(codes.data(), v.data(), v.size() * sizeof(float));
    return codes;
  }
  // Chunks of the bulk conversions on the threads; the counts do not depend on the split.
  constexpr std::size_t kChunk = 1 << 16;
  const auto chunks = static_cast<std::int64_t>((v.size() + kChunk - 1) / kChunk);
  std::int64_t c = 0, nf = 0;
#pragma omp parallel for schedule(static) reduction(+ : c, nf)
  for (std::int64_t chunk = 0; chunk < chunks; ++chunk) {
    const std::size_t i0 = static_cast<std::size_t>(chunk) * kChunk, n = std::min(kChunk, v.size() - i0);
    const std::span<const float> in(v.data() + i0, n);
    const std::span<std::uint32_t> out(codes.data() + i0, n);
    if (info(input).storage_bits == 16) {
      cast_chunk<std::uint16_t>(input, in, o, out, c, nf);
    } else {
      cast_chunk<std::uint8_t>(input, in, o, out, c, nf);
    }
  }
  changed += c;
  nonfinite += nf;
  return codes;
}

Numerics make_sparse_numerics(const std::string& name, const SparseOperands& op, Format d_format, int slices) {
  Numerics n;
  n.name = name;
  n.d_format = d_format;
  const std::string d_name = harness::sparse_mm_format_name(d_format);
  const std::string d_conversion = d_format == Format::float32 ? std::string()
                                   : ", then to " + d_name + " as the kernels convert (nearest even" +
                                         (d_format == Format::float8_e4m3fn ? ", saturating)" : ")");
  const reference::DType dtype = reference::dtype_of(op.input);
  if (name == "exact") {
    n.definition = "the operands' exact sum, rounded once to f32 (nearest even)" + d_conversion;
    // ct::mma's exact numerics as the emulator's double GEMM, each output proved exact or certified
    // by the double sum's error bound, the rest by reference::mma (emulator::exact_mma); B decoded
    // once for all the row slices (shared, not copied with the function object).
    n.min_chunk_rows = 512;
    const auto prepared = std::make_shared<const emulator::ExactMmaB>(
        emulator::CodeMatrix(op.input, static_cast<std::size_t>(op.K), static_cast<std::size_t>(op.N), op.b));
    n.rows = [&op, prepared, d_format](std::int64_t r0, std::int64_t r1, std::span<const std::uint32_t>,
                                       emulator::GemmPathStats* stats) {
      const auto K = static_cast<std::size_t>(op.K), rows = static_cast<std::size_t>(r1 - r0);
      const emulator::CodeMatrix a(op.input, rows, K, std::span(op.a).subspan(static_cast<std::size_t>(r0) * K, rows * K));
      emulator::GemmOptions o;
      o.stats = stats;
      std::vector<std::uint32_t> d = emulator::exact_mma(a, *prepared, {}, o);
      emulator::cusparselt_output(d_format, d);  // D's type, as the kernels convert
      return d;
    };
    return n;
  }
  if (name == "sequential_f32") {
    // reference::mma (ct::mma, sequential numerics) on a slice of A's rows, from +0. One call per
    // slice, not per row: the engine decodes all of B on every call, and it runs the slice's rows
    // in parallel itself.
    n.definition = "the fp32 FMA chain in k order from +0, d = fmaf(a, b, d) over all of K (a naive host reference)" + d_conversion;
    n.min_chunk_rows = 64;
    std::vector<std::uint64_t> b_codes(op.b.begin(), op.b.end());
    const auto rhs = std::make_shared<const reference::Tensor>(dtype, reference::Shape{op.K, op.N}, std::move(b_codes));
    n.rows = [&op, rhs, dtype, d_format](std::int64_t r0, std::int64_t r1, std::span<const std::uint32_t>,
                                        emulator::GemmPathStats*) {
      const auto K = static_cast<std::ptrdiff_t>(op.K);
      const auto first = op.a.begin() + r0 * K, last = op.a.begin() + r1 * K;
      const reference::Tensor lhs(dtype, {r1 - r0, op.K}, std::vector<std::uint64_t>(first, last));
      const reference::Tensor r = reference::mma(lhs, *rhs, reference::Tensor::zeros(reference::DType::float32, {r1 - r0, op.N}),
                                                 reference::Numerics::sequential());
      std::vector<std::uint32_t> d(r.codes().begin(), r.codes().end());  // f32 words
      emulator::cusparselt_output(d_format, d);  // D's type, as the kernels convert
      return d;
    };
    return n;
  }
  if (name != "cusparselt") throw UsageError("unknown model '" + name + "' with --sparse (cusparselt, sequential_f32)");
  const emulator::CusparseltKernel& kernel = emulator::cusparselt_kernel(op.input, d_format);
  const emulator::SparseGemmSchedule schedule = emulator::cusparselt_schedule(op.input, d_format, slices);
  n.split_k = slices;
  n.definition = "torch._cslt_sparse_mm " + std::string(harness::sparse_mm_format_name(op.input)) + " -> " + d_name +
                 " on sm_90a as measured on an H100 (cuSPARSELt 0.8, K tiles of " + std::to_string(kernel.tile_k) +
                 "): " + schedule.name() +
                 (op.input == Format::float32 ? "; A and B read as tf32 (A rounded up, B to nearest even)" : "") +
                 "; an f32 -Inf becomes NaN" +
                 (d_format == Format::float32 ? "" : std::string("; D rounded to ") + d_name + " (nearest even" +
                                                         (d_format == Format::float8_e4m3fn ? ", saturating)" : ")"));
  n.min_chunk_rows = 512;
  n.rows = [&op, d_format, slices](std::int64_t r0, std::int64_t r1, std::span<const std::uint32_t>,
                                   emulator::GemmPathStats*) {
    const auto K = static_cast<std::size_t>(op.K);
    const emulator::CodeMatrix a(op.input, static_cast<std::size_t>(r1 - r0), K,
                                 std::span<const std::uint32_t>(op.a).subspan(static_cast<std::size_t>(r0) * K,
                                                                               static_cast<std::size_t>(r1 - r0) * K));
    const emulator::CodeMatrix b(op.input, K, static_cast<std::size_t>(op.N), std::span<const std::uint32_t>(op.b));
    return emulator::cusparselt_sparse_mm(d_format, a, b, slices);
  };
  return n;
}

int run_sparse_gemm(const Args& args) {
  for (const char* option : {"format-b", "recipe", "recipe-b", "cublaslt-workspace-mib"}) {
    if (args.get(option)) {
      throw UsageError(std::string("--") + option + " does not go with --sparse: torch._cslt_sparse_mm takes A and B "
                       "unscaled in one --format, with cuSPARSELt's own workspace");
    }
  }
  if (args.get("c")) throw UsageError("--c does not go with --sparse: torch._cslt_sparse_mm's bias was not measured");
  if (args.get("bias"))
    throw UsageError("--bias does not go with --sparse: torch._cslt_sparse_mm's bias was not measured");
  for (const char* option : {"alpha", "beta", "d-scale", "c-type"}) {
    if (args.get(option)) {
      throw UsageError(std::string("--") + option + " does not go with --sparse: it is cuBLASLt's fp8 epilogue (--models cublaslt)");
    }
  }
  const Format input = sparse_format("format", args.get_or("format", "f16"));
  const Format d_format = sparse_format("d-type", args.get_or("d-type", harness::sparse_mm_format_name(input)));
  const char* const in_name = harness::sparse_mm_format_name(input);
  const char* const d_name = harness::sparse_mm_format_name(d_format);
  const emulator::CusparseltKernel* kernel = nullptr;
  try {
    kernel = &emulator::cusparselt_kernel(input, d_format);
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("--format ") + in_name + " --d-type " + d_name + ": " + e.what());
  }
  const std::string prune = args.get_or("prune", "magnitude");
  if (prune != "magnitude" && prune != "none") throw UsageError("--prune '" + prune + "': magnitude or none");
  const int slices = static_cast<int>(args.get_int("split-k", 1, 1, 1 << 16));
  const std::vector<std::string> model_names = split_models(args.get_or("models", "cusparselt"));
  for (const std::string& m : model_names) {
    if (m != "cusparselt" && m != "sequential_f32") {
      throw UsageError("unknown model '" + m + "' with --sparse (cusparselt, sequential_f32)");
    }
  }
  const bool with_exact = !args.flag("no-exact");
  const std::optional<std::string> out_dir = args.get("out");
  Progress progress(args.flag("quiet"));

  Problem p = load_problem(args, progress);
  // The kernel runs K in whole tiles; what it does with a ragged K was not measured.
  if (p.K % kernel->tile_k != 0) {
    throw UsageError("K = " + std::to_string(p.K) + ": torch._cslt_sparse_mm's " + in_name + " -> " +
                     d_name + " kernel runs K in tiles of " + std::to_string(kernel->tile_k) +
                     " and was measured on whole tiles only: K must be a multiple of " + std::to_string(kernel->tile_k));
  }
  if (slices > p.K / kernel->tile_k) {
    throw UsageError("--split-k " + std::to_string(slices) + ": K = " + std::to_string(p.K) + " has " +
                     std::to_string(p.K / kernel->tile_k) + " tiles of " + std::to_string(kernel->tile_k) +
                     ", and each slice takes at least one");
  }
  const int group = input == Format::float32 ? 2 : 4;  // PTX ISA 9.7.14.6.1: tf32 is 1:2, the others 2:4

  // Pruning: the fp64 product before and after it tells what pruning alone costs; the one after it
  // is what the numerics are measured against.
  std::int64_t removed = 0;
  double pruning_error = 0;
  std::optional<Fp64Product> ref;
  if (prune == "magnitude") {
    const Fp64Product dense = fp64_product(p, progress, /*with_magnitude=*/false);
    progress.start("prune", 1);
    removed = prune_by_magnitude(p.a, p.M, p.K, group);
    progress.finish();
    ref = fp64_product(p, progress);
    pruning_error = relative_frobenius(ref->value, dense.value);
  } else {
    ref = fp64_product(p, progress);
  }
  std::int64_t rounded = 0;
  SparseOperands op;
  op.input = input;
  op.M = p.M;
  op.N = p.N;
  op.K = p.K;
  progress.start("cast", 2);
  const Clock::time_point cast_start = Clock::now();
  op.a = cast_values(input, to_f32(p.a, rounded), op.changed, op.nonfinite);
  op.b = cast_values(input, to_f32(p.b, rounded), op.changed, op.nonfinite);
  const double cast_seconds = seconds_since(cast_start);
  progress.finish();
  // A must be sparse as the compressor reads it (with --prune none, as given).
  try {
    (void)emulator::cusparselt_compress(
        emulator::CodeMatrix(input, static_cast<std::size_t>(p.M), static_cast<std::size_t>(p.K), std::span<const std::uint32_t>(op.a)));
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("--prune none takes A as given: ") + e.what());
  }

  std::vector<Numerics> numerics;
  if (with_exact) numerics.push_back(make_sparse_numerics("exact", op, d_format, slices));
  for (const std::string& m : model_names) numerics.push_back(make_sparse_numerics(m, op, d_format, slices));
  create_output_dir(out_dir);

  Report report;
  char text[480];
  std::snprintf(text, sizeof text,
                "\n  \"sparse\": {\"library\": \"torch._cslt_sparse_mm (cuSPARSELt 0.8) on sm_90a, measured on an H100\", "
                "\"input\": \"%s\", \"d_type\": \"%s\", \"prune\": \"%s\", \"group\": %d, \"kept\": %d, \"values_pruned\": %lld, "
                "\"pruning_relative_frobenius\": %s, \"split_k\": %d},",
                in_name, d_name, prune.c_str(), group, group / 2, static_cast<long long>(removed),
                json_number(pruning_error).c_str(), slices);
  report.json_fields = text;
  std::snprintf(text, sizeof text,
                "\n  \"cast_seconds\": %.6f, \"inputs_rounded_to_f32\": %lld, \"inputs_changed_by_cast\": %lld, "
                "\"inputs_nonfinite_after_cast\": %lld,",
                cast_seconds, static_cast<long long>(rounded), static_cast<long long>(op.changed),
                static_cast<long long>(op.nonfinite));
  report.json_fields += text;
  report.text_header = "  2:4 sparse A: torch._cslt_sparse_mm (cuSPARSELt 0.8) on sm_90a, as measured on an H100\n";
  if (prune == "magnitude") {
    std::snprintf(text, sizeof text,
                  "  A pruned by magnitude: %d of each %d along K kept, %lld nonzero values removed; pruning alone\n"
                  "  moves the fp64 product by %.4g (relative Frobenius)\n",
                  group / 2, group, static_cast<long long>(removed), pruning_error);
  } else {
    std::snprintf(text, sizeof text, "  A taken as given: it is %d:%d sparse along K\n", group / 2, group);
  }
  report.text_header += text;
  if (rounded) {
    report.text_header += "  " + std::to_string(rounded) + " input values were rounded to f32 (nearest even) first\n";
  }
  if (input == Format::float32) {
    std::snprintf(text, sizeof text, "  A and B in f32 as given; D in %s\n", d_name);
  } else {
    std::snprintf(text, sizeof text, "  A and B cast to %s (nearest even) in %.2f s: %lld values changed, %lld became Inf or NaN; D in %s\n",
                  in_name, cast_seconds, static_cast<long long>(op.changed), static_cast<long long>(op.nonfinite),
                  d_name);
  }
  report.text_header += text;
  report.fp64_title = prune == "magnitude" ? "the fp64 product of the pruned A and B, before the cast" : "the fp64 product of A and B, before the cast";
  report.ulp_title = std::string("ulps of D (") + d_name + ") from exact (same operands: the difference is the kernel's accumulation" +
                     (input == Format::float32 ? " and its tf32 reading of them)" : ")");

  run_and_measure(report, numerics, p, {}, *ref, with_exact, out_dir, progress);
  print_report(report, p, with_exact, out_dir, args.flag("json"));
  return kExitOk;
}

int run_gemm(const std::vector<std::string>& argv) {
  Args args(argv, {"a", "b", "c", "m", "n", "k", "data", "seed", "format", "format-b", "recipe", "recipe-b", "models", "out",
                   "split-k", "d-type", "cublaslt-workspace-mib", "prune", "bias", "alpha", "beta", "d-scale", "c-type"},
            {"json", "no-exact", "quiet", "b-transposed", "sparse", "relu"});
  args.no_positional();
  if (args.flag("sparse")) {
    if (args.flag("relu")) throw UsageError("--relu does not go with --sparse: it is cuBLASLt's fp8 epilogue");
    return run_sparse_gemm(args);
  }
  if (args.get("prune")) throw UsageError("--prune: it chooses how --sparse prunes A");
  // Two families of operand formats: block formats (MX, NVFP4) on both sides, or fp8 with fp32
  // scales (per tensor, row or 128-block) on both.
  const std::string format_a = args.get_or("format", "mxfp8_e4m3"), format_b = args.get_or("format-b", format_a);
  const bool fp8_scaled = fp8_scaled_format(format_a).has_value();
  if (fp8_scaled != fp8_scaled_format(format_b).has_value()) {
    throw UsageError("A (" + format_a + ") and B (" + format_b + ") must both be fp8 with fp32 scales (fp8_e4m3, "
                     "fp8_e5m2) or both block formats: one GEMM applies one kind of scale");
  }
  std::optional<BlockFormat> fa, fb;
  std::optional<QuantizeOptions> qo_a, qo_b;
  const NamedFp8Recipe* fp8_recipe_a = nullptr;
  const NamedFp8Recipe* fp8_recipe_b = nullptr;
  std::string recipe_a, recipe_b;
  if (fp8_scaled) {
    // DeepSeek-V3's recipe by default: activations in 1 x 128 blocks, weights in 128 x 128.
    recipe_a = args.get_or("recipe", "deepgemm_1x128");
    recipe_b = args.get_or("recipe-b", args.get("recipe") ? recipe_a : "deepgemm_128x128");
    fp8_recipe_a = &fp8_recipe("recipe", recipe_a);
    fp8_recipe_b = &fp8_recipe("recipe-b", recipe_b);
  } else {
    if (args.flag("relu")) {
      throw UsageError("--relu: only the library GEMMs of fp8 with fp32 scales (--format fp8_e4m3, fp8_e5m2) take it");
    }
    for (const char* option : {"split-k", "d-type", "cublaslt-workspace-mib", "bias", "alpha", "beta", "d-scale", "c-type"}) {
      if (args.get(option)) {
        const std::string name(option);
        throw UsageError(
            "--" + name + ": only the library GEMMs of fp8 with fp32 scales (--format fp8_e4m3, fp8_e5m2)" +
            (name == "split-k" || name == "d-type" ? " and --sparse" : "") + " take it");
      }
    }
    auto block_format = [&](const std::string& option, const std::string& name) {
      const std::optional<BlockFormat> f = parse_block_format(name);
      if (!f) {
        throw UsageError("unknown --" + option + " '" + name +
                         "' (mxfp8_e4m3, mxfp8_e5m2, mxfp6_e2m3, mxfp6_e3m2, mxfp4, mxfp4_block16, nvfp4; or fp8_e4m3, "
                         "fp8_e5m2 with fp32 scales; or f16, bf16, f32, e4m3 with --sparse)");
      }
      return *f;
    };
    fa = block_format("format", format_a);
    fb = block_format("format-b", format_b);
    // One scale pair per K block: the instructions take A and B blocks of one size with one scale type.
    if (fa->scale != fb->scale || fa->block_size != fb->block_size) {
      throw UsageError("A (" + to_string(*fa) + ") and B (" + to_string(*fb) +
                       ") must share the scale type and the block size: each K block has one scale pair");
    }
    recipe_a = args.get_or("recipe", has_tensor_scale(*fa) ? "nvfp4_te" : "te_mxfp8");
    recipe_b = args.get_or("recipe-b", recipe_a);
    auto options = [&](const std::string& option, const std::string& recipe, const BlockFormat& f) {
      std::optional<QuantizeOptions> o = recipes::by_name(recipe, f.element);
      if (!o) throw UsageError("unknown --" + option + " '" + recipe + "' (" + recipes::names() + ")");
      o->k_tail = KTail::zero_pad;  // K need not be a multiple of the block: the tail block is zero-padded
      return *o;
    };
    qo_a = options("recipe", recipe_a, *fa);
    qo_b = options("recipe-b", recipe_b, *fb);
  }
  const std::vector<std::string> model_names = split_models(args.get_or("models", fp8_scaled ? "cublaslt" : "sm_100a"));
  if (!fp8_scaled) {  // named now, before the data are made and quantized (the fp8 models are checked below)
    for (const std::string& m : model_names) {
      const auto names = harness::block_scaled_model_names();
      if (std::find(names.begin(), names.end(), m) == names.end()) {
        throw UsageError("unknown model '" + m + "' for block formats (sm_100a, sm_120a, sm_90a, sequential_f32; for "
                         "fp8 with fp32 scales, --format fp8_e4m3: cublaslt, cublaslt_fast_accum, torch_scaled_mm, "
                         "torch_scaled_mm_fast_accum)");
      }
    }
  }
  // The library calls: the split-K count is the heuristic's choice for the shape and GPU, given as
  // a number (scripts/cublaslt_split_k.py asks cuBLASLt for it on the GPU; torch._scaled_mm runs what
  // it answers) or looked up in the counts recorded on an H100 and an H200 (--split-k h100 | h200).
  LibraryCall call;
  if (fp8_scaled) {
    const std::string split = args.get_or("split-k", "1");
    if (split == "h100" || split == "h200") {
      call.gpu = split;
    } else if (!split.empty() && (std::isdigit(static_cast<unsigned char>(split[0])) || split[0] == '-')) {
      call.split_k = static_cast<int>(args.get_int("split-k", 1, 1, 64));
    } else {
      throw UsageError("--split-k '" + split + "': a split count 1 .. 64, or h100 / h200 for the count that "
                       "cuBLASLt's heuristic chose there, as recorded");
    }
    const std::string d_type = args.get_or("d-type", "f32");
    if (d_type != "f32" && d_type != "bf16" && d_type != "f16" && d_type != "e4m3" && d_type != "e5m2")
      throw UsageError("--d-type '" + d_type + "': f32, bf16, f16, e4m3 or e5m2 (cuBLASLt models)");
    const bool fp8_d = d_type == "e4m3" || d_type == "e5m2";
    call.d_format = d_type == "bf16" ? Format::bfloat16
                    : d_type == "f16" ? Format::float16
                    : d_type == "e4m3" ? Format::float8_e4m3fn
                    : d_type == "e5m2" ? Format::float8_e5m2
                                       : Format::float32;
    bool torch_models = false, cublaslt_models = false;
    for (const std::string& m : model_names) (m.rfind("torch", 0) == 0 ? torch_models : cublaslt_models) = true;
    // cuBLASLt's own epilogue (docs/conformance.md, "cuBLASLt epilogue"): alpha, beta C, its bias
    // (one value per row of D), an e4m3 D with a D scale. torch._scaled_mm's bias is per column of D
    // (docs/conformance.md, "Bias"), so the two do not share a run.
    const bool lt_option = args.get("alpha") || args.get("beta") || args.get("c") || args.get("d-scale") ||
                           args.get("c-type") || fp8_d || args.flag("relu");
    if (lt_option && torch_models) {
      throw UsageError("--alpha, --beta, --c, --c-type, --d-scale, --relu and an fp8 --d-type model cuBLASLt's own "
                       "epilogue (--models cublaslt, cublaslt_fast_accum); torch_scaled_mm takes none of them");
    }
    if (args.get("bias") && torch_models && cublaslt_models) {
      throw UsageError("--bias: torch._scaled_mm adds it per column of D and cuBLASLt per row; model them in "
                       "separate runs");
    }
    call.lt_epilogue = cublaslt_models && !torch_models && (lt_option || args.get("bias") || d_type == "f16");
    if (d_type == "e5m2" && format_a != "fp8_e5m2" && format_b != "fp8_e5m2") {
      throw UsageError("--d-type e5m2: cuBLASLt takes an e5m2 D with an e5m2 operand only (with e4m3 x e4m3 it had no "
                       "algorithm on an H200)");
    }
    if (call.lt_epilogue) {
      // A decimal number (as every other number option: no hex, no spaces), rounded to f32 as cuBLASLt
      // takes it; refused where the rounding overflows or turns a nonzero value into zero.
      auto f32_option = [&](const char* name, float fallback) {
        const std::optional<std::string> text = args.get(name);
        if (!text) return fallback;
        double v = 0;
        const char* end = text->data() + text->size();
        const auto [stop, ec] = std::from_chars(text->data(), end, v, std::chars_format::general);
        const auto f = static_cast<float>(v);
        if (text->empty() || ec != std::errc() || stop != end || !std::isfinite(v)) {
          throw UsageError(std::string("--") + name + " '" + *text + "': a finite number, in decimal (rounded to f32, as cuBLASLt takes it)");
        }
        if (!std::isfinite(f) || (v != 0 && f == 0)) {
          throw UsageError(std::string("--") + name + " " + *text + " is out of f32's range (cuBLASLt takes it as a float)");
        }
        return f;
      };
      call.lt.alpha = f32_option("alpha", 1.0f);
      call.lt.beta = f32_option("beta", args.get("c") ? 1.0f : 0.0f);
      call.lt.d_scale = f32_option("d-scale", 1.0f);
      call.lt.d_format = call.d_format;
      call.lt.relu = args.flag("relu");
      if (call.lt.beta != 0.0f && !args.get("c")) throw UsageError("--beta " + *args.get("beta") + " reads C: give --c C.npy");
      if (call.lt.beta == 0.0f && args.get("c")) throw UsageError("--c with --beta 0: cuBLASLt does not read C");
      if (args.get("d-scale") && !fp8_d)
        throw UsageError("--d-scale: the D scale was measured with an fp8 D only (--d-type e4m3 or e5m2)");
      if (args.get("c-type") && !fp8_d)
        throw UsageError("--c-type: with an f32, bf16 or f16 D, C has D's type (as cuBLASLt took it)");
      const std::string c_type = args.get_or("c-type", "bf16");
      if (c_type != "bf16" && c_type != "f16") throw UsageError("--c-type '" + c_type + "': bf16 or f16 (an fp8 D's C)");
      if (args.get("c-type") && !args.get("c") && !args.get("bias"))
        throw UsageError("--c-type is the type of --c (and of the bias with an fp8 D): give --c or --bias");
      call.lt.c_format = fp8_d
                             ? (c_type == "f16" ? Format::float16 : Format::bfloat16)
                             : call.d_format;
      call.lt.bias_format = call.d_format == Format::float32 ? Format::bfloat16 : call.lt.c_format;
      if (fp8_d &&
          (fp8_recipe_a->granularity != Fp8Granularity::tensor || fp8_recipe_b->granularity != Fp8Granularity::tensor)) {
        throw UsageError("--d-type " + d_type + ": cuBLASLt takes an fp8 D with tensor-wise scales only (--recipe "
                         "torchao_tensorwise); it refused " + recipe_a + " x " + recipe_b + " on an H200");
      }
      if (!args.flag("no-exact") && (lt_option || args.get("bias"))) {
        throw UsageError("--alpha, --beta, --c, --bias, --d-scale, --relu and an fp8 --d-type: the exact numerics "
                         "take no epilogue; add --no-exact");
      }
    }
    if ((call.d_format == Format::float16 || fp8_d) && (split == "h100" || split == "h200")) {
      throw UsageError("--split-k " + split + " --d-type " + d_type + ": the split counts were recorded for f32 and bf16 D");
    }
    if (args.get("bias") && torch_models) {
      if (call.d_format == Format::float32) {
        throw UsageError(
            "--bias with an f32 D: torch._scaled_mm refuses it (\"Bias is not supported when out_dtype "
            "is set to Float32\"); add --d-type bf16 or f16");
      }
      if (!args.flag("no-exact")) throw UsageError("--bias: the exact numerics take no bias; add --no-exact");
    }
    call.cublaslt_workspace_mib = static_cast<int>(args.get_int("cublaslt-workspace-mib", 64, 1, 1 << 20));
    if (args.get("cublaslt-workspace-mib") && call.gpu.empty()) {
      throw UsageError(
          "--cublaslt-workspace-mib: it selects the recorded split counts of --split-k h100 | h200");
    }
    if (call.cublaslt_workspace_mib != 1 && call.cublaslt_workspace_mib != 64) {
      throw UsageError("--cublaslt-workspace-mib " + std::to_string(call.cublaslt_workspace_mib) +
                       ": cuBLASLt's heuristic was recorded with 1 and 64 MiB");
    }
    for (const std::string& m : model_names) {  // every model must exist for these operands before the data are made
      const emulator::LibraryFp8Schedule& s = library_schedule(m, fp8_recipe_a->granularity, fp8_recipe_b->granularity);
      if (call.split_k > 1 && s.split_granule_k == 0) {
        throw UsageError("--split-k: " + s.name() + " was never seen splitting K (docs/conformance.md, \"Split-K\")");
      }
    }
    if (!model_names.empty() && format_a == "fp8_e5m2" && format_b == "fp8_e5m2") {
      throw UsageError("--models " + model_names.front() + ": the libraries take e4m3 x e4m3, e4m3 x e5m2 and e5m2 x e4m3, "
                       "not e5m2 x e5m2 (give --format-b fp8_e4m3 with --format fp8_e5m2)");
    }
  }
  const bool with_exact = !args.flag("no-exact");
  const std::optional<std::string> out_dir = args.get("out");
  Progress progress(args.flag("quiet"));

  Problem p = load_problem(args, progress);
  std::vector<double> lt_bias_values;
  if (call.lt_epilogue) {
    read_lt_epilogue(args.get("bias"), p, call, lt_bias_values);
  } else if (fp8_scaled && args.get("bias")) {
    read_bias(*args.get("bias"), p, call);
  }
  // Each library model's split count, before the work starts (a recorded count must exist).
  std::vector<std::pair<int, std::string>> splits;
  if (fp8_scaled) {
    for (const std::string& m : model_names) {
      splits.push_back(split_count(m, library_schedule(m, fp8_recipe_a->granularity, fp8_recipe_b->granularity), call,
                                   *fp8_scaled_format(format_a), *fp8_scaled_format(format_b), p.M, p.N, p.K));
    }
  }
  std::int64_t rounded = 0;
  const FirstTouchVector<float> a32 = to_f32(p.a, rounded), b32 = to_f32(p.b, rounded), c32 = to_f32(p.c, rounded);
  std::vector<std::uint32_t> c_bits(c32.size());
  for (std::size_t i = 0; i < c32.size(); ++i) c_bits[i] = std::bit_cast<std::uint32_t>(c32[i]);

  // The quantized operands, which the numerics below refer to.
  std::optional<BlockScaledTensor> qa, qb;
  std::optional<Fp8ScaledMatrix> qa8, qb8;
  std::uint32_t alpha = 0x3F800000u;
  std::vector<Numerics> numerics;
  double quantize_seconds = 0;
  if (fp8_scaled) {
    progress.start("quantize", 2);
    try {
      qa8 = quantize_fp8_scaled(a32, p.M, p.K, KAxis::last, *fp8_scaled_format(format_a), fp8_recipe_a->granularity,
                                fp8_recipe_a->recipe);
      qb8 = quantize_fp8_scaled(b32, p.N, p.K, KAxis::first, *fp8_scaled_format(format_b), fp8_recipe_b->granularity,
                                fp8_recipe_b->recipe);
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());  // a recipe that does not take this format, or non-finite data
    }
    quantize_seconds = progress.finish();
    if (with_exact) numerics.push_back(make_fp8_numerics("exact", *qa8, *qb8, {}, LibraryCall{}));
    for (std::size_t i = 0; i < model_names.size(); ++i) {
      numerics.push_back(make_fp8_numerics(model_names[i], *qa8, *qb8, splits[i], call));
    }
  } else {
    // Stochastic rounding: one random word per element, the top half of a draw of the stream of
    // (--seed xor 0x5EED5EED), A's elements first, then B's if its recipe rounds stochastically too.
    std::vector<std::uint32_t> ra, rb;
    std::uint64_t rbits_next = 0;
    auto draw_rbits = [&](std::vector<std::uint32_t>& bits, const QuantizeOptions& o, std::size_t count, const char* stage) {
      if (o.element.rounding != Rounding::stochastic) return;
      bits.resize(count);
      draw_on_threads(progress, stage, args.get_u64("seed", 1) ^ 0x5EED5EEDu, rbits_next, static_cast<std::int64_t>(count),
                     1, [&](Mt19937_64& rng, std::size_t i) { bits[i] = static_cast<std::uint32_t>(rng() >> 32); });
      rbits_next += count;
    };
    draw_rbits(ra, *qo_a, a32.size(), "random bits A");
    draw_rbits(rb, *qo_b, b32.size(), "random bits B");
    progress.start("quantize", 2);
    qa = quantize(a32, {p.M, p.K}, KAxis::last, *fa, *qo_a, std::nullopt, {}, ra);
    qb = quantize(b32, {p.K, p.N}, KAxis::first, *fb, *qo_b, std::nullopt, {}, rb);
    quantize_seconds = progress.finish();
    alpha = emulator::tensor_scale_alpha(*qa, *qb);
    if (with_exact) numerics.push_back(make_numerics("exact", *qa, *qb));
    for (const std::string& m : model_names) numerics.push_back(make_numerics(m, *qa, *qb));
  }
  create_output_dir(out_dir);

  Report report;
  char field[160];
  std::snprintf(field, sizeof field, "%.6f", quantize_seconds);
  const double alpha_value = std::bit_cast<float>(alpha);
  report.json_fields = "\n  \"format_a\": \"" + json_escape(format_a) + "\", \"format_b\": \"" + json_escape(format_b) +
                       "\", \"recipe_a\": \"" + json_escape(recipe_a) + "\", \"recipe_b\": \"" + json_escape(recipe_b) +
                       "\",\n  \"quantize_seconds\": " + field + ", \"tensor_scale_alpha\": " + json_number(alpha_value, 9) +
                       ",\n  \"inputs_rounded_to_f32\": " + std::to_string(rounded) + ",";
  if (!call.gpu.empty()) {  // where each library model's split count came from
    report.json_fields += "\n  \"recorded_split_k\": {\"gpu\": \"" + call.gpu + "\", \"d_type\": \"" +
                          call.d_name() + "\", \"provenance\": \"" +
                          json_escape(std::string(emulator::recorded_split_k_provenance())) + "\"},";
  }
  if (rounded) {
    report.text_header += "  " + std::to_string(rounded) + " input values were rounded to f32 (nearest even) before quantization\n";
  }
  char line[400];
  if (format_a == format_b && recipe_a == recipe_b) {
    std::snprintf(line, sizeof line, "  quantized to %s with recipe %s in %.2f s", format_a.c_str(), recipe_a.c_str(),
                  quantize_seconds);
  } else {
    std::snprintf(line, sizeof line, "  quantized A to %s with recipe %s, B to %s with recipe %s in %.2f s",
                  format_a.c_str(), recipe_a.c_str(), format_b.c_str(), recipe_b.c_str(), quantize_seconds);
  }
  report.text_header += line;
  if (alpha != 0x3F800000u) {
    std::snprintf(line, sizeof line, "; per-tensor scales applied in the epilogue: alpha = %.9g", alpha_value);
    report.text_header += line;
  }
  report.text_header += "\n";
  report.fp64_title = "the unquantized product in fp64";
  report.ulp_title = "ulps from exact (same quantized operands: the difference is the kernel's accumulation)";

  Fp64Product ref;
  if (call.lt_epilogue) {  // C enters the epilogue scaled by beta, so the product is made without it
    WorkBuffer c = std::move(p.c);
    p.c.clear();
    ref = fp64_product(p, progress);
    p.c = std::move(c);
    apply_lt_epilogue(ref, p, lt_bias_values, call);
    report.fp64_title = call.lt.relu ? "d_scale max(alpha A B + beta C + bias, 0) from the unquantized inputs in fp64"
                                     : "d_scale (alpha A B + beta C + bias) from the unquantized inputs in fp64";
    if (args.get("bias")) {
      report.text_header += "  bias: " + *args.get("bias") + " (" + std::to_string(p.M) + " values, one per row of D)\n";
      report.json_fields += "\n  \"bias\": \"" + json_escape(*args.get("bias")) + "\",";
    }
  } else {
    ref = fp64_product(p, progress);
  }
  run_and_measure(report, numerics, p, c_bits, ref, with_exact, out_dir, progress);
  print_report(report, p, with_exact, out_dir, args.flag("json"));
  return kExitOk;
}

// The recipe names for the help text, four spaces in, lines of at most 100 columns.
std::string wrapped_recipe_names() {
  std::string out, line = "   ";
  for (const recipes::NamedRecipe& r : recipes::named()) {
    const std::string word = std::string(" ") + r.name + ",";
    if (line.size() + word.size() > 100) {
      out += line + "\n";
      line = "   ";
    }
    line += word;
  }
  line.pop_back();  // the last comma
  return out + line;
}

const Registrar gemm_cmd(
    {"gemm", "numerics study: quantize A and B, D = A x B with bit-exact GPU models beside exact and fp64",
     "blockscale gemm [--a A.npy --b B.npy [--b-transposed] [--c C.npy]]\n"
     "                [--m 256 --n 256 --k 4096 --data gaussian --seed 1]\n"
     "                [--format mxfp8_e4m3] [--recipe NAME] [--format-b F] [--recipe-b NAME]\n"
     "                [--models sm_100a[,sm_120a,sm_90a,sequential_f32]]\n"
     "                [--split-k S|h100|h200] [--d-type f32|bf16|f16|e4m3|e5m2] [--bias BIAS.npy]\n"
     "                [--alpha A] [--beta B] [--d-scale S] [--c-type bf16|f16] [--relu] [--cublaslt-workspace-mib 1|64]\n"
     "                [--sparse [--format f16|bf16|f32|e4m3] [--prune magnitude|none]]\n"
     "                [--no-exact] [--out DIR] [--json] [--quiet]\n"
     "  Quantizes A (M x K) and B (K x N) along K to --format (mxfp8_e4m3, mxfp8_e5m2, mxfp6_e2m3,\n"
     "  mxfp6_e3m2, mxfp4, mxfp4_block16, nvfp4) with --recipe (default te_mxfp8, or nvfp4_te for\n"
     "  nvfp4; every recipe of docs/quantization.md by name:\n"
     + wrapped_recipe_names() + "),\n"
     "  --format-b / --recipe-b quantize B differently (default: as A), e.g. MXFP8 activations times\n"
     "  MXFP4 weights (--format mxfp8_e4m3 --format-b mxfp4: kind::mxf8f6f4 with an e2m1 operand); A and\n"
     "  B share the scale type and block size. Then computes D = A x B (+ C) with:\n"
     "    exact    the quantized operands' exact sum (+ C) rounded once to f32 (mma_scaled `exact`)\n"
     "    sm_100a  the emulator's Blackwell tcgen05 block-scaled GEMM (one instruction per K step)\n"
     "    sm_120a  the emulator's RTX Blackwell mma.sync block-scaled GEMM\n"
     "    sm_90a   the emulator's model of the Hopper GEMM kernel of blockscale::gpu (wgmma fp8 per\n"
     "             scale block, promoted into f32 by FFMA; mxfp8, mxfp4 and nvfp4)\n"
     "    sequential_f32  the fp32 FMA chain in k order that naive host references compute\n"
     "  and reports each one's error against the unquantized product in fp64 and, for the models,\n"
     "  how many outputs differ from exact in their bits and by how many ulps (zeros of the other sign\n"
     "  and other NaN patterns, 0 ulps apart, are counted on their own).\n"
     "  fp8 with fp32 scales (Hopper recipes): --format fp8_e4m3 (A, and B unless --format-b fp8_e5m2;\n"
     "  --format fp8_e5m2 with --format-b fp8_e4m3: the libraries take no e5m2 x e5m2), with\n"
     "  --recipe / --recipe-b deepgemm_1x128, deepgemm_128x128 (DeepSeek-V3 / DeepGEMM; default: A\n"
     "  1x128, B 128x128), deepgemm_1x128_ue8m0, deepgemm_128x128_ue8m0, torchao_tensorwise,\n"
     "  torchao_rowwise; the models are the library GEMMs as measured on an H200 (default cublaslt):\n"
     "    cublaslt, cublaslt_fast_accum           cuBLASLt fp8 (tensor x tensor and row x row; 1x128 x\n"
     "                                            128x128 and 1x128 x 1x128 without fast accumulation)\n"
     "    torch_scaled_mm, torch_scaled_mm_fast_accum  torch._scaled_mm (tensor x tensor; row x row,\n"
     "                                            1x128 x 128x128 and 1x128 x 1x128 without)\n"
     "  beside exact. docs/emulator.md has the\n"
     "  schedules. --split-k S: the library split K into S slices (its heuristic does for small M x N\n"
     "  with long K, differently on an H100 and an H200): each slice of whole K tiles (512 of K for\n"
     "  1x128 x 128x128, 128 for the others) is accumulated apart, and the slices are added in order\n"
     "  before the epilogue. --split-k h100 or h200: each model takes the S that cuBLASLt 13.1's\n"
     "  heuristic chose for its call there, as recorded for M and N in {1, 8, 16, 32, 64, 96, 128, 192,\n"
     "  256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096, 8192, 16384} and K in {128, 256, 384, 512,\n"
     "  768, 1024, 1536, 2048, 2560, 3072, 3584, 4096, 5120, ..., 16384 (by 1024), 18432, 20480, 24576,\n"
     "  28672, 32768, 40960, 49152, 65536} (torch._scaled_mm with its 1 MiB workspace; cuBLASLt with\n"
     "  --cublaslt-workspace-mib, default 64); other shapes: scripts/cublaslt_split_k.py query MxNxK\n"
     "  asks the GPU. --d-type bf16: the calls write D in bf16 (the f32 D rounded once to nearest even,\n"
     "  as measured; it can change S); exact stays f32. --d-type f16: the same in f16.\n"
     "  --bias BIAS.npy (torch models, bf16 or f16 D, --no-exact): torch._scaled_mm's bias, N values\n"
     "  exact in D's dtype (a 1-D float16, float32 or float64 .npy), added to the f32 D in f32 before D\n"
     "  is rounded to its dtype, as measured on an H200; the fp64 product includes it.\n"
     "  cuBLASLt's epilogue (cublaslt models, --no-exact), as measured on an H200 (docs/conformance.md,\n"
     "  \"cuBLASLt epilogue\"): D = d_scale (alpha A B + beta C + bias). --alpha A (default 1) and --beta B\n"
     "  (default 1 with --c, else 0; both rounded to f32), --c C.npy (M x N, each value exact in C's type:\n"
     "  D's, or --c-type bf16 | f16 for an fp8 D), --bias BIAS.npy (M values, one per row of D: bf16\n"
     "  for an f32 D, else C's type), --d-type e4m3 or, with an e5m2 operand, e5m2 (tensor-wise\n"
     "  recipes) with --d-scale S: D saturates at the largest finite value and the report gives\n"
     "  amax_d. Split-K 1 fuses beta C into the scale's FFMA, a split-K adds it after the slices; the\n"
     "  bias is an FADD after C. --relu: cuBLASLt's ReLU (EPILOGUE_RELU, RELU_BIAS with --bias),\n"
     "  max(y, +0) after the bias, before D's type and amax_d. The fp64 product is d_scale (alpha A B +\n"
     "  beta C + bias), with --relu d_scale max(alpha A B + beta C + bias, 0).\n"
     "  2:4 sparse A (--sparse): torch._cslt_sparse_mm (cuSPARSELt 0.8) on Hopper, as measured on an\n"
     "  H100. A is pruned by magnitude along K (--prune magnitude: of each group of 4 the 2 largest |a|\n"
     "  stay, ties to the lower position; for f32, which runs the tf32 kernel, 1 of each pair) or taken\n"
     "  as given (--prune none: it must be sparse). A and B are cast to --format f16 (default), bf16 or\n"
     "  e4m3 as torch's Tensor.to does (nearest even; e4m3 gives NaN above 464), or stay f32. D comes in\n"
     "  --d-type: the input's type (default), or for e4m3 also bf16, f16, f32. --models cusparselt\n"
     "  (default), sequential_f32, beside exact (the cast operands' exact sum rounded to f32, then to\n"
     "  D's type as the kernel converts). Errors are against the fp64 product of the pruned A; the report\n"
     "  says what pruning alone costs. --split-k S: the split count cuSPARSELt's heuristic takes for the\n"
     "  shape (1 for most; scripts/probe_sparse_mm.py sweep measures it on a GPU; docs/emulator.md gives\n"
     "  those seen). K must be a multiple of the kernel's K tile (64 for f16 and bf16, 32 for f32, 128\n"
     "  or 256 for e4m3). No --c, --recipe or --format-b.\n"
     "  Inputs: --a/--b (and --c, M x N) are 2-D .npy files of float16, float32 or float64 (float64\n"
     "  values are rounded to f32 before quantization; the fp64 product uses them as given);\n"
     "  --b-transposed: the --b file holds B^T (N x K), as a linear layer stores its weight. Without\n"
     "  them A and B are generated from --seed: gaussian (sd 1) or heavy_tailed (Student's t, 2 dof).\n"
     "  K need not be a multiple of the block (the last block is zero-padded). NVFP4's per-tensor\n"
     "  scales are applied after the K loop: D = fma(alpha, acc, C), as CUTLASS's epilogue does.\n"
     "  --seed also draws the random bits of stochastic rounding (recipe nvfp4_te_stochastic).\n"
     "  --out DIR writes each D as DIR/<numerics>.npy (f32). --json prints the results as JSON.\n"
     "  Progress goes to stderr (--quiet: none). Threads: OMP_NUM_THREADS; the bits do not depend on it.",
     run_gemm});

}  // namespace
}  // namespace blockscale::cli
