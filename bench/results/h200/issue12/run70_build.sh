#!/usr/bin/env bash
# Builds issue 12 run 70's programs on the development machine and packs them as build-carry/carry70.tar.xz:
# G = the checkout's step 12 alone with run70_wide_grouped.patch (fp8gemm_grouped_bench, test_grouped_gpu,
# fp8gemm). The baseline is run 69's N (build-carry/carry69.tar.xz, ../issue11/run69_build.sh), which
# fp8gemm_grouped_bench is added to there. About 12 minutes on two cores.
# Usage: bash bench/results/h200/issue12/run70_build.sh [WORK_DIR]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../../.." && pwd)
work=${1:-/tmp/run70_build}
commit=$(git -C "$repo" rev-parse --short HEAD)
rm -rf "$work" && mkdir -p "$work/pack/G" "$work/G/steps" "$work/G/bench"
tree=$work/G
for x in CMakeLists.txt CMakePresets.json README.md common docs examples package pytorch tests; do cp -r "$repo/$x" "$tree/"; done
for x in "$repo"/bench/*; do [ "$(basename "$x")" = results ] || cp -r "$x" "$tree/bench/"; done
cp "$repo"/steps/CMakeLists.txt "$repo"/steps/*.sh "$tree/steps/"
cp -r "$repo/steps/12_grouped_moe" "$tree/steps/"
patch -s -p1 -d "$tree" < "$here/run70_wide_grouped.patch"
cmake -G Ninja -S "$tree" -B "$tree/build" -DFP8GEMM_GIT_COMMIT="$commit+wide-grouped" > "$tree/cmake.log"
targets="bench/fp8gemm_grouped_bench tests/test_grouped_gpu bench/fp8gemm"
# shellcheck disable=SC2086
ninja -C "$tree/build" -j2 $targets > "$tree/build.log"
for t in $targets; do cp "$tree/build/$t" "$work/pack/G/"; done
cp -L /usr/lib/x86_64-linux-gnu/libbenchmark.so.1debian "$work/pack/G/"
mkdir -p "$repo/build-carry"
tar -C "$work/pack" -cJf "$repo/build-carry/carry70.tar.xz" G
cp "$here/run70.sh" "$repo/build-carry/run70.sh"
echo "packed: $repo/build-carry/carry70.tar.xz ($(du -h "$repo/build-carry/carry70.tar.xz" | cut -f1))"
