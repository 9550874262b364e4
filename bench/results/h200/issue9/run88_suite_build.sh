#!/usr/bin/env bash
# Builds the whole GPU suite of one checkout on the development machine and packs it for run 88's `suite` part:
# build-carry/carry88s.tar.xz, the eight test programs whose names end in _gpu (every step linked in, as ctest
# runs them), flat. TREE: a clone already configured in TREE/build (run88_build.sh's); without it, a new clone. Either way
# the programs are built here (about 15 minutes on two cores from nothing).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../../.." && pwd)
cd "$repo"
programs="test_exact_gpu test_epilogue_gpu test_steps_gpu test_grouped_gpu test_sweep_gpu test_example_layer_gpu
  test_fp8_convert_gpu test_quantize_gpu"
tree=${TREE:-}
if [ -z "$tree" ]; then
  tree=$(mktemp -d)/tree
  git clone -q "$repo" "$tree"
  cmake -G Ninja -S "$tree" -B "$tree/build" > /dev/null
fi
echo "suite of $(git -C "$tree" rev-parse --short HEAD)"
# shellcheck disable=SC2046
ninja -C "$tree/build" -j2 $(printf 'tests/%s ' $programs) > "$tree/suite_build.log"
rm -rf "$tree/pack" && mkdir -p "$tree/pack" build-carry
for p in $programs; do cp "$tree/build/tests/$p" "$tree/pack/"; done
git -C "$tree" rev-parse --short HEAD > "$tree/pack/COMMIT"  # run88.sh prints it with the tallies
(cd "$tree/pack" && tar -cf - ./*) | xz -9e -T2 --lzma2=dict=192MiB > build-carry/carry88s.tar.xz
echo "packed: build-carry/carry88s.tar.xz ($(du -h build-carry/carry88s.tar.xz | cut -f1))"
