// Runs one GEMM through the installed package, as a user's program would:
// the last registered step (or the one named on the command line) on
// 64 x 2112 x 7168, e4m3 A and B of small integers, FP32 D. Every product
// and every partial sum is an integer below 2^24, so D is exact whatever
// the order of the additions: it must equal the integer product bit for
// bit. Exits 0 when it does, 1 when it does not or the step fails, and 77
// (skipped, with the reason) when there is no CUDA GPU to run on.
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "common/api/registry.h"
#include "common/fp8/fp8.h"

namespace {

constexpr int kSkipped = 77;

bool check(cudaError_t err, const char* what) {
  if (err == cudaSuccess) return true;
  std::fprintf(stderr, "run_gemm: %s: %s\n", what, cudaGetErrorString(err));
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace fp8gemm;
  const std::vector<StepInfo>& steps = registered_steps();
  if (steps.empty()) return 1;
  const StepInfo* step = argc > 1 ? find_step(argv[1]) : &steps.back();
  if (step == nullptr) {
    std::fprintf(stderr, "run_gemm: no step '%s'\n", argv[1]);
    return 1;
  }
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("run_gemm: skipped: no CUDA GPU to run %s on\n", step->folder.c_str());
    return kSkipped;
  }

  // A[m][k] and B[n][k] in {-2, ..., 2}: exact in e4m3, and |D| <= 4 K = 28672.
  const int64_t m = 64, n = 2112, k = 7168;
  std::vector<uint8_t> a(m * k), b(n * k);
  std::vector<int> a_int(m * k), b_int(n * k);
  for (int64_t i = 0; i < m * k; ++i) a_int[i] = static_cast<int>((i * 7 + i / k) % 5) - 2;
  for (int64_t i = 0; i < n * k; ++i) b_int[i] = static_cast<int>((i * 3 + i / k) % 5) - 2;
  for (int64_t i = 0; i < m * k; ++i) a[i] = float_to_fp8(static_cast<float>(a_int[i]), Fp8Format::kE4M3);
  for (int64_t i = 0; i < n * k; ++i) b[i] = float_to_fp8(static_cast<float>(b_int[i]), Fp8Format::kE4M3);

  uint8_t *a_dev = nullptr, *b_dev = nullptr;
  float* d_dev = nullptr;
  if (!check(cudaMalloc(&a_dev, a.size()), "cudaMalloc A") || !check(cudaMalloc(&b_dev, b.size()), "cudaMalloc B") ||
      !check(cudaMalloc(&d_dev, m * n * sizeof(float)), "cudaMalloc D") ||
      !check(cudaMemcpy(a_dev, a.data(), a.size(), cudaMemcpyHostToDevice), "copy A") ||
      !check(cudaMemcpy(b_dev, b.data(), b.size(), cudaMemcpyHostToDevice), "copy B") ||
      !check(cudaMemset(d_dev, 0xFF, m * n * sizeof(float)), "poison D")) {  // NaN until written
    return 1;
  }
  GemmArgs args;
  args.m = m;
  args.n = n;
  args.k = k;
  args.a = a_dev;
  args.lda = k;
  args.b = b_dev;
  args.ldb = k;
  args.d = d_dev;
  args.ldd = n;
  args.d_type = OutputType::kFP32;
  const Status status = run_step(*step, args);
  if (!status.ok()) {
    std::fprintf(stderr, "run_gemm: %s: %s: %s\n", step->folder.c_str(), status_code_name(status.code),
                 status.message.c_str());
    return 1;
  }
  std::vector<float> d(m * n);
  if (!check(cudaDeviceSynchronize(), "the GEMM") ||
      !check(cudaMemcpy(d.data(), d_dev, d.size() * sizeof(float), cudaMemcpyDeviceToHost), "copy D")) {
    return 1;
  }
  int64_t wrong = 0;
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      int64_t sum = 0;
      for (int64_t kk = 0; kk < k; ++kk) sum += a_int[i * k + kk] * b_int[j * k + kk];
      if (d[i * n + j] != static_cast<float>(sum) && wrong++ < 5) {
        std::fprintf(stderr, "run_gemm: D[%lld][%lld] = %.9g, expected %lld\n", static_cast<long long>(i),
                     static_cast<long long>(j), d[i * n + j], static_cast<long long>(sum));
      }
    }
  }
  cudaFree(a_dev);
  cudaFree(b_dev);
  cudaFree(d_dev);
  std::printf("run_gemm: %s on %lldx%lldx%lld through the installed package: %s (%lld of %lld elements wrong)\n",
              step->folder.c_str(), static_cast<long long>(m), static_cast<long long>(n), static_cast<long long>(k),
              wrong == 0 ? "exact" : "WRONG", static_cast<long long>(wrong), static_cast<long long>(m * n));
  return wrong == 0 ? 0 : 1;
}
