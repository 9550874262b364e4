// The epilogue's arithmetic (common/device/epilogue.h, common/device/output.h):
// GELU in both forms against double-precision formulas, the slope bound the
// tolerance uses, the bias, and the FP8 output with its scale. The kernels
// call these same functions, so a wrong formula here would be wrong everywhere.
#include "common/device/epilogue.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "common/device/output.h"
#include "common/fp8/fp8.h"

namespace fp8gemm {
namespace {

double gelu_tanh_exact(double z) {
  const double pi = 3.14159265358979323846;
  return 0.5 * z * (1.0 + std::tanh(std::sqrt(2.0 / pi) * (z + 0.044715 * z * z * z)));
}

double gelu_erf_exact(double z) { return 0.5 * z * (1.0 + std::erf(z / std::sqrt(2.0))); }

// z from -20 to 20 in steps of 1/64, and a few far out.
std::vector<float> arguments() {
  std::vector<float> z;
  for (int i = -1280; i <= 1280; ++i) z.push_back(static_cast<float>(i) / 64.0f);
  for (float far : {-1e6f, -1000.0f, -50.0f, 50.0f, 1000.0f, 1e6f, 1e-30f, -1e-30f}) z.push_back(far);
  return z;
}

// Both forms agree with the formula in double to a few FP32 roundings of
// |z| (the size of the terms added: for negative z the result is a small
// difference of z / 2 and z / 2 tanh(...)).
TEST(Gelu, BothFormsMatchTheirDefinitionInDouble) {
  for (float z : arguments()) {
    const double tolerance = 8.0 * 0x1p-24 * (std::fabs(z) + 1e-30);
    EXPECT_NEAR(gelu_tanh(z), gelu_tanh_exact(z), tolerance) << "z = " << z;
    EXPECT_NEAR(gelu_erf(z), gelu_erf_exact(z), tolerance) << "z = " << z;
  }
}

TEST(Gelu, KnownValues) {
  EXPECT_EQ(gelu_tanh(0.0f), 0.0f);
  EXPECT_EQ(gelu_erf(0.0f), 0.0f);
  EXPECT_NEAR(gelu_erf(1.0f), 0.8413447460685429, 1e-6);  // Phi(1)
  EXPECT_NEAR(gelu_tanh(1.0f), 0.8411919906082768, 1e-6);
  EXPECT_EQ(gelu_tanh(1e6f), 1e6f);  // far right: z
  EXPECT_EQ(gelu_erf(-1e6f), 0.0f);  // far left: 0 (of either sign)
  // The two forms differ by less than 5e-4 anywhere (a tanh approximation of erf).
  double largest = 0.0;
  for (float z : arguments()) largest = std::max(largest, std::fabs(gelu_tanh_exact(z) - gelu_erf_exact(z)));
  EXPECT_LT(largest, 5e-4);
  EXPECT_GT(largest, 1e-4);  // and they do differ: a kernel computing the wrong form can be caught
}

// The tolerance of an activated output multiplies the error of z by
// kGeluSlopeBound: it must bound |GELU'| everywhere, and not by much.
TEST(Gelu, SlopeBoundHoldsAndIsTight) {
  double steepest = 0.0;
  for (double z = -10.0; z <= 10.0; z += 1.0 / 1024) {
    const double h = 1e-6;
    for (double (*f)(double) : {gelu_tanh_exact, gelu_erf_exact}) {
      steepest = std::max(steepest, std::fabs((f(z + h) - f(z - h)) / (2 * h)));
    }
  }
  EXPECT_LE(steepest, kGeluSlopeBound);
  EXPECT_GT(steepest, kGeluSlopeBound - 0.01);
}

TEST(Epilogue, ActivationNoneIsTheIdentityAndTheBiasIsAddedOnce) {
  for (float z : arguments()) EXPECT_EQ(apply_activation(z, Activation::kNone), z);
  EXPECT_EQ(epilogue_value(3.0f, -1.25f, Activation::kNone), 1.75f);
  EXPECT_EQ(epilogue_value(3.0f, -1.25f, Activation::kGeluErf), gelu_erf(1.75f));
  EXPECT_EQ(epilogue_value(3.0f, -1.25f, Activation::kGeluTanh), gelu_tanh(1.75f));
}

TEST(Epilogue, LoadsBiasOfEitherType) {
  const float f32[] = {1.5f, -2.25f, 1e-3f};
  const uint16_t bf16[] = {float_to_bf16_bits(1.5f), float_to_bf16_bits(-2.25f), float_to_bf16_bits(1e-3f)};
  for (int n = 0; n < 3; ++n) {
    EXPECT_EQ(load_bias(f32, n, BiasType::kFP32), f32[n]);
    EXPECT_EQ(load_bias(bf16, n, BiasType::kBF16), bf16_bits_to_float(bf16[n]));
  }
  EXPECT_NE(load_bias(bf16, 2, BiasType::kBF16), 1e-3f);  // BF16 rounds 1e-3
}

// FP8 D stores fp8(y / d_scale): saturating, round to nearest even; reading
// it back gives code * d_scale.
TEST(Fp8Output, StoresTheScaledValueRoundedAndSaturated) {
  uint8_t d[6] = {};
  const float d_scale = 0.5f;
  store_epilogue_output(d, 0, OutputType::kE4M3, 1.0f, d_scale);     // 2.0: exact
  store_epilogue_output(d, 1, OutputType::kE4M3, 1000.0f, d_scale);  // 2000 > 448: saturates
  store_epilogue_output(d, 2, OutputType::kE4M3, -1000.0f, d_scale);
  store_epilogue_output(d, 3, OutputType::kE4M3, 4.25f, d_scale);  // 8.5: a tie between 8 and 9, to even (8)
  store_epilogue_output(d, 4, OutputType::kE5M2, 1e6f, d_scale);   // beyond 57344: saturates
  store_epilogue_output(d, 5, OutputType::kE5M2, 2.75f, d_scale);  // 5.5: a tie between 5 and 6, to even (6)
  EXPECT_EQ(load_output(d, 0, OutputType::kE4M3, d_scale), 1.0f);
  EXPECT_EQ(load_output(d, 1, OutputType::kE4M3, d_scale), 224.0f);
  EXPECT_EQ(load_output(d, 2, OutputType::kE4M3, d_scale), -224.0f);
  EXPECT_EQ(load_output(d, 3, OutputType::kE4M3, d_scale), 4.0f);
  EXPECT_EQ(load_output(d, 4, OutputType::kE5M2, d_scale), 28672.0f);
  EXPECT_EQ(load_output(d, 5, OutputType::kE5M2, d_scale), 3.0f);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(d[i], fp8_output_code(std::vector<float>{1.0f, 1000.0f, -1000.0f, 4.25f}[i], OutputType::kE4M3, d_scale));
  }
  EXPECT_EQ(output_bytes(OutputType::kE4M3), 1);
  EXPECT_EQ(output_bytes(OutputType::kE5M2), 1);
}

TEST(Fp8Output, DividesByTheScaleBeforeRounding) {
  // y / d_scale, not y * (1 / d_scale): with d_scale = 3, y = 3 * 1.125 is
  // exactly 1.125 (an e4m3 value) after the division.
  const float y = 3.375f;
  EXPECT_EQ(fp8_to_float(fp8_output_code(y, OutputType::kE4M3, 3.0f), Fp8Format::kE4M3), 1.125f);
}

}  // namespace
}  // namespace fp8gemm
