/// @file quantize.h
/// @brief Quantization of FP32 matrices to FP8 with FP32 dequantization
///        scales, at four granularities; the same math on the host and GPU.
///
/// Convention used by the whole project: a scale s is a *dequantization*
/// scale, x ~ float(q) * s, with s = amax / max_of_format over the group of
/// elements it covers, and q = float_to_fp8(x / s). Every element must be
/// finite: a NaN or an infinity is an error, not a value (docs/quantization.md,
/// "What quantization accepts"). An all-zero group gets s = 1; a group whose
/// amax / max is below the smallest normal float gets the smallest subnormal
/// scale that still holds its amax (dequant_scale_from_amax), never 1 or 0.
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

/// Dequantization scale for a group whose largest magnitude is `amax`: the
/// smallest scale that maps amax into the format's range, so that no element
/// of the group overflows and the amax element is never rounded to zero.
///
///  - amax = 0 (an all-zero group): 1.
///  - amax / max >= 2^-126 (the smallest normal float): amax / max, rounded to
///    nearest in float (a normal float; the quotient of two normal floats, so
///    no flush-to-zero mode can change it).
///  - amax / max < 2^-126 (amax below about 5.3e-36 for e4m3, 2.8e-36 for
///    e4m3fnuz, 6.7e-34 for the e5m2 formats): k * 2^-149 with k the smallest
///    integer such that k * 2^-149 >= amax / max, a float subnormal (or
///    2^-126 itself). Computed with integers from the bits of amax, so it is
///    exact and the same on every processor. amax / s <= max, and
///    amax / s >= max / (1 + max / (amax * 2^149)) > 0.99, so the amax
///    element keeps a non-zero code. Example: amax = 1e-40, e4m3: k =
///    ceil(71362 / 448) = 160, s = 160 * 2^-149 ~ 2.24e-43, and 1e-40 / s =
///    446.0 encodes as 448.
///  - amax negative, infinite or NaN (no finite group has one): NaN, so that
///    a scale computed from such an amax cannot pass for a valid one.
///    quantize() and quantize_on_gpu() reject non-finite input before they
///    compute any scale.
FP8GEMM_HOST_DEVICE inline float dequant_scale_from_amax(float amax, Fp8Format format) {
  if (amax == 0.0f) return 1.0f;
  // Written so that NaN fails the test too.
  if (!(amax > 0.0f && amax <= 3.402823466e38f)) return float_from_bits(0x7FC00000u);
  const uint32_t bits = float_bits(amax);
  const uint32_t exponent_field = bits >> 23;
  // Only an amax below 2^-105 can be tiny (57344 * 2^-126 < 2^-110). Such
  // an amax is a whole multiple of 2^-149: a = amax * 2^149 < 2^44, exactly.
  if (exponent_field < 22) {
    // A subnormal is its fraction field times 2^-149; a normal 1.fraction
    // times 2^(exponent_field - 127), that is (2^23 + fraction) * 2^-149 *
    // 2^(exponent_field - 1).
    const uint64_t fraction = bits & 0x7FFFFFu;
    const uint64_t a = exponent_field == 0 ? fraction : (fraction | 0x800000u) << (exponent_field - 1);
    const uint64_t max = static_cast<uint64_t>(fp8_max(format));  // 448, 240 or 57344: integers
    if (a < (max << 23)) {                                        // amax / max < 2^-126
      const uint64_t k = (a + max - 1) / max;                     // ceil(a / max), 1 .. 2^23
      return float_from_bits(static_cast<uint32_t>(k));           // k * 2^-149
    }
  }
  return amax / fp8_max(format);
}

/// Quantizes one element with a dequantization scale: float_to_fp8(x / scale).
/// The one definition used by the host functions and the GPU kernels. The
/// division is IEEE's, subnormal scales included: the project is built
/// without flush-to-zero (no fast-math on the host, nvcc's default -ftz=false).
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

/// The error that quantize(), try_quantize() and quantize_on_gpu() return
/// for input that is not finite: kInvalidArgument, with a message that names
/// the rule and the first non-finite element in row-major order, its row,
/// column and value. One definition, so host and GPU say the same.
Status non_finite_input_error(int64_t row, int64_t col, float value);

/// Finds the first element of x, in row-major order, that is NaN or
/// infinite; returns non_finite_input_error() for it, or success when every
/// element is finite. Reads only the rows x cols elements, not the padding.
Status check_finite_input(const float* x, int64_t rows, int64_t cols, int64_t ld);

/// Quantizes a row-major rows x cols matrix x (leading dimension ld >= cols)
/// on the host into *out: per group, amax -> dequant_scale_from_amax ->
/// quantize_value. Returns kInvalidArgument, with *out untouched, for what
/// validate_quantize_args() rejects, for a null out, and for input with a NaN
/// or an infinity (the message of non_finite_input_error()).
Status try_quantize(const float* x, int64_t rows, int64_t cols, int64_t ld, Fp8Format format,
                    ScaleGranularity granularity, QuantizedMatrix* out, Fp8Overflow overflow = Fp8Overflow::kSaturate);

/// As try_quantize(), returning the result: throws std::invalid_argument,
/// whose message is "quantize: " and try_quantize()'s message, where
/// try_quantize() would return an error (invalid arguments, NaN or infinity
/// in x).
QuantizedMatrix quantize(const float* x, int64_t rows, int64_t cols, int64_t ld, Fp8Format format,
                         ScaleGranularity granularity, Fp8Overflow overflow = Fp8Overflow::kSaturate);

/// Exact dequantization: element (r, c) = double(fp8_to_float(code)) * scale.
std::vector<double> dequantize(const QuantizedMatrix& q);

/// Quantizes on the GPU with the same math as quantize(): x (device, rows x
/// cols, leading dimension ld) into codes (device, rows x cols, ld = cols) and
/// scales (device, scale_count entries). Bit-identical to quantize() on the
/// same input. Returns kInvalidArgument for what validate_quantize_args()
/// rejects, for null codes or scales, and, with the message of
/// non_finite_input_error() prefixed by "quantize_on_gpu: ", for x holding a
/// NaN or an infinity (then codes are not written and scales hold no scale);
/// kNotSupported when cols > 128 * (2^31 - 1) (the grid's x limit) or the
/// build has no kernel image for this GPU; kRuntimeError when the runtime
/// reports another error. Finding out whether x is finite waits for `stream`
/// once, after the amax pass; the scale and encode passes are then queued on
/// `stream` and run asynchronously.
Status quantize_on_gpu(const float* x, int64_t rows, int64_t cols, int64_t ld, Fp8Format format,
                       ScaleGranularity granularity, uint8_t* codes, float* scales, cudaStream_t stream = nullptr,
                       Fp8Overflow overflow = Fp8Overflow::kSaturate);

}  // namespace fp8gemm
