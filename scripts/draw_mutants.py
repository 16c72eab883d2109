#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Draws mutants from source files for scripts/mutate.py: which code could change unnoticed?

    scripts/draw_mutants.py FILE... --count N [--seed S] [--out MUTANTS.json]

Lists every mutation site of the files (C++/CUDA, or Python by the .py suffix) outside comments
and string literals, draws N of them with the seed, and writes them as mutate.py's JSON list (to
stdout without --out). A mutation is one of the mutation audits' (docs/verification.md, "Mutation
audit"): a comparison moved across its boundary (`<` and `<=`, `>` and `>=`), `==` and `!=`, `&&`
and `||` (Python: `and` and `or`), binary `+` and `-`, `min` and `max`, or a decimal integer
literal plus one. Binary operators count only with a space on each side, as the house format
writes them, so template brackets, `<<`, `->` and unary minus are no sites, nor is a `+` beside a
string literal. Each mutant's old text is the site widened on both sides until it occurs once in
its file, as mutate.py requires; a site whose line occurs more than once (a repeated statement) is
widened past the line until unique.
The same files, count and seed draw the same mutants.
"""
import argparse
import json
import random
import re
import sys

SWAPS = {" < ": " <= ", " <= ": " < ", " > ": " >= ", " >= ": " > ", " == ": " != ", " != ": " == ",
         " + ": " - ", " - ": " + "}
CPP_SWAPS = dict(SWAPS, **{" && ": " || ", " || ": " && ", "std::min(": "std::max(", "std::max(": "std::min("})
PY_SWAPS = dict(SWAPS, **{" and ": " or ", " or ": " and ", "min(": "max(", "max(": "min("})
# A decimal literal not inside a name, a number with a point or exponent, a hex literal or a
# number with digit separators.
INTEGER = re.compile(r"(?<![\w.])(?<!\d')(\d+)(?![\w.]|'\d)")
DIRECTIVE = re.compile(r"[ \t]*#")


def fail(message):
    print(f"draw_mutants: {message}", file=sys.stderr)
    sys.exit(2)


def code_mask(text, python):
    """True for each character of code, False inside comments, string and character literals,
    and preprocessor lines (an #include's or #if's number is no code to mutate)."""
    mask = [True] * len(text)
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if not python and (i == 0 or text[i - 1] == "\n") and DIRECTIVE.match(text, i):
            end = text.find("\n", i)
        elif python and c == "#" or not python and text.startswith("//", i):
            end = text.find("\n", i)
        elif not python and text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
        elif python and (text.startswith('"""', i) or text.startswith("'''", i)):
            end = text.find(text[i:i + 3], i + 3)
            end = n if end < 0 else end + 3
        elif not python and text.startswith('R"', i):
            delimiter = text[i + 2:text.find("(", i)]
            end = text.find(")" + delimiter + '"', i)
            end = n if end < 0 else end + len(delimiter) + 2
        elif c in "\"'" and (python or c == '"' or not text[i - 1:i].isalnum()):
            # C++ digit separators (1'000) are no character literals; INTEGER skips them.
            end = i + 1
            while end < n and text[end] != c and text[end] != "\n":
                end += 2 if text[end] == "\\" else 1
            end = min(end + 1, n)
        else:
            i += 1
            continue
        end = n if end < 0 else end
        for j in range(i, end):
            mask[j] = False
        i = end
    return mask


def sites(path, text):
    python = path.endswith(".py")
    mask = code_mask(text, python)
    found = []
    for old, new in (PY_SWAPS if python else CPP_SWAPS).items():
        start = text.find(old)
        while start >= 0:
            word = old.strip("( ").isalpha()
            boundary = not word or old.startswith(" ") or start == 0 or not (text[start - 1].isalnum() or text[start - 1] in "_.:")
            # `+` beside a string literal joins strings: its `-` would not compile (C++) or would
            # fail at its first call (Python), which tells nothing about the tests.
            joins = old in (" + ", " - ") and ('"' in text[start - 1:start] or '"' in text[start + 3:start + 4])
            if boundary and not joins and all(mask[start:start + len(old)]):
                found.append((start, old, new))
            start = text.find(old, start + 1)
    for m in INTEGER.finditer(text):
        if all(mask[m.start():m.end()]):
            found.append((m.start(), m.group(1), str(int(m.group(1)) + 1)))
    return sorted(found)


def unique_context(text, start, old):
    """The smallest window around text[start:start + len(old)] that occurs once in text."""
    lo, hi = start, start + len(old)
    while text.count(text[lo:hi]) > 1:  # ends: the whole text occurs once
        lo, hi = max(0, lo - 8), min(len(text), hi + 8)
    # Whole tokens at the ends read better in a report and are no less unique.
    while lo > 0 and (text[lo - 1].isalnum() or text[lo - 1] == "_"):
        lo -= 1
    while hi < len(text) and (text[hi].isalnum() or text[hi] == "_"):
        hi += 1
    return lo, hi


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+", help="paths from the repository root")
    parser.add_argument("--count", type=int, required=True)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out")
    args = parser.parse_args()
    if args.count < 1:
        fail("--count must be at least 1")
    pool = []
    for path in args.files:
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except (OSError, UnicodeDecodeError) as e:
            fail(f"cannot read {path}: {e}")
        pool += [(path, text, site) for site in sites(path, text)]
    if len(pool) < args.count:
        fail(f"the files have {len(pool)} mutation sites, fewer than --count {args.count}")
    print(f"draw_mutants: {len(pool)} sites in {len(args.files)} files", file=sys.stderr)
    mutants = []
    for path, text, (start, old, new) in random.Random(args.seed).sample(pool, args.count):
        lo, hi = unique_context(text, start, old)
        window = text[lo:hi]
        at = start - lo
        line = text.count("\n", 0, start) + 1
        mutants.append({"file": path, "old": window,
                        "new": window[:at] + new + window[at + len(old):],
                        "note": f"line {line}: {old.strip()} -> {new.strip()}"})
    out = json.dumps(mutants, indent=1) + "\n"
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(out)
    else:
        sys.stdout.write(out)


if __name__ == "__main__":
    main()
