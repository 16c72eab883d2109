// SPDX-License-Identifier: Apache-2.0
// The sm_90a block-scaled GEMM kernels on the GPU: exact small-integer cases, then >= 10^6
// outputs per kernel (realistic and random data, scale products over the whole normal range and
// beyond, both scale layouts, with and without C, f32 and bf16 output, ragged edges) compared bit
// for bit with the emulator's Hopper-promotion schedule.
#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "blockscale/formats.h"
#include "blockscale/gpu/gemm.h"
#include "gpu_cases.h"
#include "hopper.h"

namespace {

using namespace blockscale;
using namespace blockscale::gpu;
using namespace blockscale::gputest;

std::vector<std::string> hopper_gemm_names() {
  std::vector<std::string> v;
  for (const GemmKernel& k : gemm_kernels())
    if (k.arch == Arch::sm_90a) v.push_back(k.name);
  return v;
}

class HopperGemm : public ::testing::TestWithParam<std::string> {};

TEST_P(HopperGemm, SmallIntegersGiveTheExactProduct) {
  BLOCKSCALE_REQUIRE_HOPPER();
  const GemmKernel& k = find_gemm_kernel(GetParam());
  const int m = 256, n = 384, kk = 4 * k.k_multiple;
  const GemmCase gc = make_gemm_case(k, m, n, kk, gpu::ScaleLayout::tiled_128x4, GemmOutput::f32, true, 11,
                                     Data::small_integers);
  const std::vector<std::uint32_t> d = run_gemm(k, gc.args, gc.ops);
  std::vector<std::uint32_t> want(d.size());
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double s = gc.ops.c[std::size_t(i) * n + j];
      for (int x = 0; x < kk; ++x) {
        s += to_double(k.a, gc.a_codes[std::size_t(i) * kk + x]) * to_double(k.b, gc.b_codes[std::size_t(j) * kk + x]);
      }
      const float f = static_cast<float>(s);
      std::memcpy(&want[std::size_t(i) * n + j], &f, 4);
    }
  const Agreement a = compare_codes(d, want, n);
  EXPECT_EQ(a.mismatches, 0u) << k.name << ": " << a.mismatches << " of " << a.compared
                              << " outputs differ from the exact product (tiling, swizzle or scale layout):\n"
                              << a.first_mismatches;
}

struct Shape {
  int m, n, k_stages;
  gpu::ScaleLayout layout;
  GemmOutput out;
  bool with_c;
  Data data;
};

TEST_P(HopperGemm, AgreesWithTheEmulatorBitForBit) {
  BLOCKSCALE_REQUIRE_HOPPER();
  const GemmKernel& k = find_gemm_kernel(GetParam());
  const Shape shapes[] = {
      {1024, 1024, 4, gpu::ScaleLayout::tiled_128x4, GemmOutput::f32, true, Data::realistic},
      {512, 384, 3, gpu::ScaleLayout::linear, GemmOutput::bf16, false, Data::finite_bits},
      {200, 136, 2, gpu::ScaleLayout::tiled_128x4, GemmOutput::f32, true, Data::random_bits},  // ragged tiles
      {130, 258, 1, gpu::ScaleLayout::linear, GemmOutput::f32, true, Data::realistic},
      // Scale products over the whole normal range and, rarely, outside it.
      {512, 512, 8, gpu::ScaleLayout::tiled_128x4, GemmOutput::f32, true, Data::scale_range},
  };
  std::size_t total = 0;
  int seed = 100;
  for (const Shape& s : shapes) {
    const int kk = s.k_stages * k.k_multiple;
    const GemmCase gc = make_gemm_case(k, s.m, s.n, kk, s.layout, s.out, s.with_c, ++seed, s.data);
    const std::vector<std::uint32_t> d = run_gemm(k, gc.args, gc.ops);
    const std::vector<std::uint32_t> model = emulate_gemm(k, gc);
    const Agreement a = compare_codes(d, model, s.n);
    const std::string what = std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(kk) + " " +
                             to_string(s.layout) + " " + to_string(s.out) + (s.with_c ? " +C " : " ") +
                             to_string(s.data);
    report("gemm", k.name, what, a);
    total += a.compared;
    EXPECT_EQ(a.mismatches, 0u) << k.name << " " << what << ": " << a.mismatches << " of " << a.compared
                                << " outputs differ from the emulator:\n"
                                << a.first_mismatches;
  }
  EXPECT_GE(total, 1000000u);
}

TEST(HopperGemmSelection, PicksTheSm90aKernelAndRefusesTheSm100aOne) {
  BLOCKSCALE_REQUIRE_HOPPER();
  EXPECT_EQ(select_gemm_kernel(GemmRecipe::nvfp4, Format::float4_e2m1fn, Format::float4_e2m1fn).arch, Arch::sm_90a);
  const GemmKernel& b200 = find_gemm_kernel("sm_100a gemm mxfp8 e4m3 e4m3 ue8m0 block32 (tcgen05 chain)");
  GemmArgs a;
  a.m = a.n = 256;
  a.k = 256;
  EXPECT_THROW(validate_gemm(b200, a), Unavailable);
}

std::string param_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string s;
  for (char c : info.param) s += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return s;
}

INSTANTIATE_TEST_SUITE_P(Sm90a, HopperGemm, ::testing::ValuesIn(hopper_gemm_names()), param_name);

}  // namespace
