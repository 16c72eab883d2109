// SPDX-License-Identifier: Apache-2.0
// The GPU device: blockscale::gpu's probe kernels and block-scaled GEMM kernels on device 0.
// Compiled only in builds with CUDA (src/harness/CMakeLists.txt).
#include <cstring>
#include <stdexcept>

#include "blockscale/gpu/device.h"
#include "blockscale/gpu/gemm.h"
#include "blockscale/gpu/probe.h"
#include "blockscale/harness/device.h"

namespace blockscale::harness {

namespace {

GemmRecipe recipe_of(gpu::GemmRecipe r) {
  switch (r) {
    case gpu::GemmRecipe::mxfp8: return GemmRecipe::mxfp8;
    case gpu::GemmRecipe::mxfp4: return GemmRecipe::mxfp4;
    case gpu::GemmRecipe::nvfp4: return GemmRecipe::nvfp4;
  }
  throw std::invalid_argument("unknown GEMM recipe");
}

// The 128x4 tiled scale layout (layouts.md L1, cuBLAS VEC32/VEC16, tcgen05.cp source): 512-byte
// atoms ordered (row tile, K-block group), byte (r % 32) * 16 + (r / 32 % 4) * 4 + c % 4 inside.
std::vector<std::uint8_t> tile_scales(const std::vector<std::uint8_t>& linear, int rows, int blocks, std::uint8_t pad) {
  const int groups = (blocks + 3) / 4;
  std::vector<std::uint8_t> t(512u * std::size_t((rows + 127) / 128) * std::size_t(groups), pad);
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < blocks; ++c) {
      const std::size_t at = 512u * (std::size_t(r / 128) * groups + std::size_t(c / 4)) + 16u * std::size_t(r % 32) +
                             4u * std::size_t(r / 32 % 4) + std::size_t(c % 4);
      t[at] = linear[std::size_t(r) * blocks + c];
    }
  return t;
}

class GpuDevice final : public Device {
 public:
  DeviceDescription describe() const override {
    const gpu::SystemInfo s = gpu::query_system();
    DeviceDescription d;
    d.kind = "gpu";
    d.driver = s.driver_version;
    d.cuda_driver = gpu::SystemInfo::version_string(s.cuda_driver_api_version);
    d.cuda_runtime = gpu::SystemInfo::version_string(s.cuda_runtime_version);
    if (!s.devices.empty()) {
      const gpu::DeviceInfo& g = s.devices.front();
      d.name = g.name;
      d.compute_capability = g.compute_capability_string();
      d.multiprocessors = g.multiprocessors;
    }
    return d;
  }

  std::vector<Target> targets() const override {
    std::vector<Target> v;
    for (const gpu::ProbeKernel& p : gpu::probe_kernels()) {
      Target t;
      t.kind = TargetKind::instruction;
      try {
        t.instruction = instruction_target(p.name);
      } catch (const std::invalid_argument& e) {
        t.instruction.name = p.name;
        t.skip_reason = std::string("no emulator model: ") + e.what();
        v.push_back(std::move(t));
        continue;
      }
      t.instruction.name = p.name;  // the catalogue's spelling (run() looks the probe up by it)
      t.instruction.note = p.note;
      t.skip_reason = gpu::why_unavailable(p.name, p.arch);
      v.push_back(std::move(t));
    }
    for (const gpu::GemmKernel& k : gpu::gemm_kernels()) {
      Target t;
      t.kind = TargetKind::gemm;
      GemmTarget& g = t.gemm;
      g.name = k.name;
      g.recipe = recipe_of(k.recipe);
      g.a = k.a, g.b = k.b, g.scale = k.scale;
      g.block = k.block;
      g.k_multiple = k.k_multiple;
      g.linear_scales = k.linear_scales;
      g.schedule = k.schedule;
      if (k.arch == gpu::Arch::sm_90a) {
        g.schedule_kind = GemmSchedule::hopper_promotion;
        g.promotion_interval = k.promotion_interval;
      } else {
        g.schedule_kind = GemmSchedule::tcgen05_chain;
        g.promotion_interval = 0;
      }
      t.skip_reason = gpu::why_unavailable(k.name, k.arch);
      v.push_back(std::move(t));
    }
    return v;
  }

  std::vector<std::uint32_t> run(const InstructionTarget& t, const TileBatch& batch) override {
    validate_batch(t, batch);
    gpu::ProbeInputs in;
    in.tiles = batch.tiles;
    in.a = batch.a;
    in.b = batch.b;
    in.c = batch.c;
    in.sfa = batch.sfa;
    in.sfb = batch.sfb;
    in.a_index = batch.a_index;
    return gpu::run_probe(gpu::find_probe(t.name), in);
  }

  std::vector<std::uint32_t> run(const GemmTarget& t, const GemmProblem& p) override {
    validate_problem(t, p);  // before the scales are tiled from p's vectors
    const gpu::GemmKernel& k = gpu::find_gemm_kernel(t.name);
    gpu::GemmArgs args;
    args.m = p.m, args.n = p.n, args.k = p.k;
    args.scale_layout = p.tiled_scales ? gpu::ScaleLayout::tiled_128x4 : gpu::ScaleLayout::linear;
    args.output = p.bf16_output ? gpu::GemmOutput::bf16 : gpu::GemmOutput::f32;
    gpu::GemmHostOperands ops;
    // fp4: two codes per byte, element 2j in the low nibble (layouts.md P1).
    auto pack = [&](const std::vector<std::uint8_t>& codes) {
      if (t.recipe == GemmRecipe::mxfp8) return codes;
      std::vector<std::uint8_t> packed(codes.size() / 2);
      for (std::size_t i = 0; i < packed.size(); ++i) {
        packed[i] = static_cast<std::uint8_t>((codes[2 * i] & 0xF) | ((codes[2 * i + 1] & 0xF) << 4));
      }
      return packed;
    };
    ops.a = pack(p.a);
    ops.b = pack(p.b);
    const int blocks = p.k / t.block;
    const std::uint8_t one = t.scale == Format::float8_e8m0fnu ? 127 : 0x38;
    ops.sfa = p.tiled_scales ? tile_scales(p.sfa, p.m, blocks, one) : p.sfa;
    ops.sfb = p.tiled_scales ? tile_scales(p.sfb, p.n, blocks, one) : p.sfb;
    if (!p.c.empty()) {
      ops.c.resize(p.c.size());
      std::memcpy(ops.c.data(), p.c.data(), p.c.size() * 4);
    }
    return gpu::run_gemm(k, args, ops);
  }
};

}  // namespace

bool built_with_gpu() { return true; }

std::unique_ptr<Device> make_gpu_device(std::string& why_not) {
  const gpu::SystemInfo s = gpu::query_system();
  if (s.devices.empty()) {
    why_not = "no CUDA GPU is present (" + s.reason + ")";
    return nullptr;
  }
  return std::make_unique<GpuDevice>();
}

}  // namespace blockscale::harness
