#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Where torch._scaled_mm adds its bias: a probe for docs/conformance.md, "Bias".

Runs on a Hopper GPU with PyTorch (the device machine; nothing here runs in CI). For each recipe
(tensor-wise with and without use_fast_accum, row-wise, DeepSeek 1x128 x 128x128) and shape, it
calls torch._scaled_mm three times on the same e4m3 operands: with unit scales and no bias (the
accumulator acc, for the recipes whose scales act in the epilogue only), with the recipe's scales and
no bias (D0, f32), and with the scales and a bias (D, for each output dtype and bias dtype the call
accepts). Two kinds of data: Gaussian operands with a Gaussian bias, and "cancel": rows of A that
differ from row 0 in two elements each, with the bias -D0(0, j) in the bias dtype, so that D is far
below D0 and D0's low bits (which an FMA would keep and a separate add would not) reach D's dtype. It then counts, exactly (Python fractions, no floating point), how many outputs of D
each candidate rule reproduces:
  add_f32       RN_f32(D0 + bias), then RN to D's dtype
  once          D0 + bias exactly, rounded once to D's dtype
  after_out     RN_out(RN_out(D0) + bias): the bias added after D0 was narrowed
  fma_scale     tensor-wise: RN_f32(s acc + bias), s = RN_f32(sa sb), one rounding (an FMA)
  fma_a_outer   row-wise: RN_f32(sa RN_f32(sb acc) + bias)
  fma_b_outer   row-wise: RN_f32(sb RN_f32(sa acc) + bias)
(each f32 candidate then rounded to nearest even to D's dtype for a bf16 or f16 D); and, without a
bias, whether a bf16 or f16 D is D0 rounded once to nearest even. With MODULE (a directory holding
the blockscale Python package, e.g. <build>/python) it also computes every call with the library's
model (blockscale.gemm_fp8 with d_type and bias) and counts the outputs that differ from the GPU's,
for split counts 1 .. 8 (torch does not say which it took). Writes DIR/bias.json.

usage: probe_scaled_mm_bias.py DIR [SEED [MODULE]]
"""
import json
import os
import sys
from fractions import Fraction

import torch


def round_rne(q, p, emin):
    """q rounded to nearest even on a grid of p significant bits with exponents >= emin."""
    if q == 0:
        return q
    a = abs(q)
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if Fraction(2) ** e > a:
        e -= 1
    ulp = Fraction(2) ** (max(e, emin) - p + 1)
    n, r = divmod(a, ulp)
    if r * 2 > ulp or (r * 2 == ulp and n % 2 == 1):
        n += 1
    return (n * ulp) if q > 0 else -(n * ulp)


def rn_f32(q):
    return round_rne(q, 24, -126)


def rn_bf16(q):
    return round_rne(q, 8, -126)


def rn_f16(q):
    return round_rne(q, 11, -14)


def exact(t):
    """A tensor's values as fractions (every float is a dyadic rational)."""
    return [Fraction(x) for x in t.detach().to(torch.float64).cpu().reshape(-1).tolist()]


def e4m3(x):
    return x.to(torch.float8_e4m3fn)


def module_mismatches(bs, name, scaling, fast, a, b, sa, sb, out, bias, d):
    """blockscale's model of the call against the GPU's D, per split count 1 .. 8 (None where the
    model refuses the count)."""
    recipe = {"tensor": "torchao_tensorwise", "rowwise": "torchao_rowwise", "block_128x128": None}[scaling]
    ra, rb = (recipe, recipe) if recipe else ("deepgemm_1x128", "deepgemm_128x128")
    qa = bs.Fp8Matrix.from_codes("e4m3", ra, a.view(torch.uint8).numpy(),
                                 sa.reshape(-1).numpy() if scaling != "block_128x128" else sa.contiguous().numpy())
    qb = bs.Fp8Matrix.from_codes("e4m3", rb, b.view(torch.uint8).numpy(),
                                 sb.reshape(-1).numpy() if scaling != "block_128x128" else sb.t().contiguous().numpy())
    model = "torch_scaled_mm_fast_accum" if fast else "torch_scaled_mm"
    d_type = {torch.bfloat16: "bf16", torch.float16: "f16"}[out]
    got = d.float().cpu().numpy().view("uint32")
    result = {}
    for split in range(1, 9):
        try:
            want = bs.gemm_fp8(qa, qb, model, split_k=split, d_type=d_type,
                               bias=None if bias is None else bias.float().cpu().numpy())
        except bs.BlockscaleError:
            result[split] = None
            continue
        result[split] = int((want.view("uint32") != got).sum())
    return result


def main(out_dir, seed, module_dir=None):
    bs = None
    if module_dir:
        sys.path.insert(0, module_dir)
        import blockscale as bs  # noqa: E402  (the package built beside this checkout)
    dev = torch.device("cuda")
    gen = torch.Generator().manual_seed(seed)
    record = {"torch": torch.__version__, "cuda": torch.version.cuda, "gpu": torch.cuda.get_device_name(),
              "seed": seed, "module": None if bs is None else bs.__version__, "calls": []}

    def mm(a, b, sa, sb, out, bias=None, fast=False):
        return torch._scaled_mm(a.to(dev), b.to(dev).t(), sa.to(dev), sb.to(dev), bias=None if bias is None else bias.to(dev),
                                out_dtype=out, use_fast_accum=fast)

    recipes = []
    for m, n, k in [(128, 128, 2048), (64, 128, 16384)]:
        for fast in (False, True):
            sa = torch.tensor(0.3, dtype=torch.float32)
            sb = torch.tensor(1.7, dtype=torch.float32)
            recipes.append((f"tensor_fast{int(fast)}_{m}x{n}x{k}", "tensor", fast, m, n, k, sa, sb))
        ra = (torch.rand(m, 1, generator=gen) + 0.1).to(torch.float32)
        rb = (torch.rand(1, n, generator=gen) + 0.1).to(torch.float32)
        recipes.append((f"rowwise_{m}x{n}x{k}", "rowwise", False, m, n, k, ra, rb))
        kb = k // 128
        # DeepSeek 1x128 x 128x128, the layouts of conform_scaled_mm.py.
        sa_blk = (torch.rand(m, kb, generator=gen) + 0.5).to(torch.float32)
        sb_blk = (torch.rand((n + 127) // 128, kb, generator=gen) + 0.5).to(torch.float32)
        recipes.append((f"block_128x128_{m}x{n}x{k}", "block_128x128", False, m, n, k,
                        sa_blk.t().contiguous().t(), sb_blk.contiguous().t()))

    for (name, scaling, fast, m, n, k, sa, sb), data in [(r, d) for r in recipes for d in ("gaussian", "cancel")]:
        name = f"{name}_{data}"
        x = torch.randn(m, k, generator=gen)
        if data == "cancel":
            x[1:] = x[0]
            for i in range(1, m):
                x[i, torch.randint(0, k, (2,), generator=gen)] = torch.randn(2, generator=gen)
        a = e4m3(x)
        b = e4m3(torch.randn(n, k, generator=gen))
        try:
            d0 = mm(a, b, sa, sb, torch.float32, fast=fast)
        except Exception as exc:  # the recipe refuses f32 D
            record["calls"].append({"name": name, "error": f"no bias, f32 D: {str(exc).splitlines()[0][:200]}"})
            continue
        acc = None
        if scaling in ("tensor", "rowwise"):
            ones_a = torch.ones_like(sa)
            ones_b = torch.ones_like(sb)
            acc = exact(mm(a, b, ones_a, ones_b, torch.float32, fast=fast))
        d0x = exact(d0)
        spread = float(d0.abs().max())
        # Without a bias: is a bf16 or f16 D the f32 D0 rounded once?
        for out, narrow in ((torch.bfloat16, rn_bf16), (torch.float16, rn_f16)):
            dn = mm(a, b, sa, sb, out, fast=fast)
            dx = exact(dn)
            call = {"name": name, "data": data, "scaling": scaling, "fast_accum": fast, "m": m, "n": n, "k": k,
                    "out": str(out).replace("torch.", ""), "bias": "none", "outputs": m * n,
                    "mismatches": {"once": sum(1 for x, y in zip(d0x, dx) if narrow(x) != y)}}
            if bs is not None:
                call["module"] = module_mismatches(bs, name, scaling, fast, a, b, sa, sb, out, None, dn)
            record["calls"].append(call)
            print(name, call["out"], "no bias", call["mismatches"], "module:", call.get("module"), flush=True)
        for out in (torch.float32, torch.bfloat16, torch.float16):
            for bias_dtype in (torch.bfloat16, torch.float16, torch.float32):
                if data == "cancel":
                    bias = (-d0[0]).to(bias_dtype)
                else:
                    bias = (torch.randn(n, generator=gen) * spread / 3).to(bias_dtype)
                call = {"name": name, "data": data, "scaling": scaling, "fast_accum": fast, "m": m, "n": n, "k": k,
                        "out": str(out).replace("torch.", ""), "bias": str(bias_dtype).replace("torch.", "")}
                try:
                    d = mm(a, b, sa, sb, out, bias=bias, fast=fast)
                    torch.cuda.synchronize()
                except Exception as exc:
                    call["error"] = str(exc).splitlines()[0][:200]
                    record["calls"].append(call)
                    print(name, call["out"], call["bias"], "refused:", call["error"])
                    continue
                dx = exact(d)
                bx = exact(bias)
                narrow = {torch.bfloat16: rn_bf16, torch.float16: rn_f16}.get(out, lambda q: q)
                cands = {"add_f32": [], "once": [], "after_out": []}
                if scaling == "tensor":
                    cands["fma_scale"] = []
                    s = rn_f32(Fraction(float(sa)) * Fraction(float(sb)))
                if scaling == "rowwise":
                    cands["fma_a_outer"] = []
                    cands["fma_b_outer"] = []
                    sax = exact(sa)
                    sbx = exact(sb)
                for idx in range(m * n):
                    i, j = divmod(idx, n)
                    bj = bx[j]
                    cands["add_f32"].append(narrow(rn_f32(d0x[idx] + bj)))
                    cands["once"].append(rn_f32(d0x[idx] + bj) if out == torch.float32 else narrow(d0x[idx] + bj))
                    cands["after_out"].append(narrow(narrow(d0x[idx]) + bj))
                    if scaling == "tensor":
                        cands["fma_scale"].append(narrow(rn_f32(s * acc[idx] + bj)))
                    if scaling == "rowwise":
                        cands["fma_a_outer"].append(narrow(rn_f32(sax[i] * rn_f32(sbx[j] * acc[idx]) + bj)))
                        cands["fma_b_outer"].append(narrow(rn_f32(sbx[j] * rn_f32(sax[i] * acc[idx]) + bj)))
                call["outputs"] = m * n
                call["mismatches"] = {c: sum(1 for x, y in zip(v, dx) if x != y) for c, v in cands.items()}
                if bs is not None:
                    call["module"] = module_mismatches(bs, name, scaling, fast, a, b, sa, sb, out, bias, d)
                # How often the candidates differ among themselves: a match means something only where they do.
                names = list(cands)
                call["candidates_differ"] = sum(1 for idx in range(m * n) if len({cands[c][idx] for c in names}) > 1)
                record["calls"].append(call)
                print(name, call["out"], call["bias"], call["mismatches"], "differ:", call["candidates_differ"],
                      "module:", call.get("module"), flush=True)
    with open(os.path.join(out_dir, "bias.json"), "w") as f:
        json.dump(record, f, indent=1)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: probe_scaled_mm_bias.py DIR [SEED [MODULE]]")
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 1, sys.argv[3] if len(sys.argv) > 3 else None)
