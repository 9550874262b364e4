#!/usr/bin/env bash
# issue 10 run 12: Nsight Compute's full set on one decode launch (64 x 2112 x 7168) of step 12
# at 18be982 and on cuBLASLt's kernels of one call, for comparing their memory traffic.
# A record of what ran: it ran as build-carry/run39.sh from the repository root (hence the cd),
# with its programs in build-carry/carry*.tar.xz, which is not committed.
set -u
cd "$(dirname "$0")/.."
mkdir -p /tmp/c && tar -xJf build-carry/carry38.tar.xz -C /tmp/c
export LD_LIBRARY_PATH=/tmp/c/A
timeout 200 ncu --clock-control none --set full --print-details all -k regex:'fp8_gemm_kernel' --launch-skip 3 --launch-count 1 \
  /tmp/c/A/fp8gemm --step 12 --m 64 --n 2112 --k 7168 > $OUT/run12_ncu_full_12_decode.txt 2>&1
echo "ours rc=$? $(grep -E '^ +Duration' $OUT/run12_ncu_full_12_decode.txt | head -1)"
timeout 200 ncu --clock-control none --set full --print-details all -k regex:'nvjet|splitKreduce' --launch-skip 6 --launch-count 2 \
  /tmp/c/A/fp8gemm --step cublaslt --m 64 --n 2112 --k 7168 > $OUT/run12_ncu_full_cublaslt_decode.txt 2>&1
echo "cublaslt rc=$? $(grep -E '^ +Duration' $OUT/run12_ncu_full_cublaslt_decode.txt | head -2 | tr '\n' ' ')"
for f in $OUT/*.txt; do grep -E '^ +(Duration|DRAM Throughput|L2 Hit Rate|L1/TEX Hit Rate|Mem Busy|Max Bandwidth|L2 Cache Throughput|SM Active Cycles|Elapsed Cycles|Registers Per Thread|Dynamic Shared Memory Per Block|Achieved Occupancy|Mem Pipes Busy) ' $f | sed 's/^ */  /'; echo; done
