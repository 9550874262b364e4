#include "common/check/reference.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "common/device/output.h"

namespace fp8gemm {

namespace {

// -----------------------------------------------------------------------------
// Blocked FP64 GEMM
// -----------------------------------------------------------------------------

// One work item is a tile of kTileRows x kTileCols outputs, computed over the
// whole K by one thread. B is K-major, so its rows cannot feed a vector loop
// along N directly: each kTileK slice of the tile's rows of B is first copied
// into a panel laid out [k][n]. The innermost loop then runs along n over
// contiguous memory with no dependence between iterations, and the compiler
// vectorizes it (a dot product along k would be a reduction, which it may not
// reorder without -ffast-math).
constexpr int64_t kTileRows = 16;
constexpr int64_t kTileCols = 64;
constexpr int64_t kTileK = 128;

// Per-thread scratch. Distinct member arrays: the compiler knows that the
// accumulators and the panel never overlap, so it vectorizes without runtime
// alias checks.
struct TileScratch {
  double r[kTileRows][kTileCols];
  double s[kTileRows][kTileCols];
  double b_panel[kTileK][kTileCols];
};

struct Problem {
  const double* a;
  const double* b;
  int64_t n;
  int64_t k;
  const std::vector<int64_t>* rows;
};

// Copies B[col0 + j, k0 + kk] to panel[kk][j]; columns past N become zeros so
// that the inner loop always runs over a whole tile.
void pack_b_panel(const Problem& p, int64_t col0, int64_t cols, int64_t k0, int64_t depth, TileScratch& t) {
  for (int64_t j = 0; j < kTileCols; ++j) {
    if (j < cols) {
      const double* b_row = p.b + (col0 + j) * p.k + k0;
      for (int64_t kk = 0; kk < depth; ++kk) t.b_panel[kk][j] = b_row[kk];
    } else {
      for (int64_t kk = 0; kk < depth; ++kk) t.b_panel[kk][j] = 0.0;
    }
  }
}

// R and S of the tile whose first held row is row0 and first column col0.
void compute_tile(const Problem& p, int64_t row0, int64_t row_count, int64_t col0, int64_t cols, TileScratch& t,
                  ReferenceProduct& out) {
  for (int64_t i = 0; i < row_count; ++i) {
    for (int64_t j = 0; j < kTileCols; ++j) t.r[i][j] = t.s[i][j] = 0.0;
  }
  for (int64_t k0 = 0; k0 < p.k; k0 += kTileK) {
    const int64_t depth = std::min(kTileK, p.k - k0);
    pack_b_panel(p, col0, cols, k0, depth, t);
    for (int64_t i = 0; i < row_count; ++i) {
      const double* a_row = p.a + (*p.rows)[static_cast<size_t>(row0 + i)] * p.k + k0;
      for (int64_t kk = 0; kk < depth; ++kk) {
        const double a_value = a_row[kk];
        for (int64_t j = 0; j < kTileCols; ++j) {  // the vectorized loop
          const double product = a_value * t.b_panel[kk][j];
          t.r[i][j] += product;
          t.s[i][j] += std::fabs(product);
        }
      }
    }
  }
  for (int64_t i = 0; i < row_count; ++i) {
    double* r_out = out.value.data() + (row0 + i) * p.n + col0;
    double* s_out = out.abs_sum.data() + (row0 + i) * p.n + col0;
    std::copy(t.r[i], t.r[i] + cols, r_out);
    std::copy(t.s[i], t.s[i] + cols, s_out);
  }
}

int thread_count(int requested, int64_t work_items) {
  int threads = requested > 0 ? requested : static_cast<int>(std::thread::hardware_concurrency());
  threads = std::max(threads, 1);
  return static_cast<int>(std::min<int64_t>(threads, work_items));
}

void check_shape(int64_t m, int64_t n, int64_t k) {
  if (m < 1 || n < 1 || k < 1) {
    std::ostringstream msg;
    msg << "reference_gemm: M, N and K must be >= 1, got M = " << m << ", N = " << n << ", K = " << k;
    throw std::invalid_argument(msg.str());
  }
}

}  // namespace

ReferenceProduct reference_gemm(const double* a, const double* b, int64_t m, int64_t n, int64_t k, int threads) {
  check_shape(m, n, k);
  std::vector<int64_t> all_rows(static_cast<size_t>(m));
  for (int64_t i = 0; i < m; ++i) all_rows[static_cast<size_t>(i)] = i;
  return reference_gemm_rows(a, b, m, n, k, all_rows, threads);
}

ReferenceProduct reference_gemm_rows(const double* a, const double* b, int64_t m, int64_t n, int64_t k,
                                     const std::vector<int64_t>& rows, int threads) {
  check_shape(m, n, k);
  for (int64_t row : rows) {
    if (row < 0 || row >= m) {
      throw std::out_of_range("reference_gemm_rows: row " + std::to_string(row) + " is outside [0, " +
                              std::to_string(m) + ")");
    }
  }
  ReferenceProduct out;
  out.n = n;
  out.rows = rows;
  const int64_t held = static_cast<int64_t>(rows.size());
  out.value.assign(static_cast<size_t>(held * n), 0.0);
  out.abs_sum.assign(static_cast<size_t>(held * n), 0.0);
  if (held == 0) return out;

  const Problem problem{a, b, n, k, &out.rows};
  const int64_t tile_rows = (held + kTileRows - 1) / kTileRows;
  const int64_t tile_cols = (n + kTileCols - 1) / kTileCols;
  const int64_t tiles = tile_rows * tile_cols;
  // Threads take tiles from a shared counter until none are left; each tile
  // is computed by one thread in a fixed order, so the result is the same for
  // any number of threads.
  std::atomic<int64_t> next_tile{0};
  auto worker = [&]() {
    auto scratch = std::make_unique<TileScratch>();
    for (int64_t tile = next_tile++; tile < tiles; tile = next_tile++) {
      const int64_t row0 = (tile / tile_cols) * kTileRows;
      const int64_t col0 = (tile % tile_cols) * kTileCols;
      compute_tile(problem, row0, std::min(kTileRows, held - row0), col0, std::min(kTileCols, n - col0), *scratch, out);
    }
  };
  const int workers = thread_count(threads, tiles);
  std::vector<std::thread> pool;
  for (int i = 1; i < workers; ++i) pool.emplace_back(worker);
  worker();  // the calling thread works too
  for (std::thread& t : pool) t.join();
  return out;
}

// -----------------------------------------------------------------------------
// Error metrics
// -----------------------------------------------------------------------------

ErrorMetrics measure_error(const float* d, const double* r, int64_t count) {
  ErrorMetrics m;
  m.elements = count;
  double diff_squares = 0.0, r_squares = 0.0, d_squares = 0.0;
  for (int64_t i = 0; i < count; ++i) {
    const double x = d[i];
    if (!std::isfinite(x)) {
      ++m.non_finite;
      continue;
    }
    const double diff = x - r[i];
    m.max_abs_error = std::max(m.max_abs_error, std::fabs(diff));
    diff_squares += diff * diff;
    r_squares += r[i] * r[i];
    d_squares += x * x;
  }
  if (r_squares > 0.0) {
    m.norm_relative_error = std::sqrt(diff_squares / r_squares);
  } else {
    m.norm_relative_error = diff_squares > 0.0 ? std::numeric_limits<double>::infinity() : 0.0;
  }
  // 1 - 2 sum(xy) / sum(x^2 + y^2) is sum((x - y)^2) / sum(x^2 + y^2); the
  // second form does not cancel when the outputs are close.
  const double denominator = d_squares + r_squares;
  m.calc_diff = denominator > 0.0 ? diff_squares / denominator : 0.0;
  return m;
}

namespace {

// R rounded to the output type, as a kernel that computed R exactly would store it.
double round_to_output(double r, OutputType type) {
  const float as_float = static_cast<float>(r);
  if (type == OutputType::kFP32) return as_float;
  return bf16_bits_to_float(float_to_bf16_bits(as_float));
}

}  // namespace

ErrorStatistics measure_statistics(const float* d, const double* r, const double* s, int64_t count, OutputType type) {
  ErrorStatistics st;
  const double u_out = output_unit_roundoff(type);
  double dr = 0.0, rr = 0.0, diff_squares = 0.0, rounding_squares = 0.0;
  for (int64_t i = 0; i < count; ++i) {
    const double x = d[i];
    if (!std::isfinite(x)) continue;
    const double diff = x - r[i];
    const double rounded = round_to_output(r[i], type);
    const double rounding = rounded - r[i];
    dr += (x - rounded) * r[i];
    rr += r[i] * r[i];
    diff_squares += diff * diff;
    rounding_squares += rounding * rounding;
    if (s[i] > 0.0) {
      st.element_ratio = std::max(st.element_ratio, std::max(0.0, std::fabs(diff) - u_out * std::fabs(r[i])) / s[i]);
    }
  }
  if (rr > 0.0) {
    st.gain_error = dr / rr;
    st.output_rounding_norm = std::sqrt(rounding_squares / rr);
    st.excess_norm = std::sqrt(std::max(0.0, diff_squares - rounding_squares) / rr);
  }
  return st;
}

// -----------------------------------------------------------------------------
// The calibration (bench/make_calibration.py writes the table)
// -----------------------------------------------------------------------------

namespace {

struct CalibrationRow {
  Accumulation accumulation;
  OutputType output;
  int64_t k;             // 0: the end of the table
  double excess_norm;    // the largest excess_norm measured at this K
  double element_ratio;  // the largest element_ratio
  double gain_error;     // the largest |gain_error|
};

constexpr CalibrationRow kCalibration[] = {
#include "common/check/tolerance_calibration.inc"
    {Accumulation::kFp32, OutputType::kFP32, 0, 0.0, 0.0, 0.0}};

}  // namespace

CalibratedError calibrated_error(Accumulation accumulation, OutputType type, int64_t k) {
  // The bound at K is the largest measured at any calibrated K' <= the
  // smallest calibrated K' >= K: errors grow with K, and a K between two
  // calibrated ones gets the larger one's values.
  int64_t ceiling = 0;
  for (const CalibrationRow& row : kCalibration) {
    if (row.k == 0 || row.accumulation != accumulation || row.output != type || row.k < k) continue;
    if (ceiling == 0 || row.k < ceiling) ceiling = row.k;
  }
  CalibratedError e;
  if (ceiling == 0) return e;
  e.available = true;
  e.k = ceiling;
  for (const CalibrationRow& row : kCalibration) {
    if (row.k == 0 || row.accumulation != accumulation || row.output != type || row.k > ceiling) continue;
    e.excess_norm = std::max(e.excess_norm, row.excess_norm);
    e.element_ratio = std::max(e.element_ratio, row.element_ratio);
    e.gain_error = std::max(e.gain_error, row.gain_error);
  }
  return e;
}

// -----------------------------------------------------------------------------
// Tolerance policy (derivation: docs/tolerances.md)
// -----------------------------------------------------------------------------

namespace {

// The constant c of the probabilistic norm bound c * sqrt(n) * u. Random
// rounding errors give about 0.4 * sqrt(n) * u on the zero-mean inputs of the
// tests; c = 1 leaves a margin of about 2.4.
constexpr double kProbabilisticConstant = 1.0;

// Results below FP32's smallest normal are rounded in absolute, not relative,
// terms; this much slack covers a few such roundings.
constexpr double kUnderflowSlack = 0x1p-126;

}  // namespace

double output_unit_roundoff(OutputType type) {
  return type == OutputType::kBF16 ? kBf16UnitRoundoff : kFp32UnitRoundoff;
}

double rounding_gamma(int64_t n, double u) {
  const double nu = static_cast<double>(n) * u;
  return nu < 1.0 ? nu / (1.0 - nu) : std::numeric_limits<double>::infinity();
}

double Tolerance::element_bound(double r, double s) const {
  return r_coefficient * std::fabs(r) + s_coefficient * s + absolute;
}

double Tolerance::calibrated_element_bound(double r, double s) const {
  return r_coefficient * std::fabs(r) + calibrated_element_coefficient * s + absolute;
}

double Tolerance::calibrated_norm_bound(double rounding, int64_t elements) const {
  const double sample = 1.0 + 8.0 / std::sqrt(static_cast<double>(std::max<int64_t>(elements, 1)));
  return std::sqrt(rounding * rounding + calibrated_excess_norm * calibrated_excess_norm) * sample;
}

double Tolerance::calibrated_gain_bound(double norm_bound, int64_t elements) const {
  return calibrated_gain + 8.0 * norm_bound / std::sqrt(static_cast<double>(std::max<int64_t>(elements, 1)));
}

Tolerance gemm_tolerance(OutputType type, int64_t k, Accumulation accumulation) {
  if (k < 1) throw std::invalid_argument("gemm_tolerance: K must be >= 1, got " + std::to_string(k));
  const double u = kFp32UnitRoundoff;
  const double u_tc = kTensorCoreUnitRoundoff;
  const double u_out = output_unit_roundoff(type);
  const double c = kProbabilisticConstant;
  const double kd = static_cast<double>(k);

  // Accumulation: the coefficient of S in the worst-case bound (before output
  // rounding), and the probabilistic norm-relative error.
  double s_coefficient = 0.0;
  double accumulation_norm = 0.0;
  switch (accumulation) {
    case Accumulation::kFp32:
      // K - 1 additions, two scale roundings (a_scale * b_scale and its product
      // with the sum) and the FP64 reference's own error: gamma_{K+2}.
      s_coefficient = rounding_gamma(k + 2, u);
      accumulation_norm = c * std::sqrt(kd) * u + 2.0 * u;
      break;
    case Accumulation::kTensorCorePromoted: {
      // Inside one promotion interval the tensor core adds L products plus its
      // accumulator once per 32 of K; the interval sums are then added in FP32.
      const int64_t interval = std::min(k, kPromotionInterval);
      const int64_t intervals = (k + kPromotionInterval - 1) / kPromotionInterval;
      const double inner = rounding_gamma(interval + (interval + 31) / 32, u_tc);
      s_coefficient = inner + rounding_gamma(intervals + 2, u) * (1.0 + inner);
      accumulation_norm = c * std::sqrt(static_cast<double>(interval)) * u_tc +
                          c * std::sqrt(static_cast<double>(intervals)) * u + 2.0 * u;
      break;
    }
    case Accumulation::kTensorCoreFast:
    default:
      s_coefficient = rounding_gamma(k + (k + 31) / 32, u_tc) + rounding_gamma(2, u);
      accumulation_norm = c * std::sqrt(kd) * u_tc + 2.0 * u;
      break;
  }

  Tolerance t;
  // |D - R| <= u_out |y| + |y - R| with y the FP32 result before output
  // rounding, and |y| <= |R| + |y - R|.
  t.r_coefficient = u_out;
  t.s_coefficient = (1.0 + u_out) * s_coefficient;
  t.absolute = kUnderflowSlack;
  t.norm_relative = u_out + (1.0 + u_out) * accumulation_norm;
  // calc_diff = ||D - R||^2 / (||D||^2 + ||R||^2) and ||D|| >= (1 - rho) ||R||.
  const double rho = std::min(t.norm_relative, 1.0);
  t.calc_diff = rho * rho / (1.0 + (1.0 - rho) * (1.0 - rho));

  // The calibrated bounds: what correct kernels measured, times a margin,
  // never below the two roundings of the scales that every kernel makes.
  t.output = type;
  const CalibratedError measured = calibrated_error(accumulation, type, k);
  if (measured.available) {
    const double floor = kCalibratedFloorUnits * u;
    t.calibrated = true;
    t.calibrated_k = measured.k;
    t.calibrated_element_coefficient = std::max(kCalibratedElementMargin * measured.element_ratio, floor);
    t.calibrated_excess_norm = std::max(kCalibratedNormMargin * measured.excess_norm, floor);
    t.calibrated_gain = std::max(kCalibratedGainMargin * measured.gain_error, floor);
  }
  return t;
}

void tally_element_bounds(const float* d, const double* target, int64_t count,
                          const std::function<double(int64_t)>& bound,
                          const std::function<double(int64_t)>& calibrated_bound, ToleranceCheck* check) {
  for (int64_t i = 0; i < count; ++i) {
    const double x = d[i];
    if (!std::isfinite(x)) {
      if (check->worst_ratio != std::numeric_limits<double>::infinity()) {
        check->worst_index = i;
        check->worst_ratio = std::numeric_limits<double>::infinity();
      }
      continue;
    }
    const double error = std::fabs(x - target[i]);
    double tightest = bound(i);
    if (error > tightest) ++check->elements_over_bound;
    if (calibrated_bound) {
      const double calibrated = calibrated_bound(i);
      if (error > calibrated) ++check->elements_over_calibrated_bound;
      tightest = std::min(tightest, calibrated);  // the worst element is judged by the tighter bound
    }
    const double ratio = error / tightest;
    if (check->worst_index < 0 || ratio > check->worst_ratio) {
      check->worst_index = i;
      check->worst_ratio = ratio;
    }
  }
}

ToleranceCheck check_tolerance(const float* d, const double* r, const double* s, int64_t count,
                               const Tolerance& tolerance) {
  ToleranceCheck check;
  check.metrics = measure_error(d, r, count);
  check.statistics = measure_statistics(d, r, s, count, tolerance.output);
  const auto bound = [&](int64_t i) { return tolerance.element_bound(r[i], s[i]); };
  std::function<double(int64_t)> calibrated;
  if (tolerance.calibrated) calibrated = [&](int64_t i) { return tolerance.calibrated_element_bound(r[i], s[i]); };
  tally_element_bounds(d, r, count, bound, calibrated, &check);

  std::ostringstream failure;
  const ErrorMetrics& m = check.metrics;
  if (m.non_finite > 0) {
    failure << m.non_finite << " of " << m.elements << " elements are NaN or infinite";
  } else if (check.elements_over_bound > 0) {
    failure << check.elements_over_bound << " of " << m.elements
            << " elements exceed |D - R| <= " << tolerance.r_coefficient << " |R| + " << tolerance.s_coefficient
            << " S + " << tolerance.absolute;
  } else if (check.elements_over_calibrated_bound > 0) {
    failure << check.elements_over_calibrated_bound << " of " << m.elements
            << " elements exceed the calibrated |D - R| <= " << tolerance.r_coefficient << " |R| + "
            << tolerance.calibrated_element_coefficient << " S + " << tolerance.absolute << " (K calibrated at "
            << tolerance.calibrated_k << ")";
  } else if (!(m.norm_relative_error <= tolerance.norm_relative)) {
    failure << "norm-relative error " << m.norm_relative_error << " exceeds " << tolerance.norm_relative;
  } else if (tolerance.calibrated && m.elements - m.non_finite >= kStatisticalMinimumElements) {
    const int64_t finite = m.elements - m.non_finite;
    const ErrorStatistics& st = check.statistics;
    const double norm_bound = tolerance.calibrated_norm_bound(st.output_rounding_norm, finite);
    const double gain_bound = tolerance.calibrated_gain_bound(norm_bound, finite);
    if (!(m.norm_relative_error <= norm_bound)) {
      failure << "norm-relative error " << m.norm_relative_error << " exceeds the calibrated " << norm_bound
              << " (output rounding alone: " << st.output_rounding_norm << "; K calibrated at "
              << tolerance.calibrated_k << ")";
    } else if (!(std::fabs(st.gain_error) <= gain_bound)) {
      failure << "gain sum(D R) / sum(R^2) = 1 + " << st.gain_error << ", off by more than the calibrated "
              << gain_bound << " (a uniform scale error)";
    }
  }
  check.failure = failure.str();
  check.passed = check.failure.empty();
  return check;
}

}  // namespace fp8gemm
