#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Which split-K count S will cuBLASLt (and torch._scaled_mm) use for an fp8 GEMM on this GPU?

`blockscale gemm --split-k S` and `library_fp8_gemm(..., split_k)` need the split count of the
library call being modelled (docs/conformance.md, "Split-K"). It is the choice of cuBLASLt's
heuristic, which depends on the GPU (an H100 and an H200 differ), the workspace, the D type and the
scaling recipe, and follows no simple rule of the shape. This script asks the heuristic itself,
through cuBLASLt's C API (ctypes; no kernel runs), and can check that torch runs what it says.

  cublaslt_split_k.py query [MxNxK ...] [--shapes-file FILE] [--library torch|cublaslt]
                            [--recipes R,...] [--outs f32,bf16] [--elements AxB] [--workspace-mib W]
                            [--json FILE]
      For each shape (D = A B^T, A: M x K, B: N x K, e4m3 unless --elements says e4m3xe5m2 or
      e5m2xe4m3) and recipe, the heuristic's first
      algorithm: tile, split count S, reduction scheme. `--library torch` (the default) asks what
      torch._scaled_mm asks: the exchanged problem (cuBLASLt m = N, n = M) with torch's 1 MiB
      workspace; `--library cublaslt` asks for A B^T as blockscale's cuBLASLt study calls it
      (src/harness/cublaslt.cpp: m = M, n = N) with W MiB (default 64). Shapes from a file (lines
      "M N K") are not printed one by one: the summary counts the split counts per recipe.
  cublaslt_split_k.py check SHAPES_FILE [--json FILE]
      Calls torch._scaled_mm for every shape of the file (lines "M N K"), recipe and D type with
      cuBLASLt's log on (CUBLASLT_LOG_LEVEL=2), reads the algorithm each call ran from the log
      and compares it with `query --library torch`. Exit status 1 on any disagreement.

Recipes (torch names): tensor, tensor_fast (use_fast_accum), rowwise, block_1x128 (1x128 x 1x128),
block_128x128 (1x128 activations x 128x128 weights). Needs a CUDA GPU and cuBLASLt (the device
machine; nothing here runs in CI except the log parser, tests/tools/cublaslt_split_k_test.py).
"""
import argparse
import ctypes
import glob
import json
import os
import re
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # probe_split_k, beside this script

RECIPES = ["tensor", "tensor_fast", "rowwise", "block_1x128", "block_128x128"]

# cuBLASLt enums (cublasLt.h, CUDA 13.0).
CUBLAS_COMPUTE_32F = 68
CUDA_R_32F, CUDA_R_16BF, CUDA_R_8F_E4M3, CUDA_R_8F_E5M2 = 0, 14, 28, 29
ELEMENT = {"e4m3": CUDA_R_8F_E4M3, "e5m2": CUDA_R_8F_E5M2}
CUBLAS_OP_N, CUBLAS_OP_T = 0, 1
DESC_TRANSA, DESC_TRANSB, DESC_A_SCALE_POINTER, DESC_B_SCALE_POINTER = 3, 4, 17, 18
DESC_FAST_ACCUM, DESC_A_SCALE_MODE, DESC_B_SCALE_MODE = 25, 31, 32
PREF_MAX_WORKSPACE_BYTES = 1
CONFIG_ID, CONFIG_TILE_ID, CONFIG_SPLITK_NUM, CONFIG_REDUCTION_SCHEME = 0, 1, 2, 3
SCALE_OUTER_VEC_32F, SCALE_VEC128_32F, SCALE_BLK128x128_32F = 3, 4, 5


def scale_modes(recipe, library):
    """(A mode, B mode) of cuBLASLt's A and B for a recipe, or None for tensor-wise scales. torch
    hands cuBLASLt its second operand (the weights) as A, so the 128x128 blocks are A's there."""
    if recipe.startswith("tensor"):
        return None
    if recipe == "rowwise":
        return SCALE_OUTER_VEC_32F, SCALE_OUTER_VEC_32F
    if recipe == "block_1x128":
        return SCALE_VEC128_32F, SCALE_VEC128_32F
    if library == "torch":
        return SCALE_BLK128x128_32F, SCALE_VEC128_32F
    return SCALE_VEC128_32F, SCALE_BLK128x128_32F


def tile_names():
    """cublasLtMatmulTile_t values to "RxC" (from the header when present, else the CUDA 13.0 list
    up to the tiles the fp8 kernels report)."""
    for header in glob.glob("/usr/local/cuda*/include/cublasLt.h"):
        names = {}
        for line in open(header):
            m = re.search(r"CUBLASLT_MATMUL_TILE_(\d+x\d+) = (\d+)", line)
            if m:
                names[int(m.group(2))] = m.group(1)
        if names:
            return names
    return {}


class CublasLt:
    """The few cuBLASLt calls a heuristic query needs."""

    class Heuristic(ctypes.Structure):
        _fields_ = [("algo", ctypes.c_uint64 * 8), ("workspaceSize", ctypes.c_size_t), ("state", ctypes.c_int),
                    ("wavesCount", ctypes.c_float), ("reserved", ctypes.c_int * 4)]

    def __init__(self):
        self.lib = self._load()
        self.lib.cublasLtGetVersion.restype = ctypes.c_size_t
        self.version = int(self.lib.cublasLtGetVersion())
        self.handle = ctypes.c_void_p()
        self._ok(self.lib.cublasLtCreate(ctypes.byref(self.handle)), "cublasLtCreate")
        self.tiles = tile_names()

    @staticmethod
    def _load():
        # The copy the process already has (torch's), else the toolkit's, else the loader's search.
        for line in open("/proc/self/maps"):
            if "libcublasLt.so" in line:
                return ctypes.CDLL(line.split()[-1])
        for path in sorted(glob.glob("/usr/local/cuda*/lib64/libcublasLt.so*")) + ["libcublasLt.so.13", "libcublasLt.so"]:
            try:
                return ctypes.CDLL(path)
            except OSError:
                continue
        sys.exit("cuBLASLt not found (install the CUDA toolkit or PyTorch with CUDA)")

    @staticmethod
    def _ok(status, call):
        if status != 0:
            raise RuntimeError(f"{call} failed: cublasStatus {status}")

    def _set(self, fn, obj, attr, value):
        self._ok(fn(obj, attr, ctypes.byref(value), ctypes.sizeof(value)), fn.__name__)

    def query(self, recipe, out, m, n, k, workspace_bytes, library, a_element="e4m3", b_element="e4m3"):
        """The heuristic's first algorithm for D (m x n) = op(A) B, A: k x m transposed, B: k x n
        (cuBLASLt's A and B, of the element types named)."""
        L = self.lib
        op, la, lb, ld, pref = (ctypes.c_void_p() for _ in range(5))
        self._ok(L.cublasLtMatmulDescCreate(ctypes.byref(op), CUBLAS_COMPUTE_32F, CUDA_R_32F), "cublasLtMatmulDescCreate")
        try:
            setd = L.cublasLtMatmulDescSetAttribute
            self._set(setd, op, DESC_TRANSA, ctypes.c_int(CUBLAS_OP_T))
            self._set(setd, op, DESC_TRANSB, ctypes.c_int(CUBLAS_OP_N))
            if recipe == "tensor_fast":
                self._set(setd, op, DESC_FAST_ACCUM, ctypes.c_int8(1))
            # Any non-null device pointers: the heuristic reads none of them.
            self._set(setd, op, DESC_A_SCALE_POINTER, ctypes.c_void_p(256))
            self._set(setd, op, DESC_B_SCALE_POINTER, ctypes.c_void_p(256))
            modes = scale_modes(recipe, library)
            if modes:
                self._set(setd, op, DESC_A_SCALE_MODE, ctypes.c_int(modes[0]))
                self._set(setd, op, DESC_B_SCALE_MODE, ctypes.c_int(modes[1]))
            mk = L.cublasLtMatrixLayoutCreate
            u64 = ctypes.c_uint64
            self._ok(mk(ctypes.byref(la), ELEMENT[a_element], u64(k), u64(m), ctypes.c_int64(k)), "cublasLtMatrixLayoutCreate")
            self._ok(mk(ctypes.byref(lb), ELEMENT[b_element], u64(k), u64(n), ctypes.c_int64(k)), "cublasLtMatrixLayoutCreate")
            dtype = CUDA_R_16BF if out == "bf16" else CUDA_R_32F
            self._ok(mk(ctypes.byref(ld), dtype, u64(m), u64(n), ctypes.c_int64(m)), "cublasLtMatrixLayoutCreate")
            self._ok(L.cublasLtMatmulPreferenceCreate(ctypes.byref(pref)), "cublasLtMatmulPreferenceCreate")
            self._set(L.cublasLtMatmulPreferenceSetAttribute, pref, PREF_MAX_WORKSPACE_BYTES, ctypes.c_uint64(workspace_bytes))
            result = self.Heuristic()
            found = ctypes.c_int(0)
            status = L.cublasLtMatmulAlgoGetHeuristic(self.handle, op, la, lb, ld, ld, pref, 1, ctypes.byref(result),
                                                      ctypes.byref(found))
            if status != 0 or found.value < 1:
                return {"supported": False, "status": int(status)}
            get = L.cublasLtMatmulAlgoConfigGetAttribute

            def config(attr):
                v, written = ctypes.c_int32(0), ctypes.c_size_t(0)
                self._ok(get(ctypes.byref(result.algo), attr, ctypes.byref(v), ctypes.sizeof(v), ctypes.byref(written)),
                         "cublasLtMatmulAlgoConfigGetAttribute")
                return v.value

            tile = config(CONFIG_TILE_ID)
            return {"supported": True, "algo": config(CONFIG_ID), "tile": self.tiles.get(tile, str(tile)),
                    "split_k": max(1, config(CONFIG_SPLITK_NUM)), "reduction_scheme": config(CONFIG_REDUCTION_SCHEME),
                    "workspace_bytes": int(result.workspaceSize)}
        finally:
            for obj, destroy in ((pref, L.cublasLtMatmulPreferenceDestroy), (ld, L.cublasLtMatrixLayoutDestroy),
                                 (lb, L.cublasLtMatrixLayoutDestroy), (la, L.cublasLtMatrixLayoutDestroy),
                                 (op, L.cublasLtMatmulDescDestroy)):
                if obj.value:
                    destroy(obj)


def torch_query(lt, recipe, out, m, n, k, a_element="e4m3", b_element="e4m3"):
    """What torch._scaled_mm(A (M x K), B^T) asks cuBLASLt: the exchanged problem (torch's B is
    cuBLASLt's A), 1 MiB workspace."""
    return lt.query(recipe, out, n, m, k, 1 << 20, "torch", b_element, a_element)


def parse_log_line(line):
    """One `[Trace][cublasLtMatmul]` line of cuBLASLt's log: the problem and the algorithm that ran.
    Returns None for other lines. m, n, k are cuBLASLt's (D is m x n)."""
    if "[cublasLtMatmul]" not in line or "[Trace]" not in line:
        return None
    a = re.search(r"Adesc=\[type=(\S+) rows=(\d+) cols=(\d+)", line)
    b = re.search(r"Bdesc=\[type=(\S+) rows=(\d+) cols=(\d+)", line)
    d = re.search(r"Ddesc=\[type=(\S+) rows=(\d+) cols=(\d+)", line)
    algo = re.search(r"algo=\[algoId=(\d+) tile=MATMUL_TILE_(\d+x\d+)", line)
    if not (a and b and d and algo):
        raise ValueError("unrecognised cuBLASLt log line: " + line[:200])
    splits = re.search(r"numSplitsK=(\d+)", line)
    a_mode = re.search(r"aScaleMode=(\w+)", line)
    b_mode = re.search(r"bScaleMode=(\w+)", line)
    return {"m": int(d.group(2)), "n": int(d.group(3)), "k": int(a.group(2)), "d_type": d.group(1),
            "fast_accum": "fastAccumulationFlag=1" in line, "a_scale_mode": a_mode.group(1) if a_mode else "SCALAR_32F",
            "b_scale_mode": b_mode.group(1) if b_mode else "SCALAR_32F", "algo": int(algo.group(1)),
            "tile": algo.group(2), "split_k": int(splits.group(1)) if splits else 1}


def torch_call(torch, recipe, out, m, n, k):
    """torch._scaled_mm on zeros (the heuristic does not look at values), with unit scales in the
    layouts torch takes (scripts/probe_split_k.py). Returns None, or why the call was refused."""
    from probe_split_k import scales_for, unit_scales  # imports torch: check mode only
    dev = torch.device("cuda")
    a = torch.zeros(m, k, device=dev).to(torch.float8_e4m3fn)
    b = torch.zeros(n, k, device=dev).to(torch.float8_e4m3fn)
    sa, sb = scales_for(recipe, m, n, k // 128, *unit_scales(recipe, m, n, k // 128))
    kwargs = {"use_fast_accum": True} if recipe == "tensor_fast" else {}
    try:
        torch._scaled_mm(a, b.t(), sa.to(dev), sb.to(dev), out_dtype=torch.bfloat16 if out == "bf16" else torch.float32,
                         **kwargs)
        torch.cuda.synchronize()
        return None
    except RuntimeError as e:
        return str(e).splitlines()[0][:160]


def shape(text):
    m = re.fullmatch(r"(\d+)x(\d+)x(\d+)", text)
    if not m:
        raise argparse.ArgumentTypeError(f"a shape is MxNxK, got '{text}'")
    return tuple(int(v) for v in m.groups())


def gpu_name():
    try:
        import torch
        return torch.cuda.get_device_name(0)
    except Exception:  # torch is optional for queries
        return "unknown (no torch)"


def main_query(args):
    shapes = list(args.shapes)
    if args.shapes_file:
        shapes += [tuple(int(v) for v in line.split()) for line in open(args.shapes_file) if line.strip()]
    if not shapes:
        sys.exit("no shapes: give MxNxK arguments or --shapes-file")
    lt = CublasLt()
    rows = []
    ws = (1 << 20) if args.library == "torch" else args.workspace_mib << 20
    a_element, b_element = args.elements.split("x")
    print(f"cuBLASLt {lt.version}, {args.library} call, workspace {ws >> 20} MiB, {a_element} x {b_element}")
    verbose = not args.shapes_file
    if verbose:
        print(f"{'M x N x K':>22} {'recipe':>14} {'D':>5} {'tile':>8} {'split-K':>8}")
    for (m, n, k) in shapes:
        for recipe in args.recipes.split(","):
            for out in args.outs.split(","):
                if args.library == "torch":
                    r = torch_query(lt, recipe, out, m, n, k, a_element, b_element)
                else:
                    r = lt.query(recipe, out, m, n, k, ws, "cublaslt", a_element, b_element)
                rows.append(dict(r, m=m, n=n, k=k, recipe=recipe, out=out))
                what = f"{r['tile']:>8} {r['split_k']:>8}" if r["supported"] else f"not supported (status {r['status']})"
                if verbose:
                    print(f"{f'{m} x {n} x {k}':>22} {recipe:>14} {out:>5} {what}")
    if not verbose:
        for recipe in args.recipes.split(","):
            for out in args.outs.split(","):
                mine = [r for r in rows if r["recipe"] == recipe and r["out"] == out]
                counts = {}
                for r in mine:
                    key = r["split_k"] if r["supported"] else "unsupported"
                    counts[key] = counts.get(key, 0) + 1
                split = sum(v for key, v in counts.items() if key != "unsupported" and key > 1)
                print(f"{recipe:>14} {out:>5}: {len(mine)} shapes, {split} split, "
                      f"{counts.get('unsupported', 0)} unsupported, largest S {max((r['split_k'] for r in mine if r['supported']), default=0)}")
    if args.json:
        json.dump({"cublaslt_version": lt.version, "library": args.library, "workspace_bytes": ws, "gpu": gpu_name(),
                   "elements": args.elements, "queries": rows}, open(args.json, "w"), indent=1)


def main_check(args):
    log = tempfile.NamedTemporaryFile(prefix="cublaslt_", suffix=".log", delete=False).name
    # The log is configured when cuBLASLt is first used, so before torch touches it.
    os.environ["CUBLASLT_LOG_LEVEL"] = "2"
    os.environ["CUBLASLT_LOG_FILE"] = log
    import torch
    shapes = [tuple(int(v) for v in line.split()) for line in open(args.shapes_file) if line.strip()]
    calls = []
    for (m, n, k) in shapes:
        for out in ("f32", "bf16"):
            for recipe in RECIPES:
                refused = torch_call(torch, recipe, out, m, n, k)
                calls.append({"m": m, "n": n, "k": k, "recipe": recipe, "out": out, "refused": refused})
    lt = CublasLt()  # after the calls: the copy of cuBLASLt that torch loaded
    ran = [line for line in (parse_log_line(x) for x in open(log)) if line]
    done = [c for c in calls if c["refused"] is None]
    if len(ran) != len(done):
        sys.exit(f"{len(done)} calls ran but the log holds {len(ran)} cuBLASLt calls")
    agree, disagree = 0, []
    for c, r in zip(done, ran):
        if (r["m"], r["n"], r["k"]) != (c["n"], c["m"], c["k"]):
            sys.exit(f"log out of step with the calls at {c}: {r}")
        q = torch_query(lt, c["recipe"], c["out"], c["m"], c["n"], c["k"])
        c.update(ran_tile=r["tile"], ran_split_k=r["split_k"], query_tile=q.get("tile"), query_split_k=q.get("split_k"))
        if q["supported"] and q["tile"] == r["tile"] and q["split_k"] == r["split_k"]:
            agree += 1
        else:
            disagree.append(c)
    split = sum(1 for c in done if c["ran_split_k"] > 1)
    print(f"{gpu_name()}, cuBLASLt {lt.version}, torch {torch.__version__}: {len(calls)} calls, {len(done)} ran "
          f"({split} of them split K), {len(calls) - len(done)} refused by torch; the query agrees with the algorithm "
          f"that ran (tile and split count) on {agree} of {len(done)}")
    for c in disagree[:10]:
        print("  disagrees:", c)
    if args.json:
        json.dump({"gpu": gpu_name(), "cublaslt_version": lt.version, "torch": torch.__version__, "calls": len(calls),
                   "ran": len(done), "split": split, "agree": agree, "disagree": disagree,
                   "split_counts": sorted({c["ran_split_k"] for c in done})}, open(args.json, "w"), indent=1)
    os.unlink(log)
    return 0 if not disagree else 1


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="mode", required=True)
    q = sub.add_parser("query")
    q.add_argument("shapes", nargs="*", type=shape)
    q.add_argument("--shapes-file")
    q.add_argument("--library", choices=["torch", "cublaslt"], default="torch")
    q.add_argument("--recipes", default=",".join(RECIPES))
    q.add_argument("--outs", default="f32,bf16")
    q.add_argument("--elements", choices=["e4m3xe4m3", "e4m3xe5m2", "e5m2xe4m3"], default="e4m3xe4m3")
    q.add_argument("--workspace-mib", type=int, default=64)
    q.add_argument("--json")
    c = sub.add_parser("check")
    c.add_argument("shapes_file")
    c.add_argument("--json")
    args = p.parse_args()
    if args.mode == "query":
        for r in args.recipes.split(","):
            if r not in RECIPES:
                p.error(f"unknown recipe '{r}' (one of {', '.join(RECIPES)})")
        for o in args.outs.split(","):
            if o not in ("f32", "bf16"):
                p.error(f"unknown D type '{o}' (f32 or bf16)")
        return main_query(args)
    return main_check(args)


if __name__ == "__main__":
    try:
        sys.exit(main())
    except RuntimeError as e:  # no GPU, or a cuBLASLt call refused
        sys.exit(f"cublaslt_split_k.py: {e} (this needs a CUDA GPU and its driver)")
