/// @file tensor_map.h
/// @brief The TMA's description of a global matrix and of the box it copies
///        to or from shared memory (host side; the copies are in tma.cuh).
#pragma once

#include <cuda.h>          // CUtensorMap and its enums: types only, nothing links libcuda
#include <cudaTypedefs.h>  // PFN_cuTensorMapEncodeTiled_v12000

#include <cstdint>
#include <string>

#include "common/sm90/arch.h"

namespace fp8gemm {
namespace sm90 {

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

/// Describes a row-major matrix of `rows` x `cols` elements of
/// `element_bytes` bytes each (`ld_bytes` between rows) for TMA copies of
/// `box_rows` x `box_cols` boxes to and from shared memory with the 128-byte
/// swizzle: each box row must be exactly 128 bytes (box_cols * element_bytes).
///
/// The global extent is `cols`, not the row pitch: columns past it (padding)
/// are out of bounds, and so are rows >= `rows`. A load fills out-of-bounds
/// elements of a box with zeros; a store skips them.
///
/// The TMA requires: base 16-byte aligned, ld_bytes a multiple of 16 (and
/// < 2^40), every extent <= 2^32. On failure returns kNotSupported naming the
/// driver's error.
inline Status make_swizzled_tensor_map(CUtensorMap* map, const void* base, int element_bytes, int64_t rows,
                                       int64_t cols, int64_t ld_bytes, uint32_t box_rows, uint32_t box_cols) {
  const PFN_cuTensorMapEncodeTiled_v12000 encode = tensor_map_encoder();
  if (encode == nullptr) {
    return Status::error(StatusCode::kNotSupported,
                         "the CUDA driver has no cuTensorMapEncodeTiled (driver older than 12.0)");
  }
  // The TMA only moves bytes: an unsigned type of the element's width will do.
  const CUtensorMapDataType type = element_bytes == 1   ? CU_TENSOR_MAP_DATA_TYPE_UINT8
                                   : element_bytes == 2 ? CU_TENSOR_MAP_DATA_TYPE_UINT16
                                                        : CU_TENSOR_MAP_DATA_TYPE_UINT32;
  const cuuint64_t global_dim[2] = {static_cast<cuuint64_t>(cols), static_cast<cuuint64_t>(rows)};  // innermost first
  const cuuint64_t global_stride[1] = {static_cast<cuuint64_t>(ld_bytes)};  // bytes from one row to the next
  const cuuint32_t box_dim[2] = {box_cols, box_rows};
  const cuuint32_t element_stride[2] = {1, 1};
  const CUresult result =
      encode(map, type, 2, const_cast<void*>(base), global_dim, global_stride, box_dim, element_stride,
             CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
             CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);  // OOB_FILL_NONE = zeros
  if (result != CUDA_SUCCESS) {
    return Status::error(StatusCode::kNotSupported,
                         std::string("cuTensorMapEncodeTiled failed with CUresult ") +
                             std::to_string(static_cast<int>(result)) + " (rows = " + std::to_string(rows) +
                             ", columns = " + std::to_string(cols) + ", ld = " + std::to_string(ld_bytes) + " bytes)");
  }
  return Status::success();
}

/// Describes a K-major FP8 matrix (rows x k bytes, `ld` bytes between rows)
/// for TMA loads of `box_rows` x `box_k` boxes in the 128-byte swizzle that
/// wgmma's K-major layout expects (box_k must be 128). A tile that hangs over
/// the edge of the matrix is zero-filled, so it contributes 0 to the dot
/// products: no bounds checks in the main loop.
inline Status make_kmajor_tensor_map(CUtensorMap* map, const uint8_t* base, int64_t rows, int64_t k, int64_t ld,
                                     uint32_t box_rows, uint32_t box_k) {
  return make_swizzled_tensor_map(map, base, 1, rows, k, ld, box_rows, box_k);
}

}  // namespace sm90
}  // namespace fp8gemm
