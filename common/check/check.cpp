#include "common/check/check.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>
#include <set>
#include <sstream>

#include "common/check/parallel.h"
#include "common/device/epilogue.h"

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

double reference_epilogue_value(double r, double bias, Activation activation) {
  const double z = r + bias;
  switch (activation) {
    case Activation::kGeluTanh: {
      const double sqrt_two_over_pi = 0.79788456080286535588;
      return 0.5 * z * (1.0 + std::tanh(sqrt_two_over_pi * (z + 0.044715 * z * z * z)));
    }
    case Activation::kGeluErf: return 0.5 * z * (1.0 + std::erf(z * 0.70710678118654752440));
    default: return z;
  }
}

namespace {

// The pieces of the epilogue's element bound (check.h, check_epilogue_rows).
struct EpilogueBound {
  double u_out = 0.0;  // unit roundoff of D (with the division by d_scale for FP8)
  double eta = 0.0;    // absolute slack of D's smallest values
  double slope = 1.0;  // L
  double limit = 0.0;  // FP8: the largest value D can hold (format max * d_scale); 0: none
  Tolerance gemm;      // the accumulation's bounds, FP32 output
};

EpilogueBound epilogue_bound(const EpilogueReference& e, OutputType d_type, int64_t k, Accumulation accumulation) {
  EpilogueBound b;
  b.gemm = gemm_tolerance(OutputType::kFP32, k, accumulation);
  b.slope = e.activation == Activation::kNone ? 1.0 : kGeluSlopeBound;
  if (is_fp8_output(d_type)) {
    const Fp8Format f = fp8_output_format(d_type);
    // Round to 1 + mantissa bits significant bits, after one FP32 division.
    b.u_out = std::ldexp(1.0, -(fp8_mantissa_bits(f) + 1)) + kFp32UnitRoundoff;
    // Half the spacing of the subnormals, 2^(1 - bias - mantissa bits) / 2, in D's units.
    b.eta = std::ldexp(1.0, -fp8_bias(f) - fp8_mantissa_bits(f)) * e.d_scale + 0x1p-126;
    b.limit = static_cast<double>(fp8_max(f)) * e.d_scale;
  } else {
    b.u_out = output_unit_roundoff(d_type);
    b.eta = 0x1p-126;
  }
  return b;
}

// The error allowed in y = activation(z) before D's rounding, for an element
// whose exact z and y are z and y, with absolute sum s, and the coefficient
// of S of the accumulation (derived or calibrated).
double activation_error(const EpilogueBound& b, const EpilogueReference& e, double z, double y, double s,
                        double s_coefficient) {
  const double u = kFp32UnitRoundoff;
  const double e_z = s_coefficient * s + u * (std::fabs(z) + s_coefficient * s);
  const double e_act = e.activation == Activation::kNone ? 0.0 : 8.0 * u * (std::fabs(z) + std::fabs(y));
  return b.slope * e_z + e_act;
}

}  // namespace

OutputCheck check_epilogue_rows(const std::vector<float>& d_rows, const ReferenceProduct& reference,
                                const EpilogueReference& epilogue, OutputType d_type, int64_t k,
                                Accumulation accumulation) {
  const EpilogueBound b = epilogue_bound(epilogue, d_type, k, accumulation);
  OutputCheck check;
  check.tolerance = b.gemm;
  check.tolerance.r_coefficient = b.u_out;
  check.tolerance.absolute = b.eta;
  const int64_t count = static_cast<int64_t>(d_rows.size());
  std::vector<double> target(static_cast<size_t>(count));
  ToleranceCheck& result = check.result;
  for (int64_t i = 0; i < count; ++i) {
    const double bias = epilogue.bias.empty() ? 0.0 : epilogue.bias[static_cast<size_t>(i % reference.n)];
    const double y = reference_epilogue_value(reference.value[static_cast<size_t>(i)], bias, epilogue.activation);
    target[static_cast<size_t>(i)] = b.limit > 0.0 ? std::clamp(y, -b.limit, b.limit) : y;
  }
  result.metrics = measure_error(d_rows.data(), target.data(), count);
  // The bound of element i with accumulation coefficient c (check.h).
  const auto bound_with = [&](int64_t i, double c) {
    const double bias = epilogue.bias.empty() ? 0.0 : epilogue.bias[static_cast<size_t>(i % reference.n)];
    const double r = reference.value[static_cast<size_t>(i)];
    const double t = target[static_cast<size_t>(i)];
    const double s = reference.abs_sum[static_cast<size_t>(i)];
    return b.u_out * std::fabs(t) + (1.0 + b.u_out) * activation_error(b, epilogue, r + bias, t, s, c) + b.eta;
  };
  std::function<double(int64_t)> calibrated;
  if (b.gemm.calibrated) {
    calibrated = [&](int64_t i) { return bound_with(i, b.gemm.calibrated_element_coefficient); };
  }
  tally_element_bounds(
      d_rows.data(), target.data(), count, [&](int64_t i) { return bound_with(i, b.gemm.s_coefficient); }, calibrated,
      &result);
  std::ostringstream failure;
  const ErrorMetrics& m = result.metrics;
  if (m.non_finite > 0) {
    failure << m.non_finite << " of " << m.elements << " elements are NaN or infinite";
  } else if (result.elements_over_bound > 0) {
    failure << result.elements_over_bound << " of " << m.elements
            << " elements exceed the epilogue's bound |D - Y| <= u_out |Y| + (1 + u_out) (L e_z + e_act) + eta (u_out "
            << b.u_out << ", L " << b.slope << ", accumulation coefficient " << b.gemm.s_coefficient << ")";
  } else if (result.elements_over_calibrated_bound > 0) {
    failure << result.elements_over_calibrated_bound << " of " << m.elements
            << " elements exceed the epilogue's bound with the calibrated accumulation coefficient "
            << b.gemm.calibrated_element_coefficient << " (K calibrated at " << b.gemm.calibrated_k << ")";
  }
  result.failure = failure.str();
  result.passed = result.failure.empty();
  check.passed = result.passed;
  return check;
}

AmaxReference reference_amax(const ReferenceProduct& reference, const EpilogueReference& epilogue, int64_t k,
                             Accumulation accumulation) {
  const EpilogueBound b = epilogue_bound(epilogue, OutputType::kFP32, k, accumulation);
  AmaxReference out;
  for (size_t i = 0; i < reference.value.size(); ++i) {
    const double bias = epilogue.bias.empty() ? 0.0 : epilogue.bias[i % static_cast<size_t>(reference.n)];
    const double r = reference.value[i];
    const double y = reference_epilogue_value(r, bias, epilogue.activation);
    const double error = activation_error(b, epilogue, r + bias, y, reference.abs_sum[i], b.gemm.s_coefficient);
    if (std::fabs(y) > out.amax) out.amax = std::fabs(y);
    out.bound = std::max(out.bound, error + kFp32UnitRoundoff * std::fabs(y));
  }
  return out;
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
