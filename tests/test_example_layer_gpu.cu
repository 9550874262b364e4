// The end-to-end example (examples/fp8_layer.h, examples/README.md) on the
// GPU: BF16 activations quantized per token on the GPU, step 07 into FP8 e4m3
// with a BF16 bias, GELU (tanh) and amax, run twice (a guessed d_scale, then
// the delayed-scaling d_scale from the first run's amax), and the next GEMM
// consuming that FP8 output with its per-tensor scale read from device memory.
// The test runs the example's own code (run_fp8_layer) and expects what the
// program reports to hold: each run of the first GEMM matches FP64 after the
// epilogue and its amax matches the reference's; the second run saturates
// nothing; the second GEMM matches FP64 of H as decoded times W2.
//
// Shapes: a small one (M 64, K 1024, N1 512, N2 768) and the program's
// DeepSeek-V3-like one (M 256, K 7168, N1 2048, N2 7168). Inputs are drawn
// from the run's seed (printed; FP8GEMM_TEST_SEED replays it). Skipped, with
// the reason, without a usable GPU or on a GPU that is not step 07's compute
// capability (9.0).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <ostream>
#include <sstream>
#include <string>

#include "common/api/registry.h"
#include "examples/fp8_layer.h"
#include "support/require_gpu.h"
#include "support/seed.h"

namespace fp8gemm {
namespace example {

// What gtest prints for a parameter: "M 64, K 1024, N1 512, N2 768".
void PrintTo(const LayerShape& shape, std::ostream* out) { *out << describe(shape); }

}  // namespace example

namespace {

using example::LayerReport;
using example::LayerShape;

const LayerShape kSmallLayer{64, 1024, 512, 768};

class ExampleLayerTest : public ::testing::TestWithParam<LayerShape> {
 protected:
  void SetUp() override {
    const StepInfo* step = find_step("07_fused_epilogue");
    ASSERT_NE(step, nullptr) << "the example runs step 07_fused_epilogue, which this build does not register";
    if (!test_support::require_step_gpu_or_skip(*step)) return;
    test_support::record_run_seed();
  }
};

TEST_P(ExampleLayerTest, BothGemmsMatchFp64AndDelayedScalingSaturatesNothing) {
  const LayerShape& shape = GetParam();
  uint64_t seed = test_support::run_seed();
  for (int64_t size : {shape.m, shape.k, shape.n1, shape.n2})
    seed = test_support::mix_seed(seed, static_cast<uint64_t>(size));
  const LayerReport report = example::run_fp8_layer(shape, seed);
  std::ostringstream printed;
  example::print_report(report, printed);
  const std::string context = example::describe(shape) +
                              ", FP8GEMM_TEST_SEED=" + std::to_string(test_support::run_seed()) + "\n" + printed.str();

  ASSERT_TRUE(report.status.ok()) << status_code_name(report.status.code) << ": " << report.status.message << "\n"
                                  << context;
  ASSERT_EQ(report.gemms_run, 3) << context;
  EXPECT_EQ(report.activation_scales, shape.m * ((shape.k + 127) / 128)) << context;
  // Run 1, the guessed d_scale: correct, saturation included.
  EXPECT_TRUE(report.first.check.passed) << context;
  EXPECT_TRUE(report.first.amax_ok) << context;
  // Run 2: d_scale from run 1's amax; the kernel is deterministic, so the amax is the same and nothing saturates.
  EXPECT_EQ(report.second.d_scale, example::delayed_d_scale(report.first.amax)) << context;
  EXPECT_EQ(report.second.amax, report.first.amax) << context;
  EXPECT_FALSE(report.second.saturated) << context;
  EXPECT_TRUE(report.second.check.passed) << context;
  EXPECT_TRUE(report.second.amax_ok) << context;
  // The second GEMM, consuming H.
  EXPECT_TRUE(report.y_check.passed) << context;
  EXPECT_TRUE(report.passed()) << context;
}

std::string shape_name(const ::testing::TestParamInfo<LayerShape>& info) {
  const LayerShape& s = info.param;
  return "M" + std::to_string(s.m) + "_K" + std::to_string(s.k) + "_N1_" + std::to_string(s.n1) + "_N2_" +
         std::to_string(s.n2);
}

INSTANTIATE_TEST_SUITE_P(Shapes, ExampleLayerTest, ::testing::Values(kSmallLayer, example::kDeepSeekV3Layer),
                         shape_name);

// delayed_d_scale needs no GPU: amax / 448 rounded up, so that the amax maps to at most 448.
TEST(ExampleLayerScale, DelayedScaleMapsTheAmaxIntoRange) {
  for (float amax : {1.0f, 5.4321f, 448.0f, 3.0e-3f, 1.0e30f, 1.0e-40f}) {
    const float d_scale = example::delayed_d_scale(amax);
    EXPECT_LE(amax / d_scale, 448.0f) << "amax " << amax;
    EXPECT_GE(static_cast<double>(d_scale) * 448.0, static_cast<double>(amax)) << "amax " << amax;
    EXPECT_LE(d_scale, std::nextafter(amax / 448.0f, 1.0e38f)) << "amax " << amax;
  }
  EXPECT_EQ(example::delayed_d_scale(0.0f), 1.0f);
}

}  // namespace
}  // namespace fp8gemm
