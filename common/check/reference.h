/// @file reference.h
/// @brief The correctness oracle of every test: an FP64 GEMM on dequantized
///        operands, the error metrics, and the tolerance a correct FP8 GEMM
///        meets (derived in docs/tolerances.md).
///
/// The reference multiplies the *dequantized* FP8 operands (code * scale,
/// exact in double), so it measures the kernel's own error (accumulation,
/// scaling, output rounding) and not the quantization error of the inputs.
/// Alongside R = A * B^T it returns S = |A| * |B|^T, the sum of the absolute
/// products, which is what a rounding-error bound of a sum is proportional to.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/api/gemm.h"

namespace fp8gemm {

// -----------------------------------------------------------------------------
// The FP64 reference GEMM
// -----------------------------------------------------------------------------

/// R and S for some or all rows of an M x N product, row-major with leading
/// dimension N: element (i, j) belongs to row rows[i] of the product.
struct ReferenceProduct {
  int64_t n = 0;                ///< Columns of the product (N).
  std::vector<int64_t> rows;    ///< Which rows of the product are held, in order.
  std::vector<double> value;    ///< R[m,n] = sum_k A[m,k] * B[n,k]; rows.size() x n.
  std::vector<double> abs_sum;  ///< S[m,n] = sum_k |A[m,k] * B[n,k]|; rows.size() x n.

  /// R of the i-th held row, column j.
  double r(int64_t i, int64_t j) const { return value[static_cast<size_t>(i * n + j)]; }
  /// S of the i-th held row, column j.
  double s(int64_t i, int64_t j) const { return abs_sum[static_cast<size_t>(i * n + j)]; }
};

/// FP64 GEMM of every row: R = A * B^T and S = |A| * |B|^T.
///
/// `a` is M x K and `b` is N x K, both row-major with K contiguous (the
/// K-major layout of the GEMM) and no padding. Blocked for the caches and run
/// on `threads` threads (0: std::thread::hardware_concurrency()). The result
/// does not depend on the number of threads. Throws std::invalid_argument
/// when M, N or K < 1.
ReferenceProduct reference_gemm(const double* a, const double* b, int64_t m, int64_t n, int64_t k, int threads = 0);

/// As reference_gemm, for the listed rows of A only (any order, repeats
/// allowed): the way to check a shape too large to compute in full. Row i of
/// the result is, bit for bit, row rows[i] of reference_gemm(). Throws
/// std::out_of_range when a row is not in [0, M).
ReferenceProduct reference_gemm_rows(const double* a, const double* b, int64_t m, int64_t n, int64_t k,
                                     const std::vector<int64_t>& rows, int threads = 0);

// -----------------------------------------------------------------------------
// Error metrics
// -----------------------------------------------------------------------------

/// How far an output D is from the reference R, over `elements` pairs.
/// Non-finite elements of D are counted, and the other metrics are taken over
/// the finite ones.
struct ErrorMetrics {
  int64_t elements = 0;              ///< Pairs compared.
  int64_t non_finite = 0;            ///< Elements of D that are NaN or infinite.
  double max_abs_error = 0.0;        ///< max |D - R|.
  double norm_relative_error = 0.0;  ///< ||D - R|| / ||R|| (Frobenius); 0 if both are 0, infinite if only R is.
  double calc_diff = 0.0;            ///< DeepGEMM's 1 - 2 sum(D R) / sum(D^2 + R^2); 0 if both are 0.
};

/// Metrics of `count` outputs `d` (as floats) against the reference `r`.
ErrorMetrics measure_error(const float* d, const double* r, int64_t count);

/// The error of an output beyond what rounding the exact result to the
/// output type explains: what the calibrated bounds of Tolerance compare
/// (docs/tolerances.md, "The calibrated bounds"). Over the finite elements.
struct ErrorStatistics {
  /// sum((D - fl_out(R)) R) / sum(R^2): the least-squares gain of D against R,
  /// minus the gain of fl_out(R), the exact result rounded to the output type
  /// (whose rounding errors are not random at small K: every element of a
  /// K = 1 product has the same significand pattern). A uniform scale error
  /// of 0.2 % shows here as 2e-3, however noisy the rest (0 when R is all zeros).
  double gain_error = 0.0;
  /// ||fl_out(R) - R|| / ||R||: the norm-relative error of an output that did
  /// nothing but round the exact result to the output type.
  double output_rounding_norm = 0.0;
  /// sqrt(max(0, rho^2 - output_rounding_norm^2)), rho the norm-relative
  /// error: the part of rho the output rounding does not explain.
  double excess_norm = 0.0;
  /// The largest max(0, |D - R| - u_out |R|) / S over the elements with S > 0:
  /// an element's error beyond its output rounding, relative to the sum of
  /// its absolute products.
  double element_ratio = 0.0;
};

/// Statistics of `count` outputs `d` of output type `type` against the
/// reference values `r` and absolute sums `s`.
ErrorStatistics measure_statistics(const float* d, const double* r, const double* s, int64_t count, OutputType type);

// -----------------------------------------------------------------------------
// The tolerance policy
// -----------------------------------------------------------------------------

/// Unit roundoff of FP32: 2^-24.
inline constexpr double kFp32UnitRoundoff = 0x1p-24;
/// Unit roundoff of BF16 (8 significant bits): 2^-8.
inline constexpr double kBf16UnitRoundoff = 0x1p-8;
/// Modelled unit roundoff of the Hopper FP8 tensor-core accumulator, which
/// keeps "around 14 bits" (DeepSeek-V3 report): 2^-13.
inline constexpr double kTensorCoreUnitRoundoff = 0x1p-13;
/// K between promotions of tensor-core partial sums into FP32 registers.
inline constexpr int64_t kPromotionInterval = 128;

/// Unit roundoff of rounding an FP32 result to the output type (2^-8 for
/// BF16; 2^-24 for FP32, one spare rounding for an epilogue).
double output_unit_roundoff(OutputType type);

/// Higham's gamma_n = n u / (1 - n u): the relative error bound of n
/// successive roundings with unit roundoff u. Infinite when n u >= 1 (the
/// bound then says nothing).
double rounding_gamma(int64_t n, double u);

/// The largest errors correct kernels showed for one accumulation, output
/// type and K, on zero-mean random inputs: measured on one H200 by
/// fp8gemm_calibrate (bench/calibrate.cu) over every step and both cuBLASLt
/// modes, several seeds and format pairs, and committed as
/// bench/results/h200/tolerance_calibration.json; the table the code reads
/// (common/check/tolerance_calibration.inc) is generated from that file by
/// bench/make_calibration.py. No margin is applied here (gemm_tolerance does).
struct CalibratedError {
  bool available = false;      ///< False when K is beyond the largest calibrated K, or the mode was not measured.
  int64_t k = 0;               ///< The calibrated K the values come from: the smallest one >= K.
  double excess_norm = 0.0;    ///< Largest ErrorStatistics::excess_norm at any calibrated K <= k.
  double element_ratio = 0.0;  ///< Largest ErrorStatistics::element_ratio at any calibrated K <= k.
  double gain_error = 0.0;     ///< Largest absolute ErrorStatistics::gain_error at any calibrated K <= k.
};

/// The calibrated errors for `accumulation`, output `type` and reduction length `k`.
CalibratedError calibrated_error(Accumulation accumulation, OutputType type, int64_t k);

/// Margins of the calibrated bounds over the largest errors measured (docs/tolerances.md).
inline constexpr double kCalibratedNormMargin = 1.5;     ///< On excess_norm.
inline constexpr double kCalibratedElementMargin = 3.0;  ///< On element_ratio.
inline constexpr double kCalibratedGainMargin = 2.0;     ///< On gain_error.
/// No calibrated bound is below this many FP32 unit roundoffs (the two
/// roundings of the scales every kernel makes, with room).
inline constexpr double kCalibratedFloorUnits = 4.0;
/// The norm and gain checks need this many elements to be statistics at all;
/// smaller outputs are judged by the derived bounds and the element check.
inline constexpr int64_t kStatisticalMinimumElements = 1024;

/// Bounds that a correct GEMM result meets, for one output type, K and
/// accumulation. Per element: |D - R| <= element_bound(R, S).
struct Tolerance {
  double r_coefficient = 0.0;  ///< Coefficient of |R| in the per-element bound (output rounding).
  double s_coefficient = 0.0;  ///< Coefficient of S in the per-element bound (accumulation); may be infinite.
  double absolute = 0.0;       ///< Absolute slack for results in the subnormal range.
  double norm_relative = 0.0;  ///< Bound on ||D - R|| / ||R||.
  /// The calc_diff that norm_relative implies (reported beside the metric,
  /// not a pass criterion: a D within norm_relative cannot exceed it).
  double calc_diff = 0.0;

  /// The output type (its rounding enters the calibrated bounds).
  OutputType output = OutputType::kFP32;
  /// Whether the calibrated bounds below apply (they exist for the K that
  /// was calibrated; zero-mean random inputs).
  bool calibrated = false;
  int64_t calibrated_k = 0;                     ///< CalibratedError::k of the bounds below.
  double calibrated_element_coefficient = 0.0;  ///< |D - R| <= r_coefficient |R| + this S + absolute.
  double calibrated_excess_norm = 0.0;          ///< rho^2 <= output_rounding_norm^2 + this^2 (widened, see below).
  double calibrated_gain = 0.0;                 ///< |gain_error| <= this (plus its noise, see below).

  /// Largest |D - R| allowed where the reference is r and the absolute sum s.
  double element_bound(double r, double s) const;
  /// Largest |D - R| the calibrated element check allows (meaningful when calibrated).
  double calibrated_element_bound(double r, double s) const;
  /// The calibrated bound on rho for an output of `elements` finite elements
  /// whose exact result rounds with output_rounding_norm `rounding`:
  /// sqrt(rounding^2 + calibrated_excess_norm^2) * (1 + 8 / sqrt(elements)).
  double calibrated_norm_bound(double rounding, int64_t elements) const;
  /// The calibrated bound on the absolute ErrorStatistics::gain_error:
  /// calibrated_gain + 8 norm_bound / sqrt(elements).
  double calibrated_gain_bound(double norm_bound, int64_t elements) const;
};

/// The tolerance of a GEMM with output `type`, reduction length `k` and
/// accumulation `accumulation`. Throws std::invalid_argument when k < 1.
Tolerance gemm_tolerance(OutputType type, int64_t k, Accumulation accumulation);

/// Outcome of comparing an output with the reference under a Tolerance.
struct ToleranceCheck {
  ErrorMetrics metrics;                        ///< The metrics of the whole comparison.
  ErrorStatistics statistics;                  ///< What the calibrated bounds compare.
  int64_t elements_over_calibrated_bound = 0;  ///< Finite elements over calibrated_element_bound (when calibrated).
  int64_t elements_over_bound = 0;             ///< Finite elements with |D - R| > element_bound(R, S).
  /// The element that most needs a look: the first non-finite one if any,
  /// else the one with the largest |D - R| / element_bound; -1 if none.
  int64_t worst_index = -1;
  double worst_ratio = 0.0;  ///< |D - R| / element_bound at worst_index (infinite for non-finite D).
  /// No non-finite D, no element over its bounds, norm and gain within theirs.
  bool passed = false;
  std::string failure;  ///< Empty when passed; otherwise which rule broke.
};

/// The per-element part of every check: for each finite element, |D - target|
/// against `bound(i)` and, when `calibrated_bound` is set, against it too.
/// Counts the elements over each (elements_over_bound,
/// elements_over_calibrated_bound) and finds the worst one (worst_index,
/// worst_ratio: the first non-finite D, else the largest error over the
/// tighter bound). The other fields of `check` are left as they are.
void tally_element_bounds(const float* d, const double* target, int64_t count,
                          const std::function<double(int64_t)>& bound,
                          const std::function<double(int64_t)>& calibrated_bound, ToleranceCheck* check);

/// Checks `count` outputs `d` against the reference values `r` and absolute
/// sums `s` under `tolerance`. A NaN or infinity in d never passes.
ToleranceCheck check_tolerance(const float* d, const double* r, const double* s, int64_t count,
                               const Tolerance& tolerance);

}  // namespace fp8gemm
