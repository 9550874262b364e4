#!/usr/bin/env bash
# Session of 2026-12-06 #3, run 57: a mutant of step 12 (cc38cbc) whose masked counts are copied without
# the clamp into [0, capacity]: the grouped suite must fail (its unchecked cases pass counts of 9, 2^30, -5).
set -u
cd "$(dirname "$0")/.."
C=/tmp/c57
mkdir -p $C && tar -xJf build-carry/mutant57.tar.xz -C $C && tar -xJf build-carry/carry53.tar.xz -C $C ./libbenchmark.so.1debian
export LD_LIBRARY_PATH=$C FP8GEMM_REQUIRE_GPU=1
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 120 $C/test_grouped_gpu_mutant --gtest_filter='*GroupedUncheckedTest*' > $OUT/run57_mutant_unclamped.log 2>&1
echo "mutant rc=$?: $(tail -n 1 $OUT/run57_mutant_unclamped.log)"
grep -E "^\[  FAILED  \]|^\[       OK \]" $OUT/run57_mutant_unclamped.log | head -12
