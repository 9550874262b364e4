// The correctness oracle (common/check/reference.h): the FP64 reference GEMM, the
// error metrics and the tolerance policy. Every GPU test trusts them, so they
// are checked here against the plainest code that could compute the same.
#include "common/check/reference.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <ostream>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/check/check.h"
#include "common/device/epilogue.h"
#include "common/device/output.h"
#include "common/fp8/fp8.h"
#include "common/fp8/quantize.h"

namespace fp8gemm {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// -----------------------------------------------------------------------------
// Helpers
// -----------------------------------------------------------------------------

// R and S straight from their definitions.
struct TripleLoop {
  std::vector<double> r, s;
};

TripleLoop triple_loop(const std::vector<double>& a, const std::vector<double>& b, int64_t m, int64_t n, int64_t k) {
  TripleLoop out{std::vector<double>(m * n), std::vector<double>(m * n)};
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double r = 0.0, s = 0.0;
      for (int64_t p = 0; p < k; ++p) {
        r += a[i * k + p] * b[j * k + p];
        s += std::fabs(a[i * k + p] * b[j * k + p]);
      }
      out.r[i * n + j] = r;
      out.s[i * n + j] = s;
    }
  }
  return out;
}

std::vector<double> uniform_values(int64_t count, uint32_t seed) {
  std::mt19937 engine(seed);
  std::uniform_real_distribution<double> value(-1.0, 1.0);
  std::vector<double> v(count);
  for (double& x : v) x = value(engine);
  return v;
}

std::vector<double> small_integers(int64_t count, uint32_t seed) {
  std::mt19937 engine(seed);
  std::uniform_int_distribution<int> value(-8, 8);
  std::vector<double> v(count);
  for (double& x : v) x = value(engine);
  return v;
}

struct Shape {
  int64_t m, n, k;
};

void PrintTo(const Shape& s, std::ostream* out) { *out << s.m << "x" << s.n << "x" << s.k; }

std::string shape_name(const ::testing::TestParamInfo<Shape>& info) {
  return std::to_string(info.param.m) + "x" + std::to_string(info.param.n) + "x" + std::to_string(info.param.k);
}

// -----------------------------------------------------------------------------
// The reference GEMM against the triple loop
// -----------------------------------------------------------------------------

// Shapes smaller than a tile, exactly a tile, and ragged across tile edges.
const Shape kSmallShapes[] = {{1, 1, 1},     {3, 5, 7},    {17, 255, 33}, {130, 70, 257},
                              {16, 64, 128}, {33, 129, 1}, {1, 300, 5},   {65, 1, 200}};

class ReferenceShapeTest : public ::testing::TestWithParam<Shape> {};

INSTANTIATE_TEST_SUITE_P(SmallAndRagged, ReferenceShapeTest, ::testing::ValuesIn(kSmallShapes), shape_name);

TEST_P(ReferenceShapeTest, ValueAndAbsSumMatchTheTripleLoop) {
  const auto [m, n, k] = GetParam();
  const std::vector<double> a = uniform_values(m * k, 1), b = uniform_values(n * k, 2);
  const ReferenceProduct ref = reference_gemm(a.data(), b.data(), m, n, k);
  const TripleLoop expected = triple_loop(a, b, m, n, k);
  // Both sum in FP64, in different orders: each is within K * 2^-53 * S.
  const double relative = 2.0 * static_cast<double>(k) * 0x1p-53;
  ASSERT_EQ(ref.value.size(), static_cast<size_t>(m * n));
  for (int64_t i = 0; i < m * n; ++i) {
    ASSERT_NEAR(ref.value[i], expected.r[i], relative * expected.s[i]) << "element " << i;
    ASSERT_NEAR(ref.abs_sum[i], expected.s[i], relative * expected.s[i]) << "element " << i;
  }
}

TEST_P(ReferenceShapeTest, IntegerInputsGiveTheExactProduct) {
  const auto [m, n, k] = GetParam();
  const std::vector<double> a = small_integers(m * k, 3), b = small_integers(n * k, 4);
  const ReferenceProduct ref = reference_gemm(a.data(), b.data(), m, n, k);
  const TripleLoop expected = triple_loop(a, b, m, n, k);
  EXPECT_EQ(ref.value, expected.r);
  EXPECT_EQ(ref.abs_sum, expected.s);
}

TEST(ReferenceGemm, AbsSumAddsTheMagnitudesOfTheProducts) {
  // R = 1*3 + (-2)*4 = -5, S = |1*3| + |-2*4| = 11.
  const std::vector<double> a = {1.0, -2.0}, b = {3.0, 4.0};
  const ReferenceProduct ref = reference_gemm(a.data(), b.data(), 1, 1, 2);
  EXPECT_EQ(ref.r(0, 0), -5.0);
  EXPECT_EQ(ref.s(0, 0), 11.0);
}

TEST(ReferenceGemm, HoldsEveryRowInOrder) {
  const std::vector<double> a = uniform_values(5 * 3, 5), b = uniform_values(2 * 3, 6);
  const ReferenceProduct ref = reference_gemm(a.data(), b.data(), 5, 2, 3);
  EXPECT_EQ(ref.n, 2);
  EXPECT_EQ(ref.rows, (std::vector<int64_t>{0, 1, 2, 3, 4}));
}

TEST(ReferenceGemm, ResultDoesNotDependOnTheThreadCount) {
  const int64_t m = 130, n = 70, k = 257;
  const std::vector<double> a = uniform_values(m * k, 7), b = uniform_values(n * k, 8);
  const ReferenceProduct one = reference_gemm(a.data(), b.data(), m, n, k, 1);
  const ReferenceProduct three = reference_gemm(a.data(), b.data(), m, n, k, 3);
  const ReferenceProduct all = reference_gemm(a.data(), b.data(), m, n, k, 0);
  EXPECT_EQ(one.value, three.value);
  EXPECT_EQ(one.abs_sum, three.abs_sum);
  EXPECT_EQ(one.value, all.value);
}

TEST(ReferenceGemm, RejectsShapesBelowOne) {
  const std::vector<double> a(4, 1.0), b(4, 1.0);
  EXPECT_THROW(reference_gemm(a.data(), b.data(), 0, 1, 1), std::invalid_argument);
  EXPECT_THROW(reference_gemm(a.data(), b.data(), 1, -1, 1), std::invalid_argument);
  EXPECT_THROW(reference_gemm(a.data(), b.data(), 1, 1, 0), std::invalid_argument);
}

// -----------------------------------------------------------------------------
// Subset of rows
// -----------------------------------------------------------------------------

TEST(ReferenceGemmRows, GivesTheSameRowsAsTheFullProduct) {
  const int64_t m = 130, n = 70, k = 257;
  const std::vector<double> a = uniform_values(m * k, 9), b = uniform_values(n * k, 10);
  const ReferenceProduct full = reference_gemm(a.data(), b.data(), m, n, k);
  const std::vector<int64_t> rows = {129, 0, 5, 5, 64};  // any order, repeats allowed
  const ReferenceProduct some = reference_gemm_rows(a.data(), b.data(), m, n, k, rows);
  ASSERT_EQ(some.rows, rows);
  ASSERT_EQ(some.value.size(), rows.size() * n);
  for (size_t i = 0; i < rows.size(); ++i) {
    for (int64_t j = 0; j < n; ++j) {
      // Each element is summed in the same order whichever rows are asked for.
      EXPECT_EQ(some.r(i, j), full.r(rows[i], j)) << "row " << rows[i] << ", column " << j;
      EXPECT_EQ(some.s(i, j), full.s(rows[i], j)) << "row " << rows[i] << ", column " << j;
    }
  }
}

TEST(ReferenceGemmRows, EmptyRowListGivesAnEmptyProduct) {
  const std::vector<double> a(6, 1.0), b(6, 1.0);
  const ReferenceProduct ref = reference_gemm_rows(a.data(), b.data(), 2, 2, 3, {});
  EXPECT_TRUE(ref.rows.empty());
  EXPECT_TRUE(ref.value.empty());
  EXPECT_TRUE(ref.abs_sum.empty());
}

TEST(ReferenceGemmRows, RejectsARowOutsideTheMatrix) {
  const std::vector<double> a(6, 1.0), b(6, 1.0);
  EXPECT_THROW(reference_gemm_rows(a.data(), b.data(), 2, 2, 3, {2}), std::out_of_range);
  EXPECT_THROW(reference_gemm_rows(a.data(), b.data(), 2, 2, 3, {-1}), std::out_of_range);
}

// -----------------------------------------------------------------------------
// Metrics on known inputs
// -----------------------------------------------------------------------------

TEST(MeasureError, IdenticalOutputsHaveZeroError) {
  const std::vector<float> d = {1.0f, -2.5f, 3.0f};
  const std::vector<double> r = {1.0, -2.5, 3.0};
  const ErrorMetrics m = measure_error(d.data(), r.data(), 3);
  EXPECT_EQ(m.elements, 3);
  EXPECT_EQ(m.non_finite, 0);
  EXPECT_EQ(m.max_abs_error, 0.0);
  EXPECT_EQ(m.norm_relative_error, 0.0);
  EXPECT_EQ(m.calc_diff, 0.0);
}

TEST(MeasureError, MaxAbsErrorIsTheLargestDifference) {
  const std::vector<float> d = {1.0f, 2.5f, -3.0f};
  const std::vector<double> r = {1.25, 2.0, -3.0};
  EXPECT_EQ(measure_error(d.data(), r.data(), 3).max_abs_error, 0.5);
}

TEST(MeasureError, NormRelativeErrorOfAScaledOutputIsTheScaleMinusOne) {
  const std::vector<float> d = {1.5f, -3.0f, 6.0f};  // 1.5 * R
  const std::vector<double> r = {1.0, -2.0, 4.0};
  EXPECT_DOUBLE_EQ(measure_error(d.data(), r.data(), 3).norm_relative_error, 0.5);
}

TEST(MeasureError, CalcDiffOfANegatedOutputIsTwo) {
  const std::vector<float> d = {-1.0f, 2.0f};
  const std::vector<double> r = {1.0, -2.0};
  EXPECT_DOUBLE_EQ(measure_error(d.data(), r.data(), 2).calc_diff, 2.0);
}

TEST(MeasureError, CalcDiffOfADoubledOutputIsOneFifth) {
  // 1 - 2 * (2 sum r^2) / (5 sum r^2) = 1/5.
  const std::vector<float> d = {2.0f, -4.0f, 6.0f};
  const std::vector<double> r = {1.0, -2.0, 3.0};
  EXPECT_DOUBLE_EQ(measure_error(d.data(), r.data(), 3).calc_diff, 0.2);
}

TEST(MeasureError, CalcDiffEqualsDeepGemmsFormula) {
  const std::vector<double> r = uniform_values(1000, 11);
  std::vector<float> d(r.size());
  const std::vector<double> noise = uniform_values(1000, 12);
  double xy = 0.0, squares = 0.0;
  for (size_t i = 0; i < r.size(); ++i) {
    d[i] = static_cast<float>(r[i] + 0.1 * noise[i]);
    xy += d[i] * r[i];
    squares += static_cast<double>(d[i]) * d[i] + r[i] * r[i];
  }
  EXPECT_NEAR(measure_error(d.data(), r.data(), 1000).calc_diff, 1.0 - 2.0 * xy / squares, 1e-12);
}

TEST(MeasureError, CountsNanAndInfinityAndMeasuresTheRest) {
  const std::vector<float> d = {static_cast<float>(kNaN), 2.0f, static_cast<float>(kInfinity), 4.5f};
  const std::vector<double> r = {1.0, 2.0, 3.0, 4.0};
  const ErrorMetrics m = measure_error(d.data(), r.data(), 4);
  EXPECT_EQ(m.non_finite, 2);
  EXPECT_EQ(m.max_abs_error, 0.5);
}

TEST(MeasureError, ZeroOutputOfZeroReferenceHasZeroError) {
  const std::vector<float> d = {0.0f, 0.0f};
  const std::vector<double> r = {0.0, 0.0};
  const ErrorMetrics m = measure_error(d.data(), r.data(), 2);
  EXPECT_EQ(m.norm_relative_error, 0.0);
  EXPECT_EQ(m.calc_diff, 0.0);
}

TEST(MeasureError, NonzeroOutputOfZeroReferenceHasInfiniteRelativeError) {
  const std::vector<float> d = {0.0f, 1.0f};
  const std::vector<double> r = {0.0, 0.0};
  EXPECT_EQ(measure_error(d.data(), r.data(), 2).norm_relative_error, kInfinity);
}

// -----------------------------------------------------------------------------
// Tolerance policy
// -----------------------------------------------------------------------------

TEST(RoundingGamma, HandComputedValues) {
  // gamma_n(u) = n u / (1 - n u): 1/2 / (1/2) = 1; 2^-17 / (1 - 2^-17) = 1 / (2^17 - 1).
  EXPECT_EQ(rounding_gamma(1, 0.5), 1.0);
  EXPECT_EQ(rounding_gamma(2, 0.25), 1.0);
  EXPECT_EQ(rounding_gamma(1, 0.25), 1.0 / 3.0);
  EXPECT_DOUBLE_EQ(rounding_gamma(128, 0x1p-24), 1.0 / 131071.0);
  EXPECT_EQ(rounding_gamma(0, 0x1p-24), 0.0);
}

// The rule docs/tolerances.md combines the roundings with.
TEST(RoundingGamma, TwoGammasCombineIntoTheGammaOfTheSum) {
  for (int64_t a : {1, 2, 100, 7000}) {
    for (int64_t b : {1, 3, 128, 9000}) {
      const double ga = rounding_gamma(a, 0x1p-24), gb = rounding_gamma(b, 0x1p-24);
      EXPECT_LE(ga + gb + ga * gb, rounding_gamma(a + b, 0x1p-24)) << a << " + " << b;
    }
  }
}

TEST(RoundingGamma, IsInfiniteOnceNuReachesOne) {
  EXPECT_EQ(rounding_gamma(8192, 0x1p-13), kInfinity);
  EXPECT_EQ(rounding_gamma(100000, 0x1p-13), kInfinity);
}

TEST(GemmTolerance, Fp32ElementBoundHandComputedAtK7168) {
  // u_out = 2^-24; (1 + 2^-24) gamma_7170(2^-24) = 7170 / (2^24 - 7170) * (1 + 2^-24) = 4.2754805e-4.
  const Tolerance t = gemm_tolerance(OutputType::kFP32, 7168, Accumulation::kFp32);
  EXPECT_EQ(t.r_coefficient, 0x1p-24);
  EXPECT_NEAR(t.s_coefficient, 4.2754805e-4, 1e-11);
  EXPECT_EQ(t.absolute, 0x1p-126);
}

TEST(GemmTolerance, ElementBoundAddsItsThreeTerms) {
  Tolerance t;
  t.r_coefficient = 0.5;
  t.s_coefficient = 0.25;
  t.absolute = 1.0;
  EXPECT_EQ(t.element_bound(-2.0, 10.0), 4.5);  // 0.5 * |-2| + 0.25 * 10 + 1
  EXPECT_EQ(t.element_bound(0.0, 0.0), 1.0);
}

TEST(GemmTolerance, Bf16BoundsIncludeItsRounding) {
  const Tolerance t = gemm_tolerance(OutputType::kBF16, 128, Accumulation::kFp32);
  EXPECT_EQ(t.r_coefficient, kBf16UnitRoundoff);
  EXPECT_GT(t.norm_relative, kBf16UnitRoundoff);
  EXPECT_LT(t.norm_relative, 1.01 * kBf16UnitRoundoff);
}

TEST(GemmTolerance, Fp32OutputWithFp32AccumulationIsFarUnder1e4AtK16384) {
  EXPECT_LT(gemm_tolerance(OutputType::kFP32, 16384, Accumulation::kFp32).norm_relative, 1e-5);
}

TEST(GemmTolerance, GrowsWithK) {
  for (Accumulation acc : {Accumulation::kFp32, Accumulation::kTensorCorePromoted, Accumulation::kTensorCoreFast}) {
    const Tolerance small = gemm_tolerance(OutputType::kFP32, 128, acc);
    const Tolerance large = gemm_tolerance(OutputType::kFP32, 7168, acc);
    EXPECT_LT(small.s_coefficient, large.s_coefficient) << static_cast<int>(acc);
    EXPECT_LT(small.norm_relative, large.norm_relative) << static_cast<int>(acc);
  }
}

TEST(GemmTolerance, TensorCoreAccumulationIsLooserThanFp32AndFastLoosestOfAll) {
  const Tolerance fp32 = gemm_tolerance(OutputType::kFP32, 7168, Accumulation::kFp32);
  const Tolerance promoted = gemm_tolerance(OutputType::kFP32, 7168, Accumulation::kTensorCorePromoted);
  const Tolerance fast = gemm_tolerance(OutputType::kFP32, 7168, Accumulation::kTensorCoreFast);
  EXPECT_LT(fp32.norm_relative, promoted.norm_relative);
  EXPECT_LT(promoted.norm_relative, fast.norm_relative);
  EXPECT_LT(fp32.s_coefficient, promoted.s_coefficient);
  EXPECT_LT(promoted.s_coefficient, fast.s_coefficient);
}

TEST(GemmTolerance, CoversTheErrorsMeasuredOnHopperAtK16384) {
  // cuBLASLt against FP64 at K = 16384 (bench/results/h200/accumulation.log): 1.3e-4 by default, 2.05e-3 fast.
  const double promoted = gemm_tolerance(OutputType::kFP32, 16384, Accumulation::kTensorCorePromoted).norm_relative;
  const double fast = gemm_tolerance(OutputType::kFP32, 16384, Accumulation::kTensorCoreFast).norm_relative;
  EXPECT_GT(promoted, 1.3e-4);
  EXPECT_LT(promoted, 1e-2);
  EXPECT_GT(fast, 3.1e-3);
  EXPECT_LT(fast, 1e-1);
}

TEST(GemmTolerance, FastAccumulationHasNoElementBoundAtLargeK) {
  EXPECT_EQ(gemm_tolerance(OutputType::kBF16, 16384, Accumulation::kTensorCoreFast).s_coefficient, kInfinity);
}

// calc_diff is a reported metric, not a criterion (docs/tolerances.md): its
// bound is implied by the norm bound. These two tests show it without the
// formula of gemm_tolerance: the output that makes calc_diff largest for a
// given norm-relative error rho is D = (1 - rho) R, where calc_diff is
// rho^2 / (1 + (1 - rho)^2) (here by hand, at rho = 2^-8, a BF16 rounding);
// random outputs with rho under its bound stay under the calc_diff bound.
TEST(CalcDiff, TheWorstOutputForANormErrorHasTheHandComputedCalcDiff) {
  const Tolerance t = gemm_tolerance(OutputType::kBF16, 7168, Accumulation::kFp32);
  const std::vector<double> r = {0.5, -1.0, 2.0, 4.0};
  std::vector<float> d(r.size());
  // 1 - rho with rho = 2^-8 (the BF16 rounding) keeps D exact in float.
  const double rho = 0x1p-8;
  for (size_t i = 0; i < r.size(); ++i) d[i] = static_cast<float>((1.0 - rho) * r[i]);
  const ErrorMetrics m = measure_error(d.data(), r.data(), static_cast<int64_t>(r.size()));
  EXPECT_EQ(m.norm_relative_error, rho);
  // rho^2 / (1 + (1 - rho)^2) by hand: 2^-16 / (1 + (255/256)^2) = 65536^-1 * 65536 / 130561.
  EXPECT_DOUBLE_EQ(m.calc_diff, 1.0 / 130561.0);
  EXPECT_LT(rho, t.norm_relative);
  EXPECT_LT(m.calc_diff, t.calc_diff);
}

TEST(CalcDiff, NeverExceedsItsBoundWhereTheNormRelativeErrorPasses) {
  std::mt19937 engine(17);
  std::normal_distribution<double> normal;
  for (OutputType type : {OutputType::kBF16, OutputType::kFP32}) {
    for (Accumulation acc : {Accumulation::kFp32, Accumulation::kTensorCorePromoted, Accumulation::kTensorCoreFast}) {
      const Tolerance t = gemm_tolerance(type, 16384, acc);
      int checked = 0;
      for (int trial = 0; trial < 200; ++trial) {
        // R random; D = R + E with E in a random direction, scaled to put rho
        // just under the bound; half the trials pull E towards -R, the
        // direction that makes calc_diff largest.
        std::vector<double> r(64), e(64);
        double r_norm = 0.0, e_norm = 0.0;
        for (size_t i = 0; i < r.size(); ++i) {
          r[i] = normal(engine);
          e[i] = normal(engine) + (trial % 2 ? -4.0 * r[i] : 0.0);
          r_norm += r[i] * r[i];
          e_norm += e[i] * e[i];
        }
        const double rho = 0.999 * t.norm_relative;
        std::vector<float> d(r.size());
        for (size_t i = 0; i < r.size(); ++i) {
          d[i] = static_cast<float>(r[i] + e[i] * rho * std::sqrt(r_norm / e_norm));
        }
        const ErrorMetrics m = measure_error(d.data(), r.data(), static_cast<int64_t>(r.size()));
        if (m.norm_relative_error > t.norm_relative) continue;  // float rounding pushed it over: not this case
        ASSERT_LE(m.calc_diff, t.calc_diff) << output_name(type) << " " << static_cast<int>(acc) << " trial " << trial;
        ++checked;
      }
      EXPECT_GT(checked, 150) << output_name(type) << " " << static_cast<int>(acc);
    }
  }
}

TEST(GemmTolerance, RejectsKBelowOne) {
  EXPECT_THROW(gemm_tolerance(OutputType::kBF16, 0, Accumulation::kFp32), std::invalid_argument);
}

// The table of docs/tolerances.md, to 3 significant digits.
struct TableRow {
  OutputType type;
  int64_t k;
  double s_coefficient, norm_relative;
};

TEST(GemmTolerance, MatchesTheTableInTheDocs) {
  const TableRow table[] = {
      {OutputType::kFP32, 1, 1.79e-7, 2.38e-7},    {OutputType::kFP32, 128, 7.75e-6, 8.53e-7},
      {OutputType::kFP32, 7168, 4.28e-4, 5.23e-6}, {OutputType::kFP32, 16384, 9.78e-4, 7.81e-6},
      {OutputType::kBF16, 1, 1.80e-7, 3.91e-3},    {OutputType::kBF16, 128, 7.78e-6, 3.91e-3},
      {OutputType::kBF16, 7168, 4.29e-4, 3.91e-3}, {OutputType::kBF16, 16384, 9.82e-4, 3.91e-3},
  };
  for (const TableRow& row : table) {
    const Tolerance t = gemm_tolerance(row.type, row.k, Accumulation::kFp32);
    const std::string where = std::string(output_name(row.type)) + ", K = " + std::to_string(row.k);
    EXPECT_NEAR(t.s_coefficient, row.s_coefficient, 0.005 * row.s_coefficient) << where;
    EXPECT_NEAR(t.norm_relative, row.norm_relative, 0.005 * row.norm_relative) << where;
  }
}

// -----------------------------------------------------------------------------
// check_tolerance
// -----------------------------------------------------------------------------

TEST(CheckTolerance, PassesAnExactOutput) {
  const std::vector<float> d = {1.0f, -2.0f};
  const std::vector<double> r = {1.0, -2.0}, s = {3.0, 4.0};
  const ToleranceCheck c =
      check_tolerance(d.data(), r.data(), s.data(), 2, gemm_tolerance(OutputType::kFP32, 16, Accumulation::kFp32));
  EXPECT_TRUE(c.passed) << c.failure;
  EXPECT_TRUE(c.failure.empty());
}

TEST(CheckTolerance, NeverPassesNanEvenWithoutAnElementBound) {
  const std::vector<float> d = {1.0f, static_cast<float>(kNaN)};
  const std::vector<double> r = {1.0, 2.0}, s = {1.0, 2.0};
  Tolerance anything_goes;
  anything_goes.s_coefficient = kInfinity;
  anything_goes.norm_relative = kInfinity;
  anything_goes.calc_diff = kInfinity;
  const ToleranceCheck c = check_tolerance(d.data(), r.data(), s.data(), 2, anything_goes);
  EXPECT_FALSE(c.passed);
  EXPECT_EQ(c.worst_index, 1);
  EXPECT_NE(c.failure.find("NaN"), std::string::npos) << c.failure;
}

TEST(CheckTolerance, FailsAnElementOverItsBoundAndNamesIt) {
  Tolerance t;
  t.r_coefficient = 0.01;
  t.norm_relative = t.calc_diff = kInfinity;
  const std::vector<float> d = {100.5f, 200.0f, 301.5f};  // errors 0.5 (bound 1), 0 (2), 1.5 (3)... and:
  const std::vector<double> r = {100.0, 200.0, 300.0}, s = {0.0, 0.0, 0.0};
  EXPECT_TRUE(check_tolerance(d.data(), r.data(), s.data(), 3, t).passed);
  const std::vector<float> over = {100.5f, 200.0f, 303.5f};  // 3.5 > 3
  const ToleranceCheck c = check_tolerance(over.data(), r.data(), s.data(), 3, t);
  EXPECT_FALSE(c.passed);
  EXPECT_EQ(c.elements_over_bound, 1);
  EXPECT_EQ(c.worst_index, 2);
  EXPECT_NEAR(c.worst_ratio, 3.5 / 3.0, 1e-6);
}

TEST(CheckTolerance, FailsWhenOnlyTheNormRelativeErrorIsTooLarge) {
  Tolerance t;
  t.s_coefficient = 1.0;   // every element within bound...
  t.norm_relative = 1e-3;  // ...but not the norm
  t.calc_diff = kInfinity;
  const std::vector<float> d = {1.01f, 2.02f};
  const std::vector<double> r = {1.0, 2.0}, s = {1.0, 2.0};
  const ToleranceCheck c = check_tolerance(d.data(), r.data(), s.data(), 2, t);
  EXPECT_FALSE(c.passed);
  EXPECT_NE(c.failure.find("norm-relative"), std::string::npos) << c.failure;
}

// The policy against a CPU model of a correct FP32-accumulating kernel (what
// step 01 does): FP8 codes, FMA in FP32, the scales, the output rounding.
struct Fp8Operands {
  QuantizedMatrix a, b;
};

Fp8Operands random_fp8_operands(int64_t m, int64_t n, int64_t k, uint32_t seed) {
  std::mt19937 engine(seed);
  std::normal_distribution<float> normal;
  std::vector<float> a(m * k), b(n * k);
  for (float& x : a) x = normal(engine);
  for (float& x : b) x = normal(engine);
  return {quantize(a.data(), m, k, k, Fp8Format::kE4M3, ScaleGranularity::kPerTensor),
          quantize(b.data(), n, k, k, Fp8Format::kE4M3, ScaleGranularity::kPerTensor)};
}

// The FP32 sum of the modelled kernels for element (i, j): FMAs over the
// first k_used of the K products, in order.
float fp32_model_sum(const Fp8Operands& ops, int64_t i, int64_t j, int64_t k, int64_t k_used) {
  float acc = 0.0f;
  for (int64_t p = 0; p < k_used; ++p) {
    acc = std::fma(fp8_to_float(ops.a.codes[i * k + p], Fp8Format::kE4M3),
                   fp8_to_float(ops.b.codes[j * k + p], Fp8Format::kE4M3), acc);
  }
  return acc;
}

// How the modelled kernel turns its FP32 result into the output type.
enum class Rounding { kNearestEven, kTowardZero };

std::vector<float> fp32_kernel_model(const Fp8Operands& ops, int64_t m, int64_t n, int64_t k, OutputType type,
                                     Rounding rounding, int64_t k_used) {
  std::vector<float> d(m * n);
  const float scale = ops.a.scales[0] * ops.b.scales[0];
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      const float y = fp32_model_sum(ops, i, j, k, k_used) * scale;
      if (type == OutputType::kFP32) {
        d[i * n + j] = y;
      } else if (rounding == Rounding::kNearestEven) {
        d[i * n + j] = bf16_bits_to_float(float_to_bf16_bits(y));
      } else {
        d[i * n + j] = bf16_bits_to_float(static_cast<uint16_t>(float_bits(y) >> 16));
      }
    }
  }
  return d;
}

ToleranceCheck check_model(int64_t m, int64_t n, int64_t k, OutputType type, Rounding rounding, int64_t k_used) {
  const Fp8Operands ops = random_fp8_operands(m, n, k, 13);
  const std::vector<double> a = dequantize(ops.a), b = dequantize(ops.b);
  const ReferenceProduct ref = reference_gemm(a.data(), b.data(), m, n, k);
  const std::vector<float> d = fp32_kernel_model(ops, m, n, k, type, rounding, k_used);
  return check_tolerance(d.data(), ref.value.data(), ref.abs_sum.data(), m * n,
                         gemm_tolerance(type, k, Accumulation::kFp32));
}

TEST(CheckTolerance, PassesACorrectFp32AccumulatingKernelWithBf16Output) {
  const ToleranceCheck c = check_model(32, 48, 4096, OutputType::kBF16, Rounding::kNearestEven, 4096);
  EXPECT_TRUE(c.passed) << c.failure;
}

TEST(CheckTolerance, PassesACorrectFp32AccumulatingKernelWithFp32Output) {
  const ToleranceCheck c = check_model(32, 48, 4096, OutputType::kFP32, Rounding::kNearestEven, 4096);
  EXPECT_TRUE(c.passed) << c.failure;
}

TEST(CheckTolerance, CatchesBf16TruncationInsteadOfRounding) {
  const ToleranceCheck c = check_model(32, 48, 256, OutputType::kBF16, Rounding::kTowardZero, 256);
  EXPECT_FALSE(c.passed);
  EXPECT_GT(c.elements_over_bound, 0);
}

TEST(CheckTolerance, CatchesAKernelThatSkipsTheLastElementOfK) {
  const ToleranceCheck c = check_model(32, 48, 255, OutputType::kFP32, Rounding::kNearestEven, 254);
  EXPECT_FALSE(c.passed);
  EXPECT_GT(c.elements_over_bound, 0);
}

// -----------------------------------------------------------------------------
// The rows a large check compares (common/check/check.h)
// -----------------------------------------------------------------------------

TEST(RowsToCheck, SmallProblemsCheckEveryRowInOrder) {
  const std::vector<int64_t> rows = rows_to_check(300, 64, 64, 1);
  ASSERT_EQ(rows.size(), 300u);
  for (int64_t i = 0; i < 300; ++i) EXPECT_EQ(rows[static_cast<size_t>(i)], i);
}

TEST(RowsToCheck, LargeProblemsCheckTheFirstRowTheLastRowAndDistinctRowsBetween) {
  const int64_t m = 4097;  // 4097 x 4096 x 4096 > kFullCheckLimit multiply-adds
  for (uint64_t seed : {1u, 2u, 3u}) {
    const std::vector<int64_t> rows = rows_to_check(m, 4096, 4096, seed);
    ASSERT_EQ(static_cast<int64_t>(rows.size()), kCheckedRows) << "seed " << seed;
    EXPECT_EQ(rows.front(), 0) << "seed " << seed;
    EXPECT_EQ(rows.back(), m - 1) << "seed " << seed << ": the last row, where a ragged M goes wrong";
    for (size_t i = 1; i < rows.size(); ++i) EXPECT_LT(rows[i - 1], rows[i]) << "seed " << seed;
  }
}

TEST(ReferenceOfRows, RowIOfTheResultIsRowRowsIOfTheFullReference) {
  const int64_t m = 300, n = 24, k = 200;  // k > 128: two groups and two tiles of K
  std::mt19937 engine(7);
  std::normal_distribution<float> normal;
  std::vector<float> a(m * k), b(n * k);
  for (float& x : a) x = normal(engine);
  for (float& x : b) x = normal(engine);
  const QuantizedMatrix qa = quantize(a.data(), m, k, k, Fp8Format::kE4M3, ScaleGranularity::kGroup1x128);
  const QuantizedMatrix qb = quantize(b.data(), n, k, k, Fp8Format::kE5M2, ScaleGranularity::kPerRow);
  const std::vector<double> da = dequantize(qa), db = dequantize(qb);
  const ReferenceProduct full = reference_gemm(da.data(), db.data(), m, n, k);
  const std::vector<int64_t> rows = {0, 7, 150, 298, 299};
  const ReferenceProduct some = reference_of_rows(qa, qb, rows);
  EXPECT_EQ(some.rows, rows);
  ASSERT_EQ(some.n, n);
  for (size_t i = 0; i < rows.size(); ++i) {
    for (int64_t j = 0; j < n; ++j) {
      EXPECT_EQ(some.r(static_cast<int64_t>(i), j), full.r(rows[i], j)) << "row " << rows[i] << ", column " << j;
      EXPECT_EQ(some.s(static_cast<int64_t>(i), j), full.s(rows[i], j)) << "row " << rows[i] << ", column " << j;
    }
  }
}

// check_tolerance bounds an element by S, the sum of |products|, not by |R|:
// where the products cancel (R = 0) a correct kernel still has rounding error.
TEST(CheckTolerance, AnElementWhoseProductsCancelIsBoundedByS) {
  const Tolerance t = gemm_tolerance(OutputType::kFP32, 2, Accumulation::kFp32);
  const std::vector<double> r = {4.0, 0.0}, s = {4.0, 2.0};
  // Half the S term of element 1; the norm-relative error is then about u.
  const std::vector<float> d = {4.0f, static_cast<float>(0.5 * t.s_coefficient * s[1])};
  const ToleranceCheck c = check_tolerance(d.data(), r.data(), s.data(), 2, t);
  EXPECT_TRUE(c.passed) << c.failure;
}

// -----------------------------------------------------------------------------
// The epilogue's check (check_epilogue_rows)
// -----------------------------------------------------------------------------

// A kernel with FP32 accumulation and an epilogue, written with the same
// functions the GPU kernels call (common/device/epilogue.h, output.h); the
// bias index can be shifted and the activation swapped to make it wrong.
struct EpilogueModel {
  std::vector<float> bias;  // N values, or empty
  Activation activation = Activation::kNone;
  Activation computed_activation = Activation::kNone;  // what the model really applies
  int64_t bias_shift = 0;
  float d_scale = 1.0f;
};

std::vector<float> epilogue_kernel_model(const Fp8Operands& ops, int64_t m, int64_t n, int64_t k, OutputType type,
                                         const EpilogueModel& e) {
  std::vector<float> d(m * n);
  const float scale = ops.a.scales[0] * ops.b.scales[0];
  std::vector<uint8_t> stored(m * n * output_bytes(type));
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      const float acc = fp32_model_sum(ops, i, j, k, k);
      const float bias = e.bias.empty() ? 0.0f : e.bias[(j + e.bias_shift) % n];
      const float y = epilogue_value(acc * scale, bias, e.computed_activation);
      store_epilogue_output(stored.data(), i * n + j, type, y, e.d_scale);
      d[i * n + j] = load_output(stored.data(), i * n + j, type, e.d_scale);
    }
  }
  return d;
}

OutputCheck check_epilogue_model(OutputType type, const EpilogueModel& e, int64_t k = 256) {
  const int64_t m = 24, n = 40;
  const Fp8Operands ops = random_fp8_operands(m, n, k, 17);
  const std::vector<double> a = dequantize(ops.a), b = dequantize(ops.b);
  const ReferenceProduct ref = reference_gemm(a.data(), b.data(), m, n, k);
  EpilogueReference reference;
  reference.bias.assign(e.bias.begin(), e.bias.end());
  reference.activation = e.activation;
  reference.d_scale = e.d_scale;
  return check_epilogue_rows(epilogue_kernel_model(ops, m, n, k, type, e), ref, reference, type, k,
                             Accumulation::kFp32);
}

std::vector<float> random_bias(int64_t n, float sigma, uint32_t seed) {
  std::mt19937 engine(seed);
  std::normal_distribution<float> normal(0.0f, sigma);
  std::vector<float> bias(n);
  for (float& x : bias) x = normal(engine);
  return bias;
}

constexpr OutputType kEveryOutput[] = {OutputType::kBF16, OutputType::kFP32, OutputType::kE4M3, OutputType::kE5M2};
constexpr Activation kEveryActivation[] = {Activation::kNone, Activation::kGeluTanh, Activation::kGeluErf};

TEST(CheckEpilogue, PassesACorrectKernelForEveryOutputActivationAndBias) {
  for (OutputType type : kEveryOutput) {
    for (Activation act : kEveryActivation) {
      for (bool with_bias : {false, true}) {
        EpilogueModel e;
        if (with_bias) e.bias = random_bias(40, 1.0f, 5);
        e.activation = e.computed_activation = act;
        e.d_scale = is_fp8_output(type) ? 0.0625f : 1.0f;
        const OutputCheck c = check_epilogue_model(type, e);
        EXPECT_TRUE(c.passed) << output_name(type) << ", " << activation_name(act) << (with_bias ? ", bias" : "")
                              << ": " << c.result.failure;
      }
    }
  }
}

TEST(CheckEpilogue, FailsTheBiasOfTheNextColumn) {
  for (OutputType type : kEveryOutput) {
    EpilogueModel e;
    e.bias = random_bias(40, 1.0f, 5);
    e.bias_shift = 1;
    e.d_scale = is_fp8_output(type) ? 0.0625f : 1.0f;
    EXPECT_FALSE(check_epilogue_model(type, e).passed) << output_name(type);
  }
}

// The two GELU forms differ by up to 5e-4 of z's units: FP32 output tells
// them apart, BF16 (2^-8 relative) cannot, nor can FP8.
TEST(CheckEpilogue, FailsTheOtherGeluFormWithFp32Output) {
  for (Activation act : {Activation::kGeluTanh, Activation::kGeluErf}) {
    EpilogueModel e;
    e.activation = act;
    e.computed_activation = act == Activation::kGeluTanh ? Activation::kGeluErf : Activation::kGeluTanh;
    const OutputCheck c = check_epilogue_model(OutputType::kFP32, e);
    EXPECT_FALSE(c.passed) << activation_name(act);
  }
}

TEST(CheckEpilogue, FailsAMissingActivationOrAMissingBias) {
  for (OutputType type : kEveryOutput) {
    EpilogueModel e;
    e.activation = Activation::kGeluErf;  // asked for, not applied
    e.d_scale = is_fp8_output(type) ? 0.0625f : 1.0f;
    EXPECT_FALSE(check_epilogue_model(type, e).passed) << output_name(type);
    EpilogueModel no_bias;
    no_bias.d_scale = e.d_scale;
    const OutputCheck c = check_epilogue_rows(
        epilogue_kernel_model(random_fp8_operands(24, 40, 256, 17), 24, 40, 256, type, no_bias),
        [] {
          const Fp8Operands ops = random_fp8_operands(24, 40, 256, 17);
          const std::vector<double> a = dequantize(ops.a), b = dequantize(ops.b);
          return reference_gemm(a.data(), b.data(), 24, 40, 256);
        }(),
        EpilogueReference{std::vector<double>(40, 1.0), Activation::kNone, e.d_scale}, type, 256, Accumulation::kFp32);
    EXPECT_FALSE(c.passed) << output_name(type) << ": a bias of 1 never added passes";
  }
}

// FP8 D saturates: a result beyond the format's largest value times d_scale
// is stored as that value, and the check expects exactly that.
TEST(CheckEpilogue, Fp8OutputSaturatesAtTheFormatsLargestValue) {
  EpilogueModel e;
  e.d_scale = 1.0f / 64;  // e4m3's 448 * 2^-6 = 7: most results saturate
  const OutputCheck c = check_epilogue_model(OutputType::kE4M3, e);
  EXPECT_TRUE(c.passed) << c.result.failure;
}

TEST(ReferenceAmax, IsTheLargestActivatedValue) {
  const int64_t m = 24, n = 40, k = 256;
  const Fp8Operands ops = random_fp8_operands(m, n, k, 17);
  const std::vector<double> a = dequantize(ops.a), b = dequantize(ops.b);
  const ReferenceProduct ref = reference_gemm(a.data(), b.data(), m, n, k);
  const EpilogueReference e{{}, Activation::kGeluErf, 1.0f};
  const AmaxReference amax = reference_amax(ref, e, k, Accumulation::kFp32);
  double expected = 0.0;
  for (double r : ref.value)
    expected = std::max(expected, std::fabs(reference_epilogue_value(r, 0.0, Activation::kGeluErf)));
  EXPECT_EQ(amax.amax, expected);
  EXPECT_GT(amax.bound, 0.0);
  EXPECT_LT(amax.bound, 1e-4 * amax.amax);
}

// -----------------------------------------------------------------------------
// The calibrated bounds
// -----------------------------------------------------------------------------

constexpr Accumulation kAccumulations[] = {Accumulation::kFp32, Accumulation::kTensorCorePromoted,
                                           Accumulation::kTensorCoreFast};
constexpr OutputType kOutputs[] = {OutputType::kBF16, OutputType::kFP32};

std::string mode_name(Accumulation accumulation, OutputType type) {
  static const char* kNames[] = {"fp32", "tensor_core_promoted", "tensor_core_fast"};
  return std::string(kNames[static_cast<int>(accumulation)]) + " accumulation, " + output_name(type) + " output";
}

// The reference of a 64 x 64 x 16384 product of random e4m3 operands: the K
// of the promotion witness, 4096 elements.
const ReferenceProduct& witness_reference() {
  static const ReferenceProduct ref = [] {
    const Fp8Operands ops = random_fp8_operands(64, 64, 16384, 29);
    const std::vector<double> a = dequantize(ops.a), b = dequantize(ops.b);
    return reference_gemm(a.data(), b.data(), 64, 64, 16384);
  }();
  return ref;
}

// What a kernel whose sum is off by independent zero-mean errors of norm
// `relative_noise` * ||R|| would store: (R + e) * gain, rounded to the output type.
std::vector<float> noisy_output(const ReferenceProduct& ref, OutputType type, double relative_noise, double gain,
                                uint64_t seed) {
  const size_t count = ref.value.size();
  double squares = 0.0;
  for (double r : ref.value) squares += r * r;
  const double sigma = relative_noise * std::sqrt(squares / static_cast<double>(count));
  std::mt19937_64 engine(seed);
  std::normal_distribution<double> normal;
  std::vector<float> d(count);
  for (size_t i = 0; i < count; ++i) {
    const float y = static_cast<float>((ref.value[i] + sigma * normal(engine)) * gain);
    d[i] = type == OutputType::kBF16 ? bf16_bits_to_float(float_to_bf16_bits(y)) : y;
  }
  return d;
}

ToleranceCheck check_witness(const std::vector<float>& d, OutputType type, Accumulation accumulation) {
  const ReferenceProduct& ref = witness_reference();
  return check_tolerance(d.data(), ref.value.data(), ref.abs_sum.data(), static_cast<int64_t>(d.size()),
                         gemm_tolerance(type, 16384, accumulation));
}

TEST(CalibratedBounds, ExistForEveryAccumulationAndOutputUpToK32768) {
  for (Accumulation acc : kAccumulations) {
    for (OutputType type : kOutputs) {
      for (int64_t k : {int64_t{16}, int64_t{100}, int64_t{1000}, int64_t{7168}, int64_t{16384}, int64_t{32768}}) {
        const CalibratedError e = calibrated_error(acc, type, k);
        EXPECT_TRUE(e.available) << mode_name(acc, type) << ", K = " << k;
        EXPECT_GE(e.k, k);
        EXPECT_TRUE(gemm_tolerance(type, k, acc).calibrated) << mode_name(acc, type) << ", K = " << k;
      }
      EXPECT_FALSE(calibrated_error(acc, type, 32769).available) << mode_name(acc, type);
      EXPECT_FALSE(gemm_tolerance(type, 32769, acc).calibrated) << mode_name(acc, type);
    }
  }
  // The FP32 steps are calibrated from K = 1 (the tensor-core ones and
  // cuBLASLt take K % 16 == 0 only, so their smallest K is 16).
  EXPECT_EQ(calibrated_error(Accumulation::kFp32, OutputType::kBF16, 1).k, 1);
  EXPECT_EQ(calibrated_error(Accumulation::kTensorCorePromoted, OutputType::kBF16, 1).k, 16);
}

// Between two calibrated K the larger one's values hold, and a value never
// shrinks as K grows (the envelope of every calibrated K below).
TEST(CalibratedBounds, NeverShrinkAsKGrows) {
  for (Accumulation acc : kAccumulations) {
    for (OutputType type : kOutputs) {
      CalibratedError previous = calibrated_error(acc, type, 1);
      for (int64_t k = 2; k <= 32768; k += k / 8 + 1) {
        const CalibratedError e = calibrated_error(acc, type, k);
        EXPECT_GE(e.excess_norm, previous.excess_norm) << mode_name(acc, type) << ", K = " << k;
        EXPECT_GE(e.element_ratio, previous.element_ratio) << mode_name(acc, type) << ", K = " << k;
        EXPECT_GE(e.gain_error, previous.gain_error) << mode_name(acc, type) << ", K = " << k;
        previous = e;
      }
    }
  }
}

// A kernel as noisy as half the largest error measured passes in every mode.
TEST(CalibratedBounds, PassAnOutputWithHalfTheMeasuredError) {
  for (Accumulation acc : kAccumulations) {
    for (OutputType type : kOutputs) {
      const double noise = 0.5 * calibrated_error(acc, type, 16384).excess_norm;
      const ToleranceCheck c = check_witness(noisy_output(witness_reference(), type, noise, 1.0, 3), type, acc);
      EXPECT_TRUE(c.passed) << mode_name(acc, type) << ": " << c.failure;
    }
  }
}

// The three bugs the calibrated bounds exist for, in every mode: each fails
// where the derived bounds alone let it pass in some mode.
TEST(CalibratedBounds, FailAUniformScaleOfTwoPerMille) {
  for (Accumulation acc : kAccumulations) {
    for (OutputType type : kOutputs) {
      for (double gain : {1.002, 0.998}) {
        const double noise = 0.5 * calibrated_error(acc, type, 16384).excess_norm;
        const ToleranceCheck c = check_witness(noisy_output(witness_reference(), type, noise, gain, 3), type, acc);
        EXPECT_FALSE(c.passed) << mode_name(acc, type) << ": D scaled by " << gain << " passes";
        EXPECT_NEAR(c.statistics.gain_error, gain - 1.0, 0.0006) << mode_name(acc, type);
      }
    }
  }
}

TEST(CalibratedBounds, FailOneNegatedElement) {
  const ReferenceProduct& ref = witness_reference();
  double squares = 0.0;
  for (double r : ref.value) squares += r * r;
  const double rms = std::sqrt(squares / static_cast<double>(ref.value.size()));
  size_t typical = 0;  // the first element at least as large as the RMS of R
  while (std::fabs(ref.value[typical]) < rms) ++typical;
  for (Accumulation acc : kAccumulations) {
    for (OutputType type : kOutputs) {
      const double noise = 0.5 * calibrated_error(acc, type, 16384).excess_norm;
      std::vector<float> d = noisy_output(ref, type, noise, 1.0, 3);
      d[typical] = -d[typical];
      const ToleranceCheck c = check_witness(d, type, acc);
      EXPECT_FALSE(c.passed) << mode_name(acc, type) << ": one negated element passes";
      EXPECT_EQ(c.worst_index, static_cast<int64_t>(typical)) << mode_name(acc, type);
    }
  }
}

// Promotion turned off: an output as far off as fast accumulation measured
// fails the promoted bounds, with either output type.
TEST(CalibratedBounds, FailFastAccumulationErrorUnderThePromotedBound) {
  for (OutputType type : kOutputs) {
    const double fast = calibrated_error(Accumulation::kTensorCoreFast, type, 16384).excess_norm;
    const ToleranceCheck c =
        check_witness(noisy_output(witness_reference(), type, fast, 1.0, 3), type, Accumulation::kTensorCorePromoted);
    EXPECT_FALSE(c.passed) << output_name(type) << " output: fast accumulation's error passes as promoted";
    const ToleranceCheck own =
        check_witness(noisy_output(witness_reference(), type, fast, 1.0, 3), type, Accumulation::kTensorCoreFast);
    EXPECT_TRUE(own.passed) << output_name(type) << " output: " << own.failure;
  }
}

// The statistics themselves, on outputs whose values are known.
TEST(ErrorStatistics, OfTheRoundedExactResultAreZeroAndOfAScaledOneAreItsScale) {
  const ReferenceProduct& ref = witness_reference();
  for (OutputType type : kOutputs) {
    const std::vector<float> exact = noisy_output(ref, type, 0.0, 1.0, 1);
    const int64_t count = static_cast<int64_t>(exact.size());
    const ErrorStatistics st = measure_statistics(exact.data(), ref.value.data(), ref.abs_sum.data(), count, type);
    EXPECT_EQ(st.gain_error, 0.0) << output_name(type);
    EXPECT_EQ(st.excess_norm, 0.0) << output_name(type);
    const ErrorMetrics m = measure_error(exact.data(), ref.value.data(), count);
    EXPECT_DOUBLE_EQ(st.output_rounding_norm, m.norm_relative_error) << output_name(type);
    if (type == OutputType::kBF16) {
      // Rounding to 8 significant bits: about 2^-8 / 2.4 in norm (> 0, < u_out).
      EXPECT_GT(st.output_rounding_norm, 0.3 * kBf16UnitRoundoff);
      EXPECT_LT(st.output_rounding_norm, kBf16UnitRoundoff);
    }
  }
  // FP32 output of R * (1 + 2^-10): the gain is 2^-10 (to the rounding of R
  // to float), the excess norm too, and the element ratio |R| 2^-10 / S at most.
  std::vector<float> scaled(ref.value.size());
  for (size_t i = 0; i < scaled.size(); ++i) scaled[i] = static_cast<float>(ref.value[i] * (1.0 + 0x1p-10));
  const ErrorStatistics st = measure_statistics(scaled.data(), ref.value.data(), ref.abs_sum.data(),
                                                static_cast<int64_t>(scaled.size()), OutputType::kFP32);
  EXPECT_NEAR(st.gain_error, 0x1p-10, 1e-7);
  EXPECT_NEAR(st.excess_norm, 0x1p-10, 1e-7);
  double ratio = 0.0;
  for (size_t i = 0; i < scaled.size(); ++i)
    ratio = std::max(ratio, std::fabs(ref.value[i]) * 0x1p-10 / ref.abs_sum[i]);
  EXPECT_NEAR(st.element_ratio, ratio, 1e-3 * ratio);
}

}  // namespace
}  // namespace fp8gemm
