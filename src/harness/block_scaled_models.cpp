// SPDX-License-Identifier: Apache-2.0
#include "blockscale/harness/block_scaled_models.h"

#include <optional>
#include <stdexcept>

#include "blockscale/harness/target.h"
#include "blockscale/reference.h"

namespace blockscale::harness {

namespace {

constexpr std::string_view kNames[] = {"exact", "sequential_f32", "sm_100a", "sm_120a", "sm_90a"};

std::optional<GemmRecipe> hopper_recipe(const BlockFormat& f) {
  using namespace block_formats;
  if (f == mxfp8_e4m3 || f == mxfp8_e5m2) return GemmRecipe::mxfp8;
  if (f == mxfp4) return GemmRecipe::mxfp4;
  if (f == nvfp4) return GemmRecipe::nvfp4;
  return std::nullopt;
}

// C's rows as the emulator takes them (f32 codes, `cols` per row), or no C.
emulator::CodeMatrix c_matrix(std::span<const std::uint32_t> c, std::int64_t cols) {
  if (c.empty()) return {};
  return emulator::CodeMatrix(Format::float32, c.size() / static_cast<std::size_t>(cols), static_cast<std::size_t>(cols), c);
}

}  // namespace

std::span<const std::string_view> block_scaled_model_names() { return kNames; }

struct BlockScaledModel::Prepared {
  emulator::KernelSchedule schedule;           // sm_100a, sm_120a
  GemmTarget hopper;                           // sm_90a
  std::optional<reference::ScaledOperand> y;  // sequential_f32: B's scaled operand (8 bytes per element)
};

BlockScaledModel::BlockScaledModel(std::string_view name, const BlockScaledTensor& a, const BlockScaledTensor& b)
    : name_(name), a_format_(a.format()), b_(&b) {
  const BlockFormat& a_format = a.format();
  const BlockFormat& fb = b.format();
  // One scale pair per K block: the instructions take A and B blocks of one size with one scale type.
  if (a_format.scale != fb.scale || a_format.block_size != fb.block_size) {
    throw std::invalid_argument("A (" + to_string(a_format) + ") and B (" + to_string(fb) +
                                ") must share the scale type and the block size: each K block has one scale pair");
  }
  auto prepared = std::make_shared<Prepared>();
  if (name == "exact") {
    min_slice_rows_ = 512;
  } else if (name == "sequential_f32") {
    min_slice_rows_ = 64;
    prepared->y = reference::scaled_operand(b, reference::Side::y);
  } else if (name == "sm_100a" || name == "sm_120a") {
    const emulator::Arch arch = name == "sm_100a" ? emulator::Arch::sm_100a : emulator::Arch::sm_120a;
    prepared->schedule = emulator::block_scaled_schedule(arch, a_format.element, fb.element, a_format.scale, a_format.block_size);
    min_slice_rows_ = 512;
  } else if (name == "sm_90a") {
    const auto recipe = hopper_recipe(a_format);
    if (!recipe || hopper_recipe(fb) != recipe) {
      throw std::invalid_argument("sm_90a models the Hopper block-scaled GEMM kernels (blockscale::gpu), which take mxfp8 "
                                  "(e4m3 and e5m2 in any mix), mxfp4 or nvfp4 on both sides; A is " +
                                  to_string(a_format) + ", B " + to_string(fb));
    }
    GemmTarget& t = prepared->hopper;
    t.name = "sm_90a gemm " + to_string(a_format) + " x " + to_string(fb);
    t.recipe = *recipe;
    t.a = a_format.element;
    t.b = fb.element;
    t.scale = a_format.scale;
    t.block = a_format.block_size;
    t.promotion_interval = 1;
    min_slice_rows_ = 512;
  } else {
    throw std::invalid_argument("unknown model '" + std::string(name) + "' (sm_100a, sm_120a, sm_90a, sequential_f32, exact)");
  }
  const bool epilogue = emulator::tensor_scale_alpha(a, b) != 0x3F800000u;
  if (name == "exact") {
    definition_ = epilogue ? "the quantized operands' exact sum, rounded once to f32 (nearest even), then the epilogue"
                           : "the quantized operands' exact sum (+ C), rounded once to f32 (nearest even)";
  } else if (name == "sequential_f32") {
    definition_ = epilogue ? "the fp32 FMA chain in k order from +0 (a naive host reference), then the epilogue"
                           : "the fp32 FMA chain in k order, d = fmaf(x*sx, y*sy, d) (a naive host reference)";
  } else if (name == "sm_90a") {
    definition_ = "Hopper GEMM kernel (blockscale::gpu sm_90a): per scale block one wgmma k32 fp8 into a fresh "
                  "accumulator, then acc = fma(sa*sb, partial, acc): " + gemm_schedule(prepared->hopper).name();
  } else {
    definition_ = name == "sm_100a" ? "tcgen05 block-scaled GEMM, one instruction per K step, f32 accumulator in TMEM: "
                                    : "mma.sync block-scaled GEMM, one instruction per K step, f32 accumulator: ";
    definition_ += prepared->schedule.name();
  }
  prepared_ = std::move(prepared);
}

std::vector<std::uint32_t> BlockScaledModel::operator()(const BlockScaledTensor& a, std::span<const std::uint32_t> c,
                                                        const emulator::GemmOptions& options) const {
  const BlockScaledTensor& b = *b_;
  if (!(a.format() == a_format_)) {
    throw std::invalid_argument("model " + name_ + " was made for A in " + to_string(a_format_) + ", got " +
                                to_string(a.format()));
  }
  const std::int64_t rows = a.desc().rows(), cols = b.desc().rows();
  if (!c.empty() && static_cast<std::int64_t>(c.size()) != rows * cols) {
    throw std::invalid_argument("C holds " + std::to_string(c.size()) + " values but D is " + std::to_string(rows) + " x " +
                                std::to_string(cols));
  }
  const std::uint32_t alpha = emulator::tensor_scale_alpha(a, b);
  const bool epilogue = alpha != 0x3F800000u;
  if (name_ == "exact") return emulator::exact_gemm(a, b, c_matrix(c, cols), options);
  if (name_ == "sm_100a" || name_ == "sm_120a") return emulator::gemm(prepared_->schedule, a, b, c_matrix(c, cols), options);
  if (name_ == "sequential_f32") {
    const reference::ScaledOperand x = reference::scaled_operand(a, reference::Side::x);
    reference::Tensor acc = reference::Tensor::zeros(reference::DType::float32, {rows, cols});
    if (!c.empty() && !epilogue) {
      acc = reference::Tensor(reference::DType::float32, {rows, cols}, std::vector<std::uint64_t>(c.begin(), c.end()));
    }
    reference::ScaledMmaOptions o;
    o.numerics = reference::Numerics::sequential();
    // fp6 operands and mixed element types are the kind::mxf8f6f4 extension of cuda.tile's table.
    o.hardware_extensions = true;
    const reference::Tensor r = reference::mma_scaled(x.values, x.scales, prepared_->y->values, prepared_->y->scales, acc, o);
    std::vector<std::uint32_t> d(r.codes().begin(), r.codes().end());
    emulator::tensor_scale_epilogue(alpha, d, c_matrix(c, cols));
    return d;
  }
  // sm_90a
  GemmProblem p;
  p.m = static_cast<int>(rows);
  p.n = static_cast<int>(cols);
  p.k = static_cast<int>(a.desc().k_stored());  // the zero-padded K tail adds zero products
  p.a = a.element_codes();
  p.b = b.element_codes();
  p.sfa = a.scale_codes();
  p.sfb = b.scale_codes();
  if (!epilogue) p.c.assign(c.begin(), c.end());
  std::vector<std::uint32_t> d = emulate_gemm(prepared_->hopper, p);
  emulator::tensor_scale_epilogue(alpha, d, c_matrix(c, cols));
  return d;
}

}  // namespace blockscale::harness
