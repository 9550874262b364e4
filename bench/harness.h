/// @file harness.h
/// @brief What the benchmark (fp8gemm_bench) and the main program (fp8gemm)
///        share: the shapes, a GEMM problem on the GPU, launch timing with a
///        cold L2, cuBLASLt as the vendor baseline, and a description of the
///        machine for the results file.
///
/// Every step and cuBLASLt are timed the same way (LaunchTimer): warm-up
/// launches first, then launches one at a time, each preceded by a write to a
/// buffer larger than twice the L2 so that no timed launch finds A or B in the
/// cache, with device events around the launch alone; the result is the median.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "common/api/cuda_check.h"
#include "common/api/gemm.h"
#include "common/harness/problem.h"
#include "common/harness/timer.h"

namespace fp8gemm::bench {

// -----------------------------------------------------------------------------
// Shapes
// -----------------------------------------------------------------------------

/// The problem of the ladder and of `fp8gemm` without arguments.
inline constexpr Shape kDefaultShape{4096, 4096, 4096};

/// The decode shape of the README table's last column.
inline constexpr Shape kDecodeShape{64, 2112, 7168};

/// Dense FP8 peak of one H200 SXM (datasheet), the base of pct_of_peak.
inline constexpr double kPeakTflops = 1979.0;

/// The benchmark's shapes: 4096^3, 8192^3, two more decode shapes (M = 1 and
/// 16 at N = 2112, K = 7168) and the 18 DeepSeek-V3 shapes (docs/conventions.md).
std::vector<Shape> default_benchmark_shapes();

// -----------------------------------------------------------------------------
// The problem
// -----------------------------------------------------------------------------

// -----------------------------------------------------------------------------
// Timing
// -----------------------------------------------------------------------------

// -----------------------------------------------------------------------------
// cuBLASLt, the vendor baseline
// -----------------------------------------------------------------------------

/// One cuBLASLt FP8 GEMM set up for a problem: the same D = a_scale * b_scale
/// * A B^T as every step, with cuBLASLt's first heuristic algorithm.
///
/// cuBLASLt is column-major and runs FP8 only as "TN" (its A transposed, its B
/// not). Our row-major M x N D is, read column-major, the N x M matrix D^T =
/// B A^T; our K-major B (N x K row-major) is column-major K x N, so it is
/// cuBLASLt's A with transa = T, and our A is cuBLASLt's B with transb = N.
/// So cuBLASLt computes m' x n' = N x M with A' = our B and B' = our A.
class CublasLtGemm {
 public:
  /// Builds the descriptors and asks the heuristic for an algorithm.
  /// a_scale / b_scale: the per-tensor scales of A and B in device memory.
  /// Throws on an API error; a problem cuBLASLt cannot do shows in status().
  CublasLtGemm(const GemmArgs& args, const float* a_scale, const float* b_scale, bool fast_accumulation);
  ~CublasLtGemm();
  CublasLtGemm(const CublasLtGemm&) = delete;
  CublasLtGemm& operator=(const CublasLtGemm&) = delete;

  /// kNotSupported (saying why) when cuBLASLt has no algorithm for the problem.
  const Status& status() const { return status_; }

  /// Enqueues the GEMM on the problem's stream.
  Status launch() const;

 private:
  GemmArgs args_;
  const float* a_scale_;
  const float* b_scale_;
  Status status_;
  cublasLtHandle_t handle_ = nullptr;
  cublasLtMatmulDesc_t operation_ = nullptr;
  cublasLtMatrixLayout_t a_layout_ = nullptr, b_layout_ = nullptr, d_layout_ = nullptr;
  cublasLtMatmulAlgo_t algo_{};
  DeviceBuffer<uint8_t> workspace_;
};

/// Benchmark names of the two cuBLASLt modes.
inline constexpr const char* kCublasLtName = "cublaslt";
inline constexpr const char* kCublasLtFastName = "cublaslt_fast";

// -----------------------------------------------------------------------------
// The machine
// -----------------------------------------------------------------------------

/// What the results file records about the machine and the build.
struct Environment {
  std::string gpu;                    ///< "NVIDIA H200"
  int sm_count = 0;                   ///< Streaming multiprocessors.
  std::string compute_capability;     ///< "9.0"
  int64_t l2_bytes = 0;               ///< L2 cache size.
  int sm_clock_max_mhz = 0;           ///< Peak SM clock the runtime reports.
  int sm_clock_nvml_max_mhz = -1;     ///< Max SM clock from NVML (-1: no NVML).
  int sm_clock_nvml_current_mhz = -1; ///< SM clock from NVML when asked (-1: no NVML).
  double sm_clock_measured_mhz = 0;   ///< clock64() cycles over event time of a busy kernel on every SM.
  std::string driver;                 ///< "580.65.06 (CUDA 13.0)"
  std::string runtime;                ///< CUDA runtime version, "13.0"
  std::string cublaslt;               ///< cuBLASLt version, "13.1.0"
  std::string git_commit;             ///< Commit the program was built from.
};

/// Queries the current device (and runs the short clock-measuring kernel).
Environment describe_environment();

/// The environment as key/value pairs for a results file's context, plus
/// the timing method (`timer`) and the peak used for pct_of_peak.
std::vector<std::pair<std::string, std::string>> context_entries(const Environment& env, const LaunchTimer& timer,
                                                                  const TimingOptions& timing);

/// The SM clock now, from NVML; -1 where NVML is not available.
int current_sm_clock_mhz();

}  // namespace fp8gemm::bench
