#!/bin/bash
# Issue 10 run 20: DeepGEMM's decode tile (64 x 16 in clusters of two sharing A) on step 12,
# forced on every plain GEMM of M <= 64 without block scales by FP8GEMM_DECODE_TILE=1 (an
# environment variable only this experiment has, run20_decode_tile.patch on 2767b13): the
# suites and sanitizers with it forced, then one build with it off (A) and on (B), alternating.
# A record of what ran: it ran as build-carry/run20.sh on the device, with the programs
# (step 12 alone in the tree, built on the development machine) in build-carry/carry20.tar.xz
# (not committed).
set -u
R=/tmp/r20; mkdir -p $R && tar -xJf build-carry/carry20.tar.xz -C $R
B=$R/bin; export LD_LIBRARY_PATH=$B:${LD_LIBRARY_PATH:-}
export FP8GEMM_REQUIRE_GPU=1
L=$OUT/run20; mkdir -p $L
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu --format=csv > $L/gpu.txt 2>&1
for t in test_exact_gpu test_epilogue_gpu test_steps_gpu; do
  FP8GEMM_DECODE_TILE=1 timeout 150 $B/$t --gtest_filter="*12_grouped_moe*" > $L/decode_forced_$t.log 2>&1
  echo "$t (decode tile forced) rc=$?: $(tail -n 1 $L/decode_forced_$t.log)"; grep "^\[  FAILED" $L/decode_forced_$t.log | head -5
done
f="*SplitKTest*12_grouped_moe*37x1000x1008*:*EpilogueTest*12_grouped_moe_*37x1000x1008*"
for tool in memcheck racecheck; do
  FP8GEMM_DECODE_TILE=1 timeout 150 compute-sanitizer --tool $tool $B/test_epilogue_gpu --gtest_filter="$f" > $L/decode_forced_$tool.log 2>&1
  echo "$tool rc=$?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $L/decode_forced_$tool.log | tail -1) $(grep -c '^\[       OK' $L/decode_forced_$tool.log) passed"
done
for shape in "64 2112 7168" "64 4096 7168" "64 7168 16384" "64 7168 2048" "37 1000 1008"; do
  read -r m n k <<< "$shape"
  FP8GEMM_DECODE_TILE=1 timeout 60 $B/fp8gemm --step 12 --m $m --n $n --k $k --check 2>&1 | grep -E "^launch:|check PASS|FAIL" >> $L/decode_plans.log
done
cut -c1-200 $L/decode_plans.log
S=64x2112x7168,64x24576x1536,64x32768x512,64x7168x16384,64x4096x7168,64x7168x2048,16x2112x7168,4096x4096x4096
for round in 1 2; do
  for side in A B; do
    if [ $side = B ]; then export FP8GEMM_DECODE_TILE=1; else unset FP8GEMM_DECODE_TILE; fi
    timeout 200 $B/fp8gemm_bench --steps=12 --shapes=$S --benchmark_repetitions=3 --benchmark_min_time=0.05 \
      --benchmark_out=$L/ab_${side}${round}.json --benchmark_out_format=json > $L/ab_${side}${round}.log 2>&1
    echo "ab $side$round rc=$?"; grep -E "^12_grouped_moe/.*_median" $L/ab_${side}${round}.log | awk '{print "  " $1, $2, $3}'
  done
done
export FP8GEMM_DECODE_TILE=1
timeout 200 $B/fp8gemm_bench --steps=12 --shapes=64x2112x7168,64x4096x7168,64x7168x2048,64x24576x1536 --split_k_counts=1,2,3,4 \
  --benchmark_repetitions=3 --benchmark_min_time=0.05 --benchmark_out=$L/decode_splits.json --benchmark_out_format=json > $L/decode_splits.log 2>&1
echo "splits rc=$?"; grep -E "_median" $L/decode_splits.log | grep -v cublas | awk '{print "  " $1, $2, $3}'
cd $OUT && tar -czf all.tar.gz run20 && rm -rf run20
