#!/usr/bin/env bash
# Installs the build in $1 to a scratch prefix, then configures, builds and runs tests/consumer
# against it with find_package(blockscale).
set -euo pipefail
build_dir=$1
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build_dir" --prefix "$work/prefix" >/dev/null
cmake -S "$here" -B "$work/build" -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/build" >/dev/null
"$work/build/consumer"
echo "find_package(blockscale) consumer: OK"
