#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Random command lines for the `blockscale` tool: bad arguments must end in a clear error.

    cli_args_fuzz.py BLOCKSCALE_BINARY SCRATCH_DIR [INVOCATIONS] [SEED] [GOLDEN_DIR]

Every subcommand and every option are read from the tool's own help, so new ones are covered
without editing this file. Each invocation mixes options, values that break their rules (empty,
negative, non-numeric, out of range, unknown names, malformed regular expressions, missing and
unreadable paths, copies of committed golden files in the wrong place) and stray positional words. The
standard (README "Exit status", developers' guide "Bad input"): a run ends with status 0-3, never
by a signal or an uncaught exception; a non-zero status comes with a message; no sanitizer report.
The seed fixes the command lines, so a failure reproduces with the printed command.
"""
import collections
import os
import random
import re
import shutil
import subprocess
import sys

# Options that start long jobs on valid input rather than parse more arguments (the self-test runs
# 30 targets for about 90 s); their argument handling is covered by tests/harness/cli_test.sh.
LONG_JOBS = {"--self-test"}
TIMEOUT_S = 60
# Commands whose valid runs take time in proportion to their size options (`gemm`: M x N x K, with
# the exact reference at about 2e8 MAC/s): the fuzz starts them on a small problem and draws those
# options' values without the large valid sizes, so that every run stays short under the sanitizers
# too. Their argument handling is what is tested here; tests/tools/cli_gemm_test.py runs real ones.
SMALL_PROBLEM = {"gemm": ["--m", "8", "--n", "8", "--k", "64"]}
SIZE_OPTIONS = {"gemm": {"--m", "--n", "--k"}}
LARGE_VALID_SIZES = {"4097", "65536"}


def help_text(binary, *args):
    run = subprocess.run([binary, "help", *args], capture_output=True, text=True, errors="replace")
    return run.stdout + run.stderr


def commands(binary):
    text = help_text(binary)
    section = text.split("commands:", 1)[1]
    return re.findall(r"^\s{2}([a-z][a-z0-9-]*)\s", section, re.MULTILINE)


def main():
    binary, scratch = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    invocations = int(sys.argv[3]) if len(sys.argv) > 3 else 400
    seed = int(sys.argv[4]) if len(sys.argv) > 4 else 1
    golden_dir = os.path.abspath(sys.argv[5]) if len(sys.argv) > 5 else None
    os.makedirs(scratch, exist_ok=True)
    rng = random.Random(seed)

    options = {}
    words = {}
    for command in commands(binary):
        text = help_text(binary, command)
        options[command] = sorted(set(re.findall(r"--[a-z0-9][a-z0-9-]*", text)) - LONG_JOBS)
        # A command whose usage line says <subcommand> lists each one at two spaces' indent.
        first, _, rest = text.partition("\n")
        words[command] = sorted(set(re.findall(r"^  ([a-z][a-z0-9-]*)(?= |$)", rest, re.MULTILINE))) \
            if "<subcommand>" in first else []
    if not options:
        print("FAIL: no subcommands found in `blockscale help`")
        return 1

    # Copies of committed golden files, fresh for every run: options such as --markdown and --out
    # write where they are told, and the source tree must stay as it is.
    golden_files = []
    if golden_dir and os.path.isdir(golden_dir):
        every = sorted(os.path.join(root, f) for root, _, files in os.walk(golden_dir) for f in files)
        originals = every[::max(1, len(every) // 24)]  # spread over the families and the manifests
        copies = os.path.join(scratch, "golden_copies")
        shutil.rmtree(copies, ignore_errors=True)
        os.makedirs(copies)
        for n, original in enumerate(originals):
            golden_files.append(os.path.join(copies, f"{n:02d}_{os.path.basename(original)}"))
            shutil.copyfile(original, golden_files[-1])
    values = ["", "0", "-1", "1", "2", "3", "16", "31", "32", "33", "4097", "65536", "1e9", "abc", "-0",
              "nan", "inf", "1.5", "0x7f", "99999999999999999999", "4294967297", "-9223372036854775809",
              "sm_90a", "sm_100a", "sm_999", "e4m3", "e2m1", "ue4m3", "bogus", "all", "random", "realistic",
              "probes", "random,realistic,bogus", ",", "=", "-", "--", "(", "[a-", ".*", "sm_90a gemm",
              "^sm_90a @underflow=positive", "x@e_zero=abc", "@F=999", "ieee", "cuda", "ml_dtypes",
              "conversions", "gemms", "convert:f32:e4m3", "convert:f64:bogus", "quantize:nvfp4:nvfp4_te",
              "quantize:mxfp8_e4m3:bogus", "layout:tiled_128x4", "pack:fp6_dense:e2m1", "instruction:bogus",
              "gemm:sm_100a_nvfp4_chain", "gemm:", "warp:drive", "rows:0,5,133", "cols:", "tiled_128x4",
              "deepgemm_sm100_rows:alignment=128:5,133", "deepgemm_sm100_rows:padded_rows=9:3,3",
              "deepgemm_sm100_cols:4,8", "deepgemm_sm100_rows:alignment=0:4", "deepgemm_sm100_cols:x:",
              "triton_kernels_rows:tokens=400:5,133", "triton_kernels_rows:1,130",
              "weights", "flashinfer_sm90_fp4", "trtllm_sm90_fp4", "sm90_mixed_folded:group_size=32",
              "/nonexistent/dir/file", "/dev/null", "/proc/self/status", scratch,
              os.path.join(scratch, "out"), os.path.join(scratch, "out.json")] + golden_files

    failures = 0
    statuses = collections.Counter()
    names = sorted(options)
    for _ in range(invocations):
        command = rng.choice(names)
        args = [command] + SMALL_PROBLEM.get(command, [])
        if words[command] and rng.random() < 0.8:
            args.append(rng.choice(words[command] + ["bogus"]))
        if rng.random() < 0.4:
            args.append(rng.choice(values))
        for _ in range(rng.randint(0, 4)):
            if not options[command]:
                break
            option = rng.choice(options[command])
            pool = values
            if option in SIZE_OPTIONS.get(command, ()):
                pool = [v for v in values if v not in LARGE_VALID_SIZES]
            form = rng.random()
            if form < 0.2:
                args.append(option)
            elif form < 0.6:
                args += [option, rng.choice(pool)]
            else:
                args.append(option + "=" + rng.choice(pool))
        if rng.random() < 0.05:
            args.append(rng.choice(values))
        shown = " ".join([binary] + [repr(a) if (not a or " " in a) else a for a in args])
        try:
            run = subprocess.run([binary] + args, capture_output=True, text=True, errors="replace",
                                 stdin=subprocess.DEVNULL, timeout=TIMEOUT_S, cwd=scratch)
        except subprocess.TimeoutExpired:
            print(f"FAIL (no end within {TIMEOUT_S} s): {shown}")
            failures += 1
            continue
        statuses[run.returncode] += 1
        problems = []
        if run.returncode < 0:
            problems.append(f"killed by signal {-run.returncode}")
        elif run.returncode > 3:
            problems.append(f"exit status {run.returncode} (0-3 are defined)")
        if run.returncode != 0 and not (run.stdout.strip() or run.stderr.strip()):
            problems.append("non-zero exit without a message")
        for marker in ("terminate called", "AddressSanitizer", "runtime error:", "LeakSanitizer"):
            if marker in run.stderr:
                problems.append(f"'{marker}' on stderr")
        if problems:
            failures += 1
            print(f"FAIL ({'; '.join(problems)}): {shown}")
            print("    " + run.stderr.strip()[-800:].replace("\n", "\n    "))
    spread = ", ".join(f"{n} x {status}" for status, n in sorted(statuses.items()))
    print(f"{invocations} command lines (seed {seed}) over {len(options)} subcommands, exit statuses: {spread}; "
          f"{failures} failing")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
