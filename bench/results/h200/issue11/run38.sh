#!/usr/bin/env bash
# issue 11 run 38: step 12 with the yield hint set on its promotion runs. Three builds of 8d37d8d's
# step 12 object (built with --no-compress so that its cubin can be edited in place), the same
# programs linked around each: A unpatched; B after run38_yield_patch.py (every run of >= 8
# consecutive FADD or FFMA gets the yield bit set and its operand-reuse bits cleared: 16056
# instructions in 92 kernels); C after run38_yield_patch.py --keep-reuse (the yield bit only where no
# reuse bit is lost: 11884 instructions; the FADDs of per-tensor promotion carry no reuse bits, so C
# differs from B only in the block-scaled kernels' FFMAs).
#   part 1: B's and C's exact and epilogue suites on step 12; A against B, alternating twice
#           (bench/measure_h200.sh's ab phase, with block-scaled and bias+GELU variants); then
#           issue 13's installed-package consumer (run_gemm, the last step) once.
#   part 2: A against C on the block-scaled variants, alternating twice.
# A record of what ran: it ran as `build-carry/run38.sh PART` from the repository root (hence the
# cd), with its programs in build-carry/carry38.tar.xz, which is not committed: A's programs, and B's
# and C's as the words in which they differ from A's (run38_bindiff.py).
set -u
part="${1:?part 1 or 2}"
cd "$(dirname "$0")/.."
mkdir -p /tmp/c && tar -xJf build-carry/carry38.tar.xz -C /tmp/c
for v in B C; do
  mkdir -p /tmp/c/$v
  for t in fp8gemm_bench test_exact_gpu test_epilogue_gpu; do
    python3 build-carry/run38_bindiff.py apply /tmp/c/A/$t /tmp/c/${v}_$t.diff /tmp/c/$v/$t && chmod +x /tmp/c/$v/$t
  done
done
for v in A B C; do cp /tmp/c/libbenchmark.so.1debian /tmp/c/$v/; done
nvidia-smi --query-gpu=name,clocks.current.sm,clocks.max.sm,temperature.gpu --format=csv
if [ "$part" = 1 ]; then
  for v in B C; do
    for t in test_exact_gpu test_epilogue_gpu; do
      LD_LIBRARY_PATH=/tmp/c/$v timeout 200 /tmp/c/$v/$t --gtest_filter='*12_grouped_moe*' > $OUT/${v}_$t.log 2>&1
      echo "$v $t rc=$?: $(tail -n 1 $OUT/${v}_$t.log)"
    done
  done
  mkdir -p $OUT/ab && AB_BIN=/tmp/c/B \
    AB_SHAPES=4096x4096x4096,8192x8192x8192,4096x7168x16384,4096x4096x7168,4096x32768x512,64x2112x7168 \
    AB_VARIANTS='^12_grouped_moe/.*/(tensor|block)/(none|bias_gelu)/bf16' \
    OUT=$OUT/ab bash bench/measure_h200.sh 12_grouped_moe 8d37d8d /tmp/c/A ab
  LD_LIBRARY_PATH=/tmp/c/prefix/lib timeout 60 /tmp/c/run_gemm > $OUT/run_gemm.log 2>&1
  echo "run_gemm rc=$?" >> $OUT/run_gemm.log; cat $OUT/run_gemm.log
else
  for round in 1 2; do
    for v in A C; do
      LD_LIBRARY_PATH=/tmp/c/$v timeout 240 /tmp/c/$v/fp8gemm_bench --steps=12 --epilogue_variants \
        --shapes=4096x4096x4096,4096x7168x16384,64x2112x7168 \
        --benchmark_filter='^(12_grouped_moe|cublaslt)/.*/block/(none|bias_gelu)/bf16' --benchmark_repetitions=3 \
        --benchmark_min_time=0.05 --benchmark_out=$OUT/block_${v}$round.json --benchmark_out_format=json \
        > $OUT/block_${v}$round.log 2>&1
      echo "block $v round $round rc=$? ${SECONDS}s"
      grep -E "_median" $OUT/block_${v}$round.log | awk '{print "  " $1, $2, $3}'
    done
  done
fi
nvidia-smi --query-gpu=name,clocks.current.sm,clocks.max.sm,temperature.gpu --format=csv
cd $OUT && tar -czf /tmp/all.tar.gz . && find . -mindepth 1 -delete && mv /tmp/all.tar.gz . ; ls -la $OUT
