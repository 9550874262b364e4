// Registers this folder's step: its number and name come from the folder's
// name (steps/CMakeLists.txt), so a copy of the folder is a new step. It must
// run 4096^3 and 64x2112x7168 with every format pair and output its
// constraints accept (default_must_run in common/api/registry.h): the tests
// fail if it refuses one.
#include "bank_conflicts.cuh"
#include "common/api/registry.h"

FP8GEMM_REGISTER_STEP("bank conflicts: step 02 with swizzled FP8 tiles and 4x8 lane groups",
                      fp8gemm::launch_bank_conflicts, fp8gemm::StepConstraints{}, fp8gemm::Accumulation::kFp32);
