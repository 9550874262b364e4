#!/usr/bin/env bash
# issue 10 run 11: the rest of each small-tile unit's B asked of the L2 (build "prefetch":
# run11_l2_prefetch.patch on 18be982) against 18be982.
# A record of what ran: it ran as build-carry/run38.sh from the repository root (hence the cd),
# with its programs in build-carry/carry*.tar.xz, which is not committed.
set -u
cd "$(dirname "$0")/.."
mkdir -p /tmp/c && tar -xJf build-carry/carry38.tar.xz -C /tmp/c
export LD_LIBRARY_PATH=/tmp/c/B
OUT=$OUT/s bash bench/measure_h200.sh 12_grouped_moe 18be982+prefetch /tmp/c/B tests sanitize
tar -C $OUT -czf $OUT/suites.tar.gz s && rm -rf $OUT/s
timeout 120 /tmp/c/B/test_grouped_gpu > $OUT/prefetch_test_grouped_gpu.log 2>&1
echo "prefetch test_grouped_gpu rc=$?: $(tail -n 1 $OUT/prefetch_test_grouped_gpu.log)"
for round in 1 2; do
  for side in A B; do
    LD_LIBRARY_PATH=/tmp/c/$side timeout 60 /tmp/c/$side/fp8gemm_grouped_bench --benchmark_filter='32x16x|4x256x' \
      --benchmark_out=$OUT/grouped_$side$round.json --benchmark_out_format=json > /tmp/grouped_$side$round.log 2>&1
    echo "grouped $side $round rc=$?"; grep -E "_median" /tmp/grouped_$side$round.log | awk '{print "  " $1, $2, $3}'
  done
done
AB_BIN=/tmp/c/B AB_SHAPES=64x2112x7168,64x24576x1536,64x32768x512,64x7168x16384,64x4096x7168,64x7168x2048,128x2112x7168,128x24576x1536,128x32768x512,128x7168x16384,128x4096x7168,128x7168x2048,4096x4096x4096 \
  OUT=$OUT bash bench/measure_h200.sh 12_grouped_moe 18be982 /tmp/c/A ab
OUT=$OUT/d bash bench/measure_h200.sh 12_grouped_moe 18be982+prefetch /tmp/c/B decode
tar -C $OUT -czf $OUT/decode.tar.gz d && rm -rf $OUT/d
cd $OUT && tar -czf all.tar.gz --exclude=all.tar.gz . ; find . -mindepth 1 ! -name all.tar.gz -delete; ls -la $OUT
