/// @file parallel.h
/// @brief A plain parallel loop for the host-side work of checks (making
///        inputs, dequantizing operands): one chunk per hardware thread.
#pragma once

#include <algorithm>
#include <cstdint>
#include <thread>
#include <vector>

namespace fp8gemm {

/// Runs body(begin, end) over [0, count) split into one contiguous chunk per
/// hardware thread (a single chunk when count is small).
template <typename Body>
void parallel_for(int64_t count, Body body) {
  const int64_t threads =
      std::max<int64_t>(1, std::min<int64_t>(std::thread::hardware_concurrency(), count / 65536 + 1));
  const int64_t chunk = (count + threads - 1) / threads;
  std::vector<std::thread> pool;
  for (int64_t t = 1; t < threads; ++t) {
    const int64_t begin = t * chunk;
    if (begin >= count) break;
    pool.emplace_back([=]() { body(begin, std::min(count, begin + chunk)); });
  }
  body(0, std::min(count, chunk));
  for (std::thread& t : pool) t.join();
}

}  // namespace fp8gemm
