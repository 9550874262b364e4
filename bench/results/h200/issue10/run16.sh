#!/usr/bin/env bash
# issue 10 run 16: the slice sweep in one fp8gemm_bench run beside cuBLASLt (fp8gemm_bench
# --split_k_counts, the `splits` phase), step 12 as committed at b22ea09 with the bench change.
# A record of what ran: it ran as build-carry/run40.sh from the repository root (hence the cd),
# with its program in build-carry/carry40.tar.xz, which is not committed.
set -u
cd "$(dirname "$0")/.."
mkdir -p /tmp/c && tar -xJf build-carry/carry40.tar.xz -C /tmp/c
nvidia-smi --query-gpu=clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv
OUT=$OUT bash bench/measure_h200.sh 12_grouped_moe b22ea09+sweep /tmp/c/B splits
ls -la $OUT
