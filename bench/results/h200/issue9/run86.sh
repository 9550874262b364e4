#!/usr/bin/env bash
# Issue 9 run 86: C2's wait for the next stage under the second half, kept where a cluster has more than one
# unit, and the earlier order (the wait after this stage's release and adds) in one wave (E,
# run86_one_wave_late_wait.patch). Two builds of step 12 alone, from run86_build.sh:
#   A  main (C2): build-carry/carry86a.tar.xz;   E  main with the patch: build-carry/carry86e.tar.xz.
# perf: A and E in turn, twice, each beside its own cuBLASLt: plain shapes (1024 x 4096 x 7168 is one wave
# of wide tiles), the epilogue variants, the grouped shapes (every masked one, two contiguous).
# tests: E's exact, epilogue, steps and grouped suites, memcheck and racecheck.
# Usage: bash build-carry/run86.sh [perf] [tests]   (default both; about 300 s on an H100)
set -u
cd "$(dirname "$0")/.."
R=/tmp/r86
L=$R/logs
mkdir -p $L /tmp/a86 /tmp/e86
[ -e /tmp/a86/fp8gemm ] || xz -dc build-carry/carry86a.tar.xz | tar -xf - -C /tmp/a86
[ -e /tmp/e86/fp8gemm ] || xz -dc build-carry/carry86e.tar.xz | tar -xf - -C /tmp/e86
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu --format=csv
export FP8GEMM_REQUIRE_GPU=1
pack() { tar -C $R -czf $OUT/run86_all.tar.gz . ; }
shapes=4096x4096x4096,4096x7168x16384,8192x8192x8192,4096x4096x7168,1024x4096x7168,2048x8192x7168
variants='^(12_grouped_moe|cublaslt)/[^/]*/(tensor|block)/(none|bias_gelu)/bf16'
grouped='/(4x8192x4096x7168/contiguous|8x4096x7168x2048/contiguous|[0-9]+x[0-9]+x[0-9]+x[0-9]+/masked)'
for phase in ${*:-perf tests}; do
  case $phase in
  perf)
    for round in 1 2; do
      for side in A E; do
        C=/tmp/$(echo $side | tr AE ae)86
        LD_LIBRARY_PATH=$C timeout 60 $C/fp8gemm_bench --steps=12 --shapes=$shapes --benchmark_repetitions=3 \
          --benchmark_min_time=0.05 --benchmark_out=$R/run86_plain_$side$round.json --benchmark_out_format=json \
          > $L/run86_plain_$side$round.log 2>&1
        echo "plain $side round $round rc=$? ${SECONDS}s"
        grep -E "^12_grouped_moe/[^_]*_median" $L/run86_plain_$side$round.log | awk '{print "  " $1, $2, $3}'
        LD_LIBRARY_PATH=$C timeout 60 $C/fp8gemm_bench --steps=12 --epilogue_variants \
          --shapes=4096x4096x4096,4096x7168x16384 --benchmark_filter="$variants" --benchmark_repetitions=3 \
          --benchmark_min_time=0.05 --benchmark_out=$R/run86_variants_$side$round.json --benchmark_out_format=json \
          > $L/run86_variants_$side$round.log 2>&1
        echo "variants $side round $round rc=$? ${SECONDS}s"
        grep -E "^12_grouped_moe.*bf16_median" $L/run86_variants_$side$round.log | awk '{print "  " $1, $2, $3}'
        LD_LIBRARY_PATH=$C timeout 90 $C/fp8gemm_grouped_bench --benchmark_filter="$grouped" \
          --benchmark_out=$R/run86_grouped_$side$round.json --benchmark_out_format=json > $L/run86_grouped_$side$round.log 2>&1
        echo "grouped $side round $round rc=$? ${SECONDS}s"
        grep -E "^12_grouped_moe.*_median" $L/run86_grouped_$side$round.log | awk '{print "  " $1, $2, $3}'
        pack
      done
    done
    ;;
  tests)
    C=/tmp/e86
    # The new exact case's plan: two rounds of 128 x 256 tiles, or the case does not test C2's order.
    LD_LIBRARY_PATH=$C timeout 30 $C/fp8gemm --step 12 --m 8192 --n 1024 --k 256 --check > $L/E_plan_8192x1024x256.log 2>&1
    echo "E fp8gemm --check 8192x1024x256 rc=$?: $(grep -E '^launch:' $L/E_plan_8192x1024x256.log | cut -c1-160)"
    for t in test_exact_gpu test_epilogue_gpu test_steps_gpu; do
      LD_LIBRARY_PATH=$C timeout 100 $C/$t --gtest_filter='*12_grouped_moe*' > $L/E_$t.log 2>&1
      echo "E $t rc=$? ${SECONDS}s: $(tail -n 1 $L/E_$t.log)"
      grep "^\[  FAILED" $L/E_$t.log | head -5
    done
    LD_LIBRARY_PATH=$C timeout 60 $C/test_grouped_gpu > $L/E_test_grouped_gpu.log 2>&1
    echo "E test_grouped_gpu rc=$? ${SECONDS}s: $(tail -n 1 $L/E_test_grouped_gpu.log)"
    for tool in memcheck racecheck; do
      LD_LIBRARY_PATH=$C timeout 60 compute-sanitizer --tool $tool $C/test_exact_gpu \
        --gtest_filter='*12_grouped_moe_4097x1008x1000*:*12_grouped_moe_8192x1024x256*' > $L/E_${tool}_exact.log 2>&1
      echo "E $tool exact rc=$? ${SECONDS}s: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $L/E_${tool}_exact.log | tail -1)"
      LD_LIBRARY_PATH=$C timeout 60 compute-sanitizer --tool $tool $C/test_grouped_gpu \
        --gtest_filter='*GroupedTest*ragged_block*:*GroupedTest*ragged_per_tensor_bf16*' > $L/E_${tool}_grouped.log 2>&1
      echo "E $tool grouped rc=$? ${SECONDS}s: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $L/E_${tool}_grouped.log | tail -1)"
    done
    pack
    ;;
  esac
done
echo "run 86 done ${SECONDS}s"
