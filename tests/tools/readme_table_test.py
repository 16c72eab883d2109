#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""README.md's instruction table against the emulator's (`blockscale models --json`): one line per
row, in table order, with the row's L, F (a dash for an fma chain, as `models --markdown` prints it:
F is no parameter of a chain of fp64 FMAs) and its hardware-confirmed outputs (the sum of its
evidence), so that README cannot fall behind a new row or a new measurement.

Usage: readme_table_test.py BLOCKSCALE_BINARY README
"""
import json
import re
import subprocess
import sys


def main():
    binary, readme = sys.argv[1], sys.argv[2]
    rows = json.loads(subprocess.run([binary, "models", "--json"], check=True, capture_output=True, text=True).stdout)
    lines = [l for l in open(readme).read().split("\n") if re.match(r"\| `[a-z0-9_.]+` \|", l)]
    failures = []
    ids = [re.match(r"\| `([^`]+)`", l).group(1) for l in lines]
    if ids != [r["id"] for r in rows]:
        failures.append(f"README lists {len(ids)} rows, the table has {len(rows)}: "
                        f"missing {sorted(set(r['id'] for r in rows) - set(ids))}, "
                        f"extra {sorted(set(ids) - set(r['id'] for r in rows))} (or the order differs)")
    for r, line in zip(rows, lines):
        cells = [c.strip() for c in line.strip("|").split(" | ")]
        hw = sum(h["outputs"] for h in r["hardware"])
        want = {"L": str(r["L"]), "F": "-" if r["algorithm"] == "fma chain" else str(r["F"]), "hardware": f"{hw:,}" if hw else "-"}
        got = {"L": cells[4], "F": cells[5], "hardware": cells[-1]}
        if got != want:
            failures.append(f"{r['id']}: README has {got}, the table {want}")
    for f in failures:
        print("FAIL", f)
    print(f"{len(rows)} rows against README, {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
