/// @file split_k.h
/// @brief Split-K as plain functions, the same on the host and on every GPU:
///        how many slices K is cut into, and which K blocks each slice
///        takes. The split-K kernels (Hopper and CDNA) and their tests share
///        them, so the partition a kernel uses is the one the CPU tests check.
///
/// When a GEMM has fewer output tiles than the GPU has SMs (a decode shape:
/// 64 x 2112 x 7168 has 17 tiles of 128 x 128 for 132 SMs), most SMs idle.
/// Split-K gives each tile `slices` blocks, each summing one contiguous run
/// of K blocks into an FP32 partial, and adds the partials afterwards in a
/// fixed order (slice 0, 1, 2, ...), so the result is the same in every run.
#pragma once

#include <cstdint>

#include "common/device/tile_scheduler.h"  // Exactly
#include "common/portability.h"

namespace fp8gemm {

/// A run of K blocks: [first, first + count).
struct KBlockRange {
  int64_t first = 0;  ///< The first K block of the run.
  int64_t count = 0;  ///< How many K blocks it has (0 for a slice beyond K).
};

/// The K blocks of slice `slice` (0 <= slice < slices) when `k_blocks` K
/// blocks are cut into `slices` contiguous runs as equal as they can be: the
/// first k_blocks % slices slices get one block more. The runs cover every K
/// block exactly once, in order. With more slices than K blocks, the last
/// slices are empty (count 0).
/// The arithmetic is done in `Int` (int64_t unless named: see
/// common/device/tile_scheduler.h on why a kernel may ask for int).
template <class Int = int64_t>
FP8GEMM_HOST_DEVICE inline KBlockRange k_slice(typename Exactly<Int>::type k_blocks, int slices, int slice) {
  const Int base = k_blocks / slices;
  const Int extra = k_blocks % slices;
  KBlockRange r;
  r.count = base + (slice < extra ? 1 : 0);
  r.first = slice * base + (slice < extra ? slice : extra);
  return r;
}

/// The slice count of a GEMM with `tiles` output tiles and `k_blocks` K
/// blocks on a GPU of `sm_count` SMs:
///   - 1 when the tiles alone fill the GPU (tiles >= sm_count): splitting
///     would only add the partials' traffic;
///   - otherwise as many slices as keep every tile's blocks within one wave,
///     floor(sm_count / tiles), but no more than leave each slice at least
///     `min_k_blocks_per_slice` K blocks (a slice must amortize its pipeline
///     fill and its partial's write), and no more than `max_slices`.
/// Always at least 1. Examples with 128 x 128 tiles, K blocks of 128 and 132
/// SMs (min 4 K blocks per slice, at most 16 slices): 64 x 2112 x 7168 (17
/// tiles, 56 K blocks) gives 7; 1024 x 1024 x 16384 (64 tiles) gives 2;
/// 4096 x 4096 x 4096 gives 1.
FP8GEMM_HOST_DEVICE inline int split_k_slices(int64_t tiles, int64_t k_blocks, int sm_count,
                                              int64_t min_k_blocks_per_slice, int max_slices) {
  if (tiles <= 0 || k_blocks <= 0 || sm_count <= 0 || tiles >= sm_count) return 1;
  int64_t slices = sm_count / tiles;
  if (min_k_blocks_per_slice > 0 && slices > k_blocks / min_k_blocks_per_slice) {
    slices = k_blocks / min_k_blocks_per_slice;
  }
  if (slices > max_slices) slices = max_slices;
  return slices < 1 ? 1 : static_cast<int>(slices);
}

/// The sum of one element of D over the slices, in slice order:
/// ((p0 + p1) + p2) + ... in FP32, whatever order the slices finished in, so
/// that a result is the same bit for bit in every run. `partial(s)` returns
/// slice s's partial sum of the element (0 <= s < slices <= kMaxSlices); the
/// loop is unrolled kMaxSlices times, so a kernel's partials can stay in
/// registers. Both split-K kernels add their partials through this function,
/// and the CPU tests check its order.
template <int kMaxSlices, typename Partial>
FP8GEMM_HOST_DEVICE inline float sum_slices_in_order(int slices, Partial&& partial) {
  float sum = partial(0);
#if defined(__CUDA_ARCH__) || \
    defined(__HIP_DEVICE_COMPILE__)  // device passes only: the host compiler has no such pragma
#pragma unroll
#endif
  for (int s = 1; s < kMaxSlices; ++s) {
    if (s < slices) sum += partial(s);
  }
  return sum;
}

/// A run of rows of a block tile: [first, first + count).
struct RowRange {
  int first = 0;  ///< The first row of the run.
  int count = 0;  ///< How many rows it has (0 for a slice beyond the rows).
};

/// The rows of a tile of `block_rows` rows that slice `slice` of `slices`
/// adds up and stores when the slices share the reduction (the cluster form
/// of the Hopper kernel): ceil(block_rows / slices) rows each, in order, the
/// last slices fewer or none. Every row belongs to exactly one slice.
FP8GEMM_HOST_DEVICE inline RowRange slice_rows(int block_rows, int slices, int slice) {
  const int per_slice = (block_rows + slices - 1) / slices;
  RowRange r;
  r.first = slice * per_slice < block_rows ? slice * per_slice : block_rows;
  const int end = r.first + per_slice < block_rows ? r.first + per_slice : block_rows;
  r.count = end - r.first;
  return r;
}

}  // namespace fp8gemm
