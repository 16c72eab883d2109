#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The Python module (python/blockscale) against independent oracles, bit for bit.

  * formats: every code of the 8-bit and narrower formats decoded, and every float16 value (as
    float32 and as float16), a million random float32 and 200,000 float64 values encoded with the
    ml_dtypes preset, against ml_dtypes 0.6.0's own casts; the IEEE rounding modes on e4m3 against
    rational rounding; the CUDA preset's documented values; stochastic rounding's rule;
  * quantization and GEMMs: MXFP8 (recipe ocp), MXFP8 x MXFP4 and NVFP4 (TransformerEngine's
    recipe) quantized and multiplied by every model, against tests/tools/gemm_oracle.py (exact
    rational arithmetic from the specifications, none of blockscale's code), C included, K not a
    multiple of the block; thread counts; codes adopted with from_codes give the same bits;
  * 2:4 sparse GEMMs: torch._cslt_sparse_mm's model for f16, bf16, tf32 and e4m3 inputs with their
    D types and split-K, against the same oracle's cuSPARSELt model;
  * single instructions: wgmma e4m3 (T-FDPA, F = 13) and tcgen05 kind::mxf8f6f4 block32 (ST-FDPA)
    against the same oracle's truncated sums; a sparse form against its rule on the dense form;
  * packing and scale layouts: the fp4 / fp6 bit orders written out, the 128x4 swizzle by cuBLAS's
    formula, round trips, a packed and swizzled MXFP4 operand back into a GEMM;
  * ulp_distance on signed zeros, neighbours, values across zero, NaN and Inf;
  * bad input: a BlockscaleError whose message names the rule, never a crash.

usage: test_module.py PACKAGE_DIR (the directory that holds blockscale/, with its library)
"""
import os
import sys
from fractions import Fraction

import numpy as np

sys.path.insert(0, sys.argv[1])
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
import blockscale as bs  # noqa: E402
from gemm_oracle import (E2M1, E4M3, E5M2, E_ZERO, bf16_rne, cast_oracle, f32_bits,  # noqa: E402
                         fp8_scaled_oracle, nvfp4_oracle, oracle, prune_oracle, quantize_fp8_scaled, quantize_nvfp4,
                         quantize_ocp, round_float, sig_exp, sparse_oracle, truncated_sum)

try:
    import ml_dtypes
except ImportError:  # scripts/setup.sh installs it; without it this test cannot run
    print("SKIP: ml_dtypes is not installed")
    sys.exit(77)

ML_DTYPES = {"float8_e4m3fn": ml_dtypes.float8_e4m3fn, "float8_e5m2": ml_dtypes.float8_e5m2,
             "float6_e2m3fn": ml_dtypes.float6_e2m3fn, "float6_e3m2fn": ml_dtypes.float6_e3m2fn,
             "float4_e2m1fn": ml_dtypes.float4_e2m1fn, "float8_e8m0fnu": ml_dtypes.float8_e8m0fnu}


def same_bits(got, want, what):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (what, got.shape, want.shape)
    bad = np.flatnonzero(got.ravel() != want.ravel())
    assert bad.size == 0, f"{what}: {bad.size} of {got.size} differ, first at {bad[0]}: {got.ravel()[bad[0]]} vs {want.ravel()[bad[0]]}"


def check_formats():
    assert bs.format_names()[:6] == ["float4_e2m1fn", "float6_e2m3fn", "float6_e3m2fn", "float8_e4m3fn", "float8_e5m2",
                                     "float8_e8m0fnu"], bs.format_names()
    assert bs.format_info("e4m3") == {"name": "float8_e4m3fn", "storage_bits": 8, "exponent_bits": 4, "mantissa_bits": 3}
    rng = np.random.default_rng(1)
    halves = np.arange(1 << 16, dtype=np.uint16).view(np.float16)
    floats = rng.integers(0, 1 << 32, 1 << 20, dtype=np.uint64).astype(np.uint32).view(np.float32)
    doubles = rng.standard_normal(200000) * 2.0 ** rng.integers(-140, 140, 200000)
    for name, t in ML_DTYPES.items():
        width = 1 << (8 if "float8" in name else 6 if "float6" in name else 4)
        codes = np.arange(width, dtype=np.uint8)
        same_bits(bs.decode(codes, name).view(np.uint64), codes.view(t).astype(np.float64).view(np.uint64),
                  name + " decode")
        for label, x in (("float16", halves), ("float16 as float32", halves.astype(np.float32)),
                         ("random float32", floats), ("float64", doubles)):
            with np.errstate(all="ignore"):
                want = x.astype(np.float32).astype(t) if x.dtype == np.float16 else x.astype(t)
            same_bits(bs.encode(x, name, preset="ml_dtypes"), want.view(np.uint8), f"{name} encode {label}")
    # ml_dtypes' bfloat16 arrays are a source of their own.
    b16 = np.arange(1 << 16, dtype=np.uint16).view(ml_dtypes.bfloat16)
    with np.errstate(all="ignore"):
        want = b16.astype(np.float32).astype(ml_dtypes.float8_e4m3fn)
    same_bits(bs.encode(b16, "e4m3", preset="ml_dtypes"), want.view(np.uint8), "e4m3 from bfloat16")
    print(f"formats: {len(ML_DTYPES)} formats, every code decoded and {halves.size} + {halves.size} + {floats.size} + "
          f"{doubles.size} values encoded each, equal to ml_dtypes; bfloat16 source too")

    # IEEE rounding modes on e4m3 (saturating), against rational rounding on e4m3's grid: the finite
    # values with their codes from ml_dtypes, a tie going to the code whose last bit is 0.
    table = np.arange(256, dtype=np.uint8).view(ml_dtypes.float8_e4m3fn).astype(np.float64)
    grid = sorted((Fraction(float(v)), code & 1) for code, v in enumerate(table) if np.isfinite(v) and code != 0x80)
    x = (rng.standard_normal(20000) * 2.0 ** rng.integers(-10, 9, 20000)).astype(np.float32)
    x[:8] = [0.5 * 2.0 ** -9, 1.5 * 2.0 ** -9, 1.0625, 1.1875, -1.0625, 448.0, 464.0, -2.0 ** -10]  # ties, rails
    expected = {mode: [] for mode in ("nearest_even", "toward_zero", "upward", "downward", "nearest_away")}
    for v in x:
        f = Fraction(float(v))
        down = max((g for g in grid if g[0] <= f), default=grid[0])  # saturating: the rails clamp
        up = min((g for g in grid if g[0] >= f), default=grid[-1])
        nearer = down if f - down[0] < up[0] - f else up if f - down[0] > up[0] - f else None
        expected["toward_zero"].append(down if f >= 0 else up)
        expected["upward"].append(up)
        expected["downward"].append(down)
        expected["nearest_even"].append(nearer or (down if down[1] == 0 else up))
        expected["nearest_away"].append(nearer or (up if f >= 0 else down))
    for mode, values in expected.items():
        got = bs.decode(bs.encode(x, "e4m3", rounding=mode, overflow="saturate"), "e4m3")
        same_bits(got, np.array([float(g[0]) for g in values]), "e4m3 ieee " + mode)
    # CUDA 13.0: __nv_cvt_float_to_fp8(3.3f, __NV_SATFINITE, __NV_E4M3) = 0x45; NaN -> 0x7F; 1e9 -> 448.
    same_bits(bs.encode(np.float32([3.3, np.nan, 1e9, -1e9]), "e4m3", preset="cuda"), np.uint8([0x45, 0x7F, 0x7E, 0xFE]),
              "cuda e4m3")
    # Stochastic rounding of 2.25 to e2m1 (between 2 and 3, f = 1/4) with 8 random bits: up iff 64 + r >= 256.
    r = np.arange(256, dtype=np.uint32)
    got = bs.encode(np.full(256, 2.25, dtype=np.float32), "e2m1", rounding="stochastic", rbits=r, stochastic_bits=8)
    same_bits(got, np.where(r >= 192, 0x5, 0x4).astype(np.uint8), "stochastic e2m1")
    print(f"formats: five IEEE roundings of {x.size} values to e4m3 equal rational rounding; CUDA and stochastic cases")


def check_ulp_distance():
    tiny = np.float32(2.0 ** -149)
    x = np.float32([0.0, 1.0, -tiny, 3.0, np.nan, np.nan, -np.inf, 1.0])
    y = np.float32([-0.0, np.nextafter(np.float32(1), np.float32(2)), tiny, -3.0, 1.0, np.nan, -np.finfo(np.float32).max, 1.0])
    three = int(np.float32(3.0).view(np.int32))  # the floats from +0 to 3.0, once on each side of zero
    same_bits(bs.ulp_distance(x, y), np.int64([0, 1, 2, 2 * three, -1, 0, 1, 0]), "ulp_distance")
    print("ulp_distance: signed zeros, neighbours, across zero, NaN and Inf cases")


def check_layouts():
    """Packing against the bit orders written out here (PTX ISA 9.7.16.10.4: fp4 low nibble first,
    fp6 six bits each from bit 0; the padded16 forms 8 or 4 zero bytes after each 16 codes), and the
    128x4 scale swizzle against cuBLAS's formula for its block-scaling factors."""
    rng = np.random.default_rng(5)
    c4 = rng.integers(0, 16, 64).astype(np.uint8)
    dense4 = (c4[0::2] | (c4[1::2] << 4)).astype(np.uint8)
    same_bits(bs.pack(c4, "e2m1"), dense4, "fp4_dense")
    same_bits(bs.unpack(dense4, "e2m1", 64), c4, "fp4_dense unpack")
    padded4 = np.concatenate([np.concatenate([dense4[8 * g:8 * g + 8], np.zeros(8, np.uint8)]) for g in range(4)])
    same_bits(bs.pack(c4, "e2m1", "fp4_padded16"), padded4, "fp4_padded16")
    c6 = rng.integers(0, 64, 64).astype(np.uint8)
    words = [int(c6[i]) | int(c6[i + 1]) << 6 | int(c6[i + 2]) << 12 | int(c6[i + 3]) << 18 for i in range(0, 64, 4)]
    dense6 = np.array([(w >> (8 * b)) & 0xFF for w in words for b in range(3)], dtype=np.uint8)
    same_bits(bs.pack(c6, "e3m2"), dense6, "fp6_dense")
    same_bits(bs.unpack(dense6, "e2m3", 64), c6, "fp6_dense unpack")
    padded6 = np.concatenate([np.concatenate([dense6[12 * g:12 * g + 12], np.zeros(4, np.uint8)]) for g in range(4)])
    same_bits(bs.pack(c6, "e2m3", "fp6_padded16"), padded6, "fp6_padded16")

    R, C = 200, 10  # padded to 256 x 12
    s = rng.integers(0, 255, (R, C)).astype(np.uint8)
    info = bs.scale_layout("tiled_128x4", R, C)
    assert info == {"layout": "tiled_128x4", "storage_size": 256 * 12, "storage_shape": (2, 3, 32, 4, 4)}, info
    want = np.full(256 * 12, 0x7, np.uint8)
    for r in range(R):
        for c in range(C):
            want[(r // 128) * 3 * 512 + (c // 4) * 512 + (r % 32) * 16 + ((r % 128) // 32) * 4 + c % 4] = s[r, c]
    stored = bs.scales_to_layout(s, "tiled_128x4", pad=0x7)
    same_bits(stored.ravel(), want, "tiled_128x4")
    same_bits(bs.scales_from_layout(want, "tiled_128x4", R, C), s, "tiled_128x4 back")
    f = rng.standard_normal((3, 40, 7)).astype(np.float32)
    for layout in ("linear", "cublaslt_blk128x128:ld_align=4", "deepgemm_sm90_sfb:major=mn"):
        back = bs.scales_from_layout(bs.scales_to_layout(f, layout), layout, 40, 7, batch=3)
        same_bits(back.view(np.uint32), f.view(np.uint32), "float scales " + layout)
    # Scales as torch._scaled_mm takes them (128x4-swizzled) and fp4 packed two a byte, back into a GEMM.
    x = rng.standard_normal((128, 256)).astype(np.float32)
    q = bs.quantize(x, "mxfp4")
    swizzled = bs.scales_to_layout(q.scales, "tiled_128x4")
    packed = bs.pack(q.elements, "e2m1")
    again = bs.QuantizedMatrix.from_codes("mxfp4", bs.unpack(packed, "e2m1", q.elements.size).reshape(128, 256),
                                          bs.scales_from_layout(swizzled, "tiled_128x4", 128, 8))
    same_bits(bs.gemm(again, q, "sm_100a").view(np.uint32), bs.gemm(q, q, "sm_100a").view(np.uint32), "packed round trip")
    print("layouts: fp4 and fp6 packings (dense and padded16) equal their bit orders; tiled_128x4 equals cuBLAS's "
          "formula; float scale layouts and a packed, swizzled MXFP4 operand round-trip")


def rows_of(x):
    return [[Fraction(float(v)) for v in row] for row in x]


def check_gemm():
    rng = np.random.default_rng(7)
    M, N, K = 6, 5, 100
    a = (rng.standard_normal((M, K)) * 2.0 ** rng.integers(-14, 7, (M, K))).astype(np.float32)
    b = (rng.standard_normal((N, K)) * 2.0 ** rng.integers(-14, 7, (N, K))).astype(np.float32)
    c = (rng.standard_normal((M, N)) * 2.0 ** rng.integers(-4, 12, (M, N))).astype(np.float32)
    qa, qb = bs.quantize(a, "mxfp8_e4m3", "ocp"), bs.quantize(b, "mxfp8_e4m3", "ocp")
    a_rows, b_rows = quantize_ocp(rows_of(a)), quantize_ocp(rows_of(b))
    # The quantized codes against the oracle's values: elements and scale exponents.
    for q, want in ((qa, a_rows), (qb, b_rows)):
        assert q.elements.shape == (q.shape[0], 128) and q.scales.shape == (q.shape[0], 4), (q.elements.shape, q.scales.shape)
        for i, (vals, exps) in enumerate(want):
            assert [float(v) for v in vals] == list(bs.decode(q.elements[i], "e4m3")), f"row {i} elements"
            assert [e + 127 for e in exps] == list(q.scales[i]), f"row {i} scales"
    want = dict(zip(("exact", "sm_100a", "sm_90a", "sequential_f32"), oracle(a_rows, b_rows, rows_of(c))))
    for model, expect in want.items():
        d = bs.gemm(qa, qb, model, c=c)
        assert d.dtype == np.float32 and d.shape == (M, N)
        same_bits(d.view(np.uint32), np.array([[expect[i, j] for j in range(N)] for i in range(M)], dtype=np.uint32),
                  "mxfp8 " + model)
        assert any(expect[key] != want["exact"][key] for key in expect) or model == "exact", model + " equals exact here"
    # sm_120a's mma.sync kind::mxf8f6f4 has the same numerics as tcgen05's.
    same_bits(bs.gemm(qa, qb, "sm_120a", c=c).view(np.uint32), bs.gemm(qa, qb, "sm_100a", c=c).view(np.uint32), "sm_120a")
    # gemm_models() lists exactly the models gemm takes (no test had called it: line coverage, 2026-11-30).
    assert sorted(bs.gemm_models()) == sorted(list(want) + ["sm_120a"]), bs.gemm_models()

    # MXFP8 activations x MXFP4 weights (kind::mxf8f6f4 with an e2m1 operand), C well above the products.
    w = (rng.standard_normal((4, 96)) * 2.0 ** rng.integers(-3, 3, (4, 96))).astype(np.float32)
    x = (rng.standard_normal((5, 96)) * 2.0 ** rng.integers(-12, 5, (5, 96))).astype(np.float32)
    cx = (rng.standard_normal((5, 4)) * 2.0 ** 12).astype(np.float32)
    exact, sm100, _, seq = oracle(quantize_ocp(rows_of(x), E4M3), quantize_ocp(rows_of(w), E2M1), rows_of(cx), E4M3[1], E2M1[1])
    qx, qw = bs.quantize(x, "mxfp8_e4m3", "ocp"), bs.quantize(w, "mxfp4", "ocp")
    for model, expect in (("exact", exact), ("sm_100a", sm100), ("sequential_f32", seq)):
        same_bits(bs.gemm(qx, qw, model, c=cx).view(np.uint32),
                  np.array([[expect[i, j] for j in range(4)] for i in range(5)], dtype=np.uint32), "mixed " + model)

    # NVFP4, TransformerEngine's two-level recipe: the K loop from +0, C in the epilogue FFMA.
    an = (rng.standard_normal((5, 100)) * 2.0 ** rng.integers(-6, 4, (5, 100))).astype(np.float32)
    bn = (rng.standard_normal((4, 100)) * 2.0 ** rng.integers(-6, 4, (4, 100))).astype(np.float32)
    cn = rng.standard_normal((5, 4)).astype(np.float32)
    (a4, da), (b4, db) = quantize_nvfp4(rows_of(an), "nvfp4_te"), quantize_nvfp4(rows_of(bn), "nvfp4_te")
    qa4, qb4 = bs.quantize(an, "nvfp4"), bs.quantize(bn, "nvfp4")
    assert np.float32(qa4.tensor_scale[2]) == da and np.float32(qb4.tensor_scale[2]) == db, (qa4.tensor_scale, da)
    for q, want_rows in ((qa4, a4), (qb4, b4)):
        for i, (vals, scales) in enumerate(want_rows):
            assert [float(v) for v in vals] == list(bs.decode(q.elements[i], "e2m1")), f"nvfp4 row {i} elements"
            assert [float(s) for s in scales] == list(bs.decode(q.scales[i], "ue4m3")), f"nvfp4 row {i} scales"
    nv = dict(zip(("exact", "sm_100a", "sm_90a", "sequential_f32"), nvfp4_oracle(a4, b4, rows_of(cn), da * db)))
    for model, expect in nv.items():
        d, info = bs.gemm(qa4, qb4, model, c=cn, return_info=True)
        same_bits(d.view(np.uint32), np.array([[expect[i, j] for j in range(4)] for i in range(5)], dtype=np.uint32),
                  "nvfp4 " + model)
        assert info["model"] == model and info["definition"], info
    assert "epilogue" in bs.gemm(qa4, qb4, "exact", return_info=True)[1]["definition"]

    # Threads never change a bit; codes adopted from elsewhere give the same D; dequantize.
    big_a = rng.standard_normal((300, 1000)).astype(np.float32) * np.float32(2.0) ** rng.integers(-20, 20, (300, 1))
    big_b = rng.standard_normal((70, 1000)).astype(np.float32)
    qa, qb = bs.quantize(big_a, "mxfp8_e4m3"), bs.quantize(big_b, "mxfp8_e4m3")
    d1, info = bs.gemm(qa, qb, "sm_100a", threads=1, return_info=True)
    same_bits(bs.gemm(qa, qb, "sm_100a", threads=2).view(np.uint32), d1.view(np.uint32), "threads")
    assert sum(info["steps"].values()) > 0, info
    adopted = bs.QuantizedMatrix.from_codes("mxfp8_e4m3", qa.elements[:, :1000], qa.scales)
    same_bits(bs.gemm(adopted, qb, "sm_100a").view(np.uint32), d1.view(np.uint32), "from_codes")
    scales = 2.0 ** (qa.scales.astype(np.int64) - 127)
    deq = bs.decode(qa.elements, "e4m3") * np.repeat(scales, 32, axis=1)
    same_bits(qa.dequantize(), deq[:, :1000].astype(np.float32), "dequantize")
    nv_adopted = bs.QuantizedMatrix.from_codes("nvfp4", qa4.elements, qa4.scales, tensor_scale=qa4.tensor_scale[2], k=100)
    same_bits(bs.gemm(nv_adopted, qb4, "sm_100a", c=cn).view(np.uint32), bs.gemm(qa4, qb4, "sm_100a", c=cn).view(np.uint32),
              "from_codes nvfp4")
    print("gemm: MXFP8 (exact, sm_100a, sm_90a, sequential_f32, sm_120a), MXFP8 x MXFP4 and NVFP4 (every model) equal "
          "the rational oracle, quantized codes too; threads, from_codes and dequantize agree")


def check_fp8_scaled():
    """fp8 with fp32 scales: DeepGEMM's and torchao's recipes, the library GEMMs, split-K and a bf16
    D against the oracle; K = 300 (not a multiple of 128)."""
    rng = np.random.default_rng(21)
    blocks = {"deepgemm_1x128": (1, 128), "deepgemm_128x128": (128, 128), "torchao_tensorwise": (None, None),
              "torchao_rowwise": (1, None)}
    cases = [  # A recipe, B recipe, B format, {model: oracle schedule}, M, N, split_k
        ("deepgemm_1x128", "deepgemm_128x128", "e4m3", {"cublaslt": "scale_product", "torch_scaled_mm": "scale_product"}, 3, 130, 1),
        ("deepgemm_1x128", "deepgemm_1x128", "e4m3", {"cublaslt": "b_first", "torch_scaled_mm": "swapped"}, 4, 5, 1),
        ("torchao_tensorwise", "torchao_tensorwise", "e5m2", {"cublaslt": "tensor", "torch_scaled_mm_fast_accum": "fast_accum"},
         4, 5, 1),
        ("torchao_rowwise", "torchao_rowwise", "e4m3", {"torch_scaled_mm": "row"}, 5, 4, 1),
        ("deepgemm_1x128", "deepgemm_1x128", "e4m3", {"cublaslt": "b_first"}, 2, 3, 3),
    ]
    K = 300
    for ra, rb, fmt_b, models, M, N, split in cases:
        a = (rng.standard_normal((M, K)) * 2.0 ** rng.integers(-12, 5, (M, K))).astype(np.float32)
        w = (rng.standard_normal((N, K)) * 2.0 ** rng.integers(-6, 3, (N, K))).astype(np.float32)
        fb = E5M2 if fmt_b == "e5m2" else E4M3
        a_rows, sa = quantize_fp8_scaled(a, ra, *blocks[ra], E4M3)
        b_rows, sb = quantize_fp8_scaled(w, rb, *blocks[rb], fb)
        qa, qb = bs.quantize_fp8(a, "e4m3", ra), bs.quantize_fp8(w, fmt_b, rb)
        for q, want_rows, want_scales, f in ((qa, a_rows, sa, "e4m3"), (qb, b_rows, sb, fmt_b)):
            assert [[float(v) for v in row[:K]] for row in want_rows] == bs.decode(q.codes, f).tolist(), q
            # The oracle gives each row's scale per 128-block of K; the module keeps the granularity's own.
            g = q.granularity
            per_block = [[float(q.scales[0] if g == "tensor" else q.scales[r] if g == "row" else
                                q.scales[r, kb] if g == "1x128" else q.scales[r // 128, kb])
                          for kb in range(want_scales.shape[1])] for r in range(q.shape[0])]
            assert per_block == want_scales.astype(np.float64).tolist(), (q, g)
        want_exact = fp8_scaled_oracle(a_rows, sa, b_rows, sb, E4M3, fb, "exact")
        if split == 1:
            same_bits(bs.gemm_fp8(qa, qb, "exact").view(np.uint32),
                      np.array([[want_exact[i, j] for j in range(N)] for i in range(M)], dtype=np.uint32), f"fp8 {ra} exact")
        for model, schedule in models.items():
            want = fp8_scaled_oracle(a_rows, sa, b_rows, sb, E4M3, fb, schedule, split)
            expect = np.array([[want[i, j] for j in range(N)] for i in range(M)], dtype=np.uint32)
            d = bs.gemm_fp8(qa, qb, model, split_k=split)
            same_bits(d.view(np.uint32), expect, f"fp8 {ra} x {rb} {model} split {split}")
            assert (expect != np.array([[want_exact[i, j] for j in range(N)] for i in range(M)])).any(), model
            d16 = bs.gemm_fp8(qa, qb, model, split_k=split, d_type="bf16")
            same_bits(d16.view(np.uint32), bf16_rne(expect).astype(np.uint32) << 16, f"fp8 {model} bf16 D")
            # An f16 D: the f32 D rounded once (numpy's float16 cast), for cuBLASLt and torch alike.
            f32 = expect.view(np.float32)
            same_bits(bs.gemm_fp8(qa, qb, model, split_k=split, d_type="f16").view(np.uint32),
                      f32.astype(np.float16).astype(np.float32).view(np.uint32), f"fp8 {model} f16 D")
            if model.startswith("torch"):
                # torch._scaled_mm's bias: the f32 D plus the bias in f32, rounded once to D's dtype
                # (numpy's float32 add and float16 cast; bf16_rne).
                bias16 = (rng.standard_normal(N) * np.abs(f32).max()).astype(np.float16)
                same_bits(bs.gemm_fp8(qa, qb, model, split_k=split, d_type="f16", bias=bias16).view(np.uint32),
                          (f32 + bias16.astype(np.float32)).astype(np.float16).astype(np.float32).view(np.uint32),
                          f"fp8 {model} f16 D + bias")
                bias_bf16 = (bf16_rne((rng.standard_normal(N) * np.abs(f32).max()).astype(np.float32).view(np.uint32))
                             .astype(np.uint32) << 16).view(np.float32)
                same_bits(bs.gemm_fp8(qa, qb, model, split_k=split, d_type="bf16", bias=bias_bf16).view(np.uint32),
                          bf16_rne((f32 + bias_bf16).view(np.uint32)).astype(np.uint32) << 16, f"fp8 {model} bf16 D + bias")
    # The model's definition names a split call's slices and their granule, and only a split call's.
    for split in (1, 2, 3):
        definition = bs.gemm_fp8(qa, qb, "cublaslt", split_k=split, return_info=True)[1]["definition"]
        named = f"; split-K {split} at multiples of 128 of K, the slices added in order"
        assert ("; split-K" in definition) == (split > 1) and (split == 1 or definition.endswith(named)), definition
    # The recorded heuristic: torch._scaled_mm at 64 x 256 x 16384, 1x128 x 128x128 on an H200 chose the
    # split that the H200 study fitted to its outputs, 6 (docs/conformance.md, "External fp8 GEMMs").
    x = rng.standard_normal((64, 16384)).astype(np.float32)
    y = rng.standard_normal((256, 16384)).astype(np.float32)
    qx, qy = bs.quantize_fp8(x, "e4m3", "deepgemm_1x128"), bs.quantize_fp8(y, "e4m3", "deepgemm_128x128")
    assert bs.recorded_split_k("torch_scaled_mm", qx, qy, "h200") == 6
    adopted = bs.Fp8Matrix.from_codes("e4m3", "deepgemm_1x128", qx.codes, qx.scales)
    same_bits(bs.gemm_fp8(adopted, qy, "cublaslt").view(np.uint32), bs.gemm_fp8(qx, qy, "cublaslt").view(np.uint32),
              "fp8 from_codes")
    print(f"fp8 with fp32 scales: {len(cases)} recipe pairs quantized and multiplied (exact, cuBLASLt, torch._scaled_mm, "
          "fast accumulation, split-K 3, bf16 and f16 D, torch's bias) equal the oracle; from_codes agrees")


def check_cublaslt_epilogue():
    """cuBLASLt's fp8 epilogue (cublaslt_fp8): alpha, beta C, the bias, bf16 / f16 / e4m3 D and
    amax_d against numpy's float32 arithmetic on gemm_fp8's D, where the rule needs no FMA: beta = 0,
    or beta = 1 after a split-K (FMA(1, C, RN(S X)) is one add)."""
    rng = np.random.default_rng(23)
    M, N, K = 6, 10, 512
    x = rng.standard_normal((M, K)).astype(np.float32)
    w = rng.standard_normal((N, K)).astype(np.float32)
    for ra, rb in (("torchao_tensorwise", "torchao_tensorwise"), ("deepgemm_1x128", "deepgemm_128x128")):
        qa, qb = bs.quantize_fp8(x, "e4m3", ra), bs.quantize_fp8(w, "e4m3", rb)
        for split in (1, 2):
            d0 = bs.gemm_fp8(qa, qb, "cublaslt", split_k=split)
            d, amax = bs.cublaslt_fp8(qa, qb, split_k=split)
            same_bits(d.view(np.uint32), d0.view(np.uint32), f"cublaslt_fp8 {ra} split {split} plain")
            assert amax == np.abs(d0).max(), (amax, np.abs(d0).max())
            bias = bs.decode(bs.encode(rng.standard_normal(M).astype(np.float32) * 8, "bfloat16"), "bfloat16")
            # alpha = 2 scales exactly; the bias is one float32 add per output.
            d, _ = bs.cublaslt_fp8(qa, qb, split_k=split, alpha=2.0, bias=bias)
            y = d0 * np.float32(2) + bias.astype(np.float32)[:, None]
            same_bits(d.view(np.uint32), y.view(np.uint32), f"cublaslt_fp8 {ra} split {split} alpha 2 + bias")
            # ReLU after the bias (RELU_BIAS): negatives to +0.
            d, _ = bs.cublaslt_fp8(qa, qb, split_k=split, alpha=2.0, bias=bias, relu=True)
            assert (y < 0).any() and (y > 0).any()
            same_bits(d.view(np.uint32), np.where(y > 0, y, np.float32(0)).view(np.uint32),
                      f"cublaslt_fp8 {ra} split {split} alpha 2 + bias, ReLU")
            f16 = bs.decode(bs.encode(bias, "float16"), "float16")
            want16 = (d0 + f16.astype(np.float32)[:, None]).astype(np.float16).astype(np.float32)
            d, _ = bs.cublaslt_fp8(qa, qb, split_k=split, bias=f16, d_type="f16")
            same_bits(d.view(np.uint32), want16.view(np.uint32), f"cublaslt_fp8 {ra} split {split} f16 D + bias")
            if split == 2:
                c = (rng.standard_normal((M, N)) * 16).astype(np.float32)
                d, amax = bs.cublaslt_fp8(qa, qb, split_k=split, beta=1.0, c=c, bias=bias)
                y = (c + d0) + bias.astype(np.float32)[:, None]
                same_bits(d.view(np.uint32), y.view(np.uint32), f"cublaslt_fp8 {ra} split 2 C + bias")
                assert amax == np.abs(y).max()
                # beta defaults to 1 with C, as blockscale gemm --c takes it (C was ignored at beta 0).
                d_default, _ = bs.cublaslt_fp8(qa, qb, split_k=split, c=c, bias=bias)
                same_bits(d_default.view(np.uint32), y.view(np.uint32), f"cublaslt_fp8 {ra} split 2 C, beta by default")
        if ra == "torchao_tensorwise":
            # An e4m3 D: RN(d_scale y) in float32, then CUDA's saturating e4m3 conversion.
            d, amax = bs.cublaslt_fp8(qa, qb, d_type="e4m3", d_scale=200.0)
            want = bs.decode(bs.encode(d0 * np.float32(200.0), "float8_e4m3fn", preset="cuda"), "float8_e4m3fn")
            same_bits(d.view(np.uint32), want.astype(np.float32).view(np.uint32), "cublaslt_fp8 e4m3 D")
            assert amax == np.abs(d0).max() and np.abs(d).max() == 448.0
            # With ReLU, amax_d is the largest value after it. alpha = -1 (exact) makes the largest
            # |y| a negative y here, so the ReLU changes amax_d.
            d, amax = bs.cublaslt_fp8(qa, qb, d_type="e4m3", d_scale=200.0, alpha=-1.0, relu=True)
            y = -d0
            relu = np.where(y > 0, y, np.float32(0))
            want = bs.decode(bs.encode(relu * np.float32(200.0), "float8_e4m3fn", preset="cuda"), "float8_e4m3fn")
            same_bits(d.view(np.uint32), want.astype(np.float32).view(np.uint32), "cublaslt_fp8 e4m3 D, ReLU")
            assert np.abs(y).max() > relu.max() and amax == relu.max(), (amax, relu.max(), np.abs(y).max())
    print("cuBLASLt epilogue: alpha, C after a split-K, the bias, ReLU, f16 and e4m3 D and amax_d equal numpy's "
          "float32 arithmetic on gemm_fp8's D")


def check_sparse_mm():
    """torch._cslt_sparse_mm's model against the oracle: each input format, its D types, split-K."""
    rng = np.random.default_rng(11)
    dtypes = {"f16": np.float16, "bf16": ml_dtypes.bfloat16, "f32": np.float32, "e4m3": ml_dtypes.float8_e4m3fn}
    formats = {"f16": "float16", "bf16": "bfloat16", "f32": "float32", "e4m3": "float8_e4m3fn"}
    cases = [("f16", "f16", 256, 64, 3), ("bf16", "bf16", 128, 64, 1), ("f32", "f32", 128, 32, 2),
             ("e4m3", "f32", 512, 128, 3), ("e4m3", "e4m3", 512, 256, 2)]  # input, D, K, the kernel's K tile, slices
    for name, d_type, K, tile, slices in cases:
        M, N = 8, 6
        lo, hi = (-5, 4) if name == "e4m3" else (-6, 4)
        a = (rng.standard_normal((M, K)) * 2.0 ** rng.integers(lo, hi, (M, K))).astype(np.float32)
        b = (rng.standard_normal((K, N)) * 2.0 ** rng.integers(lo, hi, (K, N))).astype(np.float32)
        if d_type == "e4m3":
            b *= 8  # sums past 448: D saturates
        pruned, _ = prune_oracle(a.astype(np.float64), 2 if name == "f32" else 4)
        with np.errstate(all="ignore"):
            xa, xb = pruned.astype(np.float32).astype(dtypes[name]), b.astype(dtypes[name])
        fa = [[cast_oracle(Fraction(float(v)), name) for v in row] for row in pruned.astype(np.float32)]
        fb = [[cast_oracle(Fraction(float(v)), name) for v in row] for row in b]
        assert fa == [[Fraction(float(v)) for v in row] for row in xa.astype(np.float64)], name + ": the casts differ"
        want = sparse_oracle(fa, fb, name, d_type, tile, slices)["cusparselt"]
        d = bs.sparse_mm(xa, xb, out_format=formats[d_type], slices=slices)
        same_bits(d.view(np.uint32), np.array([[want[i, j] for j in range(N)] for i in range(M)], dtype=np.uint32),
                  f"sparse_mm {name} -> {d_type}, {slices} slices")
    print(f"sparse_mm: {len(cases)} cases (f16, bf16, tf32, e4m3 with f32 and e4m3 D; split-K 1-3) equal the oracle")


def check_instructions():
    rng = np.random.default_rng(11)
    e4m3 = np.arange(256, dtype=np.uint8).view(ml_dtypes.float8_e4m3fn).astype(np.float64)

    def codes(shape):  # finite e4m3 codes of moderate exponent, either sign
        c = rng.integers(0x20, 0x60, shape) | (rng.integers(0, 2, shape) << 7)
        return c.astype(np.uint32)

    name = "sm_90a wgmma.mma_async m64n8k32 f32 e4m3 e4m3"
    ins = bs.instruction(name)
    assert (ins["m"], ins["n"], ins["k"], ins["L"], ins["F"], ins["rounding"]) == (64, 8, 32, 32, 13, "RZ-E8M13"), ins
    a, b = codes((64, 32)), codes((32, 8))
    c = (rng.standard_normal((64, 8)) * 4).astype(np.float32)
    d = bs.mma(name, a, b, c.view(np.uint32))
    want = np.empty((64, 8), dtype=np.uint32)
    for i in range(64):
        for j in range(8):
            terms = [sig_exp(Fraction(float(c[i, j])), -126)]
            for k in range(32):
                (sa, ea), (sb, eb) = sig_exp(Fraction(e4m3[a[i, k]]), -6), sig_exp(Fraction(e4m3[b[k, j]]), -6)
                terms.append((sa * sb, ea + eb) if sa * sb != 0 else (Fraction(0), E_ZERO))
            want[i, j] = f32_bits(round_float(truncated_sum(terms, 13), 13, -126, "rz"))
    same_bits(d, want, name)

    name = "sm_100a tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.block32 m128n8k32 f32 e4m3 e4m3 ue8m0"
    a, b = codes((128, 32)), codes((32, 8))
    sa, sb = rng.integers(120, 135, (128, 1)).astype(np.uint32), rng.integers(120, 135, (1, 8)).astype(np.uint32)
    c = (rng.standard_normal((128, 8)) * 2.0 ** 10).astype(np.float32)
    d = bs.mma(name, a, b, c.view(np.uint32), sa, sb)
    for i in range(128):
        for j in range(8):
            terms = [sig_exp(Fraction(float(c[i, j])), -126)]
            for k in range(32):
                (pa, ea), (pb, eb) = sig_exp(Fraction(e4m3[a[i, k]]), -6), sig_exp(Fraction(e4m3[b[k, j]]), -6)
                scale = int(sa[i, 0]) + int(sb[0, j]) - 254
                terms.append((pa * pb, ea + eb + scale) if pa * pb != 0 else (Fraction(0), E_ZERO))
            assert int(d[i, j]) == f32_bits(round_float(truncated_sum(terms, 25), 23, -126, "rz")), (name, i, j)

    # A sparse form: each output is the dense instruction of K/2 on the stored values and the B rows they select.
    name = "sm_90a mma.sp::ordered_metadata.sync.aligned m16n8k32 f32 f16 f16"
    values = rng.standard_normal((16, 16)).astype(np.float16).view(np.uint16)
    pairs = np.array([[0, 1], [0, 2], [0, 3], [1, 2], [1, 3], [2, 3]])[rng.integers(0, 6, (16, 8))]
    index = pairs.reshape(16, 16).astype(np.uint8)
    b = rng.standard_normal((32, 8)).astype(np.float16).view(np.uint16)
    d = bs.mma_sparse(name, values, index, b)
    dense = "sm_90a mma.sync.aligned m16n8k16 f32 f16 f16"
    for i in range(16):
        rows = [4 * (s // 2) + index[i, s] for s in range(16)]
        got = bs.mma(dense, np.tile(values[i], (16, 1)), b[rows], None)
        assert d[i, 0] == got[0, 0] and list(d[i]) == list(got[0]), (name, i)
    assert len(bs.instruction_rows()) == 55 and bs.instruction_rows()[0][0] == "sm_70.mma.f16.f32"
    print("instructions: wgmma e4m3 (512 outputs) and tcgen05 mxf8f6f4 block32 (1024) equal the oracle's truncated "
          "sums; mma.sp equals its dense form on the selected rows")


def with_tensor_scale(q, value):
    r = bs.QuantizedMatrix(q.format, q.elements, q.scales, q.tensor_scale, q.k)
    r.tensor_scale = value  # a number where the triple belongs: the library would read past it
    return r


def with_recipe(a, recipe):
    a.recipe = recipe
    return a


def check_input_forms():
    """Arrays in other byte orders and shapes give the bits of their native, C-contiguous copies; adopted
    codes are copied; a 0-d input keeps its shape."""
    rng = np.random.default_rng(5)
    a = rng.standard_normal((16, 64)).astype(np.float16)
    a.reshape(16, 32, 2)[:, :, 1] = 0  # 1 of 2 kept: 2:4 for f16 and bf16, 1:2 for float32 (tf32)
    b = rng.standard_normal((64, 16)).astype(np.float16)
    bf16 = np.dtype(ml_dtypes.bfloat16)
    for dtype in (np.dtype(np.float16), np.dtype(np.float32), bf16):
        native = bs.sparse_mm(a.astype(dtype), b.astype(dtype))
        swapped = bs.sparse_mm(a.astype(dtype.newbyteorder(">")), b.astype(dtype.newbyteorder(">")))
        same_bits(swapped, native, f"sparse_mm of big-endian {dtype}")
    v = np.arange(8, dtype=np.float32).astype(bf16)
    same_bits(bs.encode(v.astype(bf16.newbyteorder(">")), "e4m3"), bs.encode(v, "e4m3"), "encode of big-endian bfloat16")
    same_bits(bs.encode(np.float32([1.5, 3]).astype(">f4"), "e4m3"), bs.encode(np.float32([1.5, 3]), "e4m3"),
              "encode of big-endian float32")
    assert bs.encode(np.float32(1.5), "e4m3").shape == () and bs.decode(np.uint8(60), "e4m3").shape == ()
    x = rng.standard_normal((4, 64)).astype(np.float32)
    q = bs.quantize(x, "mxfp8_e4m3")
    c = rng.standard_normal((4, 4)).astype(np.float32)
    same_bits(bs.gemm(q, q, c=c.astype(">f4")), bs.gemm(q, q, c=c), "gemm with a big-endian C")
    e, s = q.elements.copy(), q.scales.copy()
    adopted = bs.QuantizedMatrix.from_codes("mxfp8_e4m3", e, s)
    want = bs.gemm(adopted, adopted)
    e[:] = 0
    same_bits(bs.gemm(adopted, adopted), want, "from_codes copies the codes")
    st = bs.scales_to_layout(x[:, :4].copy(), "cublaslt_vec128")
    same_bits(bs.scales_from_layout(st.ravel(), "cublaslt_vec128", 4, 4), x[:, :4], "a flat storage image")
    print("input forms: big-endian, 0-d and adopted arrays give the bits of native copies")


def check_errors():
    x = np.ones((4, 64), dtype=np.float32)
    q = bs.quantize(x, "mxfp8_e4m3")
    cases = [
        (lambda: bs.encode(np.float32([1]), "e9m9"), "unknown format 'e9m9'"),
        (lambda: bs.encode(np.int32([1]), "e4m3"), "float32, float64, float16 or bfloat16"),
        (lambda: bs.encode(np.float32([1]), "e4m3", preset="intel"), "unknown preset 'intel'"),
        (lambda: bs.encode(np.float32([1]), "e4m3", rounding="odd"), "unknown rounding 'odd'"),
        (lambda: bs.encode(np.float32([1]), "e4m3", rounding="stochastic"), "needs one random word per value"),
        (lambda: bs.encode(np.float32([1]), "e4m3", rounding="stochastic", rbits=[1, 2]), "one random word per value"),
        (lambda: bs.encode(np.float32([1]), "e4m3", preset="ml_dtypes", rounding="upward"), "ml_dtypes preset rounds"),
        (lambda: bs.decode([300], "e4m3"), "not a storage word of float8_e4m3fn"),
        (lambda: bs.decode([-1], "e4m3"), "outside 0 .."),
        (lambda: bs.decode(np.float32([1]), "e4m3"), "integer codes"),
        (lambda: bs.quantize(x, "mxfp9"), "unknown block format 'mxfp9'"),
        (lambda: bs.quantize(x, "mxfp8_e4m3", "floor"), "unknown recipe 'floor'"),
        (lambda: bs.quantize(x, "nvfp4", "ocp"), "ue4m3"),
        (lambda: bs.quantize(np.ones(4, dtype=np.float32)), "2-D array"),
        (lambda: bs.quantize(x, "nvfp4", "nvfp4_te_stochastic"), "random"),
        (lambda: bs.gemm(q, q, "sm_80"), "unknown model 'sm_80'"),
        (lambda: bs.gemm(q, bs.quantize(np.ones((4, 32), dtype=np.float32))), "K must agree"),
        (lambda: bs.gemm(q, q, c=np.ones((4, 4))), "C must be float32 of shape (4, 4)"),
        (lambda: bs.gemm(x, q), "two QuantizedMatrix operands"),
        (lambda: bs.gemm(bs.quantize(x, "mxfp6_e2m3"), bs.quantize(x, "mxfp6_e2m3"), "sm_90a"), "Hopper block-scaled GEMM"),
        (lambda: bs.gemm(q, bs.quantize(x, "nvfp4")), "must share the scale type and the block size"),
        (lambda: bs.QuantizedMatrix.from_codes("mxfp8_e4m3", q.elements, q.scales[:, :1]), "scales has shape"),
        (lambda: bs.QuantizedMatrix.from_codes("mxfp8_e4m3", q.elements[:, :50], q.scales, k=40), "K = 40 needs 40 or 64"),
        (lambda: bs.QuantizedMatrix.from_codes("nvfp4", np.zeros((1, 16), np.uint8), np.zeros((1, 1), np.uint8)),
         "give tensor_scale"),
        (lambda: bs.gemm(bs.QuantizedMatrix.from_codes("mxfp4", np.full((1, 32), 0x1F, np.uint8), np.zeros((1, 1), np.uint8)),
                         bs.QuantizedMatrix.from_codes("mxfp4", np.zeros((1, 32), np.uint8), np.zeros((1, 1), np.uint8))),
         "4-bit width"),
        (lambda: bs.ulp_distance(np.zeros(2), np.zeros(2)), "compares float32 arrays"),
        (lambda: bs.pack(np.zeros(3, np.uint8), "e2m1"), "count"),
        (lambda: bs.sparse_mm(np.ones((8, 128), np.float16), np.ones((128, 8), np.float16)), "sparse"),
        (lambda: bs.sparse_mm(np.zeros((8, 64), ml_dtypes.float8_e4m3fn), np.zeros((64, 8), ml_dtypes.float8_e4m3fn)),
         "K must be a positive multiple of the tile"),
        (lambda: bs.sparse_mm(np.zeros((8, 128), np.float16), np.zeros((128, 8), np.float32)), "one dtype"),
        (lambda: bs.sparse_mm(np.zeros((8, 128), np.float16), np.zeros((64, 8), np.float16)), "M x K"),
        (lambda: bs.pack(np.zeros(4, np.uint8), "e4m3", "fp4_dense"), "e2m1"),
        (lambda: bs.pack(np.zeros(4, np.uint8), "e2m1", "fp5"), "unknown packing 'fp5'"),
        (lambda: bs.unpack(np.full(16, 1, np.uint8), "e2m1", 16, "fp4_padded16"), "padding"),
        (lambda: bs.scale_layout("tiled_64x4", 4, 4), "tiled_64x4"),
        (lambda: bs.scales_to_layout(np.zeros((4, 4), np.int32), "linear"), "uint8"),
        (lambda: bs.scales_to_layout(np.zeros((4, 4), np.uint8), "linear", pad=0xFF), "NaN"),
        (lambda: bs.scales_from_layout(np.zeros(10, np.uint8), "tiled_128x4", 4, 4), "stored holds 10 values"),
        (lambda: bs.quantize_fp8(x, "e4m3", "deepgemm_64x64"), "unknown fp8 recipe 'deepgemm_64x64'"),
        (lambda: bs.quantize_fp8(x, "e2m1"), "float8_e4m3fn or float8_e5m2"),
        (lambda: bs.quantize_fp8(np.float32([[1, np.inf]])), "inf"),
        (lambda: bs.gemm_fp8(bs.quantize_fp8(x), bs.quantize_fp8(x), "sm_100a"), "unknown model 'sm_100a' for fp8"),
        (lambda: bs.gemm_fp8(bs.quantize_fp8(x, "e5m2", "torchao_tensorwise"), bs.quantize_fp8(x, "e5m2", "torchao_tensorwise")),
         "e5m2"),
        (lambda: bs.gemm_fp8(bs.quantize_fp8(x, "e4m3", "torchao_rowwise"), bs.quantize_fp8(x, "e4m3", "deepgemm_1x128")),
         "measured"),
        (lambda: bs.gemm_fp8(bs.quantize_fp8(x), bs.quantize_fp8(x), "exact", split_k=2), "neither split_k"),
        (lambda: bs.gemm_fp8(bs.quantize_fp8(x), bs.quantize_fp8(x), "cublaslt", d_type="bf16", bias=np.zeros(x.shape[0])),
         "cuBLASLt's bias is per row of D, with its epilogue: use cublaslt_fp8"),
        (lambda: bs.gemm_fp8(bs.quantize_fp8(x), bs.quantize_fp8(x), "torch_scaled_mm", bias=np.zeros(x.shape[0])),
         "Bias is not supported when out_dtype is set to Float32"),
        (lambda: bs.gemm_fp8(bs.quantize_fp8(x), bs.quantize_fp8(x), "torch_scaled_mm", d_type="bf16",
                             bias=np.full(x.shape[0], 1 + 2.0 ** -12)), "is not a bf16 value"),
        (lambda: bs.gemm_fp8(bs.quantize_fp8(x), bs.quantize_fp8(x), "torch_scaled_mm", d_type="f16",
                             bias=np.full(x.shape[0], np.inf)), "NaN or Inf"),
        (lambda: bs.gemm_fp8(bs.quantize_fp8(x), bs.quantize_fp8(x), "torch_scaled_mm", d_type="f16", bias=np.zeros(3)),
         "one value per column"),
        (lambda: bs.gemm_fp8(bs.quantize_fp8(x), bs.quantize_fp8(x), "torch_scaled_mm", d_type="f8"), "f32, bf16 or f16"),
        (lambda: bs.cublaslt_fp8(bs.quantize_fp8(x), bs.quantize_fp8(x), d_type="e5m2"), "with e4m3 x e4m3 an e5m2 D had no algorithm"),
        (lambda: bs.cublaslt_fp8(bs.quantize_fp8(x), bs.quantize_fp8(x), d_type="e2m1"), "f32, bf16, f16, e4m3 or e5m2"),
        (lambda: bs.cublaslt_fp8(bs.quantize_fp8(x), bs.quantize_fp8(x), bias=np.zeros(x.shape[0]), bias_type="f16"),
         "takes a bfloat16 bias only"),
        (lambda: bs.cublaslt_fp8(bs.quantize_fp8(x), bs.quantize_fp8(x), bias=np.zeros(3)), "bias holds shape (3,)"),
        (lambda: bs.cublaslt_fp8(bs.quantize_fp8(x), bs.quantize_fp8(x), beta=1.0), "beta != 0 reads C"),
        (lambda: bs.cublaslt_fp8(bs.quantize_fp8(x), bs.quantize_fp8(x), d_scale=2.0), "with an fp8 D only"),
        (lambda: bs.cublaslt_fp8(bs.quantize_fp8(x, "e4m3", "deepgemm_1x128"), bs.quantize_fp8(x, "e4m3", "deepgemm_1x128"),
                                 d_type="e4m3"), "tensor-wise scales only"),
        (lambda: bs.cublaslt_fp8(bs.quantize_fp8(x), bs.quantize_fp8(x), d_type="bf16",
                                 bias=np.full(x.shape[0], 1 + 2.0 ** -12)), "is not a bfloat16 value"),
        (lambda: bs.Fp8Matrix.from_codes("e4m3", "deepgemm_1x128", np.zeros((4, 300), np.uint8), np.ones((4, 2), np.float32)),
         "needs (4, 3)"),
        (lambda: bs.recorded_split_k("cublaslt", bs.quantize_fp8(np.ones((65, 128), np.float32)),
                                     bs.quantize_fp8(np.ones((256, 128), np.float32)), "h200"), "not on the recorded grid"),
        (lambda: bs.instruction("sm_90a wgmma.mma_async m64n8k32 f32 e4m3 e2m1"), "e2m1"),
        (lambda: bs.mma("sm_90a wgmma.mma_async m64n8k32 f32 e4m3 e4m3", np.zeros((64, 16)), np.zeros((32, 8))), "integer codes"),
        (lambda: bs.mma("sm_90a wgmma.mma_async m64n8k32 f32 e4m3 e4m3", np.zeros((64, 16), np.uint8), np.zeros((32, 8), np.uint8)),
         "A has shape (64, 16); the instruction takes (64, 32)"),
        (lambda: bs.mma("sm_90a wgmma.mma_async m64n8k32 f32 e4m3 e4m3", np.full((64, 32), 0x1FF), np.zeros((32, 8), np.uint8)),
         "is not a float8_e4m3fn code (8 bits)"),
        (lambda: bs.mma("sm_90a mma.sp::ordered_metadata.sync.aligned m16n8k32 f32 f16 f16", 0, 0), "use mma_sparse"),
        # Names: None or a non-str would reach the C ABI as a NULL or a cut name.
        (lambda: bs.format_info(None), "format must be a str, got None"),
        (lambda: bs.quantize(x, None), "block format must be a str"),
        (lambda: bs.gemm(q, q, model=None), "model must be a str"),
        (lambda: bs.encode(np.float32([1]), "e4m3", preset=None), "preset must be a str"),
        (lambda: bs.instruction("sm_90a wgmma.mma_async m64n8k32 f32 e4m3 e4m3\0junk"), "NUL character"),
        (lambda: bs.recipe_names("nope"), "recipe kind 'nope'"),
        # Integers: ctypes would wrap, int() would truncate.
        (lambda: bs.gemm_fp8(bs.quantize_fp8(x), bs.quantize_fp8(x), split_k=2**32 + 3), "split_k must be in 1 .."),
        (lambda: bs.gemm_fp8(bs.quantize_fp8(x), bs.quantize_fp8(x), split_k=1.5), "split_k must be an integer"),
        (lambda: bs.gemm(q, q, threads=-1), "threads (0 for all) must be in 0 .."),
        (lambda: bs.gemm(q, q, threads="2"), "must be an integer"),
        (lambda: bs.encode(np.float32([1]), "e4m3", rounding="stochastic", rbits=[1], stochastic_bits=0),
         "stochastic_bits must be in 1 .. 32"),
        (lambda: bs.encode(np.float32([1]), "e4m3", rbits=[1]), "random bits of rounding='stochastic'"),
        (lambda: bs.unpack(np.zeros(8, np.uint8), "e2m1", -1), "count must be in 0 .."),
        (lambda: bs.cublaslt_fp8(bs.quantize_fp8(x), bs.quantize_fp8(x), relu="False"), "relu must be True or False"),
        (lambda: bs.cublaslt_fp8(bs.quantize_fp8(x), bs.quantize_fp8(x), d_type="bf16", beta=0.0, c=np.zeros((4, 4))),
         "c with beta = 0: cuBLASLt does not read C"),
        (lambda: bs.cublaslt_fp8(bs.quantize_fp8(x), bs.quantize_fp8(x), d_type="bf16", alpha=1e40),
         "alpha = 1e+40 is out of float32's range"),
        (lambda: bs.cublaslt_fp8(bs.quantize_fp8(x), bs.quantize_fp8(x), d_type="bf16", beta=1e-50, c=np.zeros((4, 4))),
         "beta = 1e-50 is out of float32's range"),
        (lambda: bs.scales_to_layout(np.zeros((4, 4), np.uint8), "tiled_128x4", pad=-1), "pad (a byte code) must be in 0 .. 255"),
        (lambda: bs.scales_to_layout(np.zeros((4, 4), np.float32), "cublaslt_vec128", pad=np.nan), "float NaN"),
        # Arrays: shapes, kinds and the per-tensor scale the library reads.
        (lambda: bs.scales_from_layout(bs.scales_to_layout(np.ones((8, 4), np.float32), "cublaslt_vec128").T.copy(),
                                       "cublaslt_vec128", 8, 4), "is stored as (4, 8)"),
        (lambda: bs.quantize(np.array([["1.5"] * 32]), "mxfp8_e4m3"), "real numbers"),
        (lambda: bs.quantize(np.ones((2, 32), np.complex64)), "real numbers"),
        (lambda: bs.quantize(np.float32(1), "mxfp8_e4m3"), "got shape ()"),
        (lambda: bs.QuantizedMatrix.from_codes("mxfp8_e4m3", q.elements[:0], q.scales[:0]), "at least one row"),
        (lambda: bs.QuantizedMatrix.from_codes("mxfp8_e4m3", q.elements, q.scales, k=40.7), "k must be an integer"),
        (lambda: bs.gemm(q, with_tensor_scale(q, 0.5)), "tensor_scale must be the triple"),
        (lambda: bs.ulp_distance(np.float32([1, 2]), np.float32([1, 2, 3])), "shapes that broadcast"),
        (lambda: bs.gemm_fp8(with_recipe(bs.quantize_fp8(x), None), bs.quantize_fp8(x)), "unknown fp8 recipe None"),
        (lambda: bs.Fp8Matrix.from_codes("e4m3", "deepgemm_1x128_ue8m0", np.zeros((4, 64), np.uint8),
                                         np.full((4, 1), 1.5, np.float32)), "ue8m0 powers of two"),
        (lambda: bs.recorded_split_k("cublaslt", bs.quantize_fp8(np.ones((1024, 128), np.float32)),
                                     bs.quantize_fp8(np.ones((1024, 128), np.float32)), "h200", "bfloat16"),
         "recorded for an f32 or a bf16 D only"),
        (lambda: bs.mma_sparse("sm_90a mma.sp::ordered_metadata.sync.aligned m16n8k32 f32 f16 f16", np.zeros((16, 16), np.uint16),
                               np.full((16, 16), 3, np.uint8), np.zeros((32, 8), np.uint16)), "increasing"),
    ]
    for call, needle in cases:
        try:
            call()
        except bs.BlockscaleError as e:
            assert needle in str(e), f"expected a message with {needle!r}, got {e!r}"
            continue
        raise AssertionError(f"no BlockscaleError for the case expecting {needle!r}")
    print(f"errors: {len(cases)} bad inputs each raise BlockscaleError naming the rule")


def main():
    print(f"blockscale {bs.__version__} from {bs.__file__}")
    check_formats()
    check_ulp_distance()
    check_layouts()
    check_gemm()
    check_fp8_scaled()
    check_cublaslt_epilogue()
    check_sparse_mm()
    check_instructions()
    check_input_forms()
    check_errors()


if __name__ == "__main__":
    main()
