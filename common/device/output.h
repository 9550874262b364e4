/// @file output.h
/// @brief Writing the FP32 result of a GEMM as the output type of D
///        (BF16, FP32 or FP8 with a scale), identically on the host and the device.
#pragma once

#include <cstdint>

#include "common/api/gemm.h"
#include "common/portability.h"

namespace fp8gemm {

/// Rounds a float to bfloat16 (round-to-nearest-even), returning its bits.
/// NaN stays NaN (quiet); infinities stay infinite.
FP8GEMM_HOST_DEVICE inline uint16_t float_to_bf16_bits(float x) {
  uint32_t bits = float_bits(x);
  if ((bits & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>((bits >> 16) | 0x0040u);
  bits += 0x7FFFu + ((bits >> 16) & 1u);  // round half to even on the dropped 16 bits
  return static_cast<uint16_t>(bits >> 16);
}

/// The float value of a bfloat16 given by its bits (exact).
FP8GEMM_HOST_DEVICE inline float bf16_bits_to_float(uint16_t bits) {
  return float_from_bits(static_cast<uint32_t>(bits) << 16);
}

/// The FP8 code of y in an FP8 output whose dequantization scale is
/// d_scale: fp8(y / d_scale), the division rounded to nearest in FP32, then
/// saturating and round-to-nearest-even (float_to_fp8).
FP8GEMM_HOST_DEVICE inline uint8_t fp8_output_code(float y, OutputType type, float d_scale) {
  return float_to_fp8(y / d_scale, fp8_output_format(type));
}

/// Stores value as element `index` of a BF16 or FP32 output array, the two
/// types of the plain steps. FP8 D goes through store_epilogue_output: keeping
/// the FP8 encoder out of this function keeps it out of every plain kernel
/// that picks the type at run time (on AMD it cost those kernels scratch
/// memory and a register spill).
FP8GEMM_HOST_DEVICE inline void store_output(void* d, int64_t index, OutputType type, float value) {
  if (type == OutputType::kBF16) {
    static_cast<uint16_t*>(d)[index] = float_to_bf16_bits(value);
  } else {
    static_cast<float*>(d)[index] = value;
  }
}

/// Stores value as element `index` of an output array of any type: BF16,
/// FP32, or FP8 with its dequantization scale d_scale (fp8_output_code).
FP8GEMM_HOST_DEVICE inline void store_epilogue_output(void* d, int64_t index, OutputType type, float value,
                                                      float d_scale) {
  if (is_fp8_output(type)) {
    static_cast<uint8_t*>(d)[index] = fp8_output_code(value, type, d_scale);
  } else {
    store_output(d, index, type, value);
  }
}

/// Reads element `index` of an output array of type `type` as a float: exact
/// for BF16 and FP32; for FP8, the code's value times d_scale, rounded to FP32.
FP8GEMM_HOST_DEVICE inline float load_output(const void* d, int64_t index, OutputType type, float d_scale = 1.0f) {
  if (type == OutputType::kBF16) return bf16_bits_to_float(static_cast<const uint16_t*>(d)[index]);
  if (type == OutputType::kFP32) return static_cast<const float*>(d)[index];
  return fp8_to_float(static_cast<const uint8_t*>(d)[index], fp8_output_format(type)) * d_scale;
}

}  // namespace fp8gemm
