#!/usr/bin/env bash
# Builds, tests and benchmarks the project on one GPU machine, in stages that
# fit calls of at most 10 minutes each, and leaves its logs and results in $OUT.
#
# Usage: OUT=/path/to/results STAGES="build test fork" bash bench/run_h200.sh [GIT_COMMIT]
#        OUT=/path/to/results STAGES="build bench ladder sweep plot" bash bench/run_h200.sh [GIT_COMMIT]
#
# Stages (in this order, those listed in $STAGES; default: all):
#   build   configure and build everything                      -> build.log
#   calibrate  fp8gemm_calibrate: every step and cuBLASLt over K, seeds and
#           formats (docs/tolerances.md); the file replaces the committed one,
#           bench/make_calibration.py regenerates the calibrated table and the
#           build is brought up to date (not in the default stages: it moves
#           the tolerance) -> tolerance_calibration.json, tolerance_calibration.inc, calibrate.log
#   test    the ctest suite but the fork test and the CPU mutants -> ctest.log, sweep_gpu.json
#   fork    tests/fork/fork_step.sh with the fork's GPU tests run -> fork.log
#   bench   fp8gemm_bench, every step and cuBLASLt, 22 shapes     -> bench.json, bench.log
#   ladder  fp8gemm on 4096^3 with the FP64 check                 -> ladder.json, ladder.log
#   sweep   step 04's tile sweep                                  -> sweep_04.json, sweep.log
#   plot    bench/plot.py on bench.json (needs matplotlib)        -> ladder.png, shapes.png
# test and fork run with FP8GEMM_REQUIRE_GPU=1: a GPU test that would skip for
# want of a usable GPU or CUDA runtime fails instead, saying why
# (tests/support/require_gpu.h); a step whose required compute capability the
# GPU lacks is still a skip.
# The commit (argument, else $FP8GEMM_GIT_COMMIT) is recorded in the JSON
# files: the copy of the tree on the GPU machine has no .git.
set -uo pipefail

commit="${1:-${FP8GEMM_GIT_COMMIT:-unknown}}"
out="${OUT:?set OUT to the folder for the results}"
stages=" ${STAGES:-build test fork bench ladder sweep plot} "
source_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_dir="${BUILD_DIR:-$source_dir/build-h200}"
mkdir -p "$out"
has() { [[ "$stages" == *" $1 "* ]]; }
summary=()

if has build; then
  echo "== configure and build ($build_dir, commit $commit)"
  {
    cmake -S "$source_dir" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DFP8GEMM_GIT_COMMIT="$commit" &&
      cmake --build "$build_dir" -j "$(nproc)" -- -k 0
  } > "$out/build.log" 2>&1
  status=$?
  summary+=("build: exit $status after ${SECONDS}s")
  grep -E '^FAILED:' "$out/build.log" | head -n 10
fi

if has calibrate; then
  echo "== fp8gemm_calibrate"
  timeout --kill-after=10 300 "$build_dir/bench/fp8gemm_calibrate" --json "$out/tolerance_calibration.json" \
    > "$out/calibrate.log" 2>&1 &&
    cp "$out/tolerance_calibration.json" "$source_dir/bench/results/h200/tolerance_calibration.json" &&
    python3 "$source_dir/bench/make_calibration.py" --update >> "$out/calibrate.log" 2>&1 &&
    cp "$source_dir/common/check/tolerance_calibration.inc" "$out/" &&
    cmake --build "$build_dir" -j "$(nproc)" >> "$out/build.log" 2>&1
  status=$?
  summary+=("calibrate: exit $status after ${SECONDS}s: $(tail -n 2 "$out/calibrate.log" | head -n 1)")
fi

if has test; then
  echo "== ctest"
  # About 1750 tests. The rest took 160 s on the H200; the must-run cases
  # (every format pair at 4096^3) and the exact tests add an estimated 150 s.
  # The seeded random sweep (tests/test_sweep_gpu.cu) writes its tally to sweep_gpu.json.
  FP8GEMM_REQUIRE_GPU=1 FP8GEMM_SWEEP_OUT="$out/sweep_gpu.json" timeout --signal=INT --kill-after=10 540 \
    ctest --test-dir "$build_dir" --output-on-failure -j 8 --timeout 200 -LE "fork|mutants" > "$out/ctest.log" 2>&1
  status=$?
  summary+=("ctest: exit $status after ${SECONDS}s: $(grep -E 'tests passed|tests failed' "$out/ctest.log" | tail -n 1)")
  summary+=("ctest: $(grep -cE '\(Skipped\)' "$out/ctest.log") tests skipped (FP8GEMM_REQUIRE_GPU=1: only for a GPU that lacks a step's architecture, or a missing tool)")
  grep -E '^\s+[0-9]+ - .*\((Failed|Timeout|SEGFAULT|Exception|Not Run)' "$out/ctest.log" | head -n 20
fi

if has fork; then
  echo "== fork"
  FP8GEMM_REQUIRE_GPU=1 FP8GEMM_FORK_RUN_GPU=1 timeout --kill-after=10 300 \
    bash "$source_dir/tests/fork/fork_step.sh" > "$out/fork.log" 2>&1
  status=$?
  summary+=("fork: exit $status after ${SECONDS}s")
  tail -n 15 "$out/fork.log"
fi

if has bench; then
  echo "== fp8gemm_bench"
  # The benchmark starts no case after --time_limit, so its JSON stays
  # complete; `timeout` is only the safety net for a hang.
  timeout --kill-after=10 330 "$build_dir/bench/fp8gemm_bench" --time_limit=290 \
    --benchmark_out="$out/bench.json" --benchmark_out_format=json > "$out/bench.log" 2>&1
  status=$?
  summary+=("bench: exit $status after ${SECONDS}s")
fi

if has ladder; then
  echo "== fp8gemm (the ladder)"
  timeout --kill-after=10 120 "$build_dir/bench/fp8gemm" --json "$out/ladder.json" > "$out/ladder.log" 2>&1
  status=$?
  summary+=("ladder: exit $status after ${SECONDS}s")
  sed -n '/^step /,$p' "$out/ladder.log" | head -n 20
fi

if has sweep; then
  echo "== sweep_04"
  timeout --kill-after=10 120 "$build_dir/steps/sweep_04" "$out/sweep_04.json" > "$out/sweep.log" 2>&1
  status=$?
  summary+=("sweep: exit $status after ${SECONDS}s")
  tail -n 3 "$out/sweep.log"
fi

if has plot; then
  if [[ -s "$out/bench.json" ]] && python3 -c "import matplotlib" 2> /dev/null; then
    python3 "$source_dir/bench/plot.py" "$out/bench.json" --out-dir "$out" || echo "plot.py failed"
  else
    echo "no plots (no bench.json, or no python3 with matplotlib here)"
  fi
fi

echo
echo "================ summary (${SECONDS}s) ================"
printf '%s\n' "${summary[@]}"
ls -l "$out"
