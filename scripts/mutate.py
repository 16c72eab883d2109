#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Runs source mutants against a test command: does some test fail on each?

    scripts/mutate.py MUTANTS.json --build-dir DIR --target TARGET --test 'COMMAND' [--json FILE]

MUTANTS.json is a list of objects {"file": path from the repository root, "old": text, "new": text,
"note": optional words}. For each mutant the script replaces `old` by `new` in `file`, builds
TARGET in DIR (ninja), runs COMMAND in DIR through the shell, and restores the file, also when
interrupted. `old` must occur exactly once in the file: a text that also occurs elsewhere (in
another function, a comment) would mutate the wrong place and report a survivor that is no
mutant of the code meant. A mutant is
  killed    COMMAND exits nonzero (its last lines name the failing tests),
  survived  COMMAND exits 0: no test can tell the mutant from the code,
  no build  the mutated file does not compile (not a finding either way).
Afterwards the unmutated code is built again, so DIR is left as it was found.
Exit status: 0 when every mutant that built was killed, 1 when some survived, 2 on bad input.
"""
import argparse
import json
import os
import re
import signal
import subprocess
import sys

CTEST_FAILURE = re.compile(r"\s*\d+ - \S+ \((Failed|Timeout|Subprocess aborted|SEGFAULT|Exception|Not Run)\)")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def fail(message):
    print(f"mutate: {message}", file=sys.stderr)
    sys.exit(2)


def load_mutants(path):
    try:
        with open(path, encoding="utf-8") as f:
            mutants = json.load(f)
    except (OSError, ValueError) as e:
        fail(f"cannot read {path}: {e}")
    if not isinstance(mutants, list) or not mutants:
        fail(f"{path}: expected a non-empty JSON list of mutants")
    for i, m in enumerate(mutants):
        if not isinstance(m, dict) or not all(isinstance(m.get(k), str) for k in ("file", "old", "new")):
            fail(f"{path}: mutant {i} needs the strings file, old and new")
        if m["old"] == m["new"]:
            fail(f"{path}: mutant {i} changes nothing")
        source = os.path.join(ROOT, m["file"])
        try:
            with open(source, encoding="utf-8") as f:
                count = f.read().count(m["old"])
        except OSError as e:
            fail(f"mutant {i}: cannot read {m['file']}: {e}")
        if count != 1:
            fail(f"mutant {i}: its old text occurs {count} times in {m['file']}, not once")
    return mutants


def run(cmd, cwd):
    return subprocess.run(cmd, cwd=cwd, shell=isinstance(cmd, str), stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mutants")
    parser.add_argument("--build-dir", required=True)
    parser.add_argument("--target", required=True)
    parser.add_argument("--test", required=True, help="shell command run in the build directory")
    parser.add_argument("--json", help="also write the results here")
    args = parser.parse_args()
    if not os.path.isfile(os.path.join(args.build_dir, "build.ninja")):
        fail(f"{args.build_dir} is no ninja build directory")
    mutants = load_mutants(args.mutants)

    original = {}
    def restore(*_):
        for path, text in original.items():
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
        original.clear()
    signal.signal(signal.SIGINT, lambda *a: (restore(), sys.exit(130)))
    signal.signal(signal.SIGTERM, lambda *a: (restore(), sys.exit(143)))

    results = []
    try:
        for i, m in enumerate(mutants):
            source = os.path.join(ROOT, m["file"])
            with open(source, encoding="utf-8") as f:
                text = f.read()
            original[source] = text
            with open(source, "w", encoding="utf-8") as f:
                f.write(text.replace(m["old"], m["new"], 1))
            build = run(["ninja", args.target], args.build_dir)
            if build.returncode != 0:
                outcome, tail = "no build", build.stdout.strip().splitlines()[-3:]
            else:
                test = run(args.test, args.build_dir)
                outcome = "killed" if test.returncode != 0 else "survived"
                # GoogleTest's "[  FAILED  ] Suite.Test" lines, or ctest's list after "The following
                # tests FAILED:" ("  12 - name (Failed)"), so that the report names the failing tests.
                tail = [l for l in test.stdout.splitlines() if "[  FAILED  ]" in l or CTEST_FAILURE.match(l)][:8] \
                    or test.stdout.strip().splitlines()[-2:]
            restore()
            results.append({"mutant": i, "file": m["file"], "note": m.get("note", ""), "outcome": outcome, "tail": tail})
            print(f"[{i + 1}/{len(mutants)}] {outcome:8}  {m['file']}  {m.get('note', '')}", flush=True)
            for line in tail:
                print(f"            {line}")
    finally:
        restore()
        rebuilt = run(["ninja", args.target], args.build_dir)
        if rebuilt.returncode != 0:
            print("mutate: the unmutated code did not build again:\n" + rebuilt.stdout[-2000:], file=sys.stderr)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(results, f, indent=1)
    survived = [r for r in results if r["outcome"] == "survived"]
    killed = sum(r["outcome"] == "killed" for r in results)
    print(f"mutate: {killed} killed, {len(survived)} survived, "
          f"{sum(r['outcome'] == 'no build' for r in results)} did not build, of {len(results)}")
    return 1 if survived else 0


if __name__ == "__main__":
    sys.exit(main())
