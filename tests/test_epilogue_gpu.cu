// The fused epilogue on the GPU: every registered step that accepts a scale
// granularity, a bias, an activation or an FP8 output (StepConstraints) runs
// it on fresh random inputs and is compared with the FP64 reference after the
// same epilogue (common/check: check_epilogue_rows, reference_amax). A step
// that does not accept a variant is not run on it here; test_api.cpp checks
// that it refuses it by name.
//
// Inputs: A and B from N(0, 1), quantized at the variant's granularity
// (common/fp8/quantize.h), a bias from N(0, sqrt(K) / 2) so that it moves the
// results as much as the product does, stored as the variant's type and
// compared as the kernel reads it; D poisoned with NaN, its guard band
// checked; FP8 D with a d_scale that is not 1 and its amax poisoned with NaN.
// Steps that split K also run a subset with several slice counts, twice each:
// the same bytes both times (SplitKTest).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "common/api/cuda_check.h"
#include "common/api/gemm.h"
#include "common/api/registry.h"
#include "common/check/check.h"
#include "common/device/output.h"
#include "common/fp8/quantize.h"
#include "support/check_result.h"
#include "support/cuda_stream.h"
#include "support/device_matrices.h"
#include "support/random_problem.h"
#include "support/require_gpu.h"
#include "support/seed.h"
#include "support/step_test.h"

namespace fp8gemm {
namespace {

using test_support::CudaStream;
using test_support::GuardedOutput;
using test_support::OutputSnapshot;

constexpr ScaleGranularity kTensor = ScaleGranularity::kPerTensor;
constexpr ScaleGranularity kRow = ScaleGranularity::kPerRow;
constexpr ScaleGranularity kGroup = ScaleGranularity::kGroup1x128;
constexpr ScaleGranularity kBlock = ScaleGranularity::kBlock128x128;

// One variant of the epilogue.
struct Variant {
  std::string name;
  ScaleGranularity a_scales = kTensor;
  ScaleGranularity b_scales = kTensor;
  bool scales_on_device = false;  // per tensor: the scale from device memory
  bool bias = false;
  BiasType bias_type = BiasType::kFP32;
  Activation activation = Activation::kNone;
  OutputType out = OutputType::kBF16;
};

const std::vector<Variant>& variants() {
  static const std::vector<Variant> list = {
      {"block_none_bf16", kGroup, kBlock},
      {"block_bias_gelu_e4m3", kGroup, kBlock, false, true, BiasType::kFP32, Activation::kGeluTanh, OutputType::kE4M3},
      {"block_bias_gelu_erf_fp32", kGroup, kBlock, false, true, BiasType::kBF16, Activation::kGeluErf,
       OutputType::kFP32},
      {"outer_bias_gelu_e5m2", kRow, kRow, false, true, BiasType::kBF16, Activation::kGeluTanh, OutputType::kE5M2},
      {"outer_none_fp32", kRow, kRow, false, false, BiasType::kFP32, Activation::kNone, OutputType::kFP32},
      {"tensor_device_bias_fp32", kTensor, kTensor, true, true, BiasType::kFP32, Activation::kNone, OutputType::kFP32},
      {"tensor_gelu_erf_e4m3", kTensor, kTensor, false, false, BiasType::kFP32, Activation::kGeluErf,
       OutputType::kE4M3},
      {"agroup_brow_bias_bf16", kGroup, kRow, false, true, BiasType::kFP32, Activation::kNone, OutputType::kBF16},
      {"arow_bblock_gelu_fp32", kRow, kBlock, false, false, BiasType::kFP32, Activation::kGeluTanh, OutputType::kFP32},
      // What issue 9's benchmark measures (bias + GELU, BF16 D): the one BF16
      // variant without block scales, so the one that takes step 12's
      // 128 x 112 tile (at 130 x 304) with a bias.
      {"tensor_bias_gelu_bf16", kTensor, kTensor, false, true, BiasType::kBF16, Activation::kGeluTanh,
       OutputType::kBF16},
  };
  return list;
}

// Shapes: aligned, ragged M and N with K not a multiple of 128 (a partial
// last scale group), the same with M between 64 and 128 (where a step may
// take a tile of 128 rows and narrower columns: step 12's 128 x 64), decode,
// one large square (checked on sampled rows), two rows of tiles by 67
// columns of 128 (added for step 12's 128 x 112 tile; since the 128 x 256
// tile took the promoted GEMMs, step 12 runs it on that one, in one round of
// 34 cluster tiles), and 130 x 304, where step 12 takes its 128 x 112 tile
// for BF16 D without block scales: three tiles of 112 columns, the last 80
// wide, in one round, as 128 x 128 and 128 x 256 would be, with the least
// work a round (kNarrowTileMinGain); its epilogue reads the bias
// (tensor_bias_gelu_bf16) 112 columns a tile.
const std::vector<GemmShape>& shapes() {
  static const std::vector<GemmShape> list = {{256, 512, 1024}, {255, 1000, 1008},  {100, 1000, 1008}, {64, 2112, 7168},
                                              {1, 2112, 7168},  {2048, 2048, 2048}, {130, 8504, 200},  {130, 304, 200}};
  return list;
}

bool accepts(const StepConstraints& c, const Variant& v) {
  const auto has = [](uint32_t mask, int bit) { return (mask >> bit & 1u) != 0; };
  if (!has(c.a_scales, static_cast<int>(v.a_scales)) || !has(c.b_scales, static_cast<int>(v.b_scales))) return false;
  if (v.scales_on_device && !c.scale_pointers) return false;
  if (v.bias && (c.epilogue & kEpilogueBias) == 0) return false;
  if (v.activation == Activation::kGeluTanh && (c.epilogue & kEpilogueGeluTanh) == 0) return false;
  if (v.activation == Activation::kGeluErf && (c.epilogue & kEpilogueGeluErf) == 0) return false;
  return has(c.outputs, static_cast<int>(v.out));
}

struct EpilogueCase {
  StepInfo step;
  Variant variant;
  GemmShape shape;
};

void PrintTo(const EpilogueCase& c, std::ostream* out) {
  *out << c.step.folder << " " << c.variant.name << " " << gemm_shape_name(c.shape);
}

std::vector<EpilogueCase> every_case() {
  std::vector<EpilogueCase> cases;
  for (const StepInfo& step : registered_steps()) {
    for (const Variant& v : variants()) {
      if (!accepts(step.constraints, v)) continue;
      for (GemmShape shape : shapes()) {
        shape.d_type = v.out;
        cases.push_back({step, v, shape});
      }
    }
  }
  return cases;
}

// The operands and reference of one case, quantized at the variant's granularities.
struct Problem {
  QuantizedMatrix a, b;
  ReferenceProduct reference;
  std::vector<float> bias;  // as stored (FP32, or BF16-rounded values)
};

Problem make_problem(const EpilogueCase& c) {
  const GemmShape& s = c.shape;
  uint64_t seed = test_support::run_seed();
  for (int64_t value :
       {s.m, s.n, s.k, int64_t{static_cast<int>(c.variant.a_scales)}, int64_t{static_cast<int>(c.variant.b_scales)}}) {
    seed = test_support::mix_seed(seed, static_cast<uint64_t>(value));
  }
  Problem p;
  const std::vector<float> a = test_support::random_normal_matrix(s.m, s.k, test_support::mix_seed(seed, 'A'));
  const std::vector<float> b = test_support::random_normal_matrix(s.n, s.k, test_support::mix_seed(seed, 'B'));
  p.a = quantize(a.data(), s.m, s.k, s.k, s.a_format, c.variant.a_scales);
  p.b = quantize(b.data(), s.n, s.k, s.k, s.b_format, c.variant.b_scales);
  p.reference = reference_of_rows(p.a, p.b, rows_to_check(s.m, s.n, s.k, seed));
  if (c.variant.bias) {
    p.bias = test_support::random_normal_matrix(1, s.n, test_support::mix_seed(seed, 'b'));
    const float sigma = static_cast<float>(std::sqrt(static_cast<double>(s.k)) / 2);
    for (float& x : p.bias) {
      x *= sigma;
      if (c.variant.bias_type == BiasType::kBF16) x = bf16_bits_to_float(float_to_bf16_bits(x));
    }
  }
  return p;
}

template <typename T>
DeviceBuffer<T> upload(const std::vector<T>& host) {
  DeviceBuffer<T> device(host.size());
  FP8GEMM_CUDA_CHECK(cudaMemcpy(device.get(), host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
  return device;
}

// FP8 D's dequantization scale in these tests: not 1, so that a kernel that
// ignores it fails; 1 for the other outputs.
float fp8_d_scale(const EpilogueCase& c) {
  return is_fp8_output(c.variant.out) ? static_cast<float>(std::sqrt(static_cast<double>(c.shape.k)) / 32) : 1.0f;
}

class EpilogueTest : public ::testing::TestWithParam<EpilogueCase> {
 protected:
  void SetUp() override {
    if (!test_support::require_step_gpu_or_skip(GetParam().step)) return;
    test_support::record_run_seed();
  }
};

// One launch of a case on fresh NaN-poisoned D: the step's status, D as
// downloaded and, for FP8 D, the amax it wrote (poisoned before the launch).
struct Launch {
  Status status;
  std::optional<OutputSnapshot> d;
  float amax = 0.0f;
};

Launch launch_case(const EpilogueCase& c, const Problem& p, int split_k,
                   SplitKReduction reduction = SplitKReduction::kAuto, bool fast_accumulation = false) {
  const Variant& v = c.variant;
  const GemmShape& s = c.shape;
  const DeviceBuffer<uint8_t> a = test_support::upload_operand(p.a, s.k);
  const DeviceBuffer<uint8_t> b = test_support::upload_operand(p.b, s.k);
  const DeviceBuffer<float> a_scales = upload(p.a.scales);
  const DeviceBuffer<float> b_scales = upload(p.b.scales);
  std::vector<uint16_t> bias_bf16;
  for (float x : p.bias) bias_bf16.push_back(float_to_bf16_bits(x));
  const DeviceBuffer<float> bias_f32 = upload(p.bias.empty() ? std::vector<float>{0.0f} : p.bias);
  const DeviceBuffer<uint16_t> bias_b16 = upload(bias_bf16.empty() ? std::vector<uint16_t>{0} : bias_bf16);

  const float d_scale = fp8_d_scale(c);
  // Rows of D on 16-byte boundaries, as the Hopper steps need them: FP8 D
  // with a ragged N gets a padded ldd (BF16 and FP32 rows of these N are aligned already).
  const int64_t ldd = is_fp8_output(v.out) ? (s.n + 15) / 16 * 16 : s.n;
  GuardedOutput d(s.m, s.n, ldd, v.out, d_scale);
  CudaStream stream;
  d.poison(stream.get());
  DeviceBuffer<float> amax(1);
  FP8GEMM_CUDA_CHECK(cudaMemsetAsync(amax.get(), test_support::kPoisonByte, sizeof(float), stream.get()));

  const bool a_device = v.a_scales != kTensor || v.scales_on_device;
  const bool b_device = v.b_scales != kTensor || v.scales_on_device;
  const GemmBuffers buffers{a.get(), s.k, a_device ? 1.0f : p.a.scales[0],
                            b.get(), s.k, b_device ? 1.0f : p.b.scales[0],
                            d.d(),   ldd};
  GemmArgs args = make_gemm_args(s, buffers, stream.get());
  args.a_scale_granularity = v.a_scales;
  args.b_scale_granularity = v.b_scales;
  if (a_device) args.a_scales = a_scales.get();
  if (b_device) args.b_scales = b_scales.get();
  if (v.bias) {
    args.bias_type = v.bias_type;
    args.bias = v.bias_type == BiasType::kBF16 ? static_cast<const void*>(bias_b16.get()) : bias_f32.get();
  }
  args.activation = v.activation;
  if (is_fp8_output(v.out)) {
    args.d_scale = d_scale;
    args.d_amax = amax.get();
  }
  args.split_k = split_k;
  args.split_k_reduction = reduction;
  args.fast_accumulation = fast_accumulation;

  Launch launch;
  launch.status = run_step(c.step, args);
  if (!launch.status.ok()) return launch;
  FP8GEMM_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
  launch.d = d.download(stream.get());
  if (is_fp8_output(v.out)) {
    FP8GEMM_CUDA_CHECK(cudaMemcpy(&launch.amax, amax.get(), sizeof launch.amax, cudaMemcpyDeviceToHost));
  }
  return launch;
}

// D of a launch against the FP64 reference after the same epilogue, and its amax.
void expect_matches_reference(const EpilogueCase& c, const Problem& p, const Launch& launch, const std::string& what,
                              bool fast_accumulation = false) {
  const Variant& v = c.variant;
  const GemmShape& s = c.shape;
  ASSERT_TRUE(launch.status.ok()) << what << ": " << status_code_name(launch.status.code) << ": "
                                  << launch.status.message;
  const OutputSnapshot& out = *launch.d;
  EXPECT_TRUE(out.guard_untouched()) << what;
  ASSERT_TRUE(out.every_element_written()) << what;
  const EpilogueReference epilogue{std::vector<double>(p.bias.begin(), p.bias.end()), v.activation, fp8_d_scale(c)};
  const std::vector<float> values = out.rows(p.reference.rows);
  const OutputCheck check =
      check_epilogue_rows(values, p.reference, epilogue, v.out, s.k, accumulation_of(c.step, fast_accumulation));
  EXPECT_TRUE(check.passed) << what << ", FP8GEMM_TEST_SEED=" << test_support::run_seed() << ": "
                            << describe_check(check, values, p.reference);
  if (is_fp8_output(v.out)) {
    EXPECT_TRUE(test_support::matches_reference_amax(launch.amax, p.reference, epilogue, s.m, s.k,
                                                     accumulation_of(c.step, fast_accumulation)))
        << what;
  }
}

TEST_P(EpilogueTest, MatchesTheReferenceAfterTheEpilogue) {
  const EpilogueCase& c = GetParam();
  const Problem p = make_problem(c);
  expect_matches_reference(c, p, launch_case(c, p, /*split_k=*/0),
                           c.step.folder + " " + c.variant.name + " " + gemm_shape_name(c.shape));
}

// Split-K (steps with StepConstraints::max_split_k > 1): with the slice count
// the step chooses and with forced ones, D matches the reference after the
// epilogue (which must run once, after the slices are added), and two runs of
// the same case give the same bytes: the partials are added in a fixed order.
struct SplitKCase {
  EpilogueCase c;
  int split_k;
  SplitKReduction reduction = SplitKReduction::kAuto;
};

void PrintTo(const SplitKCase& c, std::ostream* out) {
  PrintTo(c.c, out);
  *out << " split_k " << c.split_k << " " << split_k_reduction_name(c.reduction);
}

std::vector<SplitKCase> split_k_cases() {
  std::vector<SplitKCase> cases;
  const std::vector<std::string> names = {"block_bias_gelu_e4m3", "outer_bias_gelu_e5m2", "tensor_device_bias_fp32"};
  // The decode shape, ragged M, N and K on either side of 64 rows (a step may
  // take a smaller tile for small M: step 08's 64 x 64), one row, a long K.
  const std::vector<GemmShape> split_shapes = {
      {64, 2112, 7168}, {255, 1000, 1008}, {37, 1000, 1008}, {1, 2112, 7168}, {128, 2048, 8192}};
  for (const StepInfo& step : registered_steps()) {
    if (step.constraints.max_split_k <= 1) continue;
    for (const Variant& v : variants()) {
      if (std::find(names.begin(), names.end(), v.name) == names.end() || !accepts(step.constraints, v)) continue;
      for (GemmShape shape : split_shapes) {
        shape.d_type = v.out;
        for (int split_k : {0, 3}) cases.push_back({{step, v, shape}, split_k});  // the step's choice of form
        // Each form the step lists, forced, at two slice counts (the step
        // chooses a form for the cases above).
        for (int r = 1; r < kNumSplitKReductions; ++r) {
          if ((step.constraints.split_k_reductions >> r & 1u) == 0) continue;
          for (int split_k : {2, step.constraints.max_split_k}) {
            cases.push_back({{step, v, shape}, split_k, static_cast<SplitKReduction>(r)});
          }
        }
      }
    }
  }
  return cases;
}

class SplitKTest : public ::testing::TestWithParam<SplitKCase> {
 protected:
  void SetUp() override {
    if (!test_support::require_step_gpu_or_skip(GetParam().c.step)) return;
    test_support::record_run_seed();
  }
};

TEST_P(SplitKTest, MatchesTheReferenceAndTheSameBitsTwice) {
  const SplitKCase& sc = GetParam();
  const Problem p = make_problem(sc.c);
  const std::string what = sc.c.step.folder + " " + sc.c.variant.name + " " + gemm_shape_name(sc.c.shape) +
                           " split_k " + std::to_string(sc.split_k) + " " + split_k_reduction_name(sc.reduction);
  const Launch first = launch_case(sc.c, p, sc.split_k, sc.reduction);
  expect_matches_reference(sc.c, p, first, what);
  const Launch second = launch_case(sc.c, p, sc.split_k, sc.reduction);
  ASSERT_TRUE(second.status.ok()) << what << ": " << second.status.message;
  EXPECT_TRUE(first.d->bytes() == second.d->bytes()) << what << ": D differs between two runs of the same case";
  uint32_t amax_bits[2];
  std::memcpy(&amax_bits[0], &first.amax, sizeof(float));
  std::memcpy(&amax_bits[1], &second.amax, sizeof(float));
  EXPECT_EQ(amax_bits[0], amax_bits[1]) << what << ": the amax differs between two runs";
}

std::string split_k_case_name(const ::testing::TestParamInfo<SplitKCase>& info) {
  const EpilogueCase& c = info.param.c;
  const std::string form = info.param.reduction == SplitKReduction::kAuto
                               ? ""
                               : std::string("_") + split_k_reduction_name(info.param.reduction);
  return c.step.folder + "_" + c.variant.name + "_" + gemm_shape_name(c.shape) + "_split" +
         std::to_string(info.param.split_k) + form;
}

INSTANTIATE_TEST_SUITE_P(EveryStep, SplitKTest, ::testing::ValuesIn(split_k_cases()), split_k_case_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(SplitKTest);

// More slices than K has blocks of 128 are refused by name, not run.
class SplitKRefusalTest : public ::testing::TestWithParam<StepInfo> {
 protected:
  void SetUp() override { test_support::require_step_gpu_or_skip(GetParam()); }
};

TEST_P(SplitKRefusalTest, MoreSlicesThanKBlocksAreRefusedByName) {
  const StepInfo& step = GetParam();
  DeviceBuffer<uint8_t> a(128 * 256), b(128 * 256), d(128 * 128 * 2);
  GemmArgs args;
  args.m = args.n = 128;
  args.k = 256;  // 2 K blocks
  args.lda = args.ldb = 256;
  args.ldd = 128;
  args.a = a.get();
  args.b = b.get();
  args.d = d.get();
  args.split_k = 3;
  const Status status = run_step(step, args);
  EXPECT_EQ(status.code, StatusCode::kNotSupported) << step.folder << ": " << status.message;
  EXPECT_NE(status.message.find("split_k = 3"), std::string::npos) << step.folder << ": " << status.message;
}

std::vector<StepInfo> steps_that_split() {
  std::vector<StepInfo> steps;
  for (const StepInfo& step : registered_steps()) {
    if (step.constraints.max_split_k >= 3) steps.push_back(step);
  }
  return steps;
}

INSTANTIATE_TEST_SUITE_P(EveryStep, SplitKRefusalTest, ::testing::ValuesIn(steps_that_split()),
                         [](const ::testing::TestParamInfo<StepInfo>& info) { return info.param.folder; });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(SplitKRefusalTest);

// Fast accumulation cannot apply scales that change along K: a step must
// refuse 1x128 / 128x128 scales with it, by name, not compute without them.
class BlockScaleRefusalTest : public ::testing::TestWithParam<StepInfo> {
 protected:
  void SetUp() override { test_support::require_step_gpu_or_skip(GetParam()); }
};

TEST_P(BlockScaleRefusalTest, BlockScalesWithFastAccumulationAreRefusedByName) {
  const StepInfo& step = GetParam();
  DeviceBuffer<uint8_t> a(128 * 128), b(128 * 128), d(128 * 128 * 2);
  DeviceBuffer<float> scales(128);
  GemmArgs args;
  args.m = args.n = args.k = 128;
  args.lda = args.ldb = args.ldd = 128;
  args.a = a.get();
  args.b = b.get();
  args.d = d.get();
  args.a_scale_granularity = kGroup;
  args.a_scales = scales.get();
  args.fast_accumulation = true;
  const Status status = run_step(step, args);
  EXPECT_EQ(status.code, StatusCode::kNotSupported) << step.folder << ": " << status.message;
  EXPECT_NE(status.message.find("fast accumulation"), std::string::npos) << step.folder << ": " << status.message;
}

std::vector<StepInfo> steps_with_group_scales() {
  std::vector<StepInfo> steps;
  for (const StepInfo& step : registered_steps()) {
    if (step.constraints.a_scales >> static_cast<int>(kGroup) & 1u) steps.push_back(step);
  }
  return steps;
}

INSTANTIATE_TEST_SUITE_P(EveryStep, BlockScaleRefusalTest, ::testing::ValuesIn(steps_with_group_scales()),
                         [](const ::testing::TestParamInfo<StepInfo>& info) { return info.param.folder; });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(BlockScaleRefusalTest);

std::string case_name(const ::testing::TestParamInfo<EpilogueCase>& info) {
  return info.param.step.folder + "_" + info.param.variant.name + "_" + gemm_shape_name(info.param.shape);
}

INSTANTIATE_TEST_SUITE_P(EveryStep, EpilogueTest, ::testing::ValuesIn(every_case()), case_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(EpilogueTest);

// Fast accumulation with the epilogue (the steps on tensor cores, the scales
// constant along K: block scales need the promotion), ragged M and N, on a
// shape for which step 12 takes its 128 x 256 tile of fast accumulation where
// the epilogue has no vector per column (tensor_gelu_erf_e4m3: GELU, FP8 D
// and its amax; with a bias or B's outer-vector scales a fast GEMM stays on
// 128 x 128, and the promoted cases of EpilogueTest take the wide tile's
// kernels with vectors).
class FastAccumulationEpilogueTest : public EpilogueTest {};

std::vector<EpilogueCase> fast_accumulation_cases() {
  std::vector<EpilogueCase> cases;
  for (const StepInfo& step : registered_steps()) {
    if (!uses_tensor_cores(step)) continue;
    for (const Variant& v : variants()) {
      const bool along_k = v.a_scales == kGroup || v.b_scales == kGroup || v.a_scales == kBlock || v.b_scales == kBlock;
      if (along_k || !accepts(step.constraints, v)) continue;
      GemmShape shape{1000, 2052, 1024};
      shape.d_type = v.out;
      cases.push_back({step, v, shape});
    }
  }
  return cases;
}

TEST_P(FastAccumulationEpilogueTest, MatchesTheReferenceAfterTheEpilogue) {
  const EpilogueCase& c = GetParam();
  const Problem p = make_problem(c);
  expect_matches_reference(c, p, launch_case(c, p, /*split_k=*/0, SplitKReduction::kAuto, /*fast_accumulation=*/true),
                           c.step.folder + " fast " + c.variant.name + " " + gemm_shape_name(c.shape),
                           /*fast_accumulation=*/true);
}

INSTANTIATE_TEST_SUITE_P(EveryStep, FastAccumulationEpilogueTest, ::testing::ValuesIn(fast_accumulation_cases()),
                         case_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(FastAccumulationEpilogueTest);

}  // namespace
}  // namespace fp8gemm
