// SPDX-License-Identifier: Apache-2.0
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "blockscale/formats/detail/ieee_mode.h"
#include "cli.h"

namespace {

void print_help() {
  std::printf("blockscale: reference and bit-exact emulator for block-scaled matrix multiply\n\n"
              "usage: blockscale <command> [options]   (blockscale help <command> for details)\n\ncommands:\n");
  for (const auto& [name, c] : blockscale::cli::commands()) {
    std::printf("  %-10s %s\n", name.c_str(), c.summary.c_str());
  }
}

}  // namespace

int main(int argc, char** argv) {
  // IEEE mode for the process: a -ffast-math library loaded with the CLI (crtfastmath) would start
  // it with subnormals flushed; OpenMP's threads, made later, inherit this thread's mode.
  const blockscale::detail::IeeeMode ieee;
  using namespace blockscale::cli;
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "help" || args[0] == "--help" || args[0] == "-h") {
    if (args.size() > 2) {
      std::fprintf(stderr, "blockscale: help takes at most one command, got '%s' after '%s'\n", args[2].c_str(),
                   args[1].c_str());
      return kExitUsage;
    }
    if (args.size() == 2 && args[1] == "help") {  // the help of help is the command list
      print_help();
      return kExitOk;
    }
    if (args.size() == 2) {
      const auto it = commands().find(args[1]);
      if (it == commands().end()) {
        std::fprintf(stderr, "blockscale: unknown command '%s'\n", args[1].c_str());
        return kExitUsage;
      }
      std::printf("%s\n", it->second.usage.c_str());
      return kExitOk;
    }
    print_help();
    return args.empty() ? kExitUsage : kExitOk;
  }
  const auto it = commands().find(args[0]);
  if (it == commands().end()) {
    std::fprintf(stderr, "blockscale: unknown command '%s' (try: blockscale help)\n", args[0].c_str());
    return kExitUsage;
  }
  // `blockscale <command> --help` (or -h) anywhere among its arguments: the command's help. An
  // option value that starts with "--" is written --option=value (Args), so --help is never one.
  for (std::size_t i = 1; i < args.size(); ++i) {
    if (args[i] == "--help" || args[i] == "-h") {
      std::printf("%s\n", it->second.usage.c_str());
      return kExitOk;
    }
  }
  try {
    return it->second.run(std::vector<std::string>(args.begin() + 1, args.end()));
  } catch (const UsageError& e) {
    std::fprintf(stderr, "blockscale %s: %s\n", args[0].c_str(), e.what());
    return kExitUsage;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "blockscale %s: error: %s\n", args[0].c_str(), e.what());
    return kExitUsage;
  }
}
