#!/usr/bin/env bash
# Copies the checkout into DEST with one step only (the top-level build files, common, docs, examples,
# package, pytorch, tests, bench without its results, steps/CMakeLists.txt and steps/*.sh, and
# steps/STEP), then applies each PATCH in turn (git diffs, or mutant files: the part from their first
# `diff --git` on). A step alone builds in minutes where the whole ladder takes most of an hour on
# two cores: the issue runs under bench/results/ build their programs in such trees.
# Usage: bash bench/step_alone_tree.sh DEST STEP [PATCH...]
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
dest=$1
step=$2
shift 2
mkdir -p "$dest/steps" "$dest/bench"
for x in CMakeLists.txt CMakePresets.json README.md common docs examples package pytorch tests; do
  cp -r "$repo/$x" "$dest/"
done
for x in "$repo"/bench/*; do [ "$(basename "$x")" = results ] || cp -r "$x" "$dest/bench/"; done
cp "$repo"/steps/CMakeLists.txt "$repo"/steps/*.sh "$dest/steps/"
cp -r "$repo/steps/$step" "$dest/steps/"
for p in "$@"; do sed -n '/^diff --git/,$p' "$p" | patch -s -p1 -d "$dest"; done
