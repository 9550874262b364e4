#!/usr/bin/env bash
# Forking a step works: in a scratch copy of the source tree, `cp -r` the last
# step folder (highest NN) to steps/99_fork, configure, build only what the
# fork needs (its object library step_99_fork, the main program fp8gemm, the
# benchmark fp8gemm_bench and the GPU test program test_steps_gpu, which link
# every step: in the copy, only the fork, the step folders themselves being
# removed), then check that
#   - `fp8gemm --list` exits 0 and lists 99_fork, and no other step;
#   - `test_steps_gpu --gtest_list_tests` has tests of 99_fork
#     (EveryStep/StepShapeTest.<...>/99_fork_4096x4096x4096, ...);
#   - `fp8gemm_bench --list_cases` has the case 99_fork/4096x4096x4096.
# With FP8GEMM_FORK_RUN_GPU=1 (on a GPU machine) it also runs the fork's GPU
# tests, test_steps_gpu --gtest_filter='*99_fork_*', and benchmarks it at 4096^3.
#
# No AMD device code and no docs are built in the copy. The repository is not
# touched; the scratch tree is removed at the end (FP8GEMM_FORK_KEEP=1 keeps it).
#
# Usage (ctest passes the options of the parent build; by hand all are optional):
#   tests/fork/fork_step.sh [--source DIR] [--cmake CMAKE] [--generator NAME]
#       [--make-program PATH] [--build-type TYPE] [--cxx-compiler PATH]
#       [--cuda-compiler PATH] [--cuda-host-compiler PATH] [--cuda-architectures LIST]
#       [--jobs N]
#   --cuda-architectures  the fork's targets when FP8GEMM_FORK_RUN_GPU=1; without
#                         a GPU run it is built as sm_90a PTX only (see below)
# Exit status: 0 passed, 1 failed, 2 a tool is missing (ctest: a skip, except
# in CI where FP8GEMM_REQUIRE_ALL makes it a failure).
set -uo pipefail
export LC_ALL=C

source_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cmake=cmake
generator=Ninja
make_program=""
build_type=Release
cxx_compiler=""
cuda_compiler=""
cuda_host_compiler=""
cuda_architectures=""
jobs="$(nproc 2>/dev/null || echo 2)"
while [ $# -gt 0 ]; do
  case "$1" in
    --source) source_dir="$2" ;;
    --cmake) cmake="$2" ;;
    --generator) generator="$2" ;;
    --make-program) make_program="$2" ;;
    --build-type) build_type="$2" ;;
    --cxx-compiler) cxx_compiler="$2" ;;
    --cuda-compiler) cuda_compiler="$2" ;;
    --cuda-host-compiler) cuda_host_compiler="$2" ;;
    --cuda-architectures) cuda_architectures="$2" ;;
    --jobs) jobs="$2" ;;
    *) echo "fork_step.sh: unknown option $1" >&2; exit 1 ;;
  esac
  [ $# -ge 2 ] || { echo "fork_step.sh: $1 needs a value" >&2; exit 1; }
  shift 2
done

started=$SECONDS
say() { echo "fork: $*"; }
fail() { echo "fork: FAILED: $*" >&2; exit 1; }
skip() { echo "fork: SKIPPED: $*" >&2; exit 2; }

# ---- tools --------------------------------------------------------------------
command -v "$cmake" >/dev/null || skip "no cmake ($cmake)"
if [ -n "$make_program" ]; then
  [ -x "$make_program" ] || skip "no build tool ($make_program)"
elif [ "$generator" = Ninja ]; then
  command -v ninja >/dev/null || skip "no ninja (apt-get install ninja-build)"
fi
if [ -z "$cuda_compiler" ]; then
  cuda_compiler="$(command -v nvcc || true)"
  [ -n "$cuda_compiler" ] || { [ -x /usr/local/cuda/bin/nvcc ] && cuda_compiler=/usr/local/cuda/bin/nvcc; }
fi
[ -n "$cuda_compiler" ] && [ -x "$cuda_compiler" ] || skip "no CUDA compiler (${cuda_compiler:-nvcc})"
[ -d "$source_dir/steps" ] || fail "$source_dir is not the repository (no steps/)"

scratch="$(mktemp -d "${TMPDIR:-/tmp}/fp8gemm-fork.XXXXXX")" || fail "mktemp"
if [ "${FP8GEMM_FORK_KEEP:-0}" = 1 ]; then
  trap 'say "scratch tree kept: $scratch"' EXIT
else
  trap 'rm -rf "$scratch"' EXIT
fi
tree="$scratch/src"
build="$scratch/build"
mkdir -p "$tree"

# ---- a copy of the source tree -----------------------------------------------
# The files git knows (tracked, or new and not ignored), as they are in the
# work tree; without git, everything but .git and build folders.
if command -v git >/dev/null && git -C "$source_dir" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  say "copying the git-tracked (and new, unignored) files of $source_dir to $tree"
  (cd "$source_dir" && git ls-files -z --cached --others --exclude-standard |
     while IFS= read -r -d '' f; do [ -f "$f" ] && printf '%s\0' "$f"; done |
     xargs -0 cp --parents -t "$tree") || fail "copying the source tree"
else
  say "copying $source_dir to $tree (no git: all but .git and build*/)"
  tar -C "$source_dir" --exclude=./.git --exclude='./build*' -cf - . | tar -C "$tree" -xf - ||
    fail "copying the source tree"
fi

# ---- the fork ------------------------------------------------------------------
steps=()
for dir in "$tree"/steps/[0-9][0-9]_*/; do
  [ -d "$dir" ] && steps+=("$(basename "$dir")")
done
[ ${#steps[@]} -gt 0 ] || fail "no step folder (steps/NN_name) in the copy"
last="${steps[${#steps[@]}-1]}"
case "$last" in 99_*) fail "the last step is already number 99 ($last): no free number for the fork" ;; esac
# The commit the copy was made from: $FP8GEMM_GIT_COMMIT where the caller
# knows it (a GPU machine's copy of the tree may carry a stale .git).
commit="${FP8GEMM_GIT_COMMIT:-$(git -C "$source_dir" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)}"
say "source commit: $commit"
say "steps: ${steps[*]}"
say "cp -r steps/$last steps/99_fork"
cp -r "$tree/steps/$last" "$tree/steps/99_fork" || fail "cp -r steps/$last steps/99_fork"
# The programs link every step of the tree; the other steps are not what this
# test is about and made most of its time (11 minutes of CI's 2 cores with
# every step, 11 again with the last step and the fork once step 12 joined,
# which compiled step 12 twice): the copy keeps the fork alone.
for step in "${steps[@]}"; do
  rm -rf "${tree:?}/steps/$step"
done
say "kept steps/99_fork alone (the step folders removed from the copy)"

# ---- configure and build what the fork needs ---------------------------------
configure=("$cmake" -S "$tree" -B "$build" -G "$generator"
  "-DCMAKE_BUILD_TYPE=$build_type"
  "-DCMAKE_CUDA_COMPILER=$cuda_compiler"
  "-DFP8GEMM_HIP_ARCHITECTURES="   # no AMD device code
  "-DFP8GEMM_REQUIRE_ALL=OFF"
  "-DFP8GEMM_GIT_COMMIT=fork-test")
[ -n "$make_program" ] && configure+=("-DCMAKE_MAKE_PROGRAM=$make_program")
[ -n "$cxx_compiler" ] && configure+=("-DCMAKE_CXX_COMPILER=$cxx_compiler")
[ -n "$cuda_host_compiler" ] && configure+=("-DCMAKE_CUDA_HOST_COMPILER=$cuda_host_compiler")
if [ "${FP8GEMM_FORK_RUN_GPU:-0}" = 1 ]; then
  # The fork runs: built as the project builds, for the parent's architectures.
  [ -n "$cuda_architectures" ] && configure+=("-DCMAKE_CUDA_ARCHITECTURES=$cuda_architectures")
else
  # Nothing runs on a GPU: the fork's device code only has to compile, so it
  # is built as unoptimized sm_90a PTX (cicc parses and lowers every kernel
  # body; ptxas, most of a step's time, does not run), and the host code
  # unoptimized too (a build type of our own, which adds no -O). The parent's
  # --cuda-architectures is not used here: ctest always passes it (the
  # project's default is 90a), and with it the copy was a release build,
  # 559 of CI's 1925 s.
  configure+=("-DCMAKE_CUDA_ARCHITECTURES=90a-virtual" "-DCMAKE_CUDA_FLAGS=-Xcicc=-O0"
    "-DCMAKE_BUILD_TYPE=ForkCheck")
fi
say "configure: ${configure[*]}"
"${configure[@]}" >"$scratch/configure.log" 2>&1 || { cat "$scratch/configure.log"; fail "configure"; }
grep -A3 "CMake Warning" "$scratch/configure.log" | grep -i "step\|fork" && say "(configure warnings above)"

targets=(step_99_fork fp8gemm test_steps_gpu fp8gemm_bench)
say "build: $cmake --build $build --target ${targets[*]} --parallel $jobs"
build_started=$SECONDS
"$cmake" --build "$build" --target "${targets[@]}" --parallel "$jobs" >"$scratch/build.log" 2>&1 ||
  { tail -n 60 "$scratch/build.log"; fail "build"; }
say "built in $((SECONDS - build_started)) s"

# ---- checks --------------------------------------------------------------------
fp8gemm="$build/bench/fp8gemm"
tests="$build/tests/test_steps_gpu"
bench="$build/bench/fp8gemm_bench"
[ -x "$fp8gemm" ] || fail "no $fp8gemm after the build"
[ -x "$bench" ] || fail "no $bench after the build"
[ -x "$tests" ] || fail "no $tests after the build"

say "check: fp8gemm --list exits 0 and lists 99_fork, and no other step"
list="$("$fp8gemm" --list 2>&1)"
status=$?
echo "$list" | sed 's/^/  | /'
[ $status -eq 0 ] || fail "fp8gemm --list exited $status"
listed=($(echo "$list" | awk '$1 ~ /^[0-9][0-9]_/ {print $1}'))
[ ${#listed[@]} -gt 0 ] || fail "fp8gemm --list lists no step"
count=0
for step in "${listed[@]}"; do [ "$step" = 99_fork ] && count=$((count + 1)); done
[ $count -eq 1 ] || fail "fp8gemm --list lists 99_fork $count times (expected once)"
[ ${#listed[@]} -eq 1 ] || fail "fp8gemm --list lists ${listed[*]}, expected the fork alone"

say "check: test_steps_gpu --gtest_list_tests has tests of 99_fork"
names="$("$tests" --gtest_list_tests 2>&1)"
status=$?
[ $status -eq 0 ] || { echo "$names" | tail -n 20; fail "test_steps_gpu --gtest_list_tests exited $status"; }
# Parameterized tests are listed as "  <name>/<step>_<case>  # GetParam() = ...".
fork_tests=$(echo "$names" | grep -c '/99_fork_')
echo "$names" | grep -m 3 '/99_fork_' | sed 's/^ */  | /'
[ "$fork_tests" -gt 0 ] || fail "no test of 99_fork in test_steps_gpu --gtest_list_tests"
say "99_fork has $fork_tests tests"

say "check: fp8gemm_bench --list_cases has the fork's cases"
cases="$("$bench" --list_cases --shapes=4096x4096x4096 2>&1)"
status=$?
[ $status -eq 0 ] || { echo "$cases" | tail -n 20; fail "fp8gemm_bench --list_cases exited $status"; }
echo "$cases" | grep '^99_fork' | sed 's/^/  | /'
# A here-string, not `echo | grep -q`: grep -q stops reading at the first
# match, echo then dies of SIGPIPE on a long list, and pipefail turned that
# into a failure (a fresh-clone CI run failed so, the case listed above it).
grep -qx '99_fork/4096x4096x4096' <<<"$cases" || fail "no case 99_fork/4096x4096x4096 in fp8gemm_bench --list_cases"

if [ "${FP8GEMM_FORK_RUN_GPU:-0}" = 1 ]; then
  say "run: test_steps_gpu --gtest_filter='*99_fork_*' (FP8GEMM_FORK_RUN_GPU=1)"
  "$tests" --gtest_filter='*99_fork_*' --gtest_brief=1 || fail "the fork's GPU tests"
  say "run: fp8gemm_bench --steps=99 --shapes=4096x4096x4096 (FP8GEMM_FORK_RUN_GPU=1)"
  "$bench" --steps=99 --shapes=4096x4096x4096 || fail "the fork's benchmark"
fi

say "passed in $((SECONDS - started)) s"
exit 0
