#!/usr/bin/env bash
# Session of 2026-12-06 #2, run 47: why step 12's grouped kernels run 7-13 % slower than its plain
# kernels on the same GEMM (run 46). Three builds of step 12, each built on the development machine:
#   H  cf3495f as committed
#   U  H + the unit's fields, the walk's unit count and the valid-row count made warp-uniform
#      (__reduce_*_sync, a uniform register): the grouped kernels' SASS without BRA.DIV in the K loop
#   S  U + the grouped kernels without block scales on the six-stage ring (kMaxExperts 128, an experiment)
#   P  bench/tma_ring_probe with its new `spin` cases (the ring's waits on test_wait) beside try_wait's
# U's and S's grouped suite, memcheck and racecheck on U's ragged cases, then the builds in turn,
# twice, each beside its own cuBLASLt loop, and the plain GEMMs of the same sizes as a control.
set -u
cd "$(dirname "$0")/.."
C=/tmp/c47
mkdir -p $C && tar -xJf build-carry/carry47.tar.xz -C $C
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv
export LD_LIBRARY_PATH=$C FP8GEMM_REQUIRE_GPU=1
mkdir -p $OUT/j
for v in U; do
  timeout 60 $C/$v/test_grouped_gpu > $OUT/j/${v}_test_grouped_gpu.log 2>&1
  echo "$v test_grouped_gpu rc=$?: $(tail -n 1 $OUT/j/${v}_test_grouped_gpu.log)"
done
filter="*GroupedTest*ragged_block*:*GroupedTest*ragged_per_tensor_bf16*:*GroupedUncheckedTest*"
for tool in memcheck racecheck; do
  timeout 150 compute-sanitizer --tool $tool $C/U/test_grouped_gpu --gtest_filter="$filter" > $OUT/j/U_${tool}_grouped.log 2>&1
  echo "U $tool grouped rc=$? ${SECONDS}s: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/j/U_${tool}_grouped.log | tail -1)" \
    "$(grep -cE '^\[       OK \]' $OUT/j/U_${tool}_grouped.log) passed"
done
tar -C $OUT -czf $OUT/run47_json.tar.gz j
grouped=4x8192x4096x7168/contiguous,8x4096x7168x2048/contiguous,32x128x4096x7168/contiguous
grouped+=,1x1024x4096x7168/masked,1x1024x7168x2048/masked,4x256x4096x7168/masked,32x16x4096x7168/masked
for round in 1 2; do
  for v in H U S; do
    timeout 90 $C/$v/fp8gemm_grouped_bench --shapes=$grouped \
      --benchmark_out=$OUT/j/run47_grouped${round}_$v.json --benchmark_out_format=json > $OUT/j/run47_grouped${round}_$v.log 2>&1
    echo "$v round $round rc=$? ${SECONDS}s"
    grep -E "^12_grouped_moe.*_median" $OUT/j/run47_grouped${round}_$v.log | awk '{print "  " $1, $2, $3}'
  done
  timeout 60 $C/H/fp8gemm_bench --steps=12 --shapes=32768x4096x7168,1024x4096x7168,1024x7168x2048 \
    --benchmark_repetitions=3 --benchmark_min_time=0.05 --benchmark_out=$OUT/j/run47_plain${round}.json \
    --benchmark_out_format=json > $OUT/j/run47_plain${round}.log 2>&1
  echo "plain round $round rc=$? ${SECONDS}s"
  grep -E "_median" $OUT/j/run47_plain${round}.log | awk '{print "  " $1, $2, $3}'
  tar -C $OUT -czf $OUT/run47_json.tar.gz j
done
timeout 120 $C/P/tma_ring_probe --json $OUT/j/run47_tma_ring_probe.json > $OUT/j/run47_tma_ring_probe.log 2>&1
echo "probe rc=$? ${SECONDS}s"
grep -E '^(try|spin) +(dram|l2) +(1|33|132) +[0-9]+ +[0-9]+ +8 ' $OUT/j/run47_tma_ring_probe.log
tar -C $OUT -czf $OUT/run47_json.tar.gz j
timeout 60 $C/U/test_exact_gpu > $OUT/j/U_test_exact_gpu.log 2>&1
echo "U test_exact_gpu rc=$?: $(tail -n 1 $OUT/j/U_test_exact_gpu.log) ${SECONDS}s"
if [ -x $C/U/test_steps_gpu ] && [ $SECONDS -lt 420 ]; then
  timeout 150 $C/U/test_steps_gpu --gtest_filter='*12_grouped_moe*' > $OUT/j/U_test_steps_gpu.log 2>&1
  echo "U test_steps_gpu rc=$?: $(tail -n 1 $OUT/j/U_test_steps_gpu.log) ${SECONDS}s"
fi
tar -C $OUT -czf $OUT/run47_json.tar.gz j && rm -rf $OUT/j
