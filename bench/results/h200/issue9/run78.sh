#!/usr/bin/env bash
# Issue 9 run 78 (session of 2026-12-07, thirteenth): the last of the session's device time (under 5 minutes),
# after runs 75-77 could not get a device: run 77's programs (build-carry/carry77.tar.xz), S's epilogue suite
# on step 12, then bias + GELU and the plain epilogue at 4096^3, N and S in turn, twice, each beside its own
# cuBLASLt; mutant 166 if time is left. Every file in one archive, run78_all.tar.gz.
set -u
cd "$(dirname "$0")/.."
C=/tmp/c78
mkdir -p $C && xz -dc build-carry/carry77.tar.xz | tar -xf - -C $C S N M/166_s12_staged_vectors_read_other_buffer
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader
export FP8GEMM_REQUIRE_GPU=1 LD_LIBRARY_PATH=$C/S
R=/tmp/r78
L=$R/run78_logs
mkdir -p $L
pack() { tar -C $R -czf $OUT/run78_all.tar.gz . ; }
timeout 80 $C/S/test_epilogue_gpu --gtest_filter='*12_grouped_moe*' > $L/S_test_epilogue_gpu.log 2>&1
echo "S test_epilogue_gpu rc=$? ${SECONDS}s: $(tail -n 1 $L/S_test_epilogue_gpu.log)"
grep "^\[  FAILED" $L/S_test_epilogue_gpu.log | head -5
pack
for round in 1 2; do
  for b in N S; do
    LD_LIBRARY_PATH=$C/$b timeout 40 $C/$b/fp8gemm_bench --steps=12 --epilogue_variants --shapes=4096x4096x4096 \
      --benchmark_filter='^(12_grouped_moe|cublaslt)/[^/]*/(tensor|block)/(none|bias_gelu)/bf16' \
      --benchmark_repetitions=3 --benchmark_min_time=0.05 --benchmark_out=$R/run78_variants_$b$round.json \
      --benchmark_out_format=json > $L/variants_$b$round.log 2>&1
    echo "variants $b round $round rc=$? ${SECONDS}s"
    grep -E "^12_grouped_moe.*_median" $L/variants_$b$round.log | awk '{print "  " $1, $2, $3}'
    pack
  done
done
timeout 40 $C/M/166_s12_staged_vectors_read_other_buffer/test_epilogue_gpu \
  --gtest_filter='*ColumnVectorTest*12_grouped_moe*' > $L/M_166.log 2>&1
echo "mutant 166 rc=$? ${SECONDS}s (must fail): $(grep -c '^\[  FAILED' $L/M_166.log) FAILED lines"
pack
echo "issue 9 run 78 done ${SECONDS}s"
