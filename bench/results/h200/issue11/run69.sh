#!/usr/bin/env bash
# Issue 11 run 69 (prepared in the session of 2026-12-07, eleventh): the committed step 12 with the promoted and
# block-scaled 128 x 256 tile (issue 11 run 68, measured on an H100 only) on the H200 the bars are stated on.
# First the GPU mutants 162 and 163 and the step's suites, then the bench, deepseek, grouped and rows phases of
# bench/measure_h200.sh beside cuBLASLt, then the block-scaled epilogue variants at the shapes of issue 11's
# block-scale bar. Called as build-carry/run69.sh with build-carry/carry69.tar.xz (run69_build.sh). Every file
# goes into one archive, run69_all.tar.gz, refreshed after each part: the device tool returns only a few files
# of a call (run 68 lost most of its files that way), and a time limit keeps what the last refresh packed.
set -u
cd "$(dirname "$0")/.."
C=/tmp/c69
mkdir -p $C && tar -xJf build-carry/carry69.tar.xz -C $C
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv
export LD_LIBRARY_PATH=$C/N FP8GEMM_REQUIRE_GPU=1
R=/tmp/r69
mkdir -p $R/logs
pack() { tar -C $R -czf $OUT/run69_all.tar.gz . ; }
bash tests/mutants/run_prebuilt.sh $C/M $R/logs
f12='*12_grouped_moe*'
for t in test_exact_gpu test_epilogue_gpu test_steps_gpu; do
  timeout 150 $C/N/$t --gtest_filter="$f12" > $R/logs/N_$t.log 2>&1
  echo "N $t rc=$? ${SECONDS}s: $(tail -n 1 $R/logs/N_$t.log)"; grep "^\[  FAILED" $R/logs/N_$t.log | head -5
done
pack
OUT=$R BENCH_STEPS=12 timeout 330 bash bench/measure_h200.sh 12_grouped_moe "$(cat $C/N_commit)" $C/N bench deepseek grouped rows
pack
timeout 90 $C/N/fp8gemm_bench --steps=12 --epilogue_variants --shapes=4096x7168x16384,64x2112x7168,4096x4096x4096 \
  --benchmark_filter='^(12_grouped_moe|cublaslt)/.*/(tensor|block)/none/bf16' --benchmark_repetitions=3 \
  --benchmark_min_time=0.05 --benchmark_out=$R/run69_bench_block.json --benchmark_out_format=json > $R/logs/block.log 2>&1
echo "block variants rc=$? ${SECONDS}s"; grep -E "_median" $R/logs/block.log | awk '{print "  " $1, $2, $3}'
pack
echo "issue 11 run 69 done ${SECONDS}s"
