#!/usr/bin/env bash
# Step 07 on the H200, in calls of under ten minutes each. Phases, in the
# order given:
#   tests     its GPU tests, the example's, memcheck and racecheck
#   bench     steps 06 and 07 beside cuBLASLt on the ladder's shapes, and the
#             epilogue variants (with the unfused baseline) on SHAPES
#   ncu       Nsight Compute's warp stall reasons and hottest instructions of
#             step 07 at 4096^3, with no epilogue and with bias + GELU
#   store     the same plain benchmark and the variants at 4096^3 with the step
#             rebuilt with kStoreThroughTma = false: the TMA store against
#             direct stores (run after bench, same build)
#   checks    fp8gemm --check of cuBLASLt's, the unfused baseline's and step
#             07's block-scaled bias + GELU to e4m3 against FP64
#   mutants   step 07's GPU mutants
# JSON files land in $OUT; the logs in $OUT/logs.tar.gz (the device returns
# eight files at most).
#
# Usage: OUT=DIR bash steps/07_fused_epilogue/measure_h200.sh COMMIT PHASE...
#   SHAPES (environment) the variants' shapes, default 4096x4096x4096
set -uo pipefail
B=build-h200
commit="$1"
shift
LOGS="$OUT/logs"
mkdir -p "$LOGS"
trap 'tar -C "$OUT" -czf "$OUT/logs.tar.gz" logs && rm -rf "$LOGS"' EXIT
ladder="4096x4096x4096,8192x8192x8192,4096x7168x16384,64x2112x7168"
variant_shapes="${SHAPES:-4096x4096x4096}"

cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DFP8GEMM_GIT_COMMIT="$commit" -DFP8GEMM_HIP_ARCHITECTURES= \
  > "$LOGS/build.log" 2>&1 &&
  cmake --build $B -j 16 --target test_epilogue_gpu test_steps_gpu test_example_layer_gpu fp8gemm_bench fp8gemm \
    >> "$LOGS/build.log" 2>&1 ||
  { tail -20 "$LOGS/build.log"; exit 1; }
echo "build ${SECONDS}s"
export FP8GEMM_REQUIRE_GPU=1

bench() {  # bench NAME ARGS...: fp8gemm_bench into $OUT/NAME.json, its medians printed
  local name="$1"
  shift
  timeout 200 $B/bench/fp8gemm_bench "$@" --benchmark_out="$OUT/$name.json" --benchmark_out_format=json \
    > "$LOGS/$name.log" 2>&1
  echo "$name rc=$? ${SECONDS}s"
  grep -E "_median" "$LOGS/$name.log" | awk '{print "  " $1, $2}'
}

for phase in "$@"; do
  case "$phase" in
    tests)
      timeout 60 $B/tests/test_epilogue_gpu > "$LOGS/test_epilogue_gpu.log" 2>&1
      echo "epilogue rc=$? ${SECONDS}s: $(tail -n 1 "$LOGS/test_epilogue_gpu.log")"
      timeout 60 $B/tests/test_example_layer_gpu > "$LOGS/test_example_layer_gpu.log" 2>&1
      echo "example rc=$? ${SECONDS}s: $(tail -n 1 "$LOGS/test_example_layer_gpu.log")"
      timeout 120 $B/tests/test_steps_gpu --gtest_filter='*07_fused_epilogue*' > "$LOGS/test_steps_07.log" 2>&1
      echo "steps rc=$? ${SECONDS}s: $(tail -n 1 "$LOGS/test_steps_07.log")"
      timeout 90 compute-sanitizer --tool memcheck $B/tests/test_epilogue_gpu --gtest_filter='*255x1000x1008*' \
        > "$LOGS/memcheck.log" 2>&1
      echo "memcheck rc=$? ${SECONDS}s: $(grep 'ERROR SUMMARY' "$LOGS/memcheck.log")"
      timeout 120 compute-sanitizer --tool racecheck $B/tests/test_epilogue_gpu \
        --gtest_filter='*block_bias_gelu_e4m3_255x1000x1008_to_e4m3:*outer_none_fp32_256x512x1024_fp32' \
        > "$LOGS/racecheck.log" 2>&1
      echo "racecheck rc=$? ${SECONDS}s: $(grep -E 'RACECHECK SUMMARY' "$LOGS/racecheck.log"), $(tail -n 1 "$LOGS/racecheck.log")"
      ;;
    bench)
      bench bench_06_07 --steps=06,07 --shapes=$ladder \
        --benchmark_filter='^(cublaslt|06_tma_warp_specialization|07_fused_epilogue)/'
      bench bench_07_variants --epilogue_variants --steps=07 --shapes="$variant_shapes" \
        --benchmark_filter='^(cublaslt|07_fused_epilogue|unfused)/'
      ;;
    ncu)
      for variant in tensor/none/bf16 tensor/bias_gelu/bf16; do
        echo "== $variant" >> "$LOGS/ncu.txt"
        timeout 150 ncu --clock-control none --section LaunchStats --section WarpStateStats --section SourceCounters \
          -k regex:wgmma_fp8_gemm_kernel --launch-skip 3 --launch-count 1 $B/bench/fp8gemm_bench --epilogue_variants \
          --steps=07 --shapes=4096x4096x4096 --benchmark_filter="^07_fused_epilogue/4096x4096x4096/$variant" \
          --benchmark_repetitions=1 --benchmark_min_time=0.01s >> "$LOGS/ncu.txt" 2>&1
        echo "ncu $variant rc=$? ${SECONDS}s"
      done
      ;;
    store)
      sed -i 's/^constexpr bool kStoreThroughTma = true;/constexpr bool kStoreThroughTma = false;/' \
        steps/07_fused_epilogue/fused_epilogue_sm90a.cuh
      grep -q '^constexpr bool kStoreThroughTma = false;' steps/07_fused_epilogue/fused_epilogue_sm90a.cuh ||
        { echo "store: kStoreThroughTma not found"; exit 1; }
      cmake -S . -B $B -DFP8GEMM_GIT_COMMIT="$commit+kStoreThroughTma=false" >> "$LOGS/build.log" 2>&1 &&
        cmake --build $B -j 16 --target fp8gemm_bench >> "$LOGS/build.log" 2>&1 || { tail -20 "$LOGS/build.log"; exit 1; }
      echo "direct-store build ${SECONDS}s"
      bench bench_07_direct_store --steps=07 --shapes=$ladder --benchmark_filter='^(cublaslt|07_fused_epilogue)/'
      bench bench_07_variants_direct_store --epilogue_variants --steps=07 --shapes=4096x4096x4096 \
        --benchmark_filter='^(cublaslt|07_fused_epilogue)/'
      ;;
    checks)
      for check in "cublaslt --scales block --epilogue bias_gelu --out e4m3" \
        "cublaslt --scales block --epilogue bias_gelu" "cublaslt --scales tensor --epilogue bias_gelu --out e4m3" \
        "cublaslt --scales outer --epilogue bias_gelu --out e4m3" "07 --scales outer --epilogue bias_gelu --out e4m3" \
        "unfused --scales block --epilogue bias_gelu --out e4m3" "07 --scales block --epilogue bias_gelu --out e4m3"; do
        timeout 60 $B/bench/fp8gemm --step $check --m 4096 --n 4096 --k 4096 --check >> "$LOGS/checks.log" 2>&1
        echo "fp8gemm --step $check: rc=$?"
      done
      ;;
    mutants)
      FP8GEMM_GIT_COMMIT="$commit" timeout 500 bash tests/mutants/run_mutants.sh --part gpu --only '^1(3[89]|4[0-5])' \
        --shards 5 --build-dir build-mutants > "$LOGS/mutants_07.log" 2>&1
      echo "mutants rc=$? ${SECONDS}s: $(tail -n 3 "$LOGS/mutants_07.log")"
      ;;
    *) echo "unknown phase $phase"; exit 2 ;;
  esac
done
