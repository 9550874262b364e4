/// @file output.h
/// @brief Writing the FP32 result of a GEMM as the output type of D
///        (BF16 or FP32), identically on the host and the device.
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

/// Stores value as element `index` of an output array of type `type`.
FP8GEMM_HOST_DEVICE inline void store_output(void* d, int64_t index, OutputType type, float value) {
  if (type == OutputType::kBF16) {
    static_cast<uint16_t*>(d)[index] = float_to_bf16_bits(value);
  } else {
    static_cast<float*>(d)[index] = value;
  }
}

/// Reads element `index` of an output array of type `type` as a float (exact).
FP8GEMM_HOST_DEVICE inline float load_output(const void* d, int64_t index, OutputType type) {
  return type == OutputType::kBF16 ? bf16_bits_to_float(static_cast<const uint16_t*>(d)[index])
                                   : static_cast<const float*>(d)[index];
}

}  // namespace fp8gemm
