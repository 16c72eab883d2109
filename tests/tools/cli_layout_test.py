#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""`blockscale layout` against NumPy re-statements of the functions that define each layout.

The layouts' closed forms are checked in tests/layout against index oracles; this checks what the
command does with files and arguments, with oracles written here from the defining code (torchao
to_blocked, the Triton tutorial's shuffle_scales_cdna4, aiter shuffle_scale_batched, FlashInfer
convert_to_block_layout and shuffle_matrix_a's row map, DeepGEMM's MN-major SFA, torchao's grouped
torch_to_blocked_2d_M_groups / _K_groups, DeepGEMM's psum m-grouped and k-grouped ue8m0 packing,
FlashInfer's SM90 mixed-input folded scales, and the weight interleave kernels of FlashInfer and
TRT-LLM, lane by lane):
  * convert: linear -> each layout (bytes, batch 2, a visible pad value) equals the oracle; back to
    linear gives the input; a direct conversion between two layouts equals the two steps; fp32
    scales of the Hopper layouts; the grouped (ragged MoE) layouts, and show's group starts and
    DeepGEMM psum layout;
  * --strict-padding: a changed padding byte exits 1 and writes nothing;
  * show --map / where: offsets against the oracle's positions, text and JSON;
  * weights: interleave and --undo of packed 4-bit weights against the kernels; --index and --bit
    against single-bit probes of the kernels, text and JSON;
  * errors (exit 2, message naming the rule): wrong file size, unknown layout or parameter, a shape
    the layout does not take, element types that disagree, a NaN or out-of-range pad, options of
    another subcommand, --map too large, bad --index.

usage: cli_layout_test.py BLOCKSCALE SCRATCH_DIR
"""
import json
import os
import subprocess
import sys

import numpy as np


def run(tool, *args, expect=0):
    r = subprocess.run([tool, "layout", *args], capture_output=True, text=True)
    assert r.returncode == expect, (args, r.returncode, r.stdout, r.stderr)
    return r


def pad_to(x, rm, cm, value):
    R, C = x.shape[-2:]
    Rp, Cp = -(-R // rm) * rm, -(-C // cm) * cm
    out = np.full(x.shape[:-2] + (Rp, Cp), value, dtype=x.dtype)
    out[..., :R, :C] = x
    return out


# ---- Oracles: one matrix (R, C) -> its stored array, flattened. ----

def to_blocked(s, pad):
    """torchao to_blocked: pad to (128, 4), view (rb, 128, cb, 4), permute (0, 2, 1, 3), reshape
    (-1, 4, 32, 4), transpose (1, 2)."""
    p = pad_to(s, 128, 4, pad)
    rb, cb = p.shape[0] // 128, p.shape[1] // 4
    b = p.reshape(rb, 128, cb, 4).transpose(0, 2, 1, 3).reshape(-1, 4, 32, 4).transpose(0, 2, 1, 3)
    return b.reshape(-1)


def shuffle_scales_cdna4_16(s, pad):
    """Triton tutorial shuffle_scales_cdna4(scales, 16) on the shape padded to (32, 8)."""
    p = pad_to(s, 32, 8, pad)
    sm, sn = p.shape
    return p.reshape(sm // 32, 2, 16, sn // 8, 2, 4, 1).transpose(0, 3, 5, 2, 4, 1, 6).reshape(-1)


def aiter_batched(s, width):
    """aiter shuffle_scale_batched(s, width) (exact multiples)."""
    N, K = s.shape
    kw = width if K >= 4 else K
    return s.reshape(-1, N // 128, 4, 32, K // kw, kw).transpose(0, 1, 4, 3, 2, 5).reshape(-1)


def convert_to_block_layout(w, block_k):
    M, K = w.shape
    return w.reshape(M, K // block_k, block_k).transpose(1, 0, 2).reshape(-1)


SRC_TO_DST_BLK16 = [0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15]


def shuffle_matrix_a_16(w):
    """shuffle_matrix_a with epilogue_tile_m 64 (blocks of 16 rows): row_indices[new] = old."""
    M = w.shape[0]
    idx = np.empty(M, dtype=np.int64)
    for old in range(M):
        idx[(old // 16) * 16 + SRC_TO_DST_BLK16[old % 16]] = old
    return w[idx]


def deepgemm_sfa(s, pad):
    """MN-major with M padded to 4 floats (get_mn_major_tma_aligned_tensor)."""
    return pad_to(s, 4, 1, pad).T.reshape(-1)


def ends_to_slices(ends):
    begin = 0
    for end in ends:
        yield begin, end
        begin = end


def torchao_m_groups(ends):
    """torch_to_blocked_2d_M_groups: a buffer of (R + 128 G) rows of C bytes; group g's to_blocked
    image written as rows from start_row_after_padding[g]."""
    def oracle(s, pad):
        R, C = s.shape
        out = np.full((R + 128 * len(ends)) * C, pad, s.dtype)
        start = 0
        for b, e in ends_to_slices(ends):
            if e == b:
                continue
            img = to_blocked(s[b:e], pad)
            out[start * C:start * C + img.size] = img
            start += -(-(e - b) // 128) * 128
        return out
    return oracle


def packed_ue8m0(s, pad):
    """DeepGEMM's packed ue8m0 image: rows padded to 4, columns to 4, (rows, words, 4) stored
    word-major (MN-major words, little-endian bytes)."""
    p = pad_to(s, 4, 4, pad)
    return p.reshape(p.shape[0], p.shape[1] // 4, 4).transpose(1, 0, 2).reshape(-1)


def deepgemm_psum_m_groups(ends, alignment):
    """transpose_and_pack_fp32_into_ue8m0 with the psum layout: group g valid in rows
    [align(psum[g-1]), psum[g]) of an M = sum(aligned sizes) matrix, other rows pad."""
    def oracle(s, pad):
        C = s.shape[1]
        sizes = [e - b for b, e in ends_to_slices(ends)]
        m = sum(-(-n // alignment) * alignment for n in sizes)
        padded = np.full((m, C), pad, s.dtype)
        prev = 0
        for (b, e), n in zip(ends_to_slices(ends), sizes):
            start = -(-prev // alignment) * alignment
            padded[start:start + n] = s[b:e]
            prev = start + n
        return packed_ue8m0(padded, pad)
    return oracle


def triton_ragged(ends, tokens):
    """triton_kernels BlackwellActMXScaleLayout with ragged metadata: pad_segments_triton into a
    (128 n_blocks(G, M, 128), K padded to 8) scratchpad (slice g at row 128 * block_offs[g]), then
    reshape (1, M_pad/128, 4, 32, K_pad/4, 4) and transpose(2, 4)."""
    def oracle(s, pad):
        R, C = s.shape
        n, m = len(ends), tokens or R
        n_blocks = m if m <= n else n - 1 - ((n - m - 1) // 128)
        m_pad, k_pad = 128 * n_blocks, -(-C // 8) * 8
        padded = np.full((m_pad, k_pad), pad, s.dtype)
        block = 0
        for b, e in ends_to_slices(ends):
            padded[128 * block:128 * block + e - b, :C] = s[b:e]
            block += -(-(e - b) // 128)
        return padded.reshape(1, m_pad // 128, 4, 32, k_pad // 4, 4).transpose(0, 1, 4, 3, 2, 5).reshape(-1)
    return oracle


def deepgemm_k_groups(ends):
    """get_k_grouped_mn_major_tma_aligned_packed_ue8m0_tensor: each group's packed image, end to end."""
    def oracle(s, pad):
        return np.concatenate([packed_ue8m0(s[:, b:e], pad) for b, e in ends_to_slices(ends) if e > b])
    return oracle


def flashinfer_folded(group_size):
    # interleave_moe_scales_for_sm90_mixed_gemm (FlashInfer 5823159c3) on one expert's uint8 scales.
    per_k128 = 128 // group_size
    m_slices = 16 // per_k128
    folded_m = 64 // m_slices

    def oracle(s, pad):
        rows, kgs = s.shape
        return s.reshape(rows // 64, m_slices, folded_m, kgs // per_k128, per_k128).transpose(0, 3, 2, 1, 4).reshape(-1)
    return oracle


def fp4_rewrite_flashinfer(x):
    # interleave_fp4_weights_for_sm90_mixed_gemm_kernel's mask-and-shift rewrite of a 32-bit word.
    steps = [(0x80, 24), (0x70, 18), (0x08, 12), (0x07, 6), (0x8000, 13), (0x7000, 7), (0x0800, 1), (0x0700, -5),
             (0x800000, 2), (0x700000, -4), (0x080000, -10), (0x070000, -16), (0x80000000, -1), (0x10000000, 1),
             (0x60000000, -3), (0x08000000, -13), (0x01000000, -11), (0x06000000, -15)]
    out = 0
    for mask, shift in steps:
        out |= (x & mask) << shift if shift >= 0 else (x & mask) >> -shift
    return out


def fp8_signs(x):
    # preprocess_fp4x8_signs_for_fp8.
    signs = (((x & 0x8) << 4) | ((x & 0x80) << 8) | ((x & 0x800) << 12) | ((x & 0x8000) << 16) |
             ((x & 0x80000) >> 16) | ((x & 0x800000) >> 12) | ((x & 0x8000000) >> 8) | ((x & 0x80000000) >> 4))
    return (x & 0x77777777) | signs


def weight_kernel(variant, w, rows, cols):
    # One expert (rows x cols/2 uint8) through the CUDA kernel of `variant`, thread by thread.
    src = w.reshape(-1)
    out = np.zeros_like(src)
    lanes = 32 if variant == "trtllm_sm90_fp4" else 16
    for block_id in range(rows // 2):
        row_id = block_id // 8 * 16 + block_id % 8
        for part in range(cols // 64):
            for lane in range(lanes):
                if variant == "flashinfer_sm90_fp4":
                    mma = lane // 4
                    dst = (row_id + (mma % 2) * 8) * cols // 2 + part * 32 + lane // 8 * 16 + (lane % 4) * 4
                    col = part * 32 + mma * 8 + lane % 4
                    a, b = row_id * cols // 2 + col, (row_id + 8) * cols // 2 + col
                    x = int(src[a]) | int(src[b]) << 8 | int(src[a + 4]) << 16 | int(src[b + 4]) << 24
                    out[dst:dst + 4] = np.frombuffer(fp4_rewrite_flashinfer(x).to_bytes(4, "little"), np.uint8)
                elif variant == "trtllm_sm90_fp4":
                    dst = ((row_id + (lane // 8 % 2) * 8) * cols // 2 + part * 32 + lane // 16 * 16 + (lane % 4) * 4 +
                           (lane % 8) // 4 * 2)
                    a, b = int(src[row_id * cols // 2 + part * 32 + lane]), int(src[(row_id + 8) * cols // 2 + part * 32 + lane])
                    out[dst], out[dst + 1] = (a & 0x0F) | ((b & 0x0F) << 4), (b & 0xF0) | (a >> 4)
                else:  # the 16-bit kernels: int4, fp4_fp8
                    dst_unit = (row_id + (lane % 8) // 4 * 8) * cols // 4 + part * 16 + lane // 8 * 8 + lane % 4 * 2
                    ua, ub = row_id * cols // 4 + part * 16 + lane, (row_id + 8) * cols // 4 + part * 16 + lane
                    x = (int(src[2 * ua]) | int(src[2 * ua + 1]) << 8 | int(src[2 * ub]) << 16 |
                         int(src[2 * ub + 1]) << 24)
                    if variant == "flashinfer_sm90_fp4_fp8":
                        x = fp8_signs(x)
                    out[2 * dst_unit:2 * dst_unit + 4] = np.frombuffer(x.to_bytes(4, "little"), np.uint8)
    return out


CASES = [
    # (layout text, R, C, oracle(matrix, pad) -> flat)
    ("tiled_128x4", 200, 7, to_blocked),
    ("tiled_128x4", 256, 8, to_blocked),
    ("cdna4_mfma16", 40, 9, shuffle_scales_cdna4_16),
    ("gfx1250_mx:scale_k_width=16", 256, 32, lambda s, pad: aiter_batched(s, 16)),
    ("gfx1250_mx:scale_k_width=8", 128, 2, lambda s, pad: aiter_batched(s, 8)),
    ("block_major_k:block_k=128", 48, 384, lambda s, pad: convert_to_block_layout(s, 128)),
    ("block_major_k:block_k=128,rows=trtllm_shuffle16", 64, 256,
     lambda s, pad: convert_to_block_layout(shuffle_matrix_a_16(s), 128)),
    ("rows:0,5,133,133,300", 300, 8, torchao_m_groups([0, 5, 133, 133, 300])),
    ("deepgemm_sm100_rows:alignment=128:0,5,133,133,300", 300, 7, deepgemm_psum_m_groups([0, 5, 133, 133, 300], 128)),
    ("deepgemm_sm100_rows:alignment=32:3,40,41", 41, 5, deepgemm_psum_m_groups([3, 40, 41], 32)),
    ("deepgemm_sm100_cols:0,3,4,4,13", 132, 13, deepgemm_k_groups([0, 3, 4, 4, 13])),
    ("triton_kernels_rows:tokens=400:0,5,133,133,300", 300, 7, triton_ragged([0, 5, 133, 133, 300], 400)),
    ("triton_kernels_rows:1,130", 130, 9, triton_ragged([1, 130], 0)),
    ("sm90_mixed_folded:group_size=32", 128, 12, flashinfer_folded(32)),
    ("sm90_mixed_folded:group_size=16", 64, 16, flashinfer_folded(16)),
]


def main():
    tool, scratch = sys.argv[1], sys.argv[2]
    os.makedirs(scratch, exist_ok=True)
    f = lambda name: os.path.join(scratch, name)  # noqa: E731
    rng = np.random.default_rng(5)
    checked = 0

    # ---- convert, bytes: linear -> layout -> linear, and layout -> layout directly.
    stored = {}
    for text, R, C, oracle in CASES:
        batch, pad = 2, 0x7E
        s = rng.integers(0, 255, size=(batch, R, C), dtype=np.uint8)  # 0..254: no NaN code
        s.tofile(f("in.bin"))
        r = run(tool, "convert", "--from", "linear", "--to", text, "--rows", str(R), "--cols", str(C), "--batch",
                str(batch), "--pad", "0x7E", "--in", f("in.bin"), "--out", f("out.bin"), "--json")
        info = json.loads(r.stdout)
        want = np.concatenate([oracle(s[b], pad) for b in range(batch)])
        got = np.fromfile(f("out.bin"), dtype=np.uint8)
        assert info["out_bytes"] == want.size and info["element"] == "byte", (text, info)
        assert np.array_equal(got, want), text
        run(tool, "convert", "--from", text, "--to", "linear", "--rows", str(R), "--cols", str(C), "--batch", str(batch),
            "--in", f("out.bin"), "--out", f("back.bin"), "--strict-padding", "--pad", "0x7E")
        assert np.array_equal(np.fromfile(f("back.bin"), dtype=np.uint8), s.reshape(-1)), text
        stored[(text, R, C)] = (s, got)
        checked += 1

    # A direct conversion between two layouts is the two steps through linear (pad 0 on the way).
    s, l1 = stored[("tiled_128x4", 200, 7)]
    l1.tofile(f("l1.bin"))
    run(tool, "convert", "--from", "tiled_128x4", "--to", "cdna4_mfma16", "--rows", "200", "--cols", "7", "--batch", "2",
        "--in", f("l1.bin"), "--out", f("direct.bin"))
    want = np.concatenate([shuffle_scales_cdna4_16(s[b], 0) for b in range(2)])
    assert np.array_equal(np.fromfile(f("direct.bin"), dtype=np.uint8), want)
    checked += 1

    # ---- fp32 scales: the Hopper layouts store floats (the default element), pad 0.0 or -1.5.
    sf = rng.standard_normal((3, 9, 5)).astype(np.float32)
    sf.tofile(f("f.bin"))
    r = run(tool, "convert", "--from", "linear", "--to", "deepgemm_sm90_sfa", "--rows", "9", "--cols", "5", "--batch",
            "3", "--pad", "-1.5", "--in", f("f.bin"), "--out", f("sfa.bin"), "--json")
    assert json.loads(r.stdout)["element"] == "fp32"
    want = np.concatenate([deepgemm_sfa(sf[b], np.float32(-1.5)) for b in range(3)])
    assert np.array_equal(np.fromfile(f("sfa.bin"), dtype=np.float32).view(np.uint32), want.view(np.uint32))
    run(tool, "convert", "--from", "deepgemm_sm90_sfa", "--to", "cutlass_blockwise:major=k", "--rows", "9", "--cols",
        "5", "--batch", "3", "--in", f("sfa.bin"), "--out", f("k.bin"), "--strict-padding", "--pad", "-1.5")
    assert np.array_equal(np.fromfile(f("k.bin"), dtype=np.float32), sf.reshape(-1))
    checked += 1

    # ---- --strict-padding: one changed pad byte of the second matrix; nothing is written.
    s, l1 = stored[("tiled_128x4", 200, 7)]
    bad = l1.copy()
    pad_positions = np.flatnonzero(to_blocked(np.zeros((200, 7), np.uint8), 1) == 1)
    bad[2048 + pad_positions[5]] = 0x11
    bad.tofile(f("bad.bin"))
    if os.path.exists(f("never.bin")):
        os.remove(f("never.bin"))
    r = run(tool, "convert", "--from", "tiled_128x4", "--to", "linear", "--rows", "200", "--cols", "7", "--batch", "2",
            "--pad", "0x7E", "--strict-padding", "--in", f("bad.bin"), "--out", f("never.bin"), expect=1)
    assert f"matrix 1, offset {pad_positions[5]}" in r.stderr, r.stderr
    assert not os.path.exists(f("never.bin"))
    # Without the flag the padding is not read.
    run(tool, "convert", "--from", "tiled_128x4", "--to", "linear", "--rows", "200", "--cols", "7", "--batch", "2",
        "--in", f("bad.bin"), "--out", f("ok.bin"))
    assert np.array_equal(np.fromfile(f("ok.bin"), dtype=np.uint8), s.reshape(-1))
    checked += 1

    # ---- grouped layouts: show lists where each group starts, and DeepGEMM's psum layout (its
    # grouped_layout tensor: the padded row where each group ends).
    info = json.loads(run(tool, "show", "deepgemm_sm100_rows:alignment=128:0,5,133,133,300", "--rows", "300", "--cols",
                          "7", "--json").stdout)
    assert info["group_starts"] == [0, 0, 128, 256, 256, 512], info
    assert info["deepgemm_psum"] == [0, 5, 256, 256, 423], info
    assert info["storage_bytes"] == 8 * 512 and info["stored_shape"] == [4096], info
    human = run(tool, "show", "rows:5,133", "--rows", "133", "--cols", "4").stdout
    assert "group starts 0, 128, 256" in human and "psum" not in human, human
    kinds = json.loads(run(tool, "list", "--json").stdout)
    assert [k["parameters"] for k in kinds if k["kind"] == "deepgemm_sm100_rows"] == ["[alignment] [padded_rows]"]
    assert all(k["grouped"] == (k["kind"] in ("rows", "cols", "deepgemm_sm100_rows", "deepgemm_sm100_cols",
                                              "triton_kernels_rows")) for k in kinds)
    info = json.loads(run(tool, "show", "triton_kernels_rows:tokens=400:5,133", "--rows", "133", "--cols", "6",
                          "--json").stdout)
    assert info["group_starts"] == [0, 128, 640] and info["storage_bytes"] == 640 * 8, info  # 1 + ceil(399 / 128) blocks
    assert "deepgemm_psum" not in info, info
    checked += 1

    # ---- show --map and where against the oracle's positions.
    for text, R, C, oracle in [CASES[0], CASES[3], CASES[6], CASES[7], CASES[8], CASES[10], CASES[11]]:
        idx = np.arange(R * C, dtype=np.int64).reshape(R, C)
        flat = oracle(idx, -1)
        pos = np.full(R * C, -1, dtype=np.int64)
        pos[flat[flat >= 0]] = np.flatnonzero(flat >= 0)
        info = json.loads(run(tool, "show", text, "--rows", str(R), "--cols", str(C), "--map", "--json").stdout)
        assert info["storage_elements"] == flat.size and info["padding_elements"] == flat.size - R * C, text
        assert np.array_equal(np.array(info["offsets"]).reshape(-1), pos), text
        human = run(tool, "show", text, "--rows", str(R), "--cols", str(C), "--map").stdout
        row_lines = [line for line in human.splitlines() if line.strip().split(":")[0].strip().isdigit()]
        assert len(row_lines) == R and row_lines[1].split(":")[1].split() == [str(v) for v in pos[C:2 * C]], text
        for r_, c_ in [(0, 0), (R - 1, C - 1), (R // 3, C // 2)]:
            w = json.loads(run(tool, "where", text, "--rows", str(R), "--cols", str(C), "--index", f"{r_},{c_}",
                               "--json").stdout)
            assert w["offset"] == pos[r_ * C + c_], (text, r_, c_)
            back = json.loads(run(tool, "where", text, "--rows", str(R), "--cols", str(C), "--offset",
                                  str(w["offset"]), "--json").stdout)
            assert back["index"] == [r_, c_], (text, back)
            # The human forms say the same.
            human = run(tool, "where", text, "--rows", str(R), "--cols", str(C), "--index", f"{r_},{c_}").stdout
            assert human.endswith(f"R = {R}, C = {C}: S[{r_}][{c_}] is at offset {w['offset']}\n"), (text, human)
            human = run(tool, "where", text, "--rows", str(R), "--cols", str(C), "--offset", str(w["offset"])).stdout
            assert human.endswith(f"R = {R}, C = {C}: offset {w['offset']} holds S[{r_}][{c_}]\n"), (text, human)
        for off in np.flatnonzero(flat < 0)[:3]:
            w = json.loads(run(tool, "where", text, "--rows", str(R), "--cols", str(C), "--offset", str(off),
                               "--json").stdout)
            assert w["index"] is None, (text, off)
            assert "is padding" in run(tool, "where", text, "--rows", str(R), "--cols", str(C), "--offset",
                                       str(off)).stdout
        checked += 1
    kinds = json.loads(run(tool, "list", "--json").stdout)
    assert {k["kind"] for k in kinds} >= {"tiled_128x4", "block_major_k", "gfx1250_mx"}
    assert [k["parameters"] for k in kinds if k["kind"] == "block_major_k"] == ["block_k [rows]"]

    # ---- weights: whole experts against the kernels, back with --undo; where single bits go.
    kinds = json.loads(run(tool, "list", "--json").stdout)
    variants = [k["kind"] for k in kinds if k.get("weight_interleave")]
    assert variants == ["flashinfer_sm90_fp4", "flashinfer_sm90_fp4_fp8", "sm90_int4", "trtllm_sm90_fp4"], variants
    rows, cols = 32, 128
    per = rows * cols // 2
    w = rng.integers(0, 256, size=(2, per), dtype=np.uint8)
    w.tofile(f("w.bin"))
    for variant in variants:
        info = json.loads(run(tool, "weights", variant, "--rows", str(rows), "--cols", str(cols), "--batch", "2", "--in",
                              f("w.bin"), "--out", f("wi.bin"), "--json").stdout)
        assert info["bytes"] == 2 * per and info["undo"] is False, info
        want = np.concatenate([weight_kernel(variant, w[b], rows, cols) for b in range(2)])
        assert np.array_equal(np.fromfile(f("wi.bin"), dtype=np.uint8), want), variant
        run(tool, "weights", variant, "--rows", str(rows), "--cols", str(cols), "--batch", "2", "--undo", "--in",
            f("wi.bin"), "--out", f("wb.bin"))
        assert np.array_equal(np.fromfile(f("wb.bin"), dtype=np.uint8), w.reshape(-1)), variant
        for r_, k_ in [(13, 70), (rows - 1, cols - 1)]:
            bits = json.loads(run(tool, "weights", variant, "--rows", str(rows), "--cols", str(cols), "--index",
                                  f"{r_},{k_}", "--json").stdout)["bits"]
            for j in range(4):
                one = np.zeros(per, np.uint8)
                one[r_ * cols // 2 + k_ // 2] = 1 << (4 * (k_ % 2) + j)
                moved = weight_kernel(variant, one, rows, cols)
                (byte,) = np.flatnonzero(moved)
                assert bits[j] == 8 * byte + int(moved[byte]).bit_length() - 1, (variant, r_, k_, j)
                back = json.loads(run(tool, "weights", variant, "--rows", str(rows), "--cols", str(cols), "--bit",
                                      str(bits[j]), "--json").stdout)
                assert back["index"] == [r_, k_] and back["code_bit"] == j, (variant, back)
                human = run(tool, "weights", variant, "--rows", str(rows), "--cols", str(cols), "--bit",
                            str(bits[j])).stdout
                assert human == (f"{variant}, R = {rows}, K = {cols}: bit {bits[j]} (byte {bits[j] // 8} bit "
                                 f"{bits[j] % 8}) holds bit {j} of code ({r_}, {k_})\n"), (variant, human)
            human = run(tool, "weights", variant, "--rows", str(rows), "--cols", str(cols), "--index",
                        f"{r_},{k_}").stdout
            where = ", ".join(f"byte {b // 8} bit {b % 8}" for b in bits)
            assert human == (f"{variant}, R = {rows}, K = {cols}: code ({r_}, {k_}), bits 0..3 (bit 3 = sign) at "
                             f"{where}\n"), (variant, human)
        checked += 1
    human = run(tool, "weights", "sm90_int4", "--rows", "32", "--cols", "128").stdout
    assert "2048 bytes per expert" in human and "4 of 16 rows x 64 codes" in human, human
    info = json.loads(run(tool, "weights", "sm90_int4", "--rows", "32", "--cols", "128", "--json").stdout)
    assert info["bytes"] == 2048 and info["tiles"] == 4 and info["rows"] == 32 and info["cols"] == 128, info

    # A batch of empty matrices (no element, no storage) is the empty file, at once whatever its size.
    open(f("empty.bin"), "wb").close()
    r = run(tool, "convert", "--from", "linear", "--to", "tiled_128x4", "--rows", "0", "--cols", "0", "--batch",
            str(2**40), "--in", f("empty.bin"), "--out", f("empty_out.bin"))
    assert r.returncode == 0 and os.path.getsize(f("empty_out.bin")) == 0, r.stderr

    # ---- errors: exit 2 with the rule named.
    np.zeros(100, np.uint8).tofile(f("short.bin"))
    np.zeros(100, np.float32).tofile(f("f32_10x10.bin"))
    errors = [
        (["convert", "--from", "linear", "--to", "tiled_128x4", "--rows", "200", "--cols", "7", "--in", f("short.bin"),
          "--out", f("x.bin")], "has 100 bytes; --from linear with R = 200, C = 7 and --batch 1"),
        (["convert", "--from", "deepgemm_sm90_sfa", "--to", "tiled_128x4", "--rows", "8", "--cols", "4", "--in",
          f("short.bin"), "--out", f("x.bin")], "say which with --element byte|fp32"),
        (["convert", "--from", "linear", "--to", "tiled_128x4", "--rows", "10", "--cols", "10", "--pad", "0xFF",
          "--in", f("short.bin"), "--out", f("x.bin")], "the pad value is a NaN"),
        (["convert", "--from", "linear", "--to", "tiled_128x4", "--rows", "10", "--cols", "10", "--pad", "300",
          "--in", f("short.bin"), "--out", f("x.bin")], "--pad must be a byte"),
        (["convert", "--from", "linear", "--to", "deepgemm_sm90_sfa", "--element", "fp32", "--rows", "10", "--cols",
          "10", "--pad", "1e-50", "--in", f("short.bin"), "--out", f("x.bin")], "--pad 1e-50 is out of float32's range"),
        (["convert", "--from", "linear", "--to", "deepgemm_sm90_sfa", "--element", "fp32", "--rows", "10", "--cols",
          "10", "--pad", "nan", "--in", f("f32_10x10.bin"), "--out", f("x.bin")], "the pad value is a float NaN"),
        (["convert", "--from", "linear", "--to", "tiled_128x4", "--rows", "10", "--cols", "10", "--element", "int8",
          "--in", f("short.bin"), "--out", f("x.bin")], "--element must be byte or fp32"),
        (["convert", "--from", "linear", "--to", "tiled_128x4", "--rows", "10", "--cols", "10", "--in",
          f("missing.bin"), "--out", f("x.bin")], "cannot open --in"),
        (["convert", "--from", "linear", "--to", "tiled_128x4", "--rows", "10", "--cols", "10", "--in",
          os.path.dirname(f("x.bin")), "--out", f("x.bin")], "is not a regular file (a directory or a device)"),
        (["convert", "--from", "linear", "--to", "block_major_k:block_k=128", "--rows", "2", "--cols", "50", "--in",
          f("short.bin"), "--out", f("x.bin")], "C must be a multiple of block_k = 128"),
        (["convert", "--to", "tiled_128x4", "--rows", "1", "--cols", "1", "--in", f("short.bin"), "--out",
          f("x.bin")], "--from is required"),
        (["show", "tiled_129x4", "--rows", "1", "--cols", "1"], "unknown scale layout 'tiled_129x4'"),
        (["show", "gfx1250_mx:scale_k_width=12", "--rows", "1", "--cols", "1"], "scale_k_width must be 4, 8 or 16"),
        (["show", "tiled_128x4", "--rows", "300", "--cols", "300", "--map"], "--map prints at most 65536"),
        (["show", "tiled_128x4", "--cols", "3"], "--rows and --cols are required"),
        (["show", "tiled_128x4", "--rows", "-1", "--cols", "3"], "option --rows must be in"),
        (["show", "tiled_128x4", "--rows", "4", "--cols", "4", "--in", "x"], "--in does not apply to 'show'"),
        (["where", "tiled_128x4", "--rows", "4", "--cols", "4"], "give one of --index r,c and --offset N"),
        (["where", "tiled_128x4", "--rows", "4", "--cols", "4", "--index", "1;2"], "--index expects r,c"),
        (["where", "tiled_128x4", "--rows", "4", "--cols", "4", "--index", "4,0"], "is outside the matrix"),
        (["where", "tiled_128x4", "--rows", "4", "--cols", "4", "--offset", "512"], "is outside the storage of 512"),
        (["frobnicate"], "unknown subcommand 'frobnicate'"),
        (["show"], "show needs a layout"),
        (["show", "tiled_128x4", "extra", "--rows", "4", "--cols", "4"], "unexpected argument 'extra'"),
        (["where", "tiled_128x4", "extra", "--rows", "4", "--cols", "4", "--offset", "0"], "unexpected argument 'extra'"),
        (["show", "deepgemm_sm100_cols:4", "--rows", "6", "--cols", "4"], "deepgemm_sm100 cols groups need R % 4 == 0"),
        (["show", "rows:4", "--rows", "4", "--cols", "6"], "rows groups need C % 4 == 0"),
        (["show", "rows:5", "--rows", "4", "--cols", "4"], "the last group end must be the extent along the axis (R)"),
        (["show", "deepgemm_sm100_rows:alignment=0:4", "--rows", "4", "--cols", "4"], "alignment 0 is outside"),
        (["show", "cols:alignment=8:4", "--rows", "4", "--cols", "4"], "parameters apply to deepgemm_sm100_rows"),
        (["show", "triton_kernels_cols:4", "--rows", "4", "--cols", "4"], "not 'triton_kernels_cols'"),
        (["show", "triton_kernels_rows:tokens=3:4", "--rows", "4", "--cols", "4"], "tokens (3) must be at least R"),
        (["convert", "--from", "linear", "--to", "rows:4", "--rows", "4", "--cols", "4", "--element", "fp32", "--in",
          f("short.bin"), "--out", f("x.bin")], "grouped layouts store byte scales"),
        (["convert", "--from", "deepgemm_sm90_sfa", "--to", "rows:4", "--rows", "4", "--cols", "4", "--in",
          f("short.bin"), "--out", f("x.bin")], "say which with --element byte|fp32"),
        (["show", "sm90_mixed_folded:group_size=32", "--rows", "96", "--cols", "4"],
         "interleave_moe_scales_for_sm90_mixed_gemm does not pad: R must be a multiple of 64"),
        (["show", "sm90_mixed_folded:group_size=24", "--rows", "64", "--cols", "4"], "group_size must be 8, 16, 32"),
        (["weights", "fp4", "--rows", "16", "--cols", "64"], "unknown weight interleave 'fp4'"),
        (["weights", "sm90_int4", "--rows", "24", "--cols", "64"], "rows must be a multiple of 16"),
        (["weights", "sm90_int4", "--rows", "16", "--cols", "96"], "cols must be a multiple of 64"),
        (["weights", "sm90_int4", "--rows", "16", "--cols", "64", "--in", f("short.bin"), "--out", f("x.bin")],
         "has 100 bytes; sm90_int4 with R = 16, K = 64 and --batch 1 (512 bytes each) needs 512"),
        (["weights", "sm90_int4", "--rows", "16", "--cols", "64", "--in", f("short.bin")],
         "a conversion needs both --in and --out"),
        (["weights", "sm90_int4", "--rows", "16", "--cols", "64", "--index", "0,0", "--bit", "3"],
         "give at most one of --in/--out, --index r,k and --bit N"),
        (["weights", "sm90_int4", "--rows", "16", "--cols", "64", "--undo"], "--batch and --undo apply to a conversion"),
        (["weights", "sm90_int4", "--rows", "16", "--cols", "64", "--index", "16,0"], "is outside the matrix"),
        (["weights", "sm90_int4", "--rows", "16", "--cols", "64", "--bit", "4096"], "is outside the 512 bytes"),
        (["weights", "--rows", "16", "--cols", "64"], "weights needs an interleave"),
        (["weights", "sm90_int4", "--rows", "16", "--cols", "64", "--map"], "--map does not apply to 'weights'"),
        (["show", "tiled_128x4", "--rows", "4", "--cols", "4", "--undo"], "--undo does not apply to 'show'"),
    ]
    for args, rule in errors:
        r = run(tool, *args, expect=2)
        assert rule in r.stderr, (args, r.stderr)
        checked += 1
    print(f"cli_layout: {checked} checks passed")


if __name__ == "__main__":
    main()
