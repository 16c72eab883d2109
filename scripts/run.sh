#!/usr/bin/env bash
# The main job on its built-in default: installs what is missing, builds, and runs `blockscale demo`.
#   scripts/run.sh [demo options]   (see: build/tools/blockscale help demo)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
build_dir=$("$root/scripts/build.sh" | tail -n 1)
exec "$build_dir/tools/blockscale" demo "$@"
