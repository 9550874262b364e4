#!/usr/bin/env bash
# The measurements the chapters quote beyond the benchmark, in one GPU call:
#   sweep_04.json     step 04's tile sweep (steps/04_double_buffering/sweep.cu)
#   counters.csv      Nsight Compute counters of steps 01-06 (steps/profile_counters.sh)
#   accumulation.log  step 05 / cuBLASLt errors vs FP64 at K = 16384
#                     (steps/05_matrix_cores/accumulation_experiment.sh)
#   ptxas.log         registers, shared memory and spills of every kernel
#
# Usage: OUT=/path/to/results bash bench/run_h200_profile.sh [GIT_COMMIT]
# The commit (argument, else $FP8GEMM_GIT_COMMIT) is what the programs record:
# the copy of the tree on the GPU machine may carry no .git, or a stale one.
set -uo pipefail
out="${OUT:?set OUT to the folder for the results}"
source_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_dir="${BUILD_DIR:-$source_dir/build-h200-profile}"
commit="${1:-${FP8GEMM_GIT_COMMIT:-unknown}}"
mkdir -p "$out"

echo "== build"
cmake -S "$source_dir" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DFP8GEMM_PTXAS_VERBOSE=ON -DFP8GEMM_GIT_COMMIT="$commit" \
  > "$out/ptxas.log" 2>&1 &&
  cmake --build "$build_dir" -j "$(nproc)" --target fp8gemm sweep_04 >> "$out/ptxas.log" 2>&1 ||
  { tail -n 30 "$out/ptxas.log"; exit 1; }

echo "== sweep_04"
timeout 120 "$build_dir/steps/sweep_04" "$out/sweep_04.json" 2>&1 | tail -n 30

echo "== accumulation experiment"
timeout 120 bash "$source_dir/steps/05_matrix_cores/accumulation_experiment.sh" "$build_dir/bench/fp8gemm" 1 2 3 \
  > "$out/accumulation.log" 2>&1
grep -E "===|norm" "$out/accumulation.log" | head -n 40

echo "== Nsight Compute counters"
STEPS="01 02 03 04 05 06" timeout 300 bash "$source_dir/steps/profile_counters.sh" "$out/counters.csv" \
  "$build_dir/bench/fp8gemm" 2>&1 | tail -n 20
echo "done after ${SECONDS}s"
