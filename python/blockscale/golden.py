# SPDX-License-Identifier: Apache-2.0
"""Golden vectors from Python: read, write, verify and generate the files of golden/FORMAT.md.

A test bench reads a committed file and gets numpy columns, one per field:

    from blockscale import golden
    g = golden.read("golden/instructions/sm_90a.wgmma.fp8.f32.k32.e4m3.e4m3.txt")
    a, b, c, d = g["a"], g["b"], g["c"], g["d"]   # uint8 (cases, 32), uint8 (cases, 32), uint32 ...
    g.ops, g.fields, g.cases                      # the @op lines, the field specs, the case count

and writes its own results (a kernel's D measured on a GPU) as a file that `verify` or
`blockscale golden verify` then checks bit for bit:

    mine = golden.GoldenFile.create("instruction", g.ops[:1], g.fields, dict(g.columns, d=d_measured),
                                    data="hardware", sources=["H200, my kernel"])
    mine.save("measured.txt"); print(golden.verify("measured.txt")[0].mismatches)

The reader here is written from FORMAT.md alone and shares no code with the library's reader
(golden/file.h); tests/python/test_golden.py holds both to the same verdict, message and canonical
text on every committed file and on thousands of corrupted ones. Every malformation raises
`GoldenError` (a BlockscaleError): "<file>:<line>: <rule broken>", the library's words.
`verify`, `generate`, `families` and `operations` call the library (golden/verify.h, set.h).
"""
import collections
import ctypes
import hashlib
import json
import os
import re

import numpy as np

from . import BlockscaleError, _b, _call, _integer, _lib, _native, decode

__all__ = ["Field", "GoldenError", "GoldenFile", "Mismatch", "Report", "families", "generate", "operations", "parse",
           "read", "read_manifest", "read_set", "verify"]


class GoldenError(BlockscaleError):
    """A malformed, truncated or inconsistent golden file or set: str() is "<file>:<line>: <what>",
    or "<file>: <what>" for the file as a whole (line 0)."""

    def __init__(self, file, line, message):
        super().__init__(f"{file}:{line}: {message}" if line > 0 else f"{file}: {message}")
        self.file, self.line, self.message = file, line, message


# FORMAT.md section 2, "Fields": each element type, its hex digits (0: a u64, 1 to 16 digits without
# leading zeros, one per field) and the largest word it may hold. e2m3 and e3m2 are 6-bit codes;
# ue4m3 takes a whole byte (tensor cores ignore bit 7, numerics.md b.5); tf32 is an fp32 word.
_TYPES = {"e2m1": (1, 0xF), "e2m3": (2, 0x3F), "e3m2": (2, 0x3F), "e4m3": (2, 0xFF), "e5m2": (2, 0xFF),
          "ue8m0": (2, 0xFF), "ue4m3": (2, 0xFF), "f16": (4, 0xFFFF), "bf16": (4, 0xFFFF), "tf32": (8, 0xFFFFFFFF),
          "f32": (8, 0xFFFFFFFF), "f64": (16, (1 << 64) - 1), "u8": (2, 0xFF), "u32": (8, 0xFFFFFFFF),
          "u64": (0, (1 << 64) - 1)}
_DTYPES = {0: np.uint64, 1: np.uint8, 2: np.uint8, 4: np.uint16, 8: np.uint32, 16: np.uint64}
# A reader's limits (FORMAT.md: "a hostile or corrupt file cannot ask for unbounded memory").
_MAX_FIELDS, _MAX_COUNT, _MAX_WORDS = 64, 1 << 16, 1 << 18
_KINDS = ("conversion", "quantization", "layout", "instruction", "gemm")
_DATA = ("edge", "random", "realistic", "mixed", "hardware", "self-test")
_HEADER_KEYS = "golden, generator, kind, op, mode, fields, seed, data, cases, source"

_HEX_VALUE = np.full(256, 255, dtype=np.uint8)
for _i, _c in enumerate("0123456789abcdef"):
    _HEX_VALUE[ord(_c)] = _HEX_VALUE[ord(_c.upper())] = _i
_HEX_DIGITS = np.frombuffer(b"0123456789abcdef", dtype=np.uint8)
_HEX = re.compile(r"[0-9a-fA-F]*\Z")
_NAME = re.compile(r"[a-z][a-z0-9_]{0,31}\Z")
_DECIMAL = re.compile(r"[0-9]+\Z")
_SPACES = re.compile(r"[ \t]+")
_ODD_BYTES = re.compile(r"[\r\0\x80-\xff]")


def _quote(s, limit=48):
    """s for a message: at most `limit` characters, quotes, backslashes and unprintable bytes as \\xNN."""
    out = "".join(ch if 0x20 <= ord(ch) < 0x7F and ch not in "'\\" else "\\x%02x" % ord(ch) for ch in s[:limit])
    return "'" + out + ("..." if len(s) > limit else "") + "'"


def _split(line):
    """Fields are separated by runs of spaces and tabs (nothing else)."""
    return [token for token in _SPACES.split(line) if token]


Field = collections.namedtuple("Field", "name type count output")
Field.__doc__ = """One field of @fields: its name, element type ("e4m3", "f32", "u64", ...), element count
and whether it is an expected result (after "->")."""


def _fields_string(fields):
    parts, arrow = [], False
    for f in fields:
        if f.output and not arrow:
            parts.append("->")
            arrow = True
        parts.append(f"{f.name}:{f.type}" + (f"[{f.count}]" if f.count != 1 else ""))
    return " ".join(parts)


def _parse_fields(text):
    """@fields' value as Fields; ValueError naming what is wrong."""
    out, outputs, words = [], False, 0
    for token in _split(text):
        if token == "->":
            if outputs:
                raise ValueError("'->' appears twice")
            if not out:
                raise ValueError("no input field before '->'")
            outputs = True
            continue
        colon = token.find(":")
        if colon < 0:
            raise ValueError(f"field {_quote(token)} is not name:type or name:type[count]")
        name, kind, count = token[:colon], token[colon + 1:], 1
        if not _NAME.match(name):
            raise ValueError(f"field name {_quote(name)} must be [a-z][a-z0-9_]*, at most 32 characters")
        if any(f.name == name for f in out):
            raise ValueError(f"field name {_quote(name)} appears twice")
        bracket = kind.find("[")
        if bracket >= 0:
            if not kind.endswith("]"):
                raise ValueError(f"field {_quote(token)}: count must be written [N]")
            number = kind[bracket + 1:-1]
            if not _DECIMAL.match(number) or number[0] == "0" or int(number) >= 1 << 64:
                raise ValueError(f"field {_quote(token)}: count {_quote(number)} is not a positive decimal number")
            count = int(number)
            if count > _MAX_COUNT:
                raise ValueError(f"field {_quote(token)}: count above the limit {_MAX_COUNT}")
            kind = kind[:bracket]
        if kind not in _TYPES:
            raise ValueError(f"field {_quote(token)}: unknown type {_quote(kind)}")
        if kind == "u64" and count != 1:
            raise ValueError(f"field {_quote(token)}: a u64 field holds one element")
        words += count
        if words > _MAX_WORDS:
            raise ValueError(f"more than {_MAX_WORDS} elements per case")
        out.append(Field(name, kind, count, outputs))
        if len(out) > _MAX_FIELDS:
            raise ValueError(f"more than {_MAX_FIELDS} fields")
    if not out:
        raise ValueError("no fields")
    if not outputs:
        raise ValueError("no '->' before the expected-result fields")
    if not out[-1].output:
        raise ValueError("no field after '->'")
    return out


def _decimal(value):
    """A header's decimal integer, or None: digits only, no leading zero, below 2^64."""
    if not _DECIMAL.match(value) or (len(value) > 1 and value[0] == "0") or int(value) >= 1 << 64:
        return None
    return int(value)


def _field_error(field, token):
    """The first rule a token of this field breaks (FORMAT.md section 2), or None."""
    digits, limit = _TYPES[field.type]
    if not _HEX.match(token):
        return f"field {field.name}: {_quote(token)} is not hexadecimal"
    if digits == 0:
        if len(token) > 16:
            return f"field {field.name}: more than 16 hex digits in {_quote(token)}"
        if len(token) > 1 and token[0] == "0":
            return f"field {field.name}: {_quote(token)} has a leading zero (a u64 is written without them)"
        return None
    want = field.count * digits
    if len(token) != want:
        spec = field.type + (f"[{field.count}]" if field.count > 1 else "")
        return f"field {field.name} ({spec}) needs {want} hex digits, got {len(token)}"
    for e in range(field.count):
        element = token[e * digits:(e + 1) * digits]
        if int(element, 16) > limit:
            where = f" element {e}" if field.count > 1 else ""
            return f"field {field.name}{where}: {_quote(element)} is not a {field.type} value (at most 0x{limit:x})"
    return None


def _column(field, tokens):
    """The words of one field over all cases, or None when a token breaks a rule (then the
    sequential check finds the first one, as a reader going line by line would)."""
    digits, limit = _TYPES[field.type]
    if digits == 0:
        if any(_field_error(field, t) for t in tokens):
            return None
        return np.array([int(t, 16) for t in tokens], dtype=np.uint64)
    want = field.count * digits
    if any(len(t) != want for t in tokens):
        return None
    values = _HEX_VALUE[np.frombuffer("".join(tokens).encode("latin-1"), dtype=np.uint8)]
    if values.size and values.max() == 255:
        return None
    values = values.reshape(len(tokens), field.count, digits).astype(np.uint64)
    words = np.zeros((len(tokens), field.count), dtype=np.uint64)
    for d in range(digits):
        words = (words << np.uint64(4)) | values[:, :, d]
    if words.size and words.max() > limit:
        return None
    words = words.astype(_DTYPES[digits])
    return words[:, 0] if field.count == 1 else words


class _Reader:
    """FORMAT.md section 2, line by line: the first rule broken, in file order, is the one reported."""

    def __init__(self, text, name):
        self.text, self.name = text, name
        self.line = 0
        self.header = {"generator": None, "kind": None, "ops": [], "modes": [], "sources": [], "seed": None,
                       "data": "", "fields": None, "cases": None, "notes": []}
        self.tokens, self.lines = [], []
        self.checked, self.columns = 0, []  # cases whose fields are known to be well-formed; their words

    def fail(self, message, line=None):
        # Once cases have begun, an earlier case's malformed field comes first.
        self.check_cases()
        raise GoldenError(self.name, self.line if line is None else line, message)

    def check_cases(self):
        if self.checked == len(self.tokens):
            return
        fields = self.header["fields"]
        columns = [_column(f, [t[i] for t in self.tokens]) for i, f in enumerate(fields)] if self.tokens else []
        if any(c is None for c in columns):
            for tokens, line in zip(self.tokens, self.lines):
                for field, token in zip(fields, tokens):
                    message = _field_error(field, token)
                    if message:
                        raise GoldenError(self.name, line, message)
        self.checked, self.columns = len(self.tokens), columns

    def header_line(self, line, seen):
        space = line.find(" ")
        key, value = (line[1:space], line[space + 1:]) if space >= 0 else (line[1:], "")
        h = self.header
        if not value:
            self.fail(f"@{key} has no value")
        if key in ("golden", "generator", "kind", "fields", "seed", "data", "cases"):
            if key in seen:
                self.fail(f"@{key} appears twice")
            seen.add(key)
        if key == "generator":
            h["generator"] = value
        elif key == "kind":
            if value not in _KINDS:
                self.fail(f"unknown @kind {_quote(value)} (conversion, quantization, layout, instruction, gemm)")
            h["kind"] = value
        elif key in ("op", "mode", "source"):
            h[key + "s"].append(value)
        elif key == "fields":
            try:
                h["fields"] = _parse_fields(value)
            except ValueError as e:
                self.fail(f"@fields: {e}")
        elif key in ("seed", "cases"):
            number = _decimal(value)
            if number is None:
                self.fail(f"@{key} must be a decimal integer, got {_quote(value)}")
            h[key] = number
        elif key == "data":
            if value not in _DATA:
                self.fail(f"@data {_quote(value)} is not one of edge, random, realistic, mixed, hardware, self-test")
            h["data"] = value
        else:
            self.fail(f"unknown header key {_quote('@' + key)} ({_HEADER_KEYS})")

    def missing(self, where, line):
        h = self.header
        for key, absent in (("generator", h["generator"] is None), ("kind", h["kind"] is None), ("op", not h["ops"]),
                            ("fields", h["fields"] is None), ("cases", h["cases"] is None)):
            if absent:
                self.fail(f"@{key} is missing{where}", line)

    def run(self):
        magic = in_cases = False
        seen = {"golden"}
        h = self.header
        lines = self.text.split("\n")
        if self.text.endswith("\n"):
            lines.pop()  # a final LF ends the last line; no empty line follows it
        odd = _ODD_BYTES.search(self.text) is not None
        for self.line, line in enumerate(lines, 1):
            if odd:
                if "\r" in line:
                    self.fail("carriage return in line (line ends must be LF only)")
                if "\0" in line:
                    self.fail("NUL byte in line")
                high = re.search(r"[\x80-\xff]", line)
                if high:
                    self.fail("non-ASCII byte 0x%02X (golden files are ASCII)" % ord(high.group()))
            if not line:
                continue
            if line[0] == "#":
                if not magic:
                    self.fail("not a blockscale golden-vector file: the first line must be '@golden 1'")
                if not in_cases and line[1:2] == " ":
                    h["notes"].append(line[2:])
                continue
            if not magic:
                if not line.startswith("@golden "):
                    self.fail("not a blockscale golden-vector file: the first line must be '@golden 1'")
                if line[8:] != "1":
                    self.fail(f"unsupported golden format version {_quote(line[8:])} (this reader knows version 1)")
                magic = True
                continue
            if line[0] == "@":
                if in_cases:
                    self.fail("header line after the first case")
                self.header_line(line, seen)
                continue
            if not in_cases:
                self.missing(" before the first case", self.line)
                in_cases = True
            tokens = _split(line)
            fields = h["fields"]
            if len(tokens) != len(fields):
                self.fail(f"expected {len(fields)} fields ({_fields_string(fields)}), got {len(tokens)}")
            if len(self.tokens) >= h["cases"]:
                self.fail(f"more cases than @cases {h['cases']}")
            self.tokens.append(tokens)
            self.lines.append(self.line)
        if not magic:
            self.fail("empty file: not a blockscale golden-vector file", 0)
        if h["seed"] is not None and h["data"] in ("hardware", "self-test"):
            self.fail(f"@seed with @data {h['data']}: sets measured on a device are not drawn from a seed", 0)
        if not in_cases:
            self.missing("", 0)
        if len(self.tokens) != h["cases"]:
            self.fail(f"file ends after {len(self.tokens)} cases, but @cases says {h['cases']} (truncated?)", 0)
        self.check_cases()
        empty = [np.zeros((0,) if f.count == 1 else (0, f.count), dtype=_DTYPES[_TYPES[f.type][0]]) for f in h["fields"]]
        columns = self.columns if self.tokens else empty
        return GoldenFile(self.name, h["generator"], h["kind"], h["ops"], h["fields"],
                          dict(zip((f.name for f in h["fields"]), columns)), modes=h["modes"], sources=h["sources"],
                          seed=h["seed"], data=h["data"], notes=h["notes"], lines=self.lines)


class GoldenFile:
    """One golden file in memory: the header (generator, kind, ops, modes, sources, seed, data,
    fields, notes) and one numpy column of storage words per field (`g["a"]`, `g.columns`): shape
    (cases,) for a single element, (cases, count) for a vector field; uint8 for 1- and 2-digit
    types, uint16 for f16/bf16, uint32 for f32/tf32/u32, uint64 for f64/u64. `lines` holds each
    case's line number in the file it was read from."""

    def __init__(self, name, generator, kind, ops, fields, columns, modes=(), sources=(), seed=None, data="",
                 notes=(), lines=None):
        self.name, self.generator, self.kind = name, generator, kind
        self.ops, self.modes, self.sources = list(ops), list(modes), list(sources)
        self.seed, self.data, self.notes = seed, data, list(notes)
        self.fields = tuple(fields)
        self.columns = columns
        self.cases = len(next(iter(columns.values()))) if columns else 0
        self.lines = np.asarray(lines if lines is not None else [], dtype=np.int64)

    @classmethod
    def create(cls, kind, ops, fields, columns, *, generator=None, modes=(), sources=(), seed=None, data="", notes=(),
               name="<memory>"):
        """A file made in Python, e.g. a kernel's measured outputs (data="hardware", sources naming
        the device) beside the inputs they were computed from. `fields` is @fields' text or Fields;
        `columns` maps every field name to integer storage words (float16/32/64 arrays are taken as
        their bit patterns for f16, f32, tf32 and f64 fields), shape (cases,) or (cases, count).
        Checked as the reader checks a file: a BlockscaleError names the rule broken."""
        from . import __version__
        where = f"{name}: "
        if kind not in _KINDS:
            raise BlockscaleError(where + f"unknown kind {_quote(str(kind))} ({', '.join(_KINDS)})")
        try:  # Fields are checked by the rules of a file's @fields, as their text
            fields = _parse_fields(fields if isinstance(fields, str) else _fields_string([Field(*f) for f in fields]))
        except ValueError as e:
            raise BlockscaleError(where + f"fields: {e}") from None
        ops = [str(op) for op in ([ops] if isinstance(ops, str) else ops)]
        if not ops or any(not op or "\n" in op for op in ops):
            raise BlockscaleError(where + "at least one operation, each one line and not empty")
        if data not in ("",) + _DATA:
            raise BlockscaleError(where + f"data {_quote(str(data))} is not one of {', '.join(_DATA)}")
        if seed is not None:
            seed = _integer(seed, where + "seed", 0, 2**64 - 1)
            if data in ("hardware", "self-test"):
                raise BlockscaleError(where + "sets measured on a device have no seed")
        unknown = set(columns) - {f.name for f in fields}
        if unknown:
            raise BlockscaleError(where + f"columns {sorted(unknown)} are not fields")
        words, cases = {}, None
        for f in fields:
            if f.name not in columns:
                raise BlockscaleError(where + f"no column for field {f.name}")
            w = _words_of(f, columns[f.name], where)
            if cases is not None and len(w) != cases:
                raise BlockscaleError(where + f"field {f.name} has {len(w)} cases, the fields before it {cases}")
            cases, words[f.name] = len(w), w
        for text in list(modes) + list(sources) + list(notes) + [generator or ""]:
            if "\n" in str(text) or _ODD_BYTES.search(str(text)):
                raise BlockscaleError(where + f"header text {_quote(str(text))} must be one line of ASCII")
        return cls(name, generator or f"blockscale {__version__}", kind, ops, fields, words, modes=modes,
                   sources=sources, seed=seed, data=data, notes=notes)

    def __getitem__(self, name):
        return self.columns[name]

    def field(self, name):
        for f in self.fields:
            if f.name == name:
                return f
        raise KeyError(name)

    @property
    def inputs(self):
        return [f for f in self.fields if not f.output]

    @property
    def outputs(self):
        return [f for f in self.fields if f.output]

    def values(self, name):
        """A field's values as float64 (NaN, Inf and -0 kept): codes decoded exactly, f32 / tf32 /
        f16 / f64 words as the floats they are (a tf32 operand's low bits included; the instruction
        truncates them, numerics.md b.1). ue4m3 bit 7 is ignored, as tensor cores ignore it."""
        f, w = self.field(name), self.columns[name]
        if f.type in ("u8", "u32", "u64"):
            raise BlockscaleError(f"field {name} holds {f.type} integers, not values of a format")
        if f.type in ("f32", "tf32"):
            return w.view(np.float32).astype(np.float64)
        if f.type == "f16":
            return w.view(np.float16).astype(np.float64)
        if f.type == "f64":
            return w.view(np.float64).copy()
        return decode(w & 0x7F if f.type == "ue4m3" else w, f.type)

    def to_text(self):
        """The file's text as the library writes it (golden::format_golden): header lines in a fixed
        order, the notes, one line per case, lower-case hex."""
        head = ["@golden 1", f"@generator {self.generator}", f"@kind {self.kind}"]
        head += [f"@op {op}" for op in self.ops] + [f"@mode {m}" for m in self.modes]
        head += [f"@source {s}" for s in self.sources]
        head += [f"@seed {self.seed}"] if self.seed is not None else []
        head += [f"@data {self.data}"] if self.data else []
        head += [f"@fields {_fields_string(self.fields)}", f"@cases {self.cases}"] + [f"# {n}" for n in self.notes]
        columns = [_hex_column(f, self.columns[f.name]) for f in self.fields]
        body = [" ".join(parts) for parts in zip(*columns)] if self.cases else []
        return "\n".join(head + body) + "\n"

    def save(self, path):
        with open(path, "w", encoding="ascii", newline="\n") as out:
            out.write(self.to_text())

    def __repr__(self):
        return f"<GoldenFile {self.name}: {self.kind}, {self.cases} cases, {_fields_string(self.fields)}>"


def _words_of(field, column, where):
    digits, limit = _TYPES[field.type]
    a = _native(np.asarray(column))  # float values are stored as their words: native byte order first
    float_words = {"f16": np.float16, "f32": np.float32, "tf32": np.float32, "f64": np.float64}
    if a.dtype.kind == "f" and float_words.get(field.type) == a.dtype.type:
        a = a.view(_DTYPES[digits])
    if a.dtype.kind not in "ui":
        raise BlockscaleError(where + f"field {field.name} must hold integer storage words, got dtype {a.dtype}")
    shape = (a.shape[0],) if field.count == 1 else (a.shape[0], field.count)
    if a.ndim == 0 or (a.shape != shape and not (field.count == 1 and a.shape == (a.shape[0], 1))):
        raise BlockscaleError(where + f"field {field.name} ({field.type}[{field.count}]) must have shape "
                              f"(cases,{'' if field.count == 1 else ' ' + str(field.count)}), got {a.shape}")
    if a.size and (int(a.min()) < 0 or int(a.max()) > limit):
        raise BlockscaleError(where + f"field {field.name} holds a value outside 0 .. 0x{limit:x} ({field.type})")
    return a.reshape(shape).astype(_DTYPES[digits])


def _hex_column(field, words):
    """Each case's token of one field: every element with the type's fixed digits, element 0 first;
    a u64 without leading zeros."""
    digits = _TYPES[field.type][0]
    if digits == 0:
        return [format(int(v), "x") for v in words]
    w = words.reshape(len(words), -1).astype(np.uint64)
    shifts = np.arange(digits - 1, -1, -1, dtype=np.uint64) * np.uint64(4)
    nibbles = (w[:, :, None] >> shifts) & np.uint64(15)
    chars = _HEX_DIGITS[nibbles.astype(np.intp)].reshape(len(words), -1)
    return [row.decode() for row in np.ascontiguousarray(chars).view(f"S{chars.shape[1]}").ravel()]


def parse(text, name="<text>"):
    """A golden file's text (str or bytes) in memory; `name` is how messages name it."""
    raw = text if isinstance(text, (bytes, bytearray)) else str(text).encode("utf-8")
    return _Reader(bytes(raw).decode("latin-1"), name).run()


def read(path):
    """A golden file from disk (GoldenError when it cannot be read or is malformed)."""
    path = os.fspath(path)
    if os.path.isdir(path):
        raise GoldenError(path, 0, "a directory, not a file")
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise GoldenError(path, 0, f"cannot open the file ({e.strerror})") from None
    return parse(data, path)


# ---- Sets: manifest.json (FORMAT.md section 5).

def _no_duplicate_keys(pairs):
    keys = [k for k, _ in pairs]
    for k in keys:
        if keys.count(k) > 1:
            raise ValueError(f"key {k!r} appears twice in one object")
    return dict(pairs)


def read_manifest(path):
    """A set's manifest.json (path: the file or its directory) as a dict, checked against FORMAT.md
    section 5: the format name and version, every required key with its type, each file's kind,
    relative path inside the set, SHA-256 spelling, and the case total."""
    path = os.fspath(path)
    if os.path.isdir(path):
        path = os.path.join(path, "manifest.json")

    def bad(message):
        raise GoldenError(path, 0, "manifest: " + message)

    try:
        with open(path, "rb") as f:
            m = json.loads(f.read().decode("utf-8"), object_pairs_hook=_no_duplicate_keys)
    except OSError as e:
        raise GoldenError(path, 0, f"cannot open the file ({e.strerror})") from None
    except (UnicodeDecodeError, ValueError) as e:
        bad(f"not UTF-8 JSON ({e})")
    if not isinstance(m, dict):
        bad("the top level must be an object")
    known = {"format", "format_version", "generator", "operation", "seed", "data", "cases", "files"}
    for key in sorted(set(m) - known):
        bad(f"unknown key {key!r}")
    for key in sorted(known - set(m)):
        bad(f"missing key {key!r}")
    if m["format"] != "blockscale-golden-manifest":
        bad('"format" must be "blockscale-golden-manifest"')
    if m["format_version"] != 1 or isinstance(m["format_version"], bool):
        bad(f"unsupported format_version {m['format_version']!r}")
    for key in ("generator", "operation", "data"):
        if not isinstance(m[key], str):
            bad(f'"{key}" must be a string')

    def count(v, what):
        if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v < 1 << 64:
            bad(f'"{what}" must be a non-negative integer below 2^64')
        return v

    if m["seed"] is not None:
        count(m["seed"], "seed")
    if not isinstance(m["files"], list):
        bad('"files" must be an array')
    total, paths = 0, set()
    for f in m["files"]:
        if not isinstance(f, dict):
            bad('each entry of "files" must be an object')
        for key in sorted(set(f) - {"path", "kind", "operation", "companion_of", "cases", "sha256"}):
            bad(f"unknown key {key!r} in a file entry")
        for key in ("path", "kind", "cases", "sha256"):
            if key not in f:
                bad(f"a file entry has no {key!r}")
        for key in ("path", "kind", "operation", "companion_of", "sha256"):
            if key in f and not isinstance(f[key], str):
                bad(f'"{key}" must be a string')
        for key in ("path", "companion_of"):
            p = f.get(key)
            if p is not None and (not p or p[0] == "/" or "\\" in p or "\0" in p or
                                  any(s in ("", ".", "..") for s in p.split("/"))):
                bad(f"path {p!r} must be relative, '/'-separated and stay inside the set's directory")
        if f["kind"] != "npy" and f["kind"] not in _KINDS:
            bad(f"unknown file kind {f['kind']!r}")
        if (f["kind"] == "npy") != ("companion_of" in f):
            bad('a file has "companion_of" exactly when its kind is "npy"')
        if not re.fullmatch(r"[0-9a-f]{64}", f["sha256"]):
            bad('"sha256" must be 64 lower-case hex digits')
        if f["path"] in paths:
            bad(f"{f['path']!r} is listed twice")
        paths.add(f["path"])
        total += 0 if f["kind"] == "npy" else count(f["cases"], "cases")
    if count(m["cases"], "cases") != total:
        bad(f'"cases" is {m["cases"]} but the files list {total}')
    return m


def read_set(path):
    """Every text file of a set (path: its directory or manifest.json), each checked against the
    manifest (SHA-256 and case count) and read: {relative path: GoldenFile}. A listed file that is
    missing, and a .txt or .npy file in the directory that the manifest does not list, are errors."""
    manifest_path = os.fspath(path)
    if os.path.isdir(manifest_path):
        manifest_path = os.path.join(manifest_path, "manifest.json")
    m = read_manifest(manifest_path)
    root = os.path.dirname(manifest_path)
    listed = {f["path"] for f in m["files"]}
    for n in sorted(os.listdir(root)):
        if n.endswith((".txt", ".npy")) and n not in listed:
            raise GoldenError(manifest_path, 0, f"manifest: {n!r} is in the set's directory but not listed")
    out = {}
    for f in m["files"]:
        full = os.path.join(root, *f["path"].split("/"))
        try:
            with open(full, "rb") as h:
                data = h.read()
        except OSError as e:
            raise GoldenError(full, 0, f"listed in the manifest but cannot be read ({e.strerror})") from None
        digest = hashlib.sha256(data).hexdigest()
        if digest != f["sha256"]:
            raise GoldenError(full, 0, f"SHA-256 {digest} differs from the manifest's {f['sha256']}")
        if f["kind"] == "npy":
            continue
        g = parse(data, full)
        if g.cases != f["cases"] or g.kind != f["kind"]:
            raise GoldenError(full, 0, f"{g.cases} {g.kind} cases, but the manifest lists {f['cases']} {f['kind']}")
        out[f["path"]] = g
    return out


# ---- The library: verification and generation.

Mismatch = collections.namedtuple("Mismatch", "case line detail expected computed")
Mismatch.__doc__ = """A case whose recomputed outputs differ (or that cannot be computed: detail says
why): its index, line, the case as the file has it and with blockscale's outputs."""


class Report:
    """One file's verification: path, kind, operation, cases, mismatches (the count), ok, error
    (set when the file is malformed, missing or inconsistent with its manifest) and
    first_mismatches (at most max_report Mismatch)."""

    def __init__(self, r):
        self.path, self.kind, self.operation = r["path"], r["kind"], r["operation"]
        self.cases, self.mismatches, self.ok = r["cases"], r["mismatches"], r["ok"]
        self.error = r.get("error", "")
        self.first_mismatches = [Mismatch(m["case"], m["line"], m["detail"], m["expected"], m["computed"])
                                 for m in r["first_mismatches"]]

    def __repr__(self):
        state = "ok" if self.ok else self.error or f"{self.mismatches} mismatches"
        return f"<Report {self.path}: {self.cases} cases, {state}>"


def verify(*paths, max_report=5):
    """Recomputes every case of files, manifests or directories with blockscale, bit for bit, as
    `blockscale golden verify` does; one Report per file (a directory: every manifest below it and
    every .txt no manifest lists; a manifest: its hashes and counts too)."""
    if not paths:
        raise BlockscaleError("verify needs at least one path (file, manifest or directory)")
    if not all(isinstance(p, (str, bytes, os.PathLike)) for p in paths):
        raise BlockscaleError(f"verify takes paths (str, bytes or os.PathLike), got {paths!r}")
    names = [os.fsdecode(p) for p in paths]
    if any(not n or "\n" in n for n in names):
        raise BlockscaleError("a path must be non-empty and hold no line break")
    out = ctypes.c_char_p()
    _call(_lib.bsc_golden_verify(_b("\n".join(names), "paths"), _integer(max_report, "max_report", 0),
                                 ctypes.byref(out)))
    return [Report(r) for r in json.loads(out.value.decode())]


def families():
    """The generated families ("conversions", "quantization", ..., "gemms")."""
    return [f for f in _lib.bsc_golden_families().decode().split("\n") if f]


def operations(family):
    """The operation ids of a family, as `generate` and `blockscale golden gen --op` take them."""
    out = ctypes.c_char_p()
    _call(_lib.bsc_golden_operations(_b(family, "family"), ctypes.byref(out)))
    return [op for op in out.value.decode().split("\n") if op]


def generate(op, seed=1, data=None, cases=None, out=None):
    """Generates a family or one operation id as `blockscale golden gen` does (data: "mixed",
    "edge", "random" or "realistic", default per FORMAT.md section 4; cases: the operation's
    default when None). With `out` the set and its manifest.json are also written to that
    directory. Returns the files, read back by this module's reader."""
    seed = _integer(seed, "seed", 0, 2**64 - 1)
    cases = 0 if cases is None else _integer(cases, "cases", 1, 2**63 - 1)
    text = ctypes.c_char_p()
    _call(_lib.bsc_golden_generate(_b(op, "op"), seed, _b("" if data is None else data, "data"), cases,
                                   _b(os.fsdecode(out) if out is not None else "", "out"), ctypes.byref(text)))
    return [parse(f["text"], f["name"]) for f in json.loads(text.value.decode())]
