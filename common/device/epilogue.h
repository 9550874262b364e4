/// @file epilogue.h
/// @brief The arithmetic of the epilogue, the same on the host and on every
///        GPU: the bias, GELU in its two forms, and the slope bound the
///        tolerance of an activated output is derived from. Kernels (Hopper
///        and CDNA) and the unfused baseline call these; the tests compare
///        them with double-precision formulas.
///
/// Per element, after the K loop and the scales:
///   z = sum + bias[n]   (one FP32 addition)
///   y = activation(z)   (FP32)
///   D = y rounded to D's type (common/device/output.h; FP8: fp8(y / d_scale))
///   amax = max |y| over D (FP8 D with d_amax only)
#pragma once

#include <cmath>
#include <cstdint>

#include "common/api/gemm.h"
#include "common/device/output.h"
#include "common/portability.h"

namespace fp8gemm {

/// sqrt(2 / pi), rounded to float: the tanh form's inner factor.
inline constexpr float kGeluSqrtTwoOverPi = 0.7978845608028654f;
/// The cubic coefficient of the tanh form.
inline constexpr float kGeluCubic = 0.044715f;
/// 1 / sqrt(2), rounded to float: the erf form's argument factor.
inline constexpr float kGeluInvSqrtTwo = 0.7071067811865476f;
/// An upper bound on |GELU'(z)| over all z, for both forms (the largest
/// slope, about 1.129, is near z = 2.4; the most negative, about -0.13, near
/// z = -0.75): an error e in z moves GELU(z) by at most this times e.
inline constexpr double kGeluSlopeBound = 1.13;

/// GELU, tanh form: z / 2 (1 + tanh(u)), u = sqrt(2 / pi) (z + 0.044715 z^3).
/// cuBLASLt's CUBLASLT_EPILOGUE_GELU computes this form.
///
/// Evaluated as z / (1 + e^(-2u)), which is the same function (1 + tanh(u) =
/// 2 / (1 + e^(-2u))), with e^(-2u) = 2^(z (c1 + c2 z^2)) and the constants
/// folded (c1 = -2 sqrt(2 / pi) log2(e), c2 = 0.044715 c1): an exponential
/// and a division instead of tanh, and no cancellation for negative z, where
/// 1 + tanh(u) is a small difference. On an NVIDIA GPU the two are single
/// hardware instructions (ex2.approx, and the reciprocal of __fdividef, each
/// within 2 units in the last place): 7 instructions in all against tanhf's
/// 23, which a kernel pays for every element of D. The limits are exact: z
/// for large z (2^t = 0), -0 for very negative z (2^t = inf).
FP8GEMM_HOST_DEVICE inline float gelu_tanh(float z) {
  constexpr float kC1 = -2.0f * kGeluSqrtTwoOverPi * 1.4426950408889634f;
  constexpr float kC2 = kGeluCubic * kC1;
  const float t = z * fmaf(kC2, z * z, kC1);  // log2 of e^(-2u)
#if defined(__CUDA_ARCH__)
  float e;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(e) : "f"(t));  // flushing a result below 2^-126 changes 1 + e by nothing
  return __fdividef(z, 1.0f + e);
#else
  return z / (1.0f + exp2f(t));
#endif
}

/// GELU, erf form (the definition): z / 2 (1 + erf(z / sqrt(2))).
FP8GEMM_HOST_DEVICE inline float gelu_erf(float z) { return 0.5f * z * (1.0f + erff(z * kGeluInvSqrtTwo)); }

/// The activation `a` of z.
FP8GEMM_HOST_DEVICE inline float apply_activation(float z, Activation a) {
  switch (a) {
    case Activation::kGeluTanh: return gelu_tanh(z);
    case Activation::kGeluErf: return gelu_erf(z);
    default: return z;
  }
}

/// Element n of a bias vector of type `type`, as a float (exact).
FP8GEMM_HOST_DEVICE inline float load_bias(const void* bias, int64_t n, BiasType type) {
  return type == BiasType::kBF16 ? bf16_bits_to_float(static_cast<const uint16_t*>(bias)[n])
                                 : static_cast<const float*>(bias)[n];
}

/// y of one element from its scaled sum: activation(sum + bias), in FP32.
FP8GEMM_HOST_DEVICE inline float epilogue_value(float scaled_sum, float bias, Activation a) {
  return apply_activation(scaled_sum + bias, a);
}

}  // namespace fp8gemm
