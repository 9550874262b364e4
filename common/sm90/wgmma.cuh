/// @file wgmma.cuh
/// @brief wgmma, the warpgroup matrix multiply-accumulate of Hopper: the
///        shared-memory matrix descriptor, the FP8 instruction, and the fences
///        and waits that order its asynchronous work.
#pragma once

#include <cstdint>

#include "common/sm90/arch.h"

#include "common/fp8/fp8.h"

#if FP8GEMM_SM90A_PARSE
namespace fp8gemm {
namespace sm90 {

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
         (static_cast<uint64_t>(1) << 16) |                   // leading byte offset (unused)
         (static_cast<uint64_t>(1024 >> 4) << 32) |           // stride byte offset
         (static_cast<uint64_t>(1) << 62);                    // 128-byte swizzle
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
#define FP8GEMM_WGMMA_M64N128K32(TYPES)                                                                                \
  asm volatile(                                                                                                        \
      "{\n"                                                                                                            \
      "  .reg .pred accumulate;\n"                                                                                     \
      "  setp.ne.b32 accumulate, %66, 0;\n"                                                                            \
      "  wgmma.mma_async.sync.aligned.m64n128k32.f32." TYPES                                                           \
      " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, "    \
      "%23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, " \
      "%45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, "               \
      "%64, %65, accumulate, 1, 1;\n"                                                                                  \
      "}\n"                                                                                                            \
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]),    \
        "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]),         \
        "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]),        \
        "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]),        \
        "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]),        \
        "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]),        \
        "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]),        \
        "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])                      \
      : "l"(desc_a), "l"(desc_b), "r"(static_cast<uint32_t>(accumulate)))

/// The same for N = 256 (wgmma_m64n256k32): 128 accumulators per thread.
#define FP8GEMM_WGMMA_M64N256K32(TYPES)                                                                                \
  asm volatile(                                                                                                        \
      "{\n"                                                                                                            \
      "  .reg .pred accumulate;\n"                                                                                     \
      "  setp.ne.b32 accumulate, %130, 0;\n"                                                                           \
      "  wgmma.mma_async.sync.aligned.m64n256k32.f32." TYPES                                                           \
      " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, "    \
      "%23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, " \
      "%45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, " \
      "%67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, " \
      "%89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, "  \
      "%109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, "   \
      "%127}, "                                                                                                        \
      "%128, %129, accumulate, 1, 1;\n"                                                                                \
      "}\n"                                                                                                            \
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]),    \
        "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]),         \
        "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]),        \
        "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]),        \
        "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]),        \
        "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]),        \
        "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]),        \
        "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]),        \
        "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), "+f"(d[72]),        \
        "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]),        \
        "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]),        \
        "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]),        \
        "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]), "+f"(d[104]),   \
        "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]),              \
        "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]),              \
        "+f"(d[119]), "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]),              \
        "+f"(d[126]), "+f"(d[127])                                                                                     \
      : "l"(desc_a), "l"(desc_b), "r"(static_cast<uint32_t>(accumulate)))

/// The same for N = 64 (wgmma_m64n64k32): 32 accumulators per thread.
#define FP8GEMM_WGMMA_M64N64K32(TYPES)                                                                              \
  asm volatile(                                                                                                     \
      "{\n"                                                                                                         \
      "  .reg .pred accumulate;\n"                                                                                  \
      "  setp.ne.b32 accumulate, %34, 0;\n"                                                                         \
      "  wgmma.mma_async.sync.aligned.m64n64k32.f32." TYPES                                                         \
      " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, " \
      "%23, %24, %25, %26, %27, %28, %29, %30, %31}, "                                                              \
      "%32, %33, accumulate, 1, 1;\n"                                                                               \
      "}\n"                                                                                                         \
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), \
        "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]),      \
        "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]),     \
        "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])                   \
      : "l"(desc_a), "l"(desc_b), "r"(static_cast<uint32_t>(accumulate)))

/// The same for N = 112 (wgmma_m64n112k32): 56 accumulators per thread.
#define FP8GEMM_WGMMA_M64N112K32(TYPES)                                                                                \
  asm volatile(                                                                                                        \
      "{\n"                                                                                                            \
      "  .reg .pred accumulate;\n"                                                                                     \
      "  setp.ne.b32 accumulate, %58, 0;\n"                                                                            \
      "  wgmma.mma_async.sync.aligned.m64n112k32.f32." TYPES                                                           \
      " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, "    \
      "%23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, " \
      "%45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55}, "                                                       \
      "%56, %57, accumulate, 1, 1;\n"                                                                                  \
      "}\n"                                                                                                            \
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]),    \
        "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]),         \
        "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]),        \
        "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]),        \
        "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]),        \
        "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]),        \
        "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55])                      \
      : "l"(desc_a), "l"(desc_b), "r"(static_cast<uint32_t>(accumulate)))

/// The INSTRUCTION macro above for kFormatA and kFormatB, which name its
/// operand types ("e4m3.e5m2"...): the body of each wgmma_m64nNk32.
#define FP8GEMM_WGMMA_FOR_FORMATS(INSTRUCTION)                                         \
  if constexpr (kFormatA == Fp8Format::kE4M3 && kFormatB == Fp8Format::kE4M3) {        \
    INSTRUCTION("e4m3.e4m3");                                                          \
  } else if constexpr (kFormatA == Fp8Format::kE4M3 && kFormatB == Fp8Format::kE5M2) { \
    INSTRUCTION("e4m3.e5m2");                                                          \
  } else if constexpr (kFormatA == Fp8Format::kE5M2 && kFormatB == Fp8Format::kE4M3) { \
    INSTRUCTION("e5m2.e4m3");                                                          \
  } else {                                                                             \
    INSTRUCTION("e5m2.e5m2");                                                          \
  }

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
  FP8GEMM_WGMMA_FOR_FORMATS(FP8GEMM_WGMMA_M64N128K32);
}
#undef FP8GEMM_WGMMA_M64N128K32

/// D(64 x 256, FP32) = A(64 x 32) * B(256 x 32)^T + (accumulate ? D : 0): the
/// N = 256 form of wgmma_m64n128k32, for the wide tile of fast accumulation
/// (step 12). Fragment: d[4j + 2h + e] as there, for j = 0..31.
template <Fp8Format kFormatA, Fp8Format kFormatB>
__device__ __forceinline__ void wgmma_m64n256k32(float (&d)[128], uint64_t desc_a, uint64_t desc_b, bool accumulate) {
  static_assert(kIsWgmmaFormat<kFormatA> && kIsWgmmaFormat<kFormatB>, "wgmma takes e4m3 and e5m2 (OCP) only");
  FP8GEMM_WGMMA_FOR_FORMATS(FP8GEMM_WGMMA_M64N256K32);
}
#undef FP8GEMM_WGMMA_M64N256K32

/// D(64 x 64, FP32) = A(64 x 32) * B(64 x 32)^T + (accumulate ? D : 0): the
/// N = 64 form of wgmma_m64n128k32, for tiles of 64 columns (step 08's
/// small-M tiles). Fragment: d[4j + 2h + e] as there, for j = 0..7.
template <Fp8Format kFormatA, Fp8Format kFormatB>
__device__ __forceinline__ void wgmma_m64n64k32(float (&d)[32], uint64_t desc_a, uint64_t desc_b, bool accumulate) {
  static_assert(kIsWgmmaFormat<kFormatA> && kIsWgmmaFormat<kFormatB>, "wgmma takes e4m3 and e5m2 (OCP) only");
  FP8GEMM_WGMMA_FOR_FORMATS(FP8GEMM_WGMMA_M64N64K32);
}
#undef FP8GEMM_WGMMA_M64N64K32

/// D(64 x 112, FP32) = A(64 x 32) * B(112 x 32)^T + (accumulate ? D : 0): the
/// N = 112 form of wgmma_m64n128k32, for step 12's narrow tile (as many
/// columns as the GPU's waves make worth it). Fragment: d[4j + 2h + e] as
/// there, for j = 0..13.
template <Fp8Format kFormatA, Fp8Format kFormatB>
__device__ __forceinline__ void wgmma_m64n112k32(float (&d)[56], uint64_t desc_a, uint64_t desc_b, bool accumulate) {
  static_assert(kIsWgmmaFormat<kFormatA> && kIsWgmmaFormat<kFormatB>, "wgmma takes e4m3 and e5m2 (OCP) only");
  FP8GEMM_WGMMA_FOR_FORMATS(FP8GEMM_WGMMA_M64N112K32);
}
#undef FP8GEMM_WGMMA_M64N112K32

#undef FP8GEMM_WGMMA_FOR_FORMATS

/// wgmma_m64n256k32, wgmma_m64n128k32, wgmma_m64n112k32 or wgmma_m64n64k32 by
/// the tile width kN: kN / 2 accumulators per thread.
template <int kN, Fp8Format kFormatA, Fp8Format kFormatB>
__device__ __forceinline__ void wgmma_m64nk32(float (&d)[kN / 2], uint64_t desc_a, uint64_t desc_b, bool accumulate) {
  static_assert(kN == 256 || kN == 128 || kN == 112 || kN == 64, "wgmma N of 256, 128, 112 or 64");
  if constexpr (kN == 256) {
    wgmma_m64n256k32<kFormatA, kFormatB>(d, desc_a, desc_b, accumulate);
  } else if constexpr (kN == 128) {
    wgmma_m64n128k32<kFormatA, kFormatB>(d, desc_a, desc_b, accumulate);
  } else if constexpr (kN == 112) {
    wgmma_m64n112k32<kFormatA, kFormatB>(d, desc_a, desc_b, accumulate);
  } else {
    wgmma_m64n64k32<kFormatA, kFormatB>(d, desc_a, desc_b, accumulate);
  }
}

}  // namespace sm90
}  // namespace fp8gemm
#endif  // FP8GEMM_SM90A_PARSE
