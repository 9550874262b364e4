#!/usr/bin/env bash
# Issue 9 run 80 (session of 2026-12-07, fourteenth): why step 12's block-scaled GEMM at 4096 x 7168 x 16384
# runs faster with bias + GELU than without, in one kernel (run 79's B: WideTileColumnVectors' kernel for
# both, FP8GEMM_RUN79_BLOCK_ON_VECTOR_KERNELS=1). Run 79's programs (build-carry/carry79.tar.xz of
# run79_build.sh). 1. Power and clock: nvidia-smi sampling every 50 ms while fp8gemm_bench runs each case
# for 2 s (step 12 and cuBLASLt, per-tensor and block scales, none and bias + GELU). 2. Nsight Compute on
# one launch of each block-scaled case, the SM clock locked at base (--clock-control base) and free
# (none): if the faster one stays faster at a locked clock, the clock is not the reason. 3. Step 12 and
# cuBLASLt (per-tensor scales) at the locked clock. Usage: run80.sh [power]
set -u
cd "$(dirname "$0")/.."
C=/tmp/c80
mkdir -p $C && xz -dc build-carry/carry79.tar.xz | tar -xf - -C $C
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu --format=csv
export FP8GEMM_REQUIRE_GPU=1 LD_LIBRARY_PATH=$C FP8GEMM_RUN79_BLOCK_ON_VECTOR_KERNELS=1
R=/tmp/r80
L=$R/run80_logs
mkdir -p $L
pack() { tar -C $R -czf $OUT/run80_all.tar.gz . ; }
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu --format=csv -lms 50 > $L/smi.csv 2>&1 &
smi=$!
(while true; do date +%H:%M:%S.%N; nvidia-smi -q -d PERFORMANCE | grep -v "^ *$" | tail -n +6; sleep 0.5; done) \
  > $L/smi_reasons.log 2>&1 &
reasons=$!
for c in 12_grouped_moe/4096x7168x16384/tensor/none/bf16 12_grouped_moe/4096x7168x16384/tensor/bias_gelu/bf16 \
  12_grouped_moe/4096x7168x16384/block/none/bf16 12_grouped_moe/4096x7168x16384/block/bias_gelu/bf16 \
  cublaslt/4096x7168x16384/tensor/none/bf16 cublaslt/4096x7168x16384/block/none/bf16; do
  echo "start $c $(date +%Y/%m/%d\ %H:%M:%S.%N)" >> $L/cases.log
  timeout 60 $C/fp8gemm_bench --steps=12 --epilogue_variants --shapes=4096x7168x16384 --benchmark_filter="^$c" \
    --benchmark_repetitions=1 --benchmark_min_time=2 --benchmark_out=$R/run80_power_${c//\//_}.json \
    --benchmark_out_format=json > $L/power_${c//\//_}.log 2>&1
  echo "end $c rc=$? $(date +%Y/%m/%d\ %H:%M:%S.%N)" >> $L/cases.log
  sleep 1
done
kill $smi $reasons
python3 - $L <<'PY'
import sys, datetime
L = sys.argv[1]
rows = [l.strip().split(", ") for l in open(f"{L}/smi.csv") if l[:1].isdigit()]
def t(s): return datetime.datetime.strptime(s[:23], "%Y/%m/%d %H:%M:%S.%f")
cases = {}
for line in open(f"{L}/cases.log"):
    w = line.split()
    if w[0] == "start": cases[w[1]] = [t(w[2] + " " + w[3])]
    else: cases[w[1]].append(t(w[3] + " " + w[4]))
for c, (a, b) in cases.items():
    # the middle of the case: past its problem set-up and warm-up, before its end
    sel = [r for r in rows if a + (b - a) * 0.5 <= t(r[0]) <= b - datetime.timedelta(seconds=0.2)]
    if not sel: print(c, "no samples"); continue
    mhz = sorted(int(r[1].split()[0]) for r in sel); w = sorted(float(r[2].split()[0]) for r in sel)
    print(f"{c}: {len(sel)} samples, SM clock median {mhz[len(mhz)//2]} MHz (min {mhz[0]}), power median {w[len(w)//2]:.0f} W (max {w[-1]:.0f})")
PY
grep -h "_median" $L/power_*.log | awk '{print "  " $1, $2, $3}'
pack
# `run80.sh power` stops here: the power part alone (how it ran the second time, on the warm machine).
if [ "${1:-}" = power ]; then echo "issue 9 run 80, power only, done ${SECONDS}s"; exit 0; fi
for cc in base none; do
  for ep in none bias_gelu; do
    timeout 90 ncu --clock-control $cc --section SpeedOfLight --section WarpStateStats --section SchedulerStats \
      --print-details all -k regex:fp8_gemm_kernel --launch-skip 3 --launch-count 1 $C/fp8gemm --step 12 \
      --m 4096 --n 7168 --k 16384 --scales block --epilogue $ep > $R/run80_ncu_${cc}_block_$ep.txt 2>&1
    echo "ncu $cc block $ep rc=$? ${SECONDS}s"
    grep -E '^ +(Duration|Elapsed Cycles|SM Frequency|Compute \(SM\) Throughput|Issue Slots Busy|Warp Cycles Per Issued Instruction) ' \
      $R/run80_ncu_${cc}_block_$ep.txt | head -6 | sed 's/^ */    /'
  done
  pack
done
# Per-tensor scales, step 12 against cuBLASLt at the locked base clock: who takes fewer cycles when
# neither can trade power for clock (the free-clock timings say 1.00x).
for who in "12 grouped_moe_fp8_gemm_kernel" "cublaslt nvjet|xmma|sm90_"; do
  set -- $who
  timeout 60 ncu --clock-control base --section SpeedOfLight -k "regex:$2" --launch-skip 3 --launch-count 1 \
    $C/fp8gemm --step $1 --m 4096 --n 7168 --k 16384 > $R/run80_ncu_base_tensor_$1.txt 2>&1
  echo "ncu base tensor $1 rc=$? ${SECONDS}s"
  grep -E '^ +(Duration|Elapsed Cycles|SM Frequency) ' $R/run80_ncu_base_tensor_$1.txt | head -3 | sed 's/^ */    /'
done
pack
left=$((500 - SECONDS))
if [ $left -gt 60 ]; then
  timeout $left ncu --clock-control base --section SourceCounters --section WarpStateStats -k regex:fp8_gemm_kernel \
    --launch-skip 3 --launch-count 1 --page source --print-source sass --csv $C/fp8gemm --step 12 \
    --m 4096 --n 7168 --k 16384 --scales block --epilogue none 2>&1 | gzip > $R/run80_ncu_source_block_none.csv.gz
  echo "ncu source block none rc=$? ${SECONDS}s"
  pack
fi
echo "issue 9 run 80 done ${SECONDS}s"
