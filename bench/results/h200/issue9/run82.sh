#!/usr/bin/env bash
# Issue 9 run 82 (session of 2026-12-07, fifteenth): the 128 x 256 tile's K loop with the next K block's stage
# waited for while the second half's wgmmas run. Three builds of step 12 alone:
#   A  main's kernels: run 81's programs with their switch unset (build-carry/carry81.tar.xz) and main's
#      fp8gemm_grouped_bench (build-carry/carry82a.tar.xz);
#   B  run82_hoisted_stage_wait.patch: the stage wait and the block scales' reads moved before the second
#      half's wgmma wait, the tiles' shared address kept in a register (build-carry/carry82.tar.xz);
#   C  run82_hoisted_descriptors.patch: B, and the next K block's descriptors computed there too
#      (build-carry/carry82c.tar.xz);
#   D  run82_landed_or_waited.patch: C, but the next stage only tested (mbarrier.test_wait) under the second
#      half, and waited for after this stage's release and adds if it has not landed: C held this stage
#      through the wait, and 4 x 256 masked ran 3-4 % slower than A (build-carry/carry82d.tar.xz);
#   C2 run82_c2_no_spills.patch on C (fdbe2c7): C without the tiles' address kept in a register and with the
#      block scales read when their K block starts, as in A: C spilled in five kernel families, which the
#      SASS check of CI refuses (build-carry/carry82c2.tar.xz, the side C2);
#   D2 run82_d2.patch on main: D's test of the next stage on C2 (build-carry/carry82d2.tar.xz, the side D2).
# Run 83, prepared: SIDES="A C2 D2" TAG=run83 run82.sh perf, then run82.sh tests C2 D2 and
# MUTANT=169 run82.sh mutant (two calls).
# Run 81's SASS put the stage wait's round trip, an S2UR and the descriptors' arithmetic between a
# warpgroup's last wgmma of a K block and its next first one, where cuBLASLt's kernel only adds.
# Usage: [SIDES="A C D"] [TAG=run82d] run82.sh perf    Nsight Compute at the locked base clock on each build
#                         (cycles), then the builds in turn twice: plain shapes, epilogue variants, grouped
#                         shapes (default SIDES="A B C", TAG=run82: the names of the files).
#        run82.sh tests X...   build X's suites, memcheck and racecheck.
#        [MUTANT=168|169] run82.sh mutant  a mutant's exact and epilogue suites (168 on C, 169 on C2).
set -u
cd "$(dirname "$0")/.."
phase=$1
shift
R=/tmp/r82
L=$R/run82_logs
mkdir -p $L /tmp/a82 /tmp/b82 /tmp/c82 /tmp/d82 /tmp/c282 /tmp/d282
# Each build's programs, unpacked once on a machine that stays warm between the phases.
unpack() { [ -e "$2/$3" ] || [ ! -e "build-carry/$1" ] || xz -dc "build-carry/$1" | tar -xf - -C "$2"; }
unpack carry81.tar.xz /tmp/a82 fp8gemm
unpack carry82a.tar.xz /tmp/a82 fp8gemm_grouped_bench
unpack carry82.tar.xz /tmp/b82 fp8gemm
unpack carry82c.tar.xz /tmp/c82 fp8gemm
unpack carry82d.tar.xz /tmp/d82 fp8gemm
unpack carry82c2.tar.xz /tmp/c282 fp8gemm
unpack carry82d2.tar.xz /tmp/d282 fp8gemm
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu --format=csv
export FP8GEMM_REQUIRE_GPU=1
pack() { tar -C $R -czf $OUT/run82_all.tar.gz . ; }
dir() { echo /tmp/$(echo "$1" | tr ABCD abcd)82; }
SIDES=${SIDES:-A B C}
T=${TAG:-run82}
case $phase in
perf)
  shape="--m 4096 --n 7168 --k 16384"
  for scales in tensor block; do
    for side in $SIDES; do
      C=$(dir $side)
      LD_LIBRARY_PATH=$C timeout 40 ncu --clock-control base --section SpeedOfLight -k "regex:fp8_gemm_kernel" \
        --launch-skip 3 --launch-count 1 $C/fp8gemm --step 12 $shape --scales $scales > $R/${T}_ncu_base_${side}_$scales.txt 2>&1
      echo "ncu $side $scales rc=$? ${SECONDS}s: $(grep -E '^ +Elapsed Cycles ' $R/${T}_ncu_base_${side}_$scales.txt | sed 's/  */ /g')"
    done
  done
  pack
  # SHAPES, VARIANTS (empty: none) and GROUPED trim a call that has little device time left.
  shapes=${SHAPES-4096x4096x4096,4096x7168x16384,8192x8192x8192,4096x4096x7168,2048x8192x7168}
  variants=${VARIANTS-'^(12_grouped_moe|cublaslt)/[^/]*/(tensor|block)/(none|bias_gelu)/bf16'}
  grouped=${GROUPED-'/(4x8192x4096x7168/contiguous|8x4096x7168x2048/contiguous|1x1024x4096x7168/masked|4x256x4096x7168/masked)'}
  for round in 1 2; do
    for side in $SIDES; do
      C=$(dir $side)
      LD_LIBRARY_PATH=$C timeout 60 $C/fp8gemm_bench --steps=12 --shapes=$shapes --benchmark_repetitions=3 \
        --benchmark_min_time=0.05 --benchmark_out=$R/${T}_plain_$side$round.json --benchmark_out_format=json \
        > $L/${T}_plain_$side$round.log 2>&1
      echo "plain $side round $round rc=$? ${SECONDS}s"
      grep -E "^12_grouped_moe/[^_]*_median" $L/${T}_plain_$side$round.log | awk '{print "  " $1, $2, $3}'
      [ -n "$variants" ] && LD_LIBRARY_PATH=$C timeout 60 $C/fp8gemm_bench --steps=12 --epilogue_variants \
        --shapes=4096x4096x4096,4096x7168x16384 --benchmark_filter="$variants" --benchmark_repetitions=3 \
        --benchmark_min_time=0.05 --benchmark_out=$R/${T}_variants_$side$round.json --benchmark_out_format=json \
        > $L/${T}_variants_$side$round.log 2>&1
      echo "variants $side round $round rc=$? ${SECONDS}s"
      grep -E "^12_grouped_moe.*bf16_median" $L/${T}_variants_$side$round.log | awk '{print "  " $1, $2, $3}'
      LD_LIBRARY_PATH=$C timeout 60 $C/fp8gemm_grouped_bench --benchmark_filter="$grouped" \
        --benchmark_out=$R/${T}_grouped_$side$round.json --benchmark_out_format=json > $L/${T}_grouped_$side$round.log 2>&1
      echo "grouped $side round $round rc=$? ${SECONDS}s"
      grep -E "^12_grouped_moe.*_median" $L/${T}_grouped_$side$round.log | awk '{print "  " $1, $2, $3}'
      pack
    done
  done
  ;;
tests)
  f12='*12_grouped_moe*'
  for side in "$@"; do
    C=$(dir $side)
    for t in test_exact_gpu test_epilogue_gpu test_steps_gpu; do
      LD_LIBRARY_PATH=$C timeout 100 $C/$t --gtest_filter="$f12" > $L/${side}_$t.log 2>&1
      echo "$side $t rc=$? ${SECONDS}s: $(tail -n 1 $L/${side}_$t.log)"
      grep "^\[  FAILED" $L/${side}_$t.log | head -5
    done
    LD_LIBRARY_PATH=$C timeout 60 $C/test_grouped_gpu > $L/${side}_test_grouped_gpu.log 2>&1
    echo "$side test_grouped_gpu rc=$? ${SECONDS}s: $(tail -n 1 $L/${side}_test_grouped_gpu.log)"
    grep "^\[  FAILED" $L/${side}_test_grouped_gpu.log | head -5
    for tool in memcheck racecheck; do
      LD_LIBRARY_PATH=$C timeout 60 compute-sanitizer --tool $tool $C/test_epilogue_gpu \
        --gtest_filter='*12_grouped_moe_block_none_bf16_2048x2048x2048*' > $L/${side}_${tool}_epilogue.log 2>&1
      echo "$side $tool epilogue rc=$? ${SECONDS}s: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $L/${side}_${tool}_epilogue.log | tail -1)" \
        "$(grep -cE '^\[       OK \]' $L/${side}_${tool}_epilogue.log) passed"
      LD_LIBRARY_PATH=$C timeout 60 compute-sanitizer --tool $tool $C/test_exact_gpu \
        --gtest_filter='*12_grouped_moe_4097x1008x1000*' > $L/${side}_${tool}_exact.log 2>&1
      echo "$side $tool exact (wide tile) rc=$? ${SECONDS}s: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $L/${side}_${tool}_exact.log | tail -1)" \
        "$(grep -cE '^\[       OK \]' $L/${side}_${tool}_exact.log) passed"
      LD_LIBRARY_PATH=$C timeout 60 compute-sanitizer --tool $tool $C/test_grouped_gpu \
        --gtest_filter='*GroupedTest*ragged_block*:*GroupedTest*ragged_per_tensor_bf16*' > $L/${side}_${tool}_grouped.log 2>&1
      echo "$side $tool grouped rc=$? ${SECONDS}s: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $L/${side}_${tool}_grouped.log | tail -1)" \
        "$(grep -cE '^\[       OK \]' $L/${side}_${tool}_grouped.log) passed"
    done
    pack
  done
  ;;
mutant)
  # A mutant's programs (MUTANT=168: run 82's, on C, build-carry/carry82m.tar.xz; MUTANT=169: run 83's, on
  # C2, build-carry/carry83m.tar.xz, run83_mutant169.patch). Killed when a suite fails.
  n=${MUTANT:-168}
  if [ "$n" = 168 ]; then carry=carry82m.tar.xz; else carry=carry83m.tar.xz; fi
  M=/tmp/m$n
  mkdir -p $M
  unpack $carry $M test_exact_gpu
  for t in test_exact_gpu test_epilogue_gpu; do
    LD_LIBRARY_PATH=$M timeout 100 $M/$t --gtest_filter='*12_grouped_moe*' > $L/mutant${n}_$t.log 2>&1
    echo "mutant $n $t rc=$? ${SECONDS}s: $(tail -n 1 $L/mutant${n}_$t.log)"
    grep "^\[  FAILED" $L/mutant${n}_$t.log | head -3
  done
  pack
  ;;
*) echo "usage: run82.sh perf | tests X... | [MUTANT=N] mutant"; exit 2 ;;
esac
echo "issue 9 run 82 $phase done ${SECONDS}s"
