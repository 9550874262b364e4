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
// (gelu_portable.h: epilogue.h's formulas with tanh and erf evaluated without
// ROCm's math library, which this build does not link), store_epilogue_output
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

// The activation, as a call: the epilogue below is unrolled 64 times per
// output type, and GELU inlined there would put both forms' polynomials and
// exponentials into every copy. The Hopper step's first version did that and
// outgrew the instruction cache (activation_call in fused_epilogue_sm90a.cuh).
__device__ __attribute__((noinline)) float activation_call(float z, Activation activation) {
  return apply_activation_portable(z, activation);
}

// The epilogue of this wavefront's 64 x 64 sub-tile, whose first element is
// (row0, col0) of D: sum times the scales constant along K, plus the bias,
// through the activation, stored as kOut (a template argument, so that the
// type test is made once, not 64 times). Returns the largest |y| this lane
// stored, for FP8 D's amax. Lanes 16 apart hold rows 4 apart; the 16 lanes of
// a row write 16 consecutive columns.
template <OutputType kOut>
__device__ inline float epilogue_tile(const WaveAccumulators& sum, const GemmArgs& args, int64_t row0, int64_t col0) {
  const int lane = static_cast<int>(threadIdx.x) % mfma::kWaveLanes;
  const ConstantScales a_scales = constant_scales(args.a_scale_granularity, args.a_scale, args.a_scales);
  const ConstantScales b_scales = constant_scales(args.b_scale_granularity, args.b_scale, args.b_scales);
  // This lane's column of each tile j: its scale and bias, read once, before
  // any store (the compiler cannot tell that D overlaps neither). Columns past
  // N read the last column's and store nothing.
  float col_scale[kTilesN];
  float bias[kTilesN];
#pragma unroll
  for (int j = 0; j < kTilesN; ++j) {
    const int64_t col = col0 + 16 * j + Mfma::d_element_of(lane, 0).col;
    const int64_t column = col < args.n ? col : args.n - 1;
    col_scale[j] = b_scales.of_row(column);
    bias[j] = args.bias != nullptr ? load_bias(args.bias, column, args.bias_type) : 0.0f;
  }
  float amax = 0.0f;
#pragma unroll
  for (int i = 0; i < kTilesM; ++i) {
#pragma unroll
    for (int r = 0; r < Mfma::kAccumulators; ++r) {
      const int64_t row = row0 + 16 * i + Mfma::d_element_of(lane, r).row;
      const float row_scale = a_scales.of_row(row < args.m ? row : args.m - 1);
#pragma unroll
      for (int j = 0; j < kTilesN; ++j) {
        const int64_t col = col0 + 16 * j + Mfma::d_element_of(lane, r).col;
        const float z = sum[i][j][r] * (row_scale * col_scale[j]) + bias[j];
        const float y = args.activation == Activation::kNone ? z : activation_call(z, args.activation);
        if (row < args.m && col < args.n) {
          store_epilogue_output(args.d, row * args.ldd + col, kOut, y, args.d_scale);
          amax = fmaxf(amax, fabsf(y));
        }
      }
    }
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
  auto epilogue = [&](const WaveAccumulators& sum) {
    switch (args.d_type) {
      case OutputType::kBF16: return epilogue_tile<OutputType::kBF16>(sum, args, row0, col0);
      case OutputType::kFP32: return epilogue_tile<OutputType::kFP32>(sum, args, row0, col0);
      case OutputType::kE4M3: return epilogue_tile<OutputType::kE4M3>(sum, args, row0, col0);
      default: return epilogue_tile<OutputType::kE5M2>(sum, args, row0, col0);
    }
  };

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
