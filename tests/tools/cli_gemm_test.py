#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""`blockscale gemm` against an independent oracle, bit for bit.

The oracles are written from the specifications, in exact rational arithmetic, without any of
blockscale's code; they live in gemm_oracle.py beside this script, which the Python module's test
shares:
  * MXFP8 e4m3 quantization, recipe `ocp` (OCP MX v1.0 section 6.3: shared exponent
    floor(log2(amax)) - 8, elements rounded to nearest even and saturated to +-448);
  * `exact`: the exact sum of the scaled products plus C, rounded once to f32 (nearest even);
  * `sm_100a`: the tcgen05 kind::mxf8f6f4 block32 chain, ST-FDPA (numerics.md b.4): per K step
    e_max over the 32 products' exponents (scale exponents added) and C's, every term truncated
    toward zero onto the 2^(e_max - 25) grid, the exact sum converted RZ to f32, chained along K;
  * `sm_90a`: the Hopper kernel (gpu/gemm.h): per block a T-FDPA with F = 13 of the unscaled
    products from a +0 accumulator, RZ to 13 fraction bits, then acc = fma(sa * sb, partial, acc)
    rounded to nearest even, starting from C;
  * `sequential_f32`: d = fmaf(x * sx, y * sy, d) in k order from C (reference/numerics.h);
  * NVFP4 with TransformerEngine's and torchao's single-level recipes (docs/quantization.md), the
    tcgen05 kind::mxf4nvf4 block16 ue4m3 GST-FDPA chain (numerics.md b.5), the Hopper kernel with
    16-element blocks, and the per-tensor scales' epilogue D = fma(alpha, acc, C).
Inputs take the paths a user's would: A as a Fortran-order float64 file, B big-endian float32, C
float32, K not a multiple of the block. Also checked: that a long run's row slices stitch together
(rows of a 1100-row run equal runs on those rows alone), that the thread count does not change a
bit, that the built-in data are those of the serial generator (pinned hashes), and that bad input
gets exit status 2 and a message naming the rule broken.

usage: cli_gemm_test.py BLOCKSCALE SCRATCH_DIR
"""
import itertools
import json
import os
import subprocess
import sys
from fractions import Fraction

import numpy as np

# The oracle lives beside this script.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gemm_oracle import (E2M1, E2M3, E3M2, E4M3, E5M2, bf16_rne, cast_oracle, element_rne, fp8_scaled_oracle,
                         nvfp4_oracle, oracle, prune_oracle, quantize_fp8_scaled, quantize_nvfp4,
                         quantize_ocp, sparse_oracle)  # noqa: E402


def assert_files_match(out, want, M, N, label):
    """Each numerics' DIR/<name>.npy (f32, M x N) against the oracle's bits, output by output."""
    for name, expect in want.items():
        got = np.load(os.path.join(out, name + ".npy"))
        assert got.dtype == np.float32 and got.shape == (M, N), (label, name, got.dtype, got.shape)
        bits = got.view(np.uint32)
        bad = [(i, j, hex(int(bits[i, j])), hex(expect[i, j])) for i in range(M) for j in range(N)
               if int(bits[i, j]) != expect[i, j]]
        assert not bad, f"{label} {name}: {len(bad)} of {M * N} outputs differ from the oracle, first {bad[:4]}"


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
    assert_files_match(out, want, M, N, "mxfp8")
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
    assert report["numerics"][0]["outputs"] == {"proved": M * N, "special": 0, "reference": 0, "certified": 0}, \
        report["numerics"][0]
    for n in report["numerics"]:
        differ = sum(want[n["name"]][key] != want["exact"][key] for key in want["exact"])
        assert n["vs_exact"]["outputs"] == M * N and n["vs_exact"]["differ"] == differ, (n["name"], n["vs_exact"], differ)
        assert n["vs_fp64"]["compared"] == M * N, n["vs_fp64"]
        assert "split_k" not in n, n  # only a library model has a split count
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
    assert_files_match(out, {"exact": exact, "sm_100a": sm100, "sequential_f32": seq}, M, N, "mixed")
    assert any(sm100[key] != exact[key] for key in exact), "mixed sm_100a equals exact here"
    print(f"mixed: e4m3 x e2m1 (MXFP8 x MXFP4) exact, sm_100a and sequential_f32 agree on {M}x{N}x{K}")


def check_nvfp4(tool, scratch):
    """NVFP4 through both recipes: TE's two-level scaling (alpha != 1: the K loop from +0, C added
    by the epilogue FFMA) and torchao's single level (alpha = 1: C starts the accumulator)."""
    rng = np.random.default_rng(3)
    M, N, K = 5, 4, 100  # 7 blocks of 16 (the last 4 wide), 2 tcgen05 K steps of 4 groups
    # The first K step's blocks are small (2^-9..2^-5) and the second's large (2^2..2^5), on both
    # sides, so the running sum that enters the second step lies more than 12 binades below the
    # step's largest scale exponent and GST-FDPA truncates it (numerics.md b.5 step 6); C too.
    a_mag = np.concatenate([rng.integers(-9, -4, (M, 4)), rng.integers(2, 6, (M, 3))], axis=1)
    b_mag = np.concatenate([rng.integers(-9, -4, (4, N)), rng.integers(2, 6, (3, N))], axis=0)
    a = rng.standard_normal((M, 112)) * np.repeat(2.0 ** a_mag, 16, axis=1)
    b = rng.standard_normal((112, N)) * np.repeat(2.0 ** b_mag, 16, axis=0)
    # Row 1 x column 1: block 4's products cancel to exactly 0 and hold A's and B's largest values
    # (scales 448, alignment exponent 8 on each side); every other block is small (scales below
    # 2^-5, exponent -6). The cancelled group keeps its scale exponent (b.5 step 5), 28 binades
    # above the others, so their terms and the running sum are cut 2^(e_max - 35) low: the last bit
    # of their 2^-20 grid, which the small result's f32 keeps. With C in the accumulator
    # (single-level scaling), C falls below the cut.
    a[1], b[:, 1] = rng.standard_normal(112) * 2.0 ** -7, rng.standard_normal(112) * 2.0 ** -7
    a[1, 64:80], b[64:80, 1] = 0, 1000
    a[1, 64:66] = 1000, -1000
    a, b = a[:, :K].astype(np.float32), b[:K].astype(np.float32)
    c = (rng.standard_normal((M, N)) * 2.0 ** rng.integers(-6, 8, (M, N))).astype(np.float32)
    c[1, 1] = 0.7 * 2.0 ** -29  # small next to the product, so the epilogue keeps its low bits
    for name, v in (("na", a), ("nb", b), ("nc", c)):
        np.save(os.path.join(scratch, name + ".npy"), v)
    differs = set()
    for recipe in ("nvfp4_te", "nvfp4_torchao_single"):
        out = os.path.join(scratch, recipe)
        args = ["gemm", "--a", os.path.join(scratch, "na.npy"), "--b", os.path.join(scratch, "nb.npy"), "--c",
                os.path.join(scratch, "nc.npy"), "--format", "nvfp4", "--recipe", recipe,
                "--models", "sm_100a,sm_90a,sequential_f32", "--quiet"]
        r = run(tool, args + ["--out", out])
        assert r.returncode == 0, r.stderr
        a_rows, a_decode = quantize_nvfp4([list(row) for row in a], recipe)
        b_cols, b_decode = quantize_nvfp4([list(col) for col in b.T], recipe)
        alpha = a_decode * b_decode  # fp32 FMUL
        assert (alpha == 1) == (recipe == "nvfp4_torchao_single"), (recipe, alpha)
        cf = [[Fraction(float(v)) for v in row] for row in c]
        want = dict(zip(("exact", "sm_100a", "sm_90a", "sequential_f32"), nvfp4_oracle(a_rows, b_cols, cf, alpha)))
        assert_files_match(out, want, M, N, recipe)
        differs |= {name for name, expect in want.items() if any(expect[key] != want["exact"][key] for key in expect)}
        r = run(tool, args + ["--json"])
        assert r.returncode == 0, r.stderr
        assert np.float32(json.loads(r.stdout)["tensor_scale_alpha"]) == alpha, (recipe, r.stdout[:400], alpha)
    # The data must exercise what the models add: each differs from exact somewhere.
    assert differs == {"sm_100a", "sm_90a", "sequential_f32"}, differs
    print(f"nvfp4: recipes nvfp4_te (epilogue FFMA) and nvfp4_torchao_single (C in the accumulator): "
          f"exact, sm_100a, sm_90a and sequential_f32 agree on {M}x{N}x{K}")


def check_fp6(tool, scratch):
    """MXFP6: e2m3 activations times e3m2 weights (kind::mxf8f6f4, fp6 on both sides), and e3m2 on
    both sides: exact, sm_100a and sequential_f32 against the oracle. (Until 2026-11-22 every fp6
    run failed: the reference refused fp6 without its hardware-extension option.)"""
    rng = np.random.default_rng(9)
    M, N, K = 4, 5, 80
    a = (rng.standard_normal((M, K)) * 2.0 ** rng.integers(-6, 6, (M, K))).astype(np.float32)
    b = (rng.standard_normal((K, N)) * 2.0 ** rng.integers(-6, 6, (K, N))).astype(np.float32)
    c = (rng.standard_normal((M, N)) * 2.0 ** 10).astype(np.float32)
    for name, v in (("fa", a), ("fb", b), ("fc", c)):
        np.save(os.path.join(scratch, name + ".npy"), v)
    for fa, fb, ea, eb in (("mxfp6_e2m3", "mxfp6_e3m2", E2M3, E3M2), ("mxfp6_e3m2", "mxfp6_e3m2", E3M2, E3M2)):
        out = os.path.join(scratch, fa + "_" + fb)
        r = run(tool, ["gemm", "--a", os.path.join(scratch, "fa.npy"), "--b", os.path.join(scratch, "fb.npy"), "--c",
                       os.path.join(scratch, "fc.npy"), "--format", fa, "--format-b", fb, "--recipe", "ocp",
                       "--models", "sm_100a,sequential_f32", "--out", out, "--quiet"])
        assert r.returncode == 0, r.stderr
        a_rows = quantize_ocp([[Fraction(float(v)) for v in row] for row in a], ea)
        b_cols = quantize_ocp([[Fraction(float(v)) for v in col] for col in b.T], eb)
        cf = [[Fraction(float(v)) for v in row] for row in c]
        exact, sm100, _, seq = oracle(a_rows, b_cols, cf, ea[1], eb[1])
        assert_files_match(out, {"exact": exact, "sm_100a": sm100, "sequential_f32": seq}, M, N, fa + " x " + fb)
        assert any(sm100[key] != exact[key] for key in exact), fa + " x " + fb + ": sm_100a equals exact here"
    print(f"fp6: e2m3 x e3m2 and e3m2 x e3m2 exact, sm_100a and sequential_f32 agree on {M}x{N}x{K}")


def assert_report_matches_numpy(entry, d, a, b, alpha=1.0, c=None, bias=None, relu=False):
    """One numerics' `vs_fp64` report (error against the unquantized fp64 product) against numpy's
    product of the f32 inputs a and b: the report prints rounded statistics to 6 digits, so a
    relative tolerance. With cuBLASLt's epilogue the reference is max(alpha A B + C + bias(i), 0)
    (ReLU) or without the max, its magnitude |alpha| |A||B| + |C| + |bias(i)|."""
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    ref, mag = alpha * (a64 @ b64), abs(alpha) * (np.abs(a64) @ np.abs(b64))
    for term in ([] if c is None else [c.astype(np.float64)]) + ([] if bias is None else
                                                                   [bias.astype(np.float64)[:, None]]):
        ref, mag = ref + term, mag + np.abs(term)
    if relu:
        ref = np.maximum(ref, 0.0)
    d = d.astype(np.float64)
    normalised = np.sort((np.abs(d - ref) / mag).ravel())
    want = {"relative_frobenius": np.linalg.norm(d - ref) / np.linalg.norm(ref),
            "normalised_median": normalised[int(0.5 * (normalised.size - 1))],
            "normalised_p99": normalised[int(0.99 * (normalised.size - 1))], "normalised_max": normalised[-1]}
    for key, value in want.items():
        got = entry["vs_fp64"][key]
        assert abs(got - value) <= 1e-5 * value, (entry["name"], key, got, value)


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
    # The error report's fp64 product (blocked in registers, N = 24 = one strip of 16 plus a tail)
    # against numpy's.
    r = run(tool, ["gemm", "--a", os.path.join(scratch, "big_a.npy"), "--b", os.path.join(scratch, "b2.npy"),
                   "--models", "sm_100a", "--json", "--quiet"])
    assert r.returncode == 0, r.stderr
    assert_report_matches_numpy(json.loads(r.stdout)["numerics"][0], outs["1"]["exact"], a, b)
    for lo, hi in ((0, 5), (510, 515), (1024, 1030), (1096, 1100)):
        np.save(os.path.join(scratch, "rows.npy"), a[lo:hi])
        out = os.path.join(scratch, "rows")
        r = run(tool, ["gemm", "--a", os.path.join(scratch, "rows.npy"), "--b", os.path.join(scratch, "b2.npy"),
                       "--models", "sm_100a,sm_90a", "--out", out, "--quiet"])
        assert r.returncode == 0, r.stderr
        for n in outs["1"]:
            part = np.load(os.path.join(out, n + ".npy"))
            assert part.tobytes() == outs["1"][n][lo:hi].tobytes(), f"{n}: rows {lo}..{hi} differ from the long run"
    print(f"slices: {M}x{N}x{K} in row slices equals runs on rows alone; 1 and 2 threads and --b-transposed identical; "
          "the error report matches numpy's fp64 product")


def check_fp8_scaled(tool, scratch):
    """fp8 with fp32 scales: the DeepGEMM and torchao recipes and the library GEMM models
    (cuBLASLt, torch._scaled_mm, as measured on an H200) against the oracle, K not a multiple of
    128, B given transposed. (scripts/fp8_scaled_vs_torch.py checks the same against PyTorch on a
    GPU.)"""
    rng = np.random.default_rng(21)
    # With a power-of-two scale on one side the promotion FMA's orders coincide, so the schedules
    # are told apart on cases without ue8m0; the ue8m0 case checks the recipe.
    cases = [  # A recipe, B recipe, B format, models -> oracle schedules, M, N
        ("deepgemm_1x128", "deepgemm_128x128", "fp8_e4m3", {"cublaslt": "scale_product", "torch_scaled_mm": "scale_product"}, 3, 130),
        ("deepgemm_1x128", "deepgemm_1x128", "fp8_e4m3", {"cublaslt": "b_first", "torch_scaled_mm": "swapped"}, 4, 5),
        ("deepgemm_1x128_ue8m0", "deepgemm_128x128_ue8m0", "fp8_e4m3", {"cublaslt": "scale_product"}, 3, 5),
        ("torchao_tensorwise", "torchao_tensorwise", "fp8_e5m2",
         {"cublaslt": "tensor", "cublaslt_fast_accum": "fast_accum", "torch_scaled_mm_fast_accum": "fast_accum"}, 4, 5),
        ("torchao_rowwise", "torchao_rowwise", "fp8_e4m3",
         {"torch_scaled_mm": "row", "cublaslt": "row_a_first", "cublaslt_fast_accum": "fast_accum_row_a_first"}, 5, 4),
    ]
    K = 300
    blocks = {"deepgemm_1x128": (1, 128), "deepgemm_128x128": (128, 128), "deepgemm_1x128_ue8m0": (1, 128),
              "deepgemm_128x128_ue8m0": (128, 128),
              "torchao_tensorwise": (None, None), "torchao_rowwise": (1, None)}
    n_bias = 0
    for n_case, (ra, rb, fmt_b, models, M, N) in enumerate(cases):
        a = (rng.standard_normal((M, K)) * 2.0 ** rng.integers(-12, 5, (M, K))).astype(np.float32)
        w = (rng.standard_normal((N, K)) * 2.0 ** rng.integers(-6, 3, (N, K))).astype(np.float32)
        a[0, :40] = 0.0
        np.save(os.path.join(scratch, "f8a.npy"), a)
        np.save(os.path.join(scratch, "f8w.npy"), w)
        out = os.path.join(scratch, f"fp8_{n_case}")
        r = run(tool, ["gemm", "--a", os.path.join(scratch, "f8a.npy"), "--b", os.path.join(scratch, "f8w.npy"),
                       "--b-transposed", "--format", "fp8_e4m3", "--format-b", fmt_b, "--recipe", ra, "--recipe-b", rb,
                       "--models", ",".join(models), "--out", out, "--quiet"])
        assert r.returncode == 0, r.stderr
        fb = E5M2 if fmt_b == "fp8_e5m2" else E4M3
        a_rows, sa = quantize_fp8_scaled(a, ra, *blocks[ra], E4M3)
        b_cols, sb = quantize_fp8_scaled(w, rb, *blocks[rb], fb)
        want = {"exact": fp8_scaled_oracle(a_rows, sa, b_cols, sb, E4M3, fb, "exact")}
        for model, schedule in models.items():
            want[model] = fp8_scaled_oracle(a_rows, sa, b_cols, sb, E4M3, fb, schedule)
            assert any(want[model][key] != want["exact"][key] for key in want["exact"]), model + " equals exact here"
        assert_files_match(out, want, M, N, f"fp8 {ra} x {rb}")
        # torch._scaled_mm's f16 D and bias (docs/conformance.md, "Bias"): the f32 D plus the bias in
        # f32, rounded once to D's dtype (numpy's float32 add; its float16 cast and bf16_rne round).
        torch_models = [m for m in models if m.startswith("torch")]
        for model, (d_type, dtype) in itertools.product(torch_models, (("f16", np.float16), ("bf16", np.float64))):
            f32 = np.array([[want[model][i, j] for j in range(N)] for i in range(M)], dtype=np.uint32).view(np.float32)
            bias = (rng.standard_normal(N) * np.abs(f32).max()).astype(np.float32)
            bias = bias.astype(np.float16).astype(np.float32) if d_type == "f16" else \
                (bf16_rne(bias.view(np.uint32)).astype(np.uint32) << 16).view(np.float32)
            np.save(os.path.join(scratch, "bias.npy"), bias.astype(dtype))
            r = run(tool, ["gemm", "--a", os.path.join(scratch, "f8a.npy"), "--b", os.path.join(scratch, "f8w.npy"),
                           "--b-transposed", "--format", "fp8_e4m3", "--format-b", fmt_b, "--recipe", ra, "--recipe-b", rb,
                           "--models", model, "--d-type", d_type, "--bias", os.path.join(scratch, "bias.npy"), "--no-exact",
                           "--out", out + "_bias", "--quiet", "--json"])
            assert r.returncode == 0, r.stderr
            summed = f32 + bias
            expect = summed.astype(np.float16).astype(np.float32).view(np.uint32) if d_type == "f16" else \
                bf16_rne(summed.view(np.uint32)).astype(np.uint32) << 16
            assert_files_match(out + "_bias", {model: {(i, j): int(expect[i, j]) for i in range(M) for j in range(N)}},
                               M, N, f"fp8 {ra} x {rb} {model} {d_type} D + bias")
            report = json.loads(r.stdout)
            assert "the bias" in report["c"] and "rounded once to " + d_type in report["numerics"][0]["definition"], report
            n_bias += 1
    # Split-K (--split-k S): K = 1100 (9 tiles of 128) in 3 slices, cut at the rows' K tiles: 3 + 3 + 3
    # tiles at 128 elements, 4 + 4 + 1 at 512 (1x128 x 128x128).
    split_cases = [
        ("deepgemm_1x128", "deepgemm_128x128", {"cublaslt": "scale_product", "torch_scaled_mm": "scale_product"}),
        ("deepgemm_1x128", "deepgemm_1x128", {"cublaslt": "b_first", "torch_scaled_mm": "swapped"}),
        ("torchao_tensorwise", "torchao_tensorwise",
         {"cublaslt": "tensor", "cublaslt_fast_accum": "fast_accum", "torch_scaled_mm": "tensor"}),
    ]
    M, N, K, S = 2, 3, 1100, 3
    for n_case, (ra, rb, models) in enumerate(split_cases):
        # Every other block of 128 is 2^-12 the size of the others, so that the fp32 sums of the
        # blocks' chunks round (chunks within a few binades of each other sum exactly in fp32, and
        # no order of the sums can be seen).
        block_scale = np.tile(np.repeat([1.0, 2.0 ** -12], 128), (K + 255) // 256)[:K]
        a = (rng.standard_normal((M, K)) * 2.0 ** rng.integers(-2, 3, (M, K)) * block_scale).astype(np.float32)
        w = (rng.standard_normal((N, K)) * 2.0 ** rng.integers(-6, 3, (N, K))).astype(np.float32)
        np.save(os.path.join(scratch, "f8a.npy"), a)
        np.save(os.path.join(scratch, "f8w.npy"), w)
        out = os.path.join(scratch, f"fp8_split_{n_case}")
        r = run(tool, ["gemm", "--a", os.path.join(scratch, "f8a.npy"), "--b", os.path.join(scratch, "f8w.npy"),
                       "--b-transposed", "--format", "fp8_e4m3", "--recipe", ra, "--recipe-b", rb,
                       "--models", ",".join(models), "--split-k", str(S), "--no-exact", "--out", out, "--quiet"])
        assert r.returncode == 0, r.stderr
        a_rows, sa = quantize_fp8_scaled(a, ra, *blocks[ra], E4M3)
        b_cols, sb = quantize_fp8_scaled(w, rb, *blocks[rb], E4M3)
        want = {}
        for model, schedule in models.items():
            want[model] = fp8_scaled_oracle(a_rows, sa, b_cols, sb, E4M3, E4M3, schedule, S)
            unsplit = fp8_scaled_oracle(a_rows, sa, b_cols, sb, E4M3, E4M3, schedule)
            assert want[model] != unsplit, f"{ra} x {rb} {model}: the split does not change these outputs"
        assert_files_match(out, want, M, N, f"fp8 {ra} x {rb} split-K {S}")
    # A long study runs in row slices on the threads: the same bits as rows run alone, on any count.
    a = (rng.standard_normal((1100, 256)) * 2.0 ** rng.integers(-8, 8, (1100, 256))).astype(np.float32)
    w = rng.standard_normal((24, 256)).astype(np.float32)
    np.save(os.path.join(scratch, "f8la.npy"), a)
    np.save(os.path.join(scratch, "f8ls.npy"), a[600:700])
    np.save(os.path.join(scratch, "f8lw.npy"), w)
    common = ["gemm", "--b", os.path.join(scratch, "f8lw.npy"), "--b-transposed", "--format", "fp8_e4m3", "--models",
              "cublaslt,torch_scaled_mm", "--quiet"]
    outs = {}
    for name, a_file, threads in (("t1", "f8la.npy", "1"), ("t3", "f8la.npy", "3"), ("rows", "f8ls.npy", "2")):
        outs[name] = os.path.join(scratch, "fp8_long_" + name)
        r = run(tool, common + ["--a", os.path.join(scratch, a_file), "--out", outs[name]],
                dict(os.environ, OMP_NUM_THREADS=threads))
        assert r.returncode == 0, r.stderr
    for numerics in ("exact", "cublaslt", "torch_scaled_mm"):
        whole = np.load(os.path.join(outs["t1"], numerics + ".npy")).view(np.uint32)
        assert np.array_equal(whole, np.load(os.path.join(outs["t3"], numerics + ".npy")).view(np.uint32)), numerics
        assert np.array_equal(whole[600:700], np.load(os.path.join(outs["rows"], numerics + ".npy")).view(np.uint32)), numerics
    # Without --split-k, a shape the libraries' heuristic may split says how to ask for S (tools/cmd_gemm.cpp,
    # heuristic_may_split); a short K, or for torch a large M x N, does not.
    hints = {}
    for m, n, k in ((2, 3, 4224), (2, 3, 4096), (512, 512, 4224)):
        r = run(tool, ["gemm", "--format", "fp8_e4m3", "--models", "cublaslt,torch_scaled_mm", "--no-exact", "--m",
                       str(m), "--n", str(n), "--k", str(k), "--json", "--quiet"])
        assert r.returncode == 0, r.stderr
        for entry in json.loads(r.stdout)["numerics"]:
            hints[(m, n, k, entry["name"])] = entry["definition"]
            assert entry["split_k"] == 1, entry  # a library model states its count, unsplit included
    assert "cublaslt_split_k.py query 2x3x4224 on the GPU" in hints[(2, 3, 4224, "torch_scaled_mm")], hints
    assert "cublaslt_split_k.py query 2x3x4224 --library cublaslt on the GPU" in hints[(2, 3, 4224, "cublaslt")], hints
    assert "cublaslt_split_k.py query 512x512x4224 --library cublaslt" in hints[(512, 512, 4224, "cublaslt")], hints
    for key in ((2, 3, 4096, "torch_scaled_mm"), (2, 3, 4096, "cublaslt"), (512, 512, 4224, "torch_scaled_mm")):
        assert hints[key].endswith("; no split-K"), (key, hints[key])
    # On the recorded grid the hint names the recorded counts (emulator/library_fp8_split_k.cpp).
    r = run(tool, ["gemm", "--format", "fp8_e4m3", "--models", "torch_scaled_mm", "--no-exact", "--m", "16", "--n",
                   "16", "--k", "65536", "--json", "--quiet"])
    assert r.returncode == 0, r.stderr
    hint = json.loads(r.stdout)["numerics"][0]["definition"]
    assert "splits this call with f32 D into 22 on an H100 and 25 on an H200, as recorded" in hint, hint

    # --split-k h100 | h200 takes each model's recorded S; --d-type bf16 writes the f32 D rounded once
    # to nearest even, with the S of a bf16 call. At 16 x 192 x 32768 torch's 1x128 x 128x128 call
    # splits into 12 with f32 D and 11 with bf16 D on the H100, 12 with either on the H200.
    a16 = rng.standard_normal((16, 32768)).astype(np.float32)
    b16 = rng.standard_normal((32768, 192)).astype(np.float32)
    np.save(os.path.join(scratch, "a16.npy"), a16)
    np.save(os.path.join(scratch, "b16.npy"), b16)
    operands = ["gemm", "--a", os.path.join(scratch, "a16.npy"), "--b", os.path.join(scratch, "b16.npy"), "--format",
                "fp8_e4m3", "--no-exact", "--quiet"]
    base = operands + ["--models", "torch_scaled_mm,cublaslt", "--json"]
    recorded_counts = {}
    for gpu, d_type in (("h100", "f32"), ("h100", "bf16"), ("h200", "f32")):
        out = os.path.join(scratch, f"recorded_{gpu}_{d_type}")
        r = run(tool, base + ["--split-k", gpu, "--d-type", d_type, "--out", out])
        assert r.returncode == 0, r.stderr
        report = json.loads(r.stdout)
        assert report["recorded_split_k"]["gpu"] == gpu and report["recorded_split_k"]["d_type"] == d_type, report
        assert "cuBLASLt 13.1 (130100)" in report["recorded_split_k"]["provenance"], report
        for entry in report["numerics"]:
            recorded_counts[(gpu, d_type, entry["name"])] = entry["split_k"]
            assert f"as cuBLASLt 13.1's heuristic chose for this call with {d_type} D on an {gpu.upper()}" \
                in entry["definition"], entry["definition"]
            # The same study with the count given as a number: the same bits (bf16: rounded here).
            plain = os.path.join(scratch, f"plain_{gpu}_{d_type}_{entry['name']}")
            r2 = run(tool, operands + ["--models", entry["name"], "--split-k", str(entry["split_k"]), "--out", plain])
            assert r2.returncode == 0, r2.stderr
            want = np.load(os.path.join(plain, entry["name"] + ".npy")).view(np.uint32)
            if d_type == "bf16":
                want = bf16_rne(want).astype(np.uint32) << 16
            got = np.load(os.path.join(out, entry["name"] + ".npy")).view(np.uint32)
            assert np.array_equal(got, want), (gpu, d_type, entry["name"])
    assert recorded_counts[("h100", "f32", "torch_scaled_mm")] == 12, recorded_counts
    assert recorded_counts[("h100", "bf16", "torch_scaled_mm")] == 11, recorded_counts
    assert recorded_counts[("h200", "f32", "torch_scaled_mm")] == 12, recorded_counts
    print(f"fp8 with fp32 scales: DeepGEMM (1x128, 128x128, ue8m0) and torchao (tensorwise, rowwise, e5m2) recipes; "
          f"exact and the cuBLASLt / torch._scaled_mm models agree on {len(cases)} studies with K=300 and "
          f"{len(split_cases)} with split-K 3 at K=1100; a 1100-row study is the same on 1 and 3 threads and in rows "
          f"run alone; {n_bias} torch studies with a bias and f16 or bf16 D")


def check_cublaslt_epilogue(tool, scratch):
    """cuBLASLt's epilogue (--models cublaslt with --alpha, --c, --bias, --d-type f16 | e4m3): the
    plain model's D (checked against the oracle above) carried through the measured rule in numpy's
    float32 arithmetic, where the rule needs no FMA: beta = 0, or beta = 1 after a split-K
    (FMA(1, C, RN(S X)) is one add); an e4m3 D by the oracle's saturating rounding."""
    rng = np.random.default_rng(31)
    M, N, K = 12, 9, 640
    a = rng.standard_normal((M, K)).astype(np.float32)
    w = rng.standard_normal((N, K)).astype(np.float32)
    files = {name: os.path.join(scratch, f"lt_{name}.npy") for name in ("a", "w", "c", "bias", "bias16")}
    np.save(files["a"], a)
    np.save(files["w"], w)
    base = ["gemm", "--a", files["a"], "--b", files["w"], "--b-transposed", "--format", "fp8_e4m3", "--quiet"]
    studies = 0
    for recipe, recipe_b in (("torchao_tensorwise", "torchao_tensorwise"), ("deepgemm_1x128", "deepgemm_128x128")):
        recipes = ["--recipe", recipe, "--recipe-b", recipe_b]
        for split in ("1", "2"):
            plain = os.path.join(scratch, f"lt_plain_{recipe}_{split}")
            r = run(tool, base + recipes + ["--models", "cublaslt,cublaslt_fast_accum" if recipe == "torchao_tensorwise" else
                                            "cublaslt", "--split-k", split, "--no-exact", "--out", plain])
            assert r.returncode == 0, r.stderr
            for model in (["cublaslt", "cublaslt_fast_accum"] if recipe == "torchao_tensorwise" else ["cublaslt"]):
                d0 = np.load(os.path.join(plain, model + ".npy"))
                bias = (bf16_rne((rng.standard_normal(M) * 4).astype(np.float32).view(np.uint32)).astype(np.uint32)
                        << 16).view(np.float32)
                np.save(files["bias"], bias)
                y = d0 * np.float32(2) + bias[:, None]
                checks = [  # (options, expected D as float32, the fp64 reference's epilogue)
                    (["--alpha", "2", "--bias", files["bias"]], y, dict(alpha=2.0, bias=bias)),
                    (["--alpha", "2", "--bias", files["bias"], "--relu"], np.where(y > 0, y, np.float32(0)),
                     dict(alpha=2.0, bias=bias, relu=True)),
                ]
                bias16 = (rng.standard_normal(M) * 4).astype(np.float16)
                np.save(files["bias16"], bias16)
                checks.append((["--d-type", "f16", "--bias", files["bias16"]],
                               (d0 + bias16.astype(np.float32)[:, None]).astype(np.float16).astype(np.float32),
                               dict(bias=bias16)))
                if split == "2":
                    c = (rng.standard_normal((M, N)) * 8).astype(np.float32)
                    np.save(files["c"], c)
                    checks.append((["--c", files["c"], "--bias", files["bias"]], (c + d0) + bias[:, None],
                                   dict(c=c, bias=bias)))
                for options, want, epilogue in checks:
                    out = os.path.join(scratch, "lt_out")
                    r = run(tool, base + recipes + ["--models", model, "--split-k", split, "--no-exact", "--out", out,
                                                    "--json"] + options)
                    assert r.returncode == 0, (options, r.stderr)
                    got = np.load(os.path.join(out, model + ".npy"))
                    assert np.array_equal(got.view(np.uint32), want.astype(np.float32).view(np.uint32)), \
                        (recipe, split, model, options, np.argwhere(got != want)[:4])
                    report = json.loads(r.stdout)["numerics"][0]
                    assert "epilogue y = " in report["definition"]
                    assert_report_matches_numpy(report, got, a, w.T, **epilogue)
                    studies += 1
    # An fp8 D: RN(d_scale D0) in f32, then the fp8 type to nearest even, saturating; amax_d = max |D0|.
    # e4m3 with e4m3 x e4m3; e5m2, which cuBLASLt takes with an e5m2 operand, with e4m3 x e5m2.
    for d_type, fmt, d_scale, fmt_b in (("e4m3", E4M3, 40, "fp8_e4m3"), ("e5m2", E5M2, 5000, "fp8_e5m2")):
        args = base + ["--recipe", "torchao_tensorwise", "--format-b", fmt_b, "--no-exact"]
        plain = os.path.join(scratch, "lt_plain_" + d_type)
        r = run(tool, args + ["--out", plain])
        assert r.returncode == 0, r.stderr
        d0 = np.load(os.path.join(plain, "cublaslt.npy"))
        out = os.path.join(scratch, "lt_" + d_type)
        r = run(tool, args + ["--d-type", d_type, "--d-scale", str(d_scale), "--out", out, "--json"])
        assert r.returncode == 0, r.stderr
        scaled = d0 * np.float32(d_scale)
        want = np.array([[float(element_rne(Fraction(float(v)), fmt)) for v in row] for row in scaled], dtype=np.float32)
        got = np.load(os.path.join(out, "cublaslt.npy"))
        assert np.array_equal(got.view(np.uint32), want.view(np.uint32)), (d_type, np.argwhere(got != want)[:4])
        assert np.abs(got).max() == float(fmt[3]), f"{d_type}: no output saturated: the D scale does not test saturation"
        amax = json.loads(r.stdout)["numerics"][0]["amax_d"]
        assert np.float32(amax) == np.abs(d0).max(), (d_type, amax, np.abs(d0).max())  # 9 digits: the f32
        studies += 1
    print(f"cuBLASLt epilogue: {studies} studies (alpha, C after a split-K, a bias per row, ReLU, f16, e4m3 and e5m2 D with "
          "the D scale and amax_d) equal numpy's float32 arithmetic on the plain model's D")
    # An f16 D beside exact's f32 D: the ulps from exact are counted on the values in f32 ulps, the same
    # whichever model wrote the same D (cuBLASLt's f16 D comes through its epilogue, torch's is rounded
    # from the f32 D; comparing f16 codes with f32 words gave false NaN mismatches).
    reports = {}
    for model in ("cublaslt", "torch_scaled_mm"):
        r = run(tool, base + ["--recipe", "torchao_tensorwise", "--models", model, "--d-type", "f16", "--json"])
        assert r.returncode == 0, r.stderr
        reports[model] = json.loads(r.stdout)["numerics"][1]["vs_exact"]
    assert reports["cublaslt"] == reports["torch_scaled_mm"], reports
    assert reports["cublaslt"]["nan_mismatches"] == 0 and reports["cublaslt"]["differ"] > 0, reports


# ---- --sparse: torch._cslt_sparse_mm (cuSPARSELt 0.8) on Hopper, as docs/emulator.md states it:
# magnitude pruning (2 of 4; 1 of 2 for f32), the cast, the chain of wgmma.sp steps (T-FDPA of the
# accumulator and the step's kept products: f16/bf16 F = 25 and f32 results toward zero; e4m3 F = 13
# and 13 fraction bits; tf32 reads A rounded up, (x + 0x1FFF + bit 13) with 13 bits cleared, and B to
# nearest even), K tiles dealt to S slices (the longer ones last) summed pairwise, -Inf -> NaN, D
# rounded to its type (e4m3 saturating).
def check_sparse(tool, scratch):
    rng = np.random.default_rng(11)
    cases = [("f16", "f16", 256, 64, 3), ("bf16", "bf16", 128, 64, 1), ("f32", "f32", 128, 32, 2),
             ("e4m3", "f32", 512, 128, 3), ("e4m3", "e4m3", 512, 256, 2)]
    for name, d_type, K, tile, slices in cases:
        M, N = 8, 6
        group = 2 if name == "f32" else 4
        lo, hi = (-5, 4) if name == "e4m3" else (-6, 4)
        a = rng.standard_normal((M, K)) * 2.0 ** rng.integers(lo, hi, (M, K))
        b = (rng.standard_normal((K, N)) * 2.0 ** rng.integers(lo, hi, (K, N))).astype(np.float32)
        a[0, 0:4] = [1.0, -1.0, 1.0, 0.5]  # ties keep the lower positions (0 and 1; for f32 0 and 2)
        a[1, 4:8] = [0.25, -0.25, 0.25, -0.25]
        if d_type == "e4m3":
            b *= 8  # sums past 448: D saturates
        if name in ("f16", "bf16"):  # D[2, 0]: +-64 products cancel, the small ones fall under the 2^(e_max - 25) grid
            a[2, :] = np.tile([1.0, 1.0, 0.0, 0.0], K // 4)
            b[0::4, 0] = 64.0 * (-1.0) ** np.arange(K // 4)
            b[1::4, 0] = rng.standard_normal(K // 4) * 2.0 ** -16
        if name != "f32":  # D[3, 1]: +-2 products whose exact sum is 0 (+0: no certificate settles it)
            a[3, :] = np.tile([1.0, 1.0, 0.0, 0.0], K // 4)
            b[0::4, 1] = 2.0 * (-1.0) ** np.arange(K // 4)
            b[1::4, 1] = 0.0
        np.save(os.path.join(scratch, "sa.npy"), np.asfortranarray(a))
        np.save(os.path.join(scratch, "sb.npy"), b)
        out = os.path.join(scratch, "sparse_" + name + "_" + d_type)
        args = ["gemm", "--sparse", "--a", os.path.join(scratch, "sa.npy"), "--b", os.path.join(scratch, "sb.npy"),
                "--format", name, "--d-type", d_type, "--split-k", str(slices), "--models", "cusparselt,sequential_f32",
                "--quiet"]
        r = run(tool, args + ["--out", out])
        assert r.returncode == 0, r.stderr
        pruned, removed = prune_oracle(a.astype(np.float32).astype(np.float64), group)
        assert list(pruned[0, 0:4] != 0) == ([True, True, False, False] if group == 4 else [True, False, True, False])
        fa = [[cast_oracle(Fraction(float(v)), name) for v in row] for row in pruned.astype(np.float32)]
        fb = [[cast_oracle(Fraction(float(v)), name) for v in row] for row in b]
        want = sparse_oracle(fa, fb, name, d_type, tile, slices)
        assert_files_match(out, want, M, N, f"sparse {name} -> {d_type}")
        assert any(want["cusparselt"][key] != want["exact"][key] for key in want["exact"]), name + ": cusparselt equals exact here"
        if d_type == "e4m3":
            assert any(abs(np.array(want["cusparselt"][key], dtype=np.uint32).view(np.float32)) == 448 for key in want["exact"])
        report = json.loads(run(tool, args + ["--json"]).stdout)
        sp = report["sparse"]
        assert (sp["input"], sp["d_type"], sp["group"], sp["kept"], sp["split_k"]) == (name, d_type, group, group // 2, slices), sp
        assert sp["values_pruned"] == removed, (sp, removed)
        # The report's pruning error and error statistics against numpy's fp64 products of A (as read,
        # in double) before and after the CLI's pruning of it, and its count of values the cast changed.
        pruned64, _ = prune_oracle(a, group)
        dense_product, pruned_product = a @ b.astype(np.float64), pruned64 @ b.astype(np.float64)
        pruning_error = np.linalg.norm(pruned_product - dense_product) / np.linalg.norm(dense_product)
        assert abs(sp["pruning_relative_frobenius"] - pruning_error) <= 1e-5 * pruning_error, (sp, pruning_error)
        for n in report["numerics"]:
            assert_report_matches_numpy(n, np.load(os.path.join(out, n["name"] + ".npy")), pruned64, b)
        changed = sum(Fraction(float(v)) != c for values, casts in ((pruned.astype(np.float32), fa), (b, fb))
                      for row, cast_row in zip(values, casts) for v, c in zip(row, cast_row))
        assert (report["inputs_changed_by_cast"], report["inputs_nonfinite_after_cast"]) == (changed, 0), (report, changed)
        assert changed > 0 or name == "f32", name
        outputs = report["numerics"][0]["outputs"]
        # emulator::exact_mma settles every output one way: proved exact, certified, NaN, or the reference.
        assert outputs["proved"] + outputs["certified"] + outputs["special"] + outputs["reference"] == M * N, outputs
        for n in report["numerics"]:
            differ = sum(want[n["name"]][key] != want["exact"][key] for key in want["exact"])
            assert n["vs_exact"]["differ"] == differ, (name, n["name"], n["vs_exact"], differ)
    # Row slices and threads change no bit: 200 rows run in slices of 64 rows (every model), and
    # each window of rows run alone gives the long run's rows.
    a = (rng.standard_normal((200, 256)) * 2.0 ** rng.integers(-6, 7, (200, 256))).astype(np.float32)
    b = (rng.standard_normal((256, 16)) * 2.0 ** rng.integers(-6, 7, (256, 16))).astype(np.float32)
    np.save(os.path.join(scratch, "slice_a.npy"), a)
    np.save(os.path.join(scratch, "slice_b.npy"), b)
    models = ("exact", "cusparselt", "sequential_f32")
    files = []
    for threads in ("1", "3"):
        out = os.path.join(scratch, "sparse_threads_" + threads)
        r = run(tool, ["gemm", "--sparse", "--a", os.path.join(scratch, "slice_a.npy"), "--b", os.path.join(scratch, "slice_b.npy"),
                       "--split-k", "2", "--models", "cusparselt,sequential_f32", "--out", out, "--quiet", "--json"],
                env=dict(os.environ, OMP_NUM_THREADS=threads))
        assert r.returncode == 0, r.stderr
        files.append([np.load(os.path.join(out, f + ".npy")) for f in models])
        # N = 16: the fp64 products' register tiles of 16 columns, with and without |A||B|.
        report, a64, b64 = json.loads(r.stdout), a.astype(np.float64), b.astype(np.float64)
        dense_product, pruned_product = a64 @ b64, prune_oracle(a64, 4)[0] @ b64
        pruning_error = np.linalg.norm(pruned_product - dense_product) / np.linalg.norm(dense_product)
        assert abs(report["sparse"]["pruning_relative_frobenius"] - pruning_error) <= 1e-5 * pruning_error, (report, pruning_error)
        for n, d in zip(report["numerics"], files[-1]):
            assert_report_matches_numpy(n, d, prune_oracle(a64, 4)[0], b)
    assert all(x.tobytes() == y.tobytes() for x, y in zip(*files)), "--sparse results depend on the thread count"
    for lo, hi in ((0, 3), (63, 66), (128, 200)):
        np.save(os.path.join(scratch, "slice_rows.npy"), a[lo:hi])
        out = os.path.join(scratch, "sparse_rows")
        r = run(tool, ["gemm", "--sparse", "--a", os.path.join(scratch, "slice_rows.npy"), "--b", os.path.join(scratch, "slice_b.npy"),
                       "--split-k", "2", "--models", "cusparselt,sequential_f32", "--out", out, "--quiet"])
        assert r.returncode == 0, r.stderr
        for model, whole in zip(models, files[0]):
            assert np.load(os.path.join(out, model + ".npy")).tobytes() == whole[lo:hi].tobytes(), f"{model}: rows {lo}..{hi} differ"
    print(f"sparse: pruning, cast, exact, cusparselt (split-K 1-3, pairwise) and sequential_f32 agree bit for bit "
          f"with the oracle for {len(cases)} input/D pairs")

    # A NaN of B where A is pruned: the sparse kernel never reads it, exact (0 x NaN) is NaN; an e4m3
    # cast above 464 gives NaN, 464 itself 448.
    a = np.ones((2, 64), np.float32)
    a[0, 3] = 0.5  # pruned in row 0 (the smallest of its group), kept in row 1
    a[1, 0:4] = [0.5, 0.25, 0.125, 1.0]
    b = np.ones((64, 2), np.float32)
    b[3, 0] = np.nan
    np.save(os.path.join(scratch, "na.npy"), a)
    np.save(os.path.join(scratch, "nb.npy"), b)
    out = os.path.join(scratch, "sparse_nan")
    r = run(tool, ["gemm", "--sparse", "--a", os.path.join(scratch, "na.npy"), "--b", os.path.join(scratch, "nb.npy"),
                   "--out", out, "--quiet", "--json"])
    assert r.returncode == 0, r.stderr
    exact, kernel = np.load(os.path.join(out, "exact.npy")), np.load(os.path.join(out, "cusparselt.npy"))
    assert np.isnan(exact[0, 0]) and not np.isnan(kernel[0, 0]) and np.isnan(exact[1, 0]) and np.isnan(kernel[1, 0]), (exact, kernel)
    report = json.loads(r.stdout)
    assert report["numerics"][1]["vs_exact"]["nan_mismatches"] == 1, report["numerics"][1]
    # Column 0 holds the NaN: its outputs are NaN without a sum (special); column 1's are proved exact.
    assert report["numerics"][0]["outputs"] == {"proved": 2, "special": 2, "reference": 0, "certified": 0}, report["numerics"][0]
    a[0, 0], a[0, 1] = 470.0, 464.0
    np.save(os.path.join(scratch, "na.npy"), a)
    r = run(tool, ["gemm", "--sparse", "--format", "e4m3", "--a", os.path.join(scratch, "na.npy"), "--b",
                   os.path.join(scratch, "nb.npy"), "--quiet"])
    assert r.returncode == 2 and "multiple of 256" in r.stderr, r.stderr  # e4m3 -> e4m3 runs K in tiles of 256
    a4, b4 = np.tile(a, (1, 4)), np.ones((256, 2), np.float32)
    np.save(os.path.join(scratch, "na.npy"), a4)
    np.save(os.path.join(scratch, "nb.npy"), b4)
    r = run(tool, ["gemm", "--sparse", "--format", "e4m3", "--a", os.path.join(scratch, "na.npy"), "--b",
                   os.path.join(scratch, "nb.npy"), "--quiet", "--json", "--out", out])
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["inputs_nonfinite_after_cast"] == 4, r.stdout  # 470 in each of A's 4 copies of row 0
    kernel = np.load(os.path.join(out, "cusparselt.npy"))
    assert np.isnan(kernel[0]).all() and not np.isnan(kernel[1]).any(), kernel
    print("sparse: a NaN of B at a pruned position reaches exact only; e4m3 casts 470 to NaN and 464 to 448")


def check_errors(tool, scratch):
    def path(name):
        return os.path.join(scratch, name)

    good = np.ones((4, 64), np.float32)
    np.save(path("g.npy"), good)
    np.save(path("gb.npy"), np.ones((64, 3), np.float32))
    np.save(path("c43.npy"), np.ones((4, 3), np.float32))
    np.save(path("c43_fine.npy"), np.full((4, 3), 1 + 2.0 ** -12, np.float32))
    raw = open(path("g.npy"), "rb").read()
    open(path("magic.npy"), "wb").write(b"\x93NUMPX" + raw[6:])
    open(path("trunc.npy"), "wb").write(raw[:-3])
    open(path("trail.npy"), "wb").write(raw + b"\0\0\0\0")
    open(path("hdr.npy"), "wb").write(raw[:8] + b"\xff\x7f" + raw[10:])
    open(path("short.npy"), "wb").write(raw[:7])
    header_end = raw.index(b"}") + 1  # text after the dict, within the header's length
    open(path("junk.npy"), "wb").write(raw[:header_end] + b" x" + raw[header_end + 2:])
    # A dtype with bytes outside printable ASCII: the message shows them as \xNN (a NUL would cut it).
    descr_at = raw.index(b"'<f4'")
    open(path("descr.npy"), "wb").write(raw[:descr_at] + b"'<\x01\xe9'" + raw[descr_at + 5:])
    np.save(path("int.npy"), np.ones((4, 64), np.int32))
    np.save(path("cplx.npy"), np.ones((4, 64), np.complex64))
    np.save(path("rank3.npy"), np.ones((2, 4, 64), np.float32))
    np.save(path("rank1.npy"), np.ones(64, np.float32))
    np.save(path("empty.npy"), np.ones((0, 64), np.float32))
    np.save(path("k65.npy"), np.ones((65, 3), np.float32))
    np.save(path("c_bad.npy"), np.ones((3, 3), np.float32))
    np.save(path("bias8.npy"), np.ones(8, np.float32))
    np.save(path("bias8_inexact.npy"), np.float64([1, 1, 1 + 2.0 ** -12, 1, 1, 1, 1, 1]))
    np.save(path("bias8_inf.npy"), np.float32([1, 1, 1, 1, 1, 1, 1, np.inf]))
    nan = np.ones((4, 64), np.float32)
    nan[1, 3] = np.nan
    np.save(path("nan.npy"), nan)
    cases = [
        (["--a", path("missing.npy"), "--b", path("gb.npy")], "cannot open"),
        (["--a", path("magic.npy"), "--b", path("gb.npy")], "not a NumPy .npy file"),
        (["--a", path("trunc.npy"), "--b", path("gb.npy")], "truncated"),
        (["--a", path("trail.npy"), "--b", path("gb.npy")], "trailing bytes"),
        (["--a", path("hdr.npy"), "--b", path("gb.npy")], "runs past the end"),
        (["--a", path("short.npy"), "--b", path("gb.npy")], "not a NumPy .npy file"),
        (["--a", path("junk.npy"), "--b", path("gb.npy")], "text after the header's dict"),
        (["--a", path("descr.npy"), "--b", path("gb.npy")], "dtype '<\\x01\\xe9' is not taken"),
        (["--a", "/dev/zero", "--b", path("gb.npy")], "not a NumPy .npy file"),  # refused at once, not read whole
        (["--a", scratch, "--b", path("gb.npy")], "a directory, not a .npy file"),
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
        (["--models", "sm_80"], "unknown model 'sm_80' for block formats"),
        (["--models", "sm_100a,,sm_90a"], "comma list"),
        (["--models", "sm_100a,sm_100a"], "names sm_100a twice"),
        (["--m", "8", "--m", "16"], "option --m is given twice"),
        (["--json", "--json"], "option --json is given twice"),
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
        (["--format", "fp8_e4m3", "--format-b", "mxfp8_e4m3"], "must both be fp8 with fp32 scales"),
        (["--format", "fp8_e4m3", "--recipe", "te_mxfp8"], "unknown --recipe 'te_mxfp8' for fp8 with fp32 scales"),
        (["--format", "fp8_e4m3", "--recipe-b", "ocp"], "unknown --recipe-b 'ocp' for fp8 with fp32 scales"),
        (["--format", "fp8_e4m3", "--models", "sm_100a"], "unknown model 'sm_100a' for fp8 with fp32 scales"),
        (["--format", "fp8_e4m3", "--recipe", "torchao_rowwise", "--models", "cublaslt", "--split-k", "2"],
         "cublaslt row x row was never seen splitting K"),
        (["--format", "fp8_e4m3", "--recipe", "torchao_rowwise", "--models", "torch_scaled_mm_fast_accum"],
         "measured: tensor x tensor"),
        (["--format", "fp8_e5m2", "--recipe", "torchao_tensorwise"], "not e5m2 x e5m2"),
        (["--format", "fp8_e5m2", "--models", "cublaslt_fast_accum", "--recipe", "deepgemm_1x128"], "was not measured"),
        (["--format", "fp8_e4m3", "--format-b", "fp8_e5m2", "--recipe-b", "deepgemm_128x128"], "float8_e4m3fn only"),
        (["--format", "mxfp8_e4m3", "--models", "cublaslt"], "unknown model 'cublaslt'"),
        (["--a", path("g.npy"), "--b", path("gb.npy"), "--c", path("c_bad.npy"), "--format", "fp8_e4m3"],
         "the exact numerics take no epilogue; add --no-exact"),
        (["--a", path("g.npy"), "--b", path("gb.npy"), "--c", path("c_bad.npy"), "--format", "fp8_e4m3", "--no-exact"],
         "C is 3 x 3 but D is 4 x 3"),
        (["--format", "fp8_e4m3", "--models", "torch_scaled_mm", "--alpha", "2", "--no-exact"],
         "torch_scaled_mm takes none of them"),
        (["--format", "fp8_e4m3", "--models", "cublaslt,torch_scaled_mm", "--d-type", "bf16", "--bias", path("bias8.npy"),
          "--no-exact"], "torch._scaled_mm adds it per column of D and cuBLASLt per row"),
        (["--format", "fp8_e4m3", "--beta", "0.5", "--no-exact"], "--beta 0.5 reads C: give --c C.npy"),
        (["--a", path("g.npy"), "--b", path("gb.npy"), "--c", path("c43.npy"), "--format", "fp8_e4m3", "--beta", "0",
          "--no-exact"], "--c with --beta 0: cuBLASLt does not read C"),
        (["--format", "fp8_e4m3", "--d-scale", "2", "--no-exact"], "the D scale was measured with an fp8 D only"),
        (["--format", "fp8_e4m3", "--relu"], "--relu and an fp8 --d-type: the exact numerics take no epilogue"),
        (["--format", "fp8_e4m3", "--recipe", "torchao_tensorwise", "--models", "torch_scaled_mm", "--relu", "--no-exact"],
         "torch_scaled_mm takes none of them"),
        (["--format", "mxfp8_e4m3", "--relu"], "--relu: only the library GEMMs of fp8 with fp32 scales"),
        (["--sparse", "--relu"], "--relu does not go with --sparse"),
        (["--format", "fp8_e4m3", "--c-type", "f16", "--no-exact"], "C has D's type"),
        (["--format", "fp8_e4m3", "--d-type", "e4m3", "--c-type", "f32", "--no-exact"], "--c-type 'f32': bf16 or f16"),
        (["--format", "fp8_e4m3", "--d-type", "e4m3", "--no-exact"], "tensor-wise scales only"),
        (["--format", "fp8_e4m3", "--recipe", "torchao_tensorwise", "--d-type", "e4m3"], "add --no-exact"),
        (["--format", "fp8_e4m3", "--alpha", "nan", "--no-exact"], "--alpha 'nan': a finite number"),
        (["--format", "fp8_e4m3", "--alpha", "2x", "--no-exact"], "--alpha '2x': a finite number"),
        (["--format", "fp8_e4m3", "--beta", "0x10", "--no-exact"], "--beta '0x10': a finite number, in decimal"),
        (["--format", "fp8_e4m3", "--alpha", "1e-50", "--no-exact"], "--alpha 1e-50 is out of f32's range"),
        (["--format", "fp8_e4m3", "--d-type", "e4m3", "--c-type", "f16", "--no-exact"], "--c-type is the type of --c"),
        (["--format", "fp8_e4m3", "--bias", path("bias8_inexact.npy"), "--no-exact"],
         "value 2 (1.000244140625) is not a finite bfloat16 value"),
        (["--format", "fp8_e4m3", "--bias", path("rank1.npy"), "--no-exact"],
         "holds 64 values; with the cublaslt models D has M = 8 rows"),
        (["--a", path("g.npy"), "--b", path("gb.npy"), "--c", path("c43_fine.npy"), "--format", "fp8_e4m3", "--recipe",
          "torchao_tensorwise", "--d-type", "e4m3", "--no-exact"], "is not a finite bfloat16 value"),
        (["--format", "mxfp8_e4m3", "--alpha", "2"], "--alpha: only the library GEMMs of fp8 with fp32 scales (--format fp8_e4m3, fp8_e5m2) take it"),
        (["--sparse", "--m", "8", "--n", "8", "--k", "64", "--beta", "1"], "--beta does not go with --sparse"),
        (["--format", "fp8_e4m3", "--recipe", "torchao_tensorwise", "--d-type", "e5m2", "--no-exact"],
         "cuBLASLt takes an e5m2 D with an e5m2 operand only"),
        (["--format", "fp8_e4m3", "--d-type", "e4m3", "--recipe", "torchao_tensorwise", "--split-k", "h100", "--no-exact"],
         "the split counts were recorded for f32 and bf16 D"),
        (["--a", path("nan.npy"), "--b", path("gb.npy"), "--format", "fp8_e4m3"], "element (1, 3) is nan"),
        (["--format", "fp8_e4m3", "--recipe", "torchao_rowwise", "--models", "torch_scaled_mm", "--split-k", "2"],
         "torch_scaled_mm row x row was never seen splitting K"),
        (["--format", "fp8_e4m3", "--split-k", "0"], "--split-k"),
        (["--format", "mxfp8_e4m3", "--split-k", "2"], "only the library GEMMs of fp8 with fp32 scales"),
        (["--format", "mxfp8_e4m3", "--d-type", "bf16"], "--d-type: only the library GEMMs of fp8 with fp32 scales"),
        (["--format", "fp8_e4m3", "--split-k", "h300"], "a split count 1 .. 64, or h100 / h200"),
        (["--format", "fp8_e4m3", "--split-k", "h100"], "8x8x64 is not on the recorded grid"),
        (["--format", "fp8_e4m3", "--d-type", "f8"], "--d-type 'f8': f32, bf16, f16, e4m3 or e5m2"),
        (["--format", "fp8_e4m3", "--models", "torch_scaled_mm", "--d-type", "f16", "--split-k", "h100"],
         "the split counts were recorded for f32 and bf16 D"),
        (["--format", "fp8_e4m3", "--models", "torch_scaled_mm", "--bias", path("bias8.npy"), "--no-exact"],
         "torch._scaled_mm refuses it"),
        (["--format", "fp8_e4m3", "--models", "torch_scaled_mm", "--d-type", "bf16", "--bias", path("bias8.npy")],
         "the exact numerics take no bias; add --no-exact"),
        (["--format", "fp8_e4m3", "--models", "torch_scaled_mm", "--d-type", "bf16", "--bias", path("rank1.npy"), "--no-exact"],
         "holds 64 values; D has N = 8 columns"),
        (["--format", "fp8_e4m3", "--models", "torch_scaled_mm", "--d-type", "bf16", "--bias", path("g.npy"), "--no-exact"],
         "the array is 2-D; a vector needs 1 dimension"),
        (["--format", "fp8_e4m3", "--models", "torch_scaled_mm", "--d-type", "bf16", "--bias", path("bias8_inexact.npy"),
          "--no-exact"], "value 2 (1.000244140625) is not a finite bf16 value"),
        (["--format", "fp8_e4m3", "--models", "torch_scaled_mm", "--d-type", "f16", "--bias", path("bias8_inf.npy"),
          "--no-exact"], "value 7 (inf) is not a finite f16 value"),
        (["--format", "mxfp8_e4m3", "--bias", path("bias8.npy")], "--bias: only the library GEMMs of fp8 with fp32 scales"),
        (["--sparse", "--m", "8", "--n", "8", "--k", "64", "--bias", path("bias8.npy")], "--bias does not go with --sparse"),
        (["--format", "fp8_e4m3", "--cublaslt-workspace-mib", "1"], "it selects the recorded split counts"),
        (["--format", "fp8_e4m3", "--split-k", "h100", "--cublaslt-workspace-mib", "32"], "recorded with 1 and 64 MiB"),
        (["--sparse", "--format", "e5m2"], "with --sparse, f16, bf16, f32 or e4m3"),
        (["--sparse", "--format", "bf16", "--d-type", "f16"], "no measured kernel for bfloat16 -> float16"),
        (["--sparse", "--m", "8", "--n", "8", "--k", "100"], "K must be a multiple of 64"),
        (["--sparse", "--m", "8", "--n", "8", "--k", "128", "--split-k", "3"], "K = 128 has 2 tiles of 64"),
        (["--sparse", "--m", "8", "--n", "8", "--k", "64", "--prune", "none"],
         "row 0, group 0 (K 0..3) holds 4 nonzero values: A is not 2:4 sparse"),
        (["--sparse", "--format", "f32", "--m", "8", "--n", "8", "--k", "64", "--prune", "none"], "A is not 1:2 sparse"),
        (["--sparse", "--prune", "rows"], "--prune 'rows': magnitude or none"),
        (["--prune", "none"], "it chooses how --sparse prunes A"),
        (["--sparse", "--recipe", "ocp"], "--recipe does not go with --sparse"),
        (["--sparse", "--format-b", "f16"], "--format-b does not go with --sparse"),
        (["--sparse", "--a", path("g.npy"), "--b", path("gb.npy"), "--c", path("c_bad.npy")], "bias was not measured"),
        (["--sparse", "--models", "sm_100a"], "unknown model 'sm_100a' with --sparse"),
        (["--format", "f16"], "or f16, bf16, f32, e4m3 with --sparse"),
        # A missing value does not take the next option (it once wrote into a directory "--json").
        (["--out", "--json"], "option --out needs a value, got the option --json"),
    ]
    for args, message in cases:
        r = run(tool, ["gemm", "--quiet", "--m", "8", "--n", "8", "--k", "64"] + args if args[0] in ("--format", "--format-b", "--recipe", "--recipe-b", "--models", "--data") else ["gemm", "--quiet"] + args)
        assert r.returncode == 2, f"{args}: exit {r.returncode}, stderr {r.stderr!r}"
        assert message in r.stderr, f"{args}: expected {message!r} in {r.stderr!r}"
        assert "Traceback" not in r.stderr and "terminate" not in r.stderr, r.stderr
    print(f"errors: {len(cases)} bad inputs, each exit 2 with its rule named")
    # --help after a command, anywhere among its arguments, prints that command's help.
    for args in (["gemm", "--help"], ["gemm", "--m", "8", "-h"], ["convert", "--help"], ["golden", "verify", "--help"]):
        r = run(tool, args)
        assert r.returncode == 0 and r.stdout.startswith("blockscale " + args[0]), (args, r.returncode, r.stdout[:80], r.stderr)
    # Every command refuses a stray argument.
    for command in ("demo", "formats", "models", "gemm"):
        r = run(tool, [command, "stray"])
        assert r.returncode == 2 and "unexpected argument 'stray'" in r.stderr, (command, r.returncode, r.stderr)


def check_npy_claims(tool, scratch):
    """A .npy file's header says how much to read; memory must follow the bytes the file holds. A
    112-byte file whose version-2 header claims 2^32 - 1 bytes (found by libFuzzer) is refused as
    truncated, under a 1 GiB address-space limit (left out in sanitizer builds, whose shadow memory
    needs more address space than that)."""
    import resource
    bad = os.path.join(scratch, "claims_4g.npy")
    open(bad, "wb").write(b"\x93NUMPY\x02\xfe" + b"\xff" * 103 + b"\xa0")
    np.save(os.path.join(scratch, "claims_b.npy"), np.ones((64, 3), np.float32))
    sanitized = b"libasan" in subprocess.run(["ldd", tool], capture_output=True).stdout

    def limit():
        if not sanitized:
            resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
    r = subprocess.run([tool, "gemm", "--a", bad, "--b", os.path.join(scratch, "claims_b.npy"), "--quiet"],
                       capture_output=True, text=True, preexec_fn=limit)
    assert r.returncode == 2 and "runs past the end of the file" in r.stderr, (r.returncode, r.stderr)
    print("npy claims: a header claiming 4 GiB in a 112-byte file is refused within 1 GiB"
          + (" (no limit: sanitizer build)" if sanitized else ""))


def check_builtin_data(tool, scratch):
    """The built-in data are one std::mt19937_64 stream per seed; each thread generates a range of
    values from an engine jumped ahead to the range's first draw. Pinned to what the serial
    generator (std::mt19937_64 walked draw by draw, before 2026-11-22) gave, through the SHA-256
    of `exact` for A of 1024 x 8200 (B starts 12 or 1 x 8,396,800 draws in; stochastic rounding's
    random words are a second stream), on 1, 2 and 3 threads (jumps of 2^16 draws and more, and
    ranges that do not start at a whole state). Also the error report over several chunks of
    outputs against numpy."""
    import hashlib
    pinned = [(["--data", "gaussian", "--seed", "5"], "308715f5d57b80972d9947728da2547437cd3b8f919c7a477e40eb2a2396b188"),
              (["--data", "heavy_tailed", "--seed", "6"], "37522e6d5fb6368ae36054b60bae6d60eb0dc38ce8d07456292c008c38e2f45e"),
              (["--data", "gaussian", "--seed", "7", "--format", "nvfp4", "--recipe", "nvfp4_te_stochastic"],
               "d1b95c31730ac58f4d6de5930db561ccb52c35daf32755009fa2909ab8e8bac5")]
    for extra, want in pinned:
        for threads in ("1", "2", "3"):
            out = os.path.join(scratch, "pinned" + threads)
            r = run(tool, ["gemm", "--m", "1024", "--n", "16", "--k", "8200", "--models", "sequential_f32", "--out", out,
                           "--quiet"] + extra, dict(os.environ, OMP_NUM_THREADS=threads))
            assert r.returncode == 0, r.stderr
            with open(os.path.join(out, "exact.npy"), "rb") as f:
                got = hashlib.sha256(f.read()).hexdigest()
            assert got == want, f"built-in data {' '.join(extra)} on {threads} threads: exact.npy is {got}, want {want}"
    # The statistics run in chunks of 2^16 outputs: 400 x 400 is three.
    rng = np.random.default_rng(12)
    M, N, K = 400, 400, 64
    a = rng.standard_t(2, (M, K)).astype(np.float32)
    b = rng.standard_t(2, (K, N)).astype(np.float32)
    np.save(os.path.join(scratch, "stats_a.npy"), a)
    np.save(os.path.join(scratch, "stats_b.npy"), b)
    out = os.path.join(scratch, "stats")
    r = run(tool, ["gemm", "--a", os.path.join(scratch, "stats_a.npy"), "--b", os.path.join(scratch, "stats_b.npy"),
                   "--models", "sm_100a", "--out", out, "--json", "--quiet"])
    assert r.returncode == 0, r.stderr
    for entry in json.loads(r.stdout)["numerics"]:
        assert_report_matches_numpy(entry, np.load(os.path.join(out, entry["name"] + ".npy")), a, b)
    # Every output Inf: nothing to compare, so no error is stated (null, n/a), not an error of 0.
    np.save(os.path.join(scratch, "inf_a.npy"), np.full((4, 32), np.inf, np.float32))
    np.save(os.path.join(scratch, "inf_b.npy"), np.ones((32, 4), np.float32))
    for json_flag in (["--json"], []):
        r = run(tool, ["gemm", "--a", os.path.join(scratch, "inf_a.npy"), "--b", os.path.join(scratch, "inf_b.npy"),
                       "--quiet"] + json_flag)
        assert r.returncode == 0, r.stderr
        if json_flag:
            for entry in json.loads(r.stdout)["numerics"]:
                e = entry["vs_fp64"]
                assert e["compared"] == 0 and e["nonfinite"] == 16, e
                assert all(e[key] is None for key in ("relative_frobenius", "normalised_median", "normalised_p99",
                                                      "normalised_max")), e
        else:
            assert [line for line in r.stdout.splitlines() if "n/a" in line and "16 outputs NaN or Inf" in line], r.stdout
    print("built-in data: the jumped generator gives the serial stream's data (3 pinned studies, 1 to 3 threads); "
          f"the error report over {M * N} outputs matches numpy's")


def main():
    tool, scratch = sys.argv[1], sys.argv[2]
    os.makedirs(scratch, exist_ok=True)
    check_oracle(tool, scratch)
    check_mixed(tool, scratch)
    check_nvfp4(tool, scratch)
    check_fp6(tool, scratch)
    check_fp8_scaled(tool, scratch)
    check_cublaslt_epilogue(tool, scratch)
    check_sparse(tool, scratch)
    check_slices_and_threads(tool, scratch)
    check_builtin_data(tool, scratch)
    check_npy_claims(tool, scratch)
    check_errors(tool, scratch)


if __name__ == "__main__":
    main()
