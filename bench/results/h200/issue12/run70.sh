#!/usr/bin/env bash
# Issue 12 run 70 (prepared in the session of 2026-12-07, eleventh): the grouped GEMMs without block scales on the
# 128 x 256 tile (run70_wide_grouped.patch: WideGroupedTile, its clusters along N sharing A, taken where the wide
# tile's round rule allows), against the committed kernels (run 69's N). G's grouped suite, memcheck and
# racecheck on a contiguous case that takes the tile, then the grouped_ab phase of bench/measure_h200.sh (the
# two builds alternating twice, round 1 beside the cuBLASLt loop and graph). Needs build-carry/carry69.tar.xz
# and carry70.tar.xz. Every file in one archive, run70_all.tar.gz, refreshed after each part.
set -u
cd "$(dirname "$0")/.."
C=/tmp/c70
mkdir -p $C && tar -xJf build-carry/carry69_grouped.tar.xz -C $C && tar -xJf build-carry/carry69_bench.tar.xz -C $C && tar -xJf build-carry/carry70.tar.xz -C $C
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv
export FP8GEMM_REQUIRE_GPU=1
R=/tmp/r70
mkdir -p $R/logs
pack() { tar -C $R -czf $OUT/run70_all.tar.gz . ; }
LD_LIBRARY_PATH=$C/G timeout 200 $C/G/test_grouped_gpu > $R/logs/G_test_grouped_gpu.log 2>&1
echo "G test_grouped_gpu rc=$? ${SECONDS}s: $(tail -n 1 $R/logs/G_test_grouped_gpu.log)"; grep "^\[  FAILED" $R/logs/G_test_grouped_gpu.log | head -5
for tool in memcheck racecheck; do
  LD_LIBRARY_PATH=$C/G timeout 120 compute-sanitizer --tool $tool $C/G/test_grouped_gpu --gtest_filter='*ragged*' > $R/logs/G_$tool.log 2>&1
  echo "$tool rc=$? ${SECONDS}s: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $R/logs/G_$tool.log | tail -1)"
done
pack
OUT=$R AB_BIN=$C/G timeout 400 bash bench/measure_h200.sh 12_grouped_moe "$(cat $C/N_commit)" $C/N grouped_ab
pack
echo "issue 12 run 70 done ${SECONDS}s"
# Issue 11 run 69's last part (its block.log went into the folder the measure script's exit trap removes).
mkdir -p $R/logs69
LD_LIBRARY_PATH=$C/N timeout 90 $C/N/fp8gemm_bench --steps=12 --epilogue_variants --shapes=4096x7168x16384,64x2112x7168,4096x4096x4096 \
  --benchmark_filter='^(12_grouped_moe|cublaslt)/.*/(tensor|block)/none/bf16' --benchmark_repetitions=3 \
  --benchmark_min_time=0.05 --benchmark_out=$R/run69_bench_block.json --benchmark_out_format=json > $R/logs69/block.log 2>&1
echo "run 69 block variants rc=$? ${SECONDS}s"; grep -E "_median" $R/logs69/block.log | awk '{print "  " $1, $2, $3}'
pack
