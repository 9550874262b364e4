#!/usr/bin/env bash
# Builds issue 9 run 81's programs on the development machine and packs them as build-carry/carry81.tar.xz:
# the checkout's step 12 alone with run81_no_wide.patch (its switch, FP8GEMM_RUN81_NO_WIDE=1, keeps every
# GEMM off the 128 x 256 tile; unset, the plan is main's): fp8gemm_bench and fp8gemm, with the Debian
# libbenchmark.so.1debian they link. About 10 minutes on two cores.
# Usage: bash bench/results/h200/issue9/run81_build.sh [WORK_DIR]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../../.." && pwd)
work=${1:-/tmp/run81_build}
commit=$(git -C "$repo" rev-parse --short HEAD)
rm -rf "$work" && mkdir -p "$work/pack"
bash "$repo/bench/step_alone_tree.sh" "$work/tree" 12_grouped_moe "$here/run81_no_wide.patch"
cmake -G Ninja -S "$work/tree" -B "$work/tree/build" -DFP8GEMM_GIT_COMMIT="$commit+run81-switch" > "$work/cmake.log"
targets="bench/fp8gemm_bench bench/fp8gemm"
# shellcheck disable=SC2086
ninja -C "$work/tree/build" -j2 $targets > "$work/build.log"
for t in $targets; do cp "$work/tree/build/$t" "$work/pack/"; done
cp -L /usr/lib/x86_64-linux-gnu/libbenchmark.so.1debian "$work/pack/"
mkdir -p "$repo/build-carry"
(cd "$work/pack" && tar -cf - ./*) | xz -9e -T2 --lzma2=dict=192MiB > "$repo/build-carry/carry81.tar.xz"
cp "$here/run81.sh" "$repo/build-carry/run81.sh"
echo "packed: $repo/build-carry/carry81.tar.xz ($(du -h "$repo/build-carry/carry81.tar.xz" | cut -f1))"
