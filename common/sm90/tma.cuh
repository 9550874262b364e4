/// @file tma.cuh
/// @brief The tensor memory accelerator: one thread starts a bulk copy of a
///        2D box of a matrix into shared memory; an mbarrier counts its bytes.
#pragma once

#include <cstdint>

#include "common/sm90/arch.h"

#include "common/sm90/tensor_map.h"

#if FP8GEMM_SM90A_PARSE
namespace fp8gemm {
namespace sm90 {

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

}  // namespace sm90
}  // namespace fp8gemm
#endif  // FP8GEMM_SM90A_PARSE
