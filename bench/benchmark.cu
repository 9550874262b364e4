// fp8gemm_bench — every registered step and cuBLASLt on a list of shapes,
// driven by Google Benchmark.
//
// Names: `<step folder>/<M>x<N>x<K>`, `cublaslt/<M>x<N>x<K>` (default
// accumulation) and `cublaslt_fast/<M>x<N>x<K>` (fast accumulation); steps on
// tensor cores also run with GemmArgs::fast_accumulation as
// `<step folder>_fast/<M>x<N>x<K>`. The cases of one shape run one after
// another on the same problem, cuBLASLt first, so that every step's
// pct_of_cublaslt compares with a measurement made seconds apart, in the same
// process, on the same numbers.
//
// Each Google Benchmark iteration is one launch with a cold L2, timed with
// device events (manual time); each case runs kRepetitions repetitions and
// Google Benchmark reports their aggregates, the median among them
// (bench/harness.h, CaseRunner).
//
// With --epilogue_variants the cases are instead the scale and epilogue
// variants (variant_cases()), named
// `<contender>/<M>x<N>x<K>/<scales>/<epilogue>/<out>` (variant_name()), with
// the unfused baseline (`unfused/...`, bench/unfused_epilogue.h) beside
// cuBLASLt and the steps.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <sstream>
#include <string>
#include <vector>

#include "bench/harness.h"
#include "common/api/registry.h"

namespace fp8gemm::bench {
namespace {

constexpr int kExitFailure = 1;  // a case hit a runtime error, or a step was refused
constexpr int kExitNoGpu = 3;
constexpr int kExitUsage = 4;

/// The shapes of --epilogue_variants: the ladder's, the large square, a
/// DeepSeek-V3 GEMM with a long K, and the decode shape.
std::vector<Shape> epilogue_variant_shapes() {
  return {kDefaultShape, {8192, 8192, 8192}, {4096, 7168, 16384}, kDecodeShape};
}

/// What the command line chose beyond Google Benchmark's own flags.
struct Options {
  std::vector<Shape> shapes = default_benchmark_shapes();
  bool shapes_given = false;           // --shapes replaced the list
  std::vector<const StepInfo*> steps;  // empty: all registered steps
  double time_limit_seconds = 0;       // 0: none
  bool list_cases = false;             // print the case names and exit (no GPU needed)
  bool epilogue_variants = false;      // the scale and epilogue variants instead of the plain cases
  bool split_k_variants = false;       // + each split-K step unsplit and in each reduction form
  std::vector<int> split_k_counts;     // + each split-K step at each of these slice counts, forced
};

void print_usage() {
  std::printf(
      "fp8gemm_bench: every registered step and cuBLASLt (default and fast accumulation) on a list of GEMM\n"
      "shapes: FP8 e4m3 A and B (random normal, per-tensor scales), BF16 D.\n\n"
      "Each iteration is one launch, the L2 flushed before it, timed with device events (manual time).\n"
      "Each case runs %d repetitions of at least %g s of launches; Google Benchmark reports their\n"
      "aggregates (mean, median, stddev, cv; the console shows the median). --benchmark_repetitions and\n"
      "--benchmark_min_time replace these two settings.\n\n"
      "Options besides Google Benchmark's own (listed below):\n"
      "  --shapes=MxNxK,...     replace the shape list (default: 4096^3, 8192^3, 1x2112x7168,\n"
      "                         16x2112x7168 and the 18 DeepSeek-V3 shapes)\n"
      "  --steps=01,02_...      run only these steps (number or folder name); cuBLASLt always runs\n"
      "                         (select cases by name with --benchmark_filter=REGEX)\n"
      "  --time_limit=SECONDS   start no case after this long: the rest are reported as skipped and\n"
      "                         the JSON file stays complete (default: no limit)\n"
      "  --list_cases           print the names of the cases that would run, one a line, and exit\n"
      "                         (needs no GPU)\n"
      "  --epilogue_variants    instead of the plain cases, the scale and epilogue variants: on\n"
      "                         4096^3, 8192^3, 4096x7168x16384 and 64x2112x7168 (or --shapes), scales\n"
      "                         {tensor, outer (per row of A and B), block (A 1x128, B 128x128)} x\n"
      "                         epilogue {none, bias_gelu (BF16 bias, GELU tanh form)} x D {bf16,\n"
      "                         e4m3}, for cuBLASLt, every step (a\n"
      "                         step that refuses a variant is reported skipped, with its message) and\n"
      "                         the unfused baseline (a step's plain GEMM into FP32, then the epilogue\n"
      "                         as a kernel of its own, timed together); names\n"
      "                         <contender>/<M>x<N>x<K>/<scales>/<epilogue>/<out>\n"
      "  --split_k_variants     also run each step that splits K unsplit (<step>_split1) and in each\n"
      "                         reduction form it offers, forced, at its own slice count\n"
      "                         (<step>_cluster, <step>_workspace): what splitting gains, and what\n"
      "                         each form costs\n"
      "  --split_k_counts=S,... also run each step that splits K with each of these slice counts\n"
      "                         forced (<step>_split<S>; S up to the step's maximum), in its own\n"
      "                         reduction form: whether the step's own count is the best\n\n"
      "Results as JSON: --benchmark_out=FILE --benchmark_out_format=json\n"
      "Exit status: 0 ok, 1 a case hit a runtime error or a step was refused, 3 no GPU, 4 bad usage.\n\n",
      kRepetitions, kMinTimeSeconds);
}

/// Takes --shapes, --steps and --time_limit out of what Google Benchmark
/// left; false (after saying why) on anything unknown or malformed.
bool parse_options(int argc, char** argv, Options* options) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    try {
      if (arg == "--list_cases") {
        options->list_cases = true;
      } else if (arg == "--epilogue_variants") {
        options->epilogue_variants = true;
      } else if (arg == "--split_k_variants") {
        options->split_k_variants = true;
      } else if (arg.rfind("--split_k_counts=", 0) == 0) {
        std::stringstream list(arg.substr(std::strlen("--split_k_counts=")));
        std::string count;
        while (std::getline(list, count, ',')) {
          char* end = nullptr;
          const long slices = std::strtol(count.c_str(), &end, 10);
          if (count.empty() || *end != '\0' || slices < 1 || slices > 64) {
            throw std::invalid_argument(arg + ": needs slice counts from 1 to 64, separated by commas");
          }
          auto& counts = options->split_k_counts;
          if (std::find(counts.begin(), counts.end(), slices) == counts.end())
            counts.push_back(static_cast<int>(slices));
        }
      } else if (arg.rfind("--shapes=", 0) == 0) {
        options->shapes = parse_shape_list(arg.substr(std::strlen("--shapes=")));
        options->shapes_given = true;
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
  if (options->epilogue_variants && !options->shapes_given) options->shapes = epilogue_variant_shapes();
  return true;
}

/// cuBLASLt in both modes first (every later case's pct_of_cublaslt refers
/// to the first), then each step, and each tensor-core step again with fast
/// accumulation; with --split_k_variants, a step that splits K also unsplit
/// and in each reduction form it offers, forced (the step itself chooses one);
/// with --split_k_counts, such a step at each count (up to its maximum).
std::vector<Contender> contenders_of(const Options& options) {
  std::vector<Contender> contenders = {{nullptr, false}, {nullptr, true}};
  for (const StepInfo* step : options.steps) {
    contenders.push_back({step, false});
    if (uses_tensor_cores(*step)) contenders.push_back({step, true});
    for (int slices : options.split_k_counts) {
      if (step->constraints.max_split_k <= 1 || slices > step->constraints.max_split_k) continue;
      Contender forced{step, false};
      forced.split_k = slices;
      contenders.push_back(forced);
    }
    if (!options.split_k_variants || step->constraints.max_split_k <= 1) continue;
    const auto& counts = options.split_k_counts;
    if (std::find(counts.begin(), counts.end(), 1) == counts.end()) {  // else there already
      Contender unsplit{step, false};
      unsplit.split_k = 1;
      contenders.push_back(unsplit);
    }
    const uint32_t forms = step->constraints.split_k_reductions;
    for (int r = 1; r < kNumSplitKReductions; ++r) {
      if ((forms >> r & 1u) == 0) continue;
      Contender form{step, false};
      form.split_k_reduction = static_cast<SplitKReduction>(r);
      contenders.push_back(form);
    }
  }
  return contenders;
}

/// The problems of --epilogue_variants: scales {tensor, outer (per row of A
/// and of B), block} x epilogue {none, bias_gelu} x D {bf16, e4m3}. The bias
/// is BF16, the type cuBLASLt takes beside every D of an FP8 GEMM.
std::vector<ProblemOptions> epilogue_variants() {
  std::vector<ProblemOptions> variants;
  const ScaleGranularity granularities[][2] = {{ScaleGranularity::kPerTensor, ScaleGranularity::kPerTensor},
                                               {ScaleGranularity::kPerRow, ScaleGranularity::kPerRow},
                                               {ScaleGranularity::kGroup1x128, ScaleGranularity::kBlock128x128}};
  for (const auto& scales : granularities) {
    for (bool bias_gelu : {false, true}) {
      for (OutputType out : {OutputType::kBF16, OutputType::kE4M3}) {
        ProblemOptions problem;
        problem.a_scale_granularity = scales[0];
        problem.b_scale_granularity = scales[1];
        problem.bias = bias_gelu;
        problem.bias_type = BiasType::kBF16;
        problem.activation = bias_gelu ? Activation::kGeluTanh : Activation::kNone;
        problem.d_type = out;
        variants.push_back(problem);
      }
    }
  }
  return variants;
}

/// The cases, in the order they run. Per shape (and, with
/// --epilogue_variants, per variant): contenders_of(), then the unfused
/// baseline for a variant. No case is checked against FP64 here, the
/// variants no more than the plain cases: `fp8gemm --check` checks one (with
/// --scales, --epilogue, --out for a variant), and the GPU tests own the
/// correctness of the steps.
std::vector<BenchCase> cases_of(const Options& options) {
  std::vector<BenchCase> cases;
  const std::vector<Contender> contenders = contenders_of(options);
  for (const Shape& shape : options.shapes) {
    if (!options.epilogue_variants) {
      for (const Contender& contender : contenders) cases.push_back({shape, ProblemOptions{}, contender, false});
      continue;
    }
    for (const ProblemOptions& problem : epilogue_variants()) {
      for (const Contender& contender : contenders) cases.push_back({shape, problem, contender, false, true});
      cases.push_back({shape, problem, Contender{nullptr, false, /*unfused=*/true}, false, true});
    }
  }
  return cases;
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
  const int refused = report_refused_steps("fp8gemm_bench");
  if (options.list_cases) {
    for (const BenchCase& c : cases_of(options)) std::printf("%s\n", case_name(c).c_str());
    return refused > 0 ? kExitFailure : 0;
  }
  std::string reason;
  if (!cuda_device_available(&reason)) {
    std::fprintf(stderr, "fp8gemm_bench: needs an NVIDIA GPU (%s). Nothing was measured.\n", reason.c_str());
    return kExitNoGpu;
  }
  CaseRunner runner(options.time_limit_seconds, /*print_checks=*/false);
  const Environment env = describe_environment();
  add_context(env, runner.timer(), measurement_description(repetitions, min_time_seconds));
  if (options.epilogue_variants) {
    benchmark::AddCustomContext(
        "inputs",
        "random normal A and B quantized per tensor (scales `tensor`), per row (`outer`), or A per 1x128 group "
        "and B per 128x128 block (`block`), BF16 bias from N(0, 1) (`bias_gelu`, with GELU's tanh form), D in BF16 or "
        "e4m3 with d_scale "
        "fp8_output_scale(K) (common/harness/problem.h) and d_amax; e4m3 inputs, seed 1");
    benchmark::AddCustomContext("unfused",
                                "the plain GEMM (FP32 D, scales applied) of the highest-numbered step that "
                                "computes it (named in the label), then the epilogue as a kernel of its "
                                "own (bench/unfused_epilogue.h), timed together");
  } else {
    benchmark::AddCustomContext("inputs", "random normal A and B quantized per tensor: " + describe(ProblemOptions{}));
  }
  for (const BenchCase& c : cases_of(options)) runner.register_case(c, repetitions, min_time_seconds);

  // The project's reporters for console and JSON; Google Benchmark's own
  // (null here) for the CSV format.
  ProjectReporter<benchmark::ConsoleReporter> console(
      /*medians_only=*/true, runner.longest_name(),
      isatty(STDOUT_FILENO) ? benchmark::ConsoleReporter::OO_ColorTabular : benchmark::ConsoleReporter::OO_Tabular);
  ProjectReporter<benchmark::JSONReporter> json_console(/*medians_only=*/false, runner.longest_name());
  ProjectReporter<benchmark::JSONReporter> json(/*medians_only=*/false, runner.longest_name());
  for (auto* reporter : {&json_console, &json}) reporter->notes_from(&runner);
  console.notes_from(&runner);
  benchmark::BenchmarkReporter* display = console_display ? static_cast<benchmark::BenchmarkReporter*>(&console)
                                          : json_display  ? &json_console
                                                          : nullptr;
  benchmark::RunSpecifiedBenchmarks(display, json_file ? &json : nullptr);
  benchmark::Shutdown();
  int status = 0;
  if (runner.runtime_failures() > 0) {
    std::fprintf(stderr,
                 "fp8gemm_bench: %d case(s) hit a runtime error (error_message, or the label of the "
                 "aggregates, in the results):\n",
                 runner.runtime_failures());
    for (const CaseOutcome& outcome : runner.outcomes()) {
      if (outcome.status.code == StatusCode::kRuntimeError) {
        std::fprintf(stderr, "  %s: %s\n", outcome.name.c_str(), outcome.status.message.c_str());
      }
    }
    status = kExitFailure;
  }
  if (refused > 0) {
    std::fprintf(stderr, "fp8gemm_bench: %d step(s) refused by the registry were not measured (see above)\n", refused);
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
    std::fprintf(stderr, "fp8gemm_bench: %s\n", e.what());
    return 1;
  }
}
