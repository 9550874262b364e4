#!/usr/bin/env bash
# A/B: bin (4e6bc83, step 12 as committed) against vA (accumulator sets not zeroed per unit).
set -u
export LD_LIBRARY_PATH=$PWD/bin
cp bin/libbenchmark.so.1debian vA/ 2>/dev/null
run() {  # run BUILD ARGS...
  local b=$1; shift
  echo "$b $*: $(LD_LIBRARY_PATH=$PWD/$b timeout 60 $PWD/$b/fp8gemm --step 12 "$@" 2>&1 | grep -m1 -E '^time:')"
}
cases=("--m 4096 --n 32768 --k 512" "--m 4096 --n 32768 --k 512 --fast-accum" "--m 4096 --n 4096 --k 4096"
       "--m 8192 --n 8192 --k 8192" "--m 4096 --n 7168 --k 16384" "--m 4096 --n 7168 --k 2048"
       "--m 128 --n 7168 --k 2048" "--m 64 --n 2112 --k 7168" "--m 4096 --n 7168 --k 16384 --scales block"
       "--m 4096 --n 4096 --k 4096 --epilogue bias_gelu")
for round in 1 2; do
  for c in "${cases[@]}"; do
    # shellcheck disable=SC2086
    run bin $c; run vA $c
  done
done
exit 0
echo "== tests of vA (step 12)"
cd vA
for t in test_exact_gpu test_steps_gpu test_epilogue_gpu; do
  FP8GEMM_REQUIRE_GPU=1 timeout 300 ./$t --gtest_filter='*12_grouped_moe*' --gtest_brief=1 > $OUT/vA_$t.log 2>&1
  echo "$t rc=$? $(grep -E '^\[  (PASSED|FAILED)' $OUT/vA_$t.log | tr '\n' ' ')"
done
