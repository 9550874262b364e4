#!/usr/bin/env bash
# Issue 11 run 48: the cluster along M wherever it takes no more rounds than side by side (T:
# 5648efe with `<=` for `<` in plan_launch's choice, so every plain unsplit GEMM without block
# scales on the 128 x 128 tile whose rounds tie takes it) against 5648efe (S), alternating twice;
# then Nsight Compute's L2 counters of T at 1024 x 4096 x 7168 beside run 59's.
set -u
cd "$(dirname "$0")/.."
C=/tmp/c48
mkdir -p $C && tar -xJf build-carry/carry48.tar.xz -C $C
export LD_LIBRARY_PATH=$C FP8GEMM_REQUIRE_GPU=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv
mkdir -p $OUT/j
$C/T/fp8gemm --step 12 --m 1024 --n 4096 --k 7168 --check 2>&1 | grep -E "^launch:|PASS|FAIL" | cut -c1-300
$C/T/fp8gemm --step 12 --m 4096 --n 4096 --k 4096 --check 2>&1 | grep -E "^launch:|PASS|FAIL" | cut -c1-300
shapes=1024x4096x7168,1024x7168x2048,4096x4096x4096,4096x4096x7168,8192x8192x8192,4096x7168x16384,2048x8192x7168,4096x32768x512
for round in 1 2; do
  for v in S T; do
    timeout 200 $C/$v/fp8gemm_bench --steps=12 --shapes=$shapes --benchmark_repetitions=3 \
      --benchmark_min_time=0.05 --benchmark_out=$OUT/j/run48_ab${round}_$v.json --benchmark_out_format=json \
      > $OUT/j/run48_ab${round}_$v.log 2>&1
    echo "$v round $round rc=$? ${SECONDS}s"
    grep -E "^12_grouped_moe.*_median" $OUT/j/run48_ab${round}_$v.log | awk '{print "  " $1, $2, $3}'
  done
done
metrics=lts__t_sectors_srcunit_tex.sum,lts__t_sectors_srcunit_ltcfabric.sum,l1tex__m_xbar2l1tex_read_bytes.sum,dram__bytes_read.sum,gpu__time_duration.sum
for v in S T; do
  timeout 100 ncu --clock-control none --metrics $metrics -k regex:fp8_gemm_kernel --launch-skip 3 --launch-count 1 \
    $C/$v/fp8gemm --step 12 --m 1024 --n 4096 --k 7168 > $OUT/j/run48_ncu_$v.txt 2>&1
  echo "ncu $v rc=$?"; grep -E '^ +(lts__|dram__|l1tex__m|gpu__time)' $OUT/j/run48_ncu_$v.txt | sed 's/^ */    /'
done
tar -C $OUT -czf $OUT/run48_json.tar.gz j && rm -rf $OUT/j
