#include "common/device/launch.h"

#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
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

Status once_per_kernel(const void* kernel, KernelFact what, size_t value,
                       Status (*check)(const void* kernel, size_t value)) {
  static std::mutex mutex;
  static std::set<std::tuple<int, const void*, KernelFact, size_t>> done;  // device, kernel, what, value
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) {
    cudaGetLastError();
    return check(kernel, value);  // it reports what is wrong with the device
  }
  const auto key = std::make_tuple(device, kernel, what, value);
  {
    const std::lock_guard<std::mutex> lock(mutex);
    if (done.count(key) != 0) return Status::success();
  }
  const Status status = check(kernel, value);
  if (status.ok()) {
    const std::lock_guard<std::mutex> lock(mutex);
    done.insert(key);
  }
  return status;
}

Status reserve_dynamic_shared_memory(const void* kernel, size_t bytes) {
  return once_per_kernel(kernel, KernelFact::kDynamicSharedMemory, bytes, [](const void* k, size_t b) {
    const cudaError_t err = cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(b));
    if (err == cudaSuccess) return Status::success();
    cudaGetLastError();  // clear it: the error is reported here
    return Status::error(StatusCode::kRuntimeError,
                         "cannot reserve " + std::to_string(b) + " bytes of shared memory: " + cudaGetErrorString(err));
  });
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

Status stream_buffer(cudaStream_t stream, StreamBuffer purpose, size_t bytes, void** data, bool* fresh) {
  struct Buffer {
    void* data = nullptr;
    size_t bytes = 0;
  };
  static std::mutex mutex;
  static std::map<std::tuple<int, cudaStream_t, StreamBuffer>, Buffer> buffers;
  if (fresh != nullptr) *fresh = false;
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) {
    cudaGetLastError();
    return Status::error(StatusCode::kRuntimeError, "no current device for a workspace");
  }
  const std::lock_guard<std::mutex> lock(mutex);
  Buffer& b = buffers[{device, stream, purpose}];
  if (bytes > b.bytes) {
    if (b.data != nullptr) cudaFree(b.data);  // synchronizes: no launch still uses the old buffer
    b.data = nullptr;
    b.bytes = 0;
    if (cudaMalloc(&b.data, bytes) != cudaSuccess) {
      cudaGetLastError();
      return Status::error(StatusCode::kRuntimeError,
                           "cannot allocate a workspace of " + std::to_string(bytes) + " bytes");
    }
    b.bytes = bytes;
    if (fresh != nullptr) *fresh = true;
  }
  *data = b.data;
  return Status::success();
}

Status split_k_workspace(cudaStream_t stream, size_t floats, size_t tiles, float** workspace, unsigned** counters) {
  void* sums = nullptr;
  void* counts = nullptr;
  bool fresh = false;
  Status status = stream_buffer(stream, StreamBuffer::kSplitKSums, floats * sizeof(float), &sums, nullptr);
  if (!status.ok()) return status;
  status = stream_buffer(stream, StreamBuffer::kSplitKCounters, tiles * sizeof(unsigned), &counts, &fresh);
  if (!status.ok()) return status;
  // The counters start at zero, and every launch leaves them there.
  if (fresh && cudaMemsetAsync(counts, 0, tiles * sizeof(unsigned), stream) != cudaSuccess) {
    cudaGetLastError();
    return Status::error(StatusCode::kRuntimeError, "cannot clear the split-K counters");
  }
  *workspace = static_cast<float*>(sums);
  *counters = static_cast<unsigned*>(counts);
  return Status::success();
}

}  // namespace fp8gemm
