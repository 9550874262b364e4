/// @file tensor_map.h
/// @brief The TMA's description of a global FP8 matrix and of the box it
///        copies into shared memory (host side; the copies are in tma.cuh).
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
                                     uint32_t box_rows, uint32_t box_k) {
  const PFN_cuTensorMapEncodeTiled_v12000 encode = tensor_map_encoder();
  if (encode == nullptr) {
    return Status::error(StatusCode::kNotSupported,
                         "the CUDA driver has no cuTensorMapEncodeTiled (driver older than 12.0)");
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
                         std::string("cuTensorMapEncodeTiled failed with CUresult ") +
                             std::to_string(static_cast<int>(result)) + " (rows = " + std::to_string(rows) +
                             ", K = " + std::to_string(k) + ", ld = " + std::to_string(ld) + ")");
  }
  return Status::success();
}

}  // namespace sm90
}  // namespace fp8gemm
