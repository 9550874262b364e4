/// @file cuda_check.h
/// @brief Host-side helpers for calling the CUDA runtime: error checks that
///        throw, a GPU-availability probe, and an owning device buffer.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <stdexcept>
#include <string>

namespace fp8gemm {

/// Thrown by FP8GEMM_CUDA_CHECK when a runtime call fails.
class CudaError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Throws CudaError naming the call, file and line when `err` is not cudaSuccess.
void cuda_check(cudaError_t err, const char* call, const char* file, int line);

/// True when a CUDA device can be used; otherwise false and `reason` (if
/// given) says why, e.g. "no CUDA driver on this machine".
bool cuda_device_available(std::string* reason = nullptr);

/// The compute capability of the current CUDA device as major * 10 + minor
/// (90 for an H100 or H200), or -1 when it cannot be read; then `reason` (if
/// given) says why.
int cuda_compute_capability(std::string* reason = nullptr);

/// An owning array of `count` T in device memory (cudaMalloc / cudaFree).
template <typename T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  /// Allocates `count` elements (uninitialized).
  explicit DeviceBuffer(size_t count) : count_(count) {
    if (count > 0)
      cuda_check(cudaMalloc(reinterpret_cast<void**>(&ptr_), count * sizeof(T)), "cudaMalloc", __FILE__, __LINE__);
  }
  ~DeviceBuffer() {
    if (ptr_ != nullptr) cudaFree(ptr_);
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  /// Takes over the other buffer's memory.
  DeviceBuffer(DeviceBuffer&& other) noexcept : ptr_(other.ptr_), count_(other.count_) {
    other.ptr_ = nullptr;
    other.count_ = 0;
  }
  /// Frees this buffer's memory and takes over the other's.
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    if (this != &other) {
      if (ptr_ != nullptr) cudaFree(ptr_);
      ptr_ = other.ptr_;
      count_ = other.count_;
      other.ptr_ = nullptr;
      other.count_ = 0;
    }
    return *this;
  }
  /// Device pointer to the first element.
  T* get() const { return ptr_; }
  /// Number of elements.
  size_t size() const { return count_; }
  /// Size in bytes.
  size_t bytes() const { return count_ * sizeof(T); }

 private:
  T* ptr_ = nullptr;
  size_t count_ = 0;
};

}  // namespace fp8gemm

/// Checks a CUDA runtime call; throws fp8gemm::CudaError on failure.
#define FP8GEMM_CUDA_CHECK(call) ::fp8gemm::cuda_check((call), #call, __FILE__, __LINE__)
