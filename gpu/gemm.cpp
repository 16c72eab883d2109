// SPDX-License-Identifier: Apache-2.0
// GEMM kernel catalogue, validation, selection by compute capability, and host-buffer runs.
#include "blockscale/gpu/gemm.h"

#include <cuda_runtime_api.h>

#include <cstring>
#include <stdexcept>
#include <string>

#include "cuda_check.h"
#include "gemm_launch.h"

namespace blockscale::gpu {

std::string to_string(GemmRecipe r) {
  switch (r) {
    case GemmRecipe::mxfp8: return "mxfp8";
    case GemmRecipe::mxfp4: return "mxfp4";
    case GemmRecipe::nvfp4: return "nvfp4";
  }
  return "?";
}
std::string to_string(ScaleLayout l) { return l == ScaleLayout::tiled_128x4 ? "tiled_128x4" : "linear"; }
std::string to_string(GemmOutput o) { return o == GemmOutput::f32 ? "f32" : "bf16"; }

namespace {

std::string sname(Format f) { return info(f).short_name; }

const char* kHopperSchedule =
    "Hopper promotion, P = 1: acc = C (or +0.0); for each K-block b in increasing order: partial = one "
    "wgmma.mma_async m64nNk32 f32 fp8 instruction (per 64 rows) into a fresh accumulator (scale-d = 0: T-FDPA F = 13, RZ to "
    "e8m13) over block b's k32 slot; s = fp32 round-to-nearest product SFA(i,b) * SFB(j,b) (FMUL); acc = fma(s, "
    "partial, acc) rounded to nearest (FFMA). f32 output: acc; bf16 output: cvt.rn.bf16.f32(acc). No flush of "
    "subnormals; NaN results are the GPU's canonical 0x7FFFFFFF.";

std::vector<GemmKernel> build() {
  std::vector<GemmKernel> v;
  const Format fp8[] = {Format::float8_e4m3fn, Format::float8_e5m2};
  {
    const std::string sched = "wgmma promotion P=1";
    for (Format a : fp8)
      for (Format b : fp8) {
        GemmKernel k;
        k.arch = Arch::sm_90a;
        k.recipe = GemmRecipe::mxfp8;
        k.a = a, k.b = b;
        k.scale = Format::float8_e8m0fnu;
        k.block = 32;
        k.k_multiple = 128;
        k.instruction = "wgmma.mma_async.sync.aligned.m64n64k32.f32." + sname(a) + "." + sname(b);
        k.promotion_interval = 1;
        k.name = "sm_90a gemm mxfp8 " + sname(a) + " " + sname(b) + " ue8m0 block32 (" + sched + ")";
        k.schedule = std::string(kHopperSchedule) + " The k32 slot holds the block's 32 elements.";
        v.push_back(k);
      }
    GemmKernel k4;
    k4.arch = Arch::sm_90a;
    k4.recipe = GemmRecipe::mxfp4;
    k4.a = k4.b = Format::float4_e2m1fn;
    k4.scale = Format::float8_e8m0fnu;
    k4.block = 32;
    k4.k_multiple = 128;
    k4.instruction = "wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3";
    k4.name = "sm_90a gemm mxfp4 e2m1 e2m1 ue8m0 block32 (e4m3 " + sched + ")";
    k4.schedule = std::string(kHopperSchedule) +
                  " e2m1 codes are expanded exactly to e4m3 on chip; the k32 slot holds the block's 32 elements.";
    v.push_back(k4);
    GemmKernel nv = k4;
    nv.recipe = GemmRecipe::nvfp4;
    nv.scale = Format::float8_ue4m3;
    nv.block = 16;
    nv.k_multiple = 64;
    nv.name = "sm_90a gemm nvfp4 e2m1 e2m1 ue4m3 block16 (e4m3 " + sched + ")";
    nv.schedule = std::string(kHopperSchedule) +
                  " e2m1 codes are expanded exactly to e4m3 on chip; the k32 slot holds the block's 16 elements in k = "
                  "0..15 and zeros in k = 16..31. ue4m3 scales ignore bit 7 (0x7F is NaN). The per-tensor fp32 scale "
                  "of NVFP4 is not applied (fold it into C / D outside).";
    v.push_back(nv);
  }
  for (Format a : fp8)
    for (Format b : fp8) {
      GemmKernel k;
      k.arch = Arch::sm_100a;
      k.recipe = GemmRecipe::mxfp8;
      k.a = a, k.b = b;
      k.scale = Format::float8_e8m0fnu;
      k.block = 32;
      k.k_multiple = 128;
      k.linear_scales = false;
      k.tile_n = 256;
      k.instruction = "tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.block32 m128n256k32 f32 " + sname(a) + " " +
                      sname(b) + " ue8m0";
      k.promotion_interval = 0;
      k.name = "sm_100a gemm mxfp8 " + sname(a) + " " + sname(b) + " ue8m0 block32 (tcgen05 chain)";
      k.schedule =
          "Plain tcgen05 chain (compile-verified only): D(TMEM) = C (or zeros); for each K step of 32, D = "
          "tcgen05.mma kind::mxf8f6f4.block_scale.block32 (ST-FDPA, F = 25, RZ-FP32) with enable_input_d = 1. bf16 "
          "output: cvt.rn.bf16.f32(D).";
      v.push_back(k);
    }
  {
    GemmKernel k;
    k.arch = Arch::sm_100a;
    k.recipe = GemmRecipe::nvfp4;
    k.a = k.b = Format::float4_e2m1fn;
    k.scale = Format::float8_ue4m3;
    k.block = 16;
    k.k_multiple = 256;
    k.linear_scales = false;
    k.tile_n = 256;
    k.instruction = "tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.block16 m128n256k64 f32 e2m1 e2m1 ue4m3";
    k.promotion_interval = 0;
    k.name = "sm_100a gemm nvfp4 e2m1 e2m1 ue4m3 block16 (tcgen05 chain)";
    k.schedule =
        "Plain tcgen05 chain (compile-verified only): D(TMEM) = C (or zeros); for each K step of 64, D = tcgen05.mma "
        "kind::mxf4nvf4.block_scale.block16 (GST-FDPA, G = 16, F = 35, RZ-FP32) with enable_input_d = 1. bf16 output: "
        "cvt.rn.bf16.f32(D). The per-tensor fp32 scale of NVFP4 is not applied.";
    v.push_back(k);
  }
  return v;
}

[[noreturn]] void bad(const GemmKernel& k, const std::string& rule) {
  throw std::invalid_argument("GEMM '" + k.name + "': " + rule);
}

bool same_kernel(const GemmKernel& x, const GemmKernel& y) {
  return x.name == y.name && x.arch == y.arch && x.recipe == y.recipe && x.a == y.a && x.b == y.b &&
         x.scale == y.scale && x.block == y.block && x.k_multiple == y.k_multiple &&
         x.linear_scales == y.linear_scales && x.instruction == y.instruction &&
         x.promotion_interval == y.promotion_interval && x.tile_m == y.tile_m && x.tile_n == y.tile_n &&
         x.schedule == y.schedule;
}

// GemmKernel is a plain struct, but only the catalogue's rows have kernels behind them: the
// launchers dispatch on (arch, recipe, a, b) and size everything from block, k_multiple and the
// tile, so a caller's struct with other fields would divide by zero or launch a kernel whose
// operands have other sizes than the ones checked.
void check_catalogue(const GemmKernel& k) {
  // A reference into the catalogue (every kernel the library hands out) is found by address; only a
  // copy is compared field by field.
  for (const GemmKernel& c : gemm_kernels())
    if (&c == &k || same_kernel(c, k)) return;
  throw std::invalid_argument("GEMM '" + k.name +
                              "': not a kernel of blockscale::gpu::gemm_kernels() with the fields listed there "
                              "(take it from gemm_kernels(), find_gemm_kernel or select_gemm_kernel)");
}

// The kernels count rows, columns and tiles in int (grid arithmetic such as (M + 127) / 128).
constexpr int kMaxDimension = 1 << 30;

// Everything validate_gemm checks but the device: run before any CUDA call, so that bad arguments
// are named as such whatever GPU is present.
void validate_arguments(const GemmKernel& k, const GemmArgs& a) {
  check_catalogue(k);
  if (a.m < 1 || a.n < 1 || a.k < 1) bad(k, "M, N and K must be positive");
  if (a.m > kMaxDimension || a.n > kMaxDimension || a.k > kMaxDimension) {
    bad(k, "M, N and K must be at most 2^30 (the kernels index rows, columns and tiles in int)");
  }
  if (a.k % k.k_multiple != 0) {
    bad(k, "K = " + std::to_string(a.k) + " must be a multiple of " + std::to_string(k.k_multiple) +
               " (one pipeline stage: 4 scale blocks of " + std::to_string(k.block) + ")");
  }
  if (a.scale_layout != ScaleLayout::tiled_128x4 && a.scale_layout != ScaleLayout::linear) {
    bad(k, "scale_layout " + std::to_string(int(a.scale_layout)) + " is not a ScaleLayout (tiled_128x4 or linear)");
  }
  if (a.output != GemmOutput::f32 && a.output != GemmOutput::bf16) {
    bad(k, "output " + std::to_string(int(a.output)) + " is not a GemmOutput (f32 or bf16)");
  }
  if (a.scale_layout == ScaleLayout::linear && !k.linear_scales) {
    bad(k, "scales must be in the 128x4 tiled layout (tcgen05.cp copies its atoms as they are)");
  }
  const long long elems = static_cast<long long>(a.m) * a.n;
  if (elems > (1ll << 40)) bad(k, "M x N is too large");
}

void check_size_arguments(const GemmKernel& k, int rows, int kdim) {
  check_catalogue(k);
  if (rows < 0 || kdim < 0) {
    bad(k, "rows = " + std::to_string(rows) + " and K = " + std::to_string(kdim) + " must not be negative");
  }
}

}  // namespace

const std::vector<GemmKernel>& gemm_kernels() {
  static const std::vector<GemmKernel> all = build();
  return all;
}

const GemmKernel& find_gemm_kernel(std::string_view name) {
  for (const GemmKernel& k : gemm_kernels())
    if (k.name == name) return k;
  throw std::invalid_argument("no GEMM kernel named '" + std::string(name) +
                              "' (blockscale::gpu::gemm_kernels() lists them)");
}

const GemmKernel& select_gemm_kernel(GemmRecipe recipe, Format a, Format b, int device) {
  std::string reasons;
  for (const GemmKernel& k : gemm_kernels()) {
    if (k.recipe != recipe || k.a != a || k.b != b) continue;
    const std::string why = why_unavailable(k.name, k.arch, device);
    if (why.empty()) return k;
    reasons += (reasons.empty() ? "" : "; ") + why;
  }
  if (reasons.empty()) {
    throw std::invalid_argument("no GEMM kernel for recipe " + to_string(recipe) + " with " + sname(a) + " x " +
                                sname(b) + " operands");
  }
  throw Unavailable(reasons);
}

std::size_t gemm_element_bytes(const GemmKernel& k, int rows, int kdim) {
  check_size_arguments(k, rows, kdim);
  const std::size_t n = std::size_t(rows) * std::size_t(kdim);
  return k.recipe == GemmRecipe::mxfp8 ? n : n / 2;
}

std::size_t gemm_scale_bytes(const GemmKernel& k, ScaleLayout layout, int rows, int kdim) {
  check_size_arguments(k, rows, kdim);
  if (layout != ScaleLayout::tiled_128x4 && layout != ScaleLayout::linear) {
    bad(k, "layout " + std::to_string(int(layout)) + " is not a ScaleLayout (tiled_128x4 or linear)");
  }
  const std::size_t blocks = std::size_t(kdim) / std::size_t(k.block);
  if (layout == ScaleLayout::linear) return std::size_t(rows) * blocks;
  return 512 * ((std::size_t(rows) + 127) / 128) * ((blocks + 3) / 4);
}

void validate_gemm(const GemmKernel& k, const GemmArgs& a, int device) {
  validate_arguments(k, a);
  require(k.name, k.arch, device);
}

void launch_gemm(const GemmKernel& k, const GemmArgs& a, const GemmDeviceOperands& ops, void* stream) {
  validate_arguments(k, a);
  auto aligned = [](const void* p, std::uintptr_t bytes) { return (reinterpret_cast<std::uintptr_t>(p) % bytes) == 0; };
  if (!ops.a || !ops.b || !ops.sfa || !ops.sfb || !ops.d) bad(k, "A, B, SFA, SFB and D pointers must be non-null");
  if (!aligned(ops.a, 16) || !aligned(ops.b, 16) || !aligned(ops.sfa, 16) || !aligned(ops.sfb, 16)) {
    bad(k, "A, B, SFA and SFB must be 16-byte aligned (TMA and vector loads)");
  }
  // The sm_90a epilogue stores D two values at a time (float2, __nv_bfloat162), and C is read one
  // float at a time. A misaligned access is a sticky error that ends every later CUDA call of the
  // process, so it is refused here.
  const std::uintptr_t d_align = a.output == GemmOutput::f32 ? 8 : 4;
  if (!aligned(ops.d, d_align)) {
    bad(k, "D must be " + std::to_string(d_align) + "-byte aligned (" + to_string(a.output) + " values stored in pairs)");
  }
  if (ops.c && !aligned(ops.c, alignof(float))) bad(k, "C must be aligned to a float (4 bytes)");
  // Without a GPU, cudaGetDevice fails: refuse as every other entry point does (Unavailable with
  // the reason), not with that call's error.
  if (query_system().devices.empty()) require(k.name, k.arch, 0);
  int device = 0;
  BLOCKSCALE_CUDA(cudaGetDevice(&device));
  require(k.name, k.arch, device);
  const auto s = static_cast<cudaStream_t>(stream);
  if (k.arch == Arch::sm_90a) {
    detail::launch_gemm_sm90(k, a, ops, s);
  } else {
    detail::launch_gemm_sm100(k, a, ops, s);
  }
}

std::vector<std::uint32_t> run_gemm(const GemmKernel& k, const GemmArgs& a, const GemmHostOperands& ops, int device) {
  validate_arguments(k, a);
  auto need = [&](const char* what, std::size_t have, std::size_t want) {
    if (have != want) {
      bad(k, std::string(what) + " has " + std::to_string(have) + " bytes; M=" + std::to_string(a.m) +
                 " N=" + std::to_string(a.n) + " K=" + std::to_string(a.k) + " (" + to_string(a.scale_layout) +
                 " scales) needs " + std::to_string(want));
    }
  };
  need("A", ops.a.size(), gemm_element_bytes(k, a.m, a.k));
  need("B", ops.b.size(), gemm_element_bytes(k, a.n, a.k));
  need("SFA", ops.sfa.size(), gemm_scale_bytes(k, a.scale_layout, a.m, a.k));
  need("SFB", ops.sfb.size(), gemm_scale_bytes(k, a.scale_layout, a.n, a.k));
  if (!ops.c.empty()) need("C", ops.c.size() * sizeof(float), std::size_t(a.m) * a.n * sizeof(float));
  require(k.name, k.arch, device);

  detail::DeviceScope scope(device);
  detail::DeviceBuffer da(ops.a.size()), db(ops.b.size()), dsa(ops.sfa.size()), dsb(ops.sfb.size());
  detail::DeviceBuffer dc(ops.c.size() * sizeof(float));
  const std::size_t out_bytes = std::size_t(a.m) * a.n * (a.output == GemmOutput::f32 ? 4 : 2);
  detail::DeviceBuffer dd(out_bytes);
  da.upload(ops.a.data(), ops.a.size());
  db.upload(ops.b.data(), ops.b.size());
  dsa.upload(ops.sfa.data(), ops.sfa.size());
  dsb.upload(ops.sfb.data(), ops.sfb.size());
  if (!ops.c.empty()) dc.upload(ops.c.data(), dc.bytes());
  BLOCKSCALE_CUDA(cudaMemset(dd.get(), 0xFF, out_bytes));  // poison: every output must be written

  GemmDeviceOperands d;
  d.a = da.get(), d.b = db.get(), d.sfa = dsa.get(), d.sfb = dsb.get();
  d.c = ops.c.empty() ? nullptr : dc.as<float>();
  d.d = dd.get();
  launch_gemm(k, a, d, nullptr);
  BLOCKSCALE_CUDA(cudaDeviceSynchronize());

  std::vector<std::uint8_t> raw(out_bytes);
  dd.download(raw.data(), out_bytes);
  const std::size_t cb = a.output == GemmOutput::f32 ? 4 : 2;
  std::vector<std::uint32_t> out(std::size_t(a.m) * a.n, 0);
  for (std::size_t i = 0; i < out.size(); ++i) std::memcpy(&out[i], &raw[i * cb], cb);
  return out;
}

}  // namespace blockscale::gpu
