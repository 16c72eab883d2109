#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""scripts/split_k_table.py, which writes emulator/library_fp8_split_k_table.inc from grid
queries: on made-up query files it must write tables that decode (as library_fp8_split_k.cpp
decodes them: run lengths, '.' for "as the earlier table") to every split count it was given, and
refuse files that do not walk a full grid, split counts it cannot write, and a GPU it does not
know. The real tables are checked against the device records by emulator_library_split_k_test.

usage: split_k_table_test.py SCRIPTS_DIR SCRATCH_DIR
"""
import gzip
import importlib.util
import json
import os
import random
import re
import subprocess
import sys


def queries(ms, ns, ks, split, supported=lambda *_: True):
    rows = []
    for m in ms:
        for n in ns:
            for k in ks:
                for recipe in ("tensor", "tensor_fast", "rowwise", "block_1x128", "block_128x128"):
                    for out in ("f32", "bf16"):
                        if supported(m, n, k, recipe, out):
                            rows.append({"supported": True, "split_k": split(m, n, k, recipe, out), "m": m, "n": n,
                                         "k": k, "recipe": recipe, "out": out})
                        else:
                            rows.append({"supported": False, "status": 15, "m": m, "n": n, "k": k, "recipe": recipe,
                                         "out": out})
    return rows


def decode(inc, mod):
    """{(gpu, call, workspace, elements, recipe, d): symbols} from the generated C++."""
    tables = []
    pattern = re.compile(r'\{"(\w+)", "(\w+)", (\d+), "(\w+)", "(\w+)", "(\w+)", (-?\d+),\n((?:\s+"[^"]*"\n?)+)\}')
    for m in pattern.finditer(inc):
        form = "".join(re.findall(r'"([^"]*)"', m.group(8)))
        symbols = mod.decode_run_length(form)
        reference = int(m.group(7))
        if reference >= 0:
            symbols = mod.resolve(symbols, tables[reference][1])
        tables.append(((m.group(1), m.group(2), int(m.group(3)), m.group(4), m.group(5), m.group(6)), symbols))
    return dict(tables)


def main():
    scripts, scratch = sys.argv[1], sys.argv[2]
    os.makedirs(scratch, exist_ok=True)
    spec = importlib.util.spec_from_file_location("split_k_table", os.path.join(scripts, "split_k_table.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    script = os.path.join(scripts, "split_k_table.py")
    failures = []

    ms, ns, ks = [1, 16, 64], [8, 256], [128, 4096, 16384, 65536]
    rng = random.Random(5)
    truth = {}

    def split_of(key):
        def split(m, n, k, recipe, out):
            s = 1 if k < 16384 else rng.randint(1, 26)
            truth[key + (recipe, out, m, n, k)] = s
            return s
        return split

    def unsupported(m, n, k, recipe, out):
        return not (m == 1 and recipe.startswith("block"))

    files = []
    for gpu_name, gpu in (("NVIDIA H100 80GB HBM3", "h100"), ("NVIDIA H200", "h200")):
        for library, ws in (("torch", 1), ("cublaslt", 64)):
            for elements in ("e4m3xe4m3", "e4m3xe5m2"):
                key = (gpu, library, ws, elements)
                doc = {"gpu": gpu_name, "library": library, "workspace_bytes": ws << 20,
                       "queries": queries(ms, ns, ks, split_of(key), unsupported)}
                if elements != "e4m3xe4m3":  # files from before --elements have no such field
                    doc["elements"] = elements
                path = os.path.join(scratch, f"{gpu}_{library}_{elements}.json.gz")
                with gzip.open(path, "wt") as f:
                    json.dump(doc, f)
                files.append(path)
    inc = os.path.join(scratch, "table.inc")
    r = subprocess.run([sys.executable, script, "--provenance", "test", "--out", inc] + files, capture_output=True,
                       text=True)
    if r.returncode != 0:
        sys.exit(f"split_k_table.py failed: {r.stderr}")
    text = open(inc).read()
    if "constexpr std::int64_t kGridK[] = {128, 4096, 16384, 65536};" not in text:
        failures.append("grid values not written as given")
    tables = decode(text, mod)
    if len(tables) != 2 * 2 * 2 * 10:
        failures.append(f"{len(tables)} tables decoded, want 80")
    wrong = 0
    for (gpu, library, ws, elements, recipe, out, m, n, k), s in truth.items():
        i = (ms.index(m) * len(ns) + ns.index(n)) * len(ks) + ks.index(k)
        symbols = tables[(gpu, library, ws, elements, recipe, out)]
        want = "-" if (m == 1 and recipe.startswith("block")) else chr(ord("a") + s - 1)
        wrong += symbols[i] != want
    if wrong:
        failures.append(f"{wrong} of {len(truth)} split counts decode wrong")
    if text.count(", -1,\n") >= 80:
        failures.append("no table was written against an earlier one")

    # Refusals, each naming its rule.
    def refused(docs, message):
        paths = []
        for i, doc in enumerate(docs):
            paths.append(os.path.join(scratch, f"bad{i}.json"))
            json.dump(doc, open(paths[-1], "w"))
        r = subprocess.run([sys.executable, script, "--provenance", "x", "--out", os.path.join(scratch, "bad.inc")]
                           + paths, capture_output=True, text=True)
        if r.returncode == 0 or message not in r.stderr:
            failures.append(f"expected a refusal naming {message!r}, got exit {r.returncode}: {r.stderr!r}")

    good = {"gpu": "NVIDIA H100", "library": "torch", "workspace_bytes": 1 << 20,
            "queries": queries([16], [8, 16], [128], lambda *_: 2)}
    hole = dict(good, queries=good["queries"][:-10] + good["queries"][-9:])
    refused([hole], "does not walk the grid")
    refused([dict(good, queries=queries([16], [8, 16], [128], lambda *_: 27))], "outside 1 .. 26")
    refused([dict(good, gpu="NVIDIA B200")], "neither an H100 nor an H200")
    refused([good, good], "give the same GPU")
    refused([good, dict(good, workspace_bytes=64 << 20, library="cublaslt", queries=queries([16], [8], [128], lambda *_: 1))],
            "has another grid")

    if failures:
        sys.exit("split_k_table: " + "; ".join(failures))
    print(f"split_k_table: {len(truth)} split counts in 80 tables decode as given; 5 bad inputs refused")


if __name__ == "__main__":
    main()
