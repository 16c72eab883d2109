#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A sub-matrix of a run of scripts/probe_sparse_mm.py, for committed test data.

Keeps rows ROWS of A and D and columns COLS of B and D (all of K), and adds to the header the
split-K slice count S that the probe sweep measured at the run's shape (`slices=S`) and the rows
and columns kept (`rows=`, `cols=`; 'all' keeps every one). Each output depends only on its row of
A and its column of B, so the sub-matrix's outputs are those of the run.

usage: cut_sparse_mm.py IN OUT SLICES ROWS COLS   (ROWS, COLS: comma-separated indices or 'all')
"""
import sys

WIDTH = {"f32": 4, "f16": 2, "bf16": 2, "e4m3": 1}


def main(src, dst, slices, rows, cols):
    raw = open(src, "rb").read()
    nl = raw.index(b"\n")
    head = raw[:nl].decode()
    meta = dict(kv.split("=", 1) for kv in head.split()[2:])
    m, n, k = int(meta["m"]), int(meta["n"]), int(meta["k"])
    wa, wd = WIDTH[meta["a"]], WIDTH[meta["out"]]
    a = raw[nl + 1:nl + 1 + m * k * wa]
    b = raw[nl + 1 + m * k * wa:nl + 1 + (m + n) * k * wa]
    d = raw[nl + 1 + (m + n) * k * wa:]
    assert len(d) == m * n * wd, "truncated run file"
    r = list(range(m)) if rows == "all" else [int(x) for x in rows.split(",")]
    c = list(range(n)) if cols == "all" else [int(x) for x in cols.split(",")]
    body = b"".join(a[i * k * wa:(i + 1) * k * wa] for i in r)
    body += b"".join(b[j * k * wa:(j + 1) * k * wa] for j in c)
    body += b"".join(d[(i * n + j) * wd:(i * n + j + 1) * wd] for i in r for j in c)
    extra = f" m={len(r)} n={len(c)} slices={slices} rows={rows} cols={cols} run_m={m} run_n={n}"
    kept = " ".join(kv for kv in head.split() if not kv.startswith(("m=", "n=")))
    with open(dst, "wb") as f:
        f.write((kept + extra + "\n").encode() + body)


if __name__ == "__main__":
    if len(sys.argv) != 6:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5])
