// Step 12 (AMD) — grouped GEMM for a mixture-of-experts layer on CDNA3
// (gfx942) and CDNA4 (gfx950): step 09's persistent MFMA kernel, walking the
// tiles of many experts' GEMMs, which share N and K but not their rows, in
// one launch.
//
// NOT YET RUN ON AMD HARDWARE. There is none here: this file is compiled for
// gfx942 and gfx950 and its assembly checked (ctest isa/<arch>/12_grouped_moe:
// no scratch, no spills, LDS within the limit, the MFMA present), nothing more.
// What it shares with the Hopper kernel (grouped_moe_sm90a.cuh) — which tile
// of which expert a unit number stands for (masked_tile, masked_tile_count,
// contiguous_expert: common/device/grouped_scheduler.h, over grouped_tile and
// the persistent order of common/device/tile_scheduler.h) — is tested on the
// CPU (tests/test_grouped_scheduler.cpp).
//
// What a grouped GEMM is (common/api/grouped.h). Expert g multiplies its own
// rows of A by its own B, rows g N .. g N + N - 1 of the experts' B stacked
// into one matrix, into its rows of D; every expert has the same N, K, scale
// granularities and epilogue. Which rows are expert g's depends on the layout:
//
//   contiguous  the experts' rows one segment after another along M, each
//               segment padded to kGroupedRowAlignment = 128 rows;
//               m_indices[row] names the expert of each row, -1 for padding;
//   masked      expert g owns rows g capacity .. g capacity + capacity - 1,
//               of which the first masked_counts[g] are valid. The counts
//               are in device memory, written by the GPU (the router):
//               under a CUDA or HIP graph the host never sees them.
//
// What changed from step 09, and why.
//
// Units. Step 09's unit was a (tile, slice) pair of one GEMM, numbered in
// grouped order over its M x N tiles. Here a unit is one tile of one expert,
// and what a number stands for depends on the layout:
//   - masked: the experts' tiles one expert after another, each expert's
//     ceil(count / 128) rows of tiles by n_tiles in grouped order (masked_tile
//     over the counts). The counts are known only on the GPU, so every block
//     copies them into LDS at its start, clamped into [0, capacity]
//     (masked_valid_rows), counts the tiles itself (masked_tile_count) and
//     then takes units block, block + blocks, ... of that count, as in step
//     09. An expert with no rows has no tiles: no block spends a unit on it.
//     The grid is sized on the host for every expert full, the most there
//     can be; blocks beyond the actual count take no unit.
//   - contiguous: the row tiles of the whole M in step 09's grouped order
//     (M is a multiple of 128, so the tiles are the segments' blocks of 128
//     rows), each tile's expert read from its first row (contiguous_expert).
//     A block of padding (expert -1, or any number outside [0, experts):
//     the kernel trusts no index it has not checked) is skipped: nothing
//     loaded, computed or stored. The tile is 128 rows, the segments'
//     alignment, so no tile holds rows of two experts.
//
// Rows of an expert. A tile of expert g reads rows of B from g N on (and
// the expert's B scales: one plain layout per expert, expert_b_scales), and
// its valid rows end where the expert's do: masked, at the expert's first
// row plus its count; contiguous, at the block's first row that m_indices
// does not give to the expert (its padding: expert_rows_in_block). The tile
// runs step 09's mainloop and epilogue on a view of the GEMM with M cut
// there (expert_gemm): rows past it load as zeros, are never stored and do
// not enter the amax, exactly as step 09 treats the rows past M. So D's rows
// past an expert's count, and its padding rows, are never written, and
// expert g's rows never see another expert's B.
//
// No split-K. A grouped GEMM does not split K (GroupedGemmArgs: split_k 0 or
// 1), and in the masked layout the host could not size step 09's workspace
// and counters to the tiles anyway: it does not know how many there are.
// Step 09's slices, workspace, counters and last-arrival flag are gone; a
// unit sums its tile's whole K and runs the epilogue itself.
//
// What stays step 09's: as many blocks as the GPU runs at once, each walking
// its units with no block ever waiting for another; the four wavefronts that
// both load and multiply (a unit's first loads still wait for the previous
// unit's epilogue); the kernel argument read afresh for each unit
// (kernel_arguments says why); the amax reduced once per block.
//
// Uniform values. The counts in LDS and the index read from m_indices are
// the same in every lane, but the compiler cannot know that of a value read
// by vector loads: it would keep the unit's expert and tile in vector
// registers and treat the loop around the block's barriers as divergent.
// wave_uniform moves them into scalar registers (one v_readfirstlane each).
//
// What it costs (the ISA check's output, clang 22.1.8; no scratch, no spill
// anywhere). VGPRs, AGPRs included, masked / contiguous: on gfx950 238 / 240
// without block scales and 342 / 358 with them (step 09: 248 and 350); on
// gfx942 224 / 212 and 273 / 290 (step 09: 210 and 281). LDS: the masked
// kernels add the counts' 4 KB, 36 880 bytes on gfx942 and 69 648 on gfx950;
// the contiguous ones hold 32 784 and 65 552. One scalar register spilled in
// the masked block-scaled kernels on gfx950 until the grid's size became an
// argument (GroupedKernelArgs::blocks says why).
//
// A plain GEMM is the masked layout with one expert whose rows are all valid
// (no counts: every expert has `capacity` rows), so this file's step also
// runs plain GEMMs, in step 09's order without split-K.
//
// Everything below the mainloop is step 07's CDNA file: see
// steps/07_fused_epilogue/fused_epilogue_cdna.hip for the epilogue, the
// scales and the formats.
#include "common/api/grouped.h"
#include "common/api/registry.h"
#include "common/cdna/amax.h"
#include "common/cdna/block_tile.h"
#include "common/device/epilogue.h"
#include "common/device/gelu_portable.h"
#include "common/device/grouped_scheduler.h"
#include "common/device/kernel.h"
#include "common/device/operand_scales.h"
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

// Rows of tiles per group of the tile order (grouped_tile), within each
// expert (masked) or, for the contiguous layout's whole M, at most this
// (contiguous_group_rows). Step 09's reasoning holds for
// one expert's tiles: the blocks that run at once take consecutive numbers,
// so a wave of them covers 8 rows of tiles by a few columns and shares their
// tiles of A and B through the L2 and the Infinity Cache; 8 is also the XCD
// count of the MI300X and the MI355X, whose dispatcher deals blocks to the
// XCDs in turn. A reasoned starting point, not a measured one.
constexpr int64_t kGroupRows = 8;

// The masked layout's counts live in LDS, one int per expert (masked_tile
// reads them for every unit). 4 KB at most: on gfx942 the block's 32 KB of
// K tiles and these still fit one block per CU, as step 09's did; on gfx950
// two blocks of 64 KB and these still fit the 160 KB. Enough for the
// mixture-of-experts layers this is written for (DeepSeek-V3's has 256
// routed experts); the launcher refuses more by name.
constexpr int kMaxMaskedExperts = 1024;

// No tile holds rows of two experts: the contiguous segments are padded to
// whole tiles. expert_rows_in_block reads a tile's 128 indices as two
// wavefronts' worth.
static_assert(kGroupedRowAlignment % kBlockM == 0, "a row tile lies within one contiguous segment");
static_assert(kBlockM == 2 * mfma::kWaveLanes, "a row tile's indices are two loads per lane");

// The kernel's one argument: the experts' GEMM and their layout. In
// gemm, m is every row of A and D, b the experts' B stacked (experts x N
// rows), b_scales B's scales one expert after another.
struct GroupedKernelArgs {
  GemmArgs gemm;
  int experts = 1;
  const int* m_indices = nullptr;      // contiguous: the expert of each row, -1 for padding
  const int* masked_counts = nullptr;  // masked: valid rows per expert; nullptr: all `capacity`
  int64_t capacity = 0;                // masked: rows each expert owns
  int64_t m_tiles = 0;                 // contiguous: M / 128 row tiles
  int64_t n_tiles = 0;                 // columns of tiles of each expert's D
  // The grid's size, gridDim.x, as the launcher chose it. Read from here,
  // not from gridDim.x: that is computed from the dispatch packet's grid and
  // workgroup sizes, and the compiler then kept the workgroup size in a
  // scalar register across the unit loop, for block_amax_to_global's
  // blockDim.x after it, one too many for the masked block-scaled kernels on
  // gfx950 (one scalar register spilled).
  int64_t blocks = 0;
};

// The kernel's argument, read afresh from the kernel-argument segment, which
// begins with it (the AMDGPU ABI: the explicit arguments first, from offset
// 0, in order; the hidden ones, the grid's size and the like, after them).
//
// Why not simply use the argument (step 09's finding): with every unit in
// one loop, the compiler keeps all of it in scalar registers from the
// kernel's start to its end and hoists out of the loop whatever it computes
// from it, which spilled scalar registers on both architectures. The empty
// asm statement gives the offset, 0, a value the compiler cannot know, so
// each call reads the argument again: a few scalar loads per unit, from the
// scalar cache, and nothing derived from the argument lives longer than the
// unit that uses it.
__device__ inline const GroupedKernelArgs& kernel_arguments() {
  int64_t offset = 0;
  __asm__ volatile("" : "+s"(offset));
  // A C-style cast: from the constant address space to a generic pointer
  // (the compiler still reads through it with scalar loads).
  const char* segment = (const char*)__builtin_amdgcn_kernarg_segment_ptr();
  return *reinterpret_cast<const GroupedKernelArgs*>(segment + offset);
}

// `value`, which every lane of the wavefront holds, in a scalar register:
// the first active lane's copy (v_readfirstlane), which the compiler then
// knows to be the same for the whole wavefront. Branches on it are uniform,
// and addresses computed from it stay in scalar registers.
template <typename Int>
__device__ inline Int wave_uniform(Int value) {
  return __builtin_amdgcn_readfirstlane(value);
}

// Where expert `expert`'s scales of B begin. B's scales are one plain layout
// per expert, one after another (common/api/grouped.h): per tensor one float
// each, per row N each, 128 x 128 ceil(N / 128) x ceil(K / 128) each. A host
// b_scale (no pointer) is every expert's.
__device__ inline const float* expert_b_scales(const GemmArgs& all, int expert) {
  if (all.b_scales == nullptr) return nullptr;
  int64_t per_expert = 1;
  if (all.b_scale_granularity == ScaleGranularity::kPerRow) {
    per_expert = all.n;
  } else if (all.b_scale_granularity == ScaleGranularity::kBlock128x128) {
    per_expert = ((all.n + kQuantGroupSize - 1) / kQuantGroupSize) * ((all.k + kQuantGroupSize - 1) / kQuantGroupSize);
  }
  return all.b_scales + expert * per_expert;
}

// The GEMM one tile of expert `expert` runs: the grouped GEMM's arguments
// with B and its scales the expert's, and M cut at `rows_end`, the first row
// of A and D past the expert's valid rows. Step 09's mainloop and epilogue
// then load zeros for the rows past it, leave them out of the amax and never
// store them, as they do for rows past M.
__device__ inline GemmArgs expert_gemm(const GemmArgs& all, int expert, int64_t rows_end) {
  GemmArgs gemm = all;
  gemm.m = rows_end;
  gemm.b = all.b + int64_t{expert} * all.n * all.ldb;
  gemm.b_scales = expert_b_scales(all, expert);
  return gemm;
}

// One unit: the 128 x 128 tile of `gemm` (an expert's view, expert_gemm)
// whose first element is (block_row, block_col), over all of K, then step
// 07's epilogue. Step 09's run_unit with one slice: no workspace, no
// counter. Returns the largest |y| this thread stored (0 without d_amax), for
// the block's amax. kBlockScales: A has 1 x 128 or B has 128 x 128 scales,
// folded in per K group of 128. Every thread of the block must call it (it
// has barriers). Inlined by force, as epilogue_tile: a call would take the
// arguments and the sums by address, in scratch memory.
template <Fp8Format kFormatA, Fp8Format kFormatB, bool kBlockScales>
__device__ inline __attribute__((always_inline)) float run_tile(const GemmArgs& gemm, int64_t block_row,
                                                                int64_t block_col) {
  const WaveOrigin wave = wave_origin();
  const int64_t row0 = block_row + wave.row;  // this wavefront's sub-tile of D
  const int64_t col0 = block_col + wave.col;
  const int64_t k_tiles = (gemm.k + kBlockK - 1) / kBlockK;
  const int64_t k_groups = (gemm.k + kQuantGroupSize - 1) / kQuantGroupSize;

  // The tile's own sums, from zero: nothing is carried from the block's
  // previous unit.
  WaveAccumulators acc;  // the sum over K, or (block scales) over this K group
  auto zero = [](WaveAccumulators& a) {
#pragma unroll
    for (int i = 0; i < kTilesM; ++i) {
#pragma unroll
      for (int j = 0; j < kTilesN; ++j) a[i][j] = Accumulator{0.0f, 0.0f, 0.0f, 0.0f};
    }
  };
  zero(acc);
  WaveAccumulators total;  // block scales: the scaled sum of the finished K groups
  if constexpr (kBlockScales) {
    zero(total);
    float factor[kTilesM][Mfma::kAccumulators];
    load_group_scales(factor, gemm, row0, block_col, 0);
    multiply_block_tile<kFormatA, kFormatB>(gemm, block_row, block_col, acc, [&](int64_t t) {
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
      if (next < k_groups) load_group_scales(factor, gemm, row0, block_col, next);
    });
  } else {
    multiply_block_tile<kFormatA, kFormatB>(gemm, block_row, block_col, acc, [](int64_t) {});
  }
  WaveAccumulators& sum = kBlockScales ? total : acc;
  // The epilogue, in place on the finished sums (row numbers as 32-bit ints: see sub_tile_row).
  return epilogue_tile(sum, gemm, static_cast<int>(row0), col0);
}

// Masked layout: each expert's valid rows, its count clamped into
// [0, capacity] (a count outside it would make the kernel write another
// expert's rows, or past D), into `valid_rows`, for the whole block. Without
// counts (a plain GEMM), every expert's capacity. Every thread must call it
// (it ends on the barrier that publishes the counts).
__device__ inline void masked_valid_rows(int* valid_rows, const GroupedKernelArgs& launch) {
  for (int g = static_cast<int>(threadIdx.x); g < launch.experts; g += kThreads) {
    const int64_t count = launch.masked_counts != nullptr ? launch.masked_counts[g] : launch.capacity;
    valid_rows[g] = static_cast<int>(count < 0 ? 0 : count < launch.capacity ? count : launch.capacity);
  }
  __syncthreads();
}

// Contiguous layout: how many of the 128 rows from block_row on hold
// `expert`'s rows, counted up to the first row m_indices gives to anyone
// else (in a valid layout, the segment's padding). Every wavefront reads all
// 128 indices, two per lane, and finds the first other one with a ballot, so
// the answer lands in a scalar register of every wavefront without LDS or a
// barrier. A broken layout (rows of the expert after padding) loses those
// rows; it never gains rows that are not the expert's.
__device__ inline int expert_rows_in_block(const int* m_indices, int64_t block_row, int expert) {
  const int lane = static_cast<int>(threadIdx.x) % mfma::kWaveLanes;
  const uint64_t others_first = __builtin_amdgcn_ballot_w64(m_indices[block_row + lane] != expert);
  const uint64_t others_second = __builtin_amdgcn_ballot_w64(m_indices[block_row + mfma::kWaveLanes + lane] != expert);
  if (others_first != 0) return __builtin_ctzll(others_first);
  if (others_second != 0) return mfma::kWaveLanes + __builtin_ctzll(others_second);
  return kBlockM;
}

// The persistent loop of one block, masked layout: the block's units are
// numbers blockIdx.x, + blocks, + 2 blocks, ... below the tile count
// of the clamped counts, each mapped to (expert, row tile, column tile) by
// masked_tile. The trip count is the same for every thread of the block (the
// count comes from LDS, made uniform), so every thread meets every barrier.
// Returns the largest |y| this thread stored.
template <Fp8Format kFormatA, Fp8Format kFormatB, bool kBlockScales>
__device__ inline float masked_units() {
  __shared__ int valid_rows[kMaxMaskedExperts];
  masked_valid_rows(valid_rows, kernel_arguments());
  const int64_t blocks = kernel_arguments().blocks;
  const int64_t block = blockIdx.x;
  const int64_t tiles =
      wave_uniform(masked_tile_count(valid_rows, kernel_arguments().experts, kBlockM, kernel_arguments().n_tiles));
  const int64_t my_units = persistent_tile_count(tiles, blocks, block);
  float thread_amax = 0.0f;  // over every unit this block stored
  for (int64_t i = 0; i < my_units; ++i) {
    const GroupedKernelArgs& launch = kernel_arguments();  // this unit's reading
    const GroupedTile tile = masked_tile(persistent_tile_number(blocks, block, i), valid_rows, launch.experts, kBlockM,
                                         launch.n_tiles, kGroupRows);
    const int expert = wave_uniform(tile.expert);
    const int64_t first_row = expert * launch.capacity;  // the expert's first row of A and D
    const int64_t block_row = first_row + wave_uniform(tile.m_block) * kBlockM;
    const int64_t block_col = wave_uniform(tile.n_block) * kBlockN;
    const GemmArgs gemm = expert_gemm(launch.gemm, expert, first_row + wave_uniform(valid_rows[expert]));
    thread_amax = fmaxf(thread_amax, run_tile<kFormatA, kFormatB, kBlockScales>(gemm, block_row, block_col));
  }
  return thread_amax;
}

// The persistent loop of one block, contiguous layout: units blockIdx.x,
// + blocks, ... of the (M / 128) x n_tiles tiles in grouped order, each
// tile's expert read from its first row. A block of padding is skipped
// (uniform over the block: every wavefront reads the same index), so every
// thread still meets the same barriers. Padding tiles are numbered with the
// others: a block that draws one moves on to its next unit at once.
// Returns the largest |y| this thread stored.
template <Fp8Format kFormatA, Fp8Format kFormatB, bool kBlockScales>
__device__ inline float contiguous_units() {
  const int64_t blocks = kernel_arguments().blocks;
  const int64_t block = blockIdx.x;
  const int64_t my_units =
      persistent_tile_count(kernel_arguments().m_tiles * kernel_arguments().n_tiles, blocks, block);
  // Groups no taller than an expert's mean rows of tiles: the Hopper kernel's
  // rule (contiguous_group_rows), measured there, not on CDNA.
  const int64_t group_rows = contiguous_group_rows(kernel_arguments().m_tiles, kernel_arguments().experts, kGroupRows);
  float thread_amax = 0.0f;  // over every unit this block stored
  for (int64_t i = 0; i < my_units; ++i) {
    const GroupedKernelArgs& launch = kernel_arguments();  // this unit's reading
    const TileCoord coord =
        grouped_tile(persistent_tile_number(blocks, block, i), launch.m_tiles, launch.n_tiles, group_rows);
    const int expert = wave_uniform(contiguous_expert(launch.m_indices, coord.m_block, kBlockM));
    if (expert < 0 || expert >= launch.experts) continue;  // padding: nothing to compute or store
    const int64_t block_row = coord.m_block * kBlockM;
    const int rows = expert_rows_in_block(launch.m_indices, block_row, expert);  // >= 1: its first row is the expert's
    const GemmArgs gemm = expert_gemm(launch.gemm, expert, block_row + rows);
    thread_amax =
        fmaxf(thread_amax, run_tile<kFormatA, kFormatB, kBlockScales>(gemm, block_row, coord.n_block * kBlockN));
  }
  return thread_amax;
}

// Exactly 256 threads, so that the compiler may give each lane up to 512
// registers (VGPRs and accumulation VGPRs): the block-scaled kernels hold two
// sets of 64 accumulators. The argument is read through kernel_arguments().
template <GroupedLayout kLayout, Fp8Format kFormatA, Fp8Format kFormatB, bool kBlockScales>
__global__ __attribute__((amdgpu_flat_work_group_size(kThreads, kThreads))) void grouped_moe_cdna_kernel(
    [[maybe_unused]] GroupedKernelArgs launch) {
  if constexpr (formats_native_here<kFormatA, kFormatB>()) {
    __shared__ float amax_scratch[kWaves];
    float thread_amax;
    if constexpr (kLayout == GroupedLayout::kMasked) {
      thread_amax = masked_units<kFormatA, kFormatB, kBlockScales>();
    } else {
      thread_amax = contiguous_units<kFormatA, kFormatB, kBlockScales>();
    }
    // d_amax is given only with FP8 D (validate_gemm_args); the test is
    // uniform over the block, as the barrier inside requires. Once per block:
    // a block that stored nothing folds in a 0, which changes nothing.
    float* const d_amax = kernel_arguments().gemm.d_amax;
    if (d_amax != nullptr) block_amax_to_global(thread_amax, amax_scratch, d_amax);
  }
}

// Launches one instantiation with as many blocks as run at once, and no more
// than `max_units`: `compute_units` times the blocks of this kernel that fit
// on a CU (its LDS and registers, as the runtime counts them).
template <GroupedLayout kLayout, Fp8Format kFormatA, Fp8Format kFormatB, bool kBlockScales>
Status launch_grouped_kernel(GroupedKernelArgs launch, int64_t max_units, int compute_units) {
  int blocks_per_cu = 1;  // the device-only build parses this launcher but never runs it
#if !defined(FP8GEMM_HIP_DEVICE_ONLY)
  if (hipOccupancyMaxActiveBlocksPerMultiprocessor(
          &blocks_per_cu,
          reinterpret_cast<const void*>(&grouped_moe_cdna_kernel<kLayout, kFormatA, kFormatB, kBlockScales>), kThreads,
          0) != hipSuccess) {
    (void)hipGetLastError();
    return Status::error(StatusCode::kRuntimeError, "cannot ask the runtime how many blocks fit on a CU");
  }
  if (blocks_per_cu < 1) blocks_per_cu = 1;
#endif
  const int64_t resident = int64_t{compute_units} * blocks_per_cu;
  launch.blocks = max_units < resident ? max_units : resident;
  grouped_moe_cdna_kernel<kLayout, kFormatA, kFormatB, kBlockScales>
      <<<dim3(static_cast<unsigned>(launch.blocks)), dim3(kThreads), 0, launch.gemm.stream>>>(launch);
  return status_from_launch();
}

// The grouped GEMM, on arguments that passed validate_grouped_args (and,
// through run_grouped_step, this step's constraints on args.gemm).
Status launch_grouped_moe_cdna(const GroupedGemmArgs& args) {
  dim3 tiles_grid;
  // Formats of this GPU's MFMA; the grid of 128 x 128 tiles of all M rows
  // (whose M <= 65535 x 128 keeps row numbers in 32 bits: see sub_tile_row).
  Status status = prepare_cdna_launch(args.gemm, &tiles_grid);
  if (!status.ok()) return status;
  GroupedKernelArgs launch;
  launch.gemm = args.gemm;
  launch.experts = args.experts;
  launch.m_indices = args.m_indices;
  launch.masked_counts = args.masked_counts;
  launch.capacity = args.capacity;
  launch.m_tiles = tiles_grid.y;
  launch.n_tiles = tiles_grid.x;
  // The units there can be: contiguous, every tile of M, padding included
  // (the kernel skips those); masked, every expert full (the kernel counts
  // the tiles of the actual counts, which the host does not know).
  int64_t max_units = launch.m_tiles * launch.n_tiles;
  if (args.layout == GroupedLayout::kMasked) {
    if (args.experts > kMaxMaskedExperts) {
      return Status::error(StatusCode::kNotSupported,
                           "the masked layout takes at most " + std::to_string(kMaxMaskedExperts) +
                               " experts (their counts are held in LDS), got " + std::to_string(args.experts));
    }
    max_units = int64_t{args.experts} * expert_row_tiles(args.capacity, kBlockM) * launch.n_tiles;
  }
  if (max_units < 1) max_units = 1;
  int compute_units = 1;  // the device-only build parses this launcher but never runs it
#if !defined(FP8GEMM_HIP_DEVICE_ONLY)
  int device = 0;
  if (hipGetDevice(&device) != hipSuccess ||
      hipDeviceGetAttribute(&compute_units, hipDeviceAttributeMultiprocessorCount, device) != hipSuccess ||
      compute_units < 1) {
    (void)hipGetLastError();
    return Status::error(StatusCode::kRuntimeError, "cannot count the GPU's compute units");
  }
  // The kernel folds each block's amax into *d_amax with an atomic max.
  if (args.gemm.d_amax != nullptr &&
      hipMemsetAsync(args.gemm.d_amax, 0, sizeof(float), args.gemm.stream) != hipSuccess) {
    (void)hipGetLastError();  // clear it: the error is reported here
    return Status::error(StatusCode::kRuntimeError, "cannot clear d_amax");
  }
#endif
  const bool block_scales =
      scales_change_along_k(args.gemm.a_scale_granularity) || scales_change_along_k(args.gemm.b_scale_granularity);
  const bool masked = args.layout == GroupedLayout::kMasked;
  return dispatch_fp8_formats(args.gemm.a_format, args.gemm.b_format, [&](auto format_a, auto format_b) {
    constexpr Fp8Format kA = format_a.value;
    constexpr Fp8Format kB = format_b.value;
    // Only same-family pairs are instantiated; prepare_cdna_launch rejects the others.
    if constexpr (fp8_is_fnuz(kA) == fp8_is_fnuz(kB)) {
      constexpr GroupedLayout kMasked = GroupedLayout::kMasked;
      constexpr GroupedLayout kContiguous = GroupedLayout::kContiguous;
      if (masked && block_scales) return launch_grouped_kernel<kMasked, kA, kB, true>(launch, max_units, compute_units);
      if (masked) return launch_grouped_kernel<kMasked, kA, kB, false>(launch, max_units, compute_units);
      if (block_scales) return launch_grouped_kernel<kContiguous, kA, kB, true>(launch, max_units, compute_units);
      return launch_grouped_kernel<kContiguous, kA, kB, false>(launch, max_units, compute_units);
    } else {
      return Status::error(StatusCode::kNotSupported, "A and B must both be FNUZ (gfx942) or both OCP (gfx950)");
    }
  });
}

// A plain GEMM: the masked layout with one expert of M rows, all valid (no
// counts), which walks step 09's tiles in step 09's order, without split-K.
Status launch_plain_cdna(const GemmArgs& args) {
  GroupedGemmArgs grouped;
  grouped.layout = GroupedLayout::kMasked;
  grouped.experts = 1;
  grouped.gemm = args;
  grouped.capacity = args.m;
  grouped.masked_counts = nullptr;
  grouped.check_on_host = false;
  return launch_grouped_moe_cdna(grouped);
}

constexpr uint32_t bit(ScaleGranularity g) { return 1u << static_cast<int>(g); }

// What the step accepts: step 09's (CDNA), without split-K. A grouped GEMM
// takes the same of its args.gemm, with B's scales per expert.
constexpr StepConstraints constraints() {
  StepConstraints c{/*m_multiple=*/1, /*n_multiple=*/1, /*k_multiple=*/16, /*operand_alignment_bytes=*/16};
  c.outputs = (1u << kNumOutputTypes) - 1;
  c.a_scales = bit(ScaleGranularity::kPerTensor) | bit(ScaleGranularity::kPerRow) | bit(ScaleGranularity::kGroup1x128);
  c.b_scales =
      bit(ScaleGranularity::kPerTensor) | bit(ScaleGranularity::kPerRow) | bit(ScaleGranularity::kBlock128x128);
  c.scale_pointers = true;
  c.epilogue = kEpilogueBias | kEpilogueGeluTanh | kEpilogueGeluErf;
  return c;
}

}  // namespace
}  // namespace fp8gemm

// This folder's step on AMD GPUs (on NVIDIA ones, step_sm90a.cu registers the
// Hopper kernel under the same number and name), with its grouped GEMM. The
// sums are FP32 throughout.
FP8GEMM_REGISTER_STEP(
    "Grouped MoE (CDNA): the experts' tiles, contiguous or masked, walked by persistent blocks in one launch",
    fp8gemm::launch_plain_cdna, fp8gemm::constraints(), fp8gemm::Accumulation::kFp32,
    fp8gemm::StepOptions{/*required_compute_capability=*/0, /*extra_must_run=*/{}, /*describe_launch=*/nullptr,
                         /*launch_grouped=*/fp8gemm::launch_grouped_moe_cdna});
