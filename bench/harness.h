/// @file harness.h
/// @brief What the benchmark (fp8gemm_bench) and the main program (fp8gemm)
///        share: the shapes, cuBLASLt as the vendor baseline, a description
///        of the machine for the results file, and the Google Benchmark
///        machinery both run their cases through (the case runner, the
///        counters, the check against FP64, the reporter that gives results
///        the project's names and pct_of_cublaslt).
///
/// The GEMM problem (GemmProblem) and the launch timing with a cold L2
/// (LaunchTimer) live in common/harness/.
///
/// How a case is measured: each Google Benchmark iteration is one launch,
/// preceded by a write to a buffer larger than twice the L2 (so that it
/// finds neither A nor B in the cache), with device events around the launch
/// alone; the event time is the iteration's manual time. Warm-up launches
/// come before the timed loop. Each case runs kRepetitions repetitions of at
/// least kMinTimeSeconds of launch time (at least one launch), and Google
/// Benchmark reports its aggregates: the median aggregate is the case's
/// result, and its TFLOPS and pct_of_cublaslt are the numbers quoted.
#pragma once

#include <benchmark/benchmark.h>
#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "bench/unfused_epilogue.h"
#include "common/api/cuda_check.h"
#include "common/api/gemm.h"
#include "common/api/registry.h"
#include "common/check/check.h"
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
// How a case is measured (Google Benchmark's settings)
// -----------------------------------------------------------------------------

/// Repetitions of each case; Google Benchmark's median over them is the result.
inline constexpr int kRepetitions = 5;

/// Launch time (manual time) each repetition runs at least. The first
/// repetition finds how many launches that takes (at least one: a 2-second
/// launch is timed once per repetition); the others run as many.
inline constexpr double kMinTimeSeconds = 0.05;

/// Warm-up before the timed launches of a case: launches until this much
/// device time has passed or max_warmup_launches were made, at least one
/// (warmup_seconds and max_warmup_launches are the fields used). Later calls
/// of the same case (the other repetitions) warm up again only as far as
/// whole launches fit in warmup_seconds: none for a slow step.
inline constexpr TimingOptions kWarmup{};

/// Text for the results file's context: how a case is measured, with these
/// settings (<= 0: left to Google Benchmark's flags).
std::string measurement_description(int repetitions, double min_time_seconds);

// -----------------------------------------------------------------------------
// cuBLASLt, the vendor baseline
// -----------------------------------------------------------------------------

/// Benchmark names of the two cuBLASLt modes.
inline constexpr const char* kCublasLtName = "cublaslt";
inline constexpr const char* kCublasLtFastName = "cublaslt_fast";

/// One cuBLASLt FP8 GEMM set up for a problem: the same D = epilogue(A B^T)
/// as every step, with its scales, bias, activation and output type where
/// cuBLASLt has them, and cuBLASLt's first heuristic algorithm.
///
/// cuBLASLt is column-major and runs FP8 only as "TN" (its A transposed, its B
/// not). Our row-major M x N D is, read column-major, the N x M matrix D^T =
/// B A^T; our K-major B (N x K row-major) is column-major K x N, so it is
/// cuBLASLt's A with transa = T, and our A is cuBLASLt's B with transb = N.
/// So cuBLASLt computes m' x n' = N x M with A' = our B and B' = our A: our
/// B's scales are its A scales, ours of A its B scales, and our bias over the
/// N columns of D is its bias over the N rows of D^T.
///
/// What it maps (GemmArgs -> cuBLASLt):
/// - scales: per tensor -> CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F (the scale
///   read from device memory); per row -> OUTER_VEC_32F; 1x128 -> VEC128_32F;
///   128x128 -> BLK128x128_32F. cuBLASLt lays 1 x 128 scales out with the rows
///   contiguous (ceil(K / 128) x rows, where quantize.h has them rows x ceil(K / 128)),
///   and 128 x 128 scales row block by row block with ceil(K / 128) rounded up
///   to a multiple of 4 (16 bytes): where the layouts differ, the scales are
///   copied into cuBLASLt's when the object is built, on args.stream, outside
///   any timing (a caller of cuBLASLt writes them in its layout from the start);
///   scales changed after that are not seen.
/// - bias, activation: CUBLASLT_EPILOGUE_BIAS, _GELU, _GELU_BIAS with the
///   bias pointer and its type (BF16 or FP32). cuBLASLt's GELU is the tanh
///   form; the erf form is refused (kNotSupported).
/// - FP8 D: CUDA_R_8F_E4M3 / CUDA_R_8F_E5M2 D (C in BF16, or in the bias's
///   type with a bias, as cuBLASLt wants it; never read: beta = 0, no C
///   pointer), D scale = a device float holding 1 / d_scale (cuBLASLt multiplies
///   by it, fp8_output_code divides by d_scale: the same codes when d_scale
///   is a power of two, as GemmProblem's is), AMAX_D = d_amax.
/// - fast accumulation with 1x128 or 128x128 scales is refused: those scales
///   change every 128 of K, so the partial sums are scaled (promoted) every
///   128 of K whatever CUBLASLT_MATMUL_DESC_FAST_ACCUM says, and a
///   `cublaslt_fast` case would measure the default mode under another name.
/// Whatever else cuBLASLt refuses (no algorithm from its heuristic, or the
/// heuristic calling the combination invalid) is kNotSupported naming the
/// whole configuration, never run without the feature.
class CublasLtGemm {
 public:
  /// Builds the descriptors and asks the heuristic for an algorithm.
  /// a_scale / b_scale: A's and B's per-tensor scales in device memory,
  /// read where args has a host scale (cuBLASLt reads scales only from the
  /// device); where args has a scale pointer (any granularity), that one is
  /// used. Throws on an API error; a problem cuBLASLt cannot do shows in status().
  CublasLtGemm(const GemmArgs& args, const float* a_scale, const float* b_scale, bool fast_accumulation);
  ~CublasLtGemm();
  CublasLtGemm(const CublasLtGemm&) = delete;
  CublasLtGemm& operator=(const CublasLtGemm&) = delete;

  /// kNotSupported (saying why) when cuBLASLt cannot compute the problem.
  const Status& status() const { return status_; }

  /// Enqueues the GEMM on the problem's stream.
  Status launch() const;

 private:
  /// Sets the scale mode and pointer of one operand; our A is cuBLASLt's B.
  void set_scales(bool our_a, const float* per_tensor_scale);
  /// Sets the epilogue, the bias and, for an FP8 D, the D scale and amax.
  void set_epilogue();

  GemmArgs args_;
  Status status_;
  cublasLtHandle_t handle_ = nullptr;
  cublasLtMatmulDesc_t operation_ = nullptr;
  cublasLtMatrixLayout_t a_layout_ = nullptr, b_layout_ = nullptr, c_layout_ = nullptr, d_layout_ = nullptr;
  cublasLtMatmulAlgo_t algo_{};
  DeviceBuffer<uint8_t> workspace_;
  DeviceBuffer<float> a_scales_, b_scales_;  // our A's and B's scales in cuBLASLt's layout, where it differs
  DeviceBuffer<float> d_scale_inverse_;      // FP8 D: 1 / d_scale, cuBLASLt's D scale
};

// -----------------------------------------------------------------------------
// Cases
// -----------------------------------------------------------------------------

/// Name of the unfused baseline (bench/unfused_epilogue.h).
inline constexpr const char* kUnfusedName = "unfused";

/// What computes D in a case: cuBLASLt in one of its modes, a step, or the
/// unfused baseline.
struct Contender {
  const StepInfo* step = nullptr;  ///< The step; nullptr for cuBLASLt and the unfused baseline.
  /// cuBLASLt: fast accumulation (`cublaslt_fast`). A tensor-core step: no
  /// promotion (GemmArgs::fast_accumulation, `<step>_fast`). Ignored by the
  /// FP32 steps, which have one way of summing, and by the unfused baseline.
  bool fast_accumulation = false;
  /// The unfused baseline: the plain GEMM (FP32 D) of the highest-numbered
  /// registered step that computes it, then the epilogue as a kernel of its
  /// own (UnfusedEpilogueGemm); the step is chosen when the case runs, and
  /// named in the case's label.
  bool unfused = false;
  /// A step: GemmArgs::split_k (0: the step chooses; `fp8gemm --split-k`).
  int split_k = 0;
  /// A step: GemmArgs::split_k_reduction (`fp8gemm --split-k-reduction`).
  SplitKReduction split_k_reduction = SplitKReduction::kAuto;
};

/// `cublaslt`, `cublaslt_fast`, `unfused`, `<step folder>`, or
/// `<step folder>_fast` for a tensor-core step with fast accumulation; a
/// forced slice count adds `_split<S>`, a forced reduction `_cluster` or
/// `_workspace` (`08_split_k_split1`, `08_split_k_workspace`).
std::string contender_name(const Contender& contender);

/// How the contender sums, which picks the tolerance of its check. The
/// unfused baseline's GEMM is chosen when the case runs: the runner checks it
/// with that step's accumulation, and this says kFp32.
Accumulation contender_accumulation(const Contender& contender);

/// One benchmark case: a contender on one problem.
struct BenchCase {
  Shape shape;             ///< M x N x K.
  ProblemOptions problem;  ///< Formats, output type, seed, scales and epilogue of the inputs.
  Contender contender;     ///< What computes D.
  bool check = false;      ///< Compare D with the FP64 reference before the timing.
  /// The name carries the problem's variant_name() (fp8gemm_bench
  /// --epilogue_variants), even for the plain problem's tensor/none/bf16.
  bool variant = false;
};

/// The part of a variant case's name after the shape,
/// `<scales>/<epilogue>/<out>`: scales `tensor` (both per tensor), `outer`
/// (both per row), `block` (A 1x128, B 128x128), else `a_<g>_b_<g>`;
/// epilogue `none`, `bias`, `gelu`, `bias_gelu`, `gelu_erf`, `bias_gelu_erf`
/// (`bias_fp32...` for an FP32 bias); out `bf16`, `fp32`, `e4m3`, `e5m2`.
std::string variant_name(const ProblemOptions& problem);

/// The case's benchmark name: `<contender>/<M>x<N>x<K>`, and for a variant
/// `<contender>/<M>x<N>x<K>/<scales>/<epilogue>/<out>`.
std::string case_name(const BenchCase& c);

/// Splits a case name at its first '/' into the contender and the rest, the
/// problem (`<M>x<N>x<K>`, with a variant's suffix); false if there is none.
bool split_case_name(const std::string& name, std::string* contender, std::string* shape);

// -----------------------------------------------------------------------------
// The check against FP64 (common/check)
// -----------------------------------------------------------------------------

/// R and S of the rows that common/check compares, for the problem's inputs
/// (dequantized at their scale granularity).
ReferenceProduct compute_reference(const GemmProblem& problem);

/// "all 1000 rows of D" or "256 of 4096 rows of D (sampled; all columns)".
std::string describe_checked_rows(const Shape& shape, uint64_t seed);

/// The outcome of comparing a problem's D with its reference.
struct CheckResult {
  OutputCheck check;          ///< On the checked rows.
  std::vector<float> d_rows;  ///< The checked rows of D, for describe_check().
  int64_t unwritten = 0;      ///< NaN or infinite elements anywhere in D (D was filled with NaN first).
  std::string amax_failure;   ///< FP8 D: how d_amax is wrong (empty: it is right).
  bool passed = false;        ///< The check passed, every element of D was written, d_amax is right.
};

/// Compares the problem's D (once the stream has finished) with `reference`
/// under the tolerance of `accumulation`: check_rows() for a D that is the
/// plain product (no bias, no activation, BF16 or FP32; any scales), else
/// check_epilogue_rows() with the problem's bias, activation and d_scale, and
/// for an FP8 D its d_amax against reference_amax() (to within its bound when
/// every row is checked; only from below when the rows are sampled). The
/// benchmark's check is a sanity check of one launch; the GPU tests own the
/// correctness of the steps.
CheckResult check_output(const GemmProblem& problem, const ReferenceProduct& reference, Accumulation accumulation);

/// "PASS", or "FAIL: <the broken rule>".
std::string verdict(const CheckResult& check);

// -----------------------------------------------------------------------------
// The case runner
// -----------------------------------------------------------------------------

/// What happened to a case, for the program's summary and exit status.
struct CaseOutcome {
  std::string name;       ///< case_name(): `<contender>/<M>x<N>x<K>[/<variant>]`.
  bool started = false;   ///< The case was run (not skipped by the time limit or a broken GPU).
  bool measured = false;  ///< Its timed launches completed.
  Status status;          ///< Not ok: the contender refused the problem, or failed.
  std::string skipped;    ///< Why the case was skipped (empty: it was not).
  bool checked = false;   ///< `check` was computed.
  CheckResult check;      ///< The check, when `checked`.
};

/// Runs cases as Google Benchmark benchmarks, one launch per iteration (see
/// the file comment). The cases of one problem should be registered one
/// after another, cuBLASLt's first: the runner keeps one problem (and one
/// FP64 reference) at a time and makes the next when a case needs another.
///
/// The first call of a case launches once on D filled with NaN: a refusal
/// (kNotSupported) skips the case with its message; with `check`, D is then
/// compared with the FP64 reference (check_output()), and a failed check
/// skips the case with the verdict (a passed one is in the case's label).
/// Later calls of a skipped case skip again without launching.
class CaseRunner {
 public:
  /// `time_limit_seconds` > 0: no case starts after that long (it is skipped,
  /// so the results file stays complete). `print_checks`: print each check's
  /// verdict on stdout; `detailed_checks`: with every metric and bound.
  explicit CaseRunner(double time_limit_seconds = 0, bool print_checks = true, bool detailed_checks = false);
  ~CaseRunner();
  CaseRunner(const CaseRunner&) = delete;
  CaseRunner& operator=(const CaseRunner&) = delete;

  /// The timer, whose stream every problem and launch uses.
  const LaunchTimer& timer() const { return timer_; }

  /// Registers `c` with Google Benchmark: manual time in milliseconds,
  /// kRepetitions repetitions of kMinTimeSeconds, aggregates only.
  /// `repetitions` / `min_time_seconds` <= 0 leave that setting to Google
  /// Benchmark's flags (--benchmark_repetitions, --benchmark_min_time).
  void register_case(const BenchCase& c, int repetitions = kRepetitions, double min_time_seconds = kMinTimeSeconds);

  /// Length of the longest registered name (for the console's name column).
  size_t longest_name() const;

  /// What happened to each registered case, in registration order.
  const std::vector<CaseOutcome>& outcomes() const { return outcomes_; }

  /// Cases that hit a runtime error (not a refusal, not a failed check).
  int runtime_failures() const { return runtime_failures_; }

  /// For a case that failed after some of its repetitions were measured
  /// (Google Benchmark then reports the aggregates of those, and no error):
  /// a note saying so, for the label of its aggregate rows. Empty otherwise.
  std::string failure_note(const std::string& name) const;

 private:
  struct CaseState;
  void run(benchmark::State& state, size_t index);
  bool run_first_call(benchmark::State& state, size_t index, GemmProblem& problem,
                      const std::function<Status()>& launch);
  GemmProblem& problem_for(const BenchCase& c);
  std::function<Status()> launcher_for(size_t index, const GemmProblem& problem);
  void skip(benchmark::State& state, size_t index, const std::string& message);
  void print_check(size_t index) const;

  using Clock = std::chrono::steady_clock;
  Clock::time_point deadline_ = Clock::time_point::max();
  bool print_checks_;
  bool detailed_checks_;
  LaunchTimer timer_;
  std::vector<BenchCase> cases_;
  std::vector<CaseOutcome> outcomes_;
  std::vector<std::unique_ptr<CaseState>> states_;
  std::unique_ptr<GemmProblem> problem_;          // the problem of the case being run
  std::unique_ptr<ReferenceProduct> reference_;   // its FP64 reference, once a case asked for it
  std::unique_ptr<CublasLtGemm> cublaslt_;        // the cuBLASLt set-up of the case being run,
  std::unique_ptr<UnfusedEpilogueGemm> unfused_;  // or the unfused baseline's...
  size_t setup_index_ = SIZE_MAX;                 // ...whose case is this one
  int runtime_failures_ = 0;
  std::string broken_;  // set when an error left the GPU unusable: later cases do not run
};

// -----------------------------------------------------------------------------
// Reporting
// -----------------------------------------------------------------------------

/// A case's result as Google Benchmark reported it: its median aggregate.
struct ReportedMedian {
  std::string name;                        ///< case_name(): `<contender>/<M>x<N>x<K>[/<variant>]`.
  double seconds = 0.0;                    ///< Median over the repetitions of the mean launch time.
  std::map<std::string, double> counters;  ///< TFLOPS, pct_of_cublaslt, ... as reported.
};

/// What every reporter of the project does to Google Benchmark's runs before
/// they are written: the names lose Google Benchmark's suffixes
/// ("/min_time:0.050/repeats:5/manual_time"), so results carry the project's
/// names, case_name() (an aggregate keeps its aggregate_name); the median
/// aggregate of a case gets `pct_of_cublaslt` = 100 x cuBLASLt's median time
/// / the case's median time, cuBLASLt's being the median aggregate of
/// `cublaslt/<same shape and variant>` reported earlier in the run; the
/// repeated rows of a case skipped in every repetition with one message
/// shrink to the first.
class RunAnnotator {
 public:
  /// The runs of one case, annotated as above. `medians`, if not null, gets
  /// each median aggregate (after annotation). `runner`, if not null, gives
  /// the label of a case that failed after measuring (CaseRunner::failure_note).
  std::vector<benchmark::BenchmarkReporter::Run> annotate(const std::vector<benchmark::BenchmarkReporter::Run>& runs,
                                                          std::vector<ReportedMedian>* medians,
                                                          const CaseRunner* runner);

 private:
  std::map<std::string, double> cublaslt_seconds_;  // by shape
};

/// A Google Benchmark reporter (ConsoleReporter or JSONReporter) that
/// reports through a RunAnnotator. `medians_only`: of the aggregates, only
/// the median is shown (the console); the JSON file keeps them all (mean,
/// median, stddev, cv).
template <typename Base>
class ProjectReporter : public Base {
 public:
  /// `name_width`: the longest project name, for the console's name column.
  template <typename... Args>
  ProjectReporter(bool medians_only, size_t name_width, Args&&... args)
      : Base(std::forward<Args>(args)...), medians_only_(medians_only), name_width_(name_width) {}

  /// Where the median aggregates go as they are reported (null: nowhere).
  void collect_medians(std::vector<ReportedMedian>* medians) { medians_ = medians; }

  /// The runner whose failure notes label the aggregates (null: none).
  void notes_from(const CaseRunner* runner) { runner_ = runner; }

  bool ReportContext(const benchmark::BenchmarkReporter::Context& context) override {
    benchmark::BenchmarkReporter::Context narrower = context;           // Google Benchmark sized it for its long names
    narrower.name_field_width = std::max<size_t>(10, name_width_ + 7);  // + "_median"
    return Base::ReportContext(narrower);
  }

  void ReportRuns(const std::vector<benchmark::BenchmarkReporter::Run>& runs) override {
    std::vector<benchmark::BenchmarkReporter::Run> shown;
    for (auto& run : annotator_.annotate(runs, medians_, runner_)) {
      const bool other_aggregate =
          run.run_type == benchmark::BenchmarkReporter::Run::RT_Aggregate && run.aggregate_name != "median";
      if (!(medians_only_ && other_aggregate)) shown.push_back(std::move(run));
    }
    if (!shown.empty()) Base::ReportRuns(shown);
  }

 private:
  bool medians_only_;
  size_t name_width_;
  RunAnnotator annotator_;
  std::vector<ReportedMedian>* medians_ = nullptr;
  const CaseRunner* runner_ = nullptr;
};

/// Sets the counters of a measured case on `state`: `TFLOPS`, `pct_of_peak`,
/// `GBps` (the bytes of A, B and D, each moved once: gemm_min_bytes) and
/// `pct_of_hbm_copy` (GBps as a percentage of the measured copy bandwidth,
/// set_copy_bandwidth_gbps; absent when none was measured) as rates over the
/// manual time (Google Benchmark divides the work of the iterations by their
/// time), `sm_clock_mhz` (NVML, right after the launches; absent without NVML).
void set_rate_counters(benchmark::State& state, const BenchCase& c);

/// The value of a Google Benchmark flag given as --name=value in argv, or ""
/// if absent (the last one wins, as in Google Benchmark).
std::string flag_value(int argc, char** argv, const std::string& name);

// -----------------------------------------------------------------------------
// The machine
// -----------------------------------------------------------------------------

/// What the results file records about the machine and the build.
struct Environment {
  std::string gpu;                     ///< "NVIDIA H200"
  int sm_count = 0;                    ///< Streaming multiprocessors.
  std::string compute_capability;      ///< "9.0"
  int64_t l2_bytes = 0;                ///< L2 cache size.
  int sm_clock_max_mhz = 0;            ///< Peak SM clock the runtime reports.
  int sm_clock_nvml_max_mhz = -1;      ///< Max SM clock from NVML (-1: no NVML).
  int sm_clock_nvml_current_mhz = -1;  ///< SM clock from NVML when asked (-1: no NVML).
  double sm_clock_measured_mhz = 0;    ///< clock64() cycles over event time of a busy kernel on every SM.
  std::string driver;                  ///< "580.65.06 (CUDA 13.0)"
  std::string runtime;                 ///< CUDA runtime version, "13.0"
  std::string cublaslt;                ///< cuBLASLt version, "13.1.0"
  std::string git_commit;              ///< Commit the program was built from.
  /// The memory bandwidth a plain copy reaches (measure_copy_bandwidth_gbps):
  /// the roof of a memory-bound GEMM's GB/s (counter pct_of_hbm_copy). 0: not measured.
  double hbm_copy_gbps = 0;
};

/// Queries the current device (and runs the short clock-measuring kernel).
Environment describe_environment();

/// The environment as key/value pairs for a results file's context, plus the
/// L2 flush (`l2_flush`), the measurement method (`timing`) and the peak used
/// for pct_of_peak.
/// `timing` is measurement_description().
std::vector<std::pair<std::string, std::string>> context_entries(const Environment& env, const LaunchTimer& timer,
                                                                 const std::string& timing);

/// Adds context_entries() to Google Benchmark's context (the results file's
/// "context", and the console's header).
void add_context(const Environment& env, const LaunchTimer& timer, const std::string& timing);

/// The device memory bandwidth of cudaMemcpyAsync, device to device, of
/// 1 GiB (2 GiB moved: read and write), best of 5 copies timed with events,
/// in GB/s (1e9 bytes a second): what a kernel that only streams memory can
/// reach on this GPU, below the datasheet's figure. 0 if it cannot allocate.
double measure_copy_bandwidth_gbps();

/// Sets the bandwidth pct_of_hbm_copy is a percentage of (0: no such counter).
void set_copy_bandwidth_gbps(double gbps);

/// The SM clock now, from NVML; -1 where NVML is not available.
int current_sm_clock_mhz();

/// Prints refused_steps() (common/api/registry.h) to stderr, prefixed by the
/// program's name; returns how many steps were refused.
int report_refused_steps(const char* program);

}  // namespace fp8gemm::bench
