/// @file require_gpu.h
/// @brief The one rule of every GPU test on a machine where it cannot run:
///        skip, saying why, or, with FP8GEMM_REQUIRE_GPU=1 in the
///        environment, fail, saying why.
///
/// A skipped GPU test is a test that did not run. Where the GPU is the point
/// (bench/run_h200.sh exports FP8GEMM_REQUIRE_GPU=1), a missing or unusable
/// GPU or runtime must not pass as a row of skips, so every GPU test checks
/// through here:
///
///     void SetUp() override {
///       if (!test_support::require_gpu_or_skip()) return;
///       ...
///     }
///
/// A GPU that works but is not the one a step's code is built for (a Hopper
/// step on an Ada GPU: StepInfo::required_compute_capability) is a skip in
/// both modes: nothing is broken, the step cannot run there
/// (require_step_gpu_or_skip()).
#pragma once

#include <string>

#include "common/api/registry.h"

namespace fp8gemm::test_support {

/// Name of the environment variable that turns the skips of GPU tests for a
/// missing or unusable GPU into failures.
inline constexpr const char* kRequireGpuVariable = "FP8GEMM_REQUIRE_GPU";

/// True when FP8GEMM_REQUIRE_GPU is set to anything but "" or "0".
bool gpu_required();

/// True when a CUDA device can be used. Otherwise the current test is skipped
/// with the reason or, when gpu_required(), fails with it (a fatal failure);
/// `reason` (if given) receives it too, and the caller returns at once.
bool require_gpu_or_skip(std::string* reason = nullptr);

/// The check of a test that runs `step`: require_gpu_or_skip(), then the
/// step's StepInfo::required_compute_capability. On a GPU of another compute
/// capability the test is skipped, naming the step, what it needs and what the
/// GPU is, whether or not gpu_required(). A compute capability that cannot be
/// read is an unusable GPU (a failure when gpu_required(), else a skip).
/// Returns whether the test may go on.
bool require_step_gpu_or_skip(const StepInfo& step);

}  // namespace fp8gemm::test_support
