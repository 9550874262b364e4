#!/usr/bin/env bash
# Session of 2026-12-06 #2, run 48: step 12 at 11e47bd (7303c6d's warp-uniform grouped units, the
# probe's four-box stages): the grouped phase (suite, memcheck and racecheck, every grouped shape
# beside the cuBLASLt loop and graph), the TMA ring probe, the exact suite's step-12 cases; on an
# H200 also the persistent and DeepSeek-V3 shapes beside cuBLASLt (the plain kernels' SASS is
# cf3495f's, whose suites passed in run 46).
set -u
cd "$(dirname "$0")/.."
C=/tmp/c48
mkdir -p $C && tar -xJf build-carry/carry48.tar.xz -C $C
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv
B=$C/H
phases="grouped probe"
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then phases="grouped probe bench deepseek"; fi
OUT=$OUT BENCH_STEPS=12 timeout 560 bash bench/measure_h200.sh 12_grouped_moe 11e47bd $B $phases
mkdir -p $OUT/exact
LD_LIBRARY_PATH=$B FP8GEMM_REQUIRE_GPU=1 timeout 60 $B/test_exact_gpu --gtest_filter='*12_grouped_moe*' > $OUT/exact/test_exact_gpu_12.log 2>&1
echo "test_exact_gpu rc=$?: $(tail -n 1 $OUT/exact/test_exact_gpu_12.log) ${SECONDS}s"
tar -C $OUT -czf $OUT/exact.tar.gz exact && rm -rf $OUT/exact
