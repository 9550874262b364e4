#!/usr/bin/env bash
# Issue 11 run 64: run 63 again on the second build of the row-store warps (S: bar.sync on both sides of
# both hand-overs, and the rows inside D made warp-uniform, whose lack had ptxas compile the unit loop as
# divergent), against 389dd89's build (H). S's suites, memcheck and racecheck on cases that take the row
# store; the GPU mutants 133 (run_prebuilt.sh now runs a program without a filter whole) and 161 (against
# this code); then H and S in turn, twice. Everything goes into run64_logs.tar.gz.
set -u
cd "$(dirname "$0")/.."
C=/tmp/c64
mkdir -p $C && tar -xJf build-carry/carry64.tar.xz -C $C && cp $C/libbenchmark.so.1debian $C/S/ && cp $C/libbenchmark.so.1debian $C/H/
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv
export FP8GEMM_REQUIRE_GPU=1
L=$OUT/run64
mkdir -p $L
f12='*12_grouped_moe*'
for t in test_exact_gpu test_epilogue_gpu test_steps_gpu test_grouped_gpu; do
  LD_LIBRARY_PATH=$C/S timeout 150 $C/S/$t --gtest_filter="$f12" > $L/S_$t.log 2>&1
  echo "S $t rc=$? ${SECONDS}s: $(grep -E 'ran\.' $L/S_$t.log | tail -n 1) $(tail -n 1 $L/S_$t.log)"; grep "^\[  FAILED" $L/S_$t.log | head -5
done
for shape in "4096 4097 4096" "4095 4097 4100" "2047 8191 7176" "64 2111 7168" "255 255 255"; do
  read -r m n k <<< "$shape"
  LD_LIBRARY_PATH=$C/S timeout 60 $C/S/fp8gemm --step 12 --m $m --n $n --k $k --check >> $L/S_checks.log 2>&1
  echo "fp8gemm --check ${m}x${n}x${k}: rc=$?"
done
grep -E "^launch:" $L/S_checks.log | cut -c1-220
filter='*ExactTest*12_grouped_moe_255x255x255:*ExactTest*12_grouped_moe_1008x4097x1:*ExactTest*12_grouped_moe_4097x1x17:*ExactTest*12_grouped_moe_17x255x1000:*ExactTest*12_grouped_moe_1x4097x1008'
efilter='*12_grouped_moe_block_bias_gelu_e4m3_255x1000x1008_to_e4m3:*12_grouped_moe_outer_bias_gelu_e5m2_100x1000x1008_to_e5m2:*12_grouped_moe_tensor_gelu_erf_e4m3_255x1000x1008_to_e4m3'
for tool in memcheck racecheck; do
  LD_LIBRARY_PATH=$C/S timeout 100 compute-sanitizer --tool $tool $C/S/test_exact_gpu --gtest_filter="$filter" > $L/S_${tool}.log 2>&1
  echo "$tool exact rc=$? ${SECONDS}s: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $L/S_${tool}.log | tail -1) $(grep -cE '^\[       OK \]' $L/S_${tool}.log) passed"
  LD_LIBRARY_PATH=$C/S timeout 100 compute-sanitizer --tool $tool $C/S/test_epilogue_gpu --gtest_filter="$efilter" > $L/S_${tool}_epilogue.log 2>&1
  echo "$tool epilogue rc=$? ${SECONDS}s: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $L/S_${tool}_epilogue.log | tail -1) $(grep -cE '^\[       OK \]' $L/S_${tool}_epilogue.log) passed"
done
mkdir -p $L/mutants
LD_LIBRARY_PATH=$C/S FP8GEMM_REQUIRE_GPU=1 bash tests/mutants/run_prebuilt.sh $C/M $L/mutants
shapes=4096x4096x4096,4096x4097x4096,4095x4097x4100,2048x8192x7168,2047x8191x7176,64x2111x7168,1024x1023x16384
for round in 1 2; do
  for v in H S; do
    LD_LIBRARY_PATH=$C/$v timeout 120 $C/$v/fp8gemm_bench --steps=12 --shapes=$shapes --benchmark_repetitions=3 \
      --benchmark_min_time=0.05 --benchmark_out=$L/run64_ab${round}_$v.json --benchmark_out_format=json \
      > $L/run64_ab${round}_$v.log 2>&1
    echo "$v round $round rc=$? ${SECONDS}s"
    grep -E "^12_grouped_moe.*_median" $L/run64_ab${round}_$v.log | awk '{print "  " $1, $2, $3}'
    LD_LIBRARY_PATH=$C/$v timeout 60 $C/$v/fp8gemm_bench --steps=12 --epilogue_variants --shapes=4096x4097x4096 \
      --benchmark_filter='^12_grouped_moe/.*tensor/(none|bias_gelu)/(bf16|e4m3)' --benchmark_repetitions=3 \
      --benchmark_min_time=0.05 --benchmark_out=$L/run64_variants${round}_$v.json --benchmark_out_format=json \
      > $L/run64_variants${round}_$v.log 2>&1
    echo "$v variants round $round rc=$? ${SECONDS}s"
    grep -E "^12_grouped_moe.*_median" $L/run64_variants${round}_$v.log | awk '{print "  " $1, $2, $3}'
  done
done
tar -C $OUT -czf $OUT/run64_logs.tar.gz run64 && rm -rf $L
echo "done ${SECONDS}s"
