#!/usr/bin/env bash
# Issue 9 run 74 (prepared in the session of 2026-12-07, twelfth): where bias + GELU's time goes on step 12's
# 128 x 256 tile at 4096^3. Nsight Compute on one launch each of `fp8gemm --step 12` with no epilogue and with
# bias + GELU (per-tensor scales, BF16 D): speed of light, warp states, scheduler, compute pipes, instruction
# statistics; and the stall samples per SASS instruction of the bias + GELU launch (csv). Called as
# build-carry/run74.sh with build-carry/carry74.tar.xz: F = run 72's fp8gemm (c7020b4, whose step 12 kernels
# are the landed ones for these GEMMs), built by ../issue11/run72_build.sh. Files land in $OUT.
set -u
cd "$(dirname "$0")/.."
C=/tmp/c74
mkdir -p $C && tar -xJf build-carry/carry74.tar.xz -C $C
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv
export FP8GEMM_REQUIRE_GPU=1 LD_LIBRARY_PATH=$C/F
shape="--m 4096 --n 4096 --k 4096"
for ep in none bias_gelu; do
  timeout 120 ncu --clock-control none --section SpeedOfLight --section WarpStateStats --section SchedulerStats \
    --section ComputeWorkloadAnalysis --section InstructionStats --print-details all -k regex:fp8_gemm_kernel \
    --launch-skip 3 --launch-count 1 $C/F/fp8gemm --step 12 $shape --epilogue $ep > $OUT/run74_ncu_12_$ep.txt 2>&1
  echo "ncu $ep rc=$? ${SECONDS}s: $(grep -E '^ +Duration' $OUT/run74_ncu_12_$ep.txt | head -1)"
  grep -E '^ +(Duration|Compute \(SM\) Throughput|Issue Slots Busy|Executed Ipc Active|Warp Cycles Per Issued Instruction) ' \
    $OUT/run74_ncu_12_$ep.txt | head -6 | sed 's/^ */    /'
done
timeout 150 ncu --clock-control none --section SourceCounters --section WarpStateStats -k regex:fp8_gemm_kernel \
  --launch-skip 3 --launch-count 1 --page source --print-source sass --csv $C/F/fp8gemm --step 12 $shape \
  --epilogue bias_gelu 2>&1 | gzip > $OUT/run74_ncu_source_12_bias_gelu.csv.gz
echo "ncu source rc=$? ${SECONDS}s"
echo "issue 9 run 74 done ${SECONDS}s"
