// Registers this folder's step: its number and name come from the folder's
// name (steps/CMakeLists.txt), so a copy of the folder is a new step.
#include "common/api/registry.h"
#include "lds_tiling.cuh"

FP8GEMM_REGISTER_STEP("LDS tiling: 128x128 block tile, 64-deep FP8 slices in shared memory, 8x8 per thread",
                      fp8gemm::launch_lds_tiling, fp8gemm::StepConstraints{}, fp8gemm::Accumulation::kFp32);
