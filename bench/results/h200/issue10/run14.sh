#!/usr/bin/env bash
# issue 10 run 14: a 128 x 64 tile in clusters of two sharing A (build B, "medium":
# run14_medium_tile.patch on 8fe3651, forced with FP8GEMM_TILE=medium) against 8fe3651 (A).
# A record of what ran: it ran as build-carry/run38.sh from the repository root (hence the cd),
# with its programs in build-carry/carry38.tar.xz, which is not committed.
set -u
cd "$(dirname "$0")/.."
mkdir -p /tmp/c && tar -xJf build-carry/carry38.tar.xz -C /tmp/c
nvidia-smi --query-gpu=clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv
# B's suites and sanitizers with every plain GEMM on the 128 x 64 tile
export FP8GEMM_TILE=medium
OUT=$OUT/s bash bench/measure_h200.sh 12_grouped_moe 8fe3651+medium /tmp/c/B tests checks sanitize units
tar -C $OUT -czf $OUT/suites.tar.gz s && rm -rf $OUT/s
unset FP8GEMM_TILE
S=128x2112x7168,128x24576x1536,128x32768x512,128x7168x16384,128x4096x7168,128x7168x2048,1024x1024x16384,256x7168x2048,4096x4096x4096
for round in 1 2; do
  for side in A B; do
    if [ $side = B ]; then export FP8GEMM_TILE=medium; else unset FP8GEMM_TILE; fi
    LD_LIBRARY_PATH=/tmp/c/$side timeout 120 /tmp/c/$side/fp8gemm_bench --steps=12 --shapes=$S \
      --benchmark_repetitions=3 --benchmark_min_time=0.05 \
      --benchmark_out=$OUT/ab_$side$round.json --benchmark_out_format=json > /tmp/ab_$side$round.log 2>&1
    echo "ab $side $round rc=$? ${SECONDS}s"; grep -E "_median" /tmp/ab_$side$round.log | awk '{print "  " $1, $2, $3}'
  done
done
export FP8GEMM_TILE=medium
SPLIT_SHAPES="128x2112x7168 128x4096x7168 128x7168x16384 1024x1024x16384" OUT=$OUT/sp \
  bash bench/measure_h200.sh 12_grouped_moe 8fe3651+medium /tmp/c/B splits
mv $OUT/sp/splits.csv $OUT/medium_splits.csv; tar -C $OUT -czf $OUT/splits_logs.tar.gz sp && rm -rf $OUT/sp
cd $OUT && tar -czf all.tar.gz --exclude=all.tar.gz . && find . -mindepth 1 ! -name all.tar.gz -delete; ls -la $OUT
