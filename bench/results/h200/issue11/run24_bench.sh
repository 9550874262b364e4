#!/usr/bin/env bash
# 7621bf3 (step 12 with the six-stage ring): sanitizers on the six-stage kernels, then the bench and
# deepseek phases of bench/measure_h200.sh.
set -u
b=$PWD/vB
export LD_LIBRARY_PATH=$b FP8GEMM_REQUIRE_GPU=1
OUT=$OUT BENCH_STEPS=12 bash bench/measure_h200.sh 12_grouped_moe 7621bf3 $b bench deepseek
f1='*SplitKTest*12_grouped_moe_outer_bias_gelu_e5m2_255x1000x1008*'
f2='*ExactTest*12_grouped_moe_4097x1008x1000'
for tool in memcheck racecheck; do
  timeout 100 compute-sanitizer --tool $tool $b/test_epilogue_gpu --gtest_filter="$f1" > $OUT/${tool}_split_12.log 2>&1
  echo "$tool split rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/${tool}_split_12.log | tail -1) $(grep -cE '^\[       OK \]' $OUT/${tool}_split_12.log) passed"
  timeout 100 compute-sanitizer --tool $tool $b/test_exact_gpu --gtest_filter="$f2" > $OUT/${tool}_units_12.log 2>&1
  echo "$tool units rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/${tool}_units_12.log | tail -1) $(grep -cE '^\[       OK \]' $OUT/${tool}_units_12.log) passed"
done
