// SPDX-License-Identifier: Apache-2.0
// Throughput of whole-tensor scale-layout conversion and sub-byte packing, each beside a memcpy of
// the same bytes in the same binary (compare bytes_per_second; the ratio is what to report).
// Sizes: the scales of an 8192 x 8192 NVFP4 operand (8192 x 512 ue4m3 bytes), and 16M element codes.
#include <benchmark/benchmark.h>

#include <cstring>
#include <vector>

#include "blockscale/layout.h"

namespace blockscale {
namespace {

constexpr std::int64_t kRows = 8192, kBlocks = 512;  // 8192 x 8192 at block 16
constexpr std::size_t kCodes = std::size_t{1} << 24;

std::vector<std::uint8_t> ramp(std::size_t n, unsigned mask) {
  std::vector<std::uint8_t> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::uint8_t>((i * 37 + 11) & mask);
  return v;
}

void BM_MemcpyScales(benchmark::State& state) {
  const auto in = ramp(kRows * kBlocks, 0x7F);
  std::vector<std::uint8_t> out(in.size());
  for (auto _ : state) {
    std::memcpy(out.data(), in.data(), in.size());
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(in.size()));
}
BENCHMARK(BM_MemcpyScales);

void BM_ToLayout(benchmark::State& state, ScaleLayout layout) {
  const auto in = ramp(kRows * kBlocks, 0x7F);
  std::vector<std::uint8_t> out(static_cast<std::size_t>(storage_size(layout, kRows, kBlocks)));
  for (auto _ : state) {
    to_layout(layout, 1, kRows, kBlocks, in, out);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(in.size()));
}
BENCHMARK_CAPTURE(BM_ToLayout, tiled_128x4, ScaleLayout::of(ScaleLayoutKind::tiled_128x4));
BENCHMARK_CAPTURE(BM_ToLayout, tiled_8x4, ScaleLayout::of(ScaleLayoutKind::tiled_8x4));
BENCHMARK_CAPTURE(BM_ToLayout, linear, ScaleLayout::of(ScaleLayoutKind::linear));
BENCHMARK_CAPTURE(BM_ToLayout, cdna4_mfma16, ScaleLayout::of(ScaleLayoutKind::cdna4_mfma16));
BENCHMARK_CAPTURE(BM_ToLayout, deepgemm_sm100_packed, ScaleLayout::of(ScaleLayoutKind::deepgemm_sm100_packed));
BENCHMARK_CAPTURE(BM_ToLayout, triton_hopper_8, ScaleLayout::triton_hopper(8));

void BM_FromLayout(benchmark::State& state, ScaleLayout layout) {
  const auto rm = ramp(kRows * kBlocks, 0x7F);
  std::vector<std::uint8_t> stored(static_cast<std::size_t>(storage_size(layout, kRows, kBlocks)));
  to_layout(layout, 1, kRows, kBlocks, rm, stored);
  std::vector<std::uint8_t> out(rm.size());
  for (auto _ : state) {
    from_layout(layout, 1, kRows, kBlocks, stored, out);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(rm.size()));
}
BENCHMARK_CAPTURE(BM_FromLayout, tiled_128x4, ScaleLayout::of(ScaleLayoutKind::tiled_128x4));

// Packing: bytes processed = bytes of codes read (one per element).
void BM_MemcpyCodes(benchmark::State& state) {
  const auto in = ramp(kCodes, 0x0F);
  std::vector<std::uint8_t> out(in.size());
  for (auto _ : state) {
    std::memcpy(out.data(), in.data(), in.size());
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(in.size()));
}
BENCHMARK(BM_MemcpyCodes);

void BM_Pack(benchmark::State& state, Packing p, Format f) {
  const auto in = ramp(kCodes, code_mask(f));
  std::vector<std::uint8_t> out(packed_bytes(p, f, in.size()));
  for (auto _ : state) {
    pack(p, f, in, out);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(in.size()));
}
BENCHMARK_CAPTURE(BM_Pack, fp4_dense, Packing::fp4_dense, Format::float4_e2m1fn);
BENCHMARK_CAPTURE(BM_Pack, fp6_dense, Packing::fp6_dense, Format::float6_e2m3fn);
BENCHMARK_CAPTURE(BM_Pack, fp4_padded16, Packing::fp4_padded16, Format::float4_e2m1fn);

void BM_Unpack(benchmark::State& state, Packing p, Format f) {
  const auto codes = ramp(kCodes, code_mask(f));
  std::vector<std::uint8_t> packed_codes(packed_bytes(p, f, codes.size()));
  pack(p, f, codes, packed_codes);
  std::vector<std::uint8_t> out(codes.size());
  for (auto _ : state) {
    unpack(p, f, packed_codes, out);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(codes.size()));
}
BENCHMARK_CAPTURE(BM_Unpack, fp4_dense, Packing::fp4_dense, Format::float4_e2m1fn);
BENCHMARK_CAPTURE(BM_Unpack, fp6_dense, Packing::fp6_dense, Format::float6_e2m3fn);

}  // namespace
}  // namespace blockscale

BENCHMARK_MAIN();
