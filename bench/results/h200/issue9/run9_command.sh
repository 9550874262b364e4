#!/usr/bin/env bash
# Session 9, call 1: step 12 at 3ae9120 (bias loaded at once, one arrival per
# warp with block scales) against f5ac28b's build (base) and a tanh.approx GELU
# variant of 3ae9120 (tanh): correctness of the new build, sanitizers, an
# alternating A/B, and issue 9's epilogue variants on step 12.
set -uo pipefail
cd build-carry
tar -xJf bins.tar.xz
export LD_LIBRARY_PATH=$PWD/lib
export FP8GEMM_REQUIRE_GPU=1
L=$OUT/logs; mkdir -p $L
trap 'tar -C "$OUT" -czf "$OUT/logs.tar.gz" logs && rm -rf "$L"' EXIT
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv | tee $L/nvidia_smi.txt
S=12_grouped_moe
for t in test_exact_gpu test_epilogue_gpu test_steps_gpu; do
  timeout 150 new/$t --gtest_filter="*${S}*" > $L/new_$t.log 2>&1
  echo "new $t rc=$? ${SECONDS}s: $(tail -n 1 $L/new_$t.log)"; grep -E "^\[  FAILED  \]" $L/new_$t.log | head -5
done
timeout 150 tanh/test_epilogue_gpu --gtest_filter="*${S}*" > $L/tanh_test_epilogue_gpu.log 2>&1
echo "tanh test_epilogue_gpu rc=$? ${SECONDS}s: $(tail -n 1 $L/tanh_test_epilogue_gpu.log)"; grep -E "^\[  FAILED  \]" $L/tanh_test_epilogue_gpu.log | head -8
f1="*SplitKTest*${S}*37x1000x1008*:*SplitKTest*${S}_block*255x1000x1008*"
f2="*EpilogueTest*${S}_block_bias_gelu_e4m3_2048x2048x2048*:*EpilogueTest*${S}_block*"
for tool in memcheck racecheck; do
  for f in "$f1" "$f2"; do
    timeout 150 compute-sanitizer --tool $tool new/test_epilogue_gpu --gtest_filter="$f" > $L/${tool}_${#f}.log 2>&1
    echo "$tool ${f:0:40} rc=$? ${SECONDS}s: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $L/${tool}_${#f}.log | tail -1) $(grep -cE '^\[       OK \]' $L/${tool}_${#f}.log) passed"
  done
done
for round in 1 2; do
  for shape in "4096 4096 4096" "4096 7168 16384"; do
    read -r m n k <<< "$shape"
    for cfg in "tensor none" "tensor bias_gelu" "block none" "block bias_gelu" "outer none"; do
      read -r sc ep <<< "$cfg"
      for b in base new tanh; do
        timeout 60 $b/fp8gemm --step 12 --m $m --n $n --k $k --scales $sc --epilogue $ep > $L/ab.tmp 2>&1
        echo "ab round $round ${m}x${n}x${k} $sc $ep $b rc=$? $(grep -E '^time:|TFLOP' $L/ab.tmp | head -2 | tr '\n' ' ')" | tee -a $L/ab.log
      done
    done
  done
done
cp $L/ab.log $OUT/ab.log
timeout 300 new/fp8gemm_bench --steps=12 --epilogue_variants \
  --shapes=4096x4096x4096,8192x8192x8192,4096x7168x16384,64x2112x7168 --benchmark_repetitions=3 \
  --benchmark_min_time=0.05 --benchmark_out=$OUT/bench_epilogue_12.json --benchmark_out_format=json > $L/bench_epilogue_12.log 2>&1
echo "bench rc=$? ${SECONDS}s"
grep -E "_median" $L/bench_epilogue_12.log | awk '{print "  " $1, $2, $3}' | grep -E "4096x4096x4096|7168x16384" | head -70
