#!/usr/bin/env bash
# Issue 11 run 68: the 128 x 256 tile with promotion (run68_wide_promoted.patch on 8a36a9c), in two forms:
# W2 (two halves of 64 x 128 a K block, one wgmma set) and W4 (four quarters of 64 x 64, two sets; the same
# patch built with -DFP8GEMM_WIDE_QUARTERS), against H (the committed kernels). Called as build-carry/run68.sh
# with build-carry/carry68.tar.xz holding W2/ (fp8gemm_bench, fp8gemm, test_exact_gpu, test_steps_gpu,
# test_epilogue_gpu), W4/ (fp8gemm_bench, fp8gemm, test_exact_gpu), H/ (fp8gemm_bench) and libbenchmark.
set -u
cd "$(dirname "$0")/.."
C=/tmp/c68
mkdir -p $C && tar -xJf build-carry/carry68.tar.xz -C $C
for v in W2 W4 H; do cp $C/libbenchmark.so.1debian $C/$v/; done
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv
export FP8GEMM_REQUIRE_GPU=1
L=$OUT/run68
mkdir -p $L
f12='*12_grouped_moe*'
for v in W2 W4; do
  for shape in "4096 4096 4096" "2048 4096 512" "1024 4096 7168" "4096 32768 512" "1000 2000 1008"; do
    read -r m n k <<< "$shape"
    LD_LIBRARY_PATH=$C/$v timeout 60 $C/$v/fp8gemm --step 12 --m $m --n $n --k $k --check >> $L/${v}_checks.log 2>&1
    echo "$v fp8gemm --check ${m}x${n}x${k}: rc=$?"
  done
  grep -E "^launch:|max|error" $L/${v}_checks.log | cut -c1-200 | head -12
done
for t in test_exact_gpu test_steps_gpu test_epilogue_gpu; do
  LD_LIBRARY_PATH=$C/W2 timeout 150 $C/W2/$t --gtest_filter="$f12" > $L/W2_$t.log 2>&1
  echo "W2 $t rc=$? ${SECONDS}s: $(grep -E 'ran\.' $L/W2_$t.log | tail -n 1) $(tail -n 1 $L/W2_$t.log)"; grep "^\[  FAILED" $L/W2_$t.log | head -5
done
LD_LIBRARY_PATH=$C/W4 timeout 150 $C/W4/test_exact_gpu --gtest_filter="$f12" > $L/W4_test_exact_gpu.log 2>&1
echo "W4 test_exact_gpu rc=$? ${SECONDS}s: $(grep -E 'ran\.' $L/W4_test_exact_gpu.log | tail -n 1) $(tail -n 1 $L/W4_test_exact_gpu.log)"
for tool in memcheck racecheck; do
  LD_LIBRARY_PATH=$C/W2 timeout 120 compute-sanitizer --tool $tool $C/W2/fp8gemm --step 12 --m 2048 --n 4096 --k 512 --check > $L/W2_${tool}.log 2>&1
  echo "$tool W2 2048x4096x512 rc=$? ${SECONDS}s: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $L/W2_${tool}.log | tail -1)"
done
tar -C $OUT -czf $OUT/run68_logs.tar.gz run68 && rm -rf $L
shapes=4096x4096x4096,8192x8192x8192,4096x7168x16384,4096x4096x7168,4096x32768x512,2048x8192x7168,1024x4096x7168,4096x2112x7168
for round in 1 2; do
  for v in H W2 W4; do
    LD_LIBRARY_PATH=$C/$v timeout 150 $C/$v/fp8gemm_bench --steps=12 --shapes=$shapes --benchmark_repetitions=3 \
      --benchmark_min_time=0.05 --benchmark_out=$OUT/run68_ab${round}_$v.json --benchmark_out_format=json \
      > $OUT/run68_ab${round}_$v.log 2>&1
    echo "$v round $round rc=$? ${SECONDS}s"
    grep -E "^12_grouped_moe/.*_median" $OUT/run68_ab${round}_$v.log | awk '{print "  " $1, $2, $3}'
  done
done
echo "issue 11 run 68 done ${SECONDS}s"
