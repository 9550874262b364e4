/// @file split_k_gather.cuh
/// @brief Split-K's workspace form on Hopper (steps 08 to 12): a block's
///        partial sums of a tile into global memory, a count on the tile's
///        counter, and the last block's sum of every slice, in slice order.
#pragma once

#include <cstdint>

#include <cuda/atomic>

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
/// consumer thread together, so that a warp's stores are contiguous), and
/// counts the block in with one atomic on counters[tile] (release and acquire
/// at GPU scope, by thread 0 between two barriers of the consumers). The block
/// that arrives last adds every slice's partials, its own included, in slice
/// order (sum_slices_in_order: the result never depends on which block came
/// last) into `partial`, resets the counter for the next launch, and returns
/// true: it runs the epilogue. The others return false. `last_block` is a flag
/// in shared memory; `barrier` a named barrier of the consumer threads.
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
  // Every consumer thread's partials are stored before thread 0 counts the
  // block in: the barrier orders them before its atomic, whose release (at GPU
  // scope) makes them visible to whichever block reads the count after it; its
  // acquire does the same the other way for this block's reads, ordered after
  // it by the second barrier. One fence for the block instead of one per thread.
  named_barrier_sync(barrier, kConsumerThreads);
  if (threadIdx.x == 0) {
    cuda::atomic_ref<unsigned, cuda::thread_scope_device> count(counters[tile]);
    *last_block = count.fetch_add(1u, cuda::memory_order_acq_rel) == static_cast<unsigned>(slices - 1);
  }
  named_barrier_sync(barrier, kConsumerThreads);
  if (!*last_block) return false;
#pragma unroll
  for (int v = 0; v < kAccumulators; ++v) {
    partial[v] = sum_slices_in_order<kMaxSlices>(slices, [&](int s) {
      // The other blocks' partials, each read once: through the L2 only, not
      // kept in this SM's L1.
      return __ldcg(slice_sums(s) + v * kConsumerThreads + threadIdx.x);
    });
  }
  if (threadIdx.x == 0) counters[tile] = 0;  // ready for the next launch, which starts after this one ends
  return true;
}

}  // namespace sm90
}  // namespace fp8gemm
#endif  // FP8GEMM_SM90A_PARSE
