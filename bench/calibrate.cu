// fp8gemm_calibrate — how far correct kernels land from the FP64 reference:
// the measurements behind the calibrated bounds of the tolerance
// (docs/tolerances.md, "The calibrated bounds").
//
// For every K of a grid, every seed and every pair of formats, one random
// problem of M = N = --size (A and B from N(0, 1), quantized per tensor, as in
// the tests) is multiplied by every registered step (the tensor-core steps
// with and without promotion) and by cuBLASLt in both modes, with BF16 and
// with FP32 output. Each output is compared with the FP64 reference on every
// element (common/check: measure_statistics) and written to the JSON file as
// one run:
//
//   contender, accumulation, a_format, b_format, output, m, n, k, seed,
//   elements, norm_relative_error, output_rounding_norm, excess_norm,
//   gain_error, element_ratio, passed (the verdict of the tolerance in force
//   when the program was built)
//
// bench/make_calibration.py turns the largest values per accumulation,
// output and K into common/check/tolerance_calibration.inc.
//
// Usage: fp8gemm_calibrate [--json FILE] [--size M] [--seeds S] [--k K,K,...]
#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/harness.h"
#include "common/api/json.h"
#include "common/api/registry.h"

namespace fp8gemm::bench {
namespace {

constexpr int kExitFailure = 1;
constexpr int kExitNoGpu = 3;
constexpr int kExitUsage = 4;

// K from one product to twice the longest K of the tests (16384).
const std::vector<int64_t> kDefaultKs = {1,   2,    4,    8,    16,   32,   64,    128,  256,
                                         512, 1024, 2048, 4096, 7168, 8192, 16384, 32768};

struct Options {
  std::string json_path = "tolerance_calibration.json";
  int64_t size = 512;
  int seeds = 3;
  std::vector<int64_t> ks = kDefaultKs;
};

struct FormatPair {
  Fp8Format a, b;
};
const FormatPair kFormatPairs[] = {{Fp8Format::kE4M3, Fp8Format::kE4M3},
                                   {Fp8Format::kE5M2, Fp8Format::kE5M2},
                                   {Fp8Format::kE4M3, Fp8Format::kE5M2}};

bool parse_options(int argc, char** argv, Options* o) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--json" && has_value) {
      o->json_path = argv[++i];
    } else if (arg == "--size" && has_value) {
      o->size = std::atoll(argv[++i]);
    } else if (arg == "--seeds" && has_value) {
      o->seeds = std::atoi(argv[++i]);
    } else if (arg == "--k" && has_value) {
      o->ks.clear();
      std::stringstream list(argv[++i]);
      for (std::string item; std::getline(list, item, ',');) o->ks.push_back(std::atoll(item.c_str()));
    } else {
      return false;
    }
  }
  if (o->size < 1 || o->seeds < 1 || o->ks.empty()) return false;
  for (int64_t k : o->ks) {
    if (k < 1) return false;
  }
  return true;
}

// One output measured against the reference.
struct Run {
  std::string contender;
  Accumulation accumulation;
  FormatPair formats;
  OutputType output;
  int64_t m, n, k;
  int seed;
  ToleranceCheck check;
};

std::string run_json(const Run& r) {
  std::ostringstream out;
  out.precision(6);
  const ErrorStatistics& st = r.check.statistics;
  out << "    {\"contender\": " << json_string(r.contender)
      << ", \"accumulation\": " << json_string(accumulation_name(r.accumulation))
      << ", \"a_format\": " << json_string(fp8_name(r.formats.a))
      << ", \"b_format\": " << json_string(fp8_name(r.formats.b))
      << ", \"output\": " << json_string(output_name(r.output)) << ", \"m\": " << r.m << ", \"n\": " << r.n
      << ", \"k\": " << r.k << ", \"seed\": " << r.seed << ", \"elements\": " << r.check.metrics.elements
      << ", \"norm_relative_error\": " << r.check.metrics.norm_relative_error
      << ", \"output_rounding_norm\": " << st.output_rounding_norm << ", \"excess_norm\": " << st.excess_norm
      << ", \"gain_error\": " << st.gain_error << ", \"element_ratio\": " << st.element_ratio
      << ", \"passed\": " << (r.check.passed ? "true" : "false") << "}";
  return out.str();
}

// Runs one contender on the problem; false (and why) when it refuses it.
bool run_contender(const GemmProblem& problem, const StepInfo* step, bool fast, std::string* why) {
  GemmArgs args = problem.args();
  args.fast_accumulation = fast;
  problem.poison_d();
  Status status;
  if (step != nullptr) {
    status = run_step(*step, args);
  } else {
    CublasLtGemm gemm(args, problem.a_scale_on_device(), problem.b_scale_on_device(), fast);
    status = gemm.status().ok() ? gemm.launch() : gemm.status();
  }
  if (status.code == StatusCode::kNotSupported) {
    *why = status.message;
    return false;
  }
  if (!status.ok()) throw std::runtime_error(std::string(status_code_name(status.code)) + ": " + status.message);
  FP8GEMM_CUDA_CHECK(cudaStreamSynchronize(args.stream));
  return true;
}

int run(const Options& o) {
  int device_count = 0;
  if (cudaGetDeviceCount(&device_count) != cudaSuccess || device_count == 0) {
    std::fprintf(stderr, "fp8gemm_calibrate: no usable CUDA device\n");
    return kExitNoGpu;
  }
  const Environment env = describe_environment();
  cudaStream_t stream = nullptr;
  FP8GEMM_CUDA_CHECK(cudaStreamCreate(&stream));

  // Every contender: the steps (tensor-core ones twice) and cuBLASLt's two modes.
  std::vector<Contender> contenders;
  for (const StepInfo& step : registered_steps()) {
    contenders.push_back({&step, false});
    if (uses_tensor_cores(step)) contenders.push_back({&step, true});
  }
  contenders.push_back({nullptr, false});
  contenders.push_back({nullptr, true});

  std::vector<Run> runs;
  int failed = 0;
  for (int64_t k : o.ks) {
    for (const FormatPair& formats : kFormatPairs) {
      for (int seed = 1; seed <= o.seeds; ++seed) {
        const Shape shape{o.size, o.size, k};
        ReferenceProduct reference;
        bool have_reference = false;
        for (OutputType output : {OutputType::kFP32, OutputType::kBF16}) {
          const ProblemOptions options{formats.a, formats.b, output, static_cast<uint64_t>(seed)};
          const GemmProblem problem(shape, options, stream);
          if (!have_reference) {  // the inputs do not depend on the output type
            reference = compute_reference(problem);
            have_reference = true;
          }
          for (const Contender& contender : contenders) {
            std::string why;
            if (!run_contender(problem, contender.step, contender.fast_accumulation, &why)) continue;
            const Accumulation accumulation = contender_accumulation(contender);
            const CheckResult result = check_output(problem, reference, accumulation);
            Run r{contender_name(contender), accumulation, formats, output, shape.m, shape.n, shape.k, seed,
                  result.check.result};
            if (!result.passed) {
              ++failed;
              std::printf("FAIL %s %s: %s\n", r.contender.c_str(), describe(options).c_str(),
                          describe_check(result.check, result.d_rows, reference).c_str());
            }
            runs.push_back(r);
          }
        }
        std::printf("K = %lld, %s x %s, seed %d: %zu runs so far\n", static_cast<long long>(k), fp8_name(formats.a),
                    fp8_name(formats.b), seed, runs.size());
        std::fflush(stdout);
      }
    }
  }
  FP8GEMM_CUDA_CHECK(cudaStreamDestroy(stream));

  std::ofstream out(o.json_path);
  out << "{\n  \"context\": {\"program\": \"fp8gemm_calibrate\", \"gpu\": " << json_string(env.gpu)
      << ", \"git_commit\": " << json_string(env.git_commit) << ", \"driver\": " << json_string(env.driver)
      << ", \"cublaslt\": " << json_string(env.cublaslt) << ", \"size\": " << o.size << ", \"seeds\": " << o.seeds
      << ", \"inputs\": \"A and B from N(0, 1), quantized per tensor\"},\n  \"runs\": [\n";
  for (size_t i = 0; i < runs.size(); ++i) out << run_json(runs[i]) << (i + 1 < runs.size() ? ",\n" : "\n");
  out << "  ]\n}\n";
  out.close();
  if (!out) {
    std::fprintf(stderr, "fp8gemm_calibrate: cannot write %s\n", o.json_path.c_str());
    return kExitFailure;
  }
  std::printf("%zu runs written to %s; %d failed the tolerance in force\n", runs.size(), o.json_path.c_str(), failed);
  return 0;
}

}  // namespace
}  // namespace fp8gemm::bench

int main(int argc, char** argv) {
  fp8gemm::bench::Options options;
  if (!fp8gemm::bench::parse_options(argc, argv, &options)) {
    std::fprintf(stderr, "Usage: fp8gemm_calibrate [--json FILE] [--size M] [--seeds S] [--k K,K,...]\n");
    return fp8gemm::bench::kExitUsage;
  }
  try {
    return fp8gemm::bench::run(options);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fp8gemm_calibrate: %s\n", e.what());
    return fp8gemm::bench::kExitFailure;
  }
}
