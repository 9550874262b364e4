#!/usr/bin/env bash
# Issue 13 run 10: the torch phase on step 12, library and operator of 6a9ab55 (launch checks once
# per kernel), benchmark script of the commit that carries this script; three rounds.
# A record of what ran: it ran as build-carry/run13_10.sh on the device, with the programs
# built on the development machine (steps 09 and 12 only) carried in build-carry/b13ab.tar.xz
# (not committed).
set -uo pipefail
cd "$(dirname "$0")/.."
tar -xJf build-carry/b13ab.tar.xz -C build-carry
bin=$PWD/build-carry/b13a
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu --format=csv,noheader
OUT=$OUT bash bench/measure_h200.sh 12_grouped_moe "6a9ab55 (library, operator), $(cat build-carry/commit) (benchmark)" "$bin" torch
export LD_LIBRARY_PATH=$bin
for round in 2 3; do
  FP8GEMM_TORCH_LIB=$bin/libfp8gemm_torch.so PYTHONUNBUFFERED=1 timeout 150 python3 pytorch/bench_fp8gemm_op.py \
    --step 12 --driver-json "$OUT/torch_driver.json" --out "$OUT/torch_bench_$round.json" > "$OUT/torch_bench_$round.log" 2>&1
  echo "round $round rc=$?"
done
