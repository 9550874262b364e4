#!/usr/bin/env bash
# Issue 9 run 81 (prepared in the session of 2026-12-07, fourteenth): where cuBLASLt's K loop keeps the tensor
# cores fed that step 12's does not (run 80: at a locked clock cuBLASLt's 128 x 128 coopA kernel takes 9-12 %
# fewer cycles at 4096 x 7168 x 16384). Programs: step 12 alone with run81_no_wide.patch (its switch,
# FP8GEMM_RUN81_NO_WIDE=1, keeps every GEMM off the 128 x 256 tile), build-carry/carry81.tar.xz of
# run81_build.sh. 1. Nsight Compute at the locked base clock, with the stall samples per SASS instruction,
# on cuBLASLt's kernel, step 12's 128 x 256 kernel and step 12's 128 x 128 kernel (the switch), per-tensor
# scales. 2. The same GEMMs timed, step 12 with and without the switch, beside cuBLASLt, twice.
set -u
cd "$(dirname "$0")/.."
C=/tmp/c81
mkdir -p $C && xz -dc build-carry/carry81.tar.xz | tar -xf - -C $C
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu --format=csv
export FP8GEMM_REQUIRE_GPU=1 LD_LIBRARY_PATH=$C
R=/tmp/r81
mkdir -p $R/run81_logs
pack() { tar -C $R -czf $OUT/run81_all.tar.gz . ; }
shape="--m 4096 --n 7168 --k 16384"
for who in "cublaslt nvjet|xmma|sm90_ 0 cublaslt" "12 fp8_gemm_kernel 0 12_wide" "12 fp8_gemm_kernel 1 12_128"; do
  set -- $who
  FP8GEMM_RUN81_NO_WIDE=$3 timeout 90 ncu --clock-control base --section SpeedOfLight --section WarpStateStats \
    --section SchedulerStats --section InstructionStats --section MemoryWorkloadAnalysis --section SourceCounters \
    -k "regex:$2" --launch-skip 3 --launch-count 1 $C/fp8gemm --step $1 $shape > $R/run81_ncu_base_$4.txt 2>&1
  echo "ncu $4 rc=$? ${SECONDS}s"
  grep -E '^ +(Duration|Elapsed Cycles|SM Frequency|Executed Ipc Active|Issue Slots Busy|Registers Per Thread) ' \
    $R/run81_ncu_base_$4.txt | head -6 | sed 's/^ */    /'
  grep -m1 -E "launch:" $R/run81_ncu_base_$4.txt | cut -c1-160
  FP8GEMM_RUN81_NO_WIDE=$3 timeout 90 ncu --clock-control base --section SourceCounters --section WarpStateStats \
    -k "regex:$2" --launch-skip 3 --launch-count 1 --page source --print-source sass --csv $C/fp8gemm --step $1 \
    $shape 2>&1 | gzip > $R/run81_ncu_source_$4.csv.gz
  echo "ncu source $4 rc=$? ${SECONDS}s"
  pack
done
shapes=4096x7168x16384,4096x4096x7168,8192x8192x8192,4096x4096x4096
for round in 1 2; do
  for s in 0 1; do
    FP8GEMM_RUN81_NO_WIDE=$s timeout 120 $C/fp8gemm_bench --steps=12 --shapes=$shapes --benchmark_repetitions=3 \
      --benchmark_min_time=0.05 --benchmark_out=$R/run81_ab_no_wide${s}_$round.json --benchmark_out_format=json \
      > $R/run81_logs/ab_no_wide${s}_$round.log 2>&1
    echo "bench no_wide=$s round $round rc=$? ${SECONDS}s"
    grep -E "^12_grouped_moe/[^_]*_median" $R/run81_logs/ab_no_wide${s}_$round.log | awk '{print "  " $1, $2, $3}'
  done
  pack
done
echo "issue 9 run 81 done ${SECONDS}s"
