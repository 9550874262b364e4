#!/usr/bin/env bash
# Issue 11 run 58: step 12 with the 128 x 112 tile (NarrowTile) where the waves make it cheaper
# than 128 x 128 (N: this build; FP8GEMM_EXPERIMENT_NO_NARROW=1 turns the tile off in the plan,
# an experiment-only switch, which leaves the committed plan of 8c15e0f). N's suites, its plans,
# memcheck and racecheck on cases that take the tile, a mutant's exact suite (M: the second block
# of a narrow cluster loads B from 64 rows on, not 56), then N and N-without-the-tile in turn,
# twice, then the grouped, deepseek, bench and rows phases of bench/measure_h200.sh on N.
set -u
cd "$(dirname "$0")/.."
C=/tmp/c58
mkdir -p $C && tar -xJf build-carry/carry58.tar.xz -C $C && cp $C/libbenchmark.so.1debian $C/N/
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv
export LD_LIBRARY_PATH=$C/N FP8GEMM_REQUIRE_GPU=1
mkdir -p $OUT/s $OUT/j
f12='*12_grouped_moe*'
for t in test_exact_gpu test_epilogue_gpu test_steps_gpu; do
  timeout 150 $C/N/$t --gtest_filter="$f12" > $OUT/s/N_$t.log 2>&1
  echo "N $t rc=$? ${SECONDS}s: $(tail -n 1 $OUT/s/N_$t.log)"; grep "^\[  FAILED" $OUT/s/N_$t.log | head -5
done
for shape in "4096 2112 7168" "1024 7168 2048" "255 8500 300" "130 8500 200" "4096 4096 4096"; do
  read -r m n k <<< "$shape"
  timeout 60 $C/N/fp8gemm --step 12 --m $m --n $n --k $k --check >> $OUT/s/N_checks.log 2>&1
  echo "fp8gemm --check ${m}x${n}x${k}: rc=$?"
done
grep -E "^launch:" $OUT/s/N_checks.log | cut -c1-300
timeout 60 $C/N/test_exact_gpu_M --gtest_filter="$f12" > $OUT/s/M_test_exact_gpu.log 2>&1
echo "M test_exact_gpu rc=$? ${SECONDS}s: $(tail -n 1 $OUT/s/M_test_exact_gpu.log)"; grep "^\[  FAILED" $OUT/s/M_test_exact_gpu.log | head -8
filter='*ExactTest*12_grouped_moe_255x8500x300*:*ExactTest*12_grouped_moe_256x8501x256*:*ExactFastAccumulationTest*12_grouped_moe_255x8500x300*'
efilter='*12_grouped_moe_outer_bias_gelu_e5m2_130x8500x200*:*12_grouped_moe_tensor_device_bias_fp32_130x8500x200*'
for tool in memcheck racecheck; do
  timeout 100 compute-sanitizer --tool $tool $C/N/test_exact_gpu --gtest_filter="$filter" > $OUT/s/N_${tool}.log 2>&1
  echo "$tool exact rc=$? ${SECONDS}s: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/s/N_${tool}.log | tail -1) $(grep -cE '^\[       OK \]' $OUT/s/N_${tool}.log) passed"
  timeout 100 compute-sanitizer --tool $tool $C/N/test_epilogue_gpu --gtest_filter="$efilter" > $OUT/s/N_${tool}_epilogue.log 2>&1
  echo "$tool epilogue rc=$? ${SECONDS}s: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/s/N_${tool}_epilogue.log | tail -1) $(grep -cE '^\[       OK \]' $OUT/s/N_${tool}_epilogue.log) passed"
done
tar -C $OUT -czf $OUT/run58_logs.tar.gz s
shapes=4096x2112x7168,1024x7168x2048,1024x7168x7168,2048x2112x7168,1024x2112x7168,4096x4096x4096
for round in 1 2; do
  for v in N H; do
    if [ $v = H ]; then export FP8GEMM_EXPERIMENT_NO_NARROW=1; else unset FP8GEMM_EXPERIMENT_NO_NARROW; fi
    timeout 120 $C/N/fp8gemm_bench --steps=12 --shapes=$shapes --benchmark_repetitions=3 \
      --benchmark_min_time=0.05 --benchmark_out=$OUT/j/run58_ab${round}_$v.json --benchmark_out_format=json \
      > $OUT/j/run58_ab${round}_$v.log 2>&1
    echo "$v round $round rc=$? ${SECONDS}s"
    grep -E "^12_grouped_moe.*_median" $OUT/j/run58_ab${round}_$v.log | awk '{print "  " $1, $2, $3}'
    timeout 60 $C/N/fp8gemm_bench --steps=12 --epilogue_variants --shapes=4096x2112x7168 \
      --benchmark_filter='^12_grouped_moe/.*tensor/(none|bias_gelu)/(bf16|e4m3)' --benchmark_repetitions=3 \
      --benchmark_min_time=0.05 --benchmark_out=$OUT/j/run58_variants${round}_$v.json --benchmark_out_format=json \
      > $OUT/j/run58_variants${round}_$v.log 2>&1
    echo "$v variants round $round rc=$? ${SECONDS}s"
  done
done
unset FP8GEMM_EXPERIMENT_NO_NARROW
left=$((590 - SECONDS))
echo "measure phases with ${left}s left"
OUT=$OUT BENCH_STEPS=12 timeout $left bash bench/measure_h200.sh 12_grouped_moe narrow $C/N grouped deepseek bench rows
