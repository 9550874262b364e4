#!/usr/bin/env bash
# Builds run 86's programs on the development machine from a checkout of main whose step 12 is C2 (3eb0d26 or
# later), step 12 alone: A (main as it is) as build-carry/carry86a.tar.xz, E (run86_one_wave_late_wait.patch)
# as build-carry/carry86e.tar.xz, each with fp8gemm_bench, fp8gemm, fp8gemm_grouped_bench and the four GPU
# suites; copies run86.sh to build-carry/. About 25 minutes on two cores.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../../.." && pwd)
cd "$repo"
targets="bench/fp8gemm_bench bench/fp8gemm bench/fp8gemm_grouped_bench tests/test_epilogue_gpu tests/test_exact_gpu"
targets+=" tests/test_steps_gpu tests/test_grouped_gpu"
bash bench/step_alone_carry.sh build-carry/carry86a.tar.xz main "$targets" 12_grouped_moe
bash bench/step_alone_carry.sh build-carry/carry86e.tar.xz run86-one-wave "$targets" 12_grouped_moe \
  "$here/run86_one_wave_late_wait.patch"
cp "$here/run86.sh" build-carry/
