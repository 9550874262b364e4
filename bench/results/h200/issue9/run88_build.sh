#!/usr/bin/env bash
# Builds run 88's programs on the development machine from a checkout of 5d75640 or later (about 25 minutes on
# two cores with the ladder): build-carry/carry88s.tar.xz (the whole GPU suite, run88_suite_build.sh, whose
# test_epilogue_gpu is the one the tests part runs on every step),
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
# Each program packed flat with the libbenchmark it links, as bench/step_alone_carry.sh packs them.
pack() {  # pack CARRY TARGET
  rm -rf "$work/pack" && mkdir -p "$work/pack" "$(dirname "$1")"
  cp "$work/tree/build/$2" /usr/lib/x86_64-linux-gnu/libbenchmark.so.1debian "$work/pack/"
  (cd "$work/pack" && tar -cf - ./*) | xz -9e -T2 > "$1"
}
# The whole GPU suite (run88.sh's `suite` part; its tests part takes the epilogue suite from it too).
TREE="$work/tree" bash "$here/run88_suite_build.sh"
if [ ! -e build-carry/carry87ladder.tar.xz ]; then  # the ladder's fp8gemm_bench, only where it is missing
  ninja -C "$work/tree/build" -j2 bench/fp8gemm_bench >> "$work/build.log"
  pack build-carry/carry87ladder.tar.xz bench/fp8gemm_bench
fi
bash bench/step_alone_carry.sh build-carry/carry88m170.tar.xz mutant170 tests/test_epilogue_gpu 12_grouped_moe \
  tests/mutants/170_s12_narrow_tile_vectors_at_128_columns.patch
[ -e build-carry/carry82c2.tar.xz ] || bash bench/step_alone_carry.sh build-carry/carry82c2.tar.xz main \
  "bench/fp8gemm_bench bench/fp8gemm bench/fp8gemm_grouped_bench" 12_grouped_moe
cp "$here"/run84.sh "$here"/run85.sh "$here"/run87.sh "$here"/run88.sh build-carry/
echo "packed: build-carry/carry88s.tar.xz, carry88m170.tar.xz, carry82c2.tar.xz, carry87ladder.tar.xz"
