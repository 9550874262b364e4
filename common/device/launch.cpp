#include "common/device/launch.h"

#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <utility>

namespace fp8gemm {

Status status_from_launch(const char* context) {
  const cudaError_t err = cudaGetLastError();
  if (err == cudaSuccess) return Status::success();
  std::ostringstream msg;
  if (context[0] != '\0') msg << context << ": ";
  if (err == cudaErrorNoKernelImageForDevice || err == cudaErrorInvalidDeviceFunction) {
    int device = 0, major = 0, minor = 0;
    cudaGetDevice(&device);
    cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device);
    cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device);
    msg << "no kernel image for this GPU (compute capability " << major << "." << minor
        << "); rebuild with CMAKE_CUDA_ARCHITECTURES including it (" << cudaGetErrorString(err) << ")";
    return Status::error(StatusCode::kNotSupported, msg.str());
  }
  msg << cudaGetErrorString(err);
  return Status::error(StatusCode::kRuntimeError, msg.str());
}

Status refuse_block_scales_without_promotion(const GemmArgs& args) {
  if (has_block_scales(args) && args.fast_accumulation) {
    return Status::error(StatusCode::kNotSupported,
                         "1x128 or 128x128 scales need promotion: fast accumulation has no place to apply them");
  }
  return Status::success();
}

Status reserve_dynamic_shared_memory(const void* kernel, size_t bytes) {
  const cudaError_t err =
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes));
  if (err == cudaSuccess) return Status::success();
  cudaGetLastError();  // clear it: the error is reported here
  return Status::error(StatusCode::kRuntimeError, "cannot reserve " + std::to_string(bytes) +
                                                      " bytes of shared memory: " + cudaGetErrorString(err));
}

Status clear_amax(const GemmArgs& args) {
  if (args.d_amax == nullptr) return Status::success();
  const cudaError_t cleared = cudaMemsetAsync(args.d_amax, 0, sizeof(float), args.stream);
  if (cleared == cudaSuccess) return Status::success();
  cudaGetLastError();
  return Status::error(StatusCode::kRuntimeError, std::string("cannot clear d_amax: ") + cudaGetErrorString(cleared));
}

int sm_count_of_current_device() {
  static int counts[64] = {};
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess || device < 0 || device >= 64) {
    cudaGetLastError();
    return 0;
  }
  if (counts[device] == 0 &&
      cudaDeviceGetAttribute(&counts[device], cudaDevAttrMultiProcessorCount, device) != cudaSuccess) {
    cudaGetLastError();
    counts[device] = 0;
  }
  return counts[device];
}

Status split_k_workspace(cudaStream_t stream, size_t floats, size_t tiles, float** workspace, unsigned** counters) {
  struct Buffers {
    float* sums = nullptr;
    size_t floats = 0;
    unsigned* counts = nullptr;
    size_t tiles = 0;
  };
  static std::mutex mutex;
  static std::map<std::pair<int, cudaStream_t>, Buffers> per_stream;
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) {
    cudaGetLastError();
    return Status::error(StatusCode::kRuntimeError, "no current device for the split-K workspace");
  }
  const std::lock_guard<std::mutex> lock(mutex);
  Buffers& b = per_stream[{device, stream}];
  if (floats > b.floats) {
    if (b.sums != nullptr) cudaFree(b.sums);
    b.sums = nullptr;
    b.floats = 0;
    if (cudaMalloc(reinterpret_cast<void**>(&b.sums), floats * sizeof(float)) != cudaSuccess) {
      cudaGetLastError();
      return Status::error(StatusCode::kRuntimeError, "cannot allocate the split-K workspace");
    }
    b.floats = floats;
  }
  if (tiles > b.tiles) {
    if (b.counts != nullptr) cudaFree(b.counts);
    b.counts = nullptr;
    b.tiles = 0;
    if (cudaMalloc(reinterpret_cast<void**>(&b.counts), tiles * sizeof(unsigned)) != cudaSuccess ||
        cudaMemsetAsync(b.counts, 0, tiles * sizeof(unsigned), stream) != cudaSuccess) {
      cudaGetLastError();
      return Status::error(StatusCode::kRuntimeError, "cannot allocate the split-K counters");
    }
    b.tiles = tiles;
  }
  *workspace = b.sums;
  *counters = b.counts;
  return Status::success();
}

}  // namespace fp8gemm
