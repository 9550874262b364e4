// The GEMM API contract (common/api/gemm.h) and the step registry
// (common/api/registry.h): every invalid argument and every unsupported case is
// an error status whose message names the rule, returned before any launch.
// Nothing here touches a GPU: the pointers are dummies that are never read.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <ostream>
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

// A valid call: 64 x 32 x 64, tight leading dimensions.
GemmArgs valid_args() {
  const GemmShape shape{64, 32, 64};
  const GemmBuffers buffers{kDummyA, 64, 1.0f, kDummyB, 64, 1.0f, kDummyD, 32};
  return make_gemm_args(shape, buffers, /*stream=*/nullptr);
}

TEST(MakeGemmArgs, CopiesEveryFieldOfTheProblem) {
  const GemmShape shape{7, 5, 3, Fp8Format::kE5M2, Fp8Format::kE4M3Fnuz, OutputType::kFP32};
  const GemmBuffers buffers{kDummyA, 11, 0.5f, kDummyB, 13, 0.25f, kDummyD, 17};
  const GemmArgs args = make_gemm_args(shape, buffers, /*stream=*/nullptr, /*fast_accumulation=*/true);
  EXPECT_EQ(args.m, 7);
  EXPECT_EQ(args.n, 5);
  EXPECT_EQ(args.k, 3);
  EXPECT_EQ(args.a_format, Fp8Format::kE5M2);
  EXPECT_EQ(args.b_format, Fp8Format::kE4M3Fnuz);
  EXPECT_EQ(args.d_type, OutputType::kFP32);
  EXPECT_EQ(args.a, kDummyA);
  EXPECT_EQ(args.lda, 11);
  EXPECT_EQ(args.a_scale, 0.5f);
  EXPECT_EQ(args.b, kDummyB);
  EXPECT_EQ(args.ldb, 13);
  EXPECT_EQ(args.b_scale, 0.25f);
  EXPECT_EQ(args.d, kDummyD);
  EXPECT_EQ(args.ldd, 17);
  EXPECT_TRUE(args.fast_accumulation);
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// A step whose launcher only counts its calls, to see whether run_step got
// as far as launching.
int g_launches = 0;
Status count_launch(const GemmArgs&) {
  ++g_launches;
  return Status::success();
}
Status fail_launch(const GemmArgs&) { return Status::error(StatusCode::kRuntimeError, "launch failed"); }

StepInfo fake_step(const StepConstraints& constraints = {}, StepLauncher launch = &count_launch) {
  return StepInfo{99, "99_fake", "counts its launches", constraints, launch};
}

uint32_t format_bit(Fp8Format f) { return 1u << static_cast<int>(f); }

// -----------------------------------------------------------------------------
// Every broken rule of validate_gemm_args
// -----------------------------------------------------------------------------

struct BrokenRule {
  std::string name;                   // the test name's suffix
  void (*apply)(GemmArgs& args);      // breaks one rule of valid_args()
  std::vector<std::string> mentions;  // what the message must say
};

// What gtest prints for a parameter: its name.
void PrintTo(const BrokenRule& rule, std::ostream* out) { *out << rule.name; }

constexpr int64_t kTwoTo32 = int64_t{1} << 32;
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInfinity = std::numeric_limits<float>::infinity();

const std::vector<BrokenRule>& broken_rules() {
  static const std::vector<BrokenRule> rules = {
      {"NullA", [](GemmArgs& g) { g.a = nullptr; }, {"A must not be a null pointer"}},
      {"NullB", [](GemmArgs& g) { g.b = nullptr; }, {"B must not be a null pointer"}},
      {"NullD", [](GemmArgs& g) { g.d = nullptr; }, {"D must not be a null pointer"}},
      {"ZeroM", [](GemmArgs& g) { g.m = 0; }, {"M, N and K must be >= 1", "M = 0"}},
      {"NegativeM", [](GemmArgs& g) { g.m = -3; }, {"M, N and K must be >= 1", "M = -3"}},
      {"ZeroN", [](GemmArgs& g) { g.n = 0; }, {"M, N and K must be >= 1", "N = 0"}},
      {"NegativeN", [](GemmArgs& g) { g.n = -1; }, {"M, N and K must be >= 1", "N = -1"}},
      {"ZeroK", [](GemmArgs& g) { g.k = 0; }, {"M, N and K must be >= 1", "K = 0"}},
      {"NegativeK", [](GemmArgs& g) { g.k = -64; }, {"M, N and K must be >= 1", "K = -64"}},
      {"LdaBelowK", [](GemmArgs& g) { g.lda = 63; }, {"lda >= K", "lda = 63"}},
      {"LdbBelowK", [](GemmArgs& g) { g.ldb = 0; }, {"ldb >= K", "ldb = 0"}},
      {"LddBelowN", [](GemmArgs& g) { g.ldd = 31; }, {"ldd >= N", "ldd = 31"}},
      {"NanAScale", [](GemmArgs& g) { g.a_scale = kNaN; }, {"a_scale and b_scale must be finite"}},
      {"InfiniteBScale", [](GemmArgs& g) { g.b_scale = kInfinity; }, {"a_scale and b_scale must be finite"}},
      {"NegativeInfiniteAScale", [](GemmArgs& g) { g.a_scale = -kInfinity; }, {"a_scale and b_scale must be finite"}},
      {"UnknownAFormat", [](GemmArgs& g) { g.a_format = static_cast<Fp8Format>(4); }, {"a_format and b_format"}},
      {"UnknownBFormat", [](GemmArgs& g) { g.b_format = static_cast<Fp8Format>(255); }, {"a_format and b_format"}},
      {"UnknownOutputType",
       [](GemmArgs& g) { g.d_type = static_cast<OutputType>(4); },
       {"d_type must be one of bf16, fp32, e4m3, e5m2"}},
      {"UnknownScaleGranularity",
       [](GemmArgs& g) { g.b_scale_granularity = static_cast<ScaleGranularity>(4); },
       {"a_scale_granularity and b_scale_granularity"}},
      {"BlockScalesWithoutPointer",
       [](GemmArgs& g) { g.a_scale_granularity = ScaleGranularity::kGroup1x128; },
       {"A's 1x128 scales need a device pointer (a_scales)"}},
      {"RowScalesWithoutPointer",
       [](GemmArgs& g) { g.b_scale_granularity = ScaleGranularity::kPerRow; },
       {"B's per_row scales need a device pointer (b_scales)"}},
      {"HostScaleBesideAScalePointer",
       [](GemmArgs& g) {
         g.a_scales = reinterpret_cast<const float*>(uintptr_t{256});
         g.a_scale = 2.0f;
       },
       {"A's scales come from device memory, so its host scale must be 1", "got 2"}},
      {"UnknownBiasType", [](GemmArgs& g) { g.bias_type = static_cast<BiasType>(2); }, {"bias_type must be"}},
      {"UnknownActivation",
       [](GemmArgs& g) { g.activation = static_cast<Activation>(3); },
       {"activation must be none, gelu or gelu_erf"}},
      {"DScaleForBf16Output", [](GemmArgs& g) { g.d_scale = 2.0f; }, {"d_scale and d_amax are for FP8 D only"}},
      {"AmaxForFp32Output",
       [](GemmArgs& g) {
         g.d_type = OutputType::kFP32;
         g.ldd = 64;
         g.d_amax = reinterpret_cast<float*>(uintptr_t{256});
       },
       {"d_scale and d_amax are for FP8 D only", "d_amax pointer"}},
      {"ZeroDScaleForFp8Output",
       [](GemmArgs& g) {
         g.d_type = OutputType::kE4M3;
         g.d_scale = 0.0f;
       },
       {"d_scale must be finite and > 0 for FP8 D"}},
      {"NanDScaleForFp8Output",
       [](GemmArgs& g) {
         g.d_type = OutputType::kE5M2;
         g.d_scale = kNaN;
       },
       {"d_scale must be finite and > 0 for FP8 D"}},
      {"ExtentOfAOverflows",
       [](GemmArgs& g) {
         g.m = kTwoTo32;
         g.lda = kTwoTo32;
       },
       {"overflows a 64-bit offset"}},
      {"ExtentOfBOverflows",
       [](GemmArgs& g) {
         g.n = kTwoTo32;
         g.ldb = kTwoTo32;
         g.ldd = kTwoTo32;
       },
       {"overflows a 64-bit offset"}},
      {"ExtentOfDOverflows",
       [](GemmArgs& g) {
         g.m = kTwoTo32;
         g.ldd = kTwoTo32;
       },
       {"overflows a 64-bit offset"}},
  };
  return rules;
}

class BrokenRuleTest : public ::testing::TestWithParam<BrokenRule> {
 protected:
  GemmArgs broken_args() const {
    GemmArgs args = valid_args();
    GetParam().apply(args);
    return args;
  }
  void expect_message_names_the_rule(const Status& status) const {
    EXPECT_EQ(status.code, StatusCode::kInvalidArgument) << status.message;
    for (const std::string& part : GetParam().mentions) {
      EXPECT_TRUE(contains(status.message, part))
          << "message \"" << status.message << "\" should say \"" << part << "\"";
    }
  }
};

INSTANTIATE_TEST_SUITE_P(EveryRule, BrokenRuleTest, ::testing::ValuesIn(broken_rules()),
                         [](const ::testing::TestParamInfo<BrokenRule>& info) { return info.param.name; });

TEST_P(BrokenRuleTest, ValidateGemmArgsReturnsInvalidArgumentNamingTheRule) {
  expect_message_names_the_rule(validate_gemm_args(broken_args()));
}

TEST_P(BrokenRuleTest, RunStepReturnsTheSameErrorWithoutLaunching) {
  g_launches = 0;
  const Status status = run_step(fake_step(), broken_args());
  expect_message_names_the_rule(status);
  EXPECT_EQ(status.message, validate_gemm_args(broken_args()).message);
  EXPECT_EQ(g_launches, 0);
}

TEST_P(BrokenRuleTest, EveryRegisteredStepRejectsIt) {
  for (const StepInfo& step : registered_steps()) {
    SCOPED_TRACE(step.folder);
    expect_message_names_the_rule(run_step(step, broken_args()));
  }
}

// Valid arguments that ask for what a step's constraints do not list: the
// step must refuse them by name (kNotSupported), never launch and ignore them.
struct UnlistedFeature {
  std::string name;
  void (*apply)(GemmArgs& args);
  bool (*listed)(const StepConstraints& c);  // the step accepts it
  std::string mention;                       // what the refusal must say
};

const float* const kDummyScales = reinterpret_cast<const float*>(uintptr_t{512});

const std::vector<UnlistedFeature>& unlisted_features() {
  static const std::vector<UnlistedFeature> features = {
      {"Fp8OutputE4M3",
       [](GemmArgs& g) {
         g.d_type = OutputType::kE4M3;
         g.ldd = 64;
       },
       [](const StepConstraints& c) { return (c.outputs >> 2 & 1u) != 0; }, "output type e4m3 not supported"},
      {"Fp8OutputE5M2",
       [](GemmArgs& g) {
         g.d_type = OutputType::kE5M2;
         g.ldd = 64;
       },
       [](const StepConstraints& c) { return (c.outputs >> 3 & 1u) != 0; }, "output type e5m2 not supported"},
      {"AGroupScales",
       [](GemmArgs& g) {
         g.a_scale_granularity = ScaleGranularity::kGroup1x128;
         g.a_scales = kDummyScales;
       },
       [](const StepConstraints& c) { return (c.a_scales >> 2 & 1u) != 0; },
       "A's scale granularity 1x128 not supported"},
      {"BBlockScales",
       [](GemmArgs& g) {
         g.b_scale_granularity = ScaleGranularity::kBlock128x128;
         g.b_scales = kDummyScales;
       },
       [](const StepConstraints& c) { return (c.b_scales >> 3 & 1u) != 0; },
       "B's scale granularity 128x128 not supported"},
      {"BRowScales",
       [](GemmArgs& g) {
         g.b_scale_granularity = ScaleGranularity::kPerRow;
         g.b_scales = kDummyScales;
       },
       [](const StepConstraints& c) { return (c.b_scales >> 1 & 1u) != 0; },
       "B's scale granularity per_row not supported"},
      {"APerTensorScaleFromDevice", [](GemmArgs& g) { g.a_scales = kDummyScales; },
       [](const StepConstraints& c) { return c.scale_pointers; },
       "A's per-tensor scale from device memory not supported"},
      {"Bias", [](GemmArgs& g) { g.bias = kDummyScales; },
       [](const StepConstraints& c) { return (c.epilogue & kEpilogueBias) != 0; }, "bias not supported"},
      {"GeluTanh", [](GemmArgs& g) { g.activation = Activation::kGeluTanh; },
       [](const StepConstraints& c) { return (c.epilogue & kEpilogueGeluTanh) != 0; }, "activation gelu not supported"},
      {"GeluErf", [](GemmArgs& g) { g.activation = Activation::kGeluErf; },
       [](const StepConstraints& c) { return (c.epilogue & kEpilogueGeluErf) != 0; },
       "activation gelu_erf not supported"},
      {"SplitK2", [](GemmArgs& g) { g.split_k = 2; }, [](const StepConstraints& c) { return c.max_split_k >= 2; },
       "split_k = 2 not supported (this step does not split K)"},
      {"SplitK9", [](GemmArgs& g) { g.split_k = 9; }, [](const StepConstraints& c) { return c.max_split_k >= 9; },
       "split_k = 9 not supported"},
      {"SplitKReductionCluster", [](GemmArgs& g) { g.split_k_reduction = SplitKReduction::kCluster; },
       [](const StepConstraints& c) { return (c.split_k_reductions >> 1 & 1u) != 0; },
       "split_k_reduction cluster not supported"},
      {"SplitKReductionWorkspace", [](GemmArgs& g) { g.split_k_reduction = SplitKReduction::kWorkspace; },
       [](const StepConstraints& c) { return (c.split_k_reductions >> 2 & 1u) != 0; },
       "split_k_reduction workspace not supported"},
  };
  return features;
}

TEST(CheckStepConstraints, EveryStepRefusesByNameWhatItDoesNotList) {
  int refusals = 0;
  for (const UnlistedFeature& feature : unlisted_features()) {
    GemmArgs args = valid_args();
    feature.apply(args);
    ASSERT_TRUE(validate_gemm_args(args).ok()) << feature.name << ": " << validate_gemm_args(args).message;
    for (const StepInfo& step : registered_steps()) {
      if (feature.listed(step.constraints)) continue;
      const Status status = check_step_constraints(step, args);
      EXPECT_EQ(status.code, StatusCode::kNotSupported) << step.folder << ", " << feature.name;
      EXPECT_NE(status.message.find(feature.mention), std::string::npos)
          << step.folder << ", " << feature.name << ": " << status.message;
      ++refusals;
    }
  }
  EXPECT_GT(refusals, 0);
}

TEST(ValidateGemmArgs, AcceptsAValidCall) {
  const Status status = validate_gemm_args(valid_args());
  EXPECT_TRUE(status.ok()) << status.message;
  EXPECT_TRUE(status.message.empty());
}

TEST(ValidateGemmArgs, AcceptsLeadingDimensionsLargerThanRequired) {
  GemmArgs args = valid_args();
  args.lda = 80;
  args.ldb = 1000;
  args.ldd = 33;
  EXPECT_TRUE(validate_gemm_args(args).ok());
}

TEST(ValidateGemmArgs, AcceptsOneByOneByOne) {
  GemmArgs args = valid_args();
  args.m = args.n = args.k = args.lda = args.ldb = args.ldd = 1;
  EXPECT_TRUE(validate_gemm_args(args).ok());
}

// -----------------------------------------------------------------------------
// check_step_constraints: each constraint, when broken, is named
// -----------------------------------------------------------------------------

// The status of a fake step with `constraints` on valid_args() changed by `change`.
template <typename Change>
Status check_fake(const StepConstraints& constraints, Change change) {
  GemmArgs args = valid_args();
  change(args);
  return check_step_constraints(fake_step(constraints), args);
}

void expect_not_supported_naming(const Status& status, const std::string& part) {
  EXPECT_EQ(status.code, StatusCode::kNotSupported) << status.message;
  EXPECT_TRUE(contains(status.message, "99_fake: ")) << "message should name the step: " << status.message;
  EXPECT_TRUE(contains(status.message, part)) << "message \"" << status.message << "\" should say \"" << part << "\"";
}

TEST(ValidateGemmArgs, RejectsANegativeSplitK) {
  GemmArgs args = valid_args();
  args.split_k = -1;
  const Status status = validate_gemm_args(args);
  EXPECT_EQ(status.code, StatusCode::kInvalidArgument);
  EXPECT_NE(status.message.find("split_k must be >= 0"), std::string::npos) << status.message;
}

TEST(ValidateGemmArgs, RejectsAnUnknownSplitKReduction) {
  GemmArgs args = valid_args();
  args.split_k_reduction = static_cast<SplitKReduction>(7);
  const Status status = validate_gemm_args(args);
  EXPECT_EQ(status.code, StatusCode::kInvalidArgument);
  EXPECT_NE(status.message.find("split_k_reduction must be"), std::string::npos) << status.message;
}

TEST(CheckStepConstraints, SplitKAboveTheStepsMostIsRefusedByName) {
  StepConstraints c;
  c.max_split_k = 8;
  expect_not_supported_naming(check_fake(c, [](GemmArgs& g) { g.split_k = 9; }),
                              "split_k = 9 not supported (this step splits K into at most 8 slices)");
  EXPECT_TRUE(check_fake(c, [](GemmArgs& g) { g.split_k = 8; }).ok());
}

TEST(CheckStepConstraints, AcceptsWhatTheDefaultConstraintsAllow) {
  EXPECT_TRUE(check_step_constraints(fake_step(), valid_args()).ok());
}

TEST(CheckStepConstraints, MMultipleRejectsOtherM) {
  StepConstraints c;
  c.m_multiple = 128;
  expect_not_supported_naming(check_fake(c, [](GemmArgs& g) { g.m = 200; }), "M % 128 == 0 required, got M = 200");
}

TEST(CheckStepConstraints, NMultipleRejectsOtherN) {
  StepConstraints c;
  c.n_multiple = 64;
  expect_not_supported_naming(check_fake(c, [](GemmArgs& g) { g.n = g.ldd = 17; }), "N % 64 == 0 required, got N = 17");
}

TEST(CheckStepConstraints, KMultipleRejectsRaggedK) {
  StepConstraints c;
  c.k_multiple = 16;
  expect_not_supported_naming(check_fake(c, [](GemmArgs& g) { g.k = g.lda = g.ldb = 1004; }),
                              "K % 16 == 0 required, got K = 1004");
}

TEST(CheckStepConstraints, AlignmentRejectsAMisalignedPointer) {
  StepConstraints c;
  c.operand_alignment_bytes = 16;
  expect_not_supported_naming(check_fake(c, [](GemmArgs& g) { g.b = kDummyB + 1; }), "16-byte boundaries");
}

TEST(CheckStepConstraints, AlignmentRejectsAnLdaThatIsNotAMultiple) {
  StepConstraints c;
  c.operand_alignment_bytes = 16;
  expect_not_supported_naming(check_fake(c, [](GemmArgs& g) { g.lda = 72; }), "lda = 72");
}

TEST(CheckStepConstraints, AlignmentRejectsRowsOfDThatAreNotAligned) {
  StepConstraints c;
  c.operand_alignment_bytes = 16;
  // 36 BF16 elements = 72 bytes: not a multiple of 16 (36 FP32 = 144 would be).
  expect_not_supported_naming(check_fake(c, [](GemmArgs& g) { g.ldd = 36; }), "ldd * 2 a multiple of 16");
  EXPECT_TRUE(check_fake(c, [](GemmArgs& g) {
                g.ldd = 36;
                g.d_type = OutputType::kFP32;
              }).ok());
}

TEST(CheckStepConstraints, FormatSubsetRejectsAnotherFormat) {
  StepConstraints c;
  c.formats = format_bit(Fp8Format::kE4M3);
  expect_not_supported_naming(check_fake(c, [](GemmArgs& g) { g.b_format = Fp8Format::kE5M2; }),
                              "FP8 format e5m2 not supported");
  expect_not_supported_naming(check_fake(c, [](GemmArgs& g) { g.a_format = Fp8Format::kE4M3Fnuz; }),
                              "FP8 format e4m3fnuz not supported");
}

TEST(CheckStepConstraints, SameFormatRuleRejectsMixedFormats) {
  StepConstraints c;
  c.mixed_formats = false;
  expect_not_supported_naming(check_fake(c, [](GemmArgs& g) { g.b_format = Fp8Format::kE5M2; }),
                              "A and B must have the same FP8 format, got e4m3 and e5m2");
}

TEST(CheckStepConstraints, Bf16OnlyRejectsFp32Output) {
  StepConstraints c;
  c.outputs = 1u << static_cast<int>(OutputType::kBF16);
  expect_not_supported_naming(check_fake(c, [](GemmArgs& g) { g.d_type = OutputType::kFP32; }),
                              "output type fp32 not supported");
}

TEST(CheckStepConstraints, AcceptsACallThatMeetsEveryConstraint) {
  const StepConstraints c{128, 64, 16, 16, format_bit(Fp8Format::kE4M3), false, 0b01};
  const Status status = check_fake(c, [](GemmArgs& g) {
    g.m = 256;
    g.n = g.ldd = 128;
    g.k = g.lda = g.ldb = 512;
  });
  EXPECT_TRUE(status.ok()) << status.message;
}

// -----------------------------------------------------------------------------
// run_step: validation, then constraints, then the launcher
// -----------------------------------------------------------------------------

TEST(RunStep, ReturnsNotSupportedWithoutLaunchingWhenAConstraintFails) {
  StepConstraints c;
  c.k_multiple = 128;
  g_launches = 0;
  const Status status = run_step(fake_step(c), valid_args());
  EXPECT_EQ(status.code, StatusCode::kNotSupported);
  EXPECT_TRUE(contains(status.message, "K % 128 == 0")) << status.message;
  EXPECT_EQ(g_launches, 0);
}

TEST(RunStep, ReportsInvalidArgumentsBeforeUnsupportedOnes) {
  StepConstraints c;
  c.k_multiple = 128;
  GemmArgs args = valid_args();
  args.a = nullptr;
  EXPECT_EQ(run_step(fake_step(c), args).code, StatusCode::kInvalidArgument);
}

TEST(RunStep, LaunchesOnceWhenEverythingHolds) {
  g_launches = 0;
  EXPECT_TRUE(run_step(fake_step(), valid_args()).ok());
  EXPECT_EQ(g_launches, 1);
}

TEST(RunStep, ReturnsTheLaunchersStatusPrefixedWithTheStepsFolder) {
  const Status status = run_step(fake_step({}, &fail_launch), valid_args());
  EXPECT_EQ(status.code, StatusCode::kRuntimeError);
  EXPECT_EQ(status.message, "99_fake: launch failed");
}

// -----------------------------------------------------------------------------
// The registry
// -----------------------------------------------------------------------------

TEST(Registry, FindsStepOneByNumberPaddedNumberAndFolder) {
  const StepInfo* by_number = find_step("1");
  ASSERT_NE(by_number, nullptr);
  EXPECT_EQ(by_number->folder, "01_naive");
  EXPECT_EQ(find_step("01"), by_number);
  EXPECT_EQ(find_step("01_naive"), by_number);
}

TEST(Registry, FindsNothingForUnknownKeys) {
  EXPECT_EQ(find_step(""), nullptr);
  EXPECT_EQ(find_step("99"), nullptr);
  EXPECT_EQ(find_step("naive"), nullptr);
  EXPECT_EQ(find_step("1x"), nullptr);
}

TEST(Registry, ListsStepsInIncreasingOrderOfNumber) {
  const std::vector<StepInfo>& steps = registered_steps();
  ASSERT_FALSE(steps.empty());
  for (size_t i = 1; i < steps.size(); ++i) {
    EXPECT_LT(steps[i - 1].number, steps[i].number) << steps[i - 1].folder << " before " << steps[i].folder;
  }
}

TEST(Registry, EveryStepHasAFolderNamedAfterItsNumberATitleAndALauncher) {
  for (const StepInfo& step : registered_steps()) {
    const std::string prefix = (step.number < 10 ? "0" : "") + std::to_string(step.number) + "_";
    EXPECT_EQ(step.folder.rfind(prefix, 0), 0u) << step.folder << " should start with " << prefix;
    EXPECT_FALSE(step.title.empty()) << step.folder;
    EXPECT_NE(step.launch, nullptr) << step.folder;
    EXPECT_EQ(find_step(step.folder), &step);
  }
}

TEST(Registry, RefusedNoStepOfThisBuild) {
  // A step folder copied without a new number ("05_mine" beside
  // "05_matrix_cores") is refused at start-up; this test names both folders.
  for (const std::string& refusal : refused_steps()) ADD_FAILURE() << refusal;
}

TEST(Registry, EveryStepSaysHowItAccumulates) {
  for (const StepInfo& step : registered_steps()) {
    EXPECT_NE(step.accumulation, Accumulation::kTensorCoreFast)
        << step.folder << ": register kTensorCorePromoted; fast accumulation is a run-time switch";
    EXPECT_EQ(accumulation_of(step, false), step.accumulation) << step.folder;
  }
}

TEST(StepRegistry, RefusesASecondStepWithATakenNumberNamingBothFolders) {
  StepRegistry registry;
  StepInfo first = fake_step();
  first.number = 5;
  first.folder = "05_matrix_cores";
  StepInfo copy = first;
  copy.folder = "05_mine";
  EXPECT_TRUE(registry.add(first));
  EXPECT_FALSE(registry.add(copy));
  ASSERT_EQ(registry.steps().size(), 1u);
  EXPECT_EQ(registry.steps()[0].folder, "05_matrix_cores");
  ASSERT_EQ(registry.refusals().size(), 1u);
  EXPECT_TRUE(contains(registry.refusals()[0], "steps/05_mine")) << registry.refusals()[0];
  EXPECT_TRUE(contains(registry.refusals()[0], "steps/05_matrix_cores")) << registry.refusals()[0];
}

TEST(StepRegistry, KeepsStepsInLadderOrderWhateverTheRegistrationOrder) {
  StepRegistry registry;
  for (int number : {9, 1, 5}) {
    StepInfo step = fake_step();
    step.number = number;
    step.folder = "0" + std::to_string(number) + "_x";
    EXPECT_TRUE(registry.add(step));
  }
  ASSERT_EQ(registry.steps().size(), 3u);
  EXPECT_EQ(registry.steps()[0].number, 1);
  EXPECT_EQ(registry.steps()[1].number, 5);
  EXPECT_EQ(registry.steps()[2].number, 9);
  EXPECT_TRUE(registry.refusals().empty());
}

TEST(AccumulationOf, TensorCoreStepsHonourFastAccumulationFp32StepsIgnoreIt) {
  StepInfo fma = fake_step();
  StepInfo tensor = fake_step();
  tensor.accumulation = Accumulation::kTensorCorePromoted;
  EXPECT_EQ(accumulation_of(fma, true), Accumulation::kFp32);
  EXPECT_EQ(accumulation_of(tensor, false), Accumulation::kTensorCorePromoted);
  EXPECT_EQ(accumulation_of(tensor, true), Accumulation::kTensorCoreFast);
}

TEST(DescribeConstraints, DefaultConstraintsListEveryFormatAndOutput) {
  EXPECT_EQ(describe_constraints(StepConstraints{}), "formats e4m3, e5m2, e4m3fnuz, e5m2fnuz; output bf16, fp32");
}

TEST(DescribeConstraints, NamesEveryConstraintThatIsSet) {
  const StepConstraints c{64, 128, 16, 16, format_bit(Fp8Format::kE4M3) | format_bit(Fp8Format::kE5M2), false, 0b01};
  EXPECT_EQ(describe_constraints(c),
            "M % 64 == 0; N % 128 == 0; K % 16 == 0; 16-byte aligned rows; formats e4m3, e5m2; "
            "A and B in the same format; output bf16");
}

TEST(StatusCodeName, NamesEveryCode) {
  EXPECT_STREQ(status_code_name(StatusCode::kOk), "ok");
  EXPECT_STREQ(status_code_name(StatusCode::kInvalidArgument), "invalid argument");
  EXPECT_STREQ(status_code_name(StatusCode::kNotSupported), "not supported");
  EXPECT_STREQ(status_code_name(StatusCode::kRuntimeError), "runtime error");
}

}  // namespace
}  // namespace fp8gemm
