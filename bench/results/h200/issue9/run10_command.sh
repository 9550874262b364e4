#!/usr/bin/env bash
# Session 9, call 2: d5f36cf (the bias loaded at once; block-scale arrivals as
# before): Nsight Compute on step 12's block-scaled and per-tensor kernels at
# 4096x7168x16384 (where the block scales' 15 % go), then the suites of the
# Hopper steps whose epilogue changed, and the sanitizers.
set -uo pipefail
cd build-carry
tar -xJf bins2.tar.xz
export LD_LIBRARY_PATH=$PWD/lib
export FP8GEMM_REQUIRE_GPU=1
L=$OUT/logs; mkdir -p $L
trap 'tar -C "$OUT" -czf "$OUT/logs.tar.gz" logs && rm -rf "$L"' EXIT
B=new
shape="--m 4096 --n 7168 --k 16384"
for sc in block tensor; do
  timeout 120 ncu --clock-control none --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats \
    --section SchedulerStats --section ComputeWorkloadAnalysis --print-details all -k regex:fp8_gemm_kernel --launch-skip 3 --launch-count 1 \
    $B/fp8gemm --step 12 $shape --scales $sc > $L/ncu_12_$sc.txt 2>&1
  echo "ncu $sc rc=$? ${SECONDS}s: $(grep -E '^ +Duration' $L/ncu_12_$sc.txt | head -1)"
  timeout 150 ncu --clock-control none --section SourceCounters --section WarpStateStats -k regex:fp8_gemm_kernel \
    --launch-skip 3 --launch-count 1 --page source --print-source sass --csv $B/fp8gemm --step 12 $shape --scales $sc 2>&1 \
    | gzip > $OUT/ncu_source_12_$sc.csv.gz
  echo "ncu source $sc rc=$? ${SECONDS}s"
done
F="*07_fused*:*08_split*:*09_persistent*:*10_promotion*:*11_cluster*:*12_grouped*"
for t in test_epilogue_gpu test_exact_gpu test_steps_gpu; do
  timeout 200 $B/$t --gtest_filter="$F" > $L/$t.log 2>&1
  echo "$t rc=$? ${SECONDS}s: $(tail -n 1 $L/$t.log)"; grep -E "^\[  FAILED  \]" $L/$t.log | head -5
done
for S in 12_grouped_moe 07_fused_epilogue; do
  f1="*SplitKTest*${S}*37x1000x1008*:*SplitKTest*${S}_block*255x1000x1008*:*EpilogueTest*${S}_block_bias_gelu_e4m3_2048x2048x2048*"
  f2="*EpilogueTest*${S}_*bias*"
  for tool in memcheck racecheck; do
    timeout 150 compute-sanitizer --tool $tool $B/test_epilogue_gpu --gtest_filter="$f1:$f2" > $L/${tool}_$S.log 2>&1
    echo "$tool $S rc=$? ${SECONDS}s: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $L/${tool}_$S.log | tail -1) $(grep -cE '^\[       OK \]' $L/${tool}_$S.log) passed"
  done
done
