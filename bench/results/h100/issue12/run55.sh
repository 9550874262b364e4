#!/usr/bin/env bash
# Session of 2026-12-06 #3, run 55 (only on an H200): step 12 at c7fb286 (the masked counts before the first barrier,
# a grouped unit's B scales read at its start): the grouped phase (suite, memcheck and racecheck,
# every grouped shape beside the cuBLASLt loop and graph) and the exact suite's step-12 cases; on
# an H200 also the persistent and DeepSeek-V3 shapes beside cuBLASLt (the plain kernels' SASS is
# cf3495f's, whose suites passed in run 46).
set -u
cd "$(dirname "$0")/.."
C=/tmp/c53
mkdir -p $C && tar -xJf build-carry/carry53.tar.xz -C $C
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv
if ! nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then echo "not an H200: nothing run"; exit 0; fi
phases="grouped bench deepseek"
OUT=$OUT BENCH_STEPS=12 timeout 540 bash bench/measure_h200.sh 12_grouped_moe c7fb286 $C $phases
mkdir -p $OUT/exact
LD_LIBRARY_PATH=$C FP8GEMM_REQUIRE_GPU=1 timeout 60 $C/test_exact_gpu --gtest_filter='*12_grouped_moe*' > $OUT/exact/test_exact_gpu_12.log 2>&1
echo "test_exact_gpu rc=$?: $(tail -n 1 $OUT/exact/test_exact_gpu_12.log) ${SECONDS}s"
tar -C $OUT -czf $OUT/exact.tar.gz exact && rm -rf $OUT/exact
