/// @file arch.h
/// @brief Hopper (sm_90a) basics every sm90 primitive and kernel uses: the
///        guard that compiles device code only for sm_90a, the warpgroup,
///        shared-memory addresses, register reallocation, and the host checks
///        that the GPU and the kernel image are sm_90a.
///
/// wgmma and setmaxnreg exist only on the "a" (architecture-specific) target,
/// so the device functions of common/sm90/ are compiled only where
/// `__CUDA_ARCH_FEAT_SM90_ALL` is defined (and parsed, not compiled, in the
/// host pass). A kernel that calls them guards its body with
/// `#if FP8GEMM_SM90A_DEVICE`, so that a multi-architecture build ("80;90a")
/// still compiles: the other targets get an empty kernel, and the launcher
/// must refuse to run it (see kernel_has_sm90a_image()).
///
/// The primitives, one concept per header, each wrapping one or two PTX
/// instructions (names follow the PTX ISA):
///   - tensor_map.h  the TMA's description of a matrix (host)
///   - mbarrier.cuh  barriers in shared memory that count arrivals and bytes
///   - tma.cuh       the tensor memory accelerator's bulk copies
///   - wgmma.cuh     warpgroup matrix multiply-accumulate and its descriptors
#pragma once

#include <cstdint>
#include <string>

#include "common/api/gemm.h"
#include "common/device/launch.h"
#include "common/portability.h"

#if !defined(FP8GEMM_CUDA)
#error "common/sm90/ is CUDA only: include it from sm_90a kernel files (*_sm90a.cu, *_sm90a.cuh)"
#endif

/// 1 in the device pass for sm_90a (the target where wgmma and setmaxnreg exist), else 0.
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define FP8GEMM_SM90A_DEVICE 1
#else
#define FP8GEMM_SM90A_DEVICE 0
#endif

/// 1 where the sm90 device functions are declared: the host pass (parsed, never
/// compiled) and the sm_90a device pass.
#if !defined(__CUDA_ARCH__) || FP8GEMM_SM90A_DEVICE
#define FP8GEMM_SM90A_PARSE 1
#else
#define FP8GEMM_SM90A_PARSE 0
#endif

namespace fp8gemm {
namespace sm90 {

/// Threads that issue one wgmma together: a warpgroup, 4 warps.
inline constexpr int kWarpgroupThreads = 128;

/// kNotSupported unless the current GPU can run sm_90a code (compute
/// capability 9.0 exactly: "a" targets do not run on later GPUs).
inline Status require_sm90a_gpu() {
  int device = 0, major = 0, minor = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) != cudaSuccess) {
    const cudaError_t err = cudaGetLastError();
    return Status::error(StatusCode::kRuntimeError, cudaGetErrorString(err));
  }
  if (major != 9 || minor != 0) {
    return Status::error(StatusCode::kNotSupported,
                         std::string("requires sm_90a (Hopper, compute capability 9.0), this GPU is ") +
                             std::to_string(major) + "." + std::to_string(minor));
  }
  return Status::success();
}

/// kNotSupported unless `kernel` was compiled for sm_90a. A build whose
/// architectures lack "90a" (say "90" or "80;90") holds only the empty body of
/// the guarded kernel; such an image is recognized by its static shared memory
/// (the real kernel declares `kStaticSharedBytes`, the empty one none), and
/// refused instead of returning an unwritten D. A build with no image for
/// this GPU at all fails here too.
template <typename Kernel>
Status kernel_has_sm90a_image(Kernel kernel, size_t static_shared_bytes) {
  // Asked of the runtime once per device and kernel (once_per_kernel).
  return once_per_kernel(reinterpret_cast<const void*>(kernel), KernelFact::kSm90aImage, static_shared_bytes,
                         [](const void* k, size_t bytes) {
                           cudaFuncAttributes attributes{};
                           const cudaError_t err = cudaFuncGetAttributes(&attributes, k);
                           if (err != cudaSuccess) {
                             cudaGetLastError();
                             return Status::error(StatusCode::kNotSupported,
                                                  std::string("no kernel image for this GPU (") +
                                                      cudaGetErrorString(err) +
                                                      "); build with CMAKE_CUDA_ARCHITECTURES including 90a");
                           }
                           if (attributes.sharedSizeBytes < bytes) {
                             return Status::error(StatusCode::kNotSupported,
                                                  "the kernel was built without sm_90a (wgmma) code; "
                                                  "build with CMAKE_CUDA_ARCHITECTURES including 90a");
                           }
                           return Status::success();
                         });
}

}  // namespace sm90
}  // namespace fp8gemm

#if FP8GEMM_SM90A_PARSE
namespace fp8gemm {
namespace sm90 {

/// Shared-memory address (the 32-bit offset in the CTA's shared window) of a
/// generic pointer into shared memory: what PTX's `.shared` operands take.
__device__ __forceinline__ uint32_t shared_address(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

/// `value`, as lane 0 of the calling warp holds it, from a register the
/// compiler cannot recompute. The compiler may rematerialize a cheap value
/// (a shared address, built from the block's ID in its cluster) at every use
/// instead of keeping it live; a value that came through a shuffle is one it
/// must keep. For a value equal in every lane; all 32 lanes must call it.
__device__ __forceinline__ uint32_t kept_in_register(uint32_t value) { return __shfl_sync(0xFFFFFFFFu, value, 0); }

/// Lowers (kDecrease) or raises the register budget of every thread of the
/// calling warpgroup to `kRegisters` (a multiple of 8, 24..256). All threads
/// of the warpgroup must execute it. Lets producer warps give registers to
/// consumer warps.
template <int kRegisters, bool kDecrease>
__device__ __forceinline__ void set_max_registers() {
  static_assert(kRegisters % 8 == 0 && kRegisters >= 24 && kRegisters <= 256, "setmaxnreg: 24..256, multiple of 8");
  if constexpr (kDecrease) {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(kRegisters));
  } else {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(kRegisters));
  }
}

}  // namespace sm90
}  // namespace fp8gemm
#endif  // FP8GEMM_SM90A_PARSE
