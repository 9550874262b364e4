// Step 05 (AMD) — matrix cores: FP8 MFMA on CDNA3 (gfx942) and CDNA4 (gfx950).
//
// D[m,n] = a_scale * b_scale * sum_k A[m,k] * B[n,k]
//
// A block computes a 128 x 128 tile of D with four wavefronts; each wavefront
// owns a 64 x 64 sub-tile, 4 x 4 MFMA tiles of 16 x 16, whose FP32 sums stay
// in the MFMA accumulators for the whole K loop. A and B reach the matrix cores
// in three hops: global memory -> registers (16-byte loads) -> LDS (two
// buffers) -> registers in the lane layout the instruction wants
// (common/cdna/mfma_layout.h). CDNA has no cp.async (its direct-to-LDS loads are
// 4 bytes per lane on gfx942), so the next K tile is loaded into registers
// before this tile's MFMAs are issued and written to the other LDS buffer
// after them: the loads are in flight while the matrix cores work.
//
// That mainloop lives in common/cdna/block_tile.h (the K loop,
// multiply_block_tile, and the pieces it is made of: the LDS swizzle, the
// register staging, load_fragment, the MFMA call), because step 07's fused
// epilogue runs the same one; this file is the kernel around it: which tile a
// block computes, the mainloop's call, the store, the launcher.
//
//   gfx942 (CDNA3): v_mfma_f32_16x16x32_{fp8,bf8}_{fp8,bf8}; FNUZ formats only.
//   gfx950 (CDNA4): v_mfma_f32_16x16x128_f8f6f4, CBSZ/BLGP = 0 (e4m3) or
//                   1 (e5m2); OCP formats only. Reached through the scaled
//                   builtin with both E8M0 scales 127 (2^0 = 1.0), which
//                   clang 22 emits as v_mfma_scale_f32_16x16x128_f8f6f4.
//
// Constraints (kNotSupported from the registry or the launcher):
//   K % 16 == 0 and rows of A, B (and D: the registry's rule) 16-byte aligned,
//   so every 16-byte load is wholly inside or wholly outside the matrix;
//   A and B both FNUZ on gfx942, both OCP on gfx950. M and N are free: rows
//   past the edge load as zeros and their results are not stored.
//
// Compiled for gfx942 and gfx950 and checked in the assembly (MFMA present, no
// scratch, LDS within limits); the lane layouts are tested on the CPU by
// simulating the wavefront. Not yet run on AMD hardware.
#include "common/api/registry.h"
#include "common/cdna/block_tile.h"
#include "common/device/kernel.h"

namespace fp8gemm {
namespace {

using namespace cdna;

// Epilogue: per-tensor scales, then BF16 or FP32 (kType is a template argument
// so that the type test is not repeated for each of the 64 values). Lanes 16
// apart hold rows 4 apart; the 16 lanes of a row write 16 consecutive columns.
template <OutputType kType>
__device__ inline void store_tile(const GemmArgs& args, const Accumulator (&acc)[kTilesM][kTilesN], int64_t row0,
                                  int64_t col0) {
  const int lane = static_cast<int>(threadIdx.x) % mfma::kWaveLanes;
  const float scale = args.a_scale * args.b_scale;
#pragma unroll
  for (int i = 0; i < kTilesM; ++i) {
#pragma unroll
    for (int j = 0; j < kTilesN; ++j) {
#pragma unroll
      for (int r = 0; r < Mfma::kAccumulators; ++r) {
        const mfma::MatrixIndex e = Mfma::d_element_of(lane, r);
        const int64_t row = row0 + 16 * i + e.row;
        const int64_t col = col0 + 16 * j + e.col;
        if (row < args.m && col < args.n) store_output(args.d, row * args.ldd + col, kType, acc[i][j][r] * scale);
      }
    }
  }
}

template <Fp8Format kFormatA, Fp8Format kFormatB>
__device__ inline void gemm_block(const GemmArgs& args) {
  const int64_t block_row = static_cast<int64_t>(blockIdx.y) * kBlockM;
  const int64_t block_col = static_cast<int64_t>(blockIdx.x) * kBlockN;
  WaveAccumulators acc;
#pragma unroll
  for (int i = 0; i < kTilesM; ++i) {
#pragma unroll
    for (int j = 0; j < kTilesN; ++j) acc[i][j] = Accumulator{0.0f, 0.0f, 0.0f, 0.0f};
  }
  // All of K into acc; nothing to do between K tiles.
  multiply_block_tile<kFormatA, kFormatB>(args, block_row, block_col, acc, [](int64_t) {});

  const WaveOrigin wave = wave_origin();
  if (args.d_type == OutputType::kBF16) {
    store_tile<OutputType::kBF16>(args, acc, block_row + wave.row, block_col + wave.col);
  } else {
    store_tile<OutputType::kFP32>(args, acc, block_row + wave.row, block_col + wave.col);
  }
}

// Exactly 256 threads: the compiler may then give each lane up to 512
// registers (256 VGPRs + 256 accumulation VGPRs) instead of the 128 it would
// budget for the default of 1024-thread blocks.
template <Fp8Format kFormatA, Fp8Format kFormatB>
__global__ __attribute__((amdgpu_flat_work_group_size(kThreads, kThreads))) void matrix_cores_cdna_kernel(
    GemmArgs args) {
  if constexpr (formats_native_here<kFormatA, kFormatB>()) gemm_block<kFormatA, kFormatB>(args);
}

Status launch_matrix_cores_cdna(const GemmArgs& args) {
  dim3 grid;
  const Status status = prepare_cdna_launch(args, &grid);  // formats of this GPU's MFMA, grid
  if (!status.ok()) return status;
  return dispatch_fp8_formats(args.a_format, args.b_format, [&](auto format_a, auto format_b) {
    // Only same-family pairs are instantiated; prepare_cdna_launch rejects the others.
    if constexpr (fp8_is_fnuz(format_a.value) == fp8_is_fnuz(format_b.value)) {
      matrix_cores_cdna_kernel<format_a.value, format_b.value><<<grid, dim3(kThreads), 0, args.stream>>>(args);
    }
    return status_from_launch();
  });
}

}  // namespace
}  // namespace fp8gemm

// This folder's step on AMD GPUs (on NVIDIA ones, step_sm90a.cu registers the
// wgmma kernel under the same number and name). MFMA's accumulation is treated
// as FP32 here; the chapter (CDNA.md) says what is and is not known about it.
FP8GEMM_REGISTER_STEP("matrix cores: FP8 MFMA (gfx942 FNUZ, gfx950 OCP), 4 wavefronts of 64x64, LDS double buffer",
                      fp8gemm::launch_matrix_cores_cdna, (fp8gemm::StepConstraints{1, 1, 16, 16}),
                      fp8gemm::Accumulation::kFp32);
