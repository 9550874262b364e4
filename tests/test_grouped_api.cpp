// The grouped GEMM's contract on the host (common/api/grouped.h), no GPU:
// validate_grouped_args refuses each broken rule with kInvalidArgument and a
// message naming it, and accepts valid arguments of both layouts; and
// run_grouped_step (common/api/registry.h) refuses what it must before a
// step's grouped launcher runs. Device pointers are fake addresses:
// validation never dereferences them (the checks that read m_indices or
// masked_counts, check_grouped_device_data, are tests/test_grouped_gpu.cu's).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "common/api/gemm.h"
#include "common/api/grouped.h"
#include "common/api/registry.h"

namespace fp8gemm {
namespace {

// Addresses that are never dereferenced: validation only looks at whether a pointer is null.
template <typename T>
T* fake_pointer(uintptr_t address) {
  return reinterpret_cast<T*>(address);
}

constexpr int kExperts = 4;
constexpr int64_t kN = 320, kK = 640;
constexpr int64_t kCapacity = 96;

// A valid grouped GEMM of kExperts experts: N x K shared, tight leading
// dimensions, per-tensor host scales, BF16 D.
GemmArgs shared_gemm(int64_t m) {
  GemmArgs gemm;
  gemm.m = m;
  gemm.n = kN;
  gemm.k = kK;
  gemm.a = fake_pointer<const uint8_t>(0x10000);
  gemm.lda = kK;
  gemm.b = fake_pointer<const uint8_t>(0x20000);
  gemm.ldb = kK;
  gemm.d = fake_pointer<void>(0x30000);
  gemm.ldd = kN;
  return gemm;
}

// Contiguous: 4 segments of 128 rows each (M = 512).
GroupedGemmArgs valid_contiguous() {
  GroupedGemmArgs args;
  args.layout = GroupedLayout::kContiguous;
  args.experts = kExperts;
  args.gemm = shared_gemm(kExperts * kGroupedRowAlignment);
  args.m_indices = fake_pointer<const int>(0x40000);
  return args;
}

// Masked: 4 experts of kCapacity rows (M = 384, not a multiple of 128: the masked layout does not need one).
GroupedGemmArgs valid_masked() {
  GroupedGemmArgs args;
  args.layout = GroupedLayout::kMasked;
  args.experts = kExperts;
  args.capacity = kCapacity;
  args.gemm = shared_gemm(kExperts * kCapacity);
  args.masked_counts = fake_pointer<const int>(0x50000);
  return args;
}

// Success, or the status's code and message.
::testing::AssertionResult accepted(const Status& s) {
  if (s.ok()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << status_code_name(s.code) << ": " << s.message;
}

// kInvalidArgument with a message holding every one of `parts` (the rule and the offending value).
::testing::AssertionResult refused_naming(const Status& s, const std::vector<std::string>& parts) {
  if (s.code != StatusCode::kInvalidArgument) {
    return ::testing::AssertionFailure() << "expected invalid argument, got " << status_code_name(s.code) << ": "
                                         << s.message;
  }
  for (const std::string& part : parts) {
    if (s.message.find(part) == std::string::npos) {
      return ::testing::AssertionFailure() << "the message does not name \"" << part << "\": " << s.message;
    }
  }
  return ::testing::AssertionSuccess();
}

// -----------------------------------------------------------------------------
// validate_grouped_args: what passes
// -----------------------------------------------------------------------------

TEST(ValidateGroupedArgs, AcceptsValidContiguousArguments) {
  EXPECT_TRUE(accepted(validate_grouped_args(valid_contiguous())));
}

TEST(ValidateGroupedArgs, AcceptsValidMaskedArguments) { EXPECT_TRUE(accepted(validate_grouped_args(valid_masked()))); }

// D is M x N with ldd >= N (not experts * N): many experts with a tight D
// must pass. Only B is stacked.
TEST(ValidateGroupedArgs, AcceptsAnyNumberOfExpertsWithATightD) {
  for (int experts : {1, 2, 8, 256}) {
    GroupedGemmArgs contiguous = valid_contiguous();
    contiguous.experts = experts;
    EXPECT_TRUE(accepted(validate_grouped_args(contiguous))) << experts << " experts, contiguous";
    GroupedGemmArgs masked = valid_masked();
    masked.experts = experts;
    masked.gemm.m = experts * masked.capacity;
    EXPECT_TRUE(accepted(validate_grouped_args(masked))) << experts << " experts, masked";
  }
}

TEST(ValidateGroupedArgs, AcceptsSplitKZeroAndOne) {
  for (int split_k : {0, 1}) {
    GroupedGemmArgs args = valid_contiguous();
    args.gemm.split_k = split_k;
    EXPECT_TRUE(accepted(validate_grouped_args(args))) << "split_k " << split_k;
  }
}

// One row per expert is a masked layout (decode with one token each).
TEST(ValidateGroupedArgs, AcceptsAMaskedCapacityOfOne) {
  GroupedGemmArgs args = valid_masked();
  args.capacity = 1;
  args.gemm.m = kExperts;
  EXPECT_TRUE(accepted(validate_grouped_args(args)));
}

// The epilogue and scales of a plain GEMM pass through: per-row and block
// scales from device memory, a bias, GELU, an FP8 D with its amax.
TEST(ValidateGroupedArgs, AcceptsTheEpilogueOfAPlainGemm) {
  GroupedGemmArgs args = valid_contiguous();
  args.gemm.a_scale_granularity = ScaleGranularity::kGroup1x128;
  args.gemm.a_scales = fake_pointer<const float>(0x60000);
  args.gemm.b_scale_granularity = ScaleGranularity::kBlock128x128;
  args.gemm.b_scales = fake_pointer<const float>(0x70000);
  args.gemm.bias = fake_pointer<const void>(0x80000);
  args.gemm.activation = Activation::kGeluTanh;
  args.gemm.d_type = OutputType::kE4M3;
  args.gemm.d_scale = 0.5f;
  args.gemm.d_amax = fake_pointer<float>(0x90000);
  EXPECT_TRUE(accepted(validate_grouped_args(args)));
}

// -----------------------------------------------------------------------------
// validate_grouped_args: each rule refused by name
// -----------------------------------------------------------------------------

TEST(ValidateGroupedArgs, RefusesFewerThanOneExpert) {
  for (int experts : {0, -1, std::numeric_limits<int>::min()}) {
    for (GroupedGemmArgs args : {valid_contiguous(), valid_masked()}) {
      args.experts = experts;
      EXPECT_TRUE(refused_naming(validate_grouped_args(args), {"experts >= 1", "got " + std::to_string(experts)}));
    }
  }
}

TEST(ValidateGroupedArgs, RefusesALayoutThatIsNeitherContiguousNorMasked) {
  GroupedGemmArgs args = valid_contiguous();
  args.layout = static_cast<GroupedLayout>(2);
  EXPECT_TRUE(refused_naming(validate_grouped_args(args), {"layout must be contiguous or masked", "got 2"}));
}

TEST(ValidateGroupedArgs, TheContiguousLayoutNeedsMIndices) {
  GroupedGemmArgs args = valid_contiguous();
  args.m_indices = nullptr;
  args.masked_counts = fake_pointer<const int>(0x50000);  // the other layout's array does not stand in
  EXPECT_TRUE(refused_naming(validate_grouped_args(args), {"contiguous", "m_indices"}));
}

TEST(ValidateGroupedArgs, TheMaskedLayoutNeedsMaskedCounts) {
  GroupedGemmArgs args = valid_masked();
  args.masked_counts = nullptr;
  args.m_indices = fake_pointer<const int>(0x40000);
  EXPECT_TRUE(refused_naming(validate_grouped_args(args), {"masked", "masked_counts"}));
}

TEST(ValidateGroupedArgs, TheContiguousRowsAreAMultipleOf128) {
  for (int64_t m : {int64_t{1}, int64_t{127}, int64_t{129}, int64_t{200}, int64_t{4095}}) {
    GroupedGemmArgs args = valid_contiguous();
    args.gemm.m = m;
    EXPECT_TRUE(refused_naming(validate_grouped_args(args), {"multiple of 128", "M = " + std::to_string(m)}));
  }
  for (int64_t m : {int64_t{0}, int64_t{-128}}) {
    GroupedGemmArgs args = valid_contiguous();
    args.gemm.m = m;
    EXPECT_EQ(validate_grouped_args(args).code, StatusCode::kInvalidArgument) << "M = " << m;
  }
}

TEST(ValidateGroupedArgs, TheMaskedRowsAreExpertsTimesCapacity) {
  for (int64_t m : {kExperts * kCapacity - 1, kExperts * kCapacity + 1, kCapacity, int64_t{512}}) {
    GroupedGemmArgs args = valid_masked();
    args.gemm.m = m;
    EXPECT_TRUE(
        refused_naming(validate_grouped_args(args), {"experts * capacity = 4 * 96 = 384", "M = " + std::to_string(m)}));
  }
}

TEST(ValidateGroupedArgs, TheMaskedCapacityIsAtLeastOne) {
  for (int64_t capacity : {int64_t{0}, int64_t{-1}}) {
    GroupedGemmArgs args = valid_masked();
    args.capacity = capacity;
    args.gemm.m = 0;
    EXPECT_TRUE(refused_naming(validate_grouped_args(args), {"capacity must be >= 1", std::to_string(capacity)}));
  }
}

TEST(ValidateGroupedArgs, AGroupedGemmDoesNotSplitK) {
  for (GroupedGemmArgs args : {valid_contiguous(), valid_masked()}) {
    for (int split_k : {2, 3, 64}) {
      args.gemm.split_k = split_k;
      EXPECT_TRUE(refused_naming(validate_grouped_args(args),
                                 {"does not split K", "split_k must be 0 or 1", "got " + std::to_string(split_k)}));
    }
  }
}

// The plain contract (validate_gemm_args) holds for the shared arguments,
// with its own messages.
TEST(ValidateGroupedArgs, ThePlainContractApplies) {
  struct Broken {
    const char* rule;
    void (*breaks)(GemmArgs&);
  };
  const Broken cases[] = {
      {"lda >= K", [](GemmArgs& g) { g.lda = g.k - 1; }},
      {"ldb >= K", [](GemmArgs& g) { g.ldb = g.k - 1; }},
      {"ldd >= N", [](GemmArgs& g) { g.ldd = g.n - 1; }},
      {"A must not be a null pointer", [](GemmArgs& g) { g.a = nullptr; }},
      {"B must not be a null pointer", [](GemmArgs& g) { g.b = nullptr; }},
      {"D must not be a null pointer", [](GemmArgs& g) { g.d = nullptr; }},
      {"M, N and K must be >= 1", [](GemmArgs& g) { g.n = 0; }},
      {"M, N and K must be >= 1", [](GemmArgs& g) { g.k = 0; }},
      {"a_scale and b_scale must be finite", [](GemmArgs& g) { g.a_scale = std::nanf(""); }},
      {"B's per_row scales need a device pointer (b_scales)",
       [](GemmArgs& g) { g.b_scale_granularity = ScaleGranularity::kPerRow; }},
      {"d_scale and d_amax are for FP8 D only", [](GemmArgs& g) { g.d_scale = 2.0f; }},
      {"split_k must be >= 0", [](GemmArgs& g) { g.split_k = -1; }},
  };
  for (const Broken& c : cases) {
    for (GroupedGemmArgs args : {valid_contiguous(), valid_masked()}) {
      c.breaks(args.gemm);
      EXPECT_TRUE(refused_naming(validate_grouped_args(args), {c.rule})) << grouped_layout_name(args.layout);
    }
  }
}

// B is experts * N rows of ldb elements: its extent is checked as one matrix
// of that many rows, so a B whose one expert fits a 64-bit offset but whose
// experts together do not is refused.
TEST(ValidateGroupedArgs, BsExtentIsExpertsTimesNRows) {
  GroupedGemmArgs args = valid_contiguous();
  args.gemm.n = int64_t{1} << 31;
  args.gemm.k = args.gemm.lda = args.gemm.ldb = int64_t{1} << 30;  // one expert's B: 2^61 elements
  args.gemm.ldd = args.gemm.n;
  args.experts = 1;
  EXPECT_TRUE(accepted(validate_grouped_args(args)));
  args.experts = 4;  // 2^63 elements: the last one's offset no longer fits
  EXPECT_TRUE(refused_naming(validate_grouped_args(args), {"overflows a 64-bit offset"}));
  // The row count itself overflowing.
  args.gemm.n = int64_t{1} << 62;
  args.gemm.k = args.gemm.lda = args.gemm.ldb = 1;
  args.gemm.ldd = args.gemm.n;
  args.gemm.m = kGroupedRowAlignment;
  args.experts = 2;
  EXPECT_TRUE(refused_naming(validate_grouped_args(args), {"experts * N overflows"}));
}

// -----------------------------------------------------------------------------
// run_grouped_step: what a step's grouped launcher never sees
// -----------------------------------------------------------------------------

int launcher_calls = 0;

Status counting_launcher(const GroupedGemmArgs&) {
  ++launcher_calls;
  return Status::error(StatusCode::kRuntimeError, "the launcher ran");
}

StepInfo fake_grouped_step() {
  StepInfo step;
  step.number = 99;
  step.folder = "99_fake_grouped";
  step.title = "a grouped launcher that counts its calls";
  step.launch_grouped = counting_launcher;
  return step;
}

TEST(RunGroupedStep, AStepWithoutAGroupedGemmIsNotSupported) {
  StepInfo step = fake_grouped_step();
  step.launch_grouped = nullptr;
  const Status s = run_grouped_step(step, valid_contiguous());
  EXPECT_EQ(s.code, StatusCode::kNotSupported) << s.message;
  EXPECT_NE(s.message.find("99_fake_grouped"), std::string::npos) << s.message;
  EXPECT_NE(s.message.find("no grouped GEMM"), std::string::npos) << s.message;
}

TEST(RunGroupedStep, InvalidArgumentsNeverReachTheLauncher) {
  launcher_calls = 0;
  GroupedGemmArgs no_experts = valid_contiguous();
  no_experts.experts = 0;
  GroupedGemmArgs ragged_contiguous = valid_contiguous();
  ragged_contiguous.gemm.m = 200;
  GroupedGemmArgs wrong_masked_rows = valid_masked();
  wrong_masked_rows.gemm.m += 1;
  GroupedGemmArgs split = valid_masked();
  split.gemm.split_k = 2;
  GroupedGemmArgs short_lda = valid_contiguous();
  short_lda.gemm.lda = 1;
  for (GroupedGemmArgs args : {no_experts, ragged_contiguous, wrong_masked_rows, split, short_lda}) {
    args.check_on_host = false;  // nothing here may read device memory
    const Status s = run_grouped_step(fake_grouped_step(), args);
    EXPECT_EQ(s.code, StatusCode::kInvalidArgument) << s.message;
    EXPECT_EQ(s.message, validate_grouped_args(args).message);
  }
  EXPECT_EQ(launcher_calls, 0);
}

// The step's constraints apply to the shared arguments: a format it does not
// take is refused with check_step_constraints' message.
TEST(RunGroupedStep, TheStepsConstraintsApply) {
  launcher_calls = 0;
  StepInfo step = fake_grouped_step();
  step.constraints.formats = 1u << static_cast<int>(Fp8Format::kE4M3);
  GroupedGemmArgs args = valid_masked();
  args.check_on_host = false;
  args.gemm.b_format = Fp8Format::kE5M2;
  const Status s = run_grouped_step(step, args);
  EXPECT_EQ(s.code, StatusCode::kNotSupported) << s.message;
  EXPECT_EQ(s.message, check_step_constraints(step, args.gemm).message);
  EXPECT_FALSE(s.message.empty());
  EXPECT_EQ(launcher_calls, 0);
}

// Valid arguments reach the launcher, whose message gets the step's folder.
TEST(RunGroupedStep, ValidArgumentsReachTheLauncherWhoseMessageNamesTheStep) {
  launcher_calls = 0;
  for (GroupedGemmArgs args : {valid_contiguous(), valid_masked()}) {
    args.check_on_host = false;  // the device data is not read: the launcher is called at once
    const Status s = run_grouped_step(fake_grouped_step(), args);
    EXPECT_EQ(s.code, StatusCode::kRuntimeError);
    EXPECT_EQ(s.message, "99_fake_grouped: the launcher ran");
  }
  EXPECT_EQ(launcher_calls, 2);
}

}  // namespace
}  // namespace fp8gemm
