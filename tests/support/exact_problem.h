/// @file exact_problem.h
/// @brief GEMM problems whose exact product a step must return bit for bit:
///        operands of small multiples of 1/2 that every FP8 format holds,
///        power-of-two scales, and magnitudes small enough that every partial
///        sum is exact in the narrowest accumulator the step uses. The
///        derivation is at the top of tests/test_exact_gpu.cu.
///
/// Units: an operand value is v = c / 2 with c an integer of at most three
/// significant bits, |c| <= 16; a product is c_a c_b quarters, and every
/// partial sum an integer number of quarters bounded by
/// S = max_m ||c_a[m]||_1 * max|c_b|. The operands of each accumulation:
///   - kFp32: A and B dense, |c| <= 16. S <= 256 K <= 2^24 (kFp32ExactLimit).
///   - kTensorCorePromoted: A dense with |c_a| <= 8, B dense with |c_b| <= 4:
///     any 128 products sum to at most 128 * 32 = 2^12 (kTensorCoreExactLimit),
///     and S <= 32 K <= 2^24.
///   - kTensorCoreFast: B as above; each row of A holds about 128 nonzero
///     |c_a| <= 8 wherever K > 128, its sum of |c_a| capped at 2^12 / 4, so
///     S <= 2^12 for every K.
/// Half the rows of each operand (drawn) hold no negative value, so that
/// where two such rows meet the sum grows with K (2^16 to 2^19 at K = 7168
/// with the dense operands) rather than cancelling. The scales are 2^e with
/// e in [-3, 3]; D[m,n] = P_mn * 2^(e_a + e_b - 2), rounded to BF16 (to
/// nearest, ties to even, in integer arithmetic: round_to_bf16_significand)
/// for BF16 output.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "common/api/gemm.h"
#include "common/fp8/quantize.h"
#include "support/device_matrices.h"
#include "support/random_problem.h"

namespace fp8gemm::test_support {

/// Largest |partial sum|, in quarters, that FP32 holds exactly: 2^24.
inline constexpr int64_t kFp32ExactLimit = int64_t{1} << 24;
/// Largest |partial sum|, in quarters, this file lets a tensor core form:
/// 2^12, two bits below the ~14 significant bits it keeps (see the file's comment).
inline constexpr int64_t kTensorCoreExactLimit = int64_t{1} << 12;
/// Products a tensor core sums before promotion to FP32 (kTensorCorePromoted).
inline constexpr int64_t kTensorCoreBlock = 128;

/// An operand of an exact problem, as integers c = 2 v (see the file's comment).
struct IntegerOperand {
  int64_t rows = 0;             ///< Rows (M for A, N for B).
  int64_t cols = 0;             ///< K.
  std::vector<int16_t> values;  ///< rows x cols integers c, row-major: the operand is c / 2.
  int scale_exponent = 0;       ///< The operand's dequantization scale is 2^scale_exponent.
  int64_t max_abs = 0;          ///< Largest |c|.
  int64_t max_row_l1 = 0;       ///< Largest sum of |c| over a row.
};

/// A problem, its exact product and the bounds of its partial sums.
struct ExactProblem {
  ProblemShape shape;                                 ///< Sizes and formats.
  Accumulation accumulation = Accumulation::kFp32;    ///< The accumulator its magnitudes were chosen for.
  std::shared_ptr<const IntegerOperand> a_values;     ///< A as integers c = 2 v.
  std::shared_ptr<const IntegerOperand> b_values;     ///< B as integers c = 2 v.
  QuantizedMatrix a;                                  ///< A's codes (ld = K) and its scale 2^e_a.
  QuantizedMatrix b;                                  ///< B's codes (ld = K) and its scale 2^e_b.
  int output_exponent = 0;                            ///< e_a + e_b - 2: D = P * 2^output_exponent.
  std::shared_ptr<const std::vector<int32_t>> exact;  ///< P: M x N, row-major, P_mn = sum_k c_a c_b.
};

/// The integer operand `role` ('A' or 'B') of `rows` x `k` for a kernel
/// that sums as `accumulation`, drawn from the run's seed (see the file's
/// comment for the values of each accumulation). Cached.
std::shared_ptr<const IntegerOperand> exact_operand(char role, int64_t rows, int64_t k, Accumulation accumulation);

/// The codes of an integer operand in `format`, with its scale. Throws
/// std::logic_error if a value is not held exactly (it always is).
QuantizedMatrix encode_exact_operand(const IntegerOperand& operand, Fp8Format format);

/// The exact problem of this shape for a kernel summing as `accumulation`:
/// operands, codes, scales, exact product and bounds. Cached: the operands and
/// the product do not depend on the formats, only the codes do.
std::shared_ptr<const ExactProblem> exact_problem(const ProblemShape& shape, Accumulation accumulation);

/// Success when operands `a` and `b` keep every partial sum of A B^T exact
/// in a kernel that sums as `accumulation`: with S = max||c_a||_1 * max|c_b|
/// (every partial sum, in quarters) and T = min(K, 128) * max|c_a| * max|c_b|
/// (any 128 products), S <= kFp32ExactLimit for kFp32; T <=
/// kTensorCoreExactLimit and S <= kFp32ExactLimit for kTensorCorePromoted;
/// S <= kTensorCoreExactLimit for kTensorCoreFast. Otherwise says which fails.
::testing::AssertionResult exactness_bound_holds(const IntegerOperand& a, const IntegerOperand& b,
                                                 Accumulation accumulation);

/// `value` rounded to 8 significant bits (BF16's significand), to nearest,
/// ties to even, in integer arithmetic.
int64_t round_to_bf16_significand(int64_t value);

/// The value D[row, col] must hold: P * 2^output_exponent, rounded to BF16
/// (round_to_bf16_significand) for BF16 output.
float exact_output(const ExactProblem& problem, int64_t row, int64_t col, OutputType type);

/// Success when every element of D equals exact_output() bit for bit (a zero
/// of either sign counting as the exact zero); otherwise the number of
/// mismatches and the first ones, with the exact value, the seed and the
/// shape.
::testing::AssertionResult equals_exact_product(const OutputSnapshot& d, const ExactProblem& problem);

}  // namespace fp8gemm::test_support
