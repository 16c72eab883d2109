#!/usr/bin/env bash
# Regenerates every committed golden set with a Debug build without OpenMP and compares the bytes
# with golden/ (the sets were made by a Release build with OpenMP): results must not depend on the
# build configuration. Runs under both conversion paths (BLOCKSCALE_SIMD=portable, and avx512 when
# the CPU has it).
#   regenerate_check.sh <source dir> <scratch build dir> <extracted K&M dir>
# ctest runs it under the label "exhaustive" (scripts/test.sh --full): building takes a while.
set -euo pipefail
src=$1
build=$2
km=$3
cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DBLOCKSCALE_ENABLE_OPENMP=OFF \
  -DBLOCKSCALE_ENABLE_CUDA=OFF -DBLOCKSCALE_BUILD_TESTS=OFF -DBLOCKSCALE_BUILD_BENCH=OFF >/dev/null
cmake --build "$build" --target blockscale_cli -j "$(nproc)"
bin=$build/tools/blockscale
paths=(portable)
if grep -q avx512f /proc/cpuinfo; then paths+=(avx512); fi
status=0
for p in "${paths[@]}"; do
  out=$(mktemp -d)
  BLOCKSCALE_SIMD=$p "$bin" golden gen --op all --out "$out" >/dev/null 2>&1
  per_file=$(grep -o '"cases": [0-9]*' "$src/golden/km/manifest.json" | sed -n 2p | grep -o '[0-9]*')
  BLOCKSCALE_SIMD=$p "$bin" golden import-km "$km" --cases "$per_file" --out "$out/km" >/dev/null 2>&1
  cp "$src/golden/FORMAT.md" "$out/"
  if diff -r "$src/golden" "$out" >/dev/null; then
    echo "ok: Debug, no OpenMP, BLOCKSCALE_SIMD=$p: every set byte-identical to golden/ ($(find "$out" -type f | wc -l) files)"
  else
    echo "FAIL: Debug, no OpenMP, BLOCKSCALE_SIMD=$p differs from golden/:"
    diff -rq "$src/golden" "$out" | head -n 20
    status=1
  fi
  rm -rf "$out"
done
exit $status
