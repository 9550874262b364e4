#!/usr/bin/env bash
# Issue 11 run 56: (1) bench/tma_alignment_probe, one process per case: a TMA load or store of one
# 8 x 128-byte box whose inner coordinate is 0-48 bytes past a 16-byte boundary, swizzled or not,
# 1- or 2-byte elements (why run 55's row-group store faulted); (2) on an H200, the committed step 12
# (6514a50: kernel code as of cd9bac5, the masked cluster along M of 70bfa21 included) beside cuBLASLt:
# the grouped, bench, deepseek and rows phases of bench/measure_h200.sh.
set -u
cd "$(dirname "$0")/.."
C=/tmp/c56
mkdir -p $C && tar -xJf build-carry/carry56.tar.xz -C $C && cp $C/libbenchmark.so.1debian $C/F/
export LD_LIBRARY_PATH=$C/F
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv
probe_json=$OUT/run56_tma_alignment_probe.json
echo "[" > $probe_json
first=1
for op in load store; do for swizzle in 128 0; do for eb in 1 2; do for offset in 0 2 4 8 16 32 48; do
  if [ $((offset % eb)) -ne 0 ]; then continue; fi
  line=$(timeout 30 $C/F/tma_alignment_probe --op $op --offset $offset --swizzle $swizzle --element-bytes $eb 2>&1 | tail -n 1)
  echo "$line"
  if [ $first -eq 0 ]; then echo "," >> $probe_json; fi
  first=0
  echo "$line" >> $probe_json
done; done; done; done
echo "]" >> $probe_json
echo "probe done ${SECONDS}s"
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  commit=$(cat $C/F/COMMIT)
  OUT=$OUT BENCH_STEPS=12 timeout $((590 - SECONDS)) bash bench/measure_h200.sh 12_grouped_moe $commit $C/F grouped bench deepseek rows
fi
