#!/usr/bin/env bash
# Session of 2026-12-06 #3, run 52: the masked counts copied before the block's first barrier and B's
# per-tensor scale read at the start of each unit (V, bb66ce3 + the change) against bb66ce3 (H):
# V's grouped suite, memcheck and racecheck on its ragged cases, then both builds in turn, twice, on
# every grouped shape.
set -u
cd "$(dirname "$0")/.."
C=/tmp/c52
mkdir -p $C/H $C/V && tar -xJf build-carry/carry51.tar.xz -C $C/H && tar -xJf build-carry/carry52.tar.xz -C $C/V
cp $C/H/libbenchmark.so.1debian $C/
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader
export LD_LIBRARY_PATH=$C FP8GEMM_REQUIRE_GPU=1
mkdir -p $OUT/j
timeout 90 $C/V/test_grouped_gpu > $OUT/j/V_test_grouped_gpu.log 2>&1
echo "V test_grouped_gpu rc=$?: $(tail -n 1 $OUT/j/V_test_grouped_gpu.log)"; grep -E "^\[  FAILED" $OUT/j/V_test_grouped_gpu.log | head
timeout 120 $C/V/test_exact_gpu --gtest_filter='*12_grouped*' > $OUT/j/V_test_exact_gpu.log 2>&1
echo "V test_exact_gpu rc=$?: $(tail -n 1 $OUT/j/V_test_exact_gpu.log)"; grep -E "^\[  FAILED" $OUT/j/V_test_exact_gpu.log | head
for tool in memcheck racecheck; do
  timeout 120 compute-sanitizer --tool $tool $C/V/test_grouped_gpu --gtest_filter='*GroupedTest*ragged_per_tensor_bf16*:*GroupedUncheckedTest*' > $OUT/j/V_$tool.log 2>&1
  echo "V $tool rc=$?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/j/V_$tool.log | tail -1) ${SECONDS}s"
done
for round in 1 2; do
  for v in H V; do
    timeout 90 $C/$v/fp8gemm_grouped_bench --benchmark_out=$OUT/j/run52_grouped${round}_$v.json \
      --benchmark_out_format=json > $OUT/j/run52_grouped${round}_$v.log 2>&1
    echo "$v round $round rc=$? ${SECONDS}s"
    grep -E "^12_grouped_moe.*_median" $OUT/j/run52_grouped${round}_$v.log | awk '{print "  " $1, $2, $3}'
  done
done
P=4096x4096x4096,4096x7168x16384,1024x7168x2048,4096x32768x512,64x2112x7168
for round in 1 2; do
  for v in H V; do
    timeout 60 $C/$v/fp8gemm_bench --shapes=$P --benchmark_out=$OUT/j/run52_plain${round}_$v.json \
      --benchmark_out_format=json > $OUT/j/run52_plain${round}_$v.log 2>&1
    echo "plain $v round $round rc=$? ${SECONDS}s"
    grep -E "^12_grouped_moe/.*_median" $OUT/j/run52_plain${round}_$v.log | awk '{print "  " $1, $2, $3}'
  done
done
tar -C $OUT -czf $OUT/run52_json.tar.gz j && rm -rf $OUT/j
