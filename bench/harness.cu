#include "bench/harness.h"

#include <dlfcn.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <stdexcept>

#include "common/api/registry.h"
#include "common/device/launch.h"
#include "common/device/output.h"

#ifndef FP8GEMM_GIT_COMMIT
#define FP8GEMM_GIT_COMMIT "unknown"
#endif

namespace fp8gemm::bench {

// -----------------------------------------------------------------------------
// Shapes
// -----------------------------------------------------------------------------

std::vector<Shape> default_benchmark_shapes() {
  // The squares, then decode batches of 1 and 16 with the first DeepSeek-V3
  // (N, K), then DeepSeek-V3's GEMMs as DeepGEMM's tables list them.
  std::vector<Shape> shapes = {kDefaultShape, {8192, 8192, 8192}, {1, 2112, 7168}, {16, 2112, 7168}};
  const std::pair<int64_t, int64_t> deepseek_nk[] = {{2112, 7168},  {24576, 1536}, {32768, 512},
                                                     {7168, 16384}, {4096, 7168},  {7168, 2048}};
  for (int64_t m : {64, 128, 4096}) {
    for (const auto& [n, k] : deepseek_nk) shapes.push_back({m, n, k});
  }
  return shapes;
}
// -----------------------------------------------------------------------------
// How a case is measured
// -----------------------------------------------------------------------------

std::string measurement_description(int repetitions, double min_time_seconds) {
  std::ostringstream text;
  text << "Google Benchmark, one launch per iteration: the L2 flushed before it (outside the timed events), "
       << "device events around the launch alone, their time the iteration's manual time; warm-up first (until "
       << kWarmup.warmup_seconds * 1e3 << " ms of launches or " << kWarmup.max_warmup_launches
       << " launches, at least one); ";
  if (repetitions > 0) text << repetitions << " repetitions";
  else text << "repetitions as --benchmark_repetitions says";
  if (min_time_seconds > 0) text << " of at least " << min_time_seconds << " s of launch time (at least one launch)";
  else text << " as long as --benchmark_min_time says";
  text << "; the result is the median aggregate of Google Benchmark over the repetitions of the mean launch "
       << "time of each repetition";
  return text.str();
}

// -----------------------------------------------------------------------------
// Cases
// -----------------------------------------------------------------------------

std::string contender_name(const Contender& contender) {
  if (contender.unfused) return kUnfusedName;
  if (contender.step == nullptr) return contender.fast_accumulation ? kCublasLtFastName : kCublasLtName;
  const bool fast = contender.fast_accumulation && uses_tensor_cores(*contender.step);
  std::string name = contender.step->folder + (fast ? "_fast" : "");
  if (contender.split_k > 0) name += "_split" + std::to_string(contender.split_k);
  if (contender.split_k_reduction != SplitKReduction::kAuto) {
    name += std::string("_") + split_k_reduction_name(contender.split_k_reduction);
  }
  return name;
}

Accumulation contender_accumulation(const Contender& contender) {
  if (contender.step != nullptr) return accumulation_of(*contender.step, contender.fast_accumulation);
  if (contender.unfused) return Accumulation::kFp32;  // its step is chosen when it runs (contender_accumulation())
  return contender.fast_accumulation ? Accumulation::kTensorCoreFast : Accumulation::kTensorCorePromoted;
}

std::string variant_name(const ProblemOptions& problem) {
  using G = ScaleGranularity;
  const G a = problem.a_scale_granularity, b = problem.b_scale_granularity;
  std::string scales;
  if (a == G::kPerTensor && b == G::kPerTensor) scales = "tensor";
  else if (a == G::kPerRow && b == G::kPerRow) scales = "outer";
  else if (a == G::kGroup1x128 && b == G::kBlock128x128) scales = "block";
  else scales = std::string("a_") + granularity_name(a) + "_b_" + granularity_name(b);
  std::string epilogue;
  if (problem.bias) epilogue = problem.bias_type == BiasType::kBF16 ? "bias" : "bias_fp32";
  if (problem.activation != Activation::kNone) {
    epilogue += std::string(epilogue.empty() ? "" : "_") + activation_name(problem.activation);
  }
  if (epilogue.empty()) epilogue = "none";
  return scales + "/" + epilogue + "/" + output_name(problem.d_type);
}

std::string case_name(const BenchCase& c) {
  const std::string name = contender_name(c.contender) + "/" + shape_name(c.shape);
  return c.variant ? name + "/" + variant_name(c.problem) : name;
}

bool split_case_name(const std::string& name, std::string* contender, std::string* shape) {
  const size_t slash = name.find('/');
  if (slash == std::string::npos) return false;
  *contender = name.substr(0, slash);
  *shape = name.substr(slash + 1);
  return true;
}

// -----------------------------------------------------------------------------
// The check against FP64
// -----------------------------------------------------------------------------

ReferenceProduct compute_reference(const GemmProblem& problem) {
  const Shape& s = problem.shape();
  const std::vector<int64_t> rows = rows_to_check(s.m, s.n, s.k, problem.options().seed);
  return reference_of_rows(problem.download_a(), problem.download_b(), rows);
}

std::string describe_checked_rows(const Shape& shape, uint64_t seed) {
  const int64_t count = static_cast<int64_t>(rows_to_check(shape.m, shape.n, shape.k, seed).size());
  if (count == shape.m) return "all " + std::to_string(shape.m) + " rows of D";
  return std::to_string(count) + " of " + std::to_string(shape.m) + " rows of D (sampled; all columns)";
}

CheckResult check_output(const GemmProblem& problem, const ReferenceProduct& reference, Accumulation accumulation) {
  const Shape& s = problem.shape();
  const std::vector<float> d = problem.download_d();
  CheckResult result;
  result.unwritten = std::count_if(d.begin(), d.end(), [](float x) { return !std::isfinite(x); });
  result.d_rows.reserve(reference.rows.size() * s.n);
  for (int64_t row : reference.rows) {
    result.d_rows.insert(result.d_rows.end(), d.begin() + row * s.n, d.begin() + (row + 1) * s.n);
  }
  const ProblemOptions& o = problem.options();
  if (!o.bias && o.activation == Activation::kNone && !is_fp8_output(o.d_type)) {
    result.check = check_rows(result.d_rows, reference, o.d_type, s.k, accumulation);
    result.passed = result.check.passed && result.unwritten == 0;
    return result;
  }
  EpilogueReference epilogue;
  epilogue.bias.assign(problem.bias().begin(), problem.bias().end());
  epilogue.activation = o.activation;
  epilogue.d_scale = problem.d_scale();
  result.check = check_epilogue_rows(result.d_rows, reference, epilogue, o.d_type, s.k, accumulation);
  if (is_fp8_output(o.d_type)) {
    const float amax = problem.download_d_amax();
    const AmaxReference expected = reference_amax(reference, epilogue, s.k, accumulation);
    const bool every_row = static_cast<int64_t>(reference.rows.size()) == s.m;
    // Rows that are not checked may hold a larger |y|: then only a d_amax
    // below the checked rows' is known to be wrong.
    const bool right = std::isfinite(amax) && amax >= expected.amax - expected.bound &&
                       (!every_row || amax <= expected.amax + expected.bound);
    if (!right) {
      std::ostringstream why;
      why << "d_amax = " << amax << ", the reference " << expected.amax << " +- " << expected.bound
          << (every_row ? "" : " (a lower bound: rows sampled)");
      result.amax_failure = why.str();
    }
  }
  result.passed = result.check.passed && result.unwritten == 0 && result.amax_failure.empty();
  return result;
}

std::string verdict(const CheckResult& check) {
  if (check.passed) return "PASS";
  if (check.unwritten > 0) return "FAIL: " + std::to_string(check.unwritten) + " elements of D NaN or infinite";
  if (!check.check.passed) return "FAIL: " + check.check.result.failure;
  return "FAIL: " + check.amax_failure;
}

// -----------------------------------------------------------------------------
// The case runner
// -----------------------------------------------------------------------------

/// What the runner remembers of a case between the calls Google Benchmark
/// makes (probing for the iteration count, then one call per repetition).
struct CaseRunner::CaseState {
  bool started = false;      // the first call has run
  std::string skip_message;  // not empty: every call skips with it
  double launch_ms = 0.0;    // the first launch: sizes the warm-up of later calls
  std::string label;         // "check PASS" once the check passed
};

namespace {

/// Skips the current call of a case from outside its timed loop. The skip is
/// made inside the loop, so that the run reports the same iteration count as
/// the case's other repetitions (Google Benchmark checks that they agree
/// before it computes aggregates).
void skip_run(benchmark::State& state, const std::string& message) {
  for (auto _ : state) {
    state.SkipWithError(message.c_str());
    break;
  }
}

bool same_options(const ProblemOptions& a, const ProblemOptions& b) {
  return a.a_format == b.a_format && a.b_format == b.b_format && a.d_type == b.d_type && a.seed == b.seed &&
         a.a_scale_granularity == b.a_scale_granularity && a.b_scale_granularity == b.b_scale_granularity &&
         a.bias == b.bias && a.bias_type == b.bias_type && a.activation == b.activation;
}

bool same_shape(const Shape& a, const Shape& b) { return a.m == b.m && a.n == b.n && a.k == b.k; }

/// Thrown when a launch that succeeded before returns a non-ok status.
struct LaunchRefused : std::runtime_error {
  explicit LaunchRefused(const Status& status) : std::runtime_error(status.message), status(status) {}
  Status status;
};

/// One timed launch; a non-ok status (after an earlier success) throws.
/// `host_us`, if given, gets the CPU time of the launch call itself.
double timed_launch(LaunchTimer& timer, const std::function<Status()>& launch, double* host_us = nullptr) {
  float ms = 0.0f;
  const Status status = timer.launch_once(launch, &ms, host_us);
  if (!status.ok()) throw LaunchRefused(status);
  return ms;
}

}  // namespace

CaseRunner::CaseRunner(double time_limit_seconds, bool print_checks, bool detailed_checks)
    : print_checks_(print_checks), detailed_checks_(detailed_checks) {
  if (time_limit_seconds > 0) {
    deadline_ =
        Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(time_limit_seconds));
  }
}

CaseRunner::~CaseRunner() = default;

void CaseRunner::register_case(const BenchCase& c, int repetitions, double min_time_seconds) {
  const size_t index = cases_.size();
  cases_.push_back(c);
  CaseOutcome outcome;
  outcome.name = case_name(c);
  outcomes_.push_back(outcome);
  states_.push_back(std::make_unique<CaseState>());
  benchmark::internal::Benchmark* b =
      benchmark::RegisterBenchmark(outcome.name.c_str(), [this, index](benchmark::State& state) { run(state, index); });
  b->UseManualTime()->Unit(benchmark::kMillisecond)->ReportAggregatesOnly(true);
  if (repetitions > 0) b->Repetitions(repetitions);
  if (min_time_seconds > 0) b->MinTime(min_time_seconds);
}

std::string CaseRunner::failure_note(const std::string& name) const {
  for (const CaseOutcome& outcome : outcomes_) {
    if (outcome.name == name && outcome.measured && !outcome.skipped.empty()) {
      return "ERROR in a later repetition (the aggregates cover the ones before it): " + outcome.skipped;
    }
  }
  return "";
}

size_t CaseRunner::longest_name() const {
  size_t longest = 0;
  for (const CaseOutcome& outcome : outcomes_) longest = std::max(longest, outcome.name.size());
  return longest;
}

GemmProblem& CaseRunner::problem_for(const BenchCase& c) {
  if (!problem_ || !same_shape(problem_->shape(), c.shape) || !same_options(problem_->options(), c.problem)) {
    // What points into the old problem goes first, then the problem itself,
    // before the next one is allocated.
    cublaslt_.reset();
    unfused_.reset();
    setup_index_ = SIZE_MAX;
    reference_.reset();
    problem_.reset();
    problem_ = std::make_unique<GemmProblem>(c.shape, c.problem, timer_.stream());
  }
  return *problem_;
}

namespace {

/// The arguments a step contender runs the problem with: its accumulation
/// mode and split-K choices on top of the problem's own.
GemmArgs step_args(const Contender& contender, const GemmProblem& problem) {
  GemmArgs args = problem.args();
  args.fast_accumulation = contender.fast_accumulation;
  args.split_k = contender.split_k;
  args.split_k_reduction = contender.split_k_reduction;
  return args;
}

}  // namespace

std::function<Status()> CaseRunner::launcher_for(size_t index, const GemmProblem& problem) {
  const BenchCase& c = cases_[index];
  if (c.contender.step != nullptr) {
    const GemmArgs args = step_args(c.contender, problem);
    const StepInfo* step = c.contender.step;
    return [step, args] { return run_step(*step, args); };
  }
  if (setup_index_ != index) {
    cublaslt_.reset();
    unfused_.reset();
    setup_index_ = SIZE_MAX;
    if (c.contender.unfused) {
      std::vector<const StepInfo*> steps;
      for (const StepInfo& step : registered_steps()) steps.push_back(&step);
      unfused_ = std::make_unique<UnfusedEpilogueGemm>(steps, problem.args());
    } else {
      cublaslt_ = std::make_unique<CublasLtGemm>(problem.args(), problem.a_scale_on_device(),
                                                 problem.b_scale_on_device(), c.contender.fast_accumulation);
    }
    setup_index_ = index;
  }
  if (unfused_) {
    const UnfusedEpilogueGemm* gemm = unfused_.get();
    return [gemm] { return gemm->launch(); };
  }
  const CublasLtGemm* gemm = cublaslt_.get();
  return [gemm] { return gemm->launch(); };
}

void CaseRunner::print_check(size_t index) const {
  const CaseOutcome& outcome = outcomes_[index];
  const BenchCase& c = cases_[index];
  const CheckResult& r = outcome.check;
  const ErrorMetrics& e = r.check.result.metrics;
  const std::string rows = describe_checked_rows(c.shape, c.problem.seed);
  if (detailed_checks_) {
    std::printf("check of %s against FP64 on %s:\n", outcome.name.c_str(), rows.c_str());
    std::printf(
        "  max abs %.3e, norm-relative %.3e, calc_diff %.3e, elements over their bound %lld, "
        "NaN/inf anywhere in D %lld\n",
        e.max_abs_error, e.norm_relative_error, e.calc_diff, static_cast<long long>(r.check.result.elements_over_bound),
        static_cast<long long>(r.unwritten));
    std::printf("%s\n", verdict(r).c_str());
  } else {
    std::printf("check %-36s %s (norm-rel %.2e, max abs %.2e, calc_diff %.2e; %s)\n", outcome.name.c_str(),
                verdict(r).c_str(), e.norm_relative_error, e.max_abs_error, e.calc_diff, rows.c_str());
  }
  if (!r.passed && reference_) {
    std::printf("  %s\n", describe_check(r.check, r.d_rows, *reference_).c_str());
  }
  std::fflush(stdout);
}

bool CaseRunner::run_first_call(benchmark::State& state, size_t index, GemmProblem& problem,
                                const std::function<Status()>& launch) {
  CaseState& cs = *states_[index];
  CaseOutcome& outcome = outcomes_[index];
  const BenchCase& c = cases_[index];
  // The first launch, on a D full of NaN: whether the contender takes the
  // problem at all, and the D that the check reads.
  problem.poison_d();
  float ms = 0.0f;
  const Status status = timer_.launch_once(launch, &ms);
  if (!status.ok()) {
    outcome.status = status;
    if (status.code == StatusCode::kRuntimeError) ++runtime_failures_;
    skip(state, index, status.message);
    return false;
  }
  cs.launch_ms = ms;
  // The unfused baseline's GEMM is a step's, found when the case was set up.
  const StepInfo* unfused_step = c.contender.unfused && unfused_ ? unfused_->gemm_step() : nullptr;
  if (unfused_step != nullptr) cs.label = "GEMM of " + unfused_step->folder + " (FP32 D), then the epilogue kernel";
  // A step that describes its launch (a split-K step: its slice count and why) says so in the label.
  if (c.contender.step != nullptr && c.contender.step->describe_launch != nullptr) {
    cs.label = c.contender.step->describe_launch(step_args(c.contender, problem));
  }
  if (c.check) {
    if (!reference_) {
      if (print_checks_) {
        std::printf("computing the FP64 reference of %s on the CPU (%s)...\n", shape_name(c.shape).c_str(),
                    describe_checked_rows(c.shape, c.problem.seed).c_str());
        std::fflush(stdout);
      }
      reference_ = std::make_unique<ReferenceProduct>(compute_reference(problem));
    }
    const Accumulation accumulation =
        unfused_step != nullptr ? accumulation_of(*unfused_step, false) : contender_accumulation(c.contender);
    outcome.check = check_output(problem, *reference_, accumulation);
    outcome.checked = true;
    if (print_checks_ || !outcome.check.passed) print_check(index);
    if (!outcome.check.passed) {
      skip(state, index, "check failed: " + verdict(outcome.check));
      return false;
    }
    cs.label = (cs.label.empty() ? "" : cs.label + "; ") + "check " + verdict(outcome.check);
  }
  // Warm-up, the first launch included: it loads the kernel's module, lets
  // the clocks rise, and lets a library make its one-time choices.
  double warmup_ms = ms;
  for (int i = 1; i < kWarmup.max_warmup_launches && warmup_ms < kWarmup.warmup_seconds * 1e3; ++i) {
    warmup_ms += timed_launch(timer_, launch);
  }
  return true;
}

void CaseRunner::skip(benchmark::State& state, size_t index, const std::string& message) {
  states_[index]->skip_message = message;
  outcomes_[index].skipped = message;
  skip_run(state, message);
}

void CaseRunner::run(benchmark::State& state, size_t index) {
  CaseState& cs = *states_[index];
  CaseOutcome& outcome = outcomes_[index];
  const BenchCase& c = cases_[index];
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
    GemmProblem& problem = problem_for(c);
    const std::function<Status()> launch = launcher_for(index, problem);
    if (!cs.started) {
      cs.started = true;
      outcome.started = true;
      if (!run_first_call(state, index, problem, launch)) return;
    } else {
      // Another repetition: warm up again as far as whole launches fit in the
      // warm-up time (none for a slow step, whose launches keep the GPU busy).
      double warmup_ms = 0.0;
      for (int i = 0; i < kWarmup.max_warmup_launches && warmup_ms + cs.launch_ms <= kWarmup.warmup_seconds * 1e3;
           ++i) {
        warmup_ms += timed_launch(timer_, launch);
      }
    }
    double host_us = 0.0;   // the launch calls' CPU time, summed over the iterations
    for (auto _ : state) {  // one launch per iteration, its device time the manual time
      in_loop = true;
      double launch_host_us = 0.0;
      state.SetIterationTime(timed_launch(timer_, launch, &launch_host_us) * 1e-3);
      host_us += launch_host_us;
    }
    outcome.measured = true;
    set_rate_counters(state, c);
    // What a launch costs the CPU (argument checks, tensor maps, the launch
    // itself): the baseline of a binding's overhead (pytorch/bench_fp8gemm_op.py).
    state.counters["launch_host_us"] = benchmark::Counter(host_us, benchmark::Counter::kAvgIterations);
    if (outcome.checked) {
      const ErrorMetrics& e = outcome.check.check.result.metrics;
      state.counters["norm_rel_error"] = e.norm_relative_error;
      state.counters["max_abs_error"] = e.max_abs_error;
      state.counters["calc_diff"] = e.calc_diff;
    }
    if (!cs.label.empty()) state.SetLabel(cs.label.c_str());
  } catch (const std::exception& e) {
    const LaunchRefused* refused = dynamic_cast<const LaunchRefused*>(&e);
    outcome.status = refused != nullptr ? refused->status : Status::error(StatusCode::kRuntimeError, e.what());
    if (outcome.status.code == StatusCode::kRuntimeError) ++runtime_failures_;
    cudaGetLastError();  // clears an error that does not outlive its call
    if (refused == nullptr && cudaDeviceSynchronize() != cudaSuccess) broken_ = e.what();  // one that does
    cs.skip_message = e.what();
    outcome.skipped = e.what();
    if (in_loop) state.SkipWithError(e.what());
    else skip_run(state, e.what());
  }
}

// -----------------------------------------------------------------------------
// Reporting
// -----------------------------------------------------------------------------

namespace {

using Run = benchmark::BenchmarkReporter::Run;

// Google Benchmark 1.7 marks a failed run with error_occurred and
// error_message, 1.8 with skipped and skip_message: whichever this one has.
template <typename R>
auto run_failed(const R& run, int) -> decltype(run.error_occurred, bool()) {
  return run.error_occurred;
}
template <typename R>
auto run_failed(const R& run, long) -> decltype(run.skipped, bool()) {
  return static_cast<int>(run.skipped) != 0;
}
template <typename R>
auto run_message(const R& run, int) -> decltype(run.error_message, std::string()) {
  return run.error_message;
}
template <typename R>
auto run_message(const R& run, long) -> decltype(run.skip_message, std::string()) {
  return run.skip_message;
}

}  // namespace

std::vector<Run> RunAnnotator::annotate(const std::vector<Run>& runs, std::vector<ReportedMedian>* medians,
                                        const CaseRunner* runner) {
  std::vector<Run> annotated;
  for (const Run& original : runs) {
    Run run = original;
    // The project's name: what was registered, without Google Benchmark's
    // "/min_time:0.050/repeats:5/manual_time".
    run.run_name = benchmark::BenchmarkName();
    run.run_name.function_name = original.run_name.function_name;
    run.run_name.args = original.run_name.args;
    const std::string name = run.run_name.str();
    if (runner != nullptr && run.run_type == Run::RT_Aggregate) {
      const std::string note = runner->failure_note(name);
      if (!note.empty()) run.report_label = note;
    }
    if (run_failed(run, 0)) {
      // A case skipped in every repetition, with one message: one row.
      if (!annotated.empty() && run_failed(annotated.back(), 0) &&
          run_message(annotated.back(), 0) == run_message(run, 0)) {
        continue;
      }
      annotated.push_back(run);
      continue;
    }
    // The row that stands for the case: its median aggregate (or, run with
    // one repetition, its only row).
    const bool median = run.run_type == Run::RT_Aggregate && run.aggregate_name == "median";
    const bool only_row = run.run_type == Run::RT_Iteration && runs.size() == 1;
    std::string contender, shape;
    if ((median || only_row) && run.iterations > 0 && split_case_name(name, &contender, &shape)) {
      const double seconds = run.real_accumulated_time / static_cast<double>(run.iterations);
      if (contender == kCublasLtName) cublaslt_seconds_[shape] = seconds;
      const auto cublaslt = cublaslt_seconds_.find(shape);
      if (cublaslt != cublaslt_seconds_.end() && seconds > 0) {
        run.counters["pct_of_cublaslt"] = benchmark::Counter(100.0 * cublaslt->second / seconds);
      }
      if (medians != nullptr) {
        ReportedMedian reported{name, seconds, {}};
        for (const auto& [key, counter] : run.counters) reported.counters[key] = counter.value;
        medians->push_back(reported);
      }
    }
    annotated.push_back(run);
  }
  return annotated;
}

namespace {
double copy_bandwidth_gbps = 0;  // set_copy_bandwidth_gbps()
}  // namespace

void set_copy_bandwidth_gbps(double gbps) { copy_bandwidth_gbps = gbps; }

double measure_copy_bandwidth_gbps() {
  constexpr size_t kBytes = size_t{1} << 30;
  void* source = nullptr;
  void* destination = nullptr;
  if (cudaMalloc(&source, kBytes) != cudaSuccess || cudaMalloc(&destination, kBytes) != cudaSuccess) {
    cudaGetLastError();
    if (source != nullptr) cudaFree(source);
    return 0;
  }
  FP8GEMM_CUDA_CHECK(cudaMemset(source, 0x3C, kBytes));
  cudaEvent_t start, stop;
  FP8GEMM_CUDA_CHECK(cudaEventCreate(&start));
  FP8GEMM_CUDA_CHECK(cudaEventCreate(&stop));
  float best_ms = 0;
  for (int i = 0; i < 6; ++i) {  // the first copy warms up and is not counted
    FP8GEMM_CUDA_CHECK(cudaEventRecord(start));
    FP8GEMM_CUDA_CHECK(cudaMemcpyAsync(destination, source, kBytes, cudaMemcpyDeviceToDevice));
    FP8GEMM_CUDA_CHECK(cudaEventRecord(stop));
    FP8GEMM_CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    FP8GEMM_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    if (i > 0 && (best_ms == 0 || ms < best_ms)) best_ms = ms;
  }
  FP8GEMM_CUDA_CHECK(cudaEventDestroy(start));
  FP8GEMM_CUDA_CHECK(cudaEventDestroy(stop));
  FP8GEMM_CUDA_CHECK(cudaFree(source));
  FP8GEMM_CUDA_CHECK(cudaFree(destination));
  return best_ms > 0 ? 2.0 * static_cast<double>(kBytes) / (best_ms * 1e-3) * 1e-9 : 0;
}

void set_rate_counters(benchmark::State& state, const BenchCase& c) {
  using benchmark::Counter;
  const double tera_flops = gemm_flops(c.shape.m, c.shape.n, c.shape.k) * 1e-12;  // per launch
  state.counters["TFLOPS"] = Counter(tera_flops, Counter::kIsIterationInvariantRate);
  state.counters["pct_of_peak"] = Counter(100.0 * tera_flops / kPeakTflops, Counter::kIsIterationInvariantRate);
  const double giga_bytes = gemm_min_bytes(c.shape, c.problem.d_type) * 1e-9;  // A + B + D, per launch
  state.counters["GBps"] = Counter(giga_bytes, Counter::kIsIterationInvariantRate);
  if (copy_bandwidth_gbps > 0) {
    state.counters["pct_of_hbm_copy"] =
        Counter(100.0 * giga_bytes / copy_bandwidth_gbps, Counter::kIsIterationInvariantRate);
  }
  const int clock = current_sm_clock_mhz();  // right after the launches: shows throttling
  if (clock >= 0) state.counters["sm_clock_mhz"] = clock;
}

std::string flag_value(int argc, char** argv, const std::string& name) {
  const std::string prefix = "--" + name + "=";
  std::string value;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], prefix.c_str(), prefix.size()) == 0) value = argv[i] + prefix.size();
  }
  return value;
}

// -----------------------------------------------------------------------------
// cuBLASLt
// -----------------------------------------------------------------------------

namespace {

void cublas_check(cublasStatus_t status, const char* call, const char* file, int line) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  throw std::runtime_error(std::string(call) + " failed at " + file + ":" + std::to_string(line) + ": " +
                           cublasLtGetStatusString(status));
}

#define FP8GEMM_CUBLAS_CHECK(call) cublas_check((call), #call, __FILE__, __LINE__)

/// cuBLASLt's name for an FP8 format; false for the FNUZ formats, which it lacks.
bool cuda_fp8_type(Fp8Format format, cudaDataType_t* type) {
  if (format == Fp8Format::kE4M3) *type = CUDA_R_8F_E4M3;
  else if (format == Fp8Format::kE5M2) *type = CUDA_R_8F_E5M2;
  else return false;
  return true;
}

constexpr size_t kCublasLtWorkspaceBytes = 32u << 20;  // what NVIDIA suggests for Hopper

template <typename T>
void set_attribute(cublasLtMatmulDesc_t operation, cublasLtMatmulDescAttributes_t attribute, const T& value) {
  FP8GEMM_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(operation, attribute, &value, sizeof(value)));
}

/// cuBLASLt's element type of D; false for none.
cudaDataType_t cuda_output_type(OutputType type) {
  switch (type) {
    case OutputType::kBF16: return CUDA_R_16BF;
    case OutputType::kFP32: return CUDA_R_32F;
    case OutputType::kE4M3: return CUDA_R_8F_E4M3;
    default: return CUDA_R_8F_E5M2;
  }
}

cudaDataType_t cuda_bias_type(BiasType type) { return type == BiasType::kBF16 ? CUDA_R_16BF : CUDA_R_32F; }

/// cuBLASLt's scale mode of a granularity.
cublasLtMatmulMatrixScale_t cublaslt_scale_mode(ScaleGranularity granularity) {
  switch (granularity) {
    case ScaleGranularity::kPerTensor: return CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F;
    case ScaleGranularity::kPerRow: return CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F;
    case ScaleGranularity::kGroup1x128: return CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F;
    default: return CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F;
  }
}

/// 1 x 128 scales from quantize.h's layout, rows x groups with the groups of
/// a row contiguous, to cuBLASLt's, groups x rows with the rows contiguous.
__global__ void transpose_scales_kernel(const float* in, int64_t rows, int64_t groups, float* out) {
  const int64_t count = rows * groups;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
    const int64_t row = i / groups;
    out[(i - row * groups) * rows + row] = in[i];
  }
}

/// "4096x4096x4096, A e4m3 (1x128 scales), B e4m3 (128x128 scales), bias
/// bf16, gelu, D e4m3, fast accumulation": what a refusal names.
std::string describe_cublaslt_problem(const GemmArgs& args, bool fast_accumulation) {
  std::ostringstream text;
  text << args.m << "x" << args.n << "x" << args.k << ", A " << fp8_name(args.a_format) << " ("
       << granularity_name(args.a_scale_granularity) << " scales), B " << fp8_name(args.b_format) << " ("
       << granularity_name(args.b_scale_granularity) << " scales)";
  if (args.bias != nullptr) text << ", bias " << (args.bias_type == BiasType::kBF16 ? "bf16" : "fp32");
  if (args.activation != Activation::kNone) text << ", " << activation_name(args.activation);
  text << ", D " << output_name(args.d_type);
  if (fast_accumulation) text << ", fast accumulation";
  return text.str();
}

bool is_block_scaled(ScaleGranularity granularity) {
  return granularity == ScaleGranularity::kGroup1x128 || granularity == ScaleGranularity::kBlock128x128;
}

}  // namespace

CublasLtGemm::CublasLtGemm(const GemmArgs& args, const float* a_scale, const float* b_scale, bool fast_accumulation)
    : args_(args) {
  status_ = validate_gemm_args(args);
  if (!status_.ok()) return;
  auto refuse = [&](const std::string& why) {
    status_ = Status::error(StatusCode::kNotSupported,
                            "cuBLASLt: " + why + " (" + describe_cublaslt_problem(args, fast_accumulation) + ")");
  };
  cudaDataType_t a_type, b_type;
  if (!cuda_fp8_type(args.a_format, &a_type) || !cuda_fp8_type(args.b_format, &b_type)) {
    status_ = Status::error(StatusCode::kNotSupported, std::string("cuBLASLt: FP8 formats e4m3 and e5m2 only, got ") +
                                                           fp8_name(args.a_format) + " x " + fp8_name(args.b_format));
    return;
  }
  if (args.activation == Activation::kGeluErf) {
    refuse("GELU's erf form is not offered (CUBLASLT_EPILOGUE_GELU is the tanh form)");
    return;
  }
  if (fast_accumulation && (is_block_scaled(args.a_scale_granularity) || is_block_scaled(args.b_scale_granularity))) {
    refuse(
        "no fast accumulation with 1x128 or 128x128 scales: they change every 128 of K, so the partial sums are "
        "scaled in FP32 every 128 of K whatever CUBLASLT_MATMUL_DESC_FAST_ACCUM says");
    return;
  }
  const cudaDataType_t d_type = cuda_output_type(args.d_type);
  workspace_ = DeviceBuffer<uint8_t>(kCublasLtWorkspaceBytes);

  FP8GEMM_CUBLAS_CHECK(cublasLtCreate(&handle_));
  FP8GEMM_CUBLAS_CHECK(cublasLtMatmulDescCreate(&operation_, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  // cuBLASLt's A is our B and its B our A (see the class comment), so the
  // transposes read "TN" and the scales swap.
  set_attribute(operation_, CUBLASLT_MATMUL_DESC_TRANSA, CUBLAS_OP_T);
  set_attribute(operation_, CUBLASLT_MATMUL_DESC_TRANSB, CUBLAS_OP_N);
  set_scales(/*our_a=*/false, b_scale);
  set_scales(/*our_a=*/true, a_scale);
  set_attribute(operation_, CUBLASLT_MATMUL_DESC_FAST_ACCUM, static_cast<int8_t>(fast_accumulation ? 1 : 0));
  set_epilogue();

  // Layouts as stored, column-major: our B is K x N (ld = ldb), our A is
  // K x M (ld = lda), our D is N x M (ld = ldd). C is D (beta = 0), except
  // for an FP8 D: cuBLASLt wants C in BF16 then (in the bias's type with a
  // bias), and it is never read.
  FP8GEMM_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&a_layout_, b_type, args.k, args.n, args.ldb));
  FP8GEMM_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&b_layout_, a_type, args.k, args.m, args.lda));
  FP8GEMM_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&d_layout_, d_type, args.n, args.m, args.ldd));
  if (is_fp8_output(args.d_type)) {
    const cudaDataType_t c_type = args.bias != nullptr ? cuda_bias_type(args.bias_type) : CUDA_R_16BF;
    FP8GEMM_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&c_layout_, c_type, args.n, args.m, args.ldd));
  }

  cublasLtMatmulPreference_t preference = nullptr;
  FP8GEMM_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&preference));
  const uint64_t workspace_bytes = workspace_.bytes();
  FP8GEMM_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(preference, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                            &workspace_bytes, sizeof(workspace_bytes)));
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  const cublasStatus_t heuristic =
      cublasLtMatmulAlgoGetHeuristic(handle_, operation_, a_layout_, b_layout_, c_layout_ ? c_layout_ : d_layout_,
                                     d_layout_, preference, 1, &result, &found);
  cublasLtMatmulPreferenceDestroy(preference);
  const bool plain = args.a_scale_granularity == ScaleGranularity::kPerTensor &&
                     args.b_scale_granularity == ScaleGranularity::kPerTensor && args.bias == nullptr &&
                     args.activation == Activation::kNone && !is_fp8_output(args.d_type);
  if (heuristic == CUBLAS_STATUS_NOT_SUPPORTED || (heuristic == CUBLAS_STATUS_SUCCESS && found == 0)) {
    std::ostringstream msg;
    msg << "cuBLASLt: no FP8 algorithm for " << args.m << "x" << args.n << "x" << args.k << ", A "
        << fp8_name(args.a_format) << ", B " << fp8_name(args.b_format) << ", D " << output_name(args.d_type)
        << " (FP8 needs 16-byte aligned rows, e.g. K % 16 == 0)";
    if (plain) {
      status_ = Status::error(StatusCode::kNotSupported, msg.str());
    } else {
      refuse(std::string("its heuristic has no algorithm: ") + cublasLtGetStatusString(heuristic));
    }
    return;
  }
  // Our arguments are valid (validate_gemm_args), so an invalid value is a
  // combination of features cuBLASLt does not take.
  if (heuristic == CUBLAS_STATUS_INVALID_VALUE && !plain) {
    refuse(std::string("its heuristic calls the combination invalid: ") + cublasLtGetStatusString(heuristic));
    return;
  }
  FP8GEMM_CUBLAS_CHECK(heuristic);
  algo_ = result.algo;
}

void CublasLtGemm::set_scales(bool our_a, const float* per_tensor_scale) {
  const ScaleGranularity granularity = our_a ? args_.a_scale_granularity : args_.b_scale_granularity;
  const float* scales = our_a ? args_.a_scales : args_.b_scales;
  const int64_t rows = our_a ? args_.m : args_.n;
  const int64_t groups = (args_.k + kQuantGroupSize - 1) / kQuantGroupSize;
  DeviceBuffer<float>& copy = our_a ? a_scales_ : b_scales_;
  const float* pointer = scales != nullptr ? scales : per_tensor_scale;
  if (granularity == ScaleGranularity::kGroup1x128) {
    copy = DeviceBuffer<float>(rows * groups);
    constexpr int kThreads = 256;
    const int64_t blocks = std::min<int64_t>((rows * groups + kThreads - 1) / kThreads, 1 << 16);
    transpose_scales_kernel<<<static_cast<unsigned>(blocks), kThreads, 0, args_.stream>>>(scales, rows, groups,
                                                                                          copy.get());
    FP8GEMM_CUDA_CHECK(cudaGetLastError());
    pointer = copy.get();
  } else if (granularity == ScaleGranularity::kBlock128x128 && groups % 4 != 0) {
    // cuBLASLt's rows of block scales are 16-byte aligned: pad them to 4 floats.
    const int64_t padded = (groups + 3) / 4 * 4, row_blocks = (rows + kQuantGroupSize - 1) / kQuantGroupSize;
    copy = DeviceBuffer<float>(row_blocks * padded);
    FP8GEMM_CUDA_CHECK(cudaMemsetAsync(copy.get(), 0, copy.bytes(), args_.stream));
    FP8GEMM_CUDA_CHECK(cudaMemcpy2DAsync(copy.get(), padded * sizeof(float), scales, groups * sizeof(float),
                                         groups * sizeof(float), row_blocks, cudaMemcpyDeviceToDevice, args_.stream));
    pointer = copy.get();
  }
  // cuBLASLt's A is our B, its B our A. The plain problem sets no mode, as it never did.
  if (granularity != ScaleGranularity::kPerTensor) {
    set_attribute(operation_, our_a ? CUBLASLT_MATMUL_DESC_B_SCALE_MODE : CUBLASLT_MATMUL_DESC_A_SCALE_MODE,
                  static_cast<int32_t>(cublaslt_scale_mode(granularity)));
  }
  set_attribute(operation_, our_a ? CUBLASLT_MATMUL_DESC_B_SCALE_POINTER : CUBLASLT_MATMUL_DESC_A_SCALE_POINTER,
                static_cast<const void*>(pointer));
}

void CublasLtGemm::set_epilogue() {
  const bool bias = args_.bias != nullptr, gelu = args_.activation == Activation::kGeluTanh;
  if (bias || gelu) {
    const cublasLtEpilogue_t epilogue = bias && gelu ? CUBLASLT_EPILOGUE_GELU_BIAS
                                        : gelu       ? CUBLASLT_EPILOGUE_GELU
                                                     : CUBLASLT_EPILOGUE_BIAS;
    set_attribute(operation_, CUBLASLT_MATMUL_DESC_EPILOGUE, static_cast<uint32_t>(epilogue));
  }
  if (bias) {
    // D^T's rows are our columns: cuBLASLt's bias over the rows of its D is ours over the columns.
    set_attribute(operation_, CUBLASLT_MATMUL_DESC_BIAS_POINTER, args_.bias);
    set_attribute(operation_, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE,
                  static_cast<int32_t>(cuda_bias_type(args_.bias_type)));
  }
  if (!is_fp8_output(args_.d_type)) return;
  // cuBLASLt stores D = fp8(y * D scale) and takes amax of y before that
  // scale, so its D scale is our 1 / d_scale.
  const float inverse = 1.0f / args_.d_scale;
  d_scale_inverse_ = DeviceBuffer<float>(1);
  FP8GEMM_CUDA_CHECK(
      cudaMemcpyAsync(d_scale_inverse_.get(), &inverse, sizeof(float), cudaMemcpyHostToDevice, args_.stream));
  FP8GEMM_CUDA_CHECK(cudaStreamSynchronize(args_.stream));  // before `inverse` goes
  set_attribute(operation_, CUBLASLT_MATMUL_DESC_D_SCALE_POINTER, static_cast<const void*>(d_scale_inverse_.get()));
  if (args_.d_amax != nullptr) {
    set_attribute(operation_, CUBLASLT_MATMUL_DESC_AMAX_D_POINTER, static_cast<void*>(args_.d_amax));
  }
}

CublasLtGemm::~CublasLtGemm() {
  if (d_layout_ != nullptr) cublasLtMatrixLayoutDestroy(d_layout_);
  if (c_layout_ != nullptr) cublasLtMatrixLayoutDestroy(c_layout_);
  if (b_layout_ != nullptr) cublasLtMatrixLayoutDestroy(b_layout_);
  if (a_layout_ != nullptr) cublasLtMatrixLayoutDestroy(a_layout_);
  if (operation_ != nullptr) cublasLtMatmulDescDestroy(operation_);
  if (handle_ != nullptr) cublasLtDestroy(handle_);
}

Status CublasLtGemm::launch() const {
  if (!status_.ok()) return status_;
  const float alpha = 1.0f, beta = 0.0f;  // the scales come from the scale pointers
  // An FP8 D has a C of its own type, never read (beta = 0): no C pointer.
  const void* c = c_layout_ != nullptr ? nullptr : args_.d;
  const cublasStatus_t status = cublasLtMatmul(handle_, operation_, &alpha, args_.b, a_layout_, args_.a, b_layout_,
                                               &beta, c, c_layout_ != nullptr ? c_layout_ : d_layout_, args_.d,
                                               d_layout_, &algo_, workspace_.get(), workspace_.bytes(), args_.stream);
  if (status != CUBLAS_STATUS_SUCCESS) {
    return Status::error(StatusCode::kRuntimeError, std::string("cublasLtMatmul: ") + cublasLtGetStatusString(status));
  }
  return status_from_launch(kCublasLtName);
}

// -----------------------------------------------------------------------------
// The machine
// -----------------------------------------------------------------------------

namespace {

/// NVML, loaded at run time so that the programs build and run without it.
class Nvml {
 public:
  static const Nvml& instance() {
    static const Nvml nvml;
    return nvml;
  }

  bool available() const { return device_ != nullptr; }

  /// SM clock in MHz, now (max = false) or the highest it can be; -1 if unknown.
  int sm_clock_mhz(bool max) const {
    unsigned int mhz = 0;
    if (!available() || (max ? get_max_clock_ : get_clock_)(device_, kClockSm, &mhz) != kSuccess) return -1;
    return static_cast<int>(mhz);
  }

  /// Display driver version, "580.65.06"; empty if unknown.
  std::string driver_version() const {
    char version[96] = {};
    if (!available() || get_driver_version_(version, sizeof(version)) != kSuccess) return "";
    return version;
  }

 private:
  // The few NVML declarations used here (nvml.h is not always installed).
  using Device = struct nvmlDevice_st*;
  static constexpr int kSuccess = 0;  // NVML_SUCCESS
  static constexpr int kClockSm = 1;  // NVML_CLOCK_SM

  Nvml() {
    library_ = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (library_ == nullptr) return;
    auto init = reinterpret_cast<int (*)()>(dlsym(library_, "nvmlInit_v2"));
    auto by_bus_id =
        reinterpret_cast<int (*)(const char*, Device*)>(dlsym(library_, "nvmlDeviceGetHandleByPciBusId_v2"));
    get_clock_ = reinterpret_cast<int (*)(Device, int, unsigned int*)>(dlsym(library_, "nvmlDeviceGetClockInfo"));
    get_max_clock_ =
        reinterpret_cast<int (*)(Device, int, unsigned int*)>(dlsym(library_, "nvmlDeviceGetMaxClockInfo"));
    get_driver_version_ = reinterpret_cast<int (*)(char*, unsigned int)>(dlsym(library_, "nvmlSystemGetDriverVersion"));
    if (init == nullptr || by_bus_id == nullptr || get_clock_ == nullptr || get_max_clock_ == nullptr ||
        get_driver_version_ == nullptr || init() != kSuccess) {
      return;
    }
    // NVML numbers devices its own way; the PCI bus id names the same GPU as CUDA's.
    char bus_id[32] = {};
    int cuda_device = 0;
    Device device = nullptr;
    if (cudaGetDevice(&cuda_device) == cudaSuccess &&
        cudaDeviceGetPCIBusId(bus_id, sizeof(bus_id), cuda_device) == cudaSuccess &&
        by_bus_id(bus_id, &device) == kSuccess) {
      device_ = device;
    }
  }

  void* library_ = nullptr;
  Device device_ = nullptr;
  int (*get_clock_)(Device, int, unsigned int*) = nullptr;
  int (*get_max_clock_)(Device, int, unsigned int*) = nullptr;
  int (*get_driver_version_)(char*, unsigned int) = nullptr;
};

/// Spins every thread for `cycles` SM clock cycles; block 0 reports how many passed.
__global__ void spin_kernel(long long cycles, long long* elapsed) {
  const long long start = clock64();
  long long now = start;
  while (now - start < cycles) now = clock64();
  if (blockIdx.x == 0 && threadIdx.x == 0) *elapsed = now - start;
}

/// The SM clock while every SM is busy (with integer work, not tensor cores):
/// cycles counted by clock64() over the event time of the kernel.
double measure_sm_clock_mhz(int sm_count) {
  constexpr long long kCycles = 20'000'000;  // about 10 ms at 2 GHz: the launch overhead is lost in it
  DeviceBuffer<long long> elapsed(1);
  cudaEvent_t start, stop;
  FP8GEMM_CUDA_CHECK(cudaEventCreate(&start));
  FP8GEMM_CUDA_CHECK(cudaEventCreate(&stop));
  spin_kernel<<<sm_count, 128>>>(kCycles / 10, elapsed.get());  // wakes the clocks up
  FP8GEMM_CUDA_CHECK(cudaGetLastError());
  FP8GEMM_CUDA_CHECK(cudaEventRecord(start));
  spin_kernel<<<sm_count, 128>>>(kCycles, elapsed.get());
  FP8GEMM_CUDA_CHECK(cudaGetLastError());
  FP8GEMM_CUDA_CHECK(cudaEventRecord(stop));
  FP8GEMM_CUDA_CHECK(cudaEventSynchronize(stop));
  float ms = 0.0f;
  long long cycles = 0;
  FP8GEMM_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
  FP8GEMM_CUDA_CHECK(cudaMemcpy(&cycles, elapsed.get(), sizeof(cycles), cudaMemcpyDeviceToHost));
  FP8GEMM_CUDA_CHECK(cudaEventDestroy(start));
  FP8GEMM_CUDA_CHECK(cudaEventDestroy(stop));
  return static_cast<double>(cycles) / (ms * 1e3);
}

/// "13.0" from the runtime's 13000.
std::string cuda_version_text(int version) {
  return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

}  // namespace

int current_sm_clock_mhz() { return Nvml::instance().sm_clock_mhz(false); }

Environment describe_environment() {
  Environment env;
  int device = 0;
  FP8GEMM_CUDA_CHECK(cudaGetDevice(&device));
  cudaDeviceProp prop{};
  FP8GEMM_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  env.gpu = prop.name;
  env.sm_count = prop.multiProcessorCount;
  env.compute_capability = std::to_string(prop.major) + "." + std::to_string(prop.minor);
  env.l2_bytes = prop.l2CacheSize;
  int clock_khz = 0;
  FP8GEMM_CUDA_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, device));
  env.sm_clock_max_mhz = clock_khz / 1000;
  const Nvml& nvml = Nvml::instance();
  env.sm_clock_nvml_max_mhz = nvml.sm_clock_mhz(true);
  env.sm_clock_measured_mhz = measure_sm_clock_mhz(env.sm_count);
  env.sm_clock_nvml_current_mhz = nvml.sm_clock_mhz(false);
  env.hbm_copy_gbps = measure_copy_bandwidth_gbps();
  set_copy_bandwidth_gbps(env.hbm_copy_gbps);

  int driver = 0, runtime = 0;
  FP8GEMM_CUDA_CHECK(cudaDriverGetVersion(&driver));
  FP8GEMM_CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
  const std::string display_driver = nvml.driver_version();
  env.driver = display_driver.empty() ? "CUDA " + cuda_version_text(driver)
                                      : display_driver + " (CUDA " + cuda_version_text(driver) + ")";
  env.runtime = cuda_version_text(runtime);
  const size_t lt = cublasLtGetVersion();  // major * 10000 + minor * 100 + patch
  env.cublaslt = std::to_string(lt / 10000) + "." + std::to_string(lt / 100 % 100) + "." + std::to_string(lt % 100);
  env.git_commit = FP8GEMM_GIT_COMMIT;
  return env;
}

std::vector<std::pair<std::string, std::string>> context_entries(const Environment& env, const LaunchTimer& timer,
                                                                 const std::string& timing) {
  auto mhz = [](double value) {
    return value < 0 ? std::string("unknown (no NVML)") : std::to_string(int(value + 0.5));
  };
  return {
      {"gpu", env.gpu},
      {"sm_count", std::to_string(env.sm_count)},
      {"compute_capability", env.compute_capability},
      {"sm_clock_mhz_max", std::to_string(env.sm_clock_max_mhz)},
      {"sm_clock_mhz_max_nvml", mhz(env.sm_clock_nvml_max_mhz)},
      {"sm_clock_mhz_measured", mhz(env.sm_clock_measured_mhz)},
      {"sm_clock_mhz_nvml_at_start", mhz(env.sm_clock_nvml_current_mhz)},
      {"driver", env.driver},
      {"runtime", env.runtime},
      {"cublaslt", env.cublaslt},
      {"git_commit", env.git_commit},
      {"l2_flush", timer.flush_description()},
      {"timing", timing},
      {"peak_tflops", std::to_string(int(kPeakTflops)) + " (dense FP8 of one H200 SXM, datasheet)"},
      {"hbm_copy_gbps", env.hbm_copy_gbps > 0 ? std::to_string(int(env.hbm_copy_gbps + 0.5)) +
                                                    " (cudaMemcpyAsync device to device of 1 GiB, read + write "
                                                    "bytes over time, best of 5: the roof of pct_of_hbm_copy)"
                                              : std::string("not measured")},
  };
}

void add_context(const Environment& env, const LaunchTimer& timer, const std::string& timing) {
  for (const auto& [key, value] : context_entries(env, timer, timing)) benchmark::AddCustomContext(key, value);
}

int report_refused_steps(const char* program) {
  const std::vector<std::string>& refused = refused_steps();
  for (const std::string& message : refused) std::fprintf(stderr, "%s: step refused: %s\n", program, message.c_str());
  return static_cast<int>(refused.size());
}

}  // namespace fp8gemm::bench
