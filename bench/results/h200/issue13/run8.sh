#!/usr/bin/env bash
# Issue 13 run 8: the torch phase on step 12 with the in-process driver timing.
# A record of what ran: it ran as build-carry/run13_8.sh on the device, with the programs
# built on the development machine (steps 09 and 12 only) carried in build-carry/b13.tar.xz
# (not committed).
set -uo pipefail
cd "$(dirname "$0")/.."
tar -xJf build-carry/b13.tar.xz -C build-carry
bin=$PWD/build-carry/b13
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu --format=csv
OUT=$OUT bash bench/measure_h200.sh 12_grouped_moe "$(cat build-carry/commit)" "$bin" torch
# a second round of the benchmark alone, minutes later in the same call
export LD_LIBRARY_PATH="$bin"
FP8GEMM_TORCH_LIB=$bin/libfp8gemm_torch.so PYTHONUNBUFFERED=1 timeout 150 python3 pytorch/bench_fp8gemm_op.py \
  --step 12 --driver-json "$OUT/torch_driver.json" --out "$OUT/torch_bench_2.json" > "$OUT/torch_bench_2.log" 2>&1
echo "second round rc=$?"; tail -5 "$OUT/torch_bench_2.log"
