#!/usr/bin/env bash
# Builds issue 9 run 76's programs on the development machine and packs them as build-carry/carry76.tar.xz
# (run77_pack.sh repacks it with run 75's for run77.sh): G = the checkout's step 12 alone with
# run75_staged_vectors.patch (run 75's S) and run76_gelu_in_fours.patch (the 128 x 256 tile's bias kernels
# evaluate the tanh form's GELU four values at a time, one reciprocal for the four): fp8gemm_bench,
# test_epilogue_gpu, test_exact_gpu and the CPU test_epilogue. The other build of the comparison is run 75's
# S (build-carry/carry75.tar.xz of run75_build.sh). About 8 minutes on two cores.
# Usage: bash bench/results/h200/issue9/run76_build.sh [WORK_DIR]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../../.." && pwd)
work=${1:-/tmp/run76_build}
commit=$(git -C "$repo" rev-parse --short HEAD)
rm -rf "$work" && mkdir -p "$work/pack/G"
tree=$work/G
bash "$repo/bench/step_alone_tree.sh" "$tree" 12_grouped_moe "$here/run75_staged_vectors.patch" \
  "$here/run76_gelu_in_fours.patch"
cmake -G Ninja -S "$tree" -B "$tree/build" -DFP8GEMM_GIT_COMMIT="$commit+gelu-in-fours" > "$tree/cmake.log"
targets="bench/fp8gemm_bench tests/test_epilogue_gpu tests/test_exact_gpu tests/test_epilogue"
# shellcheck disable=SC2086
ninja -C "$tree/build" -j2 $targets > "$tree/build.log"
for t in $targets; do cp "$tree/build/$t" "$work/pack/G/"; done
"$tree/build/tests/test_epilogue" --gtest_filter='Gelu*' | tail -n 1
cp -L /usr/lib/x86_64-linux-gnu/libbenchmark.so.1debian "$work/pack/G/"
mkdir -p "$repo/build-carry"
tar -C "$work/pack" -cJf "$repo/build-carry/carry76.tar.xz" G
echo "packed: $repo/build-carry/carry76.tar.xz ($(du -h "$repo/build-carry/carry76.tar.xz" | cut -f1))"
