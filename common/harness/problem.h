/// @file problem.h
/// @brief A GEMM problem on the GPU: random normal A and B quantized per
///        tensor, room for D, and the GemmArgs that run a step on it. The
///        benchmark, the main program and the steps' sweeps all run on it.
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

/// How the inputs of a problem are made.
struct ProblemOptions {
  Fp8Format a_format = Fp8Format::kE4M3;  ///< Format of A.
  Fp8Format b_format = Fp8Format::kE4M3;  ///< Format of B.
  OutputType d_type = OutputType::kBF16;  ///< Type of D.
  uint64_t seed = 1;                      ///< Same seed, same inputs, on any GPU.
};

/// "A e4m3, B e4m3, per-tensor scales, D bf16, seed 1".
std::string describe(const ProblemOptions& options);

/// A GEMM problem on the GPU: A and B drawn from N(0, 1), quantized per tensor
/// (common/fp8/quantize.h), and room for D. All steps and cuBLASLt run on the same
/// problem, so they multiply the same numbers.
class GemmProblem {
 public:
  /// Draws, quantizes and uploads the operands; throws on any runtime error.
  GemmProblem(const Shape& shape, const ProblemOptions& options, cudaStream_t stream);

  /// M, N and K.
  const Shape& shape() const { return shape_; }
  /// Formats, output type and seed the problem was made with.
  const ProblemOptions& options() const { return options_; }

  /// Arguments for run_step(): tight leading dimensions, per-tensor scales,
  /// the problem's stream. fast_accumulation is left false.
  GemmArgs args() const;

  /// The scales again, in device memory, where cuBLASLt reads them.
  const float* a_scale_on_device() const { return a_scale_.get(); }
  /// B's per-tensor scale in device memory.
  const float* b_scale_on_device() const { return b_scale_.get(); }

  /// Fills D with NaN, so that an element a kernel fails to write cannot pass a check.
  void poison_d() const;

  /// D (after the stream has finished) as floats, row-major M x N.
  std::vector<float> download_d() const;

  /// A and B (codes and scale) on the host, for the reference.
  QuantizedMatrix download_a() const;
  /// B (codes and scale) on the host, for the reference.
  QuantizedMatrix download_b() const;

 private:
  QuantizedMatrix download(const DeviceBuffer<uint8_t>& codes, const DeviceBuffer<float>& scale, int64_t rows,
                           Fp8Format format) const;

  Shape shape_;
  ProblemOptions options_;
  cudaStream_t stream_;
  DeviceBuffer<uint8_t> a_, b_;
  DeviceBuffer<float> a_scale_, b_scale_;
  float a_scale_host_ = 1.0f, b_scale_host_ = 1.0f;
  DeviceBuffer<uint8_t> d_;  // M x N elements of d_type
};

}  // namespace fp8gemm
