// Step 12 (Hopper) — the grouped GEMM of a mixture-of-experts layer: the
// experts' GEMMs, which share N and K but not their rows, in one persistent
// launch of step 11's kernel.
//
// A mixture-of-experts layer sends each token to a few experts; each expert
// multiplies its tokens by its own weights. Launched one GEMM per expert, the
// GPU idles between small launches and each launch has its own ramp-up and
// tail; here the persistent clusters of step 11 walk the tiles of every
// expert, one list for all of them (common/api/grouped.h has the two layouts,
// common/device/grouped_scheduler.h the numbering, tested on the CPU):
//   - contiguous (training, prefill): the experts' rows one segment after
//     another along M, each padded to 128 rows, m_indices naming the expert
//     of each row. The cluster tiles are those of one M x N GEMM over all the
//     rows, in step 11's grouped order; a tile's expert is the expert of its
//     first row (a segment starts on a tile boundary), a tile of padding is
//     skipped, and B's tile comes from that expert's rows of the stacked B.
//   - masked (decode under CUDA graphs): `capacity` rows per expert, the
//     first counts[g] valid, the counts in device memory. Expert g has
//     ceil(counts[g] / 128) rows of tiles; the experts' tiles are numbered one
//     expert after another (masked_tile), so an expert with no tokens costs
//     nothing, and the grid is sized without knowing the counts.
// Rows that are not valid (padding, past a count) are never stored and never
// enter the amax: a warpgroup whose 64 rows are all valid stores through the
// TMA as before; one with fewer stores its valid rows straight from the
// registers; one with none stores nothing. The counts are clamped into
// [0, capacity] as the block copies them into shared memory, so no count can
// make the kernel write outside its expert's rows.
//
// A plain GEMM is the same kernel with no groups: this step is also step 11
// for every plain shape, so that one kernel file serves both (the chapter,
// README.md, says why a grouped mode of the last step reads better than a
// separate grouped kernel). A grouped GEMM does not split K.
//
// What stays step 11's: 2-block clusters sharing A's tile through TMA
// multicast, the producer / two-consumer warpgroups with setmaxnreg, two
// accumulator sets for the promotion, block scales loaded two K blocks ahead,
// D through shared memory and the TMA, the amax once per block. New beside
// the groups: six stages for the GEMMs without block scales where static
// shared memory allows (grouped ones of up to 256 experts), a 128 x 256 tile
// for the plain unsplit GEMMs (WideTile; with promotion, in two halves a K
// block; WideTileColumnVectors with a bias or B's outer-vector scales) and the
// grouped ones without block scales (WideGroupedTile), and a 128 x 64 tile
// for plain GEMMs of up to 128 rows (MediumTile).
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

#include "common/api/grouped.h"
#include "common/device/amax.cuh"
#include "common/device/epilogue.h"
#include "common/device/grouped_scheduler.h"
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
// The ring of a GEMM without block scales on the 128 x 128 tile: six
// stages. 6 x 32 KB + D's 32 KB + the 1 KB alignment slack is 225 KB of the
// 227 a block may have; the stages' block scales (6 x 516 bytes) would not
// fit beside it in static shared memory, so those kernels keep kRingBytes
// (5 stages), and neither would the masked layout's counts of kMaxExperts
// experts (4 KB): a grouped GEMM takes this ring with at most
// kMaxExpertsDeepRing experts (1 KB of counts), the 5-stage kernels above
// that. The 128 x 64 tile (MediumTile) has plain GEMMs only and takes this
// ring too: eight stages of 24 KB, D's 16 KB, 209 KB.
constexpr uint32_t kRingBytesPlain = 192 * 1024;
// The 128 x 256 tile (wide: one wgmma.m64n256k32 per consumer warpgroup and
// K step with fast accumulation, two of N = 128 with promotion): three
// stages of 48 KB. D's buffer is 64 KB
// there (two warpgroups x 64 rows x 256 BF16 columns), and 3 x 48 + 64 + 1 is
// 209 KB; a fourth stage would need 257.
constexpr uint32_t kRingBytesWide = 144 * 1024;
// A plain unsplit GEMM takes the 128 x 256 tile where its rounds (units per
// cluster) are at most this times half the 128 x 128 tile's: 4096 x 32768 x
// 512 has 32 rounds of the wide tile against 63 of 128 x 128; 4096 x 2112 x
// 7168, 3 against 5, stays on 128 x 128.
constexpr double kWideTileRoundSlack = 1.1;
// The 128 x 112 tile (NarrowTile) where each cluster's rounds times 112
// columns come to at most 1 / this of its rounds times 128 on 128 x 128:
// 4096 x 2112 x 7168 takes 5 rounds of 128 columns, 5 of 112 (19 columns of
// tiles for 17); 1024 x 7168 x 2048, 4 of 128, 4 of 112 (64 columns of tiles
// for 56). Not 4096^3: 9 rounds of 112 for 8 of 128 save under 2 %. Only
// with BF16 D through the TMA: D from the registers (FP8 D, rows off 16
// bytes) ran 0.94-0.95x on it (the chapter, issue 11 runs 58-60).
constexpr double kNarrowTileMinGain = 1.05;
constexpr size_t kMaxSharedBytesPerBlock = 227 * 1024;  // the H200's opt-in limit, static + dynamic
// D leaves through shared memory and the TMA where D's rows end on 16-byte
// boundaries (BF16 and FP8; FP32 straight from the registers).
constexpr bool kStoreThroughTma = true;
// How the consumers write D (the launcher chooses): through the D buffer and
// the TMA; through the D buffer a row at a time, by whole warps (BF16 and FP8
// rows off 16-byte boundaries: the chapter's "Rows anywhere, written by whole
// warps"); or straight from the registers (FP32).
enum class DStore { kTma, kSharedRows, kRegisters };
// Split-K (step 08's heuristic): at most 8 slices, at least 12 K blocks each.
constexpr int kMaxSlices = 8;
constexpr int kMinKBlocksPerSlice = 12;
// Small M: 64 x 64 tiles for M <= 64 (step 08), and for a plain GEMM of M <=
// 128 whose 128 x 128 tiles would be cut into more than 2 slices of K, whose
// 64 KB partial sums a tile's last block then adds up alone (the chapter's
// measurement: 128 x 2112 x 7168 and 128 x 4096 x 7168 1.27x and 1.21x as
// fast on the small tile; 128 x 7168 x 16384, in 2 slices, 1.34x as slow).
constexpr int kSmallTileMaxM = 64;
constexpr int kSmallTileMaxSplitM = 128;
constexpr int kLargeTileMaxSlices = 2;
constexpr int kSmallTileN = 64;
// M <= 128 otherwise: the 128 x 64 tile (MediumTile) where it does less work
// per cluster than 128 x 128 (plan_launch; the chapter measures 128 x 7168 x
// 2048 1.10-1.16x as fast on it, 128 x 24576 x 1536 and 128 x 7168 x 16384
// 1.04-1.07x). Not above: its m64n64 wgmmas read shared memory at its limit,
// and 1024 x 1024 x 16384 ran at 0.92x on it.
constexpr int kMediumTileMaxM = 128;
// The grouped order: groups 2048 rows of D high, whatever the tile, so 16 rows
// of the 128 x 256 cluster tiles (a wave of 66 clusters covers 16 rows x about
// 4 columns of them) and 8 of the wide tile's 256 x 256. Steps 09-11 group 8
// rows of tiles; 16 here ran the 128 x 128 kernels 1-4 % faster and the wide
// kernel 1-3 % slower, 32 slower still (issue 11 run 40), and 2048 rows ran
// the 128 x 128 kernels 1-7 % faster than 8 rows, the wide one unchanged
// (run 41; the chapter, "The tile order's groups").
constexpr int kGroupHeight = 2048;
// Grouped GEMMs: the masked layout's counts are copied into shared memory
// (clamped), where every role's walk reads them; at most this many experts,
// and on the six-stage ring at most kMaxExpertsDeepRing (DeepSeek-V3 routes
// among 256): the grouped GEMMs of more take the five-stage kernels.
constexpr int kMaxExperts = 1024;
constexpr int kMaxExpertsDeepRing = 256;

// What the kernel knows of the groups: none for a plain GEMM.
enum class Grouping : int { kNone = 0, kContiguous = 1, kMasked = 2 };
struct GroupedView {
  Grouping grouping = Grouping::kNone;
  int experts = 1;
  int capacity = 0;                // masked: rows each expert owns in A and D
  const int* m_indices = nullptr;  // contiguous: the expert of each row, -1 for padding
  const int* counts = nullptr;     // masked: each expert's valid rows (device memory)
  int group_rows = 1;              // contiguous: the tile order's group height (contiguous_group_rows)
};

// B's scales of expert `expert` (grouped GEMMs stack the experts' plain
// layouts one after another: common/api/grouped.h); nullptr stays nullptr.
__host__ __device__ inline const float* expert_b_scales(const GemmArgs& args, int expert) {
  if (args.b_scales == nullptr || expert == 0) return args.b_scales;
  const int64_t per_expert =
      args.b_scale_granularity == ScaleGranularity::kPerTensor ? 1
      : args.b_scale_granularity == ScaleGranularity::kPerRow
          ? args.n
          : ((args.n + kQuantGroupSize - 1) / kQuantGroupSize) * ((args.k + kQuantGroupSize - 1) / kQuantGroupSize);
  return args.b_scales + expert * per_expert;
}

// Which kernels a tile shape has (select_units): every kind, or, for the
// 128 x 128 tile, the plain and grouped GEMMs without block scales on a
// deeper ring (kRingBytesPlain: kPlainAndGroupedWithoutBlockScales) and all
// of them again on kRingBytes (kBlockScalesOrGroups: those with block
// scales, and the grouped GEMMs of more than kMaxExpertsDeepRing experts; the
// 128 x 64 tile has plain GEMMs without block scales only,
// kPlainWithoutBlockScales), and the plain unsplit GEMMs and the masked
// grouped GEMMs without block scales again with the cluster along M
// (kPlainSharingB, kGroupedSharingB, both on the deeper ring); the
// 128 x 256 tile has only plain unsplit GEMMs
// (kWidePlain; with promotion, its 128 totals a thread leave room for one
// set of 64 accumulators, half the tile's columns: the kernel's kWidePromoted),
// and the promoted ones again for GEMMs whose epilogue reads a vector per
// column, a bias or B's outer-vector scales (kWideColumnVectors: kept apart so
// that the others compile as they did without it; see the kernel's epilogue,
// where kWidePlain sets both to null), and the
// grouped GEMMs without block scales (kWideGrouped, its clusters along N).
// The 128 x 112 tile has the plain unsplit GEMMs without block scales, with
// the cluster along M (kNarrowPlain; its tiles straddle B's 128 x 128 scale
// blocks).
enum class TileKernels {
  kEvery,
  kPlainWithoutBlockScales,
  kPlainAndGroupedWithoutBlockScales,
  kBlockScalesOrGroups,
  kWidePlain,
  kWideColumnVectors,
  kWideGrouped,
  kPlainSharingB,
  kGroupedSharingB,
  kNarrowPlain
};

// A tile shape of D and everything that follows from it (step 08's, with the
// D buffer added to shared memory, and the cluster).
template <int kM, int kN, int kCluster, TileKernels kKernels = TileKernels::kEvery>
struct Tile {
  static constexpr int kBlockM = kM;  // rows of D per block: 64 per consumer warpgroup
  static constexpr int kBlockN = kN;  // columns of D per block: the N of one wgmma
  // Blocks per cluster, on neighbouring tiles along N: they share A's tile,
  // and each loads kBoxRowsA of its rows for all of them. The wide tile's
  // cluster instead stands along M and shares B's tile, its larger operand
  // (kShareB: each block loads kBoxRowsB of B's rows for both), and so does
  // the 128 x 128 tile's kPlainSharingB and kGroupedSharingB, where that
  // takes no more rounds. (Not the wide tile of the grouped GEMMs,
  // kWideGrouped: in the contiguous layout two tiles of 128 rows one above the
  // other may belong to two experts, two tiles of B.)
  static constexpr int kClusterBlocks = kCluster;
  static constexpr bool kWide = kN == 256;  // the 128 x 256 tile: kWidePlain, kWideColumnVectors, kWideGrouped
  static constexpr bool kShareB = kKernels == TileKernels::kWidePlain || kKernels == TileKernels::kWideColumnVectors ||
                                  kKernels == TileKernels::kPlainSharingB ||
                                  kKernels == TileKernels::kGroupedSharingB || kKernels == TileKernels::kNarrowPlain;
  static constexpr int kBoxRowsA = kShareB ? kM : kM / kCluster;
  static constexpr uint32_t kBoxBytesA = kBoxRowsA * kBlockK;
  static constexpr int kBoxRowsB = kShareB ? kN / kCluster : kN;
  static constexpr uint32_t kBoxBytesB = kBoxRowsB * kBlockK;
  // Rows of D in a cluster tile (what the tile order walks), and rows of
  // cluster tiles per group of that order: kGroupHeight rows of D.
  static constexpr int kClusterTileRows = kShareB ? kM * kCluster : kM;
  static constexpr int kGroupRows = kGroupHeight / kClusterTileRows;
  static constexpr int kConsumerWarpgroups = kM / 64;
  static constexpr int kThreads = (kConsumerWarpgroups + 1) * sm90::kWarpgroupThreads;  // + 1 producer warpgroup
  static constexpr int kConsumerWarps = kConsumerWarpgroups * sm90::kWarpgroupThreads / kWarpSize;
  static constexpr int kAccumulators = kN / 2;           // FP32 per consumer thread: 64 x kN over 128 threads
  static constexpr uint32_t kTileBytesA = kM * kBlockK;  // FP8: one byte per element
  static constexpr uint32_t kTileBytesB = kN * kBlockK;
  static constexpr uint32_t kStageBytes = kTileBytesA + kTileBytesB;  // what the TMA delivers per stage
  static constexpr TileKernels kHasKernels = kKernels;
  static constexpr bool kPlainRing = kKernels == TileKernels::kPlainWithoutBlockScales ||
                                     kKernels == TileKernels::kPlainAndGroupedWithoutBlockScales ||
                                     kKernels == TileKernels::kPlainSharingB ||
                                     kKernels == TileKernels::kGroupedSharingB || kKernels == TileKernels::kNarrowPlain;
  // The experts whose counts fit in static shared memory beside the ring.
  static constexpr int kMaxGroupedExperts = kPlainRing ? kMaxExpertsDeepRing : kMaxExperts;
  static constexpr uint32_t kRing = kPlainRing ? kRingBytesPlain : kWide ? kRingBytesWide : kRingBytes;
  // 5 of 128 x 128 (6 in kRingBytesPlain), 3 of 128 x 256, 6 of 128 x 112, 8 of 128 x 64, 10 of 64 x 64
  static constexpr int kStages = kRing / kStageBytes;
  // D's buffer: per consumer warpgroup, the boxes of its 64 x kN part of D in
  // BF16 (kN * 2 bytes a row: 2 boxes of 64 rows x 128 bytes for kN = 128).
  static constexpr int kStoreBoxesPerWarpgroup = sm90::kTmaStoreBoxesCovering<OutputType::kBF16, kN>;
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
    float b[kN > 128 ? kN / 128 : 1];  // one per 128 columns (the wide tile has two)
  };
  // The barriers, the amax scratch and (with block scales) the stages'
  // scales live in static shared memory (with the split-K flag, where the
  // kernel splits); its size, at least this, tells the launcher that the
  // sm_90a body was compiled (see kernel_has_sm90a_image).
  static constexpr size_t kStaticSharedBytes = 2 * kStages * sizeof(uint64_t) + kConsumerWarps * sizeof(float);
  static constexpr size_t kStaticSharedBytesWithScales = kStaticSharedBytes + kStages * sizeof(StageScales);

  static_assert(kM == 64 || kM == 128, "64 rows per consumer warpgroup, one or two of them");
  static_assert(kN == 64 || kN == 128 ||
                    (kN == 256 && (kKernels == TileKernels::kWidePlain || kKernels == TileKernels::kWideColumnVectors ||
                                   kKernels == TileKernels::kWideGrouped)) ||
                    (kN == 112 && kKernels == TileKernels::kNarrowPlain),
                "the N of wgmma_m64nk32 (256: the wide tile's; 112: the narrow tile's)");
  static_assert(kCluster == 1 || kCluster == 2, "clusters of one block or two");
  static_assert(kGroupRows >= 1 && kGroupHeight % kClusterTileRows == 0,
                "the tile order's groups hold whole rows of cluster tiles");
  static_assert(kBoxBytesA % 1024 == 0 && kBoxBytesB % 1024 == 0,
                "each block's part of A or B must keep the swizzle's 1024-byte alignment");
  static_assert(kTileBytesA % 1024 == 0 && kTileBytesB % 1024 == 0, "tiles must keep 1024-byte alignment");
  static_assert(sm90::kTmaStoreBoxesCovering<OutputType::kBF16, kN> == kStoreBoxesPerWarpgroup &&
                    sm90::kTmaStoreBoxes<OutputType::kE4M3, kN> <= kStoreBoxesPerWarpgroup,
                "D's buffer holds a warpgroup's BF16 or FP8 boxes");
};
// Step 07's 128 x 128 tile, in clusters of two: six stages for plain and
// grouped GEMMs without block scales (the grouped of up to
// kMaxExpertsDeepRing experts), five for the others.
using LargeTilePlain = Tile<128, 128, 2, TileKernels::kPlainAndGroupedWithoutBlockScales>;
using LargeTile = Tile<128, 128, 2, TileKernels::kBlockScalesOrGroups>;
// The same plain unsplit GEMMs with the cluster's two tiles one above the
// other, sharing B, wherever that takes no more rounds (plan_launch): an odd
// number of columns of tiles would leave a cluster tile half past N in every
// row of them and cost a round (the chapter's "Rows anywhere": 4096 x 4097 x
// 4096 takes 8 rounds so, 9 side by side).
using LargeTileSharingB = Tile<128, 128, 2, TileKernels::kPlainSharingB>;
// And the masked layout's grouped GEMMs without block scales, each cluster's
// two tiles one above the other in one expert's rows (six stages, up to
// kMaxExpertsDeepRing experts).
using LargeTileGroupedSharingB = Tile<128, 128, 2, TileKernels::kGroupedSharingB>;
// The wide tile, also in clusters of two (the chapter's "A wider tile for fast
// accumulation" and "Kept: the wide tile with promotion").
using WideTile = Tile<128, 256, 2, TileKernels::kWidePlain>;
// Its kernels for promoted GEMMs with a bias or B's outer-vector scales
// (issue 9 run 71; with fast accumulation they stay on 128 x 128).
using WideTileColumnVectors = Tile<128, 256, 2, TileKernels::kWideColumnVectors>;
// And for the grouped GEMMs without block scales or a vector per column,
// clusters side by side along N sharing A (issue 12 run 70).
using WideGroupedTile = Tile<128, 256, 2, TileKernels::kWideGrouped>;
// Whether the epilogue reads a vector per column of D: which of the two the
// wide tile's GEMM takes.
inline bool has_column_vectors(const GemmArgs& args) {
  return args.bias != nullptr || args.b_scale_granularity == ScaleGranularity::kPerRow;
}
// 128 x 112 where the GPU's waves make 112 columns a tile cost less than
// 128 (plan_launch; the chapter's "A tile as wide as the waves allow"),
// clusters along M. Its BF16 rows of 224 bytes go to the TMA in two boxes of
// 128 bytes, the second overlapping the first (kOverlappingLastBox); the
// plan gives it only GEMMs whose D goes that way.
using NarrowTile = Tile<128, 112, 2, TileKernels::kNarrowPlain>;
using SmallTile = Tile<64, kSmallTileN, 1>;  // M <= kSmallTileMaxM: no cluster
// Up to 128 rows where the 128 x 128 tile leaves clusters idle: 128 x 64 in
// clusters of two sharing A, for plain GEMMs without block scales (the
// chapter's "A 128 x 64 tile for M up to 128").
using MediumTile = Tile<128, 64, 2, TileKernels::kPlainWithoutBlockScales>;
constexpr int kScalesAhead = 2;      // K blocks of block scales the loader has in flight
constexpr int kScaleLoaderWarp = 1;  // the producer warpgroup's warp that copies the block scales
constexpr int kAmaxBarrier = 1;      // the named barrier of the consumers' amax reduction
constexpr int kStoreBarrier = 2;     // + w: warpgroup w's, around its TMA store
constexpr int kPartialBarrier = 4;   // the consumers', around a split-K unit's count
constexpr int kRowsBarrier = 5;      // + w: warpgroup w's, counting its valid rows (contiguous layout)
// The register budgets with two consumer warpgroups (setmaxnreg): the
// producer's single TMA thread and scale loader need few. 56, not step 10's
// 48: the scale loader's look-ahead (kScalesAhead) spilled 4 bytes in 48
// (128 x 56 + 256 x 224 = 64512 of the SM's 65536 registers).
constexpr int kProducerRegisters = 56;
constexpr int kConsumerRegisters = 224;

#if FP8GEMM_SM90A_DEVICE
constexpr int kWgmmaK = 32;  // K of one FP8 wgmma

#endif

// What the units are: a plain GEMM's tiles, unsplit or split along K, or a
// grouped GEMM's (which never splits K). Each is a kernel of its own: with
// the grouped code compiled into the plain kernels, a plain GEMM ran 8-13 %
// slower than step 11 (the chapter's first run), and the split kernels spilled.
enum class Units { kTiles, kSplitTiles, kGroupedTiles };

// kBlockScales: A has 1 x 128 or B has 128 x 128 scales, applied at each
// promotion (so kPromote is true). kUnits: see Units; only kSplitTiles has
// split-K code, only kGroupedTiles grouped code.
template <class T, Fp8Format kFormatA, Fp8Format kFormatB, bool kPromote, bool kBlockScales, Units kUnits>
__global__ void __launch_bounds__(T::kThreads, 1)
    grouped_moe_fp8_gemm_kernel(const __grid_constant__ CUtensorMap tensor_map_a,
                                const __grid_constant__ CUtensorMap tensor_map_b,
                                const __grid_constant__ CUtensorMap tensor_map_d, GemmArgs args,
                                const __grid_constant__ GroupedView groups, DStore d_store, int slices,
                                float* workspace, unsigned* counters, float inverse_d_scale, bool d_pairs_aligned) {
#if FP8GEMM_SM90A_DEVICE
  using namespace sm90;
  // The tile's shape and what follows from it (struct Tile).
  constexpr int kBlockM = T::kBlockM, kBlockN = T::kBlockN, kStages = T::kStages;
  constexpr int kConsumerWarpgroups = T::kConsumerWarpgroups, kConsumerWarps = T::kConsumerWarps;
  constexpr int kAccumulators = T::kAccumulators;
  constexpr uint32_t kTileBytesA = T::kTileBytesA, kTileBytesB = T::kTileBytesB, kStageBytes = T::kStageBytes;
  constexpr int kCluster = T::kClusterBlocks;
  constexpr bool kWide = T::kWide;           // the 128 x 256 tile
  constexpr int kGroupRows = T::kGroupRows;  // rows of cluster tiles per group of the tile order
  using SharedTiles = typename T::SharedTiles;
  using StageScales = typename T::StageScales;
  __shared__ uint64_t full_barrier[kStages];     // the TMA has filled the stage
  __shared__ uint64_t empty_barrier[kStages];    // the consumers are done with the stage
  __shared__ StageScales stage_scales[kStages];  // block scales only
  __shared__ float amax_scratch[kConsumerWarps];
  __shared__ bool last_block;                         // split-K: this block was the last of its tile's slices
  __shared__ int expert_rows[T::kMaxGroupedExperts];  // masked layout: each expert's valid rows, in [0, capacity]
  static_assert(T::kDynamicSharedBytes + sizeof(full_barrier) + sizeof(empty_barrier) + sizeof(amax_scratch) +
                        sizeof(last_block) + (kBlockScales ? sizeof(stage_scales) : 0) +
                        (kUnits == Units::kGroupedTiles ? sizeof(expert_rows) : 0) <=
                    kMaxSharedBytesPerBlock,
                "the tile's ring, D's buffer and these arrays must fit in 227 KB");
  // (cuobjdump -res-usage reports more static shared memory than these arrays,
  // 1152-1168 bytes for the six-stage kernels: with their 225 KB that leaves
  // 880 bytes of the 227 KB. The launcher's cudaFuncSetAttribute refuses a
  // kernel that does not fit.)
  // A grouped GEMM never splits K (the launcher refuses it): the split
  // kernels have no grouped code, which spilled registers there.
  constexpr bool kSplit = kUnits == Units::kSplitTiles;
  const Grouping grouping = kUnits == Units::kGroupedTiles ? groups.grouping : Grouping::kNone;
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
    int cluster_m_tiles;             // cluster tiles along M (T::kShareB: the last may stick out past M)
    int cluster_n_tiles;             // cluster tiles along N (otherwise: the last may stick out past N)
    int rank;                        // this block's in its cluster
    int cluster_tiles;               // of the whole GEMM (masked: of every expert)
    int units;                       // this cluster's
  };
  const auto make_walk = [&] {
    Walk w;
    w.m_tiles = static_cast<int>((args.m + kBlockM - 1) / kBlockM);
    w.n_tiles = static_cast<int>((args.n + kBlockN - 1) / kBlockN);
    w.k_blocks = static_cast<int>((args.k + kBlockK - 1) / kBlockK);
    w.cluster_m_tiles = T::kShareB ? (w.m_tiles + kCluster - 1) / kCluster : w.m_tiles;
    w.cluster_n_tiles = T::kShareB ? w.n_tiles : (w.n_tiles + kCluster - 1) / kCluster;
    w.rank = kCluster == 1 ? 0 : static_cast<int>(cluster_block_rank());
    w.cluster_tiles = grouping == Grouping::kMasked
                          ? masked_tile_count<int>(expert_rows, groups.experts, T::kClusterTileRows, w.cluster_n_tiles)
                          : w.cluster_m_tiles * w.cluster_n_tiles;
    w.units = persistent_tile_count<int>(w.cluster_tiles * slices, gridDim.x / kCluster, blockIdx.x / kCluster);
    return w;
  };
  struct Unit {
    int m_block, n_block;         // n_block >= n_tiles: past N (the cluster tile sticks out)
    int tile;                     // cluster tile * kCluster + rank: this block's tile's split-K sums and counter
    int slice, kb_begin, kb_end;  // this unit's K blocks: k_slice(k_blocks, slices, slice)
    // Where the tile is, for a grouped GEMM (a plain one: expert 0, row
    // m_block * kBlockM, B's row n_block * kBlockN, rows_end M).
    int expert;
    bool padding;  // contiguous: a tile of padding rows, nothing to compute or store
    int row;       // the tile's first row of A and D
    int b_row;     // the tile's first row of the stacked B: expert * N + n_block * kBlockN
    int rows_end;  // masked: the row past the expert's valid rows (contiguous: the epilogue finds it)
  };
  const auto unit_of = [&](const Walk& w, int i) {
    const int number = persistent_tile_number<int>(gridDim.x / kCluster, blockIdx.x / kCluster, i);
    Unit u;
    const int cluster_tile = number / slices;
    u.slice = number - cluster_tile * slices;
    u.tile = cluster_tile * kCluster + w.rank;
    u.expert = 0;
    u.padding = false;
    if (grouping == Grouping::kMasked) {  // the experts' tiles one expert after another
      const GroupedTile t = masked_tile<int>(cluster_tile, expert_rows, groups.experts, T::kClusterTileRows,
                                             w.cluster_n_tiles, kGroupRows);
      u.expert = t.expert;
      if constexpr (T::kShareB) {  // the cluster's tiles one above the other in the expert's rows (the
        // second may lie past its count: it loads its half of B for both and stores nothing)
        u.m_block = static_cast<int>(t.m_block) * kCluster + w.rank;
        u.n_block = static_cast<int>(t.n_block);
      } else {
        u.m_block = static_cast<int>(t.m_block);
        u.n_block = static_cast<int>(t.n_block) * kCluster + w.rank;
      }
      u.row = u.expert * groups.capacity + u.m_block * kBlockM;
      u.rows_end = u.expert * groups.capacity + expert_rows[u.expert];
    } else {  // one GEMM's tiles over all the rows
      const TileCoord coord = grouped_tile<int>(cluster_tile, w.cluster_m_tiles, w.cluster_n_tiles,
                                                grouping == Grouping::kContiguous ? groups.group_rows : kGroupRows);
      if constexpr (T::kShareB) {  // the cluster's tiles one above the other
        u.m_block = static_cast<int>(coord.m_block) * kCluster + w.rank;
        u.n_block = static_cast<int>(coord.n_block);
      } else {
        u.m_block = static_cast<int>(coord.m_block);
        u.n_block = static_cast<int>(coord.n_block) * kCluster + w.rank;
      }
      u.row = u.m_block * kBlockM;
      u.rows_end = static_cast<int>(args.m);
      if (grouping == Grouping::kContiguous) {  // the expert of the tile's first row
        u.expert = groups.m_indices[u.row];
        u.padding = u.expert < 0 || u.expert >= groups.experts;
      }
    }
    u.b_row = (u.padding ? 0 : u.expert) * static_cast<int>(args.n) + u.n_block * kBlockN;
    const KBlockRange range = k_slice<int>(w.k_blocks, slices, u.slice);
    u.kb_begin = static_cast<int>(range.first);
    u.kb_end = static_cast<int>(range.first + range.count);
    return u;
  };
  // The same unit in every lane of a warp, and known to ptxas to be the
  // same. A grouped unit's fields come from loads (m_indices, the masked
  // counts in shared memory) that ptxas must assume may differ between lanes;
  // every branch on them (the unit loop's count, `if (u.padding) continue`,
  // the valid rows) was then a possible divergence, and ptxas compiled the
  // whole K loop as divergent: a BRA.DIV check at every barrier wait, a
  // WARPSYNC before every wgmma, the barrier addresses in per-thread
  // registers (issue 12 run 47: 8 % of the time at 4 x 8192 x 4096 x 7168).
  // __reduce_max_sync (REDUX) writes a uniform register: the lanes hold equal
  // values, so their max is the value, now provably the same in all of them.
  // (__shfl_sync from lane 0 did not convince ptxas.) Warps only: the
  // producer's one thread calls unit_of itself.
  const auto warp_uniform = [](int value) { return __reduce_max_sync(0xFFFFFFFFu, value); };
  const auto warp_unit_of = [&](const Walk& w, int i) {
    Unit u = unit_of(w, i);
    if constexpr (kUnits == Units::kGroupedTiles) {
      u.expert = warp_uniform(u.expert);
      u.padding = __reduce_or_sync(0xFFFFFFFFu, u.padding);
      u.m_block = warp_uniform(u.m_block);
      u.n_block = warp_uniform(u.n_block);
      u.row = warp_uniform(u.row);
      u.b_row = warp_uniform(u.b_row);
      u.rows_end = warp_uniform(u.rows_end);
    }
    return u;
  };
  const auto warp_walk = [&] {
    Walk w = make_walk();
    if constexpr (kUnits == Units::kGroupedTiles) {  // the masked layout counts from shared memory
      w.cluster_tiles = warp_uniform(w.cluster_tiles);
      w.units = warp_uniform(w.units);
    }
    return w;
  };
  // B's scales constant along K, those of unit u's expert.
  const auto unit_b_scales_of = [&](const Unit& u) {
    return constant_scales(args.b_scale_granularity, args.b_scale, expert_b_scales(args, u.expert));
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
  // The masked layout's counts, clamped into shared memory by every thread of
  // the block before the barrier below, which also makes them visible to the
  // whole block: the load from device memory (the L2 may hold nothing of it)
  // overlaps that barrier instead of following it (issue 12 run 51: the
  // first stage of every block waited for it). No count can then take a tile
  // outside its expert's rows. (Only the grouped kernels have the code: in
  // the others nvcc warned that the loop could not be reached.)
  if constexpr (kUnits == Units::kGroupedTiles) {
    if (grouping == Grouping::kMasked) {
      for (int g = threadIdx.x; g < groups.experts; g += T::kThreads) {
        expert_rows[g] = min(max(groups.counts[g], 0), groups.capacity);
      }
    }
  }
  // Nobody copies into a block or arrives on its barriers before they are
  // initialized, and nobody walks the masked layout before its counts are shared.
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
    const Walk walk = warp_walk();
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
        if (u.padding) continue;
        for (int kb = u.kb_begin; kb < u.kb_end; ++kb) {
          mbarrier_wait(empty_barriers + 8 * stage, phase ^ 1);
          const uint32_t full = full_barriers + 8 * stage;
          // The whole stage, zero-filled parts and the partner's half of A or B included.
          mbarrier_arrive_expect_tx(full, kStageBytes);
          // The shared operand: this block's rows of it, into every block of the cluster.
          constexpr uint16_t kEveryBlock = static_cast<uint16_t>((1u << kCluster) - 1);
          if constexpr (kCluster > 1 && !T::kShareB) {
            tma_load_2d_multicast(tiles_a + stage * kTileBytesA + walk.rank * T::kBoxBytesA, &tensor_map_a, full,
                                  kb * kBlockK, u.row + walk.rank * T::kBoxRowsA, kEveryBlock);
          } else {
            tma_load_2d(tiles_a + stage * kTileBytesA, &tensor_map_a, full, kb * kBlockK, u.row);
          }
          if constexpr (kCluster > 1 && T::kShareB) {
            tma_load_2d_multicast(tiles_b + stage * kTileBytesB + walk.rank * T::kBoxBytesB, &tensor_map_b, full,
                                  kb * kBlockK, u.b_row + walk.rank * T::kBoxRowsB, kEveryBlock);
          } else {
            tma_load_2d(tiles_b + stage * kTileBytesB, &tensor_map_b, full, kb * kBlockK, u.b_row);
          }
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
        const Unit u = warp_unit_of(walk, i);
        if (u.padding) continue;
        const float* a_rows[kBlockM / kWarpSize];
#pragma unroll
        for (int r = 0; r < kBlockM / kWarpSize; ++r) {
          const int64_t row = std::min<int64_t>(int64_t{u.row} + lane + kWarpSize * r, args.m - 1);
          a_rows[r] = k_block_scales(args.a_scale_granularity, args.a_scales, row, args.k);  // nullptr: constant
        }
        // A tile past N (the cluster tile sticks out) reads the last column's.
        constexpr int kBScales = kBlockN > 128 ? kBlockN / 128 : 1;
        const float* b_rows[kBScales];
#pragma unroll
        for (int j = 0; j < kBScales; ++j) {
          const int64_t column = std::min<int64_t>(int64_t{u.n_block} * kBlockN + 128 * j, args.n - 1);
          b_rows[j] = k_block_scales(args.b_scale_granularity, expert_b_scales(args, u.expert), column, args.k);
        }
        // The scales of K block kb + kScalesAhead are loaded while those of
        // kb are stored: with one K block's loads waited for at a time, the
        // loader took a global load's latency per K block and held the
        // consumers back (issue 11 run 10: block scales at 0.78x the
        // per-tensor speed). ahead[d] holds K block kb + d's.
        struct KBlockScales {
          float a[kBlockM / kWarpSize];
          float b[kBScales];
        };
        const auto load = [&](int kb, KBlockScales& s) {
          const bool inside = kb < u.kb_end;
#pragma unroll
          for (int r = 0; r < kBlockM / kWarpSize; ++r) s.a[r] = a_rows[r] != nullptr && inside ? a_rows[r][kb] : 1.0f;
#pragma unroll
          for (int j = 0; j < kBScales; ++j) s.b[j] = b_rows[j] != nullptr && inside ? b_rows[j][kb] : 1.0f;
        };
        KBlockScales ahead[kScalesAhead + 1];
#pragma unroll
        for (int d = 0; d < kScalesAhead; ++d) load(u.kb_begin + d, ahead[d]);
        for (int kb = u.kb_begin; kb < u.kb_end; ++kb) {
          load(kb + kScalesAhead, ahead[kScalesAhead]);
          mbarrier_wait(empty_barriers + 8 * stage, phase ^ 1);
#pragma unroll
          for (int r = 0; r < kBlockM / kWarpSize; ++r) stage_scales[stage].a[lane + kWarpSize * r] = ahead[0].a[r];
#pragma unroll
          for (int j = 0; j < kBScales; ++j) {
            if (lane == j) stage_scales[stage].b[j] = ahead[0].b[j];  // j, not lane: registers are not indexed
          }
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
  const Walk walk = warp_walk();
  // The barriers' shared addresses (stage s's: + 8 s), computed once. Each
  // shared_address() of a __shared__ variable reads the block's ID in its
  // cluster (S2UR SR_CgaCtaId) and builds the address from it: a chain of
  // dependent instructions that Nsight Compute's stall samples found in
  // front of every stage wait and every release when it was redone there.
  // Computed once in the source is not enough: the compiler redid the chain
  // at each wait anyway, rather than keep two registers live, until the
  // addresses came through kept_in_register().
  const uint32_t full_barriers = kept_in_register(shared_address(full_barrier));
  const uint32_t empty_barriers = kept_in_register(shared_address(empty_barrier));
  // The partner's empty barriers, in the cluster's shared-memory window.
  const uint32_t partner_empty_barriers =
      kCluster > 1 ? cluster_shared_address(empty_barriers, (walk.rank + 1) % kCluster) : 0u;
  const int lane = threadIdx.x % kWarpSize;
  const int warp_in_group = (threadIdx.x % kWarpgroupThreads) / kWarpSize;
  // The scales constant along K (per tensor, per row), applied in the
  // epilogue; a 1 x 128 or 128 x 128 operand contributes 1 there.
  // (B's are the unit's expert's: set per unit below.)
  const ConstantScales a_scales = constant_scales(args.a_scale_granularity, args.a_scale, args.a_scales);
  // D through the TMA where the launcher allows it, or through the same
  // buffer a row at a time; never FP32 (its 4 boxes per warpgroup would not
  // fit the D buffer, sized for BF16's 2).
  const bool through_tma = d_store == DStore::kTma && args.d_type != OutputType::kFP32;
  const bool through_rows = d_store == DStore::kSharedRows && args.d_type != OutputType::kFP32;
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
    const Unit u = warp_unit_of(walk, i);
    if (u.padding) continue;
    // Contiguous layout: thread t < 64 of the warpgroup reads the expert of
    // the warpgroup's row t now, for the epilogue to count the valid rows
    // (the load's latency hides behind the mainloop).
    const int thread_in_group = threadIdx.x % kWarpgroupThreads;
    const bool counts_a_row = grouping == Grouping::kContiguous && thread_in_group < 64;
    const int row_expert = counts_a_row ? groups.m_indices[u.row + warpgroup * 64 + thread_in_group] : -1;
    // A grouped unit's B scales constant along K, its expert's, read now for
    // the same reason: a per-tensor scale in device memory (delayed scaling),
    // read in the epilogue, had every unit wait for it there (issue 12 run
    // 51). The other kernels read them in the epilogue still: moved here, the
    // promoted decode kernel ran 2-3 % slower (run 52).
    ConstantScales unit_b_scales;
    if constexpr (kUnits == Units::kGroupedTiles) unit_b_scales = unit_b_scales_of(u);
    // Declared after setmaxnreg (what is live across it must fit the launch's
    // 168 registers) and set for each unit: wgmma's register fences read the
    // accumulators, and values carried from the last unit would be live
    // through its epilogue, beside the totals, and spill.
    // (The wide tile with promotion keeps its wgmma sets inside its K loop.)
    constexpr bool kWidePromoted = kWide && kPromote;
    float accum[kWidePromoted ? 1 : kAccumulators];            // wgmma's accumulators (the first set)
    float accum_next[kPromote && !kWide ? kAccumulators : 1];  // the second set (promotion only)
    float total[kPromote ? kAccumulators : 1];                 // promoted FP32 sums (promotion only)
    if constexpr (!kWidePromoted) {
#pragma unroll
      for (int v = 0; v < kAccumulators; ++v) accum[v] = 0.0f;
    }
    if constexpr (kPromote && !kWide) {
#pragma unroll
      for (int v = 0; v < kAccumulators; ++v) accum_next[v] = 0.0f;
    }
    // This thread's rows of D: row0 and row0 + 8 (the wgmma fragment layout).
    const int row0 = u.row + warpgroup * 64 + warp_in_group * 16 + lane / 4;
    if constexpr (kWidePromoted) {
      // The 128 x 256 tile with promotion. A thread's 64 x 256 part of D
      // takes 128 totals, which leaves no room for a second set of 128 (step
      // 10's overlap): each K block is multiplied in two halves of 64 x 128
      // into one set of 64, each half added into its totals before the next
      // is issued. The warpgroup waits for its own wgmmas twice a K block;
      // the other warpgroup's keep the tensor cores busy meanwhile. A half is
      // one 128 x 128 block of B's scales, so with block scales its promotion
      // is one FMA by s_A of the row times s_B of the half, as on 128 x 128.
      constexpr int kHalfN = kBlockN / 2;
      constexpr int kHalfAccumulators = kHalfN / 2;
#pragma unroll
      for (int v = 0; v < kAccumulators; ++v) total[v] = 0.0f;
      float half_sums[kHalfAccumulators];   // wgmma's accumulators, one half at a time
      float row_scales[2] = {1.0f, 1.0f};   // block scales: s_A of this thread's two rows
      float half_scales[2] = {1.0f, 1.0f};  // and s_B of each half
      // The descriptors of stage 0's A rows and B tile: a stage, or B's second
      // half, is further by its bytes / 16 in the descriptor's address field.
      const uint64_t stage0_desc_a = make_kmajor_sw128_descriptor(tiles_a + warpgroup * 64 * kBlockK);
      const uint64_t stage0_desc_b = make_kmajor_sw128_descriptor(tiles_b);
      uint64_t desc_a = stage0_desc_a, desc_b = stage0_desc_b, next_desc_a = 0, next_desc_b = 0;
      // Waits for the current stage and computes its descriptors into next_*
      // (its block scales are read when its K block starts: kept from here
      // to there, they made ptxas spill).
      const auto wait_stage = [&] {
        mbarrier_wait_warp(full_barriers + 8 * stage, phase);  // warp-uniform: see its comment
        __syncwarp();                                          // wgmma is .aligned: the warp must be converged
        next_desc_a = stage0_desc_a + stage * (kTileBytesA >> 4);
        next_desc_b = stage0_desc_b + stage * (kTileBytesB >> 4);
        // Computed here, not where they are used: the compiler would build
        // them after the wait for the wgmmas, on the path to the next issue.
        asm volatile("" : "+l"(next_desc_a), "+l"(next_desc_b));
      };
      // Issues half `half` of the current stage's K block into half_sums.
      const auto issue_half = [&](int half) {
        const uint64_t desc_b_half = desc_b + half * ((kHalfN * kBlockK) >> 4);
        fence_registers(half_sums);
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < kBlockK / kWgmmaK; ++kk) {
          wgmma_m64nk32<kHalfN, kFormatA, kFormatB>(half_sums, desc_a + 2 * kk, desc_b_half + 2 * kk, kk > 0);
        }
        wgmma_commit_group();
        fence_registers(half_sums);
      };
      // Adds a finished half into its totals (times its block scales).
      const auto add_half = [&](int half) {
        fence_registers(half_sums);
        if constexpr (kBlockScales) {
          const float scales[2] = {row_scales[0] * half_scales[half], row_scales[1] * half_scales[half]};
#pragma unroll
          for (int v = 0; v < kHalfAccumulators; ++v) {
            total[half * kHalfAccumulators + v] =
                fmaf(half_sums[v], scales[(v / 2) % 2], total[half * kHalfAccumulators + v]);
          }
        } else {
#pragma unroll
          for (int v = 0; v < kHalfAccumulators; ++v) total[half * kHalfAccumulators + v] += half_sums[v];
        }
        fence_registers(total);
      };
      // The next K block's stage is waited for while this one's second half
      // runs, so that from its last wgmma to the next one's first a warpgroup
      // only adds (as cuBLASLt's kernel does): run 81 found the wait's round
      // trip there, between the two warpgroups' turns on the tensor cores.
      if (u.kb_begin < u.kb_end) wait_stage();
      for (int kb = u.kb_begin; kb < u.kb_end; ++kb) {
        if constexpr (kBlockScales) {  // needed after the first half's wgmmas: their latency hides the loads
          const int tile_row = row0 - u.row;
          row_scales[0] = stage_scales[stage].a[tile_row];
          row_scales[1] = stage_scales[stage].a[tile_row + 8];
          half_scales[0] = stage_scales[stage].b[0];
          half_scales[1] = stage_scales[stage].b[1];
        }
        desc_a = next_desc_a, desc_b = next_desc_b;
        issue_half(0);
        wgmma_wait_group<0>();
        add_half(0);
        issue_half(1);
        const int this_stage = stage;
        advance();
        if (kb + 1 < u.kb_end) wait_stage();  // the next K block's
        wgmma_wait_group<0>();
        release(this_stage);  // both halves have read the stage
        add_half(1);
      }
    } else if constexpr (kPromote) {
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
          const int tile_row = row0 - u.row;
          const float b = stage_scales[stage].b[0];
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
      // A tile past N (past M, where the cluster shares B) was multiplied
      // for the partner's sake (its B or A zeros): nothing to add or store.
      if (kCluster > 1 && (T::kShareB ? u.m_block >= walk.m_tiles : u.n_block >= walk.n_tiles)) return;
      if constexpr (kSplit) {  // ---- split-K: the last of the tile's units goes on, the others take their next
        if (!gather_in_workspace<kAccumulators, kConsumerWarpgroups * kWarpgroupThreads, kMaxSlices>(
                sums, workspace, counters, u.tile, slices, u.slice, &last_block, kPartialBarrier))
          return;
      }
      // ---- epilogue, while the producer already loads the next unit's tiles.
      const int col0 = u.n_block * kBlockN + 2 * (lane % 4);
      const int tile_row = u.row + warpgroup * 64;  // the warpgroup's part of the D tile
      const int tile_col = u.n_block * kBlockN;
      // The rows this warpgroup may write: a plain GEMM's up to M (the TMA
      // store skips the rest); a grouped GEMM's up to the expert's last valid
      // row, through the TMA only where all 64 are valid (the TMA would write
      // the others: they are rows of D too), nothing where none is.
      GemmArgs unit_args = args;
      bool warpgroup_through_tma = through_tma;
      bool warpgroup_through_rows = through_rows;
      if (grouping != Grouping::kNone) {
        const int valid_rows_counted =
            grouping == Grouping::kMasked
                ? min(max(u.rows_end - tile_row, 0), 64)
                : named_barrier_count(kRowsBarrier + warpgroup, kWarpgroupThreads, row_expert == u.expert);
        const int valid_rows = warp_uniform(valid_rows_counted);  // see warp_unit_of
        if (valid_rows == 0) return;
        unit_args.m = tile_row + valid_rows;
        // The TMA would write all 64 rows of its box: an expert's last,
        // partial rows go a row at a time (the rows after them belong to the
        // next expert, or lie past a masked count and are never written).
        warpgroup_through_tma = through_tma && valid_rows == 64;
        warpgroup_through_rows = through_rows || (through_tma && valid_rows < 64);
      }
      ConstantScales b_scales = kUnits == Units::kGroupedTiles ? unit_b_scales : unit_b_scales_of(u);
      if constexpr (T::kHasKernels == TileKernels::kWidePlain || T::kHasKernels == TileKernels::kWideGrouped) {
        // The wide tile's GEMMs with a bias or B's outer-vector scales go to
        // WideTileColumnVectors' kernels, which read them 128 columns at a
        // time (apply_epilogue); here they are a constant nullptr. Compiled
        // with those loads, these kernels kept the same registers but ptxas
        // scheduled their main loop differently, and the promoted GEMMs
        // without a vector ran 1-2 % slower (issue 9 run 71, an H100). The
        // grouped ones never take a vector per column (plan_launch).
        unit_args.bias = nullptr;
        b_scales.rows = nullptr;
      }
      apply_epilogue<kBlockN>(sums, unit_args, a_scales, b_scales, row0, col0);
      if (args.d_amax != nullptr) amax = fmaxf(amax, fragment_amax<kBlockN>(sums, unit_args, row0, col0));
      if (through_tma) {
        // The previous unit's boxes must have been read by the TMA before
        // this unit writes them: the thread that issued that store waits for
        // it here, not when it issued it, and tells its warpgroup.
        if (threadIdx.x % kWarpgroupThreads == 0) tma_store_wait_read();
        named_barrier_sync(kStoreBarrier + warpgroup, kWarpgroupThreads);
      }
      const auto store = [&](auto out) {
        constexpr OutputType kOut = decltype(out)::value;
        store_tile<kOut, kBlockN, /*kWaitForRead=*/false>(sums, unit_args, warpgroup_through_tma, &tensor_map_d,
                                                          first_box, kTmaStoreBoxBytes, kStoreBarrier + warpgroup,
                                                          tile_row, tile_col, row0, col0, inverse_d_scale,
                                                          d_pairs_aligned, warpgroup_through_rows);
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

using KernelFunction = void (*)(const CUtensorMap, const CUtensorMap, const CUtensorMap, GemmArgs, GroupedView, DStore,
                                int, float*, unsigned*, float, bool);

// The kernel for one tile shape, pair of formats (e4m3 or e5m2 each),
// accumulation mode, and kind of units; nullptr for a kernel the tile does
// not have (T::kHasKernels; launch_with_plan never asks for one).
template <class T, bool kPromote, bool kBlockScales, Fp8Format kA, Fp8Format kB>
KernelFunction select_units(Units units) {
  if constexpr (T::kHasKernels == TileKernels::kWideGrouped) {
    if (kBlockScales || units != Units::kGroupedTiles) return nullptr;
    return grouped_moe_fp8_gemm_kernel<T, kA, kB, kPromote, false, Units::kGroupedTiles>;
  } else if constexpr (T::kWide) {
    // No fast accumulation with block scales, nor with a vector per column:
    // the kWideColumnVectors kernels of fast accumulation spilled (240 bytes
    // of stack, 376 local-memory instructions), and the plan keeps those
    // GEMMs on 128 x 128.
    if constexpr ((kBlockScales || T::kHasKernels == TileKernels::kWideColumnVectors) && !kPromote) {
      return nullptr;
    } else {
      return units == Units::kTiles ? grouped_moe_fp8_gemm_kernel<T, kA, kB, kPromote, kBlockScales, Units::kTiles>
                                    : nullptr;
    }
  } else if constexpr (T::kHasKernels == TileKernels::kPlainSharingB || T::kHasKernels == TileKernels::kNarrowPlain) {
    if (kBlockScales || units != Units::kTiles) return nullptr;
    return grouped_moe_fp8_gemm_kernel<T, kA, kB, kPromote, false, Units::kTiles>;
  } else if constexpr (T::kHasKernels == TileKernels::kGroupedSharingB) {
    if (kBlockScales || units != Units::kGroupedTiles) return nullptr;
    return grouped_moe_fp8_gemm_kernel<T, kA, kB, kPromote, false, Units::kGroupedTiles>;
  } else if constexpr (T::kHasKernels == TileKernels::kPlainWithoutBlockScales) {
    if (kBlockScales || units == Units::kGroupedTiles) return nullptr;
    return units == Units::kSplitTiles ? grouped_moe_fp8_gemm_kernel<T, kA, kB, kPromote, false, Units::kSplitTiles>
                                       : grouped_moe_fp8_gemm_kernel<T, kA, kB, kPromote, false, Units::kTiles>;
  } else if constexpr (T::kHasKernels == TileKernels::kPlainAndGroupedWithoutBlockScales) {
    if (kBlockScales) return nullptr;
    return units == Units::kGroupedTiles ? grouped_moe_fp8_gemm_kernel<T, kA, kB, kPromote, false, Units::kGroupedTiles>
           : units == Units::kSplitTiles ? grouped_moe_fp8_gemm_kernel<T, kA, kB, kPromote, false, Units::kSplitTiles>
                                         : grouped_moe_fp8_gemm_kernel<T, kA, kB, kPromote, false, Units::kTiles>;
  } else if constexpr (T::kHasKernels == TileKernels::kBlockScalesOrGroups && !kBlockScales) {
    return units == Units::kGroupedTiles ? grouped_moe_fp8_gemm_kernel<T, kA, kB, kPromote, false, Units::kGroupedTiles>
                                         : nullptr;
  } else {
    return units == Units::kGroupedTiles
               ? grouped_moe_fp8_gemm_kernel<T, kA, kB, kPromote, kBlockScales, Units::kGroupedTiles>
           : units == Units::kSplitTiles
               ? grouped_moe_fp8_gemm_kernel<T, kA, kB, kPromote, kBlockScales, Units::kSplitTiles>
               : grouped_moe_fp8_gemm_kernel<T, kA, kB, kPromote, kBlockScales, Units::kTiles>;
  }
}
template <class T, bool kPromote, bool kBlockScales>
KernelFunction select_kernel(Fp8Format a, Fp8Format b, Units units) {
  constexpr Fp8Format kE4 = Fp8Format::kE4M3, kE5 = Fp8Format::kE5M2;
  if (a == kE4 && b == kE4) return select_units<T, kPromote, kBlockScales, kE4, kE4>(units);
  if (a == kE4) return select_units<T, kPromote, kBlockScales, kE4, kE5>(units);
  if (b == kE4) return select_units<T, kPromote, kBlockScales, kE5, kE4>(units);
  return select_units<T, kPromote, kBlockScales, kE5, kE5>(units);
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
    // Any kernel of the tile: they all have its dynamic shared memory.
    const KernelFunction kernel =
        T::kHasKernels == TileKernels::kBlockScalesOrGroups
            ? select_kernel<T, true, true>(Fp8Format::kE4M3, Fp8Format::kE4M3, Units::kTiles)
        : T::kHasKernels == TileKernels::kGroupedSharingB || T::kHasKernels == TileKernels::kWideGrouped
            ? select_kernel<T, true, false>(Fp8Format::kE4M3, Fp8Format::kE4M3, Units::kGroupedTiles)
        : T::kHasKernels == TileKernels::kWidePlain
            ? select_kernel<T, false, false>(Fp8Format::kE4M3, Fp8Format::kE4M3, Units::kTiles)
            : select_kernel<T, true, false>(Fp8Format::kE4M3, Fp8Format::kE4M3, Units::kTiles);
    // (0 without a GPU, or without an sm_90a one: the launch says which.)
    const int clusters = sm90::max_active_clusters(kernel, T::kThreads, T::kDynamicSharedBytes, T::kClusterBlocks);
    cache = clusters > 0 ? clusters : -1;
  }
  return cache > 0 ? cache : 0;
}

DStore choose_d_store(const GemmArgs& args);  // below: how the consumers write D

// The launch plan of a GEMM: its tile shape, slice count and grid, and what
// they were chosen from (for describe_grouped_moe_launch).
struct LaunchPlan {
  bool small_tile = false;   // SmallTile (M <= kSmallTileMaxM, or split M <= kSmallTileMaxSplitM)
  bool medium_tile = false;  // MediumTile (M <= kMediumTileMaxM: see plan_launch)
  bool wide_tile = false;    // WideTile, WideTileColumnVectors or WideGroupedTile (see kWideTileRoundSlack)
  bool narrow_tile = false;  // NarrowTile (unsplit, fewer columns times rounds: see kNarrowTileMinGain)
  bool sharing_b = false;    // cluster along M: LargeTileSharingB, or LargeTileGroupedSharingB (masked)
  bool shares_b = false;     // T::kShareB of the tile planned: its clusters stand along M and share B's tile
  int64_t tiles = 0;
  int64_t cluster_tiles = 0;  // tiles side by side (or one above the other, T::kShareB) in clusters of cluster_blocks
  int k_blocks = 0;
  int slices = 1;
  int64_t units = 0;          // cluster tiles x slices
  int64_t clusters = 0;       // min(units, resident_clusters)
  int resident_clusters = 0;  // how many the GPU runs at once (cudaOccupancyMaxActiveClusters); 0: no GPU
  int64_t blocks = 0;         // the grid: clusters x cluster_blocks
  int tile_m = 0, tile_n = 0, cluster_blocks = 1;
  int group_rows = 1;  // rows of cluster tiles per group of the tile order (contiguous: see plan_launch_with)
  int sm_count = 0;    // 0: no GPU to count SMs on
};

// The tile shape by M; GemmArgs::split_k if given, otherwise
// split_k_slices() (common/device/split_k.h, as step 08); then one cluster
// per cluster_blocks SMs, or one per unit where there are fewer units. A
// grouped GEMM is not split, and its masked layout's tiles are counted as if
// every expert were full (the counts are on the device): the grid is sized
// for the most tiles the counts can give.
template <class T>
LaunchPlan plan_launch_with(const GemmArgs& args, const GroupedView& groups) {
  LaunchPlan plan;
  plan.tile_m = T::kBlockM;
  plan.tile_n = T::kBlockN;
  plan.cluster_blocks = T::kClusterBlocks;
  plan.shares_b = T::kShareB;
  const int64_t m_tiles = (args.m + T::kBlockM - 1) / T::kBlockM, n_tiles = (args.n + T::kBlockN - 1) / T::kBlockN;
  plan.tiles = m_tiles * n_tiles;
  const int64_t cluster_m_tiles = T::kShareB ? (m_tiles + T::kClusterBlocks - 1) / T::kClusterBlocks : m_tiles;
  const int64_t cluster_n_tiles = T::kShareB ? n_tiles : (n_tiles + T::kClusterBlocks - 1) / T::kClusterBlocks;
  // Masked: every expert's rows of tiles as if full (the counts are on the device).
  const int64_t walked_m_tiles =
      groups.grouping == Grouping::kMasked
          ? groups.experts * ((groups.capacity + T::kClusterTileRows - 1) / T::kClusterTileRows)
          : cluster_m_tiles;
  plan.cluster_tiles = walked_m_tiles * cluster_n_tiles;
  // The contiguous layout's tile order: groups no taller than an expert's
  // mean rows (common/device/grouped_scheduler.h), in this tile's cluster tiles.
  plan.group_rows = groups.grouping == Grouping::kContiguous
                        ? static_cast<int>(contiguous_group_rows(cluster_m_tiles, groups.experts, T::kGroupRows))
                        : T::kGroupRows;
  plan.k_blocks = static_cast<int>((args.k + kBlockK - 1) / kBlockK);
  plan.sm_count = sm_count_of_current_device();
  // Slices from the clusters where the tile has them: 33 tiles of 128 x 64
  // are 17 cluster tiles, and 4 slices of them (132 / 33) would be 68 units
  // for the 66 clusters that fit, two of them a second round; 66 / 17 is 3.
  plan.resident_clusters = plan.sm_count > 0 ? max_active_clusters<T>() : 0;
  if (groups.grouping != Grouping::kNone) {
    plan.slices = 1;
  } else if (args.split_k > 0) {
    plan.slices = args.split_k;
  } else if (plan.sm_count > 0 && T::kClusterBlocks > 1 && plan.resident_clusters > 0) {
    plan.slices =
        split_k_slices(plan.cluster_tiles, plan.k_blocks, plan.resident_clusters, kMinKBlocksPerSlice, kMaxSlices);
  } else if (plan.sm_count > 0) {
    plan.slices = split_k_slices(plan.tiles, plan.k_blocks, plan.sm_count, kMinKBlocksPerSlice, kMaxSlices);
  }
  plan.units = plan.cluster_tiles * plan.slices;
  plan.clusters = std::min<int64_t>(plan.units, std::max(plan.resident_clusters, 1));
  plan.blocks = plan.clusters * T::kClusterBlocks;
  return plan;
}

// The 64-row tile where no row tile can have more than 64 rows: M <= 64
// (plain), capacity <= 64 (masked); and for a plain GEMM of M <= 128 that
// the 128-row tile would split into more than kLargeTileMaxSlices slices of K
// (the split count asked for, if any, keeps the tile M chooses). The
// contiguous layout's segments are padded to 128 rows: its tiles are 128 rows.
// Whether tile T's counts' table (static shared memory beside its ring) holds
// the groups' experts; a plain GEMM has none to hold.
template <class T>
bool counts_fit(const GroupedView& groups) {
  return groups.grouping == Grouping::kNone || groups.experts <= T::kMaxGroupedExperts;
}

LaunchPlan plan_launch(const GemmArgs& args, const GroupedView& groups = GroupedView{}) {
  const int64_t most_rows = groups.grouping == Grouping::kMasked       ? groups.capacity
                            : groups.grouping == Grouping::kContiguous ? kGroupedRowAlignment
                                                                       : args.m;
  const auto small_tile_plan = [&] {
    LaunchPlan plan = plan_launch_with<SmallTile>(args, groups);
    plan.small_tile = true;
    return plan;
  };
  if (most_rows <= kSmallTileMaxM) return small_tile_plan();
  const LaunchPlan large = plan_launch_with<LargeTile>(args, groups);
  if (groups.grouping == Grouping::kNone && args.split_k == 0 && args.m <= kSmallTileMaxSplitM &&
      large.slices > kLargeTileMaxSlices) {
    return small_tile_plan();
  }
  // 128 x 64 where it does less work per cluster than 128 x 128 (each
  // cluster's units times a unit's products), or as much in fewer slices (no
  // reduction): 128 x 7168 x 2048 has 28 units of 128 x 128 for 66 clusters,
  // 56 of 128 x 64. An equal split of the work stays on 128 x 128: the medium
  // tile's units are twice as many, each with its own fill and epilogue.
  if (groups.grouping == Grouping::kNone && args.m <= kMediumTileMaxM && !has_block_scales(args) &&
      large.resident_clusters > 0) {
    LaunchPlan medium = plan_launch_with<MediumTile>(args, groups);
    const auto work_per_cluster = [&](const LaunchPlan& p) {
      const int64_t rounds = (p.units + p.clusters - 1) / p.clusters;
      return rounds * p.tile_m * p.tile_n * ((p.k_blocks + p.slices - 1) / p.slices);
    };
    const int64_t medium_work = work_per_cluster(medium), large_work = work_per_cluster(large);
    if (medium.resident_clusters > 0 &&
        (medium_work < large_work || (medium_work == large_work && medium.slices < large.slices))) {
      medium.medium_tile = true;
      return medium;
    }
  }
  // Each cluster's units: its rounds.
  const auto rounds = [](const LaunchPlan& p) { return (p.units + p.clusters - 1) / p.clusters; };
  // The 128 x 128 tile's cluster along M, sharing B, where that takes no
  // more rounds than along N. With an odd number of columns of tiles, a
  // cluster tile side by side sticks out past N in every row of tiles, one
  // above the other only in the last row, if M has an odd number of rows of
  // tiles: 4096 x 4097 has 17 x 32 = 544 cluster tiles side by side, 9 rounds
  // of 66 clusters, and 33 x 16 = 528 one above the other, 8 rounds. Where
  // the rounds are equal it stands along M too: as many bytes per tile, yet
  // fewer L2 requests and 6-8 % less time at 1024 x 4096 x 7168, 1-2 % at the
  // long-K shapes, nothing lost at 4096^3 (the chapter's "Rows anywhere",
  // issue 11 run 48). Plain unsplit GEMMs without block scales, and the
  // masked layout's (below): the kernels that exist with it.
  LaunchPlan tile_128 = large;
  const auto along_m_if_no_more_rounds = [&](LaunchPlan along_m) {
    if (along_m.slices == 1 && along_m.resident_clusters > 0 && rounds(along_m) <= rounds(large)) {
      along_m.sharing_b = true;
      tile_128 = along_m;
    }
  };
  if (groups.grouping == Grouping::kNone && !has_block_scales(args) && large.slices == 1 &&
      large.resident_clusters > 0) {
    along_m_if_no_more_rounds(plan_launch_with<LargeTileSharingB>(args, groups));
  } else if (groups.grouping == Grouping::kMasked && !has_block_scales(args) && large.resident_clusters > 0 &&
             counts_fit<LargeTileGroupedSharingB>(groups)) {
    // The masked layout's too, in each expert's rows (its counts may leave
    // the second tile empty; the walk skips a pair wholly past a count). Not
    // the contiguous layout's: two tiles of 128 rows there may belong to two
    // experts, with two B tiles. (A grouped plan has one slice.)
    along_m_if_no_more_rounds(plan_launch_with<LargeTileGroupedSharingB>(args, groups));
  }
  // The 128 x 256 tile, with fast accumulation or promotion, block scales or
  // not, where it stays unsplit and does not cost more in waves than it is
  // expected to gain: each cluster's units (its rounds) at most
  // kWideTileRoundSlack times half the 128 x 128 tile's (half as many units,
  // each twice the work; the chapter measures the gain), a bias or B's
  // outer-vector scales included (since issue 9 run 71: their own kernels,
  // promoted only).
  const auto wide_pays = [&](const LaunchPlan& wide) {
    return wide.slices == 1 && wide.resident_clusters > 0 &&
           static_cast<double>(2 * rounds(wide)) <= kWideTileRoundSlack * static_cast<double>(rounds(tile_128));
  };
  if (groups.grouping == Grouping::kNone && large.slices == 1 && large.resident_clusters > 0 &&
      !(has_column_vectors(args) && args.fast_accumulation)) {
    LaunchPlan wide = has_column_vectors(args) ? plan_launch_with<WideTileColumnVectors>(args, groups)
                                               : plan_launch_with<WideTile>(args, groups);
    if (wide_pays(wide)) {
      wide.wide_tile = true;
      return wide;
    }
  }
  // The grouped GEMMs without block scales or a vector per column, by the
  // same rule (issue 12 run 70: DeepGEMM's contiguous shapes +2-7 % on an
  // H100), on WideGroupedTile, whose clusters stand along N sharing A. Its
  // units are the grouped ones: the walk and the counts as on 128 x 128 (a
  // grouped plan has one slice).
  if (groups.grouping != Grouping::kNone && !has_block_scales(args) && !has_column_vectors(args) &&
      large.resident_clusters > 0 && counts_fit<WideGroupedTile>(groups)) {
    LaunchPlan wide = plan_launch_with<WideGroupedTile>(args, groups);
    if (wide_pays(wide)) {
      wide.wide_tile = true;
      return wide;
    }
  }
  // The 128 x 112 tile, unsplit, where the waves make it cheaper than 128 x
  // 128 (kNarrowTileMinGain) and D is BF16 through the TMA: cuBLASLt picks
  // tiles of 112 and 144 columns at such shapes (the chapter's "A tile as
  // wide as the waves allow"). Not 144 here: with promotion, three sets of 72
  // accumulators would not fit.
  if (groups.grouping == Grouping::kNone && !has_block_scales(args) && args.d_type == OutputType::kBF16 &&
      choose_d_store(args) == DStore::kTma && large.slices == 1 && large.resident_clusters > 0) {
    LaunchPlan narrow = plan_launch_with<NarrowTile>(args, groups);
    if (narrow.slices == 1 && narrow.resident_clusters > 0 &&
        kNarrowTileMinGain * static_cast<double>(rounds(narrow) * NarrowTile::kBlockN) <=
            static_cast<double>(rounds(tile_128) * LargeTile::kBlockN)) {
      narrow.narrow_tile = true;
      return narrow;
    }
  }
  return tile_128;
}

// How the consumers write D (DStore), as the launcher chooses and the plan
// says: through the TMA where D's rows start and end on 16-byte boundaries
// (the TMA writes a row in 16-byte pieces, see step 07) and D is BF16 or FP8
// (the D buffer is sized for BF16); other BF16 and FP8 rows through the same
// buffer a row at a time, by whole warps; FP32 straight from the registers.
DStore choose_d_store(const GemmArgs& args) {
  if (args.d_type == OutputType::kFP32) return DStore::kRegisters;
  const int64_t d_bytes = static_cast<int64_t>(output_bytes(args.d_type));
  if (kStoreThroughTma && (args.n * d_bytes) % 16 == 0 && output_rows_aligned(args, 16)) return DStore::kTma;
  return DStore::kSharedRows;
}

// For fp8gemm --check: the tile, slice count and grid this launch would use, and why.
std::string describe_grouped_moe_launch(const GemmArgs& args) {
  const LaunchPlan plan = plan_launch(args);
  std::string why = std::to_string(plan.tiles) + " tiles of " + std::to_string(plan.tile_m) + " x " +
                    std::to_string(plan.tile_n) + " and " + std::to_string(plan.k_blocks) + " K blocks of 128";
  if (args.split_k > 0) why += "; split_k = " + std::to_string(args.split_k) + " asked for";
  if (plan.wide_tile) {
    why += " (128 x 256: unsplit, and no more waves than half as many tiles of 128 x 128)";
  }
  if (plan.small_tile && args.m > kSmallTileMaxM) {
    why += " (not 128 x 128: M <= " + std::to_string(kSmallTileMaxSplitM) + " and more than " +
           std::to_string(kLargeTileMaxSlices) + " slices of K for its tiles)";
  }
  if (plan.medium_tile) {
    why += " (not 128 x 128: M <= " + std::to_string(kMediumTileMaxM) +
           " and less work per cluster, or as much in fewer slices, on 128 x 64)";
  }
  if (plan.narrow_tile) {
    why += " (not 128 x 128: its rounds times 128 columns at least " + std::to_string(kNarrowTileMinGain).substr(0, 4) +
           " times these rounds times 112)";
  }
  if (plan.sharing_b) why += " (the cluster along M: no more rounds than side by side)";
  why += ": " + std::to_string(plan.slices) + (plan.slices == 1 ? " slice, " : " slices, ") +
         std::to_string(plan.units) + " units";
  if (plan.cluster_blocks > 1) {
    why += " of " + std::to_string(plan.cluster_blocks) +
           (plan.shares_b ? " tiles one above the other, on " : " tiles side by side, on ") +
           std::to_string(plan.clusters) + " persistent clusters of " + std::to_string(plan.cluster_blocks) +
           (plan.shares_b ? " blocks sharing B's tile (" : " blocks sharing A's tile (") +
           std::to_string(plan.resident_clusters) + " fit on the GPU at once)";
  } else {
    why += " on " + std::to_string(plan.blocks) + " persistent blocks";
  }
  if (plan.sm_count == 0) why += " (no GPU to count SMs on)";
  if (!operand_rows_aligned(args, 16)) why += "; A or B copied first to rows on 16-byte boundaries";
  const int64_t d_row_bytes = plan.tile_n * static_cast<int64_t>(output_bytes(args.d_type));
  if (choose_d_store(args) == DStore::kSharedRows &&
      d_row_bytes % 128 == 0) {  // a tile row fills whole boxes (store_tile)
    why += "; D's rows off 16-byte boundaries, written a row at a time by whole warps";
  }
  return "split_k " + std::to_string(plan.slices) + " (" + why + ")" +
         (plan.slices > 1 ? ", added in a workspace" : "");
}

// The launch with tile shape T, as plan_launch() chose it.
template <class T>
Status launch_with_tile(const GemmArgs& given, const LaunchPlan& plan, const GroupedView& given_groups) {
  constexpr int kBlockM = T::kBlockM, kBlockN = T::kBlockN;
  GemmArgs args = given;  // A and B may be replaced by aligned copies below
  Status status;
  GroupedView groups = given_groups;
  groups.group_rows = plan.group_rows;  // the kernel reads it for the contiguous layout only
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
  // A grouped GEMM's stacked B: its rows numbered in 32-bit too.
  if (int64_t{groups.experts} * args.n > kMaxExtent - kBlockN) {
    return Status::error(StatusCode::kNotSupported,
                         "experts * N <= 2^31 - 129 required, got " + std::to_string(int64_t{groups.experts} * args.n));
  }
  if (!counts_fit<T>(groups)) {  // the plan keeps more than kMaxExpertsDeepRing off the deep ring
    return Status::error(StatusCode::kNotSupported, "at most " + std::to_string(T::kMaxGroupedExperts) +
                                                        " experts, got " + std::to_string(groups.experts));
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
  // (A grouped GEMM's B is the experts' stacked: experts * N rows.)
  AlignedCopies copies;
  GemmArgs operands = args;
  operands.n = args.n * groups.experts;
  status = align_operand_rows(&operands, 16, &copies);
  if (!status.ok()) return status;
  args.a = operands.a;
  args.lda = operands.lda;
  args.b = operands.b;
  args.ldb = operands.ldb;
  CUtensorMap map_a, map_b;
  // Each block of a cluster loads its part of A's tile (kBoxRowsA rows) or,
  // where the cluster shares B (the wide tile), of B's (kBoxRowsB rows).
  status = sm90::make_kmajor_tensor_map(&map_a, args.a, args.m, args.k, args.lda, T::kBoxRowsA, kBlockK);
  if (!status.ok()) return status;
  status =
      sm90::make_kmajor_tensor_map(&map_b, args.b, args.n * groups.experts, args.k, args.ldb, T::kBoxRowsB, kBlockK);
  if (!status.ok()) return status;
  // D through its buffer and the TMA in boxes of 64 rows x 128 bytes, or the
  // same buffer a row at a time, or from the registers (choose_d_store); from
  // the registers by pairs of elements where a pair is aligned to its size,
  // else one at a time.
  const int d_bytes = static_cast<int>(output_bytes(args.d_type));
  const DStore d_store = choose_d_store(args);
  const bool store_through_tma = d_store == DStore::kTma;
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
  const Units units = groups.grouping != Grouping::kNone ? Units::kGroupedTiles
                      : split                            ? Units::kSplitTiles
                                                         : Units::kTiles;
  const KernelFunction kernel = args.fast_accumulation
                                    ? select_kernel<T, false, false>(args.a_format, args.b_format, units)
                                : block_scales ? select_kernel<T, true, true>(args.a_format, args.b_format, units)
                                               : select_kernel<T, true, false>(args.a_format, args.b_format, units);
  if (kernel == nullptr) {  // launch_with_plan chose a tile without this kernel: a bug here
    return Status::error(StatusCode::kNotSupported, "no kernel of the " + std::to_string(kBlockM) + " x " +
                                                        std::to_string(kBlockN) + " tile for these scales or groups");
  }
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
                               args.stream, T::kClusterBlocks, map_a, map_b, map_d, args, groups, d_store, plan.slices,
                               workspace, counters,
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

Status launch_with_plan(const GemmArgs& args, const GroupedView& groups) {
  const Status status = sm90::require_sm90a_gpu();
  if (!status.ok()) return status;
  const LaunchPlan plan = plan_launch(args, groups);
  if (plan.small_tile) return launch_with_tile<SmallTile>(args, plan, groups);
  if (plan.medium_tile) return launch_with_tile<MediumTile>(args, plan, groups);
  if (plan.wide_tile) {
    if (groups.grouping != Grouping::kNone) return launch_with_tile<WideGroupedTile>(args, plan, groups);
    return has_column_vectors(args) ? launch_with_tile<WideTileColumnVectors>(args, plan, groups)
                                    : launch_with_tile<WideTile>(args, plan, groups);
  }
  if (plan.narrow_tile) return launch_with_tile<NarrowTile>(args, plan, groups);
  if (plan.sharing_b) {
    return groups.grouping == Grouping::kNone ? launch_with_tile<LargeTileSharingB>(args, plan, groups)
                                              : launch_with_tile<LargeTileGroupedSharingB>(args, plan, groups);
  }
  // Six stages where the static shared memory leaves room (kRingBytesPlain):
  // no block scales, and at most kMaxExpertsDeepRing experts' counts.
  if (!has_block_scales(args) && counts_fit<LargeTilePlain>(groups)) {
    return launch_with_tile<LargeTilePlain>(args, plan, groups);
  }
  return launch_with_tile<LargeTile>(args, plan, groups);
}

// A plain GEMM: step 11's, with no groups.
Status launch_grouped_moe_gemm(const GemmArgs& args) { return launch_with_plan(args, GroupedView{}); }

// A grouped GEMM (common/api/grouped.h), its arguments validated by run_grouped_step().
Status launch_grouped_moe(const GroupedGemmArgs& args) {
  GroupedView groups;
  groups.grouping = args.layout == GroupedLayout::kMasked ? Grouping::kMasked : Grouping::kContiguous;
  groups.experts = args.experts;
  groups.m_indices = args.m_indices;
  groups.counts = args.masked_counts;
  if (args.layout == GroupedLayout::kMasked && args.capacity > 0x7FFFFFFF) {
    return Status::error(StatusCode::kNotSupported, "capacity <= 2^31 - 1 required");
  }
  groups.capacity = static_cast<int>(args.capacity);
  return launch_with_plan(args.gemm, groups);
}

}  // namespace
}  // namespace fp8gemm
