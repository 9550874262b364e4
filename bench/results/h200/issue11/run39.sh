#!/usr/bin/env bash
# Two experiments on step 12 against c17e01b's build (A), in one call, each build alternating twice
# beside its own cuBLASLt. All three built on the development machine in a tree holding steps 09 and 12.
#   B: the block-scaled promotion's FMAs written one row's scale at a time (ffma_order.patch)
#   C: split-K's gather with one release/acquire atomic by thread 0 after the consumers' barrier
#      instead of a sequentially consistent fence in every consumer thread (gather_fence.patch)
set -u
cd "$(dirname "$0")/.."
mkdir -p /tmp/c && tar -xJf build-carry/carry39.tar.xz -C /tmp/c
for v in A B C; do cp /tmp/c/libbenchmark.so.1debian /tmp/c/$v/; done
nvidia-smi --query-gpu=name,clocks.current.sm,clocks.max.sm,temperature.gpu --format=csv
for v in ${TESTS-B C}; do
  filter='*12_grouped_moe*'; [ $v = C ] && filter='*12_grouped_moe*:*09_persistent*'
  for t in test_exact_gpu test_epilogue_gpu; do
    LD_LIBRARY_PATH=/tmp/c/$v timeout 200 /tmp/c/$v/$t --gtest_filter="$filter" > $OUT/${v}_$t.log 2>&1
    echo "$v $t rc=$? ${SECONDS}s: $(tail -n 1 $OUT/${v}_$t.log)"
  done
done
split_shapes=64x2112x7168,64x4096x7168,128x2112x7168,128x4096x7168,1024x1024x16384,64x7168x16384,4096x4096x4096
for round in 1 2 3; do
  for v in A C; do
    LD_LIBRARY_PATH=/tmp/c/$v timeout 240 /tmp/c/$v/fp8gemm_bench --steps=12 --shapes=$split_shapes \
      --benchmark_repetitions=5 --benchmark_min_time=0.05 --benchmark_out=$OUT/split_${v}$round.json \
      --benchmark_out_format=json > $OUT/split_${v}$round.log 2>&1
    echo "split $v round $round rc=$? ${SECONDS}s"
    grep -E "^12_grouped_moe/[0-9x]+_median" $OUT/split_${v}$round.log | awk '{print "  " $1, $2, $3}'
  done
done
for round in 1 2; do
  for v in A B; do
    LD_LIBRARY_PATH=/tmp/c/$v timeout 240 /tmp/c/$v/fp8gemm_bench --steps=12 --epilogue_variants \
      --shapes=4096x4096x4096,4096x7168x16384,64x2112x7168 \
      --benchmark_filter='^(12_grouped_moe|cublaslt)/.*/block/(none|bias_gelu)/bf16' --benchmark_repetitions=3 \
      --benchmark_min_time=0.05 --benchmark_out=$OUT/block_${v}$round.json --benchmark_out_format=json \
      > $OUT/block_${v}$round.log 2>&1
    echo "block $v round $round rc=$? ${SECONDS}s"
    grep -E "^12_grouped_moe.*_median" $OUT/block_${v}$round.log | awk '{print "  " $1, $2, $3}'
  done
done
nvidia-smi --query-gpu=name,clocks.current.sm,clocks.max.sm,temperature.gpu --format=csv
cd $OUT && tar -czf /tmp/all.tar.gz . && find . -mindepth 1 -delete && mv /tmp/all.tar.gz run39_all.tar.gz; ls -la $OUT
