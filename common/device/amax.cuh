/// @file amax.cuh
/// @brief The amax of an FP8 output (max |y| before quantization), reduced
///        in the kernel: a warp reduction, then one atomic per block (CUDA).
#pragma once

#include <cstdint>

#include "common/device/kernel.h"

namespace fp8gemm {

/// The largest of `value` over the 32 lanes of the warp, in every lane.
__device__ __forceinline__ float warp_max(float value) {
#pragma unroll
  for (int offset = kWarpSize / 2; offset > 0; offset /= 2) {
    value = fmaxf(value, __shfl_xor_sync(0xFFFFFFFFu, value, offset));
  }
  return value;
}

/// Waits at named barrier `id` (1..15; 0 is __syncthreads) for `threads`
/// threads, a multiple of 32: a barrier for part of a block, such as the
/// consumer warps of a warp-specialized kernel.
__device__ __forceinline__ void named_barrier_sync(int id, int threads) {
  asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(threads) : "memory");
}

/// named_barrier_sync that also counts: returns, in every thread, how many of
/// the `threads` threads passed `predicate` true (bar.red.popc). Step 12's
/// warpgroups count their valid rows of D with it.
__device__ __forceinline__ int named_barrier_count(int id, int threads, bool predicate) {
  int count;
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.u32 p, %3, 0;\n"
      "bar.red.popc.u32 %0, %1, %2, p;\n"
      "}\n"
      : "=r"(count)
      : "r"(id), "r"(threads), "r"(static_cast<unsigned>(predicate))
      : "memory");
  return count;
}

/// Arrives at named barrier `id` for `threads` threads without waiting: the
/// other side of a named_barrier_sync, for one group of warps to tell another
/// that it has done something (step 10's consumers taking turns).
__device__ __forceinline__ void named_barrier_arrive(int id, int threads) {
  asm volatile("bar.arrive %0, %1;" ::"r"(id), "r"(threads) : "memory");
}

/// Folds `thread_amax` (>= 0) of every thread of `warps` warps into *d_amax
/// with one atomic per block. Every thread of those warps must call it;
/// `scratch` is shared memory for `warps` floats; `barrier_id` a named
/// barrier no one else uses. *d_amax must hold 0 (or a smaller amax) before
/// the kernel: the launcher clears it. Non-negative floats order like their
/// bits as signed integers, so an integer atomicMax is a float max.
__device__ __forceinline__ void block_amax_to_global(float thread_amax, float* scratch, int warps, int barrier_id,
                                                     float* d_amax) {
  const int warp = static_cast<int>(threadIdx.x) / kWarpSize;  // the calling warps are warps 0..warps-1
  const int lane = static_cast<int>(threadIdx.x) % kWarpSize;
  const float warp_amax = warp_max(thread_amax);
  if (lane == 0) scratch[warp] = warp_amax;
  named_barrier_sync(barrier_id, warps * kWarpSize);
  if (threadIdx.x == 0) {
    float block_amax = 0.0f;
    for (int w = 0; w < warps; ++w) block_amax = fmaxf(block_amax, scratch[w]);
    atomicMax(reinterpret_cast<int*>(d_amax), __float_as_int(block_amax));
  }
}

}  // namespace fp8gemm
