// SPDX-License-Identifier: Apache-2.0
// cuBLASLt fp8 GEMMs on a Hopper GPU, for the schedule study of external.h. Compiled only in
// builds with CUDA. The call follows gpu.md section 4: "TN" (both operands K-major), compute type
// CUBLAS_COMPUTE_32F, scale type CUDA_R_32F, A/B scales through A_SCALE_POINTER / B_SCALE_POINTER
// and, for row-wise and block scaling, A_SCALE_MODE / B_SCALE_MODE (OUTER_VEC_32F, VEC128_32F,
// BLK128x128_32F; Hopper only).
#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

#include "blockscale/formats/convert.h"
#include "blockscale/formats/presets.h"
#include "blockscale/gpu/device.h"
#include "blockscale/harness/cases.h"
#include "blockscale/harness/external.h"

namespace blockscale::harness {

namespace {

void check(cudaError_t st, const char* call) {
  if (st != cudaSuccess) {
    cudaGetLastError();
    throw std::runtime_error(std::string(call) + " failed: " + cudaGetErrorName(st) + ": " + cudaGetErrorString(st));
  }
}
void check(cublasStatus_t st, const char* call) {
  if (st != CUBLAS_STATUS_SUCCESS) throw std::runtime_error(std::string(call) + " failed: cublasStatus " + std::to_string(int(st)));
}
#define LT_CHECK(call) check((call), #call)

struct DeviceBuffer {
  void* p = nullptr;
  explicit DeviceBuffer(std::size_t bytes) { LT_CHECK(cudaMalloc(&p, std::max<std::size_t>(bytes, 16))); }
  ~DeviceBuffer() { cudaFree(p); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  void upload(const void* src, std::size_t bytes) { LT_CHECK(cudaMemcpy(p, src, bytes, cudaMemcpyHostToDevice)); }
};

// cuBLASLt's epilogue for a call (docs/conformance.md, "cuBLASLt epilogue"): alpha, beta with a C,
// a bias (EPILOGUE_BIAS, one value per row of D, or RELU_BIAS with `relu`) and D's type; an e4m3 D
// also gets a D scale that saturates some outputs, and AMAX_D.
struct LtEpilogue {
  bool used = false;
  float alpha = 1.0f, beta = 0.0f;
  Format c = Format::float32, bias = Format::bfloat16, d = Format::float32;
  bool relu = false;
};

struct LtConfig {
  std::string name;
  ExternalScaling scaling;
  bool fast_accum;
  int m, n, k;
  int data;  // 0: uniform [0, 1) (one-signed: accumulation error grows), 1: Gaussian, 2: per-block
             // (row-wise scaling: per-row) ranges
  float scale_a, scale_b;  // tensor scaling
  bool bf16_out = false;   // ask for bf16 D (as torch._scaled_mm's out_dtype=bfloat16 does), else f32 first
  LtEpilogue epilogue{};
};

cudaDataType_t cuda_type(Format f) {
  switch (f) {
    case Format::float32: return CUDA_R_32F;
    case Format::bfloat16: return CUDA_R_16BF;
    case Format::float16: return CUDA_R_16F;
    case Format::float8_e4m3fn: return CUDA_R_8F_E4M3;
    default: throw std::invalid_argument("no cuBLASLt type for " + to_string(f));
  }
}

std::size_t type_bytes(Format f) { return f == Format::float32 ? 4 : f == Format::float8_e4m3fn ? 1 : 2; }

std::uint8_t e4m3(double v) {
  ConvertOptions o;
  o.rounding = Rounding::nearest_even;
  o.overflow = Overflow::saturate;
  return static_cast<std::uint8_t>(convert(Format::float8_e4m3fn, v, o));
}

// Operand codes and logical scales (see ExternalRun) for one side: rows x k.
void make_operand(const LtConfig& c, int rows, Rng& r, std::vector<std::uint8_t>& codes, std::vector<float>& scales,
                  bool b_side) {
  const int kb = c.k / 128;
  codes.resize(std::size_t(rows) * c.k);
  const bool block = c.scaling == ExternalScaling::block_1x128 || c.scaling == ExternalScaling::block_128x128;
  if (c.scaling == ExternalScaling::rowwise) {
    // As torchao's row-wise recipe scales: each row's scale is its amax / 448, its elements
    // x / scale in e4m3; with data 2 the magnitudes vary from row to row.
    scales.resize(std::size_t(rows));
    std::vector<double> x(std::size_t(c.k));
    for (int i = 0; i < rows; ++i) {
      const double mag = c.data == 2 ? std::ldexp(1.0, static_cast<int>(r.below(17)) - 8) : 1.0;
      double amax = 0;
      for (auto& v : x) {
        v = r.gaussian() * mag;
        amax = std::max(amax, std::fabs(v));
      }
      const float s = amax > 0 ? static_cast<float>(amax / 448.0) : 1.0f;
      scales[std::size_t(i)] = s;
      for (int k = 0; k < c.k; ++k) codes[std::size_t(i) * c.k + k] = e4m3(x[std::size_t(k)] / s);
    }
    return;
  }
  if (!block) {
    for (auto& x : codes) x = e4m3(c.data == 0 ? r.uniform() : r.gaussian());
    scales = {b_side ? c.scale_b : c.scale_a};
    return;
  }
  // DeepSeek-style quantization: each 1 x 128 (or 128 x 128 for B in block_128x128) block gets
  // scale amax / 448 and its elements x / scale in e4m3; magnitudes vary from block to block.
  scales.assign(std::size_t(rows) * kb, 1.0f);
  const bool square = b_side && c.scaling == ExternalScaling::block_128x128;
  std::vector<double> x(std::size_t(rows) * c.k);
  std::vector<double> mag(std::size_t((rows + 127) / 128 + rows) * kb);
  for (auto& m : mag) m = std::ldexp(1.0, static_cast<int>(r.below(17)) - 8);
  for (int i = 0; i < rows; ++i)
    for (int k = 0; k < c.k; ++k) {
      const std::size_t mi = square ? std::size_t(i / 128) * kb + k / 128 : std::size_t(i) * kb + k / 128;
      x[std::size_t(i) * c.k + k] = r.gaussian() * mag[mi];
    }
  for (int q = 0; q < kb; ++q) {
    const int group = square ? 128 : 1;
    for (int i0 = 0; i0 < rows; i0 += group) {
      double amax = 0;
      for (int i = i0; i < std::min(rows, i0 + group); ++i)
        for (int k = q * 128; k < (q + 1) * 128; ++k) amax = std::max(amax, std::fabs(x[std::size_t(i) * c.k + k]));
      const float s = amax > 0 ? static_cast<float>(amax / 448.0) : 1.0f;
      for (int i = i0; i < std::min(rows, i0 + group); ++i) {
        scales[std::size_t(i) * kb + q] = s;
        for (int k = q * 128; k < (q + 1) * 128; ++k) codes[std::size_t(i) * c.k + k] = e4m3(x[std::size_t(i) * c.k + k] / s);
      }
    }
  }
}

int algo_split_k(const cublasLtMatmulAlgo_t& algo) {
  int32_t splitk = 1;
  size_t w = 0;
  cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &splitk, sizeof splitk, &w);
  return splitk;
}

std::string algo_text(const cublasLtMatmulAlgo_t& algo) {
  int32_t id = 0, splitk = 1;
  uint32_t tile = 0, reduction = 0, stages = 0;
  size_t w = 0;
  cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_ID, &id, sizeof id, &w);
  cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_TILE_ID, &tile, sizeof tile, &w);
  cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &splitk, sizeof splitk, &w);
  cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, &reduction, sizeof reduction, &w);
  cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_STAGES_ID, &stages, sizeof stages, &w);
  return "algo " + std::to_string(id) + ", tile id " + std::to_string(tile) + ", stages id " + std::to_string(stages) +
         ", split-K " + std::to_string(splitk) + ", reduction scheme " + std::to_string(reduction);
}

// The run's scales as cuBLASLt reads them (gpu.md section 4): tensor: one float; OUTER_VEC: M
// floats for A, N for B; VEC128 for A:
// (M, K/128) with M contiguous; VEC128 for B: (N, K/128) with N contiguous; BLK128x128 for B:
// (round_up(K/128, 4), N/128) with the K-blocks contiguous.
std::pair<std::vector<float>, std::vector<float>> device_scales(const LtConfig& c, const ExternalRun& run) {
  const int kb = c.k / 128;
  std::vector<float> sa_dev, sb_dev;
  if (c.scaling == ExternalScaling::tensor || c.scaling == ExternalScaling::rowwise) return {run.sa, run.sb};
  sa_dev.resize(std::size_t(c.m) * kb);
  for (int i = 0; i < c.m; ++i)
    for (int q = 0; q < kb; ++q) sa_dev[std::size_t(q) * c.m + i] = run.sa[std::size_t(i) * kb + q];
  if (c.scaling == ExternalScaling::block_1x128) {
    sb_dev.resize(std::size_t(c.n) * kb);
    for (int j = 0; j < c.n; ++j)
      for (int q = 0; q < kb; ++q) sb_dev[std::size_t(q) * c.n + j] = run.sb[std::size_t(j) * kb + q];
  } else {
    const int kpad = (kb + 3) / 4 * 4, nb = (c.n + 127) / 128;
    sb_dev.assign(std::size_t(kpad) * nb, 1.0f);
    for (int jb = 0; jb < nb; ++jb)
      for (int q = 0; q < kb; ++q) sb_dev[std::size_t(jb) * kpad + q] = run.sb[std::size_t(jb * 128) * kb + q];
  }
  return {std::move(sa_dev), std::move(sb_dev)};
}

// A, B and their scales on the device.
struct DeviceOperands {
  DeviceOperands(const LtConfig& c, const ExternalRun& run) : DeviceOperands(run, device_scales(c, run)) {}
  DeviceBuffer a, b, sa, sb;

 private:
  DeviceOperands(const ExternalRun& run, const std::pair<std::vector<float>, std::vector<float>>& scales)
      : a(run.a.size()), b(run.b.size()), sa(scales.first.size() * 4), sb(scales.second.size() * 4) {
    a.upload(run.a.data(), run.a.size());
    b.upload(run.b.data(), run.b.size());
    sa.upload(scales.first.data(), scales.first.size() * 4);
    sb.upload(scales.second.data(), scales.second.size() * 4);
  }
};

// The call's descriptor: "TN", FAST_ACCUM, the A and B scales (device pointers) and, for row-wise
// and block scaling, their modes.
cublasLtMatmulDesc_t make_desc(const LtConfig& c, void* sa, void* sb) {
  cublasLtMatmulDesc_t op = nullptr;
  LT_CHECK(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  const cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
  LT_CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
  LT_CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
  const int8_t fast = c.fast_accum ? 1 : 0;
  LT_CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast, sizeof fast));
  LT_CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &sa, sizeof sa));
  LT_CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &sb, sizeof sb));
  if (c.scaling != ExternalScaling::tensor) {
    const bool rowwise = c.scaling == ExternalScaling::rowwise;
    const cublasLtMatmulMatrixScale_t ma =
        rowwise ? CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F : CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F;
    const cublasLtMatmulMatrixScale_t mb =
        rowwise                                      ? CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F
        : c.scaling == ExternalScaling::block_1x128 ? CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F
                                                     : CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F;
    LT_CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, &ma, sizeof ma));
    LT_CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_B_SCALE_MODE, &mb, sizeof mb));
  }
  return op;
}

// One cuBLASLt call; fills run.d (row-major) or run.error.
void run_one(cublasLtHandle_t lt, const LtConfig& c, ExternalRun& run) {
  const DeviceOperands ops(c, run);
  const std::size_t workspace_bytes = std::size_t(64) << 20;
  DeviceBuffer ws(workspace_bytes);

  for (bool bf16 : {false, true}) {
    if (c.bf16_out && !bf16) continue;
    cublasLtMatmulDesc_t op = make_desc(c, ops.sa.p, ops.sb.p);
    cublasLtMatrixLayout_t la = nullptr, lb = nullptr, ld = nullptr;
    cublasLtMatmulPreference_t pref = nullptr;
    const cudaDataType_t dt = bf16 ? CUDA_R_16BF : CUDA_R_32F;
    LT_CHECK(cublasLtMatrixLayoutCreate(&la, CUDA_R_8F_E4M3, c.k, c.m, c.k));
    LT_CHECK(cublasLtMatrixLayoutCreate(&lb, CUDA_R_8F_E4M3, c.k, c.n, c.k));
    LT_CHECK(cublasLtMatrixLayoutCreate(&ld, dt, c.m, c.n, c.m));
    LT_CHECK(cublasLtMatmulPreferenceCreate(&pref));
    LT_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace_bytes,
                                                  sizeof workspace_bytes));
    cublasLtMatmulHeuristicResult_t heur{};
    int found = 0;
    const cublasStatus_t hs = cublasLtMatmulAlgoGetHeuristic(lt, op, la, lb, ld, ld, pref, 1, &heur, &found);
    bool done = false;
    if (hs == CUBLAS_STATUS_SUCCESS && found > 0) {
      const std::size_t out_bytes = std::size_t(c.m) * c.n * (bf16 ? 2 : 4);
      DeviceBuffer dd(out_bytes);
      LT_CHECK(cudaMemset(dd.p, 0xFF, out_bytes));
      const float alpha = 1.0f, beta = 0.0f;
      LT_CHECK(cublasLtMatmul(lt, op, &alpha, ops.a.p, la, ops.b.p, lb, &beta, dd.p, ld, dd.p, ld, &heur.algo, ws.p,
                              workspace_bytes, nullptr));
      LT_CHECK(cudaDeviceSynchronize());
      std::vector<std::uint8_t> raw(out_bytes);
      LT_CHECK(cudaMemcpy(raw.data(), dd.p, out_bytes, cudaMemcpyDeviceToHost));
      run.d.assign(std::size_t(c.m) * c.n, 0);
      for (int i = 0; i < c.m; ++i)
        for (int j = 0; j < c.n; ++j) {
          const std::size_t src = (std::size_t(j) * c.m + i) * (bf16 ? 2 : 4);  // column-major D
          std::uint32_t v = 0;
          std::memcpy(&v, &raw[src], bf16 ? 2 : 4);
          run.d[std::size_t(i) * c.n + j] = v;
        }
      run.bf16_output = bf16;
      run.algo = algo_text(heur.algo) +
                 (bf16 ? (c.bf16_out ? "; D bf16" : "; D bf16 (no f32-output algorithm)") : "; D f32");
      run.split_k = algo_split_k(heur.algo);
      done = true;
    } else if (bf16) {
      run.error = "no cuBLASLt algorithm for this configuration (heuristic status " + std::to_string(int(hs)) +
                  (c.bf16_out ? ", bf16 output)" : ", f32 and bf16 output tried)");
    }
    cublasLtMatmulPreferenceDestroy(pref);
    cublasLtMatrixLayoutDestroy(la);
    cublasLtMatrixLayoutDestroy(lb);
    cublasLtMatrixLayoutDestroy(ld);
    cublasLtMatmulDescDestroy(op);
    if (done) return;
  }
}

// D = A B^T in double from the run's codes and logical scales: where C and the bias are made to
// cancel D, so that the low bits the epilogue's FFMA keeps (or drops) reach D.
std::vector<double> approximate_d(const ExternalRun& run) {
  const int kb = (run.k + 127) / 128;
  // The index of row i's scale for K element k (ExternalRun: one, one per row, or per 128-block).
  const auto scale_at = [&](int i, int k) -> std::size_t {
    if (run.scaling == ExternalScaling::tensor) return 0;
    if (run.scaling == ExternalScaling::rowwise) return std::size_t(i);
    return std::size_t(i) * kb + k / 128;
  };
  std::vector<double> av(run.a.size()), bv(run.b.size()), d(std::size_t(run.m) * run.n, 0.0);
  for (int i = 0; i < run.m; ++i)
    for (int k = 0; k < run.k; ++k)
      av[std::size_t(i) * run.k + k] = to_double(Format::float8_e4m3fn, run.a[std::size_t(i) * run.k + k]) * run.sa[scale_at(i, k)];
  for (int j = 0; j < run.n; ++j)
    for (int k = 0; k < run.k; ++k)
      bv[std::size_t(j) * run.k + k] = to_double(Format::float8_e4m3fn, run.b[std::size_t(j) * run.k + k]) * run.sb[scale_at(j, k)];
  for (int i = 0; i < run.m; ++i)
    for (int j = 0; j < run.n; ++j) {
      double sum = 0.0;
      for (int k = 0; k < run.k; ++k) sum += av[std::size_t(i) * run.k + k] * bv[std::size_t(j) * run.k + k];
      d[std::size_t(i) * run.n + j] = sum;
    }
  return d;
}

// One cuBLASLt call with its epilogue; fills run.d (D's codes, row-major), run.epilogue, or run.error.
void run_epilogue_one(cublasLtHandle_t lt, const LtConfig& c, Rng& r, ExternalRun& run) {
  const LtEpilogue& ep = c.epilogue;
  // C: rows of -D (in C's type) beside Gaussian rows; the bias: -D(i, 0) on every fourth row.
  const std::vector<double> d0 = approximate_d(run);
  double spread = 0.0;
  for (double v : d0) spread = std::max(spread, std::fabs(v));
  if (spread == 0.0) spread = 1.0;
  ExternalEpilogue e;
  e.alpha = ep.alpha, e.beta = ep.beta, e.c_format = ep.c, e.bias_format = ep.bias, e.d_format = ep.d;
  e.relu = ep.relu;
  // A value of f to nearest even; one past f's range (f16 beside wide per-block data) becomes a
  // Gaussian one within it, as the epilogue was measured with finite C and bias.
  const auto code_in = [&](Format f, double v) {
    const double top = f == Format::float16 ? 60000.0 : 1e30;
    if (std::fabs(v) > top) v = r.gaussian() * std::min(spread, top / 8);
    return convert(f, v, presets::ieee());
  };
  e.c.resize(d0.size());
  for (int i = 0; i < c.m; ++i)
    for (int j = 0; j < c.n; ++j) {
      const std::size_t at = std::size_t(i) * c.n + j;
      e.c[at] = code_in(ep.c, i % 2 == 0 ? -d0[at] * ep.alpha / ep.beta : r.gaussian() * spread);
    }
  e.bias.resize(std::size_t(c.m));
  for (int i = 0; i < c.m; ++i)
    e.bias[std::size_t(i)] = code_in(ep.bias, i % 4 == 1 ? -d0[std::size_t(i) * c.n] : r.gaussian() * spread / 4);
  const bool fp8_d = ep.d == Format::float8_e4m3fn;
  if (fp8_d) e.d_scale = static_cast<float>(2 * 448.0 / (spread * std::max(1.0f, std::fabs(ep.alpha))));

  const DeviceOperands ops(c, run);
  // C column-major in its type; the bias in its type.
  const std::size_t cb = type_bytes(ep.c), bb = type_bytes(ep.bias), dbytes = type_bytes(ep.d);
  std::vector<std::uint8_t> c_dev(std::size_t(c.m) * c.n * cb), bias_dev(std::size_t(c.m) * bb);
  for (int i = 0; i < c.m; ++i)
    for (int j = 0; j < c.n; ++j) std::memcpy(&c_dev[(std::size_t(j) * c.m + i) * cb], &e.c[std::size_t(i) * c.n + j], cb);
  for (int i = 0; i < c.m; ++i) std::memcpy(&bias_dev[std::size_t(i) * bb], &e.bias[std::size_t(i)], bb);
  DeviceBuffer dc(c_dev.size()), dbias(bias_dev.size()), dd(std::size_t(c.m) * c.n * dbytes), dscale(4), damax(4);
  dc.upload(c_dev.data(), c_dev.size());
  dbias.upload(bias_dev.data(), bias_dev.size());
  dscale.upload(&e.d_scale, 4);
  const float amax_init = -1.0f;
  damax.upload(&amax_init, 4);
  const std::size_t workspace_bytes = std::size_t(64) << 20;
  DeviceBuffer ws(workspace_bytes);

  cublasLtMatmulDesc_t op = make_desc(c, ops.sa.p, ops.sb.p);
  cublasLtMatrixLayout_t la = nullptr, lb = nullptr, lc = nullptr, ld = nullptr;
  cublasLtMatmulPreference_t pref = nullptr;
  const cublasLtEpilogue_t epilogue = ep.relu ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_BIAS;
  LT_CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof epilogue));
  void* pbias = dbias.p;
  LT_CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &pbias, sizeof pbias));
  const int32_t bias_type = cuda_type(ep.bias);
  LT_CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bias_type, sizeof bias_type));
  if (fp8_d) {
    void* ps = dscale.p;
    void* pm = damax.p;
    LT_CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_D_SCALE_POINTER, &ps, sizeof ps));
    LT_CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_AMAX_D_POINTER, &pm, sizeof pm));
  }
  LT_CHECK(cublasLtMatrixLayoutCreate(&la, CUDA_R_8F_E4M3, c.k, c.m, c.k));
  LT_CHECK(cublasLtMatrixLayoutCreate(&lb, CUDA_R_8F_E4M3, c.k, c.n, c.k));
  LT_CHECK(cublasLtMatrixLayoutCreate(&lc, cuda_type(ep.c), c.m, c.n, c.m));
  LT_CHECK(cublasLtMatrixLayoutCreate(&ld, cuda_type(ep.d), c.m, c.n, c.m));
  LT_CHECK(cublasLtMatmulPreferenceCreate(&pref));
  LT_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace_bytes,
                                                sizeof workspace_bytes));
  cublasLtMatmulHeuristicResult_t heur{};
  int found = 0;
  const cublasStatus_t hs = cublasLtMatmulAlgoGetHeuristic(lt, op, la, lb, lc, ld, pref, 1, &heur, &found);
  if (hs == CUBLAS_STATUS_SUCCESS && found > 0) {
    LT_CHECK(cublasLtMatmul(lt, op, &ep.alpha, ops.a.p, la, ops.b.p, lb, &ep.beta, dc.p, lc, dd.p, ld, &heur.algo, ws.p,
                            workspace_bytes, nullptr));
    LT_CHECK(cudaDeviceSynchronize());
    std::vector<std::uint8_t> raw(std::size_t(c.m) * c.n * dbytes);
    LT_CHECK(cudaMemcpy(raw.data(), dd.p, raw.size(), cudaMemcpyDeviceToHost));
    run.d.assign(std::size_t(c.m) * c.n, 0);
    for (int i = 0; i < c.m; ++i)
      for (int j = 0; j < c.n; ++j) std::memcpy(&run.d[std::size_t(i) * c.n + j], &raw[(std::size_t(j) * c.m + i) * dbytes], dbytes);
    if (fp8_d) {
      float amax = 0.0f;
      LT_CHECK(cudaMemcpy(&amax, damax.p, 4, cudaMemcpyDeviceToHost));
      e.amax_d = amax;
    }
    run.algo = algo_text(heur.algo) + "; D " + to_string(ep.d);
    run.split_k = algo_split_k(heur.algo);
    run.epilogue = std::move(e);
  } else {
    run.error = "no cuBLASLt algorithm for this epilogue (heuristic status " + std::to_string(int(hs)) + ")";
  }
  cublasLtMatmulPreferenceDestroy(pref);
  cublasLtMatrixLayoutDestroy(la);
  cublasLtMatrixLayoutDestroy(lb);
  cublasLtMatrixLayoutDestroy(lc);
  cublasLtMatrixLayoutDestroy(ld);
  cublasLtMatmulDescDestroy(op);
}

}  // namespace

std::vector<ExternalRun> run_cublaslt(std::uint64_t seed, std::string& why_not) {
  const gpu::SystemInfo s = gpu::query_system();
  if (s.devices.empty()) {
    why_not = "no CUDA GPU is present (" + s.reason + ")";
    return {};
  }
  if (s.devices.front().compute_capability() != 90) {
    why_not = "the cuBLASLt study covers Hopper (compute capability 9.0); device 0 is " + s.devices.front().name;
    return {};
  }
  const std::vector<LtConfig> configs = {
      {"tensor-wise scaling, FAST_ACCUM off, uniform [0,1) data", ExternalScaling::tensor, false, 128, 128, 4096, 0, 1.0f, 1.0f},
      {"tensor-wise scaling, FAST_ACCUM on, uniform [0,1) data", ExternalScaling::tensor, true, 128, 128, 4096, 0, 1.0f, 1.0f},
      {"tensor-wise scaling 0.3 x 1.7, FAST_ACCUM off, Gaussian data", ExternalScaling::tensor, false, 256, 256, 2048, 1, 0.3f, 1.7f},
      {"tensor-wise scaling, FAST_ACCUM off, skinny long K", ExternalScaling::tensor, false, 64, 128, 16384, 0, 1.0f, 1.0f},
      {"tensor-wise scaling, FAST_ACCUM on, skinny long K", ExternalScaling::tensor, true, 64, 128, 16384, 0, 1.0f, 1.0f},
      {"VEC128_32F x VEC128_32F block scaling", ExternalScaling::block_1x128, false, 256, 256, 2048, 2, 1.0f, 1.0f},
      {"VEC128_32F x BLK128x128_32F block scaling", ExternalScaling::block_128x128, false, 256, 256, 2048, 2, 1.0f, 1.0f},
      {"VEC128_32F x BLK128x128_32F block scaling, skinny long K", ExternalScaling::block_128x128, false, 64, 256, 16384, 2,
       1.0f, 1.0f},
      // Row-wise scaling (OUTER_VEC_32F, torchao's row-wise recipe) called directly: torch._scaled_mm
      // hands cuBLASLt the exchanged problem, so its fit need not be this one's.
      {"OUTER_VEC_32F x OUTER_VEC_32F row-wise scaling", ExternalScaling::rowwise, false, 256, 256, 2048, 2, 1.0f, 1.0f},
      {"OUTER_VEC_32F x OUTER_VEC_32F row-wise scaling, FAST_ACCUM on", ExternalScaling::rowwise, true, 256, 256, 2048, 2,
       1.0f, 1.0f},
      {"OUTER_VEC_32F x OUTER_VEC_32F row-wise scaling, skinny long K", ExternalScaling::rowwise, false, 64, 256, 16384, 2,
       1.0f, 1.0f},
      {"OUTER_VEC_32F x OUTER_VEC_32F row-wise scaling, FAST_ACCUM on, skinny long K", ExternalScaling::rowwise, true, 64,
       128, 16384, 2, 1.0f, 1.0f},
      // bf16 D, as most fp8 GEMMs in training and inference write it: is it the f32 D rounded to
      // nearest even, and does a split-K reduce in f32 or in bf16 (the reduction scheme)?
      {"tensor-wise scaling 0.3 x 1.7, FAST_ACCUM off, Gaussian data, bf16 D", ExternalScaling::tensor, false, 256, 256,
       2048, 1, 0.3f, 1.7f, true},
      {"tensor-wise scaling, FAST_ACCUM off, skinny long K, Gaussian data, bf16 D", ExternalScaling::tensor, false, 64,
       128, 16384, 1, 1.0f, 1.0f, true},
      {"tensor-wise scaling, FAST_ACCUM on, skinny long K, Gaussian data, bf16 D", ExternalScaling::tensor, true, 64, 128,
       16384, 1, 1.0f, 1.0f, true},
      {"VEC128_32F x VEC128_32F block scaling, bf16 D", ExternalScaling::block_1x128, false, 256, 256, 2048, 2, 1.0f, 1.0f,
       true},
      {"VEC128_32F x BLK128x128_32F block scaling, skinny long K, bf16 D", ExternalScaling::block_128x128, false, 64, 256,
       16384, 2, 1.0f, 1.0f, true},
      {"OUTER_VEC_32F x OUTER_VEC_32F row-wise scaling, bf16 D", ExternalScaling::rowwise, false, 256, 256, 2048, 2, 1.0f,
       1.0f, true},
      // cuBLASLt's epilogue. Tensor-wise scales and alpha for which the three orders of alpha sa sb
      // round to three different floats; split-K 1 (beta C in the scale's FFMA) and the skinny shapes
      // (split-K 6: beta C added after the reduction).
      {"epilogue: alpha 1.62, beta 0.6, f32 C, bf16 bias, tensor-wise scaling, FAST_ACCUM off, Gaussian data, f32 D",
       ExternalScaling::tensor, false, 256, 256, 2048, 1, 1.539794921875f, 1.4581329822540283f, false,
       {true, 1.6219326257705688f, 0.6f, Format::float32, Format::bfloat16, Format::float32}},
      {"epilogue: alpha 1.62, beta 0.6, f32 C, bf16 bias, tensor-wise scaling, FAST_ACCUM on, skinny long K, f32 D",
       ExternalScaling::tensor, true, 64, 128, 16384, 1, 1.539794921875f, 1.4581329822540283f, false,
       {true, 1.6219326257705688f, 0.6f, Format::float32, Format::bfloat16, Format::float32}},
      {"epilogue: alpha 0.7, beta 1, bf16 C and bias, VEC128_32F x BLK128x128_32F block scaling, bf16 D",
       ExternalScaling::block_128x128, false, 256, 256, 2048, 2, 1.0f, 1.0f, false,
       {true, 0.7f, 1.0f, Format::bfloat16, Format::bfloat16, Format::bfloat16}},
      {"epilogue: beta -1.5, f16 C and bias, VEC128_32F x VEC128_32F block scaling, skinny long K, f16 D",
       ExternalScaling::block_1x128, false, 64, 256, 16384, 2, 1.0f, 1.0f, false,
       {true, 1.0f, -1.5f, Format::float16, Format::float16, Format::float16}},
      {"epilogue: beta 1, bf16 C and bias, tensor-wise scaling, e4m3 D with D scale and amax",
       ExternalScaling::tensor, false, 256, 256, 2048, 1, 1.539794921875f, 1.4581329822540283f, false,
       {true, 1.0f, 1.0f, Format::bfloat16, Format::bfloat16, Format::float8_e4m3fn}},
      {"epilogue: alpha 1.62, beta 0.6, f16 C and bias, tensor-wise scaling, skinny long K, e4m3 D with D scale and amax",
       ExternalScaling::tensor, false, 64, 128, 16384, 1, 1.539794921875f, 1.4581329822540283f, false,
       {true, 1.6219326257705688f, 0.6f, Format::float16, Format::float16, Format::float8_e4m3fn}},
      {"epilogue: alpha 1.62, beta 0.6, f32 C, bf16 bias, OUTER_VEC_32F x OUTER_VEC_32F row-wise scaling, f32 D",
       ExternalScaling::rowwise, false, 256, 256, 2048, 2, 1.0f, 1.0f, false,
       {true, 1.6219326257705688f, 0.6f, Format::float32, Format::bfloat16, Format::float32}},
      // RELU_BIAS: the ReLU after the bias, before D's type and amax_d (with the e4m3 D, amax_d
      // tells before from after where the largest |y| is a negative y).
      {"epilogue: ReLU, alpha 1.62, beta 0.6, f32 C, bf16 bias, VEC128_32F x BLK128x128_32F block scaling, skinny long K, "
       "f32 D",
       ExternalScaling::block_128x128, false, 64, 256, 16384, 2, 1.0f, 1.0f, false,
       {true, 1.6219326257705688f, 0.6f, Format::float32, Format::bfloat16, Format::float32, true}},
      {"epilogue: ReLU, beta 1, bf16 C and bias, tensor-wise scaling, e4m3 D with D scale and amax",
       ExternalScaling::tensor, false, 256, 256, 2048, 1, 1.539794921875f, 1.4581329822540283f, false,
       {true, 1.0f, 1.0f, Format::bfloat16, Format::bfloat16, Format::float8_e4m3fn, true}},
  };
  cublasLtHandle_t lt = nullptr;
  LT_CHECK(cublasLtCreate(&lt));
  std::vector<ExternalRun> runs;
  const std::string lib = "cuBLASLt " + std::to_string(cublasLtGetVersion());
  for (std::size_t i = 0; i < configs.size(); ++i) {
    const LtConfig& c = configs[i];
    ExternalRun run;
    run.library = lib;
    run.config = c.name + ", e4m3 x e4m3, M=" + std::to_string(c.m) + " N=" + std::to_string(c.n) + " K=" + std::to_string(c.k);
    run.scaling = c.scaling;
    run.fast_accum = c.fast_accum;
    run.m = c.m, run.n = c.n, run.k = c.k;
    Rng r(case_seed(seed, "cublaslt:" + c.name, DataKind::realistic, i));
    make_operand(c, c.m, r, run.a, run.sa, false);
    make_operand(c, c.n, r, run.b, run.sb, true);
    try {
      if (c.epilogue.used) {
        run_epilogue_one(lt, c, r, run);
      } else {
        run_one(lt, c, run);
      }
    } catch (const std::exception& e) {
      run.error = e.what();
    }
    runs.push_back(std::move(run));
  }
  cublasLtDestroy(lt);
  return runs;
}

}  // namespace blockscale::harness
