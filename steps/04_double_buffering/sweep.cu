// sweep_04 — times step 04's kernel with other tile shapes (BM, BN, BK, TM, TN)
// on the shapes of the chapter, to choose DefaultTile.
//
//   sweep_04 [results.json]
//
// For each tile shape and each problem (4096^3 and 64 x 2112 x 7168, e4m3,
// BF16 out): 3 warm-up launches, then 20 timed launches with cudaEvents, each
// after a write of 2 x L2 bytes so that no launch finds A or B in L2; the
// median is reported. Every shape sums k in the same order, so every shape
// must give bit-identical D: the program checks that against the first shape,
// and the first shape against an FP64 dot product on sampled elements.
// Prints a table and writes the results as JSON (default sweep_04.json).
#define FP8GEMM_SWEEP  // the step file without its registration
#include "steps/04_double_buffering/double_buffering.cu"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "common/cuda_check.h"

namespace fp8gemm {
namespace {

constexpr int kWarmupLaunches = 3;
constexpr int kTimedLaunches = 20;
constexpr int kSampledElements = 256;

struct Problem {
  int64_t m, n, k;
};
constexpr Problem kProblems[] = {{4096, 4096, 4096}, {64, 2112, 7168}};

struct Result {
  std::string tile;
  int bm, bn, bk, tm, tn, threads;
  size_t shared_bytes;
  int registers;
  size_t local_bytes;  // spills show up here
  Problem problem;
  double median_ms;
  double tflops;
  int64_t mismatches;  // elements of D that differ from the first tile shape's
};

/// The device buffers of one problem, filled with random finite e4m3 codes.
struct Operands {
  Problem problem;
  DeviceBuffer<uint8_t> a, b;
  DeviceBuffer<uint16_t> d;
  std::vector<uint8_t> host_a, host_b;

  explicit Operands(Problem p)
      : problem(p), a(p.m * p.k), b(p.n * p.k), d(p.m * p.n), host_a(p.m * p.k), host_b(p.n * p.k) {
    std::mt19937 rng(1234);
    // Magnitudes 2^-3 .. 2^3 with random mantissas and signs: no NaN, no overflow.
    std::uniform_int_distribution<int> byte(0, 255);
    auto code = [&] { return static_cast<uint8_t>((byte(rng) & 0x80) | (0x20 + (byte(rng) % 0x30))); };
    for (auto& x : host_a) x = code();
    for (auto& x : host_b) x = code();
    FP8GEMM_CUDA_CHECK(cudaMemcpy(a.get(), host_a.data(), a.bytes(), cudaMemcpyHostToDevice));
    FP8GEMM_CUDA_CHECK(cudaMemcpy(b.get(), host_b.data(), b.bytes(), cudaMemcpyHostToDevice));
  }

  GemmArgs args() const {
    GemmArgs g;
    g.m = problem.m;
    g.n = problem.n;
    g.k = problem.k;
    g.a = a.get();
    g.lda = problem.k;
    g.b = b.get();
    g.ldb = problem.k;
    g.d = d.get();
    g.ldd = problem.n;
    g.d_type = OutputType::kBF16;
    return g;
  }
};

/// Launches the e4m3 x e4m3, 16-byte-row kernel of tile shape Tile.
template <typename Tile>
void launch(const GemmArgs& args) {
  auto kernel = double_buffering_kernel<Tile, Fp8Format::kE4M3, Fp8Format::kE4M3, true>;
  constexpr size_t kSharedBytes = shared_bytes<Tile>();
  const dim3 grid(static_cast<unsigned>((args.n + Tile::BN - 1) / Tile::BN),
                  static_cast<unsigned>((args.m + Tile::BM - 1) / Tile::BM));
  kernel<<<grid, Tile::kThreads, kSharedBytes, args.stream>>>(args);
}

template <typename Tile>
Result time_tile(Operands& ops, const std::vector<uint16_t>& reference_d, DeviceBuffer<uint8_t>& l2_flush,
                 cudaEvent_t start, cudaEvent_t stop) {
  auto kernel = double_buffering_kernel<Tile, Fp8Format::kE4M3, Fp8Format::kE4M3, true>;
  constexpr size_t kSharedBytes = shared_bytes<Tile>();
  FP8GEMM_CUDA_CHECK(
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(kSharedBytes)));
  cudaFuncAttributes attributes{};
  FP8GEMM_CUDA_CHECK(cudaFuncGetAttributes(&attributes, kernel));

  Result r;
  r.tile = std::to_string(Tile::BM) + "x" + std::to_string(Tile::BN) + "x" + std::to_string(Tile::BK) + "/" +
           std::to_string(Tile::TM) + "x" + std::to_string(Tile::TN);
  r.bm = Tile::BM, r.bn = Tile::BN, r.bk = Tile::BK, r.tm = Tile::TM, r.tn = Tile::TN, r.threads = Tile::kThreads;
  r.shared_bytes = kSharedBytes;
  r.registers = attributes.numRegs;
  r.local_bytes = attributes.localSizeBytes;
  r.problem = ops.problem;

  const GemmArgs args = ops.args();
  FP8GEMM_CUDA_CHECK(cudaMemset(ops.d.get(), 0xFF, ops.d.bytes()));  // NaN: unwritten elements show
  for (int i = 0; i < kWarmupLaunches; ++i) launch<Tile>(args);
  FP8GEMM_CUDA_CHECK(cudaGetLastError());
  std::vector<float> ms;
  for (int i = 0; i < kTimedLaunches; ++i) {
    FP8GEMM_CUDA_CHECK(cudaMemsetAsync(l2_flush.get(), i & 0xFF, l2_flush.bytes()));
    FP8GEMM_CUDA_CHECK(cudaEventRecord(start));
    launch<Tile>(args);
    FP8GEMM_CUDA_CHECK(cudaEventRecord(stop));
    FP8GEMM_CUDA_CHECK(cudaEventSynchronize(stop));
    float t = 0;
    FP8GEMM_CUDA_CHECK(cudaEventElapsedTime(&t, start, stop));
    ms.push_back(t);
  }
  FP8GEMM_CUDA_CHECK(cudaGetLastError());
  std::sort(ms.begin(), ms.end());
  r.median_ms = 0.5 * (ms[(ms.size() - 1) / 2] + ms[ms.size() / 2]);
  r.tflops = gemm_flops(args.m, args.n, args.k) / (r.median_ms * 1e-3) / 1e12;

  std::vector<uint16_t> d(ops.d.size());
  FP8GEMM_CUDA_CHECK(cudaMemcpy(d.data(), ops.d.get(), ops.d.bytes(), cudaMemcpyDeviceToHost));
  r.mismatches = 0;
  if (reference_d.empty()) {
    // The first shape: compare sampled elements with an FP64 dot product.
    std::mt19937 rng(99);
    for (int s = 0; s < kSampledElements; ++s) {
      const int64_t m = rng() % args.m, n = rng() % args.n;
      double exact = 0.0, magnitude = 0.0;
      for (int64_t k = 0; k < args.k; ++k) {
        const double term = double(fp8_to_float<Fp8Format::kE4M3>(ops.host_a[m * args.k + k])) *
                            double(fp8_to_float<Fp8Format::kE4M3>(ops.host_b[n * args.k + k]));
        exact += term;
        magnitude += std::abs(term);
      }
      const double got = bf16_bits_to_float(d[m * args.n + n]);
      // BF16 rounding (2^-8 relative) plus FP32 summation error (far below
      // 2^-16 of the sum of |terms|); one missing term is ~2^4 off.
      const double tolerance = std::abs(exact) * 0x1p-8 + magnitude * 0x1p-16;
      if (!(std::abs(got - exact) <= tolerance)) ++r.mismatches;
    }
  } else {
    for (size_t i = 0; i < d.size(); ++i) r.mismatches += d[i] != reference_d[i];
  }
  return r;
}

template <typename... Tiles>
void sweep(Operands& ops, DeviceBuffer<uint8_t>& l2_flush, std::vector<Result>* results) {
  cudaEvent_t start, stop;
  FP8GEMM_CUDA_CHECK(cudaEventCreate(&start));
  FP8GEMM_CUDA_CHECK(cudaEventCreate(&stop));
  std::vector<uint16_t> reference_d;
  auto one = [&](Result r) {
    std::printf("%-16s %6lldx%5lldx%5lld %5d thr %6zu B smem %4d regs %4zu B local %9.3f ms %8.2f TFLOP/s %s\n",
                r.tile.c_str(), (long long)r.problem.m, (long long)r.problem.n, (long long)r.problem.k, r.threads,
                r.shared_bytes, r.registers, r.local_bytes, r.median_ms, r.tflops,
                r.mismatches == 0 ? "ok" : ("MISMATCHES: " + std::to_string(r.mismatches)).c_str());
    std::fflush(stdout);
    results->push_back(r);
    if (reference_d.empty()) {
      reference_d.resize(ops.d.size());
      FP8GEMM_CUDA_CHECK(cudaMemcpy(reference_d.data(), ops.d.get(), ops.d.bytes(), cudaMemcpyDeviceToHost));
    }
  };
  (one(time_tile<Tiles>(ops, reference_d, l2_flush, start, stop)), ...);
  FP8GEMM_CUDA_CHECK(cudaEventDestroy(start));
  FP8GEMM_CUDA_CHECK(cudaEventDestroy(stop));
}

void write_json(const std::string& path, const std::vector<Result>& results, const cudaDeviceProp& prop) {
  std::ofstream out(path);
  out << "{\n  \"gpu\": \"" << prop.name << "\",\n  \"dtype\": \"e4m3 x e4m3 -> bf16\",\n  \"timed_launches\": "
      << kTimedLaunches << ",\n  \"results\": [\n";
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
  DeviceBuffer<uint8_t> l2_flush(2 * static_cast<size_t>(prop.l2CacheSize));

  std::vector<Result> results;
  bool all_ok = true;
  for (const Problem& p : kProblems) {
    Operands ops(p);
    // The first shape is DefaultTile: the others are checked against it.
    sweep<DefaultTile,                    //
          TileShape<128, 128, 32, 8, 8>,  //
          TileShape<128, 64, 32, 8, 8>,   //
          TileShape<64, 128, 32, 8, 8>,   //
          TileShape<64, 64, 16, 8, 8>,    //
          TileShape<64, 64, 32, 8, 4>,    //
          TileShape<64, 64, 32, 4, 4>>(ops, l2_flush, &results);
  }
  for (const Result& r : results) all_ok = all_ok && r.mismatches == 0;
  write_json(path, results, prop);
  std::printf("wrote %s\n", path.c_str());
  for (const Problem& p : kProblems) {
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
