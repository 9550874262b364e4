#!/usr/bin/env bash
# Issue 11 run 43: step 12 with D's misaligned BF16 and FP8 rows written through the D buffer a
# row at a time by whole warps (N: c7decd2) against the element stores before it (H: 1e86d82),
# each build holding step 12 alone, built on the development machine; M: N's kernels with a
# mutant (each warp stores only the first 8 of its 16 rows), whose suites must fail; C: N with
# the copies of misaligned A and B made by the new copy kernel (c7decd2+copy). Then
# N's figures beside cuBLASLt (bench, deepseek, grouped phases of bench/measure_h200.sh).
set -u
cd "$(dirname "$0")/.."
C=/tmp/c43
export FP8GEMM_REQUIRE_GPU=1
mkdir -p $C && tar -xJf build-carry/carry43.tar.xz -C $C
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv
mkdir -p $OUT/s $OUT/j
LD_LIBRARY_PATH=$C/N timeout 60 $C/N/test_exact_gpu --gtest_filter='*12_grouped_moe*' > $OUT/s/N_test_exact_gpu.log 2>&1
echo "N test_exact_gpu rc=$?: $(tail -n 1 $OUT/s/N_test_exact_gpu.log)"
for t in test_exact_gpu test_steps_gpu; do
  f="*12_grouped_moe*"
  LD_LIBRARY_PATH=$C/N timeout 100 $C/M/$t --gtest_filter="$f" > $OUT/s/M_$t.log 2>&1
  echo "mutant $t rc=$?: $(grep -c '^\[  FAILED  \]' $OUT/s/M_$t.log) FAILED lines; $(tail -n 1 $OUT/s/M_$t.log)"
done
for shape in "4095 4097 4100" "2047 8191 7176" "17 255 1000"; do
  read -r m n k <<< "$shape"
  LD_LIBRARY_PATH=$C/N timeout 60 $C/N/fp8gemm --step 12 --m $m --n $n --k $k --check >> $OUT/s/N_checks.log 2>&1
  echo "N fp8gemm --check ${m}x${n}x${k}: rc=$?"
done
grep -E "^launch:|PASS|FAIL" $OUT/s/N_checks.log | head -8
for t in test_exact_gpu test_steps_gpu; do
  LD_LIBRARY_PATH=$C/C timeout 100 $C/C/$t --gtest_filter='*12_grouped_moe*' > $OUT/s/C_$t.log 2>&1
  echo "C $t rc=$? ${SECONDS}s: $(tail -n 1 $OUT/s/C_$t.log)"
done
shapes=4096x4096x4096,4096x4097x4096,4096x4098x4096,4095x4097x4100,2048x8192x7168,2047x8191x7176,4096x4096x4100
for round in 1 2; do
  for v in H N C; do
    export LD_LIBRARY_PATH=$C/$v
    timeout 200 $C/$v/fp8gemm_bench --steps=12 --shapes=$shapes --benchmark_repetitions=3 \
      --benchmark_min_time=0.05 --benchmark_out=$OUT/j/run43_ab${round}_$v.json --benchmark_out_format=json \
      > $OUT/j/run43_ab${round}_$v.log 2>&1
    echo "$v rows round $round rc=$? ${SECONDS}s"
    grep -E "^12_grouped_moe.*_median" $OUT/j/run43_ab${round}_$v.log | awk '{print "  " $1, $2, $3}'
    [ $v = C ] && continue
    timeout 200 $C/$v/fp8gemm_bench --steps=12 --epilogue_variants --shapes=4096x4097x4096 \
      --benchmark_filter='^12_grouped_moe/.*tensor/(none|bias_gelu)/(bf16|e4m3)' --benchmark_repetitions=3 \
      --benchmark_min_time=0.05 --benchmark_out=$OUT/j/run43_variants${round}_$v.json --benchmark_out_format=json \
      > $OUT/j/run43_variants${round}_$v.log 2>&1
    echo "$v variants round $round rc=$? ${SECONDS}s"
    grep -E "^12_grouped_moe.*_median" $OUT/j/run43_variants${round}_$v.log | awk '{print "  " $1, $2, $3}'
  done
  tar -C $OUT -czf $OUT/run43_json.tar.gz j s
done
export LD_LIBRARY_PATH=$C/N
for t in test_epilogue_gpu test_steps_gpu; do
  timeout 120 $C/N/$t --gtest_filter='*12_grouped_moe*' > $OUT/s/N_$t.log 2>&1
  echo "N $t rc=$? ${SECONDS}s: $(tail -n 1 $OUT/s/N_$t.log)"
done
timeout 60 $C/N/test_grouped_gpu > $OUT/s/N_test_grouped_gpu.log 2>&1
echo "N test_grouped_gpu rc=$? ${SECONDS}s: $(tail -n 1 $OUT/s/N_test_grouped_gpu.log)"
tar -C $OUT -czf $OUT/run43_json.tar.gz j s
filter='*ExactTest*12_grouped_moe_17x255x1000*:*ExactTest*12_grouped_moe_1008x4097x1*:*ExactTest*12_grouped_moe_1x4097x1008*'
for tool in memcheck racecheck; do
  timeout 100 compute-sanitizer --tool $tool $C/N/test_exact_gpu --gtest_filter="$filter" > $OUT/s/N_${tool}_rows.log 2>&1
  echo "$tool exact rows rc=$? ${SECONDS}s: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/s/N_${tool}_rows.log | tail -1) $(grep -cE '^\[       OK \]' $OUT/s/N_${tool}_rows.log) passed"
  LD_LIBRARY_PATH=$C/C timeout 100 compute-sanitizer --tool $tool $C/C/test_exact_gpu --gtest_filter="$filter" > $OUT/s/C_${tool}_rows.log 2>&1
  echo "C $tool exact rows rc=$? ${SECONDS}s: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/s/C_${tool}_rows.log | tail -1) $(grep -cE '^\[       OK \]' $OUT/s/C_${tool}_rows.log) passed"
  timeout 120 compute-sanitizer --tool $tool $C/N/test_grouped_gpu --gtest_filter='*GroupedTest*ragged_per_tensor_bf16*:*GroupedUncheckedTest*' > $OUT/s/N_${tool}_grouped.log 2>&1
  echo "$tool grouped rc=$? ${SECONDS}s: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/s/N_${tool}_grouped.log | tail -1) $(grep -cE '^\[       OK \]' $OUT/s/N_${tool}_grouped.log) passed"
done
tar -C $OUT -czf $OUT/run43_json.tar.gz j s
rm -rf $OUT/j $OUT/s
OUT=$OUT/m BENCH_STEPS=12 bash bench/measure_h200.sh 12_grouped_moe c7decd2 $C/N bench deepseek grouped
