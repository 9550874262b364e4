#!/usr/bin/env bash
# Issue 9 run 80, last part: step 12 and cuBLASLt (per-tensor scales, 4096 x 7168 x 16384) at the locked base
# clock, with the compute and memory sections: what cuBLASLt's 12 % fewer cycles are made of.
set -u
cd "$(dirname "$0")/.."
C=/tmp/c80p
[ -x $C/fp8gemm ] || { mkdir -p $C && xz -dc build-carry/carry79.tar.xz | tar -xf - -C $C; }
export FP8GEMM_REQUIRE_GPU=1 LD_LIBRARY_PATH=$C
for who in "12 grouped_moe_fp8_gemm_kernel" "cublaslt nvjet|xmma|sm90_"; do
  set -- $who
  timeout 40 ncu --clock-control base --section SpeedOfLight --section ComputeWorkloadAnalysis \
    --section MemoryWorkloadAnalysis --section WarpStateStats --section SchedulerStats --section LaunchStats \
    --section Occupancy -k "regex:$2" --launch-skip 3 --launch-count 1 $C/fp8gemm --step $1 --m 4096 --n 7168 \
    --k 16384 > $OUT/run80_ncu_base_tensor_sections_$1.txt 2>&1
  echo "ncu $1 rc=$? ${SECONDS}s"
done
