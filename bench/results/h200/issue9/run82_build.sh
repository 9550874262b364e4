#!/usr/bin/env bash
# Builds issue 9 run 82's programs on the development machine: B, the checkout's step 12 alone with
# run82_hoisted_stage_wait.patch (fp8gemm_bench, fp8gemm, fp8gemm_grouped_bench and the four GPU suites) as
# build-carry/carry82.tar.xz, and A's grouped benchmark, the checkout's step 12 alone as it is, as
# build-carry/carry82a.tar.xz (A's other programs are run 81's, build-carry/carry81.tar.xz of run81_build.sh,
# whose switch left unset plans as main), and C, with run82_hoisted_descriptors.patch (the whole change, B's
# included), as build-carry/carry82c.tar.xz. Run it on a checkout without the patches applied; about 30 minutes
# on two cores.
# Usage: bash bench/results/h200/issue9/run82_build.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../../.." && pwd)
bash "$repo/bench/step_alone_carry.sh" "$repo/build-carry/carry82.tar.xz" run82-hoisted \
  "bench/fp8gemm_bench bench/fp8gemm bench/fp8gemm_grouped_bench tests/test_epilogue_gpu tests/test_exact_gpu tests/test_steps_gpu tests/test_grouped_gpu" \
  12_grouped_moe "$here/run82_hoisted_stage_wait.patch"
bash "$repo/bench/step_alone_carry.sh" "$repo/build-carry/carry82c.tar.xz" run82-hoisted-descriptors \
  "bench/fp8gemm_bench bench/fp8gemm bench/fp8gemm_grouped_bench tests/test_epilogue_gpu tests/test_exact_gpu tests/test_steps_gpu tests/test_grouped_gpu" \
  12_grouped_moe "$here/run82_hoisted_descriptors.patch"
bash "$repo/bench/step_alone_carry.sh" "$repo/build-carry/carry82a.tar.xz" main "bench/fp8gemm_grouped_bench" 12_grouped_moe
cp "$here/run82.sh" "$repo/build-carry/run82.sh"
# Mutant 168 on C (`run82.sh mutant`), built from a checkout with C applied (4486e74 and later have it):
#   bash bench/step_alone_carry.sh build-carry/carry82m.tar.xz run82-hoisted-descriptors+mutant168 \
#     "tests/test_exact_gpu tests/test_epilogue_gpu" 12_grouped_moe tests/mutants/168_s12_wide_second_half_next_block_scales.patch
# D (`SIDES="C D" TAG=run82d run82.sh perf`, `run82.sh tests D`), from a checkout without C, as C's:
#   bash bench/step_alone_carry.sh build-carry/carry82d.tar.xz run82-landed-or-waited "<C's targets>" \
#     12_grouped_moe bench/results/h200/issue9/run82_landed_or_waited.patch
