#!/usr/bin/env bash
# Builds issue 9 run 71's programs on the development machine and packs them as build-carry/carry71.tar.xz:
# E = the checkout's step 12 alone with run71_wide_column_vectors.patch (the 128 x 256 tile taking a bias and
# B's outer-vector scales, read 128 columns at a time): fp8gemm_bench, fp8gemm, test_epilogue_gpu,
# test_exact_gpu; and EM = E with the second chunk reading the first chunk's entries (a mutant the epilogue
# suite must catch): test_epilogue_gpu. The baseline is run 69's N (build-carry/carry69.tar.xz). About 15
# minutes on two cores.
# Usage: bash bench/results/h200/issue9/run71_build.sh [WORK_DIR]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../../.." && pwd)
work=${1:-/tmp/run71_build}
commit=$(git -C "$repo" rev-parse --short HEAD)
rm -rf "$work" && mkdir -p "$work/pack/E" "$work/pack/EM"
tree_of() {  # step 12 alone, as the checkout has it, with the patch
  local tree=$1
  mkdir -p "$tree/steps" "$tree/bench"
  for x in CMakeLists.txt CMakePresets.json README.md common docs examples package pytorch tests; do cp -r "$repo/$x" "$tree/"; done
  for x in "$repo"/bench/*; do [ "$(basename "$x")" = results ] || cp -r "$x" "$tree/bench/"; done
  cp "$repo"/steps/CMakeLists.txt "$repo"/steps/*.sh "$tree/steps/"
  cp -r "$repo/steps/12_grouped_moe" "$tree/steps/"
  patch -s -p1 -d "$tree" < "$here/run71_wide_column_vectors.patch"
}
tree_of "$work/E"
cmake -G Ninja -S "$work/E" -B "$work/E/build" -DFP8GEMM_GIT_COMMIT="$commit+wide-columns" > "$work/E/cmake.log"
targets="bench/fp8gemm_bench bench/fp8gemm tests/test_epilogue_gpu tests/test_exact_gpu"
# shellcheck disable=SC2086
ninja -C "$work/E/build" -j2 $targets > "$work/E/build.log"
for t in $targets; do cp "$work/E/build/$t" "$work/pack/E/"; done
echo "E built ($commit + run71 patch)"
tree_of "$work/EM"
file=common/sm90/fragment_epilogue.cuh
sed -i 's/const int chunk_col0 = col0 + chunk \* kChunkN;/const int chunk_col0 = col0;/' "$work/EM/$file"
if cmp -s "$work/E/$file" "$work/EM/$file"; then echo "the mutant's sed changed nothing"; exit 1; fi
cmake -G Ninja -S "$work/EM" -B "$work/EM/build" -DFP8GEMM_GIT_COMMIT="$commit+wide-columns-mutant" > "$work/EM/cmake.log"
ninja -C "$work/EM/build" -j2 tests/test_epilogue_gpu > "$work/EM/build.log"
cp "$work/EM/build/tests/test_epilogue_gpu" "$work/pack/EM/"
echo "EM built"
cp -L /usr/lib/x86_64-linux-gnu/libbenchmark.so.1debian "$work/pack/E/"
mkdir -p "$repo/build-carry"
tar -C "$work/pack" -cJf "$repo/build-carry/carry71.tar.xz" E EM
cp "$here/run71.sh" "$repo/build-carry/run71.sh"
echo "packed: $repo/build-carry/carry71.tar.xz ($(du -h "$repo/build-carry/carry71.tar.xz" | cut -f1))"
