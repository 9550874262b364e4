#!/usr/bin/env bash
# Builds issue 9 run 79's programs on the development machine and packs them as build-carry/carry79.tar.xz:
# the checkout's step 12 alone with run79_block_on_vector_kernels.patch (its switch,
# FP8GEMM_RUN79_BLOCK_ON_VECTOR_KERNELS=1, sends the 128 x 256 tile's block-scaled GEMMs to
# WideTileColumnVectors' kernels; unset, the plan is main's): fp8gemm_bench, fp8gemm and the epilogue, exact
# and steps suites, with the Debian libbenchmark.so.1debian they link. About 12 minutes on two cores.
# Usage: bash bench/results/h200/issue9/run79_build.sh [WORK_DIR]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../../.." && pwd)
work=${1:-/tmp/run79_build}
commit=$(git -C "$repo" rev-parse --short HEAD)
rm -rf "$work" && mkdir -p "$work/pack"
bash "$repo/bench/step_alone_tree.sh" "$work/tree" 12_grouped_moe "$here/run79_block_on_vector_kernels.patch"
cmake -G Ninja -S "$work/tree" -B "$work/tree/build" -DFP8GEMM_GIT_COMMIT="$commit+run79-switch" > "$work/cmake.log"
targets="bench/fp8gemm_bench bench/fp8gemm tests/test_epilogue_gpu tests/test_exact_gpu tests/test_steps_gpu"
# shellcheck disable=SC2086
ninja -C "$work/tree/build" -j2 $targets > "$work/build.log"
for t in $targets; do cp "$work/tree/build/$t" "$work/pack/"; done
cp -L /usr/lib/x86_64-linux-gnu/libbenchmark.so.1debian "$work/pack/"
mkdir -p "$repo/build-carry"
(cd "$work/pack" && tar -cf - ./*) | xz -9e -T2 --lzma2=dict=192MiB > "$repo/build-carry/carry79.tar.xz"
cp "$here/run79.sh" "$repo/build-carry/run79.sh"
echo "packed: $repo/build-carry/carry79.tar.xz ($(du -h "$repo/build-carry/carry79.tar.xz" | cut -f1))"
