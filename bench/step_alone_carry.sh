#!/usr/bin/env bash
# Builds programs of one step alone (bench/step_alone_tree.sh, with the patches) and packs them, with the
# Debian libbenchmark.so.1debian they link, into CARRY: one xz stream that the device tool carries to the GPU
# machine (its 64 MiB limit), where `xz -dc CARRY | tar -xf - -C DIR` unpacks them flat into DIR. LABEL goes
# after the checkout's short commit in the programs' recorded commit. The tree and the build stay in WORK
# (default: a new temporary directory), which the script names when it is done.
# Usage: bash bench/step_alone_carry.sh CARRY LABEL "TARGET..." STEP [PATCH...]
#   e.g. bash bench/step_alone_carry.sh build-carry/carry79.tar.xz run79-switch \
#          "bench/fp8gemm_bench bench/fp8gemm" 12_grouped_moe run79.patch
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
carry=$(realpath -m "$1")
label=$2
targets=$3
step=$4
shift 4
work=${WORK:-$(mktemp -d)}
commit=$(git -C "$repo" rev-parse --short HEAD)
rm -rf "$work/tree" "$work/pack" && mkdir -p "$work/pack"
bash "$repo/bench/step_alone_tree.sh" "$work/tree" "$step" "$@"
cmake -G Ninja -S "$work/tree" -B "$work/tree/build" -DFP8GEMM_GIT_COMMIT="$commit+$label" > "$work/cmake.log"
# shellcheck disable=SC2086
ninja -C "$work/tree/build" -j2 $targets > "$work/build.log"
for t in $targets; do cp "$work/tree/build/$t" "$work/pack/"; done
cp -L /usr/lib/x86_64-linux-gnu/libbenchmark.so.1debian "$work/pack/"
mkdir -p "$(dirname "$carry")"
(cd "$work/pack" && tar -cf - ./*) | xz -9e -T2 --lzma2=dict=192MiB > "$carry"
echo "packed: $carry ($(du -h "$carry" | cut -f1)); tree and build in $work"
