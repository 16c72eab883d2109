// SPDX-License-Identifier: Apache-2.0
// The fp4 nibble order (layouts.md P1) against CUDA 13.0's host __nv_cvt_float2_to_fp4x2, an
// independent oracle: it converts x.x into the low nibble and x.y into the high one (the PTX
// cvt.rn.satfinite.e2m1x2.f32 it mirrors puts its first source operand, x.y, in the upper half).
#include <cuda_fp4.h>
#include <gtest/gtest.h>

#include <vector>

#include "blockscale/formats.h"
#include "blockscale/layout.h"

namespace blockscale {
namespace {

TEST(PackingCudaOracle, Fp4DenseMatchesCvtFloat2ToFp4x2ForEveryPair) {
  std::vector<std::uint8_t> all(16);
  for (int i = 0; i < 16; ++i) all[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(i);
  std::vector<float> value(16);
  decode(Format::float4_e2m1fn, all, value);
  for (int lo = 0; lo < 16; ++lo)
    for (int hi = 0; hi < 16; ++hi) {
      const std::vector<std::uint8_t> codes{static_cast<std::uint8_t>(lo), static_cast<std::uint8_t>(hi)};
      std::vector<std::uint8_t> byte(1);
      pack(Packing::fp4_dense, Format::float4_e2m1fn, codes, byte);
      float2 xy;
      xy.x = value[static_cast<std::size_t>(lo)];
      xy.y = value[static_cast<std::size_t>(hi)];
      const __nv_fp4x2_storage_t cuda = __nv_cvt_float2_to_fp4x2(xy, __NV_E2M1, cudaRoundNearest);
      ASSERT_EQ(byte[0], cuda) << "element 0 code " << lo << ", element 1 code " << hi;
    }
}

}  // namespace
}  // namespace blockscale
