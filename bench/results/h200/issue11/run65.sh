#!/usr/bin/env bash
# Issue 11 run 65: 389dd89 (run 61's programs, whose kernels are 0b0a62d's) on an H200, if one is lent: the grouped, deepseek,
# bench and rows phases of bench/measure_h200.sh beside cuBLASLt. On any other card it stops.
set -u
cd "$(dirname "$0")/.."
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv
nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200 || { echo "not an H200: nothing run"; exit 0; }
C=/tmp/c65
mkdir -p $C && tar -xJf build-carry/carry61.tar.xz -C $C && cp $C/libbenchmark.so.1debian $C/N/
OUT=$OUT BENCH_STEPS=12 timeout 500 bash bench/measure_h200.sh 12_grouped_moe 389dd89 $C/N grouped deepseek bench rows
