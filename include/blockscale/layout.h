// SPDX-License-Identifier: Apache-2.0
// blockscale::layout: sub-byte packing of element codes and every scale-factor storage layout.
#pragma once

#include "blockscale/layout/packing.h"
#include "blockscale/layout/scale_layout.h"
