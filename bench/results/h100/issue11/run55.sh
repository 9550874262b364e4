#!/usr/bin/env bash
# Issue 11 run 55: step 12 with D's rows off 16-byte boundaries stored through the TMA in row groups
# (the tiles inside N and inside the last whole group of rows; the rest a row at a time), one build:
# G = as built, R = FP8GEMM_EXPERIMENT_ROWS=1 (a row at a time everywhere: the path of cd9bac5),
# alternating twice; M = G's test_exact_gpu with a mutant (the BF16 boxes' rows not grouped).
set -u
cd "$(dirname "$0")/.."
C=/tmp/c55
mkdir -p $C && tar -xJf build-carry/carry55.tar.xz -C $C
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv
export LD_LIBRARY_PATH=$C FP8GEMM_REQUIRE_GPU=1
mkdir -p $OUT/s $OUT/j
for s in 4096x4097x4096 4095x4097x4100 255x255x255; do
  $C/fp8gemm --step 12 --shape $s --check > $OUT/s/check_$s.log 2>&1; echo "check $s rc=$?"; grep -o "D's rows[^;)]*" $OUT/s/check_$s.log | head -1
done
f12='*12_grouped_moe*'
fsteps='*StepShapeTest.*/12_grouped_moe_*-*4096*:*8388609*:*16384*:*7168x7168*'
for t in test_exact_gpu test_steps_gpu test_epilogue_gpu; do
  timeout 150 $C/$t --gtest_filter="$f12" > $OUT/s/G_$t.log 2>&1
  echo "G $t rc=$? ${SECONDS}s: $(tail -n 1 $OUT/s/G_$t.log)"; grep "^\[  FAILED" $OUT/s/G_$t.log | head -5
done
timeout 100 $C/M_test_exact_gpu --gtest_filter="$f12" > $OUT/s/M_test_exact_gpu.log 2>&1
echo "mutant test_exact_gpu rc=$?: $(grep -c '^\[  FAILED  \]' $OUT/s/M_test_exact_gpu.log) FAILED lines"
filter='*ExactTest*12_grouped_moe_1008x4097x1:*ExactTest*12_grouped_moe_255x255x255:*ExactTest*12_grouped_moe_1001x1002x256'
for tool in memcheck racecheck; do
  timeout 120 compute-sanitizer --tool $tool $C/test_exact_gpu --gtest_filter="$filter" > $OUT/s/G_${tool}.log 2>&1
  echo "$tool rc=$? ${SECONDS}s: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/s/G_${tool}.log | tail -1) $(grep -cE '^\[       OK \]' $OUT/s/G_${tool}.log) passed"
done
tar -C $OUT -czf $OUT/run55_logs.tar.gz s
shapes=4096x4096x4096,4096x4097x4096,4096x4098x4096,4095x4097x4100,2048x8192x7168,2047x8191x7176,4096x4096x4100
for round in 1 2; do
  for v in G R; do
    if [ $v = R ]; then export FP8GEMM_EXPERIMENT_ROWS=1; else unset FP8GEMM_EXPERIMENT_ROWS; fi
    timeout 200 $C/fp8gemm_bench --steps=12 --shapes=$shapes --benchmark_repetitions=3 \
      --benchmark_min_time=0.05 --benchmark_out=$OUT/j/run55_ab${round}_$v.json --benchmark_out_format=json \
      > $OUT/j/run55_ab${round}_$v.log 2>&1
    echo "$v round $round rc=$? ${SECONDS}s"
    grep -E "^12_grouped_moe.*_median" $OUT/j/run55_ab${round}_$v.log | awk '{print "  " $1, $2, $3}'
    timeout 200 $C/fp8gemm_bench --steps=12 --epilogue_variants --shapes=4096x4097x4096,4095x4097x4100 \
      --benchmark_filter='^12_grouped_moe/.*tensor/(none|bias_gelu)/(bf16|e4m3)' --benchmark_repetitions=3 \
      --benchmark_min_time=0.05 --benchmark_out=$OUT/j/run55_variants${round}_$v.json --benchmark_out_format=json \
      > $OUT/j/run55_variants${round}_$v.log 2>&1
    echo "$v variants round $round rc=$? ${SECONDS}s"
    grep -E "^12_grouped_moe.*_median" $OUT/j/run55_variants${round}_$v.log | awk '{print "  " $1, $2, $3}'
  done
  unset FP8GEMM_EXPERIMENT_ROWS
  tar -C $OUT -czf $OUT/run55_json.tar.gz j
done
tar -C $OUT -czf $OUT/run55_logs.tar.gz s && rm -rf $OUT/s
tar -C $OUT -czf $OUT/run55_json.tar.gz j && rm -rf $OUT/j
