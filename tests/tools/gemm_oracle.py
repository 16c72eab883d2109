#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""An oracle for block-scaled GEMMs, written from the specifications in exact rational arithmetic
without any of blockscale's code (tests/tools/cli_gemm_test.py and tests/python/test_module.py
check the command and the Python module against it):
  * MXFP quantization, recipe `ocp` (OCP MX v1.0 section 6.3: shared exponent floor(log2(amax))
    minus the element format's largest exponent, elements rounded to nearest even and saturated);
  * NVFP4 quantization, TransformerEngine's and torchao's recipes (docs/quantization.md);
  * `exact`: the exact sum of the scaled products plus C, rounded once to f32 (nearest even);
  * `sm_100a`: the tcgen05 kind::mxf8f6f4 block32 chain, ST-FDPA (numerics.md b.4), and the
    kind::mxf4nvf4 block16 ue4m3 GST-FDPA chain (b.5);
  * `sm_90a`: the Hopper kernel (gpu/gemm.h): per block a T-FDPA with F = 13 of the unscaled
    products from a +0 accumulator, RZ to 13 fraction bits, then acc = fma(sa * sb, partial, acc);
  * `sequential_f32`: d = fmaf(x * sx, y * sy, d) in k order (reference/numerics.h);
  * NVFP4's per-tensor scales in the epilogue D = fma(alpha, acc, C);
  * fp8 with fp32 scales: DeepGEMM's and torchao's recipes and the library GEMMs of
    emulator/library_fp8.h (cuBLASLt and torch._scaled_mm as measured), split-K included;
  * 2:4 sparse GEMMs as torch._cslt_sparse_mm runs them on Hopper (cuSPARSELt 0.8; emulator/
    sparse_gemm.h): pruning by magnitude, the casts, the tf32 kernel's operand roundings, the
    sparse wgmma chain per K slice, the slices added pairwise, D's conversion.
"""
from fractions import Fraction

import numpy as np

E_ZERO = -133  # the exponent of a zero term on sm_90a / sm_100a (numerics.md b.3)


def floor_log2(x):
    """floor(log2(x)) of a positive Fraction, exactly."""
    x = Fraction(x)
    e = x.numerator.bit_length() - x.denominator.bit_length()
    if Fraction(2) ** e > x:
        e -= 1
    return e


def round_to_quantum(x, quantum, mode):
    """x / quantum rounded to an integer (half even or toward zero), times quantum."""
    q = abs(x) / quantum
    n = q.numerator // q.denominator
    rest = q - n
    if mode == "rne" and (rest > Fraction(1, 2) or (rest == Fraction(1, 2) and n % 2 == 1)):
        n += 1
    r = n * quantum
    return -r if x < 0 else r


def round_float(x, fraction_bits, emin, mode):
    """x rounded to a binary float with this many fraction bits and minimum exponent (no overflow
    occurs in these tests)."""
    if x == 0:
        return Fraction(0)
    e = max(floor_log2(abs(x)), emin)
    return round_to_quantum(x, Fraction(2) ** (e - fraction_bits), mode)


def f32_bits(x):
    """The f32 bit pattern of an f32-representable Fraction (+0 for zero)."""
    return int(np.array(float(x), dtype=np.float32).view(np.uint32))


# Element formats: (fraction bits, minimum exponent, largest exponent, largest value).
E4M3 = (3, -6, 8, Fraction(448))
E2M1 = (1, 0, 2, Fraction(6))
E2M3 = (3, 0, 2, Fraction(15, 2))
E3M2 = (2, -2, 4, Fraction(28))


def element_rne(v, fmt):
    """v (Fraction) to the nearest value of the format, ties to even, saturating."""
    bits, emin, _, vmax = fmt
    r = round_float(v, bits, emin, "rne")
    return max(-vmax, min(vmax, r))


def quantize_ocp(rows, fmt=E4M3):
    """rows: list of lists of Fractions (the K values of each row). Returns per row the element
    values (padded with zeros to whole blocks of 32) and per block the scale exponent; the shared
    exponent is floor(log2(amax)) minus the element format's largest exponent (OCP MX 6.3)."""
    out = []
    for row in rows:
        k = len(row)
        blocks = (k + 31) // 32
        vals, exps = [], []
        for b in range(blocks):
            blk = row[32 * b:32 * b + 32]
            amax = max(abs(v) for v in blk)
            x = floor_log2(amax) - fmt[2] if amax != 0 else -127
            exps.append(x)
            scale = Fraction(2) ** x
            q = [element_rne(v / scale, fmt) for v in blk]
            vals.extend(q + [Fraction(0)] * (32 - len(q)))
        out.append((vals, exps))
    return out


def sig_exp(x, emin):
    """(significand, alignment exponent) of a value: x = s * 2^e, e = max(floor(log2|x|), emin)."""
    if x == 0:
        return Fraction(0), E_ZERO
    e = max(floor_log2(abs(x)), emin)
    return x / Fraction(2) ** e, e


def truncated_sum(terms, F):
    """T-FDPA steps 3-6: terms are (significand, exponent); returns S * 2^(e_max - F) exactly."""
    e_max = max(e for _, e in terms)
    s = 0
    for sig, e in terms:
        t = abs(sig) * Fraction(2) ** (F + e - e_max)
        t = t.numerator // t.denominator
        s += -t if sig < 0 else t
    return Fraction(s) * Fraction(2) ** (e_max - F)


def oracle(a_rows, b_cols, c, emin_a=-6, emin_b=-6):
    """a_rows: quantize_ocp of A's rows; b_cols: of B's columns; c: M x N Fractions; emin_a and
    emin_b: the element formats' minimum exponents (the alignment exponent's floor)."""
    M, N = len(a_rows), len(b_cols)
    blocks = len(a_rows[0][1])
    exact, sm100, sm90, seq = {}, {}, {}, {}
    for i in range(M):
        av, ax = a_rows[i]
        for j in range(N):
            bv, bx = b_cols[j]
            # exact
            total = c[i][j] + sum(av[k] * bv[k] * Fraction(2) ** (ax[k // 32] + bx[k // 32]) for k in range(32 * blocks))
            exact[i, j] = f32_bits(round_float(total, 23, -126, "rne"))
            # sequential_f32: d = fmaf(x*sx, y*sy, d) in k order (each scaled element exact in f32)
            d = c[i][j]
            for k in range(32 * blocks):
                x = av[k] * Fraction(2) ** ax[k // 32]
                y = bv[k] * Fraction(2) ** bx[k // 32]
                d = round_float(x * y + d, 23, -126, "rne")
            seq[i, j] = f32_bits(d)
            # sm_100a: ST-FDPA chain, C in the accumulator
            d = c[i][j]
            for blk in range(blocks):
                terms = [sig_exp(d, -126)]
                for k in range(32 * blk, 32 * blk + 32):
                    sa, ea = sig_exp(av[k], emin_a)
                    sb, eb = sig_exp(bv[k], emin_b)
                    p = sa * sb
                    terms.append((p, ea + eb + ax[blk] + bx[blk]) if p != 0 else (Fraction(0), E_ZERO))
                d = round_float(truncated_sum(terms, 25), 23, -126, "rz")
            sm100[i, j] = f32_bits(d)
            # sm_90a: promotion every block
            acc = c[i][j]
            for blk in range(blocks):
                terms = [(Fraction(0), E_ZERO)]
                for k in range(32 * blk, 32 * blk + 32):
                    sa, ea = sig_exp(av[k], -6)
                    sb, eb = sig_exp(bv[k], -6)
                    p = sa * sb
                    terms.append((p, ea + eb) if p != 0 else (Fraction(0), E_ZERO))
                partial = round_float(truncated_sum(terms, 13), 13, -126, "rz")
                s = Fraction(2) ** (ax[blk] + bx[blk])  # FMUL of two powers of two: exact
                acc = round_float(s * partial + acc, 23, -126, "rne")
            sm90[i, j] = f32_bits(acc)
    return exact, sm100, sm90, seq


F32_MAX = np.float32(np.finfo(np.float32).max)


def quantize_nvfp4(rows, recipe):
    """NVFP4 (e2m1 elements, ue4m3 scales per 16, an fp32 per-tensor scale) as docs/quantization.md
    states the two recipes, every fp32 operation in numpy float32 (IEEE, nearest even). rows: the K
    f32 values of each row (A) or column (B); the global amax G runs over all of them. Returns per
    row the element values (padded with zeros to whole blocks of 16) and the block scale values,
    and the per-tensor decode scale (TE's S_dec, torchao's per-tensor scale; 1 single-level)."""
    with np.errstate(over="ignore", divide="ignore"):
        g = max(abs(np.float32(v)) for row in rows for v in row)
        if recipe == "nvfp4_te":
            s_enc = min(np.float32(2688) / g, F32_MAX) if g != 0 else np.float32(1)
            s_enc = np.float32(1) if s_enc == 0 else s_enc
            decode = np.float32(1) / s_enc
            ratio = s_enc * (np.float32(1) / np.float32(6))
        else:  # nvfp4_torchao (two-level) or nvfp4_torchao_single (P = 1)
            decode = np.float32(g) / np.float32(2688) if recipe == "nvfp4_torchao" else np.float32(1)
        out = []
        for row in rows:
            vals, scales = [], []
            for b in range(0, len(row), 16):
                blk = [np.float32(v) for v in row[b:b + 16]]
                amax = max(abs(v) for v in blk)
                if recipe == "nvfp4_te":
                    scale = element_rne(Fraction(float(min(amax * ratio, F32_MAX))), E4M3)
                    m = min(np.float32(1) / (np.float32(scale) * decode), F32_MAX)
                    q = [np.float32(v) * m for v in blk]  # cvt.rn.satfinite.e2m1
                    q = [element_rne(Fraction(float(x)), E2M1) if np.isfinite(x) else (E2M1[3] if x > 0 else -E2M1[3]) for x in q]
                else:
                    r = (amax / np.float32(6)) / decode
                    scale = element_rne(Fraction(float(min(max(r, np.float32(2.0 ** -6)), np.float32(448)))), E4M3)
                    m = (np.float32(1) / decode) / np.float32(scale)
                    q = [element_rne(Fraction(float(min(max(np.float32(v) * m, np.float32(-6)), np.float32(6)))), E2M1) for v in blk]
                vals.extend(q + [Fraction(0)] * (16 - len(q)))
                scales.append(scale)
            out.append((vals, scales))
    return out, decode


def nvfp4_oracle(a_rows, b_cols, c, alpha):
    """exact, sm_100a (tcgen05 kind::mxf4nvf4 block16 ue4m3: the GST-FDPA chain of numerics.md b.5,
    G = 16, F = 35, K = 64 per instruction, e_zero = -139), sm_90a (gpu/gemm.h: per 16-block one
    wgmma k32 holding the block's 16 elements expanded to e4m3 and 16 zeros, T-FDPA F = 13 from +0,
    RZ to e8m13, then acc = fma(sa * sb, partial, acc)) and sequential_f32. alpha: the fp32 product
    of the two per-tensor scales. With alpha = 1 C starts the accumulator; otherwise the K loop
    starts from +0 and D = fma(alpha, acc, C) (the epilogue)."""
    M, N = len(a_rows), len(b_cols)
    blocks = len(a_rows[0][1])
    steps = (blocks + 3) // 4  # one instruction holds four 16-groups; the last is padded with zero groups
    c_in_acc = alpha == 1

    def epilogue(acc, cij):
        return f32_bits(acc if c_in_acc else round_float(Fraction(float(alpha)) * acc + cij, 23, -126, "rne"))

    exact, sm100, sm90, seq = {}, {}, {}, {}
    for i in range(M):
        av, asc = a_rows[i]
        for j in range(N):
            bv, bsc = b_cols[j]
            start = c[i][j] if c_in_acc else Fraction(0)
            total = start + sum(av[k] * bv[k] * asc[k // 16] * bsc[k // 16] for k in range(16 * blocks))
            exact[i, j] = epilogue(round_float(total, 23, -126, "rne"), c[i][j])
            d = start
            for k in range(16 * blocks):  # d = fmaf(x * sx, y * sy, d); x * sx is exact in f32
                d = round_float(av[k] * asc[k // 16] * bv[k] * bsc[k // 16] + d, 23, -126, "rne")
            seq[i, j] = epilogue(d, c[i][j])
            d = start
            for step in range(steps):
                terms = [sig_exp(d, -126) if d != 0 else (Fraction(0), -139)]
                for g in range(4 * step, 4 * step + 4):
                    if g >= blocks:
                        terms.append((Fraction(0), -139))
                        continue
                    p = sum(av[k] * bv[k] for k in range(16 * g, 16 * g + 16))  # exact group sum
                    all_zero = all(av[k] * bv[k] == 0 for k in range(16 * g, 16 * g + 16))
                    if all_zero or asc[g] * bsc[g] == 0:
                        terms.append((Fraction(0), -139))
                        continue
                    (sa, ea), (sb, eb) = sig_exp(asc[g], -6), sig_exp(bsc[g], -6)
                    terms.append((p * sa * sb, ea + eb))  # the exponent from the scales alone
                d = round_float(truncated_sum(terms, 35), 23, -126, "rz")
            sm100[i, j] = epilogue(d, c[i][j])
            acc = start
            for g in range(blocks):
                terms = [(Fraction(0), E_ZERO)] * 17  # the +0 accumulator and the zero half k = 16..31
                for k in range(16 * g, 16 * g + 16):
                    (sa, ea), (sb, eb) = sig_exp(av[k], -6), sig_exp(bv[k], -6)
                    terms.append((sa * sb, ea + eb) if sa * sb != 0 else (Fraction(0), E_ZERO))
                partial = round_float(truncated_sum(terms, 13), 13, -126, "rz")
                acc = round_float(asc[g] * bsc[g] * partial + acc, 23, -126, "rne")  # FMUL exact: 4-bit significands
            sm90[i, j] = epilogue(acc, c[i][j])
    return exact, sm100, sm90, seq


E5M2 = (2, -14, 15, Fraction(57344))
F32 = np.float32


def quantize_fp8_scaled(x, recipe, row_block, k_block, fmt):
    """x: float32 rows x K (K-major, a row of A or a column of B). Returns per row the element
    values (Fractions, K zero-padded to a multiple of 128) and the GEMM scale (np.float32) of each
    row and 128-element K block. Every fp32 operation is numpy's (each rounded to nearest even):
      deepgemm[_ue8m0] (DeepGEMM deep_gemm/utils/math.py): amax clamped below at fp32(1e-4);
        sf = amax * fp32(1/448) (PyTorch's CUDA division by a Python scalar multiplies by its
        reciprocal); _ue8m0: sf rounded up to a power of two from its bits; q = e4m3(x * fp32(1/sf));
      torchao (torchao.float8): scale = fp32((1 / max(amax, 1e-12)) * max) in double (a scalar
        divided by a tensor is the tensor's reciprocal times the scalar); q = fp8(clamp(x * scale));
        the GEMM scale is fp32(1 / scale)."""
    rows, k = x.shape
    kb = (k + 127) // 128
    vmax = float(fmt[3])
    row_block = rows if row_block is None else row_block
    k_block = k if k_block is None else k_block
    scale = np.zeros((rows, kb), np.float32)
    vals = [[Fraction(0)] * (128 * kb) for _ in range(rows)]
    for r0 in range(0, rows, row_block):
        for k0 in range(0, k, k_block):
            blk = x[r0:r0 + row_block, k0:k0 + k_block]
            amax = F32(np.abs(blk).max())
            if recipe.startswith("deepgemm"):
                sf = F32(max(amax, F32(1e-4)) * (F32(1) / F32(448)))
                if recipe.endswith("ue8m0"):
                    bits = int(np.array(sf, np.float32).view(np.uint32))
                    e = ((bits >> 23) & 0xFF) + (1 if bits & 0x7FFFFF else 0)
                    sf = np.array(min(max(e, 1), 254) << 23, np.uint32).view(np.float32)[()]
                mult, gemm_scale = F32(F32(1) / sf), sf
            else:
                sc = F32((1.0 / max(float(amax), 1e-12)) * vmax)
                mult, gemm_scale = sc, F32(F32(1) / sc)
            for r in range(r0, min(rows, r0 + row_block)):
                for kk in range(k0, min(k, k0 + k_block)):
                    y = F32(x[r, kk] * mult)
                    vals[r][kk] = element_rne(Fraction(float(min(max(y, -vmax), vmax))), fmt)
                for q in range(k0 // 128, (min(k, k0 + k_block) + 127) // 128):
                    scale[r, q] = gemm_scale
    return vals, scale


def wgmma_steps(av, bv, fa, fb, k0, k1, acc):
    """wgmma k32 fp8 steps over K [k0, k1) from accumulator `acc` (sm_90a: T-FDPA with L = 32, F = 13,
    C fused, output RZ to 13 fraction bits; numerics.md)."""
    for s in range(k0, k1, 32):
        terms = [sig_exp(acc, -126)]
        for k in range(s, s + 32):
            sa, ea = sig_exp(av[k], fa[1])
            sb, eb = sig_exp(bv[k], fb[1])
            p = sa * sb
            terms.append((p, ea + eb) if p != 0 else (Fraction(0), E_ZERO))
        acc = round_float(truncated_sum(terms, 13), 13, -126, "rz")
    return acc


def rne32(x):
    return round_float(x, 23, -126, "rne")


# The K tile at which each schedule's library kernel cuts a split-K (cuBLASLt 13.1 on an H200,
# docs/conformance.md, "Split-K"): 512 elements for 1x128 x 128x128, 128 for the others.
SPLIT_GRANULE = {"scale_product": 512, "b_first": 128, "swapped": 128, "tensor": 128, "fast_accum": 128}
# The schedules of emulator/library_fp8.h's rows: the accumulation (one chain, promotion every 4
# wgmma by FADD, or the scales in the promotion FMA) and the epilogue's order of the two scales.
CHAIN = ("fast_accum", "fast_accum_row_a_first")
FADD_PROMOTION = ("tensor", "row", "row_a_first")


def bf16_rne(bits32):
    """f32 words rounded to bf16 codes, nearest even (finite inputs)."""
    b = bits32.astype(np.uint64)
    return ((b + 0x7FFF + ((b >> 16) & 1)) >> 16).astype(np.uint16)


def fp8_scaled_oracle(a_rows, sa, b_cols, sb, fa, fb, schedule, split_k=1):
    """D of each schedule of emulator/library_fp8.h, and exact, as Fractions -> f32 bits. With
    split_k = S > 1 the padded K is cut into slices of ceil(K / (S * G)) K tiles of G elements
    (the last takes the rest), each accumulated from zero, and the slices added in order in fp32
    before the epilogue."""
    kp = len(a_rows[0])
    slices = [(0, kp)]
    if split_k > 1:
        g = SPLIT_GRANULE[schedule]
        per = -(-kp // (split_k * g)) * g
        slices = [(k0, min(kp, k0 + per)) for k0 in range(0, kp, per)]
    out = {}
    for i, av in enumerate(a_rows):
        for j, bv in enumerate(b_cols):
            if schedule == "exact":
                total = sum(av[k] * Fraction(float(sa[i, k // 128])) * bv[k] * Fraction(float(sb[j, k // 128]))
                            for k in range(kp))
                out[i, j] = f32_bits(rne32(total))
                continue
            s_a, s_b = Fraction(float(sa[i, 0])), Fraction(float(sb[j, 0]))
            total = Fraction(0)
            for k0, k1 in slices:
                if schedule in CHAIN:
                    acc = wgmma_steps(av, bv, fa, fb, k0, k1, Fraction(0))
                elif schedule in FADD_PROMOTION:  # promotion every 4 wgmma (128 of K) by FADD
                    acc = Fraction(0)
                    for q in range(k0, k1, 128):
                        acc = rne32(acc + wgmma_steps(av, bv, fa, fb, q, q + 128, Fraction(0)))
                else:  # scales in the promotion FMA
                    acc = Fraction(0)
                    for q in range(k0, k1, 128):
                        p = wgmma_steps(av, bv, fa, fb, q, q + 128, Fraction(0))
                        x, y = Fraction(float(sa[i, q // 128])), Fraction(float(sb[j, q // 128]))
                        if schedule == "scale_product":
                            acc = rne32(rne32(x * y) * p + acc)
                        elif schedule == "b_first":
                            acc = rne32(x * rne32(y * p) + acc)
                        else:  # swapped: fma(sb, sa*p, acc)
                            acc = rne32(y * rne32(x * p) + acc)
                total = acc if split_k == 1 else rne32(total + acc)
            if schedule in ("fast_accum", "tensor"):
                d = rne32(rne32(s_a * s_b) * total)
            elif schedule == "row":
                d = rne32(s_a * rne32(s_b * total))
            elif schedule in ("row_a_first", "fast_accum_row_a_first"):
                d = rne32(s_b * rne32(s_a * total))
            else:
                d = total
            out[i, j] = f32_bits(d)
    return out


SPARSE = {  # input: (fraction bits, emin, instruction K, F, step result's fraction bits)
    "f16": (10, -14, 32, 25, 23),
    "bf16": (7, -126, 32, 25, 23),
    "f32": (23, -126, 16, 25, 23),
    "e4m3": (3, -6, 64, 13, 13),
}
D_TYPES = {"f16": (10, -14, Fraction(65504)), "bf16": (7, -126, None), "f32": (23, -126, None), "e4m3": (3, -6, Fraction(448))}


def prune_oracle(a, group):
    """Keep the group // 2 largest magnitudes of each group along K, ties to the lower position."""
    a = a.copy()
    removed = 0
    for row in a:
        for g in range(0, len(row), group):
            order = sorted(range(group), key=lambda q: (-abs(row[g + q]), q))
            for q in order[group // 2:]:
                removed += row[g + q] != 0
                row[g + q] = 0.0
    return a, removed


def cast_oracle(v, name):
    """A value (Fraction of an f32) as torch's Tensor.to gives it (no overflow in these data)."""
    bits, emin, _, _, _ = SPARSE[name]
    return round_float(v, bits, emin, "rne")


def tf32_bits(x, rule):
    """An f32 value read as tf32: 'up' (the sparse A of cuSPARSELt) or 'rne'."""
    w = f32_bits(x)
    w = (w + (0x1FFF if rule == "up" else 0x0FFF) + ((w >> 13) & 1)) & ~0x1FFF & 0xFFFFFFFF
    return Fraction(float(np.array(w, dtype=np.uint32).view(np.float32)))


def d_convert(x, d_type):
    """The f32 result x (a Fraction; None for NaN) in D's type, as an f32 bit pattern."""
    if x is None:
        return 0x7FFFFFFF
    bits, emin, vmax = D_TYPES[d_type]
    r = round_float(x, bits, emin, "rne")
    if d_type == "e4m3":
        r = max(-vmax, min(vmax, r))
    return f32_bits(r)


def sparse_oracle(a, b, name, d_type, tile, slices):
    """a: M x K, b: K x N Fractions after the cast; returns {exact, cusparselt, sequential_f32} bits."""
    _, emin, step, F, result_bits = SPARSE[name]
    M, K, N = len(a), len(a[0]), len(b[0])
    if name == "f32":
        ka = [[tf32_bits(v, "up") for v in row] for row in a]
        kb = [[tf32_bits(v, "rne") for v in row] for row in b]
    else:
        ka, kb = a, b
    tiles = K // tile
    counts = [tiles // slices + (1 if s >= slices - tiles % slices else 0) for s in range(slices)]
    bounds, at = [], 0
    for c in counts:
        bounds.append((at * tile, (at + c) * tile))
        at += c

    def pairwise(xs):
        if len(xs) == 1:
            return xs[0]
        h = (len(xs) + 1) // 2
        return round_float(pairwise(xs[:h]) + pairwise(xs[h:]), 23, -126, "rne")

    out = {"exact": {}, "cusparselt": {}, "sequential_f32": {}}
    for i in range(M):
        for j in range(N):
            total = sum(a[i][k] * b[k][j] for k in range(K))
            out["exact"][i, j] = d_convert(round_float(total, 23, -126, "rne"), d_type)
            d = Fraction(0)
            for k in range(K):
                d = round_float(a[i][k] * b[k][j] + d, 23, -126, "rne")
            out["sequential_f32"][i, j] = d_convert(d, d_type)
            partial = []
            for lo, hi in bounds:
                acc = Fraction(0)
                for k0 in range(lo, hi, step):
                    terms = [sig_exp(acc, -126)]
                    for k in range(k0, k0 + step):
                        if ka[i][k] != 0:
                            sa, ea = sig_exp(ka[i][k], emin)
                            sb, eb = sig_exp(kb[k][j], emin)
                            terms.append((sa * sb, ea + eb) if sb != 0 else (Fraction(0), E_ZERO))
                    acc = round_float(truncated_sum(terms, F), result_bits, -126, "rz")
                partial.append(acc)
            out["cusparselt"][i, j] = d_convert(pairwise(partial), d_type)
    return out
