#!/usr/bin/env bash
# issue 11 run 30: where stream-K's time goes (3502d36): Nsight Compute, stream-K vs --split-k 1
set -u
cd "$(dirname "$0")/.."
mkdir -p /tmp/c && tar -xJf build-carry/carry.tar.xz -C /tmp/c
B=/tmp/c/bin
export LD_LIBRARY_PATH=$B
for shape in "4096 7168 16384" "4096 4096 4096" "128 24576 1536"; do
  read -r m n k <<< "$shape"
  for mode in sk dp; do
    extra=""; [ $mode = dp ] && extra="--split-k 1"
    $B/fp8gemm --step 12 --m $m --n $n --k $k $extra 2>&1 | grep -E "^launch:|^time:"
    timeout 120 ncu --clock-control none --section SpeedOfLight --section MemoryWorkloadAnalysis --section LaunchStats \
      --metrics dram__bytes_read.sum,lts__t_sector_hit_rate.pct,sm__cycles_active.avg,sm__cycles_active.max,sm__cycles_active.min,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active \
      -k regex:'fp8_gemm_kernel' --launch-skip 3 --launch-count 1 $B/fp8gemm --step 12 --m $m --n $n --k $k $extra \
      > $OUT/ncu_${m}x${n}x${k}_$mode.txt 2>&1
    echo "ncu $shape $mode rc=$?"
    grep -E "^ +(Duration|DRAM Throughput|L2 Cache Throughput|L2 Hit Rate|Compute \(SM\) Throughput|SM Frequency|dram__bytes_read.sum|lts__t_sector_hit_rate.pct|sm__cycles_active|sm__pipe_tensor)" $OUT/ncu_${m}x${n}x${k}_$mode.txt | sed 's/^ */    /'
  done
done
