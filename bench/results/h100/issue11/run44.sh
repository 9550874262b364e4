#!/usr/bin/env bash
# Issue 11 run 44: step 12 with (1) the copies of misaligned A and B made from aligned 16-byte loads
# shifted into place, both operands in one launch, and (2) the row-by-row store of D's misaligned rows
# with its shared addresses built once per lane and row (N: 0529cdb + the change) against 0529cdb (H),
# each build holding step 12 alone; M157, M158: N with mutants 157 (the copy's shift taken modulo 2)
# and 158 (the row store ignoring the swizzle's low bits), whose suites must fail.
set -u
cd "$(dirname "$0")/.."
C=/tmp/c44
mkdir -p $C && tar -xJf build-carry/carry44.tar.xz -C $C
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv
export LD_LIBRARY_PATH=$C FP8GEMM_REQUIRE_GPU=1
mkdir -p $OUT/s $OUT/j
f12='*12_grouped_moe*'
fsteps='*StepShapeTest.*/12_grouped_moe_*-*4096*:*4097*:*8388609*:*16384*:*7168x7168*'
for t in test_exact_gpu test_steps_gpu test_epilogue_gpu; do
  timeout 150 $C/N/$t --gtest_filter="$f12" > $OUT/s/N_$t.log 2>&1
  echo "N $t rc=$? ${SECONDS}s: $(tail -n 1 $OUT/s/N_$t.log)"; grep "^\[  FAILED" $OUT/s/N_$t.log | head -5
done
timeout 90 $C/N/test_grouped_gpu > $OUT/s/N_test_grouped_gpu.log 2>&1
echo "N test_grouped_gpu rc=$? ${SECONDS}s: $(tail -n 1 $OUT/s/N_test_grouped_gpu.log)"
for m in 157 158; do
  timeout 60 $C/M$m/test_exact_gpu --gtest_filter="$f12" > $OUT/s/M${m}_test_exact_gpu.log 2>&1
  echo "mutant $m test_exact_gpu rc=$?: $(grep -c '^\[  FAILED  \]' $OUT/s/M${m}_test_exact_gpu.log) FAILED lines"
  timeout 120 $C/M$m/test_steps_gpu --gtest_filter="$fsteps" > $OUT/s/M${m}_test_steps_gpu.log 2>&1
  echo "mutant $m test_steps_gpu rc=$?: $(grep -c '^\[  FAILED  \]' $OUT/s/M${m}_test_steps_gpu.log) FAILED lines ${SECONDS}s"
done
tar -C $OUT -czf $OUT/run44_logs.tar.gz s
filter='*ExactOffsetOperandsTest*:*ExactTest*12_grouped_moe_17x255x1000*:*ExactTest*12_grouped_moe_1x4097x1008*'
for tool in memcheck racecheck; do
  timeout 100 compute-sanitizer --tool $tool $C/N/test_exact_gpu --gtest_filter="$filter" > $OUT/s/N_${tool}.log 2>&1
  echo "$tool rc=$? ${SECONDS}s: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/s/N_${tool}.log | tail -1) $(grep -cE '^\[       OK \]' $OUT/s/N_${tool}.log) passed"
done
tar -C $OUT -czf $OUT/run44_logs.tar.gz s
shapes=4096x4096x4096,4096x4097x4096,4096x4098x4096,4095x4097x4100,2048x8192x7168,2047x8191x7176,4096x4096x4100
for round in 1 2; do
  for v in H N; do
    timeout 200 $C/$v/fp8gemm_bench --steps=12 --shapes=$shapes --benchmark_repetitions=3 \
      --benchmark_min_time=0.05 --benchmark_out=$OUT/j/run44_ab${round}_$v.json --benchmark_out_format=json \
      > $OUT/j/run44_ab${round}_$v.log 2>&1
    echo "$v round $round rc=$? ${SECONDS}s"
    grep -E "^12_grouped_moe.*_median" $OUT/j/run44_ab${round}_$v.log | awk '{print "  " $1, $2, $3}'
    timeout 200 $C/$v/fp8gemm_bench --steps=12 --epilogue_variants --shapes=4096x4097x4096,4095x4097x4100 \
      --benchmark_filter='^12_grouped_moe/.*tensor/(none|bias_gelu)/(bf16|e4m3)' --benchmark_repetitions=3 \
      --benchmark_min_time=0.05 --benchmark_out=$OUT/j/run44_variants${round}_$v.json --benchmark_out_format=json \
      > $OUT/j/run44_variants${round}_$v.log 2>&1
    echo "$v variants round $round rc=$? ${SECONDS}s"
    grep -E "^12_grouped_moe.*_median" $OUT/j/run44_variants${round}_$v.log | awk '{print "  " $1, $2, $3}'
  done
  tar -C $OUT -czf $OUT/run44_json.tar.gz j
done
tar -C $OUT -czf $OUT/run44_logs.tar.gz s && rm -rf $OUT/s
tar -C $OUT -czf $OUT/run44_json.tar.gz j && rm -rf $OUT/j
