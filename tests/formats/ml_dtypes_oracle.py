#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""blockscale's ml_dtypes preset against ml_dtypes itself (PyPI, pinned by scripts/setup.sh).

Compares, for every ml_dtypes type blockscale has (e4m3fn, e5m2, e2m3fn, e3m2fn, e2m1fn, e8m0fnu):
  * fp32 inputs: every pattern i * stride (stride 1 = all 2^32) through numpy `astype`, which in
    ml_dtypes converts float32 directly (one rounding);
  * every fp16 input (astype from np.float16: ml_dtypes' ConvertImpl<half, T>);
  * random doubles through the scalar constructor (Python floats convert directly from double;
    numpy float64 arrays would go through float32, which is a different, double-rounding path);
  * the value types' conversion between formats (types.h, exmy<F>(exmy<G>)) on every code of each
    source against ml_dtypes' direct cast (`astype` between its types, bfloat16 and numpy float16
    included; ml_dtypes has none between e8m0 and the other 8-bit and narrower types).
Exit 0 when everything matches, 1 on a mismatch, 77 (ctest SKIP_RETURN_CODE) when ml_dtypes or
numpy is missing.
"""
import argparse
import ctypes
import sys
import warnings

warnings.filterwarnings("ignore", category=RuntimeWarning)  # NaN/overflow casts are the point

try:
    import numpy as np
    import ml_dtypes
except ImportError as e:  # pragma: no cover
    print(f"SKIP: {e} (scripts/setup.sh installs numpy and ml_dtypes)")
    sys.exit(77)

TYPES = {
    "float8_e4m3fn": ml_dtypes.float8_e4m3fn,
    "float8_e5m2": ml_dtypes.float8_e5m2,
    "float6_e2m3fn": ml_dtypes.float6_e2m3fn,
    "float6_e3m2fn": ml_dtypes.float6_e3m2fn,
    "float4_e2m1fn": ml_dtypes.float4_e2m1fn,
    "float8_e8m0fnu": ml_dtypes.float8_e8m0fnu,
}


def call_shim(lib, fn, dst, src, arr, out_dtype):
    """The shim's entry point `fn` (bs_convert_ml_dtypes or bs_value_type_cast) on arr."""
    out = np.empty(arr.size, dtype=out_dtype)
    rc = getattr(lib, fn)(dst.encode(), src.encode(), arr.ctypes.data_as(ctypes.c_void_p),
                          ctypes.c_size_t(arr.size), out.ctypes.data_as(ctypes.c_void_p))
    if rc != 0:
        raise RuntimeError(f"{fn}({dst}, {src}) failed")
    return out


def ours(lib, dst, src, arr):
    return call_shim(lib, "bs_convert_ml_dtypes", dst, src, arr, np.uint8)


# The value types (types.h) whose conversions follow ml_dtypes, with their code widths.
VALUE_TYPES = {name: (t, bits) for name, t, bits in [
    ("float8_e4m3fn", ml_dtypes.float8_e4m3fn, 8), ("float8_e5m2", ml_dtypes.float8_e5m2, 8),
    ("float6_e2m3fn", ml_dtypes.float6_e2m3fn, 6), ("float6_e3m2fn", ml_dtypes.float6_e3m2fn, 6),
    ("float4_e2m1fn", ml_dtypes.float4_e2m1fn, 4), ("float8_e8m0fnu", ml_dtypes.float8_e8m0fnu, 8),
    ("bfloat16", ml_dtypes.bfloat16, 16), ("float16", np.float16, 16)]}


def ours_cast(lib, dst, src, words):
    return call_shim(lib, "bs_value_type_cast", dst, src, words, np.uint32)


def check_casts_between_types(lib):
    """Every code of every source type, cast to every other type; returns the mismatches."""
    bad = pairs = 0
    for src, (st, sbits) in VALUE_TYPES.items():
        codes = np.arange(1 << sbits, dtype=np.uint32)
        x = codes.astype(np.uint16 if sbits == 16 else np.uint8).view(st)
        for dst, (dt, dbits) in VALUE_TYPES.items():
            if dst == src:
                continue
            try:
                want = x.astype(dt).view(np.uint16 if dbits == 16 else np.uint8).astype(np.uint32)
            except TypeError:  # no direct cast in ml_dtypes (e8m0 with the narrow types)
                continue
            bad += compare(f"{src} -> {dst}", want, ours_cast(lib, dst, src, codes), codes, lambda b: f"0x{int(b):x}")
            pairs += 1
    print(f"casts between value types: {pairs} pairs, every source code, {bad} mismatches")
    if pairs < 40:
        print(f"  only {pairs} pairs have a direct cast in this ml_dtypes (46 in 0.6.0)")
        bad += 1
    return bad


def compare(name, want, got, inputs, fmt):
    bad = np.nonzero(want != got)[0]
    if bad.size:
        for i in bad[:5]:
            print(f"  MISMATCH {name}: input {fmt(inputs[i])}: ml_dtypes 0x{want[i]:02x}, blockscale 0x{got[i]:02x}")
    return int(bad.size)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True)
    ap.add_argument("--stride", type=int, default=1)
    ap.add_argument("--doubles", type=int, default=20000)
    args = ap.parse_args()
    print(f"ml_dtypes {ml_dtypes.__version__}, numpy {np.__version__}, fp32 stride {args.stride}")
    lib = ctypes.CDLL(args.lib)
    lib.bs_convert_ml_dtypes.restype = ctypes.c_int
    lib.bs_value_type_cast.restype = ctypes.c_int
    total_bad = 0
    chunk = 1 << 24
    rng = np.random.default_rng(20261121)
    for name, t in TYPES.items():
        bad = checked = 0
        # The 8-bit codes of fp6/fp4 types hold the value in the low bits.
        for start in range(0, 1 << 32, chunk * args.stride):
            idx = np.arange(start, min(start + chunk * args.stride, 1 << 32), args.stride, dtype=np.uint64)
            bits = idx.astype(np.uint32)
            x = bits.view(np.float32)
            want = x.astype(t).view(np.uint8)
            got = ours(lib, name, "float32", x)
            bad += compare(name + " f32", want, got, bits, lambda b: f"0x{int(b):08x}")
            checked += x.size
        h = np.arange(0, 1 << 16, dtype=np.uint32).astype(np.uint16)
        want = h.view(np.float16).astype(t).view(np.uint8)
        bad += compare(name + " f16", want, ours(lib, name, "float16", h), h, lambda b: f"0x{int(b):04x}")
        # Doubles: random bit patterns and values across the type's range, scalar constructor.
        ds = np.concatenate([rng.integers(0, 1 << 63, args.doubles, dtype=np.uint64).view(np.float64),
                             np.ldexp(rng.random(args.doubles) + 1.0, rng.integers(-140, 130, args.doubles)) *
                             np.where(rng.random(args.doubles) < 0.5, -1.0, 1.0)])
        if name == "float8_e8m0fnu":
            # ml_dtypes 0.6.0 bug, not reproduced (see presets.h): doubles in [1.5 * 2^128, 2^129)
            # round to code 256, which wraps to 0x00. Check that the bug is what we say it is and
            # that blockscale gives NaN there, then leave those inputs out of the comparison.
            wrap = np.array([1.5 * 2.0**128, 1.9 * 2.0**128, 1.999 * 2.0**128])
            wrap_ml = [int(np.array(t(float(d))).view(np.uint8)) for d in wrap]
            wrap_ours = ours(lib, name, "float64", wrap)
            if wrap_ml != [0, 0, 0] or list(wrap_ours) != [0xFF, 0xFF, 0xFF]:
                print(f"  UNEXPECTED e8m0 wrap-around behaviour: ml_dtypes {wrap_ml}, blockscale {list(wrap_ours)}")
                bad += 1
            ds = ds[~((ds >= 1.5 * 2.0**128) & (ds < 2.0**129))]  # negatives are NaN before rounding
        want = np.array([np.array(t(float(d))).view(np.uint8) for d in ds], dtype=np.uint8)
        bad += compare(name + " f64", want, ours(lib, name, "float64", ds), ds, lambda d: repr(float(d)))
        print(f"{name}: {checked} fp32 + 65536 fp16 + {ds.size} f64 inputs, {bad} mismatches")
        total_bad += bad
    total_bad += check_casts_between_types(lib)
    return 1 if total_bad else 0


if __name__ == "__main__":
    sys.exit(main())
