/// @file split_k_gather.cuh
/// @brief Split-K's workspace form on Hopper (steps 08 and 09): a block's
///        partial sums of a tile into global memory, a count on the tile's
///        counter, and the last block's sum of every slice, in slice order.
#pragma once

#include <cstdint>

#include "common/device/amax.cuh"
#include "common/device/split_k.h"
#include "common/sm90/arch.h"

#if FP8GEMM_SM90A_PARSE
namespace fp8gemm {
namespace sm90 {

/// Called by every consumer thread (threads 0 .. kConsumerThreads - 1 of the
/// block) with its kAccumulators partial sums of the tile (this block's K
/// slice, in any layout that is the same in every block of the tile). Writes
/// them into the workspace (per tile and slice, value-major: value v of every
/// consumer thread together, so that a warp's stores are contiguous), makes
/// them visible on the whole GPU and counts the block in with one atomic on
/// counters[tile]. The block that arrives last adds every slice's partials,
/// its own included, in slice order (sum_slices_in_order: the result never
/// depends on which block came last) into `partial`, resets the counter for
/// the next launch, and returns true: it runs the epilogue. The others return
/// false. `last_block` is a flag in shared memory; `barrier` a named barrier
/// of the consumer threads.
template <int kAccumulators, int kConsumerThreads, int kMaxSlices>
__device__ __forceinline__ bool gather_in_workspace(float (&partial)[kAccumulators], float* workspace,
                                                    unsigned* counters, int64_t tile, int slices, int slice,
                                                    bool* last_block, int barrier) {
  const auto slice_sums = [&](int s) {
    return workspace + (tile * slices + s) * int64_t{kAccumulators} * kConsumerThreads;
  };
  float* mine = slice_sums(slice);
#pragma unroll
  for (int v = 0; v < kAccumulators; ++v) mine[v * kConsumerThreads + threadIdx.x] = partial[v];
  __threadfence();  // the partials are visible on the whole GPU before the count says they are there
  named_barrier_sync(barrier, kConsumerThreads);
  if (threadIdx.x == 0) *last_block = atomicAdd(&counters[tile], 1u) == static_cast<unsigned>(slices - 1);
  named_barrier_sync(barrier, kConsumerThreads);
  if (!*last_block) return false;
  __threadfence();  // and read after the count that said so
#pragma unroll
  for (int v = 0; v < kAccumulators; ++v) {
    partial[v] = sum_slices_in_order<kMaxSlices>(slices, [&](int s) {
      return slice_sums(s)[v * kConsumerThreads + threadIdx.x];
    });
  }
  if (threadIdx.x == 0) counters[tile] = 0;  // ready for the next launch, which starts after this one ends
  return true;
}

}  // namespace sm90
}  // namespace fp8gemm
#endif  // FP8GEMM_SM90A_PARSE
