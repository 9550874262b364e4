#!/usr/bin/env bash
# One device call, two jobs (binaries built on the development machine, carried in
# build-carry/carry40.tar.xz):
#   1. issue 10 run 23: f744e14 (split-K's gather with one release/acquire atomic), every step built
#      (folder F): the exact suite on every step, the split-K cases of the epilogue suite on steps
#      08-12 (each run twice, same bytes), the grouped suite, and bench/measure_h200.sh's sanitize
#      phase on steps 08 and 12.
#   2. issue 9 run 13: GELU's tanh form through tanh.approx (folder D: f744e14 with
#      run13_gelu_tanh_approx.patch, built in a tree holding step 12 alone) against F's step 12:
#      the accuracy probe run13_gelu_error.cu, D's epilogue and exact suites on step 12, then the
#      epilogue variants with and without bias + GELU, F and D alternating twice.
set -u
cd "$(dirname "$0")/.."
C=/tmp/c40
mkdir -p $C && tar -xJf build-carry/carry40.tar.xz -C $C
for v in F D; do cp $C/libbenchmark.so.1debian $C/$v/; done
nvidia-smi --query-gpu=name,clocks.current.sm,clocks.max.sm,temperature.gpu --format=csv
$C/gelu_error > $OUT/run13_gelu_error.txt 2>&1; echo "gelu_error rc=$?"; cat $OUT/run13_gelu_error.txt
export FP8GEMM_REQUIRE_GPU=1
run() {  # build, program, log, filter
  LD_LIBRARY_PATH=$C/$1 timeout 240 $C/$1/$2 --gtest_filter="$4" > $OUT/$3 2>&1
  echo "$1 $2 rc=$? ${SECONDS}s: $(tail -n 1 $OUT/$3)"; grep -E "^\[  FAILED  \]" $OUT/$3 | head -4
}
run F test_exact_gpu run23_test_exact_gpu_all.log '*'
run F test_epilogue_gpu run23_test_epilogue_gpu_split_k.log '*SplitKTest*08_*:*SplitKTest*09_*:*SplitKTest*10_*:*SplitKTest*11_*:*SplitKTest*12_*'
run F test_grouped_gpu run23_test_grouped_gpu.log '*'
for s in 08_split_k 12_grouped_moe; do
  OUT=$OUT/san_$s bash bench/measure_h200.sh $s f744e14 $C/F sanitize
done
run D test_epilogue_gpu run13_gelu_tanh_approx_test_epilogue_gpu.log '*12_grouped_moe*'
run D test_exact_gpu run13_gelu_tanh_approx_test_exact_gpu.log '*12_grouped_moe*'
for round in 1 2; do
  for v in F D; do
    LD_LIBRARY_PATH=$C/$v timeout 240 $C/$v/fp8gemm_bench --steps=12 --epilogue_variants \
      --shapes=4096x4096x4096,4096x7168x16384,64x2112x7168 \
      --benchmark_filter='^(12_grouped_moe|cublaslt)/.*/(tensor|block)/(none|bias_gelu)/(bf16|e4m3)' --benchmark_repetitions=3 \
      --benchmark_min_time=0.05 --benchmark_out=$OUT/run13_gelu${round}_$v.json --benchmark_out_format=json \
      > $OUT/run13_gelu${round}_$v.log 2>&1
    echo "gelu $v round $round rc=$? ${SECONDS}s"
    grep -E "^12_grouped_moe.*_median" $OUT/run13_gelu${round}_$v.log | awk '{print "  " $1, $2, $3}'
  done
done
nvidia-smi --query-gpu=name,clocks.current.sm,clocks.max.sm,temperature.gpu --format=csv
cd $OUT && tar -czf /tmp/all.tar.gz . && find . -mindepth 1 -delete && mv /tmp/all.tar.gz run13_all.tar.gz; ls -la $OUT
