// Step 11 (Hopper) — 2-block clusters: the two blocks of a cluster work on
// side-by-side tiles of D (same rows, neighbouring columns), which need the
// same tile of A, and the TMA reads that tile from the L2 once for both.
//
// Step 10's promoted kernel keeps the tensor pipe active 72 % of the time at
// 4096^3 against cuBLASLt's 81 %, and its L2 throughput is at 67 % of peak
// (issue 11 run 5): each block reads 32 KB a K block (16 KB of A, 16 KB of
// B) for 4 MFLOP, 1.2 TFLOP/s of tensor work per 10 TB/s of L2 reads over
// the 132 SMs. Here each block of a cluster loads half of the shared A tile
// (64 of its 128 rows) with a multicast TMA copy, which writes those rows
// into both blocks' shared memory: per block, 8 KB of A and 16 KB of B read
// from the L2 a K block, a quarter less than step 10.
//
// What a cluster adds to the ring:
//   - a stage is free only when the consumers of both blocks are done with
//     it (the partner's TMA writes into it too): each consumer warp arrives
//     on the empty barrier of every block of the cluster, so a barrier counts
//     the warps of both;
//   - each block's full barrier expects the whole stage (its own half of A,
//     the partner's half, its B), whoever's copy delivers the bytes;
//   - the barriers are initialized, and seen initialized by the partner,
//     before any copy or arrival (a cluster barrier, not __syncthreads); no
//     block exits while its partner may still write into it or arrive on its
//     barriers (a cluster barrier at the end);
//   - the two blocks walk the same list of units, a unit now being a pair of
//     tiles side by side (a "cluster tile"); where N has an odd number of
//     tiles, the last pair's second tile lies past N: that block multiplies
//     zeros for its partner's sake and stores nothing.
// The 64-row tile of M <= 64 (decode shapes) reads a 64 x 128 A box whose
// reuse is not worth a cluster: it keeps clusters of one block.
//
// Everything else is step 10's: one block (here, one cluster) per SM pair
// walking units in grouped order, two accumulator sets with setmaxnreg
// (56/224 here: see kProducerRegisters), D through shared memory and the
// TMA, split-K in a workspace, rows anywhere, the amax once per block.
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
#include "common/sm90/cluster.cuh"
#include "common/sm90/cluster_launch.h"
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
// The grouped order: 8 rows of cluster tiles per group. A wave of 66
// clusters then covers 8 rows x about 8 columns of 128 x 256 cluster tiles,
// as step 10's wave of 132 blocks covered 8 x 17 tiles of 128 x 128.
constexpr int kGroupRows = 8;

// A tile shape of D and everything that follows from it (step 08's, with the
// D buffer added to shared memory, and the cluster).
template <int kM, int kN, int kCluster>
struct Tile {
  static constexpr int kBlockM = kM;  // rows of D per block: 64 per consumer warpgroup
  static constexpr int kBlockN = kN;  // columns of D per block: the N of one wgmma
  // Blocks per cluster, on neighbouring tiles along N: they share A's tile,
  // and each loads kBoxRowsA of its rows for all of them.
  static constexpr int kClusterBlocks = kCluster;
  static constexpr int kBoxRowsA = kM / kCluster;
  static constexpr uint32_t kBoxBytesA = kBoxRowsA * kBlockK;
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
  static_assert(kCluster == 1 || kCluster == 2, "clusters of one block or two");
  static_assert(kBoxBytesA % 1024 == 0, "each block's part of A must keep the swizzle's 1024-byte alignment");
  static_assert(kTileBytesA % 1024 == 0 && kTileBytesB % 1024 == 0, "tiles must keep 1024-byte alignment");
  static_assert(sm90::kTmaStoreBoxes<OutputType::kBF16, kN> == kStoreBoxesPerWarpgroup &&
                    sm90::kTmaStoreBoxes<OutputType::kE4M3, kN> <= kStoreBoxesPerWarpgroup,
                "D's buffer holds a warpgroup's BF16 or FP8 boxes");
};
using LargeTile = Tile<128, 128, 2>;         // step 07's, in clusters of two
using SmallTile = Tile<64, kSmallTileN, 1>;  // M <= kSmallTileMaxM: no cluster
constexpr int kScalesAhead = 2;              // K blocks of block scales the loader has in flight
constexpr int kScaleLoaderWarp = 1;          // the producer warpgroup's warp that copies the block scales
constexpr int kAmaxBarrier = 1;              // the named barrier of the consumers' amax reduction
constexpr int kStoreBarrier = 2;             // + w: warpgroup w's, around its TMA store
constexpr int kPartialBarrier = 4;           // the consumers', around a split-K unit's count
// The register budgets with two consumer warpgroups (setmaxnreg): the
// producer's single TMA thread and scale loader need few. 56, not step 10's
// 48: the scale loader's look-ahead (kScalesAhead) spilled 4 bytes in 48
// (128 x 56 + 256 x 224 = 64512 of the SM's 65536 registers).
constexpr int kProducerRegisters = 56;
constexpr int kConsumerRegisters = 224;

#if FP8GEMM_SM90A_DEVICE
constexpr int kWgmmaK = 32;  // K of one FP8 wgmma

#endif

// kBlockScales: A has 1 x 128 or B has 128 x 128 scales, applied at each
// promotion (so kPromote is true). kSplit: the units split K (slices > 1);
// without it the kernel has no split-K code.
template <class T, Fp8Format kFormatA, Fp8Format kFormatB, bool kPromote, bool kBlockScales, bool kSplit>
__global__ void __launch_bounds__(T::kThreads, 1)
    cluster_multicast_fp8_gemm_kernel(const __grid_constant__ CUtensorMap tensor_map_a,
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
  constexpr int kCluster = T::kClusterBlocks;
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

  // The units of work: (cluster tile, slice) pairs, numbered cluster tile *
  // slices + slice, a cluster tile being kCluster tiles side by side along N,
  // the cluster tiles in the grouped order of common/device/tile_scheduler.h.
  // Cluster c (blocks kCluster c ..) takes units c, c + clusters, ...; the
  // block of rank r in it takes tile r of each cluster tile. The producer and
  // the consumers of both blocks walk the same list, each at its own pace.
  // In 32-bit arithmetic (the launcher has checked that every number fits):
  // a 64-bit division is a call, and a call would keep ptxas from giving the
  // consumers the registers setmaxnreg gives them (see kConsumerRegisters).
  // Each role makes its own Walk after its setmaxnreg: values computed before
  // it stay live across it, and the producer's 40 registers had to spill them.
  struct Walk {
    int m_tiles, n_tiles, k_blocks;  // the last K block zero-filled past K
    int cluster_n_tiles;             // cluster tiles along N (the last may stick out past N)
    int rank;                        // this block's in its cluster
    int units;                       // this cluster's
  };
  const auto make_walk = [&] {
    Walk w;
    w.m_tiles = static_cast<int>((args.m + kBlockM - 1) / kBlockM);
    w.n_tiles = static_cast<int>((args.n + kBlockN - 1) / kBlockN);
    w.k_blocks = static_cast<int>((args.k + kBlockK - 1) / kBlockK);
    w.cluster_n_tiles = (w.n_tiles + kCluster - 1) / kCluster;
    w.rank = kCluster == 1 ? 0 : static_cast<int>(cluster_block_rank());
    w.units =
        persistent_tile_count<int>(w.m_tiles * w.cluster_n_tiles * slices, gridDim.x / kCluster, blockIdx.x / kCluster);
    return w;
  };
  struct Unit {
    int m_block, n_block;         // n_block >= n_tiles: past N (the cluster tile sticks out)
    int tile;                     // cluster tile * kCluster + rank: this block's tile's split-K sums and counter
    int slice, kb_begin, kb_end;  // this unit's K blocks: k_slice(k_blocks, slices, slice)
  };
  const auto unit_of = [&](const Walk& w, int i) {
    const int number = persistent_tile_number<int>(gridDim.x / kCluster, blockIdx.x / kCluster, i);
    Unit u;
    const int cluster_tile = number / slices;
    u.slice = number - cluster_tile * slices;
    u.tile = cluster_tile * kCluster + w.rank;
    const TileCoord coord = grouped_tile<int>(cluster_tile, w.m_tiles, w.cluster_n_tiles, kGroupRows);
    u.m_block = static_cast<int>(coord.m_block);
    u.n_block = static_cast<int>(coord.n_block) * kCluster + w.rank;
    const KBlockRange range = k_slice<int>(w.k_blocks, slices, u.slice);
    u.kb_begin = static_cast<int>(range.first);
    u.kb_end = static_cast<int>(range.first + range.count);
    return u;
  };
  const int warpgroup = threadIdx.x / kWarpgroupThreads;

  // The ring's barriers, as in step 10: full when the stage's bytes have
  // arrived (this block's TMA copies and the partner's multicast half of A)
  // and, with block scales, the scale loader has stored its scales; empty
  // when the consumers of every block of the cluster are done with it: one
  // arrival per consumer warp of this block (per thread with block scales:
  // each has read the stage's scales), and one per consumer warp of each
  // other block of the cluster.
  constexpr int kFullArrivals = 1 + (kBlockScales ? kWarpSize : 0);
  constexpr int kEmptyArrivals =
      (kBlockScales ? kConsumerWarps * kWarpSize : kConsumerWarps) + (kCluster - 1) * kConsumerWarps;
  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      mbarrier_init(shared_address(&full_barrier[s]), kFullArrivals);
      mbarrier_init(shared_address(&empty_barrier[s]), kEmptyArrivals);
    }
    fence_barrier_init();  // at cluster scope: for the partner's copies and arrivals
  }
  // Nobody copies into a block or arrives on its barriers before they are initialized.
  if constexpr (kCluster > 1) {
    cluster_sync();
  } else {
    __syncthreads();
  }

  // Registers from the producer to the consumers, where there are two
  // consumer warpgroups (the 64-row tile's 256 threads may use 255 anyway).
  constexpr bool kMoveRegisters = kConsumerWarpgroups == 2;
  if (warpgroup == kConsumerWarpgroups) {
    if constexpr (kMoveRegisters) set_max_registers<kProducerRegisters, /*kDecrease=*/true>();
    const Walk walk = make_walk();
    const uint32_t full_barriers = shared_address(full_barrier), empty_barriers = shared_address(empty_barrier);
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
          mbarrier_wait(empty_barriers + 8 * stage, phase ^ 1);
          const uint32_t full = full_barriers + 8 * stage;
          // The whole stage, zero-filled parts and the partner's half of A included.
          mbarrier_arrive_expect_tx(full, kStageBytes);
          if constexpr (kCluster > 1) {  // this block's rows of A, into every block of the cluster
            tma_load_2d_multicast(tiles_a + stage * kTileBytesA + walk.rank * T::kBoxBytesA, &tensor_map_a, full,
                                  kb * kBlockK, u.m_block * kBlockM + walk.rank * T::kBoxRowsA,
                                  static_cast<uint16_t>((1u << kCluster) - 1));
          } else {
            tma_load_2d(tiles_a + stage * kTileBytesA, &tensor_map_a, full, kb * kBlockK, u.m_block * kBlockM);
          }
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
        // A tile past N (the cluster tile sticks out) reads the last column's.
        const int64_t column = std::min<int64_t>(int64_t{u.n_block} * kBlockN, args.n - 1);
        const float* b_row = k_block_scales(args.b_scale_granularity, args.b_scales, column, args.k);
        // The scales of K block kb + kScalesAhead are loaded while those of
        // kb are stored: with one K block's loads waited for at a time, the
        // loader took a global load's latency per K block and held the
        // consumers back (issue 11 run 10: block scales at 0.78x the
        // per-tensor speed). ahead[d] holds K block kb + d's.
        struct KBlockScales {
          float a[kBlockM / kWarpSize];
          float b;
        };
        const auto load = [&](int kb, KBlockScales& s) {
          const bool inside = kb < u.kb_end;
#pragma unroll
          for (int r = 0; r < kBlockM / kWarpSize; ++r) s.a[r] = a_rows[r] != nullptr && inside ? a_rows[r][kb] : 1.0f;
          s.b = b_row != nullptr && inside ? b_row[kb] : 1.0f;
        };
        KBlockScales ahead[kScalesAhead + 1];
#pragma unroll
        for (int d = 0; d < kScalesAhead; ++d) load(u.kb_begin + d, ahead[d]);
        for (int kb = u.kb_begin; kb < u.kb_end; ++kb) {
          load(kb + kScalesAhead, ahead[kScalesAhead]);
          mbarrier_wait(empty_barriers + 8 * stage, phase ^ 1);
#pragma unroll
          for (int r = 0; r < kBlockM / kWarpSize; ++r) stage_scales[stage].a[lane + kWarpSize * r] = ahead[0].a[r];
          if (lane == 0) stage_scales[stage].b = ahead[0].b;
          mbarrier_arrive(full_barriers + 8 * stage);  // release: the stores above come first
          if (++stage == kStages) {
            stage = 0;
            phase ^= 1;
          }
#pragma unroll
          for (int d = 0; d < kScalesAhead; ++d) ahead[d] = ahead[d + 1];  // named registers: shifted, not indexed
        }
      }
    }
    return;
  }

  // ---- consumers: warpgroup w multiplies rows 64w..64w+63 of each unit's tile.
  if constexpr (kMoveRegisters) set_max_registers<kConsumerRegisters, /*kDecrease=*/false>();
  const Walk walk = make_walk();
  // The barriers' shared addresses (stage s's: + 8 s), computed once. Each
  // shared_address() of a __shared__ variable reads the block's ID in its
  // cluster (S2UR SR_CgaCtaId) and builds the address from it: a chain of
  // dependent instructions that Nsight Compute's stall samples found in
  // front of every stage wait and every release when it was redone there.
  const uint32_t full_barriers = shared_address(full_barrier), empty_barriers = shared_address(empty_barrier);
  // The partner's empty barriers, in the cluster's shared-memory window.
  const uint32_t partner_empty_barriers =
      kCluster > 1 ? cluster_shared_address(empty_barriers, (walk.rank + 1) % kCluster) : 0u;
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
  // A stage this warp is done with is released in every block of the
  // cluster: the partner's TMA writes its half of A into this block's stage,
  // and this block's into the partner's. Lane 0 arrives for the warp, on this
  // block's barrier and on the others'; with block scales every lane arrives
  // on this block's (its reads of the stage's scales come before).
  const auto release = [&](int its_stage) {
    if (kBlockScales || lane == 0) mbarrier_arrive(empty_barriers + 8 * its_stage);
    if constexpr (kCluster > 1) {
      if (lane == 0) mbarrier_arrive_cluster(partner_empty_barriers + 8 * its_stage);
    }
  };
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
        mbarrier_wait_warp(full_barriers + 8 * stage, phase);  // warp-uniform: see its comment
        __syncwarp();                                          // wgmma is .aligned: the warp must be converged
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
        release(its_stage);
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
        mbarrier_wait(full_barriers + 8 * stage, phase);
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
        if (kb > u.kb_begin) release(stage == 0 ? kStages - 1 : stage - 1);
        advance();
      }
      // The unit's last K block: its wgmmas done, its stage released.
      wgmma_wait_group<0>();
      fence_registers(accum);
      release(stage == 0 ? kStages - 1 : stage - 1);
    }
    // The unit's sums: promoted, or wgmma's own (fast accumulation).
    const auto finish = [&](float(&sums)[kAccumulators]) {
      // A tile past N was multiplied for the partner's sake (its B zeros):
      // nothing to add or store.
      if (kCluster > 1 && u.n_block >= walk.n_tiles) return;
      if constexpr (kSplit) {  // ---- split-K: the last of the tile's units goes on, the others take their next
        if (!gather_in_workspace<kAccumulators, kConsumerWarpgroups * kWarpgroupThreads, kMaxSlices>(
                sums, workspace, counters, u.tile, slices, u.slice, &last_block, kPartialBarrier))
          return;
      }
      // ---- epilogue, while the producer already loads the next unit's tiles.
      const int col0 = u.n_block * kBlockN + 2 * (lane % 4);
      const int tile_row = u.m_block * kBlockM + warpgroup * 64;  // the warpgroup's part of the D tile
      const int tile_col = u.n_block * kBlockN;
      apply_epilogue<kBlockN>(sums, args, a_scales, b_scales, row0, col0);
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
  // Nor while its partner may still arrive on its barriers: the partner's
  // consumers reach this only after their last arrival. (The producers
  // returned early; a cluster barrier waits for the threads that have not.)
  if constexpr (kCluster > 1) cluster_sync();
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
    return split ? cluster_multicast_fp8_gemm_kernel<T, kE4, kE4, kPromote, kBlockScales, true>
                 : cluster_multicast_fp8_gemm_kernel<T, kE4, kE4, kPromote, kBlockScales, false>;
  }
  if (a == kE4) {
    return split ? cluster_multicast_fp8_gemm_kernel<T, kE4, kE5, kPromote, kBlockScales, true>
                 : cluster_multicast_fp8_gemm_kernel<T, kE4, kE5, kPromote, kBlockScales, false>;
  }
  if (b == kE4) {
    return split ? cluster_multicast_fp8_gemm_kernel<T, kE5, kE4, kPromote, kBlockScales, true>
                 : cluster_multicast_fp8_gemm_kernel<T, kE5, kE4, kPromote, kBlockScales, false>;
  }
  return split ? cluster_multicast_fp8_gemm_kernel<T, kE5, kE5, kPromote, kBlockScales, true>
               : cluster_multicast_fp8_gemm_kernel<T, kE5, kE5, kPromote, kBlockScales, false>;
}

// How many clusters of T's blocks the GPU runs at once: cluster_blocks
// neighbouring SMs of one GPC each, which is fewer than SMs / cluster_blocks
// where a GPC has an odd number of SMs free. Asked of the driver once per
// tile shape (every kernel of a shape uses the same resources); 0 without a
// GPU to ask.
template <class T>
int max_active_clusters() {
  static int cache = 0;  // 0: not asked yet; -1: asked, no answer
  if (cache == 0) {
    const KernelFunction kernel = select_kernel<T, true, false>(Fp8Format::kE4M3, Fp8Format::kE4M3, false);
    // (0 without a GPU, or without an sm_90a one: the launch says which.)
    const int clusters = sm90::max_active_clusters(kernel, T::kThreads, T::kDynamicSharedBytes, T::kClusterBlocks);
    cache = clusters > 0 ? clusters : -1;
  }
  return cache > 0 ? cache : 0;
}

// The launch plan of a GEMM: its tile shape, slice count and grid, and what
// they were chosen from (for describe_cluster_multicast_launch).
struct LaunchPlan {
  bool small_tile = false;  // SmallTile (M <= kSmallTileMaxM), else LargeTile
  int64_t tiles = 0;
  int64_t cluster_tiles = 0;  // tiles side by side in clusters of cluster_blocks (the last may stick out past N)
  int k_blocks = 0;
  int slices = 1;
  int64_t units = 0;          // cluster tiles x slices
  int64_t clusters = 0;       // min(units, resident_clusters)
  int resident_clusters = 0;  // how many the GPU runs at once (cudaOccupancyMaxActiveClusters); 0: no GPU
  int64_t blocks = 0;         // the grid: clusters x cluster_blocks
  int tile_m = 0, tile_n = 0, cluster_blocks = 1;
  int sm_count = 0;  // 0: no GPU to count SMs on
};

// The tile shape by M; GemmArgs::split_k if given, otherwise
// split_k_slices() (common/device/split_k.h, as step 08); then one cluster
// per cluster_blocks SMs, or one per unit where there are fewer units.
template <class T>
LaunchPlan plan_launch_with(const GemmArgs& args) {
  LaunchPlan plan;
  plan.tile_m = T::kBlockM;
  plan.tile_n = T::kBlockN;
  plan.cluster_blocks = T::kClusterBlocks;
  const int64_t m_tiles = (args.m + T::kBlockM - 1) / T::kBlockM, n_tiles = (args.n + T::kBlockN - 1) / T::kBlockN;
  plan.tiles = m_tiles * n_tiles;
  plan.cluster_tiles = m_tiles * ((n_tiles + T::kClusterBlocks - 1) / T::kClusterBlocks);
  plan.k_blocks = static_cast<int>((args.k + kBlockK - 1) / kBlockK);
  plan.sm_count = sm_count_of_current_device();
  if (args.split_k > 0) {
    plan.slices = args.split_k;
  } else if (plan.sm_count > 0) {
    plan.slices = split_k_slices(plan.tiles, plan.k_blocks, plan.sm_count, kMinKBlocksPerSlice, kMaxSlices);
  }
  plan.units = plan.cluster_tiles * plan.slices;
  plan.resident_clusters = plan.sm_count > 0 ? max_active_clusters<T>() : 0;
  plan.clusters = std::min<int64_t>(plan.units, std::max(plan.resident_clusters, 1));
  plan.blocks = plan.clusters * T::kClusterBlocks;
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
std::string describe_cluster_multicast_launch(const GemmArgs& args) {
  const LaunchPlan plan = plan_launch(args);
  std::string why = std::to_string(plan.tiles) + " tiles of " + std::to_string(plan.tile_m) + " x " +
                    std::to_string(plan.tile_n) + " and " + std::to_string(plan.k_blocks) + " K blocks of 128";
  if (args.split_k > 0) why += "; split_k = " + std::to_string(args.split_k) + " asked for";
  why += ": " + std::to_string(plan.slices) + (plan.slices == 1 ? " slice, " : " slices, ") +
         std::to_string(plan.units) + " units";
  if (plan.cluster_blocks > 1) {
    why += " of " + std::to_string(plan.cluster_blocks) + " tiles side by side, on " + std::to_string(plan.clusters) +
           " persistent clusters of " + std::to_string(plan.cluster_blocks) + " blocks sharing A's tile (" +
           std::to_string(plan.resident_clusters) + " fit on the GPU at once)";
  } else {
    why += " on " + std::to_string(plan.blocks) + " persistent blocks";
  }
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
  if (plan.cluster_tiles * T::kClusterBlocks * plan.slices > kMaxExtent) {
    return Status::error(StatusCode::kNotSupported,
                         "at most 2^31 - 1 (tile, slice) pairs required, got " +
                             std::to_string(plan.cluster_tiles * T::kClusterBlocks * plan.slices));
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
  // Each block of a cluster loads its part of A's tile: kBoxRowsA rows.
  status = sm90::make_kmajor_tensor_map(&map_a, args.a, args.m, args.k, args.lda, T::kBoxRowsA, kBlockK);
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
    // Numbered by cluster tile x cluster_blocks + rank: a tile past N has a
    // number (never used) too.
    const int64_t numbered_tiles = plan.cluster_tiles * T::kClusterBlocks;
    constexpr size_t kSumsPerUnit = size_t{kBlockM} * kBlockN;  // one FP32 sum per element of the tile
    status = split_k_workspace(args.stream, static_cast<size_t>(numbered_tiles * plan.slices) * kSumsPerUnit,
                               static_cast<size_t>(numbered_tiles), &workspace, &counters);
    if (!status.ok()) return status;
  }
  const cudaError_t launched =
      sm90::launch_in_clusters(kernel, static_cast<unsigned>(plan.blocks), T::kThreads, T::kDynamicSharedBytes,
                               args.stream, T::kClusterBlocks, map_a, map_b, map_d, args, store_through_tma,
                               plan.slices, workspace, counters,
                               1.0f / args.d_scale,  // FP8 D: y / d_scale as y * this (a division on the GPU is a call)
                               d_pairs_aligned);
  if (launched != cudaSuccess) {
    cudaGetLastError();
    return Status::error(StatusCode::kRuntimeError, std::string("launch in clusters of ") +
                                                        std::to_string(T::kClusterBlocks) +
                                                        " blocks failed: " + cudaGetErrorString(launched));
  }
  return status_from_launch();
}

Status launch_cluster_multicast(const GemmArgs& args) {
  const Status status = sm90::require_sm90a_gpu();
  if (!status.ok()) return status;
  const LaunchPlan plan = plan_launch(args);
  return plan.small_tile ? launch_with_tile<SmallTile>(args, plan) : launch_with_tile<LargeTile>(args, plan);
}

}  // namespace
}  // namespace fp8gemm
