#include "support/step_test.h"

#include <cmath>

#include <algorithm>

#include "common/api/cuda_check.h"
#include "support/cuda_stream.h"
#include "support/require_gpu.h"
#include "support/seed.h"

namespace fp8gemm::test_support {

void PrintTo(const StepCase& c, std::ostream* out) { *out << c.step.folder << " " << gemm_shape_name(c.gemm); }

std::string step_case_name(const ::testing::TestParamInfo<StepCase>& info) {
  return info.param.step.folder + "_" + gemm_shape_name(info.param.gemm);
}

std::vector<StepCase> every_step_with(const std::vector<GemmShape>& cases) {
  std::vector<StepCase> all;
  for (const StepInfo& step : registered_steps()) {
    for (const GemmShape& c : cases) all.push_back({step, c});
  }
  return all;
}

bool is_must_run(const StepInfo& step, const GemmShape& shape) {
  return std::any_of(step.must_run.begin(), step.must_run.end(),
                     [&](const GemmShape& listed) { return same_gemm_shape(listed, shape); });
}

Layout tight_layout(const GemmShape& s) { return {s.k, s.k, s.n}; }

Layout padded_layout(const GemmShape& s) {
  const int64_t k16 = (s.k + 15) / 16 * 16;
  const int64_t n8 = (s.n + 7) / 8 * 8;
  return {k16 + 16, k16 + 32, n8 + 8};
}

std::string layout_suffix(const Layout& l) {
  return "_lda" + std::to_string(l.lda) + "_ldb" + std::to_string(l.ldb) + "_ldd" + std::to_string(l.ldd);
}

void StepTest::SetUp() {
  if (!require_step_gpu_or_skip(GetParam().step)) return;
  record_run_seed();
}

void run_step_checked(const StepInfo& step, const GemmShape& shape, const DeviceOperands& operands, int64_t ldd,
                      bool fast_accumulation, Refusal refusal, std::optional<OutputSnapshot>* result) {
  result->reset();
  // FP8 D: a scale that is not 1 (a kernel that ignored it would fail) and
  // puts the results, about N(0, K) on these inputs, near 32 in code units.
  const float d_scale =
      is_fp8_output(shape.d_type) ? static_cast<float>(std::sqrt(static_cast<double>(shape.k)) / 32) : 1.0f;
  GuardedOutput d(shape.m, shape.n, ldd, shape.d_type, d_scale);
  CudaStream stream;
  d.poison(stream.get());
  // And its amax, poisoned with NaN: the launch must write it.
  DeviceBuffer<float> amax(1);
  if (is_fp8_output(shape.d_type))
    FP8GEMM_CUDA_CHECK(cudaMemsetAsync(amax.get(), kPoisonByte, sizeof(float), stream.get()));

  const GemmBuffers buffers{operands.a, operands.lda, operands.a_scale, operands.b, operands.ldb, operands.b_scale,
                            d.d(),      ldd};
  GemmArgs args = make_gemm_args(shape, buffers, stream.get(), fast_accumulation);
  if (is_fp8_output(shape.d_type)) {
    args.d_scale = d_scale;
    args.d_amax = amax.get();
  }

  const Status accepted = check_step_constraints(step, args);
  const Status status = run_step(step, args);
  FP8GEMM_CUDA_CHECK(cudaGetLastError());
  FP8GEMM_CUDA_CHECK(cudaStreamSynchronize(stream.get()));
  OutputSnapshot out = d.download(stream.get());
  EXPECT_TRUE(out.guard_untouched());

  if (!accepted.ok()) {
    ASSERT_EQ(refusal, Refusal::kAllowed)
        << step.folder << " must run " << gemm_shape_name(shape) << " (StepInfo::must_run), but its constraints ("
        << describe_constraints(step.constraints) << ") refuse it: " << accepted.message;
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
  if (is_fp8_output(shape.d_type)) {
    float written = 0.0f;
    FP8GEMM_CUDA_CHECK(cudaMemcpy(&written, amax.get(), sizeof written, cudaMemcpyDeviceToHost));
    out.set_amax(written);
  }
  result->emplace(std::move(out));
}

}  // namespace fp8gemm::test_support
