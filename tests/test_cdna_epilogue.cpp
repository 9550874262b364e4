// The plain functions the CDNA fused epilogue (steps/07_fused_epilogue/
// fused_epilogue_cdna.hip) takes from common/, tested on the CPU since no AMD
// GPU runs that kernel here:
//   - GELU without a math library (common/device/gelu_portable.h): erf
//     within two units in the last place of the double-precision function;
//     the tanh form epilogue.h's own (z / (1 + e^(-2a)), with exp2f),
//     accurate relative to y also for negative z; both GELU forms within a
//     quarter of the activation error that the check of an activated output
//     allows (8 u (|z| + |y|), common/check/check.h);
//   - where a kernel finds its scales (common/device/operand_scales.h): the
//     part constant along K times the part of a K block is, for every element
//     and granularity, the scale quantize() gave that element;
//   - the E8M0 scale byte of 1.0 passed to the scaled MFMA (common/cdna/mfma_layout.h).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "common/cdna/mfma_layout.h"
#include "common/device/epilogue.h"
#include "common/device/gelu_portable.h"
#include "common/device/operand_scales.h"
#include "common/fp8/quantize.h"

namespace fp8gemm {
namespace {

constexpr double kUnitRoundoff = 0x1p-24;  // u of FP32

// The distance between `reference` rounded to float and the next float away
// from zero: one unit in the last place of the FP32 result.
double ulp_of(double reference) {
  const float f = std::fabs(static_cast<float>(reference));
  if (f == 0.0f) return std::numeric_limits<float>::denorm_min();
  return std::nextafter(f, std::numeric_limits<float>::infinity()) - f;
}

// Every 4099th positive float below infinity (about 520 000 of them, all
// binades, subnormals included), each with both signs.
std::vector<float> float_sweep() {
  std::vector<float> x;
  for (uint32_t bits = 0; bits < 0x7F800000u; bits += 4099) {
    float f;
    std::memcpy(&f, &bits, sizeof(f));
    x.push_back(f);
    x.push_back(-f);
  }
  return x;
}

TEST(GeluPortable, ErfWithinTwoUlps) {
  double worst = 0.0;
  for (float x : float_sweep()) {
    const double e = std::erf(static_cast<double>(x));
    const double ulps = std::fabs(erf_portable(x) - e) / ulp_of(e);
    ASSERT_LE(ulps, 2.0) << "erf(" << x << ")";
    worst = std::max(worst, ulps);
  }
  // Measured: 1.27 ulps (each piece's error reached).
  EXPECT_GT(worst, 0.5);
}

TEST(GeluPortable, SpecialValues) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_TRUE(std::isnan(erf_portable(nan)));
  EXPECT_TRUE(std::isnan(gelu_tanh_portable(nan)));
  EXPECT_TRUE(std::isnan(gelu_erf_portable(nan)));
  EXPECT_EQ(erf_portable(kInf), 1.0f);
  EXPECT_EQ(erf_portable(-kInf), -1.0f);
  EXPECT_EQ(erf_portable(-5.0f), -1.0f);  // past 4, where erf rounds to -1
  EXPECT_TRUE(std::signbit(erf_portable(-0.0f)) && erf_portable(-0.0f) == 0.0f);
  EXPECT_EQ(gelu_tanh_portable(0.0f), 0.0f);
  EXPECT_EQ(gelu_tanh_portable(1e6f), 1e6f);         // e^(-2u) = 0: z
  const float far_left = gelu_tanh_portable(-1e6f);  // e^(-2u) = inf: -0
  EXPECT_TRUE(std::signbit(far_left) && far_left == 0.0f);
  EXPECT_EQ(gelu_erf_portable(0.0f), 0.0f);
}

double gelu_tanh_exact(double z) {
  const double pi = 3.14159265358979323846;
  return 0.5 * z * (1.0 + std::tanh(std::sqrt(2.0 / pi) * (z + 0.044715 * z * z * z)));
}

double gelu_erf_exact(double z) { return 0.5 * z * (1.0 + std::erf(z / std::sqrt(2.0))); }

// The check of an activated output allows GELU an error of 8 u (|z| + |y|);
// both forms stay within a quarter of it (measured: 0.93 u (|z| + |y|) for
// the tanh form, 0.84 u for the erf form). Above 1e-30 in magnitude, where
// 0.5 z is still a normal float.
TEST(GeluPortable, BothFormsMatchTheirDefinitionInDouble) {
  for (float z : float_sweep()) {
    if (!(std::fabs(z) > 1e-30f && std::fabs(z) < 1e30f)) continue;
    const double y_tanh = gelu_tanh_exact(z);
    const double y_erf = gelu_erf_exact(z);
    ASSERT_LE(std::fabs(gelu_tanh_portable(z) - y_tanh), 2.0 * kUnitRoundoff * (std::fabs(z) + std::fabs(y_tanh)))
        << "z = " << z;
    ASSERT_LE(std::fabs(gelu_erf_portable(z) - y_erf), 2.0 * kUnitRoundoff * (std::fabs(z) + std::fabs(y_erf)))
        << "z = " << z;
  }
}

// The tanh form without cancellation: for negative z, y = z / (1 + e^(-2a)),
// a = sqrt(2 / pi) (z + 0.044715 z^3), is a small number computed without
// subtracting nearly equal ones, as 1 + tanh(a) does (in FP32 it loses every
// digit below z = -5 or so, where tanh(a) rounds to -1; the previous version
// of gelu_tanh_portable, which computed it, fails this test for most z below
// -2.4). What remains is the error of the exponent, a few roundings, which
// the exponential turns into a relative error 2 |a| times as large: the bound
// is 4 u (1 + 2 |a|) of |y| (measured: 2.1). The reference is the same formula in double, which has
// no cancellation either (the tanh form in double loses all its digits below
// z = -7). Down to z = -10, where y is still a normal float (about -1.2e-37).
TEST(GeluPortable, TanhFormAccurateRelativeToYForNegativeZ) {
  const double pi = 3.14159265358979323846;
  for (int i = -640; i < 0; ++i) {
    const float z = static_cast<float>(i) / 64.0f;
    const double a = std::sqrt(2.0 / pi) * (z + 0.044715 * z * z * z);
    const double y = z / (1.0 + std::exp(-2.0 * a));
    ASSERT_LE(std::fabs(gelu_tanh_portable(z) - y), 4.0 * kUnitRoundoff * (1.0 + 2.0 * std::fabs(a)) * std::fabs(y))
        << "z = " << z;
  }
}

// The same formulas as epilogue.h's: the tanh form is its gelu_tanh itself,
// so the two are equal, bit for bit; the erf form (the library's erff there)
// agrees to a few roundings everywhere; and the forms stay distinguishable.
TEST(GeluPortable, AgreesWithTheLibraryVersionsOfEpilogueH) {
  for (int i = -1280; i <= 1280; ++i) {
    const float z = static_cast<float>(i) / 64.0f;
    const double tolerance = 4.0 * kUnitRoundoff * (std::fabs(z) + std::fabs(gelu_erf_exact(z)));
    EXPECT_EQ(apply_activation_portable(z, Activation::kGeluTanh), apply_activation(z, Activation::kGeluTanh))
        << "z = " << z;
    EXPECT_NEAR(apply_activation_portable(z, Activation::kGeluErf), apply_activation(z, Activation::kGeluErf),
                tolerance)
        << "z = " << z;
    EXPECT_EQ(apply_activation_portable(z, Activation::kNone), z);
  }
  EXPECT_NE(gelu_tanh_portable(1.0f), gelu_erf_portable(1.0f));  // 0.84119 vs 0.84134
}

TEST(OperandScales, WhichGranularitiesChangeAlongK) {
  EXPECT_FALSE(scales_change_along_k(ScaleGranularity::kPerTensor));
  EXPECT_FALSE(scales_change_along_k(ScaleGranularity::kPerRow));
  EXPECT_TRUE(scales_change_along_k(ScaleGranularity::kGroup1x128));
  EXPECT_TRUE(scales_change_along_k(ScaleGranularity::kBlock128x128));
}

TEST(OperandScales, ConstantPartOfEachGranularity) {
  const float device_scales[] = {0.5f, 2.0f, 8.0f};
  // Per tensor: the host float, or the float the pointer points to.
  EXPECT_EQ(constant_scales(ScaleGranularity::kPerTensor, 3.0f, nullptr).of_row(7), 3.0f);
  EXPECT_EQ(constant_scales(ScaleGranularity::kPerTensor, 1.0f, device_scales).of_row(2), 0.5f);
  // Per row: each row's own.
  const ConstantScales rows = constant_scales(ScaleGranularity::kPerRow, 1.0f, device_scales);
  EXPECT_EQ(rows.of_row(0), 0.5f);
  EXPECT_EQ(rows.of_row(2), 8.0f);
  // Along K: nothing constant, 1; the K-block part is all of it.
  EXPECT_EQ(constant_scales(ScaleGranularity::kGroup1x128, 1.0f, device_scales).of_row(1), 1.0f);
  EXPECT_EQ(constant_scales(ScaleGranularity::kBlock128x128, 1.0f, device_scales).of_row(1), 1.0f);
  EXPECT_EQ(k_block_scales(ScaleGranularity::kPerTensor, device_scales, 1, 300), nullptr);
  EXPECT_EQ(k_block_scales(ScaleGranularity::kPerRow, device_scales, 1, 300), nullptr);
}

TEST(OperandScales, KBlockPartByHand) {
  const std::vector<float> scales(1000);
  // 300 columns: 3 K blocks (the last one partial). 1 x 128: row r starts at 3 r.
  EXPECT_EQ(k_block_scales(ScaleGranularity::kGroup1x128, scales.data(), 2, 300), scales.data() + 6);
  // 128 x 128: rows 0-127 share block row 0, rows 128-255 block row 1 (at 3).
  EXPECT_EQ(k_block_scales(ScaleGranularity::kBlock128x128, scales.data(), 127, 300), scales.data());
  EXPECT_EQ(k_block_scales(ScaleGranularity::kBlock128x128, scales.data(), 130, 300), scales.data() + 3);
}

// For every element of a ragged matrix quantized at every granularity, the
// constant part times the element's K-block part is the scale quantize()
// gave the element: a kernel applying the two parts where operand_scales.h
// says multiplies by exactly the scale the data was quantized with.
TEST(OperandScales, PartsMultiplyToTheScaleQuantizeGave) {
  constexpr int64_t kRows = 300, kCols = 300;
  std::mt19937 rng(20261130);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> x(kRows * kCols);
  for (float& v : x) v = normal(rng) * std::exp2(static_cast<float>(rng() % 9) - 4.0f);
  for (ScaleGranularity g : {ScaleGranularity::kPerTensor, ScaleGranularity::kPerRow, ScaleGranularity::kGroup1x128,
                             ScaleGranularity::kBlock128x128}) {
    const QuantizedMatrix q = quantize(x.data(), kRows, kCols, kCols, Fp8Format::kE4M3, g);
    const ConstantScales constant = constant_scales(g, 1.0f, q.scales.data());
    for (int64_t row = 0; row < kRows; ++row) {
      const float* blocks = k_block_scales(g, q.scales.data(), row, kCols);
      for (int64_t col = 0; col < kCols; ++col) {
        const float k_part = blocks != nullptr ? blocks[col / kQuantGroupSize] : 1.0f;
        ASSERT_EQ(constant.of_row(row) * k_part, q.scales[scale_index(row, col, kRows, kCols, g)])
            << granularity_name(g) << ", element (" << row << ", " << col << ")";
      }
    }
  }
}

// E8M0 is a bare exponent with bias 127: the scaled MFMA multiplies by
// 2^(byte - 127), so the byte of "no scale" is 127, not 0 (that is 2^-127).
TEST(ScaledMfma, E8m0ByteOfOneIs127) {
  EXPECT_EQ(mfma::kE8m0One, 127);
  EXPECT_EQ(std::ldexp(1.0, mfma::kE8m0One - 127), 1.0);
}

}  // namespace
}  // namespace fp8gemm
