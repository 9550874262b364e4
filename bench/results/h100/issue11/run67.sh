#!/usr/bin/env bash
# Issue 11 run 67: the 128-row tiles' stages two to a pair of barriers (run67_stage_pairs.patch on 6ae8abf:
# issue 12 run 49's patch for the 64-row tile, its condition turned to the 128-row tiles without block
# scales on rings of an even number of stages). Called as build-carry/run67.sh with build-carry/carry67.tar.xz
# holding P/ (6ae8abf + the patch: fp8gemm_bench, the four GPU suites, fp8gemm_grouped_bench), H/ (fp8gemm_bench
# of 6ae8abf's kernels) and libbenchmark.so.1debian. P's step-12 suites, memcheck and racecheck on cases whose
# units end on the first stage of a pair (odd K-block counts, several units a block, split), then
# bench/measure_h200.sh's ab phase: H and P in turn, twice, each beside its own cuBLASLt.
set -u
cd "$(dirname "$0")/.."
C=/tmp/c67
mkdir -p $C && tar -xJf build-carry/carry67.tar.xz -C $C && cp $C/libbenchmark.so.1debian $C/P/ && cp $C/libbenchmark.so.1debian $C/H/
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv
export FP8GEMM_REQUIRE_GPU=1
L=$OUT/run67
mkdir -p $L
f12='*12_grouped_moe*'
for t in test_exact_gpu test_epilogue_gpu test_steps_gpu test_grouped_gpu; do
  LD_LIBRARY_PATH=$C/P timeout 150 $C/P/$t --gtest_filter="$f12" > $L/P_$t.log 2>&1
  echo "P $t rc=$? ${SECONDS}s: $(grep -E 'ran\.' $L/P_$t.log | tail -n 1) $(tail -n 1 $L/P_$t.log)"; grep "^\[  FAILED" $L/P_$t.log | head -5
done
filter='*ExactTest*12_grouped_moe_255x255x255:*ExactTest*12_grouped_moe_1008x4097x1:*ExactTest*12_grouped_moe_4097x1x17:*ExactTest*12_grouped_moe_17x255x1000:*ExactTest*12_grouped_moe_1x4097x1008'
efilter='*12_grouped_moe_outer_bias_gelu_e5m2_100x1000x1008_to_e5m2:*12_grouped_moe_tensor_gelu_erf_e4m3_255x1000x1008_to_e4m3'
gfilter='*GroupedTest*ragged_per_tensor_bf16*:*GroupedTest*many_experts*'
for tool in memcheck racecheck; do
  LD_LIBRARY_PATH=$C/P timeout 100 compute-sanitizer --tool $tool $C/P/test_exact_gpu --gtest_filter="$filter" > $L/P_${tool}.log 2>&1
  echo "$tool exact rc=$? ${SECONDS}s: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $L/P_${tool}.log | tail -1) $(grep -cE '^\[       OK \]' $L/P_${tool}.log) passed"
  LD_LIBRARY_PATH=$C/P timeout 100 compute-sanitizer --tool $tool $C/P/test_epilogue_gpu --gtest_filter="$efilter" > $L/P_${tool}_epilogue.log 2>&1
  echo "$tool epilogue rc=$? ${SECONDS}s: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $L/P_${tool}_epilogue.log | tail -1) $(grep -cE '^\[       OK \]' $L/P_${tool}_epilogue.log) passed"
  LD_LIBRARY_PATH=$C/P timeout 100 compute-sanitizer --tool $tool $C/P/test_grouped_gpu --gtest_filter="$gfilter" > $L/P_${tool}_grouped.log 2>&1
  echo "$tool grouped rc=$? ${SECONDS}s: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $L/P_${tool}_grouped.log | tail -1) $(grep -cE '^\[       OK \]' $L/P_${tool}_grouped.log) passed"
done
tar -C $OUT -czf $OUT/run67_logs.tar.gz run67 && rm -rf $L
# H and P in turn, twice ($OUT/ab_{A,B}{1,2}.json; A is H, B is P).
AB_SHAPES=4096x4096x4096,8192x8192x8192,4096x7168x16384,4096x4096x7168,4096x32768x512,4096x2112x7168,1024x4096x7168,1024x1024x16384,128x7168x16384 \
  AB_BIN=$C/P bash bench/measure_h200.sh 12_grouped_moe 6ae8abf $C/H ab
echo "issue 11 run 67 done ${SECONDS}s"
