#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""What bits does a 2:4 sparse GEMM of PyTorch produce? Runs of torch's semi-structured sparse
matmul (cuSPARSELt through torch._cslt_sparse_mm, and the CUTLASS backend of
torch.sparse.to_sparse_semi_structured) for `blockscale`'s sparse GEMM models
(docs/emulator.md, "2:4 sparse GEMMs").

Runs on a Hopper GPU with PyTorch (the device machine; nothing here runs in CI). A (M x K) is the
sparse operand, B (K x N) the dense one, D = A B. Every 4-element group along K of every row of A
holds exactly two nonzero values (or, in the probes, at most two nonzero ones, the rest +0 beside
nonnegative B), so the kept positions are the nonzero ones whatever the compressor picks.

Data kinds:
* gaussian: A pruned by magnitude (2:4, ASP's rule), B Gaussian;
* wide: as gaussian, each element times 2^u, u uniform in [-8, 6] (-3..3 for e4m3), so that the
  fused sums truncate and the fp32 sums round;
* random: random finite bit patterns (nonzero in A's kept positions);
* probe_step: output (i, j) tests the boundary before instruction step s = Q i + (j mod Q),
  Q = ceil(steps / M) (a step is STEP_K logical K: 64 for e4m3, 32 for f16/bf16, 16 for f32/tf32):
  a small product in the last group of step s-1, L and -L in the first group(s) of step s. Inside
  one accumulator chain the fused sum of step s aligns to L and drops the small product; the
  output is the small product exactly when step s starts a new partial sum (a split-K slice).
* unit_a, unit_b (f32 only): A (or B) +-1, the other Gaussian: which operand is rounded how.

Modes: "data" writes every run's inputs and outputs (below); "tf32" does so for f32 input only, with
conversion probes (single_a, single_a_grid, single_a_special, single_b: one nonzero product per output, so D shows
what the kernel makes of one element of A or of B); "edges" writes the runs that show what the compressor
and the kernels do outside pruned finite data: fill (every group pattern of A over {+0, -0, 1, 2, -1}, 625 of
them, against columns of B with Inf (e4m3: NaN) at one position, so that a NaN shows which zero positions the
compressor keeps, and decode columns that show which nonzero ones it keeps when a group holds more than it
stores; fill_subnormal: the same over {+0, s, -s, 1, S}, s and S the smallest and largest subnormal), single_a_overflow and single_a_overflow_neg_b (every f32 value whose tf32 rounding as A passes the
largest tf32 value, both signs, and the special values, times B = 1 and B = -1) and single_b_special (specials and the largest values as B); "sweep" runs probe_step over shapes and
writes DIR/split_sweep.json, each call's restarts (the K offsets where a new slice begins).

File format (DIR/<name>.sparse_mm): one ASCII header line
  blockscale-sparse-mm 1 key=value ...   (library backend kernel a b out m n k step_k repeats
                                          repeats_identical; or error=... for a refused call)
followed by A (M x K codes, row-major, pruned positions +0), B transposed (N x K codes, row-major)
and D (M x N codes, row-major), little-endian, each code as wide as its format (f32 4 bytes,
f16/bf16 2, e4m3 1).

usage: probe_sparse_mm.py DIR [SEED] [REPEATS] [data|tf32|edges|sweep]
"""
import os
import sys

import torch

DTYPES = {"f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32, "e4m3": torch.float8_e4m3fn}
WORD = {1: torch.uint8, 2: torch.int16, 4: torch.int32}
STEP_K = {"e4m3": 64, "f16": 32, "bf16": 32, "f32": 16}


def header_value(s):
    return str(s).replace(" ", "_").replace("\n", "_").replace("=", ":")


def codes(t):
    t = t.contiguous().cpu()
    return t.view(WORD[t.element_size()]).numpy().tobytes()


def write(path, meta, a=None, b_t=None, d=None):
    head = "blockscale-sparse-mm 1 " + " ".join(f"{k}={header_value(v)}" for k, v in meta.items()) + "\n"
    with open(path, "wb") as f:
        f.write(head.encode())
        if d is not None:
            f.write(codes(a))
            f.write(codes(b_t))
            f.write(codes(d))


def prune(x, name):
    """Keep the largest magnitudes of each group along K: 2 of 4, or for f32 (tf32) 1 of 2 (PTX
    ISA 9.7.14.6.1); ties keep the lower position."""
    m, k = x.shape
    size, kept = (2, 1) if name == "f32" else (4, 2)
    g = x.reshape(m, k // size, size)
    keep = g.abs().argsort(dim=-1, descending=True, stable=True)[..., :kept]
    mask = torch.zeros_like(g, dtype=torch.bool).scatter_(-1, keep, True)
    return mask.reshape(m, k)


def representable(x, name):
    """x rounded to the format, held exactly in float32 (float8 tensors take few CPU ops)."""
    return x.to(DTYPES[name]).float()


def nonzero_kept(q, mask, name):
    """Kept values that rounded to zero become the smallest normal of the format, same sign."""
    tiny = torch.finfo(DTYPES[name]).smallest_normal
    q = torch.where(mask & (q == 0), torch.where(torch.signbit(q), -tiny, tiny), q)
    return torch.where(mask, q, torch.zeros(()))


def random_codes(shape, name, gen):
    """Random finite bit patterns of the format as float32 values; NaN and Inf codes, and (f32,
    bf16) magnitudes beyond 2^40 that could overflow the sums, are redrawn as 1."""
    if name == "f32":
        raw = torch.randint(0, 1 << 32, shape, generator=gen, dtype=torch.int64)
        exp = torch.randint(127 - 40, 127 + 40, shape, generator=gen, dtype=torch.int64)
        t = ((raw & 0x807FFFFF) | (exp << 23)).to(torch.int64)
        t = torch.where(t >= 1 << 31, t - (1 << 32), t).to(torch.int32).view(torch.float32)
    elif name == "e4m3":
        t = torch.randint(0, 256, shape, generator=gen, dtype=torch.uint8).view(torch.float8_e4m3fn).float()
    else:
        raw = torch.randint(-(1 << 15), 1 << 15, shape, generator=gen, dtype=torch.int64).to(torch.int16)
        t = raw.view(DTYPES[name]).float()
    ok = torch.isfinite(t) & (t.abs() <= 2.0 ** 40)
    return torch.where(ok, t, torch.ones(()))


def operands(name, kind, m, n, k, gen):
    """A (M x K) and B transposed (N x K) as float32 tensors of values the format holds exactly."""
    if kind == "probe_step":
        return probe_step(name, m, n, k)
    if kind in ("unit_a", "unit_b"):  # one operand +-1 (tf32 diagnosis: which operand rounds how)
        a = torch.randn(m, k, generator=gen)
        b = torch.randn(n, k, generator=gen)
        a = torch.sign(a) if kind == "unit_a" else a
        b = torch.sign(b) if kind == "unit_b" else b
        return nonzero_kept(representable(a, name), prune(torch.randn(m, k, generator=gen), name), name), b
    if kind == "random":
        a = random_codes((m, k), name, gen)
        return nonzero_kept(a, prune(torch.randn(m, k, generator=gen), name), name), random_codes((n, k), name, gen)
    xa = torch.randn(m, k, generator=gen)
    xb = torch.randn(n, k, generator=gen)
    if kind == "wide":
        lo, hi = (-3, 4) if name == "e4m3" else (-8, 7)
        xa = xa * torch.pow(2.0, torch.randint(lo, hi, (m, k), generator=gen).float())
        xb = xb * torch.pow(2.0, torch.randint(lo, hi, (n, k), generator=gen).float())
    if name == "e4m3":
        xa, xb = xa.clamp(-448, 448), xb.clamp(-448, 448)
    return nonzero_kept(representable(xa, name), prune(xa, name), name), representable(xb, name)


def probe_step(name, m, n, k):
    """Output (i, j) tests the boundary before step s = Q i + (j mod Q), Q = ceil(steps / M): the
    small product at the last group of step s-1, L and -L in the first group(s) of step s, so that
    no 2:4 group (tf32: 1:2 pair) of A holds more than its share of nonzero values."""
    step = STEP_K[name]
    steps = k // step
    q = -(-steps // m)
    if q > n:
        raise ValueError(f"probe_step needs N >= {q} for M = {m}, K = {k}")
    small_a, small_b = (2.0 ** -9, 1.0) if name == "e4m3" else (2.0 ** -9, 2.0 ** -9)
    minus_at = 2 if name == "f32" else 1  # tf32 keeps one of each pair: L and -L in pairs 0 and 1
    small_at = step - 1 if name == "f32" else step - 2
    a = torch.zeros(m, k)
    b_t = torch.zeros(n, k)
    for i in range(m):
        for r in range(q):
            s = q * i + r
            if 1 <= s < steps:
                a[i, step * (s - 1) + small_at] = small_a
                a[i, step * s] = 256.0
                a[i, step * s + minus_at] = -256.0
    for j in range(n):
        r = j % q
        for s in range(r, steps, q):
            if s >= 1:
                b_t[j, step * (s - 1) + small_at] = small_b
                b_t[j, step * s] = 1.0
                b_t[j, step * s + minus_at] = 1.0
    return a, b_t


def restarts(name, m, n, k, d):
    """K offsets before which a new partial sum starts, read off a probe_step result."""
    step = STEP_K[name]
    steps = k // step
    q = -(-steps // m)
    f = d.float().cpu()
    return [s * step for s in range(1, steps) if f[s // q, s % q] != 0]


def kernels_of(fn):
    """Names of the CUDA kernels one call launches."""
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    names = sorted({e.name for e in prof.events() if str(e.device_type).endswith("CUDA")})
    return "|".join(n[:120] for n in names) if names else "unknown"


def cusparselt_call(a_dev, b_dev, out_dtype):
    comp = torch._cslt_compress(a_dev)
    kwargs = {}
    if out_dtype is not None:
        kwargs["out_dtype"] = out_dtype
    return lambda: torch._cslt_sparse_mm(comp, b_dev, **kwargs)


def data_jobs(gen):
    """(name, kind, m, n, k, A, B^T, out dtype) for the runs whose inputs and outputs are written."""
    jobs = []
    for name in ("f16", "bf16", "f32", "e4m3"):
        long_k = 256 * STEP_K[name]
        shapes = [("gaussian", 128, 128, 2048), ("wide", 128, 128, 2048), ("random", 128, 128, 2048),
                  ("gaussian", 64, 64, long_k), ("wide", 64, 64, long_k)]
        if name == "f32":
            shapes += [("unit_a", 64, 64, 256), ("unit_b", 64, 64, 256)]
        outs = [None, torch.bfloat16, torch.float16, torch.float32] if name == "e4m3" else [None]
        for kind, m, n, k in shapes:
            a, b_t = operands(name, kind, m, n, k, gen)
            jobs += [(name, kind, m, n, k, a, b_t, out) for out in outs]
    return jobs


def f32_patterns(count, gen):
    """f32 values for the conversion probes: random significands with exponents 2^-20..2^20 and
    either sign; a quarter with the 13 bits below tf32's 10-bit fraction set to an exact tie
    (0x1000), an eighth just below and just above a tie (0x0FFF, 0x1001), a few subnormals."""
    mant = torch.randint(0, 1 << 23, (count,), generator=gen, dtype=torch.int64)
    low = torch.randint(0, 8, (count,), generator=gen, dtype=torch.int64)
    mant = torch.where(low < 2, (mant & ~0x1FFF) | 0x1000, mant)
    mant = torch.where(low == 2, (mant & ~0x1FFF) | 0x0FFF, mant)
    mant = torch.where(low == 3, (mant & ~0x1FFF) | 0x1001, mant)
    exp = torch.randint(127 - 20, 127 + 21, (count,), generator=gen, dtype=torch.int64)
    exp[:8] = 0  # subnormals
    sign = torch.randint(0, 2, (count,), generator=gen, dtype=torch.int64)
    bits = (sign << 31) | (exp << 23) | mant
    bits = torch.where(bits >= 1 << 31, bits - (1 << 32), bits).to(torch.int32)
    v = bits.view(torch.float32)
    return torch.where(v == 0, torch.ones(()), v)


def grid_patterns():
    """Every 10-bit tf32 fraction h with each of four low parts (the 13 bits tf32 drops: 0, 1,
    0x1000, 0x1FFF), positive with exponent 0, then the same negative with exponent 6: 8192 values."""
    i = torch.arange(4096, dtype=torch.int64)
    low = torch.tensor([0, 1, 0x1000, 0x1FFF], dtype=torch.int64)[i // 1024]
    mant = ((i % 1024) << 13) | low
    bits = torch.cat([(127 << 23) | mant, (1 << 31) | (133 << 23) | mant])
    return torch.where(bits >= 1 << 31, bits - (1 << 32), bits).to(torch.int32).view(torch.float32)


def special_patterns():
    """Infinities, NaNs, the largest finite values and their neighbours (where tf32 rounding can
    overflow), the smallest normal values and subnormals, each with both signs: 64 values."""
    mags = [0x7F800000, 0x7FC00000, 0x7F800001, 0x7FFFFFFF, 0x7F7FFFFF, 0x7F7FE000, 0x7F7FE001, 0x7F7FDFFF,
            0x7F7FC000, 0x7F7FD000, 0x7F7FF000, 0x00800000, 0x00800001, 0x00801FFF, 0x00802000, 0x00803000,
            0x007FFFFF, 0x00000001, 0x00001000, 0x00002000, 0x00003000, 0x3F800000, 0x3F801000, 0x3F803000,
            0x3F7FFFFF, 0x3F7FE000, 0x3F7FF000, 0x3F7FF001, 0x4B7FFFFF, 0x4B7FE000, 0x33800000, 0x33801000]
    bits = torch.tensor(mags + [x | (1 << 31) for x in mags], dtype=torch.int64)
    return as_f32(bits)


def single_operand(kind, gen):
    """single_a: each row of A holds one nonzero value (a pattern; single_a_grid: grid_patterns;
    single_a_special: special_patterns), B is all ones, so D(i, j) is what the kernel makes of a_i.
    single_b: each row of A holds one 1.0, B random patterns, so D(i, j) is what it makes of B's
    element in that row of K."""
    k = 256
    if kind in ("single_a", "single_a_grid", "single_a_special"):
        values = {"single_a": lambda: f32_patterns(1024, gen), "single_a_grid": grid_patterns,
                  "single_a_special": special_patterns}[kind]()
        m, n = len(values), 64
        a = torch.zeros(m, k)
        pos = (torch.arange(m) * 2 + (torch.arange(m) // (k // 2)) % 2) % k
        a[torch.arange(m), pos] = values
        return m, n, k, a, torch.ones(n, k)
    m, n = 64, 1024
    a = torch.zeros(m, k)
    a[torch.arange(m), (torch.arange(m) * 4) % k] = 1.0
    return m, n, k, a, f32_patterns(n * k, gen).reshape(n, k)


def tf32_jobs(gen):
    """f32 input (cuSPARSELt's tf32 kernels): the data runs and the two conversion probes."""
    jobs = []
    for kind, m, n, k in [("gaussian", 128, 128, 2048), ("wide", 128, 128, 2048), ("random", 128, 128, 2048),
                          ("gaussian", 64, 64, 4096), ("unit_a", 64, 64, 256), ("unit_b", 64, 64, 256)]:
        a, b_t = operands("f32", kind, m, n, k, gen)
        jobs.append(("f32", kind, m, n, k, a, b_t, None))
    for kind in ("single_a", "single_a_grid", "single_a_special", "single_b"):
        m, n, k, a, b_t = single_operand(kind, gen)
        jobs.append(("f32", kind, m, n, k, a, b_t, None))
    return jobs


def as_f32(bits):
    """int64 bit patterns -> float32 values."""
    bits = torch.as_tensor(bits, dtype=torch.int64)
    return torch.where(bits >= 1 << 31, bits - (1 << 32), bits).to(torch.int32).view(torch.float32)


def overflow_patterns():
    """Every f32 value whose rounding as cuSPARSELt's sparse tf32 operand ((x + 0x1FFF + bit 13) with
    the 13 low bits cleared) passes the largest tf32 value: exponent 254, the 10 kept fraction bits all
    ones, any 13 low bits (bit 13 is 1, so even the exact one moves up); both signs, 16,384 values."""
    mags = torch.arange(0x7F7FE000, 0x7F800000, dtype=torch.int64)
    return as_f32(torch.cat([mags, mags | (1 << 31)]))


def subnormals(name):
    """The smallest and the largest positive subnormal value of the format."""
    lo, hi = {"f16": (0x0001, 0x03FF), "bf16": (0x0001, 0x007F), "e4m3": (0x01, 0x07)}.get(name, (1, 0x7FFFFF))
    if name == "f32":
        return as_f32([lo])[0].item(), as_f32([hi])[0].item()
    if name == "e4m3":
        t = torch.tensor([lo, hi], dtype=torch.uint8).view(torch.float8_e4m3fn)
    else:
        t = torch.tensor([lo, hi], dtype=torch.int16).view(DTYPES[name])
    return t.float()[0].item(), t.float()[1].item()


def fill_run(name, subnormal=False):
    """The compressor's choices. Row r < 625 holds group pattern r (base-5 digits over {+0, -0, 1, 2,
    -1}, or with subnormal=True over {+0, s, -s, 1, S} for the smallest and largest subnormal s and S,
    position 0 lowest) in its first group of 4 along K, row 625 + r the same pattern in group
    1 + r mod 63, every other element +0. B (K = 256) has, for each group g and position q, a column
    with Inf (e4m3: NaN) at K = 4g + q and zeros elsewhere (D is NaN where the kernel multiplies a kept
    zero by it, +-Inf where a kept nonzero value; finite where that position is not kept), and per group
    a decode column holding 1, 4, 16, 64 at its four positions (D is the sum of the kept values times
    those: base-4 digits in {-1, 0, 1, 2}, one sum per kept set); then NaN and -Inf columns for group 0."""
    k, groups = 256, 64
    special = float("nan") if name == "e4m3" else float("inf")
    if subnormal:
        s_min, s_max = subnormals(name)
        values = torch.tensor([0.0, s_min, -s_min, 1.0, s_max])
    else:
        values = torch.tensor([0.0, -0.0, 1.0, 2.0, -1.0])
    m = 1280
    a = torch.zeros(m, k)
    for i in range(1250):
        r = i % 625
        g = 0 if i < 625 else 1 + r % 63
        digits = [(r // 5 ** p) % 5 for p in range(4)]
        a[i, 4 * g:4 * g + 4] = values[digits]
    cols = []
    for g in range(groups):
        for q in range(4):
            c = torch.zeros(k)
            c[4 * g + q] = special
            cols.append(c)
        c = torch.zeros(k)
        c[4 * g:4 * g + 4] = torch.tensor([1.0, 4.0, 16.0, 64.0])
        cols.append(c)
    for v in (float("nan"), -special if name != "e4m3" else float("nan")):
        for q in range(4):
            c = torch.zeros(k)
            c[q] = v
            cols.append(c)
    while len(cols) % 16:
        cols.append(torch.zeros(k))
    return m, len(cols), k, a, torch.stack(cols)


def edge_jobs():
    """The "edges" runs: the fill probe for every input format (f32 out for e4m3, whose own D would
    round the decode sums), tf32 overflow in A and specials in B."""
    jobs = []
    for name, out in (("f16", None), ("bf16", None), ("f32", None), ("e4m3", torch.float32)):
        for kind in ("fill", "fill_subnormal"):
            m, n, k, a, b_t = fill_run(name, kind == "fill_subnormal")
            jobs.append((name, kind, m, n, k, a, b_t, out))
    # A: one value at K = 1 of each row (its pair keeps it; the other pairs hold zeros), B all ones
    # (single_a_overflow) or all minus ones (single_a_overflow_neg_b: a D of -Inf and one of NaN
    # are told apart by the product's sign).
    values = torch.cat([overflow_patterns(), special_patterns()])
    m, k = len(values), 64
    a = torch.zeros(m, k)
    a[:, 1] = values
    jobs.append(("f32", "single_a_overflow", m, 16, k, a, torch.ones(16, k), None))
    jobs.append(("f32", "single_a_overflow_neg_b", m, 16, k, a, -torch.ones(16, k), None))
    # B: every row of A holds 1.0 at K = 1, B column j holds value j at K = 1 (zeros elsewhere), so that
    # D(i, j) is what the kernel makes of value j whatever the compressor keeps in the zero pairs.
    values = torch.cat([special_patterns(), overflow_patterns(), as_f32([0x7F7FEFFF, 0x7F7FF000, 0x7F7FF001,
                                                                         0xFF7FEFFF, 0xFF7FF000, 0xFF7FF001])])
    n = -(-len(values) // 16) * 16
    b_t = torch.zeros(n, k)
    b_t[:len(values), 1] = values
    a = torch.zeros(64, k)
    a[:, 1] = 1.0
    jobs.append(("f32", "single_b_special", 64, n, k, a, b_t, None))
    return jobs


def sweep_jobs():
    """Probe runs over shapes: where does cuSPARSELt cut K?"""
    jobs = []
    for name in ("f16", "bf16", "f32", "e4m3"):
        outs = [None, torch.float32] if name == "e4m3" else [None]
        for m, n in ((64, 64), (256, 256), (1024, 1024)):
            for k in (1024, 2048, 4096, 8192, 16384, 32768):
                if -(-(k // STEP_K[name]) // m) > n:
                    continue
                a, b_t = probe_step(name, m, n, k)
                jobs += [(name, "probe_step", m, n, k, a, b_t, out) for out in outs]
    return jobs


def main(out_dir, seed, repeats, mode):
    dev = torch.device("cuda")
    gen = torch.Generator().manual_seed(seed)
    try:
        cslt = torch.backends.cusparselt.version()
    except Exception as e:  # noqa: BLE001
        cslt = f"unavailable:{e}"
    library = f"torch_{torch.__version__}_cusparselt_{cslt}"
    gpu = torch.cuda.get_device_name(0)
    print(f"{gpu}; {library}", flush=True)
    summary = []
    jobs = {"data": data_jobs, "tf32": tf32_jobs, "edges": lambda _: edge_jobs(), "sweep": lambda _: sweep_jobs()}[mode](gen)
    for name, kind, m, n, k, a, b_t, out in jobs:
        out_name = {None: "default", torch.bfloat16: "bf16", torch.float16: "f16", torch.float32: "f32"}[out]
        tag = f"cusparselt_{name}_{kind}_{m}x{n}x{k}_out-{out_name}"
        meta = {"library": library, "backend": "cusparselt", "gpu": gpu, "a": name, "b": name, "m": m, "n": n,
                "k": k, "step_k": STEP_K[name]}
        path = os.path.join(out_dir, tag + ".sparse_mm")
        try:
            a_q = a.to(DTYPES[name])
            b_q = b_t.to(DTYPES[name])
            fn = cusparselt_call(a_q.to(dev), b_q.to(dev).t(), out)  # B: K x N column-major (x^T)
            results = [fn().cpu() for _ in range(repeats)]
            torch.cuda.synchronize()
            try:
                kernel = kernels_of(fn)
            except Exception as e:  # noqa: BLE001
                kernel = f"unknown({str(e)[:60]})"
        except Exception as e:  # noqa: BLE001 - a refused call is recorded, not fatal
            if mode != "sweep":
                write(path, dict(meta, error=str(e).splitlines()[0][:200]))
            print(f"{tag}: refused: {str(e).splitlines()[0][:200]}", flush=True)
            continue
        d = results[0]
        word = WORD[d.element_size()]
        same = all(torch.equal(r.view(word), d.view(word)) for r in results)
        out_fmt = {torch.float32: "f32", torch.float16: "f16", torch.bfloat16: "bf16",
                   torch.float8_e4m3fn: "e4m3"}[d.dtype]
        meta.update(out=out_fmt, repeats=repeats, repeats_identical=int(same), kernel=kernel)
        if mode != "sweep":
            write(path, meta, a_q, b_q, d)
            print(f"{tag}: written, out {out_fmt}, {repeats} calls {'identical' if same else 'DIFFER'}; {kernel}",
                  flush=True)
        else:
            cuts = restarts(name, m, n, k, d)
            summary.append(dict(meta, restarts=cuts))
            print(f"{tag}: {'identical' if same else 'DIFFER'}; restarts before K = {cuts}; {kernel}", flush=True)
    if mode == "sweep":
        import json
        with open(os.path.join(out_dir, "split_sweep.json"), "w") as f:
            json.dump(summary, f, indent=1)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    os.makedirs(sys.argv[1], exist_ok=True)
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 7, int(sys.argv[3]) if len(sys.argv) > 3 else 2,
         sys.argv[4] if len(sys.argv) > 4 else "data")
