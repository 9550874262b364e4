#!/usr/bin/env bash
# Builds issue 9 run 79's programs on the development machine and packs them as build-carry/carry79.tar.xz:
# the checkout's step 12 alone with run79_block_on_vector_kernels.patch (its switch,
# FP8GEMM_RUN79_BLOCK_ON_VECTOR_KERNELS=1, sends the 128 x 256 tile's block-scaled GEMMs to
# WideTileColumnVectors' kernels; unset, the plan is main's): fp8gemm_bench, fp8gemm and the epilogue, exact
# and steps suites (bench/step_alone_carry.sh). About 12 minutes on two cores.
# Usage: [WORK=DIR] bash bench/results/h200/issue9/run79_build.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../../.." && pwd)
bash "$repo/bench/step_alone_carry.sh" "$repo/build-carry/carry79.tar.xz" run79-switch \
  "bench/fp8gemm_bench bench/fp8gemm tests/test_epilogue_gpu tests/test_exact_gpu tests/test_steps_gpu" \
  12_grouped_moe "$here/run79_block_on_vector_kernels.patch"
cp "$here/run79.sh" "$repo/build-carry/run79.sh"
