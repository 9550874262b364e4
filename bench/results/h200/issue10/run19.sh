#!/bin/bash
# Issue 10 run 19: step 12 with two consumer warpgroups on the 64-row tile (B, the working
# tree on 2767b13) against 2767b13 (A), alternating; B's suites, plans and sanitizers.
# A record of what ran: it ran as build-carry/run19.sh on the device, with both builds'
# programs (step 12 alone in each tree, built on the development machine) carried in
# build-carry/carry19.tar.xz (not committed).
set -u
R=/tmp/r19; mkdir -p $R && tar -xJf build-carry/carry19.tar.xz -C $R
for d in A B; do cp $R/lib/* $R/$d/; done
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu --format=csv > $OUT/run19_gpu.txt 2>&1
mkdir -p $OUT/b $OUT/ab
OUT=$OUT/b bash bench/measure_h200.sh 12_grouped_moe "2767b13+two-consumers" $R/B tests checks sanitize
FP8GEMM_REQUIRE_GPU=1 LD_LIBRARY_PATH=$R/B timeout 150 $R/B/test_grouped_gpu > $OUT/b/run19_test_grouped_gpu.log 2>&1
echo "test_grouped_gpu rc=$?: $(tail -n 1 $OUT/b/run19_test_grouped_gpu.log)"
for shape in "64 2112 7168" "64 7168 16384" "128 2112 7168" "37 1000 1008" "64 4096 7168"; do
  read -r m n k <<< "$shape"
  LD_LIBRARY_PATH=$R/B timeout 60 $R/B/fp8gemm --step 12 --m $m --n $n --k $k --check 2>&1 | grep -E "^launch:|check" >> $OUT/b/run19_plans.log
done
cat $OUT/b/run19_plans.log | cut -c1-220
S=64x2112x7168,64x24576x1536,64x32768x512,64x7168x16384,64x4096x7168,64x7168x2048
S+=,128x2112x7168,128x24576x1536,128x32768x512,128x7168x16384,128x4096x7168,128x7168x2048
S+=,1024x1024x16384,4096x4096x4096
AB_BIN=$R/B AB_SHAPES=$S OUT=$OUT/ab bash bench/measure_h200.sh 12_grouped_moe 2767b13 $R/A ab
nvidia-smi --query-gpu=clocks.sm,temperature.gpu --format=csv >> $OUT/run19_gpu.txt 2>&1
cd $OUT && tar -czf all.tar.gz run19_gpu.txt b ab && rm -rf b ab run19_gpu.txt
