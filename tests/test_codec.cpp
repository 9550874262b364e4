// The FP8 codec (common/fp8/fp8.h) as a specification.
//
// Oracles: for the OCP formats (e4m3, e5m2), cuda_fp8.h's host conversions;
// for the FNUZ formats, which cuda_fp8.h does not have, a decoder and a
// brute-force nearest-value encoder written here from the format definition
// (values by ldexp, not by bit manipulation, so they share no code with fp8.h).
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <gtest/gtest.h>

#include "support/seed.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "common/fp8/fp8.h"

namespace fp8gemm {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

std::string hex_byte(uint8_t code) {
  char text[8];
  std::snprintf(text, sizeof(text), "0x%02X", code);
  return text;
}

std::string describe_float(float x) {
  char text[64];
  std::snprintf(text, sizeof(text), "%.9g (bits 0x%08X)", x, float_bits(x));
  return text;
}

// Fresh per run, printed; FP8GEMM_TEST_SEED replays it. Each test salts it
// so that two tests never draw the same numbers.
uint64_t fresh_seed() {
  static uint64_t salt = 0;
  return test_support::mix_seed(test_support::run_seed(), ++salt);
}

// ---------------------------------------------------------------------------
// Oracle for the OCP formats: cuda_fp8.h.
// ---------------------------------------------------------------------------

__nv_fp8_interpretation_t cuda_interpretation(Fp8Format f) { return f == Fp8Format::kE4M3 ? __NV_E4M3 : __NV_E5M2; }

float cuda_decode(uint8_t code, Fp8Format f) {
  return __half2float(__half(__nv_cvt_fp8_to_halfraw(code, cuda_interpretation(f))));
}

uint8_t cuda_encode(float x, Fp8Format f, Fp8Overflow overflow) {
  const __nv_saturation_t saturation = overflow == Fp8Overflow::kSaturate ? __NV_SATFINITE : __NV_NOSAT;
  return __nv_cvt_float_to_fp8(x, saturation, cuda_interpretation(f));
}

// ---------------------------------------------------------------------------
// Oracle for the FNUZ formats: the definition. A code is S EEEE MMM (e4m3fnuz,
// bias 8) or S EEEEE MM (e5m2fnuz, bias 16); 0x80 is the only NaN; there is
// no infinity and no negative zero.
// ---------------------------------------------------------------------------

struct FnuzDefinition {
  int mantissa_bits;
  int bias;
};

FnuzDefinition fnuz_definition(Fp8Format f) {
  return f == Fp8Format::kE4M3Fnuz ? FnuzDefinition{3, 8} : FnuzDefinition{2, 16};
}

// Value of the 7-bit magnitude field `magnitude` (0..127), and also of 128: the
// value one step past the largest, where round-to-nearest goes when a value
// lies beyond the midpoint above max (it reads as the next binade's 1.000).
double fnuz_magnitude(int magnitude, Fp8Format f) {
  const FnuzDefinition d = fnuz_definition(f);
  const int exponent_field = magnitude >> d.mantissa_bits;
  const int fraction = magnitude & ((1 << d.mantissa_bits) - 1);
  if (exponent_field == 0) return std::ldexp(fraction, 1 - d.bias - d.mantissa_bits);  // subnormal
  return std::ldexp((1 << d.mantissa_bits) + fraction, exponent_field - d.bias - d.mantissa_bits);
}

float fnuz_decode_from_definition(uint8_t code, Fp8Format f) {
  if (code == 0x80) return std::numeric_limits<float>::quiet_NaN();
  const double magnitude = fnuz_magnitude(code & 0x7F, f);
  return static_cast<float>((code & 0x80) ? -magnitude : magnitude);
}

// Nearest FNUZ code by trying all 128 magnitudes and the one past the largest
// (ties to the even code). NaN gives 0x80. Values nearest to the one past the
// largest, and infinities, overflow: +-max when saturating, else 0x80 (NaN).
// Zero is always 0x00.
uint8_t fnuz_encode_brute_force(float x, Fp8Format f, Fp8Overflow overflow) {
  constexpr int kPastMax = 0x80;
  if (std::isnan(x)) return 0x80;
  const uint8_t sign = std::signbit(x) ? 0x80 : 0x00;
  const uint8_t overflow_code = overflow == Fp8Overflow::kSaturate ? static_cast<uint8_t>(sign | 0x7F) : 0x80;
  if (std::isinf(x)) return overflow_code;
  const double magnitude = std::fabs(static_cast<double>(x));
  int nearest = 0;
  double nearest_distance = std::fabs(magnitude - fnuz_magnitude(0, f));
  for (int candidate = 1; candidate <= kPastMax; ++candidate) {
    // Exact for the two candidates that bracket x: they and x lie within a
    // binade of each other (or x is tiny and the candidate is 0), so the
    // difference needs far fewer than double's 53 bits.
    const double distance = std::fabs(magnitude - fnuz_magnitude(candidate, f));
    if (distance < nearest_distance || (distance == nearest_distance && candidate % 2 == 0)) {
      nearest = candidate;
      nearest_distance = distance;
    }
  }
  if (nearest == kPastMax) return overflow_code;
  if (nearest == 0) return 0x00;
  return static_cast<uint8_t>(sign | nearest);
}

// The decoder of the format's oracle.
float oracle_decode(uint8_t code, Fp8Format f) {
  return fp8_is_fnuz(f) ? fnuz_decode_from_definition(code, f) : cuda_decode(code, f);
}

// The encoder of the format's oracle.
uint8_t oracle_encode(float x, Fp8Format f, Fp8Overflow overflow) {
  return fp8_is_fnuz(f) ? fnuz_encode_brute_force(x, f, overflow) : cuda_encode(x, f, overflow);
}

// ---------------------------------------------------------------------------
// Test inputs.
// ---------------------------------------------------------------------------

// The finite non-negative values of a format, ascending, from the oracle,
// followed by the value one step past the largest (max + the spacing below
// max, which is the next binade's 1.000 in all four formats).
std::vector<float> finite_magnitudes_and_one_past(Fp8Format f) {
  std::vector<float> values;
  for (int code = 0; code < 0x80; ++code) {
    const float v = oracle_decode(static_cast<uint8_t>(code), f);
    if (std::isfinite(v)) values.push_back(v);
  }
  std::sort(values.begin(), values.end());
  const float largest = values.back();
  values.push_back(largest + (largest - values[values.size() - 2]));
  return values;
}

// Values where a float -> FP8 encoder can go wrong, both signs: every pair of
// neighbouring FP8 values (all subnormals included, and max with the value
// one past it) contributes both ends, its midpoint and the floats just below
// and above the midpoint, the quarter points, and the floats next to each end.
// Then: every power of two of float (far underflow to far overflow), float
// subnormals, FLT_MAX, infinities, zeros and NaNs with several payloads.
std::vector<float> dense_sweep(Fp8Format f) {
  std::vector<float> magnitudes;
  const std::vector<float> grid = finite_magnitudes_and_one_past(f);
  for (size_t i = 0; i + 1 < grid.size(); ++i) {
    const float low = grid[i], high = grid[i + 1];
    const float middle = low + (high - low) / 2;  // exact: one bit more than an FP8 value holds
    for (float v :
         {low, high, middle, std::nextafter(middle, 0.0f), std::nextafter(middle, kInf), low + (high - low) / 4,
          low + 3 * (high - low) / 4, std::nextafter(low, kInf), std::nextafter(high, 0.0f)}) {
      magnitudes.push_back(v);
    }
  }
  for (int e = -149; e <= 127; ++e) magnitudes.push_back(std::ldexp(1.0f, e));
  for (uint32_t bits :
       {0x00000001u, 0x00000002u, 0x00000003u, 0x00012345u, 0x00400000u, 0x007FFFFFu, 0x00800000u, 0x7F7FFFFFu}) {
    magnitudes.push_back(float_from_bits(bits));  // float subnormals, FLT_MIN, FLT_MAX
  }
  for (float v : {2 * fp8_max(f), 1e30f, kInf, 0.0f}) magnitudes.push_back(v);

  std::vector<float> values;
  for (float v : magnitudes) {
    values.push_back(v);
    values.push_back(-v);
  }
  for (uint32_t nan_bits : {0x7FC00000u, 0x7F800001u, 0x7FFFFFFFu, 0xFFC00000u, 0xFF812345u}) {
    values.push_back(float_from_bits(nan_bits));
  }
  return values;
}

// Runs float_to_fp8 on x and compares with the oracle; reports the first few
// mismatches in full. Returns true when they agree.
bool encoder_agrees_with_oracle(float x, Fp8Format f, Fp8Overflow overflow, int64_t* mismatches) {
  const uint8_t expected = oracle_encode(x, f, overflow);
  const uint8_t actual = float_to_fp8(x, f, overflow);
  if (expected == actual) return true;
  if (++*mismatches <= 10) {
    ADD_FAILURE() << "x = " << describe_float(x) << ": expected " << hex_byte(expected) << ", got " << hex_byte(actual);
  }
  return false;
}

// Same float (bit for bit, so -0 differs from +0), or both NaN.
::testing::AssertionResult same_float_or_both_nan(float expected, float actual) {
  if (std::isnan(expected) && std::isnan(actual)) return ::testing::AssertionSuccess();
  if (float_bits(expected) == float_bits(actual)) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "expected " << describe_float(expected) << ", got " << describe_float(actual);
}

// The two FP8 magnitudes that bracket |x| (equal when |x| is an FP8 value).
// |x| must not exceed the format's max.
struct Neighbours {
  float low;
  float high;
};

Neighbours neighbours_of(float x, Fp8Format f) {
  const std::vector<float> grid = finite_magnitudes_and_one_past(f);
  const float magnitude = std::fabs(x);
  const auto above = std::lower_bound(grid.begin(), grid.end(), magnitude);  // first >= |x|
  if (*above == magnitude) return {magnitude, magnitude};
  return {*(above - 1), *above};
}

std::string format_name(const ::testing::TestParamInfo<Fp8Format>& info) { return fp8_name(info.param); }

constexpr Fp8Format kAllFormats[] = {Fp8Format::kE4M3, Fp8Format::kE5M2, Fp8Format::kE4M3Fnuz, Fp8Format::kE5M2Fnuz};

// ---------------------------------------------------------------------------
// Decoding: all 256 codes of each format.
// ---------------------------------------------------------------------------

class Fp8Decode : public ::testing::TestWithParam<Fp8Format> {};

TEST_P(Fp8Decode, EveryCodeDecodesToTheOracleValue) {
  const Fp8Format f = GetParam();
  for (int code = 0; code < 256; ++code) {
    EXPECT_TRUE(same_float_or_both_nan(oracle_decode(static_cast<uint8_t>(code), f),
                                       fp8_to_float(static_cast<uint8_t>(code), f)))
        << "code " << hex_byte(static_cast<uint8_t>(code));
  }
}

TEST_P(Fp8Decode, CompileTimeAndRunTimeFormatsDecodeAlike) {
  const Fp8Format f = GetParam();
  for (int code = 0; code < 256; ++code) {
    const uint8_t c = static_cast<uint8_t>(code);
    float compile_time = 0.0f;
    switch (f) {
      case Fp8Format::kE4M3: compile_time = fp8_to_float<Fp8Format::kE4M3>(c); break;
      case Fp8Format::kE5M2: compile_time = fp8_to_float<Fp8Format::kE5M2>(c); break;
      case Fp8Format::kE4M3Fnuz: compile_time = fp8_to_float<Fp8Format::kE4M3Fnuz>(c); break;
      case Fp8Format::kE5M2Fnuz: compile_time = fp8_to_float<Fp8Format::kE5M2Fnuz>(c); break;
    }
    EXPECT_EQ(float_bits(compile_time), float_bits(fp8_to_float(c, f))) << "code " << hex_byte(c);
  }
}

TEST_P(Fp8Decode, LargestFiniteValueIsFp8Max) {
  const Fp8Format f = GetParam();
  float largest = 0.0f;
  for (int code = 0; code < 256; ++code) {
    const float v = oracle_decode(static_cast<uint8_t>(code), f);
    if (std::isfinite(v)) largest = std::max(largest, v);
  }
  EXPECT_EQ(largest, fp8_max(f));
  EXPECT_EQ(fp8_to_float(fp8_max_magnitude_code(f), f), fp8_max(f));
}

INSTANTIATE_TEST_SUITE_P(AllFormats, Fp8Decode, ::testing::ValuesIn(kAllFormats), format_name);

TEST(Fp8DecodeFnuz, OnlyCode0x80IsNanAndNoCodeIsInfiniteOrNegativeZero) {
  for (Fp8Format f : {Fp8Format::kE4M3Fnuz, Fp8Format::kE5M2Fnuz}) {
    for (int code = 0; code < 256; ++code) {
      const float v = fp8_to_float(static_cast<uint8_t>(code), f);
      EXPECT_EQ(std::isnan(v), code == 0x80) << fp8_name(f) << " code " << hex_byte(static_cast<uint8_t>(code));
      EXPECT_FALSE(std::isinf(v)) << fp8_name(f) << " code " << hex_byte(static_cast<uint8_t>(code));
      EXPECT_FALSE(v == 0.0f && std::signbit(v)) << fp8_name(f) << " code " << hex_byte(static_cast<uint8_t>(code));
    }
  }
}

// ---------------------------------------------------------------------------
// Round-to-nearest-even encoding, per format and overflow mode.
// ---------------------------------------------------------------------------

struct EncodeCase {
  Fp8Format format;
  Fp8Overflow overflow;
};

// How gtest prints a case in a failure message (instead of its raw bytes).
void PrintTo(const EncodeCase& c, std::ostream* os) {
  *os << fp8_name(c.format) << (c.overflow == Fp8Overflow::kSaturate ? ", saturate" : ", no saturate");
}

std::string encode_case_name(const ::testing::TestParamInfo<EncodeCase>& info) {
  return std::string(fp8_name(info.param.format)) +
         (info.param.overflow == Fp8Overflow::kSaturate ? "_saturate" : "_no_saturate");
}

std::vector<EncodeCase> all_encode_cases() {
  std::vector<EncodeCase> cases;
  for (Fp8Format f : kAllFormats) {
    for (Fp8Overflow o : {Fp8Overflow::kSaturate, Fp8Overflow::kNoSaturate}) cases.push_back({f, o});
  }
  return cases;
}

class Fp8Encode : public ::testing::TestWithParam<EncodeCase> {};

TEST_P(Fp8Encode, MatchesOracleAtMidpointsSubnormalsAndOverflow) {
  const EncodeCase c = GetParam();
  const std::vector<float> values = dense_sweep(c.format);
  int64_t mismatches = 0;
  for (float x : values) encoder_agrees_with_oracle(x, c.format, c.overflow, &mismatches);
  EXPECT_EQ(mismatches, 0) << "mismatches out of " << values.size() << " values";
}

TEST_P(Fp8Encode, MatchesOracleOnStridedSweepOfAllFloatBitPatterns) {
  const EncodeCase c = GetParam();
  // Every stride-th of the 2^32 bit patterns; a prime stride meets every
  // residue of the low mantissa bits. The brute-force FNUZ oracle tries 129
  // candidates per value, so it gets a sparser sample (about 1M values against
  // 70M) to keep the whole program within a few seconds.
  const uint64_t stride = fp8_is_fnuz(c.format) ? 4099 : 61;
  const uint64_t start = 11 * static_cast<uint64_t>(c.format);  // a different sample per format
  int64_t mismatches = 0, count = 0;
  for (uint64_t bits = start; bits < (1ull << 32); bits += stride, ++count) {
    encoder_agrees_with_oracle(float_from_bits(static_cast<uint32_t>(bits)), c.format, c.overflow, &mismatches);
  }
  EXPECT_EQ(mismatches, 0) << "mismatches out of " << count << " values";
}

INSTANTIATE_TEST_SUITE_P(AllFormats, Fp8Encode, ::testing::ValuesIn(all_encode_cases()), encode_case_name);

TEST(Fp8EncodeFnuz, AnythingThatRoundsToZeroGivesPositiveZero) {
  for (Fp8Format f : {Fp8Format::kE4M3Fnuz, Fp8Format::kE5M2Fnuz}) {
    const float half_smallest = fnuz_magnitude(1, f) / 2;  // a tie between 0 and the smallest subnormal: to 0
    for (float x : {-0.0f, -1e-30f, -half_smallest, -float_from_bits(1u)}) {
      EXPECT_EQ(float_to_fp8(x, f), 0x00) << fp8_name(f) << " x = " << describe_float(x);
    }
  }
}

TEST(Fp8EncodeOcp, NegativeValuesThatRoundToZeroKeepTheSign) {
  EXPECT_EQ(float_to_fp8(-0.0f, Fp8Format::kE4M3), 0x80);
  EXPECT_EQ(float_to_fp8(-1e-30f, Fp8Format::kE4M3), 0x80);
  EXPECT_EQ(float_to_fp8(-0.0f, Fp8Format::kE5M2), 0x80);
}

// ---------------------------------------------------------------------------
// Round trips.
// ---------------------------------------------------------------------------

class Fp8RoundTrip : public ::testing::TestWithParam<Fp8Format> {};

TEST_P(Fp8RoundTrip, EncodingADecodedFiniteCodeGivesTheCodeBack) {
  const Fp8Format f = GetParam();
  for (int code = 0; code < 256; ++code) {
    const uint8_t c = static_cast<uint8_t>(code);
    const float v = fp8_to_float(c, f);
    if (!std::isfinite(v)) continue;
    EXPECT_EQ(float_to_fp8(v, f, Fp8Overflow::kSaturate), c) << "code " << hex_byte(c);
    EXPECT_EQ(float_to_fp8(v, f, Fp8Overflow::kNoSaturate), c) << "code " << hex_byte(c);
  }
}

INSTANTIATE_TEST_SUITE_P(AllFormats, Fp8RoundTrip, ::testing::ValuesIn(kAllFormats), format_name);

TEST(Fp8RoundTripE5M2, InfinitiesSurviveWithoutSaturationAndBecomeMaxWithIt) {
  for (uint8_t infinity : {uint8_t{0x7C}, uint8_t{0xFC}}) {
    const float v = fp8_to_float(infinity, Fp8Format::kE5M2);
    ASSERT_TRUE(std::isinf(v));
    EXPECT_EQ(float_to_fp8(v, Fp8Format::kE5M2, Fp8Overflow::kNoSaturate), infinity);
    EXPECT_EQ(float_to_fp8(v, Fp8Format::kE5M2, Fp8Overflow::kSaturate), (infinity & 0x80) | 0x7B);
  }
}

// ---------------------------------------------------------------------------
// Stochastic rounding.
// ---------------------------------------------------------------------------

class Fp8StochasticRounding : public ::testing::TestWithParam<Fp8Format> {};

TEST_P(Fp8StochasticRounding, ResultIsAlwaysOneOfTheTwoNeighbours) {
  const Fp8Format f = GetParam();
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE("FP8GEMM_TEST_SEED=" + std::to_string(seed));
  std::mt19937 rng(static_cast<uint32_t>(seed ^ (seed >> 32)));
  // Magnitudes log-uniform from far below the smallest subnormal up to max.
  std::uniform_real_distribution<double> log2_magnitude(-30.0, std::log2(fp8_max(f)));
  int64_t failures = 0;
  for (int i = 0; i < 20000; ++i) {
    float x = std::min(static_cast<float>(std::exp2(log2_magnitude(rng))), fp8_max(f));
    if (rng() & 1u) x = -x;
    const uint32_t random_bits = static_cast<uint32_t>(rng());
    const Neighbours n = neighbours_of(x, f);
    const float result = fp8_to_float(float_to_fp8_stochastic(x, f, random_bits), f);
    const bool is_neighbour = std::fabs(result) == n.low || std::fabs(result) == n.high;
    const bool keeps_sign = result == 0.0f || std::signbit(result) == std::signbit(x);
    if (!(is_neighbour && keeps_sign) && ++failures <= 10) {
      ADD_FAILURE() << "x = " << describe_float(x) << ", random bits " << random_bits << ": got "
                    << describe_float(result) << ", neighbours " << n.low << " and " << n.high;
    }
  }
  EXPECT_EQ(failures, 0);
}

TEST_P(Fp8StochasticRounding, MeanOfManyDrawsIsTheInputWithinFiveStandardErrors) {
  const Fp8Format f = GetParam();
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE("FP8GEMM_TEST_SEED=" + std::to_string(seed));
  std::mt19937 rng(static_cast<uint32_t>(seed ^ (seed >> 32)));
  constexpr int kDraws = 1 << 16;
  const double smallest_subnormal = fp8_to_float(0x01, f);
  // Inputs between 0 and the smallest subnormal, among the subnormals, in the
  // normal range and just below max, of both signs.
  const double inputs[] = {
      0.3 * smallest_subnormal, -1.7 * smallest_subnormal, 2.25 * smallest_subnormal, 1.1, -3.3, 0.01,
      0.31 * fp8_max(f),        -0.99 * fp8_max(f)};
  for (double input : inputs) {
    const float x = static_cast<float>(input);
    const Neighbours n = neighbours_of(x, f);
    ASSERT_LT(n.low, n.high) << "x = " << describe_float(x) << " must lie between two FP8 values";
    double sum = 0.0;
    for (int i = 0; i < kDraws; ++i) {
      sum += fp8_to_float(float_to_fp8_stochastic(x, f, static_cast<uint32_t>(rng())), f);
    }
    const double mean = sum / kDraws;
    // Each draw is low + gap * Bernoulli(p), p = (|x| - low) / gap: the mean
    // has standard error gap * sqrt(p (1 - p) / draws). The rounding uses at
    // most 32 random bits, which may bias p by up to 2^-32.
    const double gap = static_cast<double>(n.high) - n.low;
    const double p = (std::fabs(static_cast<double>(x)) - n.low) / gap;
    const double standard_error = gap * std::sqrt(p * (1.0 - p) / kDraws);
    EXPECT_NEAR(mean, static_cast<double>(x), 5.0 * standard_error + gap * std::ldexp(1.0, -32))
        << "x = " << describe_float(x) << ", neighbours " << n.low << " and " << n.high << ", p = " << p;
  }
}

TEST_P(Fp8StochasticRounding, ExactValuesAreReturnedUnchangedForAnyRandomBits) {
  const Fp8Format f = GetParam();
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE("FP8GEMM_TEST_SEED=" + std::to_string(seed));
  std::mt19937 rng(static_cast<uint32_t>(seed ^ (seed >> 32)));
  for (int code = 0; code < 256; ++code) {
    const uint8_t c = static_cast<uint8_t>(code);
    const float v = fp8_to_float(c, f);
    if (!std::isfinite(v)) continue;
    for (uint32_t random_bits : {0u, 1u, 0x7FFFFFFFu, 0x80000000u, 0xFFFFFFFFu, static_cast<uint32_t>(rng()),
                                 static_cast<uint32_t>(rng()), static_cast<uint32_t>(rng())}) {
      EXPECT_EQ(float_to_fp8_stochastic(v, f, random_bits), c)
          << "code " << hex_byte(c) << ", random bits " << random_bits;
    }
  }
}

TEST_P(Fp8StochasticRounding, NanAndOverflowBehaveAsInRoundToNearest) {
  const Fp8Format f = GetParam();
  for (float x : {std::numeric_limits<float>::quiet_NaN(), kInf, -kInf, 2 * fp8_max(f), -1e30f}) {
    for (Fp8Overflow o : {Fp8Overflow::kSaturate, Fp8Overflow::kNoSaturate}) {
      for (uint32_t random_bits : {0u, 0x80000000u, 0xFFFFFFFFu}) {
        EXPECT_EQ(float_to_fp8_stochastic(x, f, random_bits, o), float_to_fp8(x, f, o))
            << "x = " << describe_float(x) << ", random bits " << random_bits;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllFormats, Fp8StochasticRounding, ::testing::ValuesIn(kAllFormats), format_name);

}  // namespace
}  // namespace fp8gemm
