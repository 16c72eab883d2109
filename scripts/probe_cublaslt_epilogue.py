#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""How cuBLASLt's fp8 epilogue computes: a probe for docs/conformance.md, "cuBLASLt epilogue".

cuBLASLt documents its fp8 GEMM as D = scale_d (alpha scale_a scale_b op(A) op(B) + beta C + bias)
with amax_d = max |.| before scale_d, but not where it rounds. This probe runs on a Hopper GPU with
PyTorch (the device machine; nothing here runs in CI) and calls cuBLASLt through its C API (ctypes,
torch's buffers) on e4m3 operands, D = A B^T as blockscale's cuBLASLt study calls it (TRANSA = T,
D column-major m x n; the bias has one value per row of D). For each recipe (tensor-wise with and
without FAST_ACCUM, OUTER_VEC x OUTER_VEC row-wise scaling with and without it, VEC128 x VEC128 and
VEC128 x BLK128x128 block scaling), shape (128 x 128 x 2048,
split-K 1; 64 x 128 x 16384, where the heuristic splits K in 6) and data (Gaussian; "cancel": C =
-D0 in C's type and the bias -D0(i, 0) with B's rows equal but for two elements, so that the low
bits an FMA keeps reach D), it makes D0 (the recipe's scales, alpha 1, beta 0, f32 D) and, for
tensor-wise and row-wise scaling, the accumulator X (unit scales), then calls cuBLASLt with alpha, beta, C, a
bias and each D type (f32, bf16, f16, e4m3 with D_SCALE and AMAX_D; e5m2 and the other C and bias
types to record that they are refused) and counts exactly how many outputs each candidate order of
the epilogue reproduces. With S X = alpha sa sb X (tensor-wise, S rounded in each of three orders),
alpha D0 (block scaling) or, for row-wise scaling (where D0 = RN(sb RN(sa X))), alpha D0,
RN(alpha sb) RN(sa X) or sb RN(RN(alpha sa) X), the candidates for the f32 value y are
  fused   RN(RN(FMA(S, X, RN(beta C))) + bias)     fma_c   RN(RN(FMA(beta, C, RN(S X))) + bias)
  apart   RN(RN(RN(S X) + RN(beta C)) + bias)      bias_c  RN(RN(RN(S X) + bias) + RN(beta C))
  once    RN(S X + beta C + bias)
then D = y rounded to D's type (an e4m3 D: RN(sd y) in f32 or exactly, saturating or not), and
amax_d against max |y|. A last data kind, "midpoints" (A = B = 0, C chosen so that sd C lands on
e4m3 midpoints only once rounded to f32), tells the e4m3 D's two roundings apart. Exact rounding
uses float64 where TwoSum proves the sum exact, Python fractions elsewhere. With MODULE (a directory
holding the blockscale Python package, e.g. <build>/python) every accepted call is also computed by
blockscale.cublaslt_fp8 and compared with the GPU's D and amax_d. Writes DIR/epilogue.json.

AxB (default e4m3xe4m3; e4m3xe5m2, e5m2xe4m3) chooses the operands' element types, and SCALINGS (a
comma-separated list of tensor, rowwise, block_1x128, block_128x128; default all) the recipes. MODULE
may be "-" for none. "relu" last adds cuBLASLt's ReLU to every call (EPILOGUE_RELU, or RELU_BIAS
with a bias) and the candidates where it could act: max(y, +0) (negatives and -0 to +0) or y with
its negatives to +0 (a -0 kept), on y before D's type or on D; amax_d before or after it.

usage: probe_cublaslt_epilogue.py DIR [SEED [MODULE [AxB [SCALINGS [relu]]]]]
"""
import ctypes
import itertools
import json
import os
import sys
from fractions import Fraction

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cublaslt_split_k import (CUBLAS_COMPUTE_32F, CUBLAS_OP_N, CUBLAS_OP_T, CUDA_R_16BF, CUDA_R_32F,  # noqa: E402
                              CUDA_R_8F_E4M3, CUDA_R_8F_E5M2, DESC_A_SCALE_MODE, DESC_A_SCALE_POINTER,
                              DESC_B_SCALE_MODE, DESC_B_SCALE_POINTER, DESC_FAST_ACCUM, DESC_TRANSA, DESC_TRANSB,
                              PREF_MAX_WORKSPACE_BYTES, SCALE_BLK128x128_32F, SCALE_OUTER_VEC_32F,
                              SCALE_VEC128_32F, CublasLt)
from probe_scaled_mm_bias import round_rne  # noqa: E402  (a fraction rounded to nearest even on a grid)

# cublasLt.h / library_types.h, CUDA 13.0.
CUDA_R_16F = 2
DESC_EPILOGUE, DESC_BIAS_POINTER, DESC_D_SCALE_POINTER, DESC_AMAX_D_POINTER, DESC_BIAS_DATA_TYPE = 7, 8, 20, 21, 26
EPILOGUE_DEFAULT, EPILOGUE_RELU, EPILOGUE_BIAS = 1, 2, 4  # RELU_BIAS = RELU | BIAS
CONFIG_SPLITK_NUM = 2
TYPES = {"f32": (CUDA_R_32F, torch.float32), "bf16": (CUDA_R_16BF, torch.bfloat16), "f16": (CUDA_R_16F, torch.float16),
         "e4m3": (CUDA_R_8F_E4M3, torch.float8_e4m3fn), "e5m2": (CUDA_R_8F_E5M2, torch.float8_e5m2)}
# (significand bits, minimum normal exponent, largest finite value) of each type.
GRID = {"f32": (24, -126, None), "bf16": (8, -126, None), "f16": (11, -14, 65504.0),
        "e4m3": (4, -6, 448.0), "e5m2": (3, -14, 57344.0)}


def rnd(terms, t, saturate=False):
    """The exact sum of `terms` (float64 arrays, each term exact) rounded once to nearest even to
    type t. Where float64 holds the sum exactly (TwoSum finds no error), a power-of-two rescaling and
    np.rint (ties to even) round it; elsewhere Python fractions do. Past the largest finite value:
    that value (saturate), else NaN for e4m3 (no infinity) and Inf otherwise."""
    terms = [np.asarray(x, dtype=np.float64) for x in terms]
    shape = np.broadcast_shapes(*[x.shape for x in terms])
    terms = [np.broadcast_to(x, shape).reshape(-1) for x in terms]
    s = terms[0].copy()
    inexact = np.zeros(s.shape, dtype=bool)
    for x in terms[1:]:
        total = s + x
        back = total - s
        err = (s - (total - back)) + (x - back)
        inexact |= err != 0
        s = total
    p, emin, top = GRID[t]
    with np.errstate(divide="ignore", invalid="ignore"):
        e = np.frexp(s)[1] - 1
        ulp = np.ldexp(1.0, np.maximum(e, emin) - p + 1)
        r = np.where(s == 0, s, np.rint(s / ulp) * ulp)
    for idx in np.flatnonzero(inexact):
        q = sum((Fraction(float(x[idx])) for x in terms), Fraction(0))
        r[idx] = float(round_rne(q, p, emin))
    if top is not None:
        over = np.abs(r) > top
        r = np.where(over, np.copysign(top, r) if saturate else (np.nan if t == "e4m3" else np.copysign(np.inf, r)), r)
    return r.reshape(shape)


def f32(*terms):
    return rnd(terms, "f32")


def values(t):
    """A tensor's values as float64 (every value of these types is exact in float64)."""
    return t.detach().to(torch.float64).cpu().numpy()


def same(x, y):
    """Where two arrays of values agree: NaN equals NaN, and -0 differs from +0."""
    return ((x == y) & (np.signbit(x) == np.signbit(y))) | (np.isnan(x) & np.isnan(y))


def differ(x, y):
    return int((~same(x, y)).sum())


class Lt(CublasLt):
    """cublasLtMatmul for the probe: D (m x n, column-major) = op(A) B with the epilogue's pieces."""

    def matmul(self, a, b, m, n, k, sa, sb, scaling, fast, d_type, alpha=1.0, beta=0.0, c=None, c_type=None,
               bias=None, bias_type=None, d_scale=None, amax=None, workspace=None, elements=("e4m3", "e4m3"),
               relu=False):
        L = self.lib
        op, la, lb, lc, ld, pref = (ctypes.c_void_p() for _ in range(6))
        self._ok(L.cublasLtMatmulDescCreate(ctypes.byref(op), CUBLAS_COMPUTE_32F, CUDA_R_32F), "cublasLtMatmulDescCreate")
        try:
            setd = L.cublasLtMatmulDescSetAttribute
            self._set(setd, op, DESC_TRANSA, ctypes.c_int(CUBLAS_OP_T))
            self._set(setd, op, DESC_TRANSB, ctypes.c_int(CUBLAS_OP_N))
            self._set(setd, op, DESC_FAST_ACCUM, ctypes.c_int8(1 if fast else 0))
            self._set(setd, op, DESC_A_SCALE_POINTER, ctypes.c_void_p(sa.data_ptr()))
            self._set(setd, op, DESC_B_SCALE_POINTER, ctypes.c_void_p(sb.data_ptr()))
            if scaling == "rowwise":
                self._set(setd, op, DESC_A_SCALE_MODE, ctypes.c_int(SCALE_OUTER_VEC_32F))
                self._set(setd, op, DESC_B_SCALE_MODE, ctypes.c_int(SCALE_OUTER_VEC_32F))
            elif scaling != "tensor":
                self._set(setd, op, DESC_A_SCALE_MODE, ctypes.c_int(SCALE_VEC128_32F))
                self._set(setd, op, DESC_B_SCALE_MODE, ctypes.c_int(SCALE_VEC128_32F if scaling == "block_1x128"
                                                                    else SCALE_BLK128x128_32F))
            if bias is not None or relu:
                epilogue = (EPILOGUE_BIAS if bias is not None else 0) | (EPILOGUE_RELU if relu else 0)
                self._set(setd, op, DESC_EPILOGUE, ctypes.c_int(epilogue))
            if bias is not None:
                self._set(setd, op, DESC_BIAS_POINTER, ctypes.c_void_p(bias.data_ptr()))
                self._set(setd, op, DESC_BIAS_DATA_TYPE, ctypes.c_int(TYPES[bias_type][0]))
            if d_scale is not None:
                self._set(setd, op, DESC_D_SCALE_POINTER, ctypes.c_void_p(d_scale.data_ptr()))
            if amax is not None:
                self._set(setd, op, DESC_AMAX_D_POINTER, ctypes.c_void_p(amax.data_ptr()))
            mk = L.cublasLtMatrixLayoutCreate
            u64, i64 = ctypes.c_uint64, ctypes.c_int64
            self._ok(mk(ctypes.byref(la), TYPES[elements[0]][0], u64(k), u64(m), i64(k)), "cublasLtMatrixLayoutCreate")
            self._ok(mk(ctypes.byref(lb), TYPES[elements[1]][0], u64(k), u64(n), i64(k)), "cublasLtMatrixLayoutCreate")
            self._ok(mk(ctypes.byref(lc), TYPES[c_type or d_type][0], u64(m), u64(n), i64(m)), "cublasLtMatrixLayoutCreate")
            self._ok(mk(ctypes.byref(ld), TYPES[d_type][0], u64(m), u64(n), i64(m)), "cublasLtMatrixLayoutCreate")
            self._ok(L.cublasLtMatmulPreferenceCreate(ctypes.byref(pref)), "cublasLtMatmulPreferenceCreate")
            self._set(L.cublasLtMatmulPreferenceSetAttribute, pref, PREF_MAX_WORKSPACE_BYTES,
                      ctypes.c_uint64(workspace.numel()))
            result = self.Heuristic()
            found = ctypes.c_int(0)
            status = L.cublasLtMatmulAlgoGetHeuristic(self.handle, op, la, lb, lc, ld, pref, 1, ctypes.byref(result),
                                                      ctypes.byref(found))
            if status != 0 or found.value < 1:
                return None, f"heuristic: no algorithm (status {status})"
            split, written = ctypes.c_int32(0), ctypes.c_size_t(0)
            L.cublasLtMatmulAlgoConfigGetAttribute(ctypes.byref(result.algo), CONFIG_SPLITK_NUM, ctypes.byref(split),
                                                   4, ctypes.byref(written))
            d = torch.full((n, m), float("nan"), device="cuda").to(TYPES[d_type][1])  # column-major m x n
            cc = c if c is not None else d
            al, be = ctypes.c_float(alpha), ctypes.c_float(beta)
            L.cublasLtMatmul.argtypes = [ctypes.c_void_p] * 16
            torch.cuda.synchronize()
            status = L.cublasLtMatmul(self.handle, op, ctypes.addressof(al), a.data_ptr(), la, b.data_ptr(), lb,
                                      ctypes.addressof(be), cc.data_ptr(), lc, d.data_ptr(), ld,
                                      ctypes.addressof(result.algo), workspace.data_ptr(), workspace.numel(), None)
            torch.cuda.synchronize()
            if status != 0:
                return None, f"cublasLtMatmul status {status}"
            return (d, max(1, split.value)), None
        finally:
            for obj, destroy in ((pref, L.cublasLtMatmulPreferenceDestroy), (ld, L.cublasLtMatrixLayoutDestroy),
                                 (lc, L.cublasLtMatrixLayoutDestroy), (lb, L.cublasLtMatrixLayoutDestroy),
                                 (la, L.cublasLtMatrixLayoutDestroy), (op, L.cublasLtMatmulDescDestroy)):
                if obj.value:
                    destroy(obj)


def midpoint_codes(sd, c_type, d_type):
    """Values of C's type (positive, finite) whose product with the f32 D scale sd rounds to a
    different value of D's type once than through f32 (the f32 product lands on a midpoint)."""
    if c_type == "bf16":
        vals = (np.arange(1, 0x7F80, dtype=np.uint32) << 16).view(np.float32).astype(np.float64)
    else:
        vals = np.arange(1, 0x7C00, dtype=np.uint16).view(np.float16).astype(np.float64)
    vals = vals[np.abs(sd * vals) < GRID[d_type][2]]
    once = rnd([sd * vals], d_type, True)
    twice = rnd([f32(sd * vals)], d_type, True)
    return vals[once != twice]


# The epilogue's scalars: alpha, sa and sb chosen so that RN(alpha RN(sa sb)), RN(RN(alpha sa) sb)
# and RN(RN(alpha sb) sa) are three different f32 values; beta not a power of two.
ALPHA, SA, SB, BETA = 1.6219326257705688, 1.539794921875, 1.4581329822540283, 0.6000000238418579


def module_check(bs, scaling, fast, a, b, sa, sb, m, n, k, split, alpha, beta, cx, c_type, bx, bias_type, d_type,
                 sd, got, amax, relu=False):
    """blockscale's model of the call (blockscale.cublaslt_fp8) against the GPU's D and amax_d:
    the outputs that differ, and whether amax_d agrees (None without an fp8 D)."""
    kb = k // 128
    if scaling == "tensor":
        recipes = ("torchao_tensorwise", "torchao_tensorwise")
        scales = (sa.cpu().numpy()[:1], sb.cpu().numpy()[:1])
    elif scaling == "rowwise":
        recipes = ("torchao_rowwise", "torchao_rowwise")
        scales = (sa.cpu().numpy(), sb.cpu().numpy())
    else:  # the device layouts (see main) back to row-major (rows, K/128) and (N/128, K/128)
        sa_rows = sa.cpu().reshape(kb, m).t().contiguous().numpy()
        if scaling == "block_1x128":
            recipes = ("deepgemm_1x128", "deepgemm_1x128")
            sb_rows = sb.cpu().reshape(kb, n).t().contiguous().numpy()
        else:
            recipes = ("deepgemm_1x128", "deepgemm_128x128")
            sb_rows = sb.cpu().reshape((n + 127) // 128, -1)[:, :kb].contiguous().numpy()
        scales = (sa_rows, sb_rows)
    qa = bs.Fp8Matrix.from_codes(str(a.dtype).split("_")[1][:4], recipes[0], a.view(torch.uint8).cpu().numpy(), scales[0])
    qb = bs.Fp8Matrix.from_codes(str(b.dtype).split("_")[1][:4], recipes[1], b.view(torch.uint8).cpu().numpy(), scales[1])
    try:
        d, model_amax = bs.cublaslt_fp8(qa, qb, fast_accum=fast, split_k=split, alpha=alpha, beta=beta,
                                        c=cx if beta else None, c_type=c_type or "f32",
                                        bias=None if bias_type == "none" else bx.reshape(-1), bias_type=bias_type
                                        if bias_type != "none" else None, d_type=d_type, d_scale=sd, relu=relu)
    except bs.BlockscaleError as exc:
        return {"refused": str(exc)[:200]}
    return {"mismatches": differ(d.astype(np.float64), got),
            "amax_agrees": None if amax is None else bool(np.float32(model_amax) == np.float32(amax))}


def main(out_dir, seed, module_dir=None, elements=("e4m3", "e4m3"),
         scalings=("tensor", "rowwise", "block_1x128", "block_128x128"), relu=False):
    bs = None
    if module_dir:
        sys.path.insert(0, module_dir)
        import blockscale as bs  # noqa: E402  (the package built beside this checkout)
    # Load torch's cuBLASLt first (one small fp8 GEMM), so that Lt() finds that copy in the process.
    one = torch.ones(1, device="cuda")
    e = torch.zeros(16, 16, device="cuda").to(torch.float8_e4m3fn)
    torch._scaled_mm(e, e.t(), one, one, out_dtype=torch.float32)
    lt = Lt()
    ws = torch.empty(64 << 20, dtype=torch.uint8, device="cuda")
    record = {"cublaslt": lt.version, "torch": torch.__version__, "gpu": torch.cuda.get_device_name(), "seed": seed,
              "elements": "x".join(elements),
              "alpha": ALPHA, "beta": BETA, "module": None if bs is None else bs.__version__, "relu": relu,
              "calls": []}
    gen = torch.Generator().manual_seed(seed)

    def cuda(t):
        return t.to("cuda")

    def rows(d):
        """D (column-major on the device) as a row-major m x n float64 array."""
        return values(d.t())

    runs = [(s, f, shape, data) for shape in ((128, 128, 2048), (64, 128, 16384))
            for s, f in (("tensor", False), ("tensor", True), ("rowwise", False), ("rowwise", True),
                         ("block_1x128", False), ("block_128x128", False))
            for data in ("gaussian", "cancel") if s in scalings]
    if "tensor" in scalings:
        runs += [("tensor", False, (128, 128, 2048), "midpoints"), ("tensor", False, (64, 128, 16384), "midpoints")]
    for scaling, fast, (m, n, k), data in runs:
        name = f"{scaling}{'_fast' if fast else ''}_{m}x{n}x{k}_{data}"
        x = torch.randn(m, k, generator=gen)
        y = torch.randn(n, k, generator=gen)
        if data == "cancel":  # B's rows equal but for two elements: D0(i, j) close to D0(i, 0)
            y[1:] = y[0]
            for j in range(1, n):
                y[j, torch.randint(0, k, (2,), generator=gen)] = torch.randn(2, generator=gen)
        if data == "midpoints":  # D = sd C exactly: the D scale's rounding alone
            x.zero_()
            y.zero_()
        a = cuda(x.to(TYPES[elements[0]][1]))
        b = cuda(y.to(TYPES[elements[1]][1]))
        kb = k // 128
        if scaling == "tensor":
            sa, sb = cuda(torch.tensor([SA])), cuda(torch.tensor([SB]))
        elif scaling == "rowwise":  # OUTER_VEC: one scale per row of A (m) and of B (n)
            sa, sb = cuda(torch.rand(m, generator=gen) + 0.5), cuda(torch.rand(n, generator=gen) + 0.5)
        else:  # VEC128 for A: (M, K/128), M contiguous; B: VEC128 (N, K/128), N contiguous, or
            # BLK128x128: K-blocks contiguous, padded to 4 (gpu.md section 4)
            sa = cuda((torch.rand(kb, m, generator=gen) + 0.5).reshape(-1))
            if scaling == "block_1x128":
                sb = cuda((torch.rand(kb, n, generator=gen) + 0.5).reshape(-1))
            else:
                sb = cuda((torch.rand((n + 127) // 128, (kb + 3) // 4 * 4, generator=gen) + 0.5).reshape(-1))

        def call(d_type, **kw):
            with_relu = relu and kw.pop("relu", True)  # D0 and X are asked without it
            kw.pop("relu", None)
            return lt.matmul(a, b, m, n, k, kw.pop("sa", sa), kw.pop("sb", sb), scaling, fast, d_type, workspace=ws,
                             elements=elements, relu=with_relu, **kw)

        base, err = call("f32", relu=False)
        if err:
            record["calls"].append({"name": name, "error": "D0: " + err})
            print(name, "D0 refused:", err, flush=True)
            continue
        d0t, split = base
        d0 = rows(d0t)
        if scaling == "tensor":
            unit = cuda(torch.tensor([1.0]))
            acc = rows(call("f32", sa=unit, sb=unit, relu=False)[0][0])
            # alpha sa sb in each order: (name, scale)
            orders = {"s=a(sa sb)": f32(ALPHA * f32(SA * SB)), "s=(a sa)sb": f32(f32(ALPHA * SA) * SB),
                      "s=(a sb)sa": f32(f32(ALPHA * SB) * SA)}
        elif scaling == "rowwise":
            acc = rows(call("f32", sa=cuda(torch.ones(m)), sb=cuda(torch.ones(n)), relu=False)[0][0])
            sav, sbv = values(sa).reshape(m, 1), values(sb).reshape(1, n)
        spread = float(d0t.abs().max())
        common = {"scaling": scaling, "fast_accum": fast, "m": m, "n": n, "k": k, "data": data, "split_k": split}

        def c_matrix(c_type, d_type):
            """C as row-major m x n values and as its column-major device tensor."""
            if data == "cancel":
                cm = -d0t.t()
            elif data == "midpoints":
                vals = torch.tensor(midpoint_codes(float(torch.tensor(1 / 3, dtype=torch.float32)), c_type, d_type))
                signs = torch.where(torch.rand(m * n, generator=gen) < 0.5, -1.0, 1.0).double()
                cm = cuda((vals[torch.randint(0, len(vals), (m * n,), generator=gen)] * signs).reshape(m, n))
            else:
                cm = cuda(torch.randn(m, n, generator=gen)) * spread
            cm = cm.to(TYPES[c_type][1])
            return values(cm), cm.t().contiguous()

        def bias_vector(bias_type):
            """One bias value per row of D, as an m x 1 column and as the device vector."""
            if data == "cancel":
                bv = -d0t[0].clone()  # -D0(i, 0)
            else:
                bv = cuda(torch.randn(m, generator=gen)) * spread
            bv = bv.to(TYPES[bias_type][1])
            return values(bv).reshape(m, 1), bv.contiguous()

        def forms(alpha, beta, cx, bx):
            """The f32 value y before D's type, by each candidate order of the epilogue's operations:
            fused   RN(RN(FMA(S, X, RN(beta C))) + bias)   S X: alpha s acc (tensor-wise) or alpha D0
            fma_c   RN(RN(FMA(beta, C, RN(S X))) + bias)
            apart   RN(RN(RN(S X) + RN(beta C)) + bias)
            bias_c  RN(RN(RN(S X) + bias) + RN(beta C))
            once    RN(S X + beta C + bias)"""
            out = {}
            if scaling == "tensor":
                sx = {key: (sv, acc) for key, sv in orders.items()}
            elif scaling == "rowwise":  # alpha with D0 = RN(sb RN(sa X)), with sb, or with sa
                sx = {"s=a x=d0": (alpha, d0), "s=(a sb) x=sa acc": (f32(alpha * sbv), f32(sav * acc)),
                      "s=sb x=(a sa)acc": (sbv, f32(f32(alpha * sav) * acc))}
            else:
                sx = {"": (alpha, d0)}
            for key, (sv, xv) in sx.items():
                if scaling == "tensor" and alpha == 1.0:
                    sv = f32(SA * SB)
                    if key != "s=a(sa sb)":
                        continue
                tag = f"{key} " if key else ""
                prod = sv * xv  # exact: two f32 values
                out[tag + "fused"] = f32(f32(prod, f32(beta * cx)), bx)
                out[tag + "fma_c"] = f32(f32(f32(prod), beta * cx), bx)
                out[tag + "apart"] = f32(f32(f32(prod), f32(beta * cx)), bx)
                out[tag + "bias_c"] = f32(f32(f32(prod), bx), f32(beta * cx))
                out[tag + "once"] = f32(prod, beta * cx, bx)
            return out

        tests = [(ALPHA, 0.0, None, "none", "f32"), (1.0, 1.0, "f32", "none", "f32"), (1.0, BETA, "f32", "none", "f32"),
                 (1.0, 0.0, None, "bf16", "f32"), (ALPHA, BETA, "f32", "bf16", "f32")]
        for d_type in ("bf16", "f16"):
            tests += [(1.0, 0.0, None, "none", d_type), (1.0, 0.0, None, d_type, d_type), (1.0, 1.0, d_type, "none", d_type),
                      (ALPHA, BETA, d_type, d_type, d_type)]
        for d8, c_type in itertools.product(("e4m3", "e5m2"), ("bf16", "f16")):  # e5m2: with an e5m2 operand
            tests += [(1.0, 0.0, c_type, "none", d8), (1.0, 1.0, c_type, "none", d8),
                      (1.0, 0.0, c_type, c_type, d8), (ALPHA, BETA, c_type, c_type, d8)]
        # combinations refused on the first probe, kept to record that they still are
        tests += [(1.0, 0.0, None, "f16", "f32"), (1.0, 0.0, None, "f32", "f32"), (1.0, 1.0, "bf16", "none", "f32"),
                  (1.0, 0.0, None, "f32", "bf16")]
        if data == "midpoints":
            tests = [(1.0, 1.0, c_type, "none", d8) for d8 in ("e4m3", "e5m2") for c_type in ("bf16", "f16")]
        for alpha, beta, c_type, bias_type, d_type in tests:
            fp8 = d_type in ("e4m3", "e5m2")
            extra = {"alpha": alpha, "beta": beta, "c_type": c_type if beta else None, "bias_type": bias_type,
                     "d_type": d_type}
            what = f"alpha {alpha:.4g} beta {beta:.4g} C {extra['c_type']} bias {bias_type} D {d_type}"
            cx, cdev = c_matrix(c_type, d_type) if beta else (np.zeros((m, n)), None)
            if c_type and not beta:  # C unread, but a distinct buffer of its type (C == D needs equal layouts)
                cdev = torch.zeros(n, m, device="cuda").to(TYPES[c_type][1])
            bx, bdev = bias_vector(bias_type) if bias_type != "none" else (np.zeros((m, 1)), None)
            kw = {"alpha": alpha, "beta": beta, "c": cdev, "c_type": c_type}
            if bias_type != "none":
                kw.update(bias=bdev, bias_type=bias_type)
            sd = 1.0
            if fp8:
                if data == "midpoints":
                    sd = float(torch.tensor(1 / 3, dtype=torch.float32))
                else:  # a D scale that sends some outputs past the largest finite value
                    sd = float(torch.tensor(2 * GRID[d_type][2] / spread, dtype=torch.float32))
                amax = cuda(torch.tensor([-1.0]))
                kw.update(d_scale=cuda(torch.tensor([sd])), amax=amax)
            got, err = call(d_type, **kw)
            if err:
                record["calls"].append(dict(name=name, what=what, **common, **extra, error=err))
                print(name, what, "refused:", err, flush=True)
                continue
            gx = rows(got[0])
            ys = forms(alpha, beta, cx, bx)
            relu_plus = lambda v: np.where(v > 0, v, 0.0)  # noqa: E731  (negatives and -0 to +0)
            relu_keep = lambda v: np.where(v < 0, 0.0, v)  # noqa: E731  (negatives to +0, a -0 kept)
            pre = ys
            if relu:  # ReLU on y, then D's type; or (" D relu") on D
                ys = {}
                for key, yv in pre.items():
                    ys[key + " relu+0"] = relu_plus(yv)
                    ys[key + " relu-0"] = relu_keep(yv)
            if fp8:
                cands = {}
                for key, yv in ys.items():
                    cands[key + " /f32 sat"] = rnd([f32(sd * yv)], d_type, True)
                    cands[key + " /f32 nosat"] = rnd([f32(sd * yv)], d_type, False)
                    cands[key + " /once sat"] = rnd([sd * yv], d_type, True)
                if relu:
                    for key, yv in pre.items():
                        cands[key + " /f32 sat D relu+0"] = relu_plus(rnd([f32(sd * yv)], d_type, True))
                amax_candidates = {key: float(np.abs(yv).max()) for key, yv in ys.items()}
                if relu:
                    amax_candidates.update({key + " before relu": float(np.abs(yv).max()) for key, yv in pre.items()})
                extra.update(d_scale=sd, amax=float(amax.item()), amax_candidates=amax_candidates,
                             overflowing=int((np.abs(sd * next(iter(ys.values()))) > GRID[d_type][2]).sum()))
            else:
                cands = {key: rnd([yv], d_type) for key, yv in ys.items()}
                if relu:
                    cands.update({key + " D relu+0": relu_plus(rnd([yv], d_type)) for key, yv in pre.items()})
            entry = dict(name=name, what=what, **common, **extra, split_used=got[1], outputs=int(gx.size))
            if bs is not None:
                entry["module"] = module_check(bs, scaling, fast, a, b, sa, sb, m, n, k, got[1], alpha, beta, cx,
                                               c_type, bx, bias_type, d_type, sd, gx, extra.get("amax"), relu)
            entry["mismatches"] = {c: differ(v, gx) for c, v in cands.items()}
            first = next(iter(cands.values()))
            apart = np.zeros(first.shape, dtype=bool)
            for v in cands.values():
                apart |= ~same(v, first)
            entry["candidates_differ"] = int(apart.sum())
            record["calls"].append(entry)
            best = sorted(entry["mismatches"].items(), key=lambda kv: kv[1])[:3]
            print(name, what, "best:", best, "differ:", entry["candidates_differ"],
                  "amax:", extra.get("amax"), "module:", entry.get("module"), flush=True)
    with open(os.path.join(out_dir, "epilogue.json"), "w") as f:
        json.dump(record, f, indent=1)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: probe_cublaslt_epilogue.py DIR [SEED [MODULE [AxB]]]")
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 1,
         sys.argv[3] if len(sys.argv) > 3 and sys.argv[3] != "-" else None,
         tuple(sys.argv[4].split("x")) if len(sys.argv) > 4 else ("e4m3", "e4m3"),
         tuple(sys.argv[5].split(",")) if len(sys.argv) > 5 else ("tensor", "rowwise", "block_1x128", "block_128x128"),
         len(sys.argv) > 6 and sys.argv[6] == "relu")
