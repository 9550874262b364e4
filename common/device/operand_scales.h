/// @file operand_scales.h
/// @brief Where a GEMM kernel finds the dequantization scales of A or B
///        (GemmArgs: a_scale / a_scales at a ScaleGranularity; docs/scales.md),
///        split the way a kernel applies them: the part constant along K,
///        applied once to the finished sum in the epilogue, and the part that
///        changes every 128 of K, applied to each K block's partial sum.
///
/// The layouts are those of common/fp8/quantize.h (scale_index): per tensor
/// one float, per row one per row, 1 x 128 rows x ceil(K / 128), 128 x 128
/// ceil(rows / 128) x ceil(K / 128), row-major. Every scale is the product of
/// its two parts: constant_scales(...).of_row(row) * k_block_scales(...)[kb]
/// (where the second is not nullptr) is the scale of element (row, 128 kb).
#pragma once

#include <cstdint>

#include "common/api/gemm.h"
#include "common/fp8/quantize.h"
#include "common/portability.h"

namespace fp8gemm {

/// True for the granularities whose scales change along K (1 x 128 and
/// 128 x 128): a kernel applies them per K block of kQuantGroupSize, not in
/// the epilogue.
FP8GEMM_HOST_DEVICE constexpr bool scales_change_along_k(ScaleGranularity g) {
  return g == ScaleGranularity::kGroup1x128 || g == ScaleGranularity::kBlock128x128;
}

/// The scales of one operand that are constant along K, for the epilogue:
/// per tensor, the one scale (`tensor`); per row, a pointer to the rows'
/// scales; for a granularity that changes along K, 1 (its scales are applied
/// per K block instead).
struct ConstantScales {
  float tensor = 1.0f;          ///< The per-tensor scale; 1 for the other granularities.
  const float* rows = nullptr;  ///< Per row: one scale per row; nullptr otherwise.

  /// The constant-along-K scale of row `row`.
  FP8GEMM_HOST_DEVICE float of_row(int64_t row) const { return rows != nullptr ? tensor * rows[row] : tensor; }
};

/// The constant-along-K scales of an operand whose scales are `scales` (a
/// device pointer in the layout above, or nullptr) at granularity `g`, with
/// host scale `host_scale` (GemmArgs::a_scale or b_scale). Reads the float a
/// per-tensor pointer points to, so a kernel calls it once, not per element.
FP8GEMM_HOST_DEVICE inline ConstantScales constant_scales(ScaleGranularity g, float host_scale, const float* scales) {
  ConstantScales s;
  if (g == ScaleGranularity::kPerTensor) s.tensor = scales != nullptr ? *scales : host_scale;
  if (g == ScaleGranularity::kPerRow) s.rows = scales;
  return s;
}

/// For 1 x 128 and 128 x 128: the scales of K blocks 0, 1, 2, ... of row `row`
/// of an operand with `cols` columns (K), whose scales are `scales`: the scale
/// of K block kb (columns 128 kb .. 128 kb + 127) is element kb of the result.
/// nullptr for the granularities constant along K.
FP8GEMM_HOST_DEVICE inline const float* k_block_scales(ScaleGranularity g, const float* scales, int64_t row,
                                                       int64_t cols) {
  return scales_change_along_k(g) ? scales + scale_index(row, 0, /*rows=*/0, cols, g) : nullptr;
}

}  // namespace fp8gemm
