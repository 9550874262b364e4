// Registers this folder's step: its number and name come from the folder's
// name (steps/CMakeLists.txt), so a copy of the folder is a new step.
#include "common/api/registry.h"
#include "tma_warp_specialization_sm90a.cuh"

namespace fp8gemm {
namespace {

// wgmma multiplies the OCP formats only (e4m3, e5m2); the TMA needs rows on
// 16-byte boundaries.
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

FP8GEMM_REGISTER_STEP("TMA + mbarrier ring + warp specialization: a producer warp feeds two wgmma warpgroups",
                      fp8gemm::launch_tma_warp_specialization, fp8gemm::kConstraints,
                      fp8gemm::Accumulation::kTensorCorePromoted);
