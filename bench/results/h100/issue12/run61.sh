#!/usr/bin/env bash
# Issue 12 run 61 (prepared in the session of 2026-12-06/07, when no device machine could be started; run in
# the next): six stages for the grouped GEMMs without block scales, up to 256 experts (more take the
# five-stage kernels as before), run61_six_stage_groups.patch on a63c85b (whose kernels are f8e523e's and
# 389dd89's). Called as build-carry/run61.sh with build-carry/carry_i12r61.tar.xz holding: S/
# test_grouped_gpu, fp8gemm_grouped_bench built from a63c85b + the patch; N/ fp8gemm_grouped_bench of a63c85b; M/
# test_grouped_gpu of S with run61_mutant_deep_ring_for_any_experts.patch on top; libbenchmark.so.1debian.
# S's grouped suite (with the patch's 300-expert cases), M's 300-expert cases (must fail, refused by name),
# memcheck and racecheck on the grouped cases, then bench/measure_h200.sh's grouped_ab phase: the grouped
# benchmark of N and S in turn, twice (round 1 beside both baselines, round 2 the step alone).
set -u
cd "$(dirname "$0")/.."
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv
C=/tmp/c61
mkdir -p $C && tar -xJf build-carry/carry_i12r61.tar.xz -C $C
export LD_LIBRARY_PATH=$C FP8GEMM_REQUIRE_GPU=1
L=$OUT/run61
mkdir -p $L
timeout 120 $C/S/test_grouped_gpu > $L/S_test_grouped_gpu.log 2>&1
echo "S test_grouped_gpu rc=$? ${SECONDS}s: $(grep -E 'ran\.' $L/S_test_grouped_gpu.log | tail -n 1) $(tail -n 1 $L/S_test_grouped_gpu.log)"
grep -E "^\[  FAILED|SKIPPED \]" $L/S_test_grouped_gpu.log | head -8
# (step 12's plain kernels compile to the same SASS as the committed ones: the exact suite is not rerun here.)
# The mutant M: every grouped GEMM without block scales on the six-stage ring, whatever its experts: the
# 300-expert cases must fail (the launcher refuses more than 256 there by name).
timeout 60 $C/M/test_grouped_gpu --gtest_filter='*many_experts*' > $L/M_test_grouped_gpu.log 2>&1
echo "M (mutant) many_experts rc=$? ${SECONDS}s: $(grep -E 'ran\.' $L/M_test_grouped_gpu.log | tail -n 1) $(grep -c '^\[  FAILED  \] Every' $L/M_test_grouped_gpu.log) failed"
grep -m2 "experts, got" $L/M_test_grouped_gpu.log | cut -c1-200
filter="*GroupedTest*ragged_block*:*GroupedTest*ragged_per_tensor_bf16*:*GroupedTest*many_experts*:*GroupedUncheckedTest*"
for tool in memcheck racecheck; do
  timeout 100 compute-sanitizer --tool $tool $C/S/test_grouped_gpu --gtest_filter="$filter" > $L/S_${tool}_grouped.log 2>&1
  echo "$tool grouped rc=$? ${SECONDS}s: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $L/S_${tool}_grouped.log | tail -1)" \
    "$(grep -cE '^\[       OK \]' $L/S_${tool}_grouped.log) passed"
done
tar -C $OUT -czf $OUT/run61_logs.tar.gz run61 && rm -rf $L
cp $C/libbenchmark.so.1debian $C/N/ && cp $C/libbenchmark.so.1debian $C/S/
# N and S in turn, twice ($OUT/grouped_ab_{A,B}{1,2}.json; A is N, B is S).
AB_BIN=$C/S bash bench/measure_h200.sh 12_grouped_moe a63c85b $C/N grouped_ab
echo "issue 12 run 61 done ${SECONDS}s"
