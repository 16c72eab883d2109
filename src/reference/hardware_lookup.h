// SPDX-License-Identifier: Apache-2.0
// Internal: registry lookups for the operations (throw RuleError(no_model) when absent).
#pragma once

#include <string>

#include "blockscale/reference/hardware.h"
#include "blockscale/reference/rules.h"

namespace blockscale::reference::detail {

ScaledMmaModel find_scaled_mma_model(const std::string& name);
MmaModel find_mma_model(const std::string& operation, const std::string& name);

}  // namespace blockscale::reference::detail
