#!/usr/bin/env bash
# Session of 2026-12-06 #3, run 56: Nsight Compute's stall samples of step 12 at 4096 x 4097 x 4096 (D's rows
# off 16-byte boundaries: written a row at a time through the D buffer) beside 4096^3 (through the TMA).
set -u
cd "$(dirname "$0")/.."
C=/tmp/c56
mkdir -p $C && tar -xJf build-carry/fp8gemm51.tar.xz -C $C && tar -xJf build-carry/carry53.tar.xz -C $C ./libbenchmark.so.1debian
export LD_LIBRARY_PATH=$C
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader
for n in 4096 4097; do
  cmd="$C/fp8gemm --step 12 --m 4096 --n $n --k 4096"
  timeout 150 ncu --clock-control none --section SourceCounters --section WarpStateStats -k regex:fp8_gemm_kernel \
    --launch-skip 3 --launch-count 1 --page source --print-source sass --csv $cmd 2>&1 | gzip > $OUT/run56_ncu_source_4096x${n}x4096.csv.gz
  echo "source $n rc=$? ${SECONDS}s"
  timeout 100 ncu --clock-control none --section SpeedOfLight -k regex:fp8_gemm_kernel --launch-skip 3 --launch-count 1 $cmd 2>&1 | grep -E "^ +(Duration|Elapsed Cycles|SM Active Cycles)" | sed "s/^ */  $n /"
done
