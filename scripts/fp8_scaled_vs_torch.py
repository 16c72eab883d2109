#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""`blockscale gemm` with fp8 and fp32 scales against PyTorch on a Hopper GPU, bit for bit.

Runs on the device machine only (it needs PyTorch and a GPU; nothing here runs in CI). For each
case it makes float32 A (M x K) and W (N x K, a linear layer's weight: B = W^T), then
  * quantizes them with PyTorch on the GPU, written from the recipes' sources: DeepGEMM's
    per_token_cast_to_fp8 / per_block_cast_to_fp8 (deep_gemm/utils/math.py, use_ue8m0 off and
    on) and torchao.float8's tensorwise and rowwise scaling (amax_to_scale, to_fp8_saturated,
    the reciprocal scales handed to torch._scaled_mm);
  * multiplies them with torch._scaled_mm (f32 output; bf16 where the call refuses f32);
  * runs `blockscale gemm --a A.npy --b W.npy --b-transposed --format fp8_e4m3 --recipe R
    --recipe-b RB --models torch_scaled_mm[_fast_accum] [--split-k S]` on the same files, which
    quantizes with its own recipe code and emulates the library's schedule, with the split count
    S that cuBLASLt's heuristic gives torch's call (scripts/cublaslt_split_k.py); the last shapes
    are skinny with long K, which the heuristic splits into many slices;
and compares D bit for bit (bf16 outputs: blockscale's f32 D rounded to bf16, nearest even). D
agrees only where blockscale's quantizer gave PyTorch's codes and scales and its model the
library's accumulation; on a mismatch, PyTorch's D, codes and scales are saved beside
blockscale's D for a look on a CPU.

With --recorded, the shapes are instead ones where cuBLASLt's recorded heuristic (the table behind
`blockscale gemm --split-k h100|h200`, emulator/library_fp8_split_k.cpp) picks different split
counts for f32 and bf16 D, for the H100 and the H200, or for e4m3 and e5m2 weights; every case
runs with f32 and with bf16 D, and blockscale takes `--split-k h100|h200 --d-type f32|bf16` (this
GPU) instead of a number: its S comes from the table, and the query's S is recorded beside it.

usage: fp8_scaled_vs_torch.py BLOCKSCALE OUT_DIR [SEED] [--recorded]
Writes OUT_DIR/fp8_scaled_vs_torch.json (and, for a mismatching case, both sides' D with PyTorch's
codes and scales) and prints one line per case; exit status 1 on any mismatch.
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cublaslt_split_k import CublasLt, torch_query  # noqa: E402

E4M3 = torch.float8_e4m3fn


def ceil_to_ue8m0(x):
    bits = x.abs().float().view(torch.int)
    exp = ((bits >> 23) & 0xFF) + (bits & 0x7FFFFF).bool().int()
    return (exp.clamp(1, 254) << 23).view(torch.float)


def deepgemm_per_token(x, ue8m0):
    """1 x 128 blocks along K (rows of x), as DeepGEMM's per_token_cast_to_fp8."""
    m, n = x.shape
    pad = (n + 127) // 128 * 128
    xp = torch.zeros((m, pad), dtype=x.dtype, device=x.device)
    xp[:, :n] = x
    xv = xp.view(m, pad // 128, 128)
    amax = xv.abs().float().amax(dim=2).view(m, pad // 128).clamp(1e-4)
    sf = amax / 448.0
    sf = ceil_to_ue8m0(sf) if ue8m0 else sf
    q = (xv * (1.0 / sf.unsqueeze(2))).to(E4M3).view(m, pad)[:, :n].contiguous()
    return q, sf


def deepgemm_per_block(x, ue8m0):
    """128 x 128 blocks, as DeepGEMM's per_block_cast_to_fp8."""
    m, n = x.shape
    xp = torch.zeros(((m + 127) // 128 * 128, (n + 127) // 128 * 128), dtype=x.dtype, device=x.device)
    xp[:m, :n] = x
    xv = xp.view(-1, 128, xp.size(1) // 128, 128)
    amax = xv.abs().float().amax(dim=(1, 3), keepdim=True).clamp(1e-4)
    sf = amax / 448.0
    sf = ceil_to_ue8m0(sf) if ue8m0 else sf
    q = (xv * (1.0 / sf)).to(E4M3)
    return q.view_as(xp)[:m, :n].contiguous(), sf.view(xv.size(0), xv.size(2))


def torchao_scale(x, rowwise, dtype=E4M3):
    """torchao.float8: amax, amax_to_scale (in float64), to_fp8_saturated; the GEMM scale is
    scale.reciprocal()."""
    amax = torch.amax(torch.abs(x), dim=-1, keepdim=True) if rowwise else torch.max(torch.abs(x))
    amax = amax.to(torch.float64)
    scale = (torch.finfo(dtype).max / torch.clamp(amax, min=1e-12)).to(torch.float32)
    y = x.to(torch.float32) * scale
    max_value = torch.finfo(dtype).max
    q = y.clamp(min=-max_value, max=max_value).to(dtype)
    return q, scale.reciprocal()


def scaled_mm(a, w, sa, sb, fast, outs=(torch.float32, torch.bfloat16)):
    """D of the first output type of `outs` that the call accepts, or (None, the last refusal)."""
    err = None
    for out in outs:
        try:
            d = torch._scaled_mm(a, w.t(), sa, sb, out_dtype=out, use_fast_accum=fast)
            torch.cuda.synchronize()
            return d, None
        except Exception as e:  # this recipe refuses the output type: try the next
            err = str(e).splitlines()[0][:200]
    return None, err


def bf16_rne(bits32):
    b = bits32.astype(np.uint64)
    rounded = (b + 0x7FFF + ((b >> 16) & 1)) >> 16
    nan = (b & 0x7FFFFFFF) > 0x7F800000
    return np.where(nan, (b >> 16) | 0x40, rounded).astype(np.uint16)


# On-grid shapes where the recorded heuristic's S depends on the D type, the GPU or the weights'
# element type (for torch._scaled_mm's calls; scripts/cublaslt_split_k.py's grid queries).
RECORDED_SHAPES = [(32, 96, 65536), (32, 256, 32768), (16, 3072, 6144), (16, 192, 32768), (384, 16, 28672),
                   (16, 512, 40960), (32, 32, 65536)]


def main():
    recorded = "--recorded" in sys.argv
    argv = [a for a in sys.argv if a != "--recorded"]
    tool, out_dir = argv[1], argv[2]
    seed = int(argv[3]) if len(argv) > 3 else 1
    gpu = "h100" if "H100" in torch.cuda.get_device_name(0) else "h200" if "H200" in torch.cuda.get_device_name(0) else None
    if recorded and gpu is None:
        sys.exit("fp8_scaled_vs_torch.py --recorded: the split counts were recorded on an H100 and an H200 only")
    os.makedirs(out_dir, exist_ok=True)
    work = tempfile.mkdtemp()  # inputs and blockscale's outputs
    dev = torch.device("cuda")
    gen = torch.Generator().manual_seed(seed)
    results = []
    failed = False

    shapes = RECORDED_SHAPES if recorded else [(256, 384, 2048), (128, 256, 4096), (384, 128, 1024),
                                                (1024, 1536, 4096), (64, 256, 65536), (16, 512, 40960),
                                                (128, 384, 24576)]
    # Recorded mode: every case with f32 and with bf16 D; else the first D type the call takes.
    out_choices = [(torch.float32,), (torch.bfloat16,)] if recorded else [(torch.float32, torch.bfloat16)]
    lt = None  # cuBLASLt for the split-K queries, once torch has loaded it
    for si, (m, n, k) in enumerate(shapes):
        # Rows and 128-blocks of very different magnitudes, so that the scales differ widely.
        mag_a = torch.pow(2.0, torch.randint(-10, 11, (m, k // 128), generator=gen).float()).repeat_interleave(128, 1)
        mag_w = torch.pow(2.0, torch.randint(-10, 11, (n, k // 128), generator=gen).float()).repeat_interleave(128, 1)
        a = (torch.randn(m, k, generator=gen) * mag_a).float()
        w = torch.randn(n, k, generator=gen).float() * mag_w
        if si >= 2:  # heavy tails and exact zeros
            a = torch.distributions.StudentT(2.0).sample((m, k)).float() * mag_a
            a[:, :64] = 0.0
        a_path = os.path.join(work, f"a{si}.npy")
        w_path = os.path.join(work, f"w{si}.npy")
        np.save(a_path, a.numpy())
        np.save(w_path, w.numpy())
        ad, wd = a.to(dev), w.to(dev)

        cases = []
        for ue8m0 in (False, True):
            qa, sa = deepgemm_per_token(ad, ue8m0)
            qw, sw = deepgemm_per_block(wd, ue8m0)
            sfx = "_ue8m0" if ue8m0 else ""
            # torch._scaled_mm block-wise layouts (ScaledBlas.cpp): scale_a (M, K/128) with stride
            # (1, M); scale_b (K/128, N/128) with stride (1, K/128) for 128 x 128.
            cases.append((f"deepgemm{sfx} 1x128 x 128x128", f"deepgemm_1x128{sfx}", f"deepgemm_128x128{sfx}",
                          "torch_scaled_mm", "fp8_e4m3", qa, qw, sa.t().contiguous().t(), sw.contiguous().t(), False))
            qw1, sw1 = deepgemm_per_token(wd, ue8m0)
            cases.append((f"deepgemm{sfx} 1x128 x 1x128", f"deepgemm_1x128{sfx}", f"deepgemm_1x128{sfx}",
                          "torch_scaled_mm", "fp8_e4m3", qa, qw1, sa.t().contiguous().t(), sw1.t().contiguous(), False))
        qa, sa = torchao_scale(ad, False)
        qw, sw = torchao_scale(wd, False)
        for fast in (False, True):
            cases.append((f"torchao tensorwise fast_accum={int(fast)}", "torchao_tensorwise", "torchao_tensorwise",
                          "torch_scaled_mm_fast_accum" if fast else "torch_scaled_mm", "fp8_e4m3", qa, qw, sa, sw,
                          fast))
        qw5, sw5 = torchao_scale(wd, False, torch.float8_e5m2)  # e4m3 x e5m2, as for gradients
        cases.append(("torchao tensorwise e4m3 x e5m2", "torchao_tensorwise", "torchao_tensorwise", "torch_scaled_mm",
                      "fp8_e5m2", qa, qw5, sa, sw5, False))
        qa, sa = torchao_scale(ad, True)   # (M, 1)
        qw, sw = torchao_scale(wd, True)   # (N, 1)
        cases.append(("torchao rowwise", "torchao_rowwise", "torchao_rowwise", "torch_scaled_mm", "fp8_e4m3", qa, qw, sa,
                      sw.t().contiguous(), False))

        for (name, ra, rb, model, format_b, qa, qw, sa, sw, fast), outs in [(c, o) for c in cases for o in out_choices]:
            label = f"{name} M={m} N={n} K={k}"
            d, err = scaled_mm(qa, qw, sa, sw, fast, outs)
            lt = lt or CublasLt()
            recipe = ("block_128x128" if "128x128" in name else "block_1x128" if "1x128" in name else
                      "rowwise" if "rowwise" in name else "tensor_fast" if fast else "tensor")
            out = "bf16" if (d is not None and d.dtype == torch.bfloat16) or outs == (torch.bfloat16,) else "f32"
            split_k = torch_query(lt, recipe, out, m, n, k, "e4m3", format_b[-4:])["split_k"]
            entry = {"case": label, "model": model, "split_k": split_k}
            if d is None:
                entry.update(output=out, refused=err)
                print(f"{label} [{out}]: torch refused: {err}")
                results.append(entry)
                continue
            bdir = os.path.join(work, f"bs{si}_{len(results)}")
            cmd = [tool, "gemm", "--a", a_path, "--b", w_path, "--b-transposed", "--format", "fp8_e4m3", "--format-b",
                   format_b, "--recipe", ra, "--recipe-b", rb, "--models", model, "--out", bdir, "--quiet", "--no-exact"]
            if recorded:
                cmd += ["--split-k", gpu, "--d-type", out, "--json"]
            elif split_k > 1:
                cmd += ["--split-k", str(split_k)]
            r = subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode != 0:
                entry["blockscale_error"] = r.stderr.strip()[-400:]
                print(f"{label}: blockscale failed: {entry['blockscale_error']}")
                failed = True
                results.append(entry)
                continue
            if recorded:  # the table's S, beside the query's
                entry["recorded_split_k"] = json.loads(r.stdout)["numerics"][0]["split_k"]
                failed |= entry["recorded_split_k"] != split_k
                cmd = cmd[:-5]  # without --split-k GPU --d-type D --json, for the unsplit run below
            ours = np.load(os.path.join(bdir, model + ".npy")).view(np.uint32)
            if d.dtype == torch.float32:
                theirs = d.cpu().contiguous().view(torch.int32).numpy().view(np.uint32)
                mine = ours
            else:
                theirs = d.cpu().contiguous().view(torch.int16).numpy().view(np.uint16)
                mine = bf16_rne(ours)
            same = int((mine == theirs).sum())
            entry.update(output=str(d.dtype), outputs=int(theirs.size), bit_exact=same)
            if split_k > 1:  # does the split decide these bits? The same model unsplit:
                udir = bdir + "_unsplit"
                unsplit_cmd = cmd[:cmd.index("--split-k")] if "--split-k" in cmd else cmd
                subprocess.run([udir if x == bdir else x for x in unsplit_cmd], capture_output=True, text=True, check=True)
                unsplit = np.load(os.path.join(udir, model + ".npy")).view(np.uint32)
                unsplit = unsplit if d.dtype == torch.float32 else bf16_rne(unsplit)
                entry["unsplit_differs"] = int((unsplit != theirs).sum())
            # On a mismatch, keep both sides for a look on a CPU.
            if same != theirs.size:
                failed = True
                bdir = os.path.join(out_dir, f"mismatch{len(results)}")
                os.makedirs(bdir, exist_ok=True)
                np.save(os.path.join(bdir, "torch_d.npy"), theirs)
                np.save(os.path.join(bdir, "torch_qa.npy"), qa.cpu().view(torch.uint8).numpy())
                np.save(os.path.join(bdir, "blockscale_d.npy"), ours)
                np.save(os.path.join(bdir, "torch_qw.npy"), qw.cpu().view(torch.uint8).numpy())
                np.save(os.path.join(bdir, "torch_sa.npy"), sa.float().cpu().numpy())
                np.save(os.path.join(bdir, "torch_sw.npy"), sw.float().cpu().numpy())
            unsplit_note = f" (unsplit: {entry['unsplit_differs']} differ)" if split_k > 1 else ""
            recorded_note = f", recorded {entry['recorded_split_k']}" if recorded else ""
            print(f"{label} [{model}, {d.dtype}, split-K {split_k}{recorded_note}]: {same} / {theirs.size} outputs "
                  "bit-exact" + unsplit_note)
            results.append(entry)

    info = {"torch": torch.__version__, "device": torch.cuda.get_device_name(0), "cuda": torch.version.cuda,
            "mode": "recorded" if recorded else "query", "cases": results}
    with open(os.path.join(out_dir, "fp8_scaled_vs_torch.json"), "w") as f:
        json.dump(info, f, indent=1)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
