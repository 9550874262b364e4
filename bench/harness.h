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

#include "common/cuda_check.h"
#include "common/gemm.h"
#include "common/quantize.h"

namespace fp8gemm::bench {

// -----------------------------------------------------------------------------
// Shapes
// -----------------------------------------------------------------------------

/// M x N x K of one GEMM.
struct Shape {
  int64_t m = 0;
  int64_t n = 0;
  int64_t k = 0;
};

/// The problem of the ladder and of `fp8gemm` without arguments.
inline constexpr Shape kDefaultShape{4096, 4096, 4096};

/// The decode shape of the README table's last column.
inline constexpr Shape kDecodeShape{64, 2112, 7168};

/// Dense FP8 peak of one H200 SXM (datasheet), the base of pct_of_peak.
inline constexpr double kPeakTflops = 1979.0;

/// "4096x4096x4096": the shape part of every benchmark name.
std::string shape_name(const Shape& shape);

/// Parses "MxNxK" (each >= 1). Returns false on anything else.
bool parse_shape(const std::string& text, Shape* shape);

/// Parses "MxNxK,MxNxK,...". Throws std::invalid_argument naming a bad entry.
std::vector<Shape> parse_shape_list(const std::string& text);

/// The benchmark's shapes: 4096^3, 8192^3, two more decode shapes (M = 1 and
/// 16 at N = 2112, K = 7168) and the 18 DeepSeek-V3 shapes of DESIGN.md.
std::vector<Shape> default_benchmark_shapes();

/// Bytes a GEMM must move at least: A and B read once, D written once.
double gemm_min_bytes(const Shape& shape, OutputType d_type);

// -----------------------------------------------------------------------------
// The problem
// -----------------------------------------------------------------------------

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
/// (common/quantize.h), and room for D. All steps and cuBLASLt run on the same
/// problem, so they multiply the same numbers.
class GemmProblem {
 public:
  /// Draws, quantizes and uploads the operands; throws on any runtime error.
  GemmProblem(const Shape& shape, const ProblemOptions& options, cudaStream_t stream);

  const Shape& shape() const { return shape_; }
  const ProblemOptions& options() const { return options_; }

  /// Arguments for run_step(): tight leading dimensions, per-tensor scales,
  /// the problem's stream. fast_accumulation is left false.
  GemmArgs args() const;

  /// The scales again, in device memory, where cuBLASLt reads them.
  const float* a_scale_on_device() const { return a_scale_.get(); }
  const float* b_scale_on_device() const { return b_scale_.get(); }

  /// Fills D with NaN, so that an element a kernel fails to write cannot pass a check.
  void poison_d() const;

  /// D (after the stream has finished) as floats, row-major M x N.
  std::vector<float> download_d() const;

  /// A and B (codes and scale) on the host, for the reference.
  QuantizedMatrix download_a() const;
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

// -----------------------------------------------------------------------------
// Timing
// -----------------------------------------------------------------------------

/// How long to measure one case. A slow step stops after its budget (but
/// never before min_launches), a fast one after max_launches.
struct TimingOptions {
  double warmup_seconds = 0.02;  ///< Warm-up: launch until this much GPU time has passed...
  int max_warmup_launches = 10;  ///< ...or this many launches (at least one).
  double budget_seconds = 0.25;  ///< Stop timing once this much launch time is measured...
  int min_launches = 3;          ///< ...but not before this many timed launches...
  int max_launches = 300;        ///< ...and never more than this many.
};

/// Times of the timed launches of one case.
struct Timing {
  std::vector<double> launch_ms;  ///< One entry per timed launch, in order.
  double median_ms = 0.0;         ///< Median of launch_ms.
};

/// Times launches on a stream with a cold L2 before each one.
class LaunchTimer {
 public:
  /// Creates the stream, the events and the L2 flush buffer (2 x L2 + 1 MiB).
  LaunchTimer();
  ~LaunchTimer();
  LaunchTimer(const LaunchTimer&) = delete;
  LaunchTimer& operator=(const LaunchTimer&) = delete;

  /// The stream that launches must use.
  cudaStream_t stream() const { return stream_; }

  /// Warm-up, then timed launches of `launch` (which enqueues one GEMM on
  /// stream() and returns its status). The first non-ok status stops the
  /// measurement and is returned; runtime errors throw.
  Status time(const std::function<Status()>& launch, const TimingOptions& options, Timing* timing);

  /// "cudaMemsetAsync of 121 MiB (2 x L2 + 1 MiB) before every launch".
  std::string flush_description() const;

 private:
  /// Flushes the L2, then enqueues `launch` between the two events and waits.
  Status launch_once(const std::function<Status()>& launch, float* ms);


  cudaStream_t stream_ = nullptr;
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
  int64_t l2_bytes_ = 0;
  DeviceBuffer<uint8_t> flush_buffer_;
};

/// Median of a non-empty list.
double median(std::vector<double> values);

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
