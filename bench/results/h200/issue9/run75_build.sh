#!/usr/bin/env bash
# Builds issue 9 run 75's programs on the development machine and packs them as build-carry/carry75.tar.xz
# (run77_pack.sh repacks it with run 76's for run77.sh): S = the checkout's step 12 alone with run75_staged_vectors.patch (the 128 x 256
# tile's bias and B's outer-vector scales copied into shared memory while the main loop runs; ColumnVectorTest;
# mutants 166 and 167. Landed as ba22bbc, then taken back out of main as this patch, since no device could be
# started to run it): fp8gemm_bench, fp8gemm, test_epilogue_gpu, test_exact_gpu; the test program of GPU
# mutants 166 and 167 (from the patch), each built with its mutant patch on S (M/<name>/); and
# N = run 72's fp8gemm_bench (c7020b4, whose step 12 kernels for these GEMMs are the landed ones
# before this change), taken from build-carry/carry72.tar.xz of ../issue11/run72_build.sh. About 20 minutes on
# two cores.
# Usage: bash bench/results/h200/issue9/run75_build.sh [WORK_DIR]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../../.." && pwd)
work=${1:-/tmp/run75_build}
commit=$(git -C "$repo" rev-parse --short HEAD)
rm -rf "$work" && mkdir -p "$work/pack/S" "$work/pack/M" "$work/pack/N" "$work/c72"
tar -xJf "$repo/build-carry/carry72.tar.xz" -C "$work/c72" N/fp8gemm_bench N_commit
cp "$work/c72/N/fp8gemm_bench" "$work/pack/N/"
cp "$work/c72/N_commit" "$work/pack/N_commit"
bash "$repo/bench/step_alone_tree.sh" "$work/S" 12_grouped_moe "$here/run75_staged_vectors.patch"
cmake -G Ninja -S "$work/S" -B "$work/S/build" -DFP8GEMM_GIT_COMMIT="$commit+staged-vectors" > "$work/S/cmake.log"
targets="bench/fp8gemm_bench bench/fp8gemm tests/test_epilogue_gpu tests/test_exact_gpu"
# shellcheck disable=SC2086
ninja -C "$work/S/build" -j2 $targets > "$work/S/build.log"
for t in $targets; do cp "$work/S/build/$t" "$work/pack/S/"; done
echo "S built ($commit)"
for name in 166_s12_staged_vectors_read_other_buffer 167_s12_staged_vectors_fallback_one_column_on; do
  tree=$work/$name
  bash "$repo/bench/step_alone_tree.sh" "$tree" 12_grouped_moe "$here/run75_staged_vectors.patch" \
    "$work/S/tests/mutants/$name.patch"
  cmake -G Ninja -S "$tree" -B "$tree/build" -DFP8GEMM_GIT_COMMIT="$commit+mutant-${name%%_*}" > "$tree/cmake.log"
  mkdir -p "$work/pack/M/$name"
  ninja -C "$tree/build" -j2 tests/test_epilogue_gpu > "$tree/build.log"
  cp "$tree/build/tests/test_epilogue_gpu" "$work/pack/M/$name/"
  echo "mutant $name built"
done
cp -L /usr/lib/x86_64-linux-gnu/libbenchmark.so.1debian "$work/pack/S/"
cp -L /usr/lib/x86_64-linux-gnu/libbenchmark.so.1debian "$work/pack/N/"
mkdir -p "$repo/build-carry"
tar -C "$work/pack" -cJf "$repo/build-carry/carry75.tar.xz" S M N N_commit
echo "packed: $repo/build-carry/carry75.tar.xz ($(du -h "$repo/build-carry/carry75.tar.xz" | cut -f1))"
