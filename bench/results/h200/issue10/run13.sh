#!/usr/bin/env bash
# issue 10 run 13: the small tile's ring as deep as shared memory allows (208 KB): B = 64 x 64
# with 13 stages (10 before, run13_deep_ring.patch), C = run 10's 64 x 32 tile in pairs with 17
# stages (13 before, run13_narrow_deep_ring.patch), each against 18be982 (A), alternating.
# A record of what ran: it ran as build-carry/run40.sh from the repository root (hence the cd),
# with its programs in build-carry/carry*.tar.xz, which is not committed.
set -u
cd "$(dirname "$0")/.."
mkdir -p /tmp/c && tar -xJf build-carry/carry40.tar.xz -C /tmp/c
for round in 1 2; do
  for side in A B C; do
    LD_LIBRARY_PATH=/tmp/c/$side timeout 60 /tmp/c/$side/fp8gemm_grouped_bench --benchmark_filter='32x16x' \
      --benchmark_out=$OUT/grouped_$side$round.json --benchmark_out_format=json > /tmp/grouped_$side$round.log 2>&1
    echo "grouped $side $round rc=$? $(grep -E '12_grouped_moe.*_median' /tmp/grouped_$side$round.log | awk '{print $1, $2, $3}')"
  done
done
shapes=64x2112x7168,64x24576x1536,64x32768x512,64x7168x16384,64x4096x7168,64x7168x2048,128x2112x7168,128x4096x7168
for side in B C; do
  AB_BIN=/tmp/c/$side AB_SHAPES=$shapes OUT=$OUT/$side bash bench/measure_h200.sh 12_grouped_moe 18be982 /tmp/c/A ab 2>&1 | grep -v "_fast/"
done
cd $OUT && tar -czf all.tar.gz --exclude=all.tar.gz . ; find . -mindepth 1 ! -name all.tar.gz -delete; ls -la $OUT
