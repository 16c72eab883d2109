// SPDX-License-Identifier: Apache-2.0
// The numerics a study can ask of a block-scaled GEMM D = (A, SFA) x (B, SFB) (+ C), by name: the
// models of `blockscale gemm` and of the Python module (python/blockscale), one implementation for
// both.
//   exact           mma_scaled's exact numerics (reference/numerics.h): the exact sum of the scaled
//                   products (+ C) rounded once to f32, nearest even (emulator::exact_gemm);
//   sequential_f32  the fp32 FMA chain in k order from C, d = fmaf(x*sx, y*sy, d), that naive host
//                   references compute (reference::mma_scaled with Numerics::sequential());
//   sm_100a         the tcgen05 block-scaled GEMM, one instruction per K step, f32 accumulator in
//                   TMEM (emulator::block_scaled_schedule(Arch::sm_100a, ...));
//   sm_120a         the mma.sync block-scaled GEMM of sm_120a, one instruction per K step;
//   sm_90a          the Hopper GEMM kernels of blockscale::gpu: per scale block one wgmma k32 fp8
//                   into a fresh accumulator, then acc = fma(sa*sb, partial, acc) (harness::
//                   emulate_gemm; MXFP8, MXFP4 or NVFP4 on both sides).
// NVFP4's fp32 per-tensor scales are applied after the K loop by the epilogue every model shares
// (emulator::tensor_scale_epilogue: alpha = FMUL of the two decode scales, D = FFMA(alpha, acc, C),
// FMUL without C); the K loop then runs from +0.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "blockscale/emulator/gemm.h"
#include "blockscale/quantize.h"

namespace blockscale::harness {

// "exact", "sequential_f32", "sm_100a", "sm_120a", "sm_90a".
std::span<const std::string_view> block_scaled_model_names();

// One model, bound to B (N rows quantized along K, as emulator::gemm takes it) and to A's block
// format and per-tensor scale, read from `a` (the whole of A, or the rows the calls will take). `b`
// must outlive the model. Construction throws std::invalid_argument naming the rule
// broken: an unknown model, a format pair no instruction of the model takes, A and B blocks that do
// not share the scale type and block size.
class BlockScaledModel {
 public:
  BlockScaledModel(std::string_view name, const BlockScaledTensor& a, const BlockScaledTensor& b);

  // What it computes, in words, with the emulator schedule's name where there is one.
  const std::string& definition() const { return definition_; }
  // Rows of A below which a call costs more than it computes (B's panels are decoded per call):
  // how finely a caller that runs row slices (for progress) may cut A.
  int min_slice_rows() const { return min_slice_rows_; }

  // D (a.rows() x N f32 bits, row-major) for A: `a` of the constructor or rows of it (the same
  // block format and per-tensor scale);
  // c: M x N f32 bits or empty (+0). `options.stats` is filled in by the emulator's models
  // (exact, sm_100a, sm_120a); the thread count never changes a bit.
  std::vector<std::uint32_t> operator()(const BlockScaledTensor& a, std::span<const std::uint32_t> c,
                                        const emulator::GemmOptions& options = {}) const;

 private:
  struct Prepared;  // B's side as the model reads it, made once
  std::string name_, definition_;
  int min_slice_rows_ = 1;
  BlockFormat a_format_;
  const BlockScaledTensor* b_;
  std::shared_ptr<const Prepared> prepared_;
};

}  // namespace blockscale::harness
