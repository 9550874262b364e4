// Step 08 (AMD) — split-K on CDNA3 (gfx942) and CDNA4 (gfx950): step 07's
// MFMA kernel with each tile's K cut into slices, summed by blocks of their
// own, the partials added in a workspace in global memory.
//
// NOT YET RUN ON AMD HARDWARE. There is none here: this file is compiled for
// gfx942 and gfx950 and its assembly checked (ctest isa/<arch>/08_split_k:
// no scratch, no spills, LDS within the limit, the MFMA present), nothing more.
// What it shares with the Hopper kernel (split_k_sm90a.cuh) — the partition
// of K, k_slice, and the order the partials are added in,
// sum_slices_in_order (common/device/split_k.h) — is tested on the CPU and
// used by the Hopper kernel on the H200.
//
// CDNA has no thread-block clusters, and so no distributed shared memory:
// the blocks of a tile cannot read each other's partials where they are.
// This kernel uses the other form the chapter describes. Block (tile, s)
// sums its run of K blocks exactly as step 07's kernel sums all of them
// (block scales folded per 128 of K), writes its 64 partial sums per lane
// into a workspace (one 128 x 128 FP32 tile per tile and slice, each lane's
// values together), and counts itself in with one atomic on the tile's
// counter. The block that arrives last reads every slice's partials back
// from the workspace, adds them in slice order 0, 1, 2, ... (never in the
// order the slices finished: the result is the same bit for bit in every
// run), runs step 07's epilogue on the sums, and resets the counter for the
// next launch. The workspace and the counters belong to the launcher, which
// allocates them once and grows them when a GEMM needs more.
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
// Row numbers are 32-bit here: the launcher puts row tiles on grid.y, so
// M <= 65535 x 128 (prepare_cdna_launch). It allows more columns than 2^31, so
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

// The workspace of a split GEMM: for each tile and slice, the 64 partial sums
// of each of the block's 256 lanes, value-major (value v of every lane
// together), so that a wavefront's loads and stores of one value are
// contiguous.
constexpr int kSumsPerLane = kTilesM * kTilesN * Mfma::kAccumulators;  // 64
__device__ inline float* slice_partials(float* workspace, int64_t tile, int slices, int slice) {
  return workspace + (tile * slices + slice) * int64_t{kSumsPerLane} * kThreads;
}

// The block of (tile, slice): its run of K blocks, then, in the block that
// finishes its tile last, the sum of the slices in slice order and the
// epilogue. kBlockScales: A has 1 x 128 or B has 128 x 128 scales, folded in
// per K group of 128 (a slice is whole groups).
template <Fp8Format kFormatA, Fp8Format kFormatB, bool kBlockScales>
__device__ inline void split_k_block(const GemmArgs& args, int slices, float* workspace, unsigned* counters) {
  __shared__ float amax_scratch[kWaves];
  __shared__ bool last_block;
  const int64_t block_row = static_cast<int64_t>(blockIdx.y) * kBlockM;
  const int64_t block_col = static_cast<int64_t>(blockIdx.x) * kBlockN;
  const int64_t tile = static_cast<int64_t>(blockIdx.y) * gridDim.x + blockIdx.x;
  const int slice = static_cast<int>(blockIdx.z);
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
    // at agent scope) before thread 0 counts the block in; the count is an
    // acquire-release atomic, and the last block fences again (acquire)
    // before it reads the others' partials. This build has no HIP headers
    // (device code only), hence the compiler's own builtins for
    // __threadfence() and atomicAdd().
    __builtin_amdgcn_fence(__ATOMIC_RELEASE, "agent");
    __syncthreads();
    if (threadIdx.x == 0) {
      const unsigned arrived = __hip_atomic_fetch_add(&counters[tile], 1u, __ATOMIC_ACQ_REL, __HIP_MEMORY_SCOPE_AGENT);
      last_block = arrived == static_cast<unsigned>(slices - 1);
    }
    __syncthreads();
    if (!last_block) return;  // uniform over the block
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
    if (threadIdx.x == 0) {  // ready for the next launch (which starts after this kernel ends)
      __hip_atomic_store(&counters[tile], 0u, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
    }
  }
  // The epilogue, in place on the finished sums (row numbers as 32-bit ints: see sub_tile_row).
  const float amax = epilogue_tile(sum, args, static_cast<int>(row0), col0);
  // d_amax is given only with FP8 D (validate_gemm_args); the test is uniform
  // over the block, as the barrier inside requires.
  if (args.d_amax != nullptr) block_amax_to_global(amax, amax_scratch, args.d_amax);
}

// Exactly 256 threads, so that the compiler may give each lane up to 512
// registers (VGPRs and accumulation VGPRs): the block-scaled kernels hold two
// sets of 64 accumulators.
template <Fp8Format kFormatA, Fp8Format kFormatB, bool kBlockScales>
__global__ __attribute__((amdgpu_flat_work_group_size(kThreads, kThreads))) void split_k_cdna_kernel(
    GemmArgs args, int slices, float* workspace, unsigned* counters) {
  if constexpr (formats_native_here<kFormatA, kFormatB>()) {
    split_k_block<kFormatA, kFormatB, kBlockScales>(args, slices, workspace, counters);
  }
}

#if !defined(FP8GEMM_HIP_DEVICE_ONLY)
// The workspace and the tiles' counters, allocated on first use and grown
// when a GEMM needs more; the counters start at zero and every launch leaves
// them at zero. One per process, for the current device, not thread-safe.
Status split_k_workspace(size_t floats, size_t counters, float** workspace, unsigned** counter_array) {
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

Status launch_split_k_cdna(const GemmArgs& args) {
  dim3 grid;
  Status status = prepare_cdna_launch(args, &grid);  // formats of this GPU's MFMA, grid of tiles
  if (!status.ok()) return status;
  const int64_t tiles = int64_t{grid.x} * grid.y;
  const int64_t k_blocks = (args.k + kQuantGroupSize - 1) / kQuantGroupSize;
  int slices = args.split_k;
#if !defined(FP8GEMM_HIP_DEVICE_ONLY)
  if (slices == 0) {
    int device = 0, compute_units = 0;
    if (hipGetDevice(&device) != hipSuccess ||
        hipDeviceGetAttribute(&compute_units, hipDeviceAttributeMultiprocessorCount, device) != hipSuccess) {
      return Status::error(StatusCode::kRuntimeError, "cannot count the GPU's compute units");
    }
    slices = split_k_slices(tiles, k_blocks, compute_units, kMinKBlocksPerSlice, kMaxSlices);
  }
#endif
  if (slices < 1) slices = 1;
  if (slices > k_blocks) {
    return Status::error(StatusCode::kNotSupported, "split_k = " + std::to_string(slices) +
                                                        " is more slices than K has blocks of 128 (" +
                                                        std::to_string(k_blocks) + ")");
  }
  grid.z = static_cast<unsigned>(slices);
  float* workspace = nullptr;
  unsigned* counters = nullptr;
#if !defined(FP8GEMM_HIP_DEVICE_ONLY)
  if (slices > 1) {
    status = split_k_workspace(static_cast<size_t>(tiles * slices) * kSumsPerLane * kThreads,
                               static_cast<size_t>(tiles), &workspace, &counters);
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
      if (block_scales) {
        split_k_cdna_kernel<format_a.value, format_b.value, true>
            <<<grid, dim3(kThreads), 0, args.stream>>>(args, slices, workspace, counters);
      } else {
        split_k_cdna_kernel<format_a.value, format_b.value, false>
            <<<grid, dim3(kThreads), 0, args.stream>>>(args, slices, workspace, counters);
      }
    }
    return status_from_launch();
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
FP8GEMM_REGISTER_STEP("Split-K (CDNA): slices of K per tile, partials added in a workspace by the last block",
                      fp8gemm::launch_split_k_cdna, fp8gemm::constraints(), fp8gemm::Accumulation::kFp32);
