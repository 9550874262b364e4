/// @file cuda_stream.h
/// @brief An owned CUDA stream for the GPU tests: launches under test run on a
///        non-default stream, as a caller's would.
#pragma once

#include <cuda_runtime_api.h>

#include "common/api/cuda_check.h"
// Every GPU test makes a stream: its skip rule (FP8GEMM_REQUIRE_GPU) comes along.
#include "support/require_gpu.h"

namespace fp8gemm::test_support {

/// A CUDA stream created on construction and destroyed with the object.
class CudaStream {
 public:
  CudaStream() { FP8GEMM_CUDA_CHECK(cudaStreamCreate(&stream_)); }
  ~CudaStream() { cudaStreamDestroy(stream_); }
  CudaStream(const CudaStream&) = delete;
  CudaStream& operator=(const CudaStream&) = delete;
  /// The stream handle.
  cudaStream_t get() const { return stream_; }

 private:
  cudaStream_t stream_ = nullptr;
};

}  // namespace fp8gemm::test_support
