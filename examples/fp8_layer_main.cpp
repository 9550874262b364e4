// fp8gemm_example_layer: the FP8 layer of examples/fp8_layer.cu on a
// DeepSeek-V3-like shape (M 256, K 7168, N1 2048, N2 7168), printed stage by
// stage with its checks against FP64 (examples/README.md).
//
// Exit code: 0 when every check passed; 1 when a check failed or the runtime
// reported an error; 3 when this machine cannot run step 07 (no usable GPU, a
// GPU that is not compute capability 9.0, or a build without sm_90a).
#include <cstdio>
#include <exception>
#include <iostream>
#include <string>

#include "common/api/cuda_check.h"
#include "common/api/registry.h"
#include "examples/fp8_layer.h"

namespace {

constexpr int kExitFailure = 1;
constexpr int kExitCannotRun = 3;
constexpr const char* kProgram = "fp8gemm_example_layer";

int run() {
  using namespace fp8gemm;
  std::string reason;
  if (!cuda_device_available(&reason)) {
    std::fprintf(stderr,
                 "%s: needs an NVIDIA GPU of compute capability 9.0 (Hopper) for step 07 (%s). Nothing was run.\n",
                 kProgram, reason.c_str());
    return kExitCannotRun;
  }
  const StepInfo* step = find_step("07_fused_epilogue");
  if (step == nullptr) {
    std::fprintf(stderr, "%s: step 07_fused_epilogue is not in this build\n", kProgram);
    return kExitFailure;
  }
  const int capability = cuda_compute_capability(&reason);
  if (capability < 0) {
    std::fprintf(stderr, "%s: %s. Nothing was run.\n", kProgram, reason.c_str());
    return kExitCannotRun;
  }
  if (capability != step->required_compute_capability) {
    std::fprintf(stderr,
                 "%s: step %s is sm_90a code and runs on compute capability 9.0 only; this GPU is %d.%d. "
                 "Nothing was run.\n",
                 kProgram, step->folder.c_str(), capability / 10, capability % 10);
    return kExitCannotRun;
  }

  const example::LayerReport report = example::run_fp8_layer(example::kDeepSeekV3Layer, /*seed=*/1);
  example::print_report(report, std::cout);
  // A refusal for the GPU (say, a build without 90a in CMAKE_CUDA_ARCHITECTURES)
  // is "cannot run here"; print_report has said why.
  if (report.status.code == StatusCode::kNotSupported) return kExitCannotRun;
  return report.passed() ? 0 : kExitFailure;
}

}  // namespace

int main() {
  try {
    return run();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", kProgram, e.what());
    return kExitFailure;
  }
}
