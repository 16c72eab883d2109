#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""`blockscale convert` against ml_dtypes 0.6.0 and against CUDA 13.0's documented inputs.

The conversions themselves are checked exhaustively elsewhere (tests/formats: CUDA's host headers
and ml_dtypes as oracles); this checks what the command feeds them. A VALUE is a double:
  * `ml_dtypes` rows give what NumPy gives for np.array([VALUE]).astype(T), which casts a float64
    array through float32: checked against ml_dtypes itself on doubles that are not floats (ties
    of the double that are not ties of its float, values between floats, 1e-300);
  * `cuda float` rows model the float-input functions (__nv_cvt_float_to_*), which see
    float(VALUE); `cuda double` rows __nv_cvt_double_to_*, which see VALUE: pinned cases where the
    two differ (2.6250000000001 to e4m3 is 0x42 from the float, 0x43 from the double; a negative
    NaN is 0x7F from the float and 0xFF from the double);
  * f16 and bf16 have `cuda float` rows in all four roundings (__float2half_rn/rz/ru/rd);
  * every input label reads back as the double given (2.6250000000001 is not shown as 2.625).

usage: cli_convert_test.py BLOCKSCALE
"""
import json
import math
import os
import subprocess
import sys

import numpy as np

# blockscale's format names and their ml_dtypes types: the preset oracle's table.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "formats"))
from ml_dtypes_oracle import TYPES as ML_TYPES  # noqa: E402


def text(v):
    """v as the command reads it back exactly (repr drops a NaN's sign)."""
    if math.isnan(v):
        return "-nan" if math.copysign(1.0, v) < 0 else "nan"
    return repr(v)


def convert(tool, fmt, preset, values):
    r = subprocess.run([tool, "convert", "--format", fmt, "--preset", preset, "--json"] + [text(v) for v in values],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def main():
    tool = sys.argv[1]
    rng = np.random.default_rng(11)
    # Doubles that are not floats: a float's neighbourhood (1 to 2^28 double ulps off), so that the
    # float rounding decides some ties, plus edge cases.
    base = (rng.standard_normal(300) * 2.0 ** rng.integers(-12, 10, 300)).astype(np.float32).astype(np.float64)
    offsets = rng.integers(1, 2 ** 28, 300) * np.where(rng.integers(0, 2, 300) == 1, 1, -1)
    values = [float(np.nextafter(b, np.inf) if o == 0 else b + o * np.spacing(b)) for b, o in zip(base, offsets)]
    values += [2.6250000000001, 0.2500000001, 1e-300, -1e-300, 1e300, 0.1, 448.00000000001, 3.0000000001]
    checked = 0
    for fmt, T in ML_TYPES.items():
        rows = convert(tool, fmt, "ml_dtypes", values)
        default = [row for row in rows if row["mode"] == "ml_dtypes"]
        assert len(default) == len(values), (fmt, len(default))
        for v, row in zip(values, default):
            assert float(row["input"]) == v, (fmt, row["input"], v)
            want = int(np.array([v], dtype=np.float64).astype(T).view(np.uint8)[0])
            assert row["code"] == want, (fmt, v, row["code"], want)
            checked += 1
    # CUDA: float and double inputs of the same value (cuda_fp8.h / cuda_fp6.h / cuda_fp4.h, CUDA
    # 13.0 host code; the values below were taken from those functions).
    pinned = [
        ("e4m3", "cuda float nearest_even saturate", 2.6250000000001, 0x42),
        ("e4m3", "cuda double nearest_even saturate", 2.6250000000001, 0x43),
        ("e2m3", "cuda float nearest_even saturate", 2.6250000000001, 0x12),
        ("e2m3", "cuda double nearest_even saturate", 2.6250000000001, 0x13),
        ("e2m1", "cuda float nearest_even saturate", 0.2500000001, 0x0),
        ("e2m1", "cuda double nearest_even saturate", 0.2500000001, 0x1),
        ("e4m3", "cuda float nearest_even saturate", float("-nan"), 0x7F),
        ("e4m3", "cuda double nearest_even saturate", float("-nan"), 0xFF),
    ]
    for fmt, mode, v, want in pinned:
        rows = [row for row in convert(tool, fmt, "cuda", [v]) if row["mode"] == mode]
        assert len(rows) == 1, (fmt, mode, rows)
        assert rows[0]["code"] == want, (fmt, mode, v, rows[0]["code"], want)
    # f16 / bf16: the four roundings of __float2half_* and __float2bfloat16_*, from float(VALUE).
    for fmt in ("float16", "bfloat16"):
        rows = convert(tool, fmt, "cuda", [2.6250000000001])
        modes = sorted(row["mode"] for row in rows)
        assert modes == sorted("cuda float " + r + " ieee" for r in ("nearest_even", "toward_zero", "upward", "downward")), modes
    f16 = [row for row in convert(tool, "float16", "cuda", values) if row["mode"] == "cuda float nearest_even ieee"]
    for v, row in zip(values, f16):
        want = int(np.array([v], dtype=np.float32).astype(np.float16).view(np.uint16)[0])
        if np.isnan(np.float16(np.float32(v))):
            want = 0x7FFF  # CUDA's canonical NaN
        assert row["code"] == want, (v, row["code"], want)
        checked += 1
    # A value outside double's range is converted as what it reads as, with a note.
    r = subprocess.run([tool, "convert", "--format", "e4m3", "--preset", "ieee", "1e999", "1e-400"], capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr
    assert "1e999 is outside the range of a double and reads as inf" in r.stderr, r.stderr
    assert "1e-400 is outside the range of a double and reads as 0" in r.stderr, r.stderr
    print(f"blockscale convert: {checked} ml_dtypes and float16 rows equal NumPy's casts; {len(pinned)} CUDA float / "
          "double cases as the headers give them")


if __name__ == "__main__":
    main()
