// Registers this folder's step: its number and name come from the folder's
// name (steps/CMakeLists.txt), so a copy of the folder is a new step. It must
// run 4096^3 and 64x2112x7168 with every format pair and output its
// constraints accept (default_must_run in common/api/registry.h): the tests
// fail if it refuses one.
#include "common/api/registry.h"
#include "grouped_moe_sm90a.cuh"

namespace fp8gemm {
namespace {

constexpr uint32_t bit(ScaleGranularity g) { return 1u << static_cast<int>(g); }
constexpr uint32_t bit(OutputType t) { return 1u << static_cast<int>(t); }

// Step 11's constraints, for plain and grouped GEMMs alike (a grouped one
// never splits K: validate_grouped_args refuses split_k > 1).
constexpr StepConstraints kConstraints{
    /*m_multiple=*/1,
    /*n_multiple=*/1,
    /*k_multiple=*/1,
    /*operand_alignment_bytes=*/1,
    /*formats=*/(1u << static_cast<int>(Fp8Format::kE4M3)) | (1u << static_cast<int>(Fp8Format::kE5M2)),
    /*mixed_formats=*/true,
    /*outputs=*/bit(OutputType::kBF16) | bit(OutputType::kFP32) | bit(OutputType::kE4M3) | bit(OutputType::kE5M2),
    /*a_scales=*/bit(ScaleGranularity::kPerTensor) | bit(ScaleGranularity::kPerRow) |
        bit(ScaleGranularity::kGroup1x128),
    /*b_scales=*/bit(ScaleGranularity::kPerTensor) | bit(ScaleGranularity::kPerRow) |
        bit(ScaleGranularity::kBlock128x128),
    /*scale_pointers=*/true,
    /*epilogue=*/kEpilogueBias | kEpilogueGeluTanh | kEpilogueGeluErf,
    /*max_split_k=*/kMaxSlices,
    /*split_k_reductions=*/1u << static_cast<int>(SplitKReduction::kWorkspace)};

}  // namespace
}  // namespace fp8gemm

// wgmma and clusters exist on sm_90a only, whose code runs on compute
// capability 9.0 and no other GPU.
FP8GEMM_REGISTER_STEP(
    "grouped GEMM for mixture-of-experts: every expert's tiles (contiguous or masked layout) in one persistent launch "
    "of step 11's kernel",
    fp8gemm::launch_grouped_moe_gemm, fp8gemm::kConstraints, fp8gemm::Accumulation::kTensorCorePromoted,
    fp8gemm::StepOptions{/*required_compute_capability=*/90, /*extra_must_run=*/{},
                         /*describe_launch=*/fp8gemm::describe_grouped_moe_launch,
                         /*launch_grouped=*/fp8gemm::launch_grouped_moe});
