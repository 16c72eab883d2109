// SPDX-License-Identifier: Apache-2.0
// Every sm_90a probe on the GPU: exact small-integer tiles (a check of operand and fragment
// layouts that needs no model), then >= 2^20 outputs of random bit patterns, random finite codes
// and realistic data compared bit for bit with the emulator's model of the instruction.
#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "blockscale/formats.h"
#include "blockscale/gpu/probe.h"
#include "gpu_cases.h"
#include "hopper.h"

namespace {

using namespace blockscale;
using namespace blockscale::gpu;
using namespace blockscale::gputest;

std::vector<std::string> hopper_probe_names() {
  std::vector<std::string> v;
  for (const ProbeKernel& p : probe_kernels())
    if (p.arch == Arch::sm_90a) v.push_back(p.name);
  return v;
}

double word_value(Format f, std::uint32_t w) {
  if (f == Format::tfloat32 || f == Format::float32) {
    float x;
    std::memcpy(&x, &w, 4);
    return x;
  }
  return to_double(f, w);
}

class HopperProbe : public ::testing::TestWithParam<std::string> {};

TEST_P(HopperProbe, SmallIntegerTilesGiveTheExactSum) {
  BLOCKSCALE_REQUIRE_HOPPER();
  const ProbeKernel& p = find_probe(GetParam());
  const std::size_t tiles = 48;
  const ProbeInputs in = make_probe_inputs(p, tiles, 7, Data::small_integers);
  const std::vector<std::uint32_t> d = run_probe(p, in);
  std::vector<std::uint32_t> want(d.size());
  for (std::size_t t = 0; t < tiles; ++t)
    for (int i = 0; i < p.m; ++i)
      for (int j = 0; j < p.n; ++j) {
        double s = word_value(p.c, in.c[(t * p.m + i) * p.n + j]);
        for (int kk = 0; kk < p.k; ++kk) {
          s += word_value(p.a, in.a[(t * p.m + i) * p.k + kk]) * word_value(p.b, in.b[(t * p.n + j) * p.k + kk]);
        }
        want[(t * p.m + i) * p.n + j] =
            p.d == Format::float16 ? convert(Format::float16, s) : convert(Format::float32, s);
      }
  const Agreement a = compare_codes(d, want, p.n);
  EXPECT_EQ(a.mismatches, 0u) << p.name << ": " << a.mismatches << " of " << a.compared
                              << " outputs differ from the exact sum (operand or fragment layout):\n"
                              << a.first_mismatches;
}

TEST_P(HopperProbe, AgreesWithTheEmulatorBitForBit) {
  BLOCKSCALE_REQUIRE_HOPPER();
  const ProbeKernel& p = find_probe(GetParam());
  const std::size_t per_kind = (std::size_t(1) << 20) / 3 + 1;
  const std::size_t tiles = (per_kind + probe_c_size(p) - 1) / probe_c_size(p);
  std::size_t total = 0;
  for (Data data : {Data::random_bits, Data::finite_bits, Data::realistic}) {
    const ProbeInputs in = make_probe_inputs(p, tiles, 1000 + static_cast<int>(data), data);
    const std::vector<std::uint32_t> gpu_d = run_probe(p, in);
    const std::vector<std::uint32_t> model = emulate_probe(p, in);
    const Agreement a = compare_codes(gpu_d, model, p.n);
    report("probe", p.name, to_string(data), a);
    total += a.compared;
    EXPECT_EQ(a.mismatches, 0u) << p.name << ", " << to_string(data) << ": " << a.mismatches << " of " << a.compared
                                << " outputs differ from the emulator:\n"
                                << a.first_mismatches;
  }
  EXPECT_GE(total, std::size_t(1) << 20);
}

std::string param_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string s;
  for (char c : info.param) s += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return s;
}

INSTANTIATE_TEST_SUITE_P(Sm90a, HopperProbe, ::testing::ValuesIn(hopper_probe_names()), param_name);

}  // namespace
