/// @file unfused_epilogue.h
/// @brief The unfused baseline of the epilogue (`unfused/...` in
///        fp8gemm_bench): a step's plain GEMM writes D in FP32 with the scales
///        applied, then an elementwise kernel of its own adds the bias,
///        applies the activation and converts to D's type (BF16, FP32, or FP8
///        with d_scale and d_amax), with the arithmetic every fused kernel
///        uses (common/device/epilogue.h, output.h, amax.cuh). The two are
///        timed together, so a step that fuses the epilogue is measured
///        against what it saves.
#pragma once

#include <cstdint>
#include <vector>

#include "common/api/cuda_check.h"
#include "common/api/gemm.h"
#include "common/api/registry.h"

namespace fp8gemm::bench {

/// `args` without its epilogue: FP32 D (`sum`, M x N, ld = N), no bias, no
/// activation, no d_scale or d_amax; the scales are kept, so the product
/// comes out with them applied.
GemmArgs plain_gemm_args(const GemmArgs& args, float* sum);

/// Enqueues the epilogue of `args` on args.stream as a kernel of its own:
/// y = activation(sum[m, n] + bias[n]) for every element (epilogue_value()),
/// stored as args.d_type at args.d (FP8: fp8(y / d_scale), saturating, round
/// to nearest even: store_epilogue_output()), and *args.d_amax = max |y| (reset to 0
/// first, then a warp reduction and one atomic per block). `sum` is M x N
/// floats, row-major, `ld_sum` floats between rows. `blocks` caps the grid
/// (each block loops over tiles of rows), which caps the atomics on d_amax.
Status launch_epilogue_kernel(const float* sum, int64_t ld_sum, const GemmArgs& args, int blocks);

/// The plain GEMM of a step into an FP32 buffer of its own, then
/// launch_epilogue_kernel() into the problem's D: one launch of the baseline.
class UnfusedEpilogueGemm {
 public:
  /// Chooses the GEMM: among `steps`, the highest-numbered one whose
  /// constraints accept plain_gemm_args(args) and whose GPU is this one.
  /// None: status() is kNotSupported, saying why. Throws on a runtime error.
  UnfusedEpilogueGemm(const std::vector<const StepInfo*>& steps, const GemmArgs& args);

  /// kNotSupported when no step computes the plain GEMM of `args`.
  const Status& status() const { return status_; }

  /// The step whose GEMM is used (nullptr when none).
  const StepInfo* gemm_step() const { return step_; }

  /// Enqueues the GEMM and the epilogue kernel on args.stream.
  Status launch() const;

 private:
  GemmArgs args_;
  GemmArgs plain_args_;
  const StepInfo* step_ = nullptr;
  Status status_;
  DeviceBuffer<float> sum_;  // the plain GEMM's D: M x N floats
  int blocks_ = 0;
};

}  // namespace fp8gemm::bench
