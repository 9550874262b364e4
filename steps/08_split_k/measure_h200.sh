#!/usr/bin/env bash
# Step 08 on the H200 in one call: its GPU tests (the epilogue suite with the
# split-K cases, each run twice and compared bit for bit, and the shape
# suite), then steps 06-08 beside cuBLASLt on the split-K shapes and 4096^3,
# and fp8gemm --check printing the slice count the heuristic chose.
#
# Usage: OUT=DIR [PHASES=ncu] bash steps/08_split_k/measure_h200.sh COMMIT [BIN]
#   BIN: a folder holding test_epilogue_gpu, test_steps_gpu, fp8gemm_bench,
#   fp8gemm and the libbenchmark they link (built elsewhere, to save the
#   device's time); without it the script builds them (build-h200).
# The logs go into $OUT/logs.tar.gz (the device returns eight files at most).
set -uo pipefail
commit="$1"
bin="${2:-}"
LOGS="$OUT/logs"
mkdir -p "$LOGS"
trap 'tar -C "$OUT" -czf "$OUT/logs.tar.gz" logs && rm -rf "$LOGS"' EXIT
if [[ -z "$bin" ]]; then
  B=build-h200
  cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DFP8GEMM_GIT_COMMIT="$commit" -DFP8GEMM_HIP_ARCHITECTURES= \
    > "$LOGS/build.log" 2>&1 &&
    cmake --build $B -j 16 --target test_epilogue_gpu test_steps_gpu fp8gemm_bench fp8gemm >> "$LOGS/build.log" 2>&1 ||
    { tail -20 "$LOGS/build.log"; exit 1; }
  tests="$B/tests" benches="$B/bench"
else
  tests="$bin" benches="$bin"
  export LD_LIBRARY_PATH="$bin${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
echo "ready ${SECONDS}s"
export FP8GEMM_REQUIRE_GPU=1
timeout 120 "$tests/test_epilogue_gpu" --gtest_filter='*08_split_k*' > "$LOGS/test_epilogue_gpu_08.log" 2>&1
echo "epilogue + split-K rc=$? ${SECONDS}s: $(tail -n 1 "$LOGS/test_epilogue_gpu_08.log")"
grep -E "^\[  FAILED  \]" "$LOGS/test_epilogue_gpu_08.log" | head -5
timeout 100 "$tests/test_steps_gpu" --gtest_filter='*08_split_k*' > "$LOGS/test_steps_08.log" 2>&1
echo "steps rc=$? ${SECONDS}s: $(tail -n 1 "$LOGS/test_steps_08.log")"
grep -E "^\[  FAILED  \]" "$LOGS/test_steps_08.log" | head -5
timeout 60 "$benches/fp8gemm_bench" --steps=06,07,08 \
  --shapes=64x2112x7168,128x7168x16384,1024x1024x16384,4096x4096x4096 \
  --benchmark_filter='^(cublaslt|06_tma_warp_specialization|07_fused_epilogue|08_split_k)/' \
  --benchmark_out="$OUT/bench_split_k.json" --benchmark_out_format=json > "$LOGS/bench_split_k.log" 2>&1
echo "bench rc=$? ${SECONDS}s"
grep -E "_median" "$LOGS/bench_split_k.log" | awk '{print "  " $1, $2}'
for shape in "64 2112 7168" "1024 1024 16384"; do
  read -r m n k <<< "$shape"
  timeout 30 "$benches/fp8gemm" --step 08 --m "$m" --n "$n" --k "$k" --check >> "$LOGS/checks.log" 2>&1
  echo "fp8gemm --step 08 ${m}x${n}x${k} --check: rc=$?"
done
grep -E "^launch:|check PASS|FAIL" "$LOGS/checks.log" | head -6
# Where the decode shape's time goes: Nsight Compute's speed of light, memory
# and warp-state sections of one launch (PHASES=ncu in the environment).
if [[ " ${PHASES:-} " == *" ncu "* ]]; then
  timeout 120 ncu --clock-control none --section SpeedOfLight --section MemoryWorkloadAnalysis \
    --section WarpStateStats --section LaunchStats --print-details all -k regex:wgmma_fp8_gemm_kernel \
    --launch-skip 3 --launch-count 1 "$benches/fp8gemm_bench" --steps=08 --shapes=64x2112x7168 \
    --benchmark_filter='^08_split_k/' --benchmark_repetitions=1 --benchmark_min_time=0.01s > "$LOGS/ncu_08.txt" 2>&1
  echo "ncu rc=$? ${SECONDS}s"
fi
