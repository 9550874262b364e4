#!/usr/bin/env bash
# step 07 on the H200: its GPU tests, sanitizer, and a first benchmark
set -uo pipefail
out="$OUT"; commit="$1"; B=build-h200
t0=$SECONDS
cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DFP8GEMM_GIT_COMMIT="$commit" -DFP8GEMM_HIP_ARCHITECTURES= > $out/build.log 2>&1 &&
  cmake --build $B -j 16 --target test_epilogue_gpu test_steps_gpu test_exact_gpu fp8gemm_bench >> $out/build.log 2>&1 || { echo BUILD FAILED; tail -30 $out/build.log; exit 1; }
echo "build ${SECONDS}s"
export FP8GEMM_REQUIRE_GPU=1
timeout 150 $B/tests/test_epilogue_gpu > $out/test_epilogue_gpu.log 2>&1; echo "epilogue rc=$? ${SECONDS}s"; tail -3 $out/test_epilogue_gpu.log
timeout 100 $B/tests/test_exact_gpu --gtest_filter='*07_fused*' > $out/test_exact_07.log 2>&1; echo "exact rc=$? ${SECONDS}s"; tail -2 $out/test_exact_07.log
timeout 200 $B/tests/test_steps_gpu --gtest_filter='*07_fused*' > $out/test_steps_07.log 2>&1; echo "steps rc=$? ${SECONDS}s"; tail -2 $out/test_steps_07.log
timeout 60 compute-sanitizer --tool memcheck $B/tests/test_epilogue_gpu --gtest_filter='*255x1000x1008*' > $out/memcheck.log 2>&1; echo "memcheck rc=$? ${SECONDS}s"; tail -2 $out/memcheck.log
timeout 60 compute-sanitizer --tool racecheck $B/tests/test_epilogue_gpu --gtest_filter='*block_bias_gelu_e4m3_256x512x1024' > $out/racecheck.log 2>&1; echo "racecheck rc=$? ${SECONDS}s"; tail -2 $out/racecheck.log
timeout 120 $B/bench/fp8gemm_bench --epilogue_variants --steps=07 --benchmark_filter='^(cublaslt|07_fused_epilogue|unfused)/' --benchmark_out=$out/bench_07_variants.json --benchmark_out_format=json > $out/bench_07_variants.log 2>&1; echo "variants rc=$? ${SECONDS}s"
grep -iE "^[a-z0-9_]+/.*(ms|skipped|ERROR)" $out/bench_07_variants.log | head -5
