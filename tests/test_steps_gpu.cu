// Every registered step on the suite's shapes (docs/conventions.md), against the FP64
// reference. For each (step, case) the step either computes D within the
// tolerance of docs/tolerances.md, writing every element of D and nothing
// around it, or, where its constraints exclude the case, returns
// kNotSupported with the message that names the constraint and leaves D
// untouched. Tests are named <step folder>_<M>x<N>x<K>[_<formats>][_fp32].
//
// Inputs are fresh random normals in every run (the seed is printed; set
// FP8GEMM_TEST_SEED to replay it) and are made once per shape: every step and
// output type of a shape sees the same inputs and the same reference. Large
// shapes are compared on 256 rows of D; the NaN poison and the guard band are
// checked on all of it.
#include <gtest/gtest.h>

#include <algorithm>
#include <ostream>
#include <string>
#include <vector>

#include "common/api/cuda_check.h"
#include "common/api/gemm.h"
#include "common/api/registry.h"
#include "common/check/reference.h"
#include "support/check_result.h"
#include "support/cuda_stream.h"
#include "support/device_matrices.h"
#include "support/random_problem.h"

namespace fp8gemm {
namespace {

using test_support::GuardedOutput;
using test_support::OutputSnapshot;
using test_support::ProblemShape;

constexpr Fp8Format kE4M3 = Fp8Format::kE4M3;
constexpr Fp8Format kE5M2 = Fp8Format::kE5M2;
constexpr Fp8Format kE4M3Fnuz = Fp8Format::kE4M3Fnuz;
constexpr Fp8Format kE5M2Fnuz = Fp8Format::kE5M2Fnuz;
constexpr OutputType kBF16 = OutputType::kBF16;
constexpr OutputType kFP32 = OutputType::kFP32;

// -----------------------------------------------------------------------------
// The cases
// -----------------------------------------------------------------------------

// One GEMM a step is asked to compute.
struct GemmCase {
  ProblemShape shape;
  OutputType d_type = kBF16;
};

bool operator==(const GemmCase& x, const GemmCase& y) {
  return x.shape.m == y.shape.m && x.shape.n == y.shape.n && x.shape.k == y.shape.k &&
         x.shape.a_format == y.shape.a_format && x.shape.b_format == y.shape.b_format && x.d_type == y.d_type;
}

// "4097x17x255", then "_e5m2_e4m3" unless both formats are e4m3, then "_fp32" for FP32 output.
std::string case_name(const GemmCase& c) {
  const ProblemShape& s = c.shape;
  std::string name = std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k);
  if (s.a_format != kE4M3 || s.b_format != kE4M3) {
    name += std::string("_") + fp8_name(s.a_format) + "_" + fp8_name(s.b_format);
  }
  if (c.d_type == kFP32) name += "_fp32";
  return name;
}

// Adds a case unless it is already listed (the decode and DeepSeek-V3 lists overlap).
class CaseList {
 public:
  void add(int64_t m, int64_t n, int64_t k, OutputType d_type = kBF16, Fp8Format a = kE4M3, Fp8Format b = kE4M3) {
    const GemmCase c{ProblemShape{m, n, k, a, b}, d_type};
    if (std::find(cases_.begin(), cases_.end(), c) == cases_.end()) cases_.push_back(c);
  }
  const std::vector<GemmCase>& cases() const { return cases_; }

 private:
  std::vector<GemmCase> cases_;
};

// The suite's shapes: squares, ragged, decode, DeepSeek-V3. Sized so that one step's run stays around a
// minute on an H200 with a 16-core host (the reference of each shape is
// computed once, for the first step).
std::vector<GemmCase> suite_cases() {
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
std::vector<GemmCase> padded_layout_cases() {
  return {{{17, 255, 1000}, kBF16}, {{17, 255, 1000}, kFP32}, {{256, 512, 1024}, kBF16}};
}

// Cases run with GemmArgs::fast_accumulation set.
std::vector<GemmCase> fast_accumulation_cases() { return {{{64, 2112, 7168}, kFP32}, {{128, 7168, 16384}, kFP32}}; }

// A step and a case; the parameter of every test below.
struct StepCase {
  StepInfo step;
  GemmCase gemm;
};

void PrintTo(const StepCase& c, std::ostream* out) { *out << c.step.folder << " " << case_name(c.gemm); }

std::string step_case_name(const ::testing::TestParamInfo<StepCase>& info) {
  return info.param.step.folder + "_" + case_name(info.param.gemm);
}

std::vector<StepCase> every_step_with(const std::vector<GemmCase>& cases) {
  std::vector<StepCase> all;
  for (const StepInfo& step : registered_steps()) {
    for (const GemmCase& c : cases) all.push_back({step, c});
  }
  return all;
}

// -----------------------------------------------------------------------------
// Running one case
// -----------------------------------------------------------------------------

struct Layout {
  int64_t lda, ldb, ldd;
};

Layout tight_layout(const ProblemShape& s) { return {s.k, s.k, s.n}; }

// Larger than needed, and still rows on 16-byte boundaries so that the
// steps that need aligned rows take them.
Layout padded_layout(const ProblemShape& s) {
  const int64_t k16 = (s.k + 15) / 16 * 16;
  const int64_t n8 = (s.n + 7) / 8 * 8;
  return {k16 + 16, k16 + 32, n8 + 8};
}

using Stream = test_support::CudaStream;

// Runs `step` on case `c` and checks the outcome (see the top of the file).
void run_and_check(const StepInfo& step, const GemmCase& c, const Layout& layout, bool fast_accumulation) {
  const ProblemShape& shape = c.shape;
  const auto problem = test_support::referenced_problem(shape);
  const DeviceBuffer<uint8_t> a = test_support::upload_operand(*problem->a, layout.lda);
  const DeviceBuffer<uint8_t> b = test_support::upload_operand(*problem->b, layout.ldb);
  GuardedOutput d(shape.m, shape.n, layout.ldd, c.d_type);
  Stream stream;
  d.poison(stream.get());

  const GemmShape gemm_shape{shape.m, shape.n, shape.k, shape.a_format, shape.b_format, c.d_type};
  const GemmBuffers buffers{a.get(), layout.lda, problem->a->scales[0], b.get(), layout.ldb, problem->b->scales[0],
                            d.d(),   layout.ldd};
  const GemmArgs args = make_gemm_args(gemm_shape, buffers, stream.get(), fast_accumulation);

  const Status accepted = check_step_constraints(step, args);
  const Status status = run_step(step, args);
  FP8GEMM_CUDA_CHECK(cudaGetLastError());
  FP8GEMM_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
  const OutputSnapshot out = d.download(stream.get());
  EXPECT_TRUE(out.guard_untouched());

  if (!accepted.ok()) {
    // The step does not take this case: it must say so, say why, and leave D alone.
    ASSERT_EQ(status.code, StatusCode::kNotSupported) << status_code_name(status.code) << ": " << status.message;
    EXPECT_FALSE(status.message.empty());
    EXPECT_EQ(status.message, accepted.message);
    EXPECT_TRUE(out.nothing_written());
    return;
  }
  ASSERT_TRUE(status.ok()) << step.folder << " refused a case that its constraints accept ("
                           << describe_constraints(step.constraints) << "): " << status_code_name(status.code) << ": "
                           << status.message;
  EXPECT_TRUE(out.every_element_written());
  EXPECT_TRUE(test_support::matches_reference(out, *problem, accumulation_of(step, fast_accumulation)));
}

// -----------------------------------------------------------------------------
// The tests
// -----------------------------------------------------------------------------

class GpuStepTest : public ::testing::TestWithParam<StepCase> {
 protected:
  void SetUp() override {
    std::string reason;
    if (!cuda_device_available(&reason)) GTEST_SKIP() << reason;
    test_support::record_run_seed();
  }
};

class StepShapeTest : public GpuStepTest {};

TEST_P(StepShapeTest, MatchesTheReferenceOrRefusesWithTheConstraintNamed) {
  const StepCase& c = GetParam();
  run_and_check(c.step, c.gemm, tight_layout(c.gemm.shape), /*fast_accumulation=*/false);
}

INSTANTIATE_TEST_SUITE_P(EveryStep, StepShapeTest, ::testing::ValuesIn(every_step_with(suite_cases())), step_case_name);

class PaddedLayoutTest : public GpuStepTest {};

TEST_P(PaddedLayoutTest, HonoursLeadingDimensionsLargerThanTheMatrices) {
  const StepCase& c = GetParam();
  run_and_check(c.step, c.gemm, padded_layout(c.gemm.shape), /*fast_accumulation=*/false);
}

INSTANTIATE_TEST_SUITE_P(EveryStep, PaddedLayoutTest, ::testing::ValuesIn(every_step_with(padded_layout_cases())),
                         [](const ::testing::TestParamInfo<StepCase>& info) {
                           const Layout l = padded_layout(info.param.gemm.shape);
                           return step_case_name(info) + "_lda" + std::to_string(l.lda) + "_ldb" +
                                  std::to_string(l.ldb) + "_ldd" + std::to_string(l.ldd);
                         });

class FastAccumulationTest : public GpuStepTest {};

TEST_P(FastAccumulationTest, StaysWithinTheFastAccumulationBound) {
  const StepCase& c = GetParam();
  run_and_check(c.step, c.gemm, tight_layout(c.gemm.shape), /*fast_accumulation=*/true);
}

INSTANTIATE_TEST_SUITE_P(EveryStep, FastAccumulationTest,
                         ::testing::ValuesIn(every_step_with(fast_accumulation_cases())), step_case_name);

}  // namespace
}  // namespace fp8gemm
