/// @file gemm.h
/// @brief The one GEMM API every step implements: arguments in, status out.
///
/// D[M,N] = epilogue(sum_k A[m,k] * B[n,k]), with A and B FP8 codes times
/// their dequantization scales (per tensor, per row, or per 1 x 128 group and
/// 128 x 128 block), the sum in FP32, and an epilogue of bias, activation and
/// rounding to D's type (BF16, FP32, or FP8 with a scale and its amax). The
/// defaults are the plain product with two per-tensor scales.
///
/// Both operands are K-major ("TN" in cuBLASLt's column-major words, "NT" in
/// DeepGEMM's): element (m,k) of A is at a[m * lda + k] and element (n,k) of B
/// at b[n * ldb + k]. D is row-major: element (m,n) is at d[m * ldd + n].
///
/// @code
///          K                    K                    N
///       +-----+              +-----+              +-------+
///     M |  A  |  (lda >= K)  N |  B  |  (ldb >= K)  M |   D   |  (ldd >= N)
///       +-----+              +-----+              +-------+
///   A[m,k] = a[m*lda + k]  B[n,k] = b[n*ldb + k]   D[m,n] = d[m*ldd + n]
/// @endcode
#pragma once

#include <cstdint>
#include <string>

#include "common/fp8/fp8.h"
#include "common/portability.h"

/// Everything of the project: the FP8 codec, quantization, the GEMM API and
/// step registry, the FP64 reference, and the steps themselves.
namespace fp8gemm {

/// Element type of the output matrix D.
enum class OutputType : uint8_t {
  kBF16 = 0,  ///< bfloat16, round-to-nearest-even from the FP32 result.
  kFP32 = 1,  ///< float.
  /// FP8 e4m3 (OCP) codes of y / d_scale, saturating, round-to-nearest-even
  /// (GemmArgs::d_scale, GemmArgs::d_amax): the input of the next FP8 GEMM.
  kE4M3 = 2,
  kE5M2 = 3,  ///< FP8 e5m2 (OCP), as kE4M3.
};

/// Number of OutputType values.
inline constexpr int kNumOutputTypes = 4;

/// True for the FP8 output types.
constexpr bool is_fp8_output(OutputType t) { return t == OutputType::kE4M3 || t == OutputType::kE5M2; }

/// The FP8 format of an FP8 output type (kE4M3 for any other).
constexpr Fp8Format fp8_output_format(OutputType t) {
  return t == OutputType::kE5M2 ? Fp8Format::kE5M2 : Fp8Format::kE4M3;
}

/// Bytes per element of an output type.
constexpr int output_bytes(OutputType t) { return t == OutputType::kFP32 ? 4 : is_fp8_output(t) ? 1 : 2; }

/// Short name of an output type ("bf16", "fp32", "e4m3", "e5m2").
inline const char* output_name(OutputType t) {
  switch (t) {
    case OutputType::kBF16: return "bf16";
    case OutputType::kFP32: return "fp32";
    case OutputType::kE4M3: return "e4m3";
    default: return "e5m2";
  }
}

/// Which elements of an operand share one dequantization scale, and how the
/// scales are laid out (common/fp8/quantize.h has the table; docs/scales.md).
enum class ScaleGranularity : uint8_t {
  kPerTensor = 0,     ///< One scale for the matrix.
  kPerRow = 1,        ///< One scale per row (per token of A, per output channel of B).
  kGroup1x128 = 2,    ///< One scale per row per 128 columns (DeepSeek-V3 activations).
  kBlock128x128 = 3,  ///< One scale per 128 x 128 block (DeepSeek-V3 weights).
};

/// Short name of a granularity ("per_tensor", "per_row", "1x128", "128x128").
inline const char* granularity_name(ScaleGranularity g) {
  switch (g) {
    case ScaleGranularity::kPerTensor: return "per_tensor";
    case ScaleGranularity::kPerRow: return "per_row";
    case ScaleGranularity::kGroup1x128: return "1x128";
    default: return "128x128";
  }
}

/// Columns (along K) covered by one group or block scale.
inline constexpr int kQuantGroupSize = 128;

/// Number of ScaleGranularity values.
inline constexpr int kNumScaleGranularities = 4;

/// The activation of the epilogue, applied after the scales and the bias.
enum class Activation : uint8_t {
  kNone = 0,      ///< y = z.
  kGeluTanh = 1,  ///< y = z / 2 (1 + tanh(sqrt(2 / pi) (z + 0.044715 z^3))), GELU's tanh form.
  kGeluErf = 2,   ///< y = z / 2 (1 + erf(z / sqrt(2))), GELU's exact (erf) form.
};

/// Short name of an activation ("none", "gelu", "gelu_erf").
inline const char* activation_name(Activation a) {
  return a == Activation::kNone ? "none" : a == Activation::kGeluTanh ? "gelu" : "gelu_erf";
}

/// How a split-K step adds its slices' partial sums (GemmArgs::split_k_reduction);
/// both forms add them in slice order, so the result is the same in every run.
enum class SplitKReduction : uint8_t {
  kAuto = 0,       ///< The step's own choice (the first form it lists).
  kCluster = 1,    ///< A thread-block cluster per tile, through distributed shared memory (Hopper).
  kWorkspace = 2,  ///< An FP32 workspace in global memory and a per-tile counter; the last block adds.
};
/// How many SplitKReduction values there are.
inline constexpr int kNumSplitKReductions = 3;

/// Short name of a reduction ("auto", "cluster", "workspace").
inline const char* split_k_reduction_name(SplitKReduction r) {
  return r == SplitKReduction::kAuto ? "auto" : r == SplitKReduction::kCluster ? "cluster" : "workspace";
}

/// Element type of the bias vector.
enum class BiasType : uint8_t {
  kBF16 = 0,  ///< bfloat16.
  kFP32 = 1,  ///< float.
};

/// Outcome class of a GEMM call.
enum class StatusCode : uint8_t {
  kOk = 0,               ///< The product was launched.
  kInvalidArgument = 1,  ///< The arguments break the API contract (null pointer, size < 1, ld too small...).
  kNotSupported = 2,     ///< Valid arguments that this step cannot compute (alignment, format, GPU).
  kRuntimeError = 3,     ///< The GPU runtime reported an error.
};

/// What a GEMM call returns: a code and, when not kOk, a message naming the
/// constraint that was broken (for example "K % 16 == 0 required, got K = 1000").
struct Status {
  StatusCode code = StatusCode::kOk;  ///< Outcome class.
  std::string message;                ///< Empty on success; otherwise says what is wrong.

  /// True when the call succeeded.
  bool ok() const { return code == StatusCode::kOk; }
  /// A successful status.
  static Status success() { return {}; }
  /// An error status with a code and a message.
  static Status error(StatusCode c, std::string msg) { return {c, std::move(msg)}; }
};

/// Name of a status code ("ok", "invalid argument", "not supported", "runtime error").
const char* status_code_name(StatusCode code);

/// How a kernel sums the K products of one output element; the rounding error
/// it may make depends on it (see docs/tolerances.md).
enum class Accumulation : uint8_t {
  /// Every addition rounds to FP32: CUDA-core FMA, AMD MFMA, FP32 split-K partials.
  kFp32 = 0,
  /// Hopper FP8 wgmma with its reduced-precision internal accumulator, whose
  /// partial sums are added into FP32 registers every kPromotionInterval of K
  /// (DeepGEMM's two-level accumulation; GemmArgs::fast_accumulation = false).
  kTensorCorePromoted = 1,
  /// Hopper FP8 wgmma accumulating the whole K inside the tensor core
  /// (GemmArgs::fast_accumulation = true).
  kTensorCoreFast = 2,
};

/// Arguments of one GEMM. Pointers are device pointers; sizes are elements.
struct GemmArgs {
  int64_t m = 0;  ///< Rows of A and D.
  int64_t n = 0;  ///< Rows of B, columns of D.
  int64_t k = 0;  ///< Reduction length: columns of A and B.

  const uint8_t* a = nullptr;             ///< A, M x K FP8 codes, K-major.
  int64_t lda = 0;                        ///< Elements between rows of A; >= K.
  Fp8Format a_format = Fp8Format::kE4M3;  ///< Format of A's codes.

  const uint8_t* b = nullptr;             ///< B, N x K FP8 codes, K-major.
  int64_t ldb = 0;                        ///< Elements between rows of B; >= K.
  Fp8Format b_format = Fp8Format::kE4M3;  ///< Format of B's codes.

  void* d = nullptr;                      ///< D, M x N, row-major.
  int64_t ldd = 0;                        ///< Elements between rows of D; >= N.
  OutputType d_type = OutputType::kBF16;  ///< Element type of D.

  /// Per-tensor dequantization scales: A ~ float(codes) * a_scale (see quantize.h).
  float a_scale = 1.0f;
  float b_scale = 1.0f;  ///< Per-tensor dequantization scale of B.

  /// Tensor-core steps only (05 on): skip promoting the tensor cores'
  /// reduced-precision partial sums into FP32 registers every 128 of K.
  /// Faster, less accurate (see docs/tolerances.md). Other steps ignore it.
  bool fast_accumulation = false;

  /// @name Scales beyond two host floats (docs/scales.md)
  /// With kPerTensor and a null pointer (the default) a_scale / b_scale
  /// above are the scales. Otherwise the scales are read from device memory
  /// in the layout of common/fp8/quantize.h (per tensor: 1 float, "delayed
  /// scaling"; per row: one per row; 1x128: rows x ceil(K / 128); 128x128:
  /// ceil(rows / 128) x ceil(K / 128), row-major), and a_scale / b_scale must
  /// be 1. Element (m, k) of A stands for code * (its group's scale), and the
  /// GEMM multiplies those values: D = sum_k (A[m,k] s_A(m,k)) (B[n,k] s_B(n,k)).
  /// A step refuses a granularity it cannot apply (StepConstraints).
  ///@{
  ScaleGranularity a_scale_granularity = ScaleGranularity::kPerTensor;  ///< How A's scales are laid out.
  const float* a_scales = nullptr;                                      ///< A's scales on the device, or nullptr.
  ScaleGranularity b_scale_granularity = ScaleGranularity::kPerTensor;  ///< How B's scales are laid out.
  const float* b_scales = nullptr;                                      ///< B's scales on the device, or nullptr.
  ///@}

  /// @name The epilogue: y = activation(sum + bias[n]), then D = y in d_type
  ///@{
  const void* bias = nullptr;                 ///< N values added to every row of D, or nullptr for none.
  BiasType bias_type = BiasType::kFP32;       ///< Element type of bias.
  Activation activation = Activation::kNone;  ///< Applied after the bias.
  /// FP8 D only: its dequantization scale, D ~ code * d_scale, so the code
  /// stored is fp8(y / d_scale) (saturating, round to nearest even). 1 for
  /// the other output types.
  float d_scale = 1.0f;
  /// FP8 D only, optional: on completion *d_amax is max |y| over D, before
  /// quantization (cuBLASLt's AMAX_D); 0 for an all-zero result. nullptr: not computed.
  float* d_amax = nullptr;
  ///@}

  /// Split-K (steps with StepConstraints::max_split_k > 1): how many slices
  /// each output tile's K is cut into, each summed by a block of its own and
  /// the partial sums added in a fixed order. 0: the step chooses
  /// (split_k_slices in common/device/split_k.h); 1: no split; more: that
  /// many (at most the number of K blocks of 128). A step that cannot split
  /// refuses a value above 1.
  int split_k = 0;
  /// How the slices are added (a step refuses a form it does not list in
  /// StepConstraints::split_k_reductions; kAuto: the step chooses). The
  /// workspace form keeps its buffer inside the step, one per device and
  /// stream: GEMMs on one stream run one after another, so they never share it.
  SplitKReduction split_k_reduction = SplitKReduction::kAuto;

  cudaStream_t stream = nullptr;  ///< Stream the kernel is launched on.
};

/// What one GEMM computes, without its data: sizes, operand formats, output type.
struct GemmShape {
  int64_t m = 1;                          ///< Rows of A and D.
  int64_t n = 1;                          ///< Rows of B, columns of D.
  int64_t k = 1;                          ///< Reduction length.
  Fp8Format a_format = Fp8Format::kE4M3;  ///< Format of A's codes.
  Fp8Format b_format = Fp8Format::kE4M3;  ///< Format of B's codes.
  OutputType d_type = OutputType::kBF16;  ///< Element type of D.
};

/// Where the data of one GEMM lives on the device, and its per-tensor scales.
struct GemmBuffers {
  const uint8_t* a = nullptr;  ///< A's codes.
  int64_t lda = 0;             ///< Elements between rows of A.
  float a_scale = 1.0f;        ///< Dequantization scale of A.
  const uint8_t* b = nullptr;  ///< B's codes.
  int64_t ldb = 0;             ///< Elements between rows of B.
  float b_scale = 1.0f;        ///< Dequantization scale of B.
  void* d = nullptr;           ///< D.
  int64_t ldd = 0;             ///< Elements between rows of D.
};

/// The one place a GemmArgs is filled from a problem: the tests, the
/// benchmark, the main program and the sweeps all build their arguments here.
inline GemmArgs make_gemm_args(const GemmShape& shape, const GemmBuffers& buffers, cudaStream_t stream,
                               bool fast_accumulation = false) {
  GemmArgs args;
  args.m = shape.m;
  args.n = shape.n;
  args.k = shape.k;
  args.a = buffers.a;
  args.lda = buffers.lda;
  args.a_format = shape.a_format;
  args.b = buffers.b;
  args.ldb = buffers.ldb;
  args.b_format = shape.b_format;
  args.d = buffers.d;
  args.ldd = buffers.ldd;
  args.d_type = shape.d_type;
  args.a_scale = buffers.a_scale;
  args.b_scale = buffers.b_scale;
  args.fast_accumulation = fast_accumulation;
  args.stream = stream;
  return args;
}

/// Checks the API contract that every step shares: non-null pointers,
/// M, N, K >= 1, lda/ldb >= K, ldd >= N, finite scales whose product
/// neither overflows nor underflows, and that the largest
/// offset of each matrix fits in 63 bits; a scale pointer for every
/// granularity but per tensor, host scales of 1 beside a scale pointer, valid
/// enums, and d_scale / d_amax only for FP8 D (d_scale finite and > 0).
/// Scales in device memory cannot be checked here. Returns kInvalidArgument
/// with a message naming the first broken rule.
Status validate_gemm_args(const GemmArgs& args);

/// Floating-point operations of one GEMM: 2 * M * N * K.
inline double gemm_flops(int64_t m, int64_t n, int64_t k) { return 2.0 * double(m) * double(n) * double(k); }

}  // namespace fp8gemm
