#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Turn grid queries of cuBLASLt's split-K heuristic into the emulator's recorded table.

  split_k_table.py --provenance TEXT --out emulator/library_fp8_split_k_table.inc QUERY.json[.gz] ...

Each QUERY file is the --json output of `scripts/cublaslt_split_k.py query --shapes-file GRID`
on one GPU, for one library call (torch, or cuBLASLt with a workspace) and one element pair, over
a full grid of shapes (every M x N x K of three value lists, M outermost, K innermost). The output
is C++ included by emulator/library_fp8_split_k.cpp: the grid's values and, per (GPU, call,
workspace, elements, recipe, D type), the heuristic's split count S for every grid shape, with '-'
where cuBLASLt had no algorithm. Nothing is dropped but the algorithm ids and tiles, which the
emulator's models do not need (the K tile of a split is the schedule row's, docs/conformance.md).

Encoding (decoded by library_fp8_split_k.cpp): one symbol per shape in grid order, 'a' + S - 1 for
S = 1 .. 26 and '-' where cuBLASLt had no algorithm; a run of equal symbols is written as the symbol
followed by the run's length in decimal. A table is such a run-length string of its own symbols, or
names an earlier table (the one it differs least from) and has '.' wherever it agrees with it. The
script checks that decoding gives back every table before it writes.
"""
import argparse
import gzip
import json
import re
import sys



def symbol(query):
    if not query["supported"]:
        return "-"
    if not 1 <= query["split_k"] <= 26:
        sys.exit(f"split_k_table.py: split count {query['split_k']} is outside 1 .. 26")
    return chr(ord("a") + query["split_k"] - 1)

RECIPES = ["tensor", "tensor_fast", "rowwise", "block_1x128", "block_128x128"]
OUTS = ["f32", "bf16"]


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)


def gpu_key(name):
    for key in ("H100", "H200"):
        if key in name:
            return key.lower()
    sys.exit(f"split_k_table.py: GPU '{name}' is neither an H100 nor an H200")


def grid_of(queries):
    """The grid's value lists, after checking that the queries of each (recipe, D type) walk
    the full product M x N x K once, M outermost and K innermost."""
    ms = sorted({q["m"] for q in queries})
    ns = sorted({q["n"] for q in queries})
    ks = sorted({q["k"] for q in queries})
    expected = [(m, n, k) for m in ms for n in ns for k in ks]
    by_combo = {}
    for q in queries:
        by_combo.setdefault((q["recipe"], q["out"]), []).append(q)
    for combo, rows in by_combo.items():
        if [(q["m"], q["n"], q["k"]) for q in rows] != expected:
            sys.exit(f"split_k_table.py: {combo} does not walk the grid M x N x K in order")
    return (ms, ns, ks), by_combo


def encode_run_length(s):
    return re.sub(r"(.)\1+", lambda m: f"{m.group(1)}{len(m.group(0))}", s)


def decode_run_length(text):
    return "".join(c * int(n or 1) for c, n in re.findall(r"(\D)(\d*)", text))


def against(s, base):
    """s with '.' wherever it agrees with base."""
    return "".join("." if x == y else x for x, y in zip(s, base))


def resolve(text, base):
    return "".join(y if x == "." else x for x, y in zip(text, base))


def cxx_string(s, indent="     "):
    """A C++ string literal in pieces of at most 96 characters (adjacent literals concatenate)."""
    return "\n".join(f'{indent}"{s[i:i + 96]}"' for i in range(0, len(s), 96)) if s else f'{indent}""'


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("queries", nargs="+")
    p.add_argument("--provenance", required=True, help="GPUs, driver, cuBLASLt and torch versions, date")
    p.add_argument("--out", required=True)
    args = p.parse_args()

    grid, tables = None, []
    for path in args.queries:
        j = load(path)
        g, by_combo = grid_of(j["queries"])
        if grid is None:
            grid = g
        elif g != grid:
            sys.exit(f"split_k_table.py: {path} has another grid")
        call = j["library"]
        workspace_mib = j["workspace_bytes"] >> 20
        elements = j.get("elements", "e4m3xe4m3")  # files from before the option asked e4m3 only
        for recipe in RECIPES:
            for out in OUTS:
                rows = by_combo.get((recipe, out))
                if rows is None:
                    sys.exit(f"split_k_table.py: {path} lacks {recipe} {out}")
                s = "".join(symbol(q) for q in rows)
                tables.append((gpu_key(j["gpu"]), call, workspace_mib, elements, recipe, out, s))
    keys = [t[:6] for t in tables]
    if len(set(keys)) != len(keys):
        sys.exit("split_k_table.py: two files give the same GPU, call, workspace and elements")

    # Each table in the shorter of its own run-length form and its form against the earlier
    # table it differs least from.
    encoded = []
    for i, t in enumerate(tables):
        s = t[6]
        best = (-1, encode_run_length(s))
        for r in range(i):
            form = encode_run_length(against(s, tables[r][6]))
            if len(form) < len(best[1]):
                best = (r, form)
        decoded = decode_run_length(best[1])
        assert (resolve(decoded, tables[best[0]][6]) if best[0] >= 0 else decoded) == s
        encoded.append((t, best[0], best[1]))

    ms, ns, ks = grid
    with open(args.out, "w") as f:
        f.write("// SPDX-License-Identifier: Apache-2.0\n")
        f.write("// Generated by scripts/split_k_table.py from grid queries of scripts/cublaslt_split_k.py; do not\n")
        f.write("// edit. Included by emulator/library_fp8_split_k.cpp, whose comments give the encoding.\n")
        f.write(f"// {len(tables)} tables over {len(ms) * len(ns) * len(ks)} shapes.\n\n")
        f.write(f"constexpr const char* kRecordedProvenance =\n{cxx_string(args.provenance, '    ')};\n\n")
        for name, values in (("kGridM", ms), ("kGridN", ns), ("kGridK", ks)):
            f.write(f"constexpr std::int64_t {name}[] = {{{', '.join(map(str, values))}}};\n")
        f.write("\nconstexpr RecordedSplitKTable kTables[] = {\n")
        for (gpu, call, ws, elements, recipe, out, _), reference, form in encoded:
            f.write(f'    {{"{gpu}", "{call}", {ws}, "{elements}", "{recipe}", "{out}", {reference},\n{cxx_string(form)}}},\n')
        f.write("};\n")
    print(f"{len(tables)} tables, {sum(r < 0 for _, r, _ in encoded)} on their own, "
          f"{sum(len(form) for _, _, form in encoded)} characters -> {args.out}")


if __name__ == "__main__":
    main()
