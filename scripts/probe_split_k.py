#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Where does cuBLASLt cut K? Probes of torch._scaled_mm's split-K on skinny long-K shapes.

Runs on a Hopper GPU with PyTorch (the device machine; nothing here runs in CI). For each recipe
(tensor-wise with use_fast_accum off and on, row-wise, 1x128 x 128x128, 1x128 x 1x128) and shape it
writes, in the format of scripts/conform_scaled_mm.py (which `blockscale conform --external-dir`
and scripts/split_k_probe_report.py read):

* <recipe>_<m>x<n>x<k>_gaussian.scaled_mm: quantized Gaussian data, as conform_scaled_mm.py makes
  it, called REPEATS times; the header's `repeats_identical` says whether every call gave the same
  bits (an atomic reduction would not).
* <recipe>_<m>x<n>x<k>_probe_block.scaled_mm: unit scales; output (m, n) tests the boundary before
  128-element K block t = 2m + (n mod 2), 1 <= t <= kb - 2. Its three products are s = 2^-18 in
  block t-1, L = 2^8 in block t and -L in block t+1, each alone in its block. Summed in one fp32
  accumulator (or one wgmma chain), s + L rounds to L and the output is 0; the output is s exactly
  when block t starts a new partial sum (a split-K slice), since then L - L = 0 and s survive apart.
* <recipe>_<m>x<n>x<k>_probe_step.scaled_mm: unit scales; output (m, n) tests the boundary before
  k32 step j = 8m + (n mod 8), 1 <= j < k/32: s = 2^-9 in step j-1, L = 2^8 and -L in step j (one
  wgmma). Inside one wgmma chain the fused sum of step j aligns C to 2^8 and truncates s away
  (numerics.md: F = 13); the output is s when step j starts a new chain (Hopper promotion every
  P steps, or a split).

* <recipe>_<m>x<n>x<k>_wide.scaled_mm: as gaussian, with each 128-element block of a row (of A
  and of B) scaled by 2^u, u uniform in [-8, 6], so that the fp32 sums round.

* OUTS f32,bf16: the Gaussian and wide runs also with out_dtype=bfloat16 (<name>_bf16.scaled_mm,
  out=bf16), and the count of bf16 outputs equal to the f32 call's D rounded to nearest even.

usage: probe_split_k.py DIR [SEED] [REPEATS] [KINDS] [OUTS]   (KINDS: comma-separated, default
                                                               gaussian,wide,probe; OUTS: f32)
"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from conform_scaled_mm import block_quantize, e4m3, write  # noqa: E402

RECIPES = ["tensor_fast0", "tensor_fast1", "rowwise", "block_128x128", "block_1x128"]


def scales_for(recipe, m, n, kb, sa_log, sb_log):
    """Device scale tensors in the layouts ScaledBlas.cpp takes, from logical (M, kb) / (N, kb)."""
    if recipe.startswith("tensor"):
        return sa_log.reshape(()), sb_log.reshape(())
    if recipe == "rowwise":
        return sa_log.reshape(m, 1), sb_log.reshape(1, n)
    sa_dev = sa_log.reshape(m, kb).t().contiguous().t()          # (M, kb), stride (1, M)
    if recipe == "block_1x128":
        return sa_dev, sb_log.reshape(n, kb).t().contiguous()    # (kb, N) row-major
    per_block = sb_log.reshape(n, kb)[::128]                     # (N/128, kb)
    return sa_dev, per_block.contiguous().t()                    # (kb, N/128), stride (1, kb)


def unit_scales(recipe, m, n, kb):
    if recipe.startswith("tensor"):
        return torch.ones(1), torch.ones(1)
    if recipe == "rowwise":
        return torch.ones(m), torch.ones(n)
    return torch.ones(m * kb), torch.ones(n * kb)


def gaussian(recipe, m, n, k, gen, wide=False):
    """Quantized Gaussian data. `wide` multiplies each 128-element block of a row by 2^u,
    u uniform in [-8, 6], so that fp32 sums of the promoted partials round (unit-scale Gaussian
    data sums exactly in fp32, whatever the order: it cannot tell reduction orders apart)."""
    kb = k // 128
    if recipe.startswith("block"):
        b_rows = 128 if recipe == "block_128x128" else 1
        mag_a = torch.pow(2.0, torch.randint(-8, 9, (m, kb), generator=gen).float())
        mag_b = torch.pow(2.0, torch.randint(-8, 9, (n // b_rows, kb), generator=gen).float())
        xa = torch.randn(m, k, generator=gen) * mag_a.repeat_interleave(128, dim=1)
        xb = torch.randn(n, k, generator=gen) * mag_b.repeat_interleave(128, dim=1).repeat_interleave(b_rows, dim=0)
        a, scale_a = block_quantize(xa, 1)
        b, scale_b = block_quantize(xb, b_rows)
        return a, b, scale_a.reshape(-1), scale_b.repeat_interleave(b_rows, dim=0).reshape(-1)
    xa = torch.randn(m, k, generator=gen)
    xb = torch.randn(n, k, generator=gen)
    if wide:
        xa = xa * torch.pow(2.0, torch.randint(-8, 7, (m, kb), generator=gen).float()).repeat_interleave(128, dim=1)
        xb = xb * torch.pow(2.0, torch.randint(-8, 7, (n, kb), generator=gen).float()).repeat_interleave(128, dim=1)
    a = e4m3(xa.clamp(-448, 448))
    b = e4m3(xb.clamp(-448, 448))
    if recipe == "rowwise":
        return a, b, (torch.rand(m, generator=gen) + 0.1), (torch.rand(n, generator=gen) + 0.1)
    return a, b, torch.ones(1), torch.ones(1)


def probe_block(m, n, k):
    """Output (i, j) tests block t = 2i + (j mod 2): s at block t-1 (offset 2), L at t (offset 0),
    -L at t+1 (offset 1). Column parity selects one candidate of the row's two."""
    kb = k // 128
    a = torch.zeros(m, k)
    b = torch.zeros(n, k)
    for i in range(m):
        for g in range(2):
            t = 2 * i + g
            if not 1 <= t <= kb - 2:
                continue
            a[i, 128 * (t - 1) + 2] = 2.0 ** -9
            a[i, 128 * t] = 256.0
            a[i, 128 * (t + 1) + 1] = -256.0
    for j in range(n):
        g = j % 2
        for t in range(g, kb, 2):  # blocks of this parity hold L (offset 0); the others s and -L
            b[j, 128 * t] = 1.0
            if t + 1 < kb:
                b[j, 128 * (t + 1) + 1] = 1.0
            if t - 1 >= 0:
                b[j, 128 * (t - 1) + 2] = 2.0 ** -9
    return e4m3(a), e4m3(b)


def probe_step(m, n, k):
    """Output (i, j) tests k32 step s = 8i + (j mod 8): 2^-9 at step s-1 (offset 2), L and -L at
    step s (offsets 0 and 1). Column j mod 8 selects one candidate of the row's eight."""
    steps = k // 32
    a = torch.zeros(m, k)
    b = torch.zeros(n, k)
    for i in range(m):
        for r in range(8):
            s = 8 * i + r
            if not 1 <= s < steps:
                continue
            a[i, 32 * (s - 1) + 2] = 2.0 ** -9
            a[i, 32 * s] = 256.0
            a[i, 32 * s + 1] = -256.0
    for j in range(n):
        r = j % 8
        for s in range(r, steps, 8):
            if s < 1:
                continue
            b[j, 32 * (s - 1) + 2] = 1.0
            b[j, 32 * s] = 1.0
            b[j, 32 * s + 1] = 1.0
    return e4m3(a), e4m3(b)


def call(recipe, a, b, sa_dev, sb_dev, dev, out_dtype=torch.float32):
    fast = recipe == "tensor_fast1"
    kwargs = {"use_fast_accum": True} if fast else {}
    d = torch._scaled_mm(a.to(dev), b.to(dev).t(), sa_dev.to(dev), sb_dev.to(dev), out_dtype=out_dtype, **kwargs)
    torch.cuda.synchronize()
    return d.cpu()


def main(out_dir, seed, repeats, wanted, outs):
    dev = torch.device("cuda")
    gen = torch.Generator().manual_seed(seed)
    library = f"torch {torch.__version__} _scaled_mm"
    shapes = [(64, 256, 16384), (64, 256, 10240)]  # Gaussian data as well as the probes
    probed = [(64, 256, k) for k in (4096, 6144, 8192, 12288, 14336)] + [(128, 256, 16384), (64, 128, 16384)]
    jobs = [(recipe, shape) for recipe in RECIPES for shape in shapes + probed]
    for recipe, (m, n, k) in jobs:
        kb = k // 128
        scaling = {"tensor_fast0": "tensor", "tensor_fast1": "tensor"}.get(recipe, recipe)
        kinds = []
        if (m, n, k) in shapes:
            if "gaussian" in wanted:
                kinds.append(("gaussian", *gaussian(recipe, m, n, k, gen)))
            if "wide" in wanted and not recipe.startswith("block"):  # block data have their own scales
                kinds.append(("wide", *gaussian(recipe, m, n, k, gen, wide=True)))
        if "probe" in wanted:
            ua, ub = unit_scales(recipe, m, n, kb)
            kinds.append(("probe_block", *probe_block(m, n, k), ua, ub))
            kinds.append(("probe_step", *probe_step(m, n, k), ua, ub))
        # bf16 D for the data runs (the probes' outputs are powers of two, exact in bf16 either way).
        runs = [(kind, a, b, sa, sb, out) for kind, a, b, sa, sb in kinds for out in outs
                if out == "f32" or not kind.startswith("probe")]
        for kind, a, b, sa_log, sb_log, out in runs:
            name = f"{recipe}_{m}x{n}x{k}_{kind}" + ("_bf16" if out == "bf16" else "")
            sa_dev, sb_dev = scales_for(recipe, m, n, kb, sa_log, sb_log)
            meta = {"library": library, "config": f"{name} e4m3 x e4m3 M={m} N={n} K={k}"}
            try:
                dtype = torch.bfloat16 if out == "bf16" else torch.float32
                results = [call(recipe, a, b, sa_dev, sb_dev, dev, dtype) for _ in range(repeats)]
            except Exception as e:  # a refused call is recorded, not fatal
                write(os.path.join(out_dir, name + ".scaled_mm"), dict(meta, error=str(e).splitlines()[0][:160]))
                print(f"{name}: refused: {e}")
                continue
            word = torch.int16 if out == "bf16" else torch.int32
            same = all(torch.equal(o.view(word), results[0].view(word)) for o in results)
            note = ""
            if out == "bf16":  # is the bf16 D the f32 D rounded to nearest even (torch's .to)?
                narrowed = call(recipe, a, b, sa_dev, sb_dev, dev).to(torch.bfloat16)
                equal = int((narrowed.view(torch.int16) == results[0].view(torch.int16)).sum())
                note = f", {equal} of {results[0].numel()} equal to the f32 call's D rounded to bf16"
            meta.update(m=m, n=n, k=k, scaling=scaling, fast_accum=int(recipe == "tensor_fast1"), out=out,
                        sa_count=sa_log.numel(), sb_count=sb_log.numel(), repeats=repeats,
                        repeats_identical=int(same))
            write(os.path.join(out_dir, name + ".scaled_mm"), meta, a, b, sa_log.float(), sb_log.float(), results[0])
            print(f"{name}: written, {repeats} calls {'identical' if same else 'DIFFER'}{note}", flush=True)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    os.makedirs(sys.argv[1], exist_ok=True)
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 7,
         int(sys.argv[3]) if len(sys.argv) > 3 else 3,
         set((sys.argv[4] if len(sys.argv) > 4 else "gaussian,wide,probe").split(",")),
         (sys.argv[5] if len(sys.argv) > 5 else "f32").split(","))
