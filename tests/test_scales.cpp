// The rule of validate_gemm_args (common/api/gemm.cpp) on the product of the
// two scales: every step multiplies its sums by a_scale * b_scale in FP32, so
// that product must be a finite normal float (or zero, when a scale is zero).
// Each scale finite on its own is not enough: 1e30 * 1e30 overflows to
// infinity and 1e-30 * 1e-30 underflows to zero, and either would turn a
// correct kernel's D into infinities or zeros with no error. Nothing here
// touches a GPU: the pointers are dummies that are never read.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "common/api/gemm.h"

namespace fp8gemm {
namespace {

const uint8_t* const kDummyA = reinterpret_cast<const uint8_t*>(uintptr_t{0x10000});
const uint8_t* const kDummyB = reinterpret_cast<const uint8_t*>(uintptr_t{0x20000});
void* const kDummyD = reinterpret_cast<void*>(uintptr_t{0x30000});

constexpr float kFloatMax = std::numeric_limits<float>::max();
constexpr float kSmallestNormal = std::numeric_limits<float>::min();  // 2^-126

// A valid 64 x 32 x 64 call with the given scales.
GemmArgs args_with_scales(float a_scale, float b_scale) {
  const GemmShape shape{64, 32, 64};
  const GemmBuffers buffers{kDummyA, 64, a_scale, kDummyB, 64, b_scale, kDummyD, 32};
  return make_gemm_args(shape, buffers, /*stream=*/nullptr);
}

::testing::AssertionResult rejected_naming(float a_scale, float b_scale, const std::string& rule) {
  const Status status = validate_gemm_args(args_with_scales(a_scale, b_scale));
  if (status.code != StatusCode::kInvalidArgument) {
    return ::testing::AssertionFailure() << a_scale << " * " << b_scale << " gave " << status_code_name(status.code)
                                         << " (" << status.message << "), not invalid argument";
  }
  if (status.message.find(rule) == std::string::npos) {
    return ::testing::AssertionFailure() << "message \"" << status.message << "\" does not say \"" << rule << "\"";
  }
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult accepted(float a_scale, float b_scale) {
  const Status status = validate_gemm_args(args_with_scales(a_scale, b_scale));
  if (status.ok()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << a_scale << " * " << b_scale << " rejected: " << status.message;
}

constexpr const char* kOverflowRule = "a_scale * b_scale must be finite";
constexpr const char* kUnderflowRule = "a_scale * b_scale must not underflow";

TEST(ScaleProduct, FiniteScalesWhoseProductOverflowsAreRejected) {
  EXPECT_TRUE(rejected_naming(1e30f, 1e30f, kOverflowRule));
  EXPECT_TRUE(rejected_naming(-1e20f, 1e20f, kOverflowRule));
  EXPECT_TRUE(rejected_naming(kFloatMax, 2.0f, kOverflowRule));
  EXPECT_TRUE(rejected_naming(kFloatMax, -kFloatMax, kOverflowRule));
}

TEST(ScaleProduct, TheMessageGivesTheScales) {
  const Status status = validate_gemm_args(args_with_scales(1e30f, 2e30f));
  EXPECT_NE(status.message.find("1e+30"), std::string::npos) << status.message;
  EXPECT_NE(status.message.find("2e+30"), std::string::npos) << status.message;
}

TEST(ScaleProduct, TheOverflowThresholdIsFloatRounding) {
  // 2^64 * 2^63 = 2^127 is finite; 2^64 * 2^64 = 2^128 is not.
  EXPECT_TRUE(accepted(0x1p64f, 0x1p63f));
  EXPECT_TRUE(rejected_naming(0x1p64f, 0x1p64f, kOverflowRule));
  // FLT_MAX * (1 + 2^-23) exceeds FLT_MAX by about 2^105, past the midpoint
  // between FLT_MAX and 2^128 (FLT_MAX + 2^103): it rounds to infinity.
  EXPECT_TRUE(rejected_naming(kFloatMax, 1.0f + 0x1p-23f, kOverflowRule));
  EXPECT_TRUE(accepted(kFloatMax, 1.0f));
  EXPECT_TRUE(accepted(kFloatMax, 0.5f));
}

TEST(ScaleProduct, NonZeroScalesWhoseProductUnderflowsAreRejected) {
  EXPECT_TRUE(rejected_naming(1e-30f, 1e-30f, kUnderflowRule));      // 1e-60: zero in float
  EXPECT_TRUE(rejected_naming(0x1p-70f, 0x1p-60f, kUnderflowRule));  // 2^-130: a subnormal
  EXPECT_TRUE(rejected_naming(-0x1p-100f, 0x1p-40f, kUnderflowRule));
  EXPECT_TRUE(rejected_naming(std::numeric_limits<float>::denorm_min(), 1.0f, kUnderflowRule));
}

TEST(ScaleProduct, TheUnderflowThresholdIsTheSmallestNormalFloat) {
  EXPECT_TRUE(accepted(0x1p-63f, 0x1p-63f));  // 2^-126, the smallest normal
  EXPECT_TRUE(accepted(kSmallestNormal, 1.0f));
  EXPECT_TRUE(rejected_naming(0x1p-63f, 0x1p-64f, kUnderflowRule));  // 2^-127
  // A subnormal scale times a large one can be a normal product: accepted.
  EXPECT_TRUE(accepted(0x1p-140f, 0x1p20f));
}

TEST(ScaleProduct, AZeroScaleIsAcceptedAndGivesAZeroProduct) {
  EXPECT_TRUE(accepted(0.0f, 1.0f));
  EXPECT_TRUE(accepted(1e30f, 0.0f));
  EXPECT_TRUE(accepted(-0.0f, 0x1p-140f));
}

TEST(ScaleProduct, OrdinaryScalesAreAccepted) {
  // Per-tensor scales of N(0, 1) data quantized to e4m3 are about 5 / 448.
  EXPECT_TRUE(accepted(5.0f / 448.0f, 4.5f / 448.0f));
  EXPECT_TRUE(accepted(1.0f, 1.0f));
  EXPECT_TRUE(accepted(-2.0f, 3.0f));
}

TEST(ScaleProduct, EachScaleMustStillBeFiniteOnItsOwn) {
  // The older rule comes first: an infinite scale is named as such, even
  // when the other scale is 0.
  EXPECT_TRUE(rejected_naming(std::numeric_limits<float>::infinity(), 0.0f, "a_scale and b_scale must be finite"));
  EXPECT_TRUE(rejected_naming(0.0f, std::numeric_limits<float>::quiet_NaN(), "a_scale and b_scale must be finite"));
}

}  // namespace
}  // namespace fp8gemm
