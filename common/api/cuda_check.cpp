#include "common/api/cuda_check.h"

#include <sstream>

namespace fp8gemm {

void cuda_check(cudaError_t err, const char* call, const char* file, int line) {
  if (err == cudaSuccess) return;
  std::ostringstream msg;
  msg << call << " failed at " << file << ":" << line << ": " << cudaGetErrorName(err) << " ("
      << cudaGetErrorString(err) << ")";
  throw CudaError(msg.str());
}

bool cuda_device_available(std::string* reason) {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    cudaGetLastError();  // clear the sticky error of the failed probe
    if (reason != nullptr) *reason = std::string("no usable CUDA device: ") + cudaGetErrorString(err);
    return false;
  }
  if (count == 0) {
    if (reason != nullptr) *reason = "no CUDA device on this machine";
    return false;
  }
  return true;
}

int cuda_compute_capability(std::string* reason) {
  int device = 0, major = 0, minor = 0;
  cudaError_t err = cudaGetDevice(&device);
  if (err == cudaSuccess) err = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device);
  if (err == cudaSuccess) err = cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device);
  if (err != cudaSuccess) {
    cudaGetLastError();  // clear the error of the failed query
    if (reason != nullptr)
      *reason = std::string("cannot read the GPU's compute capability: ") + cudaGetErrorString(err);
    return -1;
  }
  return major * 10 + minor;
}

}  // namespace fp8gemm
