// SPDX-License-Identifier: Apache-2.0
// blockscale::emulator: bit-exact CPU models of tensor-core instructions (../shared/docs/numerics.md) and of
// GEMM kernels built from them. See docs/emulator.md.
#pragma once

#include "blockscale/emulator/arith.h"
#include "blockscale/emulator/code_matrix.h"
#include "blockscale/emulator/gemm.h"
#include "blockscale/emulator/instruction.h"
#include "blockscale/emulator/library_fp8.h"
#include "blockscale/emulator/mma.h"
#include "blockscale/emulator/params.h"
#include "blockscale/emulator/reference_models.h"
#include "blockscale/emulator/sparse_gemm.h"
#include "blockscale/emulator/table.h"
