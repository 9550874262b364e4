// Step 10 (Hopper) — promotion overlapped with the next K block's wgmmas:
// two sets of accumulators per consumer thread, and registers moved from the
// producer warpgroup to the consumers (setmaxnreg) to hold them.
//
// Step 09's consumers promote (add a K block's wgmma products into FP32
// totals, with the block scales where there are some) after waiting for all of
// that K block's wgmmas: between the last wgmma of one K block and the first of
// the next, the warpgroup's queue on the tensor cores is empty, for the
// wgmmas' latency, the promotion, the stage's release and the next stage's
// wait. Nsight Compute at 4096^3 (issue 11 run 2): the tensor pipe active
// 56 % of the time with promotion, 74 % with fast accumulation (which never
// waits inside a tile), 81 % for cuBLASLt's promoted kernel.
//
// Here K block j's wgmmas are issued into one accumulator set before block
// j - 1's, in the other set, are waited for (wgmma_wait_group<1>): the
// tensor cores run block j while the warpgroup releases block j - 1's stage
// and promotes it. Two sets of 64 FP32 per thread plus the 64 totals are 192
// registers, more than the 168 per thread a block of 384 threads may have at
// launch. The producer warpgroup needs few (one thread issues TMA loads, one
// warp copies block scales), so it lowers its budget to kProducerRegisters
// and the consumers raise theirs to kConsumerRegisters (setmaxnreg;
// 128 x 48 + 256 x 224 = 63488 of the SM's 65536). ptxas allocates each
// path within its budget only where nothing stands in its way, and four
// things did (each found from ptxas -v and the SASS; the chapter tells it):
//   - a call: a 64-bit division or a float division is a subroutine in GPU
//     code; the unit numbering is 32-bit here (grouped_tile<int>, ...) and
//     1 / d_scale comes from the host;
//   - a trap on a divergent path while wgmmas are in flight: the consumers
//     wait for a stage with mbarrier_wait_warp, whose branches are
//     warp-uniform;
//   - the compiler moving a promotion's adds below the next K block's issue
//     (4 sets live): a register fence on the totals after each promotion;
//   - values computed before the roles part, live across setmaxnreg: each
//     role computes its own walk of the units after it.
// A leftover: ptxas cannot see that no wgmma is pending after the K loop
// on every path, and serializes them all (C7518) unless a wait says so.
//
// Measured first and dropped (the chapter gives the figures): the two
// consumer warpgroups taking turns at the tensor cores (one promotes while
// the other's wgmmas run), which needs no register; it was slower than step
// 09 whichever moment the turn was handed over.
//
// Everything else is step 09's: one block per SM walking (tile, slice) units
// in grouped order, the ring's stage and phase carried across units, D through
// shared memory and the TMA, split-K in a workspace, the amax once per block.
// Fast accumulation (no promotion) keeps one set.
//
// Requires sm_90a; the chapter (README.md) explains every piece.
//
// Everything below is in an unnamed namespace: a copy of this folder (a fork)
// compiles the same names into its own unit, and both link into one program.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp8.h>

#include <algorithm>
#include <type_traits>

#include "common/device/amax.cuh"
#include "common/device/epilogue.h"
#include "common/device/kernel.h"
#include "common/device/launch.h"
#include "common/device/operand_scales.h"
#include "common/device/split_k.h"
#include "common/device/tile_scheduler.h"
#include "common/sm90/fragment_epilogue.cuh"
#include "common/sm90/mbarrier.cuh"
#include "common/sm90/split_k_gather.cuh"
#include "common/sm90/tma.cuh"
#include "common/sm90/wgmma.cuh"

namespace fp8gemm {
namespace {

// ---- what a reader would tune ------------------------------------------------
constexpr int kBlockK = 128;                 // K per stage: one 128-byte swizzle row of FP8
constexpr uint32_t kRingBytes = 160 * 1024;  // the ring: as many stages as fit (+ D's buffer: 32 KB at most)
// D leaves through shared memory and the TMA where D's rows end on 16-byte
// boundaries (BF16 and FP8; FP32 straight from the registers).
constexpr bool kStoreThroughTma = true;
// Split-K (step 08's heuristic): at most 8 slices, at least 12 K blocks each.
constexpr int kMaxSlices = 8;
constexpr int kMinKBlocksPerSlice = 12;
// Small M: 64 x 64 tiles for M <= 64 (step 08).
constexpr int kSmallTileMaxM = 64;
constexpr int kSmallTileN = 64;
// The grouped order: 8 rows of tiles per group. A wave of 132 blocks then
// covers 8 rows x about 17 columns of 128 x 128 tiles: 8 tiles of A and 17
// of B per K block in the L2, where walking down M first (steps 05-08) has
// a wave at 8192^3 read 64 of A and 3 of B.
constexpr int kGroupRows = 8;

// A tile shape of D and everything that follows from it (step 08's, with the
// D buffer added to shared memory).
template <int kM, int kN>
struct Tile {
  static constexpr int kBlockM = kM;  // rows of D per block: 64 per consumer warpgroup
  static constexpr int kBlockN = kN;  // columns of D per block: the N of one wgmma
  static constexpr int kConsumerWarpgroups = kM / 64;
  static constexpr int kThreads = (kConsumerWarpgroups + 1) * sm90::kWarpgroupThreads;  // + 1 producer warpgroup
  static constexpr int kConsumerWarps = kConsumerWarpgroups * sm90::kWarpgroupThreads / kWarpSize;
  static constexpr int kAccumulators = kN / 2;           // FP32 per consumer thread: 64 x kN over 128 threads
  static constexpr uint32_t kTileBytesA = kM * kBlockK;  // FP8: one byte per element
  static constexpr uint32_t kTileBytesB = kN * kBlockK;
  static constexpr uint32_t kStageBytes = kTileBytesA + kTileBytesB;  // what the TMA delivers per stage
  static constexpr int kStages = kRingBytes / kStageBytes;            // 5 of 128 x 128, 10 of 64 x 64
  // D's buffer: per consumer warpgroup, the boxes of its 64 x kN part of D in
  // BF16 (kN * 2 bytes a row: 2 boxes of 64 rows x 128 bytes for kN = 128).
  static constexpr int kStoreBoxesPerWarpgroup = kN * 2 / 128;
  // The tiles and D's buffer, in dynamic shared memory. Every tile and box
  // starts on a 1024-byte boundary, where the 128-byte swizzle pattern starts.
  struct SharedTiles {
    uint8_t a[kStages][kTileBytesA];
    uint8_t b[kStages][kTileBytesB];
    uint8_t d[kConsumerWarpgroups * kStoreBoxesPerWarpgroup * sm90::kTmaStoreBoxBytes];
  };
  static constexpr size_t kDynamicSharedBytes = sizeof(SharedTiles) + 1024;  // + slack to align the start
  // The scales of a stage's K block, for 1 x 128 / 128 x 128 scales.
  struct StageScales {
    float a[kM];
    float b;
  };
  // The barriers, the amax scratch and (with block scales) the stages'
  // scales live in static shared memory (with the split-K flag, where the
  // kernel splits); its size, at least this, tells the launcher that the
  // sm_90a body was compiled (see kernel_has_sm90a_image).
  static constexpr size_t kStaticSharedBytes = 2 * kStages * sizeof(uint64_t) + kConsumerWarps * sizeof(float);
  static constexpr size_t kStaticSharedBytesWithScales = kStaticSharedBytes + kStages * sizeof(StageScales);

  static_assert(kM == 64 || kM == 128, "64 rows per consumer warpgroup, one or two of them");
  static_assert(kN == 64 || kN == 128, "the N of wgmma_m64nk32");
  static_assert(kTileBytesA % 1024 == 0 && kTileBytesB % 1024 == 0, "tiles must keep 1024-byte alignment");
  static_assert(sm90::kTmaStoreBoxes<OutputType::kBF16, kN> == kStoreBoxesPerWarpgroup &&
                    sm90::kTmaStoreBoxes<OutputType::kE4M3, kN> <= kStoreBoxesPerWarpgroup,
                "D's buffer holds a warpgroup's BF16 or FP8 boxes");
};
using LargeTile = Tile<128, 128>;         // step 07's
using SmallTile = Tile<64, kSmallTileN>;  // M <= kSmallTileMaxM
constexpr int kScaleLoaderWarp = 1;       // the producer warpgroup's warp that copies the block scales
constexpr int kAmaxBarrier = 1;           // the named barrier of the consumers' amax reduction
constexpr int kStoreBarrier = 2;          // + w: warpgroup w's, around its TMA store
constexpr int kPartialBarrier = 4;        // the consumers', around a split-K unit's count
// The register budgets with two consumer warpgroups (setmaxnreg): the
// producer's single TMA thread and scale loader need few.
constexpr int kProducerRegisters = 48;
constexpr int kConsumerRegisters = 224;

#if FP8GEMM_SM90A_DEVICE
constexpr int kWgmmaK = 32;  // K of one FP8 wgmma

#endif

// kBlockScales: A has 1 x 128 or B has 128 x 128 scales, applied at each
// promotion (so kPromote is true). kSplit: the units split K (slices > 1);
// without it the kernel has no split-K code.
template <class T, Fp8Format kFormatA, Fp8Format kFormatB, bool kPromote, bool kBlockScales, bool kSplit>
__global__ void __launch_bounds__(T::kThreads, 1)
    promotion_overlap_fp8_gemm_kernel(const __grid_constant__ CUtensorMap tensor_map_a,
                                      const __grid_constant__ CUtensorMap tensor_map_b,
                                      const __grid_constant__ CUtensorMap tensor_map_d, GemmArgs args,
                                      bool store_through_tma, int slices, float* workspace, unsigned* counters,
                                      float inverse_d_scale, bool d_pairs_aligned) {
#if FP8GEMM_SM90A_DEVICE
  using namespace sm90;
  // The tile's shape and what follows from it (struct Tile).
  constexpr int kBlockM = T::kBlockM, kBlockN = T::kBlockN, kStages = T::kStages;
  constexpr int kConsumerWarpgroups = T::kConsumerWarpgroups, kConsumerWarps = T::kConsumerWarps;
  constexpr int kAccumulators = T::kAccumulators;
  constexpr uint32_t kTileBytesA = T::kTileBytesA, kTileBytesB = T::kTileBytesB, kStageBytes = T::kStageBytes;
  using SharedTiles = typename T::SharedTiles;
  using StageScales = typename T::StageScales;
  __shared__ uint64_t full_barrier[kStages];     // the TMA has filled the stage
  __shared__ uint64_t empty_barrier[kStages];    // the consumers are done with the stage
  __shared__ StageScales stage_scales[kStages];  // block scales only
  __shared__ float amax_scratch[kConsumerWarps];
  __shared__ bool last_block;  // split-K: this block was the last of its tile's slices
  extern __shared__ uint8_t dynamic_shared[];
  const uint32_t tiles_start = (shared_address(dynamic_shared) + 1023u) & ~1023u;
  const uint32_t tiles_a = tiles_start + offsetof(SharedTiles, a);  // shared-window addresses
  const uint32_t tiles_b = tiles_start + offsetof(SharedTiles, b);
  const uint32_t tiles_d = tiles_start + offsetof(SharedTiles, d);

  // The units of work: (tile, slice) pairs, numbered tile * slices + slice,
  // the tiles in the grouped order of common/device/tile_scheduler.h. This
  // block takes units blockIdx.x, blockIdx.x + gridDim.x, ...: the producer
  // and the consumers walk the same list, each at its own pace.
  // In 32-bit arithmetic (the launcher has checked that every number fits):
  // a 64-bit division is a call, and a call would keep ptxas from giving the
  // consumers the registers setmaxnreg gives them (see kConsumerRegisters).
  // Each role makes its own Walk after its setmaxnreg: values computed before
  // it stay live across it, and the producer's 40 registers had to spill them.
  struct Walk {
    int m_tiles, n_tiles, k_blocks;  // the last K block zero-filled past K
    int units;                       // this block's
  };
  const auto make_walk = [&] {
    Walk w;
    w.m_tiles = static_cast<int>((args.m + kBlockM - 1) / kBlockM);
    w.n_tiles = static_cast<int>((args.n + kBlockN - 1) / kBlockN);
    w.k_blocks = static_cast<int>((args.k + kBlockK - 1) / kBlockK);
    w.units = persistent_tile_count<int>(w.m_tiles * w.n_tiles * slices, gridDim.x, blockIdx.x);
    return w;
  };
  struct Unit {
    int m_block, n_block;
    int tile;
    int slice, kb_begin, kb_end;  // this unit's K blocks: k_slice(k_blocks, slices, slice)
  };
  const auto unit_of = [&](const Walk& w, int i) {
    const int number = persistent_tile_number<int>(gridDim.x, blockIdx.x, i);
    Unit u;
    u.tile = number / slices;
    u.slice = number - u.tile * slices;
    const TileCoord coord = grouped_tile<int>(u.tile, w.m_tiles, w.n_tiles, kGroupRows);
    u.m_block = static_cast<int>(coord.m_block);
    u.n_block = static_cast<int>(coord.n_block);
    const KBlockRange range = k_slice<int>(w.k_blocks, slices, u.slice);
    u.kb_begin = static_cast<int>(range.first);
    u.kb_end = static_cast<int>(range.first + range.count);
    return u;
  };
  const int warpgroup = threadIdx.x / kWarpgroupThreads;

  // The ring's barriers, as in step 07: full when the TMA has delivered a
  // stage (and, with block scales, the scale loader has stored its scales);
  // empty when the consumers are done with it. What is new: the stage and
  // its phase run on across units, in the producer and in the consumers
  // alike, so the ring never drains between tiles.
  constexpr int kFullArrivals = 1 + (kBlockScales ? kWarpSize : 0);
  constexpr int kEmptyArrivals = kBlockScales ? kConsumerWarps * kWarpSize : kConsumerWarps;
  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      mbarrier_init(shared_address(&full_barrier[s]), kFullArrivals);
      mbarrier_init(shared_address(&empty_barrier[s]), kEmptyArrivals);
    }
    fence_barrier_init();
  }
  __syncthreads();

  // Registers from the producer to the consumers, where there are two
  // consumer warpgroups (the 64-row tile's 256 threads may use 255 anyway).
  constexpr bool kMoveRegisters = kConsumerWarpgroups == 2;
  if (warpgroup == kConsumerWarpgroups) {
    if constexpr (kMoveRegisters) set_max_registers<kProducerRegisters, /*kDecrease=*/true>();
    const Walk walk = make_walk();
    // ---- producer: one thread feeds the ring with every K block of every
    // unit of this block, as far ahead as the ring allows: the next unit's
    // loads start while the consumers are still on this one, or in its epilogue.
    const int producer_thread = threadIdx.x - kConsumerWarpgroups * kWarpgroupThreads;
    if (producer_thread == 0) {
      prefetch_tensor_map(&tensor_map_a);
      prefetch_tensor_map(&tensor_map_b);
      int stage = 0;
      uint32_t phase = 0;  // parity of the round of the ring
      for (int i = 0; i < walk.units; ++i) {
        const Unit u = unit_of(walk, i);
        for (int kb = u.kb_begin; kb < u.kb_end; ++kb) {
          mbarrier_wait(shared_address(&empty_barrier[stage]), phase ^ 1);
          const uint32_t full = shared_address(&full_barrier[stage]);
          mbarrier_arrive_expect_tx(full, kStageBytes);  // always the whole box, zero-filled parts included
          tma_load_2d(tiles_a + stage * kTileBytesA, &tensor_map_a, full, kb * kBlockK, u.m_block * kBlockM);
          tma_load_2d(tiles_b + stage * kTileBytesB, &tensor_map_b, full, kb * kBlockK, u.n_block * kBlockN);
          if (++stage == kStages) {
            stage = 0;
            phase ^= 1;
          }
        }
      }
    } else if (kBlockScales && producer_thread / kWarpSize == kScaleLoaderWarp) {
      // The scales of K block kb go into the stage that holds its tiles (step
      // 07); lane l copies the scales of rows l, l + 32, ... of the unit's
      // tile, rows past M the last row's.
      const int lane = producer_thread % kWarpSize;
      int stage = 0;
      uint32_t phase = 0;
      for (int i = 0; i < walk.units; ++i) {
        const Unit u = unit_of(walk, i);
        const float* a_rows[kBlockM / kWarpSize];
#pragma unroll
        for (int r = 0; r < kBlockM / kWarpSize; ++r) {
          const int64_t row = std::min<int64_t>(int64_t{u.m_block} * kBlockM + lane + kWarpSize * r, args.m - 1);
          a_rows[r] = k_block_scales(args.a_scale_granularity, args.a_scales, row, args.k);  // nullptr: constant
        }
        const float* b_row =
            k_block_scales(args.b_scale_granularity, args.b_scales, int64_t{u.n_block} * kBlockN, args.k);
        for (int kb = u.kb_begin; kb < u.kb_end; ++kb) {
          float a[kBlockM / kWarpSize];
#pragma unroll
          for (int r = 0; r < kBlockM / kWarpSize; ++r) a[r] = a_rows[r] != nullptr ? a_rows[r][kb] : 1.0f;
          const float b = b_row != nullptr ? b_row[kb] : 1.0f;
          mbarrier_wait(shared_address(&empty_barrier[stage]), phase ^ 1);
#pragma unroll
          for (int r = 0; r < kBlockM / kWarpSize; ++r) stage_scales[stage].a[lane + kWarpSize * r] = a[r];
          if (lane == 0) stage_scales[stage].b = b;
          mbarrier_arrive(shared_address(&full_barrier[stage]));  // release: the stores above come first
          if (++stage == kStages) {
            stage = 0;
            phase ^= 1;
          }
        }
      }
    }
    return;
  }

  // ---- consumers: warpgroup w multiplies rows 64w..64w+63 of each unit's tile.
  if constexpr (kMoveRegisters) set_max_registers<kConsumerRegisters, /*kDecrease=*/false>();
  const Walk walk = make_walk();
  const int lane = threadIdx.x % kWarpSize;
  const int warp_in_group = (threadIdx.x % kWarpgroupThreads) / kWarpSize;
  // The scales constant along K (per tensor, per row), applied in the
  // epilogue; a 1 x 128 or 128 x 128 operand contributes 1 there.
  const ConstantScales a_scales = constant_scales(args.a_scale_granularity, args.a_scale, args.a_scales);
  const ConstantScales b_scales = constant_scales(args.b_scale_granularity, args.b_scale, args.b_scales);
  // D through the TMA where the launcher allows it, never FP32 (its 4 boxes
  // per warpgroup would not fit the D buffer, sized for BF16's 2).
  const bool through_tma = store_through_tma && args.d_type != OutputType::kFP32;
  // D's boxes for the TMA store: this warpgroup's part of the D buffer, which
  // (unlike step 07's, in the idle A tiles) the ring never touches: the next
  // unit's tiles land while the TMA still reads this unit's D.
  const uint32_t first_box = tiles_d + warpgroup * T::kStoreBoxesPerWarpgroup * kTmaStoreBoxBytes;
  float amax = 0.0f;  // max |y| over every unit this thread stores, reduced once at the end
  int stage = 0;
  uint32_t phase = 0;
  const auto advance = [&] {
    if (++stage == kStages) {
      stage = 0;
      phase ^= 1;
    }
  };
  for (int i = 0; i < walk.units; ++i) {
    const Unit u = unit_of(walk, i);
    // Declared after setmaxnreg (what is live across it must fit the launch's
    // 168 registers) and set for each unit: wgmma's register fences read the
    // accumulators, and values carried from the last unit would be live
    // through its epilogue, beside the totals, and spill.
    float accum[kAccumulators];                      // wgmma's accumulators (the first set)
    float accum_next[kPromote ? kAccumulators : 1];  // the second set (promotion only)
    float total[kPromote ? kAccumulators : 1];       // promoted FP32 sums (promotion only)
#pragma unroll
    for (int v = 0; v < kAccumulators; ++v) accum[v] = 0.0f;
    if constexpr (kPromote) {
#pragma unroll
      for (int v = 0; v < kAccumulators; ++v) accum_next[v] = 0.0f;
    }
    // This thread's rows of D: row0 and row0 + 8 (the wgmma fragment layout).
    const int row0 = u.m_block * kBlockM + warpgroup * 64 + warp_in_group * 16 + lane / 4;
    if constexpr (kPromote) {
#pragma unroll
      for (int v = 0; v < kAccumulators; ++v) total[v] = 0.0f;
      // Waits for the current stage and issues its K block's wgmmas into
      // `acc`, a fresh sum (promotion); with block scales, reads the stage's
      // scales and keeps in `scales` the block scale of each of this thread's
      // two rows (s_A of the row times s_B).
      const auto issue = [&](float(&acc)[kAccumulators], float(&scales)[2]) {
        mbarrier_wait_warp(shared_address(&full_barrier[stage]), phase);  // warp-uniform: see its comment
        __syncwarp();  // wgmma is .aligned: the warp must be converged
        if constexpr (kBlockScales) {
          const int tile_row = row0 - u.m_block * kBlockM;
          const float b = stage_scales[stage].b;
          scales[0] = stage_scales[stage].a[tile_row] * b;
          scales[1] = stage_scales[stage].a[tile_row + 8] * b;
        }
        const uint64_t desc_a = make_kmajor_sw128_descriptor(tiles_a + stage * kTileBytesA + warpgroup * 64 * kBlockK);
        const uint64_t desc_b = make_kmajor_sw128_descriptor(tiles_b + stage * kTileBytesB);
        fence_registers(acc);
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < kBlockK / kWgmmaK; ++kk) {
          wgmma_m64nk32<kBlockN, kFormatA, kFormatB>(acc, desc_a + 2 * kk, desc_b + 2 * kk, kk > 0);
        }
        wgmma_commit_group();
        fence_registers(acc);
      };
      // A K block whose wgmmas are done: releases its stage, then adds its
      // products into the totals (times the block scales, where there are some).
      const auto promote = [&](float(&acc)[kAccumulators], int its_stage, const float(&scales)[2]) {
        fence_registers(acc);
        if (kBlockScales || lane == 0) mbarrier_arrive(shared_address(&empty_barrier[its_stage]));
        if constexpr (kBlockScales) {
#pragma unroll
          for (int v = 0; v < kAccumulators; ++v) total[v] = fmaf(acc[v], scales[(v / 2) % 2], total[v]);
        } else {
#pragma unroll
          for (int v = 0; v < kAccumulators; ++v) total[v] += acc[v];
        }
        // The sums are complete here: without this the compiler sinks the
        // adds below the next issue(), keeping the old set alive beside the
        // new one (4 x 64 values live: spills and injected waits, C7517).
        fence_registers(total);
      };
      // K block j goes into accum for even j, accum_next for odd j: issue j,
      // then wait until only j's group is pending (j - 1's is done), promote
      // j - 1 while j runs. The loop takes two K blocks a turn so that each
      // set is named, never selected at run time (registers cannot be indexed).
      float scales_even[2] = {1.0f, 1.0f}, scales_odd[2] = {1.0f, 1.0f};
      const int blocks = u.kb_end - u.kb_begin;
      int stage_even = stage, stage_odd = stage;
      issue(accum, scales_even);  // K block 0
      advance();
      for (int j = 1; j < blocks; j += 2) {
        stage_odd = stage;
        issue(accum_next, scales_odd);  // K block j
        advance();
        wgmma_wait_group<1>();
        promote(accum, stage_even, scales_even);  // K block j - 1
        if (j + 1 < blocks) {
          stage_even = stage;
          issue(accum, scales_even);  // K block j + 1
          advance();
          wgmma_wait_group<1>();
        } else {
          wgmma_wait_group<0>();
        }
        promote(accum_next, stage_odd, scales_odd);  // K block j
      }
      if (blocks % 2 == 1) {  // the last K block went into accum and is still pending
        wgmma_wait_group<0>();
        promote(accum, stage_even, scales_even);
      }
      // Every group is done already, but ptxas cannot tell on the path where
      // the loop's last turn took its `if` and blocks is even: without this it
      // assumes a pending wgmma there and serializes them all (C7518).
      wgmma_wait_group<0>();
    } else {
      for (int kb = u.kb_begin; kb < u.kb_end; ++kb) {
        mbarrier_wait(shared_address(&full_barrier[stage]), phase);
        __syncwarp();  // wgmma is .aligned: the warp must be converged
        const uint64_t desc_a = make_kmajor_sw128_descriptor(tiles_a + stage * kTileBytesA + warpgroup * 64 * kBlockK);
        const uint64_t desc_b = make_kmajor_sw128_descriptor(tiles_b + stage * kTileBytesB);
        fence_registers(accum);
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < kBlockK / kWgmmaK; ++kk) {
          wgmma_m64nk32<kBlockN, kFormatA, kFormatB>(accum, desc_a + 2 * kk, desc_b + 2 * kk,
                                                     kb > u.kb_begin || kk > 0);
        }
        wgmma_commit_group();
        fence_registers(accum);
        wgmma_wait_group<1>();  // the previous K block's wgmmas are done: release its stage
        if (kb > u.kb_begin && lane == 0) {
          mbarrier_arrive(shared_address(&empty_barrier[stage == 0 ? kStages - 1 : stage - 1]));
        }
        advance();
      }
      // The unit's last K block: its wgmmas done, its stage released.
      wgmma_wait_group<0>();
      fence_registers(accum);
      if (lane == 0) mbarrier_arrive(shared_address(&empty_barrier[stage == 0 ? kStages - 1 : stage - 1]));
    }
    // The unit's sums: promoted, or wgmma's own (fast accumulation).
    const auto finish = [&](float(&sums)[kAccumulators]) {
      if constexpr (kSplit) {  // ---- split-K: the last of the tile's units goes on, the others take their next
        if (!gather_in_workspace<kAccumulators, kConsumerWarpgroups * kWarpgroupThreads, kMaxSlices>(
                sums, workspace, counters, u.tile, slices, u.slice, &last_block, kPartialBarrier))
          return;
      }
      // ---- epilogue, while the producer already loads the next unit's tiles.
      const int col0 = u.n_block * kBlockN + 2 * (lane % 4);
      const int tile_row = u.m_block * kBlockM + warpgroup * 64;  // the warpgroup's part of the D tile
      const int tile_col = u.n_block * kBlockN;
      // A column at a time: the loads all first spill in the split
      // block-scaled kernels (see ColumnLoads).
      apply_epilogue<kBlockN, ColumnLoads::kOneAtATime>(sums, args, a_scales, b_scales, row0, col0);
      if (args.d_amax != nullptr) amax = fmaxf(amax, fragment_amax<kBlockN>(sums, args, row0, col0));
      if (through_tma) {
        // The previous unit's boxes must have been read by the TMA before
        // this unit writes them: the thread that issued that store waits for
        // it here, not when it issued it, and tells its warpgroup.
        if (threadIdx.x % kWarpgroupThreads == 0) tma_store_wait_read();
        named_barrier_sync(kStoreBarrier + warpgroup, kWarpgroupThreads);
      }
      const auto store = [&](auto out) {
        constexpr OutputType kOut = decltype(out)::value;
        store_tile<kOut, kBlockN, /*kWaitForRead=*/false>(sums, args, through_tma, &tensor_map_d, first_box,
                                                          kTmaStoreBoxBytes, kStoreBarrier + warpgroup, tile_row,
                                                          tile_col, row0, col0, inverse_d_scale, d_pairs_aligned);
      };
      switch (args.d_type) {
        case OutputType::kBF16: store(std::integral_constant<OutputType, OutputType::kBF16>{}); break;
        case OutputType::kE4M3: store(std::integral_constant<OutputType, OutputType::kE4M3>{}); break;
        case OutputType::kE5M2: store(std::integral_constant<OutputType, OutputType::kE5M2>{}); break;
        default: store(std::integral_constant<OutputType, OutputType::kFP32>{}); break;  // through_tma is false
      }
    };
    if constexpr (kPromote) {
      finish(total);
    } else {
      finish(accum);
    }
  }
  // The block must not exit while the TMA still reads its last boxes.
  if (through_tma && threadIdx.x % kWarpgroupThreads == 0) tma_store_wait_read();
  if (args.d_amax != nullptr) block_amax_to_global(amax, amax_scratch, kConsumerWarps, kAmaxBarrier, args.d_amax);
#endif  // FP8GEMM_SM90A_DEVICE
}

using KernelFunction = void (*)(const CUtensorMap, const CUtensorMap, const CUtensorMap, GemmArgs, bool, int, float*,
                                unsigned*, float, bool);

// The kernel for one tile shape, pair of formats (e4m3 or e5m2 each),
// accumulation mode, and split or not.
template <class T, bool kPromote, bool kBlockScales>
KernelFunction select_kernel(Fp8Format a, Fp8Format b, bool split) {
  constexpr Fp8Format kE4 = Fp8Format::kE4M3, kE5 = Fp8Format::kE5M2;
  if (a == kE4 && b == kE4) {
    return split ? promotion_overlap_fp8_gemm_kernel<T, kE4, kE4, kPromote, kBlockScales, true>
                 : promotion_overlap_fp8_gemm_kernel<T, kE4, kE4, kPromote, kBlockScales, false>;
  }
  if (a == kE4) {
    return split ? promotion_overlap_fp8_gemm_kernel<T, kE4, kE5, kPromote, kBlockScales, true>
                 : promotion_overlap_fp8_gemm_kernel<T, kE4, kE5, kPromote, kBlockScales, false>;
  }
  if (b == kE4) {
    return split ? promotion_overlap_fp8_gemm_kernel<T, kE5, kE4, kPromote, kBlockScales, true>
                 : promotion_overlap_fp8_gemm_kernel<T, kE5, kE4, kPromote, kBlockScales, false>;
  }
  return split ? promotion_overlap_fp8_gemm_kernel<T, kE5, kE5, kPromote, kBlockScales, true>
               : promotion_overlap_fp8_gemm_kernel<T, kE5, kE5, kPromote, kBlockScales, false>;
}

// The launch plan of a GEMM: its tile shape, slice count and grid, and what
// they were chosen from (for describe_promotion_overlap_launch).
struct LaunchPlan {
  bool small_tile = false;  // SmallTile (M <= kSmallTileMaxM), else LargeTile
  int64_t tiles = 0;
  int k_blocks = 0;
  int slices = 1;
  int64_t blocks = 0;  // the grid: min(units, SMs)
  int tile_m = 0, tile_n = 0;
  int sm_count = 0;  // 0: no GPU to count SMs on
};

// The tile shape by M; GemmArgs::split_k if given, otherwise
// split_k_slices() (common/device/split_k.h, as step 08); then one block per
// SM, or one per unit where there are fewer units than SMs.
template <class T>
LaunchPlan plan_launch_with(const GemmArgs& args) {
  LaunchPlan plan;
  plan.tile_m = T::kBlockM;
  plan.tile_n = T::kBlockN;
  plan.tiles = ((args.m + T::kBlockM - 1) / T::kBlockM) * ((args.n + T::kBlockN - 1) / T::kBlockN);
  plan.k_blocks = static_cast<int>((args.k + kBlockK - 1) / kBlockK);
  plan.sm_count = sm_count_of_current_device();
  if (args.split_k > 0) {
    plan.slices = args.split_k;
  } else if (plan.sm_count > 0) {
    plan.slices = split_k_slices(plan.tiles, plan.k_blocks, plan.sm_count, kMinKBlocksPerSlice, kMaxSlices);
  }
  const int64_t units = plan.tiles * plan.slices;
  plan.blocks = plan.sm_count > 0 ? std::min<int64_t>(units, plan.sm_count) : std::min<int64_t>(units, 1);
  return plan;
}

LaunchPlan plan_launch(const GemmArgs& args) {
  if (args.m <= kSmallTileMaxM) {
    LaunchPlan plan = plan_launch_with<SmallTile>(args);
    plan.small_tile = true;
    return plan;
  }
  return plan_launch_with<LargeTile>(args);
}

// For fp8gemm --check: the tile, slice count and grid this launch would use, and why.
std::string describe_promotion_overlap_launch(const GemmArgs& args) {
  const LaunchPlan plan = plan_launch(args);
  std::string why = std::to_string(plan.tiles) + " tiles of " + std::to_string(plan.tile_m) + " x " +
                    std::to_string(plan.tile_n) + " and " + std::to_string(plan.k_blocks) + " K blocks of 128";
  if (args.split_k > 0) why += "; split_k = " + std::to_string(args.split_k) + " asked for";
  why += ": " + std::to_string(plan.slices) + (plan.slices == 1 ? " slice, " : " slices, ") +
         std::to_string(plan.tiles * plan.slices) + " units on " + std::to_string(plan.blocks) + " persistent blocks";
  if (plan.sm_count == 0) why += " (no GPU to count SMs on)";
  if (!operand_rows_aligned(args, 16)) why += "; A or B copied first to rows on 16-byte boundaries";
  return "split_k " + std::to_string(plan.slices) + " (" + why + ")" +
         (plan.slices > 1 ? ", added in a workspace" : "");
}

// The launch with tile shape T, as plan_launch() chose it.
template <class T>
Status launch_with_tile(const GemmArgs& given, const LaunchPlan& plan) {
  constexpr int kBlockM = T::kBlockM, kBlockN = T::kBlockN;
  GemmArgs args = given;  // A and B may be replaced by aligned copies below
  Status status;
  // TMA coordinates and the kernel's row and column numbers are signed 32-bit.
  constexpr int64_t kMaxExtent = 0x7FFFFFFF;
  if (args.m > kMaxExtent - kBlockM || args.n > kMaxExtent - kBlockN || args.k > kMaxExtent - kBlockK) {
    return Status::error(StatusCode::kNotSupported, "M, N, K <= 2^31 - 129 required");
  }
  // The kernel numbers units in 32-bit arithmetic. (A GEMM with 2^31 units
  // would have a D of at least 2^31 x 64 x 64 elements: no GPU holds it.)
  if (plan.tiles * plan.slices > kMaxExtent) {
    return Status::error(StatusCode::kNotSupported, "at most 2^31 - 1 units (tiles x slices) required, got " +
                                                        std::to_string(plan.tiles * plan.slices));
  }
  if (plan.slices > plan.k_blocks) {
    return Status::error(StatusCode::kNotSupported, "split_k = " + std::to_string(plan.slices) +
                                                        " is more slices than K has blocks of 128 (" +
                                                        std::to_string(plan.k_blocks) + ")");
  }

  // The TMA reads rows that start on 16-byte boundaries. A and B rows that do
  // not (an lda or ldb not a multiple of 16: K = 4100, or a sub-matrix; a
  // pointer off one) are copied first into rows that do, zero past K (the
  // chapter measures what that costs); aligned operands are read in place.
  AlignedCopies copies;
  status = align_operand_rows(&args, 16, &copies);
  if (!status.ok()) return status;
  CUtensorMap map_a, map_b;
  status = sm90::make_kmajor_tensor_map(&map_a, args.a, args.m, args.k, args.lda, kBlockM, kBlockK);
  if (!status.ok()) return status;
  status = sm90::make_kmajor_tensor_map(&map_b, args.b, args.n, args.k, args.ldb, kBlockN, kBlockK);
  if (!status.ok()) return status;
  // D through its buffer and the TMA, in boxes of 64 rows x 128 bytes, where
  // D's rows start and end on 16-byte boundaries (the TMA writes a row in
  // 16-byte pieces, see step 07) and D is BF16 or FP8 (the buffer is sized
  // for BF16). Otherwise straight from the registers: by pairs of elements
  // where a pair is aligned to its size, else one element at a time.
  const int d_bytes = static_cast<int>(output_bytes(args.d_type));
  const bool store_through_tma = kStoreThroughTma && args.d_type != OutputType::kFP32 && (args.n * d_bytes) % 16 == 0 &&
                                 output_rows_aligned(args, 16);
  const bool d_pairs_aligned = reinterpret_cast<uintptr_t>(args.d) % (2 * d_bytes) == 0 && args.ldd % 2 == 0;
  CUtensorMap map_d{};
  if (store_through_tma) {
    status =
        sm90::make_swizzled_tensor_map(&map_d, args.d, d_bytes, args.m, args.n, args.ldd * d_bytes, 64, 128 / d_bytes);
    if (!status.ok()) return status;
  }

  // Scales that change along K are applied at each promotion: without
  // promotion there is no place for them.
  const bool block_scales = has_block_scales(args);
  status = refuse_block_scales_without_promotion(args);
  if (!status.ok()) return status;
  const bool split = plan.slices > 1;
  const KernelFunction kernel = args.fast_accumulation
                                    ? select_kernel<T, false, false>(args.a_format, args.b_format, split)
                                : block_scales ? select_kernel<T, true, true>(args.a_format, args.b_format, split)
                                               : select_kernel<T, true, false>(args.a_format, args.b_format, split);
  status = sm90::kernel_has_sm90a_image(kernel, block_scales ? T::kStaticSharedBytesWithScales : T::kStaticSharedBytes);
  if (!status.ok()) return status;
  status = reserve_dynamic_shared_memory(reinterpret_cast<const void*>(kernel), T::kDynamicSharedBytes);
  if (!status.ok()) return status;
  // The kernel folds each block's amax into *d_amax with an atomic max.
  status = clear_amax(args);
  if (!status.ok()) return status;
  float* workspace = nullptr;
  unsigned* counters = nullptr;
  if (split) {
    constexpr size_t kSumsPerUnit = size_t{kBlockM} * kBlockN;  // one FP32 sum per element of the tile
    status = split_k_workspace(args.stream, static_cast<size_t>(plan.tiles * plan.slices) * kSumsPerUnit,
                               static_cast<size_t>(plan.tiles), &workspace, &counters);
    if (!status.ok()) return status;
  }
  kernel<<<static_cast<unsigned>(plan.blocks), T::kThreads, T::kDynamicSharedBytes, args.stream>>>(
      map_a, map_b, map_d, args, store_through_tma, plan.slices, workspace, counters,
      1.0f / args.d_scale,  // FP8 D's quantization: y / d_scale, as y * this (a division on the GPU is a call)
      d_pairs_aligned);
  return status_from_launch();
}

Status launch_promotion_overlap(const GemmArgs& args) {
  const Status status = sm90::require_sm90a_gpu();
  if (!status.ok()) return status;
  const LaunchPlan plan = plan_launch(args);
  return plan.small_tile ? launch_with_tile<SmallTile>(args, plan) : launch_with_tile<LargeTile>(args, plan);
}

}  // namespace
}  // namespace fp8gemm
