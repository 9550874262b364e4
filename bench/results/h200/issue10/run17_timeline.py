#!/usr/bin/env python3
"""Reads the per-block timelines that issue 10 runs 17 and 18's experiment builds of step 12
(run17_timeline.patch, run18_timeline.patch) dumped for one launch, and prints where each block's time went.

Each dump: a header (blocks, entries per block, slices, tile N), then per block its entries:
0 globaltimer at entry (ns), 1 clock64 at entry, 2 SM, 3 clock after the barriers' setup,
4 K blocks of the block's first unit, 5 clock after its K loop, 6 clock after the split-K
gather (7: 1 if this block was the tile's last), 8 clock after its store, 9 clock at exit,
10 units, 11 globaltimer at exit; 16 + j the consumers' clock when K block j of the first unit
was there (its full barrier passed); 144 + j the producer's clock when it could issue K block j
(its empty barrier passed); run 18 only: 272 the producer warpgroup's first instruction, 273 its
walk made, 274 the tensor maps prefetched, 275 its first unit found, 276 the consumers at their
first wait. Clocks are per SM; the globaltimer aligns the SMs.

Usage: python3 run17_timeline.py DUMP.bin ...  (the dumps: run17_timelines.tar.gz, run18_timelines.tar.gz)"""
import struct
import sys
import statistics as st


def load(path):
    data = open(path, "rb").read()
    blocks, entries, slices, tile_n = struct.unpack("<4q", data[:32])
    values = struct.unpack("<%dQ" % (blocks * entries), data[32:32 + 8 * blocks * entries])
    return blocks, slices, tile_n, [values[b * entries:(b + 1) * entries] for b in range(blocks)]


def q(xs, f):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(f * (len(xs) - 1) + 0.5))]


def summary(path):
    blocks, slices, tile_n, rows = load(path)
    g0 = min(r[0] for r in rows)
    # the clock rate from each block's own two clocks
    rate = st.median((r[9] - r[1]) / max(1, (r[11] - r[0])) for r in rows)  # cycles per ns
    us = lambda cycles: cycles / rate / 1000.0
    print(f"{path}: {blocks} blocks, {slices} slices, tile N {tile_n}, SM clock {rate * 1000:.0f} MHz")
    print(f"  kernel span (first entry to last exit): {(max(r[11] for r in rows) - g0) / 1000:.2f} us")
    starts = [(r[0] - g0) / 1000 for r in rows]
    print(f"  block entry after the first: median {q(starts, .5):.2f} us, max {max(starts):.2f} us")
    def line(name, xs):
        if not xs:
            return
        print(f"  {name:44s} median {us(q(xs, .5)):6.2f} us   p10 {us(q(xs, .1)):6.2f}   p90 {us(q(xs, .9)):6.2f}   max {us(max(xs)):6.2f}")
    line("setup (entry to barriers ready)", [r[3] - r[1] for r in rows])
    if all(r[272] for r in rows):  # run 18's build: the producer's start, step by step
        line("producer warpgroup's first instruction", [r[272] - r[1] for r in rows])
        line("producer: its walk made", [r[273] - r[1] for r in rows])
        line("producer: tensor maps prefetched", [r[274] - r[1] for r in rows])
        line("producer: first unit found", [r[275] - r[1] for r in rows])
        line("consumers at their first wait", [r[276] - r[1] for r in rows])
    line("producer's first issue", [r[144] - r[1] for r in rows])
    line("first K block there", [r[16] - r[1] for r in rows])
    kbs = [r[4] for r in rows]
    print(f"  K blocks in the first unit: median {q(kbs, .5)}, min {min(kbs)}, max {max(kbs)}")
    line("first K block there to last K block there", [r[16 + min(r[4], 128) - 1] - r[16] for r in rows if r[4] > 0])
    line("last K block there to K loop done", [r[5] - r[16 + min(r[4], 128) - 1] for r in rows if r[4] > 0])
    if slices > 1:
        line("K loop done to gather done (all blocks)", [r[6] - r[5] for r in rows])
        last = [r for r in rows if r[7] == 1]
        line("K loop done to gather done (tile's last)", [r[6] - r[5] for r in last])
        line("gather done to store issued (tile's last)", [r[8] - r[6] for r in last])
    else:
        line("K loop done to store issued", [r[8] - r[5] for r in rows])
    line("store issued to exit (last unit)", [r[9] - r[8] for r in rows if r[10] == 1 and r[8] > 0])
    line("whole block (entry to exit)", [r[9] - r[1] for r in rows])
    # The stream: the interval between K blocks there, and issue-to-there for each K block
    gaps, waits, issue_gaps = [], [], []
    for r in rows:
        n = min(r[4], 128)
        for j in range(1, n):
            gaps.append(r[16 + j] - r[16 + j - 1])
        for j in range(n):
            if r[144 + j] and r[16 + j]:
                waits.append(r[16 + j] - r[144 + j])
        for j in range(1, n):
            issue_gaps.append(r[144 + j] - r[144 + j - 1])
    if gaps:
        print(f"  K block to next K block there: median {q(gaps, .5):.0f} cycles, p10 {q(gaps, .1):.0f}, p90 {q(gaps, .9):.0f}")
        print(f"  producer's issue to K block there: median {q(waits, .5):.0f} cycles ({us(q(waits, .5)):.2f} us), p10 {q(waits, .1):.0f}, p90 {q(waits, .9):.0f}")
        print(f"  producer's issue to next issue: median {q(issue_gaps, .5):.0f} cycles, p90 {q(issue_gaps, .9):.0f}")
    # per K block index: the median arrival, to see the fill and the steady state
    n = min(q(kbs, .5), 128)
    arr = [us(st.median(r[16 + j] - r[1] for r in rows if r[4] > j)) for j in range(n)]
    iss = [us(st.median(r[144 + j] - r[1] for r in rows if r[4] > j)) for j in range(n)]
    step = max(1, n // 16)
    print("  K block j: median issued / there (us after entry): " +
          ", ".join(f"{j}: {iss[j]:.2f}/{arr[j]:.2f}" for j in range(0, n, step)))


for path in sys.argv[1:]:
    summary(path)
    print()
