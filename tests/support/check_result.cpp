#include "support/check_result.h"

#include <cmath>
#include <vector>

namespace fp8gemm::test_support {

::testing::AssertionResult matches_reference(const OutputSnapshot& d, const ReferencedProblem& problem,
                                             const Tolerance& tolerance) {
  const ReferenceProduct& ref = problem.reference;
  const std::vector<float> values = d.rows(ref.rows);
  const ToleranceCheck check = check_tolerance(values.data(), ref.value.data(), ref.abs_sum.data(),
                                               static_cast<int64_t>(values.size()), tolerance);
  if (check.passed) return ::testing::AssertionSuccess();

  const ErrorMetrics& m = check.metrics;
  auto failure = ::testing::AssertionFailure();
  failure << describe(problem.shape) << " -> " << output_name(d.type()) << ", FP8GEMM_TEST_SEED=" << run_seed()
          << ": " << check.failure << "\n";
  if (check.worst_index >= 0) {
    const int64_t i = check.worst_index / ref.n;
    const int64_t col = check.worst_index % ref.n;
    const double r = ref.r(i, col);
    const double s = ref.s(i, col);
    failure << "  worst element D[" << ref.rows[static_cast<size_t>(i)] << ", " << col
            << "] = " << values[static_cast<size_t>(check.worst_index)] << ", R = " << r << ", S = " << s
            << ", |D - R| = " << std::fabs(values[static_cast<size_t>(check.worst_index)] - r)
            << ", bound " << tolerance.element_bound(r, s) << "\n";
  }
  failure << "  max |D - R| = " << m.max_abs_error << "; ||D - R|| / ||R|| = " << m.norm_relative_error
          << " (bound " << tolerance.norm_relative << "); calc_diff = " << m.calc_diff << " (bound "
          << tolerance.calc_diff << "); non-finite: " << m.non_finite << "; over the element bound: "
          << check.elements_over_bound << " of " << m.elements << " (" << ref.rows.size() << " of "
          << problem.shape.m << " rows checked)";
  return failure;
}

}  // namespace fp8gemm::test_support
