// SPDX-License-Identifier: Apache-2.0
// blockscale::layout: sub-byte packing of element codes and every scale-factor storage layout,
// grouped (ragged MoE) scales included, and the SM90 mixed-input weight interleaves.
#pragma once

#include "blockscale/layout/grouped_scales.h"
#include "blockscale/layout/packing.h"
#include "blockscale/layout/scale_layout.h"
#include "blockscale/layout/weight_interleave.h"
