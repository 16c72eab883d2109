// SPDX-License-Identifier: Apache-2.0
// Every sm_90a probe on the GPU (sparse forms included): exact small-integer tiles (a check of
// operand, fragment and metadata layouts that needs no model), then >= 2^20 outputs of random bit patterns, random finite codes
// and realistic data compared bit for bit with the emulator's model of the instruction.
#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <algorithm>
#include <bit>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "blockscale/formats.h"
#include "blockscale/gpu/probe.h"
#include "blockscale/emulator.h"
#include "blockscale/harness/cases.h"
#include "blockscale/harness/compare.h"
#include "blockscale/harness/target.h"
#include "gpu_cases.h"
#include "hopper.h"

namespace {

using namespace blockscale;
using namespace blockscale::gpu;
using namespace blockscale::gputest;

std::vector<std::string> hopper_probe_names() {
  std::vector<std::string> v;
  for (const ProbeKernel& p : probe_kernels())
    if (p.arch == Arch::sm_90a && !p.f64) v.push_back(p.name);
  return v;
}

std::vector<std::string> f64_probe_names() {
  std::vector<std::string> v;
  for (const ProbeKernel& p : probe_kernels())
    if (p.f64) v.push_back(p.name);
  return v;
}

std::vector<std::string> wgmma_probe_names() {
  std::vector<std::string> v;
  for (const ProbeKernel& p : probe_kernels())
    if (p.family == ProbeFamily::wgmma) v.push_back(p.name);
  return v;
}

// The sm_90a probes whose products can all lie below an fp32 accumulator's zero floor (bf16 and
// tf32 operands, f32 D).
std::vector<std::string> floor_probe_names() {
  std::vector<std::string> v;
  for (const ProbeKernel& p : probe_kernels())
    if (p.arch == Arch::sm_90a && (p.a == Format::bfloat16 || p.a == Format::tfloat32)) v.push_back(p.name);
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
class HopperWgmma : public ::testing::TestWithParam<std::string> {};
class HopperFloor : public ::testing::TestWithParam<std::string> {};

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
        // Sparse probes: stored value s of the row multiplies B row (s / (group / 2)) * group +
        // a_index[s], which checks the metadata layout without a model.
        const int stored = static_cast<int>(probe_stored_k(p));
        for (int kk = 0; kk < stored; ++kk) {
          const std::size_t at = (t * p.m + i) * stored + kk;
          const int row = p.sparse ? kk / (p.sparse_group / 2) * p.sparse_group + in.a_index[at] : kk;
          s += word_value(p.a, in.a[at]) * word_value(p.b, in.b[(t * p.n + j) * p.k + row]);
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

// wgmma with scale-d = 0 (ProbeInputs::accumulate = false), as kernels issue the first MMA of a
// tile: numerics.md e.7 presumes the accumulator then enters as a +0 zero term (taking the row's
// e_zero floor), which is what every model of a chain's first instruction assumes. The GPU gets
// random C values in the accumulator registers (the tiny set's C is +0 in three tiles of four); the
// model gets C = +0. The conform data set tiny (bf16 and tf32 products of 2^-170 .. 2^-139, all
// below the floor) tells that apart from "no C term" (no floor under e_max), which the test checks
// by running the model with e_zero = -1000 too.
TEST_P(HopperWgmma, ScaleDZeroIsAZeroCTerm) {
  BLOCKSCALE_REQUIRE_HOPPER();
  const ProbeKernel& p = find_probe(GetParam());
  const std::size_t tiles = ((std::size_t(1) << 17) + probe_c_size(p) - 1) / probe_c_size(p);
  const bool wide = p.a == Format::bfloat16 || p.a == Format::tfloat32;
  // Seeds: 3000 plus the Data value; the tiny set is the conform data set (harness/cases.h).
  const std::pair<std::string, ProbeInputs> sets[] = {
      {"finite_bits", make_probe_inputs(p, tiles, 3002, Data::finite_bits)},
      {"realistic", make_probe_inputs(p, tiles, 3003, Data::realistic)},
      {"tiny", probe_inputs(harness::make_tiles(harness::instruction_target(p.name), harness::DataKind::tiny, 3000, 0, tiles))}};
  for (auto [data, in] : sets) {
    const bool tiny = data == "tiny";
    in.accumulate = false;
    const std::vector<std::uint32_t> gpu_d = run_probe(p, in);
    ProbeInputs zero_c = in;
    std::fill(zero_c.c.begin(), zero_c.c.end(), 0u);
    const std::vector<std::uint32_t> model = emulate_probe(p, zero_c);
    const Agreement a = compare_codes(gpu_d, model, p.n);
    report("probe scale-d=0", p.name, data, a);
    EXPECT_EQ(a.mismatches, 0u) << p.name << ", " << data << ", scale-d = 0: " << a.mismatches << " of "
                                << a.compared << " outputs differ from the model with C = +0:\n"
                                << a.first_mismatches;
    if (tiny && wide) {
      emulator::FdpaParams no_floor = emulator::parse_instruction(p.name).params();
      no_floor.e_zero = -1000;
      const Agreement power = compare_codes(emulate_probe(p, zero_c, no_floor), model, p.n);
      std::printf("[ scale-d=0 ] %s: %zu of %zu tiny-product outputs differ between a +0 C term and no C term\n",
                  p.name.c_str(), power.mismatches, power.compared);
      EXPECT_GT(power.mismatches, 0u) << p.name << ": the tiny products do not tell a +0 C term from no C term";
    }
  }
}

// The zero floor (numerics.md b.3 step 2, e.1): with C = +0 and products all below 2^-133
// (the conform data set tiny), e_max is the row's e_zero, which sets the truncation grid. Discovery could only
// bound it for fp32 outputs; here the bf16 and tf32 probes (fp32 D) must match the row with its
// e_zero and must not match it with e_zero moved by 1 or 2 either way, which pins e_zero.
TEST_P(HopperFloor, TheZeroFloorIsTheRowsEZero) {
  BLOCKSCALE_REQUIRE_HOPPER();
  const ProbeKernel& p = find_probe(GetParam());
  const std::size_t tiles = ((std::size_t(1) << 18) + probe_c_size(p) - 1) / probe_c_size(p);
  ProbeInputs in =
      probe_inputs(harness::make_tiles(harness::instruction_target(p.name), harness::DataKind::tiny, 4000, 0, tiles));
  std::fill(in.c.begin(), in.c.end(), 0u);
  const std::vector<std::uint32_t> gpu_d = run_probe(p, in);
  const Agreement a = compare_codes(gpu_d, emulate_probe(p, in), p.n);
  report("probe zero floor", p.name, "tiny", a);
  EXPECT_EQ(a.mismatches, 0u) << p.name << ": " << a.mismatches << " of " << a.compared
                              << " tiny-product outputs differ from the row:\n" << a.first_mismatches;
  const emulator::FdpaParams row = emulator::parse_instruction(p.name).params();
  for (int delta : {-2, -1, 1, 2}) {
    emulator::FdpaParams params = row;
    params.e_zero = row.e_zero + delta;
    const Agreement other = compare_codes(gpu_d, emulate_probe(p, in, params), p.n);
    std::printf("[ zero floor ] %s: e_zero %d disagrees with the GPU in %zu of %zu outputs\n", p.name.c_str(),
                params.e_zero, other.mismatches, other.compared);
    EXPECT_GT(other.mismatches, 0u) << p.name << ": e_zero " << params.e_zero << " fits the GPU as well as " << row.e_zero;
  }
}

// ---- f64 (DMMA): the table's fma chain in k order (numerics.md (a)).

class HopperF64 : public ::testing::TestWithParam<std::string> {};

double f64_at(const std::vector<std::uint32_t>& w, std::size_t i) { return std::bit_cast<double>(harness::f64_bits(&w[2 * i])); }
void put_f64(std::vector<std::uint32_t>& w, std::size_t i, double v) {
  harness::put_f64_bits(&w[2 * i], std::bit_cast<std::uint64_t>(v));
}

// Integer-valued operands (|a|, |b| <= 8, |C| <= 64): every partial sum in any order is exact, so
// the GPU must return the exact sum: a check of the operand and fragment layouts that needs no model.
TEST_P(HopperF64, SmallIntegerTilesGiveTheExactSum) {
  BLOCKSCALE_REQUIRE_HOPPER();
  const ProbeKernel& p = find_probe(GetParam());
  ProbeInputs in;
  in.tiles = 48;
  in.a.resize(in.tiles * probe_a_size(p));
  in.b.resize(in.tiles * probe_b_size(p));
  in.c.resize(in.tiles * probe_c_size(p));
  harness::Rng r(7);
  for (std::size_t i = 0; i < in.a.size() / 2; ++i) put_f64(in.a, i, static_cast<int>(r.below(17)) - 8);
  for (std::size_t i = 0; i < in.b.size() / 2; ++i) put_f64(in.b, i, static_cast<int>(r.below(17)) - 8);
  for (std::size_t i = 0; i < in.c.size() / 2; ++i) put_f64(in.c, i, static_cast<int>(r.below(129)) - 64);
  const std::vector<std::uint32_t> d = run_probe(p, in);
  std::vector<std::uint32_t> want(d.size());
  for (std::size_t t = 0; t < in.tiles; ++t)
    for (int i = 0; i < p.m; ++i)
      for (int j = 0; j < p.n; ++j) {
        const std::size_t at = (t * p.m + i) * p.n + j;
        double s = f64_at(in.c, at);
        for (int kk = 0; kk < p.k; ++kk) s += f64_at(in.a, (t * p.m + i) * p.k + kk) * f64_at(in.b, (t * p.n + j) * p.k + kk);
        put_f64(want, at, s);
      }
  harness::Stats st;
  harness::compare_outputs(harness::OutputFormat::f64, d, want, 0, std::size_t(p.m), std::size_t(p.n), st, 5);
  EXPECT_EQ(st.mismatches, 0u) << p.name << ": " << st.mismatches << " of " << st.outputs
                               << " outputs differ from the exact sum (operand or fragment layout)";
}

// Other orders and placements of C, as the same dot products computed in double on the host: each
// must disagree with the GPU somewhere on the probes data, or that data could not tell them from
// the table's chain.
enum class F64Order { reversed_chain, c_last, pairwise };
std::vector<std::uint32_t> f64_other_order(const ProbeKernel& p, const harness::TileBatch& b, F64Order order) {
  std::vector<std::uint32_t> d(b.c.size());
  const std::size_t K = std::size_t(p.k);
  std::vector<double> prod(K);
  for (std::size_t t = 0; t < b.tiles; ++t)
    for (int i = 0; i < p.m; ++i)
      for (int j = 0; j < p.n; ++j) {
        const std::size_t at = (t * p.m + i) * p.n + j;
        const double c = f64_at(b.c, at);
        const auto a = [&](std::size_t k) { return f64_at(b.a, (t * p.m + i) * K + k); };
        const auto bb = [&](std::size_t k) { return f64_at(b.b, (t * p.n + j) * K + k); };
        double s = c;
        if (order == F64Order::reversed_chain) {
          for (std::size_t k = K; k-- > 0;) s = std::fma(a(k), bb(k), s);
        } else if (order == F64Order::c_last) {
          s = 0.0;
          for (std::size_t k = 0; k < K; ++k) s = std::fma(a(k), bb(k), s);
          s += c;
        } else {
          for (std::size_t k = 0; k < K; ++k) prod[k] = a(k) * bb(k);
          for (std::size_t w = 1; w < K; w *= 2)
            for (std::size_t k = 0; k + w < K; k += 2 * w) prod[k] += prod[k + w];
          s = c + prod[0];
        }
        put_f64(d, at, s);
      }
  return d;
}

TEST_P(HopperF64, AgreesWithTheEmulatorBitForBit) {
  BLOCKSCALE_REQUIRE_HOPPER();
  const ProbeKernel& p = find_probe(GetParam());
  const harness::InstructionTarget t = harness::instruction_target(p.name);
  const std::size_t tiles = ((std::size_t(1) << 18) + harness::outputs_per_tile(t) - 1) / harness::outputs_per_tile(t);
  std::size_t total = 0;
  for (harness::DataKind data :
       {harness::DataKind::random, harness::DataKind::realistic, harness::DataKind::probes, harness::DataKind::tiny}) {
    const harness::TileBatch b = harness::make_tiles(t, data, 5000, 0, tiles);
    const std::vector<std::uint32_t> gpu_d = run_probe(p, probe_inputs(b));
    harness::Stats st;
    harness::compare_outputs(harness::OutputFormat::f64, gpu_d, harness::emulate_tiles(t, b), 0, std::size_t(p.m),
                             std::size_t(p.n), st, 3);
    Agreement a;
    a.compared = st.outputs;
    a.mismatches = st.mismatches;
    for (const harness::Mismatch& m : st.examples) {
      a.first_mismatches += "  tile " + std::to_string(m.case_index) + " D[" + std::to_string(m.row) + "][" +
                            std::to_string(m.col) + "]: GPU " + harness::hex_code(harness::OutputFormat::f64, m.device) +
                            ", model " + harness::hex_code(harness::OutputFormat::f64, m.model) + "\n";
    }
    report("probe", p.name, harness::to_string(data), a);
    total += a.compared;
    EXPECT_EQ(a.mismatches, 0u) << p.name << ", " << harness::to_string(data) << ": " << a.mismatches << " of "
                                << a.compared << " outputs differ from the emulator:\n"
                                << a.first_mismatches;
    if (data != harness::DataKind::probes) continue;
    for (F64Order order : {F64Order::reversed_chain, F64Order::c_last, F64Order::pairwise}) {
      harness::Stats other;
      harness::compare_outputs(harness::OutputFormat::f64, gpu_d, f64_other_order(p, b, order), 0, std::size_t(p.m),
                               std::size_t(p.n), other, 0);
      const char* what = order == F64Order::reversed_chain ? "the chain in reverse k order"
                         : order == F64Order::c_last       ? "C added after the chain"
                                                           : "a pairwise tree of rounded products, then C";
      std::printf("[ f64 order ] %s: %s disagrees with the GPU in %llu of %llu probe outputs\n", p.name.c_str(), what,
                  static_cast<unsigned long long>(other.mismatches), static_cast<unsigned long long>(other.outputs));
      EXPECT_GT(other.mismatches, 0u) << p.name << ": the probes do not tell " << what << " from the table's chain";
    }
  }
  EXPECT_GE(total, std::size_t(1) << 20);
}

std::string param_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string s;
  for (char c : info.param) s += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return s;
}

INSTANTIATE_TEST_SUITE_P(Sm90a, HopperProbe, ::testing::ValuesIn(hopper_probe_names()), param_name);
INSTANTIATE_TEST_SUITE_P(Sm90a, HopperWgmma, ::testing::ValuesIn(wgmma_probe_names()), param_name);
INSTANTIATE_TEST_SUITE_P(Sm90a, HopperFloor, ::testing::ValuesIn(floor_probe_names()), param_name);
INSTANTIATE_TEST_SUITE_P(Sm90a, HopperF64, ::testing::ValuesIn(f64_probe_names()), param_name);

}  // namespace
