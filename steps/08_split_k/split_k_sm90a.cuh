// Step 08 (Hopper) — split-K: when the output tiles do not fill the GPU,
// each tile's K is cut into slices, summed by blocks of their own, and the
// partial sums are added in a fixed order, in one kernel.
//
// The kernel is step 07's (the TMA ring, consumer warpgroups on wgmma, block
// scales at each promotion, the fused epilogue). At a decode shape such as
// 64 x 2112 x 7168 step 07 has 17 output tiles of 128 x 128 for 132 SMs: 115
// SMs idle while 17 stream all of B. Two changes fill the GPU:
//
// Small tiles for small M. For M <= 64 the tile is 64 x 64 (struct Tile: one
// consumer warpgroup, wgmma.m64n64k32), so the tensor cores do not multiply
// the 64 rows past M that a 128-row tile would, and 64 x 2112 has 33 tiles.
//
// Split-K. The grid has `slices` blocks per tile; block (tile, s) sums K
// blocks k_slice(k_blocks, slices, s) of its tile (common/device/split_k.h)
// into FP32, exactly as step 07 sums all of them (block scales included: a
// slice is whole K blocks). The partial sums are then added in slice order,
// 0, 1, 2, ... — the same order in every run, so D is the same bit for bit —
// and the epilogue runs once, on the sums. Two forms of that reduction:
//
//   workspace (the default; gather_in_workspace, common/sm90/
//     split_k_gather.cuh): each block writes its partial tile into a buffer
//     in global memory and counts itself in on the tile's counter; the block
//     that arrives last adds every slice's partials and runs step 07's
//     epilogue with its TMA store;
//   cluster (GemmArgs::split_k_reduction = kCluster, split_k_epilogue): a
//     tile's blocks form one thread-block cluster; each writes its partial
//     tile into its own shared memory (the ring is idle once the mainloop is
//     done), the cluster meets at a barrier, block s adds rows
//     slice_rows(kBlockM, slices, s) of every block's partial (distributed
//     shared memory, common/sm90/cluster.cuh) and runs the epilogue on them;
//     a second barrier keeps each block alive until the others have read it.
//     No workspace, but every cluster must be resident at once (fewer slices
//     where they do not fit), and the rows leave through scalar stores.
//
// No atomics on D. With one slice (the heuristic's choice when the tiles fill
// the GPU) it is step 07.
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
constexpr uint32_t kRingBytes = 192 * 1024;  // the shared-memory ring: as many stages as fit
// D leaves through shared memory and the TMA (true: where D's rows end on
// 16-byte boundaries) or straight from the registers (false); the chapter
// measures both.
constexpr bool kStoreThroughTma = true;
// Split-K: at most 8 slices (the largest portable cluster), and at least 12
// K blocks per slice when the heuristic chooses (a slice must amortize filling
// the ring and writing its partial: with 4, 128 x 7168 x 2048 split in two ran
// at 0.6x unsplit; the chapter has the measurements).
constexpr int kMaxSlices = 8;
constexpr int kMinKBlocksPerSlice = 12;
// Small M (decode): at most this many rows of D get the small tile, 64 rows
// (one consumer warpgroup, no wgmma on rows past M) by kSmallTileN columns
// (more tiles of the few rows: more blocks stream B before K is split).
constexpr int kSmallTileMaxM = 64;
constexpr int kSmallTileN = 64;

// A tile shape of D and everything that follows from it. The kernel and the
// launcher are written once for any of them (kBlockM 64 or 128, kBlockN 64
// or 128).
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
  static constexpr int kStages = kRingBytes / kStageBytes;            // 6 of 128 x 128, 12 of 64 x 64
  // The tiles, in dynamic shared memory. Every tile starts on a 1024-byte
  // boundary, where the 128-byte swizzle pattern (8 rows x 128 bytes) starts.
  struct StageTiles {
    uint8_t a[kStages][kTileBytesA];
    uint8_t b[kStages][kTileBytesB];
  };
  static constexpr size_t kDynamicSharedBytes = sizeof(StageTiles) + 1024;  // + slack to align the start
  // The scales of a stage's K block, for 1 x 128 / 128 x 128 scales: s_A of
  // each of the tile's rows and s_B of its columns (within one 128 x 128
  // block of B: kN divides 128).
  struct StageScales {
    float a[kM];
    float b;
  };
  // The barriers, the amax scratch and (with block scales) the stages'
  // scales live in static shared memory; its size also tells the launcher
  // that the sm_90a body was compiled (see kernel_has_sm90a_image).
  static constexpr size_t kStaticSharedBytes = 2 * kStages * sizeof(uint64_t) + kConsumerWarps * sizeof(float);
  static constexpr size_t kStaticSharedBytesWithScales = kStaticSharedBytes + kStages * sizeof(StageScales);
  // A block's partial tile in shared memory (split-K): kM rows of kN FP32
  // sums, each row padded by 4 floats so that the fragment's 8 rows at a time
  // fall on different banks. It overwrites the ring, idle after the mainloop.
  static constexpr int kPartialPitch = kN + 4;

  static_assert(kM == 64 || kM == 128, "64 rows per consumer warpgroup, one or two of them");
  static_assert(kN == 64 || kN == 128, "the N of wgmma_m64nk32");
  static_assert(kTileBytesA % 1024 == 0 && kTileBytesB % 1024 == 0, "tiles must keep 1024-byte alignment");
  static_assert(kM * kPartialPitch * sizeof(float) <= sizeof(StageTiles), "the partial tile fits in the ring");
};
using LargeTile = Tile<128, 128>;         // step 07's
using SmallTile = Tile<64, kSmallTileN>;  // M <= kSmallTileMaxM
constexpr int kScaleLoaderWarp = 1;       // the producer warpgroup's warp that copies the block scales
constexpr int kAmaxBarrier = 1;           // the named barrier of the consumers' amax reduction
constexpr int kStoreBarrier = 2;          // + w: warpgroup w's, before its TMA store
constexpr int kPartialBarrier = 4;        // the consumers', before a partial tile overwrites the ring

#if FP8GEMM_SM90A_DEVICE
constexpr int kWgmmaK = 32;  // K of one FP8 wgmma

// Split-K's reduction and epilogue. Every consumer thread calls it with its
// partial sums (this block's K slice, in the fragment layout); the producer
// warpgroup meets it at its two cluster barriers. Returns this thread's
// largest |y| for the amax.
template <class T>
__device__ __forceinline__ float split_k_epilogue(const float (&partial)[T::kAccumulators], const GemmArgs& args,
                                                  uint32_t partial_tile, int slices, int slice, int m_block,
                                                  int n_block, int row_in_tile) {
  using namespace sm90;
  constexpr int kBlockM = T::kBlockM, kBlockN = T::kBlockN, kPartialPitch = T::kPartialPitch;
  constexpr int kConsumerThreads = T::kConsumerWarpgroups * kWarpgroupThreads;
  const int lane = threadIdx.x % kWarpSize;
  // 1. This block's partial tile into its shared memory, over the ring: both
  //    consumer warpgroups must be past their last wgmma first.
  named_barrier_sync(kPartialBarrier, kConsumerThreads);
#pragma unroll
  for (int h = 0; h < 2; ++h) {
#pragma unroll
    for (int j = 0; j < kBlockN / 8; ++j) {
      const int r = row_in_tile + 8 * h, c = 8 * j + 2 * (lane % 4);
      const uint32_t address = partial_tile + (r * kPartialPitch + c) * static_cast<uint32_t>(sizeof(float));
      asm volatile("st.shared.v2.f32 [%0], {%1, %2};" ::"r"(address), "f"(partial[4 * j + 2 * h]),
                   "f"(partial[4 * j + 2 * h + 1])
                   : "memory");
    }
  }
  cluster_sync();  // every block's partial tile is in its shared memory

  // 2. This block's rows of the tile: the sum over the cluster's blocks, in
  //    slice order, then the epilogue. Consecutive threads take consecutive
  //    columns of a row (coalesced stores of D).
  const RowRange rows = slice_rows(kBlockM, slices, slice);
  const ConstantScales a_scales = constant_scales(args.a_scale_granularity, args.a_scale, args.a_scales);
  const ConstantScales b_scales = constant_scales(args.b_scale_granularity, args.b_scale, args.b_scales);
  float amax = 0.0f;
#pragma unroll 4
  for (int e = threadIdx.x; e < rows.count * kBlockN; e += kConsumerThreads) {
    const int r = rows.first + e / kBlockN, c = e % kBlockN;
    const uint32_t local = partial_tile + (r * kPartialPitch + c) * static_cast<uint32_t>(sizeof(float));
    float part[kMaxSlices];  // all loads first, so that their latencies overlap
#pragma unroll
    for (int s = 0; s < kMaxSlices; ++s) {
      part[s] = s < slices ? load_cluster_shared(cluster_shared_address(local, s)) : 0.0f;
    }
    const float sum = sum_slices_in_order<kMaxSlices>(slices, [&](int s) { return part[s]; });
    const int64_t row = int64_t{m_block} * kBlockM + r, col = int64_t{n_block} * kBlockN + c;
    if (row < args.m && col < args.n) {
      const float bias = args.bias != nullptr ? load_bias(args.bias, col, args.bias_type) : 0.0f;
      const float y = epilogue_value(sum * (a_scales.of_row(row) * b_scales.of_row(col)), bias, args.activation);
      store_epilogue_output(args.d, row * args.ldd + col, args.d_type, y, args.d_scale);
      amax = fmaxf(amax, fabsf(y));
    }
  }
  cluster_sync();  // the other blocks are done reading this block's partial tile
  return amax;
}

#endif

// kBlockScales: A has 1 x 128 or B has 128 x 128 scales, applied at each
// promotion (so kPromote is true). kSplit: the grid splits K (slices > 1);
// without it the kernel has no split-K code at all, and is step 07's
// (measured: the unused reductions, compiled in, cost the 4096^3 GEMM 7 %).
template <class T, Fp8Format kFormatA, Fp8Format kFormatB, bool kPromote, bool kBlockScales, bool kSplit>
__global__ void __launch_bounds__(T::kThreads, 1)
    wgmma_fp8_gemm_kernel(const __grid_constant__ CUtensorMap tensor_map_a,
                          const __grid_constant__ CUtensorMap tensor_map_b,
                          const __grid_constant__ CUtensorMap tensor_map_d, GemmArgs args, bool store_through_tma,
                          int slices, bool reduce_in_cluster, float* workspace, unsigned* counters) {
#if FP8GEMM_SM90A_DEVICE
  using namespace sm90;
  // The tile's shape and what follows from it (struct Tile).
  constexpr int kBlockM = T::kBlockM, kBlockN = T::kBlockN, kStages = T::kStages;
  constexpr int kConsumerWarpgroups = T::kConsumerWarpgroups, kConsumerWarps = T::kConsumerWarps;
  constexpr int kAccumulators = T::kAccumulators;
  constexpr uint32_t kTileBytesA = T::kTileBytesA, kTileBytesB = T::kTileBytesB, kStageBytes = T::kStageBytes;
  using StageTiles = typename T::StageTiles;
  using StageScales = typename T::StageScales;
  __shared__ uint64_t full_barrier[kStages];     // the TMA has filled the stage
  __shared__ uint64_t empty_barrier[kStages];    // the consumers are done with the stage
  __shared__ StageScales stage_scales[kStages];  // block scales only
  __shared__ float amax_scratch[kConsumerWarps];
  extern __shared__ uint8_t dynamic_shared[];
  const uint32_t tiles_start = (shared_address(dynamic_shared) + 1023u) & ~1023u;
  const uint32_t tiles_a = tiles_start + offsetof(StageTiles, a);  // shared-window addresses
  const uint32_t tiles_b = tiles_start + offsetof(StageTiles, b);

  // Block -> (tile of D, slice of K). The `slices` blocks of a tile are
  // consecutive and form one cluster, so the slice is the block's rank in it.
  // Consecutive tiles walk down M, sharing one B tile.
  const int m_tiles = static_cast<int>((args.m + kBlockM - 1) / kBlockM);
  const int tile = static_cast<int>(blockIdx.x / slices);
  const int slice = static_cast<int>(blockIdx.x % slices);
  const int m_block = tile % m_tiles;
  const int n_block = tile / m_tiles;
  const int k_blocks = static_cast<int>((args.k + kBlockK - 1) / kBlockK);  // the last one zero-filled past K
  const KBlockRange k_range = k_slice(k_blocks, slices, slice);             // this block's K blocks
  const int kb_begin = static_cast<int>(k_range.first);
  const int kb_end = static_cast<int>(k_range.first + k_range.count);
  const int warpgroup = threadIdx.x / kWarpgroupThreads;

  // A stage is full when the TMA has delivered its tiles (one arrive.expect_tx)
  // and, with block scales, each lane of the scale loader has stored its scales.
  // It is empty when the consumers are done with it: lane 0 of each warp
  // arrives for the warp once its wgmmas have finished reading the tiles; with
  // block scales every consumer thread arrives, after its own reads of the
  // stage's scales (a read by one lane is not ordered before another lane's
  // arrive: compute-sanitizer's racecheck reports it, __syncwarp or not).
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

  if (warpgroup == kConsumerWarpgroups) {
    // ---- producer: one thread feeds the ring; with block scales one warp
    // copies each stage's scales beside it; the rest of the warpgroup idles.
    const int producer_thread = threadIdx.x - kConsumerWarpgroups * kWarpgroupThreads;
    if (producer_thread == 0) {
      prefetch_tensor_map(&tensor_map_a);
      prefetch_tensor_map(&tensor_map_b);
      int stage = 0;
      uint32_t phase = 0;  // parity of the round of the ring
      for (int kb = kb_begin; kb < kb_end; ++kb) {
        // Wait until the consumers released this stage in the previous round
        // (parity phase ^ 1; in round 0 that wait returns at once).
        mbarrier_wait(shared_address(&empty_barrier[stage]), phase ^ 1);
        const uint32_t full = shared_address(&full_barrier[stage]);
        mbarrier_arrive_expect_tx(full, kStageBytes);  // always the whole box, zero-filled parts included
        tma_load_2d(tiles_a + stage * kTileBytesA, &tensor_map_a, full, kb * kBlockK, m_block * kBlockM);
        tma_load_2d(tiles_b + stage * kTileBytesB, &tensor_map_b, full, kb * kBlockK, n_block * kBlockN);
        if (++stage == kStages) {
          stage = 0;
          phase ^= 1;
        }
      }
    } else if (kBlockScales && producer_thread / kWarpSize == kScaleLoaderWarp) {
      // The scales of K block kb go into the stage that holds its tiles, and
      // the stage is full only when they are there: a consumer reads them from
      // shared memory, never waiting on global memory in its mainloop. (Loaded
      // by the consumers themselves, one K block ahead or not, they cost 20 %:
      // the compiler put their first use before the wgmmas.) Lane l copies
      // the scales of rows l, l + 32, l + 64, l + 96 of the tile; rows past M
      // copy the last row's (the TMA zero-filled those rows of A).
      const int lane = producer_thread % kWarpSize;
      const float* a_rows[kBlockM / kWarpSize];
#pragma unroll
      for (int i = 0; i < kBlockM / kWarpSize; ++i) {
        const int64_t row = std::min<int64_t>(int64_t{m_block} * kBlockM + lane + kWarpSize * i, args.m - 1);
        a_rows[i] = k_block_scales(args.a_scale_granularity, args.a_scales, row, args.k);  // nullptr: constant
      }
      const float* b_row = k_block_scales(args.b_scale_granularity, args.b_scales, int64_t{n_block} * kBlockN, args.k);
      int stage = 0;
      uint32_t phase = 0;
      for (int kb = kb_begin; kb < kb_end; ++kb) {
        float a[kBlockM / kWarpSize];
#pragma unroll
        for (int i = 0; i < kBlockM / kWarpSize; ++i) a[i] = a_rows[i] != nullptr ? a_rows[i][kb] : 1.0f;
        const float b = b_row != nullptr ? b_row[kb] : 1.0f;
        mbarrier_wait(shared_address(&empty_barrier[stage]), phase ^ 1);
#pragma unroll
        for (int i = 0; i < kBlockM / kWarpSize; ++i) stage_scales[stage].a[lane + kWarpSize * i] = a[i];
        if (lane == 0) stage_scales[stage].b = b;
        mbarrier_arrive(shared_address(&full_barrier[stage]));  // release: the stores above come first
        if (++stage == kStages) {
          stage = 0;
          phase ^= 1;
        }
      }
    }
    if (kSplit && reduce_in_cluster) {
      // The cluster's barriers count every thread of every block: the
      // producer warpgroup meets the consumers at both (see split_k_epilogue).
      cluster_sync();
      cluster_sync();
    }
    return;
  }

  // ---- consumers: warpgroup w multiplies rows 64w..64w+63 of the A tile.
  float accum[kAccumulators];                 // wgmma's accumulators
  float total[kPromote ? kAccumulators : 1];  // promoted FP32 sums (promotion only)
#pragma unroll
  for (int i = 0; i < kAccumulators; ++i) accum[i] = 0.0f;
  if constexpr (kPromote) {
#pragma unroll
    for (int i = 0; i < kAccumulators; ++i) total[i] = 0.0f;
  }
  const int lane = threadIdx.x % kWarpSize;
  const int warp_in_group = (threadIdx.x % kWarpgroupThreads) / kWarpSize;
  // This thread's rows of D: row0 and row0 + 8 (the wgmma fragment layout).
  const int row0 = m_block * kBlockM + warpgroup * 64 + warp_in_group * 16 + lane / 4;
  int stage = 0;
  uint32_t phase = 0;
  for (int kb = kb_begin; kb < kb_end; ++kb) {
    mbarrier_wait(shared_address(&full_barrier[stage]), phase);
    __syncwarp();  // wgmma is .aligned: the warp must be converged
    // With block scales: this K block's s_A of the thread's two rows and s_B.
    float scales[3] = {1.0f, 1.0f, 1.0f};
    if constexpr (kBlockScales) {
      const int tile_row = row0 - m_block * kBlockM;
      scales[0] = stage_scales[stage].a[tile_row];
      scales[1] = stage_scales[stage].a[tile_row + 8];
      scales[2] = stage_scales[stage].b;
    }

    const uint64_t desc_a = make_kmajor_sw128_descriptor(tiles_a + stage * kTileBytesA + warpgroup * 64 * kBlockK);
    const uint64_t desc_b = make_kmajor_sw128_descriptor(tiles_b + stage * kTileBytesB);
    fence_registers(accum);
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < kBlockK / kWgmmaK; ++kk) {
      // + (32 bytes >> 4) per step along K inside the swizzled 128-byte rows.
      // Promotion restarts the sum each K block (accumulate = false overwrites);
      // fast accumulation restarts it only at the very first wgmma.
      const bool accumulate = kPromote ? kk > 0 : (kb > kb_begin || kk > 0);
      wgmma_m64nk32<kBlockN, kFormatA, kFormatB>(accum, desc_a + 2 * kk, desc_b + 2 * kk, accumulate);
    }
    wgmma_commit_group();
    fence_registers(accum);

    if constexpr (kPromote) {
      wgmma_wait_group<0>();  // this K block's products are in accum, its stage is no longer read
      fence_registers(accum);
      if (kBlockScales || lane == 0) mbarrier_arrive(shared_address(&empty_barrier[stage]));
      if constexpr (kBlockScales) {
        const float block_scale[2] = {scales[0] * scales[2], scales[1] * scales[2]};
        // total += partial * (s_A * s_B): accumulator 4j + 2h + c is in row row0 + 8h.
#pragma unroll
        for (int i = 0; i < kAccumulators; ++i) total[i] = fmaf(accum[i], block_scale[(i / 2) % 2], total[i]);
      } else {
#pragma unroll
        for (int i = 0; i < kAccumulators; ++i) total[i] += accum[i];
      }
    } else {
      // Keep this K block's wgmmas running; wait for the previous block's and
      // release its stage.
      wgmma_wait_group<1>();
      if (kb > kb_begin && lane == 0) {
        mbarrier_arrive(shared_address(&empty_barrier[stage == 0 ? kStages - 1 : stage - 1]));
      }
    }
    if (++stage == kStages) {
      stage = 0;
      phase ^= 1;
    }
  }
  if constexpr (!kPromote) {
    wgmma_wait_group<0>();
    fence_registers(accum);
  }

  if constexpr (kSplit) {
    if (!reduce_in_cluster) {  // ---- split-K, workspace form: the last block goes on
      __shared__ bool last_block;
      bool last;
      if constexpr (kPromote) {
        last = gather_in_workspace<kAccumulators, kConsumerWarpgroups * kWarpgroupThreads, kMaxSlices>(
            total, workspace, counters, tile, slices, slice, &last_block, kPartialBarrier);
      } else {
        last = gather_in_workspace<kAccumulators, kConsumerWarpgroups * kWarpgroupThreads, kMaxSlices>(
            accum, workspace, counters, tile, slices, slice, &last_block, kPartialBarrier);
      }
      if (!last) return;  // the same for the whole block
    } else {              // ---- split-K: the cluster adds the partials, then the epilogue
      const int row_in_tile = row0 - m_block * kBlockM;
      float amax;
      if constexpr (kPromote) {
        amax = split_k_epilogue<T>(total, args, tiles_start, slices, slice, m_block, n_block, row_in_tile);
      } else {
        amax = split_k_epilogue<T>(accum, args, tiles_start, slices, slice, m_block, n_block, row_in_tile);
      }
      if (args.d_amax != nullptr) block_amax_to_global(amax, amax_scratch, kConsumerWarps, kAmaxBarrier, args.d_amax);
      return;
    }
  }

  // ---- epilogue: this thread's columns of the fragment (see common/sm90/wgmma.cuh).
  const int col0 = n_block * kBlockN + 2 * (lane % 4);
  // The scales constant along K (per tensor, per row), applied here; a 1 x 128
  // or 128 x 128 operand contributes 1: its scales were applied at each promotion.
  const ConstantScales a_scales = constant_scales(args.a_scale_granularity, args.a_scale, args.a_scales);
  const ConstantScales b_scales = constant_scales(args.b_scale_granularity, args.b_scale, args.b_scales);
  const int tile_row = m_block * kBlockM + warpgroup * 64;  // the warpgroup's part of the D tile
  const int tile_col = n_block * kBlockN;
  const float inverse_d_scale = 1.0f / args.d_scale;
  // D's boxes for the TMA store: this warpgroup's share of the A tiles of
  // stages 0, 1, ... (as in step 07).
  static_assert(kTmaStoreBoxes<OutputType::kFP32, kBlockN> <= kStages &&
                    kTmaStoreBoxBytes == kTileBytesA / kConsumerWarpgroups,
                "D's boxes are a warpgroup's share of the A tiles of the first stages");
  const uint32_t first_box = tiles_a + warpgroup * (kTileBytesA / kConsumerWarpgroups);
  auto finish = [&](float(&y)[kAccumulators]) {
    apply_epilogue<kBlockN>(y, args, a_scales, b_scales, row0, col0);
    const float amax = args.d_amax != nullptr ? fragment_amax<kBlockN>(y, args, row0, col0) : 0.0f;
    switch (args.d_type) {
      case OutputType::kBF16:
        store_tile<OutputType::kBF16, kBlockN>(y, args, store_through_tma, &tensor_map_d, first_box, kTileBytesA,
                                               kStoreBarrier + warpgroup, tile_row, tile_col, row0, col0,
                                               inverse_d_scale);
        break;
      case OutputType::kFP32:
        store_tile<OutputType::kFP32, kBlockN>(y, args, store_through_tma, &tensor_map_d, first_box, kTileBytesA,
                                               kStoreBarrier + warpgroup, tile_row, tile_col, row0, col0,
                                               inverse_d_scale);
        break;
      case OutputType::kE4M3:
        store_tile<OutputType::kE4M3, kBlockN>(y, args, store_through_tma, &tensor_map_d, first_box, kTileBytesA,
                                               kStoreBarrier + warpgroup, tile_row, tile_col, row0, col0,
                                               inverse_d_scale);
        break;
      default:
        store_tile<OutputType::kE5M2, kBlockN>(y, args, store_through_tma, &tensor_map_d, first_box, kTileBytesA,
                                               kStoreBarrier + warpgroup, tile_row, tile_col, row0, col0,
                                               inverse_d_scale);
        break;
    }
    return amax;
  };
  float amax;
  if constexpr (kPromote) {
    amax = finish(total);
  } else {
    amax = finish(accum);
  }
  if (args.d_amax != nullptr) block_amax_to_global(amax, amax_scratch, kConsumerWarps, kAmaxBarrier, args.d_amax);
#endif  // FP8GEMM_SM90A_DEVICE
}

using KernelFunction = void (*)(const CUtensorMap, const CUtensorMap, const CUtensorMap, GemmArgs, bool, int, bool,
                                float*, unsigned*);

// The kernel for one tile shape, pair of formats (e4m3 or e5m2 each),
// accumulation mode, and split or not.
template <class T, bool kPromote, bool kBlockScales>
KernelFunction select_kernel(Fp8Format a, Fp8Format b, bool split) {
  constexpr Fp8Format kE4 = Fp8Format::kE4M3, kE5 = Fp8Format::kE5M2;
  if (a == kE4 && b == kE4) {
    return split ? wgmma_fp8_gemm_kernel<T, kE4, kE4, kPromote, kBlockScales, true>
                 : wgmma_fp8_gemm_kernel<T, kE4, kE4, kPromote, kBlockScales, false>;
  }
  if (a == kE4) {
    return split ? wgmma_fp8_gemm_kernel<T, kE4, kE5, kPromote, kBlockScales, true>
                 : wgmma_fp8_gemm_kernel<T, kE4, kE5, kPromote, kBlockScales, false>;
  }
  if (b == kE4) {
    return split ? wgmma_fp8_gemm_kernel<T, kE5, kE4, kPromote, kBlockScales, true>
                 : wgmma_fp8_gemm_kernel<T, kE5, kE4, kPromote, kBlockScales, false>;
  }
  return split ? wgmma_fp8_gemm_kernel<T, kE5, kE5, kPromote, kBlockScales, true>
               : wgmma_fp8_gemm_kernel<T, kE5, kE5, kPromote, kBlockScales, false>;
}

// How many clusters of `slices` blocks of tile shape T the GPU runs at once.
// A cluster's blocks must share one GPC (a group of about 16 SMs on the
// H200), and each block fills its SM, so 7-block clusters fit two to a GPC
// and no more: fewer than 132 / 7. Asked of the driver once per tile shape
// and slice count, with any of the shape's kernels (they use the same
// resources).
template <class T>
int max_active_clusters(int slices) {
  static int cache[kMaxSlices + 1] = {};
  if (slices < 1 || slices > kMaxSlices) return 0;
  if (cache[slices] == 0) {
    const KernelFunction kernel = select_kernel<T, true, false>(Fp8Format::kE4M3, Fp8Format::kE4M3, true);
    const int clusters =
        sm90::max_active_clusters(kernel, T::kThreads, T::kDynamicSharedBytes, static_cast<unsigned>(slices));
    cache[slices] = clusters > 0 ? clusters : -1;
  }
  return cache[slices] > 0 ? cache[slices] : 0;
}

// The launch plan of a GEMM: its tile shape and slice count, and what they
// were chosen from (for describe_split_k_launch; the launch reads only the
// first fields).
struct SplitPlan {
  bool small_tile = false;  // SmallTile (M <= kSmallTileMaxM), else LargeTile
  int64_t tiles = 0;
  int k_blocks = 0;
  int slices = 1;
  bool in_cluster = true;  // the cluster form; false: the workspace form
  int tile_m = 0, tile_n = 0;
  int sm_count = 0;       // 0: no GPU to count SMs on (or split_k was asked for)
  int wanted_slices = 1;  // split_k_slices()' count, before the cluster form lowered it
};

// The tile shape by M; then GemmArgs::split_k if given, otherwise
// split_k_slices() (common/device/split_k.h: enough slices to fill the SMs,
// at least kMinKBlocksPerSlice K blocks each, at most kMaxSlices), lowered
// in the cluster form until all of the tile's clusters run at once.
template <class T>
SplitPlan plan_split_with(const GemmArgs& args) {
  SplitPlan plan;
  plan.tile_m = T::kBlockM;
  plan.tile_n = T::kBlockN;
  plan.tiles = ((args.m + T::kBlockM - 1) / T::kBlockM) * ((args.n + T::kBlockN - 1) / T::kBlockN);
  plan.k_blocks = static_cast<int>((args.k + kBlockK - 1) / kBlockK);
  plan.in_cluster = args.split_k_reduction == SplitKReduction::kCluster;  // kAuto: the workspace form
  if (args.split_k > 0) {
    plan.slices = plan.wanted_slices = args.split_k;
    return plan;
  }
  plan.sm_count = sm_count_of_current_device();
  if (plan.sm_count == 0) return plan;
  int slices = split_k_slices(plan.tiles, plan.k_blocks, plan.sm_count, kMinKBlocksPerSlice, kMaxSlices);
  plan.wanted_slices = slices;
  while (plan.in_cluster && slices > 1 && max_active_clusters<T>(slices) < plan.tiles) --slices;
  plan.slices = slices;
  return plan;
}

SplitPlan plan_split(const GemmArgs& args) {
  if (args.m <= kSmallTileMaxM) {
    SplitPlan plan = plan_split_with<SmallTile>(args);
    plan.small_tile = true;
    return plan;
  }
  return plan_split_with<LargeTile>(args);
}

// For fp8gemm --check: the slice count this launch would use, and why.
std::string describe_split_k_launch(const GemmArgs& args) {
  const SplitPlan plan = plan_split(args);
  std::string why =
      std::to_string(plan.tiles) + " tiles of " + std::to_string(plan.tile_m) + " x " + std::to_string(plan.tile_n);
  if (args.split_k > 0) {
    why += "; split_k = " + std::to_string(args.split_k) + " asked for";
  } else if (plan.sm_count == 0) {
    why += "; no GPU to count SMs on: 1 slice";
  } else {
    why += " and " + std::to_string(plan.k_blocks) + " K blocks of 128 on " + std::to_string(plan.sm_count) +
           " SMs: " + std::to_string(plan.wanted_slices) + " slices";
    if (plan.slices != plan.wanted_slices) {
      const int fit =
          plan.small_tile ? max_active_clusters<SmallTile>(plan.slices) : max_active_clusters<LargeTile>(plan.slices);
      why += ", " + std::to_string(plan.slices) + " so that all " + std::to_string(plan.tiles) +
             " clusters run at once (" + std::to_string(fit) + " fit)";
    }
  }
  return "split_k " + std::to_string(plan.slices) + " (" + why + ")" +
         (plan.slices > 1 ? plan.in_cluster ? ", added in a cluster" : ", added in a workspace" : "");
}

// The launch with tile shape T, as plan_split() chose it.
template <class T>
Status launch_with_tile(const GemmArgs& args, const SplitPlan& plan) {
  constexpr int kBlockM = T::kBlockM, kBlockN = T::kBlockN;
  Status status;

  // TMA coordinates and the kernel's row and column numbers are signed 32-bit
  // (a tile's last row is 127 past its first); the grid is one-dimensional.
  constexpr int64_t kMaxExtent = 0x7FFFFFFF;
  if (args.m > kMaxExtent - kBlockM || args.n > kMaxExtent - kBlockN || args.k > kMaxExtent - kBlockK ||
      plan.tiles * plan.slices > kMaxExtent) {
    return Status::error(StatusCode::kNotSupported,
                         "M, N, K <= 2^31 - 129 and at most 2^31 - 1 blocks (tiles times slices) required");
  }
  if (plan.slices > plan.k_blocks) {
    return Status::error(StatusCode::kNotSupported, "split_k = " + std::to_string(plan.slices) +
                                                        " is more slices than K has blocks of 128 (" +
                                                        std::to_string(plan.k_blocks) + ")");
  }

  CUtensorMap map_a, map_b;
  status = sm90::make_kmajor_tensor_map(&map_a, args.a, args.m, args.k, args.lda, kBlockM, kBlockK);
  if (!status.ok()) return status;
  status = sm90::make_kmajor_tensor_map(&map_b, args.b, args.n, args.k, args.ldb, kBlockN, kBlockK);
  if (!status.ok()) return status;
  // D through the TMA (one slice only; split-K stores its sums directly), in
  // boxes of 64 rows x 128 bytes, where D's rows end on 16-byte boundaries:
  // the TMA writes a row in 16-byte pieces (see step 07).
  const int d_bytes = static_cast<int>(output_bytes(args.d_type));
  const bool store_through_tma =
      kStoreThroughTma && (plan.slices == 1 || !plan.in_cluster) && (args.n * d_bytes) % 16 == 0;
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
  if (plan.slices > 1 && !plan.in_cluster) {
    constexpr size_t kSumsPerBlock = size_t{kBlockM} * kBlockN;  // one FP32 sum per element of the tile
    status = split_k_workspace(args.stream, static_cast<size_t>(plan.tiles * plan.slices) * kSumsPerBlock,
                               static_cast<size_t>(plan.tiles), &workspace, &counters);
    if (!status.ok()) return status;
  }
  // One block per (tile, slice); in the cluster form a tile's slices form one
  // cluster (cudaLaunchKernelEx with the cluster attribute: common/sm90/cluster_launch.h).
  const unsigned cluster_blocks = plan.slices > 1 && plan.in_cluster ? static_cast<unsigned>(plan.slices) : 0u;
  const cudaError_t launched =
      sm90::launch_in_clusters(kernel, static_cast<unsigned>(plan.tiles * plan.slices), T::kThreads,
                               T::kDynamicSharedBytes, args.stream, cluster_blocks, map_a, map_b, map_d, args,
                               store_through_tma, plan.slices, plan.in_cluster, workspace, counters);
  if (launched != cudaSuccess) {
    cudaGetLastError();
    return Status::error(StatusCode::kRuntimeError, std::string("launch with ") + std::to_string(plan.slices) +
                                                        " slices failed: " + cudaGetErrorString(launched));
  }
  return status_from_launch();
}

Status launch_split_k(const GemmArgs& args) {
  const Status status = sm90::require_sm90a_gpu();
  if (!status.ok()) return status;
  const SplitPlan plan = plan_split(args);
  return plan.small_tile ? launch_with_tile<SmallTile>(args, plan) : launch_with_tile<LargeTile>(args, plan);
}

}  // namespace
}  // namespace fp8gemm
