// SPDX-License-Identifier: Apache-2.0
// blockscale::quantize: block-scaled formats, the scale rules of OCP MX, cuBLAS/TransformerEngine,
// torchao and triton_kernels, NVFP4 recipes, and the BlockScaledTensor type.
#pragma once

#include "blockscale/quantize/block.h"
#include "blockscale/quantize/block_format.h"
#include "blockscale/quantize/fp8_scaled.h"
#include "blockscale/quantize/options.h"
#include "blockscale/quantize/tensor.h"
