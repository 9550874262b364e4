#!/usr/bin/env bash
# Builds issue 11 run 68's programs on the development machine and packs them as build-carry/carry68.tar.xz
# (what run68.sh unpacks): step 12 alone in each tree, four builds of this checkout's commit:
#   H    as it is (fp8gemm_bench)
#   W2   with run68_wide_promoted.patch (fp8gemm_bench, fp8gemm, test_exact_gpu, test_steps_gpu, test_epilogue_gpu)
#   W4   the same, built with -DFP8GEMM_WIDE_QUARTERS (fp8gemm_bench, fp8gemm)
#   W4P  the same, built with -DFP8GEMM_WIDE_QUARTERS_PIPELINED (fp8gemm_bench, fp8gemm)
#   W2B  W2 with run68_wide_block_scales.patch on top (fp8gemm_bench, fp8gemm, test_epilogue_gpu)
# (test_exact_gpu for W2 only: the call carries 64 MiB at most)
# About 30 minutes on two cores. Usage: bash bench/results/h200/issue11/run68_build.sh [WORK_DIR]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../../.." && pwd)
work=${1:-/tmp/run68_build}
commit=$(git -C "$repo" rev-parse --short HEAD)
rm -rf "$work" && mkdir -p "$work/pack"
for v in H W2 W4 W4P W2B; do
  tree=$work/$v
  mkdir -p "$tree/steps" "$tree/bench"
  for x in CMakeLists.txt CMakePresets.json README.md common docs examples package pytorch tests; do cp -r "$repo/$x" "$tree/"; done
  for x in "$repo"/bench/*; do [ "$(basename "$x")" = results ] || cp -r "$x" "$tree/bench/"; done
  cp "$repo"/steps/CMakeLists.txt "$repo"/steps/*.sh "$tree/steps/"
  cp -r "$repo/steps/12_grouped_moe" "$tree/steps/"
  flags=""
  targets="bench/fp8gemm_bench"
  case $v in
    W2) targets+=" bench/fp8gemm tests/test_exact_gpu tests/test_steps_gpu tests/test_epilogue_gpu" ;;
    W4) flags=-DFP8GEMM_WIDE_QUARTERS; targets+=" bench/fp8gemm" ;;
    W4P) flags=-DFP8GEMM_WIDE_QUARTERS_PIPELINED; targets+=" bench/fp8gemm" ;;
    W2B) targets+=" bench/fp8gemm tests/test_epilogue_gpu" ;;
  esac
  [ "$v" = H ] || patch -s -p1 -d "$tree" < "$here/run68_wide_promoted.patch"
  [ "$v" = W2B ] && patch -s -p1 -d "$tree" < "$here/run68_wide_block_scales.patch"
  label=$commit
  [ "$v" = H ] || label="$commit+wide-promoted-$v"
  cmake -G Ninja -S "$tree" -B "$tree/build" -DFP8GEMM_GIT_COMMIT="$label" -DCMAKE_CUDA_FLAGS="$flags" > "$tree/cmake.log"
  # shellcheck disable=SC2086
  ninja -C "$tree/build" -j2 $targets > "$tree/build.log"
  mkdir -p "$work/pack/$v"
  for t in $targets; do cp "$tree/build/$t" "$work/pack/$v/"; done
  echo "$v built ($label): $targets"
done
cp -L /usr/lib/x86_64-linux-gnu/libbenchmark.so.1debian "$work/pack/"
mkdir -p "$repo/build-carry"
tar -C "$work/pack" -cJf "$repo/build-carry/carry68.tar.xz" H W2 W4 W4P W2B libbenchmark.so.1debian
cp "$here/run68.sh" "$repo/build-carry/run68.sh"
echo "packed: $repo/build-carry/carry68.tar.xz ($(du -h "$repo/build-carry/carry68.tar.xz" | cut -f1))"
