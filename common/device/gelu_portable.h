/// @file gelu_portable.h
/// @brief GELU for device code built without a math library: the two forms of
///        common/device/epilogue.h, the tanh form as epilogue.h computes it
///        (with exp2f) and the erf form with erff replaced by polynomials and
///        expf, which every compiler turns into plain instructions.
///
/// Why: the AMD device code of this project is compiled by clang alone
/// (`--cuda-device-only -nogpulib`, no ROCm). There, erff (like tanhf) becomes
/// a call to ROCm's ocml library (`__ocml_erf_f32`), which is not linked, and
/// the code object cannot be built; expf, exp2f, fmaf and the division are
/// lowered by the compiler itself. So a CDNA kernel computes GELU with these
/// functions; the formulas are those of epilogue.h (and of the FP64
/// reference). The tanh form needs no tanh: epilogue.h computes it as
/// z / (1 + e^(-2u)), and that is used as it is. Only erf is evaluated
/// differently. The accuracy of erf_portable and of both forms is tested on
/// the CPU (tests/test_cdna_epilogue.cpp): well inside the 8 u (|z| + |y|)
/// that the check of an activated output allows for the activation's own
/// error (common/check/check.h).
///
/// The polynomials of erf were fitted for this file (near-minimax, by
/// iteratively reweighted least squares against 40-digit mpmath values) and
/// rounded to float.
#pragma once

#include "common/api/gemm.h"
#include "common/device/epilogue.h"
#include "common/portability.h"

namespace fp8gemm {

/// erf(x) in FP32 without a math library, computed for t = |x| and given
/// x's sign. t < 1: t P(t^2), written t + t (P(t^2) - 1) (relative error of
/// the polynomial 1.2e-9); 1 <= t < 4: 1 - e^Q(t), Q a polynomial in t - 2.5
/// fitted to log(erfc(t)) (absolute error 5e-9); beyond 4, where
/// erfc < 2^-25 and erf rounds to 1 in FP32, Q is evaluated at 4. Within 2
/// units in the last place of erf (tested: 1.3 at worst).
///
/// Both pieces are evaluated and one is selected, without a branch: the 64
/// values of a wavefront usually fall on both sides of 1, so with a branch
/// its lanes would run both pieces anyway, behind exec-mask instructions, and
/// the branch would cut a kernel's unrolled loop over its values into one
/// block per value, across which the compiler does not interleave the
/// evaluations. The value is the one a branch would give: each piece is
/// computed as it would be alone.
FP8GEMM_HOST_DEVICE inline float erf_portable(float x) {
  const float t = fabsf(x);
  const float s = t * t;
  float p = 7.853881834e-05f;
  p = fmaf(p, s, -8.010200690e-04f);
  p = fmaf(p, s, 5.188328680e-03f);
  p = fmaf(p, s, -2.685381286e-02f);
  p = fmaf(p, s, 1.128358543e-01f);
  p = fmaf(p, s, -3.761262596e-01f);
  p = fmaf(p, s, 1.283791661e-01f);  // P(0) - 1: t + t p rounds once less than t P
  const float below_one = fmaf(t, p, t);
  const float u = (t > 4.0f ? 4.0f : t) - 2.5f;  // (written so that a NaN stays NaN)
  float q = -5.555068938e-08f;
  q = fmaf(q, u, 1.614955522e-06f);
  q = fmaf(q, u, -1.302814235e-05f);
  q = fmaf(q, u, 7.739040302e-05f);
  q = fmaf(q, u, -4.206192389e-04f);
  q = fmaf(q, u, 2.165165963e-03f);
  q = fmaf(q, u, -1.085822005e-02f);
  q = fmaf(q, u, -9.438936710e-01f);
  q = fmaf(q, u, -5.352680683e+00f);
  q = fmaf(q, u, -7.806815147e+00f);
  const float from_one = 1.0f - expf(q);
  return copysignf(t < 1.0f ? below_one : from_one, x);  // odd, -0 included; NaN takes from_one, a NaN
}

/// GELU, tanh form: gelu_tanh of epilogue.h itself. Everywhere but on an
/// NVIDIA GPU it is z / (1 + 2^t), t = log2 of e^(-2u) (the sigmoid form of
/// z / 2 (1 + tanh(u)), without the cancellation of 1 + tanh(u) for negative
/// z), which needs no math library: on an AMD GPU clang lowers exp2f
/// (v_exp_f32) and the IEEE division (v_div_scale, v_div_fmas, v_div_fixup)
/// itself. So it is called here, not copied: a copy would have to follow
/// every change made to it.
FP8GEMM_HOST_DEVICE inline float gelu_tanh_portable(float z) { return gelu_tanh(z); }

/// GELU, erf form, as gelu_erf in epilogue.h, with erf_portable.
FP8GEMM_HOST_DEVICE inline float gelu_erf_portable(float z) {
  return 0.5f * z * (1.0f + erf_portable(z * kGeluInvSqrtTwo));
}

/// The activation `a` of z, as apply_activation in epilogue.h, without a
/// math library.
FP8GEMM_HOST_DEVICE inline float apply_activation_portable(float z, Activation a) {
  switch (a) {
    case Activation::kGeluTanh: return gelu_tanh_portable(z);
    case Activation::kGeluErf: return gelu_erf_portable(z);
    default: return z;
  }
}

}  // namespace fp8gemm
