#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The instruction table's hardware evidence against the conformance records it cites.

Every HardwareEvidence entry of emulator/table.cpp whose source names one record file under
docs/conformance/ (not a pattern) must match that record: the record's device is the entry's GPU,
and over the record's conformance targets that are this row's instruction with the entry's operand
types (at any N), the outputs add up to the entry's count with no mismatch. A count typed wrongly
into the table, or a record replaced by a run that failed, fails this test.

Usage: table_evidence_test.py BLOCKSCALE_BINARY CONFORMANCE_DIR
"""
import json
import re
import subprocess
import sys


def row_takes(row, target):
    """Whether the conformance target name (arch, instruction, mMnNkK, D, A, B) is an instruction of
    this table row."""
    words = target.split()
    if len(words) != 6:
        return False
    arch, instruction, shape, d, a, b = words
    m = re.fullmatch(r"m(\d+)n(\d+)k(\d+)", shape)
    if m is None or arch != row["arch"] or instruction != row["instruction"] or d != row["d_type"]:
        return False
    mm, kk = int(m.group(1)), int(m.group(3))
    if not any(s["m"] == mm and s["k"] == kk for s in row["shapes"]):
        return False
    return a in row["a_types"].split("|") and b in row["b_types"].split("|")


def main():
    binary, records = sys.argv[1], sys.argv[2]
    rows = json.loads(subprocess.run([binary, "models", "--json"], check=True, capture_output=True, text=True).stdout)
    checked = 0
    failures = []
    for row in rows:
        for h in row["hardware"]:
            cited = re.search(r"docs/conformance/([A-Za-z0-9._-]+\.json)", h["source"])
            if cited is None:
                continue  # K&M files, numerics.md, or a pattern of several records
            with open(f"{records}/{cited.group(1)}") as f:
                record = json.load(f)
            where = f"{row['id']} {h['a']} x {h['b']} ({cited.group(1)})"
            if h["gpu"] not in record["device"]["name"]:
                failures.append(f"{where}: the record's device is {record['device']['name']}, the table says {h['gpu']}")
            outputs = mismatches = 0
            for t in record["conformance"]["targets"]:
                words = t["name"].split()
                if row_takes(row, t["name"]) and words[4] == h["a"] and words[5] == h["b"]:
                    outputs += t["outputs"]
                    mismatches += t["mismatches"]
            if outputs != h["outputs"] or mismatches != 0:
                failures.append(f"{where}: the record has {outputs} outputs with {mismatches} mismatches, "
                                f"the table says {h['outputs']} outputs agree")
            checked += 1
    for f in failures:
        print("FAIL", f)
    print(f"{checked} evidence entries checked against their records, {len(failures)} failures")
    if checked == 0:
        print("FAIL no evidence entry cites a record: the test checks nothing")
        return 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
