#!/bin/bash
# Issue 10 run 18: run 17's timelines again with the producer's start stamped step by step.
# A record of what ran: it ran as build-carry/run18.sh on the device, with fp8gemm of 2767b13
# with run18_timeline.patch (step 12 alone in the tree) carried in build-carry/carry18.tar.xz
# (not committed).
set -u
R=/tmp/r18; mkdir -p $R && tar -xJf build-carry/carry18.tar.xz -C $R
export LD_LIBRARY_PATH=$R/lib:${LD_LIBRARY_PATH:-}
mkdir -p $OUT/tl
run() {
  local name=$1; shift
  FP8GEMM_TIMELINE=$OUT/tl/$name.bin timeout 120 $R/tl/fp8gemm --step 12 "$@" > $OUT/tl/$name.log 2>&1
  echo "$name: exit $?"
}
run decode --m 64 --n 2112 --k 7168
run m64_7168_16384 --m 64 --n 7168 --k 16384
run m4096 --m 4096 --n 4096 --k 4096
cd $OUT && tar -czf all.tar.gz tl && rm -rf tl
