#!/usr/bin/env bash
# Issue 12 run 45: step 12's contiguous grouped GEMMs with the tile order's groups no taller than
# an expert's mean rows of tiles (E: 6b0ec96 + contiguous_group_rows) against groups of 2048 rows
# for every GEMM (N: c7decd2), each build holding step 12 alone, built on the development machine.
# It ran on an H100 80GB HBM3 (asked as nvidia-h200), as build-carry/run45.sh with its programs in
# build-carry/carry45.tar.xz (not committed); E was labelled 6b0ec96+expert-groups, the code of ac0e35a.
# E's grouped suite and fp8gemm --check at 4095 x 4097 x 4100 (its plan, bench/main.cu now
# giving it the tight leading dimensions), then the two builds in turn, twice, each beside its own cuBLASLt loop.
set -u
cd "$(dirname "$0")/.."
C=/tmp/c45
mkdir -p $C && tar -xJf build-carry/carry45.tar.xz -C $C
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv
mkdir -p $OUT/j
LD_LIBRARY_PATH=$C/E FP8GEMM_REQUIRE_GPU=1 timeout 60 $C/E/test_grouped_gpu > $OUT/j/E_test_grouped_gpu.log 2>&1
echo "E test_grouped_gpu rc=$?: $(tail -n 1 $OUT/j/E_test_grouped_gpu.log)"
LD_LIBRARY_PATH=$C/E timeout 60 $C/E/fp8gemm --step 12 --m 4095 --n 4097 --k 4100 --check > $OUT/j/E_check.log 2>&1
echo "E fp8gemm --check 4095x4097x4100 rc=$?: $(grep -E '^launch:' $OUT/j/E_check.log)"
grouped=4x8192x4096x7168/contiguous,8x4096x7168x2048/contiguous,32x128x4096x7168/contiguous
for round in 1 2; do
  for v in N E; do
    LD_LIBRARY_PATH=$C/$v timeout 60 $C/$v/fp8gemm_grouped_bench --shapes=$grouped \
      --benchmark_out=$OUT/j/run45_grouped${round}_$v.json --benchmark_out_format=json > $OUT/j/run45_grouped${round}_$v.log 2>&1
    echo "$v round $round rc=$? ${SECONDS}s"
    grep -E "_median" $OUT/j/run45_grouped${round}_$v.log | awk '{print "  " $1, $2, $3}'
  done
  tar -C $OUT -czf $OUT/run45_json.tar.gz j
done
rm -rf $OUT/j
