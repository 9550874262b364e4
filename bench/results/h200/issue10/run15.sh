#!/usr/bin/env bash
# issue 10 run 15: the 128 x 64 tile as plan_launch now chooses it (build B, the commit
# after 8fe3651) against 8fe3651 (A): B's suites, sanitizers and grouped suite, then
# both builds alternating on the M = 64 / 128 DeepSeek-V3 shapes, then B on the 18 shapes.
# A record of what ran: it ran as build-carry/run39.sh from the repository root (hence the cd),
# with its programs in build-carry/carry39.tar.xz, which is not committed.
set -u
cd "$(dirname "$0")/.."
mkdir -p /tmp/c && tar -xJf build-carry/carry39.tar.xz -C /tmp/c
nvidia-smi --query-gpu=clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv
OUT=$OUT/s bash bench/measure_h200.sh 12_grouped_moe medium /tmp/c/B tests checks sanitize
LD_LIBRARY_PATH=/tmp/c/B timeout 120 /tmp/c/B/test_grouped_gpu > $OUT/s/test_grouped_gpu.log 2>&1
echo "test_grouped_gpu rc=$?: $(tail -n 1 $OUT/s/test_grouped_gpu.log)"
for shape in "128 7168 2048" "128 24576 1536" "128 7168 16384" "128 32768 512" "100 1000 1008"; do
  read -r m n k <<< "$shape"
  LD_LIBRARY_PATH=/tmp/c/B timeout 30 /tmp/c/B/fp8gemm --step 12 --m $m --n $n --k $k --check 2>&1 | grep -E "^launch:|check" | head -2
done > $OUT/s/plans.log; cat $OUT/s/plans.log
tar -C $OUT -czf $OUT/suites.tar.gz s && rm -rf $OUT/s
AB_BIN=/tmp/c/B AB_SHAPES=64x2112x7168,64x24576x1536,64x32768x512,64x7168x16384,64x4096x7168,64x7168x2048,128x2112x7168,128x24576x1536,128x32768x512,128x7168x16384,128x4096x7168,128x7168x2048,1024x1024x16384,4096x4096x4096 \
  OUT=$OUT bash bench/measure_h200.sh 12_grouped_moe 8fe3651 /tmp/c/A ab
OUT=$OUT/d bash bench/measure_h200.sh 12_grouped_moe medium /tmp/c/B deepseek
mv $OUT/d/bench_deepseek.json $OUT/; rm -rf $OUT/d
cd $OUT && tar -czf /tmp/all.tar.gz . && find . -mindepth 1 -delete && mv /tmp/all.tar.gz . ; ls -la $OUT
