// float_to_bf16_bits (common/device/output.h): the rounding of every BF16
// output, promised to be round-to-nearest-even, NaN kept NaN (quiet),
// infinities kept. Checked on hand-picked cases whose answers are written out,
// and against an oracle that shares no code with it: the two BF16 neighbours
// of x by truncation, and the nearer one chosen by comparing distances in
// double (exact here), ties to the even one.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <iterator>
#include <limits>
#include <string>

#include "common/device/output.h"

namespace fp8gemm {
namespace {

std::string hex(uint32_t bits, int digits) {
  char text[16];
  std::snprintf(text, sizeof(text), "0x%0*X", digits, bits);
  return text;
}

// The BF16 result of the float with these bits.
uint16_t bf16_of(uint32_t float_bits_in) { return float_to_bf16_bits(float_from_bits(float_bits_in)); }

// ---------------------------------------------------------------------------
// The oracle.
// ---------------------------------------------------------------------------

// Value of a non-negative, non-NaN BF16 pattern as a double; the pattern
// past the largest finite one (0x7F80, infinity) counts as 2^128, the value
// IEEE rounding measures overflow against.
double bf16_magnitude(uint32_t pattern) {
  if (pattern == 0x7F80u) return std::ldexp(1.0, 128);
  const uint32_t exponent = pattern >> 7, fraction = pattern & 0x7Fu;
  if (exponent == 0) return std::ldexp(static_cast<double>(fraction), -133);  // subnormal: 0.f * 2^-126
  return std::ldexp(static_cast<double>(0x80u | fraction), static_cast<int>(exponent) - 134);
}

// Value of a non-negative finite float as a double, from its bits.
double float_magnitude(uint32_t bits) {
  const uint32_t exponent = bits >> 23, fraction = bits & 0x7FFFFFu;
  if (exponent == 0) return std::ldexp(static_cast<double>(fraction), -149);
  return std::ldexp(static_cast<double>(0x800000u | fraction), static_cast<int>(exponent) - 150);
}

// Round to nearest, ties to even, for a float that is not NaN.
uint16_t oracle_bf16(uint32_t bits) {
  const uint32_t sign = (bits >> 16) & 0x8000u;
  const uint32_t magnitude = bits & 0x7FFFFFFFu;
  if (magnitude == 0x7F800000u) return static_cast<uint16_t>(sign | 0x7F80u);  // infinity stays
  const uint32_t low = magnitude >> 16;                                        // truncation: the neighbour at or below
  const uint32_t high = low + 1;  // the neighbour above (0x7F80 = infinity past the max)
  const double x = float_magnitude(magnitude);
  // Both differences are exact: x and its neighbours share the exponent range
  // of a double, and need at most 24 + 1 significant bits.
  const double below = x - bf16_magnitude(low), above = bf16_magnitude(high) - x;
  uint32_t result;
  if (below < above) {
    result = low;
  } else if (above < below) {
    result = high;
  } else {
    result = (low % 2 == 0) ? low : high;  // a tie: the even pattern
  }
  return static_cast<uint16_t>(sign | result);
}

bool is_bf16_nan(uint16_t b) { return (b & 0x7F80u) == 0x7F80u && (b & 0x7Fu) != 0; }

// ---------------------------------------------------------------------------
// Hand-picked cases, the expected bits written out.
// ---------------------------------------------------------------------------

struct Case {
  uint32_t input;
  uint16_t expected;
  const char* what;
};

void expect_cases(const Case* begin, const Case* end) {
  for (const Case* c = begin; c != end; ++c) {
    EXPECT_EQ(bf16_of(c->input), c->expected) << c->what << ": float " << hex(c->input, 8) << " gave "
                                              << hex(bf16_of(c->input), 4) << ", expected " << hex(c->expected, 4);
  }
}

TEST(FloatToBf16, ExactHalfwayCasesGoToTheEvenNeighbour) {
  const Case cases[] = {
      {0x3F808000u, 0x3F80u, "1 + 2^-8: halfway, lower even: down"},
      {0x3F818000u, 0x3F82u, "halfway, lower odd (0x3F81): up"},
      {0x3F828000u, 0x3F82u, "halfway, lower even (0x3F82): down"},
      {0x3F838000u, 0x3F84u, "halfway, lower odd (0x3F83): up"},
      {0x40498000u, 0x404Au, "halfway above 0x4049 (3.140625, odd): up"},
      {0x00008000u, 0x0000u, "halfway between 0 and the smallest subnormal BF16: down to 0"},
      {0x00018000u, 0x0002u, "halfway between subnormals 1 and 2: up to 2"},
  };
  expect_cases(std::begin(cases), std::end(cases));
}

TEST(FloatToBf16, JustAboveAndBelowHalfway) {
  const Case cases[] = {
      {0x3F808001u, 0x3F81u, "one ulp above halfway, lower even: up"},
      {0x3F807FFFu, 0x3F80u, "one ulp below halfway, lower even: down"},
      {0x3F818001u, 0x3F82u, "one ulp above halfway, lower odd: up"},
      {0x3F817FFFu, 0x3F81u, "one ulp below halfway, lower odd: down"},
      {0x3F80FFFFu, 0x3F81u, "just below the upper neighbour: up"},
      {0x3F810001u, 0x3F81u, "just above a BF16 value: down"},
      {0x3F800000u, 0x3F80u, "1.0 is a BF16 value"},
  };
  expect_cases(std::begin(cases), std::end(cases));
}

TEST(FloatToBf16, RoundingUpCarriesIntoTheExponent) {
  const Case cases[] = {
      {0x3F7FFFFFu, 0x3F80u, "largest float below 1: rounds to 1.0 (0x3F7F + 1 = 0x3F80)"},
      {0x3FFF8000u, 0x4000u, "halfway above 1.9921875 (0x3FFF, odd): up to 2.0"},
      {0x3FFF7FFFu, 0x3FFFu, "just below that halfway: stays 1.9921875"},
      {0x007FFFFFu, 0x0080u, "largest float subnormal: up to the smallest normal 2^-126"},
      {0x00FF8000u, 0x0100u, "halfway, lower odd, in the first normal binade: up into the next"},
  };
  expect_cases(std::begin(cases), std::end(cases));
}

TEST(FloatToBf16, OverflowAndInfinity) {
  const Case cases[] = {
      {0x7F7FFFFFu, 0x7F80u, "FLT_MAX: past the midpoint above the largest BF16 (0x7F7F): infinity"},
      {0x7F7F8000u, 0x7F80u, "the midpoint itself, lower odd: infinity"},
      {0x7F7F7FFFu, 0x7F7Fu, "just below the midpoint: the largest BF16"},
      {0x7F7F0000u, 0x7F7Fu, "the largest BF16 itself"},
      {0x7F800000u, 0x7F80u, "+infinity stays"},
      {0xFF800000u, 0xFF80u, "-infinity stays"},
      {0xFF7FFFFFu, 0xFF80u, "-FLT_MAX: -infinity"},
  };
  expect_cases(std::begin(cases), std::end(cases));
}

TEST(FloatToBf16, NegativeValuesRoundTheirMagnitude) {
  const Case cases[] = {
      {0xBF808000u, 0xBF80u, "-(1 + 2^-8): halfway, lower even: toward zero"},
      {0xBF818000u, 0xBF82u, "halfway, lower odd: away from zero"},
      {0xBF808001u, 0xBF81u, "just above halfway in magnitude"},
      {0xBF7FFFFFu, 0xBF80u, "carries to -1.0"},
      {0x80018000u, 0x8002u, "negative subnormal halfway, lower odd"},
      {0x80008000u, 0x8000u, "negative subnormal halfway to -0: -0"},
  };
  expect_cases(std::begin(cases), std::end(cases));
}

TEST(FloatToBf16, ZerosAndSubnormalsKeepTheirSign) {
  const Case cases[] = {
      {0x00000000u, 0x0000u, "+0"},
      {0x80000000u, 0x8000u, "-0"},
      {0x00000001u, 0x0000u, "the smallest float subnormal: +0"},
      {0x80000001u, 0x8000u, "its negative: -0"},
      {0x00010000u, 0x0001u, "the smallest BF16 subnormal"},
      {0x00400000u, 0x0040u, "a BF16 subnormal"},
  };
  expect_cases(std::begin(cases), std::end(cases));
}

TEST(FloatToBf16, NanStaysNanQuietAndKeepsItsSign) {
  for (uint32_t nan_bits :
       {0x7FC00000u, 0x7F800001u, 0x7F80FFFFu, 0x7FBFFFFFu, 0x7FFFFFFFu, 0xFFC00000u, 0xFF800001u, 0xFFA12345u}) {
    const uint16_t result = bf16_of(nan_bits);
    EXPECT_TRUE(is_bf16_nan(result)) << hex(nan_bits, 8) << " gave " << hex(result, 4);
    EXPECT_NE(result & 0x0040u, 0u) << hex(nan_bits, 8) << " gave a signalling NaN " << hex(result, 4);
    EXPECT_EQ(result & 0x8000u, (nan_bits >> 16) & 0x8000u) << hex(nan_bits, 8) << " lost its sign";
  }
}

TEST(FloatToBf16, Bf16ValuesConvertBackExactly) {
  for (uint32_t b = 0; b < 0x10000u; ++b) {
    const float value = bf16_bits_to_float(static_cast<uint16_t>(b));
    if (std::isnan(value)) continue;
    ASSERT_EQ(float_to_bf16_bits(value), b) << hex(b, 4);
  }
}

// ---------------------------------------------------------------------------
// Against the oracle.
// ---------------------------------------------------------------------------

// Every BF16 pattern's neighbourhood: the pattern itself, one float ulp above
// it, the float just below, at and just above the midpoint to the next
// pattern, and the float just below the next pattern. Every tie, both ways,
// in every binade and both signs.
TEST(FloatToBf16, MatchesTheOracleAroundEveryMidpoint) {
  int64_t mismatches = 0;
  for (uint32_t upper = 0; upper < 0x10000u; ++upper) {
    if (((upper & 0x7F80u) == 0x7F80u) && (upper & 0x7Fu) != 0) continue;  // NaN patterns
    for (uint32_t lower : {0x0000u, 0x0001u, 0x7FFFu, 0x8000u, 0x8001u, 0xFFFFu}) {
      const uint32_t bits = (upper << 16) | lower;
      if (std::isnan(float_from_bits(bits))) continue;  // +-infinity with low bits set
      const uint16_t expected = oracle_bf16(bits), actual = bf16_of(bits);
      if (expected != actual && ++mismatches <= 10) {
        ADD_FAILURE() << "float " << hex(bits, 8) << ": expected " << hex(expected, 4) << ", got " << hex(actual, 4);
      }
    }
  }
  EXPECT_EQ(mismatches, 0);
}

// A strided sweep of all 2^32 float patterns: an odd prime stride meets every
// residue of the 16 dropped bits. NaNs must give a quiet NaN of the same sign.
TEST(FloatToBf16, MatchesTheOracleOnAStridedSweepOfAllFloats) {
  constexpr uint64_t kStride = 251;  // about 17 million values
  int64_t mismatches = 0, count = 0;
  for (uint64_t wide = 7; wide < (uint64_t{1} << 32); wide += kStride, ++count) {
    const uint32_t bits = static_cast<uint32_t>(wide);
    const uint16_t actual = bf16_of(bits);
    bool ok;
    uint16_t expected = 0;
    if (std::isnan(float_from_bits(bits))) {
      ok = is_bf16_nan(actual) && (actual & 0x0040u) != 0 && (actual & 0x8000u) == ((bits >> 16) & 0x8000u);
    } else {
      expected = oracle_bf16(bits);
      ok = expected == actual;
    }
    if (!ok && ++mismatches <= 10) {
      ADD_FAILURE() << "float " << hex(bits, 8) << ": expected " << hex(expected, 4) << ", got " << hex(actual, 4);
    }
  }
  EXPECT_EQ(mismatches, 0) << "of " << count;
}

// store_output / load_output use the same rounding for BF16 and keep FP32.
TEST(StoreOutput, RoundsBf16AndKeepsFp32) {
  uint16_t bf16[2] = {0, 0};
  store_output(bf16, 1, OutputType::kBF16, float_from_bits(0x3F818000u));
  EXPECT_EQ(bf16[0], 0u);
  EXPECT_EQ(bf16[1], 0x3F82u);
  EXPECT_EQ(load_output(bf16, 1, OutputType::kBF16), float_from_bits(0x3F820000u));
  float fp32[1] = {0.0f};
  store_output(fp32, 0, OutputType::kFP32, float_from_bits(0x3F818000u));
  EXPECT_EQ(float_bits(fp32[0]), 0x3F818000u);
  EXPECT_EQ(float_bits(load_output(fp32, 0, OutputType::kFP32)), 0x3F818000u);
}

}  // namespace
}  // namespace fp8gemm
