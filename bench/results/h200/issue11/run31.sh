#!/usr/bin/env bash
# issue 11 run 31 / issue 12 run 4: step 12 as committed (kernels of 3f20658): its suites and the
# grouped phase; then an experiment (build "phase-offset": warpgroup 1 starts ~200 ns after
# warpgroup 0, run31_phase_offset.patch) against it, alternating twice.
set -u
cd "$(dirname "$0")/.."
mkdir -p /tmp/c && tar -xJf build-carry/carry31.tar.xz -C /tmp/c
nvidia-smi --query-gpu=name,clocks.current.sm,clocks.max.sm,temperature.gpu --format=csv
OUT=$OUT bash bench/measure_h200.sh 12_grouped_moe 3f20658 /tmp/c/bin tests grouped
LD_LIBRARY_PATH=/tmp/c/off timeout 100 /tmp/c/off/test_exact_gpu --gtest_filter='*12_grouped_moe*' > $OUT/phase_offset_test_exact.log 2>&1
echo "phase-offset test_exact_gpu rc=$?: $(tail -n 1 $OUT/phase_offset_test_exact.log)"
mkdir -p $OUT/ab && AB_BIN=/tmp/c/bin AB_SHAPES=4096x4096x4096,8192x8192x8192,4096x7168x16384,4096x4096x7168,4096x32768x512 \
  OUT=$OUT/ab bash bench/measure_h200.sh 12_grouped_moe fe39956+phase-offset /tmp/c/off ab
ls $OUT $OUT/ab
