// The grouped GEMM (common/api/grouped.h) of every registered step that has
// one (StepInfo::launch_grouped), always through run_grouped_step, on
// problems made by GroupedProblem (common/harness/grouped_problem.h): one A
// for all experts' rows, one B per expert, in the contiguous and the masked
// layout, the rows that are not valid holding NaN codes in A.
//
//   GroupedTest           ragged experts (0, 1, 127, 128, 129 and 4096 rows in
//                         one launch, empty experts first and in the middle),
//                         N and K multiples of 128 or not, per-tensor, per-row
//                         and block scales, BF16 / FP32 / e4m3 D, bias + GELU
//                         with the amax, fast accumulation; and one huge
//                         expert among empty ones. Each expert's rows are
//                         compared with the FP64 reference of that expert
//                         alone (its A rows times its B) under the tolerance of
//                         the step's accumulation; every row that is not valid
//                         must still hold D's poison byte for byte, every valid
//                         element must be written, nothing outside D may change.
//   GroupedExactTest      small integers whose every partial sum is exact, a
//                         different B and a different power-of-two scale per
//                         expert: D must equal the exact product bit for bit,
//                         so a wrong expert, row offset or scale offset fails.
//   GroupedRefusalTest    what run_grouped_step must refuse, by name, writing
//                         nothing: counts outside [0, capacity], a broken
//                         m_indices, M that does not fit the layout, split_k,
//                         no experts.
//   GroupedUncheckedTest  check_on_host = false: the kernel clamps counts and
//                         skips experts outside [0, experts), never writing
//                         outside an expert's rows, and returns no error.
//
// Without a usable GPU the tests of a step skip (or fail with
// FP8GEMM_REQUIRE_GPU=1); a step built for another compute capability skips.
// Without a step that has a grouped GEMM, GroupedSteps.SomeStepHasAGroupedGemm
// skips and says so. The refusal of a step without a grouped GEMM needs no GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/api/cuda_check.h"
#include "common/api/grouped.h"
#include "common/api/registry.h"
#include "common/check/check.h"
#include "common/check/parallel.h"
#include "common/device/output.h"
#include "common/harness/grouped_problem.h"
#include "support/cuda_stream.h"
#include "support/exact_problem.h"
#include "support/require_gpu.h"
#include "support/seed.h"

namespace fp8gemm {
namespace {

using test_support::CudaStream;

constexpr GroupedLayout kContiguous = GroupedLayout::kContiguous;
constexpr GroupedLayout kMasked = GroupedLayout::kMasked;
constexpr GroupedLayout kLayouts[] = {kContiguous, kMasked};
constexpr ScaleGranularity kTensor = ScaleGranularity::kPerTensor;
constexpr ScaleGranularity kRow = ScaleGranularity::kPerRow;
constexpr ScaleGranularity kGroup = ScaleGranularity::kGroup1x128;
constexpr ScaleGranularity kBlock = ScaleGranularity::kBlock128x128;

// Ragged experts in one launch: empty ones first and in the middle, one row,
// either side of the 128-row tile, and a large one.
const std::vector<int64_t> kRaggedExperts = {0, 127, 1, 4096, 129, 0, 128};
// One huge expert among empty ones: its rows are sampled by the check.
const std::vector<int64_t> kHugeAmongEmpty = {0, 0, 0, 16384, 0, 0, 0, 0};
// More experts than a kernel may keep the counts of beside its deepest ring
// (step 12 keeps 256 there and takes its five-stage kernels above): 300
// experts of 0 to 129 rows, every fifth empty.
std::vector<int64_t> many_small_experts() {
  std::vector<int64_t> rows(300);
  for (size_t g = 0; g < rows.size(); ++g) rows[g] = g % 5 == 0 ? 0 : static_cast<int64_t>((g * 37) % 130);
  return rows;
}

std::vector<StepInfo> grouped_steps() {
  std::vector<StepInfo> steps;
  for (const StepInfo& step : registered_steps()) {
    if (step.launch_grouped != nullptr) steps.push_back(step);
  }
  return steps;
}

TEST(GroupedSteps, SomeStepHasAGroupedGemm) {
  const std::vector<StepInfo> steps = grouped_steps();
  if (steps.empty()) GTEST_SKIP() << "no registered step has a grouped GEMM (StepOptions::launch_grouped)";
  for (const StepInfo& step : steps) std::cout << "[ GROUPED  ] " << step.folder << "\n";
}

// The test's seed of a case: the run's seed (FP8GEMM_TEST_SEED replays it) mixed with the case's name.
uint64_t case_seed(const std::string& name) {
  uint64_t seed = test_support::run_seed();
  for (char c : name) seed = test_support::mix_seed(seed, static_cast<uint8_t>(c));
  return seed;
}

std::string what(const StepInfo& step, const GroupedShape& shape, const ProblemOptions& options) {
  return step.folder + " " + grouped_shape_name(shape) + ", " + describe(options) +
         ", FP8GEMM_TEST_SEED=" + std::to_string(test_support::run_seed());
}

// -----------------------------------------------------------------------------
// What every launch is checked for
// -----------------------------------------------------------------------------

// D after a launch, as bytes, and its elements as floats.
struct DSnapshot {
  std::vector<uint8_t> bytes;
  int64_t n = 0;
  OutputType type = OutputType::kBF16;
  float d_scale = 1.0f;

  float value(int64_t row, int64_t col) const { return load_output(bytes.data(), row * n + col, type, d_scale); }
  std::vector<float> rows(int64_t first, const std::vector<int64_t>& rows) const {
    std::vector<float> values;
    values.reserve(rows.size() * static_cast<size_t>(n));
    for (int64_t r : rows) {
      for (int64_t c = 0; c < n; ++c) values.push_back(value(first + r, c));
    }
    return values;
  }
};

DSnapshot snapshot(const GroupedProblem& p) {
  return DSnapshot{p.download_d_bytes(), p.shape().n, p.options().d_type, p.d_scale()};
}

// Every row whose expert (row_experts[row]) is -1 holds kDPoisonByte in every
// byte, every element of the other rows is finite (written, and not from a
// NaN row of A), and the guard band around D is untouched.
::testing::AssertionResult only_valid_rows_written(const GroupedProblem& p, const DSnapshot& d,
                                                   const std::vector<int>& row_experts) {
  const int64_t row_bytes = d.n * output_bytes(d.type);
  std::string guard;
  if (!p.d_guard_untouched(&guard)) return ::testing::AssertionFailure() << "written outside D: " << guard;
  int64_t bad_rows = 0;
  std::ostringstream first;
  for (int64_t row = 0; row < p.rows(); ++row) {
    const int expert = row_experts[static_cast<size_t>(row)];
    const uint8_t* bytes = d.bytes.data() + row * row_bytes;
    bool bad = false;
    if (expert < 0) {
      const auto changed =
          std::find_if(bytes, bytes + row_bytes, [](uint8_t b) { return b != GroupedProblem::kDPoisonByte; });
      if (changed != bytes + row_bytes) {
        bad = true;
        if (bad_rows == 0) {
          first << "row " << row << " must not be written (padding or past a count), but its byte " << (changed - bytes)
                << " is 0x" << std::hex << int{*changed} << std::dec;
        }
      }
    } else {
      for (int64_t col = 0; col < d.n && !bad; ++col) {
        if (std::isfinite(d.value(row, col))) continue;
        bad = true;
        if (bad_rows == 0) {
          first << "row " << row << " (expert " << expert << "'s row " << row - p.first_row(expert) << ") column "
                << col << " is " << d.value(row, col) << ": not written, or computed from a row that is not valid";
        }
      }
    }
    bad_rows += bad ? 1 : 0;
  }
  if (bad_rows == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << bad_rows << " rows of " << p.rows()
                                       << " are wrong; the first: " << first.str();
}

// Nothing at all was written: every byte of D is poison, the guard band is
// untouched, and the amax (FP8 D) still holds its NaN.
::testing::AssertionResult nothing_written(const GroupedProblem& p) {
  const DSnapshot d = snapshot(p);
  const std::vector<int> no_valid_rows(static_cast<size_t>(p.rows()), -1);
  ::testing::AssertionResult result = only_valid_rows_written(p, d, no_valid_rows);
  if (!result) return result;
  if (is_fp8_output(p.options().d_type) && !std::isnan(p.download_d_amax())) {
    return ::testing::AssertionFailure() << "d_amax was written: " << p.download_d_amax();
  }
  return ::testing::AssertionSuccess();
}

// Each listed expert's rows of D against the FP64 reference of its own GEMM
// (its A rows, its B: download_expert_a / download_expert_b), under the
// tolerance of `accumulation`; the amax (FP8 D) against the largest of the
// experts' reference amaxes.
void expect_experts_match_reference(const GroupedProblem& p, const DSnapshot& d, Accumulation accumulation,
                                    const std::vector<int>& experts, const std::string& what, uint64_t seed) {
  const ProblemOptions& o = p.options();
  const int64_t n = p.shape().n, k = p.shape().k;
  const EpilogueReference epilogue{std::vector<double>(p.bias().begin(), p.bias().end()), o.activation, p.d_scale()};
  double amax_low = 0.0, amax_high = 0.0;
  bool every_row_checked = true;
  for (int g : experts) {
    const int64_t m = p.expert_rows(g);
    if (m == 0) continue;
    const std::vector<int64_t> rows = rows_to_check(m, n, k, test_support::mix_seed(seed, static_cast<uint64_t>(g)));
    const ReferenceProduct reference = reference_of_rows(p.download_expert_a(g), p.download_expert_b(g), rows);
    const std::vector<float> values = d.rows(p.first_row(g), rows);
    const OutputCheck check = is_plain(o) ? check_rows(values, reference, o.d_type, k, accumulation)
                                          : check_epilogue_rows(values, reference, epilogue, o.d_type, k, accumulation);
    EXPECT_TRUE(check.passed) << what << ": expert " << g << " (" << m << " rows from row " << p.first_row(g)
                              << "): " << describe_check(check, values, reference);
    if (is_fp8_output(o.d_type)) {
      const AmaxReference amax = reference_amax(reference, epilogue, k, accumulation);
      amax_low = std::max(amax_low, amax.amax - amax.bound);
      amax_high = std::max(amax_high, amax.amax + amax.bound);
      every_row_checked = every_row_checked && static_cast<int64_t>(rows.size()) == m;
    }
  }
  if (is_fp8_output(o.d_type)) {
    // Only valid rows count: a padding row (NaN) or a row past a count in the
    // amax makes it NaN or too large.
    const float amax = p.download_d_amax();
    EXPECT_TRUE(std::isfinite(amax) && amax >= amax_low && (!every_row_checked || amax <= amax_high))
        << what << ": d_amax = " << amax << ", the experts' reference: " << amax_low << " .. " << amax_high;
  }
}

std::vector<int> all_experts(const GroupedProblem& p) {
  std::vector<int> experts(static_cast<size_t>(p.experts()));
  for (int g = 0; g < p.experts(); ++g) experts[static_cast<size_t>(g)] = g;
  return experts;
}

// Runs `args` through run_grouped_step. Where the step's constraints refuse
// them, the step must return kNotSupported with their message and write
// nothing (a failure instead when `must_run`); returns false then, true when
// the launch succeeded (a failure is recorded otherwise).
bool launch_or_refuse_by_name(const StepInfo& step, const GroupedProblem& p, const GroupedGemmArgs& args, bool must_run,
                              const std::string& what) {
  const Status accepted = check_step_constraints(step, args.gemm);
  const Status status = run_grouped_step(step, args);
  FP8GEMM_CUDA_CHECK(cudaGetLastError());
  FP8GEMM_CUDA_CHECK(cudaStreamSynchronize(args.gemm.stream));
  if (!accepted.ok()) {
    EXPECT_FALSE(must_run) << what << ": " << step.folder << "'s constraints ("
                           << describe_constraints(step.constraints)
                           << ") refuse a case every grouped step must run: " << accepted.message;
    EXPECT_EQ(status.code, StatusCode::kNotSupported) << what << ": " << status.message;
    EXPECT_EQ(status.message, accepted.message) << what;
    EXPECT_TRUE(nothing_written(p)) << what;
    return false;
  }
  EXPECT_TRUE(status.ok()) << what << ": " << status_code_name(status.code) << ": " << status.message;
  return status.ok();
}

// -----------------------------------------------------------------------------
// GroupedTest: random inputs against the FP64 reference
// -----------------------------------------------------------------------------

struct Variant {
  std::string name;
  ScaleGranularity a_scales = kTensor;
  ScaleGranularity b_scales = kTensor;
  OutputType out = OutputType::kBF16;
  bool bias = false;
  Activation activation = Activation::kNone;
  bool fast_accumulation = false;
  int64_t n = 320, k = 640;
  bool must_run = false;  // every grouped step must take it: a refusal is a failure
};

const std::vector<Variant>& variants() {
  static const std::vector<Variant> list = {
      {"per_tensor_bf16", kTensor, kTensor, OutputType::kBF16, false, Activation::kNone, false, 320, 640, true},
      {"per_tensor_fast_bf16", kTensor, kTensor, OutputType::kBF16, false, Activation::kNone, true, 320, 640},
      // N and K not multiples of 128: a partial last tile and scale block.
      {"block_scales_bf16", kGroup, kBlock, OutputType::kBF16, false, Activation::kNone, false, 200, 300},
      {"per_row_fp32", kRow, kRow, OutputType::kFP32, false, Activation::kNone, false, 200, 300},
      {"block_bias_gelu_e4m3", kGroup, kBlock, OutputType::kE4M3, true, Activation::kGeluTanh, false, 320, 640},
  };
  return list;
}

struct GroupedCase {
  StepInfo step;
  std::string name;
  GroupedShape shape;
  Variant variant;
};

void PrintTo(const GroupedCase& c, std::ostream* out) { *out << c.step.folder << " " << c.name; }

std::vector<GroupedCase> grouped_cases() {
  std::vector<GroupedCase> cases;
  for (const StepInfo& step : grouped_steps()) {
    for (GroupedLayout layout : kLayouts) {
      const std::string suffix = std::string("_") + grouped_layout_name(layout);
      for (const Variant& v : variants()) {
        cases.push_back({step, "ragged_" + v.name + suffix, GroupedShape{layout, kRaggedExperts, v.n, v.k}, v});
      }
      Variant huge = variants().front();
      huge.n = huge.k = 1024;
      cases.push_back({step, "huge_among_empty_" + huge.name + suffix,
                       GroupedShape{layout, kHugeAmongEmpty, huge.n, huge.k}, huge});
      const Variant& plain = variants().front();
      cases.push_back({step, "many_experts_" + plain.name + suffix,
                       GroupedShape{layout, many_small_experts(), plain.n, plain.k}, plain});
    }
  }
  return cases;
}

class GroupedTest : public ::testing::TestWithParam<GroupedCase> {
 protected:
  void SetUp() override {
    if (!test_support::require_step_gpu_or_skip(GetParam().step)) return;
    test_support::record_run_seed();
  }
};

TEST_P(GroupedTest, EachExpertMatchesItsReferenceAndNoOtherRowIsWritten) {
  const GroupedCase& c = GetParam();
  const Variant& v = c.variant;
  ProblemOptions options;
  options.a_scale_granularity = v.a_scales;
  options.b_scale_granularity = v.b_scales;
  options.d_type = v.out;
  options.bias = v.bias;
  options.bias_type = BiasType::kBF16;
  options.activation = v.activation;
  options.seed = case_seed(c.name);
  CudaStream stream;
  const GroupedProblem p(c.shape, options, stream.get());
  GroupedGemmArgs args = p.args();
  args.gemm.fast_accumulation = v.fast_accumulation;
  const std::string description = what(c.step, c.shape, options) + (v.fast_accumulation ? ", fast accumulation" : "");
  if (!launch_or_refuse_by_name(c.step, p, args, v.must_run, description)) return;
  const DSnapshot d = snapshot(p);
  EXPECT_TRUE(only_valid_rows_written(p, d, p.row_experts())) << description;
  expect_experts_match_reference(p, d, accumulation_of(c.step, v.fast_accumulation), all_experts(p), description,
                                 options.seed);
}

INSTANTIATE_TEST_SUITE_P(EveryGroupedStep, GroupedTest, ::testing::ValuesIn(grouped_cases()),
                         [](const ::testing::TestParamInfo<GroupedCase>& info) {
                           return info.param.step.folder + "_" + info.param.name;
                         });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(GroupedTest);

// -----------------------------------------------------------------------------
// GroupedExactTest: D equal to the exact product, bit for bit
// -----------------------------------------------------------------------------
//
// As in tests/test_exact_gpu.cu (whose header derives it): operand values are
// c / 2 with c a small integer of at most three significant bits, |c_a| <= 8
// and |c_b| <= 4, which every FP8 format holds exactly; every scale is a power
// of two. A product is c_a c_b quarters, and every partial sum is exact if
// (1) any 128 products sum to at most 2^12 quarters (a tensor core's block
// before promotion: 128 * 8 * 4 = 2^12), and (2) the sum of a whole row, in
// units of the smallest scale product that occurs in it, stays within 2^24
// (FP32). With fast accumulation the tensor core sums all of K, so K <= 128.
// D is then the exact sum (FP32 out) or its correct BF16 rounding, computed
// here in integers. Each expert's B is drawn from its own seed and has its own
// scales, and A's per-tensor scale is one for all rows: a kernel that used
// another expert's B, another row of A, or another expert's scales differs.

struct ExactVariant {
  std::string name;
  bool block_scales = false;  // A 1 x 128 and B 128 x 128 (else per tensor)
  OutputType out = OutputType::kBF16;
  bool fast_accumulation = false;
  int64_t n = 200, k = 300;
};

const std::vector<ExactVariant>& exact_variants() {
  static const std::vector<ExactVariant> list = {
      {"per_tensor_bf16", false, OutputType::kBF16, false, 200, 300},
      {"per_tensor_fp32", false, OutputType::kFP32, false, 320, 640},
      {"block_scales_bf16", true, OutputType::kBF16, false, 200, 300},
      {"block_scales_fp32", true, OutputType::kFP32, false, 320, 640},
      {"per_tensor_fast_fp32", false, OutputType::kFP32, true, 200, 128},
  };
  return list;
}

// The integers of an exact problem: c for A's valid rows and each expert's B,
// and the exponent of each scale.
struct ExactOperands {
  int64_t valid_rows = 0, n = 0, k = 0;
  std::vector<int8_t> a;                      // valid_rows x K
  std::vector<std::vector<int8_t>> b;         // per expert, N x K
  std::vector<int> a_exponents;               // 1 (per tensor) or valid_rows x ceil(K / 128)
  std::vector<std::vector<int>> b_exponents;  // per expert: 1 or ceil(N / 128) x ceil(K / 128)
};

int64_t k_groups(int64_t k) { return (k + kQuantGroupSize - 1) / kQuantGroupSize; }

// c with at most three significant bits and |c| <= limit (8 or 4), from a
// random draw; half the rows (drawn) hold no negative value, so that sums grow
// with K where two such rows meet instead of cancelling.
int8_t draw_integer(std::mt19937_64& engine, int limit, bool nonnegative) {
  const int c = std::uniform_int_distribution<int>(-limit, limit)(engine);
  return static_cast<int8_t>(nonnegative ? std::abs(c) : c);
}

ExactOperands make_exact_operands(const std::vector<int64_t>& expert_rows, const ExactVariant& v, uint64_t seed) {
  ExactOperands ops;
  ops.n = v.n;
  ops.k = v.k;
  for (int64_t rows : expert_rows) ops.valid_rows += rows;
  std::mt19937_64 engine(seed);
  std::uniform_int_distribution<int> exponent(-2, 2);
  const auto fill = [&](std::vector<int8_t>& values, int64_t rows, int limit) {
    values.resize(static_cast<size_t>(rows * v.k));
    for (int64_t r = 0; r < rows; ++r) {
      const bool nonnegative = (engine() & 1) != 0;
      for (int64_t c = 0; c < v.k; ++c)
        values[static_cast<size_t>(r * v.k + c)] = draw_integer(engine, limit, nonnegative);
    }
  };
  fill(ops.a, ops.valid_rows, 8);
  ops.a_exponents.resize(v.block_scales ? static_cast<size_t>(ops.valid_rows * k_groups(v.k)) : 1);
  for (int& e : ops.a_exponents) e = exponent(engine);
  const int experts = static_cast<int>(expert_rows.size());
  ops.b.resize(static_cast<size_t>(experts));
  ops.b_exponents.resize(static_cast<size_t>(experts));
  for (int g = 0; g < experts; ++g) {
    fill(ops.b[static_cast<size_t>(g)], v.n, 4);
    std::vector<int>& exponents = ops.b_exponents[static_cast<size_t>(g)];
    if (v.block_scales) {
      exponents.resize(static_cast<size_t>(k_groups(v.n) * k_groups(v.k)));
      for (int& e : exponents) e = exponent(engine);
    } else {
      exponents = {g % 5 - 2};  // a different power of two for neighbouring experts
    }
  }
  return ops;
}

QuantizedMatrix encode(const std::vector<int8_t>& values, const std::vector<int>& exponents, int64_t rows, int64_t k,
                       ScaleGranularity granularity) {
  QuantizedMatrix q;
  q.rows = rows;
  q.cols = k;
  q.format = Fp8Format::kE4M3;
  q.granularity = granularity;
  q.codes.resize(values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    q.codes[i] = float_to_fp8(0.5f * values[i], Fp8Format::kE4M3);
    if (fp8_to_float(q.codes[i], Fp8Format::kE4M3) != 0.5f * values[i]) {
      throw std::logic_error("e4m3 does not hold " + std::to_string(0.5f * values[i]));
    }
  }
  for (int e : exponents) q.scales.push_back(std::ldexp(1.0f, e));
  return q;
}

// Success when every partial sum of every expert's product is exact (see
// above) for a kernel that sums as `accumulation`.
::testing::AssertionResult partial_sums_stay_exact(const ExactOperands& ops, Accumulation accumulation) {
  int64_t max_a = 0, max_b = 0, max_row_l1 = 0;
  for (int64_t r = 0; r < ops.valid_rows; ++r) {
    int64_t l1 = 0;
    for (int64_t c = 0; c < ops.k; ++c) {
      const int64_t value = std::abs(ops.a[static_cast<size_t>(r * ops.k + c)]);
      l1 += value;
      max_a = std::max(max_a, value);
    }
    max_row_l1 = std::max(max_row_l1, l1);
  }
  for (const auto& b : ops.b) {
    for (int8_t value : b) max_b = std::max<int64_t>(max_b, std::abs(value));
  }
  int lowest = INT_MAX, highest = INT_MIN;  // of an exponent of A plus one of B
  const auto [a_low, a_high] = std::minmax_element(ops.a_exponents.begin(), ops.a_exponents.end());
  for (const auto& exponents : ops.b_exponents) {
    const auto [b_low, b_high] = std::minmax_element(exponents.begin(), exponents.end());
    lowest = std::min(lowest, *a_low + *b_low);
    highest = std::max(highest, *a_high + *b_high);
  }
  // One element's sum mixes scale products only with block scales; per
  // tensor every term of an element has the same one.
  const int spread = ops.a_exponents.size() > 1 ? highest - lowest : 0;
  const int64_t block = std::min<int64_t>(ops.k, test_support::kTensorCoreBlock) * max_a * max_b;
  const int64_t total = (max_row_l1 * max_b) << spread;
  std::ostringstream why;
  if (accumulation == Accumulation::kTensorCoreFast) {
    if (max_row_l1 * max_b > test_support::kTensorCoreExactLimit || spread != 0) why << "a fast tensor-core sum";
  } else {
    if (accumulation == Accumulation::kTensorCorePromoted && block > test_support::kTensorCoreExactLimit)
      why << "a tensor core's block of 128 products";
    if (total > test_support::kFp32ExactLimit) why << "an FP32 partial sum";
  }
  if (why.str().empty()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << why.str() << " can round (|c_a| <= " << max_a << ", |c_b| <= " << max_b
                                       << ", row sum of |c_a| " << max_row_l1 << ", scale spread 2^" << spread << ")";
}

// D[row of expert g, n] exactly, in double (every term and partial sum is a
// dyadic rational far inside double's 53 bits).
double exact_value(const ExactOperands& ops, const ExactVariant& v, int g, int64_t a_row, int64_t col) {
  const std::vector<int8_t>& b = ops.b[static_cast<size_t>(g)];
  const std::vector<int>& b_exp = ops.b_exponents[static_cast<size_t>(g)];
  double sum = 0.0;
  for (int64_t kb = 0; kb < k_groups(ops.k); ++kb) {
    int64_t quarters = 0;  // sum of c_a c_b over the group
    for (int64_t c = kb * kQuantGroupSize; c < std::min(ops.k, (kb + 1) * kQuantGroupSize); ++c) {
      quarters += int64_t{ops.a[static_cast<size_t>(a_row * ops.k + c)]} * b[static_cast<size_t>(col * ops.k + c)];
    }
    const int exponent = v.block_scales ? ops.a_exponents[static_cast<size_t>(a_row * k_groups(ops.k) + kb)] +
                                              b_exp[static_cast<size_t>((col / kQuantGroupSize) * k_groups(ops.k) + kb)]
                                        : ops.a_exponents[0] + b_exp[0];
    sum += std::ldexp(static_cast<double>(quarters), exponent - 2);
  }
  return sum;
}

// The value D must hold: the exact sum for FP32 (representable, by the
// bound), or rounded to BF16's 8 significant bits, ties to even, in integers.
float expected_output(double exact, OutputType type) {
  if (type == OutputType::kFP32) return static_cast<float>(exact);
  constexpr int kFractionBits = 16;  // every exact value is a multiple of 2^-16
  const auto scaled = static_cast<int64_t>(std::ldexp(exact, kFractionBits));
  return static_cast<float>(
      std::ldexp(static_cast<double>(test_support::round_to_bf16_significand(scaled)), -kFractionBits));
}

::testing::AssertionResult equals_exact_product(const GroupedProblem& p, const DSnapshot& d, const ExactOperands& ops,
                                                const ExactVariant& v) {
  std::vector<int64_t> mismatches(static_cast<size_t>(p.experts()), 0);
  std::ostringstream first;
  int64_t a_row = 0;  // the expert's first row among A's valid rows
  for (int g = 0; g < p.experts(); ++g) {
    const int64_t rows = p.expert_rows(g);
    std::vector<std::string> shown(static_cast<size_t>(rows));
    std::vector<int64_t> wrong(static_cast<size_t>(rows), 0);
    parallel_for(rows, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        for (int64_t col = 0; col < ops.n; ++col) {
          const float want = expected_output(exact_value(ops, v, g, a_row + r, col), d.type);
          const float got = d.value(p.first_row(g) + r, col);
          if (got == want) continue;  // a zero of either sign matches
          if (wrong[static_cast<size_t>(r)]++ == 0) {
            std::ostringstream line;
            line << "\n  expert " << g << " row " << r << " (D row " << p.first_row(g) + r << ") column " << col << ": "
                 << got << ", expected " << want;
            shown[static_cast<size_t>(r)] = line.str();
          }
        }
      }
    });
    int shown_lines = 0;
    for (int64_t r = 0; r < rows; ++r) {
      mismatches[static_cast<size_t>(g)] += wrong[static_cast<size_t>(r)];
      if (wrong[static_cast<size_t>(r)] > 0 && shown_lines++ < 3) first << shown[static_cast<size_t>(r)];
    }
    a_row += rows;
  }
  int64_t total = 0;
  std::ostringstream per_expert;
  for (int g = 0; g < p.experts(); ++g) {
    total += mismatches[static_cast<size_t>(g)];
    per_expert << (g == 0 ? "" : ", ") << mismatches[static_cast<size_t>(g)];
  }
  if (total == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << total
                                       << " elements differ from the exact product (per expert: " << per_expert.str()
                                       << "); the first rows:" << first.str();
}

struct ExactCase {
  StepInfo step;
  GroupedLayout layout;
  ExactVariant variant;
};

void PrintTo(const ExactCase& c, std::ostream* out) {
  *out << c.step.folder << " " << c.variant.name << " " << grouped_layout_name(c.layout);
}

std::vector<ExactCase> exact_cases() {
  std::vector<ExactCase> cases;
  for (const StepInfo& step : grouped_steps()) {
    for (GroupedLayout layout : kLayouts) {
      for (const ExactVariant& v : exact_variants()) cases.push_back({step, layout, v});
    }
  }
  return cases;
}

class GroupedExactTest : public ::testing::TestWithParam<ExactCase> {
 protected:
  void SetUp() override {
    if (!test_support::require_step_gpu_or_skip(GetParam().step)) return;
    test_support::record_run_seed();
  }
};

TEST_P(GroupedExactTest, EqualsTheExactProductBitForBit) {
  const ExactCase& c = GetParam();
  const ExactVariant& v = c.variant;
  const GroupedShape shape{c.layout, kRaggedExperts, v.n, v.k};
  const std::string name = v.name + "_" + grouped_layout_name(c.layout);
  const ExactOperands ops = make_exact_operands(shape.expert_rows, v, case_seed("exact_" + name));
  const Accumulation accumulation = accumulation_of(c.step, v.fast_accumulation);
  ASSERT_TRUE(partial_sums_stay_exact(ops, accumulation));

  ProblemOptions options;
  options.a_scale_granularity = v.block_scales ? kGroup : kTensor;
  options.b_scale_granularity = v.block_scales ? kBlock : kTensor;
  options.d_type = v.out;
  GroupedOperands operands;
  operands.a = encode(ops.a, ops.a_exponents, ops.valid_rows, v.k, options.a_scale_granularity);
  for (size_t g = 0; g < ops.b.size(); ++g) {
    operands.b.push_back(encode(ops.b[g], ops.b_exponents[g], v.n, v.k, options.b_scale_granularity));
  }
  CudaStream stream;
  const GroupedProblem p(shape, options, operands, stream.get());
  GroupedGemmArgs args = p.args();
  args.gemm.fast_accumulation = v.fast_accumulation;
  const std::string description =
      what(c.step, shape, options) + ", exact operands" + (v.fast_accumulation ? ", fast accumulation" : "");
  if (!launch_or_refuse_by_name(c.step, p, args, /*must_run=*/false, description)) return;
  const DSnapshot d = snapshot(p);
  EXPECT_TRUE(only_valid_rows_written(p, d, p.row_experts())) << description;
  EXPECT_TRUE(equals_exact_product(p, d, ops, v)) << description;
}

INSTANTIATE_TEST_SUITE_P(EveryGroupedStep, GroupedExactTest, ::testing::ValuesIn(exact_cases()),
                         [](const ::testing::TestParamInfo<ExactCase>& info) {
                           return info.param.step.folder + "_" + info.param.variant.name + "_" +
                                  grouped_layout_name(info.param.layout);
                         });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(GroupedExactTest);

// -----------------------------------------------------------------------------
// Refusals through run_grouped_step
// -----------------------------------------------------------------------------

// A step without a grouped GEMM refuses one with kNotSupported, naming itself,
// before it looks at the arguments (no GPU needed).
TEST(GroupedRefusal, AStepWithoutAGroupedGemmIsNotSupported) {
  std::vector<StepInfo> steps;
  for (const StepInfo& step : registered_steps()) {
    StepInfo without = step;
    without.launch_grouped = nullptr;  // a grouped step too, with its launcher taken away
    steps.push_back(without);
  }
  ASSERT_FALSE(steps.empty());
  GroupedGemmArgs args;  // nothing valid: it must not matter
  for (const StepInfo& step : steps) {
    const Status s = run_grouped_step(step, args);
    EXPECT_EQ(s.code, StatusCode::kNotSupported) << step.folder << ": " << s.message;
    EXPECT_EQ(s.message.rfind(step.folder + ": ", 0), 0u) << s.message;
    EXPECT_NE(s.message.find("no grouped GEMM"), std::string::npos) << s.message;
  }
}

// The parameter of the tests of one step (a struct of this file, so that gtest prints it by PrintTo).
struct GroupedStep {
  StepInfo step;
};

void PrintTo(const GroupedStep& s, std::ostream* out) { *out << s.step.folder; }

std::vector<GroupedStep> every_grouped_step() {
  std::vector<GroupedStep> steps;
  for (const StepInfo& step : grouped_steps()) steps.push_back({step});
  return steps;
}

std::string step_name(const ::testing::TestParamInfo<GroupedStep>& info) { return info.param.step.folder; }

class GroupedStepTest : public ::testing::TestWithParam<GroupedStep> {
 protected:
  void SetUp() override {
    if (!test_support::require_step_gpu_or_skip(GetParam().step)) return;
    test_support::record_run_seed();
  }
};

// An int array on the device, for counts or indices that break the layout.
DeviceBuffer<int> device_ints(const std::vector<int>& values) {
  DeviceBuffer<int> device(values.size());
  FP8GEMM_CUDA_CHECK(cudaMemcpy(device.get(), values.data(), device.bytes(), cudaMemcpyHostToDevice));
  return device;
}

// The step refuses `args` with `code` and a message holding every one of
// `parts`, and writes nothing.
void expect_refused(const StepInfo& step, const GroupedProblem& p, const GroupedGemmArgs& args, StatusCode code,
                    const std::vector<std::string>& parts, const std::string& what) {
  p.poison_d();
  const Status s = run_grouped_step(step, args);
  FP8GEMM_CUDA_CHECK(cudaGetLastError());
  FP8GEMM_CUDA_CHECK(cudaStreamSynchronize(args.gemm.stream));
  EXPECT_EQ(s.code, code) << what << ": " << status_code_name(s.code) << ": " << s.message;
  for (const std::string& part : parts) {
    EXPECT_NE(s.message.find(part), std::string::npos)
        << what << ": the message does not name \"" << part << "\": " << s.message;
  }
  EXPECT_TRUE(nothing_written(p)) << what;
}

class GroupedRefusalTest : public GroupedStepTest {};

TEST_P(GroupedRefusalTest, MaskedCountsOutsideTheCapacityAreRefusedByName) {
  const StepInfo& step = GetParam().step;
  CudaStream stream;
  const GroupedProblem p(GroupedShape{kMasked, {3, 8}, 256, 256, 8}, ProblemOptions{}, stream.get());
  GroupedGemmArgs args = p.args();
  const DeviceBuffer<int> above = device_ints({3, 9});
  args.masked_counts = above.get();
  expect_refused(step, p, args, StatusCode::kInvalidArgument, {"masked_counts[1] = 9", "capacity = 8"},
                 "counts {3, 9}, capacity 8");
  const DeviceBuffer<int> negative = device_ints({-1, 8});
  args.masked_counts = negative.get();
  expect_refused(step, p, args, StatusCode::kInvalidArgument, {"masked_counts[0] = -1"}, "counts {-1, 8}");
}

TEST_P(GroupedRefusalTest, AnMIndicesThatBreaksTheLayoutIsRefusedByName) {
  const StepInfo& step = GetParam().step;
  CudaStream stream;
  // Expert 0: rows 0-99, padding 100-127; expert 1: rows 128-255.
  const GroupedProblem p(GroupedShape{kContiguous, {100, 128}, 256, 256}, ProblemOptions{}, stream.get());
  struct Break {
    int64_t row;
    int expert;
    std::string why;
  };
  const Break breaks[] = {
      {100, 1, "another expert in expert 0's block"},
      {120, 0, "expert 0 again after its padding"},
      {128, 2, "an expert >= experts"},
      {128, -7, "an expert below -1"},
  };
  for (const Break& b : breaks) {
    std::vector<int> indices = p.row_experts();
    indices[static_cast<size_t>(b.row)] = b.expert;
    const DeviceBuffer<int> broken = device_ints(indices);
    GroupedGemmArgs args = p.args();
    args.m_indices = broken.get();
    expect_refused(step, p, args, StatusCode::kInvalidArgument,
                   {"m_indices is not a contiguous layout at row " + std::to_string(b.row)}, b.why);
  }
}

TEST_P(GroupedRefusalTest, ArgumentsThatDoNotFitTheLayoutAreRefusedByName) {
  const StepInfo& step = GetParam().step;
  CudaStream stream;
  const GroupedProblem contiguous(GroupedShape{kContiguous, {100, 128}, 256, 256}, ProblemOptions{}, stream.get());
  const GroupedProblem masked(GroupedShape{kMasked, {3, 8}, 256, 256, 8}, ProblemOptions{}, stream.get());

  GroupedGemmArgs args = contiguous.args();
  args.gemm.m = 200;  // the rows that exist, and fewer than the segments: not a multiple of 128
  expect_refused(step, contiguous, args, StatusCode::kInvalidArgument, {"multiple of 128", "M = 200"},
                 "contiguous M = 200");

  args = masked.args();
  args.gemm.m = 15;  // not experts * capacity = 16
  expect_refused(step, masked, args, StatusCode::kInvalidArgument, {"experts * capacity", "M = 15"}, "masked M = 15");

  for (const GroupedProblem* p : {&contiguous, &masked}) {
    args = p->args();
    args.gemm.split_k = 2;
    expect_refused(step, *p, args, StatusCode::kInvalidArgument, {"split_k must be 0 or 1", "got 2"}, "split_k = 2");
    args = p->args();
    args.experts = 0;
    expect_refused(step, *p, args, StatusCode::kInvalidArgument, {"experts >= 1", "got 0"}, "experts = 0");
  }
}

INSTANTIATE_TEST_SUITE_P(EveryGroupedStep, GroupedRefusalTest, ::testing::ValuesIn(every_grouped_step()), step_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(GroupedRefusalTest);

// -----------------------------------------------------------------------------
// check_on_host = false: the kernel's own clamping
// -----------------------------------------------------------------------------

class GroupedUncheckedTest : public GroupedStepTest {};

// Counts above the capacity are clamped to it: the last expert's rows end
// where D ends, so a kernel that wrote past its capacity would hit the guard
// band; a negative count computes nothing. No error is returned.
TEST_P(GroupedUncheckedTest, MaskedCountsAreClampedToTheCapacity) {
  const StepInfo& step = GetParam().step;
  CudaStream stream;
  ProblemOptions options;
  options.seed = case_seed("unchecked_masked");
  // Expert 1 owns 8 valid rows of A: clamped to the capacity, its count means all of them.
  const GroupedProblem p(GroupedShape{kMasked, {3, 8}, 256, 384, 8}, options, stream.get());
  struct Counts {
    std::vector<int> counts;
    std::vector<int> written_experts;  // the experts whose rows are computed
  };
  const Counts cases[] = {
      {{3, 9}, {0, 1}},
      {{3, 1 << 30}, {0, 1}},
      {{-5, 8}, {1}},
  };
  for (const Counts& c : cases) {
    const std::string description = what(step, p.shape(), options) + ", unchecked counts {" +
                                    std::to_string(c.counts[0]) + ", " + std::to_string(c.counts[1]) + "}";
    p.poison_d();
    const DeviceBuffer<int> counts = device_ints(c.counts);
    GroupedGemmArgs args = p.args();
    args.masked_counts = counts.get();
    args.check_on_host = false;
    if (!launch_or_refuse_by_name(step, p, args, /*must_run=*/true, description)) continue;
    std::vector<int> row_experts = p.row_experts();
    for (int& e : row_experts) {
      if (std::find(c.written_experts.begin(), c.written_experts.end(), e) == c.written_experts.end()) e = -1;
    }
    const DSnapshot d = snapshot(p);
    EXPECT_TRUE(only_valid_rows_written(p, d, row_experts)) << description;
    expect_experts_match_reference(p, d, accumulation_of(step, false), c.written_experts, description, options.seed);
  }
}

// A block of m_indices naming an expert outside [0, experts) is padding to
// the kernel: never written. The rest is computed as usual.
TEST_P(GroupedUncheckedTest, ContiguousExpertsOutsideTheRangeAreSkipped) {
  const StepInfo& step = GetParam().step;
  CudaStream stream;
  ProblemOptions options;
  options.seed = case_seed("unchecked_contiguous");
  const GroupedProblem p(GroupedShape{kContiguous, {128, 128, 100}, 256, 384}, options, stream.get());
  for (int outside : {3, 1000, -2}) {
    const std::string description =
        what(step, p.shape(), options) + ", unchecked: expert 1's block named " + std::to_string(outside);
    p.poison_d();
    std::vector<int> indices = p.row_experts();
    std::fill_n(indices.begin() + p.first_row(1), p.expert_rows(1), outside);
    const DeviceBuffer<int> broken = device_ints(indices);
    GroupedGemmArgs args = p.args();
    args.m_indices = broken.get();
    args.check_on_host = false;
    if (!launch_or_refuse_by_name(step, p, args, /*must_run=*/true, description)) continue;
    std::vector<int> row_experts = p.row_experts();
    std::fill_n(row_experts.begin() + p.first_row(1), p.expert_rows(1), -1);
    const DSnapshot d = snapshot(p);
    EXPECT_TRUE(only_valid_rows_written(p, d, row_experts)) << description;
    expect_experts_match_reference(p, d, accumulation_of(step, false), {0, 2}, description, options.seed);
  }
}

INSTANTIATE_TEST_SUITE_P(EveryGroupedStep, GroupedUncheckedTest, ::testing::ValuesIn(every_grouped_step()), step_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(GroupedUncheckedTest);

}  // namespace
}  // namespace fp8gemm
