// SPDX-License-Identifier: Apache-2.0
// The rows of ../shared/docs/numerics.md section (a). Parameters (L, F, rho, e_zero) are copied from that
// table; shape limits from numerics.md "Shapes and restrictions" and gpu.md 1.4 / 3.1 / 3.4; the
// hardware counts are those of ../shared/docs/numerics.md ("Hardware confirmation on H200") and of the K&M
// vector files (data/km-tensor-core-vectors/README.md), each re-checked by tests/emulator.
#include "blockscale/emulator/table.h"

#include <string>

namespace blockscale::emulator {

namespace {

using enum Type;
using R = OutputRounding;

constexpr FdpaParams T(int L, int F, R r, int e_zero) { return {Algorithm::t_fdpa, L, F, r, e_zero, 16, {}}; }
constexpr FdpaParams ST(int e_zero) { return {Algorithm::st_fdpa, 32, 25, R::rz_fp32, e_zero, 16, {}}; }
constexpr FdpaParams GST() { return {Algorithm::gst_fdpa, 64, 35, R::rz_fp32, -139, 16, {}}; }
// b.9: L = 16 for m16n8k32 (two HMMA.16816), 8 for m16n8k16 (two HMMA.1688; gpu.md 3.4).
constexpr FdpaParams B9(int L, R inner, int e_zero) { return {Algorithm::fp8_via_f16, L, 25, inner, e_zero, 16, {}}; }
constexpr FdpaParams FMA() { return {Algorithm::fma_chain, 1, 53, R::rne_fp64, 0, 16, {}}; }
// Hopper: a negative sum that underflows gives +0 (measured on an H200 by blockscale conform,
// docs/conformance.md; numerics.md e.3 left it open, MMA-Sim v2 gives -0).
constexpr FdpaParams plus_zero(FdpaParams p) {
  p.underflow_zero = UnderflowZero::positive;
  return p;
}

// ---- Shapes {M, N min, N max, N step, K}.
constexpr ShapeRule kVoltaShapes[] = {{8, 8, 8, 8, 4}};
constexpr ShapeRule kM16N8K8[] = {{16, 8, 8, 8, 8}};
constexpr ShapeRule kM16N8K8K16[] = {{16, 8, 8, 8, 8}, {16, 8, 8, 8, 16}};
constexpr ShapeRule kM16N8K4K8[] = {{16, 8, 8, 8, 4}, {16, 8, 8, 8, 8}};
constexpr ShapeRule kM16N8K16[] = {{16, 8, 8, 8, 16}};
constexpr ShapeRule kM16N8K16K32[] = {{16, 8, 8, 8, 16}, {16, 8, 8, 8, 32}};
constexpr ShapeRule kM16N8K32[] = {{16, 8, 8, 8, 32}};
constexpr ShapeRule kM16N8K64[] = {{16, 8, 8, 8, 64}};
constexpr ShapeRule kF64Shapes[] = {{8, 8, 8, 8, 4}, {16, 8, 8, 8, 4}, {16, 8, 8, 8, 8}, {16, 8, 8, 8, 16}};
constexpr ShapeRule kWgmmaK8[] = {{64, 8, 256, 8, 8}};
constexpr ShapeRule kWgmmaK16[] = {{64, 8, 256, 8, 16}};
constexpr ShapeRule kWgmmaK32[] = {{64, 8, 256, 8, 32}};
// Sparse forms on sm_90a (PTX ISA 9.7.14.6 and 9.7.15.5.2): the logical K is twice the dense K.
constexpr ShapeRule kSpM16N8K8K16[] = {{16, 8, 8, 8, 8}, {16, 8, 8, 8, 16}};
constexpr ShapeRule kSpM16N8K16K32[] = {{16, 8, 8, 8, 16}, {16, 8, 8, 8, 32}};
constexpr ShapeRule kSpM16N8K64[] = {{16, 8, 8, 8, 64}};
constexpr ShapeRule kSpWgmmaK16[] = {{64, 8, 256, 8, 16}};
constexpr ShapeRule kSpWgmmaK32[] = {{64, 8, 256, 8, 32}};
constexpr ShapeRule kSpWgmmaK64[] = {{64, 8, 256, 8, 64}};
constexpr ShapeRule kTcK8[] = {{64, 8, 256, 8, 8}, {128, 8, 256, 8, 8}};
constexpr ShapeRule kTcK16[] = {{64, 8, 256, 8, 16}, {128, 8, 256, 8, 16}};
// kind::f8f6f4 at cta_group::1: PTX allows "N step 8 or 16"; CUTLASS and DeepGEMM assert N % 8 for
// M = 64 and N % 16 for M = 128 (gpu.md 1.4), which is what is accepted here.
constexpr ShapeRule kTcF8F6F4[] = {{64, 8, 256, 8, 32}, {128, 16, 256, 16, 32}};
constexpr ShapeRule kTcScaledK32[] = {{128, 8, 256, 8, 32}};
constexpr ShapeRule kTcScaledK64[] = {{128, 8, 256, 8, 64}};

constexpr TypeSet kF16Bf16{f16, bf16};
constexpr TypeSet kF16{f16};
constexpr TypeSet kTf32{tf32};
constexpr TypeSet kF64{f64};
constexpr TypeSet kFp8{e4m3, e5m2};
constexpr TypeSet kF8F6F4{e4m3, e5m2, e2m3, e3m2, e2m1};
constexpr TypeSet kFp6Fp4{e2m3, e3m2, e2m1};
constexpr TypeSet kFp4{e2m1};
constexpr TypeSet kNone{};

// ---- Hardware confirmations: K&M files hold 5000 dot products each (README of the data set).
constexpr HardwareEvidence kAdaF16F32[] = {{"Ada", f16, f16, 5000, "K&M Ada/fp16 d_Ada_fp32 (wmma, 8 products)"},
                                           {"Ada", bf16, bf16, 5000, "K&M Ada/bf16 d_Ada_fp32 (wmma, 8 products)"}};
constexpr HardwareEvidence kAdaF16F16[] = {{"Ada", f16, f16, 5000, "K&M Ada/fp16 d_Ada_fp16 (wmma, 8 products)"}};
constexpr HardwareEvidence kAdaTf32[] = {{"Ada", tf32, tf32, 5000, "K&M Ada/tf32 d_Ada_fp32 (wmma, 4 products)"}};
constexpr HardwareEvidence kAdaFp8F32[] = {{"Ada", e4m3, e4m3, 5000, "K&M Ada/E4M3 d_Ada_fp32 (mma.sync m16n8k32)"},
                                           {"Ada", e5m2, e5m2, 5000, "K&M Ada/E5M2 d_Ada_fp32 (mma.sync m16n8k32)"}};
constexpr HardwareEvidence kAdaFp8F16[] = {{"Ada", e4m3, e4m3, 5000, "K&M Ada/E4M3 d_Ada_fp16 (mma.sync m16n8k32)"},
                                           {"Ada", e5m2, e5m2, 5000, "K&M Ada/E5M2 d_Ada_fp16 (mma.sync m16n8k32)"}};
// blockscale conform on an H200 (docs/conformance.md, docs/conformance/h200-sweep-*.json): random,
// realistic and probe data, >= 10^7 outputs per instruction (wgmma at N = 8, 64 and 256), 0 mismatches
// against the rows below.
constexpr std::string_view kH200Sweep = "blockscale conform sweep, docs/conformance/h200-sweep-*.json";
// The same sweep of every sm_90a target on an H100 (2026-11-22, the table as of then): the
// instruction rows' counts below (the fp8 mma.sync rows cite their own H100 run of the same data).
constexpr std::string_view kH100Sweep = "blockscale conform sweep, docs/conformance/h100-sweep.json";
// Sparse forms: docs/conformance.md "Sparse MMA on an H100" (2026-11-24): 262,144 outputs per
// measured form (random bit patterns and a narrow exponent range, random ordered metadata), all
// equal to the dense row applied to the gathered operands.
constexpr HardwareEvidence kHopperWgmmaFp8[] = {
    {"H100", e4m3, e4m3, 5000, "K&M H100/E4M3 d_H100_fp32 (wgmma, C = 0)"},
    {"H100", e5m2, e5m2, 5000, "K&M H100/E5M2 d_H100_fp32 (wgmma, C = 0)"},
    {"H200", e4m3, e4m3, 5000, "K&M H200/E4M3 d_H200_fp32 (wgmma, C = 0)"},
    {"H200", e5m2, e5m2, 5000, "K&M H200/E5M2 d_H200_fp32 (wgmma, C = 0)"},
    {"H200", e4m3, e4m3, 1572864, "numerics.md H200 confirmation (a): m64n32k32 with C"},
    {"H200", e5m2, e5m2, 1572864, "numerics.md H200 confirmation (a): m64n32k32 with C"},
    {"H200", e4m3, e4m3, 30029824, kH200Sweep},
    {"H200", e4m3, e5m2, 30029824, kH200Sweep},
    {"H200", e5m2, e4m3, 30030336, kH200Sweep},
    {"H200", e5m2, e5m2, 30030336, kH200Sweep},
    {"H100", e4m3, e4m3, 30029824, kH100Sweep},
    {"H100", e4m3, e5m2, 30029824, kH100Sweep},
    {"H100", e5m2, e4m3, 30030336, kH100Sweep},
    {"H100", e5m2, e5m2, 30030336, kH100Sweep}};
constexpr HardwareEvidence kHopperWgmmaFp8F16[] = {{"H200", e4m3, e4m3, 30029824, kH200Sweep},
                                                   {"H200", e4m3, e5m2, 30030336, kH200Sweep},
                                                   {"H200", e5m2, e4m3, 30030336, kH200Sweep},
                                                   {"H200", e5m2, e5m2, 30029824, kH200Sweep},
                                                   {"H100", e4m3, e4m3, 30029824, kH100Sweep},
                                                   {"H100", e4m3, e5m2, 30030336, kH100Sweep},
                                                   {"H100", e5m2, e4m3, 30030336, kH100Sweep},
                                                   {"H100", e5m2, e5m2, 30029824, kH100Sweep}};
constexpr HardwareEvidence kHopperWgmmaF16F32[] = {{"H200", f16, f16, 30018048, kH200Sweep},
                                                   {"H200", bf16, bf16, 30018048, kH200Sweep},
                                                   {"H100", f16, f16, 30018048, kH100Sweep},
                                                   {"H100", bf16, bf16, 30018048, kH100Sweep}};
constexpr HardwareEvidence kHopperWgmmaF16F16[] = {{"H200", f16, f16, 30017536, kH200Sweep},
                                                   {"H100", f16, f16, 30018048, kH100Sweep}};
constexpr HardwareEvidence kHopperWgmmaTf32[] = {{"H200", tf32, tf32, 30029824, kH200Sweep},
                                                 {"H100", tf32, tf32, 30029824, kH100Sweep}};
// The f64 DMMA shapes (m8n8k4, m16n8k4, m16n8k8, m16n8k16; SASS DMMA.8x8x4 .. DMMA.16x8x16) on an
// H200 and an H100: random, realistic, probe (ties and sticky bits that tell the k order) and
// subnormal data, 30 million outputs per shape. The first two records took any NaN for any NaN; the
// third compared NaN payloads too (830,860 NaN outputs, 82,470 of them from an fma with two or three
// NaN operands), which is where DMMA's NaN rule in dot_f64 comes from.
constexpr HardwareEvidence kHopperF64[] = {
    {"H200", f64, f64, 120000896, "blockscale conform, docs/conformance/h200-mma-sync-f64-sweep.json"},
    {"H100", f64, f64, 120000896, "blockscale conform, docs/conformance/h100-mma-sync-f64-sweep.json"},
    {"H200", f64, f64, 120000896, "blockscale conform, docs/conformance/h200-mma-sync-f64-nan-payloads.json"}};
// The half-K mma.sync shapes (m16n8k8 f16/bf16, m16n8k4 tf32) on an H200 (on the H100 they are in
// its full sweep).
constexpr std::string_view kH200MmaHalfK = "blockscale conform, docs/conformance/h200-mma-sync-half-k-sweep.json";
constexpr HardwareEvidence kHopperTf32[] = {{"H100", tf32, tf32, 5000, "K&M H100/tf32 d_H100_fp32 (wmma, 4 products)"},
                                            {"H200", tf32, tf32, 5000, "K&M H200/tf32 d_H200_fp32 (wmma, 4 products)"},
                                            {"H200", tf32, tf32, 10000128, kH200Sweep},
                                            {"H200", tf32, tf32, 10000128, kH200MmaHalfK},
                                            {"H100", tf32, tf32, 20000256, kH100Sweep}};
constexpr HardwareEvidence kHopperF16F32[] = {{"H100", f16, f16, 5000, "K&M H100/fp16 d_H100_fp32 (wmma)"},
                                              {"H100", bf16, bf16, 5000, "K&M H100/bf16 d_H100_fp32 (wmma)"},
                                              {"H200", f16, f16, 5000, "K&M H200/fp16 d_H200_fp32 (wmma)"},
                                              {"H200", bf16, bf16, 5000, "K&M H200/bf16 d_H200_fp32 (wmma)"},
                                              {"H200", f16, f16, 10000000, kH200Sweep},
                                              {"H200", bf16, bf16, 10000000, kH200Sweep},
                                              {"H200", f16, f16, 10000128, kH200MmaHalfK},
                                              {"H200", bf16, bf16, 10000128, kH200MmaHalfK},
                                              {"H100", f16, f16, 20000128, kH100Sweep},
                                              {"H100", bf16, bf16, 20000128, kH100Sweep}};
constexpr HardwareEvidence kHopperF16F16[] = {{"H100", f16, f16, 5000, "K&M H100/fp16 d_H100_fp16 (wmma)"},
                                              {"H200", f16, f16, 5000, "K&M H200/fp16 d_H200_fp16 (wmma)"},
                                              {"H200", f16, f16, 10000000, kH200Sweep},
                                              {"H200", f16, f16, 10000128, kH200MmaHalfK},
                                              {"H100", f16, f16, 20000128, kH100Sweep}};
// blockscale conform on an H100 (docs/conformance/h100-fp8-mma-sync-sweep.json): fp8 mma.sync at k32
// and k16, random, realistic and probe data, 0 mismatches.
constexpr std::string_view kH100MmaFp8Sweep = "blockscale conform, docs/conformance/h100-fp8-mma-sync-sweep.json";
constexpr std::string_view kH200MmaK16Sweep = "blockscale conform, docs/conformance/h200-fp8-mma-sync-k16-sweep.json";
constexpr HardwareEvidence kHopperB9F32[] = {
    {"H200", e4m3, e4m3, 1048576, "numerics.md H200 confirmation (b): mma.sync m16n8k32 with C"},
    {"H200", e5m2, e5m2, 1048576, "numerics.md H200 confirmation (b): mma.sync m16n8k32 with C"},
    {"H200", e4m3, e4m3, 10000128, kH200Sweep},
    {"H200", e4m3, e5m2, 10000128, kH200Sweep},
    {"H200", e5m2, e4m3, 10000000, kH200Sweep},
    {"H200", e5m2, e5m2, 10000000, kH200Sweep},
    {"H100", e4m3, e4m3, 10000128, kH100MmaFp8Sweep},
    {"H100", e4m3, e5m2, 10000128, kH100MmaFp8Sweep},
    {"H100", e5m2, e4m3, 10000000, kH100MmaFp8Sweep},
    {"H100", e5m2, e5m2, 10000000, kH100MmaFp8Sweep}};
constexpr HardwareEvidence kHopperB9F16[] = {{"H100", e4m3, e4m3, 5000, "K&M H100/E4M3 d_H100_fp16 (mma.sync)"},
                                             {"H100", e5m2, e5m2, 5000, "K&M H100/E5M2 d_H100_fp16 (mma.sync)"},
                                             {"H200", e4m3, e4m3, 5000, "K&M H200/E4M3 d_H200_fp16 (mma.sync)"},
                                             {"H200", e5m2, e5m2, 5000, "K&M H200/E5M2 d_H200_fp16 (mma.sync)"},
                                             {"H200", e4m3, e4m3, 10000128, kH200Sweep},
                                             {"H200", e4m3, e5m2, 10000000, kH200Sweep},
                                             {"H200", e5m2, e4m3, 10000000, kH200Sweep},
                                             {"H200", e5m2, e5m2, 10000128, kH200Sweep},
                                             {"H100", e4m3, e4m3, 10000128, kH100MmaFp8Sweep},
                                             {"H100", e4m3, e5m2, 10000000, kH100MmaFp8Sweep},
                                             {"H100", e5m2, e4m3, 10000000, kH100MmaFp8Sweep},
                                             {"H100", e5m2, e5m2, 10000128, kH100MmaFp8Sweep}};
// mma.sync m16n8k16 fp8 (2 x HMMA.1688), H200 and H100.
constexpr HardwareEvidence kHopperB9K16F32[] = {{"H200", e4m3, e4m3, 10000128, kH200MmaK16Sweep},
                                                {"H200", e4m3, e5m2, 10000128, kH200MmaK16Sweep},
                                                {"H200", e5m2, e4m3, 10000000, kH200MmaK16Sweep},
                                                {"H200", e5m2, e5m2, 10000000, kH200MmaK16Sweep},
                                                {"H100", e4m3, e4m3, 10000128, kH100MmaFp8Sweep},
                                                {"H100", e4m3, e5m2, 10000128, kH100MmaFp8Sweep},
                                                {"H100", e5m2, e4m3, 10000000, kH100MmaFp8Sweep},
                                                {"H100", e5m2, e5m2, 10000000, kH100MmaFp8Sweep}};
constexpr HardwareEvidence kHopperB9K16F16[] = {{"H200", e4m3, e4m3, 10000128, kH200MmaK16Sweep},
                                                {"H200", e4m3, e5m2, 10000000, kH200MmaK16Sweep},
                                                {"H200", e5m2, e4m3, 10000000, kH200MmaK16Sweep},
                                                {"H200", e5m2, e5m2, 10000128, kH200MmaK16Sweep},
                                                {"H100", e4m3, e4m3, 10000128, kH100MmaFp8Sweep},
                                                {"H100", e4m3, e5m2, 10000000, kH100MmaFp8Sweep},
                                                {"H100", e5m2, e4m3, 10000000, kH100MmaFp8Sweep},
                                                {"H100", e5m2, e5m2, 10000128, kH100MmaFp8Sweep}};
constexpr HardwareEvidence kB200Tf32[] = {{"B200", tf32, tf32, 5000, "K&M B200/tf32 d_B200_fp32 (wmma, 4 products)"}};
constexpr HardwareEvidence kB200F16F32[] = {{"B200", f16, f16, 5000, "K&M B200/fp16 d_B200_fp32 (wmma)"},
                                            {"B200", bf16, bf16, 5000, "K&M B200/bf16 d_B200_fp32 (wmma)"}};
constexpr HardwareEvidence kB200F16F16[] = {{"B200", f16, f16, 5000, "K&M B200/fp16 d_B200_fp16 (wmma)"}};
constexpr HardwareEvidence kB200B9F32[] = {{"B200", e4m3, e4m3, 5000, "K&M B200/E4M3 d_B200_fp32 (mma.sync)"},
                                           {"B200", e5m2, e5m2, 5000, "K&M B200/E5M2 d_B200_fp32 (mma.sync)"}};
constexpr HardwareEvidence kB200B9F16[] = {{"B200", e4m3, e4m3, 5000, "K&M B200/E4M3 d_B200_fp16 (mma.sync)"},
                                           {"B200", e5m2, e5m2, 5000, "K&M B200/E5M2 d_B200_fp16 (mma.sync)"}};

using P = Provenance;
constexpr std::span<const HardwareEvidence> kNoHw{};

// clang-format off
const InstructionRow kRows[] = {
  // ---- Volta sm_70: T-FDPA L=4, F=23.
  {"sm_70.mma.f16.f32", Arch::sm_70, Opcode::mma_sync, Kind::none, "mma.sync.aligned", kVoltaShapes, kF16, kF16, f32, false, f32, 0,
   T(4, 23, R::rz_fp32, -131), P::published_model, kNone, kNoHw,
   "MMA-Sim; numerics.md d.2 reproduced K&M V100 vectors (not in blockscale's copy)", "mma.sync (sm_70)"},
  {"sm_70.mma.f16.f16", Arch::sm_70, Opcode::mma_sync, Kind::none, "mma.sync.aligned", kVoltaShapes, kF16, kF16, f16, false, f32, 0,
   T(4, 23, R::rne_fp16, -20), P::published_model, kNone, kNoHw,
   "MMA-Sim; numerics.md d.2 reproduced K&M V100 vectors (not in blockscale's copy); K&M floor -19 (e.1)", "mma.sync (sm_70)"},
  // ---- Turing sm_75: T-FDPA L=8, F=24.
  {"sm_75.mma.f16.f32", Arch::sm_75, Opcode::mma_sync, Kind::none, "mma.sync.aligned", kM16N8K8, kF16, kF16, f32, false, f32, 0,
   T(8, 24, R::rz_fp32, -132), P::published_model, kNone, kNoHw, "MMA-Sim", "mma.sync (sm_75)"},
  {"sm_75.mma.f16.f16", Arch::sm_75, Opcode::mma_sync, Kind::none, "mma.sync.aligned", kM16N8K8, kF16, kF16, f16, false, f32, 0,
   T(8, 24, R::rne_fp16, -21), P::published_model, kNone, kNoHw, "MMA-Sim", "mma.sync (sm_75)"},
  // ---- Ampere sm_80: k16 split into 2 x 8 (L=8), tf32 k8 into 2 x 4 (L=4), F=24.
  {"sm_80.mma.f16bf16.f32", Arch::sm_80, Opcode::mma_sync, Kind::none, "mma.sync.aligned", kM16N8K8K16, kF16Bf16, kF16Bf16, f32, false, f32, 0,
   T(8, 24, R::rz_fp32, -132), P::published_model, kNone, kNoHw,
   "MMA-Sim; numerics.md d.2 reproduced K&M A100 vectors (not in blockscale's copy)", "mma.sync (sm_80)"},
  {"sm_80.mma.f16.f16", Arch::sm_80, Opcode::mma_sync, Kind::none, "mma.sync.aligned", kM16N8K8K16, kF16, kF16, f16, false, f32, 0,
   T(8, 24, R::rne_fp16, -21), P::published_model, kNone, kNoHw,
   "MMA-Sim; numerics.md d.2 reproduced K&M A100 vectors (not in blockscale's copy); K&M floor -20 (e.1)", "mma.sync (sm_80)"},
  {"sm_80.mma.tf32.f32", Arch::sm_80, Opcode::mma_sync, Kind::none, "mma.sync.aligned", kM16N8K4K8, kTf32, kTf32, f32, false, f32, 0,
   T(4, 24, R::rz_fp32, -132), P::published_model, kNone, kNoHw,
   "MMA-Sim; numerics.md d.2 reproduced K&M A100 vectors (not in blockscale's copy)", "mma.sync (sm_80)"},
  // ---- Ada sm_89: as Ampere for f16/bf16/tf32; fp8 k32 split into 2 x 16 with F=13.
  {"sm_89.mma.f16bf16.f32", Arch::sm_89, Opcode::mma_sync, Kind::none, "mma.sync.aligned", kM16N8K8K16, kF16Bf16, kF16Bf16, f32, false, f32, 0,
   T(8, 24, R::rz_fp32, -132), P::published_model, kNone, kAdaF16F32,
   "MMA-Sim; K&M Ada vectors (one 8-term step: the 2 x 8 split is not exercised)", "mma.sync (sm_89)"},
  {"sm_89.mma.f16.f16", Arch::sm_89, Opcode::mma_sync, Kind::none, "mma.sync.aligned", kM16N8K8K16, kF16, kF16, f16, false, f32, 0,
   T(8, 24, R::rne_fp16, -21), P::published_model, kNone, kAdaF16F16,
   "MMA-Sim; K&M Ada vectors (C = fp16(c); e_zero not exercised, K&M floor -20, e.1)", "mma.sync (sm_89)"},
  {"sm_89.mma.tf32.f32", Arch::sm_89, Opcode::mma_sync, Kind::none, "mma.sync.aligned", kM16N8K4K8, kTf32, kTf32, f32, false, f32, 0,
   T(4, 24, R::rz_fp32, -132), P::published_model, kNone, kAdaTf32,
   "MMA-Sim; K&M Ada vectors (4 products: the 2 x 4 split is not exercised)", "mma.sync (sm_89)"},
  {"sm_89.mma.fp8.f32", Arch::sm_89, Opcode::mma_sync, Kind::none, "mma.sync.aligned", kM16N8K16K32, kFp8, kFp8, f32, false, f32, 0,
   T(16, 13, R::rz_e8m13, -132), P::published_model, kNone, kAdaFp8F32,
   "MMA-Sim (any e4m3/e5m2 mix); K&M Ada vectors exercise the 2 x 16 split of k32", "mma.sync fp8 (sm_89)"},
  {"sm_89.mma.fp8.f16", Arch::sm_89, Opcode::mma_sync, Kind::none, "mma.sync.aligned", kM16N8K16K32, kFp8, kFp8, f16, false, f32, 0,
   T(16, 13, R::rne_fp16, -21), P::published_model, kNone, kAdaFp8F16,
   "MMA-Sim (any e4m3/e5m2 mix); K&M Ada vectors, C = fp16(c)", "mma.sync fp8 (sm_89)"},
  // ---- Hopper sm_90a: wgmma (one FDPA per instruction), mma.sync, emulated fp8 mma.sync (b.9).
  {"sm_90a.wgmma.tf32.f32", Arch::sm_90a, Opcode::wgmma, Kind::none, "wgmma.mma_async", kWgmmaK8, kTf32, kTf32, f32, false, f32, 0,
   plus_zero(T(8, 25, R::rz_fp32, -133)), P::published_model, kNone, kHopperWgmmaTf32,
   "MMA-Sim (random bit patterns); H200 conform sweep; e_zero -133 pinned on an H200 and an H100 (gpu_probes_test)", "wgmma tf32",
   kSpWgmmaK16, "H100: wgmma.sp k16 tf32 at N = 8, 64, 256 (blockscale conform, >= 2e6 outputs each)"},
  {"sm_90a.wgmma.f16bf16.f32", Arch::sm_90a, Opcode::wgmma, Kind::none, "wgmma.mma_async", kWgmmaK16, kF16Bf16, kF16Bf16, f32, false, f32, 0,
   plus_zero(T(16, 25, R::rz_fp32, -133)), P::published_model, kNone, kHopperWgmmaF16F32,
   "MMA-Sim; H200 conform sweep; e_zero -133 pinned with bf16 on an H200 and an H100 (gpu_probes_test)", "wgmma f16/bf16",
   kSpWgmmaK32, "H100: wgmma.sp k32 f16 and bf16 at N = 8, 64, 256 (blockscale conform, >= 2e6 outputs each); f16 x bf16 mixes inferred"},
  {"sm_90a.wgmma.f16.f16", Arch::sm_90a, Opcode::wgmma, Kind::none, "wgmma.mma_async", kWgmmaK16, kF16, kF16, f16, false, f32, 0,
   plus_zero(T(16, 25, R::rne_fp16, -21)), P::published_model, kNone, kHopperWgmmaF16F16,
   "MMA-Sim; H200 conform: e_zero -21 measured (MMA-Sim v2 gives -133)", "wgmma f16",
   kSpWgmmaK32, "H100: wgmma.sp k32 f16 -> f16 at N = 8, 64, 256 (blockscale conform, >= 2e6 outputs each)"},
  {"sm_90a.wgmma.fp8.f32", Arch::sm_90a, Opcode::wgmma, Kind::none, "wgmma.mma_async", kWgmmaK32, kFp8, kFp8, f32, false, f32, 0,
   plus_zero(T(32, 13, R::rz_e8m13, -133)), P::published_model, kNone, kHopperWgmmaFp8,
   "MMA-Sim (any mix); K&M H100/H200 (C = 0), H200 with C, H200 conform sweep; DeepSeek-V3 '14 bits'", "wgmma fp8",
   kSpWgmmaK64, "H100: wgmma.sp k64, the four fp8 mixes at N = 8, 64, 256 (blockscale conform, >= 2e6 outputs each)"},
  {"sm_90a.wgmma.fp8.f16", Arch::sm_90a, Opcode::wgmma, Kind::none, "wgmma.mma_async", kWgmmaK32, kFp8, kFp8, f16, false, f32, 0,
   plus_zero(T(32, 13, R::rne_fp16, -133)), P::published_model, kNone, kHopperWgmmaFp8F16,
   "MMA-Sim behaviour test (RNE-FP16 directly from the F=13 sum); H200 conform sweep (e_zero not reachable by its probes)",
   "wgmma fp8",
   kSpWgmmaK64, "H100: wgmma.sp k64 -> f16, the four fp8 mixes at N = 8, 64, 256 (blockscale conform, >= 2e6 outputs each)"},
  {"sm_90a.mma.tf32.f32", Arch::sm_90a, Opcode::mma_sync, Kind::none, "mma.sync.aligned", kM16N8K4K8, kTf32, kTf32, f32, false, f32, 0,
   plus_zero(T(8, 25, R::rz_fp32, -133)), P::published_model, kNone, kHopperTf32,
   "MMA-Sim; K&M H100/H200 (4 products: L = 8 not exercised); H200 conform sweep; e_zero -133 pinned on an H200 and an H100",
   "mma.sync (sm_90a)",
   kSpM16N8K8K16, "H100: mma.sp m16n8k8 and m16n8k16 tf32 (blockscale conform, >= 2e6 outputs each)"},
  {"sm_90a.mma.f16bf16.f32", Arch::sm_90a, Opcode::mma_sync, Kind::none, "mma.sync.aligned", kM16N8K8K16, kF16Bf16, kF16Bf16, f32, false, f32, 0,
   plus_zero(T(16, 25, R::rz_fp32, -133)), P::published_model, kNone, kHopperF16F32,
   "MMA-Sim; K&M H100/H200; H200 conform sweep; e_zero -133 pinned with bf16 on an H200 and an H100", "mma.sync (sm_90a)",
   kSpM16N8K16K32, "H100: mma.sp m16n8k16 and m16n8k32 f16 and bf16 (blockscale conform, >= 2e6 outputs each); f16 x bf16 mixes inferred"},
  {"sm_90a.mma.f16.f16", Arch::sm_90a, Opcode::mma_sync, Kind::none, "mma.sync.aligned", kM16N8K8K16, kF16, kF16, f16, false, f32, 0,
   plus_zero(T(16, 25, R::rne_fp16, -21)), P::published_model, kNone, kHopperF16F16,
   "MMA-Sim; K&M H100/H200, C = fp16(c); e_zero -21 measured by H200 conform (K&M's value; MMA-Sim v2 -22, e.1)", "mma.sync (sm_90a)",
   kSpM16N8K16K32, "H100: mma.sp m16n8k16 and m16n8k32 f16 -> f16 (blockscale conform, >= 2e6 outputs each)"},
  {"sm_90a.mma.f64", Arch::sm_90a, Opcode::mma_sync, Kind::none, "mma.sync.aligned", kF64Shapes, kF64, kF64, f64, false, f32, 0,
   FMA(), P::published_model, kNone, kHopperF64,
   "MMA-Sim; H200 and H100 conform sweeps, every shape (NaN payload not compared)", "mma.sync f64 (sm_90a)"},
  {"sm_90a.mma.fp8.f32", Arch::sm_90a, Opcode::mma_sync, Kind::none, "mma.sync.aligned", kM16N8K32, kFp8, kFp8, f32, false, f32, 0,
   plus_zero(B9(16, R::rz_fp32, -133)), P::inferred, kNone, kHopperB9F32,
   "b.9 compiler emulation (SASS F2FP + 2 x HMMA.16816.F32 + FADD); H200 and H100 measured (every mix by conform)",
   "mma.sync fp8 (sm_90a, emulated)",
   kSpM16N8K64, "H100: mma.sp m16n8k64, the four fp8 mixes (SASS: F2FP + 2 x HMMA.SP.16832.F32 + FADD) (blockscale conform, >= 2e6 outputs each)"},
  {"sm_90a.mma.fp8.f16", Arch::sm_90a, Opcode::mma_sync, Kind::none, "mma.sync.aligned", kM16N8K32, kFp8, kFp8, f16, false, f32, 0,
   plus_zero(B9(16, R::rne_fp16, -21)), P::inferred, kNone, kHopperB9F16,
   "b.9 compiler emulation (2 x HMMA.16816.F16 + HADD2); K&M H100/H200, C = fp16(c); H200 and H100 conform; inner e_zero -21 as the f16 HMMA",
   "mma.sync fp8 (sm_90a, emulated)"},
  {"sm_90a.mma.fp8k16.f32", Arch::sm_90a, Opcode::mma_sync, Kind::none, "mma.sync.aligned", kM16N8K16, kFp8, kFp8, f32, false, f32, 0,
   plus_zero(B9(8, R::rz_fp32, -133)), P::inferred, kNone, kHopperB9K16F32,
   "b.9 compiler emulation of m16n8k16 (SASS F2FP + 2 x HMMA.1688.F32 + FADD, 8 products per HMMA); H200 and H100 measured (every mix by conform)",
   "mma.sync fp8 (sm_90a, emulated)"},
  {"sm_90a.mma.fp8k16.f16", Arch::sm_90a, Opcode::mma_sync, Kind::none, "mma.sync.aligned", kM16N8K16, kFp8, kFp8, f16, false, f32, 0,
   plus_zero(B9(8, R::rne_fp16, -21)), P::inferred, kNone, kHopperB9K16F16,
   "b.9 compiler emulation of m16n8k16 (2 x HMMA.1688.F16 + HADD2, 8 products per HMMA); H200 and H100 conform; inner e_zero -21 as the f16 HMMA",
   "mma.sync fp8 (sm_90a, emulated)"},
  // ---- Blackwell sm_100a: tcgen05 (cta_group::1), mma.sync with sm_80 shapes, emulated fp8 mma.sync.
  {"sm_100a.tcgen05.tf32.f32", Arch::sm_100a, Opcode::tcgen05_mma, Kind::tf32, "tcgen05.mma.cta_group::1.kind::tf32", kTcK8, kTf32, kTf32, f32, false, f32, 0,
   T(8, 25, R::rz_fp32, -133), P::published_model, kNone, kNoHw, "MMA-Sim", "tcgen05 kind::tf32"},
  {"sm_100a.tcgen05.f16.f32", Arch::sm_100a, Opcode::tcgen05_mma, Kind::f16, "tcgen05.mma.cta_group::1.kind::f16", kTcK16, kF16Bf16, kF16Bf16, f32, false, f32, 0,
   T(16, 25, R::rz_fp32, -133), P::published_model, kNone, kNoHw, "MMA-Sim", "tcgen05 kind::f16"},
  {"sm_100a.tcgen05.f16.f16", Arch::sm_100a, Opcode::tcgen05_mma, Kind::f16, "tcgen05.mma.cta_group::1.kind::f16", kTcK16, kF16, kF16, f16, false, f32, 0,
   T(16, 25, R::rne_fp16, -133), P::published_model, kNone, kNoHw, "MMA-Sim", "tcgen05 kind::f16"},
  {"sm_100a.tcgen05.f8f6f4.f32", Arch::sm_100a, Opcode::tcgen05_mma, Kind::f8f6f4, "tcgen05.mma.cta_group::1.kind::f8f6f4", kTcF8F6F4, kF8F6F4, kF8F6F4, f32, false, f32, 0,
   T(32, 25, R::rz_fp32, -133), P::published_model, kFp6Fp4, kNoHw,
   "MMA-Sim (e4m3 x e4m3, e5m2 x e5m2 kernels); fp6/fp4 operands inferred (F=25 per paper Table 4, e.4)", "tcgen05 kind::f8f6f4"},
  {"sm_100a.tcgen05.f8f6f4.f16", Arch::sm_100a, Opcode::tcgen05_mma, Kind::f8f6f4, "tcgen05.mma.cta_group::1.kind::f8f6f4", kTcF8F6F4, kF8F6F4, kF8F6F4, f16, false, f32, 0,
   T(32, 25, R::rne_fp16, -133), P::published_model, kFp6Fp4, kNoHw,
   "MMA-Sim (fp8); fp6/fp4 operands with f16 output inferred", "tcgen05 kind::f8f6f4"},
  {"sm_100a.tcgen05.mxf8f6f4.block32.ue8m0", Arch::sm_100a, Opcode::tcgen05_mma, Kind::mxf8f6f4, "tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.block32", kTcScaledK32, kF8F6F4, kF8F6F4, f32, true, ue8m0, 32,
   ST(-133), P::published_model, kFp6Fp4, kNoHw,
   "MMA-Sim (e4m3, e5m2); SystemC MXFP8 model; fp6/fp4 operands inferred (e.4)", "tcgen05 kind::mxf8f6f4 block_scale"},
  {"sm_100a.tcgen05.mxf4.block32.ue8m0", Arch::sm_100a, Opcode::tcgen05_mma, Kind::mxf4, "tcgen05.mma.cta_group::1.kind::mxf4.block_scale.block32", kTcScaledK64, kFp4, kFp4, f32, true, ue8m0, 32,
   GST(), P::published_model, kNone, kNoHw, "MMA-Sim ('behaves the same as mxf4nvf4', e.6)", "tcgen05 kind::mxf4 block_scale"},
  {"sm_100a.tcgen05.mxf4nvf4.block32.ue8m0", Arch::sm_100a, Opcode::tcgen05_mma, Kind::mxf4nvf4, "tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.block32", kTcScaledK64, kFp4, kFp4, f32, true, ue8m0, 32,
   GST(), P::published_model, kNone, kNoHw, "MMA-Sim (v2 equivalence tests on B200)", "tcgen05 kind::mxf4nvf4 block_scale"},
  {"sm_100a.tcgen05.mxf4nvf4.block16.ue8m0", Arch::sm_100a, Opcode::tcgen05_mma, Kind::mxf4nvf4, "tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.block16", kTcScaledK64, kFp4, kFp4, f32, true, ue8m0, 16,
   GST(), P::published_model, kNone, kNoHw, "MMA-Sim (v2 equivalence tests on B200)", "tcgen05 kind::mxf4nvf4 block_scale"},
  {"sm_100a.tcgen05.mxf4nvf4.block16.ue4m3", Arch::sm_100a, Opcode::tcgen05_mma, Kind::mxf4nvf4, "tcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale.block16", kTcScaledK64, kFp4, kFp4, f32, true, ue4m3, 16,
   GST(), P::published_model, kNone, kNoHw, "MMA-Sim (v2 equivalence tests on B200; ue4m3 bit 7 ignored)", "tcgen05 kind::mxf4nvf4 block_scale"},
  {"sm_100a.mma.tf32.f32", Arch::sm_100a, Opcode::mma_sync, Kind::none, "mma.sync.aligned", kM16N8K4K8, kTf32, kTf32, f32, false, f32, 0,
   T(8, 25, R::rz_fp32, -133), P::published_model, kNone, kB200Tf32, "MMA-Sim; K&M B200 (4 products)", "mma.sync (sm_100a)"},
  {"sm_100a.mma.f16bf16.f32", Arch::sm_100a, Opcode::mma_sync, Kind::none, "mma.sync.aligned", kM16N8K8K16, kF16Bf16, kF16Bf16, f32, false, f32, 0,
   T(16, 25, R::rz_fp32, -133), P::published_model, kNone, kB200F16F32, "MMA-Sim; K&M B200", "mma.sync (sm_100a)"},
  {"sm_100a.mma.f16.f16", Arch::sm_100a, Opcode::mma_sync, Kind::none, "mma.sync.aligned", kM16N8K8K16, kF16, kF16, f16, false, f32, 0,
   T(16, 25, R::rne_fp16, -22), P::published_model, kNone, kB200F16F16,
   "MMA-Sim; K&M B200, C = fp16(c) (e_zero not exercised, e.1)", "mma.sync (sm_100a)"},
  {"sm_100a.mma.f64", Arch::sm_100a, Opcode::mma_sync, Kind::none, "mma.sync.aligned", kF64Shapes, kF64, kF64, f64, false, f32, 0,
   FMA(), P::published_model, kNone, kNoHw, "MMA-Sim (NaN payload not compared)", "mma.sync f64 (sm_100a)"},
  {"sm_100a.mma.fp8.f32", Arch::sm_100a, Opcode::mma_sync, Kind::none, "mma.sync.aligned", kM16N8K32, kFp8, kFp8, f32, false, f32, 0,
   B9(16, R::rz_fp32, -133), P::inferred, kNone, kB200B9F32,
   "b.9 compiler emulation (SASS F2FP + HMMA.16816.F32 + FADD); K&M B200; mixed types inferred", "mma.sync fp8 (sm_100a, emulated)"},
  {"sm_100a.mma.fp8.f16", Arch::sm_100a, Opcode::mma_sync, Kind::none, "mma.sync.aligned", kM16N8K32, kFp8, kFp8, f16, false, f32, 0,
   B9(16, R::rne_fp16, -22), P::inferred, kNone, kB200B9F16,
   "b.9 compiler emulation; K&M B200, C = fp16(c); mixed types inferred", "mma.sync fp8 (sm_100a, emulated)"},
  {"sm_100a.mma.fp8k16.f32", Arch::sm_100a, Opcode::mma_sync, Kind::none, "mma.sync.aligned", kM16N8K16, kFp8, kFp8, f32, false, f32, 0,
   B9(8, R::rz_fp32, -133), P::inferred, kNone, kNoHw,
   "b.9 compiler emulation of m16n8k16: the same SASS as sm_90a (F2FP + 2 x HMMA.1688.F32 + FADD, nvcc 13.0), the HMMA of the B200 rows",
   "mma.sync fp8 (sm_100a, emulated)"},
  {"sm_100a.mma.fp8k16.f16", Arch::sm_100a, Opcode::mma_sync, Kind::none, "mma.sync.aligned", kM16N8K16, kFp8, kFp8, f16, false, f32, 0,
   B9(8, R::rne_fp16, -22), P::inferred, kNone, kNoHw,
   "b.9 compiler emulation of m16n8k16: the same SASS as sm_90a (2 x HMMA.1688.F16 + HADD2), the HMMA of the B200 rows",
   "mma.sync fp8 (sm_100a, emulated)"},
  // ---- RTX Blackwell sm_120a: native mma.sync, 32 bytes per FDPA.
  {"sm_120a.mma.tf32.f32", Arch::sm_120a, Opcode::mma_sync, Kind::none, "mma.sync.aligned", kM16N8K4K8, kTf32, kTf32, f32, false, f32, 0,
   T(8, 25, R::rz_fp32, -133), P::published_model, kNone, kNoHw, "MMA-Sim", "mma.sync (sm_120a)"},
  {"sm_120a.mma.f16bf16.f32", Arch::sm_120a, Opcode::mma_sync, Kind::none, "mma.sync.aligned", kM16N8K8K16, kF16Bf16, kF16Bf16, f32, false, f32, 0,
   T(16, 25, R::rz_fp32, -133), P::published_model, kNone, kNoHw, "MMA-Sim", "mma.sync (sm_120a)"},
  {"sm_120a.mma.f16.f16", Arch::sm_120a, Opcode::mma_sync, Kind::none, "mma.sync.aligned", kM16N8K8K16, kF16, kF16, f16, false, f32, 0,
   T(16, 25, R::rne_fp16, -22), P::published_model, kNone, kNoHw, "MMA-Sim", "mma.sync (sm_120a)"},
  {"sm_120a.mma.fp8.f32", Arch::sm_120a, Opcode::mma_sync, Kind::none, "mma.sync.aligned", kM16N8K16K32, kFp8, kFp8, f32, false, f32, 0,
   T(32, 25, R::rz_fp32, -133), P::published_model, kNone, kNoHw, "MMA-Sim (native QMMA.16832)", "mma.sync fp8 (sm_120a)"},
  {"sm_120a.mma.fp8.f16", Arch::sm_120a, Opcode::mma_sync, Kind::none, "mma.sync.aligned", kM16N8K16K32, kFp8, kFp8, f16, false, f32, 0,
   T(32, 25, R::rne_fp16, -22), P::published_model, kNone, kNoHw, "MMA-Sim (native QMMA.16832)", "mma.sync fp8 (sm_120a)"},
  {"sm_120a.mma.f8f6f4.f32", Arch::sm_120a, Opcode::mma_sync, Kind::f8f6f4, "mma.sync.aligned.kind::f8f6f4", kM16N8K32, kF8F6F4, kF8F6F4, f32, false, f32, 0,
   T(32, 25, R::rz_fp32, -133), P::published_model, kFp6Fp4, kNoHw, "MMA-Sim (fp8); fp6/fp4 operands inferred (e.4)", "mma.sync kind::f8f6f4 (sm_120a)"},
  {"sm_120a.mma.f8f6f4.f16", Arch::sm_120a, Opcode::mma_sync, Kind::f8f6f4, "mma.sync.aligned.kind::f8f6f4", kM16N8K32, kF8F6F4, kF8F6F4, f16, false, f32, 0,
   T(32, 25, R::rne_fp16, -22), P::published_model, kFp6Fp4, kNoHw, "MMA-Sim (fp8); fp6/fp4 operands inferred (e.4)", "mma.sync kind::f8f6f4 (sm_120a)"},
  {"sm_120a.mma.mxf8f6f4.block32.ue8m0", Arch::sm_120a, Opcode::mma_sync, Kind::mxf8f6f4, "mma.sync.aligned.kind::mxf8f6f4.block_scale.block32", kM16N8K32, kF8F6F4, kF8F6F4, f32, true, ue8m0, 32,
   ST(-133), P::published_model, kFp6Fp4, kNoHw, "MMA-Sim (e4m3, e5m2); fp6/fp4 operands inferred (e.4)", "mma.sync kind::mxf8f6f4 block_scale (sm_120a)"},
  {"sm_120a.mma.mxf4.block32.ue8m0", Arch::sm_120a, Opcode::mma_sync, Kind::mxf4, "mma.sync.aligned.kind::mxf4.block_scale.block32", kM16N8K64, kFp4, kFp4, f32, true, ue8m0, 32,
   GST(), P::published_model, kNone, kNoHw, "MMA-Sim", "mma.sync kind::mxf4 block_scale (sm_120a)"},
  {"sm_120a.mma.mxf4nvf4.block32.ue8m0", Arch::sm_120a, Opcode::mma_sync, Kind::mxf4nvf4, "mma.sync.aligned.kind::mxf4nvf4.block_scale.block32", kM16N8K64, kFp4, kFp4, f32, true, ue8m0, 32,
   GST(), P::published_model, kNone, kNoHw, "MMA-Sim", "mma.sync kind::mxf4nvf4 block_scale (sm_120a)"},
  {"sm_120a.mma.mxf4nvf4.block16.ue8m0", Arch::sm_120a, Opcode::mma_sync, Kind::mxf4nvf4, "mma.sync.aligned.kind::mxf4nvf4.block_scale.block16", kM16N8K64, kFp4, kFp4, f32, true, ue8m0, 16,
   GST(), P::published_model, kNone, kNoHw, "MMA-Sim", "mma.sync kind::mxf4nvf4 block_scale (sm_120a)"},
  {"sm_120a.mma.mxf4nvf4.block16.ue4m3", Arch::sm_120a, Opcode::mma_sync, Kind::mxf4nvf4, "mma.sync.aligned.kind::mxf4nvf4.block_scale.block16", kM16N8K64, kFp4, kFp4, f32, true, ue4m3, 16,
   GST(), P::published_model, kNone, kNoHw, "MMA-Sim", "mma.sync kind::mxf4nvf4 block_scale (sm_120a)"},
};
// clang-format on

}  // namespace

std::span<const InstructionRow> instruction_table() { return kRows; }

const InstructionRow* find_row(std::string_view id) {
  for (const InstructionRow& r : kRows) {
    if (r.id == id) return &r;
  }
  return nullptr;
}

Provenance provenance_of(const InstructionRow& row, Type a, Type b) {
  for (const HardwareEvidence& h : row.hardware) {
    if (h.a == a && h.b == b) return Provenance::hardware;
  }
  if (row.inferred_operands.contains(a) || row.inferred_operands.contains(b)) return Provenance::inferred;
  return row.provenance;
}

std::string shapes_string(const InstructionRow& row) { return shapes_string(row.shapes); }

std::string shapes_string(std::span<const ShapeRule> shapes) {
  std::string s;
  for (const ShapeRule& r : shapes) {
    if (!s.empty()) s += ',';
    s += 'm' + std::to_string(r.m) + 'n' + std::to_string(r.n_min);
    if (r.n_max != r.n_min) s += ".." + std::to_string(r.n_max) + '/' + std::to_string(r.n_step);
    s += 'k' + std::to_string(r.k);
  }
  return s;
}

std::string_view to_string(Arch a) {
  switch (a) {
    case Arch::sm_70: return "sm_70";
    case Arch::sm_75: return "sm_75";
    case Arch::sm_80: return "sm_80";
    case Arch::sm_89: return "sm_89";
    case Arch::sm_90a: return "sm_90a";
    case Arch::sm_100a: return "sm_100a";
    case Arch::sm_120a: return "sm_120a";
  }
  return "?";
}

std::string_view gpu_name(Arch a) {
  switch (a) {
    case Arch::sm_70: return "Volta";
    case Arch::sm_75: return "Turing";
    case Arch::sm_80: return "Ampere";
    case Arch::sm_89: return "Ada";
    case Arch::sm_90a: return "Hopper";
    case Arch::sm_100a: return "Blackwell";
    case Arch::sm_120a: return "RTX Blackwell";
  }
  return "?";
}

std::string_view to_string(Opcode o) {
  switch (o) {
    case Opcode::mma_sync: return "mma.sync";
    case Opcode::wgmma: return "wgmma";
    case Opcode::tcgen05_mma: return "tcgen05.mma";
  }
  return "?";
}

std::string_view to_string(Kind k) {
  switch (k) {
    case Kind::none: return "";
    case Kind::f16: return "kind::f16";
    case Kind::tf32: return "kind::tf32";
    case Kind::f8f6f4: return "kind::f8f6f4";
    case Kind::mxf8f6f4: return "kind::mxf8f6f4";
    case Kind::mxf4: return "kind::mxf4";
    case Kind::mxf4nvf4: return "kind::mxf4nvf4";
  }
  return "?";
}

std::string_view to_string(Provenance p) {
  switch (p) {
    case Provenance::hardware: return "hardware";
    case Provenance::published_model: return "published model";
    case Provenance::inferred: return "inferred";
  }
  return "?";
}

}  // namespace blockscale::emulator
