// Registers this folder's step: its number and name come from the folder's
// name (steps/CMakeLists.txt), so a copy of the folder is a new step.
#include "common/api/registry.h"
#include "double_buffering.cuh"

FP8GEMM_REGISTER_STEP("double buffering: 2 FP32 stages, next slice copied (cp.async) during the FFMAs",
                      fp8gemm::launch_double_buffering, fp8gemm::StepConstraints{}, fp8gemm::Accumulation::kFp32);
