#!/usr/bin/env python3
"""docs/steps.json describes the build's registry (what `fp8gemm --list=json` prints).

Every step the committed file lists must be registered exactly as listed, and no
step may be refused; a registered step the file does not list (a fork, say
steps/90_mine) is reported and passes: forking needs no edit. Regenerate with
  build/bench/fp8gemm --list=json > docs/steps.json && python3 bench/make_table.py --update README.md

Usage: check_steps_json.py FP8GEMM COMMITTED_JSON
Exit: 0 matches, 1 differs, 2 fp8gemm missing (it is built only with Google Benchmark).
"""
import difflib
import json
import os
import subprocess
import sys

REGENERATE = ("  build/bench/fp8gemm --list=json > docs/steps.json && "
              "python3 bench/make_table.py --update README.md")


def main():
    program, committed_path = sys.argv[1], sys.argv[2]
    if not os.access(program, os.X_OK):
        print(f"no {program} (fp8gemm is built only with Google Benchmark)")
        return 2
    listing = subprocess.run([program, "--list=json"], capture_output=True, text=True)
    if listing.returncode != 0:
        print(f"fp8gemm --list=json failed ({listing.returncode}):\n{listing.stderr}")
        return 1
    registry = json.loads(listing.stdout)
    with open(committed_path) as f:
        committed = json.load(f)
    built = {step["folder"]: step for step in registry["steps"]}
    failures = 0
    for step in committed["steps"]:
        mine = built.pop(step["folder"], None)
        if mine is None:
            print(f"steps/{step['folder']} is in {committed_path} but not registered")
            failures += 1
        elif mine != step:
            old = json.dumps(step, indent=1).splitlines()
            new = json.dumps(mine, indent=1).splitlines()
            print(f"steps/{step['folder']} differs from {committed_path}:")
            print("\n".join(difflib.unified_diff(old, new, "committed", "registry", lineterm="")))
            failures += 1
    for refusal in registry.get("refused", []):
        print(f"refused by the registry: {refusal}")
        failures += 1
    for folder in built:
        print(f"note: steps/{folder} is registered but not in {committed_path} (a fork?); "
              f"to document it:\n{REGENERATE}")
    if failures:
        print(f"{committed_path} does not describe the registry; regenerate it and the README's table:\n{REGENERATE}")
        return 1
    print(f"{committed_path} matches the registry ({len(committed['steps'])} steps)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
