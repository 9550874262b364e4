#!/usr/bin/env bash
# Session of 2026-12-06 #2, run 49: the 64 x 64 tile's stages two to a pair of barriers (P, the
# working tree after 329ab87, built on the development machine) against 11e47bd (H). P's suites on
# the cases that reach the small tile (exact: step 12's; epilogue and split-K: the shapes of M <= 100;
# shapes: M <= 64; grouped), memcheck and racecheck on split and unsplit small-tile cases, then the
# two builds in turn, twice, on the small-M shapes beside their own cuBLASLt (and 4096^3, whose
# kernel's K loop did not change), and the masked 32 x 16 grouped shape.
set -u
cd "$(dirname "$0")/.."
C=/tmp/c49
mkdir -p $C && tar -xJf build-carry/carry49.tar.xz -C $C
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv
export LD_LIBRARY_PATH=$C FP8GEMM_REQUIRE_GPU=1
mkdir -p $OUT/j
run_test() {  # name binary filter
  timeout 120 $C/P/$2 --gtest_filter="$3" > $OUT/j/P_$1.log 2>&1
  echo "P $1 rc=$? ${SECONDS}s: $(tail -n 1 $OUT/j/P_$1.log)"
  grep -E "^\[  FAILED  \]" $OUT/j/P_$1.log | head -5
}
run_test exact test_exact_gpu '*12_grouped_moe*'
run_test grouped test_grouped_gpu '*'
run_test steps_small test_steps_gpu '*12_grouped_moe_1x*:*12_grouped_moe_2x*:*12_grouped_moe_4x*:*12_grouped_moe_16x*:*12_grouped_moe_17x*:*12_grouped_moe_32x*:*12_grouped_moe_64x*'
run_test epilogue_small test_epilogue_gpu '*12_grouped_moe*1x2112x7168*:*12_grouped_moe*37x1000x1008*:*12_grouped_moe*64x2112x7168*:*12_grouped_moe*100x1000x1008*'
tar -C $OUT -czf $OUT/run49_json.tar.gz j
filter='*ExactTest*12_grouped_moe_17x1x4097*:*SplitKTest*12_grouped_moe_tensor*37x1000x1008*'
for tool in memcheck racecheck; do
  timeout 120 compute-sanitizer --tool $tool $C/P/test_epilogue_gpu --gtest_filter="$filter" > $OUT/j/P_${tool}_epilogue.log 2>&1
  echo "P $tool epilogue rc=$? ${SECONDS}s: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/j/P_${tool}_epilogue.log | tail -1) $(grep -cE '^\[       OK \]' $OUT/j/P_${tool}_epilogue.log) passed"
  timeout 120 compute-sanitizer --tool $tool $C/P/test_exact_gpu --gtest_filter="$filter" > $OUT/j/P_${tool}_exact.log 2>&1
  echo "P $tool exact rc=$? ${SECONDS}s: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/j/P_${tool}_exact.log | tail -1) $(grep -cE '^\[       OK \]' $OUT/j/P_${tool}_exact.log) passed"
done
tar -C $OUT -czf $OUT/run49_json.tar.gz j
shapes=64x2112x7168,64x4096x7168,64x7168x2048,64x7168x16384,64x24576x1536,64x32768x512,16x2112x7168,1x7168x7168,4096x4096x4096
for round in 1 2; do
  for v in H P; do
    timeout 60 $C/$v/fp8gemm_bench --steps=12 --shapes=$shapes --benchmark_repetitions=3 --benchmark_min_time=0.05 \
      --benchmark_out=$OUT/j/run49_ab${round}_$v.json --benchmark_out_format=json > $OUT/j/run49_ab${round}_$v.log 2>&1
    echo "$v round $round rc=$? ${SECONDS}s"
    grep -E "^12_grouped_moe.*_median" $OUT/j/run49_ab${round}_$v.log | awk '{print "  " $1, $2, $3}'
    timeout 30 $C/$v/fp8gemm_grouped_bench --shapes=32x16x4096x7168/masked \
      --benchmark_out=$OUT/j/run49_grouped${round}_$v.json --benchmark_out_format=json > $OUT/j/run49_grouped${round}_$v.log 2>&1
    grep -E "^12_grouped_moe.*_median" $OUT/j/run49_grouped${round}_$v.log | awk '{print "  " $1, $2, $3}'
  done
  tar -C $OUT -czf $OUT/run49_json.tar.gz j
done
tar -C $OUT -czf $OUT/run49_json.tar.gz j && rm -rf $OUT/j
