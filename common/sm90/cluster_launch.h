/// @file cluster_launch.h
/// @brief Host side of thread-block clusters (steps 08, 11 and 12): a launch
///        whose blocks are grouped into clusters along x, and how many such
///        clusters the GPU runs at once. (The device side is cluster.cuh.)
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

namespace fp8gemm {
namespace sm90 {

/// A launch of `blocks` blocks of `threads` threads with
/// `dynamic_shared_bytes` of dynamic shared memory on `stream`, in clusters of
/// `cluster_blocks` neighbouring blocks along x (a cluster of 1 included; 0:
/// no cluster attribute at all, a plain launch). `blocks` must be a multiple
/// of `cluster_blocks`.
/// Holds the attribute that `config` points to: pass `config` while the
/// object lives, and do not copy it.
struct ClusterLaunch {
  cudaLaunchConfig_t config = {};    ///< what cudaLaunchKernelEx takes
  cudaLaunchAttribute cluster = {};  ///< the cluster's dimensions, which config points to

  /// The launch as the struct's comment says.
  ClusterLaunch(unsigned blocks, unsigned threads, size_t dynamic_shared_bytes, cudaStream_t stream,
                unsigned cluster_blocks) {
    config.gridDim = dim3(blocks);
    config.blockDim = dim3(threads);
    config.dynamicSmemBytes = dynamic_shared_bytes;
    config.stream = stream;
    cluster.id = cudaLaunchAttributeClusterDimension;
    cluster.val.clusterDim.x = cluster_blocks > 0 ? cluster_blocks : 1;
    cluster.val.clusterDim.y = 1;
    cluster.val.clusterDim.z = 1;
    config.attrs = &cluster;
    config.numAttrs = cluster_blocks > 0 ? 1 : 0;
  }
  ClusterLaunch(const ClusterLaunch&) = delete;             ///< not copied: config points into the object
  ClusterLaunch& operator=(const ClusterLaunch&) = delete;  ///< not assigned, for the same reason
};

/// Launches `kernel` with `arguments` as ClusterLaunch describes it; the
/// runtime's error, or cudaSuccess.
template <typename... Parameters, typename... Arguments>
cudaError_t launch_in_clusters(void (*kernel)(Parameters...), unsigned blocks, unsigned threads,
                               size_t dynamic_shared_bytes, cudaStream_t stream, unsigned cluster_blocks,
                               Arguments&&... arguments) {
  const ClusterLaunch launch(blocks, threads, dynamic_shared_bytes, stream, cluster_blocks);
  return cudaLaunchKernelEx(&launch.config, kernel, static_cast<Arguments&&>(arguments)...);
}

/// How many clusters of `cluster_blocks` blocks of `kernel` (`threads`
/// threads, `dynamic_shared_bytes`, which it is allowed first) the GPU runs at
/// once: the blocks of a cluster sit on neighbouring SMs of one GPC, so a GPC
/// whose free SMs do not divide by the cluster's size leaves some idle, and
/// the answer can be less than SMs / cluster_blocks. 0 where the runtime
/// cannot say (no GPU, or no sm_90a one: the launch itself then says which).
template <typename Kernel>
int max_active_clusters(Kernel kernel, unsigned threads, size_t dynamic_shared_bytes, unsigned cluster_blocks) {
  const ClusterLaunch launch(cluster_blocks, threads, dynamic_shared_bytes, nullptr, cluster_blocks);
  int clusters = 0;
  if (cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                           static_cast<int>(dynamic_shared_bytes)) != cudaSuccess ||
      cudaOccupancyMaxActiveClusters(&clusters, kernel, &launch.config) != cudaSuccess) {
    cudaGetLastError();  // clear the error: the caller treats 0 as "cannot say"
    return 0;
  }
  return clusters;
}

}  // namespace sm90
}  // namespace fp8gemm
