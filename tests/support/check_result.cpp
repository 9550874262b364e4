#include "support/check_result.h"

#include <vector>

namespace fp8gemm::test_support {

::testing::AssertionResult matches_reference(const OutputSnapshot& d, const ReferencedProblem& problem,
                                             Accumulation accumulation) {
  const ReferenceProduct& ref = problem.reference;
  const std::vector<float> values = d.rows(ref.rows);
  const OutputCheck check = check_rows(values, ref, d.type(), problem.shape.k, accumulation);
  if (check.passed) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << describe(problem.shape) << " -> " << output_name(d.type()) << " (of "
                                       << problem.shape.m << " rows), FP8GEMM_TEST_SEED=" << run_seed() << ": "
                                       << describe_check(check, values, ref);
}

}  // namespace fp8gemm::test_support
