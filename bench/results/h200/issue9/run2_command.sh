set -uo pipefail
B=build-h200
cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DFP8GEMM_GIT_COMMIT="$1" -DFP8GEMM_HIP_ARCHITECTURES= > $OUT/build.log 2>&1 && cmake --build $B -j 16 --target test_epilogue_gpu fp8gemm_bench >> $OUT/build.log 2>&1 || { tail -20 $OUT/build.log; exit 1; }
echo "build ${SECONDS}s"
FP8GEMM_REQUIRE_GPU=1 timeout 100 $B/tests/test_epilogue_gpu > $OUT/test_epilogue_gpu.log 2>&1; echo "epilogue rc=$? ${SECONDS}s"; tail -2 $OUT/test_epilogue_gpu.log
timeout 60 $B/bench/fp8gemm_bench --steps=06,07 --shapes=4096x4096x4096,64x2112x7168 --benchmark_out=$OUT/bench_06_07.json --benchmark_out_format=json > $OUT/bench_06_07.log 2>&1; echo "bench rc=$? ${SECONDS}s"
grep -E "_median" $OUT/bench_06_07.log | awk '{print $1, $2, $3}'
