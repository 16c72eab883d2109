#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The Python golden-vector module (python/blockscale/golden.py) and the committed sets.

  * Two readers, one verdict. The module's reader is written from golden/FORMAT.md alone; the
    library's (golden/file.h) is reached through the C ABI. On every committed file both accept,
    and the text each writes back is the file byte for byte. On thousands of corrupted copies of
    seven files (characters replaced, inserted and deleted, lines dropped, repeated and swapped,
    truncation, header values changed) both accept with the same text, or both reject with the
    same message. Messages are checked against FORMAT.md's own example and the rule each names.
  * Sets: every committed manifest is read, each file's SHA-256 and case count checked, and an
    unlisted, missing or altered file is refused.
  * The committed conversions against oracles that share no code with blockscale: the ml_dtypes
    preset's column against ml_dtypes 0.6.0's casts, the IEEE preset's nearest-even column of
    f16 and f32 destinations against numpy's casts (every case, NaN and Inf included), and every
    column of every file, stochastic ones included, on the cases whose input is finite and within
    the destination's range (and, for saturating columns, beyond it), against rounding in exact
    rational arithmetic with the mode's options as the @mode line spells them.
  * The committed wgmma fp8 -> f32 and tcgen05 kind::mxf8f6f4 block32 instruction files (probes,
    edge cases, random and realistic data) against tests/tools/gemm_oracle.py's truncated sums,
    on every case with finite operands, scales and C and a nonzero finite D.
  * Writing: a file made with GoldenFile.create from a committed file's inputs and perturbed
    outputs is verified by the library, which reports exactly the perturbed cases; generate()
    reproduces a committed file; bad arguments raise BlockscaleError naming the rule.

usage: test_golden.py PACKAGE_DIR GOLDEN_DIR
"""
import ctypes
import os
import random
import re
import sys
import tempfile
from fractions import Fraction

import numpy as np

sys.path.insert(0, sys.argv[1])
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
import blockscale as bs  # noqa: E402
import gemm_oracle as oracle  # noqa: E402  (exact rational arithmetic, none of blockscale's code)
from blockscale import golden  # noqa: E402

try:
    import ml_dtypes
except ImportError:  # scripts/setup.sh installs it; without it this test cannot run
    print("SKIP: ml_dtypes is not installed")
    sys.exit(77)

GOLDEN = sys.argv[2]
SETS = ("conversions", "quantization", "layouts", "instructions", "gemms", "km")


def library_parse(data, name):
    """The library's reader: ("ok", its canonical text) or ("error", its message)."""
    out = ctypes.c_char_p()
    status = bs._lib.bsc_golden_parse(data, len(data), name.encode(), ctypes.byref(out))
    if status == 0:
        return "ok", out.value.decode()
    assert status == 1, (status, bs._lib.bsc_last_error())
    return "error", bs._lib.bsc_last_error().decode()


def module_parse(data, name):
    try:
        return "ok", golden.parse(data, name).to_text()
    except golden.GoldenError as e:
        return "error", str(e)


def committed_files():
    for s in SETS:
        for n in sorted(os.listdir(os.path.join(GOLDEN, s))):
            if n.endswith(".txt"):
                yield os.path.join(GOLDEN, s, n)


def check_committed():
    files = cases = 0
    for path in committed_files():
        data = open(path, "rb").read()
        g = golden.read(path)
        assert g.to_text().encode() == data, path
        assert library_parse(data, path) == ("ok", data.decode()), path
        assert len(g.lines) == g.cases and all(g[f.name].shape[0] == g.cases for f in g.fields), path
        files, cases = files + 1, cases + g.cases
    listed = 0
    for s in SETS:
        members = golden.read_set(os.path.join(GOLDEN, s))
        manifest = golden.read_manifest(os.path.join(GOLDEN, s))
        assert sorted(members) == sorted(f["path"] for f in manifest["files"] if f["kind"] != "npy"), s
        assert sum(g.cases for g in members.values()) == manifest["cases"], s
        listed += len(members)
    assert listed == files == 444, (listed, files)
    print(f"committed: {files} files, {cases} cases; both readers accept each and write it back byte for byte; "
          f"{len(SETS)} manifests with their hashes and counts")


# ---- Two readers on corrupted files.

POOL = b"0123456789abcdefABCDEFgxz :[]->@#_1\t\r\x00\x80\xff\n"
HEADER_VALUES = [b"", b"1", b"2", b"01", b"-1", b"18446744073709551616", b"18446744073709551615", b"x", b"gemm",
                 b"hardware", b"self-test", b"mixed", b"a:e4m3 -> d:f32", b"a:e4m3[0] -> d:f32", b"a:u64[2] -> d:f32",
                 b"a:e4m3[65537] -> d:f32", b"a:e4m3[07] -> d:f32", b"A:e4m3 -> d:f32", b"a:e4m3 a:f32 -> d:f32",
                 b"-> d:f32", b"a:e4m3 -> -> d:f32", b"a:e4m3", b"a:e4m3 ->", b"a:fp8 -> d:f32", b"a -> d:f32",
                 b"a:e4m3[4 -> d:f32"]


def shrink(data, keep):
    """The header and the first `keep` cases, @cases adjusted: small enough for many mutants."""
    lines = data.split(b"\n")
    head = [ln for ln in lines if ln[:1] in (b"@", b"#")]
    body = [ln for ln in lines if ln and ln[:1] not in (b"@", b"#")][:keep]
    head = [b"@cases %d" % len(body) if ln.startswith(b"@cases ") else ln for ln in head]
    return b"\n".join(head + body) + b"\n"


def mutate(data, rng):
    if not data:
        return bytes([rng.choice(POOL)])
    lines = data.split(b"\n")
    kind = rng.randrange(9)
    if kind == 0:  # a character replaced
        i = rng.randrange(len(data))
        return data[:i] + bytes([rng.choice(POOL)]) + data[i + 1:]
    if kind == 1:  # a character inserted
        i = rng.randrange(len(data) + 1)
        return data[:i] + bytes([rng.choice(POOL)]) + data[i:]
    if kind == 2:  # a character deleted
        i = rng.randrange(len(data))
        return data[:i] + data[i + 1:]
    if kind == 3:  # a line dropped
        del lines[rng.randrange(len(lines))]
    elif kind == 4:  # a line repeated
        i = rng.randrange(len(lines))
        lines.insert(rng.randrange(len(lines) + 1), lines[i])
    elif kind == 5:  # two lines swapped
        i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
        lines[i], lines[j] = lines[j], lines[i]
    elif kind == 6:  # truncated
        return data[:rng.randrange(len(data))]
    elif kind == 7:  # a header line's value changed
        heads = [i for i, ln in enumerate(lines) if ln.startswith(b"@")]
        if not heads:
            return data
        i = rng.choice(heads)
        key = lines[i].split(b" ", 1)[0]
        lines[i] = key + b" " + rng.choice(HEADER_VALUES) if rng.random() < 0.9 else key
    else:  # a case field replaced by a neighbour's length or an odd token
        cases = [i for i, ln in enumerate(lines) if ln and ln[:1] not in (b"@", b"#")]
        if not cases:
            return data
        i = rng.choice(cases)
        tokens = lines[i].split(b" ")
        f = rng.randrange(len(tokens))
        tokens[f] = rng.choice([tokens[f][:-1], tokens[f] + b"0", tokens[f].upper(), b"0" + tokens[f], b"ff" * 9,
                                b"0", b"g" * len(tokens[f]), b"F" * len(tokens[f])])
        lines[i] = b" ".join(tokens)
    return b"\n".join(lines)


def check_differential():
    sources = ["conversions/f16_to_e4m3.txt", "conversions/f64_to_e2m3.txt", "quantization/nvfp4_nvfp4_te.txt", "layouts/scale_tiled_128x4.txt",
               "instructions/" + next(n for n in sorted(os.listdir(os.path.join(GOLDEN, "instructions")))
                                      if "mxf4nvf4" in n and n.endswith(".txt")),
               "gemms/torch_scaled_mm_1x128_x_1x128_split_k3.txt", "km/km_B200_E4M3_d_fp32.txt"]
    rng = random.Random(2026)
    counts = {"ok": 0, "error": 0}
    rules = set()
    for rel in sources:
        original = shrink(open(os.path.join(GOLDEN, rel), "rb").read(), 4)
        assert module_parse(original, rel)[0] == "ok", rel
        for _ in range(2500):
            data = original
            for _ in range(rng.choice((1, 1, 2, 3))):
                data = mutate(data, rng)
            mine, theirs = module_parse(data, rel), library_parse(data, rel)
            assert mine == theirs, f"readers disagree on {data!r}:\n  module:  {mine}\n  library: {theirs}"
            counts[mine[0]] += 1
            if mine[0] == "error":
                rules.add(re.sub(r"'[^']*'|[0-9]+", "", mine[1].split(": ", 1)[1]))
    # FORMAT.md's example of a message, and a few rules by name.
    e4m3 = b"@golden 1\n@generator t\n@kind instruction\n@op x\n@fields a:e4m3[32] -> d:f32\n@cases 1\n"
    assert module_parse(e4m3 + b"00" * 31 + b"0 00000000\n", "golden/x.txt") == \
        ("error", "golden/x.txt:7: field a (e4m3[32]) needs 64 hex digits, got 63")
    for text, message in [
            (e4m3.replace(b"@cases 1", b"@cases 2") + b"00" * 32 + b" 00000000\n",
             "x: file ends after 1 cases, but @cases says 2 (truncated?)"),
            (e4m3.replace(b"e4m3[32]", b"e2m3[2]") + b"0040 00000000\n",
             "x:7: field a element 1: '40' is not a e2m3 value (at most 0x3f)"),
            (e4m3 + b"00" * 32 + b" 00000000\r\n", "x:7: carriage return in line (line ends must be LF only)"),
            (e4m3.replace(b"@kind instruction\n", b""), "x: @kind is missing"),
            (b"\xef\xbb\xbf" + e4m3, "x:1: non-ASCII byte 0xEF (golden files are ASCII)"),
            (e4m3.replace(b"@op x\n", b"@op x\n@seed 3\n@data hardware\n") + b"00" * 32 + b" 00000000\n",
             "x: @seed with @data hardware: sets measured on a device are not drawn from a seed")]:
        assert module_parse(text, "x") == ("error", message) == library_parse(text, "x"), (text, module_parse(text, "x"))
    print(f"two readers: {sum(counts.values())} corrupted copies of {len(sources)} files, {counts['ok']} accepted "
          f"with equal text, {counts['error']} refused with equal messages ({len(rules)} distinct messages, numbers and quoted text aside); "
          "FORMAT.md's example message")


def check_sets():
    with tempfile.TemporaryDirectory() as tmp:
        files = golden.generate("pack:fp4_dense:e2m1", out=tmp)
        assert len(files) == 1 and golden.read_set(tmp)[files[0].name].to_text() == files[0].to_text()
        committed = open(os.path.join(GOLDEN, "layouts", files[0].name), "rb").read()
        assert files[0].to_text().encode() == committed, "generate() with seed 1 must give the committed file"
        path = os.path.join(tmp, files[0].name)
        for change, rule in [(lambda: open(os.path.join(tmp, "extra.txt"), "w").write("x"), "not listed"),
                             (lambda: os.remove(os.path.join(tmp, "extra.txt")) or open(path, "a").write("\n"),
                              "differs from the manifest"),
                             (lambda: os.remove(path), "cannot be read")]:
            change()
            try:
                golden.read_set(tmp)
                raise AssertionError("read_set accepted a set whose " + rule)
            except golden.GoldenError as e:
                assert rule in str(e), (rule, str(e))
    print("sets: generate() reproduces a committed file and writes a set read_set accepts; an unlisted, altered or "
          "missing file is refused")


# ---- The committed conversions against independent oracles.

# Destination formats as the specifications give them (OCP MX v1.0 section 5.3, IEEE 754, the
# NVIDIA tf32 and ue4m3 definitions): fraction bits, the least normal exponent, the largest finite
# value, signed, and an independent decoder of codes to float64.
def _e4m3(codes):
    return codes.astype(np.uint8).view(ml_dtypes.float8_e4m3fn).astype(np.float64)


DESTINATIONS = {
    "e4m3": (3, -6, Fraction(448), True, _e4m3),
    "e5m2": (2, -14, Fraction(57344), True, lambda c: c.astype(np.uint8).view(ml_dtypes.float8_e5m2).astype(np.float64)),
    "e2m3": (3, 0, Fraction(15, 2), True, lambda c: c.astype(np.uint8).view(ml_dtypes.float6_e2m3fn).astype(np.float64)),
    "e3m2": (2, -2, Fraction(28), True, lambda c: c.astype(np.uint8).view(ml_dtypes.float6_e3m2fn).astype(np.float64)),
    "e2m1": (1, 0, Fraction(6), True, lambda c: c.astype(np.uint8).view(ml_dtypes.float4_e2m1fn).astype(np.float64)),
    "ue8m0": (0, -127, Fraction(2) ** 127, False,
              lambda c: c.astype(np.uint8).view(ml_dtypes.float8_e8m0fnu).astype(np.float64)),
    "ue4m3": (3, -6, Fraction(448), False, lambda c: _e4m3(c & 0x7F)),
    "f16": (10, -14, Fraction(65504), True, lambda c: c.astype(np.uint16).view(np.float16).astype(np.float64)),
    "bf16": (7, -126, Fraction(2 ** 8 - 1, 2 ** 7) * Fraction(2) ** 127, True,
             lambda c: c.astype(np.uint16).view(ml_dtypes.bfloat16).astype(np.float64)),
    "tf32": (10, -126, Fraction(2 ** 11 - 1, 2 ** 10) * Fraction(2) ** 127, True,
             lambda c: c.astype(np.uint32).view(np.float32).astype(np.float64)),
    "f32": (23, -126, Fraction(2 ** 24 - 1, 2 ** 23) * Fraction(2) ** 127, True,
            lambda c: c.astype(np.uint32).view(np.float32).astype(np.float64)),
}
SOURCES = {"f32": lambda w: w.view(np.float32).astype(np.float64), "f64": lambda w: w.view(np.float64),
           "f16": lambda w: w.view(np.float16).astype(np.float64),
           "bf16": lambda w: w.view(ml_dtypes.bfloat16).astype(np.float64)}
ML_DTYPES = {"e4m3": ml_dtypes.float8_e4m3fn, "e5m2": ml_dtypes.float8_e5m2, "e2m3": ml_dtypes.float6_e2m3fn,
             "e3m2": ml_dtypes.float6_e3m2fn, "e2m1": ml_dtypes.float4_e2m1fn, "ue8m0": ml_dtypes.float8_e8m0fnu,
             "bf16": ml_dtypes.bfloat16, "f16": np.float16}


def neighbours(m, fraction_bits, emin):
    """The representable magnitudes down <= m < up (m > 0) of a binary format, and whether down's
    significand is even."""
    e = max(oracle.floor_log2(m), emin)
    quantum = Fraction(2) ** (e - fraction_bits)
    n = m // quantum
    return n * quantum, (n + 1) * quantum, n % 2 == 0


def oracle_value(x, mode, dst, r):
    """The value (a Fraction; its sign for zeros) the mode must give for finite x within range, or
    None where this oracle does not define it (NaN, Inf, overflow without saturation, zero and
    negative inputs of unsigned formats, ties of a format without fraction bits, e8m0 below its
    least value 2^-127 and on ml_dtypes' grid below 2^-126)."""
    bits, emin, vmax, signed, _ = DESTINATIONS[dst]
    if not np.isfinite(x):
        return None
    f = Fraction(float(x))
    if not signed and f <= 0:
        return None
    if mode["e8m0_subnormal_grid"] == "1" and abs(f) < Fraction(2) ** -126:
        return None
    m, negative = abs(f), f < 0 or (f == 0 and np.signbit(x))
    if m > vmax:
        return (-vmax if negative else vmax, negative) if mode["overflow"] == "saturate" else None
    if m == 0:
        return Fraction(0), negative
    down, up, down_even = neighbours(m, bits, emin)
    if down == 0 and dst == "ue8m0":
        return None  # e8m0 has no zero: below its least value the `zero` option decides
    rounding = mode["rounding"]
    if negative and rounding in ("upward", "downward"):
        rounding = "downward" if rounding == "upward" else "upward"  # on the magnitude
    if m == down:
        v = down
    elif rounding == "toward_zero" or rounding == "downward":
        v = down
    elif rounding == "upward":
        v = up
    elif rounding == "stochastic":
        n = int(mode["sr_bits"])
        v = up if ((m - down) / (up - down) * 2 ** n).__floor__() + (int(r) % 2 ** n) >= 2 ** n else down
    else:
        if m - down == up - m:
            if bits == 0:
                return None
            v = (down if down_even else up) if rounding == "nearest_even" else up
        else:
            v = down if m - down < up - m else up
    return (-v if negative else v), negative


def check_conversions():
    checked = {"oracle": 0, "ml_dtypes": 0, "numpy": 0}
    skipped = 0
    for name in sorted(os.listdir(os.path.join(GOLDEN, "conversions"))):
        if not name.endswith(".txt"):
            continue
        g = golden.read(os.path.join(GOLDEN, "conversions", name))
        _, src, dst = g.ops[0].split()
        x = SOURCES[src](g["x"])
        r = g["r"] if "r" in g.columns else np.zeros(g.cases, dtype=np.uint32)
        for mode_line, field in zip(g.modes, g.outputs):
            words = mode_line.split()
            assert words[0] == field.name and field.type == dst, (name, mode_line)
            mode = dict(w.split("=", 1) for w in words[1:] if not w.startswith("preset="))
            preset = words[1][len("preset="):]
            codes = g[field.name]
            if preset == "ml_dtypes(saturate=0,truncate=0)" and dst in ML_DTYPES:
                source = x.astype(np.float32) if src in ("f16", "bf16") else x.astype(np.float32 if src == "f32" else np.float64)
                with np.errstate(all="ignore"):
                    want = source.astype(ML_DTYPES[dst])
                want = want.view(np.uint8 if want.itemsize == 1 else np.uint16)
                assert np.array_equal(codes, want), (name, field.name, np.flatnonzero(codes != want)[:5])
                checked["ml_dtypes"] += g.cases
            if preset == "ieee(nearest_even)" and (dst, src) in (("f16", "f32"), ("f16", "f64"), ("f32", "f64")):
                with np.errstate(all="ignore"):
                    want = (g["x"].view(np.float32) if src == "f32" else g["x"].view(np.float64)).astype(
                        np.float16 if dst == "f16" else np.float32)
                want = want.view(np.uint16 if dst == "f16" else np.uint32)
                finite = np.isfinite(x)  # numpy keeps NaN payloads its own way; the oracle below skips NaN
                assert np.array_equal(codes[finite], want[finite]), (name, field.name)
                assert np.all(np.isnan(DESTINATIONS[dst][4](codes[~np.isfinite(x) & np.isnan(x)]))), name
                checked["numpy"] += g.cases
            values = DESTINATIONS[dst][4](codes)
            for i in range(g.cases):
                want = oracle_value(x[i], mode, dst, r[i])
                if want is None:
                    skipped += 1
                    continue
                v, negative = want
                assert values[i] == float(v), (name, field.name, i, float(x[i]), values[i], float(v))
                if v == 0 and DESTINATIONS[dst][3]:
                    assert bool(np.signbit(values[i])) == negative, (name, field.name, i, "sign of zero")
                checked["oracle"] += 1
    print(f"conversions: {checked['ml_dtypes']} ml_dtypes-preset outputs equal ml_dtypes' casts, {checked['numpy']} "
          f"nearest-even f16/f32 outputs equal numpy's; {checked['oracle']} outputs of every mode equal exact rational "
          f"rounding ({skipped} outputs outside this oracle: NaN or Inf inputs, overflow without saturation, zero or "
          "negative inputs of unsigned formats)")


# ---- Committed instruction files against the truncated sums of tests/tools/gemm_oracle.py.

EMIN = {"e4m3": -6, "e5m2": -14, "e2m3": 0, "e3m2": -2, "e2m1": 0}  # least normal exponents (OCP MX 5.3)


def check_instructions():
    """wgmma fp8 -> f32 (T-FDPA, F = 13, RZ to 13 fraction bits; numerics.md b.3) and tcgen05
    kind::mxf8f6f4 block32 (ST-FDPA, F = 25, the block scales in the product exponents, RZ to f32;
    b.4): every case whose operands, scales and C are finite and whose D is a nonzero finite value
    is recomputed from the decoded operands."""
    files = [n for n in sorted(os.listdir(os.path.join(GOLDEN, "instructions")))
             if n.startswith(("sm_90a.wgmma.fp8.f32.k32.", "sm_100a.tcgen05.mxf8f6f4.block32.ue8m0.k32."))]
    assert len(files) == 29, files
    checked = skipped = 0
    for name in files:
        g = golden.read(os.path.join(GOLDEN, "instructions", name))
        ta, tb = g.field("a").type, g.field("b").type
        a, b = DESTINATIONS[ta][4](g["a"]), DESTINATIONS[tb][4](g["b"])
        c, d = g["c"].view(np.float32).astype(np.float64), g["d"].view(np.float32).astype(np.float64)
        scaled = "sa" in g.columns
        F, fraction_bits = (25, 23) if scaled else (13, 13)
        for i in range(g.cases):
            scale = 0
            if scaled:
                if g["sa"][i] == 0xFF or g["sb"][i] == 0xFF:
                    skipped += 1
                    continue
                scale = int(g["sa"][i]) + int(g["sb"][i]) - 254
            if not (np.all(np.isfinite(a[i])) and np.all(np.isfinite(b[i])) and np.isfinite(c[i])
                    and np.isfinite(d[i]) and d[i] != 0):
                skipped += 1
                continue
            terms = [oracle.sig_exp(Fraction(float(c[i])), -126)]
            for x, y in zip(a[i], b[i]):
                (sx, ex), (sy, ey) = oracle.sig_exp(Fraction(float(x)), EMIN[ta]), oracle.sig_exp(Fraction(float(y)), EMIN[tb])
                terms.append((sx * sy, ex + ey + scale) if sx * sy != 0 else (Fraction(0), oracle.E_ZERO))
            want = oracle.round_float(oracle.truncated_sum(terms, F), fraction_bits, -126, "rz")
            if abs(want) >= Fraction(2) ** 128:
                skipped += 1
                continue
            assert Fraction(float(d[i])) == want, (name, i, float(d[i]), float(want))
            checked += 1
    print(f"instructions: {checked} outputs of {len(files)} committed wgmma fp8 and tcgen05 mxf8f6f4 block32 files "
          f"equal the oracle's truncated sums ({skipped} with NaN, Inf, a zero or overflowing D, or a NaN scale "
          "left to the library's tests)")


# ---- Writing files and verifying them with the library.

def check_writing():
    g = golden.read(os.path.join(GOLDEN, "instructions", "sm_90a.wgmma.fp8.f32.k32.e4m3.e4m3.txt"))
    d = g["d"].copy()
    flipped = [3, 17, g.cases - 1]
    d[flipped] ^= 1
    mine = golden.GoldenFile.create("instruction", g.ops[:1], g.fields, dict(g.columns, d=d), data="hardware",
                                    sources=["test_golden.py: d's lowest bit flipped in three cases"])
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "measured.txt")
        mine.save(out)
        assert golden.read(out).to_text() == mine.to_text()
        report, = golden.verify(out, max_report=10)
        assert not report.ok and report.mismatches == 3, report
        assert [m.case for m in report.first_mismatches] == flipped, report.first_mismatches
        assert all("d" in m.detail for m in report.first_mismatches), report.first_mismatches
        assert all(r.ok for r in golden.verify(os.path.join(GOLDEN, "gemms"), os.path.join(GOLDEN, "layouts")))
        broken = os.path.join(tmp, "broken.txt")
        open(broken, "w").write(mine.to_text().replace("@kind instruction\n", ""))
        report, = golden.verify(broken)
        assert not report.ok and "@kind is missing" in report.error, report.error
    # The same file from float arrays: f32 columns may be given as float32.
    again = golden.GoldenFile.create("instruction", g.ops[:1], g.fields, dict(g.columns, c=g["c"].view(np.float32)))
    assert np.array_equal(again["c"], g["c"])
    # A big-endian float32 column holds the same values: its words are the same once in native order.
    swapped = golden.GoldenFile.create("instruction", g.ops[:1], g.fields,
                                       dict(g.columns, c=g["c"].view(np.float32).astype(">f4")))
    assert np.array_equal(swapped["c"], g["c"])
    assert np.array_equal(g.values("c"), g["c"].view(np.float32).astype(np.float64))
    for kwargs, rule in [
            (dict(kind="matrix"), "unknown kind"),
            (dict(fields="a:e4m3[32] b:e4m3[32] c:f32 -> d:f32 d:f32"), "appears twice"),
            (dict(columns=dict(g.columns, d=g["d"][:-1])), "has %d cases" % (g.cases - 1)),
            (dict(columns=dict(g.columns, a=g["a"].astype(np.int32) - 1)), "outside 0 .. 0xff"),
            (dict(columns=dict(g.columns, a=g["a"][:, :31])), "must have shape"),
            (dict(columns=dict(g.columns, c=g["c"].view(np.float32).astype(np.float64))), "integer storage words"),
            (dict(columns={k: v for k, v in g.columns.items() if k != "b"}), "no column for field b"),
            (dict(data="hardware", seed=1), "have no seed"),
            (dict(seed=1.5), "seed must be an integer"),
            (dict(ops=["a\nb"]), "one line")]:
        args = dict(kind="instruction", ops=g.ops[:1], fields=g.fields, columns=g.columns)
        args.update(kwargs)
        try:
            golden.GoldenFile.create(args.pop("kind"), args.pop("ops"), args.pop("fields"), args.pop("columns"), **args)
            raise AssertionError("create accepted: " + rule)
        except bs.BlockscaleError as e:
            assert rule in str(e), (rule, str(e))
    for call, rule in [(lambda: golden.generate("convert:f32:e9m9"), "e9m9"), (lambda: golden.generate("gemms", cases=0), "cases must be in 1 .."),
                       (lambda: golden.operations("colours"), "colours"), (lambda: golden.verify(), "at least one path"),
                       (lambda: golden.read(os.path.join(GOLDEN, "nothing.txt")), "cannot open"),
                       (lambda: golden.read(GOLDEN), "a directory"), (lambda: g.values("zz"), "zz")]:
        try:
            call()
            raise AssertionError("accepted: " + rule)
        except (bs.BlockscaleError, KeyError) as e:
            assert rule in str(e), (rule, str(e))
    assert "instructions" in golden.families() and "pack:fp4_dense:e2m1" in golden.operations("layouts")
    print("writing: a file made from a committed one with three outputs perturbed is verified with exactly those "
          "three mismatches; the gemms and layouts sets verify; bad arguments are refused by rule")


def main():
    np.seterr(invalid="ignore")  # NaN words decoded through float casts are expected here
    check_committed()
    check_differential()
    check_sets()
    check_conversions()
    check_instructions()
    check_writing()
    print("OK")


if __name__ == "__main__":
    main()
