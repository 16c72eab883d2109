#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Reads the probe runs of scripts/probe_split_k.py and says where the library cut K.

For every *_probe_block.scaled_mm in DIR: the 128-element K blocks that start a new partial sum
(the output of the candidate is s = 2^-18 there, 0 elsewhere; every column that repeats a
candidate must agree), the slices they make, and the split-K counts S and K tiles G (128 .. 1024
elements) for which ceil-sized slices (ceil(K / (S * G)) tiles each, the last the rest) cut exactly
there. For every *_probe_step.scaled_mm: the k32 steps that start a new wgmma chain (promotion
boundaries and split boundaries). Needs numpy only: it runs on any machine.

usage: split_k_probe_report.py DIR [--json FILE]
"""
import glob
import json
import os
import sys

import numpy as np

PROBE_S_BLOCK = np.float32(2.0 ** -18)  # s of the block probe (2^-9 x 2^-9)
PROBE_S_STEP = np.float32(2.0 ** -9)    # s of the step probe (2^-9 x 1)


def read(path):
    with open(path, "rb") as f:
        head = f.readline().decode().split()
        if head[:2] != ["blockscale-scaled-mm", "1"]:
            raise ValueError(f"{path}: not a blockscale-scaled-mm 1 file")
        kv = dict(t.split("=", 1) for t in head[2:])
        if "error" in kv:
            return kv, None
        m, n, k = int(kv["m"]), int(kv["n"]), int(kv["k"])
        f.seek(m * k + n * k + 4 * (int(kv["sa_count"]) + int(kv["sb_count"])), os.SEEK_CUR)
        d = np.frombuffer(f.read(4 * m * n), np.float32)
        if d.size != m * n:
            raise ValueError(f"{path}: truncated")
        return kv, d.reshape(m, n)


def boundaries(d, per_row, limit, s):
    """Candidates c = per_row * i + (j mod per_row), 1 <= c <= limit: those whose output is s.
    Raises ValueError if an output is neither 0 nor s, or copies of a candidate disagree."""
    seen = {}
    for i in range(d.shape[0]):
        for j in range(d.shape[1]):
            c = per_row * i + j % per_row
            v = d[i, j]
            if not 1 <= c <= limit:
                if v != 0:
                    raise ValueError(f"output ({i}, {j}) tests no candidate but is {v}")
                continue
            if v != 0 and v != s:
                raise ValueError(f"output ({i}, {j}) is {v}, neither 0 nor {s}")
            if seen.setdefault(c, v) != v:
                raise ValueError(f"the copies of candidate {c} disagree")
    return sorted(c for c, v in seen.items() if v == s)


def checked(path, f, *args):
    try:
        return f(*args)
    except ValueError as e:
        raise ValueError(f"{path}: {e}") from None


def splits_that_cut(kb, cuts):
    """(S, G) pairs, G in K elements, whose ceil-sized slices start exactly at `cuts`."""
    fits = []
    for g in (1, 2, 4, 8):  # K tiles of 128 .. 1024 elements
        for S in range(1, 17):
            per = -(-kb // (S * g)) * g
            starts = list(range(per, kb, per))
            if starts == cuts and len(starts) + 1 == S:
                fits.append((S, 128 * g))
    return fits


def main(argv):
    if not argv or argv[0].startswith("-"):
        sys.exit(__doc__)
    out_json = argv[argv.index("--json") + 1] if "--json" in argv else None
    report = []
    tiles = {}  # recipe -> the K tiles every split run of it fits
    for path in sorted(glob.glob(os.path.join(argv[0], "*_probe_*.scaled_mm"))):
        name = os.path.basename(path)[: -len(".scaled_mm")]
        try:
            kv, d = read(path)
        except (KeyError, ValueError) as e:
            raise ValueError(f"{path}: malformed header ({e})") from None
        if d is None:
            print(f"{name}: refused: {kv['error']}")
            report.append({"run": name, "error": kv["error"]})
            continue
        k = int(kv["k"])
        entry = {"run": name, "k": k, "repeats_identical": kv.get("repeats_identical") == "1"}
        if name.endswith("_probe_block"):
            kb = k // 128
            cuts = checked(path, boundaries, d, 2, kb - 2, PROBE_S_BLOCK)
            sizes = [b - a for a, b in zip([0] + cuts, cuts + [kb])]
            fits = splits_that_cut(kb, cuts)
            entry.update(block_cuts=cuts, slice_blocks=sizes, fits=[{"split_k": S, "k_tile": G} for S, G in fits])
            if not cuts:
                print(f"{name}: no split ({kb} blocks of 128 in one partial sum)")
            else:
                what = ", ".join(f"split-K {S} at {G}-element K tiles" for S, G in fits) or "no ceil-sized split fits"
                print(f"{name}: slices of {'+'.join(map(str, sizes))} blocks of 128: {what}")
                recipe = name[: name.rfind("_", 0, name.rfind("_probe"))]
                tiles.setdefault(recipe, set(G for _, G in fits))
                tiles[recipe] &= set(G for _, G in fits)
        else:
            steps = k // 32
            cuts = checked(path, boundaries, d, 8, steps - 1, PROBE_S_STEP)
            off4 = [c for c in cuts if c % 4]
            entry.update(step_cuts=cuts)
            print(f"{name}: new wgmma chains at {len(cuts)} of {steps - 1} k32 steps"
                  f"{', all at multiples of 4' if not off4 else ', also at steps ' + str(off4)}")
        report.append(entry)
    for recipe, g in sorted(tiles.items()):
        print(f"{recipe}: the K tiles that fit every split: {sorted(g) or 'none'}")
    if out_json:
        with open(out_json, "w") as f:
            json.dump({"runs": report, "k_tiles": {r: sorted(g) for r, g in tiles.items()}}, f, indent=1)


if __name__ == "__main__":
    try:
        main(sys.argv[1:])
    except (OSError, ValueError) as e:  # a malformed file, or outputs no cut explains
        sys.exit(f"split_k_probe_report: {e}")
