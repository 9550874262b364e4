#!/usr/bin/env bash
# Issue 11 run 40: step 12's grouped tile order with 8 (as committed, c97f349), 32 and 16 rows of
# cluster tiles per group (kGroupRows in steps/12_grouped_moe/grouped_moe_sm90a.cuh), each built on
# the development machine in a tree holding step 12 alone (run40_build_variants.sh; the binaries
# travelled as build-carry/carry41.tar.xz). The exact suite of each changed build, then
# fp8gemm_bench on six shapes, the three builds in turn, twice.
set -u
cd "$(dirname "$0")/.."
C=/tmp/c41
mkdir -p $C && tar -xJf build-carry/carry41.tar.xz -C $C
for v in G8 G16 G32; do cp $C/libbenchmark.so.1debian $C/$v/; done
nvidia-smi --query-gpu=name,clocks.current.sm,clocks.max.sm,temperature.gpu --format=csv
export FP8GEMM_REQUIRE_GPU=1
for v in G32 G16; do
  LD_LIBRARY_PATH=$C/$v timeout 120 $C/$v/test_exact_gpu --gtest_filter='*12_grouped_moe*' > $OUT/run40_test_exact_gpu_$v.log 2>&1
  echo "$v test_exact_gpu rc=$? ${SECONDS}s: $(tail -n 1 $OUT/run40_test_exact_gpu_$v.log)"
done
shapes=4096x32768x512,4096x4096x4096,8192x8192x8192,4096x7168x16384,4096x4096x7168,128x24576x1536
for round in 1 2; do
  for v in G8 G32 G16; do
    LD_LIBRARY_PATH=$C/$v timeout 200 $C/$v/fp8gemm_bench --steps=12 --shapes=$shapes --benchmark_repetitions=3 \
      --benchmark_min_time=0.05 --benchmark_out=$OUT/run40_ab${round}_$v.json --benchmark_out_format=json \
      > $OUT/run40_ab${round}_$v.log 2>&1
    echo "$v round $round rc=$? ${SECONDS}s"
  done
done
cd $OUT && tar -czf /tmp/all.tar.gz . && find . -mindepth 1 -delete && mv /tmp/all.tar.gz run40_all.tar.gz
