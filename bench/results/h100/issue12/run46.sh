#!/usr/bin/env bash
# Session of 2026-12-06 #2, run 46: step 12 at cf3495f (the contiguous groups no taller than an
# expert, ac0e35a), asked for on the H200, run on an H100: the grouped phase, the TMA ring probe,
# the persistent and DeepSeek-V3 shapes beside cuBLASLt, the plain GEMMs the grouped shapes equal
# (one GEMM of all the rows), the rows phase, then the suites.
set -u
cd "$(dirname "$0")/.."
C=/tmp/c46
mkdir -p $C && tar -xJf build-carry/carry46.tar.xz -C $C
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv
B=$C/H
mkdir -p $OUT/a $OUT/b $OUT/c
OUT=$OUT/a BENCH_STEPS=12 timeout 330 bash bench/measure_h200.sh 12_grouped_moe cf3495f $B grouped probe bench deepseek
echo "part a ${SECONDS}s"
LD_LIBRARY_PATH=$B timeout 60 $B/fp8gemm_bench --steps=12 \
  --shapes=32768x4096x7168,32768x7168x2048,1024x4096x7168,1024x7168x2048,512x4096x7168 \
  --benchmark_repetitions=3 --benchmark_min_time=0.05 --benchmark_out=$OUT/c/bench_plain_equivalents.json \
  --benchmark_out_format=json > $OUT/c/bench_plain_equivalents.log 2>&1
echo "plain equivalents rc=$? ${SECONDS}s"
grep -E "_median" $OUT/c/bench_plain_equivalents.log | awk '{print "  " $1, $2, $3}'
OUT=$OUT/b BENCH_STEPS=12 timeout $((570 - SECONDS)) bash bench/measure_h200.sh 12_grouped_moe cf3495f $B rows tests
echo "part b ${SECONDS}s"
tar -C $OUT -czf $OUT/run46.tar.gz a b c && rm -rf $OUT/a $OUT/b $OUT/c
