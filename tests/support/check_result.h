/// @file check_result.h
/// @brief Compares a GEMM output with its FP64 reference under the tolerance
///        policy of common/check/reference.h, with a failure message that says
///        everything needed to reproduce and diagnose it.
#pragma once

#include <gtest/gtest.h>

#include "common/check/check.h"
#include "support/device_matrices.h"
#include "support/random_problem.h"

namespace fp8gemm::test_support {

/// Success when the rows of D held by problem.reference pass the project's
/// check (common/check/check.h) for a kernel that sums as `accumulation`.
/// A failure names the shape, formats, output type and seed, the worst
/// element (its position, D, R, S and bound) and every metric with its bound.
::testing::AssertionResult matches_reference(const OutputSnapshot& d, const ReferencedProblem& problem,
                                             Accumulation accumulation);

/// Success when an FP8 output's amax matches the reference's: within the
/// element bound where every row was checked, at least the checked rows'
/// amax where they were sampled.
::testing::AssertionResult matches_reference_amax(float amax, const ReferenceProduct& ref,
                                                  const EpilogueReference& epilogue, int64_t m, int64_t k,
                                                  Accumulation accumulation);

}  // namespace fp8gemm::test_support
