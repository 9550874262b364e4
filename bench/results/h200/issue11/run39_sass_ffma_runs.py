#!/usr/bin/env python3
"""Runs of consecutive FFMAs in an `nvdisasm -c` or `cuobjdump -sass` listing (issue 11 run 39).

For every run of at least 16 consecutive FFMA instructions (the block-scaled promotion is such a
run: `total = fma(sum, scale, total)` over a warpgroup's accumulators), prints how many runs have
each combination of: length, number of distinct registers in the second source operand (the
scale), number of instructions carrying a `.reuse` flag, and number of times that operand changes
from one instruction to the next. Then the totals over runs of at least 8.

  python3 run39_sass_ffma_runs.py LISTING.sass [LISTING.sass ...]
"""
import collections
import re
import sys

INSTRUCTION = re.compile(r"/\*[0-9a-f]{4,}\*/\s+(\S+)\s+([^;]*);")


def ffma_runs(path):
    run = []
    for line in open(path):
        if "Function :" in line:
            if run:
                yield run
            run = []
            continue
        m = INSTRUCTION.search(line)
        if not m:
            continue
        if m.group(1) == "FFMA":
            run.append(m.group(2))
        elif run:
            yield run
            run = []
    if run:
        yield run


def summary(path):
    shapes = collections.Counter()
    long_runs = instructions = with_reuse = 0
    for run in ffma_runs(path):
        if len(run) >= 8:
            long_runs += 1
            instructions += len(run)
            with_reuse += sum(".reuse" in r for r in run)
        if len(run) < 16:
            continue
        scale = [r.split(",")[2].strip().replace(".reuse", "") for r in run]
        switches = sum(scale[i] != scale[i - 1] for i in range(1, len(scale)))
        shapes[(len(run), len(set(scale)), sum(".reuse" in r for r in run), switches)] += 1
    print(f"{path}: runs of >= 16 FFMAs as (length, distinct scale registers, reuse flags, scale switches): count")
    for key, count in sorted(shapes.items()):
        print(f"  {key}: {count}")
    print(f"{path}: {long_runs} runs of >= 8 FFMAs, {instructions} FFMAs, {with_reuse} with a reuse flag")


for listing in sys.argv[1:]:
    summary(listing)
