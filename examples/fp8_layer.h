/// @file fp8_layer.h
/// @brief An FP8 layer end to end, as a DeepSeek-V3-like model runs it:
///        BF16 activations quantized per token on the GPU, step 07's fused
///        GEMM into FP8 with bias and GELU, and the next GEMM consuming that
///        FP8 output; every GEMM checked against FP64. The program
///        (fp8_layer_main.cpp) and its GPU test (tests/test_example_layer_gpu.cu)
///        both run it through run_fp8_layer(); examples/README.md walks through it.
///
/// @code
///   X  (M x K,   BF16, device)  --BF16 -> FP32 -> quantize_on_gpu, 1 x 128-->  X codes + M x K/128 scales
///   H  (M x N1,  e4m3)  = fp8(GELU(X W1^T + b1) / d_scale),  amax = max |GELU(...)|   (step 07)
///   Y  (M x N2,  BF16)  = (H * d_scale) W2^T                                          (step 07)
///   W1 (N1 x K), W2 (N2 x N1): e4m3 codes with 128 x 128 block scales, quantized once on the host
/// @endcode
#pragma once

#include <cstdint>
#include <ostream>
#include <string>

#include "common/api/gemm.h"
#include "common/check/check.h"

namespace fp8gemm::example {

/// Sizes of the layer: Y = GELU(X W1^T + b1) W2^T with X M x K, W1 N1 x K, W2 N2 x N1.
/// Step 07 needs rows on 16-byte boundaries: K and N1 multiples of 16, N2 of 8
/// (otherwise it refuses by name).
struct LayerShape {
  int64_t m = 0;   ///< Tokens: rows of X, H and Y.
  int64_t k = 0;   ///< Hidden size: columns of X and W1.
  int64_t n1 = 0;  ///< Intermediate size: rows of W1, columns of H, columns of W2.
  int64_t n2 = 0;  ///< Output size: rows of W2, columns of Y.
};

/// The program's shape, DeepSeek-V3-like: 256 tokens, hidden size 7168, an
/// intermediate of 2048 (one expert's), back to 7168.
inline constexpr LayerShape kDeepSeekV3Layer{256, 7168, 2048, 7168};

/// "M 256, K 7168, N1 2048, N2 7168".
std::string describe(const LayerShape& shape);

/// The d_scale of an FP8 e4m3 output from the amax that an earlier run of the
/// same GEMM reported (delayed scaling): amax / 448, rounded up to the next
/// float where the float nearest to amax / 448 is below it, so that
/// amax / d_scale <= 448 and no element of a run with the same amax
/// saturates; 1 for an amax of 0 (dequant_scale_from_amax's rule otherwise).
float delayed_d_scale(float amax);

/// One run of the first GEMM (H = fp8(GELU(X W1^T + b1) / d_scale)) and its checks.
struct FirstGemmRun {
  float d_scale = 1.0f;          ///< The d_scale it ran with.
  float amax = 0.0f;             ///< What the step wrote to d_amax: max |GELU(X W1^T + b1)| over H.
  bool saturated = true;         ///< amax / d_scale > 448: some element was beyond e4m3's largest value.
  int64_t codes_at_max = 0;      ///< Elements of H stored as +-448 (clipped, or rounded there from within range).
  OutputCheck check;             ///< H (code * d_scale) against the FP64 reference after bias, GELU, saturation.
  std::string check_text;        ///< One line if it passed; describe_check()'s report if not.
  AmaxReference amax_reference;  ///< The FP64 reference's amax and the error a correct kernel may make.
  bool amax_ok = false;          ///< amax matches amax_reference (the rule of tests/support/check_result.h).
};

/// What run_fp8_layer() did and found.
struct LayerReport {
  LayerShape shape;   ///< The sizes run.
  uint64_t seed = 0;  ///< Seed of the random X, W1, b1, W2.
  /// Success, or why the pipeline could not run: kNotSupported when step 07
  /// cannot run on this GPU (it needs sm_90a, compute capability 9.0) or
  /// refuses the shape, kRuntimeError for a runtime failure. The fields below
  /// are filled only as far as the pipeline got.
  Status status;
  int64_t activation_scales = 0;  ///< Scales of X: M x ceil(K / 128).
  int gemms_run = 0;              ///< GEMMs that ran (0 to 3): run 1 and run 2 of the first, then the second.
  FirstGemmRun first;             ///< The first GEMM with the guessed d_scale.
  FirstGemmRun second;            ///< The first GEMM again, with delayed_d_scale(first.amax).
  OutputCheck y_check;            ///< Y of the second GEMM against FP64 of (H as decoded) x (W2 dequantized).
  std::string y_check_text;       ///< One line if it passed; describe_check()'s report if not.
  /// Everything ran, both checks of each run of the first GEMM and the check of
  /// Y passed, and the run with the delayed d_scale saturated nothing.
  bool passed() const;
};

/// Runs the layer on random data drawn from `seed` (X ~ N(0, 1) in BF16;
/// W1 ~ N(0, 1 / K) and W2 ~ N(0, 1 / N1) quantized in 128 x 128 blocks;
/// b1 ~ N(0, 1/4) in BF16) and checks it. The first GEMM runs twice: with
/// `d_scale_guess`, then with delayed_d_scale() of the amax the first run
/// reported; the second GEMM consumes the H of the second run.
/// `d_scale_guess` = 1 / 448 assumes |GELU(...)| <= 1, which these data exceed.
/// Throws CudaError when a runtime call fails outside a step.
LayerReport run_fp8_layer(const LayerShape& shape, uint64_t seed, float d_scale_guess = 1.0f / 448.0f);

/// Prints what the pipeline did, stage by stage, with every check's outcome.
void print_report(const LayerReport& report, std::ostream& out);

}  // namespace fp8gemm::example
