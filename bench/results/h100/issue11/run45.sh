#!/usr/bin/env bash
# Issue 11 run 45: step 12 with the 128 x 128 tile's cluster along M, sharing B, where that takes
# fewer rounds (S: 4e3a183 + the change) against run 44's build N (B: 0529cdb with 4e3a183's copy
# kernel and run44_row_addresses.patch, which run 44 measured at 1.00x); M158: S with mutant 158
# (both blocks multicast the first half of B), whose exact suite must fail. On an H200 also S beside
# cuBLASLt (bench, deepseek and grouped phases of bench/measure_h200.sh).
set -u
cd "$(dirname "$0")/.."
C=/tmp/c45
mkdir -p $C && tar -xJf build-carry/carry45.tar.xz -C $C
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv
export LD_LIBRARY_PATH=$C FP8GEMM_REQUIRE_GPU=1
mkdir -p $OUT/s $OUT/j
f12='*12_grouped_moe*'
for t in test_exact_gpu test_steps_gpu test_epilogue_gpu; do
  timeout 150 $C/S/$t --gtest_filter="$f12" > $OUT/s/S_$t.log 2>&1
  echo "S $t rc=$? ${SECONDS}s: $(tail -n 1 $OUT/s/S_$t.log)"; grep "^\[  FAILED" $OUT/s/S_$t.log | head -5
done
timeout 90 $C/S/test_grouped_gpu > $OUT/s/S_test_grouped_gpu.log 2>&1
echo "S test_grouped_gpu rc=$? ${SECONDS}s: $(tail -n 1 $OUT/s/S_test_grouped_gpu.log)"
timeout 60 $C/M158/test_exact_gpu --gtest_filter="$f12" > $OUT/s/M158_test_exact_gpu.log 2>&1
echo "mutant 158 test_exact_gpu rc=$?: $(grep '^\[  FAILED  \]' $OUT/s/M158_test_exact_gpu.log | grep -v 'listed below' | sed 's/ (.*//' | sort -u | wc -l) failed"
grep '^\[  FAILED  \]' $OUT/s/M158_test_exact_gpu.log | sed 's/ (.*//' | sort -u | head -8
for shape in "4096 4097 4096" "4095 4097 4100" "4400 300 256" "4096 4096 4096"; do
  read -r m n k <<< "$shape"
  timeout 60 $C/S/fp8gemm --step 12 --m $m --n $n --k $k --check >> $OUT/s/S_checks.log 2>&1
  echo "S fp8gemm --check ${m}x${n}x${k}: rc=$?"
done
grep -E "^launch:|PASS|FAIL" $OUT/s/S_checks.log | cut -c1-400
filter='*ExactTest*12_grouped_moe_4400x*:*ExactFastAccumulationTest*12_grouped_moe_4400x*'
for tool in memcheck racecheck; do
  timeout 120 compute-sanitizer --tool $tool $C/S/test_exact_gpu --gtest_filter="$filter" > $OUT/s/S_${tool}.log 2>&1
  echo "$tool rc=$? ${SECONDS}s: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/s/S_${tool}.log | tail -1) $(grep -cE '^\[       OK \]' $OUT/s/S_${tool}.log) passed"
done
tar -C $OUT -czf $OUT/run45_logs.tar.gz s
shapes=4096x4096x4096,4096x4097x4096,4095x4097x4100,2048x8192x7168,4096x2112x7168,4096x4096x7168
for round in 1 2; do
  for v in B S; do
    timeout 200 $C/$v/fp8gemm_bench --steps=12 --shapes=$shapes --benchmark_repetitions=3 \
      --benchmark_min_time=0.05 --benchmark_out=$OUT/j/run45_ab${round}_$v.json --benchmark_out_format=json \
      > $OUT/j/run45_ab${round}_$v.log 2>&1
    echo "$v round $round rc=$? ${SECONDS}s"
    grep -E "^12_grouped_moe.*_median" $OUT/j/run45_ab${round}_$v.log | awk '{print "  " $1, $2, $3}'
    timeout 200 $C/$v/fp8gemm_bench --steps=12 --epilogue_variants --shapes=4096x4097x4096,4095x4097x4100 \
      --benchmark_filter='^12_grouped_moe/.*tensor/(none|bias_gelu)/(bf16|e4m3)' --benchmark_repetitions=3 \
      --benchmark_min_time=0.05 --benchmark_out=$OUT/j/run45_variants${round}_$v.json --benchmark_out_format=json \
      > $OUT/j/run45_variants${round}_$v.log 2>&1
    echo "$v variants round $round rc=$? ${SECONDS}s"
    grep -E "^12_grouped_moe.*_median" $OUT/j/run45_variants${round}_$v.log | awk '{print "  " $1, $2, $3}'
  done
  tar -C $OUT -czf $OUT/run45_json.tar.gz j
done
tar -C $OUT -czf $OUT/run45_logs.tar.gz s && rm -rf $OUT/s
tar -C $OUT -czf $OUT/run45_json.tar.gz j && rm -rf $OUT/j
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  OUT=$OUT/m BENCH_STEPS=12 timeout $((590 - SECONDS)) bash bench/measure_h200.sh 12_grouped_moe 4e3a183+shareb $C/S bench deepseek grouped
fi
