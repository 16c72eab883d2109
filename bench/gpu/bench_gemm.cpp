// SPDX-License-Identifier: Apache-2.0
// sm_90a MXFP8 GEMM throughput against cuBLASLt fp8 in the same binary and run (Hopper only).
//
// Baselines (cuBLASLt, e4m3 x e4m3 "TN", bf16 D, CUBLAS_COMPUTE_32F):
//   tensorwise   SCALAR_32F scales for A and B (one fp32 each)
//   block        VEC128_32F for A (1 x 128) and BLK128x128_32F for B (DeepSeek-V3 recipe)
//   vec128       VEC128_32F for A and B (1 x 128 each)
// Ours: MXFP8 e4m3 x e4m3 with e8m0 scales per 32 (4x finer than cuBLAS's 128), 128x4 tiled
// scales, f32 and bf16 D. Each benchmark reports TFLOPS (2 M N K / time) and, for ours, the
// ratio to the cuBLASLt block-scaled time measured just before in the same process.
//
// Timing: CUDA events around a batch of kBatch back-to-back launches (manual time, per launch),
// inputs of 64 MiB+ per operand (larger than L2), random data (never zeros), a warm-up first.
#include <benchmark/benchmark.h>
#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstdio>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "blockscale/gpu/gemm.h"

namespace {

using namespace blockscale;
using namespace blockscale::gpu;

#define BENCH_CUDA(call)                                                                                \
  do {                                                                                                 \
    const cudaError_t e_ = (call);                                                                     \
    if (e_ != cudaSuccess) throw std::runtime_error(std::string(#call) + ": " + cudaGetErrorString(e_)); \
  } while (0)
#define BENCH_CUBLAS(call)                                                                            \
  do {                                                                                               \
    const cublasStatus_t s_ = (call);                                                                \
    if (s_ != CUBLAS_STATUS_SUCCESS) throw std::runtime_error(std::string(#call) + ": status " + std::to_string(int(s_))); \
  } while (0)

struct Shape {
  int m, n, k;
};
const Shape kShapes[] = {{8192, 8192, 8192}, {256, 8192, 8192}};

// Device buffers for one shape, filled with random bytes (valid e4m3 codes: 0x7F / 0xFF cleared).
struct Buffers {
  std::size_t a_bytes = 0, b_bytes = 0;
  void *a = nullptr, *b = nullptr, *sfa = nullptr, *sfb = nullptr, *d = nullptr, *fscale_a = nullptr,
       *fscale_b = nullptr, *workspace = nullptr;
  static constexpr std::size_t kWorkspace = 64u << 20;
};

__attribute__((noinline)) void fill_random(void* dst, std::size_t bytes, std::uint8_t mask_nan) {
  std::vector<std::uint8_t> h(bytes);
  std::uint64_t s = 0x9E3779B97F4A7C15ull ^ bytes;
  for (std::size_t i = 0; i < bytes; ++i) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    std::uint8_t v = static_cast<std::uint8_t>(s >> 56);
    if (mask_nan && (v & 0x7F) == 0x7F) v = 0x3F;
    h[i] = v;
  }
  BENCH_CUDA(cudaMemcpy(dst, h.data(), bytes, cudaMemcpyHostToDevice));
}

Buffers& buffers(const Shape& s) {
  static std::map<std::pair<int, int>, Buffers> all;
  Buffers& b = all[{s.m, s.n * 100000 + s.k}];
  if (b.a) return b;
  b.a_bytes = std::size_t(s.m) * s.k;
  b.b_bytes = std::size_t(s.n) * s.k;
  BENCH_CUDA(cudaMalloc(&b.a, b.a_bytes));
  BENCH_CUDA(cudaMalloc(&b.b, b.b_bytes));
  fill_random(b.a, b.a_bytes, 1);
  fill_random(b.b, b.b_bytes, 1);
  // e8m0 scales near 1 (codes 120..134): never NaN, products stay finite.
  const GemmKernel& k = find_gemm_kernel("sm_90a gemm mxfp8 e4m3 e4m3 ue8m0 block32 (wgmma promotion P=1)");
  const std::size_t sa = gemm_scale_bytes(k, ScaleLayout::tiled_128x4, s.m, s.k);
  const std::size_t sb = gemm_scale_bytes(k, ScaleLayout::tiled_128x4, s.n, s.k);
  BENCH_CUDA(cudaMalloc(&b.sfa, sa));
  BENCH_CUDA(cudaMalloc(&b.sfb, sb));
  std::vector<std::uint8_t> hs(std::max(sa, sb));
  for (std::size_t i = 0; i < hs.size(); ++i) hs[i] = static_cast<std::uint8_t>(120 + (i * 7919) % 15);
  BENCH_CUDA(cudaMemcpy(b.sfa, hs.data(), sa, cudaMemcpyHostToDevice));
  BENCH_CUDA(cudaMemcpy(b.sfb, hs.data(), sb, cudaMemcpyHostToDevice));
  BENCH_CUDA(cudaMalloc(&b.d, std::size_t(s.m) * s.n * 4));
  // cuBLASLt fp32 scales: the largest of the block layouts (A: M x K/128; B: K/128 (padded to 4)
  // x N/128 for 128x128, N x K/128 for 1x128), all 1.0.
  const std::size_t kb = (s.k + 127) / 128, fs = std::max<std::size_t>(std::size_t(s.m) * kb,
                                                                       std::size_t(s.n) * (kb + 4));
  std::vector<float> ones(fs, 1.0f);
  BENCH_CUDA(cudaMalloc(&b.fscale_a, fs * 4));
  BENCH_CUDA(cudaMalloc(&b.fscale_b, fs * 4));
  BENCH_CUDA(cudaMemcpy(b.fscale_a, ones.data(), fs * 4, cudaMemcpyHostToDevice));
  BENCH_CUDA(cudaMemcpy(b.fscale_b, ones.data(), fs * 4, cudaMemcpyHostToDevice));
  BENCH_CUDA(cudaMalloc(&b.workspace, Buffers::kWorkspace));
  return b;
}

// Times one launch with CUDA events.
constexpr int kBatch = 5;

template <class Launch>
void run_timed(benchmark::State& state, const Shape& s, Launch&& launch) {
  cudaEvent_t e0, e1;
  BENCH_CUDA(cudaEventCreate(&e0));
  BENCH_CUDA(cudaEventCreate(&e1));
  launch();  // warm-up (module load, heuristics)
  BENCH_CUDA(cudaDeviceSynchronize());
  double total = 0;
  for (auto _ : state) {
    BENCH_CUDA(cudaEventRecord(e0));
    for (int i = 0; i < kBatch; ++i) launch();
    BENCH_CUDA(cudaEventRecord(e1));
    BENCH_CUDA(cudaEventSynchronize(e1));
    float ms = 0;
    BENCH_CUDA(cudaEventElapsedTime(&ms, e0, e1));
    state.SetIterationTime(ms * 1e-3 / kBatch);
    total += ms * 1e-3 / kBatch;
  }
  BENCH_CUDA(cudaGetLastError());
  const double flops = 2.0 * s.m * s.n * s.k;
  state.counters["TFLOPS"] = benchmark::Counter(flops * double(state.iterations()) / total * 1e-12);
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
}

std::map<std::string, double>& baseline_seconds() {
  static std::map<std::string, double> m;
  return m;
}
std::string shape_key(const Shape& s) {
  return std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k);
}

enum class Scaling { tensorwise, block, vec128 };

void BM_cublaslt_fp8(benchmark::State& state, Shape s, Scaling scaling) {
  try {
    Buffers& b = buffers(s);
    cublasLtHandle_t lt;
    BENCH_CUBLAS(cublasLtCreate(&lt));
    cublasLtMatmulDesc_t op;
    BENCH_CUBLAS(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    const cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
    BENCH_CUBLAS(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
    BENCH_CUBLAS(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
    BENCH_CUBLAS(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &b.fscale_a, sizeof(void*)));
    BENCH_CUBLAS(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &b.fscale_b, sizeof(void*)));
    if (scaling != Scaling::tensorwise) {
      const cublasLtMatmulMatrixScale_t ma = CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F;
      const cublasLtMatmulMatrixScale_t mb =
          scaling == Scaling::block ? CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F : CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F;
      BENCH_CUBLAS(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, &ma, sizeof ma));
      BENCH_CUBLAS(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_B_SCALE_MODE, &mb, sizeof mb));
    }
    // Column-major view: A^T stored K x M (= our row-major M x K), B stored K x N, D M x N.
    cublasLtMatrixLayout_t la, lb, ld;
    BENCH_CUBLAS(cublasLtMatrixLayoutCreate(&la, CUDA_R_8F_E4M3, s.k, s.m, s.k));
    BENCH_CUBLAS(cublasLtMatrixLayoutCreate(&lb, CUDA_R_8F_E4M3, s.k, s.n, s.k));
    BENCH_CUBLAS(cublasLtMatrixLayoutCreate(&ld, CUDA_R_16BF, s.m, s.n, s.m));
    cublasLtMatmulPreference_t pref;
    BENCH_CUBLAS(cublasLtMatmulPreferenceCreate(&pref));
    const std::size_t ws = Buffers::kWorkspace;
    BENCH_CUBLAS(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws));
    cublasLtMatmulHeuristicResult_t heur{};
    int found = 0;
    BENCH_CUBLAS(cublasLtMatmulAlgoGetHeuristic(lt, op, la, lb, ld, ld, pref, 1, &heur, &found));
    if (found == 0) {
      state.SkipWithError("cuBLASLt found no algorithm for this scaling");
      return;
    }
    const float alpha = 1.0f, beta = 0.0f;
    run_timed(state, s, [&] {
      BENCH_CUBLAS(cublasLtMatmul(lt, op, &alpha, b.a, la, b.b, lb, &beta, b.d, ld, b.d, ld, &heur.algo, b.workspace,
                                  ws, nullptr));
    });
    if (scaling == Scaling::block) {
      baseline_seconds()[shape_key(s)] =
          2.0 * s.m * s.n * s.k / (state.counters["TFLOPS"].value * 1e12);
    }
    cublasLtMatmulPreferenceDestroy(pref);
    cublasLtMatrixLayoutDestroy(la);
    cublasLtMatrixLayoutDestroy(lb);
    cublasLtMatrixLayoutDestroy(ld);
    cublasLtMatmulDescDestroy(op);
    cublasLtDestroy(lt);
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

void BM_blockscale_mxfp8(benchmark::State& state, Shape s, GemmOutput out, const GemmKernel* kernel) {
  try {
    const GemmKernel& k = *kernel;
    Buffers& b = buffers(s);
    GemmArgs args;
    args.m = s.m, args.n = s.n, args.k = s.k;
    args.scale_layout = ScaleLayout::tiled_128x4;
    args.output = out;
    GemmDeviceOperands ops;
    ops.a = b.a, ops.b = b.b, ops.sfa = b.sfa, ops.sfb = b.sfb, ops.d = b.d;
    run_timed(state, s, [&] { launch_gemm(k, args, ops); });
    const auto it = baseline_seconds().find(shape_key(s));
    if (it != baseline_seconds().end()) {
      const double ours = 2.0 * s.m * s.n * s.k / (state.counters["TFLOPS"].value * 1e12);
      state.counters["vs_cublaslt_block"] = benchmark::Counter(it->second / ours);
    }
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

void register_all() {
  for (const Shape& s : kShapes) {
    const std::string sh = shape_key(s);
    benchmark::RegisterBenchmark(("cublaslt_fp8_tensorwise/" + sh).c_str(), BM_cublaslt_fp8, s, Scaling::tensorwise)
        ->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(0.5);
    benchmark::RegisterBenchmark(("cublaslt_fp8_vec128_vec128/" + sh).c_str(), BM_cublaslt_fp8, s, Scaling::vec128)
        ->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(0.5);
    benchmark::RegisterBenchmark(("cublaslt_fp8_vec128_blk128x128/" + sh).c_str(), BM_cublaslt_fp8, s, Scaling::block)
        ->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(0.5);
    const GemmKernel& k = find_gemm_kernel("sm_90a gemm mxfp8 e4m3 e4m3 ue8m0 block32 (wgmma promotion P=1)");
    for (GemmOutput out : {GemmOutput::bf16, GemmOutput::f32}) {
      benchmark::RegisterBenchmark(("blockscale_mxfp8_e4m3_" + to_string(out) + "/" + sh).c_str(), BM_blockscale_mxfp8,
                                   s, out, &k)
          ->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(0.5);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  const SystemInfo sys = query_system();
  if (sys.devices.empty() || sys.devices[0].compute_capability() != 90) {
    std::printf("bench_gpu_gemm: needs a Hopper GPU (compute capability 9.0): %s\n",
                sys.devices.empty() ? sys.reason.c_str() : sys.devices[0].name.c_str());
    return 0;
  }
  const DeviceInfo& d = sys.devices[0];
  benchmark::AddCustomContext("gpu", d.name + " (cc " + d.compute_capability_string() + ", " +
                                         std::to_string(d.multiprocessors) + " SMs)");
  benchmark::AddCustomContext("driver", sys.driver_version + ", CUDA " +
                                            SystemInfo::version_string(sys.cuda_driver_api_version));
  int lt_version = static_cast<int>(cublasLtGetVersion());
  benchmark::AddCustomContext("cublasLt", std::to_string(lt_version));
  register_all();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
