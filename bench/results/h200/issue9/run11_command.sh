#!/usr/bin/env bash
# Session 9, call 3: step 12 at 45e2bf7 (cpa: the block scales copied with
# cp.async, the bias loaded at once) against f5ac28b's build (base): step 12's
# suites and sanitizers, mutant 139 (step 07 adding the next column's bias),
# an alternating A/B of the epilogue variants, issue 9's variants at four
# shapes, and the 18 DeepSeek-V3 shapes beside cuBLASLt.
set -uo pipefail
cd build-carry
tar -xJf bins3.tar.xz
export LD_LIBRARY_PATH=$PWD/lib
export FP8GEMM_REQUIRE_GPU=1
L=$OUT/logs; mkdir -p $L
trap 'tar -C "$OUT" -czf "$OUT/logs.tar.gz" logs && rm -rf "$L"' EXIT
S=12_grouped_moe
for t in test_exact_gpu test_epilogue_gpu test_steps_gpu; do
  timeout 150 cpa/$t --gtest_filter="*${S}*" > $L/cpa_$t.log 2>&1
  echo "cpa $t rc=$? ${SECONDS}s: $(tail -n 1 $L/cpa_$t.log)"; grep -E "^\[  FAILED  \]" $L/cpa_$t.log | head -5
done
f="*SplitKTest*${S}*37x1000x1008*:*SplitKTest*${S}_block*255x1000x1008*:*EpilogueTest*${S}_block*:*EpilogueTest*${S}_agroup*:*EpilogueTest*${S}_arow*"
for tool in memcheck racecheck; do
  timeout 150 compute-sanitizer --tool $tool cpa/test_epilogue_gpu --gtest_filter="$f" > $L/${tool}_cpa.log 2>&1
  echo "$tool rc=$? ${SECONDS}s: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $L/${tool}_cpa.log | tail -1) $(grep -cE '^\[       OK \]' $L/${tool}_cpa.log) passed"
done
timeout 100 m139/test_epilogue_gpu --gtest_filter='*07_fused_epilogue_*' > $L/mutant_139_test_epilogue_gpu.log 2>&1
echo "mutant 139 rc=$? ${SECONDS}s: $(grep -cE '^\[  FAILED  \]' $L/mutant_139_test_epilogue_gpu.log) failed lines, $(tail -n 1 $L/mutant_139_test_epilogue_gpu.log)"
for round in 1 2; do
  for b in base cpa; do
    timeout 150 $b/fp8gemm_bench --steps=12 --epilogue_variants --shapes=4096x4096x4096,4096x7168x16384 \
      --benchmark_filter='^(12_grouped_moe|cublaslt)/' --benchmark_repetitions=3 --benchmark_min_time=0.05 \
      --benchmark_out=$OUT/ab_${b}_$round.json --benchmark_out_format=json > $L/ab_${b}_$round.log 2>&1
    echo "ab $b $round rc=$? ${SECONDS}s"
  done
done
timeout 200 cpa/fp8gemm_bench --steps=12 --epilogue_variants \
  --shapes=4096x4096x4096,8192x8192x8192,4096x7168x16384,64x2112x7168 --benchmark_repetitions=3 \
  --benchmark_min_time=0.05 --benchmark_out=$OUT/bench_epilogue_12.json --benchmark_out_format=json > $L/bench_epilogue_12.log 2>&1
echo "bench epilogue rc=$? ${SECONDS}s"
ds=""
for m in 64 128 4096; do for nk in 2112x7168 24576x1536 32768x512 7168x16384 4096x7168 7168x2048; do ds+="${ds:+,}${m}x${nk}"; done; done
timeout 200 cpa/fp8gemm_bench --steps=12 --shapes="$ds" --benchmark_repetitions=3 --benchmark_min_time=0.05 \
  --benchmark_out=$OUT/bench_deepseek.json --benchmark_out_format=json > $L/bench_deepseek.log 2>&1
echo "bench deepseek rc=$? ${SECONDS}s"
