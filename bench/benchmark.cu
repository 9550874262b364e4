// fp8gemm_bench — every registered step and cuBLASLt on a list of shapes,
// driven by Google Benchmark.
//
// Names: `<step folder>/<M>x<N>x<K>`, `cublaslt/<M>x<N>x<K>` (default
// accumulation) and `cublaslt_fast/<M>x<N>x<K>` (fast accumulation); steps on
// tensor cores also run with GemmArgs::fast_accumulation as
// `<step folder>_fast/<M>x<N>x<K>`. The
// cases of one shape run one after another on the same problem, cuBLASLt
// first, so that every step's pct_of_cublaslt compares with a measurement
// made minutes apart at most, in the same process, on the same numbers.
//
// One Google Benchmark iteration holds one whole measurement of a case
// (LaunchTimer: warm-up, cold-L2 launches, median), and its manual time is set
// to that median: the Time column and real_time in the JSON are the median
// launch, and the counters say the rest.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "bench/harness.h"
#include "common/api/registry.h"

namespace fp8gemm::bench {
namespace {

constexpr int kExitFailure = 1;  // a case hit a runtime error
constexpr int kExitNoGpu = 3;
constexpr int kExitUsage = 4;

/// How each case is measured: about a quarter of a second of launches.
constexpr TimingOptions kTiming{};

/// What the command line chose beyond Google Benchmark's own flags.
struct Options {
  std::vector<Shape> shapes = default_benchmark_shapes();
  std::vector<const StepInfo*> steps;  // empty: all registered steps
  double time_limit_seconds = 0;       // 0: none
};

void print_usage() {
  std::printf(
      "fp8gemm_bench: every registered step and cuBLASLt (default and fast accumulation) on a list of GEMM\n"
      "shapes: FP8 e4m3 A and B (random normal, per-tensor scales), BF16 D.\n\n"
      "Options besides Google Benchmark's own (listed below):\n"
      "  --shapes=MxNxK,...     replace the shape list (default: 4096^3, 8192^3, 1x2112x7168,\n"
      "                         16x2112x7168 and the 18 DeepSeek-V3 shapes)\n"
      "  --steps=01,02_...      run only these steps (number or folder name); cuBLASLt always runs\n"
      "                         (select cases by name with --benchmark_filter=REGEX)\n"
      "  --time_limit=SECONDS   start no case after this long: the rest are reported as skipped and\n"
      "                         the JSON file stays complete (default: no limit)\n\n"
      "Results as JSON: --benchmark_out=FILE --benchmark_out_format=json\n\n");
}

/// Takes --shapes and --steps out of what Google Benchmark left; false (after
/// saying why) on anything unknown or malformed.
bool parse_options(int argc, char** argv, Options* options) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    try {
      if (arg.rfind("--shapes=", 0) == 0) {
        options->shapes = parse_shape_list(arg.substr(std::strlen("--shapes=")));
      } else if (arg.rfind("--time_limit=", 0) == 0) {
        const std::string value = arg.substr(std::strlen("--time_limit="));
        char* end = nullptr;
        options->time_limit_seconds = std::strtod(value.c_str(), &end);
        if (value.empty() || *end != '\0' || !(options->time_limit_seconds > 0)) {
          throw std::invalid_argument(arg + ": needs a number of seconds > 0");
        }
      } else if (arg.rfind("--steps=", 0) == 0) {
        std::stringstream list(arg.substr(std::strlen("--steps=")));
        std::string key;
        while (std::getline(list, key, ',')) {
          const StepInfo* step = find_step(key);
          if (step == nullptr) throw std::invalid_argument("no step '" + key + "' (see fp8gemm --list)");
          options->steps.push_back(step);
        }
      } else {
        throw std::invalid_argument("unknown argument '" + arg + "' (--help lists the options)");
      }
    } catch (const std::exception& e) {
      std::fprintf(stderr, "fp8gemm_bench: bad argument: %s\n", e.what());
      return false;
    }
  }
  if (options->steps.empty()) {
    for (const StepInfo& step : registered_steps()) options->steps.push_back(&step);
  }
  return true;
}

/// Keeps the problem of the shape being measured, and only that one: the
/// cases of a shape are registered together, so each problem is made once.
class ProblemCache {
 public:
  explicit ProblemCache(cudaStream_t stream) : stream_(stream) {}

  GemmProblem& get(const Shape& shape) {
    if (!problem_ || shape_name(problem_->shape()) != shape_name(shape)) {
      problem_.reset();  // free the old one before allocating the next
      problem_ = std::make_unique<GemmProblem>(shape, ProblemOptions{}, stream_);
    }
    return *problem_;
  }

 private:
  cudaStream_t stream_;
  std::unique_ptr<GemmProblem> problem_;
};

/// What all cases share.
struct Session {
  using Clock = std::chrono::steady_clock;
  Clock::time_point deadline = Clock::time_point::max();  // no case starts after it
  LaunchTimer timer;
  ProblemCache problems{timer.stream()};
  std::map<std::string, double> cublaslt_median_ms;  // by shape name
  int failures = 0;                                 // cases that hit a runtime error
  std::string broken;  // set when an error left the GPU unusable: later cases do not run
};

/// One benchmark: a step (or cuBLASLt when step is null) on one shape.
struct Case {
  Shape shape;
  const StepInfo* step = nullptr;
  bool fast_accumulation = false;  // fast accumulation (cuBLASLt, or a tensor-core step)
};

void set_counters(benchmark::State& state, const Session& session, const Case& c, const Timing& timing) {
  const double seconds = timing.median_ms * 1e-3;
  const double tflops = gemm_flops(c.shape.m, c.shape.n, c.shape.k) / seconds * 1e-12;
  state.counters["TFLOPS"] = tflops;
  state.counters["pct_of_peak"] = 100.0 * tflops / kPeakTflops;
  const auto cublaslt = session.cublaslt_median_ms.find(shape_name(c.shape));
  if (cublaslt != session.cublaslt_median_ms.end()) {
    state.counters["pct_of_cublaslt"] = 100.0 * cublaslt->second / timing.median_ms;
  }
  state.counters["GBps"] = gemm_min_bytes(c.shape, OutputType::kBF16) / seconds * 1e-9;
  state.counters["median_ms"] = timing.median_ms;
  state.counters["launches"] = static_cast<double>(timing.launch_ms.size());
  const int clock = current_sm_clock_mhz();  // right after the launches: shows throttling
  if (clock >= 0) state.counters["sm_clock_mhz"] = clock;
}

void run_case(benchmark::State& state, Session& session, const Case& c) {
  if (Session::Clock::now() > session.deadline) {
    state.SkipWithError("not run: the benchmark's --time_limit was reached");
    return;
  }
  if (!session.broken.empty()) {
    state.SkipWithError(("not run: an earlier case left the GPU unusable: " + session.broken).c_str());
    return;
  }
  try {
    GemmProblem& problem = session.problems.get(c.shape);
    const GemmArgs args = problem.args();
    Timing timing;
    Status status;
    if (c.step == nullptr) {
      const CublasLtGemm gemm(args, problem.a_scale_on_device(), problem.b_scale_on_device(), c.fast_accumulation);
      status = session.timer.time([&] { return gemm.launch(); }, kTiming, &timing);
    } else {
      GemmArgs step_args = args;
      step_args.fast_accumulation = c.fast_accumulation;
      status = session.timer.time([&] { return run_step(*c.step, step_args); }, kTiming, &timing);
    }
    if (!status.ok()) {  // the step (or cuBLASLt) does not take this problem
      state.SkipWithError(status.message.c_str());
      return;
    }
    if (c.step == nullptr && !c.fast_accumulation) session.cublaslt_median_ms[shape_name(c.shape)] = timing.median_ms;
    for (auto _ : state) state.SetIterationTime(timing.median_ms * 1e-3);
    set_counters(state, session, c, timing);
  } catch (const std::exception& e) {
    ++session.failures;
    cudaGetLastError();  // clears an error that does not outlive its call
    if (cudaDeviceSynchronize() != cudaSuccess) session.broken = e.what();  // one that does
    state.SkipWithError(e.what());
  }
}

/// Google Benchmark appends "/iterations:1/manual_time" to the name of every
/// case registered as above; this reporter drops it again, so that results
/// carry the project's names, `<step>/<M>x<N>x<K>`.
template <typename Reporter>
class ProjectNames : public Reporter {
 public:
  using Reporter::Reporter;
  void ReportRuns(const std::vector<benchmark::BenchmarkReporter::Run>& runs) override {
    std::vector<benchmark::BenchmarkReporter::Run> renamed = runs;
    for (auto& run : renamed) {
      run.run_name.iterations.clear();
      run.run_name.time_type.clear();
    }
    Reporter::ReportRuns(renamed);
  }
};

/// The value of a Google Benchmark flag given as --name=value, or "" if absent.
std::string flag_value(int argc, char** argv, const std::string& name) {
  const std::string prefix = "--" + name + "=";
  std::string value;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], prefix.c_str(), prefix.size()) == 0) value = argv[i] + prefix.size();
  }
  return value;
}

std::string case_name(const Case& c) {
  if (c.step != nullptr) return c.step->folder + (c.fast_accumulation ? "_fast/" : "/") + shape_name(c.shape);
  return std::string(c.fast_accumulation ? kCublasLtFastName : kCublasLtName) + "/" + shape_name(c.shape);
}

void register_cases(Session& session, const Options& options) {
  for (const Shape& shape : options.shapes) {
    std::vector<Case> cases = {{shape, nullptr, false}, {shape, nullptr, true}};
    for (const StepInfo* step : options.steps) {
      cases.push_back({shape, step, false});
      // Tensor-core steps also run without promotion: `<step>_fast/<shape>`.
      if (uses_tensor_cores(*step)) cases.push_back({shape, step, true});
    }
    for (const Case& c : cases) {
      benchmark::RegisterBenchmark(case_name(c).c_str(),
                                   [&session, c](benchmark::State& state) { run_case(state, session, c); })
          ->UseManualTime()
          ->Iterations(1)
          ->Unit(benchmark::kMillisecond);
    }
  }
}

int run(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
      print_usage();
      argv[i] = const_cast<char*>("--help");  // Google Benchmark prints its flags and exits
    }
  }
  // Google Benchmark takes its flags out of argv; which reporters to rename
  // through depends on two of them.
  const bool console_display = flag_value(argc, argv, "benchmark_format").empty() ||
                               flag_value(argc, argv, "benchmark_format") == "console";
  const bool json_file = !flag_value(argc, argv, "benchmark_out").empty() &&
                         (flag_value(argc, argv, "benchmark_out_format").empty() ||
                          flag_value(argc, argv, "benchmark_out_format") == "json");
  benchmark::Initialize(&argc, argv);
  Options options;
  if (!parse_options(argc, argv, &options)) return kExitUsage;
  std::string reason;
  if (!cuda_device_available(&reason)) {
    std::fprintf(stderr, "fp8gemm_bench: needs an NVIDIA GPU (%s). Nothing was measured.\n", reason.c_str());
    return kExitNoGpu;
  }
  Session session;
  if (options.time_limit_seconds > 0) {
    session.deadline = Session::Clock::now() + std::chrono::duration_cast<Session::Clock::duration>(
                                                   std::chrono::duration<double>(options.time_limit_seconds));
  }
  const Environment env = describe_environment();
  for (const auto& [key, value] : context_entries(env, session.timer, kTiming)) {
    benchmark::AddCustomContext(key, value);
  }
  benchmark::AddCustomContext("inputs", "random normal A and B quantized per tensor: " + describe(ProblemOptions{}));
  register_cases(session, options);
  // Null reporters: Google Benchmark's own, for the formats not renamed here.
  ProjectNames<benchmark::ConsoleReporter> console(isatty(STDOUT_FILENO) ? benchmark::ConsoleReporter::OO_ColorTabular
                                                                         : benchmark::ConsoleReporter::OO_Tabular);
  ProjectNames<benchmark::JSONReporter> json;
  benchmark::RunSpecifiedBenchmarks(console_display ? &console : nullptr, json_file ? &json : nullptr);
  benchmark::Shutdown();
  if (session.failures > 0) {
    std::fprintf(stderr, "fp8gemm_bench: %d case(s) hit a runtime error (see error_message in the results)\n",
                 session.failures);
    return kExitFailure;
  }
  return 0;
}

}  // namespace
}  // namespace fp8gemm::bench

int main(int argc, char** argv) {
  try {
    return fp8gemm::bench::run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fp8gemm_bench: %s\n", e.what());
    return 1;
  }
}
