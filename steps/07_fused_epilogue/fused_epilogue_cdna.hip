// Step 07 (AMD) — the fused epilogue on CDNA3 (gfx942) and CDNA4 (gfx950):
// scales at every granularity, bias, GELU, and an FP8 output with its amax,
// around the MFMA mainloop of step 05.
//
// D[m,n] = out( act( sum_k (A[m,k] s_A(m,k)) (B[n,k] s_B(n,k)) + bias[n] ) )
//
// NOT YET RUN ON AMD HARDWARE. There is none here: this file is compiled for
// gfx942 and gfx950 and its assembly checked (ctest isa/<arch>/07_fused_epilogue:
// no scratch, no spills, LDS within the limit, the MFMA present), nothing more.
// The arithmetic it shares with the Hopper kernel (fused_epilogue_sm90a.cuh)
// is tested there and on the CPU; this kernel's own results are untested.
//
// The mainloop is step 05's on CDNA (common/cdna/block_tile.h): a block of
// four wavefronts computes a 128 x 128 tile of D, each wavefront a 64 x 64
// sub-tile of 4 x 4 MFMA tiles, over K tiles of 64 (gfx942) or 128 (gfx950)
// staged through LDS. What is new is what happens to the numbers, as in the
// Hopper kernel:
//
//   1 x 128 scales of A and 128 x 128 scales of B (DeepSeek-V3's activations
//     and weights) change every 128 of K, so they cannot wait for the
//     epilogue. The MFMA has no reduced-precision accumulator to promote, as
//     Hopper's wgmma has: it accumulates straight into FP32 registers across
//     all of K, which is what this kernel does without block scales. With
//     them, the accumulators hold one K group's partial sum instead: they
//     start at zero, collect the group's 128 of K (two K tiles on gfx942, one
//     on gfx950), and are then folded into a second set of FP32 registers
//     with one FMA per accumulator and zeroed again:
//         total = fma(partial, s_A(row, kb) * s_B(n_block, kb), total)
//     This costs 64 more registers per lane and 64 FMAs per 128 of K, against
//     64 (gfx942) or 16 (gfx950) MFMAs per lane. Scaling the operands instead
//     would mean requantizing FP8 codes, and gfx950's own scaled MFMA takes
//     E8M0 scales, powers of two per 32 of K, not the API's FP32 scales.
//   Per-tensor scales (host floats, or one float in device memory) and
//     per-row scales are constant along K: applied once, in the epilogue.
//   The epilogue adds the bias (BF16 or FP32, one per column), applies GELU
//     (tanh or erf form) and writes D as BF16, FP32 or FP8 through
//     store_epilogue_output, reducing max |y| into d_amax (a 64-lane wavefront
//     reduction, then one atomic per block).
//
// FP8 D is OCP e4m3 / e5m2 on both GPUs, as the API defines it (OutputType):
// the codes are made by the software encoder (float_to_fp8, behind
// store_epilogue_output), which writes OCP codes on any GPU, so gfx942,
// whose MFMA reads only FNUZ inputs, still writes OCP outputs.
//
// The epilogue's arithmetic comes from common/: load_bias (epilogue.h), GELU
// (gelu_portable.h: epilogue.h's formulas without ROCm's math library, which
// this build does not link: the tanh form as z / (1 + e^(-2u)), as epilogue.h
// computes it, erf as polynomials and an exponential), store_epilogue_output
// (output.h), the scale layouts (operand_scales.h, over quantize.h).
//
// Constraints (kNotSupported from the registry or the launcher): step 05's
// (K % 16 == 0, rows 16-byte aligned, A and B both FNUZ on gfx942 and both
// OCP on gfx950), and for the scales the Hopper step's: A per tensor, per row
// or 1 x 128; B per tensor, per row or 128 x 128.
#include "common/api/registry.h"
#include "common/cdna/amax.h"
#include "common/cdna/block_tile.h"
#include "common/device/epilogue.h"
#include "common/device/gelu_portable.h"
#include "common/device/kernel.h"
#include "common/device/operand_scales.h"

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

// kBlockScales: A has 1 x 128 or B has 128 x 128 scales, folded in per K group.
template <Fp8Format kFormatA, Fp8Format kFormatB, bool kBlockScales>
__device__ inline void fused_epilogue_block(const GemmArgs& args) {
  __shared__ float amax_scratch[kWaves];
  const int64_t block_row = static_cast<int64_t>(blockIdx.y) * kBlockM;
  const int64_t block_col = static_cast<int64_t>(blockIdx.x) * kBlockN;
  const WaveOrigin wave = wave_origin();
  const int64_t row0 = block_row + wave.row;  // this wavefront's sub-tile of D
  const int64_t col0 = block_col + wave.col;

  WaveAccumulators acc;  // the sum over all of K, or (block scales) over this K group
  auto zero = [](WaveAccumulators& a) {
#pragma unroll
    for (int i = 0; i < kTilesM; ++i) {
#pragma unroll
      for (int j = 0; j < kTilesN; ++j) a[i][j] = Accumulator{0.0f, 0.0f, 0.0f, 0.0f};
    }
  };
  zero(acc);
  // The epilogue, in place on the finished sums (row numbers as 32-bit ints: see sub_tile_row).
  auto epilogue = [&](WaveAccumulators& sum) { return epilogue_tile(sum, args, static_cast<int>(row0), col0); };

  float amax;
  if constexpr (kBlockScales) {
    const int64_t k_tiles = (args.k + kBlockK - 1) / kBlockK;
    const int64_t groups = (args.k + kQuantGroupSize - 1) / kQuantGroupSize;
    WaveAccumulators total;  // the scaled sum of the finished K groups
    zero(total);
    float factor[kTilesM][Mfma::kAccumulators];
    load_group_scales(factor, args, row0, block_col, 0);
    multiply_block_tile<kFormatA, kFormatB>(args, block_row, block_col, acc, [&](int64_t t) {
      const bool group_ends = (t + 1) % kTilesPerScaleGroup == 0 || t + 1 == k_tiles;
      if (!group_ends) return;
        // total += partial * (s_A * s_B); accumulator r of tile (i, j) is in
        // row 16 i + d_element_of(lane, r).row, whose factor is factor[i][r].
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
      // The next group's scales: their loads are in flight during its MFMAs.
      const int64_t next = t / kTilesPerScaleGroup + 1;
      if (next < groups) load_group_scales(factor, args, row0, block_col, next);
    });
    amax = epilogue(total);
  } else {
    multiply_block_tile<kFormatA, kFormatB>(args, block_row, block_col, acc, [](int64_t) {});
    amax = epilogue(acc);
  }
  // d_amax is given only with FP8 D (validate_gemm_args); the test is uniform
  // over the block, as the barrier inside requires.
  if (args.d_amax != nullptr) block_amax_to_global(amax, amax_scratch, args.d_amax);
}

// Exactly 256 threads, so that the compiler may give each lane up to 512
// registers (VGPRs and accumulation VGPRs): the block-scaled kernels hold two
// sets of 64 accumulators.
template <Fp8Format kFormatA, Fp8Format kFormatB, bool kBlockScales>
__global__ __attribute__((amdgpu_flat_work_group_size(kThreads, kThreads))) void fused_epilogue_cdna_kernel(
    GemmArgs args) {
  if constexpr (formats_native_here<kFormatA, kFormatB>()) fused_epilogue_block<kFormatA, kFormatB, kBlockScales>(args);
}

Status launch_fused_epilogue_cdna(const GemmArgs& args) {
  dim3 grid;
  const Status status = prepare_cdna_launch(args, &grid);  // formats of this GPU's MFMA, grid
  if (!status.ok()) return status;
  const bool block_scales =
      scales_change_along_k(args.a_scale_granularity) || scales_change_along_k(args.b_scale_granularity);
#if !defined(FP8GEMM_HIP_DEVICE_ONLY)
  // The kernel folds each block's amax into *d_amax with an atomic max.
  if (args.d_amax != nullptr && hipMemsetAsync(args.d_amax, 0, sizeof(float), args.stream) != hipSuccess) {
    (void)hipGetLastError();  // clear it: the error is reported here
    return Status::error(StatusCode::kRuntimeError, "cannot clear d_amax");
  }
#endif
  return dispatch_fp8_formats(args.a_format, args.b_format, [&](auto format_a, auto format_b) {
    // Only same-family pairs are instantiated; prepare_cdna_launch rejects the others.
    if constexpr (fp8_is_fnuz(format_a.value) == fp8_is_fnuz(format_b.value)) {
      if (block_scales) {
        fused_epilogue_cdna_kernel<format_a.value, format_b.value, true>
            <<<grid, dim3(kThreads), 0, args.stream>>>(args);
      } else {
        fused_epilogue_cdna_kernel<format_a.value, format_b.value, false>
            <<<grid, dim3(kThreads), 0, args.stream>>>(args);
      }
    }
    return status_from_launch();
  });
}

constexpr uint32_t bit(ScaleGranularity g) { return 1u << static_cast<int>(g); }

// What the step accepts: step 05's shapes and formats (every FP8 format: the
// launcher keeps each GPU to its own family), then what step 07 adds, as on
// Hopper: every output, the scales DeepSeek-V3 and torch._scaled_mm use (per
// tensor also from device memory), bias and both GELUs.
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
// Hopper kernel under the same number and name). The sums are FP32 throughout:
// the MFMA's accumulation is treated as FP32 (steps/05_matrix_cores/CDNA.md),
// and block scales are folded in with FP32 FMAs.
FP8GEMM_REGISTER_STEP(
    "Fused epilogue (CDNA): 1x128 / 128x128 scales folded per 128 of K, bias, GELU, FP8 out with amax",
    fp8gemm::launch_fused_epilogue_cdna, fp8gemm::constraints(), fp8gemm::Accumulation::kFp32);
