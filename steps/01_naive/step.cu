// Registers this folder's step: its number and name come from the folder's
// name (steps/CMakeLists.txt), so a copy of the folder is a new step.
#include "common/api/registry.h"
#include "naive.cuh"

FP8GEMM_REGISTER_STEP("naive: one thread per output, FP32 accumulation", fp8gemm::launch_naive,
                      fp8gemm::StepConstraints{}, fp8gemm::Accumulation::kFp32);
