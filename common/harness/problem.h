/// @file problem.h
/// @brief A GEMM problem on the GPU: random normal A and B quantized per
///        tensor (or at another scale granularity), an optional bias,
///        activation and FP8 D, room for D, and the GemmArgs that run a step
///        on it. The benchmark, the main program and the steps' sweeps all run on it.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>
#include <vector>

#include "common/api/cuda_check.h"
#include "common/api/gemm.h"
#include "common/fp8/quantize.h"

namespace fp8gemm {

/// M x N x K of one GEMM.
struct Shape {
  int64_t m = 0;  ///< Rows of A and D.
  int64_t n = 0;  ///< Rows of B, columns of D.
  int64_t k = 0;  ///< Reduction length.
};

/// "4096x4096x4096": the shape part of every benchmark name.
std::string shape_name(const Shape& shape);

/// Parses "MxNxK" (each >= 1). Returns false on anything else.
bool parse_shape(const std::string& text, Shape* shape);

/// Parses "MxNxK,MxNxK,...". Throws std::invalid_argument naming a bad entry.
std::vector<Shape> parse_shape_list(const std::string& text);

/// Bytes a GEMM must move at least: A and B read once, D written once.
double gemm_min_bytes(const Shape& shape, OutputType d_type);

/// How the inputs of a problem are made. The defaults are the plain problem
/// of the ladder: per-tensor scales, no bias, no activation, BF16 D.
struct ProblemOptions {
  Fp8Format a_format = Fp8Format::kE4M3;  ///< Format of A.
  Fp8Format b_format = Fp8Format::kE4M3;  ///< Format of B.
  OutputType d_type = OutputType::kBF16;  ///< Type of D (an FP8 D gets fp8_output_scale() and a d_amax).
  uint64_t seed = 1;                      ///< Same seed, same inputs, on any GPU.
  /// How A is quantized: per tensor gives the host float GemmArgs::a_scale
  /// (as the ladder always did), any other granularity device scales in
  /// GemmArgs::a_scales. The values drawn do not depend on it.
  ScaleGranularity a_scale_granularity = ScaleGranularity::kPerTensor;
  ScaleGranularity b_scale_granularity = ScaleGranularity::kPerTensor;  ///< How B is quantized, as A.
  bool bias = false;                          ///< N values drawn from N(0, 1), added to every row of D.
  BiasType bias_type = BiasType::kBF16;       ///< Element type of the bias on the device.
  Activation activation = Activation::kNone;  ///< Applied after the bias.
};

/// True for the problem of the ladder: per-tensor scales, no bias, no
/// activation, BF16 or FP32 D (what every step accepts; anything else is an
/// epilogue variant).
bool is_plain(const ProblemOptions& options);

/// "A e4m3, B e4m3, per-tensor scales, D bf16, seed 1"; beyond the plain
/// problem also the granularities, the bias and the activation.
std::string describe(const ProblemOptions& options);

/// The dequantization scale GemmProblem gives an FP8 D of a problem with
/// reduction length K: the power of two at or above
/// 8 sqrt(K + 1) / fp8_max(format). Why: every element of D is a sum of K
/// products of N(0, 1) values plus at most one N(0, 1) bias, so its standard
/// deviation is at most sqrt(K + 1) (GELU only shrinks it); |y| > 8 standard
/// deviations has a probability of about 1e-15 per element, so D (almost)
/// never saturates, while the typical element stays far above the FP8
/// subnormals. A power of two makes 1 / d_scale exact, so a library that
/// multiplies by 1 / d_scale (cuBLASLt's D scale) stores the same codes as
/// fp8_output_code()'s y / d_scale.
float fp8_output_scale(int64_t k, OutputType d_type);

/// A GEMM problem on the GPU: A and B drawn from N(0, 1), quantized per tensor
/// or at the options' granularities (common/fp8/quantize.h, on the GPU), the
/// bias (if any) drawn from N(0, 1), and room for D (and d_amax for an FP8 D).
/// All steps and cuBLASLt run on the same problem, so they multiply the same numbers.
class GemmProblem {
 public:
  /// Draws, quantizes and uploads the operands; throws on any runtime error.
  GemmProblem(const Shape& shape, const ProblemOptions& options, cudaStream_t stream);

  /// M, N and K.
  const Shape& shape() const { return shape_; }
  /// The options the problem was made with.
  const ProblemOptions& options() const { return options_; }

  /// Arguments for run_step(): tight leading dimensions, the scales (host
  /// floats per tensor, device scales otherwise), the bias, the activation,
  /// d_scale and d_amax for an FP8 D, the problem's stream.
  /// fast_accumulation is left false.
  GemmArgs args() const;

  /// A's scales in device memory, in quantize.h's layout for its granularity
  /// (one float per tensor): where cuBLASLt reads a per-tensor scale.
  const float* a_scale_on_device() const { return a_scales_.get(); }
  /// B's scales in device memory, as A's.
  const float* b_scale_on_device() const { return b_scales_.get(); }

  /// The bias as the kernel reads it (BF16 values exactly as rounded), N
  /// floats; empty without a bias.
  const std::vector<float>& bias() const { return bias_host_; }

  /// D's dequantization scale: fp8_output_scale() for an FP8 D, else 1.
  float d_scale() const { return d_scale_; }

  /// Fills D with NaN (and d_amax, for an FP8 D), so that an element a kernel
  /// fails to write cannot pass a check.
  void poison_d() const;

  /// D (after the stream has finished) as floats, row-major M x N; an FP8 D
  /// decoded as code * d_scale (load_output).
  std::vector<float> download_d() const;

  /// What the last launch wrote to d_amax (after the stream has finished);
  /// NaN without an FP8 D, or after poison_d() when nothing wrote it.
  float download_d_amax() const;

  /// A (codes and scales at A's granularity) on the host, for the reference.
  QuantizedMatrix download_a() const;
  /// B (codes and scales at B's granularity) on the host, for the reference.
  QuantizedMatrix download_b() const;

 private:
  QuantizedMatrix download(const DeviceBuffer<uint8_t>& codes, const DeviceBuffer<float>& scales, int64_t rows,
                           Fp8Format format, ScaleGranularity granularity) const;
  void make_bias();

  Shape shape_;
  ProblemOptions options_;
  cudaStream_t stream_;
  DeviceBuffer<uint8_t> a_, b_;
  DeviceBuffer<float> a_scales_, b_scales_;          // scale_count() floats each
  float a_scale_host_ = 1.0f, b_scale_host_ = 1.0f;  // per tensor: the scale; otherwise 1
  DeviceBuffer<uint8_t> bias_;                       // N values of bias_type, or empty
  std::vector<float> bias_host_;
  float d_scale_ = 1.0f;
  DeviceBuffer<float> d_amax_;  // one float for an FP8 D, else empty
  DeviceBuffer<uint8_t> d_;     // M x N elements of d_type
};

}  // namespace fp8gemm
