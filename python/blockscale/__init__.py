# SPDX-License-Identifier: Apache-2.0
"""blockscale from Python: the bit-exact formats, quantizers and tensor-core models on numpy arrays.

The same C++ as the library and the `blockscale` command (loaded from libblockscale_c.so through
ctypes; nothing but numpy is needed), so every bit equals what they give:

    import numpy as np, blockscale as bs
    x = np.random.default_rng(0).standard_normal((256, 1024), dtype=np.float32)
    w = np.random.default_rng(1).standard_normal((512, 1024), dtype=np.float32)  # B^T: N x K
    qa = bs.quantize(x, "mxfp8_e4m3", recipe="te_mxfp8")
    qb = bs.quantize(w, "mxfp8_e4m3", recipe="te_mxfp8")
    d_b200 = bs.gemm(qa, qb, model="sm_100a")   # what a tcgen05 GEMM computes, bit for bit
    d_exact = bs.gemm(qa, qb, model="exact")    # mma_scaled's exact numerics
    ulps = d_b200.view(np.int32) - d_exact.view(np.int32)

Formats: `encode` / `decode` convert between float arrays and the storage words of any element or
scale format in every rounding mode and overflow rule (presets "ieee", "cuda", "ml_dtypes").
Quantization: `quantize` (MX and NVFP4 recipes by name) gives a `QuantizedMatrix` of element codes,
block scale codes and the per-tensor scale; `QuantizedMatrix.from_codes` adopts codes made
elsewhere (a PyTorch float8 tensor's bytes and its e8m0 scales). GEMMs: `gemm` with the models
exact, sequential_f32, sm_100a, sm_120a and sm_90a. Instructions: `mma` / `mma_sparse` compute one
tensor-core instruction of the emulator's table (`instruction_rows`, `instruction`) on codes.

Golden vectors (golden/FORMAT.md): the submodule `blockscale.golden` reads and writes them as numpy
columns, verifies them with the library and generates them.

Bad input raises `BlockscaleError` (a ValueError) whose message names the rule broken.
The library is found at $BLOCKSCALE_LIBRARY, beside this file (an installed or build-tree copy of
the package), or in <repository>/build/python/blockscale when this file is the source tree's.
"""
import ctypes
import json
import os

import numpy as np

__all__ = [
    "BlockscaleError", "QuantizedMatrix", "block_format_info", "decode", "encode", "format_info", "format_names",
    "Fp8Matrix", "fp8_recipe_names", "pack", "scale_layout", "scales_from_layout", "scales_to_layout", "unpack", "gemm", "gemm_fp8", "gemm_models", "instruction", "instruction_rows", "mma",
    "mma_sparse", "quantize", "quantize_fp8", "recipe_names", "recorded_split_k", "sparse_mm", "ulp_distance",
]


class BlockscaleError(ValueError):
    """Bad input: the message names the rule broken (the library's std::invalid_argument)."""


def _find_library():
    here = os.path.dirname(os.path.abspath(__file__))
    candidates = [os.environ.get("BLOCKSCALE_LIBRARY"), os.path.join(here, "libblockscale_c.so"),
                  os.path.join(here, "..", "..", "build", "python", "blockscale", "libblockscale_c.so")]
    for path in candidates:
        if path and os.path.isfile(path):
            return path
    raise ImportError("blockscale: libblockscale_c.so not found (looked at $BLOCKSCALE_LIBRARY, " + here +
                      ", and the repository's build/python/blockscale); build the target blockscale_c")


_lib = ctypes.CDLL(_find_library())
_p = ctypes.c_void_p
_s = ctypes.c_char_p
_i64 = ctypes.c_int64
_int = ctypes.c_int
_str_out = ctypes.POINTER(ctypes.c_char_p)
_int_out = ctypes.POINTER(ctypes.c_int)
_SIGNATURES = {
    "bsc_last_error": ([], _s), "bsc_version": ([], _s), "bsc_format_names": ([], _s),
    "bsc_format_info": ([_s, _str_out, _int_out, _int_out, _int_out], _int),
    "bsc_encode": ([_s, _s, _p, _i64, _s, _s, _s, _p, _int, _p], _int),
    "bsc_decode": ([_s, _p, _i64, _p], _int),
    "bsc_recipe_names": ([], _s),
    "bsc_block_format_info": ([_s, _str_out, _str_out, _str_out, _int_out, _int_out], _int),
    "bsc_quantize": ([_s, _s, _p, _i64, _i64, _p, _p, _p, _p], _int),
    "bsc_dequantize": ([_s, _p, _p, _p, _i64, _i64, _p], _int),
    "bsc_packed_bytes": ([_s, _s, _i64, ctypes.POINTER(ctypes.c_int64)], _int),
    "bsc_pack": ([_s, _s, _p, _i64, _p, _i64], _int),
    "bsc_unpack": ([_s, _s, _p, _i64, _p, _i64], _int),
    "bsc_scale_layout_info": ([_s, _i64, _i64, _str_out, ctypes.POINTER(ctypes.c_int64), _str_out], _int),
    "bsc_scales_to_layout": ([_s, _i64, _i64, _i64, _int, _p, _p, ctypes.c_uint32], _int),
    "bsc_scales_from_layout": ([_s, _i64, _i64, _i64, _int, _p, _p], _int),
    "bsc_gemm_model_names": ([], _s),
    "bsc_gemm": ([_s, _s, _p, _p, _p, _s, _p, _p, _p, _i64, _i64, _i64, _p, _int, _p, _p, _str_out], _int),
    "bsc_fp8_recipe_names": ([], _s),
    "bsc_quantize_fp8": ([_s, _s, _p, _i64, _i64, _p, _p], _int),
    "bsc_gemm_fp8": ([_s, _s, _s, _p, _p, _s, _s, _p, _p, _i64, _i64, _i64, _int, _s, _p, _int, _p, _str_out], _int),
    "bsc_cublaslt_fp8": ([_s, _s, _s, _p, _p, _s, _s, _p, _p, _i64, _i64, _i64, _int, ctypes.c_float, ctypes.c_float,
                          _p, _s, _p, _s, _s, ctypes.c_float, _int, _int, _p, _p, _str_out], _int),
    "bsc_recorded_split_k": ([_s, _s, _s, _s, _s, _i64, _i64, _i64, _s, _int, _int, _int_out], _int),
    "bsc_sparse_mm": ([_s, _s, _p, _p, _i64, _i64, _i64, _int, _int, _p], _int),
    "bsc_instruction_rows": ([], _s),
    "bsc_instruction_info": ([_s, _str_out], _int),
    "bsc_mma": ([_s, _p, _p, _p, _p, _p, _p], _int),
    "bsc_mma_sparse": ([_s, _p, _p, _p, _p, _p], _int),
    # blockscale.golden (golden.py)
    "bsc_golden_parse": ([_s, _i64, _s, _str_out], _int),
    "bsc_golden_verify": ([_s, _int, _str_out], _int),
    "bsc_golden_families": ([], _s),
    "bsc_golden_operations": ([_s, _str_out], _int),
    "bsc_golden_generate": ([_s, ctypes.c_uint64, _s, _i64, _s, _str_out], _int),
}
for _name, (_args, _ret) in _SIGNATURES.items():
    getattr(_lib, _name).argtypes = _args
    getattr(_lib, _name).restype = _ret

__version__ = _lib.bsc_version().decode()


def _call(status):
    if status != 0:
        message = _lib.bsc_last_error().decode()
        raise BlockscaleError(message) if status == 1 else RuntimeError(message)


def _b(text, what="a name"):
    """A name or path for the C ABI, NUL-terminated: a str. None and other types are refused (the
    library would read a NULL pointer), and so is a NUL inside (the library would read the name cut)."""
    if not isinstance(text, str):
        raise BlockscaleError(f"{what} must be a str, got {text!r}")
    if "\0" in text:
        raise BlockscaleError(f"{what} holds a NUL character: {text!r}")
    return text.encode()


def _b_or_default(text, what):
    """An optional name: None leaves the library's default (a NULL pointer, which the C ABI reads so)."""
    return None if text is None else _b(text, what)


def _integer(value, what, low, high=2**31 - 1):
    """value for an integer parameter of the C ABI. ctypes would wrap a value outside its C type and
    int() would truncate a float or parse a string, each a different call run silently: so only an
    integer (not a bool) within low .. high is taken."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise BlockscaleError(f"{what} must be an integer, got {value!r}")
    if not low <= int(value) <= high:
        raise BlockscaleError(f"{what} must be in {low} .. {high}, got {int(value)}")
    return int(value)


def _flag(value, what):
    """A yes/no parameter: True or False only (bool("False") would be True)."""
    if not isinstance(value, (bool, np.bool_)):
        raise BlockscaleError(f"{what} must be True or False, got {value!r}")
    return bool(value)


def _float32_scalar(value, what):
    """A scalar the call takes as a float32 (cuBLASLt's alpha, beta and D scale are floats): rounded to
    the nearest float32, as a C caller's conversion does, but refused where that would overflow a
    finite value to Inf or turn a nonzero one into zero (beta = 1e-50 would then not read C). NaN and
    Inf pass to the library, which names the rule."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise BlockscaleError(f"{what} must be a number, got {value!r}")
    exact = float(value)
    with np.errstate(over="ignore", under="ignore"):
        rounded = float(np.float32(exact))
    if np.isfinite(exact) and (not np.isfinite(rounded) or (exact != 0 and rounded == 0)):
        raise BlockscaleError(f"{what} = {exact!r} is out of float32's range (it would become {rounded!r})")
    return rounded


def _native(a):
    """a in the machine's byte order. The library reads raw words, so a big-endian array (dtype '>f4',
    or a byte-swapped ml_dtypes type) has its words swapped here rather than read as garbage."""
    return a if a.dtype.isnative else a.byteswap().view(a.dtype.newbyteorder("="))


def _ptr(array):
    return None if array is None else array.ctypes.data_as(ctypes.c_void_p)


def _lines(text):
    return [line for line in text.decode().split("\n") if line]


def _words(x, what, dtype=np.uint32):
    """x as a C-contiguous array of unsigned words, refusing values that do not fit."""
    a = np.asarray(x)
    if a.dtype.kind not in "ui":
        raise BlockscaleError(f"{what} must hold integer codes (storage words), got dtype {a.dtype}")
    if a.size and (a.min() < 0 or a.max() > np.iinfo(dtype).max):
        raise BlockscaleError(f"{what} holds a value outside 0 .. {np.iinfo(dtype).max}")
    return np.ascontiguousarray(a, dtype=dtype).reshape(a.shape)  # a 0-d array stays 0-d


def _word_dtype(storage_bits):
    return {8: np.uint8, 16: np.uint16}.get(storage_bits, np.uint32)


# ---- Formats.

def format_names():
    """The element and scale formats, by their ml_dtypes spelling ("float8_e4m3fn", ...)."""
    return _lines(_lib.bsc_format_names())


def format_info(name):
    """{"name", "storage_bits", "exponent_bits", "mantissa_bits"} of a format (any spelling the
    library takes: "float8_e4m3fn", "e4m3", "f8e4m3fn", ...)."""
    canonical, bits, e, m = ctypes.c_char_p(), ctypes.c_int(), ctypes.c_int(), ctypes.c_int()
    _call(_lib.bsc_format_info(_b(name, "format"), ctypes.byref(canonical), ctypes.byref(bits), ctypes.byref(e), ctypes.byref(m)))
    return {"name": canonical.value.decode(), "storage_bits": bits.value, "exponent_bits": e.value,
            "mantissa_bits": m.value}


_SOURCES = {np.dtype(np.float32): "float32", np.dtype(np.float64): "float64", np.dtype(np.float16): "float16"}


def encode(x, format, *, preset="ieee", rounding=None, overflow=None, rbits=None, stochastic_bits=None):
    """Storage words of `format` for the values of x (float32, float64, float16, or ml_dtypes'
    bfloat16), each rounded once from its own type.

    preset: "ieee" (rounding: nearest_even, toward_zero, upward, downward, nearest_away, stochastic;
    overflow: saturate, saturate_finite, infinity, ieee; default nearest_even and infinity), "cuda"
    (CUDA 13.0's conversion from x's type, with the rounding and overflow it offers) or "ml_dtypes"
    (its cast: nearest_even or toward_zero, infinity or saturate_finite). rbits: one random word
    per value for stochastic rounding, of which stochastic_bits (default 32) low bits are used.
    Returns uint8 words for formats stored in a byte, uint16 for 16-bit ones, uint32 otherwise
    (tf32: its fp32 bit pattern)."""
    a = _native(np.asarray(x))
    source = _SOURCES.get(a.dtype, "bfloat16" if a.dtype.name == "bfloat16" else None)
    if source is None:
        raise BlockscaleError(f"encode takes float32, float64, float16 or bfloat16 values, got dtype {a.dtype}")
    a = np.ascontiguousarray(a).reshape(a.shape)
    bits = None
    if (rbits is not None or stochastic_bits is not None) and rounding != "stochastic":
        raise BlockscaleError(f"rbits and stochastic_bits are the random bits of rounding='stochastic'; this call rounds "
                              f"{rounding or 'nearest_even'}")
    if rbits is not None:
        bits = _words(rbits, "rbits")
        if bits.shape != a.shape:
            raise BlockscaleError(f"rbits has shape {bits.shape} but x has {a.shape}: one random word per value")
    used_bits = 0 if stochastic_bits is None else _integer(stochastic_bits, "stochastic_bits", 1, 32)
    info = format_info(format)
    out = np.empty(a.shape, dtype=np.uint32)
    _call(_lib.bsc_encode(_b(info["name"]), _b(source), _ptr(a), a.size, _b(preset, "preset"),
                          _b_or_default(rounding, "rounding"), _b_or_default(overflow, "overflow"), _ptr(bits),
                          used_bits, _ptr(out)))
    return out.astype(_word_dtype(info["storage_bits"]))


def decode(words, format):
    """The exact values (float64) of storage words of `format` (as `encode` returns them)."""
    w = _words(words, "words")
    out = np.empty(w.shape, dtype=np.float64)
    _call(_lib.bsc_decode(_b(format, "format"), _ptr(w), w.size, _ptr(out)))
    return out


# ---- Block formats and quantization.

def recipe_names(kind=None):
    """The quantization recipes by name; kind "mx" or "nvfp4" keeps those of one family."""
    rows = [line.split(" ") for line in _lines(_lib.bsc_recipe_names())]
    if kind is not None and kind not in {family for _, family in rows}:
        raise BlockscaleError(f"recipe kind {kind!r}: \"mx\", \"nvfp4\" or None for all")
    return [name for name, family in rows if kind is None or family == kind]


def block_format_info(name):
    """{"name", "element", "scale", "block_size", "tensor_scale"} of a block format: mxfp8_e4m3,
    mxfp8_e5m2, mxfp6_e2m3, mxfp6_e3m2, mxfp4, mxfp4_block16, nvfp4."""
    canonical, element, scale = ctypes.c_char_p(), ctypes.c_char_p(), ctypes.c_char_p()
    block, tensor = ctypes.c_int(), ctypes.c_int()
    _call(_lib.bsc_block_format_info(_b(name, "block format"), ctypes.byref(canonical), ctypes.byref(element), ctypes.byref(scale),
                                     ctypes.byref(block), ctypes.byref(tensor)))
    return {"name": canonical.value.decode(), "element": element.value.decode(), "scale": scale.value.decode(),
            "block_size": block.value, "tensor_scale": bool(tensor.value)}


class QuantizedMatrix:
    """A matrix quantized along its rows (K last): `rows` x `k` logical elements.

    elements: uint8 codes, rows x k_stored (k_stored = k_blocks * block_size; the K tail padded with
    zero codes); scales: uint8 codes, rows x k_blocks; tensor_scale: (amax, encode, decode), the
    fp32 per-tensor scale of NVFP4 (decode is the stored one; (0, 1, 1) for MX formats)."""

    def __init__(self, format, elements, scales, tensor_scale, k):
        self.format = format
        self.elements = elements
        self.scales = scales
        self.tensor_scale = tuple(float(v) for v in tensor_scale)
        self.k = k

    @property
    def shape(self):
        return (self.elements.shape[0], self.k)

    @property
    def info(self):
        return block_format_info(self.format)

    @classmethod
    def from_codes(cls, format, elements, scales, tensor_scale=None, k=None):
        """Adopts codes made elsewhere: elements (rows x k, or rows x k_stored with a zero-coded tail;
        one code per byte, e.g. a torch.float8_e4m3fn tensor's .view(torch.uint8)), scales (rows x
        k_blocks codes), and for NVFP4 the fp32 per-tensor decode scale (a number) or the triple
        (amax, encode, decode). The codes are copied (a later change to the caller's arrays does not
        change the matrix) and checked when a function takes the matrix."""
        info = block_format_info(format)
        e = _words(elements, "elements", np.uint8).copy()
        s = _words(scales, "scales", np.uint8).copy()
        if e.ndim != 2 or s.ndim != 2:
            raise BlockscaleError(f"elements and scales must be 2-D (rows x K, rows x K blocks), got {e.shape} and {s.shape}")
        rows, width = e.shape
        if rows < 1:
            raise BlockscaleError(f"elements has shape {e.shape}: a matrix has at least one row")
        k = width if k is None else _integer(k, "k", 1, 2**62)
        block = info["block_size"]
        blocks = -(-k // block)
        if not 1 <= k <= width or width not in (k, blocks * block):
            raise BlockscaleError(f"elements has {width} columns: K = {k} needs {k} or {blocks * block} (whole blocks)")
        if s.shape != (rows, blocks):
            raise BlockscaleError(f"scales has shape {s.shape}: {rows} rows of K = {k} in blocks of {block} need "
                                  f"({rows}, {blocks})")
        if width != blocks * block:
            e = np.concatenate([e, np.zeros((rows, blocks * block - width), dtype=np.uint8)], axis=1)
        if tensor_scale is None:
            if info["tensor_scale"]:
                raise BlockscaleError(info["name"] + " carries an fp32 per-tensor scale: give tensor_scale")
            tensor_scale = (0.0, 1.0, 1.0)
        elif np.ndim(tensor_scale) == 0:
            decode_scale = float(np.float32(tensor_scale))
            tensor_scale = (float("nan"), float(np.float32(1) / np.float32(decode_scale)), decode_scale)
        elif len(tensor_scale) != 3:
            raise BlockscaleError("tensor_scale is a number (the decode scale) or (amax, encode, decode)")
        return cls(info["name"], e, s, tensor_scale, k)

    def _checked_tensor_scale(self):
        """The per-tensor scale for the library, after checking that the arrays and the scale still hold
        what the constructor made (a caller may have replaced them; the library reads three floats)."""
        rows, k = self.shape
        blocks = -(-k // self.info["block_size"])
        for name, array, shape in (("elements", self.elements, (rows, blocks * self.info["block_size"])),
                                   ("scales", self.scales, (rows, blocks))):
            if not (isinstance(array, np.ndarray) and array.dtype == np.uint8 and array.shape == shape
                    and array.flags.c_contiguous):
                raise BlockscaleError(f"QuantizedMatrix.{name} must be a C-contiguous uint8 array of shape {shape}")
        try:
            triple = np.array(self.tensor_scale, dtype=np.float32)
        except (TypeError, ValueError):
            triple = None
        if triple is None or triple.shape != (3,):
            raise BlockscaleError(f"QuantizedMatrix.tensor_scale must be the triple (amax, encode, decode), got "
                                  f"{self.tensor_scale!r} (from_codes takes a single decode scale)")
        return triple

    def dequantize(self):
        """float32 values, rows x k: fp32(element * scale), NVFP4's per-tensor scale applied first."""
        rows, k = self.shape
        out = np.empty((rows, k), dtype=np.float32)
        ts = self._checked_tensor_scale()
        _call(_lib.bsc_dequantize(_b(self.format, "QuantizedMatrix.format"), _ptr(self.elements), _ptr(self.scales), _ptr(ts), rows, k, _ptr(out)))
        return out

    def __repr__(self):
        return f"QuantizedMatrix({self.format}, shape={self.shape}, tensor_scale={self.tensor_scale})"


def _real_values(x, what):
    """x as an array of real numbers (float, integer, or ml_dtypes' float types, whose numpy kind is
    "V"); strings, complex numbers, booleans and objects are refused rather than converted."""
    a = _native(np.asarray(x))
    if a.dtype.kind not in "fiuV" or a.dtype.fields is not None:
        raise BlockscaleError(f"{what} takes real numbers (a float or integer array), got dtype {a.dtype}")
    return a


def quantize(x, format="mxfp8_e4m3", recipe=None, rbits=None):
    """Quantizes a 2-D array (rows x K; blocks along each row, the K tail zero-padded) with a named
    recipe (`recipe_names()`; default te_mxfp8 for MX formats, nvfp4_te for NVFP4). Values that are
    not float32 are rounded to float32 (nearest even) first. rbits: one random word per value for the
    stochastic recipes (nvfp4_te_stochastic)."""
    info = block_format_info(format)
    if recipe is None:
        recipe = "nvfp4_te" if info["tensor_scale"] else "te_mxfp8"
    given = _real_values(x, "quantize")
    if given.ndim != 2 or given.shape[0] < 1 or given.shape[1] < 1:
        raise BlockscaleError(f"quantize takes a 2-D array (rows x K) with at least one element, got shape {given.shape}")
    a = np.ascontiguousarray(given, dtype=np.float32)
    bits = None
    if rbits is not None:
        bits = _words(rbits, "rbits")
        if bits.shape != a.shape:
            raise BlockscaleError(f"rbits has shape {bits.shape} but x has {a.shape}: one random word per value")
    rows, k = a.shape
    block = info["block_size"]
    blocks = -(-k // block)
    elements = np.empty((rows, blocks * block), dtype=np.uint8)
    scales = np.empty((rows, blocks), dtype=np.uint8)
    ts = np.empty(3, dtype=np.float32)
    _call(_lib.bsc_quantize(_b(info["name"]), _b(recipe, "recipe"), _ptr(a), rows, k, _ptr(bits), _ptr(elements), _ptr(scales),
                            _ptr(ts)))
    return QuantizedMatrix(info["name"], elements, scales, ts.tolist(), k)


# ---- Sub-byte packing and scale-factor layouts (docs/layouts.md).

def _packing_name(packing):
    return b"" if packing is None else _b(packing, "packing")


def _packed_bytes(packing, format, count):
    n = ctypes.c_int64()
    _call(_lib.bsc_packed_bytes(_packing_name(packing), _b(format, "format"), count, ctypes.byref(n)))
    return n.value


def pack(codes, format, packing=None):
    """Element codes (one per byte, any shape, in order) packed as global or shared memory holds
    them: packing byte_per_element, fp4_dense (two e2m1 codes a byte, the first in the low nibble),
    fp6_dense (four fp6 codes in three bytes), fp4_padded16 or fp6_padded16 (the tcgen05 shared-memory
    forms); None for the format's dense packing. Returns the bytes (uint8, 1-D)."""
    c = _words(codes, "codes", np.uint8).ravel()
    out = np.empty(_packed_bytes(packing, format, c.size), dtype=np.uint8)
    _call(_lib.bsc_pack(_packing_name(packing), _b(format, "format"), _ptr(c), c.size, _ptr(out), out.size))
    return out


def unpack(packed, format, count, packing=None):
    """The inverse of `pack`: `count` codes (uint8, 1-D) from packed bytes (e.g. a
    torch.float4_e2m1fn_x2 tensor's .view(torch.uint8)); nonzero padding of the padded forms is
    refused."""
    b = _words(packed, "packed", np.uint8).ravel()
    out = np.empty(_integer(count, "count", 0, 2**62), dtype=np.uint8)
    _call(_lib.bsc_unpack(_packing_name(packing), _b(format, "format"), _ptr(b), b.size, _ptr(out), out.size))
    return out


def scale_layout(layout, rows, cols):
    """A scale-factor layout (its text form: "linear", "tiled_128x4", "gluon_contiguous:block_mn=128,
    block_k_scales=4", "cdna4_mfma_scale", ...; docs/layouts.md) for a rows x cols scale matrix:
    {"layout": canonical text, "storage_size": elements per batch item, "storage_shape": tuple}."""
    canonical, size, shape = ctypes.c_char_p(), ctypes.c_int64(), ctypes.c_char_p()
    _call(_lib.bsc_scale_layout_info(_b(layout, "layout"), _integer(rows, "rows", 0, 2**63 - 1),
                                     _integer(cols, "cols", 0, 2**63 - 1), ctypes.byref(canonical), ctypes.byref(size),
                                     ctypes.byref(shape)))
    return {"layout": canonical.value.decode(), "storage_size": size.value,
            "storage_shape": tuple(int(d) for d in shape.value.decode().split(","))}


def _scale_kind(a, what):
    if a.dtype == np.uint8:
        return 0
    if a.dtype == np.float32:
        return 1
    raise BlockscaleError(f"{what} must be uint8 (ue8m0 / ue4m3 codes) or float32 (fp32 scales), got dtype {a.dtype}")


def scales_to_layout(scales, layout, pad=0):
    """Scale matrices (rows x cols, or batch x rows x cols; uint8 codes or float32) stored in a
    layout: an array of the layout's storage shape (batch first when given), padding set to `pad`."""
    a = _native(np.asarray(scales))
    is_float = _scale_kind(a, "scales")
    if a.ndim not in (2, 3):
        raise BlockscaleError(f"scales must be rows x cols or batch x rows x cols, got shape {a.shape}")
    batch, rows, cols = (1,) + a.shape if a.ndim == 2 else a.shape
    info = scale_layout(layout, rows, cols)
    a = np.ascontiguousarray(a)
    out = np.empty((batch,) + info["storage_shape"], dtype=a.dtype)
    if is_float:
        pad_bits = int(np.float32(_float32_scalar(pad, "pad")).view(np.uint32))
    else:
        pad_bits = _integer(pad, "pad (a byte code)", 0, 255)
    _call(_lib.bsc_scales_to_layout(_b(layout, "layout"), batch, rows, cols, is_float, _ptr(a), _ptr(out), pad_bits))
    return out if a.ndim == 3 else out[0]


def scales_from_layout(stored, layout, rows, cols, batch=None):
    """The inverse of `scales_to_layout`: rows x cols scale matrices (batch x rows x cols when batch is
    given) from storage images of the layout, e.g. the 128x4-swizzled scales torch._scaled_mm and
    cuBLASLt take. Padding is not read."""
    a = _native(np.asarray(stored))
    is_float = _scale_kind(a, "stored")
    info = scale_layout(layout, rows, cols)
    count = 1 if batch is None else _integer(batch, "batch", 1, 2**62)
    if a.size != count * info["storage_size"]:
        raise BlockscaleError(f"stored holds {a.size} values; {count} image(s) of {info['layout']} for "
                              f"{rows} x {cols} hold {count * info['storage_size']}")
    # A flat buffer is read in storage order; an array with dimensions must have the storage shape, so
    # that a transposed image (cols x rows where the layout stores rows x cols) is not read in place.
    image = info["storage_shape"]
    shapes = [(count,) + image] if batch is not None else [image, (1,) + image]
    if a.ndim > 1 and a.shape not in shapes:
        raise BlockscaleError(f"stored has shape {a.shape}; {info['layout']} for {rows} x {cols} is stored as "
                              f"{shapes[0]} (or give a flat buffer)")
    a = np.ascontiguousarray(a).ravel()
    out = np.empty((count, rows, cols), dtype=a.dtype)
    _call(_lib.bsc_scales_from_layout(_b(layout, "layout"), count, rows, cols, is_float, _ptr(a), _ptr(out)))
    return out if batch is not None else out[0]


# ---- GEMM models.

def gemm_models():
    """exact, sequential_f32, sm_100a, sm_120a, sm_90a (harness/block_scaled_models.h)."""
    return _lines(_lib.bsc_gemm_model_names())


_STATS = ("exact", "truncating", "special", "reference_outputs", "fp16", "certified")


def gemm(a, b, model="sm_100a", c=None, threads=0, return_info=False):
    """D = A x B (+ C) as `model` computes it, float32 (M x N). a: QuantizedMatrix M x K; b:
    QuantizedMatrix N x K (B transposed, quantized along K, as a weight is stored); c: M x N float32
    or None. The models: exact (the exact sum rounded once to f32), sequential_f32 (the fp32 FMA
    chain in k order), sm_100a (tcgen05), sm_120a (mma.sync block-scaled), sm_90a (the Hopper
    kernels' promotion schedule); NVFP4's per-tensor scales in the epilogue D = fma(alpha, acc, C).
    threads: 0 for all (the bits never depend on it). return_info: also return a dict with the
    model's definition and where the emulator's work went (its GemmPathStats)."""
    if not isinstance(a, QuantizedMatrix) or not isinstance(b, QuantizedMatrix):
        raise BlockscaleError("gemm takes two QuantizedMatrix operands (quantize or QuantizedMatrix.from_codes)")
    if a.k != b.k:
        raise BlockscaleError(f"A is {a.shape[0]} x {a.k} and B^T is {b.shape[0]} x {b.k}: K must agree")
    m, n = a.shape[0], b.shape[0]
    cw = None
    if c is not None:
        c32 = _native(np.asarray(c))
        if c32.dtype != np.float32 or c32.shape != (m, n):
            raise BlockscaleError(f"C must be float32 of shape ({m}, {n}), got {c32.dtype} {c32.shape}")
        cw = np.ascontiguousarray(c32).view(np.uint32)
    d = np.empty((m, n), dtype=np.uint32)
    stats = np.zeros(6, dtype=np.uint64)
    definition = ctypes.c_char_p()
    ta, tb = a._checked_tensor_scale(), b._checked_tensor_scale()
    _call(_lib.bsc_gemm(_b(model, "model"), _b(a.format, "A's format"), _ptr(a.elements), _ptr(a.scales), _ptr(ta),
                        _b(b.format, "B's format"), _ptr(b.elements), _ptr(b.scales), _ptr(tb), m, n, a.k, _ptr(cw),
                        _integer(threads, "threads (0 for all)", 0), _ptr(d),
                        _ptr(stats), ctypes.byref(definition)))
    result = d.view(np.float32)
    if not return_info:
        return result
    return result, {"model": model, "definition": definition.value.decode(),
                     "steps": {key: int(v) for key, v in zip(_STATS, stats)}}


# ---- fp8 with fp32 scales and the library GEMMs (Hopper: cuBLASLt, torch._scaled_mm).

def fp8_recipe_names():
    """{name: granularity} of the fp8 recipes with fp32 scales: deepgemm_1x128 (1x128), deepgemm_128x128
    (128x128), their _ue8m0 forms, torchao_tensorwise (tensor), torchao_rowwise (row)."""
    return dict(line.split(" ") for line in _lines(_lib.bsc_fp8_recipe_names()))


def _fp8_scale_shape(granularity, rows, k):
    kb, rb = -(-k // 128), -(-rows // 128)
    return {"tensor": (1,), "row": (rows,), "1x128": (rows, kb), "128x128": (rb, kb)}[granularity]


class Fp8Matrix:
    """fp8 codes with fp32 scales, rows x k (K last): codes (uint8, rows x k), scales (float32: one
    value, one per row, rows x K/128 or row blocks x K/128 by the recipe's granularity; the GEMM
    multiplies by them), format (float8_e4m3fn or float8_e5m2) and recipe."""

    def __init__(self, format, recipe, codes, scales):
        self.format, self.recipe, self.codes, self.scales = format, recipe, codes, scales

    @property
    def shape(self):
        return self.codes.shape

    @property
    def granularity(self):
        names = fp8_recipe_names()
        if not isinstance(self.recipe, str) or self.recipe not in names:
            raise BlockscaleError(f"unknown fp8 recipe {self.recipe!r} ({', '.join(names)})")
        return names[self.recipe]

    @classmethod
    def from_codes(cls, format, recipe, codes, scales):
        """Adopts codes and scales made elsewhere (a torch.float8_e4m3fn tensor's .view(torch.uint8)
        and its float32 scales); `recipe` names their granularity (and how they were made: a _ue8m0
        recipe's scales are powers of two). Codes and scales are copied."""
        info = format_info(format)
        if not isinstance(recipe, str) or recipe not in fp8_recipe_names():
            raise BlockscaleError(f"unknown fp8 recipe {recipe!r} ({', '.join(fp8_recipe_names())})")
        c = _words(codes, "codes", np.uint8).copy()
        if c.ndim != 2 or c.size == 0:
            raise BlockscaleError(f"codes must be a non-empty 2-D array (rows x K), got shape {c.shape}")
        sc = _native(np.asarray(scales))
        if sc.dtype != np.float32:
            raise BlockscaleError(f"scales must be float32, got dtype {sc.dtype}")
        sc = np.array(sc, dtype=np.float32, order="C").reshape(sc.shape or (1,))
        if recipe.endswith("_ue8m0"):
            # ue8m0 holds 2^-127 .. 2^127: a positive power of two, whose float32 has no fraction bits
            # (2^-127 is the subnormal 0x00400000, a power of two too).
            mantissa, _ = np.frexp(sc)
            if not np.all(mantissa == 0.5):
                raise BlockscaleError(f"{recipe} scales are ue8m0 powers of two; got "
                                      f"{sc.ravel()[np.argmax(mantissa.ravel() != 0.5)]!r}")
        matrix = cls(info["name"], recipe, c, sc)
        matrix._checked()
        return matrix

    def _checked(self):
        rows, k = self.codes.shape
        want = _fp8_scale_shape(self.granularity, rows, k)
        if self.scales.shape != want:
            raise BlockscaleError(f"scales has shape {self.scales.shape}: {self.recipe} ({self.granularity}) on "
                                  f"{rows} x {k} needs {want}")
        return self

    def dequantize(self):
        """float64 values: element x scale, each exact."""
        rows, k = self.shape
        s = self.scales.astype(np.float64)
        g = self.granularity
        per = (np.full((rows, k), s[0]) if g == "tensor" else np.repeat(s[:, None], k, axis=1) if g == "row" else
               np.repeat(s, 128, axis=1)[:, :k] if g == "1x128" else np.repeat(np.repeat(s, 128, axis=0), 128, axis=1)[:rows, :k])
        return decode(self.codes, self.format) * per

    def __repr__(self):
        return f"Fp8Matrix({self.format}, {self.recipe}, shape={self.shape})"


def quantize_fp8(x, format="float8_e4m3fn", recipe="deepgemm_1x128"):
    """Quantizes a 2-D array (rows x K; K last: A as M x K, B as N x K) to fp8 with fp32 scales by a
    named recipe (`fp8_recipe_names()`), bit for bit as DeepGEMM or torchao do it. Values that are not
    float32 are rounded to float32 first; non-finite inputs are refused."""
    info = format_info(format)
    given = _real_values(x, "quantize_fp8")
    if given.ndim != 2 or given.size == 0:
        raise BlockscaleError(f"quantize_fp8 takes a non-empty 2-D array (rows x K), got shape {given.shape}")
    a = np.ascontiguousarray(given, dtype=np.float32)
    names = fp8_recipe_names()
    if recipe not in names:
        raise BlockscaleError(f"unknown fp8 recipe '{recipe}' ({', '.join(names)})")
    rows, k = a.shape
    codes = np.empty((rows, k), dtype=np.uint8)
    scales = np.empty(_fp8_scale_shape(names[recipe], rows, k), dtype=np.float32)
    _call(_lib.bsc_quantize_fp8(_b(info["name"]), _b(recipe), _ptr(a), rows, k, _ptr(codes), _ptr(scales)))
    return Fp8Matrix(info["name"], recipe, codes, scales)


def _check_fp8_operands(a, b, what):
    """Two Fp8Matrix operands with the same K, stored as the C ABI reads them."""
    if not isinstance(a, Fp8Matrix) or not isinstance(b, Fp8Matrix):
        raise BlockscaleError(f"{what} takes two Fp8Matrix operands (quantize_fp8 or Fp8Matrix.from_codes)")
    if a.shape[1] != b.shape[1]:
        raise BlockscaleError(f"A is {a.shape[0]} x {a.shape[1]} and B^T is {b.shape[0]} x {b.shape[1]}: K must agree")
    for matrix in (a, b):
        if not (isinstance(matrix.codes, np.ndarray) and matrix.codes.dtype == np.uint8 and matrix.codes.ndim == 2
                and matrix.codes.flags.c_contiguous and isinstance(matrix.scales, np.ndarray)
                and matrix.scales.dtype == np.float32 and matrix.scales.flags.c_contiguous):
            raise BlockscaleError("Fp8Matrix.codes must be C-contiguous uint8 (rows x K), scales C-contiguous float32")
        matrix._checked()


def gemm_fp8(a, b, model="cublaslt", split_k=1, d_type="f32", bias=None, threads=0, return_info=False):
    """D = A B^T (A: Fp8Matrix M x K, B: Fp8Matrix N x K) as a Hopper library call computes it, as
    measured on an H200 and an H100: cublaslt, cublaslt_fast_accum, torch_scaled_mm,
    torch_scaled_mm_fast_accum; or exact (the exact sum rounded once to f32). split_k: the slices
    of a split-K call (`recorded_split_k` gives what the heuristic chose); d_type "bf16" or "f16":
    the library's D in that dtype (the f32 D rounded once), returned as float32 values. bias (torch
    models, bf16 or f16 D only, as torch._scaled_mm takes it): N values, each exact in d_type, added
    to the f32 D in f32 before D is rounded to d_type (measured on an H200, docs/conformance.md
    "Bias"). No C (beta = 0); cuBLASLt's own epilogue (alpha, beta C, its per-row bias, an e4m3 D):
    cublaslt_fp8."""
    _check_fp8_operands(a, b, "gemm_fp8")
    if d_type not in ("f32", "bf16", "f16"):
        raise BlockscaleError(f"d_type '{d_type}': f32, bf16 or f16")
    m, n, k = a.shape[0], b.shape[0], a.shape[1]
    bias_values = None
    if bias is not None:
        given = _native(np.asarray(bias))
        if given.ndim != 1 or given.shape[0] != n:
            raise BlockscaleError(f"bias holds shape {given.shape}: one value per column of D, ({n},)")
        bias_values = np.ascontiguousarray(given, dtype=np.float32)
        if not np.array_equal(bias_values.astype(np.float64), given.astype(np.float64), equal_nan=True):
            raise BlockscaleError("bias: a value is not a float32 (torch._scaled_mm takes the bias in D's dtype)")
    d = np.empty((m, n), dtype=np.uint32)
    definition = ctypes.c_char_p()
    _call(_lib.bsc_gemm_fp8(_b(model, "model"), _b(a.format, "A's format"), _b(a.recipe), _ptr(a.codes), _ptr(a.scales),
                            _b(b.format, "B's format"), _b(b.recipe), _ptr(b.codes), _ptr(b.scales), m, n, k,
                            _integer(split_k, "split_k", 1), _b(d_type),
                            None if bias_values is None else _ptr(bias_values),
                            _integer(threads, "threads (0 for all)", 0), _ptr(d),
                            ctypes.byref(definition)))
    result = d.view(np.float32)
    if not return_info:
        return result
    return result, {"model": model, "definition": definition.value.decode()}


def cublaslt_fp8(a, b, fast_accum=False, split_k=1, alpha=1.0, beta=None, c=None, c_type=None, bias=None,
                 bias_type=None, d_type="f32", d_scale=1.0, relu=False, threads=0, return_info=False):
    """cuBLASLt's fp8 GEMM with its epilogue, D = d_scale (alpha sa sb A B^T + beta C + bias), as
    measured on an H200 (cuBLASLt 13.1; docs/conformance.md, "cuBLASLt epilogue"). A: Fp8Matrix M x K
    and B: Fp8Matrix N x K, e4m3 or e5m2 (not both e5m2), scaled tensor-wise, row-wise or 1x128 x
    1x128 / 128x128 (the cublaslt rows); split_k: the call's slices. c: M x N values of c_type, read
    with beta (default 1 with c, else 0, as `blockscale gemm --c` takes it; c with beta = 0, which
    cuBLASLt would not read, is refused); bias: M values of bias_type, one per row of D (CUBLASLT_EPILOGUE_BIAS); relu:
    CUBLASLT_EPILOGUE_RELU (RELU_BIAS with a bias), max(y, +0) before D's type and amax_d (RELU_BIAS
    after a split-K keeps a -0); d_type "f32",
    "bf16", "f16", "e4m3" or, with an e5m2 operand, "e5m2" (fp8 D: with d_scale). Types cuBLASLt did
    not take on the H200 are refused. Defaults: C of D's type (bf16 for an fp8 D), the bias bf16 for
    an f32 D, else C's type. Returns D as float32 values and amax_d (max |D| before the D scale, what
    AMAX_D_POINTER receives)."""
    _check_fp8_operands(a, b, "cublaslt_fp8")
    m, n, k = a.shape[0], b.shape[0], a.shape[1]
    if c_type is None:
        c_type = "bf16" if d_type in ("e4m3", "e5m2") else d_type
    if bias_type is None:
        bias_type = "bf16" if d_type == "f32" else c_type

    def values(x, shape, what):
        given = _native(np.asarray(x))
        if given.shape != shape:
            raise BlockscaleError(f"{what} holds shape {given.shape}, not {shape}")
        out = np.ascontiguousarray(given, dtype=np.float32)
        if not np.array_equal(out.astype(np.float64), given.astype(np.float64), equal_nan=True):
            raise BlockscaleError(f"{what}: a value is not a float32")
        return out

    if beta is None:
        beta = 0.0 if c is None else 1.0
    elif c is not None and beta == 0:
        raise BlockscaleError("c with beta = 0: cuBLASLt does not read C (leave beta out for 1, or give no c)")
    c_values = None if c is None else values(c, (m, n), "c")
    bias_values = None if bias is None else values(bias, (m,), "bias")
    d = np.empty((m, n), dtype=np.float32)
    amax = ctypes.c_float()
    definition = ctypes.c_char_p()
    model = "cublaslt_fast_accum" if _flag(fast_accum, "fast_accum") else "cublaslt"
    _call(_lib.bsc_cublaslt_fp8(_b(model), _b(a.format, "A's format"), _b(a.recipe), _ptr(a.codes), _ptr(a.scales),
                                _b(b.format, "B's format"), _b(b.recipe), _ptr(b.codes), _ptr(b.scales), m, n, k,
                                _integer(split_k, "split_k", 1), _float32_scalar(alpha, "alpha"),
                                _float32_scalar(beta, "beta"), None if c_values is None else _ptr(c_values),
                                _b(c_type, "c_type"), None if bias_values is None else _ptr(bias_values),
                                _b(bias_type, "bias_type"), _b(d_type, "d_type"), _float32_scalar(d_scale, "d_scale"),
                                int(_flag(relu, "relu")), _integer(threads, "threads (0 for all)", 0), _ptr(d),
                                ctypes.byref(amax),
                                ctypes.byref(definition)))
    if not return_info:
        return d, amax.value
    return d, amax.value, {"model": model, "definition": definition.value.decode()}


def recorded_split_k(model, a, b, gpu="h100", d_type="f32", cublaslt_workspace_mib=64):
    """The split count S that cuBLASLt's heuristic chose for this call (model, the operands' formats,
    granularities and shape) on an H100 or an H200, as recorded over a grid of 11,552 shapes;
    a shape off the grid raises BlockscaleError naming the query that asks the GPU instead."""
    if not isinstance(a, Fp8Matrix) or not isinstance(b, Fp8Matrix) or a.shape[1] != b.shape[1]:
        raise BlockscaleError("recorded_split_k takes two Fp8Matrix operands with the same K (A: M x K, B: N x K)")
    if d_type not in ("f32", "bf16"):
        raise BlockscaleError(f"d_type {d_type!r}: the heuristic's choices were recorded for an f32 or a bf16 D only "
                              f"(scripts/cublaslt_split_k.py query asks the GPU for others)")
    s = ctypes.c_int()
    _call(_lib.bsc_recorded_split_k(_b(model, "model"), _b(a.format, "A's format"), _b(a.recipe, "A's recipe"),
                                    _b(b.format, "B's format"), _b(b.recipe, "B's recipe"), a.shape[0], b.shape[0],
                                    a.shape[1], _b(gpu, "gpu"), int(d_type == "bf16"),
                                    _integer(cublaslt_workspace_mib, "cublaslt_workspace_mib", 0), ctypes.byref(s)))
    return s.value


# ---- 2:4 sparse GEMMs (PyTorch's semi-structured sparsity on Hopper).

_SPARSE_INPUTS = {"float16": "float16", "bfloat16": "bfloat16", "float8_e4m3fn": "float8_e4m3fn", "float32": "float32"}


def sparse_mm(a, b, out_format=None, slices=1, threads=0):
    """D = A B as torch._cslt_sparse_mm (cuSPARSELt 0.8, the backend of to_sparse_semi_structured)
    computes it on an H100, as measured there. a (M x K) and b (K x N) share one dtype: float16,
    ml_dtypes bfloat16 or float8_e4m3fn, or float32 (the tf32 kernel, which rounds A and B apart).
    A holds zeros at its pruned positions: at most 2 nonzeros in each group of 4 along K (float32: 1
    of 2); pruning is the caller's. out_format: D's format (default the input's; float32 for e4m3
    is allowed too); slices: the split-K slice count of the call. Returns D's values as float32
    (every f16, bf16 and e4m3 value is one)."""
    x, y = _native(np.asarray(a)), _native(np.asarray(b))
    name = _SPARSE_INPUTS.get(x.dtype.name)
    if name is None or y.dtype != x.dtype:
        raise BlockscaleError(f"sparse_mm takes A and B of one dtype (float16, bfloat16, float8_e4m3fn, float32), got "
                              f"{x.dtype} and {y.dtype}")
    if x.ndim != 2 or y.ndim != 2 or x.shape[1] != y.shape[0] or x.size == 0 or y.size == 0:
        raise BlockscaleError(f"A is M x K and B is K x N: got shapes {x.shape} and {y.shape}")
    words = {1: np.uint8, 2: np.uint16, 4: np.uint32}[x.dtype.itemsize]
    aw = np.ascontiguousarray(x).view(words).astype(np.uint32)
    bw = np.ascontiguousarray(y).view(words).astype(np.uint32)
    out = format_info(name if out_format is None else out_format)["name"]
    m, k, n = x.shape[0], x.shape[1], y.shape[1]
    d = np.empty((m, n), dtype=np.uint32)
    _call(_lib.bsc_sparse_mm(_b(name), _b(out), _ptr(aw), _ptr(bw), m, n, k, _integer(slices, "slices", 1),
                             _integer(threads, "threads (0 for all)", 0), _ptr(d)))
    if out == "float32":
        return d.view(np.float32)
    return decode(d, out).astype(np.float32)


def ulp_distance(x, y):
    """How many float32 values lie between x and y, elementwise (int64): 0 for equal values and for
    +0 against -0, 1 for neighbours, across zero too. Where exactly one of the two is NaN the
    distance is -1; two NaNs are at distance 0."""
    def ordered(v):
        if v.dtype != np.float32:
            raise BlockscaleError(f"ulp_distance compares float32 arrays, got dtype {v.dtype}")
        i = v.view(np.int32).astype(np.int64)
        return np.where(i < 0, -(i & 0x7FFFFFFF), i)  # the floats in order, +-0 at 0
    a, b = _native(np.asarray(x)), _native(np.asarray(y))
    try:
        np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        raise BlockscaleError(f"ulp_distance compares arrays of one shape (or shapes that broadcast), got {a.shape} "
                              f"and {b.shape}") from None
    d = np.abs(ordered(a) - ordered(b))
    nan_a, nan_b = np.isnan(a), np.isnan(b)
    return np.where(nan_a & nan_b, 0, np.where(nan_a | nan_b, -1, d))


# ---- Single instructions.

def instruction_rows():
    """The emulator's instruction table: (row id, the canonical name of its smallest instruction)."""
    return [tuple(line.split("\t")) for line in _lines(_lib.bsc_instruction_rows())]


def instruction(name):
    """An instruction name resolved (PTX spellings accepted): canonical name, row, m, n, k, the
    formats of a, b, d (and scale, block), the model's algorithm, L, F, rounding and provenance."""
    out = ctypes.c_char_p()
    _call(_lib.bsc_instruction_info(_b(name, "instruction"), ctypes.byref(out)))
    return json.loads(out.value.decode())


def _operand(x, shape, what):
    w = _words(x, what)
    if w.shape != shape:
        raise BlockscaleError(f"{what} has shape {w.shape}; the instruction takes {shape}")
    return w


def _d_words(ins, d):
    return d.astype(_word_dtype(format_info(ins["d"])["storage_bits"]))


def mma(name, a, b, c=None, scale_a=None, scale_b=None):
    """D of one instruction on storage words: A (M x K), B (K x N), C (M x N, or None for +0) and for
    block-scaled kinds SFA (M x K/block) and SFB (K/block x N). Returns D's storage words (uint32 for
    an f32 accumulator, uint16 for f16)."""
    ins = instruction(name)
    m, n, k = ins["m"], ins["n"], ins["k"]
    if "sparse_group" in ins:
        raise BlockscaleError(ins["name"] + " is a sparse form: use mma_sparse")
    if ins["a"] == "float64":
        raise BlockscaleError(ins["name"] + ": f64 instructions are not taken here")
    aw, bw = _operand(a, (m, k), "A"), _operand(b, (k, n), "B")
    cw = None if c is None else _operand(c, (m, n), "C")
    sa = sb = None
    if "block" in ins:
        if scale_a is None or scale_b is None:
            raise BlockscaleError(ins["name"] + " is block-scaled: give scale_a and scale_b")
        kb = k // ins["block"]
        sa, sb = _operand(scale_a, (m, kb), "scale_a"), _operand(scale_b, (kb, n), "scale_b")
    elif scale_a is not None or scale_b is not None:
        raise BlockscaleError(ins["name"] + " takes no block scales")
    d = np.empty((m, n), dtype=np.uint32)
    _call(_lib.bsc_mma(_b(ins["name"]), _ptr(aw), _ptr(bw), _ptr(cw), _ptr(sa), _ptr(sb), _ptr(d)))
    return _d_words(ins, d)


def mma_sparse(name, a_values, a_index, b, c=None):
    """D of a sparse form (mma.sp::ordered_metadata, wgmma.mma_async.sp): A's stored values (M x K/2)
    and their positions in their groups of 4 (tf32: 2), increasing within a group; B (K x N); C."""
    ins = instruction(name)
    m, n, k = ins["m"], ins["n"], ins["k"]
    if "sparse_group" not in ins:
        raise BlockscaleError(ins["name"] + " is a dense instruction: use mma")
    av = _operand(a_values, (m, k // 2), "a_values")
    ai = _words(a_index, "a_index", np.uint8)
    if ai.shape != (m, k // 2):
        raise BlockscaleError(f"a_index has shape {ai.shape}; the instruction takes {(m, k // 2)}")
    bw = _operand(b, (k, n), "B")
    cw = None if c is None else _operand(c, (m, n), "C")
    d = np.empty((m, n), dtype=np.uint32)
    _call(_lib.bsc_mma_sparse(_b(ins["name"]), _ptr(av), _ptr(ai), _ptr(bw), _ptr(cw), _ptr(d)))
    return _d_words(ins, d)
