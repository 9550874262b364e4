#!/usr/bin/env bash
# Step 07 on the H200, in one call of under ten minutes: its GPU tests, the
# sanitizers, its mutants, and its timing beside step 06, cuBLASLt and the
# unfused baseline (plain, and the epilogue variants at 4096^3).
#
# Usage: OUT=DIR bash steps/07_fused_epilogue/measure_h200.sh COMMIT
set -uo pipefail
B=build-h200
commit="${1:-unknown}"
cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DFP8GEMM_GIT_COMMIT="$commit" -DFP8GEMM_HIP_ARCHITECTURES= \
  > "$OUT/build.log" 2>&1 &&
  cmake --build $B -j 16 --target test_epilogue_gpu test_steps_gpu test_example_layer_gpu fp8gemm_bench fp8gemm >> "$OUT/build.log" 2>&1 ||
  { tail -20 "$OUT/build.log"; exit 1; }
echo "build ${SECONDS}s"
export FP8GEMM_REQUIRE_GPU=1
timeout 60 $B/tests/test_epilogue_gpu > "$OUT/test_epilogue_gpu.log" 2>&1
echo "epilogue rc=$? ${SECONDS}s: $(tail -n 1 "$OUT/test_epilogue_gpu.log")"
timeout 60 $B/tests/test_example_layer_gpu > "$OUT/test_example_layer_gpu.log" 2>&1
echo "example rc=$? ${SECONDS}s: $(tail -n 1 "$OUT/test_example_layer_gpu.log")"
timeout 120 $B/tests/test_steps_gpu --gtest_filter='*07_fused_epilogue*' > "$OUT/test_steps_07.log" 2>&1
echo "steps rc=$? ${SECONDS}s: $(tail -n 1 "$OUT/test_steps_07.log")"
timeout 60 compute-sanitizer --tool memcheck $B/tests/test_epilogue_gpu --gtest_filter='*255x1000x1008*' \
  > "$OUT/memcheck.log" 2>&1
echo "memcheck rc=$? ${SECONDS}s: $(grep 'ERROR SUMMARY' "$OUT/memcheck.log")"
timeout 90 compute-sanitizer --tool racecheck $B/tests/test_epilogue_gpu \
  --gtest_filter='*block_bias_gelu_e4m3_256x512x1024_to_e4m3' > "$OUT/racecheck.log" 2>&1
echo "racecheck rc=$? ${SECONDS}s: $(grep -E 'RACECHECK SUMMARY|ERROR SUMMARY' "$OUT/racecheck.log")"
timeout 40 $B/bench/fp8gemm_bench --steps=06,07 --shapes=4096x4096x4096,64x2112x7168 \
  --benchmark_filter='^(cublaslt|06_tma_warp_specialization|07_fused_epilogue)/' \
  --benchmark_out="$OUT/bench_06_07.json" --benchmark_out_format=json > "$OUT/bench_06_07.log" 2>&1
echo "bench rc=$? ${SECONDS}s"
grep -E "_median" "$OUT/bench_06_07.log" | awk '{print $1, $2}'
for check in "cublaslt --scales block --epilogue bias_gelu --out e4m3" "unfused --scales block --epilogue bias_gelu --out e4m3" \
  "07 --scales block --epilogue bias_gelu --out e4m3"; do
  timeout 30 $B/bench/fp8gemm --step $check --m 4096 --n 4096 --k 4096 --check >> "$OUT/checks.log" 2>&1
  echo "fp8gemm --step $check: rc=$?"
done
timeout 100 $B/bench/fp8gemm_bench --epilogue_variants --steps=07 --shapes=4096x4096x4096 \
  --benchmark_filter='^(cublaslt|07_fused_epilogue|unfused)/' \
  --benchmark_out="$OUT/bench_07_variants.json" --benchmark_out_format=json > "$OUT/bench_07_variants.log" 2>&1
echo "variants rc=$? ${SECONDS}s"
FP8GEMM_GIT_COMMIT="$commit" timeout 200 bash tests/mutants/run_mutants.sh --part gpu --only '^1(3[89]|4[0-2])' \
  --shards 5 --build-dir build-mutants > "$OUT/mutants_07.log" 2>&1
echo "mutants rc=$? ${SECONDS}s: $(tail -n 1 "$OUT/mutants_07.log")"
