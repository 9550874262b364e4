#!/usr/bin/env bash
# Builds, tests and benchmarks the project on one GPU machine in a single call
# of at most 10 minutes, and leaves at most 8 files in $OUT:
#   build.log  ctest.log  bench.json  bench.log  ladder.json  ladder.log
#   ladder.png  shapes.png  (the two plots only where python3 has matplotlib)
#
# Usage: OUT=/path/to/results bash bench/run_h200.sh [GIT_COMMIT]
# The commit (argument, else $FP8GEMM_GIT_COMMIT) is recorded in the JSON
# files: the copy of the tree on the GPU machine has no .git.
set -uo pipefail

commit="${1:-${FP8GEMM_GIT_COMMIT:-unknown}}"
out="${OUT:?set OUT to the folder for the results}"
source_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build_dir="${BUILD_DIR:-$source_dir/build-h200}"
mkdir -p "$out"

# Seconds for a stage: at most $1, and never the $2 seconds the later stages
# need out of the 10 minutes (with a margin); 30 at least.
readonly total_seconds=570
stage_seconds() {
  local most=$1 reserve=$2 left
  left=$((total_seconds - SECONDS - reserve))
  ((left > most)) && left=$most
  ((left < 30)) && left=30
  echo "$left"
}

echo "== configure and build ($build_dir, commit $commit)"
generator=()
command -v ninja > /dev/null && generator=(-G Ninja)
{
  cmake -S "$source_dir" -B "$build_dir" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
    -DFP8GEMM_GIT_COMMIT="$commit" &&
    # Keep going past a failing target (the docs, say): the tests and the
    # benchmark may still build.
    cmake --build "$build_dir" -j "$(nproc)" -- -k 0
} > "$out/build.log" 2>&1
build_status=$?
echo "build exit status $build_status after ${SECONDS}s (see build.log)"
bench_bin="$build_dir/bench/fp8gemm_bench"
main_bin="$build_dir/bench/fp8gemm"
if [[ ! -x "$main_bin" ]]; then
  tail -n 40 "$out/build.log"
  echo "fp8gemm did not build: nothing to run"
  exit 1
fi

echo "== ctest"
ctest_seconds=$(stage_seconds 180 300)  # 240 s for the benchmark, 60 s for the ladder
timeout --signal=INT --kill-after=10 "$ctest_seconds" \
  ctest --test-dir "$build_dir" --output-on-failure -j 8 --timeout 120 > "$out/ctest.log" 2>&1
ctest_status=$?
echo "ctest exit status $ctest_status after ${SECONDS}s"

echo "== fp8gemm_bench"
bench_status=1
if [[ -x "$bench_bin" ]]; then
  bench_seconds=$(stage_seconds 240 60)
  # The benchmark stops starting cases at --time_limit, so its JSON stays
  # complete; `timeout` is only the safety net for a hang.
  timeout --kill-after=10 "$bench_seconds" \
    "$bench_bin" --time_limit=$((bench_seconds - 40)) \
    --benchmark_out="$out/bench.json" --benchmark_out_format=json > "$out/bench.log" 2>&1
  bench_status=$?
else
  echo "fp8gemm_bench was not built (Google Benchmark missing?)" > "$out/bench.log"
fi
echo "fp8gemm_bench exit status $bench_status after ${SECONDS}s"

echo "== fp8gemm (the ladder)"
timeout --kill-after=10 "$(stage_seconds 90 0)" "$main_bin" --json "$out/ladder.json" > "$out/ladder.log" 2>&1
ladder_status=$?
echo "fp8gemm exit status $ladder_status after ${SECONDS}s"

if [[ -s "$out/bench.json" ]] && python3 -c "import matplotlib" 2> /dev/null; then
  python3 "$source_dir/bench/plot.py" "$out/bench.json" --out-dir "$out" || echo "plot.py failed"
else
  echo "no plots (no bench.json, or no python3 with matplotlib here)"
fi

echo
echo "================ summary (${SECONDS}s) ================"
echo "build:  exit $build_status"
grep -E '^FAILED:' "$out/build.log" | head -n 10
echo "ctest:  exit $ctest_status: $(grep -E 'tests passed|tests failed' "$out/ctest.log" | tail -n 1)"
grep -E '^\s+[0-9]+ - .*\((Failed|Timeout|SEGFAULT|Exception|Not Run)' "$out/ctest.log" | head -n 20
if [[ -s "$out/bench.json" ]]; then
  echo "bench:  exit $bench_status: $(grep -c '"TFLOPS"' "$out/bench.json") cases measured," \
    "$(grep -c '"error_occurred": true' "$out/bench.json") skipped; skip reasons:"
  grep -o '"error_message": "[^"]*"' "$out/bench.json" | sort | uniq -c | sort -rn | head -n 10
else
  echo "bench:  exit $bench_status, no bench.json; last lines of bench.log:"
  tail -n 10 "$out/bench.log"
fi
echo "ladder: exit $ladder_status"
sed -n '/^step /,$p' "$out/ladder.log"
[[ $ladder_status -eq 0 ]] || tail -n 5 "$out/ladder.log"
ls -l "$out"
