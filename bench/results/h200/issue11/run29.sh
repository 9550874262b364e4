#!/usr/bin/env bash
# issue 11 run 29: step 12 with stream-K over the last wave (BIN = this build, AB_BIN = 3f20658)
set -u
cd "$(dirname "$0")/.."
mkdir -p /tmp/c && tar -xJf build-carry/carry.tar.xz -C /tmp/c
nvidia-smi --query-gpu=name,clocks.current.sm,clocks.max.sm,temperature.gpu --format=csv
B=/tmp/c/bin
for shape in "4096 2112 7168" "128 24576 1536" "2100 1900 600" "4096 32768 512"; do
  read -r m n k <<< "$shape"
  LD_LIBRARY_PATH=$B $B/fp8gemm --step 12 --m $m --n $n --k $k --check 2>&1 | grep -E "^launch:|check PASS|FAIL|time:"
done
LD_LIBRARY_PATH=$B $B/fp8gemm --step 12 --m 4096 --n 2112 --k 7168 --fast-accum --check 2>&1 | grep -E "^launch:|check PASS|FAIL|time:"
export MUTANTS=/tmp/c/mut AB_BIN=/tmp/c/old
export AB_SHAPES=4096x4096x4096,8192x8192x8192,4096x7168x16384,4096x4096x7168,4096x32768x512,4096x2112x7168,4096x7168x2048,4096x24576x1536,128x24576x1536
OUT=$OUT bash bench/measure_h200.sh 12_grouped_moe "$(cat build-carry/commit)" $B tests checks units mutants ab deepseek
