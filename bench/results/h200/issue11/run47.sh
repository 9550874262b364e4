#!/usr/bin/env bash
# Issue 11 run 46: the committed step 12 (5648efe, run 45's build S) beside cuBLASLt. On an H200:
# the bench, deepseek, grouped and rows phases of bench/measure_h200.sh (the first H200 run since
# issue 11 run 43); on an H100: the rows phase only (the misaligned shapes beside their aligned ones).
set -u
cd "$(dirname "$0")/.."
C=/tmp/c46
mkdir -p $C && tar -xJf build-carry/carry45.tar.xz -C $C && cp $C/libbenchmark.so.1debian $C/S/
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv
phases="rows"
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then phases="rows bench deepseek grouped"; fi
OUT=$OUT BENCH_STEPS=12 timeout 580 bash bench/measure_h200.sh 12_grouped_moe 5648efe $C/S $phases
