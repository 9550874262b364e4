#!/usr/bin/env bash
# A persistent step (09 and later) on the H200 in one call, in phases (run in
# the order given):
#   tests     the step's cases of the exact-arithmetic suite, the epilogue suite
#             (SplitKTest: each case run twice and compared bit for bit) and the
#             shape suite
#   checks    fp8gemm --step N --check at a split and an unsplit shape
#   sanitize  compute-sanitizer memcheck and racecheck on split and unsplit cases
#   units     memcheck and racecheck where blocks take several units (more tiles
#             than SMs): exact, and promoted with block scales and FP8 out
#   bench     steps 07 to this one beside cuBLASLt on issue 11's shapes and the
#             split-K shapes (BENCH_STEPS=07,09,... to choose others)
#   mutants   GPU mutants from test programs built elsewhere (MUTANTS=DIR,
#             tests/mutants/run_prebuilt.sh)
#   ncu       Nsight Compute at 4096^3: the step promoted and fast, cuBLASLt
#             default and fast: speed of light, memory (L2 and shared), compute,
#             warp states and scheduler, one launch each
#   decode    where a small-M GEMM's time goes (DECODE_SHAPE, default
#             "64 2112 7168"): fp8gemm --check (the launch plan), Nsight Compute
#             on one launch of the step (launch statistics, occupancy, speed of
#             light, memory, warp states, the spread of SM active cycles and DRAM
#             bytes), its stall samples per SASS instruction (csv), and every
#             kernel of one cuBLASLt call with their durations
#   splits    how the time of the small-M shapes depends on the slice count
#             (SPLIT_SHAPES=MxNxK,..., default the twelve M = 64 and M = 128
#             DeepSeek-V3 shapes, 1024 x 1024 x 16384 and 4096 x 2112 x 7168):
#             fp8gemm_bench --split_k_counts=1,2,3,4,6,8, the step as its
#             heuristic chooses (its plan in the case's label) and with each
#             count forced, beside cuBLASLt ($OUT/bench_splits.json; make_table's
#             `slices` kind)
#   rows      rows off 16-byte boundaries (step 10 on): fp8gemm --check at
#             ragged shapes, then the step beside cuBLASLt on aligned shapes and
#             the same shapes with K, N or both one past a multiple of 16 (or,
#             2047 x 8191 x 7176, M and N one short and K 8 past)
#   grouped   the grouped GEMM (step 12 on): test_grouped_gpu, memcheck and
#             racecheck on its ragged cases of both layouts, then
#             fp8gemm_grouped_bench (the step beside the cuBLASLt loop and, for
#             the masked layout, the loop captured in a CUDA graph; BIN must
#             also hold test_grouped_gpu and fp8gemm_grouped_bench)
#   ab        the step in two builds, alternating twice (BIN, then AB_BIN: a
#             folder like BIN built from another commit): each run fp8gemm_bench
#             on the bench shapes (or AB_SHAPES) beside its own cuBLASLt ($OUT/ab_A1.json,
#             ab_B1.json, ab_A2.json, ab_B2.json; make_table's `builds` kind
#             compares two of them), and with AB_VARIANTS=FILTER also the
#             epilogue variants whose names match FILTER (ab_variants_*.json)
#   grouped_ab  the grouped GEMM in two builds, alternating twice (BIN, then
#             AB_BIN, each holding fp8gemm_grouped_bench): round 1 beside the
#             cuBLASLt loop and graph, round 2 the step alone
#             ($OUT/grouped_ab_A1.json ... grouped_ab_B2.json)
#   deepseek  the step beside cuBLASLt (default and fast) on the 18 DeepSeek-V3
#             shapes (M in 64, 128, 4096 x six N, K), for the geometric mean
#   ladder    every step and cuBLASLt at 4096^3, 8192^3 and 64 x 2112 x 7168
#             (the README's ladder table and plots)
#   probe     bench/tma_ring_probe: the ring of TMA stages alone, over stage bytes,
#             ring depth, blocks and DRAM against the L2 ($OUT/tma_ring_probe.json;
#             BIN must also hold tma_ring_probe)
#   torch     torch.ops.fp8gemm.mm on the step: pytorch/'s tests (pytest) and its
#             benchmark beside fp8gemm_bench's on the same shapes (BIN must also
#             hold libfp8gemm.so.0 and libfp8gemm_torch.so)
#
# Usage: OUT=DIR bash bench/measure_h200.sh STEP COMMIT BIN PHASE...
#   STEP: the step's folder name (09_persistent). BIN: a folder holding
#   test_epilogue_gpu, test_exact_gpu, test_steps_gpu, fp8gemm_bench, fp8gemm
#   and the libbenchmark they link, built from COMMIT elsewhere. JSON lands in
#   $OUT; the logs in $OUT/logs.tar.gz.
set -uo pipefail
step="$1"
commit="$2"
bin="$3"
shift 3
number=${step%%_*}
LOGS="$OUT/logs"
mkdir -p "$LOGS"
trap 'tar -C "$OUT" -czf "$OUT/logs.tar.gz" logs && rm -rf "$LOGS"' EXIT
export LD_LIBRARY_PATH="$bin${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export FP8GEMM_REQUIRE_GPU=1
echo "step $step, commit $commit"
shapes=4096x4096x4096,8192x8192x8192,4096x7168x16384,4096x4096x7168,4096x32768x512
shapes+=,64x2112x7168,64x32768x512,128x7168x16384,1024x1024x16384
bench_steps=${BENCH_STEPS:-$(seq -s, -f %02g 7 "$((10#$number))")}

for phase in "$@"; do
  case "$phase" in
    tests)
      for t in test_exact_gpu test_epilogue_gpu test_steps_gpu; do
        timeout 150 "$bin/$t" --gtest_filter="*${step}*" > "$LOGS/${t}_${number}.log" 2>&1
        echo "$t rc=$? ${SECONDS}s: $(tail -n 1 "$LOGS/${t}_${number}.log")"
        grep -E "^\[  FAILED  \]" "$LOGS/${t}_${number}.log" | head -5
      done
      ;;
    checks)
      for shape in "64 2112 7168" "4096 4096 4096"; do
        read -r m n k <<< "$shape"
        timeout 30 "$bin/fp8gemm" --step "$number" --m "$m" --n "$n" --k "$k" --check >> "$LOGS/checks.log" 2>&1
        echo "fp8gemm --step $number ${m}x${n}x${k} --check: rc=$?"
      done
      grep -E "^launch:|check PASS|FAIL" "$LOGS/checks.log" | head -6
      ;;
    sanitize)
      filter="*SplitKTest*${step}*37x1000x1008*:*SplitKTest*${step}_block*255x1000x1008*"
      # M between 64 and 128, split and not (step 12's 128 x 64 tile)
      filter+=":*SplitKTest*${step}_outer_bias_gelu_e5m2_128x2048x8192*split3:*EpilogueTest*${step}_outer*100x1000x1008*"
      timeout 120 compute-sanitizer --tool memcheck "$bin/test_epilogue_gpu" --gtest_filter="$filter" \
        > "$LOGS/memcheck_${number}.log" 2>&1
      echo "memcheck rc=$? ${SECONDS}s: $(grep 'ERROR SUMMARY' "$LOGS/memcheck_${number}.log" | tail -1)"
      timeout 150 compute-sanitizer --tool racecheck "$bin/test_epilogue_gpu" --gtest_filter="$filter" \
        > "$LOGS/racecheck_${number}.log" 2>&1
      echo "racecheck rc=$? ${SECONDS}s: $(grep -E 'RACECHECK SUMMARY' "$LOGS/racecheck_${number}.log" | tail -1)"
      ;;
    bench)
      timeout 240 "$bin/fp8gemm_bench" --steps="$bench_steps" --shapes=$shapes --benchmark_repetitions=3 \
        --benchmark_min_time=0.05 --benchmark_out="$OUT/bench_persistent.json" --benchmark_out_format=json \
        > "$LOGS/bench_persistent.log" 2>&1
      echo "bench rc=$? ${SECONDS}s"
      grep -E "_median" "$LOGS/bench_persistent.log" | awk '{print "  " $1, $2, $3}'
      ;;
    mutants)
      tests/mutants/run_prebuilt.sh "${MUTANTS:?MUTANTS=DIR of prebuilt mutants}" "$LOGS"
      ;;
    units)
      filter="*ExactTest*${step}_4097x1008x1000:*EpilogueTest*${step}_block_bias_gelu_e4m3_2048x2048x2048*"
      for tool in memcheck racecheck; do
        for t in test_exact_gpu test_epilogue_gpu; do
          timeout 150 compute-sanitizer --tool $tool "$bin/$t" --gtest_filter="$filter" > "$LOGS/${tool}_units_$t.log" 2>&1
          echo "$tool $t rc=$? ${SECONDS}s: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$LOGS/${tool}_units_$t.log" | tail -1)" \
            "$(grep -cE '^\[       OK \]' "$LOGS/${tool}_units_$t.log") passed"
        done
      done
      ;;
    ncu)
      for run in "$number" "$number --fast-accum" "cublaslt" "cublaslt_fast"; do
        name=$(echo "$run" | tr -d ' -')
        # shellcheck disable=SC2086  # the run's words are options
        timeout 120 ncu --clock-control none --section SpeedOfLight --section MemoryWorkloadAnalysis \
          --section ComputeWorkloadAnalysis --section WarpStateStats --section SchedulerStats --print-details all \
          -k regex:'fp8_gemm_kernel|nvjet' --launch-skip 3 --launch-count 1 "$bin/fp8gemm" --step $run \
          > "$LOGS/ncu_$name.txt" 2>&1
        echo "ncu $run rc=$? ${SECONDS}s: $(grep -E '^ +Duration' "$LOGS/ncu_$name.txt" | head -1)"
        grep -E '^ +(L2 Cache Throughput|L1/TEX Cache Throughput|Compute \(SM\) Throughput|SM Frequency|Duration) ' \
          "$LOGS/ncu_$name.txt" | head -5 | sed 's/^ */    /'
      done
      ;;
    ab)
      for round in 1 2; do
        for side in A B; do
          if [ "$side" = A ]; then build="$bin"; else build="${AB_BIN:?AB_BIN=DIR of the second build}"; fi
          LD_LIBRARY_PATH="$build" timeout 240 "$build/fp8gemm_bench" --steps="$number" --shapes="${AB_SHAPES:-$shapes}" \
            --benchmark_repetitions=3 --benchmark_min_time=0.05 --benchmark_out="$OUT/ab_$side$round.json" \
            --benchmark_out_format=json > "$LOGS/ab_$side$round.log" 2>&1
          echo "ab $side round $round rc=$? ${SECONDS}s"
          grep -E "^${step}.*_median" "$LOGS/ab_$side$round.log" | awk '{print "  " $1, $2, $3}'
          if [ -n "${AB_VARIANTS:-}" ]; then
            LD_LIBRARY_PATH="$build" timeout 240 "$build/fp8gemm_bench" --steps="$number" --epilogue_variants \
              --shapes=4096x4096x4096,4096x7168x16384 --benchmark_filter="$AB_VARIANTS" --benchmark_repetitions=3 \
              --benchmark_min_time=0.05 --benchmark_out="$OUT/ab_variants_$side$round.json" \
              --benchmark_out_format=json > "$LOGS/ab_variants_$side$round.log" 2>&1
            echo "ab variants $side round $round rc=$? ${SECONDS}s"
            grep -E "^${step}.*_median" "$LOGS/ab_variants_$side$round.log" | awk '{print "  " $1, $2, $3}'
          fi
        done
      done
      ;;
    grouped_ab)
      for round in 1 2; do
        for side in A B; do
          if [ "$side" = A ]; then build="$bin"; else build="${AB_BIN:?AB_BIN=DIR of the second build}"; fi
          only_step=()
          [ "$round" = 2 ] && only_step=(--benchmark_filter="^${step}/")
          LD_LIBRARY_PATH="$build" timeout 240 "$build/fp8gemm_grouped_bench" "${only_step[@]}" \
            --benchmark_out="$OUT/grouped_ab_$side$round.json" --benchmark_out_format=json \
            > "$LOGS/grouped_ab_$side$round.log" 2>&1
          echo "grouped_ab $side round $round rc=$? ${SECONDS}s"
          grep -E "^${step}.*_median" "$LOGS/grouped_ab_$side$round.log" | awk '{print "  " $1, $2, $3}'
        done
      done
      ;;
    deepseek)
      deepseek_shapes=""
      for m in 64 128 4096; do
        for nk in 2112x7168 24576x1536 32768x512 7168x16384 4096x7168 7168x2048; do
          deepseek_shapes+="${deepseek_shapes:+,}${m}x${nk}"
        done
      done
      timeout 300 "$bin/fp8gemm_bench" --steps="$number" --shapes="$deepseek_shapes" --benchmark_repetitions=3 \
        --benchmark_min_time=0.05 --benchmark_out="$OUT/bench_deepseek.json" --benchmark_out_format=json \
        > "$LOGS/bench_deepseek.log" 2>&1
      echo "bench deepseek rc=$? ${SECONDS}s"
      grep -E "_median" "$LOGS/bench_deepseek.log" | awk '{print "  " $1, $2, $3}' | head -80
      ;;
    ladder)
      timeout 300 "$bin/fp8gemm_bench" --shapes=4096x4096x4096,8192x8192x8192,64x2112x7168 --time_limit=280 \
        --benchmark_out="$OUT/ladder_all_steps.json" --benchmark_out_format=json > "$LOGS/bench_ladder.log" 2>&1
      echo "bench ladder rc=$? ${SECONDS}s"
      grep -E "_median" "$LOGS/bench_ladder.log" | awk '{print "  " $1, $2, $3}' | head -60
      ;;
    decode)
      read -r m n k <<< "${DECODE_SHAPE:-64 2112 7168}"
      shape_args="--m $m --n $n --k $k"
      # shellcheck disable=SC2086  # the shape's words are options
      timeout 30 "$bin/fp8gemm" --step "$number" $shape_args --check > "$LOGS/decode_check.log" 2>&1
      echo "fp8gemm --step $number ${m}x${n}x${k} --check: rc=$?: $(grep -E '^launch:' "$LOGS/decode_check.log")"
      for slices in 1 2 3 4 6 8; do  # the split count forced: how the time depends on it
        # shellcheck disable=SC2086
        timeout 30 "$bin/fp8gemm" --step "$number" $shape_args --split-k $slices > "$LOGS/decode_split_$slices.log" 2>&1
        echo "  split_k $slices: rc=$? $(grep -E '^time:' "$LOGS/decode_split_$slices.log")"
      done
      metrics=sm__cycles_active.min,sm__cycles_active.max,sm__cycles_active.avg,gpc__cycles_elapsed.max
      metrics+=,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum,sm__warps_active.avg.pct_of_peak_sustained_active
      # shellcheck disable=SC2086
      timeout 120 ncu --clock-control none --section LaunchStats --section Occupancy --section SpeedOfLight \
        --section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables --section WarpStateStats \
        --section SchedulerStats --metrics "$metrics" --print-details all -k regex:'fp8_gemm_kernel' \
        --launch-skip 3 --launch-count 1 "$bin/fp8gemm" --step "$number" $shape_args > "$LOGS/decode_ncu_${number}.txt" 2>&1
      echo "ncu decode rc=$? ${SECONDS}s: $(grep -E '^ +Duration' "$LOGS/decode_ncu_${number}.txt" | head -1)"
      grep -E '^ +(Duration|DRAM Throughput|L2 Cache Throughput|SM Active Cycles|Elapsed Cycles|sm__cycles_active|dram__bytes)' \
        "$LOGS/decode_ncu_${number}.txt" | head -12 | sed 's/^ */    /'
      # shellcheck disable=SC2086
      timeout 120 ncu --clock-control none --section SourceCounters --section WarpStateStats --warp-sampling-interval 0 \
        -k regex:'fp8_gemm_kernel' --launch-skip 3 --launch-count 1 --page source --print-source sass --csv \
        "$bin/fp8gemm" --step "$number" $shape_args 2>&1 | gzip > "$OUT/decode_ncu_source_${number}.csv.gz"
      echo "ncu decode source rc=$? ${SECONDS}s"
      # shellcheck disable=SC2086
      timeout 120 ncu --clock-control none --section SpeedOfLight --section LaunchStats --launch-skip 0 --launch-count 60 \
        "$bin/fp8gemm" --step cublaslt $shape_args > "$LOGS/decode_ncu_cublaslt.txt" 2>&1
      echo "ncu decode cublaslt rc=$? ${SECONDS}s"
      grep -E '^  [A-Za-z_].*\(|^ +Duration' "$LOGS/decode_ncu_cublaslt.txt" | tail -12 | cut -c1-150
      ;;
    splits)
      default_split_shapes=64x2112x7168,64x24576x1536,64x32768x512,64x7168x16384,64x4096x7168,64x7168x2048
      default_split_shapes+=,128x2112x7168,128x24576x1536,128x32768x512,128x7168x16384,128x4096x7168,128x7168x2048
      default_split_shapes+=,1024x1024x16384,4096x2112x7168
      timeout 400 "$bin/fp8gemm_bench" --steps="$number" --shapes="${SPLIT_SHAPES:-$default_split_shapes}" \
        --split_k_counts=1,2,3,4,6,8 --benchmark_repetitions=3 --benchmark_min_time=0.05 \
        --benchmark_out="$OUT/bench_splits.json" --benchmark_out_format=json > "$LOGS/bench_splits.log" 2>&1
      echo "bench splits rc=$? ${SECONDS}s"
      grep -E "^${step}(_split[0-9]+)?/.*_median|^cublaslt/.*_median" "$LOGS/bench_splits.log" | awk '{print "  " $1, $2, $3}'
      ;;
    torch)
      python3 -c 'import torch; print("torch", torch.__version__, torch.cuda.get_device_name())'
      export FP8GEMM_TORCH_LIB="$bin/libfp8gemm_torch.so"
      PYTHONUNBUFFERED=1 timeout 200 python3 -m pytest -q -rs -p no:cacheprovider pytorch/test_fp8gemm_op.py \
        > "$LOGS/pytest.log" 2>&1
      echo "pytest rc=$? ${SECONDS}s: $(tail -n 1 "$LOGS/pytest.log")"
      grep -E "^(FAILED|ERROR|SKIPPED)" "$LOGS/pytest.log" | head -12
      torch_shapes=4096x4096x4096,8192x8192x8192,64x2112x7168,1024x1024x16384,128x7168x16384
      timeout 120 "$bin/fp8gemm_bench" --steps="$number" --shapes=$torch_shapes --benchmark_filter="^${number}_" \
        --benchmark_repetitions=3 --benchmark_min_time=0.05 --benchmark_out="$OUT/torch_driver.json" \
        --benchmark_out_format=json > "$LOGS/torch_driver.log" 2>&1
      echo "driver bench rc=$? ${SECONDS}s"
      PYTHONUNBUFFERED=1 timeout 150 python3 pytorch/bench_fp8gemm_op.py --step "$number" \
        --driver-json "$OUT/torch_driver.json" --out "$OUT/torch_bench.json" 2>&1 | tee "$LOGS/torch_bench.log"
      ;;
    rows)
      for shape in "4095 4097 4100" "1000 1008 4097" "17 255 1000"; do
        read -r m n k <<< "$shape"
        timeout 60 "$bin/fp8gemm" --step "$number" --m "$m" --n "$n" --k "$k" --check >> "$LOGS/rows_checks.log" 2>&1
        echo "fp8gemm --step $number ${m}x${n}x${k} --check: rc=$?"
      done
      grep -E "^launch:|check PASS|FAIL" "$LOGS/rows_checks.log" | head -6
      rows_shapes=4096x4096x4096,4096x4096x4100,4096x4097x4096,4095x4097x4100,8192x8192x8192,8192x8192x8200,2048x8192x7168,2047x8191x7176
      timeout 150 "$bin/fp8gemm_bench" --steps="$number" --shapes=$rows_shapes --benchmark_repetitions=3 \
        --benchmark_min_time=0.05 --benchmark_out="$OUT/bench_rows.json" --benchmark_out_format=json \
        > "$LOGS/bench_rows.log" 2>&1
      echo "bench rows rc=$? ${SECONDS}s"
      grep -E "_median|skipped|refus" "$LOGS/bench_rows.log" | awk '{print "  " $1, $2, $3}' | head -30
      ;;
    grouped)
      timeout 150 "$bin/test_grouped_gpu" > "$LOGS/test_grouped_gpu.log" 2>&1
      echo "test_grouped_gpu rc=$? ${SECONDS}s: $(tail -n 1 "$LOGS/test_grouped_gpu.log")"
      grep -E "^\[  FAILED  \]|SKIPPED \]" "$LOGS/test_grouped_gpu.log" | head -8
      filter="*GroupedTest*ragged_block*:*GroupedTest*ragged_per_tensor_bf16*:*GroupedUncheckedTest*"
      for tool in memcheck racecheck; do
        timeout 150 compute-sanitizer --tool $tool "$bin/test_grouped_gpu" --gtest_filter="$filter" \
          > "$LOGS/${tool}_grouped.log" 2>&1
        echo "$tool grouped rc=$? ${SECONDS}s: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$LOGS/${tool}_grouped.log" | tail -1)" \
          "$(grep -cE '^\[       OK \]' "$LOGS/${tool}_grouped.log") passed"
      done
      timeout 240 "$bin/fp8gemm_grouped_bench" --benchmark_out="$OUT/bench_grouped.json" --benchmark_out_format=json \
        > "$LOGS/bench_grouped.log" 2>&1
      echo "grouped bench rc=$? ${SECONDS}s"
      grep -E "_median|FAIL|skipped" "$LOGS/bench_grouped.log" | awk '{print "  " $1, $2, $3, $NF}' | head -40
      ;;
    probe)
      timeout 240 "$bin/tma_ring_probe" --json "$OUT/tma_ring_probe.json" > "$LOGS/tma_ring_probe.log" 2>&1
      echo "tma_ring_probe rc=$? ${SECONDS}s"
      head -n 80 "$LOGS/tma_ring_probe.log" | sed 's/^/  /'
      ;;
    *) echo "unknown phase $phase"; exit 2 ;;
  esac
done
