// fp8gemm_grouped_bench — the grouped GEMM of a mixture-of-experts layer
// (common/api/grouped.h): every step that has one (StepInfo::launch_grouped)
// against cuBLASLt run once per expert, on a list of grouped shapes, driven
// by Google Benchmark.
//
// Names: `<contender>/<G>x<M>x<N>x<K>/<layout>`, G experts of M rows each
// (grouped_shape_name()), where the contender is
// - `cublaslt_loop`: one cuBLASLt GEMM per expert (CublasLtGemm on
//   GroupedProblem::expert_args(g)), all on one stream, the whole loop timed
//   as one iteration: what a framework without a grouped kernel does;
// - `cublaslt_graph` (masked layout only): the same loop captured once in a
//   CUDA graph, one graph launch per iteration: the loop without its launch
//   overhead, which is how the masked layout runs in decode;
// - `<step folder>`: the step's grouped launch through run_grouped_step(), with
//   check_on_host = false in the timed launches (the masked layout exists for
//   a launch that needs no host sync).
// The cases of one shape run one after another on one GroupedProblem,
// cuBLASLt's first, so that a step's pct_of_cublaslt_loop (and, masked,
// pct_of_cublaslt_graph) compares with a measurement made seconds apart, in
// the same process, on the same numbers.
//
// Measured as fp8gemm_bench measures (bench/harness.h): one launch per Google
// Benchmark iteration (for the loop, the whole loop), a cold L2 before it,
// device events around it (manual time), warm-up first, kRepetitions
// repetitions of kMinTimeSeconds, the median aggregate the result. Before
// the timing, every case's first launch writes a D filled with NaN and is
// checked against an FP64 reference of sampled rows of every expert; a
// failed check skips the case.
#include <benchmark/benchmark.h>
#include <cuda_runtime_api.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "bench/harness.h"
#include "common/api/grouped.h"
#include "common/api/registry.h"
#include "common/check/check.h"
#include "common/harness/grouped_problem.h"
#include "common/harness/timer.h"

namespace fp8gemm::bench {
namespace {

constexpr int kExitFailure = 1;  // an error (is_error()), a failed check, or a step refused by the registry
constexpr int kExitNoGpu = 3;
constexpr int kExitUsage = 4;

constexpr const char* kProgram = "fp8gemm_grouped_bench";
constexpr const char* kLoopName = "cublaslt_loop";
constexpr const char* kGraphName = "cublaslt_graph";

// -----------------------------------------------------------------------------
// Shapes
// -----------------------------------------------------------------------------

/// The default shapes: DeepSeek-V3's expert GEMMs (N x K = 4096 x 7168, the
/// fused gate and up projection, and 7168 x 2048, the down projection) in
/// both layouts. Contiguous (prefill): 32768 rows in 4 or 8 experts, and 32
/// small experts of 128 rows. Masked (decode): 1024 tokens in 1, 2 or 4
/// experts, and 32 experts of 16 rows each. Every expert gets M rows (masked:
/// capacity M, counts M).
std::vector<GroupedShape> default_grouped_shapes() {
  using L = GroupedLayout;
  return {
      uniform_grouped_shape(L::kContiguous, 4, 8192, 4096, 7168),
      uniform_grouped_shape(L::kContiguous, 4, 8192, 7168, 2048),
      uniform_grouped_shape(L::kContiguous, 8, 4096, 4096, 7168),
      uniform_grouped_shape(L::kContiguous, 8, 4096, 7168, 2048),
      uniform_grouped_shape(L::kContiguous, 32, 128, 4096, 7168),
      uniform_grouped_shape(L::kMasked, 1, 1024, 4096, 7168),
      uniform_grouped_shape(L::kMasked, 1, 1024, 7168, 2048),
      uniform_grouped_shape(L::kMasked, 2, 512, 4096, 7168),
      uniform_grouped_shape(L::kMasked, 4, 256, 4096, 7168),
      uniform_grouped_shape(L::kMasked, 32, 16, 4096, 7168),
  };
}

/// Parses "GxMxNxK/layout" (layout `contiguous` or `masked`, each size >= 1)
/// into G experts of M rows. Returns false on anything else.
bool parse_grouped_shape(const std::string& text, GroupedShape* shape) {
  const size_t slash = text.find('/');
  if (slash == std::string::npos) return false;
  const std::string layout_text = text.substr(slash + 1);
  GroupedLayout layout;
  if (layout_text == grouped_layout_name(GroupedLayout::kContiguous)) layout = GroupedLayout::kContiguous;
  else if (layout_text == grouped_layout_name(GroupedLayout::kMasked)) layout = GroupedLayout::kMasked;
  else return false;
  int64_t sizes[4];
  std::stringstream dims(text.substr(0, slash));
  std::string part;
  int count = 0;
  while (std::getline(dims, part, 'x')) {
    if (count == 4 || part.empty() || part.find_first_not_of("0123456789") != std::string::npos) return false;
    sizes[count] = std::strtoll(part.c_str(), nullptr, 10);
    if (sizes[count] < 1 || sizes[count] > (int64_t{1} << 40)) return false;
    ++count;
  }
  if (count != 4 || sizes[0] > (1 << 20)) return false;
  *shape = uniform_grouped_shape(layout, static_cast<int>(sizes[0]), sizes[1], sizes[2], sizes[3]);
  return true;
}

/// Parses "GxMxNxK/layout,...". Throws std::invalid_argument naming a bad entry.
std::vector<GroupedShape> parse_grouped_shape_list(const std::string& text) {
  std::vector<GroupedShape> shapes;
  std::stringstream list(text);
  std::string entry;
  while (std::getline(list, entry, ',')) {
    GroupedShape shape;
    if (!parse_grouped_shape(entry, &shape)) {
      throw std::invalid_argument("'" + entry + "' is not GxMxNxK/contiguous or GxMxNxK/masked (each size >= 1)");
    }
    shapes.push_back(shape);
  }
  if (shapes.empty()) throw std::invalid_argument("--shapes needs at least one shape");
  return shapes;
}

bool same_grouped_shape(const GroupedShape& a, const GroupedShape& b) {
  return a.layout == b.layout && a.expert_rows == b.expert_rows && a.n == b.n && a.k == b.k && a.capacity == b.capacity;
}

// -----------------------------------------------------------------------------
// Cases
// -----------------------------------------------------------------------------

/// What computes D in a grouped case.
enum class GroupedContender {
  kCublasLtLoop,   ///< one cuBLASLt GEMM per expert, on one stream
  kCublasLtGraph,  ///< that loop captured in a CUDA graph (masked layout only)
  kStep,           ///< a step's grouped launch
};

/// One benchmark case: a contender on one grouped shape.
struct GroupedCase {
  GroupedShape shape;
  GroupedContender contender = GroupedContender::kCublasLtLoop;
  const StepInfo* step = nullptr;  ///< kStep: the step.
};

std::string grouped_contender_name(const GroupedCase& c) {
  switch (c.contender) {
    case GroupedContender::kCublasLtLoop: return kLoopName;
    case GroupedContender::kCublasLtGraph: return kGraphName;
    default: return c.step->folder;
  }
}

/// `<contender>/<G>x<M>x<N>x<K>/<layout>`.
std::string grouped_case_name(const GroupedCase& c) {
  return grouped_contender_name(c) + "/" + grouped_shape_name(c.shape);
}

/// How the contender sums, which picks the tolerance of its check: cuBLASLt
/// in its default mode promotes its tensor-core sums as the steps do.
Accumulation grouped_accumulation(const GroupedCase& c) {
  return c.step != nullptr ? accumulation_of(*c.step, false) : Accumulation::kTensorCorePromoted;
}

/// What the command line chose beyond Google Benchmark's own flags.
struct Options {
  std::vector<GroupedShape> shapes = default_grouped_shapes();
  std::vector<const StepInfo*> steps;  // empty after parsing: no step has a grouped GEMM
  double time_limit_seconds = 0;       // 0: none
  bool list_cases = false;             // print the case names and exit (no GPU needed)
};

/// The cases in the order they run: per shape, cuBLASLt's loop, its graph
/// (masked only), then each step, so that the steps' ratios refer to the
/// cuBLASLt cases of the same shape measured just before.
std::vector<GroupedCase> cases_of(const Options& options) {
  std::vector<GroupedCase> cases;
  for (const GroupedShape& shape : options.shapes) {
    cases.push_back({shape, GroupedContender::kCublasLtLoop, nullptr});
    if (shape.layout == GroupedLayout::kMasked) cases.push_back({shape, GroupedContender::kCublasLtGraph, nullptr});
    for (const StepInfo* step : options.steps) cases.push_back({shape, GroupedContender::kStep, step});
  }
  return cases;
}

// -----------------------------------------------------------------------------
// The check against FP64
// -----------------------------------------------------------------------------

/// Every expert has at least this many rows checked (or all it has); the
/// total aims at kCheckedRows (check.h), the plain benchmark's sample.
constexpr int64_t kMinCheckedRowsPerExpert = 8;

/// Rows of an expert to check: all when `count` >= `rows`, otherwise the
/// first, the last (where a segment's end goes wrong) and `count` - 2 others
/// drawn from `seed` without repeats, in increasing order.
std::vector<int64_t> sample_rows(int64_t rows, int64_t count, uint64_t seed) {
  std::vector<int64_t> sampled;
  if (count >= rows) {
    for (int64_t row = 0; row < rows; ++row) sampled.push_back(row);
    return sampled;
  }
  std::set<int64_t> chosen = {0, rows - 1};
  std::mt19937_64 generator(seed);
  std::uniform_int_distribution<int64_t> interior(1, rows - 2);
  while (static_cast<int64_t>(chosen.size()) < count) chosen.insert(interior(generator));
  return std::vector<int64_t>(chosen.begin(), chosen.end());
}

/// The FP64 reference of the checked rows of every expert, as one product
/// whose rows are rows of the grouped D (so that one check_rows() judges all
/// experts, and a failure names the row of D).
struct GroupedReference {
  ReferenceProduct product;
  std::string description;  // "up to 64 sampled rows of each of the 4 experts with rows (256 rows of D; all columns)"
};

GroupedReference compute_grouped_reference(const GroupedProblem& problem) {
  const GroupedShape& shape = problem.shape();
  const int experts = problem.experts();
  const int64_t per_expert = std::max<int64_t>(kMinCheckedRowsPerExpert, kCheckedRows / experts);
  GroupedReference reference;
  reference.product.n = shape.n;
  bool every_row = true;
  int checked_experts = 0;
  for (int g = 0; g < experts; ++g) {
    const int64_t rows = problem.expert_rows(g);
    if (rows == 0) continue;  // nothing to compute, nothing to check
    ++checked_experts;
    const std::vector<int64_t> local = sample_rows(rows, per_expert, problem.options().seed + g);
    every_row = every_row && static_cast<int64_t>(local.size()) == rows;
    // The expert's rows of A and its B as the kernels read them, in plain layouts.
    const ReferenceProduct part = reference_of_rows(problem.download_expert_a(g), problem.download_expert_b(g), local);
    for (int64_t row : local) reference.product.rows.push_back(problem.first_row(g) + row);
    reference.product.value.insert(reference.product.value.end(), part.value.begin(), part.value.end());
    reference.product.abs_sum.insert(reference.product.abs_sum.end(), part.abs_sum.begin(), part.abs_sum.end());
  }
  const std::string of_experts = checked_experts == 1
                                     ? "of the one expert with rows"
                                     : "of each of the " + std::to_string(checked_experts) + " experts with rows";
  std::ostringstream text;
  if (every_row) text << "every row " << of_experts;
  else text << "up to " << per_expert << " sampled rows " << of_experts;
  text << " (" << reference.product.rows.size() << " rows of D; all columns)";
  reference.description = text.str();
  return reference;
}

/// The outcome of comparing a grouped D with its reference.
struct GroupedCheck {
  OutputCheck check;            ///< On the checked rows.
  std::vector<float> d_rows;    ///< The checked rows of D, for describe_check().
  int64_t unwritten = 0;        ///< NaN or infinite elements in the experts' rows (D was filled with NaN first).
  int64_t written_outside = 0;  ///< Bytes of the rows that must not be written (padding, past a count) changed.
  std::string guard_changed;    ///< Where the guard band around D was written (empty: nowhere).
  bool passed = false;
};

/// Compares the problem's D (once the stream has finished) with `reference`
/// under the tolerance of `accumulation`. Every element of the experts' rows
/// must be written (finite); the rows that are no expert's (row_experts() -1:
/// padding, rows past a count) and the guard band around D must be left
/// alone, byte for byte; and the checked rows must meet the tolerance
/// (check_rows(): the benchmark's problems are plain, per-tensor scales, no
/// epilogue, BF16 D).
GroupedCheck check_grouped_output(const GroupedProblem& problem, const GroupedReference& reference,
                                  Accumulation accumulation) {
  const int64_t n = problem.shape().n;
  const std::vector<int>& row_experts = problem.row_experts();
  const std::vector<float> d = problem.download_d();
  const std::vector<uint8_t> d_bytes = problem.download_d_bytes();
  const int64_t row_bytes = n * output_bytes(problem.options().d_type);
  GroupedCheck result;
  for (int64_t row = 0; row < problem.rows(); ++row) {
    if (row_experts[static_cast<size_t>(row)] >= 0) {
      const auto begin = d.begin() + row * n;
      result.unwritten += std::count_if(begin, begin + n, [](float x) { return !std::isfinite(x); });
    } else {
      const auto begin = d_bytes.begin() + row * row_bytes;
      result.written_outside +=
          std::count_if(begin, begin + row_bytes, [](uint8_t b) { return b != GroupedProblem::kDPoisonByte; });
    }
  }
  if (!problem.d_guard_untouched(&result.guard_changed) && result.guard_changed.empty()) {
    result.guard_changed = "somewhere";
  }
  result.d_rows.reserve(reference.product.rows.size() * n);
  for (int64_t row : reference.product.rows) {
    result.d_rows.insert(result.d_rows.end(), d.begin() + row * n, d.begin() + (row + 1) * n);
  }
  result.check =
      check_rows(result.d_rows, reference.product, problem.options().d_type, problem.shape().k, accumulation);
  result.passed =
      result.check.passed && result.unwritten == 0 && result.written_outside == 0 && result.guard_changed.empty();
  return result;
}

/// "PASS", or "FAIL: <the broken rule>".
std::string grouped_verdict(const GroupedCheck& check) {
  if (check.passed) return "PASS";
  if (check.unwritten > 0) {
    return "FAIL: " + std::to_string(check.unwritten) + " elements of the experts' rows of D NaN or infinite";
  }
  if (check.written_outside > 0) {
    return "FAIL: " + std::to_string(check.written_outside) +
           " bytes of D outside the experts' rows written (padding or rows past a count)";
  }
  if (!check.guard_changed.empty()) return "FAIL: the guard band around D was written (" + check.guard_changed + ")";
  return "FAIL: " + check.check.result.failure;
}

// -----------------------------------------------------------------------------
// cuBLASLt, once per expert
// -----------------------------------------------------------------------------

/// One cuBLASLt GEMM per expert with rows (CublasLtGemm, cuBLASLt's first
/// heuristic algorithm for each), enqueued one after another on the
/// problem's stream: the baseline a grouped kernel must beat. Each GEMM reads
/// the expert's rows of the grouped A, its B, and writes its rows of the
/// grouped D, so the loop computes the same D as a grouped launch.
///
/// The per-tensor scales are read from copies of
/// expert_a_scale_on_device(g) / expert_b_scale_on_device(g), one float per
/// kScaleStride: expert g's B scale sits at b_scales + g, 4-byte aligned, and
/// cublasLtMatmul refuses such a scale pointer (CUBLAS_STATUS_NOT_SUPPORTED,
/// seen on the H200 for every expert but the first) although its heuristic
/// gave an algorithm. The copies are made once, on the stream, outside the timing.
class CublasLtLoop {
 public:
  /// Floats between two scale copies: 256 bytes, cudaMalloc's alignment.
  static constexpr int64_t kScaleStride = 64;

  explicit CublasLtLoop(const GroupedProblem& problem) {
    const cudaStream_t stream = problem.args().gemm.stream;
    scales_ = DeviceBuffer<float>(2 * kScaleStride * problem.experts());
    for (int g = 0; g < problem.experts(); ++g) {
      if (problem.expert_rows(g) == 0) continue;  // expert_args(g) is no GEMM to run
      float* a_scale = scales_.get() + 2 * kScaleStride * g;
      float* b_scale = a_scale + kScaleStride;
      FP8GEMM_CUDA_CHECK(cudaMemcpyAsync(a_scale, problem.expert_a_scale_on_device(g), sizeof(float),
                                         cudaMemcpyDeviceToDevice, stream));
      FP8GEMM_CUDA_CHECK(cudaMemcpyAsync(b_scale, problem.expert_b_scale_on_device(g), sizeof(float),
                                         cudaMemcpyDeviceToDevice, stream));
      experts_.push_back(g);
      gemms_.push_back(
          std::make_unique<CublasLtGemm>(problem.expert_args(g), a_scale, b_scale, /*fast_accumulation=*/false));
      const Status& status = gemms_.back()->status();
      if (!status.ok() && status_.ok()) {
        status_ = Status::error(status.code, "expert " + std::to_string(g) + ": " + status.message);
      }
    }
  }

  /// Not ok (saying which expert and why) when cuBLASLt refuses an expert's GEMM.
  const Status& status() const { return status_; }

  /// Enqueues every expert's GEMM.
  Status launch() const {
    if (!status_.ok()) return status_;
    for (size_t i = 0; i < gemms_.size(); ++i) {
      const Status status = gemms_[i]->launch();
      if (!status.ok()) {
        return Status::error(status.code, "expert " + std::to_string(experts_[i]) + ": " + status.message);
      }
    }
    return Status::success();
  }

 private:
  std::vector<std::unique_ptr<CublasLtGemm>> gemms_;
  std::vector<int> experts_;    // the expert of each GEMM
  DeviceBuffer<float> scales_;  // per expert: its A scale, then its B scale, kScaleStride floats apart
  Status status_;
};

/// The loop captured once in a CUDA graph on `stream`, and instantiated: a
/// launch is one cudaGraphLaunch, all of the loop's kernels without the
/// host's cost of enqueueing each. The graph reads the loop's cuBLASLt set-up
/// (workspaces, scale pointers), so the loop must outlive it.
class CublasLtGraph {
 public:
  CublasLtGraph(const CublasLtLoop& loop, cudaStream_t stream) : stream_(stream) {
    status_ = loop.status();
    if (!status_.ok()) return;
    // Once outside the capture: cuBLASLt's one-time work (loading its
    // kernels, its choices) is not what a graph should record.
    status_ = loop.launch();
    if (!status_.ok()) return;
    FP8GEMM_CUDA_CHECK(cudaStreamSynchronize(stream_));
    FP8GEMM_CUDA_CHECK(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal));
    const Status captured = loop.launch();
    cudaGraph_t graph = nullptr;
    const cudaError_t ended = cudaStreamEndCapture(stream_, &graph);
    if (!captured.ok() || ended != cudaSuccess) {
      if (graph != nullptr) cudaGraphDestroy(graph);
      cudaGetLastError();  // the capture's error is reported in status_, not left for the next call
      status_ =
          !captured.ok()
              ? captured
              : Status::error(StatusCode::kRuntimeError,
                              std::string("capturing the cuBLASLt loop in a CUDA graph: ") + cudaGetErrorString(ended));
      return;
    }
    const cudaError_t instantiated = cudaGraphInstantiate(&exec_, graph, 0);
    cudaGraphDestroy(graph);  // the executable graph keeps what it needs
    FP8GEMM_CUDA_CHECK(instantiated);
    FP8GEMM_CUDA_CHECK(cudaGraphUpload(exec_, stream_));  // its first launch then does no set-up either
    FP8GEMM_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }
  ~CublasLtGraph() {
    if (exec_ != nullptr) cudaGraphExecDestroy(exec_);
  }
  CublasLtGraph(const CublasLtGraph&) = delete;
  CublasLtGraph& operator=(const CublasLtGraph&) = delete;

  /// Enqueues the graph (or returns why there is none).
  Status launch() const {
    if (!status_.ok()) return status_;
    const cudaError_t err = cudaGraphLaunch(exec_, stream_);
    if (err != cudaSuccess) {
      return Status::error(StatusCode::kRuntimeError, std::string("cudaGraphLaunch: ") + cudaGetErrorString(err));
    }
    return Status::success();
  }

 private:
  cudaStream_t stream_;
  Status status_;
  cudaGraphExec_t exec_ = nullptr;
};

// -----------------------------------------------------------------------------
// The case runner
// -----------------------------------------------------------------------------

/// What happened to a case, for the summary and the exit status.
struct GroupedOutcome {
  std::string name;       ///< grouped_case_name().
  bool started = false;   ///< The case was run (not skipped by the time limit or a broken GPU).
  bool measured = false;  ///< Its timed launches completed.
  Status status;          ///< Not ok: the contender refused the problem, or failed.
  std::string skipped;    ///< Why the case was skipped (empty: it was not).
  bool checked = false;   ///< `check` was computed.
  GroupedCheck check;     ///< The check of the first launch, when `checked`.
};

/// The two launches of a case: the first one, which the check reads (a step
/// with check_on_host = true: its index or count array checked on the host),
/// and the timed one (check_on_host = false: no host sync in the launch).
/// cuBLASLt has one launch for both.
struct CaseLaunches {
  std::function<Status()> first;
  std::function<Status()> timed;
};

/// True for a status that makes the run fail (exit status 1): a runtime
/// error, or kInvalidArgument (the benchmark's own problem refused as
/// invalid, or its layout broken). A step's kNotSupported only skips the case.
bool is_error(const Status& status) { return !status.ok() && status.code != StatusCode::kNotSupported; }

/// Thrown when a launch that succeeded before returns a non-ok status.
struct LaunchRefused : std::runtime_error {
  explicit LaunchRefused(const Status& status) : std::runtime_error(status.message), status(status) {}
  Status status;
};

/// Skips the current call of a case from outside its timed loop. The skip is
/// made inside the loop, so that the run reports the same iteration count as
/// the case's other repetitions (Google Benchmark checks that they agree).
void skip_run(benchmark::State& state, const std::string& message) {
  for (auto _ : state) {
    state.SkipWithError(message.c_str());
    break;
  }
}

/// Runs grouped cases as Google Benchmark benchmarks, as CaseRunner
/// (bench/harness.h) runs plain ones: one launch per iteration with a cold
/// L2 before it, the device time of the launch the iteration's manual time.
/// It keeps one GroupedProblem at a time (with its FP64 reference and the
/// cuBLASLt set-up on it), made when a case needs another shape, the old one
/// freed first.
///
/// The first call of a case launches once on D filled with NaN: a refusal
/// (kNotSupported) skips the case with its message; D is then checked
/// against the FP64 reference (check_grouped_output()), and a failed check
/// skips the case with the verdict (a passed one is in the case's label).
/// Later calls of a skipped case skip again without launching.
class GroupedRunner {
 public:
  /// `time_limit_seconds` > 0: no case starts after that long. `log`: where
  /// the checks' verdicts go (stdout beside the console table, stderr when
  /// stdout carries JSON).
  GroupedRunner(double time_limit_seconds, FILE* log) : log_(log) {
    if (time_limit_seconds > 0) {
      deadline_ =
          Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(time_limit_seconds));
    }
  }

  /// The timer, whose stream every problem and launch uses.
  const LaunchTimer& timer() const { return timer_; }

  /// Registers `c` with Google Benchmark: manual time in milliseconds,
  /// `repetitions` of `min_time_seconds`, aggregates only (<= 0: left to
  /// Google Benchmark's flags).
  void register_case(const GroupedCase& c, int repetitions, double min_time_seconds) {
    const size_t index = cases_.size();
    cases_.push_back(c);
    GroupedOutcome outcome;
    outcome.name = grouped_case_name(c);
    outcomes_.push_back(outcome);
    states_.push_back(CaseState{});
    benchmark::internal::Benchmark* b =
        benchmark::RegisterBenchmark(outcome.name.c_str(),
                                     [this, index](benchmark::State& state) { run(state, index); });
    b->UseManualTime()->Unit(benchmark::kMillisecond)->ReportAggregatesOnly(true);
    if (repetitions > 0) b->Repetitions(repetitions);
    if (min_time_seconds > 0) b->MinTime(min_time_seconds);
  }

  size_t longest_name() const {
    size_t longest = 0;
    for (const GroupedOutcome& outcome : outcomes_) longest = std::max(longest, outcome.name.size());
    return longest;
  }

  const std::vector<GroupedOutcome>& outcomes() const { return outcomes_; }
  /// Cases that failed with an error: a runtime error, or arguments refused
  /// as invalid (a broken problem or layout); not a step's kNotSupported.
  int errors() const { return errors_; }
  int failed_checks() const { return failed_checks_; }

  /// True when the case of this name completed its timed launches (its rows
  /// are measurements, not skips).
  bool measured(const std::string& name) const {
    for (const GroupedOutcome& outcome : outcomes_) {
      if (outcome.name == name) return outcome.measured;
    }
    return false;
  }

  /// For a case that failed after some of its repetitions were measured: a
  /// note saying so, for the label of its aggregate rows. Empty otherwise.
  std::string failure_note(const std::string& name) const {
    for (const GroupedOutcome& outcome : outcomes_) {
      if (outcome.name == name && outcome.measured && !outcome.skipped.empty()) {
        return "ERROR in a later repetition (the aggregates cover the ones before it): " + outcome.skipped;
      }
    }
    return "";
  }

 private:
  using Clock = std::chrono::steady_clock;

  /// What the runner remembers of a case between Google Benchmark's calls.
  struct CaseState {
    bool started = false;      // the first call has run
    std::string skip_message;  // not empty: every call skips with it
    double launch_ms = 0.0;    // a warm-up launch: sizes the warm-up of later calls
    std::string label;         // "check PASS" once the check passed
  };

  GroupedProblem& problem_for(const GroupedShape& shape) {
    // Compared with the shape asked for (the problem's own shape() fills in
    // a masked capacity of 0).
    if (!problem_ || !same_grouped_shape(problem_shape_, shape)) {
      // What points into the old problem goes first (the graph before the
      // loop it was captured from), then the problem, before the next one
      // is allocated: one shape's buffers on the GPU at a time.
      graph_.reset();
      loop_.reset();
      reference_.reset();
      problem_.reset();
      problem_ = std::make_unique<GroupedProblem>(shape, ProblemOptions{}, timer_.stream());
      problem_shape_ = shape;
    }
    return *problem_;
  }

  CaseLaunches launches_for(const GroupedCase& c, const GroupedProblem& problem) {
    if (c.contender == GroupedContender::kStep) {
      GroupedGemmArgs checked = problem.args();
      checked.check_on_host = true;
      GroupedGemmArgs timed = checked;
      timed.check_on_host = false;
      const StepInfo* step = c.step;
      return {[step, checked] { return run_grouped_step(*step, checked); },
              [step, timed] { return run_grouped_step(*step, timed); }};
    }
    // cuBLASLt is set up once per problem, outside any timing; the graph is
    // captured from the loop.
    if (!loop_) loop_ = std::make_unique<CublasLtLoop>(problem);
    if (c.contender == GroupedContender::kCublasLtGraph) {
      if (!graph_) graph_ = std::make_unique<CublasLtGraph>(*loop_, timer_.stream());
      const CublasLtGraph* graph = graph_.get();
      auto launch = [graph] { return graph->launch(); };
      return {launch, launch};
    }
    const CublasLtLoop* loop = loop_.get();
    auto launch = [loop] { return loop->launch(); };
    return {launch, launch};
  }

  /// One timed launch; a non-ok status (after an earlier success) throws.
  double timed_launch(const std::function<Status()>& launch, double* host_us = nullptr) {
    float ms = 0.0f;
    const Status status = timer_.launch_once(launch, &ms, host_us);
    if (!status.ok()) throw LaunchRefused(status);
    return ms;
  }

  void skip(benchmark::State& state, size_t index, const std::string& message) {
    states_[index].skip_message = message;
    outcomes_[index].skipped = message;
    skip_run(state, message);
  }

  void print_check(size_t index) const {
    const GroupedCheck& r = outcomes_[index].check;
    const ErrorMetrics& e = r.check.result.metrics;
    std::fprintf(log_, "check %-44s %s (norm-rel %.2e, max abs %.2e, calc_diff %.2e; %s)\n",
                 outcomes_[index].name.c_str(), grouped_verdict(r).c_str(), e.norm_relative_error, e.max_abs_error,
                 e.calc_diff, reference_->description.c_str());
    if (!r.check.passed) std::fprintf(log_, "  %s\n", describe_check(r.check, r.d_rows, reference_->product).c_str());
    std::fflush(log_);
  }

  /// The case's first call: the first launch on a D full of NaN, the check,
  /// the warm-up. False when the case was skipped.
  bool run_first_call(benchmark::State& state, size_t index, GroupedProblem& problem, const CaseLaunches& launches) {
    CaseState& cs = states_[index];
    GroupedOutcome& outcome = outcomes_[index];
    problem.poison_d();
    float ms = 0.0f;
    const Status status = timer_.launch_once(launches.first, &ms);
    if (!status.ok()) {
      outcome.status = status;
      if (is_error(status)) ++errors_;
      skip(state, index, status.message);
      return false;
    }
    if (!reference_) {
      std::fprintf(log_, "computing the FP64 reference of %s on the CPU...\n",
                   grouped_shape_name(problem.shape()).c_str());
      std::fflush(log_);
      reference_ = std::make_unique<GroupedReference>(compute_grouped_reference(problem));
    }
    outcome.check = check_grouped_output(problem, *reference_, grouped_accumulation(cases_[index]));
    outcome.checked = true;
    print_check(index);
    if (!outcome.check.passed) {
      ++failed_checks_;
      skip(state, index, "check failed: " + grouped_verdict(outcome.check));
      return false;
    }
    cs.label = "check " + grouped_verdict(outcome.check);
    // Warm-up with the timed launch (the first launch of a step synchronized
    // for its host check, so its time says nothing): until kWarmup's time
    // or launches, at least one.
    double warmup_ms = 0.0;
    for (int i = 0; i == 0 || (i < kWarmup.max_warmup_launches && warmup_ms < kWarmup.warmup_seconds * 1e3); ++i) {
      const double launch_ms = timed_launch(launches.timed);
      if (i == 0) cs.launch_ms = launch_ms;
      warmup_ms += launch_ms;
    }
    return true;
  }

  void run(benchmark::State& state, size_t index) {
    CaseState& cs = states_[index];
    GroupedOutcome& outcome = outcomes_[index];
    const GroupedCase& c = cases_[index];
    if (!cs.skip_message.empty()) {  // skipped in an earlier call: skipped again, as it was
      skip_run(state, cs.skip_message);
      return;
    }
    if (!cs.started) {
      if (Clock::now() > deadline_) {
        skip(state, index, "not run: the time limit (--time_limit) was reached");
        return;
      }
      if (!broken_.empty()) {
        skip(state, index, "not run: an earlier case left the GPU unusable: " + broken_);
        return;
      }
    }
    bool in_loop = false;
    try {
      GroupedProblem& problem = problem_for(c.shape);
      const CaseLaunches launches = launches_for(c, problem);
      if (!cs.started) {
        cs.started = true;
        outcome.started = true;
        if (!run_first_call(state, index, problem, launches)) return;
      } else {
        // Another repetition: warm up again as far as whole launches fit in
        // the warm-up time (none for a launch longer than that).
        double warmup_ms = 0.0;
        for (int i = 0; i < kWarmup.max_warmup_launches && warmup_ms + cs.launch_ms <= kWarmup.warmup_seconds * 1e3;
             ++i) {
          warmup_ms += timed_launch(launches.timed);
        }
      }
      double host_us = 0.0;   // the launch calls' CPU time, summed over the iterations
      for (auto _ : state) {  // one launch (the whole loop, for cuBLASLt) per iteration
        in_loop = true;
        double launch_host_us = 0.0;
        state.SetIterationTime(timed_launch(launches.timed, &launch_host_us) * 1e-3);
        host_us += launch_host_us;
      }
      outcome.measured = true;
      set_counters(state, problem);
      // What the launch costs the CPU: G cuBLASLt calls, one graph launch,
      // or one grouped launch with its argument checks.
      state.counters["launch_host_us"] = benchmark::Counter(host_us, benchmark::Counter::kAvgIterations);
      if (!cs.label.empty()) state.SetLabel(cs.label.c_str());
    } catch (const std::exception& e) {
      const LaunchRefused* refused = dynamic_cast<const LaunchRefused*>(&e);
      outcome.status = refused != nullptr ? refused->status : Status::error(StatusCode::kRuntimeError, e.what());
      if (is_error(outcome.status)) ++errors_;
      cudaGetLastError();  // clears an error that does not outlive its call
      if (refused == nullptr && cudaDeviceSynchronize() != cudaSuccess) broken_ = e.what();  // one that does
      cs.skip_message = e.what();
      outcome.skipped = e.what();
      if (in_loop) state.SkipWithError(e.what());
      else skip_run(state, e.what());
    }
  }

  /// The counters of a measured case: `TFLOPS` and `pct_of_peak` over the
  /// valid rows' work (grouped_flops) as rates over the manual time, the
  /// problem's `experts` and `valid_rows`, and `sm_clock_mhz` (NVML, right
  /// after the launches; absent without NVML).
  static void set_counters(benchmark::State& state, const GroupedProblem& problem) {
    using benchmark::Counter;
    const double tera_flops = grouped_flops(problem.valid_rows(), problem.shape().n, problem.shape().k) * 1e-12;
    state.counters["TFLOPS"] = Counter(tera_flops, Counter::kIsIterationInvariantRate);
    state.counters["pct_of_peak"] = Counter(100.0 * tera_flops / kPeakTflops, Counter::kIsIterationInvariantRate);
    state.counters["experts"] = problem.experts();
    state.counters["valid_rows"] = static_cast<double>(problem.valid_rows());
    const int clock = current_sm_clock_mhz();
    if (clock >= 0) state.counters["sm_clock_mhz"] = clock;
  }

  Clock::time_point deadline_ = Clock::time_point::max();
  LaunchTimer timer_;  // first: its stream outlives everything below
  std::vector<GroupedCase> cases_;
  std::vector<GroupedOutcome> outcomes_;
  std::vector<CaseState> states_;
  std::unique_ptr<GroupedProblem> problem_;      // the problem of the case being run...
  GroupedShape problem_shape_;                   // ...made for this shape
  std::unique_ptr<GroupedReference> reference_;  // its FP64 reference, once a case asked for it
  std::unique_ptr<CublasLtLoop> loop_;           // cuBLASLt on it, once a cuBLASLt case asked for it
  std::unique_ptr<CublasLtGraph> graph_;         // the loop in a graph, once the graph case asked for it
  FILE* log_;
  int errors_ = 0;
  int failed_checks_ = 0;
  std::string broken_;  // set when an error left the GPU unusable: later cases do not run
};

// -----------------------------------------------------------------------------
// Reporting
// -----------------------------------------------------------------------------

/// ProjectReporter (bench/harness.h: the project's names, without Google
/// Benchmark's suffixes; only the median on the console) with the grouped
/// ratios added to the row that stands for each case (its median aggregate,
/// or its only row when run with one repetition): for a step
/// `pct_of_cublaslt_loop` = 100 x the loop's median time / the step's, and
/// on the masked layout `pct_of_cublaslt_graph` likewise; the graph gets
/// `pct_of_cublaslt_loop` too (what capturing the loop saves). The cuBLASLt
/// times are those of the same shape reported earlier in the run. The
/// aggregates of a case that failed after some repetitions say so in their label.
template <typename Base>
class GroupedReporter : public ProjectReporter<Base> {
 public:
  using Run = benchmark::BenchmarkReporter::Run;

  template <typename... Args>
  GroupedReporter(const GroupedRunner* runner, bool medians_only, size_t name_width, Args&&... args)
      : ProjectReporter<Base>(medians_only, name_width, std::forward<Args>(args)...), runner_(runner) {}

  void ReportRuns(const std::vector<Run>& runs) override {
    std::vector<Run> annotated = runs;
    for (Run& run : annotated) {
      // The registered name: the project's (Google Benchmark keeps its
      // suffixes in other fields, which ProjectReporter drops).
      const std::string name = run.run_name.function_name;
      if (run.run_type == Run::RT_Aggregate) {
        const std::string note = runner_->failure_note(name);
        if (!note.empty()) run.report_label = note;
      }
      const bool median = run.run_type == Run::RT_Aggregate && run.aggregate_name == "median";
      const bool only_row = run.run_type == Run::RT_Iteration && runs.size() == 1 && runner_->measured(name);
      std::string contender, shape;
      if (!(median || only_row) || run.iterations <= 0 || !split_case_name(name, &contender, &shape)) continue;
      const double seconds = run.real_accumulated_time / static_cast<double>(run.iterations);
      if (seconds <= 0) continue;
      if (contender == kLoopName) {
        loop_seconds_[shape] = seconds;
        continue;
      }
      add_ratio(&run, "pct_of_cublaslt_loop", loop_seconds_, shape, seconds);
      if (contender == kGraphName) {
        graph_seconds_[shape] = seconds;
        continue;
      }
      add_ratio(&run, "pct_of_cublaslt_graph", graph_seconds_, shape, seconds);
    }
    ProjectReporter<Base>::ReportRuns(annotated);
  }

 private:
  static void add_ratio(Run* run, const char* counter, const std::map<std::string, double>& baseline,
                        const std::string& shape, double seconds) {
    const auto found = baseline.find(shape);
    if (found != baseline.end()) run->counters[counter] = benchmark::Counter(100.0 * found->second / seconds);
  }

  const GroupedRunner* runner_;
  std::map<std::string, double> loop_seconds_, graph_seconds_;  // by shape
};

// -----------------------------------------------------------------------------
// The command line
// -----------------------------------------------------------------------------

void print_usage() {
  std::printf(
      "%s: the grouped GEMM of a mixture-of-experts layer (G experts of M rows, each with its own N x K\n"
      "B) for every step that has one, against cuBLASLt run once per expert (`cublaslt_loop`) and, for\n"
      "the masked layout, that loop captured in a CUDA graph (`cublaslt_graph`). FP8 e4m3 A and B (random\n"
      "normal, per-tensor scales: one for A, one per expert for B), BF16 D.\n\n"
      "Each iteration is one launch (cuBLASLt: the whole loop), the L2 flushed before it, timed with\n"
      "device events (manual time); a step runs with check_on_host = false. Each case runs %d\n"
      "repetitions of at least %g s of launches; Google Benchmark reports their aggregates (the console\n"
      "shows the median). --benchmark_repetitions and --benchmark_min_time replace these two settings.\n"
      "Before the timing, each case's first launch is checked against FP64 on sampled rows of every\n"
      "expert (PASS/FAIL printed; a failed check skips the case).\n\n"
      "Options besides Google Benchmark's own (listed below):\n"
      "  --shapes=GxMxNxK/LAYOUT,...  replace the shape list; LAYOUT is contiguous or masked (masked:\n"
      "                               capacity M, every expert M valid rows). Default:\n"
      "                               4x8192x4096x7168, 4x8192x7168x2048, 8x4096x4096x7168,\n"
      "                               8x4096x7168x2048, 32x128x4096x7168 contiguous; 1x1024x4096x7168,\n"
      "                               1x1024x7168x2048, 2x512x4096x7168, 4x256x4096x7168,\n"
      "                               32x16x4096x7168 masked\n"
      "  --steps=12,...               run only these steps (number or folder name; each must have a\n"
      "                               grouped GEMM); cuBLASLt always runs\n"
      "  --time_limit=SECONDS         start no case after this long: the rest are reported as skipped\n"
      "  --list_cases                 print the names of the cases that would run, and exit (no GPU)\n\n"
      "Results as JSON: --benchmark_out=FILE --benchmark_out_format=json\n"
      "Exit status: 0 ok, 1 a case hit a runtime error, had its arguments refused as invalid or failed\n"
      "its check, or a step was refused by the registry, 3 no GPU, 4 bad usage (a step's refusal of a\n"
      "shape it does not support only skips the case).\n\n",
      kProgram, kRepetitions, kMinTimeSeconds);
}

/// Takes this program's options out of what Google Benchmark left; false
/// (after saying why) on anything unknown or malformed.
bool parse_options(int argc, char** argv, Options* options) {
  bool steps_given = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    try {
      if (arg == "--list_cases") {
        options->list_cases = true;
      } else if (arg.rfind("--shapes=", 0) == 0) {
        options->shapes = parse_grouped_shape_list(arg.substr(std::strlen("--shapes=")));
      } else if (arg.rfind("--time_limit=", 0) == 0) {
        const std::string value = arg.substr(std::strlen("--time_limit="));
        char* end = nullptr;
        options->time_limit_seconds = std::strtod(value.c_str(), &end);
        if (value.empty() || *end != '\0' || !(options->time_limit_seconds > 0)) {
          throw std::invalid_argument(arg + ": needs a number of seconds > 0");
        }
      } else if (arg.rfind("--steps=", 0) == 0) {
        steps_given = true;
        std::stringstream list(arg.substr(std::strlen("--steps=")));
        std::string key;
        while (std::getline(list, key, ',')) {
          const StepInfo* step = find_step(key);
          if (step == nullptr) throw std::invalid_argument("no step '" + key + "' (see fp8gemm --list)");
          if (step->launch_grouped == nullptr) {
            throw std::invalid_argument("step " + step->folder + " has no grouped GEMM (StepInfo::launch_grouped)");
          }
          options->steps.push_back(step);
        }
      } else {
        throw std::invalid_argument("unknown argument '" + arg + "' (--help lists the options)");
      }
    } catch (const std::exception& e) {
      std::fprintf(stderr, "%s: bad argument: %s\n", kProgram, e.what());
      return false;
    }
  }
  if (!steps_given) {
    for (const StepInfo& step : registered_steps()) {
      if (step.launch_grouped != nullptr) options->steps.push_back(&step);
    }
  }
  return true;
}

int run(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
      print_usage();
      argv[i] = const_cast<char*>("--help");  // Google Benchmark prints its flags and exits
    }
  }
  // Google Benchmark takes its flags out of argv; which reporters to wrap,
  // and which settings the command line replaces, depend on some of them.
  const std::string display_format = flag_value(argc, argv, "benchmark_format");
  const std::string out_format = flag_value(argc, argv, "benchmark_out_format");
  const bool console_display = display_format.empty() || display_format == "console";
  const bool json_display = display_format == "json";
  const bool json_file =
      !flag_value(argc, argv, "benchmark_out").empty() && (out_format.empty() || out_format == "json");
  const int repetitions = flag_value(argc, argv, "benchmark_repetitions").empty() ? kRepetitions : 0;
  const double min_time_seconds = flag_value(argc, argv, "benchmark_min_time").empty() ? kMinTimeSeconds : 0;
  benchmark::Initialize(&argc, argv);
  Options options;
  if (!parse_options(argc, argv, &options)) return kExitUsage;
  const int refused = report_refused_steps(kProgram);
  if (options.list_cases) {
    for (const GroupedCase& c : cases_of(options)) std::printf("%s\n", grouped_case_name(c).c_str());
    return refused > 0 ? kExitFailure : 0;
  }
  std::string reason;
  if (!cuda_device_available(&reason)) {
    std::fprintf(stderr, "%s: needs an NVIDIA GPU (%s). Nothing was measured.\n", kProgram, reason.c_str());
    return kExitNoGpu;
  }
  if (options.steps.empty()) {
    std::fprintf(stderr, "%s: no registered step has a grouped GEMM: only cuBLASLt is measured\n", kProgram);
  }
  GroupedRunner runner(options.time_limit_seconds, console_display ? stdout : stderr);
  const Environment env = describe_environment();
  add_context(env, runner.timer(), measurement_description(repetitions, min_time_seconds));
  benchmark::AddCustomContext("inputs",
                              "random normal A (all experts' rows, one per-tensor scale) and B (each "
                              "expert's own, its own per-tensor scale), quantized: " +
                                  describe(ProblemOptions{}) + "; masked: capacity M, every count M");
  benchmark::AddCustomContext(
      "grouped_contenders",
      "cublaslt_loop: one cublasLtMatmul per expert (its rows of A and D, its B, per-tensor scales from device "
      "memory) on one stream, the whole loop between one pair of events (one L2 flush before it); "
      "cublaslt_graph (masked only): that loop captured once in a CUDA graph, one cudaGraphLaunch per iteration; "
      "steps: run_grouped_step with check_on_host = false. TFLOPS counts the valid rows' work "
      "(grouped_flops); pct_of_cublaslt_loop / pct_of_cublaslt_graph = 100 x cuBLASLt's median time / the "
      "case's");
  benchmark::AddCustomContext("check",
                              "each case's first launch (a step with check_on_host = true) on a D filled with NaN, "
                              "against an FP64 reference of sampled rows of every expert (check_rows, the "
                              "contender's tolerance); every element of the experts' rows written, every other "
                              "row left alone; a failed check skips the case");
  for (const GroupedCase& c : cases_of(options)) runner.register_case(c, repetitions, min_time_seconds);

  // The project's reporters for console and JSON; Google Benchmark's own
  // (null here) for the CSV format.
  GroupedReporter<benchmark::ConsoleReporter> console(&runner, /*medians_only=*/true, runner.longest_name(),
                                                      isatty(STDOUT_FILENO)
                                                          ? benchmark::ConsoleReporter::OO_ColorTabular
                                                          : benchmark::ConsoleReporter::OO_Tabular);
  GroupedReporter<benchmark::JSONReporter> json_console(&runner, /*medians_only=*/false, runner.longest_name());
  GroupedReporter<benchmark::JSONReporter> json(&runner, /*medians_only=*/false, runner.longest_name());
  benchmark::BenchmarkReporter* display = console_display ? static_cast<benchmark::BenchmarkReporter*>(&console)
                                          : json_display  ? &json_console
                                                          : nullptr;
  benchmark::RunSpecifiedBenchmarks(display, json_file ? &json : nullptr);
  benchmark::Shutdown();

  int status = 0;
  if (runner.errors() > 0 || runner.failed_checks() > 0) {
    std::fprintf(stderr, "%s: %d case(s) hit an error, %d failed their check:\n", kProgram, runner.errors(),
                 runner.failed_checks());
    for (const GroupedOutcome& outcome : runner.outcomes()) {
      const bool failed_check = outcome.checked && !outcome.check.passed;
      if (is_error(outcome.status) || failed_check) {
        std::fprintf(stderr, "  %s: %s\n", outcome.name.c_str(), outcome.skipped.c_str());
      }
    }
    status = kExitFailure;
  }
  if (refused > 0) {
    std::fprintf(stderr, "%s: %d step(s) refused by the registry were not measured (see above)\n", kProgram, refused);
    status = kExitFailure;
  }
  return status;
}

}  // namespace
}  // namespace fp8gemm::bench

int main(int argc, char** argv) {
  try {
    return fp8gemm::bench::run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fp8gemm_grouped_bench: %s\n", e.what());
    return 1;
  }
}
