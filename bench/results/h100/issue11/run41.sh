#!/usr/bin/env bash
# Issue 11 run 41: step 12's tile order in groups of a fixed 2048 rows of D (B: 94398f8 with
# run40_group_height_next.patch: 16 rows of the 128 x 128 kernels' cluster tiles, 8 of the wide
# fast kernel's 256 x 256) against the committed 8 rows of cluster tiles (A: 94398f8); and, for
# issue 9, C: B with the unit's columns of the bias prefetched into L1 at the start of each unit
# (run41_bias_prefetch.patch, on top of B). Each build
# holds step 12 alone, built on the development machine; the programs travelled as
# build-carry/carry41.tar.xz (not committed) and this script ran as build-carry/run41.sh from the
# repository root. B's and C's exact suites, then the builds in turn, twice: fp8gemm_bench on eight M = 4096 / 8192 shapes and on block-scaled
# and bias + GELU variants (A, B, C), fp8gemm_grouped_bench on the four contiguous DeepGEMM shapes
# (A, B); then B's epilogue, shape and grouped suites and C's epilogue suite, and B on the 18
# DeepSeek-V3 shapes.
set -u
cd "$(dirname "$0")/.."
C=/tmp/c41
export FP8GEMM_REQUIRE_GPU=1
mkdir -p $C && tar -xJf build-carry/carry41.tar.xz -C $C
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv
mkdir -p $OUT/s $OUT/j
for v in B C; do  # the quick exact suite first; the longer suites after the timings
  LD_LIBRARY_PATH=$C/$v timeout 60 $C/$v/test_exact_gpu --gtest_filter='*12_grouped_moe*' > $OUT/s/${v}_test_exact_gpu.log 2>&1
  echo "$v test_exact_gpu rc=$?: $(tail -n 1 $OUT/s/${v}_test_exact_gpu.log)"
done
shapes=4096x4096x4096,8192x8192x8192,4096x7168x16384,4096x4096x7168,4096x32768x512,4096x2112x7168
shapes+=,4096x24576x1536,4096x7168x2048
grouped=4x8192x4096x7168/contiguous,4x8192x7168x2048/contiguous,8x4096x4096x7168/contiguous
grouped+=,8x4096x7168x2048/contiguous
for round in 1 2; do
  for v in A B C; do
    export LD_LIBRARY_PATH=$C/$v
    timeout 200 $C/$v/fp8gemm_bench --steps=12 --shapes=$shapes --benchmark_repetitions=3 \
      --benchmark_min_time=0.05 --benchmark_out=$OUT/j/run41_ab${round}_$v.json --benchmark_out_format=json \
      > $OUT/j/run41_ab${round}_$v.log 2>&1
    echo "$v plain round $round rc=$? ${SECONDS}s"
    timeout 200 $C/$v/fp8gemm_bench --steps=12 --epilogue_variants --shapes=4096x4096x4096,4096x7168x16384 \
      --benchmark_filter='^(12_grouped_moe|cublaslt)/.*(block/none/bf16|tensor/bias_gelu/bf16)' --benchmark_repetitions=3 \
      --benchmark_min_time=0.05 --benchmark_out=$OUT/j/run41_variants${round}_$v.json --benchmark_out_format=json \
      > $OUT/j/run41_variants${round}_$v.log 2>&1
    echo "$v variants round $round rc=$? ${SECONDS}s"
    [ $v = C ] && continue
    timeout 200 $C/$v/fp8gemm_grouped_bench --shapes=$grouped --benchmark_out=$OUT/j/run41_grouped${round}_$v.json \
      --benchmark_out_format=json > $OUT/j/run41_grouped${round}_$v.log 2>&1
    echo "$v grouped round $round rc=$? ${SECONDS}s"
  done
  tar -C $OUT -czf $OUT/run41_json.tar.gz j s  # what has run so far comes back even if the call is cut
done
for t in test_epilogue_gpu test_steps_gpu; do
  LD_LIBRARY_PATH=$C/B timeout 120 $C/B/$t --gtest_filter='*12_grouped_moe*' > $OUT/s/B_$t.log 2>&1
  echo "B $t rc=$? ${SECONDS}s: $(tail -n 1 $OUT/s/B_$t.log)"
done
LD_LIBRARY_PATH=$C/B timeout 60 $C/B/test_grouped_gpu > $OUT/s/B_test_grouped_gpu.log 2>&1
echo "B test_grouped_gpu rc=$? ${SECONDS}s: $(tail -n 1 $OUT/s/B_test_grouped_gpu.log)"
LD_LIBRARY_PATH=$C/C timeout 120 $C/C/test_epilogue_gpu --gtest_filter='*12_grouped_moe*' > $OUT/s/C_test_epilogue_gpu.log 2>&1
echo "C test_epilogue_gpu rc=$? ${SECONDS}s: $(tail -n 1 $OUT/s/C_test_epilogue_gpu.log)"
tar -C $OUT -czf $OUT/run41_json.tar.gz j s
LD_LIBRARY_PATH=$C/B OUT=$OUT/d bash bench/measure_h200.sh 12_grouped_moe g2048 $C/B deepseek
mv $OUT/d/bench_deepseek.json $OUT/j/run41_bench_deepseek.json; rm -rf $OUT/d
python3 - "$OUT/j" <<'PY'
import json, sys, glob, os, statistics
d = sys.argv[1]
def med(path):
    out = {}
    for b in json.load(open(path))["benchmarks"]:
        if b.get("aggregate_name") == "median" and b["run_name"].startswith("12_grouped_moe"):
            out[b["run_name"]] = b["real_time"]
    return out
for kind in ("ab", "variants", "grouped"):
    for x, y in (("A", "B"), ("B", "C")):
        for r in (1, 2):
            a, b = os.path.join(d, f"run41_{kind}{r}_{x}.json"), os.path.join(d, f"run41_{kind}{r}_{y}.json")
            if not (os.path.exists(a) and os.path.exists(b)): continue
            A, B = med(a), med(b)
            for k in sorted(A):
                if k in B: print(f"{kind}{r} {k:58s} {x}/{y} time {A[k]/B[k]:.3f}")
PY
tar -C $OUT -czf $OUT/run41_json.tar.gz j s && rm -rf $OUT/j $OUT/s
ls -la $OUT
