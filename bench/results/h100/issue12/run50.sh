#!/usr/bin/env bash
# Session of 2026-12-06 #2, run 50: the grouped units' K-block range made warp-uniform too (V, the
# working tree after 39cc8ab), which leaves no BRA.DIV between the wgmmas of any step-12 kernel (the
# 64 x 64 tile's grouped kernels had 6-27), against 11e47bd (H): V's grouped suite, memcheck on its
# ragged cases, then both builds in turn, twice, on three grouped shapes.
set -u
cd "$(dirname "$0")/.."
C=/tmp/c50
mkdir -p $C && tar -xJf build-carry/carry50.tar.xz -C $C
nvidia-smi --query-gpu=name,clocks.sm --format=csv,noheader
export LD_LIBRARY_PATH=$C FP8GEMM_REQUIRE_GPU=1
mkdir -p $OUT/j
timeout 60 $C/V/test_grouped_gpu > $OUT/j/V_test_grouped_gpu.log 2>&1
echo "V test_grouped_gpu rc=$?: $(tail -n 1 $OUT/j/V_test_grouped_gpu.log)"
timeout 60 compute-sanitizer --tool memcheck $C/V/test_grouped_gpu --gtest_filter='*GroupedTest*ragged_per_tensor_bf16*:*GroupedUncheckedTest*' > $OUT/j/V_memcheck.log 2>&1
echo "V memcheck rc=$?: $(grep -E 'ERROR SUMMARY' $OUT/j/V_memcheck.log | tail -1)"
shapes=32x16x4096x7168/masked,4x256x4096x7168/masked,4x8192x4096x7168/contiguous
for round in 1 2; do
  for v in H V; do
    timeout 40 $C/$v/fp8gemm_grouped_bench --shapes=$shapes --benchmark_out=$OUT/j/run50_grouped${round}_$v.json \
      --benchmark_out_format=json > $OUT/j/run50_grouped${round}_$v.log 2>&1
    echo "$v round $round rc=$? ${SECONDS}s"
    grep -E "^12_grouped_moe.*_median" $OUT/j/run50_grouped${round}_$v.log | awk '{print "  " $1, $2, $3}'
  done
done
tar -C $OUT -czf $OUT/run50_json.tar.gz j && rm -rf $OUT/j
