// fp8gemm — the project's main program.
//
//   fp8gemm                      every step and cuBLASLt on 4096^3: a table, and a
//                                JSON file in Google Benchmark's layout for bench/plot.py
//   fp8gemm --step 01 --m 1000 --n 17 --k 255 --check
//                                one step on any problem, checked against FP64
//   fp8gemm --list               the steps and what each accepts
//   fp8gemm --list=json          the same and each step's must-run cases, as JSON
//                                (committed as docs/steps.json; no GPU needed)
//
// Both modes run their cases through the benchmark's machinery
// (bench/harness.h: CaseRunner, ProjectReporter): Google Benchmark cases,
// one launch with a cold L2 per iteration, the same names and counters as
// fp8gemm_bench, plus the error against FP64 (norm_rel_error, max_abs_error,
// calc_diff) from the tests' oracle (common/check), and Google Benchmark's
// own JSONReporter for the results file.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/harness.h"
#include "common/api/registry.h"

#ifndef FP8GEMM_DEFAULT_JSON
#define FP8GEMM_DEFAULT_JSON "bench/results/local/ladder.json"
#endif

namespace fp8gemm::bench {
namespace {

constexpr int kExitFailure = 1;   // a check failed, the GPU reported an error, or a step was refused
constexpr int kExitRejected = 2;  // the step does not accept this problem
constexpr int kExitNoGpu = 3;
constexpr int kExitUsage = 4;

// -----------------------------------------------------------------------------
// Command line
// -----------------------------------------------------------------------------

struct CommandLine {
  bool help = false;
  bool list = false;
  bool list_json = false;  // --list=json
  std::string step;        // empty: the ladder (every step and cuBLASLt)
  Shape shape = kDefaultShape;
  ProblemOptions problem;
  bool check = false;
  bool fast_accumulation = false;
  int split_k = 0;                                             // --split-k
  SplitKReduction split_k_reduction = SplitKReduction::kAuto;  // --split-k-reduction
  std::string json_path = FP8GEMM_DEFAULT_JSON;
  bool json_given = false;  // --json was on the command line
};

void print_usage() {
  std::printf(
      "Usage:\n"
      "  fp8gemm [--json FILE]     every step and cuBLASLt on 4096^3: TFLOP/s, %% of cuBLASLt and error\n"
      "                            vs FP64; writes FILE (default %s)\n"
      "  fp8gemm --step S [options]   one step S (number or folder name, or cublaslt, cublaslt_fast,\n"
      "                            unfused: a step's plain GEMM into FP32, then the epilogue kernel);\n"
      "                            writes JSON only with --json FILE\n"
      "  fp8gemm --list            the registered steps and what each accepts\n"
      "  fp8gemm --list=json       the registry as JSON: each step's constraints, GPU and must-run\n"
      "                            cases (docs/steps.json is this output)\n\n"
      "Options (for one step, or to change the ladder's problem):\n"
      "  --m M --n N --k K         shape (default 4096 each)\n"
      "  --format F                FP8 format of A, and of B unless --b-format: e4m3 (default), e5m2,\n"
      "                            e4m3fnuz, e5m2fnuz\n"
      "  --b-format F              FP8 format of B\n"
      "  --out bf16|fp32|e4m3|e5m2 type of D (default bf16; FP8 with d_scale fp8_output_scale(K) and d_amax)\n"
      "  --scales tensor|outer|block  scales of A and B: per tensor (default), per row, or A per 1x128\n"
      "                            group and B per 128x128 block\n"
      "  --epilogue E              none (default), bias, gelu, bias_gelu, gelu_erf, bias_gelu_erf: a BF16\n"
      "                            bias from N(0, 1) (bias_fp32...: FP32), GELU in its tanh or erf form\n"
      "  --seed N                  seed of the random inputs (default 1)\n"
      "  --check                   compare with the FP64 reference (the ladder always does)\n"
      "  --fast-accum              tensor-core steps: no FP32 promotion (GemmArgs::fast_accumulation)\n"
      "  --split-k S               split-K steps: S slices of K (GemmArgs::split_k; default 0, the\n"
      "                            step's heuristic, which --check prints)\n"
      "  --split-k-reduction R     split-K steps: cluster or workspace (GemmArgs::split_k_reduction;\n"
      "                            default: the step's own)\n"
      "  --json FILE               write Google Benchmark's JSON of the run to FILE\n\n"
      "Timing is fp8gemm_bench's (Google Benchmark): one launch per iteration, the L2 flushed before\n"
      "it, device events around it; %d repetitions of at least %g s of launches; the median\n"
      "aggregate is the result. A check runs once, on the first launch, before the timing.\n\n"
      "Exit status: 0 ok; 1 check failed, GPU error, or a step refused by the registry (two step\n"
      "folders with one number: --list and the ladder fail, and say which); 2 step rejects the problem;\n"
      "3 no GPU; 4 bad usage.\n",
      FP8GEMM_DEFAULT_JSON, kRepetitions, kMinTimeSeconds);
}

bool parse_format(const std::string& name, Fp8Format* format) {
  for (int i = 0; i < kNumFp8Formats; ++i) {
    if (name == fp8_name(Fp8Format(i))) {
      *format = Fp8Format(i);
      return true;
    }
  }
  return false;
}

/// An epilogue as fp8gemm_bench names it (variant_name()): none, or `bias`
/// (`bias_fp32`) and / or `gelu` (`gelu_erf`), joined by '_'.
void parse_epilogue(const std::string& name, ProblemOptions* problem) {
  std::string rest = name == "none" ? "" : name;
  problem->bias = false;
  for (const char* bias : {"bias_fp32", "bias"}) {  // the longer first
    if (rest.rfind(bias, 0) != 0) continue;
    problem->bias = true;
    problem->bias_type = std::string(bias) == "bias" ? BiasType::kBF16 : BiasType::kFP32;
    rest = rest.substr(std::strlen(bias));
    if (!rest.empty() && rest[0] == '_') rest = rest.substr(1);
    break;
  }
  if (rest.empty()) problem->activation = Activation::kNone;
  else if (rest == "gelu") problem->activation = Activation::kGeluTanh;
  else if (rest == "gelu_erf") problem->activation = Activation::kGeluErf;
  else
    throw std::invalid_argument("--epilogue: none, bias, gelu, bias_gelu, gelu_erf, bias_gelu_erf, got '" + name + "'");
}

int64_t parse_integer(const std::string& option, const std::string& text, int64_t min) {
  size_t used = 0;
  long long value = 0;
  try {
    value = std::stoll(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || text.empty() || value < min) {
    throw std::invalid_argument(option + " needs an integer >= " + std::to_string(min) + ", got '" + text + "'");
  }
  return value;
}

/// Reads the command line into `cmd`; throws std::invalid_argument on a bad one.
/// Options take their value as the next argument or after '='.
void parse_command_line(int argc, char** argv, CommandLine* cmd) {
  bool b_format_given = false;
  for (int i = 1; i < argc; ++i) {
    std::string option = argv[i];
    std::string value;
    const bool has_inline_value = option.rfind("--", 0) == 0 && option.find('=') != std::string::npos;
    if (has_inline_value) {
      value = option.substr(option.find('=') + 1);
      option = option.substr(0, option.find('='));
    }
    auto next_value = [&]() {
      if (has_inline_value) return value;
      if (i + 1 >= argc) throw std::invalid_argument(option + " needs a value");
      return std::string(argv[++i]);
    };
    if (option == "--help" || option == "-h") cmd->help = true;
    else if (option == "--list") {
      cmd->list = true;
      if (has_inline_value && value != "json") {
        throw std::invalid_argument("--list takes no value, or =json; got '" + value + "'");
      }
      cmd->list_json = has_inline_value;
    } else if (option == "--check") cmd->check = true;
    else if (option == "--fast-accum") cmd->fast_accumulation = true;
    else if (option == "--split-k") cmd->split_k = static_cast<int>(parse_integer(option, next_value(), 0));
    else if (option == "--split-k-reduction") {
      const std::string name = next_value();
      if (name == "cluster") cmd->split_k_reduction = SplitKReduction::kCluster;
      else if (name == "workspace") cmd->split_k_reduction = SplitKReduction::kWorkspace;
      else throw std::invalid_argument("--split-k-reduction: cluster or workspace, got '" + name + "'");
    } else if (option == "--step") cmd->step = next_value();
    else if (option == "--m") cmd->shape.m = parse_integer(option, next_value(), 1);
    else if (option == "--n") cmd->shape.n = parse_integer(option, next_value(), 1);
    else if (option == "--k") cmd->shape.k = parse_integer(option, next_value(), 1);
    else if (option == "--seed") cmd->problem.seed = static_cast<uint64_t>(parse_integer(option, next_value(), 0));
    else if (option == "--json") {
      if (!has_inline_value && i + 1 >= argc) {
        throw std::invalid_argument("--json needs a file (the registry as JSON is --list=json)");
      }
      cmd->json_path = next_value();
      cmd->json_given = true;
    } else if (option == "--format" || option == "--b-format") {
      const std::string name = next_value();
      Fp8Format format;
      if (!parse_format(name, &format)) {
        throw std::invalid_argument(option + ": unknown format '" + name + "' (e4m3, e5m2, e4m3fnuz, e5m2fnuz)");
      }
      if (option == "--b-format") {
        cmd->problem.b_format = format;
        b_format_given = true;
      } else {
        cmd->problem.a_format = format;
        if (!b_format_given) cmd->problem.b_format = format;
      }
    } else if (option == "--out") {
      const std::string name = next_value();
      bool known = false;
      for (int t = 0; t < kNumOutputTypes; ++t) {
        if (name == output_name(OutputType(t))) {
          cmd->problem.d_type = OutputType(t);
          known = true;
        }
      }
      if (!known) throw std::invalid_argument("--out: bf16, fp32, e4m3 or e5m2, got '" + name + "'");
    } else if (option == "--scales") {
      const std::string name = next_value();
      using G = ScaleGranularity;
      if (name == "tensor") cmd->problem.a_scale_granularity = cmd->problem.b_scale_granularity = G::kPerTensor;
      else if (name == "outer") cmd->problem.a_scale_granularity = cmd->problem.b_scale_granularity = G::kPerRow;
      else if (name == "block") {
        cmd->problem.a_scale_granularity = G::kGroup1x128;
        cmd->problem.b_scale_granularity = G::kBlock128x128;
      } else {
        throw std::invalid_argument("--scales: tensor, outer or block, got '" + name + "'");
      }
    } else if (option == "--epilogue") {
      parse_epilogue(next_value(), &cmd->problem);
    } else {
      throw std::invalid_argument("unknown argument '" + std::string(argv[i]) + "' (fp8gemm --help)");
    }
  }
}

// -----------------------------------------------------------------------------
// Running cases through Google Benchmark
// -----------------------------------------------------------------------------

/// Gives Google Benchmark its flags: the program's name and, with a
/// `json_path`, the results file (its folder is made first).
void initialize_benchmark(char* program, const std::string& json_path) {
  static std::vector<std::string> flags;  // Google Benchmark may keep pointers into argv
  flags.clear();
  if (!json_path.empty()) {
    const std::filesystem::path file(json_path);
    if (file.has_parent_path()) std::filesystem::create_directories(file.parent_path());
    flags.push_back("--benchmark_out=" + json_path);
    flags.push_back("--benchmark_out_format=json");
  }
  static std::vector<char*> argv;
  argv.assign(1, program);
  for (std::string& flag : flags) argv.push_back(flag.data());
  argv.push_back(nullptr);
  int argc = static_cast<int>(argv.size()) - 1;
  benchmark::Initialize(&argc, argv.data());
}

/// Runs the registered cases: Google Benchmark's table on the console (the
/// median rows), its JSON in the file given to initialize_benchmark().
/// Returns the median aggregates as reported.
std::vector<ReportedMedian> run_cases(const CaseRunner& runner, bool json_file) {
  std::vector<ReportedMedian> medians;
  ProjectReporter<benchmark::ConsoleReporter> console(
      /*medians_only=*/true, runner.longest_name(),
      isatty(STDOUT_FILENO) ? benchmark::ConsoleReporter::OO_ColorTabular : benchmark::ConsoleReporter::OO_Tabular);
  console.collect_medians(&medians);
  console.notes_from(&runner);
  ProjectReporter<benchmark::JSONReporter> json(/*medians_only=*/false, runner.longest_name());
  json.notes_from(&runner);
  benchmark::RunSpecifiedBenchmarks(&console, json_file ? &json : nullptr);
  benchmark::Shutdown();
  std::fflush(stdout);
  return medians;
}

const ReportedMedian* find_median(const std::vector<ReportedMedian>& medians, const std::string& name) {
  for (const ReportedMedian& median : medians) {
    if (median.name == name) return &median;
  }
  return nullptr;
}

double counter_or(const ReportedMedian& median, const char* name, double fallback) {
  const auto it = median.counters.find(name);
  return it == median.counters.end() ? fallback : it->second;
}

/// The context every results file of fp8gemm records.
void add_program_context(const CaseRunner& runner, const CommandLine& cmd) {
  add_context(describe_environment(), runner.timer(), measurement_description(kRepetitions, kMinTimeSeconds));
  const char* inputs = is_plain(cmd.problem) ? "random normal A and B quantized per tensor: "
                                             : "random normal A and B (and bias), quantized on the GPU: ";
  benchmark::AddCustomContext("inputs", inputs + describe(cmd.problem));
  benchmark::AddCustomContext("error_rows", describe_checked_rows(cmd.shape, cmd.problem.seed));
}

// -----------------------------------------------------------------------------
// The three modes
// -----------------------------------------------------------------------------

/// The registry: a table, or with `json` the JSON of steps_json() (docs/steps.json).
int list_steps(bool json) {
  if (json) {
    std::fputs(steps_json(registered_steps(), refused_steps()).c_str(), stdout);
    std::fflush(stdout);
    return report_refused_steps("fp8gemm") > 0 ? kExitFailure : 0;
  }
  std::vector<std::vector<std::string>> rows = {{"step", "what it is", "what it accepts"}};
  for (const StepInfo& step : registered_steps()) {
    std::string accepts = describe_constraints(step.constraints);
    const int cc = step.required_compute_capability;
    if (cc != 0) accepts += "; GPU of compute capability " + std::to_string(cc / 10) + "." + std::to_string(cc % 10);
    accepts += "; must run " + std::to_string(step.must_run.size()) + " cases";
    rows.push_back({step.folder, step.title, accepts});
  }
  rows.push_back({kCublasLtName, "cuBLASLt FP8 with its default accumulation (the baseline)",
                  "formats e4m3, e5m2 (not both e5m2); 16-byte aligned rows"});
  rows.push_back({kCublasLtFastName, "cuBLASLt FP8 with fast accumulation", "as cublaslt"});
  rows.push_back({kUnfusedName, "the highest-numbered step's plain GEMM into FP32, then the epilogue kernel",
                  "what that step's plain GEMM accepts"});
  size_t widths[2] = {0, 0};
  for (const auto& row : rows) {
    for (int column = 0; column < 2; ++column) widths[column] = std::max(widths[column], row[column].size());
  }
  for (const auto& row : rows) {
    std::printf("%-*s  %-*s  %s\n", int(widths[0]), row[0].c_str(), int(widths[1]), row[1].c_str(), row[2].c_str());
  }
  std::fflush(stdout);
  return report_refused_steps("fp8gemm") > 0 ? kExitFailure : 0;
}

/// Every cuBLASLt mode and step on one problem, each checked against FP64:
/// Google Benchmark's table, a summary, and the JSON file.
int run_ladder(const CommandLine& cmd, char* program) {
  const int refused = report_refused_steps("fp8gemm");
  initialize_benchmark(program, cmd.json_path);
  CaseRunner runner(/*time_limit_seconds=*/0, /*print_checks=*/true);
  add_program_context(runner, cmd);
  std::vector<Contender> contenders = {{nullptr, false}, {nullptr, true}};
  for (const StepInfo& step : registered_steps()) contenders.push_back({&step, cmd.fast_accumulation});
  for (const Contender& contender : contenders) {
    runner.register_case({cmd.shape, cmd.problem, contender, true, !is_plain(cmd.problem)});
  }
  std::printf(
      "fp8gemm: every step and cuBLASLt on %s, %s%s; each checked against FP64 on its first launch,\n"
      "then timed as fp8gemm_bench times (one launch per iteration, L2 flushed; median of %d repetitions)\n\n",
      shape_name(cmd.shape).c_str(), describe(cmd.problem).c_str(),
      cmd.fast_accumulation ? ", tensor-core steps with fast accumulation" : "", kRepetitions);
  std::fflush(stdout);
  const std::vector<ReportedMedian> medians = run_cases(runner, /*json_file=*/true);

  // The summary, from what Google Benchmark reported.
  std::printf("\n%-24s %9s %11s %10s %13s %12s  %s\n", "step", "TFLOP/s", "% cuBLASLt", "median ms", "norm-rel err",
              "max abs err", "check");
  bool all_passed = true;
  for (const CaseOutcome& outcome : runner.outcomes()) {
    std::string contender, shape;
    split_case_name(outcome.name, &contender, &shape);
    const ReportedMedian* median = find_median(medians, outcome.name);
    if (!outcome.measured || median == nullptr) {
      const std::string why = !outcome.skipped.empty() ? outcome.skipped : outcome.status.message;
      std::printf("%-24s not run: %s\n", contender.c_str(), why.c_str());
      const bool refusal = !outcome.status.ok() && outcome.status.code != StatusCode::kRuntimeError;
      if (!refusal) all_passed = false;  // a failed check or a runtime error
      continue;
    }
    const double pct = counter_or(*median, "pct_of_cublaslt", -1.0);
    char pct_text[32] = "-";
    if (pct >= 0) std::snprintf(pct_text, sizeof(pct_text), "%.1f", pct);
    const ErrorMetrics& e = outcome.check.check.result.metrics;
    std::printf("%-24s %9.1f %11s %10.4f %13.2e %12.2e  %s\n", contender.c_str(), counter_or(*median, "TFLOPS", 0.0),
                pct_text, median->seconds * 1e3, e.norm_relative_error, e.max_abs_error,
                outcome.checked ? verdict(outcome.check).c_str() : "-");
    if (!outcome.skipped.empty()) std::printf("%-24s then failed: %s\n", "", outcome.skipped.c_str());
    all_passed = all_passed && (!outcome.checked || outcome.check.passed) && outcome.skipped.empty();
  }
  std::printf("\nWrote %s (plot it: python3 bench/plot.py %s --out-dir DIR)\n", cmd.json_path.c_str(),
              cmd.json_path.c_str());
  if (refused > 0) std::fprintf(stderr, "fp8gemm: %d step(s) refused by the registry were not run\n", refused);
  return all_passed && refused == 0 ? 0 : kExitFailure;
}

/// One step (or cuBLASLt mode) on the problem of the command line.
int run_one(const CommandLine& cmd, char* program) {
  const bool unfused = cmd.step == kUnfusedName;
  const bool is_cublaslt = cmd.step == kCublasLtName || cmd.step == kCublasLtFastName;
  const StepInfo* step = is_cublaslt || unfused ? nullptr : find_step(cmd.step);  // found: run() checked
  report_refused_steps("fp8gemm");
  const Contender contender{step, cmd.fast_accumulation || cmd.step == kCublasLtFastName, unfused, cmd.split_k,
                            cmd.split_k_reduction};
  const std::string json_path = cmd.json_given ? cmd.json_path : "";
  initialize_benchmark(program, json_path);
  CaseRunner runner(/*time_limit_seconds=*/0, /*print_checks=*/true, /*detailed_checks=*/true);
  add_program_context(runner, cmd);
  runner.register_case({cmd.shape, cmd.problem, contender, cmd.check, !is_plain(cmd.problem)});
  std::printf("%s on %s, %s%s\n", contender_name(contender).c_str(), shape_name(cmd.shape).c_str(),
              describe(cmd.problem).c_str(), cmd.fast_accumulation ? ", fast accumulation" : "");
  if (step != nullptr && step->describe_launch != nullptr) {
    GemmArgs args;  // what the step's launch plan depends on: the shape, the options, the epilogue
    args.m = cmd.shape.m;
    args.n = cmd.shape.n;
    args.k = cmd.shape.k;
    // The driver's buffers are tight (common/harness/problem.cu): a plan that
    // copies misaligned rows of A or B, or stores D's another way, says so.
    args.lda = args.ldb = cmd.shape.k;
    args.ldd = cmd.shape.n;
    args.fast_accumulation = cmd.fast_accumulation;
    args.split_k = cmd.split_k;
    args.split_k_reduction = cmd.split_k_reduction;
    args.a_format = cmd.problem.a_format;
    args.b_format = cmd.problem.b_format;
    args.d_type = cmd.problem.d_type;
    args.a_scale_granularity = cmd.problem.a_scale_granularity;
    args.b_scale_granularity = cmd.problem.b_scale_granularity;
    args.activation = cmd.problem.activation;
    // A plan asks whether there is a bias (step 12's wide tile takes none),
    // never reads it: any pointer that is not null says so.
    static const float kBiasPresent = 0.0f;
    if (cmd.problem.bias) {
      args.bias = &kBiasPresent;
      args.bias_type = cmd.problem.bias_type;
    }
    std::printf("launch: %s\n", step->describe_launch(args).c_str());
  }
  std::fflush(stdout);
  const std::vector<ReportedMedian> medians = run_cases(runner, !json_path.empty());

  const CaseOutcome& outcome = runner.outcomes().front();
  if (!outcome.status.ok()) {
    std::printf("%s: %s\n", status_code_name(outcome.status.code), outcome.status.message.c_str());
    return outcome.status.code == StatusCode::kRuntimeError ? kExitFailure : kExitRejected;
  }
  const ReportedMedian* median = find_median(medians, outcome.name);
  if (!outcome.measured || median == nullptr) {  // a failed check (printed above)
    std::printf("not timed: %s\n", outcome.skipped.c_str());
    return kExitFailure;
  }
  std::printf("time: %.4f ms (median of %d repetitions; L2 flushed before each launch) = %.2f TFLOP/s\n",
              median->seconds * 1e3, kRepetitions, counter_or(*median, "TFLOPS", 0.0));
  if (!json_path.empty()) std::printf("Wrote %s\n", json_path.c_str());
  return 0;
}

int run(int argc, char** argv) {
  CommandLine cmd;
  try {
    parse_command_line(argc, argv, &cmd);
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "fp8gemm: %s\n", e.what());
    return kExitUsage;
  }
  if (cmd.help) {
    print_usage();
    return 0;
  }
  if (cmd.list) return list_steps(cmd.list_json);
  const bool is_cublaslt = cmd.step == kCublasLtName || cmd.step == kCublasLtFastName;
  if (!cmd.step.empty() && !is_cublaslt && cmd.step != kUnfusedName && find_step(cmd.step) == nullptr) {
    std::fprintf(stderr, "fp8gemm: no step '%s' (fp8gemm --list shows them)\n", cmd.step.c_str());
    return kExitUsage;
  }
  std::string reason;
  if (!cuda_device_available(&reason)) {
    std::fprintf(stderr, "fp8gemm: needs an NVIDIA GPU (%s). Nothing was run; fp8gemm --list works without one.\n",
                 reason.c_str());
    return kExitNoGpu;
  }
  return cmd.step.empty() ? run_ladder(cmd, argv[0]) : run_one(cmd, argv[0]);
}

}  // namespace
}  // namespace fp8gemm::bench

int main(int argc, char** argv) {
  try {
    return fp8gemm::bench::run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fp8gemm: %s\n", e.what());
    return fp8gemm::bench::kExitFailure;
  }
}
