#!/usr/bin/env bash
# The mutation score: applies each committed mutant (tests/mutants/NNN_name.patch,
# a small deliberate bug) to a scratch copy of the source tree, rebuilds the
# test programs it names, runs them, and says whether the suite noticed:
#
#   killed    a test program failed (non-zero exit, a crash or the per-program
#             timeout): the suite catches this bug
#   SURVIVED  every test program named passed: a gap in the tests
#   not-built the patch did not apply or its targets did not build (not a kill)
#
# and ends with `mutants: <killed> killed, <survived> survived of <total>`.
# tests/mutants/README.md says what a mutant is and how to add one.
#
# How: the files git knows are copied to a scratch tree once; it is configured
# once (Ninja, no AMD device code, no docs) and the targets of every selected
# mutant are built once, unmutated; every test the mutants name must then pass
# (the baseline; if it fails the script stops). For each mutant: apply the
# patch, rebuild only its targets, run its tests in the order listed, stopping
# at the first that fails, then put the touched files and the build folder back
# as they were (a copy of the baseline build), so no mutant costs a rebuild of
# the next. Inputs are fixed: FP8GEMM_TEST_SEED is 1 unless set.
#
# Usage: tests/mutants/run_mutants.sh [--part cpu|gpu|all] [--build-dir DIR] [--jobs N]
#            [--list] [--only REGEX] [--build-only] [--timeout SECONDS] [--source DIR]
#            [--cmake CMAKE] [--ninja NINJA] [--build-type TYPE] [--cxx-compiler PATH]
#            [--cuda-compiler PATH] [--cuda-architectures LIST] [--shards N]
#            [--require-cheap] [--check-apply]
#   --part         which mutants (the `part:` of their header); default cpu
#   --build-dir    keep the scratch tree and build in DIR, and reuse them in the
#                  next run (only what changed is rebuilt; baseline tests that
#                  passed on the same sources are not run again); default: a
#                  temporary folder, removed at the end
#   --jobs         parallel build jobs (default: the number of processors)
#   --list         print the selected mutants and exit
#   --only REGEX   only the mutants whose name matches (grep -E), e.g. '^1(0|1)'
#   --build-only   apply and build each mutant, run nothing (no GPU needed):
#                  checks that every patch applies and compiles
#   --check-apply  only check that every selected patch applies to the source
#                  (git apply --check), in seconds: a GPU mutant that no longer
#                  applies would otherwise be noticed only on a GPU machine
#   --timeout      seconds per test program and mutant (default 300)
#   --shards N     run the selected mutants as N copies of this script at once,
#                  each with a contiguous N-th of the list and its own scratch tree and build
#                  (DIR/shard-I with --build-dir); prints each shard's lines,
#                  then the score of all. For a machine with many cores, where
#                  one mutant's rebuild (one file) leaves the rest idle
#   --shard I/N    (what --shards passes) only the I-th of N contiguous parts of the list
#   --require-cheap  the CPU part's cheap build (compute_80, below) must build:
#                  a failure is an error instead of a fall-back to the normal
#                  build. CI sets it (FP8GEMM_REQUIRE_ALL): that build is the
#                  project's one check that a target other than sm_90a still
#                  compiles, as common/sm90/arch.h promises
# Under --part gpu or all, FP8GEMM_REQUIRE_GPU=1 is exported, so a GPU test that
# would skip fails instead; since a machine without a GPU would then "kill"
# every mutant, those parts first check that a GPU is usable (exit 2 if not).
#
# Exit status: 0 every mutant killed (--build-only: every mutant built);
# 1 a mutant survived or did not build, the baseline failed, or bad usage;
# 2 a tool is missing (cmake, ninja, nvcc) or the GPU part has no GPU
# (ctest: a skip, except in CI where FP8GEMM_REQUIRE_ALL makes it a failure).
set -uo pipefail
export LC_ALL=C

mutants_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source_dir="$(cd "$mutants_dir/../.." && pwd)"
part=cpu
work_dir=""
jobs="$(nproc 2>/dev/null || echo 2)"
list_only=0
check_apply=0
only=""
build_only=0
timeout_s=300
cmake=cmake
ninja=ninja
build_type=Release
cxx_compiler=""
cuda_compiler=""
cuda_architectures=""
shards=1
shard=""
require_cheap=0
original_args=("$@")

usage() { sed -n '/^# Usage:/,/^# Exit status/p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --list) list_only=1; shift; continue ;;
    --build-only) build_only=1; shift; continue ;;
    --check-apply) check_apply=1; shift; continue ;;
    --require-cheap) require_cheap=1; shift; continue ;;
    -h | --help) usage; exit 0 ;;
  esac
  [ $# -ge 2 ] || { echo "run_mutants.sh: $1 needs a value (or is unknown)" >&2; usage; exit 1; }
  case "$1" in
    --part) part="$2" ;;
    --build-dir) work_dir="$2" ;;
    --jobs) jobs="$2" ;;
    --only) only="$2" ;;
    --timeout) timeout_s="$2" ;;
    --source) source_dir="$(cd "$2" && pwd)" ;;
    --cmake) cmake="$2" ;;
    --ninja) ninja="$2" ;;
    --build-type) build_type="$2" ;;
    --cxx-compiler) cxx_compiler="$2" ;;
    --cuda-compiler) cuda_compiler="$2" ;;
    --cuda-architectures) cuda_architectures="$2" ;;
    --shards) shards="$2" ;;
    --shard) shard="$2" ;;
    *) echo "run_mutants.sh: unknown option $1" >&2; usage; exit 1 ;;
  esac
  shift 2
done
case "$part" in cpu | gpu | all) ;; *) echo "run_mutants.sh: --part must be cpu, gpu or all" >&2; exit 1 ;; esac

started=$SECONDS
say() { echo "mutants: $*"; }

# ---- shards: N copies of this script at once, then the score of all ---------------------
if [ "$shards" -gt 1 ] && [ -z "$shard" ]; then
  shard_root="$work_dir"
  [ -n "$shard_root" ] || { shard_root="$(mktemp -d "${TMPDIR:-/tmp}/fp8gemm-mutants.XXXXXX")" || exit 1; trap 'rm -rf "$shard_root"' EXIT; }
  mkdir -p "$shard_root" && shard_root="$(cd "$shard_root" && pwd)"
  args=()  # the arguments without --shards and --build-dir
  set -- "${original_args[@]}"
  while [ $# -gt 0 ]; do
    case "$1" in
      --shards | --build-dir) shift 2 ;;
      *) args+=("$1"); shift ;;
    esac
  done
  for i in $(seq 0 $((shards - 1))); do
    "${BASH_SOURCE[0]}" "${args[@]}" --shard "$i/$shards" --build-dir "$shard_root/shard-$i" >"$shard_root/shard-$i.log" 2>&1 &
  done
  wait
  k=0 s=0 t=0 rc=0
  for i in $(seq 0 $((shards - 1))); do
    echo "---- shard $i of $shards"
    grep -v '^mutants: [0-9]* killed' "$shard_root/shard-$i.log"
    line="$(grep -E '^mutants: [0-9]+ killed, [0-9]+ survived of [0-9]+$' "$shard_root/shard-$i.log" | tail -n 1)"
    if [ -z "$line" ]; then
      echo "shard $i gave no score"; rc=1; continue
    fi
    read -r _ sk _ ss _ _ st <<<"$line"
    k=$((k + sk)) s=$((s + ss)) t=$((t + st))
  done
  echo "all shards: $((SECONDS - started)) s"
  echo "mutants: $k killed, $s survived of $t"
  [ "$rc" -eq 0 ] && [ "$s" -eq 0 ]
  exit $?
fi
fail() { echo "mutants: ERROR: $*" >&2; exit 1; }
skip() { echo "mutants: SKIPPED: $*" >&2; exit 2; }

# ---- the mutants ------------------------------------------------------------------
# A mutant's header is every line before its first `diff --git`; it holds
#   part: cpu|gpu
#   targets: <CMake targets to rebuild>
#   tests: <program>[:<gtest filter>] ...   (run in this order)
#   why: <one sentence>
header_field() {  # header_field FILE FIELD
  sed -n '/^diff --git /q; p' "$1" | sed -n "s/^$2:[[:space:]]*//p" | head -n 1
}
names=() parts=() targets=() tests=() whys=() files=()
for file in "$mutants_dir"/[0-9]*.patch; do
  [ -f "$file" ] || continue
  name="$(basename "$file" .patch)"
  mutant_part="$(header_field "$file" part)"
  mutant_targets="$(header_field "$file" targets)"
  mutant_tests="$(header_field "$file" tests)"
  mutant_why="$(header_field "$file" why)"
  case "$mutant_part" in cpu | gpu) ;; *) fail "$name: the header needs 'part: cpu' or 'part: gpu'" ;; esac
  [ -n "$mutant_targets" ] || fail "$name: the header needs 'targets:'"
  [ -n "$mutant_tests" ] || fail "$name: the header needs 'tests:'"
  [ -n "$mutant_why" ] || fail "$name: the header needs 'why:'"
  grep -q '^diff --git ' "$file" || fail "$name: no 'diff --git' in the patch"
  # A test program that is not rebuilt would test the unmutated code.
  set -f
  for spec in $mutant_tests; do
    case " $mutant_targets " in *" ${spec%%:*} "*) ;; *) fail "$name: test program ${spec%%:*} is not among its targets" ;; esac
  done
  set +f
  [ "$part" = all ] || [ "$part" = "$mutant_part" ] || continue
  if [ -n "$only" ] && ! echo "$name" | grep -qE -- "$only"; then continue; fi
  names+=("$name") parts+=("$mutant_part") targets+=("$mutant_targets") tests+=("$mutant_tests")
  whys+=("$mutant_why") files+=("$file")
done
if [ -n "$shard" ]; then  # a contiguous run of the list, so that a shard builds and tests few steps
  count=${#names[@]} index=${shard%/*} of=${shard#*/}
  first=$((index * count / of)) end=$(((index + 1) * count / of))
  names=("${names[@]:first:end-first}") parts=("${parts[@]:first:end-first}")
  targets=("${targets[@]:first:end-first}") tests=("${tests[@]:first:end-first}")
  whys=("${whys[@]:first:end-first}") files=("${files[@]:first:end-first}")
fi
total=${#names[@]}
[ "$total" -gt 0 ] || fail "no mutant selected (--part $part${only:+, --only $only}) in $mutants_dir"

if [ "$list_only" = 1 ]; then
  for i in "${!names[@]}"; do
    printf '%s  [%s]  targets: %s\n    tests: %s\n    why: %s\n' "${names[$i]}" "${parts[$i]}" "${targets[$i]}" \
      "${tests[$i]}" "${whys[$i]}"
  done
  echo "$total mutants"
  exit 0
fi

if [ "$check_apply" = 1 ]; then
  stale=0
  for i in "${!names[@]}"; do
    if ! (cd "$source_dir" && git apply --check "${files[$i]}") >/dev/null 2>&1; then
      echo "does not apply: ${names[$i]}"
      stale=$((stale + 1))
    fi
  done
  say "$((total - stale)) of $total apply"
  [ "$stale" -eq 0 ]
  exit $?
fi

# ---- tools and the GPU ---------------------------------------------------------------
command -v "$cmake" >/dev/null || skip "no cmake ($cmake)"
command -v "$ninja" >/dev/null || skip "no ninja ($ninja; apt-get install ninja-build)"
command -v timeout >/dev/null || skip "no timeout (coreutils)"
if [ -z "$cuda_compiler" ]; then
  cuda_compiler="$(command -v nvcc || true)"
  [ -n "$cuda_compiler" ] || { [ -x /usr/local/cuda/bin/nvcc ] && cuda_compiler=/usr/local/cuda/bin/nvcc; }
fi
[ -n "$cuda_compiler" ] && [ -x "$cuda_compiler" ] || skip "no CUDA compiler (${cuda_compiler:-nvcc})"
if [ "$part" != cpu ] && [ "$build_only" = 0 ]; then
  # A GPU test that cannot run must fail, not skip (a skip is no kill)...
  export FP8GEMM_REQUIRE_GPU=1
  # ...so without a usable GPU every mutant would be "killed": stop first.
  command -v nvidia-smi >/dev/null || skip "the $part part needs a GPU: no nvidia-smi"
  gpus="$(nvidia-smi -L 2>&1)" && echo "$gpus" | grep -q '^GPU ' ||
    skip "the $part part needs a GPU: nvidia-smi -L says: $(echo "$gpus" | head -n 1)"
  # A tiny probe of the CUDA runtime: a device, a context, memory.
  probe_dir="$(mktemp -d "${TMPDIR:-/tmp}/fp8gemm-gpu-probe.XXXXXX")" || fail "mktemp"
  cat >"$probe_dir/probe.cu" <<'PROBE'
#include <cstdio>
#include <cuda_runtime.h>
int main() {
  int count = 0;
  void* p = nullptr;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e == cudaSuccess && count > 0) e = cudaMalloc(&p, 1 << 20);
  if (e == cudaSuccess) e = cudaMemset(p, 0, 1 << 20);
  if (e == cudaSuccess) e = cudaDeviceSynchronize();
  if (e != cudaSuccess || count == 0) {
    std::printf("%s\n", e != cudaSuccess ? cudaGetErrorString(e) : "no CUDA device");
    return 1;
  }
  return 0;
}
PROBE
  probe_out="$("$cuda_compiler" -o "$probe_dir/probe" "$probe_dir/probe.cu" 2>&1 && "$probe_dir/probe" 2>&1)"
  probe_rc=$?
  rm -rf "$probe_dir"
  [ "$probe_rc" -eq 0 ] || skip "the $part part needs a usable GPU: the CUDA probe says: $(echo "$probe_out" | tail -n 1)"
  say "GPU: $(echo "$gpus" | head -n 1)"
fi
export FP8GEMM_TEST_SEED="${FP8GEMM_TEST_SEED:-1}"

# ---- the scratch tree ----------------------------------------------------------------
if [ -n "$work_dir" ]; then
  mkdir -p "$work_dir" || fail "cannot create $work_dir"
  work_dir="$(cd "$work_dir" && pwd)"
  # Inside the repository it must be ignored (build*/ is), or it would copy itself.
  case "$work_dir/" in
    "$source_dir/"*) git -C "$source_dir" check-ignore -q "$work_dir" 2>/dev/null ||
      fail "--build-dir $work_dir is inside the repository and not ignored by git (use build-mutants/ or a folder outside)" ;;
  esac
else
  work_dir="$(mktemp -d "${TMPDIR:-/tmp}/fp8gemm-mutants.XXXXXX")" || fail "mktemp"
  trap 'rm -rf "$work_dir"' EXIT
  trap 'exit 1' INT TERM  # so that the EXIT trap runs
fi
tree="$work_dir/src"
build="$work_dir/build"
base="$work_dir/build.base"
saved="$work_dir/saved"
logs="$work_dir/logs"
mkdir -p "$tree" "$logs"
# A run interrupted inside a mutant (--build-dir) leaves the files it touched
# in $saved and a mutated build: put back both, the build from its baseline
# copy, which matches the restored files and their times.
if [ -d "$saved" ]; then
  say "an interrupted run left a mutant applied: restoring it"
  (cd "$saved" && find . -type f -print0 | xargs -0 -r cp -p --parents -t "$tree") || fail "restoring $saved"
  if [ -d "$base" ]; then
    rm -rf "$build" && cp -a "$base" "$build" || fail "restoring the build from $base"
  else
    rm -rf "$build"
  fi
  rm -rf "$saved"
fi

# The files git knows (tracked, or new and not ignored), as they are in the
# work tree; a file is copied only when it differs from the scratch copy, so a
# reused --build-dir rebuilds only what changed.
file_list="$work_dir/files"
if command -v git >/dev/null && git -C "$source_dir" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  (cd "$source_dir" && git ls-files -z --cached --others --exclude-standard) >"$file_list.raw" ||
    fail "git ls-files in $source_dir"
else  # no git (a copy of the tree): everything but .git and build folders
  (cd "$source_dir" && find . \( -name .git -o -name 'build*' \) -prune -o -type f -print0 | sed -z 's|^\./||') \
    >"$file_list.raw" || fail "listing $source_dir"
fi
: >"$file_list"
copied=0
while IFS= read -r -d '' f; do
  [ -f "$source_dir/$f" ] || continue
  printf '%s\0' "$f" >>"$file_list"
  if ! cmp -s "$source_dir/$f" "$tree/$f"; then
    mkdir -p "$tree/$(dirname "$f")" && cp "$source_dir/$f" "$tree/$f" || fail "copying $f"
    copied=$((copied + 1))
  fi
done <"$file_list.raw"
tree_hash="$(cd "$tree" && xargs -0 sha1sum <"$file_list" | sha1sum | cut -c1-16)"
# FP8GEMM_GIT_COMMIT names the commit where the tree's .git cannot (a copy of it).
commit="${FP8GEMM_GIT_COMMIT:-$(git -C "$source_dir" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)}"
say "part $part: $total mutants; source $source_dir (commit $commit, tree $tree_hash); scratch $work_dir" \
  "($copied files copied); FP8GEMM_TEST_SEED=$FP8GEMM_TEST_SEED"

# ---- configure and build the baseline --------------------------------------------------
# The CPU part's tests never run device code, and some CPU test programs
# (test_api, test_registry) link every step, so the baseline compiles them all,
# and a mutant in a header those include recompiles them: there ("cheap") the
# device code is built for compute_80 as unoptimized PTX only: the Hopper
# steps' kernels, guarded to sm_90a (common/sm90/arch.h), compile to empty
# bodies there, the portable steps' kernels are cheap, and no ptxas runs
# (with sm_90a PTX, about 340 of the 786 s the CPU part took in CI went by
# before its first mutant). Their host code (every .cu file) is built
# unoptimized, while the C++ files (the tests, common/'s host code) are built
# with -O2 -DNDEBUG, as fast to run as the release build: a build type of our
# own adds no flags of its own. If that configuration fails to build, the
# normal one is used. The GPU part is built as the project builds.
configure() {  # configure cheap|normal
  local type="$build_type"
  [ "$1" = cheap ] && type=MutantCheck
  local args=("$cmake" -S "$tree" -B "$build" -G Ninja
    "-DCMAKE_MAKE_PROGRAM=$(command -v "$ninja")"
    "-DCMAKE_BUILD_TYPE=$type"
    "-DCMAKE_CUDA_COMPILER=$cuda_compiler"
    "-DFP8GEMM_HIP_ARCHITECTURES="   # no AMD device code
    "-DFP8GEMM_REQUIRE_ALL=OFF"
    "-DFP8GEMM_GIT_COMMIT=mutants")
  [ -n "$cxx_compiler" ] && args+=("-DCMAKE_CXX_COMPILER=$cxx_compiler")
  if [ "$1" = cheap ]; then
    args+=("-DCMAKE_CUDA_ARCHITECTURES=80-virtual" "-DCMAKE_CUDA_FLAGS=-Xcicc=-O0" "-DCMAKE_CXX_FLAGS=-O2 -DNDEBUG")
  elif [ -n "$cuda_architectures" ]; then
    args+=("-DCMAKE_CUDA_ARCHITECTURES=$cuda_architectures")
  fi
  rm -rf "$build" "$base"
  "${args[@]}" >"$logs/configure.log" 2>&1 || { tail -n 40 "$logs/configure.log"; fail "configure (log: $logs/configure.log)"; }
  echo "$1 ${args[*]}" >"$work_dir/configured"
}
mode=normal
[ "$part" = cpu ] && mode=cheap
# A reused --build-dir configured otherwise (the other part, other compilers) starts afresh.
configured="$(cat "$work_dir/configured" 2>/dev/null | cut -d' ' -f1)"
if [ ! -f "$build/build.ninja" ] || [ "$configured" != "$mode" ] ||
  ! grep -qF -- "-DCMAKE_CUDA_COMPILER=$cuda_compiler " "$work_dir/configured" 2>/dev/null; then
  configure "$mode"
fi

# The targets and the test specs (program[:filter]) of the selected mutants, once each.
all_targets=()
all_specs=()
add_unique() {  # add_unique ARRAY_NAME VALUE
  local -n array="$1"
  local v
  for v in "${array[@]}"; do [ "$v" = "$2" ] && return 0; done
  array+=("$2")
}
set -f  # test filters hold '*': no globbing of the words below
for i in "${!names[@]}"; do
  for t in ${targets[$i]}; do add_unique all_targets "$t"; done
  for s in ${tests[$i]}; do add_unique all_specs "$s"; done
done
set +f

build_started=$SECONDS
build_baseline() { "$ninja" -C "$build" -j "$jobs" "${all_targets[@]}" >"$logs/baseline_build.log" 2>&1; }
built_ok=1
build_baseline || built_ok=0
if [ "$built_ok" = 0 ] && [ "$mode" = cheap ] && [ "$require_cheap" = 1 ]; then
  grep -m 5 -E 'error' "$logs/baseline_build.log"
  fail "the cheap build (compute_80: the Hopper kernels empty) failed, and --require-cheap is set: a target other than sm_90a no longer compiles (log: $logs/baseline_build.log)"
fi
if [ "$built_ok" = 0 ] && [ "$mode" = cheap ]; then
  say "the cheap device-code build failed ($(grep -m 1 -E 'error' "$logs/baseline_build.log" | cut -c1-100)); building normally"
  mode=normal
  configure normal
  built_ok=1
  build_baseline || built_ok=0
fi
if [ "$built_ok" = 0 ]; then
  tail -n 40 "$logs/baseline_build.log"
  fail "the unmutated tree does not build (${all_targets[*]}; log: $logs/baseline_build.log)"
fi
say "baseline built in $((SECONDS - build_started)) s ($mode device code): ${all_targets[*]}"
rm -rf "$base" && cp -a "$build" "$base" || fail "cannot copy the baseline build to $base"

# Runs one test spec; sets run_rc, run_passed (tests passed), run_failed
# (tests failed) and run_log. A timeout is rc 124 (or 137 after the kill).
run_spec() {  # run_spec SPEC LOG [fail-fast]
  local spec="$1" program filter args
  program="${spec%%:*}"
  filter=""
  [ "$program" != "$spec" ] && filter="${spec#*:}"
  args=(--gtest_brief=1)
  [ -n "$filter" ] && args+=("--gtest_filter=$filter")
  # A mutant is killed by its first failure: the rest of the program need not run.
  [ "${3:-}" = fail-fast ] && args+=(--gtest_fail_fast)
  run_log="$2"
  if [ ! -x "$build/tests/$program" ]; then
    echo "no test program $build/tests/$program (is it among the targets?)" >"$run_log"
    run_rc=127 run_passed=0 run_failed=0
    return
  fi
  (cd "$build/tests" && timeout --kill-after=10 "$timeout_s" "./$program" "${args[@]}") >"$run_log" 2>&1
  run_rc=$?
  run_passed="$(sed -n 's/^\[  PASSED  \] \([0-9]*\) tests\{0,1\}\..*/\1/p' "$run_log" | tail -n 1)"
  # --gtest_brief prints one "[  FAILED  ] <test>" line per failed test and no list.
  run_failed="$(grep -E '^\[  FAILED  \] ' "$run_log" | grep -cv 'listed below')"
  run_passed="${run_passed:-0}" run_failed="${run_failed:-0}"
}

# ---- the baseline: every named test passes on the unmutated tree ----------------------
if [ "$build_only" = 0 ]; then
  baseline_ok="$work_dir/baseline.ok"  # "<tree hash> <spec>" of specs that passed
  touch "$baseline_ok"
  baseline_started=$SECONDS
  ran=0
  for spec in "${all_specs[@]}"; do
    grep -qxF "$tree_hash $spec" "$baseline_ok" && continue
    run_spec "$spec" "$logs/baseline.$(printf '%s' "$spec" | tr -c 'A-Za-z0-9_.-' '_').log"
    ran=$((ran + 1))
    if [ "$run_rc" -ne 0 ]; then
      tail -n 30 "$run_log"
      fail "the baseline fails: $spec exited $run_rc on the unmutated tree (log: $run_log); no mutant can be judged"
    fi
    [ "$run_passed" -gt 0 ] || fail "the baseline runs no test for $spec (a filter that matches nothing, or every test skipped): no mutant can be killed by it"
    echo "$tree_hash $spec" >>"$baseline_ok"
  done
  say "baseline: ${#all_specs[@]} test specs pass ($ran run now, the rest passed before on this tree) in $((SECONDS - baseline_started)) s"
fi

# ---- the mutants ---------------------------------------------------------------------------
patched_files() {  # the files a patch changes (its +++ b/... lines)
  sed -n 's|^+++ b/\(.*\)$|\1|p' "$1" | sed 's/[[:space:]]*$//'
}
apply_patch() {  # apply_patch FILE: in the scratch tree
  if command -v git >/dev/null; then
    # The scratch tree may lie inside a repository (--build-dir build-mutants):
    # git apply run there would patch paths relative to that repository's root
    # and silently skip ours. The ceiling keeps git from finding it.
    (cd "$tree" && GIT_CEILING_DIRECTORIES="$(dirname "$tree")" git apply --whitespace=nowarn - <"$1")
  else
    (cd "$tree" && patch -p1 --batch --forward --silent <"$1")
  fi
}
restore() {  # the touched files and the build, as they were before the mutant
  if [ -d "$saved" ]; then
    (cd "$saved" && find . -type f -print0 | xargs -0 -r cp -p --parents -t "$tree") || fail "restoring the sources"
    rm -rf "$saved"
  fi
  rm -rf "$build" && cp -a "$base" "$build" || fail "restoring the build from $base"
}

killed=0 survived=0 not_built=0 built=0
survivors=() unbuilt=()
for i in "${!names[@]}"; do
  name="${names[$i]}"
  file="${files[$i]}"
  mutant_started=$SECONDS
  log="$logs/$name.log"
  : >"$log"
  # Save the files the patch touches (with their times: putting them back
  # must not look like a change to ninja), then apply it.
  mkdir -p "$saved"
  while IFS= read -r f; do
    [ -n "$f" ] && [ -f "$tree/$f" ] && (cd "$tree" && cp -p --parents "$f" "$saved/")
  done < <(patched_files "$file")
  if ! apply_patch "$file" >>"$log" 2>&1; then
    not_built=$((not_built + 1))
    unbuilt+=("$name")
    printf '%-9s %s  (the patch does not apply: %s)\n' not-built "$name" "$(tail -n 1 "$log")"
    restore
    continue
  fi
  # A patch that changed nothing would make a survivor of a mutant never built.
  unchanged=1
  while IFS= read -r f; do
    [ -n "$f" ] && ! cmp -s "$tree/$f" "$saved/$f" && unchanged=0
  done < <(patched_files "$file")
  if [ "$unchanged" = 1 ]; then
    not_built=$((not_built + 1))
    unbuilt+=("$name")
    printf '%-9s %s  (the patch applied but changed no file)\n' not-built "$name"
    restore
    continue
  fi
  read -r -a mutant_targets <<<"${targets[$i]}"
  read -r -a mutant_specs <<<"${tests[$i]}"  # no globbing: filters hold '*'
  if ! "$ninja" -C "$build" -j "$jobs" "${mutant_targets[@]}" >>"$log" 2>&1; then
    not_built=$((not_built + 1))
    unbuilt+=("$name")
    printf '%-9s %s  (build failed: %s; log %s)\n' not-built "$name" \
      "$(grep -m 1 -E 'error|FAILED' "$log" | cut -c1-120)" "$log"
    restore
    continue
  fi
  if [ "$build_only" = 1 ]; then
    built=$((built + 1))
    printf '%-9s %s  (%s s)\n' built "$name" "$((SECONDS - mutant_started))"
    restore
    continue
  fi
  verdict=""
  for spec in "${mutant_specs[@]}"; do
    run_spec "$spec" "$logs/$name.$(printf '%s' "$spec" | tr -c 'A-Za-z0-9_.-' '_').log" fail-fast
    cat "$run_log" >>"$log"
    program="${spec%%:*}"
    if [ "$run_rc" -eq 124 ] || [ "$run_rc" -eq 137 ]; then
      verdict="$program: timed out after ${timeout_s} s"
    elif [ "$run_rc" -ne 0 ] && [ "$run_failed" -gt 0 ]; then
      verdict="$program: $run_failed failure$([ "$run_failed" -eq 1 ] || echo s)"
    elif [ "$run_rc" -ne 0 ]; then
      verdict="$program: exit $run_rc"
      [ "$run_rc" -gt 128 ] && verdict="$program: killed by signal $((run_rc - 128))"
    fi
    [ -n "$verdict" ] && break
  done
  if [ -n "$verdict" ]; then
    killed=$((killed + 1))
    printf '%-9s %s  (%s; %s s)\n' killed "$name" "$verdict" "$((SECONDS - mutant_started))"
  else
    survived=$((survived + 1))
    survivors+=("$name")
    printf '%-9s %s  (every test passed: %s)\n' SURVIVED "$name" "${tests[$i]}"
    echo "          why: ${whys[$i]}"
  fi
  restore
done

# ---- the score ---------------------------------------------------------------------------
elapsed=$((SECONDS - started))
if [ "$build_only" = 1 ]; then
  say "built: $built, not built: $not_built of $total (${elapsed} s)"
  [ "$not_built" -eq 0 ] || { say "not built: ${unbuilt[*]}"; exit 1; }
  exit 0
fi
[ "$survived" -eq 0 ] || say "survived: ${survivors[*]}"
echo "not built: $not_built${unbuilt[*]:+ (${unbuilt[*]})}; part $part, ${elapsed} s, FP8GEMM_TEST_SEED=$FP8GEMM_TEST_SEED"
echo "mutants: $killed killed, $survived survived of $total"
[ "$survived" -eq 0 ] && [ "$not_built" -eq 0 ]
