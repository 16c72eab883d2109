#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The committed golden files of fp8 with fp32 scales against oracles that share no code with
blockscale.

* Quantization (golden/quantization/fp8_*.txt): each case's scale and element codes recomputed with
  numpy's fp32 arithmetic and ml_dtypes' casts, from the recipes' published code:
  - DeepGEMM (deep_gemm/utils/math.py): sf = max(g, fp32(1e-4)) * fp32(1/448), where PyTorch's CUDA
    division by a scalar multiplies by its reciprocal; ceil_to_ue8m0 rounds sf up to a power of
    two; q = e4m3(x * fp32(1/sf)).
  - torchao (torchao.float8): scale = fp32((1 / max(g, 1e-12)) * max) in double,
    q = fp8(clamp(x * scale)), and the GEMM scale is fp32(1 / scale).
* Library GEMMs (golden/gemms/ files whose @op is fp8_scaled_gemm): every output whose operands
  are finite and whose scales are at most 2^32 (so no intermediate can overflow) recomputed with
  the exact rational oracle of tests/tools/gemm_oracle.py: wgmma fp8 as T-FDPA with F = 13, and
  the promotion and epilogue roundings, each schedule mapped from the @op line; split-K files
  (split_k=S split_tile=G) through the oracle's own slicing, whose K tile per schedule must be the
  file's.

usage: fp8_oracle_test.py GOLDEN_DIR
"""
import os
import sys
from fractions import Fraction

import ml_dtypes
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
import gemm_oracle as oracle  # noqa: E402  (the exact-arithmetic oracle the CLI test shares)

F32 = np.float32


def read(path):
    """(op line, field specs [(name, type, count)], cases: lists of hex tokens)."""
    op, fields, cases = None, None, []
    for line in open(path):
        line = line.rstrip("\n")
        if line.startswith("@op "):
            op = line[4:]
        elif line.startswith("@fields "):
            fields = []
            for tok in line.split()[1:]:
                if tok == "->":
                    continue
                name, typ = tok.split(":")
                count = 1
                if "[" in typ:
                    typ, count = typ[:-1].split("[")
                fields.append((name, typ, int(count)))
        elif line and line[0] not in "#@":
            cases.append(line.split())
    return op, fields, cases


def words(token, digits):
    return [int(token[i:i + digits], 16) for i in range(0, len(token), digits)]


def f32(word):
    return np.array(word, np.uint32).view(np.float32)[()]


def f32_word(x):
    return int(np.array(x, np.float32).view(np.uint32))


def check_quantization(golden):
    files = sorted(f for f in os.listdir(os.path.join(golden, "quantization")) if f.startswith("fp8_"))
    assert len(files) == 4, files
    total = 0
    for name in files:
        op, fields, cases = read(os.path.join(golden, "quantization", name))
        element, recipe = op.split()[1], op.split()[2][len("recipe="):]
        dtype = ml_dtypes.float8_e4m3fn if element == "fp8_e4m3" else ml_dtypes.float8_e5m2
        vmax = 448.0 if element == "fp8_e4m3" else 57344.0
        for n, (g, x, s, q) in enumerate(cases):
            g = f32(int(g, 16))
            xs = np.array(words(x, 8), np.uint32).view(np.float32)
            if recipe == "torchao":
                mult = F32((1.0 / max(float(g), 1e-12)) * vmax)
                gemm_scale = F32(F32(1) / mult)
                y = np.clip(xs * mult, -vmax, vmax).astype(np.float32)
            else:
                sf = F32(max(g, F32(1e-4)) * (F32(1) / F32(448)))
                if recipe == "deepgemm_ue8m0":
                    bits = f32_word(sf)
                    e = (bits >> 23) + (1 if bits & 0x7FFFFF else 0)
                    sf = f32(min(max(e, 1), 254) << 23)
                mult, gemm_scale = F32(F32(1) / sf), sf
                y = (xs * mult).astype(np.float32)
            want_q = [int(c) for c in y.astype(dtype).view(np.uint8)]
            assert f32_word(gemm_scale) == int(s, 16), f"{name} case {n}: scale {s}, oracle {f32_word(gemm_scale):08x}"
            assert want_q == words(q, 2), f"{name} case {n}: codes {q}, oracle {bytes(want_q).hex()}"
            total += 1
    print(f"fp8 quantization golden files: {total} cases of {len(files)} files agree with numpy + ml_dtypes")


def fp8_value(code, fmt):
    """An e4m3 / e5m2 code as a Fraction; None for NaN and Inf."""
    mantissa_bits = 3 if fmt is oracle.E4M3 else 2
    bias = 7 if fmt is oracle.E4M3 else 15
    sign = -1 if code & 0x80 else 1
    e, m = (code >> mantissa_bits) & ((1 << (7 - mantissa_bits)) - 1), code & ((1 << mantissa_bits) - 1)
    if fmt is oracle.E4M3 and (code & 0x7F) == 0x7F:
        return None
    if fmt is not oracle.E4M3 and e == 31:
        return None
    if e == 0:
        return sign * Fraction(m, 1 << mantissa_bits) * Fraction(2) ** (1 - bias)
    return sign * (1 + Fraction(m, 1 << mantissa_bits)) * Fraction(2) ** (e - bias)


def schedule_of(spec):
    if spec["interval"] == "0":
        return "fast_accum_row_a_first" if spec["scales"] == "epilogue_a_first" else "fast_accum"
    if spec["scales"] == "epilogue_scale_product":
        return "tensor"
    if spec["scales"] == "epilogue_b_first":
        return "row"
    if spec["scales"] == "epilogue_a_first":
        return "row_a_first"
    if spec["exchanged"] == "1":
        return "swapped"
    return {"scale_product": "scale_product", "scale_b_first": "b_first"}[spec["fma"]]


def scale_table(words_, granularity, rows, kb, k_blocks_major):
    """rows x kb fp32 scales from a golden field: A row-major by granularity; B (k_blocks_major)
    as K blocks x column groups."""
    groups = 1 if granularity == "tensor" else (rows if granularity in ("row", "1x128") else (rows + 127) // 128)
    per_block = granularity in ("1x128", "128x128")
    blocks = kb if per_block else 1
    out = np.zeros((rows, kb), np.float32)
    for r in range(rows):
        g = 0 if granularity == "tensor" else (r if granularity in ("row", "1x128") else r // 128)
        for q in range(kb):
            b = q if per_block else 0
            out[r, q] = f32(words_[b * groups + g] if k_blocks_major else words_[g * blocks + b])
    return out


def check_gemms(golden):
    checked = skipped = files = splits = 0
    for name in sorted(os.listdir(os.path.join(golden, "gemms"))):
        if not name.endswith(".txt"):
            continue
        op, fields, cases = read(os.path.join(golden, "gemms", name))
        if not op.startswith("fp8_scaled_gemm "):
            continue
        files += 1
        spec = dict(tok.split("=") for tok in op.split()[1:])
        M, N, K = int(spec["m"]), int(spec["n"]), int(spec["k"])
        fa = oracle.E4M3 if spec["a"] == "e4m3" else oracle.E5M2
        fb = oracle.E4M3 if spec["b"] == "e4m3" else oracle.E5M2
        kb, kp = (K + 127) // 128, (K + 127) // 128 * 128
        schedule = schedule_of(spec)
        split_k = int(spec.get("split_k", "1"))
        if split_k > 1:
            assert int(spec["split_tile"]) == oracle.SPLIT_GRANULE[schedule], f"{name}: split_tile {spec['split_tile']}"
            splits += 1
        for n, (a, b, sa, sb, d) in enumerate(cases):
            a, b, d = words(a, 2), words(b, 2), words(d, 8)
            sat = scale_table(words(sa, 8), spec["scale_a"], M, kb, False)
            sbt = scale_table(words(sb, 8), spec["scale_b"], N, kb, True)
            a_rows = [[fp8_value(a[i * K + k], fa) for k in range(K)] for i in range(M)]
            b_cols = [[fp8_value(b[k * N + j], fb) for k in range(K)] for j in range(N)]
            for i in range(M):
                for j in range(N):
                    if None in a_rows[i] or None in b_cols[j] or max(sat[i].max(), sbt[j].max()) > 2.0 ** 32:
                        skipped += 1
                        continue
                    pad = [Fraction(0)] * (kp - K)
                    want = oracle.fp8_scaled_oracle([a_rows[i] + pad], sat[i:i + 1], [b_cols[j] + pad], sbt[j:j + 1],
                                                    fa, fb, schedule, split_k)[0, 0]
                    assert want == d[i * N + j], f"{name} case {n} d[{i}][{j}]: {d[i * N + j]:08x}, oracle {want:08x}"
                    checked += 1
    assert files == 16 and splits == 4, (files, splits)
    assert checked >= 200, checked  # the realistic half of the cases at least
    print(f"fp8 library GEMM golden files: {checked} outputs of {files} files agree with the exact rational oracle "
          f"({skipped} outputs with NaN / Inf operands or scales above 2^32 not compared)")


def main():
    golden = sys.argv[1]
    check_quantization(golden)
    check_gemms(golden)


if __name__ == "__main__":
    main()
