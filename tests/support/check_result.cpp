#include "support/check_result.h"

#include <cmath>
#include <vector>

namespace fp8gemm::test_support {

::testing::AssertionResult matches_reference_amax(float amax, const ReferenceProduct& ref,
                                                  const EpilogueReference& epilogue, int64_t m, int64_t k,
                                                  Accumulation accumulation) {
  const AmaxReference expected = reference_amax(ref, epilogue, k, accumulation);
  const bool every_row = static_cast<int64_t>(ref.rows.size()) == m;
  // Every row checked: the amax is the reference's within the error of that
  // element. Sampled rows: it is at least their amax (and finite).
  const bool ok = std::isfinite(amax) && amax >= expected.amax - expected.bound &&
                  (!every_row || amax <= expected.amax + expected.bound);
  if (ok) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "d_amax = " << amax << ", the reference's "
                                       << (every_row ? "" : "(checked rows only, a lower bound) ") << expected.amax
                                       << " +- " << expected.bound << ", FP8GEMM_TEST_SEED=" << run_seed();
}

::testing::AssertionResult matches_reference(const OutputSnapshot& d, const ReferencedProblem& problem,
                                             Accumulation accumulation) {
  const ReferenceProduct& ref = problem.reference;
  const std::vector<float> values = d.rows(ref.rows);
  if (is_fp8_output(d.type())) {
    // FP8 D: the epilogue's check (saturation, the FP8 rounding), and the amax.
    const EpilogueReference epilogue{{}, Activation::kNone, d.d_scale()};
    const OutputCheck check = check_epilogue_rows(values, ref, epilogue, d.type(), problem.shape.k, accumulation);
    if (!check.passed) {
      return ::testing::AssertionFailure()
             << describe(problem.shape) << " -> " << output_name(d.type()) << " (d_scale " << d.d_scale()
             << "), FP8GEMM_TEST_SEED=" << run_seed() << ": " << describe_check(check, values, ref);
    }
    if (d.amax())
      return matches_reference_amax(*d.amax(), ref, epilogue, problem.shape.m, problem.shape.k, accumulation);
    return ::testing::AssertionSuccess();
  }
  const OutputCheck check = check_rows(values, ref, d.type(), problem.shape.k, accumulation);
  if (check.passed) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << describe(problem.shape) << " -> " << output_name(d.type()) << " (of "
                                       << problem.shape.m << " rows), FP8GEMM_TEST_SEED=" << run_seed() << ": "
                                       << describe_check(check, values, ref);
}

}  // namespace fp8gemm::test_support
