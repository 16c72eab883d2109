#!/usr/bin/env bash
# Runs every GPU check of blockscale::gpu on a Hopper machine, in one go, and writes the logs to
# OUT_DIR: device facts, the host-only tests, the probe and GEMM agreement tests against the
# emulator (JSON lines of counts in agreement.jsonl), the cuBLASLt benchmark (bench.json), and the
# SASS mnemonic summary of the sm_90a and sm_100a kernels (cuobjdump). Each step has a time limit,
# so a hang costs that step only. Ends with a short summary table; exits 0 only when every step
# that ran exited 0.
#   tests/gpu/run_on_device.sh BIN_DIR OUT_DIR [tests|gemm|bench|profile|sass|all]
# gemm: the GEMM tests and the benchmark only. profile: Nsight Compute on one launch of the MXFP8
# GEMM at 8192^3 (f32 D): throughput, scheduler and warp-state sections, pipe utilisation and
# stall reasons, as text in profile.txt (needs ncu on the PATH).
# BIN_DIR holds gpu_descriptors_test, gpu_api_test, gpu_probes_test, gpu_gemm_test and
# bench_gpu_gemm (from a build with CUDA), plus any shared libraries they need.
set -uo pipefail
bin=$(cd "$1" && pwd)
out=$2
what=${3:-all}
case $what in
  tests | gemm | bench | profile | sass | all) ;;
  *) echo "run_on_device.sh: unknown mode '$what' (tests, gemm, bench, profile, sass or all)" >&2; exit 2 ;;
esac
mkdir -p "$out"
lt_dir=$(dirname "$(find /usr/local /opt /usr/lib -name 'libcublasLt.so.13*' 2>/dev/null | head -n 1)")
export LD_LIBRARY_PATH="$bin:${lt_dir}:${LD_LIBRARY_PATH:-}"
export BLOCKSCALE_GPU_REPORT="$out/agreement.jsonl"
: > "$BLOCKSCALE_GPU_REPORT"

{
  date -u +"date %Y-%m-%dT%H:%M:%SZ"
  nvidia-smi --query-gpu=name,driver_version,compute_cap,clocks.max.sm,clocks.sm,power.limit --format=csv
  nvcc --version | tail -n 2
  echo "cublasLt: $lt_dir"
  nproc
} > "$out/device.txt" 2>&1
cat "$out/device.txt"

last_rc=0
gemm_rc=0
failed_steps=0
step() {  # step NAME SECONDS COMMAND...
  local name=$1 limit=$2
  shift 2
  local t0=$SECONDS
  timeout "$limit" "$@" > "$out/$name.log" 2>&1
  local rc=$?
  last_rc=$rc
  ((rc != 0)) && ((failed_steps += 1))
  echo "step $name: exit $rc in $((SECONDS - t0)) s" | tee -a "$out/steps.txt"
  tail -n 3 "$out/$name.log"
}

if [[ $what == all || $what == tests ]]; then
  step descriptors 30 "$bin/gpu_descriptors_test"
  step api 30 "$bin/gpu_api_test"
  step probes 200 "$bin/gpu_probes_test" --gtest_output="json:$out/probes.json"
  step gemm 150 "$bin/gpu_gemm_test" --gtest_output="json:$out/gemm.json"
  gemm_rc=$last_rc
fi
if [[ $what == gemm ]]; then
  step gemm 150 "$bin/gpu_gemm_test" --gtest_output="json:$out/gemm.json"
  gemm_rc=$last_rc
fi
# A GEMM that hung in the tests would hang the benchmark too.
if [[ ($what == all || $what == bench || $what == gemm) && $gemm_rc -ne 124 ]]; then
  step bench 150 "$bin/bench_gpu_gemm" --benchmark_out="$out/bench.json" --benchmark_out_format=json
fi
if [[ $what == profile ]]; then
  # Clocks as found (--clock-control none: the card's settings stay as they are); launch 3 of the
  # benchmark's GEMM (after its warm-up launches): throughput, scheduler and warp-state sections,
  # pipe utilisation and the stall reasons per issued instruction.
  metrics='regex:^sm__pipe_.*_cycles_active\.avg\.pct_of_peak_sustained_active$'
  metrics+=',regex:^sm__inst_executed_pipe_.*\.avg\.pct_of_peak_sustained_active$'
  metrics+=',regex:^smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio$'
  step profile 200 ncu --clock-control none --kernel-name regex:gemm_sm90 --launch-skip 2 --launch-count 1 \
    --section SpeedOfLight --section ComputeWorkloadAnalysis --section SchedulerStats --section WarpStateStats \
    --section MemoryWorkloadAnalysis --section LaunchStats --section Occupancy --metrics "$metrics" \
    "$bin/bench_gpu_gemm" --benchmark_filter='blockscale_mxfp8_e4m3_f32/8192x8192x8192' --benchmark_min_time=0.05
fi
if [[ ($what == all || $what == sass) ]] && ! command -v cuobjdump > /dev/null; then
  echo "sass: cuobjdump is not on the PATH (it comes with the CUDA toolkit)" | tee -a "$out/steps.txt"
  ((failed_steps += 1))
elif [[ $what == all || $what == sass ]]; then
  # Per kernel: counts of the tensor-core and tcgen05 mnemonics (gpu.md §2 table, numerics.md d.3).
  for arch in sm_90a sm_100a; do
    cuobjdump -sass -arch "$arch" "$bin/gpu_api_test" > "$out/sass_$arch.txt" 2>&1
    awk -v arch="$arch" '
      /Function :/ { fn = $3 }
      {
        for (i = 1; i <= NF; ++i) {
          m = $i; sub(/\..*$/, "", m)
          if (m ~ /^(UTCQMMA|UTCOMMA|UTCHMMA|UTCIMMA|UTCCP|UTCBAR|UTCATOMSWS|LDTM|STTM|QGMMA|HGMMA|HMMA|QMMA|F2FP|WARPGROUP|SYNCS|UBLKCP|UTMALDG|FFMA|FMUL)$/) {
            key = fn " " m; n[key]++; fns[fn] = 1; ms[m] = 1
          }
        }
      }
      END {
        for (f in fns) {
          line = arch " " f ":"
          for (m in ms) if ((f " " m) in n) line = line " " m "=" n[f " " m]
          print line
        }
      }' "$out/sass_$arch.txt" | sort > "$out/sass_summary_$arch.txt"
    xz -f -9 "$out/sass_$arch.txt"
  done
  echo "sass: $(wc -l < "$out/sass_summary_sm_90a.txt") sm_90a kernels, $(wc -l < "$out/sass_summary_sm_100a.txt") sm_100a kernels"
fi

echo "==== summary"
[[ -f "$out/steps.txt" ]] && cat "$out/steps.txt"
if [[ -s "$out/agreement.jsonl" ]]; then
  python3 - "$out/agreement.jsonl" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
per = {}
for r in rows:
    k = (r["kind"], r["name"])
    o, m = per.get(k, (0, 0))
    per[k] = (o + r["outputs"], m + r["mismatches"])
bad = [(k, v) for k, v in per.items() if v[1]]
print(f"agreement: {len(per)} kernels, {sum(v[0] for v in per.values())} outputs, "
      f"{sum(v[1] for v in per.values())} mismatches; min outputs per kernel {min(v[0] for v in per.values())}")
for (kind, name), (o, m) in sorted(bad)[:20]:
    print(f"  MISMATCH {kind} {name}: {m} of {o}")
PY
fi
if [[ -s "$out/bench.json" ]]; then
  python3 - "$out/bench.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for b in d["benchmarks"]:
    extra = f" vs_cublaslt_block={b['vs_cublaslt_block']:.3f}" if "vs_cublaslt_block" in b else ""
    err = f" ERROR {b.get('error_message')}" if b.get("error_occurred") else ""
    print(f"{b['name']:45s} {b.get('real_time', 0):9.3f} ms  {b.get('TFLOPS', 0):7.1f} TFLOPS{extra}{err}")
PY
fi
if [[ -s "$out/sass_summary_sm_100a.txt" ]]; then
  grep -h "UTCQMMA\|UTCOMMA\|UTCHMMA" "$out/sass_summary_sm_100a.txt" | awk '{print $2, $3, $4, $5, $6}' | cut -c1-160 | head -n 12
fi
# Exit 0 only when every step that ran passed (a timed-out step counts as failed).
((failed_steps == 0))
