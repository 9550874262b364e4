#!/usr/bin/env bash
# issue 11 run 33: the promoted kernel's stall samples per SASS instruction at 4096^3 (3f20658)
set -u
cd "$(dirname "$0")/.."
mkdir -p /tmp/c && tar -xJf build-carry/carry32.tar.xz -C /tmp/c
B=/tmp/c/bin
export LD_LIBRARY_PATH=$B
timeout 200 ncu --clock-control none --section SourceCounters --section WarpStateStats -k regex:fp8_gemm_kernel \
  --launch-skip 3 --launch-count 1 --page source --print-source sass --csv $B/fp8gemm --step 12 \
  > $OUT/run33_ncu_source_12_4096.csv 2>&1
echo "ncu rc=$?"; gzip $OUT/run33_ncu_source_12_4096.csv; ls -la $OUT
