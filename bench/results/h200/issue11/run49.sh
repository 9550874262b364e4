#!/usr/bin/env bash
# Issue 11 run 49: the committed step 12 with the cluster along M wherever it takes no more rounds
# (F, built from the commit that makes the change): its suites, the plans, memcheck and racecheck on
# exact cases that now take the cluster along M, then the bench and deepseek phases of
# bench/measure_h200.sh beside cuBLASLt.
set -u
cd "$(dirname "$0")/.."
C=/tmp/c49
mkdir -p $C && tar -xJf build-carry/carry49.tar.xz -C $C && cp $C/libbenchmark.so.1debian $C/F/
export LD_LIBRARY_PATH=$C/F FP8GEMM_REQUIRE_GPU=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv
mkdir -p $OUT/s
f12='*12_grouped_moe*'
for t in test_exact_gpu test_steps_gpu test_epilogue_gpu; do
  timeout 150 $C/F/$t --gtest_filter="$f12" > $OUT/s/F_$t.log 2>&1
  echo "F $t rc=$? ${SECONDS}s: $(tail -n 1 $OUT/s/F_$t.log)"; grep "^\[  FAILED" $OUT/s/F_$t.log | head -5
done
for shape in "1024 4096 7168" "4096 4096 4096" "4097 1008 1000" "1024 1024 1024"; do
  read -r m n k <<< "$shape"
  timeout 60 $C/F/fp8gemm --step 12 --m $m --n $n --k $k --check >> $OUT/s/F_checks.log 2>&1
  echo "fp8gemm --check ${m}x${n}x${k}: rc=$?"
done
grep -E "^launch:" $OUT/s/F_checks.log | cut -c1-330
filter='*ExactTest*12_grouped_moe_1024x1024x1024*:*ExactTest*12_grouped_moe_1000x1000x1000*:*ExactFastAccumulationTest*12_grouped_moe_255x1000x1008*'
for tool in memcheck racecheck; do
  timeout 120 compute-sanitizer --tool $tool $C/F/test_exact_gpu --gtest_filter="$filter" > $OUT/s/F_${tool}.log 2>&1
  echo "$tool rc=$? ${SECONDS}s: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/s/F_${tool}.log | tail -1) $(grep -cE '^\[       OK \]' $OUT/s/F_${tool}.log) passed"
done
tar -C $OUT -czf $OUT/run49_logs.tar.gz s && rm -rf $OUT/s
commit=$(cat $C/F/COMMIT)
OUT=$OUT BENCH_STEPS=12 timeout $((590 - SECONDS)) bash bench/measure_h200.sh 12_grouped_moe $commit $C/F bench deepseek
