/// @file check.h
/// @brief The one oracle: which rows of D are compared with the FP64
///        reference, the reference of those rows, and the verdict under the
///        tolerance of the step's accumulation. The tests, `fp8gemm --check`,
///        the ladder and the sweeps all check through it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/api/gemm.h"
#include "common/check/reference.h"
#include "common/fp8/quantize.h"

namespace fp8gemm {

/// Largest M * N * K whose reference is computed on every row of D; larger
/// problems are checked on kCheckedRows rows (the reference runs on the CPU).
inline constexpr int64_t kFullCheckLimit = int64_t{1} << 33;
/// Rows of D compared with the reference in a large problem.
inline constexpr int64_t kCheckedRows = 256;

/// How many rows of D a check compares with the reference: M when
/// M * N * K <= kFullCheckLimit or M <= kCheckedRows, else kCheckedRows
/// (rows_to_check() returns that many).
int64_t checked_row_count(int64_t m, int64_t n, int64_t k);

/// The rows of D a check compares with the reference: all of them when
/// M * N * K <= kFullCheckLimit or M <= kCheckedRows; otherwise the first, the
/// last (where a ragged M goes wrong) and kCheckedRows - 2 others drawn from
/// `seed` without repeats, in increasing order.
std::vector<int64_t> rows_to_check(int64_t m, int64_t n, int64_t k, uint64_t seed);

/// The listed rows of a quantized matrix, dequantized exactly to doubles:
/// rows.size() x cols, row-major.
std::vector<double> dequantize_rows(const QuantizedMatrix& q, const std::vector<int64_t>& rows);

/// R and S (reference.h) of the listed rows of D = A B^T, from the quantized
/// operands dequantized exactly: the kernel's error, not the quantization's.
ReferenceProduct reference_of_rows(const QuantizedMatrix& a, const QuantizedMatrix& b,
                                   const std::vector<int64_t>& rows);

/// The outcome of comparing the checked rows of D with their reference.
struct OutputCheck {
  Tolerance tolerance;    ///< The bounds applied (from the output type, K and the accumulation).
  ToleranceCheck result;  ///< Metrics, elements over their bound, the worst element.
  bool passed = false;    ///< Every bound held and no element was NaN or infinite.
};

/// Compares `d_rows` (reference.rows.size() x N floats: the checked rows of D,
/// in the order of reference.rows) with the reference, under
/// gemm_tolerance(d_type, k, accumulation).
OutputCheck check_rows(const std::vector<float>& d_rows, const ReferenceProduct& reference, OutputType d_type,
                       int64_t k, Accumulation accumulation);

/// The epilogue an output went through, as its reference needs it
/// (GemmArgs: bias, activation, d_scale).
struct EpilogueReference {
  /// N bias values exactly as the kernel reads them (a BF16 bias already
  /// rounded to BF16); empty: no bias.
  std::vector<double> bias;
  Activation activation = Activation::kNone;  ///< The activation after the bias.
  float d_scale = 1.0f;                       ///< FP8 D: its dequantization scale.
  /// True when the output is more than the plain product (a bias or an activation).
  bool active() const { return !bias.empty() || activation != Activation::kNone; }
};

/// The exact result of one element after the epilogue, in double:
/// activation(r + bias), with GELU in the form asked for.
double reference_epilogue_value(double r, double bias, Activation activation);

/// Compares `d_rows` (values of D as floats: FP8 codes already times d_scale)
/// with the reference after the epilogue: Y = activation(R + bias), and for
/// FP8 D, Y saturated to the format's largest value times d_scale. Per element:
///   |D - Y| <= u_out |Y| + (1 + u_out) (L e_z + e_act) + eta,
/// where e_z bounds the error of the FP32 z = sum + bias (the accumulation
/// bound of gemm_tolerance for FP32 output, times S, plus one rounding of z),
/// L is 1 or kGeluSlopeBound, e_act is GELU's own evaluation error in FP32
/// (8 u (|Z| + |Y|)), u_out is D's unit roundoff (2^-4 for e4m3 and 2^-3 for
/// e5m2, with the rounding of y / d_scale) and eta the absolute slack of D's
/// smallest values (half the FP8 subnormal spacing times d_scale). Where the
/// calibrated bounds exist (docs/tolerances.md) e_z also gets the calibrated
/// coefficient, and an element must meet that tighter bound as well. Plain
/// outputs (no bias or activation, BF16 or FP32 D) should use check_rows,
/// which adds the calibrated norm and gain checks.
OutputCheck check_epilogue_rows(const std::vector<float>& d_rows, const ReferenceProduct& reference,
                                const EpilogueReference& epilogue, OutputType d_type, int64_t k,
                                Accumulation accumulation);

/// The largest |Y| over the checked rows (Y as in check_epilogue_rows, before
/// saturation), and how far a correct amax may be from it.
struct AmaxReference {
  double amax = 0.0;   ///< max |Y| over the checked rows.
  double bound = 0.0;  ///< The error a correct kernel may make there (its element bound before output rounding).
};

/// The reference amax of the checked rows.
AmaxReference reference_amax(const ReferenceProduct& reference, const EpilogueReference& epilogue, int64_t k,
                             Accumulation accumulation);

/// What a failed check says: the broken rule, the worst element (its row and
/// column in D, D, R, S, the bound) and every metric with its bound.
std::string describe_check(const OutputCheck& check, const std::vector<float>& d_rows,
                           const ReferenceProduct& reference);

}  // namespace fp8gemm
