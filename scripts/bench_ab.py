#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Times two builds of a Google Benchmark binary against each other in alternating runs.

    scripts/bench_ab.py OLD NEW [--filter REGEX] [--rounds N] [--together] [--json FILE]

Why alternating runs: the shared VMs this project is measured on drift by 10-20% within minutes
(docs/performance.md), so two binaries timed one after the other in separate blocks compare the
machine's hours, not the code. Each round runs OLD and NEW once (in alternating order, each on
the same pinned CPU), or with --together both at once on two CPUs, swapped every round, so that
both see the same neighbours. Reported per benchmark: the minimum and median real time of each
binary over the rounds and NEW / OLD of both (below 1: NEW is faster). Only each benchmark's
plain runs are read (repetition aggregates are skipped).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys


def fail(message):
    print(f"bench_ab: {message}", file=sys.stderr)
    sys.exit(2)


def start(binary, regex, cpu):
    """Starts one benchmark run pinned to `cpu`; its JSON report comes on stdout."""
    cmd = [binary, f"--benchmark_filter={regex}", "--benchmark_format=json"]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: os.sched_setaffinity(0, {cpu}))


def collect(proc, binary):
    """Waits for a run; returns {benchmark name: real time} of its plain (non-aggregate) runs."""
    out, err = proc.communicate()
    if proc.returncode != 0:
        fail(f"{binary} exited with {proc.returncode}: {err.strip()[-500:]}")
    if not out.strip():
        fail(f"{binary} printed no report: {err.strip()[-500:] or 'nothing on stderr either'}")
    try:
        report = json.loads(out)
    except json.JSONDecodeError as e:
        fail(f"{binary} did not print a Google Benchmark JSON report ({e})")
    times = {}
    for b in report.get("benchmarks", []):
        if b.get("run_type", "iteration") != "iteration" or "real_time" not in b:
            continue
        # With --benchmark_repetitions a name repeats: keep the fastest repetition of the run.
        name = b.get("run_name", b["name"])
        times[name] = min(times.get(name, float("inf")), float(b["real_time"]))
    if not times:
        fail(f"{binary} ran no benchmark matching the filter")
    return times


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("old", help="the baseline benchmark binary")
    parser.add_argument("new", help="the benchmark binary to compare with it")
    parser.add_argument("--filter", default=".", help="benchmark name regex (Google Benchmark's --benchmark_filter)")
    parser.add_argument("--rounds", type=int, default=4, help="rounds of one run of each binary (default 4)")
    parser.add_argument("--together", action="store_true", help="run both at once on two CPUs, swapped every round")
    parser.add_argument("--json", metavar="FILE", help="also write the per-round times and the summary as JSON")
    args = parser.parse_args()

    for binary in (args.old, args.new):
        if not (os.path.isfile(binary) and os.access(binary, os.X_OK)):
            fail(f"{binary} is not an executable file")
    if args.rounds < 1:
        fail(f"--rounds must be at least 1 (got {args.rounds})")
    cpus = sorted(os.sched_getaffinity(0))
    if args.together and len(cpus) < 2:
        fail("--together needs two CPUs; this process may use one")

    runs = {"old": [], "new": []}
    for r in range(args.rounds):
        first, second = ("old", "new") if r % 2 == 0 else ("new", "old")
        paths = {"old": args.old, "new": args.new}
        if args.together:
            procs = {first: start(paths[first], args.filter, cpus[0]), second: start(paths[second], args.filter, cpus[1])}
            for key in (first, second):
                runs[key].append(collect(procs[key], paths[key]))
        else:
            for key in (first, second):
                runs[key].append(collect(start(paths[key], args.filter, cpus[0]), paths[key]))
        print(f"bench_ab: round {r + 1} of {args.rounds} done", file=sys.stderr)

    names = [n for n in runs["old"][0] if all(n in t for side in runs.values() for t in side)]
    if not names:
        fail("the two binaries ran no benchmark of the same name")
    summary = []
    for n in names:
        row = {"name": n}
        for key in ("old", "new"):
            times = [t[n] for t in runs[key]]
            row[key] = {"min": min(times), "median": statistics.median(times), "times": times}
        row["new_over_old_min"] = row["new"]["min"] / row["old"]["min"]
        row["new_over_old_median"] = row["new"]["median"] / row["old"]["median"]
        summary.append(row)

    width = max(len(n) for n in names)
    mode = "both at once on two CPUs, swapped" if args.together else f"alternating on CPU {cpus[0]}"
    print(f"{args.rounds} rounds, {mode}; real time min / median (the binaries' unit), new / old")
    print(f"{'benchmark':<{width}}  {'old':>17}  {'new':>17}  {'min':>6}  {'median':>6}")
    for row in summary:
        o, w = row["old"], row["new"]
        print(f"{row['name']:<{width}}  {o['min']:8.3f}/{o['median']:8.3f}  {w['min']:8.3f}/{w['median']:8.3f}"
              f"  {row['new_over_old_min']:6.3f}  {row['new_over_old_median']:6.3f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"old": args.old, "new": args.new, "rounds": args.rounds, "together": args.together,
                       "filter": args.filter, "benchmarks": summary}, f, indent=1)


if __name__ == "__main__":
    main()
