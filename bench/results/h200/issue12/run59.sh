#!/usr/bin/env bash
# Issue 12 run 59: the bytes behind run 58's L2 throughput: step 12 (5648efe) and cuBLASLt at
# 1024 x 4096 x 7168 and 4096^3, one launch each after three, Nsight Compute's memory tables and
# byte counters (L2 sectors read and written by source, DRAM bytes, L1 bytes from the crossbar).
set -u
cd "$(dirname "$0")/.."
C=/tmp/c59
mkdir -p $C && tar -xJf build-carry/carry45.tar.xz -C $C && cp $C/libbenchmark.so.1debian $C/S/
export LD_LIBRARY_PATH=$C/S
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader
mkdir -p $OUT/n
metrics=lts__t_bytes.sum,lts__t_sectors_op_read.sum,lts__t_sectors_op_write.sum,lts__t_sectors_srcunit_tex.sum,lts__t_sectors_srcunit_ltcfabric.sum,lts__t_requests_srcunit_tex.sum,dram__bytes_read.sum,dram__bytes_write.sum,l1tex__m_xbar2l1tex_read_bytes.sum,smsp__inst_executed.sum,sm__cycles_elapsed.avg,gpu__time_duration.sum,lts__t_sectors_lookup_hit.sum,lts__t_sectors_lookup_miss.sum
for shape in "1024 4096 7168" "4096 4096 4096"; do
  read -r m n k <<< "$shape"
  for run in 12 cublaslt; do
    f=$OUT/n/ncu_${run}_${m}x${n}x${k}.txt
    timeout 120 ncu --clock-control none --section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables \
      --metrics $metrics -k regex:'fp8_gemm_kernel|nvjet' --launch-skip 3 --launch-count 1 \
      $C/S/fp8gemm --step $run --m $m --n $n --k $k > $f 2>&1
    echo "$run ${m}x${n}x${k} rc=$? ${SECONDS}s"
    grep -E '^ +(lts__|dram__|l1tex__m|smsp__inst|sm__cycles|gpu__time)' $f | sed 's/^ */    /'
  done
done
tar -C $OUT -czf $OUT/run59_ncu.tar.gz n && rm -rf $OUT/n
