// SPDX-License-Identifier: Apache-2.0
// The registry behind Numerics::hardware(model). The reference sits below the emulator in the
// dependency order (formats <- layout/quantize <- reference <- emulator), so it cannot call the
// emulator; instead the emulator registers its bit-exact models here by name, and mma_scaled / mma
// / matmul look the name up. A name that is not registered is a RuleError (Rule::no_model) that
// lists what is registered.
//
// A model computes ONE 2-D problem: the reference has already checked every rule, undone scale
// layouts, and split batches (and broadcasts) into 2-D slices. Operands arrive as 2-D Tensors
// ([M, K], [M, K_s], [K, N], [K_s, N], acc [M, N]); the model returns the [M, N] result in the
// accumulator's type. A model may reject shapes or types it does not implement by throwing
// std::invalid_argument (the message is passed through).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "blockscale/reference/tensor.h"

namespace blockscale::reference {

using ScaledMmaModel = std::function<Tensor(const Tensor& x, const Tensor& x_scale, const Tensor& y,
                                            const Tensor& y_scale, const Tensor& acc)>;
// mma models; matmul calls them with a +0 accumulator of the result type (tensor cores have no
// accumulator-free form).
using MmaModel = std::function<Tensor(const Tensor& lhs, const Tensor& rhs, const Tensor& acc)>;

struct ModelInfo {
  std::string name;         // what Numerics::hardware() takes, e.g. "sm100a.tcgen05.mxf8f6f4"
  std::string description;  // one line
};

// Registering a name again replaces the earlier model. Thread-safe. A name is one word without
// parentheses (parse_numerics reads it back from "hardware(<name>)"): std::invalid_argument else.
void register_scaled_mma_model(const ModelInfo& info, ScaledMmaModel model);
void register_mma_model(const ModelInfo& info, MmaModel model);

std::vector<ModelInfo> scaled_mma_models();
std::vector<ModelInfo> mma_models();

}  // namespace blockscale::reference
