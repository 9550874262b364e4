#!/usr/bin/env bash
# Issue 11 run 27: step 12's wide tile in clusters along M that share B's tile (vD) against the
# wide tile of 0206a57, whose clusters share A (vB): plans, sanitizers on the wide kernel, mutant
# 155, step 12's suites on vD, the A/B in two rounds, Nsight Compute on vD's wide kernel, the
# DeepSeek-V3 shapes on vD.
set -u
B=$PWD/build-carry/vB
D=$PWD/build-carry/vD
export FP8GEMM_REQUIRE_GPU=1
L=$OUT/logs
mkdir -p "$L"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu --format=csv
for s in "4096 4096 4096" "1793 1056 1000" "1000 2052 520" "4096 32768 512"; do
  read -r m n k <<< "$s"
  LD_LIBRARY_PATH=$D timeout 60 "$D/fp8gemm" --step 12 --m "$m" --n "$n" --k "$k" --fast-accum --check 2>&1 |
    grep -E "^launch:|check PASS|FAIL|^time:" | cut -c1-330
done > "$L/checks_fast.log" 2>&1
cat "$L/checks_fast.log"
for tool in memcheck racecheck; do
  LD_LIBRARY_PATH=$D timeout 150 compute-sanitizer --tool $tool "$D/test_exact_gpu" \
    --gtest_filter='*ExactFastAccumulationTest*12_grouped_moe_1793x1056x1000*' > "$L/${tool}_wide_exact.log" 2>&1
  echo "$tool wide exact rc=$? ${SECONDS}s: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$L/${tool}_wide_exact.log" | tail -1) $(grep -cE '^\[       OK \]' "$L/${tool}_wide_exact.log") passed"
done
LD_LIBRARY_PATH=$D timeout 120 ncu --clock-control none --section SpeedOfLight --section MemoryWorkloadAnalysis \
  --section WarpStateStats --print-details all -k regex:'fp8_gemm_kernel' --launch-skip 3 --launch-count 1 \
  "$D/fp8gemm" --step 12 --fast-accum > "$L/ncu_D12fastaccum.txt" 2>&1
echo "ncu rc=$? ${SECONDS}s: $(grep -E '^ +(Duration|L2 Cache Throughput|Compute \(SM\) Throughput)' "$L/ncu_D12fastaccum.txt" | tr -s ' ' | tr '\n' ';')"
OUT=$OUT AB_BIN=$B MUTANTS=$PWD/build-carry/mutants BENCH_STEPS=12 \
  bash bench/measure_h200.sh 12_grouped_moe shareb "$D" mutants tests ab deepseek
