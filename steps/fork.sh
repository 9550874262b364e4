#!/usr/bin/env bash
# Forks a step: copies steps/SOURCE to steps/NEW and retitles the copy's
# chapter, so that it no longer claims to be SOURCE. Nothing else needs an
# edit: the step's number and name come from the folder's name.
#
#   steps/fork.sh 06_tma_warp_specialization 90_mine
#   cmake -S . -B build && cmake --build build && build/bench/fp8gemm --list
#
# NEW must be NN_name with a number no other step has (the registry refuses a
# second step with a taken number).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
if [[ $# -ne 2 ]]; then
  sed -n '2,10p' "$0" >&2
  exit 2
fi
source="${1%/}"
new="${2%/}"
source="${source#steps/}"
new="${new#steps/}"
[[ -d "$here/$source" ]] || { echo "fork.sh: no step folder steps/$source" >&2; exit 1; }
[[ "$new" =~ ^([0-9][0-9])_[A-Za-z0-9_]+$ ]] || { echo "fork.sh: '$new' is not NN_name" >&2; exit 1; }
number="${BASH_REMATCH[1]}"
[[ ! -e "$here/$new" ]] || { echo "fork.sh: steps/$new exists" >&2; exit 1; }
for taken in "$here"/"$number"_*/; do
  [[ -d "$taken" ]] && { echo "fork.sh: number $number is taken by steps/$(basename "$taken")" >&2; exit 1; }
done
cp -r "$here/$source" "$here/$new"
chapter="$here/$new/README.md"
if [[ -f "$chapter" ]]; then
  # "# Step 06 — ..." becomes "# Step 90 — 90_mine (forked from 06_tma_warp_specialization)".
  sed -i "1s/^# .*/# Step $number — $new (forked from $source)/" "$chapter"
fi
echo "steps/$new: a copy of steps/$source; re-run cmake to build it as step $((10#$number))"
