#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""scripts/split_k_probe_report.py on probe files whose outputs are made here from a known cut:
it must find the cuts, the split-K counts and K tiles that give them and no others, and refuse
outputs that no cut explains. (The probe's design is checked on the emulator by
LibraryFp8.TheSplitKProbeSeesExactlyTheSlices; its hardware results are in docs/conformance.md.)

usage: split_k_probe_report_test.py SCRIPTS_DIR SCRATCH_DIR
"""
import json
import os
import subprocess
import sys

import numpy as np


def write(path, m, n, k, d):
    head = (f"blockscale-scaled-mm 1 library=test config=probe m={m} n={n} k={k} scaling=tensor fast_accum=0 out=f32 "
            f"sa_count=1 sb_count=1 repeats=2 repeats_identical=1\n")
    with open(path, "wb") as f:
        f.write(head.encode())
        f.write(bytes(m * k + n * k))  # the codes are not read
        f.write(np.ones(2, np.float32).tobytes())
        f.write(d.astype(np.float32).tobytes())


def main():
    script = os.path.join(sys.argv[1], "split_k_probe_report.py")
    scratch = sys.argv[2]
    os.makedirs(scratch, exist_ok=True)
    for f in os.listdir(scratch):
        os.remove(os.path.join(scratch, f))
    # Block probe, K = 41 blocks cut at 9, 18, 27 and 36: split-K 5 at 128-element tiles (at 256 the
    # slices would be 10 blocks). Output (i, j) tests block 2i + (j mod 2); columns repeat candidates.
    m, n, kb = 21, 4, 41
    cuts = (9, 18, 27, 36)

    def block_outputs(cut_at):
        d = np.zeros((m, n), np.float32)
        for i in range(m):
            for j in range(n):
                if 2 * i + j % 2 in cut_at:
                    d[i, j] = 2.0 ** -18
        return d

    block_file = os.path.join(scratch, "x_21x4x5248_probe_block.scaled_mm")
    write(block_file, m, n, kb * 128, block_outputs(cuts))
    # Step probe, K = 16 k32 steps: new chains at 4, 8, 12 (promotion) and 6 (a split).
    d = np.zeros((2, 8), np.float32)
    for i in range(2):
        for j in range(8):
            if 8 * i + j in (4, 6, 8, 12):
                d[i, j] = 2.0 ** -9
    write(os.path.join(scratch, "x_2x8x512_probe_step.scaled_mm"), 2, 8, 512, d)
    out = os.path.join(scratch, "report.json")
    r = subprocess.run([sys.executable, script, scratch, "--json", out], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    report = json.load(open(out))
    block = next(e for e in report["runs"] if e["run"].endswith("probe_block"))
    assert block["block_cuts"] == list(cuts) and block["slice_blocks"] == [9, 9, 9, 9, 5], block
    assert {(f["split_k"], f["k_tile"]) for f in block["fits"]} == {(5, 128)}, block["fits"]
    step = next(e for e in report["runs"] if e["run"].endswith("probe_step"))
    assert step["step_cuts"] == [4, 6, 8, 12], step
    assert "also at steps [6]" in r.stdout, r.stdout
    assert report["k_tiles"] == {"x": [128]}, report["k_tiles"]
    # Copies of one candidate that disagree, and an output that is neither 0 nor s, are refused.
    disagree = block_outputs(cuts)
    disagree[4, 1] = 0.0  # candidate 9 in column 1, not in column 3
    neither = block_outputs(cuts)
    neither[2, 0] = 1.0
    for d, message in ((disagree, "the copies of candidate 9 disagree"), (neither, "neither 0 nor")):
        write(block_file, m, n, kb * 128, d)
        r = subprocess.run([sys.executable, script, scratch], capture_output=True, text=True)
        assert r.returncode == 1 and message in r.stderr and "Traceback" not in r.stderr, (r.returncode, r.stderr)
    print("split_k_probe_report: cuts, split-K counts and K tiles found; inconsistent outputs refused")


if __name__ == "__main__":
    main()
