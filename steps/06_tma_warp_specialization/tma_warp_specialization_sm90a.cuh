// Step 06 (Hopper) — the TMA, an mbarrier ring and warp specialization feed wgmma.
//
// D[m,n] = a_scale * b_scale * sum_k A[m,k] * B[n,k]
//
// One block computes a 128 x 128 tile of D with 384 threads in three
// warpgroups (a warpgroup = 4 warps = 128 threads):
//
//   warpgroup 2, the producer: one thread walks K in blocks of 128 and asks
//     the TMA (tensor memory accelerator) to copy the 128 x 128 tile of A and
//     of B into a ring of kStages shared-memory stages. The TMA swizzles the
//     bytes on the way, into the layout wgmma reads, and fills with zeros
//     whatever lies outside the matrices (the edges of M, N and K).
//   warpgroups 0 and 1, the consumers: each multiplies its 64 rows of the A
//     tile by the B tile with four wgmma.m64n128k32 per K block (32 of K each),
//     straight from shared memory. FP32 accumulators, 64 per thread.
//
// Two mbarriers per stage hand the stages back and forth: `full` completes
// when the TMA has written the stage's 32 KB, `empty` when all 8 consumer
// warps have finished reading it.
//
// Promotion (the default): Hopper's FP8 tensor cores accumulate with fewer
// bits than FP32. So each K block of 128 starts a fresh wgmma accumulation,
// and its result is added into separate FP32 registers (DeepSeek-V3's
// "two-level accumulation"). GemmArgs::fast_accumulation keeps accumulating
// in the wgmma registers over the whole K instead: faster, less accurate.
//
// Scales are applied in the epilogue, which writes the FP32 result straight
// from registers to D (BF16 or FP32), bounds-checked.
//
// Requires sm_90a; the chapter (README.md) explains every piece.
//
// Everything below is in an unnamed namespace: a copy of this folder (a fork)
// compiles the same names into its own unit, and both link into one program.
#pragma once

#include "common/device/kernel.h"
#include "common/sm90/mbarrier.cuh"
#include "common/sm90/tma.cuh"
#include "common/sm90/wgmma.cuh"

namespace fp8gemm {
namespace {

// ---- what a reader would tune ------------------------------------------------
constexpr int kBlockM = 128;  // rows of D per block: 2 consumer warpgroups x 64
constexpr int kBlockN = 128;  // columns of D per block: the N of one wgmma
constexpr int kBlockK = 128;  // K per stage: one 128-byte swizzle row of FP8
constexpr int kStages = 6;    // shared-memory ring: 6 x 32 KB = 192 KB
constexpr int kConsumerWarpgroups = kBlockM / 64;
constexpr int kThreads = (kConsumerWarpgroups + 1) * sm90::kWarpgroupThreads;  // + 1 producer warpgroup

constexpr uint32_t kTileBytesA = kBlockM * kBlockK;  // FP8: one byte per element
constexpr uint32_t kTileBytesB = kBlockN * kBlockK;

// The tiles, in dynamic shared memory. Every tile starts on a 1024-byte
// boundary, where the 128-byte swizzle pattern (8 rows x 128 bytes) starts.
struct StageTiles {
  uint8_t a[kStages][kTileBytesA];
  uint8_t b[kStages][kTileBytesB];
};
static_assert(kTileBytesA % 1024 == 0 && kTileBytesB % 1024 == 0, "tiles must keep 1024-byte alignment");
constexpr size_t kDynamicSharedBytes = sizeof(StageTiles) + 1024;  // + slack to align the start
// The barriers live in static shared memory; their size also tells the
// launcher that the sm_90a body was compiled (see kernel_has_sm90a_image).
constexpr size_t kStaticSharedBytes = 2 * kStages * sizeof(uint64_t);

#if FP8GEMM_SM90A_DEVICE
constexpr int kWgmmaK = 32;                                            // K of one FP8 wgmma
constexpr int kAccumulators = 64 * kBlockN / sm90::kWarpgroupThreads;  // FP32 per thread: 64
constexpr uint32_t kStageBytes = kTileBytesA + kTileBytesB;            // what the TMA delivers per stage
constexpr int kConsumerWarps = kConsumerWarpgroups * sm90::kWarpgroupThreads / kWarpSize;

// Writes this thread's part of the block's D tile: acc (64 FP32 values in the
// wgmma fragment layout, see wgmma_m64n128k32) times the scales, rounded to
// T (uint16_t = BF16 bits, or float). Two neighbouring columns per store.
// Alignment: D's pointer and row pitch are 16-byte multiples (the step's
// constraints) and the column is even, so the pair store is aligned.
template <typename T>
__device__ __forceinline__ void store_fragment(const float (&acc)[kAccumulators], const GemmArgs& args, int64_t row0,
                                               int64_t col0) {
  const float scale = args.a_scale * args.b_scale;
  T* d = static_cast<T*>(args.d);
#pragma unroll
  for (int h = 0; h < 2; ++h) {  // h = 1: the row 8 below
    const int64_t row = row0 + 8 * h;
    if (row >= args.m) continue;
    T* d_row = d + row * args.ldd;
#pragma unroll
    for (int j = 0; j < kBlockN / 8; ++j) {
      const int64_t col = col0 + 8 * j;
      const float v0 = acc[4 * j + 2 * h] * scale;
      const float v1 = acc[4 * j + 2 * h + 1] * scale;
      if constexpr (sizeof(T) == 2) {
        const uint32_t pair = float_to_bf16_bits(v0) | static_cast<uint32_t>(float_to_bf16_bits(v1)) << 16;
        if (col + 1 < args.n) {
          *reinterpret_cast<uint32_t*>(d_row + col) = pair;
        } else if (col < args.n) {
          d_row[col] = static_cast<T>(pair & 0xFFFFu);
        }
      } else {
        if (col + 1 < args.n) {
          *reinterpret_cast<float2*>(d_row + col) = make_float2(v0, v1);
        } else if (col < args.n) {
          d_row[col] = v0;
        }
      }
    }
  }
}
#endif

template <Fp8Format kFormatA, Fp8Format kFormatB, bool kPromote>
__global__ void __launch_bounds__(kThreads, 1)
    wgmma_fp8_gemm_kernel(const __grid_constant__ CUtensorMap tensor_map_a,
                          const __grid_constant__ CUtensorMap tensor_map_b, GemmArgs args) {
#if FP8GEMM_SM90A_DEVICE
  using namespace sm90;
  __shared__ uint64_t full_barrier[kStages];   // the TMA has filled the stage
  __shared__ uint64_t empty_barrier[kStages];  // the consumers are done with the stage
  extern __shared__ uint8_t dynamic_shared[];
  const uint32_t tiles_start = (shared_address(dynamic_shared) + 1023u) & ~1023u;
  const uint32_t tiles_a = tiles_start + offsetof(StageTiles, a);  // shared-window addresses
  const uint32_t tiles_b = tiles_start + offsetof(StageTiles, b);

  // Block -> tile of D. Consecutive blocks walk down M, sharing one B tile.
  const int m_tiles = static_cast<int>((args.m + kBlockM - 1) / kBlockM);
  const int m_block = static_cast<int>(blockIdx.x % m_tiles);
  const int n_block = static_cast<int>(blockIdx.x / m_tiles);
  const int k_blocks = static_cast<int>((args.k + kBlockK - 1) / kBlockK);  // the last one zero-filled past K
  const int warpgroup = threadIdx.x / kWarpgroupThreads;

  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      mbarrier_init(shared_address(&full_barrier[s]), 1);                // the producer's arrive.expect_tx
      mbarrier_init(shared_address(&empty_barrier[s]), kConsumerWarps);  // lane 0 of each consumer warp
    }
    fence_barrier_init();
  }
  __syncthreads();

  if (warpgroup == kConsumerWarpgroups) {
    // ---- producer: one thread feeds the ring; the rest of the warpgroup idles.
    if (threadIdx.x == kConsumerWarpgroups * kWarpgroupThreads) {
      prefetch_tensor_map(&tensor_map_a);
      prefetch_tensor_map(&tensor_map_b);
      int stage = 0;
      uint32_t phase = 0;  // parity of the round of the ring
      for (int kb = 0; kb < k_blocks; ++kb) {
        // Wait until the consumers released this stage in the previous round
        // (parity phase ^ 1; in round 0 that wait returns at once).
        mbarrier_wait(shared_address(&empty_barrier[stage]), phase ^ 1);
        const uint32_t full = shared_address(&full_barrier[stage]);
        mbarrier_arrive_expect_tx(full, kStageBytes);  // always the whole box, zero-filled parts included
        tma_load_2d(tiles_a + stage * kTileBytesA, &tensor_map_a, full, kb * kBlockK, m_block * kBlockM);
        tma_load_2d(tiles_b + stage * kTileBytesB, &tensor_map_b, full, kb * kBlockK, n_block * kBlockN);
        if (++stage == kStages) {
          stage = 0;
          phase ^= 1;
        }
      }
    }
    return;
  }

  // ---- consumers: warpgroup w multiplies rows 64w..64w+63 of the A tile.
  float accum[kAccumulators];                 // wgmma's accumulators
  float total[kPromote ? kAccumulators : 1];  // promoted FP32 sums (promotion only)
#pragma unroll
  for (int i = 0; i < kAccumulators; ++i) accum[i] = 0.0f;
  if constexpr (kPromote) {
#pragma unroll
    for (int i = 0; i < kAccumulators; ++i) total[i] = 0.0f;
  }
  const int lane = threadIdx.x % kWarpSize;
  int stage = 0;
  uint32_t phase = 0;
  for (int kb = 0; kb < k_blocks; ++kb) {
    mbarrier_wait(shared_address(&full_barrier[stage]), phase);
    __syncwarp();  // wgmma is .aligned: the warp must be converged

    const uint64_t desc_a = make_kmajor_sw128_descriptor(tiles_a + stage * kTileBytesA + warpgroup * 64 * kBlockK);
    const uint64_t desc_b = make_kmajor_sw128_descriptor(tiles_b + stage * kTileBytesB);
    fence_registers(accum);
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < kBlockK / kWgmmaK; ++kk) {
      // + (32 bytes >> 4) per step along K inside the swizzled 128-byte rows.
      // Promotion restarts the sum each K block (accumulate = false overwrites);
      // fast accumulation restarts it only at the very first wgmma.
      const bool accumulate = kPromote ? kk > 0 : (kb > 0 || kk > 0);
      wgmma_m64n128k32<kFormatA, kFormatB>(accum, desc_a + 2 * kk, desc_b + 2 * kk, accumulate);
    }
    wgmma_commit_group();
    fence_registers(accum);

    if constexpr (kPromote) {
      wgmma_wait_group<0>();  // this K block's products are in accum, its stage is no longer read
      fence_registers(accum);
      if (lane == 0) mbarrier_arrive(shared_address(&empty_barrier[stage]));
#pragma unroll
      for (int i = 0; i < kAccumulators; ++i) total[i] += accum[i];
    } else {
      // Keep this K block's wgmmas running; wait for the previous block's and
      // release its stage.
      wgmma_wait_group<1>();
      if (kb > 0 && lane == 0) {
        mbarrier_arrive(shared_address(&empty_barrier[stage == 0 ? kStages - 1 : stage - 1]));
      }
    }
    if (++stage == kStages) {
      stage = 0;
      phase ^= 1;
    }
  }
  if constexpr (!kPromote) {
    wgmma_wait_group<0>();
    fence_registers(accum);
  }

  // ---- epilogue: this thread's rows and columns of the fragment (see hopper.h).
  const int warp_in_group = (threadIdx.x % kWarpgroupThreads) / kWarpSize;
  const int64_t row0 = static_cast<int64_t>(m_block) * kBlockM + warpgroup * 64 + warp_in_group * 16 + lane / 4;
  const int64_t col0 = static_cast<int64_t>(n_block) * kBlockN + 2 * (lane % 4);
  auto write_d = [&](const float(&result)[kAccumulators]) {
    if (args.d_type == OutputType::kBF16) {
      store_fragment<uint16_t>(result, args, row0, col0);
    } else {
      store_fragment<float>(result, args, row0, col0);
    }
  };
  if constexpr (kPromote) {
    write_d(total);
  } else {
    write_d(accum);
  }
#endif  // FP8GEMM_SM90A_DEVICE
}

using KernelFunction = void (*)(const CUtensorMap, const CUtensorMap, GemmArgs);

// The kernel for one pair of formats (e4m3 or e5m2 each) and accumulation mode.
template <bool kPromote>
KernelFunction select_kernel(Fp8Format a, Fp8Format b) {
  constexpr Fp8Format kE4 = Fp8Format::kE4M3, kE5 = Fp8Format::kE5M2;
  if (a == kE4) return b == kE4 ? wgmma_fp8_gemm_kernel<kE4, kE4, kPromote> : wgmma_fp8_gemm_kernel<kE4, kE5, kPromote>;
  return b == kE4 ? wgmma_fp8_gemm_kernel<kE5, kE4, kPromote> : wgmma_fp8_gemm_kernel<kE5, kE5, kPromote>;
}

Status launch_tma_warp_specialization(const GemmArgs& args) {
  Status status = sm90::require_sm90a_gpu();
  if (!status.ok()) return status;

  // TMA coordinates are signed 32-bit; the grid is one-dimensional.
  constexpr int64_t kMaxExtent = 0x7FFFFFFF;
  const int64_t tiles = ((args.m + kBlockM - 1) / kBlockM) * ((args.n + kBlockN - 1) / kBlockN);
  if (args.m > kMaxExtent || args.n > kMaxExtent || args.k > kMaxExtent - kBlockK || tiles > kMaxExtent) {
    return Status::error(StatusCode::kNotSupported, "M, N, K < 2^31 and at most 2^31 - 1 tiles of 128 x 128 required");
  }

  CUtensorMap map_a, map_b;
  status = sm90::make_kmajor_tensor_map(&map_a, args.a, args.m, args.k, args.lda, kBlockM, kBlockK);
  if (!status.ok()) return status;
  status = sm90::make_kmajor_tensor_map(&map_b, args.b, args.n, args.k, args.ldb, kBlockN, kBlockK);
  if (!status.ok()) return status;

  const KernelFunction kernel = args.fast_accumulation ? select_kernel<false>(args.a_format, args.b_format)
                                                       : select_kernel<true>(args.a_format, args.b_format);
  status = sm90::kernel_has_sm90a_image(kernel, kStaticSharedBytes);
  if (!status.ok()) return status;
  const cudaError_t err =
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(kDynamicSharedBytes));
  if (err != cudaSuccess) {
    cudaGetLastError();  // clear it: the error is reported here
    return Status::error(StatusCode::kRuntimeError, std::string("cannot reserve ") +
                                                        std::to_string(kDynamicSharedBytes) +
                                                        " bytes of shared memory: " + cudaGetErrorString(err));
  }
  kernel<<<static_cast<unsigned>(tiles), kThreads, kDynamicSharedBytes, args.stream>>>(map_a, map_b, args);
  return status_from_launch();
}

}  // namespace
}  // namespace fp8gemm
