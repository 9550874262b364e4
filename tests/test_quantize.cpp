// Host quantization (common/fp8/quantize.h) as a specification: scale layout,
// scale values, round-trip error, and what zeros, outliers, NaN and infinity
// do to a group.
#include <gtest/gtest.h>

#include "support/seed.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
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

uint8_t nan_code(Fp8Format f) { return fp8_is_fnuz(f) ? 0x80 : 0x7F; }

constexpr Fp8Format kAllFormats[] = {Fp8Format::kE4M3, Fp8Format::kE5M2, Fp8Format::kE4M3Fnuz, Fp8Format::kE5M2Fnuz};
constexpr ScaleGranularity kAllGranularities[] = {ScaleGranularity::kPerTensor, ScaleGranularity::kPerRow,
                                                  ScaleGranularity::kGroup1x128, ScaleGranularity::kBlock128x128};

// ---------------------------------------------------------------------------
// The scale of one group from its amax.
// ---------------------------------------------------------------------------

TEST(DequantScale, IsAmaxOverFormatMax) {
  for (Fp8Format f : kAllFormats) {
    for (float amax : {1.0f, 3.5f, 1e-20f, fp8_max(f), 1e30f, std::numeric_limits<float>::max()}) {
      EXPECT_EQ(dequant_scale_from_amax(amax, f), amax / fp8_max(f)) << fp8_name(f) << " amax " << amax;
    }
  }
}

TEST(DequantScale, IsOneForZeroNegativeNanInfiniteAndUnderflowingAmax) {
  for (Fp8Format f : kAllFormats) {
    // 1e-37 / max is below the smallest normal float: such a scale would lose
    // precision or flush to zero on the GPU, so it falls back to 1 too.
    for (float amax : {0.0f, -0.0f, -1.0f, kNaN, kInf, -kInf, 1e-37f, std::numeric_limits<float>::denorm_min()}) {
      EXPECT_EQ(dequant_scale_from_amax(amax, f), 1.0f) << fp8_name(f) << " amax " << amax;
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

TEST_P(QuantizeGroups, EachScaleIsTheAmaxOfItsGroupOverFormatMax) {
  const QuantizedMatrix q = quantize_x();
  ASSERT_EQ(q.scales.size(), groups_.size());
  for (size_t i = 0; i < groups_.size(); ++i) {
    const Group& g = groups_[i];
    float amax = 0.0f;
    for (int64_t r = g.row_begin; r < g.row_end; ++r) {
      for (int64_t c = g.col_begin; c < g.col_end; ++c) amax = std::max(amax, std::fabs(x_.at(r, c)));
    }
    EXPECT_EQ(q.scales[i], amax / fp8_max(format_)) << "group " << i;
  }
}

TEST_P(QuantizeGroups, EachCodeIsQuantizeValueWithTheScaleOfItsGroup) {
  const QuantizedMatrix q = quantize_x();
  for (int64_t r = 0; r < kRows; ++r) {
    for (int64_t c = 0; c < kCols; ++c) {
      const float scale = q.scales[group_number_of(groups_, r, c)];
      ASSERT_EQ(q.codes[r * kCols + c], quantize_value(x_.at(r, c), scale, format_)) << "(" << r << ", " << c << ")";
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
      EXPECT_EQ(after.scales[i], -outlier / fp8_max(format_));
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

TEST_P(QuantizeGroups, NanIsEncodedAsNanAndLeavesItsGroupScaleAsIfItWereZero) {
  Matrix with_zero = x_;
  with_zero.at(kRow, kCol) = 0.0f;
  x_.at(kRow, kCol) = kNaN;
  const QuantizedMatrix with_nan = quantize_x();
  const QuantizedMatrix expected = quantize(with_zero, format_, granularity_);
  EXPECT_EQ(with_nan.scales, expected.scales);
  EXPECT_EQ(with_nan.codes[kRow * kCols + kCol], nan_code(format_));
  for (int64_t i = 0; i < kRows * kCols; ++i) {
    if (i == kRow * kCols + kCol) continue;
    ASSERT_EQ(with_nan.codes[i], expected.codes[i]) << "element " << i;
  }
}

TEST_P(QuantizeGroups, GroupOfOnlyNansGetsUnitScaleAndNanCodes) {
  const Group nan_group = groups_[group_number_of(groups_, kRow, kCol)];
  for (int64_t r = nan_group.row_begin; r < nan_group.row_end; ++r) {
    for (int64_t c = nan_group.col_begin; c < nan_group.col_end; ++c) x_.at(r, c) = kNaN;
  }
  const QuantizedMatrix q = quantize_x();
  EXPECT_EQ(q.scales[group_number_of(groups_, kRow, kCol)], 1.0f);
  for (int64_t r = nan_group.row_begin; r < nan_group.row_end; ++r) {
    for (int64_t c = nan_group.col_begin; c < nan_group.col_end; ++c) {
      ASSERT_EQ(q.codes[r * kCols + c], nan_code(format_)) << "(" << r << ", " << c << ")";
    }
  }
}

TEST_P(QuantizeGroups, InfinityGivesItsGroupUnitScaleAndSaturatesToMax) {
  const QuantizedMatrix before = quantize_x();
  x_.at(kRow, kCol) = kInf;
  const QuantizedMatrix after = quantize_x();
  const size_t infinite_group = group_number_of(groups_, kRow, kCol);
  for (size_t i = 0; i < groups_.size(); ++i) {
    EXPECT_EQ(after.scales[i], i == infinite_group ? 1.0f : before.scales[i]) << "group " << i;
  }
  EXPECT_EQ(after.codes[kRow * kCols + kCol], fp8_max_magnitude_code(format_));
  const Group& g = groups_[infinite_group];
  for (int64_t r = g.row_begin; r < g.row_end; ++r) {
    for (int64_t c = g.col_begin; c < g.col_end; ++c) {
      ASSERT_EQ(after.codes[r * kCols + c], quantize_value(x_.at(r, c), 1.0f, format_)) << "(" << r << ", " << c << ")";
    }
  }
}

TEST_P(QuantizeGroups, InfinityWithoutSaturationGivesTheFormatsOverflowCode) {
  x_.at(kRow, kCol) = -kInf;
  const QuantizedMatrix q = quantize(x_, format_, granularity_, Fp8Overflow::kNoSaturate);
  const uint8_t expected = format_ == Fp8Format::kE5M2   ? 0xFC   // -infinity
                           : format_ == Fp8Format::kE4M3 ? 0xFF   // NaN, sign kept
                                                         : 0x80;  // FNUZ: the only NaN
  EXPECT_EQ(q.codes[kRow * kCols + kCol], expected);
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
