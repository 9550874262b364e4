// Registers this folder's step: its number and name come from the folder's
// name (steps/CMakeLists.txt), so a copy of the folder is a new step. It must
// run 4096^3 and 64x2112x7168 with every format pair and output its
// constraints accept (default_must_run in common/api/registry.h): the tests
// fail if it refuses one.
#include "common/api/registry.h"
#include "matrix_cores_sm90a.cuh"

namespace fp8gemm {
namespace {

// wgmma multiplies the OCP formats only (e4m3, e5m2); cp.async copies 16
// bytes at a time, so rows must start on 16-byte boundaries.
constexpr StepConstraints kConstraints{/*m_multiple=*/1,
                                       /*n_multiple=*/1,
                                       /*k_multiple=*/1,
                                       /*operand_alignment_bytes=*/16,
                                       /*formats=*/(1u << static_cast<int>(Fp8Format::kE4M3)) |
                                           (1u << static_cast<int>(Fp8Format::kE5M2)),
                                       /*mixed_formats=*/true,
                                       /*outputs=*/0b11};

}  // namespace
}  // namespace fp8gemm

// wgmma and setmaxnreg exist on sm_90a only, whose code runs on compute
// capability 9.0 and no other GPU.
FP8GEMM_REGISTER_STEP(
    "wgmma: one warpgroup, operands staged by cp.async into 128-byte-swizzled shared memory, "
    "FP32 promotion every 128 K",
    fp8gemm::launch_matrix_cores_sm90a, fp8gemm::kConstraints, fp8gemm::Accumulation::kTensorCorePromoted,
    fp8gemm::StepOptions{/*required_compute_capability=*/90});
