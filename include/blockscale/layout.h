// SPDX-License-Identifier: Apache-2.0
// blockscale::layout: sub-byte packing of element codes and every scale-factor storage layout,
// grouped (ragged MoE) scales included.
#pragma once

#include "blockscale/layout/grouped_scales.h"
#include "blockscale/layout/packing.h"
#include "blockscale/layout/scale_layout.h"
