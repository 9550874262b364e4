#!/usr/bin/env bash
# Step 08 on the H200 in one call, in phases (run in the order given):
#   tests     the epilogue suite's step 08 cases (SplitKTest: every case in
#             both reduction forms, each run twice and compared bit for bit)
#             and the shape suite
#   bench     steps 06-08 beside cuBLASLt on the split-K shapes (every M = 64
#             and M = 128 DeepSeek-V3 shape, 1024x1024x16384) and the large
#             squares; step 08 also unsplit and in its workspace form
#             (fp8gemm_bench --split_k_variants)
#   checks    fp8gemm --step 08 --check at two split shapes: the slice count
#             chosen and why, and D against the FP64 reference
#   ncu       Nsight Compute on the decode shape (both reduction forms)
#   sanitize  compute-sanitizer memcheck and racecheck on split cases of both forms
#   mutants   step 08's GPU mutants, from test programs built elsewhere
#             (MUTANTS=DIR holding one folder per mutant)
#
# Usage: OUT=DIR bash steps/08_split_k/measure_h200.sh COMMIT BIN PHASE...
#   BIN: a folder holding test_epilogue_gpu, test_steps_gpu, fp8gemm_bench,
#   fp8gemm and the libbenchmark they link, built from COMMIT elsewhere (the
#   device's time is for measuring); "build" builds them here (build-h200).
# JSON lands in $OUT; the logs in $OUT/logs.tar.gz (the device returns eight
# files at most).
set -uo pipefail
commit="$1"
bin="$2"
shift 2
LOGS="$OUT/logs"
mkdir -p "$LOGS"
trap 'tar -C "$OUT" -czf "$OUT/logs.tar.gz" logs && rm -rf "$LOGS"' EXIT
if [[ "$bin" == build ]]; then
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
decode=64x2112x7168
split_shapes=64x2112x7168,64x24576x1536,64x32768x512,64x7168x16384,64x4096x7168,64x7168x2048
split_shapes+=,128x2112x7168,128x24576x1536,128x32768x512,128x7168x16384,128x4096x7168,128x7168x2048
split_shapes+=,1024x1024x16384,4096x4096x4096,8192x8192x8192

for phase in "$@"; do
  case "$phase" in
    tests)
      timeout 150 "$tests/test_epilogue_gpu" --gtest_filter='*08_split_k*' > "$LOGS/test_epilogue_gpu_08.log" 2>&1
      echo "epilogue + split-K rc=$? ${SECONDS}s: $(tail -n 1 "$LOGS/test_epilogue_gpu_08.log")"
      grep -E "^\[  FAILED  \]" "$LOGS/test_epilogue_gpu_08.log" | head -5
      timeout 100 "$tests/test_steps_gpu" --gtest_filter='*08_split_k*' > "$LOGS/test_steps_08.log" 2>&1
      echo "steps rc=$? ${SECONDS}s: $(tail -n 1 "$LOGS/test_steps_08.log")"
      grep -E "^\[  FAILED  \]" "$LOGS/test_steps_08.log" | head -5
      ;;
    bench)
      timeout 240 "$benches/fp8gemm_bench" --steps=06,07,08 --split_k_variants --shapes=$split_shapes \
        --benchmark_filter='^(cublaslt|06_tma_warp_specialization|07_fused_epilogue|08_split_k)' \
        --benchmark_out="$OUT/bench_split_k.json" --benchmark_out_format=json > "$LOGS/bench_split_k.log" 2>&1
      echo "bench rc=$? ${SECONDS}s"
      grep -E "_median" "$LOGS/bench_split_k.log" | grep -E "^(cublaslt|08_split_k)" | awk '{print "  " $1, $2}'
      ;;
    checks)
      for shape in "64 2112 7168" "1024 1024 16384"; do
        read -r m n k <<< "$shape"
        timeout 30 "$benches/fp8gemm" --step 08 --m "$m" --n "$n" --k "$k" --check >> "$LOGS/checks.log" 2>&1
        echo "fp8gemm --step 08 ${m}x${n}x${k} --check: rc=$?"
      done
      grep -E "^launch:|check PASS|FAIL" "$LOGS/checks.log" | head -6
      ;;
    ncu)
      # Where the decode shape's time goes: speed of light, memory and warp
      # states of one launch in each form.
      for form in "" _workspace; do
        timeout 100 ncu --clock-control none --section SpeedOfLight --section MemoryWorkloadAnalysis \
          --section WarpStateStats --section LaunchStats --section Occupancy --print-details all \
          -k regex:wgmma_fp8_gemm_kernel --launch-skip 3 --launch-count 1 "$benches/fp8gemm_bench" --steps=08 \
          --split_k_variants --shapes=$decode --benchmark_filter="^08_split_k${form}/" --benchmark_repetitions=1 \
          --benchmark_min_time=0.01 > "$LOGS/ncu_08${form}.txt" 2>&1
        echo "ncu${form} rc=$? ${SECONDS}s: $(grep -E '^ +Duration' "$LOGS/ncu_08${form}.txt" | head -1)"
      done
      ;;
    sanitize)
      local_filter='*SplitKTest*08_split_k*255x1000x1008*:*SplitKTest*08_split_k*37x1000x1008*'
      local_filter+=':*SplitKTest*08_split_k*64x2112x7168*'
      timeout 150 compute-sanitizer --tool memcheck "$tests/test_epilogue_gpu" --gtest_filter="$local_filter" \
        > "$LOGS/memcheck_08.log" 2>&1
      echo "memcheck rc=$? ${SECONDS}s: $(grep 'ERROR SUMMARY' "$LOGS/memcheck_08.log" | tail -1)"
      race_filter='*SplitKTest*08_split_k_block*255x1000x1008*:*SplitKTest*08_split_k_tensor*255x1000x1008*'
      race_filter+=':*SplitKTest*08_split_k_block*37x1000x1008*:*SplitKTest*08_split_k_tensor*37x1000x1008*'
      timeout 200 compute-sanitizer --tool racecheck "$tests/test_epilogue_gpu" --gtest_filter="$race_filter" \
        > "$LOGS/racecheck_08.log" 2>&1
      echo "racecheck rc=$? ${SECONDS}s: $(grep -E 'RACECHECK SUMMARY' "$LOGS/racecheck_08.log" | tail -1)," \
        "$(tail -n 1 "$LOGS/racecheck_08.log")"
      ;;
    mutants)
      # Mutants built elsewhere with their patch applied (tests/mutants/run_prebuilt.sh).
      tests/mutants/run_prebuilt.sh "${MUTANTS:?MUTANTS=DIR of prebuilt mutants}" "$LOGS"
      ;;
    *) echo "unknown phase $phase"; exit 2 ;;
  esac
done
