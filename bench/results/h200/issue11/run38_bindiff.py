#!/usr/bin/env python3
"""Experiment only: `make BASE NEW DIFF` records where NEW differs from BASE (same size) as
(offset, 8 bytes) pairs; `apply BASE DIFF OUT` rebuilds NEW from BASE. So that three builds that
differ in a few control bits travel as one build and two small files."""
import struct, sys
mode = sys.argv[1]
if mode == "make":
    base, new = open(sys.argv[2], "rb").read(), open(sys.argv[3], "rb").read()
    assert len(base) == len(new)
    out = bytearray()
    for at in range(0, len(base) - len(base) % 8, 8):
        if base[at:at + 8] != new[at:at + 8]:
            out += struct.pack("<Q", at) + new[at:at + 8]
    assert base[len(base) - len(base) % 8:] == new[len(new) - len(new) % 8:]
    open(sys.argv[4], "wb").write(out)
    print(f"{sys.argv[3]}: {len(out) // 16} words differ")
else:
    data = bytearray(open(sys.argv[2], "rb").read())
    diff = open(sys.argv[3], "rb").read()
    for i in range(0, len(diff), 16):
        at = struct.unpack_from("<Q", diff, i)[0]
        data[at:at + 8] = diff[i + 8:i + 16]
    open(sys.argv[4], "wb").write(data)
