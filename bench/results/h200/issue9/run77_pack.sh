#!/usr/bin/env bash
# Packs issue 9 run 77's programs from build-carry/carry75.tar.xz (run75_build.sh) and carry76.tar.xz
# (run76_build.sh) into build-carry/carry77.tar.xz: one xz stream with a 192 MiB dictionary, in which the
# builds' mostly identical kernels compress to little (36 MB for what took 82 MB in the two archives).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../../.." && pwd)
work=$(mktemp -d)
tar -xJf "$repo/build-carry/carry75.tar.xz" -C "$work"
tar -xJf "$repo/build-carry/carry76.tar.xz" -C "$work"
(cd "$work" && tar -cf - S/test_epilogue_gpu M/*/test_epilogue_gpu G/test_epilogue_gpu S/fp8gemm_bench G/fp8gemm_bench \
  N/fp8gemm_bench S/fp8gemm S/libbenchmark.so.1debian G/libbenchmark.so.1debian N/libbenchmark.so.1debian N_commit) |
  xz -9e -T2 --lzma2=dict=192MiB > "$repo/build-carry/carry77.tar.xz"
rm -rf "$work"
cp "$here/run77.sh" "$repo/build-carry/run77.sh"
echo "packed: $repo/build-carry/carry77.tar.xz ($(du -h "$repo/build-carry/carry77.tar.xz" | cut -f1))"
