#!/bin/bash
# Issue 10 run 17: mutant 156 on the H200, and per-block timelines of step 12's launches.
# A record of what ran: it ran as build-carry/run17.sh on the device, with the programs
# carried in build-carry/carry17.tar.xz (not committed): m156/ the exact and epilogue suites
# of 2767b13 with tests/mutants/156_s12_medium_tile_one_d_box.patch applied; tl/ fp8gemm of
# 2767b13 with run17_timeline.patch (step 12 alone in the tree).
set -u
R=/tmp/r17; mkdir -p $R && tar -xJf build-carry/carry17.tar.xz -C $R
export LD_LIBRARY_PATH=$R/lib:${LD_LIBRARY_PATH:-}
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu --format=csv > $OUT/run17_gpu.txt 2>&1
export FP8GEMM_REQUIRE_GPU=1 FP8GEMM_TEST_SEED=1
$R/m156/test_exact_gpu --gtest_filter='*12_grouped_moe*' > $OUT/run17_mutant_156_test_exact_gpu.log 2>&1
echo "exit status $?" >> $OUT/run17_mutant_156_test_exact_gpu.log
$R/m156/test_epilogue_gpu --gtest_filter='*EpilogueTest*12_grouped_moe_*100x1000x1008*' > $OUT/run17_mutant_156_test_epilogue_gpu.log 2>&1
echo "exit status $?" >> $OUT/run17_mutant_156_test_epilogue_gpu.log
tail -n 3 $OUT/run17_mutant_156_*.log
mkdir -p $OUT/tl
run() {  # name, then fp8gemm's arguments
  local name=$1; shift
  FP8GEMM_TIMELINE=$OUT/tl/$name.bin timeout 120 $R/tl/fp8gemm --step 12 --check "$@" > $OUT/tl/$name.log 2>&1
  echo "$name: exit $?"; grep -E "time:|split_k" $OUT/tl/$name.log | head -3
}
run decode --m 64 --n 2112 --k 7168
run decode_split1 --m 64 --n 2112 --k 7168 --split-k 1
run decode_split2 --m 64 --n 2112 --k 7168 --split-k 2
run decode_split8 --m 64 --n 2112 --k 7168 --split-k 8
run m64_7168_16384 --m 64 --n 7168 --k 16384
run m64_4096_7168 --m 64 --n 4096 --k 7168
run m128_7168_16384 --m 128 --n 7168 --k 16384
run m4096 --m 4096 --n 4096 --k 4096
nvidia-smi --query-gpu=clocks.sm --format=csv >> $OUT/run17_gpu.txt 2>&1
cd $OUT && tar -czf all.tar.gz run17_* tl && rm -rf tl run17_*
