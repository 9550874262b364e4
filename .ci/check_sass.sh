#!/usr/bin/env bash
# Checks the machine code of the Hopper tensor-core kernels (step 05 on):
#   1. each kernel's sm_90a SASS contains QGMMA (wgmma on FP8 runs on the
#      tensor cores; an emulated path would show F2FP unpacks + HMMA instead);
#   2. no local memory: no LDL/STL instruction, and cuobjdump's resource usage
#      says LOCAL:0 and STACK:0 (a register spill would show up as both);
#   3. with --source, the kernel file is compiled again with -Xptxas -v and
#      every kernel must report "0 bytes spill stores, 0 bytes spill loads".
#
# Usage: .ci/check_sass.sh [--kernel NAME] [--source FILE.cu] OBJECT_OR_PROGRAM
#   OBJECT_OR_PROGRAM  anything holding the kernels' sm_90a code, e.g.
#                      the object of a step's step_sm90a.cu ($<TARGET_OBJECTS:step_NN_name>)
#   --kernel NAME      substring of the (mangled) kernel names to check
#                      (default: every kernel of the object)
#   --source FILE.cu   also run ptxas -v on this file (sm_90a, same flags as the build)
# Environment: CUOBJDUMP, NVCC override the tools; otherwise they are looked up
# on PATH, in /usr/local/cuda/bin and in pip's nvidia-cuda-cuobjdump package
# (cuobjdump -sass also needs nvdisasm: pip's nvidia-cuda-nvdisasm).
# Exits 0 when every check passes, 1 when one fails, 2 on a usage error.
set -euo pipefail

kernel=""  # every function of the object
source_file=""
binary=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --kernel) kernel="$2"; shift 2 ;;
    --source) source_file="$2"; shift 2 ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    *) binary="$1"; shift ;;
  esac
done
if [[ -z "$binary" || ! -f "$binary" ]]; then
  echo "check_sass: give the object or program to check (got '${binary}')" >&2
  exit 2
fi

# ---- tools -------------------------------------------------------------------
find_tool() {  # name -> path, or nothing
  local name="$1" dir
  if command -v "$name" >/dev/null 2>&1; then command -v "$name"; return; fi
  if [[ -x "/usr/local/cuda/bin/$name" ]]; then echo "/usr/local/cuda/bin/$name"; return; fi
  # pip installs the tools inside the nvidia package (nvidia/cu13/bin or nvidia/cuda_*/bin).
  local python
  for python in python3 python; do
    command -v "$python" >/dev/null 2>&1 || continue
    dir=$("$python" - "$name" <<'EOF' 2>/dev/null || true
import glob, os, sys
try:
    import nvidia
except ImportError:
    sys.exit(0)
for root in nvidia.__path__:
    for path in sorted(glob.glob(os.path.join(root, "*", "bin", sys.argv[1]))):
        print(os.path.dirname(path)); sys.exit(0)
EOF
)
    [[ -n "$dir" && -x "$dir/$name" ]] && { echo "$dir/$name"; return; }
  done
}
cuobjdump="${CUOBJDUMP:-$(find_tool cuobjdump)}"
if [[ -z "$cuobjdump" ]]; then
  echo "check_sass: cuobjdump not found (pip install nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm)" >&2
  exit 2
fi
# cuobjdump -sass runs nvdisasm: make one visible next to cuobjdump if it is not on PATH.
if ! command -v nvdisasm >/dev/null 2>&1; then
  nvdisasm_path="$(find_tool nvdisasm)"
  if [[ -z "$nvdisasm_path" ]]; then
    echo "check_sass: nvdisasm not found (pip install nvidia-cuda-nvdisasm)" >&2
    exit 2
  fi
  nvdisasm_dir="$(dirname "$nvdisasm_path")"
  export PATH="$PATH:$nvdisasm_dir"
fi

failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
# Readable kernel names where c++filt exists.
pretty() { if command -v c++filt >/dev/null 2>&1; then c++filt "$1"; else echo "$1"; fi; }

# ---- 1 + 2: SASS per kernel ----------------------------------------------------
sass="$(mktemp)"; usage="$(mktemp)"
trap 'rm -f "$sass" "$usage"' EXIT
# Only the lines the checks read: a step's SASS is over 100 MB of text, which
# awk would otherwise walk line by line.
if ! "$cuobjdump" -sass "$binary" | { grep -E 'arch = |Function :|QGMMA|LDL|STL' || true; } >"$sass"; then
  echo "check_sass: cuobjdump -sass failed on $binary" >&2
  exit 1
fi
"$cuobjdump" -res-usage "$binary" >"$usage"

# One line per sm_90a function matching $kernel: name, QGMMA count, LDL/STL count.
report=$(awk -v want="$kernel" '
  /^[ \t]*arch = / { arch = $3 }
  /Function :/ {
    if (name != "") print name, qgmma, local
    name = ""; if (arch == "sm_90a" && index($0, want) > 0) { name = $3; qgmma = 0; local = 0 }
    next
  }
  name != "" && /QGMMA/ { qgmma++ }
  name != "" && /[^A-Z](LDL|STL)[. ]/ { local++ }
  END { if (name != "") print name, qgmma, local }
' "$sass")

if [[ -z "$report" ]]; then
  fail "no sm_90a function whose name contains '$kernel' in $binary"
else
  while read -r name qgmma local_ops; do
    short="$(pretty "$name")"
    if (( qgmma == 0 )); then fail "$short: no QGMMA in its SASS"; fi
    if (( local_ops > 0 )); then fail "$short: $local_ops local-memory instructions (LDL/STL)"; fi
    echo "sass  $short: QGMMA x$qgmma, LDL/STL x$local_ops"
  done <<<"$report"
fi

# Resource usage: "Function NAME:" then "REG:.. STACK:.. SHARED:.. LOCAL:..".
while read -r name regs stack local_bytes; do
  short="$(pretty "$name")"
  echo "usage $short: REG $regs, STACK $stack, LOCAL $local_bytes"
  if (( stack != 0 || local_bytes != 0 )); then fail "$short: stack $stack bytes, local $local_bytes bytes"; fi
done < <(awk -v want="$kernel" '
  /^[ \t]*arch = / { arch = $3 }
  /^ Function / { name = ""; if (arch == "sm_90a" && index($0, want) > 0) { name = $2; sub(/:$/, "", name) }; next }
  name != "" && /REG:/ {
    for (i = 1; i <= NF; i++) { split($i, kv, ":"); v[kv[1]] = kv[2] }
    print name, v["REG"], v["STACK"], v["LOCAL"]; name = ""
  }
' "$usage")

# ---- 3: ptxas -v ----------------------------------------------------------------
if [[ -n "$source_file" ]]; then
  nvcc="${NVCC:-$(find_tool nvcc)}"
  if [[ -z "$nvcc" ]]; then
    fail "--source given but nvcc not found"
  else
    root="$(cd "$(dirname "$0")/.." && pwd)"
    log="$("$nvcc" -std=c++17 -O3 --expt-relaxed-constexpr -I"$root" \
                  -gencode arch=compute_90a,code=sm_90a -Xptxas -v -c "$source_file" -o /dev/null 2>&1)" ||
      { echo "$log"; fail "nvcc failed on $source_file"; }
    # ptxas prints, per kernel: "Function properties for NAME" then
    # "N bytes stack frame, N bytes spill stores, N bytes spill loads".
    spills=$(awk -v want="$kernel" '
      /Function properties for/ { name = (index($0, want) > 0) ? $NF : ""; next }
      name != "" && /spill stores/ { print name, $5, $9; name = "" }
    ' <<<"$log")
    if [[ -z "$spills" ]]; then fail "ptxas -v reported no kernel named '*$kernel*' for $source_file"; fi
    while read -r name stores loads; do
      [[ -z "$name" ]] && continue
      echo "ptxas $(pretty "$name"): spill stores $stores, spill loads $loads"
      if (( stores != 0 || loads != 0 )); then fail "$(pretty "$name"): ptxas reports spills"; fi
    done <<<"$spills"
  fi
fi

if (( failures > 0 )); then
  echo "check_sass: $failures check(s) failed"
  exit 1
fi
echo "check_sass: all checks passed"
