#!/usr/bin/env bash
# Session of 2026-12-06 #3, run 54: Nsight Compute's stall samples of the masked kernel of one expert at
# c7fb286 (after run 52's change), beside the plain GEMM of its size, as in run 51.
set -u
cd "$(dirname "$0")/.."
C=/tmp/c54
mkdir -p $C && tar -xJf build-carry/carry53.tar.xz -C $C && tar -xJf build-carry/fp8gemm51.tar.xz -C $C
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader
export LD_LIBRARY_PATH=$C FP8GEMM_REQUIRE_GPU=1
for v in plain masked; do
  if [ $v = plain ]; then cmd="$C/fp8gemm --step 12 --m 1024 --n 7168 --k 2048"; else cmd="$C/fp8gemm_grouped_bench --shapes=1x1024x7168x2048/masked --benchmark_filter=^12_"; fi
  timeout 150 ncu --clock-control none --section SourceCounters --section WarpStateStats --section SpeedOfLight -k regex:fp8_gemm_kernel \
    --launch-skip 3 --launch-count 1 --page source --print-source sass --csv $cmd 2>&1 | gzip > $OUT/run54_ncu_source_${v}_1024x7168x2048.csv.gz
  echo "source $v rc=$? ${SECONDS}s"
  timeout 100 ncu --clock-control none --section SpeedOfLight -k regex:fp8_gemm_kernel --launch-skip 3 --launch-count 1 $cmd 2>&1 | grep -E "^ +(Duration|Elapsed Cycles|SM Active Cycles)" | sed "s/^ */  $v /"
done
