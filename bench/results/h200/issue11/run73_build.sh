#!/usr/bin/env bash
# Builds issue 11 run 73's programs on the development machine and packs them as build-carry/carry73.tar.xz:
# K = the checkout's step 12 alone with run69_issue_k_block_helper.patch (one helper for the three copies of
# a K block's wgmma issue; ptxas allocates the registers of many kernels differently with it): fp8gemm_bench,
# test_exact_gpu, test_epilogue_gpu, test_steps_gpu. The baseline is run 72's N (its fp8gemm_bench, from
# /tmp/run72_build/pack, whose kernels are the checkout's but for the four it no longer has), packed beside K.
# About 10 minutes on two cores.
# Usage: bash bench/results/h200/issue11/run73_build.sh [WORK_DIR]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../../.." && pwd)
work=${1:-/tmp/run73_build}
commit=$(git -C "$repo" rev-parse --short HEAD)
rm -rf "$work" && mkdir -p "$work/pack/K" "$work/pack/N" "$work/K/steps" "$work/K/bench"
tree=$work/K
for x in CMakeLists.txt CMakePresets.json README.md common docs examples package pytorch tests; do cp -r "$repo/$x" "$tree/"; done
for x in "$repo"/bench/*; do [ "$(basename "$x")" = results ] || cp -r "$x" "$tree/bench/"; done
cp "$repo"/steps/CMakeLists.txt "$repo"/steps/*.sh "$tree/steps/"
cp -r "$repo/steps/12_grouped_moe" "$tree/steps/"
patch -s -p1 -d "$tree" < "$here/run69_issue_k_block_helper.patch"
cmake -G Ninja -S "$tree" -B "$tree/build" -DFP8GEMM_GIT_COMMIT="$commit+issue-k-block" > "$tree/cmake.log"
targets="bench/fp8gemm_bench tests/test_exact_gpu tests/test_epilogue_gpu tests/test_steps_gpu"
# shellcheck disable=SC2086
ninja -C "$tree/build" -j2 $targets > "$tree/build.log"
for t in $targets; do cp "$tree/build/$t" "$work/pack/K/"; done
cp -L /usr/lib/x86_64-linux-gnu/libbenchmark.so.1debian "$work/pack/K/"
cp /tmp/run72_build/pack/N/fp8gemm_bench /tmp/run72_build/pack/N/libbenchmark.so.1debian "$work/pack/N/"
cp /tmp/run72_build/pack/N_commit "$work/pack/N_commit"
mkdir -p "$repo/build-carry"
tar -C "$work/pack" -cJf "$repo/build-carry/carry73.tar.xz" K N N_commit
cp "$here/run73.sh" "$repo/build-carry/run73.sh"
echo "packed: $repo/build-carry/carry73.tar.xz ($(du -h "$repo/build-carry/carry73.tar.xz" | cut -f1))"
