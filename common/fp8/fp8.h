/// @file fp8.h
/// @brief The FP8 codec: the four 8-bit float formats, float -> FP8 encoding
///        (round-to-nearest-even or stochastic, saturating or not) and exact
///        FP8 -> float decoding. Same code on the host and the device.
///
/// Every FP8 code is `S EEEE MMM` (e4m3) or `S EEEEE MM` (e5m2). A normal code
/// is (-1)^S * 2^(E - bias) * 1.M, a subnormal (E = 0) is (-1)^S * 2^(1 - bias) * 0.M.
/// The formats differ in bias and in what the all-ones patterns mean:
///
/// | format     | bias | max    | NaN              | infinity | -0  |
/// |------------|------|--------|------------------|----------|-----|
/// | e4m3 (OCP) | 7    | 448    | S.1111.111       | none     | yes |
/// | e5m2 (OCP) | 15   | 57344  | S.11111.{01,10,11} | S.11111.00 | yes |
/// | e4m3fnuz   | 8    | 240    | 0x80 only        | none     | no  |
/// | e5m2fnuz   | 16   | 57344  | 0x80 only        | none     | no  |
///
/// NVIDIA Hopper and AMD CDNA4 (gfx950) use the OCP formats, AMD CDNA3 (gfx942)
/// the FNUZ ones ("finite, no negative zero": 0x80 is the only NaN).
#pragma once

#include <cstdint>

#include "common/portability.h"

namespace fp8gemm {

/// The 8-bit floating-point formats.
enum class Fp8Format : uint8_t {
  kE4M3 = 0,      ///< OCP E4M3FN: bias 7, max 448, NaN = S.1111.111, no infinity.
  kE5M2 = 1,      ///< OCP E5M2: bias 15, max 57344, IEEE-style infinities and NaNs.
  kE4M3Fnuz = 2,  ///< AMD CDNA3 E4M3FNUZ: bias 8, max 240, single NaN 0x80.
  kE5M2Fnuz = 3,  ///< AMD CDNA3 E5M2FNUZ: bias 16, max 57344, single NaN 0x80.
};

/// Number of formats in Fp8Format, for iterating over all of them.
inline constexpr int kNumFp8Formats = 4;

/// What to do with a finite value whose magnitude rounds above the format's max.
enum class Fp8Overflow : uint8_t {
  kSaturate,    ///< Clamp to +-max (also infinities). The default, as in cuda_fp8.h's __NV_SATFINITE.
  kNoSaturate,  ///< Give infinity (e5m2) or NaN (e4m3, FNUZ formats), as __NV_NOSAT.
};

/// Exponent field width of a format.
FP8GEMM_HOST_DEVICE constexpr int fp8_exponent_bits(Fp8Format f) {
  return (f == Fp8Format::kE4M3 || f == Fp8Format::kE4M3Fnuz) ? 4 : 5;
}

/// Mantissa field width of a format (3 for e4m3 variants, 2 for e5m2 variants).
FP8GEMM_HOST_DEVICE constexpr int fp8_mantissa_bits(Fp8Format f) { return 7 - fp8_exponent_bits(f); }

/// Exponent bias of a format.
FP8GEMM_HOST_DEVICE constexpr int fp8_bias(Fp8Format f) {
  switch (f) {
    case Fp8Format::kE4M3: return 7;
    case Fp8Format::kE5M2: return 15;
    case Fp8Format::kE4M3Fnuz: return 8;
    default: return 16;
  }
}

/// True for the FNUZ formats (0x80 is NaN, no infinity, no negative zero).
FP8GEMM_HOST_DEVICE constexpr bool fp8_is_fnuz(Fp8Format f) {
  return f == Fp8Format::kE4M3Fnuz || f == Fp8Format::kE5M2Fnuz;
}

/// Code (without sign) of the largest finite magnitude.
FP8GEMM_HOST_DEVICE constexpr uint8_t fp8_max_magnitude_code(Fp8Format f) {
  switch (f) {
    case Fp8Format::kE4M3: return 0x7E;  // 0x7F is NaN
    case Fp8Format::kE5M2: return 0x7B;  // 0x7C is infinity
    default: return 0x7F;                // FNUZ: every pattern but 0x80 is finite
  }
}

/// Largest finite value: 448, 57344, 240, 57344.
FP8GEMM_HOST_DEVICE constexpr float fp8_max(Fp8Format f) {
  switch (f) {
    case Fp8Format::kE4M3: return 448.0f;
    case Fp8Format::kE4M3Fnuz: return 240.0f;
    default: return 57344.0f;
  }
}

/// Short lowercase name ("e4m3", "e5m2", "e4m3fnuz", "e5m2fnuz").
inline const char* fp8_name(Fp8Format f) {
  switch (f) {
    case Fp8Format::kE4M3: return "e4m3";
    case Fp8Format::kE5M2: return "e5m2";
    case Fp8Format::kE4M3Fnuz: return "e4m3fnuz";
    default: return "e5m2fnuz";
  }
}

// -----------------------------------------------------------------------------
// FP8 -> float (exact: every FP8 value is a float)
// -----------------------------------------------------------------------------

/// Decodes one FP8 code of format F. Exact for every code.
///
/// Normal codes: shift the 7 magnitude bits so that the FP8 exponent lands in
/// the float exponent field and the mantissa at the top of the float mantissa,
/// then add (127 - bias) to the exponent: two integer operations. Subnormal
/// codes (exponent field 0) are M * 2^(1 - bias - mantissa_bits), converted
/// from the integer M; done this way (instead of multiplying a float subnormal
/// by a power of two) the result is right even where the float unit flushes
/// subnormals to zero.
template <Fp8Format F>
FP8GEMM_HOST_DEVICE inline float fp8_to_float(uint8_t code) {
  constexpr int kMantissa = fp8_mantissa_bits(F);
  constexpr int kBias = fp8_bias(F);
  const uint32_t magnitude = code & 0x7Fu;
  const uint32_t sign = static_cast<uint32_t>(code & 0x80u) << 24;
  if constexpr (fp8_is_fnuz(F)) {
    if (code == 0x80) return float_from_bits(0x7FC00000u);  // the single NaN
  } else if constexpr (F == Fp8Format::kE4M3) {
    if (magnitude == 0x7F) return float_from_bits(sign | 0x7FC00000u);
  } else {  // e5m2: exponent field all ones is infinity (mantissa 0) or NaN
    if (magnitude >= 0x7C) return float_from_bits(sign | (magnitude == 0x7C ? 0x7F800000u : 0x7FC00000u));
  }
  float value;
  if (magnitude >= (1u << kMantissa)) {  // normal
    value = float_from_bits((magnitude << (23 - kMantissa)) + (static_cast<uint32_t>(127 - kBias) << 23));
  } else {                                       // subnormal or zero: magnitude * 2^(1 - bias - mantissa_bits), exact
    constexpr int kExp = 1 - kBias - kMantissa;  // >= -19, a normal float
    value = static_cast<float>(magnitude) * float_from_bits(static_cast<uint32_t>(127 + kExp) << 23);
  }
  return float_from_bits(float_bits(value) | sign);
}

/// Decodes one FP8 code whose format is known only at run time.
FP8GEMM_HOST_DEVICE inline float fp8_to_float(uint8_t code, Fp8Format f) {
  switch (f) {
    case Fp8Format::kE4M3: return fp8_to_float<Fp8Format::kE4M3>(code);
    case Fp8Format::kE5M2: return fp8_to_float<Fp8Format::kE5M2>(code);
    case Fp8Format::kE4M3Fnuz: return fp8_to_float<Fp8Format::kE4M3Fnuz>(code);
    default: return fp8_to_float<Fp8Format::kE5M2Fnuz>(code);
  }
}

// -----------------------------------------------------------------------------
// float -> FP8
// -----------------------------------------------------------------------------

namespace detail {

/// Shared body of both roundings. `stochastic` selects the rounding;
/// `random_bits` is used only when it is true.
FP8GEMM_HOST_DEVICE inline uint8_t float_to_fp8_impl(float x, Fp8Format f, Fp8Overflow overflow, bool stochastic,
                                                     uint32_t random_bits) {
  const int mantissa_bits = fp8_mantissa_bits(f);
  const int min_exponent = 1 - fp8_bias(f);  // exponent of the smallest normal
  const bool fnuz = fp8_is_fnuz(f);
  const uint32_t bits = float_bits(x);
  const uint32_t sign = (bits >> 24) & 0x80u;
  const uint32_t abs_bits = bits & 0x7FFFFFFFu;

  // A NaN input gives the canonical NaN, sign dropped as cuda_fp8.h does:
  // 0x7F in the OCP formats, 0x80 (the only NaN) in FNUZ.
  const uint8_t nan_code = fnuz ? 0x80 : 0x7F;
  const uint8_t max_code = fp8_max_magnitude_code(f);
  // What an out-of-range magnitude becomes.
  uint8_t overflow_code;
  if (overflow == Fp8Overflow::kSaturate) {
    overflow_code = static_cast<uint8_t>(sign | max_code);
  } else if (f == Fp8Format::kE5M2) {
    overflow_code = static_cast<uint8_t>(sign | 0x7C);  // infinity
  } else if (f == Fp8Format::kE4M3) {
    overflow_code = static_cast<uint8_t>(sign | 0x7F);  // NaN, keeping the sign (as cuda_fp8.h)
  } else {
    overflow_code = 0x80;  // FNUZ: the only NaN
  }

  if (abs_bits > 0x7F800000u) return nan_code;        // NaN stays NaN
  if (abs_bits == 0x7F800000u) return overflow_code;  // +-infinity

  // x = significand * 2^(exponent - 23), significand < 2^24. Float subnormals
  // (< 2^-126) are far below half the smallest FP8 subnormal (>= 2^-17): they
  // round to zero, which the general path below also gives (shift > 24).
  const int biased_exponent = static_cast<int>(abs_bits >> 23);
  const int exponent = (biased_exponent == 0 ? 1 : biased_exponent) - 127;
  const uint32_t significand = (abs_bits & 0x7FFFFFu) | (abs_bits >= 0x00800000u ? 0x800000u : 0u);
  if (exponent > 15 + 1) return overflow_code;  // >= 2^17 > every format's max

  // Bits of the significand that do not fit in the FP8 mantissa. Below the
  // normal range the FP8 value is subnormal and one more bit drops per binade.
  int shift = (23 - mantissa_bits) + (exponent < min_exponent ? min_exponent - exponent : 0);
  if (shift > 63) shift = 63;  // the value is below 2^-40 of the smallest subnormal: rounds to 0
  const uint32_t kept = shift < 32 ? significand >> shift : 0u;
  const uint64_t remainder = significand & ((1ull << shift) - 1ull);
  // Magnitude code = exponent offset + kept significand. The implicit bit of a
  // normal value lands in the exponent field, so a carry out of the mantissa
  // moves the code to the next binade by itself.
  uint32_t code =
      (exponent >= min_exponent ? static_cast<uint32_t>(exponent - min_exponent) << mantissa_bits : 0u) + kept;
  bool round_up;
  if (stochastic) {
    // Round up with probability remainder / 2^shift: add `shift` uniform random
    // bits and see whether the sum carries. Past 32 dropped bits only the top 32
    // bits of the remainder count (the bias is below 2^-32 of the gap).
    round_up = shift <= 32 ? remainder + (random_bits >> (32 - shift)) >= (1ull << shift)
                           : (remainder >> (shift - 32)) + random_bits >= (1ull << 32);
  } else {
    const uint64_t half = 1ull << (shift - 1);
    round_up = remainder > half || (remainder == half && (kept & 1u));
  }
  code += round_up ? 1u : 0u;
  if (code > max_code) return overflow_code;
  if (code == 0 && fnuz) return 0;  // no negative zero
  return static_cast<uint8_t>(sign | code);
}

}  // namespace detail

/// Encodes x to FP8 with round-to-nearest-even.
///
/// NaN gives NaN. With kSaturate (default), values above max and infinities
/// give +-max; with kNoSaturate they give infinity (e5m2) or NaN (others).
/// In the FNUZ formats anything that rounds to zero gives +0 (0x00).
/// Bit-for-bit equal to cuda_fp8.h's __nv_cvt_float_to_fp8 for the OCP formats.
FP8GEMM_HOST_DEVICE inline uint8_t float_to_fp8(float x, Fp8Format f, Fp8Overflow overflow = Fp8Overflow::kSaturate) {
  return detail::float_to_fp8_impl(x, f, overflow, /*stochastic=*/false, 0u);
}

/// Encodes x to FP8 with stochastic rounding: the result is always one of the
/// two FP8 neighbours of x, and rounds away from zero with probability equal
/// to x's distance from the lower-magnitude neighbour over their gap, so the
/// expected value is x (for |x| within range; to 32 bits of resolution).
/// `random_bits` must be uniformly distributed and independent per call.
/// NaN, infinity and overflow behave as in float_to_fp8.
FP8GEMM_HOST_DEVICE inline uint8_t float_to_fp8_stochastic(float x, Fp8Format f, uint32_t random_bits,
                                                           Fp8Overflow overflow = Fp8Overflow::kSaturate) {
  return detail::float_to_fp8_impl(x, f, overflow, /*stochastic=*/true, random_bits);
}

}  // namespace fp8gemm
