#!/usr/bin/env bash
# Issue 12 run 60: the masked layout's grouped GEMMs without block scales with the cluster along M
# in each expert's rows wherever that takes no more rounds (G: 9ba7f51 + the change) against
# 5648efe (S, whose grouped kernels are 9ba7f51's): G's grouped suite, memcheck and racecheck on
# its ragged cases, step 12's exact suite, then the grouped benchmark's masked shapes and one
# contiguous shape, the two builds in turn, twice.
set -u
cd "$(dirname "$0")/.."
C=/tmp/c60
mkdir -p $C && tar -xJf build-carry/carry60.tar.xz -C $C
export LD_LIBRARY_PATH=$C FP8GEMM_REQUIRE_GPU=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv
mkdir -p $OUT/j
timeout 90 $C/G/test_grouped_gpu > $OUT/j/G_test_grouped_gpu.log 2>&1
echo "G test_grouped_gpu rc=$? ${SECONDS}s: $(tail -n 1 $OUT/j/G_test_grouped_gpu.log)"; grep -E "^\[  FAILED" $OUT/j/G_test_grouped_gpu.log | head
timeout 60 $C/G/test_exact_gpu --gtest_filter='*12_grouped_moe*' > $OUT/j/G_test_exact_gpu.log 2>&1
echo "G test_exact_gpu rc=$? ${SECONDS}s: $(tail -n 1 $OUT/j/G_test_exact_gpu.log)"
for tool in memcheck racecheck; do
  timeout 120 compute-sanitizer --tool $tool $C/G/test_grouped_gpu --gtest_filter='*GroupedTest*ragged_per_tensor_bf16_masked*:*GroupedTest*huge_among_empty*masked*:*GroupedUncheckedTest*' > $OUT/j/G_$tool.log 2>&1
  echo "G $tool rc=$? ${SECONDS}s: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/j/G_$tool.log | tail -1) $(grep -cE '^\[       OK \]' $OUT/j/G_$tool.log) passed"
done
tar -C $OUT -czf $OUT/run60_json.tar.gz j
for round in 1 2; do
  for v in S G; do
    timeout 120 $C/$v/fp8gemm_grouped_bench --benchmark_filter='masked|4x8192x4096x7168' \
      --benchmark_out=$OUT/j/run60_grouped${round}_$v.json --benchmark_out_format=json > $OUT/j/run60_grouped${round}_$v.log 2>&1
    echo "$v round $round rc=$? ${SECONDS}s"
    grep -E "_median" $OUT/j/run60_grouped${round}_$v.log | awk '{print "  " $1, $2, $3}'
  done
  tar -C $OUT -czf $OUT/run60_json.tar.gz j
done
tar -C $OUT -czf $OUT/run60_json.tar.gz j && rm -rf $OUT/j
