// Registers this folder's step: its number and name come from the folder's
// name (steps/CMakeLists.txt), so a copy of the folder is a new step. It must
// run 4096^3 and 64x2112x7168 with every format pair and output its
// constraints accept (default_must_run in common/api/registry.h): the tests
// fail if it refuses one.
#include "common/api/registry.h"
#include "double_buffering.cuh"

FP8GEMM_REGISTER_STEP("double buffering: 2 FP32 stages, next slice copied (cp.async) during the FFMAs",
                      fp8gemm::launch_double_buffering, fp8gemm::StepConstraints{}, fp8gemm::Accumulation::kFp32);
