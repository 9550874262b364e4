/// @file cluster.cuh
/// @brief Thread-block clusters: the blocks of a cluster run at the same time
///        on neighbouring SMs, can wait for each other at a barrier, and can
///        read each other's shared memory (distributed shared memory).
#pragma once

#include <cstdint>

#include "common/sm90/arch.h"

#if FP8GEMM_SM90A_PARSE
namespace fp8gemm {
namespace sm90 {

/// This block's rank in its cluster (0 .. cluster size - 1).
__device__ __forceinline__ uint32_t cluster_block_rank() {
  uint32_t rank;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
  return rank;
}

/// Every thread of every block of the cluster waits here until all of them
/// (the threads that have not exited) have arrived. Release and acquire: the
/// shared-memory writes of any thread before it are visible to every thread
/// of the cluster after it.
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");
}

/// The address, in the cluster's shared-memory window, of the variable at
/// shared address `local` (shared_address()) in the shared memory of the
/// cluster's block `rank`.
__device__ __forceinline__ uint32_t cluster_shared_address(uint32_t local, uint32_t rank) {
  uint32_t remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(local), "r"(rank));
  return remote;
}

/// Reads a float from the cluster's shared-memory window (cluster_shared_address()).
__device__ __forceinline__ float load_cluster_shared(uint32_t address) {
  float value;
  asm volatile("ld.shared::cluster.f32 %0, [%1];" : "=f"(value) : "r"(address) : "memory");
  return value;
}

/// Arrives on the mbarrier at `address` in the cluster's shared-memory window
/// (cluster_shared_address()): this block's or another block's of the
/// cluster. The arrival releases at CTA scope (the instruction's default):
/// enough to order this thread's finished reads of its own block's shared
/// memory (a stage's wgmmas, waited for) before a write that the barrier's
/// waiter then starts. `.release.cluster` would put a GPU-wide memory barrier
/// (MEMBAR.ALL.GPU) before every arrival: step 11 ran 1.8x slower with it.
__device__ __forceinline__ void mbarrier_arrive_cluster(uint32_t address) {
  asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0];" ::"r"(address) : "memory");
}

}  // namespace sm90
}  // namespace fp8gemm
#endif  // FP8GEMM_SM90A_PARSE
