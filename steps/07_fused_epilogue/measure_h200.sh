# Step 07 after the GELU-call fix: its epilogue tests, the plain timing beside
# step 06 and cuBLASLt, and the variants at 4096^3 (the first run on a GPU of
# the benchmark's cuBLASLt epilogues and the unfused baseline).
set -uo pipefail
B=build-h200
cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DFP8GEMM_GIT_COMMIT="$1" -DFP8GEMM_HIP_ARCHITECTURES= > $OUT/build.log 2>&1 &&
  cmake --build $B -j 16 --target test_epilogue_gpu fp8gemm_bench >> $OUT/build.log 2>&1 || { tail -20 $OUT/build.log; exit 1; }
echo "build ${SECONDS}s"
FP8GEMM_REQUIRE_GPU=1 timeout 60 $B/tests/test_epilogue_gpu > $OUT/test_epilogue_gpu.log 2>&1; echo "epilogue rc=$? ${SECONDS}s"; tail -1 $OUT/test_epilogue_gpu.log
timeout 40 $B/bench/fp8gemm_bench --steps=06,07 --shapes=4096x4096x4096,64x2112x7168 --benchmark_filter='^(cublaslt|06_tma_warp_specialization|07_fused_epilogue)/' --benchmark_out=$OUT/bench_06_07.json --benchmark_out_format=json > $OUT/bench_06_07.log 2>&1; echo "bench rc=$? ${SECONDS}s"
grep -E "_median" $OUT/bench_06_07.log | awk '{print $1, $2}'
timeout 60 $B/bench/fp8gemm_bench --epilogue_variants --steps=07 --shapes=4096x4096x4096 --benchmark_filter='^(cublaslt|07_fused_epilogue|unfused)/' --benchmark_out=$OUT/bench_07_variants.json --benchmark_out_format=json > $OUT/bench_07_variants.log 2>&1; echo "variants rc=$? ${SECONDS}s"
grep -E "_median|ERROR|not supported" $OUT/bench_07_variants.log | awk '{print $1, $2, $NF}' | head -30
