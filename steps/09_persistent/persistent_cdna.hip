// Step 09 (AMD) — persistent split-K on CDNA3 (gfx942) and CDNA4 (gfx950):
// step 08's MFMA kernel, launched with as many blocks as the GPU holds at
// once, each of which walks one work unit after another until none is left.
//
// NOT YET RUN ON AMD HARDWARE. There is none here: this file is compiled for
// gfx942 and gfx950 and its assembly checked (ctest isa/<arch>/09_persistent:
// no scratch, no spills, LDS within the limit, the MFMA present), nothing more.
// What it shares with the Hopper kernel (persistent_sm90a.cuh) — the order the
// work is walked in (persistent_tile_count, persistent_tile_number and
// grouped_tile, common/device/tile_scheduler.h), the partition of K (k_slice)
// and the order the partials are added in (sum_slices_in_order,
// common/device/split_k.h) — is tested on the CPU.
//
// What changed from step 08. Step 08 launched one block per tile and slice
// (grid.x the columns of tiles, grid.y the rows, grid.z the slices), and the
// GPU's dispatcher started each one as a CU came free: per (tile, slice), a
// workgroup dispatched, its four wavefronts launched (registers set up,
// kernel arguments loaded), its LDS allocated. This kernel is launched once
// with min(units, CUs x blocks per CU) blocks, the number the GPU runs at once
// (the runtime's occupancy: one per CU on gfx942, whose 64 KB of LDS hold one
// block's 32 KB of buffers and the few bytes beside them, not two; on gfx950
// one or two, as the kernel's registers allow). A work unit is one
// (tile, slice) pair, numbered
//
//   unit = tile_number * slices + slice,
//
// and block b takes units b, b + blocks, b + 2 blocks, ...
// (persistent_tile_count, persistent_tile_number: the schedule the Hopper
// kernel walks too). Each unit does exactly what a block of step 08 did: it
// sums its slice's K blocks, writes its partials into the workspace and counts
// itself in on the tile's counter; the unit that arrives last adds every
// slice's partials in slice order and runs step 07's epilogue. The one
// difference: a block that is not its tile's last goes on to its next unit
// instead of exiting. No block ever waits for another (the last to arrive does
// the work; nobody spins on a counter), so the kernel is correct however many
// of its blocks are resident, and however they are scheduled.
//
// What persistence saves here is the dispatch and launch of a block per unit,
// and not the mainloop's prologue: each unit's mainloop starts afresh, its
// first K tile loaded into LDS before its first MFMA, only after the previous
// unit's epilogue. A Hopper kernel has a producer warp that can fill the ring
// for its next tile while its consumers run the epilogue; this kernel's four
// wavefronts each load and multiply, so the same overlap would need the next
// unit's first loads issued before the epilogue: the next thing to try, once
// there is hardware to measure it on.
//
// The order of the tiles. A tile number stands for a tile of D through
// grouped_tile with kGroupRows = 8 rows of tiles per group (the numbers go
// down a column of 8 tiles, then to the next column): the blocks that run at
// the same time take consecutive numbers, so a wave of them works on a few
// rows and a few columns of tiles, and shares their tiles of A and B through
// the caches (kGroupRows below says why 8). The slices of a tile are
// consecutive units: they run together, and the tile's last arrival comes
// soon after its first, while its partials are still in the caches.
//
// What CDNA has instead of clusters and multicast. Hopper lets the blocks of
// a thread-block cluster read one another's shared memory (distributed shared
// memory: step 08's cluster form adds its partials there) and lets one TMA
// load land in the shared memory of several blocks (multicast: a tile of A or
// B fetched once for the cluster). CDNA has nothing equivalent: a CU's LDS
// (64 KB on gfx942, 160 KB on gfx950) belongs to the blocks on that CU, no
// block reads another CU's, and no load writes into more than one. Blocks
// share data only through memory, and what makes that cheap is the caches:
// the L2 of each XCD (4 MB, shared by the XCD's CUs: 38 on the MI300X, 32 on
// the MI355X) and the Infinity Cache (256 MB, shared by all the XCDs, in
// front of HBM). Hence this kernel's two choices: the workspace form of
// split-K (the partials meet in global memory, mostly in those caches, 64 KB
// per tile and slice), and the grouped order, which turns the operands that
// the blocks of a wave have in common into cache hits where Hopper would
// multicast them. A tile's slices may run on different XCDs, behind
// different L2s: that is why the fences around the counter are at agent
// scope (on gfx942 the compiler writes the L2 back before the count,
// buffer_wbl2, and invalidates it after, buffer_inv).
//
// Per unit, what starts afresh: the accumulators (declared and zeroed in
// run_unit) and the last-arrival flag (written by thread 0 at every count,
// before the barrier that publishes it). LDS needs no barrier of its own
// between units: the mainloop ends on a barrier after its last MFMAs, so the
// next unit's first writes into LDS come after every wavefront has read its
// last fragment; the flag of one unit is read before the barriers of the next
// unit's mainloop, which thread 0 passes before it writes the flag again; and
// the epilogue stores straight from registers, without LDS. The amax is kept
// per thread across a block's units and reduced once, after the last: one
// reduction and one atomic per block, not one per tile.
//
// What the loop costs in registers. Around a loop over units, the compiler
// keeps the kernel's arguments in scalar registers from start to end and
// hoists out of the loop whatever it computes from them: written plainly, the
// loop spilled SGPRs on both architectures. So the kernel takes one argument
// (PersistentArgs) and reads it afresh at every unit (kernel_arguments says
// how). It also holds more VGPRs than step 08's: 248 against 194 on gfx950
// without block scales, 350 against 304 with them (210 and 281 against 166
// and 248 on gfx942), as values computed once per thread, addresses in LDS
// and in the workspace, now live across the loop. Neither changes how many
// blocks fit on a CU.
//
// Everything below the mainloop is step 07's CDNA file: see
// steps/07_fused_epilogue/fused_epilogue_cdna.hip for the epilogue, the
// scales and the formats.
#include "common/api/registry.h"
#include "common/cdna/amax.h"
#include "common/cdna/block_tile.h"
#include "common/device/epilogue.h"
#include "common/device/gelu_portable.h"
#include "common/device/kernel.h"
#include "common/device/operand_scales.h"
#include "common/device/split_k.h"
#include "common/device/tile_scheduler.h"

namespace fp8gemm {
namespace {

using namespace cdna;

// K tiles per scale group of 128 of K: 2 on gfx942 (K tiles of 64), 1 on gfx950.
constexpr int kTilesPerScaleGroup = kQuantGroupSize / kBlockK;
static_assert(kQuantGroupSize % kBlockK == 0, "a K tile lies within one scale group");

// The factors of one K group's partial sums for this lane: s_A(row, group) *
// s_B(n_block, group) for the lane's 16 rows of D (tile i, accumulator r; the
// same for every column tile j). B's K-varying scales must be constant over
// the block's 128 columns, one 128 x 128 block of B: the registration accepts
// no other. Rows past M (loaded as zeros) read the last row's scales.
__device__ inline void load_group_scales(float (&factor)[kTilesM][Mfma::kAccumulators], const GemmArgs& args,
                                         int64_t row0, int64_t block_col, int64_t group) {
  const int lane = static_cast<int>(threadIdx.x) % mfma::kWaveLanes;
  const float* b_scales = k_block_scales(args.b_scale_granularity, args.b_scales, block_col, args.k);
  const float b = b_scales != nullptr ? b_scales[group] : 1.0f;
  // Tested once for all 16 rows (the granularity is the same for every
  // lane); tested per row, it became 16 branches around 16 loads.
  const bool a_blocks = scales_change_along_k(args.a_scale_granularity);
#pragma unroll
  for (int i = 0; i < kTilesM; ++i) {
#pragma unroll
    for (int r = 0; r < Mfma::kAccumulators; ++r) factor[i][r] = b;
  }
  if (!a_blocks) return;
#pragma unroll
  for (int i = 0; i < kTilesM; ++i) {
#pragma unroll
    for (int r = 0; r < Mfma::kAccumulators; ++r) {
      const int64_t row = row0 + 16 * i + Mfma::d_element_of(lane, r).row;
      const float* a_scales =
          k_block_scales(args.a_scale_granularity, args.a_scales, row < args.m ? row : args.m - 1, args.k);
      factor[i][r] *= a_scales[group];
    }
  }
}

// The epilogue of a wavefront's 64 x 64 sub-tile of D runs once per tile,
// after the mainloop, with little beside it to hide its latencies: every
// instruction in it counts. It is written as the Hopper kernel's
// (apply_epilogue, fragment_amax and store_tile_directly in
// fused_epilogue_sm90a.cuh): each decision that is the same for the whole GEMM
// (which scales, whether a bias, which activation, whether an amax) is taken
// once, around the unrolled loops over the lane's 64 values, not inside them,
// and the work is done in passes over those values: the scales and the bias,
// the activation, the amax, the stores.
//
// Where the lane's values lie: accumulator r of MFMA tile (i, j) is the
// element in row sub_tile_row(lane, i, r) and column sub_tile_col(lane, j) of
// the sub-tile (Mfma::d_element_of), so a lane holds 16 rows and 4 columns of
// it. Lanes 16 apart hold rows 4 apart; the 16 lanes of a row hold 16
// consecutive columns, which their stores write together.
//
// Row numbers are 32-bit here: prepare_cdna_launch allows M <= 65535 x 128
// (steps 05 to 08 put the row tiles on grid.y; this step's grid is
// one-dimensional and keeps the limit). It allows more columns than 2^31, so
// column numbers stay 64-bit; the bounds tests compare the 32-bit offsets
// within the sub-tile.
__device__ inline int sub_tile_row(int lane, int i, int r) { return 16 * i + Mfma::d_element_of(lane, r).row; }
__device__ inline int sub_tile_col(int lane, int j) { return 16 * j + Mfma::d_element_of(lane, 0).col; }

// The epilogue's arithmetic, in place on the lane's 64 sums:
// y = act(sum * (s_A(row) * s_B(col)) + bias[col]), with the scales constant
// along K (an operand with 1 x 128 or 128 x 128 scales contributes 1 here: its
// scales were folded in per K group). Elements past M or N are computed too
// (from the zeros loaded there), with the last row's and column's scales and
// bias, and never stored. The scales and the bias are read here, before any
// store: the compiler cannot tell that D overlaps neither.
__device__ inline void apply_epilogue(WaveAccumulators& acc, const GemmArgs& args, int row0, int64_t col0) {
  const int lane = static_cast<int>(threadIdx.x) % mfma::kWaveLanes;
  const ConstantScales a_scales = constant_scales(args.a_scale_granularity, args.a_scale, args.a_scales);
  const ConstantScales b_scales = constant_scales(args.b_scale_granularity, args.b_scale, args.b_scales);
  // s_A of the lane's 16 rows times B's per-tensor part. B has a per-tensor
  // scale or per-row ones, never both (constant_scales leaves the other at
  // 1), so this times the per-row part below is exactly s_A(row) * s_B(col).
  const int last_row = static_cast<int>(args.m) - 1;
  float row_factor[kTilesM][Mfma::kAccumulators];
  if (a_scales.rows != nullptr) {
#pragma unroll
    for (int i = 0; i < kTilesM; ++i) {
#pragma unroll
      for (int r = 0; r < Mfma::kAccumulators; ++r) {
        const int row = row0 + sub_tile_row(lane, i, r);
        row_factor[i][r] = a_scales.of_row(row < last_row ? row : last_row) * b_scales.tensor;
      }
    }
  } else {
#pragma unroll
    for (int i = 0; i < kTilesM; ++i) {
#pragma unroll
      for (int r = 0; r < Mfma::kAccumulators; ++r) row_factor[i][r] = a_scales.tensor * b_scales.tensor;
    }
  }
  // The lane's 4 columns and their bias: 0 without one, added all the same,
  // so that y is the same with no bias as with a bias of zeros (a product of
  // -0 plus 0 is +0).
  int64_t column[kTilesN];
  float bias[kTilesN];
#pragma unroll
  for (int j = 0; j < kTilesN; ++j) {
    const int64_t col = col0 + sub_tile_col(lane, j);
    column[j] = col < args.n ? col : args.n - 1;
    bias[j] = 0.0f;
  }
  if (args.bias != nullptr) {
#pragma unroll
    for (int j = 0; j < kTilesN; ++j) bias[j] = load_bias(args.bias, column[j], args.bias_type);
  }
  if (b_scales.rows == nullptr) {
#pragma unroll
    for (int i = 0; i < kTilesM; ++i) {
#pragma unroll
      for (int j = 0; j < kTilesN; ++j) {
#pragma unroll
        for (int r = 0; r < Mfma::kAccumulators; ++r) acc[i][j][r] = acc[i][j][r] * row_factor[i][r] + bias[j];
      }
    }
  } else {
    float col_scale[kTilesN];  // B's rows are D's columns
#pragma unroll
    for (int j = 0; j < kTilesN; ++j) col_scale[j] = b_scales.rows[column[j]];
#pragma unroll
    for (int i = 0; i < kTilesM; ++i) {
#pragma unroll
      for (int j = 0; j < kTilesN; ++j) {
#pragma unroll
        for (int r = 0; r < Mfma::kAccumulators; ++r) {
          acc[i][j][r] = acc[i][j][r] * (row_factor[i][r] * col_scale[j]) + bias[j];
        }
      }
    }
  }
  // GELU inline, one loop per form: the lane's 64 evaluations are independent,
  // so the compiler interleaves them and their latencies overlap. An earlier
  // version of the Hopper step called the activation per element instead (a
  // __noinline__ function, to keep the unrolled loop small, as this kernel
  // did too); measured on the H200, the calls ran one after another, none
  // overlapping the next, and the tests made per element around them cost
  // about 20 instructions per element even with no epilogue.
  if (args.activation == Activation::kGeluTanh) {
#pragma unroll
    for (int i = 0; i < kTilesM; ++i) {
#pragma unroll
      for (int j = 0; j < kTilesN; ++j) {
#pragma unroll
        for (int r = 0; r < Mfma::kAccumulators; ++r) acc[i][j][r] = gelu_tanh_portable(acc[i][j][r]);
      }
    }
  } else if (args.activation == Activation::kGeluErf) {
#pragma unroll
    for (int i = 0; i < kTilesM; ++i) {
#pragma unroll
      for (int j = 0; j < kTilesN; ++j) {
#pragma unroll
        for (int r = 0; r < Mfma::kAccumulators; ++r) acc[i][j][r] = gelu_erf_portable(acc[i][j][r]);
      }
    }
  }
}

// How much of the sub-tile lies inside D: its first `rows` rows and `cols`
// columns (at most 64 each; 0 or less where none does). Every lane has the
// same, so a test on it is one branch for the whole wavefront.
struct SubTileExtent {
  int rows;
  int cols;
  __device__ bool whole() const { return rows == kWaveM && cols == kWaveN; }
};

__device__ inline SubTileExtent sub_tile_extent(const GemmArgs& args, int row0, int64_t col0) {
  const int rows = static_cast<int>(args.m) - row0;
  const int64_t cols = args.n - col0;
  return {rows < kWaveM ? rows : kWaveM, static_cast<int>(cols < kWaveN ? cols : kWaveN)};
}

// max |y| over the lane's elements inside D, for FP8 D's amax. A sub-tile
// wholly inside D (all but those on D's last rows and columns) needs no
// bounds tests.
__device__ inline float tile_amax(const WaveAccumulators& y, SubTileExtent extent) {
  float amax = 0.0f;
  if (extent.whole()) {
#pragma unroll
    for (int i = 0; i < kTilesM; ++i) {
#pragma unroll
      for (int j = 0; j < kTilesN; ++j) {
#pragma unroll
        for (int r = 0; r < Mfma::kAccumulators; ++r) amax = fmaxf(amax, fabsf(y[i][j][r]));
      }
    }
    return amax;
  }
  const int lane = static_cast<int>(threadIdx.x) % mfma::kWaveLanes;
#pragma unroll
  for (int i = 0; i < kTilesM; ++i) {
#pragma unroll
    for (int r = 0; r < Mfma::kAccumulators; ++r) {
      if (sub_tile_row(lane, i, r) >= extent.rows) continue;
#pragma unroll
      for (int j = 0; j < kTilesN; ++j) {
        if (sub_tile_col(lane, j) < extent.cols) amax = fmaxf(amax, fabsf(y[i][j][r]));
      }
    }
  }
  return amax;
}

// Stores y as kOut (a template argument, so that the type test is made once,
// not 64 times) into the lane's elements inside D, one value per store: a
// lane's 4 columns are 16 apart. The bounds tests are one per row and one per
// column, made once; each store then tests the pair.
template <OutputType kOut>
__device__ inline void store_tile(const WaveAccumulators& y, const GemmArgs& args, int row0, int64_t col0,
                                  SubTileExtent extent) {
  const int lane = static_cast<int>(threadIdx.x) % mfma::kWaveLanes;
  bool col_inside[kTilesN];
#pragma unroll
  for (int j = 0; j < kTilesN; ++j) col_inside[j] = sub_tile_col(lane, j) < extent.cols;
  const int64_t lane_col = col0 + sub_tile_col(lane, 0);  // column j is 16 j further
#pragma unroll
  for (int i = 0; i < kTilesM; ++i) {
#pragma unroll
    for (int r = 0; r < Mfma::kAccumulators; ++r) {
      const int row = sub_tile_row(lane, i, r);
      const bool row_inside = row < extent.rows;
      const int64_t start = static_cast<int64_t>(row0 + row) * args.ldd + lane_col;
#pragma unroll
      for (int j = 0; j < kTilesN; ++j) {
        if (row_inside && col_inside[j]) store_epilogue_output(args.d, start + 16 * j, kOut, y[i][j][r], args.d_scale);
      }
    }
  }
}

// The epilogue of this wavefront's sub-tile, whose first element is
// (row0, col0) of D, in place on its sums: the arithmetic, then the amax (only
// when d_amax is given), then the stores in D's type. Returns the largest |y|
// this lane stored, 0 without d_amax. The arithmetic is the same for every
// output type, so it is compiled once, outside the switch. Inlined by force:
// every kernel of this file calls it, which makes it too big for the inliner
// to copy, and a call would take the 64 sums by address, in scratch memory.
__device__ inline __attribute__((always_inline)) float epilogue_tile(WaveAccumulators& y, const GemmArgs& args,
                                                                     int row0, int64_t col0) {
  apply_epilogue(y, args, row0, col0);
  const SubTileExtent extent = sub_tile_extent(args, row0, col0);
  const float amax = args.d_amax != nullptr ? tile_amax(y, extent) : 0.0f;
  switch (args.d_type) {
    case OutputType::kBF16: store_tile<OutputType::kBF16>(y, args, row0, col0, extent); break;
    case OutputType::kFP32: store_tile<OutputType::kFP32>(y, args, row0, col0, extent); break;
    case OutputType::kE4M3: store_tile<OutputType::kE4M3>(y, args, row0, col0, extent); break;
    default: store_tile<OutputType::kE5M2>(y, args, row0, col0, extent); break;
  }
  return amax;
}

// Split-K: at most 8 slices (as on Hopper), at least 4 K blocks of 128 per
// slice when the launcher chooses.
constexpr int kMaxSlices = 8;
constexpr int kMinKBlocksPerSlice = 4;

// Rows of tiles per group of the tile order (grouped_tile). The blocks that
// run at once take consecutive tile numbers, so the group's height decides
// which operands a wave of them reads. Take a large GEMM on an MI300X, one
// block per CU, one slice: a wave of 304 blocks covers 8 rows by 38 columns
// of tiles and reads 8 row tiles of A and 38 column tiles of B, where rows
// first (group_rows = 1, N fastest: the order of step 08's grid, whose x is
// N) it read 1 of A and 304 of B. Few enough that each is fetched from HBM by
// the first block to ask and found in the caches by the others: L2 reuse
// within a wave. A square of tiles would read fewer still (17 + 18 for 304
// blocks); 8 has a second reason: it is the XCD count of the MI300X and the
// MI355X, whose dispatcher deals blocks to the XCDs in turn (block b to XCD
// b mod 8). With one slice and a grid a multiple of 8, block b then always
// takes tiles in row b mod 8 of a (full) group, so the blocks of one XCD share
// one row tile of A in their L2, and only B's tiles are shared across XCDs,
// in the Infinity Cache. A reasoned starting point, not a measured one.
constexpr int64_t kGroupRows = 8;

// The work of one launch: the tiles of D and the slices of each one's K. Unit
// u is slice u % slices of tile number u / slices.
struct WorkUnits {
  int64_t m_tiles = 0;  // rows of tiles
  int64_t n_tiles = 0;  // columns of tiles
  int slices = 1;
  FP8GEMM_HOST_DEVICE int64_t count() const { return m_tiles * n_tiles * slices; }
};

// The workspace of a split GEMM: for each tile and slice, the 64 partial sums
// of each of the block's 256 lanes, value-major (value v of every lane
// together), so that a wavefront's loads and stores of one value are
// contiguous.
constexpr int kSumsPerLane = kTilesM * kTilesN * Mfma::kAccumulators;  // 64
__device__ inline float* slice_partials(float* workspace, int64_t tile, int slices, int slice) {
  return workspace + (tile * slices + slice) * int64_t{kSumsPerLane} * kThreads;
}

// One work unit, step 08's block: slice `slice` of the tile `coord`, numbered
// `tile` (its counter and its workspace slots): its run of K blocks, then, in
// the block that finishes the tile last, the sum of the slices in slice order
// and the epilogue. Returns the largest |y| this thread stored (0 where the
// block was not the tile's last, or without d_amax), for the block's amax.
// kBlockScales: A has 1 x 128 or B has 128 x 128 scales, folded in per K group
// of 128 (a slice is whole groups). Every thread of the block must call it (it
// has barriers). Inlined by force, as epilogue_tile: a call would take the
// arguments and the sums by address, in scratch memory.
template <Fp8Format kFormatA, Fp8Format kFormatB, bool kBlockScales>
__device__ inline __attribute__((always_inline)) float run_unit(const GemmArgs& args, TileCoord coord, int64_t tile,
                                                                int slices, int slice, float* workspace,
                                                                unsigned* counters) {
  __shared__ bool last_block;  // written by thread 0 at every count, read after the barrier
  const int64_t block_row = coord.m_block * kBlockM;
  const int64_t block_col = coord.n_block * kBlockN;
  const WaveOrigin wave = wave_origin();
  const int64_t row0 = block_row + wave.row;  // this wavefront's sub-tile of D
  const int64_t col0 = block_col + wave.col;

  // This slice's K blocks of 128 (k_slice, as on Hopper), in K tiles.
  const int64_t k_tiles = (args.k + kBlockK - 1) / kBlockK;
  const int64_t k_blocks = (args.k + kQuantGroupSize - 1) / kQuantGroupSize;
  const KBlockRange range = k_slice(k_blocks, slices, slice);
  const int64_t first_tile = range.first * kTilesPerScaleGroup;
  const int64_t end_tile = (range.first + range.count) * kTilesPerScaleGroup < k_tiles
                               ? (range.first + range.count) * kTilesPerScaleGroup
                               : k_tiles;

  // The unit's own sums, from zero: nothing is carried from the block's
  // previous unit.
  WaveAccumulators acc;  // the sum over the slice, or (block scales) over this K group
  auto zero = [](WaveAccumulators& a) {
#pragma unroll
    for (int i = 0; i < kTilesM; ++i) {
#pragma unroll
      for (int j = 0; j < kTilesN; ++j) a[i][j] = Accumulator{0.0f, 0.0f, 0.0f, 0.0f};
    }
  };
  zero(acc);
  WaveAccumulators total;  // block scales: the scaled sum of the slice's finished K groups
  if constexpr (kBlockScales) {
    zero(total);
    float factor[kTilesM][Mfma::kAccumulators];
    load_group_scales(factor, args, row0, block_col, range.first);
    multiply_block_tile<kFormatA, kFormatB>(
        args, block_row, block_col, acc,
        [&](int64_t t) {
          const bool group_ends = (t + 1) % kTilesPerScaleGroup == 0 || t + 1 == k_tiles;
          if (!group_ends) return;
#pragma unroll
          for (int i = 0; i < kTilesM; ++i) {
#pragma unroll
            for (int j = 0; j < kTilesN; ++j) {
#pragma unroll
              for (int r = 0; r < Mfma::kAccumulators; ++r)
                total[i][j][r] = fmaf(acc[i][j][r], factor[i][r], total[i][j][r]);
            }
          }
          zero(acc);
          const int64_t next = t / kTilesPerScaleGroup + 1;
          if (next < range.first + range.count) load_group_scales(factor, args, row0, block_col, next);
        },
        first_tile, end_tile);
  } else {
    multiply_block_tile<kFormatA, kFormatB>(
        args, block_row, block_col, acc, [](int64_t) {}, first_tile, end_tile);
  }
  WaveAccumulators& sum = kBlockScales ? total : acc;

  if (slices > 1) {
    // This slice's partials into the workspace; then count the block in.
    float* mine = slice_partials(workspace, tile, slices, slice);
#pragma unroll
    for (int i = 0; i < kTilesM; ++i) {
#pragma unroll
      for (int j = 0; j < kTilesN; ++j) {
#pragma unroll
        for (int r = 0; r < Mfma::kAccumulators; ++r) {
          mine[((i * kTilesN + j) * Mfma::kAccumulators + r) * kThreads + threadIdx.x] = sum[i][j][r];
        }
      }
    }
    // Every thread's partials are visible on the whole GPU (a release fence
    // at agent scope: the slices of a tile may run on different XCDs) before
    // thread 0 counts the block in; the count is an acquire-release atomic,
    // and the last block fences again (acquire) before it reads the others'
    // partials. This build has no HIP headers (device code only), hence the
    // compiler's own builtins for __threadfence() and atomicAdd(). The first
    // barrier also keeps thread 0 from writing last_block while a wavefront
    // may still read the previous unit's (the mainloop's barriers lie between
    // the two as well).
    __builtin_amdgcn_fence(__ATOMIC_RELEASE, "agent");
    __syncthreads();
    if (threadIdx.x == 0) {
      const unsigned arrived = __hip_atomic_fetch_add(&counters[tile], 1u, __ATOMIC_ACQ_REL, __HIP_MEMORY_SCOPE_AGENT);
      last_block = arrived == static_cast<unsigned>(slices - 1);
    }
    __syncthreads();
    // Not the last: the others will add this partial; on to the block's next
    // unit (uniform over the block).
    if (!last_block) return 0.0f;
    __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "agent");
    // The last block adds every slice's partials, its own included, in slice
    // order: the sum does not depend on which block came last.
#pragma unroll
    for (int i = 0; i < kTilesM; ++i) {
#pragma unroll
      for (int j = 0; j < kTilesN; ++j) {
#pragma unroll
        for (int r = 0; r < Mfma::kAccumulators; ++r) {
          const int64_t at = ((i * kTilesN + j) * Mfma::kAccumulators + r) * kThreads + threadIdx.x;
          sum[i][j][r] = sum_slices_in_order<kMaxSlices>(slices, [&](int s) {
            return slice_partials(workspace, tile, slices, s)[at];
          });
        }
      }
    }
    // Ready for the next launch (which starts after this kernel ends); no
    // unit of this launch counts on this tile again.
    if (threadIdx.x == 0) __hip_atomic_store(&counters[tile], 0u, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
  }
  // The epilogue, in place on the finished sums (row numbers as 32-bit ints: see sub_tile_row).
  return epilogue_tile(sum, args, static_cast<int>(row0), col0);
}

// The kernel's one argument: the GEMM, its work units, and the split-K
// workspace and counters (null with one slice).
struct PersistentArgs {
  GemmArgs gemm;
  WorkUnits work;
  float* workspace = nullptr;
  unsigned* counters = nullptr;
};

// The kernel's argument, read afresh from the kernel-argument segment, which
// begins with it (the AMDGPU ABI: the explicit arguments first, from offset
// 0, in order; the hidden ones, the grid's size and the like, after them).
//
// Why not simply use the argument: with every unit in one loop, the compiler
// keeps all of it in scalar registers from the kernel's start to its end (the
// mainloop's A and B through the epilogue, the epilogue's D, scales and bias
// through the mainloop), and hoists out of the loop whatever it computes from
// it. Step 08's kernel, one unit per block, used 66 to 82 SGPRs; this loop,
// written with the argument itself, wanted more than the 102 there are and
// spilled 37 to 56 of them. The empty asm statement gives the offset, 0, a
// value the compiler cannot know, so each call reads the argument again: a
// few scalar loads per unit, from the scalar cache, and nothing derived from
// the argument lives longer than the unit that uses it.
__device__ inline const PersistentArgs& kernel_arguments() {
  int64_t offset = 0;
  __asm__ volatile("" : "+s"(offset));
  // A C-style cast: from the constant address space to a generic pointer
  // (the compiler still reads through it with scalar loads).
  const char* segment = (const char*)__builtin_amdgcn_kernarg_segment_ptr();
  return *reinterpret_cast<const PersistentArgs*>(segment + offset);
}

// The persistent loop of one block: units blockIdx.x, + gridDim.x, + 2
// gridDim.x, ... (common/device/tile_scheduler.h), each tile number placed in
// D in the grouped order. The loop's trip count depends on the block's number
// only, and run_unit's early return (not the tile's last) is uniform over the
// block, so every thread meets every barrier, the last ones in the amax below.
template <Fp8Format kFormatA, Fp8Format kFormatB, bool kBlockScales>
__device__ inline void persistent_block() {
  __shared__ float amax_scratch[kWaves];
  const int64_t blocks = gridDim.x;
  const int64_t block = blockIdx.x;
  const int64_t my_units = persistent_tile_count(kernel_arguments().work.count(), blocks, block);
  float thread_amax = 0.0f;  // over every unit whose epilogue this block ran
  for (int64_t i = 0; i < my_units; ++i) {
    const PersistentArgs& launch = kernel_arguments();  // this unit's reading
    const WorkUnits& work = launch.work;
    const int64_t unit = persistent_tile_number(blocks, block, i);
    const int64_t tile = unit / work.slices;
    const int slice = static_cast<int>(unit - tile * work.slices);
    const TileCoord coord = grouped_tile(tile, work.m_tiles, work.n_tiles, kGroupRows);
    const float unit_amax = run_unit<kFormatA, kFormatB, kBlockScales>(launch.gemm, coord, tile, work.slices, slice,
                                                                       launch.workspace, launch.counters);
    thread_amax = fmaxf(thread_amax, unit_amax);
  }
  // d_amax is given only with FP8 D (validate_gemm_args); the test is uniform
  // over the block, as the barrier inside requires. Once per block: a block
  // that ran no epilogue folds in a 0, which changes nothing.
  float* const d_amax = kernel_arguments().gemm.d_amax;
  if (d_amax != nullptr) block_amax_to_global(thread_amax, amax_scratch, d_amax);
}

// Exactly 256 threads, so that the compiler may give each lane up to 512
// registers (VGPRs and accumulation VGPRs): the block-scaled kernels hold two
// sets of 64 accumulators. The argument is read through kernel_arguments().
template <Fp8Format kFormatA, Fp8Format kFormatB, bool kBlockScales>
__global__ __attribute__((amdgpu_flat_work_group_size(kThreads, kThreads))) void persistent_cdna_kernel(
    [[maybe_unused]] PersistentArgs launch) {
  if constexpr (formats_native_here<kFormatA, kFormatB>()) {
    persistent_block<kFormatA, kFormatB, kBlockScales>();
  }
}

#if !defined(FP8GEMM_HIP_DEVICE_ONLY)
// The workspace and the tiles' counters, allocated on first use and grown
// when a GEMM needs more; the counters start at zero and every launch leaves
// them at zero. One per process, for the current device, not thread-safe.
Status persistent_workspace(size_t floats, size_t counters, float** workspace, unsigned** counter_array) {
  static float* buffer = nullptr;
  static size_t buffer_floats = 0;
  static unsigned* counts = nullptr;
  static size_t counts_size = 0;
  if (floats > buffer_floats) {
    if (buffer != nullptr) (void)hipFree(buffer);
    buffer = nullptr;
    buffer_floats = 0;
    if (hipMalloc(&buffer, floats * sizeof(float)) != hipSuccess) {
      (void)hipGetLastError();
      return Status::error(StatusCode::kRuntimeError, "cannot allocate the split-K workspace");
    }
    buffer_floats = floats;
  }
  if (counters > counts_size) {
    if (counts != nullptr) (void)hipFree(counts);
    counts = nullptr;
    counts_size = 0;
    if (hipMalloc(&counts, counters * sizeof(unsigned)) != hipSuccess ||
        hipMemset(counts, 0, counters * sizeof(unsigned)) != hipSuccess) {
      (void)hipGetLastError();
      return Status::error(StatusCode::kRuntimeError, "cannot allocate the split-K counters");
    }
    counts_size = counters;
  }
  *workspace = buffer;
  *counter_array = counts;
  return Status::success();
}
#endif

// Launches one instantiation with as many blocks as run at once, and no more
// than there are units: `compute_units` times the blocks of this kernel that
// fit on a CU (its LDS and registers, as the runtime counts them).
template <Fp8Format kFormatA, Fp8Format kFormatB, bool kBlockScales>
Status launch_persistent_kernel(const PersistentArgs& launch, int compute_units) {
  int blocks_per_cu = 1;  // the device-only build parses this launcher but never runs it
#if !defined(FP8GEMM_HIP_DEVICE_ONLY)
  if (hipOccupancyMaxActiveBlocksPerMultiprocessor(
          &blocks_per_cu, reinterpret_cast<const void*>(&persistent_cdna_kernel<kFormatA, kFormatB, kBlockScales>),
          kThreads, 0) != hipSuccess) {
    (void)hipGetLastError();
    return Status::error(StatusCode::kRuntimeError, "cannot ask the runtime how many blocks fit on a CU");
  }
  if (blocks_per_cu < 1) blocks_per_cu = 1;
#endif
  const int64_t resident = int64_t{compute_units} * blocks_per_cu;
  const int64_t units = launch.work.count();
  const int64_t blocks = units < resident ? units : resident;
  persistent_cdna_kernel<kFormatA, kFormatB, kBlockScales>
      <<<dim3(static_cast<unsigned>(blocks)), dim3(kThreads), 0, launch.gemm.stream>>>(launch);
  return status_from_launch();
}

Status launch_persistent_cdna(const GemmArgs& args) {
  dim3 tiles_grid;
  Status status = prepare_cdna_launch(args, &tiles_grid);  // formats of this GPU's MFMA, the grid of tiles
  if (!status.ok()) return status;
  PersistentArgs launch;
  launch.gemm = args;
  WorkUnits& work = launch.work;
  work.m_tiles = tiles_grid.y;
  work.n_tiles = tiles_grid.x;
  const int64_t tiles = work.m_tiles * work.n_tiles;
  const int64_t k_blocks = (args.k + kQuantGroupSize - 1) / kQuantGroupSize;
  // The compute units set both the slice count (as in step 08) and the grid.
  int compute_units = 1;  // the device-only build parses this launcher but never runs it
#if !defined(FP8GEMM_HIP_DEVICE_ONLY)
  int device = 0;
  if (hipGetDevice(&device) != hipSuccess ||
      hipDeviceGetAttribute(&compute_units, hipDeviceAttributeMultiprocessorCount, device) != hipSuccess ||
      compute_units < 1) {
    (void)hipGetLastError();
    return Status::error(StatusCode::kRuntimeError, "cannot count the GPU's compute units");
  }
#endif
  int slices = args.split_k;
  if (slices == 0) slices = split_k_slices(tiles, k_blocks, compute_units, kMinKBlocksPerSlice, kMaxSlices);
  if (slices < 1) slices = 1;
  if (slices > k_blocks) {
    return Status::error(StatusCode::kNotSupported, "split_k = " + std::to_string(slices) +
                                                        " is more slices than K has blocks of 128 (" +
                                                        std::to_string(k_blocks) + ")");
  }
  work.slices = slices;
#if !defined(FP8GEMM_HIP_DEVICE_ONLY)
  if (slices > 1) {
    status = persistent_workspace(static_cast<size_t>(tiles * slices) * kSumsPerLane * kThreads,
                                  static_cast<size_t>(tiles), &launch.workspace, &launch.counters);
    if (!status.ok()) return status;
  }
  // The kernel folds each block's amax into *d_amax with an atomic max.
  if (args.d_amax != nullptr && hipMemsetAsync(args.d_amax, 0, sizeof(float), args.stream) != hipSuccess) {
    (void)hipGetLastError();  // clear it: the error is reported here
    return Status::error(StatusCode::kRuntimeError, "cannot clear d_amax");
  }
#endif
  const bool block_scales =
      scales_change_along_k(args.a_scale_granularity) || scales_change_along_k(args.b_scale_granularity);
  return dispatch_fp8_formats(args.a_format, args.b_format, [&](auto format_a, auto format_b) {
    // Only same-family pairs are instantiated; prepare_cdna_launch rejects the others.
    if constexpr (fp8_is_fnuz(format_a.value) == fp8_is_fnuz(format_b.value)) {
      if (block_scales) return launch_persistent_kernel<format_a.value, format_b.value, true>(launch, compute_units);
      return launch_persistent_kernel<format_a.value, format_b.value, false>(launch, compute_units);
    } else {
      return Status::error(StatusCode::kNotSupported, "A and B must both be FNUZ (gfx942) or both OCP (gfx950)");
    }
  });
}

constexpr uint32_t bit(ScaleGranularity g) { return 1u << static_cast<int>(g); }

// What the step accepts: step 07's (CDNA), and K split into up to kMaxSlices slices.
constexpr StepConstraints constraints() {
  StepConstraints c{/*m_multiple=*/1, /*n_multiple=*/1, /*k_multiple=*/16, /*operand_alignment_bytes=*/16};
  c.outputs = (1u << kNumOutputTypes) - 1;
  c.a_scales = bit(ScaleGranularity::kPerTensor) | bit(ScaleGranularity::kPerRow) | bit(ScaleGranularity::kGroup1x128);
  c.b_scales =
      bit(ScaleGranularity::kPerTensor) | bit(ScaleGranularity::kPerRow) | bit(ScaleGranularity::kBlock128x128);
  c.scale_pointers = true;
  c.epilogue = kEpilogueBias | kEpilogueGeluTanh | kEpilogueGeluErf;
  c.max_split_k = kMaxSlices;
  c.split_k_reductions = 1u << static_cast<int>(SplitKReduction::kWorkspace);
  return c;
}

}  // namespace
}  // namespace fp8gemm

// This folder's step on AMD GPUs (on NVIDIA ones, step_sm90a.cu registers the
// Hopper kernel under the same number and name). The sums are FP32 throughout,
// the partials added in FP32 in slice order.
FP8GEMM_REGISTER_STEP(
    "Persistent (CDNA): as many blocks as the CUs hold walk (tile, slice) units in grouped order; split-K partials "
    "added in a workspace",
    fp8gemm::launch_persistent_cdna, fp8gemm::constraints(), fp8gemm::Accumulation::kFp32);
