// tma_ring_probe: how fast a ring of TMA stages fills, with nothing else in
// the kernel. The persistent steps' producer and consumers without the math:
// one thread issues each stage's boxes (tma_load_2d, as the steps' producer
// does) into a ring of shared memory, one thread waits for each stage to land
// and hands it straight back. Step 12's chapter ("A decode GEMM, block by
// block") found a small tile's stage arriving about every 400 cycles, whatever
// the bytes it held, the slice count or the number of blocks, with neither the
// consumers nor the issuing thread setting the pace; this program measures the
// ring alone, one parameter at a time:
//   - the bytes of a stage: boxes of 16, 64 or 128 rows of 128 bytes, one,
//     two or four boxes a stage (the small tile's A and B are two boxes of 64
//     rows; four would be two of its K blocks in one stage);
//   - the ring's depth: 4, 8 or 12 stages;
//   - how many blocks run it at once: 1, 33 (the decode shape's tiles), 132;
//   - where the bytes come from: DRAM (each block its own rows, the L2
//     flushed before every launch) or the L2 (every block the same rows);
//   - how the two threads wait for a barrier: mbarrier_wait (try_wait, which
//     may suspend the thread until the phase completes, as the steps wait) or
//     a spin on test_wait, which never suspends it (`spin` in the output).
// For each case it prints, and writes as JSON with --json FILE: the kernel's
// time (median of the timed launches, LaunchTimer: a cold L2 before each),
// the median over the blocks of the cycles between the first and the last
// stage's arrival divided by the stages in between (the steady rate), the
// cycles from the first issue to the first arrival (the latency), and the
// bytes a cycle per SM and GB/s of all blocks together.
//
// Usage: tma_ring_probe [--k_blocks N] [--json FILE]
#include <cuda.h>
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "common/api/cuda_check.h"
#include "common/harness/timer.h"
#include "common/sm90/arch.h"
#include "common/sm90/mbarrier.cuh"
#include "common/sm90/tensor_map.h"
#include "common/sm90/tma.cuh"

namespace fp8gemm {
namespace {

constexpr int kBoxBytesPerRow = 128;  // the 128-byte swizzle's row, the steps' K block of FP8
constexpr int kRowsPerBlock = 512;    // rows of the matrix each block reads from DRAM: its deepest stage

// Per block: the clock when the producer issued stage 0, when stage 0 landed,
// when the last stage landed.
struct BlockStamps {
  long long first_issue, first_arrival, last_arrival;
};

// Warp 0's lane 0 is the producer, warp 1's lane 0 the consumer. Block b reads
// rows [b * rows_per_block, ...) of the matrix (rows_per_block 0: every block
// the same rows), K block after K block.
__global__ void __launch_bounds__(64, 1)
    tma_ring_kernel(const __grid_constant__ CUtensorMap map, int box_rows, int boxes, int stages, int k_blocks,
                    int rows_per_block, bool spin, BlockStamps* stamps) {
#if FP8GEMM_SM90A_DEVICE
  using namespace sm90;
  constexpr int kMaxStages = 12;  // the deepest ring run() asks for
  extern __shared__ uint8_t dynamic_shared[];
  __shared__ __align__(8) uint64_t full[kMaxStages], empty[kMaxStages];
  __shared__ long long first_issue;
  const uint32_t stage_bytes = static_cast<uint32_t>(box_rows * boxes * kBoxBytesPerRow);
  // The 128-byte swizzle wants each box on a 1024-byte boundary: the launch
  // reserves 1 KB more than the ring.
  const uint32_t ring = (shared_address(dynamic_shared) + 1023u) & ~1023u;
  if (threadIdx.x == 0) {
    for (int s = 0; s < stages; ++s) {
      mbarrier_init(shared_address(&full[s]), 1);
      mbarrier_init(shared_address(&empty[s]), 1);
    }
    fence_barrier_init();
  }
  __syncthreads();
  const int row0 = blockIdx.x * rows_per_block;
  const auto wait = [spin](uint32_t bar, uint32_t parity) {
    if (spin) {
      while (!mbarrier_test_wait(bar, parity)) {
      }
    } else {
      mbarrier_wait(bar, parity);
    }
  };
  if (threadIdx.x == 0) {  // the producer
    prefetch_tensor_map(&map);
    for (int kb = 0; kb < k_blocks; ++kb) {
      const int s = kb % stages, round = kb / stages;
      if (round > 0) wait(shared_address(&empty[s]), (round - 1) & 1);
      if (kb == 0) first_issue = clock64();
      mbarrier_arrive_expect_tx(shared_address(&full[s]), stage_bytes);
      for (int b = 0; b < boxes; ++b) {
        tma_load_2d(ring + s * stage_bytes + b * box_rows * kBoxBytesPerRow, &map, shared_address(&full[s]),
                    kb * kBoxBytesPerRow, row0 + b * box_rows);
      }
    }
  } else if (threadIdx.x == 32) {  // the consumer
    long long first_arrival = 0, last_arrival = 0;
    for (int kb = 0; kb < k_blocks; ++kb) {
      const int s = kb % stages, round = kb / stages;
      wait(shared_address(&full[s]), round & 1);
      if (kb == 0) first_arrival = clock64();
      if (kb == k_blocks - 1) last_arrival = clock64();
      mbarrier_arrive(shared_address(&empty[s]));
    }
    stamps[blockIdx.x] = BlockStamps{first_issue, first_arrival, last_arrival};  // the producer wrote it first
  }
#endif
}

struct Case {
  int box_rows, boxes, stages, blocks;
  bool from_l2, spin;
};

int run(int argc, char** argv) {
  int k_blocks = 56;  // K = 7168, the decode shape's
  std::string json_path;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--k_blocks") && i + 1 < argc) {
      k_blocks = std::atoi(argv[++i]);
    } else if (!std::strcmp(argv[i], "--json") && i + 1 < argc) {
      json_path = argv[++i];
    } else {
      std::fprintf(stderr, "usage: tma_ring_probe [--k_blocks N >= 2] [--json FILE]\n");
      return 2;
    }
  }
  if (k_blocks < 2) {
    std::fprintf(stderr, "tma_ring_probe: --k_blocks must be at least 2 (the rate is between the first and last)\n");
    return 2;
  }
  const Status gpu = sm90::require_sm90a_gpu();
  if (!gpu.ok()) {
    std::fprintf(stderr, "tma_ring_probe: %s\n", gpu.message.c_str());
    return 1;
  }
  cudaDeviceProp prop{};
  FP8GEMM_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  const int sms = prop.multiProcessorCount;

  std::vector<Case> cases;
  for (const bool spin : {false, true}) {
    for (const bool from_l2 : {false, true}) {
      for (const int blocks : {1, 33, sms}) {
        for (const int stages : {4, 8, 12}) {
          for (const int box_rows : {16, 64, 128}) {
            for (const int boxes : {1, 2, 4}) {
              // A ring the SM's shared memory holds (227 KB), as the steps' are.
              if (stages * box_rows * boxes * kBoxBytesPerRow <= 200 * 1024) {
                cases.push_back(Case{box_rows, boxes, stages, blocks, from_l2, spin});
              }
            }
          }
        }
      }
    }
  }

  // One matrix for every case: each of `sms` blocks its own 512 rows (a stage of four boxes of 128), K bytes each.
  const int64_t k = static_cast<int64_t>(k_blocks) * kBoxBytesPerRow;
  const int64_t rows = static_cast<int64_t>(sms) * kRowsPerBlock;
  DeviceBuffer<uint8_t> matrix(static_cast<size_t>(rows * k));
  FP8GEMM_CUDA_CHECK(cudaMemset(matrix.get(), 0x3C, static_cast<size_t>(rows * k)));
  DeviceBuffer<BlockStamps> stamps(static_cast<size_t>(sms));
  LaunchTimer timer;

  FILE* json = json_path.empty() ? nullptr : std::fopen(json_path.c_str(), "w");
  if (!json_path.empty() && json == nullptr) {
    std::fprintf(stderr, "tma_ring_probe: cannot write %s\n", json_path.c_str());
    return 1;
  }
  if (json) {
    std::fprintf(json, "{\n  \"context\": {\"gpu\": \"%s\", \"sms\": %d, \"k_blocks\": %d, \"timing\": \"%s\"},\n",
                 prop.name, sms, k_blocks, timer.flush_description().c_str());
    std::fprintf(json, "  \"cases\": [\n");
  }
  std::printf("%-5s %-8s %6s %5s %6s %6s %7s %10s %12s %14s %12s %10s\n", "wait", "source", "blocks", "rows", "boxes",
              "stages", "KB", "time_us", "cycles/stage", "first_cycles", "B/cycle/SM", "GB/s");
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    const int stage_bytes = c.box_rows * c.boxes * kBoxBytesPerRow;
    const size_t shared_bytes = static_cast<size_t>(c.stages) * stage_bytes + 1024;
    CUtensorMap map{};
    Status status = sm90::make_kmajor_tensor_map(&map, matrix.get(), rows, k, k, static_cast<uint32_t>(c.box_rows),
                                                 kBoxBytesPerRow);
    if (status.ok()) {
      status = reserve_dynamic_shared_memory(reinterpret_cast<const void*>(tma_ring_kernel), shared_bytes);
    }
    if (!status.ok()) {
      std::fprintf(stderr, "tma_ring_probe: %s\n", status.message.c_str());
      return 1;
    }
    const int rows_per_block = c.from_l2 ? 0 : kRowsPerBlock;
    const auto launch = [&] {
      tma_ring_kernel<<<c.blocks, 64, shared_bytes, timer.stream()>>>(map, c.box_rows, c.boxes, c.stages, k_blocks,
                                                                      rows_per_block, c.spin, stamps.get());
      return status_from_launch("tma_ring_kernel");
    };
    if (c.from_l2) {  // the rows in the L2 before the timed launch: one launch untimed, no flush between
      status = launch();
    }
    std::vector<double> times_ms;
    std::vector<double> rates, firsts;
    for (int repetition = 0; repetition < 5 && status.ok(); ++repetition) {
      float ms = 0.0f;
      if (c.from_l2) {  // LaunchTimer flushes the L2: time with events of our own instead
        cudaEvent_t start, stop;
        FP8GEMM_CUDA_CHECK(cudaEventCreate(&start));
        FP8GEMM_CUDA_CHECK(cudaEventCreate(&stop));
        FP8GEMM_CUDA_CHECK(cudaEventRecord(start, timer.stream()));
        status = launch();
        FP8GEMM_CUDA_CHECK(cudaEventRecord(stop, timer.stream()));
        FP8GEMM_CUDA_CHECK(cudaEventSynchronize(stop));
        FP8GEMM_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
        FP8GEMM_CUDA_CHECK(cudaEventDestroy(start));
        FP8GEMM_CUDA_CHECK(cudaEventDestroy(stop));
      } else {
        status = timer.launch_once(launch, &ms);
      }
      if (!status.ok()) break;
      times_ms.push_back(ms);
      std::vector<BlockStamps> host(static_cast<size_t>(c.blocks));
      FP8GEMM_CUDA_CHECK(
          cudaMemcpy(host.data(), stamps.get(), host.size() * sizeof(BlockStamps), cudaMemcpyDeviceToHost));
      std::vector<double> block_rates, block_firsts;
      for (const BlockStamps& s : host) {
        block_rates.push_back(static_cast<double>(s.last_arrival - s.first_arrival) / (k_blocks - 1));
        block_firsts.push_back(static_cast<double>(s.first_arrival - s.first_issue));
      }
      rates.push_back(median(block_rates));
      firsts.push_back(median(block_firsts));
    }
    if (!status.ok()) {
      std::fprintf(stderr, "tma_ring_probe: %s\n", status.message.c_str());
      return 1;
    }
    const double time_us = 1e3 * median(times_ms);
    const double rate = median(rates), first = median(firsts);
    const double bytes = static_cast<double>(c.blocks) * k_blocks * stage_bytes;
    const double gbps = bytes / (time_us * 1e-6) / 1e9;
    const char* source = c.from_l2 ? "l2" : "dram";
    const char* wait = c.spin ? "spin" : "try";
    std::printf("%-5s %-8s %6d %5d %6d %6d %7.1f %10.2f %12.0f %14.0f %12.1f %10.0f\n", wait, source, c.blocks,
                c.box_rows, c.boxes, c.stages, stage_bytes / 1024.0, time_us, rate, first, stage_bytes / rate, gbps);
    if (json) {
      std::fprintf(
          json,
          "    {\"wait\": \"%s\", \"source\": \"%s\", \"blocks\": %d, \"box_rows\": %d, \"boxes\": %d, \"stages\": %d, "
          "\"stage_bytes\": %d, \"time_us\": %.3f, \"cycles_per_stage\": %.1f, \"first_stage_cycles\": %.1f, "
          "\"bytes_per_cycle_per_sm\": %.2f, \"gbps\": %.1f}%s\n",
          wait, source, c.blocks, c.box_rows, c.boxes, c.stages, stage_bytes, time_us, rate, first, stage_bytes / rate,
          gbps, i + 1 < cases.size() ? "," : "");
    }
  }
  if (json) {
    std::fprintf(json, "  ]\n}\n");
    std::fclose(json);
  }
  return 0;
}

}  // namespace
}  // namespace fp8gemm

int main(int argc, char** argv) {
  try {
    return fp8gemm::run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tma_ring_probe: %s\n", e.what());
    return 1;
  }
}
