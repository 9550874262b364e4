#!/usr/bin/env bash
# Issue 9 run 75 (session of 2026-12-07, thirteenth): step 12's 128 x 256 tile with its bias and B's
# outer-vector scales copied into shared memory while the main loop runs (S), against c7020b4's build (N,
# the vectors read from the L2 in the epilogue, two chunks of 128 columns). S's epilogue and exact suites
# (the epilogue suite's ColumnVectorTest new: the vectors at aligned and misaligned pointers); GPU mutants
# 166 and 167 on the epilogue suite (must fail); memcheck and racecheck on ColumnVectorTest's step 12 cases;
# fp8gemm --check (the plans); then the ab phase of bench/measure_h200.sh: plain shapes and the epilogue
# variants, the two builds alternating twice, each beside its own cuBLASLt. Called as build-carry/run75.sh
# with build-carry/carry75.tar.xz of run75_build.sh. Every file in one archive, run75_all.tar.gz.
set -u
cd "$(dirname "$0")/.."
C=/tmp/c75
mkdir -p $C && tar -xJf build-carry/carry75.tar.xz -C $C
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv
export FP8GEMM_REQUIRE_GPU=1 LD_LIBRARY_PATH=$C/S
R=/tmp/r75
mkdir -p $R/run75_logs
L=$R/run75_logs
pack() { tar -C $R -czf $OUT/run75_all.tar.gz . ; }
f12='*12_grouped_moe*'
for t in test_epilogue_gpu test_exact_gpu; do
  timeout 120 $C/S/$t --gtest_filter="$f12" > $L/S_$t.log 2>&1
  echo "S $t rc=$? ${SECONDS}s: $(tail -n 1 $L/S_$t.log)"; grep "^\[  FAILED" $L/S_$t.log | head -5
  grep -E "^\[----------\] [0-9]+ tests from .*total" $L/S_$t.log | sed 's/^/    /'
done
for m in $C/M/*/; do
  name=$(basename $m)
  timeout 90 $m/test_epilogue_gpu --gtest_filter="$f12" > $L/M_$name.log 2>&1
  echo "mutant $name rc=$? ${SECONDS}s (must fail): $(grep -c '^\[  FAILED' $L/M_$name.log) FAILED lines"
  grep "^\[  FAILED" $L/M_$name.log | head -3
done
filter='*ColumnVectorTest*12_grouped_moe_outer_bias_gelu_e5m2*'
for tool in memcheck racecheck; do
  timeout 100 compute-sanitizer --tool $tool $C/S/test_epilogue_gpu --gtest_filter="$filter" > $L/S_$tool.log 2>&1
  echo "$tool rc=$? ${SECONDS}s: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $L/S_$tool.log | tail -1)" \
    "$(grep -cE '^\[       OK \]' $L/S_$tool.log) passed"
done
for shape in "--m 4096 --n 4096 --k 4096 --epilogue bias_gelu" "--m 1024 --n 8190 --k 256 --epilogue bias_gelu --scales outer --out e5m2"; do
  timeout 30 $C/S/fp8gemm --step 12 $shape --check > $L/S_check.log 2>&1
  echo "S fp8gemm $shape --check rc=$?: $(grep -E '^launch:' $L/S_check.log | head -1 | cut -c1-160)"
done
pack
OUT=$R AB_BIN=$C/S AB_SHAPES=4096x4096x4096,8192x8192x8192,4096x7168x16384 \
  AB_VARIANTS='^(12_grouped_moe|cublaslt)/[^/]*/(tensor|outer|block)/(none|bias_gelu)/(bf16|e4m3)' \
  timeout 400 bash bench/measure_h200.sh 12_grouped_moe "$(cat $C/N_commit)" $C/N ab
pack
echo "issue 9 run 75 done ${SECONDS}s"
