#!/usr/bin/env bash
# Configures and builds blockscale (Release, Ninja, ccache when present, all cores).
#   scripts/build.sh [--sanitize] [--debug] [--clang] [--build-dir DIR] [-- extra cmake args]
# --clang builds with Clang in build-clang/ (CPU parts only), the check that the bits do not
# depend on the compiler.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build_dir="$root/build"
build_type=Release
extra=()
while (($#)); do
  case "$1" in
    --sanitize) build_dir="$root/build-sanitize"; extra+=(-DBLOCKSCALE_SANITIZE=ON); build_type=RelWithDebInfo ;;
    --debug) build_type=Debug; build_dir="$root/build-debug" ;;
    --clang) build_dir="$root/build-clang"; extra+=(-DCMAKE_CXX_COMPILER=clang++ -DBLOCKSCALE_ENABLE_CUDA=OFF) ;;
    --build-dir) build_dir="$2"; shift ;;
    --) shift; extra+=("$@"); break ;;
    *) echo "build.sh: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done
cmake -S "$root" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE="$build_type" "${extra[@]}" >/dev/null
cmake --build "$build_dir" -j "$(nproc)" >&2
echo "$build_dir"
