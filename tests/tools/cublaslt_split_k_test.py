#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The CPU parts of scripts/cublaslt_split_k.py: its reading of cuBLASLt's log lines (the format
cuBLASLt 13.1 writes at CUBLASLT_LOG_LEVEL=2, as logged on an H100 for torch._scaled_mm), its
shape arguments and the scale modes it asks for. The heuristic queries themselves need a GPU
(docs/conformance.md, "Split-K": "Which S").

usage: cublaslt_split_k_test.py SCRIPTS_DIR
"""
import argparse
import importlib.util
import os
import sys

HEAD = "[2026-11-22 23:54:35][cublasLt][449][Trace][cublasLtMatmul] "
SPLIT = (HEAD + "A=0X7FDCDD800000 Adesc=[type=R_8F_E4M3 rows=16384 cols=256 ld=16384] B=0X7FDCBDA00000 "
         "Bdesc=[type=R_8F_E4M3 rows=16384 cols=64 ld=16384] C=0X7FDCDD800000 Cdesc=[type=R_32F rows=256 cols=64 "
         "ld=256] D=0X7FDCBDB00400 Ddesc=[type=R_32F rows=256 cols=64 ld=256] computeDesc=[computeType=COMPUTE_32F "
         "scaleType=R_32F transa=OP_T aScalePointer=0x7fdcbdb00200 bScalePointer=0x7fdcbdb00000 "
         "fastAccumulationFlag=1] algo=[algoId=66 tile=MATMUL_TILE_64x32 stages=MATMUL_STAGES_128xAUTO "
         "reductionScheme=REDUCTION_SCHEME_COMPUTE_TYPE numSplitsK=6 customOption=3 clusterShape=CLUSTER_SHAPE_4x2x1] "
         "workSpace=0X7FDCBDE00000 workSpaceSizeInBytes=1048576 beta=0 outOfPlace=1 stream=0X0")
UNSPLIT = (HEAD + "A=0X7F Adesc=[type=R_8F_E4M3 rows=4096 cols=4096 ld=4096] B=0X7F Bdesc=[type=R_8F_E4M3 rows=4096 "
           "cols=16 ld=4096] C=0X7F Cdesc=[type=R_16BF rows=4096 cols=16 ld=4096] D=0X7F Ddesc=[type=R_16BF "
           "rows=4096 cols=16 ld=4096] computeDesc=[computeType=COMPUTE_32F scaleType=R_32F transa=OP_T "
           "aScalePointer=0x7f bScalePointer=0x7f aScaleMode=BLK128x128_32F bScaleMode=VEC128_32F] "
           "algo=[algoId=66 tile=MATMUL_TILE_128x128 stages=MATMUL_STAGES_128xAUTO customOption=4 "
           "clusterShape=CLUSTER_SHAPE_1x1x1] workSpace=0X7F workSpaceSizeInBytes=1048576 beta=0 outOfPlace=1 stream=0X0")


def main():
    spec = importlib.util.spec_from_file_location("cublaslt_split_k", os.path.join(sys.argv[1], "cublaslt_split_k.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    failures = []

    def expect(what, got, want):
        if got != want:
            failures.append(f"{what}: got {got!r}, want {want!r}")

    r = mod.parse_log_line(SPLIT)
    expect("split line", r, {"m": 256, "n": 64, "k": 16384, "d_type": "R_32F", "fast_accum": True,
                             "a_scale_mode": "SCALAR_32F", "b_scale_mode": "SCALAR_32F", "algo": 66, "tile": "64x32",
                             "split_k": 6})
    r = mod.parse_log_line(UNSPLIT)
    expect("unsplit line", (r["m"], r["n"], r["k"], r["d_type"], r["fast_accum"], r["a_scale_mode"], r["b_scale_mode"],
                            r["tile"], r["split_k"]),
           (4096, 16, 4096, "R_16BF", False, "BLK128x128_32F", "VEC128_32F", "128x128", 1))
    expect("other log lines", mod.parse_log_line("[2026-11-22][cublasLt][1][Api][cublasLtMatmulDescCreate] x"), None)
    try:
        mod.parse_log_line(HEAD + "Adesc=[type=R_8F_E4M3 rows=1 cols=2 ld=1] (truncated)")
        failures.append("a truncated Trace line was accepted")
    except ValueError as e:
        expect("truncated line error", "unrecognised cuBLASLt log line" in str(e), True)

    expect("shape", mod.shape("64x256x16384"), (64, 256, 16384))
    for bad in ("64x256", "64x256x", "ax1x2", "1x2x3x4"):
        try:
            mod.shape(bad)
            failures.append(f"shape '{bad}' was accepted")
        except argparse.ArgumentTypeError:
            pass

    # torch hands cuBLASLt its weights as A: the 128x128 blocks are A's in torch's call and B's in
    # blockscale's cuBLASLt study (src/harness/cublaslt.cpp).
    expect("torch 128x128", mod.scale_modes("block_128x128", "torch"), (mod.SCALE_BLK128x128_32F, mod.SCALE_VEC128_32F))
    expect("cublaslt 128x128", mod.scale_modes("block_128x128", "cublaslt"), (mod.SCALE_VEC128_32F, mod.SCALE_BLK128x128_32F))
    expect("1x128", mod.scale_modes("block_1x128", "torch"), (mod.SCALE_VEC128_32F, mod.SCALE_VEC128_32F))
    expect("rowwise", mod.scale_modes("rowwise", "torch"), (mod.SCALE_OUTER_VEC_32F, mod.SCALE_OUTER_VEC_32F))
    expect("tensor", mod.scale_modes("tensor_fast", "torch"), None)

    for f in failures:
        print("FAIL:", f)
    print(f"cublaslt_split_k: {'FAILED' if failures else 'passed'} ({len(failures)} failures)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
