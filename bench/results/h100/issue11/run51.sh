#!/usr/bin/env bash
# Issue 11 run 51: step 12's block-scaled plain GEMMs with the cluster along M wherever that takes no
# more rounds (N2: 5269bbf + the change) against edb8b97 (F, run 49's build): N2's epilogue suite
# (its block-scaled cases at 256 x 512 x 1024, 255 x 1000 x 1008 and 2048^3 take the new kernels) and
# exact suite, memcheck and racecheck on block-scaled cases, then the block-scaled variants, both
# builds in turn, twice.
set -u
cd "$(dirname "$0")/.."
C=/tmp/c51
mkdir -p $C && tar -xJf build-carry/carry51.tar.xz -C $C
export LD_LIBRARY_PATH=$C FP8GEMM_REQUIRE_GPU=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader
mkdir -p $OUT/j
timeout 100 $C/N2/test_epilogue_gpu --gtest_filter='*12_grouped_moe*' > $OUT/j/N2_test_epilogue_gpu.log 2>&1
echo "N2 test_epilogue_gpu rc=$? ${SECONDS}s: $(tail -n 1 $OUT/j/N2_test_epilogue_gpu.log)"; grep -E "^\[  FAILED" $OUT/j/N2_test_epilogue_gpu.log | head -5
timeout 30 $C/N2/test_exact_gpu --gtest_filter='*12_grouped_moe*' > $OUT/j/N2_test_exact_gpu.log 2>&1
echo "N2 test_exact_gpu rc=$? ${SECONDS}s: $(tail -n 1 $OUT/j/N2_test_exact_gpu.log)"
for tool in memcheck racecheck; do
  timeout 40 compute-sanitizer --tool $tool $C/N2/test_epilogue_gpu --gtest_filter='*EpilogueTest*12_grouped_moe_block_none_bf16_256x512x1024*:*EpilogueTest*12_grouped_moe_block_bias_gelu_e4m3_255x1000x1008*' > $OUT/j/N2_$tool.log 2>&1
  echo "$tool rc=$? ${SECONDS}s: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/j/N2_$tool.log | tail -1) $(grep -cE '^\[       OK \]' $OUT/j/N2_$tool.log) passed"
done
tar -C $OUT -czf $OUT/run51_json.tar.gz j
for round in 1 2; do
  for v in F N2; do
    timeout 40 $C/$v/fp8gemm_bench --steps=12 --epilogue_variants --shapes=4096x7168x16384,4096x4096x4096,1024x4096x7168 \
      --benchmark_filter='^12_grouped_moe/.*/block/(none|bias_gelu)/bf16' --benchmark_repetitions=3 --benchmark_min_time=0.05 \
      --benchmark_out=$OUT/j/run51_block${round}_$v.json --benchmark_out_format=json > $OUT/j/run51_block${round}_$v.log 2>&1
    echo "$v round $round rc=$? ${SECONDS}s"
    grep -E "_median" $OUT/j/run51_block${round}_$v.log | awk '{print "  " $1, $2, $3}'
  done
done
tar -C $OUT -czf $OUT/run51_json.tar.gz j && rm -rf $OUT/j
