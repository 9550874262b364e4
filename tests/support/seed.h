/// @file seed.h
/// @brief The one random seed of a test run: fresh every run, printed, and
///        replayable with FP8GEMM_TEST_SEED=<seed>.
#pragma once

#include <cstdint>

namespace fp8gemm::test_support {

/// The seed of this run: FP8GEMM_TEST_SEED if set, else drawn from
/// std::random_device. Chosen and printed on the first call.
uint64_t run_seed();

/// Adds the run seed to the current test's record (gtest RecordProperty), so
/// that it appears in the XML/JSON report next to the test.
void record_run_seed();

/// A well-mixed 64-bit value from a seed and one more value (SplitMix64):
/// gives each test or operand its own stream from the run seed.
uint64_t mix_seed(uint64_t seed, uint64_t value);

}  // namespace fp8gemm::test_support
