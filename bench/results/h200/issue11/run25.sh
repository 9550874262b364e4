#!/usr/bin/env bash
# Issue 11 run 25: step 12 with the 128 x 256 tile of fast accumulation (0206a57, vB) against
# 9393b30 (vA). Plans, the grouped suite, sanitizers on the wide kernels, then measure_h200.sh:
# step 12's suites, mutant 155, the A/B (two rounds), the DeepSeek-V3 shapes.
set -u
B=$PWD/build-carry/vB
A=$PWD/build-carry/vA
export FP8GEMM_REQUIRE_GPU=1
L=$OUT/logs
mkdir -p "$L"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu --format=csv > "$L/gpu.txt" 2>&1; cat "$L/gpu.txt"
for s in "4096 4096 4096" "4096 32768 512" "4096 2112 7168" "1665 1056 1000" "1000 2052 520" "4096 4096 4096 --epilogue bias"; do
  read -r m n k rest <<< "$s"
  # shellcheck disable=SC2086
  LD_LIBRARY_PATH=$B timeout 60 "$B/fp8gemm" --step 12 --m "$m" --n "$n" --k "$k" --fast-accum $rest --check 2>&1 |
    grep -E "^launch:|check|^time:|rror" | sed "s/^/${m}x${n}x${k}${rest:+ $rest} fast: /"
done > "$L/checks_fast.log" 2>&1
cut -c1-400 "$L/checks_fast.log"
LD_LIBRARY_PATH=$B timeout 120 "$B/test_grouped_gpu" --gtest_brief=1 > "$L/test_grouped_gpu.log" 2>&1
echo "test_grouped_gpu rc=$? ${SECONDS}s: $(tail -n 1 "$L/test_grouped_gpu.log")"
for tool in memcheck racecheck; do
  LD_LIBRARY_PATH=$B timeout 150 compute-sanitizer --tool $tool "$B/test_exact_gpu" \
    --gtest_filter='*ExactFastAccumulationTest*12_grouped_moe_1665x1056x1000*' > "$L/${tool}_wide_exact.log" 2>&1
  echo "$tool wide exact rc=$? ${SECONDS}s: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$L/${tool}_wide_exact.log" | tail -1) $(grep -cE '^\[       OK \]' "$L/${tool}_wide_exact.log") passed"
  LD_LIBRARY_PATH=$B timeout 150 compute-sanitizer --tool $tool "$B/test_epilogue_gpu" \
    --gtest_filter='*FastAccumulationEpilogueTest*12_grouped_moe_tensor_gelu_erf_e4m3*' > "$L/${tool}_wide_epilogue.log" 2>&1
  echo "$tool wide epilogue rc=$? ${SECONDS}s: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$L/${tool}_wide_epilogue.log" | tail -1) $(grep -cE '^\[       OK \]' "$L/${tool}_wide_epilogue.log") passed"
done
OUT=$OUT AB_BIN=$A MUTANTS=$PWD/build-carry/mutants BENCH_STEPS=12 \
  bash bench/measure_h200.sh 12_grouped_moe 0206a57 "$B" tests mutants ab deepseek
