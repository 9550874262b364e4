#!/usr/bin/env bash
# Issue 9 run 77 (session of 2026-12-07, thirteenth): runs 75 and 76 in one device call, trimmed to fit it
# (no device could be started for either alone for half an hour). Builds: N (c7020b4, the vectors read from
# the L2 in the epilogue), S (run 75: the wide tile's vectors copied into shared memory while the main loop
# runs), G (run 76: S + GELU's tanh form four values at a time); programs from run75_build.sh and
# run76_build.sh, packed together by run77_pack.sh as build-carry/carry77.tar.xz. S's and G's epilogue
# suites (the exact suite has no bias nor per-row scales, and the kernels it runs have the SASS they had);
# mutants 166 and 167; memcheck and racecheck on S; the plans; then the epilogue variants at 4096^3 and
# 4096 x 7168 x 16384, N, S, G in turn, twice, each run beside its own cuBLASLt. Every file in one archive,
# run77_all.tar.gz. Ordered so that a call cut short still brings back S's suite and one round of timings.
set -u
cd "$(dirname "$0")/.."
C=/tmp/c77
mkdir -p $C && xz -dc build-carry/carry77.tar.xz | tar -xf - -C $C
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv
export FP8GEMM_REQUIRE_GPU=1 LD_LIBRARY_PATH=$C/S
R=/tmp/r77
mkdir -p $R/run77_logs
L=$R/run77_logs
pack() { tar -C $R -czf $OUT/run77_all.tar.gz . ; }
f12='*12_grouped_moe*'
variants='^(12_grouped_moe|cublaslt)/[^/]*/(tensor|outer|block)/(none|bias_gelu)/(bf16|e4m3)'
round() {  # the epilogue variants, N, S and G in turn, each beside its own cuBLASLt
  for b in N S G; do
    LD_LIBRARY_PATH=$C/$b timeout 100 $C/$b/fp8gemm_bench --steps=12 --epilogue_variants \
      --shapes=4096x4096x4096,4096x7168x16384 --benchmark_filter="$variants" --benchmark_repetitions=3 \
      --benchmark_min_time=0.05 --benchmark_out=$R/run77_variants_$b$1.json --benchmark_out_format=json \
      > $L/variants_$b$1.log 2>&1
    echo "variants $b round $1 rc=$? ${SECONDS}s"
    grep -E "^12_grouped_moe.*(tensor|block)/(none|bias_gelu)/bf16_median" $L/variants_$b$1.log | awk '{print "  " $1, $2, $3}'
  done
  pack
}
for b in S; do
  timeout 100 $C/$b/test_epilogue_gpu --gtest_filter="$f12" > $L/${b}_test_epilogue_gpu.log 2>&1
  echo "$b test_epilogue_gpu rc=$? ${SECONDS}s: $(tail -n 1 $L/${b}_test_epilogue_gpu.log)"
  grep "^\[  FAILED" $L/${b}_test_epilogue_gpu.log | head -5
  grep -E "^\[----------\] [0-9]+ tests from .*total" $L/${b}_test_epilogue_gpu.log | sed 's/^/    /'
done
for shape in "--m 4096 --n 4096 --k 4096 --epilogue bias_gelu" \
  "--m 1024 --n 8190 --k 256 --epilogue bias_gelu --scales outer --out e5m2" \
  "--m 1024 --n 8188 --k 256 --epilogue bias_gelu --out fp32"; do
  timeout 20 $C/S/fp8gemm --step 12 $shape --check >> $L/S_check.log 2>&1
  echo "S fp8gemm $shape --check rc=$?: $(grep -E '^launch:' $L/S_check.log | tail -1 | cut -c1-170)"
done
pack
round 1
for m in $C/M/*/; do
  name=$(basename $m)
  timeout 60 $m/test_epilogue_gpu --gtest_filter='*ColumnVectorTest*12_grouped_moe*:*EpilogueTest*12_grouped_moe*bias*' \
    > $L/M_$name.log 2>&1
  echo "mutant $name rc=$? ${SECONDS}s (must fail): $(grep -c '^\[  FAILED' $L/M_$name.log) FAILED lines"
  grep "^\[  FAILED" $L/M_$name.log | head -3
done
filter='*ColumnVectorTest*12_grouped_moe_outer_bias_gelu_e5m2*'
for tool in memcheck racecheck; do
  timeout 90 compute-sanitizer --tool $tool $C/S/test_epilogue_gpu --gtest_filter="$filter" > $L/S_$tool.log 2>&1
  echo "$tool rc=$? ${SECONDS}s: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $L/S_$tool.log | tail -1)" \
    "$(grep -cE '^\[       OK \]' $L/S_$tool.log) passed"
done
for b in G; do
  timeout 100 $C/$b/test_epilogue_gpu --gtest_filter="$f12" > $L/${b}_test_epilogue_gpu.log 2>&1
  echo "$b test_epilogue_gpu rc=$? ${SECONDS}s: $(tail -n 1 $L/${b}_test_epilogue_gpu.log)"
  grep "^\[  FAILED" $L/${b}_test_epilogue_gpu.log | head -5
  grep -E "^\[----------\] [0-9]+ tests from .*total" $L/${b}_test_epilogue_gpu.log | sed 's/^/    /'
done
pack
round 2
echo "issue 9 run 77 done ${SECONDS}s"
