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

/// What a failed check says: the broken rule, the worst element (its row and
/// column in D, D, R, S, the bound) and every metric with its bound.
std::string describe_check(const OutputCheck& check, const std::vector<float>& d_rows,
                           const ReferenceProduct& reference);

}  // namespace fp8gemm
