#!/usr/bin/env bash
# Issue 9 run 87: runs 85 and 86 in the order the card that comes makes worth it, one device call.
# Mutants 162 and 163 first (any card); then, on an H200, run 84's bars again (what the issues' bars are
# stated on, and C2 has not run there), else run 86 (A against E on the same card). The other half goes in
# the next call: `bash build-carry/run87.sh bars` or `bash build-carry/run87.sh e`. `run87.sh ladder`: the whole
# ladder at ac5d063 (bench/measure_h200.sh's ladder phase, build-carry/carry87ladder.tar.xz), if time is left.
# Carry build-carry/{carry85m,carry82c2,carry86e,carry87m169e}.tar.xz and run84.sh, run85.sh, run86.sh, run87.sh
# (run 86's A is carry82c2: the same archive, byte for byte, as carry86a).
set -u
cd "$(dirname "$0")/.."
[ -e build-carry/carry86a.tar.xz ] || cp build-carry/carry82c2.tar.xz build-carry/carry86a.tar.xz
card=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "card: $card"
what=${1:-}
if [ -z "$what" ]; then
  BARS_S=60 PHASES=none bash build-carry/run85.sh
  case $card in *H200*) what=bars ;; *) what=e ;; esac
fi
case $what in
bars) MUTANTS=0 BARS_S=${BARS_S:-240} bash build-carry/run85.sh ;;
e)
  bash build-carry/run86.sh
  # Mutant 169 on E (carry87m169e.tar.xz: E's exact suite with the first half one K block's descriptors
  # late), to be watched failing on both of E's orders: 8192 x 1024 x 256 waits under the second half,
  # the one-wave wide cases after the adds.
  if [ -e build-carry/carry87m169e.tar.xz ]; then
    mkdir -p /tmp/m169e /tmp/o87 && xz -dc build-carry/carry87m169e.tar.xz | tar -xf - -C /tmp/m169e
    LD_LIBRARY_PATH=/tmp/m169e FP8GEMM_REQUIRE_GPU=1 timeout 60 /tmp/m169e/test_exact_gpu \
      --gtest_filter='*12_grouped_moe*' > /tmp/o87/mutant169_on_E_test_exact_gpu.log 2>&1
    echo "mutant 169 on E rc=$?: $(tail -n 1 /tmp/o87/mutant169_on_E_test_exact_gpu.log)"
    grep "^\[  FAILED" /tmp/o87/mutant169_on_E_test_exact_gpu.log | head -8
    tar -C /tmp/o87 -czf $OUT/run87_m169e.tar.gz .
  fi
  ;;
ladder)  # the README's ladder table and plots: every step of ac5d063 and cuBLASLt (carry87ladder.tar.xz)
  mkdir -p /tmp/lad /tmp/o87l && xz -dc build-carry/carry87ladder.tar.xz | tar -xf - -C /tmp/lad
  OUT=/tmp/o87l bash bench/measure_h200.sh 12_grouped_moe ladder /tmp/lad ladder
  tar -C /tmp/o87l -czf $OUT/run87_ladder.tar.gz .
  ;;
esac
echo "run 87 ($what) done ${SECONDS}s"
