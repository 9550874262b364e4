#!/usr/bin/env bash
# Builds issue 11 run 72's programs on the development machine and packs them as build-carry/carry72.tar.xz
# (what run72.sh unpacks): step 12 alone in a tree of this checkout (N: fp8gemm_bench, fp8gemm,
# fp8gemm_grouped_bench and the exact, epilogue, shape and grouped suites: the kernels of issue 9 run 71 and
# issue 12 run 70 as landed), and the test program of GPU mutant 165 (the grouped wide tile), built with its
# patch (M/<name>/, as tests/mutants/run_prebuilt.sh expects). About 15 minutes on two cores.
# Usage: bash bench/results/h200/issue11/run72_build.sh [WORK_DIR]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../../.." && pwd)
work=${1:-/tmp/run72_build}
commit=$(git -C "$repo" rev-parse --short HEAD)
rm -rf "$work" && mkdir -p "$work/pack/N" "$work/pack/M"
tree_of() {  # step 12 alone, as the checkout has it
  local tree=$1
  mkdir -p "$tree/steps" "$tree/bench"
  for x in CMakeLists.txt CMakePresets.json README.md common docs examples package pytorch tests; do cp -r "$repo/$x" "$tree/"; done
  for x in "$repo"/bench/*; do [ "$(basename "$x")" = results ] || cp -r "$x" "$tree/bench/"; done
  cp "$repo"/steps/CMakeLists.txt "$repo"/steps/*.sh "$tree/steps/"
  cp -r "$repo/steps/12_grouped_moe" "$tree/steps/"
}
tree_of "$work/N"
cmake -G Ninja -S "$work/N" -B "$work/N/build" -DFP8GEMM_GIT_COMMIT="$commit" > "$work/N/cmake.log"
targets="bench/fp8gemm_bench bench/fp8gemm bench/fp8gemm_grouped_bench tests/test_exact_gpu tests/test_epilogue_gpu tests/test_steps_gpu tests/test_grouped_gpu"
# shellcheck disable=SC2086
ninja -C "$work/N/build" -j2 $targets > "$work/N/build.log"
for t in $targets; do cp "$work/N/build/$t" "$work/pack/N/"; done
echo "N built ($commit)"
for name in 165_s12_wide_grouped_second_half_zero; do
  tree=$work/$name
  tree_of "$tree"
  sed -n '/^diff --git/,$p' "$repo/tests/mutants/$name.patch" | patch -s -p1 -d "$tree"
  programs=$(sed -n 's/^targets: //p' "$repo/tests/mutants/$name.patch")
  cmake -G Ninja -S "$tree" -B "$tree/build" -DFP8GEMM_GIT_COMMIT="$commit+mutant-${name%%_*}" > "$tree/cmake.log"
  mkdir -p "$work/pack/M/$name"
  for p in $programs; do
    ninja -C "$tree/build" -j2 "tests/$p" > "$tree/build.log"
    cp "$tree/build/tests/$p" "$work/pack/M/$name/"
  done
  echo "mutant $name built: $programs"
done
cp -L /usr/lib/x86_64-linux-gnu/libbenchmark.so.1debian "$work/pack/N/"
echo "$commit" > "$work/pack/N_commit"
mkdir -p "$repo/build-carry"
tar -C "$work/pack" -cJf "$repo/build-carry/carry72.tar.xz" N M N_commit
cp "$here/run72.sh" "$repo/build-carry/run72.sh"
echo "packed: $repo/build-carry/carry72.tar.xz ($(du -h "$repo/build-carry/carry72.tar.xz" | cut -f1))"
