#!/usr/bin/env bash
# Issue 9 run 76 (session of 2026-12-07, thirteenth): GELU's tanh form four values at a time with one
# reciprocal (G = run75's S + run76_gelu_in_fours.patch, in the 128 x 256 tile's bias kernels only) against
# run 75's S. G's epilogue and exact suites (ColumnVectorTest with a bias + GELU into FP32 D added);
# fp8gemm --check of the FP32 case's plan (does it take the wide tile?); then the ab phase of
# bench/measure_h200.sh, S and G alternating twice, each beside its own cuBLASLt. Called as
# build-carry/run76.sh with build-carry/carry75.tar.xz (run75_build.sh) and carry76.tar.xz (run76_build.sh).
# Every file in one archive, run76_all.tar.gz.
set -u
cd "$(dirname "$0")/.."
C=/tmp/c76
mkdir -p $C && tar -xJf build-carry/carry75.tar.xz -C $C S && tar -xJf build-carry/carry76.tar.xz -C $C
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv
export FP8GEMM_REQUIRE_GPU=1 LD_LIBRARY_PATH=$C/G
R=/tmp/r76
mkdir -p $R/run76_logs
L=$R/run76_logs
pack() { tar -C $R -czf $OUT/run76_all.tar.gz . ; }
f12='*12_grouped_moe*'
for t in test_epilogue_gpu test_exact_gpu; do
  timeout 120 $C/G/$t --gtest_filter="$f12" > $L/G_$t.log 2>&1
  echo "G $t rc=$? ${SECONDS}s: $(tail -n 1 $L/G_$t.log)"; grep "^\[  FAILED" $L/G_$t.log | head -5
done
$C/G/test_epilogue --gtest_filter='Gelu*' > $L/G_test_epilogue_cpu.log 2>&1; echo "G CPU Gelu tests: $(tail -n 1 $L/G_test_epilogue_cpu.log)"
timeout 30 $C/S/fp8gemm --step 12 --m 1024 --n 8188 --k 256 --epilogue bias_gelu --out fp32 --check > $L/S_check_fp32.log 2>&1
echo "plan of 1024x8188x256 bias_gelu fp32: $(grep -E '^launch:' $L/S_check_fp32.log | head -1 | cut -c1-160)"
pack
OUT=$R AB_BIN=$C/G AB_SHAPES=4096x4096x4096,8192x8192x8192,4096x7168x16384 \
  AB_VARIANTS='^(12_grouped_moe|cublaslt)/[^/]*/(tensor|outer|block)/(none|bias_gelu)/(bf16|e4m3)' \
  timeout 400 bash bench/measure_h200.sh 12_grouped_moe run75-S $C/S ab
pack
echo "issue 9 run 76 done ${SECONDS}s"
