/// @file tma.cuh
/// @brief The tensor memory accelerator: one thread starts a bulk copy of a
///        2D box of a matrix into shared memory (an mbarrier counts its
///        bytes), or out of shared memory into the matrix (a bulk group
///        tracks it).
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

/// tma_load_2d into every block of the cluster whose bit is set in
/// `block_mask` (bit r: the block of rank r): one read of the box from the L2,
/// delivered to the same shared address `dst` in each of those blocks, its
/// bytes counted by the barrier at the same address `bar` in each. Every
/// receiving block's barrier must expect them (mbarrier_arrive_expect_tx by
/// its own producer), and the box's shared memory must be free in every one.
__device__ __forceinline__ void tma_load_2d_multicast(uint32_t dst, const CUtensorMap* map, uint32_t bar, int32_t inner,
                                                      int32_t outer, uint16_t block_mask) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster"
      " [%0], [%1, {%3, %4}], [%2], %5;"
      :
      : "r"(dst), "l"(reinterpret_cast<uint64_t>(map)), "r"(bar), "r"(inner), "r"(outer), "h"(block_mask)
      : "memory");
}

/// Makes this thread's earlier generic-proxy writes to shared memory (plain
/// stores, stmatrix) visible to the async proxy, which the TMA reads through.
/// Every writing thread fences before the barrier that precedes tma_store_2d.
__device__ __forceinline__ void fence_shared_for_tma() { asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); }

/// Copies the box at shared-memory address `src` to element coordinates
/// (`inner`, `outer`) of the matrix described by `map`, asynchronously; the
/// parts of the box outside the matrix are not written. One thread issues it,
/// then closes the group (tma_store_commit_group) and, before the shared
/// memory is written again or the block exits, waits for the group's reads
/// (tma_store_wait_read).
__device__ __forceinline__ void tma_store_2d(const CUtensorMap* map, uint32_t src, int32_t inner, int32_t outer) {
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%0, {%2, %3}], [%1];"
               :
               : "l"(reinterpret_cast<uint64_t>(map)), "r"(src), "r"(inner), "r"(outer)
               : "memory");
}

/// Closes the bulk group of the TMA stores this thread issued since the last commit.
__device__ __forceinline__ void tma_store_commit_group() { asm volatile("cp.async.bulk.commit_group;" ::: "memory"); }

/// Waits until this thread's committed TMA stores have read their shared
/// memory (the writes to global memory may still be in flight; they complete
/// before the grid does).
__device__ __forceinline__ void tma_store_wait_read() { asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory"); }

/// The shared address of byte `byte` (< 128) of row `row` of a box the TMA
/// copies with the 128-byte swizzle, starting at `box` (1024-byte aligned):
/// the 16-byte chunk c of row r lies at chunk c ^ (r % 8) (see
/// make_kmajor_sw128_descriptor in wgmma.cuh, which reads the same layout).
__device__ __forceinline__ uint32_t swizzled_128b_address(uint32_t box, int row, int byte) {
  return box + row * 128 + ((((byte >> 4) ^ row) & 7) << 4) + (byte & 15);
}

/// Stores four 8 x 8 matrices of 16-bit values from registers into shared
/// memory: matrix q's element (r, 2c) and (r, 2c + 1) are the pair in
/// `pairs[q]` of lane 4r + c (the wgmma accumulator layout), and lane 8q + r
/// gives the shared address of matrix q's row r (16 bytes).
__device__ __forceinline__ void stmatrix_x4(uint32_t row_address, const uint32_t (&pairs)[4]) {
  asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};" ::"r"(row_address), "r"(pairs[0]),
               "r"(pairs[1]), "r"(pairs[2]), "r"(pairs[3])
               : "memory");
}

}  // namespace sm90
}  // namespace fp8gemm
#endif  // FP8GEMM_SM90A_PARSE
