#!/usr/bin/env python3
"""Experiment only (issue 11): set the yield hint on runs of promotion instructions.

Reads the SASS of an object built with `nvcc --no-compress` (so that its cubins lie
in it uncompressed), finds every run of at least --min-run consecutive instructions
of the given kinds (FADD, FFMA) in every kernel, and on each of them sets the yield
bit (bit 45 of the instruction's high word; 0 means "may yield") and clears the four
operand-reuse bits (58-61), since a reuse cache does not survive a switch of warp.
Nothing else changes: the cuobjdump listing of the result differs from the input's
only in those control bits.

With --keep-reuse, instructions that carry reuse bits are left alone: the yield bit is set
only where no reuse is lost.

Usage: yield_patch.py IN.o OUT.o CUOBJDUMP [--kinds FADD,FFMA] [--min-run 8] [--keep-reuse]
"""
import argparse
import re
import struct
import subprocess
import sys
from collections import defaultdict

YIELD_BIT = 1 << 45
REUSE_BITS = 0xF << 58

FUNC_RE = re.compile(r"^\s*Function : (\S+)")
INSN_RE = re.compile(r"^\s*/\*([0-9a-f]{4,})\*/\s+(.*?);\s*/\* 0x([0-9a-f]{16}) \*/")
HIGH_RE = re.compile(r"^\s*/\* 0x([0-9a-f]{16}) \*/\s*$")


def disassemble(path, cuobjdump):
    text = subprocess.run([cuobjdump, "-sass", path], check=True, capture_output=True, text=True).stdout
    functions = defaultdict(list)  # name -> [(offset, mnemonic, low, high)]
    name = None
    pending = None
    for line in text.splitlines():
        m = FUNC_RE.match(line)
        if m:
            name = m.group(1)
            continue
        m = INSN_RE.match(line)
        if m and name:
            body = m.group(2).strip()
            if body.startswith("@"):
                body = body.split(None, 1)[1]
            mnemonic = body.split()[0] if body else ""
            pending = (int(m.group(1), 16), mnemonic, int(m.group(3), 16))
            continue
        m = HIGH_RE.match(line)
        if m and pending:
            functions[name].append(pending + (int(m.group(1), 16),))
            pending = None
    return functions


def cubin_text_sections(data):
    """Every .text.<kernel> section of every sm_xx cubin inside `data`: name -> file offsets."""
    sections = defaultdict(list)
    start = 0
    while True:
        at = data.find(b"\x7fELF\x02\x01", start)
        if at < 0:
            break
        start = at + 1
        machine = struct.unpack_from("<H", data, at + 18)[0]
        if machine != 190:  # EM_CUDA
            continue
        shoff = struct.unpack_from("<Q", data, at + 0x28)[0]
        shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, at + 0x3A)
        headers = []
        for i in range(shnum):
            h = at + shoff + i * shentsize
            sh_name, _type, _flags, _addr, sh_offset, sh_size = struct.unpack_from("<IIQQQQ", data, h)
            headers.append((sh_name, sh_offset, sh_size))
        strtab = at + headers[shstrndx][1]
        for sh_name, sh_offset, sh_size in headers:
            end = data.find(b"\0", strtab + sh_name)
            sname = data[strtab + sh_name:end].decode()
            if sname.startswith(".text."):
                sections[sname[len(".text."):]].append((at + sh_offset, sh_size))
    return sections


def main():
    p = argparse.ArgumentParser()
    p.add_argument("input")
    p.add_argument("output")
    p.add_argument("cuobjdump")
    p.add_argument("--kinds", default="FADD,FFMA")
    p.add_argument("--min-run", type=int, default=8)
    p.add_argument("--keep-reuse", action="store_true",
                   help="leave instructions that carry reuse bits as they are (yield only on the others)")
    a = p.parse_args()
    kinds = set(a.kinds.split(","))

    data = bytearray(open(a.input, "rb").read())
    functions = disassemble(a.input, a.cuobjdump)
    sections = cubin_text_sections(data)
    changed = 0
    runs = 0
    per_kind = defaultdict(int)
    for name, insns in functions.items():
        places = sections.get(name)
        if not places or len(places) != 1:
            sys.exit(f"{name}: {len(places or [])} .text sections found, expected one")
        base, size = places[0]
        i = 0
        while i < len(insns):
            j = i
            while j < len(insns) and insns[j][1].split(".")[0] in kinds:
                j += 1
            if j - i >= a.min_run:
                runs += 1
                for offset, mnemonic, low, high in insns[i:j]:
                    where = base + offset
                    assert offset + 16 <= size
                    got_low, got_high = struct.unpack_from("<QQ", data, where)
                    if (got_low, got_high) != (low, high):
                        sys.exit(f"{name}+{offset:#x}: bytes differ from the listing")
                    if a.keep_reuse and high & REUSE_BITS:
                        continue
                    new_high = high & ~YIELD_BIT & ~REUSE_BITS
                    if new_high != high:
                        struct.pack_into("<Q", data, where + 8, new_high)
                        changed += 1
                        per_kind[mnemonic.split(".")[0]] += 1
            i = max(j, i + 1)
    open(a.output, "wb").write(data)
    print(f"{len(functions)} kernels, {runs} runs of >= {a.min_run} {'/'.join(sorted(kinds))}, "
          f"{changed} instructions changed ({dict(per_kind)})")


if __name__ == "__main__":
    main()
