#!/usr/bin/env bash
# issue 11 run 32: an experiment (build "unit-sync": both consumer warpgroups meet at a named
# barrier at the start of each unit, promoted kernels only, run32_unit_sync.patch) against 3f20658.
set -u
cd "$(dirname "$0")/.."
mkdir -p /tmp/c && tar -xJf build-carry/carry32.tar.xz -C /tmp/c
LD_LIBRARY_PATH=/tmp/c/sync timeout 100 /tmp/c/sync/test_exact_gpu --gtest_filter='*12_grouped_moe*' > $OUT/unit_sync_test_exact.log 2>&1
echo "unit-sync test_exact_gpu rc=$?: $(tail -n 1 $OUT/unit_sync_test_exact.log)"
AB_BIN=/tmp/c/bin AB_SHAPES=4096x4096x4096,8192x8192x8192,4096x7168x16384,4096x4096x7168,4096x32768x512,4096x2112x7168,1024x1024x16384 \
  OUT=$OUT bash bench/measure_h200.sh 12_grouped_moe fe39956+unit-sync /tmp/c/sync ab
