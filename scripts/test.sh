#!/usr/bin/env bash
# Installs what is missing, builds and runs every CPU test (GPU tests skip without a GPU).
#   scripts/test.sh               the CI suite
#   scripts/test.sh --full        also the long sweeps (ctest label "exhaustive")
#   scripts/test.sh --sanitize    the CI suite under AddressSanitizer + UndefinedBehaviorSanitizer
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
full=0
build_args=()
for a in "$@"; do
  case "$a" in
    --full) full=1 ;;
    --sanitize) build_args+=(--sanitize) ;;
    *) echo "test.sh: unknown argument $a" >&2; exit 2 ;;
  esac
done
"$root/scripts/setup.sh"
build_dir=$("$root/scripts/build.sh" "${build_args[@]}" | tail -n 1)
cd "$build_dir"
label_args=(-LE exhaustive)
if ((full)); then label_args=(); fi
ctest --output-on-failure -j "$(nproc)" "${label_args[@]}"
# The find_package(blockscale) consumer: install to a scratch prefix, build and run the consumer.
"$root/tests/consumer/check.sh" "$build_dir"
