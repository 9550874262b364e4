/// @file hopper.h
/// @brief Hopper (sm_90a) building blocks shared by the steps from 05 on:
///        tensor maps for the TMA (host), mbarriers, TMA loads, wgmma matrix
///        descriptors and the FP8 wgmma instruction (device).
///
/// Each function wraps one or two PTX instructions and says in a comment what
/// the instruction does; the chapter of step 05 (steps/05_matrix_cores/README.md)
/// explains how they fit together. Names follow the PTX ISA where it has one.
///
/// Only CUDA sources that target sm_90a may use the device half: wgmma and
/// setmaxnreg exist only on the "a" (architecture-specific) target, so the
/// device functions are compiled only where `__CUDA_ARCH_FEAT_SM90_ALL` is
/// defined (and parsed, not compiled, in the host pass). A kernel that calls
/// them guards its body with `#if FP8GEMM_SM90A_DEVICE`, so that a
/// multi-architecture build ("80;90a") still compiles: the other targets get
/// an empty kernel, and the launcher must refuse to run it (see
/// kernel_has_sm90a_image()).
#pragma once

#include <cstdint>

#include "common/fp8.h"
#include "common/gemm.h"
#include "common/portability.h"

#if defined(FP8GEMM_CUDA)
#include <cuda.h>          // CUtensorMap and its enums: types only, nothing links libcuda
#include <cudaTypedefs.h>  // PFN_cuTensorMapEncodeTiled_v12000

#include <string>

/// 1 in the device pass for sm_90a (the target where wgmma and setmaxnreg exist), else 0.
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define FP8GEMM_SM90A_DEVICE 1
#else
#define FP8GEMM_SM90A_DEVICE 0
#endif

namespace fp8gemm {
namespace sm90 {

/// Threads that issue one wgmma together: a warpgroup, 4 warps.
inline constexpr int kWarpgroupThreads = 128;

// =============================================================================
// Host: tensor maps (the TMA's description of a global matrix and of the box
// it copies into shared memory).
// =============================================================================

/// The driver's cuTensorMapEncodeTiled, looked up once through the runtime so
/// that no program has to link libcuda. nullptr if the driver lacks it.
inline PFN_cuTensorMapEncodeTiled_v12000 tensor_map_encoder() {
  static const PFN_cuTensorMapEncodeTiled_v12000 encoder = [] {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
    // 12000: the ABI version of the function (the one CUDA 12.0 introduced).
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &found) !=
            cudaSuccess ||
        found != cudaDriverEntryPointSuccess) {
      cudaGetLastError();  // clear the failed lookup
      fn = nullptr;
    }
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(fn);
  }();
  return encoder;
}

/// Describes a K-major FP8 matrix (rows x k bytes, `ld` bytes between rows)
/// for TMA loads of `box_rows` x `box_k` boxes into shared memory with the
/// 128-byte swizzle that wgmma's K-major layout expects (box_k must be 128).
///
/// The global extent is `k`, not `ld`: columns k..ld-1 (padding) are out of
/// bounds, and so are rows >= `rows`. The TMA fills out-of-bounds elements of
/// a box with zeros, so a tile that hangs over the edge of the matrix
/// contributes 0 to the dot products: no bounds checks in the main loop.
///
/// The TMA requires: base 16-byte aligned, ld a multiple of 16 (and < 2^40),
/// every extent <= 2^32. On failure returns kNotSupported naming the driver's error.
inline Status make_kmajor_tensor_map(CUtensorMap* map, const uint8_t* base, int64_t rows, int64_t k, int64_t ld,
                                     uint32_t box_rows, uint32_t box_k, const char* who) {
  const PFN_cuTensorMapEncodeTiled_v12000 encode = tensor_map_encoder();
  if (encode == nullptr) {
    return Status::error(StatusCode::kNotSupported,
                         std::string(who) + ": the CUDA driver has no cuTensorMapEncodeTiled (driver older than 12.0)");
  }
  const cuuint64_t global_dim[2] = {static_cast<cuuint64_t>(k), static_cast<cuuint64_t>(rows)};  // innermost first
  const cuuint64_t global_stride[1] = {static_cast<cuuint64_t>(ld)};  // bytes from one row to the next
  const cuuint32_t box_dim[2] = {box_k, box_rows};
  const cuuint32_t element_stride[2] = {1, 1};
  const CUresult result =
      encode(map, CU_TENSOR_MAP_DATA_TYPE_UINT8, 2, const_cast<uint8_t*>(base), global_dim, global_stride, box_dim,
             element_stride, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
             CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);  // OOB_FILL_NONE = zeros
  if (result != CUDA_SUCCESS) {
    return Status::error(StatusCode::kNotSupported,
                         std::string(who) + ": cuTensorMapEncodeTiled failed with CUresult " +
                             std::to_string(static_cast<int>(result)) + " (rows = " + std::to_string(rows) +
                             ", K = " + std::to_string(k) + ", ld = " + std::to_string(ld) + ")");
  }
  return Status::success();
}

/// kNotSupported unless the current GPU can run sm_90a code (compute
/// capability 9.0 exactly: "a" targets do not run on later GPUs).
inline Status require_sm90a_gpu(const char* who) {
  int device = 0, major = 0, minor = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) != cudaSuccess) {
    const cudaError_t err = cudaGetLastError();
    return Status::error(StatusCode::kRuntimeError, std::string(who) + ": " + cudaGetErrorString(err));
  }
  if (major != 9 || minor != 0) {
    return Status::error(StatusCode::kNotSupported,
                         std::string(who) + ": requires sm_90a (Hopper, compute capability 9.0), this GPU is " +
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
Status kernel_has_sm90a_image(Kernel kernel, size_t static_shared_bytes, const char* who) {
  cudaFuncAttributes attributes{};
  const cudaError_t err = cudaFuncGetAttributes(&attributes, kernel);
  if (err != cudaSuccess) {
    cudaGetLastError();
    return Status::error(StatusCode::kNotSupported, std::string(who) + ": no kernel image for this GPU (" +
                                                        cudaGetErrorString(err) +
                                                        "); build with FP8GEMM_CUDA_ARCHITECTURES including 90a");
  }
  if (attributes.sharedSizeBytes < static_shared_bytes) {
    return Status::error(StatusCode::kNotSupported,
                         std::string(who) + ": the kernel was built without sm_90a (wgmma) code; "
                                            "build with FP8GEMM_CUDA_ARCHITECTURES including 90a");
  }
  return Status::success();
}

}  // namespace sm90
}  // namespace fp8gemm

// =============================================================================
// Device: compiled for sm_90a only, parsed in the host pass.
// =============================================================================
#if !defined(__CUDA_ARCH__) || FP8GEMM_SM90A_DEVICE

namespace fp8gemm {
namespace sm90 {

/// Shared-memory address (the 32-bit offset in the CTA's shared window) of a
/// generic pointer into shared memory: what PTX's `.shared` operands take.
__device__ __forceinline__ uint32_t shared_address(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// ---- mbarrier: a counter in shared memory with a phase bit ------------------
// A phase completes when `count` arrivals have been made and every byte of
// the transactions announced with expect_tx has landed; the barrier then
// flips to the next phase. Waiters name the phase they wait for by its parity.

/// Initializes the barrier at `bar` to expect `count` arrivals per phase.
__device__ __forceinline__ void mbarrier_init(uint32_t bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}

/// Makes barrier initializations of this thread visible to the other threads
/// and to the TMA unit (the async proxy), which will arrive on them. Follow
/// with __syncthreads().
__device__ __forceinline__ void fence_barrier_init() {
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

/// Arrives on the barrier and announces `bytes` more bytes of asynchronous
/// copies that must land before the current phase can complete.
__device__ __forceinline__ void mbarrier_arrive_expect_tx(uint32_t bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes) : "memory");
}

/// Arrives on the barrier (one of its `count` arrivals).
__device__ __forceinline__ void mbarrier_arrive(uint32_t bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory");
}

/// True if the phase of parity `parity` of the barrier has completed. May
/// suspend the thread for a short, hardware-chosen time before saying no.
__device__ __forceinline__ bool mbarrier_try_wait(uint32_t bar, uint32_t parity) {
  uint32_t done = 0;
  asm volatile(
      "{\n"
      "  .reg .pred complete;\n"
      "  mbarrier.try_wait.parity.shared::cta.b64 complete, [%1], %2;\n"
      "  selp.u32 %0, 1, 0, complete;\n"
      "}\n"
      : "=r"(done)
      : "r"(bar), "r"(parity)
      : "memory");
  return done != 0;
}

/// Nanoseconds of the GPU's global timer.
__device__ __forceinline__ uint64_t global_timer_ns() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

/// A barrier phase that has not completed after this long never will: a
/// byte count or a parity is wrong. Trapping turns that bug into a launch
/// error instead of a GPU that hangs until the process is killed.
inline constexpr uint64_t kBarrierTimeoutNs = 10'000'000'000ull;  // 10 s

/// Blocks until the phase of parity `parity` (0 or 1) has completed. A
/// freshly initialized barrier is in phase 0, and the phase "before" it
/// (parity 1) counts as completed: waiting for parity 1 returns at once.
__device__ __forceinline__ void mbarrier_wait(uint32_t bar, uint32_t parity) {
  if (mbarrier_try_wait(bar, parity)) return;
  const uint64_t start = global_timer_ns();
  while (!mbarrier_try_wait(bar, parity)) {
    if (global_timer_ns() - start > kBarrierTimeoutNs) __trap();
  }
}

// ---- TMA: the tensor memory accelerator ------------------------------------

/// Fetches the tensor map into the TMA unit's cache ahead of its first use.
__device__ __forceinline__ void prefetch_tensor_map(const CUtensorMap* map) {
  asm volatile("prefetch.tensormap [%0];" ::"l"(reinterpret_cast<uint64_t>(map)) : "memory");
}

/// Copies the box at element coordinates (`inner`, `outer`) of the matrix
/// described by `map` into shared memory at `dst`, asynchronously; the bytes
/// count towards the transaction of barrier `bar`. One thread issues it.
/// `map` must be a kernel parameter (`const __grid_constant__ CUtensorMap`),
/// whose generic address the instruction takes.
__device__ __forceinline__ void tma_load_2d(uint32_t dst, const CUtensorMap* map, uint32_t bar, int32_t inner,
                                            int32_t outer) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%3, %4}], [%2];"
      :
      : "r"(dst), "l"(reinterpret_cast<uint64_t>(map)), "r"(bar), "r"(inner), "r"(outer)
      : "memory");
}

// ---- wgmma: warpgroup matrix multiply-accumulate -----------------------------

/// A wgmma matrix descriptor for a K-major operand tile in shared memory laid
/// out as the TMA writes it with CU_TENSOR_MAP_SWIZZLE_128B: rows of 128 bytes
/// (128 FP8 values along K), each 16-byte chunk c of row r stored at chunk
/// c ^ (r % 8). The tile must start on a 1024-byte boundary (where the 8-row
/// swizzle pattern starts, so the descriptor's base-offset field is 0).
///
///   bits  0-13  start address >> 4
///   bits 16-29  leading-dimension byte offset >> 4: unused by swizzled
///               K-major layouts (the PTX ISA says "assumed 1"), set to 1
///   bits 32-45  stride-dimension byte offset >> 4: from one group of 8 rows
///               to the next = 8 * 128 bytes = 1024
///   bits 49-51  base offset: 0 (pattern starts on a 1024-byte boundary)
///   bits 62-63  swizzle mode: 1 = 128-byte swizzle
///
/// To step along K inside the 128-byte row, add (bytes >> 4) to the
/// descriptor: the hardware applies the XOR swizzle to the address it
/// computes, so start + 32 bytes reads logical chunks 2 and 3 of every row.
__device__ __forceinline__ uint64_t make_kmajor_sw128_descriptor(uint32_t smem_addr) {
  return static_cast<uint64_t>((smem_addr & 0x3FFFF) >> 4) |  //
         (static_cast<uint64_t>(1) << 16) |                    // leading byte offset (unused)
         (static_cast<uint64_t>(1024 >> 4) << 32) |            // stride byte offset
         (static_cast<uint64_t>(1) << 62);                     // 128-byte swizzle
}

/// Orders this warpgroup's earlier register and shared-memory accesses before
/// the wgmmas that follow. Required before the first wgmma and whenever the
/// accumulator registers were touched by other instructions since the last one.
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }

/// Closes the group of wgmmas issued since the last commit.
__device__ __forceinline__ void wgmma_commit_group() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }

/// Waits until at most `kPending` committed wgmma groups are still running.
template <int kPending>
__device__ __forceinline__ void wgmma_wait_group() {
  static_assert(kPending >= 0 && kPending <= 7, "wgmma.wait_group takes 0..7");
  asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(kPending) : "memory");
}

/// Tells the compiler that each register of `r` may change here, so it keeps
/// every read and write of the accumulators on its side of this point. wgmma
/// writes its accumulators asynchronously, which the compiler cannot see: put
/// this after wgmma_wait_group (before reading them) and before the wgmmas.
template <int kCount>
__device__ __forceinline__ void fence_registers(float (&r)[kCount]) {
#pragma unroll
  for (int i = 0; i < kCount; ++i) asm volatile("" : "+f"(r[i])::"memory");
}

/// True for the FP8 formats wgmma multiplies (the OCP ones).
template <Fp8Format F>
inline constexpr bool kIsWgmmaFormat = F == Fp8Format::kE4M3 || F == Fp8Format::kE5M2;

/// The wgmma instruction for one pair of operand types (TYPES: "e4m3.e5m2"...),
/// used by wgmma_m64n128k32 only. 64 accumulators per thread: the 64 x 128
/// FP32 tile of D spread over the 128 threads.
#define FP8GEMM_WGMMA_M64N128K32(TYPES)                                                                               \
  asm volatile(                                                                                                       \
      "{\n"                                                                                                           \
      "  .reg .pred accumulate;\n"                                                                                    \
      "  setp.ne.b32 accumulate, %66, 0;\n"                                                                           \
      "  wgmma.mma_async.sync.aligned.m64n128k32.f32." TYPES                                                          \
      " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, "   \
      "%23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, " \
      "%45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, "               \
      "%64, %65, accumulate, 1, 1;\n"                                                                                 \
      "}\n"                                                                                                           \
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]),  \
        "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]),        \
        "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]),       \
        "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]),       \
        "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]),       \
        "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]),       \
        "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]),       \
        "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])                    \
      : "l"(desc_a), "l"(desc_b), "r"(static_cast<uint32_t>(accumulate)))

/// D(64 x 128, FP32) = A(64 x 32) * B(128 x 32)^T + (accumulate ? D : 0), with
/// A and B FP8 (kFormatA, kFormatB: e4m3 or e5m2) in shared memory, both
/// K-major, given by descriptors. Issued by all 128 threads of a warpgroup;
/// asynchronous: the result is in `d` after commit + wait.
///
/// Fragment of D held by a thread (warp w of the warpgroup, lane l), for
/// j = 0..15:  d[4j + 2h + e] = D[16w + l/4 + 8h][8j + 2(l%4) + e],  h, e in {0, 1}.
template <Fp8Format kFormatA, Fp8Format kFormatB>
__device__ __forceinline__ void wgmma_m64n128k32(float (&d)[64], uint64_t desc_a, uint64_t desc_b, bool accumulate) {
  static_assert(kIsWgmmaFormat<kFormatA> && kIsWgmmaFormat<kFormatB>, "wgmma takes e4m3 and e5m2 (OCP) only");
  if constexpr (kFormatA == Fp8Format::kE4M3 && kFormatB == Fp8Format::kE4M3) {
    FP8GEMM_WGMMA_M64N128K32("e4m3.e4m3");
  } else if constexpr (kFormatA == Fp8Format::kE4M3 && kFormatB == Fp8Format::kE5M2) {
    FP8GEMM_WGMMA_M64N128K32("e4m3.e5m2");
  } else if constexpr (kFormatA == Fp8Format::kE5M2 && kFormatB == Fp8Format::kE4M3) {
    FP8GEMM_WGMMA_M64N128K32("e5m2.e4m3");
  } else {
    FP8GEMM_WGMMA_M64N128K32("e5m2.e5m2");
  }
}
#undef FP8GEMM_WGMMA_M64N128K32

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

#endif  // !defined(__CUDA_ARCH__) || FP8GEMM_SM90A_DEVICE
#endif  // defined(FP8GEMM_CUDA)
