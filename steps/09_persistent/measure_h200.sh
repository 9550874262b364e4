#!/usr/bin/env bash
# Step 09 on the H200 in one call, in phases (run in the order given):
#   tests     the epilogue suite's step 09 cases (SplitKTest: each case run
#             twice and compared bit for bit), the exact-arithmetic suite and
#             the shape suite, for step 09
#   checks    fp8gemm --step 09 --check at a split and an unsplit shape
#   sanitize  compute-sanitizer memcheck and racecheck on split and unsplit cases
#   bench     steps 07-09 beside cuBLASLt on issue 11's shapes and the split-K shapes
#   mutants   step 09's GPU mutants, from test programs built elsewhere (MUTANTS=DIR,
#             tests/mutants/run_prebuilt.sh)
#   units     memcheck and racecheck where blocks take several units (more tiles
#             than SMs), promoted with block scales and FP8 out, and exact
#   ncu       Nsight Compute at 4096^3: step 09 promoted and fast, cuBLASLt
#             default and fast: speed of light, memory (L2 and shared), compute
#             and warp states, one launch each
#   torch     torch.ops.fp8gemm.mm on the H200: pytorch/'s tests (pytest) and its
#             benchmark beside fp8gemm_bench's step 09 on the same shapes
#             (BIN must also hold libfp8gemm.so.0 and libfp8gemm_torch.so)
#
# Usage: OUT=DIR bash steps/09_persistent/measure_h200.sh COMMIT BIN PHASE...
#   BIN: a folder holding test_epilogue_gpu, test_exact_gpu, test_steps_gpu,
#   fp8gemm_bench, fp8gemm and the libbenchmark they link, built from COMMIT
#   elsewhere. JSON lands in $OUT; the logs in $OUT/logs.tar.gz.
set -uo pipefail
commit="$1"
bin="$2"
shift 2
LOGS="$OUT/logs"
mkdir -p "$LOGS"
trap 'tar -C "$OUT" -czf "$OUT/logs.tar.gz" logs && rm -rf "$LOGS"' EXIT
export LD_LIBRARY_PATH="$bin${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export FP8GEMM_REQUIRE_GPU=1
echo "commit $commit"
shapes=4096x4096x4096,8192x8192x8192,4096x7168x16384,4096x4096x7168,4096x32768x512
shapes+=,64x2112x7168,64x32768x512,128x7168x16384,1024x1024x16384

for phase in "$@"; do
  case "$phase" in
    tests)
      for t in test_exact_gpu test_epilogue_gpu test_steps_gpu; do
        timeout 150 "$bin/$t" --gtest_filter='*09_persistent*' > "$LOGS/${t}_09.log" 2>&1
        echo "$t rc=$? ${SECONDS}s: $(tail -n 1 "$LOGS/${t}_09.log")"
        grep -E "^\[  FAILED  \]" "$LOGS/${t}_09.log" | head -5
      done
      ;;
    checks)
      for shape in "64 2112 7168" "4096 4096 4096"; do
        read -r m n k <<< "$shape"
        timeout 30 "$bin/fp8gemm" --step 09 --m "$m" --n "$n" --k "$k" --check >> "$LOGS/checks.log" 2>&1
        echo "fp8gemm --step 09 ${m}x${n}x${k} --check: rc=$?"
      done
      grep -E "^launch:|check PASS|FAIL" "$LOGS/checks.log" | head -6
      ;;
    sanitize)
      filter='*SplitKTest*09_persistent*37x1000x1008*:*SplitKTest*09_persistent_block*255x1000x1008*'
      timeout 120 compute-sanitizer --tool memcheck "$bin/test_epilogue_gpu" --gtest_filter="$filter" \
        > "$LOGS/memcheck_09.log" 2>&1
      echo "memcheck rc=$? ${SECONDS}s: $(grep 'ERROR SUMMARY' "$LOGS/memcheck_09.log" | tail -1)"
      timeout 150 compute-sanitizer --tool racecheck "$bin/test_epilogue_gpu" --gtest_filter="$filter" \
        > "$LOGS/racecheck_09.log" 2>&1
      echo "racecheck rc=$? ${SECONDS}s: $(grep -E 'RACECHECK SUMMARY' "$LOGS/racecheck_09.log" | tail -1)"
      ;;
    bench)
      timeout 150 "$bin/fp8gemm_bench" --steps=07,08,09 --shapes=$shapes --benchmark_repetitions=3 \
        --benchmark_min_time=0.05 --benchmark_out="$OUT/bench_persistent.json" --benchmark_out_format=json \
        > "$LOGS/bench_persistent.log" 2>&1
      echo "bench rc=$? ${SECONDS}s"
      grep -E "_median" "$LOGS/bench_persistent.log" | awk '{print "  " $1, $2, $3}'
      ;;
    mutants)
      tests/mutants/run_prebuilt.sh "${MUTANTS:?MUTANTS=DIR of prebuilt mutants}" "$LOGS"
      ;;
    units)
      filter='*ExactTest*09_persistent_4097x1008x1000:*EpilogueTest*09_persistent_block_bias_gelu_e4m3_2048x2048x2048*'
      for tool in memcheck racecheck; do
        for t in test_exact_gpu test_epilogue_gpu; do
          timeout 150 compute-sanitizer --tool $tool "$bin/$t" --gtest_filter="$filter" > "$LOGS/${tool}_units_$t.log" 2>&1
          echo "$tool $t rc=$? ${SECONDS}s: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$LOGS/${tool}_units_$t.log" | tail -1)" \
            "$(grep -cE '^\[       OK \]' "$LOGS/${tool}_units_$t.log") passed"
        done
      done
      ;;
    ncu)
      for run in "09" "09 --fast-accum" "cublaslt" "cublaslt_fast"; do
        name=$(echo "$run" | tr -d ' -')
        # shellcheck disable=SC2086  # the run's words are options
        timeout 120 ncu --clock-control none --section SpeedOfLight --section MemoryWorkloadAnalysis \
          --section ComputeWorkloadAnalysis --section WarpStateStats --section SchedulerStats --print-details all \
          -k regex:'persistent_fp8|nvjet|sm90' --launch-skip 3 --launch-count 1 "$bin/fp8gemm" --step $run \
          > "$LOGS/ncu_$name.txt" 2>&1
        echo "ncu $run rc=$? ${SECONDS}s: $(grep -E '^ +Duration' "$LOGS/ncu_$name.txt" | head -1)"
        grep -E '^ +(L2 Cache Throughput|L1/TEX Cache Throughput|Compute \(SM\) Throughput|SM Frequency|Duration) ' \
          "$LOGS/ncu_$name.txt" | head -5 | sed 's/^ */    /'
      done
      ;;
    torch)
      python3 -c 'import torch; print("torch", torch.__version__, torch.cuda.get_device_name())'
      export FP8GEMM_TORCH_LIB="$bin/libfp8gemm_torch.so"
      PYTHONUNBUFFERED=1 timeout 200 python3 -m pytest -q -rs -p no:cacheprovider pytorch/test_fp8gemm_op.py \
        > "$LOGS/pytest.log" 2>&1
      echo "pytest rc=$? ${SECONDS}s: $(tail -n 1 "$LOGS/pytest.log")"
      grep -E "^(FAILED|ERROR|SKIPPED)" "$LOGS/pytest.log" | head -12
      torch_shapes=4096x4096x4096,8192x8192x8192,64x2112x7168,1024x1024x16384,128x7168x16384
      timeout 120 "$bin/fp8gemm_bench" --steps=09 --shapes=$torch_shapes --benchmark_filter='^09_' \
        --benchmark_repetitions=3 --benchmark_min_time=0.05 --benchmark_out="$OUT/torch_driver.json" \
        --benchmark_out_format=json > "$LOGS/torch_driver.log" 2>&1
      echo "driver bench rc=$? ${SECONDS}s"
      PYTHONUNBUFFERED=1 timeout 150 python3 pytorch/bench_fp8gemm_op.py --step 09 \
        --driver-json "$OUT/torch_driver.json" --out "$OUT/torch_bench.json" 2>&1 | tee "$LOGS/torch_bench.log"
      ;;
    *) echo "unknown phase $phase"; exit 2 ;;
  esac
done
