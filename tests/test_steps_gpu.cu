// Every registered step on the suite's shapes (docs/conventions.md), against the FP64
// reference. For each (step, case) the step either computes D within the
// tolerance of docs/tolerances.md, writing every element of D and nothing
// around it, or, where its constraints exclude the case, returns
// kNotSupported with the message that names the constraint and leaves D
// untouched. Tests are named <step folder>_<M>x<N>x<K>[_<formats>][_fp32].
//
// Must-run cases (StepInfo::must_run: 4096^3 and 64x2112x7168 with every
// format pair and output a step's constraints accept) are run by MustRunTest,
// and by MustRunFastAccumulationTest for the tensor-core steps: there, and in
// every other test whose case is a must-run case of the step, a refusal is a
// failure.
//
// Inputs are fresh random normals in every run (the seed is printed; set
// FP8GEMM_TEST_SEED to replay it) and are made once per shape: every step and
// output type of a shape sees the same inputs and the same reference. Large
// shapes are compared on 256 rows of D; the NaN poison and the guard band are
// checked on all of it.
//
// Without a usable GPU every test skips, saying why; with FP8GEMM_REQUIRE_GPU=1
// it fails instead. A step whose StepInfo::required_compute_capability this GPU
// lacks (a Hopper step elsewhere) is skipped in both modes.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/api/cuda_check.h"
#include "common/api/gemm.h"
#include "common/api/registry.h"
#include "common/check/check.h"
#include "common/check/reference.h"
#include "support/check_result.h"
#include "support/device_matrices.h"
#include "support/random_problem.h"
#include "support/step_test.h"

namespace fp8gemm {
namespace {

using test_support::every_step_with;
using test_support::Layout;
using test_support::OutputSnapshot;
using test_support::ProblemShape;
using test_support::Refusal;
using test_support::step_case_name;
using test_support::StepCase;
using test_support::StepTest;

constexpr Fp8Format kE4M3 = Fp8Format::kE4M3;
constexpr Fp8Format kE5M2 = Fp8Format::kE5M2;
constexpr Fp8Format kE4M3Fnuz = Fp8Format::kE4M3Fnuz;
constexpr Fp8Format kE5M2Fnuz = Fp8Format::kE5M2Fnuz;
constexpr OutputType kBF16 = OutputType::kBF16;
constexpr OutputType kFP32 = OutputType::kFP32;

// -----------------------------------------------------------------------------
// The cases
// -----------------------------------------------------------------------------

// Adds a case unless it is already listed (the decode and DeepSeek-V3 lists overlap).
class CaseList {
 public:
  void add(int64_t m, int64_t n, int64_t k, OutputType d_type = kBF16, Fp8Format a = kE4M3, Fp8Format b = kE4M3) {
    const GemmShape c{m, n, k, a, b, d_type};
    const auto same = [&](const GemmShape& listed) { return same_gemm_shape(listed, c); };
    if (std::none_of(cases_.begin(), cases_.end(), same)) cases_.push_back(c);
  }
  const std::vector<GemmShape>& cases() const { return cases_; }

 private:
  std::vector<GemmShape> cases_;
};

// The suite's shapes: squares, ragged, decode, DeepSeek-V3. Sized so that one step's run stays around a
// minute on an H200 with a 16-core host (the reference of each shape is
// computed once, for the first step).
std::vector<GemmShape> suite_cases() {
  CaseList list;
  // Squares.
  for (int64_t s : {128, 256, 1024, 2048, 4096}) list.add(s, s, s);
  for (int64_t s : {128, 1024}) list.add(s, s, s, kFP32);

  // Ragged: each of 1, 17, 255, 1000, 1008, 4097 in the M, N and K place
  // (cycled forwards and backwards) and as cubes, with both output types.
  const int64_t kRagged[][3] = {
      {1, 1, 1},     {17, 17, 17},    {255, 255, 255},   {1000, 1000, 1000}, {1008, 1008, 1008}, {4097, 4097, 4097},
      {1, 17, 255},  {17, 255, 1000}, {255, 1000, 1008}, {1000, 1008, 4097}, {1008, 4097, 1},    {4097, 1, 17},
      {17, 1, 4097}, {255, 17, 1},    {1000, 255, 17},   {1008, 1000, 255},  {4097, 1008, 1000}, {1, 4097, 1008},
  };
  for (const auto& s : kRagged) {
    list.add(s[0], s[1], s[2], kBF16);
    list.add(s[0], s[1], s[2], kFP32);
  }

  // Other formats: e5m2 and mixed, on an aligned shape (BF16 out) and a ragged
  // one (FP32 out); and the FNUZ formats of AMD CDNA3, which the Hopper
  // tensor-core steps must refuse.
  const Fp8Format kOtherFormats[][2] = {{kE5M2, kE5M2}, {kE4M3, kE5M2}, {kE5M2, kE4M3}};
  for (const auto& ab : kOtherFormats) {
    list.add(256, 512, 1024, kBF16, ab[0], ab[1]);
    list.add(255, 1000, 1008, kFP32, ab[0], ab[1]);
  }
  list.add(255, 1000, 1008, kFP32, kE4M3Fnuz, kE4M3Fnuz);
  list.add(255, 1000, 1008, kFP32, kE5M2Fnuz, kE5M2Fnuz);
  list.add(255, 1000, 1008, kBF16, kE4M3Fnuz, kE5M2Fnuz);

  // Taller than one grid of 128-row tiles (gridDim.y <= 65535): launchers
  // that put row tiles on y must split the launch.
  list.add(65535 * 128 + 129, 3, 32);

  // Decode: few rows of activations against a large weight.
  for (int64_t m : {1, 2, 4, 8, 16, 32, 64, 128}) list.add(m, 2112, 7168);
  for (int64_t m : {1, 16, 128}) list.add(m, 7168, 7168);
  list.add(1, 2112, 7168, kFP32);

  // DeepSeek-V3 (DeepGEMM's tables).
  const int64_t kDeepSeekNK[][2] = {{2112, 7168},  {24576, 1536}, {32768, 512},
                                    {7168, 16384}, {4096, 7168},  {7168, 2048}};
  for (int64_t m : {64, 128, 4096}) {
    for (const auto& nk : kDeepSeekNK) list.add(m, nk[0], nk[1]);
  }
  return list.cases();
}

// Cases run with leading dimensions larger than the matrices.
std::vector<GemmShape> padded_layout_cases() {
  return {{17, 255, 1000, kE4M3, kE4M3, kBF16}, {17, 255, 1000, kE4M3, kE4M3, kFP32}, {256, 512, 1024}};
}

// Cases run with GemmArgs::fast_accumulation set. 1000 x 2052 x 520 (e5m2 A) takes step 12's
// 128 x 256 tile of fast accumulation: FP32 D stored from the registers, ragged M, N and K.
std::vector<GemmShape> fast_accumulation_cases() {
  return {{64, 2112, 7168, kE4M3, kE4M3, kFP32},
          {128, 7168, 16384, kE4M3, kE4M3, kFP32},
          {1000, 2052, 520, kE5M2, kE4M3, kFP32}};
}

// Every step with each of its must-run cases; with `tensor_cores_only`, only
// the steps for which fast accumulation changes what they compute.
std::vector<StepCase> every_must_run_case(bool tensor_cores_only) {
  std::vector<StepCase> all;
  for (const StepInfo& step : registered_steps()) {
    if (tensor_cores_only && !uses_tensor_cores(step)) continue;
    for (const GemmShape& c : step.must_run) all.push_back({step, c});
  }
  return all;
}

// -----------------------------------------------------------------------------
// Running one case
// -----------------------------------------------------------------------------

// Runs `step` on case `c` with the run's random inputs for its shape (see
// the top of the file). Returns D, or nothing when the step refused the case
// as allowed or the run failed (reported).
std::optional<OutputSnapshot> run_case(const StepInfo& step, const GemmShape& c, const Layout& layout,
                                       bool fast_accumulation, Refusal refusal,
                                       const test_support::ReferencedProblem& problem) {
  const DeviceBuffer<uint8_t> a = test_support::upload_operand(*problem.a, layout.lda);
  const DeviceBuffer<uint8_t> b = test_support::upload_operand(*problem.b, layout.ldb);
  const test_support::DeviceOperands operands{a.get(), layout.lda, problem.a->scales[0],
                                              b.get(), layout.ldb, problem.b->scales[0]};
  std::optional<OutputSnapshot> out;
  test_support::run_step_checked(step, c, operands, layout.ldd, fast_accumulation, refusal, &out);
  return out;
}

// The problem of case `c`'s shape for this run, with its reference.
std::shared_ptr<const test_support::ReferencedProblem> problem_of(const GemmShape& c) {
  return test_support::referenced_problem(ProblemShape{c.m, c.n, c.k, c.a_format, c.b_format});
}

// Runs `step` on case `c` and checks the outcome (see the top of the file).
void run_and_check(const StepInfo& step, const GemmShape& c, const Layout& layout, bool fast_accumulation) {
  const auto problem = problem_of(c);
  const Refusal refusal = test_support::is_must_run(step, c) ? Refusal::kFailure : Refusal::kAllowed;
  const std::optional<OutputSnapshot> out = run_case(step, c, layout, fast_accumulation, refusal, *problem);
  if (!out) return;  // refused as allowed, or failed (reported)
  EXPECT_TRUE(test_support::matches_reference(*out, *problem, accumulation_of(step, fast_accumulation)));
}

// -----------------------------------------------------------------------------
// The tests
// -----------------------------------------------------------------------------

class StepShapeTest : public StepTest {};

TEST_P(StepShapeTest, MatchesTheReferenceOrRefusesWithTheConstraintNamed) {
  const StepCase& c = GetParam();
  run_and_check(c.step, c.gemm, test_support::tight_layout(c.gemm), /*fast_accumulation=*/false);
}

INSTANTIATE_TEST_SUITE_P(EveryStep, StepShapeTest, ::testing::ValuesIn(every_step_with(suite_cases())), step_case_name);

class PaddedLayoutTest : public StepTest {};

TEST_P(PaddedLayoutTest, HonoursLeadingDimensionsLargerThanTheMatrices) {
  const StepCase& c = GetParam();
  run_and_check(c.step, c.gemm, test_support::padded_layout(c.gemm), /*fast_accumulation=*/false);
}

INSTANTIATE_TEST_SUITE_P(EveryStep, PaddedLayoutTest, ::testing::ValuesIn(every_step_with(padded_layout_cases())),
                         [](const ::testing::TestParamInfo<StepCase>& info) {
                           return step_case_name(info) +
                                  test_support::layout_suffix(test_support::padded_layout(info.param.gemm));
                         });

class FastAccumulationTest : public StepTest {};

TEST_P(FastAccumulationTest, StaysWithinTheFastAccumulationBound) {
  const StepCase& c = GetParam();
  run_and_check(c.step, c.gemm, test_support::tight_layout(c.gemm), /*fast_accumulation=*/true);
}

INSTANTIATE_TEST_SUITE_P(EveryStep, FastAccumulationTest,
                         ::testing::ValuesIn(every_step_with(fast_accumulation_cases())), step_case_name);

// The promotion witness: with FP32 output at K = 16384, a tensor-core step
// run without promotion lands at least 5x beyond the calibrated norm bound of
// promoted accumulation. So the check that a promoted step is held to would
// fail it if its promotion were lost (docs/tolerances.md).
class PromotionWitnessTest : public StepTest {};

constexpr double kWitnessFactor = 5.0;

TEST_P(PromotionWitnessTest, FastAccumulationFailsThePromotedBoundFiveTimesOver) {
  const StepCase& c = GetParam();
  const auto problem = problem_of(c.gemm);
  const std::optional<OutputSnapshot> out = run_case(c.step, c.gemm, test_support::tight_layout(c.gemm),
                                                     /*fast_accumulation=*/true, Refusal::kFailure, *problem);
  ASSERT_TRUE(out.has_value());
  const ReferenceProduct& ref = problem->reference;
  const std::vector<float> values = out->rows(ref.rows);
  // Fast accumulation must pass its own check...
  const OutputCheck fast = check_rows(values, ref, c.gemm.d_type, c.gemm.k, Accumulation::kTensorCoreFast);
  EXPECT_TRUE(fast.passed) << describe_check(fast, values, ref);
  // ...and be far outside the promoted one.
  const OutputCheck promoted = check_rows(values, ref, c.gemm.d_type, c.gemm.k, Accumulation::kTensorCorePromoted);
  ASSERT_TRUE(promoted.tolerance.calibrated) << "no calibrated bound at K = " << c.gemm.k;
  const int64_t elements = promoted.result.metrics.elements;
  const double bound =
      promoted.tolerance.calibrated_norm_bound(promoted.result.statistics.output_rounding_norm, elements);
  const double rho = promoted.result.metrics.norm_relative_error;
  EXPECT_GE(rho, kWitnessFactor * bound) << "fast accumulation's norm-relative error " << rho
                                         << " is not 5x the promoted bound " << bound << " (" << elements
                                         << " elements)";
  EXPECT_FALSE(promoted.passed);
}

std::vector<StepCase> promotion_witness_cases() {
  std::vector<StepCase> all;
  for (const StepInfo& step : registered_steps()) {
    if (uses_tensor_cores(step)) all.push_back({step, {128, 7168, 16384, kE4M3, kE4M3, kFP32}});
  }
  return all;
}

INSTANTIATE_TEST_SUITE_P(EveryStep, PromotionWitnessTest, ::testing::ValuesIn(promotion_witness_cases()),
                         step_case_name);

// The cases each step must run (StepInfo::must_run): a refusal is a failure.
class MustRunTest : public StepTest {};

TEST_P(MustRunTest, RunsItAndMatchesTheReference) {
  const StepCase& c = GetParam();
  run_and_check(c.step, c.gemm, test_support::tight_layout(c.gemm), /*fast_accumulation=*/false);
}

INSTANTIATE_TEST_SUITE_P(EveryStep, MustRunTest, ::testing::ValuesIn(every_must_run_case(false)), step_case_name);

// The same with fast accumulation, for the steps it changes (tensor cores).
class MustRunFastAccumulationTest : public StepTest {};

TEST_P(MustRunFastAccumulationTest, RunsItWithinTheFastAccumulationBound) {
  const StepCase& c = GetParam();
  run_and_check(c.step, c.gemm, test_support::tight_layout(c.gemm), /*fast_accumulation=*/true);
}

INSTANTIATE_TEST_SUITE_P(EveryStep, MustRunFastAccumulationTest, ::testing::ValuesIn(every_must_run_case(true)),
                         step_case_name);

}  // namespace
}  // namespace fp8gemm
