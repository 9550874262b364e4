#!/usr/bin/env bash
# Session of 2026-12-06 #3, run 51: Nsight Compute on the masked grouped kernel of one expert and on the
# plain GEMM of the same size (bb66ce3), to find the 5-11 % between them that is not in the K loop.
set -u
cd "$(dirname "$0")/.."
C=/tmp/c51
mkdir -p $C && tar -xJf build-carry/carry51.tar.xz -C $C
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader
export LD_LIBRARY_PATH=$C FP8GEMM_REQUIRE_GPU=1
L=$OUT/j; mkdir -p $L
S="--section SpeedOfLight --section LaunchStats --section Occupancy --section MemoryWorkloadAnalysis --section WarpStateStats --section SchedulerStats --section ComputeWorkloadAnalysis"
for shp in "1024 7168 2048" "1024 4096 7168"; do
  read -r m n k <<< "$shp"
  timeout 120 ncu --clock-control none $S --print-details all -k regex:fp8_gemm_kernel --launch-skip 3 --launch-count 1 \
    $C/fp8gemm --step 12 --m $m --n $n --k $k > $L/ncu_plain_${m}x${n}x${k}.txt 2>&1
  echo "plain $shp rc=$? ${SECONDS}s: $(grep -E '^ +Duration' $L/ncu_plain_${m}x${n}x${k}.txt | head -1)"
  timeout 120 ncu --clock-control none $S --print-details all -k regex:fp8_gemm_kernel --launch-skip 3 --launch-count 1 \
    $C/fp8gemm_grouped_bench --shapes=1x${m}x${n}x${k}/masked --benchmark_filter='^12_' > $L/ncu_masked_1x${m}x${n}x${k}.txt 2>&1
  echo "masked $shp rc=$? ${SECONDS}s: $(grep -E '^ +Duration' $L/ncu_masked_1x${m}x${n}x${k}.txt | head -1)"
  for v in plain masked; do
    if [ $v = plain ]; then cmd="$C/fp8gemm --step 12 --m $m --n $n --k $k"; else cmd="$C/fp8gemm_grouped_bench --shapes=1x${m}x${n}x${k}/masked --benchmark_filter=^12_"; fi
    timeout 150 ncu --clock-control none --section SourceCounters --section WarpStateStats -k regex:fp8_gemm_kernel \
      --launch-skip 3 --launch-count 1 --page source --print-source sass --csv $cmd 2>&1 | gzip > $OUT/run51_ncu_source_${v}_${m}x${n}x${k}.csv.gz
    echo "source $v rc=$? ${SECONDS}s"
  done
done
timeout 120 ncu --clock-control none $S --print-details all -k regex:fp8_gemm_kernel --launch-skip 3 --launch-count 1 \
  $C/fp8gemm_grouped_bench --shapes=4x256x4096x7168/masked --benchmark_filter='^12_' > $L/ncu_masked_4x256x4096x7168.txt 2>&1
echo "masked 4x256 rc=$? ${SECONDS}s: $(grep -E '^ +Duration' $L/ncu_masked_4x256x4096x7168.txt | head -1)"
# the grouped bench and the plain equivalents, timed as the benchmark times them
timeout 60 $C/fp8gemm_grouped_bench --shapes=1x1024x7168x2048/masked,1x1024x4096x7168/masked --benchmark_filter='^12_' \
  --benchmark_out=$L/run51_grouped.json --benchmark_out_format=json > $L/run51_grouped.log 2>&1
echo "grouped rc=$?"; grep -E "_median" $L/run51_grouped.log | awk '{print "  " $1, $2, $3}'
timeout 60 $C/fp8gemm_bench --shapes=1024x7168x2048,1024x4096x7168 --benchmark_filter='^12_' \
  --benchmark_out=$L/run51_plain.json --benchmark_out_format=json > $L/run51_plain.log 2>&1
echo "plain rc=$?"; grep -E "_median" $L/run51_plain.log | awk '{print "  " $1, $2, $3}'
for f in $L/ncu_*.txt; do echo "== $(basename $f)"; grep -E '^ +(Duration|Elapsed Cycles|SM Active Cycles|DRAM Throughput|L2 Hit Rate|Compute \(SM\) Throughput|Grid Size|Cluster Size|Registers Per Thread|Static Shared Memory Per Block|Dynamic Shared Memory Per Block|Waves Per SM|Warp Cycles Per Issued Instruction|Issued Ipc Active|No Eligible) ' $f | sed 's/^ */  /'; done
tar -C $OUT -czf $OUT/run51_logs.tar.gz j && rm -rf $L
