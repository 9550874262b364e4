#!/usr/bin/env bash
# Issue 12 run 44: step 12's tile order on the contiguous grouped shapes, three builds of step 12
# alone (built on the development machine): P = 94398f8 (groups of 8 rows of cluster tiles),
# N = c7decd2 (groups of 2048 rows of D), R = c7decd2 with run44_row_major.patch (contiguous
# grouped GEMMs walk their cluster tiles row by row: groups of one row). R's grouped suite first,
# then the three builds in turn, twice, each beside its own cuBLASLt loop. Asked as nvidia-h200,
# it ran on an H100 80GB HBM3. The programs travelled as build-carry/carry44.tar.xz (not
# committed) and this script ran as build-carry/run44.sh from the repository root.
set -u
cd "$(dirname "$0")/.."
C=/tmp/c44
mkdir -p $C && tar -xJf build-carry/carry44.tar.xz -C $C
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv
mkdir -p $OUT/j
LD_LIBRARY_PATH=$C/R FP8GEMM_REQUIRE_GPU=1 timeout 60 $C/R/test_grouped_gpu > $OUT/j/R_test_grouped_gpu.log 2>&1
echo "R test_grouped_gpu rc=$?: $(tail -n 1 $OUT/j/R_test_grouped_gpu.log)"
grouped=4x8192x4096x7168/contiguous,4x8192x7168x2048/contiguous,8x4096x4096x7168/contiguous
grouped+=,8x4096x7168x2048/contiguous,32x128x4096x7168/contiguous
for round in 1 2; do
  for v in P N R; do
    LD_LIBRARY_PATH=$C/$v timeout 150 $C/$v/fp8gemm_grouped_bench --shapes=$grouped \
      --benchmark_out=$OUT/j/run44_grouped${round}_$v.json --benchmark_out_format=json > $OUT/j/run44_grouped${round}_$v.log 2>&1
    echo "$v round $round rc=$? ${SECONDS}s"
    grep -E "_median" $OUT/j/run44_grouped${round}_$v.log | awk '{print "  " $1, $2, $3}'
  done
  tar -C $OUT -czf $OUT/run44_json.tar.gz j
done
rm -rf $OUT/j
