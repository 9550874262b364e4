#!/usr/bin/env bash
# Builds run 85's programs on the development machine, from a checkout whose step 12 is C2 (3eb0d26 or
# later, with run 83's kernels): build-carry/carry82c2.tar.xz (step 12 alone as it is: the bars' programs, as
# run83's C2) and build-carry/carry85m.tar.xz (mutant 162's epilogue suite and mutant 163's exact suite, each
# step 12 alone with its mutant), and copies run84.sh and run85.sh to build-carry/. About 35 minutes on two
# cores. Then: `BARS_S=240 bash build-carry/run85.sh` on the device (carry the two archives and the scripts).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../../.." && pwd)
cd "$repo"
bash bench/step_alone_carry.sh build-carry/carry82c2.tar.xz main \
  "bench/fp8gemm_bench bench/fp8gemm bench/fp8gemm_grouped_bench" 12_grouped_moe
pack=$(mktemp -d)
WORK=$pack/m162 bash bench/step_alone_carry.sh "$pack/m162.tar.xz" mutant162 tests/test_epilogue_gpu 12_grouped_moe \
  tests/mutants/162_s12_wide_second_half_first_half_scale.patch
WORK=$pack/m163 bash bench/step_alone_carry.sh "$pack/m163.tar.xz" mutant163 tests/test_exact_gpu 12_grouped_moe \
  tests/mutants/163_s12_wide_second_half_reads_first_half_of_b.patch
mkdir -p "$pack/out"
cp "$pack/m162/tree/build/tests/test_epilogue_gpu" "$pack/out/m162_test_epilogue_gpu"
cp "$pack/m163/tree/build/tests/test_exact_gpu" "$pack/out/m163_test_exact_gpu"
cp -L /usr/lib/x86_64-linux-gnu/libbenchmark.so.1debian "$pack/out/"
(cd "$pack/out" && tar -cf - ./*) | xz -9e -T2 > build-carry/carry85m.tar.xz
cp "$here/run84.sh" "$here/run85.sh" build-carry/
echo "packed: build-carry/carry82c2.tar.xz, build-carry/carry85m.tar.xz"
