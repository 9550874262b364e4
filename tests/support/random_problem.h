/// @file random_problem.h
/// @brief Random FP8 GEMM problems for the GPU tests, each with its FP64
///        reference, made once per shape and shared by every step.
///
/// Inputs are fresh in every run: the run's seed comes from
/// std::random_device (or from FP8GEMM_TEST_SEED, to replay a failure) and is
/// printed, and every operand's own seed is derived from it and the operand's
/// shape. The same run seed therefore gives the same inputs to every step.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/check/check.h"
#include "common/fp8/fp8.h"
#include "common/fp8/quantize.h"
#include "support/seed.h"

namespace fp8gemm::test_support {

/// A rows x cols row-major matrix of N(0, 1) floats, a pure function of
/// `seed` (the same whatever the number of threads that fill it).
std::vector<float> random_normal_matrix(int64_t rows, int64_t cols, uint64_t seed);

/// A rows x cols FP8 operand: random_normal_matrix quantized per tensor.
QuantizedMatrix random_fp8_matrix(int64_t rows, int64_t cols, Fp8Format format, uint64_t seed);

/// Shape and operand formats of one GEMM problem.
struct ProblemShape {
  int64_t m = 1;                          ///< Rows of A and D.
  int64_t n = 1;                          ///< Rows of B, columns of D.
  int64_t k = 1;                          ///< Reduction length.
  Fp8Format a_format = Fp8Format::kE4M3;  ///< Format of A.
  Fp8Format b_format = Fp8Format::kE4M3;  ///< Format of B.
};

/// "4097x17x255 e4m3 x e5m2": the shape and formats, for messages.
std::string describe(const ProblemShape& shape);

/// A random problem and its reference on the rows a test checks.
struct ReferencedProblem {
  ProblemShape shape;                        ///< What was generated.
  std::shared_ptr<const QuantizedMatrix> a;  ///< A: M x K codes (ld = K) and its per-tensor scale.
  std::shared_ptr<const QuantizedMatrix> b;  ///< B: N x K codes (ld = K) and its per-tensor scale.
  ReferenceProduct reference;                ///< R and S of the rows listed in reference.rows.
};

/// The problem of this shape for this run: made (operands, reference) on
/// the first call and cached, so that every step and output type of a shape
/// is checked on the same inputs. Operands are also shared between shapes
/// with the same (M, K, format) for A or (N, K, format) for B.
std::shared_ptr<const ReferencedProblem> referenced_problem(const ProblemShape& shape);

}  // namespace fp8gemm::test_support
