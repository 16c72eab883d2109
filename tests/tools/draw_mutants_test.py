#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""scripts/draw_mutants.py on small C++ and Python files whose mutation sites are known.

    draw_mutants_test.py SCRIPTS_DIR SCRATCH_DIR

Checked: every site is found and nothing in comments, strings, raw strings, character literals,
preprocessor lines, template brackets, shifts, `->`, unary minus or string joins; each mutant's old text occurs
once in its file and differs from its new text at the site alone; the same seed draws the same
mutants; bad inputs exit 2 with a message that names them.
"""
import json
import os
import subprocess
import sys

scripts, scratch = sys.argv[1], sys.argv[2]
os.makedirs(scratch, exist_ok=True)
draw = os.path.join(scripts, "draw_mutants.py")
failures = []


def check(condition, what):
    if not condition:
        failures.append(what)
        print(f"FAIL: {what}")


def write(name, text):
    path = os.path.join(scratch, name)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path


def run(*args):
    return subprocess.run([sys.executable, draw, *args], capture_output=True, text=True)


CPP = r'''#include <vector>
#if FOO > 3
// a comment: x < y && 7 == 8
/* a block
   comment: 9 + 10 */
template <typename T>
int f(const std::vector<int>& v, T* p) {
  const std::string s = "a < b, 11" + std::string("x") + "y";
  const char* r = R"x(12 == 13
      14 + 15)x";
  char c = '4';
  int big = 1'000;
  int n = -v[0] << 2;
  int m = p->size() >> 1;
  if (n < m && n == m) return std::min(n, m) + 5;
  return n >= 6 || m != 0 ? 1.5 : 0x20;
}
#endif
'''
PY = '''"""A docstring: 1 + 2 < 3."""
# comment: a and b
def g(a, b):
    s = "x == 4"
    t = f"{a} or 5"
    if a < b and not b:
        return min(a, 7) - b
    return np.max(a)
'''

cpp = write("sample.cpp", CPP)
result = run(cpp, "--count", "14", "--seed", "3")
check(result.returncode == 0, f"draws all 14 C++ sites: {result.stderr}")
mutants = json.loads(result.stdout) if result.returncode == 0 else []
check("14 sites in 1 files" in result.stderr, f"counts 14 C++ sites: {result.stderr.strip()}")
notes = sorted(m["note"].split(": ", 1)[1] for m in mutants)
expected_notes = sorted(["0 -> 1", "2 -> 3", "1 -> 2", "< -> <=", "&& -> ||", "== -> !=", "std::min( -> std::max(",
                         "+ -> -", "5 -> 6", ">= -> >", "6 -> 7", "|| -> &&", "!= -> ==", "0 -> 1"])
check(notes == expected_notes, f"the C++ sites: {notes}")
for m in mutants:
    check(CPP.count(m["old"]) == 1, f"old text once: {m['old']!r}")
    mutated = CPP.replace(m["old"], m["new"], 1)
    diff = [i for i, (x, y) in enumerate(zip(CPP, mutated)) if x != y]
    check(mutated != CPP and diff and diff[0] >= CPP.index("int f("), f"mutates code after the comments: {m}")
    check(not any(w in m["new"] and w not in m["old"] for w in ("R\"x(13", "'5'", "1'001", "a <= b")),
          f"no literal mutated: {m}")
check(run(cpp, "--count", "15").returncode == 2, "more mutants than sites: exit 2")
again = run(cpp, "--count", "14", "--seed", "3")
check(again.stdout == result.stdout, "the same seed draws the same mutants")
other = run(cpp, "--count", "5", "--seed", "4")
check(other.returncode == 0 and other.stdout != run(cpp, "--count", "5", "--seed", "3").stdout, "another seed, other mutants")

py = write("sample.py", PY)
result = run(py, "--count", "5", "--seed", "1")
check(result.returncode == 0 and "5 sites in 1 files" in result.stderr, f"counts 5 Python sites: {result.stderr.strip()}")
notes = sorted(m["note"].split(": ", 1)[1] for m in json.loads(result.stdout or "[]"))
check(notes == sorted(["< -> <=", "and -> or", "min( -> max(", "7 -> 8", "- -> +"]), f"the Python sites: {notes}")

# A site on a repeated line is widened past the line.
repeated = write("repeated.cpp", "int a() {\n  x = y + 1;\n}\nint b() {\n  x = y + 1;\n}\n")
result = run(repeated, "--count", "4", "--seed", "1")
for m in json.loads(result.stdout or "[]"):
    check(open(repeated).read().count(m["old"]) == 1 and "\n" in m["old"], f"widened past the line: {m['old']!r}")

out = os.path.join(scratch, "out.json")
result = run(cpp, "--count", "2", "--out", out)
check(result.returncode == 0 and len(json.load(open(out))) == 2, "--out writes the list")
for args, word in ((["--count", "0", cpp], "--count"), (["--count", "1", os.path.join(scratch, "missing.cpp")], "missing.cpp")):
    bad = run(*args)
    check(bad.returncode == 2 and word in bad.stderr, f"bad input {args}: exit {bad.returncode}, {bad.stderr.strip()}")

if failures:
    print(f"{len(failures)} checks failed")
    sys.exit(1)
print("draw_mutants: all checks passed")
