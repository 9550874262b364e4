/// @file mbarrier.cuh
/// @brief mbarriers: counters in shared memory with a phase bit, which the
///        TMA and the threads of a block use to hand buffers to each other.
#pragma once

#include <cstdint>

#include "common/sm90/arch.h"

#if FP8GEMM_SM90A_PARSE
namespace fp8gemm {
namespace sm90 {

// A phase completes when `count` arrivals have been made and every byte of
// the transactions announced with expect_tx has landed; the barrier then
// flips to the next phase. Waiters name the phase they wait for by its parity.

/// Initializes the barrier at `bar` to expect `count` arrivals per phase.
__device__ __forceinline__ void mbarrier_init(uint32_t bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}

/// Makes barrier initializations of this thread visible to the other threads
/// and to the TMA unit (the async proxy), which will arrive on them. Follow
/// with __syncthreads().
__device__ __forceinline__ void fence_barrier_init() {
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

/// Arrives on the barrier and announces `bytes` more bytes of asynchronous
/// copies that must land before the current phase can complete.
__device__ __forceinline__ void mbarrier_arrive_expect_tx(uint32_t bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes) : "memory");
}

/// Arrives on the barrier (one of its `count` arrivals).
__device__ __forceinline__ void mbarrier_arrive(uint32_t bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory");
}

/// True if the phase of parity `parity` of the barrier has completed. May
/// suspend the thread for a short, hardware-chosen time before saying no.
__device__ __forceinline__ bool mbarrier_try_wait(uint32_t bar, uint32_t parity) {
  uint32_t done = 0;
  asm volatile(
      "{\n"
      "  .reg .pred complete;\n"
      "  mbarrier.try_wait.parity.shared::cta.b64 complete, [%1], %2;\n"
      "  selp.u32 %0, 1, 0, complete;\n"
      "}\n"
      : "=r"(done)
      : "r"(bar), "r"(parity)
      : "memory");
  return done != 0;
}

/// True if the phase of parity `parity` of the barrier has completed; never
/// suspends the thread (mbarrier.test_wait). For loops that spin instead of
/// letting the hardware suspend them (bench/tma_ring_probe compares the two).
__device__ __forceinline__ bool mbarrier_test_wait(uint32_t bar, uint32_t parity) {
  uint32_t done = 0;
  asm volatile(
      "{\n"
      "  .reg .pred complete;\n"
      "  mbarrier.test_wait.parity.shared::cta.b64 complete, [%1], %2;\n"
      "  selp.u32 %0, 1, 0, complete;\n"
      "}\n"
      : "=r"(done)
      : "r"(bar), "r"(parity)
      : "memory");
  return done != 0;
}

/// Nanoseconds of the GPU's global timer.
__device__ __forceinline__ uint64_t global_timer_ns() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

/// A barrier phase that has not completed after this long never will: a
/// byte count or a parity is wrong. Trapping turns that bug into a launch
/// error instead of a GPU that hangs until the process is killed.
inline constexpr uint64_t kBarrierTimeoutNs = 10'000'000'000ull;  // 10 s

/// Blocks until the phase of parity `parity` (0 or 1) has completed. A
/// freshly initialized barrier is in phase 0, and the phase "before" it
/// (parity 1) counts as completed: waiting for parity 1 returns at once.
__device__ __forceinline__ void mbarrier_wait(uint32_t bar, uint32_t parity) {
  if (mbarrier_try_wait(bar, parity)) return;
  const uint64_t start = global_timer_ns();
  while (!mbarrier_try_wait(bar, parity)) {
    if (global_timer_ns() - start > kBarrierTimeoutNs) __trap();
  }
}

/// mbarrier_wait for a whole warp, every branch taken by all its lanes
/// together (votes), with the same timeout. For a warp with wgmmas in flight
/// across the wait: mbarrier_wait's per-lane loop puts its __trap() on a
/// divergent path, and ptxas then serializes every wgmma of the kernel
/// (C7518) and, after setmaxnreg, does not use the registers it raised (step
/// 10 spilled at R165-R208 of 240). Every lane of the warp must call it. A
/// lane that saw the phase complete may poll it again: the phase cannot
/// complete a second time before this warp has released the stage.
__device__ __forceinline__ void mbarrier_wait_warp(uint32_t bar, uint32_t parity) {
  if (__all_sync(0xFFFFFFFFu, mbarrier_try_wait(bar, parity))) return;
  const uint64_t start = global_timer_ns();
  while (!__all_sync(0xFFFFFFFFu, mbarrier_try_wait(bar, parity))) {
    if (__any_sync(0xFFFFFFFFu, global_timer_ns() - start > kBarrierTimeoutNs)) __trap();
  }
}

}  // namespace sm90
}  // namespace fp8gemm
#endif  // FP8GEMM_SM90A_PARSE
