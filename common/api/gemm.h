/// @file gemm.h
/// @brief The one GEMM API every step implements: arguments in, status out.
///
/// D[M,N] = scale_a * scale_b * sum_k A[m,k] * B[n,k], with A and B in FP8,
/// the sum in FP32, D in BF16 or FP32.
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
};

/// Bytes per element of an output type.
constexpr int output_bytes(OutputType t) { return t == OutputType::kBF16 ? 2 : 4; }

/// Short name of an output type ("bf16", "fp32").
inline const char* output_name(OutputType t) { return t == OutputType::kBF16 ? "bf16" : "fp32"; }

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
/// offset of each matrix fits in 63 bits. Returns kInvalidArgument with a
/// message naming the first broken rule.
Status validate_gemm_args(const GemmArgs& args);

/// Floating-point operations of one GEMM: 2 * M * N * K.
inline double gemm_flops(int64_t m, int64_t n, int64_t k) { return 2.0 * double(m) * double(n) * double(k); }

}  // namespace fp8gemm
