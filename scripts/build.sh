#!/usr/bin/env bash
# Configures and builds blockscale (Release, Ninja, ccache when present, all cores).
#   scripts/build.sh [--sanitize] [--debug] [--clang] [--aarch64] [--build-dir DIR] [-- extra cmake args]
# --clang builds with Clang in build-clang/ (CPU parts only), the check that the bits do not
# depend on the compiler. --aarch64 cross-builds the CPU parts for 64-bit Arm in build-aarch64/
# (g++-aarch64-linux-gnu; GoogleTest built for the target from Debian's sources in
# build-aarch64-deps/; tests run under qemu-user), the check that they do not depend on the ISA.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build_dir="$root/build"
build_type=Release
extra=()
aarch64=0
while (($#)); do
  case "$1" in
    --sanitize) build_dir="$root/build-sanitize"; extra+=(-DBLOCKSCALE_SANITIZE=ON); build_type=RelWithDebInfo ;;
    --debug) build_type=Debug; build_dir="$root/build-debug" ;;
    --clang) build_dir="$root/build-clang"; extra+=(-DCMAKE_CXX_COMPILER=clang++ -DBLOCKSCALE_ENABLE_CUDA=OFF) ;;
    --aarch64) build_dir="$root/build-aarch64"; aarch64=1 ;;
    --build-dir)
      if (($# < 2)) || [[ -z $2 ]]; then echo "build.sh: --build-dir needs a directory" >&2; exit 2; fi
      build_dir="$2"; shift ;;
    --) shift; extra+=("$@"); break ;;
    *) echo "build.sh: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done
if ((aarch64)); then
  # GoogleTest for the target, from the sources that Debian's libgtest-dev ships.
  deps="$root/build-aarch64-deps"
  toolchain="$root/cmake/toolchain-aarch64-linux-gnu.cmake"
  if [[ ! -f $deps/lib/cmake/GTest/GTestConfig.cmake ]]; then
    cmake -S /usr/src/googletest -B "$deps/build" -G Ninja -DCMAKE_TOOLCHAIN_FILE="$toolchain" \
      -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$deps" >/dev/null
    cmake --build "$deps/build" -j "$(nproc)" >&2
    cmake --install "$deps/build" >/dev/null
  fi
  # CPU parts only; the Python module and the benchmarks stay on the host build.
  extra+=(-DCMAKE_TOOLCHAIN_FILE="$toolchain" -DBLOCKSCALE_AARCH64_PREFIX="$deps" -DGTest_DIR="$deps/lib/cmake/GTest"
          -DBLOCKSCALE_ENABLE_CUDA=OFF -DBLOCKSCALE_BUILD_BENCH=OFF -DBLOCKSCALE_BUILD_PYTHON=OFF)
fi
cmake -S "$root" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE="$build_type" "${extra[@]}" >/dev/null
cmake --build "$build_dir" -j "$(nproc)" >&2
echo "$build_dir"
