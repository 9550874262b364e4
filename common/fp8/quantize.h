/// @file quantize.h
/// @brief Quantization of FP32 matrices to FP8 with FP32 dequantization
///        scales, at four granularities; the same math on the host and GPU.
///
/// Convention used by the whole project: a scale s is a *dequantization*
/// scale, x ~ float(q) * s, with s = amax / max_of_format over the group of
/// elements it covers, and q = float_to_fp8(x / s). An amax of zero or a
/// non-finite amax gives s = 1 (a scale is never zero, NaN or infinite).
/// The "multiplicative" convention of some articles (scale' = max / amax,
/// q = x * scale', x ~ q / scale') is the same thing inverted: s = 1 / scale'.
///
/// Granularities and the layout of the scale array (row-major):
/// | granularity   | one scale per                 | scales shape                   |
/// |---------------|-------------------------------|--------------------------------|
/// | kPerTensor    | the whole matrix              | 1                              |
/// | kPerRow       | row (A: token; B: out channel)| rows                           |
/// | kGroup1x128   | 1 x 128 group along K         | rows x ceil(cols / 128)        |
/// | kBlock128x128 | 128 x 128 block               | ceil(rows / 128) x ceil(cols / 128) |
/// Matrices are row-major with K (cols) contiguous, as A and B of the GEMM.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "common/api/gemm.h"
#include "common/fp8/fp8.h"
#include "common/portability.h"

namespace fp8gemm {

/// Which elements share one scale.
enum class ScaleGranularity : uint8_t {
  kPerTensor = 0,     ///< One scale for the matrix.
  kPerRow = 1,        ///< One scale per row (per token of A, per output channel of B).
  kGroup1x128 = 2,    ///< One scale per row per 128 columns (DeepSeek-V3 activations).
  kBlock128x128 = 3,  ///< One scale per 128 x 128 block (DeepSeek-V3 weights).
};

/// Short name of a granularity ("per_tensor", "per_row", "1x128", "128x128").
inline const char* granularity_name(ScaleGranularity g) {
  switch (g) {
    case ScaleGranularity::kPerTensor: return "per_tensor";
    case ScaleGranularity::kPerRow: return "per_row";
    case ScaleGranularity::kGroup1x128: return "1x128";
    default: return "128x128";
  }
}

/// Columns (along K) covered by one group or block scale.
inline constexpr int kQuantGroupSize = 128;

/// Dequantization scale for a group whose largest magnitude is `amax`:
/// amax / fp8_max(format); 1 when amax is zero, negative or not finite.
FP8GEMM_HOST_DEVICE inline float dequant_scale_from_amax(float amax, Fp8Format format) {
  // Written so that NaN and infinity fail the test and take the fallback.
  if (!(amax > 0.0f && amax <= 3.402823466e38f)) return 1.0f;
  const float s = amax / fp8_max(format);
  // A tiny amax can underflow to a zero (or subnormal) scale; keep it usable.
  return s >= 1.17549435e-38f ? s : 1.0f;
}

/// Quantizes one element with a dequantization scale: float_to_fp8(x / scale).
/// The one definition used by the host functions and the GPU kernels.
FP8GEMM_HOST_DEVICE inline uint8_t quantize_value(float x, float scale, Fp8Format format,
                                                  Fp8Overflow overflow = Fp8Overflow::kSaturate) {
  return float_to_fp8(x / scale, format, overflow);
}

/// Number of scales a rows x cols matrix has at a granularity.
int64_t scale_count(int64_t rows, int64_t cols, ScaleGranularity g);

/// Checks the arguments that quantize() and quantize_on_gpu() share: x not
/// null, rows and cols >= 1, ld >= cols, (rows - 1) * ld + cols fits in 63
/// bits, and format, granularity and overflow are values of their enums.
/// Returns kInvalidArgument with a message naming the first broken rule.
Status validate_quantize_args(const float* x, int64_t rows, int64_t cols, int64_t ld, Fp8Format format,
                              ScaleGranularity granularity, Fp8Overflow overflow);

/// Index into the scale array of the scale that covers element (row, col).
FP8GEMM_HOST_DEVICE inline int64_t scale_index(int64_t row, int64_t col, int64_t rows, int64_t cols,
                                               ScaleGranularity g) {
  (void)rows;
  const int64_t groups_per_row = (cols + kQuantGroupSize - 1) / kQuantGroupSize;
  switch (g) {
    case ScaleGranularity::kPerTensor: return 0;
    case ScaleGranularity::kPerRow: return row;
    case ScaleGranularity::kGroup1x128: return row * groups_per_row + col / kQuantGroupSize;
    default: return (row / kQuantGroupSize) * groups_per_row + col / kQuantGroupSize;
  }
}

/// A quantized matrix on the host: codes (rows x cols, row-major, ld = cols)
/// and the dequantization scales in the layout given above.
struct QuantizedMatrix {
  int64_t rows = 0;                                             ///< Number of rows.
  int64_t cols = 0;                                             ///< Number of columns (K).
  Fp8Format format = Fp8Format::kE4M3;                          ///< Format of the codes.
  ScaleGranularity granularity = ScaleGranularity::kPerTensor;  ///< Which elements share a scale.
  std::vector<uint8_t> codes;                                   ///< rows * cols FP8 codes.
  std::vector<float> scales;                                    ///< scale_count(rows, cols, granularity) scales.
};

/// Quantizes a row-major rows x cols matrix x (leading dimension ld >= cols)
/// on the host: per group, amax -> dequant_scale_from_amax -> quantize_value.
/// NaN elements become NaN codes and do not take part in amax (a NaN never
/// poisons the scale of its group); infinities make the amax infinite, which
/// gives s = 1 for that group. Throws std::invalid_argument, with the message
/// of validate_quantize_args(), on invalid arguments.
QuantizedMatrix quantize(const float* x, int64_t rows, int64_t cols, int64_t ld, Fp8Format format,
                         ScaleGranularity granularity, Fp8Overflow overflow = Fp8Overflow::kSaturate);

/// Exact dequantization: element (r, c) = double(fp8_to_float(code)) * scale.
std::vector<double> dequantize(const QuantizedMatrix& q);

/// Quantizes on the GPU with the same math as quantize(): x (device, rows x
/// cols, leading dimension ld) into codes (device, rows x cols, ld = cols) and
/// scales (device, scale_count entries). Bit-identical to quantize() on the
/// same input. Asynchronous on `stream`. Returns kInvalidArgument for what
/// validate_quantize_args() rejects and for null codes or scales;
/// kNotSupported when cols > 128 * (2^31 - 1) (the grid's x limit) or the
/// build has no kernel image for this GPU; kRuntimeError when the runtime
/// reports another error.
Status quantize_on_gpu(const float* x, int64_t rows, int64_t cols, int64_t ld, Fp8Format format,
                       ScaleGranularity granularity, uint8_t* codes, float* scales, cudaStream_t stream = nullptr,
                       Fp8Overflow overflow = Fp8Overflow::kSaturate);

}  // namespace fp8gemm
