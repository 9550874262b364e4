#!/usr/bin/env bash
# Builds run 88's programs on the development machine from a checkout of 5d75640 or later (about 60 minutes on
# two cores with the ladder): build-carry/carry88e.tar.xz (test_epilogue_gpu of every step),
# build-carry/carry88m170.tar.xz (step 12 alone with mutant 170, its epilogue suite), and, if they are
# missing, run 85's and run 87's (carry82c2.tar.xz: run85_build.sh; carry87ladder.tar.xz: fp8gemm_bench of
# every step). Copies the run scripts to build-carry/.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../../.." && pwd)
cd "$repo"
work=$(mktemp -d)
git clone -q "$repo" "$work/tree"
cmake -G Ninja -S "$work/tree" -B "$work/tree/build" > "$work/cmake.log"
ninja -C "$work/tree/build" -j2 tests/test_epilogue_gpu bench/fp8gemm_bench > "$work/build.log"
mkdir -p "$work/e" "$work/l"
cp "$work/tree/build/tests/test_epilogue_gpu" "$work/e/"
cp "$work/tree/build/bench/fp8gemm_bench" "$work/l/"
cp -L /usr/lib/x86_64-linux-gnu/libbenchmark.so.1debian "$work/e/"
cp -L /usr/lib/x86_64-linux-gnu/libbenchmark.so.1debian "$work/l/"
mkdir -p build-carry
(cd "$work/e" && tar -cf - ./*) | xz -9e -T2 > build-carry/carry88e.tar.xz
[ -e build-carry/carry87ladder.tar.xz ] || (cd "$work/l" && tar -cf - ./*) | xz -9e -T2 > build-carry/carry87ladder.tar.xz
bash bench/step_alone_carry.sh build-carry/carry88m170.tar.xz mutant170 tests/test_epilogue_gpu 12_grouped_moe \
  tests/mutants/170_s12_narrow_tile_vectors_at_128_columns.patch
[ -e build-carry/carry82c2.tar.xz ] || bash bench/step_alone_carry.sh build-carry/carry82c2.tar.xz main \
  "bench/fp8gemm_bench bench/fp8gemm bench/fp8gemm_grouped_bench" 12_grouped_moe
cp "$here"/run84.sh "$here"/run85.sh "$here"/run87.sh "$here"/run88.sh build-carry/
echo "packed: build-carry/carry88e.tar.xz, carry88m170.tar.xz, carry82c2.tar.xz, carry87ladder.tar.xz"
