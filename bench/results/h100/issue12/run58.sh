#!/usr/bin/env bash
# Issue 12 run 58: which kernel cuBLASLt runs, and with what grid, at the plain shapes of the masked
# layout's single experts (1024 x 4096 x 7168, 1024 x 7168 x 2048) and at 4096 x 2112 x 7168 and the
# short-K 4096 x 32768 x 512, beside step 12 (5648efe, run 45's build S): Nsight Compute's launch
# statistics and speed of light, one launch each after three.
set -u
cd "$(dirname "$0")/.."
C=/tmp/c47
mkdir -p $C && tar -xJf build-carry/carry45.tar.xz -C $C && cp $C/libbenchmark.so.1debian $C/S/
export LD_LIBRARY_PATH=$C/S
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv
mkdir -p $OUT/n
for shape in "1024 4096 7168" "1024 7168 2048" "4096 2112 7168" "4096 32768 512"; do
  read -r m n k <<< "$shape"
  for run in 12 cublaslt; do
    f=$OUT/n/ncu_${run}_${m}x${n}x${k}.txt
    timeout 100 ncu --clock-control none --section LaunchStats --section SpeedOfLight --section Occupancy \
      -k regex:'fp8_gemm_kernel|nvjet' --launch-skip 3 --launch-count 1 $C/S/fp8gemm --step $run --m $m --n $n --k $k > $f 2>&1
    echo "$run ${m}x${n}x${k} rc=$? ${SECONDS}s"
    grep -E '^  [a-z_]*nvjet[^ ]*|^  void fp8gemm|^ +(Duration|Grid Size|Cluster Size|Block Size|Registers Per Thread|Dynamic Shared Memory Per Block|SM Frequency|Compute \(SM\) Throughput|Memory Throughput) ' $f | cut -c1-160 | sed 's/^ */    /'
  done
done
tar -C $OUT -czf $OUT/run58_ncu.tar.gz n && rm -rf $OUT/n
