#!/usr/bin/env bash
# issue 11 run 37: the cluster launches of steps 08, 11 and 12 through
# common/sm90/cluster_launch.h (the commit after 80edeb6): the three steps' suites, the grouped
# suite, the plans, and the three steps beside cuBLASLt on four shapes.
# A record of what ran: it ran as build-carry/run41.sh from the repository root (hence the cd),
# with its programs in build-carry/carry41.tar.xz, which is not committed.
set -u
cd "$(dirname "$0")/.."
mkdir -p /tmp/c && tar -xJf build-carry/carry41.tar.xz -C /tmp/c
export LD_LIBRARY_PATH=/tmp/c/B
for s in 08_split_k 11_cluster_multicast 12_grouped_moe; do
  OUT=$OUT/$s bash bench/measure_h200.sh $s cluster-launch /tmp/c/B tests checks
done
timeout 120 /tmp/c/B/test_grouped_gpu > $OUT/test_grouped_gpu.log 2>&1
echo "test_grouped_gpu rc=$?: $(tail -n 1 $OUT/test_grouped_gpu.log)"
timeout 200 /tmp/c/B/fp8gemm_bench --steps=08,11,12 --shapes=4096x4096x4096,64x2112x7168,128x7168x16384,1024x1024x16384 \
  --benchmark_repetitions=3 --benchmark_min_time=0.05 --benchmark_out=$OUT/bench_cluster_launch.json \
  --benchmark_out_format=json > $OUT/bench_cluster_launch.log 2>&1
echo "bench rc=$?"; grep -E "_median" $OUT/bench_cluster_launch.log | awk '{print "  " $1, $2, $3}'
cd $OUT && tar -czf /tmp/all.tar.gz . && find . -mindepth 1 -delete && mv /tmp/all.tar.gz . ; ls -la $OUT
