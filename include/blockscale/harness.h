// SPDX-License-Identifier: Apache-2.0
// blockscale::harness: the conformance harness behind `blockscale conform` (docs/conformance.md).
#pragma once

#include "blockscale/harness/cases.h"
#include "blockscale/harness/compare.h"
#include "blockscale/harness/conform.h"
#include "blockscale/harness/device.h"
#include "blockscale/harness/discover.h"
#include "blockscale/harness/external.h"
#include "blockscale/harness/failures.h"
#include "blockscale/harness/probes.h"
#include "blockscale/harness/report.h"
#include "blockscale/harness/sparse_mm.h"
#include "blockscale/harness/target.h"
