#!/usr/bin/env bash
# Issue 9 run 71 (prepared in the session of 2026-12-07, twelfth): step 12's 128 x 256 tile taking GEMMs with a
# bias or B's outer-vector scales (run71_wide_column_vectors.patch: apply_epilogue reads them 128 columns at a
# time), against the committed kernels (run 69's N). E's epilogue and exact suites, the mutant EM (the second
# chunk reads the first chunk's entries) on the epilogue suite, memcheck and racecheck on cases that take the
# tile with a bias, fp8gemm --check (the plan), then the ab phase of bench/measure_h200.sh: plain shapes and
# the epilogue variants, the two builds alternating twice, each beside its own cuBLASLt. Needs
# build-carry/carry69.tar.xz and carry71.tar.xz. Every file in one archive, run71_all.tar.gz.
set -u
cd "$(dirname "$0")/.."
C=/tmp/c71
mkdir -p $C && tar -xJf build-carry/carry69_bench.tar.xz -C $C && tar -xJf build-carry/carry71.tar.xz -C $C
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv
export FP8GEMM_REQUIRE_GPU=1 LD_LIBRARY_PATH=$C/E
R=/tmp/r71
mkdir -p $R/logs
pack() { tar -C $R -czf $OUT/run71_all.tar.gz . ; }
f12='*12_grouped_moe*'
for t in test_epilogue_gpu test_exact_gpu; do
  timeout 150 $C/E/$t --gtest_filter="$f12" > $R/logs/E_$t.log 2>&1
  echo "E $t rc=$? ${SECONDS}s: $(tail -n 1 $R/logs/E_$t.log)"; grep "^\[  FAILED" $R/logs/E_$t.log | head -5
done
timeout 150 $C/EM/test_epilogue_gpu --gtest_filter="$f12" > $R/logs/EM_test_epilogue_gpu.log 2>&1
echo "EM (mutant) test_epilogue_gpu rc=$? ${SECONDS}s (must fail): $(grep -c '^\[  FAILED' $R/logs/EM_test_epilogue_gpu.log) FAILED lines"
grep "^\[  FAILED" $R/logs/EM_test_epilogue_gpu.log | head -4
filter='*FastAccumulationEpilogueTest*12_grouped_moe_*bias*:*EpilogueTest*12_grouped_moe_outer_bias_gelu_e4m3*'
for tool in memcheck racecheck; do
  timeout 100 compute-sanitizer --tool $tool $C/E/test_epilogue_gpu --gtest_filter="$filter" > $R/logs/E_$tool.log 2>&1
  echo "$tool rc=$? ${SECONDS}s: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $R/logs/E_$tool.log | tail -1)" \
    "$(grep -cE '^\[       OK \]' $R/logs/E_$tool.log) passed"
done
for b in N E; do
  LD_LIBRARY_PATH=$C/$b timeout 30 $C/$b/fp8gemm --step 12 --m 4096 --n 4096 --k 4096 --epilogue bias_gelu --check \
    > $R/logs/${b}_check.log 2>&1
  echo "$b fp8gemm bias_gelu --check rc=$?: $(grep -E '^launch:' $R/logs/${b}_check.log | head -1 | cut -c1-150)"
done
pack
OUT=$R AB_BIN=$C/E AB_SHAPES=4096x4096x4096,8192x8192x8192,4096x7168x16384 \
  AB_VARIANTS='^(12_grouped_moe|cublaslt)/[^/]*/(tensor|outer|block)/(none|bias_gelu)/(bf16|e4m3)' \
  timeout 420 bash bench/measure_h200.sh 12_grouped_moe "$(cat $C/N_commit)" $C/N ab
pack
echo "issue 9 run 71 done ${SECONDS}s"
