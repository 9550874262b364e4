#!/usr/bin/env bash
# Issue 11 run 54: as run 53 (A and B off 16-byte rows read in place by cp.async, 8 bytes a lane
# where K % 8 == 0, else 4; EXPERIMENT, one build), with the proxy fence moved from the consumers
# (before every K block's wgmmas) to the producer: each thread waits for its copies two stages
# later, fences, and arrives on the stage's full barrier. P = in place, C = FP8GEMM_EXPERIMENT_COPY=1.
set -u
cd "$(dirname "$0")/.."
C=/tmp/c54
mkdir -p $C && tar -xJf build-carry/carry54.tar.xz -C $C
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv
export LD_LIBRARY_PATH=$C FP8GEMM_REQUIRE_GPU=1
mkdir -p $OUT/s $OUT/j
for s in 1000x1000x1000 4095x4097x4100 2047x8191x7176; do
  $C/fp8gemm --step 12 --shape $s --check 2>&1 | grep -i "split_k\|max\|pass\|fail" | head -3 | cut -c1-400
done
f12='*12_grouped_moe*'
fsteps='*StepShapeTest.*/12_grouped_moe_*-*4096*:*8388609*:*16384*:*7168x7168*'
for t in test_exact_gpu test_steps_gpu test_epilogue_gpu; do
  timeout 150 $C/$t --gtest_filter="$f12" > $OUT/s/P_$t.log 2>&1
  echo "P $t rc=$? ${SECONDS}s: $(tail -n 1 $OUT/s/P_$t.log)"; grep "^\[  FAILED" $OUT/s/P_$t.log | head -5
done
filter='*ExactTest*12_grouped_moe_1000x1000x1000*:*ExactTest*12_grouped_moe_4097x1008x1000'
for tool in memcheck racecheck; do
  timeout 100 compute-sanitizer --tool $tool $C/test_exact_gpu --gtest_filter="$filter" > $OUT/s/P_${tool}.log 2>&1
  echo "$tool rc=$? ${SECONDS}s: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/s/P_${tool}.log | tail -1) $(grep -cE '^\[       OK \]' $OUT/s/P_${tool}.log) passed"
done
tar -C $OUT -czf $OUT/run54_logs.tar.gz s
shapes=4096x4096x4096,4096x4096x4100,4095x4097x4100,2048x8192x7168,2047x8191x7176,8192x8192x8200,1024x4096x7176
for round in 1 2; do
  for v in P C; do
    if [ $v = C ]; then export FP8GEMM_EXPERIMENT_COPY=1; else unset FP8GEMM_EXPERIMENT_COPY; fi
    timeout 200 $C/fp8gemm_bench --steps=12 --shapes=$shapes --benchmark_repetitions=3 \
      --benchmark_min_time=0.05 --benchmark_out=$OUT/j/run54_ab${round}_$v.json --benchmark_out_format=json \
      > $OUT/j/run54_ab${round}_$v.log 2>&1
    echo "$v round $round rc=$? ${SECONDS}s"
    grep -E "^12_grouped_moe.*_median" $OUT/j/run54_ab${round}_$v.log | awk '{print "  " $1, $2, $3}'
  done
  unset FP8GEMM_EXPERIMENT_COPY
  tar -C $OUT -czf $OUT/run54_json.tar.gz j
done
tar -C $OUT -czf $OUT/run54_logs.tar.gz s && rm -rf $OUT/s
tar -C $OUT -czf $OUT/run54_json.tar.gz j && rm -rf $OUT/j
