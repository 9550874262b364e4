#!/usr/bin/env bash
# Builds issue 9 run 81's programs on the development machine and packs them as build-carry/carry81.tar.xz:
# the checkout's step 12 alone with run81_no_wide.patch (its switch, FP8GEMM_RUN81_NO_WIDE=1, keeps every
# GEMM off the 128 x 256 tile; unset, the plan is main's): fp8gemm_bench and fp8gemm
# (bench/step_alone_carry.sh). About 10 minutes on two cores.
# Usage: [WORK=DIR] bash bench/results/h200/issue9/run81_build.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../../.." && pwd)
bash "$repo/bench/step_alone_carry.sh" "$repo/build-carry/carry81.tar.xz" run81-switch \
  "bench/fp8gemm_bench bench/fp8gemm" 12_grouped_moe "$here/run81_no_wide.patch"
cp "$here/run81.sh" "$repo/build-carry/run81.sh"
