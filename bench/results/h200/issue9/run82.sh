#!/usr/bin/env bash
# Issue 9 run 82 (session of 2026-12-07, fifteenth): the 128 x 256 tile's K loop with the next K block's stage
# waited for while the second half's wgmmas run (B: the checkout with run82_hoisted_stage_wait.patch, step 12
# alone; build-carry/carry82.tar.xz of run82_build.sh) against main's (A: run 81's programs with their switch
# unset, build-carry/carry81.tar.xz, and main's fp8gemm_grouped_bench, build-carry/carry82a.tar.xz). Run 81's
# SASS put the stage wait's round trip and an S2UR between a warpgroup's last wgmma of a K block and its
# next first one, where cuBLASLt's kernel only adds. B's suites and sanitizers first, then Nsight Compute at
# the locked base clock on A and B (cycles), then A and B alternating twice: plain, epilogue variants, grouped.
set -u
cd "$(dirname "$0")/.."
A=/tmp/a82
B=/tmp/b82
mkdir -p $A $B
xz -dc build-carry/carry81.tar.xz | tar -xf - -C $A
xz -dc build-carry/carry82a.tar.xz | tar -xf - -C $A
xz -dc build-carry/carry82.tar.xz | tar -xf - -C $B
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu --format=csv
export FP8GEMM_REQUIRE_GPU=1
R=/tmp/r82
L=$R/run82_logs
mkdir -p $L
pack() { tar -C $R -czf $OUT/run82_all.tar.gz . ; }
f12='*12_grouped_moe*'
for t in test_exact_gpu test_epilogue_gpu test_steps_gpu; do
  LD_LIBRARY_PATH=$B timeout 100 $B/$t --gtest_filter="$f12" > $L/B_$t.log 2>&1
  echo "B $t rc=$? ${SECONDS}s: $(tail -n 1 $L/B_$t.log)"
  grep "^\[  FAILED" $L/B_$t.log | head -5
done
LD_LIBRARY_PATH=$B timeout 60 $B/test_grouped_gpu > $L/B_test_grouped_gpu.log 2>&1
echo "B test_grouped_gpu rc=$? ${SECONDS}s: $(tail -n 1 $L/B_test_grouped_gpu.log)"
grep "^\[  FAILED" $L/B_test_grouped_gpu.log | head -5
for tool in memcheck racecheck; do
  LD_LIBRARY_PATH=$B timeout 60 compute-sanitizer --tool $tool $B/test_epilogue_gpu \
    --gtest_filter='*12_grouped_moe_block_none_bf16_2048x2048x2048*:*12_grouped_moe_tensor_none_bf16_2048x2048x2048*' \
    > $L/B_${tool}_epilogue.log 2>&1
  echo "B $tool epilogue rc=$? ${SECONDS}s: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $L/B_${tool}_epilogue.log | tail -1)" \
    "$(grep -cE '^\[       OK \]' $L/B_${tool}_epilogue.log) passed"
  LD_LIBRARY_PATH=$B timeout 60 compute-sanitizer --tool $tool $B/test_grouped_gpu \
    --gtest_filter='*GroupedTest*ragged_block*:*GroupedTest*ragged_per_tensor_bf16*' > $L/B_${tool}_grouped.log 2>&1
  echo "B $tool grouped rc=$? ${SECONDS}s: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $L/B_${tool}_grouped.log | tail -1)" \
    "$(grep -cE '^\[       OK \]' $L/B_${tool}_grouped.log) passed"
done
pack
shape="--m 4096 --n 7168 --k 16384"
for scales in tensor block; do
  for side in A B; do
    if [ $side = A ]; then C=$A; else C=$B; fi
    LD_LIBRARY_PATH=$C timeout 40 ncu --clock-control base --section SpeedOfLight -k "regex:fp8_gemm_kernel" \
      --launch-skip 3 --launch-count 1 $C/fp8gemm --step 12 $shape --scales $scales > $R/run82_ncu_base_${side}_$scales.txt 2>&1
    echo "ncu $side $scales rc=$? ${SECONDS}s: $(grep -E '^ +Elapsed Cycles ' $R/run82_ncu_base_${side}_$scales.txt | sed 's/  */ /g')"
  done
done
pack
shapes=4096x4096x4096,4096x7168x16384,8192x8192x8192,4096x4096x7168,2048x8192x7168
variants='^(12_grouped_moe|cublaslt)/[^/]*/(tensor|block)/(none|bias_gelu)/bf16'
grouped='/(4x8192x4096x7168/contiguous|8x4096x7168x2048/contiguous|1x1024x4096x7168/masked|4x256x4096x7168/masked)'
for round in 1 2; do
  for side in A B; do
    if [ $side = A ]; then C=$A; else C=$B; fi
    LD_LIBRARY_PATH=$C timeout 60 $C/fp8gemm_bench --steps=12 --shapes=$shapes --benchmark_repetitions=3 \
      --benchmark_min_time=0.05 --benchmark_out=$R/run82_plain_$side$round.json --benchmark_out_format=json \
      > $L/plain_$side$round.log 2>&1
    echo "plain $side round $round rc=$? ${SECONDS}s"
    grep -E "^12_grouped_moe/[^_]*_median" $L/plain_$side$round.log | awk '{print "  " $1, $2, $3}'
    LD_LIBRARY_PATH=$C timeout 60 $C/fp8gemm_bench --steps=12 --epilogue_variants --shapes=4096x4096x4096,4096x7168x16384 \
      --benchmark_filter="$variants" --benchmark_repetitions=3 --benchmark_min_time=0.05 \
      --benchmark_out=$R/run82_variants_$side$round.json --benchmark_out_format=json > $L/variants_$side$round.log 2>&1
    echo "variants $side round $round rc=$? ${SECONDS}s"
    grep -E "^12_grouped_moe.*bf16_median" $L/variants_$side$round.log | awk '{print "  " $1, $2, $3}'
    LD_LIBRARY_PATH=$C timeout 60 $C/fp8gemm_grouped_bench --benchmark_filter="$grouped" \
      --benchmark_out=$R/run82_grouped_$side$round.json --benchmark_out_format=json > $L/grouped_$side$round.log 2>&1
    echo "grouped $side round $round rc=$? ${SECONDS}s"
    grep -E "^12_grouped_moe.*_median" $L/grouped_$side$round.log | awk '{print "  " $1, $2, $3}'
    pack
  done
done
echo "issue 9 run 82 done ${SECONDS}s"
