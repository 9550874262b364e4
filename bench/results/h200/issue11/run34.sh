#!/usr/bin/env bash
# issue 11 run 34: the consumers' barrier addresses kept in registers (build "pinned",
# run34_pinned_barriers.patch on 98d94d9) against 98d94d9's build (kernels as at 3f20658).
set -u
cd "$(dirname "$0")/.."
mkdir -p /tmp/c && tar -xJf build-carry/carry34.tar.xz -C /tmp/c
AB_BIN=/tmp/c/base AB_SHAPES=4096x4096x4096,8192x8192x8192,4096x7168x16384,4096x4096x7168,4096x32768x512,4096x2112x7168,64x2112x7168 \
  OUT=$OUT bash bench/measure_h200.sh 12_grouped_moe 98d94d9+pinned /tmp/c/pin ab tests
mkdir -p $OUT/s
LD_LIBRARY_PATH=/tmp/c/pin timeout 120 /tmp/c/pin/test_grouped_gpu > $OUT/s/test_grouped_gpu_12.log 2>&1
echo "test_grouped_gpu rc=$?: $(tail -n 1 $OUT/s/test_grouped_gpu_12.log)"
OUT=$OUT/s bash bench/measure_h200.sh 12_grouped_moe 98d94d9+pinned /tmp/c/pin sanitize units
tar -C $OUT -czf $OUT/sanitize_units.tar.gz s && rm -rf $OUT/s
