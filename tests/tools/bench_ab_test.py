#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""scripts/bench_ab.py against two stand-in benchmark binaries with known times.

    bench_ab_test.py SCRIPTS_DIR SCRATCH_DIR

Each stand-in prints a Google Benchmark JSON report whose real times come from a list (one per
call), records its call and the CPUs it may run on, and also reports a repetition aggregate with
a time below every other and a benchmark the other binary lacks (both must be left out). Checked: the
minima, medians and ratios in bench_ab's JSON, the alternating order and the CPU pinning of the
runs (alone and --together), and every bad input exiting 2 with a message that names it.
"""
import json
import os
import subprocess
import sys

scripts, scratch = sys.argv[1], sys.argv[2]
os.makedirs(scratch, exist_ok=True)
bench_ab = os.path.join(scripts, "bench_ab.py")
log = os.path.join(scratch, "calls.log")
failures = []


def check(condition, what):
    if not condition:
        failures.append(what)
        print(f"FAIL: {what}")


def stand_in(name, times, extra=True, exit_code=0, report=True):
    """Writes an executable that reports `times` in turn as benchmark bm/a."""
    path = os.path.join(scratch, name)
    counter = path + ".count"
    with open(counter, "w") as f:
        f.write("0")
    body = f"""#!{sys.executable}
import json, os, sys
with open({counter!r}) as f:
    i = int(f.read())
with open({counter!r}, "w") as f:
    f.write(str(i + 1))
with open({log!r}, "a") as f:
    f.write({name!r} + " " + ",".join(map(str, sorted(os.sched_getaffinity(0)))) + "\\n")
benchmarks = [{{"name": "bm/a", "run_name": "bm/a", "run_type": "iteration", "real_time": {times!r}[i]}}]
if {extra!r}:
    benchmarks.append({{"name": "bm/a_mean", "run_name": "bm/a", "run_type": "aggregate", "real_time": 0.001}})
    benchmarks.append({{"name": "bm/only_" + {name!r}, "run_type": "iteration", "real_time": 1.0}})
if {report!r}:
    print(json.dumps({{"context": {{}}, "benchmarks": benchmarks}}))
sys.exit({exit_code})
"""
    with open(path, "w") as f:
        f.write(body)
    os.chmod(path, 0o755)
    return path


def run(*args, cpus=None):
    if os.path.exists(log):
        os.remove(log)
    pre = (lambda: os.sched_setaffinity(0, cpus)) if cpus else None
    return subprocess.run([sys.executable, bench_ab, *args], capture_output=True, text=True, preexec_fn=pre)


def calls():
    with open(log) as f:
        return [line.split() for line in f]


available = sorted(os.sched_getaffinity(0))
out_json = os.path.join(scratch, "ab.json")

# Alternating on one CPU: old 10, 30, 20, 60 (min 10, median 25, mean 30); new 12, 18, 15, 3
# (min 3, median 13.5, mean 12).
old = stand_in("old", [10.0, 30.0, 20.0, 60.0])
new = stand_in("new", [12.0, 18.0, 15.0, 3.0])
r = run(old, new, "--rounds", "4", "--json", out_json)
check(r.returncode == 0, f"alternating run exits 0 (got {r.returncode}: {r.stderr})")
if r.returncode == 0:
    with open(out_json) as f:
        summary = json.load(f)["benchmarks"]
    check([b["name"] for b in summary] == ["bm/a"], f"only the common plain benchmark is reported: {summary}")
    b = summary[0]
    check(b["old"]["min"] == 10.0 and b["old"]["median"] == 25.0, f"old min / median 10 / 25: {b['old']}")
    check(b["new"]["min"] == 3.0 and b["new"]["median"] == 13.5, f"new min / median 3 / 13.5: {b['new']}")
    check(abs(b["new_over_old_min"] - 0.3) < 1e-12 and abs(b["new_over_old_median"] - 0.54) < 1e-12,
          f"ratios 0.3 and 0.54: {b}")
    order = [c[0] for c in calls()]
    check(order == ["old", "new", "new", "old", "old", "new", "new", "old"], f"alternating order: {order}")
    check(all(c[1] == str(available[0]) for c in calls()), f"every run pinned to CPU {available[0]}: {calls()}")
    check("bm/a" in r.stdout and "0.300" in r.stdout, f"table printed: {r.stdout}")

# Both at once on two CPUs, swapped every round.
if len(available) >= 2:
    old = stand_in("old", [5.0, 5.0])
    new = stand_in("new", [4.0, 4.0])
    r = run(old, new, "--rounds", "2", "--together")
    check(r.returncode == 0, f"--together exits 0 (got {r.returncode}: {r.stderr})")
    if r.returncode == 0:
        cpu_of = {}
        for name, cpu in calls():
            cpu_of.setdefault(name, []).append(cpu)
        a, b = str(available[0]), str(available[1])
        check(cpu_of == {"old": [a, b], "new": [b, a]}, f"--together swaps the CPUs each round: {cpu_of}")
else:
    print("skipped: --together needs two CPUs")

# Bad input: each exits 2 and names what is wrong.
good = stand_in("good", [1.0] * 8)
cases = [
    ((os.path.join(scratch, "absent"), good), None, "is not an executable file"),
    ((good, good, "--rounds", "0"), None, "--rounds must be at least 1"),
    ((good, stand_in("silent", [1.0], report=False)), None, "printed no report"),
    ((good, stand_in("crashing", [1.0], exit_code=3)), None, "exited with 3"),
    ((stand_in("plain1", [1.0] * 4, extra=False), stand_in("plain2", [1.0] * 4, extra=False), "--together"),
     {available[0]}, "--together needs two CPUs"),
]
for args, cpus, message in cases:
    r = run(*args, "--rounds", "1", cpus=cpus) if "--rounds" not in args else run(*args, cpus=cpus)
    check(r.returncode == 2 and message in r.stderr,
          f"{' '.join(os.path.basename(a) for a in args)}: exit 2 naming '{message}' (got {r.returncode}: {r.stderr.strip()})")

# A report whose benchmarks the other binary does not have.
lone = os.path.join(scratch, "lone")
with open(lone, "w") as f:
    f.write(f"#!{sys.executable}\nimport json\nprint(json.dumps({{'benchmarks': [{{'name': 'bm/z', 'run_type': 'iteration', 'real_time': 1.0}}]}}))\n")
os.chmod(lone, 0o755)
r = run(stand_in("plain3", [1.0], extra=False), lone, "--rounds", "1")
check(r.returncode == 2 and "no benchmark of the same name" in r.stderr, f"disjoint reports exit 2 (got {r.returncode}: {r.stderr})")

if failures:
    print(f"{len(failures)} check(s) failed")
    sys.exit(1)
print("bench_ab: all checks passed")
