// SPDX-License-Identifier: Apache-2.0
// Reporting a conformance session: human tables, JSON, and the Markdown of docs/conformance.md.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "blockscale/harness/conform.h"
#include "blockscale/harness/discover.h"
#include "blockscale/harness/external.h"
#include "blockscale/harness/sparse_mm.h"

namespace blockscale::harness {

// Everything one `blockscale conform` invocation measured.
struct Session {
  DeviceDescription device;
  std::string date;     // UTC
  std::string command;  // the command line, for the record
  std::optional<ConformReport> conform;
  std::vector<Discovery> discoveries;
  std::vector<ExternalStudy> external;
  std::string external_note;  // why an external study did not run, when it did not
  std::vector<SparseMmStudy> sparse_mm;  // torch._cslt_sparse_mm runs (--external-dir)
};

// The per-target table: target, cases, outputs, mismatches, worst ulps, status; then totals.
std::string conform_table(const ConformReport& r);
// Discovered parameters next to the table row's, with the verdicts.
std::string discovery_table(const Discovery& d);
// Each external run with its best schedules.
std::string external_table(const std::vector<ExternalStudy>& studies);

std::string to_json(const Session& s);
std::string to_markdown(const Session& s);

}  // namespace blockscale::harness
