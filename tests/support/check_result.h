/// @file check_result.h
/// @brief Compares a GEMM output with its FP64 reference under the tolerance
///        policy of common/reference.h, with a failure message that says
///        everything needed to reproduce and diagnose it.
#pragma once

#include <gtest/gtest.h>

#include "common/reference.h"
#include "support/device_matrices.h"
#include "support/random_problem.h"

namespace fp8gemm::test_support {

/// Success when the rows of D held by problem.reference meet `tolerance`.
/// A failure names the shape, formats, output type and seed, the worst
/// element (its position, D, R, S and bound) and every metric with its bound.
::testing::AssertionResult matches_reference(const OutputSnapshot& d, const ReferencedProblem& problem,
                                             const Tolerance& tolerance);

}  // namespace fp8gemm::test_support
