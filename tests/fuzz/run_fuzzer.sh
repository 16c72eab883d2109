#!/usr/bin/env bash
# Builds a libFuzzer harness with clang (AddressSanitizer and UndefinedBehaviorSanitizer on every
# library it links) and fuzzes it, starting from its committed corpus; then merges what it found
# back into that corpus, minimised to a set cover of the coverage edges.
#   tests/fuzz/run_fuzzer.sh [SECONDS] [BUILD_DIR]     default 600 s, build in <repo>/build-fuzz
# Environment: FUZZ_TARGET (golden: the golden-vector readers, corpus tests/fuzz/corpus, the
# default; run_files: the *.scaled_mm, *.sparse_mm and .npy readers, tests/fuzz/run_files_corpus),
# FUZZ_JOBS (parallel fuzzing processes, default 1), FUZZ_MAX_LEN (default 16384).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
seconds=${1:-600}
build=${2:-$root/build-fuzz}
jobs=${FUZZ_JOBS:-1}
target=${FUZZ_TARGET:-golden}
max_len=${FUZZ_MAX_LEN:-16384}
case $target in
  golden) corpus=$root/tests/fuzz/corpus ;;
  run_files) corpus=$root/tests/fuzz/run_files_corpus ;;
  *) echo "run_fuzzer.sh: FUZZ_TARGET=$target: golden or run_files" >&2; exit 2 ;;
esac
fuzzer=$build/tests/fuzz/${target}_fuzzer
command -v clang++ >/dev/null || { echo "run_fuzzer.sh: clang++ is needed (apt-get install clang)" >&2; exit 2; }

flags="-fsanitize=address,undefined -fsanitize=fuzzer-no-link -fno-sanitize-recover=undefined -fno-omit-frame-pointer -g -O1"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_CXX_FLAGS="$flags" \
  -DBLOCKSCALE_FUZZ=ON -DBLOCKSCALE_ENABLE_CUDA=OFF -DBLOCKSCALE_ENABLE_OPENMP=OFF \
  -DBLOCKSCALE_BUILD_BENCH=OFF -DBLOCKSCALE_BUILD_TOOLS=OFF >/dev/null
cmake --build "$build" --target "${target}_fuzzer" -j "$(nproc)"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/corpus" "$work/artifacts"
cp "$corpus"/* "$work/corpus/" 2>/dev/null || true
cd "$work"
# -max_total_time bounds the run; every crash input lands in artifacts/ and stops the run.
status=0
if ((jobs > 1)); then
  "$fuzzer" -max_total_time="$seconds" -max_len="$max_len" -timeout=10 -rss_limit_mb=4096 \
    -artifact_prefix="$work/artifacts/" -print_final_stats=1 -jobs="$jobs" -workers="$jobs" "$work/corpus" || status=$?
  cat fuzz-*.log 2>/dev/null | grep -E "stat::|DONE|ERROR" | tail -n 20 || true
else
  "$fuzzer" -max_total_time="$seconds" -max_len="$max_len" -timeout=10 -rss_limit_mb=4096 \
    -artifact_prefix="$work/artifacts/" -print_final_stats=1 "$work/corpus" 2>&1 | tail -n 25 || status=$?
fi
if ls "$work/artifacts/"* >/dev/null 2>&1; then
  mkdir -p "$root/build-fuzz-artifacts"
  cp "$work/artifacts/"* "$root/build-fuzz-artifacts/"
  echo "run_fuzzer.sh: crash inputs saved in $root/build-fuzz-artifacts" >&2
  exit 1
fi
# Minimise: a greedy set cover of the edges (hit counts ignored) over the old and new inputs, and
# replace the committed corpus with it.
mkdir -p "$work/merged"
"$fuzzer" -set_cover_merge=1 -use_counters=0 -max_len="$max_len" "$work/merged" "$corpus" \
  "$work/corpus" 2>&1 | tail -n 1
rm -f "$corpus"/*
cp "$work/merged"/* "$corpus/"
echo "corpus: $(ls "$corpus" | wc -l) files, $(du -sh "$corpus" | cut -f1)"
exit $status
