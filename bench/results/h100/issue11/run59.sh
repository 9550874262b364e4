#!/usr/bin/env bash
# Issue 11 run 59: run 58's build N (step 12 with the 128 x 112 tile) again, since run 58's A/B JSON
# did not come back (too many files in $OUT): N and N with FP8GEMM_EXPERIMENT_NO_NARROW=1 (the
# committed plan) in turn, twice, on the shapes that take the tile and 4096^3; then Nsight Compute
# on one launch of each at 1024 x 7168 x 2048 and 4096 x 2112 x 7168, promoted and fast: time, SM
# clock, the sectors the L2 is asked for, the bytes it delivers to the SMs, D's write sectors and
# global store instructions.
set -u
cd "$(dirname "$0")/.."
C=/tmp/c58
mkdir -p $C && tar -xJf build-carry/carry58.tar.xz -C $C && cp $C/libbenchmark.so.1debian $C/N/
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv
export LD_LIBRARY_PATH=$C/N FP8GEMM_REQUIRE_GPU=1
mkdir -p $OUT/j
shapes=4096x2112x7168,1024x7168x2048,1024x7168x7168,2048x2112x7168,1024x2112x7168,4096x4096x4096
for round in 1 2; do
  for v in N H; do
    if [ $v = H ]; then export FP8GEMM_EXPERIMENT_NO_NARROW=1; else unset FP8GEMM_EXPERIMENT_NO_NARROW; fi
    timeout 120 $C/N/fp8gemm_bench --steps=12 --shapes=$shapes --benchmark_repetitions=3 \
      --benchmark_min_time=0.05 --benchmark_out=$OUT/run59_ab${round}_$v.json --benchmark_out_format=json \
      > $OUT/j/run59_ab${round}_$v.log 2>&1
    echo "$v round $round rc=$? ${SECONDS}s"
    grep -E "^12_grouped_moe.*_median" $OUT/j/run59_ab${round}_$v.log | awk '{print "  " $1, $2, $3}'
  done
done
metrics=gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,lts__t_sectors_srcunit_tex.sum,l1tex__m_xbar2l1tex_read_bytes.sum,lts__t_sectors_srcunit_tex_op_write.sum,smsp__inst_executed_op_global_st.sum,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active
for shape in "1024 7168 2048" "4096 2112 7168"; do
  read -r m n k <<< "$shape"
  for acc in "" "--fast-accum"; do
    for v in N H; do
      if [ $v = H ]; then export FP8GEMM_EXPERIMENT_NO_NARROW=1; else unset FP8GEMM_EXPERIMENT_NO_NARROW; fi
      name=ncu_${v}_${m}x${n}x${k}${acc:+_fast}
      timeout 90 ncu --clock-control none --metrics $metrics -k regex:'fp8_gemm_kernel' --launch-skip 3 \
        --launch-count 1 $C/N/fp8gemm --step 12 $acc --m $m --n $n --k $k > $OUT/j/$name.txt 2>&1
      echo "$name rc=$?: $(grep -E 'gpu__time_duration|lts__t_sectors_srcunit_tex.sum |l1tex__m_xbar2l1tex_read_bytes|op_write|global_st|gmma' $OUT/j/$name.txt | awk '{print $1 "=" $NF}' | tr '\n' ' ')"
    done
  done
done
unset FP8GEMM_EXPERIMENT_NO_NARROW
tar -C $OUT -czf $OUT/run59_logs.tar.gz j && rm -rf $OUT/j
