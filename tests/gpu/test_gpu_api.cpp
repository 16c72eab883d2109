// SPDX-License-Identifier: Apache-2.0
// blockscale::gpu host API without running kernels: catalogues, names the emulator accepts,
// input validation, and the errors for a missing GPU or a GPU of another compute capability.
// Runs everywhere (CI has no GPU); on a GPU machine the same checks take the other branch.
#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <stdexcept>
#include <string>

#include "blockscale/emulator.h"
#include "blockscale/gpu/gemm.h"
#include "blockscale/gpu/probe.h"
#include "cuda_check.h"  // gpu/: the checked-call helper whose errors the Errors test reads

namespace {

using namespace blockscale;
using namespace blockscale::gpu;

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// `tiles` tiles of zero A, B and C codes for probe p (scales and positions left to the caller).
ProbeInputs zero_operands(const ProbeKernel& p, std::size_t tiles) {
  ProbeInputs in;
  in.tiles = tiles;
  in.a.assign(tiles * probe_a_size(p), 0);
  in.b.assign(tiles * probe_b_size(p), 0);
  in.c.assign(tiles * probe_c_size(p), 0);
  return in;
}

TEST(ProbeCatalogue, NamesAreUniqueAndEveryOneIsAnEmulatorInstruction) {
  std::set<std::string> names;
  int sm90 = 0, sm100 = 0;
  for (const ProbeKernel& p : probe_kernels()) {
    EXPECT_TRUE(names.insert(p.name).second) << "duplicate " << p.name;
    // The harness diffs each probe against emulator::parse_instruction(name): the name must be
    // the emulator's canonical spelling of exactly this shape and these types.
    const emulator::Instruction ins = emulator::parse_instruction(p.name);
    EXPECT_EQ(ins.name(), p.name);
    EXPECT_EQ(ins.m, p.m) << p.name;
    EXPECT_EQ(ins.n, p.n) << p.name;
    EXPECT_EQ(ins.k, p.k) << p.name;
    EXPECT_EQ(ins.block_scaled(), p.block_scaled) << p.name;
    EXPECT_EQ(ins.sparse, p.sparse) << p.name;
    if (p.sparse) {
      EXPECT_EQ(ins.sparse_group(), p.sparse_group) << p.name;
    }
    (p.arch == Arch::sm_90a ? sm90 : sm100)++;
  }
  // sm_90a: 24 mma.sync (fp8 at k32 and k16, f16 and bf16 at k16 and k8, tf32 at k8 and k4), 4
  // mma.sync f64 (m8n8k4, m16n8k4, m16n8k8, m16n8k16) + 12 wgmma forms x N in {8, 64, 256}; sparse:
  // 12 mma.sp (f16/bf16 -> f32 and f16 -> f16 at k32 and k16, tf32 at k16 and k8, 4 fp8 mixes at
  // k64) + 12 wgmma.sp forms x N in {8, 64, 256}.
  // sm_100a: f16, bf16, tf32 and 25 f8f6f4 mixes, 25 mxf8f6f4 mixes, mxf4, mxf4nvf4 x 3, each at
  // two N.
  EXPECT_EQ(sm90, 24 + 4 + 36 + 12 + 36);
  EXPECT_EQ(sm100, 2 * (3 + 25 + 25 + 4));
  EXPECT_EQ(&find_probe("sm_90a wgmma.mma_async m64n256k32 f32 e5m2 e4m3"), &find_probe("sm_90a wgmma.mma_async m64n256k32 f32 e5m2 e4m3"));
  EXPECT_THROW(find_probe("sm_90a wgmma.mma_async m64n12k32 f32 e5m2 e4m3"), std::invalid_argument);
}

TEST(ProbeInputs, ValidationNamesTheRuleBroken) {
  const ProbeKernel& p = find_probe("sm_90a mma.sync.aligned m16n8k32 f32 e4m3 e4m3");
  ProbeInputs in = zero_operands(p, 2);
  EXPECT_NO_THROW(validate_probe_inputs(p, in));
  in.a[17] = 0x100;  // not an e4m3 code
  try {
    validate_probe_inputs(p, in);
    ADD_FAILURE() << "accepted a 9-bit e4m3 code";
  } catch (const std::invalid_argument& e) {
    EXPECT_TRUE(contains(e.what(), "a[17]")) << e.what();
  }
  in.a[17] = 0;
  in.b.pop_back();
  try {
    validate_probe_inputs(p, in);
    ADD_FAILURE() << "accepted a short b";
  } catch (const std::invalid_argument& e) {
    EXPECT_TRUE(contains(e.what(), "b has")) << e.what();
  }
  in.b.push_back(0);
  in.accumulate = false;  // scale-d = 0 exists for wgmma only
  try {
    validate_probe_inputs(p, in);
    ADD_FAILURE() << "accepted scale-d = 0 for mma.sync";
  } catch (const std::invalid_argument& e) {
    EXPECT_TRUE(contains(e.what(), "scale-d = 0")) << e.what();
  }
  const ProbeKernel& wg = find_probe("sm_90a wgmma.mma_async m64n8k16 f32 bf16 bf16");
  ProbeInputs w = zero_operands(wg, 1);
  w.accumulate = false;
  EXPECT_NO_THROW(validate_probe_inputs(wg, w));
  const ProbeKernel& scaled =
      find_probe("sm_100a tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.block16 m128n8k64 f32 e2m1 e2m1 ue4m3");
  ProbeInputs s = zero_operands(scaled, 1);
  EXPECT_THROW(validate_probe_inputs(scaled, s), std::invalid_argument);  // scales missing
  s.sfa.assign(probe_sfa_size(scaled), 0x38);
  s.sfb.assign(probe_sfb_size(scaled), 0x38);
  EXPECT_NO_THROW(validate_probe_inputs(scaled, s));
}

// Sparse probes take A's stored values and their positions; positions break the metadata rules
// with a message naming the tile, row and group.
TEST(ProbeInputs, SparsePositionsFollowTheMetadataRules) {
  const ProbeKernel& p = find_probe("sm_90a wgmma.mma_async.sp m64n8k64 f32 e4m3 e4m3");
  ASSERT_TRUE(p.sparse);
  EXPECT_EQ(probe_a_size(p), 64u * 32u);
  EXPECT_EQ(probe_b_size(p), 8u * 64u);
  ProbeInputs in = zero_operands(p, 2);
  const auto rejects = [&](const std::string& part) {
    try {
      validate_probe_inputs(p, in);
      ADD_FAILURE() << "accepted positions that break: " << part;
    } catch (const std::invalid_argument& e) {
      EXPECT_TRUE(contains(e.what(), part)) << e.what();
    }
  };
  rejects("a_index has 0 elements");
  for (std::size_t i = 0; i < 2 * probe_a_index_size(p); ++i) in.a_index.push_back(i % 2 == 0 ? 1 : 3);
  EXPECT_NO_THROW(validate_probe_inputs(p, in));
  in.a_index[64 * 32 + 5 * 32 + 7] = 4;  // tile 1, row 5, group 3
  rejects("tile 1, A row 5, group 3 is 4, outside a group of 4");
  in.a_index[64 * 32 + 5 * 32 + 7] = 1;  // equal to its pair's first position
  rejects("positions 1, 1 are not increasing");
  const ProbeKernel& tf = find_probe("sm_90a mma.sp::ordered_metadata.sync.aligned m16n8k8 f32 tf32 tf32");
  ProbeInputs t = zero_operands(tf, 1);
  t.a_index.assign(probe_a_index_size(tf), 1);
  EXPECT_NO_THROW(validate_probe_inputs(tf, t));
  t.a_index[3] = 2;
  try {
    validate_probe_inputs(tf, t);
    ADD_FAILURE() << "accepted a tf32 position 2";
  } catch (const std::invalid_argument& e) {
    EXPECT_TRUE(contains(e.what(), "outside a group of 2")) << e.what();
  }
}

TEST(Availability, KernelsSayWhatTheyNeedAndWhatIsPresent) {
  const SystemInfo sys = query_system();
  const ProbeKernel& b200 =
      find_probe("sm_100a tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.block32 m128n8k32 f32 e4m3 e4m3 ue8m0");
  ProbeInputs in;
  in.tiles = 1;
  in.a.assign(probe_a_size(b200), 0x38);
  in.b.assign(probe_b_size(b200), 0x38);
  in.c.assign(probe_c_size(b200), 0);
  in.sfa.assign(probe_sfa_size(b200), 127);
  in.sfb.assign(probe_sfb_size(b200), 127);
  const bool blackwell = !sys.devices.empty() && sys.devices[0].compute_capability() == 100;
  if (blackwell) GTEST_SKIP() << "device 0 is a Blackwell GPU: the sm_100a probe would run";
  try {
    run_probe(b200, in);
    ADD_FAILURE() << "an sm_100a probe ran on " << (sys.devices.empty() ? "no GPU" : sys.devices[0].name);
  } catch (const Unavailable& e) {
    const std::string w = e.what();
    EXPECT_TRUE(contains(w, "needs sm_100a (compute capability 10.0)")) << w;
    EXPECT_TRUE(contains(w, b200.name)) << w;
    if (sys.devices.empty()) {
      EXPECT_TRUE(contains(w, "no CUDA GPU is present")) << w;
    } else {
      EXPECT_TRUE(contains(w, sys.devices[0].name)) << w;
    }
  }
}

// device_info names the device it gives, or says there is none.
TEST(Availability, DeviceInfoGivesAPresentDeviceOrSaysWhy) {
  const SystemInfo sys = query_system();
  const auto refuses = [](int index, const std::string& part) {
    try {
      (void)device_info(index);
      ADD_FAILURE() << "device " << index << " was given";
    } catch (const Unavailable& e) {
      EXPECT_TRUE(contains(e.what(), part)) << e.what();
    }
  };
  if (sys.devices.empty()) {
    refuses(0, "no CUDA GPU is present");
    return;
  }
  for (std::size_t i = 0; i < sys.devices.size(); ++i) {
    const DeviceInfo d = device_info(static_cast<int>(i));
    EXPECT_EQ(d.index, static_cast<int>(i));
    EXPECT_EQ(d.name, sys.devices[i].name);
    EXPECT_EQ(d.compute_capability(), sys.devices[i].compute_capability());
  }
  const int count = static_cast<int>(sys.devices.size());
  refuses(count, "no CUDA device " + std::to_string(count) + ": " + std::to_string(count) + " present");
  refuses(-1, "no CUDA device -1");
}

// A failed CUDA call throws gpu::Error carrying the call's text, where it was made (from the
// repository's gpu/ directory on), the error's code and name, and all of them in what().
TEST(Errors, ACudaFailureNamesTheCallWhereItWasMadeAndTheError) {
  EXPECT_NO_THROW(detail::check_cuda(cudaSuccess, "cudaFree(p)", __FILE__, __LINE__));
  const int line = __LINE__ + 2;
  try {
    detail::check_cuda(cudaErrorInvalidValue, "cudaMemcpy(dst, src, n, kind)", __FILE__, line);
    ADD_FAILURE() << "no error thrown";
  } catch (const Error& e) {
    EXPECT_EQ(e.call(), "cudaMemcpy(dst, src, n, kind)");
    EXPECT_EQ(e.location(), "gpu/test_gpu_api.cpp:" + std::to_string(line));
    EXPECT_EQ(e.code(), static_cast<int>(cudaErrorInvalidValue));
    EXPECT_EQ(e.code_name(), "cudaErrorInvalidValue");
    EXPECT_EQ(std::string(e.what()), "cudaMemcpy(dst, src, n, kind) failed at gpu/test_gpu_api.cpp:" +
                                         std::to_string(line) + ": cudaErrorInvalidValue: " +
                                         cudaGetErrorString(cudaErrorInvalidValue));
  }
}

TEST(GemmCatalogue, SelectionByComputeCapability) {
  int sm90 = 0, sm100 = 0;
  for (const GemmKernel& k : gemm_kernels()) (k.arch == Arch::sm_90a ? sm90 : sm100)++;
  EXPECT_EQ(sm90, 6);  // 4 MXFP8 mixes, MXFP4, NVFP4
  EXPECT_EQ(sm100, 5);
  const SystemInfo sys = query_system();
  const int cc = sys.devices.empty() ? 0 : sys.devices[0].compute_capability();
  if (cc == 90 || cc == 100) {
    const GemmKernel& k = select_gemm_kernel(GemmRecipe::mxfp8, Format::float8_e4m3fn, Format::float8_e4m3fn);
    EXPECT_EQ(k.arch, cc == 90 ? Arch::sm_90a : Arch::sm_100a);
  } else {
    try {
      select_gemm_kernel(GemmRecipe::nvfp4, Format::float4_e2m1fn, Format::float4_e2m1fn);
      ADD_FAILURE() << "a GEMM kernel was selected without a Hopper or Blackwell GPU";
    } catch (const Unavailable& e) {
      EXPECT_TRUE(contains(e.what(), "needs sm_90a")) << e.what();
      EXPECT_TRUE(contains(e.what(), "needs sm_100a")) << e.what();
    }
  }
  EXPECT_THROW(select_gemm_kernel(GemmRecipe::mxfp8, Format::float4_e2m1fn, Format::float8_e4m3fn),
               std::invalid_argument);
}

TEST(GemmArgs, ValidationNamesTheRuleBroken) {
  const GemmKernel& k90 = find_gemm_kernel("sm_90a gemm mxfp8 e4m3 e4m3 ue8m0 block32 (wgmma promotion P=1)");
  GemmArgs a;
  a.m = 256, a.n = 256, a.k = 96;
  try {
    validate_gemm(k90, a);
    ADD_FAILURE() << "accepted K = 96";
  } catch (const std::invalid_argument& e) {
    EXPECT_TRUE(contains(e.what(), "multiple of 128")) << e.what();
  }
  const GemmKernel& k100 = find_gemm_kernel("sm_100a gemm nvfp4 e2m1 e2m1 ue4m3 block16 (tcgen05 chain)");
  a.k = 512;
  a.scale_layout = gpu::ScaleLayout::linear;
  try {
    validate_gemm(k100, a);
    ADD_FAILURE() << "accepted linear scales for tcgen05";
  } catch (const std::invalid_argument& e) {
    EXPECT_TRUE(contains(e.what(), "128x4")) << e.what();
  }
  // layouts.md L1: M = 500 rows, K_s = 20 blocks pad to 512 x 20 bytes.
  EXPECT_EQ(gemm_scale_bytes(k90, gpu::ScaleLayout::tiled_128x4, 500, 640), 512u * 4 * 5);
  EXPECT_EQ(gemm_scale_bytes(k90, gpu::ScaleLayout::linear, 500, 640), 500u * 20);
  EXPECT_EQ(gemm_element_bytes(k100, 256, 512), 256u * 256);
}

// The message of the std::invalid_argument that f throws ("" when it throws none or another).
template <class F>
std::string invalid_argument_message(F f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  } catch (...) {
  }
  return {};
}

// Arguments are refused as arguments before any CUDA call, whatever GPU is present or absent (the
// audit of 2026-11-30: launch_gemm without a GPU threw cudaGetDevice's error and checked nothing,
// a changed k_multiple divided by zero, an unknown output enum sized D at 2 bytes per value for a
// kernel that wrote 4, and run_gemm named the missing GPU before the buffer sizes).
TEST(GemmArgs, ArgumentsAreCheckedBeforeTheDevice) {
  const GemmKernel& k90 = find_gemm_kernel("sm_90a gemm mxfp8 e4m3 e4m3 ue8m0 block32 (wgmma promotion P=1)");
  GemmArgs a;
  a.m = a.n = 128, a.k = 128;
  alignas(16) static std::uint8_t arena[64];
  GemmDeviceOperands ops;
  ops.a = ops.b = ops.sfa = ops.sfb = arena;
  ops.d = arena;

  GemmArgs bad_m = a;
  bad_m.m = -5;
  EXPECT_TRUE(contains(invalid_argument_message([&] { launch_gemm(k90, bad_m, ops); }), "M, N and K must be positive"));
  GemmArgs huge = a;
  huge.m = (1 << 30) + 128;
  huge.n = 1;
  EXPECT_TRUE(contains(invalid_argument_message([&] { validate_gemm(k90, huge); }), "at most 2^30"));
  GemmArgs bad_output = a;
  bad_output.output = static_cast<GemmOutput>(2);
  EXPECT_TRUE(contains(invalid_argument_message([&] { validate_gemm(k90, bad_output); }), "is not a GemmOutput"));
  GemmArgs bad_layout = a;
  bad_layout.scale_layout = static_cast<gpu::ScaleLayout>(7);
  EXPECT_TRUE(contains(invalid_argument_message([&] { validate_gemm(k90, bad_layout); }), "is not a ScaleLayout"));
  EXPECT_TRUE(contains(invalid_argument_message([&] { gemm_scale_bytes(k90, static_cast<gpu::ScaleLayout>(7), 128, 128); }),
                       "is not a ScaleLayout"));
  EXPECT_TRUE(contains(invalid_argument_message([&] { gemm_element_bytes(k90, -1, 128); }), "must not be negative"));

  GemmKernel changed = k90;
  changed.k_multiple = 0;
  EXPECT_TRUE(contains(invalid_argument_message([&] { validate_gemm(changed, a); }), "not a kernel of"));
  EXPECT_TRUE(contains(invalid_argument_message([&] { gemm_scale_bytes(changed, gpu::ScaleLayout::linear, 1, 128); }),
                       "not a kernel of"));

  GemmDeviceOperands no_d = ops;
  no_d.d = nullptr;
  EXPECT_TRUE(contains(invalid_argument_message([&] { launch_gemm(k90, a, no_d); }), "must be non-null"));
  GemmDeviceOperands odd_d = ops;
  odd_d.d = arena + 4;  // a sub-matrix view one float in: the paired f32 stores would fault
  EXPECT_TRUE(contains(invalid_argument_message([&] { launch_gemm(k90, a, odd_d); }), "D must be 8-byte aligned"));
  GemmArgs bf16 = a;
  bf16.output = GemmOutput::bf16;
  odd_d.d = arena + 2;
  EXPECT_TRUE(contains(invalid_argument_message([&] { launch_gemm(k90, bf16, odd_d); }), "D must be 4-byte aligned"));
  GemmDeviceOperands odd_a = ops;
  odd_a.a = arena + 8;
  EXPECT_TRUE(contains(invalid_argument_message([&] { launch_gemm(k90, a, odd_a); }), "16-byte aligned"));
  GemmDeviceOperands odd_c = ops;
  odd_c.c = reinterpret_cast<const float*>(arena + 2);
  EXPECT_TRUE(contains(invalid_argument_message([&] { launch_gemm(k90, a, odd_c); }), "C must be aligned to a float"));

  GemmHostOperands host;  // every buffer empty
  EXPECT_TRUE(contains(invalid_argument_message([&] { run_gemm(k90, a, host); }), "A has 0 bytes"));

  if (query_system().devices.empty()) {
    // Good arguments without a GPU: Unavailable, as from every other entry point.
    try {
      launch_gemm(k90, a, ops);
      ADD_FAILURE() << "launch_gemm returned without a GPU";
    } catch (const Unavailable& e) {
      EXPECT_TRUE(contains(e.what(), "no CUDA GPU is present")) << e.what();
    }
  }
}

TEST(ProbeInputs, CatalogueRowsAndSizesThatDoNotWrap) {
  const ProbeKernel& p = find_probe("sm_90a mma.sync.aligned m16n8k32 f32 e4m3 e4m3");
  ProbeInputs wraps;
  wraps.tiles = std::size_t{1} << 58;  // times 512, 256 and 128 words: 0 modulo 2^64
  EXPECT_TRUE(contains(invalid_argument_message([&] { validate_probe_inputs(p, wraps); }), "overflow"));
  ProbeKernel changed = p;
  changed.k = 64;  // 64 bytes per row: past the kernels' 32-byte row images
  EXPECT_TRUE(contains(invalid_argument_message([&] { validate_probe_inputs(changed, zero_operands(changed, 1)); }),
                       "not a probe of"));
  ProbeKernel unscaled_block = find_probe(
      "sm_100a tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.block32 m128n8k32 f32 e4m3 e4m3 ue8m0");
  unscaled_block.scale_block = 0;
  EXPECT_EQ(probe_sfa_size(unscaled_block), 0u);  // no division by zero
  EXPECT_TRUE(contains(invalid_argument_message([&] { validate_probe_inputs(unscaled_block, zero_operands(unscaled_block, 1)); }),
                       "not a probe of"));
}

}  // namespace
