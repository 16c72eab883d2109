// SPDX-License-Identifier: Apache-2.0
// `blockscale demo`: the main job of scripts/run.sh.
#include <cstdio>
#include <string>
#include <vector>

#include "cli.h"

namespace blockscale::cli {
namespace {

int run_demo(const std::vector<std::string>& argv) {
  Args args(argv, {}, {});
  (void)args;
  std::printf("blockscale demo: number formats and conversions\n\n");
  const auto& cmds = commands();
  int rc = cmds.at("formats").run({});
  if (rc != kExitOk) return rc;
  return cmds.at("convert").run({"--preset", "cuda"});
}

const Registrar demo_cmd({"demo", "the main job: a short end-to-end story on built-in data",
                          "blockscale demo\n  Shows the format table and converts edge-case values in every format and mode.",
                          run_demo});

}  // namespace
}  // namespace blockscale::cli
