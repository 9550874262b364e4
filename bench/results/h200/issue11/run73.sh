#!/usr/bin/env bash
# Issue 11 run 73 (prepared in the session of 2026-12-07, twelfth): the review's helper for a K block's wgmma
# issue in step 12 (run69_issue_k_block_helper.patch, K) against run 72's kernels (N): K's exact, epilogue and
# shape suites for step 12, then the ab phase of bench/measure_h200.sh (the two alternating twice, each beside
# its own cuBLASLt) on the bench shapes and the block-scaled variants. Called as build-carry/run73.sh with
# build-carry/carry73.tar.xz (run73_build.sh). One archive, run73_all.tar.gz, refreshed after each part.
set -u
cd "$(dirname "$0")/.."
C=/tmp/c73
mkdir -p $C && tar -xJf build-carry/carry73.tar.xz -C $C
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv
export FP8GEMM_REQUIRE_GPU=1 LD_LIBRARY_PATH=$C/K
R=/tmp/r73
L=$R/run73_logs
mkdir -p $L
pack() { tar -C $R -czf $OUT/run73_all.tar.gz . ; }
for t in test_exact_gpu test_epilogue_gpu test_steps_gpu; do
  timeout 150 $C/K/$t --gtest_filter='*12_grouped_moe*' > $L/K_$t.log 2>&1
  echo "K $t rc=$? ${SECONDS}s: $(tail -n 1 $L/K_$t.log)"; grep "^\[  FAILED" $L/K_$t.log | head -5
done
pack
OUT=$R AB_BIN=$C/K AB_VARIANTS='^(12_grouped_moe|cublaslt)/[^/]*/block/none/bf16' \
  timeout 400 bash bench/measure_h200.sh 12_grouped_moe "$(cat $C/N_commit)" $C/N ab
pack
echo "issue 11 run 73 done ${SECONDS}s"
