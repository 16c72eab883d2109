#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The Python module's bits do not depend on the process's floating-point mode.

A child process runs with a library preloaded that sets round-toward-zero and flushes subnormals
(FTZ and DAZ) before the interpreter starts, as a process does that loaded a -ffast-math extension
or called torch.set_flush_denormal(True); it computes decodings of every e8m0 and bf16 code,
encodings of subnormal floats, MXFP8 and NVFP4 quantization of a subnormal-heavy matrix and its
dequantization, and block-scaled GEMMs of it, and the parent compares them bit for bit with its own
results in the default mode. The child first shows that the mode took effect (numpy's own float
multiply flushes a subnormal there), so the comparison can fail.

Usage: test_fp_mode.py BUILD_PYTHON_DIR HOSTILE_LIBRARY   (the child: BUILD_PYTHON_DIR OUT.npz)
"""
import os
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, sys.argv[1])
import blockscale as bs  # noqa: E402


def results():
    rng = np.random.default_rng(11)
    out = {}
    out["decode_e8m0"] = bs.decode(np.arange(256, dtype=np.uint8), "e8m0").view(np.uint32)
    out["decode_bf16"] = bs.decode(np.arange(65536, dtype=np.uint32).astype(np.uint16), "bfloat16").view(np.uint32)
    words = rng.integers(0, 2**32, size=1 << 14, dtype=np.uint64).astype(np.uint32)
    words[::2] &= 0x807FFFFF  # every other value subnormal or zero
    x = words.view(np.float32)
    for fmt in ("e4m3", "e8m0", "bfloat16"):
        out["encode_" + fmt] = bs.encode(x, fmt, overflow="saturate")
    # Rows of subnormal values and of normal values of 2^-126 .. 2^-100 (whose scaled elements cross
    # the boundary), made from bit patterns: numpy's own float arithmetic would flush in the child.
    bits = rng.integers(0, 2**32, size=(64, 256), dtype=np.uint64).astype(np.uint32)
    bits[::2] &= 0x807FFFFF
    bits[1::2] = (bits[1::2] & 0x807FFFFF) | ((1 + bits[1::2] % 27) << 23).astype(np.uint32)
    m = bits.view(np.float32)
    for fmt, recipe in (("mxfp8_e4m3", "ocp"), ("nvfp4", None)):
        q = bs.quantize(m, fmt, recipe=recipe)
        out[fmt + "_elements"] = np.asarray(q.elements)
        out[fmt + "_scales"] = np.asarray(q.scales)
        out[fmt + "_dequantized"] = q.dequantize().view(np.uint32)
        for model in ("exact", "sm_100a", "sequential_f32"):
            out[fmt + "_gemm_" + model] = bs.gemm(q, q, model=model).view(np.uint32)
    return out


def child(path):
    tiny = np.array([2.0**-140], dtype=np.float32)
    flushed = (tiny * np.float32(1.0))[0] == 0
    np.savez(path, flushed=np.array(flushed), **results())


def main():
    if sys.argv[2].endswith(".npz"):
        child(sys.argv[2])
        return 0
    library = sys.argv[2]
    want = results()
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "hostile.npz")
        env = dict(os.environ)
        env["LD_PRELOAD"] = (library + " " + env["LD_PRELOAD"]) if env.get("LD_PRELOAD") else library
        subprocess.run([sys.executable, __file__, sys.argv[1], path], env=env, check=True)
        got = np.load(path)
        assert bool(got["flushed"]), "the preloaded library did not set flush-to-zero in the child"
        compared = 0
        for name, w in want.items():
            g = got[name]
            assert g.shape == w.shape, f"{name}: shape {g.shape} vs {w.shape}"
            bad = np.flatnonzero(g.ravel() != w.ravel())
            assert bad.size == 0, f"{name}: {bad.size} of {w.size} differ under the hostile mode, first at {bad[0]}"
            compared += w.size
    print(f"[ python fp mode ] {len(want)} results, {compared} values equal under round-toward-zero with FTZ/DAZ")
    return 0


if __name__ == "__main__":
    sys.exit(main())
