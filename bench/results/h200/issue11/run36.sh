#!/usr/bin/env bash
# issue 11 run 36: the producer's barrier bases kept in registers too (run36_producer.patch on
# 3a0e879, build "producer") against 3a0e879's build (labelled 98d94d9+pinned).
# A record of what ran: it ran as build-carry/run36.sh from the repository root (hence the cd),
# with its programs in build-carry/carry*.tar.xz, which is not committed.
set -u
cd "$(dirname "$0")/.."
mkdir -p /tmp/c && tar -xJf build-carry/carry36.tar.xz -C /tmp/c
LD_LIBRARY_PATH=/tmp/c/prod timeout 100 /tmp/c/prod/test_exact_gpu --gtest_filter='*12_grouped_moe*' > $OUT/producer_test_exact_gpu_12.log 2>&1
echo "producer test_exact_gpu rc=$?: $(tail -n 1 $OUT/producer_test_exact_gpu_12.log)"
AB_BIN=/tmp/c/pin AB_SHAPES=4096x4096x4096,8192x8192x8192,4096x7168x16384,4096x4096x7168,4096x32768x512,4096x2112x7168,64x2112x7168 \
  OUT=$OUT bash bench/measure_h200.sh 12_grouped_moe 3a0e879+producer /tmp/c/prod ab
