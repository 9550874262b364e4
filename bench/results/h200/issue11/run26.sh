#!/usr/bin/env bash
# Issue 11 run 26: step 12's wide tile with four stages and D stored in two halves (vC, a patch of
# 4f96064) against three stages (vB, 0206a57): step 12's suites on vC, the A/B in two rounds,
# Nsight Compute on the wide kernel and cuBLASLt's fast kernel at 4096^3.
set -u
B=$PWD/build-carry/vB
C=$PWD/build-carry/vC
export FP8GEMM_REQUIRE_GPU=1
L=$OUT/logs
mkdir -p "$L"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu --format=csv
for s in "4096 4096 4096" "1665 1056 1000"; do
  read -r m n k <<< "$s"
  LD_LIBRARY_PATH=$C timeout 60 "$C/fp8gemm" --step 12 --m "$m" --n "$n" --k "$k" --fast-accum --check 2>&1 |
    grep -E "^launch:|check PASS|FAIL|^time:" | cut -c1-200
done
for b in C B; do
  d=$C; [ $b = B ] && d=$B
  for run in "12 --fast-accum" "cublaslt_fast"; do
    name=$(echo "$b $run" | tr -d ' -')
    # shellcheck disable=SC2086
    LD_LIBRARY_PATH=$d timeout 120 ncu --clock-control none --section SpeedOfLight --section ComputeWorkloadAnalysis \
      --section MemoryWorkloadAnalysis --section WarpStateStats --print-details all -k regex:'fp8_gemm_kernel|nvjet' \
      --launch-skip 3 --launch-count 1 "$d/fp8gemm" --step $run > "$L/ncu_$name.txt" 2>&1
    echo "ncu $b $run rc=$? ${SECONDS}s: $(grep -E '^ +Duration' "$L/ncu_$name.txt" | head -1)"
    [ $b = B ] && [ "$run" = cublaslt_fast ] && continue
  done
  [ $b = B ] && break
done
OUT=$OUT AB_BIN=$B BENCH_STEPS=12 bash bench/measure_h200.sh 12_grouped_moe exp4 "$C" tests ab
