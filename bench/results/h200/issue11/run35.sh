#!/usr/bin/env bash
# issue 11 run 35: the committed step 12 (barrier addresses in registers; the build labelled
# 98d94d9+pinned, the same kernel source) beside cuBLASLt: issue 11's bench shapes and the
# 18 DeepSeek-V3 shapes, then the grouped phase (issue 12: suite, sanitizers, grouped bench).
set -u
cd "$(dirname "$0")/.."
mkdir -p /tmp/c && tar -xJf build-carry/carry34.tar.xz -C /tmp/c
export LD_LIBRARY_PATH=/tmp/c/pin
BENCH_STEPS=12 OUT=$OUT bash bench/measure_h200.sh 12_grouped_moe 98d94d9+pinned /tmp/c/pin bench deepseek grouped
