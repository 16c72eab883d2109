// SPDX-License-Identifier: Apache-2.0
// blockscale::reference: the mathematical definition of mma_scaled, mma and matmul (cuda.tile
// semantics) that every other part of blockscale is checked against. docs/reference.md.
#pragma once

#include "blockscale/reference/dtype.h"
#include "blockscale/reference/exact_sum.h"
#include "blockscale/reference/hardware.h"
#include "blockscale/reference/mma.h"
#include "blockscale/reference/mma_scaled.h"
#include "blockscale/reference/numerics.h"
#include "blockscale/reference/operands.h"
#include "blockscale/reference/rules.h"
#include "blockscale/reference/tensor.h"
