#!/usr/bin/env bash
# Issue 9 run 80, last part: the stall samples per instruction of the block-scaled case with bias + GELU
# (the one without is in run 80's files), the clock locked at base, on run 79's B.
set -u
cd "$(dirname "$0")/.."
C=/tmp/c80p
[ -x $C/fp8gemm ] || { mkdir -p $C && xz -dc build-carry/carry79.tar.xz | tar -xf - -C $C; }
export FP8GEMM_REQUIRE_GPU=1 LD_LIBRARY_PATH=$C FP8GEMM_RUN79_BLOCK_ON_VECTOR_KERNELS=1
timeout 80 ncu --clock-control base --section SourceCounters --section WarpStateStats -k regex:fp8_gemm_kernel \
  --launch-skip 3 --launch-count 1 --page source --print-source sass --csv $C/fp8gemm --step 12 \
  --m 4096 --n 7168 --k 16384 --scales block --epilogue bias_gelu 2>&1 | gzip > $OUT/run80_ncu_source_block_bias_gelu.csv.gz
echo "ncu source block bias_gelu rc=$? ${SECONDS}s"
