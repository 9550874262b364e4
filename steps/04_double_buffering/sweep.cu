// sweep_04 — times step 04's kernel with other tile shapes (BM, BN, BK, TM, TN)
// on the shapes of the chapter, to choose DefaultTile and DecodeTile.
//
//   sweep_04 [results.json]
//
// For each tile shape and each problem (4096^3 and 64 x 2112 x 7168, e4m3,
// BF16 out, the benchmark's GemmProblem): 3 warm-up launches, then 20 timed
// launches with the benchmark's LaunchTimer (L2 flushed before each, device
// events around the launch alone); the median is reported. Every shape sums k
// in the same order, so every shape must give bit-identical D: the program
// checks that against the first shape, and the first shape against the FP64
// reference on sampled rows. Prints a table and writes the results as JSON
// (default sweep_04.json).
#include "double_buffering.cuh"  // this folder's kernel and its launch_band<Tile>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "common/api/cuda_check.h"
#include "common/check/check.h"
#include "common/harness/problem.h"
#include "common/harness/timer.h"

namespace fp8gemm {
namespace {

// Exactly 3 warm-up launches and 20 timed ones (the budget never ends them early).
constexpr TimingOptions kTiming{/*warmup_seconds=*/1e9, /*max_warmup_launches=*/3,
                                /*budget_seconds=*/0.0, /*min_launches=*/20, /*max_launches=*/20};

constexpr Shape kProblems[] = {{4096, 4096, 4096}, {64, 2112, 7168}};

struct Result {
  std::string tile;
  int bm, bn, bk, tm, tn, threads;
  size_t shared_bytes;
  int registers;
  size_t local_bytes;  // spills show up here
  Shape problem;
  double median_ms;
  double tflops;
  int64_t mismatches;  // elements of D off the FP64 reference (first shape) or off the first shape's D
};

/// Whether D passes the project's check (common/check/check.h): the
/// checked rows against FP64 under the tolerance of FP32 accumulation.
bool matches_reference(const GemmProblem& problem, const std::vector<float>& d) {
  const Shape& shape = problem.shape();
  const std::vector<int64_t> rows = rows_to_check(shape.m, shape.n, shape.k, problem.options().seed);
  const ReferenceProduct reference = reference_of_rows(problem.download_a(), problem.download_b(), rows);
  std::vector<float> d_rows;
  for (int64_t row : rows) d_rows.insert(d_rows.end(), d.begin() + row * shape.n, d.begin() + (row + 1) * shape.n);
  const OutputCheck check = check_rows(d_rows, reference, problem.options().d_type, shape.k, Accumulation::kFp32);
  if (!check.passed) std::printf("%s\n", describe_check(check, d_rows, reference).c_str());
  return check.passed;
}

/// Times tile shape Tile on `problem` with the step's own launch of a band
/// (launch_band, for_each_row_band), of the one kernel the sweep times, e4m3 x
/// e4m3 with 16-byte row loads: the step's launch_with_tile<Tile> would
/// compile all 32 format and row variants for every tile shape, which took
/// the project's build minutes. Checks D against `first_d` (the first shape's),
/// or against FP64 when it is empty.
template <typename Tile>
Result time_tile(GemmProblem& problem, LaunchTimer& timer, const std::vector<float>& first_d) {
  cudaFuncAttributes attributes{};
  FP8GEMM_CUDA_CHECK(
      cudaFuncGetAttributes(&attributes, double_buffering_kernel<Tile, Fp8Format::kE4M3, Fp8Format::kE4M3, true>));

  Result r;
  r.tile = std::to_string(Tile::BM) + "x" + std::to_string(Tile::BN) + "x" + std::to_string(Tile::BK) + "/" +
           std::to_string(Tile::TM) + "x" + std::to_string(Tile::TN);
  r.bm = Tile::BM, r.bn = Tile::BN, r.bk = Tile::BK, r.tm = Tile::TM, r.tn = Tile::TN, r.threads = Tile::kThreads;
  r.shared_bytes = shared_bytes<Tile>();
  r.registers = attributes.numRegs;
  r.local_bytes = attributes.localSizeBytes;
  r.problem = problem.shape();

  const GemmArgs args = problem.args();
  if (args.a_format != Fp8Format::kE4M3 || args.b_format != Fp8Format::kE4M3 ||
      !operand_rows_aligned(args, kVectorBytes)) {
    throw std::runtime_error("the sweep times e4m3 x e4m3 with 16-byte aligned rows only");
  }
  problem.poison_d();  // NaN: unwritten elements show
  const auto launch = [&] {
    return for_each_row_band(args, kMaxGridY * Tile::BM, [](const GemmArgs& band) {
      return launch_band<Tile>(double_buffering_kernel<Tile, Fp8Format::kE4M3, Fp8Format::kE4M3, true>, band);
    });
  };
  Timing timing;
  const Status status = timer.time(launch, kTiming, &timing);
  if (!status.ok()) throw std::runtime_error(r.tile + ": " + status.message);
  r.median_ms = timing.median_ms;
  r.tflops = gemm_flops(args.m, args.n, args.k) / (r.median_ms * 1e-3) / 1e12;

  const std::vector<float> d = problem.download_d();
  r.mismatches = 0;
  if (first_d.empty()) {
    r.mismatches = matches_reference(problem, d) ? 0 : 1;
  } else {
    for (size_t i = 0; i < d.size(); ++i) r.mismatches += d[i] != first_d[i];  // NaN counts too
  }
  return r;
}

template <typename... Tiles>
void sweep(GemmProblem& problem, LaunchTimer& timer, std::vector<Result>* results) {
  std::vector<float> first_d;
  auto one = [&](const Result& r) {
    std::printf("%-16s %6lldx%5lldx%5lld %5d thr %6zu B smem %4d regs %4zu B local %9.3f ms %8.2f TFLOP/s %s\n",
                r.tile.c_str(), (long long)r.problem.m, (long long)r.problem.n, (long long)r.problem.k, r.threads,
                r.shared_bytes, r.registers, r.local_bytes, r.median_ms, r.tflops,
                r.mismatches == 0 ? "ok" : ("MISMATCHES: " + std::to_string(r.mismatches)).c_str());
    std::fflush(stdout);
    results->push_back(r);
    if (first_d.empty()) first_d = problem.download_d();
  };
  (one(time_tile<Tiles>(problem, timer, first_d)), ...);
}

void write_json(const std::string& path, const std::vector<Result>& results, const cudaDeviceProp& prop) {
  std::ofstream out(path);
  out << "{\n  \"gpu\": \"" << prop.name
      << "\",\n  \"dtype\": \"e4m3 x e4m3 -> bf16\",\n  \"timed_launches\": " << kTiming.max_launches
      << ",\n  \"results\": [\n";
  for (size_t i = 0; i < results.size(); ++i) {
    const Result& r = results[i];
    out << "    {\"tile\": \"" << r.tile << "\", \"bm\": " << r.bm << ", \"bn\": " << r.bn << ", \"bk\": " << r.bk
        << ", \"tm\": " << r.tm << ", \"tn\": " << r.tn << ", \"threads\": " << r.threads
        << ", \"shared_bytes\": " << r.shared_bytes << ", \"registers\": " << r.registers
        << ", \"local_bytes\": " << r.local_bytes << ", \"m\": " << r.problem.m << ", \"n\": " << r.problem.n
        << ", \"k\": " << r.problem.k << ", \"median_ms\": " << r.median_ms << ", \"tflops\": " << r.tflops
        << ", \"mismatches\": " << r.mismatches << "}" << (i + 1 < results.size() ? "," : "") << "\n";
  }
  out << "  ]\n}\n";
  if (!out) throw std::runtime_error("cannot write " + path);
}

}  // namespace
}  // namespace fp8gemm

int main(int argc, char** argv) {
  using namespace fp8gemm;
  const std::string path = argc > 1 ? argv[1] : "sweep_04.json";
  std::string reason;
  if (!cuda_device_available(&reason)) {
    std::fprintf(stderr, "sweep_04: %s\n", reason.c_str());
    return 3;
  }
  cudaDeviceProp prop{};
  FP8GEMM_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("%s, %d SMs, L2 %d MiB\n", prop.name, prop.multiProcessorCount, prop.l2CacheSize >> 20);
  LaunchTimer timer;

  std::vector<Result> results;
  bool all_ok = true;
  for (const Shape& p : kProblems) {
    GemmProblem problem(p, ProblemOptions{}, timer.stream());  // e4m3 x e4m3 -> bf16
    // The first shape (the first guess) is checked against FP64, the others against it.
    sweep<TileShape<128, 128, 16, 8, 8>,  //
          TileShape<128, 128, 32, 8, 8>,  //
          TileShape<128, 64, 32, 8, 8>,   //
          TileShape<64, 128, 32, 8, 8>,   //
          TileShape<64, 64, 16, 8, 8>,    //
          TileShape<64, 64, 32, 8, 4>,    //
          TileShape<64, 64, 32, 4, 4>>(problem, timer, &results);
  }
  for (const Result& r : results) all_ok = all_ok && r.mismatches == 0;
  write_json(path, results, prop);
  std::printf("wrote %s\n", path.c_str());
  for (const Shape& p : kProblems) {
    const Result* best = nullptr;
    for (const Result& r : results) {
      const bool same_problem = r.problem.m == p.m && r.problem.n == p.n && r.problem.k == p.k;
      if (same_problem && (best == nullptr || r.tflops > best->tflops)) best = &r;
    }
    std::printf("best at %lldx%lldx%lld: %s, %.2f TFLOP/s\n", (long long)p.m, (long long)p.n, (long long)p.k,
                best->tile.c_str(), best->tflops);
  }
  return all_ok ? 0 : 1;
}
