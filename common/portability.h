/// @file portability.h
/// @brief Lets one kernel source compile as CUDA (nvcc), as HIP (clang), and
///        its `__host__ __device__` helpers as plain C++ (g++).
///
/// Four ways a file of this project is compiled:
///  1. nvcc, CUDA: nothing to do, the CUDA names are the native ones.
///  2. clang/hipcc with a ROCm installation: the CUDA runtime names used by
///     launchers are mapped to their HIP equivalents.
///  3. clang `-x hip --cuda-device-only` with `-DFP8GEMM_HIP_DEVICE_ONLY`
///     (the CI build for gfx942/gfx950): there is no ROCm runtime on the
///     build machine, so this header supplies the handful of names kernels
///     and launchers use (threadIdx, __syncthreads, the `<<<>>>` launch hook,
///     the runtime calls) as declarations. Only device code is generated; the
///     host launchers are parsed but never compiled into anything.
///  4. a plain host compiler: `__host__`/`__device__` expand to nothing so the
///     FP8 codec and quantization math can be used and tested on the CPU.
#pragma once

#include <cstddef>
#include <cstdint>

#if defined(__CUDACC__) && !defined(__HIP__)
// ---- 1. CUDA -----------------------------------------------------------
#define FP8GEMM_CUDA 1
#include <cuda_runtime.h>

#elif defined(__HIP__) && !defined(FP8GEMM_HIP_DEVICE_ONLY)
// ---- 2. HIP with the ROCm runtime (not exercised by this project's CI) ---
#define FP8GEMM_HIP 1
#include <hip/hip_runtime.h>
#define cudaError_t hipError_t
#define cudaSuccess hipSuccess
#define cudaStream_t hipStream_t
#define cudaGetLastError hipGetLastError
#define cudaGetErrorString hipGetErrorString
#define cudaFuncSetAttribute hipFuncSetAttribute
#define cudaGetDevice hipGetDevice
#define cudaDeviceGetAttribute hipDeviceGetAttribute
#define cudaDevAttrMultiProcessorCount hipDeviceAttributeMultiprocessorCount
#define cudaFuncAttributeMaxDynamicSharedMemorySize hipFuncAttributeMaxDynamicSharedMemorySize

#elif defined(__HIP__)
// ---- 3. HIP device code only, no ROCm installed --------------------------
#define FP8GEMM_HIP 1
#include <__clang_hip_runtime_wrapper.h>  // __device__, __global__, __shared__

struct dim3 {
  unsigned x = 1, y = 1, z = 1;
  constexpr dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
};
typedef struct ihipStream_t* cudaStream_t;
typedef int cudaError_t;
constexpr cudaError_t cudaSuccess = 0;
enum cudaFuncAttribute { cudaFuncAttributeMaxDynamicSharedMemorySize = 8 };
// Declarations only: device-only compilation parses host launchers but never
// emits code for them, so nothing here is ever defined or called.
extern "C" int __hipPushCallConfiguration(dim3 grid, dim3 block, size_t shared_bytes = 0,
                                          cudaStream_t stream = nullptr);
extern "C" int __hipPopCallConfiguration(dim3* grid, dim3* block, size_t* shared_bytes, cudaStream_t* stream);
extern "C" int hipLaunchKernel(const void* kernel, dim3 grid, dim3 block, void** args, size_t shared_bytes,
                               cudaStream_t stream);
cudaError_t cudaGetLastError();
const char* cudaGetErrorString(cudaError_t);
enum cudaDeviceAttr { cudaDevAttrMultiProcessorCount = 16 };
cudaError_t cudaGetDevice(int* device);
cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attribute, int device);
template <typename Kernel>
cudaError_t cudaFuncSetAttribute(Kernel, cudaFuncAttribute, int);

// threadIdx, blockIdx, blockDim as in CUDA, read from the AMDGPU builtins.
#define FP8GEMM_AMDGPU_BUILTIN_VAR(Name, Fx, Fy, Fz)  \
  struct Name##_builtin {                             \
    __declspec(property(get = get_x)) unsigned x;     \
    __declspec(property(get = get_y)) unsigned y;     \
    __declspec(property(get = get_z)) unsigned z;     \
    static __device__ unsigned get_x() { return Fx; } \
    static __device__ unsigned get_y() { return Fy; } \
    static __device__ unsigned get_z() { return Fz; } \
  };                                                  \
  extern const __device__ Name##_builtin Name;
FP8GEMM_AMDGPU_BUILTIN_VAR(threadIdx, __builtin_amdgcn_workitem_id_x(), __builtin_amdgcn_workitem_id_y(),
                           __builtin_amdgcn_workitem_id_z())
FP8GEMM_AMDGPU_BUILTIN_VAR(blockIdx, __builtin_amdgcn_workgroup_id_x(), __builtin_amdgcn_workgroup_id_y(),
                           __builtin_amdgcn_workgroup_id_z())
FP8GEMM_AMDGPU_BUILTIN_VAR(blockDim, __builtin_amdgcn_workgroup_size_x(), __builtin_amdgcn_workgroup_size_y(),
                           __builtin_amdgcn_workgroup_size_z())
// The dispatch packet holds the grid size in work-items, not in blocks.
FP8GEMM_AMDGPU_BUILTIN_VAR(
    gridDim,
    (__builtin_amdgcn_grid_size_x() + __builtin_amdgcn_workgroup_size_x() - 1) / __builtin_amdgcn_workgroup_size_x(),
    (__builtin_amdgcn_grid_size_y() + __builtin_amdgcn_workgroup_size_y() - 1) / __builtin_amdgcn_workgroup_size_y(),
    (__builtin_amdgcn_grid_size_z() + __builtin_amdgcn_workgroup_size_z() - 1) / __builtin_amdgcn_workgroup_size_z())
#undef FP8GEMM_AMDGPU_BUILTIN_VAR

/// Block-wide barrier with workgroup-scope memory ordering, like CUDA's.
__device__ inline void __syncthreads() {
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
}

#else
// ---- 4. plain host C++ ----------------------------------------------------
/// Defined when this file is compiled by a plain host compiler (no CUDA, no HIP).
#define FP8GEMM_HOST_ONLY 1
#if __has_include(<cuda_runtime_api.h>)
#include <cuda_runtime_api.h>  // host code that launches steps: cudaStream_t and friends
#else
/// Stream handle, so that the API compiles without the CUDA headers.
typedef struct CUstream_st* cudaStream_t;
#endif
#ifndef __host__
#define __host__
#endif
#ifndef __device__
#define __device__
#endif
#endif

/// Marks a function usable on the host and on the device in every mode above.
#define FP8GEMM_HOST_DEVICE __host__ __device__

/// Tells the compiler the most threads a kernel is launched with, so that it
/// budgets registers for that block size. clang ignores `__launch_bounds__`
/// for AMD targets (it would assume 1024-thread blocks), hence the attribute.
#if defined(__HIP__)
#define FP8GEMM_LAUNCH_BOUNDS(threads) __attribute__((amdgpu_flat_work_group_size(1, threads)))
#elif defined(__CUDACC__)
#define FP8GEMM_LAUNCH_BOUNDS(threads) __launch_bounds__(threads)
#else
#define FP8GEMM_LAUNCH_BOUNDS(threads)
#endif

namespace fp8gemm {

/// Threads that execute in lockstep: 32 on NVIDIA (warp), 64 on AMD CDNA
/// (wavefront). Kernels that reason about lanes use this, never a literal 32.
/// The project's AMD targets (gfx942, gfx950) run wave64 only.
#if defined(__HIP__)
inline constexpr int kWarpSize = 64;
#else
inline constexpr int kWarpSize = 32;
#endif

/// Reinterprets the bits of a float as an unsigned 32-bit integer.
FP8GEMM_HOST_DEVICE inline uint32_t float_bits(float x) { return __builtin_bit_cast(uint32_t, x); }

/// Reinterprets an unsigned 32-bit integer as a float.
FP8GEMM_HOST_DEVICE inline float float_from_bits(uint32_t bits) { return __builtin_bit_cast(float, bits); }

}  // namespace fp8gemm
