#!/usr/bin/env bash
# `blockscale golden` as users run it: cli_test.sh <blockscale binary> <source dir> <K&M data dir>.
# Checks: verify of every committed set (exit 0), a malformed file (exit 2, message with file and
# line), a mismatching file (exit 1, the line reported), show (text and JSON), gen of the GEMM sets
# byte-identical to golden/gemms, gen's and import-km's JSON summaries against the files they wrote,
# import-km's set verifying, bad arguments (exit 2).
set -uo pipefail
bin=$1
src=$2
km=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() {  # check <name> <expected exit> <grep pattern or ''> -- command...
  local name=$1 want=$2 pattern=$3
  shift 4
  "$@" >"$tmp/out" 2>&1
  local got=$?
  if [[ $got -ne $want ]]; then
    echo "FAIL $name: exit $got, expected $want"; cat "$tmp/out"; fail=1; return
  fi
  if [[ -n $pattern ]] && ! grep -q -- "$pattern" "$tmp/out"; then
    echo "FAIL $name: output lacks '$pattern'"; cat "$tmp/out"; fail=1; return
  fi
  echo "ok   $name"
}

check "verify golden/" 0 " 0 mismatches, 0 files failed" -- "$bin" golden verify "$src/golden" --quiet

# A malformed file: bad hex on line 12 of a copy.
f=$src/golden/layouts/scale_linear.txt
sed '12s/^./z/' "$f" >"$tmp/bad_hex.txt"
check "malformed file" 2 "bad_hex.txt:12: field rows: 'z" -- "$bin" golden verify "$tmp/bad_hex.txt"
# A truncated file.
head -n 20 "$f" >"$tmp/truncated.txt"
check "truncated file" 2 "truncated.txt: file ends after 10 cases, but @cases says 384" -- "$bin" golden verify "$tmp/truncated.txt"
# A wrong expected value on line 15: one mismatch, reported with its line.
awk 'NR==15 { $NF = "ffff" } { print }' "$f" >"$tmp/wrong.txt"
check "mismatching file" 1 "line 15 (case 4): offset: expected ffff" -- "$bin" golden verify "$tmp/wrong.txt"
check "mismatch JSON" 1 '"mismatches": 1' -- "$bin" golden verify "$tmp/wrong.txt" --json
# A manifest whose file changed.
cp -r "$src/golden/gemms" "$tmp/gemms"
chmod -R u+w "$tmp/gemms"
echo "# a stray comment" >>"$tmp/gemms/sm_100a_nvfp4_chain.txt"
check "manifest hash" 2 "sm_100a_nvfp4_chain.txt: SHA-256 mismatch" -- "$bin" golden verify "$tmp/gemms/manifest.json"

check "show" 0 "blockscale reproduces this case" -- "$bin" golden show "$src/golden/instructions/sm_100a.tcgen05.mxf4nvf4.block16.ue4m3.k64.e2m1.e2m1.txt" --case 3
# A field's count is shown after its type when it holds more than one value, never for one.
check "show a one-value field" 0 "^   c      f32 = 1$" -- "$bin" golden show "$src/golden/instructions/sm_100a.tcgen05.mxf4nvf4.block16.ue4m3.k64.e2m1.e2m1.txt" --case 3
check "show a two-value field" 0 "^   sa     f32\[2\] = " -- "$bin" golden show "$src/golden/gemms/cublaslt_row_x_row.txt" --case 0
check "show JSON" 0 '"match": true' -- "$bin" golden show "$src/golden/km/km_H100_E4M3_d_fp16.txt" --case 7 --json
if command -v python3 >/dev/null; then
  # show --json gives each field's own words: the fields' hex, in order, are the case's line.
  "$bin" golden show "$src/golden/km/km_H100_E4M3_d_fp16.txt" --case 7 --json >"$tmp/show.json" 2>/dev/null
  check "show JSON fields are the case's words" 0 "" -- python3 -c "import json; d=json.load(open('$tmp/show.json')); line=[l for l in open('$src/golden/km/km_H100_E4M3_d_fp16.txt') if l.strip() and l[0] not in '@#'][7].split(); assert [f['hex'] for f in d['fields']]==line, ([f['hex'] for f in d['fields']], line)"
  "$bin" golden verify "$src/golden/layouts" --json --quiet >"$tmp/v.json" 2>/dev/null
  check "verify JSON parses" 0 "" -- python3 -c "import json,sys; d=json.load(open('$tmp/v.json')); assert d['mismatches']==0 and d['file_count']==61, d['file_count']"
fi

# gen through the command line reproduces a committed set byte for byte.
"$bin" golden gen --op gemms --out "$tmp/gemms_again" >/dev/null 2>&1
check "gen gemms identical to golden/gemms" 0 "" -- diff -r "$tmp/gemms_again" "$src/golden/gemms"

# gen --json and import-km --json: each summary lists the files written, with their SHA-256 and cases.
summary_matches() {  # summary_matches <summary JSON file> <directory>: the summary is the manifest's
  python3 - "$1" "$2" <<'PY'
import hashlib, json, os, sys
d = json.load(open(sys.argv[1]))
s = d["sets"][0] if "sets" in d else d
m = json.load(open(os.path.join(sys.argv[2], "manifest.json")))
assert s["operation"] == m["operation"] and s["cases"] == m["cases"], (s, m)
assert [(f["path"], f["kind"], f["cases"], f["sha256"]) for f in s["files"]] == \
       [(f["path"], f["kind"], f["cases"], f["sha256"]) for f in m["files"]], (s, m)
for f in s["files"]:
    assert hashlib.sha256(open(os.path.join(sys.argv[2], f["path"]), "rb").read()).hexdigest() == f["sha256"], f
print(len(s["files"]), "files,", s["cases"], "cases")
PY
}
if command -v python3 >/dev/null; then
  "$bin" golden gen --op layout:tiled_8x4 --cases 20 --json --out "$tmp/gen_json" >"$tmp/gen.json" 2>/dev/null
  check "gen --json is the manifest" 0 "1 files, 20 cases" -- summary_matches "$tmp/gen.json" "$tmp/gen_json"
  "$bin" golden import-km "$km" --cases 3 --json --out "$tmp/km3" >"$tmp/km.json" 2>/dev/null
  check "import-km --json is the manifest" 0 "32 files, 96 cases" -- summary_matches "$tmp/km.json" "$tmp/km3"
fi
check "import-km" 0 "32 files, 96 cases ->" -- "$bin" golden import-km "$km" --cases 3 --out "$tmp/km3_text"
check "import-km set verifies" 0 "32 files, 96 cases, 0 mismatches, 0 files failed" -- "$bin" golden verify "$tmp/km3_text"
check "import-km of another directory" 2 "missing: every K&M result file is expected" -- "$bin" golden import-km "$tmp/km3" --out "$tmp/x"

check "gen without --op" 2 "gen needs --op" -- "$bin" golden gen --out "$tmp/x"
check "gen unknown op" 2 "unknown operation kind 'warp'" -- "$bin" golden gen --op warp:drive --out "$tmp/x"
check "gen bad data" 2 "--data must be" -- "$bin" golden gen --op layouts --data noise --out "$tmp/x"
# A second set into the first one's directory: the first set's file would make the new set fail
# its own verification, so gen refuses it and writes nothing.
"$bin" golden gen --op convert:f32:e4m3 --data random --cases 3 --out "$tmp/two_sets" >/dev/null 2>&1
check "gen into another set's directory" 2 "holds f32_to_e4m3.txt, which this set does not write" -- \
  "$bin" golden gen --op convert:f32:bf16 --data random --cases 3 --out "$tmp/two_sets"
check "the first set still verifies" 0 "0 mismatches, 0 files failed" -- "$bin" golden verify "$tmp/two_sets"
check "import-km of a path that is no directory" 2 "not a directory" -- "$bin" golden import-km "$tmp/no/such/dir" --out "$tmp/x"
check "show /dev/zero" 2 "not a text file (a NUL byte at offset 0)" -- "$bin" golden show /dev/zero
check "unknown subcommand" 2 "unknown subcommand 'fly'" -- "$bin" golden fly
check "show out of range" 2 "--case must be in" -- "$bin" golden show "$f" --case 100000
# A wrong path: a directory without golden files, a directory given as a file.
mkdir -p "$tmp/no_golden"
check "verify an empty directory" 2 "no golden files here" -- "$bin" golden verify "$tmp/no_golden"
check "show a directory" 2 "a directory, not a file" -- "$bin" golden show "$tmp/no_golden"
# A file declaring far more words than it holds: that file's error, the other files still verified.
printf '@golden 1\n@generator x\n@kind layout\n@op scale_layout linear\n@fields a:f32[65536] -> d:f32[16384]\n@cases 65536\n0\n' >"$tmp/bomb.txt"
check "a file declaring 40 GiB" 2 "62 files, 21184 cases, 0 mismatches, 1 files failed" -- "$bin" golden verify "$src/golden/layouts" "$tmp/bomb.txt"
exit $fail
