#!/usr/bin/env bash
# A/B: bin (4e6bc83, step 12 as committed: 5 stages everywhere) against vB (6 stages for plain GEMMs
# without block scales), alternating; then vB's step 12 suites.
set -u
cp bin/libbenchmark.so.1debian vB/ 2>/dev/null
run() {  # run BUILD ARGS...
  local b=$1; shift
  echo "$b $*: $(LD_LIBRARY_PATH=$PWD/$b timeout 60 $PWD/$b/fp8gemm --step 12 "$@" 2>&1 | grep -m1 -E '^time:')"
}
cases=("--m 4096 --n 4096 --k 4096" "--m 8192 --n 8192 --k 8192" "--m 4096 --n 7168 --k 16384"
       "--m 4096 --n 4096 --k 7168" "--m 4096 --n 32768 --k 512" "--m 4096 --n 4096 --k 4096 --fast-accum"
       "--m 8192 --n 8192 --k 8192 --fast-accum" "--m 128 --n 7168 --k 16384" "--m 1024 --n 1024 --k 16384"
       "--m 4096 --n 4096 --k 4096 --epilogue bias_gelu" "--m 4096 --n 7168 --k 16384 --scales block"
       "--m 4096 --n 7168 --k 16384 --scales outer")
for round in 1 2; do
  for c in "${cases[@]}"; do
    # shellcheck disable=SC2086
    run bin $c; run vB $c
  done
done
echo "== vB: fp8gemm --check at 4096^3 (the plan)"; LD_LIBRARY_PATH=$PWD/vB vB/fp8gemm --step 12 --m 4096 --n 4096 --k 4096 --check 2>&1 | grep -E '^launch:|^check'
echo "== tests of vB (step 12)"
cd vB
for t in test_exact_gpu test_steps_gpu test_epilogue_gpu test_grouped_gpu; do
  f='*12_grouped_moe*'; [ $t = test_grouped_gpu ] && f='*'
  LD_LIBRARY_PATH=$PWD FP8GEMM_REQUIRE_GPU=1 timeout 300 ./$t --gtest_filter="$f" --gtest_brief=1 > $OUT/vB_$t.log 2>&1
  echo "$t rc=$? $(grep -E '^\[  (PASSED|FAILED)' $OUT/vB_$t.log | tr '\n' ' ')"
done
