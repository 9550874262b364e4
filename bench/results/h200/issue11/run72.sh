#!/usr/bin/env bash
# Issue 11 run 72 (prepared in the session of 2026-12-07, twelfth): the committed step 12 after issue 9 run 71
# (the wide tile with a bias and B's outer-vector scales, its own kernels) and issue 12 run 70 (the wide tile
# for the grouped GEMMs) landed. GPU mutant 165 (the grouped suite must reach WideGroupedTile), the step's
# exact, epilogue and shape suites, issue 9's epilogue variants beside cuBLASLt and the unfused pipeline, then
# the bench and grouped phases of bench/measure_h200.sh. Called as build-carry/run72.sh with
# build-carry/carry72.tar.xz (run72_build.sh). Every file goes into one archive, run72_all.tar.gz, refreshed
# after each part. The measure script's exit trap packs and removes $R/logs: this script's own logs are in
# $R/run72_logs (run 69 lost its last log to that trap).
set -u
cd "$(dirname "$0")/.."
C=/tmp/c72
mkdir -p $C && tar -xJf build-carry/carry72.tar.xz -C $C
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv
export LD_LIBRARY_PATH=$C/N FP8GEMM_REQUIRE_GPU=1
R=/tmp/r72
L=$R/run72_logs
mkdir -p $L
pack() { tar -C $R -czf $OUT/run72_all.tar.gz . ; }
bash tests/mutants/run_prebuilt.sh $C/M $L
f12='*12_grouped_moe*'
for t in test_exact_gpu test_epilogue_gpu test_steps_gpu; do
  timeout 150 $C/N/$t --gtest_filter="$f12" > $L/N_$t.log 2>&1
  echo "N $t rc=$? ${SECONDS}s: $(tail -n 1 $L/N_$t.log)"; grep "^\[  FAILED" $L/N_$t.log | head -5
done
pack
timeout 150 $C/N/fp8gemm_bench --steps=12 --epilogue_variants \
  --shapes=4096x4096x4096,8192x8192x8192,4096x7168x16384,64x2112x7168 \
  --benchmark_filter='^(12_grouped_moe|cublaslt|unfused)/.*/(tensor|block)/(none|bias_gelu)/(bf16|e4m3)' \
  --benchmark_repetitions=3 --benchmark_min_time=0.05 --benchmark_out=$R/run72_bench_epilogue_12.json \
  --benchmark_out_format=json > $L/bench_epilogue.log 2>&1
echo "epilogue variants rc=$? ${SECONDS}s"; grep -E "_median" $L/bench_epilogue.log | awk '{print "  " $1, $2, $3}'
pack
OUT=$R BENCH_STEPS=12 timeout 300 bash bench/measure_h200.sh 12_grouped_moe "$(cat $C/N_commit)" $C/N bench grouped
pack
echo "issue 11 run 72 done ${SECONDS}s"
