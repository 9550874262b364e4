#!/usr/bin/env bash
# Issue 9 run 85: mutants 162 and 163 as rewritten for C2 (3eb0d26), then run 84 again (C2's bars), on
# whatever card the call is lent (the H200 the bars are stated on, if it comes). One archive comes back:
# $OUT/run85_all.tar.gz (the device returns at most eight files a call). MUTANTS=0 skips the mutants.
# Usage: bash build-carry/run85.sh   (build-carry/carry85m.tar.xz: m162_test_epilogue_gpu, m163_test_exact_gpu;
#                                    build-carry/carry82c2.tar.xz and run84.sh for the bars)
set -u
cd "$(dirname "$0")/.."
R=/tmp/o85
mkdir -p $R /tmp/m85
xz -dc build-carry/carry85m.tar.xz | tar -xf - -C /tmp/m85
export FP8GEMM_REQUIRE_GPU=1
if [ "${MUTANTS:-1}" = 1 ]; then
LD_LIBRARY_PATH=/tmp/m85 timeout 90 /tmp/m85/m162_test_epilogue_gpu --gtest_filter='*12_grouped_moe_block*' \
  > $R/mutant162_test_epilogue_gpu.log 2>&1
echo "mutant 162 rc=$? ${SECONDS}s: $(tail -n 1 $R/mutant162_test_epilogue_gpu.log)"
grep "^\[  FAILED" $R/mutant162_test_epilogue_gpu.log | head -3
LD_LIBRARY_PATH=/tmp/m85 timeout 60 /tmp/m85/m163_test_exact_gpu --gtest_filter='*12_grouped_moe*' \
  > $R/mutant163_test_exact_gpu.log 2>&1
echo "mutant 163 rc=$? ${SECONDS}s: $(tail -n 1 $R/mutant163_test_exact_gpu.log)"
grep "^\[  FAILED" $R/mutant163_test_exact_gpu.log | head -3
tar -C $R -czf $OUT/run85_all.tar.gz .
fi
WIN=c2 OUT=$R timeout ${BARS_S:-240} bash build-carry/run84.sh ${PHASES:-plain variants deepseek grouped rows}
tar -C $R -czf $OUT/run85_all.tar.gz .
echo "run 85 done ${SECONDS}s"
