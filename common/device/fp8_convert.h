/// @file fp8_convert.h
/// @brief Fast FP8 -> FP32 decoding of four packed codes, with the conversion
///        instruction of the GPU where it has one for the format, and the
///        software codec of fp8.h everywhere else. Exact: the same float as
///        fp8_to_float<F> for every code (NaN as a NaN).
///
/// Which path each target takes:
///
/// | target               | hardware path for  | instructions per 4 codes                        |
/// |----------------------|--------------------|-------------------------------------------------|
/// | CUDA sm_89 and newer | e4m3, e5m2 (OCP)   | 2 x cvt.rn.f16x2.e4m3x2 (or e5m2x2), 4 x        |
/// |                      |                    | cvt.f32.f16; SASS: F2FP.F16.E4M3.UNPACK_B,      |
/// |                      |                    | HADD2.F32, and a shift for the upper pair       |
/// | AMD gfx942 (CDNA3)   | e4m3fnuz, e5m2fnuz | 2 x v_cvt_pk_f32_fp8 (or _bf8)                  |
/// | AMD gfx950 (CDNA4)   | e4m3, e5m2 (OCP)   | 2 x v_cvt_pk_f32_fp8 (or _bf8)                  |
/// | anything else, host  | none               | fp8_to_float<F> per code (~8 integer ops each)  |
///
/// The same AMD instructions decode FNUZ codes on gfx942 and OCP codes on
/// gfx950: the format is a property of the chip, not of the opcode. A format
/// that the chip's instruction does not decode (FNUZ on NVIDIA and gfx950, OCP
/// on gfx942) takes the software codec.
#pragma once

#include <cstdint>

#include "common/fp8/fp8.h"
#include "common/portability.h"

namespace fp8gemm {

/// Four floats, 16-byte aligned so that one of them is one 16-byte load or
/// store (LDS.128 / ds_read_b128). Element i comes from byte i of a packed word.
struct alignas(16) Float4 {
  float v[4];  ///< The four values, in byte order.
};

/// True when fp8x4_to_float4<F> uses a conversion instruction in the code
/// being compiled (device code for the target); false on the host.
template <Fp8Format F>
FP8GEMM_HOST_DEVICE constexpr bool fp8_decodes_in_hardware() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
  return F == Fp8Format::kE4M3 || F == Fp8Format::kE5M2;
#elif defined(__gfx950__)
  return F == Fp8Format::kE4M3 || F == Fp8Format::kE5M2;
#elif defined(__gfx942__)
  return F == Fp8Format::kE4M3Fnuz || F == Fp8Format::kE5M2Fnuz;
#else
  return false;
#endif
}

namespace detail {

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
/// Two OCP codes (low byte first) to two floats: FP8 -> half2 in one
/// instruction, then each half widened to float (exact: every FP8 value of
/// e4m3 and e5m2 is a half).
template <Fp8Format F>
__device__ inline void cuda_fp8x2_to_float2(uint16_t pair, float& lo, float& hi) {
  uint32_t halves;
  if constexpr (F == Fp8Format::kE4M3) {
    asm("cvt.rn.f16x2.e4m3x2 %0, %1;" : "=r"(halves) : "h"(pair));
  } else {
    asm("cvt.rn.f16x2.e5m2x2 %0, %1;" : "=r"(halves) : "h"(pair));
  }
  asm("{\n\t.reg .b16 l, h;\n\tmov.b32 {l, h}, %2;\n\tcvt.f32.f16 %0, l;\n\tcvt.f32.f16 %1, h;\n\t}"
      : "=f"(lo), "=f"(hi)
      : "r"(halves));
}
#endif

#if defined(__gfx942__) || defined(__gfx950__)
/// What the AMD packed conversion builtins return.
using AmdFloat2 = float __attribute__((ext_vector_type(2)));
#endif

}  // namespace detail

/// Decodes the four FP8 codes of format F packed in `packed` (byte i, i.e.
/// bits 8i..8i+7, is the code at the lowest address + i) into four floats.
/// Exact for every code; equal to fp8_to_float<F> byte by byte.
template <Fp8Format F>
FP8GEMM_HOST_DEVICE inline Float4 fp8x4_to_float4(uint32_t packed) {
  Float4 out;
  if constexpr (fp8_decodes_in_hardware<F>()) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890  // cuda_fp8x2_to_float2 exists only there
    detail::cuda_fp8x2_to_float2<F>(static_cast<uint16_t>(packed), out.v[0], out.v[1]);
    detail::cuda_fp8x2_to_float2<F>(static_cast<uint16_t>(packed >> 16), out.v[2], out.v[3]);
#elif defined(__gfx942__) || defined(__gfx950__)
    // The second argument picks the 16-bit half of the word: false = bytes 0-1.
    const int word = static_cast<int>(packed);
    detail::AmdFloat2 lo, hi;
    if constexpr (fp8_exponent_bits(F) == 4) {  // "fp8" in AMD's names
      lo = __builtin_amdgcn_cvt_pk_f32_fp8(word, false);
      hi = __builtin_amdgcn_cvt_pk_f32_fp8(word, true);
    } else {  // "bf8": the e5m2 family
      lo = __builtin_amdgcn_cvt_pk_f32_bf8(word, false);
      hi = __builtin_amdgcn_cvt_pk_f32_bf8(word, true);
    }
    out.v[0] = lo[0];
    out.v[1] = lo[1];
    out.v[2] = hi[0];
    out.v[3] = hi[1];
#endif
  } else {
    for (int i = 0; i < 4; ++i) out.v[i] = fp8_to_float<F>(static_cast<uint8_t>(packed >> (8 * i)));
  }
  return out;
}

}  // namespace fp8gemm
