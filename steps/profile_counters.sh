#!/usr/bin/env bash
# Profiles one launch of each of steps 01-04 with Nsight Compute on 4096^3 and
# on the decode shape 64 x 2112 x 7168, and writes the counters the chapters
# quote (bank conflicts, shared-memory wavefronts, DRAM bytes, occupancy,
# registers, pipe utilization) to one CSV: step,m,n,k,metric,unit,value.
#
# Usage: steps/profile_counters.sh OUT.csv [FP8GEMM]
#   FP8GEMM  the project's main program (default: build/bench/fp8gemm); each
#            run is `fp8gemm --step NN --m M --n N --k K`.
# Environment: NCU (default ncu), STEPS (default "01 02 03 04").
#
# `--clock-control none` keeps the GPU's own clocks (the benchmark's), and
# `--launch-count 1` with a kernel-name filter profiles only the first launch
# of the step's kernel, so a run takes seconds. Counters this ncu does not
# know are dropped with a warning instead of failing the run.
set -euo pipefail

out="${1:?usage: steps/profile_counters.sh OUT.csv [FP8GEMM]}"
fp8gemm="${2:-build/bench/fp8gemm}"
ncu="${NCU:-ncu}"
steps="${STEPS:-01 02 03 04}"
shapes=("4096 4096 4096" "64 2112 7168")

declare -A kernel_of=(
  [01]=naive_fp8_gemm_kernel
  [02]=lds_tiling_kernel
  [03]=bank_conflicts_kernel
  [04]=double_buffering_kernel
  [05]=wgmma_fp8_gemm_kernel
  [06]=wgmma_fp8_gemm_kernel
)

wanted=(
  gpu__time_duration.sum
  launch__registers_per_thread
  launch__shared_mem_per_block_static
  launch__shared_mem_per_block_dynamic
  launch__occupancy_limit_registers
  launch__occupancy_limit_shared_mem
  sm__warps_active.avg.pct_of_peak_sustained_active
  sm__throughput.avg.pct_of_peak_sustained_elapsed
  dram__throughput.avg.pct_of_peak_sustained_elapsed
  dram__bytes_read.sum
  smsp__inst_executed.sum
  smsp__issue_active.avg.pct_of_peak_sustained_active
  sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active
  sm__inst_executed_pipe_alu.avg.pct_of_peak_sustained_active
  sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active
  smsp__sass_thread_inst_executed_op_ffma_pred_on.sum
  smsp__inst_executed_op_shared_ld.sum
  smsp__inst_executed_op_shared_st.sum
  l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum
  l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum
  l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum
  l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum
  l1tex__data_pipe_lsu_wavefronts_mem_shared.avg.pct_of_peak_sustained_elapsed
  sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active
  sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active
  sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active
  sm__inst_executed_pipe_tensor.sum
  dram__bytes_write.sum
  lts__throughput.avg.pct_of_peak_sustained_elapsed
  lts__t_sectors_srcunit_tex_op_read.sum
)

# Keep the metrics whose base name (before .sum / .avg...) this ncu lists
# (all of them if it lists none: then ncu itself will say what is wrong).
known="$("$ncu" --query-metrics 2> /dev/null | awk '{print $1}' || true)"
metrics=()
for m in "${wanted[@]}"; do
  base="${m%%.*}"
  if [[ -z "$known" || "$base" == launch__* ]] || grep -qx "$base" <<< "$known"; then
    metrics+=("$m")
  else
    echo "profile_counters: this ncu has no metric $base; skipped" >&2
  fi
done
metric_list="$(IFS=,; echo "${metrics[*]}")"

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
echo "step,m,n,k,metric,unit,value" > "$out"
for step in $steps; do
  kernel="${kernel_of[$step]:?no kernel name for step $step}"
  for shape in "${shapes[@]}"; do
    read -r m n k <<< "$shape"
    raw="$tmp/$step-$m-$n-$k.csv"
    echo "== step $step, ${m}x${n}x${k} ($kernel)" >&2
    if ! "$ncu" --clock-control none --launch-count 1 -k "regex:$kernel" --metrics "$metric_list" \
        --csv --page raw "$fp8gemm" --step "$step" --m "$m" --n "$n" --k "$k" > "$raw" 2> "$tmp/err"; then
      echo "profile_counters: ncu failed for step $step ${m}x${n}x${k}:" >&2
      tail -n 5 "$tmp/err" >&2
      continue
    fi
    # ncu's raw page: a header row of names, a row of units, a row of values
    # (after the program's own output, which does not start with "ID").
    python3 - "$raw" "$step" "$m" "$n" "$k" >> "$out" << 'EOF' || true
import csv, sys
path, step, m, n, k = sys.argv[1:]
lines = open(path).read().splitlines()
start = next((i for i, line in enumerate(lines) if line.startswith('"ID"')), None)
if start is None:
    sys.exit(f"profile_counters: no kernel profiled for step {step} {m}x{n}x{k} (see {path})")
rows = list(csv.reader(lines[start:]))
names, units, values = rows[0], rows[1], rows[2]
writer = csv.writer(sys.stdout, lineterminator="\n")
for name, unit, value in zip(names, units, values):
    if "__" in name:  # metrics; the identification columns have no "__"
        writer.writerow([step, m, n, k, name, unit, value.replace(",", "")])
EOF
  done
done
echo "wrote $out" >&2
