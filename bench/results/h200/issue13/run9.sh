#!/usr/bin/env bash
# Issue 13 run 9: step 12's launch asking the runtime once per kernel (after, 6a9ab55) against
# every call (before, e4a2aad), alternating twice: fp8gemm_bench's launch_host_us and device
# time, and the torch benchmark; pytest and step 12's exact and epilogue suites on the after build.
# A record of what ran: it ran as build-carry/run13_9.sh on the device, with the programs
# built on the development machine (steps 09 and 12 only) carried in build-carry/b13ab.tar.xz
# (not committed).
set -uo pipefail
cd "$(dirname "$0")/.."
tar -xJf build-carry/b13ab.tar.xz -C build-carry
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu --format=csv,noheader
shapes=4096x4096x4096,8192x8192x8192,64x2112x7168,1024x1024x16384,128x7168x16384
after=$PWD/build-carry/b13a
export FP8GEMM_REQUIRE_GPU=1
LD_LIBRARY_PATH=$after timeout 120 "$after/test_exact_gpu" --gtest_filter='*12_grouped_moe*' > "$OUT/exact_12.log" 2>&1
echo "exact rc=$? $(tail -1 "$OUT/exact_12.log")"
LD_LIBRARY_PATH=$after timeout 200 "$after/test_epilogue_gpu" --gtest_filter='*12_grouped_moe*' > "$OUT/epilogue_12.log" 2>&1
echo "epilogue rc=$? $(tail -1 "$OUT/epilogue_12.log")"
LD_LIBRARY_PATH=$after FP8GEMM_TORCH_LIB=$after/libfp8gemm_torch.so timeout 150 python3 -m pytest -q -rs -p no:cacheprovider \
  pytorch/test_fp8gemm_op.py > "$OUT/pytest.log" 2>&1
echo "pytest rc=$? $(tail -1 "$OUT/pytest.log")"
for round in 1 2; do
  for b in b13 b13a; do
    bin=$PWD/build-carry/$b
    export LD_LIBRARY_PATH=$bin
    timeout 120 "$bin/fp8gemm_bench" --steps=12 --shapes=$shapes --benchmark_filter='^12_' \
      --benchmark_repetitions=3 --benchmark_min_time=0.05 --benchmark_out="$OUT/driver_${b}_$round.json" \
      --benchmark_out_format=json > /dev/null 2>&1
    echo "driver $b round $round rc=$?"
    FP8GEMM_TORCH_LIB=$bin/libfp8gemm_torch.so PYTHONUNBUFFERED=1 timeout 150 python3 pytorch/bench_fp8gemm_op.py \
      --step 12 --driver-json "$OUT/driver_${b}_$round.json" --out "$OUT/torch_${b}_$round.json" > "$OUT/torch_${b}_$round.log" 2>&1
    echo "torch $b round $round rc=$?"
  done
done
cd "$OUT" && tar -czf all.tar.gz *.json *.log && rm -f *.json *.log
