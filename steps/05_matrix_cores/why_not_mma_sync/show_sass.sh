#!/usr/bin/env bash
# Prints the SASS behind the chapter's "Why not mma.sync" section:
#   1. mma_sync_fp8.cu (FP8 mma.sync m16n8k32) compiled for sm_90a: F2FP unpacks + HMMA;
#   2. with an argument, the main loop of step 05's wgmma kernel from that object
#      (build/steps/CMakeFiles/step_05_matrix_cores.dir/05_matrix_cores/step_sm90a.cu.o): QGMMA.
# Needs nvcc and cuobjdump (+ nvdisasm; pip: nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
nvcc="${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}"
cuobjdump="${CUOBJDUMP:-$(command -v cuobjdump || true)}"
if [[ -z "$cuobjdump" ]]; then
  bin="$(python3 -c 'import nvidia, glob, os; print(os.path.dirname(sorted(glob.glob(os.path.join(nvidia.__path__[0], "*", "bin", "cuobjdump")))[0]))' 2>/dev/null || true)"
  [[ -n "$bin" ]] && { cuobjdump="$bin/cuobjdump"; export PATH="$PATH:$bin"; }
fi
[[ -x "$cuobjdump" ]] || { echo "cuobjdump not found" >&2; exit 2; }
strip() { sed -e 's@/\* 0x[0-9a-f]* \*/@@' -e 's/[[:space:]]*$//' | grep -v '^$'; }

cubin="$(mktemp --suffix=.cubin)"
trap 'rm -f "$cubin"' EXIT
"$nvcc" -cubin -O3 -gencode arch=compute_90a,code=sm_90a "$here/mma_sync_fp8.cu" -o "$cubin"
echo "=== mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 on sm_90a"
"$cuobjdump" -sass "$cubin" | strip | grep -E 'F2FP|HMMA|QGMMA|FADD'

if [[ $# -ge 1 ]]; then
  echo "=== step 05 (wgmma.mma_async m64n128k32 e4m3.e4m3), main loop of the promoted kernel"
  # First sm_90a function of the e4m3 x e4m3 promoted kernel (template arguments 0, 0, true).
  "$cuobjdump" -sass "$1" | strip |
    awk '/Function :.*wgmma_fp8_gemm_kernelILNS_9Fp8FormatE0ELS2_0ELb1E/ { on = 1; next } /Function :/ { on = 0 } on' |
    grep -E 'LDGSTS|BAR.SYNC|WARPGROUP|QGMMA' | head -16
fi
