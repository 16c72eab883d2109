#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""`blockscale gemm` against an independent oracle, bit for bit.

The oracle is written here from the specifications, in exact rational arithmetic, without any of
blockscale's code:
  * MXFP8 e4m3 quantization, recipe `ocp` (OCP MX v1.0 section 6.3: shared exponent
    floor(log2(amax)) - 8, elements rounded to nearest even and saturated to +-448);
  * `exact`: the exact sum of the scaled products plus C, rounded once to f32 (nearest even);
  * `sm_100a`: the tcgen05 kind::mxf8f6f4 block32 chain, ST-FDPA (numerics.md b.4): per K step
    e_max over the 32 products' exponents (scale exponents added) and C's, every term truncated
    toward zero onto the 2^(e_max - 25) grid, the exact sum converted RZ to f32, chained along K;
  * `sm_90a`: the Hopper kernel (gpu/gemm.h): per block a T-FDPA with F = 13 of the unscaled
    products from a +0 accumulator, RZ to 13 fraction bits, then acc = fma(sa * sb, partial, acc)
    rounded to nearest even, starting from C;
  * `sequential_f32`: d = fmaf(x * sx, y * sy, d) in k order from C (reference/numerics.h).
Inputs take the paths a user's would: A as a Fortran-order float64 file, B big-endian float32, C
float32, K not a multiple of the block. Also checked: that a long run's row slices stitch together
(rows of a 1100-row run equal runs on those rows alone), that the thread count does not change a
bit, and that bad input gets exit status 2 and a message naming the rule broken.

usage: cli_gemm_test.py BLOCKSCALE SCRATCH_DIR
"""
import json
import os
import subprocess
import sys
from fractions import Fraction

import numpy as np

E_ZERO = -133  # the exponent of a zero term on sm_90a / sm_100a (numerics.md b.3)


def floor_log2(x):
    """floor(log2(x)) of a positive Fraction, exactly."""
    x = Fraction(x)
    e = x.numerator.bit_length() - x.denominator.bit_length()
    if Fraction(2) ** e > x:
        e -= 1
    return e


def round_to_quantum(x, quantum, mode):
    """x / quantum rounded to an integer (half even or toward zero), times quantum."""
    q = abs(x) / quantum
    n = q.numerator // q.denominator
    rest = q - n
    if mode == "rne" and (rest > Fraction(1, 2) or (rest == Fraction(1, 2) and n % 2 == 1)):
        n += 1
    r = n * quantum
    return -r if x < 0 else r


def round_float(x, fraction_bits, emin, mode):
    """x rounded to a binary float with this many fraction bits and minimum exponent (no overflow
    occurs in these tests)."""
    if x == 0:
        return Fraction(0)
    e = max(floor_log2(abs(x)), emin)
    return round_to_quantum(x, Fraction(2) ** (e - fraction_bits), mode)


def f32_bits(x):
    """The f32 bit pattern of an f32-representable Fraction (+0 for zero)."""
    return int(np.array(float(x), dtype=np.float32).view(np.uint32))


# Element formats: (fraction bits, minimum exponent, largest exponent, largest value).
E4M3 = (3, -6, 8, Fraction(448))
E2M1 = (1, 0, 2, Fraction(6))


def element_rne(v, fmt):
    """v (Fraction) to the nearest value of the format, ties to even, saturating."""
    bits, emin, _, vmax = fmt
    r = round_float(v, bits, emin, "rne")
    return max(-vmax, min(vmax, r))


def quantize_ocp(rows, fmt=E4M3):
    """rows: list of lists of Fractions (the K values of each row). Returns per row the element
    values (padded with zeros to whole blocks of 32) and per block the scale exponent; the shared
    exponent is floor(log2(amax)) minus the element format's largest exponent (OCP MX 6.3)."""
    out = []
    for row in rows:
        k = len(row)
        blocks = (k + 31) // 32
        vals, exps = [], []
        for b in range(blocks):
            blk = row[32 * b:32 * b + 32]
            amax = max(abs(v) for v in blk)
            x = floor_log2(amax) - fmt[2] if amax != 0 else -127
            exps.append(x)
            scale = Fraction(2) ** x
            q = [element_rne(v / scale, fmt) for v in blk]
            vals.extend(q + [Fraction(0)] * (32 - len(q)))
        out.append((vals, exps))
    return out


def sig_exp(x, emin):
    """(significand, alignment exponent) of a value: x = s * 2^e, e = max(floor(log2|x|), emin)."""
    if x == 0:
        return Fraction(0), E_ZERO
    e = max(floor_log2(abs(x)), emin)
    return x / Fraction(2) ** e, e


def truncated_sum(terms, F):
    """T-FDPA steps 3-6: terms are (significand, exponent); returns S * 2^(e_max - F) exactly."""
    e_max = max(e for _, e in terms)
    s = 0
    for sig, e in terms:
        t = abs(sig) * Fraction(2) ** (F + e - e_max)
        t = t.numerator // t.denominator
        s += -t if sig < 0 else t
    return Fraction(s) * Fraction(2) ** (e_max - F)


def oracle(a_rows, b_cols, c, emin_a=-6, emin_b=-6):
    """a_rows: quantize_ocp of A's rows; b_cols: of B's columns; c: M x N Fractions; emin_a and
    emin_b: the element formats' minimum exponents (the alignment exponent's floor)."""
    M, N = len(a_rows), len(b_cols)
    blocks = len(a_rows[0][1])
    exact, sm100, sm90, seq = {}, {}, {}, {}
    for i in range(M):
        av, ax = a_rows[i]
        for j in range(N):
            bv, bx = b_cols[j]
            # exact
            total = c[i][j] + sum(av[k] * bv[k] * Fraction(2) ** (ax[k // 32] + bx[k // 32]) for k in range(32 * blocks))
            exact[i, j] = f32_bits(round_float(total, 23, -126, "rne"))
            # sequential_f32: d = fmaf(x*sx, y*sy, d) in k order (each scaled element exact in f32)
            d = c[i][j]
            for k in range(32 * blocks):
                x = av[k] * Fraction(2) ** ax[k // 32]
                y = bv[k] * Fraction(2) ** bx[k // 32]
                d = round_float(x * y + d, 23, -126, "rne")
            seq[i, j] = f32_bits(d)
            # sm_100a: ST-FDPA chain, C in the accumulator
            d = c[i][j]
            for blk in range(blocks):
                terms = [sig_exp(d, -126)]
                for k in range(32 * blk, 32 * blk + 32):
                    sa, ea = sig_exp(av[k], emin_a)
                    sb, eb = sig_exp(bv[k], emin_b)
                    p = sa * sb
                    terms.append((p, ea + eb + ax[blk] + bx[blk]) if p != 0 else (Fraction(0), E_ZERO))
                d = round_float(truncated_sum(terms, 25), 23, -126, "rz")
            sm100[i, j] = f32_bits(d)
            # sm_90a: promotion every block
            acc = c[i][j]
            for blk in range(blocks):
                terms = [(Fraction(0), E_ZERO)]
                for k in range(32 * blk, 32 * blk + 32):
                    sa, ea = sig_exp(av[k], -6)
                    sb, eb = sig_exp(bv[k], -6)
                    p = sa * sb
                    terms.append((p, ea + eb) if p != 0 else (Fraction(0), E_ZERO))
                partial = round_float(truncated_sum(terms, 13), 13, -126, "rz")
                s = Fraction(2) ** (ax[blk] + bx[blk])  # FMUL of two powers of two: exact
                acc = round_float(s * partial + acc, 23, -126, "rne")
            sm90[i, j] = f32_bits(acc)
    return exact, sm100, sm90, seq


def run(tool, args, env=None):
    return subprocess.run([tool] + args, capture_output=True, text=True, env=env)


def check_oracle(tool, scratch):
    rng = np.random.default_rng(7)
    M, N, K = 6, 5, 100
    # Gaussian values with spread: per-element magnitudes 2^-14..2^6 so that blocks hold small
    # elements far below their block's largest (the products the 2^(e_max - F) grid truncates).
    a = rng.standard_normal((M, K)) * 2.0 ** rng.integers(-14, 7, (M, K))
    b = (rng.standard_normal((K, N)) * 2.0 ** rng.integers(-14, 7, (K, N))).astype(np.float32)
    c = (rng.standard_normal((M, N)) * 2.0 ** rng.integers(-4, 12, (M, N))).astype(np.float32)
    a[2, 40] = 2.0 ** -130  # an f32 subnormal input: f32(A) keeps it; OCP keeps fp32 subnormals
    np.save(os.path.join(scratch, "a.npy"), np.asfortranarray(a))  # float64, Fortran order
    np.save(os.path.join(scratch, "b.npy"), b.astype(">f4"))  # big-endian
    np.save(os.path.join(scratch, "c.npy"), c)
    out = os.path.join(scratch, "out")
    r = run(tool, ["gemm", "--a", os.path.join(scratch, "a.npy"), "--b", os.path.join(scratch, "b.npy"), "--c",
                   os.path.join(scratch, "c.npy"), "--recipe", "ocp", "--models", "sm_100a,sm_90a,sequential_f32", "--out", out,
                   "--quiet"])
    if r.returncode != 0:
        raise AssertionError("blockscale gemm failed: " + r.stderr)
    a32 = a.astype(np.float32)  # the tool rounds float64 inputs to f32 before quantizing
    a_rows = quantize_ocp([[Fraction(float(v)) for v in row] for row in a32])
    b_cols = quantize_ocp([[Fraction(float(v)) for v in col] for col in b.T])
    cf = [[Fraction(float(v)) for v in row] for row in c]
    want = dict(zip(("exact", "sm_100a", "sm_90a", "sequential_f32"), oracle(a_rows, b_cols, cf)))
    for name, expect in want.items():
        got = np.load(os.path.join(out, name + ".npy"))
        assert got.dtype == np.float32 and got.shape == (M, N), (name, got.dtype, got.shape)
        bits = got.view(np.uint32)
        bad = [(i, j, hex(int(bits[i, j])), hex(expect[i, j])) for i in range(M) for j in range(N)
               if int(bits[i, j]) != expect[i, j]]
        assert not bad, f"{name}: {len(bad)} of {M * N} outputs differ from the oracle, first {bad[:4]}"
    # The data must exercise what the models add: truncation makes both differ from exact somewhere.
    for name in ("sm_100a", "sm_90a", "sequential_f32"):
        assert any(want[name][key] != want["exact"][key] for key in want["exact"]), name + " equals exact here"
    # The JSON report: valid, and its counts are those of the files.
    r = run(tool, ["gemm", "--a", os.path.join(scratch, "a.npy"), "--b", os.path.join(scratch, "b.npy"), "--c",
                   os.path.join(scratch, "c.npy"), "--recipe", "ocp", "--models", "sm_100a,sm_90a,sequential_f32", "--json", "--quiet"])
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert [n["name"] for n in report["numerics"]] == ["exact", "sm_100a", "sm_90a", "sequential_f32"], report
    assert (report["m"], report["n"], report["k"]) == (M, N, K), report
    for n in report["numerics"]:
        differ = sum(want[n["name"]][key] != want["exact"][key] for key in want["exact"])
        assert n["vs_exact"]["outputs"] == M * N and n["vs_exact"]["differ"] == differ, (n["name"], n["vs_exact"], differ)
        assert n["vs_fp64"]["compared"] == M * N, n["vs_fp64"]
    print(f"oracle: exact, sm_100a, sm_90a and sequential_f32 agree bit for bit on {M}x{N}x{K} ({M * N} outputs each); JSON counts match")


def check_mixed(tool, scratch):
    """MXFP8 e4m3 activations times MXFP4 weights (kind::mxf8f6f4 with an e2m1 operand): exact,
    sm_100a and sequential_f32 against the oracle, B given transposed as a weight is stored."""
    rng = np.random.default_rng(5)
    M, N, K = 5, 4, 96
    a = (rng.standard_normal((M, K)) * 2.0 ** rng.integers(-12, 5, (M, K))).astype(np.float32)
    w = (rng.standard_normal((N, K)) * 2.0 ** rng.integers(-3, 3, (N, K))).astype(np.float32)
    np.save(os.path.join(scratch, "xa.npy"), a)
    # C well above the products, so that the 2^(e_max - 25) grid cuts into the small ones.
    c = (rng.standard_normal((M, N)) * 2.0 ** 12).astype(np.float32)
    np.save(os.path.join(scratch, "xw.npy"), w)
    np.save(os.path.join(scratch, "xc.npy"), c)
    out = os.path.join(scratch, "mixed")
    r = run(tool, ["gemm", "--a", os.path.join(scratch, "xa.npy"), "--b", os.path.join(scratch, "xw.npy"),
                   "--b-transposed", "--c", os.path.join(scratch, "xc.npy"), "--format", "mxfp8_e4m3",
                   "--format-b", "mxfp4", "--recipe", "ocp",
                   "--models", "sm_100a,sequential_f32", "--out", out, "--quiet"])
    assert r.returncode == 0, r.stderr
    a_rows = quantize_ocp([[Fraction(float(v)) for v in row] for row in a], E4M3)
    b_cols = quantize_ocp([[Fraction(float(v)) for v in row] for row in w], E2M1)
    cf = [[Fraction(float(v)) for v in row] for row in c]
    exact, sm100, _, seq = oracle(a_rows, b_cols, cf, E4M3[1], E2M1[1])
    for name, expect in (("exact", exact), ("sm_100a", sm100), ("sequential_f32", seq)):
        bits = np.load(os.path.join(out, name + ".npy")).view(np.uint32)
        bad = [(i, j) for i in range(M) for j in range(N) if int(bits[i, j]) != expect[i, j]]
        assert not bad, f"mixed {name}: {len(bad)} of {M * N} outputs differ from the oracle, first {bad[:4]}"
    assert any(sm100[key] != exact[key] for key in exact), "mixed sm_100a equals exact here"
    print(f"mixed: e4m3 x e2m1 (MXFP8 x MXFP4) exact, sm_100a and sequential_f32 agree on {M}x{N}x{K}")


def check_slices_and_threads(tool, scratch):
    """A run long enough to be computed in row slices equals runs on single slices' rows, and the
    thread count changes nothing."""
    rng = np.random.default_rng(11)
    M, N, K = 1100, 24, 96
    a = rng.standard_t(2, (M, K)).astype(np.float32)
    b = rng.standard_t(2, (K, N)).astype(np.float32)
    np.save(os.path.join(scratch, "big_a.npy"), a)
    np.save(os.path.join(scratch, "b2.npy"), b)
    outs = {}
    for threads in ("1", "2"):
        env = dict(os.environ, OMP_NUM_THREADS=threads)
        out = os.path.join(scratch, "big" + threads)
        r = run(tool, ["gemm", "--a", os.path.join(scratch, "big_a.npy"), "--b", os.path.join(scratch, "b2.npy"),
                       "--models", "sm_100a,sm_90a", "--out", out, "--quiet"], env)
        assert r.returncode == 0, r.stderr
        outs[threads] = {n: np.load(os.path.join(out, n + ".npy")) for n in ("exact", "sm_100a", "sm_90a")}
    for n in outs["1"]:
        assert outs["1"][n].tobytes() == outs["2"][n].tobytes(), n + ": 1 and 2 threads differ"
    # B given transposed (N x K, a linear layer's weight) gives the same bits.
    np.save(os.path.join(scratch, "b2t.npy"), b.T.copy())
    out = os.path.join(scratch, "bt")
    r = run(tool, ["gemm", "--a", os.path.join(scratch, "big_a.npy"), "--b", os.path.join(scratch, "b2t.npy"),
                   "--b-transposed", "--models", "sm_100a,sm_90a", "--out", out, "--quiet"])
    assert r.returncode == 0, r.stderr
    for n in outs["1"]:
        assert np.load(os.path.join(out, n + ".npy")).tobytes() == outs["1"][n].tobytes(), n + ": --b-transposed differs"
    for lo, hi in ((0, 5), (510, 515), (1024, 1030), (1096, 1100)):
        np.save(os.path.join(scratch, "rows.npy"), a[lo:hi])
        out = os.path.join(scratch, "rows")
        r = run(tool, ["gemm", "--a", os.path.join(scratch, "rows.npy"), "--b", os.path.join(scratch, "b2.npy"),
                       "--models", "sm_100a,sm_90a", "--out", out, "--quiet"])
        assert r.returncode == 0, r.stderr
        for n in outs["1"]:
            part = np.load(os.path.join(out, n + ".npy"))
            assert part.tobytes() == outs["1"][n][lo:hi].tobytes(), f"{n}: rows {lo}..{hi} differ from the long run"
    print(f"slices: {M}x{N}x{K} in row slices equals runs on rows alone; 1 and 2 threads and --b-transposed identical")


def check_errors(tool, scratch):
    def path(name):
        return os.path.join(scratch, name)

    good = np.ones((4, 64), np.float32)
    np.save(path("g.npy"), good)
    np.save(path("gb.npy"), np.ones((64, 3), np.float32))
    raw = open(path("g.npy"), "rb").read()
    open(path("magic.npy"), "wb").write(b"\x93NUMPX" + raw[6:])
    open(path("trunc.npy"), "wb").write(raw[:-3])
    open(path("trail.npy"), "wb").write(raw + b"\0\0\0\0")
    open(path("hdr.npy"), "wb").write(raw[:8] + b"\xff\x7f" + raw[10:])
    open(path("short.npy"), "wb").write(raw[:7])
    np.save(path("int.npy"), np.ones((4, 64), np.int32))
    np.save(path("cplx.npy"), np.ones((4, 64), np.complex64))
    np.save(path("rank3.npy"), np.ones((2, 4, 64), np.float32))
    np.save(path("rank1.npy"), np.ones(64, np.float32))
    np.save(path("empty.npy"), np.ones((0, 64), np.float32))
    np.save(path("k65.npy"), np.ones((65, 3), np.float32))
    np.save(path("c_bad.npy"), np.ones((3, 3), np.float32))
    cases = [
        (["--a", path("missing.npy"), "--b", path("gb.npy")], "cannot open"),
        (["--a", path("magic.npy"), "--b", path("gb.npy")], "not a NumPy .npy file"),
        (["--a", path("trunc.npy"), "--b", path("gb.npy")], "truncated"),
        (["--a", path("trail.npy"), "--b", path("gb.npy")], "trailing bytes"),
        (["--a", path("hdr.npy"), "--b", path("gb.npy")], "runs past the end"),
        (["--a", path("short.npy"), "--b", path("gb.npy")], "not a NumPy .npy file"),
        (["--a", path("int.npy"), "--b", path("gb.npy")], "dtype '<i4' is not taken"),
        (["--a", path("cplx.npy"), "--b", path("gb.npy")], "dtype '<c8' is not taken"),
        (["--a", path("rank3.npy"), "--b", path("gb.npy")], "is 3-D"),
        (["--a", path("rank1.npy"), "--b", path("gb.npy")], "is 1-D"),
        (["--a", path("empty.npy"), "--b", path("gb.npy")], "empty"),
        (["--a", path("g.npy"), "--b", path("k65.npy")], "A's columns must equal B's rows"),
        (["--a", path("g.npy"), "--b", path("gb.npy"), "--c", path("c_bad.npy")], "C is 3 x 3 but D is 4 x 3"),
        (["--a", path("g.npy")], "--a and --b go together"),
        (["--b-transposed"], "describes the file given by --b"),
        (["--a", path("g.npy"), "--b", path("gb.npy"), "--m", "8"], "--m is for built-in data"),
        (["--format", "mxfp9"], "unknown --format 'mxfp9'"),
        (["--recipe", "floor"], "unknown --recipe 'floor'"),
        (["--format", "nvfp4", "--recipe", "ocp"], "ue4m3"),
        (["--models", "sm_80"], "unknown model 'sm_80'"),
        (["--models", "sm_100a,,sm_90a"], "comma list"),
        (["--models", "sm_100a,sm_100a"], "names sm_100a twice"),
        (["--models", "exact"], "always computed"),
        (["--format", "mxfp6_e2m3", "--models", "sm_90a"], "Hopper block-scaled GEMM kernels"),
        (["--format", "mxfp8_e4m3", "--format-b", "mxfp4", "--models", "sm_90a"], "on both sides"),
        (["--format", "mxfp8_e4m3", "--format-b", "nvfp4"], "must share the scale type and the block size"),
        (["--format-b", "fp3"], "unknown --format-b 'fp3'"),
        (["--recipe-b", "floor"], "unknown --recipe-b 'floor'"),
        (["--data", "cauchy"], "--data must be gaussian or heavy_tailed"),
        (["--m", "0"], "--m"),
        (["--k", "abc"], "--k"),
        (["stray"], "unexpected argument 'stray'"),
        (["--m", "65536", "--k", "65536"], "at most 2^26 elements each"),
    ]
    for args, message in cases:
        r = run(tool, ["gemm", "--quiet", "--m", "8", "--n", "8", "--k", "64"] + args if args[0] in ("--format", "--format-b", "--recipe", "--recipe-b", "--models", "--data") else ["gemm", "--quiet"] + args)
        assert r.returncode == 2, f"{args}: exit {r.returncode}, stderr {r.stderr!r}"
        assert message in r.stderr, f"{args}: expected {message!r} in {r.stderr!r}"
        assert "Traceback" not in r.stderr and "terminate" not in r.stderr, r.stderr
    print(f"errors: {len(cases)} bad inputs, each exit 2 with its rule named")


def main():
    tool, scratch = sys.argv[1], sys.argv[2]
    os.makedirs(scratch, exist_ok=True)
    check_oracle(tool, scratch)
    check_mixed(tool, scratch)
    check_slices_and_threads(tool, scratch)
    check_errors(tool, scratch)


if __name__ == "__main__":
    main()
