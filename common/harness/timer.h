/// @file timer.h
/// @brief Times GPU launches the one way every number of the project is
///        measured: a cold L2 before each launch, device events around the
///        launch alone.
///
/// Before each timed launch a write to a buffer larger than twice the L2
/// evicts whatever an earlier launch left there, so that no timed launch finds
/// A or B in the cache; device events are recorded around the launch alone.
#pragma once

#include <cuda_runtime_api.h>

#include <functional>
#include <string>
#include <vector>

#include "common/api/cuda_check.h"
#include "common/api/gemm.h"

namespace fp8gemm {

/// How long to measure one case. A slow step stops after its budget (but
/// never before min_launches), a fast one after max_launches.
struct TimingOptions {
  double warmup_seconds = 0.02;  ///< Warm-up: launch until this much GPU time has passed...
  int max_warmup_launches = 10;  ///< ...or this many launches (at least one).
  double budget_seconds = 0.25;  ///< Stop timing once this much launch time is measured...
  int min_launches = 3;          ///< ...but not before this many timed launches...
  int max_launches = 300;        ///< ...and never more than this many.
};

/// Times of the timed launches of one case.
struct Timing {
  std::vector<double> launch_ms;  ///< One entry per timed launch, in order.
  double median_ms = 0.0;         ///< Median of launch_ms.
};

/// Times launches on a stream with a cold L2 before each one.
class LaunchTimer {
 public:
  /// Creates the stream, the events and the L2 flush buffer (2 x L2 + 1 MiB).
  LaunchTimer();
  ~LaunchTimer();
  LaunchTimer(const LaunchTimer&) = delete;
  LaunchTimer& operator=(const LaunchTimer&) = delete;

  /// The stream that launches must use.
  cudaStream_t stream() const { return stream_; }

  /// Warm-up, then timed launches of `launch` (which enqueues one GEMM on
  /// stream() and returns its status). The first non-ok status stops the
  /// measurement and is returned; runtime errors throw.
  Status time(const std::function<Status()>& launch, const TimingOptions& options, Timing* timing);

  /// One timed launch, the unit of every measurement: writes the L2 flush
  /// buffer (outside the timed events), records the start event, calls
  /// `launch` (which enqueues one GEMM on stream()), records the stop event
  /// and waits for it. `*ms` gets the device time between the two events. A
  /// non-ok status from `launch` is returned after the stream has drained, and
  /// `*ms` is left alone; runtime errors (a fault in the kernel) throw. time()
  /// is built on it; callers that drive the launches themselves (the Google
  /// Benchmark cases of bench/, one launch per iteration) call it directly.
  /// `*host_us`, if given, gets the CPU time of the `launch` call.
  Status launch_once(const std::function<Status()>& launch, float* ms, double* host_us = nullptr);

  /// "cudaMemsetAsync of 121 MiB (2 x L2 + 1 MiB) before every launch".
  std::string flush_description() const;

 private:
  cudaStream_t stream_ = nullptr;
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
  int64_t l2_bytes_ = 0;
  DeviceBuffer<uint8_t> flush_buffer_;
};

/// Median of a non-empty list.
double median(std::vector<double> values);

}  // namespace fp8gemm
