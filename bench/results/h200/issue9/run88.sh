#!/usr/bin/env bash
# Issue 9 run 88 (prepared in the session of 2026-12-07, seventeenth): what run 87 could not run, and the
# epilogue suite's new cases. Parts, in the order given (default: tests bars):
#   tests   step 12's plan at 130 x 304 x 200 with bias + GELU (fp8gemm --check: the 128 x 112 tile expected);
#           the epilogue suite of every step (test_epilogue_gpu of build-carry/carry88s.tar.xz, the suite's
#           archive below) on its new shape 130 x 304 x 200 and its new variant tensor_bias_gelu_bf16;
#           mutant 170 (step 12 alone with tests/mutants/170_*, build-carry/carry88m170.tar.xz) on step 12's
#           epilogue suite
#   bars    run 85's second half: run 84's bars on main's kernels (carry82c2.tar.xz, run84.sh, run85.sh)
#   ladder  run87.sh ladder: every step beside cuBLASLt at the top README's three shapes (carry87ladder.tar.xz)
#   suite   the whole GPU suite of 199f6be (build-carry/carry88s.tar.xz of run88_suite_build.sh: the eight
#           programs ending in _gpu, every step, 3,648 tests): each program cut in SUITE_SHARDS gtest shards
#           (default 12), of which this call runs SUITE_FROM to SUITE_TO (default all; about 25 minutes of tests
#           in one process, so two calls: 0-5, then 6-11), twelve at a time, with FP8GEMM_REQUIRE_GPU=1 (a skip
#           for want of a GPU fails); logs in run88_suite_FROM.tar.gz
# Programs: run88_build.sh. Carry build-carry/ (50 MB): {carry88s,carry88m170,carry82c2,carry87ladder}.tar.xz and
# run84.sh, run85.sh, run87.sh, run88.sh.
set -u
cd "$(dirname "$0")/.."
R=/tmp/o88
mkdir -p $R/logs
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu --format=csv
export FP8GEMM_REQUIRE_GPU=1
for part in ${*:-tests bars}; do
  case $part in
  tests)
    mkdir -p /tmp/s88 /tmp/m170 /tmp/w84
    [ -e /tmp/s88/test_steps_gpu ] || xz -dc build-carry/carry88s.tar.xz | tar -xf - -C /tmp/s88
    xz -dc build-carry/carry88m170.tar.xz | tar -xf - -C /tmp/m170
    [ -e /tmp/w84/fp8gemm ] || xz -dc build-carry/carry82c2.tar.xz | tar -xf - -C /tmp/w84
    LD_LIBRARY_PATH=/tmp/w84 timeout 30 /tmp/w84/fp8gemm --step 12 --m 130 --n 304 --k 200 --epilogue bias_gelu \
      --check > $R/logs/plan_130x304x200_bias_gelu.log 2>&1
    echo "plan 130x304x200 bias_gelu rc=$?: $(grep -E '^launch:' $R/logs/plan_130x304x200_bias_gelu.log | cut -c1-200)"
    timeout 200 /tmp/s88/test_epilogue_gpu \
      --gtest_filter='*130x304x200*:*tensor_bias_gelu_bf16*' > $R/logs/test_epilogue_gpu_new_cases.log 2>&1
    echo "epilogue suite, new cases, every step rc=$? ${SECONDS}s: $(tail -n 1 $R/logs/test_epilogue_gpu_new_cases.log)"
    grep "^\[  FAILED" $R/logs/test_epilogue_gpu_new_cases.log | head -5
    LD_LIBRARY_PATH=/tmp/m170 timeout 120 /tmp/m170/test_epilogue_gpu --gtest_filter='*12_grouped_moe*' \
      > $R/logs/mutant170_test_epilogue_gpu.log 2>&1
    echo "mutant 170 rc=$? ${SECONDS}s: $(tail -n 1 $R/logs/mutant170_test_epilogue_gpu.log)"
    grep "^\[  FAILED" $R/logs/mutant170_test_epilogue_gpu.log | head -5
    tar -C $R -czf $OUT/run88_all.tar.gz .
    ;;
  bars)
    MUTANTS=0 BARS_S=${BARS_S:-240} bash build-carry/run85.sh
    ;;
  ladder)
    bash build-carry/run87.sh ladder
    ;;
  suite)
    mkdir -p /tmp/s88 $R/suite
    [ -e /tmp/s88/test_steps_gpu ] || xz -dc build-carry/carry88s.tar.xz | tar -xf - -C /tmp/s88
    shards=${SUITE_SHARDS:-12}
    export R shards
    for p in test_exact_gpu test_epilogue_gpu test_steps_gpu test_grouped_gpu test_sweep_gpu test_example_layer_gpu \
      test_fp8_convert_gpu test_quantize_gpu; do
      for i in $(seq ${SUITE_FROM:-0} ${SUITE_TO:-$((shards - 1))}); do echo "$p $i"; done
    done | xargs -P 12 -L 1 bash -c 'GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$1 \
      FP8GEMM_SWEEP_OUT=$R/suite/sweep_gpu_$1.json timeout 480 /tmp/s88/$0 > $R/suite/$0_$1.log 2>&1;
      echo "$0 shard $1 rc=$? $(grep -E "^\[  (PASSED|FAILED)  \] [0-9]+ test" $R/suite/$0_$1.log | tr "\n" " ")"' \
      >> $R/suite/shards.txt
    sort $R/suite/shards.txt
    # (the archive of 2026-12-08 predates the COMMIT file: it holds 199f6be's programs)
    cp /tmp/s88/COMMIT $R/suite/ 2>/dev/null || echo 199f6be > $R/suite/COMMIT
    echo "suite of $(cat $R/suite/COMMIT) ${SECONDS}s: passed $(cat $R/suite/*.log | grep -E '^\[  PASSED  \]' | awk '{s += $4} END {print s}')," \
      "failed $(grep -hE '^\[  FAILED  \] [A-Za-z]' $R/suite/*.log | sed 's/ (.*//' | sort -u | wc -l)," \
      "skipped $(cat $R/suite/*.log | grep -cE '^\[  SKIPPED \] [A-Za-z]'), shards rc!=0: $(grep -vc ' rc=0 ' $R/suite/shards.txt)"
    grep -hE '^\[  FAILED  \] [A-Za-z]' $R/suite/*.log | sed 's/ (.*//' | sort -u | head -20
    tar -C $R -czf $OUT/run88_suite_${SUITE_FROM:-0}.tar.gz suite
    ;;
  esac
done
echo "run 88 done ${SECONDS}s"
