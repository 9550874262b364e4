// Host quantization (common/fp8/quantize.h) as a specification: scale layout,
// scale values, round-trip error, what zeros, outliers and tiny values do to a
// group, and that NaN and infinity are errors that name the first offending
// element.
//
// Oracles, none of them the implementation's own expression: scale values
// written out by hand (exact quotients such as 3.5 / 448 = 2^-7); the scale
// rule as properties checked in double (the smallest scale that holds amax,
// the amax element encoding to max and never to zero, monotone in amax); and
// codes against a brute-force search of every FP8 value of the format for the
// one nearest to x / s (ties to the even code), with x / s computed in double.
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
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/fp8/fp8.h"
#include "common/fp8/quantize.h"

namespace fp8gemm {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

using test_support::run_seed;  // fresh per run, printed, FP8GEMM_TEST_SEED replays it

// A row-major host matrix with leading dimension ld >= cols.
struct Matrix {
  int64_t rows = 0;
  int64_t cols = 0;
  int64_t ld = 0;
  std::vector<float> values;

  float& at(int64_t r, int64_t c) { return values[r * ld + c]; }
  float at(int64_t r, int64_t c) const { return values[r * ld + c]; }
};

// Random values whose magnitudes span 2^-24 .. 2^0 within a row, times a
// row factor 2^-10 .. 2^10: groups get different scales, and many elements
// land in the FP8 subnormal range of their group (or below it). The padding
// between cols and ld holds NaN and 1e30: quantize must never read it.
Matrix random_matrix(int64_t rows, int64_t cols, int64_t ld, std::mt19937_64& rng) {
  std::uniform_real_distribution<float> row_exponent(-10.0f, 10.0f);
  std::uniform_real_distribution<float> element_exponent(-24.0f, 0.0f);
  Matrix m{rows, cols, ld, std::vector<float>(static_cast<size_t>((rows - 1) * ld + cols))};
  for (int64_t r = 0; r < rows; ++r) {
    const float row_factor = std::exp2(row_exponent(rng));
    for (int64_t c = 0; c < cols; ++c) {
      const float magnitude = std::exp2(element_exponent(rng)) * row_factor;
      m.at(r, c) = (rng() & 1u) ? -magnitude : magnitude;
    }
    for (int64_t c = cols; c < ld && r + 1 < rows; ++c) m.at(r, c) = (c % 2) ? kNaN : 1e30f;
  }
  return m;
}

QuantizedMatrix quantize(const Matrix& m, Fp8Format f, ScaleGranularity g,
                         Fp8Overflow overflow = Fp8Overflow::kSaturate) {
  return fp8gemm::quantize(m.values.data(), m.rows, m.cols, m.ld, f, g, overflow);
}

// The rectangle of elements that one scale covers: rows [row_begin, row_end),
// cols [col_begin, col_end).
struct Group {
  int64_t row_begin, row_end, col_begin, col_end;

  bool contains(int64_t r, int64_t c) const { return r >= row_begin && r < row_end && c >= col_begin && c < col_end; }
};

// The groups of a rows x cols matrix in the order of the scale array, written
// from the layout table in quantize.h (not from scale_index).
std::vector<Group> groups_in_scale_order(int64_t rows, int64_t cols, ScaleGranularity g) {
  const int64_t n = kQuantGroupSize;
  std::vector<Group> groups;
  switch (g) {
    case ScaleGranularity::kPerTensor: groups.push_back({0, rows, 0, cols}); break;
    case ScaleGranularity::kPerRow:
      for (int64_t r = 0; r < rows; ++r) groups.push_back({r, r + 1, 0, cols});
      break;
    case ScaleGranularity::kGroup1x128:
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t c = 0; c < cols; c += n) groups.push_back({r, r + 1, c, std::min(c + n, cols)});
      }
      break;
    case ScaleGranularity::kBlock128x128:
      for (int64_t r = 0; r < rows; r += n) {
        for (int64_t c = 0; c < cols; c += n) groups.push_back({r, std::min(r + n, rows), c, std::min(c + n, cols)});
      }
      break;
  }
  return groups;
}

// Position in the scale array of the group that holds (r, c).
size_t group_number_of(const std::vector<Group>& groups, int64_t r, int64_t c) {
  for (size_t i = 0; i < groups.size(); ++i) {
    if (groups[i].contains(r, c)) return i;
  }
  ADD_FAILURE() << "no group holds (" << r << ", " << c << ")";
  return 0;
}

// The code a correct quantizer gives x with scale s: x / s in double, rounded
// to float (the quotient the spec divides out: a float division of float
// operands, which this double rounding reproduces exactly since 53 >= 2 * 24 +
// 2), then the FP8 value nearest to it found by trying every magnitude code,
// ties to the even code; beyond max, the saturated max. Zero keeps the sign in
// the OCP formats and is +0 in FNUZ.
uint8_t nearest_code(float x, float s, Fp8Format f) {
  const float quotient = static_cast<float>(static_cast<double>(x) / static_cast<double>(s));
  const double magnitude = std::fabs(static_cast<double>(quotient));
  const uint8_t sign = std::signbit(quotient) ? 0x80 : 0x00;
  const int max_code = fp8_max_magnitude_code(f);
  int nearest = 0;
  double nearest_distance = magnitude;  // distance to code 0, the value 0
  for (int code = 1; code <= max_code; ++code) {
    const double distance = std::fabs(magnitude - static_cast<double>(fp8_to_float(static_cast<uint8_t>(code), f)));
    if (distance < nearest_distance || (distance == nearest_distance && code % 2 == 0)) {
      nearest = code;
      nearest_distance = distance;
    }
  }
  if (nearest == 0) return fp8_is_fnuz(f) ? 0x00 : sign;
  return static_cast<uint8_t>(sign | nearest);
}

std::string describe_float(float x) {
  char text[64];
  std::snprintf(text, sizeof(text), "%.9g (bits 0x%08X)", x, float_bits(x));
  return text;
}

constexpr Fp8Format kAllFormats[] = {Fp8Format::kE4M3, Fp8Format::kE5M2, Fp8Format::kE4M3Fnuz, Fp8Format::kE5M2Fnuz};
constexpr ScaleGranularity kAllGranularities[] = {ScaleGranularity::kPerTensor, ScaleGranularity::kPerRow,
                                                  ScaleGranularity::kGroup1x128, ScaleGranularity::kBlock128x128};

// ---------------------------------------------------------------------------
// The scale of one group from its amax.
// ---------------------------------------------------------------------------

// Quotients that are exact, written out: max / max = 1, and amax values that
// are a power of two times max.
TEST(DequantScale, HandComputedValues) {
  struct Expected {
    Fp8Format format;
    float amax, scale;
  };
  for (const Expected& e : {
           Expected{Fp8Format::kE4M3, 448.0f, 1.0f}, Expected{Fp8Format::kE4M3, 3.5f, 0x1p-7f},  // 3.5 / 448 = 1 / 128
           Expected{Fp8Format::kE4M3, 7168.0f, 16.0f}, Expected{Fp8Format::kE5M2, 57344.0f, 1.0f},
           Expected{Fp8Format::kE5M2, 7.0f, 0x1p-13f},  // 57344 = 7 * 2^13
           Expected{Fp8Format::kE4M3Fnuz, 240.0f, 1.0f},
           Expected{Fp8Format::kE4M3Fnuz, 15.0f, 0.0625f},          // 240 = 15 * 16
           Expected{Fp8Format::kE5M2Fnuz, 0x1.cp-100f, 0x1p-115f},  // 7 * 2^-102 / (7 * 2^13)
       }) {
    EXPECT_EQ(dequant_scale_from_amax(e.amax, e.format), e.scale) << fp8_name(e.format) << " amax " << e.amax;
  }
}

TEST(DequantScale, ZeroAmaxGivesOne) {
  for (Fp8Format f : kAllFormats) {
    EXPECT_EQ(dequant_scale_from_amax(0.0f, f), 1.0f) << fp8_name(f);
    EXPECT_EQ(dequant_scale_from_amax(-0.0f, f), 1.0f) << fp8_name(f);
  }
}

// An amax that no finite group has must not give a usable scale (it used to
// give 1, which made the whole group, or the whole tensor, garbage).
TEST(DequantScale, NegativeNanAndInfiniteAmaxGiveNan) {
  for (Fp8Format f : kAllFormats) {
    for (float amax : {-1.0f, -1e-40f, kNaN, -kNaN, kInf, -kInf}) {
      EXPECT_TRUE(std::isnan(dequant_scale_from_amax(amax, f))) << fp8_name(f) << " amax " << amax;
    }
  }
}

// Where amax / max is a normal float, the scale is that quotient rounded to
// nearest. The oracle divides in double and rounds once more to float, which
// gives the correctly rounded float quotient.
TEST(DequantScale, NormalRangeScaleIsTheCorrectlyRoundedQuotient) {
  for (Fp8Format f : kAllFormats) {
    for (float amax : {1.0f, 3.0f, 1e-20f, 1e-30f, 1e30f, std::numeric_limits<float>::max(), 0.1f, 12345.678f}) {
      const float expected = static_cast<float>(static_cast<double>(amax) / fp8_max(f));
      EXPECT_EQ(dequant_scale_from_amax(amax, f), expected) << fp8_name(f) << " amax " << amax;
    }
  }
}

// The tiny-amax rule, by hand (docs/quantization.md): k = ceil(amax * 2^149 / max),
// s = k * 2^-149, whose bit pattern is k.
TEST(DequantScale, TinyAmaxHandComputedValues) {
  struct Expected {
    Fp8Format format;
    uint32_t amax_bits, scale_bits;
    const char* what;
  };
  for (const Expected& e : {
           // 1e-40 is 71362 * 2^-149; 71362 / 448 = 159.3
           Expected{Fp8Format::kE4M3, 71362u, 160u, "1e-40, e4m3"},
           Expected{Fp8Format::kE4M3Fnuz, 71362u, 298u, "1e-40, e4m3fnuz (71362 / 240 = 297.3)"},
           Expected{Fp8Format::kE5M2, 71362u, 2u, "1e-40, e5m2 (71362 / 57344 = 1.24)"},
           Expected{Fp8Format::kE4M3, 1u, 1u, "the smallest subnormal: s = 2^-149"},
           Expected{Fp8Format::kE5M2Fnuz, 1u, 1u, "the smallest subnormal: s = 2^-149"},
           Expected{Fp8Format::kE4M3, 448u, 1u, "448 * 2^-149: s = 2^-149, amax / s = 448 exactly"},
           Expected{Fp8Format::kE4M3, 449u, 2u, "449 * 2^-149: one step more needs s = 2 * 2^-149"},
           // 2^-126 = 2^23 * 2^-149; 2^23 / 448 = 18724.57
           Expected{Fp8Format::kE4M3, 0x00800000u, 18725u, "FLT_MIN, a normal amax with a tiny scale"},
           // 1e-37 is 0x02081CEA: 0x881CEA * 2^-146 = 71362384 * 2^-149; / 448 = 159291.04
           Expected{Fp8Format::kE4M3, 0x02081CEAu, 159292u, "1e-37, a normal amax with a tiny scale"},
       }) {
    const float scale = dequant_scale_from_amax(float_from_bits(e.amax_bits), e.format);
    EXPECT_EQ(float_bits(scale), e.scale_bits) << e.what << ": got " << describe_float(scale);
  }
}

TEST(DequantScale, TinyRangeEndsWhereAmaxOverMaxIsTheSmallestNormal) {
  for (Fp8Format f : kAllFormats) {
    const float boundary = fp8_max(f) * 0x1p-126f;  // exact: max has at most 3 significant bits
    EXPECT_EQ(dequant_scale_from_amax(boundary, f), 0x1p-126f) << fp8_name(f);
    const float below = std::nextafter(boundary, 0.0f);  // amax / max just under 2^-126: rounded up to it
    EXPECT_EQ(dequant_scale_from_amax(below, f), 0x1p-126f) << fp8_name(f);
    EXPECT_EQ(dequant_scale_from_amax(2.0f * boundary, f), 0x1p-125f) << fp8_name(f);
  }
}

// Every positive finite amax (a strided sweep of the float patterns, all of
// the first 2^16 subnormals, and each side of every tiny-range boundary):
//  - the amax element quantizes to a non-zero code no larger than max, and
//    with kNoSaturate never to infinity or NaN (no overflow);
//  - s is positive and finite;
//  - below the normal range, s is the smallest float with s * max >= amax.
TEST(DequantScale, AmaxElementNeverOverflowsAndNeverBecomesZero) {
  for (Fp8Format f : kAllFormats) {
    std::vector<uint32_t> patterns;
    for (uint32_t bits = 1; bits < 0x10000u; ++bits) patterns.push_back(bits);
    for (uint64_t bits = 0x10000u; bits < 0x7F800000u; bits += 4099) patterns.push_back(static_cast<uint32_t>(bits));
    const uint32_t boundary = float_bits(fp8_max(f) * 0x1p-126f);
    for (uint32_t bits = boundary - 64; bits <= boundary + 64; ++bits) patterns.push_back(bits);
    patterns.push_back(0x7F7FFFFFu);
    int64_t failures = 0;
    for (uint32_t bits : patterns) {
      const float amax = float_from_bits(bits);
      const float s = dequant_scale_from_amax(amax, f);
      const uint8_t code = quantize_value(amax, s, f, Fp8Overflow::kNoSaturate);
      const float decoded = fp8_to_float(code, f);
      const double exact = static_cast<double>(amax) / fp8_max(f);
      bool ok = s > 0.0f && std::isfinite(s) && std::isfinite(decoded) && decoded > 0.0f && decoded <= fp8_max(f);
      if (exact < 0x1p-126) {
        ok = ok && static_cast<double>(s) >= exact &&
             static_cast<double>(std::nextafter(s, 0.0f)) < exact;  // the smallest that holds amax
      }
      if (!ok && ++failures <= 10) {
        ADD_FAILURE() << fp8_name(f) << " amax " << describe_float(amax) << ": scale " << describe_float(s)
                      << ", code 0x" << std::hex << int{code} << std::dec << " decodes to " << decoded;
      }
    }
    EXPECT_EQ(failures, 0) << fp8_name(f);
  }
}

// Where amax / max is normal, the amax element lands on the largest code:
// the scale spends the whole range of the format.
TEST(DequantScale, NormalRangeAmaxElementEncodesAsMax) {
  for (Fp8Format f : kAllFormats) {
    for (uint64_t bits = float_bits(fp8_max(f) * 0x1p-126f); bits < 0x7F800000u; bits += 65537) {
      const float amax = float_from_bits(static_cast<uint32_t>(bits));
      const uint8_t code = quantize_value(amax, dequant_scale_from_amax(amax, f), f, Fp8Overflow::kNoSaturate);
      ASSERT_EQ(code, fp8_max_magnitude_code(f)) << fp8_name(f) << " amax " << describe_float(amax);
    }
  }
}

TEST(DequantScale, IsMonotoneInAmax) {
  for (Fp8Format f : kAllFormats) {
    float previous = 0.0f;
    for (uint64_t bits = 1; bits < 0x7F800000u; bits += 257) {
      const float s = dequant_scale_from_amax(float_from_bits(static_cast<uint32_t>(bits)), f);
      ASSERT_GE(s, previous) << fp8_name(f) << " amax bits " << bits;
      previous = s;
    }
  }
}

// Codes next to every FP8 midpoint, where a wrong rounding shows: for each
// pair of neighbouring FP8 values below max, x = the float nearest to their
// midpoint times s, and the floats 1 and 2 steps to each side, both signs.
// With s a power of two x / s is the midpoint itself (an exact tie: the even
// code must win); with other scales (3 / 448, and a tiny subnormal scale) the
// quotient lands within a few float steps of it, where dividing by s and
// multiplying by a rounded 1 / s can give different codes.
TEST(QuantizeMidpoints, EveryCodeNextToAMidpointIsTheNearest) {
  for (Fp8Format f : kAllFormats) {
    for (float amax : {fp8_max(f) * 0x1p-3f, 3.0f, 1e-40f}) {
      const float s = dequant_scale_from_amax(amax, f);
      std::vector<float> values;
      for (int code = 0; code < fp8_max_magnitude_code(f); ++code) {
        const double low = fp8_to_float(static_cast<uint8_t>(code), f);
        const double high = fp8_to_float(static_cast<uint8_t>(code + 1), f);
        const float x = static_cast<float>((low + high) / 2.0 * s);
        for (float v : {x, std::nextafter(x, 0.0f), std::nextafter(std::nextafter(x, 0.0f), 0.0f),
                        std::nextafter(x, kInf), std::nextafter(std::nextafter(x, kInf), kInf)}) {
          values.push_back(v);
          values.push_back(-v);
        }
      }
      values.push_back(amax);  // the group's amax, so that the scale is s
      const QuantizedMatrix q = fp8gemm::quantize(values.data(), 1, static_cast<int64_t>(values.size()),
                                                  static_cast<int64_t>(values.size()), f, ScaleGranularity::kPerTensor);
      ASSERT_EQ(q.scales[0], s) << fp8_name(f) << " amax " << amax;
      int64_t mismatches = 0;
      for (size_t i = 0; i < values.size(); ++i) {
        const uint8_t expected = nearest_code(values[i], s, f);
        if (q.codes[i] != expected && ++mismatches <= 5) {
          ADD_FAILURE() << fp8_name(f) << ", scale " << describe_float(s) << ": x = " << describe_float(values[i])
                        << " gave code 0x" << std::hex << int{q.codes[i]} << ", expected 0x" << int{expected}
                        << std::dec;
        }
      }
      EXPECT_EQ(mismatches, 0) << fp8_name(f) << " amax " << amax << ", of " << values.size();
    }
  }
}

// ---------------------------------------------------------------------------
// Scale layout.
// ---------------------------------------------------------------------------

TEST(ScaleLayout, ScaleCountIsOnePerGroup) {
  struct Expected {
    int64_t rows, cols, per_tensor, per_row, group_1x128, block_128x128;
  };
  for (const Expected& e :
       {Expected{1, 1, 1, 1, 1, 1}, Expected{17, 255, 1, 17, 34, 2}, Expected{128, 128, 1, 128, 128, 1},
        Expected{129, 300, 1, 129, 387, 6}, Expected{256, 384, 1, 256, 768, 6}}) {
    SCOPED_TRACE(std::to_string(e.rows) + "x" + std::to_string(e.cols));
    EXPECT_EQ(scale_count(e.rows, e.cols, ScaleGranularity::kPerTensor), e.per_tensor);
    EXPECT_EQ(scale_count(e.rows, e.cols, ScaleGranularity::kPerRow), e.per_row);
    EXPECT_EQ(scale_count(e.rows, e.cols, ScaleGranularity::kGroup1x128), e.group_1x128);
    EXPECT_EQ(scale_count(e.rows, e.cols, ScaleGranularity::kBlock128x128), e.block_128x128);
  }
}

TEST(ScaleLayout, ScaleIndexIsRowMajorOverGroups) {
  // 129 x 300: three column groups (128, 128, 44 columns), two row blocks (128, 1 rows).
  const int64_t rows = 129, cols = 300;
  auto index = [&](int64_t r, int64_t c, ScaleGranularity g) { return scale_index(r, c, rows, cols, g); };
  EXPECT_EQ(index(128, 299, ScaleGranularity::kPerTensor), 0);
  EXPECT_EQ(index(5, 299, ScaleGranularity::kPerRow), 5);
  EXPECT_EQ(index(0, 127, ScaleGranularity::kGroup1x128), 0);
  EXPECT_EQ(index(0, 128, ScaleGranularity::kGroup1x128), 1);
  EXPECT_EQ(index(0, 299, ScaleGranularity::kGroup1x128), 2);
  EXPECT_EQ(index(1, 0, ScaleGranularity::kGroup1x128), 3);
  EXPECT_EQ(index(128, 299, ScaleGranularity::kGroup1x128), 386);
  EXPECT_EQ(index(127, 127, ScaleGranularity::kBlock128x128), 0);
  EXPECT_EQ(index(0, 128, ScaleGranularity::kBlock128x128), 1);
  EXPECT_EQ(index(127, 299, ScaleGranularity::kBlock128x128), 2);
  EXPECT_EQ(index(128, 0, ScaleGranularity::kBlock128x128), 3);
  EXPECT_EQ(index(128, 299, ScaleGranularity::kBlock128x128), 5);
}

TEST(ScaleLayout, ScaleIndexNamesTheGroupOfEveryElement) {
  for (ScaleGranularity g : kAllGranularities) {
    const std::pair<int64_t, int64_t> shapes[] = {{1, 1}, {17, 255}, {129, 300}, {256, 384}};
    for (auto [rows, cols] : shapes) {
      SCOPED_TRACE(std::string(granularity_name(g)) + " " + std::to_string(rows) + "x" + std::to_string(cols));
      const std::vector<Group> groups = groups_in_scale_order(rows, cols, g);
      ASSERT_EQ(static_cast<int64_t>(groups.size()), scale_count(rows, cols, g));
      for (size_t i = 0; i < groups.size(); ++i) {
        const Group& group = groups[i];
        for (int64_t r = group.row_begin; r < group.row_end; ++r) {
          for (int64_t c = group.col_begin; c < group.col_end; ++c) {
            ASSERT_EQ(scale_index(r, c, rows, cols, g), static_cast<int64_t>(i))
                << "element (" << r << ", " << c << ")";
          }
        }
      }
    }
  }
}

// ---------------------------------------------------------------------------
// Argument checks.
// ---------------------------------------------------------------------------

TEST(QuantizeArguments, RowsOrColsBelowOneAreRejected) {
  const std::vector<float> x(4, 1.0f);
  EXPECT_THROW(fp8gemm::quantize(x.data(), 0, 2, 2, Fp8Format::kE4M3, ScaleGranularity::kPerRow),
               std::invalid_argument);
  EXPECT_THROW(fp8gemm::quantize(x.data(), 2, 0, 2, Fp8Format::kE4M3, ScaleGranularity::kPerRow),
               std::invalid_argument);
}

TEST(QuantizeArguments, LdBelowColsIsRejectedWithAMessageNamingIt) {
  const std::vector<float> x(4, 1.0f);
  const Status status =
      validate_quantize_args(x.data(), 2, 2, 1, Fp8Format::kE4M3, ScaleGranularity::kPerRow, Fp8Overflow::kSaturate);
  EXPECT_EQ(status.code, StatusCode::kInvalidArgument);
  EXPECT_NE(status.message.find("ld >= cols"), std::string::npos) << status.message;
  EXPECT_THROW(fp8gemm::quantize(x.data(), 2, 2, 1, Fp8Format::kE4M3, ScaleGranularity::kPerRow),
               std::invalid_argument);
}

TEST(QuantizeArguments, NullInputIsRejected) {
  EXPECT_THROW(fp8gemm::quantize(nullptr, 2, 2, 2, Fp8Format::kE4M3, ScaleGranularity::kPerRow), std::invalid_argument);
}

TEST(QuantizeArguments, TryQuantizeRejectsANullOutput) {
  const std::vector<float> x(4, 1.0f);
  const Status status = try_quantize(x.data(), 2, 2, 2, Fp8Format::kE4M3, ScaleGranularity::kPerRow, nullptr);
  EXPECT_EQ(status.code, StatusCode::kInvalidArgument);
  EXPECT_NE(status.message.find("out must not be a null pointer"), std::string::npos) << status.message;
}

TEST(QuantizeArguments, TryQuantizeAndQuantizeGiveTheSameResult) {
  std::mt19937_64 rng(run_seed() + 3);
  const Matrix x = random_matrix(17, 255, 260, rng);
  QuantizedMatrix q;
  ASSERT_TRUE(
      try_quantize(x.values.data(), x.rows, x.cols, x.ld, Fp8Format::kE5M2, ScaleGranularity::kGroup1x128, &q).ok());
  const QuantizedMatrix thrown =
      fp8gemm::quantize(x.values.data(), x.rows, x.cols, x.ld, Fp8Format::kE5M2, ScaleGranularity::kGroup1x128);
  EXPECT_EQ(q.codes, thrown.codes);
  EXPECT_EQ(q.scales, thrown.scales);
}

// ---------------------------------------------------------------------------
// Round-trip error, per format, granularity and shape.
// ---------------------------------------------------------------------------

struct Shape {
  int64_t rows, cols, ld;
};

struct RoundTripCase {
  Fp8Format format;
  ScaleGranularity granularity;
  Shape shape;
};

std::vector<RoundTripCase> all_round_trip_cases() {
  std::vector<RoundTripCase> cases;
  for (Fp8Format f : kAllFormats) {
    for (ScaleGranularity g : kAllGranularities) {
      for (Shape s :
           {Shape{1, 1, 1}, Shape{17, 255, 255}, Shape{129, 300, 300}, Shape{256, 384, 384}, Shape{3, 130, 200}}) {
        cases.push_back({f, g, s});
      }
    }
  }
  return cases;
}

// How gtest prints a case in a failure message (instead of its raw bytes).
void PrintTo(const RoundTripCase& c, std::ostream* os) {
  *os << fp8_name(c.format) << ", " << granularity_name(c.granularity) << ", " << c.shape.rows << "x" << c.shape.cols
      << " ld " << c.shape.ld;
}

std::string round_trip_case_name(const ::testing::TestParamInfo<RoundTripCase>& info) {
  const RoundTripCase& c = info.param;
  return std::string(fp8_name(c.format)) + "_" + granularity_name(c.granularity) + "_" + std::to_string(c.shape.rows) +
         "x" + std::to_string(c.shape.cols) + "_ld" + std::to_string(c.shape.ld);
}

class QuantizeRoundTrip : public ::testing::TestWithParam<RoundTripCase> {};

// Round-to-nearest moves x / s by at most half a step of the FP8 grid: in the
// normal range that is at most 2^-(mantissa_bits + 1) of |x / s|; in the
// subnormal range at most half the subnormal spacing, 2^(-bias - mantissa_bits).
// Multiplying back by s scales both bounds. The float division x / s adds a
// relative 2^-24, which in the normal range fits inside the bound (round to
// nearest stays below 2^-(m+1) / (1 + 2^-(m+1)) relative) and in the subnormal
// range is added explicitly. dequantize() is exact in double.
TEST_P(QuantizeRoundTrip, ErrorIsWithinHalfAnFp8StepOfEachElement) {
  const RoundTripCase c = GetParam();
  std::mt19937_64 rng(run_seed() + 1);
  const Matrix x = random_matrix(c.shape.rows, c.shape.cols, c.shape.ld, rng);
  const QuantizedMatrix q = quantize(x, c.format, c.granularity);
  ASSERT_EQ(q.codes.size(), static_cast<size_t>(x.rows * x.cols));
  ASSERT_EQ(static_cast<int64_t>(q.scales.size()), scale_count(x.rows, x.cols, c.granularity));
  const std::vector<double> y = dequantize(q);

  const int m = fp8_mantissa_bits(c.format);
  const double smallest_normal = std::ldexp(1.0, 1 - fp8_bias(c.format));
  const double half_subnormal_step = std::ldexp(1.0, -fp8_bias(c.format) - m);
  int64_t failures = 0;
  for (int64_t r = 0; r < x.rows; ++r) {
    for (int64_t col = 0; col < x.cols; ++col) {
      const double value = x.at(r, col);
      const float scale = q.scales[scale_index(r, col, x.rows, x.cols, c.granularity)];
      const bool normal_range = std::fabs(x.at(r, col) / scale) >= smallest_normal;
      const double bound = normal_range ? std::ldexp(std::fabs(value), -(m + 1))
                                        : half_subnormal_step * scale + std::ldexp(std::fabs(value), -24);
      const double error = std::fabs(y[r * x.cols + col] - value);
      if (!(error <= bound) && ++failures <= 10) {
        ADD_FAILURE() << "element (" << r << ", " << col << ") = " << value << ", scale " << scale << ": error "
                      << error << " > bound " << bound << (normal_range ? " (normal range)" : " (subnormal range)");
      }
    }
  }
  EXPECT_EQ(failures, 0);
}

INSTANTIATE_TEST_SUITE_P(AllCases, QuantizeRoundTrip, ::testing::ValuesIn(all_round_trip_cases()),
                         round_trip_case_name);

// ---------------------------------------------------------------------------
// Groups: what each scale is, and what zeros, outliers, NaN and infinity do.
// All on a 129 x 300 matrix, whose last row block and column group are ragged.
// ---------------------------------------------------------------------------

struct GroupCase {
  Fp8Format format;
  ScaleGranularity granularity;
};

std::vector<GroupCase> all_group_cases() {
  std::vector<GroupCase> cases;
  for (Fp8Format f : kAllFormats) {
    for (ScaleGranularity g : kAllGranularities) cases.push_back({f, g});
  }
  return cases;
}

void PrintTo(const GroupCase& c, std::ostream* os) {
  *os << fp8_name(c.format) << ", " << granularity_name(c.granularity);
}

std::string group_case_name(const ::testing::TestParamInfo<GroupCase>& info) {
  return std::string(fp8_name(info.param.format)) + "_" + granularity_name(info.param.granularity);
}

class QuantizeGroups : public ::testing::TestWithParam<GroupCase> {
 protected:
  static constexpr int64_t kRows = 129;
  static constexpr int64_t kCols = 300;
  // The element that the single-element tests change: inside the second
  // column group, in the first row block.
  static constexpr int64_t kRow = 64;
  static constexpr int64_t kCol = 150;

  void SetUp() override {
    format_ = GetParam().format;
    granularity_ = GetParam().granularity;
    std::mt19937_64 rng(run_seed() + 2);
    x_ = random_matrix(kRows, kCols, kCols, rng);
    groups_ = groups_in_scale_order(kRows, kCols, granularity_);
  }

  QuantizedMatrix quantize_x() const { return quantize(x_, format_, granularity_); }

  Fp8Format format_{};
  ScaleGranularity granularity_{};
  Matrix x_;
  std::vector<Group> groups_;
};

// Which elements feed each scale: the amax of each group found by walking the
// group's rectangle (from the layout table, not scale_index), then the scale
// rule, whose values the DequantScale tests check on their own.
TEST_P(QuantizeGroups, EachScaleComesFromTheAmaxOfItsOwnGroup) {
  const QuantizedMatrix q = quantize_x();
  ASSERT_EQ(q.scales.size(), groups_.size());
  for (size_t i = 0; i < groups_.size(); ++i) {
    const Group& g = groups_[i];
    float amax = 0.0f;
    for (int64_t r = g.row_begin; r < g.row_end; ++r) {
      for (int64_t c = g.col_begin; c < g.col_end; ++c) amax = std::max(amax, std::fabs(x_.at(r, c)));
    }
    EXPECT_EQ(q.scales[i], dequant_scale_from_amax(amax, format_)) << "group " << i;
  }
}

// Every code is the FP8 value nearest to x / s, found by brute force.
TEST_P(QuantizeGroups, EachCodeIsTheNearestFp8ValueOfXOverTheScaleOfItsGroup) {
  const QuantizedMatrix q = quantize_x();
  for (int64_t r = 0; r < kRows; ++r) {
    for (int64_t c = 0; c < kCols; ++c) {
      const float scale = q.scales[group_number_of(groups_, r, c)];
      ASSERT_EQ(q.codes[r * kCols + c], nearest_code(x_.at(r, c), scale, format_))
          << "(" << r << ", " << c << ") x = " << describe_float(x_.at(r, c)) << ", scale " << describe_float(scale);
    }
  }
}

TEST_P(QuantizeGroups, AllZeroGroupGetsUnitScaleAndZeroCodes) {
  const Group zeroed = groups_[group_number_of(groups_, kRow, kCol)];
  for (int64_t r = zeroed.row_begin; r < zeroed.row_end; ++r) {
    for (int64_t c = zeroed.col_begin; c < zeroed.col_end; ++c) x_.at(r, c) = 0.0f;
  }
  const QuantizedMatrix q = quantize_x();
  EXPECT_EQ(q.scales[group_number_of(groups_, kRow, kCol)], 1.0f);
  for (int64_t r = zeroed.row_begin; r < zeroed.row_end; ++r) {
    for (int64_t c = zeroed.col_begin; c < zeroed.col_end; ++c) {
      ASSERT_EQ(q.codes[r * kCols + c], 0x00) << "(" << r << ", " << c << ")";
    }
  }
}

TEST_P(QuantizeGroups, AllZeroMatrixGetsUnitScalesAndZeroCodes) {
  std::fill(x_.values.begin(), x_.values.end(), 0.0f);
  const QuantizedMatrix q = quantize_x();
  EXPECT_TRUE(std::all_of(q.scales.begin(), q.scales.end(), [](float s) { return s == 1.0f; }));
  EXPECT_TRUE(std::all_of(q.codes.begin(), q.codes.end(), [](uint8_t code) { return code == 0x00; }));
}

TEST_P(QuantizeGroups, HugeOutlierGrowsOnlyTheScaleOfItsOwnGroup) {
  const QuantizedMatrix before = quantize_x();
  const float outlier = -1e6f * fp8_max(format_);
  x_.at(kRow, kCol) = outlier;
  const QuantizedMatrix after = quantize_x();
  const size_t outlier_group = group_number_of(groups_, kRow, kCol);
  for (size_t i = 0; i < groups_.size(); ++i) {
    if (i == outlier_group) {
      EXPECT_EQ(after.scales[i], 1e6f);  // 1e6 * max / max, exact
    } else {
      EXPECT_EQ(after.scales[i], before.scales[i]) << "group " << i;
    }
  }
  EXPECT_EQ(after.codes[kRow * kCols + kCol], 0x80 | fp8_max_magnitude_code(format_)) << "the outlier becomes -max";
  for (int64_t r = 0; r < kRows; ++r) {
    for (int64_t c = 0; c < kCols; ++c) {
      if (groups_[outlier_group].contains(r, c)) continue;
      ASSERT_EQ(after.codes[r * kCols + c], before.codes[r * kCols + c]) << "(" << r << ", " << c << ")";
    }
  }
}

// A NaN or an infinity anywhere is an error that names the rule and the
// element: quantize() throws, try_quantize() returns kInvalidArgument and
// leaves its output alone.
TEST_P(QuantizeGroups, NanOrInfinityAnywhereIsAnErrorNamingTheElement) {
  for (float bad : {kNaN, -kNaN, kInf, -kInf}) {
    Matrix x = x_;
    x.at(kRow, kCol) = bad;
    const std::string where = "x[" + std::to_string(kRow) + ", " + std::to_string(kCol) + "] = ";
    const std::string value = std::isnan(bad) ? "nan" : (bad > 0 ? "inf" : "-inf");
    QuantizedMatrix untouched;
    untouched.rows = -7;
    const Status status =
        try_quantize(x.values.data(), x.rows, x.cols, x.ld, format_, granularity_, &untouched, Fp8Overflow::kSaturate);
    EXPECT_EQ(status.code, StatusCode::kInvalidArgument) << value;
    EXPECT_NE(status.message.find("must be finite"), std::string::npos) << status.message;
    EXPECT_NE(status.message.find(where + value), std::string::npos) << status.message;
    EXPECT_EQ(untouched.rows, -7) << "the output was written";
    EXPECT_TRUE(untouched.codes.empty() && untouched.scales.empty()) << "the output was written";
    try {
      quantize(x, format_, granularity_);
      ADD_FAILURE() << "quantize() accepted " << value;
    } catch (const std::invalid_argument& e) {
      EXPECT_EQ(std::string(e.what()), "quantize: " + status.message);
    }
  }
}

TEST_P(QuantizeGroups, TheErrorNamesTheFirstNonFiniteElementInRowMajorOrder) {
  x_.at(kRows - 1, 0) = kNaN;          // later row
  x_.at(kRow, kCols - 1) = -kInf;      // same row, later column
  x_.at(kRow, kCol) = kInf;            // the first
  x_.at(kRow + 1, kCol - 100) = kNaN;  // later row, earlier column
  const Status status = check_finite_input(x_.values.data(), kRows, kCols, x_.ld);
  EXPECT_EQ(status.code, StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message, non_finite_input_error(kRow, kCol, kInf).message);
  QuantizedMatrix q;
  EXPECT_EQ(try_quantize(x_.values.data(), kRows, kCols, x_.ld, format_, granularity_, &q).message, status.message);
}

TEST_P(QuantizeGroups, LargestAndSmallestFiniteFloatsAreAccepted) {
  x_.at(kRow, kCol) = -std::numeric_limits<float>::max();
  x_.at(0, 0) = std::numeric_limits<float>::denorm_min();
  const QuantizedMatrix q = quantize_x();
  EXPECT_EQ(q.codes[kRow * kCols + kCol], 0x80 | fp8_max_magnitude_code(format_));
  EXPECT_TRUE(std::isfinite(q.scales[group_number_of(groups_, kRow, kCol)]));
}

// No element of a finite input overflows its group's scale, so the overflow
// mode changes nothing.
TEST_P(QuantizeGroups, BothOverflowModesGiveTheSameCodes) {
  x_.at(kRow, kCol) = -3e38f;
  const QuantizedMatrix saturate = quantize(x_, format_, granularity_, Fp8Overflow::kSaturate);
  const QuantizedMatrix no_saturate = quantize(x_, format_, granularity_, Fp8Overflow::kNoSaturate);
  EXPECT_EQ(saturate.scales, no_saturate.scales);
  EXPECT_EQ(saturate.codes, no_saturate.codes);
}

// A group whose values are all tiny (amax / max below the smallest normal
// float, here down to float subnormals) gets a scale below 2^-126 that holds
// its amax, not the 1 that turned such a group into zeros. Each element then
// survives the round trip within half an FP8 step, and the amax element keeps
// a non-zero code.
TEST_P(QuantizeGroups, TinyGroupKeepsItsValues) {
  const size_t tiny = group_number_of(groups_, kRow, kCol);
  const Group g = groups_[tiny];
  std::mt19937_64 rng(run_seed() + 4);
  float amax = 0.0f;
  int64_t amax_index = 0;
  for (int64_t r = g.row_begin; r < g.row_end; ++r) {
    for (int64_t c = g.col_begin; c < g.col_end; ++c) {
      // Multiples of 2^-149 up to 2^20 of them: float subnormals and the
      // smallest normals, amax / max ~ 2^-137 (e5m2) to 2^-138 (e4m3).
      const float v = static_cast<float>(rng() % (1u << 20)) * 0x1p-149f * ((rng() & 1u) ? -1.0f : 1.0f);
      x_.at(r, c) = v;
      if (std::fabs(v) > amax) {
        amax = std::fabs(v);
        amax_index = r * kCols + c;
      }
    }
  }
  const QuantizedMatrix q = quantize_x();
  const float s = q.scales[tiny];
  EXPECT_LT(s, 0x1p-126f) << "scale " << describe_float(s);
  EXPECT_GT(s, 0.0f);
  EXPECT_GE(static_cast<double>(s) * fp8_max(format_), amax) << "amax would overflow";
  EXPECT_NE(fp8_to_float(q.codes[amax_index], format_), 0.0f) << "the amax element became 0";
  const std::vector<double> y = dequantize(q);
  const int m = fp8_mantissa_bits(format_);
  const double half_subnormal_step = std::ldexp(1.0, -fp8_bias(format_) - m);
  int64_t nonzero_codes = 0;
  for (int64_t r = g.row_begin; r < g.row_end; ++r) {
    for (int64_t c = g.col_begin; c < g.col_end; ++c) {
      const double value = x_.at(r, c);
      const double bound =
          std::max(std::ldexp(std::fabs(value), -(m + 1)), half_subnormal_step * s) + std::ldexp(std::fabs(value), -24);
      ASSERT_LE(std::fabs(y[r * kCols + c] - value), bound)
          << "(" << r << ", " << c << ") x = " << describe_float(x_.at(r, c));
      nonzero_codes += (q.codes[r * kCols + c] & 0x7F) != 0;
    }
  }
  EXPECT_GT(nonzero_codes, (g.row_end - g.row_begin) * (g.col_end - g.col_begin) / 2);
}

TEST_P(QuantizeGroups, TinyMatrixKeepsItsValues) {
  for (float& v : x_.values) v *= 0x1p-120f;  // 2^-154 .. 2^-110: many flush to 0 as floats, the rest tiny
  const QuantizedMatrix q = quantize_x();
  const std::vector<double> y = dequantize(q);
  const int m = fp8_mantissa_bits(format_);
  const double half_subnormal_step = std::ldexp(1.0, -fp8_bias(format_) - m);
  for (size_t i = 0; i < groups_.size(); ++i) EXPECT_NE(q.scales[i], 1.0f) << "group " << i;
  for (int64_t r = 0; r < kRows; ++r) {
    for (int64_t c = 0; c < kCols; ++c) {
      const double value = x_.at(r, c);
      const double s = q.scales[group_number_of(groups_, r, c)];
      const double bound =
          std::max(std::ldexp(std::fabs(value), -(m + 1)), half_subnormal_step * s) + std::ldexp(std::fabs(value), -24);
      ASSERT_LE(std::fabs(y[r * kCols + c] - value), bound)
          << "(" << r << ", " << c << ") x = " << describe_float(x_.at(r, c));
    }
  }
}

TEST_P(QuantizeGroups, PaddingBetweenColsAndLdIsNeverRead) {
  const int64_t ld = kCols + 13;
  Matrix padded{kRows, kCols, ld, std::vector<float>(static_cast<size_t>((kRows - 1) * ld + kCols))};
  for (int64_t r = 0; r < kRows; ++r) {
    for (int64_t c = 0; c < ld && (r + 1 < kRows || c < kCols); ++c) {
      padded.at(r, c) = c < kCols ? x_.at(r, c) : (c % 2 ? kNaN : 1e30f);
    }
  }
  const QuantizedMatrix from_padded = quantize(padded, format_, granularity_);
  const QuantizedMatrix from_packed = quantize_x();
  EXPECT_EQ(from_padded.scales, from_packed.scales);
  EXPECT_EQ(from_padded.codes, from_packed.codes);
}

INSTANTIATE_TEST_SUITE_P(AllCases, QuantizeGroups, ::testing::ValuesIn(all_group_cases()), group_case_name);

}  // namespace
}  // namespace fp8gemm
