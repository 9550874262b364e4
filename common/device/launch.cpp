#include "common/device/launch.h"

#include <sstream>

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

}  // namespace fp8gemm
