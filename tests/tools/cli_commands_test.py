#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The commands and outputs that the other command-line tests do not reach:
  * `demo` (the main job of scripts/run.sh): its JSON parses, counts every output once in each
    mode's histogram, says what the table says, does not depend on the thread count, takes
    --m/--n/--k/--seed, and refuses bad sizes;
  * `models --name`: the text and the JSON of one instruction against its row in `models --json`,
    dense and sparse, and names that break a rule (exit 2, the rule named);
  * JSON text of strings that are not UTF-8 (paths are bytes): `golden verify --json` on files with
    random byte names gives JSON that a strict reader parses, each path decoded as Python decodes
    ill-formed UTF-8 (one U+FFFD per maximal subpart, Unicode 15 section 3.9), control characters
    escaped;
  * the environment variable BLOCKSCALE_EMULATOR_PATH: each path it names computes the same bits
    and is the one that runs (the step statistics are the path's), unset and `auto` take the
    widest path the CPU has, a path the CPU lacks and a value that names none exit 2, named;
  * unknown commands (exit 2).

usage: cli_commands_test.py BLOCKSCALE SCRATCH_DIR
"""
import json
import os
import random
import re
import shutil
import subprocess
import sys


def run(tool, args, expect=0, env=None):
    r = subprocess.run([tool, *args], capture_output=True, env=env)
    assert r.returncode == expect, (args, r.returncode, r.stdout[-2000:], r.stderr[-2000:])
    return r


def strict_json(data):
    """json.loads of bytes that must be UTF-8 (RFC 8259 section 8.1): no lossy decoding here."""
    return json.loads(data.decode("utf-8", "strict"))


def without_times(d):
    if isinstance(d, dict):
        return {k: without_times(v) for k, v in d.items() if k not in ("ms", "quantize_ms")}
    if isinstance(d, list):
        return [without_times(v) for v in d]
    return d


def check_demo(tool):
    d = strict_json(run(tool, ["demo", "--json"]).stdout)
    assert (d["m"], d["n"], d["k"], d["seed"]) == (128, 128, 1024, 2025), d
    assert d["seed_examples"] and all(e["ok"] and e["got"] == e["expect"] for e in d["seed_examples"]), d
    assert [f["name"] for f in d["formats"]] == ["MXFP8", "NVFP4"], d["formats"]
    for f in d["formats"]:
        modes = {m["mode"]: m for m in f["modes"]}
        assert list(modes) == ["exact", "sequential_f32", "hardware(sm_100a)"], list(modes)
        for name, m in modes.items():
            assert m["outputs"] == 128 * 128, m
            assert sum(m["ulp_histogram"].values()) == m["outputs"], (name, m)
            assert m["ulp_histogram"]["0"] + m["differ_from_exact"] == m["outputs"], (name, m)
            assert (m["max_ulp"] == 0) == (m["differ_from_exact"] == 0), (name, m)
        assert modes["exact"]["differ_from_exact"] == 0, modes["exact"]
    # The data must show what the demo is about: MXFP8's sequential chain and hardware model differ
    # from exact somewhere.
    assert all(m["differ_from_exact"] > 0 for m in d["formats"][0]["modes"][1:]), d["formats"][0]

    # The human table says the same numbers.
    text = run(tool, ["demo"]).stdout.decode()
    for f in d["formats"]:
        section = text[text.index(f"{f['name']}: "):]
        for m in f["modes"]:
            line = next(l for l in section.splitlines() if l.split() and l.split()[0] == m["mode"])
            fields = re.fullmatch(r"\s*(\S+)\s+\d+ms\s+(\d+) \(\s*[\d.]+%\)\s+(\d+)\s+([\d\s]+)", line)
            assert fields, line
            assert int(fields[2]) == m["differ_from_exact"] and int(fields[3]) == m["max_ulp"], (line, m)
            assert [int(v) for v in fields[4].split()] == list(m["ulp_histogram"].values()), (line, m)

    # The same bits on 1 and 3 threads; other sizes and seeds.
    for threads in ("1", "3"):
        again = strict_json(run(tool, ["demo", "--json"], env=dict(os.environ, OMP_NUM_THREADS=threads)).stdout)
        assert without_times(again) == without_times(d), threads
    small = strict_json(run(tool, ["demo", "--json", "--m", "64", "--n", "32", "--k", "256", "--seed", "7"]).stdout)
    assert (small["m"], small["n"], small["k"], small["seed"]) == (64, 32, 256, 7), small
    assert all(m["outputs"] == 64 * 32 for f in small["formats"] for m in f["modes"]), small
    assert without_times(small) != without_times(d)
    for args, rule in [(["--m", "0"], "option --m must be in 1..4096, got 0"),
                       (["--k", "100"], "--k must be a multiple of 32 (the MXFP8 block), got 100"),
                       (["--seed", "x"], "--seed")]:
        r = run(tool, ["demo", *args], expect=2)
        assert rule in r.stderr.decode(), (args, r.stderr)
    print("demo: JSON, table and thread counts agree; sizes, seeds and bad sizes")


def check_models_name(tool):
    rows = {r["id"]: r for r in strict_json(run(tool, ["models", "--json"]).stdout)}
    # (the name given, the instruction's name as the table spells it, its row, shape, sparse)
    names = [
        ("sm_100a tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.block32 m128n256k32 f32 e4m3 e2m1 ue8m0", None,
         "sm_100a.tcgen05.mxf8f6f4.block32.ue8m0", (128, 256, 32), False),
        ("sm_90a wgmma.mma_async.sync.aligned m64n64k32 f32 e5m2 e4m3", "sm_90a wgmma.mma_async m64n64k32 f32 e5m2 e4m3",
         "sm_90a.wgmma.fp8.f32", (64, 64, 32), False),
        ("sm_80 mma.sync.aligned m16n8k16 f32 bf16 bf16", None, "sm_80.mma.f16bf16.f32", (16, 8, 16), False),
        ("sm_90a mma.sp::ordered_metadata.sync.aligned m16n8k64 f32 e4m3 e4m3", None, "sm_90a.mma.fp8.f32",
         (16, 8, 64), True),
    ]
    for given, canonical, row_id, (m, n, k), sparse in names:
        name = canonical or given
        j = strict_json(run(tool, ["models", "--json", "--name", given]).stdout)
        assert j["name"] == name and (j["m"], j["n"], j["k"]) == (m, n, k), j
        assert j["row"]["id"] == row_id and j["row"] == rows[row_id], (name, j["row"]["id"])
        assert bool(j["sparse"]) == sparse, j["sparse"]
        if sparse:
            assert j["sparse"]["group"] == 4 and j["sparse"]["dense_form"].endswith("m16n8k32 f32 e4m3 e4m3"), j
        text = run(tool, ["models", "--name", given]).stdout.decode()
        row = j["row"]
        assert text.startswith(name + "\n"), text
        assert f"  row {row['id']} ({row['gpu']})\n" in text, text
        assert f"{row['algorithm']}, L={row['L']}, F={row['F']}, " in text and f"e_zero={row['e_zero']}" in text, text
        assert f"provenance for " in text and f": {j['provenance']}\n" in text, text
        assert ("  sparse: 2:4 along K" in text) == sparse, text
        if sparse:
            assert (f"  sparse: 2:4 along K; each output is {j['sparse']['dense_form']} on the {k // 2} stored values "
                    "and the B rows they select\n") in text, text
        # The rounding, and for the compiler-emulated fp8 mma.sync the add that joins its two HMMA
        # (numerics.md b.9): an FADD into an f32 D, an HADD into an f16 one.
        join = {"RZ-FP32": " +FADD", "RNE-FP16": " +HADD"}[row["rounding"]] if row["algorithm"].startswith("fp8->f16") else ""
        assert f", {row['rounding']}{join}, e_zero=" in text, (text, row)
        for h in row["hardware"]:
            assert f"  confirmed: {h['gpu']} " in text, (text, h)
    for name, rule in [
        ("sm_90a mma.sp.sync.aligned m16n8k32 f32 e4m3 e4m3 f32",
         "mma.sp without ::ordered_metadata is not modelled: use mma.sp::ordered_metadata in 'sm_90a mma.sp"),
        ("sm_91 mma.sync.aligned m16n8k16 f32 bf16 bf16", "unknown architecture 'sm_91' in 'sm_91 mma.sync"),
        ("sm_80 mma.sync.aligned m16n8k16 f32 e4m3 e4m3",
         "takes A f16|bf16 with B f16|bf16; A tf32 with B tf32, got A e4m3 and B e4m3"),
    ]:
        for extra in ([], ["--json"]):
            r = run(tool, ["models", *extra, "--name", name], expect=2)
            err = r.stderr.decode()
            assert err.startswith("blockscale models: ") and rule in err and r.stdout == b"", (name, err, r.stdout)
    r = run(tool, ["models", "--markdown", "--name", names[0][0]], expect=2)
    assert "--markdown prints the whole table" in r.stderr.decode(), r.stderr
    print(f"models --name: {len(names)} instructions (text and JSON against the table), 3 bad names")


def random_name(rng):
    """Bytes of a file name (no '/' or NUL): ASCII, control characters, well-formed UTF-8 of every
    length and range end, and ill-formed pieces (lone continuations, truncations, overlong forms,
    surrogates, above U+10FFFF, bytes that begin nothing)."""
    pieces = [
        lambda: bytes([rng.choice([c for c in range(0x20, 0x7F) if c != 0x2F])]),
        lambda: bytes([rng.randrange(1, 0x20)]),
        lambda: chr(rng.choice([0x80, 0x7FF, 0x800, 0xD7FF, 0xE000, 0xFFFD, 0xFFFF, 0x10000, 0x10FFFF,
                                rng.randrange(0x80, 0xD800), rng.randrange(0xE000, 0x110000)])).encode(),
        lambda: bytes([rng.randrange(0x80, 0xC0)]),
        lambda: chr(rng.choice([rng.randrange(0x80, 0x800), rng.randrange(0xE000, 0x110000)])).encode()[:-1],
        lambda: rng.choice([b"\xc0\x80", b"\xc1\xbf", b"\xe0\x80\x80", b"\xe0\x9f\xbf", b"\xf0\x80\x80\x80",
                            b"\xf0\x8f\xbf\xbf"]),
        lambda: bytes([0xED, rng.randrange(0xA0, 0xC0), rng.randrange(0x80, 0xC0)]),
        lambda: bytes([0xF4, rng.randrange(0x90, 0xC0), 0x80, 0x80]),
        lambda: bytes([rng.randrange(0xF5, 0x100)]),
    ]
    return b"".join(rng.choice(pieces)() for _ in range(rng.randrange(1, 9))) + b".txt"


def check_json_text_of_paths(tool, scratch):
    rng = random.Random(11)
    folder = os.path.join(scratch, "names").encode()
    os.makedirs(folder)
    names = set()
    while len(names) < 400:
        names.add(random_name(rng))
    for name in names:
        with open(os.path.join(folder, name), "wb") as f:  # not a golden file: each one is an error
            f.write(b"@golden 1\n")
    r = run(tool, ["golden", "verify", folder, "--json", "--quiet"], expect=2)
    report = strict_json(r.stdout)
    want = sorted((folder + b"/" + n).decode("utf-8", "replace") for n in names)
    got = sorted(f["path"] for f in report["files"])
    assert got == want, [(g, w) for g, w in zip(got, want) if g != w][:5]
    for f in report["files"]:
        assert f["error"] == f["path"] + ": @generator is missing", f
    ill_formed = sum(1 for n in names if "\ufffd" in n.decode("utf-8", "replace"))
    controls = sum(1 for n in names if any(c < 0x20 for c in n))
    assert ill_formed > 200 and controls > 100, (ill_formed, controls)
    print(f"JSON text: {len(names)} random byte paths ({ill_formed} not UTF-8, {controls} with control "
          "characters) parse strictly and decode as Python does")


def check_unknown_commands(tool):
    r = run(tool, ["frobnicate"], expect=2)
    assert r.stderr.decode() == "blockscale: unknown command 'frobnicate' (try: blockscale help)\n", r.stderr
    r = run(tool, ["help", "frobnicate"], expect=2)
    assert r.stderr.decode() == "blockscale: unknown command 'frobnicate'\n" and r.stdout == b"", r
    r = run(tool, [], expect=2)
    assert b"usage: blockscale <command>" in r.stdout, r.stdout
    r = run(tool, ["help", "help"])
    assert b"usage: blockscale <command>" in r.stdout, r.stdout
    r = run(tool, ["help", "demo", "extra"], expect=2)
    assert b"help takes at most one command" in r.stderr, r.stderr
    print("unknown commands: exit 2, named")


def check_emulator_path_env(tool, scratch):
    """GemmPath::automatic reads BLOCKSCALE_EMULATOR_PATH once per process (emulator/gemm.cpp)."""
    args = ["gemm", "--m", "40", "--n", "24", "--k", "160", "--data", "heavy_tailed", "--models", "sm_100a,sm_90a",
            "--json"]
    runs = {}
    for value in [None, "auto", "reference", "portable", "avx2", "avx512"]:
        env = {k: v for k, v in os.environ.items() if k != "BLOCKSCALE_EMULATOR_PATH"}
        if value is not None:
            env["BLOCKSCALE_EMULATOR_PATH"] = value
        out = os.path.join(scratch, f"path_{value}")
        r = subprocess.run([tool, *args, "--out", out], capture_output=True, env=env)
        if value in ("avx2", "avx512") and r.returncode != 0:
            # This CPU lacks the path: refused with the reason, never a silent fallback.
            assert r.returncode == 2 and f"the {value} GEMM path was requested, but this CPU lacks".encode() in r.stderr, r
            continue
        assert r.returncode == 0, (value, r.stderr[-2000:])
        numerics = {x["name"]: x for x in strict_json(r.stdout)["numerics"]}
        d = {name: open(os.path.join(out, f"{name}.npy"), "rb").read() for name in ("sm_100a", "sm_90a")}
        runs[value] = (numerics["sm_100a"]["steps"], d)
    bits = {value: d for value, (_, d) in runs.items()}
    assert all(d == bits[None] for d in bits.values()), "a path changed a bit"
    steps = {value: s for value, (s, _) in runs.items()}
    # The reference engine keeps no fast-path statistics; the fast paths count the same steps,
    # each split its own way between their tiers.
    assert steps["reference"] == {"exact": 0, "truncating": 0, "special": 0}, steps
    fast = [v for v in ("portable", "avx2", "avx512") if v in steps]
    assert len({sum(steps[v].values()) for v in fast}) == 1 and sum(steps["portable"].values()) > 0, steps
    widest = fast[-1]
    assert steps[None] == steps["auto"] == steps[widest], steps
    for bad in ["bogus", "AVX512", " avx2"]:
        env = dict(os.environ, BLOCKSCALE_EMULATOR_PATH=bad)
        r = subprocess.run([tool, *args], capture_output=True, env=env)
        assert r.returncode == 2, (bad, r)
        assert (f"BLOCKSCALE_EMULATOR_PATH must be auto, reference, portable, avx2 or avx512, got '{bad}'".encode()
                in r.stderr), r.stderr
    print(f"BLOCKSCALE_EMULATOR_PATH: {len(runs)} settings, the same bits, each path's own statistics "
          f"(widest here: {widest}); bad values exit 2, named")


def main():
    tool, scratch = sys.argv[1], sys.argv[2]
    shutil.rmtree(scratch, ignore_errors=True)
    os.makedirs(scratch)
    check_demo(tool)
    check_models_name(tool)
    check_json_text_of_paths(tool, scratch)
    check_emulator_path_env(tool, scratch)
    check_unknown_commands(tool)
    shutil.rmtree(scratch)


if __name__ == "__main__":
    main()
