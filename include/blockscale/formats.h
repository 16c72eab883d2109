// SPDX-License-Identifier: Apache-2.0
// blockscale::formats: the number formats, their conversions and value types.
#pragma once

#include "blockscale/formats/bulk.h"
#include "blockscale/formats/convert.h"
#include "blockscale/formats/format.h"
#include "blockscale/formats/presets.h"
#include "blockscale/formats/types.h"
