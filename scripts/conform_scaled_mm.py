#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""torch._scaled_mm runs for the conformance harness's schedule study (docs/conformance.md).

Runs on a Hopper GPU with PyTorch (the device machine; nothing here runs in CI): e4m3 x e4m3
GEMMs through torch._scaled_mm with tensor-wise scaling (use_fast_accum off and on), row-wise
scaling, and the DeepSeek block-wise recipes (1x128 x 128x128, 1x128 x 1x128), and writes each
run's inputs and output to DIR/<name>.scaled_mm. `blockscale conform --external-dir DIR` then fits
emulator schedules to them on any machine.

File format: one ASCII header line
  blockscale-scaled-mm 1 key=value ...   (library config m n k scaling fast_accum out sa_count
                                          sb_count; or error=... for a refused call)
followed by A (M x K e4m3 codes, row-major), B (N x K codes, row-major: B transposed), the scales
as little-endian float32 (tensor: 1 each; rowwise: M and N; block: sa[i*kb+q] for row i and K
block q of 128, sb[j*kb+q] for column j, a 128x128 block's value repeated over its columns) and
D (M x N row-major, float32 or bfloat16 bits).

usage: conform_scaled_mm.py DIR [SEED]
"""
import os
import sys

import torch


def e4m3(x):
    return x.to(torch.float8_e4m3fn)


def block_quantize(x, rows_per_block):
    """DeepSeek-style: each rows_per_block x 128 block gets scale amax/448; returns codes, scales."""
    m, k = x.shape
    kb = k // 128
    xb = x.reshape(m // rows_per_block, rows_per_block, kb, 128)
    amax = xb.abs().amax(dim=(1, 3)).clamp(min=1e-30)  # (m/r, kb)
    scale = (amax / 448.0).to(torch.float32)
    q = e4m3(xb / scale[:, None, :, None]).reshape(m, k)
    return q, scale


def header_value(s):
    return str(s).replace(" ", "_")


def write(path, meta, a=None, b=None, sa=None, sb=None, d=None):
    head = "blockscale-scaled-mm 1 " + " ".join(f"{k}={header_value(v)}" for k, v in meta.items()) + "\n"
    with open(path, "wb") as f:
        f.write(head.encode())
        if d is None:
            return
        f.write(a.contiguous().view(torch.uint8).cpu().numpy().tobytes())
        f.write(b.contiguous().view(torch.uint8).cpu().numpy().tobytes())
        f.write(sa.contiguous().to(torch.float32).cpu().numpy().tobytes())
        f.write(sb.contiguous().to(torch.float32).cpu().numpy().tobytes())
        bits = d.contiguous().view(torch.int32 if d.dtype == torch.float32 else torch.int16)
        f.write(bits.cpu().numpy().tobytes())


def run(out_dir, seed):
    dev = torch.device("cuda")
    gen = torch.Generator().manual_seed(seed)
    library = f"torch {torch.__version__} _scaled_mm"
    cases = []

    def operands(m, n, k, data):
        if data == "uniform":
            a = e4m3(torch.rand(m, k, generator=gen))
            b = e4m3(torch.rand(n, k, generator=gen))
        else:
            a = e4m3(torch.randn(m, k, generator=gen))
            b = e4m3(torch.randn(n, k, generator=gen))
        return a, b

    for m, n, k, fast, data in [(256, 256, 4096, False, "uniform"), (256, 256, 4096, True, "uniform"),
                                (64, 128, 16384, False, "uniform"), (64, 128, 16384, True, "uniform")]:
        a, b = operands(m, n, k, data)
        sa = torch.ones((), dtype=torch.float32)
        sb = torch.ones((), dtype=torch.float32)
        cases.append((f"tensor_{m}x{n}x{k}_fast{int(fast)}", "tensor", fast, m, n, k, a, b, sa, sb,
                      lambda a, b, sa, sb, fast=fast, out=None: torch._scaled_mm(
                          a.to(dev), b.to(dev).t(), sa.to(dev), sb.to(dev), out_dtype=out, use_fast_accum=fast),
                      sa.reshape(1), sb.reshape(1)))
    # Row-wise: scale_a (M, 1), scale_b (1, N).
    m, n, k = 256, 256, 2048
    a, b = operands(m, n, k, "gaussian")
    ra = (torch.rand(m, 1, generator=gen) + 0.1).to(torch.float32)
    rb = (torch.rand(1, n, generator=gen) + 0.1).to(torch.float32)
    cases.append(("rowwise_256x256x2048", "rowwise", False, m, n, k, a, b, ra, rb,
                  lambda a, b, sa, sb, out=None: torch._scaled_mm(a.to(dev), b.to(dev).t(), sa.to(dev), sb.to(dev),
                                                                   out_dtype=out),
                  ra.reshape(m), rb.reshape(n)))
    # Block-wise: A 1x128 (scale (M, K/128), M contiguous); B 128x128 or 1x128.
    for name, b_rows in [("block_128x128", 128), ("block_1x128", 1)]:
        m, n, k = 256, 256, 2048
        kb = k // 128
        mag_a = torch.pow(2.0, torch.randint(-8, 9, (m, kb), generator=gen).float())
        mag_b = torch.pow(2.0, torch.randint(-8, 9, (n // b_rows, kb), generator=gen).float())
        xa = torch.randn(m, k, generator=gen) * mag_a.repeat_interleave(128, dim=1)
        xb = torch.randn(n, k, generator=gen) * mag_b.repeat_interleave(128, dim=1).repeat_interleave(b_rows, dim=0)
        a, scale_a = block_quantize(xa, 1)         # (M, kb)
        b, scale_b = block_quantize(xb, b_rows)    # (N / b_rows, kb)
        # ScaledBlas.cpp (_scaled_block1x128_block1x128 / _block1x128_block128x128) with mat2 = B^T
        # (K x N): scale_a (M, K/128) with stride (1, M); scale_b (K/128, N) row-major for 1x128,
        # (K/128, N/128) with stride (1, K/128) for 128x128.
        sa_dev = scale_a.t().contiguous().t()      # (M, kb) with stride (1, M)
        if b_rows == 1:
            sb_dev = scale_b.t().contiguous()      # (kb, N), row-major
        else:
            sb_dev = scale_b.contiguous().t()      # (kb, N/128) with stride (1, kb)
        sb_logical = scale_b.repeat_interleave(b_rows, dim=0)  # (N, kb)
        cases.append((f"{name}_256x256x2048", "block_1x128" if b_rows == 1 else "block_128x128", False, m, n, k, a, b,
                      sa_dev, sb_dev,
                      lambda a, b, sa, sb, out=None: torch._scaled_mm(a.to(dev), b.to(dev).t(), sa.to(dev), sb.to(dev),
                                                                       out_dtype=out),
                      scale_a.reshape(-1), sb_logical.reshape(-1)))

    for name, scaling, fast, m, n, k, a, b, sa, sb, call, sa_log, sb_log in cases:
        meta = {"library": library, "config": f"{name} e4m3 x e4m3 M={m} N={n} K={k}"}
        d = None
        errors = []
        for out in (torch.float32, torch.bfloat16):
            try:
                d = call(a, b, sa, sb, out=out)
                torch.cuda.synchronize()
                break
            except Exception as e:  # the recipe refuses this output type: try the next
                errors.append(f"{out}: {str(e).splitlines()[0][:160]}")
        path = os.path.join(out_dir, name + ".scaled_mm")
        if d is None:
            write(path, dict(meta, error=" / ".join(errors)))
            print(f"{name}: refused: {errors}")
            continue
        meta.update(m=m, n=n, k=k, scaling=scaling, fast_accum=int(fast),
                    out="f32" if d.dtype == torch.float32 else "bf16", sa_count=sa_log.numel(), sb_count=sb_log.numel())
        write(path, meta, a, b, sa_log, sb_log, d.cpu())
        print(f"{name}: {meta['out']} output written")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    os.makedirs(sys.argv[1], exist_ok=True)
    run(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 1)
