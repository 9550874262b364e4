// fp8gemm — the project's main program.
//
//   fp8gemm                      every step and cuBLASLt on 4096^3: a table, and a
//                                JSON file in Google Benchmark's layout for bench/plot.py
//   fp8gemm --step 01 --m 1000 --n 17 --k 255 --check
//                                one step on any problem, checked against FP64
//   fp8gemm --list               the steps and what each accepts
//
// Timing and inputs are those of the benchmark (bench/harness.h); the check
// is the tests' oracle (common/check/reference.h).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <unistd.h>
#include <vector>

#include "bench/harness.h"
#include "common/check/check.h"
#include "common/api/registry.h"

#ifndef FP8GEMM_DEFAULT_JSON
#define FP8GEMM_DEFAULT_JSON "bench/results/local/ladder.json"
#endif

namespace fp8gemm::bench {
namespace {

constexpr int kExitFailure = 1;   // a check failed, or the GPU reported an error
constexpr int kExitRejected = 2;  // the step does not accept this problem
constexpr int kExitNoGpu = 3;
constexpr int kExitUsage = 4;

constexpr TimingOptions kTiming{};  // the benchmark's: numbers are comparable

// -----------------------------------------------------------------------------
// Command line
// -----------------------------------------------------------------------------

struct CommandLine {
  bool help = false;
  bool list = false;
  std::string step;  // empty: the ladder (every step and cuBLASLt)
  Shape shape = kDefaultShape;
  ProblemOptions problem;
  bool check = false;
  bool fast_accumulation = false;
  std::string json_path = FP8GEMM_DEFAULT_JSON;
};

void print_usage() {
  std::printf(
      "Usage:\n"
      "  fp8gemm [--json FILE]     every step and cuBLASLt on 4096^3: TFLOP/s, %% of cuBLASLt and error\n"
      "                            vs FP64; writes FILE (default %s)\n"
      "  fp8gemm --step S [options]   one step S (number or folder name, or cublaslt, cublaslt_fast)\n"
      "  fp8gemm --list            the registered steps and what each accepts\n\n"
      "Options (for one step, or to change the ladder's problem):\n"
      "  --m M --n N --k K         shape (default 4096 each)\n"
      "  --format F                FP8 format of A, and of B unless --b-format: e4m3 (default), e5m2,\n"
      "                            e4m3fnuz, e5m2fnuz\n"
      "  --b-format F              FP8 format of B\n"
      "  --out bf16|fp32           type of D (default bf16)\n"
      "  --seed N                  seed of the random inputs (default 1)\n"
      "  --check                   compare with the FP64 reference (the ladder always does)\n"
      "  --fast-accum              tensor-core steps: no FP32 promotion (GemmArgs::fast_accumulation)\n\n"
      "Exit status: 0 ok, 1 check failed or GPU error, 2 step rejects the problem, 3 no GPU, 4 bad usage.\n",
      FP8GEMM_DEFAULT_JSON);
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
    else if (option == "--list") cmd->list = true;
    else if (option == "--check") cmd->check = true;
    else if (option == "--fast-accum") cmd->fast_accumulation = true;
    else if (option == "--step") cmd->step = next_value();
    else if (option == "--m") cmd->shape.m = parse_integer(option, next_value(), 1);
    else if (option == "--n") cmd->shape.n = parse_integer(option, next_value(), 1);
    else if (option == "--k") cmd->shape.k = parse_integer(option, next_value(), 1);
    else if (option == "--seed") cmd->problem.seed = static_cast<uint64_t>(parse_integer(option, next_value(), 0));
    else if (option == "--json") cmd->json_path = next_value();
    else if (option == "--format" || option == "--b-format") {
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
      if (name == "bf16") cmd->problem.d_type = OutputType::kBF16;
      else if (name == "fp32") cmd->problem.d_type = OutputType::kFP32;
      else throw std::invalid_argument("--out: bf16 or fp32, got '" + name + "'");
    } else {
      throw std::invalid_argument("unknown argument '" + std::string(argv[i]) + "' (fp8gemm --help)");
    }
  }
}

// -----------------------------------------------------------------------------
// What is run: a step or a cuBLASLt mode
// -----------------------------------------------------------------------------

/// Something that computes the problem's D: its name, how it sums (for the
/// tolerance) and how to launch it once.
struct Contender {
  std::string name;
  Accumulation accumulation;
  std::function<Status()> launch;
};

Contender step_contender(const StepInfo& step, const GemmProblem& problem, bool fast_accumulation) {
  GemmArgs args = problem.args();
  args.fast_accumulation = fast_accumulation;
  return {step.folder, accumulation_of(step, fast_accumulation), [&step, args] { return run_step(step, args); }};
}

/// cuBLASLt in one mode; `gemms` keeps the set-up object alive.
Contender cublaslt_contender(const GemmProblem& problem, bool fast_accumulation,
                             std::vector<std::unique_ptr<CublasLtGemm>>* gemms) {
  gemms->push_back(std::make_unique<CublasLtGemm>(problem.args(), problem.a_scale_on_device(),
                                                  problem.b_scale_on_device(), fast_accumulation));
  const CublasLtGemm* gemm = gemms->back().get();
  return {fast_accumulation ? kCublasLtFastName : kCublasLtName,
          fast_accumulation ? Accumulation::kTensorCoreFast : Accumulation::kTensorCorePromoted,
          [gemm] { return gemm->launch(); }};
}

// -----------------------------------------------------------------------------
// The check against FP64
// -----------------------------------------------------------------------------

/// R and S of the checked rows (common/check/check.h), computed once per problem.
ReferenceProduct compute_reference(const GemmProblem& problem) {
  const Shape& s = problem.shape();
  const std::vector<int64_t> rows = rows_to_check(s.m, s.n, s.k, problem.options().seed);
  return reference_of_rows(problem.download_a(), problem.download_b(), rows);
}

/// "on all 1000 rows of D" or "on 256 of 4096 rows of D (sampled)".
std::string describe_rows(const ReferenceProduct& reference, int64_t m) {
  const int64_t count = static_cast<int64_t>(reference.rows.size());
  if (count == m) return "all " + std::to_string(m) + " rows of D";
  return std::to_string(count) + " of " + std::to_string(m) + " rows of D (sampled; all columns)";
}

struct CheckResult {
  OutputCheck check;         // on the checked rows
  std::vector<float> d_rows;  // the checked rows of D, for describe_check()
  int64_t unwritten = 0;     // NaN or infinite elements anywhere in D: D was poisoned with NaN first
  bool passed = false;
};

/// Compares the problem's D (after the stream finishes) with the reference.
CheckResult check_output(const GemmProblem& problem, const ReferenceProduct& reference, Accumulation accumulation) {
  const Shape& s = problem.shape();
  const std::vector<float> d = problem.download_d();
  CheckResult result;
  result.unwritten = std::count_if(d.begin(), d.end(), [](float x) { return !std::isfinite(x); });
  result.d_rows.reserve(reference.rows.size() * s.n);
  for (int64_t row : reference.rows) {
    result.d_rows.insert(result.d_rows.end(), d.begin() + row * s.n, d.begin() + (row + 1) * s.n);
  }
  result.check = check_rows(result.d_rows, reference, problem.options().d_type, s.k, accumulation);
  result.passed = result.check.passed && result.unwritten == 0;
  return result;
}

// -----------------------------------------------------------------------------
// Running one contender
// -----------------------------------------------------------------------------

struct Outcome {
  std::string name;
  Status status;  // not ok: the contender does not take the problem, or failed
  bool checked = false;
  CheckResult check;
  Timing timing;
};

/// One launch on a poisoned D, checked if a reference is given; then the timing.
Outcome run_contender(const Contender& contender, const GemmProblem& problem, const ReferenceProduct* reference,
                      LaunchTimer& timer) {
  Outcome outcome;
  outcome.name = contender.name;
  problem.poison_d();
  outcome.status = contender.launch();
  if (!outcome.status.ok()) return outcome;
  if (reference != nullptr) {
    outcome.check = check_output(problem, *reference, contender.accumulation);
    outcome.checked = true;
  }
  outcome.status = timer.time(contender.launch, kTiming, &outcome.timing);
  return outcome;
}

double tflops(const Shape& s, const Timing& timing) { return gemm_flops(s.m, s.n, s.k) / (timing.median_ms * 1e9); }

std::string format_number(const char* format, double value) {
  char text[64];
  std::snprintf(text, sizeof(text), format, value);
  return text;
}

/// "PASS", or "FAIL: <which rule>".
std::string verdict(const CheckResult& check) {
  if (check.passed) return "PASS";
  if (check.unwritten > 0) return "FAIL: " + std::to_string(check.unwritten) + " elements of D NaN or infinite";
  return "FAIL: " + check.check.result.failure;
}

// -----------------------------------------------------------------------------
// Results file: Google Benchmark's JSON layout
// -----------------------------------------------------------------------------

std::string json_string(const std::string& text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += char(c);
    } else if (c < 0x20) {  // control characters as \u00XX
      char escaped[8];
      std::snprintf(escaped, sizeof(escaped), "\\u%04x", static_cast<unsigned>(c));
      out += escaped;
    } else {
      out += char(c);
    }
  }
  return out + "\"";
}

std::string json_number(double value) {
  return std::isfinite(value) ? format_number("%.9g", value) : "null";  // JSON has no NaN
}

std::string host_name() {
  char name[256] = {};
  return gethostname(name, sizeof(name) - 1) == 0 ? name : "unknown";
}

std::string now_iso8601() {
  const std::time_t now = std::time(nullptr);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%S%z", std::localtime(&now));
  return text;
}

/// Writes {"context": {...}, "benchmarks": [...]} as Google Benchmark does,
/// with the error columns added, so that bench/plot.py reads both programs' files.
void write_json(const std::string& path, const std::vector<std::pair<std::string, std::string>>& context,
                const Shape& shape, OutputType d_type, const std::vector<Outcome>& outcomes, double cublaslt_ms) {
  const std::filesystem::path file(path);
  if (file.has_parent_path()) std::filesystem::create_directories(file.parent_path());
  std::ofstream out(file);
  if (!out) throw std::runtime_error("cannot write " + path);
  out << "{\n  \"context\": {\n";
  for (size_t i = 0; i < context.size(); ++i) {
    out << "    " << json_string(context[i].first) << ": " << json_string(context[i].second)
        << (i + 1 < context.size() ? ",\n" : "\n");
  }
  out << "  },\n  \"benchmarks\": [\n";
  for (size_t i = 0; i < outcomes.size(); ++i) {
    const Outcome& o = outcomes[i];
    const std::string name = o.name + "/" + shape_name(shape);
    out << "    {\n      \"name\": " << json_string(name) << ",\n      \"run_name\": " << json_string(name)
        << ",\n      \"run_type\": \"iteration\",\n      \"repetitions\": 1,\n      \"repetition_index\": 0,\n"
        << "      \"threads\": 1,\n      \"iterations\": 1,\n";
    if (!o.status.ok()) {
      out << "      \"error_occurred\": true,\n      \"error_message\": " << json_string(o.status.message) << "\n    }";
    } else {
      const double t = tflops(shape, o.timing);
      out << "      \"real_time\": " << json_number(o.timing.median_ms) << ",\n      \"time_unit\": \"ms\",\n"
          << "      \"TFLOPS\": " << json_number(t) << ",\n      \"pct_of_peak\": " << json_number(100 * t / kPeakTflops)
          << ",\n";
      if (cublaslt_ms > 0) out << "      \"pct_of_cublaslt\": " << json_number(100 * cublaslt_ms / o.timing.median_ms) << ",\n";
      out << "      \"GBps\": " << json_number(gemm_min_bytes(shape, d_type) / (o.timing.median_ms * 1e6))
          << ",\n      \"median_ms\": " << json_number(o.timing.median_ms)
          << ",\n      \"launches\": " << o.timing.launch_ms.size();
      if (o.checked) {
        const ErrorMetrics& e = o.check.check.result.metrics;
        out << ",\n      \"norm_rel_error\": " << json_number(e.norm_relative_error)
            << ",\n      \"max_abs_error\": " << json_number(e.max_abs_error)
            << ",\n      \"calc_diff\": " << json_number(e.calc_diff)
            << ",\n      \"check\": " << json_string(verdict(o.check));
      }
      out << "\n    }";
    }
    out << (i + 1 < outcomes.size() ? ",\n" : "\n");
  }
  out << "  ]\n}\n";
  if (!out) throw std::runtime_error("error while writing " + path);
}

// -----------------------------------------------------------------------------
// The three modes
// -----------------------------------------------------------------------------

int list_steps() {
  std::vector<std::vector<std::string>> rows = {{"step", "what it is", "what it accepts"}};
  for (const StepInfo& step : registered_steps()) {
    rows.push_back({step.folder, step.title, describe_constraints(step.constraints)});
  }
  rows.push_back({kCublasLtName, "cuBLASLt FP8 with its default accumulation (the baseline)",
                  "formats e4m3, e5m2 (not both e5m2); 16-byte aligned rows"});
  rows.push_back({kCublasLtFastName, "cuBLASLt FP8 with fast accumulation", "as cublaslt"});
  size_t widths[2] = {0, 0};
  for (const auto& row : rows) {
    for (int column = 0; column < 2; ++column) widths[column] = std::max(widths[column], row[column].size());
  }
  for (const auto& row : rows) {
    std::printf("%-*s  %-*s  %s\n", int(widths[0]), row[0].c_str(), int(widths[1]), row[1].c_str(), row[2].c_str());
  }
  return 0;
}

void print_environment(const Environment& env) {
  std::printf("GPU: %s (%d SMs, compute capability %s), SM clock %d MHz max, %.0f MHz measured\n", env.gpu.c_str(),
              env.sm_count, env.compute_capability.c_str(), env.sm_clock_max_mhz, env.sm_clock_measured_mhz);
  std::printf("Software: driver %s, runtime %s, cuBLASLt %s, commit %s\n", env.driver.c_str(), env.runtime.c_str(),
              env.cublaslt.c_str(), env.git_commit.c_str());
}

/// Every cuBLASLt mode and step on one problem: the table and the JSON file.
int run_ladder(const CommandLine& cmd) {
  LaunchTimer timer;
  const Environment env = describe_environment();
  std::printf("fp8gemm: every step and cuBLASLt on %s, %s\n", shape_name(cmd.shape).c_str(),
              describe(cmd.problem).c_str());
  print_environment(env);
  const GemmProblem problem(cmd.shape, cmd.problem, timer.stream());
  std::printf("Computing the FP64 reference on the CPU...\n");
  std::fflush(stdout);
  const ReferenceProduct reference = compute_reference(problem);

  std::vector<std::unique_ptr<CublasLtGemm>> gemms;
  std::vector<Contender> contenders = {cublaslt_contender(problem, false, &gemms),
                                       cublaslt_contender(problem, true, &gemms)};
  for (const StepInfo& step : registered_steps()) {
    contenders.push_back(step_contender(step, problem, cmd.fast_accumulation));
  }

  std::printf("\nTime: median launch, L2 flushed before each (%d to %d launches per row).\n", kTiming.min_launches,
              kTiming.max_launches);
  std::printf("Error: against the FP64 reference on %s; check: within the tolerance of reference.h.\n\n",
              describe_rows(reference, cmd.shape.m).c_str());
  std::printf("%-20s %9s %11s %10s %13s %12s  %s\n", "step", "TFLOP/s", "% cuBLASLt", "median ms", "norm-rel err",
              "max abs err", "check");
  std::vector<Outcome> outcomes;
  double cublaslt_ms = 0.0;  // cuBLASLt's (default accumulation) median, once measured
  bool all_passed = true;
  for (const Contender& contender : contenders) {
    const Outcome& o = outcomes.emplace_back(run_contender(contender, problem, &reference, timer));
    if (!o.status.ok()) {
      std::printf("%-20s not run: %s\n", o.name.c_str(), o.status.message.c_str());
      if (o.status.code == StatusCode::kRuntimeError) all_passed = false;
      continue;
    }
    if (o.name == kCublasLtName) cublaslt_ms = o.timing.median_ms;
    const std::string pct = cublaslt_ms > 0 ? format_number("%.1f", 100 * cublaslt_ms / o.timing.median_ms) : "-";
    const ErrorMetrics& e = o.check.check.result.metrics;
    std::printf("%-20s %9.1f %11s %10.4f %13.2e %12.2e  %s\n", o.name.c_str(), tflops(cmd.shape, o.timing),
                pct.c_str(), o.timing.median_ms, e.norm_relative_error, e.max_abs_error, verdict(o.check).c_str());
    std::fflush(stdout);
    all_passed = all_passed && o.check.passed;
  }

  auto context = context_entries(env, timer, kTiming);
  context.insert(context.begin(), {{"date", now_iso8601()}, {"host_name", host_name()}, {"executable", "fp8gemm"}});
  context.push_back({"inputs", "random normal A and B quantized per tensor: " + describe(cmd.problem)});
  context.push_back({"error_rows", describe_rows(reference, cmd.shape.m)});
  write_json(cmd.json_path, context, cmd.shape, cmd.problem.d_type, outcomes, cublaslt_ms);
  std::printf("\nWrote %s (plot it: python3 bench/plot.py %s --out-dir DIR)\n", cmd.json_path.c_str(),
              cmd.json_path.c_str());
  return all_passed ? 0 : kExitFailure;
}

/// One step (or cuBLASLt mode) on the problem of the command line.
int run_one(const CommandLine& cmd) {
  const bool is_cublaslt = cmd.step == kCublasLtName || cmd.step == kCublasLtFastName;
  const StepInfo* step = is_cublaslt ? nullptr : find_step(cmd.step);
  if (!is_cublaslt && step == nullptr) {
    std::fprintf(stderr, "fp8gemm: no step '%s' (fp8gemm --list shows them)\n", cmd.step.c_str());
    return kExitUsage;
  }
  LaunchTimer timer;
  const GemmProblem problem(cmd.shape, cmd.problem, timer.stream());
  std::vector<std::unique_ptr<CublasLtGemm>> gemms;
  const Contender contender =
      is_cublaslt ? cublaslt_contender(problem, cmd.fast_accumulation || cmd.step == kCublasLtFastName, &gemms)
                  : step_contender(*step, problem, cmd.fast_accumulation);
  std::printf("%s on %s, %s%s\n", contender.name.c_str(), shape_name(cmd.shape).c_str(), describe(cmd.problem).c_str(),
              cmd.fast_accumulation ? ", fast accumulation" : "");

  // A first launch says whether the step takes the problem at all, before
  // the CPU spends time on the reference.
  Status status = contender.launch();
  std::unique_ptr<ReferenceProduct> reference;
  Outcome o;
  if (status.ok()) {
    if (cmd.check) reference = std::make_unique<ReferenceProduct>(compute_reference(problem));
    o = run_contender(contender, problem, reference.get(), timer);
    status = o.status;
  }
  if (!status.ok()) {
    std::printf("%s: %s\n", status_code_name(status.code), status.message.c_str());
    return status.code == StatusCode::kRuntimeError ? kExitFailure : kExitRejected;
  }
  std::printf("time: %.4f ms (median of %zu launches, L2 flushed before each) = %.2f TFLOP/s\n", o.timing.median_ms,
              o.timing.launch_ms.size(), tflops(cmd.shape, o.timing));
  if (!o.checked) return 0;
  const ErrorMetrics& e = o.check.check.result.metrics;
  std::printf("check against FP64 on %s:\n", describe_rows(*reference, cmd.shape.m).c_str());
  std::printf("  max abs %.3e, norm-relative %.3e, calc_diff %.3e, elements over their bound %lld, "
              "NaN/inf anywhere in D %lld\n",
              e.max_abs_error, e.norm_relative_error, e.calc_diff,
              static_cast<long long>(o.check.check.result.elements_over_bound), static_cast<long long>(o.check.unwritten));
  std::printf("%s\n", verdict(o.check).c_str());
  return o.check.passed ? 0 : kExitFailure;
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
  if (cmd.list) return list_steps();
  std::string reason;
  if (!cuda_device_available(&reason)) {
    std::fprintf(stderr, "fp8gemm: needs an NVIDIA GPU (%s). Nothing was run; fp8gemm --list works without one.\n",
                 reason.c_str());
    return kExitNoGpu;
  }
  return cmd.step.empty() ? run_ladder(cmd) : run_one(cmd);
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
