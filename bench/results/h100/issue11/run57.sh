#!/usr/bin/env bash
# Issue 11 run 57: step 12 with D's rows off 16-byte boundaries stored in aligned 16-byte words
# (store_tile_through_shared_words; EXPERIMENT, one build): W = words (default), R =
# FP8GEMM_EXPERIMENT_ROWS=1 (a row at a time, as committed). W's suites, a mutant's exact suite
# (M), W's sanitizers, then W and
# R in turn, twice: fp8gemm_bench --steps=12 on seven shapes and the epilogue variants at
# 4096 x 4097 x 4096.
set -u
cd "$(dirname "$0")/.."
C=/tmp/c57
mkdir -p $C && tar -xJf build-carry/carry57.tar.xz -C $C && cp $C/libbenchmark.so.1debian $C/W/
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv
export LD_LIBRARY_PATH=$C/W FP8GEMM_REQUIRE_GPU=1
mkdir -p $OUT/s $OUT/j
f12='*12_grouped_moe*'
for t in test_exact_gpu test_steps_gpu test_epilogue_gpu test_grouped_gpu; do
  timeout 150 $C/W/$t --gtest_filter="$f12" > $OUT/s/W_$t.log 2>&1
  echo "W $t rc=$? ${SECONDS}s: $(tail -n 1 $OUT/s/W_$t.log)"; grep "^\[  FAILED" $OUT/s/W_$t.log | head -5
done
# M: W with a mutant of the words route (a row's last partial word never stored), its exact suite.
mkdir -p $C/M && tar -xJf build-carry/carry57m.tar.xz -C $C && cp $C/M/test_exact_gpu $C/W/test_exact_gpu_M
timeout 100 $C/W/test_exact_gpu_M --gtest_filter="$f12" > $OUT/s/M_test_exact_gpu.log 2>&1
echo "M test_exact_gpu rc=$? ${SECONDS}s: $(tail -n 1 $OUT/s/M_test_exact_gpu.log); $(grep -c '^\[  FAILED' $OUT/s/M_test_exact_gpu.log) FAILED lines"
filter="*ExactTest*12_grouped_moe_255x255x255:*ExactTest*12_grouped_moe_1008x4097x1:*ExactTest*12_grouped_moe_1000x1000x1000"
for tool in memcheck racecheck; do
  timeout 120 compute-sanitizer --tool $tool $C/W/test_exact_gpu --gtest_filter="$filter" > $OUT/s/W_${tool}.log 2>&1
  echo "$tool rc=$? ${SECONDS}s: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/s/W_${tool}.log | tail -1) $(grep -cE '^\[       OK \]' $OUT/s/W_${tool}.log) passed"
done
tar -C $OUT -czf $OUT/run57_logs.tar.gz s
shapes=4096x4096x4096,4096x4097x4096,4096x4098x4096,4095x4097x4100,2048x8192x7168,2047x8191x7176,4096x4096x4100
for round in 1 2; do
  for v in W R; do
    if [ $v = R ]; then export FP8GEMM_EXPERIMENT_ROWS=1; else unset FP8GEMM_EXPERIMENT_ROWS; fi
    timeout 200 $C/W/fp8gemm_bench --steps=12 --shapes=$shapes --benchmark_repetitions=3 \
      --benchmark_min_time=0.05 --benchmark_out=$OUT/j/run57_ab${round}_$v.json --benchmark_out_format=json \
      > $OUT/j/run57_ab${round}_$v.log 2>&1
    echo "$v round $round rc=$? ${SECONDS}s"
    grep -E "^12_grouped_moe.*_median" $OUT/j/run57_ab${round}_$v.log | awk '{print "  " $1, $2, $3}'
    timeout 120 $C/W/fp8gemm_bench --steps=12 --epilogue_variants --shapes=4096x4097x4096 \
      --benchmark_filter='^12_grouped_moe/.*tensor/(none|bias_gelu)/(bf16|e4m3)' --benchmark_repetitions=3 \
      --benchmark_min_time=0.05 --benchmark_out=$OUT/j/run57_variants${round}_$v.json --benchmark_out_format=json \
      > $OUT/j/run57_variants${round}_$v.log 2>&1
    echo "$v variants round $round rc=$? ${SECONDS}s"
    grep -E "^12_grouped_moe.*_median" $OUT/j/run57_variants${round}_$v.log | awk '{print "  " $1, $2, $3}'
  done
  unset FP8GEMM_EXPERIMENT_ROWS
  tar -C $OUT -czf $OUT/run57_json.tar.gz j
done
tar -C $OUT -czf $OUT/run57_logs.tar.gz s && rm -rf $OUT/s
tar -C $OUT -czf $OUT/run57_json.tar.gz j && rm -rf $OUT/j
# On an H200, W (as it would be committed) beside cuBLASLt with the time left: the grouped, bench and
# deepseek phases of bench/measure_h200.sh.
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  OUT=$OUT BENCH_STEPS=12 timeout $((595 - SECONDS)) bash bench/measure_h200.sh 12_grouped_moe "$(cat $C/W/COMMIT)" $C/W grouped bench deepseek
fi
