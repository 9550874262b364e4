#include "support/seed.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>

namespace fp8gemm::test_support {

namespace {

uint64_t choose_run_seed() {
  uint64_t seed = 0;
  if (const char* text = std::getenv("FP8GEMM_TEST_SEED"); text != nullptr && *text != '\0') {
    seed = std::strtoull(text, nullptr, 0);
    std::printf("[   SEED   ] FP8GEMM_TEST_SEED=%llu (from the environment)\n", static_cast<unsigned long long>(seed));
  } else {
    std::random_device device;
    seed = (static_cast<uint64_t>(device()) << 32) ^ device();
    std::printf("[   SEED   ] FP8GEMM_TEST_SEED=%llu (set it to replay this run's inputs)\n",
                static_cast<unsigned long long>(seed));
  }
  std::fflush(stdout);
  return seed;
}

}  // namespace

uint64_t run_seed() {
  static const uint64_t seed = choose_run_seed();
  return seed;
}

void record_run_seed() { ::testing::Test::RecordProperty("seed", std::to_string(run_seed())); }

uint64_t mix_seed(uint64_t seed, uint64_t value) {
  uint64_t z = seed + 0x9E3779B97F4A7C15ull * (value + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace fp8gemm::test_support
