#!/usr/bin/env bash
# Issue 9 run 79 (session of 2026-12-07, fourteenth): step 12's block-scaled GEMMs on the 128 x 256 tile run
# on WideTileColumnVectors' kernels (B) instead of WideTile's (A), one build of 956f979 with
# run79_block_on_vector_kernels.patch, whose switch FP8GEMM_RUN79_BLOCK_ON_VECTOR_KERNELS picks. Run 77 saw
# those kernels run block scales with bias + GELU faster than WideTile's ran them without (0.886 against
# 0.917-0.922 ms at 4096 x 7168 x 16384, an H200). B's suites first, then A and B alternating, twice, each
# beside its own cuBLASLt; memcheck on B between the rounds.
set -u
cd "$(dirname "$0")/.."
C=/tmp/c79
mkdir -p $C && xz -dc build-carry/carry79.tar.xz | tar -xf - -C $C
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv
export FP8GEMM_REQUIRE_GPU=1 LD_LIBRARY_PATH=$C
R=/tmp/r79
L=$R/run79_logs
mkdir -p $L
pack() { tar -C $R -czf $OUT/run79_all.tar.gz . ; }
f12='*12_grouped_moe*'
variants='^(12_grouped_moe|cublaslt)/[^/]*/(tensor|block)/(none|bias_gelu)/bf16'
round() {
  for b in A B; do
    if [ $b = B ]; then s=1; else s=0; fi
    FP8GEMM_RUN79_BLOCK_ON_VECTOR_KERNELS=$s timeout 150 $C/fp8gemm_bench --steps=12 --epilogue_variants \
      --shapes=4096x4096x4096,4096x7168x16384 --benchmark_filter="$variants" --benchmark_repetitions=3 \
      --benchmark_min_time=0.05 --benchmark_out=$R/run79_variants_$b$1.json --benchmark_out_format=json \
      > $L/variants_$b$1.log 2>&1
    echo "variants $b round $1 rc=$? ${SECONDS}s"
    grep -E "^12_grouped_moe.*bf16_median" $L/variants_$b$1.log | awk '{print "  " $1, $2, $3}'
  done
  pack
}
export FP8GEMM_RUN79_BLOCK_ON_VECTOR_KERNELS=1
timeout 120 $C/test_epilogue_gpu --gtest_filter="$f12" > $L/B_test_epilogue_gpu.log 2>&1
echo "B test_epilogue_gpu rc=$? ${SECONDS}s: $(tail -n 1 $L/B_test_epilogue_gpu.log)"
grep "^\[  FAILED" $L/B_test_epilogue_gpu.log | head -5
for shape in "--m 4096 --n 7168 --k 16384" "--m 4096 --n 4096 --k 4096" "--m 2048 --n 2048 --k 2048 --out fp32" \
  "--m 1000 --n 8000 --k 1000"; do
  timeout 30 $C/fp8gemm --step 12 $shape --scales block --check >> $L/B_check.log 2>&1
  echo "B fp8gemm $shape --scales block --check rc=$?: $(grep -E '^launch:' $L/B_check.log | tail -1 | cut -c1-150)"
done
pack
round 1
for t in test_exact_gpu test_steps_gpu; do
  timeout 120 $C/$t --gtest_filter="$f12" > $L/B_$t.log 2>&1
  echo "B $t rc=$? ${SECONDS}s: $(tail -n 1 $L/B_$t.log)"
  grep "^\[  FAILED" $L/B_$t.log | head -5
done
timeout 60 compute-sanitizer --tool memcheck $C/test_epilogue_gpu \
  --gtest_filter='*12_grouped_moe_block_none_bf16_2048x2048x2048*:*12_grouped_moe_block_none_bf16_130x8504x200*' \
  > $L/B_memcheck.log 2>&1
echo "memcheck rc=$? ${SECONDS}s: $(grep -E 'ERROR SUMMARY' $L/B_memcheck.log | tail -1) $(grep -cE '^\[       OK \]' $L/B_memcheck.log) passed"
pack
round 2
# With what time is left: main's kernels (the switch unset) on the DeepSeek-V3 shapes and issue 11's,
# beside cuBLASLt's default and fast modes: where the step stands on an H200 (the last such run was 65).
unset FP8GEMM_RUN79_BLOCK_ON_VECTOR_KERNELS
shapes=""
for m in 64 128 4096; do
  for nk in 2112x7168 24576x1536 32768x512 7168x16384 4096x7168 7168x2048; do shapes+="${shapes:+,}${m}x${nk}"; done
done
shapes+=",4096x4096x4096,8192x8192x8192,4096x4096x7168,4096x32768x512"
left=$((585 - SECONDS))
if [ $left -gt 40 ]; then
  timeout $left $C/fp8gemm_bench --steps=12 --shapes=$shapes --benchmark_repetitions=3 --benchmark_min_time=0.05 \
    --benchmark_out=$R/run79_deepseek_main.json --benchmark_out_format=json > $L/deepseek_main.log 2>&1
  echo "deepseek + issue 11 shapes, main's kernels rc=$? ${SECONDS}s"
  grep -E "_median" $L/deepseek_main.log | awk '{print "  " $1, $2, $3}' | head -80
  pack
fi
echo "issue 9 run 79 done ${SECONDS}s"
