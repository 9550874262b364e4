#include "common/check/check.h"

#include <cmath>
#include <random>
#include <set>
#include <sstream>

#include "common/check/parallel.h"

namespace fp8gemm {

int64_t checked_row_count(int64_t m, int64_t n, int64_t k) {
  const double multiply_adds = static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  return multiply_adds <= static_cast<double>(kFullCheckLimit) || m <= kCheckedRows ? m : kCheckedRows;
}

std::vector<int64_t> rows_to_check(int64_t m, int64_t n, int64_t k, uint64_t seed) {
  std::vector<int64_t> rows;
  if (checked_row_count(m, n, k) == m) {
    for (int64_t i = 0; i < m; ++i) rows.push_back(i);
    return rows;
  }
  std::set<int64_t> chosen{0, m - 1};
  std::mt19937_64 engine(seed);
  std::uniform_int_distribution<int64_t> any_row(1, m - 2);
  while (static_cast<int64_t>(chosen.size()) < kCheckedRows) chosen.insert(any_row(engine));
  return std::vector<int64_t>(chosen.begin(), chosen.end());
}

std::vector<double> dequantize_rows(const QuantizedMatrix& q, const std::vector<int64_t>& rows) {
  std::vector<double> values(rows.size() * static_cast<size_t>(q.cols));
  parallel_for(static_cast<int64_t>(rows.size()), [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const int64_t row = rows[static_cast<size_t>(i)];
      for (int64_t c = 0; c < q.cols; ++c) {
        const float scale = q.scales[static_cast<size_t>(scale_index(row, c, q.rows, q.cols, q.granularity))];
        const uint8_t code = q.codes[static_cast<size_t>(row * q.cols + c)];
        // At most 4 significant bits times 24: exact in double.
        values[static_cast<size_t>(i * q.cols + c)] =
            static_cast<double>(fp8_to_float(code, q.format)) * static_cast<double>(scale);
      }
    }
  });
  return values;
}

ReferenceProduct reference_of_rows(const QuantizedMatrix& a, const QuantizedMatrix& b,
                                   const std::vector<int64_t>& rows) {
  // Only the checked rows of A are dequantized; B is needed whole.
  std::vector<int64_t> all_b_rows(static_cast<size_t>(b.rows));
  for (int64_t i = 0; i < b.rows; ++i) all_b_rows[static_cast<size_t>(i)] = i;
  const std::vector<double> a_rows = dequantize_rows(a, rows);
  const std::vector<double> b_values = dequantize_rows(b, all_b_rows);
  ReferenceProduct product =
      reference_gemm(a_rows.data(), b_values.data(), static_cast<int64_t>(rows.size()), b.rows, a.cols);
  product.rows = rows;  // row i of the compact product is row rows[i] of D
  return product;
}

OutputCheck check_rows(const std::vector<float>& d_rows, const ReferenceProduct& reference, OutputType d_type,
                       int64_t k, Accumulation accumulation) {
  OutputCheck check;
  check.tolerance = gemm_tolerance(d_type, k, accumulation);
  check.result = check_tolerance(d_rows.data(), reference.value.data(), reference.abs_sum.data(),
                                 static_cast<int64_t>(d_rows.size()), check.tolerance);
  check.passed = check.result.passed;
  return check;
}

std::string describe_check(const OutputCheck& check, const std::vector<float>& d_rows,
                           const ReferenceProduct& reference) {
  std::ostringstream out;
  const ErrorMetrics& m = check.result.metrics;
  out << (check.passed ? std::string("within every bound") : check.result.failure) << "\n";
  if (check.result.worst_index >= 0) {
    const int64_t i = check.result.worst_index / reference.n;
    const int64_t col = check.result.worst_index % reference.n;
    const double r = reference.r(i, col);
    const double s = reference.s(i, col);
    const float d = d_rows[static_cast<size_t>(check.result.worst_index)];
    out << "  worst element D[" << reference.rows[static_cast<size_t>(i)] << ", " << col << "] = " << d << ", R = " << r
        << ", S = " << s << ", |D - R| = " << std::fabs(d - r) << ", bound " << check.tolerance.element_bound(r, s)
        << "\n";
  }
  out << "  max |D - R| = " << m.max_abs_error << "; ||D - R|| / ||R|| = " << m.norm_relative_error << " (bound "
      << check.tolerance.norm_relative << "); calc_diff = " << m.calc_diff << " (bound " << check.tolerance.calc_diff
      << "); non-finite: " << m.non_finite << "; over the element bound: " << check.result.elements_over_bound << " of "
      << m.elements << " (" << reference.rows.size() << " rows checked)";
  const ErrorStatistics& st = check.result.statistics;
  const Tolerance& t = check.tolerance;
  out << "\n  calibrated ("
      << (t.calibrated ? "K calibrated at " + std::to_string(t.calibrated_k) : std::string("none at this K"))
      << "): gain - 1 = " << st.gain_error << "; output rounding alone " << st.output_rounding_norm << "; excess norm "
      << st.excess_norm << " (bound " << t.calibrated_excess_norm << "); element ratio " << st.element_ratio
      << " (bound " << t.calibrated_element_coefficient
      << "); over the calibrated element bound: " << check.result.elements_over_calibrated_bound;
  return out.str();
}

}  // namespace fp8gemm
