#include "support/random_problem.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <tuple>

#include "common/check/parallel.h"

namespace fp8gemm::test_support {

namespace {

// One N(0, 1) sample that depends only on (seed, index): Box-Muller on the
// two 32-bit halves of a hash of the pair.
float normal_sample(uint64_t seed, uint64_t index) {
  const uint64_t bits = mix_seed(seed, index);
  const double u1 = (static_cast<double>(bits >> 32) + 0.5) * 0x1p-32;  // in (0, 1): log is finite
  const double u2 = static_cast<double>(bits & 0xFFFFFFFFu) * 0x1p-32;
  constexpr double kTwoPi = 6.283185307179586;
  return static_cast<float>(std::sqrt(-2.0 * std::log(u1)) * std::cos(kTwoPi * u2));
}

// Operands are cached by role ('A' or 'B'), rows, K and format.
using OperandKey = std::tuple<char, int64_t, int64_t, int>;
using ShapeKey = std::tuple<int64_t, int64_t, int64_t, int, int>;

std::shared_ptr<const QuantizedMatrix> cached_operand(char role, int64_t rows, int64_t cols, Fp8Format format) {
  static std::mutex mutex;
  static std::map<OperandKey, std::shared_ptr<const QuantizedMatrix>> cache;
  std::lock_guard<std::mutex> lock(mutex);
  const OperandKey key{role, rows, cols, static_cast<int>(format)};
  auto& slot = cache[key];
  if (slot == nullptr) {
    uint64_t seed = mix_seed(run_seed(), static_cast<uint64_t>(role));
    seed = mix_seed(mix_seed(mix_seed(seed, static_cast<uint64_t>(rows)), static_cast<uint64_t>(cols)),
                    static_cast<uint64_t>(format));
    slot = std::make_shared<const QuantizedMatrix>(random_fp8_matrix(rows, cols, format, seed));
  }
  return slot;
}

}  // namespace

std::vector<float> random_normal_matrix(int64_t rows, int64_t cols, uint64_t seed) {
  std::vector<float> x(static_cast<size_t>(rows * cols));
  parallel_for(rows * cols, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) x[static_cast<size_t>(i)] = normal_sample(seed, static_cast<uint64_t>(i));
  });
  return x;
}

QuantizedMatrix random_fp8_matrix(int64_t rows, int64_t cols, Fp8Format format, uint64_t seed) {
  const std::vector<float> x = random_normal_matrix(rows, cols, seed);
  return quantize(x.data(), rows, cols, cols, format, ScaleGranularity::kPerTensor);
}

std::string describe(const ProblemShape& shape) {
  return std::to_string(shape.m) + "x" + std::to_string(shape.n) + "x" + std::to_string(shape.k) + " " +
         fp8_name(shape.a_format) + " x " + fp8_name(shape.b_format);
}

std::shared_ptr<const ReferencedProblem> referenced_problem(const ProblemShape& shape) {
  static std::mutex mutex;
  static std::map<ShapeKey, std::shared_ptr<const ReferencedProblem>> cache;
  std::lock_guard<std::mutex> lock(mutex);
  const ShapeKey key{shape.m, shape.n, shape.k, static_cast<int>(shape.a_format), static_cast<int>(shape.b_format)};
  auto& slot = cache[key];
  if (slot != nullptr) return slot;

  using Clock = std::chrono::steady_clock;
  const Clock::time_point start = Clock::now();
  auto problem = std::make_shared<ReferencedProblem>();
  problem->shape = shape;
  problem->a = cached_operand('A', shape.m, shape.k, shape.a_format);
  problem->b = cached_operand('B', shape.n, shape.k, shape.b_format);
  const Clock::time_point inputs_made = Clock::now();

  uint64_t rows_seed = run_seed();
  for (int64_t value : {shape.m, shape.n, shape.k, int64_t{static_cast<int>(shape.a_format)},
                        int64_t{static_cast<int>(shape.b_format)}}) {
    rows_seed = mix_seed(rows_seed, static_cast<uint64_t>(value));
  }
  const std::vector<int64_t> rows = rows_to_check(shape.m, shape.n, shape.k, rows_seed);
  problem->reference = reference_of_rows(*problem->a, *problem->b, rows);
  const std::chrono::duration<double> input_seconds = inputs_made - start;
  const std::chrono::duration<double> reference_seconds = Clock::now() - inputs_made;
  std::printf("[ PROBLEM  ] %s: inputs %.2f s, reference %.2f s on %zu of %lld rows\n", describe(shape).c_str(),
              input_seconds.count(), reference_seconds.count(), rows.size(), static_cast<long long>(shape.m));
  std::fflush(stdout);
  slot = problem;
  return slot;
}

}  // namespace fp8gemm::test_support
