#!/usr/bin/env bash
# Issue 9 run 84: every bar of issues 9, 10, 11 and 12 measured again on the build that run 83 chose
# (WIN=c2 or d2: build-carry/carry82c2.tar.xz or carry82d2.tar.xz, step 12 alone), each benchmark beside
# cuBLASLt in the same process. In order of what the issues' bars need, the JSON packed after each:
#   plain     issue 11's per-tensor shapes and issue 10's decode shapes (bench/measure_h200.sh's `bench`)
#   variants  issue 9's: {tensor, block} x {none, bias_gelu} x {bf16, e4m3} at 4096^3, 8192^3,
#             4096 x 7168 x 16384 and 64 x 2112 x 7168, beside cuBLASLt's epilogues and the unfused baseline
#   deepseek  the 18 DeepSeek-V3 shapes (issue 11's geometric mean)
#   grouped   issue 12's shapes beside the cuBLASLt loop and graph
#   rows      issue 11's unaligned shapes beside their aligned neighbours
# Usage: WIN=d2 bash build-carry/run84.sh [PHASE...]   (default: all five)
set -u
cd "$(dirname "$0")/.."
W=/tmp/w84
mkdir -p $W
[ -e $W/fp8gemm_bench ] || xz -dc "build-carry/carry82${WIN:?WIN=c2|d2}.tar.xz" | tar -xf - -C $W
export OUT=${OUT:-/tmp/o84}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu --format=csv
phases=${*:-plain variants deepseek grouped rows}
for p in $phases; do
  case $p in
  plain) BENCH_STEPS=12 bash bench/measure_h200.sh 12_grouped_moe "$WIN" $W bench ;;
  variants)
    export LD_LIBRARY_PATH=$W FP8GEMM_REQUIRE_GPU=1
    timeout 200 $W/fp8gemm_bench --steps=12 --epilogue_variants \
      --shapes=4096x4096x4096,8192x8192x8192,4096x7168x16384,64x2112x7168 \
      --benchmark_filter='/(tensor|block)/(none|bias_gelu)/(bf16|e4m3)' --benchmark_repetitions=3 \
      --benchmark_min_time=0.05 --benchmark_out=$OUT/bench_variants.json --benchmark_out_format=json \
      > $OUT/bench_variants.log 2>&1
    echo "variants rc=$? ${SECONDS}s"
    grep -E "^12_grouped_moe.*_median" $OUT/bench_variants.log | awk '{print "  " $1, $2, $3}' | head -40
    gzip -f $OUT/bench_variants.log
    ;;
  deepseek) bash bench/measure_h200.sh 12_grouped_moe "$WIN" $W deepseek ;;
  grouped)
    export LD_LIBRARY_PATH=$W FP8GEMM_REQUIRE_GPU=1
    timeout 200 $W/fp8gemm_grouped_bench --benchmark_out=$OUT/bench_grouped.json --benchmark_out_format=json \
      > $OUT/bench_grouped.log 2>&1
    echo "grouped bench rc=$? ${SECONDS}s"
    grep -E "_median" $OUT/bench_grouped.log | awk '{print "  " $1, $2, $3}' | head -40
    gzip -f $OUT/bench_grouped.log
    ;;
  rows) bash bench/measure_h200.sh 12_grouped_moe "$WIN" $W rows ;;
  esac
  for f in logs.tar.gz; do [ -e "$OUT/$f" ] && mv "$OUT/$f" "$OUT/logs_$p.tar.gz"; done
done
echo "run 84 done ${SECONDS}s"
