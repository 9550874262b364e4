#!/usr/bin/env bash
# The chapter's accumulation table: how far from FP64 the FP32 result lands
# at K = 16384 (1024 x 1024 x 16384, e4m3, FP32 output, so that no output
# rounding hides the accumulation error), for
#   step 05 with promotion (default), step 05 with --fast-accum,
#   cuBLASLt in its default mode, cuBLASLt with fast accumulation.
# Each run prints the error metrics of `fp8gemm --check` (norm-relative error
# vs the FP64 reference on the same dequantized inputs); copy the
# norm-relative errors into README.md's accumulation table.
#
# Usage: steps/05_matrix_cores/accumulation_experiment.sh [FP8GEMM] [SEED...]
#   FP8GEMM  the main program (default build/bench/fp8gemm)
#   SEED     input seeds (default 1 2 3): the table takes the median
set -uo pipefail
fp8gemm="${1:-build/bench/fp8gemm}"
shift || true
seeds=("$@")
[[ ${#seeds[@]} -eq 0 ]] && seeds=(1 2 3)
shape=(--m 1024 --n 1024 --k 16384 --out fp32 --check)
for seed in "${seeds[@]}"; do
  for run in "05" "05 --fast-accum" "cublaslt" "cublaslt_fast"; do
    echo "=== seed $seed: fp8gemm --step $run ${shape[*]}"
    # shellcheck disable=SC2086  # $run holds the step and, for one row, a flag
    "$fp8gemm" --step $run "${shape[@]}" --seed "$seed" || echo "(exit status $?)"
  done
done
