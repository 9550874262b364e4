#!/bin/bash
# Issue 10 run 21: step 12 with two TMA-issuing threads in the producer warpgroup, each
# issuing every other K block (B, run21_two_issuers.patch on bd20a44, labelled
# bd20a44+two-issuers), against 2767b13's build of run 19 (A), alternating; B's exact and
# epilogue suites. A record of what ran: it ran as build-carry/run21.sh on the device, with the
# programs (step 12 alone in each tree, built on the development machine) in
# build-carry/carry21.tar.xz (not committed).
set -u
R=/tmp/r21; mkdir -p $R && tar -xJf build-carry/carry21.tar.xz -C $R
for d in A B; do cp $R/lib/* $R/$d/; done
export FP8GEMM_REQUIRE_GPU=1
L=$OUT/run21; mkdir -p $L
for t in test_exact_gpu test_epilogue_gpu; do
  LD_LIBRARY_PATH=$R/B timeout 120 $R/B/$t --gtest_filter="*12_grouped_moe*" > $L/two_issuers_$t.log 2>&1
  echo "$t rc=$?: $(tail -n 1 $L/two_issuers_$t.log)"; grep "^\[  FAILED" $L/two_issuers_$t.log | head -3
done
S=64x2112x7168,64x24576x1536,64x32768x512,64x7168x16384,64x4096x7168,64x7168x2048
S+=,128x2112x7168,128x24576x1536,128x7168x16384,128x4096x7168,1024x1024x16384,4096x4096x4096
for round in 1 2; do
  for side in A B; do
    LD_LIBRARY_PATH=$R/$side timeout 150 $R/$side/fp8gemm_bench --steps=12 --shapes=$S --benchmark_repetitions=3 \
      --benchmark_min_time=0.05 --benchmark_out=$L/ab${round}_$side.json --benchmark_out_format=json > $L/ab${round}_$side.log 2>&1
    echo "ab $side$round rc=$?"; grep -E "^12_grouped_moe/.*_median" $L/ab${round}_$side.log | awk '{print "  " $1, $2, $3}'
  done
done
cd $OUT && tar -czf all.tar.gz run21 && rm -rf run21
