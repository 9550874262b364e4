#!/usr/bin/env bash
# Issue 11 run 60: run 58's 128 x 112 tile with D through the TMA (N2: BF16 rows in two boxes of 128
# bytes, the second overlapping the first, kOverlappingLastBox in common/sm90/fragment_epilogue.cuh;
# FP8GEMM_EXPERIMENT_NO_NARROW=1 turns the tile off in the plan). N2's suites, plans, memcheck and
# racecheck on cases that take the tile through the TMA, a mutant's exact suite (M2: the second box
# stored at column 64 of the tile, not 48), N2 and N2-without-the-tile in turn, twice; then, on an
# H200 only, the grouped, deepseek, bench and rows phases of bench/measure_h200.sh with the tile off
# (the committed plan). Everything but the phases' JSON goes into run60_logs.tar.gz.
set -u
cd "$(dirname "$0")/.."
C=/tmp/c60
mkdir -p $C && tar -xJf build-carry/carry60.tar.xz -C $C && cp $C/libbenchmark.so.1debian $C/N/
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv
export LD_LIBRARY_PATH=$C/N FP8GEMM_REQUIRE_GPU=1
L=$OUT/run60
mkdir -p $L
f12='*12_grouped_moe*'
for t in test_exact_gpu test_epilogue_gpu test_steps_gpu; do
  timeout 150 $C/N/$t --gtest_filter="$f12" > $L/N_$t.log 2>&1
  echo "N $t rc=$? ${SECONDS}s: $(tail -n 1 $L/N_$t.log)"; grep "^\[  FAILED" $L/N_$t.log | head -5
done
for shape in "4096 2112 7168" "1024 7168 2048" "255 8504 300" "130 8504 200"; do
  read -r m n k <<< "$shape"
  timeout 60 $C/N/fp8gemm --step 12 --m $m --n $n --k $k --check >> $L/N_checks.log 2>&1
  echo "fp8gemm --check ${m}x${n}x${k}: rc=$?"
done
grep -E "^launch:" $L/N_checks.log | cut -c1-200
timeout 60 $C/N/test_exact_gpu_M --gtest_filter="$f12" > $L/M_test_exact_gpu.log 2>&1
echo "M test_exact_gpu rc=$? ${SECONDS}s: $(tail -n 1 $L/M_test_exact_gpu.log)"; grep "^\[  FAILED" $L/M_test_exact_gpu.log | head -8 | cut -c1-120
filter='*ExactTest*12_grouped_moe_255x8504x300*:*ExactFastAccumulationTest*12_grouped_moe_255x8504x300*'
efilter='*12_grouped_moe_outer_bias_gelu_e5m2_130x8504x200*:*12_grouped_moe_agroup_brow_bias_bf16_130x8504x200*'
for tool in memcheck racecheck; do
  timeout 100 compute-sanitizer --tool $tool $C/N/test_exact_gpu --gtest_filter="$filter" > $L/N_${tool}.log 2>&1
  echo "$tool exact rc=$? ${SECONDS}s: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $L/N_${tool}.log | tail -1) $(grep -cE '^\[       OK \]' $L/N_${tool}.log) passed"
  timeout 100 compute-sanitizer --tool $tool $C/N/test_epilogue_gpu --gtest_filter="$efilter" > $L/N_${tool}_epilogue.log 2>&1
  echo "$tool epilogue rc=$? ${SECONDS}s: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $L/N_${tool}_epilogue.log | tail -1) $(grep -cE '^\[       OK \]' $L/N_${tool}_epilogue.log) passed"
done
shapes=4096x2112x7168,1024x7168x2048,1024x7168x7168,2048x2112x7168,1024x2112x7168,4096x4096x4096
for round in 1 2; do
  for v in N H; do
    if [ $v = H ]; then export FP8GEMM_EXPERIMENT_NO_NARROW=1; else unset FP8GEMM_EXPERIMENT_NO_NARROW; fi
    timeout 120 $C/N/fp8gemm_bench --steps=12 --shapes=$shapes --benchmark_repetitions=3 \
      --benchmark_min_time=0.05 --benchmark_out=$L/run60_ab${round}_$v.json --benchmark_out_format=json \
      > $L/run60_ab${round}_$v.log 2>&1
    echo "$v round $round rc=$? ${SECONDS}s"
    grep -E "^12_grouped_moe.*_median" $L/run60_ab${round}_$v.log | awk '{print "  " $1, $2, $3}'
    timeout 60 $C/N/fp8gemm_bench --steps=12 --epilogue_variants --shapes=4096x2112x7168 \
      --benchmark_filter='^12_grouped_moe/.*tensor/(none|bias_gelu)/(bf16|e4m3)' --benchmark_repetitions=3 \
      --benchmark_min_time=0.05 --benchmark_out=$L/run60_variants${round}_$v.json --benchmark_out_format=json \
      > $L/run60_variants${round}_$v.log 2>&1
    echo "$v variants round $round rc=$? ${SECONDS}s"
  done
done
unset FP8GEMM_EXPERIMENT_NO_NARROW
tar -C $OUT -czf $OUT/run60_logs.tar.gz run60 && rm -rf $L
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  left=$((585 - SECONDS))
  echo "measure phases (the tile off) with ${left}s left"
  FP8GEMM_EXPERIMENT_NO_NARROW=1 OUT=$OUT BENCH_STEPS=12 timeout $left bash bench/measure_h200.sh 12_grouped_moe \
    8c15e0f $C/N grouped deepseek bench rows
fi
