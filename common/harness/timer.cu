#include "common/harness/timer.h"

#include <algorithm>
#include <chrono>
#include <stdexcept>

namespace fp8gemm {

double median(std::vector<double> values) {
  if (values.empty()) throw std::invalid_argument("median of an empty list");
  const size_t middle = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + middle, values.end());
  if (values.size() % 2 == 1) return values[middle];
  const double upper = values[middle];
  return (upper + *std::max_element(values.begin(), values.begin() + middle)) / 2.0;
}

LaunchTimer::LaunchTimer() {
  int device = 0, l2_bytes = 0;
  FP8GEMM_CUDA_CHECK(cudaGetDevice(&device));
  FP8GEMM_CUDA_CHECK(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, device));
  l2_bytes_ = l2_bytes;
  // Writing more than twice the L2 evicts every line that a launch left behind.
  flush_buffer_ = DeviceBuffer<uint8_t>(2 * l2_bytes_ + (1 << 20));
  FP8GEMM_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  FP8GEMM_CUDA_CHECK(cudaEventCreate(&start_));
  FP8GEMM_CUDA_CHECK(cudaEventCreate(&stop_));
}

LaunchTimer::~LaunchTimer() {
  cudaEventDestroy(start_);
  cudaEventDestroy(stop_);
  cudaStreamDestroy(stream_);
}

std::string LaunchTimer::flush_description() const {
  return "cudaMemsetAsync of " + std::to_string(flush_buffer_.bytes() >> 20) + " MiB (2 x L2 of " +
         std::to_string(l2_bytes_ >> 20) + " MiB + 1 MiB) before every launch, outside the timed events";
}

Status LaunchTimer::launch_once(const std::function<Status()>& launch, float* ms, double* host_us) {
  // The flush is enqueued first, so the GPU is still busy with it while the
  // host enqueues the event and the launch: the start event is not stamped
  // before the kernel could begin.
  FP8GEMM_CUDA_CHECK(cudaMemsetAsync(flush_buffer_.get(), 0, flush_buffer_.bytes(), stream_));
  FP8GEMM_CUDA_CHECK(cudaEventRecord(start_, stream_));
  const auto host_start = std::chrono::steady_clock::now();
  const Status status = launch();
  if (host_us != nullptr) {
    *host_us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - host_start).count();
  }
  if (!status.ok()) {
    FP8GEMM_CUDA_CHECK(cudaStreamSynchronize(stream_));
    return status;
  }
  FP8GEMM_CUDA_CHECK(cudaEventRecord(stop_, stream_));
  FP8GEMM_CUDA_CHECK(cudaEventSynchronize(stop_));  // a fault inside the kernel surfaces here
  FP8GEMM_CUDA_CHECK(cudaEventElapsedTime(ms, start_, stop_));
  return Status::success();
}

Status LaunchTimer::time(const std::function<Status()>& launch, const TimingOptions& options, Timing* timing) {
  timing->launch_ms.clear();
  // Warm-up: loads the kernel's module, lets the clocks rise, and lets a
  // library make its one-time choices.
  double warmup_ms = 0.0;
  for (int i = 0; i == 0 || (i < options.max_warmup_launches && warmup_ms < options.warmup_seconds * 1e3); ++i) {
    float ms = 0.0f;
    const Status status = launch_once(launch, &ms);
    if (!status.ok()) return status;
    warmup_ms += ms;
  }
  double measured_ms = 0.0;
  while (static_cast<int>(timing->launch_ms.size()) < options.max_launches &&
         (static_cast<int>(timing->launch_ms.size()) < options.min_launches ||
          measured_ms < options.budget_seconds * 1e3)) {
    float ms = 0.0f;
    const Status status = launch_once(launch, &ms);
    if (!status.ok()) return status;
    timing->launch_ms.push_back(ms);
    measured_ms += ms;
  }
  timing->median_ms = median(timing->launch_ms);
  return Status::success();
}

}  // namespace fp8gemm
