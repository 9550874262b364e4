#!/usr/bin/env bash
# Session 9, call 4: d5f36cf (the final kernels: the bias loaded at once, the
# block-scale loader as in step 11): the SplitKTest cases of steps 10-12 that
# run 10's time limit cut off, then issue 9's epilogue variants on step 12 at
# four shapes beside cuBLASLt and the unfused pipeline.
set -uo pipefail
cd build-carry
tar -xJf bins4.tar.xz
export LD_LIBRARY_PATH=$PWD/lib
export FP8GEMM_REQUIRE_GPU=1
L=$OUT/logs; mkdir -p $L
trap 'tar -C "$OUT" -czf "$OUT/logs.tar.gz" logs && rm -rf "$L"' EXIT
timeout 200 new/test_epilogue_gpu --gtest_filter='*SplitKTest*10_promotion*:*SplitKTest*11_cluster*:*SplitKTest*12_grouped*' \
  > $L/test_epilogue_gpu_splitk_10_12.log 2>&1
echo "splitk rc=$? ${SECONDS}s: $(tail -n 1 $L/test_epilogue_gpu_splitk_10_12.log)"; grep -E "^\[  FAILED  \]" $L/test_epilogue_gpu_splitk_10_12.log | head -5
timeout 200 new/fp8gemm_bench --steps=12 --epilogue_variants \
  --shapes=4096x4096x4096,8192x8192x8192,4096x7168x16384,64x2112x7168 --benchmark_repetitions=3 \
  --benchmark_min_time=0.05 --benchmark_out=$OUT/bench_epilogue_12.json --benchmark_out_format=json > $L/bench_epilogue_12.log 2>&1
echo "bench epilogue rc=$? ${SECONDS}s"
