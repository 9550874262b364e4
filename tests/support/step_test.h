/// @file step_test.h
/// @brief What every GPU test of the registered steps shares
///        (tests/test_steps_gpu.cu, tests/test_exact_gpu.cu): the test
///        parameter (a step and a case) and its name, the layouts, the
///        fixture that skips or fails where the step cannot run, and the
///        launch with its poison, guard band and refusal rules.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "common/api/gemm.h"
#include "common/api/registry.h"
#include "support/device_matrices.h"

namespace fp8gemm::test_support {

/// A step and a case: the parameter of the parameterized GPU tests of steps.
struct StepCase {
  StepInfo step;   ///< The registered step.
  GemmShape gemm;  ///< Sizes, formats and output type of the case.
};

/// What gtest prints for a parameter: "<step folder> <case>".
void PrintTo(const StepCase& c, std::ostream* out);

/// The test name of a parameter: "<step folder>_<gemm_shape_name(case)>",
/// e.g. "05_matrix_cores_255x1000x1008_e5m2_e4m3_fp32".
std::string step_case_name(const ::testing::TestParamInfo<StepCase>& info);

/// Every registered step with every one of `cases`, steps in ladder order.
std::vector<StepCase> every_step_with(const std::vector<GemmShape>& cases);

/// True when `shape` is one of the step's must-run cases (StepInfo::must_run).
bool is_must_run(const StepInfo& step, const GemmShape& shape);

/// Leading dimensions of A, B and D, in elements.
struct Layout {
  int64_t lda;  ///< Elements between rows of A.
  int64_t ldb;  ///< Elements between rows of B.
  int64_t ldd;  ///< Elements between rows of D.
};

/// The tight layout: lda = ldb = K, ldd = N.
Layout tight_layout(const GemmShape& shape);

/// Leading dimensions larger than the matrices, with rows still on 16-byte
/// boundaries (so that the steps that need aligned rows take them): K rounded
/// up to 16, plus 16 (A) or 32 (B); N rounded up to 8, plus 8 (D).
Layout padded_layout(const GemmShape& shape);

/// "_lda1040_ldb1056_ldd264": the suffix of a padded case's test name.
std::string layout_suffix(const Layout& layout);

/// Fixture of the GPU tests of a step: SetUp skips (or, with
/// FP8GEMM_REQUIRE_GPU=1, fails) without a usable GPU, skips a step whose
/// required compute capability this GPU lacks (require_step_gpu_or_skip), and
/// records the run's seed.
class StepTest : public ::testing::TestWithParam<StepCase> {
 protected:
  /// The checks above; the test body runs only if they pass.
  void SetUp() override;
};

/// What a test makes of a case that the step's constraints refuse.
enum class Refusal {
  /// An ordinary case: the step may refuse it, with kNotSupported, the
  /// constraint's message and D untouched.
  kAllowed,
  /// A must-run case (StepInfo::must_run): a refusal is a failure.
  kFailure,
};

/// The device operands of a case and their per-tensor scales.
struct DeviceOperands {
  const uint8_t* a = nullptr;  ///< A's codes on the device.
  int64_t lda = 0;             ///< Elements between rows of A.
  float a_scale = 1.0f;        ///< Dequantization scale of A.
  const uint8_t* b = nullptr;  ///< B's codes on the device.
  int64_t ldb = 0;             ///< Elements between rows of B.
  float b_scale = 1.0f;        ///< Dequantization scale of B.
};

/// Runs `step` on `shape` with these operands into a fresh D (leading
/// dimension `ldd`) inside a guard band, D poisoned with NaN first, on a
/// stream of its own, and checks what every test of a step checks:
///   - every runtime call succeeds and nothing outside D is written;
///   - where check_step_constraints refuses the case: with Refusal::kAllowed,
///     the step returns kNotSupported with exactly the constraint's message
///     and writes nothing into D; with Refusal::kFailure, that is a failure;
///   - otherwise the step returns success and writes every element of D
///     (none is left NaN).
/// Sets `*result` to D when the step computed it (to check its values);
/// leaves it empty after a refusal or a failure.
void run_step_checked(const StepInfo& step, const GemmShape& shape, const DeviceOperands& operands, int64_t ldd,
                      bool fast_accumulation, Refusal refusal, std::optional<OutputSnapshot>* result);

}  // namespace fp8gemm::test_support
