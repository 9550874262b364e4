#include "support/exact_problem.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <tuple>

#include "common/api/registry.h"
#include "common/check/parallel.h"
#include "common/fp8/fp8.h"
#include "support/seed.h"

namespace fp8gemm::test_support {

namespace {

// The values of each kind of operand, as c = 2 v: integers of at most three
// significant bits (see exact_problem.h).
constexpr int16_t kWide[] = {0, 1,  -1, 2,  -2, 3,   -3, 4,   -4, 5,   -5, 6,  -6,
                             7, -7, 8,  -8, 10, -10, 12, -12, 14, -14, 16, -16};
constexpr int16_t kNarrowA[] = {0, 1, -1, 2, -2, 3, -3, 4, -4, 5, -5, 6, -6, 7, -7, 8, -8};
constexpr int16_t kNarrowB[] = {0, 1, -1, 2, -2, 3, -3, 4, -4};
constexpr int16_t kNonzeroA[] = {1, -1, 2, -2, 3, -3, 4, -4, 5, -5, 6, -6, 7, -7, 8, -8};

// A row of A in the sparse (fast accumulation) operand holds about this many
// nonzero values, and its sum of |c| stays within kTensorCoreExactLimit / max|c_b|.
constexpr int64_t kSparseNonzerosPerRow = 128;
constexpr int64_t kNarrowBMax = 4;
constexpr int64_t kSparseRowL1Limit = kTensorCoreExactLimit / kNarrowBMax;

template <size_t N>
int16_t pick(const int16_t (&alphabet)[N], uint64_t bits) {
  return alphabet[bits % N];
}

IntegerOperand make_operand(char role, int64_t rows, int64_t k, Accumulation accumulation) {
  uint64_t seed = mix_seed(run_seed(), 0x45584143ull);  // "EXAC": not the seeds of the random problems
  for (uint64_t value : {static_cast<uint64_t>(role), static_cast<uint64_t>(rows), static_cast<uint64_t>(k),
                         static_cast<uint64_t>(accumulation)}) {
    seed = mix_seed(seed, value);
  }
  IntegerOperand op;
  op.rows = rows;
  op.cols = k;
  op.values.resize(static_cast<size_t>(rows * k));
  op.scale_exponent = static_cast<int>(mix_seed(seed, ~0ull) % 7) - 3;  // scale 2^-3 .. 2^3
  // Probability (in 1/2^32) that an element of a sparse row is nonzero.
  const uint64_t nonzero_below =
      k <= kSparseNonzerosPerRow ? (uint64_t{1} << 32) : (uint64_t{kSparseNonzerosPerRow} << 32) / k;
  // Half the rows (drawn) hold no negative value, so that where a row of A
  // and a row of B both do, the sum grows with K instead of cancelling: it
  // reaches 2^16 and more at K = 7168, beyond any tensor core's precision,
  // while the bounds, on sums of |c|, stay as they are.
  const uint64_t row_seed = mix_seed(seed, 0x5349474Eull);  // "SIGN"
  parallel_for(rows * k, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const uint64_t bits = mix_seed(seed, static_cast<uint64_t>(i));
      const bool nonnegative_row = (mix_seed(row_seed, static_cast<uint64_t>(i / k)) & 1) != 0;
      int16_t c = 0;
      if (accumulation == Accumulation::kFp32) {
        c = pick(kWide, bits);
      } else if (role == 'B') {
        c = pick(kNarrowB, bits);
      } else if (accumulation == Accumulation::kTensorCorePromoted) {
        c = pick(kNarrowA, bits);
      } else if ((bits >> 32) < nonzero_below) {
        c = pick(kNonzeroA, bits);
      }
      op.values[static_cast<size_t>(i)] = nonnegative_row ? static_cast<int16_t>(std::abs(c)) : c;
    }
  });
  for (int64_t r = 0; r < rows; ++r) {
    int64_t l1 = 0;
    for (int64_t j = 0; j < k; ++j) {
      int16_t& c = op.values[static_cast<size_t>(r * k + j)];
      // The sparse rows: drop what would take the row past its budget (rare).
      if (accumulation == Accumulation::kTensorCoreFast && role == 'A' && l1 + std::abs(c) > kSparseRowL1Limit) c = 0;
      l1 += std::abs(c);
      op.max_abs = std::max<int64_t>(op.max_abs, std::abs(c));
    }
    op.max_row_l1 = std::max(op.max_row_l1, l1);
  }
  return op;
}

// P = A B^T in integers: every element, exactly.
std::vector<int32_t> integer_product(const IntegerOperand& a, const IntegerOperand& b) {
  const int64_t m = a.rows, n = b.rows, k = a.cols;
  std::vector<int32_t> p(static_cast<size_t>(m * n));
  parallel_for(m * n, [&](int64_t begin, int64_t end) {
    for (int64_t idx = begin; idx < end; ++idx) {
      const int16_t* x = a.values.data() + (idx / n) * k;
      const int16_t* y = b.values.data() + (idx % n) * k;
      int32_t sum = 0;
      for (int64_t j = 0; j < k; ++j) sum += static_cast<int32_t>(x[j]) * static_cast<int32_t>(y[j]);
      p[static_cast<size_t>(idx)] = sum;
    }
  });
  return p;
}

uint32_t bits_of_float(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

}  // namespace

std::shared_ptr<const IntegerOperand> exact_operand(char role, int64_t rows, int64_t k, Accumulation accumulation) {
  static std::mutex mutex;
  static std::map<std::tuple<char, int64_t, int64_t, int>, std::shared_ptr<const IntegerOperand>> cache;
  std::lock_guard<std::mutex> lock(mutex);
  auto& slot = cache[{role, rows, k, static_cast<int>(accumulation)}];
  if (slot == nullptr) slot = std::make_shared<const IntegerOperand>(make_operand(role, rows, k, accumulation));
  return slot;
}

QuantizedMatrix encode_exact_operand(const IntegerOperand& operand, Fp8Format format) {
  // The code of each of the 33 values c = -16..16 (those not used are never looked up).
  uint8_t code_of[33];
  for (int c = -16; c <= 16; ++c) {
    const float v = 0.5f * static_cast<float>(c);
    code_of[c + 16] = float_to_fp8(v, format);
    const bool used = std::find(std::begin(kWide), std::end(kWide), c) != std::end(kWide);
    if (used && fp8_to_float(code_of[c + 16], format) != v) {
      throw std::logic_error(std::string("exact_problem: ") + fp8_name(format) + " does not hold " + std::to_string(v));
    }
  }
  QuantizedMatrix q;
  q.rows = operand.rows;
  q.cols = operand.cols;
  q.format = format;
  q.granularity = ScaleGranularity::kPerTensor;
  q.codes.resize(operand.values.size());
  for (size_t i = 0; i < operand.values.size(); ++i) q.codes[i] = code_of[operand.values[i] + 16];
  q.scales = {std::ldexp(1.0f, operand.scale_exponent)};
  return q;
}

std::shared_ptr<const ExactProblem> exact_problem(const ProblemShape& shape, Accumulation accumulation) {
  static std::mutex mutex;
  static std::map<std::tuple<int64_t, int64_t, int64_t, int>, std::shared_ptr<const std::vector<int32_t>>> products;
  static std::map<std::tuple<int64_t, int64_t, int64_t, int, int, int>, std::shared_ptr<const ExactProblem>> cache;
  std::lock_guard<std::mutex> lock(mutex);
  const int acc = static_cast<int>(accumulation);
  auto& slot =
      cache[{shape.m, shape.n, shape.k, static_cast<int>(shape.a_format), static_cast<int>(shape.b_format), acc}];
  if (slot != nullptr) return slot;

  auto problem = std::make_shared<ExactProblem>();
  problem->shape = shape;
  problem->accumulation = accumulation;
  problem->a_values = exact_operand('A', shape.m, shape.k, accumulation);
  problem->b_values = exact_operand('B', shape.n, shape.k, accumulation);
  problem->a = encode_exact_operand(*problem->a_values, shape.a_format);
  problem->b = encode_exact_operand(*problem->b_values, shape.b_format);
  problem->output_exponent = problem->a_values->scale_exponent + problem->b_values->scale_exponent - 2;
  auto& product = products[{shape.m, shape.n, shape.k, acc}];
  if (product == nullptr) {
    product = std::make_shared<const std::vector<int32_t>>(integer_product(*problem->a_values, *problem->b_values));
  }
  problem->exact = product;
  slot = problem;
  return slot;
}

::testing::AssertionResult exactness_bound_holds(const IntegerOperand& a, const IntegerOperand& b,
                                                 Accumulation accumulation) {
  const int64_t total = a.max_row_l1 * b.max_abs;                                    // every partial sum
  const int64_t block = std::min(a.cols, kTensorCoreBlock) * a.max_abs * b.max_abs;  // any 128 products
  const auto fails = [&](const char* what, int64_t bound, int64_t limit) {
    return ::testing::AssertionFailure() << a.rows << "x" << b.rows << "x" << a.cols << ", operands for "
                                         << accumulation_name(accumulation) << " accumulation: " << what
                                         << " can reach " << bound << " quarters, more than the " << limit
                                         << " that stay exact";
  };
  switch (accumulation) {
    case Accumulation::kFp32:
      if (total > kFp32ExactLimit) return fails("an FP32 partial sum", total, kFp32ExactLimit);
      break;
    case Accumulation::kTensorCorePromoted:
      if (block > kTensorCoreExactLimit)
        return fails("a tensor core's sum of 128 products", block, kTensorCoreExactLimit);
      if (total > kFp32ExactLimit) return fails("an FP32 partial sum", total, kFp32ExactLimit);
      break;
    case Accumulation::kTensorCoreFast:
      if (total > kTensorCoreExactLimit) return fails("a tensor core's partial sum", total, kTensorCoreExactLimit);
      break;
  }
  return ::testing::AssertionSuccess();
}

int64_t round_to_bf16_significand(int64_t value) {
  const bool negative = value < 0;
  uint64_t magnitude = negative ? 0 - static_cast<uint64_t>(value) : static_cast<uint64_t>(value);
  int bits = 0;
  while ((magnitude >> bits) != 0) ++bits;
  if (bits > 8) {
    const int drop = bits - 8;
    const uint64_t kept = magnitude >> drop;
    const uint64_t rest = magnitude & ((uint64_t{1} << drop) - 1);
    const uint64_t half = uint64_t{1} << (drop - 1);
    const uint64_t rounded = kept + ((rest > half || (rest == half && (kept & 1) != 0)) ? 1 : 0);
    magnitude = rounded << drop;
  }
  const auto result = static_cast<int64_t>(magnitude);
  return negative ? -result : result;
}

float exact_output(const ExactProblem& p, int64_t row, int64_t col, OutputType type) {
  int64_t value = (*p.exact)[static_cast<size_t>(row * p.shape.n + col)];
  if (type == OutputType::kBF16) value = round_to_bf16_significand(value);
  return static_cast<float>(std::ldexp(static_cast<double>(value), p.output_exponent));  // exact
}

::testing::AssertionResult equals_exact_product(const OutputSnapshot& d, const ExactProblem& p) {
  constexpr int kShown = 8;
  int64_t mismatches = 0;
  std::ostringstream first;
  for (int64_t row = 0; row < d.m(); ++row) {
    for (int64_t col = 0; col < d.n(); ++col) {
      const float got = d.value(row, col);
      const float want = exact_output(p, row, col, d.type());
      if (bits_of_float(got) == bits_of_float(want) || (got == 0.0f && want == 0.0f)) continue;
      if (mismatches++ < kShown) {
        const int32_t exact = (*p.exact)[static_cast<size_t>(row * p.shape.n + col)];
        char line[256];
        std::snprintf(line, sizeof line,
                      "\n  D[%lld, %lld] = %.9g (bits 0x%08x), expected %.9g (bits 0x%08x) = %d * 2^%d%s",
                      static_cast<long long>(row), static_cast<long long>(col), got, bits_of_float(got), want,
                      bits_of_float(want), exact, p.output_exponent,
                      d.type() == OutputType::kBF16 ? " rounded to BF16" : "");
        first << line;
      }
    }
  }
  if (mismatches == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << mismatches << " of " << d.m() * d.n()
                                       << " elements of D differ from the exact product (" << describe(p.shape)
                                       << " -> " << output_name(d.type()) << ", operands for "
                                       << accumulation_name(p.accumulation)
                                       << " accumulation, FP8GEMM_TEST_SEED=" << run_seed()
                                       << "); the first:" << first.str();
}

}  // namespace fp8gemm::test_support
