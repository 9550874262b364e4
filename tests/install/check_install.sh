#!/usr/bin/env bash
# Installs the build into a scratch prefix (cmake --install), then builds and
# runs tests/install/consumer against it, as a user's project would use the
# package: find_package(fp8gemm), fp8gemm::fp8gemm. Passes when the consumer
# lists every step the build's own `fp8gemm --list=json` lists, and its
# run_gemm runs one GEMM exactly (or says it was skipped: no GPU).
#
# Usage: check_install.sh BUILD_DIR CMAKE GENERATOR MAKE_PROGRAM CXX_COMPILER
# Exit status: 0 pass, 1 fail.
set -euo pipefail
build="$1" cmake="$2" generator="$3" make_program="$4" cxx="$5"
here="$(cd "$(dirname "$0")" && pwd)"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT

"$cmake" --install "$build" --prefix "$scratch/prefix" > "$scratch/install.log" ||
  { cat "$scratch/install.log"; exit 1; }
"$cmake" -S "$here/consumer" -B "$scratch/consumer" -G "$generator" -DCMAKE_MAKE_PROGRAM="$make_program" \
  -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_PREFIX_PATH="$scratch/prefix" > "$scratch/configure.log" 2>&1 ||
  { cat "$scratch/configure.log"; exit 1; }
"$cmake" --build "$scratch/consumer" > "$scratch/build.log" 2>&1 || { cat "$scratch/build.log"; exit 1; }
"$scratch/consumer/list_steps" > "$scratch/steps.txt" || { echo "list_steps failed"; cat "$scratch/steps.txt"; exit 1; }
cat "$scratch/steps.txt"

# Every step the build registers must be in the installed library.
expected="$("$build/bench/fp8gemm" --list=json | python3 -c 'import json, sys; print("\n".join(s["folder"] for s in json.load(sys.stdin)["steps"]))')"
listed="$(cut -d: -f1 "$scratch/steps.txt")"
if [[ "$expected" != "$listed" ]]; then
  echo "the installed library lists other steps than the build:"
  diff <(echo "$expected") <(echo "$listed") || true
  exit 1
fi
echo "check_install: the installed package builds a consumer that lists all $(echo "$listed" | wc -l) steps"
# One GEMM through the package: exact, or skipped (77) without a GPU.
status=0
"$scratch/consumer/run_gemm" || status=$?
if [[ $status -ne 0 && $status -ne 77 ]]; then
  echo "run_gemm failed (exit status $status)"
  exit 1
fi
