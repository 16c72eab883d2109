#!/usr/bin/env bash
# `blockscale conform` as a user runs it on a machine without a GPU (CI):
#   cli_test.sh BLOCKSCALE_BINARY SCRATCH_DIR
set -u
bin=$1
scratch=$2
rm -rf "$scratch"
mkdir -p "$scratch"
fail=0
expect() {  # expect STATUS DESCRIPTION COMMAND...
  local want=$1 what=$2
  shift 2
  "$@" > "$scratch/out.txt" 2>&1
  local got=$?
  if [[ $got -ne $want ]]; then
    echo "FAIL: $what: exit $got, expected $want"
    sed 's/^/    /' "$scratch/out.txt" | tail -n 20
    fail=1
  else
    echo "ok: $what (exit $got)"
  fi
}

# Without a GPU (or without CUDA in the build) the command says so and exits 3. A machine with a
# GPU reaches the sweep instead; the check is then skipped.
"$bin" conform --kernels 'no such kernel' > "$scratch/nogpu.txt" 2>&1
status=$?
if grep -q "no GPU to test" "$scratch/nogpu.txt"; then
  [[ $status -eq 3 ]] || { echo "FAIL: no GPU: exit $status, expected 3"; fail=1; }
  grep -q -- "--self-test" "$scratch/nogpu.txt" || { echo "FAIL: the no-GPU message does not point at --self-test"; fail=1; }
  echo "ok: no GPU -> exit 3"
else
  echo "skip: a GPU is present ($(head -n 1 "$scratch/nogpu.txt"))"
fi

# The self-test: every target agrees with itself; JSON and Markdown are written.
expect 0 "self-test agrees" "$bin" conform --self-test --outputs 4096 --quiet --json "$scratch/st.json" \
  --markdown "$scratch/st.md"
grep -q '"mismatches": 0, "failed": false' "$scratch/st.json" || { echo "FAIL: JSON lacks the zero-mismatch summary"; fail=1; }
grep -q '| `sm_90a wgmma.mma_async m64n8k32 f32 e4m3 e4m3` |' "$scratch/st.md" || { echo "FAIL: Markdown lacks the wgmma row"; fail=1; }

# A perturbed self-test device must be caught (exit 1), and its failures saved as golden-vector files
# whose expected outputs are the device's bits: `blockscale golden verify` reproduces each failure on
# this CPU (exit 1), every case of a file being one of the mismatches.
expect 1 "perturbed F is caught" "$bin" conform --self-test --perturb fraction-bits --kernels 'wgmma.*f32 e4m3 e4m3' \
  --outputs 4096 --quiet --save-failures "$scratch/failures"
n=$(ls "$scratch/failures"/*.txt 2>/dev/null | wc -l)
[[ $n -gt 0 ]] || { echo "FAIL: no failure files written"; fail=1; }
first=$(ls "$scratch/failures" | head -n 1)
head -n 1 "$scratch/failures/$first" | grep -qx '@golden 1' || { echo "FAIL: $first is not a golden file"; fail=1; }
grep -qx '@data self-test' "$scratch/failures/$first" || { echo "FAIL: $first lacks '@data self-test'"; fail=1; }
grep -q '^# case 0: tile [0-9]*, output D\[[0-9]*\]\[[0-9]*\]: device 0x[0-9A-F]*, emulator model 0x' \
  "$scratch/failures/$first" || { echo "FAIL: $first lacks the note of case 0"; fail=1; }
expect 1 "golden verify reproduces a saved failure" "$bin" golden verify "$scratch/failures/$first"
awk '$1 == "FAIL" && $2 > 0 && $2 == $4 { ok = 1 } END { exit !ok }' "$scratch/out.txt" ||
  { echo "FAIL: golden verify does not report every case of $first as a mismatch"; sed 's/^/    /' "$scratch/out.txt" | head; fail=1; }
grep -q 'd: expected .*, blockscale gives ' "$scratch/out.txt" || { echo "FAIL: no device-vs-model detail"; fail=1; }
expect 1 "golden verify reproduces the whole directory" "$bin" golden verify "$scratch/failures"
grep -q "^$n files, .* $n files failed (0 malformed" "$scratch/out.txt" ||
  { echo "FAIL: golden verify of the directory:"; tail -n 1 "$scratch/out.txt"; fail=1; }
# GEMM failures (a wrong promotion FMA) verify the same way.
expect 1 "perturbed promotion FMA is caught" "$bin" conform --self-test --perturb promotion-fma --kernels 'gemm mxfp8' \
  --data probes --quiet --save-failures "$scratch/gemm-failures"
ls "$scratch/gemm-failures"/*.k*.f32.txt > /dev/null 2>&1 || { echo "FAIL: no GEMM failure files written"; fail=1; }
expect 1 "golden verify reproduces the GEMM failures" "$bin" golden verify "$scratch/gemm-failures"
# A corrupted or truncated failure file is refused (exit 2) with a message naming its line.
lines=$(wc -l < "$scratch/failures/$first")
sed "${lines}s/^./g/" "$scratch/failures/$first" > "$scratch/corrupt.txt"
expect 2 "a corrupted failure file" "$bin" golden verify "$scratch/corrupt.txt"
grep -q "corrupt.txt:$lines: field a: .* is not hexadecimal" "$scratch/out.txt" ||
  { echo "FAIL: the corrupted line is not named"; sed 's/^/    /' "$scratch/out.txt" | head -n 4; fail=1; }
head -c -3 "$scratch/failures/$first" > "$scratch/truncated.txt"
expect 2 "a truncated failure file" "$bin" golden verify "$scratch/truncated.txt"
grep -q "truncated.txt:$lines: field d (f32) needs 8 hex digits, got 6" "$scratch/out.txt" ||
  { echo "FAIL: the truncated line is not named"; sed 's/^/    /' "$scratch/out.txt" | head -n 4; fail=1; }
expect 1 "a rare one-ulp fault is caught" "$bin" conform --self-test --perturb output-lsb --kernels 'mma.sync.*k16 f32 bf16' \
  --outputs 20000 --quiet
expect 1 "C placement is caught" "$bin" conform --self-test --perturb c-placement --kernels 'm16n8k32 f32 e4m3 e4m3' \
  --data probes --quiet

# `--data all` is all four data sets, tiny included (the default leaves tiny out): a zero floor one
# binade off shows only on tiny products, so under `all` it must be caught.
expect 0 "--data all self-test" "$bin" conform --self-test --kernels 'wgmma.*f32 e4m3 e4m3' --outputs 4096 --data all \
  --quiet --json "$scratch/all.json"
grep -q '"data": "random,realistic,probes,tiny"' "$scratch/all.json" || { echo "FAIL: --data all is not the four sets"; fail=1; }
expect 0 "default data self-test" "$bin" conform --self-test --kernels 'wgmma.*f32 e4m3 e4m3' --outputs 4096 --quiet \
  --json "$scratch/default.json"
grep -q '"data": "random,realistic,probes"' "$scratch/default.json" || { echo "FAIL: the default is not random,realistic,probes"; fail=1; }
expect 0 "'all' inside a list, a set named twice" "$bin" conform --self-test --kernels 'wgmma.*f32 e4m3 e4m3' --outputs 4096 \
  --data tiny,all,random --quiet --json "$scratch/list.json"
grep -q '"data": "tiny,random,realistic,probes"' "$scratch/list.json" || { echo "FAIL: --data tiny,all,random is not each set once"; fail=1; }
expect 1 "a zero floor off by one is caught under --data all" "$bin" conform --self-test --perturb zero-floor \
  --kernels 'sm_90a (wgmma|mma.sync).* f32 (bf16|tf32)' --data all --outputs 20000 --quiet

# Discovery against the emulator recovers the table row; against a perturbed one it disagrees.
expect 0 "discovery agrees with the table" "$bin" conform --self-test --discover 'sm_90a wgmma.mma_async m64n8k32 f32 e4m3 e4m3' --quiet
expect 1 "discovery flags a wrong F" "$bin" conform --self-test --perturb fraction-bits --discover 'sm_90a wgmma.mma_async m64n8k32 f32 e4m3 e4m3' --quiet \
  --json "$scratch/discover.json" --markdown "$scratch/discover.md"
python3 - "$scratch/discover.json" <<'PY' || { echo "FAIL: the discovery JSON"; fail=1; }
import json, sys
d = json.load(open(sys.argv[1]))["discovery"][0]
assert d["instruction"] == "sm_90a wgmma.mma_async m64n8k32 f32 e4m3 e4m3" and d["disagrees"] is True, d
items = {i["parameter"]: i for i in d["items"]}
assert (items["fraction bits F"]["discovered"], items["fraction bits F"]["table"]) == ("12", "13"), items
assert items["fraction bits F"]["verdict"] == "DISAGREES", items["fraction bits F"]
assert [p for p, i in items.items() if i["verdict"] == "DISAGREES"] == ["fraction bits F"], items
PY
grep -q '^| fraction bits F | 12 | 13 | DISAGREES |' "$scratch/discover.md" || { echo "FAIL: the discovery Markdown"; fail=1; }
# The candidate row F = 12 (--model-override) is the perturbed device: discovery agrees with it.
# The output rounding is then undetermined (a quarter ulp is below the sum's F = 12 bits), not a
# disagreement.
expect 0 "discovery agrees with a candidate row" "$bin" conform --self-test --perturb fraction-bits \
  --discover 'sm_90a wgmma.mma_async m64n8k32 f32 e4m3 e4m3' --model-override 'm64n8k32 f32 e4m3 e4m3$@F=12' \
  --quiet --json "$scratch/candidate.json"
grep -q '"model_override": "F=12"' "$scratch/candidate.json" || { echo "FAIL: the candidate is not recorded"; fail=1; }

# Runs written on a GPU machine (--external-dir): the committed H100 torch._cslt_sparse_mm samples
# reproduce (exit 0, JSON and Markdown), one flipped output bit is a mismatch (exit 1), and a
# directory without runs is bad input (exit 2).
samples="$(cd "$(dirname "$0")/../data/cusparselt_h100" && pwd)"
expect 0 "the cuSPARSELt samples reproduce" "$bin" conform --external-dir "$samples" --quiet --json "$scratch/sp.json" \
  --markdown "$scratch/sp.md"
grep -q '"file": "f16_gaussian_64x64x8192.sparse_mm".*"exact_slices": \[8\]' "$scratch/sp.json" ||
  { echo "FAIL: the JSON lacks the f16 run fitted to S = 8"; fail=1; }
grep -q '^#### External 2:4 sparse GEMMs' "$scratch/sp.md" || { echo "FAIL: the Markdown lacks the sparse table"; fail=1; }
mkdir -p "$scratch/flipped" "$scratch/no_runs"
run="$scratch/flipped/f16_gaussian_64x64x8192.sparse_mm"
cp "$samples/f16_gaussian_64x64x8192.sparse_mm" "$run"
size=$(stat -c %s "$run")
last=$(tail -c 1 "$run" | od -An -tu1 | tr -d ' ')
printf "\\x$(printf %02x $((last ^ 1)))" | dd of="$run" bs=1 seek=$((size - 1)) conv=notrunc status=none
expect 1 "a flipped output bit of a sparse run" "$bin" conform --external-dir "$scratch/flipped" --quiet
grep -q "MISMATCH: best S = 8, 24/25 outputs match" "$scratch/out.txt" || { echo "FAIL: the mismatch is not reported"; fail=1; }
# torch._scaled_mm runs (.scaled_mm): one that every schedule fits (ones, K = 128), and one the
# library refused; the refusal's text reaches the JSON, the Markdown and the table as it is.
mkdir -p "$scratch/scaled_mm"
python3 - "$scratch/scaled_mm" <<'PY'
import os, struct, sys
m, n, k = 2, 2, 128
head = (f"blockscale-scaled-mm 1 library=synthetic config=ones m={m} n={n} k={k} scaling=tensor fast_accum=0 "
        "out=f32 sa_count=1 sb_count=1\n")
body = b"\x38" * (m * k + n * k) + struct.pack("<2f", 1.0, 1.0) + struct.pack(f"<{m * n}f", *[128.0] * (m * n))
open(os.path.join(sys.argv[1], "ones.scaled_mm"), "wb").write(head.encode() + body)
open(os.path.join(sys.argv[1], "refused.scaled_mm"), "wb").write(
    b'blockscale-scaled-mm 1 library=synthetic config=refused error=NOT_SUPPORTED:"scale"\\x\n')
PY
expect 0 "scaled_mm runs: one fitted, one refused" "$bin" conform --external-dir "$scratch/scaled_mm" \
  --json "$scratch/scaled_mm.json" --markdown "$scratch/scaled_mm.md"
grep -q '^    BIT-EXACT 4/4 match, worst 0 ulp: ' "$scratch/out.txt" && grep -q '^    not run: NOT SUPPORTED:"scale"\\x$' "$scratch/out.txt" ||
  { echo "FAIL: the text report of the runs"; fail=1; }
python3 - "$scratch/scaled_mm.json" <<'PY' || { echo "FAIL: the JSON of the runs"; fail=1; }
import json, sys
ones, refused = json.load(open(sys.argv[1]))["external"]
assert ones["config"] == "ones" and ones["bit_exact"] is True and len(ones["fits"]) >= 2, ones
assert all(f["matches"] == f["outputs"] == 4 for f in ones["fits"]), ones["fits"]
assert "neither cuBLASLt nor torch._scaled_mm" in ones["table"]["why_not"], ones["table"]
assert refused["error"] == 'NOT SUPPORTED:"scale"\\x' and refused["fits"] == [], refused
PY
grep -q '^| synthetic | refused | not run: NOT SUPPORTED:"scale"\\x | | | | |$' "$scratch/scaled_mm.md" ||
  { echo "FAIL: the Markdown of the runs"; fail=1; }
expect 2 "a directory without runs" "$bin" conform --external-dir "$scratch/no_runs" --quiet
grep -q "no .scaled_mm or .sparse_mm files" "$scratch/out.txt" || { echo "FAIL: the empty directory is not named"; fail=1; }

# Bad usage: exit 2 with a message naming the rule.
expect 2 "unknown data set" "$bin" conform --self-test --data nonsense
expect 2 "bad regular expression" "$bin" conform --self-test --kernels '('
expect 2 "--perturb without --self-test" "$bin" conform --perturb output-lsb
# A pattern that selects nothing (a typo) is not a passing sweep of nothing.
expect 2 "--kernels matching no target" "$bin" conform --self-test --kernels 'zzz-no-such-kernel' --quiet
grep -q "matches no target" "$scratch/out.txt" || { echo "FAIL: the no-match message"; fail=1; }
expect 2 "an empty --model-override" "$bin" conform --self-test --model-override '' --quiet
# Output paths are checked before the run, not after it.
expect 2 "--json in a missing directory" "$bin" conform --self-test --json "$scratch/no/such/dir/x.json" --quiet
grep -q "does not exist" "$scratch/out.txt" || { echo "FAIL: the missing-directory message"; fail=1; }
grep -q "targets:" "$scratch/out.txt" && { echo "FAIL: the sweep ran before the output path was checked"; fail=1; }
expect 2 "--markdown naming a directory" "$bin" conform --self-test --markdown "$scratch" --quiet
expect 2 "--save-failures naming a file" "$bin" conform --self-test --save-failures "$scratch/out.txt" --quiet
expect 2 "the interim --replay is gone" "$bin" conform --replay "$scratch/failures/$first"
exit $fail
