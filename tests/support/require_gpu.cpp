#include "support/require_gpu.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "common/api/cuda_check.h"

namespace fp8gemm::test_support {

namespace {

// Records why the current test cannot run: a skip, or a fatal failure when a
// GPU is required. GTEST_SKIP and GTEST_FAIL return from this function only;
// the caller returns on the false it then gets.
void cannot_run(const std::string& why) {
  if (gpu_required()) {
    GTEST_FAIL() << why << " (" << kRequireGpuVariable << "=1: a GPU test that cannot run fails instead of skipping)";
  }
  GTEST_SKIP() << why;
}

// Marks the current test skipped (GTEST_SKIP returns from this function only).
void skip(const std::string& why) { GTEST_SKIP() << why; }

}  // namespace

bool gpu_required() {
  const char* value = std::getenv(kRequireGpuVariable);
  return value != nullptr && *value != '\0' && std::string(value) != "0";
}

bool require_gpu_or_skip(std::string* reason) {
  std::string why;
  if (cuda_device_available(&why)) return true;
  if (reason != nullptr) *reason = why;
  cannot_run(why);
  return false;
}

bool require_step_gpu_or_skip(const StepInfo& step) {
  if (!require_gpu_or_skip()) return false;
  const int required = step.required_compute_capability;
  if (required == 0) return true;
  std::string why;
  const int capability = cuda_compute_capability(&why);
  if (capability < 0) {
    cannot_run(why);
    return false;
  }
  if (capability == required) return true;
  // The GPU works; the step's code is for another one. A skip in both modes.
  skip(step.folder + " runs on compute capability " + std::to_string(required / 10) + "." +
       std::to_string(required % 10) + " only (StepInfo::required_compute_capability = " + std::to_string(required) +
       "), this GPU is " + std::to_string(capability / 10) + "." + std::to_string(capability % 10));
  return false;
}

}  // namespace fp8gemm::test_support
