#!/usr/bin/env bash
# The GPU mutants, built elsewhere, run on a GPU machine that does not build
# them (the H200 of bench/results/h200/): DIR/<name>/ holds the test programs
# that tests/mutants/<name>.patch names, built with the patch applied. A mutant
# is killed when one of its programs fails on its filter (README.md); prints
# one line per mutant and writes each program's log to LOGS.
#
# Usage: FP8GEMM_REQUIRE_GPU=1 tests/mutants/run_prebuilt.sh DIR LOGS
set -uo pipefail
dir_of_mutants="$1"
logs="$2"
for dir in "$dir_of_mutants"/*/; do
  name=$(basename "$dir")
  patch=tests/mutants/$name.patch
  verdict=SURVIVED
  for spec in $(sed -n 's/^tests: //p' "$patch"); do
    program=${spec%%:*} filter='*'  # a spec without ':' runs the whole program, as run_mutants.sh does
    [ "$program" != "$spec" ] && filter=${spec#*:}
    if ! timeout 120 "$dir/$program" --gtest_filter="$filter" > "$logs/mutant_${name}_$program.log" 2>&1; then
      verdict=killed
      break
    fi
  done
  echo "mutant $name: $verdict ${SECONDS}s"
done
