// What every registered step promises, checked without a GPU
// (common/api/registry.h): its must-run list (StepInfo::must_run) holds
// 4096 x 4096 x 4096 and 64 x 2112 x 7168 for every format pair and output
// type its constraints accept, and its constraints accept every case on the
// list, so that a step that refuses what it must run fails here, on any
// machine, before its GPU tests fail on one with a GPU. Also the helpers that
// build the list and the registry's JSON (`fp8gemm --list=json`).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "common/api/gemm.h"
#include "common/api/registry.h"

namespace fp8gemm {
namespace {

// Non-null, 4096-byte aligned, never dereferenced.
const uint8_t* const kDummyA = reinterpret_cast<const uint8_t*>(uintptr_t{0x10000});
const uint8_t* const kDummyB = reinterpret_cast<const uint8_t*>(uintptr_t{0x20000});
void* const kDummyD = reinterpret_cast<void*>(uintptr_t{0x30000});

constexpr Fp8Format kE4M3 = Fp8Format::kE4M3;
constexpr Fp8Format kE5M2 = Fp8Format::kE5M2;
constexpr OutputType kBF16 = OutputType::kBF16;
constexpr OutputType kFP32 = OutputType::kFP32;

// The shapes every step must run (M, N, K): the ladder's and the decode shape.
constexpr int64_t kRequiredShapes[][3] = {{4096, 4096, 4096}, {64, 2112, 7168}};

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

uint32_t format_bit(Fp8Format f) { return 1u << static_cast<int>(f); }

// The arguments the GPU tests give a case: tight leading dimensions, aligned pointers.
GemmArgs tight_args(const GemmShape& s) {
  const GemmBuffers buffers{kDummyA, s.k, 1.0f, kDummyB, s.k, 1.0f, kDummyD, s.n};
  return make_gemm_args(s, buffers, /*stream=*/nullptr);
}

bool lists(const StepInfo& step, const GemmShape& shape) {
  for (const GemmShape& listed : step.must_run) {
    if (same_gemm_shape(listed, shape)) return true;
  }
  return false;
}

// What is wrong with a step's must-run list, one message each (none: all is
// well): a step that claims no format or output, a required case missing from
// the list (derived here from the constraints, independently of
// default_must_run), a case of the list that breaks the API contract or that
// the step's constraints refuse.
std::vector<std::string> must_run_problems(const StepInfo& step) {
  std::vector<std::string> problems;
  const StepConstraints& c = step.constraints;
  if ((c.formats & ((1u << kNumFp8Formats) - 1)) == 0) problems.push_back(step.folder + " accepts no FP8 format");
  if ((c.outputs & 0b11u) == 0) problems.push_back(step.folder + " accepts no output type");
  for (const auto& s : kRequiredShapes) {
    for (int a = 0; a < kNumFp8Formats; ++a) {
      for (int b = 0; b < kNumFp8Formats; ++b) {
        if (!(c.formats >> a & 1u) || !(c.formats >> b & 1u) || (a != b && !c.mixed_formats)) continue;
        for (OutputType d : {kBF16, kFP32}) {
          if (!(c.outputs >> static_cast<int>(d) & 1u)) continue;
          const GemmShape required{s[0], s[1], s[2], Fp8Format(a), Fp8Format(b), d};
          if (!lists(step, required)) {
            problems.push_back(step.folder + " does not list " + gemm_shape_name(required) + " in must_run");
          }
        }
      }
    }
  }
  for (const GemmShape& shape : step.must_run) {
    const GemmArgs args = tight_args(shape);
    const Status valid = validate_gemm_args(args);
    const Status accepted = valid.ok() ? check_step_constraints(step, args) : valid;
    if (!accepted.ok()) {
      problems.push_back(step.folder + " must run " + gemm_shape_name(shape) + " but refuses it: " + accepted.message);
    }
  }
  return problems;
}

Status count_nothing(const GemmArgs&) { return Status::success(); }

StepInfo fake_step(const StepConstraints& constraints, const StepOptions& options = StepOptions{}) {
  return make_step_info(99, "99_fake", "a step that launches nothing", &count_nothing, constraints, Accumulation::kFp32,
                        options);
}

// -----------------------------------------------------------------------------
// Every registered step
// -----------------------------------------------------------------------------

TEST(MustRunList, EveryStepListsTheLadderAndDecodeShapesForEveryFormatPairAndOutputItAccepts) {
  ASSERT_FALSE(registered_steps().empty());
  for (const StepInfo& step : registered_steps()) {
    EXPECT_FALSE(step.must_run.empty()) << step.folder;
    for (const std::string& problem : must_run_problems(step)) {
      if (!contains(problem, "refuses")) ADD_FAILURE() << problem;
    }
  }
}

TEST(MustRunList, EveryStepsConstraintsAcceptEveryCaseItMustRun) {
  for (const StepInfo& step : registered_steps()) {
    for (const GemmShape& shape : step.must_run) {
      const GemmArgs args = tight_args(shape);
      EXPECT_TRUE(validate_gemm_args(args).ok()) << step.folder << " " << gemm_shape_name(shape);
      const Status accepted = check_step_constraints(step, args);
      EXPECT_TRUE(accepted.ok()) << step.folder << " must run " << gemm_shape_name(shape)
                                 << " (StepInfo::must_run), but its constraints refuse it: " << accepted.message;
    }
  }
}

TEST(RequiredComputeCapability, TensorCoreStepsNeedComputeCapability90AndEveryRequirementIsOne) {
  for (const StepInfo& step : registered_steps()) {
    const int cc = step.required_compute_capability;
    EXPECT_TRUE(cc == 0 || (cc >= 30 && cc % 10 < 10)) << step.folder << ": " << cc;
    // kTensorCorePromoted is Hopper's FP8 wgmma (gemm.h), which exists in sm_90a code only.
    if (step.accumulation == Accumulation::kTensorCorePromoted) {
      EXPECT_EQ(cc, 90) << step.folder;
    }
  }
}

// -----------------------------------------------------------------------------
// The checks above catch a step that refuses what it must run
// -----------------------------------------------------------------------------

TEST(MustRunList, AStepWhoseConstraintsRefuseEverythingIsCaught) {
  StepConstraints c;
  c.k_multiple = int64_t{1} << 40;
  const std::vector<std::string> problems = must_run_problems(fake_step(c));
  ASSERT_EQ(problems.size(), default_must_run(c).size());  // every case refused
  EXPECT_TRUE(contains(problems[0], "99_fake must run 4096x4096x4096 but refuses it"));
  EXPECT_TRUE(contains(problems[0], "K % 1099511627776 == 0 required, got K = 4096")) << problems[0];
}

TEST(MustRunList, AStepWhoseAlignmentRefusesTheDecodeShapeIsCaught) {
  StepConstraints c;
  c.m_multiple = 128;  // refuses M = 64
  const std::vector<std::string> problems = must_run_problems(fake_step(c));
  ASSERT_EQ(problems.size(), default_must_run(c).size() / 2);
  for (const std::string& p : problems) EXPECT_TRUE(contains(p, "must run 64x2112x7168")) << p;
}

TEST(MustRunList, AShortenedListIsCaught) {
  StepInfo step = fake_step(StepConstraints{});
  step.must_run.pop_back();  // 64x2112x7168 e5m2fnuz x e5m2fnuz -> fp32
  const std::vector<std::string> problems = must_run_problems(step);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0], "99_fake does not list 64x2112x7168_e5m2fnuz_e5m2fnuz_fp32 in must_run");
}

TEST(MustRunList, AStepThatAcceptsNoFormatIsCaught) {
  StepConstraints c;
  c.formats = 0;
  const StepInfo step = fake_step(c);
  EXPECT_TRUE(step.must_run.empty());
  const std::vector<std::string> problems = must_run_problems(step);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0], "99_fake accepts no FP8 format");
}

// -----------------------------------------------------------------------------
// default_must_run, make_step_info, the names
// -----------------------------------------------------------------------------

TEST(DefaultMustRun, EveryPairOfEveryFormatAndBothOutputsOnBothShapes) {
  const std::vector<GemmShape> cases = default_must_run(StepConstraints{});
  ASSERT_EQ(cases.size(), 2u * 16u * 2u);
  EXPECT_TRUE(same_gemm_shape(cases.front(), GemmShape{4096, 4096, 4096, kE4M3, kE4M3, kBF16}));
  EXPECT_TRUE(same_gemm_shape(cases[1], GemmShape{4096, 4096, 4096, kE4M3, kE4M3, kFP32}));
  EXPECT_TRUE(same_gemm_shape(cases[2], GemmShape{4096, 4096, 4096, kE4M3, kE5M2, kBF16}));
  EXPECT_TRUE(same_gemm_shape(cases[32], GemmShape{64, 2112, 7168, kE4M3, kE4M3, kBF16}));
  EXPECT_TRUE(
      same_gemm_shape(cases.back(), GemmShape{64, 2112, 7168, Fp8Format::kE5M2Fnuz, Fp8Format::kE5M2Fnuz, kFP32}));
}

TEST(DefaultMustRun, FollowsTheFormatsMixingAndOutputsOfTheConstraints) {
  StepConstraints c;
  c.formats = format_bit(kE4M3) | format_bit(kE5M2);
  EXPECT_EQ(default_must_run(c).size(), 2u * 4u * 2u);  // the Hopper steps
  c.mixed_formats = false;
  EXPECT_EQ(default_must_run(c).size(), 2u * 2u * 2u);
  c.outputs = 0b10;  // FP32 only
  const std::vector<GemmShape> cases = default_must_run(c);
  ASSERT_EQ(cases.size(), 2u * 2u);
  for (const GemmShape& s : cases) {
    EXPECT_EQ(s.d_type, kFP32);
    EXPECT_EQ(s.a_format, s.b_format);
  }
  c.k_multiple = 16;  // multiples do not shrink the list: the step must accept these shapes
  EXPECT_EQ(default_must_run(c).size(), 2u * 2u);
}

TEST(MakeStepInfo, CopiesTheArgumentsAndListsTheDefaultCasesThenTheExtraOnes) {
  StepOptions options;
  options.required_compute_capability = 90;
  const GemmShape extra{128, 7168, 16384, kE4M3, kE4M3, kFP32};
  const GemmShape repeated{4096, 4096, 4096, kE4M3, kE4M3, kBF16};  // already a default case
  options.extra_must_run = {extra, repeated};
  StepConstraints c;
  c.operand_alignment_bytes = 16;
  const StepInfo step =
      make_step_info(7, "07_x", "title", &count_nothing, c, Accumulation::kTensorCorePromoted, options);
  EXPECT_EQ(step.number, 7);
  EXPECT_EQ(step.folder, "07_x");
  EXPECT_EQ(step.title, "title");
  EXPECT_EQ(step.launch, &count_nothing);
  EXPECT_EQ(step.constraints.operand_alignment_bytes, 16);
  EXPECT_EQ(step.accumulation, Accumulation::kTensorCorePromoted);
  EXPECT_EQ(step.required_compute_capability, 90);
  const std::vector<GemmShape> defaults = default_must_run(c);
  ASSERT_EQ(step.must_run.size(), defaults.size() + 1);
  for (size_t i = 0; i < defaults.size(); ++i) EXPECT_TRUE(same_gemm_shape(step.must_run[i], defaults[i]));
  EXPECT_TRUE(same_gemm_shape(step.must_run.back(), extra));
}

TEST(MakeStepInfo, WithoutOptionsAStepRunsOnAnyGpu) {
  EXPECT_EQ(fake_step(StepConstraints{}).required_compute_capability, 0);
}

TEST(GemmShapeName, NamesSizesFormatsUnlessBothE4m3AndFp32Output) {
  EXPECT_EQ(gemm_shape_name(GemmShape{4096, 4096, 4096}), "4096x4096x4096");
  EXPECT_EQ(gemm_shape_name(GemmShape{255, 1000, 1008, kE5M2, kE4M3, kFP32}), "255x1000x1008_e5m2_e4m3_fp32");
  EXPECT_EQ(gemm_shape_name(GemmShape{1, 2, 3, kE4M3, Fp8Format::kE4M3Fnuz, kBF16}), "1x2x3_e4m3_e4m3fnuz");
}

TEST(GemmShapeName, SameGemmShapeComparesEveryField) {
  const GemmShape base{1, 2, 3, kE4M3, kE5M2, kBF16};
  EXPECT_TRUE(same_gemm_shape(base, base));
  for (int field = 0; field < 6; ++field) {
    GemmShape other = base;
    if (field == 0) other.m = 9;
    if (field == 1) other.n = 9;
    if (field == 2) other.k = 9;
    if (field == 3) other.a_format = kE5M2;
    if (field == 4) other.b_format = kE4M3;
    if (field == 5) other.d_type = kFP32;
    EXPECT_FALSE(same_gemm_shape(base, other)) << field;
  }
}

TEST(AccumulationName, NamesEveryAccumulation) {
  EXPECT_STREQ(accumulation_name(Accumulation::kFp32), "fp32");
  EXPECT_STREQ(accumulation_name(Accumulation::kTensorCorePromoted), "tensor_core_promoted");
  EXPECT_STREQ(accumulation_name(Accumulation::kTensorCoreFast), "tensor_core_fast");
}

// -----------------------------------------------------------------------------
// The registry as JSON
// -----------------------------------------------------------------------------

TEST(StepsJson, WritesEveryFieldOfAStep) {
  StepConstraints c;
  c.k_multiple = 16;
  c.operand_alignment_bytes = 16;
  c.formats = format_bit(kE4M3) | format_bit(kE5M2);
  c.mixed_formats = false;
  c.outputs = 0b01;
  const StepInfo step = make_step_info(3, "03_x", "say \"hi\"\\", &count_nothing, c, Accumulation::kTensorCorePromoted,
                                       StepOptions{90, {}});
  const std::string json = steps_json({step}, {"steps/03_y: number 3 is taken"});
  EXPECT_TRUE(contains(json, "\"number\": 3,")) << json;
  EXPECT_TRUE(contains(json, "\"folder\": \"03_x\",")) << json;
  EXPECT_TRUE(contains(json, "\"title\": \"say \\\"hi\\\"\\\\\",")) << json;
  EXPECT_TRUE(contains(json, "\"accumulation\": \"tensor_core_promoted\",")) << json;
  EXPECT_TRUE(contains(json, "\"required_compute_capability\": 90,")) << json;
  EXPECT_TRUE(contains(json, "\"k_multiple\": 16,")) << json;
  EXPECT_TRUE(contains(json, "\"operand_alignment_bytes\": 16,")) << json;
  EXPECT_TRUE(contains(json, "\"formats\": [\"e4m3\", \"e5m2\"],")) << json;
  EXPECT_TRUE(contains(json, "\"mixed_formats\": false,")) << json;
  EXPECT_TRUE(contains(json, "\"outputs\": [\"bf16\"]")) << json;
  EXPECT_TRUE(contains(json, "\"accepts\": \"" + describe_constraints(c) + "\",")) << json;
  EXPECT_TRUE(contains(json,
                       "{\"m\": 4096, \"n\": 4096, \"k\": 4096, \"a_format\": \"e4m3\", \"b_format\": "
                       "\"e4m3\", \"d_type\": \"bf16\"},"))
      << json;
  EXPECT_TRUE(contains(json,
                       "{\"m\": 64, \"n\": 2112, \"k\": 7168, \"a_format\": \"e5m2\", \"b_format\": "
                       "\"e5m2\", \"d_type\": \"bf16\"}\n"))
      << json;
  EXPECT_TRUE(contains(json, "\"refused\": [\"steps/03_y: number 3 is taken\"]")) << json;
}

TEST(StepsJson, ListsEveryRegisteredStepOnceAndIsTheSameEachTime) {
  const std::string json = steps_json(registered_steps(), refused_steps());
  for (const StepInfo& step : registered_steps()) {
    const std::string folder = "\"folder\": \"" + step.folder + "\"";
    const size_t first = json.find(folder);
    EXPECT_NE(first, std::string::npos) << step.folder;
    EXPECT_EQ(json.find(folder, first + 1), std::string::npos) << step.folder;
  }
  EXPECT_EQ(json, steps_json(registered_steps(), refused_steps()));
  EXPECT_EQ(json.back(), '\n');
}

TEST(StepsJson, AnEmptyRegistryIsValidJson) {
  EXPECT_EQ(steps_json({}, {}).substr(steps_json({}, {}).find("\"steps\"")), "\"steps\": [],\n  \"refused\": []\n}\n");
}

}  // namespace
}  // namespace fp8gemm
