/// @file amax.h
/// @brief The amax of an FP8 output (max |y| before quantization), reduced in
///        a CDNA kernel: a reduction over the 64 lanes of a wavefront, then
///        one atomic per block. The CUDA counterpart is common/device/amax.cuh.
#pragma once

#include <cstdint>

#include "common/cdna/mfma_layout.h"
#include "common/device/kernel.h"

namespace fp8gemm {
namespace cdna {

/// The largest of `value` over the 64 lanes of the wavefront, in every lane:
/// a butterfly of ds_bpermute (each lane reads the lane `offset` away),
/// 32, 16, ..., 1 lanes apart.
__device__ inline float wave_max(float value) {
  const int lane = static_cast<int>(threadIdx.x) % mfma::kWaveLanes;
#pragma unroll
  for (int offset = mfma::kWaveLanes / 2; offset > 0; offset /= 2) {
    const int other = __builtin_amdgcn_ds_bpermute((lane ^ offset) * 4, static_cast<int>(float_bits(value)));
    value = fmaxf(value, float_from_bits(static_cast<uint32_t>(other)));
  }
  return value;
}

/// Folds `thread_amax` (>= 0) of every thread of the block into *d_amax with
/// one atomic per block. Every thread of the block must call it (it has a
/// barrier); `scratch` is LDS for one float per wavefront. *d_amax must hold 0
/// (or a smaller amax) before the kernel: the launcher clears it. Non-negative
/// floats order like their bits as signed integers, so an integer atomic max
/// is a float max.
__device__ inline void block_amax_to_global(float thread_amax, float* scratch, float* d_amax) {
  const int wave = static_cast<int>(threadIdx.x) / mfma::kWaveLanes;
  const int waves = static_cast<int>(blockDim.x) / mfma::kWaveLanes;
  const float wave_amax = wave_max(thread_amax);
  if (threadIdx.x % mfma::kWaveLanes == 0) scratch[wave] = wave_amax;
  __syncthreads();
  if (threadIdx.x == 0) {
    float block_amax = 0.0f;
    for (int w = 0; w < waves; ++w) block_amax = fmaxf(block_amax, scratch[w]);
    __hip_atomic_fetch_max(reinterpret_cast<int*>(d_amax), static_cast<int>(float_bits(block_amax)), __ATOMIC_RELAXED,
                           __HIP_MEMORY_SCOPE_AGENT);
  }
}

}  // namespace cdna
}  // namespace fp8gemm
