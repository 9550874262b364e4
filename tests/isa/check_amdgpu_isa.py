#!/usr/bin/env python3
"""Checks the AMD GPU code of one HIP source file compiled device-only.

Given the assembly (.s) and the code object (.o) that the HIP build writes to
build/steps/hip/<arch>/, it checks that:
  - every mnemonic passed with --expect appears in the disassembly of the .o
    (llvm-objdump -d), e.g. the MFMA instruction a matrix-core step must use;
  - no kernel uses scratch memory: .private_segment_fixed_size is 0 in the
    kernel metadata of the .s, the spill counts are 0, and the disassembly has
    no scratch_ instruction;
  - each kernel's LDS (.group_segment_fixed_size) fits the architecture:
    65536 bytes on gfx942 (CDNA3), 163840 on gfx950 (CDNA4).
It prints one line per kernel (registers, LDS, scratch, spills, MFMA count)
and exits 0 when every check passes, 1 with a message per failure otherwise,
2 on a usage error (missing file, unknown architecture, no llvm-objdump).

Example:
  tests/isa/check_amdgpu_isa.py --arch gfx942 \\
      --asm build/steps/hip/gfx942/05_matrix_cores_matrix_cores_cdna.s \\
      --obj build/steps/hip/gfx942/05_matrix_cores_matrix_cores_cdna.o \\
      --expect v_mfma_f32_16x16x32_fp8_fp8
"""
import argparse
import re
import shutil
import subprocess
import sys

LDS_LIMIT_BYTES = {"gfx942": 65536, "gfx950": 163840}
METADATA_KEYS = ("name", "symbol", "vgpr_count", "agpr_count", "sgpr_count", "vgpr_spill_count",
                 "sgpr_spill_count", "private_segment_fixed_size", "group_segment_fixed_size")


def kernels_from_metadata(asm_text):
    """The kernels of the amdhsa.kernels list in the .s metadata: a dict per
    kernel with the top-level keys above (values as strings). Keys nested
    deeper (the .args list) are skipped."""
    kernels = []
    in_list = False
    for line in asm_text.splitlines():
        if line.startswith("amdhsa.kernels:"):
            in_list = True
            continue
        if not in_list:
            continue
        if line and not line.startswith(" "):  # the next top-level key ends the list
            break
        match = re.match(r"^(  - |    )\.([a-z_]+):\s*(.*?)\s*$", line)
        if not match:
            continue
        if match.group(1) == "  - ":
            kernels.append({})
        if kernels and match.group(2) in METADATA_KEYS:
            kernels[-1][match.group(2)] = match.group(3)
    return kernels


def instructions_by_function(disassembly):
    """{symbol: [mnemonic, ...]} from llvm-objdump -d output."""
    functions = {}
    current = None
    for line in disassembly.splitlines():
        header = re.match(r"^[0-9a-f]+ <(.+)>:$", line)
        if header:
            current = functions.setdefault(header.group(1), [])
            continue
        # Instruction lines: "  <mnemonic> <operands>  // <address>: <encoding>"
        body = re.match(r"^\s+([a-z_][a-z0-9_.]*)\b", line)
        if current is not None and body:
            current.append(body.group(1))
    return functions


def find_objdump(requested):
    for name in ([requested] if requested else ["llvm-objdump-22", "llvm-objdump"]):
        path = shutil.which(name)
        if path:
            return path
    return None


def demangler():
    """A function from mangled to readable kernel names (identity without c++filt)."""
    tool = shutil.which("llvm-cxxfilt-22") or shutil.which("llvm-cxxfilt") or shutil.which("c++filt")
    if tool is None:
        return lambda name: name

    def demangle(name):
        result = subprocess.run([tool, name], capture_output=True, text=True)
        return result.stdout.strip() or name if result.returncode == 0 else name
    return demangle


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--asm", required=True, help="assembly (.s) written by clang -S")
    parser.add_argument("--obj", required=True, help="code object (.o) written by clang -c --no-gpu-bundle-output")
    parser.add_argument("--arch", required=True, choices=sorted(LDS_LIMIT_BYTES), help="target the files were built for")
    parser.add_argument("--expect", action="append", default=[], metavar="MNEMONIC",
                        help="an instruction that must appear (repeatable), e.g. v_mfma_f32_16x16x32_fp8_fp8")
    parser.add_argument("--objdump", default=None, help="llvm-objdump to use (default: llvm-objdump-22, llvm-objdump)")
    args = parser.parse_args()

    try:
        with open(args.asm, encoding="utf-8") as f:
            asm_text = f.read()
    except OSError as e:
        print(f"error: cannot read the assembly: {e}", file=sys.stderr)
        return 2
    objdump = find_objdump(args.objdump)
    if objdump is None:
        print("error: llvm-objdump not found (apt-get install llvm-22, or pass --objdump)", file=sys.stderr)
        return 2
    result = subprocess.run([objdump, "-d", f"--mcpu={args.arch}", args.obj], capture_output=True, text=True)
    if result.returncode != 0:
        print(f"error: {objdump} -d {args.obj} failed:\n{result.stderr}", file=sys.stderr)
        return 2
    functions = instructions_by_function(result.stdout)

    failures = []
    target = re.search(r'\.amdgcn_target\s+"([^"]+)"', asm_text)
    built_for = target.group(1) if target else ""
    if not (built_for.endswith("--" + args.arch) or f"--{args.arch}:" in built_for):
        failures.append(f"{args.asm} was not built for {args.arch} (.amdgcn_target {built_for or 'missing'})")

    kernels = kernels_from_metadata(asm_text)
    readable = demangler()
    limit = LDS_LIMIT_BYTES[args.arch]
    print(f"{args.asm} ({args.arch}): {len(kernels)} kernel(s)")
    print(f"  {'vgpr':>4} {'agpr':>4} {'sgpr':>4} {'lds':>7} {'scratch':>7} {'spills':>6} {'mfma':>4}  kernel")
    for kernel in kernels:
        symbol = kernel.get("symbol", kernel.get("name", "?")).removesuffix(".kd")
        name = readable(kernel.get("name", "?"))
        mnemonics = functions.get(symbol, [])
        mfma = sum(1 for m in mnemonics if m.startswith("v_mfma"))
        scratch_ops = sorted({m for m in mnemonics if m.startswith("scratch_")})
        private = int(kernel.get("private_segment_fixed_size", "0"))
        lds = int(kernel.get("group_segment_fixed_size", "0"))
        spills = int(kernel.get("vgpr_spill_count", "0")) + int(kernel.get("sgpr_spill_count", "0"))
        print(f"  {kernel.get('vgpr_count', '?'):>4} {kernel.get('agpr_count', '?'):>4} {kernel.get('sgpr_count', '?'):>4}"
              f" {lds:>7} {private:>7} {spills:>6} {mfma:>4}  {name}")
        if private != 0:
            failures.append(f"{name}: uses {private} bytes of scratch (.private_segment_fixed_size), expected 0")
        if spills != 0:
            failures.append(f"{name}: spills registers (vgpr_spill_count {kernel.get('vgpr_spill_count')}, "
                            f"sgpr_spill_count {kernel.get('sgpr_spill_count')})")
        if scratch_ops:
            failures.append(f"{name}: scratch instructions in the disassembly: {', '.join(scratch_ops)}")
        if lds > limit:
            failures.append(f"{name}: {lds} bytes of LDS, more than the {limit} of {args.arch}")
    if not kernels:
        failures.append(f"{args.asm}: no kernel in the code object (no amdhsa.kernels metadata): the file's kernels "
                        "were not instantiated for HIP (is the launcher that names them compiled out?)")

    all_mnemonics = {m for ms in functions.values() for m in ms}
    for mnemonic in args.expect:
        if mnemonic not in all_mnemonics:
            found = sorted(m for m in all_mnemonics if m.startswith("v_mfma")) or ["none"]
            failures.append(f"{args.obj}: expected instruction {mnemonic} not found "
                            f"(MFMA instructions present: {', '.join(found)})")

    for failure in failures:
        print(f"FAIL: {failure}", file=sys.stderr)
    if not failures:
        expected = f", found {', '.join(args.expect)}" if args.expect else ""
        print(f"OK: no scratch, no spills, LDS <= {limit} bytes{expected}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
