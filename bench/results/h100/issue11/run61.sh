#!/usr/bin/env bash
# Issue 11 run 61: the committed step 12 with the 128 x 112 tile (D through the TMA's overlapping
# boxes, BF16 D only): its exact, epilogue and shape suites, its plans, memcheck and racecheck on
# cases that take the tile, then the grouped, deepseek, bench and rows phases of
# bench/measure_h200.sh beside cuBLASLt.
set -u
cd "$(dirname "$0")/.."
C=/tmp/c61
mkdir -p $C && tar -xJf build-carry/carry61.tar.xz -C $C && cp $C/libbenchmark.so.1debian $C/N/
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv
export LD_LIBRARY_PATH=$C/N FP8GEMM_REQUIRE_GPU=1
L=$OUT/run61
mkdir -p $L
f12='*12_grouped_moe*'
for t in test_exact_gpu test_epilogue_gpu test_steps_gpu; do
  timeout 150 $C/N/$t --gtest_filter="$f12" > $L/N_$t.log 2>&1
  echo "N $t rc=$? ${SECONDS}s: $(tail -n 1 $L/N_$t.log)"; grep "^\[  FAILED" $L/N_$t.log | head -5
done
for shape in "4096 2112 7168" "1024 7168 2048" "255 8504 300" "130 8504 200" "4096 4096 4096"; do
  read -r m n k <<< "$shape"
  timeout 60 $C/N/fp8gemm --step 12 --m $m --n $n --k $k --check >> $L/N_checks.log 2>&1
  echo "fp8gemm --check ${m}x${n}x${k}: rc=$?"
done
grep -E "^launch:" $L/N_checks.log | cut -c1-160
filter='*ExactTest*12_grouped_moe_255x8504x300*:*ExactFastAccumulationTest*12_grouped_moe_255x8504x300*'
efilter='*12_grouped_moe_outer_bias_gelu_e5m2_130x8504x200*:*12_grouped_moe_agroup_brow_bias_bf16_130x8504x200*:*12_grouped_moe_tensor_gelu_erf_e4m3_130x8504x200*'
for tool in memcheck racecheck; do
  timeout 100 compute-sanitizer --tool $tool $C/N/test_exact_gpu --gtest_filter="$filter" > $L/N_${tool}.log 2>&1
  echo "$tool exact rc=$? ${SECONDS}s: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $L/N_${tool}.log | tail -1) $(grep -cE '^\[       OK \]' $L/N_${tool}.log) passed"
  timeout 100 compute-sanitizer --tool $tool $C/N/test_epilogue_gpu --gtest_filter="$efilter" > $L/N_${tool}_epilogue.log 2>&1
  echo "$tool epilogue rc=$? ${SECONDS}s: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $L/N_${tool}_epilogue.log | tail -1) $(grep -cE '^\[       OK \]' $L/N_${tool}_epilogue.log) passed"
done
tar -C $OUT -czf $OUT/run61_logs.tar.gz run61 && rm -rf $L
left=$((585 - SECONDS))
echo "measure phases with ${left}s left"
OUT=$OUT BENCH_STEPS=12 timeout $left bash bench/measure_h200.sh 12_grouped_moe final $C/N grouped deepseek bench rows
