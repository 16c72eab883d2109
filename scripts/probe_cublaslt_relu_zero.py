#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Where cuBLASLt's ReLU epilogue puts a -0: a probe for docs/conformance.md, "cuBLASLt epilogue".

probe_cublaslt_epilogue.py found y = max(y, +0) on y before D's type, but no -0 reached the ReLU in
its data. Here every output is a signed zero: A is all +0 (e4m3), so the accumulator X of each
output is the sum of k zero products, and with alpha = -1 the tensor-wise epilogue's S X is -0
where X is +0. B is all positive (products +0) or all negative (products -0, which shows the sign
of a sum of -0 products). Each call (tensor-wise scaling, scales 1, 128 x 128 x 256 and
64 x 128 x 16384, the heuristic's first algorithm: no split-K, and a split-K of 6) is made with and without EPILOGUE_RELU, without a bias and with a bias of
+0 or -0 (RELU_BIAS / BIAS; bf16, the bias type cuBLASLt takes with these D types), with beta = 0,
or beta = 1 and C = -0, and with an f32 and a bf16 D. For each call the script counts D's +0 and -0
patterns (and anything else) and sets them beside blockscale's model of the call (emulator
cublaslt_fp8_gemm, library_fp8.cpp): y = FMA(S, X, beta C) (beta = 0: FMA(S, X, +0) without
split-K, S X with it), plus the bias, then max(y, +0) for ReLU, but for RELU_BIAS after a split-K
only the negatives to +0 (a -0 kept). Last, calls whose S X underflows (block scaling, tiny scales
and alpha) tell FMA(S, X, +0) from an FMUL followed by an add of +0. Runs on a Hopper GPU with PyTorch (the device machine; nothing here runs in
CI). Writes DIR/relu_zero.json.

usage: probe_cublaslt_relu_zero.py DIR
"""
import itertools
import json
import math
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from probe_cublaslt_epilogue import TYPES, Lt  # noqa: E402


def signed_zero(x):
    return "-0" if math.copysign(1.0, x) < 0 else "+0"


def model(x_sign, alpha, beta, c, bias, relu, split):
    """blockscale's cublaslt_fp8_gemm for a zero accumulator of sign x_sign (S = alpha: unit scales)."""
    x = -0.0 if x_sign == "-0" else 0.0
    if beta != 0.0:
        y = alpha * x + beta * c  # FMA(S, X, beta C) of signed zeros is their IEEE sum: -0 only when both are -0
    elif split == 1:
        y = alpha * x + 0.0  # the fused kernel's FMA(S, X, +0): an exact -0 becomes +0
    else:
        y = alpha * x  # the split-K reduction's S X keeps it
    if bias is not None:
        y = y + bias
    if relu:
        if split > 1 and bias is not None:
            y = 0.0 if y < 0.0 else y  # the split-K RELU_BIAS epilogue keeps a -0
        elif not y > 0.0:
            y = 0.0
    return signed_zero(y)


def counts(d, d_type):
    """D's outputs by bit pattern: +0, -0, other."""
    if d_type == "f32":
        bits = d.contiguous().view(torch.int32).cpu().flatten().tolist()
        neg = -(1 << 31)
    else:
        bits = d.contiguous().view(torch.int16).cpu().flatten().tolist()
        neg = -(1 << 15)
    plus = sum(1 for b in bits if b == 0)
    minus = sum(1 for b in bits if b == neg)
    return {"+0": plus, "-0": minus, "other": len(bits) - plus - minus}


def main(out_dir):
    # Load torch's cuBLASLt first (one small fp8 GEMM), so that Lt() finds that copy in the process.
    one = torch.ones(1, device="cuda")
    e = torch.zeros(16, 16, device="cuda").to(torch.float8_e4m3fn)
    torch._scaled_mm(e, e.t(), one, one, out_dtype=torch.float32)
    lt = Lt()
    ws = torch.empty(64 << 20, dtype=torch.uint8, device="cuda")
    record = {"cublaslt": lt.version, "torch": torch.__version__, "gpu": torch.cuda.get_device_name(), "calls": []}
    gen = torch.Generator().manual_seed(7)
    # (64 x 128 x 16384: the shape where the heuristic splits K in 6, probe_cublaslt_epilogue.py)
    for scaling, (m, n, k), b_sign in itertools.product(("tensor", "rowwise", "block_1x128", "block_128x128"),
                                                         ((128, 128, 256), (64, 128, 16384)), ("+", "-")):
        a = torch.zeros(m, k, device="cuda").to(torch.float8_e4m3fn)
        kb = k // 128
        if scaling == "tensor":
            sa, sb = torch.ones(1, device="cuda"), torch.ones(1, device="cuda")
        elif scaling == "rowwise":
            sa, sb = torch.ones(m, device="cuda"), torch.ones(n, device="cuda")
        else:  # VEC128 for A; VEC128 or BLK128x128 (K blocks padded to 4) for B (probe_cublaslt_epilogue.py)
            sa = torch.ones(kb * m, device="cuda")
            sb = torch.ones(kb * n if scaling == "block_1x128" else (n + 127) // 128 * ((kb + 3) // 4 * 4), device="cuda")
        mag = torch.rand(n, k, generator=gen) + 0.25
        b = (mag if b_sign == "+" else -mag).to("cuda").to(torch.float8_e4m3fn)
        # The accumulator's sign: alpha = 1, no epilogue.
        got, err = lt.matmul(a, b, m, n, k, sa, sb, scaling, False, "f32", alpha=1.0, workspace=ws)
        x_counts = counts(got[0], "f32") if got else None
        x_sign = "-0" if x_counts and x_counts["-0"] == m * n else "+0" if x_counts and x_counts["+0"] == m * n else None
        record["calls"].append({"scaling": scaling, "shape": [m, n, k], "b": b_sign, "what": "X (alpha 1)", "d": "f32", "counts": x_counts,
                                "error": err})
        print(scaling, f"{m}x{n}x{k}", "B", b_sign, "X:", x_counts, err, flush=True)
        if x_sign is None:
            continue
        for d_type in ("f32", "bf16"):
            for beta, c_value in ((0.0, None), (1.0, -0.0)):
                for bias_value in (None, 0.0, -0.0):
                    for relu in (False, True):
                        c = None
                        if c_value is not None:
                            c = torch.full((n, m), c_value, device="cuda").to(TYPES[d_type][1])  # column-major m x n
                        bias = None if bias_value is None else torch.full((m,), bias_value, device="cuda").to(torch.bfloat16)
                        got, err = lt.matmul(a, b, m, n, k, sa, sb, scaling, False, d_type, alpha=-1.0, beta=beta,
                                             c=c, c_type=d_type if c is not None else None, bias=bias,
                                             bias_type="bf16" if bias is not None else None, workspace=ws, relu=relu)
                        entry = {"scaling": scaling, "shape": [m, n, k], "b": b_sign, "x": x_sign, "d": d_type, "alpha": -1.0, "beta": beta,
                                 "c": None if c_value is None else signed_zero(c_value),
                                 "bias": None if bias_value is None else signed_zero(bias_value), "relu": relu,
                                 "error": err, "counts": counts(got[0], d_type) if got else None,
                                 "split": got[1] if got else None,
                                 "model": model(x_sign, -1.0, beta, 0.0 if c_value is None else c_value, bias_value, relu,
                                                got[1] if got else 1)}
                        want = entry["model"]
                        entry["model_agrees"] = got is not None and entry["counts"][want] == m * n
                        record["calls"].append(entry)
                        print(f"{scaling} {m}x{n}x{k} B{b_sign} X {x_sign} D {d_type} split {entry['split']} beta {beta} C {entry['c']} "
                              f"bias {entry['bias']} relu {relu}: {entry['counts'] or err} model {want}"
                              f"{'' if entry['model_agrees'] else '  DIFFERS'}", flush=True)
    # An S X that underflows: block scales 2^-10 (S = alpha = -2^-126), A = B = 2^-9 (e4m3 code 1), so
    # X = k 2^-18 2^-20 and S X = -k 2^-164, far below fp32's least subnormal: FMA(S, X, +0) rounds
    # that exact value to -0, an FMUL (-0) and then an FADD of +0 would give +0.
    for scaling, (m, n, k) in itertools.product(("block_1x128", "block_128x128"), ((128, 128, 256), (64, 128, 16384))):
        kb = k // 128
        a = torch.full((m, k), 2.0 ** -9, device="cuda").to(torch.float8_e4m3fn)
        b = torch.full((n, k), 2.0 ** -9, device="cuda").to(torch.float8_e4m3fn)
        sa = torch.full((kb * m,), 2.0 ** -10, device="cuda")
        sb = torch.full((kb * n if scaling == "block_1x128" else (n + 127) // 128 * ((kb + 3) // 4 * 4),), 2.0 ** -10,
                        device="cuda")
        for d_type in ("f32", "bf16"):
            got, err = lt.matmul(a, b, m, n, k, sa, sb, scaling, False, d_type, alpha=-(2.0 ** -126), workspace=ws)
            entry = {"scaling": scaling, "shape": [m, n, k], "what": "underflow", "d": d_type, "alpha": -(2.0 ** -126),
                     "error": err, "counts": counts(got[0], d_type) if got else None, "split": got[1] if got else None,
                     "model": "-0"}
            entry["model_agrees"] = got is not None and entry["counts"]["-0"] == m * n
            record["calls"].append(entry)
            print(f"underflow {scaling} {m}x{n}x{k} D {d_type} split {entry['split']}: {entry['counts'] or err} model -0"
                  f"{'' if entry['model_agrees'] else '  DIFFERS'}", flush=True)
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "relu_zero.json"), "w") as f:
        json.dump(record, f, indent=1)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: probe_cublaslt_relu_zero.py DIR")
    main(sys.argv[1])
